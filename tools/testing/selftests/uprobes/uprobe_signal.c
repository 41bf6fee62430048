// SPDX-License-Identifier: GPL-2.0
/*
 * The traced program sees no difference where signals and traps are
 * concerned: signals arriving around probe hits are all delivered, a
 * fault in a probed instruction is reported where the instruction is, an
 * int3 of the program's own still raises SIGTRAP (and a breakpoint of
 * ours, even one taken out and put back under running threads, never
 * does), a debugger stepping over a probed instruction still stops after
 * it, and a process killed in the middle of probed code leaves nothing
 * behind.
 */
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_sig"

FIXTURE(sig) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_SETUP(sig)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
}

FIXTURE_TEARDOWN(sig)
{
	ut_ctx_cleanup(&self->c);
}

/*
 * A loop over a probed function with an interval timer firing: the sum
 * of results, the number of hits and the signals seen all add up.
 */
static void run_sigloop_at(struct __test_metadata *_metadata,
			   FIXTURE_DATA(sig) *self, const char *fn,
			   const char *sym, long n, bool handler_calls)
{
	struct ut_target *t;
	long off, sum, nsig, hcalls, done, inxol;
	char r[256];

	UT_SYM(off, self->target, sym);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "sigloop %s %ld 200%s", fn, n, handler_calls ? " handler" : "");
	ASSERT_EQ(5, sscanf(r, "ok %ld %ld %ld %ld %ld", &sum, &nsig, &hcalls,
			    &done, &inxol))
		TH_LOG("reply: %s", r);
	/* The target stops after 60 s on a slow (debug) kernel. */
	if (done < n)
		TH_LOG("%ld of %ld calls made in the target's 60 s", done, n);
	EXPECT_LE(2000, done) TH_LOG("too few calls to mean anything");
	EXPECT_LT(0, nsig) TH_LOG("no timer signal arrived during the loop");
	EXPECT_EQ(handler_calls ? nsig : 0, hcalls);
	/* A handler never sees the thread inside the "[uprobes]" mapping. */
	EXPECT_EQ(0, inxol) TH_LOG("signals whose context was an XOL slot");
	/* ut_step(i, 1), ut_push(i) and ut_ripadd(i, 1) all return i + 1 */
	EXPECT_EQ(done * (done + 1) / 2, sum) TH_LOG("sum of %s over the loop", fn);
	EXPECT_EQ(done + hcalls, UT_HITS(0))
		TH_LOG("%ld calls in the loop, %ld in the handler", done, hcalls);
}

static void run_sigloop(struct __test_metadata *_metadata, FIXTURE_DATA(sig) *self,
			const char *fn, long n, bool handler_calls)
{
	run_sigloop_at(_metadata, self, fn, fn, n, handler_calls);
}

/* Signals arriving while an out-of-line step is in progress. */
TEST_F_TIMEOUT(sig, signals_during_stepped_probe_all_delivered, 120)
{
	run_sigloop(_metadata, self, "ut_step", 20000, false);
}

/* Signals arriving around an emulated probed instruction. */
TEST_F_TIMEOUT(sig, signals_during_emulated_probe_all_delivered, 120)
{
	run_sigloop(_metadata, self, "ut_push", 20000, false);
}

/*
 * Signals arriving around a rip-relative instruction run out of line: the
 * register its copy borrows and the red zone are the program's again in
 * every handler and after it (ut_ripadd checks both).
 */
TEST_F_TIMEOUT(sig, signals_during_rip_relative_probe_all_delivered, 120)
{
	run_sigloop_at(_metadata, self, "ut_ripadd", "ut_ripadd_add", 20000,
		       true);
}

/* The signal handler itself runs the probed function: every call counts. */
TEST_F_TIMEOUT(sig, handler_calling_probed_function_counted_exactly, 120)
{
	run_sigloop(_metadata, self, "ut_step", 20000, true);
}

/*
 * A probed load that faults: SIGSEGV is delivered with the fault address,
 * and the context shows the instruction's own address, not a copy's.
 */
TEST_F(sig, fault_in_probed_instruction_reported_in_place)
{
	struct ut_target *t;
	long off, res, nsig, rip, addr;
	char r[256];

	UT_SYM(off, self->target, "ut_load");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "fault 0x18");
	ASSERT_EQ(4, sscanf(r, "ok %ld %ld %lx %lx", &res, &nsig, &rip, &addr))
		TH_LOG("reply: %s", r);
	EXPECT_EQ(1, nsig) TH_LOG("SIGSEGVs delivered");
	EXPECT_EQ(0, rip) TH_LOG("the signal's RIP is ut_load+0x%lx", rip);
	EXPECT_EQ(0x18, addr) TH_LOG("si_addr");
	EXPECT_EQ(-1, res);
	EXPECT_EQ(1, UT_HITS(0));
	UT_CMD(t, r, "call ut_step 3 4 5");
	EXPECT_EQ(9, ut_okval(r)) TH_LOG("the program after the fault");
}

/*
 * A probed indirect call through a bad pointer: SIGSEGV with the pointer
 * as the fault address, at the call itself, once each time, and nothing
 * pushed; the same call through a good pointer works afterwards.
 */
TEST_F(sig, fault_in_probed_indirect_call_reported_in_place)
{
	struct ut_target *t;
	long off, res, nsig, rip, addr, ptr;
	char r[256];
	int i;

	UT_SYM(off, self->target, "ut_callptr_call");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= 3; i++) {
		UT_CMD(t, r, "callfault 0x%x", i * 0x100);
		ASSERT_EQ(4, sscanf(r, "ok %ld %ld %lx %lx", &res, &nsig, &rip, &addr))
			TH_LOG("reply: %s", r);
		EXPECT_EQ(1, nsig) TH_LOG("SIGSEGVs delivered");
		EXPECT_EQ(0, rip) TH_LOG("the signal's RIP is ut_callptr_call+0x%lx", rip);
		EXPECT_EQ(i * 0x100, addr) TH_LOG("si_addr");
		EXPECT_EQ(-1, res);
	}
	UT_CMD(t, r, "addr ut_incptr");
	ASSERT_EQ(1, sscanf(r, "ok %lx", &ptr)) TH_LOG("reply: %s", r);
	UT_CMD(t, r, "call ut_callptr 2 0x%lx 9", ptr);
	EXPECT_EQ(10, ut_okval(r)) TH_LOG("the call after the faults: %s", r);
	EXPECT_EQ(5, UT_HITS(0));
}

/*
 * A probed jmp through a register to an unmapped address and to a
 * non-canonical one: the program sees the same signal, with the same
 * RIP, si_addr and si_code, as it does without the probe, whatever the
 * CPU reports there.
 */
TEST_F(sig, bad_indirect_jump_faults_as_without_probe)
{
	static const char *const targets[] = { "0x100", "0x8000000000000000" };
	char r[256], want[ARRAY_SIZE(targets)][256];
	struct ut_target *t;
	unsigned int i;
	long off;

	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		UT_CMD(t, want[i], "jmpfault %s", targets[i]);
		ASSERT_EQ(0, strncmp(want[i], "ok -1 1 ", 8))
			TH_LOG("unprobed, jmp to %s: %s", targets[i], want[i]);
	}
	UT_SYM(off, self->target, "ut_jmpptr");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		UT_CMD(t, r, "jmpfault %s", targets[i]);
		EXPECT_STREQ(want[i], r) TH_LOG("probed, jmp to %s", targets[i]);
	}
	EXPECT_EQ(2, UT_HITS(0));
	UT_CMD(t, r, "call ut_step 3 4 5");
	EXPECT_EQ(9, ut_okval(r)) TH_LOG("the program after the faults");
}

/*
 * A probed ret to a non-canonical address: the CPU raises #GP at the ret
 * itself, before it pops, so the program's handler sees RIP at the ret,
 * RSP still at the pushed address, si_code SI_KERNEL and si_addr 0.  An
 * emulator that pops and moves ip first has the fault come from the
 * return to user space instead, with another frame.  What this machine
 * does without the probe is logged but not the reference: QEMU's TCG
 * returns first and faults at the fetch, unlike the CPUs it models.
 */
TEST_F(sig, ret_to_noncanonical_faults_at_the_ret)
{
	/* Not canonical with 4- or 5-level page tables alike. */
	static const char *const targets[] = { "0x8000000000000000",
						"0x0100000000000000" };
	/* -1 from the handler, 1 signal, RIP and RSP offsets 0, si_addr 0 */
	static const char want[] = "ok -1 1 0x0 0 0x0 128";
	struct ut_target *t;
	unsigned int i;
	char r[256];
	long off;

	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "retfault %s", targets[0]);
	TH_LOG("unprobed on this machine: %s", r);
	UT_SYM(off, self->target, "ut_retptr_ret");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		UT_CMD(t, r, "retfault %s", targets[i]);
		EXPECT_STREQ(want, r) TH_LOG("probed, ret to %s", targets[i]);
	}
	EXPECT_EQ(2, UT_HITS(0));
	UT_CMD(t, r, "call ut_step 3 4 5");
	EXPECT_EQ(9, ut_okval(r)) TH_LOG("the program after the faults");
}

/*
 * A probed division by zero: SIGFPE at the div's own address, in the
 * context and in si_addr, once; the same instruction divides right
 * afterwards.
 */
TEST_F(sig, divide_error_in_probed_instruction_reported_in_place)
{
	struct ut_target *t;
	long off, res, nsig, rip, addr, code;
	char r[256];
	int i;

	UT_SYM(off, self->target, "ut_div_insn");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 3; i++) {
		UT_CMD(t, r, "fpe 10 0");
		ASSERT_EQ(5, sscanf(r, "ok %ld %ld %lx %lx %ld", &res, &nsig,
				    &rip, &addr, &code))
			TH_LOG("reply: %s", r);
		EXPECT_EQ(1, nsig) TH_LOG("SIGFPEs delivered");
		EXPECT_EQ(0, rip) TH_LOG("the signal's RIP is ut_div_insn+0x%lx", rip);
		EXPECT_EQ(0, addr) TH_LOG("si_addr is ut_div_insn+0x%lx", addr);
		EXPECT_EQ(FPE_INTDIV, code);
		EXPECT_EQ(-1, res);
		UT_CMD(t, r, "fpe 100 7");
		ASSERT_EQ(2, sscanf(r, "ok %ld %ld", &res, &nsig));
		EXPECT_EQ(14, res) TH_LOG("100 / 7 under the probe");
		EXPECT_EQ(0, nsig);
	}
	EXPECT_EQ(6, UT_HITS(0));
}

/* The same fault, repeated: one signal and one hit each time. */
TEST_F(sig, repeated_faults_each_delivered_once)
{
	struct ut_target *t;
	long off, res, nsig, rip, addr;
	char r[256];
	int i;

	UT_SYM(off, self->target, "ut_load");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= 10; i++) {
		UT_CMD(t, r, "fault 0x%x", i * 8);
		ASSERT_EQ(4, sscanf(r, "ok %ld %ld %lx %lx", &res, &nsig, &rip, &addr));
		EXPECT_EQ(1, nsig);
		EXPECT_EQ(0, rip);
		EXPECT_EQ(i * 8, addr);
	}
	EXPECT_EQ(10, UT_HITS(0));
}

/*
 * The program's own trap instruction, run by the target command @cmd, in
 * a process with a probe elsewhere: one SIGTRAP, si_code SI_KERNEL, RIP
 * @len bytes into the function, its result, no hit.
 */
static void expect_own_trap(struct __test_metadata *_metadata,
			    FIXTURE_DATA(sig) *self, const char *cmd, long len)
{
	struct ut_target *t;
	long off, res, nsig, rip, code;
	char r[256];

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "%s 3", cmd);
	ASSERT_EQ(4, sscanf(r, "ok %ld %ld %lx %ld", &res, &nsig, &rip, &code))
		TH_LOG("reply: %s", r);
	EXPECT_EQ(1, nsig) TH_LOG("SIGTRAPs delivered");
	EXPECT_EQ(len, rip) TH_LOG("RIP after the trap is %ld bytes in", rip);
	EXPECT_EQ(0x80, code) TH_LOG("si_code (SI_KERNEL)");
	EXPECT_EQ(7, res);
	EXPECT_EQ(0, UT_HITS(0));
}

/* The program's own int3, next to a probe, still raises SIGTRAP. */
TEST_F(sig, int3_not_ours_gives_sigtrap)
{
	expect_own_trap(_metadata, self, "int3", 1);
}

/*
 * Its "int $3" (cd 03) too, with RIP past both bytes, not a restart at
 * the 03 as if a removed breakpoint of ours had trapped (found by
 * uprobe_insnfuzz).
 */
TEST_F(sig, int_3_not_ours_gives_sigtrap_past_it)
{
	expect_own_trap(_metadata, self, "int_3", 2);
}

/* A probe right after the program's int3: SIGTRAP first, then the hit. */
TEST_F(sig, int3_followed_by_probed_instruction)
{
	struct ut_target *t;
	long off, res, nsig, rip, code;
	char r[256];

	UT_SYM(off, self->target, "ut_int3_after");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "int3 10");
	ASSERT_EQ(4, sscanf(r, "ok %ld %ld %lx %ld", &res, &nsig, &rip, &code))
		TH_LOG("reply: %s", r);
	EXPECT_EQ(1, nsig);
	EXPECT_EQ(1, rip);
	EXPECT_EQ(14, res);
	EXPECT_EQ(1, UT_HITS(0));
}

/* SIGSTOP/SIGCONT sent over and over during a probed loop change nothing. */
TEST_F_TIMEOUT(sig, stop_and_continue_during_probed_loop_count_exact, 120)
{
	struct ut_target *t;
	long off;
	char r[256];
	int i;

	UT_TRACE_ROOM(20000);
	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "threads ut_step 2 10000 5 6"));
	for (i = 0; i < 50; i++) {
		kill(t->pid, SIGSTOP);
		usleep(1000);
		kill(t->pid, SIGCONT);
		usleep(1000);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	EXPECT_STREQ("ok 22", r);
	/* two threads hit at once: count trace lines, not uprobe_profile */
	EXPECT_EQ(20000, UT_LINES(0, 0));
}

/* A process killed inside a probed loop leaves the probe removable and nothing else. */
TEST_F(sig, sigkill_during_probed_loop_leaves_nothing)
{
	struct ut_target *t, *fresh;
	unsigned char orig;
	uint64_t before;
	char r[256], want[32];
	long off;
	int st, i;

	UT_SYM(off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, &orig, 1));
	before = ut_file_hash(self->target);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "threads ut_step 2 100000000 1 1"));
	/* kill it once its threads are in the loop, hitting the probe */
	for (i = 0; i < 1000 && UT_HITS(0) < 100; i++)
		usleep(10000);
	ASSERT_LE(100, UT_HITS(0)) TH_LOG("the loop never got going");
	kill(t->pid, SIGKILL);
	st = ut_target_stop(t);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) TH_LOG("status 0x%x", st);
	UT_ENABLE(0, false);
	EXPECT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, 0)));
	EXPECT_EQ(before, ut_file_hash(self->target));
	UT_START(fresh, "uprobe_target", NULL);
	UT_CMD(fresh, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig);
	EXPECT_STREQ(want, r);
}

/*
 * A debugger single-stepping onto and over a probed instruction: it stops
 * right after the instruction, which took effect once, and the probe hit.
 * @fn(20, 22) starts with the probed instruction, @len bytes long; after
 * it %rdi is @rdi and %rsp moved by @sp; @fn returns @ret.
 */
static void step_over(struct __test_metadata *_metadata, FIXTURE_DATA(sig) *self,
		      const char *fn, int len, long rdi, long sp, long ret)
{
	struct user_regs_struct regs;
	struct ut_target *t;
	unsigned long addr, sp0;
	char r[256], want[64];
	int st, steps;
	long off;

	UT_SYM(off, self->target, fn);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr %s", fn);
	addr = strtoul(r + 3, NULL, 0);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, t->pid, 0, 0))
		TH_LOG("PTRACE_SEIZE: %s", strerror(errno));
	ASSERT_EQ(0, ut_target_send(t, "stepme %s 20 22", fn));
	ASSERT_EQ(t->pid, waitpid(t->pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP) TH_LOG("status 0x%x", st);
	/* Step (suppressing the SIGSTOP) until we are at @fn. */
	for (steps = 0; steps < 20000; steps++) {
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, t->pid, 0, &regs));
		if (regs.rip == addr)
			break;
		ASSERT_EQ(0, ptrace(PTRACE_SINGLESTEP, t->pid, 0, 0));
		ASSERT_EQ(t->pid, waitpid(t->pid, &st, 0));
		ASSERT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
			TH_LOG("step %d: status 0x%x", steps, st);
	}
	ASSERT_EQ(addr, regs.rip) TH_LOG("never reached %s", fn);
	EXPECT_EQ(0, UT_HITS(0));
	sp0 = regs.rsp;
	ASSERT_EQ(0, ptrace(PTRACE_SINGLESTEP, t->pid, 0, 0));
	ASSERT_EQ(t->pid, waitpid(t->pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP) TH_LOG("status 0x%x", st);
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, t->pid, 0, &regs));
	EXPECT_EQ(addr + len, regs.rip)
		TH_LOG("one step from %s stopped at %s+%ld",
		       fn, fn, (long)(regs.rip - addr));
	EXPECT_EQ(rdi, regs.rdi) TH_LOG("rdi after the instruction");
	EXPECT_EQ(sp, (long)(regs.rsp - sp0)) TH_LOG("rsp moved by the instruction");
	EXPECT_EQ(1, UT_HITS(0));
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, t->pid, 0, 0));
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	snprintf(want, sizeof(want), "ok %ld", ret);
	EXPECT_STREQ(want, r);
}

/* add: run out of line */
TEST_F(sig, debugger_single_step_over_probed_instruction)
{
	step_over(_metadata, self, "ut_step", 3, 42, 0, 42);
}

/* nop: emulated, and a step a debugger asked for is reported after it */
TEST_F(sig, debugger_single_step_over_probed_nop)
{
	step_over(_metadata, self, "ut_nop", 1, 20, 0, 20);
}

/* push %rbx: emulated as well */
TEST_F(sig, debugger_single_step_over_probed_push)
{
	step_over(_metadata, self, "ut_push", 1, 20, -8, 21);
}

/* Probed in this very program by the threads of the case below. */
__attribute__((noinline, used)) long sig_toggled_fn(long x)
{
	asm volatile("" : "+r"(x));
	return x + 1;
}

static int sig_toggle_stop;
static long sig_toggle_calls, sig_toggle_bad;

static void *sig_toggle_caller(void *arg)
{
	long i;

	for (i = 0; !__atomic_load_n(&sig_toggle_stop, __ATOMIC_RELAXED); i++)
		if (sig_toggled_fn(i) != i + 1)
			__atomic_add_fetch(&sig_toggle_bad, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sig_toggle_calls, i, __ATOMIC_RELAXED);
	return NULL;
}

/*
 * A breakpoint taken out and put back, over and over, while threads run
 * into it: a thread that trapped on it before it went and looks for it
 * after must run the instruction again, whatever it reads there by then,
 * never take a breakpoint put back meanwhile for the program's own int3
 * (SIGTRAP, which ends this program: the harness reports the signal).
 * The sum check only catches a wrong emulation of the instruction.
 */
TEST_F_TIMEOUT(sig, breakpoint_toggled_under_running_threads_raises_no_sigtrap, 120)
{
	struct timespec t0, t;
	char self_path[PATH_MAX];
	pthread_t th[4];
	long off, rounds = 0;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	ASSERT_LT(0, n);
	self_path[n] = '\0';
	UT_SYM(off, self_path, "sig_toggled_fn");
	UT_PROBE(0, 'p', self_path, off, NULL, NULL);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, sig_toggle_caller, NULL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		UT_ENABLE(0, true);
		UT_ENABLE(0, false);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 10);
	__atomic_store_n(&sig_toggle_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	TH_LOG("%ld rounds, %ld calls, %ld hits", rounds, sig_toggle_calls, UT_HITS(0));
	EXPECT_EQ(0, sig_toggle_bad);
	EXPECT_LE(20, rounds);
	EXPECT_LT(0, UT_HITS(0));
}

UT_HARNESS_MAIN
