// SPDX-License-Identifier: GPL-2.0
/*
 * Privileges: what a user without them cannot do with uprobes, and what a
 * probe never lets anyone do.
 *
 * A process that has dropped to the "nobody" user with no capabilities
 * cannot define a probe through uprobe_events or dynamic_events, enable a
 * probe root defined, read what probes recorded, list the probes, or open
 * an event of the perf "uprobe" PMU, however permissive perf_event_paranoid
 * is; a root process without CAP_SYS_ADMIN cannot open one either.  The
 * tracefs cases run twice: as tracefs is mounted (its root is 0700) and
 * with its root opened to everyone, so that the files' own modes refuse.
 *
 * The "[uprobes]" area a stepped probe maps into a process cannot be made
 * writable, by mprotect() or through /proc/PID/mem, and a read of any of
 * its pages succeeds or faults as at an unmapped address; running a probed
 * program never writes to its file, even when the user running it could
 * not have.
 */
#include <grp.h>
#include <setjmp.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_priv"
#define NOBODY 65534
#define PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"
#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

/*
 * A function of this program's own, probed in a child of the test: "add"
 * is stepped out of line, so a hit maps the [uprobes] area.  a + b
 */
__attribute__((naked, noinline)) static long priv_step(long a, long b)
{
	asm("add %rsi, %rdi\n\t"
	    "mov %rdi, %rax\n\t"
	    "ret\n");
}

/* ------------------------------------------------------------------ */
/* Running a step as another user                                      */
/* ------------------------------------------------------------------ */

static int capget_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

static int capset_self(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Become uid and gid 65534 with no supplementary groups and no
 * capabilities at all (none effective, permitted, inheritable, ambient or
 * in the bounding set), and no way back through a set-id program.
 */
static int drop_to_nobody(void)
{
	struct __user_cap_data_struct d[2] = { 0 };
	gid_t g = NOBODY;
	int cap, err;

	if (setgroups(1, &g) || setgid(NOBODY))
		return -errno;
	for (cap = 0; cap <= CAP_LAST_CAP; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || setuid(NOBODY))
		return -errno;
	err = capset_self(d);
	if (!err)
		err = capget_self(d);
	if (err)
		return err;
	if (d[0].effective | d[0].permitted | d[1].effective | d[1].permitted ||
	    getuid() != NOBODY || geteuid() != NOBODY || getegid() != NOBODY)
		return -EPERM;
	return 0;
}

/* Stay root, with every capability but CAP_SYS_ADMIN (CAP_PERFMON kept). */
static int drop_sys_admin(void)
{
	struct __user_cap_data_struct d[2];
	int err = capget_self(d);

	if (err)
		return err;
	d[0].effective &= ~(1U << CAP_SYS_ADMIN);
	d[0].permitted &= ~(1U << CAP_SYS_ADMIN);
	d[0].inheritable &= ~(1U << CAP_SYS_ADMIN);
	err = capset_self(d);
	if (!err)
		err = capget_self(d);
	if (err)
		return err;
	if ((d[0].effective & (1U << CAP_SYS_ADMIN)) ||
	    !(d[CAP_PERFMON / 32].effective & (1U << (CAP_PERFMON % 32))))
		return -EPERM;
	return 0;
}

enum who { AS_NOBODY, AS_ROOT_NO_SYS_ADMIN };

/* What a step returned, and whether dropping privileges for it failed. */
struct as_ret {
	int drop;
	int ret;
};

/* Run @fn(@arg) in a child that first dropped privileges as @who says. */
static struct as_ret as_user(enum who who, int (*fn)(const void *), const void *arg)
{
	struct as_ret r = { -EIO, -EIO };
	int p[2];
	pid_t pid;

	if (pipe(p)) {
		r.drop = -errno;
		return r;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		r.drop = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		r.drop = who == AS_NOBODY ? drop_to_nobody() : drop_sys_admin();
		r.ret = r.drop ? -ECANCELED : fn(arg);
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.drop = -EPIPE;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return r;
}

static const char *errstr(int err)
{
	return err ? strerror(-err) : "success";
}

/* The step must have run with privileges dropped, and been refused. */
#define EXPECT_DENIED(r, ...) do {						\
	struct as_ret __r = (r);						\
	ASSERT_EQ(0, __r.drop) TH_LOG("dropping privileges: %s",		\
				      strerror(-__r.drop));			\
	EXPECT_TRUE(__r.ret == -EACCES || __r.ret == -EPERM) {			\
		TH_LOG(__VA_ARGS__);						\
		TH_LOG("... gave %s, not EACCES or EPERM", errstr(__r.ret));	\
	}									\
} while (0)

/* ------------------------------------------------------------------ */
/* tracefs as nobody                                                   */
/* ------------------------------------------------------------------ */

/* open() a tracefs file, then write @data to it or read from it. */
struct tfs_op {
	const char *file;
	int flags;
	const char *data;
};

static int tfs_try(const void *arg)
{
	const struct tfs_op *op = arg;
	char p[PATH_MAX], buf[256];
	int fd, err = 0;

	ut_tpath(p, sizeof(p), op->file);
	fd = open(p, op->flags);
	if (fd < 0)
		return -errno;
	if (op->data) {
		if (write(fd, op->data, strlen(op->data)) < 0)
			err = -errno;
	} else if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN) {
		err = -errno;
	}
	close(fd);
	return err;
}

static int stat_file(const void *file)
{
	char p[PATH_MAX];
	struct stat st;

	ut_tpath(p, sizeof(p), file);
	return stat(p, &st) ? -errno : 0;
}

FIXTURE(unpriv) {
	struct ut_ctx c;
	char target[PATH_MAX];
	mode_t mode;		/* tracefs root's mode to put back, or 0 */
};

/*
 * tracefs_as_mounted: as mounted (the root directory is 0700 by default).
 * tracefs_root_opened: its root made 0755 for the case, so that only the
 * files' own modes stand between the user and them.
 */
FIXTURE_VARIANT(unpriv) {
	bool open_root;
};

FIXTURE_VARIANT_ADD(unpriv, tracefs_as_mounted) { .open_root = false };
FIXTURE_VARIANT_ADD(unpriv, tracefs_root_opened) { .open_root = true };

FIXTURE_SETUP(unpriv)
{
	struct as_ret r;
	struct stat st;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	if (!variant->open_root)
		return;
	ASSERT_EQ(0, stat(ut_tracefs_dir(), &st));
	ASSERT_EQ(0, mount(NULL, ut_tracefs_dir(), NULL, MS_REMOUNT, "mode=755"))
		TH_LOG("remounting tracefs with mode=755: %s", strerror(errno));
	self->mode = st.st_mode & 07777;
	ASSERT_EQ(0, stat(ut_tracefs_dir(), &st));
	ASSERT_EQ(0755, st.st_mode & 07777);
	/* Now nobody reaches the files: only their modes refuse. */
	r = as_user(AS_NOBODY, stat_file, "uprobe_events");
	ASSERT_EQ(0, r.drop);
	ASSERT_EQ(0, r.ret) TH_LOG("nobody cannot stat uprobe_events: %s", strerror(-r.ret));
}

FIXTURE_TEARDOWN(unpriv)
{
	char opt[32];

	ut_ctx_cleanup(&self->c);
	/* the definitions root made directly, in cases that failed early */
	ut_probe_del_prefix(GRP, self->c.prefix);
	if (self->mode) {
		snprintf(opt, sizeof(opt), "mode=%o", self->mode);
		mount(NULL, ut_tracefs_dir(), NULL, MS_REMOUNT, opt);
	}
}

/* A definition nobody tries to add: the case's event 0 on ut_step. */
static void nobody_def(struct ut_ctx *c, const char *target, char *def, size_t len)
{
	snprintf(def, len, "p:%s/%s %s:0x%lx", GRP, ut_ev(c, 0), target,
		 ut_sym_off(target, "ut_step"));
}

TEST_F(unpriv, cannot_add_probe_through_uprobe_events)
{
	char def[PATH_MAX + 128];
	struct tfs_op op = { "uprobe_events", O_WRONLY | O_APPEND, def };
	char *before, *after;

	nobody_def(&self->c, self->target, def, sizeof(def));
	before = ut_read("uprobe_events");
	ASSERT_NE(NULL, before);
	EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody writing '%s' to uprobe_events",
		      def);
	op.flags = O_WRONLY | O_TRUNC;
	op.data = "";
	EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody truncating uprobe_events");
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	after = ut_read("uprobe_events");
	EXPECT_STREQ(before, after);
	free(before);
	free(after);
	/* The same definition from root is fine: the refusal was the user's. */
	EXPECT_EQ(0, ut_probe_add(def));
	EXPECT_TRUE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	ut_probe_del(GRP, ut_ev(&self->c, 0));
}

TEST_F(unpriv, cannot_add_probe_through_dynamic_events)
{
	char def[PATH_MAX + 128];
	struct tfs_op op = { "dynamic_events", O_WRONLY | O_APPEND, def };

	nobody_def(&self->c, self->target, def, sizeof(def));
	EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody writing '%s' to dynamic_events",
		      def);
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	EXPECT_EQ(0, ut_append("dynamic_events", def));
	EXPECT_TRUE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	ut_probe_del(GRP, ut_ev(&self->c, 0));
}

/* nobody cannot enable root's event: it stays off and counts nothing. */
TEST_F(unpriv, cannot_enable_existing_event)
{
	char f[256], r[256], *en;
	struct tfs_op op = { f, O_WRONLY | O_TRUNC, "1" };
	struct ut_target *t;
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	snprintf(f, sizeof(f), "events/%s/%s/enable", GRP, ut_ev(&self->c, 0));
	EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody writing 1 to %s", f);
	op.file = "events/enable";
	EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody writing 1 to events/enable");
	en = ut_read(f);
	ASSERT_NE(NULL, en);
	EXPECT_EQ('0', en[0]) TH_LOG("%s reads '%s' after nobody's attempt", f, en);
	free(en);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 10 1 1");
	EXPECT_EQ(0, UT_HITS(0));
	/* Root can: the event itself works. */
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call ut_step 10 1 1");
	EXPECT_EQ(10, UT_HITS(0));
}

/* What probes recorded, and which probes there are, stay root's. */
TEST_F(unpriv, cannot_read_trace_or_list_probes)
{
	static const char *const files[] = {
		"trace", "trace_pipe", "uprobe_events", "dynamic_events",
		"uprobe_profile",
	};
	struct tfs_op op = { NULL, O_RDONLY | O_NONBLOCK, NULL };
	struct ut_target *t;
	char r[256];
	unsigned int i;
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 5 1 1");
	/* There is something to read: root sees the hits. */
	ASSERT_EQ(5, UT_LINES(0, 0));
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		op.file = files[i];
		EXPECT_DENIED(as_user(AS_NOBODY, tfs_try, &op), "nobody reading %s",
			      files[i]);
	}
	EXPECT_EQ(5, UT_LINES(0, 0)) TH_LOG("trace lost lines to nobody's read");
}

/* ------------------------------------------------------------------ */
/* The perf uprobe PMU without CAP_SYS_ADMIN                           */
/* ------------------------------------------------------------------ */

/* Open and close a counting uprobe event on @path:@off for @pid/@cpu. */
struct pmu_op {
	int type;
	const char *path;
	long off;
	int pid;
	int cpu;
};

static int pmu_try(const void *arg)
{
	const struct pmu_op *op = arg;
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = op->type;
	attr.uprobe_path = (unsigned long)op->path;
	attr.probe_offset = op->off;
	/* Counting user mode only: what paranoid <= 2 lets anyone do. */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, op->pid, op->cpu, -1, 0);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static long read_num(const char *path)
{
	char *s = ut_slurp(path, NULL);
	long v;

	if (!s)
		return LONG_MIN;
	v = strtol(s, NULL, 0);
	free(s);
	return v;
}

static int write_num(const char *path, long v)
{
	char s[32];
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(s, sizeof(s), "%ld\n", v);
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

FIXTURE(pmu) {
	struct ut_ctx c;
	char target[PATH_MAX];
	long saved;		/* perf_event_paranoid to put back */
	int type;
};

/* perf_event_paranoid during the case: Debian's default, upstream's, none. */
FIXTURE_VARIANT(pmu) {
	int paranoid;
};

FIXTURE_VARIANT_ADD(pmu, paranoid_3) { .paranoid = 3 };
FIXTURE_VARIANT_ADD(pmu, paranoid_2) { .paranoid = 2 };
FIXTURE_VARIANT_ADD(pmu, paranoid_minus_1) { .paranoid = -1 };

FIXTURE_SETUP(pmu)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	self->saved = read_num(PARANOID);
	ASSERT_NE(LONG_MIN, self->saved) TH_LOG("cannot read " PARANOID);
	self->type = read_num(PMU_TYPE);
	ASSERT_LE(0, self->type) TH_LOG("no uprobe PMU at " PMU_TYPE);
	ASSERT_EQ(0, write_num(PARANOID, variant->paranoid));
	ASSERT_EQ(variant->paranoid, read_num(PARANOID));
}

FIXTURE_TEARDOWN(pmu)
{
	if (self->saved != LONG_MIN)
		write_num(PARANOID, self->saved);
	ut_ctx_cleanup(&self->c);
}

/*
 * Whatever perf_event_paranoid says, an event of the uprobe PMU needs
 * CAP_SYS_ADMIN: nobody cannot open one on its own task, on a CPU or on
 * another user's process, and no breakpoint appears in that process.
 * Root opens the same event (so the refusal was not about the event).
 */
TEST_F(pmu, nobody_cannot_open_uprobe_event)
{
	struct pmu_op op = { self->type, self->target, 0, 0, -1 };
	struct ut_target *t;
	unsigned char orig;
	char r[64], want[16];

	UT_SYM(op.off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, op.off, &orig, 1));
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ping");
	EXPECT_DENIED(as_user(AS_NOBODY, pmu_try, &op), "nobody opening a uprobe on itself");
	op.pid = -1;
	op.cpu = 0;
	EXPECT_DENIED(as_user(AS_NOBODY, pmu_try, &op), "nobody opening a uprobe on CPU 0");
	op.pid = t->pid;
	op.cpu = -1;
	EXPECT_DENIED(as_user(AS_NOBODY, pmu_try, &op),
		      "nobody opening a uprobe on root's process %d", t->pid);
	UT_CMD(t, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig);
	EXPECT_STREQ(want, r);
	EXPECT_EQ(0, pmu_try(&op)) TH_LOG("root cannot open the same event");
}

/* CAP_PERFMON is not enough: the uprobe PMU wants CAP_SYS_ADMIN. */
TEST_F(pmu, root_without_cap_sys_admin_cannot_open_uprobe_event)
{
	struct pmu_op op = { self->type, self->target, 0, 0, -1 };

	UT_SYM(op.off, self->target, "ut_step");
	EXPECT_DENIED(as_user(AS_ROOT_NO_SYS_ADMIN, pmu_try, &op),
		      "root without CAP_SYS_ADMIN opening a uprobe on itself");
	op.pid = -1;
	op.cpu = 0;
	EXPECT_DENIED(as_user(AS_ROOT_NO_SYS_ADMIN, pmu_try, &op),
		      "root without CAP_SYS_ADMIN opening a uprobe on CPU 0");
	EXPECT_EQ(0, pmu_try(&op)) TH_LOG("root cannot open the same event");
}

/* ------------------------------------------------------------------ */
/* The [uprobes] area stays read-only                                  */
/* ------------------------------------------------------------------ */

/* The [uprobes] mapping of process @pid: start, end and permissions. */
static int xol_area(pid_t pid, unsigned long *start, unsigned long *end, char *perms)
{
	char p[64], *all, *line, *save = NULL;
	int ret = -ENOENT;

	snprintf(p, sizeof(p), "/proc/%d/maps", pid);
	all = ut_slurp(p, NULL);
	if (!all)
		return -errno;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, "[uprobes]"))
			continue;
		if (sscanf(line, "%lx-%lx %4s", start, end, perms) == 3)
			ret = 0;
		break;
	}
	free(all);
	return ret;
}

/* One byte written at @addr of @pid through /proc/PID/mem: 0 or -errno. */
static int mem_write(pid_t pid, unsigned long addr)
{
	unsigned char b = 0x90;
	char p[64];
	ssize_t n;
	int fd, err = 0;

	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	fd = open(p, O_RDWR);
	if (fd < 0)
		return -errno;
	n = pwrite(fd, &b, 1, addr);
	if (n < 0)
		err = -errno;
	else if (n != 1)
		err = -EIO;
	close(fd);
	return err;
}

/* What the child found and tried (0 or -errno for each attempt). */
struct xol_report {
	long sum;
	int found;
	unsigned long start, end;
	char perms[8];
	int mprotect_rwx, mprotect_rw, mem_self;
};

static int mprotect_err(unsigned long start, unsigned long end, int prot)
{
	return mprotect((void *)start, end - start, prot) ? -errno : 0;
}

/*
 * The child: hit the probe, find its [uprobes] area and try to make it
 * writable (report 1); once the parent has tried through /proc/PID/mem,
 * hit the probe again and report what the area looks like (report 2).
 */
static void xol_child(int rep, int go)
{
	struct xol_report x = { 0 };
	char c;

	x.sum = priv_step(1, 2);
	x.found = xol_area(getpid(), &x.start, &x.end, x.perms);
	if (!x.found) {
		x.mprotect_rwx = mprotect_err(x.start, x.end,
					      PROT_READ | PROT_WRITE | PROT_EXEC);
		x.mprotect_rw = mprotect_err(x.start, x.end, PROT_READ | PROT_WRITE);
		x.mem_self = mem_write(getpid(), x.start);
	}
	if (write(rep, &x, sizeof(x)) != sizeof(x) || read(go, &c, 1) != 1)
		_exit(1);
	memset(&x, 0, sizeof(x));
	x.sum = priv_step(2, 3);
	x.found = xol_area(getpid(), &x.start, &x.end, x.perms);
	_exit(write(rep, &x, sizeof(x)) == sizeof(x) ? 0 : 1);
}

FIXTURE(xol) {
	struct ut_ctx c;
	char exe[PATH_MAX];
	pid_t child;
};

FIXTURE_SETUP(xol)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);
	ASSERT_LT(0, n);
	self->exe[n] = '\0';
}

FIXTURE_TEARDOWN(xol)
{
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	ut_ctx_cleanup(&self->c);
}

TEST_F(xol, area_cannot_be_made_writable)
{
	struct xol_report x, y;
	int rep[2], go[2], st;
	long off;

	UT_SYM(off, self->exe, "priv_step");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		close(rep[0]);
		close(go[1]);
		xol_child(rep[1], go[0]);
	}
	close(rep[1]);
	close(go[0]);
	ASSERT_EQ(sizeof(x), read(rep[0], &x, sizeof(x)));
	EXPECT_EQ(3, x.sum) TH_LOG("priv_step(1, 2) under the probe");
	EXPECT_EQ(1, UT_HITS(0));
	ASSERT_EQ(0, x.found) TH_LOG("no [uprobes] area after a stepped hit");
	EXPECT_EQ(NULL, strchr(x.perms, 'w')) TH_LOG("[uprobes] is %s", x.perms);
	EXPECT_EQ(-EACCES, x.mprotect_rwx)
		TH_LOG("mprotect(rwx) of [uprobes]: %s", errstr(x.mprotect_rwx));
	EXPECT_EQ(-EACCES, x.mprotect_rw)
		TH_LOG("mprotect(rw) of [uprobes]: %s", errstr(x.mprotect_rw));
	/* Not even with FOLL_FORCE: the area is no page of the process's. */
	EXPECT_EQ(-EIO, x.mem_self)
		TH_LOG("the process writing its [uprobes] through /proc/self/mem: %s",
		       errstr(x.mem_self));
	st = mem_write(self->child, x.start);
	EXPECT_EQ(-EIO, st)
		TH_LOG("root writing the process's [uprobes] through /proc/PID/mem: %s",
		       errstr(st));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(sizeof(y), read(rep[0], &y, sizeof(y)));
	EXPECT_EQ(5, y.sum) TH_LOG("priv_step(2, 3) under the probe, after the attempts");
	EXPECT_EQ(2, UT_HITS(0));
	ASSERT_EQ(0, y.found);
	EXPECT_EQ(x.start, y.start);
	EXPECT_EQ(NULL, strchr(y.perms, 'w')) TH_LOG("[uprobes] is %s", y.perms);
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status 0x%x", st);
	close(rep[0]);
	close(go[1]);
}

/* What touching each page of the [uprobes] area did, for the parent. */
#define XOL_MAX_PAGES	16

struct xol_touch {
	int found, npages;
	unsigned long start;
	struct {
		int sig, code;
		unsigned long addr;
	} pg[XOL_MAX_PAGES];
};

static struct xol_touch *xol_touch_at;
static int xol_touch_page;
static sigjmp_buf xol_touch_jmp;

static void xol_touch_fault(int sig, siginfo_t *si, void *uc)
{
	xol_touch_at->pg[xol_touch_page].sig = sig;
	xol_touch_at->pg[xol_touch_page].code = si->si_code;
	xol_touch_at->pg[xol_touch_page].addr = (unsigned long)si->si_addr;
	siglongjmp(xol_touch_jmp, 1);
}

/* The child: hit the probe, then read a byte of each page of [uprobes]. */
static void xol_touch_child(struct xol_touch *t)
{
	struct sigaction sa = { .sa_sigaction = xol_touch_fault,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	unsigned long end;
	char perms[8];

	priv_step(1, 2);
	t->found = xol_area(getpid(), &t->start, &end, perms);
	if (t->found)
		_exit(0);
	t->npages = (end - t->start) / getpagesize();
	if (t->npages > XOL_MAX_PAGES)
		t->npages = XOL_MAX_PAGES;
	xol_touch_at = t;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	/* The index is a global: it lives across siglongjmp(). */
	for (xol_touch_page = 0; xol_touch_page < t->npages; xol_touch_page++) {
		const char *p = (char *)(t->start +
					 xol_touch_page * getpagesize());

		if (sigsetjmp(xol_touch_jmp, 1))
			continue;
		asm volatile("" : : "r"(*p));	/* the read itself */
	}
	_exit(0);
}

/*
 * Every page of the area reads, or faults as an unmapped address would
 * (SIGSEGV, SEGV_MAPERR, at the address read): a program that touches
 * the area, as one that reads a random address may, gets no signal it
 * could not have had without uprobes.
 */
TEST_F(xol, area_pages_read_or_fault_as_unmapped)
{
	struct xol_touch *t;
	int i, st, faults = 0;
	long off;

	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	UT_SYM(off, self->exe, "priv_step");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	fflush(stdout);
	fflush(stderr);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0)
		xol_touch_child(t);
	ASSERT_EQ(self->child, waitpid(self->child, &st, 0));
	self->child = 0;
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status 0x%x", st);
	ASSERT_EQ(1, UT_HITS(0));
	ASSERT_EQ(0, t->found) TH_LOG("no [uprobes] area after a stepped hit");
	ASSERT_LT(0, t->npages);
	for (i = 0; i < t->npages; i++) {
		unsigned long a = t->start + i * getpagesize();

		if (!t->pg[i].sig)
			continue;
		faults++;
		EXPECT_EQ(SIGSEGV, t->pg[i].sig)
			TH_LOG("page %d of %d at %#lx: signal %d, code %d", i,
			       t->npages, a, t->pg[i].sig, t->pg[i].code);
		EXPECT_EQ(SEGV_MAPERR, t->pg[i].code)
			TH_LOG("page %d at %#lx: si_code", i, a);
		EXPECT_EQ(a, t->pg[i].addr) TH_LOG("page %d: si_addr", i);
	}
	/* One stepped hit uses the first page's slots: the rest must fault. */
	if (t->npages > 1)
		EXPECT_LT(0, faults)
			TH_LOG("all %d pages read: no unused page was tried", t->npages);
	munmap(t, sizeof(*t));
}

/* ------------------------------------------------------------------ */
/* The probed file is never written                                    */
/* ------------------------------------------------------------------ */

/*
 * A root-owned, read-only copy of the target on tmpfs (where the page
 * cache is the file: a breakpoint written there would be in the file),
 * run probed by nobody, who could not write it.
 */
FIXTURE(file) {
	struct ut_ctx c;
	char dir[64];
	char copy[128];
};

FIXTURE_SETUP(file)
{
	char src[PATH_MAX];
	size_t len;
	char *buf;
	int fd;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	snprintf(self->dir, sizeof(self->dir), "/tmp/ust_priv.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	snprintf(self->copy, sizeof(self->copy), "%s/uprobe_target", self->dir);
	ut_path(src, sizeof(src), "uprobe_target");
	buf = ut_slurp(src, &len);
	ASSERT_NE(NULL, buf);
	fd = open(self->copy, O_WRONLY | O_CREAT | O_EXCL, 0555);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, buf, len));
	ASSERT_EQ(0, close(fd));
	free(buf);
}

FIXTURE_TEARDOWN(file)
{
	ut_ctx_cleanup(&self->c);
	unlink(self->copy);
	rmdir(self->dir);
}

static int open_for_write(const void *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Run the copy as nobody: "--once call ut_step N 1 2"; its wait status. */
static int run_as_nobody(const char *path, int n)
{
	char cmd[64];
	pid_t pid;
	int st = -1;

	snprintf(cmd, sizeof(cmd), "call ut_step %d 1 2", n);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		if (drop_to_nobody())
			_exit(126);
		execl(path, path, "--once", cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return st;
}

TEST_F(file, probed_file_never_written)
{
	unsigned char orig, now;
	struct stat before, after;
	unsigned long long hash;
	long off;
	int st;

	UT_SYM(off, self->copy, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->copy, off, &orig, 1));
	ASSERT_EQ(0, stat(self->copy, &before));
	hash = ut_file_hash(self->copy);
	ASSERT_NE(0, hash);
	EXPECT_DENIED(as_user(AS_NOBODY, open_for_write, self->copy),
		      "nobody opening %s for writing", self->copy);

	UT_PROBE(0, 'p', self->copy, off, NULL, NULL);
	UT_ENABLE(0, true);
	st = run_as_nobody(self->copy, 7);
	/* the exit status is ut_step(1, 2) */
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 3) TH_LOG("wait status 0x%x", st);
	EXPECT_EQ(7, UT_HITS(0)) TH_LOG("nobody's process did not hit the probe");

	/* While the probe is still enabled, and after it is gone. */
	EXPECT_EQ(hash, ut_file_hash(self->copy));
	ASSERT_EQ(0, ut_file_bytes(self->copy, off, &now, 1));
	EXPECT_EQ(orig, now);
	UT_ENABLE(0, false);
	ut_ctx_remove_events(&self->c);
	EXPECT_EQ(hash, ut_file_hash(self->copy));
	ASSERT_EQ(0, stat(self->copy, &after));
	EXPECT_EQ(before.st_size, after.st_size);
	EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	EXPECT_EQ(before.st_ctim.tv_sec, after.st_ctim.tv_sec);
	EXPECT_EQ(before.st_ctim.tv_nsec, after.st_ctim.tv_nsec);
	EXPECT_EQ(0555, after.st_mode & 07777);
}

UT_HARNESS_MAIN
