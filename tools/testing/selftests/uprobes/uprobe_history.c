// SPDX-License-Identifier: GPL-2.0
/*
 * Upstream's uprobes bug history, one case per bug, named for the
 * behaviour that the bug broke.  The trigger of each is what upstream's
 * report describes; stock 6.1 has the fixes unless harness/data/stock-xfail
 * says otherwise.
 */
#include <sys/ioctl.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_hist"
#define NOINLINE __attribute__((noinline, noclone, used))

/* The probed function of this program's own, run by its children. */
NOINLINE long hist_leaf(long a)
{
	asm volatile("" ::: "memory");
	return a + 1;
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

	e = mmap(NULL, sizeof(*e), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, e);
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

UT_HARNESS_MAIN
