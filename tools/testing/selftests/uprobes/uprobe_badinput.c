// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input of every kind: each malformed uprobe_events definition is
 * refused with EINVAL, error_log names the fault and points the caret at
 * it, and nothing changes.  Probes that parse but cannot be placed (past
 * the end of the file, on an instruction that cannot be probed) fail when
 * enabled and leave the program untouched; busy and missing events refuse
 * removal.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_bad"

/* ------------------------------------------------------------------ */
/* Malformed definitions: one variant each                             */
/* ------------------------------------------------------------------ */

FIXTURE(syntax) {
	char target[PATH_MAX];
};

/*
 * @cmd is the definition with "%T" for the target's path and "^" where
 * error_log must put its caret; @err is error_log's message, or NULL for
 * definitions 6.1 refuses without logging why; @errnum what write() fails
 * with.
 */
FIXTURE_VARIANT(syntax) {
	const char *cmd;
	const char *err;
	int errnum;
	int errnum2;	/* another errno a stock kernel may give, or 0 */
};

#define BAD_ERRNO(name, c, e, n)					\
	FIXTURE_VARIANT_ADD(syntax, name) { .cmd = (c), .err = (e), .errnum = (n) }
#define BAD(name, c, e) BAD_ERRNO(name, c, e, EINVAL)
/* Refused with EINVAL on 6.1 and with E2BIG on 6.12. */
#define BAD_OR_E2BIG(name, c, e)					\
	FIXTURE_VARIANT_ADD(syntax, name) {				\
		.cmd = (c), .err = (e), .errnum = EINVAL, .errnum2 = E2BIG }
/* Five nested dereferences around @x; an event name of 70 characters. */
#define NEST5(x) "+0(+0(+0(+0(+0(" x ")))))"
#define NAME70 "e123456789012345678901234567890123456789012345678901234567890123456789"

BAD_ERRNO(file_not_found, "p ^/nonexistent/file:100",	"Failed to find the given file", ENOENT);
BAD(directory,		"p ^/sys:100",			"Not a regular file");
BAD(char_device,	"p ^/dev/null:100",		"Not a regular file");
BAD(offset_not_a_number, "p %T:^10a",			"Invalid uprobe offset");
BAD(refcnt_not_a_number, "p %T:10(^1a)",		"Invalid reference counter offset");
BAD(refcnt_brace_not_closed, "p %T:10(10^",		"Reference counter brace is not closed");
BAD(refcnt_followed_by_junk, "p %T:10(10)^a",		"Reference counter has wrong suffix");
BAD(refcnt_before_return, "p %T:10(10)^%return",	"Reference counter has wrong suffix");
BAD(unknown_address_suffix, "p %T:10^%hoge",		"Invalid probed address suffix");
BAD(file_offset_not_a_number, "p %T:10 ^@+ab",		"Invalid file offset value");
BAD(symbol_in_uprobe_arg, "p %T:10 ^@symbol",		"Symbol is not available with uprobe");
BAD(retval_on_entry_probe, "p %T:10 ^$retval",		"$retval is not available on probe");
BAD(unknown_register,	"p %T:10 ^%nosuchreg",		"Invalid register name");
BAD(unknown_type,	"p %T:10 %di:^nosuchtype",	"Unknown type is specified");
BAD(string_of_register,	"p %T:10 %di:^string",		"String accepts only memory argument");
BAD(unknown_variable,	"p %T:10 ^$nosuchvar",		"Invalid $-variable specified");
BAD(stack_index_not_a_number, "p %T:10 ^$stackx",	"Invalid $-variable specified");
BAD(deref_brace_not_closed, "p %T:10 +0(%di^",		"Dereference brace is not closed");
BAD(deref_of_comm,	"p %T:10 +0(^$comm)",		"$comm can not be dereferenced");
BAD(deref_without_brace, "p %T:10 ^+0%di",		"Dereference needs a brace");
BAD(deref_offset_not_a_number, "p %T:10 ^+a(%di)",	"Invalid dereference offset");
BAD_OR_E2BIG(argument_too_long, "p %T:10 ^" NEST5(NEST5(NEST5(NEST5("%di")))),
	     "Argument expression is too long");
BAD(array_not_closed,	"p %T:10 +0(%di):u8[3^",	"Array is not closed");
BAD(array_size_not_a_number, "p %T:10 +0(%di):u8[^x]",	"Invalid array size");
BAD(array_too_big,	"p %T:10 +0(%di):u8[^1000]",	"Array number is too big");
BAD(bad_bitfield,	"p %T:10 %di:^b0@4/32",		"Invalid bitfield");
BAD(immediate_string_not_closed, "p %T:10 \\\"abc^",	"String is not closed with '\"'");
BAD(unknown_fetch_argument, "p %T:10 ^\"abc",		"Invalid fetch argument");
BAD(group_name_not_identifier, "p:^1grp/ev %T:10",	"Group name must follow the same rules as C identifiers");
BAD(event_name_not_identifier, "p:grp/^1ev %T:10",	"Event name must follow the same rules as C identifiers");
BAD(no_group_name,	"p:^/ev %T:10",			"Group name is not specified");
BAD(event_name_too_long, "p:grp/^" NAME70 " %T:10",	"Event name is too long");
BAD(argument_name_reused, "p %T:10 a=%di ^a=%si",	"This argument name is already used");
BAD(argument_name_not_identifier, "p %T:10 ^1a=%di",	"Argument name must follow the same rules as C identifiers");
BAD(argument_name_too_long, "p %T:10 ^b123456789012345678901234567890123456789=%di",	"Argument name is too long");
BAD(argument_without_body, "p %T:10 a=^",		"No argument expression");
/* Refused without an error_log entry in 6.1: only EINVAL is required. */
BAD(no_offset,		"p %T",				NULL);
BAD(empty_offset,	"p %T:",			NULL);
BAD(negative_offset,	"p %T:-1",			NULL);
BAD(unknown_probe_type,	"x %T:10",			NULL);

FIXTURE_SETUP(syntax)
{
	ut_path(self->target, sizeof(self->target), "uprobe_target");
}

FIXTURE_TEARDOWN(syntax)
{
}

/* Expand %T; return the caret's position in the expanded command. */
static int expand(const char *tmpl, const char *target, char *out, size_t len)
{
	size_t n = 0;
	int caret = -1;

	for (; *tmpl && n + 1 < len; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'T') {
			n += snprintf(out + n, len - n, "%s", target);
			tmpl++;
		} else if (*tmpl == '^') {
			caret = n;
		} else {
			out[n++] = *tmpl;
		}
	}
	out[n] = '\0';
	return caret;
}

TEST_F(syntax, refused_with_error_log_and_nothing_changed)
{
	char cmd[PATH_MAX + 256], msg[256], logged[PATH_MAX + 256];
	char *before, *after, *dyn_before, *dyn_after;
	int pos, caret, err;

	pos = expand(variant->cmd, self->target, cmd, sizeof(cmd));
	before = ut_read("uprobe_events");
	dyn_before = ut_read("dynamic_events");
	ASSERT_NE(NULL, before);
	ASSERT_EQ(0, ut_write("error_log", ""));
	err = ut_append("uprobe_events", cmd);
	if (variant->errnum2 && err == -variant->errnum2)
		err = -variant->errnum;
	EXPECT_EQ(-variant->errnum, err) TH_LOG("writing '%s' gave %s, not %s", cmd,
						err ? strerror(-err) : "success",
						strerror(variant->errnum));
	if (variant->err) {
		ASSERT_EQ(0, ut_last_error(msg, sizeof(msg), &caret, logged, sizeof(logged)))
			TH_LOG("nothing in error_log for '%s'", cmd);
		EXPECT_STREQ(variant->err, msg);
		EXPECT_STREQ(cmd, logged);
		EXPECT_EQ(pos, caret) TH_LOG("caret for '%s'", variant->cmd);
	}
	after = ut_read("uprobe_events");
	dyn_after = ut_read("dynamic_events");
	EXPECT_STREQ(before, after) TH_LOG("uprobe_events changed");
	if (dyn_before && dyn_after)
		EXPECT_STREQ(dyn_before, dyn_after) TH_LOG("dynamic_events changed");
	free(before);
	free(after);
	free(dyn_before);
	free(dyn_after);
}

/* ------------------------------------------------------------------ */
/* Probes that parse but cannot be placed; removal errors              */
/* ------------------------------------------------------------------ */

FIXTURE(place) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_SETUP(place)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
}

FIXTURE_TEARDOWN(place)
{
	ut_ctx_cleanup(&self->c);
}

/* The process's byte at @fn is the file's. */
#define EXPECT_UNTOUCHED(t, fn, off) do {					\
	unsigned char __o;							\
	char __r[64], __w[32];							\
	ASSERT_EQ(0, ut_file_bytes(self->target, (off), &__o, 1));		\
	UT_CMD((t), __r, "byte %s", (fn));					\
	snprintf(__w, sizeof(__w), "ok 0x%02x", __o);				\
	EXPECT_STREQ(__w, __r) TH_LOG("the process's byte at %s", (fn));	\
} while (0)

/* An offset past the end of the file is refused when the probe is enabled. */
TEST_F(place, offset_past_eof_refused)
{
	struct ut_target *t;
	struct stat st;
	char r[256];
	int err;

	ASSERT_EQ(0, stat(self->target, &st));
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ping");
	err = ut_ctx_probe(&self->c, 0, 'p', self->target, st.st_size + 4096, NULL, NULL);
	if (!err) {
		err = ut_ctx_enable(&self->c, 0, true);
		EXPECT_EQ(-EINVAL, err) TH_LOG("enabling a probe past EOF: %s",
					       err ? strerror(-err) : "success");
	} else {
		EXPECT_EQ(-EINVAL, err);
	}
	UT_CMD(t, r, "call ut_step 2 1 1");
	EXPECT_EQ(2, ut_okval(r));
}

/* An enabled event refuses removal with EBUSY and keeps working. */
TEST_F(place, busy_event_refuses_removal)
{
	struct ut_target *t;
	char r[256], cmd[128];
	long off;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	snprintf(cmd, sizeof(cmd), "-:%s/%s", GRP, ut_ev(&self->c, 0));
	EXPECT_EQ(-EBUSY, ut_append("uprobe_events", cmd));
	EXPECT_TRUE(ut_event_exists(GRP, ut_ev(&self->c, 0)));
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 3 1 1");
	EXPECT_EQ(3, UT_HITS(0));
}

/* Removing an event that does not exist fails with ENOENT. */
TEST_F(place, missing_event_removal_fails)
{
	EXPECT_EQ(-ENOENT, ut_append("uprobe_events", "-:" GRP "/no_such_event"));
	EXPECT_EQ(-ENOENT, ut_append("uprobe_events", "-:no_such_group/no_such_event"));
}

/*
 * A definition clashing with an existing event of the same name: refused
 * with EEXIST and error_log's reason; the existing event is unchanged.
 */
static void clash(struct __test_metadata *_metadata, FIXTURE_DATA(place) *self,
		  char type, long delta, const char *args, const char *err)
{
	char def[PATH_MAX + 128], msg[256];
	char *before, *after;
	long off;
	int caret, ret;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	before = ut_read("uprobe_events");
	snprintf(def, sizeof(def), "%c:%s/%s %s:0x%lx%s%s", type, GRP,
		 ut_ev(&self->c, 0), self->target, off + delta,
		 args ? " " : "", args ?: "");
	ASSERT_EQ(0, ut_write("error_log", ""));
	ret = ut_probe_add(def);
	EXPECT_EQ(-EEXIST, ret) TH_LOG("'%s' gave %s", def, ret ? strerror(-ret) : "success");
	ASSERT_EQ(0, ut_last_error(msg, sizeof(msg), &caret, NULL, 0));
	EXPECT_STREQ(err, msg);
	after = ut_read("uprobe_events");
	EXPECT_STREQ(before, after);
	free(before);
	free(after);
}

TEST_F(place, same_probe_twice_refused)
{
	clash(_metadata, self, 'p', 0, NULL, "There is already the exact same probe event");
}

TEST_F(place, same_name_other_arguments_refused)
{
	clash(_metadata, self, 'p', 4, "x=%di",
	      "Argument type or name is different from existing probe");
}

TEST_F(place, same_name_other_probe_type_refused)
{
	clash(_metadata, self, 'r', 0, NULL, "Probe type is different from existing probe");
}

/* ------------------------------------------------------------------ */
/* Instructions that cannot be probed                                  */
/* ------------------------------------------------------------------ */

/*
 * Probes on these parse, but enabling one while a process maps the file
 * fails with ENOTSUPP (524), and the process is left as it was, with a
 * probe elsewhere still working.
 */
FIXTURE(insn) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_VARIANT(insn) {
	const char *sym;
};

FIXTURE_VARIANT_ADD(insn, int3) { .sym = "ut_int3" };
FIXTURE_VARIANT_ADD(insn, hlt) { .sym = "ut_never_hlt" };
FIXTURE_VARIANT_ADD(insn, int_0x80) { .sym = "ut_never_int80" };
FIXTURE_VARIANT_ADD(insn, in_port) { .sym = "ut_never_in" };
FIXTURE_VARIANT_ADD(insn, int1) { .sym = "ut_never_int1" };

FIXTURE_SETUP(insn)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
}

FIXTURE_TEARDOWN(insn)
{
	ut_ctx_cleanup(&self->c);
}

TEST_F(insn, refused_when_enabled_and_process_untouched)
{
	struct ut_target *t;
	char r[256];
	long off, off2;
	int err;

	UT_SYM(off, self->target, variant->sym);
	UT_SYM(off2, self->target, "ut_step");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ping");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	err = ut_ctx_enable(&self->c, 0, true);
	EXPECT_EQ(-524, err) TH_LOG("enabling a probe on %s: %s (%d), not ENOTSUPP",
				    variant->sym, err ? strerror(-err) : "success", err);
	EXPECT_UNTOUCHED(t, variant->sym, off);
	EXPECT_EQ(0, ut_probe_del(GRP, ut_ev(&self->c, 0)));
	UT_PROBE(1, 'p', self->target, off2, NULL, NULL);
	UT_ENABLE(1, true);
	UT_CMD(t, r, "call ut_step 3 1 1");
	EXPECT_EQ(3, UT_HITS(1));
}

/*
 * The same probes, enabled while no process maps the file (and the page
 * cache holds its bytes): the enable fails all the same, with a line in
 * error_log whose caret points at the offset, rather than succeed and
 * leave a probe that never fires (its instruction refused later, at an
 * mmap() no error can come back from).
 * A process started afterwards runs untouched.
 */
TEST_F(insn, refused_when_enabled_with_no_process_mapping_it)
{
	char r[256], msg[256], cmd[512], want[512];
	struct ut_target *t;
	long off;
	int err, caret;

	UT_SYM(off, self->target, variant->sym);
	/* Judged from the page cache, which holds what a program just read. */
	ASSERT_EQ(0, ut_file_cache(self->target));
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	ut_write("error_log", "");
	err = ut_ctx_enable(&self->c, 0, true);
	EXPECT_EQ(-524, err) TH_LOG("enabling a probe on %s, no process mapping it: %s (%d)",
				    variant->sym, err ? strerror(-err) : "success", err);
	ASSERT_EQ(0, ut_last_error(msg, sizeof(msg), &caret, cmd, sizeof(cmd)))
		TH_LOG("nothing in error_log");
	EXPECT_NE(NULL, strstr(msg, "cannot be probed")) TH_LOG("error_log: %s", msg);
	snprintf(want, sizeof(want), "p:%s/%s %s:0x%lx", GRP, ut_ev(&self->c, 0),
		 self->target, off);
	EXPECT_STREQ(want, cmd);
	EXPECT_EQ((int)(strrchr(want, ':') - want) + 1, caret)
		TH_LOG("the caret is not under the offset");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ping");
	EXPECT_UNTOUCHED(t, variant->sym, off);
}

UT_HARNESS_MAIN
