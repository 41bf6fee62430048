echo "bcc argdist -C on a shared library's function: a histogram of its argument, exact"
. "$(dirname "$0")/lib.bash"
need argdist-bpfcc
trap cleanup_tool EXIT
start_workload
start_tool /tmp/argdist.out argdist-bpfcc -p "$WPID" -c -i 1 -C "p:$CLIB:lib_scale(int x):int:x&3"
# It prints a cumulative count every second once attached.
wait_for /tmp/argdist.out '^\[[0-9:]+\]' 240 || fail "argdist-bpfcc did not start: $(tail -n 3 /tmp/argdist.out)"
expect "workload's scale" "scale n=200 sum=59900" "$(wl scale 200)"
# The last whole report (the one before the last "[TIME]" header: SIGINT
# may cut the last one short), as VALUE=COUNT sorted by value.
whole() {
	awk '/^\[/ { split("", w); for (v in c) w[v] = c[v]; split("", c) }
		/ x&3 = / { c[$NF] = $1 }
		END { for (v in w) print v "=" w[v] }' /tmp/argdist.out | sort -n | paste -sd' '
}
# Until a whole report has all 200 calls, then a second more.
for ((i = 0; i < 300; i++)); do
	[ "$(whole)" = "0=50 1=50 2=50 3=50" ] && break
	sleep 0.1
done
sleep 1.5
stop_tool
# x = 0..199: 50 of each x&3, and nothing else.
expect "count of each value of x&3" "0=50 1=50 2=50 3=50" "$(whole)"
