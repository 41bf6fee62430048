// SPDX-License-Identifier: GPL-2.0
/*
 * Differential instruction fuzzing: a probe never changes what a program
 * computes.
 *
 * Each batch places a few hundred generated instructions (insnfuzz_gen.c)
 * in cells of a file-backed executable mapping, each cell all int3 but for
 * its instruction.  Every instruction runs from several machine states
 * (general registers, flags, x87/SSE/AVX state, data pages), first with no
 * probe anywhere, then with a counting perf uprobe on each instruction and,
 * for half the runs, a return probe pending on the stub that enters the
 * case.  A run ends in a signal: the int3 after the instruction or at a
 * branch target, or the instruction's own fault.  Its outcome is what the
 * signal frame says (signal, si_code, si_addr, every general register,
 * rip, flags, trap number, error code, cr2, the x87/SSE state and the
 * upper YMM halves) and the data and stack pages (all but the 64 bytes
 * under the red zone, which the ABI leaves to anyone).  Probed and
 * unprobed outcomes must be equal; each probe must count every run.
 * A timer signal keeps arriving meanwhile, and must never interrupt the
 * program at an address in the [uprobes] area.  No case may change the
 * runner's own TLS either.
 *
 *   uprobe_insnfuzz                       the kselftest: a fixed-seed slice
 *   uprobe_insnfuzz --seed S --seconds T  fuzz for T seconds (make fuzz)
 *   uprobe_insnfuzz --seed S --batch N    replay one batch, print its cases
 *   ... --states K                        K states an instruction (32; the slice 16)
 *
 * To chase a worker that died: --stride 2 [--from 1] replays what worker 0
 * (1) of a two-worker run did, in one process; --unprobed places no probe,
 * so a death that stays is the cases' own doing.
 *
 * Built with -m32, this file is uprobe_insnfuzz32: the same fuzzer for
 * 32-bit code in a compat task (the generator's ifz_env.mode32), whose
 * signal frames, return addresses, [uprobes] area and segments are the
 * ia32 ones.  uprobe_insnfuzz --compat ARGS runs it with ARGS, and the
 * kselftest runs its fixed-seed slice.  In a compat task nothing may
 * change the stack below the stack pointer: the whole stack page is
 * compared.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <asm/prctl.h>
#include <asm/ldt.h>
#include <cpuid.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <ucontext.h>

#include "../kselftest_harness.h"
#include "uprobe_lib.h"
#include "insnfuzz.h"

#define IFZ_SEED		0x5eed0f1a2b3c4d5eULL
#define IFZ_CELLS		256
/*
 * The states each instruction runs from: 16 in the kselftest's slice, 32
 * in a fuzzing run, where each probe's close (~25 ms of grace periods
 * under TCG, one close at a time) would otherwise cost more than its runs.
 */
#define IFZ_SLICE_STATES	16
#define IFZ_FUZZ_STATES		32
#define IFZ_MAX_STATES		32
#define IFZ_CHECK_BATCHES	5	/* 5 x 256 x 16 = 20,480 cases */
#define IFZ_CHECK32_BATCHES	4	/* the compat slice: 16,384 cases */
#define IFZ_TICK_US		1500
#define IFZ_TIMEOUT_TICKS	4000	/* a run still going after ~6 s */
#define IFZ_MAX_REPORTS		40	/* cells reported in full */

#ifdef __i386__
#define IFZ_COMPAT		1
/* i386's mcontext keeps cr2 apart from the registers: it goes last */
#define IFZ_NREG		(NGREG + 1)
#define IFZ_CR2			NGREG
#define IFZ_IP			REG_EIP
#define IFZ_SP			REG_ESP
#define IFZ_HOST_SAVES		16	/* ebx, ebp, esi, edi, under the return */
/* no red zone: nothing may write below the stack pointer */
#define IFZ_RED_ZONE		0
#define IFZ_BELOW_RED_ZONE	0
#else
#define IFZ_COMPAT		0
#define IFZ_NREG		NGREG
#define IFZ_CR2			REG_CR2
#define IFZ_IP			REG_RIP
#define IFZ_SP			REG_RSP
#define IFZ_HOST_SAVES		48	/* rbx, rbp, r12-r15 */
#define IFZ_RED_ZONE		128
#define IFZ_BELOW_RED_ZONE	64
#endif

struct ifz_block {
	uint64_t regs[16];
	uint64_t flags;
	uint64_t target;
	uint64_t host_rsp;
	uint64_t pad[5];
	uint8_t xsave[4096] __attribute__((aligned(64)));
	uint8_t clean[4096] __attribute__((aligned(64)));
};

struct ifz_outcome {
	int signo, code;
	uint64_t addr;
	greg_t gregs[IFZ_NREG];
	uint8_t fx[416];
	uint8_t ymmh[256];
	uint64_t memhash;
	uint32_t nmem;
	uint32_t memoff[4];
	uint64_t memval[4];
	bool timeout;
	bool tls;		/* the runner's TLS changed, first at fs + tls_off */
	int tls_off;
};

struct ifz_stats {
	unsigned long cases[IFZ_NCLASS], probed[IFZ_NCLASS], refused[IFZ_NCLASS];
	unsigned long diverged[IFZ_NCLASS];
	unsigned long forms[IFZ_NCLASS][IFZ_NFORM];
	unsigned long runs, probed_runs, count_errors, slot_ticks, case_ticks;
	unsigned long ticks, tramp_ticks, timeouts, reports, retprobe_errors;
	unsigned long unstable, qemu_flags, tls_hits;
	unsigned long batches;
	double t_gen, t_plain, t_probe, t_probed, t_close;	/* seconds in each */
	long result;			/* a worker's: divergences, or -errno */
	long done;			/* the worker came back to fuzz() */
	unsigned long slot_off[8];	/* where in [uprobes] ticks saw ip */
};

typedef void (*ifz_enter_fn)(void);

static struct ifz_block *const blk = (struct ifz_block *)IFZ_STATE;
static struct ifz_env env;
static bool have_xsave;
static uint32_t mxcsr_mask = 0xffbf;
static uint8_t *pristine;
static struct ifz_outcome *cur;
static volatile int in_case;
static volatile unsigned long run_ticks;
static unsigned long xol_lo, xol_hi;
/* The return probe's trampoline: the return address enter1 will use. */
static volatile unsigned long tramp;
static struct ifz_stats *stats;
static uint8_t stub[0x1000];
static int trace_fd = -1;	/* --trace: each case on stdout first */
/*
 * --ignore-int3-trapno: to see past the one divergence stock kernels show
 * everywhere (their SIGTRAP for a program's own int3 in an mm with probes
 * reports the last fault's trap number and error code).
 */
static bool ignore_int3_trapno;
/*
 * --unprobed: every run twice, never a probe: a worker that dies this way
 * too was killed by its own cases, not by the kernel.
 */
static bool unprobed_only;
/*
 * --stride N: one worker, on batches F, F + N, F + 2N, ... (F from --from):
 * what worker F % N of an N-worker run did, replayed in one process.
 */
static int stride;
/* --states N: each instruction's states (even: half enter by enter1) */
static int nstates = IFZ_FUZZ_STATES;

/* ------------------------------------------------------------------ */
/* The stub: enter a case from C, and come back from its signal         */
/* ------------------------------------------------------------------ */

static unsigned int emit(uint8_t *p, unsigned int n, const void *b, unsigned int len)
{
	memcpy(p + n, b, len);
	return n + len;
}

/* An absolute [disp32] operand: ModRM with rm=100, SIB 0x25. */
static unsigned int emit_abs(uint8_t *p, unsigned int n, const uint8_t *op,
			     unsigned int oplen, uint8_t modrm_reg, uint64_t addr)
{
	uint32_t a = addr;

	n = emit(p, n, op, oplen);
	p[n++] = modrm_reg << 3 | 4;
	p[n++] = 0x25;
	return emit(p, n, &a, 4);
}

static unsigned int emit_fp_load(uint8_t *p, unsigned int n, uint64_t image)
{
	static const uint8_t eax7_edx0[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2 };
	static const uint8_t rexw_0fae[] = { 0x48, 0x0f, 0xae };

	if (!have_xsave)
		return emit_abs(p, n, rexw_0fae, 3, 1, image);	/* fxrstor64 */
	n = emit(p, n, eax7_edx0, sizeof(eax7_edx0));
	return emit_abs(p, n, rexw_0fae, 3, 5, image);		/* xrstor64 */
}

/*
 * fninit before the FP image is loaded: the x87 last-instruction and
 * last-data pointers and opcode (FIP, FDP, FOP, which fnstenv stores) are
 * then zero when the case starts, rather than whatever the kernel left.
 * On Intel CPUs the image (zeros there) sets them anyway; QEMU 7.2's TCG
 * keeps them out of it, as AMD CPUs without XSAVEERPTR do: its xsave
 * stores zeros, its xrstor loads none of them.  The guest kernel, on the
 * AMD CPU that is -cpu max, runs an fildl of its own at every FPU reload
 * (the X86_BUG_FXSAVE_LEAK workaround in restore_fpregs_from_fpstate()),
 * and a reload between a run's signal and its case (a context switch,
 * say to the reaper) left kernel addresses in an unprobed fnstenv ("d9
 * 30": FIP 0x81024569, FCS 0x10, FDP 0xc5b400) that the probed run did
 * not have.  Only the few instructions from here to the case are left
 * for such a reload.  An x87 instruction the case runs itself still sets
 * FIP: one a probe runs out of line, to its slot.
 */
static unsigned int emit_fninit(uint8_t *p, unsigned int n)
{
	p[n++] = 0xdb;
	p[n++] = 0xe3;
	return n;
}

static unsigned int emit_enter(uint8_t *p, unsigned int n)
{
	static const uint8_t saves[] = {
		0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56, 0x41, 0x57,
	};
	uint8_t op[2];
	int r;

	n = emit(p, n, saves, sizeof(saves));
	op[0] = 0x48;
	op[1] = 0x89;
	n = emit_abs(p, n, op, 2, 4, (uintptr_t)&blk->host_rsp);	/* mov %rsp */
	n = emit_fninit(p, n);
	n = emit_fp_load(p, n, (uintptr_t)blk->xsave);
	op[0] = 0xff;
	n = emit_abs(p, n, op, 1, 6, (uintptr_t)&blk->flags);	/* push */
	p[n++] = 0x9d;						/* popfq */
	for (r = 0; r < 16; r++) {
		if (r == 4)
			continue;
		op[0] = 0x48 | (r >= 8 ? 4 : 0);
		op[1] = 0x8b;
		n = emit_abs(p, n, op, 2, r & 7, (uintptr_t)&blk->regs[r]);
	}
	op[0] = 0x48;
	op[1] = 0x8b;
	n = emit_abs(p, n, op, 2, 4, (uintptr_t)&blk->regs[4]);
	op[0] = 0xff;
	return emit_abs(p, n, op, 1, 4, (uintptr_t)&blk->target);	/* jmp * */
}

static unsigned int emit_resume(uint8_t *p, unsigned int n)
{
	static const uint8_t tail[] = {
		0x68, 0x02, 0, 0, 0, 0x9d,		/* flags: 0x2 */
		0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, 0x5d, 0x5b,
		0xc3,
	};

	n = emit_fp_load(p, n, (uintptr_t)blk->clean);
	return emit(p, n, tail, sizeof(tail));
}

/*
 * The compat stub: the same steps in 32-bit code.  An absolute [disp32]
 * operand is encoded the same way there, rm=100 with SIB 0x25.
 */
static unsigned int emit_fp_load32(uint8_t *p, unsigned int n, uint32_t image)
{
	static const uint8_t eax7_edx0[] = { 0xb8, 7, 0, 0, 0, 0x31, 0xd2 };
	static const uint8_t op_0fae[] = { 0x0f, 0xae };

	if (!have_xsave)
		return emit_abs(p, n, op_0fae, 2, 1, image);	/* fxrstor */
	n = emit(p, n, eax7_edx0, sizeof(eax7_edx0));
	return emit_abs(p, n, op_0fae, 2, 5, image);		/* xrstor */
}

static unsigned int emit_enter32(uint8_t *p, unsigned int n)
{
	static const uint8_t saves[] = { 0x53, 0x55, 0x56, 0x57 };
	const uint8_t mov_to = 0x89, mov_from = 0x8b, grp5 = 0xff;
	int r;

	n = emit(p, n, saves, sizeof(saves));
	n = emit_abs(p, n, &mov_to, 1, 4, IFZ_STATE + offsetof(struct ifz_block, host_rsp));
	n = emit_fninit(p, n);
	n = emit_fp_load32(p, n, IFZ_STATE + offsetof(struct ifz_block, xsave));
	n = emit_abs(p, n, &grp5, 1, 6, IFZ_STATE + offsetof(struct ifz_block, flags));
	p[n++] = 0x9d;						/* popf */
	for (r = 0; r < 8; r++)
		if (r != 4)
			n = emit_abs(p, n, &mov_from, 1, r,
				     IFZ_STATE + offsetof(struct ifz_block, regs[r]));
	n = emit_abs(p, n, &mov_from, 1, 4, IFZ_STATE + offsetof(struct ifz_block, regs[4]));
	return emit_abs(p, n, &grp5, 1, 4, IFZ_STATE + offsetof(struct ifz_block, target));
}

static unsigned int emit_resume32(uint8_t *p, unsigned int n)
{
	static const uint8_t tail[] = {
		0x6a, 0x02, 0x9d,			/* flags: 0x2 */
		0x5f, 0x5e, 0x5d, 0x5b, 0xc3,
	};

	n = emit_fp_load32(p, n, IFZ_STATE + offsetof(struct ifz_block, clean));
	return emit(p, n, tail, sizeof(tail));
}

static void build_stub(void)
{
	memset(stub, 0xcc, sizeof(stub));
	if (IFZ_COMPAT) {
		emit_enter32(stub, IFZ_STUB_ENTER);
		emit_enter32(stub, IFZ_STUB_ENTER_RET);
		emit_resume32(stub, IFZ_STUB_RESUME);
		return;
	}
	emit_enter(stub, IFZ_STUB_ENTER);
	emit_enter(stub, IFZ_STUB_ENTER_RET);
	emit_resume(stub, IFZ_STUB_RESUME);
}

/* ------------------------------------------------------------------ */
/* Signals                                                             */
/* ------------------------------------------------------------------ */

#ifdef __i386__
/* The compat runner's segments: %fs based at IFZ_GSBASE, the C library's %gs. */
static uint16_t seg_fs, seg_gs;

static void back_to_stub(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_EIP] = IFZ_CODE + IFZ_STUB_RESUME;
	g[REG_ESP] = blk->host_rsp;
	g[REG_EFL] = 0x246;
	/* a far jump may have gone to 64-bit code (0x33) */
	g[REG_CS] = 0x23;
	g[REG_SS] = 0x2b;
	g[REG_DS] = 0x2b;
	g[REG_ES] = 0x2b;
	g[REG_FS] = seg_fs;
	g[REG_GS] = seg_gs;
}

/* The FXSAVE image in an ia32 frame follows the 112 bytes of fsave's. */
#define IFZ_FX_OFF	112
#else
static void back_to_stub(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_RIP] = IFZ_CODE + IFZ_STUB_RESUME;
	g[REG_RSP] = blk->host_rsp;
	g[REG_EFL] = 0x246;
	/* a far jump may have left another code segment */
	g[REG_CSGSFS] = (g[REG_CSGSFS] & ~0xffffL) | 0x33;
}

#define IFZ_FX_OFF	0
#endif

static void record(ucontext_t *uc, int sig, siginfo_t *si)
{
	const uint8_t *fp = (const uint8_t *)uc->uc_mcontext.fpregs;
	struct ifz_outcome *o = cur;

	o->signo = sig;
	o->code = si ? si->si_code : 0;
	o->addr = si ? (uintptr_t)si->si_addr : 0;
	memcpy(o->gregs, uc->uc_mcontext.gregs, sizeof(uc->uc_mcontext.gregs));
#ifdef __i386__
	o->gregs[IFZ_CR2] = uc->uc_mcontext.cr2;
#endif
	if (fp) {
		fp += IFZ_FX_OFF;
		memcpy(o->fx, fp, sizeof(o->fx));
		/* FP_XSTATE_MAGIC1: an xsave frame, header at 512 */
		if (*(const uint32_t *)(fp + 464) == 0x46505853U &&
		    (*(const uint64_t *)(fp + 512) & 4))
			memcpy(o->ymmh, fp + 576, sizeof(o->ymmh));
	}
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	if (!in_case) {
		/* the harness itself: die of it */
		signal(sig, SIG_DFL);
		return;
	}
	in_case = 0;
	record(uc, sig, si);
	if (!tramp) {
		unsigned long ret = *(unsigned long *)(uintptr_t)(blk->host_rsp +
								  IFZ_HOST_SAVES);

		if (xol_hi && ret >= xol_lo && ret < xol_hi)
			tramp = ret;
	}
	back_to_stub(uc);
}

static void on_tick(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long ip = uc->uc_mcontext.gregs[IFZ_IP];

	stats->ticks++;
	/* a return lands on the trampoline before it traps: not a slot */
	if (tramp && ip >= tramp && ip < tramp + 64)
		stats->tramp_ticks++;
	else if (xol_hi && ip >= xol_lo && ip < xol_hi)
		stats->slot_off[stats->slot_ticks++ % ARRAY_SIZE(stats->slot_off)] =
			ip - xol_lo;
	if (!in_case)
		return;
	if (ip >= IFZ_CODE && ip < IFZ_CELL(IFZ_CELLS))
		stats->case_ticks++;
	if (++run_ticks > IFZ_TIMEOUT_TICKS) {
		in_case = 0;
		cur->timeout = true;
		back_to_stub(uc);
	}
}

static int setup_signals(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP };
	static uint8_t altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa = { .sa_sigaction = on_fault };
	struct itimerval it = {
		.it_interval = { 0, IFZ_TICK_US }, .it_value = { 0, IFZ_TICK_US },
	};
	unsigned int i;

	if (sigaltstack(&ss, NULL))
		return -errno;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGALRM);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -errno;
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL))
		return -errno;
	return setitimer(ITIMER_REAL, &it, NULL) ? -errno : 0;
}

static void stop_signals(void)
{
	struct itimerval it = { 0 };
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGALRM };
	unsigned int i;

	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_DFL);
}

/* ------------------------------------------------------------------ */
/* The machine                                                         */
/* ------------------------------------------------------------------ */

static void detect_env(void)
{
	unsigned int a, b, c, d;

	__cpuid(1, a, b, c, d);
	have_xsave = (c & (1U << 27)) != 0;		/* OSXSAVE */
	if (have_xsave) {
		uint32_t lo, hi;

		__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		env.avx = (c & (1U << 28)) && (lo & 6) == 6;
	}
	__cpuid_count(7, 0, a, b, c, d);
	env.avx2 = env.avx && (b & (1U << 5));
	env.bmi2 = b & (1U << 8);
	env.mode32 = IFZ_COMPAT;
}

/*
 * Is anything mapped in [@lo, @lo + @len)?  The far ranges must fault, or
 * a case would write into (or jump to) whatever is there.
 */
static bool mapped(unsigned long lo, unsigned long len)
{
	unsigned long start, end;
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2)
			found = start < lo + len && end > lo;
	fclose(f);
	return found;
}

#ifdef __i386__
/*
 * The compat runner's segments: the C library's thread area is at %gs:0
 * (its first word points to itself); %fs, which it leaves alone, gets a
 * TLS descriptor based at IFZ_GSBASE.
 */
static int setup_segments(void)
{
	struct user_desc d = {
		.entry_number = -1, .base_addr = IFZ_GSBASE, .limit = 0xfffff,
		.seg_32bit = 1, .limit_in_pages = 1, .useable = 1,
	};
	uint32_t self;

	__asm__ volatile("movl %%gs:0, %0" : "=r"(self));
	env.fsbase = self;
	if (syscall(SYS_set_thread_area, &d))
		return -errno;
	seg_fs = d.entry_number << 3 | 3;
	__asm__ volatile("movw %0, %%fs" : : "r"(seg_fs));
	__asm__ volatile("movw %%gs, %0" : "=r"(seg_gs));
	if (mapped(IFZ_FAR_COMPAT, IFZ_FAR32_BYTES)) {
		printf("# the far ranges the cases fault in are mapped\n");
		return -EEXIST;
	}
	return 0;
}
#else
static int setup_segments(void)
{
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &env.fsbase) ||
	    syscall(SYS_arch_prctl, ARCH_SET_GS, IFZ_GSBASE))
		return -errno;
	if (mapped(IFZ_FAR, IFZ_FAR_BYTES) || mapped(IFZ_FAR32, IFZ_FAR32_BYTES)) {
		printf("# the far ranges the cases fault in are mapped\n");
		return -EEXIST;
	}
	return 0;
}
#endif

/* A worker's fixed mappings, segment bases and FP images, on CPU @cpu. */
static int setup_machine(int cpu)
{
	cpu_set_t set;
	void *p;
	long a;

	/* one CPU: cpuid's APIC id must not change between runs */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);

	p = mmap((void *)IFZ_STATE, sizeof(struct ifz_block), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)IFZ_STATE)
		return -ENOMEM;
	p = mmap((void *)IFZ_DATA, IFZ_CMP_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)IFZ_DATA)
		return -ENOMEM;
	p = mmap((void *)IFZ_RDONLY, 0x1000, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)IFZ_RDONLY)
		return -ENOMEM;
	/*
	 * Canonical, unmapped: a return through it faults at the target.  In
	 * 32-bit code zeros, which an ldmxcsr or fxrstor may load at any
	 * offset (see IFZ_NEED_MXCSR), and which are unmapped too.
	 */
	for (a = 0; a < 0x1000 / 8; a++)
		((uint64_t *)p)[a] = IFZ_COMPAT ? 0 : 0x00005a5a5a5a5a00ULL + 8 * a;
	mprotect(p, 0x1000, PROT_READ);
	a = setup_segments();
	if (a)
		return a;

	/* the clean FP state the stub goes back to, and the MXCSR mask */
	memset(blk->clean, 0, sizeof(blk->clean));
#ifdef __i386__
	if (have_xsave)
		__asm__ volatile("xsave %0" : "+m"(blk->clean) : "a"(7), "d"(0));
	else
		__asm__ volatile("fxsave %0" : "+m"(blk->clean));
#else
	if (have_xsave)
		__asm__ volatile("xsave64 %0" : "+m"(blk->clean) : "a"(7), "d"(0));
	else
		__asm__ volatile("fxsave64 %0" : "+m"(blk->clean));
#endif
	if (*(uint32_t *)(blk->clean + 28))
		mxcsr_mask = *(uint32_t *)(blk->clean + 28);
	pristine = malloc(IFZ_CMP_BYTES);
	build_stub();
	return pristine ? 0 : -ENOMEM;
}

static void fp_image(const struct ifz_state *st)
{
	struct ifz_rng r;
	uint8_t *x = blk->xsave;
	int i;

	ifz_seed(&r, st->vseed, 0x7f);
	memset(x, 0, 576 + 256);
	*(uint16_t *)(x + 0) = st->fcw;
	*(uint32_t *)(x + 24) = st->mxcsr & mxcsr_mask;
	if (st->x87_full) {
		x[4] = 0xff;
		for (i = 0; i < 8; i++) {
			*(uint64_t *)(x + 32 + 16 * i) = ifz_rnd(&r);
			*(uint16_t *)(x + 40 + 16 * i) = ifz_rnd(&r) & 0x7fff;
			if (ifz_rn(&r, 3) == 0)	/* sane numbers too */
				*(uint16_t *)(x + 40 + 16 * i) = 0x3fff + ifz_rn(&r, 64);
			*(uint64_t *)(x + 32 + 16 * i) |= 1ULL << 63;
		}
	}
	for (i = 0; i < 16 * 16 / 8; i++) {
		uint64_t v = ifz_rnd(&r);

		if (ifz_rn(&r, 4) == 0)		/* a float or a double */
			v = ifz_rn(&r, 2) ? 0x3ff0000000000000ULL + (v & 0xfffffffffffULL) :
					    (0x3f800000ULL + (v & 0x7fffff)) * 0x100000001ULL;
		*(uint64_t *)(x + 160 + 8 * i) = v;
	}
	if (have_xsave) {
		*(uint64_t *)(x + 512) = env.avx ? 7 : 3;
		if (env.avx)
			for (i = 0; i < 32; i++)
				*(uint64_t *)(x + 576 + 8 * i) = ifz_rnd(&r);
	}
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * The runner's own thread area around the fs base: its TLS below (errno,
 * malloc's tcache pointer, ...) and the thread control block above (the
 * stack guard).  No case may change it: one that does has an operand the
 * state did not aim, a generator bug, which would otherwise kill the
 * worker batches later.  It is reported with its case, and put back.
 */
#define IFZ_TLS_BELOW	0x300
#define IFZ_TLS_ABOVE	0x100

static void tls_check(struct ifz_outcome *o, const uint8_t *copy)
{
	uint8_t *tls = (uint8_t *)(uintptr_t)env.fsbase - IFZ_TLS_BELOW;
	int i;

	if (!memcmp(copy, tls, IFZ_TLS_BELOW + IFZ_TLS_ABOVE))
		return;
	for (i = 0; copy[i] == tls[i]; i++)
		;
	memcpy(tls, copy, IFZ_TLS_BELOW + IFZ_TLS_ABOVE);
	o->tls = true;
	o->tls_off = i - IFZ_TLS_BELOW;
}

/* Run @st from @ip; the outcome in @o. */
static void run(struct ifz_outcome *o, unsigned long ip, const struct ifz_state *st,
		int entry)
{
	static uint8_t tls_copy[IFZ_TLS_BELOW + IFZ_TLS_ABOVE];
	uint64_t *data = (uint64_t *)IFZ_DATA, *init = (uint64_t *)pristine;
	unsigned long skip_lo = st->regs[4] - IFZ_RED_ZONE - IFZ_BELOW_RED_ZONE;
	unsigned long skip_hi = st->regs[4] - IFZ_RED_ZONE;
	ifz_enter_fn enter = (ifz_enter_fn)(IFZ_CODE + (entry ? IFZ_STUB_ENTER_RET :
								    IFZ_STUB_ENTER));
	uint64_t h = 0;
	unsigned int i;

	memcpy(data, pristine, IFZ_CMP_BYTES);
	for (i = 0; i < 2; i++)
		if (st->plant_addr[i])
			*(uint64_t *)(uintptr_t)st->plant_addr[i] = st->plant_val[i];
	memcpy(blk->regs, st->regs, sizeof(blk->regs));
	blk->flags = st->flags;
	blk->target = ip;
	fp_image(st);
	memset(o, 0, sizeof(*o));
	cur = o;
	run_ticks = 0;
	memcpy(tls_copy, (const void *)(uintptr_t)(env.fsbase - IFZ_TLS_BELOW),
	       sizeof(tls_copy));
	in_case = 1;
	enter();
	in_case = 0;
	tls_check(o, tls_copy);

	for (i = 0; i < IFZ_CMP_BYTES / 8; i++) {
		unsigned long a = IFZ_DATA + 8 * i;
		uint64_t want = init[i];

		if (a + 8 > skip_lo && a < skip_hi)
			continue;
		if (st->plant_addr[0] == a)
			want = st->plant_val[0];
		if (st->plant_addr[1] == a)
			want = st->plant_val[1];
		if (data[i] == want)
			continue;
		h = mix(mix(h, i), data[i]);
		if (o->nmem < ARRAY_SIZE(o->memoff)) {
			o->memoff[o->nmem] = 8 * i;
			o->memval[o->nmem] = data[i];
		}
		o->nmem++;
	}
	o->memhash = h;
}

/* ------------------------------------------------------------------ */
/* Comparing                                                           */
/* ------------------------------------------------------------------ */

static const char *const greg_names[IFZ_NREG] = {
#ifdef __i386__
	"gs", "fs", "es", "ds", "edi", "esi", "ebp", "esp", "ebx", "edx",
	"ecx", "eax", "trapno", "err", "eip", "cs", "eflags", "uesp", "ss",
	"cr2",
#else
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rdi", "rsi",
	"rbp", "rbx", "rdx", "rax", "rcx", "rsp", "rip", "eflags", "csgsfs",
	"err", "trapno", "oldmask", "cr2",
#endif
};

/* Describe how @b differs from @a in @buf; false when they are equal. */
static bool differ(const struct ifz_outcome *a, const struct ifz_outcome *b,
		   char *buf, size_t len)
{
	size_t n = 0;
	int i;

#define ADD(...) (n += snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	buf[0] = 0;
	if (a->timeout != b->timeout)
		ADD(" timeout %d/%d", a->timeout, b->timeout);
	if (a->signo != b->signo || a->code != b->code || a->addr != b->addr)
		ADD(" signal %d code %d addr %#lx / signal %d code %d addr %#lx",
		    a->signo, a->code, (unsigned long)a->addr, b->signo, b->code,
		    (unsigned long)b->addr);
	for (i = 0; i < IFZ_NREG; i++)
		/* cr2 is the last page fault's, stale for any other signal */
		if (a->gregs[i] != b->gregs[i] &&
		    (i != IFZ_CR2 || a->gregs[REG_TRAPNO] == 14) &&
		    !(ignore_int3_trapno && a->signo == SIGTRAP && b->signo == SIGTRAP &&
		      a->code == SI_KERNEL && (i == REG_TRAPNO || i == REG_ERR)))
			ADD(" %s %#lx/%#lx", greg_names[i], (unsigned long)a->gregs[i],
			    (unsigned long)b->gregs[i]);
	for (i = 0; i < (int)sizeof(a->fx); i += 8)
		if (memcmp(a->fx + i, b->fx + i, 8))
			ADD(" fx+%d %#lx/%#lx", i, *(unsigned long *)(a->fx + i),
			    *(unsigned long *)(b->fx + i));
	if (memcmp(a->ymmh, b->ymmh, sizeof(a->ymmh)))
		ADD(" ymm-upper");
	if (a->nmem != b->nmem || a->memhash != b->memhash) {
		ADD(" memory: %u/%u qwords changed", a->nmem, b->nmem);
		for (i = 0; i < (int)ARRAY_SIZE(a->memoff); i++) {
			if (i < (int)a->nmem)
				ADD(" A[%#x]=%#lx", a->memoff[i], (unsigned long)a->memval[i]);
			if (i < (int)b->nmem)
				ADD(" B[%#x]=%#lx", b->memoff[i], (unsigned long)b->memval[i]);
		}
	}
#undef ADD
	return n != 0;
}

static void hex(const uint8_t *b, int n, char *buf)
{
	int i;

	for (i = 0; i < n; i++)
		sprintf(buf + 3 * i, "%02x ", b[i]);
	buf[n ? 3 * n - 1 : 0] = 0;
}

/* ------------------------------------------------------------------ */
/* A batch                                                             */
/* ------------------------------------------------------------------ */

struct ifz_batch {
	struct ifz_insn in[IFZ_CELLS];
	struct ifz_state st[IFZ_CELLS][IFZ_MAX_STATES];
	struct ifz_outcome plain[IFZ_CELLS][IFZ_MAX_STATES];
	int fd[IFZ_CELLS];
};

/* Where cell @i's case starts: its instruction, or a lazy case's producer. */
static unsigned long entry_of(const struct ifz_insn *in, int i)
{
	return IFZ_CELL(i) + IFZ_CELL_INSN - in[i].pre_len;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int write_code(const char *path, const struct ifz_batch *b)
{
	size_t len = 0x1000 + IFZ_CELLS * IFZ_CELL_BYTES;
	uint8_t *img = malloc(len);
	int fd, i, err = 0;
	void *p;

	if (!img)
		return -ENOMEM;
	memset(img, 0xcc, len);
	memcpy(img, stub, sizeof(stub));
	for (i = 0; i < IFZ_CELLS; i++) {
		const struct ifz_insn *in = &b->in[i];
		uint8_t *at = img + IFZ_CELL(i) - IFZ_CODE + IFZ_CELL_INSN;

		memcpy(at - in->pre_len, in->pre, in->pre_len);
		memcpy(at, in->bytes, in->len);
		memcpy(at + in->len, in->post, in->post_len);
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0700);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len)
		err = -errno ? -errno : -EIO;
	if (!err) {
		p = mmap((void *)IFZ_CODE, len, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED, fd, 0);
		if (p != (void *)IFZ_CODE)
			err = -errno;
	}
	if (fd >= 0)
		close(fd);
	free(img);
	return err;
}

static void find_xol_area(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]"))
			sscanf(line, "%lx-%lx", &xol_lo, &xol_hi);
	fclose(f);
}

static void dump_outcome(const char *what, const struct ifz_outcome *o)
{
	const greg_t *g = o->gregs;

	printf("#   %s: signal %d code %d addr %#lx", what,
	       o->signo, o->code, (unsigned long)o->addr);
	printf(" ip %#lx sp %#lx flags %#lx trap %lu err %#lx\n",
	       (unsigned long)g[IFZ_IP], (unsigned long)g[IFZ_SP],
	       (unsigned long)g[REG_EFL], (unsigned long)g[REG_TRAPNO],
	       (unsigned long)g[REG_ERR]);
}

/* Replay aid: the [uprobes] slots that hold a copy of @in. */
static void dump_slots(const struct ifz_insn *in)
{
	char bytes[200];
	unsigned long a;
	uint8_t p[64];
	int n, fd = open("/proc/self/mem", O_RDONLY);

	/* through /proc: a slot page not yet populated must not SIGBUS us */
	for (a = xol_lo; fd >= 0 && a && a < xol_hi; a += 64) {
		if (pread(fd, p, 64, a) != 64)
			continue;
		if (in->len < 3 || memcmp(p + 1, in->bytes + 1, 2))
			continue;
		for (n = 64; n > 0 && !p[n - 1]; n--)
			;
		hex(p, n, bytes);
		printf("#   slot %#lx: %s\n", a, bytes);
	}
	if (fd >= 0)
		close(fd);
}

/* Replay aid: both outcomes, the bytes the program sees, the slots. */
static void explain(const struct ifz_insn *in, const struct ifz_outcome *a,
		    const struct ifz_outcome *b, unsigned long ip)
{
	char bytes[64];

	dump_outcome("unprobed", a);
	dump_outcome("probed", b);
	hex((const uint8_t *)ip - 4, 12, bytes);
	printf("#   bytes at the instruction, from 4 before: %s\n", bytes);
	dump_slots(in);
}

/* A lazy-flags case's producer (after nops) and consumer. */
static void print_sides(const struct ifz_insn *in)
{
	char pre[32], post[32];

	if (!in->pre_len)
		return;
	hex(in->pre, in->pre_len, pre);
	hex(in->post, in->post_len, post);
	printf("#   after [%s], before [%s]\n", pre, post);
}

static void report(uint64_t seed, int batch, int cell, int state,
		   const struct ifz_insn *in, const char *what)
{
	static int last_batch = -1, last_cell = -1;
	char bytes[64];

	/* the first divergent run of a cell, for the first few cells */
	if (batch == last_batch && cell == last_cell && state >= 0)
		return;
	last_batch = batch;
	last_cell = cell;
	if (stats->reports++ >= IFZ_MAX_REPORTS)
		return;
	hex(in->bytes, in->len, bytes);
	printf("# DIVERGED seed %#llx batch %d cell %d state %d: %s [%s] (%s):%s\n",
	       (unsigned long long)seed, batch, cell, state, ifz_class_name(in->cls),
	       bytes, ifz_form_name(in->form), what);
	print_sides(in);
	printf("#   replay: uprobe_insnfuzz%s --seed %#llx --batch %d --states %d\n",
	       IFZ_COMPAT ? " --compat" : "", (unsigned long long)seed, batch, nstates);
}

/* A case that changed the runner's TLS (put back by run()): a failure. */
static int tls_report(uint64_t seed, int batch, int cell, int state,
		      const struct ifz_insn *in, const struct ifz_outcome *o,
		      const char *phase)
{
	char bytes[64];

	if (!o->tls)
		return 0;
	stats->tls_hits++;
	hex(in->bytes, in->len, bytes);
	printf("# RUNNER'S TLS seed %#llx batch %d cell %d state %d: %s [%s] (%s)",
	       (unsigned long long)seed, batch, cell, state, ifz_class_name(in->cls), bytes,
	       ifz_form_name(in->form));
	printf(" wrote %%fs%+d, %s\n", o->tls_off, phase);
	return 1;
}

#define IFZ_CLOSERS	32

struct ifz_closer {
	pthread_t thread;
	int *fd, n;
};

static void *closer(void *arg)
{
	struct ifz_closer *c = arg;
	int i;

	for (i = 0; i < c->n; i++)
		if (c->fd[i] >= 0)
			close(c->fd[i]);
	return NULL;
}

/*
 * Close the probes' events.  Each close waits for grace periods in the
 * perf tracepoint code (some 27 ms under TCG): closed from many threads
 * at once they share them.
 */
static void close_all(int *fd, int n)
{
	struct ifz_closer c[IFZ_CLOSERS];
	int i, per = (n + IFZ_CLOSERS - 1) / IFZ_CLOSERS;

	/*
	 * A 32-bit worker with threads of its own (closers, or one reaper)
	 * aborted in glibc after its last batch, "The futex facility
	 * returned an unexpected error code": it closes them itself.
	 */
	if (IFZ_COMPAT) {
		for (i = 0; i < n; i++)
			if (fd[i] >= 0)
				close(fd[i]);
		return;
	}

	for (i = 0; i < IFZ_CLOSERS; i++) {
		c[i].fd = fd + i * per;
		c[i].n = i * per >= n ? 0 : (n - i * per < per ? n - i * per : per);
		if (pthread_create(&c[i].thread, NULL, closer, &c[i]))
			closer(&c[i]), c[i].n = -1;
	}
	for (i = 0; i < IFZ_CLOSERS; i++)
		if (c[i].n >= 0)
			pthread_join(c[i].thread, NULL);
}

/*
 * The closes of a batch's events take longer than its runs, and perf
 * makes them one at a time (it holds event_mutex across the grace
 * periods): they go on in the background while the next batch runs.
 * That batch's code is a new file, so the probes being closed are on an
 * inode nobody maps any more.  The reaper, and the closers it starts,
 * block every signal: the timer and a case's faults are the main
 * thread's.  The compat worker closes them itself (see close_all()).
 */
struct ifz_reaper {
	pthread_t thread;
	bool busy;
	int n;
	int fd[IFZ_CELLS + 1];
};

static struct ifz_reaper reaper;

static void *reap(void *arg)
{
	struct ifz_reaper *r = arg;

	close_all(r->fd, r->n);
	return NULL;
}

/* Wait for the previous batch's events to be closed. */
static void reap_wait(void)
{
	if (reaper.busy)
		pthread_join(reaper.thread, NULL);
	reaper.busy = false;
}

/* Close @n events in @fd (and @ret_fd) in the background. */
static void reap_start(const int *fd, int n, int ret_fd)
{
	sigset_t all, old;

	reap_wait();
	memcpy(reaper.fd, fd, n * sizeof(*fd));
	reaper.fd[n] = ret_fd;
	reaper.n = n + 1;
	if (IFZ_COMPAT) {
		reap(&reaper);
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	reaper.busy = !pthread_create(&reaper.thread, NULL, reap, &reaper);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!reaper.busy)
		reap(&reaper);
}

/* Reruns of divergent cases: probe hits, and returns through enter1. */
static int ret_extra;

/* Is @in a locked read-modify-write of memory (lock, or xchg with memory)? */
static bool locked_rmw(const struct ifz_insn *in)
{
	int i;

	for (i = 0; i < in->len && i < 4; i++)
		if (in->bytes[i] == 0xf0)
			return true;
	for (i = 0; i < in->len - 1; i++)
		if (!strchr("\x26\x2e\x36\x3e\x64\x65\x66\x67\xf2\xf3",
			    in->bytes[i]) && (in->bytes[i] & 0xf0) != 0x40)
			break;
	/* the random class: a ModRM right after the opcode, mod 3 or not */
	if (in->cls == IFZ_RANDOM && i + 1 < in->len && in->bytes[i + 1] < 0xc0)
		return in->bytes[i] == 0x86 || in->bytes[i] == 0x87;
	return in->mem && (in->bytes[i] == 0x86 || in->bytes[i] == 0x87);
}

/*
 * QEMU's multi-threaded TCG runs a locked read-modify-write apart from its
 * translation block, and the flags after one that ran from a slot read
 * now and then as the last ones it computed itself (0x202 here, the
 * stub's): the same case on a one-CPU guest never differs.  Such a
 * difference, in eflags alone, is counted apart rather than failed.
 */
static bool qemu_atomic_flags(const struct ifz_insn *in, const struct ifz_outcome *a,
			      const struct ifz_outcome *b)
{
	struct ifz_outcome c = *b;
	char what[16];

	if (!locked_rmw(in))
		return false;
	c.gregs[REG_EFL] = a->gregs[REG_EFL];
	return !differ(a, &c, what, sizeof(what));
}

/*
 * A divergent case runs twice more, probed, to tell the instruction from
 * timing: one that does not come back still fails the run, counted apart.
 */
static void confirm(struct ifz_batch *b, int i, int k, int *extra)
{
	struct ifz_outcome o;
	char what[16];
	int n;

	for (n = 0; n < 2; n++) {
		run(&o, entry_of(b->in, i), &b->st[i][k], k & 1);
		++*extra;
		ret_extra += k & 1;
		if (!differ(&b->plain[i][k], &o, what, sizeof(what))) {
			stats->unstable++;
			return;
		}
	}
}

/*
 * One batch: generate, run unprobed, probe, run again, compare.
 * Returns the number of divergent runs, or -errno for a harness failure.
 */
static int do_batch(const struct ut_pmu *pmu, uint64_t seed, int batch, bool verbose)
{
	static struct ifz_batch b;
	struct ifz_outcome o;
	struct ifz_rng r;
	char path[PATH_MAX], what[2048];
	int i, k, ret_fd, err = 0, bad = 0, extra[IFZ_CELLS] = { 0 };
	double t0, t1, t2;

	snprintf(path, sizeof(path), "%s/uprobe_insnfuzz.%d.code",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", getpid());
	ifz_seed(&r, seed, batch);
	t0 = now();
	for (i = 0; i < (int)(IFZ_CMP_BYTES / 8); i++)
		((uint64_t *)pristine)[i] = ifz_rn(&r, 4) ? ifz_rnd(&r) : ifz_rn(&r, 512);
	for (i = 0; i < IFZ_CELLS; i++) {
		unsigned long ip = IFZ_CELL(i) + IFZ_CELL_INSN;

		ifz_gen_insn(&r, &env, ip, &b.in[i]);
		for (k = 0; k < nstates; k++)
			ifz_gen_state(&r, &env, &b.in[i], ip, &b.st[i][k]);
	}
	err = write_code(path, &b);
	if (err)
		return err;
	stats->t_gen += now() - t0;
	t0 = now();

	for (i = 0; i < IFZ_CELLS; i++) {
		if (trace_fd >= 0) {
			char bytes[64];

			hex(b.in[i].bytes, b.in[i].len, bytes);
			dprintf(trace_fd, "insnfuzz: batch %d cell %d %s [%s]\n", batch, i,
				ifz_class_name(b.in[i].cls), bytes);
		}
		for (k = 0; k < nstates; k++) {
			run(&b.plain[i][k], entry_of(b.in, i), &b.st[i][k], k & 1);
			bad += tls_report(seed, batch, i, k, &b.in[i], &b.plain[i][k],
					  "unprobed");
			if (b.plain[i][k].timeout)
				report(seed, batch, i, k, &b.in[i], " timed out unprobed");
		}
	}

	t1 = now();
	ret_fd = unprobed_only ? -1 :
		 ut_pmu_open(pmu, path, IFZ_STUB_ENTER_RET, true, 0, false, 0, -1);
	if (ret_fd < 0 && !unprobed_only) {
		err = ret_fd;
		goto out;
	}
	for (i = 0; i < IFZ_CELLS; i++)
		b.fd[i] = -1;
	for (i = 0; i < IFZ_CELLS; i++) {
		b.fd[i] = unprobed_only ? -1 :
			  ut_pmu_open(pmu, path, IFZ_CELL(i) - IFZ_CODE + IFZ_CELL_INSN,
				      false, 0, false, 0, -1);
		if (b.fd[i] == -EMFILE || b.fd[i] == -ENOMEM || b.fd[i] == -ENOENT) {
			err = b.fd[i];
			goto out_close;
		}
	}

	t2 = now();
	xol_lo = 0;
	xol_hi = 0;
	tramp = 0;
	ret_extra = 0;
	for (i = 0; i < IFZ_CELLS; i++) {
		const struct ifz_insn *in = &b.in[i];

		stats->cases[in->cls] += nstates;
		stats->forms[in->cls][in->form] += nstates;
		if (b.fd[i] < 0)
			stats->refused[in->cls] += nstates;
		else
			stats->probed[in->cls] += nstates;
		for (k = 0; k < nstates; k++) {
			run(&o, entry_of(b.in, i), &b.st[i][k], k & 1);
			if (!xol_hi && !unprobed_only)
				find_xol_area();
			stats->runs++;
			stats->timeouts += o.timeout;
			bad += tls_report(seed, batch, i, k, in, &o, "probed");
			if (b.fd[i] >= 0)
				stats->probed_runs++;
			if (!differ(&b.plain[i][k], &o, what, sizeof(what)))
				continue;
			if (qemu_atomic_flags(in, &b.plain[i][k], &o)) {
				stats->qemu_flags++;
				continue;
			}
			confirm(&b, i, k, &extra[i]);
			stats->diverged[in->cls]++;
			bad++;
			report(seed, batch, i, k, in, what);
			if (verbose)
				explain(in, &b.plain[i][k], &o, IFZ_CELL(i) + IFZ_CELL_INSN);
		}
		if (verbose) {
			char bytes[64];

			hex(in->bytes, in->len, bytes);
			printf("# cell %3d %-16s %-9s %s [%s]\n", i, ifz_class_name(in->cls),
			       ifz_form_name(in->form), b.fd[i] < 0 ? "refused" : "probed ",
			       bytes);
			print_sides(in);
		}
	}

	stats->t_plain += t1 - t0;
	stats->t_probe += t2 - t1;
	stats->t_probed += now() - t2;
	stats->batches++;

	/* every probe counted every run; the return probe every entry1 run */
	for (i = 0; i < IFZ_CELLS; i++) {
		uint64_t n = 0;

		if (b.fd[i] < 0)
			continue;
		if (read(b.fd[i], &n, sizeof(n)) != sizeof(n) ||
		    n != (uint64_t)nstates + extra[i]) {
			stats->count_errors++;
			snprintf(what, sizeof(what), " the probe counted %lu of %d runs",
				 (unsigned long)n, nstates);
			report(seed, batch, i, -1, &b.in[i], what);
			bad++;
		}
	}
	if (ret_fd >= 0) {
		uint64_t n = 0;

		if (read(ret_fd, &n, sizeof(n)) != sizeof(n) ||
		    n != IFZ_CELLS * nstates / 2 + ret_extra) {
			stats->retprobe_errors++;
			printf("# the return probe counted %lu of %d returns\n",
			       (unsigned long)n, IFZ_CELLS * nstates / 2 + ret_extra);
			bad++;
		}
	}
out_close:
	t0 = now();
	munmap((void *)IFZ_CODE, 0x1000 + IFZ_CELLS * IFZ_CELL_BYTES);
	unlink(path);
	reap_start(b.fd, IFZ_CELLS, ret_fd);
	stats->t_close += now() - t0;
	return err ? err : bad;
out:
	munmap((void *)IFZ_CODE, 0x1000 + IFZ_CELLS * IFZ_CELL_BYTES);
	unlink(path);
	return err;
}

static void print_coverage(void)
{
	int c, f;

	printf("# %-18s %8s %8s %8s %8s  forms\n", "class", "cases", "probed",
	       "refused", "diverged");
	for (c = 0; c < IFZ_NCLASS; c++) {
		printf("# %-18s %8lu %8lu %8lu %8lu ", ifz_class_name(c),
		       stats->cases[c], stats->probed[c], stats->refused[c],
		       stats->diverged[c]);
		for (f = 0; f < IFZ_NFORM; f++)
			if (stats->forms[c][f])
				printf(" %s:%lu", ifz_form_name(f), stats->forms[c][f]);
		printf("\n");
	}
	if (!env.avx)
		printf("# not reached: VEX-encoded classes (no AVX here)\n");
	if (IFZ_COMPAT)
		printf("# 32-bit code: emul mov mem, lea, jmp * and call * are stepped there\n");
	printf("# not reached: EVEX (AVX-512: QEMU TCG has none), %s\n",
	       IFZ_COMPAT ? "64-bit code (uprobe_insnfuzz)" :
			    "32-bit code (uprobe_insnfuzz --compat)");
	/* see insnfuzz_gen.c: each is a QEMU 7.2 TCG behaviour */
	printf("# not reached (QEMU 7.2): %s, adcx, adox, lazy setcc/rcl/rcr on memory\n",
	       IFZ_COMPAT ? "gathers" : "gathers indexed by %xmm4");
	/* see emit_fninit() */
	printf("# x87 FIP/FDP/FOP: zeroed for each case, not in frames (QEMU 7.2's xsave\n"
	       "#   stores zeros): only an fnstenv after an x87 op in the same case sees them\n");
	printf("# runs %lu (probed %lu), timeouts %lu, count errors %lu\n",
	       stats->runs, stats->probed_runs, stats->timeouts, stats->count_errors);
	printf("# divergent runs that did not come back when run again: %lu\n",
	       stats->unstable);
	printf("# runs that changed the runner's TLS: %lu\n", stats->tls_hits);
	printf("# locked memory ops with only eflags differing (QEMU MTTCG, not counted): %lu\n",
	       stats->qemu_flags);
	printf("# timer signals %lu: %lu in a case, %lu on the return trampoline, %lu in a slot\n",
	       stats->ticks, stats->case_ticks, stats->tramp_ticks, stats->slot_ticks);
}

/* Every class the generator knows was probed at least once (or refused). */
static const char *uncovered(void)
{
	int c;

	for (c = 0; c < IFZ_NCLASS; c++) {
		if ((c == IFZ_AVX || c == IFZ_BMI) && !env.avx)
			continue;
		if (c == IFZ_BMI && !env.bmi2)
			continue;
		if (c == IFZ_REFUSED && !stats->refused[c])
			return ifz_class_name(c);
		if (c == IFZ_RANDOM && !stats->cases[c])
			return ifz_class_name(c);
		if (c != IFZ_REFUSED && c != IFZ_RANDOM && !stats->probed[c])
			return ifz_class_name(c);
	}
	return NULL;
}

/* One worker: batches @first + @w, + @step, ... until @batches or @seconds. */
static long worker(int w, int step, uint64_t seed, int first, int batches,
		   double seconds, bool verbose)
{
	struct rlimit rl = { 4096, 4096 };
	double t0 = now();
	struct ut_pmu pmu;
	long n, bad = 0;
	int b;

	setrlimit(RLIMIT_NOFILE, &rl);
	ut_pmu_init(&pmu);
	if (!unprobed_only && (pmu.type < 0 || pmu.retprobe_bit < 0))
		return -ENOENT;
	n = setup_machine(w % get_nprocs());
	if (!n)
		n = setup_signals();
	if (n)
		return n;
	for (b = first + w; !batches || b < first + batches; b += step) {
		if (stride)
			printf("# batch %d, %.0f s\n", b, now() - t0);
		n = do_batch(&pmu, seed, b, verbose);
		if (n < 0) {
			printf("# batch %d: %s\n", b, strerror(-n));
			bad = n;
			break;
		}
		bad += n;
		if (!w && !verbose && stats->batches % 25 == 0)
			printf("# batch %d, %.0f s, %ld divergent so far\n", b,
			       now() - t0, bad);
		if (seconds && now() - t0 >= seconds)
			break;
	}
	reap_wait();
	stop_signals();
	return bad ? bad : stats->slot_ticks ? 1 : 0;
}

/*
 * Run @jobs workers (one per CPU, each pinned, each with its own fixed
 * mappings) and add up what they found in the global stats.  Returns the
 * number of divergences and miscounts, or -errno for a harness failure.
 */
static long fuzz(uint64_t seed, int first, int batches, double seconds,
		 bool verbose, int jobs)
{
	struct ifz_stats *all, *sum;
	double t0 = now();
	long ret = 0;
	int w, c, status;
	size_t i;

	detect_env();
	all = mmap(NULL, (jobs + 1) * sizeof(*all), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED)
		return -ENOMEM;
	fflush(stdout);
	for (w = 0; w < jobs; w++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (!pid) {
			stats = &all[w];
			stats->result = worker(w, stride ? stride : jobs, seed, first,
					       batches, seconds, verbose);
			stats->done = 1;
			fflush(stdout);
			_exit(0);
		}
	}
	sum = &all[jobs];
	for (w = 0; w < jobs; w++) {
		if (wait(&status) < 0 || !WIFEXITED(status)) {
			printf("# a worker died: status %#x\n", status);
			ret = -EIO;
		}
	}
	/* a case's exit (int $0x80 with eax 1 did) must not pass for a pass */
	for (w = 0; w < jobs; w++) {
		if (!all[w].done && !ret) {
			printf("# worker %d exited in a case\n", w);
			ret = -EIO;
		}
	}
	for (w = 0; w < jobs; w++) {
		unsigned long *src = (unsigned long *)&all[w], *dst = (unsigned long *)sum;

		/* every field up to the times is a counter */
		for (i = 0; i < offsetof(struct ifz_stats, t_gen) / sizeof(long); i++)
			dst[i] += src[i];
		sum->t_gen += all[w].t_gen;
		sum->t_close += all[w].t_close;
		sum->t_plain += all[w].t_plain;
		sum->t_probe += all[w].t_probe;
		sum->t_probed += all[w].t_probed;
		if (all[w].result < 0 && !ret)
			ret = all[w].result;
		else if (ret >= 0)
			ret += all[w].result;
	}
	stats = sum;
	printf("# seed %#llx, %lu batches from %d, %d workers, %.1f s\n",
	       (unsigned long long)seed, sum->batches, first, jobs, now() - t0);
	printf("# per worker: %.1f s generating, %.1f s unprobed, %.1f s probing,",
	       sum->t_gen / jobs, sum->t_plain / jobs, sum->t_probe / jobs);
	printf(" %.1f s probed, %.1f s closing\n", sum->t_probed / jobs,
	       sum->t_close / jobs);
	print_coverage();
	for (w = 0; w < jobs; w++)
		for (c = 0; c < (int)ARRAY_SIZE(all[w].slot_off) &&
		     (unsigned long)c < all[w].slot_ticks; c++)
			printf("# a timer signal saw ip at [uprobes] + %#lx\n",
			       all[w].slot_off[c]);
	return ret;
}

/*
 * The fixed-seed slice: 5 batches, 20,480 cases (~50 s); in the compat
 * runner 4 batches, 16,384 cases.  Returns a failure's description, or
 * NULL when everything ran, nothing diverged and every class was probed.
 */
static const char *slice(char *buf, size_t len)
{
	int batches = IFZ_COMPAT ? IFZ_CHECK32_BATCHES : IFZ_CHECK_BATCHES;
	long ret;

	nstates = IFZ_SLICE_STATES;
	ret = fuzz(IFZ_SEED, 0, batches, 0, false, get_nprocs());
	if (ret < 0)
		snprintf(buf, len, "harness failure: %s", strerror(-ret));
	else if (ret)
		snprintf(buf, len, "%ld divergent runs or miscounted probes", ret);
	else if (stats->slot_ticks)
		snprintf(buf, len, "a signal interrupted the program in a slot");
	else if (stats->runs != (unsigned long)batches * IFZ_CELLS * nstates)
		snprintf(buf, len, "%lu runs of %d", stats->runs,
			 batches * IFZ_CELLS * nstates);
	else if (uncovered())
		snprintf(buf, len, "class not covered: %s", uncovered());
	else
		return NULL;
	return buf;
}

FIXTURE(insn) {};
FIXTURE_SETUP(insn) {}
FIXTURE_TEARDOWN(insn) {}

TEST_F_TIMEOUT(insn, probed_instructions_compute_what_unprobed_ones_do, 900)
{
	char buf[128];
	const char *why = slice(buf, sizeof(buf));

	EXPECT_TRUE(!why) TH_LOG("%s", why);
}

#if !IFZ_COMPAT
/* Run uprobe_insnfuzz32 with @args; its exit status, or -1. */
static int run_compat(char *const *args)
{
	char path[PATH_MAX];
	char *argv[32] = { path };
	int i, status;
	pid_t pid;

	ut_path(path, sizeof(path), "uprobe_insnfuzz32");
	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	fflush(stdout);
	pid = fork();
	if (!pid) {
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/*
 * The compat slice: the same fuzzer built -m32 (uprobe_insnfuzz32), on
 * 32-bit code in a compat task.  Skipped when it could not be built (no
 * -m32 toolchain) or 32-bit programs do not run here.
 */
TEST_F_TIMEOUT(insn, compat_instructions_compute_what_unprobed_ones_do, 600)
{
	char *const args[] = { "--slice", NULL };
	char path[PATH_MAX];
	int status;

	ut_path(path, sizeof(path), "uprobe_insnfuzz32");
	if (access(path, X_OK))
		SKIP(return, "no %s (built without -m32 support)", path);
	status = run_compat(args);
	if (status == 127 << 8)
		SKIP(return, "32-bit programs do not run here (CONFIG_IA32_EMULATION?)");
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP)
		SKIP(return, "uprobe_insnfuzz32 skipped");
	EXPECT_EQ(0, status) TH_LOG("uprobe_insnfuzz32 --slice ended with status %#x",
				    status);
}
#endif

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "batch", required_argument, NULL, 'b' },
		{ "batches", required_argument, NULL, 'n' },
		{ "trace", no_argument, NULL, 'T' },
		{ "ignore-int3-trapno", no_argument, NULL, 'I' },
		{ "unprobed", no_argument, NULL, 'U' },
		{ "stride", required_argument, NULL, 'S' },
		{ "from", required_argument, NULL, 'F' },
		{ "slice", no_argument, NULL, 'L' },
		{ "compat", no_argument, NULL, 'C' },
		{ "states", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t seed = IFZ_SEED;
	int c, first = 0, batches = 0;
	long ret;
	double seconds = 0;
	bool cli = false, verbose = false, do_slice = false, compat = false;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		cli = true;
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'b':
			first = atoi(optarg);
			batches = 1;
			verbose = true;
			break;
		case 'n':
			batches = atoi(optarg);
			break;
		case 'T':
			trace_fd = 1;
			break;
		case 'I':
			ignore_int3_trapno = true;
			break;
		case 'U':
			unprobed_only = true;
			break;
		case 'S':
			stride = atoi(optarg);
			break;
		case 'F':
			first = atoi(optarg);
			break;
		case 'L':
			do_slice = true;
			break;
		case 'C':
			compat = true;
			break;
		case 'K':
			nstates = atoi(optarg) & ~1;
			if (nstates < 2 || nstates > IFZ_MAX_STATES)
				return 2;
			break;
		default: return 2;
		}
	}
#if !IFZ_COMPAT
	/* --compat: everything else is uprobe_insnfuzz32's */
	if (compat) {
		char *args[32];
		int i, n = 0, status;

		for (i = 1; i < argc && n < 31; i++)
			if (strcmp(argv[i], "--compat"))
				args[n++] = argv[i];
		args[n] = NULL;
		status = run_compat(args);
		if (status == 127 << 8)
			printf("# uprobe_insnfuzz32 did not run (built? CONFIG_IA32_EMULATION?)\n");
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
#else
	(void)compat;
#endif
	if (geteuid() && !unprobed_only)
		ksft_exit_skip("uprobes tests need root\n");
	if (!cli)
		return test_harness_run(argc, argv);
	if (do_slice) {
		char buf[128];
		const char *why;

		setvbuf(stdout, NULL, _IOLBF, 0);
		why = slice(buf, sizeof(buf));
		printf("# %s\n", why ? why : "the slice passed");
		return why ? 1 : 0;
	}
	if (!seconds && !batches)
		seconds = 1500;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = fuzz(seed, first, batches, seconds, verbose,
		   verbose || stride ? 1 : get_nprocs());
	if (ret < 0)
		printf("# harness failure: %s\n", strerror(-ret));
	printf("%s\n", ret ? "FAIL" : "PASS");
	return ret ? 1 : 0;
}
