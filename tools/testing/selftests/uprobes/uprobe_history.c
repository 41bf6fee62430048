// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream's uprobes bug history, one case per bug, named for the
 * behaviour that the bug broke.  The trigger of each is what upstream's
 * report describes; stock 6.1 has the fixes unless harness/data/stock-xfail
 * says otherwise.  A case whose comment starts "Beyond upstream" tests
 * what our fix of such a bug does that upstream's does not.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stddef.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_hist"
#define NOINLINE __attribute__((noinline, noclone, used))

/* The probed functions of this program's own, run by its children. */
NOINLINE long hist_leaf(long a)
{
	asm volatile("" ::: "memory");
	return a + 1;
}

/* Returns 7 once a byte comes through @fd, -1 if none. */
NOINLINE long hist_wait(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		return -1;
	return 7;
}

NOINLINE long hist_strings(const char *s)
{
	asm volatile("" ::: "memory");
	return strlen(s);
}

/* The two places of a multi-probe event. */
NOINLINE long hist_multi_a(long a)
{
	asm volatile("" ::: "memory");
	return a + 2;
}

NOINLINE long hist_multi_b(long a)
{
	asm volatile("" ::: "memory");
	return a + 3;
}

FIXTURE(hist) {
	struct ut_ctx c;
	char exe[PATH_MAX];
	pid_t child;
};

FIXTURE_SETUP(hist)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);
	ASSERT_LT(0, n);
	self->exe[n] = '\0';
}

FIXTURE_TEARDOWN(hist)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	ut_ctx_cleanup(&self->c);
}

/* Fork a child that runs @fn(@arg) and exits with what it returns. */
static pid_t run_child(int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

/* The exit status of @pid, or 0x100 + the signal that ended it. */
static int child_status(pid_t *pid)
{
	int st;

	if (waitpid(*pid, &st, 0) != *pid)
		return -1;
	*pid = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 0x100 + WTERMSIG(st);
}

/* A page shared with the children a case forks, zeroed. */
static void *shared_mem(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A return probe on hist_leaf(); then @fn(@arg) in a child: *@st. */
static void leaf_return_child(struct __test_metadata *_metadata,
			      FIXTURE_DATA(hist) *self, int (*fn)(void *),
			      void *arg, int *st)
{
	long off;

	UT_SYM(off, self->exe, "hist_leaf");
	UT_PROBE(0, 'r', self->exe, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	self->child = run_child(fn, arg);
	ASSERT_LT(0, self->child);
	*st = child_status(&self->child);
}

/* The "[uprobes]" mapping of this process: 0, or -ENOENT. */
static int find_xol(unsigned long *start, unsigned long *end)
{
	char *all = ut_slurp("/proc/self/maps", NULL), *line, *save = NULL;
	int ret = -ENOENT;

	if (!all)
		return -errno;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "[uprobes]") &&
		    sscanf(line, "%lx-%lx", start, end) == 2) {
			ret = 0;
			break;
		}
	}
	free(all);
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A sysctl's value as a string, and writing one back. */
static int sysctl_get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

static int sysctl_set(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

#define CC_PAGES	16
#define CC_MAX_CPUS	64

struct sampler {
	int fd[CC_MAX_CPUS];
	void *ring[CC_MAX_CPUS];
	int ncpu;
	long samples;
	long lost;
};

/* Count and consume what a ring holds: samples and lost-sample reports. */
static void sampler_drain(struct sampler *s, int i)
{
	struct perf_event_mmap_page *pg = s->ring[i];
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char *data = (unsigned char *)s->ring[i] + psz;
	unsigned long long mask = CC_PAGES * psz - 1;
	unsigned long long head, pos = pg->data_tail;

	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	while (pos < head) {
		struct perf_event_header h;
		unsigned long long lost;

		memcpy(&h, data + (pos & mask), sizeof(h));
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			s->samples++;
		} else if (h.type == PERF_RECORD_LOST) {
			/* id, then the count; never across the wrap (u64s) */
			memcpy(&lost, data + ((pos + sizeof(h) + 8) & mask),
			       sizeof(lost));
			s->lost += lost;
		}
		pos += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

/*
 * A cpu-clock sampler on every CPU with user and kernel callchains, every
 * @period_ns, as "perf record -a -g" opens it.  0 or -errno.
 */
static int sampler_open(struct sampler *s, unsigned long period_ns)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	int i;

	memset(s, 0, sizeof(*s));
	s->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (s->ncpu > CC_MAX_CPUS)
		s->ncpu = CC_MAX_CPUS;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = period_ns;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_CALLCHAIN;
	attr.disabled = 1;
	for (i = 0; i < s->ncpu; i++) {
		s->fd[i] = syscall(__NR_perf_event_open, &attr, -1, i, -1,
				   PERF_FLAG_FD_CLOEXEC);
		if (s->fd[i] < 0)
			return -errno;
		s->ring[i] = mmap(NULL, (CC_PAGES + 1) * psz,
				  PROT_READ | PROT_WRITE, MAP_SHARED,
				  s->fd[i], 0);
		if (s->ring[i] == MAP_FAILED) {
			s->ring[i] = NULL;
			return -errno;
		}
	}
	for (i = 0; i < s->ncpu; i++)
		ioctl(s->fd[i], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

static void sampler_close(struct sampler *s)
{
	long psz = sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < s->ncpu; i++) {
		if (s->ring[i]) {
			sampler_drain(s, i);
			munmap(s->ring[i], (CC_PAGES + 1) * psz);
		}
		if (s->fd[i] > 0)
			close(s->fd[i]);
	}
	s->ncpu = 0;
}

#define PERF_PCT "/proc/sys/kernel/perf_cpu_time_max_percent"
#define EXIT_SECONDS	20
#define EXIT_MAX	20000

struct exits {
	volatile long threads;
	volatile long bad;
};

static void *exiting_thread(void *arg)
{
	return (void *)hist_leaf((long)arg);
}

/* Threads one after another, each hitting both probes once, then exiting. */
static int exits_child(void *arg)
{
	struct exits *e = arg;
	double end = now() + EXIT_SECONDS;
	pthread_t t;
	void *r;

	while (now() < end && e->threads < EXIT_MAX) {
		if (pthread_create(&t, NULL, exiting_thread, (void *)e->threads))
			return 2;
		if (pthread_join(t, &r) || (long)r != e->threads + 1)
			e->bad++;
		e->threads++;
	}
	return 0;
}

/*
 * "uprobes: Fix race in uprobe_free_utask" (2025): a thread's uprobes
 * state was freed before current->utask was cleared, and a sample taken
 * in that window unwound the user stack through it (x86's
 * is_uprobe_at_func_entry()).  The trigger: "perf record -a -g" at a
 * high rate while threads that hit an entry and a return probe exit.  A
 * freed read is silent unless the slab is checked: the harness boots
 * with slub_debug=FZP on the small kmalloc caches, where the pointer read
 * is 0x6b6b... and the unwind oopses; the debug kernel's KASAN reports
 * it.  Here: no crash, every thread computes its result, both probes see
 * every thread, and samples were taken throughout.
 */
TEST_F_TIMEOUT(hist, perf_callchains_sampled_while_probed_threads_exit, 180)
{
	char pct[32] = "";
	struct sampler s;
	struct exits *e;
	long off, hits, rets;
	double t0;
	int err, st;

	e = shared_mem(sizeof(*e));
	ASSERT_NE(NULL, e);
	UT_SYM(off, self->exe, "hist_leaf");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_PROBE(1, 'r', self->exe, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_TRACE_ROOM(2 * EXIT_MAX);

	/* Perf must not lower the rate when the emulated CPU is slow. */
	if (!sysctl_get(PERF_PCT, pct, sizeof(pct)))
		sysctl_set(PERF_PCT, "0");
	err = sampler_open(&s, 20000);
	if (err) {
		sampler_close(&s);
		if (pct[0])
			sysctl_set(PERF_PCT, pct);
		ASSERT_EQ(0, err) TH_LOG("cpu-clock sampler: %s", strerror(-err));
	}
	t0 = now();
	self->child = run_child(exits_child, e);
	while (self->child > 0 && waitpid(self->child, &st, WNOHANG) == 0) {
		int i;

		for (i = 0; i < s.ncpu; i++)
			sampler_drain(&s, i);
		usleep(20000);
	}
	self->child = 0;
	sampler_close(&s);
	if (pct[0])
		sysctl_set(PERF_PCT, pct);
	TH_LOG("%ld threads in %.1f s, %ld samples, %ld lost", e->threads,
	       now() - t0, s.samples, s.lost);

	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child status %#x", st);
	EXPECT_EQ(0, e->bad) TH_LOG("%ld threads computed wrong", e->bad);
	ASSERT_LT(200, e->threads) TH_LOG("only %ld threads ran", e->threads);
	/* At least one sample every 10 ms of the run, on average. */
	EXPECT_LT((long)((now() - t0) * 100), s.samples + s.lost);
	/* One thread at a time hits them: uprobe_profile is exact. */
	hits = UT_HITS(0);
	rets = UT_LINES(1, 0);
	EXPECT_EQ(e->threads, hits);
	EXPECT_EQ(e->threads, rets);
	munmap(e, sizeof(*e));
}

/* What a child saw of its [uprobes] area, for the parent. */
struct xol_scan {
	int found;
	long result;
	long nonzero;		/* bytes past USED_BYTES that are not 0 */
	long first_at;		/* offset of the first of them, or -1 */
	int pages, faulted;
};

static sigjmp_buf scan_jmp;

static void scan_fault(int sig)
{
	siglongjmp(scan_jmp, 1);
}

/*
 * The trampolines and the one copy a hit may have stepped (stock 6.1
 * steps an endbr64) fit in the first 256 bytes of either kernel's area.
 */
#define USED_BYTES	256

static int xol_scan_child(void *arg)
{
	struct xol_scan *x = arg;
	unsigned long start, end, i;
	volatile int page;
	long psz = getpagesize();

	x->first_at = -1;
	x->result = hist_leaf(41);
	x->found = find_xol(&start, &end);
	if (x->found)
		return 0;
	signal(SIGSEGV, scan_fault);
	signal(SIGBUS, scan_fault);
	x->pages = (end - start) / psz;
	for (page = 0; page < x->pages; page++) {
		const volatile unsigned char *p =
			(const unsigned char *)(start + page * psz);

		if (sigsetjmp(scan_jmp, 1)) {
			x->faulted++;
			continue;
		}
		for (i = page ? 0 : USED_BYTES; i < psz; i++) {
			if (!p[i])
				continue;
			if (x->first_at < 0)
				x->first_at = page * psz + i;
			x->nonzero++;
		}
	}
	return 0;
}

/*
 * CVE-2024-49975, "uprobes: fix kernel info leak via [uprobes] vma": the
 * area's page was mapped without being cleared, and x86 lets a program
 * read what it may execute.  A process whose only hit is a return probe
 * has an area with nothing but its trampolines: every byte it can read
 * past them and the slot its one hit may have used is 0.
 */
TEST_F(hist, xol_area_reads_zero_where_nothing_was_written)
{
	struct xol_scan *x = shared_mem(sizeof(*x));
	int st = -1;

	ASSERT_NE(NULL, x);
	leaf_return_child(_metadata, self, xol_scan_child, x, &st);
	ASSERT_EQ(0, st) TH_LOG("child status %#x", st);
	EXPECT_EQ(42, x->result);
	EXPECT_EQ(1, UT_LINES(0, 0));
	ASSERT_EQ(0, x->found) TH_LOG("no [uprobes] area after a return probe");
	EXPECT_LT(x->faulted, x->pages) TH_LOG("no page of the area could be read");
	EXPECT_EQ(0, x->nonzero)
		TH_LOG("%ld bytes not 0 past the first %d, the first at +%#lx",
		       x->nonzero, USED_BYTES, x->first_at);
	munmap(x, sizeof(*x));
}

/* Call the code at @fn with %rax = @nr; it ends in a ret. */
static long call_with_rax(void *fn, long nr)
{
	long ret;

	/* Below the red zone: this function may keep locals there. */
	asm volatile("sub $128, %%rsp\n\t"
		     "call *%[fn]\n\t"
		     "add $128, %%rsp"
		     : "=a"(ret)
		     : "a"(nr), [fn] "r"(fn)
		     : "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		       "memory", "cc");
	return ret;
}

#define NR_URETPROBE	335
#define FAKE_SPAN	512

/* Syscall 335 refused with EPERM; everything else allowed. */
static int deny_335(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_URETPROBE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
}

/*
 * hist_xor(a): xor %eax,%eax; add %rdi,%rax; ret: a + 0.  Its first
 * instruction needs no repair: our kernel runs its copy from the thread's
 * own slot of [uprobes], without a step.
 */
long hist_xor(long a);
asm(".pushsection .text\n"
	".globl hist_xor\n"
	".type hist_xor, @function\n"
	"hist_xor:\n"
	"	xor %eax, %eax\n"
	"	add %rdi, %rax\n"
	"	ret\n"
	".size hist_xor, .-hist_xor\n"
	".popsection\n");

/* A hit, the area unmapped, more hits: 0, or how the program died. */
static int unmapped_xol_child(void *arg)
{
	unsigned long start, end;
	long i;

	if (hist_xor(5) != 5 || find_xol(&start, &end))
		return 1;
	if (munmap((void *)start, end - start))
		return 2;
	for (i = 0; i < 10; i++)
		if (hist_xor(i) != i)
			return 3;
	return 0;
}

/*
 * Nothing is sent into a [uprobes] area the program unmapped: a thread
 * that ran a probed instruction from its slot there runs it right at its
 * next hits (our kernel takes the probe out of that process then).
 */
TEST_F(hist, probed_program_runs_on_after_unmapping_its_xol_area)
{
	long off;
	int st;

	UT_SYM(off, self->exe, "hist_xor");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	self->child = run_child(unmapped_xol_child, NULL);
	ASSERT_LT(0, self->child);
	st = child_status(&self->child);
	EXPECT_EQ(0, st) TH_LOG("child status %#x (1: first hit, 2: munmap, 3: a result)", st);
	/* The first hit, and the one that found the area gone. */
	EXPECT_EQ(2, UT_HITS(0));
}

/* Exit codes of the child below. */
enum { FAKE_OK, FAKE_NO_AREA, FAKE_REMAP, FAKE_SECCOMP, FAKE_NOT_EPERM };

static int fake_tramp_child(void *arg)
{
	unsigned long start, end;
	unsigned char *page;
	long off, r;

	if (hist_leaf(1) != 2 || find_xol(&start, &end))
		return FAKE_NO_AREA;
	if (munmap((void *)start, end - start))
		return FAKE_REMAP;
	page = mmap((void *)start, getpagesize(),
		    PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != (void *)start)
		return FAKE_REMAP;
	if (deny_335())
		return FAKE_SECCOMP;
	memset(page, 0xcc, getpagesize());
	for (off = 0; off < FAKE_SPAN; off++) {
		/* syscall; ret */
		page[off] = 0x0f;
		page[off + 1] = 0x05;
		page[off + 2] = 0xc3;
		r = call_with_rax(page + off, NR_URETPROBE);
		memset(page + off, 0xcc, 3);
		if (r != -EPERM) {
			*(long *)arg = off;
			return FAKE_NOT_EPERM;
		}
	}
	return FAKE_OK;
}

/*
 * "uprobes/x86: Harden uretprobe syscall trampoline check" (fa6192adc32f,
 * Jann Horn's report): the return syscall is the trampoline's only.  A
 * program that unmapped its [uprobes] area and mapped a page of its own
 * at the same address, then makes syscall 335 from anywhere on it, gets
 * what its seccomp filter says (here EPERM), never what the trampoline
 * would.
 */
TEST_F(hist, return_syscall_from_a_page_mapped_over_the_area_is_filtered)
{
	long *bad_off = shared_mem(sizeof(*bad_off));
	int st = -1;

	ASSERT_NE(NULL, bad_off);
	*bad_off = -1;
	leaf_return_child(_metadata, self, fake_tramp_child, bad_off, &st);
	EXPECT_EQ(FAKE_OK, st)
		TH_LOG("child status %#x (%d: no area, %d: remap, %d: seccomp, %d: not EPERM)",
		       st, FAKE_NO_AREA, FAKE_REMAP, FAKE_SECCOMP, FAKE_NOT_EPERM);
	EXPECT_EQ(-1, *bad_off) TH_LOG("syscall 335 at +%ld not refused", *bad_off);
	EXPECT_EQ(1, UT_LINES(0, 0));
	munmap(bad_off, sizeof(*bad_off));
}

/*
 * A default-deny allow-list (as Docker's profile is to syscalls it does
 * not know) with action @deny; 0 or -errno.
 */
static int allow_list(unsigned int deny)
{
	static const int ok[] = {
		__NR_read, __NR_write, __NR_exit, __NR_exit_group,
		__NR_rt_sigreturn, __NR_getpid,
	};
	struct sock_filter f[4 + 2 * ARRAY_SIZE(ok) + 1];
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };
	unsigned int i, n = 0;

	/* Another architecture's syscall numbers: killed, as Docker does. */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct seccomp_data, nr));
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      ok[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
}

struct sandboxed {
	unsigned int deny;
	int pipe;
};

/* Under the allow-list: 200 probed calls, the sum written to the pipe. */
static int sandboxed_child(void *arg)
{
	struct sandboxed *sb = arg;
	long i, sum = 0;

	if (allow_list(sb->deny))
		return 2;
	for (i = 0; i < 200; i++)
		sum += hist_leaf(i);
	if (write(sb->pipe, &sum, sizeof(sum)) != sizeof(sum))
		return 3;
	return 0;
}

static void run_sandboxed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(hist) *self, unsigned int deny)
{
	struct sandboxed sb = { .deny = deny };
	int fds[2], st;
	long off, sum = 0;

	UT_SYM(off, self->exe, "hist_leaf");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_PROBE(1, 'r', self->exe, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	ASSERT_EQ(0, pipe(fds));
	sb.pipe = fds[1];
	self->child = run_child(sandboxed_child, &sb);
	ASSERT_LT(0, self->child);
	close(fds[1]);
	st = child_status(&self->child);
	EXPECT_EQ(0, st) TH_LOG("child status %#x", st);
	EXPECT_EQ(sizeof(sum), read(fds[0], &sum, sizeof(sum)));
	close(fds[0]);
	/* sum of i + 1 for i < 200 */
	EXPECT_EQ(20100, sum);
	EXPECT_EQ(200, UT_LINES(0, 0));
	EXPECT_EQ(200, UT_LINES(1, 0));
}

/*
 * "uprobes: Fix seccomp and docker" (6.14, backported): a container's
 * default-deny profile did not know the return syscall, and probed
 * programs died.  Returns under an allow-list that refuses the rest with
 * EPERM, or kills the process, change nothing for the program.
 */
TEST_F(hist, returns_probed_under_an_eperm_allow_list)
{
	run_sandboxed(_metadata, self, SECCOMP_RET_ERRNO | EPERM);
}

TEST_F(hist, returns_probed_under_a_kill_process_allow_list)
{
	run_sandboxed(_metadata, self, SECCOMP_RET_KILL_PROCESS);
}

#define LONG_STR	3000

static int strings_child(void *arg)
{
	char *s = malloc(LONG_STR + 1);

	if (!s)
		return 2;
	memset(s, 'x', LONG_STR);
	s[LONG_STR] = '\0';
	return hist_strings(s) == LONG_STR ? 0 : 1;
}

/*
 * CVE-2024-50067, "uprobe: avoid out-of-bounds memory access of fetching
 * args": six 3,000-byte strings fetched at one hit are more than the
 * per-CPU buffer a hit's record is built in.  The kernel stays up, the
 * program computes, and a recorded line holds only what the strings
 * hold (each may be cut short, or left empty when no room is left).
 */
TEST_F(hist, fetched_strings_larger_than_the_record_buffer_stay_in_bounds)
{
	static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
	char line[32768], v[8192], args[256] = "";
	long off;
	int st, n, i;

	for (i = 0; i < 6; i++)
		snprintf(args + strlen(args), sizeof(args) - strlen(args),
			 "%s%s=+0(%%di):string", i ? " " : "", names[i]);
	UT_SYM(off, self->exe, "hist_strings");
	UT_PROBE(0, 'p', self->exe, off, NULL, args);
	UT_ENABLE(0, true);
	UT_TRACE_ROOM(2000);
	self->child = run_child(strings_child, NULL);
	ASSERT_LT(0, self->child);
	st = child_status(&self->child);
	EXPECT_EQ(0, st) TH_LOG("child status %#x", st);
	n = UT_LINES(0, 0);
	ASSERT_EQ(1, n) TH_LOG("%d lines for one hit", n);
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)));
	for (i = 0; i < 6; i++) {
		size_t j, len;

		if (ut_field(line, names[i], v, sizeof(v)))
			continue;	/* left out: not stored */
		/* What did not fit prints as an empty string does. */
		if (!strcmp(v, "(fault)"))
			continue;
		len = strlen(v);
		ASSERT_LE(2, len);
		EXPECT_EQ('"', v[0]);
		EXPECT_EQ('"', v[len - 1]);
		for (j = 1; j < len - 1; j++)
			if (v[j] != 'x')
				break;
		EXPECT_EQ(len - 1, j) TH_LOG("field %s holds '%.40s...' at %zu",
					     names[i], v + j, j);
	}
}

/* A child process's threads and the parent's perf event meet here. */
struct pidf {
	volatile int tid;	/* the thread to open the event on */
	volatile int go;	/* the event is open */
	volatile long sum;
};

static void *pidf_thread(void *arg)
{
	struct pidf *p = arg;
	long i;

	p->tid = syscall(__NR_gettid);
	while (!p->go)
		usleep(1000);
	for (i = 0; i < 50; i++)
		p->sum += hist_leaf(i);
	return NULL;
}

/* A thread calls 50 times, the leader 30 times. */
static int pidf_threads_child(void *arg)
{
	struct pidf *p = arg;
	pthread_t t;
	long i, sum = 0;

	if (pthread_create(&t, NULL, pidf_thread, p))
		return 2;
	while (!p->go)
		usleep(1000);
	for (i = 0; i < 30; i++)
		sum += hist_leaf(i);
	pthread_join(t, NULL);
	return sum == 465 && p->sum == 1275 ? 0 : 1;
}

static int clone_vm_fn(void *arg)
{
	long i, sum = 0;

	for (i = 0; i < 40; i++)
		sum += hist_leaf(i);
	return sum == 820 ? 0 : 1;
}

/* A CLONE_VM child (another process, same mm) calls 40 times, then we 25. */
static int pidf_clone_vm_child(void *arg)
{
	struct pidf *p = arg;
	size_t stack_size = 1 << 16;
	char *stack = malloc(stack_size);
	long i, sum = 0;
	int st;
	pid_t c;

	if (!stack)
		return 2;
	p->tid = getpid();
	while (!p->go)
		usleep(1000);
	c = clone(clone_vm_fn, stack + stack_size, CLONE_VM | SIGCHLD, NULL);
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return 3;
	for (i = 0; i < 25; i++)
		sum += hist_leaf(i);
	return sum == 325 ? 0 : 1;
}

/*
 * Count entries of hist_leaf with a perf uprobe event opened on the task
 * @fn's child names in its struct pidf; @want is what that task alone
 * calls.
 */
static void pidf_run(struct __test_metadata *_metadata,
		     FIXTURE_DATA(hist) *self, int (*fn)(void *), long want)
{
	struct ut_pmu pmu;
	struct pidf *p;
	long off, i;
	uint64_t n = 0;
	int fd, st;

	ut_pmu_init(&pmu);
	ASSERT_LT(0, pmu.type) TH_LOG("no uprobe PMU");
	UT_SYM(off, self->exe, "hist_leaf");
	p = shared_mem(sizeof(*p));
	ASSERT_NE(NULL, p);
	self->child = run_child(fn, p);
	ASSERT_LT(0, self->child);
	for (i = 0; i < 5000 && !p->tid; i++)
		usleep(1000);
	ASSERT_NE(0, p->tid) TH_LOG("the child named no task");
	fd = ut_pmu_open(&pmu, self->exe, off, false, 0, false, p->tid, -1);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open on task %d: %s", p->tid,
				strerror(-fd));
	p->go = 1;
	st = child_status(&self->child);
	EXPECT_EQ(0, st) TH_LOG("child status %#x", st);
	ASSERT_EQ(sizeof(n), read(fd, &n, sizeof(n)));
	EXPECT_EQ(want, (long)n) TH_LOG("hits counted for task %d", p->tid);
	close(fd);
	munmap(p, sizeof(*p));
}

/*
 * uprobe_multi's PID filters (6.6.35, 6.9.5) mistook threads and
 * processes.  The same questions, asked of a per-task perf event: one
 * opened on a thread that is not the leader counts that thread's hits,
 * none of the leader's.
 */
TEST_F(hist, task_event_on_a_non_leader_thread_counts_that_thread)
{
	pidf_run(_metadata, self, pidf_threads_child, 50);
}

/*
 * ... and a child made with CLONE_VM but not CLONE_THREAD is another
 * process: its hits are not the parent's, though they share the mm and
 * so the breakpoint.
 */
TEST_F(hist, task_event_ignores_a_clone_vm_child)
{
	pidf_run(_metadata, self, pidf_clone_vm_child, 25);
}

/* Rounds of calls a multi-probe child makes, each when told. */
struct multi {
	volatile int round;	/* set by the test: make round @round's calls */
	volatile int done;	/* set by the child: rounds made */
};

static const int multi_calls[][2] = { { 3, 4 }, { 2, 1 }, { 5, 0 }, { 1, 6 } };
#define MULTI_ROUNDS ((int)ARRAY_SIZE(multi_calls))

static int multi_child(void *arg)
{
	struct multi *m = arg;
	long sum = 0;
	int r, i;

	for (r = 1; r <= MULTI_ROUNDS; r++) {
		while (m->round < r)
			usleep(1000);
		for (i = 0; i < multi_calls[r - 1][0]; i++)
			sum += hist_multi_a(i);
		for (i = 0; i < multi_calls[r - 1][1]; i++)
			sum += hist_multi_b(i);
		m->done = r;
	}
	return sum ? 0 : 1;
}

/* Have the child make round @r's calls: 0, or -1 if it does not. */
static int multi_round(struct multi *m, int r)
{
	int i;

	m->round = r;
	for (i = 0; i < 10000 && m->done < r; i++)
		usleep(1000);
	return m->done < r ? -1 : 0;
}

static long long fd_count(int fd)
{
	long long n = -1;

	return read(fd, &n, sizeof(n)) == sizeof(n) ? n : -1;
}

/* A perf counter on tracefs event @id: for task @pid, or on @cpu. */
static int open_tracepoint(int id, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.config = id,
	};
	int fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1,
			 PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * 5.7's multi-probe events linked a perf event into each probe's filter
 * (fixed in 5.8, "tracing/uprobe: Fix double perf_event linking on
 * multiprobe uprobe"): closing it corrupted the list.  Perf events on an
 * event with two probes, per task and per CPU, opened and closed in turn:
 * each counts the hits at both places while it is open, exactly, and the
 * program runs on.
 */
TEST_F(hist, perf_events_on_a_multi_probe_event_count_each_place_once)
{
	int task[2] = { -1, -1 }, cpu[8], ncpu, id, i, c, st;
	long long want_task[2] = { 0, 0 }, want_cpu = 0, n;
	char def[PATH_MAX + 128], *s;
	long off_a, off_b;
	struct multi *m;

	UT_SYM(off_a, self->exe, "hist_multi_a");
	UT_SYM(off_b, self->exe, "hist_multi_b");
	UT_PROBE(0, 'p', self->exe, off_a, NULL, NULL);
	snprintf(def, sizeof(def), "p:%s/%s %s:0x%lx", GRP, ut_ev(&self->c, 0),
		 self->exe, off_b);
	ASSERT_EQ(0, ut_probe_add(def)) TH_LOG("the second probe of the event");
	snprintf(def, sizeof(def), "events/%s/%s/id", GRP, ut_ev(&self->c, 0));
	s = ut_read(def);
	ASSERT_NE(NULL, s);
	id = atoi(s);
	free(s);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, ncpu);
	if (ncpu > 8)
		ncpu = 8;
	m = shared_mem(sizeof(*m));
	ASSERT_NE(NULL, m);
	self->child = run_child(multi_child, m);
	ASSERT_LT(0, self->child);

	for (i = 0; i < 2; i++) {
		task[i] = open_tracepoint(id, self->child, -1);
		ASSERT_LE(0, task[i]) TH_LOG("per-task event %d: %s", i, strerror(-task[i]));
	}
	for (i = 0; i < ncpu; i++) {
		cpu[i] = open_tracepoint(id, -1, i);
		ASSERT_LE(0, cpu[i]) TH_LOG("per-CPU event %d: %s", i, strerror(-cpu[i]));
	}
	for (i = 1; i <= MULTI_ROUNDS; i++) {
		long long calls = multi_calls[i - 1][0] + multi_calls[i - 1][1];

		ASSERT_EQ(0, multi_round(m, i)) TH_LOG("round %d not made", i);
		want_task[0] += task[0] >= 0 ? calls : 0;
		want_task[1] += task[1] >= 0 ? calls : 0;
		want_cpu += cpu[0] >= 0 ? calls : 0;
		if (task[0] >= 0)
			EXPECT_EQ(want_task[0], fd_count(task[0])) TH_LOG("round %d", i);
		if (task[1] >= 0)
			EXPECT_EQ(want_task[1], fd_count(task[1])) TH_LOG("round %d", i);
		if (cpu[0] >= 0) {
			for (c = 0, n = 0; c < ncpu; c++)
				n += fd_count(cpu[c]);
			EXPECT_EQ(want_cpu, n) TH_LOG("round %d, per-CPU events", i);
		}
		/* Close one kind after another; reopen the first at the end. */
		if (i == 1) {
			close(task[0]);
			task[0] = -1;
		} else if (i == 2) {
			for (c = 0; c < ncpu; c++)
				close(cpu[c]);
			cpu[0] = -1;
		} else if (i == 3) {
			close(task[1]);
			task[1] = open_tracepoint(id, self->child, -1);
			ASSERT_LE(0, task[1]) TH_LOG("reopened: %s", strerror(-task[1]));
			want_task[1] = 0;
		}
	}
	st = child_status(&self->child);
	EXPECT_EQ(0, st) TH_LOG("child status %#x", st);
	close(task[1]);
	munmap(m, sizeof(*m));
}

#define INH_THREADS	3
#define INH_CALLS	13

static void *inh_thread(void *arg)
{
	long i, sum = 0;

	/* Interleave with the others, so that perf swaps their contexts. */
	for (i = 0; i < INH_CALLS; i++) {
		sum += hist_leaf(i);
		usleep(500 + 300 * (long)arg);
	}
	return (void *)sum;
}

/* Three threads call INH_CALLS times each and exit one after another. */
static int inh_child(void *arg)
{
	struct pidf *p = arg;
	pthread_t t[INH_THREADS];
	void *r;
	long i, bad = 0;

	p->tid = getpid();
	while (!p->go)
		usleep(1000);
	for (i = 0; i < INH_THREADS; i++)
		if (pthread_create(&t[i], NULL, inh_thread, (void *)i))
			return 2;
	for (i = 0; i < INH_THREADS; i++)
		if (pthread_join(t[i], &r) || (long)r != 91)
			bad++;
	return bad ? 1 : 0;
}

/* The same with three child processes, which perf may swap contexts of too. */
static int inh_forks_child(void *arg)
{
	struct pidf *p = arg;
	pid_t c[INH_THREADS];
	long i, bad = 0;
	int st;

	p->tid = getpid();
	while (!p->go)
		usleep(1000);
	for (i = 0; i < INH_THREADS; i++) {
		c[i] = fork();
		if (c[i] == 0)
			_exit((long)inh_thread((void *)i) == 91 ? 0 : 1);
		if (c[i] < 0)
			return 2;
	}
	for (i = 0; i < INH_THREADS; i++)
		if (waitpid(c[i], &st, 0) != c[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad++;
	return bad ? 1 : 0;
}

/*
 * A perf event opened with inherit on a process counts the hits of every
 * thread and child process it makes, also once some have exited.  Perf
 * swaps the contexts of inherited events between the tasks it cloned
 * them for; an exiting task may then free an event whose task still
 * runs, and the breakpoint must stay for it.  (Stock 6.1 and mainline
 * lose hits here now and then.)
 */
static void run_inherited(struct __test_metadata *_metadata,
			  FIXTURE_DATA(hist) *self, int (*fn)(void *))
{
	struct perf_event_attr attr;
	int run, lost_runs = 0;
	struct ut_pmu pmu;
	struct pidf *p;
	long off, i;

	ut_pmu_init(&pmu);
	ASSERT_LT(0, pmu.type) TH_LOG("no uprobe PMU");
	UT_SYM(off, self->exe, "hist_leaf");
	p = shared_mem(sizeof(*p));
	ASSERT_NE(NULL, p);
	for (run = 0; run < 12; run++) {
		uint64_t n = 0;
		int fd, st;

		memset(p, 0, sizeof(*p));
		self->child = run_child(fn, p);
		ASSERT_LT(0, self->child);
		for (i = 0; i < 5000 && !p->tid; i++)
			usleep(1000);
		ASSERT_NE(0, p->tid);
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = pmu.type;
		attr.uprobe_path = (unsigned long)self->exe;
		attr.probe_offset = off;
		attr.inherit = 1;
		fd = syscall(__NR_perf_event_open, &attr, p->tid, -1, -1,
			     PERF_FLAG_FD_CLOEXEC);
		ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(errno));
		p->go = 1;
		st = child_status(&self->child);
		ASSERT_EQ(0, st) TH_LOG("run %d: child status %#x", run, st);
		ASSERT_EQ(sizeof(n), read(fd, &n, sizeof(n)));
		close(fd);
		if (n != INH_THREADS * INH_CALLS) {
			lost_runs++;
			TH_LOG("run %d: %llu hits counted of %d", run,
			       (unsigned long long)n, INH_THREADS * INH_CALLS);
		}
	}
	EXPECT_EQ(0, lost_runs);
	munmap(p, sizeof(*p));
}

TEST_F_TIMEOUT(hist, inherited_task_event_counts_after_threads_exit, 240)
{
	run_inherited(_metadata, self, inh_child);
}

TEST_F_TIMEOUT(hist, inherited_task_event_counts_after_child_processes_exit, 240)
{
	run_inherited(_metadata, self, inh_forks_child);
}

static int wait_child(void *arg)
{
	return hist_wait(*(int *)arg) == 7 ? 0 : 1;
}

/*
 * Attach to a child whose return from hist_wait() is pending, let it
 * return and exit, stopping at every syscall; @refuse: refuse syscall
 * 335 at its entry, as a sandbox refuses what it does not know.  The
 * number of syscall-entry stops with number 335, or -errno.
 */
static long trace_pending_return(struct __test_metadata *_metadata,
				 FIXTURE_DATA(hist) *self, bool refuse, int *status)
{
	int fds[2], st;
	long n335 = 0, i;
	bool entry = true;

	if (pipe(fds))
		return -errno;
	self->child = run_child(wait_child, &fds[0]);
	if (self->child < 0)
		return -errno;
	/* Its entry hit: the return is hijacked before we attach. */
	for (i = 0; i < 5000 && UT_HITS(1) < 1; i++)
		usleep(1000);
	if (UT_HITS(1) < 1)
		return -ETIMEDOUT;
	if (ptrace(PTRACE_ATTACH, self->child, 0, 0) ||
	    waitpid(self->child, &st, 0) != self->child)
		return -errno;
	ptrace(PTRACE_SETOPTIONS, self->child, 0, PTRACE_O_TRACESYSGOOD);
	if (write(fds[1], "g", 1) != 1)
		return -errno;
	for (;;) {
		struct user_regs_struct regs;

		if (ptrace(PTRACE_SYSCALL, self->child, 0, 0) ||
		    waitpid(self->child, &st, 0) != self->child)
			return -errno;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
			continue;
		if (entry && !ptrace(PTRACE_GETREGS, self->child, 0, &regs) &&
		    regs.orig_rax == NR_URETPROBE) {
			n335++;
			if (refuse) {
				regs.orig_rax = -1;
				ptrace(PTRACE_SETREGS, self->child, 0, &regs);
			}
		}
		entry = !entry;
	}
	self->child = 0;
	*status = st;
	close(fds[0]);
	close(fds[1]);
	return n335;
}

static void run_traced_return(struct __test_metadata *_metadata,
			      FIXTURE_DATA(hist) *self, bool refuse)
{
	long off, n;
	int st = 0;

	UT_SYM(off, self->exe, "hist_wait");
	UT_PROBE(0, 'r', self->exe, off, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	n = trace_pending_return(_metadata, self, refuse, &st);
	ASSERT_LE(0, n) TH_LOG("tracing the child: %s", strerror(-n));
	EXPECT_EQ(0, n) TH_LOG("the tracer saw %ld syscalls 335", n);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child status %#x", st);
	EXPECT_EQ(1, UT_LINES(0, 0));
}

/*
 * A ptracer sees only the syscalls the program made: a tracer that
 * attaches while a return is pending (strace -p) sees no syscall of the
 * return trampoline.  (Mainline shows its uretprobe syscall since 6.11.)
 */
TEST_F(hist, tracer_attached_with_a_return_pending_sees_no_syscall)
{
	run_traced_return(_metadata, self, false);
}

/* ... and a sandbox refusing syscalls it does not know breaks nothing. */
TEST_F(hist, sandbox_refusing_unknown_syscalls_keeps_a_pending_return)
{
	run_traced_return(_metadata, self, true);
}

struct seccomp_wait {
	int fd;
	long pid;
};

/* Under an allow-all seccomp filter: a probed return, then wait, then syscalls. */
static int seccomp_wait_child(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };
	struct seccomp_wait *w = arg;
	char c;
	int i;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 2;
	if (hist_leaf(1) != 2)
		return 3;
	if (read(w->fd, &c, 1) != 1)
		return 4;
	for (i = 0; i < 3; i++)
		w->pid = syscall(__NR_getpid);
	return 0;
}

/*
 * A seccomp-filtered task runs syscall entry work, not exit work, for
 * each syscall: a return through the syscall trampoline there must leave
 * nothing behind that hides a later syscall's exit from a tracer.  Every
 * syscall-entry stop of a tracer that attaches later has its exit stop.
 */
TEST_F(hist, tracer_after_a_sandboxed_return_sees_every_syscall_exit)
{
	struct __ptrace_syscall_info info;
	struct seccomp_wait w = { 0 };
	int fds[2], st, entries = 0, exits = 0, unpaired = 0;
	bool in = false;
	long off, i;

	UT_SYM(off, self->exe, "hist_leaf");
	UT_PROBE(0, 'r', self->exe, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	ASSERT_EQ(0, pipe(fds));
	w.fd = fds[0];
	self->child = run_child(seccomp_wait_child, &w);
	ASSERT_LT(0, self->child);
	/* Its return is done (the line is written as it returns). */
	for (i = 0; i < 5000 && UT_LINES(0, 0) < 1; i++)
		usleep(1000);
	ASSERT_EQ(1, UT_LINES(0, 0));
	usleep(100000);
	ASSERT_EQ(0, ptrace(PTRACE_ATTACH, self->child, 0, 0));
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	ptrace(PTRACE_SETOPTIONS, self->child, 0, PTRACE_O_TRACESYSGOOD);
	ASSERT_EQ(1, write(fds[1], "g", 1));
	for (;;) {
		ASSERT_EQ(0, ptrace(PTRACE_SYSCALL, self->child, 0, 0));
		ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != (SIGTRAP | 0x80))
			continue;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, self->child, sizeof(info),
			   &info) <= 0)
			continue;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			entries++;
			unpaired += in;		/* the last entry had no exit */
			in = true;
		} else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
			exits++;
			unpaired += !in;
			in = false;
		}
	}
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status %#x", st);
	/* exit_group's entry is the only one without an exit. */
	EXPECT_EQ(0, unpaired) TH_LOG("%d entries, %d exits", entries, exits);
	EXPECT_EQ(entries - 1, exits);
	EXPECT_LE(4, entries);
	close(fds[0]);
	close(fds[1]);
}

/* Kernel log lines since @fd was opened that name a kernel defect. */
static int kmsg_reports(int fd, char *first, size_t len)
{
	static const char *const bad[] = {
		"rss-counter", "BUG", "WARNING", "Oops", "bad page",
	};
	char rec[1024];
	ssize_t n;
	int found = 0;
	size_t i;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			if (strstr(rec, bad[i])) {
				if (!found++)
					snprintf(first, len, "%s", rec);
				break;
			}
	}
	return found;
}

/*
 * CVE-2025-21881, "uprobes: Reject the shared zeropage in
 * uprobe_write_opcode()": UFFDIO_ZEROPAGE maps the shared zero page into
 * a private mapping of a tmpfs file, where the file's code is; a probe
 * then enabled on that offset must leave the zero page alone (it is not
 * the file's instruction, and it is every process's zero page): the
 * mapping reads 0 there with the probe in and after, and the kernel
 * reports nothing, at the removal or when the mapping goes.
 */
TEST_F(hist, shared_zero_page_placed_by_userfaultfd_is_never_written)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_zeropage zp = { 0 };
	char path[64], report[1024] = "";
	volatile unsigned char *m;
	int fd, uffd, kmsg, en;

	snprintf(path, sizeof(path), "/tmp/ust_hist_zero_%d", getpid());
	ASSERT_EQ(0, ut_code_file(path));
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	m = mmap(NULL, UT_CODE_LEN, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, m);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0) {
		unlink(path);
		SKIP(return, "userfaultfd: %s (a kernel without CONFIG_USERFAULTFD)",
		     strerror(errno));
	}
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	reg.range.start = (unsigned long)m;
	reg.range.len = UT_PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg))
		TH_LOG("registering a private tmpfs mapping: %s", strerror(errno));
	zp.range = reg.range;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zp))
		TH_LOG("UFFDIO_ZEROPAGE: %s", strerror(errno));
	ASSERT_EQ(0, m[UT_CODE_FN]) TH_LOG("not the zero page after UFFDIO_ZEROPAGE");

	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	lseek(kmsg, 0, SEEK_END);
	UT_PROBE(0, 'p', path, UT_CODE_FN, NULL, NULL);
	/* Refusing this mm or leaving it out are both right. */
	en = ut_ctx_enable(&self->c, 0, true);
	TH_LOG("enable: %s", en ? strerror(-en) : "accepted");
	EXPECT_EQ(0, m[UT_CODE_FN]) TH_LOG("the zero page reads %#x with the probe in",
					   m[UT_CODE_FN]);
	EXPECT_EQ(0, m[UT_PAGE - 1]);
	if (!en)
		UT_ENABLE(0, false);
	EXPECT_EQ(0, m[UT_CODE_FN]) TH_LOG("after the removal");
	munmap((void *)m, UT_CODE_LEN);
	close(uffd);
	unlink(path);
	/* Other processes' zero page: a fresh anonymous page reads 0. */
	m = mmap(NULL, UT_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, m[UT_CODE_FN]) TH_LOG("the shared zero page was written");
	munmap((void *)m, UT_PAGE);
	EXPECT_EQ(0, kmsg_reports(kmsg, report, sizeof(report)))
		TH_LOG("the kernel reported: %s", report);
	close(kmsg);
}

/* One probe's function a page: ut_fn_file()'s first on page @page. */
#define PAGE_FN(page)	((page) * (UT_PAGE / UT_FN_STRIDE))

/* What move_probed_page() does and saw, in memory shared with the test. */
struct move_back {
	char path[64];		/* the code file */
	int grow;		/* the move makes page 1 two pages */
	int apart;		/* moved elsewhere, not back beside page 0 */
	long first, second;	/* page 1's function, before and after */
	long tail;		/* page 2's function, after (grow) */
	int merged;		/* where it went, it is one mapping */
	int step;		/* the step that failed, 0 if none */
};

/* Is [@a, @a + @len) exactly one line of /proc/self/maps? */
static int one_mapping(unsigned long a, unsigned long len)
{
	char *all = ut_slurp("/proc/self/maps", NULL), *line, *save = NULL;
	unsigned long s, e;
	int found = 0;

	if (!all)
		return 0;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s == a && e == a + len)
			found = 1;
	free(all);
	return found;
}

/* Call ut_fn_file()'s function @fn, the file being mapped at @base. */
static long call_at(char *base, int fn)
{
	return ((long (*)(void))(base + (long)fn * UT_FN_STRIDE))();
}

/*
 * Map the file's pages 0 and 1, with PROT_NONE after them as room for a
 * grown move at a fixed address; call page 1's function (one hit: the
 * breakpoint's copy is what the move carries); move page 1 into an
 * anonymous hole, where it merges with nothing, and, unless @r->apart,
 * back beside page 0, so that copy_vma() merges it there.  With
 * @r->grow the last move makes it two pages, page 2 after it.
 */
static int move_probed_page(void *arg)
{
	struct move_back *r = arg;
	char *a, *hole, *base;
	size_t len = (1 + r->grow) * UT_PAGE;
	int fd;

	r->step = 1;
	a = mmap(NULL, 4 * UT_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, 4 * UT_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open(r->path, O_RDONLY);
	if (a == MAP_FAILED || hole == MAP_FAILED || fd < 0)
		return 1;
	if (mmap(a, 2 * UT_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
		 fd, 0) != a)
		return 1;
	close(fd);
	r->step = 2;
	r->first = call_at(a, PAGE_FN(1));
	r->step = 3;
	if (mremap(a + UT_PAGE, UT_PAGE, r->apart ? len : UT_PAGE,
		   MREMAP_MAYMOVE | MREMAP_FIXED, hole + UT_PAGE) == MAP_FAILED)
		return 1;
	base = hole;
	if (!r->apart) {
		r->step = 4;
		if (mremap(hole + UT_PAGE, UT_PAGE, len,
			   MREMAP_MAYMOVE | MREMAP_FIXED, a + UT_PAGE) == MAP_FAILED)
			return 1;
		base = a;
	}
	r->merged = one_mapping((unsigned long)base + (r->apart ? UT_PAGE : 0),
				r->apart ? len : UT_PAGE + len);
	r->step = 5;
	r->second = call_at(base, PAGE_FN(1));
	if (r->grow)
		r->tail = call_at(base, PAGE_FN(2));
	r->step = 0;
	return 0;
}

/*
 * Run on every CPU once: an exited process's mm stays the lazy one of
 * the CPU it last ran on, and is only freed (and its counters checked)
 * when a process runs there.
 */
static void free_exited_mms(void)
{
	cpu_set_t all, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			usleep(1000);
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * Run move_probed_page() with probes on the functions of pages 1 and 2:
 * each call hits once, and no kernel report follows the child's exit.
 */
static void check_probed_page_moved(struct __test_metadata *_metadata,
				    FIXTURE_DATA(hist) *self, int grow, int apart)
{
	struct move_back *r = shared_mem(sizeof(*r));
	char report[1024] = "";
	int kmsg, st, i, n = 0;

	ASSERT_NE(NULL, r);
	r->grow = grow;
	r->apart = apart;
	snprintf(r->path, sizeof(r->path), "/tmp/ust_hist_move_%d", getpid());
	/* Earlier cases' mms go first: their reports are not this one's. */
	free_exited_mms();
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, kmsg);
	lseek(kmsg, 0, SEEK_END);
	ASSERT_EQ(0, ut_fn_file(r->path, PAGE_FN(3)));
	UT_PROBE(0, 'p', r->path, PAGE_FN(1) * UT_FN_STRIDE, NULL, NULL);
	UT_PROBE(1, 'p', r->path, PAGE_FN(2) * UT_FN_STRIDE, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	self->child = run_child(move_probed_page, r);
	ASSERT_LT(0, self->child);
	st = child_status(&self->child);
	unlink(r->path);
	EXPECT_EQ(0, st) TH_LOG("child status %#x at step %d", st, r->step);
	EXPECT_EQ(UT_FN_RET(PAGE_FN(1)), r->first);
	EXPECT_EQ(UT_FN_RET(PAGE_FN(1)), r->second);
	EXPECT_EQ(grow ? UT_FN_RET(PAGE_FN(2)) : 0, r->tail);
	EXPECT_EQ(1, r->merged)
		TH_LOG("the moved page is not where the case needs it: it tests nothing");
	EXPECT_EQ(2, UT_HITS(0));
	EXPECT_EQ(grow ? 1 : 0, UT_HITS(1)) TH_LOG("page 2's probe, grown into");
	UT_ENABLE(0, false);
	UT_ENABLE(1, false);
	/* A report that comes later still fails kernel/no-reports. */
	for (i = 0; i < 10 && !n; i++) {
		free_exited_mms();
		n = kmsg_reports(kmsg, report, sizeof(report));
	}
	EXPECT_EQ(0, n) TH_LOG("the kernel reported: %s", report);
	close(kmsg);
	munmap(r, sizeof(*r));
}

/*
 * "mm: fix uprobe pte be overwritten when expanding vma" (2025): on 6.1,
 * a probed page moved by mremap() back beside the rest of its file's
 * mapping makes copy_vma() grow that mapping, and uprobe_mmap() on the
 * grown mapping installs a breakpoint page where move_page_tables()
 * then puts the moved one over it: the installed page is lost and the
 * mm's counters go wrong ("Bad rss-counter state" when it exits).
 */
TEST_F(hist, probed_page_moved_back_beside_its_mapping_leaks_nothing)
{
	check_probed_page_moved(_metadata, self, 0, 0);
}

/*
 * The same move, grown by a page: the moved page brings its breakpoint,
 * and the page the mapping grows into gets its own, as in a new mapping.
 */
TEST_F(hist, probed_page_moved_back_and_grown_gets_every_breakpoint)
{
	check_probed_page_moved(_metadata, self, 1, 0);
}

/*
 * Beyond upstream: the same move grown where it merges with nothing.
 * 6.1 and mainline install nothing in the part of the destination past
 * the moved entries then; ours installs it as in a new mapping.
 */
TEST_F(hist, probed_page_moved_elsewhere_and_grown_gets_every_breakpoint)
{
	check_probed_page_moved(_metadata, self, 1, 1);
}

UT_HARNESS_MAIN
