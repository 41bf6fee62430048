// SPDX-License-Identifier: GPL-2.0
/*
 * No hostage: a program a probe hits, running as nobody, or a file system
 * that answers reads when it likes, cannot make root's tracing
 * operations wait for it.  Each case sets one up, lets it do its worst
 * for a while, and times root's defines, enables, disables, deletes and
 * listings meanwhile; the program or the FUSE daemon gives up by itself
 * after HOSTAGE_SECONDS or UT_FUSE_STALL_MAX, so a kernel that makes
 * root wait shows it as a long operation, not as a hung test.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"
#include "uprobe_fuse.h"

#define GRP "ust_hostage"
#define NOBODY 65534
#define HOSTAGE_SECONDS 40
/* More threads than an [uprobes] area has slots (254 here, 32 on 6.1). */
#define HOSTAGE_THREADS 300
/* What root may take for one operation (stock 6.1: 0.42 s at most). */
#define ROOT_OP_MAX 1.0

#ifdef __x86_64__
/*
 * hostage_lods(p, n): "rep lodsb" over n bytes at p.  Its probe is on the
 * rep instruction, which every uprobes steps out of line, one XOL slot
 * per stepping thread.
 */
asm(".text\n"
	".globl hostage_lods\n"
	".type hostage_lods, @function\n"
	"hostage_lods:\n"
	"	mov %rsi, %rcx\n"
	"	mov %rdi, %rsi\n"
	".globl hostage_lods_rep\n"
	"hostage_lods_rep:\n"
	"	rep lodsb\n"
	"	ret\n"
	".size hostage_lods, .-hostage_lods\n");
void hostage_lods(const void *p, unsigned long n);
#endif

/* Probed by root meanwhile; nobody calls it. */
__attribute__((noinline, used)) long hostage_idle(long a)
{
	asm volatile("" ::: "memory");
	return a + 1;
}

/* Probed with arguments fetched from *@p; it reads nothing itself. */
__attribute__((noinline, used)) const void *hostage_fetch(const void *p)
{
	asm volatile("" ::: "memory");
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Shared with the program. */
struct hostage {
	volatile int go;	/* every thread is created */
	volatile int running;	/* threads that called at least once */
	volatile int stop;
	volatile int err;	/* a thread not created; -1: no userfaultfd */
};

struct lods_arg {
	struct hostage *h;
	const void *mem;
	unsigned long len;
	volatile double until;
};

static void *lods_thread(void *arg)
{
	struct lods_arg *a = arg;
	bool counted = false;

	/* Creating the last thread must not wait behind the others' hits. */
	while (!a->h->go)
		usleep(10000);
	while (!a->h->stop && now() < a->until) {
		if (!counted) {
			__sync_fetch_and_add(&a->h->running, 1);
			counted = true;
		}
#ifdef __x86_64__
		hostage_lods(a->mem, a->len);
#endif
	}
	return NULL;
}

/*
 * Memory whose first read waits for ever: a userfaultfd (user faults
 * only, which nobody may have) that nobody answers.
 */
static void *unanswered_memory(size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (m == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return NULL;
	reg.range.start = (unsigned long)m;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? NULL : m;
}

/*
 * As nobody, no_new_privs, at the lowest priority: every thread hits,
 * and its stepped read waits in the kernel, holding its slot, for a
 * page that never comes.
 */
static int lods_program(struct hostage *h)
{
	pthread_t th[HOSTAGE_THREADS];
	/* Until all threads run; then HOSTAGE_SECONDS more. */
	struct lods_arg a = { .h = h, .len = 1UL << 20, .until = now() + 600 };
	pthread_attr_t attr;
	gid_t g = NOBODY;
	int i;

	if (setgroups(1, &g) || setgid(NOBODY) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || setuid(NOBODY))
		return 2;
	/* Set after setuid(), which clears it: gone with a killed test. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() == 1)
		return 2;
	setpriority(PRIO_PROCESS, 0, 19);
	a.mem = unanswered_memory(a.len);
	if (!a.mem) {
		h->err = -1;
		return 3;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (i = 0; i < HOSTAGE_THREADS; i++)
		if (pthread_create(&th[i], &attr, lods_thread, &a)) {
			h->err = i + 1;
			break;
		}
	a.until = now() + HOSTAGE_SECONDS;
	h->go = 1;
	/* Threads waiting for a slot never read @stop: exit_group ends them. */
	while (!h->stop && now() < a.until)
		usleep(100000);
	return 0;
}

FIXTURE(hostage) {
	struct ut_ctx c;
	char exe[PATH_MAX];
	struct hostage *h;
	pid_t prog;
	struct ut_fuse *fuse;
	char other[96];		/* a file to remove at teardown */
	pthread_t definer;
	bool definer_started;
	char uffd_sysctl[16];	/* vm.unprivileged_userfaultfd to restore */
};

#define UFFD_SYSCTL "/proc/sys/vm/unprivileged_userfaultfd"

static int sysctl_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = -errno ?: -EIO;
	close(fd);
	return err;
}

FIXTURE_SETUP(hostage)
{
	ssize_t n;

	ut_ctx_init(&self->c, GRP, _metadata->name);
	n = readlink("/proc/self/exe", self->exe, sizeof(self->exe) - 1);
	ASSERT_LT(0, n);
	self->exe[n] = '\0';
	self->h = mmap(NULL, sizeof(*self->h), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->h);
	/* Root's operations are not the ones to wait for the CPU. */
	setpriority(PRIO_PROCESS, 0, -20);
}

FIXTURE_TEARDOWN(hostage)
{
	/* A program waiting for a READ cannot die before it is answered. */
	if (self->fuse)
		self->fuse->stall = 0;
	if (self->definer_started)
		pthread_join(self->definer, NULL);
	if (self->prog > 0) {
		self->h->stop = 1;
		kill(self->prog, SIGKILL);
		waitpid(self->prog, NULL, 0);
	}
	setpriority(PRIO_PROCESS, 0, 0);
	if (self->uffd_sysctl[0] && sysctl_write(UFFD_SYSCTL, self->uffd_sysctl))
		TH_LOG("vm.unprivileged_userfaultfd not restored");
	ut_ctx_cleanup(&self->c);
	ut_fuse_stop(self->fuse);
	if (self->other[0])
		unlink(self->other);
}

/* Threads of @pid asleep in the kernel's wait for an XOL slot. */
static int slot_waiters(pid_t pid)
{
	char path[64], wchan[64];
	struct dirent *d;
	int n = 0, fd;
	ssize_t len;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 d->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		len = read(fd, wchan, sizeof(wchan) - 1);
		close(fd);
		if (len <= 0)
			continue;
		wchan[len] = '\0';
		/* xol_take_slot here; 6.1 inlines its wait into the resume */
		if (strstr(wchan, "xol_") || !strcmp(wchan, "uprobe_notify_resume"))
			n++;
	}
	closedir(dir);
	return n;
}

/* Time one root operation: it must succeed within ROOT_OP_MAX seconds. */
#define ROOT_OP(what, expr) do {						\
	double __t = now();							\
	int __e = (expr);							\
										\
	__t = now() - __t;							\
	TH_LOG("%s: %.3f s", (what), __t);					\
	EXPECT_EQ(0, __e) TH_LOG("%s: %s", (what), strerror(-__e));		\
	EXPECT_GT(ROOT_OP_MAX, __t) TH_LOG("%s waited on another process", (what));	\
} while (0)

static int list_events(void)
{
	char *s = ut_read("uprobe_events");

	if (!s)
		return -errno ?: -EIO;
	free(s);
	return 0;
}

/*
 * The program's threads all hit a probe whose instruction is stepped:
 * more of them than there are XOL slots, each holding its slot while its
 * read waits for a page nobody provides.  Those without a slot wait for
 * one; root's define, enable, listing, disable and delete do not wait
 * with them.
 */
TEST_F_TIMEOUT(hostage, threads_waiting_for_xol_slots_hold_up_no_root_operation,
	       HOSTAGE_SECONDS + 180)
{
	char del[160];
	long off, other;
	double t0;
	int i;

#ifndef __x86_64__
	SKIP(return, "the stepped instruction is x86-64 code");
#endif
	UT_SYM(off, self->exe, "hostage_lods_rep");
	UT_SYM(other, self->exe, "hostage_idle");
	UT_PROBE(0, 'p', self->exe, off, NULL, NULL);
	UT_ENABLE(0, true);
	fflush(stdout);
	fflush(stderr);
	self->prog = fork();
	ASSERT_LE(0, self->prog);
	if (!self->prog)
		_exit(lods_program(self->h));
	t0 = now();
	while (now() - t0 < 120 && self->h->running < HOSTAGE_THREADS &&
	       !self->h->err && !waitpid(self->prog, NULL, WNOHANG))
		usleep(50000);
	if (self->h->err < 0)
		SKIP(return, "no userfaultfd for nobody (CONFIG_USERFAULTFD)");
	ASSERT_EQ(0, self->h->err) TH_LOG("thread %d not created", self->h->err);
	ASSERT_EQ(HOSTAGE_THREADS, self->h->running)
		TH_LOG("threads running after 120 s");
	TH_LOG("%d threads running after %.1f s", HOSTAGE_THREADS, now() - t0);
	/* Time for the threads to take every slot and queue for more. */
	sleep(2);
	ASSERT_EQ(0, waitpid(self->prog, NULL, WNOHANG))
		TH_LOG("the program ended early");
	i = slot_waiters(self->prog);
	TH_LOG("%d threads wait for a slot", i);
	ASSERT_LT(0, i) TH_LOG("no thread waits for a slot: nothing tested");

	ROOT_OP("defining another probe",
		ut_ctx_probe(&self->c, 1, 'p', self->exe, other, NULL, NULL));
	ROOT_OP("enabling it", ut_ctx_enable(&self->c, 1, true));
	ROOT_OP("listing uprobe_events", list_events());
	ROOT_OP("disabling it", ut_ctx_enable(&self->c, 1, false));
	ROOT_OP("disabling the hit probe", ut_ctx_enable(&self->c, 0, false));
	snprintf(del, sizeof(del), "-:%s/%s", GRP, ut_ev(&self->c, 0));
	ROOT_OP("deleting the hit probe", ut_append("uprobe_events", del));
	EXPECT_EQ(0, waitpid(self->prog, NULL, WNOHANG))
		TH_LOG("the program ended before root was done");
}

/* fork() and exec() of a program that ends at once: 0 or why not. */
static int fork_exec(void)
{
	int st;
	pid_t p;

	fflush(stdout);
	fflush(stderr);
	p = fork();
	if (p < 0)
		return -errno;
	if (!p) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(p, &st, 0) != p)
		return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -ECHILD;
}

/* Open and close a perf uprobe event on @path:@off: 0 or -errno. */
static int perf_open_close(const char *path, long off)
{
	struct ut_pmu pmu;
	int fd;

	ut_pmu_init(&pmu);
	fd = ut_pmu_open(&pmu, path, off, false, 0, false, -1, 0);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* Whether @p has ended, without reaping it. */
static bool ended(pid_t p)
{
	siginfo_t si = { 0 };

	return waitid(P_PID, p, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid;
}

struct define_arg {
	const char *def;
	int err;
};

static void *define_in_thread(void *arg)
{
	struct define_arg *d = arg;

	d->err = ut_probe_add(d->def);
	return NULL;
}

#define PROG_CALLS 5

/*
 * A probe on a file whose file system answers reads when it likes: a
 * FUSE daemon that leaves every read waiting.  Enabling the probe, which
 * no process maps and whose bytes the page cache does not hold, reads
 * nothing.  Then a program maps the file and calls into it, and another
 * probe on the file is defined (from a thread, should it read the file):
 * those may wait for the daemon, nothing else may.
 * Root's operations on probes of a file the program does not map, a
 * fork and exec and a perf open go on.  Once the daemon answers, the
 * program runs and the probe counts each of its calls.
 */
TEST_F_TIMEOUT(hostage, fuse_file_whose_reads_wait_holds_up_only_its_readers,
	       2 * UT_FUSE_STALL_MAX + 120)
{
	unsigned char code[UT_CODE_LEN];
	/* Static: an assertion's early return leaves them to the thread. */
	static struct define_arg d;
	static char def[512];
	char del[160];
	int fd, st, i;
	pid_t prog;
	double t0;

	ut_code_fill(code);
	self->fuse = ut_fuse_start(code, sizeof(code));
	if (!self->fuse)
		SKIP(return, "no FUSE mount: %s", strerror(errno));
	/* Another file, which the program does not map. */
	snprintf(self->other, sizeof(self->other), "%s.other", self->fuse->dir);
	ASSERT_EQ(0, ut_code_file(self->other));
	UT_PROBE(0, 'p', self->fuse->path, UT_CODE_FN, NULL, NULL);
	/* Out of the page cache: judging the probe would have to read. */
	fd = open(self->fuse->path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	close(fd);
	self->fuse->stall = 1;
	ROOT_OP("enabling the probe on the FUSE file",
		ut_ctx_enable(&self->c, 0, true));
	EXPECT_EQ(0, self->fuse->stalled + self->fuse->reads)
		TH_LOG("enabling a probe no process maps read the file");

	fflush(stdout);
	fflush(stderr);
	prog = fork();
	ASSERT_LE(0, prog);
	if (!prog) {
		unsigned char *m = ut_map_file(self->fuse->path, UT_CODE_LEN,
					       PROT_READ | PROT_EXEC);
		int sum = 0;

		if (m == MAP_FAILED)
			_exit(2);
		for (i = 0; i < PROG_CALLS; i++)
			sum += ((int (*)(void))(m + UT_CODE_FN))();
		_exit(sum == UT_CODE_FN_RET * PROG_CALLS ? 0 : 1);
	}
	self->prog = prog;
	snprintf(def, sizeof(def), "p:%s/%s %s:0x0", GRP, ut_ev(&self->c, 1),
		 self->fuse->path);
	d.def = def;
	ASSERT_EQ(0, pthread_create(&self->definer, NULL, define_in_thread, &d));
	self->definer_started = true;
	t0 = now();
	while (now() - t0 < 10 && !self->fuse->stalled && !ended(prog))
		usleep(10000);
	ASSERT_LT(0, self->fuse->stalled) TH_LOG("no read waits: nothing tested");
	usleep(200000);

	ROOT_OP("defining a probe on another file",
		ut_ctx_probe(&self->c, 2, 'p', self->other, UT_CODE_FN, NULL, NULL));
	ROOT_OP("enabling it", ut_ctx_enable(&self->c, 2, true));
	ROOT_OP("listing uprobe_events", list_events());
	ROOT_OP("disabling it", ut_ctx_enable(&self->c, 2, false));
	snprintf(del, sizeof(del), "-:%s/%s", GRP, ut_ev(&self->c, 2));
	ROOT_OP("deleting it", ut_append("uprobe_events", del));
	ROOT_OP("a fork and exec", fork_exec());
	ROOT_OP("a perf open and close", perf_open_close(self->other, UT_CODE_FN));
	EXPECT_FALSE(ended(prog))
		TH_LOG("the program ran before the daemon answered");

	self->fuse->stall = 0;
	pthread_join(self->definer, NULL);
	self->definer_started = false;
	EXPECT_EQ(0, d.err) TH_LOG("defining a probe on the FUSE file: %s",
				   strerror(-d.err));
	if (!d.err)
		ASSERT_EQ(0, ut_ctx_adopt(&self->c, 1));
	ASSERT_EQ(prog, waitpid(prog, &st, 0));
	self->prog = 0;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("the program: status 0x%x", st);
	EXPECT_EQ(PROG_CALLS, UT_HITS(0));
}

/* Whether @pid's wait channel has @what in it. */
static bool waits_in(pid_t pid, const char *what)
{
	char path[64], wchan[64];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	len = read(fd, wchan, sizeof(wchan) - 1);
	close(fd);
	if (len <= 0)
		return false;
	wchan[len] = '\0';
	return strstr(wchan, what);
}

/* x86-64: the first argument is in %di; $stack0 is the return address. */
#define FETCH_ARGS "v=+0(%di):x64 s=+8(%di):string c=$comm k=$stack0:x64"
/* At the return: from the page after the one the entry read. */
#define FETCH_RET_ARGS "v=+4096($retval):x64"
#ifdef __x86_64__
#define SKIP_UNLESS_X86_64()
#else
#define SKIP_UNLESS_X86_64() SKIP(return, "the fetch arguments are x86-64's")
#endif
#define FETCH_VALUE 0x1122334455667788UL
#define FETCH_STRING "hostage"

/* A page for the program to pass: FETCH_VALUE, then FETCH_STRING. */
static void fetch_page_fill(unsigned char *buf, size_t len)
{
	unsigned long v = FETCH_VALUE;

	memset(buf, 0, len);
	memcpy(buf, &v, sizeof(v));
	strcpy((char *)buf + sizeof(v), FETCH_STRING);
}

/* The hit probe's root operations, then an unrelated probe's. */
#define ROOT_OPS_AROUND_A_WAITING_HIT(self, other) do {			\
	char __del[160];							\
										\
	ROOT_OP("defining another probe",					\
		ut_ctx_probe(&(self)->c, 1, 'p', (self)->exe, (other), NULL, NULL)); \
	ROOT_OP("enabling it", ut_ctx_enable(&(self)->c, 1, true));		\
	ROOT_OP("listing uprobe_events", list_events());			\
	ROOT_OP("disabling it", ut_ctx_enable(&(self)->c, 1, false));		\
	snprintf(__del, sizeof(__del), "-:%s/%s", GRP, ut_ev(&(self)->c, 1));	\
	ROOT_OP("deleting it", ut_append("uprobe_events", __del));		\
	ROOT_OP("a fork and exec", fork_exec());				\
	ROOT_OP("disabling the hit probe", ut_ctx_enable(&(self)->c, 0, false)); \
	snprintf(__del, sizeof(__del), "-:%s/%s", GRP, ut_ev(&(self)->c, 0));	\
	ROOT_OP("deleting the hit probe", ut_append("uprobe_events", __del));	\
} while (0)

/* The return address in a return probe's record: "(0xRET <- 0xFUNC)". */
static unsigned long ret_ip(const char *line)
{
	const char *p = strstr(line, "(0x");

	return p ? strtoul(p + 1, NULL, 16) : 0;
}

/*
 * Fetch arguments from pages the program has never read, at a function's
 * entry and at its return: each hit brings its page in, and its record
 * holds the page's bytes, at the first call as at the second.  The return
 * address read at the entry is the caller's, not the trampoline's that
 * the return probe puts there.
 */
TEST_F(hostage, fetch_from_a_page_not_yet_read_records_its_bytes)
{
	unsigned char page[2 * 4096];
	char line[512], rline[512], v[64], str[64], comm[64], k[64];
	char want[64], want_comm[64] = "\"";
	char *c;
	long off;
	int st, i;
	pid_t prog;

	SKIP_UNLESS_X86_64();

	UT_SYM(off, self->exe, "hostage_fetch");
	snprintf(self->other, sizeof(self->other), "/tmp/ust_fetch_%d", getpid());
	fetch_page_fill(page, 4096);
	fetch_page_fill(page + 4096, 4096);
	ASSERT_EQ(0, ut_new_file(self->other, page, sizeof(page)));
	c = ut_slurp("/proc/self/comm", NULL);
	ASSERT_NE(NULL, c);
	c[strcspn(c, "\n")] = '\0';
	snprintf(want_comm + 1, sizeof(want_comm) - 1, "%s\"", c);
	free(c);
	UT_PROBE(0, 'p', self->exe, off, NULL, FETCH_ARGS);
	UT_PROBE(1, 'r', self->exe, off, NULL, FETCH_RET_ARGS);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	fflush(stdout);
	fflush(stderr);
	prog = fork();
	ASSERT_LE(0, prog);
	if (!prog) {
		unsigned char *m = ut_map_file(self->other, sizeof(page), PROT_READ);

		if (m == MAP_FAILED)
			_exit(2);
		hostage_fetch(m);
		hostage_fetch(m);
		_exit(0);
	}
	ASSERT_EQ(prog, waitpid(prog, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("status 0x%x", st);
	UT_ENABLE(0, false);
	UT_ENABLE(1, false);
	EXPECT_EQ(2, UT_LINES(0, 0)) TH_LOG("records of the entry hits");
	EXPECT_EQ(2, UT_LINES(1, 0)) TH_LOG("records of the returns");
	snprintf(want, sizeof(want), "0x%lx", FETCH_VALUE);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), i, line, sizeof(line)))
			TH_LOG("no record of entry %d", i + 1);
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 1), i, rline, sizeof(rline)))
			TH_LOG("no record of return %d", i + 1);
		ASSERT_EQ(0, ut_field(line, "v", v, sizeof(v))) TH_LOG("%s", line);
		ASSERT_EQ(0, ut_field(line, "s", str, sizeof(str))) TH_LOG("%s", line);
		ASSERT_EQ(0, ut_field(line, "c", comm, sizeof(comm))) TH_LOG("%s", line);
		ASSERT_EQ(0, ut_field(line, "k", k, sizeof(k))) TH_LOG("%s", line);
		EXPECT_STREQ(want, v) TH_LOG("entry %d: %s", i + 1, line);
		EXPECT_STREQ("\"" FETCH_STRING "\"", str) TH_LOG("entry %d: %s", i + 1, line);
		EXPECT_STREQ(want_comm, comm) TH_LOG("entry %d: %s", i + 1, line);
		EXPECT_EQ(ret_ip(rline), strtoul(k, NULL, 16))
			TH_LOG("entry %d's return address: %s; the return: %s",
			       i + 1, line, rline);
		ASSERT_EQ(0, ut_field(rline, "v", v, sizeof(v))) TH_LOG("%s", rline);
		EXPECT_STREQ(want, v) TH_LOG("return %d: %s", i + 1, rline);
	}
}

/*
 * A fetch argument from a FUSE file's page whose read waits for the
 * daemon.  The hit waits; root's operations, on the hit probe too, do
 * not.  Once the daemon answers the program goes on unharmed.
 */
TEST_F_TIMEOUT(hostage, fetch_waiting_on_a_fuse_page_holds_up_no_root_operation,
	       2 * UT_FUSE_STALL_MAX + 120)
{
	unsigned char page[4096];
	long off, other;
	int fd, st;
	pid_t prog;
	double t0;

	SKIP_UNLESS_X86_64();

	UT_SYM(off, self->exe, "hostage_fetch");
	UT_SYM(other, self->exe, "hostage_idle");
	fetch_page_fill(page, sizeof(page));
	self->fuse = ut_fuse_start(page, sizeof(page));
	if (!self->fuse)
		SKIP(return, "no FUSE mount: %s", strerror(errno));
	fd = open(self->fuse->path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	close(fd);
	UT_PROBE(0, 'p', self->exe, off, NULL, FETCH_ARGS);
	UT_ENABLE(0, true);
	self->fuse->stall = 1;
	fflush(stdout);
	fflush(stderr);
	prog = fork();
	ASSERT_LE(0, prog);
	if (!prog) {
		unsigned char *m = ut_map_file(self->fuse->path, sizeof(page), PROT_READ);

		if (m == MAP_FAILED)
			_exit(2);
		hostage_fetch((void *)m);
		_exit(0);
	}
	self->prog = prog;
	t0 = now();
	while (now() - t0 < 10 && !self->fuse->stalled && !ended(prog))
		usleep(10000);
	ASSERT_LT(0, self->fuse->stalled) TH_LOG("no read waits: nothing tested");

	ROOT_OPS_AROUND_A_WAITING_HIT(self, other);
	EXPECT_FALSE(ended(prog)) TH_LOG("the program ran before the daemon answered");

	self->fuse->stall = 0;
	ASSERT_EQ(prog, waitpid(prog, &st, 0));
	self->prog = 0;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("the program: status 0x%x", st);
}

/*
 * As nobody: a fetch argument from memory registered with a userfaultfd
 * for kernel faults too, which the program answers only after
 * HOSTAGE_SECONDS.
 */
static int uffd_fetch_program(struct hostage *h)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_zeropage zp = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	double until = now() + HOSTAGE_SECONDS;
	gid_t g = NOBODY;
	void *m;
	int uffd;

	if (setgroups(1, &g) || setgid(NOBODY) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || setuid(NOBODY))
		return 2;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() == 1)
		return 2;
	m = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (m == MAP_FAILED || uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		h->err = -1;
		return 3;
	}
	reg.range.start = (unsigned long)m;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		h->err = -1;
		return 3;
	}
	if (!fork()) {
		/* The answer, from a child sharing nothing but the uffd. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
			_exit(2);
		while (!h->stop && now() < until)
			usleep(100000);
		zp.range = reg.range;
		_exit(ioctl(uffd, UFFDIO_ZEROPAGE, &zp) ? 4 : 0);
	}
	h->running = 1;
	hostage_fetch(m);
	h->running = 2;
	return 0;
}

TEST_F_TIMEOUT(hostage, fetch_waiting_on_userfaultfd_memory_holds_up_no_root_operation,
	       HOSTAGE_SECONDS + 120)
{
	char *old;
	long off, other;
	int st;
	double t0;

	SKIP_UNLESS_X86_64();

	UT_SYM(off, self->exe, "hostage_fetch");
	UT_SYM(other, self->exe, "hostage_idle");
	old = ut_slurp(UFFD_SYSCTL, NULL);
	if (!old)
		SKIP(return, "no vm.unprivileged_userfaultfd (CONFIG_USERFAULTFD)");
	snprintf(self->uffd_sysctl, sizeof(self->uffd_sysctl), "%s", old);
	free(old);
	ASSERT_EQ(0, sysctl_write(UFFD_SYSCTL, "1"));
	UT_PROBE(0, 'p', self->exe, off, NULL, FETCH_ARGS);
	UT_ENABLE(0, true);
	fflush(stdout);
	fflush(stderr);
	self->prog = fork();
	ASSERT_LE(0, self->prog);
	if (!self->prog)
		_exit(uffd_fetch_program(self->h));
	t0 = now();
	while (now() - t0 < 10 && !waits_in(self->prog, "userfault") &&
	       !ended(self->prog))
		usleep(10000);
	/* The program has its userfaultfd, or never will. */
	ASSERT_EQ(0, sysctl_write(UFFD_SYSCTL, self->uffd_sysctl));
	self->uffd_sysctl[0] = '\0';
	if (self->h->err < 0)
		SKIP(return, "no userfaultfd for nobody (CONFIG_USERFAULTFD)");
	ASSERT_TRUE(waits_in(self->prog, "userfault"))
		TH_LOG("the hit does not wait for the userfaultfd: nothing tested");

	ROOT_OPS_AROUND_A_WAITING_HIT(self, other);
	EXPECT_EQ(1, self->h->running) TH_LOG("the program ran before its answer");

	self->h->stop = 1;
	ASSERT_EQ(self->prog, waitpid(self->prog, &st, 0));
	self->prog = 0;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("the program: status 0x%x", st);
	EXPECT_EQ(2, self->h->running);
}

UT_HARNESS_MAIN
