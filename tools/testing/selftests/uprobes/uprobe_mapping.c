// SPDX-License-Identifier: GPL-2.0
/*
 * A probe is invisible in every kind of mapping of its file: the program
 * that maps it writable keeps its own bytes, stores into a page made
 * writable while probed are never lost, a locked mapping gets the file's
 * page back, a debugger's writes near a probe stay, and a process the
 * probe was never installed in is never touched (no private copy, even
 * where one would stay: a locked mapping).  The file never changes.
 *
 * The programs are forked by the test and map a code file it writes to
 * /tmp (uprobe_lib.h: ut_code_file(), ut_prog_*()).
 */
#define _GNU_SOURCE
#include <sys/mount.h>
#include <sys/uio.h>
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_map"
#define RX (PROT_READ | PROT_EXEC)
#define RWX (PROT_READ | PROT_WRITE | PROT_EXEC)

FIXTURE(map) {
	struct ut_ctx c;
	char path[64];
	uint64_t hash;
	struct ut_prog p[2];
	struct ut_knob knob;
	char thp_dir[64];	/* a tmpfs huge=always mount, or "" */
};

FIXTURE_SETUP(map)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	self->knob.path[0] = '\0';
	self->thp_dir[0] = '\0';
	snprintf(self->path, sizeof(self->path), "/tmp/ust_map_%d", getpid());
	ASSERT_EQ(0, ut_code_file(self->path)) TH_LOG("cannot write %s", self->path);
	self->hash = ut_file_hash(self->path);
}

FIXTURE_TEARDOWN(map)
{
	ut_knob_restore(&self->knob);
	ut_prog_kill(&self->p[0]);
	ut_prog_kill(&self->p[1]);
	ut_ctx_cleanup(&self->c);
	if (self->thp_dir[0]) {
		umount2(self->thp_dir, MNT_DETACH);
		rmdir(self->thp_dir);
	}
	EXPECT_EQ(self->hash, ut_file_hash(self->path)) TH_LOG("the probed file changed");
	unlink(self->path);
}

#define PROG(i, prot, lock) do {						\
	int __e = ut_prog_start(&self->p[i], self->path, (prot), (lock));	\
	ASSERT_EQ(0, __e) TH_LOG("program %d did not start: %d", (i), __e);	\
} while (0)

#define CMD(i, cmd, arg, val) ut_prog_cmd(&self->p[i], (cmd), (arg), (val))
#define ANON(i) ut_smaps_kb(self->p[i].pid, self->p[i].ctl->base, "Anonymous")
#define PMD_KB(i) ut_smaps_kb(self->p[i].pid, self->p[i].ctl->base, "ShmemPmdMapped")

/* Probe program 0's byte @v at UT_CODE_FN: it reads @v throughout. */
#define EXPECT_OWN_BYTE_KEPT_BY_PROBE(v) do {					\
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);			\
	UT_ENABLE(0, true);							\
	EXPECT_EQ((v), CMD(0, UT_PROG_READ, UT_CODE_FN, 0))			\
		TH_LOG("the program's byte under the enabled probe");		\
	UT_ENABLE(0, false);							\
	EXPECT_EQ((v), CMD(0, UT_PROG_READ, UT_CODE_FN, 0))			\
		TH_LOG("the program's byte after the probe was disabled");	\
} while (0)

/*
 * Another's byte @v written next to program 0's probe stays through the
 * probe's removal, the probed instruction is the original one again, and
 * the probe counted @hits.
 */
#define EXPECT_WRITE_KEPT_THROUGH_REMOVAL(v, hits) do {				\
	UT_ENABLE(0, false);							\
	EXPECT_EQ((v), CMD(0, UT_PROG_READ, UT_CODE_DATA, 0))			\
		TH_LOG("the written byte after the removal");			\
	EXPECT_EQ(0xb8, CMD(0, UT_PROG_READ, UT_CODE_FN, 0))			\
		TH_LOG("the probed byte after the removal");			\
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));				\
	EXPECT_EQ((hits), UT_HITS(0));						\
} while (0)

/*
 * A probe on the program's own int3 is refused, and its removal must not
 * take the int3 for a breakpoint of ours: with another probe's copy of the
 * page in the program, the "original" byte the refused probe never read
 * (0x00) was written over it (found by uprobe_insnfuzz).  Both the perf
 * PMU and tracefs are tried.
 */
TEST_F(map, refused_probe_leaves_the_program_s_own_int3)
{
	static const unsigned char int3 = 0xcc;
	struct ut_pmu pmu;
	int fd, fd2, fd3;

	ASSERT_EQ(1, ut_file_write_at(self->path, UT_CODE_FN + 0x100, &int3, 1));
	self->hash = ut_file_hash(self->path);
	PROG(0, RX, false);
	ut_pmu_init(&pmu);
	ASSERT_LE(0, pmu.type) TH_LOG("no uprobe PMU");
	fd = ut_pmu_open(&pmu, self->path, UT_CODE_FN, false, 0, false,
			 self->p[0].pid, -1);
	ASSERT_LE(0, fd) TH_LOG("perf uprobe on the function: %s", strerror(-fd));
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
	fd2 = ut_pmu_open(&pmu, self->path, UT_CODE_FN + 0x100, false, 0, false,
			  self->p[0].pid, -1);
	EXPECT_GT(0, fd2) TH_LOG("a perf uprobe on an int3 was accepted");
	EXPECT_EQ(0xcc, CMD(0, UT_PROG_READ, UT_CODE_FN + 0x100, 0))
		TH_LOG("the program's int3 after a refused perf probe on it");
	UT_PROBE(0, 'p', self->path, UT_CODE_FN + 0x100, NULL, NULL);
	EXPECT_NE(0, ut_ctx_enable(&self->c, 0, true))
		TH_LOG("a tracefs probe on an int3 was enabled");
	EXPECT_EQ(0xcc, CMD(0, UT_PROG_READ, UT_CODE_FN + 0x100, 0))
		TH_LOG("the program's int3 after a refused tracefs probe on it");
	fd3 = ut_pmu_open(&pmu, self->path, UT_CODE_FN + 0x100, true, 0, false,
			  self->p[0].pid, -1);
	EXPECT_GT(0, fd3) TH_LOG("a perf uretprobe on an int3 was accepted");
	EXPECT_EQ(0xcc, CMD(0, UT_PROG_READ, UT_CODE_FN + 0x100, 0))
		TH_LOG("the program's int3 after a refused return probe on it");
	close(fd);
	EXPECT_EQ(0xcc, CMD(0, UT_PROG_READ, UT_CODE_FN + 0x100, 0))
		TH_LOG("the program's int3 once the other probe is gone");
	if (fd2 >= 0)
		close(fd2);
	if (fd3 >= 0)
		close(fd3);
}

/*
 * A probe whose verdict had to wait (its file claims another ELF class, so
 * the enable could not judge it) and that the install then refused, on the
 * program's own int3: the program, which has another probe, must get the
 * SIGTRAP it gets without probes, not loop on a refused probe's handlers
 * (a loop blocks the call until the timeout: a generous one, for KASAN
 * kernels on a loaded machine).
 */
TEST_F_TIMEOUT(map, refused_probe_found_at_a_hit_leaves_the_program_its_sigtrap, 120)
{
	static const unsigned char elf32[] = { 0x7f, 'E', 'L', 'F', 1 };
	static const unsigned char int3 = 0xcc;
	int i;

	ASSERT_EQ(5, ut_file_write_at(self->path, 0, elf32, sizeof(elf32)));
	ASSERT_EQ(1, ut_file_write_at(self->path, UT_CODE_FN, &int3, 1));
	self->hash = ut_file_hash(self->path);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	/* No verdict yet, or refused at once: either way never installed. */
	ut_ctx_enable(&self->c, 0, true);
	PROG(0, RX, false);
	UT_PROBE(1, 'p', self->path, UT_CODE_FN + 0x200, NULL, NULL);
	UT_ENABLE(1, true);
	EXPECT_EQ(LONG_MIN, CMD(0, UT_PROG_CALL, 1, 0))
		TH_LOG("the program ran past its own int3");
	for (i = 0; i < 100 && !ut_prog_ended(&self->p[0]); i++)
		usleep(50000);
	ASSERT_LT(i, 100) TH_LOG("the program neither died nor answered: a trap loop");
	EXPECT_TRUE(WIFSIGNALED(self->p[0].status) &&
		    WTERMSIG(self->p[0].status) == SIGTRAP)
		TH_LOG("the program ended with status %#x, not SIGTRAP",
		       self->p[0].status);
}

/*
 * A program's own byte at the probed offset of a writable private mapping
 * (data, or code it patched) is what it reads while the probe is enabled
 * and after: no breakpoint goes where the program can store.
 */
TEST_F(map, writable_private_mapping_keeps_the_program_s_bytes)
{
	PROG(0, RWX, false);
	ASSERT_EQ(0, CMD(0, UT_PROG_WRITE, UT_CODE_FN, 0x5a));
	EXPECT_OWN_BYTE_KEPT_BY_PROBE(0x5a);
}

/*
 * The same byte of the program's own, stored while the mapping was
 * writable, then the mapping made executable only (a JIT's W^X): the
 * probe, enabled now, finds not the instruction it analysed there and
 * leaves the byte alone.
 */
TEST_F(map, program_s_byte_kept_after_mprotect_to_executable)
{
	PROG(0, RWX, false);
	ASSERT_EQ(0, CMD(0, UT_PROG_WRITE, UT_CODE_FN, 0x5a));
	ASSERT_EQ(0, CMD(0, UT_PROG_PROTECT, RX, 0));
	EXPECT_OWN_BYTE_KEPT_BY_PROBE(0x5a);
}

/*
 * A mapping made writable while its page holds a breakpoint: a thread
 * stores into the page while the probe is removed.  The page looks like
 * the file's until that store, and a copy unmapped after the compare
 * takes the store with it: the thread then reads the file's byte again.
 * Only a debug kernel widens the window between the compare and the
 * unmap enough (uprobes/delay_drop_us) for the store to land in it.
 */
static void *disable_event(void *arg)
{
	struct ut_ctx *c = arg;

	ut_ctx_enable(c, 0, false);
	return NULL;
}

TEST_F(map, stores_into_a_page_made_writable_while_probed_are_kept)
{
	long lost, round;
	pthread_t th;

	/* Without the window the race is never met: nothing to show. */
	if (!ut_knob_set(&self->knob, UT_DELAY_KNOB("delay_drop_us"), "20000"))
		SKIP(return, "no uprobes/delay_drop_us (a debug kernel's knob)");
	PROG(0, RX, false);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	for (round = 0; round < 5; round++) {
		ASSERT_EQ(0, CMD(0, UT_PROG_PROTECT, RX, 0));
		UT_ENABLE(0, true);
		ASSERT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
		ASSERT_EQ(0, CMD(0, UT_PROG_PROTECT, RWX, 0));
		ASSERT_EQ(0, pthread_create(&th, NULL, disable_event, &self->c));
		/* The store 5 ms into the disable: in a 20 ms window, if any. */
		ASSERT_EQ(0, CMD(0, UT_PROG_STORE_START, UT_CODE_DATA, 5000));
		pthread_join(th, NULL);
		usleep(30000);
		lost = CMD(0, UT_PROG_STORE_STOP, 0, 0);
		ASSERT_EQ(0, lost) TH_LOG("round %ld: the store read back lost %ld of %ld times",
					  round, lost, self->p[0].ctl->stores);
		EXPECT_EQ(0xb8, CMD(0, UT_PROG_READ, UT_CODE_FN, 0))
			TH_LOG("round %ld: the probed byte after removal", round);
	}
	EXPECT_EQ(5, UT_HITS(0));
}

/*
 * A probe enabled for one process only (a per-task perf event), then
 * closed: a bystander that maps the same file locked never had the
 * breakpoint, and gets no private copy of the page from its removal.
 */
TEST_F(map, bystander_locked_mapping_gains_no_private_page)
{
	struct ut_pmu pmu;
	long long count = -1;
	int fd;

	ut_pmu_init(&pmu);
	if (pmu.type < 0)
		SKIP(return, "no uprobe PMU");
	PROG(0, RX, false);
	PROG(1, RX, true);
	ASSERT_EQ(0, ANON(1)) TH_LOG("the bystander's locked mapping at start");
	fd = ut_pmu_open(&pmu, self->path, UT_CODE_FN, false, 0, false,
			 self->p[0].pid, -1);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(-fd));
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 3, 0));
	EXPECT_EQ(7, CMD(1, UT_PROG_CALL, 3, 0));
	EXPECT_EQ(sizeof(count), read(fd, &count, sizeof(count)));
	EXPECT_EQ(3, count) TH_LOG("hits of the probed process only");
	EXPECT_EQ(0, ANON(1)) TH_LOG("the bystander while the probe is in");
	close(fd);
	EXPECT_EQ(0, ANON(1)) TH_LOG("the bystander after the probe was removed");
	EXPECT_EQ(0, ANON(0)) TH_LOG("the probed process after the removal");
}

/*
 * A locked mapping that had the breakpoint: after the removal it maps the
 * file's page again, locked, as it did before the probe.
 */
TEST_F(map, locked_mapping_gets_the_file_s_page_back)
{
	PROG(0, RX, true);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 2, 0));
	EXPECT_EQ(2, UT_HITS(0));
	UT_ENABLE(0, false);
	EXPECT_EQ(0, ANON(0)) TH_LOG("a private copy left after the removal");
	EXPECT_EQ(UT_CODE_LEN / 1024,
		  ut_smaps_kb(self->p[0].pid, self->p[0].ctl->base, "Locked"))
		TH_LOG("the mapping is not all locked after the removal");
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
}

/*
 * A debugger's write through /proc/PID/mem into the probed page, next to
 * the breakpoint: the program reads it while the probe is in and after it
 * is removed (the page, no longer the file's, stays the program's), and
 * its instruction is the original one again.
 */
TEST_F(map, proc_mem_write_near_the_probe_is_kept)
{
	unsigned char v = 0x77;
	char mem[64];
	int fd;

	PROG(0, RX, false);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
	snprintf(mem, sizeof(mem), "/proc/%d/mem", self->p[0].pid);
	fd = open(mem, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, pwrite(fd, &v, 1, self->p[0].ctl->base + UT_CODE_DATA));
	close(fd);
	EXPECT_EQ(0x77, CMD(0, UT_PROG_READ, UT_CODE_DATA, 0));
	EXPECT_WRITE_KEPT_THROUGH_REMOVAL(0x77, 1);
}

/*
 * Another process writes next to the probe with process_vm_writev(),
 * which cannot write a read-only mapping: the program made its page
 * writable first (a JIT patched through a helper), and made it
 * executable again.  The write stays through the removal, and the probed
 * byte is the original one again.
 */
TEST_F(map, process_vm_writev_near_the_probe_is_kept)
{
	unsigned char v = 0x66;
	struct iovec l = { &v, 1 }, r = { NULL, 1 };

	PROG(0, RX, false);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
	r.iov_base = (void *)(self->p[0].ctl->base + UT_CODE_DATA);
	ASSERT_EQ(0, CMD(0, UT_PROG_PROTECT, RWX, 0));
	ASSERT_EQ(1, process_vm_writev(self->p[0].pid, &l, 1, &r, 1, 0))
		TH_LOG("process_vm_writev: %s", strerror(errno));
	ASSERT_EQ(0, CMD(0, UT_PROG_PROTECT, RX, 0));
	EXPECT_EQ(0x66, CMD(0, UT_PROG_READ, UT_CODE_DATA, 0));
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
	EXPECT_WRITE_KEPT_THROUGH_REMOVAL(0x66, 2);
}

/*
 * A file THP (tmpfs huge=always) that two processes map whole, by PMD.
 * A per-task perf event probes one of them: it gets a private copy of
 * the one small page it needs, the other keeps its huge mapping and its
 * page is never split.  After the removal the probed process runs the
 * original instruction, a process that maps the file anew maps it huge
 * (the page cache's huge page is whole), and the file's bytes are
 * unchanged.
 */
TEST_F_TIMEOUT(map, file_thp_probed_in_one_process_stays_huge_in_the_other,
	       120)
{
	char path[96];
	struct ut_pmu pmu;
	long long count = -1;
	uint64_t hash;
	long huge_kb;
	int fd;

	ut_pmu_init(&pmu);
	if (pmu.type < 0)
		SKIP(return, "no uprobe PMU");
	snprintf(self->thp_dir, sizeof(self->thp_dir), "/tmp/ust_thp_%d", getpid());
	ASSERT_EQ(0, mkdir(self->thp_dir, 0700));
	if (mount("tmpfs", self->thp_dir, "tmpfs", 0, "huge=always,size=8m")) {
		int e = errno;

		rmdir(self->thp_dir);
		self->thp_dir[0] = '\0';
		SKIP(return, "tmpfs huge=always: %s (a kernel without file THP)",
		     strerror(e));
	}
	snprintf(path, sizeof(path), "%s/code", self->thp_dir);
	huge_kb = ut_meminfo_kb("\nShmemHugePages:");
	ASSERT_EQ(0, ut_huge_code_file(path));
	/*
	 * No free huge page came for it: make one.  Only then: compacting
	 * the whole guest is slow under emulation, and this case timed out
	 * after it now and then, on stock 6.1 too.
	 */
	if (ut_meminfo_kb("\nShmemHugePages:") < huge_kb + (long)(UT_HUGE / 1024)) {
		ASSERT_EQ(0, unlink(path));
		ut_compact_memory();
		ASSERT_EQ(0, ut_huge_code_file(path));
	}
	hash = ut_file_hash(path);
	ASSERT_EQ(0, ut_prog_start_len(&self->p[0], path, RX, false, UT_HUGE));
	ASSERT_EQ(0, ut_prog_start_len(&self->p[1], path, RX, false, UT_HUGE));
	EXPECT_EQ(0xb8, CMD(0, UT_PROG_READ, UT_CODE_FN, 0));
	EXPECT_EQ(0xb8, CMD(1, UT_PROG_READ, UT_CODE_FN, 0));
	ASSERT_EQ(UT_HUGE / 1024, PMD_KB(1))
		TH_LOG("the file is not mapped by one PMD: nothing to test");

	fd = ut_pmu_open(&pmu, path, UT_CODE_FN, false, 0, false,
			 self->p[0].pid, -1);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(-fd));
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 3, 0));
	EXPECT_EQ(7, CMD(1, UT_PROG_CALL, 3, 0));
	EXPECT_EQ(sizeof(count), read(fd, &count, sizeof(count)));
	EXPECT_EQ(3, count) TH_LOG("hits of the probed process only");
	EXPECT_EQ(UT_PAGE / 1024, ANON(0))
		TH_LOG("the probed process's private copies, in kB");
	EXPECT_EQ(UT_HUGE / 1024, PMD_KB(1))
		TH_LOG("the other process's huge mapping while the probe is in");
	EXPECT_EQ(0, ANON(1));
	close(fd);

	EXPECT_EQ(UT_HUGE / 1024, PMD_KB(1))
		TH_LOG("the other process's huge mapping after the removal");
	EXPECT_EQ(0, ANON(0)) TH_LOG("a private copy left after the removal");
	EXPECT_EQ(0xb8, CMD(0, UT_PROG_READ, UT_CODE_FN, 0));
	EXPECT_EQ(7, CMD(0, UT_PROG_CALL, 1, 0));
	ut_prog_kill(&self->p[1]);
	ASSERT_EQ(0, ut_prog_start_len(&self->p[1], path, RX, false, UT_HUGE));
	EXPECT_EQ(0xb8, CMD(1, UT_PROG_READ, UT_CODE_FN, 0));
	EXPECT_EQ(UT_HUGE / 1024, PMD_KB(1))
		TH_LOG("a new mapping of the file after the removal");
	EXPECT_EQ(hash, ut_file_hash(path)) TH_LOG("the probed file changed");
}

/*
 * The SDT semaphore cases: the test enables a probe on the function whose
 * semaphore is at @semoff and forks a program, which maps the file its
 * own way and reports, through pipes, its semaphore and the function's
 * result; the test disables the probe and the program reports the
 * semaphore again.
 */
struct sema_pipes {
	int up[2], down[2];
};

static pid_t sema_fork(struct __test_metadata *_metadata,
		       FIXTURE_DATA(map) *self, long semoff,
		       struct sema_pipes *sp)
{
	char ref[32];
	pid_t pid;

	snprintf(ref, sizeof(ref), "(0x%lx)", semoff);
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, ref, NULL);
	UT_ENABLE(0, true);
	if (pipe(sp->up) || pipe(sp->down))
		return -1;
	pid = fork();
	if (pid > 0) {
		close(sp->up[1]);
		close(sp->down[0]);
	}
	return pid;
}

/* In the program: report, wait to be told, report the semaphore again. */
static void sema_report(struct sema_pipes *sp, unsigned short *sem,
			int (*fn)(void))
{
	long got[2] = { *sem, fn ? fn() : -1 };
	char go;

	if (write(sp->up[1], got, sizeof(got)) != sizeof(got) ||
	    read(sp->down[0], &go, 1) != 1)
		_exit(10);
	got[0] = *sem;
	_exit(write(sp->up[1], got, sizeof(got)) == sizeof(got) ? 0 : 11);
}

/* In the test: the semaphore @enabled while enabled, 0 after; @result. */
static void sema_expect(struct __test_metadata *_metadata,
			FIXTURE_DATA(map) *self, struct sema_pipes *sp,
			pid_t pid, long enabled, long result)
{
	long got[2] = { -1, -1 };
	char go = 0;
	int st;

	ASSERT_EQ(sizeof(got), read(sp->up[0], got, sizeof(got)))
		TH_LOG("the program did not report");
	EXPECT_EQ(enabled, got[0]) TH_LOG("the semaphore while the probe is enabled");
	EXPECT_EQ(result, got[1]) TH_LOG("the function's result");
	UT_ENABLE(0, false);
	ASSERT_EQ(1, write(sp->down[1], &go, 1));
	ASSERT_EQ(sizeof(got), read(sp->up[0], got, sizeof(got)));
	EXPECT_EQ(0, got[0]) TH_LOG("the semaphore after the probe was disabled");
	close(sp->up[0]);
	close(sp->down[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, st) TH_LOG("the program's exit status %#x", st);
}

/*
 * An SDT semaphore in the data page of a file that a process maps as
 * ld.so maps a library: the whole file with the code's protection, then
 * the data page over the tail, MAP_FIXED.  The split of the code mapping
 * unmaps and remakes the probe's breakpoint there before the semaphore
 * is mapped; the semaphore must still be counted when it is.
 */
TEST_F(map, sdt_semaphore_counted_in_a_file_mapped_as_ld_so_does)
{
	struct sema_pipes sp;
	pid_t pid = sema_fork(_metadata, self, UT_PAGE + 0x10, &sp);

	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(self->path, O_RDONLY);
		unsigned char *m, *d;

		m = mmap(NULL, UT_CODE_LEN, RX, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			_exit(3);
		d = mmap(m + UT_PAGE, UT_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_FIXED, fd, UT_PAGE);
		if (d == MAP_FAILED)
			_exit(4);
		sema_report(&sp, (unsigned short *)(d + 0x10),
			    (int (*)(void))(m + UT_CODE_FN));
	}
	sema_expect(_metadata, self, &sp, pid, 1, 7);
	EXPECT_EQ(1, UT_HITS(0));
}

/*
 * The semaphore's mapping made read-only while the probe's code mapping
 * is split, then writable again and split itself: the split of the code
 * must not take the read-only semaphore for an unmapped one whose count
 * is still to come, or the split of the data counts it a second time and
 * the semaphore never goes back to 0 (found in review).
 */
TEST_F(map, sdt_semaphore_counted_once_through_splits_of_both_mappings)
{
	static const unsigned char zero[2 * UT_PAGE];
	struct sema_pipes sp;
	pid_t pid;

	/* Code pages 0-1 (the function in page 0), data pages 2-3. */
	ASSERT_EQ(sizeof(zero), ut_file_write_at(self->path, UT_CODE_LEN, zero,
						 sizeof(zero)));
	self->hash = ut_file_hash(self->path);
	pid = sema_fork(_metadata, self, 2 * UT_PAGE + 0x10, &sp);
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(self->path, O_RDONLY);
		unsigned char *m, *d;

		m = mmap(NULL, 2 * UT_PAGE, RX, MAP_PRIVATE, fd, 0);
		d = mmap(NULL, 2 * UT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			 fd, 2 * UT_PAGE);
		if (m == MAP_FAILED || d == MAP_FAILED)
			_exit(3);
		if (mprotect(d, 2 * UT_PAGE, PROT_READ) ||
		    mprotect(m + UT_PAGE, UT_PAGE, PROT_READ) ||
		    mprotect(d, 2 * UT_PAGE, PROT_READ | PROT_WRITE) ||
		    mprotect(d + UT_PAGE, UT_PAGE, PROT_READ))
			_exit(4);
		sema_report(&sp, (unsigned short *)(d + 0x10),
			    (int (*)(void))(m + UT_CODE_FN));
	}
	sema_expect(_metadata, self, &sp, pid, 1, 7);
	EXPECT_EQ(1, UT_HITS(0));
}

/*
 * A child forked without the probed code (MADV_DONTFORK) while the
 * breakpoint's semaphore count waited for the data mapping: the child has
 * no breakpoint, so mapping the data must not count the semaphore, which
 * then nothing would ever take back (found in review).
 */
TEST_F(map, sdt_semaphore_not_counted_in_a_child_without_the_code)
{
	struct sema_pipes sp;
	pid_t pid = sema_fork(_metadata, self, UT_PAGE + 0x10, &sp);

	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(self->path, O_RDONLY), st;
		unsigned char *m, *d;
		pid_t c;

		m = mmap(NULL, UT_PAGE, RX, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED || madvise(m, UT_PAGE, MADV_DONTFORK))
			_exit(3);
		c = fork();
		if (c) {
			waitpid(c, &st, 0);
			_exit(c < 0 ? 4 : WEXITSTATUS(st));
		}
		d = mmap(NULL, UT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
			 UT_PAGE);
		if (d == MAP_FAILED)
			_exit(5);
		sema_report(&sp, (unsigned short *)(d + 0x10), NULL);
	}
	sema_expect(_metadata, self, &sp, pid, 0, -1);
}

UT_HARNESS_MAIN
