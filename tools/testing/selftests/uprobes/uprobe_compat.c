// SPDX-License-Identifier: GPL-2.0
/*
 * 32-bit (compat) tasks: hits counted, a stepped and an emulated
 * instruction keep their effect, arguments read from the 32-bit stack,
 * return probes through recursion.  Skipped, with the reason, when the
 * 32-bit target could not be built (no -m32 toolchain).
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_compat"

FIXTURE(compat) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_SETUP(compat)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target32");
}

FIXTURE_TEARDOWN(compat)
{
	ut_ctx_cleanup(&self->c);
}

#define NEED_TARGET32() do {							\
	char *const __a[] = { "lea", "1", "1", "1", NULL };			\
	char __o[64];								\
	if (access(self->target, X_OK))						\
		SKIP(return, "no 32-bit target %s (built without -m32 support)", \
		     self->target);						\
	if (ut_run("uprobe_target32", __a, __o, sizeof(__o)) == 127 << 8)	\
		SKIP(return, "32-bit programs do not run here (CONFIG_IA32_EMULATION?)"); \
} while (0)

/* Run the 32-bit target; it must exit 0 and print @want. */
#define RUN32(want, ...) do {							\
	char *const __a[] = { __VA_ARGS__, NULL };				\
	char __out[128];							\
	int __st = ut_run("uprobe_target32", __a, __out, sizeof(__out));	\
	EXPECT_EQ(0, __st) TH_LOG("the 32-bit target ended with status 0x%x", __st); \
	EXPECT_STREQ(want "\n", __out);						\
} while (0)

/* A stepped instruction in a compat task: right result, every hit counted. */
TEST_F(compat, stepped_probe_counts_and_keeps_result)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	RUN32("ok 9", "lea", "200", "4", "5");
	EXPECT_EQ(200, UT_HITS(0));
}

/* An emulated push in a compat task pushes 4 bytes, not 8. */
TEST_F(compat, emulated_push_keeps_result)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_push");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	RUN32("ok 8", "push", "150", "7");
	EXPECT_EQ(150, UT_HITS(0));
}

/* cdecl arguments read from the 32-bit stack. */
TEST_F(compat, stack_arguments_read_right)
{
	char line[512], v[64];
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_args");
	UT_PROBE(0, 'p', self->target, off, NULL,
		 "a=+4(%sp):s32 b=+8(%sp):s32 ret=+0(%sp):x32");
	UT_ENABLE(0, true);
	RUN32("ok 4", "args", "1", "-3", "2", "hello");
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)))
		TH_LOG("no trace line for the hit");
	ASSERT_EQ(0, ut_field(line, "a", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("-3", v);
	ASSERT_EQ(0, ut_field(line, "b", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("2", v);
	ASSERT_EQ(0, ut_field(line, "ret", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_EQ(0, strncmp(v, "0x", 2)) TH_LOG("the return address: %s", v);
	EXPECT_NE(0, strtoul(v, NULL, 16)) TH_LOG("the return address: %s", v);
}

/* Return probes in a compat task: every level of a recursion, right values. */
TEST_F(compat, return_probe_through_recursion)
{
	char line[512], v[64], want[16];
	long off;
	int i;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_depth");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s32");
	UT_ENABLE(0, true);
	RUN32("ok 12", "depth", "1", "12");
	ASSERT_EQ(13, UT_LINES(0, 0));
	for (i = 0; i <= 12; i++) {
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), i, line, sizeof(line)));
		ASSERT_EQ(0, ut_field(line, "ret", v, sizeof(v)));
		snprintf(want, sizeof(want), "%d", i);
		EXPECT_STREQ(want, v) TH_LOG("return %d", i);
	}
}

/* Entry and return probes together in a compat task, many calls. */
TEST_F(compat, entry_and_return_probes_count_the_same_calls)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_args");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s32");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	RUN32("ok 5", "args", "100", "1", "1", "abc");
	EXPECT_EQ(100, UT_HITS(0));
	EXPECT_EQ(100, UT_LINES(1, 0));
}

/*
 * The probe is analysed in the first mm that maps its file.  Here that
 * is this 64-bit test, which maps the 32-bit target read-only before the
 * event is enabled, so the plan is made for 64-bit code; the 32-bit
 * target's hits must still run its instructions as 32-bit code, with
 * every hit counted, and finish (a plan of the wrong mode once made each
 * hit retry its step forever).
 */
TEST_F(compat, probe_first_mapped_by_64bit_process_runs_in_32bit_task)
{
	static const char *const fns[] = { "ut32_lea", "ut32_push" };
	char *const args[2][5] = { { "lea", "50", "4", "5", NULL },
				   { "push", "50", "7", NULL } };
	static const char *const want[] = { "ok 9", "ok 8" };
	struct ut_target *t;
	char out[128];
	unsigned int i;
	long off;
	void *map;
	int fd, st, waited;

	NEED_TARGET32();
	fd = open(self->target, O_RDONLY);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	close(fd);
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		UT_SYM(off, self->target, fns[i]);
		UT_PROBE(i, 'p', self->target, off, NULL, NULL);
		UT_ENABLE(i, true);
	}
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		UT_START(t, "uprobe_target32", args[i]);
		/* A thread trapping forever never exits: give it 20 s. */
		for (waited = 0; waited < 2000; waited++) {
			if (waitpid(t->pid, &st, WNOHANG) == t->pid)
				break;
			usleep(10000);
		}
		ASSERT_GT(2000, waited) TH_LOG("the 32-bit %s did not finish", fns[i]);
		t->pid = 0;
		EXPECT_EQ(0, st) TH_LOG("the 32-bit target ended with 0x%x", st);
		out[0] = '\0';
		if (!fgets(out, sizeof(out), t->from))
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		fclose(t->from);
		close(t->to);
		EXPECT_STREQ(want[i], out);
		EXPECT_EQ(50, UT_HITS(i)) TH_LOG("hits of %s", fns[i]);
	}
	munmap(map, 1 << 20);
}

UT_HARNESS_MAIN
