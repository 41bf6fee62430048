echo "perf probe -x on a program's function and perf stat -e count every call exactly"
. "$(dirname "$0")/lib.bash"
need perf
trap cleanup_perf_probes EXIT
perf probe -q -x "$T" target_add || { echo "FAIL: perf probe -x $T target_add"; exit 1; }
n=$(perf stat -x, -e probe_target:target_add "$T" 1234 2>&1 >/dev/null |
	awk -F, '/probe_target:target_add/ { print $1 }')
expect "perf stat count of target_add over 1234 calls" 1234 "$n"
