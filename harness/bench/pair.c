// SPDX-License-Identifier: GPL-2.0
/*
 * pair: two threads, one on each of CPUs 0 and 1, each calling a function
 * of a file it maps N times; the guest side of the benchmark's shared part
 * (harness/bench/shared).
 *
 *   pair FILE0 OFF0 FILE1 OFF1 N
 *
 * Thread i maps FILEi (read and execute, private) and calls the code at
 * file offset OFFi: a position-independent leaf of harness/bench/hit.c
 * (s_nop, s_retprobe), so a probe on FILEi:OFFi fires once per call.  The
 * same file and offset twice is one probe hit by two threads; two copies
 * of hit are two probes in two files.  A file named twice is mapped once.
 *
 * Each thread calls its function once first, outside the window: a
 * thread's (and a process's) first hit sets up state that later hits only
 * use (so a probe fires 2 x N + 2 times in all).
 * Both threads are pinned and waiting before main() calls sync(2), which
 * opens harness/prof/shared.c's window; it calls sync(2) again once both
 * have finished their loops (a barrier, not their exit), so the window
 * holds the two loops and little else.  Prints "pair CALLS NS" (wall time of the window).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct thr {
	int cpu;
	long n;
	void (*fn)(void);
};

static pthread_barrier_t ready, go, done;

static void *loop(void *arg)
{
	struct thr *t = arg;
	void (*volatile f)(void) = t->fn;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("pair: sched_setaffinity");
		exit(1);
	}
	f();	/* the first hit of a thread sets up its state: not timed */
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&go);
	for (long i = 0; i < t->n; i++)
		f();
	pthread_barrier_wait(&done);
	return NULL;
}

static char *map_file(const char *path)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(1);
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("pair: mmap");
		exit(1);
	}
	close(fd);
	return p;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct thr t[2];
	pthread_t tid[2];
	char *base[2];
	long long t0;
	long n;

	if (argc != 6) {
		fprintf(stderr, "usage: pair FILE0 OFF0 FILE1 OFF1 N\n");
		return 2;
	}
	n = atol(argv[5]);
	base[0] = map_file(argv[1]);
	base[1] = strcmp(argv[1], argv[3]) ? map_file(argv[3]) : base[0];
	pthread_barrier_init(&ready, NULL, 3);
	pthread_barrier_init(&go, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (int i = 0; i < 2; i++) {
		t[i].cpu = i;
		t[i].n = n;
		t[i].fn = (void (*)(void))(base[i] +
					   strtoul(argv[2 + 2 * i], NULL, 0));
		pthread_create(&tid[i], NULL, loop, &t[i]);
	}
	pthread_barrier_wait(&ready);
	sync();
	t0 = now_ns();
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	t0 = now_ns() - t0;
	sync();
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	printf("pair %ld %lld\n", 2 * n, t0);
	return 0;
}
