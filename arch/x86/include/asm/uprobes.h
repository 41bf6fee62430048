/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uprobes on x86: the per-probe and per-task state the generic core keeps
 * for us, and the plan arch_uprobe_analyze_insn() makes for each probed
 * instruction.
 *
 * A probe's plan is made once, from the original bytes, by the pure
 * analyser in arch/x86/kernel/uprobes_insn.c.  It says either how to
 * emulate the instruction on pt_regs (no single-step at all), or how to
 * run a copy of it out of line (XOL) and what to repair afterwards.  Every
 * emulated instruction also has a valid out-of-line form, used when the
 * emulation cannot complete (say, a push onto an unmapped stack page) so
 * that the fault is taken by the real instruction, exactly as in place.
 */
#ifndef _ASM_X86_UPROBES_H
#define _ASM_X86_UPROBES_H

#include <linux/notifier.h>
#include <linux/types.h>
#include <asm/ptrace.h>

typedef u8 uprobe_opcode_t;

#define MAX_UINSN_BYTES			16
/*
 * One cache line per slot: threads stepping on different CPUs never write
 * a line another CPU is executing from.
 */
#define UPROBE_XOL_SLOT_BYTES		64

/*
 * Jump sites (arch/x86/kernel/uprobes_jump.c): a probed long nop becomes
 * a jmp rel32 to a stub of UPROBE_JUMP_STUB_BYTES; the stub's int3, at
 * UPROBE_JUMP_TRAP_AT, is reached only when its syscall (ending at
 * UPROBE_JUMP_SYSCALL_AT) did not run.
 */
#define UPROBE_JUMP_STUB_BYTES		32
#define UPROBE_JUMP_INSN_BYTES		5
#define UPROBE_JUMP_SYSCALL_AT		16
#define UPROBE_JUMP_TRAP_AT		28

#define UPROBE_SWBP_INSN		0xcc
#define UPROBE_SWBP_INSN_SIZE		1

/**
 * enum uprobe_x86_emul - how a probed instruction is emulated
 * @UPROBE_EMUL_NONE: not emulated: always run out of line
 * @UPROBE_EMUL_NOP: nop, pause, multi-byte nop, endbr64/endbr32
 * @UPROBE_EMUL_JMP: jmp rel8/rel32
 * @UPROBE_EMUL_JCC: jcc rel8/rel32, condition in &uprobe_x86_op.cc
 * @UPROBE_EMUL_LOOP: loopne/loope/loop/jrcxz (&uprobe_x86_op.cc = 0..3)
 * @UPROBE_EMUL_CALL: call rel32
 * @UPROBE_EMUL_RET: near ret, with an optional imm16 stack release
 * @UPROBE_EMUL_PUSH: push of a general register
 * @UPROBE_EMUL_POP: pop into a general register
 * @UPROBE_EMUL_MOV: mov between general registers (32 or 64 bits)
 * @UPROBE_EMUL_ALU_SP: add or sub of an immediate to/from the stack pointer
 * @UPROBE_EMUL_LEA: lea of a 32- or 64-bit address into a 32- or 64-bit
 *	register (base, index, scale, displacement, or rip-relative), in
 *	64-bit code only
 * @UPROBE_EMUL_MOV_MEM: a 32- or 64-bit load into, or store from, a general
 *	register (mov 8b/89 with a memory operand), in 64-bit code only
 * @UPROBE_EMUL_MOV_IMM: mov of an immediate to a 32- or 64-bit register
 * @UPROBE_EMUL_JMP_IND: jmp through a register or memory (ff /4), in
 *	64-bit code only
 * @UPROBE_EMUL_CALL_IND: call through a register or memory (ff /2), in
 *	64-bit code only
 */
enum uprobe_x86_emul {
	UPROBE_EMUL_NONE,
	UPROBE_EMUL_NOP,
	UPROBE_EMUL_JMP,
	UPROBE_EMUL_JCC,
	UPROBE_EMUL_LOOP,
	UPROBE_EMUL_CALL,
	UPROBE_EMUL_RET,
	UPROBE_EMUL_PUSH,
	UPROBE_EMUL_POP,
	UPROBE_EMUL_MOV,
	UPROBE_EMUL_ALU_SP,
	UPROBE_EMUL_LEA,
	UPROBE_EMUL_MOV_MEM,
	UPROBE_EMUL_MOV_IMM,
	UPROBE_EMUL_JMP_IND,
	UPROBE_EMUL_CALL_IND,
};

/* &uprobe_x86_op.base and .index when they are not a general register. */
#define UPROBE_X86_NO_REG		0xff
#define UPROBE_X86_RIP			0xfe

/* &uprobe_x86_op.seg: the segment override of a memory operand. */
#define UPROBE_X86_SEG_NONE		0
#define UPROBE_X86_SEG_FS		1
#define UPROBE_X86_SEG_GS		2

/*
 * What post_xol must repair after the out-of-line copy ran.
 *
 * UPROBE_FIX_IP: the copy does not branch, so the ip it stopped at is an
 *	offset into the slot, to be moved back next to the original.
 * UPROBE_FIX_SCRATCH: a rip-relative operand was rewritten to address
 *	through a scratch register, loaded with the original next-ip for
 *	the step and restored afterwards (when the copy runs without a
 *	step, by the copy's own last instruction).
 * UPROBE_FIX_CALL: an indirect call: the return address it pushed names
 *	the slot and is replaced with the original next-ip.
 * UPROBE_FIX_CALL_REL: the out-of-line form of "call rel32" (a call to
 *	the next slot byte): the pushed address is replaced as above and ip
 *	set to the original target.
 * UPROBE_FIX_PUSHF: pushf stored our TF in the flags image; take it out.
 * UPROBE_FIX_POPF: popf loaded the flags, TF included: leave TF as loaded.
 * UPROBE_FIX_INT3_STOP: a rep string instruction: TF would stop it after
 *	every iteration, so it runs to completion and stops on an int3 placed
 *	right after it in the slot.
 */
#define UPROBE_FIX_IP			BIT(0)
#define UPROBE_FIX_SCRATCH		BIT(1)
#define UPROBE_FIX_CALL			BIT(2)
#define UPROBE_FIX_CALL_REL		BIT(3)
#define UPROBE_FIX_PUSHF		BIT(4)
#define UPROBE_FIX_POPF			BIT(5)
#define UPROBE_FIX_INT3_STOP		BIT(6)

/**
 * struct uprobe_x86_op - the plan for one probed instruction
 * @len: length of the original instruction
 * @is64: decoded as 64-bit code (else 32-bit compat code)
 * @emul: &enum uprobe_x86_emul
 * @fix: UPROBE_FIX_* bits for the out-of-line form
 * @cc: condition code (jcc) or loop variant (loop)
 * @reg: register operand: pushed, popped, destination of mov/lea (0..15),
 *	or loaded or stored by a memory mov
 * @src: source register of mov, or the register holding an indirect
 *	branch's target
 * @size: operand size in bytes (mov, lea, push, pop, add/sub)
 * @scratch: register standing in for rip in the out-of-line copy
 * @sub: add/sub to the stack pointer is a subtraction
 * @xol_len: length of the out-of-line copy in &arch_uprobe.ixol
 * @base: memory operand (mov, lea, indirect branch): base register,
 *	%UPROBE_X86_RIP or %UPROBE_X86_NO_REG
 * @index: memory operand: index register or %UPROBE_X86_NO_REG
 * @scale: memory operand: the index is shifted left by this
 * @seg: memory mov or indirect branch: %UPROBE_X86_SEG_NONE,
 *	%UPROBE_X86_SEG_FS or %UPROBE_X86_SEG_GS
 * @store: memory mov: writes @reg to memory (else loads it)
 * @mem: indirect branch: the target is loaded from the memory operand
 *	(else it is in @src)
 * @direct: the out-of-line form may run in the thread's own slot followed
 *	by a jump back, without a step (64-bit code whose only repairs are
 *	ip and the scratch register, and which leaves the stack pointer
 *	alone): see arch_uprobe_direct_ok()
 * @imm: branch displacement, memory operand displacement, stack
 *	adjustment, the imm16 of "ret imm16" or the immediate of mov $imm
 */
struct uprobe_x86_op {
	u8	len;
	u8	is64;
	u8	emul;
	u8	fix;
	u8	cc;
	u8	reg;
	u8	src;
	u8	size;
	u8	scratch;
	u8	sub;
	u8	xol_len;
	u8	base;
	u8	index;
	u8	scale;
	u8	seg;
	u8	store;
	u8	mem;
	u8	direct;
	s32	imm;
};

/**
 * struct arch_uprobe - x86 state of one probe
 * @insn: the original bytes, filled in by the core (perf reads them too)
 * @ixol: what the core copies into the XOL slot
 * @op: the plan made by arch_uprobe_analyze_insn()
 */
struct arch_uprobe {
	u8			insn[MAX_UINSN_BYTES];
	u8			ixol[MAX_UINSN_BYTES];
	struct uprobe_x86_op	op;
};

#define arch_uprobe_jump_maybe arch_uprobe_jump_maybe
/*
 * Only a nop as long as the jump may become one: the first test of
 * arch_uprobe_jump_ok(), inline, so that the trap of every other probe
 * is spared the call.
 */
static inline bool arch_uprobe_jump_maybe(const struct arch_uprobe *aup)
{
	return aup->op.emul == UPROBE_EMUL_NOP &&
	       aup->op.len >= UPROBE_JUMP_INSN_BYTES;
}

/**
 * struct arch_uprobe_task - x86 state of a task stepping out of line
 * @saved_trap_nr: thread.trap_nr before the step; the step replaces it
 *	with a marker that any fault overwrites
 * @saved_scratch: the scratch register's value before the step
 * @saved_tf: TF was set before the step (debugger or program stepping)
 * @saved_blockstep: branch stepping (TIF_BLOCKSTEP) was on before the step
 * @int3_stop_ip: while a UPROBE_FIX_INT3_STOP copy runs, the ip an int3
 *	trap reports when it ends the step (0 otherwise)
 */
struct arch_uprobe_task {
	unsigned long	saved_trap_nr;
	unsigned long	saved_scratch;
	unsigned long	int3_stop_ip;
	bool		saved_tf;
	bool		saved_blockstep;
};

/*
 * Two questions every hit asks, answered here so that they cost no call
 * (the core's __weak defaults are out of line): the int3 trap leaves ip
 * just past the breakpoint, and x86 ignores no hit.
 */
static inline unsigned long arch_uprobe_swbp_addr(struct pt_regs *regs)
{
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
}

#define arch_uprobe_swbp_addr arch_uprobe_swbp_addr

static inline bool arch_uprobe_ignore(struct arch_uprobe *aup,
				      struct pt_regs *regs)
{
	return false;
}

#define arch_uprobe_ignore arch_uprobe_ignore

#endif /* _ASM_X86_UPROBES_H */
