// SPDX-License-Identifier: GPL-2.0
/*
 * Where uprobes meets other kernel features a distribution's kernel has:
 * PID namespaces, a real block filesystem (ext4 on a loop device), file
 * THPs made by MADV_COLLAPSE, a memory cgroup at its limit.  Each
 * case skips, saying why, on a kernel without the feature.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define GRP "ust_feat"
#define NOINLINE __attribute__((noinline, noclone, used))
#define CALLS 5

/* Probed; called by the cases' children. */
NOINLINE long feat_fn(long a)
{
	asm volatile("" ::: "memory");
	return a + 1;
}

FIXTURE(feat) {
	struct ut_ctx c;
	char exe[PATH_MAX];
	char mnt[64], img[64], loop[64];
	char cg[64];		/* a memory cgroup of the case, or "" */
	pid_t child;
};

FIXTURE_SETUP(feat)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);
	ASSERT_LT(0, n);
	self->exe[n] = '\0';
}

FIXTURE_TEARDOWN(feat)
{
	char cmd[160];

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	ut_ctx_cleanup(&self->c);
	if (self->mnt[0]) {
		umount2(self->mnt, MNT_DETACH);
		rmdir(self->mnt);
	}
	if (self->loop[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d %s", self->loop);
		if (system(cmd))
			TH_LOG("%s failed", cmd);
	}
	if (self->img[0])
		unlink(self->img);
	if (self->cg[0])
		rmdir(self->cg);
}

/*
 * The child of a new PID namespace, its pid 1: opens a counting event
 * on itself, reports its own pid and the event's fd result through
 * @up, waits for a byte on @down, calls feat_fn() CALLS times and
 * reports its count.
 */
struct ns_report {
	long own_pid, count;
	int open_err;
};

static int ns_child(const char *exe, long off, int up, int down)
{
	struct ns_report r = { .own_pid = getpid(), .count = -1 };
	struct ut_pmu pmu;
	char go;
	int fd, i;

	ut_pmu_init(&pmu);
	fd = ut_pmu_open(&pmu, exe, off, false, 0, false, 0, -1);
	r.open_err = fd < 0 ? fd : 0;
	if (write(up, &r, sizeof(r)) != sizeof(r) || read(down, &go, 1) != 1)
		return 2;
	for (i = 0; i < CALLS; i++)
		if (feat_fn(i) != i + 1)
			return 3;
	if (fd >= 0 && read(fd, &r.count, sizeof(r.count)) != sizeof(r.count))
		return 4;
	return write(up, &r, sizeof(r)) == sizeof(r) ? 0 : 5;
}

/*
 * A process that is pid 1 of its own PID namespace hits a tracefs
 * probe, a per-task perf event opened from outside on its global pid,
 * and one it opened on itself inside: each counts its calls exactly,
 * and the trace names it by its global pid.
 */
TEST_F(feat, pid_namespace_process_is_counted_inside_and_outside)
{
	int up[2], down[2], st;
	struct ns_report r;
	long long count = -1;
	struct ut_pmu pmu;
	pid_t outer;
	long off;
	int fd;

	ut_pmu_init(&pmu);
	if (pmu.type < 0)
		SKIP(return, "no uprobe PMU");
	UT_SYM(off, self->exe, "feat_fn");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	fflush(stdout);
	fflush(stderr);
	outer = fork();
	ASSERT_LE(0, outer);
	if (!outer) {
		pid_t inner;

		if (unshare(CLONE_NEWPID))
			_exit(errno == EINVAL ? 90 : 91);
		inner = fork();
		if (inner == 0)
			_exit(ns_child(self->exe, off, up[1], down[0]));
		/* Tell the test the child's pid as seen from outside. */
		if (inner < 0 || write(up[1], &inner, sizeof(inner)) != sizeof(inner))
			_exit(92);
		_exit(waitpid(inner, &st, 0) == inner && WIFEXITED(st) ?
		      WEXITSTATUS(st) : 93);
	}
	self->child = outer;
	close(up[1]);
	close(down[0]);
	{
		pid_t inner = 0;
		ssize_t n = read(up[0], &inner, sizeof(inner));

		if (n != sizeof(inner)) {
			ASSERT_EQ(outer, waitpid(outer, &st, 0));
			self->child = 0;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 90)
				SKIP(return, "no PID namespaces (CONFIG_PID_NS)");
			ASSERT_EQ(sizeof(inner), n) TH_LOG("outer child status %#x", st);
		}
		ASSERT_EQ(sizeof(r), read(up[0], &r, sizeof(r)));
		EXPECT_EQ(1, r.own_pid) TH_LOG("the child is not pid 1 of its namespace");
		EXPECT_EQ(0, r.open_err) TH_LOG("perf_event_open on itself: %s",
						strerror(-r.open_err));
		fd = ut_pmu_open(&pmu, self->exe, off, false, 0, false, inner, -1);
		ASSERT_LE(0, fd) TH_LOG("perf_event_open on pid %d: %s", inner,
					strerror(-fd));
		ASSERT_EQ(1, write(down[1], "g", 1));
		ASSERT_EQ(sizeof(r), read(up[0], &r, sizeof(r)));
		ASSERT_EQ(outer, waitpid(outer, &st, 0));
		self->child = 0;
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("status %#x", st);
		EXPECT_EQ(CALLS, r.count) TH_LOG("the event opened inside");
		EXPECT_EQ(sizeof(count), read(fd, &count, sizeof(count)));
		EXPECT_EQ(CALLS, count) TH_LOG("the event opened outside on %d", inner);
		close(fd);
		EXPECT_EQ(CALLS, UT_LINES(0, inner)) TH_LOG("trace lines of pid %d", inner);
		EXPECT_EQ(CALLS, UT_LINES(0, 0)) TH_LOG("trace lines in all");
	}
	close(up[0]);
	close(down[1]);
}

/* Run @cmd through the shell; its output's first line into @out. */
static int run(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	int st;

	if (!f)
		return -errno;
	if (out && !fgets(out, len, f))
		out[0] = '\0';
	st = pclose(f);
	if (out)
		out[strcspn(out, "\n")] = '\0';
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Fork a child that maps @path, calls its function @n times, reports. */
static pid_t code_child(const char *path, int n, int up, int down)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	{
		int fd = open(path, O_RDONLY);
		unsigned char *m;
		long res = -1;
		char go;
		int i;

		m = fd < 0 ? MAP_FAILED : mmap(NULL, UT_CODE_LEN, PROT_READ | PROT_EXEC,
					      MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			_exit(2);
		close(fd);
		for (;;) {
			for (i = 0; i < n; i++)
				res = ((long (*)(void))(m + UT_CODE_FN))();
			if (write(up, &res, sizeof(res)) != sizeof(res) ||
			    read(down, &go, 1) != 1)
				_exit(0);
		}
	}
}

/*
 * An ext4 filesystem on a loop device, mounted at self->mnt: 0, -1 for a
 * kernel or system without loop devices, -2 without ext4, else -errno.
 */
static int ext4_mount(FIXTURE_DATA(feat) *self)
{
	char cmd[256], out[64];

	snprintf(self->img, sizeof(self->img), "/tmp/ust_feat_%d.img", getpid());
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 16M %s && mkfs.ext4 -q -F %s && losetup -f --show %s",
		 self->img, self->img, self->img);
	/* The image stays named: the teardown unlinks it. */
	if (run(cmd, out, sizeof(out)) || strncmp(out, "/dev/loop", 9))
		return -1;
	snprintf(self->loop, sizeof(self->loop), "%s", out);
	snprintf(self->mnt, sizeof(self->mnt), "/tmp/ust_feat_mnt_%d", getpid());
	if (mkdir(self->mnt, 0700)) {
		self->mnt[0] = '\0';
		return -errno;
	}
	if (mount(self->loop, self->mnt, "ext4", 0, NULL)) {
		rmdir(self->mnt);
		self->mnt[0] = '\0';
		return -2;
	}
	return 0;
}

#define EXT4_MOUNT() do {							\
	int __e = ext4_mount(self);						\
	if (__e == -1)								\
		SKIP(return, "no loop device or mkfs.ext4 (CONFIG_BLK_DEV_LOOP)"); \
	if (__e == -2)								\
		SKIP(return, "cannot mount ext4 (CONFIG_EXT4_FS)");		\
	ASSERT_EQ(0, __e) TH_LOG("mkdir: %s", strerror(-__e));			\
} while (0)

/* Unmount and mount read-only: the device's bytes, not the page cache's. */
#define EXT4_REMOUNT_RO() do {							\
	ASSERT_EQ(0, umount2(self->mnt, 0)) TH_LOG("umount: %s", strerror(errno)); \
	ASSERT_EQ(0, mount(self->loop, self->mnt, "ext4", MS_RDONLY, NULL));	\
} while (0)

/*
 * A probed program on ext4 on a loop device: hits counted; the file is
 * truncated under a process that maps it and written again; a process
 * that maps it then is probed, the first one runs its code again
 * unharmed, and the bytes on the device, read back after the filesystem
 * was unmounted, are what was written, with no breakpoint in them.
 */
TEST_F_TIMEOUT(feat, ext4_on_loop_file_probed_truncated_and_rewritten, 120)
{
	int up[2], down[2], fd;
	char path[96];
	uint64_t hash;
	pid_t b;
	long res;

	EXT4_MOUNT();
	snprintf(path, sizeof(path), "%s/code", self->mnt);
	ASSERT_EQ(0, ut_code_file(path));
	hash = ut_file_hash(path);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));

	UT_PROBE(0, 'p', path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	self->child = code_child(path, 2, up[1], down[0]);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)));
	EXPECT_EQ(7, res);
	EXPECT_EQ(2, UT_HITS(0));

	/* Truncated under the mapping, then the same code written again. */
	fd = open(path, O_WRONLY | O_TRUNC);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, ut_code_file(path));
	EXPECT_EQ(hash, ut_file_hash(path)) TH_LOG("the rewritten file differs");

	b = code_child(path, 3, up[1], down[0]);
	ASSERT_LT(0, b);
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)));
	EXPECT_EQ(7, res) TH_LOG("a process mapping the rewritten file");
	EXPECT_EQ(5, UT_HITS(0)) TH_LOG("its 3 calls are hits");
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);

	/* The first process runs its code again: the rewritten file's. */
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)))
		TH_LOG("the first process died running the rewritten file");
	EXPECT_EQ(7, res);
	UT_ENABLE(0, false);
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	ut_ctx_cleanup(&self->c);

	EXT4_REMOUNT_RO();
	EXPECT_EQ(hash, ut_file_hash(path)) TH_LOG("the file on the device changed");
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* MADV_COLLAPSE of a program's huge page of text, from outside: 0 or -errno. */
static int collapse(struct ut_prog *p)
{
	struct iovec iov = { (void *)p->ctl->base, UT_HUGE };
	int pidfd = syscall(SYS_pidfd_open, p->pid, 0);
	long ret;

	if (pidfd < 0)
		return -errno;
	ret = syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_COLLAPSE, 0);
	ret = ret < 0 ? -errno : 0;
	close(pidfd);
	return ret;
}

/*
 * Collapse after making a huge page free: 0, or -errno after 5 tries.
 * 6.1 answers the first collapse of a file's range EINVAL even when it
 * made the huge page, and maps it at the next: EINVAL is tried again too.
 */
static int collapse_retrying(struct ut_prog *p)
{
	int i, ret = -EAGAIN;

	for (i = 0; i < 5 && (ret == -EAGAIN || ret == -ENOMEM || ret == -EINVAL);
	     i++) {
		ut_compact_memory();
		ret = collapse(p);
	}
	return ret;
}

#define PROG_KB(p, field) ut_smaps_kb((p)->pid, (p)->ctl->base, (field))

/*
 * MADV_COLLAPSE (6.1) of a program's text on ext4 makes its page cache
 * one huge page, mapped by one PMD.  A probe put in then splits that
 * mapping for the breakpoint's private page and fires; a collapse asked
 * for while the probe is in never maps the PMD over that page: the
 * probe keeps firing.  Once the probe is out the text maps by one PMD
 * again.  The program computes the same throughout and the file on the
 * device never changes.
 */
TEST_F_TIMEOUT(feat, madvise_collapse_over_probed_ext4_text_keeps_the_probe, 120)
{
	struct ut_prog p = { 0 };
	char path[96];
	uint64_t hash;
	int ret, fd;

	EXT4_MOUNT();
	snprintf(path, sizeof(path), "%s/code", self->mnt);
	ASSERT_EQ(0, ut_huge_code_file(path));
	/* Written back: collapse_file() refuses dirty page cache pages. */
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	hash = ut_file_hash(path);
	ASSERT_EQ(0, ut_prog_start_len(&p, path, PROT_READ | PROT_EXEC, false,
				       UT_HUGE));
	self->child = p.pid;
	ret = collapse_retrying(&p);
	if (ret == -EAGAIN || ret == -ENOMEM)
		SKIP(return, "no free huge page to collapse into: %s", strerror(-ret));
	if (ret == -EINVAL)
		SKIP(return, "no file THP (CONFIG_READ_ONLY_THP_FOR_FS)");
	ASSERT_EQ(0, ret) TH_LOG("MADV_COLLAPSE: %s", strerror(-ret));
	ASSERT_EQ(UT_HUGE / 1024, PROG_KB(&p, "FilePmdMapped"))
		TH_LOG("the collapsed text is not mapped by one PMD");

	UT_PROBE(0, 'p', path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	EXPECT_EQ(7, ut_prog_cmd(&p, UT_PROG_CALL, 3, 0));
	EXPECT_EQ(3, UT_HITS(0)) TH_LOG("hits of a probe put into PMD-mapped text");
	EXPECT_EQ(UT_PAGE / 1024, PROG_KB(&p, "Anonymous"));
	EXPECT_EQ(0, PROG_KB(&p, "FilePmdMapped"));

	/* The page cache is huge already: nothing to allocate. */
	ret = collapse(&p);
	EXPECT_TRUE(ret == 0 || ret == -EINVAL)
		TH_LOG("MADV_COLLAPSE with the probe in: %s", strerror(-ret));
	EXPECT_EQ(0, PROG_KB(&p, "FilePmdMapped"))
		TH_LOG("a PMD mapped over the breakpoint's page");
	EXPECT_EQ(7, ut_prog_cmd(&p, UT_PROG_CALL, 4, 0));
	EXPECT_EQ(7, UT_HITS(0)) TH_LOG("hits after the collapse");

	UT_ENABLE(0, false);
	EXPECT_EQ(0, PROG_KB(&p, "Anonymous")) TH_LOG("a private copy left");
	EXPECT_EQ(7, ut_prog_cmd(&p, UT_PROG_CALL, 2, 0));
	EXPECT_EQ(7, UT_HITS(0));
	EXPECT_EQ(0, collapse(&p));
	EXPECT_EQ(UT_HUGE / 1024, PROG_KB(&p, "FilePmdMapped"))
		TH_LOG("the text is not mapped by one PMD after the removal");

	ut_prog_kill(&p);
	self->child = 0;
	ut_ctx_cleanup(&self->c);
	EXT4_REMOUNT_RO();
	EXPECT_EQ(hash, ut_file_hash(path)) TH_LOG("the file on the device changed");
}

#define CGROOT "/sys/fs/cgroup"

/* A number from a cgroup file, or -1. */
static long cg_read(FIXTURE_DATA(feat) *self, const char *file, const char *key)
{
	char path[128], line[128];
	long v = -1;
	size_t n = key ? strlen(key) : 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", self->cg, file);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!key || (!strncmp(line, key, n) && line[n] == ' ')) {
			v = strtol(line + (key ? n + 1 : 0), NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static int cg_write(FIXTURE_DATA(feat) *self, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", self->cg, file);
	return ut_file_write_at(path, 0, val, strlen(val)) == (ssize_t)strlen(val) ?
		0 : -1;
}

/*
 * Fork a child that joins the case's cgroup, maps @path, locks all its
 * memory and fills 8 MiB more, reports, then calls the function once
 * per byte it is sent and reports the result.
 */
static pid_t memcg_child(FIXTURE_DATA(feat) *self, const char *path, int up,
			 int down)
{
	char procs[128], *fill;
	pid_t pid;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", self->cg);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid)
		return pid;
	{
		unsigned char *m;
		long res = -1;
		char go;

		if (ut_file_write_at(procs, 0, "0", 1) != 1)
			_exit(2);
		m = ut_map_file(path, UT_CODE_LEN, PROT_READ | PROT_EXEC);
		if (m == MAP_FAILED)
			_exit(3);
		res = ((long (*)(void))(m + UT_CODE_FN))();
		fill = malloc(8 << 20);
		if (!fill || mlockall(MCL_CURRENT | MCL_FUTURE))
			_exit(4);
		memset(fill, 1, 8 << 20);
		for (;;) {
			if (write(up, &res, sizeof(res)) != sizeof(res) ||
			    read(down, &go, 1) != 1)
				_exit(0);
			res = ((long (*)(void))(m + UT_CODE_FN))();
		}
	}
}

/*
 * A process whose memory cgroup is at its limit, all its memory locked:
 * the breakpoint's private copy is charged to that cgroup.  The enable
 * succeeds, with the probe in that process or (the copy refused) left
 * out of it; the process is never killed for it (stock 6.1 OOM-kills
 * it), runs on, and gets the probe's hits if it was installed; when the
 * probe goes, its copy's charge goes too.
 */
TEST_F_TIMEOUT(feat, memcg_at_its_limit_gets_the_breakpoint_or_runs_on, 60)
{
	long limit, with, without, res, hits;
	int up[2], down[2], err, i;
	char path[64], val[32];

	if (access(CGROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CGROOT, "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2: %s", strerror(errno));
	if (ut_file_write_at(CGROOT "/cgroup.subtree_control", 0, "+memory", 7) != 7)
		SKIP(return, "no memory controller (CONFIG_MEMCG)");
	snprintf(self->cg, sizeof(self->cg), CGROOT "/ust_feat_%d", getpid());
	ASSERT_EQ(0, mkdir(self->cg, 0755)) TH_LOG("%s: %s", self->cg, strerror(errno));
	snprintf(path, sizeof(path), "/tmp/ust_feat_code_%d", getpid());
	ASSERT_EQ(0, ut_code_file(path));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	/* A child killed for memory shows as a failed write, not SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	self->child = memcg_child(self, path, up[1], down[0]);
	ASSERT_LT(0, self->child);
	/* The child's ends: its death then ends a read() here. */
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)))
		TH_LOG("the child did not start");
	ASSERT_EQ(7, res);

	/*
	 * At the limit: nothing it has can be reclaimed, and no charge
	 * cached per CPU is left to take (memory.high drains them first).
	 */
	ASSERT_EQ(0, cg_write(self, "memory.high", "0"));
	ASSERT_EQ(0, cg_write(self, "memory.high", "max"));
	limit = cg_read(self, "memory.current", NULL);
	ASSERT_LT(0, limit);
	snprintf(val, sizeof(val), "%ld", limit);
	ASSERT_EQ(0, cg_write(self, "memory.max", val));
	UT_PROBE(0, 'p', path, UT_CODE_FN, NULL, NULL);
	/* One cgroup at its limit fails no one's enable. */
	err = ut_event_enable(GRP, ut_ev(&self->c, 0), true);
	ASSERT_EQ(0, err) TH_LOG("enable at the limit: %s", strerror(-err));
	ASSERT_EQ(1, write(down[1], "g", 1))
		TH_LOG("the process died: %ld OOM kills in its cgroup",
		       cg_read(self, "memory.events", "oom_kill"));
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)))
		TH_LOG("the process died");
	EXPECT_EQ(7, res);
	EXPECT_EQ(0, cg_read(self, "memory.events", "oom_kill"));
	/* 0: the breakpoint's copy could not be charged, the mm left out. */
	hits = UT_HITS(0);
	EXPECT_GE(1, hits) TH_LOG("hits of one call");
	TH_LOG("hits of the call at the limit: %ld", hits);

	/* The copy's charge goes with the probe. */
	ASSERT_EQ(0, cg_write(self, "memory.max", "max"));
	with = cg_read(self, "memory.current", NULL);
	ASSERT_EQ(0, ut_event_enable(GRP, ut_ev(&self->c, 0), false));
	/* A freed page may wait in a per-CPU LRU cache: compaction drains them. */
	for (i = 0; i < 20; i++) {
		ut_compact_memory();
		without = cg_read(self, "memory.current", NULL);
		if (!hits || without + UT_PAGE <= with)
			break;
		usleep(100000);
	}
	if (hits)
		EXPECT_LE(without + UT_PAGE, with)
			TH_LOG("charged %ld with the probe, %ld without", with, without);
	ASSERT_EQ(1, write(down[1], "g", 1));
	ASSERT_EQ(sizeof(res), read(up[0], &res, sizeof(res)));
	EXPECT_EQ(7, res);
	EXPECT_EQ(hits, UT_HITS(0));
	kill(self->child, SIGKILL);
	waitpid(self->child, NULL, 0);
	self->child = 0;
	unlink(path);
	close(up[0]);
	close(down[1]);
}

UT_HARNESS_MAIN
