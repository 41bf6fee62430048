// SPDX-License-Identifier: GPL-2.0
/*
 * Breakpoints live in the probed process's private copy of a page only:
 * the file, read() of it, the page cache as another process maps it, and
 * shared mappings keep the original bytes, before, during and after; and
 * once the last probe of a page is gone the process's page is the file's
 * again.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_pc"

FIXTURE(pc) {
	struct ut_ctx c;
	char target[PATH_MAX];
	char lib[PATH_MAX];
};

FIXTURE_SETUP(pc)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target");
	ut_path(self->lib, sizeof(self->lib), "libuprobe_shlib.so");
}

FIXTURE_TEARDOWN(pc)
{
	ut_ctx_cleanup(&self->c);
}

/* Read @len bytes of process @pid's memory at @addr through /proc/PID/mem. */
static int proc_mem(int pid, unsigned long addr, void *buf, size_t len)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", pid);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, addr);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

/*
 * "Anonymous:" of the mapping of @path that holds file offset @off in
 * process @pid, in kB, or -1.
 */
static long anon_kb(int pid, const char *path, long off)
{
	char p[64], *all, *line, *save = NULL;
	long kb = -1;
	bool in = false;

	snprintf(p, sizeof(p), "/proc/%d/smaps", pid);
	all = ut_slurp(p, NULL);
	if (!all)
		return -1;
	for (line = strtok_r(all, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long s, e, o;
		char perm[8];
		int n = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &s, &e, perm, &o, &n) == 4 && n) {
			in = !strcmp(line + n, path) && perm[2] == 'x' &&
			     off >= (long)o && off < (long)(o + e - s);
			continue;
		}
		if (in && sscanf(line, "Anonymous: %ld kB", &kb) == 1)
			break;
	}
	free(all);
	return kb;
}

#define PROBED_FNS 5
static const char *const probed_fns[PROBED_FNS] = {
	"ut_step", "ut_nop", "ut_riprel", "ut_far", "ut_plain",
};

/* read() of the file at each probe gives the original bytes, always. */
TEST_F(pc, read_of_probed_file_sees_original_bytes)
{
	unsigned char orig[PROBED_FNS][16], now[16];
	struct ut_target *t;
	long off[PROBED_FNS];
	char r[256];
	int i, phase;

	for (i = 0; i < PROBED_FNS; i++) {
		UT_SYM(off[i], self->target, probed_fns[i]);
		ASSERT_EQ(0, ut_file_bytes(self->target, off[i], orig[i], 16));
		UT_PROBE(i, 'p', self->target, off[i], NULL, NULL);
		UT_ENABLE(i, true);
	}
	UT_START(t, "uprobe_target", NULL);
	for (phase = 0; phase < 2; phase++) {
		UT_CMD(t, r, "call ut_step 3 1 1");
		UT_CMD(t, r, "call ut_far 3 1 1");
		for (i = 0; i < PROBED_FNS; i++) {
			ASSERT_EQ(0, ut_file_bytes(self->target, off[i], now, 16));
			EXPECT_EQ(0, memcmp(orig[i], now, 16))
				TH_LOG("%s: read() saw 0x%02x..., the file has 0x%02x... (%s)",
				       probed_fns[i], now[0], orig[i][0],
				       phase ? "after disable" : "while enabled");
		}
		for (i = 0; i < PROBED_FNS; i++)
			UT_ENABLE(i, false);
	}
}

/* A checksum of the whole file is the same before, during and after. */
TEST_F(pc, checksum_of_probed_file_unchanged)
{
	struct ut_target *t;
	uint64_t before;
	long off;
	char r[256];
	int i;

	before = ut_file_hash(self->target);
	ASSERT_NE(0, before);
	for (i = 0; i < PROBED_FNS; i++) {
		UT_SYM(off, self->target, probed_fns[i]);
		UT_PROBE(i, 'p', self->target, off, NULL, NULL);
		UT_ENABLE(i, true);
	}
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_plain 10 1 1");
	EXPECT_EQ(before, ut_file_hash(self->target)) TH_LOG("while enabled");
	for (i = 0; i < PROBED_FNS; i++)
		UT_ENABLE(i, false);
	EXPECT_EQ(before, ut_file_hash(self->target)) TH_LOG("after disable");
	ut_ctx_remove_events(&self->c);
	EXPECT_EQ(before, ut_file_hash(self->target)) TH_LOG("after delete");
}

/* Another process's MAP_SHARED mapping of the file keeps the original bytes. */
TEST_F(pc, shared_mapping_in_other_process_sees_original_bytes)
{
	struct ut_target *t;
	unsigned char orig[16];
	long off, size;
	char r[256];
	void *map;
	int fd;

	UT_SYM(off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, orig, 16));
	fd = open(self->target, O_RDONLY);
	ASSERT_LE(0, fd);
	size = lseek(fd, 0, SEEK_END);
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, map);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "call ut_step 5 1 1");
	UT_CMD(t, r, "byte ut_step");
	EXPECT_STREQ("ok 0xcc", r) TH_LOG("the probed process's own view");
	EXPECT_EQ(0, memcmp(orig, (char *)map + off, 16))
		TH_LOG("shared mapping saw 0x%02x, the file has 0x%02x",
		       ((unsigned char *)map)[off], orig[0]);
	UT_ENABLE(0, false);
	EXPECT_EQ(0, memcmp(orig, (char *)map + off, 16)) TH_LOG("after disable");
	munmap(map, size);
}

/* A process's memory shows the breakpoint through /proc/PID/mem too. */
TEST_F(pc, probed_process_memory_shows_breakpoint_only)
{
	struct ut_target *t;
	unsigned char orig[64], mem[64];
	unsigned long addr;
	char r[256];
	long off;

	UT_SYM(off, self->target, "ut_step");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, orig, 64));
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr ut_step");
	addr = strtoul(r + 3, NULL, 0);
	ASSERT_EQ(0, proc_mem(t->pid, addr, mem, 64));
	EXPECT_EQ(0xcc, mem[0]);
	EXPECT_EQ(0, memcmp(orig + 1, mem + 1, 63)) TH_LOG("bytes after the breakpoint changed");
}

/*
 * After the last probe of a page is removed, the process's whole page is
 * byte for byte the file's page again.
 */
TEST_F(pc, page_in_process_equals_file_after_probes_removed)
{
	struct ut_target *t;
	static unsigned char file[4096], mem[4096];
	unsigned long addr;
	char r[256];
	long off, off2;
	int i;

	UT_SYM(off, self->target, "ut_step");
	UT_SYM(off2, self->target, "ut_nop");
	ASSERT_EQ(off / 4096, off2 / 4096);
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off2, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr ut_step");
	addr = strtoul(r + 3, NULL, 0);
	ASSERT_EQ(0, ut_file_bytes(self->target, off & ~4095L, file, 4096));
	for (i = 0; i < 20; i++) {
		UT_ENABLE(i & 1, true);
		UT_CMD(t, r, "call ut_step 2 1 1");
		UT_CMD(t, r, "call ut_nop 2 1");
		UT_ENABLE(i & 1, false);
	}
	ASSERT_EQ(0, proc_mem(t->pid, addr & ~4095UL, mem, 4096));
	EXPECT_EQ(0, memcmp(file, mem, 4096)) TH_LOG("the process's page differs from the file's");
	/* each round, one of the two probes was enabled for 2 calls */
	EXPECT_EQ(40, UT_HITS(0) + UT_HITS(1));
}

/* Removing one of two probes on a page leaves the other one working. */
TEST_F(pc, removing_one_probe_keeps_the_other_on_the_page)
{
	struct ut_target *t;
	char r[256], want[32];
	unsigned char orig;
	long off, off2;

	UT_SYM(off, self->target, "ut_step");
	UT_SYM(off2, self->target, "ut_nop");
	ASSERT_EQ(0, ut_file_bytes(self->target, off, &orig, 1));
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'p', self->target, off2, NULL, NULL);
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	UT_START(t, "uprobe_target", NULL);
	UT_ENABLE(0, false);
	UT_CMD(t, r, "byte ut_step");
	snprintf(want, sizeof(want), "ok 0x%02x", orig);
	EXPECT_STREQ(want, r);
	UT_CMD(t, r, "byte ut_nop");
	EXPECT_STREQ("ok 0xcc", r);
	UT_CMD(t, r, "call ut_nop 4 9");
	EXPECT_EQ(9, ut_okval(r));
	UT_CMD(t, r, "call ut_step 4 9 0");
	EXPECT_EQ(4, UT_HITS(1));
	EXPECT_EQ(0, UT_HITS(0));
}

/* The process gets its memory back: no private copy of the text remains. */
TEST_F(pc, private_text_copy_released_after_last_probe_removed)
{
	struct ut_target *t;
	char r[256];
	long off, kb;

	UT_SYM(off, self->target, "ut_step");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "ping");
	kb = anon_kb(t->pid, self->target, off);
	ASSERT_EQ(0, kb) TH_LOG("anonymous kB in the text mapping before any probe");
	UT_ENABLE(0, true);
	kb = anon_kb(t->pid, self->target, off);
	EXPECT_EQ(4, kb) TH_LOG("anonymous kB in the text mapping while probed");
	UT_ENABLE(0, false);
	kb = anon_kb(t->pid, self->target, off);
	EXPECT_EQ(0, kb) TH_LOG("anonymous kB in the text mapping after the probe went");
}

/* A shared executable mapping is never given a breakpoint. */
TEST_F(pc, shared_exec_mapping_never_gets_breakpoint)
{
	struct ut_target *t;
	char r[256], want[32];
	unsigned char orig;
	long off;

	UT_SYM(off, self->lib, "shlib_step");
	ASSERT_EQ(0, ut_file_bytes(self->lib, off, &orig, 1));
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "alias 0x%lx 1 shared", off);
	UT_PROBE(0, 'p', self->lib, off, NULL, NULL);
	UT_ENABLE(0, true);
	UT_CMD(t, r, "byte alias");
	snprintf(want, sizeof(want), "ok 0x%02x", orig);
	EXPECT_STREQ(want, r) TH_LOG("the shared mapping's byte at the probe");
	UT_CMD(t, r, "call alias 3 1 1");
	EXPECT_EQ(9, ut_okval(r));
	EXPECT_EQ(0, UT_HITS(0));
}

/* Probes added and removed many times: file and process text unchanged. */
TEST_F_TIMEOUT(pc, probes_coming_and_going_leave_file_and_text_unchanged, 120)
{
	struct ut_target *t;
	static unsigned char file[4096], mem[4096];
	unsigned long addr;
	uint64_t before;
	char r[256];
	long off;
	int i;

	UT_SYM(off, self->target, "ut_riprel");
	before = ut_file_hash(self->target);
	UT_START(t, "uprobe_target", NULL);
	UT_CMD(t, r, "addr ut_riprel");
	addr = strtoul(r + 3, NULL, 0);
	for (i = 0; i < 30; i++) {
		UT_PROBE(i % UT_MAX_EVENTS, 'p', self->target, off, NULL, NULL);
		UT_ENABLE(i % UT_MAX_EVENTS, true);
		UT_CMD(t, r, "call ut_riprel 2 1");
		EXPECT_EQ(0x1235, ut_okval(r));
		ut_ctx_remove_events(&self->c);
	}
	EXPECT_EQ(before, ut_file_hash(self->target));
	ASSERT_EQ(0, ut_file_bytes(self->target, off & ~4095L, file, 4096));
	ASSERT_EQ(0, proc_mem(t->pid, addr & ~4095UL, mem, 4096));
	EXPECT_EQ(0, memcmp(file, mem, 4096)) TH_LOG("the process's page differs from the file's");
}

UT_HARNESS_MAIN
