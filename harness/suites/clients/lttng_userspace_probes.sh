# In a mount namespace of its own, with the modules built for this kernel
# (prepare) overlaid on /usr/lib, where lttng-sessiond's libkmod looks.
[ -n "${LTTNG_TEST_NS:-}" ] || LTTNG_TEST_NS=1 exec unshare -m bash "$0" "$@"
echo "LTTng: elf: and sdt: userspace probes recorded, read back with babeltrace2, counts exact"
. "$(dirname "$0")/lib.bash"
need lttng
need lttng-sessiond
need babeltrace2
need_kmod lttng
trace=/tmp/lttng-trace
rm -rf "$trace"
stop_sessiond() {
	local p i
	p=$(cat /run/lttng/lttng-sessiond.pid 2>/dev/null)
	[ -n "$p" ] || return 0
	kill -TERM "$p" 2>/dev/null
	for ((i = 0; i < 300; i++)); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "lttng-sessiond did not exit"
}
trap stop_sessiond EXIT
mount -t overlay overlay -o "lowerdir=$KSET/lttng/lib:/usr/lib" /usr/lib ||
	fail "cannot overlay the lttng modules on /usr/lib"
lttng-sessiond --background > /tmp/sessiond.log 2>&1 ||
	fail "lttng-sessiond: $(tail -n 3 /tmp/sessiond.log)"
grep -q '^lttng_tracer ' /proc/modules || fail "lttng-sessiond loaded no lttng_tracer: $(tail -n 3 /tmp/sessiond.log)"
lttng create uprobes --output="$trace" >/dev/null || fail "lttng create"
lttng enable-event --kernel --userspace-probe="elf:$T:target_add" target_add >/dev/null ||
	fail "lttng enable-event --userspace-probe=elf:$T:target_add"
lttng enable-event --kernel --userspace-probe="sdt:$W:client:step" client_step >/dev/null ||
	fail "lttng enable-event --userspace-probe=sdt:$W:client:step"
lttng start >/dev/null || fail "lttng start"
tout=$("$T" 300)
wout=$("$W" step 200)
lttng stop >/dev/null || fail "lttng stop"
lttng destroy >/dev/null || fail "lttng destroy"
expect "target's output" "calls=300 sum=165750 semaphore_armed=0" "$tout"
expect "workload's output" "step n=200" "$wout"
babeltrace2 "$trace" > /tmp/lttng.txt 2>/tmp/bt.err || fail "babeltrace2: $(tail -n 3 /tmp/bt.err)"
expect "target_add events" 300 "$(grep -c ' target_add: ' /tmp/lttng.txt)"
expect "client_step events" 200 "$(grep -c ' client_step: ' /tmp/lttng.txt)"
expect "events in the trace" 500 "$(wc -l < /tmp/lttng.txt)"
stop_sessiond
trap - EXIT
expect "lttng modules left loaded" "" "$(grep -o '^lttng[a-z0-9_]*' /proc/modules | tr '\n' ' ')"
