echo "perf probe 'func%return \$retval' records each return value"
. "$(dirname "$0")/lib.bash"
need perf
trap cleanup_perf_probes EXIT
perf probe -q -x "$T" 'target_add%return $retval' || { echo "FAIL: perf probe %return"; exit 1; }
perf record -q -o /tmp/ret.data -e probe_target:target_add__return -- "$T" 5 >/dev/null 2>&1 ||
	{ echo "FAIL: perf record"; exit 1; }
# target_add(i, 2i) returns 3i: 0 3 6 9 12.
vals=$(perf script -i /tmp/ret.data 2>/dev/null | sed -n 's/.*arg1=\(0x[0-9a-f]*\).*/\1/p' |
	while read -r v; do printf '%d ' "$v"; done)
expect "return values of 5 calls" "0 3 6 9 12 " "$vals"
