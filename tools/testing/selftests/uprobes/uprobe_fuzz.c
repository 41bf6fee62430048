// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded fuzz of what users hand the uprobes front ends, with a fixed
 * seed so that every run (and every kernel) sees the same inputs:
 *
 * - lines written to uprobe_events and dynamic_events: valid definitions
 *   and mutations of them (truncated, bytes changed, bad and huge offsets,
 *   offsets into the middle of instructions, bad fetch arguments and
 *   types, long names, directories, /proc files, files that are not
 *   executable), and random text;
 * - probes at random offsets of real programs, enabled while a copy of
 *   the program runs, then disabled;
 * - perf_event_attr for the uprobe PMU with random config, flags, sample
 *   types, offsets and bad path pointers.
 *
 * What must hold: the kernel survives, each write the probe parser refuses
 * says why in error_log, nothing is left defined afterwards, and no probed
 * file changed.  The counts of accepted and refused inputs are printed.
 */
#include <ctype.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_fuzz"
#define SEED 0x75f0a2d3c1b49e87UL
#define PMU_TYPE "/sys/bus/event_source/devices/uprobe/type"

/* Inputs per case; enable/run cycles are bounded apart (they are slow). */
#define N_UPROBE_EVENTS 2500
#define N_DYNAMIC_EVENTS 700
#define N_ENABLE 120
#define N_PERF 1500
#define N_PERF_RUNS 80

/* ------------------------------------------------------------------ */
/* Randomness                                                          */
/* ------------------------------------------------------------------ */

/* xorshift64*: the same sequence on every machine for one seed. */
static unsigned long rng = SEED;

static unsigned long rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dUL;
}

static unsigned long rn(unsigned long n)
{
	return n ? rnd() % n : 0;
}

#define PICK(a) ((a)[rn(ARRAY_SIZE(a))])

/* Seconds since @t0 (or since boot, if @t0 is 0), to print how long. */
static double secs(double t0)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9 - t0;
}

/* ------------------------------------------------------------------ */
/* The files probes name                                               */
/* ------------------------------------------------------------------ */

enum { F_TRUE, F_TARGET, F_COPY_TRUE, F_COPY_TARGET, F_LIBC, F_DATA, F_REAL };

struct fz_file {
	char path[PATH_MAX];
	long size;
	unsigned long long hash;
	long lea;		/* offset of ut_step, in the targets */
};

struct fz {
	struct fz_file f[F_REAL];
	char dir[64];
	long accepted, refused, logged, unlogged;
	long enabled, enable_refused, runs, skipped;
};

/* Paths that are no probeable file: directories, /proc, devices, nothing. */
static const char *const bad_paths[] = {
	"/tmp", "/", "/proc/self/maps", "/proc/version", "/proc/self/exe/x",
	"/dev/null", "/dev/zero", "/sys/kernel/tracing/trace", "/etc/passwd",
	"/nonexistent", "/bin/true/", "//", "/tmp/../tmp",
};

/* A copy of @src at @dst, mode @mode. 0 or -errno. */
static int copy_file(const char *src, const char *dst, mode_t mode)
{
	size_t len;
	char *buf = ut_slurp(src, &len);
	int fd, err = 0;

	if (!buf)
		return -ENOENT;
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		err = -errno ?: -EIO;
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* The path libc is mapped from in this process. */
static int libc_path(char *buf, size_t len)
{
	char *all = ut_slurp("/proc/self/maps", NULL), *p, *e;

	if (!all)
		return -ENOENT;
	p = strstr(all, "/libc.so");
	if (!p)
		p = strstr(all, "/libc-");
	if (p) {
		while (p > all && p[-1] != ' ')
			p--;
		e = strchr(p, '\n');
		snprintf(buf, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	}
	free(all);
	return p ? 0 : -ENOENT;
}

static void fz_teardown(struct fz *z);

static int fz_setup(struct fz *z)
{
	struct stat st;
	int i, fd;

	memset(z, 0, sizeof(*z));
	rng = SEED;
	/* A fixed name: the lines hold the paths, and must be the same each run. */
	snprintf(z->dir, sizeof(z->dir), "/tmp/ust_fuzz.d");
	fz_teardown(z);
	if (mkdir(z->dir, 0755))
		return -errno;
	snprintf(z->f[F_TRUE].path, PATH_MAX, "/bin/true");
	ut_path(z->f[F_TARGET].path, PATH_MAX, "uprobe_target");
	snprintf(z->f[F_COPY_TRUE].path, PATH_MAX, "%s/true", z->dir);
	snprintf(z->f[F_COPY_TARGET].path, PATH_MAX, "%s/uprobe_target", z->dir);
	snprintf(z->f[F_DATA].path, PATH_MAX, "%s/data", z->dir);
	if (libc_path(z->f[F_LIBC].path, PATH_MAX))
		return -ENOENT;
	if (copy_file(z->f[F_TRUE].path, z->f[F_COPY_TRUE].path, 0755) ||
	    copy_file(z->f[F_TARGET].path, z->f[F_COPY_TARGET].path, 0755))
		return -EIO;
	/* A regular file of 3 pages that is no program. */
	fd = open(z->f[F_DATA].path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 3 * 4096 / 8; i++) {
		unsigned long v = rnd();

		if (write(fd, &v, sizeof(v)) != sizeof(v))
			break;
	}
	close(fd);
	for (i = 0; i < F_REAL; i++) {
		if (stat(z->f[i].path, &st))
			return -errno;
		z->f[i].size = st.st_size;
		z->f[i].hash = ut_file_hash(z->f[i].path);
		if (!z->f[i].hash)
			return -EIO;
	}
	z->f[F_TARGET].lea = ut_sym_off(z->f[F_TARGET].path, "ut_step");
	z->f[F_COPY_TARGET].lea = z->f[F_TARGET].lea;
	return z->f[F_TARGET].lea > 0 ? 0 : -ENOENT;
}

static void fz_teardown(struct fz *z)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/true", z->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/uprobe_target", z->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/data", z->dir);
	unlink(p);
	rmdir(z->dir);
}

/* ------------------------------------------------------------------ */
/* Events left behind                                                  */
/* ------------------------------------------------------------------ */

/*
 * Delete every event listed in @file that @snap did not list (accepted
 * fuzz input, whatever group and name it ended up with), calling @each
 * (if set) with "GROUP/EVENT" of each first.  Returns how many there were.
 */
static int delete_new_events(const char *file, const char *snap,
			     void (*each)(const char *grp_ev, void *arg), void *arg)
{
	char *all = ut_read(file), *line, *save = NULL;
	int n = 0;

	if (!all)
		return 0;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *sp, name[256], cmd[300];
		const char *s = snap;
		size_t len = strlen(line);
		bool old = false;

		while (s && (s = strstr(s, line))) {
			if ((s == snap || s[-1] == '\n') &&
			    (s[len] == '\n' || !s[len])) {
				old = true;
				break;
			}
			s++;
		}
		if (old || !colon)
			continue;
		sp = strchr(colon, ' ');
		snprintf(name, sizeof(name), "%.*s",
			 (int)(sp ? sp - colon - 1 : (long)strlen(colon + 1)), colon + 1);
		if (each)
			each(name, arg);
		snprintf(cmd, sizeof(cmd), "-:%s", name);
		n++;
		if (ut_append(file, cmd)) {
			/* still enabled by a failed case: turn it off first */
			char en[300], *slash = strchr(name, '/');

			if (!slash)
				continue;
			snprintf(en, sizeof(en), "events/%.*s/%s/enable",
				 (int)(slash - name), name, slash + 1);
			ut_write(en, "0");
			ut_append(file, cmd);
		}
	}
	free(all);
	return n;
}

/* ------------------------------------------------------------------ */
/* Definitions                                                         */
/* ------------------------------------------------------------------ */

static const char *const fetch_args[] = {
	"%di", "%si", "%ax", "%ip", "%sp", "%r15", "%nosuch", "%", "%%di",
	"+0(%di)", "+8(%sp)", "-8(%bp)", "+0(+0(%di))", "+0(%di", "+0%di",
	"+ab(%di)", "+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))", "+0($comm)",
	"$stack", "$stack0", "$stack3", "$stack9999999", "$stackx", "$retval",
	"$comm", "$nosuch", "$", "@+0x10", "@+ab", "@0x1000", "@ut_counter",
	"@+18446744073709551615", "\"str\"", "\"unterminated", "\\\"abc",
	"$arg1", "$arg0",
};

static const char *const types[] = {
	"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "x8", "x16",
	"x32", "x64", "string", "ustring", "symbol", "b3@4/32", "b0@4/32",
	"b65@0/64", "u8[4]", "u8[1000]", "u8[", "u8[x]", "string[2]",
	"nosuchtype", "", "u32[0]", "char",
};

static const char *const offsets[] = {
	"0", "0x0", "-1", "0x", "", "10a", "0xffffffffffffffff",
	"18446744073709551616", "99999999999999999999999999", "0b101",
	"0x7fffffffffffffff", "4096", "1e3", " 0x10", "0x10 ", "+0x10",
	"0x10(0x20)", "0x10(", "0x10(0x20", "0x10(0x20)x", "0x10(-1)",
	"0x10%return", "0x10%hoge", "0x10(0x20)%return",
};

static const char *const names[] = {
	"p:" GRP "/e%d", "r:" GRP "/r%d", "p:" GRP "/e%d", "p:" GRP "/e%d",
	"p", "r", "r9:" GRP "/e%d", "p:" GRP "/", "p:/e%d", "p:" GRP "/1e%d",
	"p:" GRP "/e-%d", "p:" GRP,
	"p:" GRP "/e123456789012345678901234567890123456789012345678901234567890123456789",
	"p:" GRP "/e%d/x", "p:" GRP "e%d", "x:" GRP "/e%d", "P:" GRP "/e%d",
	"p:1" GRP "/e%d", "p:" GRP "/ e%d",
};

/* Append a formatted piece to @buf (of @len bytes, @n used). */
static void cat(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n >= len - 1)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n = *n + k < len - 1 ? *n + k : len - 1;
}

static const char *const arg_names[] = {
	"1a", "a", "b123456789012345678901234567890123456789", "", "a-b",
};

/* One fetch argument, maybe named, maybe typed. */
static void gen_arg(char *buf, size_t len, size_t *n, int i)
{
	unsigned long r = rn(10);

	cat(buf, len, n, " ");
	if (r < 3)
		cat(buf, len, n, "a%d=", i);
	else if (r == 3)
		cat(buf, len, n, "%s=", PICK(arg_names));
	cat(buf, len, n, "%s", PICK(fetch_args));
	if (rn(2))
		cat(buf, len, n, ":%s", PICK(types));
}

/*
 * A definition for @path, with some parts valid and some not.  *@file is
 * set to the fz_file index when the path is one of ours and the offset an
 * in-file number, else -1.
 */
static void gen_def(struct fz *z, char *buf, size_t len, int idx, bool any_path, int *file)
{
	size_t n = 0;
	unsigned long r;
	int fi = -1, i, nargs;
	const char *path;

	buf[0] = '\0';
	cat(buf, len, &n, PICK(names), idx);
	r = rn(20);
	if (r < 14) {
		fi = rn(F_REAL);
		path = z->f[fi].path;
	} else if (r < 19 || !any_path) {
		path = PICK(bad_paths);
	} else {
		path = PICK(((const char *const []){ "", "true", "tmp/x", "/bin/true:" }));
	}
	cat(buf, len, &n, " %s:", path);
	r = rn(10);
	if (fi >= 0 && r < 4) {
		/* real offsets: anywhere in the file, often in its code */
		long off = z->f[fi].lea > 0 && rn(2) ? z->f[fi].lea + rn(8) :
			   (long)rn(z->f[fi].size);

		cat(buf, len, &n, "0x%lx", off);
		if (!rn(8))
			cat(buf, len, &n, "(0x%lx)", rn(z->f[fi].size + 16));
		if (!rn(6))
			cat(buf, len, &n, "%%return");
	} else if (fi >= 0 && r < 6) {
		cat(buf, len, &n, "0x%lx", z->f[fi].size + rn(1UL << (rn(40) + 1)));
		fi = -1;
	} else if (r < 9) {
		cat(buf, len, &n, "%s", PICK(offsets));
		fi = -1;
	} else {
		cat(buf, len, &n, "%lu", rnd() >> rn(64));
		fi = -1;
	}
	nargs = rn(8) ? rn(4) : rn(140);
	for (i = 0; i < nargs; i++)
		gen_arg(buf, len, &n, i);
	*file = fi;
}

/* Random text of the characters definitions are made of (no newline). */
static void gen_random(char *buf, size_t len)
{
	static const char cs[] = "pr-:/%$@+()[]\"\\ ,.=#0123456789abcdefxstuv_";
	size_t n = rn(len < 200 ? len : 200), i;

	for (i = 0; i < n; i++)
		buf[i] = rn(4) ? cs[rn(sizeof(cs) - 1)] : 1 + rn(126);
	buf[n] = '\0';
	for (i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	/* never a deletion: it could hit an event other than ours */
	if (buf[0] == '-')
		buf[0] = 'p';
}

/* Cut, change, duplicate or drop bytes of a definition. */
static void mutate(char *buf, size_t len)
{
	size_t n = strlen(buf), at, k;

	if (!n)
		return;
	switch (rn(5)) {
	case 0:
		buf[rn(n)] = '\0';
		break;
	case 1:
		for (k = rn(3) + 1; k; k--) {
			at = rn(n);
			buf[at] = 32 + rn(95);
		}
		break;
	case 2:
		at = rn(n);
		k = rn(n - at) + 1;
		if (n + k < len) {
			memmove(buf + at + k, buf + at, n - at + 1);
			memcpy(buf + at + k, buf + at, k);
		}
		break;
	case 3:
		at = rn(n);
		memmove(buf + at, buf + at + 1, n - at);
		break;
	default:
		at = rn(n);
		buf[at] = PICK(((const char []){ ' ', ':', '(', ')', '%', '@', '$' }));
		break;
	}
	if (buf[0] == '-')
		buf[0] = 'p';
}

/* ------------------------------------------------------------------ */
/* Writing, enabling, running                                          */
/* ------------------------------------------------------------------ */

/* Run a copy of a program for at most 2 s: what it does is not our matter. */
static void run_copy(struct fz *z, int fi)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		alarm(2);
		execl(z->f[fi].path, z->f[fi].path, "--once", "call ut_step 3 1 2",
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		z->runs++;
	}
}

struct enable_arg {
	struct fz *z;
	bool run;
};

/* Enable an accepted event, run the program it probes, disable it. */
static void enable_run_disable(const char *grp_ev, void *arg)
{
	struct enable_arg *a = arg;
	struct fz *z = a->z;
	const char *slash = strchr(grp_ev, '/');
	char f[300], *line, *all;
	int fi;

	if (!a->run || !slash)
		return;
	/* only events on our private copies: nothing else runs them */
	all = ut_read("uprobe_events");
	line = all ? strstr(all, grp_ev) : NULL;
	for (fi = F_COPY_TRUE; line && fi <= F_DATA; fi++) {
		char *nl = strchr(line, '\n'), *p = strstr(line, z->f[fi].path);

		if (p && (!nl || p < nl))
			break;
	}
	free(all);
	if (!line || fi > F_DATA || fi == F_LIBC)
		return;
	snprintf(f, sizeof(f), "events/%.*s/%s/enable", (int)(slash - grp_ev),
		 grp_ev, slash + 1);
	if (ut_write(f, "1")) {
		z->enable_refused++;
		return;
	}
	z->enabled++;
	if (fi != F_DATA)
		run_copy(z, fi);
	ut_write(f, "0");
}

/*
 * Whether dynamic_events hands @line to no parser before the uprobe one:
 * the kprobe parser leaves a "p" or "r" line to it only when the probed
 * place has both a '/' and a ':'.
 */
static bool uprobe_shaped(const char *line)
{
	const char *p = line, *e;

	while (*p && *p != ' ' && *p != '\t')
		p++;
	while (*p == ' ' || *p == '\t')
		p++;
	e = p;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	return memchr(p, '/', e - p) && memchr(p, ':', e - p);
}

/*
 * Whether the uprobe parser leaves @line alone without a word in
 * error_log, as 6.1's does: a line too long for a tracefs command
 * (refused before any parser sees it), or one that is not shaped like a
 * uprobe: fewer than two words (comments cut off), a first word not
 * starting with 'p' or 'r', a second without a '/', or without a digit
 * after its last ':'.  Every other refused line must be in error_log.
 */
static bool unlogged_ok(const char *line)
{
	static char buf[8192];
	char *w[2], *p, *colon, *a, *save = NULL;
	int n = 0;

	if (strlen(line) >= 4095)
		return true;
	snprintf(buf, sizeof(buf), "%s", line);
	p = strchr(buf, '#');
	if (p)
		*p = '\0';
	for (p = buf; n < 2;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		w[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	if (n < 2 || (w[0][0] != 'p' && w[0][0] != 'r') || !strchr(w[1], '/'))
		return true;
	colon = strrchr(w[1], ':');
	if (!colon || !isdigit((unsigned char)colon[1]))
		return true;
	/*
	 * And 6.1's trace_probe.c refuses $comm or an immediate string
	 * (\"...) typed other than "string", or as an array, without
	 * logging it (the kprobe parser shares that).
	 */
	for (a = strtok_r(p, " \t\n\v\f\r", &save); a;
	     a = strtok_r(NULL, " \t\n\v\f\r", &save)) {
		char *body = strchr(a, '=') ? strchr(a, '=') + 1 : a;
		char *type = strchr(body, ':');
		size_t blen = type ? (size_t)(type - body) : strlen(body);

		if (((blen == 5 && (!strncmp(body, "$comm", 5) ||
				    !strncmp(body, "$COMM", 5))) ||
		     !strncmp(body, "\\\"", 2)) &&
		    type && strcmp(type, ":string"))
			return true;
	}
	return false;
}

/*
 * Write @line to @file after clearing error_log; count it and check that
 * a refusal was logged.  Returns the write's 0 or -errno; *@logged says
 * whether error_log had an entry.
 */
static int try_line(struct fz *z, const char *file, const char *line, bool *logged)
{
	char *log;
	int err;

	ut_write("error_log", "");
	err = ut_append(file, line);
	*logged = false;
	if (!err) {
		z->accepted++;
		return 0;
	}
	z->refused++;
	log = ut_read("error_log");
	*logged = log && strstr(log, "error: ");
	free(log);
	if (*logged)
		z->logged++;
	else
		z->unlogged++;
	return err;
}

/* Write @s to a file outside tracefs. */
static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, s, strlen(s)) < 0)
		ksft_print_msg("writing %s: %s\n", path, strerror(errno));
	close(fd);
}

/* Every file as it was before the case. */
static int changed_files(struct fz *z, char *which, size_t len)
{
	int i, n = 0;

	which[0] = '\0';
	for (i = 0; i < F_REAL; i++) {
		if (ut_file_hash(z->f[i].path) == z->f[i].hash)
			continue;
		n++;
		snprintf(which + strlen(which), len - strlen(which), " %s", z->f[i].path);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* The cases                                                           */
/* ------------------------------------------------------------------ */

FIXTURE(fuzz) {
	struct fz z;
	char *snap_u, *snap_d;
	char *exc_trace;
};

/*
 * Programs a fuzzed probe broke may die of a general protection fault;
 * the kernel's line about that is no kernel report, so keep it off the
 * console for the case (debug.exception-trace).
 */
#define EXC_TRACE "/proc/sys/debug/exception-trace"

FIXTURE_SETUP(fuzz)
{
	int err;

	ut_write("events/enable", "0");
	ut_probe_del_prefix(GRP, "");
	self->exc_trace = ut_slurp(EXC_TRACE, NULL);
	if (self->exc_trace)
		write_file(EXC_TRACE, "0");
	err = fz_setup(&self->z);
	ASSERT_EQ(0, err) TH_LOG("setting up the files: %s", strerror(-err));
	self->snap_u = ut_read("uprobe_events");
	self->snap_d = ut_read("dynamic_events");
	ASSERT_NE(NULL, self->snap_u);
	ASSERT_NE(NULL, self->snap_d);
}

FIXTURE_TEARDOWN(fuzz)
{
	delete_new_events("uprobe_events", self->snap_u, NULL, NULL);
	delete_new_events("dynamic_events", self->snap_d, NULL, NULL);
	free(self->snap_u);
	free(self->snap_d);
	fz_teardown(&self->z);
	if (self->exc_trace)
		write_file(EXC_TRACE, self->exc_trace);
	free(self->exc_trace);
}

static void print_counts(struct fz *z, const char *file, double t)
{
	ksft_print_msg("%s: %ld accepted, %ld refused (%ld logged, %ld not), %ld skipped\n",
		       file, z->accepted, z->refused, z->logged, z->unlogged, z->skipped);
	ksft_print_msg("%s: %ld enabled, %ld refused enabling, %ld runs; %.1f s\n",
		       file, z->enabled, z->enable_refused, z->runs, t);
	fflush(stdout);
}

/* After a case: nothing of it defined, no file changed. */
#define EXPECT_CLEAN() do {							\
	char __w[4 * PATH_MAX];							\
	int __n = delete_new_events("uprobe_events", self->snap_u, NULL, NULL); \
	EXPECT_EQ(0, __n) TH_LOG("%d events left in uprobe_events", __n);	\
	__n = delete_new_events("dynamic_events", self->snap_d, NULL, NULL);	\
	EXPECT_EQ(0, __n) TH_LOG("%d events left in dynamic_events", __n);	\
	__n = changed_files(&self->z, __w, sizeof(__w));			\
	EXPECT_EQ(0, __n) TH_LOG("files changed:%s", __w);			\
} while (0)

/*
 * Lines for @file: definitions (mutated or not) and random text.  Each
 * accepted one is deleted again (after an enable/run/disable cycle, for
 * some of those on our copies); each refused one must be in error_log.
 */
static void fuzz_lines(struct __test_metadata *_metadata, struct fz *z,
		       const char *snap, const char *file, int count, bool any_text)
{
	static char line[8192];
	struct enable_arg ea = { z, false };
	int i, fi, err, missing = 0;
	bool logged, mutated;

	for (i = 0; i < count; i++) {
		unsigned long r = rn(100);

		mutated = false;
		if (any_text && r < 15) {
			gen_random(line, sizeof(line));
		} else if (any_text && r < 16) {
			/* longer than a tracefs command may be */
			gen_def(z, line, sizeof(line), i, true, &fi);
			while (strlen(line) < 5000)
				strcat(line, " %di");
		} else {
			gen_def(z, line, sizeof(line), i, any_text, &fi);
			if (r >= 70) {
				mutate(line, sizeof(line));
				mutated = true;
			}
		}
		if (!any_text && !uprobe_shaped(line)) {
			/* the kprobe parser would take it: not ours to fuzz */
			z->skipped++;
			continue;
		}
		err = try_line(z, file, line, &logged);
		if (!err) {
			ea.run = z->enabled + z->enable_refused < N_ENABLE && rn(3);
			delete_new_events(file, snap, enable_run_disable, &ea);
			continue;
		}
		if (logged)
			continue;
		/*
		 * 6.12 refuses a command of 2 KiB or more with E2BIG before
		 * parsing it, and logs nothing (6.1's limit is 4 KiB).
		 */
		if (err == -E2BIG && strlen(line) >= 2047)
			continue;
		if (unlogged_ok(line)) {
			/* 6.12 says E2BIG for too many or too long arguments. */
			EXPECT_TRUE(err == -EINVAL || err == -E2BIG)
				TH_LOG("'%.300s' refused with %s", line, strerror(-err));
			continue;
		}
		missing++;
		if (missing <= 10)
			TH_LOG("%s refused '%.300s' (%zu bytes; %s%s) without a word in error_log",
			       file, line, strlen(line), strerror(-err),
			       mutated ? ", mutated" : "");
	}
	EXPECT_EQ(0, missing) TH_LOG("%d refusals not in error_log", missing);
}

TEST_F_TIMEOUT(fuzz, uprobe_events_lines, 300)
{
	double t0 = secs(0);

	fuzz_lines(_metadata, &self->z, self->snap_u, "uprobe_events", N_UPROBE_EVENTS, true);
	print_counts(&self->z, "uprobe_events", secs(t0));
	EXPECT_CLEAN();
}

TEST_F_TIMEOUT(fuzz, dynamic_events_lines, 300)
{
	double t0 = secs(0);

	fuzz_lines(_metadata, &self->z, self->snap_d, "dynamic_events", N_DYNAMIC_EVENTS, false);
	print_counts(&self->z, "dynamic_events", secs(t0));
	EXPECT_CLEAN();
}

/* ------------------------------------------------------------------ */
/* The perf uprobe PMU                                                 */
/* ------------------------------------------------------------------ */

/* attr.size: this struct's, older ones, larger ones (with a tail), bad. */
static const unsigned int attr_sizes[] = {
	sizeof(struct perf_event_attr), sizeof(struct perf_event_attr),
	sizeof(struct perf_event_attr), PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER5,
	0, sizeof(struct perf_event_attr) + 8, 4096 + 8, 3,
};

/* A path pointer: to a good or bad path, or to no string at all. */
static unsigned long gen_path_ptr(struct fz *z, char *page_end, char *longpath, int *fi)
{
	unsigned long r = rn(20);

	*fi = -1;
	if (r < 9) {
		/* only our copies: a cpu-wide event on them touches no one else */
		*fi = PICK(((const int []){ F_COPY_TRUE, F_COPY_TARGET, F_DATA }));
		return (unsigned long)z->f[*fi].path;
	}
	if (r < 13)
		return (unsigned long)PICK(bad_paths);
	switch (r) {
	case 13:
		return 0;
	case 14:
		return 1;
	case 15:
		return 0xffffffff81000000UL;
	case 16:
		return (unsigned long)page_end;	/* runs into a PROT_NONE page */
	case 17:
		return (unsigned long)longpath;
	case 18:
		return 1UL << 47;
	default:
		return rnd();
	}
}

TEST_F_TIMEOUT(fuzz, perf_uprobe_attr, 300)
{
	struct fz *z = &self->z;
	long type = -1, opened = 0, refused = 0;
	char *s, *pages, *longpath;
	double t0 = secs(0);
	int i, fi;

	s = ut_slurp(PMU_TYPE, NULL);
	ASSERT_NE(NULL, s) TH_LOG("no uprobe PMU at " PMU_TYPE);
	type = strtol(s, NULL, 0);
	free(s);
	/* Two pages, the second inaccessible: a path that never ends. */
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pages);
	memset(pages, '/', 4096);
	ASSERT_EQ(0, mprotect(pages + 4096, 4096, PROT_NONE));
	longpath = malloc(2 * PATH_MAX);
	ASSERT_NE(NULL, longpath);
	for (i = 0; i < 2 * PATH_MAX - 1; i++)
		longpath[i] = i % 2 ? 'a' : '/';
	longpath[2 * PATH_MAX - 1] = '\0';

	for (i = 0; i < N_PERF; i++) {
		/* room for sizes past the struct: the kernel reads that far */
		static unsigned long abuf[(4096 + 64) / 8];
		struct perf_event_attr *attr = (void *)abuf;
		unsigned long r = rn(10), flags = 0;
		int pid, cpu, fd, k;

		memset(abuf, 0, sizeof(abuf));
		attr->size = PICK(attr_sizes);
		if (attr->size > sizeof(*attr) && rn(2))
			((char *)abuf)[attr->size - 1] = 1;
		attr->type = type;
		attr->config = rn(2);
		if (!rn(4))
			attr->config |= rnd() << rn(64);
		attr->config1 = gen_path_ptr(z, pages + 4096 - 4, longpath, &fi);
		if (fi >= 0 && r < 5)
			attr->config2 = z->f[fi].lea > 0 && rn(2) ? z->f[fi].lea + rn(6) :
					(long)rn(z->f[fi].size);
		else if (r < 8)
			attr->config2 = rn(1UL << rn(40));
		else
			attr->config2 = rnd() >> rn(64);
		/*
		 * A few of the flag bits (disabled, inherit, exclude_*, freq,
		 * precise_ip, ...), now and then a reserved one.
		 */
		for (k = rn(3) ? rn(5) : 0; k; k--)
			flags |= 1UL << rn(38);
		if (!rn(20))
			flags |= 1UL << (38 + rn(26));
		memcpy((char *)attr + offsetof(struct perf_event_attr, read_format) + 8,
		       &flags, sizeof(flags));
		attr->sigtrap = 0;	/* would signal this very process */
		attr->sample_type = rn(2) ? rnd() & (PERF_SAMPLE_MAX - 1) : 0;
		attr->sample_period = rn(3) ? rn(4) : rnd();
		attr->read_format = rn(2) ? rnd() & 0x1f : 0;
		attr->branch_sample_type = rn(4) ? 0 : rnd();
		attr->wakeup_events = rn(3);
		pid = rn(3) ? 0 : -1;
		cpu = pid < 0 ? (int)rn(2) : PICK(((const int []){ -1, -1, 0, 1, 4096 }));

		fd = syscall(__NR_perf_event_open, attr, pid, cpu, -1,
			     rn(4) ? PERF_FLAG_FD_CLOEXEC : rn(16));
		if (fd < 0) {
			refused++;
			continue;
		}
		opened++;
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		if (fi >= 0 && fi != F_DATA && z->runs < N_PERF_RUNS)
			run_copy(z, fi);
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		close(fd);
	}
	ksft_print_msg("perf uprobe PMU: %ld opened, %ld refused; %ld runs; %.1f s\n",
		       opened, refused, z->runs, secs(t0));
	fflush(stdout);
	/* Some of each, or the fuzz tried nothing. */
	EXPECT_LT(0, opened);
	EXPECT_LT(0, refused);
	munmap(pages, 8192);
	free(longpath);
	EXPECT_CLEAN();
}

UT_HARNESS_MAIN
