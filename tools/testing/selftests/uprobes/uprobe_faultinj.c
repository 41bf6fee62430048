// SPDX-License-Identifier: GPL-2.0
/*
 * Allocations that fail on the registration and hit paths (failslab and
 * fail_page_alloc, CONFIG_FAULT_INJECTION_DEBUG_FS) become a clean error
 * or a skipped hit: never a half-installed probe, a harmed program or a
 * changed file.
 *
 * Registration: defining an event, enabling it while two programs map
 * the probed file, and opening a uprobe PMU event on one of them, with
 * the n-th allocation of the registering thread failing
 * (/proc/thread-self/fail-nth), for n = 1, 2, ... until the operation
 * makes fewer than n; then the same with the three allocations after
 * the n-th failing too (the process's make-it-fail, probability 100,
 * times 4), so that the undoing of a half-done registration meets
 * failures of its own.  An attempt either works fully (hits counted
 * exactly) or fails with an errno, after which nothing of it is left:
 * the programs compute right, see their original instruction and get no
 * SIGTRAP, no event is enabled, the definition can be removed and a
 * clean registration counts exactly.
 *
 * Hit path: a program's first hits of a stepped, an emulated and a
 * return probe with its n-th allocation failing, and a loop of hits with
 * the program's allocations failing (make-it-fail, set by the program
 * itself only around the loop, so that its own syscalls and page faults
 * happen outside).  Its results are right, it exits normally, a hit may
 * be skipped but never counted twice, and once injection stops the
 * counts are exact again.
 *
 * Throughout, the probed file's bytes (read(), and a MAP_SHARED view)
 * stay those of a copy taken first.  Kernel reports (WARN, KASAN,
 * lockdep, kmemleak) are caught by the harness from the console.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_fi"
#define PMU UT_PMU
#define DBG "/sys/kernel/debug"

/* Upper bounds of the n-th-allocation sweeps: each ends on its own first. */
#define NTH_REG_MAX	400
#define NTH_HIT_MAX	120
/* Allocations that fail after the n-th in the second sweep. */
#define THEN		3
/* Calls of the probed function after each attempt. */
#define CALLS		20

enum fi_cap { FI_SLAB, FI_PAGE };

static const char *const cap_dir[] = { "failslab", "fail_page_alloc" };

/* The debugfs knobs this test writes, saved in setup, put back in teardown. */
static const char *const knobs[] = {
	"failslab/task-filter", "failslab/probability", "failslab/interval",
	"failslab/times", "failslab/space", "failslab/verbose",
	"failslab/ignore-gfp-wait", "failslab/cache-filter",
	"fail_page_alloc/task-filter", "fail_page_alloc/probability",
	"fail_page_alloc/interval", "fail_page_alloc/times",
	"fail_page_alloc/space", "fail_page_alloc/verbose",
	"fail_page_alloc/ignore-gfp-wait", "fail_page_alloc/ignore-gfp-highmem",
	"fail_page_alloc/min-order",
};

#define N_KNOBS ARRAY_SIZE(knobs)

static int knob_write(const char *knob, const char *val)
{
	char p[PATH_MAX];
	int fd, err = 0;

	snprintf(p, sizeof(p), DBG "/%s", knob);
	fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static long knob_read(const char *knob)
{
	char p[PATH_MAX], *s;
	long v;

	snprintf(p, sizeof(p), DBG "/%s", knob);
	s = ut_slurp(p, NULL);
	if (!s)
		return LONG_MIN;
	v = strtol(s, NULL, 0);
	free(s);
	return v;
}

static int cap_write(enum fi_cap cap, const char *knob, const char *val)
{
	char k[128];

	snprintf(k, sizeof(k), "%s/%s", cap_dir[cap], knob);
	return knob_write(k, val);
}

FIXTURE(fi) {
	struct ut_ctx c;
	char target[PATH_MAX];
	char why[160];		/* why the case cannot run, or "" */
	char saved[N_KNOBS][32];
	bool restore;
	char record_cmd;	/* options/record-cmd to put back, or 0 */
	int nth_fd;		/* /proc/thread-self/fail-nth */
	int mif_fd;		/* /proc/self/make-it-fail */
	char *copy;		/* the target file as it was at setup */
	size_t len;
	void *shared;		/* a MAP_SHARED view of it */
	struct ut_pmu pmu;
	long off;		/* offset of the probed function */
	const char *fn;
};

FIXTURE_SETUP(fi)
{
	unsigned int i;
	int fd;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	self->nth_fd = -1;
	self->mif_fd = -1;
	self->shared = MAP_FAILED;

	/* debugfs may not be mounted yet. */
	if (access(DBG "/failslab", F_OK))
		mount("debugfs", DBG, "debugfs", 0, NULL);
	if (access(DBG "/failslab/probability", F_OK) ||
	    access(DBG "/fail_page_alloc/probability", F_OK) ||
	    access("/proc/self/make-it-fail", F_OK) ||
	    access("/proc/thread-self/fail-nth", F_OK)) {
		snprintf(self->why, sizeof(self->why),
			 "no fault injection in this kernel (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)");
		return;
	}
	for (i = 0; i < N_KNOBS; i++) {
		char p[PATH_MAX], *s;

		snprintf(p, sizeof(p), DBG "/%s", knobs[i]);
		s = ut_slurp(p, NULL);
		ASSERT_NE(NULL, s) TH_LOG("cannot read %s", p);
		snprintf(self->saved[i], sizeof(self->saved[i]), "%s", s);
		free(s);
	}
	self->restore = true;
	/*
	 * Only tasks with make-it-fail set, and nothing else: the filter
	 * first, before any probability is raised.  verbose=0: a forced
	 * failure must not print a stack dump, which reads as a kernel
	 * report in the console.
	 */
	for (i = FI_SLAB; i <= FI_PAGE; i++) {
		ASSERT_EQ(0, cap_write(i, "task-filter", "1"));
		ASSERT_EQ(0, cap_write(i, "probability", "0"));
		ASSERT_EQ(0, cap_write(i, "verbose", "0"));
		ASSERT_EQ(0, cap_write(i, "interval", "1"));
		ASSERT_EQ(0, cap_write(i, "space", "0"));
	}
	/*
	 * Enabling an event also starts the trace core's comm recording,
	 * whose failure path unregisters tracepoint probes it never
	 * registered and WARNs (kernel/trace/trace_sched_switch.c, every
	 * kernel): not the probe's path, so keep it out of the way.
	 */
	{
		char *rc = ut_read("options/record-cmd");

		if (rc && (rc[0] == '0' || rc[0] == '1') &&
		    !ut_write("options/record-cmd", "0"))
			self->record_cmd = rc[0];
		free(rc);
	}
	self->nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	ASSERT_LE(0, self->nth_fd);
	self->mif_fd = open("/proc/self/make-it-fail", O_RDWR);
	ASSERT_LE(0, self->mif_fd);

	self->copy = ut_slurp(self->target, &self->len);
	ASSERT_NE(NULL, self->copy);
	fd = open(self->target, O_RDONLY);
	ASSERT_LE(0, fd);
	self->shared = mmap(NULL, self->len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, self->shared);
	ut_pmu_init(&self->pmu);
}

FIXTURE_TEARDOWN(fi)
{
	unsigned int i;

	if (self->mif_fd >= 0) {
		pwrite(self->mif_fd, "0", 1, 0);
		close(self->mif_fd);
	}
	if (self->nth_fd >= 0) {
		pwrite(self->nth_fd, "0", 1, 0);
		close(self->nth_fd);
	}
	ut_ctx_cleanup(&self->c);
	if (self->record_cmd) {
		char v[2] = { self->record_cmd, '\0' };

		ut_write("options/record-cmd", v);
	}
	/* Probabilities back first, the filter last. */
	if (self->restore) {
		for (i = N_KNOBS; i-- > 0;)
			knob_write(knobs[i], self->saved[i]);
	}
	if (self->shared != MAP_FAILED)
		munmap(self->shared, self->len);
	free(self->copy);
}

#define NEED_FI() do {								\
	if (self->why[0])							\
		SKIP(return, "%s", self->why);					\
} while (0)

/*
 * Let only @cap fail: its gates open (GFP_KERNEL allocations, highmem
 * and order-0 pages included), the other's shut, so that neither a
 * probability nor fail-nth reaches the other.  @prob and @times for the
 * make-it-fail filter.
 */
static int fi_arm(enum fi_cap cap, int prob, long times)
{
	char v[32];
	int err = 0;

	err |= cap_write(FI_SLAB, "ignore-gfp-wait", "0");
	err |= cap_write(FI_SLAB, "cache-filter", cap == FI_SLAB ? "0" : "1");
	err |= cap_write(FI_PAGE, "ignore-gfp-wait", "0");
	err |= cap_write(FI_PAGE, "ignore-gfp-highmem", "0");
	/* No order is that large: fail_page_alloc is shut. */
	err |= cap_write(FI_PAGE, "min-order", cap == FI_PAGE ? "0" : "32");
	err |= cap_write(!cap, "probability", "0");
	snprintf(v, sizeof(v), "%ld", times);
	err |= cap_write(cap, "times", v);
	snprintf(v, sizeof(v), "%d", prob);
	err |= cap_write(cap, "probability", v);
	return err;
}

static void fi_disarm(void)
{
	cap_write(FI_SLAB, "probability", "0");
	cap_write(FI_PAGE, "probability", "0");
}

/* ------------------------------------------------------------------ */
/* What must hold after every attempt                                  */
/* ------------------------------------------------------------------ */

/* The probed file, by read() and through the shared mapping, is unchanged. */
static void check_file(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self)
{
	size_t len;
	char *now = ut_slurp(self->target, &len);

	ASSERT_NE(NULL, now);
	EXPECT_EQ(self->len, len);
	EXPECT_EQ(0, memcmp(self->copy, now, len < self->len ? len : self->len))
		TH_LOG("the probed file's bytes changed (read())");
	EXPECT_EQ(0, memcmp(self->copy, self->shared, self->len))
		TH_LOG("the probed file's bytes changed (MAP_SHARED view)");
	free(now);
}

/*
 * Each target runs the probed function CALLS times with right results,
 * sees its original first byte and is still alive (a SIGTRAP would have
 * killed it: the command would get no answer).
 */
static void check_targets(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
			  struct ut_target **t, int nt, const char *when)
{
	char r[256], want[32];
	int i;

	snprintf(want, sizeof(want), "ok 0x%02x", (unsigned char)self->copy[self->off]);
	for (i = 0; i < nt; i++) {
		UT_CMD(t[i], r, "call %s %d 3 4", self->fn, CALLS);
		EXPECT_EQ(7, ut_okval(r)) TH_LOG("%s(3, 4) in target %d %s", self->fn, i, when);
		UT_CMD(t[i], r, "byte %s", self->fn);
		EXPECT_STREQ(want, r) TH_LOG("first byte of %s in target %d %s",
					     self->fn, i, when);
	}
}

/* Ask the target to exit; it must do so normally, with status 0. */
static void target_exit(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
			struct ut_target *t)
{
	char r[256];
	int st;

	UT_CMD(t, r, "exit 0");
	st = ut_target_stop(t);
	self->c.ntg--;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the program ended with status 0x%x", st);
}

/* No event of ours is enabled, and event @i is neither enabled nor counted. */
static void check_idle(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self, int i)
{
	char f[PATH_MAX], *s;

	if (ut_event_exists(GRP, ut_ev(&self->c, i))) {
		snprintf(f, sizeof(f), "events/%s/%s/enable", GRP, ut_ev(&self->c, i));
		s = ut_read(f);
		ASSERT_NE(NULL, s);
		EXPECT_EQ('0', s[0]) TH_LOG("event left enabled after a failed attempt");
		free(s);
	}
	s = ut_read("events/" GRP "/enable");
	if (s) {
		EXPECT_EQ('0', s[0]) TH_LOG("an event of " GRP " is enabled: %s", s);
		free(s);
	}
}

/* ------------------------------------------------------------------ */
/* Injection around one operation of this thread                       */
/* ------------------------------------------------------------------ */

/*
 * The @n-th allocation of this thread fails (fail-nth) and, if @then,
 * the @then allocations after it too: the process has make-it-fail set,
 * with probability 100 and times @then + 1 (the n-th failure counts), so
 * that the error path of the first failure meets failures of its own.
 */
struct inj {
	enum fi_cap cap;
	long n;
	long then;
};

static int inj_begin(FIXTURE_DATA(fi) *self, struct inj *j)
{
	char v[32];
	int len;

	if (fi_arm(j->cap, j->then ? 100 : 0, j->then + 1))
		return -1;
	if (j->then && pwrite(self->mif_fd, "1", 1, 0) != 1)
		return -1;
	len = snprintf(v, sizeof(v), "%ld", j->n);
	return pwrite(self->nth_fd, v, len, 0) == len ? 0 : -1;
}

/* Ends the injection; returns whether the n-th allocation was reached. */
static bool inj_end(FIXTURE_DATA(fi) *self, struct inj *j)
{
	char v[32] = "";

	/* What is left of the count: 0 once the n-th call failed. */
	pread(self->nth_fd, v, sizeof(v) - 1, 0);
	pwrite(self->nth_fd, "0", 1, 0);
	if (j->then)
		pwrite(self->mif_fd, "0", 1, 0);
	fi_disarm();
	return strtol(v, NULL, 10) == 0;
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */

enum reg_op { OP_DEFINE, OP_ENABLE, OP_PERF };

static const char *const op_name[] = { "define", "enable", "perf_event_open" };

static int perf_uprobe(FIXTURE_DATA(fi) *self, pid_t pid)
{
	return ut_pmu_open(&self->pmu, self->target, self->off, false, 0,
			   false, pid, -1);
}

static void probe_def(FIXTURE_DATA(fi) *self, char *buf, size_t len)
{
	snprintf(buf, len, "p:%s/%s %s:0x%lx", GRP, ut_ev(&self->c, 0),
		 self->target, self->off);
}

/*
 * One attempt of @op with injection @j, the targets running: it works
 * fully or fails cleanly.  Returns whether the n-th allocation was made.
 */
static bool reg_attempt(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
			enum reg_op op, struct inj *j, struct ut_target **t, int nt)
{
	char def[PATH_MAX + 128], f[PATH_MAX], p[PATH_MAX], *s;
	const char *ev = ut_ev(&self->c, 0);
	char when[128];
	bool fired;
	long hits;
	int fd, err = 0, pfd = -1;
	char r[256];

	probe_def(self, def, sizeof(def));
	if (op == OP_DEFINE) {
		ut_tpath(p, sizeof(p), "uprobe_events");
	} else if (op == OP_ENABLE) {
		ASSERT_EQ(0, ut_probe_add(def));
		snprintf(f, sizeof(f), "events/%s/%s/enable", GRP, ev);
		ut_tpath(p, sizeof(p), f);
	}
	fd = -1;
	if (op != OP_PERF) {
		fd = open(p, O_WRONLY | (op == OP_DEFINE ? O_APPEND : O_TRUNC));
		ASSERT_LE(0, fd) TH_LOG("open %s: %s", p, strerror(errno));
	}

	/* Nothing between the two but the operation. */
	ASSERT_EQ(0, inj_begin(self, j));
	if (op == OP_DEFINE)
		err = write(fd, def, strlen(def)) < 0 ? -errno : 0;
	else if (op == OP_ENABLE)
		err = write(fd, "1", 1) < 0 ? -errno : 0;
	else
		pfd = perf_uprobe(self, t[0]->pid);
	fired = inj_end(self, j);
	snprintf(when, sizeof(when), "after %s, allocation %ld and the %ld next failing",
		 op_name[op], j->n, j->then);

	if (op == OP_PERF)
		err = pfd < 0 ? pfd : 0;
	if (fd >= 0)
		close(fd);
	if (err < 0 && !fired)
		TH_LOG("%s failed with nothing injected: %s", op_name[op], strerror(-err));
	ASSERT_TRUE(err >= 0 || fired);

	if (err < 0) {
		/* A clean error: nothing of the attempt is left. */
		if (op == OP_DEFINE) {
			EXPECT_FALSE(ut_event_exists(GRP, ev))
				TH_LOG("definition failed (%s) but the event exists",
				       strerror(-err));
			s = ut_read("uprobe_events");
			ASSERT_NE(NULL, s);
			EXPECT_EQ(NULL, strstr(s, ev))
				TH_LOG("definition failed but is listed: %s", s);
			free(s);
		}
		check_idle(_metadata, self, 0);
		check_targets(_metadata, self, t, nt, when);
		if (op != OP_PERF) {
			hits = UT_HITS(0);
			EXPECT_GE(0, hits)
				TH_LOG("%ld hits after a failed %s", hits, op_name[op]);
		}
	} else {
		/* It worked: it counts exactly. */
		if (op == OP_DEFINE) {
			s = ut_read("uprobe_events");
			ASSERT_NE(NULL, s);
			EXPECT_NE(NULL, strstr(s, ev)) TH_LOG("defined but not listed");
			free(s);
			snprintf(f, sizeof(f), "events/%s/%s/enable", GRP, ev);
			ut_tpath(p, sizeof(p), f);
			if (access(p, F_OK)) {
				/*
				 * The trace event core (not the probe)
				 * ignores a tracefs file it could not make,
				 * on every kernel: no enable file to count
				 * with.  The definition must still go.
				 */
				TH_LOG("no %s after define with allocation %ld failing", f, j->n);
				goto remove;
			}
			ASSERT_EQ(0, ut_event_enable(GRP, ev, true));
		}
		UT_CMD(t[0], r, "call %s %d 3 4", self->fn, CALLS);
		EXPECT_EQ(7, ut_okval(r));
		if (op == OP_PERF) {
			unsigned long long v = 0;

			EXPECT_EQ(sizeof(v), read(pfd, &v, sizeof(v)));
			EXPECT_EQ(CALLS, v) TH_LOG("perf count after %s, allocation %ld failing",
						   op_name[op], j->n);
			close(pfd);
		} else {
			EXPECT_EQ(CALLS, UT_HITS(0))
				TH_LOG("hits after %s, allocation %ld failing", op_name[op], j->n);
			EXPECT_EQ(0, ut_event_enable(GRP, ev, false));
		}
	}
remove:
	if (op == OP_ENABLE || (op == OP_DEFINE && err >= 0)) {
		err = ut_probe_del(GRP, ev);
		EXPECT_EQ(0, err) TH_LOG("removing the definition: %s", strerror(-err));
	}
	EXPECT_FALSE(ut_event_exists(GRP, ev));
	check_targets(_metadata, self, t, nt, when);
	check_file(_metadata, self);
	return fired;
}

/* A registration that must simply work and count exactly. */
static void reg_clean(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
		      struct ut_target **t)
{
	char r[256];

	UT_PROBE(0, 'p', self->target, self->off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t[0], r, "call %s %d 3 4", self->fn, CALLS);
	UT_CMD(t[1], r, "call %s %d 3 4", self->fn, CALLS);
	EXPECT_EQ(7, ut_okval(r));
	EXPECT_EQ(2 * CALLS, UT_HITS(0));
	UT_ENABLE(0, false);
	ASSERT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, 0)));
	self->c.nev = 0;
}

static void reg_sweep(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
		      enum reg_op op, enum fi_cap cap)
{
	struct ut_target *t[2];
	struct inj j = { cap, 0, 0 };
	long total[2] = { 0, 0 }, n;

	NEED_FI();
	if (op == OP_PERF && self->pmu.type < 0)
		SKIP(return, "no uprobe PMU at " PMU);
	self->fn = "ut_step";
	UT_SYM(self->off, self->target, self->fn);
	UT_START(t[0], "uprobe_target", NULL);
	UT_START(t[1], "uprobe_target", NULL);
	check_targets(_metadata, self, t, 2, "at start");
	/*
	 * A clean round first: the trace buffer is expanded and caches
	 * grown once, so that the sweep sees only the operation's own
	 * allocations.
	 */
	reg_clean(_metadata, self, t);

	/*
	 * The n-th allocation fails, alone and then with the next THEN,
	 * for every n the operation reaches.
	 */
	for (j.then = 0; j.then <= THEN; j.then += THEN) {
		for (n = 1; n <= NTH_REG_MAX; n++) {
			j.n = n;
			if (!reg_attempt(_metadata, self, op, &j, t, 2))
				break;
			total[!!j.then]++;
		}
		EXPECT_GE(NTH_REG_MAX, n) TH_LOG("%s made more than %d allocations",
						 op_name[op], NTH_REG_MAX);
	}
	/* Defining an event may find its slab pages already there. */
	if (cap == FI_SLAB || op != OP_DEFINE)
		EXPECT_LT(0, total[0]) TH_LOG("no allocation of %s could be made to fail",
					      op_name[op]);
	TH_LOG("%s under %s: %ld allocations made to fail, alone and with the next %d",
	       op_name[op], cap_dir[cap], total[0], THEN);
	/* Afterwards a clean registration works and counts exactly. */
	reg_clean(_metadata, self, t);
	check_idle(_metadata, self, 0);
	check_file(_metadata, self);
	target_exit(_metadata, self, t[1]);
	target_exit(_metadata, self, t[0]);
	/* Nothing else was hurt: a new program, its libraries opened anew, runs. */
	UT_START(t[0], "uprobe_target", NULL);
	check_targets(_metadata, self, t, 1, "started after the sweep");
	target_exit(_metadata, self, t[0]);
}

TEST_F_TIMEOUT(fi, define_under_failslab, 900)
{
	reg_sweep(_metadata, self, OP_DEFINE, FI_SLAB);
}

TEST_F_TIMEOUT(fi, define_under_fail_page_alloc, 900)
{
	reg_sweep(_metadata, self, OP_DEFINE, FI_PAGE);
}

TEST_F_TIMEOUT(fi, enable_under_failslab, 900)
{
	reg_sweep(_metadata, self, OP_ENABLE, FI_SLAB);
}

TEST_F_TIMEOUT(fi, enable_under_fail_page_alloc, 900)
{
	reg_sweep(_metadata, self, OP_ENABLE, FI_PAGE);
}

TEST_F_TIMEOUT(fi, perf_open_under_failslab, 900)
{
	reg_sweep(_metadata, self, OP_PERF, FI_SLAB);
}

TEST_F_TIMEOUT(fi, perf_open_under_fail_page_alloc, 900)
{
	reg_sweep(_metadata, self, OP_PERF, FI_PAGE);
}

/* ------------------------------------------------------------------ */
/* Hit path                                                            */
/* ------------------------------------------------------------------ */

/* What ut_step(a, 1) and ut_push(a) return. */
static long want_of(long a)
{
	return a + 1;
}

/*
 * Hits of this case's event by @pid: its trace lines, one per entry or
 * return on every kernel (uprobe_profile counts a return probe's entries
 * on some, its returns on others).
 */
static long hits_of(FIXTURE_DATA(fi) *self, pid_t pid)
{
	return ut_trace_count(ut_ev(&self->c, 0), pid);
}

/*
 * A fresh program's first hit with its n-th allocation failing, for
 * every n that the hit (with its step or return) reaches; then CALLS
 * more hits without injection.
 */
static void hit_nth_sweep(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
			  const char *fn, char type, enum fi_cap cap)
{
	long n, res, left, hits, total = 0;
	struct ut_target *t;
	char r[256];

	NEED_FI();
	self->fn = fn;
	UT_SYM(self->off, self->target, fn);
	UT_PROBE(0, type, self->target, self->off, NULL, NULL);
	UT_ENABLE(0, true);
	ASSERT_EQ(0, fi_arm(cap, 0, 0));
	for (n = 1; n <= NTH_HIT_MAX; n++) {
		t = ut_ctx_target(&self->c, "uprobe_target", NULL);
		ASSERT_NE(NULL, t);
		UT_CMD(t, r, "failnth %s %ld 41", fn, n);
		ASSERT_EQ(2, sscanf(r, "ok %ld %ld", &res, &left)) TH_LOG("%s", r);
		EXPECT_EQ(want_of(41), res)
			TH_LOG("%s(41) with allocation %ld failing", fn, n);
		UT_CMD(t, r, "call %s %d 5 1", fn, CALLS);
		EXPECT_EQ(want_of(5), ut_okval(r));
		hits = hits_of(self, t->pid);
		/* The injected hit may be skipped, never counted twice. */
		EXPECT_TRUE(hits == CALLS || hits == CALLS + 1)
			TH_LOG("%ld hits of %s for %d calls, allocation %ld of the first failing",
			       hits, fn, CALLS + 1, n);
		target_exit(_metadata, self, t);
		if (left)
			break;
		total++;
	}
	fi_disarm();
	EXPECT_GE(NTH_HIT_MAX, n);
	/* An emulated hit may find its slab pages already there. */
	if (cap == FI_SLAB || strcmp(fn, "ut_push"))
		EXPECT_LT(0, total) TH_LOG("no allocation of the first hit could be made to fail");
	TH_LOG("%s %c hit under %s: %ld allocations made to fail one at a time",
	       fn, type, cap_dir[cap], total);
	check_file(_metadata, self);
}

/*
 * A loop of calls with the program's allocations failing: first its
 * first 8, then each with probability 20%, both only during the loop.
 * Results right, normal exit, hits <= calls, exact afterwards.
 */
static void hit_loop(struct __test_metadata *_metadata, FIXTURE_DATA(fi) *self,
		     const char *fn, char type, enum fi_cap cap, bool must_fire)
{
	static const struct { int prob; long times; } mode[] = { { 100, 8 }, { 20, -1 } };
	const long n = 2000;
	struct ut_target *t;
	long sum, hits, left;
	unsigned int m;
	char r[256];

	NEED_FI();
	self->fn = fn;
	UT_TRACE_ROOM(2 * (n + CALLS));
	UT_SYM(self->off, self->target, fn);
	UT_PROBE(0, type, self->target, self->off, NULL, NULL);
	UT_ENABLE(0, true);
	for (m = 0; m < 2; m++) {
		t = ut_ctx_target(&self->c, "uprobe_target", NULL);
		ASSERT_NE(NULL, t);
		UT_CMD(t, r, "ping");
		ASSERT_EQ(0, fi_arm(cap, mode[m].prob, mode[m].times));
		UT_CMD(t, r, "failloop %s %ld", fn, n);
		fi_disarm();
		ASSERT_EQ(1, sscanf(r, "ok %ld", &sum)) TH_LOG("%s", r);
		/* fn(i) = i + 1 for i < n */
		EXPECT_EQ(n * (n + 1) / 2, sum) TH_LOG("sum of %s over the loop", fn);
		hits = hits_of(self, t->pid);
		EXPECT_GE(n, hits) TH_LOG("%ld hits for %ld calls", hits, n);
		EXPECT_LT(0, hits);
		if (mode[m].times > 0 && must_fire) {
			left = knob_read(cap == FI_SLAB ? "failslab/times" :
					 "fail_page_alloc/times");
			EXPECT_EQ(0, left) TH_LOG("%ld of %ld failures not injected",
						  left, mode[m].times);
		}
		TH_LOG("%s %c loop, %s probability %d: %ld hits of %ld calls",
		       fn, type, cap_dir[cap], mode[m].prob, hits, n);
		/* No injection: exact again. */
		UT_CMD(t, r, "call %s %d 5 1", fn, CALLS);
		EXPECT_EQ(want_of(5), ut_okval(r));
		EXPECT_EQ(hits + CALLS, hits_of(self, t->pid));
		target_exit(_metadata, self, t);
	}
	check_file(_metadata, self);
}

/* ut_step: stepped out of line (utask, XOL area and page, slot). */
TEST_F_TIMEOUT(fi, stepped_first_hit_failslab, 900)
{
	hit_nth_sweep(_metadata, self, "ut_step", 'p', FI_SLAB);
}

TEST_F_TIMEOUT(fi, stepped_first_hit_fail_page_alloc, 900)
{
	hit_nth_sweep(_metadata, self, "ut_step", 'p', FI_PAGE);
}

/* ut_push: emulated (utask only). */
TEST_F_TIMEOUT(fi, emulated_first_hit_failslab, 900)
{
	hit_nth_sweep(_metadata, self, "ut_push", 'p', FI_SLAB);
}

TEST_F_TIMEOUT(fi, emulated_first_hit_fail_page_alloc, 900)
{
	hit_nth_sweep(_metadata, self, "ut_push", 'p', FI_PAGE);
}

/* A return probe (return instance, the trampoline's XOL area). */
TEST_F_TIMEOUT(fi, return_first_hit_failslab, 900)
{
	hit_nth_sweep(_metadata, self, "ut_step", 'r', FI_SLAB);
}

TEST_F_TIMEOUT(fi, return_first_hit_fail_page_alloc, 900)
{
	hit_nth_sweep(_metadata, self, "ut_step", 'r', FI_PAGE);
}

TEST_F_TIMEOUT(fi, stepped_loop_failslab, 600)
{
	hit_loop(_metadata, self, "ut_step", 'p', FI_SLAB, true);
}

TEST_F_TIMEOUT(fi, stepped_loop_fail_page_alloc, 600)
{
	hit_loop(_metadata, self, "ut_step", 'p', FI_PAGE, true);
}

TEST_F_TIMEOUT(fi, emulated_loop_failslab, 600)
{
	hit_loop(_metadata, self, "ut_push", 'p', FI_SLAB, true);
}

/* An emulated hit needs no page: nothing may be there to fail. */
TEST_F_TIMEOUT(fi, emulated_loop_fail_page_alloc, 600)
{
	hit_loop(_metadata, self, "ut_push", 'p', FI_PAGE, false);
}

TEST_F_TIMEOUT(fi, return_loop_failslab, 600)
{
	hit_loop(_metadata, self, "ut_step", 'r', FI_SLAB, true);
}

TEST_F_TIMEOUT(fi, return_loop_fail_page_alloc, 600)
{
	hit_loop(_metadata, self, "ut_step", 'r', FI_PAGE, true);
}

/* At the end nothing of ours is left. */
TEST_F(fi, nothing_left)
{
	char *s;

	NEED_FI();
	s = ut_read("uprobe_events");
	ASSERT_NE(NULL, s);
	EXPECT_EQ(NULL, strstr(s, GRP "/")) TH_LOG("left: %s", s);
	free(s);
	EXPECT_FALSE(ut_event_exists(GRP, ""));
	EXPECT_EQ(0, knob_read("failslab/probability"));
	EXPECT_EQ(0, knob_read("fail_page_alloc/probability"));
	check_file(_metadata, self);
}

UT_HARNESS_MAIN
