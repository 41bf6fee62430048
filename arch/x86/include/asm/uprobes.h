/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uprobes on x86: the state the core keeps for us, and the plan made for a
 * probed instruction: emulate it on pt_regs, or run a copy out of line
 * (XOL) and repair what that changed.  An emulation that would fault falls
 * back to the out-of-line form, so that the real instruction faults.
 */
#ifndef _ASM_X86_UPROBES_H
#define _ASM_X86_UPROBES_H

#include <linux/notifier.h>
#include <linux/types.h>
#include <asm/ptrace.h>

typedef u8 uprobe_opcode_t;

#define MAX_UINSN_BYTES			16
/* A cache line per slot: no CPU writes a line another one executes. */
#define UPROBE_XOL_SLOT_BYTES		64

#define UPROBE_SWBP_INSN		0xcc
#define UPROBE_SWBP_INSN_SIZE		1

/* How a probed instruction is emulated; UPROBE_EMUL_NONE: it is not. */
enum uprobe_x86_emul {
	UPROBE_EMUL_NONE,
	UPROBE_EMUL_NOP,	/* nop, pause, multi-byte nop, endbr64/32 */
	UPROBE_EMUL_JMP,	/* jmp rel8/rel32 */
	UPROBE_EMUL_JCC,	/* jcc rel8/rel32 */
	UPROBE_EMUL_LOOP,	/* loopne, loope, loop, jrcxz */
	UPROBE_EMUL_CALL,	/* call rel32 */
	UPROBE_EMUL_RET,	/* near ret, ret imm16 */
	UPROBE_EMUL_PUSH,	/* push of a general register */
	UPROBE_EMUL_POP,	/* pop into a general register */
	UPROBE_EMUL_MOV,	/* 32/64-bit mov between general registers */
	UPROBE_EMUL_ALU_SP,	/* add/sub $imm to the stack pointer */
	UPROBE_EMUL_LEA,	/* 32/64-bit lea (64-bit code) */
	UPROBE_EMUL_MOV_MEM,	/* 32/64-bit mov reg<->mem (64-bit code) */
	UPROBE_EMUL_MOV_IMM,	/* mov $imm to a 32/64-bit register */
	UPROBE_EMUL_JMP_IND,	/* jmp *reg or *mem (64-bit code) */
	UPROBE_EMUL_CALL_IND,	/* call *reg or *mem (64-bit code) */
};

/* uprobe_x86_op.base and .index when they are not a general register. */
#define UPROBE_X86_NO_REG		0xff
#define UPROBE_X86_RIP			0xfe

/* uprobe_x86_op.seg: the segment override of a memory operand. */
#define UPROBE_X86_SEG_NONE		0
#define UPROBE_X86_SEG_FS		1
#define UPROBE_X86_SEG_GS		2

/* What post_xol repairs after the out-of-line copy ran. */
#define UPROBE_FIX_IP		BIT(0)	/* ip is in the slot: move it back */
#define UPROBE_FIX_SCRATCH	BIT(1)	/* restore the register used for rip */
#define UPROBE_FIX_CALL		BIT(2)	/* the return address names the slot */
#define UPROBE_FIX_CALL_REL	BIT(3)	/* "call .+5" copy: _CALL, ip = target */
#define UPROBE_FIX_PUSHF	BIT(4)	/* take our TF out of the pushed flags */
#define UPROBE_FIX_POPF		BIT(5)	/* leave TF as popf loaded it */
#define UPROBE_FIX_INT3_STOP	BIT(6)	/* rep: run to an int3, not under TF */

/* The plan for one probed instruction. */
struct uprobe_x86_op {
	u8	len;		/* of the original instruction */
	u8	is64;		/* decoded as 64-bit code (else compat) */
	u8	emul;		/* enum uprobe_x86_emul */
	u8	fix;		/* UPROBE_FIX_* for the out-of-line form */
	u8	cc;		/* condition (jcc) or variant (loop, 0..3) */
	u8	reg;		/* destination, pushed, or memory mov register */
	u8	src;		/* mov's source, indirect branch's target reg */
	u8	size;		/* operand size in bytes */
	u8	scratch;	/* register standing in for rip out of line */
	u8	sub;		/* ALU_SP subtracts */
	u8	xol_len;	/* length of the out-of-line copy (0: none) */
	u8	base;		/* memory operand: register, _RIP or _NO_REG */
	u8	index;		/* memory operand: register or _NO_REG */
	u8	scale;		/* memory operand: index shift */
	u8	seg;		/* memory operand: UPROBE_X86_SEG_* */
	u8	store;		/* memory mov writes reg (else loads it) */
	u8	mem;		/* indirect branch's target is in memory */
	u8	direct;		/* see arch_uprobe_direct_ok() */
	s32	imm;		/* displacement, immediate, or stack release */
};

/* x86 state of one probe. */
struct arch_uprobe {
	u8			insn[MAX_UINSN_BYTES];	/* original bytes */
	u8			ixol[MAX_UINSN_BYTES];	/* copy for the slot */
	struct uprobe_x86_op	op;
};

/* x86 state of a task stepping out of line: what the step replaced. */
struct arch_uprobe_task {
	unsigned long	saved_trap_nr;
	unsigned long	saved_scratch;
	unsigned long	int3_stop_ip;	/* the int3 that ends a rep's copy */
	bool		saved_tf;
	bool		saved_blockstep;
};

/* The int3 trap leaves ip just past the breakpoint. */
#define arch_uprobe_swbp_addr arch_uprobe_swbp_addr
static inline unsigned long arch_uprobe_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
}

/*
 * A user access that fails leaves the emulation undone and changes
 * nothing: the core may try it with page faults off.
 */
#define arch_uprobe_skip_sstep_nofault arch_uprobe_skip_sstep

/* x86 ignores no hit. */
#define arch_uprobe_ignore arch_uprobe_ignore
static inline bool arch_uprobe_ignore(struct arch_uprobe *aup,
				      struct pt_regs *regs)
{
	return false;
}

#endif /* _ASM_X86_UPROBES_H */
