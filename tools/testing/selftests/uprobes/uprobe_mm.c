// SPDX-License-Identifier: GPL-2.0
/*
 * Probes follow the program's address space: fork, vfork, exec, a shared
 * library loaded late or used by several processes, the same file mapped
 * twice, munmap, a partial munmap, mremap, mprotect, and processes that
 * come and go while probes are added and removed.
 */
#include <time.h>

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

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_lea 2 1 1");
	UT_CMD(t, r, "fork ut_lea 4 1 1");
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

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_lea");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "release");
	byte_str(want, sizeof(want), self->target, off);
	snprintf(want + strlen(want), sizeof(want) - strlen(want), " 3");
	EXPECT_STREQ(want, r) TH_LOG("the child's byte at the probe and ut_lea(1, 2)");
	EXPECT_EQ(0, UT_HITS(0));
}

/* A child forked before the probe was enabled gets the breakpoint too. */
TEST_F(mm, fork_child_gets_probe_enabled_later)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child;

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_lea");
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

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "vfork ut_lea 3 2 3");
	ASSERT_EQ(2, sscanf(r, "ok %d %d", &child, &v)) TH_LOG("reply: %s", r);
	EXPECT_EQ(5, v) TH_LOG("ut_lea(2, 3) in the vfork child");
	EXPECT_EQ(3, UT_LINES(0, child));
	UT_CMD(t, r, "call ut_lea 2 1 1");
	EXPECT_EQ(2, UT_LINES(0, t->pid));
}

/* exec of the probed program (in place and fork+exec) gets the probes. */
TEST_F(mm, exec_of_probed_program_gets_probes)
{
	struct ut_target *t;
	char r[256];
	long off;
	int child, st;

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "spawn call ut_lea 5 1 1");
	ASSERT_EQ(2, sscanf(r, "ok %d %d", &child, &st)) TH_LOG("reply: %s", r);
	EXPECT_EQ(2, st) TH_LOG("the spawned program's ut_lea(1, 1)");
	EXPECT_EQ(5, UT_LINES(0, child));
	UT_CMD(t, r, "exec call ut_lea 3 2 2");
	EXPECT_STREQ("ok 4", r);
	UT_CMD(t, r, "byte ut_lea");
	EXPECT_STREQ("ok 0xcc", r);
	EXPECT_EQ(3, UT_LINES(0, t->pid));
}

/* A library loaded after the probe was enabled gets the breakpoint. */
TEST_F(mm, library_loaded_after_enable_gets_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_lea");
	UT_PROBE(0, 'p', self->lib, off, NULL, "a=%di:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_lea 1 1 1");
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "call shlib_lea 4 1 2");
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

	UT_SYM(off, self->lib, "shlib_lea");
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
		UT_CMD(t[i], r, "call shlib_lea %d %d 0", i + 1, i);
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

	UT_SYM(off, self->lib, "shlib_lea");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "byte alias");
	EXPECT_STREQ("ok 0xcc", r) TH_LOG("the second mapping's byte at the probe");
	UT_CMD(t, r, "call shlib_lea 3 1 1");
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

	UT_SYM(off, self->lib, "shlib_lea");
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_CMD(t, r, "call alias 6 0 0");
	EXPECT_EQ(7, ut_okval(r));
	EXPECT_EQ(6, UT_HITS(0));
}

/* Unmapping one of two mappings leaves the other probed. */
TEST_F(mm, munmap_of_one_mapping_keeps_the_other_probed)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->lib, "shlib_lea");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "dlopen");
	UT_CMD(t, r, "alias 0x%lx 1", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call alias 2 0 0");
	UT_CMD(t, r, "unalias");
	UT_CMD(t, r, "call shlib_lea 3 0 0");
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

	UT_SYM(off, self->lib, "shlib_lea");
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

	UT_SYM(off, self->lib, "shlib_lea");
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

	UT_SYM(off, self->lib, "shlib_lea");
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
	/* shlib_lea(i, 1, 0) is i + 8 */
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

	UT_SYM(off, self->lib, "shlib_lea");
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

	UT_SYM(off, self->lib, "shlib_lea");
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

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 10; i++) {
		UT_ENABLE(0, i & 1);
		UT_CMD(t, r, "spawnloop 2 2 call ut_lea 3 1 1");
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

	UT_SYM(off, self->target, "ut_lea");
	before = ut_file_hash(self->target);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "spawnloop 60 2 call ut_lea 20 1 1"));
	for (i = 0; i < 40; i++) {
		UT_ENABLE(0, true);
		usleep(2000);
		UT_ENABLE(0, false);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	EXPECT_STREQ("ok 0", r) TH_LOG("spawned programs that failed");
	EXPECT_EQ(before, ut_file_hash(self->target)) TH_LOG("the file changed");
	UT_START(fresh, "uprobe_target", NULL);
	UT_CMD(fresh, r, "byte ut_lea");
	byte_str(want, sizeof(want), self->target, off);
	EXPECT_STREQ(want, r) TH_LOG("a new process's byte at the probe");
	UT_CMD(t, r, "byte ut_lea");
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

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "crowd ut_lea 300 30 12");
	EXPECT_STREQ("ok 12600", r) TH_LOG("300 threads' ut_lea(30, 12)");
	EXPECT_EQ(300, UT_HITS(0));
}

/* Threads created after enable, exiting while it is removed: exact work. */
TEST_F_TIMEOUT(mm, threads_running_while_probe_toggled_compute_right, 120)
{
	struct ut_target *t;
	char r[256], want[64];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_send(t, "threads ut_lea 4 20000 30 12"));
	for (i = 0; i < 40; i++) {
		UT_ENABLE(0, true);
		usleep(1000);
		UT_ENABLE(0, false);
	}
	ASSERT_EQ(0, ut_target_reply(t, r, sizeof(r)));
	EXPECT_STREQ("ok 168", r) TH_LOG("4 threads' last ut_lea(30, 12)");
	UT_CMD(t, r, "byte ut_lea");
	byte_str(want, sizeof(want), self->target, off);
	EXPECT_STREQ(want, r);
}

UT_HARNESS_MAIN
