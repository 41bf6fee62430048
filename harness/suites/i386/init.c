// SPDX-License-Identifier: GPL-2.0
/*
 * PID 1 of the i386 guest (harness/check-i386): a 32-bit static
 * program that probes itself through tracefs and checks what a user of
 * 6.1 would see, on our kernel and on stock 6.1 alike:
 *  - an entry probe fetching both stack arguments, exact values;
 *  - a return probe fetching the return value, exact values;
 *  - an SDT-style probe with a semaphore: the kernel counts it up while
 *    the probe is enabled and down after, and the guarded call fires.
 * It prints "SMOKE PASS" or "SMOKE FAIL" and reboots, which ends the
 * guest (QEMU runs with -no-reboot).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define T "/sys/kernel/tracing"
#define CALLS 10
#define SDT_CALLS 5

static int checks, fails;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok)
		return;
	fails++;
	printf("SMOKE FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

__attribute__((noinline, noclone, used)) int smoke_add(int a, int b)
{
	asm volatile("" ::: "memory");
	return a + b;
}

__attribute__((noinline, noclone, used)) int smoke_sdt(int v)
{
	asm volatile("" ::: "memory");
	return v;
}

/* In the file's data, so that the kernel finds it by file offset. */
volatile unsigned short smoke_sema __attribute__((section(".probes")));

/* The file offset of @addr in /init, from /proc/self/maps; 0 if none. */
static unsigned long file_offset(const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi, pgoff;
	char line[256], path[128];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long off = 0;

	while (f && fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %127s", &lo, &hi,
			   &pgoff, path) < 3)
			continue;
		if (!strcmp(path, "/init") && a >= lo && a < hi) {
			off = a - lo + pgoff;
			break;
		}
	}
	if (f)
		fclose(f);
	return off;
}

static int write_file(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

/* Count trace lines of @event; each one's fields checked by @ok. */
static int trace_lines(const char *event, int (*ok)(const char *, int))
{
	char line[512], tag[64];
	FILE *f = fopen(T "/trace", "r");
	int n = 0;

	snprintf(tag, sizeof(tag), " %s: (", event);
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, tag);

		if (!p)
			continue;
		check(ok(p + strlen(tag), n), "%s line %d: %s", event, n, line);
		n++;
	}
	if (f)
		fclose(f);
	return n;
}

static int entry_ok(const char *s, int i)
{
	int a, b;
	const char *p = strstr(s, " a=");

	return p && sscanf(p, " a=%d b=%d", &a, &b) == 2 && a == i && b == 2 * i;
}

/* "(0xCALLER <- 0xFUNC) v=...": the return from smoke_add(). */
static int ret_ok(const char *s, int i)
{
	const char *p = strstr(s, " <- 0x");
	const char *q = strstr(s, " v=");
	unsigned long fn;
	int v;

	return p && q && sscanf(p, " <- 0x%lx", &fn) == 1 &&
	       fn == (unsigned long)smoke_add &&
	       sscanf(q, " v=%d", &v) == 1 && v == 3 * i;
}

static int sdt_ok(const char *s, int i)
{
	int v;
	const char *q = strstr(s, " v=");

	return q && sscanf(q, " v=%d", &v) == 1 && v == 100 + i;
}

/* The hit count uprobe_profile shows for @event. */
static long profile_hits(const char *event)
{
	char line[512], path[256], name[128];
	FILE *f = fopen(T "/uprobe_profile", "r");
	long hits = -1, h;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %127s %ld", path, name, &h) == 3 &&
		    !strcmp(name, event))
			hits = h;
	if (f)
		fclose(f);
	return hits;
}

static void smoke(void)
{
	unsigned long add = file_offset((void *)smoke_add);
	unsigned long sdt = file_offset((void *)smoke_sdt);
	unsigned long sema = file_offset((void *)&smoke_sema);
	char def[256];
	int i, sum = 0, err;

	check(add && sdt && sema, "no file offsets: %lx %lx %lx", add, sdt, sema);
	snprintf(def, sizeof(def),
		 "p:smoke/entry /init:0x%lx a=+4(%%sp):s32 b=+8(%%sp):s32\n", add);
	err = write_file(T "/uprobe_events", def, 0);
	check(!err, "defining the entry probe: %s", strerror(-err));
	snprintf(def, sizeof(def), "r:smoke/ret /init:0x%lx v=$retval:s32\n", add);
	err = write_file(T "/uprobe_events", def, 1);
	check(!err, "defining the return probe: %s", strerror(-err));
	snprintf(def, sizeof(def), "p:smoke/sdt /init:0x%lx(0x%lx) v=+4(%%sp):s32\n",
		 sdt, sema);
	err = write_file(T "/uprobe_events", def, 1);
	check(!err, "defining the SDT probe: %s", strerror(-err));

	check(smoke_sema == 0, "semaphore %d before the enable", smoke_sema);
	err = write_file(T "/events/smoke/enable", "1", 0);
	check(!err, "enabling: %s", strerror(-err));
	check(smoke_sema == 1, "semaphore %d while enabled", smoke_sema);
	for (i = 0; i < CALLS; i++)
		sum += smoke_add(i, 2 * i);
	check(sum == 3 * CALLS * (CALLS - 1) / 2, "the program computed %d", sum);
	for (i = 0; i < SDT_CALLS; i++)
		if (smoke_sema)
			smoke_sdt(100 + i);
	err = write_file(T "/events/smoke/enable", "0", 0);
	check(!err, "disabling: %s", strerror(-err));
	check(smoke_sema == 0, "semaphore %d after the disable", smoke_sema);
	smoke_add(1, 1);	/* no longer counted */

	check(trace_lines("entry", entry_ok) == CALLS, "entry lines");
	check(trace_lines("ret", ret_ok) == CALLS, "return lines");
	check(trace_lines("sdt", sdt_ok) == SDT_CALLS, "SDT lines");
	check(profile_hits("entry") == CALLS, "entry hits %ld", profile_hits("entry"));
	check(profile_hits("sdt") == SDT_CALLS, "SDT hits %ld", profile_hits("sdt"));
	err = write_file(T "/uprobe_events", "\n", 0);
	check(!err, "deleting the probes: %s", strerror(-err));
}

int main(void)
{
	struct stat st;

	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	if (stat(T "/uprobe_events", &st))
		mount("tracefs", T, "tracefs", 0, NULL);
	smoke();
	printf("SMOKE %s: %d checks, %d failed\n", fails ? "FAIL" : "PASS",
	       checks, fails);
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);	/* QEMU runs with -no-reboot: it exits */
	return 0;
}
