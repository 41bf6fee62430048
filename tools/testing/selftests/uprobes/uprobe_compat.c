// SPDX-License-Identifier: GPL-2.0
/*
 * 32-bit (compat) tasks: hits counted, a stepped and an emulated
 * instruction keep their effect, arguments read from the 32-bit stack,
 * return probes through recursion.  Skipped, with the reason, when the
 * 32-bit target could not be built (no -m32 toolchain).
 *
 * Also 32-bit code run by a 64-bit process (the far32 cases), which needs
 * no -m32 toolchain: see far32_code below.
 */
#include "../kselftest_harness.h"
#include "uprobe_lib.h"

#include <assert.h>
#include <stddef.h>

#define GRP "ust_compat"

FIXTURE(compat) {
	struct ut_ctx c;
	char target[PATH_MAX];
};

FIXTURE_SETUP(compat)
{
	ut_ctx_init(&self->c, GRP, _metadata->name);
	ut_path(self->target, sizeof(self->target), "uprobe_target32");
}

FIXTURE_TEARDOWN(compat)
{
	ut_ctx_cleanup(&self->c);
}

#define NEED_TARGET32() do {							\
	char *const __a[] = { "lea", "1", "1", "1", NULL };			\
	char __o[64];								\
	if (access(self->target, X_OK))						\
		SKIP(return, "no 32-bit target %s (built without -m32 support)", \
		     self->target);						\
	if (ut_run("uprobe_target32", __a, __o, sizeof(__o)) == 127 << 8)	\
		SKIP(return, "32-bit programs do not run here (CONFIG_IA32_EMULATION?)"); \
} while (0)

/* Run the 32-bit target; it must exit 0 and print @want. */
#define RUN32(want, ...) do {							\
	char *const __a[] = { __VA_ARGS__, NULL };				\
	char __out[128];							\
	int __st = ut_run("uprobe_target32", __a, __out, sizeof(__out));	\
	EXPECT_EQ(0, __st) TH_LOG("the 32-bit target ended with status 0x%x", __st); \
	EXPECT_STREQ(want "\n", __out);						\
} while (0)

/* A stepped instruction in a compat task: right result, every hit counted. */
TEST_F(compat, stepped_probe_counts_and_keeps_result)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_lea");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	RUN32("ok 9", "lea", "200", "4", "5");
	EXPECT_EQ(200, UT_HITS(0));
}

/* An emulated push in a compat task pushes 4 bytes, not 8. */
TEST_F(compat, emulated_push_keeps_result)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_push");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_ENABLE(0, true);
	RUN32("ok 8", "push", "150", "7");
	EXPECT_EQ(150, UT_HITS(0));
}

/* cdecl arguments read from the 32-bit stack. */
TEST_F(compat, stack_arguments_read_right)
{
	char line[512], v[64];
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_args");
	UT_PROBE(0, 'p', self->target, off, NULL,
		 "a=+4(%sp):s32 b=+8(%sp):s32 ret=+0(%sp):x32");
	UT_ENABLE(0, true);
	RUN32("ok 4", "args", "1", "-3", "2", "hello");
	ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), 0, line, sizeof(line)))
		TH_LOG("no trace line for the hit");
	ASSERT_EQ(0, ut_field(line, "a", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("-3", v);
	ASSERT_EQ(0, ut_field(line, "b", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_STREQ("2", v);
	ASSERT_EQ(0, ut_field(line, "ret", v, sizeof(v))) TH_LOG("line: %s", line);
	EXPECT_EQ(0, strncmp(v, "0x", 2)) TH_LOG("the return address: %s", v);
	EXPECT_NE(0, strtoul(v, NULL, 16)) TH_LOG("the return address: %s", v);
}

/* Return probes in a compat task: every level of a recursion, right values. */
TEST_F(compat, return_probe_through_recursion)
{
	char line[512], v[64], want[16];
	long off;
	int i;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_depth");
	UT_PROBE(0, 'r', self->target, off, NULL, "ret=$retval:s32");
	UT_ENABLE(0, true);
	RUN32("ok 12", "depth", "1", "12");
	ASSERT_EQ(13, UT_LINES(0, 0));
	for (i = 0; i <= 12; i++) {
		ASSERT_EQ(0, ut_trace_line(ut_ev(&self->c, 0), i, line, sizeof(line)));
		ASSERT_EQ(0, ut_field(line, "ret", v, sizeof(v)));
		snprintf(want, sizeof(want), "%d", i);
		EXPECT_STREQ(want, v) TH_LOG("return %d", i);
	}
}

/* Entry and return probes together in a compat task, many calls. */
TEST_F(compat, entry_and_return_probes_count_the_same_calls)
{
	long off;

	NEED_TARGET32();
	UT_SYM(off, self->target, "ut32_args");
	UT_PROBE(0, 'p', self->target, off, NULL, NULL);
	UT_PROBE(1, 'r', self->target, off, NULL, "ret=$retval:s32");
	UT_ENABLE(0, true);
	UT_ENABLE(1, true);
	RUN32("ok 5", "args", "100", "1", "1", "abc");
	EXPECT_EQ(100, UT_HITS(0));
	EXPECT_EQ(100, UT_LINES(1, 0));
}

/*
 * The probe is analysed in the first mm that maps its file.  Here that
 * is this 64-bit test, which maps the 32-bit target read-only before the
 * event is enabled, so the plan is made for 64-bit code; the 32-bit
 * target's hits must still run its instructions as 32-bit code, with
 * every hit counted, and finish (a plan of the wrong mode once made each
 * hit retry its step forever).
 */
TEST_F(compat, probe_first_mapped_by_64bit_process_runs_in_32bit_task)
{
	static const char *const fns[] = { "ut32_lea", "ut32_push" };
	char *const args[2][5] = { { "lea", "50", "4", "5", NULL },
				   { "push", "50", "7", NULL } };
	static const char *const want[] = { "ok 9", "ok 8" };
	struct ut_target *t;
	char out[128];
	unsigned int i;
	long off;
	void *map;
	int fd, st, waited;

	NEED_TARGET32();
	fd = open(self->target, O_RDONLY);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	close(fd);
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		UT_SYM(off, self->target, fns[i]);
		UT_PROBE(i, 'p', self->target, off, NULL, NULL);
		UT_ENABLE(i, true);
	}
	for (i = 0; i < ARRAY_SIZE(fns); i++) {
		UT_START(t, "uprobe_target32", args[i]);
		/* A thread trapping forever never exits: give it 20 s. */
		for (waited = 0; waited < 2000; waited++) {
			if (waitpid(t->pid, &st, WNOHANG) == t->pid)
				break;
			usleep(10000);
		}
		ASSERT_GT(2000, waited) TH_LOG("the 32-bit %s did not finish", fns[i]);
		t->pid = 0;
		EXPECT_EQ(0, st) TH_LOG("the 32-bit target ended with 0x%x", st);
		out[0] = '\0';
		if (!fgets(out, sizeof(out), t->from))
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		fclose(t->from);
		close(t->to);
		EXPECT_STREQ(want[i], out);
		EXPECT_EQ(50, UT_HITS(i)) TH_LOG("hits of %s", fns[i]);
	}
	munmap(map, 1 << 20);
}

/*
 * 32-bit code run by a 64-bit process: a far jump to the compat code
 * segment (__USER32_CS) and one back to the 64-bit one (__USER_CS), as
 * Wine and emulators do it.  (Not a far return: QEMU 7.2's TCG makes its
 * stack reads as supervisor accesses, which SMAP turns into a page fault
 * that the guest kernel takes for its own, an oops.)  The code is a file
 * of its own in /tmp, mapped below 4 GiB, and so are its stack and data,
 * since 32-bit code keeps only EIP and ESP.  The probes are analysed as
 * 64-bit code (the first mm that maps the file is this test's, a 64-bit
 * one), where 40-4f are REX prefixes: each hit must run what the 32-bit
 * code means, with a 4-byte stack word and ip arithmetic wrapping at
 * 4 GiB.  Each run is a child process, compared with the same run
 * unprobed: the registers, the data it stores, the 64 bytes at the top of
 * its stack, its exit status; and the file must read the same.
 */
#define FAR32_CS	0x23	/* __USER32_CS */
#define FAR64_CS	0x33	/* __USER_CS */
#define FAR32_DS	0x2b	/* __USER_DS: compat mode checks null selectors */

/* File page 0: the 64-bit way in and out, and the 32-bit code. */
#define FAR32_ENTRY64	0x000
#define FAR32_ENTRY64_HI 0x040	/* entry64 setting bit 32 of %rsp before its ljmp */
#define FAR32_EXIT64	0x080
#define FAR32_CODE32	0x100
#define FAR32_F		0x180
/* File page 1, mapped at FAR32_HI and at FAR32_LO: ip wraps between them. */
#define FAR32_WRAP	0x1000
#define FAR32_HI	0xffffe000UL
#define FAR32_HI_STACK	0xfffff000UL	/* the wrap case's data and stack */
#define FAR32_LO	0x20000000UL
#define FAR32_FILE_LEN	(2 * UT_PAGE)

/* What entry64 and the 32-bit code use: the offsets are in the code. */
struct far32_ctx {
	uint32_t in[6];		/* 0x00: eax ebx ecx edx esi ebp */
	uint32_t out[8];	/* 0x18: eax ebx ecx edx esi ebp esp eflags */
	uint32_t far_eip;	/* 0x38: the m16:32 operand of the ljmp */
	uint16_t far_cs;
	uint16_t pad;
	uint64_t rsp64;		/* 0x40: the 64-bit stack pointer, kept */
	uint32_t esp32;		/* 0x48: the 32-bit stack pointer to start with */
	uint16_t ds, es;	/* 0x4c: the 64-bit selectors, kept */
	uint32_t mem[8];	/* 0x50: what the 32-bit code stores */
	uint32_t far64_eip;	/* 0x70: the way back, exit64 in __USER_CS */
	uint16_t far64_cs;
	uint16_t pad2;
};

static_assert(offsetof(struct far32_ctx, mem) == 0x50 &&
	      offsetof(struct far32_ctx, far64_eip) == 0x70,
	      "the offsets the code uses");

static const uint8_t far32_entry64[] = {
	0x53, 0x55, 0x41, 0x54, 0x41, 0x55,	/* push %rbx, %rbp, %r12, %r13 */
	0x41, 0x56, 0x41, 0x57,			/* push %r14, %r15 */
	0x48, 0x89, 0x67, 0x40,			/* mov %rsp, 0x40(%rdi) */
	0x8c, 0x5f, 0x4c,			/* mov %ds, 0x4c(%rdi) */
	0x8c, 0x47, 0x4e,			/* mov %es, 0x4e(%rdi) */
	0xb8, FAR32_DS, 0, 0, 0,		/* mov $__USER_DS, %eax */
	0x8e, 0xd8, 0x8e, 0xc0,			/* mov %eax, %ds; mov %eax, %es */
	0x8b, 0x67, 0x48,			/* mov 0x48(%rdi), %esp */
	0x8b, 0x07,				/* mov (%rdi), %eax */
	0x8b, 0x5f, 0x04,			/* mov 0x4(%rdi), %ebx */
	0x8b, 0x4f, 0x08,			/* mov 0x8(%rdi), %ecx */
	0x8b, 0x57, 0x0c,			/* mov 0xc(%rdi), %edx */
	0x8b, 0x77, 0x10,			/* mov 0x10(%rdi), %esi */
	0x8b, 0x6f, 0x14,			/* mov 0x14(%rdi), %ebp */
	0xff, 0x6f, 0x38,			/* ljmp *0x38(%rdi) */
};

/* Reached by the 32-bit code's ljmp, %edi still the context. */
static const uint8_t far32_exit64[] = {
	0x89, 0xff,				/* mov %edi, %edi */
	0x89, 0x47, 0x18,			/* mov %eax, 0x18(%rdi) */
	0x89, 0x5f, 0x1c,			/* mov %ebx, 0x1c(%rdi) */
	0x89, 0x4f, 0x20,			/* mov %ecx, 0x20(%rdi) */
	0x89, 0x57, 0x24,			/* mov %edx, 0x24(%rdi) */
	0x89, 0x77, 0x28,			/* mov %esi, 0x28(%rdi) */
	0x89, 0x6f, 0x2c,			/* mov %ebp, 0x2c(%rdi) */
	0x89, 0x67, 0x30,			/* mov %esp, 0x30(%rdi) */
	0x9c, 0x58,				/* pushfq; pop %rax */
	0x89, 0x47, 0x34,			/* mov %eax, 0x34(%rdi) */
	0x48, 0x8b, 0x67, 0x40,			/* mov 0x40(%rdi), %rsp */
	0x8e, 0x5f, 0x4c,			/* mov 0x4c(%rdi), %ds */
	0x8e, 0x47, 0x4e,			/* mov 0x4e(%rdi), %es */
	0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d,	/* pop %r15, %r14, %r13 */
	0x41, 0x5c, 0x5d, 0x5b,			/* pop %r12, %rbp, %rbx */
	0xc3,					/* ret */
};

/*
 * The 32-bit code, and what each probed instruction is to our kernel in
 * 32-bit mode (the 64-bit decoding, which the probe is analysed with,
 * in brackets where it differs).
 */
static const uint8_t far32_code32[] = {
	0x40,				/* 100 inc %eax		stepped [40 89 c3: mov] */
	0x89, 0xc3,			/* 101 mov %eax, %ebx */
	0x4a,				/* 103 dec %edx		stepped [4a 01 d8: add, REX.WX] */
	0x01, 0xd8,			/* 104 add %ebx, %eax */
	0x53,				/* 106 push %ebx	emulated */
	0x59,				/* 107 pop %ecx		emulated */
	0xe8, 0x73, 0, 0, 0,		/* 108 call f		emulated */
	0xeb, 0x02,			/* 10d jmp 111		emulated */
	0xf4, 0xf4,			/* 10f hlt (not run) */
	0x69, 0xc1, 0x67, 0x45, 0x23, 0x01, /* 111 imul $0x1234567, %ecx, %eax  stepped */
	0x6a, 0x05,			/* 117 push $5		stepped */
	0x01, 0x04, 0x24,		/* 119 add %eax, (%esp)	stepped */
	0x89, 0x47, 0x50,		/* 11c mov %eax, 0x50(%edi)  stepped */
	0x5d,				/* 11f pop %ebp		emulated */
	0xe9, 0x01, 0, 0, 0,		/* 120 jmp 126		emulated */
	0xf4,				/* 125 hlt (not run) */
	0xff, 0x6f, 0x70,		/* 126 ljmp *0x70(%edi) (to exit64) */
};

/*
 * Where entry64_hi enters the 32-bit code: a probed pop before any other
 * stack operation (one would leave %rsp's upper half clear), the word put
 * back, then the code above.
 */
#define FAR32_POP_FIRST	0x140
static const uint8_t far32_pop_first[] = {
	0x59,				/* 140 pop %ecx		emulated */
	0x51,				/* 141 push %ecx */
	0xe9, 0xb9, 0xff, 0xff, 0xff,	/* 142 jmp 100 */
};

static const uint8_t far32_f[] = {
	0x89, 0xd6,			/* 180 mov %edx, %esi	emulated */
	0xba, 0x78, 0x56, 0x34, 0x12,	/* 182 mov $0x12345678, %edx  emulated */
	0xc3,				/* 187 ret		emulated */
};

struct far32_site {
	unsigned int off;
	char what[48];
	bool stepped;	/* stepped out of line in 32-bit mode, not emulated */
};

static const struct far32_site far32_sites[] = {
	{ 0x100, "inc %eax (40, a REX prefix in 64-bit code)", true },
	{ 0x103, "dec %edx (4a, a REX prefix in 64-bit code)", true },
	{ 0x106, "push %ebx", false },
	{ 0x107, "pop %ecx", false },
	{ 0x108, "call rel32", false },
	{ 0x10d, "jmp rel8", false },
	{ 0x111, "imul $imm32, %ecx, %eax", true },
	{ 0x117, "push $5", true },
	{ 0x119, "add %eax, (%esp)", true },
	{ 0x11c, "mov %eax, 0x50(%edi)", true },
	{ 0x11f, "pop %ebp", false },
	{ 0x120, "jmp rel32", false },
	{ 0x180, "mov %edx, %esi", false },
	{ 0x182, "mov $imm32, %edx", false },
	{ 0x187, "ret", false },
};

/*
 * File page 1, run at FAR32_HI and FAR32_LO with %esp wrapping through 0:
 * every probed instruction here is emulated.  The two displacements cross
 * 4 GiB: what they reach is what the CPU reaches, modulo 2^32.
 */
#define FAR32_W_G	0x80	/* g, run at FAR32_LO */
#define FAR32_W_CONT	0xa0	/* the way out, run at FAR32_LO */

static const struct far32_site far32_wrap_sites[] = {
	{ FAR32_WRAP + 0x00, "mov %esp, %ebp", false },
	{ FAR32_WRAP + 0x02, "mov $0, %esp", false },
	{ FAR32_WRAP + 0x07, "push %ebx (%esp wraps to 0xfffffffc)", false },
	{ FAR32_WRAP + 0x08, "call rel32 (ip wraps past 4 GiB)", false },
	{ FAR32_WRAP + 0x0d, "jmp rel32 (ip wraps past 4 GiB)", false },
	{ FAR32_WRAP + FAR32_W_G, "ret (to the top of 4 GiB)", false },
	{ FAR32_WRAP + FAR32_W_CONT, "pop %ecx (%esp wraps to 0)", false },
	{ FAR32_WRAP + FAR32_W_CONT + 1, "mov %ebp, %esp", false },
};

static void far32_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void far32_wrap_page(uint8_t *w)
{
	static const uint8_t head[] = {
		0x89, 0xe5,			/* 00 mov %esp, %ebp */
		0xbc, 0, 0, 0, 0,		/* 02 mov $0, %esp */
		0x53,				/* 07 push %ebx */
		0xe8, 0, 0, 0, 0,		/* 08 call g (at FAR32_LO) */
		0xe9, 0, 0, 0, 0,		/* 0d jmp cont (at FAR32_LO) */
	};
	static const uint8_t cont[] = {
		0x59,				/* a0 pop %ecx */
		0x89, 0xec,			/* a1 mov %ebp, %esp */
		0xff, 0x6f, 0x70,		/* a3 ljmp *0x70(%edi) (to exit64) */
	};

	memcpy(w, head, sizeof(head));
	/* Run at FAR32_HI, to FAR32_LO: each sum is above 4 GiB. */
	far32_put32(w + 0x09, (uint32_t)(FAR32_LO + FAR32_W_G - (FAR32_HI + 0x0d)));
	far32_put32(w + 0x0e, (uint32_t)(FAR32_LO + FAR32_W_CONT - (FAR32_HI + 0x12)));
	w[FAR32_W_G] = 0xc3;			/* 80 g: ret */
	memcpy(w + FAR32_W_CONT, cont, sizeof(cont));
}

/* The offset of entry64's ljmp, and the child's exit status for its #GP. */
#define FAR32_LJMP	0x31
#define FAR32_NO_CS32	20

/*
 * The 32-bit code addresses its stack by %esp: the upper half of %rsp,
 * which the far jump keeps, is no part of it.
 */
static const uint8_t far32_bts_rsp[] = {
	0x48, 0x0f, 0xba, 0xec, 0x20,		/* bts $32, %rsp */
};

/* The whole file: hlt wherever nothing should run. */
static int far32_file(const char *path)
{
	uint8_t buf[FAR32_FILE_LEN];
	uint8_t *hi = buf + FAR32_ENTRY64_HI;

	static_assert(sizeof(far32_entry64) == FAR32_LJMP + 3, "entry64's ljmp");
	static_assert(FAR32_ENTRY64_HI + sizeof(far32_entry64) + sizeof(far32_bts_rsp) <=
		      FAR32_EXIT64, "room for entry64 with bts");
	memset(buf, 0xf4, sizeof(buf));
	memcpy(buf + FAR32_ENTRY64, far32_entry64, sizeof(far32_entry64));
	memcpy(hi, far32_entry64, FAR32_LJMP);
	memcpy(hi + FAR32_LJMP, far32_bts_rsp, sizeof(far32_bts_rsp));
	memcpy(hi + FAR32_LJMP + sizeof(far32_bts_rsp), far32_entry64 + FAR32_LJMP, 3);
	memcpy(buf + FAR32_EXIT64, far32_exit64, sizeof(far32_exit64));
	memcpy(buf + FAR32_CODE32, far32_code32, sizeof(far32_code32));
	memcpy(buf + FAR32_POP_FIRST, far32_pop_first, sizeof(far32_pop_first));
	memcpy(buf + FAR32_F, far32_f, sizeof(far32_f));
	far32_wrap_page(buf + FAR32_WRAP);
	return ut_new_file(path, buf, sizeof(buf));
}

#define FAR32_RUNS	4

struct far32_result {
	uint32_t out[8];
	uint32_t mem[8];
	uint8_t stack[64];	/* the top of the 32-bit stack */
};

/* Page 0 of the shared region; the 32-bit stack is the top of page 1. */
struct far32_shared {
	struct far32_ctx ctx;
	struct far32_result res[FAR32_RUNS];
	int runs;
	unsigned long xol;	/* where the child's [uprobes] was, or 0 */
};

static const uint32_t far32_inputs[FAR32_RUNS][6] = {
	{ 0, 1, 2, 3, 4, 5 },
	{ 0x7fffffff, 0xdeadbeef, 0, 0, 0x80000000, 0xffffffff },
	{ 0xffffffff, 7, 8, 0x80000000, 9, 10 },
	{ 0x12345, 0xa5a5a5a5, 0x5a5a5a5a, 1, 0xfffffffe, 0x10000 },
};

/* Where this process's "[uprobes]" mapping is, or 0. */
static unsigned long far32_xol_area(void)
{
	unsigned long start = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]")) {
			start = strtoul(line, NULL, 16);
			break;
		}
	fclose(f);
	return start;
}

/*
 * The variants of the run: the 64-bit stack, entry64's, moved below the
 * 32-bit one (to FAR32_STACK64); bit 32 of %rsp set for the 32-bit code
 * (entry64_hi), with a page of FAR32_HI_FILL 4 GiB above its stack.
 */
#define FAR32_LOW64	0x1
#define FAR32_RSP_HI	0x2
#define FAR32_STACK64	0x10000000UL
#define FAR32_STACK64_LEN 0x10000UL
#define FAR32_HI_FILL	0x22

static unsigned long far32_ljmp;

/*
 * A kernel without 32-bit code segments for user space (no
 * CONFIG_IA32_EMULATION, or ia32_emulation=false) has the ljmp to
 * __USER32_CS raise #GP: the child says so.  Any other SIGSEGV kills it.
 */
static void far32_segv(int sig, siginfo_t *si, void *uc)
{
	ucontext_t *ctx = uc;

	if (ctx->uc_mcontext.gregs[REG_RIP] == far32_ljmp)
		_exit(FAR32_NO_CS32);
	signal(SIGSEGV, SIG_DFL);
}

/* entry64 at @fn on the 64-bit stack whose top is @stack (0: this one). */
static void far32_call(unsigned long fn, struct far32_ctx *x, unsigned long stack)
{
	void (*entry)(struct far32_ctx *ctx) = (void *)fn;

	if (!stack) {
		entry(x);
		return;
	}
	asm volatile("mov %%rsp, %%r12\n\t"
		     "mov %[stack], %%rsp\n\t"
		     "call *%[fn]\n\t"
		     "mov %%r12, %%rsp"
		     : "+D" (x)
		     : [stack] "r" (stack), [fn] "r" (fn)
		     : "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12",
		       "memory", "cc");
}

/*
 * The child: map the file's page 0 at @base (and page 1 at FAR32_HI and
 * FAR32_LO for @wrap), call the 32-bit code FAR32_RUNS times with the
 * stack top at @top, as @variant says, and keep what each run left in @sh.
 */
static void __attribute__((noreturn))
far32_child(const char *path, unsigned long base, struct far32_shared *sh,
	    unsigned long top, bool wrap, unsigned int variant)
{
	unsigned long entry = base + FAR32_ENTRY64, stack64 = 0;
	struct far32_ctx *x = &sh->ctx;
	int fd = open(path, O_RDONLY), i;
	struct sigaction sa;
	stack_t ss;
	void *m;

	if (fd < 0)
		_exit(10);
	m = mmap((void *)base, UT_PAGE, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	if (m != (void *)base)
		_exit(11);
	if (wrap) {
		m = mmap((void *)FAR32_HI, UT_PAGE, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, UT_PAGE);
		if (m != (void *)FAR32_HI)
			_exit(12);
		m = mmap((void *)FAR32_LO, UT_PAGE, PROT_READ | PROT_EXEC,
			 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, UT_PAGE);
		if (m != (void *)FAR32_LO)
			_exit(13);
	}
	close(fd);
	if (variant & FAR32_LOW64) {
		m = mmap((void *)FAR32_STACK64, FAR32_STACK64_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != (void *)FAR32_STACK64)
			_exit(15);
		stack64 = FAR32_STACK64 + FAR32_STACK64_LEN;
	}
	if (variant & FAR32_RSP_HI) {
		unsigned long hi = top - UT_PAGE + (1UL << 32);

		m = mmap((void *)hi, UT_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != (void *)hi)
			_exit(16);
		memset(m, FAR32_HI_FILL, UT_PAGE);
		entry = base + FAR32_ENTRY64_HI;
	}
	far32_ljmp = entry + FAR32_LJMP +
		     (variant & FAR32_RSP_HI ? sizeof(far32_bts_rsp) : 0);
	/* The signal frame is for a 64-bit stack, not the small 32-bit one. */
	ss.ss_sp = malloc(1 << 16);
	ss.ss_size = 1 << 16;
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		_exit(14);
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = far32_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < FAR32_RUNS; i++) {
		memset((void *)(top - 64), 0xa5, 64);
		memset(x, 0, sizeof(*x));
		memcpy(x->in, far32_inputs[i], sizeof(x->in));
		x->far_eip = wrap ? FAR32_HI : base + FAR32_CODE32;
		if (variant & FAR32_RSP_HI)
			x->far_eip = base + FAR32_POP_FIRST;
		x->far_cs = FAR32_CS;
		x->far64_eip = base + FAR32_EXIT64;
		x->far64_cs = FAR64_CS;
		x->esp32 = (uint32_t)(top - 0x20);
		far32_call(entry, x, stack64);
		memcpy(sh->res[i].out, x->out, sizeof(x->out));
		memcpy(sh->res[i].mem, x->mem, sizeof(x->mem));
		memcpy(sh->res[i].stack, (void *)(top - 64), 64);
		sh->runs = i + 1;
	}
	sh->xol = far32_xol_area();
	_exit(0);
}

FIXTURE(far32) {
	struct ut_ctx c;
	char path[PATH_MAX];
	uint64_t hash;
	unsigned long base;	/* where the children map the file's page 0 */
	struct far32_shared *sh;
	unsigned long top;	/* the 32-bit stack's top */
	bool wrap;
	unsigned int variant;	/* FAR32_LOW64, FAR32_RSP_HI */
	struct far32_result ref[FAR32_RUNS];
};

FIXTURE_SETUP(far32)
{
	void *m;

	ut_ctx_init(&self->c, "ust_far32", _metadata->name);
	snprintf(self->path, sizeof(self->path), "/tmp/ust_far32_%d", getpid());
	ASSERT_EQ(0, far32_file(self->path)) TH_LOG("cannot write %s", self->path);
	self->hash = ut_file_hash(self->path);
	/* A free address below 4 GiB for the children's code mapping. */
	m = mmap(NULL, UT_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	munmap(m, UT_PAGE);
	self->base = (unsigned long)m;
	m = mmap(NULL, 2 * UT_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	self->sh = m;
	self->top = (unsigned long)m + 2 * UT_PAGE;
}

FIXTURE_TEARDOWN(far32)
{
	ut_ctx_cleanup(&self->c);
	if (self->sh)
		munmap(self->sh, self->wrap ? UT_PAGE : 2 * UT_PAGE);
	unlink(self->path);
}

/*
 * The wrap case's data and stack: one page at the top of 4 GiB, the
 * stack's top being 4 GiB itself (the 32-bit code wraps %esp through 0).
 * False when that address is taken here.
 */
static bool far32_use_top_page(FIXTURE_DATA(far32) *self)
{
	void *m = mmap((void *)FAR32_HI_STACK, UT_PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (m != (void *)FAR32_HI_STACK) {
		if (m != MAP_FAILED)
			munmap(m, UT_PAGE);
		return false;
	}
	munmap(self->sh, 2 * UT_PAGE);
	self->sh = m;
	self->top = FAR32_HI_STACK + UT_PAGE;
	self->wrap = true;
	return true;
}

/* Run the child to its end (20 s at most): its wait status, or -1. */
static int far32_run(FIXTURE_DATA(far32) *self, struct far32_result *res)
{
	int st = -1, waited;
	pid_t pid;

	memset(self->sh, 0, sizeof(*self->sh));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		far32_child(self->path, self->base, self->sh, self->top, self->wrap,
			    self->variant);
	for (waited = 0; waited < 2000; waited++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	if (waited == 2000) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	memcpy(res, self->sh->res, sizeof(self->sh->res));
	return st;
}

/* A wait status in words. */
static const char *far32_status(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else
		snprintf(buf, len, "status 0x%x", st);
	return buf;
}

/*
 * The unprobed run, which must have computed what the code means as
 * 32-bit code (a run as 64-bit code, or none, would make every
 * comparison after it meaningless).
 */
static bool far32_reference(struct __test_metadata *_metadata,
			    FIXTURE_DATA(far32) *self)
{
	char why[64];
	int st, i;

	st = far32_run(self, self->ref);
	if (WIFEXITED(st) && WEXITSTATUS(st) == FAR32_NO_CS32)
		SKIP(return false,
		     "no 32-bit code segment for user space (CONFIG_IA32_EMULATION, ia32_emulation=)");
	ASSERT_EQ(0, st) TH_LOG("the unprobed run: %s", far32_status(st, why, sizeof(why)));
	for (i = 0; i < FAR32_RUNS; i++) {
		const uint32_t *in = far32_inputs[i], *out = self->ref[i].out;
		uint32_t a1 = in[0] + 1, prod = a1 * 0x1234567u;

		if (self->wrap) {
			/* ecx: the ebx pushed at %esp 0 and popped back */
			EXPECT_EQ(in[1], out[2]) TH_LOG("run %d", i);
			EXPECT_EQ((uint32_t)(self->top - 0x20), out[6]) TH_LOG("run %d", i);
			EXPECT_EQ(in[1], *(uint32_t *)&self->ref[i].stack[60]);
			EXPECT_EQ((uint32_t)(FAR32_HI + 0x0d),
				  *(uint32_t *)&self->ref[i].stack[56]);
			continue;
		}
		EXPECT_EQ(prod, out[0]) TH_LOG("run %d", i);
		EXPECT_EQ(a1, out[1]) TH_LOG("run %d", i);
		EXPECT_EQ(a1, out[2]) TH_LOG("run %d", i);
		EXPECT_EQ(0x12345678u, out[3]) TH_LOG("run %d", i);
		EXPECT_EQ(in[3] - 1, out[4]) TH_LOG("run %d", i);
		EXPECT_EQ(prod + 5, out[5]) TH_LOG("run %d", i);
		EXPECT_EQ((uint32_t)(self->top - 0x20), out[6]) TH_LOG("run %d", i);
		EXPECT_EQ(prod, self->ref[i].mem[0]) TH_LOG("run %d", i);
	}
	return true;
}

static void far32_probe(struct __test_metadata *_metadata,
			FIXTURE_DATA(far32) *self, const struct far32_site *sites,
			int n, char type)
{
	int i;

	for (i = 0; i < n; i++) {
		UT_PROBE(i, type, self->path, (long)sites[i].off, NULL, NULL);
		UT_ENABLE(i, true);
	}
}

static const char far32_reg[8][8] = {
	"eax", "ebx", "ecx", "edx", "esi", "ebp", "esp", "eflags",
};

/* The probed run computed what the unprobed one did, and died of nothing. */
static void far32_compare(struct __test_metadata *_metadata,
			  FIXTURE_DATA(far32) *self)
{
	struct far32_result res[FAR32_RUNS];
	char why[64];
	int st, i, r;

	st = far32_run(self, res);
	EXPECT_EQ(0, st) TH_LOG("the probed run: %s, after %d of %d calls",
				far32_status(st, why, sizeof(why)), self->sh->runs,
				FAR32_RUNS);
	for (i = 0; i < FAR32_RUNS && i < self->sh->runs; i++) {
		for (r = 0; r < 8; r++) {
			uint32_t want = self->ref[i].out[r];

			EXPECT_EQ(want, res[i].out[r])
				TH_LOG("run %d: %%%s", i, far32_reg[r]);
		}
		EXPECT_EQ(0, memcmp(self->ref[i].mem, res[i].mem, sizeof(res[i].mem)))
			TH_LOG("run %d: the data stored", i);
		EXPECT_EQ(0, memcmp(self->ref[i].stack, res[i].stack, sizeof(res[i].stack)))
			TH_LOG("run %d: the top of the stack", i);
	}
	/* Never an int3 where the file's reader can see it. */
	EXPECT_EQ(self->hash, ut_file_hash(self->path));
}

/* The sites of far32_sites that are (@stepped) or are not stepped. */
static int far32_pick(const struct far32_site *sites, int n, bool stepped,
		      struct far32_site *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (sites[i].stepped == stepped)
			out[k++] = sites[i];
	return k;
}

/* Emulated forms in 32-bit mode: 4-byte stack words, every hit counted. */
TEST_F(far32, emulated_probes_compute_what_unprobed_code_does)
{
	struct far32_site sites[ARRAY_SIZE(far32_sites)];
	int n = far32_pick(far32_sites, ARRAY_SIZE(far32_sites), false, sites), i;

	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, sites, n, 'p');
	far32_compare(_metadata, self);
	for (i = 0; i < n; i++) {
		long hits = UT_HITS(i);

		EXPECT_EQ(FAR32_RUNS, hits) TH_LOG("hits of %s", sites[i].what);
	}
}

/*
 * Can 32-bit code reach the probed run's "[uprobes]" slots?  The area of
 * a 64-bit mm is placed as high as the mm can address, above 4 GiB.
 */
static bool far32_slots_reachable(FIXTURE_DATA(far32) *self)
{
	return self->sh->xol && self->sh->xol < (1UL << 32);
}

/*
 * Forms stepped out of line in 32-bit mode, two of them REX prefixes to
 * the 64-bit decoding the probes were analysed with.  Out of line means
 * in a slot of "[uprobes]": out of reach, the first hit of each probe in
 * the process fires its event, then the probe leaves the process, which
 * runs its own instruction (uprobetracer.rst, "Limits").
 */
TEST_F(far32, stepped_probes_compute_what_unprobed_code_does)
{
	struct far32_site sites[ARRAY_SIZE(far32_sites)];
	int n = far32_pick(far32_sites, ARRAY_SIZE(far32_sites), true, sites), i;
	long want;

	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, sites, n, 'p');
	far32_compare(_metadata, self);
	want = far32_slots_reachable(self) ? FAR32_RUNS : 1;
	for (i = 0; i < n; i++) {
		long hits = UT_HITS(i);

		EXPECT_EQ(want, hits)
			TH_LOG("hits of %s ([uprobes] at 0x%lx)", sites[i].what,
			       self->sh->xol);
	}
}

/*
 * ip and %esp wrap at 4 GiB in 32-bit mode: a call and a jmp from the top
 * of 4 GiB to low memory, a push at %esp 0, a ret to the top.
 */
TEST_F(far32, emulated_ip_and_stack_wrap_at_4gib)
{
	int n = ARRAY_SIZE(far32_wrap_sites), i;

	if (!far32_use_top_page(self))
		SKIP(return, "0x%lx is taken in this process", FAR32_HI_STACK);
	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, far32_wrap_sites, n, 'p');
	far32_compare(_metadata, self);
	for (i = 0; i < n; i++) {
		long hits = UT_HITS(i);

		EXPECT_EQ(FAR32_RUNS, hits)
			TH_LOG("hits of %s", far32_wrap_sites[i].what);
	}
}

/*
 * A return probe on a 32-bit function: the return goes through the
 * trampoline in "[uprobes]", which must be within 32-bit code's reach;
 * out of reach the return is left alone and not probed (uprobetracer.rst,
 * "Limits"), while the entry probe on the same function fires every time.
 */
TEST_F(far32, return_probe_on_32bit_function)
{
	static const struct far32_site f = { FAR32_F, "f", false };

	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, &f, 1, 'r');
	UT_PROBE(1, 'p', self->path, (long)FAR32_F, NULL, NULL);
	UT_ENABLE(1, true);
	far32_compare(_metadata, self);
	EXPECT_EQ(FAR32_RUNS, UT_HITS(1));
	EXPECT_EQ(far32_slots_reachable(self) ? FAR32_RUNS : 0, UT_LINES(0, 0))
		TH_LOG("returns traced ([uprobes] at 0x%lx)", self->sh->xol);
}

/*
 * Return probes on entry64 and on the 32-bit f it reaches, entry64's
 * 64-bit stack below the 32-bit one: f's return probe, hit in 32-bit
 * code, must leave entry64's pending return alone (its frame is on
 * another stack, which the 32-bit %esp says nothing of), or entry64's
 * return through the trampoline finds nothing pending: SIGILL.  Every
 * return of entry64 is traced; f's as return_probe_on_32bit_function's.
 */
TEST_F(far32, return_probes_on_64bit_caller_below_32bit_stack)
{
	static const struct far32_site sites[] = {
		{ FAR32_ENTRY64, "entry64", false },
		{ FAR32_F, "f", false },
	};

	if (FAR32_STACK64 + FAR32_STACK64_LEN > self->top - 2 * UT_PAGE)
		SKIP(return, "the 32-bit stack (top 0x%lx) is below 0x%lx", self->top,
		     FAR32_STACK64);
	self->variant = FAR32_LOW64;
	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, sites, ARRAY_SIZE(sites), 'r');
	far32_compare(_metadata, self);
	EXPECT_EQ(FAR32_RUNS, UT_LINES(0, 0)) TH_LOG("returns of entry64 traced");
	EXPECT_EQ(far32_slots_reachable(self) ? FAR32_RUNS : 0, UT_LINES(1, 0))
		TH_LOG("returns of f traced ([uprobes] at 0x%lx)", self->sh->xol);
}

/*
 * Bit 32 of %rsp set by entry64_hi before its far jump: the 32-bit code's
 * stack is at %esp, and so must be what each emulated pop and ret reads,
 * not the page 4 GiB above it (full of FAR32_HI_FILL).  The first pop
 * runs with bit 32 still set (a stack write may clear it: QEMU's does);
 * the others check the same forms once it is clear.
 */
TEST_F(far32, emulated_pop_and_ret_read_the_stack_at_esp)
{
	static const struct far32_site sites[] = {
		{ FAR32_POP_FIRST, "pop %ecx, first, bit 32 of %rsp set", false },
		{ 0x107, "pop %ecx", false },
		{ 0x11f, "pop %ebp", false },
		{ 0x187, "ret", false },
	};
	int i;

	self->variant = FAR32_RSP_HI;
	if (!far32_reference(_metadata, self))
		return;
	far32_probe(_metadata, self, sites, ARRAY_SIZE(sites), 'p');
	far32_compare(_metadata, self);
	for (i = 0; i < (int)ARRAY_SIZE(sites); i++) {
		long hits = UT_HITS(i);

		EXPECT_EQ(FAR32_RUNS, hits) TH_LOG("hits of %s", sites[i].what);
	}
}

UT_HARNESS_MAIN
