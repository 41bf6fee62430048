// SPDX-License-Identifier: GPL-2.0
/*
 * mm lifetimes against file events: a process that exits (and so frees
 * its breakpoint state) while a truncation of the probed file walks its
 * mappings.  __mmput() frees uprobes' state of an mm before exit_mmap()
 * unlinks the mm's VMAs from the file, so a hole punched meanwhile still
 * reaches them through i_mmap and calls uprobe_munmap() on them.
 *
 * The window is a few instructions wide; a kernel built with
 * CONFIG_UPROBES_RACE_DELAYS widens it (debugfs
 * uprobes/delay_munmap_us) so that every punch overlaps an exit.  Any
 * kernel report fails the run (the harness reads the console); the test
 * also fails when the kernel became tainted, when a program computed
 * wrong or died, or when a hit was lost.
 */
#define _GNU_SOURCE
#include <linux/falloc.h>
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define GRP "ust_life"
#define SECONDS 4

static long kernel_taint(void)
{
	return ut_sysfs_num("/proc/sys/kernel/tainted");
}

struct puncher {
	int fd;
	int stop;	/* read with READ_ONCE() semantics: see punch() */
	long punches;
};

static void *punch(void *arg)
{
	struct puncher *p = arg;

	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		if (fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      UT_PAGE, UT_PAGE))
			break;
		p->punches++;
	}
	return NULL;
}

FIXTURE(life) {
	struct ut_ctx c;
	char path[64];
	struct ut_knob knob;
};

FIXTURE_SETUP(life)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	self->knob.path[0] = '\0';
	snprintf(self->path, sizeof(self->path), "/tmp/ust_life_%d", getpid());
	ASSERT_EQ(0, ut_code_file(self->path));
}

FIXTURE_TEARDOWN(life)
{
	ut_knob_restore(&self->knob);
	ut_ctx_cleanup(&self->c);
	unlink(self->path);
}

/*
 * Processes that map the file, hit its probe and exit, for SECONDS, while
 * a thread punches a hole in the file's second page over and over.
 */
TEST_F(life, exit_racing_hole_punch_is_safe)
{
	struct puncher pu = { .fd = -1 };
	long taint = kernel_taint(), children = 0, bad = 0;
	struct timespec t0, t;
	pthread_t th;
	int st;

	if (!ut_knob_set(&self->knob, UT_DELAY_KNOB("delay_munmap_us"), "3000"))
		TH_LOG("no delay_munmap_us knob: the race window is not widened");
	UT_PROBE(0, 'p', self->path, UT_CODE_FN, NULL, NULL);
	UT_ENABLE(0, true);
	pu.fd = open(self->path, O_RDWR);
	ASSERT_LE(0, pu.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, punch, &pu));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pid_t pid = fork();

		if (pid == 0) {
			int cfd = open(self->path, O_RDONLY);
			char *m = mmap(NULL, UT_CODE_LEN, PROT_READ | PROT_EXEC,
				       MAP_PRIVATE, cfd, 0);

			if (m == MAP_FAILED)
				_exit(3);
			_exit(((int (*)(void))(m + UT_CODE_FN))() == 7 ? 0 : 4);
		}
		ASSERT_LT(0, pid);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		if (st)
			bad++;
		children++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < SECONDS);
	__atomic_store_n(&pu.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	close(pu.fd);
	TH_LOG("%ld processes, %ld hole punches", children, pu.punches);
	EXPECT_EQ(0, bad) TH_LOG("%ld programs failed", bad);
	EXPECT_LT(0, pu.punches);
	EXPECT_EQ(children, UT_HITS(0));
	EXPECT_EQ(taint, kernel_taint()) TH_LOG("the kernel became tainted");
}

UT_HARNESS_MAIN
