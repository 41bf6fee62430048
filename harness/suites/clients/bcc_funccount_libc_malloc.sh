echo "bcc funccount -p 'c:malloc*': a probe on every libc malloc* function, counts exact"
. "$(dirname "$0")/lib.bash"
need funccount-bpfcc
trap cleanup_tool EXIT
start_workload
start_tool /tmp/funccount.out funccount-bpfcc -p "$WPID" 'c:malloc*'
wait_for /tmp/funccount.out '^Tracing [0-9]+ functions' 240 ||
	fail "funccount-bpfcc did not start: $(tail -n 3 /tmp/funccount.out)"
n=$(sed -n 's/^Tracing \([0-9]*\) functions.*/\1/p' /tmp/funccount.out)
expect "malloc* functions probed" yes "$([ "$n" -ge 2 ] && echo yes || echo "no ($n)")"
expect "workload's churn" "churn n=300 size=64" "$(wl churn 300 64)"
expect "workload's leak" "leak n=7 size=100" "$(wl leak 7 100)"
stop_tool
# Only malloc was called: 300 freed at once and 7 kept.
expect "counts" "malloc=307" "$(awk '$1 ~ /malloc/ && $2 ~ /^[0-9]+$/ { printf "%s%s=%s", s, $1, $2; s = " " }' /tmp/funccount.out)"
