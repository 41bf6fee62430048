// SPDX-License-Identifier: GPL-2.0
/*
 * What tracefs does with a uprobe event's record is what it does with any
 * event's: event filters on an argument or on common_pid, set_event_pid
 * and set_event_notrace_pid, tracing_on (hits still counted in
 * uprobe_profile), the stacktrace and userstacktrace options, triggers
 * (traceoff, traceon, conditional ones, stacktrace, enable_event and
 * disable_event soft-enabling another uprobe event, hist), instances each
 * with its own filter, options and tracing_on, tp_printk (on a kernel
 * booted with it), and a trace line showing the probed task (comm, pid,
 * tgid) and the context of a hit from user space (irqs on, no hardirq or
 * softirq, preempt depth 0) as stock 6.1 does.  A hit may take a shorter
 * way into the ring buffer when none of these applies: each case checks
 * that none of them is lost on the way.
 *
 * Each case counts the lines of each event, of each process, and the
 * stack entries, exactly; every file it sets (options, tracing_on, pid
 * lists, triggers, instances) is put back by the teardown.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP	"ust_tracefs"
#define INST_A	"ust_tracefs_a"
#define INST_B	"ust_tracefs_b"

/* ------------------------------------------------------------------ */
/* What a case sets, and how to put it back                            */
/* ------------------------------------------------------------------ */

#define TFS_MAX_KNOBS		8
#define TFS_MAX_TRIGGERS	8
#define TFS_MAX_INSTANCES	2

struct tfs_undo {
	/* Files written, in order, with the content to write back. */
	struct {
		char file[192];
		char saved[256];
	} knob[TFS_MAX_KNOBS];
	int nknob;
	/* Triggers added, in order, with the line that removes each. */
	struct {
		char file[192];
		char undo[192];
	} trig[TFS_MAX_TRIGGERS];
	int ntrig;
	/* Instances made (an empty name: already removed by the case). */
	char inst[TFS_MAX_INSTANCES][64];
	int ninst;
};

/* A tracefs file's content on one line: newlines become spaces, none trail. */
static int tfs_get(const char *file, char *buf, size_t len)
{
	char *s = ut_read(file), *p;
	size_t n;

	if (!s)
		return -ENOENT;
	for (p = s; *p; p++)
		if (*p == '\n')
			*p = ' ';
	n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	snprintf(buf, len, "%s", s);
	free(s);
	return 0;
}

/* Write @val to tracefs @file, keeping what it held for the teardown. */
static int tfs_set(struct tfs_undo *u, const char *file, const char *val)
{
	char saved[256];
	int err;

	if (u->nknob >= TFS_MAX_KNOBS)
		return -ENOSPC;
	err = tfs_get(file, saved, sizeof(saved));
	if (err)
		return err;
	err = ut_write(file, val);
	if (err)
		return err;
	snprintf(u->knob[u->nknob].file, sizeof(u->knob[0].file), "%s", file);
	snprintf(u->knob[u->nknob].saved, sizeof(u->knob[0].saved), "%s", saved);
	u->nknob++;
	return 0;
}

/*
 * Add trigger @trig to tracefs @file (appended: truncating the file would
 * remove its hist triggers).  Its removal is "!" and the trigger without
 * its filter.
 */
static int tfs_trigger(struct tfs_undo *u, const char *file, const char *trig)
{
	const char *cond = strstr(trig, " if ");
	int err;

	if (u->ntrig >= TFS_MAX_TRIGGERS)
		return -ENOSPC;
	err = ut_append(file, trig);
	if (err)
		return err;
	snprintf(u->trig[u->ntrig].file, sizeof(u->trig[0].file), "%s", file);
	snprintf(u->trig[u->ntrig].undo, sizeof(u->trig[0].undo), "!%.*s",
		 (int)(cond ? cond - trig : (long)strlen(trig)), trig);
	u->ntrig++;
	return 0;
}

static int tfs_instance(struct tfs_undo *u, const char *name)
{
	char p[PATH_MAX];

	if (u->ninst >= TFS_MAX_INSTANCES)
		return -ENOSPC;
	snprintf(p, sizeof(p), "%s/instances/%s", ut_tracefs_dir(), name);
	rmdir(p);	/* a leftover of an earlier run */
	if (mkdir(p, 0755))
		return -errno;
	snprintf(u->inst[u->ninst++], sizeof(u->inst[0]), "%s", name);
	return 0;
}

/* Remove instance @name, every event in it disabled first. */
static int tfs_instance_remove(struct tfs_undo *u, const char *name)
{
	char p[PATH_MAX];
	int i;

	snprintf(p, sizeof(p), "instances/%s/events/enable", name);
	ut_write(p, "0");
	snprintf(p, sizeof(p), "%s/instances/%s", ut_tracefs_dir(), name);
	if (rmdir(p))
		return -errno;
	for (i = 0; i < u->ninst; i++)
		if (!strcmp(u->inst[i], name))
			u->inst[i][0] = '\0';
	return 0;
}

/* Everything a case set, put back in the reverse order. */
static void tfs_undo_all(struct tfs_undo *u)
{
	int i;

	for (i = u->ntrig - 1; i >= 0; i--)
		if (ut_append(u->trig[i].file, u->trig[i].undo))
			fprintf(stderr, "# cannot remove '%s' from %s\n",
				u->trig[i].undo + 1, u->trig[i].file);
	u->ntrig = 0;
	for (i = u->nknob - 1; i >= 0; i--)
		if (ut_write(u->knob[i].file, u->knob[i].saved))
			fprintf(stderr, "# cannot put '%s' back in %s\n",
				u->knob[i].saved, u->knob[i].file);
	u->nknob = 0;
	for (i = u->ninst - 1; i >= 0; i--)
		if (u->inst[i][0] && tfs_instance_remove(u, u->inst[i]))
			fprintf(stderr, "# cannot remove instance %s\n", u->inst[i]);
	u->ninst = 0;
}

/* ------------------------------------------------------------------ */
/* Reading a trace file                                                */
/* ------------------------------------------------------------------ */

#define TFS_MAX_ENTRIES	256
#define TFS_MAX_FRAMES	12

/* One entry: an event's line, or a stack trace with its frames. */
struct tfs_entry {
	char comm[32];
	int pid, tgid, cpu;
	char flags[8];
	/* The event's name, or "<stack trace>" or "<user stack trace>". */
	char what[64];
	/* An event's text after "NAME:", from its leading space. */
	char rest[256];
	int nframe;
	/* A stack's frames, the text after "=>", trimmed. */
	char frame[TFS_MAX_FRAMES][96];
};

struct tfs_trace {
	int n;
	struct tfs_entry e[TFS_MAX_ENTRIES];
};

static void tfs_trim(char *s)
{
	size_t n = strlen(s), lead = strspn(s, " ");

	while (n > lead && s[n - 1] == ' ')
		n--;
	memmove(s, s + lead, n - lead);
	s[n - lead] = '\0';
}

/*
 * "COMM-PID [(TGID)] [CPU] FLAGS TIMESTAMP: WHAT[: REST]", the default
 * format (irq-info on, record-tgid either way): 0 or -1.
 */
static int tfs_parse_line(const char *line, struct tfs_entry *e)
{
	const char *lb = strstr(line, " ["), *rb, *ts, *w, *colon;
	char head[128], *dash, *paren;

	memset(e, 0, sizeof(*e));
	e->tgid = -1;
	rb = lb ? strchr(lb, ']') : NULL;
	if (!rb || lb - line >= (long)sizeof(head) || strlen(rb) < 8)
		return -1;
	snprintf(head, sizeof(head), "%.*s", (int)(lb - line), line);
	tfs_trim(head);
	if (head[0] && head[strlen(head) - 1] == ')') {
		paren = strrchr(head, '(');
		if (!paren)
			return -1;
		e->tgid = atoi(paren + 1);
		*paren = '\0';
		tfs_trim(head);
	}
	dash = strrchr(head, '-');
	if (!dash)
		return -1;
	e->pid = atoi(dash + 1);
	snprintf(e->comm, sizeof(e->comm), "%.*s", (int)(dash - head), head);
	e->cpu = atoi(lb + 2);
	snprintf(e->flags, sizeof(e->flags), "%.5s", rb + 2);
	ts = strstr(rb, ": ");
	if (!ts)
		return -1;
	w = ts + 2;
	if (*w == '<') {
		snprintf(e->what, sizeof(e->what), "%s", w);
		tfs_trim(e->what);
		return 0;
	}
	colon = strchr(w, ':');
	if (!colon)
		return -1;
	snprintf(e->what, sizeof(e->what), "%.*s", (int)(colon - w), w);
	snprintf(e->rest, sizeof(e->rest), "%s", colon + 1);
	return 0;
}

/* The entries of tracefs file @file ("trace", "instances/NAME/trace"). */
static struct tfs_trace *tfs_read(const char *file)
{
	struct tfs_trace *t = calloc(1, sizeof(*t));
	char *all = ut_read(file), *line, *save = NULL;

	if (!t || !all) {
		free(t);
		free(all);
		return NULL;
	}
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *arrow = strstr(line, "=>");
		struct tfs_entry *e;

		if (line[0] == '#')
			continue;
		if (arrow && strspn(line, " ") == (size_t)(arrow - line)) {
			e = t->n ? &t->e[t->n - 1] : NULL;
			if (e && e->nframe < TFS_MAX_FRAMES) {
				snprintf(e->frame[e->nframe], sizeof(e->frame[0]),
					 "%s", arrow + 2);
				tfs_trim(e->frame[e->nframe++]);
			}
			continue;
		}
		if (t->n < TFS_MAX_ENTRIES && !tfs_parse_line(line, &t->e[t->n]))
			t->n++;
	}
	free(all);
	return t;
}

/* Lines of event @ev (of @pid only, if @pid > 0). */
static int tfs_count(const struct tfs_trace *t, const char *ev, int pid)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].what, ev) && (pid <= 0 || t->e[i].pid == pid))
			n++;
	return n;
}

/* Field @name of entry @e as a number, or LONG_MIN. */
static long tfs_num(const struct tfs_entry *e, const char *name)
{
	char v[64];

	if (ut_field(e->rest, name, v, sizeof(v)))
		return LONG_MIN;
	return strtol(v, NULL, 0);
}

/* The values of field @name of event @ev's lines, in order, as "v,v,v". */
static void tfs_values(const struct tfs_trace *t, const char *ev, const char *name,
		       char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < t->n && at < len; i++)
		if (!strcmp(t->e[i].what, ev))
			at += snprintf(buf + at, len - at, "%s%ld", at ? "," : "",
				       tfs_num(&t->e[i], name));
}

/* The probed address an event's line shows: "(0x...)". */
static unsigned long tfs_ip(const struct tfs_entry *e)
{
	const char *p = strstr(e->rest, "(0x");

	return p ? strtoul(p + 1, NULL, 16) : 0;
}

/* Entries that are stack traces of kind @what ("<stack trace>", ...). */
static int tfs_stacks(const struct tfs_trace *t, const char *what)
{
	return tfs_count(t, what, 0);
}

/*
 * Whether every line of @ev is followed at once by a stack trace of kind
 * @what of the same task, and every such stack by a line of @ev: the
 * number of pairs, or -1 - the index of the first entry out of place.
 */
static int tfs_pairs(const struct tfs_trace *t, const char *ev, const char *what)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++) {
		if (!strcmp(t->e[i].what, what))
			return -1 - i;
		if (strcmp(t->e[i].what, ev))
			continue;
		if (i + 1 >= t->n || strcmp(t->e[i + 1].what, what) ||
		    t->e[i + 1].pid != t->e[i].pid || !t->e[i + 1].nframe)
			return -1 - i;
		i++;
		n++;
	}
	return n;
}

/*
 * A kernel stack as tracefs prints it: kernel symbols, none of them a
 * bare address (a user address shows as one), ending in the breakpoint
 * trap that took the hit.  NULL, or what is wrong with it.
 */
static const char *tfs_kernel_stack_wrong(const struct tfs_entry *e)
{
	int i;

	if (!e->nframe)
		return "no frames";
	for (i = 0; i < e->nframe; i++)
		if (!strncmp(e->frame[i], "0x", 2))
			return e->frame[i];
	for (i = 0; i < e->nframe; i++)
		if (strstr(e->frame[i], "int3"))
			return NULL;
	return "no frame of the int3 trap";
}

/*
 * Wait until process @pid sleeps (in its next read of a command), and a
 * little more: tracefs saves a task's comm and tgid for the trace's
 * lines when it schedules out after recording, so a reply read at once
 * can come before that.  0, or -1 if it does not sleep within 2 s.
 */
static int tfs_settle(pid_t pid)
{
	char p[64], *s, *st;
	int i;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	for (i = 0; i < 1000; i++) {
		s = ut_slurp(p, NULL);
		st = s ? strrchr(s, ')') : NULL;
		if (st && st[1] == ' ' && st[2] == 'S') {
			free(s);
			usleep(50000);
			return 0;
		}
		free(s);
		usleep(2000);
	}
	return -1;
}

/* The whole content of tracefs @file on one line, for messages. */
static const char *tfs_show(const char *file)
{
	static char buf[1024];

	if (tfs_get(file, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "<cannot read %s>", file);
	return buf;
}

/* ------------------------------------------------------------------ */
/* The fixture                                                         */
/* ------------------------------------------------------------------ */

FIXTURE(tfs) {
	struct ut_ctx c;
	struct tfs_undo u;
	struct ut_knob printk;	/* kernel.tracepoint_printk */
	char target[PATH_MAX];
};

FIXTURE_SETUP(tfs)
{
	memset(&self->u, 0, sizeof(self->u));
	self->printk.path[0] = '\0';
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	/* Each case starts with tracing on, and the teardown puts it back. */
	ASSERT_EQ(0, tfs_set(&self->u, "tracing_on", "1"));
}

FIXTURE_TEARDOWN(tfs)
{
	tfs_undo_all(&self->u);
	ut_knob_restore(&self->printk);
	ut_ctx_cleanup(&self->c);
	ut_trace_clear();
}

/* Set tracefs @file to @val; the teardown puts it back. */
#define TFS_SET(file, val) do {							\
	const char *__f = (file), *__v = (val);					\
	int __e = tfs_set(&self->u, __f, __v);					\
	ASSERT_EQ(0, __e) TH_LOG("writing '%s' to %s: %s", __v, __f,		\
				 strerror(-__e));				\
} while (0)

/* Add a trigger to this case's event @i (in instance @inst if not NULL). */
#define TFS_TRIGGER(inst, i, trig) do {						\
	const char *__t = (trig);						\
	char __f[256];								\
	int __e;								\
	tfs_event_file(__f, sizeof(__f), &self->c, (inst), (i), "trigger");	\
	__e = tfs_trigger(&self->u, __f, __t);					\
	ASSERT_EQ(0, __e) TH_LOG("adding trigger '%s' to %s: %s", __t, __f,	\
				 strerror(-__e));				\
} while (0)

/* Write @val to a control file of event @i in instance @inst (or the top). */
#define TFS_EVENT_WRITE(inst, i, file, val) do {				\
	const char *__v = (val);						\
	char __f[256];								\
	int __e;								\
	tfs_event_file(__f, sizeof(__f), &self->c, (inst), (i), (file));	\
	__e = ut_write(__f, __v);						\
	ASSERT_EQ(0, __e) TH_LOG("writing '%s' to %s: %s", __v, __f,		\
				 strerror(-__e));				\
} while (0)

#define TFS_INSTANCE(name) do {							\
	const char *__n = (name);						\
	int __e = tfs_instance(&self->u, __n);					\
	ASSERT_EQ(0, __e) TH_LOG("making instance %s: %s", __n,		\
				 strerror(-__e));				\
} while (0)

/* Read trace file @file into *@tp, freeing what it held: 0 or -1. */
static int tfs_reread(struct tfs_trace **tp, const char *file)
{
	free(*tp);
	*tp = tfs_read(file);
	return *tp ? 0 : -1;
}

/* Read trace file @file into @t; it must be readable. */
#define TFS_READ(t, file) do {							\
	const char *__f = (file);						\
	ASSERT_EQ(0, tfs_reread(&(t), __f)) TH_LOG("cannot read %s", __f);	\
} while (0)

/* The path of control file @file of this case's event @i in @inst. */
static void tfs_event_file(char *buf, size_t len, struct ut_ctx *c,
			   const char *inst, int i, const char *file)
{
	if (inst)
		snprintf(buf, len, "instances/%s/events/%s/%s/%s", inst, c->grp,
			 ut_ev(c, i), file);
	else
		snprintf(buf, len, "events/%s/%s/%s", c->grp, ut_ev(c, i), file);
}

/* ------------------------------------------------------------------ */
/* Event filters and pid filters                                       */
/* ------------------------------------------------------------------ */

/*
 * A filter on a fetched argument keeps the matching hits only, in call
 * order; every hit is still counted.  Cleared, it lets every hit in.
 */
TEST_F(tfs, event_filter_on_argument_records_only_matching_hits)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], vals[128];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64 b=%si:s64");
	TFS_EVENT_WRITE(NULL, 0, "filter", "a > 2 && a != 5 && b == 1");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 8; i++)
		UT_CMD(t, r, "call ut_plain 1 %d %d", i, i == 7 ? 0 : 1);
	TFS_READ(tr, "trace");
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("3,4,6", vals);
	EXPECT_EQ(8, UT_HITS(0));

	/* "0" clears the filter: every hit is recorded again. */
	TFS_EVENT_WRITE(NULL, 0, "filter", "0");
	ut_trace_clear();
	for (i = 0; i < 3; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	TFS_READ(tr, "trace");
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("0,1,2", vals);
	free(tr);
}

/* A filter on common_pid keeps one process's hits, all of them. */
TEST_F(tfs, event_filter_on_common_pid_records_only_that_process)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t1, *t2;
	char r[256], f[64];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t1, "uprobe_target", NULL);
	UT_START(t2, "uprobe_target", NULL);
	snprintf(f, sizeof(f), "common_pid == %d", t2->pid);
	TFS_EVENT_WRITE(NULL, 0, "filter", f);
	UT_ENABLE(0, true);
	UT_CMD(t1, r, "call ut_plain 5 1 1");
	UT_CMD(t2, r, "call ut_plain 7 1 1");
	UT_CMD(t1, r, "call ut_plain 3 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(7, tfs_count(tr, ut_ev(&self->c, 0), t2->pid));
	EXPECT_EQ(7, tfs_count(tr, ut_ev(&self->c, 0), 0));
	EXPECT_EQ(15, UT_HITS(0));
	free(tr);
}

/*
 * set_event_pid: only the listed process's hits are recorded, of an
 * event defined before the list was written and of one defined after;
 * another instance, without a list, records both processes.
 */
TEST_F(tfs, set_event_pid_records_only_the_listed_process)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t1, *t2;
	char r[256], pid[32], f[256];
	long off0, off1;

	UT_SYM(off0, self->target, "ut_plain");
	UT_SYM(off1, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off0, NULL, NULL);
	UT_START(t1, "uprobe_target", NULL);
	UT_START(t2, "uprobe_target", NULL);
	TFS_INSTANCE(INST_A);
	snprintf(pid, sizeof(pid), "%d", t1->pid);
	TFS_SET("set_event_pid", pid);
	UT_PROBE(1, 'p', self->target, off1, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	TFS_EVENT_WRITE(INST_A, 0, "enable", "1");
	UT_CMD(t1, r, "call ut_plain 3 1 1");
	UT_CMD(t2, r, "call ut_plain 4 1 1");
	UT_CMD(t1, r, "call ut_step 2 1 1");
	UT_CMD(t2, r, "call ut_step 5 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(3, tfs_count(tr, ut_ev(&self->c, 0), t1->pid));
	EXPECT_EQ(3, tfs_count(tr, ut_ev(&self->c, 0), 0));
	EXPECT_EQ(2, tfs_count(tr, ut_ev(&self->c, 1), t1->pid));
	EXPECT_EQ(2, tfs_count(tr, ut_ev(&self->c, 1), 0));
	EXPECT_EQ(7, UT_HITS(0));
	EXPECT_EQ(7, UT_HITS(1));
	snprintf(f, sizeof(f), "instances/%s/trace", INST_A);
	TFS_READ(tr, f);
	EXPECT_EQ(3, tfs_count(tr, ut_ev(&self->c, 0), t1->pid));
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 0), t2->pid));
	EXPECT_EQ(0, tfs_count(tr, ut_ev(&self->c, 1), 0));
	free(tr);
}

/* set_event_notrace_pid: the listed process's hits are not recorded. */
TEST_F(tfs, set_event_notrace_pid_drops_the_listed_process)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t1, *t2;
	char r[256], pid[32], p[PATH_MAX];
	long off;

	ut_tpath(p, sizeof(p), "set_event_notrace_pid");
	if (access(p, F_OK))
		SKIP(return, "no set_event_notrace_pid (before 5.8)");
	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t1, "uprobe_target", NULL);
	UT_START(t2, "uprobe_target", NULL);
	snprintf(pid, sizeof(pid), "%d", t1->pid);
	TFS_SET("set_event_notrace_pid", pid);
	UT_ENABLE(0, true);
	UT_CMD(t1, r, "call ut_plain 3 1 1");
	UT_CMD(t2, r, "call ut_plain 4 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 0), t2->pid));
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 0), 0));
	EXPECT_EQ(7, UT_HITS(0));
	free(tr);
}

/* ------------------------------------------------------------------ */
/* tracing_on                                                          */
/* ------------------------------------------------------------------ */

/* With tracing off nothing is recorded, but every hit is counted. */
TEST_F(tfs, tracing_off_records_nothing_but_hits_are_counted)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	TFS_SET("tracing_on", "0");
	UT_CMD(t, r, "call ut_plain 6 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(0, tfs_count(tr, ut_ev(&self->c, 0), 0));
	EXPECT_EQ(6, UT_HITS(0));
	TFS_SET("tracing_on", "1");
	UT_CMD(t, r, "call ut_plain 4 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(10, UT_HITS(0));
	free(tr);
}

/* An instance's tracing_on stops that instance only. */
TEST_F(tfs, instance_tracing_off_stops_only_that_instance)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], on[128], f[128];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	TFS_INSTANCE(INST_A);
	UT_ENABLE(0, true);
	TFS_EVENT_WRITE(INST_A, 0, "enable", "1");
	UT_START(t, "uprobe_target", NULL);
	snprintf(on, sizeof(on), "instances/%s/tracing_on", INST_A);
	snprintf(f, sizeof(f), "instances/%s/trace", INST_A);
	TFS_SET(on, "0");
	UT_CMD(t, r, "call ut_plain 3 1 1");
	TFS_SET(on, "1");
	UT_CMD(t, r, "call ut_plain 2 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(5, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	TFS_READ(tr, f);
	EXPECT_EQ(2, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(5, UT_HITS(0));
	free(tr);
}

/* ------------------------------------------------------------------ */
/* Stack trace options                                                 */
/* ------------------------------------------------------------------ */

/*
 * options/stacktrace: each hit's line is followed by the kernel stack
 * that recorded it (kernel functions, down to the int3 trap: on stock
 * 6.1 from __uprobe_trace_func to asm_exc_int3), not by the probed user
 * address.
 */
TEST_F(tfs, stacktrace_option_follows_each_hit_with_its_kernel_stack)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	const char *wrong;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	TFS_SET("options/stacktrace", "1");
	for (i = 0; i < 3; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	TFS_SET("options/stacktrace", "0");
	UT_CMD(t, r, "call ut_plain 1 9 0");
	TFS_READ(tr, "trace");
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(3, tfs_stacks(tr, "<stack trace>"));
	/* The last hit, with the option off, is followed by nothing. */
	ASSERT_LT(0, tr->n);
	EXPECT_STREQ(ut_ev(&self->c, 0), tr->e[tr->n - 1].what);
	tr->n--;
	EXPECT_EQ(3, tfs_pairs(tr, ut_ev(&self->c, 0), "<stack trace>"));
	for (i = 0; i < tr->n; i++) {
		if (strcmp(tr->e[i].what, "<stack trace>"))
			continue;
		wrong = tfs_kernel_stack_wrong(&tr->e[i]);
		EXPECT_EQ(NULL, wrong)
			TH_LOG("stack %d: %s (first frame '%s' of %d)", i, wrong,
			       tr->e[i].frame[0], tr->e[i].nframe);
	}
	free(tr);
}

/*
 * options/userstacktrace: each hit's line is followed by the user stack,
 * which starts at the probed instruction and goes on into its caller.
 */
TEST_F(tfs, userstacktrace_option_follows_each_hit_with_its_user_stack)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], want[64];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	TFS_SET("options/userstacktrace", "1");
	for (i = 0; i < 3; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	TFS_READ(tr, "trace");
	EXPECT_EQ(3, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(3, tfs_pairs(tr, ut_ev(&self->c, 0), "<user stack trace>"));
	for (i = 0; i + 1 < tr->n; i += 2) {
		snprintf(want, sizeof(want), "<%016lx>", tfs_ip(&tr->e[i]));
		EXPECT_STREQ(want, tr->e[i + 1].frame[0]) TH_LOG("hit %d: %s", i / 2,
								 tr->e[i].rest);
		EXPECT_LE(2, tr->e[i + 1].nframe);
	}
	free(tr);
}

/*
 * options/stacktrace of one instance: its buffer gets a stack after each
 * hit, the top buffer, recording the same hits, none.
 */
TEST_F(tfs, stacktrace_option_of_an_instance_applies_to_it_only)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], f[128];
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	TFS_INSTANCE(INST_A);
	UT_ENABLE(0, true);
	TFS_EVENT_WRITE(INST_A, 0, "enable", "1");
	snprintf(f, sizeof(f), "instances/%s/options/stacktrace", INST_A);
	TFS_SET(f, "1");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 2 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(2, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(0, tfs_stacks(tr, "<stack trace>"));
	snprintf(f, sizeof(f), "instances/%s/trace", INST_A);
	TFS_READ(tr, f);
	EXPECT_EQ(2, tfs_pairs(tr, ut_ev(&self->c, 0), "<stack trace>"));
	free(tr);
}

/* ------------------------------------------------------------------ */
/* Triggers                                                            */
/* ------------------------------------------------------------------ */

/*
 * With @trigger on the event, ut_plain(a) called for a = 1..@calls:
 * tracing ends up off, the trace holds the hits' arguments @want, and
 * every hit is counted.
 */
static void traceoff_case(struct __test_metadata *_metadata,
			  FIXTURE_DATA(tfs) *self, const char *trigger,
			  int calls, const char *want)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], vals[64], on[16];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	TFS_TRIGGER(NULL, 0, trigger);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= calls; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	ASSERT_EQ(0, tfs_get("tracing_on", on, sizeof(on)));
	EXPECT_STREQ("0", on);
	TFS_READ(tr, "trace");
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ(want, vals);
	EXPECT_EQ(calls, UT_HITS(0));
	free(tr);
}

/*
 * traceoff acts after its hit is recorded (it is a post trigger): that
 * hit's line is there, later ones are not, and all are counted.
 */
TEST_F(tfs, traceoff_trigger_stops_tracing_after_its_hit)
{
	traceoff_case(_metadata, self, "traceoff", 3, "1");
}

/* traceoff:1 acts once: turned on again, tracing stays on. */
TEST_F(tfs, traceoff_trigger_with_a_count_acts_that_often)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], vals[64], on[16], trig[256], f[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	TFS_TRIGGER(NULL, 0, "traceoff:1");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= 3; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	ASSERT_EQ(0, tfs_get("tracing_on", on, sizeof(on)));
	EXPECT_STREQ("0", on);
	TFS_SET("tracing_on", "1");
	for (i = 4; i <= 5; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	ASSERT_EQ(0, tfs_get("tracing_on", on, sizeof(on)));
	EXPECT_STREQ("1", on);
	TFS_READ(tr, "trace");
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("1,4,5", vals);
	tfs_event_file(f, sizeof(f), &self->c, NULL, 0, "trigger");
	ASSERT_EQ(0, tfs_get(f, trig, sizeof(trig)));
	EXPECT_STREQ("traceoff:count=0", trig);
	EXPECT_EQ(5, UT_HITS(0));
	free(tr);
}

/*
 * traceon acts before its hit is recorded: with tracing off, the hit that
 * turns it on is the first line, and another event's hits before it are
 * not recorded.
 */
TEST_F(tfs, traceon_trigger_records_the_hit_that_turns_tracing_on)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], on[16];
	long off0, off1;

	UT_SYM(off0, self->target, "ut_plain");
	UT_SYM(off1, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off0, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off1, NULL, NULL);
	TFS_TRIGGER(NULL, 0, "traceon");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	TFS_SET("tracing_on", "0");
	UT_CMD(t, r, "call ut_step 3 1 1");
	UT_CMD(t, r, "call ut_plain 1 1 1");
	ASSERT_EQ(0, tfs_get("tracing_on", on, sizeof(on)));
	EXPECT_STREQ("1", on);
	UT_CMD(t, r, "call ut_step 2 1 1");
	TFS_READ(tr, "trace");
	EXPECT_EQ(1, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(2, tfs_count(tr, ut_ev(&self->c, 1), t->pid));
	ASSERT_LT(0, tr->n);
	EXPECT_STREQ(ut_ev(&self->c, 0), tr->e[0].what);
	EXPECT_EQ(5, UT_HITS(1));
	free(tr);
}

/* "traceoff if a == 3": the matching hit is the last line. */
TEST_F(tfs, conditional_traceoff_trigger_stops_tracing_at_the_matching_hit)
{
	traceoff_case(_metadata, self, "traceoff if a == 3", 5, "1,2,3");
}

/* "stacktrace if a == 3": a kernel stack after each matching hit only. */
TEST_F(tfs, stacktrace_trigger_follows_each_matching_hit_with_a_stack)
{
	static const int a[] = { 1, 3, 2, 3, 4 };
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	const char *wrong;
	char r[256];
	long off;
	int i, stacks = 0;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	TFS_TRIGGER(NULL, 0, "stacktrace if a == 3");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	for (i = 0; i < 5; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", a[i]);
	TFS_READ(tr, "trace");
	EXPECT_EQ(5, tfs_count(tr, ut_ev(&self->c, 0), t->pid));
	EXPECT_EQ(2, tfs_stacks(tr, "<stack trace>"));
	for (i = 0; i < tr->n; i++) {
		bool three = !strcmp(tr->e[i].what, ut_ev(&self->c, 0)) &&
			     tfs_num(&tr->e[i], "a") == 3;
		bool next_stack = i + 1 < tr->n &&
				  !strcmp(tr->e[i + 1].what, "<stack trace>");

		if (strcmp(tr->e[i].what, ut_ev(&self->c, 0)))
			continue;
		EXPECT_EQ(three, next_stack) TH_LOG("entry %d: %s", i, tr->e[i].rest);
		if (!next_stack)
			continue;
		stacks++;
		wrong = tfs_kernel_stack_wrong(&tr->e[i + 1]);
		EXPECT_EQ(NULL, wrong) TH_LOG("stack after entry %d: %s", i, wrong);
	}
	EXPECT_EQ(2, stacks);
	free(tr);
}

/*
 * enable_event and disable_event triggers on two uprobe events switch a
 * third on and off (soft mode): it records only between the two, while
 * every hit of it is counted; the trigger events themselves, soft
 * enabled by their triggers only, record nothing.
 */
TEST_F(tfs, enable_event_and_disable_event_triggers_switch_another_event)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], trig[256], en[16], f[256];
	long off0, off1, off2;

	UT_SYM(off0, self->target, "ut_plain");
	UT_SYM(off1, self->target, "ut_step");
	UT_SYM(off2, self->target, "ut_nop");
	UT_PROBE(0, 'p', self->target, off0, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off1, NULL, NULL);
	UT_PROBE(2, 'p', self->target, off2, NULL, NULL);
	snprintf(trig, sizeof(trig), "enable_event:%s:%s", GRP, ut_ev(&self->c, 1));
	TFS_TRIGGER(NULL, 0, trig);
	snprintf(trig, sizeof(trig), "disable_event:%s:%s", GRP, ut_ev(&self->c, 1));
	TFS_TRIGGER(NULL, 2, trig);
	tfs_event_file(f, sizeof(f), &self->c, NULL, 1, "enable");
	ASSERT_EQ(0, tfs_get(f, en, sizeof(en)));
	EXPECT_STREQ("0*", en);
	UT_START(t, "uprobe_target", NULL);

	UT_CMD(t, r, "call ut_step 3 1 1");
	UT_CMD(t, r, "call ut_plain 1 1 1");
	ASSERT_EQ(0, tfs_get(f, en, sizeof(en)));
	EXPECT_STREQ("1*", en);
	UT_CMD(t, r, "call ut_step 4 1 1");
	UT_CMD(t, r, "call ut_nop 1 1 1");
	ASSERT_EQ(0, tfs_get(f, en, sizeof(en)));
	EXPECT_STREQ("0*", en);
	UT_CMD(t, r, "call ut_step 2 1 1");

	TFS_READ(tr, "trace");
	EXPECT_EQ(4, tfs_count(tr, ut_ev(&self->c, 1), t->pid));
	EXPECT_EQ(4, tr->n) TH_LOG("other lines recorded");
	EXPECT_EQ(9, UT_HITS(1));
	EXPECT_EQ(1, UT_HITS(0));
	EXPECT_EQ(1, UT_HITS(2));
	free(tr);
}

/* The count of histogram key @key in tracefs hist file @file, or -1. */
static long tfs_hist_count(const char *file, const char *key, long val)
{
	char *all = ut_read(file), *line, *save = NULL, want[64];
	long k, n, count = -1;

	if (!all)
		return -1;
	snprintf(want, sizeof(want), "{ %s: %%ld } hitcount: %%ld", key);
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, want, &k, &n) == 2 && k == val)
			count = n;
	free(all);
	return count;
}

/* The "Hits:" total of tracefs hist file @file, or -1. */
static long tfs_hist_total(const char *file)
{
	char *all = ut_read(file), *p;
	long n = -1;

	if (!all)
		return -1;
	p = strstr(all, "Hits:");
	if (p)
		n = strtol(p + 5, NULL, 10);
	free(all);
	return n;
}

/*
 * A hist trigger counts every hit under its key, on an event enabled
 * (keys=a: the lines are recorded too) and on one the trigger alone
 * soft-enables (keys=common_pid: nothing recorded).
 */
TEST_F(tfs, hist_trigger_counts_every_hit_by_key)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t1, *t2;
	char r[256], h0[256], h1[256];
	long off0, off1;

	UT_SYM(off0, self->target, "ut_plain");
	UT_SYM(off1, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off0, NULL, "a=%di:s64");
	UT_PROBE(1, 'p', self->target, off1, NULL, NULL);
	TFS_TRIGGER(NULL, 0, "hist:keys=a");
	TFS_TRIGGER(NULL, 1, "hist:keys=common_pid");
	UT_ENABLE(0, true);
	UT_START(t1, "uprobe_target", NULL);
	UT_START(t2, "uprobe_target", NULL);
	UT_CMD(t1, r, "call ut_plain 5 3 0");
	UT_CMD(t2, r, "call ut_plain 2 4 0");
	UT_CMD(t1, r, "call ut_step 6 1 1");
	UT_CMD(t2, r, "call ut_step 3 1 1");
	UT_CMD(t1, r, "call ut_plain 1 4 0");

	tfs_event_file(h0, sizeof(h0), &self->c, NULL, 0, "hist");
	tfs_event_file(h1, sizeof(h1), &self->c, NULL, 1, "hist");
	EXPECT_EQ(5, tfs_hist_count(h0, "a", 3)) TH_LOG("%s", tfs_show(h0));
	EXPECT_EQ(3, tfs_hist_count(h0, "a", 4)) TH_LOG("%s", tfs_show(h0));
	EXPECT_EQ(8, tfs_hist_total(h0));
	EXPECT_EQ(6, tfs_hist_count(h1, "common_pid", t1->pid)) TH_LOG("%s", tfs_show(h1));
	EXPECT_EQ(3, tfs_hist_count(h1, "common_pid", t2->pid)) TH_LOG("%s", tfs_show(h1));
	EXPECT_EQ(9, tfs_hist_total(h1));
	TFS_READ(tr, "trace");
	EXPECT_EQ(8, tfs_count(tr, ut_ev(&self->c, 0), 0));
	EXPECT_EQ(0, tfs_count(tr, ut_ev(&self->c, 1), 0));
	free(tr);
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */

/*
 * Two instances with the event enabled, one with a filter: each records
 * exactly its own lines, the top buffer none.  Disabling the event in one
 * leaves the other recording; so does removing an instance.
 */
TEST_F(tfs, two_instances_each_record_through_their_own_filter)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], vals[64], fa[128], fb[128];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	TFS_INSTANCE(INST_A);
	TFS_INSTANCE(INST_B);
	snprintf(fa, sizeof(fa), "instances/%s/trace", INST_A);
	snprintf(fb, sizeof(fb), "instances/%s/trace", INST_B);
	TFS_EVENT_WRITE(INST_A, 0, "filter", "a == 3");
	TFS_EVENT_WRITE(INST_A, 0, "enable", "1");
	TFS_EVENT_WRITE(INST_B, 0, "enable", "1");
	UT_START(t, "uprobe_target", NULL);
	for (i = 1; i <= 4; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);
	TFS_READ(tr, fa);
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("3", vals);
	TFS_READ(tr, fb);
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("1,2,3,4", vals);
	TFS_READ(tr, "trace");
	EXPECT_EQ(0, tr->n);

	/* Disabled in A: B records on, A keeps what it had. */
	TFS_EVENT_WRITE(INST_A, 0, "enable", "0");
	UT_CMD(t, r, "call ut_plain 1 3 0");
	UT_CMD(t, r, "call ut_plain 1 5 0");
	TFS_READ(tr, fa);
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("3", vals);
	TFS_READ(tr, fb);
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("1,2,3,4,3,5", vals);

	/* Enabled in A again, then B removed with the event enabled in it. */
	TFS_EVENT_WRITE(INST_A, 0, "enable", "1");
	ASSERT_EQ(0, tfs_instance_remove(&self->u, INST_B));
	UT_CMD(t, r, "call ut_plain 1 3 0");
	UT_CMD(t, r, "call ut_plain 1 6 0");
	TFS_READ(tr, fa);
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("3,3", vals);
	TFS_READ(tr, "trace");
	EXPECT_EQ(0, tr->n);
	EXPECT_EQ(8, UT_HITS(0));
	free(tr);
}

/*
 * tp_printk: each hit also goes to the kernel log, as the trace shows it.
 * Only a kernel booted with tp_printk has what prints it; elsewhere
 * kernel.tracepoint_printk stays 0 and the case is skipped.
 */
TEST_F(tfs, tp_printk_prints_each_hit_to_the_kernel_log)
{
	const char *sysctl = "/proc/sys/kernel/tracepoint_printk";
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], vals[64], logged[64], buf[1024], tag[128], *s;
	size_t at = 0;
	long on, off;
	ssize_t n;
	int i, fd;

	if (!ut_knob_set(&self->printk, sysctl, "1"))
		SKIP(return, "no %s", sysctl);
	on = ut_sysfs_num(sysctl);
	if (on != 1)
		SKIP(return, "kernel.tracepoint_printk stays %ld: not booted with tp_printk",
		     on);
	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, "a=%di:s64");
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_LE(0, fd) TH_LOG("cannot open /dev/kmsg: %s", strerror(errno));
	lseek(fd, 0, SEEK_END);
	for (i = 1; i <= 3; i++)
		UT_CMD(t, r, "call ut_plain 1 %d 0", i);

	/* Each record: "PRIO,SEQ,TIME,FLAGS;TEXT\n". */
	snprintf(tag, sizeof(tag), ";%s: (0x", ut_ev(&self->c, 0));
	logged[0] = '\0';
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		s = strstr(buf, tag);
		if (s && at < sizeof(logged)) {
			s = strstr(s, " a=");
			at += snprintf(logged + at, sizeof(logged) - at, "%s%ld",
				       at ? "," : "", s ? strtol(s + 3, NULL, 0) : -1L);
		}
	}
	close(fd);
	EXPECT_STREQ("1,2,3", logged);
	TFS_READ(tr, "trace");
	tfs_values(tr, ut_ev(&self->c, 0), "a", vals, sizeof(vals));
	EXPECT_STREQ("1,2,3", vals);
	free(tr);
}

/* ------------------------------------------------------------------ */
/* What a line shows of the probed task                                */
/* ------------------------------------------------------------------ */

/*
 * The context flags of a hit from user space: irqs on, no hardirq,
 * softirq or NMI, preempt depth 0, migration enabled.  need-resched is
 * whatever it was.  The flags column as both formats print it.
 */
static const char *tfs_flags_wrong(const char *f)
{
	if (strlen(f) != 5)
		return "not 5 characters";
	if (f[0] != '.')
		return "irqs off or BH disabled";
	if (!strchr(".nNp", f[1]))
		return "need-resched unknown";
	if (f[2] != '.')
		return "in hardirq, softirq or NMI";
	if (f[3] != '.')
		return "preempt depth not 0";
	if (f[4] != '.')
		return "migration disabled";
	return NULL;
}

/*
 * A hit's line shows the probed task's comm and pid and the context of a
 * hit from user space, in the default format, in latency-format and
 * through a filter.
 */
TEST_F(tfs, trace_line_shows_the_probed_task_and_its_context)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], tag[128], *all, *line, *save = NULL;
	const char *wrong;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long off;
	int i, n = 0;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 4 1 1");
	ASSERT_EQ(0, tfs_settle(t->pid));
	TFS_READ(tr, "trace");
	EXPECT_EQ(4, tr->n);
	for (i = 0; i < tr->n; i++) {
		EXPECT_STREQ(ut_ev(&self->c, 0), tr->e[i].what);
		EXPECT_STREQ("uprobe_target", tr->e[i].comm);
		EXPECT_EQ(t->pid, tr->e[i].pid);
		EXPECT_EQ(-1, tr->e[i].tgid);
		EXPECT_GT(ncpu, tr->e[i].cpu);
		wrong = tfs_flags_wrong(tr->e[i].flags);
		EXPECT_EQ(NULL, wrong) TH_LOG("flags '%s': %s", tr->e[i].flags, wrong);
	}

	/* "%8.8s-%-7d %3d" then the five flags, then the time. */
	TFS_SET("options/latency-format", "1");
	all = ut_read("trace");
	ASSERT_NE(NULL, all);
	snprintf(tag, sizeof(tag), " %s: ", ut_ev(&self->c, 0));
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char flags[8];

		if (line[0] == '#' || !strstr(line, tag))
			continue;
		n++;
		ASSERT_LT(25, strlen(line)) TH_LOG("line: %s", line);
		EXPECT_EQ(0, strncmp(line, "uprobe_t-", 9)) TH_LOG("line: %s", line);
		EXPECT_EQ(t->pid, atoi(line + 9)) TH_LOG("line: %s", line);
		EXPECT_GT(ncpu, atoi(line + 17)) TH_LOG("line: %s", line);
		snprintf(flags, sizeof(flags), "%.5s", line + 20);
		wrong = tfs_flags_wrong(flags);
		EXPECT_EQ(NULL, wrong) TH_LOG("flags '%s': %s (%s)", flags, wrong, line);
	}
	EXPECT_EQ(4, n);
	free(all);

	/* The same through a filter, which reserves the record itself. */
	TFS_SET("options/latency-format", "0");
	snprintf(tag, sizeof(tag), "common_pid == %d", t->pid);
	TFS_EVENT_WRITE(NULL, 0, "filter", tag);
	ut_trace_clear();
	UT_CMD(t, r, "call ut_plain 3 1 1");
	ASSERT_EQ(0, tfs_settle(t->pid));
	TFS_READ(tr, "trace");
	EXPECT_EQ(3, tr->n);
	for (i = 0; i < tr->n; i++) {
		EXPECT_EQ(t->pid, tr->e[i].pid);
		wrong = tfs_flags_wrong(tr->e[i].flags);
		EXPECT_EQ(NULL, wrong) TH_LOG("filtered, flags '%s': %s",
					      tr->e[i].flags, wrong);
	}
	free(tr);
}

/* Whether tracefs @file has the line "@a @b". */
static bool tfs_has_pair(const char *file, long a, const char *b)
{
	char *all = ut_read(file), *line, *save = NULL, want[128];
	bool found = false;

	if (!all)
		return false;
	snprintf(want, sizeof(want), "%ld %s", a, b);
	for (line = strtok_r(all, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save))
		found = !strcmp(line, want);
	free(all);
	return found;
}

/*
 * options/record-tgid: each line shows the hitting thread's pid and its
 * process's tgid, and saved_tgids and saved_cmdlines know each thread.
 */
TEST_F(tfs, record_tgid_shows_each_thread_with_its_process)
{
	struct tfs_trace *tr = NULL;
	struct ut_target *t;
	char r[256], tgid[32];
	int i, threads = 0;
	long off;

	UT_SYM(off, self->target, "ut_plain");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	TFS_SET("options/record-tgid", "1");
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 1 1 1");
	UT_CMD(t, r, "threads ut_plain 2 3 5 0");
	EXPECT_EQ(2 * 15, ut_okval(r));
	ASSERT_EQ(0, tfs_settle(t->pid));
	TFS_READ(tr, "trace");
	EXPECT_EQ(7, tfs_count(tr, ut_ev(&self->c, 0), 0));
	snprintf(tgid, sizeof(tgid), "%d", t->pid);
	for (i = 0; i < tr->n; i++) {
		const struct tfs_entry *e = &tr->e[i];

		EXPECT_STREQ("uprobe_target", e->comm);
		EXPECT_EQ(t->pid, e->tgid) TH_LOG("line %d, pid %d", i, e->pid);
		EXPECT_TRUE(tfs_has_pair("saved_tgids", e->pid, tgid))
			TH_LOG("no '%d %s' in saved_tgids", e->pid, tgid);
		EXPECT_TRUE(tfs_has_pair("saved_cmdlines", e->pid, "uprobe_target"))
			TH_LOG("no '%d uprobe_target' in saved_cmdlines", e->pid);
		if (e->pid != t->pid)
			threads++;
	}
	EXPECT_EQ(6, threads);
	EXPECT_EQ(t->pid, tr->n ? tr->e[0].pid : -1);
	free(tr);
}

UT_HARNESS_MAIN
