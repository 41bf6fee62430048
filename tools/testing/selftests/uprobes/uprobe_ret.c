// SPDX-License-Identifier: GPL-2.0
/*
 * Return probes: the right return value, one report per real return, and
 * the program's own results unchanged through recursion, threads,
 * longjmp, siglongjmp, C++ exceptions, fork, vfork, exec and a probe
 * removed while returns are pending.  Every register and flag survives
 * the return, and so do restart codes under signals; programs under
 * seccomp, syscall user dispatch or a syscall-stopping tracer see no
 * syscall they did not make.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_ret"

FIXTURE(ret) {
	struct ut_ctx c;
	char target[PATH_MAX];
	char cxx[PATH_MAX];
};

FIXTURE_SETUP(ret)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	ut_path(self->cxx, sizeof(self->cxx), "uprobe_target_cxx");
}

FIXTURE_TEARDOWN(ret)
{
	ut_ctx_cleanup(&self->c);
}

/* The field @name of the @idx-th line of this case's event @ev, as a number. */
static long field_num(struct ut_ctx *c, int ev, int idx, const char *name)
{
	char line[512], v[64];

	if (ut_trace_line(ut_ev(c, ev), idx, line, sizeof(line)) ||
	    ut_field(line, name, v, sizeof(v)))
		return LONG_MIN;
	return strtol(v, NULL, 0);
}

/* Collect the "ret=" values of every line of one event, with pids. */
struct rets {
	int n;
	int pid[4096];
	long val[4096];
};

static void rets_fn(int pid, const char *rest, void *arg)
{
	struct rets *r = arg;
	char v[64];

	if (r->n >= 4096 || ut_field(rest - 1, "ret", v, sizeof(v)))
		return;
	r->pid[r->n] = pid;
	r->val[r->n++] = strtol(v, NULL, 0);
}

static int collect(struct ut_ctx *c, int ev, struct rets *r)
{
	r->n = 0;
	ut_trace_walk(ut_ev(c, ev), 0, rets_fn, r);
	return r->n;
}

/* $retval is what the function returned. */
TEST_F(ret, retprobe_reports_return_value)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 1 5 -3");
	EXPECT_EQ(12, ut_okval(r));
	ASSERT_EQ(1, UT_LINES(0, t->pid));
	EXPECT_EQ(12, field_num(&self->c, 0, 0, "ret"));
}

/* The "PATH:OFFSET%return" spelling is a return probe too. */
TEST_F(ret, percent_return_suffix_makes_a_return_probe)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, "%return", "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 1 -4 2");
	ASSERT_EQ(1, UT_LINES(0, t->pid));
	EXPECT_EQ(-10, field_num(&self->c, 0, 0, "ret"));
}

/* Every return is reported once, with its own value, in order. */
TEST_F(ret, every_return_reported_once_in_order)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 50; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 1", i);
	ASSERT_EQ(50, collect(&self->c, 0, &rs));
	for (i = 0; i < 50; i++)
		EXPECT_EQ(3 * i + 1, rs.val[i]) TH_LOG("return %d", i);
}

/* Entry and return probes on one function count the same calls. */
TEST_F(ret, entry_and_return_probes_count_the_same_calls)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 300 2 2");
	EXPECT_EQ(8, ut_okval(r));
	EXPECT_EQ(300, UT_HITS(0));
	EXPECT_EQ(300, UT_LINES(1, t->pid));
}

/* Recursion: each level returns through the probe, innermost first. */
TEST_F(ret, recursion_reports_every_level_innermost_first)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_depth");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_depth 1 30");
	EXPECT_EQ(30, ut_okval(r));
	ASSERT_EQ(31, collect(&self->c, 0, &rs));
	for (i = 0; i <= 30; i++)
		EXPECT_EQ(i, rs.val[i]) TH_LOG("return %d", i);
}

/* Branching recursion: fib(12) makes 465 calls and as many returns. */
TEST_F(ret, branching_recursion_returns_match_calls)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_fib");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_fib 1 12");
	EXPECT_EQ(144, ut_okval(r));
	EXPECT_EQ(465, UT_HITS(0));
	EXPECT_EQ(465, UT_LINES(1, t->pid));
}

/*
 * Recursion deeper than any nesting limit: the program still computes the
 * right result, every entry is seen, and no more returns than calls are
 * reported (past the limit returns may go unreported).
 */
TEST_F(ret, deep_recursion_keeps_program_result)
{
	struct ut_target *t;
	char r[256];
	long off;
	int lines;

	UT_SYM(off, self->target, "ut_depth");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_depth 1 2000");
	EXPECT_EQ(2000, ut_okval(r));
	EXPECT_EQ(2001, UT_HITS(0));
	lines = UT_LINES(1, t->pid);
	EXPECT_GE(2001, lines);
	EXPECT_LE(64, lines) TH_LOG("only %d returns reported", lines);
	UT_CMD(t, r, "call ut_depth 1 5");
	EXPECT_EQ(5, ut_okval(r));
	EXPECT_EQ(lines + 6, UT_LINES(1, t->pid))
		TH_LOG("returns after the deep recursion");
}

/* Threads: every return reported with the right value. */
TEST_F(ret, threads_each_return_reported_right)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off;
	int i, bad = 0;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "threads ut_plain 4 500 3 4");
	EXPECT_EQ(4 * 13, ut_okval(r));
	ASSERT_EQ(2000, collect(&self->c, 0, &rs));
	for (i = 0; i < rs.n; i++)
		bad += rs.val[i] != 13;
	EXPECT_EQ(0, bad) TH_LOG("%d returns with a value other than 13", bad);
}

/* Nested probed functions: both returns reported, the inner one first. */
TEST_F(ret, nested_functions_return_inner_first)
{
	struct ut_target *t;
	char r[256], line[512];
	long off1, off2;
	char *all, *p1, *p2;

	UT_SYM(off1, self->target, "ut_callrel");
	UT_SYM(off2, self->target, "ut_inc");
	UT_PROBE(0, 'r', self->target, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_callrel 1 41");
	EXPECT_EQ(42, ut_okval(r));
	EXPECT_EQ(42, field_num(&self->c, 0, 0, "ret"));
	EXPECT_EQ(42, field_num(&self->c, 1, 0, "ret"));
	all = ut_read("trace");
	ASSERT_NE(NULL, all);
	snprintf(line, sizeof(line), " %s: ", ut_ev(&self->c, 0));
	p1 = strstr(all, line);
	snprintf(line, sizeof(line), " %s: ", ut_ev(&self->c, 1));
	p2 = strstr(all, line);
	EXPECT_TRUE(p1 && p2 && p2 < p1) TH_LOG("ut_inc's return must come before ut_callrel's");
	free(all);
}

/*
 * longjmp out of two probed frames: the abandoned frames are never
 * reported, and later returns of the same functions are reported right.
 */
TEST_F(ret, longjmp_abandoned_frames_not_reported)
{
	struct ut_target *t;
	char r[256];
	long off1, off2;

	UT_SYM(off1, self->target, "ut_lj_outer");
	UT_SYM(off2, self->target, "ut_lj_inner");
	UT_PROBE(0, 'r', self->target, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_PROBE(2, 'p', self->target, off2, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_ENABLE(2, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "longjmp 2");
	EXPECT_STREQ("ok jumped 3", r);
	UT_CMD(t, r, "longjmp 4");
	EXPECT_STREQ("ok jumped 5", r);
	EXPECT_EQ(0, UT_LINES(0, 0)) TH_LOG("returns of ut_lj_outer after longjmp");
	EXPECT_EQ(0, UT_LINES(1, 0)) TH_LOG("returns of ut_lj_inner after longjmp");
	UT_CMD(t, r, "longjmp -1");
	EXPECT_STREQ("ok returned 99", r);
	EXPECT_EQ(1, UT_LINES(0, 0));
	EXPECT_EQ(1, UT_LINES(1, 0));
	EXPECT_EQ(99, field_num(&self->c, 0, 0, "ret"));
	EXPECT_EQ(-1, field_num(&self->c, 1, 0, "ret"));
	EXPECT_EQ(3, UT_HITS(2));
}

/* Many longjmps in a row: nothing leaks into later returns. */
TEST_F(ret, repeated_longjmp_then_normal_returns_exact)
{
	struct ut_target *t;
	char r[256];
	long off1, off2;
	int i;

	UT_SYM(off1, self->target, "ut_lj_outer");
	UT_SYM(off2, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 100; i++)
		UT_CMD(t, r, "longjmp %d", i);
	EXPECT_STREQ("ok jumped 100", r);
	UT_CMD(t, r, "call ut_plain 10 1 1");
	EXPECT_EQ(4, ut_okval(r));
	EXPECT_EQ(0, UT_LINES(0, 0));
	EXPECT_EQ(10, UT_LINES(1, 0));
}

/* siglongjmp out of a handler that interrupted a probed function. */
TEST_F(ret, siglongjmp_from_handler_drops_abandoned_frame)
{
	struct ut_target *t;
	char r[256];
	long off1, off2;

	UT_SYM(off1, self->target, "ut_raiser");
	UT_SYM(off2, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "siglongjmp 10");
	EXPECT_STREQ("ok jumped 10", r);
	UT_CMD(t, r, "siglongjmp 12");
	EXPECT_STREQ("ok jumped 12", r);
	UT_CMD(t, r, "call ut_plain 3 2 0");
	EXPECT_EQ(6, ut_okval(r));
	EXPECT_EQ(0, UT_LINES(0, 0));
	EXPECT_EQ(3, UT_LINES(1, 0));
}

/* C++: an exception thrown and caught inside the probed function. */
TEST_F(ret, cxx_exception_caught_inside_probed_function)
{
	static struct rets rs;
	char out[256];
	char *const args[] = { "catch_inside", "10", NULL };
	long off1, off2;
	int st, i;

	UT_SYM(off1, self->cxx, "ut_cx_catcher");
	UT_SYM(off2, self->cxx, "ut_cx_thrower");
	UT_PROBE(0, 'r', self->cxx, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'p', self->cxx, off2, NULL, NULL);
	UT_PROBE(2, 'p', self->cxx, off1, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_ENABLE(2, true);
	st = ut_run("uprobe_target_cxx", args, out, sizeof(out));
	EXPECT_EQ(0, st) TH_LOG("the C++ program ended with status 0x%x", st);
	EXPECT_STREQ("ok 270\n", out);
	EXPECT_EQ(10, UT_HITS(1));
	EXPECT_EQ(10, UT_HITS(2));
	ASSERT_EQ(10, collect(&self->c, 0, &rs));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(i & 1 ? 10 * i : i, rs.val[i]) TH_LOG("return %d", i);
}

/*
 * C++: exceptions thrown through a function with an entry probe only
 * (the unwinder walks the probed frames) leave the results unchanged.
 */
TEST_F(ret, cxx_exception_through_entry_probed_frames)
{
	char out[256];
	char *const args[] = { "throw_through", "10", NULL };
	long off1, off2;
	int st;

	UT_SYM(off1, self->cxx, "ut_cx_middle");
	UT_SYM(off2, self->cxx, "ut_cx_thrower");
	UT_PROBE(0, 'p', self->cxx, off1, NULL, NULL);
	UT_PROBE(1, 'p', self->cxx, off2, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	st = ut_run("uprobe_target_cxx", args, out, sizeof(out));
	EXPECT_EQ(0, st) TH_LOG("the C++ program ended with status 0x%x", st);
	EXPECT_STREQ("ok 275\n", out);
	EXPECT_EQ(10, UT_HITS(0));
	EXPECT_EQ(10, UT_HITS(1));
}

/* fork inside a probed function: parent and child each return once, right. */
TEST_F(ret, fork_with_return_pending_both_return_right)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off;
	int i, parent = 0, child = 0;

	UT_SYM(off, self->target, "ut_forker");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forker 5");
	EXPECT_STREQ("ok 1005 6", r) TH_LOG("parent's result and child's exit status");
	ASSERT_EQ(2, collect(&self->c, 0, &rs));
	for (i = 0; i < rs.n; i++) {
		if (rs.pid[i] == t->pid) {
			parent++;
			EXPECT_EQ(1005, rs.val[i]);
		} else {
			child++;
			EXPECT_EQ(1006, rs.val[i]);
		}
	}
	EXPECT_EQ(1, parent);
	EXPECT_EQ(1, child);
}

/* vfork inside a probed function: the parent returns once, right. */
TEST_F(ret, vfork_with_return_pending_parent_returns_right)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_vforker");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_vforker 3 3");
	EXPECT_EQ(10, ut_okval(r));
	ASSERT_EQ(3, collect(&self->c, 0, &rs));
	EXPECT_EQ(t->pid, rs.pid[0]);
	EXPECT_EQ(10, rs.val[0]);
	EXPECT_EQ(10, rs.val[2]);
}

/*
 * The probe is removed while a return is pending: the function still
 * returns to its caller with its value, and nothing more is reported.
 */
TEST_F(ret, probe_removed_while_return_pending)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_block");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_cmd(t, r, sizeof(r), "call ut_block 1 5"));
	ASSERT_STREQ("blocked", r);
	UT_ENABLE(0, false);
	ASSERT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, 0)));
	UT_CMD(t, r, "go");
	EXPECT_EQ(15, ut_okval(r)) TH_LOG("ut_block's result after the probe went away");
	UT_CMD(t, r, "call ut_plain 1 1 1");
	EXPECT_EQ(4, ut_okval(r));
	EXPECT_EQ(0, UT_LINES(0, 0));
}

/* Disabled (not removed) while pending: the return is not reported. */
TEST_F(ret, probe_disabled_while_return_pending)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_block");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	ASSERT_EQ(0, ut_target_cmd(t, r, sizeof(r), "call ut_block 1 5"));
	ASSERT_STREQ("blocked", r);
	UT_ENABLE(0, false);
	UT_CMD(t, r, "go");
	EXPECT_EQ(15, ut_okval(r));
	UT_ENABLE(0, true);
	ASSERT_EQ(0, ut_target_cmd(t, r, sizeof(r), "call ut_block 1 6"));
	ASSERT_STREQ("blocked", r);
	UT_CMD(t, r, "go");
	EXPECT_EQ(16, ut_okval(r));
	ASSERT_EQ(1, UT_LINES(0, 0));
	EXPECT_EQ(16, field_num(&self->c, 0, 0, "ret"));
}

/*
 * More return probes than a thread keeps instances for, on functions
 * called in turn and one called over and over, deleted and defined anew
 * between rounds: every return reported once with its value, whichever
 * probe the thread's last returns were for.
 */
TEST_F(ret, return_probes_deleted_and_redefined_while_a_thread_cycles)
{
	static const struct { const char *fn; long val; } f[] = {
		{ "ut_step", 10 }, { "ut_nop", 7 }, { "ut_push", 8 },
		{ "ut_negate", -7 }, { "ut_movimm", 0x1234 + 7 },
		{ "ut_movneg", 2 },
	};
	const int nf = ARRAY_SIZE(f), cycles = 4, each = 3, again = 50;
	struct ut_target *t;
	static struct rets rs;
	long off[ARRAY_SIZE(f)];
	int round, i, k, bad;
	char r[256];

	for (i = 0; i < nf; i++)
		UT_SYM(off[i], self->target, f[i].fn);
	UT_START(t, "uprobe_target", NULL);
	for (round = 0; round < 6; round++) {
		for (i = 0; i < nf; i++) {
			UT_PROBE(i, 'r', self->target, off[i], NULL,
				 "ret=$retval:s64");
			UT_ENABLE(i, true);
		}
		ASSERT_EQ(0, ut_trace_clear());
		for (k = 0; k < cycles; k++) {
			for (i = 0; i < nf; i++) {
				UT_CMD(t, r, "call %s %d 7 3", f[i].fn, each);
				ASSERT_EQ(f[i].val, ut_okval(r));
			}
		}
		/* The last one's instance over and over. */
		UT_CMD(t, r, "call %s %d 7 3", f[nf - 1].fn, again);
		ASSERT_EQ(f[nf - 1].val, ut_okval(r));
		for (i = 0; i < nf; i++) {
			int want = cycles * each + (i == nf - 1 ? again : 0);

			EXPECT_EQ(want, collect(&self->c, i, &rs))
				TH_LOG("round %d: %s's returns", round, f[i].fn);
			for (bad = 0, k = 0; k < rs.n; k++)
				bad += rs.val[k] != f[i].val;
			EXPECT_EQ(0, bad)
				TH_LOG("round %d: %d returns of %s with a value other than %ld",
				       round, bad, f[i].fn, f[i].val);
		}
		for (i = 0; i < nf; i++)
			ASSERT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, i)));
	}
}

/* exec from inside a probed function: the new image starts clean. */
TEST_F(ret, exec_with_return_pending_starts_clean)
{
	struct ut_target *t;
	static struct rets rs;
	char r[256];
	long off1, off2;

	UT_SYM(off1, self->target, "ut_execer");
	UT_SYM(off2, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off1, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_execer 1 4");
	EXPECT_STREQ("ok 12", r) TH_LOG("the new image's first command");
	UT_CMD(t, r, "call ut_plain 1 2 0");
	EXPECT_EQ(6, ut_okval(r));
	EXPECT_EQ(0, UT_LINES(0, 0));
	ASSERT_EQ(2, collect(&self->c, 1, &rs));
	EXPECT_EQ(12, rs.val[0]);
	EXPECT_EQ(6, rs.val[1]);
}

/* The return line names the function's address and the caller. */
TEST_F(ret, return_line_names_function_and_caller)
{
	struct ut_target *t;
	char r[256], line[512], want[64];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr ut_plain");
	snprintf(want, sizeof(want), "<- %s)", r + 3);
	UT_CMD(t, r, "call ut_plain 1 1 1");
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("expected '%s' in '%s'", want, line);
}

/*
 * A return leaves every register as the function left it (including
 * the ones a syscall would clobber) and the flags, and the caller's
 * saved registers and stack pointer as they were.
 */
TEST_F(ret, registers_and_flags_unchanged_across_probed_return)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_regs");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:x64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_regcheck 1 2000");
	EXPECT_EQ(0, ut_okval(r))
		TH_LOG("a register was wrong with %ld calls left", ut_okval(r));
	EXPECT_EQ(2000, UT_HITS(0));
	EXPECT_EQ(2000, UT_HITS(1));
	EXPECT_EQ(0x11111111, field_num(&self->c, 1, 0, "ret"));
}

/*
 * Values that ask a syscall to be restarted (-ERESTARTSYS and its kind)
 * come back from a probed function as they are, also when a signal is
 * delivered on the way back.
 */
TEST_F(ret, restart_codes_returned_unchanged_under_signals)
{
	struct ut_target *t;
	long sum, nsig, calls, want = 0, i;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_errval");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "sigloop ut_errval 20000 20");
	ASSERT_EQ(3, sscanf(r, "ok %ld %ld %*d %ld", &sum, &nsig, &calls))
		TH_LOG("reply '%s'", r);
	for (i = 0; i < calls; i++)
		want += -512 - i % 5;
	EXPECT_EQ(want, sum) TH_LOG("%ld calls, %ld signals", calls, nsig);
	EXPECT_LE(2000, calls);
	EXPECT_LE(10, nsig) TH_LOG("only %ld signals came", nsig);
	EXPECT_EQ(calls, UT_HITS(0));
	UT_CMD(t, r, "ping");
}

/*
 * A probed function that installs a seccomp filter killing on syscall
 * 335 returns (and later probed returns too); the filter does work.
 */
TEST_F(ret, seccomp_filter_installed_in_probed_function_keeps_it_alive)
{
	struct ut_target *t;
	char r[256];
	long off, off2;
	int st;

	UT_SYM(off, self->target, "ut_sandbox");
	UT_SYM(off2, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_PROBE(1, 'r', self->target, off2, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_sandbox 1 335 4");
	if (ut_okval(r) == -EINVAL || ut_okval(r) == -ENOSYS)
		SKIP(return, "no seccomp filters in this kernel");
	EXPECT_EQ(20, ut_okval(r));
	UT_CMD(t, r, "call ut_plain 100 2 3");
	EXPECT_EQ(9, ut_okval(r));
	EXPECT_EQ(1, UT_LINES(0, t->pid));
	EXPECT_EQ(100, UT_LINES(1, t->pid));
	/* The filter is in force: the program's own syscall 335 kills it. */
	ASSERT_NE(0, ut_target_cmd(t, r, sizeof(r), "call ut_sys 1 335"));
	st = ut_target_stop(t);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) TH_LOG("status 0x%x", st);
}

/*
 * A program that dispatches its own syscalls to SIGSYS (syscall user
 * dispatch, as Wine does) gets no SIGSYS from probed returns.
 */
TEST_F(ret, syscall_user_dispatch_sees_no_signal_from_returns)
{
	struct ut_target *t;
	char r[256];
	long off, nsys;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "sud ut_plain 200 2 3");
	EXPECT_STREQ("ok 9 0", r);
	EXPECT_EQ(200, UT_LINES(0, t->pid));
	/* Dispatch does work: a syscall of its own raises SIGSYS. */
	UT_CMD(t, r, "sud ut_sys 1 39");
	ASSERT_EQ(1, sscanf(r, "ok %*d %ld", &nsys)) TH_LOG("reply '%s'", r);
	EXPECT_EQ(1, nsys);
}

/* A tracer stopping at every syscall sees none from probed returns. */
TEST_F(ret, ptrace_syscall_tracer_sees_no_syscall_from_returns)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ptraced ut_plain 100 335 9 2 3");
	EXPECT_STREQ("ok 0 0", r);
	EXPECT_EQ(100, UT_HITS(0));
	/* The tracer does count: a syscall 335 of the child's own. */
	UT_CMD(t, r, "ptraced ut_sys 1 335 -38 335");
	EXPECT_STREQ("ok 2 0", r);
}

/*
 * Syscall 335 made by the program itself, even from a function whose
 * return is pending, gets SIGILL, as uretprobe(2) has it since 6.11
 * (6.1 has no syscall 335: ENOSYS); no return is recorded for it.
 */
TEST_F(ret, program_syscall_335_gets_sigill_with_return_pending)
{
	struct ut_target *t;
	char r[256];
	long off;
	int st;

	UT_SYM(off, self->target, "ut_sys");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 1 2 3");
	EXPECT_EQ(9, ut_okval(r));
	ASSERT_NE(0, ut_target_cmd(t, r, sizeof(r), "call ut_sys 1 335"))
		TH_LOG("the program's syscall 335 returned: %s", r);
	st = ut_target_stop(t);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL) TH_LOG("status 0x%x", st);
	EXPECT_EQ(0, UT_LINES(0, 0));
}

UT_HARNESS_MAIN
