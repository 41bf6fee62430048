echo "bcc trace -p: p: with an argument, r: with retval, USDT u: with and without a semaphore, every value"
. "$(dirname "$0")/lib.bash"
need trace-bpfcc
trap cleanup_tool EXIT
start_workload
start_tool /tmp/trace.out trace-bpfcc -p "$WPID" \
	"p:$CLIB:lib_scale \"x=%d\", arg1" \
	"r:$CLIB:lib_scale \"ret=%d\", retval" \
	"u:$W:step \"step=%d\", arg1" \
	"u:$W:armed \"armed=%d\", arg1"
wait_for /tmp/trace.out '^PID +TID' 240 || fail "trace-bpfcc did not start: $(tail -n 3 /tmp/trace.out)"
expect "workload's scale" "scale n=20 sum=590" "$(wl scale 20)"
expect "workload's step" "step n=10" "$(wl step 10)"
# The USDT probe's semaphore is set while trace runs: every call fires it.
expect "workload's armed" "armed n=30 armed=30" "$(wl armed 30)"
# 20 entries, 20 returns, 10 + 30 USDT hits; then a second for any extra.
for ((i = 0; i < 300; i++)); do
	[ "$(grep -cE ' (x|ret|step|armed)=' /tmp/trace.out)" -ge 80 ] && break
	sleep 0.1
done
sleep 1
stop_tool
# A thread's events can come out of order across CPUs: compare them sorted.
vals() { grep -oE " $1=-?[0-9]+\$" /tmp/trace.out | cut -d= -f2 | sort -n | paste -sd' '; }
expect "lib_scale arguments" "$(seq 0 19 | paste -sd' ')" "$(vals x)"
expect "lib_scale return values" "$(seq 1 3 58 | paste -sd' ')" "$(vals ret)"
expect "client:step arguments" "$(seq 0 9 | paste -sd' ')" "$(vals step)"
expect "client:armed arguments" "$(seq 0 29 | paste -sd' ')" "$(vals armed)"
expect "events printed" 80 "$(grep -cE ' (x|ret|step|armed)=' /tmp/trace.out)"
