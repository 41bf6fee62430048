/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differential instruction fuzzer's shared definitions: the fixed
 * address space every case runs in, and what the generator
 * (insnfuzz_gen.c) hands the runner (uprobe_insnfuzz.c).
 *
 * Everything sits at fixed addresses below 2 GiB, so that the entry stub
 * can use absolute 32-bit addresses (no register is needed to load the
 * others) and every rip-relative displacement can reach the data.
 */
#ifndef INSNFUZZ_H
#define INSNFUZZ_H

#include <stdbool.h>
#include <stdint.h>

/* The code file: the stub page, then one cell per instruction. */
#define IFZ_CODE		0x30000000UL
#define IFZ_STUB_ENTER		0x000	/* enter0: no probe on it */
#define IFZ_STUB_ENTER_RET	0x100	/* enter1: a return probe on it */
#define IFZ_STUB_RESUME		0x200	/* where every case comes back */
#define IFZ_CELL_BYTES		512
/* The instruction's offset in its cell: rel8 reaches only its own cell. */
#define IFZ_CELL_INSN		192
#define IFZ_CELL(i)		(IFZ_CODE + 0x1000 + (unsigned long)(i) * IFZ_CELL_BYTES)

/*
 * The data the instruction may touch, compared after each run:
 * four pages of data, two of stack, then an unmapped page and a
 * read-only page (stores fault).  The page below is unmapped too.
 */
#define IFZ_DATA		0x10000000UL
#define IFZ_DATA_BYTES		0x4000
#define IFZ_STACK		(IFZ_DATA + IFZ_DATA_BYTES)
#define IFZ_STACK_BYTES		0x2000
#define IFZ_CMP_BYTES		(IFZ_DATA_BYTES + IFZ_STACK_BYTES)
#define IFZ_HOLE		(IFZ_STACK + IFZ_STACK_BYTES)
#define IFZ_RDONLY		(IFZ_HOLE + 0x1000)
#define IFZ_MAP_BYTES		(IFZ_RDONLY + 0x1000 - IFZ_DATA)
/* The gs base the runner sets, so that gs-relative operands land in data. */
#define IFZ_GSBASE		(IFZ_DATA + 0x2000)

/* The runner's own block: the registers to load, the host stack pointer. */
#define IFZ_STATE		0x0e000000UL

/*
 * Far operands and branch targets, which must fault: 1 TiB that nothing
 * maps (the runner checks), below where the kernel puts PIE programs,
 * libraries, thread stacks and the heap, and whose low 32 bits (for an
 * addr32 or rip-relative form) fall in [1 GiB, 2 GiB), as unmapped.
 */
#define IFZ_FAR			0x00003f0040000000ULL
#define IFZ_FAR_BYTES		0x10000000000ULL	/* 1 TiB */
#define IFZ_FAR32		0x40000000UL
#define IFZ_FAR32_BYTES		0x40000000UL
/*
 * 32-bit code's: a compat task has its program at 0x56555000 and up, and
 * its mmap()s come down from under its stack, at 0xf7ffffff and below.
 */
#define IFZ_FAR_COMPAT		0x80000000UL

/* Classes: the analyser's plans, and the forms it refuses. */
enum ifz_class {
	IFZ_NOP, IFZ_JMP, IFZ_JCC, IFZ_LOOP, IFZ_CALL, IFZ_RET, IFZ_PUSH,
	IFZ_POP, IFZ_MOV, IFZ_ALU_SP, IFZ_LEA, IFZ_MOV_MEM, IFZ_MOV_IMM,
	IFZ_JMP_IND, IFZ_CALL_IND,
	IFZ_ALU,	/* general-register ops run out of line */
	IFZ_SSE,	/* legacy-encoded vector ops */
	IFZ_AVX,	/* VEX-encoded vector ops */
	IFZ_BMI,	/* VEX-encoded general-register ops */
	IFZ_X87,
	IFZ_STRING,	/* movs/stos/lods/cmps/scas, with and without rep */
	IFZ_FLAGS,	/* pushf/popf */
	IFZ_STACK_OP,	/* push/pop r/m, push imm, enter, leave */
	IFZ_MISC,	/* cpuid, xlat, fences, xgetbv, ... */
	IFZ_LAZY,	/* flags in, flags out: between a producer and a consumer */
	IFZ_REFUSED,	/* forms the analyser must refuse */
	IFZ_RANDOM,	/* random bytes behind random prefixes */
	IFZ_NCLASS,
};

/*
 * Addressing forms of the memory operand, for the coverage table; the
 * last two are 32-bit code's: an absolute disp32 (what is rip-relative in
 * 64-bit code) and 16-bit addressing (the 67 prefix).
 */
enum ifz_form {
	IFZ_F_NONE, IFZ_F_MEM, IFZ_F_RIP, IFZ_F_FS, IFZ_F_GS, IFZ_F_A32,
	IFZ_F_ABS, IFZ_F_A16,
	IFZ_NFORM,
};

/* One generated instruction, placed at IFZ_CELL(i) + IFZ_CELL_INSN. */
struct ifz_insn {
	uint8_t bytes[16];
	uint8_t len;
	uint8_t cls;
	uint8_t form;
	/* The memory operand, when there is one (base/index 0xff: none). */
	uint8_t mem, base, index, scale, seg, a32, rip, size;
	int32_t disp;
	/* What the state must prepare, IFZ_NEED_*. */
	uint16_t need;
	uint8_t target_reg;	/* the register an indirect branch goes through */
	uint8_t bit_reg;	/* bt* by register into memory: the bit offset's */
	uint8_t vex;		/* needs AVX */
	uint8_t a16;		/* 32-bit code: 16-bit addressing */
	/*
	 * IFZ_LAZY: an instruction that leaves flags right before it (the
	 * case enters there) and one that reads them right after it: QEMU
	 * computes flags lazily, from the last instruction that set them.
	 */
	uint8_t pre[8], pre_len;
	uint8_t post[8], post_len;
};

#define IFZ_NEED_STR		0x01	/* rsi/rdi point into data, rcx small */
#define IFZ_NEED_COUNT		0x02	/* rcx small (loop, rep) */
#define IFZ_NEED_RETADDR	0x04	/* [rsp] holds a branch target */
#define IFZ_NEED_TARGET_REG	0x08	/* target_reg holds a branch target */
#define IFZ_NEED_TARGET_MEM	0x10	/* the memory operand holds one */
#define IFZ_NEED_XLAT		0x20	/* rbx points into data */
#define IFZ_NEED_ALIGN16	0x40	/* the operand is 16-byte aligned, mostly */
#define IFZ_NEED_ALIGN64	0x80	/* 64-byte aligned, 512+ bytes (fxsave) */
#define IFZ_NEED_FLAGS_MEM	0x100	/* [rsp] holds flags for popf */
#define IFZ_NEED_FARPTR		0x200	/* the operand is a far pointer */
#define IFZ_NEED_BIT_REG	0x400	/* bit_reg holds a small bit offset */
#define IFZ_NEED_MXCSR		0x800	/* 32-bit code: a valid MXCSR to load */
#define IFZ_NEED_FRAME		0x1000	/* rbp points where leave pops */

/* One machine state the instruction runs from. */
struct ifz_state {
	uint64_t regs[16];	/* rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8-r15 */
	uint64_t flags;
	uint64_t plant_addr[2], plant_val[2];	/* qwords stored before the run */
	uint32_t vseed;		/* seeds the vector and x87 state */
	uint16_t mxcsr, fcw;
	uint8_t x87_full;	/* the x87 stack is full of random values */
};

struct ifz_rng {
	uint64_t s;
};

static inline uint64_t ifz_rnd(struct ifz_rng *r)
{
	/* xorshift64*: the same stream for a seed on every machine */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static inline uint64_t ifz_rn(struct ifz_rng *r, uint64_t n)
{
	return n ? ifz_rnd(r) % n : 0;
}

static inline void ifz_seed(struct ifz_rng *r, uint64_t a, uint64_t b)
{
	r->s = (a ^ (b * 0x9e3779b97f4a7c15ULL)) | 1;
	ifz_rnd(r);
	ifz_rnd(r);
}

/*
 * @fsbase is the base of the segment the C library keeps its thread area
 * in: %fs in 64-bit code, %gs in 32-bit code, where %fs is the runner's,
 * based at IFZ_GSBASE (as %gs is in 64-bit code).  @mode32: generate
 * 32-bit code, for a compat task.
 */
struct ifz_env {
	uint64_t fsbase;
	bool avx, avx2, bmi2;
	bool mode32;
};

void ifz_gen_insn(struct ifz_rng *r, const struct ifz_env *env,
		  unsigned long addr, struct ifz_insn *in);
void ifz_gen_state(struct ifz_rng *r, const struct ifz_env *env,
		   const struct ifz_insn *in, unsigned long addr,
		   struct ifz_state *st);
const char *ifz_class_name(int cls);
const char *ifz_form_name(int form);

#endif /* INSNFUZZ_H */
