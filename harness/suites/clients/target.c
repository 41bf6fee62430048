// SPDX-License-Identifier: GPL-2.0
/*
 * The program the client tests probe: a known number of calls to known
 * functions, a string argument, and an SDT probe guarded by a semaphore.
 *
 *   target N: calls target_add(i, 2 * i) and target_str() N times, fires
 *   the demo:tick SDT probe N times, and prints how many of those calls
 *   saw the probe's semaphore set (a tracer attached through ref_ctr).
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>

unsigned short demo_tick_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) int target_add(int a, int b)
{
	asm volatile("" ::: "memory");
	return a + b;
}

__attribute__((noinline)) int target_str(const char *s)
{
	asm volatile("" ::: "memory");
	return s[0];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	long sum = 0, armed = 0;

	/* One libc call with a known string argument, for the tracers. */
	if (getenv("UPROBE_TARGET_QUIET"))
		return 0;

	for (long i = 0; i < n; i++) {
		sum += target_add(i, 2 * i);
		sum += target_str("hello-uprobe");
		if (demo_tick_semaphore) {
			armed++;
			STAP_PROBE1(demo, tick, i);
		}
	}
	printf("calls=%ld sum=%ld semaphore_armed=%ld\n", n, sum, armed);
	return 0;
}
