// SPDX-License-Identifier: GPL-2.0
/*
 * Entry probes through tracefs: hits counted exactly, arguments fetched
 * right, the probed instruction's effect unchanged whether the kernel
 * emulates it or steps it out of line, SDT semaphores.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_basic"

/* Hits per thread in profile_counts_exactly_under_concurrent_hits. */
#ifndef PROFILE_RACE_HITS
#define PROFILE_RACE_HITS 1000000L
#endif

FIXTURE(basic) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_SETUP(basic)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
}

FIXTURE_TEARDOWN(basic)
{
	ut_ctx_cleanup(&self->c);
}

/* A probe enabled before the process starts sees every call. */
TEST_F(basic, entry_probe_counts_every_call)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 1000 2 3");
	EXPECT_EQ(5, ut_okval(r)) TH_LOG("ut_step(2, 3) returned %s under a probe", r);
	EXPECT_EQ(1000, UT_HITS(0));
}

/* A probe enabled while the process runs sees the calls made after. */
TEST_F(basic, probe_enabled_in_running_process_counts_later_calls)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 50 1 1");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call ut_step 70 1 1");
	EXPECT_EQ(70, UT_HITS(0));
}

/* A defined event that is not enabled installs nothing and counts nothing. */
TEST_F(basic, defined_but_disabled_probe_counts_nothing)
{
	struct ut_target *t;
	unsigned char orig;
	char r[256], want[16];
	long off;

	UT_SYM(off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, &orig, 1));
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 100 1 1");
	EXPECT_EQ(0, UT_HITS(0));
	UT_CMD(t, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig);
	EXPECT_STREQ(want, r);
}

/* Disabling stops the counting at once. */
TEST_F(basic, hits_stop_when_probe_disabled)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call ut_step 10 1 1");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "call ut_step 10 1 1");
	EXPECT_EQ(10, UT_HITS(0));
	EXPECT_EQ(10, UT_LINES(0, t->pid));
}

/* Re-enabling after a disable counts again, from where it was. */
TEST_F(basic, probe_reenabled_counts_again)
{
	struct ut_target *t;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 5; i++) {
		UT_ENABLE(0, true);
		UT_CMD(t, r, "call ut_step 3 1 1");
		UT_ENABLE(0, false);
		UT_CMD(t, r, "call ut_step 2 1 1");
	}
	EXPECT_EQ(15, UT_HITS(0));
	EXPECT_EQ(2, ut_okval(r));
}

/*
 * Every thread of a process hits, and no hit is lost or doubled.  The
 * threads hit at once, so the hits are counted as trace lines (one per
 * hit, of any thread: pid 0), not in uprobe_profile.
 */
TEST_F(basic, every_thread_hits_exactly)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_TRACE_ROOM(8000);
	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "threads ut_step 8 1000 20 22");
	EXPECT_EQ(8 * 42, ut_okval(r)) TH_LOG("threads' results: %s", r);
	EXPECT_EQ(8000, UT_LINES(0, 0));
}

/*
 * Threads on both CPUs hitting an emulated and a stepped probe at once;
 * counted as trace lines, as above.
 */
TEST_F(basic, threads_hit_two_probes_exactly)
{
	struct ut_target *t;
	char r[256];
	long off1, off2;

	UT_TRACE_ROOM(2 * 6000);
	UT_SYM(off1, self->target, "ut_callrel");
	UT_SYM(off2, self->target, "ut_inc");
	UT_PROBE(0, 'p', self->target, off1, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off2, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "threads ut_callrel 4 1500 9");
	EXPECT_EQ(4 * 10, ut_okval(r));
	EXPECT_EQ(6000, UT_LINES(0, 0));
	EXPECT_EQ(6000, UT_LINES(1, 0));
}

/*
 * uprobe_profile itself counts exactly while two threads on two CPUs hit
 * one probe as fast as they can.  Stock kernels count with a non-atomic
 * increment and lose some of these hits (hence the trace lines above);
 * the count must not depend on how the hits interleave.  The probe is on
 * a push, which x86 emulates: a hit is one trap, so the two CPUs count
 * as often, and overlap as often, as they can.
 */
TEST_F_TIMEOUT(basic, profile_counts_exactly_under_concurrent_hits, 300)
{
	const long n = PROFILE_RACE_HITS;
	struct ut_target *t;
	char r[256];
	long off;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	UT_SYM(off, self->target, "ut_push");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "pinned ut_push 2 %ld 7", n);
	EXPECT_EQ(2 * 8, ut_okval(r)) TH_LOG("the threads' results: %s", r);
	EXPECT_EQ(2 * n, UT_HITS(0))
		TH_LOG("%ld hits lost", 2 * n - UT_HITS(0));
}

/* %di, %si with types, and a string through a register. */
TEST_F(basic, fetch_args_read_registers_and_string)
{
	struct ut_target *t;
	char r[256], line[512], v[128];
	long off;

	UT_SYM(off, self->target, "ut_args");
	UT_PROBE(0, 'p', self->target, off, NULL,
		 "a=%di:s64 b=%si:u32 s=+0(%dx):string x=%si:x32");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "callstr 1 -5 4000000000 hello");
	EXPECT_EQ(-5 + 4000000000L + 5, ut_okval(r));
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)))
		TH_LOG("no trace line for the hit");
	ASSERT_EQ(0, ut_field(line, "a", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("-5", v);
	ASSERT_EQ(0, ut_field(line, "b", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("4000000000", v);
	ASSERT_EQ(0, ut_field(line, "s", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("\"hello\"", v);
	ASSERT_EQ(0, ut_field(line, "x", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("0xee6b2800", v);
}

/* ustring, $comm and a dereference with an offset. */
TEST_F(basic, fetch_ustring_comm_and_offset_deref)
{
	struct ut_target *t;
	char r[256], line[512], v[128];
	long off;

	UT_SYM(off, self->target, "ut_args");
	UT_PROBE(0, 'p', self->target, off, NULL,
		 "s=+0(%dx):ustring c=$comm tail=+3(%dx):string ch=+1(%dx):u8");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "callstr 1 0 0 abcdef");
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)))
		TH_LOG("no trace line for the hit");
	ASSERT_EQ(0, ut_field(line, "s", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("\"abcdef\"", v);
	ASSERT_EQ(0, ut_field(line, "c", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("\"uprobe_target\"", v);
	ASSERT_EQ(0, ut_field(line, "tail", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("\"def\"", v);
	ASSERT_EQ(0, ut_field(line, "ch", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("98", v);
}

/* @+OFFSET reads the probed file's data as mapped in the process. */
TEST_F(basic, fetch_file_offset_reads_program_data)
{
	struct ut_target *t;
	char r[256], line[512], v[128], args[128];
	long off, data;

	UT_SYM(off, self->target, "ut_step");
	data = ut_sym_fileoff_arg(self->target, "ut_counter", "ut_step");
	ASSERT_LT(0, data);
	snprintf(args, sizeof(args), "v=@+0x%lx:u32 h=@+0x%lx:x16", data, data);
	UT_PROBE(0, 'p', self->target, off, NULL, args);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 1 1 1");
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)))
		TH_LOG("no trace line for the hit");
	ASSERT_EQ(0, ut_field(line, "v", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("12648430", v);
	ASSERT_EQ(0, ut_field(line, "h", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("0xffee", v);
}

/*
 * Event @ev's line @idx has @head in it (the "(IP)" or "(RET <- FUNC)"
 * part) and each "name=value" of @want.
 */
static void expect_line(struct __test_metadata *_metadata, const char *ev,
			int idx, const char *head, const char *want)
{
	char line[1024], v[128], name[64], val[128];
	const char *p = want;
	int n;

	ASSERT_EQ(0, ut_trace_line(ev, idx, line, sizeof(line)))
		TH_LOG("no trace line %d of %s", idx, ev);
	EXPECT_NE(NULL, strstr(line, head)) TH_LOG("no '%s' in: %s", head, line);
	while (sscanf(p, " %63[^=]=%127s%n", name, val, &n) == 2) {
		ASSERT_EQ(0, ut_field(line, name, v, sizeof(v)))
			TH_LOG("no field %s in: %s", name, line);
		EXPECT_STREQ(val, v) TH_LOG("field %s in: %s", name, line);
		p += n;
	}
}

/* @n arguments "aI=%di:s64", and what each shows for %di = -2. */
static void di_args(int n, char *args, char *want, size_t len)
{
	int i, a = 0, w = 0;

	for (i = 1; i <= n; i++) {
		a += snprintf(args + a, len - a, "a%d=%%di:s64 ", i);
		w += snprintf(want + w, len - w, "a%d=-2 ", i);
	}
}

/*
 * Arguments that are values of the hit itself (registers in several
 * widths and signs, a bitfield, an immediate, $retval), the records a
 * hit may write straight into the ring buffer: right with their heads,
 * in plain events, in events that filter (the record is then built
 * first), for entry and return probes, and on either side of the size
 * up to which a record is written in place (13 and 14 longs).
 */
TEST_F(basic, fetch_register_values_plain_and_filtered)
{
	const char *ent = "a=0xfffffffffffffffe lo=254 w=-2 b=-102 f=9 c=591751049 k=7";
	char r[256], ip[64], ret[64], args13[512], want13[512], args14[512], want14[512];
	struct ut_target *t;
	long off;
	int i;

	di_args(13, args13, want13, sizeof(args13));
	di_args(14, args14, want14, sizeof(args14));
	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL,
		 "a=%di:x64 lo=%di:u8 w=%di:s16 b=%si:s8 f=%si:b4@4/8 c=%dx:u32 k=\\7:s32");
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s32 lo=$retval:u8 k=\\7:s32");
	UT_PROBE(2, 'p', self->target, off, NULL, args13);
	UT_PROBE(3, 'p', self->target, off, NULL, args14);
	for (i = 0; i < 4; i++)
		UT_ENABLE(i, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr ut_plain");
	snprintf(ip, sizeof(ip), "(%s)", r + 3);
	snprintf(ret, sizeof(ret), " <- %s)", r + 3);
	/* 3 * -2 + 0x9a = 148 */
	UT_CMD(t, r, "call ut_plain 1 -2 0x9a 0x123456789");
	EXPECT_EQ(148, ut_okval(r));
	expect_line(_metadata, ut_ev(&self->c, 0), 0, ip, ent);
	expect_line(_metadata, ut_ev(&self->c, 1), 0, ret, "ret=148 lo=148 k=7");
	expect_line(_metadata, ut_ev(&self->c, 2), 0, ip, want13);
	expect_line(_metadata, ut_ev(&self->c, 3), 0, ip, want14);

	ASSERT_EQ(0, ut_event_file_write(GRP, ut_ev(&self->c, 0), "filter", "b == -102"));
	ASSERT_EQ(0, ut_event_file_write(GRP, ut_ev(&self->c, 1), "filter", "lo == 148"));
	ASSERT_EQ(0, ut_event_file_write(GRP, ut_ev(&self->c, 2), "filter", "a13 == -2"));
	UT_CMD(t, r, "call ut_plain 1 -2 0x9b 0x123456789");
	UT_CMD(t, r, "call ut_plain 1 -2 0x9a 0x123456789");
	EXPECT_EQ(2, UT_LINES(0, t->pid));
	EXPECT_EQ(2, UT_LINES(1, t->pid));
	EXPECT_EQ(3, UT_LINES(2, t->pid));
	expect_line(_metadata, ut_ev(&self->c, 0), 1, ip, ent);
	expect_line(_metadata, ut_ev(&self->c, 1), 1, ret, "ret=148 lo=148 k=7");
	expect_line(_metadata, ut_ev(&self->c, 2), 2, ip, want13);
}

/* Each hit's arguments in order: one line per call, in call order. */
TEST_F(basic, trace_lines_follow_call_order)
{
	struct ut_target *t;
	char r[256], line[512], v[64], want[64];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64 b=%si:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 20; i++)
		UT_CMD(t, r, "call ut_plain 1 %d %d", i, -i);
	EXPECT_EQ(20, UT_LINES(0, t->pid));
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), i, line, sizeof(line)));
		ASSERT_EQ(0, ut_field(line, "b", v, sizeof(v)));
		snprintf(want, sizeof(want), "%d", -i);
		EXPECT_STREQ(want, v) TH_LOG("hit %d: %s", i, line);
	}
}

/* A RIP-relative load stepped out of line still reads its own data. */
TEST_F(basic, rip_relative_load_reads_right_data)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_riprel");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_riprel 300 0x10");
	EXPECT_EQ(0x1234 + 0x10, ut_okval(r));
	EXPECT_EQ(300, UT_HITS(0));
}

/*
 * A rip-relative add that is not emulated: its copy addresses through a
 * borrowed register that holds a live value, next to live data in the
 * red zone.  Both survive every hit, and the add reads its own data.
 */
TEST_F(basic, rip_relative_add_keeps_registers_and_red_zone)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_ripadd_add");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_ripadd 300 40 2");
	EXPECT_EQ(42, ut_okval(r)) TH_LOG("ut_ripadd(40, 2): %s", r);
	EXPECT_EQ(300, UT_HITS(0));
	UT_CMD(t, r, "call ut_ripadd 1 -5 0x7000000000000000");
	EXPECT_EQ(0x7000000000000000 - 5, ut_okval(r)) TH_LOG("%s", r);
	EXPECT_EQ(301, UT_HITS(0));
}

/*
 * Probes on instructions the kernel may emulate rather than step: one-
 * and multi-byte nop, push, call rel32, jmp rel8, a taken and an untaken
 * je, loads and stores between a register and memory (%fs-relative,
 * below the stack pointer, base + index * scale, a rip-relative 32-bit
 * load that must clear the register's upper half), mov of an immediate
 * (32-bit: zero-extended; to a 64-bit register: sign-extended) and lea
 * (base + index * scale, REX-extended registers, a 32-bit destination,
 * the stack pointer moved down and back up), and indirect calls and jumps
 * (through a register, rip-relative through memory, through the top of
 * the stack).
 * Every function must compute what it computes unprobed.
 */
TEST_F(basic, emulated_instructions_keep_their_effect)
{
	static const struct {
		const char *fn, *sym;
		int delta;
		long arg, want;
	} cases[] = {
		{ "ut_nop", "ut_nop", 0, 11, 11 },
		{ "ut_nop", "ut_nop", 1, 12, 12 },
		{ "ut_push", "ut_push", 0, 13, 14 },
		{ "ut_callrel", "ut_callrel", 0, 15, 16 },
		{ "ut_jmp", "ut_jmp", 0, 17, 19 },
		{ "ut_jcc", "ut_jcc_je", 0, 0, 7 },
		{ "ut_jcc", "ut_jcc_je", 0, 20, 23 },
		{ "ut_fscheck", "ut_fscheck", 0, 31, 31 },
		{ "ut_store", "ut_store", 0, 41, 42 },
		{ "ut_index", "ut_index_mov", 0, 3, 14 },
		{ "ut_load32", "ut_load32_mov", 0, 5, 0x1234 + 5 },
		{ "ut_movimm", "ut_movimm_32", 0, 6, 0x1234 + 6 },
		{ "ut_movneg", "ut_movneg", 0, 7, 2 },
		{ "ut_leasib", "ut_leasib", 0, 3, 23 },
		{ "ut_lea32", "ut_lea32_lea", 0, 9, 10 },
		{ "ut_learex", "ut_learex_lea", 0, 50, 48 },
		{ "ut_learsp", "ut_learsp", 0, 8, 12 },
		{ "ut_learsp", "ut_learsp_up", 0, 8, 12 },
		{ "ut_callreg", "ut_callreg_call", 0, 60, 61 },
		{ "ut_callmem", "ut_callmem", 0, 61, 62 },
		{ "ut_callsp", "ut_callsp_call", 0, 62, 63 },
		{ "ut_jmpreg", "ut_jmpreg_jmp", 0, 63, 64 },
		{ "ut_jmpmem", "ut_jmpmem", 0, 64, 65 },
	};
	struct ut_target *t;
	char r[256];
	unsigned int i;
	long off;

	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		UT_SYM(off, self->target, cases[i].sym);
		UT_PROBE(i, 'p', self->target, off + cases[i].delta, NULL, NULL);
		UT_ENABLE(i, true);
		UT_CMD(t, r, "call %s 25 %ld", cases[i].fn, cases[i].arg);
		EXPECT_EQ(cases[i].want, ut_okval(r))
			TH_LOG("%s(%ld) with a probe at %s+%d returned %s",
			       cases[i].fn, cases[i].arg, cases[i].sym,
			       cases[i].delta, r);
		EXPECT_EQ(25, UT_HITS(i))
			TH_LOG("probe at %s+%d", cases[i].sym, cases[i].delta);
		UT_ENABLE(i, false);
	}
}

/*
 * Indirect jumps through a table and a call through a pointer the caller
 * passes: every entry and pointer reaches its own function, and the
 * probe sees every call.
 */
TEST_F(basic, indirect_branches_reach_each_target)
{
	struct ut_target *t;
	long off, ptr;
	char r[256];

	UT_SYM(off, self->target, "ut_jmptab_jmp");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_SYM(off, self->target, "ut_callptr_call");
	UT_PROBE(1, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_jmptab 10 7 0");
	EXPECT_EQ(8, ut_okval(r)) TH_LOG("ut_jmptab(7, 0): %s", r);
	UT_CMD(t, r, "call ut_jmptab 10 7 1");
	EXPECT_EQ(-7, ut_okval(r)) TH_LOG("ut_jmptab(7, 1): %s", r);
	EXPECT_EQ(20, UT_HITS(0));
	UT_CMD(t, r, "addr ut_incptr");
	ASSERT_EQ(1, sscanf(r, "ok %lx", &ptr)) TH_LOG("reply: %s", r);
	UT_CMD(t, r, "call ut_callptr 10 0x%lx 41", ptr);
	EXPECT_EQ(42, ut_okval(r)) TH_LOG("ut_callptr(&ut_incptr, 41): %s", r);
	EXPECT_EQ(10, UT_HITS(1));
}

/* Two events on one address: each counts every hit on its own. */
TEST_F(basic, two_events_on_one_address_count_independently)
{
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off, NULL, "a=%di");
	UT_START(t, "uprobe_target", NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_CMD(t, r, "call ut_step 30 1 1");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "call ut_step 20 1 1");
	UT_ENABLE(1, false);
	UT_CMD(t, r, "call ut_step 10 1 1");
	EXPECT_EQ(30, UT_HITS(0));
	EXPECT_EQ(50, UT_HITS(1));
}

/*
 * Two probed instructions run out of line (an add and a div), hit in turn
 * by one thread: each hit runs its own instruction, whatever ran before,
 * also after one probe went away and came back at the same address.
 */
TEST_F(basic, alternating_out_of_line_probes_compute_right)
{
	struct ut_target *t;
	long off0, off1;
	char r[256];
	int i;

	UT_SYM(off0, self->target, "ut_step");
	UT_SYM(off1, self->target, "ut_div_insn");
	UT_PROBE(0, 'p', self->target, off0, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off1, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= 20; i++) {
		UT_CMD(t, r, "call ut_step 1 %d 7", i);
		EXPECT_EQ(i + 7, ut_okval(r)) TH_LOG("ut_step(%d, 7)", i);
		UT_CMD(t, r, "call ut_div 1 %d 3", 100 * i);
		EXPECT_EQ(100 * i / 3, ut_okval(r)) TH_LOG("ut_div(%d, 3)", 100 * i);
	}
	UT_ENABLE(0, false);
	UT_CMD(t, r, "call ut_step 1 5 5");
	EXPECT_EQ(10, ut_okval(r));
	UT_ENABLE(0, true);
	UT_CMD(t, r, "call ut_step 3 5 6");
	EXPECT_EQ(11, ut_okval(r));
	UT_CMD(t, r, "call ut_div 2 90 9");
	EXPECT_EQ(10, ut_okval(r));
	EXPECT_EQ(23, UT_HITS(0));
	EXPECT_EQ(22, UT_HITS(1));
}

/*
 * The process sees the breakpoint in its own text only while the probe
 * is enabled; the bytes after it are never touched.
 */
TEST_F(basic, process_text_holds_breakpoint_only_while_enabled)
{
	struct ut_target *t;
	unsigned char orig[2];
	char r[256], want[32];
	long off;

	UT_SYM(off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, orig, 2));
	UT_START(t, "uprobe_target", NULL);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_CMD(t, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig[0]);
	EXPECT_STREQ(want, r) TH_LOG("before enable");
	UT_ENABLE(0, true);
	UT_CMD(t, r, "byte ut_step");
	EXPECT_STREQ("ok 0xcc", r) TH_LOG("while enabled");
	UT_CMD(t, r, "byte ut_step 1");
	snprintf(want, sizeof(want), "ok 0x%02x", orig[1]);
	EXPECT_STREQ(want, r) TH_LOG("second byte while enabled");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig[0]);
	EXPECT_STREQ(want, r) TH_LOG("after disable");
	UT_CMD(t, r, "call ut_step 1 2 2");
	EXPECT_EQ(4, ut_okval(r));
}

/* An event filter on a fetched argument keeps only matching hits. */
TEST_F(basic, event_filter_selects_hits_by_argument)
{
	struct ut_target *t;
	char r[256], line[512], v[64];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	ASSERT_EQ(0, ut_event_file_write(GRP, ut_ev(&self->c, 0), "filter", "a == 3"));
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 6; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	EXPECT_EQ(1, UT_LINES(0, 0));
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)));
	ASSERT_EQ(0, ut_field(line, "a", v, sizeof(v)));
	EXPECT_STREQ("3", v);
}

/* Several processes running the probed program: each hit is counted once. */
TEST_F(basic, hits_in_several_processes_counted_per_process)
{
	struct ut_target *t[3];
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	for (i = 0; i < 3; i++)
		UT_START(t[i], "uprobe_target", NULL);
	for (i = 0; i < 3; i++)
		UT_CMD(t[i], r, "call ut_plain %d 1 1", 10 * (i + 1));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(10 * (i + 1), UT_LINES(0, t[i]->pid)) TH_LOG("process %d", i);
	EXPECT_EQ(60, UT_HITS(0));
}

/* Probes on a function alone on its page and on its neighbours' page. */
TEST_F(basic, probes_on_two_pages_both_count)
{
	struct ut_target *t;
	char r[256];
	long off1, off2;

	UT_SYM(off1, self->target, "ut_far");
	UT_SYM(off2, self->target, "ut_step");
	ASSERT_NE(off1 / 4096, off2 / 4096);
	UT_PROBE(0, 'p', self->target, off1, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off2, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_far 7 1");
	EXPECT_EQ(6, ut_okval(r));
	UT_CMD(t, r, "call ut_step 9 1 1");
	EXPECT_EQ(7, UT_HITS(0));
	EXPECT_EQ(9, UT_HITS(1));
}

/* Helper: the SDT site and semaphore offsets of ust:tick. */
#define UT_SDT(pc, sema) do {							\
	ASSERT_EQ(0, ut_sdt(self->target, "ust", "tick", &(pc), &(sema)))	\
		TH_LOG("no SDT note ust:tick in %s", self->target);		\
	ASSERT_LT(0, (sema)) TH_LOG("ust:tick has no semaphore");		\
} while (0)

/* The semaphore is raised while the SDT probe is enabled, and back to 0 after. */
TEST_F(basic, sdt_semaphore_raised_while_enabled)
{
	struct ut_target *t;
	char r[256], ref[64];
	long pc, sema;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_START(t, "uprobe_target", NULL);
	UT_PROBE(0, 'p', self->target, pc, ref, "i=%ax:s64");
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 0", r) TH_LOG("semaphore while the event is only defined");
	UT_ENABLE(0, true);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 1", r) TH_LOG("semaphore while enabled");
	UT_CMD(t, r, "call ut_sdt 1 12");
	EXPECT_EQ(12, ut_okval(r)) TH_LOG("the program saw its semaphore set %s times", r);
	EXPECT_EQ(12, UT_HITS(0));
	UT_ENABLE(0, false);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 0", r) TH_LOG("semaphore after disable");
	UT_CMD(t, r, "call ut_sdt 1 5");
	EXPECT_EQ(0, ut_okval(r));
}

/* A process started while the SDT probe is enabled finds its semaphore set. */
TEST_F(basic, sdt_semaphore_raised_in_process_started_later)
{
	struct ut_target *t;
	char r[256], ref[64];
	long pc, sema;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_PROBE(0, 'p', self->target, pc, ref, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 1", r);
	UT_CMD(t, r, "call ut_sdt 1 3");
	EXPECT_EQ(3, ut_okval(r));
	EXPECT_EQ(3, UT_HITS(0));
	UT_ENABLE(0, false);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 0", r);
}

/* The SDT argument, read from the register the note names, in order. */
TEST_F(basic, sdt_argument_read_in_order)
{
	struct ut_target *t;
	char r[256], ref[64], line[512], v[64], want[64];
	long pc, sema;
	int i;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_PROBE(0, 'p', self->target, pc, ref, "i=%ax:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_sdt 1 8");
	ASSERT_EQ(8, UT_LINES(0, t->pid));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), i, line, sizeof(line)));
		ASSERT_EQ(0, ut_field(line, "i", v, sizeof(v)));
		snprintf(want, sizeof(want), "%d", i);
		EXPECT_STREQ(want, v);
	}
}

/* Two processes: each has its own semaphore raised and lowered. */
TEST_F(basic, sdt_semaphore_per_process)
{
	struct ut_target *a, *b;
	char r[256], ref[64];
	long pc, sema;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_START(a, "uprobe_target", NULL);
	UT_PROBE(0, 'p', self->target, pc, ref, NULL);
	UT_ENABLE(0, true);
	UT_START(b, "uprobe_target", NULL);
	UT_CMD(a, r, "sema");
	EXPECT_STREQ("ok 1", r) TH_LOG("process running before enable");
	UT_CMD(b, r, "sema");
	EXPECT_STREQ("ok 1", r) TH_LOG("process started after enable");
	UT_ENABLE(0, false);
	UT_CMD(a, r, "sema");
	EXPECT_STREQ("ok 0", r);
	UT_CMD(b, r, "sema");
	EXPECT_STREQ("ok 0", r);
}

/* A child forked while the SDT probe is enabled has its semaphore set. */
TEST_F(basic, sdt_semaphore_set_in_fork_child)
{
	struct ut_target *t;
	char r[256], ref[64];
	long pc, sema;
	int child;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_PROBE(0, 'p', self->target, pc, ref, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_sdt");
	child = ut_okval(r);
	UT_CMD(t, r, "release");
	/* "release" reports the byte at ut_sdt and ut_sdt(1): sites seen enabled */
	EXPECT_EQ(0, strcmp(r + strlen(r) - 2, " 1")) TH_LOG("the child: %s", r);
	EXPECT_EQ(1, UT_LINES(0, child));
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 1", r) TH_LOG("the parent's semaphore");
}

/* Disabling lowers the semaphore in a forked child too. */
TEST_F(basic, sdt_semaphore_lowered_in_fork_child)
{
	struct ut_target *t;
	char r[256], ref[64];
	long pc, sema;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_PROBE(0, 'p', self->target, pc, ref, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "forkpause ut_sdt");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "release");
	EXPECT_EQ(0, strcmp(r + strlen(r) - 2, " 0")) TH_LOG("the child: %s", r);
	EXPECT_EQ(0, UT_HITS(0));
}

/* A program that clears its own semaphore never sees it go below zero. */
TEST_F(basic, sdt_semaphore_never_driven_below_zero)
{
	struct ut_target *t;
	char r[256], ref[64];
	long pc, sema;

	UT_SDT(pc, sema);
	snprintf(ref, sizeof(ref), "(0x%lx)", sema);
	UT_PROBE(0, 'p', self->target, pc, ref, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 1", r);
	UT_CMD(t, r, "setsema 0");
	UT_ENABLE(0, false);
	UT_CMD(t, r, "sema");
	EXPECT_STREQ("ok 0", r) TH_LOG("semaphore after disable, cleared by the program");
}

/* A process that exits with the probe enabled leaves it working for others. */
TEST_F(basic, process_exit_leaves_probe_working)
{
	struct ut_target *t;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	for (i = 0; i < 4; i++) {
		UT_START(t, "uprobe_target", NULL);
		UT_CMD(t, r, "call ut_step 5 1 1");
		EXPECT_EQ(0, ut_target_stop(t));
	}
	EXPECT_EQ(20, UT_HITS(0));
}

/* uprobe_events lists the definition; deleting it removes the event. */
TEST_F(basic, deleted_event_disappears)
{
	char *list;
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	EXPECT_TRUE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	list = ut_read("uprobe_events");
	ASSERT_NE(NULL, list);
	EXPECT_NE(NULL, strstr(list, ut_ev(&self->c, 0))) TH_LOG("uprobe_events: %s", list);
	free(list);
	ASSERT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, 0)));
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	list = ut_read("uprobe_events");
	ASSERT_NE(NULL, list);
	EXPECT_EQ(NULL, strstr(list, ut_ev(&self->c, 0))) TH_LOG("uprobe_events: %s", list);
	free(list);
}

/* Several probes under one event name: the event counts the hits of each. */
TEST_F(basic, one_event_with_two_probes_counts_both)
{
	struct ut_target *t;
	char r[256], def[PATH_MAX + 128];
	long off1, off2;

	UT_SYM(off1, self->target, "ut_step");
	UT_SYM(off2, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off1, NULL, "a=%di:s64");
	snprintf(def, sizeof(def), "p:%s/%s %s:0x%lx a=%%di:s64", GRP,
		 ut_ev(&self->c, 0), self->target, off2);
	ASSERT_EQ(0, ut_probe_add(def)) TH_LOG("a second probe under the same event");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 3 1 1");
	UT_CMD(t, r, "call ut_plain 4 1 1");
	EXPECT_EQ(7, UT_LINES(0, t->pid));
}

/* uprobe_events shows a definition with its offset in full hex and its args. */
TEST_F(basic, definition_listed_in_canonical_form)
{
	char *list, want[PATH_MAX + 128];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64 s=+0(%si):string");
	UT_PROBE(1, 'r', self->target, off, NULL, "v=$retval:u32");
	list = ut_read("uprobe_events");
	ASSERT_NE(NULL, list);
	snprintf(want, sizeof(want), "p:%s/%s %s:0x%016lx a=%%di:s64 s=+0(%%si):string\n",
		 GRP, ut_ev(&self->c, 0), self->target, off);
	EXPECT_NE(NULL, strstr(list, want)) TH_LOG("'%s' not in uprobe_events:\n%s", want, list);
	snprintf(want, sizeof(want), "r:%s/%s %s:0x%016lx v=$retval:u32\n",
		 GRP, ut_ev(&self->c, 1), self->target, off);
	EXPECT_NE(NULL, strstr(list, want)) TH_LOG("'%s' not in uprobe_events:\n%s", want, list);
	free(list);
}

/* Without a name, an event is named after the file and offset, in "uprobes". */
TEST_F(basic, unnamed_event_gets_automatic_name)
{
	char def[PATH_MAX + 64], name[64];
	long off;

	UT_SYM(off, self->target, "ut_nop");
	snprintf(name, sizeof(name), "p_uprobe_0x%lx", off);
	ut_probe_del("uprobes", name);
	snprintf(def, sizeof(def), "p %s:0x%lx", self->target, off);
	ASSERT_EQ(0, ut_probe_add(def));
	EXPECT_TRUE(ut_event_exists("uprobes", name)) TH_LOG("no event uprobes/%s", name);
	EXPECT_EQ(0, ut_probe_del("uprobes", name));
}

/* Each event has its control files, and its format names its fields. */
TEST_F(basic, event_has_control_files_and_format)
{
	static const char *const files[] = { "enable", "filter", "trigger", "format", "id" };
	char p[PATH_MAX], f[256], *fmt;
	unsigned int i;
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, "first=%di:s64 second=+0(%si):string");
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(f, sizeof(f), "events/%s/%s/%s", GRP, ut_ev(&self->c, 0), files[i]);
		ut_tpath(p, sizeof(p), f);
		EXPECT_EQ(0, access(p, F_OK)) TH_LOG("no %s", f);
	}
	snprintf(f, sizeof(f), "events/%s/%s/format", GRP, ut_ev(&self->c, 0));
	fmt = ut_read(f);
	ASSERT_NE(NULL, fmt);
	EXPECT_NE(NULL, strstr(fmt, "s64 first;")) TH_LOG("format:\n%s", fmt);
	EXPECT_NE(NULL, strstr(fmt, "second;")) TH_LOG("format:\n%s", fmt);
	free(fmt);
}

/* dynamic_events defines and removes uprobe events like uprobe_events. */
TEST_F(basic, dynamic_events_defines_and_removes_uprobes)
{
	struct ut_target *t;
	char def[PATH_MAX + 128], r[256], *list;
	long off;

	UT_SYM(off, self->target, "ut_step");
	snprintf(def, sizeof(def), "p:%s/%s %s:0x%lx", GRP, ut_ev(&self->c, 0),
		 self->target, off);
	ASSERT_EQ(0, ut_append("dynamic_events", def));
	snprintf(self->c.ev[self->c.nev++], sizeof(self->c.ev[0]), "%s", ut_ev(&self->c, 0));
	list = ut_read("uprobe_events");
	ASSERT_NE(NULL, list);
	EXPECT_NE(NULL, strstr(list, ut_ev(&self->c, 0))) TH_LOG("uprobe_events: %s", list);
	free(list);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 4 1 1");
	EXPECT_EQ(4, UT_HITS(0));
	UT_ENABLE(0, false);
	snprintf(def, sizeof(def), "-:%s/%s", GRP, ut_ev(&self->c, 0));
	EXPECT_EQ(0, ut_append("dynamic_events", def));
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
}

/* Opening uprobe_events with truncation removes every uprobe event. */
TEST_F(basic, truncating_uprobe_events_removes_all)
{
	char *list;
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, NULL);
	ASSERT_EQ(0, ut_write("uprobe_events", ""));
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	EXPECT_FALSE(ut_event_exists(GRP, ut_ev(&self->c, 1)));
	list = ut_read("uprobe_events");
	ASSERT_NE(NULL, list);
	EXPECT_STREQ("", list);
	free(list);
	self->c.nev = 0;
}

UT_HARNESS_MAIN
