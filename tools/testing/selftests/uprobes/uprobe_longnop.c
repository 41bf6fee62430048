// SPDX-License-Identifier: GPL-2.0
/*
 * Probes on long nops (the 5- and 6-byte nopl/nopw that function entries
 * patched for tracing and USDT sites are made of).  A hit is an int3
 * trap, as on any other probed instruction; the kernel then emulates the
 * nop or steps it out of line.  The program must see no difference:
 * every register, the flags and the 128-byte red zone below %rsp as they
 * were, a hit counted exactly once from any thread, while the probe comes
 * and goes, across fork, vfork and exec, with a bogus stack pointer,
 * under a storm of signals, single-stepped by a debugger, under a seccomp
 * allow-list, in a mapping moved by mremap(), and under a debugger's own
 * breakpoint on the same nop.  None of it is beyond stock 6.1: every case
 * passes there too.  The probed code is this program's own (the ul_*
 * functions below).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/user.h>
#include <ucontext.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_longnop"
/* No syscall of 6.1 has this number; ours adds none there either. */
#define NR_NOT_THERE 336

/*
 * ul_redzone(a, b): a leaf that keeps a and b in its red zone across the
 * probed nop and returns their sum.  ul_regs(buf): loads every general
 * register and the flags from buf[0..15] and buf[32], runs the probed nop
 * and stores what they hold after it in buf[16..31] and buf[33], and %rsp
 * before and after in buf[34] and buf[35].  ul_two(): two probed nops.
 * ul_badsp(sp): runs the probed nop with %rsp = sp, returns 1.
 * ul_inc(x): a 5-byte nop at the function's entry, then returns x + 1.
 */
asm(".pushsection .text\n"
	".globl ul_redzone, ul_redzone_site\n"
	".type ul_redzone, @function\n"
	"ul_redzone:\n"
	"	mov %rdi, -8(%rsp)\n"
	"	mov %rsi, -128(%rsp)\n"
	"ul_redzone_site:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	mov -8(%rsp), %rax\n"
	"	add -128(%rsp), %rax\n"
	"	ret\n"
	".size ul_redzone, .-ul_redzone\n"

	".globl ul_regs, ul_regs_site\n"
	".type ul_regs, @function\n"
	"ul_regs:\n"
	"	push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
	"	push %rdi\n"
	"	mov %rsp, 272(%rdi)\n"
	"	pushq 256(%rdi)\n popfq\n"
	"	mov 0(%rdi), %rax\n mov 8(%rdi), %rbx\n mov 16(%rdi), %rcx\n"
	"	mov 24(%rdi), %rdx\n mov 32(%rdi), %rsi\n mov 48(%rdi), %rbp\n"
	"	mov 64(%rdi), %r8\n mov 72(%rdi), %r9\n mov 80(%rdi), %r10\n"
	"	mov 88(%rdi), %r11\n mov 96(%rdi), %r12\n mov 104(%rdi), %r13\n"
	"	mov 112(%rdi), %r14\n mov 120(%rdi), %r15\n mov 40(%rdi), %rdi\n"
	"ul_regs_site:\n"
	"	.byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopw 0(%rax,%rax) */
	"	xchg %rdi, (%rsp)\n"
	"	pushfq\n popq 264(%rdi)\n"
	"	mov %rsp, 280(%rdi)\n"
	"	mov %rax, 128(%rdi)\n mov %rbx, 136(%rdi)\n mov %rcx, 144(%rdi)\n"
	"	mov %rdx, 152(%rdi)\n mov %rsi, 160(%rdi)\n mov %rbp, 176(%rdi)\n"
	"	mov %r8, 192(%rdi)\n mov %r9, 200(%rdi)\n mov %r10, 208(%rdi)\n"
	"	mov %r11, 216(%rdi)\n mov %r12, 224(%rdi)\n mov %r13, 232(%rdi)\n"
	"	mov %r14, 240(%rdi)\n mov %r15, 248(%rdi)\n"
	"	popq 168(%rdi)\n"
	"	cld\n"
	"	pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n"
	"	ret\n"
	".size ul_regs, .-ul_regs\n"

	".globl ul_two, ul_two_a, ul_two_b\n"
	".type ul_two, @function\n"
	"ul_two:\n"
	"ul_two_a:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"ul_two_b:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	ret\n"
	".size ul_two, .-ul_two\n"

	".globl ul_badsp, ul_badsp_site\n"
	".type ul_badsp, @function\n"
	"ul_badsp:\n"
	"	mov %rsp, %rax\n"
	"	mov %rdi, %rsp\n"
	"ul_badsp_site:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	mov %rax, %rsp\n"
	"	mov $1, %eax\n"
	"	ret\n"
	".size ul_badsp, .-ul_badsp\n"

	".globl ul_inc\n"
	".type ul_inc, @function\n"
	"ul_inc:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	lea 1(%rdi), %rax\n"
	"	ret\n"
	".size ul_inc, .-ul_inc\n"
	".popsection\n");

long ul_redzone(long a, long b);
void ul_regs(unsigned long *buf);
void ul_two(void);
long ul_badsp(unsigned long sp);
long ul_inc(long x);
extern char ul_redzone_site[];

/* Calls of ul_redzone() whose result is wrong. */
static long ul_calls(long n)
{
	long i, bad = 0;

	for (i = 0; i < n; i++)
		bad += ul_redzone(i, 3 * i + 1) != 4 * i + 1;
	return bad;
}

/* Calls of ul_inc() whose result is wrong. */
static long ul_inc_calls(long n)
{
	long i, bad = 0;

	for (i = 0; i < n; i++)
		bad += ul_inc(i) != i + 1;
	return bad;
}

/* A code file: at 0x100, a probed 5-byte nop, then "mov $7, %eax; ret". */
static const char *ul_code_file(void)
{
	static const unsigned char fn[] = {
		0x0f, 0x1f, 0x44, 0x00, 0x00,	/* nopl 0(%rax,%rax) */
		0xb8, 0x07, 0x00, 0x00, 0x00,	/* mov $7, %eax */
		0xc3,				/* ret */
	};
	static const char *path = "/tmp/uprobe_longnop_code";
	unsigned char buf[2 * UT_PAGE];

	memset(buf, 0x90, sizeof(buf));
	memcpy(buf + 0x100, fn, sizeof(fn));
	return ut_new_file(path, buf, sizeof(buf)) ? NULL : path;
}

FIXTURE(longnop) {
	struct ut_ctx c;
	char self_path[PATH_MAX];
	pid_t child;		/* a traced child to kill if a case ends early */
};

FIXTURE_SETUP(longnop)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->self_path, sizeof(self->self_path) - 1);
	ASSERT_LT(0, n);
	self->self_path[n] = 0;
}

FIXTURE_TEARDOWN(longnop)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	ut_ctx_cleanup(&self->c);
}

/* Probe this program's symbol @sym as event @i, enabled. */
#define UL_PROBE(i, sym) do {							\
	long __off;								\
	UT_SYM(__off, self->self_path, (sym));					\
	UT_PROBE((i), 'p', self->self_path, __off, NULL, NULL);			\
	UT_ENABLE((i), true);							\
} while (0)

/* @n bytes of process @pid's memory at @addr, read or (@write) written. */
static int ul_mem(pid_t pid, unsigned long addr, void *buf, size_t n, bool write)
{
	char path[64];
	ssize_t done;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, write ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return -errno;
	done = write ? pwrite(fd, buf, n, addr) : pread(fd, buf, n, addr);
	close(fd);
	return done == (ssize_t)n ? 0 : -EIO;
}

/* Every register and the flags, set from @seed, kept across the probed nop. */
static int ul_regs_check(struct __test_metadata *_metadata, unsigned long seed)
{
	/* CF PF AF ZF SF DF OF, and bit 1 */
	const unsigned long flags = 0xcd7;
	unsigned long buf[36] = { 0 };
	int i, bad = 0;

	for (i = 0; i < 16; i++)
		buf[i] = seed * 0x9e3779b97f4a7c15UL + i * 0x0101010101010101UL;
	buf[32] = seed & 1 ? flags : 0x2;
	ul_regs(buf);
	/* buf[7], %rsp's place, is not used: buf[34] and buf[35] say. */
	for (i = 0; i < 16; i++)
		if (i != 7 && buf[16 + i] != buf[i]) {
			TH_LOG("register %d: %#lx before the nop, %#lx after",
			       i, buf[i], buf[16 + i]);
			bad++;
		}
	if ((buf[33] & flags) != (buf[32] & flags)) {
		TH_LOG("flags %#lx before the nop, %#lx after", buf[32], buf[33]);
		bad++;
	}
	if (buf[34] != buf[35]) {
		TH_LOG("%%rsp %#lx before the nop, %#lx after", buf[34], buf[35]);
		bad++;
	}
	return bad;
}

/*
 * Registers, flags (the arithmetic ones set and clear, DF too) and the
 * red zone are what they were across the probed nop, at every hit.
 */
TEST_F(longnop, registers_flags_and_red_zone_kept)
{
	long i, bad = 0, n = 2000;

	UL_PROBE(0, "ul_redzone_site");
	UL_PROBE(1, "ul_regs_site");
	for (i = 0; i < n; i++) {
		bad += ul_redzone(i, -i * 7) != -6 * i;
		bad += ul_regs_check(_metadata, i) != 0;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(n, UT_HITS(0));
	EXPECT_EQ(n, UT_HITS(1));
}

/*
 * An entry and a return probe on a function whose first instruction is
 * a probed 5-byte nop: the function returns what it should, to where it
 * should, and both probes record every call.
 */
TEST_F(longnop, return_probe_on_a_nop5_at_function_entry)
{
	long off;

	UT_SYM(off, self->self_path, "ul_inc");
	UT_PROBE(0, 'p', self->self_path, off, NULL, NULL);
	UT_PROBE(1, 'r', self->self_path, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_TRACE_ROOM(400);
	EXPECT_EQ(0, ul_inc_calls(100));
	EXPECT_EQ(100, UT_HITS(0));
	EXPECT_EQ(100, UT_LINES(1, getpid()));
}

/* Calls each worker makes at least, and at most (the trace buffer's room). */
#define UL_WORKER_CALLS	3000
#define UL_WORKER_MAX	(2 * UL_WORKER_CALLS)
/* Rounds of the neighbour after which the workers may stop. */
#define UL_ROUNDS	10

struct ul_worker {
	pthread_t th;
	long bad, calls;
	int *done, *stop;
};

static void *ul_two_loop(void *arg)
{
	struct ul_worker *w = arg;
	long i;

	for (i = 0; i < UL_WORKER_MAX; i++) {
		if (i >= UL_WORKER_CALLS && __atomic_load_n(w->stop, __ATOMIC_SEQ_CST))
			break;
		ul_two();
		w->bad += ul_redzone(i, 1) != i + 1;
		usleep(i % 64 ? 0 : 1000);
	}
	w->calls = i;
	__atomic_add_fetch(w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Four threads run two probed nops of one page while the second probe is
 * enabled and disabled in a loop (its int3 written and taken out on the
 * page the first one's is on): every call of the first is recorded,
 * exactly once (counted in the ring buffer: stock 6.1's uprobe_profile
 * count loses hits two CPUs make at once).  The workers go on until the
 * neighbour has come and gone UL_ROUNDS times, however slow the tracefs
 * writes are.
 */
TEST_F_TIMEOUT(longnop, exact_counts_while_a_neighbour_probe_comes_and_goes, 120)
{
	struct ul_worker w[4];
	int i, rounds = 0, done = 0, stop = 0;
	long bad = 0, calls = 0, off;

	/* Two lines a call at most: the neighbour's and the counted one. */
	UT_TRACE_ROOM(8 * UL_WORKER_MAX);
	UL_PROBE(0, "ul_two_a");
	UT_SYM(off, self->self_path, "ul_two_b");
	for (i = 0; i < 4; i++) {
		w[i] = (struct ul_worker){ .done = &done, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, ul_two_loop, &w[i]));
	}
	/* Enabled and disabled, not deleted: a deletion clears the buffer. */
	UT_PROBE(1, 'p', self->self_path, off, NULL, NULL);
	while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < 4) {
		UT_ENABLE(1, true);
		usleep(5000);
		UT_ENABLE(1, false);
		if (++rounds == UL_ROUNDS)
			__atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(w[i].th, NULL);
		bad += w[i].bad;
		calls += w[i].calls;
	}
	EXPECT_EQ(0, bad);
	EXPECT_LE(5, rounds) TH_LOG("the neighbour came and went only %d times", rounds);
	EXPECT_EQ(calls, UT_LINES(0, 0));
}

/* Per thread: calls of the probed nop started, and finished. */
static long ul_same_started[4], ul_same_finished[4], ul_same_bad;
static volatile int ul_same_stop;

static void *ul_same_loop(void *arg)
{
	long id = (long)arg, i = 0;

	while (!ul_same_stop) {
		__atomic_add_fetch(&ul_same_started[id], 1, __ATOMIC_SEQ_CST);
		if (ul_redzone(i, 2) != i + 2)
			__atomic_add_fetch(&ul_same_bad, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&ul_same_finished[id], 1, __ATOMIC_SEQ_CST);
		i++;
	}
	return NULL;
}

/*
 * Four threads call the probed nop while its only probe is enabled and
 * disabled in a loop (the int3 written, taken out, written again): each
 * period records no fewer hits than the calls made while it was surely
 * on, and no more than those made while it may have been; no call
 * returns a wrong sum.
 */
TEST_F_TIMEOUT(longnop, hits_bounded_while_the_probe_comes_and_goes, 120)
{
	long s0, s1, s2, s3, lo = 0, hi = 0, lines, lost;
	pthread_t th[4];
	int i, rounds;

	UT_TRACE_ROOM(200000);
	UL_PROBE(0, "ul_redzone_site");
	UT_ENABLE(0, false);
	ul_same_stop = 0;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ul_same_loop, (void *)(long)i));
	/*
	 * Sure to be hits: calls started after the enable returned and
	 * finished before the disable began; at most: any call that overlaps.
	 */
	for (rounds = 0; rounds < 20; rounds++) {
		s0 = ut_counters_sum(ul_same_finished, 4);
		UT_ENABLE(0, true);
		s1 = ut_counters_sum(ul_same_started, 4);
		usleep(10000);
		s2 = ut_counters_sum(ul_same_finished, 4);
		UT_ENABLE(0, false);
		s3 = ut_counters_sum(ul_same_started, 4);
		lo += s2 - s1 > 0 ? s2 - s1 : 0;
		hi += s3 - s0;
		usleep(2000);
	}
	ul_same_stop = 1;
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, ul_same_bad) TH_LOG("calls that returned a wrong sum");
	/*
	 * A fast machine makes more calls than a trace buffer keeps: what
	 * was overwritten counts as recorded.
	 */
	lines = UT_LINES(0, 0);
	lost = ut_trace_lost();
	ASSERT_LE(0, lost);
	TH_LOG("%ld hits recorded (%ld lines, %ld overwritten), between %ld and %ld",
	       lines + lost, lines, lost, lo, hi);
	EXPECT_LT(0, lo);
	EXPECT_LE(lo, lines + lost);
	EXPECT_GE(hi, lines + lost);
}

/* The exit status of child @pid, or 128 + the signal that killed it. */
static int ul_child_status(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * With the probe in place: a forked child, a vforked child and an exec'd
 * program each call the nop; every call is counted, none goes wrong.
 */
TEST_F_TIMEOUT(longnop, fork_vfork_and_exec_with_the_probe_in_place, 120)
{
	char *const args[] = { self->self_path, "--call", "300", NULL };
	volatile long vbad = -1;
	pid_t pid;

	UL_PROBE(0, "ul_redzone_site");
	EXPECT_EQ(0, ul_calls(100));
	pid = fork();
	if (!pid)
		_exit(ul_calls(200) ? 1 : 0);
	EXPECT_EQ(0, ul_child_status(pid));
	pid = vfork();
	if (!pid) {
		vbad = ul_calls(50);
		_exit(0);
	}
	EXPECT_EQ(0, ul_child_status(pid));
	EXPECT_EQ(0, vbad);
	pid = fork();
	if (!pid) {
		execv(args[0], args);
		_exit(99);
	}
	EXPECT_EQ(0, ul_child_status(pid));
	EXPECT_EQ(0, ul_calls(100));
	EXPECT_EQ(750, UT_HITS(0));
}

/*
 * The nop run with a stack pointer nothing is mapped at (low, and not
 * canonical): handling the hit touches no user stack, so nothing faults,
 * as without a probe, and every hit is counted.
 */
TEST_F(longnop, bogus_stack_pointer_at_the_nop_faults_nothing)
{
	static const unsigned long sps[] = {
		0x1000, 0x80, 0x8000000000000000UL, 0xdead0000beefUL,
	};
	long got = 0;
	int i, j;

	UL_PROBE(0, "ul_badsp_site");
	for (j = 0; j < 5; j++)
		for (i = 0; i < 4; i++)
			got += ul_badsp(sps[i]);
	EXPECT_EQ(20, got);
	EXPECT_EQ(20, UT_HITS(0));
}

/* The ip of every signal taken (as many as fit), checked after the loop. */
#define UL_SIG_MAX	131072
static unsigned long ul_sig_ip[UL_SIG_MAX];
static volatile long ul_sigs;

static void ul_on_alarm(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	long n = ul_sigs;

	if (n < UL_SIG_MAX)
		ul_sig_ip[n] = uc->uc_mcontext.gregs[REG_RIP];
	ul_sigs = n + 1;
}

/*
 * How many of @ips lie in a "[uprobes...]" mapping of this process now;
 * *@maps is set to the number of such mappings.
 */
static long ul_ips_in_uprobes_maps(const unsigned long *ips, long n, int *maps)
{
	unsigned long lo, hi;
	char line[512];
	long i, in = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	*maps = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[uprobes") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		(*maps)++;
		for (i = 0; i < n; i++)
			in += ips[i] >= lo && ips[i] < hi;
	}
	if (f)
		fclose(f);
	return in;
}

/*
 * A timer signal every 100 us while the nop runs in a loop: no handler
 * sees the thread in a "[uprobes...]" mapping (an out-of-line slot, a
 * trampoline) nor inside the nop's bytes (past the int3, before the
 * nop's end); results and counts are exact.  The ips are checked against
 * the mappings there are after the loop, which every one that existed
 * during it still is.
 */
TEST_F_TIMEOUT(longnop, signals_never_see_an_ip_in_a_uprobes_mapping, 120)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa = { .sa_sigaction = ul_on_alarm,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	unsigned long site = (unsigned long)ul_redzone_site;
	long i, n = 20000, kept, in_maps, in_nop = 0;
	int maps;

	UL_PROBE(0, "ul_redzone_site");
	EXPECT_EQ(0, ul_calls(10));
	ul_sigs = 0;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(0, ul_calls(n));
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	kept = ul_sigs < UL_SIG_MAX ? ul_sigs : UL_SIG_MAX;
	in_maps = ul_ips_in_uprobes_maps(ul_sig_ip, kept, &maps);
	for (i = 0; i < kept; i++)
		in_nop += ul_sig_ip[i] > site && ul_sig_ip[i] < site + 5;
	TH_LOG("%ld signals, %d [uprobes...] mappings", ul_sigs, maps);
	EXPECT_LT(0, ul_sigs);
	EXPECT_EQ(0, in_maps);
	EXPECT_EQ(0, in_nop);
	EXPECT_EQ(n + 10, UT_HITS(0));
}

/*
 * A debugger single-steps the probed nop (already hit in the process):
 * the step ends right after the nop, and the hit is counted.
 */
TEST_F(longnop, debugger_single_step_ends_after_the_nop)
{
	struct user_regs_struct r;
	unsigned long site = (unsigned long)ul_redzone_site;
	int st, steps = 0;
	pid_t pid;

	UL_PROBE(0, "ul_redzone_site");
	pid = fork();
	if (!pid) {
		ul_calls(5);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(ul_calls(1) ? 1 : 0);
	}
	self->child = pid;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st));
	/* Step until the nop, then over it. */
	for (;;) {
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &r));
		if (r.rip == site || ++steps > 100000)
			break;
		ASSERT_EQ(0, ptrace(PTRACE_SINGLESTEP, pid, 0, 0));
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
	}
	ASSERT_EQ(site, r.rip) TH_LOG("never reached the nop");
	ASSERT_EQ(0, ptrace(PTRACE_SINGLESTEP, pid, 0, 0));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFSTOPPED(st));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, pid, 0, &r));
	EXPECT_EQ(site + 5, r.rip) TH_LOG("one step from the nop ended at %#llx", r.rip);
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	EXPECT_EQ(0, ul_child_status(pid));
	self->child = 0;
	EXPECT_EQ(6, UT_HITS(0));
}

/*
 * A child under a seccomp allow-list that kills on any other syscall
 * runs the probed nop: nothing on the way from the trap back to the
 * program makes a syscall the filter would see; every hit is counted.
 */
TEST_F(longnop, seccomp_allow_list_kills_nothing)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };
	pid_t pid;

	UL_PROBE(0, "ul_redzone_site");
	EXPECT_EQ(0, ul_calls(10));
	pid = fork();
	if (!pid) {
		long bad;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(3);
		bad = ul_calls(100);
		syscall(__NR_exit_group, bad ? 1 : 0);
	}
	EXPECT_EQ(0, ul_child_status(pid));
	EXPECT_EQ(110, UT_HITS(0));
}

/*
 * A mapping whose probed nop has been hit is moved by mremap(): the code
 * at its new address runs as before (the breakpoint moved with the page
 * is still the probe's), and every call is counted.
 */
TEST_F(longnop, mremap_of_a_probed_nop_runs_at_the_new_address)
{
	const char *path = ul_code_file();
	unsigned char buf[2 * UT_PAGE];
	pid_t pid;

	ASSERT_NE(NULL, path);
	UT_PROBE(0, 'p', path, 0x100, NULL, NULL);
	UT_ENABLE(0, true);
	pid = fork();
	if (!pid) {
		unsigned char *m = ut_map_file(path, sizeof(buf), PROT_READ | PROT_EXEC);
		unsigned char *to, *moved;
		int i, bad = 0;

		if (m == MAP_FAILED)
			_exit(2);
		for (i = 0; i < 10; i++)
			bad += ((int (*)(void))(m + 0x100))() != 7;
		/* A free range of the same size: the move must happen. */
		to = mmap(NULL, sizeof(buf), PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED)
			_exit(3);
		moved = mremap(m, sizeof(buf), sizeof(buf),
			       MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (moved != to)
			_exit(4);
		for (i = 0; i < 10; i++)
			bad += ((int (*)(void))(moved + 0x100))() != 7;
		_exit(bad ? 1 : 0);
	}
	EXPECT_EQ(0, ul_child_status(pid));
	EXPECT_EQ(20, UT_HITS(0));
	unlink(path);
}

/* The traced child @pid's next stop: its signal (-1: it ended), its ip. */
static int ul_stop(pid_t pid, unsigned long long *ip)
{
	struct user_regs_struct r;
	int st;

	*ip = 0;
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		return -1;
	if (!ptrace(PTRACE_GETREGS, pid, 0, &r))
		*ip = r.rip;
	return WSTOPSIG(st);
}

/*
 * The debugger's program: stops (A) for the probe to come, calls the
 * probed function 5 times, stops (B) for the debugger's breakpoint to
 * come and go, calls it 5 times, stops (C) for the probe to go, calls it
 * 100 times.  Its exit status: 0 when every call returned right.
 */
static int ul_debuggee(void)
{
	long bad;

	if (ptrace(PTRACE_TRACEME, 0, 0, 0))
		return 2;
	raise(SIGSTOP);
	bad = ul_inc_calls(5);
	raise(SIGSTOP);
	bad += ul_inc_calls(5);
	raise(SIGSTOP);
	bad += ul_inc_calls(100);
	return bad ? 1 : 0;
}

/* The child stopped with SIGSTOP at one of its raise()s, or the case ends. */
#define UL_NEXT_STOP(pid, what) do {						\
	unsigned long long __ip;						\
	int __sig = ul_stop((pid), &__ip);					\
	ASSERT_EQ(SIGSTOP, __sig)						\
		TH_LOG("%s: the child stopped with signal %d at %#llx",	\
		       (what), __sig, __ip);					\
} while (0)

/*
 * A debugger's breakpoint on a probed 5-byte nop at a function's entry,
 * as gdb's "break *ul_inc" sets it: it reads the byte there, writes 0xcc
 * through /proc/PID/mem, and removing the breakpoint writes the byte it
 * read.  The probe comes before (@probe_first) or after the breakpoint;
 * the debugger removes its breakpoint, then the probe is removed.  After
 * that the function's bytes are the file's again, in the debugged
 * program and in this one, and both run it without a SIGTRAP or SIGILL.
 * With the probe first, the debugger read the probe's int3 and put it
 * back: the probe still fires.
 */
static void ul_debugger_and_probe(struct __test_metadata *_metadata,
				  FIXTURE_DATA(longnop) *self, bool probe_first)
{
	unsigned long site = (unsigned long)ul_inc;
	unsigned char orig[5], now[5], seen, bp = 0xcc;
	long hits = 0;
	pid_t pid;

	ASSERT_EQ(0, ul_mem(getpid(), site, orig, 5, false));
	ASSERT_EQ(0x0f, orig[0]) TH_LOG("ul_inc starts with %#x, not its nop", orig[0]);
	pid = fork();
	if (!pid)
		_exit(ul_debuggee());
	self->child = pid;
	UL_NEXT_STOP(pid, "at the start");
	if (probe_first)
		UL_PROBE(0, "ul_inc");
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	UL_NEXT_STOP(pid, "after 5 calls");
	if (probe_first) {
		hits = UT_HITS(0);
		EXPECT_EQ(5, hits);
	}
	/* break *ul_inc */
	ASSERT_EQ(0, ul_mem(pid, site, &seen, 1, false));
	ASSERT_EQ(0, ul_mem(pid, site, &bp, 1, true));
	if (!probe_first)
		UL_PROBE(0, "ul_inc");
	/* delete */
	ASSERT_EQ(0, ul_mem(pid, site, &seen, 1, true));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, pid, 0, 0));
	UL_NEXT_STOP(pid, "5 calls after the breakpoint's removal");
	if (probe_first)
		EXPECT_EQ(hits + 5, UT_HITS(0))
			TH_LOG("the probe stopped firing when the debugger put back %#x",
			       seen);
	ut_ctx_remove_events(&self->c);
	ASSERT_EQ(0, ul_mem(pid, site, now, 5, false));
	EXPECT_EQ(0, memcmp(orig, now, 5))
		TH_LOG("the debugged program's nop reads %02x %02x %02x %02x %02x",
		       now[0], now[1], now[2], now[3], now[4]);
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, pid, 0, 0));
	EXPECT_EQ(0, ul_child_status(pid)) TH_LOG("(128 + a signal: killed by it)");
	self->child = 0;
	ASSERT_EQ(0, ul_mem(getpid(), site, now, 5, false));
	EXPECT_EQ(0, memcmp(orig, now, 5)) TH_LOG("this program's nop is not back");
	EXPECT_EQ(0, ul_inc_calls(10));
}

TEST_F(longnop, debugger_breakpoint_then_probe_on_a_nop5)
{
	ul_debugger_and_probe(_metadata, self, false);
}

TEST_F(longnop, probe_then_debugger_breakpoint_on_a_nop5)
{
	ul_debugger_and_probe(_metadata, self, true);
}

/*
 * Syscall 336 is not there, with a probed long nop hit in the process or
 * not: ENOSYS, as on stock 6.1.
 */
TEST_F(longnop, syscall_336_is_not_there)
{
	long ret;

	errno = 0;
	ret = syscall(NR_NOT_THERE);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOSYS, errno);
	UL_PROBE(0, "ul_redzone_site");
	EXPECT_EQ(0, ul_calls(10));
	errno = 0;
	ret = syscall(NR_NOT_THERE, 0, 0, 0, 0, 0, 0);
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(ENOSYS, errno);
	EXPECT_EQ(0, ul_calls(10));
	EXPECT_EQ(20, UT_HITS(0));
}

int main(int argc, char **argv)
{
	/* The exec'd program of fork_vfork_and_exec_with_the_probe_in_place. */
	if (argc == 3 && !strcmp(argv[1], "--call"))
		return ul_calls(atol(argv[2])) ? 1 : 0;
	if (geteuid())
		ksft_exit_skip("uprobes tests need root\n");
	if (!ut_tracefs_dir())
		ksft_exit_skip("no uprobe_events in tracefs (CONFIG_UPROBE_EVENTS)\n");
	return test_harness_run(argc, argv);
}
