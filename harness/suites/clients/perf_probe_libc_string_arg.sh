echo "perf probe on libc with a string argument fetched through a register"
. "$(dirname "$0")/lib.bash"
need perf
trap cleanup_perf_probes EXIT
# strlen's first argument is the string; no debug info needed.
perf probe -q -x "$LIBC" 'strlen s=+0(%di):string' || { echo "FAIL: perf probe libc strlen"; exit 1; }
perf record -q -o /tmp/str.data -e probe_libc:strlen -- /bin/echo uprobe-string-arg-42 >/dev/null 2>&1 ||
	{ echo "FAIL: perf record"; exit 1; }
n=$(perf script -i /tmp/str.data 2>/dev/null | grep -c 's="uprobe-string-arg-42"')
[ "$n" -ge 1 ] || { echo "FAIL: no strlen hit with s=\"uprobe-string-arg-42\" in perf script"; perf script -i /tmp/str.data | head -5; exit 1; }
echo "ok: $n hits carried the string"
