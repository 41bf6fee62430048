echo "perf probe -x libc malloc, perf record -aR, perf report --stdio shows the hits"
. "$(dirname "$0")/lib.bash"
need perf
trap cleanup_perf_probes EXIT
perf probe -q -x "$LIBC" malloc || { echo "FAIL: perf probe -x libc malloc"; exit 1; }
perf probe -q -x "$LIBC" 'malloc%return $retval' || { echo "FAIL: perf probe malloc%return"; exit 1; }
perf record -q -o /tmp/malloc.data -e probe_libc:malloc -e probe_libc:malloc__return -aR -- ls / >/dev/null 2>&1 ||
	{ echo "FAIL: perf record"; exit 1; }
rep=$(perf report -i /tmp/malloc.data --stdio 2>/dev/null)
echo "$rep" | grep -q 'probe_libc:malloc' || { echo "FAIL: perf report names no probe_libc:malloc samples"; echo "$rep" | head; exit 1; }
e=$(perf script -i /tmp/malloc.data 2>/dev/null | grep -c 'probe_libc:malloc:')
r=$(perf script -i /tmp/malloc.data 2>/dev/null | grep -c 'probe_libc:malloc__return:')
[ "$e" -gt 0 ] || { echo "FAIL: no malloc entry hits"; exit 1; }
# A process may exit with a malloc pending only in theory; ls does not.
expect "malloc returns seen for $e entries" "$e" "$r"
