echo "perf probe on libc with a string argument fetched through a register"
. "$(dirname "$0")/lib.bash"
need perf
trap cleanup_perf_probes EXIT
# getenv's first argument is the name; no debug info needed for %di.
perf probe -q -x "$LIBC" 'getenv name=+0(%di):string' || { echo "FAIL: perf probe -x libc getenv"; exit 1; }
perf record -q -o /tmp/str.data -e probe_libc:getenv -- "$T" 1 >/dev/null 2>&1 ||
	{ echo "FAIL: perf record"; exit 1; }
n=$(perf script -i /tmp/str.data 2>/dev/null | grep -c 'name="UPROBE_TARGET_QUIET"')
[ "$n" -ge 1 ] || { echo "FAIL: expected a getenv hit with name=\"UPROBE_TARGET_QUIET\", saw:"; perf script -i /tmp/str.data | head -5; exit 1; }
echo "ok: $n hits carried the string"
