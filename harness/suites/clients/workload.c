// SPDX-License-Identifier: GPL-2.0
/*
 * The program the client tests attach to, by path or by pid: each command
 * makes a known number of calls, and answers with one line that says what
 * it did, so that a tool's counts can be checked against the program's.
 *
 *   scale N     lib_scale(i) of libclientlib.so, i = 0..N-1
 *   step N      the SDT probe client:step (no semaphore), arg i = 0..N-1
 *   armed N     client:armed N times: fired only while its semaphore is
 *               set (a tracer attached through ref_ctr_offset); the
 *               answer counts the calls that saw it set
 *   churn N S   N malloc(S), each freed at once
 *   leak N S    N malloc(S), kept to the end
 *
 * "workload CMD ARGS [CMD ARGS]..." runs the commands given and exits.
 * "workload" alone prints "ready PID", then runs one command per line of
 * its standard input until its end: a test attaches a tool to the pid,
 * then sends the commands it counts.  Standard I/O uses static buffers,
 * so the program's only allocations are the commands'.  Built with frame
 * pointers (prepare), so that a user stack walked from libc's malloc
 * reaches main.
 */
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lib_scale(int x);
int client_armed(long i);

static char inbuf[4096], outbuf[4096];
static void *volatile sink;

static int run(const char *cmd, long n, long size)
{
	long i, sum = 0, armed = 0;

	if (!strcmp(cmd, "scale")) {
		for (i = 0; i < n; i++)
			sum += lib_scale(i);
		printf("scale n=%ld sum=%ld\n", n, sum);
	} else if (!strcmp(cmd, "step")) {
		for (i = 0; i < n; i++)
			STAP_PROBE1(client, step, i);
		printf("step n=%ld\n", n);
	} else if (!strcmp(cmd, "armed")) {
		for (i = 0; i < n; i++)
			armed += client_armed(i);
		printf("armed n=%ld armed=%ld\n", n, armed);
	} else if (!strcmp(cmd, "churn")) {
		for (i = 0; i < n; i++) {
			sink = malloc(size);
			free(sink);
		}
		printf("churn n=%ld size=%ld\n", n, size);
	} else if (!strcmp(cmd, "leak")) {
		for (i = 0; i < n; i++) {
			sink = malloc(size);
			memset(sink, 1, size);
		}
		printf("leak n=%ld size=%ld\n", n, size);
	} else {
		printf("unknown command '%s'\n", cmd);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char line[256], cmd[32];
	long n, size;
	int i;

	setvbuf(stdin, inbuf, _IOLBF, sizeof(inbuf));
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
	if (argc > 1) {
		for (i = 1; i + 1 < argc; i += 2) {
			size = 0;
			if (!strcmp(argv[i], "churn") || !strcmp(argv[i], "leak")) {
				if (i + 2 >= argc)
					break;
				size = atol(argv[i + 2]);
			}
			if (run(argv[i], atol(argv[i + 1]), size))
				return 1;
			if (size)
				i++;
		}
		return 0;
	}
	printf("ready %d\n", getpid());
	while (fgets(line, sizeof(line), stdin)) {
		size = 0;
		if (sscanf(line, "%31s %ld %ld", cmd, &n, &size) < 2 ||
		    run(cmd, n, size))
			return 1;
	}
	return 0;
}
