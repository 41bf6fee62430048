// SPDX-License-Identifier: GPL-2.0
/*
 * Probes follow the program's address space: fork, vfork, exec, a shared
 * library loaded late or used by several processes, the same file mapped
 * twice, munmap, a partial munmap, mremap, mprotect, and processes that
 * come and go while probes are added and removed; threads that hit a
 * probe from the moment its enable returns; many events of a group
 * enabled and disabled in one write.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_mm"

FIXTURE(mm) {
	struct ut_ctx c;
	char target[PATH_MAX];
	char lib[PATH_MAX];
};

FIXTURE_SETUP(mm)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	ut_path(self->lib, sizeof(self->lib), "libuprobe_shlib.so");
}

FIXTURE_TEARDOWN(mm)
{
	ut_ctx_cleanup(&self->c);
}

static void byte_str(char *buf, size_t len, const char *path, long off)
{
	unsigned char b = 0;

	ut_file_bytes(path, off, &b, 1);
	snprintf(buf, len, "ok 0x%02x", b);
}

/* A child forked with the probe enabled keeps the breakpoint and hits. */
TEST_F(mm, fork_child_keeps_breakpoints)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child, b;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 2 1 1");
	UT_CMD(t, r, "fork ut_step 4 1 1");
	ASSERT_EQ(2, sscanf(r, "ok %d 0x%x", &child, &b)) TH_LOG("reply: %s", r);
	EXPECT_EQ(0xcc, b) TH_LOG("the child saw 0x%02x at the probe", b);
	EXPECT_EQ(4, UT_LINES(0, child)) TH_LOG("child's hits");
	EXPECT_EQ(2, UT_LINES(0, t->pid)) TH_LOG("parent's hits");
	EXPECT_EQ(6, UT_HITS(0));
}

/* A forked child loses the breakpoint when the probe goes away. */
TEST_F(mm, fork_child_restored_when_probe_disabled)
{
	struct ut_target *t;
	char r[256], want[64];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_step");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "release");
	byte_str(want, sizeof(want), self->target, off);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " 3");
	EXPECT_STREQ(want, r) TH_LOG("the child's byte at the probe and ut_step(1, 2)");
	EXPECT_EQ(0, UT_HITS(0));
}

/* A child forked before the probe was enabled gets the breakpoint too. */
TEST_F(mm, fork_child_gets_probe_enabled_later)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_step");
	child = ut_okval(r);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "release");
	EXPECT_STREQ("ok 0xcc 3", r);
	EXPECT_EQ(1, UT_LINES(0, child));
}

/* A vfork child running probed code is counted as itself. */
TEST_F(mm, vfork_child_hits_counted)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child, v;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "vfork ut_step 3 2 3");
	ASSERT_EQ(2, sscanf(r, "ok %d %d", &child, &v)) TH_LOG("reply: %s", r);
	EXPECT_EQ(5, v) TH_LOG("ut_step(2, 3) in the vfork child");
	EXPECT_EQ(3, UT_LINES(0, child));
	UT_CMD(t, r, "call ut_step 2 1 1");
	EXPECT_EQ(2, UT_LINES(0, t->pid));
}

/* exec of the probed program (in place and fork+exec) gets the probes. */
TEST_F(mm, exec_of_probed_program_gets_probes)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child, st;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "spawn call ut_step 5 1 1");
	ASSERT_EQ(2, sscanf(r, "ok %d %d", &child, &st)) TH_LOG("reply: %s", r);
	EXPECT_EQ(2, st) TH_LOG("the spawned program's ut_step(1, 1)");
	EXPECT_EQ(5, UT_LINES(0, child));
	UT_CMD(t, r, "exec call ut_step 3 2 2");
	EXPECT_STREQ("ok 4", r);
	UT_CMD(t, r, "byte ut_step");
	EXPECT_STREQ("ok 0xcc", r);
	EXPECT_EQ(3, UT_LINES(0, t->pid));
}

/* A library loaded after the probe was enabled gets the breakpoint. */
TEST_F(mm, library_loaded_after_enable_gets_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_PROBE(0, 'p', self->lib, off, NULL, "a=%di:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 1 1 1");
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "call shlib_step 4 1 2");
	EXPECT_EQ(10, ut_okval(r));
	EXPECT_EQ(4, UT_HITS(0));
}

/* Unloaded and loaded again: the new mapping is probed too. */
TEST_F(mm, library_reloaded_gets_probe_again)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_twice");
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "call shlib_twice 2 5 1");
	EXPECT_EQ(11, ut_okval(r));
	UT_CMD(t, r, "dlclose");
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "call shlib_twice 3 5 2");
	EXPECT_EQ(12, ut_okval(r));
	EXPECT_EQ(5, UT_HITS(0));
}

/* One library probe, several processes: each process's hits are its own. */
TEST_F(mm, shared_library_probe_hits_in_every_process)
{
	struct ut_target *t[4];
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->lib, "shlib_step");
	for (i = 0; i < 2; i++) {
		UT_START(t[i], "uprobe_target", NULL);
		UT_CMD(t[i], r, "dlopen");
	}
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	for (i = 2; i < 4; i++) {
		UT_START(t[i], "uprobe_target", NULL);
		UT_CMD(t[i], r, "dlopen");
	}
	for (i = 0; i < 4; i++) {
		UT_CMD(t[i], r, "call shlib_step %d %d 0", i + 1, i);
		EXPECT_EQ(i + 7, ut_okval(r));
	}
	for (i = 0; i < 4; i++)
		EXPECT_EQ(i + 1, UT_LINES(0, t[i]->pid)) TH_LOG("process %d", i);
	EXPECT_EQ(10, UT_HITS(0));
}

/* The library's page mapped a second time: both mappings are probed. */
TEST_F(mm, same_file_mapped_twice_hits_in_both_mappings)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "byte alias");
	EXPECT_STREQ("ok 0xcc", r) TH_LOG("the second mapping's byte at the probe");
	UT_CMD(t, r, "call shlib_step 3 1 1");
	EXPECT_EQ(9, ut_okval(r));
	UT_CMD(t, r, "call alias 4 2 2");
	EXPECT_EQ(11, ut_okval(r));
	EXPECT_EQ(7, UT_HITS(0));
}

/* A mapping made after enable (mmap, not dlopen) gets the breakpoint. */
TEST_F(mm, mapping_made_after_enable_gets_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_CMD(t, r, "call alias 6 0 0");
	EXPECT_EQ(7, ut_okval(r));
	EXPECT_EQ(6, UT_HITS(0));
}

/*
 * A mapping made after enable, with probes on two of its pages, in a
 * process with no breakpoint yet: the table is created (grown) while the
 * first page is installed, and the second page must still be installed.
 */
TEST_F(mm, mapping_with_probes_on_two_pages_gets_both)
{
	const char *path = "/tmp/ust_mm_two_pages";
	const int nfn = 2 * UT_PAGE / UT_FN_STRIDE;	/* two pages of functions */
	size_t len = ut_fn_file_len(nfn);
	unsigned char b[2];
	int p[2], st, fd;
	pid_t kid;

	ASSERT_EQ(0, ut_fn_file(path, nfn));
	UT_PROBE(0, 'p', path, 0, NULL, NULL);		/* function 0, page 0 */
	UT_PROBE(1, 'p', path, UT_PAGE, NULL, NULL);	/* function 256, page 1 */
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	ASSERT_EQ(0, pipe(p));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		/* A fresh mm: no probed mapping before this one. */
		unsigned char *m;

		fd = open(path, O_RDONLY);
		m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			_exit(1);
		b[0] = m[0];
		b[1] = m[UT_PAGE];
		((int (*)(void))m)();
		((int (*)(void))(m + UT_PAGE))();
		_exit(write(p[1], b, 2) != 2);
	}
	close(p[1]);
	ASSERT_EQ(2, read(p[0], b, 2));
	ASSERT_EQ(kid, waitpid(kid, &st, 0));
	EXPECT_EQ(0, st);
	EXPECT_EQ(0xcc, b[0]) TH_LOG("page 0's breakpoint");
	EXPECT_EQ(0xcc, b[1]) TH_LOG("page 1's breakpoint (the table grew on page 0)");
	EXPECT_EQ(1, UT_HITS(0));
	EXPECT_EQ(1, UT_HITS(1));
	unlink(path);
}

/* Unmapping one of two mappings leaves the other probed. */
TEST_F(mm, munmap_of_one_mapping_keeps_the_other_probed)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call alias 2 0 0");
	UT_CMD(t, r, "unalias");
	UT_CMD(t, r, "call shlib_step 3 0 0");
	EXPECT_EQ(7, ut_okval(r));
	EXPECT_EQ(5, UT_HITS(0));
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_CMD(t, r, "call alias 1 0 0");
	EXPECT_EQ(6, UT_HITS(0)) TH_LOG("a new mapping of the page after munmap");
}

/* Unmapping part of a mapping keeps the probe in the part that is left. */
TEST_F(mm, partial_munmap_keeps_probe_in_the_rest)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 2", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "unalias tail");
	UT_CMD(t, r, "byte alias");
	EXPECT_STREQ("ok 0xcc", r);
	UT_CMD(t, r, "call alias 3 1 0");
	EXPECT_EQ(8, ut_okval(r));
	EXPECT_EQ(3, UT_HITS(0));
}

/* A mapping moved with mremap carries its breakpoint along. */
TEST_F(mm, mremap_moved_mapping_keeps_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call alias 1 0 0");
	UT_CMD(t, r, "mremap");
	UT_CMD(t, r, "byte alias");
	EXPECT_STREQ("ok 0xcc", r);
	UT_CMD(t, r, "call alias 2 0 1");
	EXPECT_EQ(8, ut_okval(r));
	EXPECT_EQ(3, UT_HITS(0));
}

/*
 * A mapping moved by mremap over and over while its probe comes and
 * goes: every removal must find the mapping wherever it is by then, or
 * the page keeps an int3 that no probe owns and the program dies of
 * SIGTRAP at its next call.  The race depends on timing: a kernel with
 * that bug may pass, one without it never fails.
 */
TEST_F_TIMEOUT(mm, mremap_racing_probe_toggle_leaves_no_stray_breakpoint, 300)
{
	const long n = 30000;
	struct ut_target *t;
	char r[256], want[64];
	long off, sum, done;
	time_t t0;
	int i;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	ASSERT_EQ(0, ut_target_send(t, "remaploop %ld", n));
	/* The target stops after 60 s on a slow (debug) kernel: so do we. */
	t0 = time(NULL);
	for (i = 0; i < 150 && time(NULL) - t0 < 50; i++) {
		UT_ENABLE(0, true);
		UT_ENABLE(0, false);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)))
		TH_LOG("the target died while its mapping moved");
	ASSERT_EQ(2, sscanf(r, "ok %ld %ld", &sum, &done)) TH_LOG("reply: %s", r);
	EXPECT_LE(1000, done) TH_LOG("too few moves to mean anything");
	/* shlib_step(i, 1, 0) is i + 8 */
	EXPECT_EQ(done * (done - 1) / 2 + 8 * done, sum) TH_LOG("reply: %s", r);
	UT_CMD(t, r, "byte alias");
	byte_str(want, sizeof(want), self->lib, off);
	EXPECT_STREQ(want, r) TH_LOG("the moved mapping's byte at the probe");
}

/* A mapping moved before the probe was enabled is found at its new place. */
TEST_F(mm, probe_enabled_after_mremap_finds_new_place)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_CMD(t, r, "mremap");
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call alias 4 0 1");
	EXPECT_EQ(8, ut_okval(r));
	EXPECT_EQ(4, UT_HITS(0));
}

/* mprotect to read-write and back to read-exec keeps the probe working. */
TEST_F(mm, mprotect_round_trip_keeps_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "mprotect rw");
	UT_CMD(t, r, "mprotect rx");
	UT_CMD(t, r, "call alias 5 1 1");
	EXPECT_EQ(9, ut_okval(r));
	EXPECT_EQ(5, UT_HITS(0));
	UT_ENABLE(0, false);
	UT_CMD(t, r, "call alias 5 1 1");
	EXPECT_EQ(5, UT_HITS(0));
}

/*
 * Short-lived processes while the probe is toggled: every process while
 * enabled is counted exactly, none while disabled.  (20 programs started
 * over 9p: slow on a loaded debug kernel, hence the time allowed.)
 */
TEST_F_TIMEOUT(mm, short_lived_processes_counted_across_toggles, 300)
{
	struct ut_target *t;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 10; i++) {
		UT_ENABLE(0, i & 1);
		UT_CMD(t, r, "spawnloop 2 2 call ut_step 3 1 1");
		EXPECT_STREQ("ok 0", r) TH_LOG("spawned programs that failed");
	}
	EXPECT_EQ(5 * 2 * 3, UT_HITS(0));
}

/*
 * Processes exit while the probe is being added and removed: they all
 * compute the right thing, and afterwards nothing is left behind.
 */
TEST_F_TIMEOUT(mm, processes_exiting_during_toggles_leave_nothing, 120)
{
	struct ut_target *t, *fresh;
	char r[256], want[64];
	uint64_t before;
	long off;
	int i;

	UT_SYM(off, self->target, "ut_step");
	before = ut_file_hash(self->target);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "spawnloop 60 2 call ut_step 20 1 1"));
	for (i = 0; i < 40; i++) {
		UT_ENABLE(0, true);
		usleep(2000);
		UT_ENABLE(0, false);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	EXPECT_STREQ("ok 0", r) TH_LOG("spawned programs that failed");
	EXPECT_EQ(before, ut_file_hash(self->target)) TH_LOG("the file changed");
	UT_START(fresh, "uprobe_target", NULL);
	UT_CMD(fresh, r, "byte ut_step");
	byte_str(want, sizeof(want), self->target, off);
	EXPECT_STREQ(want, r) TH_LOG("a new process's byte at the probe");
	UT_CMD(t, r, "byte ut_step");
	EXPECT_STREQ(want, r) TH_LOG("the spawner's byte at the probe");
}

/*
 * More threads than the XOL area has slots, each stepping the probed
 * instruction once and then waiting for all the others: a thread that
 * has finished its step must not keep a slot another one needs.
 */
TEST_F_TIMEOUT(mm, more_stepping_threads_than_xol_slots_all_finish, 120)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	/* Counted in the ring buffer: the threads hit the probe at once. */
	UT_TRACE_ROOM(4 * 300);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "crowd ut_step 300 30 12");
	EXPECT_STREQ("ok 12600", r) TH_LOG("300 threads' ut_step(30, 12)");
	EXPECT_EQ(300, UT_LINES(0, 0));
}

/* Threads created after enable, exiting while it is removed: exact work. */
TEST_F_TIMEOUT(mm, threads_running_while_probe_toggled_compute_right, 120)
{
	struct ut_target *t;
	char r[256], want[64];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "threads ut_step 4 20000 30 12"));
	for (i = 0; i < 40; i++) {
		UT_ENABLE(0, true);
		usleep(1000);
		UT_ENABLE(0, false);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	EXPECT_STREQ("ok 168", r) TH_LOG("4 threads' last ut_step(30, 12)");
	UT_CMD(t, r, "byte ut_step");
	byte_str(want, sizeof(want), self->target, off);
	EXPECT_STREQ(want, r);
}

/*
 * um_site(): a one-byte nop and a return, in this program's own text, for
 * the threads below to call with a probe on it.
 */
asm(".pushsection .text\n"
	".globl um_site\n"
	".type um_site, @function\n"
	"um_site:\n"
	"	nop\n"
	"	ret\n"
	".size um_site, .-um_site\n"
	".popsection\n");
void um_site(void);

static long um_started[4], um_finished[4];
static int um_stop;

static void *um_loop(void *arg)
{
	long id = (long)arg;

	while (!__atomic_load_n(&um_stop, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&um_started[id], 1, __ATOMIC_SEQ_CST);
		um_site();
		__atomic_add_fetch(&um_finished[id], 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * Once the enable has returned, every call hits: four threads call the
 * probed function while the event is enabled and disabled 60 times, and
 * each period records at least the calls that began after its enable
 * returned and ended before its disable began.  (A breakpoint written
 * into the page while another CPU was fetching from it stayed unseen for
 * whole periods under QEMU's TCG.)
 */
TEST_F_TIMEOUT(mm, every_call_after_the_enable_returns_is_hit, 300)
{
	long s1, s2, sure, got, lost, off, worst = 0, sure_total = 0;
	char self_path[PATH_MAX];
	int i, rounds, short_rounds = 0;
	pthread_t th[4];
	ssize_t n;

	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	ASSERT_LT(0, n);
	self_path[n] = 0;
	UT_SYM(off, self_path, "um_site");
	UT_PROBE(0, 'p', self_path, off, NULL, NULL);
	UT_TRACE_ROOM(100000);
	__atomic_store_n(&um_stop, 0, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, um_loop, (void *)(long)i));
	for (rounds = 0; rounds < 60; rounds++) {
		UT_ENABLE(0, true);
		s1 = ut_counters_sum(um_started, 4);
		usleep(2000);
		s2 = ut_counters_sum(um_finished, 4);
		UT_ENABLE(0, false);
		sure = s2 - s1;
		lost = ut_trace_lost();
		ASSERT_LE(0, lost) TH_LOG("no per_cpu/cpu*/stats in tracefs");
		got = UT_LINES(0, 0) + lost;
		if (sure > 0)
			sure_total += sure;
		if (got < sure) {
			short_rounds++;
			if (sure - got > worst)
				worst = sure - got;
		}
		ut_trace_clear();
	}
	__atomic_store_n(&um_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, short_rounds)
		TH_LOG("%d of 60 periods recorded fewer hits than sure calls (by up to %ld)",
		       short_rounds, worst);
	/* Not a pass by default: some calls were surely made while it was on. */
	EXPECT_LT(0, sure_total);
}

/*
 * A group's "enable" file turns many events on and off in one write (our
 * kernel installs them in one batch).  The cases below use a group of
 * their own, so that the write reaches their events only.
 */
#define BATCH_GRP	"ust_batch"
#define SLED_LEN	600	/* one-byte nops at ut_sled */

/* Define (or with @del, delete) events sled<i> on ut_sled+i, i < @n, in one write. */
static int sled_events(const char *target, long off, int n, bool del)
{
	char *buf = malloc((size_t)n * (PATH_MAX + 64)), *p = buf;
	int i, err;

	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (del)
			p += sprintf(p, "-:%s/sled%d\n", BATCH_GRP, i);
		else
			p += sprintf(p, "p:%s/sled%d %s:0x%lx\n", BATCH_GRP, i,
				     target, off + i);
	}
	err = ut_append("uprobe_events", buf);
	free(buf);
	return err;
}

/* How many of sled0..sled<n-1> uprobe_profile shows with exactly @hits. */
static int sled_events_with_hits(int n, unsigned long hits)
{
	char *all = ut_read("uprobe_profile"), *line, *save = NULL;
	int found = 0, i;

	if (!all)
		return -1;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char file[PATH_MAX], name[256], *slash;
		unsigned long h;

		if (sscanf(line, "%s %255s %lu", file, name, &h) != 3)
			continue;
		slash = strrchr(name, '/');
		if (sscanf(slash ? slash + 1 : name, "sled%d", &i) == 1 &&
		    i >= 0 && i < n && h == hits)
			found++;
	}
	free(all);
	return found;
}

/* The sum of the bytes of the file at @off, as a target's "bytesum" says it. */
static void sum_str(char *buf, size_t len, const char *path, long off, int n)
{
	unsigned char b[SLED_LEN];
	long sum = 0;
	int i;

	ut_file_bytes(path, off, b, n);
	for (i = 0; i < n; i++)
		sum += b[i];
	snprintf(buf, len, "ok %ld", sum);
}

/* Drop the page cache's clean pages that no process maps. */
static int drop_page_cache(void)
{
	int fd, ok;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, "3", 1) == 1;
	close(fd);
	return ok ? 0 : -EIO;
}

/* How many pages of @path's bytes [@off, @off + @len) are in the page cache. */
static int pages_cached(const char *path, long off, long len)
{
	long pg = sysconf(_SC_PAGESIZE), first = off / pg * pg;
	size_t n = (off + len - first + pg - 1) / pg, i;
	unsigned char vec[16];
	int fd, cached = 0;
	void *m;

	if (n > sizeof(vec))
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	m = mmap(NULL, n * pg, PROT_READ, MAP_SHARED, fd, first);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	if (mincore(m, n * pg, vec))
		cached = -1;
	for (i = 0; cached >= 0 && i < n; i++)
		cached += vec[i] & 1;
	munmap(m, n * pg);
	return cached;
}

/*
 * In each of the @n processes @t: the sled's bytes sum to @sum (@why says
 * what that means) and, unless @arg is 0, a call of it returns @arg.
 */
static void expect_sleds(struct __test_metadata *_metadata,
			 struct ut_target **t, int n, const char *sum,
			 const char *why, int arg)
{
	char r[256], want[32];
	int i;

	for (i = 0; i < n; i++) {
		UT_CMD(t[i], r, "bytesum ut_sled %d", SLED_LEN);
		EXPECT_STREQ(sum, r) TH_LOG("process %d: %s", i, why);
		if (!arg)
			continue;
		UT_CMD(t[i], r, "call ut_sled 1 %d", arg);
		snprintf(want, sizeof(want), "ok %d", arg);
		EXPECT_STREQ(want, r);
	}
}

FIXTURE(batch) {
	struct ut_ctx c;
	char target[PATH_MAX];
	long off;
	int nev;
};

FIXTURE_SETUP(batch)
{
	ut_ctx_init(&self->c, BATCH_GRP, _metadata->name);
	ut_write("events/" BATCH_GRP "/enable", "0");
	ut_probe_del_prefix(BATCH_GRP, "");
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	self->off = ut_sym_off(self->target, "ut_sled");
	ASSERT_LT(0, self->off) TH_LOG("no ut_sled in %s", self->target);
}

FIXTURE_TEARDOWN(batch)
{
	ut_ctx_cleanup(&self->c);
	ut_write("events/" BATCH_GRP "/enable", "0");
	if (self->nev)
		sled_events(self->target, self->off, self->nev, true);
	ut_probe_del_prefix(BATCH_GRP, "");
}

/*
 * 600 events on consecutive instructions over two pages, three processes
 * mapping the file: one write enables them all, every process hits every
 * probe once and computes right; one write disables them all, and every
 * process's text is the file's again.
 */
TEST_F_TIMEOUT(batch, group_enable_reaches_every_event_in_every_process, 300)
{
	char r[256], orig[64], bps[64];
	struct ut_target *t[3];
	int i;

	ASSERT_EQ(0, sled_events(self->target, self->off, SLED_LEN, false));
	self->nev = SLED_LEN;
	/* Each one running (its file mapped) before the write, not after. */
	for (i = 0; i < 3; i++) {
		UT_START(t[i], "uprobe_target", NULL);
		UT_CMD(t[i], r, "ping");
	}
	sum_str(orig, sizeof(orig), self->target, self->off, SLED_LEN);
	snprintf(bps, sizeof(bps), "ok %d", 0xcc * SLED_LEN);

	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "1"));
	expect_sleds(_metadata, t, 3, bps, "not every breakpoint is in", 7);
	EXPECT_EQ(SLED_LEN, sled_events_with_hits(SLED_LEN, 3))
		TH_LOG("events hit once in each of the 3 processes");

	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "0"));
	expect_sleds(_metadata, t, 3, orig, "breakpoints left", 9);
	EXPECT_EQ(SLED_LEN, sled_events_with_hits(SLED_LEN, 3))
		TH_LOG("no hits after the disable");
	sum_str(r, sizeof(r), self->target, self->off, SLED_LEN);
	EXPECT_STREQ(orig, r) TH_LOG("the file changed");
}

/*
 * The same 600 events enabled before any process maps the file: each
 * process's mapping installs them all itself (ours: in bounded rounds, a
 * page of ~300 probes written in parts), and they stay exact.
 */
TEST_F_TIMEOUT(batch, mapping_made_after_group_enable_gets_every_probe, 300)
{
	char r[256], orig[64], bps[64];
	struct ut_target *t[2];
	int i;

	ASSERT_EQ(0, sled_events(self->target, self->off, SLED_LEN, false));
	self->nev = SLED_LEN;
	sum_str(orig, sizeof(orig), self->target, self->off, SLED_LEN);
	snprintf(bps, sizeof(bps), "ok %d", 0xcc * SLED_LEN);

	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "1"));
	for (i = 0; i < 2; i++)
		UT_START(t[i], "uprobe_target", NULL);
	expect_sleds(_metadata, t, 2, bps, "not every breakpoint is in", 7);
	EXPECT_EQ(SLED_LEN, sled_events_with_hits(SLED_LEN, 2))
		TH_LOG("events hit once in each of the 2 processes");

	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "0"));
	expect_sleds(_metadata, t, 2, orig, "breakpoints left", 0);
	sum_str(r, sizeof(r), self->target, self->off, SLED_LEN);
	EXPECT_STREQ(orig, r) TH_LOG("the file changed");
}

/*
 * Sparse probes over several pages, enabled before the program starts:
 * exec maps the file twice (the first segment's R mapping of the whole
 * image, then the text), and the text mapping installs them in rounds.
 * A round whose table growth happens on a page before the round's last
 * one must still install the pages after it.  Strides 5..9 put 37..60
 * probes on each sled page, so that a round holds ut_far's page and the
 * sled's first page, and the last round the sled's second page and main's.
 */
TEST_F_TIMEOUT(batch, exec_after_enable_gets_sparse_probes, 300)
{
	long far = ut_sym_off(self->target, "ut_far");
	long mainoff = ut_sym_off(self->target, "main");
	char r[256], *buf, *q;
	struct ut_target *t;
	int stride, i, n;

	ASSERT_LT(0, far);
	ASSERT_LT(0, mainoff);
	if (far / UT_PAGE >= self->off / UT_PAGE ||
	    mainoff / UT_PAGE <= (self->off + SLED_LEN - 1) / UT_PAGE)
		SKIP(return, "ut_far / main not on pages before / after the sled");
	buf = malloc(SLED_LEN * (PATH_MAX + 64));
	ASSERT_NE(NULL, buf);
	for (stride = 5; stride <= 9; stride++) {
		n = 0;
		q = buf;
		q += sprintf(q, "p:%s/sled%d %s:0x%lx\n", BATCH_GRP, n++,
			     self->target, far);
		for (i = 0; i < SLED_LEN; i += stride)
			q += sprintf(q, "p:%s/sled%d %s:0x%lx\n", BATCH_GRP, n++,
				     self->target, self->off + i);
		q += sprintf(q, "p:%s/sled%d %s:0x%lx\n", BATCH_GRP, n++,
			     self->target, mainoff);
		ASSERT_EQ(0, ut_append("uprobe_events", buf));
		self->nev = n;
		ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "1"));

		UT_START(t, "uprobe_target", NULL);
		UT_CMD(t, r, "byte ut_far");
		EXPECT_STREQ("ok 0xcc", r) TH_LOG("stride %d: ut_far", stride);
		for (i = 0; i < SLED_LEN; i += stride) {
			UT_CMD(t, r, "byte ut_sled %d", i);
			EXPECT_STREQ("ok 0xcc", r) TH_LOG("stride %d: ut_sled+%d", stride, i);
		}
		UT_CMD(t, r, "byte main");
		EXPECT_STREQ("ok 0xcc", r) TH_LOG("stride %d: main, a page after the sled", stride);
		ut_target_stop(t);

		ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "0"));
		ASSERT_EQ(0, sled_events(self->target, self->off, n, true));
		self->nev = 0;
	}
	free(buf);
}

/*
 * A group enabled on pages that are not in the page cache: the file is
 * mapped executable here but never touched, so that dropping the cache
 * drops the sled's pages.  Enabling reads them back to analyse the probes
 * (ahead, in one request, on our kernel); every breakpoint is then in
 * this process's copy and none in the file, and disabling restores it.
 */
TEST_F_TIMEOUT(batch, group_enable_reads_pages_not_in_the_page_cache, 300)
{
	long pg = sysconf(_SC_PAGESIZE), first = self->off / pg * pg;
	size_t len = self->off + SLED_LEN - first;
	unsigned char orig[SLED_LEN], now[SLED_LEN];
	const unsigned char *sled;
	int fd, i, bps = 0, same = 0, cached;
	char *m;

	ASSERT_EQ(0, ut_file_bytes(self->target, self->off, orig, SLED_LEN));
	ASSERT_EQ(0, sled_events(self->target, self->off, SLED_LEN, false));
	self->nev = SLED_LEN;
	fd = open(self->target, O_RDONLY);
	ASSERT_LE(0, fd);
	m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, first);
	close(fd);
	ASSERT_NE(MAP_FAILED, m);
	/* Read after each write(): the compiler cannot keep them. */
	sled = (const unsigned char *)m + (self->off - first);
	ASSERT_EQ(0, drop_page_cache());
	cached = pages_cached(self->target, self->off, SLED_LEN);
	ASSERT_LE(0, cached);
	if (cached) {
		munmap(m, len);
		SKIP(return, "%d of the sled's pages stay cached: not what this tests",
		     cached);
	}

	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "1"));
	for (i = 0; i < SLED_LEN; i++)
		bps += sled[i] == 0xcc;
	EXPECT_EQ(SLED_LEN, bps) TH_LOG("breakpoints in this process's copy");
	ASSERT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "0"));
	for (i = 0; i < SLED_LEN; i++)
		same += sled[i] == orig[i];
	EXPECT_EQ(SLED_LEN, same) TH_LOG("original bytes back after the disable");
	munmap(m, len);
	ASSERT_EQ(0, ut_file_bytes(self->target, self->off, now, SLED_LEN));
	EXPECT_EQ(0, memcmp(now, orig, SLED_LEN)) TH_LOG("the file changed");
}

/*
 * One event of the group is on an instruction that cannot be probed: the
 * write fails, that event stays disabled and has no breakpoint anywhere,
 * and every other event is enabled and hit.
 */
TEST_F_TIMEOUT(batch, group_enable_fails_only_the_event_that_cannot_be_probed, 300)
{
	char r[256], def[PATH_MAX + 64], want[64];
	struct ut_target *t;
	char *v;
	long bad;
	int i, on = 0;

	UT_SYM(bad, self->target, "ut_never_hlt");
	ASSERT_EQ(0, sled_events(self->target, self->off, 40, false));
	self->nev = 40;
	snprintf(def, sizeof(def), "p:%s/never %s:0x%lx", BATCH_GRP, self->target, bad);
	ASSERT_EQ(0, ut_probe_add(def));
	UT_START(t, "uprobe_target", NULL);
	/*
	 * The refusal comes from installing in a process (as on stock): the
	 * target must have mapped the file before the write.
	 */
	UT_CMD(t, r, "ping");

	EXPECT_GT(0, ut_write("events/" BATCH_GRP "/enable", "1"))
		TH_LOG("enabling a group with a hlt probe succeeded");
	v = ut_read("events/" BATCH_GRP "/never/enable");
	ASSERT_NE(NULL, v);
	EXPECT_EQ('0', v[0]) TH_LOG("the refused event is enabled");
	free(v);
	for (i = 0; i < 40; i++) {
		snprintf(def, sizeof(def), "events/%s/sled%d/enable", BATCH_GRP, i);
		v = ut_read(def);
		on += v && v[0] == '1';
		free(v);
	}
	EXPECT_EQ(40, on) TH_LOG("events enabled besides the refused one");
	UT_CMD(t, r, "byte ut_never_hlt");
	byte_str(want, sizeof(want), self->target, bad);
	EXPECT_STREQ(want, r) TH_LOG("a breakpoint at the refused instruction");
	UT_CMD(t, r, "call ut_sled 1 5");
	EXPECT_STREQ("ok 5", r);
	EXPECT_EQ(40, sled_events_with_hits(40, 1));

	EXPECT_EQ(0, ut_write("events/" BATCH_GRP "/enable", "0"));
	UT_CMD(t, r, "bytesum ut_sled 40");
	sum_str(want, sizeof(want), self->target, self->off, 40);
	EXPECT_STREQ(want, r) TH_LOG("breakpoints left after the disable");
	EXPECT_EQ(0, ut_probe_del(BATCH_GRP, "never"));
}

UT_HARNESS_MAIN
