# SPDX-License-Identifier: GPL-2.0
# Shared by the client tests: each test is a bash script whose first output
# line says what it shows; exit 0 pass, 4 skip (tool missing), 1 fail.
T=${CLIENT_BIN:?}/target
LIBC=/lib/x86_64-linux-gnu/libc.so.6
export PERF_PAGER=cat HOME=${HOME:-/tmp}
cd /tmp

need() {
	command -v "$1" >/dev/null || { echo "SKIP: $1 is not installed"; exit 4; }
}

# expect WHAT EXPECTED SEEN
expect() {
	[ "$2" = "$3" ] || fail "$1: expected '$2', saw '$3'"
	echo "ok: $1 = $3"
}

cleanup_perf_probes() {
	perf probe -q -d 'probe_target:*' >/dev/null 2>&1
	perf probe -q -d 'probe_libc:*' >/dev/null 2>&1
	true
}

# The programs the newer tests run (prepare builds them).
W=$CLIENT_BIN/workload
CLIB=$CLIENT_BIN/libclientlib.so

# The running kernel's GNU build id, from /sys/kernel/notes.
kernel_build_id() {
	python3 -c '
import struct
d = open("/sys/kernel/notes", "rb").read()
i = 0
while i + 12 <= len(d):
    nsz, dsz, typ = struct.unpack_from("<III", d, i)
    name = d[i + 12:i + 12 + nsz]
    i += 12 + ((nsz + 3) & ~3)
    if typ == 3 and name.rstrip(b"\0") == b"GNU":
        print(d[i:i + dsz].hex())
        break
    i += (dsz + 3) & ~3' 2>/dev/null
}

# need_kmod SET: sets KSET to the running kernel's module sets
# ($CLIENT_BIN/kmod/BUILD-ID, prepare); SET (lttng, stap) must have built.
# When it did not, the test fails on a 6.1 kernel, where every client must
# work, and is skipped on others (6.12: Debian's clients predate it).
need_kmod() {
	local id why
	id=$(kernel_build_id)
	KSET=$CLIENT_BIN/kmod/$id
	[ -n "$id" ] && [ -f "$KSET/$1.ok" ] && return 0
	if [ -n "$id" ] && [ -f "$KSET/$1.err" ]; then
		why=$(cat "$KSET/$1.err")
	else
		why="no $1 modules built for this kernel (build id ${id:-unknown})"
	fi
	case $(uname -r) in
	6.1.*) echo "FAIL: $why"; exit 1 ;;
	*) echo "SKIP: $why"; exit 4 ;;
	esac
}

# fail WHY: the test fails; the last lines of the tool's output first.
fail() {
	if [ -n "${TOOL_OUT:-}" ] && [ -s "$TOOL_OUT" ]; then
		echo "--- the last lines of $(basename "$TOOL_OUT"):"
		tail -n 25 "$TOOL_OUT"
	fi
	echo "FAIL: $*"
	exit 1
}

# wait_for FILE ERE SECONDS: until a line of FILE matches ERE; status 1
# at the timeout, or when the tool of start_tool exited without it.
wait_for() {
	local f=$1 re=$2 t=${3:-60} i
	for ((i = 0; i < t * 10; i++)); do
		grep -qE -- "$re" "$f" 2>/dev/null && return 0
		if [ -n "${TOOL_PID:-}" ] && ! kill -0 "$TOOL_PID" 2>/dev/null; then
			grep -qE -- "$re" "$f" 2>/dev/null
			return
		fi
		sleep 0.1
	done
	return 1
}

# start_workload: $W in the background, reading its commands from a fifo
# (wl sends them), its answers to /tmp/wl.out; WPID is its pid.
start_workload() {
	rm -f /tmp/wl.in /tmp/wl.out
	mkfifo /tmp/wl.in
	"$W" < /tmp/wl.in > /tmp/wl.out 2>&1 &
	WPID=$!
	exec 3> /tmp/wl.in
	wait_for /tmp/wl.out '^ready' 30 || fail "workload did not start: $(cat /tmp/wl.out)"
}

# wl CMD ARGS: one command to the workload; prints its answer.
wl() {
	local n i
	n=$(wc -l < /tmp/wl.out)
	echo "$*" >&3
	for ((i = 0; i < 600; i++)); do
		[ "$(wc -l < /tmp/wl.out)" -gt "$n" ] && { tail -n 1 /tmp/wl.out; return 0; }
		sleep 0.1
	done
	fail "workload did not answer '$*'"
}

# start_tool OUT CMD...: a tracing tool in the background, its output to
# OUT (TOOL_OUT), unbuffered, so that a test sees each line when the tool
# prints it; TOOL_PID is its pid.  Job control is on, so that the tool does
# not start with SIGINT ignored: stop_tool ends it with SIGINT (Ctrl-C),
# after which the bcc tools print their counts.
start_tool() {
	local out=$1
	shift
	TOOL_OUT=$out
	set -m
	PYTHONUNBUFFERED=1 "$@" > "$out" 2>&1 &
	TOOL_PID=$!
	set +m
}

# stop_tool: SIGINT, then wait (at most 60 s) for the tool to exit.
stop_tool() {
	local i
	[ -n "${TOOL_PID:-}" ] || return 0
	kill -INT "$TOOL_PID" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		kill -0 "$TOOL_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$TOOL_PID" 2>/dev/null
	wait "$TOOL_PID" 2>/dev/null
	TOOL_PID=
}

# Ends what a test started: the tool, then the workload.
cleanup_tool() {
	stop_tool
	exec 3>&- 2>/dev/null
	[ -n "${WPID:-}" ] && wait "$WPID" 2>/dev/null
	true
}

# stap_run NAME CMD: runs the SystemTap module NAME (stap/NAME.stp, built
# for this kernel by prepare) with staprun -c CMD.  The script's output is
# in STAP_OUT, the command's standard output in CMD_OUT.
stap_run() {
	local n=$1
	shift
	need staprun
	need_kmod stap
	staprun -o "/tmp/$n.out" -c "$*" "$KSET/stap/$n.ko" > "/tmp/$n.cmd" 2> "/tmp/$n.err" ||
		fail "staprun $n.ko -c '$*': $(tail -n 3 "/tmp/$n.err" | tr '\n' ' ')"
	STAP_OUT=$(cat "/tmp/$n.out")
	CMD_OUT=$(cat "/tmp/$n.cmd")
}
