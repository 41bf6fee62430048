// SPDX-License-Identifier: GPL-2.0
/*
 * The differential fuzzer's instruction generator: valid x86-64 encodings
 * of every class the uprobes analyser tells apart, with random legacy,
 * REX and VEX prefixes and every ModRM/SIB form, and for each one the
 * machine states it runs from (registers placing its memory operand in
 * the data pages, at a page boundary or on a page that faults; branch
 * targets in the cell's landing area or on unmapped pages).
 *
 * Instructions that would change the process rather than the case are
 * never generated: system calls, segment loads, fs/gs base writes,
 * wrpkru and xrstor; neither are the nondeterministic ones (rdtsc,
 * rdrand, rdseed).  The random class draws bytes behind random prefixes
 * and drops a draw containing any of those opcodes.
 *
 * With ifz_env.mode32 it generates 32-bit code for a compat task: no REX
 * (40-4f are inc and dec), an absolute disp32 where 64-bit code has a
 * rip-relative operand, 16-bit addressing behind 67, 4-byte stack words,
 * and the opcodes 64-bit mode lacks but for those that load a segment
 * register (pusha, popa, bound, the BCD ops, into, ljmp ptr16:32, ...).
 */
#include <string.h>

#include "insnfuzz.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef fallthrough
#define fallthrough __attribute__((__fallthrough__))
#endif

/* Operand and encoding flags of a table entry. */
#define M	0x0001		/* ModRM */
#define MO	0x0002		/* memory operand only */
#define RO	0x0004		/* register operand only */
#define I8	0x0008
#define IZ	0x0010		/* imm16 with 66, else imm32 */
#define IV	0x0020		/* imm16/32/64 by operand size (b8+r) */
#define I16	0x0040
#define R8	0x0080		/* rel8 */
#define R32	0x0100		/* rel32 */
#define OPR	0x0200		/* register in the opcode's low bits */
#define N66	0x0400		/* no random operand-size prefix */
#define LCK	0x0800		/* lock is valid with a memory operand */
#define FM	0x1000		/* ext is the whole ModRM byte */
#define BYTE	0x2000		/* byte operand */
#define NW	0x4000		/* no random REX.W */
#define I16I8	0x8000		/* enter: imm16, imm8 */
/*
 * No rip-relative form: QEMU 7.2's TCG leaves the immediate out of the
 * next-ip it adds the displacement to (shld $imm8; f6 /1, test's alias),
 * where CPUs do not.
 */
#define NRIP	0x10000
/*
 * bt* by register: the bit offset in ModRM.reg moves the memory operand
 * by up to 256 MiB (2^60 bytes with REX.W), so the state keeps it small
 * and apart from the registers that form the address.
 */
#define BTR	0x20000
#define FAR	0x40000		/* ptr16:32 (ljmp): a landing address, a selector */

struct ifz_op {
	uint8_t cls, map, opc;
	int16_t ext;		/* ModRM.reg, or the ModRM byte with FM; -1 any */
	uint8_t mp;		/* mandatory prefix */
	uint32_t fl;
	uint16_t need;
	uint8_t size;		/* memory operand bytes, 0: operand size */
};

#define X(c, m, o, e, p, f, n, s) { IFZ_##c, m, o, e, p, f, n, s }

static const struct ifz_op legacy_ops[] = {
	/* emulated */
	X(NOP, 0, 0x90, -1, 0, NW, 0, 0),
	X(NOP, 0, 0x90, -1, 0xf3, NW, 0, 0),			/* pause */
	X(NOP, 1, 0x1f, 0, 0, M, 0, 0),				/* nopl/nopw */
	X(NOP, 1, 0x1e, 0xfa, 0xf3, M | FM, 0, 0),		/* endbr64 */
	X(NOP, 1, 0x1e, 0xfb, 0xf3, M | FM, 0, 0),		/* endbr32 */
	X(JMP, 0, 0xeb, -1, 0, R8 | N66, 0, 0),
	X(JMP, 0, 0xe9, -1, 0, R32 | N66, 0, 0),
	X(JCC, 0, 0x70, -1, 0, R8 | N66 | OPR, 0, 0),		/* 70-7f */
	X(JCC, 1, 0x80, -1, 0, R32 | N66 | OPR, 0, 0),		/* 0f 80-8f */
	X(LOOP, 0, 0xe0, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),
	X(LOOP, 0, 0xe1, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),
	X(LOOP, 0, 0xe2, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),
	X(LOOP, 0, 0xe3, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),
	X(CALL, 0, 0xe8, -1, 0, R32 | N66, 0, 0),
	X(RET, 0, 0xc3, -1, 0, N66, IFZ_NEED_RETADDR, 0),
	X(RET, 0, 0xc2, -1, 0, I16 | N66, IFZ_NEED_RETADDR, 0),
	X(PUSH, 0, 0x50, -1, 0, OPR, 0, 0),
	X(POP, 0, 0x58, -1, 0, OPR, 0, 0),
	X(MOV, 0, 0x89, -1, 0, M | RO, 0, 0),
	X(MOV, 0, 0x8b, -1, 0, M | RO, 0, 0),
	X(MOV, 0, 0x88, -1, 0, M | RO | BYTE, 0, 0),
	X(ALU_SP, 0, 0x83, 0xc4, 0, M | FM | I8, 0, 0),	/* add $i8, %rsp */
	X(ALU_SP, 0, 0x83, 0xec, 0, M | FM | I8, 0, 0),	/* sub $i8, %rsp */
	X(ALU_SP, 0, 0x81, 0xc4, 0, M | FM | IZ, 0, 0),
	X(ALU_SP, 0, 0x81, 0xec, 0, M | FM | IZ, 0, 0),
	X(LEA, 0, 0x8d, -1, 0, M | MO, 0, 0),
	X(MOV_MEM, 0, 0x89, -1, 0, M | MO, 0, 0),
	X(MOV_MEM, 0, 0x8b, -1, 0, M | MO, 0, 0),
	X(MOV_IMM, 0, 0xb8, -1, 0, OPR | IV, 0, 0),
	X(MOV_IMM, 0, 0xc7, 0, 0, M | RO | IZ, 0, 0),
	X(JMP_IND, 0, 0xff, 4, 0, M | RO | N66, IFZ_NEED_TARGET_REG, 0),
	X(JMP_IND, 0, 0xff, 4, 0, M | MO | N66, IFZ_NEED_TARGET_MEM, 8),
	X(CALL_IND, 0, 0xff, 2, 0, M | RO | N66, IFZ_NEED_TARGET_REG, 0),
	X(CALL_IND, 0, 0xff, 2, 0, M | MO | N66, IFZ_NEED_TARGET_MEM, 8),

	/* general-register ops out of line */
	X(ALU, 0, 0x00, -1, 0, M | LCK | BYTE, 0, 0),	/* add; the next 7 too */
	X(ALU, 0, 0x01, -1, 0, M | LCK, 0, 0),
	X(ALU, 0, 0x02, -1, 0, M | BYTE, 0, 0),
	X(ALU, 0, 0x03, -1, 0, M, 0, 0),
	X(ALU, 0, 0x05, -1, 0, IZ, 0, 0),
	X(ALU, 0, 0x11, -1, 0, M | LCK, 0, 0),		/* adc */
	X(ALU, 0, 0x19, -1, 0, M | LCK, 0, 0),		/* sbb */
	X(ALU, 0, 0x21, -1, 0, M | LCK, 0, 0),		/* and */
	X(ALU, 0, 0x2b, -1, 0, M, 0, 0),		/* sub */
	X(ALU, 0, 0x31, -1, 0, M | LCK, 0, 0),		/* xor */
	X(ALU, 0, 0x39, -1, 0, M, 0, 0),		/* cmp */
	X(ALU, 0, 0x3c, -1, 0, I8 | BYTE, 0, 0),
	X(ALU, 0, 0x63, -1, 0, M, 0, 4),		/* movsxd */
	X(ALU, 0, 0x69, -1, 0, M | IZ, 0, 0),		/* imul */
	X(ALU, 0, 0x6b, -1, 0, M | I8, 0, 0),
	X(ALU, 0, 0x80, -1, 0, M | I8 | LCK | BYTE, 0, 0),
	X(ALU, 0, 0x81, -1, 0, M | IZ | LCK, 0, 0),
	X(ALU, 0, 0x83, -1, 0, M | I8 | LCK, 0, 0),
	X(ALU, 0, 0x85, -1, 0, M, 0, 0),		/* test */
	X(ALU, 0, 0x86, -1, 0, M | BYTE, 0, 0),		/* xchg */
	X(ALU, 0, 0x87, -1, 0, M, 0, 0),
	X(ALU, 0, 0x88, -1, 0, M | MO | BYTE, 0, 0),
	X(ALU, 0, 0x89, -1, 0x66, M, 0, 0),		/* movw */
	X(ALU, 0, 0x8a, -1, 0, M | BYTE, 0, 0),
	X(ALU, 0, 0x8c, -1, 0, M, 0, 2),		/* mov sreg, r/m */
	X(ALU, 0, 0x90, -1, 0, OPR, 0, 0),		/* xchg r, rax */
	X(ALU, 0, 0x98, -1, 0, 0, 0, 0),		/* cbw/cwde/cdqe */
	X(ALU, 0, 0x99, -1, 0, 0, 0, 0),		/* cwd/cdq/cqo */
	X(ALU, 0, 0x9e, -1, 0, 0, 0, 0),		/* sahf */
	X(ALU, 0, 0x9f, -1, 0, 0, 0, 0),		/* lahf */
	X(ALU, 0, 0xa8, -1, 0, I8, 0, 0),
	X(ALU, 0, 0xb0, -1, 0, OPR | I8, 0, 0),		/* mov $i8, r8 */
	X(ALU, 0, 0xb8, -1, 0x66, OPR | IV, 0, 0),	/* movw $i16 */
	X(ALU, 0, 0xc0, -1, 0, M | I8 | BYTE, 0, 0),	/* shifts */
	X(ALU, 0, 0xc1, -1, 0, M | I8, 0, 0),
	X(ALU, 0, 0xc6, 0, 0, M | I8 | BYTE, 0, 0),
	X(ALU, 0, 0xc7, 0, 0, M | MO | IZ, 0, 0),
	X(ALU, 0, 0xd1, -1, 0, M, 0, 0),
	X(ALU, 0, 0xd3, -1, 0, M, 0, 0),
	X(ALU, 0, 0xf5, -1, 0, 0, 0, 0),		/* cmc */
	X(ALU, 0, 0xf6, -1, 0, M | BYTE | NRIP, 0, 0),	/* test/not/neg/mul/div */
	X(ALU, 0, 0xf7, -1, 0, M | NRIP, 0, 0),
	X(ALU, 0, 0xf8, -1, 0, 0, 0, 0),		/* clc; stc f9 */
	X(ALU, 0, 0xf9, -1, 0, 0, 0, 0),
	X(ALU, 0, 0xfc, -1, 0, 0, 0, 0),		/* cld; std fd */
	X(ALU, 0, 0xfd, -1, 0, 0, 0, 0),
	X(ALU, 0, 0xfe, 0, 0, M | LCK | BYTE, 0, 0),	/* inc */
	X(ALU, 0, 0xff, 1, 0, M | LCK, 0, 0),		/* dec */
	X(ALU, 1, 0x40, -1, 0, M | OPR, 0, 0),		/* cmovcc */
	X(ALU, 1, 0x90, 0, 0, M | OPR | BYTE, 0, 1),	/* setcc */
	X(ALU, 1, 0xa3, -1, 0, M | BTR, 0, 0),		/* bt */
	X(ALU, 1, 0xab, -1, 0, M | LCK | BTR, 0, 0),	/* bts */
	X(ALU, 1, 0xba, -1, 0, M | I8 | LCK, 0, 0),	/* bt* $i8 */
	X(ALU, 1, 0xa4, -1, 0, M | I8 | NRIP, 0, 0),	/* shld */
	X(ALU, 1, 0xad, -1, 0, M, 0, 0),		/* shrd %cl */
	X(ALU, 1, 0xaf, -1, 0, M, 0, 0),		/* imul */
	X(ALU, 1, 0xb0, -1, 0, M | LCK | BYTE, 0, 0),	/* cmpxchg */
	X(ALU, 1, 0xb1, -1, 0, M | LCK, 0, 0),
	X(ALU, 1, 0xb6, -1, 0, M, 0, 1),		/* movzx */
	X(ALU, 1, 0xbf, -1, 0, M, 0, 2),		/* movsx */
	X(ALU, 1, 0xbc, -1, 0, M, 0, 0),		/* bsf */
	X(ALU, 1, 0xbd, -1, 0xf3, M, 0, 0),		/* lzcnt */
	X(ALU, 1, 0xb8, -1, 0xf3, M, 0, 0),		/* popcnt */
	X(ALU, 1, 0xc1, -1, 0, M | LCK, 0, 0),		/* xadd */
	X(ALU, 1, 0xc8, -1, 0, OPR, 0, 0),		/* bswap */
	X(ALU, 1, 0xc7, 1, 0, M | MO | LCK, 0, 16),	/* cmpxchg8b/16b */
	X(ALU, 2, 0xf0, -1, 0, M | MO, 0, 0),		/* movbe */
	X(ALU, 2, 0xf1, -1, 0, M | MO, 0, 0),
	X(ALU, 2, 0xf1, -1, 0xf2, M, 0, 0),		/* crc32 */

	/* legacy vector ops */
	X(SSE, 1, 0x10, -1, 0, M | N66, 0, 16),		/* movups */
	X(SSE, 1, 0x11, -1, 0xf2, M | N66, 0, 8),	/* movsd */
	X(SSE, 1, 0x28, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* movapd */
	X(SSE, 1, 0x29, -1, 0, M | N66, IFZ_NEED_ALIGN16, 16),	/* movaps */
	X(SSE, 1, 0x2a, -1, 0xf2, M, 0, 0),		/* cvtsi2sd */
	X(SSE, 1, 0x2c, -1, 0xf2, M, 0, 8),		/* cvttsd2si */
	X(SSE, 1, 0x2e, -1, 0, M, 0, 4),		/* ucomiss */
	X(SSE, 1, 0x51, -1, 0xf3, M, 0, 4),		/* sqrtss */
	X(SSE, 1, 0x57, -1, 0, M | N66, IFZ_NEED_ALIGN16, 16),	/* xorps */
	X(SSE, 1, 0x58, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* addpd */
	X(SSE, 1, 0x59, -1, 0xf2, M, 0, 8),		/* mulsd */
	X(SSE, 1, 0x5e, -1, 0, M | N66, IFZ_NEED_ALIGN16, 16),	/* divps */
	X(SSE, 1, 0x6e, -1, 0x66, M, 0, 0),		/* movd/movq to xmm */
	X(SSE, 1, 0x6f, -1, 0xf3, M, 0, 16),		/* movdqu */
	X(SSE, 1, 0x70, -1, 0x66, M | I8, IFZ_NEED_ALIGN16, 16),	/* pshufd */
	X(SSE, 1, 0x7e, -1, 0x66, M, 0, 0),		/* movd/movq from xmm */
	X(SSE, 1, 0x7f, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* movdqa */
	X(SSE, 1, 0xc2, -1, 0, M | I8 | N66, IFZ_NEED_ALIGN16, 16),	/* cmpps */
	X(SSE, 1, 0xc6, -1, 0x66, M | I8, IFZ_NEED_ALIGN16, 16),	/* shufpd */
	X(SSE, 1, 0xd6, -1, 0x66, M, 0, 8),		/* movq */
	X(SSE, 1, 0xd7, -1, 0x66, M | RO, 0, 0),	/* pmovmskb */
	X(SSE, 1, 0xef, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* pxor */
	X(SSE, 1, 0xfe, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* paddd */
	X(SSE, 1, 0xae, 2, 0, M | MO | N66, 0, 4),	/* ldmxcsr */
	X(SSE, 1, 0xae, 3, 0, M | MO | N66, 0, 4),	/* stmxcsr */
	X(SSE, 1, 0xae, 0, 0, M | MO | N66, IFZ_NEED_ALIGN64, 0),	/* fxsave */
	X(SSE, 1, 0xae, 1, 0, M | MO | N66, IFZ_NEED_ALIGN64, 0),	/* fxrstor */
	X(SSE, 2, 0x00, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* pshufb */
	X(SSE, 3, 0x0f, -1, 0x66, M | I8, IFZ_NEED_ALIGN16, 16),	/* palignr */
	X(SSE, 3, 0x16, -1, 0x66, M | I8, 0, 0),	/* pextrd/q */
	X(SSE, 3, 0x22, -1, 0x66, M | I8, 0, 0),	/* pinsrd/q */
	X(SSE, 3, 0x61, -1, 0x66, M | I8, 0, 16),	/* pcmpestri */
	X(SSE, 3, 0x63, -1, 0x66, M | I8, 0, 16),	/* pcmpistri */

	/* x87 */
	X(X87, 0, 0xd9, 0, 0, M | MO, 0, 4),		/* flds */
	X(X87, 0, 0xdd, 0, 0, M | MO, 0, 8),		/* fldl */
	X(X87, 0, 0xdb, 5, 0, M | MO, 0, 10),		/* fldt */
	X(X87, 0, 0xd8, -1, 0, M, 0, 4),		/* fadd..fdivr m32/st */
	X(X87, 0, 0xdc, -1, 0, M, 0, 8),
	X(X87, 0, 0xdd, 3, 0, M | MO, 0, 8),		/* fstpl */
	X(X87, 0, 0xd9, 7, 0, M | MO, 0, 2),		/* fnstcw */
	X(X87, 0, 0xd9, 6, 0, M | MO, 0, 28),		/* fnstenv */
	X(X87, 0, 0xd9, 0xe8, 0, M | FM, 0, 0),		/* fld1 */
	X(X87, 0, 0xd9, 0xc9, 0, M | FM, 0, 0),		/* fxch */
	X(X87, 0, 0xd9, 0xfa, 0, M | FM, 0, 0),		/* fsqrt */
	X(X87, 0, 0xde, 0xc1, 0, M | FM, 0, 0),		/* faddp */
	X(X87, 0, 0xde, 0xf9, 0, M | FM, 0, 0),		/* fdivp */
	X(X87, 0, 0xdf, 0xe0, 0, M | FM, 0, 0),		/* fnstsw %ax */
	X(X87, 0, 0xdb, 0xe3, 0, M | FM, 0, 0),		/* fninit */
	X(X87, 0, 0x9b, -1, 0, 0, 0, 0),		/* fwait */

	/* string ops; rep prefixes are added at random */
	X(STRING, 0, 0xa4, -1, 0, BYTE, IFZ_NEED_STR, 0),	/* movs */
	X(STRING, 0, 0xa5, -1, 0, 0, IFZ_NEED_STR, 0),
	X(STRING, 0, 0xa6, -1, 0, BYTE, IFZ_NEED_STR, 0),	/* cmps */
	X(STRING, 0, 0xa7, -1, 0, 0, IFZ_NEED_STR, 0),
	X(STRING, 0, 0xaa, -1, 0, BYTE, IFZ_NEED_STR, 0),	/* stos */
	X(STRING, 0, 0xab, -1, 0, 0, IFZ_NEED_STR, 0),
	X(STRING, 0, 0xac, -1, 0, BYTE, IFZ_NEED_STR, 0),	/* lods */
	X(STRING, 0, 0xad, -1, 0, 0, IFZ_NEED_STR, 0),
	X(STRING, 0, 0xae, -1, 0, BYTE, IFZ_NEED_STR, 0),	/* scas */
	X(STRING, 0, 0xaf, -1, 0, 0, IFZ_NEED_STR, 0),

	X(FLAGS, 0, 0x9c, -1, 0, 0, 0, 0),			/* pushf */
	X(FLAGS, 0, 0x9d, -1, 0, 0, IFZ_NEED_FLAGS_MEM, 0),	/* popf */

	X(STACK_OP, 0, 0xff, 6, 0, M, 0, 8),		/* push r/m */
	X(STACK_OP, 0, 0x8f, 0, 0, M | MO, 0, 8),	/* pop r/m */
	X(STACK_OP, 0, 0x68, -1, 0, IZ, 0, 0),		/* push $imm */
	X(STACK_OP, 0, 0x6a, -1, 0, I8, 0, 0),
	X(STACK_OP, 0, 0xc8, -1, 0, I16I8 | N66, 0, 0),	/* enter */
	X(STACK_OP, 0, 0xc9, -1, 0, N66, IFZ_NEED_FRAME, 0),	/* leave */
	X(STACK_OP, 1, 0xa0, -1, 0, N66, 0, 0),		/* push %fs */
	X(STACK_OP, 0, 0x50, -1, 0x66, OPR, 0, 0),	/* pushw */

	X(MISC, 0, 0xd7, -1, 0, N66, IFZ_NEED_XLAT, 0),	/* xlat */
	X(MISC, 1, 0xa2, -1, 0, N66, 0, 0),		/* cpuid */
	X(MISC, 1, 0xae, 0xe8, 0, M | FM, 0, 0),	/* lfence */
	X(MISC, 1, 0xae, 0xf0, 0, M | FM, 0, 0),	/* mfence */
	X(MISC, 1, 0xae, 0xf8, 0, M | FM, 0, 0),	/* sfence */
	X(MISC, 1, 0xae, 7, 0, M | MO, 0, 1),		/* clflush */
	X(MISC, 1, 0x18, 1, 0, M | MO, 0, 1),		/* prefetcht0 */
	X(MISC, 1, 0x0d, 1, 0, M | MO, 0, 1),		/* prefetchw */
	X(MISC, 1, 0x01, 0xd0, 0, M | FM, 0, 0),	/* xgetbv */
	X(MISC, 1, 0x01, 0xee, 0, M | FM, 0, 0),	/* rdpkru */

	/* refused: the probe must fail, the program run as before */
	X(REFUSED, 0, 0xcc, -1, 0, N66, 0, 0),		/* int3 */
	X(REFUSED, 0, 0xcd, -1, 0, I8 | N66, 0, 0),	/* int n */
	X(REFUSED, 0, 0xf1, -1, 0, N66, 0, 0),		/* int1 */
	X(REFUSED, 1, 0x0b, -1, 0, N66, 0, 0),		/* ud2 */
	X(REFUSED, 0, 0xf4, -1, 0, N66, 0, 0),		/* hlt */
	X(REFUSED, 0, 0xfa, -1, 0, N66, 0, 0),		/* cli */
	X(REFUSED, 0, 0xec, -1, 0, N66, 0, 0),		/* in %dx, %al */
	X(REFUSED, 0, 0xe6, -1, 0, I8 | N66, 0, 0),	/* out %al, $i8 */
	X(REFUSED, 0, 0xff, 5, 0, M | MO | N66, IFZ_NEED_FARPTR, 10),	/* ljmp */
	X(REFUSED, 0, 0x06, -1, 0, N66, 0, 0),		/* invalid in 64-bit */
	X(REFUSED, 0, 0xd6, -1, 0, N66, 0, 0),		/* salc */
	X(REFUSED, 1, 0x01, 0xca, 0, M | FM, 0, 0),	/* clac */
	X(REFUSED, 1, 0x00, 0, 0, M | RO, 0, 0),	/* sldt (UMIP) */
	X(REFUSED, 1, 0x01, 4, 0, M | RO, 0, 0),	/* smsw (UMIP) */
	X(REFUSED, 1, 0x03, -1, 0, M | RO, 0, 0),	/* lsl */
	X(REFUSED, 0, 0xc7, 0xf8, 0, M | FM | IZ | N66, 0, 0),	/* xbegin */
	X(REFUSED, 0, 0xeb, -1, 0x66, R8, 0, 0),	/* jmp with 66 */
	X(REFUSED, 0, 0xe2, -1, 0x67, R8 | N66, IFZ_NEED_COUNT, 0),	/* addr32 loop */
};

/* 32-bit code only: opcodes that 64-bit mode lacks or gives to REX. */
static const struct ifz_op legacy32_ops[] = {
	X(ALU, 0, 0x40, -1, 0, OPR, 0, 0),		/* inc r32 */
	X(ALU, 0, 0x48, -1, 0, OPR, 0, 0),		/* dec r32 */
	X(ALU, 0, 0x27, -1, 0, N66, 0, 0),		/* daa */
	X(ALU, 0, 0x2f, -1, 0, N66, 0, 0),		/* das */
	X(ALU, 0, 0x37, -1, 0, N66, 0, 0),		/* aaa */
	X(ALU, 0, 0x3f, -1, 0, N66, 0, 0),		/* aas */
	X(ALU, 0, 0xd4, -1, 0, I8 | N66, 0, 0),		/* aam: aam 0 is #DE */
	X(ALU, 0, 0xd5, -1, 0, I8 | N66, 0, 0),		/* aad */
	X(ALU, 0, 0x82, -1, 0, M | I8 | LCK | BYTE, 0, 0),	/* 80's alias */
	X(ALU, 0, 0x62, -1, 0, M | MO, 0, 8),		/* bound: #BR */
	X(STACK_OP, 0, 0x0e, -1, 0, 0, 0, 0),		/* push %cs */
	X(STACK_OP, 0, 0x16, -1, 0, 0, 0, 0),		/* push %ss */
	X(STACK_OP, 0, 0x1e, -1, 0, 0, 0, 0),		/* push %ds */
	X(STACK_OP, 0, 0x60, -1, 0, 0, 0, 0),		/* pusha */
	X(STACK_OP, 0, 0x61, -1, 0, 0, 0, 0),		/* popa */
	X(REFUSED, 0, 0xce, -1, 0, N66, 0, 0),		/* into */
	X(REFUSED, 0, 0xea, -1, 0, FAR | N66, 0, 0),	/* ljmp ptr16:32 */
};

/*
 * The class of a legacy_ops entry in 32-bit code, where 63 is arpl (not
 * movsxd) and 06 is push %es (not undefined).
 */
static int op_class(const struct ifz_op *op, bool m32)
{
	if (m32 && !op->map && op->opc == 0x63)
		return IFZ_REFUSED;
	if (m32 && !op->map && op->opc == 0x06)
		return IFZ_STACK_OP;
	return op->cls;
}

/* The selectors of far pointers: 0x33 is 64-bit code, 0x23 32-bit code. */
static const uint16_t far_sels[] = { 0x33, 0x2b, 0x0, 0x1234 };
static const uint16_t far_sels32[] = { 0x23, 0x33, 0x0, 0x1234 };

/* VEX: map 1-3, pp as the mandatory prefix, W and L as the op wants. */
#define V_L0	0x01		/* L must be 0 (else #UD) */
#define V_LIG	0x02		/* L ignored */
#define V_W0	0x04
#define V_W1	0x08
#define V_NV	0x10		/* vvvv must be 1111 */
#define V_GPR	0x20		/* general-register operands (BMI) */
#define V_VSIB	0x40		/* gather: vector index */
#define V_AVX2	0x80

struct ifz_vop {
	uint8_t cls, map, opc, pp;	/* pp: 0, 0x66, 0xf3, 0xf2 */
	int8_t ext;
	uint8_t vfl;
	uint16_t fl;
	uint8_t size;
};

#define VX(c, m, o, p, e, v, f, s) { IFZ_##c, m, o, p, e, v, f, s }

static const struct ifz_vop vex_ops[] = {
	VX(AVX, 1, 0x10, 0, -1, V_NV, M, 32),		/* vmovups */
	VX(AVX, 1, 0x11, 0, -1, V_NV, M, 32),
	VX(AVX, 1, 0x28, 0x66, -1, V_NV, M, 32),	/* vmovapd (aligned) */
	VX(AVX, 1, 0x58, 0, -1, 0, M, 32),		/* vaddps */
	VX(AVX, 1, 0x59, 0xf2, -1, V_LIG, M, 8),	/* vmulsd */
	VX(AVX, 1, 0x57, 0x66, -1, 0, M, 32),		/* vxorpd */
	VX(AVX, 1, 0x6f, 0xf3, -1, V_NV, M, 32),	/* vmovdqu */
	VX(AVX, 1, 0x7f, 0xf3, -1, V_NV, M, 32),
	VX(AVX, 1, 0xef, 0x66, -1, V_AVX2, M, 32),	/* vpxor */
	VX(AVX, 1, 0xfe, 0x66, -1, V_AVX2, M, 32),	/* vpaddd */
	VX(AVX, 1, 0x70, 0x66, -1, V_NV | V_AVX2, M | I8, 32),	/* vpshufd */
	VX(AVX, 1, 0x77, 0, -1, V_NV, 0, 0),		/* vzeroupper/all */
	VX(AVX, 1, 0xd7, 0x66, -1, V_NV | V_AVX2, M | RO, 0),	/* vpmovmskb */
	VX(AVX, 1, 0x7e, 0x66, -1, V_NV | V_L0, M, 0),	/* vmovd/q */
	VX(AVX, 2, 0x18, 0x66, -1, V_NV | V_W0, M | MO, 4),	/* vbroadcastss */
	VX(AVX, 2, 0x0c, 0x66, -1, V_W0, M, 32),	/* vpermilps */
	VX(AVX, 2, 0x2c, 0x66, -1, V_W0, M | MO, 32),	/* vmaskmovps load */
	VX(AVX, 2, 0x2e, 0x66, -1, V_W0, M | MO, 32),	/* vmaskmovps store */
	VX(AVX, 2, 0x8e, 0x66, -1, V_AVX2, M | MO, 32),	/* vpmaskmovd/q store */
	VX(AVX, 2, 0x90, 0x66, -1, V_VSIB | V_AVX2, M | MO, 4),	/* vpgatherdd */
	VX(AVX, 2, 0x00, 0x66, -1, V_AVX2, M, 32),	/* vpshufb */
	VX(AVX, 3, 0x39, 0x66, -1, V_W0 | V_AVX2, M | I8, 16),	/* vextracti128 */
	VX(AVX, 3, 0x38, 0x66, -1, V_W0 | V_AVX2, M | I8, 16),	/* vinserti128 */
	VX(AVX, 3, 0x61, 0x66, -1, V_NV | V_L0, M | I8, 16),	/* vpcmpestri */
	VX(AVX, 3, 0x0f, 0x66, -1, V_AVX2, M | I8, 32),	/* vpalignr */
	VX(BMI, 2, 0xf2, 0, -1, V_GPR | V_L0, M, 0),		/* andn */
	VX(BMI, 2, 0xf3, 0, 1, V_GPR | V_L0, M, 0),		/* blsr */
	VX(BMI, 2, 0xf3, 0, 2, V_GPR | V_L0, M, 0),		/* blsmsk */
	VX(BMI, 2, 0xf3, 0, 3, V_GPR | V_L0, M, 0),		/* blsi */
	VX(BMI, 2, 0xf7, 0, -1, V_GPR | V_L0, M, 0),		/* bextr */
	VX(BMI, 2, 0xf5, 0, -1, V_GPR | V_L0, M, 0),		/* bzhi */
	VX(BMI, 2, 0xf5, 0xf2, -1, V_GPR | V_L0, M, 0),		/* pdep */
	VX(BMI, 2, 0xf5, 0xf3, -1, V_GPR | V_L0, M, 0),		/* pext */
	VX(BMI, 2, 0xf6, 0xf2, -1, V_GPR | V_L0, M, 0),		/* mulx */
	VX(BMI, 2, 0xf7, 0xf3, -1, V_GPR | V_L0, M, 0),		/* sarx */
	VX(BMI, 2, 0xf7, 0x66, -1, V_GPR | V_L0, M, 0),		/* shlx */
	VX(BMI, 2, 0xf7, 0xf2, -1, V_GPR | V_L0, M, 0),		/* shrx */
	VX(BMI, 3, 0xf0, 0xf2, -1, V_GPR | V_L0 | V_NV, M | I8, 0),	/* rorx */
};

static const char *const class_names[IFZ_NCLASS] = {
	"emul nop", "emul jmp", "emul jcc", "emul loop", "emul call",
	"emul ret", "emul push", "emul pop", "emul mov", "emul add/sub rsp",
	"emul lea", "emul mov mem", "emul mov imm", "emul jmp *", "emul call *",
	"xol alu", "xol sse", "xol avx", "xol bmi", "xol x87", "xol string",
	"xol pushf/popf", "xol stack ops", "xol misc", "lazy flags", "refused",
	"random",
};

static const char *const form_names[IFZ_NFORM] = {
	"no memory", "[reg]", "[rip]", "%fs:", "%gs:", "addr32", "[abs32]",
	"addr16",
};

const char *ifz_class_name(int cls)
{
	return cls < IFZ_NCLASS ? class_names[cls] : "?";
}

const char *ifz_form_name(int form)
{
	return form < IFZ_NFORM ? form_names[form] : "?";
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

struct enc {
	struct ifz_insn *in;
	unsigned int n;
	int disp_at, disp_bytes;	/* where the displacement went */
	bool rip;		/* 32-bit code: the absolute disp32 (or disp16) */
	bool m32;		/* 32-bit code */
	unsigned int pre;	/* bytes of IFZ_LAZY's producer before it */
};

static void put(struct enc *e, uint64_t v, int bytes)
{
	while (bytes-- > 0 && e->n < 15) {
		e->in->bytes[e->n++] = v;
		v >>= 8;
	}
}

static int32_t pick_disp(struct ifz_rng *r, int bytes)
{
	if (bytes == 1)
		return (int8_t)ifz_rnd(r);
	switch (ifz_rn(r, 4)) {
	case 0:
		return (int8_t)ifz_rnd(r);
	case 1:
		return (int32_t)ifz_rn(r, 0x2000) - 0x1000;
	case 2:
		return (int32_t)ifz_rnd(r);
	default:
		return (int32_t)ifz_rn(r, 0x40000) - 0x20000;
	}
}

/*
 * ModRM (and SIB and displacement) with a register or a memory operand;
 * the REX/VEX extension bits of the fields are in @rexr, @rexx, @rexb.
 */
static void modrm(struct ifz_rng *r, struct enc *e, uint32_t fl, int ext,
		  int reg, bool rexx, bool rexb, bool allow_rip)
{
	struct ifz_insn *in = e->in;
	int mod, rm;

	if (fl & FM) {
		put(e, ext, 1);
		return;
	}
	if (ext >= 0)
		reg = ext;
	if (fl & RO)
		mod = 3;
	else if (fl & MO)
		mod = ifz_rn(r, 3);
	else
		mod = ifz_rn(r, 5) == 0 ? 3 : ifz_rn(r, 3);
	rm = ifz_rn(r, 8);
	if (mod != 3 && allow_rip && ifz_rn(r, 4) == 0) {
		mod = 0;
		rm = 5;
	} else if (!allow_rip && mod == 0 && rm == 5) {
		rm = 6;
	}
	put(e, mod << 6 | (reg & 7) << 3 | rm, 1);
	if (mod == 3) {
		in->target_reg = rm | (rexb ? 8 : 0);
		return;
	}

	in->mem = 1;
	in->base = 0xff;
	in->index = 0xff;
	if (in->a16) {
		/* [bx+si] [bx+di] [bp+si] [bp+di] [si] [di] [bp] [bx] */
		static const uint8_t base16[8] = { 3, 3, 5, 5, 6, 7, 5, 3 };
		static const uint8_t index16[8] = { 6, 7, 6, 7, 0xff, 0xff, 0xff, 0xff };

		in->base = base16[rm];
		in->index = index16[rm];
		if (mod == 0 && rm == 6) {
			in->base = 0xff;	/* [disp16] */
			e->rip = true;
			in->rip = 1;
		}
		e->disp_bytes = mod == 1 ? 1 : mod == 2 || e->rip ? 2 : 0;
		if (e->disp_bytes) {
			e->disp_at = e->n;
			in->disp = e->disp_bytes == 1 ? (int8_t)ifz_rnd(r) :
				   (int32_t)ifz_rn(r, 0x10000);
			put(e, (uint32_t)in->disp, e->disp_bytes);
		}
		return;
	}
	if (rm == 4) {
		int scale = ifz_rn(r, 4), idx = ifz_rn(r, 8), base = ifz_rn(r, 8);

		put(e, scale << 6 | idx << 3 | base, 1);
		if (idx != 4 || rexx)
			in->index = idx | (rexx ? 8 : 0);
		in->scale = scale;
		if (base == 5 && mod == 0)
			e->disp_bytes = 4;
		else
			in->base = base | (rexb ? 8 : 0);
		/*
		 * 32-bit code: no base and no index is an absolute disp32,
		 * aimed as [disp32] is.  A random one reached the [uprobes]
		 * area, which the first probed run maps: "vpaddd 0xffffa079,
		 * %ymm6,%ymm7" faulted unprobed and loaded a slot probed.
		 */
		if (e->m32 && in->base == 0xff && in->index == 0xff) {
			e->rip = true;
			in->rip = 1;
		}
	} else if (rm == 5 && mod == 0) {
		e->rip = true;
		in->rip = 1;
		e->disp_bytes = 4;
	} else {
		in->base = rm | (rexb ? 8 : 0);
	}
	if (mod == 1)
		e->disp_bytes = 1;
	else if (mod == 2)
		e->disp_bytes = 4;
	if (e->disp_bytes) {
		e->disp_at = e->n;
		in->disp = pick_disp(r, e->disp_bytes);
		put(e, (uint32_t)in->disp, e->disp_bytes);
	}
}

/* A branch target in the cell's own landing area, never in the insn. */
static unsigned long landing(struct ifz_rng *r, unsigned long addr, int len)
{
	unsigned long cell = addr - IFZ_CELL_INSN, t;

	do {
		t = cell + ifz_rn(r, IFZ_CELL_BYTES);
	} while (t >= addr && t < addr + len);
	return t;
}

/* Where a rip-relative operand points: chosen once, with the insn. */
static unsigned long mem_target(struct ifz_rng *r, unsigned int size,
				uint16_t need, unsigned long rsp, bool m32);

static void immediates(struct ifz_rng *r, struct enc *e, uint32_t fl,
		       int opsize)
{
	if (fl & I8)
		put(e, ifz_rnd(r), 1);
	/*
	 * ret $imm16: below 0x8000, which QEMU 7.2's TCG sign-extends (CPUs
	 * do not).
	 */
	if (fl & I16)
		put(e, ifz_rn(r, 3) ? ifz_rn(r, 64) * 8 : ifz_rn(r, 0x8000), 2);
	if (fl & I16I8) {
		put(e, ifz_rn(r, 0x80), 2);
		put(e, ifz_rn(r, 3) ? 0 : ifz_rn(r, 4), 1);
	}
	if (fl & IZ) {
		uint64_t v = ifz_rn(r, 3) ? ifz_rn(r, 0x100) * 8 : ifz_rnd(r);

		if (ifz_rn(r, 4) == 0)
			v = -v;
		put(e, v, opsize == 2 ? 2 : 4);
	}
	if (fl & IV) {
		uint64_t v = ifz_rnd(r);

		if (opsize == 8 && ifz_rn(r, 2))
			v = (int64_t)(int32_t)v;	/* the emulated form */
		put(e, v, opsize);
	}
}

/* The rel8/rel32 of a branch at @addr, once its length is known. */
static void branch_disp(struct ifz_rng *r, struct enc *e, uint32_t fl,
			unsigned long addr)
{
	int bytes = fl & R8 ? 1 : 4, len = e->n + bytes;
	unsigned long next = addr + len, t;
	int64_t rel;

	if (bytes == 4 && ifz_rn(r, 10) == 0)
		t = ifz_rn(r, 2) ? IFZ_HOLE + ifz_rn(r, 0x1000) :
				   IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES);
	else
		t = landing(r, addr - e->pre, len + e->pre);
	rel = (int64_t)t - (int64_t)next;
	if (bytes == 1 && (rel < -128 || rel > 127))
		rel = (int8_t)ifz_rnd(r);
	/* never back into the instruction, nor its producer: a second hit */
	if (bytes == 1 && next + rel >= addr - e->pre && next + rel < next)
		rel = 1;
	put(e, (uint64_t)rel, bytes);
}

/*
 * Fix the rip-relative displacement now that the length is known; a gs
 * override adds the gs base the runner set.
 */
static void fix_rip(struct ifz_rng *r, struct enc *e, unsigned long addr,
		    unsigned int size, uint16_t need, bool gs)
{
	unsigned long t = mem_target(r, size, need, IFZ_STACK + 0x1000, false);
	int32_t d = (int32_t)(t - (gs ? IFZ_GSBASE : 0) - (addr + e->n));
	int i;

	e->in->disp = d;
	for (i = 0; i < 4; i++)
		e->in->bytes[e->disp_at + i] = (uint32_t)d >> (8 * i);
}

/*
 * 32-bit code: the absolute displacement (disp32, or disp16 behind 67)
 * that puts the operand on a target, from the segment base @segbase.  A
 * disp16 reaches only 64 KiB above it: with no base, it faults.
 */
static void fix_abs(struct ifz_rng *r, struct enc *e, unsigned int size,
		    uint16_t need, uint64_t segbase)
{
	uint64_t t = mem_target(r, size, need, IFZ_STACK + 0x1000, true);
	uint32_t d = (uint32_t)(t - segbase);
	int i;

	if (e->disp_bytes == 2)
		d &= 0xffff;
	e->in->disp = (int32_t)d;
	for (i = 0; i < e->disp_bytes; i++)
		e->in->bytes[e->disp_at + i] = d >> (8 * i);
}

/* The base of segment prefix @seg: see struct ifz_env. */
static uint64_t seg_base(const struct ifz_env *env, int seg)
{
	int tls = env->mode32 ? 0x65 : 0x64;

	if (seg == tls)
		return env->fsbase;
	return seg == (tls ^ 1) ? IFZ_GSBASE : 0;
}

/*
 * The bit offset register of a bt* into memory (ModRM.reg at @at): not
 * one that forms the address (nor %rsp), so the state can keep it small.
 */
static void bit_reg(struct ifz_insn *in, int at, int reg, bool rexr)
{
	int n = reg | (rexr ? 8 : 0);

	while (n == in->base || n == in->index || n == 4)
		n = (n & 8) | ((n + 1) & 7);
	in->bytes[at] = (in->bytes[at] & ~0x38) | (n & 7) << 3;
	in->bit_reg = n;
	in->need |= IFZ_NEED_BIT_REG;
}

static int opsize_of(uint32_t fl, bool p66, bool w)
{
	if (fl & BYTE)
		return 1;
	if (w)
		return 8;
	return p66 ? 2 : 4;
}

/*
 * A legacy-encoded instruction.  The segment prefixes it draws are 64-bit
 * code's: 0x64 the C library's thread area, 0x65 the runner's; 32-bit
 * code swaps the two bytes at the end (see struct ifz_env).
 */
static void encode_legacy(struct ifz_rng *r, const struct ifz_env *env,
			  unsigned long addr, struct ifz_insn *in,
			  const struct ifz_op *op, unsigned int pre)
{
	struct enc e = { .in = in, .m32 = env->mode32, .pre = pre };
	bool p66, w = false, rexr, rexx, rexb, rex, may_mem, a16;
	int opsize, seg = 0, seg_at = 0, lock_at = -1;
	uint8_t rexbyte = 0;

	p66 = op->mp == 0x66;
	may_mem = (op->fl & M) && !(op->fl & (RO | FM));
	in->cls = op_class(op, e.m32);
	in->need = op->need;
	/* 16-bit addressing reaches data only from the runner's segment */
	a16 = e.m32 && may_mem && ifz_rn(r, 12) == 0;

	/* legacy prefixes, in random order but mandatory ones last */
	if (may_mem && (ifz_rn(r, 8) == 0 || (a16 && ifz_rn(r, 3)))) {
		seg = ifz_rn(r, 2) ? 0x64 : 0x65;
		seg_at = e.n;
		put(&e, seg, 1);
	}
	if (!(op->fl & N66) && !op->mp && ifz_rn(r, 6) == 0) {
		p66 = true;
		put(&e, 0x66, 1);
	}
	if (a16) {
		in->a16 = 1;
		put(&e, 0x67, 1);
	} else if (!e.m32 && may_mem && ifz_rn(r, 14) == 0 && seg != 0x64) {
		in->a32 = 1;
		put(&e, 0x67, 1);
	}
	if ((op->fl & LCK) && ifz_rn(r, 6) == 0) {
		lock_at = e.n;
		put(&e, 0xf0, 1);
	}
	if (op->cls == IFZ_STRING && ifz_rn(r, 3))
		put(&e, ifz_rn(r, 3) ? 0xf3 : 0xf2, 1);
	if ((op->cls == IFZ_JMP || op->cls == IFZ_JCC || op->cls == IFZ_RET ||
	     op->cls == IFZ_CALL || op->cls == IFZ_CALL_IND ||
	     op->cls == IFZ_JMP_IND) && ifz_rn(r, 10) == 0)
		put(&e, ifz_rn(r, 2) ? 0xf2 : 0x3e, 1);	/* bnd, notrack */
	/*
	 * es/cs/ss/ds: ignored in 64-bit code.  In 32-bit code the last
	 * segment prefix wins (a cs store is #GP): never after fs or gs,
	 * whose operand would then land where the state did not aim it.
	 */
	if (ifz_rn(r, 25) == 0 && !(e.m32 && seg))
		put(&e, 0x26 + 8 * ifz_rn(r, 4), 1);
	if (op->mp)
		put(&e, op->mp, 1);

	/* REX: its W/R/X/B bits at random, sometimes misplaced (ignored) */
	rex = !e.m32 && ifz_rn(r, 2);
	rexr = rex && ifz_rn(r, 2);
	rexx = rex && ifz_rn(r, 2);
	rexb = rex && ifz_rn(r, 2);
	w = rex && !(op->fl & NW) && ifz_rn(r, 2);
	if (op->cls == IFZ_ALU_SP || (op->cls == IFZ_STACK_OP && op->opc == 0x50))
		rexb = false;
	if (op->cls == IFZ_ALU_SP && !e.m32) {
		rex = true;
		w = ifz_rn(r, 8) != 0;
		rexx = false;
		rexr = false;
	}
	if (rex) {
		rexbyte = 0x40 | w << 3 | rexr << 2 | rexx << 1 | rexb;
		if (e.n && ifz_rn(r, 30) == 0) {
			/*
			 * A REX before a legacy prefix is ignored by CPUs, but
			 * QEMU 7.2's TCG applies it: with X or B the operand
			 * moves to a register the state does not aim, and
			 * "4f 64 66 88 20" stored %r12b at %fs:(%r8), into the
			 * runner's TLS and TCB (the workers that died in malloc
			 * or of a smashed stack guard).  R moves the address of
			 * a bt* by register.  It keeps W, which moves none.
			 */
			rexbyte &= ~7;
			memmove(in->bytes + 1, in->bytes, e.n);
			in->bytes[0] = rexbyte;
			e.n++;
			seg_at++;
			if (lock_at >= 0)
				lock_at++;
			w = false;
			rexr = false;
			rexx = false;
			rexb = false;
		} else {
			put(&e, rexbyte, 1);
		}
	}
	opsize = opsize_of(op->fl, p66, w);
	in->size = op->size ? op->size : opsize;
	/*
	 * ldmxcsr, fxrstor: QEMU 7.2's TCG loads reserved MXCSR bits where
	 * CPUs raise #GP, and the ia32 rt_sigreturn then refuses the frame
	 * the kernel made of that state: the runner died of SIGSEGV.
	 */
	if (e.m32 && op->cls == IFZ_SSE && op->opc == 0xae && (op->ext == 1 || op->ext == 2))
		in->need |= IFZ_NEED_MXCSR;
	/* 32-bit code: 4-byte pointers and stack words, cmpxchg8b */
	if (e.m32 && (in->size == 16 || in->size == 8) && op->cls != IFZ_SSE &&
	    op->cls != IFZ_X87 && (op->cls != IFZ_ALU || op->map))
		in->size /= 2;

	if (op->map)
		put(&e, 0x0f, 1);
	if (op->map == 2)
		put(&e, 0x38, 1);
	else if (op->map == 3)
		put(&e, 0x3a, 1);
	if (op->fl & OPR) {
		if (op->cls == IFZ_JCC || op->cls == IFZ_LAZY)
			put(&e, op->opc + ifz_rn(r, 16), 1);
		else
			put(&e, op->opc + ifz_rn(r, 8), 1);
	} else {
		put(&e, op->opc, 1);
	}
	if (op->fl & M) {
		int at = e.n, reg = ifz_rn(r, 8);

		modrm(r, &e, op->fl, op->ext, reg, rexx, rexb,
		      !(op->fl & (RO | FM | NRIP)));
		if ((op->fl & BTR) && in->mem)
			bit_reg(in, at, reg, rexr);
	}
	if (op->fl & (R8 | R32))
		branch_disp(r, &e, op->fl, addr);
	if (op->fl & FAR) {
		put(&e, landing(r, addr, e.n + 6), 4);
		put(&e, far_sels32[ifz_rn(r, ARRAY_SIZE(far_sels32))], 2);
	}
	immediates(r, &e, op->fl, op->fl & IV ? opsize : (p66 ? 2 : 4));
	/*
	 * int $0x80 is the i386 system call (IA32_EMULATION), made with the
	 * state's registers: it exited workers (eax 1), set the umask (60)
	 * and could unmap or shrink anything.  Other vectors fault.
	 */
	if (op->cls == IFZ_REFUSED && op->opc == 0xcd && in->bytes[e.n - 1] == 0x80)
		in->bytes[e.n - 1] = 0x81;
	if (lock_at >= 0 && !in->mem) {
		/*
		 * lock with a register operand is #UD, but QEMU 7.2's TCG
		 * aborts on some (lock bts %edi,%esp): keep it for memory.
		 */
		memmove(in->bytes + lock_at, in->bytes + lock_at + 1, e.n - lock_at - 1);
		e.n--;
	}
	/*
	 * An %fs operand the state cannot aim (rip-relative, or the stack
	 * pointer with no index) would land some 256 MiB above the fs base,
	 * amid the runner's thread stacks and their TLS: use %gs there, whose
	 * base is the runner's.
	 */
	if (seg == 0x64 && (e.rip || (in->base == 4 && in->index == 0xff) ||
			    in->a16)) {
		in->bytes[seg_at] = 0x65;
		seg = 0x65;
	}
	if (e.m32 && seg) {
		seg ^= 1;			/* 0x64 <-> 0x65 */
		in->bytes[seg_at] = seg;
	}
	if (e.rip && e.m32)
		fix_abs(r, &e, in->size, in->need, seg_base(env, seg));
	else if (e.rip)
		fix_rip(r, &e, addr, in->size, in->need, seg == 0x65);
	in->len = e.n;
	in->seg = seg;
	in->form = in->a16 ? IFZ_F_A16 : e.rip ? (e.m32 ? IFZ_F_ABS : IFZ_F_RIP) :
		   !in->mem ? IFZ_F_NONE :
		   seg == 0x64 ? IFZ_F_FS : seg == 0x65 ? IFZ_F_GS :
		   in->a32 ? IFZ_F_A32 : in->a16 ? IFZ_F_A16 : IFZ_F_MEM;
}

static void gen_legacy(struct ifz_rng *r, const struct ifz_env *env,
		       unsigned long addr, struct ifz_insn *in)
{
	const struct ifz_op *op;

	if (env->mode32) {
		unsigned int i = ifz_rn(r, ARRAY_SIZE(legacy_ops) +
					ARRAY_SIZE(legacy32_ops));

		op = i < ARRAY_SIZE(legacy_ops) ? &legacy_ops[i] :
		     &legacy32_ops[i - ARRAY_SIZE(legacy_ops)];
	} else {
		op = &legacy_ops[ifz_rn(r, ARRAY_SIZE(legacy_ops))];
	}
	encode_legacy(r, env, addr, in, op, 0);
}

/*
 * The lazy-flags class.  QEMU keeps the flags as the last flag-setting
 * operation and its operands, and computes them only when something reads
 * them; a trap materialises them.  Unprobed, producer, instruction and
 * consumer run in one translation block; probed, the breakpoint splits it
 * and the instruction runs from the slot (or the kernel emulates it) on
 * flags computed at the trap.  So: an instruction whose only output is
 * flags, or whose result depends on the flags it finds (adc, sbb, inc
 * keeping CF, cmc, rcl, setcc, jcc, loopz, pushf), after one that leaves
 * them in each of QEMU's lazy forms, and before one that reads them.
 *
 * No adcx or adox: under QEMU 7.2's TCG, "sahf; adox %fs:0x329(%rcx,
 * %rbp,4),%esi; cmc" left EFLAGS 0xa8107ed6, bits no instruction sets,
 * among them IOPL 3, which the trap then kept in the task's flags: every
 * later run of the worker had IOPL 3, unprobed as probed.
 *
 * setcc, rcl and rcr only on registers: QEMU 7.2's TCG computes the flags
 * they need into its lazy state's source before the memory access, and
 * when that access faults it rebuilds the flags from the restored lazy
 * form over the overwritten source.  "xor %ebx,%ebp; setno 0x1322c0c8(%rip)"
 * faulting showed ZF set for a result 0xe84ea2e4: the probed run, whose
 * flags the breakpoint had already computed, was right.
 */
static const struct ifz_op lazy_ops[] = {
	X(LAZY, 0, 0x39, -1, 0, M, 0, 0),		/* cmp */
	X(LAZY, 0, 0x3b, -1, 0, M, 0, 0),
	X(LAZY, 0, 0x3c, -1, 0, I8 | BYTE, 0, 0),
	X(LAZY, 0, 0x38, -1, 0, M | BYTE, 0, 0),
	X(LAZY, 0, 0x83, 7, 0, M | I8, 0, 0),		/* cmp $i8 */
	X(LAZY, 0, 0x85, -1, 0, M, 0, 0),		/* test */
	X(LAZY, 0, 0x84, -1, 0, M | BYTE, 0, 0),
	X(LAZY, 0, 0xa8, -1, 0, I8, 0, 0),
	X(LAZY, 0, 0xf7, 0, 0, M | IZ | NRIP, 0, 0),	/* test $imm */
	X(LAZY, 1, 0xa3, -1, 0, M | BTR, 0, 0),		/* bt */
	X(LAZY, 1, 0xba, 4, 0, M | I8, 0, 0),		/* bt $i8 */
	X(LAZY, 1, 0x2e, -1, 0, M, 0, 4),		/* ucomiss */
	X(LAZY, 1, 0x2f, -1, 0x66, M, 0, 8),		/* comisd */
	X(LAZY, 2, 0x17, -1, 0x66, M, IFZ_NEED_ALIGN16, 16),	/* ptest */
	X(LAZY, 0, 0xf5, -1, 0, 0, 0, 0),		/* cmc */
	X(LAZY, 0, 0xf8, -1, 0, 0, 0, 0),		/* clc */
	X(LAZY, 0, 0x9e, -1, 0, 0, 0, 0),		/* sahf */
	X(LAZY, 0, 0x9f, -1, 0, 0, 0, 0),		/* lahf */
	X(LAZY, 0, 0x9c, -1, 0, 0, 0, 0),		/* pushf */
	X(LAZY, 0, 0x11, -1, 0, M, 0, 0),		/* adc */
	X(LAZY, 0, 0x1b, -1, 0, M, 0, 0),		/* sbb */
	X(LAZY, 0, 0x83, 2, 0, M | I8, 0, 0),		/* adc $i8 */
	X(LAZY, 0, 0x80, 3, 0, M | I8 | BYTE, 0, 0),	/* sbb $i8 */
	X(LAZY, 0, 0xff, 0, 0, M, 0, 0),		/* inc: CF stays */
	X(LAZY, 0, 0xfe, 1, 0, M | BYTE, 0, 0),		/* dec */
	X(LAZY, 0, 0xd1, 2, 0, M | RO, 0, 0),		/* rcl: see above */
	X(LAZY, 0, 0xd1, 3, 0, M | RO, 0, 0),		/* rcr */
	X(LAZY, 0, 0xd3, 4, 0, M, 0, 0),		/* shl %cl: 0 keeps them */
	X(LAZY, 1, 0x90, 0, 0, M | OPR | BYTE | RO, 0, 1),	/* setcc */
	X(LAZY, 1, 0x40, -1, 0, M | OPR, 0, 0),		/* cmovcc */
	X(LAZY, 0, 0x70, -1, 0, R8 | N66 | OPR, 0, 0),	/* jcc */
	X(LAZY, 1, 0x80, -1, 0, R32 | N66 | OPR, 0, 0),
	X(LAZY, 0, 0xe1, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),	/* loopz */
	X(LAZY, 0, 0xe0, -1, 0, R8 | N66, IFZ_NEED_COUNT, 0),	/* loopnz */
};

/* Is register @n one @in addresses through (or %rsp)? */
static bool addressing(const struct ifz_insn *in, int n)
{
	return n == 4 || n == in->base || n == in->index ||
	       ((in->need & IFZ_NEED_BIT_REG) && n == in->bit_reg) ||
	       ((in->need & IFZ_NEED_COUNT) && n == 1);
}

/* What a producer or consumer writes: nothing, ModRM.rm, ModRM.reg, %ah. */
enum { W_NONE, W_RM, W_REG, W_AH };

struct ifz_side {
	uint8_t map, opc;
	int8_t ext;		/* ModRM.reg; -1 a register; -2 no ModRM */
	uint8_t w, imm, mp;
	bool byte;
};

/* Producers: each of QEMU's lazy forms (add, adc, logic, inc, shl, ...). */
static const struct ifz_side producers[] = {
	{ 0, 0x01, -1, W_RM }, { 0, 0x00, -1, W_RM, .byte = 1 },
	{ 0, 0x29, -1, W_RM }, { 0, 0x28, -1, W_RM, .byte = 1 },
	{ 0, 0x11, -1, W_RM }, { 0, 0x19, -1, W_RM }, { 0, 0x21, -1, W_RM },
	{ 0, 0x09, -1, W_RM }, { 0, 0x31, -1, W_RM }, { 0, 0x39, -1, W_NONE },
	{ 0, 0x85, -1, W_NONE }, { 0, 0x84, -1, W_NONE, .byte = 1 },
	{ 0, 0xff, 0, W_RM }, { 0, 0xff, 1, W_RM }, { 0, 0xfe, 0, W_RM, .byte = 1 },
	{ 0, 0xf7, 3, W_RM },					/* neg */
	{ 0, 0xd1, 4, W_RM }, { 0, 0xd1, 5, W_RM }, { 0, 0xd1, 7, W_RM },
	{ 0, 0xd3, 4, W_RM }, { 0, 0xd3, 5, W_RM },		/* %cl: 0 too */
	{ 0, 0xc1, 7, W_RM, 1 }, { 0, 0xc0, 4, W_RM, 1, .byte = 1 },
	{ 0, 0xd1, 0, W_RM }, { 0, 0xd3, 1, W_RM }, { 0, 0xd1, 2, W_RM },
	{ 1, 0xaf, -1, W_REG },					/* imul */
	{ 1, 0xa3, -1, W_NONE }, { 1, 0xba, 5, W_RM, 1 },	/* bt, bts */
	{ 1, 0xbc, -1, W_REG }, { 1, 0xb8, -1, W_REG, 0, 0xf3 },	/* bsf, popcnt */
	{ 1, 0xbd, -1, W_REG, 0, 0xf3 },			/* lzcnt */
	{ 1, 0xa4, -1, W_RM, 1 }, { 1, 0xad, -1, W_RM },	/* shld, shrd */
	{ 0, 0xf5, -2 }, { 0, 0xf9, -2 }, { 0, 0x9e, -2 },	/* cmc, stc, sahf */
};

/* Consumers: setcc, adc, sbb, cmovcc, lahf, rcl, inc, cmc. */
static const struct ifz_side consumers[] = {
	{ 1, 0x92, 0, W_RM, .byte = 1 }, { 1, 0x94, 0, W_RM, .byte = 1 },
	{ 1, 0x9f, 0, W_RM, .byte = 1 }, { 1, 0x9a, 0, W_RM, .byte = 1 },
	{ 0, 0x11, -1, W_RM }, { 0, 0x19, -1, W_RM },
	{ 1, 0x42, -1, W_REG }, { 1, 0x4c, -1, W_REG },
	{ 0, 0x9f, -2, W_AH }, { 0, 0xd1, 2, W_RM }, { 0, 0xff, 0, W_RM },
	{ 0, 0xf5, -2 },
};

/*
 * bt's: the flags bt leaves undefined (OF, SF, AF, PF) QEMU 7.2's TCG
 * derives from its lazy state, which the breakpoint's trap has already
 * turned into plain flags: bt after "test %bh,%al" left OF set unprobed,
 * clear probed.  adc and sbb redefine them all from CF and registers.
 */
static const struct ifz_side cf_consumers[] = {
	{ 0, 0x11, -1, W_RM }, { 0, 0x19, -1, W_RM },
};

enum { SIDE_PRODUCER, SIDE_CONSUMER, SIDE_CF_CONSUMER };

/*
 * A register-only producer or consumer (@side) of @in's flags at @p,
 * writing no register @in addresses through.  Returns its length (at
 * most 7).
 */
static int lazy_side(struct ifz_rng *r, const struct ifz_env *env,
		     const struct ifz_insn *in, uint8_t *p, int side)
{
	const struct ifz_side *op;
	int n = 0, rm, reg, dst, nreg = env->mode32 ? 8 : 16;
	bool rex;

	do {
		if (side == SIDE_CF_CONSUMER)
			op = &cf_consumers[ifz_rn(r, ARRAY_SIZE(cf_consumers))];
		else if (side == SIDE_CONSUMER)
			op = &consumers[ifz_rn(r, ARRAY_SIZE(consumers))];
		else
			op = &producers[ifz_rn(r, ARRAY_SIZE(producers))];
	} while (op->w == W_AH && addressing(in, 0));
	if (op->ext == -2) {
		p[n++] = op->opc;
		return n;
	}
	rex = !env->mode32 && ifz_rn(r, 2);
	do {
		rm = ifz_rn(r, rex ? nreg : 8);
		reg = op->ext >= 0 ? op->ext : ifz_rn(r, rex ? nreg : 8);
		dst = op->w == W_RM ? rm : op->w == W_REG ? reg : -1;
		/* byte registers 4-7 with no REX are ah, ch, dh, bh */
		if (op->byte && !rex && dst >= 4)
			dst -= 4;
	} while (dst >= 0 && addressing(in, dst));
	if (op->mp)
		p[n++] = op->mp;
	else if (ifz_rn(r, 5) == 0)
		p[n++] = 0x66;
	if (rex)
		p[n++] = 0x40 | ifz_rn(r, 2) << 3 | (reg >= 8) << 2 | (rm >= 8);
	if (op->map)
		p[n++] = 0x0f;
	if (op->map == 2)
		p[n++] = 0x38;
	p[n++] = op->opc;
	p[n++] = 0xc0 | (reg & 7) << 3 | (rm & 7);
	if (op->imm)
		p[n++] = ifz_rn(r, 3) ? ifz_rn(r, 70) : ifz_rnd(r);
	return n;
}

/*
 * The lazy-flags case: the instruction, the producer right before it
 * (after nops, in the IFZ_LAZY_PRE bytes where the case enters) and now
 * and then a consumer right after it.  A branch never lands in the
 * producer: the instruction would run twice.
 */
#define IFZ_LAZY_PRE	8

static void gen_lazy(struct ifz_rng *r, const struct ifz_env *env,
		     unsigned long addr, struct ifz_insn *in)
{
	const struct ifz_op *op;
	int n;

	op = &lazy_ops[ifz_rn(r, ARRAY_SIZE(lazy_ops))];
	encode_legacy(r, env, addr, in, op, IFZ_LAZY_PRE);
	in->cls = IFZ_LAZY;
	memset(in->pre, 0x90, sizeof(in->pre));
	n = lazy_side(r, env, in, in->post, SIDE_PRODUCER);
	memcpy(in->pre + IFZ_LAZY_PRE - n, in->post, n);
	in->pre_len = IFZ_LAZY_PRE;
	memset(in->post, 0, sizeof(in->post));
	if (op->map == 1 && (op->opc == 0xa3 || op->opc == 0xba))
		in->post_len = lazy_side(r, env, in, in->post, SIDE_CF_CONSUMER);
	else if (!(op->fl & (R8 | R32)) && ifz_rn(r, 4))
		in->post_len = lazy_side(r, env, in, in->post, SIDE_CONSUMER);
}

static void gen_vex(struct ifz_rng *r, const struct ifz_env *env,
		    unsigned long addr, struct ifz_insn *in)
{
	const struct ifz_vop *op;
	struct enc e = { .in = in, .m32 = env->mode32 };
	int R, X, B, W, L, vvvv, pp, reg;

	do {
		op = &vex_ops[ifz_rn(r, ARRAY_SIZE(vex_ops))];
	/*
	 * No gather in 32-bit code: under QEMU 7.2's TCG, vpgatherdd
	 * (c4 e2 7d 90 4c bb 1c) ran until the runner's timeout in 12 of
	 * 16 states, unprobed.
	 */
	} while ((op->cls == IFZ_BMI && !env->bmi2) ||
		 ((op->vfl & V_AVX2) && !env->avx2) ||
		 ((op->vfl & V_VSIB) && env->mode32));
	in->cls = op->cls;
	in->vex = 1;
	R = ifz_rn(r, 2);
	X = ifz_rn(r, 2);
	B = ifz_rn(r, 2);
	W = op->vfl & V_W0 ? 0 : op->vfl & V_W1 ? 1 : ifz_rn(r, 2);
	L = op->vfl & V_L0 ? 0 : ifz_rn(r, 2);
	if ((op->vfl & V_L0) && ifz_rn(r, 30) == 0)
		L = 1;				/* #UD */
	vvvv = op->vfl & V_NV ? 0 : ifz_rn(r, 16);
	if ((op->vfl & V_NV) && ifz_rn(r, 30) == 0)
		vvvv = ifz_rn(r, 16);		/* #UD unless 0 */
	if (e.m32) {
		/*
		 * 32-bit code: c4/c5 are les/lds unless the next byte's top
		 * bits are 11, i.e. R, X (c4) and vvvv's top bit (c5) are 0.
		 */
		R = 0;
		X = 0;
		B = 0;
		vvvv &= 7;
	}
	pp = op->pp == 0x66 ? 1 : op->pp == 0xf3 ? 2 : op->pp == 0xf2 ? 3 : 0;
	if (ifz_rn(r, 40) == 0)
		put(&e, 0x66, 1);		/* a prefix before VEX: #UD */
	if (op->map == 1 && !X && !B && !W && ifz_rn(r, 2)) {
		put(&e, 0xc5, 1);
		put(&e, (!R) << 7 | (~vvvv & 15) << 3 | L << 2 | pp, 1);
	} else {
		put(&e, 0xc4, 1);
		put(&e, (!R) << 7 | (!X) << 6 | (!B) << 5 | op->map, 1);
		put(&e, W << 7 | (~vvvv & 15) << 3 | L << 2 | pp, 1);
	}
	put(&e, op->opc, 1);
	in->size = op->size ? (op->size == 32 && !L ? 16 : op->size) :
		   (W ? 8 : 4);
	reg = ifz_rn(r, 8);
	if (op->fl & M) {
		uint32_t fl = op->fl;

		if (op->vfl & V_VSIB) {
			/* a gather needs a SIB; force mod 00/01/10, rm 100 */
			int mod = ifz_rn(r, 3), scale = ifz_rn(r, 4);
			int base = ifz_rn(r, 8), idx = ifz_rn(r, 8);

			if (base == 5 && mod == 0)
				base = 3;
			/*
			 * Not %xmm4 as the index: QEMU 7.2's TCG takes SIB
			 * index 100 with VEX.X clear for "no index", as for
			 * a general register, and adds whatever its scratch
			 * vector holds.  With indices 0, 8, 16, 24 and a
			 * full mask vpgatherdq loaded the first qword four
			 * times where CPUs load four; from the slot it took
			 * other offsets and faulted at 0x80ae8a8b where the
			 * unprobed run had not.
			 */
			if (idx == 4 && !X)
				idx = 3;
			put(&e, mod << 6 | reg << 3 | 4, 1);
			put(&e, scale << 6 | idx << 3 | base, 1);
			in->mem = 1;
			in->base = base | (B ? 8 : 0);
			in->index = 0xfe;	/* a vector: the state leaves it */
			in->scale = scale;
			if (mod) {
				e.disp_at = e.n;
				e.disp_bytes = mod == 1 ? 1 : 4;
				in->disp = mod == 1 ? (int8_t)ifz_rn(r, 32) * 4 :
						      (int32_t)ifz_rn(r, 0x400);
				put(&e, (uint32_t)in->disp, e.disp_bytes);
			}
		} else {
			modrm(r, &e, fl, op->ext, reg, X, B, !(fl & RO));
		}
	}
	immediates(r, &e, op->fl, 4);
	if (e.rip && e.m32)
		fix_abs(r, &e, in->size, 0, 0);
	else if (e.rip)
		fix_rip(r, &e, addr, in->size, 0, false);
	in->len = e.n;
	in->form = e.rip ? (e.m32 ? IFZ_F_ABS : IFZ_F_RIP) :
		   in->mem ? IFZ_F_MEM : IFZ_F_NONE;
	if (op->cls == IFZ_AVX && op->opc == 0x28)
		in->need |= IFZ_NEED_ALIGN16;
}

/*
 * Opcodes the random class must not run: they change the process.  In
 * 32-bit code (@m32) no branch either, wherever it is: any 32-bit target
 * may be the runner's own code.
 */
static bool random_is_harmful(const uint8_t *b, int n, bool m32)
{
	int i;

	for (i = 0; i < n; i++) {
		uint8_t c = b[i], d = i + 1 < n ? b[i + 1] : 0;

		if (m32 && (c == 0xc2 || c == 0xc3 || c == 0xff ||
			    (c == 0x0f && (d & 0xf0) == 0x80)))
			return true;
		/*
		 * fbstp: "f2 df 31" never ended under QEMU 7.2's TCG, whose
		 * vCPU then took no timer signal, nor the guest its timeout.
		 * fbld the same: "2e 66 df 26" timed out unprobed, and its
		 * vCPU spun until the guest was killed (make fuzz --compat,
		 * seed 0x198c4b9c64d166f9, batch 91).
		 */
		if (m32 && c == 0xdf && ((d & 0x38) == 0x30 ||
					 (d & 0x38) == 0x20) && d < 0xc0)
			return true;
		/*
		 * maskmovq, maskmovdqu (a store byte by byte, as fbld loads):
		 * "2e 66 36 0f f7 ed" timed out unprobed and its vCPU spun
		 * the same way (seed 0x12daf979c0165b82, batch 9).
		 */
		if (m32 && c == 0x0f && d == 0xf7)
			return true;

		if (c == 0xcd || c == 0x8e || c == 0xcf ||		/* int, mov sreg, iret */
		    c == 0x07 || c == 0x17 || c == 0x1f ||		/* pop sreg */
		    c == 0x64 || c == 0x65 || c == 0xc4 || c == 0xc5 ||	/* fs, gs, VEX */
		    c == 0x62 || c == 0x8f ||				/* EVEX, XOP */
		    c == 0xf0)		/* lock: see gen_legacy() */
			return true;
		if (c == 0x0f && (d == 0x05 || d == 0x07 || d == 0x34 ||
				  d == 0x35 || d == 0xa1 || d == 0xa9 ||
				  d == 0xb2 || d == 0xb4 || d == 0xb5 ||
				  d == 0x31 || d == 0x01 || d == 0xae ||
				  d == 0xc7 || d == 0x00 || d == 0x0e ||
				  d == 0x0f || d == 0x37))
			return true;
		/* far call/jmp/ret, and ff /3 /5 far through memory */
		if (c == 0x9a || c == 0xea || c == 0xca || c == 0xcb)
			return true;
		if (c == 0xff && ((d >> 3) & 7) >= 3 && ((d >> 3) & 7) != 4 &&
		    ((d >> 3) & 7) != 6)
			return true;
		/*
		 * rcl, rcr or setcc on memory: when the access faults after an
		 * instruction whose flags QEMU 7.2's TCG still keeps lazily,
		 * the frame shows flags rebuilt over a source the instruction
		 * had already overwritten (see lazy_ops): what they show then
		 * depends on where the translation block began, which a probe
		 * moves.  "66 67 f6 6b e7 d1 1d ..." (imul, then rcr on memory)
		 * ended with ZF set unprobed, clear probed.
		 */
		if (((c & 0xfc) == 0xd0 || (c & 0xfe) == 0xc0) &&
		    ((d >> 3) & 6) == 2 && d < 0xc0)
			return true;
		if (c == 0x0f && (d & 0xf0) == 0x90 && i + 2 < n && b[i + 2] < 0xc0)
			return true;
		/* eb fe and friends: a branch to itself never ends */
		if ((c == 0xeb || (c >= 0x70 && c <= 0x7f) ||
		     (c >= 0xe0 && c <= 0xe3)) && (int8_t)d < 0)
			return true;
		if (c == 0xe9 || c == 0xe8)
			return true;
	}
	return false;
}

/*
 * The random class leaves branches to the structured classes: their
 * targets here would be random, mostly non-canonical, where QEMU's TCG
 * does not fault at the branch as CPUs do.
 */
static bool random_is_branch(const uint8_t *b)
{
	int i = 0;

	while (i < 14 && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 ||
			  b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x3e ||
			  b[i] == 0x26 || b[i] == 0x36 || (b[i] & 0xf0) == 0x40))
		i++;
	switch (b[i]) {
	case 0x70 ... 0x7f: case 0xc2: case 0xc3: case 0xe0 ... 0xe3:
	case 0xeb: case 0xff:
		return true;
	case 0x0f:
		return (b[i + 1] & 0xf0) == 0x80;
	}
	return false;
}

static void gen_random(struct ifz_rng *r, struct ifz_insn *in)
{
	static const uint8_t prefixes[] = {
		0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36, 0x48,
		0x41, 0x4c, 0x40, 0x0f,
	};
	int i, np;

	do {
		memset(in->bytes, 0xcc, sizeof(in->bytes));
		np = ifz_rn(r, 4);
		for (i = 0; i < np; i++)
			in->bytes[i] = prefixes[ifz_rn(r, sizeof(prefixes))];
		for (; i < 15; i++)
			in->bytes[i] = ifz_rnd(r);
	} while (random_is_harmful(in->bytes, 15, false) || random_is_branch(in->bytes));
	in->len = 15;
	in->cls = IFZ_RANDOM;
	in->form = IFZ_F_NONE;
}

/*
 * The random class of 32-bit code.  64-bit code's random operands land
 * mostly on non-canonical addresses; any 32-bit address may be the
 * runner's own memory.  So: a few prefixes, a random opcode, a ModRM byte
 * that addresses at most a register plus a disp8 (the state keeps this
 * class's registers in the data pages or below 64 KiB), then int3s.  An
 * instruction longer than that takes 0xcc bytes for its immediate, disp8
 * or moffs (0xcccccccc, unmapped); one that is shorter leaves the ModRM
 * byte to run as an opcode whose own ModRM, 0xcc, names registers only,
 * so that a value the first one loaded (pop %ebx) is never an address.
 */
static void gen_random32(struct ifz_rng *r, struct ifz_insn *in)
{
	static const uint8_t prefixes[] = {
		0x66, 0x67, 0xf2, 0xf3, 0x2e, 0x3e, 0x26, 0x36,
	};
	uint8_t m;
	int i, n;

	do {
		memset(in->bytes, 0xcc, sizeof(in->bytes));
		n = ifz_rn(r, 4);
		for (i = 0; i < n; i++)
			in->bytes[i] = prefixes[ifz_rn(r, sizeof(prefixes))];
		if (ifz_rn(r, 4) == 0)
			in->bytes[n++] = 0x0f;
		in->bytes[n++] = ifz_rnd(r);
		do {
			m = ifz_rnd(r);
		} while (m >> 6 == 2 || (m >> 6 != 3 && (m & 7) == 4) ||
			 (m >> 6 == 0 && (m & 7) == 5));
		in->bytes[n++] = m;
	} while (random_is_harmful(in->bytes, 15, true) || random_is_branch(in->bytes));
	in->len = 15;
	in->cls = IFZ_RANDOM;
	in->form = IFZ_F_NONE;
}

void ifz_gen_insn(struct ifz_rng *r, const struct ifz_env *env,
		  unsigned long addr, struct ifz_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->base = 0xff;
	in->index = 0xff;
	switch (ifz_rn(r, 22)) {
	case 21:
		gen_lazy(r, env, addr, in);
		break;
	case 0:
		if (env->mode32)
			gen_random32(r, in);
		else
			gen_random(r, in);
		break;
	case 1: case 2:
		if (env->avx) {
			gen_vex(r, env, addr, in);
			break;
		}
		fallthrough;
	default:
		gen_legacy(r, env, addr, in);
	}
}

/* ------------------------------------------------------------------ */
/* Machine states                                                      */
/* ------------------------------------------------------------------ */

static uint64_t pool(struct ifz_rng *r)
{
	switch (ifz_rn(r, 12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return -1ULL;
	case 3: return ifz_rn(r, 256);
	case 4: return (uint32_t)ifz_rnd(r);
	case 5: return 0x80000000ULL << ifz_rn(r, 2);
	case 6: return 0x7fffffffULL;
	case 7: return 1ULL << 63;
	case 8: return IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES);
	case 9: return -(uint64_t)ifz_rn(r, 256);
	default: return ifz_rnd(r);
	}
}

static unsigned long mem_target(struct ifz_rng *r, unsigned int size,
				uint16_t need, unsigned long rsp, bool m32)
{
	static const unsigned long edges[] = {
		IFZ_DATA + 0x1000, IFZ_DATA + 0x2000, IFZ_DATA + 0x3000,
		IFZ_STACK, IFZ_STACK + 0x1000, IFZ_HOLE, IFZ_DATA, IFZ_RDONLY,
	};
	unsigned long t;
	unsigned int sz = size ? size : 8;

	if (need & IFZ_NEED_ALIGN64) {
		/* fxsave and friends: 512 bytes, in data or across the hole */
		if (ifz_rn(r, 8) == 0)
			return IFZ_STACK + IFZ_STACK_BYTES - 256;
		return (IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES - 512)) & ~63UL;
	}
	switch (ifz_rn(r, 20)) {
	case 0: case 1:
		t = rsp - 128 + ifz_rn(r, 256);		/* red zone and above */
		break;
	case 2: case 3:
		t = edges[ifz_rn(r, 8)] - 1 - ifz_rn(r, sz);	/* straddling */
		break;
	case 4: case 5:
		t = IFZ_RDONLY + ifz_rn(r, 0x1000 - sz);
		break;
	case 6:
		t = IFZ_HOLE + ifz_rn(r, 0x1000);
		break;
	case 7:
		/* the low 32 bits stay in IFZ_FAR32's range */
		t = IFZ_FAR + (ifz_rnd(r) & (IFZ_FAR_BYTES - 1) & ~0xffffffffUL) +
		    (ifz_rnd(r) & (IFZ_FAR32_BYTES - 16));
		if (m32)
			t = IFZ_FAR_COMPAT + (uint32_t)t - IFZ_FAR32;
		break;
	default:
		t = IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES - sz);
		if (ifz_rn(r, 2) && !(sz & (sz - 1)))
			t &= ~(unsigned long)((sz > 16 ? 16 : sz) - 1);
	}
	if ((need & IFZ_NEED_ALIGN16) && ifz_rn(r, 6))
		t &= ~15UL;
	return t;
}

/* Where leave pops from, chosen by @v: data, near the stack, a hole. */
static unsigned long frame_target(uint64_t v, unsigned long rsp)
{
	switch (v & 3) {
	case 0:
		return rsp - 128 + (v >> 2) % 256;
	case 1:
		return IFZ_HOLE + (v >> 2) % 0x1000;
	default:
		return IFZ_DATA + (v >> 2) % (IFZ_DATA_BYTES - 8);
	}
}

static unsigned long pick_rsp(struct ifz_rng *r)
{
	switch (ifz_rn(r, 40)) {
	case 0:
		return IFZ_DATA;			/* a push faults */
	case 1:
		return IFZ_RDONLY + 0x800;		/* a push faults */
	case 2:
		return IFZ_HOLE;			/* a pop faults */
	case 3:
		return IFZ_STACK + 0x400 + ifz_rn(r, 0x1000) + 1 + ifz_rn(r, 7);
	default:
		return (IFZ_STACK + 0x400 + ifz_rn(r, 0x1800)) & ~(ifz_rn(r, 2) ? 15UL : 7UL);
	}
}

static unsigned long branch_target(struct ifz_rng *r, unsigned long addr,
				   int len, bool m32)
{
	switch (ifz_rn(r, 12)) {
	case 0:
		return IFZ_HOLE + ifz_rn(r, 0x1000);		/* #PF at the target */
	case 1:
		return IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES);	/* not executable */
	case 2:
		if (m32)
			return IFZ_FAR_COMPAT + ifz_rn(r, IFZ_FAR32_BYTES);
		return IFZ_FAR + ifz_rn(r, IFZ_FAR_BYTES);
	default:
		return landing(r, addr, len);
	}
}

static bool writable(unsigned long a)
{
	/* not "a + 8 <=": an address 8 bytes under 2^64 wraps to pass */
	return a >= IFZ_DATA && a <= IFZ_DATA + IFZ_CMP_BYTES - 8;
}

static void plant(struct ifz_state *st, int i, unsigned long a, uint64_t v)
{
	if (writable(a)) {
		st->plant_addr[i] = a;
		st->plant_val[i] = v;
	}
}

/*
 * Set the base (and index) registers so that the operand lands on @t.
 * The registers the address uses are the instruction's, so a case may
 * find them also named as sources or destinations: that is fine, every
 * run starts from the same state.
 */
static unsigned long place(struct ifz_rng *r, const struct ifz_env *env,
			   const struct ifz_insn *in, struct ifz_state *st,
			   unsigned long t)
{
	uint64_t segbase = seg_base(env, in->seg);
	uint64_t ea = t - segbase - (int64_t)in->disp, idx = 0;
	int s = in->scale;

	if (in->a16) {
		/*
		 * 16-bit addressing: base + index + disp wraps at 64 KiB,
		 * the registers' upper halves do not count.  Out of reach
		 * from the segment base, the operand faults wherever it is.
		 */
		uint32_t o = (uint32_t)(t - segbase), v;

		if (!segbase || o >= 0x10000)
			o = ifz_rn(r, 0x10000);
		v = o - in->disp;
		if (in->index < 16) {
			idx = ifz_rn(r, 0x10000);
			st->regs[in->index] = idx | (ifz_rnd(r) & 0xffff0000);
			v -= idx;
		}
		if (in->base < 16)
			st->regs[in->base] = (v & 0xffff) | (ifz_rnd(r) & 0xffff0000);
		return t;
	}

	if (in->index < 16 && in->index != in->base) {
		idx = ifz_rn(r, 3) ? ifz_rn(r, 64) : -(uint64_t)ifz_rn(r, 64);
		if (in->index == 4)		/* r12 is 12, rsp is never index */
			idx = 0;
		st->regs[in->index] = idx;
		ea -= idx << s;
	}
	if (in->base == 4) {
		/* the stack pointer stays a stack pointer: the operand follows */
		if (in->index < 16 && in->index != 4)
			st->regs[in->index] = (t - segbase - in->disp - st->regs[4]) >> s;
	} else if (in->base < 16 && in->base == in->index) {
		st->regs[in->base] = ea / (1 + (1ULL << s));
	} else if (in->base < 16) {
		st->regs[in->base] = ea;
		if (in->a32)
			st->regs[in->base] = (uint32_t)ea | (ifz_rnd(r) << 32);
	} else if (in->index < 16 && in->index != 4) {
		/* no base: the index alone carries it */
		st->regs[in->index] = (t - segbase - in->disp) >> s;
	}
	return t;
}

/*
 * 32-bit code: where the operand is, from the registers.  place() aims
 * them at a target, but an index alone (or with the stack pointer as the
 * base, or as the base too) cannot carry its low bits: the pointer an
 * indirect or far branch reads must be planted where the CPU reads it, or
 * it jumps through whatever the data holds, which in 32 bits may be the
 * runner's own code.
 */
static uint64_t operand_at(const struct ifz_env *env, const struct ifz_insn *in,
			   const struct ifz_state *st)
{
	uint32_t ea = in->disp;

	if (in->base < 16)
		ea += st->regs[in->base];
	if (in->index < 16)
		ea += in->a16 ? st->regs[in->index] : st->regs[in->index] << in->scale;
	if (in->a16)
		ea &= 0xffff;
	return (uint32_t)(ea + seg_base(env, in->seg));
}

void ifz_gen_state(struct ifz_rng *r, const struct ifz_env *env,
		   const struct ifz_insn *in, unsigned long addr,
		   struct ifz_state *st)
{
	unsigned long t = 0;
	int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < 16; i++)
		st->regs[i] = pool(r);
	/* 32-bit random code addresses through them: see gen_random32() */
	for (i = 0; env->mode32 && in->cls == IFZ_RANDOM && i < 8; i++) {
		uint32_t v = st->regs[i];

		if (v >= 0x10000 && v < 0xffffe000 &&
		    (v < IFZ_DATA || v >= IFZ_DATA + IFZ_MAP_BYTES))
			st->regs[i] = IFZ_DATA + v % IFZ_MAP_BYTES;
	}
	st->regs[4] = pick_rsp(r);
	/*
	 * Random bytes go on running past their first instruction, and may
	 * read below the red zone, where the ABI lets anyone write (and a
	 * copy run without a step saves its scratch register): keep that
	 * slot unmapped, so that their copies are stepped instead.
	 */
	if (in->cls == IFZ_RANDOM)
		st->regs[4] = IFZ_DATA + 0x40 + (ifz_rn(r, 8) << 3);
	st->flags = 0x2 | (ifz_rnd(r) & 0x8d5);
	if (ifz_rn(r, 4) == 0)
		st->flags |= 0x400;		/* DF */
	if (ifz_rn(r, 20) == 0)
		st->flags |= 0x40000;		/* AC */
	if (ifz_rn(r, 10) == 0)
		st->flags |= 0x200000;		/* ID */
	st->vseed = ifz_rnd(r);
	st->mxcsr = 0x1f80;
	if (ifz_rn(r, 5) == 0)
		st->mxcsr = (ifz_rnd(r) & 0xffbf & ~(ifz_rn(r, 2) ? 0 : 0x1f80)) |
			    (ifz_rn(r, 2) ? 0x1f80 : 0);
	st->fcw = 0x37f;
	if (ifz_rn(r, 6) == 0)
		st->fcw = 0x40 | (ifz_rnd(r) & 0xf3f);
	st->x87_full = ifz_rn(r, 4) == 0;

	if (in->mem && !in->rip && in->index != 0xfe) {
		t = mem_target(r, in->size, in->need, st->regs[4], env->mode32);
		if (in->a32)
			t &= 0xffffffffUL;
		place(r, env, in, st, t);
	} else if (in->mem && in->index == 0xfe && in->base < 16 && in->base != 4) {
		st->regs[in->base] = IFZ_DATA + 0x1000 + ifz_rn(r, 0x1000);
	} else if (in->rip && env->mode32) {
		/* an absolute disp32, or disp16: see fix_abs() */
		t = (in->a16 ? (uint16_t)in->disp : (uint32_t)in->disp) +
		    seg_base(env, in->seg);
	} else if (in->rip) {
		/* fix_rip() took the gs base out of a gs displacement */
		t = addr + in->len + in->disp + (in->seg == 0x65 ? IFZ_GSBASE : 0);
		/*
		 * Now and then the stack pointer goes right above the operand,
		 * which is then where a run without a step saves its scratch
		 * register (136 bytes below the stack pointer).
		 */
		if (ifz_rn(r, 6) == 0 && t + 136 > IFZ_DATA + 0x200 &&
		    t + 136 < IFZ_STACK + IFZ_STACK_BYTES)
			st->regs[4] = t + 136 - ifz_rn(r, 8);
	}

	if (in->need & IFZ_NEED_STR) {
		st->regs[6] = IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES);
		st->regs[7] = IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES);
		if (ifz_rn(r, 10) == 0)
			st->regs[7] = IFZ_RDONLY + ifz_rn(r, 0x1000);
		if (ifz_rn(r, 4) == 0)
			st->regs[6] |= ifz_rnd(r) << 32;	/* addr32 drops it */
	}
	if (in->need & (IFZ_NEED_STR | IFZ_NEED_COUNT)) {
		switch (ifz_rn(r, 10)) {
		case 0:
			st->regs[1] = 0;
			break;
		case 1:
			st->regs[1] = 1;
			break;
		case 2:
			st->regs[1] = ifz_rn(r, 300);
			break;
		case 3:
			st->regs[1] = ifz_rnd(r) | 0x100000000ULL;
			break;
		default:
			st->regs[1] = ifz_rn(r, 17);
		}
	}
	if (in->need & IFZ_NEED_XLAT)
		st->regs[3] = IFZ_DATA + ifz_rn(r, IFZ_DATA_BYTES - 256);
	/*
	 * leave pops from where rbp points: there, not at a random address,
	 * which in 32-bit code is often the runner's own memory, different
	 * between the unprobed and the probed run (make fuzz --compat, seed
	 * 0xbf2fe3b8ffaf892e, batch 195: the popped ebp differed, and not
	 * on a replay in a fresh process).  Made from rbp's random value,
	 * drawing nothing, so that every other case stays as it was.
	 */
	if (in->need & IFZ_NEED_FRAME)
		st->regs[5] = frame_target(st->regs[5], st->regs[4]);
	if (in->need & IFZ_NEED_RETADDR)
		plant(st, 0, st->regs[4], branch_target(r, addr, in->len, env->mode32));
	if (in->need & IFZ_NEED_FLAGS_MEM)
		plant(st, 0, st->regs[4], 0x2 | (ifz_rnd(r) & 0x244fd5));
	if (in->need & IFZ_NEED_TARGET_REG)
		st->regs[in->target_reg] = branch_target(r, addr, in->len, env->mode32);
	if (in->need & IFZ_NEED_BIT_REG)	/* within 128 bytes either way */
		st->regs[in->bit_reg] = (int64_t)ifz_rn(r, 2048) - 1024;
	if (env->mode32 && in->mem && in->index != 0xfe)
		t = operand_at(env, in, st);
	if ((in->need & IFZ_NEED_TARGET_MEM) && t)
		plant(st, 1, t, branch_target(r, addr, in->len, env->mode32));
	if ((in->need & IFZ_NEED_MXCSR) && t) {
		/* fxrstor's is at 24; one in the last 8 bytes, from below */
		unsigned long a = t + (in->need & IFZ_NEED_ALIGN64 ? 24 : 0);
		uint64_t v = 0x1f80 ^ (ifz_rnd(r) & 0xe07f & ~0x40);

		if (writable(a))
			plant(st, 1, a, v);
		else
			plant(st, 1, a - 4, v << 32);
	}
	if ((in->need & IFZ_NEED_FARPTR) && t) {
		uint64_t sel = env->mode32 ? far_sels32[ifz_rn(r, 4)] :
			       far_sels[ifz_rn(r, 4)];

		/* m16:32 (the rest of the qword is the selector) */
		plant(st, 1, t, (uint32_t)landing(r, addr, in->len) | sel << 32);
	}
}
