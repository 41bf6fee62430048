// SPDX-License-Identifier: GPL-2.0
/*
 * workload's SDT probe with a semaphore, client:armed, alone in this file:
 * sys/sdt.h gives every probe of a file a semaphore or none, and LTTng
 * refuses a probe that has one, so client:step (workload.c) has none.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short client_armed_semaphore __attribute__((section(".probes")));

/* Fires client:armed when a tracer has set the semaphore; says whether. */
__attribute__((noinline)) int client_armed(long i)
{
	if (!client_armed_semaphore)
		return 0;
	STAP_PROBE1(client, armed, i);
	return 1;
}
