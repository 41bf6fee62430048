// SPDX-License-Identifier: GPL-2.0
/*
 * Probes on long nops: on our kernel, after its first hit in a process,
 * such a probe is a jump to a stub that enters the kernel without a trap.
 * The program must see no difference: every register, the flags and the
 * 128-byte red zone below %rsp as they were, a hit counted exactly once
 * from any thread, while the probe comes and goes, across fork, vfork and
 * exec, with a bogus stack pointer, under a storm of signals, single-stepped
 * by a debugger, under a seccomp allow-list; the file never changes.  The
 * probed code is this program's own (the uj_* functions below).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/rseq.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/user.h>
#include <ucontext.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_jump"
#define NR_UPROBE 336	/* the stubs' syscall on our kernel */

/*
 * uj_redzone(a, b): a leaf that keeps a and b in its red zone across the
 * probed nop and returns their sum.  uj_regs(buf): loads every general
 * register and the flags from buf[0..15] and buf[32], runs the probed nop
 * and stores what they hold after it in buf[16..31] and buf[33], and %rsp
 * before and after in buf[34] and buf[35].  uj_two(): two probed nops.
 * uj_badsp(sp): runs the probed nop with %rsp = sp, returns 1.
 */
asm(".pushsection .text\n"
	".globl uj_redzone, uj_redzone_site\n"
	".type uj_redzone, @function\n"
	"uj_redzone:\n"
	"	mov %rdi, -8(%rsp)\n"
	"	mov %rsi, -128(%rsp)\n"
	"uj_redzone_site:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	mov -8(%rsp), %rax\n"
	"	add -128(%rsp), %rax\n"
	"	ret\n"
	".size uj_redzone, .-uj_redzone\n"

	".globl uj_regs, uj_regs_site\n"
	".type uj_regs, @function\n"
	"uj_regs:\n"
	"	push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
	"	push %rdi\n"
	"	mov %rsp, 272(%rdi)\n"
	"	pushq 256(%rdi)\n popfq\n"
	"	mov 0(%rdi), %rax\n mov 8(%rdi), %rbx\n mov 16(%rdi), %rcx\n"
	"	mov 24(%rdi), %rdx\n mov 32(%rdi), %rsi\n mov 48(%rdi), %rbp\n"
	"	mov 64(%rdi), %r8\n mov 72(%rdi), %r9\n mov 80(%rdi), %r10\n"
	"	mov 88(%rdi), %r11\n mov 96(%rdi), %r12\n mov 104(%rdi), %r13\n"
	"	mov 112(%rdi), %r14\n mov 120(%rdi), %r15\n mov 40(%rdi), %rdi\n"
	"uj_regs_site:\n"
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
	".size uj_regs, .-uj_regs\n"

	".globl uj_two, uj_two_a, uj_two_b\n"
	".type uj_two, @function\n"
	"uj_two:\n"
	"uj_two_a:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"uj_two_b:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	ret\n"
	".size uj_two, .-uj_two\n"

	".globl uj_badsp, uj_badsp_site\n"
	".type uj_badsp, @function\n"
	"uj_badsp:\n"
	"	mov %rsp, %rax\n"
	"	mov %rdi, %rsp\n"
	"uj_badsp_site:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0(%rax,%rax) */
	"	mov %rax, %rsp\n"
	"	mov $1, %eax\n"
	"	ret\n"
	".size uj_badsp, .-uj_badsp\n"

    /*
     * uj_rseq(rseq, n): an rseq critical section running the probed nop
     * n times; 0 when it ran to its end, 2 when it was aborted, 1 when it
     * found rseq_cs cleared while still in the section (an abort lost).
     */
	".globl uj_rseq, uj_rseq_site\n"
	".type uj_rseq, @function\n"
	"uj_rseq:\n"
	"	lea uj_rseq_desc(%rip), %rax\n"
	"	mov %rax, 8(%rdi)\n"
	"uj_rseq_start:\n"
	"	mov %rsi, %rcx\n"
	"1:\n"
	"uj_rseq_site:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	dec %rcx\n"
	"	jnz 1b\n"
	"	cmpq $0, 8(%rdi)\n"
	"	je 2f\n"
	"uj_rseq_end:\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"2:	mov $1, %eax\n"
	"	ret\n"
	"	.long 0x53053053\n"		/* RSEQ_SIG */
	"uj_rseq_abort:\n"
	"	mov $2, %eax\n"
	"	ret\n"
	".size uj_rseq, .-uj_rseq\n"
	".popsection\n"
	".pushsection .data\n"
	".balign 32\n"
	"uj_rseq_desc:\n"
	"	.long 0, 0\n"
	"	.quad uj_rseq_start, uj_rseq_end - uj_rseq_start, uj_rseq_abort\n"
	".popsection\n");

long uj_redzone(long a, long b);
void uj_regs(unsigned long *buf);
void uj_two(void);
long uj_badsp(unsigned long sp);
long uj_rseq(struct rseq *rs, long n);
extern char uj_redzone_site[], uj_regs_site[], uj_two_a[], uj_two_b[];
extern char uj_badsp_site[];

/* Calls of uj_redzone() whose result is wrong. */
static long uj_calls(long n)
{
	long i, bad = 0;

	for (i = 0; i < n; i++)
		bad += uj_redzone(i, 3 * i + 1) != 4 * i + 1;
	return bad;
}

/* A code file: at 0x100, a probed 5-byte nop, then "mov $7, %eax; ret". */
static const char *uj_code_file(void)
{
	static const unsigned char fn[] = {
		0x0f, 0x1f, 0x44, 0x00, 0x00,	/* nopl 0(%rax,%rax) */
		0xb8, 0x07, 0x00, 0x00, 0x00,	/* mov $7, %eax */
		0xc3,				/* ret */
	};
	static const char *path = "/tmp/uprobe_jump_code";
	unsigned char buf[2 * UT_PAGE];

	memset(buf, 0x90, sizeof(buf));
	memcpy(buf + 0x100, fn, sizeof(fn));
	return ut_new_file(path, buf, sizeof(buf)) ? NULL : path;
}

FIXTURE(jump) {
	struct ut_ctx c;
	char self_path[PATH_MAX];
};

FIXTURE_SETUP(jump)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->self_path, sizeof(self->self_path) - 1);
	ASSERT_LT(0, n);
	self->self_path[n] = 0;
}

FIXTURE_TEARDOWN(jump)
{
	ut_ctx_cleanup(&self->c);
}

/* Probe this program's symbol @sym as event @i, enabled. */
#define UJ_PROBE(i, sym) do {							\
	long __off;								\
	UT_SYM(__off, self->self_path, (sym));					\
	UT_PROBE((i), 'p', self->self_path, __off, NULL, NULL);			\
	UT_ENABLE((i), true);							\
} while (0)

/* The first bytes of this program's code at @p, as the process sees them. */
static int uj_peek(const void *p, unsigned char *buf, size_t n)
{
	int fd = open("/proc/self/mem", O_RDONLY);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = pread(fd, buf, n, (long)p);
	close(fd);
	return got == (ssize_t)n ? 0 : -EIO;
}

/* Is @addr in a mapping named @name in /proc/self/maps? */
static bool uj_in_mapping(unsigned long addr, const char *name)
{
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !in && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo &&
		    addr < hi && strstr(line, name))
			in = true;
	}
	if (f)
		fclose(f);
	return in;
}

/* Every register and the flags, set from @seed, kept across the probed nop. */
static int uj_regs_check(struct __test_metadata *_metadata, unsigned long seed)
{
	/* CF PF AF ZF SF DF OF, and bit 1 */
	const unsigned long flags = 0xcd7;
	unsigned long buf[36] = { 0 };
	int i, bad = 0;

	for (i = 0; i < 16; i++)
		buf[i] = seed * 0x9e3779b97f4a7c15UL + i * 0x0101010101010101UL;
	buf[32] = seed & 1 ? flags : 0x2;
	uj_regs(buf);
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
 * Registers, flags and the red zone are what they were across the probed
 * nop, at its first hit (a trap) and at every later one (the jump).
 */
TEST_F(jump, registers_flags_and_red_zone_kept)
{
	long i, bad = 0, n = 2000;

	UJ_PROBE(0, "uj_redzone_site");
	UJ_PROBE(1, "uj_regs_site");
	for (i = 0; i < n; i++) {
		bad += uj_redzone(i, -i * 7) != -6 * i;
		bad += uj_regs_check(_metadata, i) != 0;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(n, UT_HITS(0));
	EXPECT_EQ(n, UT_HITS(1));
}

/*
 * Ours only: the hit nop is a jump to a stub within 2 GiB, in a mapping
 * of its own; the file keeps its bytes; when the probe goes the nop is
 * back, byte for byte.
 */
TEST_F(jump, probed_long_nop_becomes_a_jump_and_comes_back)
{
	unsigned char before[6], now[6];
	uint64_t hash = ut_file_hash(self->self_path);
	unsigned long stub;
	int32_t rel;

	ASSERT_EQ(0, uj_peek(uj_redzone_site, before, 5));
	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	ASSERT_EQ(0, uj_peek(uj_redzone_site, now, 5));
	ASSERT_EQ(0xe9, now[0]) TH_LOG("the nop's first byte after 10 hits: %#x", now[0]);
	memcpy(&rel, now + 1, 4);
	stub = (unsigned long)uj_redzone_site + 5 + rel;
	EXPECT_TRUE(uj_in_mapping(stub, "[uprobes-jump]"))
		TH_LOG("the jump goes to %#lx", stub);
	EXPECT_EQ(10, UT_HITS(0));
	EXPECT_EQ(hash, ut_file_hash(self->self_path));
	ut_ctx_remove_events(&self->c);
	ASSERT_EQ(0, uj_peek(uj_redzone_site, now, 5));
	EXPECT_EQ(0, memcmp(before, now, 5)) TH_LOG("the nop is not back");
	EXPECT_EQ(0, uj_calls(10));
}

/* Calls each worker makes at least, and at most (the trace buffer's room). */
#define UJ_WORKER_CALLS	3000
#define UJ_WORKER_MAX	(2 * UJ_WORKER_CALLS)
/* Rounds of the neighbour after which the workers may stop. */
#define UJ_ROUNDS	10

struct uj_worker {
	pthread_t th;
	long bad, calls;
	int *done, *stop;
};

static void *uj_two_loop(void *arg)
{
	struct uj_worker *w = arg;
	long i;

	for (i = 0; i < UJ_WORKER_MAX; i++) {
		if (i >= UJ_WORKER_CALLS && __atomic_load_n(w->stop, __ATOMIC_SEQ_CST))
			break;
		uj_two();
		w->bad += uj_redzone(i, 1) != i + 1;
		usleep(i % 64 ? 0 : 1000);
	}
	w->calls = i;
	__atomic_add_fetch(w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Four threads run two probed nops of one page while the second probe is
 * added and removed in a loop (its jump written and taken out): every
 * call of the first is recorded, exactly once (counted in the ring
 * buffer: stock 6.1's uprobe_profile count loses hits two CPUs make at
 * once).  The workers go on until the neighbour has come and gone
 * UJ_ROUNDS times, however slow the tracefs writes are.
 */
TEST_F_TIMEOUT(jump, exact_counts_while_a_neighbour_probe_comes_and_goes, 120)
{
	struct uj_worker w[4];
	int i, rounds = 0, done = 0, stop = 0;
	long bad = 0, calls = 0, off;

	/* Two lines a call at most: the neighbour's and the counted one. */
	UT_TRACE_ROOM(8 * UJ_WORKER_MAX);
	UJ_PROBE(0, "uj_two_a");
	UT_SYM(off, self->self_path, "uj_two_b");
	for (i = 0; i < 4; i++) {
		w[i] = (struct uj_worker){ .done = &done, .stop = &stop };
		ASSERT_EQ(0, pthread_create(&w[i].th, NULL, uj_two_loop, &w[i]));
	}
	/* Enabled and disabled, not deleted: a deletion clears the buffer. */
	UT_PROBE(1, 'p', self->self_path, off, NULL, NULL);
	while (__atomic_load_n(&done, __ATOMIC_SEQ_CST) < 4) {
		UT_ENABLE(1, true);
		usleep(5000);
		UT_ENABLE(1, false);
		if (++rounds == UJ_ROUNDS)
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
static long uj_same_started[4], uj_same_finished[4], uj_same_bad;
static volatile int uj_same_stop;

static void *uj_same_loop(void *arg)
{
	long id = (long)arg, i = 0;

	while (!uj_same_stop) {
		__atomic_add_fetch(&uj_same_started[id], 1, __ATOMIC_SEQ_CST);
		if (uj_redzone(i, 2) != i + 2)
			__atomic_add_fetch(&uj_same_bad, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&uj_same_finished[id], 1, __ATOMIC_SEQ_CST);
		i++;
	}
	return NULL;
}

/*
 * Four threads call the probed nop while its only probe is enabled and
 * disabled in a loop (the jump written, taken out, written again): each
 * period records no fewer hits than the calls made while it was surely
 * on, and no more than those made while it may have been.
 */
TEST_F_TIMEOUT(jump, hits_bounded_while_the_probe_comes_and_goes, 120)
{
	long s0, s1, s2, s3, lo = 0, hi = 0, lines, lost;
	pthread_t th[4];
	int i, rounds;

	UT_TRACE_ROOM(200000);
	UJ_PROBE(0, "uj_redzone_site");
	UT_ENABLE(0, false);
	uj_same_stop = 0;
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, uj_same_loop, (void *)(long)i));
	/*
	 * Sure to be hits: calls started after the enable returned and
	 * finished before the disable began; at most: any call that overlaps.
	 */
	for (rounds = 0; rounds < 20; rounds++) {
		s0 = ut_counters_sum(uj_same_finished, 4);
		UT_ENABLE(0, true);
		s1 = ut_counters_sum(uj_same_started, 4);
		usleep(10000);
		s2 = ut_counters_sum(uj_same_finished, 4);
		UT_ENABLE(0, false);
		s3 = ut_counters_sum(uj_same_started, 4);
		lo += s2 - s1 > 0 ? s2 - s1 : 0;
		hi += s3 - s0;
		usleep(2000);
	}
	uj_same_stop = 1;
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, uj_same_bad) TH_LOG("calls that returned a wrong sum");
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

/*
 * An entry and a return probe on a function whose first instruction is
 * a probed nop: the return goes where it should, every time.
 */
TEST_F(jump, return_probe_through_a_jumped_nop)
{
	long off, i;

	UT_SYM(off, self->self_path, "uj_two_a");
	UT_PROBE(0, 'p', self->self_path, off, NULL, NULL);
	UT_PROBE(1, 'r', self->self_path, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_TRACE_ROOM(400);
	for (i = 0; i < 100; i++)
		uj_two();
	EXPECT_EQ(100, UT_HITS(0));
	EXPECT_EQ(100, UT_LINES(1, getpid()));
}

/*
 * The stubs' syscall made by a program: nothing happens (ENXIO on our
 * kernel, ENOSYS on one without it), with a jump in place or not.
 */
TEST_F(jump, direct_uprobe_syscall_does_nothing)
{
	long ret;

	errno = 0;
	ret = syscall(NR_UPROBE);
	EXPECT_EQ(-1, ret);
	EXPECT_TRUE(errno == ENXIO || errno == ENOSYS) TH_LOG("errno %d", errno);
	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	errno = 0;
	ret = syscall(NR_UPROBE);
	EXPECT_EQ(-1, ret);
	EXPECT_TRUE(errno == ENXIO || errno == ENOSYS) TH_LOG("errno %d", errno);
	EXPECT_EQ(0, uj_calls(10));
	EXPECT_EQ(20, UT_HITS(0));
}

/* A child that calls the probed nop @n times; its exit status says all went right. */
static int uj_child_status(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * With the jump in place: a forked child, a vforked child and an exec'd
 * program each call the nop; every call is counted, none goes wrong.
 */
TEST_F_TIMEOUT(jump, fork_vfork_and_exec_with_the_jump_in_place, 120)
{
	char *const args[] = { self->self_path, "--call", "300", NULL };
	volatile long vbad = -1;
	pid_t pid;

	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(100));
	pid = fork();
	if (!pid)
		_exit(uj_calls(200) ? 1 : 0);
	EXPECT_EQ(0, uj_child_status(pid));
	pid = vfork();
	if (!pid) {
		vbad = uj_calls(50);
		_exit(0);
	}
	EXPECT_EQ(0, uj_child_status(pid));
	EXPECT_EQ(0, vbad);
	pid = fork();
	if (!pid) {
		execv(args[0], args);
		_exit(99);
	}
	EXPECT_EQ(0, uj_child_status(pid));
	EXPECT_EQ(0, uj_calls(100));
	EXPECT_EQ(750, UT_HITS(0));
}

/*
 * The nop run with a stack pointer nothing is mapped at (low, and not
 * canonical): no fault, as without a probe, and every hit counted.
 */
TEST_F(jump, bogus_stack_pointer_at_the_nop_faults_nothing)
{
	static const unsigned long sps[] = {
		0x1000, 0x80, 0x8000000000000000UL, 0xdead0000beefUL,
	};
	long got = 0;
	int i, j;

	UJ_PROBE(0, "uj_badsp_site");
	for (j = 0; j < 5; j++)
		for (i = 0; i < 4; i++)
			got += uj_badsp(sps[i]);
	EXPECT_EQ(20, got);
	EXPECT_EQ(20, UT_HITS(0));
}

static volatile long uj_sigs, uj_sigs_in_stub;
static unsigned long uj_stub_lo[8], uj_stub_hi[8];

/* The ranges of the "[uprobes...]" mappings now, for a signal handler. */
static void uj_stub_ranges(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	memset(uj_stub_lo, 0, sizeof(uj_stub_lo));
	memset(uj_stub_hi, 0, sizeof(uj_stub_hi));
	while (f && n < 8 && fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes") &&
		    sscanf(line, "%lx-%lx", &uj_stub_lo[n], &uj_stub_hi[n]) == 2)
			n++;
	if (f)
		fclose(f);
}

static void uj_on_alarm(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	unsigned long ip = uc->uc_mcontext.gregs[REG_RIP];
	int i;

	uj_sigs++;
	for (i = 0; i < 8; i++)
		if (ip >= uj_stub_lo[i] && ip < uj_stub_hi[i])
			uj_sigs_in_stub++;
}

/*
 * A timer signal every 100 us while the nop runs in a loop: no handler
 * sees the thread in a stub, results and counts are exact.
 */
TEST_F_TIMEOUT(jump, signals_never_see_a_stub, 120)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa = { .sa_sigaction = uj_on_alarm,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	long n = 20000;

	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	uj_stub_ranges();
	uj_sigs = 0;
	uj_sigs_in_stub = 0;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(0, uj_calls(n));
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	EXPECT_LT(0, uj_sigs);
	EXPECT_EQ(0, uj_sigs_in_stub);
	EXPECT_EQ(n + 10, UT_HITS(0));
}

/*
 * A debugger single-steps the probed nop (jumped by earlier hits): the
 * step ends right after the nop, and the hit is counted.
 */
TEST_F(jump, debugger_single_step_ends_after_the_nop)
{
	struct user_regs_struct r;
	unsigned long site = (unsigned long)uj_redzone_site;
	int st, steps = 0;
	pid_t pid;

	UJ_PROBE(0, "uj_redzone_site");
	pid = fork();
	if (!pid) {
		uj_calls(5);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		_exit(uj_calls(1) ? 1 : 0);
	}
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
	EXPECT_EQ(0, uj_child_status(pid));
	EXPECT_EQ(6, UT_HITS(0));
}

/*
 * A child under a seccomp allow-list that kills on any other syscall
 * runs the jumped nop: it is not killed, every hit counted.
 */
TEST_F(jump, seccomp_allow_list_kills_nothing)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };
	pid_t pid;

	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	pid = fork();
	if (!pid) {
		long bad;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(3);
		bad = uj_calls(100);
		syscall(__NR_exit_group, bad ? 1 : 0);
	}
	EXPECT_EQ(0, uj_child_status(pid));
	EXPECT_EQ(110, UT_HITS(0));
}

/*
 * A mapping whose probed nop was jumped is moved by mremap(): the code at
 * its new address runs as before, and every call is counted.
 */
TEST_F(jump, mremap_of_a_jumped_nop_runs_at_the_new_address)
{
	const char *path = uj_code_file();
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
		/* Far from the stub: a moved jump would land on nothing. */
		to = mmap(m + (8UL << 30), sizeof(buf), PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
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
	EXPECT_EQ(0, uj_child_status(pid));
	EXPECT_EQ(20, UT_HITS(0));
	unlink(path);
}

/*
 * Ours only: a debugger's breakpoint over the first byte of a jump stays
 * when the probe goes, the jump's tail behind it; when the debugger puts
 * back the byte it saved, the code runs as before.
 */
TEST_F(jump, debugger_breakpoint_over_a_jump_survives_the_probe)
{
	unsigned char jmp[5], now[5], bp = 0xcc;
	int fd;

	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	ASSERT_EQ(0, uj_peek(uj_redzone_site, jmp, 5));
	ASSERT_EQ(0xe9, jmp[0]);
	fd = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, pwrite(fd, &bp, 1, (long)uj_redzone_site));
	ut_ctx_remove_events(&self->c);
	ASSERT_EQ(0, uj_peek(uj_redzone_site, now, 5));
	EXPECT_EQ(0xcc, now[0]) TH_LOG("the debugger's breakpoint is gone");
	EXPECT_EQ(0, memcmp(jmp + 1, now + 1, 4)) TH_LOG("the bytes behind it changed");
	ASSERT_EQ(1, pwrite(fd, jmp, 1, (long)uj_redzone_site));
	close(fd);
	EXPECT_EQ(0, uj_calls(10));
}

/*
 * A probed nop in a mapping the program made writable keeps its
 * breakpoint: no jump is written where the program itself may store.
 */
TEST_F(jump, no_jump_in_a_mapping_made_writable)
{
	const char *path = uj_code_file();
	unsigned char *m;
	int i, bad = 0;

	ASSERT_NE(NULL, path);
	UT_PROBE(0, 'p', path, 0x100, NULL, NULL);
	UT_ENABLE(0, true);
	m = ut_map_file(path, 2 * UT_PAGE, PROT_READ | PROT_EXEC);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, mprotect(m, 2 * UT_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC));
	for (i = 0; i < 5; i++)
		bad += ((int (*)(void))(m + 0x100))() != 7;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0xcc, m[0x100]) TH_LOG("byte %#x at the probed nop", m[0x100]);
	EXPECT_EQ(5, UT_HITS(0));
	munmap(m, 2 * UT_PAGE);
}

static sigjmp_buf uj_ill_jmp;
static volatile unsigned long uj_ill_rip;

static void uj_on_ill(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;

	uj_ill_rip = uc->uc_mcontext.gregs[REG_RIP];
	siglongjmp(uj_ill_jmp, 1);
}

/*
 * Ours only: a program that unmaps a stub page and maps code of its own
 * there gets that code's faults as its own: a ud2 at a stub's push
 * raises SIGILL right there.
 */
TEST_F(jump, own_code_at_a_former_stub_address_faults_as_its_own)
{
	struct sigaction sa = { .sa_sigaction = uj_on_ill, .sa_flags = SA_SIGINFO };
	unsigned char jmp[5], *page, *p;
	unsigned long stub;
	int32_t rel;
	int i;

	UJ_PROBE(0, "uj_redzone_site");
	EXPECT_EQ(0, uj_calls(10));
	ASSERT_EQ(0, uj_peek(uj_redzone_site, jmp, 5));
	ASSERT_EQ(0xe9, jmp[0]);
	memcpy(&rel, jmp + 1, 4);
	stub = (unsigned long)uj_redzone_site + 5 + rel;
	page = (unsigned char *)(stub & ~(UT_PAGE - 1UL));
	p = mmap(page, UT_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(page, p);
	for (i = 0; i < UT_PAGE; i += 2) {
		p[i] = 0x0f;		/* ud2 */
		p[i + 1] = 0x0b;
	}
	ASSERT_EQ(0, sigaction(SIGILL, &sa, NULL));
	uj_ill_rip = 0;
	if (!sigsetjmp(uj_ill_jmp, 1))
		((void (*)(void))(stub + 6))();
	signal(SIGILL, SIG_DFL);
	EXPECT_EQ(stub + 6, uj_ill_rip) TH_LOG("SIGILL at %#lx", uj_ill_rip);
	/* The probe's removal takes its jump out: the nop runs again. */
	ut_ctx_remove_events(&self->c);
	EXPECT_EQ(0, uj_calls(10));
}

static void *uj_membarrier_loop(void *arg)
{
	volatile int *stop = arg;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(1, &one);
	sched_setaffinity(0, sizeof(one), &one);
	while (!*stop)
		syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
	return NULL;
}

/*
 * An rseq critical section around the probed nop, interrupted again and
 * again by rseq IPIs from another CPU: every interruption in the section
 * aborts it, as without the probe, even one that finds the thread in the
 * stub a jump leads to.
 */
TEST_F_TIMEOUT(jump, rseq_section_aborts_when_interrupted_in_a_stub, 120)
{
	struct rseq *rs = (void *)((char *)__builtin_thread_pointer() + __rseq_offset);
	long res[3] = { 0 }, r, t0 = time(NULL);
	volatile int stop = 0;
	pthread_t th;
	cpu_set_t one;

	if (!__rseq_size)
		SKIP(return, "glibc did not register rseq (a kernel without CONFIG_RSEQ?)");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, syscall(__NR_membarrier,
			     MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0));
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	UJ_PROBE(0, "uj_rseq_site");
	ASSERT_EQ(0, pthread_create(&th, NULL, uj_membarrier_loop, (void *)&stop));
	while (time(NULL) - t0 < 5) {
		r = uj_rseq(rs, 100);
		if (r >= 0 && r <= 2)
			res[r]++;
	}
	stop = 1;
	pthread_join(th, NULL);
	TH_LOG("sections: %ld ran through, %ld aborted, %ld lost their abort",
	       res[0], res[2], res[1]);
	EXPECT_LT(0, res[2]) TH_LOG("no section was ever interrupted");
	EXPECT_EQ(0, res[1]);
}

int main(int argc, char **argv)
{
	/* The exec'd program of fork_vfork_and_exec_with_the_jump_in_place. */
	if (argc == 3 && !strcmp(argv[1], "--call"))
		return uj_calls(atol(argv[2])) ? 1 : 0;
	if (geteuid())
		ksft_exit_skip("uprobes tests need root\n");
	if (!ut_tracefs_dir())
		ksft_exit_skip("no uprobe_events in tracefs (CONFIG_UPROBE_EVENTS)\n");
	return test_harness_run(argc, argv);
}
