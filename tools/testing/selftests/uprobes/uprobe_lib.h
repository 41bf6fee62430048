/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the uprobes selftests.
 *
 * A test is a controller: it never executes probed code itself.  The code
 * under probe runs in "targets", small programs built next to the test
 * binaries and found through /proc/self/exe's directory, so that a probe
 * that misbehaves kills a target (which the test reports) rather than the
 * harness.  The long-lived target, uprobe_target, reads one command a line
 * on stdin and answers one line on stdout; that lets a test add and remove
 * probes at exact points of a running program's life.
 *
 * Probe offsets are file offsets, found at run time from the target's ELF
 * symbol table and program headers, exactly as perf probe computes them.
 *
 * Every helper returns 0 or a negative errno (or -1 where there is no
 * errno), and never calls ASSERT itself: the caller says what it expected.
 */
#ifndef UPROBE_LIB_H
#define UPROBE_LIB_H

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define UT_MAX_EVENTS	16
#define UT_MAX_TARGETS	8

/* ------------------------------------------------------------------ */
/* Paths                                                               */
/* ------------------------------------------------------------------ */

static char ut_tracefs[PATH_MAX];
static char ut_bindir[PATH_MAX - 256];

/* The directory the test binary (and so every target) lives in. */
static inline const char *ut_dir(void)
{
	char *slash;
	ssize_t n;

	if (ut_bindir[0])
		return ut_bindir;
	n = readlink("/proc/self/exe", ut_bindir, sizeof(ut_bindir) - 1);
	if (n <= 0)
		return ".";
	ut_bindir[n] = '\0';
	slash = strrchr(ut_bindir, '/');
	if (slash)
		*slash = '\0';
	return ut_bindir;
}

/* Full path of a file built next to the test binary. */
static inline void ut_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", ut_dir(), name);
}

/*
 * Where tracefs is, mounting it if it is not mounted yet.  Returns NULL
 * when the kernel has no uprobe_events at all.
 */
static inline const char *ut_tracefs_dir(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char f[PATH_MAX];
	unsigned int i;

	if (ut_tracefs[0])
		return ut_tracefs;
	for (i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), "%s/uprobe_events", dirs[i]);
		if (!access(f, F_OK)) {
			strcpy(ut_tracefs, dirs[i]);
			return ut_tracefs;
		}
	}
	mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (!access("/sys/kernel/tracing/uprobe_events", F_OK)) {
		strcpy(ut_tracefs, "/sys/kernel/tracing");
		return ut_tracefs;
	}
	return NULL;
}

static inline void ut_tpath(char *buf, size_t len, const char *file)
{
	snprintf(buf, len, "%s/%s", ut_tracefs_dir() ?: "/nonexistent", file);
}

/* ------------------------------------------------------------------ */
/* tracefs files                                                       */
/* ------------------------------------------------------------------ */

/* One write() of @s to @file opened with @flags: 0 or -errno. */
static inline int ut_write_flags(const char *file, const char *s, int flags)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	ut_tpath(p, sizeof(p), file);
	fd = open(p, O_WRONLY | flags);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static inline int ut_write(const char *file, const char *s)
{
	return ut_write_flags(file, s, O_TRUNC);
}

static inline int ut_append(const char *file, const char *s)
{
	return ut_write_flags(file, s, O_APPEND);
}

/* The whole content of any file, NUL-terminated, malloc'd (or NULL). */
static inline char *ut_slurp(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap + 1);
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += n;
		if (len == cap) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

static inline char *ut_read(const char *file)
{
	char p[PATH_MAX];

	ut_tpath(p, sizeof(p), file);
	return ut_slurp(p, NULL);
}

/* ------------------------------------------------------------------ */
/* The perf uprobe PMU                                                 */
/* ------------------------------------------------------------------ */

#define UT_PMU "/sys/bus/event_source/devices/uprobe"

/* A number from a sysfs file, or -1. */
static inline long ut_sysfs_num(const char *path)
{
	char *s = ut_slurp(path, NULL);
	long v;

	if (!s)
		return -1;
	v = strtol(s, NULL, 0);
	free(s);
	return v;
}

/* The first bit of the PMU's "config:N" or "config:N-M" field, or -1. */
static inline int ut_pmu_format_bit(const char *field)
{
	char p[256], *s;
	int bit = -1;

	snprintf(p, sizeof(p), UT_PMU "/format/%s", field);
	s = ut_slurp(p, NULL);
	if (!s)
		return -1;
	if (!strncmp(s, "config:", 7))
		bit = atoi(s + 7);
	free(s);
	return bit;
}

/* The PMU as its sysfs directory describes it; -1 where it says nothing. */
struct ut_pmu {
	int type;
	int retprobe_bit;
	int refctr_shift;
};

static inline void ut_pmu_init(struct ut_pmu *pmu)
{
	pmu->type = ut_sysfs_num(UT_PMU "/type");
	pmu->retprobe_bit = ut_pmu_format_bit("retprobe");
	pmu->refctr_shift = ut_pmu_format_bit("ref_ctr_offset");
}

/*
 * Open a counting uprobe event on @path:@off for @pid/@cpu: a return probe
 * if @ret, with the SDT semaphore at file offset @refctr if non-zero,
 * created disabled if @disabled.  The fd, or -errno.
 */
static inline int ut_pmu_open(const struct ut_pmu *pmu, const char *path,
			      long off, bool ret, long refctr, bool disabled,
			      int pid, int cpu)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = pmu->type;
	attr.config = ret ? 1ULL << pmu->retprobe_bit : 0;
	if (refctr)
		attr.config |= (unsigned long long)refctr << pmu->refctr_shift;
	attr.uprobe_path = (unsigned long)path;
	attr.probe_offset = off;
	attr.disabled = disabled;
	fd = syscall(__NR_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* ------------------------------------------------------------------ */
/* Probe events                                                        */
/* ------------------------------------------------------------------ */

/* Define an event: @def is a line of uprobe_events syntax. */
static inline int ut_probe_add(const char *def)
{
	return ut_append("uprobe_events", def);
}

static inline int ut_event_file_write(const char *grp, const char *ev,
				      const char *file, const char *s)
{
	char f[PATH_MAX];

	snprintf(f, sizeof(f), "events/%s/%s/%s", grp, ev, file);
	return ut_write(f, s);
}

static inline int ut_event_enable(const char *grp, const char *ev, bool on)
{
	return ut_event_file_write(grp, ev, "enable", on ? "1" : "0");
}

static inline bool ut_event_exists(const char *grp, const char *ev)
{
	char f[PATH_MAX], p[PATH_MAX];

	snprintf(f, sizeof(f), "events/%s/%s", grp, ev);
	ut_tpath(p, sizeof(p), f);
	return access(p, F_OK) == 0;
}

/* Disable, then delete an event; 0 or -errno of the deletion. */
static inline int ut_probe_del(const char *grp, const char *ev)
{
	char cmd[256];

	ut_event_enable(grp, ev, false);
	snprintf(cmd, sizeof(cmd), "-:%s/%s", grp, ev);
	return ut_append("uprobe_events", cmd);
}

/*
 * Write @text, whole lines, to tracefs @file (appending), in writes of
 * at most 4000 bytes that each end on a line: a probe file parses one
 * write at a time.  0 or the first -errno.
 */
static inline int ut_append_lines(const char *file, const char *text)
{
	char chunk[4001];
	size_t len = strlen(text), at = 0, n;
	int err;

	while (at < len) {
		n = len - at;
		if (n > 4000) {
			n = 4000;
			while (n && text[at + n - 1] != '\n')
				n--;
			if (!n)
				return -E2BIG;
		}
		memcpy(chunk, text + at, n);
		chunk[n] = '\0';
		err = ut_append(file, chunk);
		if (err)
			return err;
		at += n;
	}
	return 0;
}

/*
 * Disable every event of group @grp and delete them all, in batches:
 * how many were deleted, or -errno of the first write that failed.  Not
 * while other events come and go: uprobe_events, read in several
 * chunks, skips lines when the list changes in between.
 */
static inline int ut_group_remove(const char *grp)
{
	char *all = ut_read("uprobe_events"), *line, *save = NULL, *cmds;
	char f[PATH_MAX], want[128];
	size_t at = 0;
	int n = 0, err;

	if (!all)
		return -ENOENT;
	snprintf(f, sizeof(f), "events/%s/enable", grp);
	ut_write(f, "0");
	cmds = malloc(strlen(all) + 1);
	if (!cmds) {
		free(all);
		return -ENOMEM;
	}
	snprintf(want, sizeof(want), ":%s/", grp);
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, want), *sp;

		if (!p || p > line + 2)
			continue;
		sp = strchr(p, ' ');
		at += sprintf(cmds + at, "-%.*s\n",
			      (int)(sp ? sp - p : (long)strlen(p)), p);
		n++;
	}
	cmds[at] = '\0';
	err = ut_append_lines("uprobe_events", cmds);
	free(cmds);
	free(all);
	return err ? err : n;
}

/* Remove every event of @grp whose name starts with @prefix (leftovers). */
static inline void ut_probe_del_prefix(const char *grp, const char *prefix)
{
	char *all = ut_read("uprobe_events"), *line, *save = NULL;
	char want[256];

	if (!all)
		return;
	snprintf(want, sizeof(want), ":%s/%s", grp, prefix);
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, want), *sp, ev[128];

		if (!p || p > line + 2)
			continue;
		p += strlen(grp) + 2;
		sp = strchr(p, ' ');
		snprintf(ev, sizeof(ev), "%.*s", (int)(sp ? sp - p : (long)strlen(p)), p);
		ut_probe_del(grp, ev);
	}
	free(all);
}

/*
 * Hits of event @ev as uprobe_profile counts them (every hit of every
 * process while the event is enabled), or -1 if the event is not listed.
 *
 * Only exact where one thread at a time hits the probe: stock kernels
 * (6.1 at least) bump this count with a plain, non-atomic increment, so
 * two CPUs hitting one probe at once can lose hits now and then.  Cases
 * where threads or processes hit a probe concurrently count trace lines
 * (ut_trace_count(), one per hit, in per-CPU buffers) instead, after
 * making the buffer big enough with ut_ctx_trace_room().
 */
static inline long ut_profile_hits(const char *ev)
{
	char *all = ut_read("uprobe_profile"), *line, *save = NULL;
	long hits = -1;

	if (!all)
		return -1;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char file[PATH_MAX], name[256], *slash;
		unsigned long n;

		if (sscanf(line, "%s %255s %lu", file, name, &n) != 3)
			continue;
		slash = strrchr(name, '/');
		if (!strcmp(slash ? slash + 1 : name, ev)) {
			hits = n;
			break;
		}
	}
	free(all);
	return hits;
}

static inline int ut_trace_clear(void)
{
	return ut_write("trace", "");
}

/*
 * Walk the trace buffer: for each line of event @ev call @fn with the
 * writer's pid and the text after "ev: ".  Returns the number of lines
 * (of @pid only, if @pid > 0).
 */
typedef void (*ut_line_fn)(int pid, const char *rest, void *arg);

static inline int ut_trace_walk(const char *ev, int pid, ut_line_fn fn, void *arg)
{
	char *all = ut_read("trace"), *line, *save = NULL;
	char tag[256];
	int count = 0;

	if (!all)
		return -1;
	snprintf(tag, sizeof(tag), " %s: ", ev);
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *t, *br, *q;
		int lpid = -1;

		if (line[0] == '#')
			continue;
		t = strstr(line, tag);
		if (!t)
			continue;
		br = strstr(line, " [");
		if (br && br < t) {
			q = br;
			while (q > line && q[-1] == ' ')
				q--;
			while (q > line && q[-1] >= '0' && q[-1] <= '9')
				q--;
			lpid = atoi(q);
		}
		if (pid > 0 && lpid != pid)
			continue;
		count++;
		if (fn)
			fn(lpid, t + strlen(tag), arg);
	}
	free(all);
	return count;
}

static inline int ut_trace_count(const char *ev, int pid)
{
	return ut_trace_walk(ev, pid, NULL, NULL);
}

/* The sum of @n counters that other threads bump atomically. */
static inline long ut_counters_sum(const long *c, int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += __atomic_load_n(&c[i], __ATOMIC_SEQ_CST);
	return s;
}

/*
 * Events the per-CPU buffers have lost since the last clear (overwritten,
 * or dropped when not overwriting), or -1: with one event enabled, its
 * lines plus these are every event it recorded.
 */
static inline long ut_trace_lost(void)
{
	long lost = 0, n;
	int cpu, seen = 0;

	for (cpu = 0; cpu < 4096; cpu++) {
		char f[64], *all, *p;

		snprintf(f, sizeof(f), "per_cpu/cpu%d/stats", cpu);
		all = ut_read(f);
		if (!all)
			continue;
		seen++;
		p = strstr(all, "overrun:");
		if (p && sscanf(p, "overrun: %ld", &n) == 1)
			lost += n;
		p = strstr(all, "dropped events:");
		if (p && sscanf(p, "dropped events: %ld", &n) == 1)
			lost += n;
		free(all);
		if (seen >= sysconf(_SC_NPROCESSORS_CONF))
			break;
	}
	return seen ? lost : -1;
}

/* Copy the text of the @idx-th line of @ev (after "ev: ") into @buf. */
struct ut_nth {
	int want, seen;
	char *buf;
	size_t len;
};

static inline void ut_nth_fn(int pid, const char *rest, void *arg)
{
	struct ut_nth *n = arg;

	(void)pid;
	if (n->seen++ == n->want)
		snprintf(n->buf, n->len, "%s", rest);
}

static inline int ut_trace_line(const char *ev, int idx, char *buf, size_t len)
{
	struct ut_nth n = { idx, 0, buf, len };

	buf[0] = '\0';
	ut_trace_walk(ev, 0, ut_nth_fn, &n);
	return buf[0] ? 0 : -1;
}

/*
 * The value of "name=" in a trace line, as text up to the next space
 * (strings keep their quotes).
 */
static inline int ut_field(const char *line, const char *name, char *buf, size_t len)
{
	char key[128];
	const char *p = line, *e;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(line, key);
	if (!p)
		return -1;
	p += strlen(key);
	if (*p == '"') {
		e = strchr(p + 1, '"');
		e = e ? e + 1 : p + strlen(p);
	} else {
		e = strchr(p, ' ');
		if (!e)
			e = p + strlen(p);
	}
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return 0;
}

/* ------------------------------------------------------------------ */
/* error_log                                                           */
/* ------------------------------------------------------------------ */

/*
 * The last entry of error_log: its message (after "error: ") and the
 * caret's position within the command.  0, or -1 if the log is empty.
 */
static inline int ut_last_error(char *msg, size_t len, int *caret, char *cmd, size_t clen)
{
	char *all = ut_read("error_log"), *p, *e, *c, *k;

	msg[0] = '\0';
	*caret = -1;
	if (!all)
		return -1;
	p = NULL;
	for (e = strstr(all, "error: "); e; e = strstr(e + 1, "error: "))
		p = e;
	if (!p) {
		free(all);
		return -1;
	}
	p += strlen("error: ");
	e = strchr(p, '\n');
	snprintf(msg, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
	c = e ? strstr(e, "Command: ") : NULL;
	if (c) {
		/* the caret line is indented to line up with the command */
		char *cmdline = c, *caretline;

		while (cmdline > all && cmdline[-1] != '\n')
			cmdline--;
		c += strlen("Command: ");
		e = strchr(c, '\n');
		if (cmd)
			snprintf(cmd, clen, "%.*s", (int)(e ? e - c : (long)strlen(c)), c);
		caretline = e ? e + 1 : NULL;
		k = caretline ? strchr(caretline, '^') : NULL;
		if (k)
			*caret = (int)(k - caretline) - (int)(c - cmdline);
	}
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ELF: symbol and SDT note file offsets                               */
/* ------------------------------------------------------------------ */

/* A mapped ELF file, 64-bit or (for the compat target) 32-bit. */
struct ut_elf {
	void *map;
	size_t size;
	Elf64_Ehdr *eh;
	Elf32_Ehdr *eh32;	/* set instead of @eh for a 32-bit file */
};

static inline int ut_elf_open(struct ut_elf *e, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	e->size = st.st_size;
	e->map = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (e->map == MAP_FAILED)
		return -errno;
	e->eh = e->map;
	if (memcmp(e->eh->e_ident, ELFMAG, SELFMAG) ||
	    (e->eh->e_ident[EI_CLASS] != ELFCLASS64 &&
	     e->eh->e_ident[EI_CLASS] != ELFCLASS32)) {
		munmap(e->map, e->size);
		return -ENOEXEC;
	}
	if (e->eh->e_ident[EI_CLASS] == ELFCLASS32) {
		e->eh32 = e->map;
		e->eh = NULL;
	}
	return 0;
}

static inline void ut_elf_close(struct ut_elf *e)
{
	munmap(e->map, e->size);
}

/* File offset of virtual address @va, through the PT_LOAD headers. */
static inline long ut_elf_va2off(struct ut_elf *e, uint64_t va)
{
	Elf64_Phdr *ph;
	int i;

	if (e->eh32) {
		Elf32_Phdr *p = (Elf32_Phdr *)((char *)e->map + e->eh32->e_phoff);

		for (i = 0; i < e->eh32->e_phnum; i++)
			if (p[i].p_type == PT_LOAD && va >= p[i].p_vaddr &&
			    va < p[i].p_vaddr + p[i].p_filesz)
				return va - p[i].p_vaddr + p[i].p_offset;
		return -1;
	}
	ph = (Elf64_Phdr *)((char *)e->map + e->eh->e_phoff);
	for (i = 0; i < e->eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (va >= ph[i].p_vaddr && va < ph[i].p_vaddr + ph[i].p_filesz)
			return va - ph[i].p_vaddr + ph[i].p_offset;
	}
	return -1;
}

static inline Elf64_Shdr *ut_elf_shdr(struct ut_elf *e, int i)
{
	return (Elf64_Shdr *)((char *)e->map + e->eh->e_shoff) + i;
}

/* The same for a 32-bit file. */
static inline uint64_t ut_elf32_sym(struct ut_elf *e, const char *sym)
{
	Elf32_Shdr *sh = (Elf32_Shdr *)((char *)e->map + e->eh32->e_shoff);
	int i;

	for (i = 0; i < e->eh32->e_shnum; i++) {
		Elf32_Sym *s = (Elf32_Sym *)((char *)e->map + sh[i].sh_offset);
		const char *str = (char *)e->map + sh[sh[i].sh_link].sh_offset;
		size_t j;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		for (j = 0; j < sh[i].sh_size / sizeof(*s); j++)
			if (s[j].st_value && !strcmp(str + s[j].st_name, sym))
				return s[j].st_value;
	}
	return 0;
}

/* Virtual address of symbol @sym (symtab first, then dynsym), or 0. */
static inline uint64_t ut_elf_sym(struct ut_elf *e, const char *sym)
{
	int pass, i;

	if (e->eh32)
		return ut_elf32_sym(e, sym);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < e->eh->e_shnum; i++) {
			Elf64_Shdr *sh = ut_elf_shdr(e, i), *strsh;
			Elf64_Sym *s;
			size_t j, n;

			if (sh->sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			strsh = ut_elf_shdr(e, sh->sh_link);
			s = (Elf64_Sym *)((char *)e->map + sh->sh_offset);
			n = sh->sh_size / sizeof(*s);
			for (j = 0; j < n; j++) {
				const char *name = (char *)e->map +
						   strsh->sh_offset + s[j].st_name;

				if (s[j].st_value && !strcmp(name, sym))
					return s[j].st_value;
			}
		}
	}
	return 0;
}

/* File offset of symbol @sym in @path (+ @add bytes), or a negative value. */
static inline long ut_sym_off(const char *path, const char *sym)
{
	struct ut_elf e = { 0 };
	uint64_t va;
	long off;

	if (ut_elf_open(&e, path))
		return -1;
	va = ut_elf_sym(&e, sym);
	off = va ? ut_elf_va2off(&e, va) : -1;
	ut_elf_close(&e);
	return off;
}

/*
 * "@+OFFSET" of symbol @sym as a fetch argument of a probe on @path: the
 * kernel adds OFFSET to the address the probed file's first byte would
 * have if the file were mapped linearly from the probe's mapping, so it is
 * the symbol's address minus the load bias of the probe's segment.
 */
static inline long ut_sym_fileoff_arg(const char *path, const char *sym, const char *probe_sym)
{
	struct ut_elf e = { 0 };
	uint64_t va, pva;
	long poff = -1;

	if (ut_elf_open(&e, path))
		return -1;
	va = ut_elf_sym(&e, sym);
	pva = ut_elf_sym(&e, probe_sym);
	if (va && pva)
		poff = ut_elf_va2off(&e, pva);
	ut_elf_close(&e);
	if (poff < 0)
		return -1;
	return (long)(va - (pva - poff));
}

/* SDT note @provider:@name in @path: file offsets of the site and semaphore. */
static inline int ut_sdt(const char *path, const char *provider, const char *name,
			 long *pc_off, long *sema_off)
{
	struct ut_elf e = { 0 };
	int i, ret = -ENOENT;

	if (ut_elf_open(&e, path))
		return -ENOENT;
	for (i = 0; e.eh && i < e.eh->e_shnum && ret; i++) {
		Elf64_Shdr *sh = ut_elf_shdr(&e, i);
		char *p, *end;

		if (sh->sh_type != SHT_NOTE)
			continue;
		p = (char *)e.map + sh->sh_offset;
		end = p + sh->sh_size;
		while (p + sizeof(Elf64_Nhdr) <= end) {
			Elf64_Nhdr *nh = (Elf64_Nhdr *)p;
			char *nm = p + sizeof(*nh);
			char *desc = nm + ((nh->n_namesz + 3) & ~3);

			p = desc + ((nh->n_descsz + 3) & ~3);
			if (nh->n_type != 3 || strcmp(nm, "stapsdt"))
				continue;
			{
				uint64_t *a = (uint64_t *)desc;
				char *prov = desc + 24;
				char *pn = prov + strlen(prov) + 1;

				if (strcmp(prov, provider) || strcmp(pn, name))
					continue;
				*pc_off = ut_elf_va2off(&e, a[0]);
				*sema_off = a[2] ? ut_elf_va2off(&e, a[2]) : 0;
				ret = 0;
				break;
			}
		}
	}
	ut_elf_close(&e);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Targets                                                             */
/* ------------------------------------------------------------------ */

struct ut_target {
	pid_t pid;
	int to;		/* its stdin */
	FILE *from;	/* its stdout */
};

/*
 * Start target program @prog (a file next to the test binary) with the
 * NULL-terminated @argv after argv[0]; its stdin and stdout are pipes to us.
 */
static inline int ut_target_startv(struct ut_target *t, const char *prog, char *const *args)
{
	int in[2], out[2];
	char path[PATH_MAX];

	ut_path(path, sizeof(path), prog);
	if (pipe(in) || pipe(out))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (t->pid == 0) {
		char *argv[16];
		int i = 0;

		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		argv[i++] = (char *)path;
		while (args && *args && i < 15)
			argv[i++] = *args++;
		argv[i] = NULL;
		execv(path, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->to = in[1];
	t->from = fdopen(out[0], "r");
	return 0;
}

static inline int ut_target_start(struct ut_target *t, const char *prog)
{
	return ut_target_startv(t, prog, NULL);
}

/* Read one line from the target into @reply (newline stripped). */
static inline int ut_target_reply(struct ut_target *t, char *reply, size_t len)
{
	char *nl;

	if (!fgets(reply, len, t->from)) {
		snprintf(reply, len, "<target exited>");
		return -1;
	}
	nl = strchr(reply, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/* Send one command line without waiting for its reply. */
static inline int ut_target_send(struct ut_target *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	return write(t->to, line, n) == n ? 0 : -errno;
}

/* Send one command line and read its one-line reply. */
static inline int ut_target_cmd(struct ut_target *t, char *reply, size_t len,
				const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (write(t->to, line, n) != n) {
		snprintf(reply, len, "<write failed: %s>", strerror(errno));
		return -1;
	}
	return ut_target_reply(t, reply, len);
}

/* Close its stdin (it exits) and reap it: the wait status, or -1. */
static inline int ut_target_stop(struct ut_target *t)
{
	int status = -1;

	if (t->pid <= 0)
		return -1;
	close(t->to);
	if (waitpid(t->pid, &status, 0) != t->pid)
		status = -1;
	fclose(t->from);
	t->pid = 0;
	return status;
}

static inline void ut_target_kill(struct ut_target *t)
{
	if (t->pid <= 0)
		return;
	kill(t->pid, SIGKILL);
	ut_target_stop(t);
}

/*
 * Run @prog with @args to completion; its stdout goes to @out.  Returns
 * the wait status.
 */
static inline int ut_run(const char *prog, char *const *args, char *out, size_t len)
{
	struct ut_target t;
	size_t n = 0;
	int c;

	if (ut_target_startv(&t, prog, args))
		return -1;
	close(t.to);
	t.to = open("/dev/null", O_RDONLY);
	while ((c = fgetc(t.from)) != EOF)
		if (n + 1 < len)
			out[n++] = c;
	if (len)
		out[n] = '\0';
	return ut_target_stop(&t);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Read all of @path, so that the page cache holds it: 0 or -errno. */
static inline int ut_file_cache(const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -EIO : 0;
}

/* FNV-1a over a whole file read with read(): the file's content as seen. */
static inline uint64_t ut_file_hash(const char *path)
{
	size_t len, i;
	char *buf = ut_slurp(path, &len);
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!buf)
		return 0;
	for (i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ULL;
	}
	free(buf);
	return h;
}

/* @n bytes of @path at @off, read with pread(). 0 or -errno. */
static inline int ut_file_bytes(const char *path, long off, void *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = pread(fd, buf, n, off);
	close(fd);
	return r == (ssize_t)n ? 0 : -EIO;
}

/* ------------------------------------------------------------------ */
/* Race-window delays of a debug kernel (CONFIG_UPROBES_RACE_DELAYS)   */
/* ------------------------------------------------------------------ */

#define UT_DELAY_KNOB(name) "/sys/kernel/debug/uprobes/" name

/* A debugfs knob set by a test and put back by its teardown. */
struct ut_knob {
	char path[128];
	char saved[32];
};

/* Set @path to @val, keeping its value; false when there is no such knob. */
static inline bool ut_knob_set(struct ut_knob *k, const char *path, const char *val)
{
	char *s = ut_slurp(path, NULL);
	int fd;

	k->path[0] = '\0';
	if (!s)
		return false;
	snprintf(k->saved, sizeof(k->saved), "%s", s);
	free(s);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return false;
	if (write(fd, val, strlen(val)) < 0) {
		close(fd);
		return false;
	}
	close(fd);
	snprintf(k->path, sizeof(k->path), "%s", path);
	return true;
}

static inline void ut_knob_restore(struct ut_knob *k)
{
	int fd;

	if (!k->path[0])
		return;
	fd = open(k->path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, k->saved, strlen(k->saved)) < 0)
			fprintf(stderr, "# cannot restore %s\n", k->path);
		close(fd);
	}
	k->path[0] = '\0';
}

/* ------------------------------------------------------------------ */
/* Code files and programs a test makes itself                        */
/* ------------------------------------------------------------------ */

/*
 * A two-page code file: page 0 holds "mov $7, %eax; ret" at UT_CODE_FN
 * amid nops, page 1 zeroes (data the programs write, or a hole to punch).
 */
#define UT_PAGE		4096
#define UT_CODE_LEN	(2 * UT_PAGE)
#define UT_CODE_FN	0x100
#define UT_CODE_FN_RET	7	/* what the function at UT_CODE_FN returns */
#define UT_CODE_DATA	0x800

/* pwrite() @n bytes at @off of @path: the count written, or -errno. */
static inline int ut_file_write_at(const char *path, long off, const void *buf,
				   size_t n)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = pwrite(fd, buf, n, off);
	ret = ret < 0 ? -errno : ret;
	close(fd);
	return ret;
}

/* Create (or truncate) @path, executable, with the @len bytes at @buf; 0 or -errno. */
static inline int ut_new_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0755), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len)
		err = -EIO;
	close(fd);
	return err;
}

/*
 * The code file's UT_CODE_LEN bytes: a page of nops with the function
 * "mov $7, %eax; ret" at UT_CODE_FN and 64 zeroes at UT_CODE_DATA, then
 * a page of zeroes.
 */
static inline void ut_code_fill(unsigned char *buf)
{
	static const unsigned char fn[] = { 0xb8, UT_CODE_FN_RET, 0, 0, 0, 0xc3 };

	memset(buf, 0x90, UT_PAGE);
	memset(buf + UT_PAGE, 0, UT_PAGE);
	memset(buf + UT_CODE_DATA, 0, 64);
	memcpy(buf + UT_CODE_FN, fn, sizeof(fn));
}

static inline int ut_code_file(const char *path)
{
	unsigned char buf[UT_CODE_LEN];

	ut_code_fill(buf);
	return ut_new_file(path, buf, sizeof(buf));
}

/*
 * A code file of many probe sites: @nfn functions UT_FN_STRIDE bytes
 * apart from offset 0, function i being "mov $UT_FN_RET(i), %eax; ret"
 * padded with nops, then one page of zeroes (data: SDT semaphores, or a
 * hole to punch).  For @nfn up to 16384 no byte of it is a breakpoint
 * (0xcc): one seen in the file or in a mapping of it is a probe's.
 */
#define UT_FN_STRIDE	16
#define UT_FN_RET(i)	(0x10000 + ((i) & 0x7f) + (((i) >> 7) << 8))

static inline size_t ut_fn_file_len(int nfn)
{
	size_t code = (size_t)nfn * UT_FN_STRIDE;

	return (code + UT_PAGE - 1) / UT_PAGE * UT_PAGE + UT_PAGE;
}

/* The file's bytes, ut_fn_file_len(@nfn) of them, into @buf. */
static inline void ut_fn_file_fill(unsigned char *buf, int nfn)
{
	unsigned char *f;
	int i, ret;

	memset(buf, 0x90, ut_fn_file_len(nfn) - UT_PAGE);
	memset(buf + ut_fn_file_len(nfn) - UT_PAGE, 0, UT_PAGE);
	for (i = 0; i < nfn; i++) {
		f = buf + (size_t)i * UT_FN_STRIDE;
		ret = UT_FN_RET(i);
		f[0] = 0xb8;
		memcpy(f + 1, &ret, 4);
		f[5] = 0xc3;
	}
}

/* Write the file of @nfn functions to @path; 0 or -errno. */
static inline int ut_fn_file(const char *path, int nfn)
{
	size_t len = ut_fn_file_len(nfn);
	unsigned char *buf = malloc(len);
	int err;

	if (!buf)
		return -ENOMEM;
	ut_fn_file_fill(buf, nfn);
	err = ut_new_file(path, buf, len);
	free(buf);
	return err;
}

/*
 * A program forked by the test, mapping a code file and obeying commands
 * through shared memory: the test decides between any two of its steps.
 */
enum ut_prog_cmd {
	UT_PROG_CALL = 1,	/* call the function @arg times: its last result */
	UT_PROG_READ,		/* the byte at offset @arg */
	UT_PROG_WRITE,		/* store @val at offset @arg */
	UT_PROG_PROTECT,	/* mprotect() the mapping to @arg */
	UT_PROG_STORE_START,	/* a thread stores a byte at @arg after @val us */
	UT_PROG_STORE_STOP,	/* stop it: how often it read its store back lost */
};

struct ut_prog_ctl {
	volatile int cmd, seq, ack;
	volatile long arg, val, res;
	volatile unsigned long base;
	unsigned long len;	/* of the mapping, set before the fork */
	volatile int stop;
	volatile long lost, stores;
};

struct ut_prog {
	pid_t pid;
	struct ut_prog_ctl *ctl;
	int status;		/* how it ended, once reaped */
};

/*
 * Store 0x77 over the file's 0 once, a while after the start (so that
 * the page still looks like the file's to whoever compares it first),
 * then read it back until told to stop.
 */
static inline void *ut_prog_storer(void *arg)
{
	struct ut_prog_ctl *ctl = arg;
	volatile unsigned char *b = (unsigned char *)ctl->base + ctl->arg;
	long i;

	usleep(ctl->val);
	*b = 0x77;
	for (i = 0; !ctl->stop; i++)
		if (*b != 0x77)
			ctl->lost++;
	ctl->stores = i;
	*b = 0;
	return NULL;
}

#define UT_HUGE		(2UL << 20)

/* A file of one huge page: the code file, then 0s. */
static inline int ut_huge_code_file(const char *path)
{
	static const unsigned char zero[UT_HUGE - UT_CODE_LEN];
	int err = ut_code_file(path);

	if (!err && ut_file_write_at(path, UT_CODE_LEN, zero, sizeof(zero)) !=
		    sizeof(zero))
		err = -EIO;
	return err;
}

/* The value of @key ("\nName:") in /proc/meminfo, in kB; -1 if none. */
static inline long ut_meminfo_kb(const char *key)
{
	char *all = ut_slurp("/proc/meminfo", NULL), *p;
	long v = -1;

	p = all ? strstr(all, key) : NULL;
	if (p)
		v = strtol(p + strlen(key), NULL, 10);
	free(all);
	return v;
}

/* A free huge page's worth of memory, after the earlier programs. */
static inline void ut_compact_memory(void)
{
	int fd = open("/proc/sys/vm/compact_memory", O_WRONLY);

	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		fprintf(stderr, "# compact_memory: %s\n", strerror(errno));
	close(fd);
}

/*
 * Map @len bytes of @path privately; a mapping of a huge page's size or
 * more starts on a huge page boundary, so that a file THP can map whole.
 */
static inline unsigned char *ut_map_file(const char *path, size_t len, int prot)
{
	size_t align = len >= UT_HUGE ? UT_HUGE : 0;
	unsigned char *at = NULL, *m;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return MAP_FAILED;
	if (align) {
		at = mmap(NULL, len + align, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (at != MAP_FAILED)
			at = (unsigned char *)(((unsigned long)at + align - 1) &
					       ~(align - 1));
	}
	m = at == MAP_FAILED ? MAP_FAILED :
		mmap(at, len, prot, MAP_PRIVATE | (at ? MAP_FIXED : 0), fd, 0);
	close(fd);
	return m;
}

static inline void ut_prog_serve(struct ut_prog_ctl *ctl, const char *path,
				 int prot, bool lock)
{
	pthread_t storer;
	unsigned char *base;
	int seq = 0;
	long i;

	base = ut_map_file(path, ctl->len, prot);
	if (base == MAP_FAILED || (lock && mlock(base, ctl->len)))
		_exit(3);
	ctl->base = (unsigned long)base;
	ctl->ack = 0;
	for (;;) {
		while (ctl->seq == seq)
			usleep(100);
		seq = ctl->seq;
		switch (ctl->cmd) {
		case UT_PROG_CALL:
			for (i = 0; i < ctl->arg; i++)
				ctl->res = ((int (*)(void))(base + UT_CODE_FN))();
			break;
		case UT_PROG_READ:
			ctl->res = base[ctl->arg];
			break;
		case UT_PROG_WRITE:
			base[ctl->arg] = ctl->val;
			break;
		case UT_PROG_PROTECT:
			ctl->res = mprotect(base, ctl->len, ctl->arg) ? -errno : 0;
			break;
		case UT_PROG_STORE_START:
			ctl->stop = 0;
			ctl->lost = 0;
			ctl->res = -pthread_create(&storer, NULL, ut_prog_storer, ctl);
			break;
		case UT_PROG_STORE_STOP:
			ctl->stop = 1;
			pthread_join(storer, NULL);
			ctl->res = ctl->lost;
			break;
		default:
			_exit(0);
		}
		ctl->ack = seq;
	}
}

/* Whether the program has ended: reaped, said how, its status kept. */
static inline bool ut_prog_ended(struct ut_prog *p)
{
	int st;

	if (p->pid <= 0)
		return true;
	if (waitpid(p->pid, &st, WNOHANG) != p->pid)
		return false;
	p->status = st;
	fprintf(stderr, "# program %d ended: %s %d\n", p->pid,
		WIFSIGNALED(st) ? "signal" : "exit status",
		WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	p->pid = 0;
	return true;
}

/* Fork a program mapping @len bytes of @path with @prot (mlock()ed if @lock). */
static inline int ut_prog_start_len(struct ut_prog *p, const char *path,
				    int prot, bool lock, size_t len)
{
	int i;

	p->ctl = mmap(NULL, sizeof(*p->ctl), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->ctl == MAP_FAILED)
		return -errno;
	memset((void *)p->ctl, 0, sizeof(*p->ctl));
	p->status = 0;
	p->ctl->ack = -1;
	p->ctl->len = len;
	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (!p->pid)
		ut_prog_serve(p->ctl, path, prot, lock);
	for (i = 0; i < 10000 && p->ctl->ack; i++) {
		if (ut_prog_ended(p))
			return -ECHILD;
		usleep(1000);
	}
	return p->ctl->ack ? -ETIMEDOUT : 0;
}

/* Fork a program mapping the code file @path (UT_CODE_LEN bytes). */
static inline int ut_prog_start(struct ut_prog *p, const char *path, int prot,
				bool lock)
{
	return ut_prog_start_len(p, path, prot, lock, UT_CODE_LEN);
}

/*
 * One command; its result, or LONG_MIN if the program did not answer
 * within about 10 s or ended (said on stderr, so that a failed case
 * names the step instead of running into its timeout).
 */
static inline long ut_prog_cmd(struct ut_prog *p, int cmd, long arg, long val)
{
	int seq = p->ctl->seq + 1, i;

	p->ctl->cmd = cmd;
	p->ctl->arg = arg;
	p->ctl->val = val;
	__sync_synchronize();
	p->ctl->seq = seq;
	for (i = 0; i < 20000 && p->ctl->ack != seq; i++) {
		/* A waitpid() per 32 ms: the usual answer comes first. */
		if (i % 64 == 63 && ut_prog_ended(p))
			break;
		usleep(500);
	}
	if (p->ctl->ack == seq)
		return p->ctl->res;
	if (p->pid > 0)
		fprintf(stderr, "# program %d: no answer to command %d\n",
			p->pid, cmd);
	return LONG_MIN;
}

static inline void ut_prog_kill(struct ut_prog *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	p->pid = 0;
	if (p->ctl && p->ctl != MAP_FAILED)
		munmap((void *)p->ctl, sizeof(*p->ctl));
	p->ctl = NULL;
}

/*
 * A field of /proc/@pid/smaps ("Anonymous", "Locked", ...) for the
 * mapping that starts at @start, in kB; -1 if not found.
 */
static inline long ut_smaps_kb(pid_t pid, unsigned long start, const char *field)
{
	char path[64], line[512];
	unsigned long lo;
	bool in = false;
	long kb = -1;
	size_t n = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && sscanf(line, "%lx-", &lo) == 1 &&
		    line[strspn(line, "0123456789abcdef")] == '-') {
			in = lo == start;
			continue;
		}
		if (in && !strncmp(line, field, n) && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	if (f)
		fclose(f);
	return kb;
}

/* ------------------------------------------------------------------ */
/* The fixture every suite shares                                      */
/* ------------------------------------------------------------------ */

/*
 * Events a case made and targets it started, so that teardown removes
 * them whatever happened: targets are killed first (nothing may still be
 * executing the probes), then each event is disabled and deleted.
 */
struct ut_ctx {
	const char *grp;
	char ev[UT_MAX_EVENTS][64];
	int nev;
	struct ut_target tg[UT_MAX_TARGETS];
	int ntg;
	char prefix[48];
	long saved_buf_kb;	/* buffer_size_kb to put back, or 0 */
};

/* Event names are the case name (cut short) and a number: unique per case. */
static inline void ut_ctx_init(struct ut_ctx *c, const char *grp, const char *test)
{
	memset(c, 0, sizeof(*c));
	c->grp = grp;
	snprintf(c->prefix, sizeof(c->prefix), "%.40s", test);
	ut_probe_del_prefix(grp, c->prefix);
	ut_trace_clear();
	ut_write("events/enable", "0");
}

/* The name of this case's event number @i. */
static inline const char *ut_ev(struct ut_ctx *c, int i)
{
	static char name[UT_MAX_EVENTS][64];

	snprintf(name[i], sizeof(name[i]), "%s_%d", c->prefix, i);
	return name[i];
}

/* Have teardown remove event @i, however it was defined. */
static inline int ut_ctx_adopt(struct ut_ctx *c, int i)
{
	if (c->nev >= UT_MAX_EVENTS)
		return -ENOSPC;
	snprintf(c->ev[c->nev++], sizeof(c->ev[0]), "%s", ut_ev(c, i));
	return 0;
}

/*
 * Define this case's event @i: "@type:@grp/@ev @path:0x@off[@suffix] @args".
 * @suffix may hold "(0xREF)" or "%return".  0 or -errno.
 */
static inline int ut_ctx_probe(struct ut_ctx *c, int i, char type, const char *path,
			       long off, const char *suffix, const char *args)
{
	char def[1024];
	int err;

	snprintf(def, sizeof(def), "%c:%s/%s %s:0x%lx%s%s%s", type, c->grp,
		 ut_ev(c, i), path, off, suffix ? suffix : "",
		 args ? " " : "", args ? args : "");
	err = ut_probe_add(def);
	if (!err)
		ut_ctx_adopt(c, i);
	return err;
}

static inline int ut_ctx_enable(struct ut_ctx *c, int i, bool on)
{
	return ut_event_enable(c->grp, ut_ev(c, i), on);
}

static inline struct ut_target *ut_ctx_target(struct ut_ctx *c, const char *prog,
					      char *const *args)
{
	struct ut_target *t;

	if (c->ntg >= UT_MAX_TARGETS)
		return NULL;
	t = &c->tg[c->ntg];
	if (ut_target_startv(t, prog, args))
		return NULL;
	c->ntg++;
	return t;
}

/* Disable and delete every event this case made. */
static inline void ut_ctx_remove_events(struct ut_ctx *c)
{
	int i;

	for (i = c->nev - 1; i >= 0; i--)
		ut_probe_del(c->grp, c->ev[i]);
	c->nev = 0;
}

/*
 * The per-CPU size of the trace buffer in kB.  Until tracing is first
 * used the file reads "N (expanded: M)": M is the size it will have.
 */
static inline long ut_trace_buf_kb(void)
{
	char *s = ut_read("buffer_size_kb"), *x;
	long kb;

	if (!s)
		return -1;
	x = strstr(s, "expanded:");
	kb = strtol(x ? x + strlen("expanded:") : s, NULL, 10);
	free(s);
	return kb;
}

/*
 * Make room in the trace buffer for @lines lines of an entry probe
 * without fetch arguments, even if they all land on one CPU, so that
 * counting them is exact (a full buffer overwrites its oldest lines).
 * An entry is about 20 bytes; allow 32.  ut_ctx_cleanup() puts the old
 * size back.  0 or -errno.
 */
static inline int ut_ctx_trace_room(struct ut_ctx *c, long lines)
{
	long want = lines * 32 / 1024 + 64, kb = ut_trace_buf_kb();
	char v[32];
	int err;

	if (kb < 0)
		return -ENOENT;
	if (kb >= want)
		return 0;
	snprintf(v, sizeof(v), "%ld", want);
	err = ut_write("buffer_size_kb", v);
	if (!err && !c->saved_buf_kb)
		c->saved_buf_kb = kb;
	return err;
}

static inline void ut_ctx_cleanup(struct ut_ctx *c)
{
	char v[32];
	int i;

	for (i = 0; i < c->ntg; i++)
		ut_target_kill(&c->tg[i]);
	c->ntg = 0;
	ut_ctx_remove_events(c);
	if (c->saved_buf_kb) {
		snprintf(v, sizeof(v), "%ld", c->saved_buf_kb);
		ut_write("buffer_size_kb", v);
		c->saved_buf_kb = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Assertions for the test files (kselftest_harness.h included first)  */
/* ------------------------------------------------------------------ */
#ifdef __KSELFTEST_HARNESS_H

/* The number after "ok " in a target's reply. */
static inline long ut_okval(const char *reply)
{
	return strtol(reply + 2, NULL, 0);
}

/* Send a command to a target; the reply must start with "ok". */
#define UT_CMD(t, buf, ...) do {						\
	ASSERT_EQ(0, ut_target_cmd((t), (buf), sizeof(buf), __VA_ARGS__))	\
		TH_LOG("the target did not answer (%s)", (buf));		\
	ASSERT_EQ(0, strncmp((buf), "ok", 2))					\
		TH_LOG("the target answered '%s'", (buf));			\
} while (0)

/* Define this case's event @i; it must be accepted. */
#define UT_PROBE(i, type, path, off, suffix, args) do {			\
	const char *__s = (suffix), *__a = (args);				\
	int __e = ut_ctx_probe(&self->c, (i), (type), (path), (off),		\
			       __s, __a);					\
	ASSERT_EQ(0, __e) TH_LOG("defining event %d at %s:0x%lx%s %s failed: %s", \
				 (i), (path), (long)(off), __s ?: "",		\
				 __a ?: "", strerror(-__e));			\
} while (0)

#define UT_ENABLE(i, on) do {							\
	int __e = ut_ctx_enable(&self->c, (i), (on));				\
	ASSERT_EQ(0, __e) TH_LOG("%s event %s failed: %s",			\
				 (on) ? "enabling" : "disabling",		\
				 ut_ev(&self->c, (i)), strerror(-__e));	\
} while (0)

/* The file offset of @sym in @path; it must exist. */
#define UT_SYM(var, path, sym) do {						\
	(var) = ut_sym_off((path), (sym));					\
	ASSERT_LT(0, (var)) TH_LOG("no symbol %s in %s", (sym), (path));	\
} while (0)

#define UT_START(var, prog, args) do {						\
	(var) = ut_ctx_target(&self->c, (prog), (args));			\
	ASSERT_NE(NULL, (var)) TH_LOG("cannot start %s", (prog));		\
} while (0)

/* Hits of event @i in uprobe_profile: see ut_profile_hits() for when. */
#define UT_HITS(i) ut_profile_hits(ut_ev(&self->c, (i)))
#define UT_LINES(i, pid) ut_trace_count(ut_ev(&self->c, (i)), (pid))

/* Room in the trace buffer for @lines lines; see ut_ctx_trace_room(). */
#define UT_TRACE_ROOM(lines) do {						\
	long __l = (lines);							\
	int __e = ut_ctx_trace_room(&self->c, __l);				\
	ASSERT_EQ(0, __e) TH_LOG("making room for %ld trace lines: %s",	\
				 __l, strerror(-__e));				\
} while (0)

/* main(): the whole binary is skipped, with the reason, without tracefs. */
#define UT_HARNESS_MAIN								\
int main(int argc, char **argv)						\
{										\
	if (geteuid())								\
		ksft_exit_skip("uprobes tests need root\n");			\
	if (!ut_tracefs_dir())							\
		ksft_exit_skip("no uprobe_events in tracefs (CONFIG_UPROBE_EVENTS)\n"); \
	return test_harness_run(argc, argv);					\
}

#endif /* __KSELFTEST_HARNESS_H */

#endif /* UPROBE_LIB_H */
