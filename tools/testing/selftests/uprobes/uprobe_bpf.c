// SPDX-License-Identifier: GPL-2.0
/*
 * BPF programs on uprobes, attached the way libbpf attaches them: one
 * perf event of the uprobe PMU per probe (its type, "retprobe" bit and
 * "ref_ctr_offset" field read from sysfs; system-wide: pid -1 on CPU 0),
 * the program attached through a BPF link carrying a cookie (or, as
 * older libbpf does, PERF_EVENT_IOC_SET_BPF), then the event enabled.
 * The programs are a few raw instructions: they count hits per cookie,
 * or keep a register of the probed function's (its return value, or
 * where it was hit), in an array map.  Each case checks after the detach
 * that no breakpoint is left (the file holds no 0xcc byte).
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#define NKEYS	1024	/* array map entries: cookies below this */

static long ub_sys(int cmd, union bpf_attr *attr)
{
	long ret = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return ret < 0 ? -errno : ret;
}

/* Attributes are zeroed whole: the kernel refuses unused bytes set. */
static int ub_array(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = NKEYS;
	return ub_sys(BPF_MAP_CREATE, &a);
}

static long ub_value(int map, unsigned int key)
{
	unsigned long long v = 0;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)&v;
	return ub_sys(BPF_MAP_LOOKUP_ELEM, &a) ? -1 : (long)v;
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV_REG(d, s)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define CALL(f)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define STX_W(d, s, o)	INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define STX_DW(d, s, o)	INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LDX_DW(d, s, o)	INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define XADD_DW(d, s)	INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, 0, BPF_ADD)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT()		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Where the program finds a register of the probed function's. */
#define REG_AX	80	/* struct pt_regs of x86_64: ax */
#define REG_IP	128	/* ip */

/*
 * value = &map[(u32)cookie]: if none, return 0; then add one to it
 * (@reg < 0), or store the register at offset @reg of the context.
 */
static int ub_prog(int map, int reg)
{
	struct bpf_insn p[] = {
		MOV_REG(6, 1),
		CALL(BPF_FUNC_get_attach_cookie),
		STX_W(10, 0, -4),
		MOV_REG(2, 10),
		ADD_IMM(2, -4),
		INSN(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(0, 0, 2),
		reg < 0 ? MOV_IMM(1, 1) : LDX_DW(1, 6, reg),
		reg < 0 ? XADD_DW(0, 1) : STX_DW(0, 1, 0),
		MOV_IMM(0, 0),
		EXIT(),
	};
	static char log[16384];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insn_cnt = ARRAY_SIZE(p);
	a.insns = (unsigned long)p;
	a.license = (unsigned long)"GPL";
	fd = ub_sys(BPF_PROG_LOAD, &a);
	if (fd >= 0)
		return fd;
	/* As libbpf does: again with the verifier's log, to say why. */
	a.log_buf = (unsigned long)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	if (ub_sys(BPF_PROG_LOAD, &a) < 0)
		fprintf(stderr, "# the verifier said: %s\n", log);
	return fd;
}

/* What libbpf does for one uprobe: the event, the link, enable.  -errno */
static int ub_attach_sem(const struct ut_pmu *pmu, const char *path, long off,
			 bool ret, long sem, int prog, unsigned long long cookie,
			 int *link)
{
	int ev = ut_pmu_open(pmu, path, off, ret, sem, false, -1, 0);
	union bpf_attr a;

	if (ev < 0)
		return ev;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog;
	a.link_create.target_fd = ev;
	a.link_create.attach_type = BPF_PERF_EVENT;
	a.link_create.perf_event.bpf_cookie = cookie;
	*link = ub_sys(BPF_LINK_CREATE, &a);
	if (*link < 0 || ioctl(ev, PERF_EVENT_IOC_ENABLE, 0)) {
		int err = *link < 0 ? *link : -errno;

		if (*link >= 0)
			close(*link);
		close(ev);
		return err;
	}
	return ev;
}

/* And its detach: disable, the event's fd, then the link (which frees it). */
static void ub_detach(int ev, int link)
{
	ioctl(ev, PERF_EVENT_IOC_DISABLE, 0);
	close(ev);
	close(link);
}

static int ub_attach(const struct ut_pmu *pmu, const char *path, long off,
		     bool ret, int prog, unsigned long long cookie, int *link)
{
	return ub_attach_sem(pmu, path, off, ret, 0, prog, cookie, link);
}

static double ub_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

FIXTURE(bpf) {
	struct ut_pmu pmu;
	char path[64];
	unsigned char *code;
	size_t len;
	int map, prog;
};

FIXTURE_SETUP(bpf)
{
	self->map = -1;
	self->prog = -1;
	self->code = MAP_FAILED;
	snprintf(self->path, sizeof(self->path), "/tmp/ust_bpf_%d", getpid());
}

FIXTURE_TEARDOWN(bpf)
{
	if (self->code != MAP_FAILED)
		munmap(self->code, self->len);
	if (self->prog >= 0)
		close(self->prog);
	if (self->map >= 0)
		close(self->map);
	unlink(self->path);
}

/*
 * In the case, not the setup (whose SKIP the 6.1 harness does not end
 * the case on): the PMU, the map, the file of @nfn functions mapped
 * here, and the program (of ub_prog()'s @reg).
 */
#define SETUP(nfn, reg) do {							\
	ut_pmu_init(&self->pmu);						\
	if (self->pmu.type < 0 || self->pmu.retprobe_bit < 0 ||		\
	    self->pmu.refctr_shift < 0)						\
		SKIP(return, "no uprobe PMU, or its format lacks a field");	\
	self->map = ub_array();							\
	if (self->map == -ENOSYS)						\
		SKIP(return, "no bpf() (CONFIG_BPF_SYSCALL)");			\
	ASSERT_LE(0, self->map) TH_LOG("array map: %s", strerror(-self->map)); \
	ASSERT_EQ(0, ut_fn_file(self->path, (nfn)));				\
	self->len = ut_fn_file_len(nfn);					\
	self->code = ut_map_file(self->path, self->len, PROT_READ | PROT_EXEC); \
	ASSERT_NE(MAP_FAILED, self->code);					\
	self->prog = ub_prog(self->map, (reg));					\
	ASSERT_LE(0, self->prog) TH_LOG("program: %s", strerror(-self->prog)); \
} while (0)

#define FN(i) ((int (*)(void))(self->code + (size_t)(i) * UT_FN_STRIDE))

/* No breakpoint left in the mapped functions: the file has no 0xcc. */
static void expect_no_breakpoint(struct __test_metadata *_metadata,
				 FIXTURE_DATA(bpf) *self)
{
	EXPECT_EQ(NULL, memchr(self->code, 0xcc, self->len - UT_PAGE))
		TH_LOG("a breakpoint left after the detach");
}

/*
 * Four probes, one program, each link with its own cookie (the high bits
 * set: the program keys on the low 32): each cookie counts its
 * function's calls; a fifth probe attached the older way
 * (PERF_EVENT_IOC_SET_BPF) runs the program with cookie 0.
 */
TEST_F(bpf, each_link_s_cookie_reaches_the_program)
{
	const unsigned long long high = 0xabcdULL << 40;
	int ev[5], link[4], i, n;

	SETUP(5, -1);
	for (i = 0; i < 4; i++) {
		ev[i] = ub_attach(&self->pmu, self->path, i * UT_FN_STRIDE, false,
				  self->prog, high | (100 + i), &link[i]);
		ASSERT_LE(0, ev[i]) TH_LOG("probe %d: %s", i, strerror(-ev[i]));
	}
	ev[4] = ut_pmu_open(&self->pmu, self->path, 4 * UT_FN_STRIDE, false, 0,
			    false, -1, 0);
	ASSERT_LE(0, ev[4]);
	ASSERT_EQ(0, ioctl(ev[4], PERF_EVENT_IOC_SET_BPF, self->prog));
	ASSERT_EQ(0, ioctl(ev[4], PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < 5; i++)
		for (n = 0; n < 3 * (i + 1); n++)
			ASSERT_EQ(UT_FN_RET(i), FN(i)());
	for (i = 0; i < 4; i++)
		EXPECT_EQ(3 * (i + 1), ub_value(self->map, 100 + i))
			TH_LOG("cookie %d", 100 + i);
	EXPECT_EQ(15, ub_value(self->map, 0)) TH_LOG("the ioctl-attached probe");
	for (i = 0; i < 4; i++)
		ub_detach(ev[i], link[i]);
	close(ev[4]);
	for (i = 0; i < 5; i++)
		FN(i)();
	for (i = 0; i < 4; i++)
		EXPECT_EQ(3 * (i + 1), ub_value(self->map, 100 + i))
			TH_LOG("cookie %d after the detach", 100 + i);
	EXPECT_EQ(15, ub_value(self->map, 0)) TH_LOG("after the ioctl one's close");
	expect_no_breakpoint(_metadata, self);
}

/* A return probe's program reads the function's return value in ax. */
TEST_F(bpf, return_probe_program_reads_the_return_value)
{
	int ev[3], link[3], i;

	SETUP(3, REG_AX);
	for (i = 0; i < 3; i++) {
		ev[i] = ub_attach(&self->pmu, self->path, i * UT_FN_STRIDE, true,
				  self->prog, 10 + i, &link[i]);
		ASSERT_LE(0, ev[i]) TH_LOG("return probe %d: %s", i, strerror(-ev[i]));
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(UT_FN_RET(i), FN(i)());
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(UT_FN_RET(i), ub_value(self->map, 10 + i));
		ub_detach(ev[i], link[i]);
	}
	expect_no_breakpoint(_metadata, self);
}

/* The kernel writes it: read it afresh each time. */
#define SEM() __atomic_load_n(sem, __ATOMIC_RELAXED)

/*
 * A USDT probe with its semaphore (ref_ctr_offset in the config's upper
 * bits): the program's counter says "traced" while the linked probe is
 * attached, and not after; the program counts the hits meanwhile.
 */
TEST_F(bpf, usdt_semaphore_raised_while_the_linked_probe_is_attached)
{
	unsigned short *sem;
	long sem_off;
	void *data;
	int fd, ev, link;

	SETUP(2, -1);
	sem_off = self->len - UT_PAGE;
	fd = open(self->path, O_RDONLY);
	ASSERT_LE(0, fd);
	data = mmap(NULL, UT_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, sem_off);
	close(fd);
	ASSERT_NE(MAP_FAILED, data);
	sem = data;
	ASSERT_EQ(0, SEM());
	ev = ub_attach_sem(&self->pmu, self->path, UT_FN_STRIDE, false, sem_off,
			   self->prog, 7, &link);
	ASSERT_LE(0, ev) TH_LOG("probe with a semaphore: %s", strerror(-ev));
	EXPECT_EQ(1, SEM()) TH_LOG("the semaphore while attached");
	if (SEM())
		FN(1)();
	EXPECT_EQ(1, ub_value(self->map, 7));
	ub_detach(ev, link);
	EXPECT_EQ(0, SEM()) TH_LOG("the semaphore after the detach");
	munmap(data, UT_PAGE);
	expect_no_breakpoint(_metadata, self);
}

/*
 * A profiler attaching to a large binary: 1,000 uprobes opened, linked
 * and enabled one by one, each with its cookie; each function's program
 * run, under its own cookie, records where it was hit: that function;
 * then all detached, as libbpf does, and no breakpoint left.
 */
TEST_F_TIMEOUT(bpf, thousand_uprobes_attached_one_by_one_see_their_own_calls, 450)
{
	enum { N = 1000 };
	static int ev[N], link[N];
	struct timespec t0;
	struct rlimit rl;
	double attach;
	long bad = 0;
	int i;

	/* Two descriptors a probe, as libbpf-based tools raise the limit. */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < 2 * N + 64) {
		rl.rlim_cur = 2 * N + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	SETUP(N, REG_IP);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < N; i++) {
		ev[i] = ub_attach(&self->pmu, self->path, (long)i * UT_FN_STRIDE,
				  false, self->prog, i + 1, &link[i]);
		ASSERT_LE(0, ev[i]) TH_LOG("probe %d: %s", i, strerror(-ev[i]));
	}
	attach = ub_ms(&t0);
	TH_LOG("%d uprobes attached in %.0f ms", N, attach);
	for (i = 0; i < N; i++)
		if (FN(i)() != UT_FN_RET(i))
			bad++;
	EXPECT_EQ(0, bad) TH_LOG("calls that returned a wrong value");
	bad = 0;
	for (i = 0; i < N; i++)
		if (ub_value(self->map, i + 1) != (long)FN(i))
			bad++;
	EXPECT_EQ(0, bad) TH_LOG("cookies whose program did not see its function");
	EXPECT_EQ(0, ub_value(self->map, 0)) TH_LOG("hits without a cookie");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < N; i++)
		ub_detach(ev[i], link[i]);
	TH_LOG("%d uprobes detached in %.0f ms", N, ub_ms(&t0));
	expect_no_breakpoint(_metadata, self);
}

UT_HARNESS_MAIN
