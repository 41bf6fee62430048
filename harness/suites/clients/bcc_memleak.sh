echo "bcc memleak -p: uprobes and uretprobes on every allocator, outstanding bytes exact"
. "$(dirname "$0")/lib.bash"
need memleak-bpfcc
trap cleanup_tool EXIT
start_workload
# A report of what is outstanding (older than 500 ms) every second.
start_tool /tmp/memleak.out memleak-bpfcc -p "$WPID" 1
wait_for /tmp/memleak.out 'stacks with outstanding allocations' 240 ||
	fail "memleak-bpfcc did not start: $(tail -n 3 /tmp/memleak.out)"
expect "workload's leak" "leak n=25 size=1000" "$(wl leak 25 1000)"
expect "workload's churn" "churn n=300 size=1000" "$(wl churn 300 1000)"
sleep 1
# The first whole report begun after that.
mark=$(wc -l < /tmp/memleak.out)
for ((i = 0; i < 300; i++)); do
	[ "$(tail -n +$((mark + 1)) /tmp/memleak.out | grep -c 'stacks with outstanding')" -ge 2 ] && break
	sleep 0.1
done
stop_tool
report=$(tail -n +$((mark + 1)) /tmp/memleak.out | awk '/stacks with outstanding/ { n++; next } n == 1 && /bytes in/ { sub(/^[ \t]*/, ""); print }')
expect "outstanding" "25000 bytes in 25 allocations from stack" "$report"
