#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness/tests/summarize.sh: harness/summarize takes an RCU stall and a
# hung task for kernel reports, quotes a report to its last backtrace (a
# stall on two CPUs, KASAN's three stacks) and not the console lines after
# it, repeats a report's head, not its tail, under "What failed", and
# counts test_progs's tests and subtests.  On consoles and results
# written in a temporary directory.  TAP on stdout; exit status 1
# when a case fails.  A few seconds.
set -u
here=$(cd "$(dirname "$0")" && pwd)
harness=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=harness/tests/tap.bash
. "$here/tap.bash"

mkdir "$tmp/results"
# summary CONSOLE: the kernel/no-reports line and the "What failed" block
summary() {
	python3 "$harness/summarize" --results "$tmp/results" --console "$1" \
		--kunit-py /nonexistent --kunit-suites "" --kernel ours 2>&1 |
		sed -n '/kernel\/no-reports/,$p'
}

stall() {
	cat <<'LOG'
[  247.284146] uprobes: pid 4918: probe at ust_map_4917:0x100 not installed: -524
[  270.175863] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:
[  270.177025] rcu: 	1-....: (1797 ticks this GP) idle=d2d4/1/0x4000000000000000 softirq=44713/44713 fqs=1662
[  270.178430] Sending NMI from CPU 0 to CPUs 1:
[  270.156152] NMI backtrace for cpu 1
[  270.156152] CPU: 1 PID: 4933 Comm: uprobe_mapping Tainted: G                 N 6.1.192+ #48
[  270.156152] RIP: 0010:clear_page_erms+0x7/0x10
[  270.156152] Call Trace:
[  270.156152]  <TASK>
[  270.156152]  kernel_init_pages+0x2e/0x38
[  270.156152]  asm_exc_page_fault+0x22/0x30
[  270.156152] RIP: 0033:0x7f1ade6a22ad
[  270.156152]  </TASK>
LOG
	for i in $(seq 1 20); do
		echo "[  419.$i] uprobes/x86: cannot probe 64-bit instruction 06 at 0x0: undefined in 64-bit mode"
	done
}
stall > "$tmp/stall.log"
summary "$tmp/stall.log" > "$tmp/stall.out"
expect "an RCU stall fails kernel/no-reports, named by its first line" \
	grep -q '^FAIL  *kernel/no-reports .*: rcu: INFO: rcu_sched detected stalls' "$tmp/stall.out"
expect "the stall's quote ends with its backtrace" \
	sh -c "! grep -q 'cannot probe' '$tmp/stall.out'"
expect "What failed repeats the stall's head: the CPU and task" \
	sh -c "sed -n '/^What failed/,\$p' '$tmp/stall.out' | grep -q 'Comm: uprobe_mapping'"

# One stall, two CPUs: a backtrace each, both quoted.
{
	echo "[  300.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:"
	for c in 0 1; do
		echo "[  300.1] NMI backtrace for cpu $c"
		echo "[  300.1] CPU: $c PID: 10$c Comm: prog$c Not tainted 6.1.192+ #48"
		echo "[  300.1] RIP: 0010:f$c+0x1/0x2"
		for r in 1 2 3 4 5 6 7 8 9 10; do echo "[  300.1] R$r: 0"; done
		echo "[  300.1] Call Trace:"
		echo "[  300.1]  <TASK>"
		echo "[  300.1]  frame_of_cpu$c+0x1/0x2"
		echo "[  300.1]  </TASK>"
	done
	echo "[  300.2] rcu: rcu_sched kthread starved for 5000 jiffies"
	echo "[  300.2]  </TASK>"
	echo "[  301.0] unrelated: a line after the report"
} > "$tmp/stall2.log"
summary "$tmp/stall2.log" > "$tmp/stall2.out"
expect "a stall on two CPUs is quoted with both backtraces" \
	sh -c "grep -q frame_of_cpu0 '$tmp/stall2.out' && grep -q frame_of_cpu1 '$tmp/stall2.out'"
expect "... and not the console line after it" \
	sh -c "! grep -q unrelated '$tmp/stall2.out'"

# KASAN: the access, the allocation and the free, to its closing rule.
{
	echo "[  50.0] =================================================================="
	echo "[  50.0] BUG: KASAN: use-after-free in uprobe_thing+0x1/0x2"
	for part in access alloc free; do
		echo "[  50.0] Call Trace:"
		echo "[  50.0]  <TASK>"
		echo "[  50.0]  stack_of_$part+0x1/0x2"
		echo "[  50.0]  </TASK>"
	done
	echo "[  50.1] =================================================================="
	echo "[  51.0] unrelated: a line after the report"
} > "$tmp/kasan.log"
summary "$tmp/kasan.log" > "$tmp/kasan.out"
expect "a KASAN report is quoted with its allocation and free stacks" \
	sh -c "grep -q stack_of_free '$tmp/kasan.out' && ! grep -q unrelated '$tmp/kasan.out'"

{
	echo "[  100.0] INFO: task uprobe_hostage:812 blocked for more than 120 seconds."
	echo "[  100.1]       Not tainted 6.1.192+ #48"
	echo "[  100.2] Call Trace:"
	echo "[  100.3]  <TASK>"
	echo "[  100.4]  schedule+0x5d/0xa0"
	echo "[  100.5]  </TASK>"
} > "$tmp/hung.log"
expect "a hung task fails kernel/no-reports, named by its first line" \
	sh -c "'$harness/summarize' --results '$tmp/results' --console '$tmp/hung.log' --kunit-py /nonexistent --kunit-suites '' --kernel ours 2>&1 | grep -q '^FAIL  *kernel/no-reports .*: INFO: task uprobe_hostage:812 blocked'"

{
	echo "[   90.0] harness: SUITE   selftests/uprobes: uprobe_before"
	echo "[   95.0] harness: SUITE   ftracetest 6.1: uprobe_syntax_errors.tc"
	cat "$tmp/hung.log"
} > "$tmp/during.log"
expect "a report names the suite the guest was running when it began" \
	sh -c "'$harness/summarize' --results '$tmp/results' --console '$tmp/during.log' --kunit-py /nonexistent --kunit-suites '' --kernel ours 2>&1 | grep -q '^FAIL  *kernel/no-reports .*: (during ftracetest 6.1: uprobe_syntax_errors.tc) | INFO: task uprobe_hostage'"

{
	echo "[    1.0] Linux version 6.1.192+"
	echo "[    2.0] harness: LEFT    by selftests/uprobes: x: pid 7 (./bug_finder BUG: WARNING: Call Trace:)"
} > "$tmp/ownline.log"
expect "the harness's own console lines are no kernel report" \
	sh -c "'$harness/summarize' --results '$tmp/results' --console '$tmp/ownline.log' --kunit-py /nonexistent --kunit-suites '' --kernel ours 2>&1 | grep -q '^PASS  *kernel/no-reports'"

echo "[    1.0] Linux version 6.1.192+" > "$tmp/clean.log"
expect "a console without a report passes kernel/no-reports" \
	sh -c "'$harness/summarize' --results '$tmp/results' --console '$tmp/clean.log' --kunit-py /nonexistent --kunit-suites '' --kernel ours 2>&1 | grep -q '^PASS  *kernel/no-reports'"

# test_progs (the BPF selftests): a subtest counts on its own; a test
# that failed before its subtests (its skeleton's load) counts as itself;
# an expected test with no line fails.
# bpf_summary TESTS OUT: summarize's lines for $tmp/bpf's test_progs run
bpf_summary() {
	python3 "$harness/summarize" --results "$tmp/bpf" --console "$tmp/clean.log" \
		--kunit-py /nonexistent --kunit-suites "" --kernel ours \
		--bpf-tests "$1" > "$2" 2>&1
}
mkdir "$tmp/bpf"
cat > "$tmp/bpf/bpf-test_progs.log" <<'LOG'
#1       attach_probe:OK
test_bpf_cookie:FAIL:skel_open unexpected error: -22
#2       bpf_cookie:FAIL
#6/1     usdt/basic:OK
#6/2     usdt/multispec:SKIP
#6       usdt:OK
Summary: 2/1 PASSED, 1 SKIPPED, 1 FAILED
LOG
echo 1 > "$tmp/bpf/bpf-test_progs.rc"
bpf_summary "attach_probe bpf_cookie/uprobe usdt task_pt_regs" "$tmp/bpf.out"
expect "test_progs: a test without subtests passes as itself" \
	grep -q '^PASS  *bpf/attach_probe *$' "$tmp/bpf.out"
expect "test_progs: subtests count, their test does not" \
	sh -c "grep -q '^PASS  *bpf/usdt/basic' '$tmp/bpf.out' && grep -q '^SKIP  *bpf/usdt/multispec' '$tmp/bpf.out' && ! grep -q 'bpf/usdt ' '$tmp/bpf.out'"
expect "test_progs: a test failing before its subtests fails" \
	grep -q '^FAIL  *bpf/bpf_cookie/uprobe ' "$tmp/bpf.out"
expect "test_progs: an expected test with no result fails" \
	grep -q '^FAIL  *bpf/task_pt_regs .*no result' "$tmp/bpf.out"

# A subtest asked for with no line of its own (renamed, filtered out)
# fails, though its test passed; a guest that died in test_progs (no
# exit status written) still gets a summary, and the test in flight fails.
cat > "$tmp/bpf/bpf-test_progs.log" <<'LOG'
#2       bpf_cookie:OK
#3       task_pt_regs:OK
LOG
rm "$tmp/bpf/bpf-test_progs.rc"
bpf_summary "bpf_cookie/uprobe task_pt_regs usdt" "$tmp/bpf2.out"
expect "test_progs: a subtest asked for without its line fails" \
	grep -q '^FAIL  *bpf/bpf_cookie/uprobe .*no result' "$tmp/bpf2.out"
expect "test_progs: no exit status (a dead guest): the summary is still made" \
	sh -c "grep -q '^PASS  *bpf/task_pt_regs' '$tmp/bpf2.out' && grep -q '^FAIL  *bpf/usdt .*exit missing' '$tmp/bpf2.out' && tail -n 1 '$tmp/bpf2.out' | grep -q 'failed'"

echo "1..$n"
[ $bad -eq 0 ]
