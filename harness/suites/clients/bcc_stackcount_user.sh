echo "bcc stackcount -U -p c:malloc: user stacks of every malloc call, counted"
. "$(dirname "$0")/lib.bash"
need stackcount-bpfcc
trap cleanup_tool EXIT
start_workload
start_tool /tmp/stackcount.out stackcount-bpfcc -U -p "$WPID" c:malloc
wait_for /tmp/stackcount.out '^Tracing [0-9]+ functions' 240 ||
	fail "stackcount-bpfcc did not start: $(tail -n 3 /tmp/stackcount.out)"
expect "workload's churn" "churn n=200 size=64" "$(wl churn 200 64)"
expect "workload's leak" "leak n=5 size=100" "$(wl leak 5 100)"
stop_tool
# Each stack as FIRST-FRAME|main (when a frame is main's)|COUNT.  The
# workload has frame pointers: a walk from malloc's first instruction
# reaches main (not the direct caller, whose return address is on the
# stack, not in a frame yet).
# Only what follows its "Tracing" line: bcc may print a stray shell error
# first ("sh: 2: ...: not found", seen on stock 6.1 once).
stacks=$(awk '/^Tracing/ { on = 1; next } !on || /^Detaching/ { next }
	/^ *[0-9]+$/ { print first "|" (main ? "main" : "no main") "|" $1; first = ""; main = 0; next }
	NF { if (first == "") first = $1; if ($1 == "main") main = 1 }' /tmp/stackcount.out)
# Both commands call malloc from the same function, which main calls:
# one stack.
expect "stacks (first frame|main|count)" "__libc_malloc|main|205" "$stacks"
