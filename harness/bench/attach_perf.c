// SPDX-License-Identifier: GPL-2.0
/*
 * attach_perf: the perf half of the attach benchmark (harness/bench).
 *
 *   attach_perf [--task] [--bpf] BIN OFFSETS N
 *
 * Opens one uprobe-PMU perf event (pid -1, cpu 0: system-wide, as
 * bpftrace and perf record -a do) for each of N functions picked evenly
 * from OFFSETS (genbig's "NAME 0xOFF" lines), which installs every probe
 * in every process mapping BIN; then runs "BIN callall" on CPU 0, checks
 * that the N counters add up to N, and closes them all.
 *
 * With --task, the events follow one process instead (pid of a child
 * running "BIN callwait", cpu -1, as perf record -p and per-process
 * tools do), which installs every probe in that process only; the child
 * then calls every function.  Perf events of one CPU are all rescheduled
 * each time one more is added to that CPU while it runs (6.1's
 * __perf_install_in_context()), so system-wide events cost more to open
 * the more there are; a sleeping task's context has no such cost.
 *
 * With --bpf, each probe is attached as libbpf 1.x's
 * bpf_program__attach_uprobe_opts() attaches a BPF program to one uprobe:
 * the event, then a BPF link (BPF_LINK_CREATE, BPF_PERF_EVENT) carrying
 * the probe's cookie, then PERF_EVENT_IOC_ENABLE; and detached as its
 * bpf_link__destroy() does: disable, close the event, close the link.
 * (Not libbpf's uprobe_multi link, which 6.6 and later offer.)  The
 * program counts hits by cookie in an array map, which is read instead
 * of the counters; selftests/uprobes/uprobe_bpf.c attaches the same way.
 *
 * Prints:
 *
 *   open_ms X         time to open (attach) the N events
 *   close_ms X        time to close (detach) them
 *   slab_open_kb X    /proc/meminfo Slab after open minus before
 *   slab_close_kb X   after close minus before
 *   mem_open_kb X     /proc/meminfo MemAvailable before open minus after
 *                     (all the kernel memory the open events hold)
 *   hits X            the counters' sum, or the map's (must be N)
 *
 * With N of 10,000 or more, a line goes to stderr at every tenth of the
 * opens and closes (the time so far), so that a long run shows where it
 * is.
 *
 * Exit status 1 when the counters do not add up to N, or with --bpf when
 * a cookie did not count exactly one hit.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* the value of /proc/meminfo's line KEY ("Slab:"), in kB */
static long meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t len = strlen(key);
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) &&
		    sscanf(line + len, "%ld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

static long slab_kb(void)
{
	return meminfo_kb("Slab:");
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* map[(u32)cookie] += 1, in an array map of n entries: -1 on error */
static int count_by_cookie(int n, int *map)
{
	struct bpf_insn p[] = {
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_attach_cookie),
		INSN(BPF_STX | BPF_MEM | BPF_W, 10, 0, -4, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, -1),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
		INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 1, 0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 1, 0, BPF_ADD),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = n;
	*map = sys_bpf(BPF_MAP_CREATE, &a);
	if (*map < 0)
		return -1;
	p[4].imm = *map;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insn_cnt = sizeof(p) / sizeof(p[0]);
	a.insns = (uintptr_t)p;
	a.license = (uintptr_t)"GPL";
	return sys_bpf(BPF_PROG_LOAD, &a);
}

/* the value at key, or -1 if the lookup failed */
static long long map_value(int map, unsigned int key)
{
	unsigned long long v = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&v;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) ? -1 : (long long)v;
}

/* every tenth of a long run: how many so far, in how long */
static void progress(const char *what, int done, int n, double since)
{
	if (n >= 10000 && done % (n / 10) == 0)
		fprintf(stderr, "attach_perf: %s %d of %d in %.0f ms\n",
			what, done, n, now_ms() - since);
}

int main(int argc, char **argv)
{
	const char *bin, *offpath;
	unsigned long long *offs;
	int n, total = 0, type, *fds;
	struct perf_event_attr attr;
	struct rlimit rl;
	char name[64];
	unsigned long long off;
	long s0, s1, s2, a0, a1;
	double t0, t1, t2, t3;
	unsigned long long hits = 0;
	cpu_set_t cpus;
	FILE *f;
	int task = 0, to_child[2], from_child[2];
	int bpf = 0, prog = -1, map = -1, *links = NULL, bad_cookies = 0;
	pid_t pid = -1;
	char c;
	int status;

	for (; argc > 1 && !strncmp(argv[1], "--", 2); argc--, argv++) {
		if (!strcmp(argv[1], "--task")) {
			task = 1;
		} else if (!strcmp(argv[1], "--bpf")) {
			bpf = 1;
		} else {
			argc = 0;
			break;
		}
	}
	if (argc != 4) {
		fprintf(stderr, "usage: attach_perf [--task] [--bpf] BIN OFFSETS N\n");
		return 2;
	}
	bin = argv[1];
	offpath = argv[2];
	n = atoi(argv[3]);
	type = read_int("/sys/bus/event_source/devices/uprobe/type");
	if (type < 0) {
		fprintf(stderr, "attach_perf: no uprobe PMU\n");
		return 2;
	}
	f = fopen(offpath, "r");
	if (!f) {
		perror(offpath);
		return 2;
	}
	offs = calloc(200000, sizeof(*offs));
	while (total < 200000 && fscanf(f, "%63s %llx", name, &off) == 2)
		offs[total++] = off;
	fclose(f);
	if (n < 1 || n > total) {
		fprintf(stderr, "attach_perf: N=%d but %d functions\n", n, total);
		return 2;
	}
	rl.rlim_cur = rl.rlim_max = 2 * n + 64;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		perror("setrlimit");
		return 2;
	}
	/* The check below counts on CPU 0 only: keep ourselves there. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	fds = calloc(n, sizeof(*fds));
	if (bpf) {
		links = calloc(n, sizeof(*links));
		prog = count_by_cookie(n, &map);
		if (prog < 0) {
			fprintf(stderr, "attach_perf: BPF map or program: %m\n");
			return 2;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config1 = (uintptr_t)bin;		/* uprobe_path */

	if (task) {
		/* The target: mapped (its exec done) once it has written. */
		if (pipe(to_child) || pipe(from_child)) {
			perror("pipe");
			return 2;
		}
		pid = fork();
		if (pid == 0) {
			dup2(to_child[0], 0);
			dup2(from_child[1], 1);
			execl(bin, bin, "callwait", (char *)NULL);
			_exit(127);
		}
		close(to_child[0]);
		close(from_child[1]);
		if (pid < 0 || read(from_child[0], &c, 1) != 1) {
			fprintf(stderr, "attach_perf: %s callwait did not start\n", bin);
			return 2;
		}
	}

	a0 = meminfo_kb("MemAvailable:");
	s0 = slab_kb();
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		attr.config2 = offs[(long)i * total / n];	/* probe_offset */
		fds[i] = syscall(SYS_perf_event_open, &attr, pid, task ? -1 : 0,
				 -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "attach_perf: perf_event_open #%d: %m\n", i);
			return 2;
		}
		if (bpf) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.link_create.prog_fd = prog;
			a.link_create.target_fd = fds[i];
			a.link_create.attach_type = BPF_PERF_EVENT;
			a.link_create.perf_event.bpf_cookie = i;
			links[i] = sys_bpf(BPF_LINK_CREATE, &a);
			if (links[i] < 0) {
				fprintf(stderr, "attach_perf: BPF_LINK_CREATE #%d: %m\n", i);
				return 2;
			}
			if (ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
				fprintf(stderr, "attach_perf: PERF_EVENT_IOC_ENABLE #%d: %m\n", i);
				return 2;
			}
		}
		progress("opened", i + 1, n, t0);
	}
	t1 = now_ms();
	s1 = slab_kb();
	a1 = meminfo_kb("MemAvailable:");

	if (task) {
		if (write(to_child[1], "g", 1) != 1) {
			perror("write");
			return 2;
		}
	} else {
		pid = fork();
		if (pid == 0) {
			execl(bin, bin, "callall", (char *)NULL);
			_exit(127);
		}
	}
	waitpid(pid, &status, 0);
	for (int i = 0; i < n; i++) {
		unsigned long long c = 0;

		if (bpf) {
			/* each probe's function is called once */
			long long v = map_value(map, i);

			if (v != 1 && bad_cookies++ < 10)
				fprintf(stderr, "attach_perf: cookie %d counted %lld hits\n", i, v);
			c = v > 0 ? v : 0;
		} else if (read(fds[i], &c, sizeof(c)) != sizeof(c)) {
			c = 0;
		}
		hits += c;
	}

	t2 = now_ms();
	for (int i = 0; i < n; i++) {
		if (bpf)
			ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		close(fds[i]);
		if (bpf)
			close(links[i]);
		progress("closed", i + 1, n, t2);
	}
	t3 = now_ms();
	s2 = slab_kb();

	printf("open_ms %.3f\nclose_ms %.3f\nslab_open_kb %ld\nslab_close_kb %ld\nmem_open_kb %ld\nhits %llu\n",
	       t1 - t0, t3 - t2, s1 - s0, s2 - s0, a0 - a1, hits);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "attach_perf: %s %s failed\n", bin,
			task ? "callwait" : "callall");
		return 1;
	}
	if (bad_cookies) {
		fprintf(stderr, "attach_perf: %d of %d cookies did not count one hit\n",
			bad_cookies, n);
		return 1;
	}
	if (hits != (unsigned long long)n) {
		fprintf(stderr, "attach_perf: %d probes fired %llu times, expected %d\n",
			n, hits, n);
		return 1;
	}
	return 0;
}
