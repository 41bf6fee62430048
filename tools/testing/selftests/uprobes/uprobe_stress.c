// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded stress run.  For a fixed time, two controller threads add and
 * remove probes on this very binary, one through tracefs (entry and
 * return probes defined, enabled, disabled and deleted) and one through
 * the perf uprobe PMU (events opened per task and per CPU, enabled,
 * closed), on offsets both use and on offsets only one uses.  Meanwhile
 * processes run the probed functions: recursion, so that return probes are
 * pending, fork, vfork and exec, exit from deep inside probed frames, a
 * second mapping of the probed file moved, re-protected and unmapped,
 * interval-timer signals whose handlers call probed functions, one
 * process stopped and continued over and over and one ptrace-attached,
 * interrupted and detached over and over.
 *
 * The processes are this binary run with --worker: each checks every
 * result it computes and says whether all were right with its exit
 * status.  At the end nothing of the probes may be left: no event of our
 * group, no changed byte in the file or in the text of the processes that
 * lived through it all, no [uprobes] area in a process started afterwards,
 * and no slab memory kept (measured after a warm-up run, so that caches
 * the kernel grows once are not counted).
 *
 * The random choices come from a xorshift generator with fixed seeds; the
 * interleaving still depends on timing, which is the point.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_stress"
#define PMU UT_PMU

/* Seconds of the warm-up run and of the measured run. */
#ifndef STRESS_WARMUP_S
#define STRESS_WARMUP_S 6
#endif
#ifndef STRESS_RUN_S
#define STRESS_RUN_S 40
#endif

/*
 * Unreclaimable slab growth (kB) allowed between the two settled
 * measurements, each the lowest of three readings after dropping caches
 * and shrinking every slab cache (SLUB's per-CPU and partial slabs hold
 * free objects' pages otherwise).  Everything uprobes allocates is
 * unreclaimable, so a leak shows there; reclaimable slab (dentries and
 * inodes of the 9p root that are in use and cannot be dropped) moves with
 * whatever else the machine does, and is only reported.  The measured
 * run makes about 400 probe registrations (tracefs enables and perf
 * opens) and about 400 processes (forks and execs), and hits probes a few
 * hundred thousand times: 64 kB is crossed by a leak of 160 bytes per
 * registration or per process, or of anything per hit or per pending
 * return.  (60 perf uprobe events left open showed as +68 kB.)  The
 * growth of the vmap_area cache is left out: exited tasks' stacks keep
 * theirs until a lazy purge, +84 to +88 kB in one run here at times.
 */
#ifndef STRESS_SLAB_TOLERANCE_KB
#define STRESS_SLAB_TOLERANCE_KB 64
#endif

#define N_LONG		4	/* long-lived workers, by role: */
#define W_PLAIN		0
#define W_STOPPED	1	/* SIGSTOP/SIGCONT'ed by the test */
#define W_TRACED	2	/* PTRACE_SEIZE/INTERRUPT/DETACH'ed by the test */
#define W_THREADS	3	/* with a helper thread started over and over */
#define MAX_DEPTH	40	/* recursion: below the 64 pending returns both kernels track */
#define MAX_SHORT	2	/* short-lived workers running at once */
#define N_PERF		3	/* perf events open at once, at most */

/* ------------------------------------------------------------------ */
/* The probed functions                                                */
/* ------------------------------------------------------------------ */

#define NOINLINE __attribute__((noinline, noclone, used))

/* Where st_dive() ends: a pointer, so that it is not known to return. */
void (*st_exit_fn)(int) = _exit;

/* The leaf every recursion ends in: 2a + b. */
NOINLINE long st_leaf(long a, long b)
{
	asm volatile("" ::: "memory");
	return 2 * a + b;
}

/*
 * n + (n - 1) + ... + 1 + st_leaf(0, 1), n + 1 frames deep.  The empty
 * asm keeps the compiler from turning the recursion into a loop.
 */
NOINLINE long st_rec(long n)
{
	long r = n > 0 ? st_rec(n - 1) : st_leaf(0, 1);

	asm volatile("" : "+r" (r));
	return n > 0 ? r + n : r;
}

static long st_rec_want(long n)
{
	return n * (n + 1) / 2 + 1;
}

/* Recurse @n deep, then exit with @code from the deepest frame. */
NOINLINE long st_dive(long n, int code)
{
	long r;

	if (n <= 0) {
		st_exit_fn(code);
		return 0;
	}
	r = st_dive(n - 1, code);
	asm volatile("" : "+r" (r));
	return r + 1;
}

/* Probed through tracefs only: 3a + 1. */
NOINLINE long st_tr_only(long a)
{
	asm volatile("" ::: "memory");
	return 3 * a + 1;
}

/* Probed through perf only: a ^ 0x55. */
NOINLINE long st_pf_only(long a)
{
	asm volatile("" ::: "memory");
	return a ^ 0x55;
}

static const char *const st_syms[] = {
	"st_leaf", "st_rec", "st_dive", "st_tr_only", "st_pf_only",
};

static void *st_addr(int i)
{
	void *const addrs[] = { st_leaf, st_rec, st_dive, st_tr_only, st_pf_only };

	return addrs[i];
}

#define N_SYMS		5
#define TEXT_CHECK	16	/* bytes compared at each function */

/* xorshift64: the fixed-seed generator of every random choice. */
static unsigned long xs(unsigned long *s)
{
	unsigned long x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A "# " line on stdout, flushed: the test's process ends with _exit(). */
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* The workers (this binary run with --worker KIND INDEX)               */
/* ------------------------------------------------------------------ */

struct wk {
	char path[PATH_MAX];
	const char *kind;
	int idx;
	long off[N_SYMS];
	unsigned long rnd;
	unsigned long calls, forks, vforks, maps, fails;
	unsigned long bp;	/* rounds that saw int3 at st_leaf in our own text */
	bool xol;		/* saw a [uprobes] area in our own maps */
	char why[160];
};

/* The line of counts each worker writes last, and the test reads. */
#define W_COUNTS "calls=%lu forks=%lu vforks=%lu maps=%lu alarms=%lu bp=%lu xol=%d fails=%lu"

static unsigned long w_alarms, w_alarm_bad, w_stop;

/* Signal handlers call probed functions, with returns pending outside. */
static void w_on_alarm(int sig)
{
	(void)sig;
	if (st_rec(3) != st_rec_want(3) || st_leaf(5, 1) != 11)
		__atomic_store_n(&w_alarm_bad, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w_alarms, 1, __ATOMIC_RELAXED);
}

static void w_on_usr1(int sig)
{
	(void)sig;
	__atomic_store_n(&w_stop, 1, __ATOMIC_RELAXED);
}

static void w_fail(struct wk *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->fails++) {
		va_start(ap, fmt);
		vsnprintf(w->why, sizeof(w->why), fmt, ap);
		va_end(ap);
	}
}

/* One round of calls, recursion up to MAX_DEPTH deep: true if all right. */
static bool w_round(unsigned long *rnd)
{
	long d = xs(rnd) % MAX_DEPTH + 1;

	return st_rec(d) == st_rec_want(d) && st_tr_only(d) == 3 * d + 1 &&
	       st_pf_only(d) == (d ^ 0x55) && st_leaf(d, 2) == 2 * d + 2;
}

static void w_calls(struct wk *w)
{
	if (!w_round(&w->rnd))
		w_fail(w, "a probed function returned a wrong result");
	w->calls++;
	/* proof that the probes reach this process, and that we would see them */
	w->bp += *(unsigned char *)st_leaf == 0xcc;
}

static void w_reap(struct wk *w, pid_t pid, const char *what)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			w_fail(w, "waitpid(%s): %s", what, strerror(errno));
			return;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		w_fail(w, "%s %d ended with status 0x%x", what, pid, st);
}

/* A forked child computes, then exits from deep in probed frames. */
static void w_fork(struct wk *w)
{
	pid_t pid = fork();
	int i, bad = 0;

	if (pid < 0) {
		w_fail(w, "fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		for (i = 0; i < 10; i++)
			bad |= !w_round(&w->rnd);
		st_dive(xs(&w->rnd) % 8 + 1, bad);
	}
	w->forks++;
	w_reap(w, pid, "fork child");
}

/* vfork, then exec this binary as a short-lived worker. */
static void w_vfork_exec(struct wk *w)
{
	char num[16], *argv[] = { w->path, "--worker", "short", num, NULL };
	pid_t pid;

	snprintf(num, sizeof(num), "%d", (int)(100 + xs(&w->rnd) % 1000));
	pid = vfork();
	if (pid < 0) {
		w_fail(w, "vfork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		execv(w->path, argv);
		_exit(127);
	}
	w->vforks++;
	w_reap(w, pid, "vfork+exec child");
}

typedef long (*leaf_fn)(long, long);

static bool w_alias_call(leaf_fn f, unsigned long *rnd)
{
	long a = xs(rnd) % 1000;

	return f(a, 3) == 2 * a + 3;
}

/*
 * A second mapping of the probed file's page holding st_leaf: called
 * through, moved with mremap, re-protected, unmapped in two steps.
 */
static void w_alias(struct wk *w)
{
	long pg = sysconf(_SC_PAGESIZE), off = w->off[0], base = off & ~(pg - 1);
	size_t len = 2 * pg;
	char *a, *hole, *b;
	int fd, i;

	fd = open(w->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		w_fail(w, "open: %s", strerror(errno));
		return;
	}
	a = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, base);
	close(fd);
	if (a == MAP_FAILED) {
		w_fail(w, "mmap: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 4; i++)
		if (!w_alias_call((leaf_fn)(a + off - base), &w->rnd))
			w_fail(w, "st_leaf through the second mapping: wrong result");
	hole = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = hole == MAP_FAILED ? MAP_FAILED :
	    mremap(a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	if (b == MAP_FAILED) {
		w_fail(w, "mremap: %s", strerror(errno));
		munmap(a, len);
		return;
	}
	if (!w_alias_call((leaf_fn)(b + off - base), &w->rnd))
		w_fail(w, "st_leaf through the moved mapping: wrong result");
	if (mprotect(b, len, (xs(&w->rnd) & 1) ? PROT_READ | PROT_WRITE : PROT_READ) ||
	    mprotect(b, len, PROT_READ | PROT_EXEC))
		w_fail(w, "mprotect: %s", strerror(errno));
	if (!w_alias_call((leaf_fn)(b + off - base), &w->rnd))
		w_fail(w, "st_leaf after mprotect: wrong result");
	/* the second page goes first; st_leaf stays callable if it is in the first */
	if (munmap(b + pg, pg))
		w_fail(w, "munmap: %s", strerror(errno));
	if (off - base + 64 <= pg && !w_alias_call((leaf_fn)(b + off - base), &w->rnd))
		w_fail(w, "st_leaf after a partial munmap: wrong result");
	if (munmap(b, pg))
		w_fail(w, "munmap: %s", strerror(errno));
	w->maps++;
}

/* Each probed function's first bytes in memory are the file's. */
static void w_check_text(struct wk *w)
{
	unsigned char file[TEXT_CHECK];
	int i;

	for (i = 0; i < N_SYMS; i++) {
		if (ut_file_bytes(w->path, w->off[i], file, sizeof(file))) {
			w_fail(w, "cannot read %s's bytes from the file", st_syms[i]);
			continue;
		}
		if (memcmp(file, st_addr(i), sizeof(file)))
			w_fail(w, "%s's text differs from the file (0x%02x, file 0x%02x)",
			       st_syms[i], *(unsigned char *)st_addr(i), file[0]);
	}
}

/* A helper thread of the W_THREADS worker: some rounds, then it ends. */
struct w_helper {
	pthread_t th;
	unsigned long rnd, calls, bad, done;
	bool running;
};

static void *w_helper_fn(void *arg)
{
	struct w_helper *h = arg;
	int i;

	for (i = 0; i < 50 && !__atomic_load_n(&w_stop, __ATOMIC_RELAXED); i++) {
		h->bad += !w_round(&h->rnd);
		h->calls++;
	}
	__atomic_store_n(&h->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void w_helper_join(struct wk *w, struct w_helper *h)
{
	if (!h->running)
		return;
	pthread_join(h->th, NULL);
	h->running = false;
	w->calls += h->calls;
	if (h->bad)
		w_fail(w, "the helper thread computed wrong results");
	h->calls = 0;
	h->bad = 0;
}

static void w_helper_cycle(struct wk *w, struct w_helper *h)
{
	if (h->running && !__atomic_load_n(&h->done, __ATOMIC_ACQUIRE))
		return;
	w_helper_join(w, h);
	h->done = 0;
	if (pthread_create(&h->th, NULL, w_helper_fn, h))
		w_fail(w, "pthread_create failed");
	else
		h->running = true;
}

/* Is there a [uprobes] mapping in this process? */
static bool w_has_xol_area(void)
{
	char *maps = ut_slurp("/proc/self/maps", NULL);
	bool found = maps && strstr(maps, "[uprobes]");

	free(maps);
	return found;
}

static void w_timer(long usec)
{
	struct itimerval it = {
		.it_interval = { 0, usec }, .it_value = { 0, usec },
	};

	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * KIND "long": run until SIGUSR1 (the role is INDEX); "short": a few
 * dozen rounds; "check": after every probe is gone, a few rounds, then
 * no [uprobes] area may exist.  One line of counts on stdout, then exit
 * from deep in probed frames with 0 if every check held, 1 if not.
 */
static int worker_main(int argc, char **argv)
{
	struct w_helper helper = { .rnd = 0x2545f4914f6cdd1dUL };
	struct sigaction sa = { .sa_flags = SA_RESTART };
	double cap = now_s() + 300;
	unsigned long op, n, i;
	struct wk w = { 0 };
	bool is_long;
	ssize_t len;

	if (argc < 4)
		return 2;
	w.kind = argv[2];
	w.idx = atoi(argv[3]);
	is_long = !strcmp(w.kind, "long");
	w.rnd = 0x9e3779b97f4a7c15UL * (w.idx + 1);
	len = readlink("/proc/self/exe", w.path, sizeof(w.path) - 1);
	if (len <= 0)
		return 3;
	w.path[len] = '\0';
	for (i = 0; i < N_SYMS; i++) {
		w.off[i] = ut_sym_off(w.path, st_syms[i]);
		if (w.off[i] <= 0)
			return 4;
	}
	sa.sa_handler = w_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = w_on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	if (!strcmp(w.kind, "check")) {
		for (i = 0; i < 20; i++)
			w_calls(&w);
		w_alias(&w);
		w_check_text(&w);
		if (w_has_xol_area())
			w_fail(&w, "a [uprobes] area after every probe was gone");
	} else if (is_long) {
		w_timer(2000 + 700 * w.idx);
		while (!__atomic_load_n(&w_stop, __ATOMIC_RELAXED)) {
			if (now_s() > cap) {
				w_fail(&w, "no SIGUSR1 within 300 s");
				break;
			}
			w_calls(&w);
			if (w.idx == W_THREADS)
				w_helper_cycle(&w, &helper);
			op = xs(&w.rnd) % 128;
			if (op < 2)
				w_fork(&w);
			else if (op < 3)
				w_vfork_exec(&w);
			else if (op < 5)
				w_alias(&w);
			if (op < 5 && !w.xol)
				w.xol = w_has_xol_area();
		}
		w_timer(0);
		w_helper_join(&w, &helper);
		/* the test removed every probe before it sent SIGUSR1 */
		w_check_text(&w);
	} else {
		w_timer(3000);
		n = 20 + xs(&w.rnd) % 40;
		for (i = 0; i < n; i++) {
			w_calls(&w);
			op = xs(&w.rnd) % 32;
			if (op == 0)
				w_fork(&w);
			else if (op == 1)
				w_alias(&w);
		}
		w_timer(0);
	}
	if (__atomic_load_n(&w_alarm_bad, __ATOMIC_RELAXED))
		w_fail(&w, "a probed function returned a wrong result in a signal handler");
	dprintf(1, "W %s %d " W_COUNTS "\n", w.kind, w.idx, w.calls, w.forks, w.vforks, w.maps,
		__atomic_load_n(&w_alarms, __ATOMIC_RELAXED), w.bp, w.xol, w.fails);
	if (w.fails)
		dprintf(1, "F %s %d (pid %d): %s\n", w.kind, w.idx, getpid(), w.why);
	st_dive(xs(&w.rnd) % 16 + 1, w.fails ? 1 : 0);
	return 1;
}

/* ------------------------------------------------------------------ */
/* The controllers                                                     */
/* ------------------------------------------------------------------ */

struct stress {
	char path[PATH_MAX];
	long off[N_SYMS];
	struct ut_pmu pmu;
	int ncpu;
	pid_t long_pid[N_LONG];
	unsigned long stop;
	pthread_t th[2];
	bool th_running[2];

	struct ctl_counts {
		/* the tracefs thread */
		unsigned long t_def, t_en, t_dis, t_undef, t_hits, t_err;
		char t_why[256];
		/* the perf thread */
		unsigned long p_open, p_task, p_ret, p_close, p_hits, p_err;
		char p_why[256];
	} n;
};

static bool stopping(struct stress *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE);
}

struct tev {
	const char *name;
	char type;
	int sym;
	bool def, en;
};

static void t_error(struct stress *s, const char *what, const char *ev, int err)
{
	if (!s->n.t_err++)
		snprintf(s->n.t_why, sizeof(s->n.t_why), "%s %s: %s", what, ev, strerror(-err));
}

static int t_undefine(struct stress *s, struct tev *e)
{
	char cmd[128];
	long h = ut_profile_hits(e->name);

	if (h > 0)
		s->n.t_hits += h;
	snprintf(cmd, sizeof(cmd), "-:%s/%s", GRP, e->name);
	e->def = false;
	s->n.t_undef++;
	return ut_append("uprobe_events", cmd);
}

/*
 * tracefs: a random walk over the states of a few events, defined,
 * enabled, disabled and deleted; st_rec carries an entry and a return
 * probe of its own here and perf events too.
 */
static void *tracefs_thread(void *arg)
{
	struct tev ev[] = {
		{ "rec_p", 'p', 1 }, { "rec_r", 'r', 1 }, { "leaf_p", 'p', 0 },
		{ "leaf_r", 'r', 0 }, { "dive_r", 'r', 2 }, { "tronly_p", 'p', 3 },
	};
	const int n = ARRAY_SIZE(ev);
	unsigned long rnd = 0x853c49e6748fea9bUL;
	struct stress *s = arg;
	char def[PATH_MAX + 128];
	struct tev *e;
	int i, err;

	while (!stopping(s)) {
		e = &ev[xs(&rnd) % n];
		if (!e->def) {
			snprintf(def, sizeof(def), "%c:%s/%s %s:0x%lx", e->type, GRP,
				 e->name, s->path, s->off[e->sym]);
			err = ut_probe_add(def);
			if (err)
				t_error(s, "defining", e->name, err);
			e->def = !err;
			s->n.t_def++;
		} else if (!e->en && xs(&rnd) % 4 == 0) {
			err = t_undefine(s, e);
			if (err)
				t_error(s, "deleting", e->name, err);
		} else {
			err = ut_event_enable(GRP, e->name, !e->en);
			if (err)
				t_error(s, e->en ? "disabling" : "enabling", e->name, err);
			else
				e->en = !e->en;
			if (e->en)
				s->n.t_en++;
			else
				s->n.t_dis++;
		}
		usleep(xs(&rnd) % 2000);
	}
	for (i = 0; i < n; i++) {
		e = &ev[i];
		if (e->en) {
			err = ut_event_enable(GRP, e->name, false);
			if (err)
				t_error(s, "disabling", e->name, err);
			s->n.t_dis++;
		}
		if (e->def) {
			err = t_undefine(s, e);
			if (err)
				t_error(s, "deleting", e->name, err);
		}
	}
	return NULL;
}

static void p_error(struct stress *s, const char *what, int err)
{
	if (!s->n.p_err++)
		snprintf(s->n.p_why, sizeof(s->n.p_why), "%s: %s", what, strerror(err));
}

static void p_close(struct stress *s, int *fd)
{
	unsigned long long v;

	if (read(*fd, &v, sizeof(v)) == sizeof(v))
		s->n.p_hits += v;
	else
		p_error(s, "reading a count", errno);
	close(*fd);
	*fd = -1;
	s->n.p_close++;
}

/*
 * perf: up to N_PERF uprobe PMU events open at a time, entry or return,
 * counting one long-lived worker or everything on one CPU, opened
 * enabled or enabled by ioctl, each closed after a while.
 */
static void *perf_thread(void *arg)
{
	static const int syms[] = { 1, 0, 2, 4 };	/* rec, leaf, dive, pf_only */
	unsigned long rnd = 0xda3e39cb94b95bdbUL;
	struct stress *s = arg;
	int fd[N_PERF], i, pid, cpu;
	bool ret, disabled;
	long off;

	for (i = 0; i < N_PERF; i++)
		fd[i] = -1;
	while (!stopping(s)) {
		i = xs(&rnd) % N_PERF;
		if (fd[i] >= 0) {
			p_close(s, &fd[i]);
			continue;
		}
		ret = xs(&rnd) & 1;
		s->n.p_ret += ret;
		off = s->off[syms[xs(&rnd) % 4]];
		disabled = xs(&rnd) & 1;
		if (xs(&rnd) & 1) {
			pid = s->long_pid[xs(&rnd) % N_LONG];
			cpu = -1;
			s->n.p_task++;
		} else {
			pid = -1;
			cpu = xs(&rnd) % s->ncpu;
		}
		fd[i] = ut_pmu_open(&s->pmu, s->path, off, ret, 0, disabled, pid, cpu);
		if (fd[i] < 0) {
			p_error(s, "perf_event_open", -fd[i]);
			fd[i] = -1;
		} else {
			s->n.p_open++;
			if (disabled && ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0))
				p_error(s, "PERF_EVENT_IOC_ENABLE", errno);
		}
		usleep(xs(&rnd) % 3000);
	}
	for (i = 0; i < N_PERF; i++)
		if (fd[i] >= 0)
			p_close(s, &fd[i]);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The test                                                            */
/* ------------------------------------------------------------------ */

/* What the workers said, line by line, summed. */
struct tally {
	unsigned long reports, calls, forks, vforks, maps, alarms, bp, xol, fails;
	char why[512];
	char buf[8192];
	size_t len;
};

static void tally_line(struct tally *t, const char *line)
{
	unsigned long c, f, v, m, a, b, x;
	int o;

	if (!strncmp(line, "F ", 2)) {
		if (!t->why[0])
			snprintf(t->why, sizeof(t->why), "%s", line + 2);
		return;
	}
	if (sscanf(line, "W %*s %*d " W_COUNTS, &c, &f, &v, &m, &a, &b, &o, &x) != 8)
		return;
	t->reports++;
	t->calls += c;
	t->forks += f;
	t->vforks += v;
	t->maps += m;
	t->alarms += a;
	t->bp += b;
	t->xol += o;
	t->fails += x;
}

static void tally_drain(struct tally *t, int fd)
{
	char *nl, *p;
	ssize_t n;

	for (;;) {
		n = read(fd, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
		if (n <= 0)
			break;
		t->len += n;
		t->buf[t->len] = '\0';
		p = t->buf;
		while ((nl = strchr(p, '\n'))) {
			*nl = '\0';
			tally_line(t, p);
			p = nl + 1;
		}
		t->len -= p - t->buf;
		memmove(t->buf, p, t->len);
		if (t->len == sizeof(t->buf) - 1)
			t->len = 0;	/* no line is that long: drop it */
	}
}

FIXTURE(stress) {
	struct stress s;
	struct tally tl;
	int out[2];
	pid_t short_pid[MAX_SHORT];
	int stopped;
	unsigned long shorts, short_bad, stops, traces, trace_bad, long_bad;
	char bad_why[256];
};

FIXTURE_SETUP(stress)
{
	memset(&self->s, 0, sizeof(self->s));
	memset(&self->tl, 0, sizeof(self->tl));
	self->out[0] = -1;
	self->out[1] = -1;
	ut_probe_del_prefix(GRP, "");
}

static void stop_threads(struct stress *s)
{
	int i;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		if (s->th_running[i])
			pthread_join(s->th[i], NULL);
		s->th_running[i] = false;
	}
}

static void kill_reap(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, __WALL);
	*pid = 0;
}

FIXTURE_TEARDOWN(stress)
{
	int i;

	stop_threads(&self->s);
	for (i = 0; i < N_LONG; i++)
		kill_reap(&self->s.long_pid[i]);
	for (i = 0; i < MAX_SHORT; i++)
		kill_reap(&self->short_pid[i]);
	for (i = 0; i < 2; i++)
		if (self->out[i] >= 0)
			close(self->out[i]);
	ut_probe_del_prefix(GRP, "");
}

static pid_t spawn(const char *path, const char *kind, int idx, int out)
{
	char num[16], *argv[] = { (char *)path, "--worker", (char *)kind, num, NULL };
	pid_t pid;

	snprintf(num, sizeof(num), "%d", idx);
	pid = fork();
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (out < 0)
			out = open("/dev/null", O_WRONLY);
		dup2(out, 1);
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

/* Wait up to @secs for @pid; its wait status, or -1 (then it is killed). */
static int wait_bounded(pid_t pid, int secs)
{
	double end = now_s() + secs;
	int st;

	while (now_s() < end) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/*
 * Attach to @pid, interrupt it, let it sit in its ptrace stop for a
 * moment, detach (handing back a signal it stopped for).  0 or -errno.
 */
static int ptrace_cycle(pid_t pid)
{
	int st, sig = 0, err = 0;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		err = -errno;
	while (!err) {
		if (waitpid(pid, &st, __WALL) != pid) {
			if (errno == EINTR)
				continue;
			err = -errno;
		} else if (!WIFSTOPPED(st)) {
			return -ECHILD;	/* it is gone */
		} else if ((st >> 16) != PTRACE_EVENT_STOP) {
			sig = WSTOPSIG(st);	/* a signal-delivery stop */
		}
		break;
	}
	usleep(2000);
	if (ptrace(PTRACE_DETACH, pid, 0, sig) && !err)
		err = -errno;
	return err;
}

static void note_bad(FIXTURE_DATA(stress) *self, const char *fmt, ...)
{
	va_list ap;

	if (self->bad_why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(self->bad_why, sizeof(self->bad_why), fmt, ap);
	va_end(ap);
}

static void reap_short(FIXTURE_DATA(stress) *self, int i, bool block)
{
	int st;
	pid_t r;

	if (self->short_pid[i] <= 0)
		return;
	if (block) {
		st = wait_bounded(self->short_pid[i], 60);
		r = self->short_pid[i];
	} else {
		r = waitpid(self->short_pid[i], &st, WNOHANG);
	}
	if (r != self->short_pid[i])
		return;
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		self->short_bad++;
		note_bad(self, "short worker %d: status 0x%x", self->short_pid[i], st);
	}
	self->short_pid[i] = 0;
}

/*
 * One run of @secs seconds: workers, both controllers, the stops and the
 * ptrace cycles; then every probe is removed, the workers check their
 * text and exit, and every one of them must have exited with 0.
 */
static void run_phase(struct __test_metadata *_metadata, FIXTURE_DATA(stress) *self,
		      int secs)
{
	struct stress *s = &self->s;
	double end, t0 = now_s();
	unsigned long tick;
	int i, st, err;

	ASSERT_EQ(0, pipe2(self->out, O_CLOEXEC)) TH_LOG("pipe: %s", strerror(errno));
	fcntl(self->out[0], F_SETFL, O_NONBLOCK);
	s->stop = 0;
	for (i = 0; i < N_LONG; i++) {
		s->long_pid[i] = spawn(s->path, "long", i, self->out[1]);
		ASSERT_LT(0, s->long_pid[i]) TH_LOG("fork: %s", strerror(errno));
	}
	ASSERT_EQ(0, pthread_create(&s->th[0], NULL, tracefs_thread, s));
	s->th_running[0] = true;
	ASSERT_EQ(0, pthread_create(&s->th[1], NULL, perf_thread, s));
	s->th_running[1] = true;

	end = now_s() + secs;
	for (tick = 0; now_s() < end; tick++) {
		tally_drain(&self->tl, self->out[0]);
		for (i = 0; i < MAX_SHORT; i++) {
			reap_short(self, i, false);
			if (!self->short_pid[i] && tick % 4 == 0) {
				self->short_pid[i] = spawn(s->path, "short", (int)self->shorts,
							   self->out[1]);
				ASSERT_LT(0, self->short_pid[i])
					TH_LOG("fork: %s", strerror(errno));
				self->shorts++;
			}
		}
		if (tick % 6 == 0) {
			kill(s->long_pid[W_STOPPED], self->stopped ? SIGCONT : SIGSTOP);
			self->stopped = !self->stopped;
			self->stops += self->stopped;
		}
		if (tick % 9 == 0) {
			err = ptrace_cycle(s->long_pid[W_TRACED]);
			if (err) {
				self->trace_bad++;
				note_bad(self, "ptrace cycle: %s", strerror(-err));
			}
			self->traces++;
		}
		usleep(10000);
	}

	/* every probe goes away before the workers are told to finish */
	stop_threads(s);
	if (self->stopped)
		kill(s->long_pid[W_STOPPED], SIGCONT);
	self->stopped = 0;
	for (i = 0; i < N_LONG; i++)
		kill(s->long_pid[i], SIGUSR1);
	for (i = 0; i < N_LONG; i++) {
		st = wait_bounded(s->long_pid[i], 120);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			self->long_bad++;
			note_bad(self, "long worker %d: status 0x%x", i, st);
		}
		s->long_pid[i] = 0;
	}
	for (i = 0; i < MAX_SHORT; i++)
		reap_short(self, i, true);
	close(self->out[1]);
	self->out[1] = -1;
	fcntl(self->out[0], F_SETFL, 0);
	tally_drain(&self->tl, self->out[0]);
	close(self->out[0]);
	self->out[0] = -1;
	say("run of %d s: %.1f s with the wind-down\n", secs, now_s() - t0);
}

/*
 * Slab in kB once things settle: deferred frees (RCU, task_work) get a
 * moment, caches are dropped, and the lowest of three readings counts.
 */
/* Have every SLUB cache give its empty slabs back (none under SLOB). */
static void shrink_slab_caches(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[PATH_MAX];
	int fd;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 e->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		/* A cache that cannot shrink is measured as it is. */
		if (write(fd, "1", 1) != 1)
			errno = 0;
		close(fd);
	}
	closedir(d);
}

/* Settled Slab, and in *@sun the settled SUnreclaim, in kB; -1 on error. */
static long settled_slab_kb(long *sun)
{
	long best = LONG_MAX, v, u;
	int i, fd;

	*sun = LONG_MAX;
	sleep(1);
	for (i = 0; i < 3; i++) {
		fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "3", 1) != 1)
				best = -1;
			close(fd);
		}
		shrink_slab_caches();
		usleep(500000);
		v = ut_meminfo_kb("\nSlab:");
		u = ut_meminfo_kb("\nSUnreclaim:");
		if (v < 0 || u < 0 || best < 0)
			return -1;
		if (v < best)
			best = v;
		if (u < *sun)
			*sun = u;
	}
	return best;
}

/*
 * The slab caches' sizes (objects times object size, kB) from
 * /proc/slabinfo, to say where a growth is when the check fails.
 */
#define N_CACHES 256
struct cache_kb {
	char name[40];
	long kb;
};

static int slab_caches(struct cache_kb *c)
{
	char *all = ut_slurp("/proc/slabinfo", NULL), *line, *save = NULL;
	long objs, size;
	int n = 0;

	for (line = all ? strtok_r(all, "\n", &save) : NULL; line && n < N_CACHES;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%39s %*d %ld %ld", c[n].name, &objs, &size) == 3)
			c[n++].kb = objs * size / 1024;
	free(all);
	return n;
}

/* @name's size in @c (@n caches), or -1 if it is not there. */
static long cache_kb_of(const struct cache_kb *c, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return c[i].kb;
	return -1;
}

/*
 * How much the vmap_area cache grew since @c0: the kernel's bookkeeping
 * of vmalloc ranges, which grows with every exited task's vmalloc'ed
 * stack until a lazy purge that no user-space action triggers.  uprobes
 * allocates nothing with vmalloc but tables too big for kmalloc.
 */
static long vmap_growth_kb(const struct cache_kb *c0, int n0)
{
	struct cache_kb c1[N_CACHES];
	int n1 = slab_caches(c1);
	long before = cache_kb_of(c0, n0, "vmap_area");
	long after = cache_kb_of(c1, n1, "vmap_area");

	return before >= 0 && after > before ? after - before : 0;
}

/* The six caches that grew most since @c0 (@n0 of them). */
static void say_growth(const struct cache_kb *c0, int n0)
{
	struct cache_kb c1[N_CACHES];
	int n1 = slab_caches(c1), i, j, shown;
	long best, d;

	for (i = 0; i < n1; i++) {
		d = cache_kb_of(c0, n0, c1[i].name);
		c1[i].kb -= d < 0 ? 0 : d;	/* now the growth */
	}
	for (shown = 0; shown < 6; shown++) {
		best = 0;
		j = -1;
		for (i = 0; i < n1; i++) {
			if (c1[i].kb > best) {
				best = c1[i].kb;
				j = i;
			}
		}
		if (j < 0)
			break;
		say("slab cache %s: %+ld kB\n", c1[j].name, best);
		c1[j].kb = 0;
	}
}

/* No front end, worker or process of the runs so far reported an error. */
static void run_had_no_errors(struct __test_metadata *_metadata,
			      FIXTURE_DATA(stress) *self)
{
	struct stress *s = &self->s;

	EXPECT_EQ(0, s->n.t_err) TH_LOG("tracefs: %s", s->n.t_why);
	EXPECT_EQ(0, s->n.p_err) TH_LOG("perf: %s", s->n.p_why);
	EXPECT_EQ(0, self->tl.fails) TH_LOG("a worker: %s", self->tl.why);
	EXPECT_EQ(0, self->long_bad) TH_LOG("%s", self->bad_why);
	EXPECT_EQ(0, self->short_bad) TH_LOG("%s", self->bad_why);
	EXPECT_EQ(0, self->trace_bad) TH_LOG("%s", self->bad_why);
}

/*
 * Settled Slab after a run (kB), its SUnreclaim in *@sun and the growth
 * of vmap_area since @c0 in *@vmap.  Frees deferred past grace periods
 * and workqueues (probes, tables, tasks) may still be on their way: a
 * leak stays, they do not, so a growth over the tolerance is looked at
 * again a little later.
 */
static long slab_growth(long sun0, long *sun, long *vmap,
			const struct cache_kb *c0, int n0)
{
	long slab = settled_slab_kb(sun);
	int i;

	*vmap = vmap_growth_kb(c0, n0);
	for (i = 0; i < 3 && *sun - sun0 - *vmap > STRESS_SLAB_TOLERANCE_KB; i++) {
		say("SUnreclaim %+ld kB (vmap_area %+ld kB): looking again\n",
		    *sun - sun0, *vmap);
		sleep(3);
		slab = settled_slab_kb(sun);
		*vmap = vmap_growth_kb(c0, n0);
	}
	return slab;
}

TEST_F_TIMEOUT(stress, probes_come_and_go_under_busy_processes, 500)
{
	struct cache_kb caches0[N_CACHES];
	int ncaches0;
	long vmap;
	struct stress *s = &self->s;
	unsigned char orig[N_SYMS][TEXT_CHECK], now[TEXT_CHECK];
	long slab0, slab1, sun0, sun1;
	uint64_t hash0;
	char *events;
	int i, st;
	ssize_t n;

	n = readlink("/proc/self/exe", s->path, sizeof(s->path) - 1);
	ASSERT_LT(0, n);
	s->path[n] = '\0';
	for (i = 0; i < N_SYMS; i++) {
		UT_SYM(s->off[i], s->path, st_syms[i]);
		ASSERT_EQ(0, ut_file_bytes(s->path, s->off[i], orig[i], TEXT_CHECK));
		ASSERT_NE(0xcc, orig[i][0]) TH_LOG("%s starts with int3 in the file", st_syms[i]);
	}
	hash0 = ut_file_hash(s->path);
	ASSERT_NE(0, hash0);
	ut_pmu_init(&s->pmu);
	ASSERT_LE(0, s->pmu.type) TH_LOG("no uprobe PMU at " PMU);
	ASSERT_LE(0, s->pmu.retprobe_bit)
		TH_LOG("no retprobe format bit at " PMU "/format/retprobe");
	s->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, s->ncpu);

	/* warm-up: what the kernel allocates once and keeps is not a leak */
	run_phase(_metadata, self, STRESS_WARMUP_S);
	ASSERT_EQ(0, s->n.t_err) TH_LOG("warm-up, tracefs: %s", s->n.t_why);
	ASSERT_EQ(0, s->n.p_err) TH_LOG("warm-up, perf: %s", s->n.p_why);
	ASSERT_EQ(0, self->tl.fails) TH_LOG("warm-up, a worker: %s", self->tl.why);
	ASSERT_EQ(0, self->bad_why[0]) TH_LOG("warm-up: %s", self->bad_why);
	memset(&self->tl, 0, sizeof(self->tl));
	memset(&s->n.t_def, 0, (char *)(s + 1) - (char *)&s->n.t_def);
	self->shorts = 0;
	self->stops = 0;
	self->traces = 0;
	slab0 = settled_slab_kb(&sun0);
	ASSERT_LT(0, slab0) TH_LOG("cannot read Slab from /proc/meminfo");
	ncaches0 = slab_caches(caches0);

	run_phase(_metadata, self, STRESS_RUN_S);

	say("tracefs: %lu defined, %lu enabled, %lu disabled, %lu deleted, %lu hits\n",
	    s->n.t_def, s->n.t_en, s->n.t_dis, s->n.t_undef, s->n.t_hits);
	say("perf: %lu opened (%lu per task, %lu return probes), %lu closed, %lu hits\n",
	    s->n.p_open, s->n.p_task, s->n.p_ret, s->n.p_close, s->n.p_hits);
	say("processes: %d long-lived, %lu short-lived started by the test, %lu reports\n",
	    N_LONG, self->shorts, self->tl.reports);
	say("workers: %lu rounds, %lu forks, %lu vfork+exec, %lu remap cycles, %lu SIGALRMs\n",
	    self->tl.calls, self->tl.forks, self->tl.vforks, self->tl.maps,
	    self->tl.alarms);
	say("stops: %lu SIGSTOP/SIGCONT, %lu ptrace seize/interrupt/detach\n",
	    self->stops, self->traces);
	say("seen by the workers: int3 at st_leaf in %lu rounds, a [uprobes] area in %lu of %d\n",
	    self->tl.bp, self->tl.xol, N_LONG);

	run_had_no_errors(_metadata, self);
	/* every process reported: 4 long, the test's short ones, the exec'd ones */
	EXPECT_EQ(N_LONG + self->shorts + self->tl.vforks, self->tl.reports);
	/* the run did what it says: probes fired through both front ends */
	EXPECT_LT(0, s->n.t_hits);
	EXPECT_LT(0, s->n.p_hits);
	EXPECT_LT(0, self->tl.forks);
	EXPECT_LT(0, self->tl.vforks);
	EXPECT_LT(0, self->tl.maps);
	EXPECT_LT(0, self->tl.alarms);
	EXPECT_LT(0, self->traces);
	EXPECT_LT(0, self->stops);
	/* and the checks made at the end would have seen a breakpoint or an area */
	EXPECT_LT(0, self->tl.bp);
	EXPECT_LT(0, self->tl.xol);

	/* none of our events is left */
	events = ut_read("uprobe_events");
	ASSERT_NE(NULL, events);
	EXPECT_EQ(NULL, strstr(events, ":" GRP "/")) TH_LOG("left: %s", events);
	free(events);

	/* The kernel's memory came back. */
	slab1 = slab_growth(sun0, &sun1, &vmap, caches0, ncaches0);
	say("SUnreclaim %ld -> %ld kB (%+ld, vmap_area %+ld; Slab %+ld), tolerance %d kB\n",
	    sun0, sun1, sun1 - sun0, vmap, slab1 - slab0, STRESS_SLAB_TOLERANCE_KB);
	EXPECT_LT(0, slab1) TH_LOG("cannot read Slab from /proc/meminfo");
	if (sun1 - sun0 - vmap > STRESS_SLAB_TOLERANCE_KB) {
		/*
		 * Some growth comes once and stays for minutes: a kworker
		 * started under load (an idle one lives 5 min), a slab page
		 * a long-lived object keeps.  A leak grows with the work:
		 * the same run again, from here, decides.
		 */
		say_growth(caches0, ncaches0);
		say("over the tolerance: the measured run once more\n");
		slab0 = slab1;
		sun0 = sun1;
		ncaches0 = slab_caches(caches0);
		run_phase(_metadata, self, STRESS_RUN_S);
		run_had_no_errors(_metadata, self);
		slab1 = slab_growth(sun0, &sun1, &vmap, caches0, ncaches0);
		say("second run: SUnreclaim %ld -> %ld kB (%+ld, vmap_area %+ld; Slab %+ld)\n",
		    sun0, sun1, sun1 - sun0, vmap, slab1 - slab0);
		EXPECT_LT(0, slab1) TH_LOG("cannot read Slab from /proc/meminfo");
		if (sun1 - sun0 - vmap > STRESS_SLAB_TOLERANCE_KB)
			say_growth(caches0, ncaches0);
	}
	EXPECT_GE(STRESS_SLAB_TOLERANCE_KB, sun1 - sun0 - vmap);

	/* processes started now find no breakpoint and get no [uprobes] area */
	for (i = 0; i < 2; i++) {
		pid_t pid = spawn(s->path, "check", i, -1);

		ASSERT_LT(0, pid);
		st = wait_bounded(pid, 60);
		EXPECT_TRUE(st != -1 && WIFEXITED(st) && !WEXITSTATUS(st))
			TH_LOG("a process started after the run: status 0x%x", st);
	}

	/* the file, read with read(), and our own text are as they were */
	EXPECT_EQ(hash0, ut_file_hash(s->path)) TH_LOG("the probed file changed");
	for (i = 0; i < N_SYMS; i++) {
		ASSERT_EQ(0, ut_file_bytes(s->path, s->off[i], now, TEXT_CHECK));
		EXPECT_EQ(0, memcmp(orig[i], now, TEXT_CHECK))
			TH_LOG("%s's bytes in the file changed", st_syms[i]);
		EXPECT_EQ(0, memcmp(orig[i], st_addr(i), TEXT_CHECK))
			TH_LOG("%s's bytes in the test's own text changed", st_syms[i]);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--worker"))
		return worker_main(argc, argv);
	if (geteuid())
		ksft_exit_skip("uprobes tests need root\n");
	if (!ut_tracefs_dir())
		ksft_exit_skip("no uprobe_events in tracefs (CONFIG_UPROBE_EVENTS)\n");
	return test_harness_run(argc, argv);
}
