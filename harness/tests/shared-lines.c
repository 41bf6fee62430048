// SPDX-License-Identifier: GPL-2.0
/*
 * shared-lines: the guest side of harness/tests/shared-lines.sh.  Two
 * threads, pinned to CPUs 0 and 1, each make N writes between two sync(2)
 * calls (one window of harness/prof/shared.c), twice:
 *   round 0: both write the same 64-byte line (two words of it);
 *   round 1: each writes its own line (two lines 4 KiB apart).
 * Prints "line ROUND PHYS" for each line written (physical addresses from
 * /proc/self/pagemap: run as root) and "pc ROUND THREAD VADDR" for the
 * writing instruction of each thread.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 10000

static char buf[3 * 4096] __attribute__((aligned(4096)));
static volatile long *target[2];
static pthread_barrier_t ready, done;

/* The writing instruction, at a known address: one store to (%rdi). */
void store(volatile long *p, long v);
asm(".text\n.globl store\n.type store, @function\n"
    "store: mov %rsi, (%rdi)\n.globl store_end\nstore_end: ret\n"
    ".size store, .-store\n");

static uint64_t phys(const volatile void *p)
{
	uint64_t e = 0, va = (uintptr_t)p;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &e, 8, va / 4096 * 8) != 8 || !(e >> 63)) {
		fprintf(stderr, "shared-lines: no physical address (root?)\n");
		exit(1);
	}
	close(fd);
	return (e & ((1ull << 55) - 1)) * 4096 + va % 4096;
}

static void *thread_fn(void *arg)
{
	long i, id = (long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(id, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		exit(1);
	for (int round = 0; round < 2; round++) {
		pthread_barrier_wait(&ready);
		for (i = 0; i < N; i++)
			store(target[id], i);
		pthread_barrier_wait(&done);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	long i;

	for (i = 0; i < (long)sizeof(buf); i += 4096)
		buf[i] = 1;	/* fault the pages in before any window */
	pthread_barrier_init(&ready, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_fn, (void *)i);
	for (int round = 0; round < 2; round++) {
		target[0] = (volatile long *)(buf + 4096);
		target[1] = round ? (volatile long *)(buf + 2 * 4096) :
				    target[0] + 1;
		for (i = 0; i < 2; i++)
			printf("line %d %llx\n", round,
			       (unsigned long long)(phys(target[i]) & ~63ull));
		printf("pc %d %p\n", round, (void *)store);
		sync();
		pthread_barrier_wait(&ready);
		pthread_barrier_wait(&done);
		sync();
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
