// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for the x86 uprobes instruction analyser.
 *
 * One row per real encoding (checked against objdump when the table was
 * written): the mode it is decoded in, the length, and what uprobes must
 * do with it -- emulate it (and how), run it out of line (and, for
 * rip-relative operands, which register stands in for rip), or refuse it.
 * A rewritten copy is decoded again and compared field by field with the
 * original, so the table pins down the fix-up, not just the class.
 *
 * Then the arithmetic the emulation relies on: conditions, loop, and the
 * flags of add/sub, checked against the CPU running the same instruction.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/uprobes.h>
#include <asm/insn.h>
#include <asm/unaligned.h>
#include <asm/unistd.h>
#include <asm/processor-flags.h>
#include <asm/segment.h>

#include "uprobes_insn.h"

enum uk_class { UK_EMULATE, UK_XOL, UK_REFUSE, UK_INVALID };

#define UK_NONE		(-1)

struct uk_case {
	const char	*name;
	u8		mode;		/* 64 or 32 */
	u8		cls;		/* enum uk_class */
	u8		emul;		/* expected enum uprobe_x86_emul */
	u8		len;		/* expected length */
	s8		scratch;	/* register standing in for rip */
	u8		bytes[MAX_UINSN_BYTES];
};

#define ROW(m, c, k, l, s, n, ...)					\
	{ .name = n, .mode = m, .cls = c, .emul = UPROBE_EMUL_##k,	\
	  .len = l, .scratch = s, .bytes = { __VA_ARGS__ } }
#define EMU(m, k, l, n, ...)		ROW(m, UK_EMULATE, k, l, UK_NONE, n, __VA_ARGS__)
#define EMU_RIP(m, k, l, s, n, ...)	ROW(m, UK_EMULATE, k, l, UPROBE_X86_##s, n, __VA_ARGS__)
#define XOL(m, l, n, ...)		ROW(m, UK_XOL, NONE, l, UK_NONE, n, __VA_ARGS__)
#define RIP(m, l, s, n, ...)		ROW(m, UK_XOL, NONE, l, UPROBE_X86_##s, n, __VA_ARGS__)
#define REFUSE(m, l, n, ...)		ROW(m, UK_REFUSE, NONE, l, UK_NONE, n, __VA_ARGS__)
#define INVALID(m, n, ...)		ROW(m, UK_INVALID, NONE, 0, UK_NONE, n, __VA_ARGS__)

static const struct uk_case uk_cases[] = {
	EMU(64, NOP, 1, "nop", 0x90),
	EMU(64, NOP, 2, "xchg %ax,%ax", 0x66, 0x90),
	EMU(64, NOP, 2, "pause", 0xf3, 0x90),
	EMU(64, NOP, 2, "rex.W nop", 0x48, 0x90),
	EMU(64, NOP, 3, "nopl (%rax)", 0x0f, 0x1f, 0x00),
	EMU(64, NOP, 4, "nopl 0x0(%rax)", 0x0f, 0x1f, 0x40, 0x00),
	EMU(64, NOP, 5, "nopl 0x0(%rax,%rax,1)", 0x0f, 0x1f, 0x44, 0x00, 0x00),
	EMU(64, NOP, 6, "nopw 0x0(%rax,%rax,1)", 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00),
	EMU(64, NOP, 7, "nopl 0x0(%rax)", 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 8, "nopl 0x0(%rax,%rax,1) 8 bytes",
	    0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 9, "nopw 0x0(%rax,%rax,1) 9 bytes",
	    0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 10, "nopw %cs:0x0(%rax,%rax,1)",
	    0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 11, "data16 nopw %cs:",
	    0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 12, "data16 data16 nopw %cs:",
	    0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 15, "15-byte nopw",
	    0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00,
	    0x00),
	EMU(64, NOP, 7, "nopl 0x0(%rip)", 0x0f, 0x1f, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU(64, NOP, 4, "endbr64", 0xf3, 0x0f, 0x1e, 0xfa),
	EMU(64, NOP, 4, "endbr32", 0xf3, 0x0f, 0x1e, 0xfb),
	EMU(64, PUSH, 1, "push %rbp", 0x55),
	EMU(64, PUSH, 1, "push %rbx", 0x53),
	EMU(64, PUSH, 1, "push %rsp", 0x54),
	EMU(64, PUSH, 2, "push %r12", 0x41, 0x54),
	EMU(64, PUSH, 2, "push %r15", 0x41, 0x57),
	EMU(64, POP, 1, "pop %rbp", 0x5d),
	EMU(64, POP, 2, "pop %r12", 0x41, 0x5c),
	EMU(64, POP, 1, "pop %rsp", 0x5c),
	EMU(64, MOV, 3, "mov %rsp,%rbp", 0x48, 0x89, 0xe5),
	EMU(64, MOV, 3, "mov %rsp,%rbp (8b form)", 0x48, 0x8b, 0xec),
	EMU(64, MOV, 3, "mov %rax,%rdi", 0x48, 0x89, 0xc7),
	EMU(64, MOV, 2, "mov %eax,%edi", 0x89, 0xc7),
	EMU(64, MOV, 3, "mov %r12,%rdi", 0x4c, 0x89, 0xe7),
	EMU(64, MOV, 3, "mov %rdi,%r12", 0x49, 0x89, 0xfc),
	EMU(64, MOV, 3, "mov %rbp,%rsp", 0x48, 0x89, 0xec),
	EMU(64, ALU_SP, 4, "sub $0x10,%rsp", 0x48, 0x83, 0xec, 0x10),
	EMU(64, ALU_SP, 7, "sub $0x100,%rsp", 0x48, 0x81, 0xec, 0x00, 0x01, 0x00, 0x00),
	EMU(64, ALU_SP, 4, "add $0x8,%rsp", 0x48, 0x83, 0xc4, 0x08),
	EMU(64, ALU_SP, 7, "add $0x88,%rsp", 0x48, 0x81, 0xc4, 0x88, 0x00, 0x00, 0x00),
	EMU(64, ALU_SP, 4, "add $-0x10,%rsp", 0x48, 0x83, 0xc4, 0xf0),
	EMU_RIP(64, LEA, 7, AX, "lea 0x10(%rip),%rdi",
		0x48, 0x8d, 0x3d, 0x10, 0x00, 0x00, 0x00),
	EMU_RIP(64, LEA, 7, CX, "lea -0x10(%rip),%rax",
		0x48, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff),
	EMU_RIP(64, LEA, 7, AX, "lea 0x0(%rip),%r9", 0x4c, 0x8d, 0x0d, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, LEA, 6, CX, "lea 0x100(%rip),%eax", 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00),
	EMU(64, LEA, 4, "lea (%rdi,%rsi,1),%rax", 0x48, 0x8d, 0x04, 0x37),
	EMU(64, LEA, 5, "lea 0x8(%rdi,%rdi,4),%rax", 0x48, 0x8d, 0x44, 0xbf, 0x08),
	EMU(64, LEA, 4, "lea -0x18(%rbp),%rdi", 0x48, 0x8d, 0x7d, 0xe8),
	EMU(64, LEA, 5, "lea -0x8(%r13,%r12,2),%r11", 0x4f, 0x8d, 0x5c, 0x65, 0xf8),
	EMU(64, LEA, 3, "lea 0x1(%rdi),%eax", 0x8d, 0x47, 0x01),
	EMU(64, LEA, 8, "lea 0x0(,%rax,8),%rdx", 0x48, 0x8d, 0x14, 0xc5, 0x00, 0x00, 0x00, 0x00),
	EMU(64, LEA, 6, "fs lea 0x8(%rsp),%rsp", 0x64, 0x48, 0x8d, 0x64, 0x24, 0x08),
	XOL(64, 4, "lea (%rdi,%rsi,1),%ax", 0x66, 0x8d, 0x04, 0x37),
	XOL(64, 5, "addr32 lea (%edi,%esi,1),%rax", 0x67, 0x48, 0x8d, 0x04, 0x37),
	EMU(64, JMP, 2, "jmp .+0x12", 0xeb, 0x10),
	EMU(64, JMP, 2, "jmp .", 0xeb, 0xfe),
	EMU(64, JMP, 5, "jmp rel32", 0xe9, 0x00, 0x01, 0x00, 0x00),
	EMU(64, JMP, 6, "bnd jmp rel32", 0xf2, 0xe9, 0x00, 0x00, 0x00, 0x00),
	EMU(64, JMP, 6, "ds jmp rel32", 0x3e, 0xe9, 0x00, 0x00, 0x00, 0x00),
	EMU(64, CALL, 5, "call .+5", 0xe8, 0x00, 0x00, 0x00, 0x00),
	EMU(64, CALL, 5, "call .", 0xe8, 0xfb, 0xff, 0xff, 0xff),
	EMU(64, CALL, 6, "bnd call", 0xf2, 0xe8, 0x00, 0x00, 0x00, 0x00),
	EMU(64, JCC, 2, "je rel8", 0x74, 0x05),
	EMU(64, JCC, 2, "jne .", 0x75, 0xfe),
	EMU(64, JCC, 2, "jg rel8", 0x7f, 0x10),
	EMU(64, JCC, 2, "jo rel8", 0x70, 0x00),
	EMU(64, JCC, 6, "je rel32", 0x0f, 0x84, 0x00, 0x01, 0x00, 0x00),
	EMU(64, JCC, 6, "jg rel32", 0x0f, 0x8f, 0x10, 0x00, 0x00, 0x00),
	EMU(64, JCC, 6, "jo rel32", 0x0f, 0x80, 0x00, 0x00, 0x00, 0x00),
	EMU(64, JCC, 3, "je with not-taken hint", 0x2e, 0x74, 0x05),
	EMU(64, JCC, 3, "jne with taken hint", 0x3e, 0x75, 0x05),
	EMU(64, LOOP, 2, "loop .", 0xe2, 0xfe),
	EMU(64, LOOP, 2, "loope .", 0xe1, 0xfe),
	EMU(64, LOOP, 2, "loopne .", 0xe0, 0xfe),
	EMU(64, LOOP, 2, "jrcxz", 0xe3, 0x05),
	EMU(64, RET, 1, "ret", 0xc3),
	EMU(64, RET, 2, "repz ret", 0xf3, 0xc3),
	EMU(64, RET, 2, "bnd ret", 0xf2, 0xc3),
	EMU(64, RET, 3, "ret $0x8", 0xc2, 0x08, 0x00),
	EMU(64, MOV_MEM, 3, "mov %rax,(%rdi)", 0x48, 0x89, 0x07),
	EMU(64, MOV_MEM, 3, "mov (%rdi),%rax", 0x48, 0x8b, 0x07),
	EMU(64, MOV_MEM, 4, "mov %rdi,-0x18(%rbp)", 0x48, 0x89, 0x7d, 0xe8),
	EMU(64, MOV_MEM, 5, "mov 0x8(%rsp),%rax", 0x48, 0x8b, 0x44, 0x24, 0x08),
	EMU(64, MOV_MEM, 4, "mov (%rax,%rbx,8),%rcx", 0x48, 0x8b, 0x0c, 0xd8),
	EMU(64, MOV_MEM, 8, "mov 0x10(,%r12,4),%eax",
	    0x42, 0x8b, 0x04, 0xa5, 0x10, 0x00, 0x00, 0x00),
	EMU(64, MOV_MEM, 4, "mov 0x0(%r13),%eax", 0x41, 0x8b, 0x45, 0x00),
	EMU(64, MOV_MEM, 9, "mov %gs:0x0,%rax",
	    0x65, 0x48, 0x8b, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00),
	EMU(64, MOV_MEM, 3, "mov %r9d,(%r10)", 0x45, 0x89, 0x0a),
	XOL(64, 3, "addr32 mov (%eax),%eax", 0x67, 0x8b, 0x00),
	XOL(64, 3, "mov (%rdi),%ax", 0x66, 0x8b, 0x07),
	XOL(64, 2, "mov (%rdi),%al", 0x8a, 0x07),
	XOL(64, 4, "mov %fs:%gs:(%rdi),%eax", 0x64, 0x65, 0x8b, 0x07),
	REFUSE(64, 4, "lock mov %rax,(%rdi)", 0xf0, 0x48, 0x89, 0x07),
	XOL(64, 2, "mov %al,%ah", 0x88, 0xc4),
	XOL(64, 3, "mov %cx,%ax", 0x66, 0x89, 0xc8),
	EMU_RIP(64, MOV_MEM, 7, CX, "mov 0x0(%rip),%rax",
		0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 7, CX, "mov %rax,0x0(%rip)",
		0x48, 0x89, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 6, AX, "mov 0x0(%rip),%ecx", 0x8b, 0x0d, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 7, AX, "mov 0x0(%rip),%rdx",
		0x48, 0x8b, 0x15, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 7, AX, "mov 0x0(%rip),%r8",
		0x4c, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 7, CX, "mov 0x0(%rip),%rax (REX.B set)",
		0x49, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 11, CX, "movq $0x1,0x0(%rip)",
	    0x48, 0xc7, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "movb $0x1,0x0(%rip)", 0xc6, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01),
	RIP(64, 7, AX, "cmpl $0x0,0x0(%rip)", 0x83, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "cmp 0x0(%rip),%rax", 0x48, 0x3b, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "movslq 0x0(%rip),%rax", 0x48, 0x63, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "movzbl 0x0(%rip),%eax", 0x0f, 0xb6, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "cmove 0x0(%rip),%eax", 0x0f, 0x44, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "sete 0x0(%rip)", 0x0f, 0x94, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, MOV_MEM, 8, CX, "mov %fs:0x0(%rip),%rax",
		0x64, 0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, CALL_IND, 6, AX, "call *0x0(%rip)", 0xff, 0x15, 0x00, 0x00, 0x00, 0x00),
	EMU_RIP(64, JMP_IND, 6, AX, "jmp *0x0(%rip)", 0xff, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, AX, "push 0x0(%rip)", 0xff, 0x35, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, CX, "pop 0x0(%rip)", 0x8f, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, CX, "divl 0x0(%rip)", 0xf7, 0x35, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, CX, "mull 0x0(%rip)", 0xf7, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, AX, "shll %cl,0x0(%rip)", 0xd3, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, DX, "cmpxchg %ecx,0x0(%rip)", 0x0f, 0xb1, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 8, DX, "lock cmpxchg %ecx,0x0(%rip)",
	    0xf0, 0x0f, 0xb1, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 9, SI, "lock cmpxchg16b 0x0(%rip)",
	    0xf0, 0x48, 0x0f, 0xc7, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "lock incl 0x0(%rip)", 0xf0, 0xff, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 9, CX, "lock xadd %rax,0x0(%rip)",
	    0xf0, 0x48, 0x0f, 0xc1, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, CX, "xchg %eax,0x0(%rip)", 0x87, 0x05, 0x00, 0x00, 0x00, 0x00),
	/* Two segment prefixes: Intel and AMD differ, the CPU decides. */
	XOL(64, 5, "gs ds mov (%rbx),%rax", 0x65, 0x3e, 0x48, 0x8b, 0x03),
	XOL(64, 4, "gs ds jmp *(%rbx)", 0x65, 0x3e, 0xff, 0x23),
	XOL(64, 4, "fs es call *(%rbx)", 0x64, 0x26, 0xff, 0x13),
	/* %ah is in %rax: the fuzzer saw the scratch's byte exchanged */
	RIP(64, 6, CX, "xchg %ah,0x0(%rip)", 0x86, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, AX, "xchg %spl,0x0(%rip)", 0x40, 0x86, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, CX, "add %ah,0x0(%rip)", 0x00, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "cmpxchg %ah,0x0(%rip)", 0x0f, 0xb0, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, AX, "and 0x0(%rip),%esp", 0x23, 0x25, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "movups 0x0(%rip),%xmm0", 0x0f, 0x10, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 8, AX, "movdqa 0x0(%rip),%xmm1", 0x66, 0x0f, 0x6f, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 8, CX, "movsd 0x0(%rip),%xmm0", 0xf2, 0x0f, 0x10, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 8, CX, "vmovdqa 0x0(%rip),%xmm0", 0xc5, 0xf9, 0x6f, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 8, DX, "vmovdqa 0x0(%rip),%ymm1", 0xc5, 0xfd, 0x6f, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 9, CX, "vbroadcastss 0x0(%rip),%xmm0",
	    0xc4, 0xe2, 0x79, 0x18, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 9, CX, "vbroadcastss 0x0(%rip),%xmm0 (VEX.B set)",
	    0xc4, 0xc2, 0x79, 0x18, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 10, CX, "vmovups 0x0(%rip),%zmm0",
	    0x62, 0xf1, 0x7c, 0x48, 0x10, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 9, CX, "mulx 0x0(%rip),%rbx,%rax",
	    0xc4, 0xe2, 0xe3, 0xf6, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 10, BX, "pcmpestri $0x0,0x0(%rip),%xmm0",
	    0x66, 0x0f, 0x3a, 0x61, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "prefetchnta 0x0(%rip)", 0x0f, 0x18, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, AX, "prefetchw 0x0(%rip)", 0x0f, 0x0d, 0x0d, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "fxsave 0x0(%rip)", 0x0f, 0xae, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 7, CX, "ldmxcsr 0x0(%rip)", 0x0f, 0xae, 0x15, 0x00, 0x00, 0x00, 0x00),
	XOL(64, 3, "mfence", 0x0f, 0xae, 0xf0),
	XOL(64, 3, "lfence", 0x0f, 0xae, 0xe8),
	XOL(64, 3, "sfence", 0x0f, 0xae, 0xf8),
	RIP(64, 6, CX, "flds 0x0(%rip)", 0xd9, 0x05, 0x00, 0x00, 0x00, 0x00),
	RIP(64, 6, AX, "fstpl 0x0(%rip)", 0xdd, 0x1d, 0x00, 0x00, 0x00, 0x00),
	XOL(64, 2, "fldz", 0xd9, 0xee),
	EMU(64, MOV_MEM, 9, "mov %fs:0x28,%rax",
	    0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00),
	XOL(64, 3, "add %rbx,%rax", 0x48, 0x01, 0xd8),
	XOL(64, 4, "add $0x1,%rax", 0x48, 0x83, 0xc0, 0x01),
	XOL(64, 3, "sub $0x10,%esp", 0x83, 0xec, 0x10),
	XOL(64, 4, "add $0x8,%rbp", 0x48, 0x83, 0xc5, 0x08),
	XOL(64, 4, "sub $0x10,%r12d", 0x41, 0x83, 0xec, 0x10),
	XOL(64, 4, "sub $0x10,%r12", 0x49, 0x83, 0xec, 0x10),
	XOL(64, 4, "sub $0x10,%rbp", 0x48, 0x83, 0xed, 0x10),
	XOL(64, 4, "and $-0x10,%rsp", 0x48, 0x83, 0xe4, 0xf0),
	XOL(64, 3, "test %rax,%rax", 0x48, 0x85, 0xc0),
	XOL(64, 2, "xor %eax,%eax", 0x31, 0xc0),
	EMU(64, MOV_IMM, 5, "mov $0x1,%eax", 0xb8, 0x01, 0x00, 0x00, 0x00),
	EMU(64, MOV_IMM, 6, "mov $0x1,%r9d", 0x41, 0xb9, 0x01, 0x00, 0x00, 0x00),
	EMU(64, MOV_IMM, 7, "mov $-1,%rax (c7)", 0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff),
	EMU(64, MOV_IMM, 6, "mov $0x0,%ecx (c7)", 0xc7, 0xc1, 0x00, 0x00, 0x00, 0x00),
	EMU(64, MOV_IMM, 10, "movabs $-2,%rcx",
	    0x48, 0xb9, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
	XOL(64, 4, "mov $0x1,%ax", 0x66, 0xb8, 0x01, 0x00),
	XOL(64, 2, "mov $0x1,%al", 0xb0, 0x01),
	XOL(64, 10, "movabs $0x1122334455667788,%rax",
	    0x48, 0xb8, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11),
	XOL(64, 10, "movabs 0x1122334455667788,%rax",
	    0x48, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11),
	XOL(64, 2, "xchg %eax,%r8d", 0x41, 0x90),
	XOL(64, 1, "leave", 0xc9),
	XOL(64, 4, "enter $0x10,$0x0", 0xc8, 0x10, 0x00, 0x00),
	XOL(64, 1, "pushf", 0x9c),
	XOL(64, 1, "popf", 0x9d),
	XOL(64, 2, "rep movsb", 0xf3, 0xa4),
	XOL(64, 3, "rep stos %rax,%es:(%rdi)", 0xf3, 0x48, 0xab),
	XOL(64, 1, "movsb", 0xa4),
	XOL(64, 2, "repz cmpsb", 0xf3, 0xa6),
	XOL(64, 2, "repnz scasb", 0xf2, 0xae),
	EMU(64, CALL_IND, 2, "call *%rax", 0xff, 0xd0),
	EMU(64, JMP_IND, 2, "jmp *%rax", 0xff, 0xe0),
	EMU(64, CALL_IND, 3, "call *%r11", 0x41, 0xff, 0xd3),
	EMU(64, JMP_IND, 3, "notrack jmp *%rax", 0x3e, 0xff, 0xe0),
	EMU(64, CALL_IND, 3, "call *(%rsp)", 0xff, 0x14, 0x24),
	XOL(64, 2, "cpuid", 0x0f, 0xa2),
	XOL(64, 2, "rdtsc", 0x0f, 0x31),
	XOL(64, 3, "rdtscp", 0x0f, 0x01, 0xf9),
	XOL(64, 3, "xgetbv", 0x0f, 0x01, 0xd0),
	XOL(64, 3, "rdpkru", 0x0f, 0x01, 0xee),
	XOL(64, 3, "wrpkru", 0x0f, 0x01, 0xef),
	XOL(64, 3, "rdrand %eax", 0x0f, 0xc7, 0xf0),
	XOL(64, 2, "push %fs", 0x0f, 0xa0),
	XOL(64, 4, "imul %rcx,%rax", 0x48, 0x0f, 0xaf, 0xc1),
	XOL(64, 2, "cqto", 0x48, 0x99),
	XOL(64, 2, "cltq", 0x48, 0x98),
	XOL(64, 5, "popcnt %rax,%rax", 0xf3, 0x48, 0x0f, 0xb8, 0xc0),
	XOL(64, 5, "tzcnt %rax,%rax", 0xf3, 0x48, 0x0f, 0xbc, 0xc0),
	XOL(64, 4, "pxor %xmm0,%xmm0", 0x66, 0x0f, 0xef, 0xc0),
	XOL(64, 3, "vzeroupper", 0xc5, 0xf8, 0x77),
	XOL(64, 5, "crc32 %ecx,%eax", 0xf2, 0x0f, 0x38, 0xf1, 0xc1),
	XOL(64, 2, "pushw %ax", 0x66, 0x50),
	REFUSE(64, 2, "ud2", 0x0f, 0x0b),
	XOL(64, 2, "rdpmc", 0x0f, 0x33),
	XOL(64, 2, "emms", 0x0f, 0x77),
	XOL(64, 2, "bswap %eax", 0x0f, 0xc8),
	/*
	 * Forms the decoder has no entry for, whose ModRM it misses: the
	 * copy would be short (found by the fuzzer).
	 */
	REFUSE(64, 2, "nop %eax (reserved 0f 19)", 0x0f, 0x19, 0xc0),
	REFUSE(64, 2, "nop (%rax) (reserved 0f 1d)", 0x0f, 0x1d, 0x00),
	REFUSE(64, 3, "repnz cmovno %eax,%eax", 0xf2, 0x0f, 0x41, 0xc0),
	REFUSE(32, 2, "nop %eax (reserved 0f 19)", 0x0f, 0x19, 0xc0),
	/*
	 * A REX the CPU ignores, and that the decoder takes the next
	 * prefix for the opcode after (found by the fuzzer).
	 */
	REFUSE(64, 2, "rex gs movslq 0x0(%rip),%edx",
	       0x40, 0x65, 0x63, 0x15, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 2, "rex rex.WR fldl 0x1d(%rcx)", 0x40, 0x4c, 0xdd, 0x41, 0x1d),
	REFUSE(64, 2, "rex.X repnz movsd %xmm3,(%rsi)", 0x4a, 0xf2, 0x0f, 0x11, 0x1e),
	REFUSE(64, 5, "es cs ss ds fs mov (%rax),%eax",
	       0x26, 0x2e, 0x36, 0x3e, 0x64, 0x8b, 0x00),
	REFUSE(32, 5, "es cs ss ds fs mov (%eax),%eax",
	       0x26, 0x2e, 0x36, 0x3e, 0x64, 0x8b, 0x00),
	REFUSE(64, 1, "int3", 0xcc),
	REFUSE(64, 2, "int $0x80", 0xcd, 0x80),
	REFUSE(64, 1, "int1", 0xf1),
	REFUSE(64, 1, "into?", 0xce),
	REFUSE(64, 2, "syscall", 0x0f, 0x05),
	REFUSE(64, 2, "sysenter", 0x0f, 0x34),
	REFUSE(64, 2, "sysret", 0x0f, 0x07),
	REFUSE(64, 2, "iretq", 0x48, 0xcf),
	REFUSE(64, 1, "iret", 0xcf),
	REFUSE(64, 1, "lret", 0xcb),
	REFUSE(64, 3, "lret $0x8", 0xca, 0x08, 0x00),
	REFUSE(64, 6, "lcall *0x0(%rip)", 0xff, 0x1d, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 6, "ljmp *0x0(%rip)", 0xff, 0x2d, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 1, "in (%dx),%al", 0xec),
	REFUSE(64, 1, "out %al,(%dx)", 0xee),
	REFUSE(64, 2, "in $0x60,%al", 0xe4, 0x60),
	REFUSE(64, 2, "out %al,$0x80", 0xe6, 0x80),
	REFUSE(64, 1, "insb", 0x6c),
	REFUSE(64, 2, "rep outsb", 0xf3, 0x6e),
	REFUSE(64, 1, "cli", 0xfa),
	REFUSE(64, 1, "sti", 0xfb),
	REFUSE(64, 1, "hlt", 0xf4),
	REFUSE(64, 2, "mov %eax,%ds", 0x8e, 0xd8),
	REFUSE(64, 2, "mov %eax,%ss", 0x8e, 0xd0),
	REFUSE(64, 2, "pop %fs", 0x0f, 0xa1),
	REFUSE(64, 2, "pop %gs", 0x0f, 0xa9),
	REFUSE(64, 7, "lss 0x0(%rip),%eax", 0x0f, 0xb2, 0x05, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 7, "lgdt 0x0(%rip)", 0x0f, 0x01, 0x15, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 7, "sgdt 0x0(%rip)", 0x0f, 0x01, 0x05, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 3, "sldt %eax", 0x0f, 0x00, 0xc0),
	REFUSE(64, 3, "mov %rax,%cr3", 0x0f, 0x22, 0xd8),
	REFUSE(64, 3, "mov %cr0,%rax", 0x0f, 0x20, 0xc0),
	REFUSE(64, 3, "mov %rax,%db7", 0x0f, 0x23, 0xf8),
	REFUSE(64, 2, "wrmsr", 0x0f, 0x30),
	REFUSE(64, 2, "rdmsr", 0x0f, 0x32),
	REFUSE(64, 2, "wbinvd", 0x0f, 0x09),
	REFUSE(64, 2, "clts", 0x0f, 0x06),
	REFUSE(64, 3, "swapgs", 0x0f, 0x01, 0xf8),
	REFUSE(64, 3, "vmcall", 0x0f, 0x01, 0xc1),
	REFUSE(64, 6, "xbegin", 0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 3, "xabort $0x0", 0xc6, 0xf8, 0x00),
	REFUSE(64, 3, "xend", 0x0f, 0x01, 0xd5),
	REFUSE(64, 3, "data16 jmp rel8", 0x66, 0xeb, 0x00),
	REFUSE(64, 2, "retw", 0x66, 0xc3),
	REFUSE(64, 3, "data16 je rel8", 0x66, 0x74, 0x00),
	REFUSE(64, 2, "lock nop", 0xf0, 0x90),
	REFUSE(64, 4, "lock mov %rax,%rdi", 0xf0, 0x48, 0x89, 0xc7),
	REFUSE(64, 3, "jecxz (addr32)", 0x67, 0xe3, 0x00),
	REFUSE(64, 1, "push %es (invalid in 64-bit)", 0x06),
	REFUSE(64, 1, "daa (invalid in 64-bit)", 0x27),
	REFUSE(64, 1, "pusha (invalid in 64-bit)", 0x60),
	REFUSE(64, 2, "ud0 (the decoder knows no ModRM for it)", 0x0f, 0xff, 0xc0),
	REFUSE(64, 3, "ud1", 0x0f, 0xb9, 0xc0),
	REFUSE(64, 2, "femms", 0x0f, 0x0e),
	REFUSE(64, 2, "getsec", 0x0f, 0x37),
	REFUSE(64, 2, "rsm", 0x0f, 0xaa),
	REFUSE(64, 3, "vmread %rax,%rax", 0x0f, 0x78, 0xc0),
	REFUSE(64, 9, "invpcid 0x0(%rip),%rax",
	       0x66, 0x0f, 0x38, 0x82, 0x05, 0x00, 0x00, 0x00, 0x00),
	REFUSE(64, 2, "(fe /7, undefined)", 0xfe, 0xf8),
	REFUSE(64, 2, "(ff /7, undefined)", 0xff, 0xf8),
	REFUSE(64, 3, "ltr %ax", 0x0f, 0x00, 0xd8),
	EMU(32, MOV_IMM, 5, "mov $0x1,%eax", 0xb8, 0x01, 0x00, 0x00, 0x00),
	EMU(32, PUSH, 1, "push %ebp", 0x55),
	EMU(32, PUSH, 1, "push %ebx", 0x53),
	EMU(32, POP, 1, "pop %ebp", 0x5d),
	EMU(32, MOV, 2, "mov %esp,%ebp", 0x89, 0xe5),
	EMU(32, MOV, 2, "mov %esp,%ebp (8b form)", 0x8b, 0xec),
	EMU(32, ALU_SP, 3, "sub $0x10,%esp", 0x83, 0xec, 0x10),
	EMU(32, ALU_SP, 6, "sub $0x100,%esp", 0x81, 0xec, 0x00, 0x01, 0x00, 0x00),
	EMU(32, ALU_SP, 3, "add $0x10,%esp", 0x83, 0xc4, 0x10),
	EMU(32, NOP, 1, "nop", 0x90),
	EMU(32, NOP, 2, "xchg %ax,%ax", 0x66, 0x90),
	EMU(32, NOP, 5, "nopl 0x0(%eax,%eax,1)", 0x0f, 0x1f, 0x44, 0x00, 0x00),
	EMU(32, NOP, 4, "endbr32", 0xf3, 0x0f, 0x1e, 0xfb),
	EMU(32, CALL, 5, "call .+5", 0xe8, 0x00, 0x00, 0x00, 0x00),
	EMU(32, JMP, 5, "jmp rel32", 0xe9, 0x00, 0x01, 0x00, 0x00),
	EMU(32, JMP, 2, "jmp rel8", 0xeb, 0x10),
	EMU(32, JCC, 2, "je rel8", 0x74, 0x05),
	EMU(32, JCC, 6, "jne rel32", 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00),
	EMU(32, RET, 1, "ret", 0xc3),
	EMU(32, RET, 3, "ret $0x4", 0xc2, 0x04, 0x00),
	EMU(32, LOOP, 2, "loop .", 0xe2, 0xfe),
	EMU(32, LOOP, 2, "jecxz", 0xe3, 0x05),
	XOL(32, 3, "lea 0x0(%esi),%esi", 0x8d, 0x76, 0x00),
	XOL(32, 7, "lea 0x0(%esi,%eiz,1),%esi", 0x8d, 0xb4, 0x26, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 4, "lea 0x0(%esi,%eiz,1),%esi", 0x8d, 0x74, 0x26, 0x00),
	XOL(32, 1, "inc %eax", 0x40),
	XOL(32, 1, "dec %eax", 0x48),
	XOL(32, 1, "inc %ecx", 0x41),
	XOL(32, 6, "mov 0x0,%eax", 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 5, "mov 0x0,%eax (moffs)", 0xa1, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 6, "mov 0x10(%ebx),%eax", 0x8b, 0x83, 0x10, 0x00, 0x00, 0x00),
	XOL(32, 1, "pusha", 0x60),
	XOL(32, 1, "popa", 0x61),
	XOL(32, 1, "push %es", 0x06),
	XOL(32, 1, "daa", 0x27),
	XOL(32, 1, "aaa", 0x37),
	XOL(32, 2, "aam", 0xd4, 0x0a),
	XOL(32, 6, "bound %eax,0x0", 0x62, 0x05, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 2, "call *%eax", 0xff, 0xd0),
	XOL(32, 6, "call *0x0", 0xff, 0x15, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 6, "jmp *0x0", 0xff, 0x25, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 6, "mov %gs:0x14,%eax", 0x65, 0xa1, 0x14, 0x00, 0x00, 0x00),
	XOL(32, 7, "call *%gs:0x10", 0x65, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00),
	XOL(32, 2, "rep movsl", 0xf3, 0xa5),
	XOL(32, 1, "pushf", 0x9c),
	XOL(32, 1, "popf", 0x9d),
	XOL(32, 4, "vmovdqa %xmm1,%xmm0", 0xc5, 0xf9, 0x6f, 0xc1),
	XOL(32, 8, "movdqa 0x0,%xmm0", 0x66, 0x0f, 0x6f, 0x05, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 6, "flds 0x0", 0xd9, 0x05, 0x00, 0x00, 0x00, 0x00),
	XOL(32, 3, "add $0x1,%al (82 alias)", 0x82, 0xc0, 0x01),
	XOL(32, 2, "pushw %bp", 0x66, 0x55),
	REFUSE(32, 1, "pop %es", 0x07),
	REFUSE(32, 1, "pop %ds", 0x1f),
	REFUSE(32, 1, "pop %ss", 0x17),
	REFUSE(32, 2, "arpl %ax,%ax", 0x63, 0xc0),
	REFUSE(32, 6, "les 0x0,%eax", 0xc4, 0x05, 0x00, 0x00, 0x00, 0x00),
	REFUSE(32, 6, "lds 0x0,%eax", 0xc5, 0x05, 0x00, 0x00, 0x00, 0x00),
	REFUSE(32, 7, "lcall $0x23,$0x0", 0x9a, 0x00, 0x00, 0x00, 0x00, 0x23, 0x00),
	REFUSE(32, 7, "ljmp $0x33,$0x0", 0xea, 0x00, 0x00, 0x00, 0x00, 0x33, 0x00),
	REFUSE(32, 2, "int $0x80", 0xcd, 0x80),
	REFUSE(32, 2, "sysenter", 0x0f, 0x34),
	REFUSE(32, 2, "in $0x60,%al", 0xe4, 0x60),
	REFUSE(32, 1, "cli", 0xfa),
	REFUSE(32, 2, "ud2", 0x0f, 0x0b),
	REFUSE(32, 4, "call rel16", 0x66, 0xe8, 0x00, 0x00),
	REFUSE(32, 1, "salc", 0xd6),
	REFUSE(32, 2, "mov %eax,%ss", 0x8e, 0xd0),

};

static void uk_case_desc(const struct uk_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%d-bit %s", c->mode, c->name);
}

KUNIT_ARRAY_PARAM(uk_insn, uk_cases, uk_case_desc);

/* The copy must be the original with rip replaced by [scratch + disp32]. */
static void uk_check_rip_rewrite(struct kunit *test, const struct uk_case *c,
				 const struct uprobe_x86_op *op, const u8 *ixol)
{
	struct insn orig, copy;
	int i, modrm_off, rex_off = -1, vex_off = -1;
	u8 rex, b;

	KUNIT_ASSERT_EQ(test, insn_decode(&orig, c->bytes, MAX_UINSN_BYTES,
					  INSN_MODE_64), 0);
	KUNIT_ASSERT_TRUE(test, insn_rip_relative(&orig));
	KUNIT_ASSERT_EQ_MSG(test, insn_decode(&copy, ixol, MAX_UINSN_BYTES,
					      INSN_MODE_64), 0,
			    "rewritten copy %*ph does not decode", op->len, ixol);

	KUNIT_EXPECT_TRUE(test, op->fix & UPROBE_FIX_SCRATCH);
	KUNIT_EXPECT_EQ(test, (int)op->scratch, (int)c->scratch);
	KUNIT_EXPECT_EQ(test, copy.length, orig.length);
	KUNIT_EXPECT_FALSE(test, insn_rip_relative(&copy));
	KUNIT_EXPECT_EQ(test, X86_MODRM_MOD(copy.modrm.value), 2);
	KUNIT_EXPECT_EQ(test, X86_MODRM_REG(copy.modrm.value),
			X86_MODRM_REG(orig.modrm.value));

	/* The base register, with the B bit of REX or VEX/EVEX. */
	b = X86_MODRM_RM(copy.modrm.value);
	if (copy.rex_prefix.nbytes && X86_REX_B(copy.rex_prefix.bytes[0]))
		b |= 8;
	if (copy.vex_prefix.nbytes >= 3 && !X86_VEX_B(copy.vex_prefix.bytes[1]))
		b |= 8;
	KUNIT_EXPECT_EQ(test, (int)b, (int)c->scratch);

	/* The scratch holds the original next-ip: displacement unchanged. */
	KUNIT_EXPECT_EQ(test, copy.displacement.value, orig.displacement.value);
	KUNIT_EXPECT_EQ(test, copy.immediate.value, orig.immediate.value);

	/* Nothing else changed: W, R and X bits, opcode, vvvv, prefixes. */
	modrm_off = insn_offset_modrm(&orig);
	if (orig.rex_prefix.nbytes)
		rex_off = insn_offset_rex_prefix(&orig);
	if (orig.vex_prefix.nbytes >= 3)
		vex_off = insn_offset_vex_prefix(&orig) + 1;
	for (i = 0; i < orig.length; i++) {
		if (i == modrm_off)
			continue;
		rex = c->bytes[i];
		if (i == rex_off)
			rex &= ~1;
		if (i == vex_off)
			rex |= 0x20;
		KUNIT_EXPECT_EQ_MSG(test, ixol[i], rex, "byte %d of the copy", i);
	}
}

static void uk_insn_test(struct kunit *test)
{
	const struct uk_case *c = test->param_value;
	static const int want_err[] = {
		[UK_EMULATE] = 0, [UK_XOL] = 0,
		[UK_REFUSE] = -ENOTSUPP, [UK_INVALID] = -EINVAL,
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	const char *why;
	int err;

	err = uprobe_x86_analyze(c->bytes, c->mode == 64, &op, ixol, &why);
	KUNIT_ASSERT_EQ_MSG(test, err, want_err[c->cls], "%s (%*ph): %s",
			    c->name, 8, c->bytes, why ?: "accepted");
	if (c->cls == UK_INVALID)
		return;
	KUNIT_EXPECT_EQ(test, (int)op.len, (int)c->len);
	if (c->cls == UK_REFUSE) {
		KUNIT_EXPECT_NOT_ERR_OR_NULL(test, why);
		return;
	}
	KUNIT_EXPECT_EQ(test, (int)op.is64, c->mode == 64);
	KUNIT_EXPECT_EQ(test, (int)op.emul, (int)c->emul);

	if (c->scratch != UK_NONE) {
		uk_check_rip_rewrite(test, c, &op, ixol);
		return;
	}
	KUNIT_EXPECT_FALSE(test, op.fix & UPROBE_FIX_SCRATCH);
	/* Otherwise the copy is the original (call rel32 has its own form). */
	if (op.emul != UPROBE_EMUL_CALL && uprobe_x86_has_xol_form(&op))
		KUNIT_EXPECT_EQ_MSG(test, memcmp(ixol, c->bytes, op.len), 0,
				    "copy %*ph", op.len, ixol);
	/* Only relative branches lack an out-of-line form. */
	KUNIT_EXPECT_EQ(test, !uprobe_x86_has_xol_form(&op),
			op.emul == UPROBE_EMUL_JMP || op.emul == UPROBE_EMUL_JCC ||
			op.emul == UPROBE_EMUL_LOOP);
}

static void uk_analyze(struct kunit *test, bool is64, const u8 *bytes,
		       struct uprobe_x86_op *op, u8 *ixol)
{
	const char *why;

	KUNIT_ASSERT_EQ(test, uprobe_x86_analyze(bytes, is64, op, ixol, &why), 0);
}

/* The operands the emulation reads from the plan. */
static void uk_emul_operands_test(struct kunit *test)
{
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		bool is64;
		u8 emul, reg, src, size, cc, sub;
		s32 imm;
	} cases[] = {
		{ { 0x41, 0x54 }, true, UPROBE_EMUL_PUSH, 12, 0, 8 },
		{ { 0x55 }, false, UPROBE_EMUL_PUSH, 5, 0, 4 },
		{ { 0x5c }, true, UPROBE_EMUL_POP, 4, 0, 8 },
		{ { 0x41, 0x5f }, true, UPROBE_EMUL_POP, 15, 0, 8 },
		{ { 0x4c, 0x89, 0xe7 }, true, UPROBE_EMUL_MOV, 7, 12, 8 },
		{ { 0x49, 0x89, 0xfc }, true, UPROBE_EMUL_MOV, 12, 7, 8 },
		{ { 0x48, 0x8b, 0xec }, true, UPROBE_EMUL_MOV, 5, 4, 8 },
		{ { 0x89, 0xc7 }, true, UPROBE_EMUL_MOV, 7, 0, 4 },
		{ { 0x41, 0xb9, 1, 0, 0, 0 }, true, UPROBE_EMUL_MOV_IMM, 9, 0, 4,
		  .imm = 1 },
		{ { 0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff }, true,
		  UPROBE_EMUL_MOV_IMM, 0, 0, 8, .imm = -1 },
		{ { 0x48, 0xb9, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  true, UPROBE_EMUL_MOV_IMM, 1, 0, 8, .imm = -2 },
		{ { 0xbd, 0, 0, 0, 0x80 }, false, UPROBE_EMUL_MOV_IMM, 5, 0, 4,
		  .imm = (s32)0x80000000 },
		{ { 0x48, 0x81, 0xec, 0, 1, 0, 0 }, true, UPROBE_EMUL_ALU_SP,
		  0, 0, 8, 0, 1, 0x100 },
		{ { 0x48, 0x83, 0xc4, 0xf0 }, true, UPROBE_EMUL_ALU_SP,
		  0, 0, 8, 0, 0, -16 },
		{ { 0x83, 0xec, 0x1c }, false, UPROBE_EMUL_ALU_SP,
		  0, 0, 4, 0, 1, 0x1c },
		{ { 0xeb, 0xfe }, true, UPROBE_EMUL_JMP, .imm = -2 },
		{ { 0xe9, 0, 1, 0, 0 }, true, UPROBE_EMUL_JMP, .imm = 0x100 },
		{ { 0xe8, 0xfb, 0xff, 0xff, 0xff }, true, UPROBE_EMUL_CALL, .imm = -5 },
		{ { 0x0f, 0x84, 0, 1, 0, 0 }, true, UPROBE_EMUL_JCC, .cc = 4, .imm = 0x100 },
		{ { 0x7e, 0x80 }, true, UPROBE_EMUL_JCC, .cc = 0xe, .imm = -128 },
		{ { 0xe2, 0xfe }, true, UPROBE_EMUL_LOOP, .cc = 2, .imm = -2 },
		{ { 0xe3, 0x05 }, false, UPROBE_EMUL_LOOP, .cc = 3, .imm = 5 },
		{ { 0xc2, 0x08, 0x00 }, true, UPROBE_EMUL_RET, .imm = 8 },
		{ { 0xc2, 0xff, 0xff }, false, UPROBE_EMUL_RET, .imm = 0xffff },
		{ { 0x48, 0x8d, 0x3d, 0x10, 0, 0, 0 }, true, UPROBE_EMUL_LEA,
		  7, 0, 8, .imm = 0x10 },
		{ { 0x44, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff }, true,
		  UPROBE_EMUL_LEA, 8, 0, 4, .imm = -16 },
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uk_analyze(test, cases[i].is64, cases[i].bytes, &op, ixol);
		KUNIT_EXPECT_EQ_MSG(test, op.emul, cases[i].emul, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.imm, cases[i].imm, "case %d", i);
		if (cases[i].emul == UPROBE_EMUL_JCC ||
		    cases[i].emul == UPROBE_EMUL_LOOP)
			KUNIT_EXPECT_EQ_MSG(test, op.cc, cases[i].cc, "case %d", i);
		if (cases[i].emul == UPROBE_EMUL_ALU_SP)
			KUNIT_EXPECT_EQ_MSG(test, op.sub, cases[i].sub, "case %d", i);
		if (cases[i].size) {
			KUNIT_EXPECT_EQ_MSG(test, op.reg, cases[i].reg, "case %d", i);
			KUNIT_EXPECT_EQ_MSG(test, op.size, cases[i].size, "case %d", i);
		}
		if (cases[i].emul == UPROBE_EMUL_MOV)
			KUNIT_EXPECT_EQ_MSG(test, op.src, cases[i].src, "case %d", i);
	}
}

/* What post_xol is told to repair, for the instructions that need it. */
static void uk_fixups_test(struct kunit *test)
{
	static const u8 call_next[] = { 0xe8, 0, 0, 0, 0 };
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		u8 fix;
	} cases[] = {
		{ { 0x9c }, UPROBE_FIX_IP | UPROBE_FIX_PUSHF },
		{ { 0x9d }, UPROBE_FIX_IP | UPROBE_FIX_POPF },
		{ { 0xf3, 0xa4 }, UPROBE_FIX_IP | UPROBE_FIX_INT3_STOP },
		{ { 0xa4 }, UPROBE_FIX_IP },
		{ { 0xff, 0xd0 }, UPROBE_FIX_CALL },
		{ { 0xff, 0x15, 0, 0, 0, 0 }, UPROBE_FIX_CALL | UPROBE_FIX_SCRATCH },
		{ { 0xff, 0xe0 }, 0 },
		{ { 0xc3 }, 0 },
		{ { 0xe8, 0x10, 0, 0, 0 }, UPROBE_FIX_CALL_REL },
		{ { 0x48, 0x01, 0xd8 }, UPROBE_FIX_IP },
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uk_analyze(test, true, cases[i].bytes, &op, ixol);
		KUNIT_EXPECT_EQ_MSG(test, op.fix, cases[i].fix, "case %d", i);
	}

	/* rep string: the copy is followed by the int3 that ends the step. */
	uk_analyze(test, true, (const u8 []){ 0xf3, 0x48, 0xab, 0x90 }, &op, ixol);
	KUNIT_EXPECT_EQ(test, op.xol_len, 4);
	KUNIT_EXPECT_EQ(test, ixol[3], UPROBE_SWBP_INSN);

	/* call rel32 steps as a call to the next slot byte. */
	uk_analyze(test, true, (const u8 []){ 0xe8, 0x10, 0, 0, 0 }, &op, ixol);
	KUNIT_EXPECT_EQ(test, op.xol_len, sizeof(call_next));
	KUNIT_EXPECT_EQ(test, memcmp(ixol, call_next, sizeof(call_next)), 0);
}

static void uk_cond_test(struct kunit *test)
{
	static const struct {
		u8 cc;
		unsigned long flags;
		bool holds;
	} cases[] = {
		{ 0x0, X86_EFLAGS_OF, true }, { 0x1, X86_EFLAGS_OF, false },
		{ 0x2, X86_EFLAGS_CF, true }, { 0x3, 0, true },
		{ 0x4, X86_EFLAGS_ZF, true }, { 0x5, X86_EFLAGS_ZF, false },
		{ 0x6, X86_EFLAGS_ZF, true }, { 0x6, X86_EFLAGS_CF, true },
		{ 0x6, 0, false }, { 0x7, 0, true },
		{ 0x8, X86_EFLAGS_SF, true }, { 0x9, X86_EFLAGS_SF, false },
		{ 0xa, X86_EFLAGS_PF, true }, { 0xb, X86_EFLAGS_PF, false },
		{ 0xc, X86_EFLAGS_SF, true }, { 0xc, X86_EFLAGS_SF | X86_EFLAGS_OF, false },
		{ 0xd, X86_EFLAGS_OF, false }, { 0xd, 0, true },
		{ 0xe, X86_EFLAGS_ZF, true }, { 0xe, X86_EFLAGS_OF, true },
		{ 0xe, X86_EFLAGS_SF | X86_EFLAGS_OF, false },
		{ 0xf, X86_EFLAGS_SF | X86_EFLAGS_OF, true },
		{ 0xf, X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF, false },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, uprobe_x86_cond(cases[i].cc, cases[i].flags),
				    cases[i].holds, "cc %#x flags %#lx",
				    cases[i].cc, cases[i].flags);
}

static void uk_loop_test(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, uprobe_x86_loop_taken(2, 5, 0));
	KUNIT_EXPECT_FALSE(test, uprobe_x86_loop_taken(2, 0, 0));
	KUNIT_EXPECT_TRUE(test, uprobe_x86_loop_taken(1, 5, X86_EFLAGS_ZF));
	KUNIT_EXPECT_FALSE(test, uprobe_x86_loop_taken(1, 5, 0));
	KUNIT_EXPECT_TRUE(test, uprobe_x86_loop_taken(0, 5, 0));
	KUNIT_EXPECT_FALSE(test, uprobe_x86_loop_taken(0, 5, X86_EFLAGS_ZF));
	KUNIT_EXPECT_FALSE(test, uprobe_x86_loop_taken(0, 0, 0));
	KUNIT_EXPECT_TRUE(test, uprobe_x86_loop_taken(3, 0, 0));
	KUNIT_EXPECT_FALSE(test, uprobe_x86_loop_taken(3, 1, 0));
}

#define UK_ARITH_FLAGS	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF)

/* The CPU's own answer for a op b at @size bytes. */
static unsigned long uk_cpu_add_sub(bool sub, unsigned long a, unsigned long b,
				    unsigned int size, unsigned long *flags)
{
	unsigned long f;

	if (size == 8 && sub)
		asm("sub %2, %0; pushf; pop %1" : "+r"(a), "=r"(f) : "r"(b) : "cc");
	else if (size == 8)
		asm("add %2, %0; pushf; pop %1" : "+r"(a), "=r"(f) : "r"(b) : "cc");
	else if (sub)
		asm("subl %k2, %k0; pushf; pop %1" : "+r"(a), "=r"(f) : "r"(b) : "cc");
	else
		asm("addl %k2, %k0; pushf; pop %1" : "+r"(a), "=r"(f) : "r"(b) : "cc");
	*flags = f & UK_ARITH_FLAGS;
	return size == 8 ? a : (u32)a;
}

static void uk_add_sub_test(struct kunit *test)
{
	static const unsigned long vals[] = {
		0, 1, 2, 0xf, 0x10, 0x7f, 0x80, 0xff, 0x100, 0x7fffffff,
		0x80000000, 0xffffffff,
#ifdef CONFIG_X86_64
		0x100000000UL, 0x7ffffffffffffff0UL,
		0x7fffffffffffffffUL, 0x8000000000000000UL,
		0xfffffffffffffff0UL, 0xffffffffffffffffUL,
		0x00007ffc12345678UL, 0x00007ffc12345670UL,
#endif
	};
	unsigned int size, i, j, sub;

	for (size = 4; size <= sizeof(long); size += 4)
		for (sub = 0; sub < 2; sub++)
			for (i = 0; i < ARRAY_SIZE(vals); i++)
				for (j = 0; j < ARRAY_SIZE(vals); j++) {
					unsigned long ours = X86_EFLAGS_IF | X86_EFLAGS_TF;
					unsigned long cpu, r_ours, r_cpu;

					r_ours = uprobe_x86_add_sub(sub, vals[i], vals[j],
								    size, &ours);
					r_cpu = uk_cpu_add_sub(sub, vals[i], vals[j],
							       size, &cpu);
					KUNIT_EXPECT_EQ_MSG(test, r_ours, r_cpu,
							    "%s %#lx, %#lx (%u bytes)",
							    sub ? "sub" : "add",
							    vals[i], vals[j], size);
					KUNIT_EXPECT_EQ_MSG(test, ours & UK_ARITH_FLAGS, cpu,
							    "flags of %s %#lx, %#lx (%u bytes)",
							    sub ? "sub" : "add",
							    vals[i], vals[j], size);
					/* Other flags are left alone. */
					KUNIT_EXPECT_EQ(test, ours & ~UK_ARITH_FLAGS,
							X86_EFLAGS_IF | X86_EFLAGS_TF);
					/* The hit path's version agrees. */
					cpu = X86_EFLAGS_IF | X86_EFLAGS_TF;
					r_cpu = uprobe_x86_alu_sp(sub, vals[i], vals[j],
								  size, &cpu);
					KUNIT_EXPECT_EQ(test, r_cpu, r_ours);
					KUNIT_EXPECT_EQ(test, cpu, ours);
				}
}

/* The memory operand as split_address() took it apart (case @i). */
static void uk_expect_address(struct kunit *test, const struct uprobe_x86_op *op,
			      u8 base, u8 index, u8 scale, s32 imm, int i)
{
	KUNIT_EXPECT_EQ_MSG(test, op->base, base, "case %d", i);
	KUNIT_EXPECT_EQ_MSG(test, op->index, index, "case %d", i);
	if (index != UPROBE_X86_NO_REG)
		KUNIT_EXPECT_EQ_MSG(test, op->scale, scale, "case %d", i);
	KUNIT_EXPECT_EQ_MSG(test, op->imm, imm, "case %d", i);
}

/* How a memory mov's address is taken apart. */
static void uk_mov_mem_test(struct kunit *test)
{
	enum { NO = UPROBE_X86_NO_REG, RIP = UPROBE_X86_RIP };
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		u8 reg, base, index, scale, seg, store, size;
		s32 imm;
	} cases[] = {
		/* mov %rdi,-0x18(%rbp) */
		{ { 0x48, 0x89, 0x7d, 0xe8 }, 7, 5, NO, 0, 0, 1, 8, -0x18 },
		/* mov 0x8(%rsp),%rax: SIB, no index */
		{ { 0x48, 0x8b, 0x44, 0x24, 0x08 }, 0, 4, NO, 0, 0, 0, 8, 8 },
		/* mov (%rax,%rbx,8),%rcx */
		{ { 0x48, 0x8b, 0x0c, 0xd8 }, 1, 0, 3, 3, 0, 0, 8, 0 },
		/* mov 0x10(,%r12,4),%eax: no base, REX.X index */
		{ { 0x42, 0x8b, 0x04, 0xa5, 0x10, 0, 0, 0 }, 0, NO, 12, 2, 0, 0, 4, 0x10 },
		/* mov 0x0(%r13),%eax: REX.B base, disp8 */
		{ { 0x41, 0x8b, 0x45, 0x00 }, 0, 13, NO, 0, 0, 0, 4, 0 },
		/* mov %r9d,(%r10) */
		{ { 0x45, 0x89, 0x0a }, 9, 10, NO, 0, 0, 1, 4, 0 },
		/* mov -0x10(%rip),%r8 */
		{ { 0x4c, 0x8b, 0x05, 0xf0, 0xff, 0xff, 0xff }, 8, RIP, NO, 0, 0, 0, 8, -16 },
		/* mov %fs:0x28,%rax */
		{ { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0 }, 0, NO, NO, 0,
		  UPROBE_X86_SEG_FS, 0, 8, 0x28 },
		/* mov %rdx,%gs:0x8(%rcx,%r12,1) */
		{ { 0x65, 0x4a, 0x89, 0x54, 0x21, 0x08 }, 2, 1, 12, 0,
		  UPROBE_X86_SEG_GS, 1, 8, 8 },
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uk_analyze(test, true, cases[i].bytes, &op, ixol);
		KUNIT_ASSERT_EQ_MSG(test, op.emul, UPROBE_EMUL_MOV_MEM, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.reg, cases[i].reg, "case %d", i);
		uk_expect_address(test, &op, cases[i].base, cases[i].index,
				  cases[i].scale, cases[i].imm, i);
		KUNIT_EXPECT_EQ_MSG(test, op.seg, cases[i].seg, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.store, cases[i].store, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.size, cases[i].size, "case %d", i);
	}
	/* The same bytes in a compat task are stepped, not emulated. */
	uk_analyze(test, false, cases[0].bytes + 1, &op, ixol);
	KUNIT_EXPECT_EQ(test, op.emul, UPROBE_EMUL_NONE);
}

/* lea: the address taken apart as for a memory mov, no segment. */
static void uk_lea_test(struct kunit *test)
{
	enum { NO = UPROBE_X86_NO_REG, RIP = UPROBE_X86_RIP };
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		u8 reg, base, index, scale, size;
		s32 imm;
	} cases[] = {
		/* lea (%rdi,%rsi,1),%rax */
		{ { 0x48, 0x8d, 0x04, 0x37 }, 0, 7, 6, 0, 8, 0 },
		/* lea 0x8(%rdi,%rdi,4),%rax */
		{ { 0x48, 0x8d, 0x44, 0xbf, 0x08 }, 0, 7, 7, 2, 8, 8 },
		/* lea -0x8(%r13,%r12,2),%r11 */
		{ { 0x4f, 0x8d, 0x5c, 0x65, 0xf8 }, 11, 13, 12, 1, 8, -8 },
		/* lea 0x1(%rdi),%eax */
		{ { 0x8d, 0x47, 0x01 }, 0, 7, NO, 0, 4, 1 },
		/* lea 0x0(,%rax,8),%rdx: no base */
		{ { 0x48, 0x8d, 0x14, 0xc5, 0, 0, 0, 0 }, 2, NO, 0, 3, 8, 0 },
		/* lea 0x8(%rsp),%rsp: SIB without index */
		{ { 0x48, 0x8d, 0x64, 0x24, 0x08 }, 4, 4, NO, 0, 8, 8 },
		/* lea -0x10(%rip),%r8 */
		{ { 0x4c, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff }, 8, RIP, NO, 0, 8, -16 },
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uk_analyze(test, true, cases[i].bytes, &op, ixol);
		KUNIT_ASSERT_EQ_MSG(test, op.emul, UPROBE_EMUL_LEA, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.reg, cases[i].reg, "case %d", i);
		uk_expect_address(test, &op, cases[i].base, cases[i].index,
				  cases[i].scale, cases[i].imm, i);
		KUNIT_EXPECT_EQ_MSG(test, op.size, cases[i].size, "case %d", i);
	}
	/* The same bytes in a compat task are stepped, not emulated. */
	uk_analyze(test, false, cases[0].bytes + 1, &op, ixol);
	KUNIT_EXPECT_EQ(test, op.emul, UPROBE_EMUL_NONE);
}

/*
 * Indirect call and jmp: the register holding the target, or the memory
 * operand taken apart as for a memory mov; stepped in compat code, with
 * an address-size prefix, or with both fs and gs.
 */
static void uk_branch_ind_test(struct kunit *test)
{
	enum { NO = UPROBE_X86_NO_REG, RIP = UPROBE_X86_RIP,
	       CALL = UPROBE_EMUL_CALL_IND, JMP = UPROBE_EMUL_JMP_IND };
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		u8 emul, mem, src, base, index, scale, seg, fix;
		s32 imm;
	} cases[] = {
		/* call *%rax */
		{ { 0xff, 0xd0 }, CALL, 0, 0, 0, NO, 0, 0, UPROBE_FIX_CALL, 0 },
		/* jmp *%r11 */
		{ { 0x41, 0xff, 0xe3 }, JMP, 0, 11, 0, NO, 0, 0, 0, 0 },
		/* bnd jmp *%r11: the MPX prefix of old PLTs changes nothing */
		{ { 0xf2, 0x41, 0xff, 0xe3 }, JMP, 0, 11, 0, NO, 0, 0, 0, 0 },
		/* jmp *0x2fe2(%rip): a PLT entry */
		{ { 0xff, 0x25, 0xe2, 0x2f, 0, 0 }, JMP, 1, 0, RIP, NO, 0, 0,
		  UPROBE_FIX_SCRATCH, 0x2fe2 },
		/* call *0x18(%rax) */
		{ { 0xff, 0x50, 0x18 }, CALL, 1, 0, 0, NO, 0, 0, UPROBE_FIX_CALL, 0x18 },
		/* notrack jmp *(%rdx,%rax,8): a switch table */
		{ { 0x3e, 0xff, 0x24, 0xc2 }, JMP, 1, 0, 2, 0, 3, 0, 0, 0 },
		/* call *(%rsp) */
		{ { 0xff, 0x14, 0x24 }, CALL, 1, 0, 4, NO, 0, 0, UPROBE_FIX_CALL, 0 },
		/* call *%fs:0x10 */
		{ { 0x64, 0xff, 0x14, 0x25, 0x10, 0, 0, 0 }, CALL, 1, 0, NO, NO, 0,
		  UPROBE_X86_SEG_FS, UPROBE_FIX_CALL, 0x10 },
	};
	static const u8 stepped[][MAX_UINSN_BYTES] = {
		{ 0x67, 0xff, 0x10 },		/* call *(%eax) */
		{ 0x64, 0x65, 0xff, 0x20 },	/* jmp *%fs:%gs:(%rax) */
	};
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uk_analyze(test, true, cases[i].bytes, &op, ixol);
		KUNIT_ASSERT_EQ_MSG(test, op.emul, cases[i].emul, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.mem, cases[i].mem, "case %d", i);
		KUNIT_EXPECT_EQ_MSG(test, op.fix, cases[i].fix, "case %d", i);
		if (!cases[i].mem) {
			KUNIT_EXPECT_EQ_MSG(test, op.src, cases[i].src, "case %d", i);
			continue;
		}
		uk_expect_address(test, &op, cases[i].base, cases[i].index,
				  cases[i].scale, cases[i].imm, i);
		KUNIT_EXPECT_EQ_MSG(test, op.seg, cases[i].seg, "case %d", i);
	}
	for (i = 0; i < ARRAY_SIZE(stepped); i++) {
		uk_analyze(test, true, stepped[i], &op, ixol);
		KUNIT_EXPECT_EQ_MSG(test, op.emul, UPROBE_EMUL_NONE, "stepped %d", i);
	}
	/* call *%rax in a compat task is stepped. */
	uk_analyze(test, false, cases[0].bytes, &op, ixol);
	KUNIT_EXPECT_EQ(test, op.emul, UPROBE_EMUL_NONE);
}

#ifdef CONFIG_X86_64	/* the uretprobe syscall and direct runs: 64-bit only */
/*
 * The syscall return trampoline decodes as what the syscall handler
 * expects: three pushes (the frame it unwinds), the syscall number, the
 * syscall, and the fallback breakpoint right where the syscall leaves ip.
 */
static void uk_syscall_trampoline_test(struct kunit *test)
{
	static const u8 want_op[] = { 0x50, 0x51, 0x53, 0xb8, 0x0f, 0xcc };
	const u8 *code;
	unsigned int len, off = 0;
	struct insn insn;
	int i;

	code = arch_uretprobe_syscall_trampoline(&len);
	KUNIT_ASSERT_NOT_NULL(test, code);
	KUNIT_EXPECT_LE(test, len, UPROBE_XOL_SLOT_BYTES);
	for (i = 0; i < ARRAY_SIZE(want_op); i++) {
		KUNIT_ASSERT_LT_MSG(test, off, len, "insn %d", i);
		KUNIT_ASSERT_EQ_MSG(test, insn_decode(&insn, code + off, len - off,
						      INSN_MODE_64), 0, "insn %d", i);
		KUNIT_EXPECT_EQ_MSG(test, insn.opcode.bytes[0], want_op[i],
				    "insn %d at %u", i, off);
		if (want_op[i] == 0xb8)
			KUNIT_EXPECT_EQ(test, insn.immediate.value, __NR_uretprobe);
		if (want_op[i] == 0x0f)
			KUNIT_EXPECT_EQ(test, insn.opcode.bytes[1], 0x05);
		off += insn.length;
	}
	/* The push of %r11 needs REX.B; the breakpoint is the last byte. */
	KUNIT_EXPECT_EQ(test, code[2], 0x41);
	KUNIT_EXPECT_EQ(test, off, len);
	KUNIT_EXPECT_EQ(test, code[len - 1], UPROBE_SWBP_INSN);
}

/*
 * Which plans run without a step, and their slot code: the copy, then
 * "jmp *0(%rip)" to the absolute address of the next instruction.
 */
static void uk_direct_test(struct kunit *test)
{
	static const struct {
		u8 bytes[MAX_UINSN_BYTES];
		bool is64;
		bool direct;
	} rows[] = {
		{ { 0x48, 0x01, 0xf7 }, true, true },		/* add %rsi,%rdi */
		{ { 0x48, 0xf7, 0xf6 }, true, true },		/* div %rsi */
		{ { 0x55 }, true, true },			/* push %rbp: failed emulation */
		{ { 0x01, 0xf7 }, false, false },		/* compat: stepped */
		/* rip-relative: the copy reloads its scratch register */
		{ { 0x48, 0x03, 0x05, 1, 2, 3, 4 }, true, true },	/* add x(%rip),%rax */
		{ { 0x83, 0x3d, 1, 2, 3, 4, 0 }, true, true },	/* cmpl $0,x(%rip) */
		/* ... unless the copy may move the stack pointer */
		{ { 0x48, 0x03, 0x25, 1, 2, 3, 4 }, true, false },	/* add x(%rip),%rsp */
		{ { 0xff, 0x35, 1, 2, 3, 4 }, true, false },	/* push x(%rip) */
		{ { 0xff, 0xd0 }, true, false },		/* call *%rax */
		{ { 0x9c }, true, false },			/* pushf */
		{ { 0xf3, 0xa4 }, true, false },		/* rep movsb */
		{ { 0xeb, 0x10 }, true, false },		/* jmp: no copy */
		/* ... or its operand may be the save slot below the stack */
		{ { 0x64, 0x03, 0x05, 1, 2, 3, 4 }, true, false },	/* add %fs:x(%rip),%eax */
		{ { 0x67, 0x03, 0x05, 1, 2, 3, 4 }, true, false },	/* add x(%eip),%eax */
		{ { 0x48, 0x0f, 0xab, 0x0d, 1, 2, 3, 4 }, true, false }, /* bts %rcx */
		{ { 0x0f, 0xba, 0x2d, 1, 2, 3, 4, 5 }, true, true },	/* bts $5,x(%rip) */
	};
	struct pt_regs regs = { .cs = __USER_CS, .flags = X86_EFLAGS_IF };
	const unsigned long vaddr = 0x7f0012345678UL;
	struct arch_uprobe aup;
	u8 code[UPROBE_XOL_SLOT_BYTES];
	unsigned int i, len, n;
	const char *why;
	u64 next;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		memset(&aup, 0, sizeof(aup));
		memcpy(aup.insn, rows[i].bytes, sizeof(aup.insn));
		KUNIT_ASSERT_EQ(test, uprobe_x86_analyze(aup.insn, rows[i].is64,
							 &aup.op, aup.ixol, &why), 0);
		regs.cs = rows[i].is64 ? __USER_CS : __USER32_CS;
		regs.flags = X86_EFLAGS_IF;
		KUNIT_EXPECT_EQ_MSG(test, arch_uprobe_direct_ok(&aup, &regs),
				    rows[i].direct, "row %u", i);
		if (!rows[i].direct)
			continue;
		/* Somebody else's single-step: stepped. */
		regs.flags |= X86_EFLAGS_TF;
		KUNIT_EXPECT_FALSE_MSG(test, arch_uprobe_direct_ok(&aup, &regs),
				       "row %u under TF", i);

		n = aup.op.len;
		len = arch_uprobe_direct_code(&aup, vaddr, code);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(code, aup.ixol, n), 0,
				    "row %u", i);
		if (aup.op.fix & UPROBE_FIX_SCRATCH) {
			/* mov -136(%rsp),%scratch */
			const u8 reload[] = {
				0x48, 0x8b, 0x84 | aup.op.scratch << 3, 0x24,
				0x78, 0xff, 0xff, 0xff,
			};

			KUNIT_EXPECT_EQ_MSG(test, memcmp(code + n, reload,
							 sizeof(reload)), 0,
					    "row %u", i);
			len -= sizeof(reload);
			memmove(code + n, code + n + sizeof(reload), len - n);
		} else {
			KUNIT_EXPECT_EQ_MSG(test, memcmp(code, rows[i].bytes, n),
					    0, "row %u", i);
		}
		KUNIT_ASSERT_EQ_MSG(test, len, n + 14, "row %u", i);
		KUNIT_EXPECT_EQ(test, code[n], 0xff);
		KUNIT_EXPECT_EQ(test, code[n + 1], 0x25);
		KUNIT_EXPECT_EQ(test, get_unaligned((u32 *)(code + n + 2)), 0);
		memcpy(&next, code + n + 6, sizeof(next));
		KUNIT_EXPECT_EQ(test, next, vaddr + n);
		KUNIT_EXPECT_EQ(test, arch_uprobe_direct_next(&aup, vaddr),
				vaddr + n);
	}
}

#endif /* CONFIG_X86_64 */

static struct kunit_case uprobes_x86_cases[] = {
	KUNIT_CASE_PARAM(uk_insn_test, uk_insn_gen_params),
	KUNIT_CASE(uk_emul_operands_test),
	KUNIT_CASE(uk_mov_mem_test),
	KUNIT_CASE(uk_lea_test),
	KUNIT_CASE(uk_branch_ind_test),
	KUNIT_CASE(uk_fixups_test),
	KUNIT_CASE(uk_cond_test),
	KUNIT_CASE(uk_loop_test),
	KUNIT_CASE(uk_add_sub_test),
#ifdef CONFIG_X86_64
	KUNIT_CASE(uk_syscall_trampoline_test),
	KUNIT_CASE(uk_direct_test),
#endif
	{}
};

static struct kunit_suite uprobes_x86_suite = {
	.name = "uprobes_x86_insn",
	.test_cases = uprobes_x86_cases,
};

kunit_test_suite(uprobes_x86_suite);

MODULE_LICENSE("GPL");
