// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes on x86: the part that touches registers and user memory.
 *
 * A hit goes through the generic core (kernel/events/) and comes here at
 * three points:
 *
 *  - arch_uprobe_skip_sstep(): if the plan made by uprobe_x86_analyze()
 *    says the instruction is emulated, do it on pt_regs and the user stack
 *    and return to user space past it.  If the emulation would fault (a
 *    push onto an unmapped page, a ret from an unreadable stack, a mov
 *    from a bad pointer), undo nothing because nothing was done yet, and
 *    let the core step the out-of-line form instead, so the real
 *    instruction takes the fault.
 *
 *  - arch_uprobe_pre_xol() / arch_uprobe_post_xol(): run the copy in the
 *    task's XOL slot under TF (or, for rep string instructions, up to an
 *    int3 after it), then move ip back next to the original and repair
 *    what running elsewhere changed: the scratch register that stood in
 *    for rip, a return address naming the slot, our TF in a pushf image.
 *
 *  - arch_uprobe_abort_xol(): the step was cut short by a fault or a fatal
 *    signal: put ip back on the original instruction, so the signal is
 *    delivered as if the instruction had faulted in place.
 *
 *  - arch_uprobe_direct_ok() / arch_uprobe_direct_code(): a plan whose
 *    only repairs are ip and a rip-relative copy's scratch register runs,
 *    in 64-bit code and when nobody single-steps the thread, as its copy,
 *    a reload of the scratch register and a jump back, in a slot the
 *    thread owns (kernel/events/uprobes_direct.c): no step at all.
 *
 * Whether a trap ended the step is told by thread.trap_nr: pre_xol sets it
 * to UPROBE_X86_STEPPING, every user fault overwrites it (and keeps the
 * fault's number for the signal frame), post_xol restores it.  A direct
 * run marks it the same way, and the next get_signal() restores it (the
 * only reader is the signal frame; a child forked before that inherits
 * the mark, so its frames for signals other than faults show trapno -1
 * instead of its parent's last fault until it faults itself).
 *
 * Somebody else's single-stepping (ptrace, or the program's own TF) is
 * preserved: the step that ends ours reports the trap the original
 * instruction would have raised, and emulated instructions raise one too.
 */

#define pr_fmt(fmt) "uprobes/x86: " fmt

#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/mmu_context.h>
#include <linux/processor.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/signal.h>
#include <linux/sizes.h>
#include <linux/syscalls.h>
#include <linux/thread_info.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/debugreg.h>
#include <asm/fsgsbase.h>
#include <asm/insn.h>
#include <asm/trapnr.h>
#include <asm/unaligned.h>

#include "uprobes_insn.h"

/* thread.trap_nr while a step is in flight: no trap has that number. */
#define UPROBE_X86_STEPPING	(~0UL)

/*
 * Where the general register @n (ModRM numbering) is in struct pt_regs: a
 * table rather than a switch, since every emulated mov, push and pop
 * looks one up on the hit path.
 */
static const u8 uprobe_x86_gpr_off[] = {
	[UPROBE_X86_AX]	= offsetof(struct pt_regs, ax),
	[UPROBE_X86_CX]	= offsetof(struct pt_regs, cx),
	[UPROBE_X86_DX]	= offsetof(struct pt_regs, dx),
	[UPROBE_X86_BX]	= offsetof(struct pt_regs, bx),
	[UPROBE_X86_SP]	= offsetof(struct pt_regs, sp),
	[UPROBE_X86_BP]	= offsetof(struct pt_regs, bp),
	[UPROBE_X86_SI]	= offsetof(struct pt_regs, si),
	[UPROBE_X86_DI]	= offsetof(struct pt_regs, di),
#ifdef CONFIG_X86_64
	[UPROBE_X86_R8]	= offsetof(struct pt_regs, r8),
	[UPROBE_X86_R9]	= offsetof(struct pt_regs, r9),
	[UPROBE_X86_R10]	= offsetof(struct pt_regs, r10),
	[UPROBE_X86_R11]	= offsetof(struct pt_regs, r11),
	[UPROBE_X86_R12]	= offsetof(struct pt_regs, r12),
	[UPROBE_X86_R13]	= offsetof(struct pt_regs, r13),
	[UPROBE_X86_R14]	= offsetof(struct pt_regs, r14),
	[UPROBE_X86_R15]	= offsetof(struct pt_regs, r15),
#endif
};

static __always_inline unsigned long *uprobe_x86_gpr(struct pt_regs *regs,
						     unsigned int n)
{
	if (WARN_ON_ONCE(n >= ARRAY_SIZE(uprobe_x86_gpr_off)))
		n = UPROBE_X86_AX;
	return (unsigned long *)((u8 *)regs + uprobe_x86_gpr_off[n]);
}

/* Stack and ip arithmetic wrap at 32 bits in a compat task. */
static unsigned long uprobe_x86_trunc(const struct uprobe_x86_op *op,
				      unsigned long val)
{
	return op->is64 ? val : (u32)val;
}

static unsigned int uprobe_x86_word(const struct uprobe_x86_op *op)
{
	return op->is64 ? 8 : 4;
}

/* One user access of the word's size (push, call, pop, ret). */
static int uprobe_x86_put_word(const struct uprobe_x86_op *op,
			       unsigned long addr, unsigned long val)
{
	if (op->is64)
		return put_user((u64)val, (u64 __user *)addr);
	return put_user((u32)val, (u32 __user *)addr);
}

static int uprobe_x86_get_word(const struct uprobe_x86_op *op,
			       unsigned long addr, unsigned long *val)
{
	u64 v64;
	u32 v32;

	if (op->is64) {
		if (get_user(v64, (u64 __user *)addr))
			return -EFAULT;
		*val = v64;
	} else {
		if (get_user(v32, (u32 __user *)addr))
			return -EFAULT;
		*val = v32;
	}
	return 0;
}

/*
 * The trap a single-stepped instruction raises, for an instruction we did
 * not let the CPU single-step.  Under branch stepping (PTRACE_SINGLEBLOCK)
 * only a control transfer traps, and the CPU then drops branch stepping.
 */
static void uprobe_x86_report_step(struct pt_regs *regs, bool was_blockstep,
				   bool branched)
{
	if (was_blockstep && !branched) {
		set_task_blockstep(current, true);
		return;
	}
	if (was_blockstep)
		set_task_blockstep(current, false);
	current->thread.virtual_dr6 = DR_STEP;
	send_sigtrap(regs, 0, TRAP_TRACE);
}

/*
 * The address a memory mov or lea names, before any segment base: @next
 * is where rip points while the instruction runs.
 */
static unsigned long uprobe_x86_address(const struct uprobe_x86_op *op,
					struct pt_regs *regs,
					unsigned long next)
{
	unsigned long addr = 0;

	if (op->base == UPROBE_X86_RIP)
		addr = next;
	else if (op->base != UPROBE_X86_NO_REG)
		addr = *uprobe_x86_gpr(regs, op->base);
	if (op->index != UPROBE_X86_NO_REG)
		addr += *uprobe_x86_gpr(regs, op->index) << op->scale;
	return addr + (long)op->imm;
}

#ifdef CONFIG_X86_64
/*
 * The linear address of @op's memory operand for an access of @size
 * bytes, in @addr.  False when the instruction itself must make the
 * access: a hardware breakpoint is armed (a watchpoint must see the
 * access made from user mode), or alignment checking is on for a
 * misaligned operand (#AC is raised in user mode only).
 */
static bool uprobe_x86_mem_addr(const struct uprobe_x86_op *op,
				struct pt_regs *regs, unsigned long next,
				unsigned int size, unsigned long *addr)
{
	unsigned long a;

	if (this_cpu_read(cpu_dr7) & DR_GLOBAL_ENABLE_MASK)
		return false;
	a = uprobe_x86_address(op, regs, next);
	if (op->seg == UPROBE_X86_SEG_FS)
		a += x86_fsbase_read_task(current);
	else if (op->seg == UPROBE_X86_SEG_GS)
		a += x86_gsbase_read_task(current);
	if ((regs->flags & X86_EFLAGS_AC) && (a & (size - 1)))
		return false;
	*addr = a;
	return true;
}

/*
 * A load or store of a general register (UPROBE_EMUL_MOV_MEM), done with
 * one user access of the operand's size, as the instruction does it.
 * False, with nothing done, whenever the instruction itself must run: the
 * access would fault (the step then delivers the fault from the
 * instruction), or uprobe_x86_mem_addr() says so.
 */
static bool uprobe_x86_mov_mem(const struct uprobe_x86_op *op,
			       struct pt_regs *regs, unsigned long next)
{
	unsigned long *reg = uprobe_x86_gpr(regs, op->reg);
	unsigned long addr;

	if (!uprobe_x86_mem_addr(op, regs, next, op->size, &addr))
		return false;
	if (op->size == 8) {
		u64 __user *p = (u64 __user *)addr;
		u64 v;

		if (op->store)
			return !put_user((u64)*reg, p);
		if (get_user(v, p))
			return false;
		*reg = v;
	} else {
		u32 __user *p = (u32 __user *)addr;
		u32 v;

		if (op->store)
			return !put_user((u32)*reg, p);
		if (get_user(v, p))
			return false;
		/* A 32-bit destination is zero-extended. */
		*reg = v;
	}
	return true;
}

/*
 * The target of an indirect jmp or call (UPROBE_EMUL_JMP_IND/CALL_IND),
 * from its register or loaded as a memory mov loads it.  False when the
 * instruction must run: the load would fault, or the target is not
 * canonical, which the branch itself reports (#GP at the branch).
 */
static bool uprobe_x86_branch_target(const struct uprobe_x86_op *op,
				     struct pt_regs *regs, unsigned long next,
				     unsigned long *target)
{
	unsigned long addr;
	u64 v;

	if (!op->mem) {
		v = *uprobe_x86_gpr(regs, op->src);
	} else {
		if (!uprobe_x86_mem_addr(op, regs, next, 8, &addr))
			return false;
		if (get_user(v, (u64 __user *)addr))
			return false;
	}
	if (!__is_canonical_address(v, __VIRTUAL_MASK_SHIFT + 1))
		return false;
	*target = v;
	return true;
}
#else
static bool uprobe_x86_mov_mem(const struct uprobe_x86_op *op,
			       struct pt_regs *regs, unsigned long next)
{
	return false;	/* never planned for 32-bit code */
}

static bool uprobe_x86_branch_target(const struct uprobe_x86_op *op,
				     struct pt_regs *regs, unsigned long next,
				     unsigned long *target)
{
	return false;	/* never planned for 32-bit code */
}
#endif

/*
 * A branch of 64-bit code to a non-canonical address raises #GP at the
 * branch, before it pushes or pops anything: IRET to such an ip would
 * fault later, with the wrong frame.  (32-bit targets wrap, as ip does.)
 */
static bool uprobe_x86_bad_target(const struct uprobe_x86_op *op,
				  unsigned long ip)
{
#ifdef CONFIG_X86_64
	return op->is64 && !__is_canonical_address(ip, __VIRTUAL_MASK_SHIFT + 1);
#else
	return false;
#endif
}

/* What uprobe_x86_emulate() did. */
enum uprobe_x86_emulated {
	UPROBE_X86_NOT_DONE,	/* nothing: it would fault, the CPU must run it */
	UPROBE_X86_DONE,	/* its effect is in @regs */
	UPROBE_X86_FAULTED,	/* it raised its fault, @regs untouched */
};

/* What the CPU does for that #GP in user mode: regs untouched. */
static enum uprobe_x86_emulated uprobe_x86_raise_gp(void)
{
	current->thread.error_code = 0;
	current->thread.trap_nr = X86_TRAP_GP;
	force_sig(SIGSEGV);
	return UPROBE_X86_FAULTED;
}

/*
 * Emulate @op at regs->ip.  A branch to a non-canonical target gets its
 * #GP here; any other fault is left to the CPU, with nothing done.
 */
static enum uprobe_x86_emulated uprobe_x86_emulate(const struct uprobe_x86_op *op,
						   struct pt_regs *regs)
{
	unsigned int word = uprobe_x86_word(op);
	unsigned long next = regs->ip + op->len;
	unsigned long new_ip = next, val;

	switch (op->emul) {
	case UPROBE_EMUL_NOP:
		break;
	case UPROBE_EMUL_JMP:
		new_ip = next + op->imm;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		break;
	case UPROBE_EMUL_JCC:
		if (uprobe_x86_cond(op->cc, regs->flags))
			new_ip = next + op->imm;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		break;
	case UPROBE_EMUL_LOOP:
		/* The counter is rcx (ecx in a compat task). */
		val = regs->cx;
		if (op->cc != 3)
			val = uprobe_x86_trunc(op, val - 1);
		if (uprobe_x86_loop_taken(op->cc, uprobe_x86_trunc(op, val),
					  regs->flags))
			new_ip = next + op->imm;
		/* The faulting loop leaves rcx as it was. */
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		regs->cx = val;
		break;
	case UPROBE_EMUL_CALL:
		new_ip = next + op->imm;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		val = uprobe_x86_trunc(op, regs->sp - word);
		if (uprobe_x86_put_word(op, val, uprobe_x86_trunc(op, next)))
			return UPROBE_X86_NOT_DONE;
		regs->sp = val;
		break;
	case UPROBE_EMUL_RET:
		/*
		 * 32-bit code addresses the stack by esp alone: the upper half
		 * of rsp may be anything after a far jump from 64-bit code.
		 */
		if (uprobe_x86_get_word(op, uprobe_x86_trunc(op, regs->sp), &new_ip))
			return UPROBE_X86_NOT_DONE;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		regs->sp = uprobe_x86_trunc(op, regs->sp + word + op->imm);
		break;
	case UPROBE_EMUL_PUSH:
		/* push %rsp pushes the value from before the push. */
		val = uprobe_x86_trunc(op, regs->sp - word);
		if (uprobe_x86_put_word(op, val, *uprobe_x86_gpr(regs, op->reg)))
			return UPROBE_X86_NOT_DONE;
		regs->sp = val;
		break;
	case UPROBE_EMUL_POP:
		if (uprobe_x86_get_word(op, uprobe_x86_trunc(op, regs->sp), &val))
			return UPROBE_X86_NOT_DONE;
		/* pop %rsp leaves the popped value, not the incremented one. */
		regs->sp = uprobe_x86_trunc(op, regs->sp + word);
		*uprobe_x86_gpr(regs, op->reg) = val;
		break;
	case UPROBE_EMUL_MOV:
		val = *uprobe_x86_gpr(regs, op->src);
		/* A 32-bit destination is zero-extended. */
		*uprobe_x86_gpr(regs, op->reg) = op->size == 8 ? val : (u32)val;
		break;
	case UPROBE_EMUL_ALU_SP:
		regs->sp = uprobe_x86_alu_sp(op->sub, regs->sp, (long)op->imm,
					     op->size, &regs->flags);
		break;
	case UPROBE_EMUL_LEA:
		val = uprobe_x86_address(op, regs, next);
		/* A 32-bit destination is zero-extended. */
		*uprobe_x86_gpr(regs, op->reg) = op->size == 8 ? val : (u32)val;
		break;
	case UPROBE_EMUL_MOV_IMM:
		/* Sign-extended to 64 bits, zero-extended from 32. */
		val = (long)op->imm;
		*uprobe_x86_gpr(regs, op->reg) = op->size == 8 ? val : (u32)val;
		break;
	case UPROBE_EMUL_MOV_MEM:
		if (!uprobe_x86_mov_mem(op, regs, next))
			return UPROBE_X86_NOT_DONE;
		break;
	case UPROBE_EMUL_JMP_IND:
		if (!uprobe_x86_branch_target(op, regs, next, &new_ip))
			return UPROBE_X86_NOT_DONE;
		break;
	case UPROBE_EMUL_CALL_IND:
		/* The target first: call *(%rsp) reads the old top. */
		if (!uprobe_x86_branch_target(op, regs, next, &val))
			return UPROBE_X86_NOT_DONE;
		if (put_user((u64)next, (u64 __user *)(regs->sp - 8)))
			return UPROBE_X86_NOT_DONE;
		regs->sp -= 8;
		new_ip = val;
		break;
	default:
		return UPROBE_X86_NOT_DONE;
	}
	regs->ip = uprobe_x86_trunc(op, new_ip);
	return UPROBE_X86_DONE;
}

/*
 * Emulate @op for a hit and report the step a debugger asked for.  Out of
 * line, so that the nop and push cases below do not pay for its registers.
 */
static noinline bool uprobe_x86_emulate_hit(const struct uprobe_x86_op *op,
					    struct pt_regs *regs)
{
	unsigned long next = regs->ip + op->len;

	switch (uprobe_x86_emulate(op, regs)) {
	case UPROBE_X86_NOT_DONE:
		return false;
	case UPROBE_X86_FAULTED:
		return true;	/* a faulting instruction ends no step */
	case UPROBE_X86_DONE:
		break;
	}
	if (regs->flags & X86_EFLAGS_TF)
		uprobe_x86_report_step(regs, test_thread_flag(TIF_BLOCKSTEP),
				       regs->ip != uprobe_x86_trunc(op, next));
	return true;
}

/*
 * A 64-bit push of a register or call, the other instructions that open
 * most functions, without uprobe_x86_emulate_hit()'s frame; false (and
 * nothing done) for anything else or when the push would fault, which
 * the full emulator then finds again.
 */
static __always_inline bool uprobe_x86_push64(const struct uprobe_x86_op *op,
					      struct pt_regs *regs)
{
	unsigned long next = regs->ip + op->len, new_ip = next, val;

	/*
	 * A call's target below 2^47 is canonical whatever the paging mode:
	 * no test of the mode here.  Others (a wrap, the top of a 5-level
	 * address space) go to the full emulator's exact test.
	 */
	if (op->emul == UPROBE_EMUL_PUSH) {
		val = *uprobe_x86_gpr(regs, op->reg);	/* %rsp: the old value */
	} else if (op->emul == UPROBE_EMUL_CALL) {
		new_ip += op->imm;
		if (new_ip >= BIT_ULL(47))
			return false;
		val = next;
	} else {
		return false;
	}
	if (put_user(val, (unsigned long __user *)(regs->sp - 8)))
		return false;
	regs->sp -= 8;
	regs->ip = new_ip;
	return true;
}

/*
 * The plan for the mode the thread runs in now, made afresh.  The plan a
 * probe keeps is for the mode of the first mm that mapped it, and the
 * hardware decides per instruction: a 32-bit program's probe first mapped
 * by a 64-bit process, a 64-bit process that far-jumps into 32-bit code.
 * Such hits pay a decode each.  Return: 0, or the analyser's refusal.
 */
static int uprobe_x86_this_mode(const u8 *insn, struct pt_regs *regs,
				struct uprobe_x86_op *op, u8 *ixol)
{
	const char *why;

	return uprobe_x86_analyze(insn, user_64bit_mode(regs), op, ixol, &why);
}

/* arch_uprobe_skip_sstep() for such a hit, out of the hot path's frame. */
static noinline bool uprobe_x86_skip_other_mode(struct arch_uprobe *aup,
						struct pt_regs *regs)
{
	struct uprobe_x86_op op;
	u8 ixol[MAX_UINSN_BYTES];

	if (uprobe_x86_this_mode(aup->insn, regs, &op, ixol) ||
	    op.emul == UPROBE_EMUL_NONE)
		return false;
	return uprobe_x86_emulate_hit(&op, regs);
}

/*
 * arch_uprobe_skip_sstep() past its fast path, in a frame of its own: 32-bit
 * code, a nop a debugger steps, every other emulated instruction.
 */
static noinline bool uprobe_x86_skip_sstep(struct arch_uprobe *aup,
					   struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	/* Decoded for the other mode: see uprobe_x86_this_mode(). */
	if (unlikely(op->is64 != user_64bit_mode(regs)))
		return uprobe_x86_skip_other_mode(aup, regs);
	if (op->emul == UPROBE_EMUL_NONE)
		return false;
	/*
	 * 32-bit code's nops, when no debugger steps (64-bit code's nops,
	 * pushes and calls do not come here: see arch_uprobe_skip_sstep()).
	 */
	if (op->emul == UPROBE_EMUL_NOP && !(regs->flags & X86_EFLAGS_TF)) {
		regs->ip = uprobe_x86_trunc(op, regs->ip + op->len);
		return true;
	}
	return uprobe_x86_emulate_hit(op, regs);
}

/*
 * A push or call in 64-bit code, not stepped by a debugger: in a frame of
 * its own, small enough for the hot path to jump to.  What it does not do
 * (a target it does not vouch for, a push that would fault) goes to the
 * full emulator, which finds it again.
 */
static noinline bool uprobe_x86_push64_hit(struct arch_uprobe *aup,
					   struct pt_regs *regs)
{
	return uprobe_x86_push64(&aup->op, regs) ||
	       uprobe_x86_emulate_hit(&aup->op, regs);
}

/**
 * arch_uprobe_skip_sstep() - emulate the probed instruction if we can
 * @aup: the probe
 * @regs: user registers, ip at the probed instruction
 *
 * Context: task context of the probed task, after the handlers ran.
 * Return: true when the instruction was emulated (@regs updated, no step
 * needed), false when the core must step it out of line.
 */
bool arch_uprobe_skip_sstep(struct arch_uprobe *aup, struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	/*
	 * What most probes sit on, in 64-bit code a debugger does not step:
	 * a nop (function entries patched for tracing, USDT sites, every hit
	 * through a jump stub) needs no registers saved and is done here; a
	 * push or a call (function entries) gets a small frame.  The rest
	 * goes to a frame of its own.
	 */
	if (op->is64 && user_64bit_mode(regs) &&
	    !(regs->flags & X86_EFLAGS_TF)) {
		if (op->emul == UPROBE_EMUL_NOP) {
			regs->ip += op->len;
			return true;
		}
		if (op->emul == UPROBE_EMUL_PUSH || op->emul == UPROBE_EMUL_CALL)
			return uprobe_x86_push64_hit(aup, regs);
	}
	return uprobe_x86_skip_sstep(aup, regs);
}

/*
 * Mark thread.trap_nr, so that a fault from here on shows (it writes its
 * own number there), and keep the value a signal frame should report.
 * Still marked from a run in the thread's own slot, whose fault or signal
 * did not come: the value kept then is the one to keep.
 */
static void uprobe_x86_mark_traps(struct arch_uprobe_task *at)
{
	if (current->thread.trap_nr != UPROBE_X86_STEPPING)
		at->saved_trap_nr = current->thread.trap_nr;
	current->thread.trap_nr = UPROBE_X86_STEPPING;
}

/*
 * Where a copy that runs without a step finds its scratch register's value
 * again: just below the 128-byte red zone, which the program may be using
 * (a leaf function's locals) while the area below it is anybody's (a
 * signal frame would go there).
 */
#define UPROBE_X86_SCRATCH_SAVE		(-136)
/* The most a memory operand spans (xsave of every component, AMX included). */
#define UPROBE_X86_MAX_OPERAND		SZ_16K

/**
 * arch_uprobe_direct_start() - the thread goes to run a copy without a step
 * @aup: the probe, for which arch_uprobe_direct_ok() said yes
 * @vaddr: its address
 * @regs: the thread's user registers at the hit
 *
 * A rip-relative copy addresses through its scratch register, loaded here
 * with the original next-ip as for a step; the register's own value is
 * stored where the copy's last instruction reloads it from (and kept for
 * arch_uprobe_direct_leave()).  A fault of the copy must be told from a
 * signal that merely arrived while the thread was in its slot: see
 * arch_uprobe_direct_trapped().
 *
 * Return: true, or false to step instead (the stack cannot be written).
 */
bool arch_uprobe_direct_start(struct arch_uprobe *aup, unsigned long vaddr,
			      struct pt_regs *regs)
{
	struct arch_uprobe_task *at = &current->utask->autask;
	const struct uprobe_x86_op *op = &aup->op;

	if (op->fix & UPROBE_FIX_SCRATCH) {
		unsigned long *scratch = uprobe_x86_gpr(regs, op->scratch);
		unsigned long ea = vaddr + op->len + op->imm;
		unsigned long __user *save;

		save = (unsigned long __user *)(regs->sp + UPROBE_X86_SCRATCH_SAVE);
		/*
		 * The operand itself may be there (data below the stack
		 * pointer): the copy would change or read our saved value,
		 * not the program's.  Step it instead.
		 */
		if (ea < (unsigned long)save + sizeof(*save) &&
		    ea + UPROBE_X86_MAX_OPERAND > (unsigned long)save)
			return false;
		if (put_user(*scratch, save))
			return false;
		at->saved_scratch = *scratch;
		*scratch = vaddr + op->len;
	}
	uprobe_x86_mark_traps(at);
	return true;
}

/**
 * arch_uprobe_direct_leave() - the thread leaves its slot before the end
 * @aup: the probe whose copy the slot holds
 * @regs: the thread's user registers, ip in the slot
 *
 * Undoes what arch_uprobe_direct_start() did to the registers, wherever
 * in the slot the thread is: the copy does not write the scratch register,
 * and once the copy's reload ran it holds the same value anyway.
 */
void arch_uprobe_direct_leave(struct arch_uprobe *aup, struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	if (op->fix & UPROBE_FIX_SCRATCH)
		*uprobe_x86_gpr(regs, op->scratch) =
			current->utask->autask.saved_scratch;
}

/**
 * arch_uprobe_direct_trapped() - did a trap come since the last direct start?
 *
 * If none did, thread.trap_nr gets its value back, for the signal frame.
 *
 * Context: get_signal() of a thread that owns a slot.
 * Return: true when a fault (whose signal is pending) came since.
 */
bool arch_uprobe_direct_trapped(void)
{
	if (current->thread.trap_nr != UPROBE_X86_STEPPING)
		return true;
	current->thread.trap_nr = current->utask->autask.saved_trap_nr;
	return false;
}

/**
 * arch_uprobe_direct_ok() - may this hit run the copy without a step?
 * @aup: the probe
 * @regs: user registers at the hit
 *
 * Only when the copy can repair everything itself, ip by the jump back and
 * a scratch register by reloading it (the plan's @direct), in 64-bit code,
 * and nobody single-steps the thread.
 *
 * Return: true when kernel/events/uprobes_direct.c may run it.
 */
bool arch_uprobe_direct_ok(struct arch_uprobe *aup, struct pt_regs *regs)
{
	return aup->op.direct && user_64bit_mode(regs) &&
	       !(regs->flags & X86_EFLAGS_TF);
}

/**
 * arch_uprobe_direct_code() - the copy and the jump back
 * @aup: a probe for which arch_uprobe_direct_ok() said yes
 * @vaddr: its address
 * @code: UPROBE_XOL_SLOT_BYTES to fill
 *
 * A copy with a scratch register then reloads it, "mov -136(%rsp), %reg"
 * (see arch_uprobe_direct_start()): flags untouched.  Then "jmp *0(%rip)"
 * and the absolute address after it: the slot is too far from most code
 * for a rel32.
 *
 * Return: the length written.
 */
unsigned int arch_uprobe_direct_code(struct arch_uprobe *aup,
				     unsigned long vaddr, u8 *code)
{
	static const u8 jmp_abs[] = { 0xff, 0x25, 0, 0, 0, 0 };
	/* REX.W 8b, ModRM mod=10 rm=100 (SIB), SIB base=rsp, disp32 */
	u8 reload[] = { 0x48, 0x8b, 0x84, 0x24, 0, 0, 0, 0 };
	const struct uprobe_x86_op *op = &aup->op;
	u64 next = vaddr + op->len;
	unsigned int len = op->xol_len;

	BUILD_BUG_ON(MAX_UINSN_BYTES + sizeof(reload) + sizeof(jmp_abs) +
		     sizeof(next) > UPROBE_XOL_SLOT_BYTES);
	memcpy(code, aup->ixol, len);
	if (op->fix & UPROBE_FIX_SCRATCH) {
		/* The scratch is one of rax..rdi: no REX.R needed. */
		reload[2] |= (op->scratch & 7) << 3;
		put_unaligned_le32(UPROBE_X86_SCRATCH_SAVE, reload + 4);
		memcpy(code + len, reload, sizeof(reload));
		len += sizeof(reload);
	}
	memcpy(code + len, jmp_abs, sizeof(jmp_abs));
	len += sizeof(jmp_abs);
	memcpy(code + len, &next, sizeof(next));
	return len + sizeof(next);
}

/**
 * arch_uprobe_direct_next() - where the jump back after the copy goes
 * @aup: the probe whose copy ran
 * @vaddr: its address
 *
 * Return: the address of the instruction after the original.
 */
unsigned long arch_uprobe_direct_next(struct arch_uprobe *aup,
				      unsigned long vaddr)
{
	return vaddr + aup->op.len;
}

/**
 * arch_uprobe_analyze_insn() - make the plan for a new probe
 * @aup: the probe; @aup->insn holds the original bytes
 * @mm: an mm that maps the probed file, telling 64-bit from compat code
 * @addr: the probe's address in @mm (for the message only)
 *
 * Fills @aup->op and @aup->ixol.  A refusal is logged with its reason.
 *
 * Context: process context, may sleep.
 * Return: 0, -ENOTSUPP for an instruction we refuse, -EINVAL for bytes
 * that are not an instruction.
 */
int arch_uprobe_analyze_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			     unsigned long addr)
{
	bool is64 = IS_ENABLED(CONFIG_X86_64) && is_64bit_mm(mm);
	const char *why;
	int err;

	/*
	 * The plan is for this mm's mode; a thread running the code in the
	 * other mode gets a plan of its own at each hit (see
	 * uprobe_x86_this_mode()).
	 */
	err = uprobe_x86_analyze(aup->insn, is64, &aup->op, aup->ixol, &why);
	if (err)
		pr_info("cannot probe %s instruction %*ph at 0x%lx: %s\n",
			is64 ? "64-bit" : "32-bit",
			aup->op.len ?: MAX_INSN_SIZE, aup->insn,
			addr, why);
	return err;
}

/**
 * arch_uprobe_pre_xol() - prepare to step the slot copy
 * @aup: the probe
 * @regs: user registers; the core has pointed ip at the slot
 *
 * The core fills the slot from @aup after this: a thread in the other mode
 * than the plan's gets this mode's plan, copy included.
 *
 * Context: task context of the probed task.
 * Return: 0; -EINVAL for a plan that has no out-of-line form, -ENOEXEC
 * for an instruction refused in the thread's mode, -ERANGE for 32-bit
 * code whose slot is above 4 GiB.
 */
int arch_uprobe_pre_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;
	const struct uprobe_x86_op *op = &aup->op;

	/* @aup is the thread's own copy: it may take this mode's plan. */
	if (op->is64 != user_64bit_mode(regs) &&
	    uprobe_x86_this_mode(aup->insn, regs, &aup->op, aup->ixol))
		return -ENOEXEC;
	if (!uprobe_x86_has_xol_form(op))
		return -EINVAL;
	/*
	 * 32-bit code keeps only eip.  A 64-bit process that far-jumps to
	 * the compat code segment has its "[uprobes]" area as high as a
	 * 64-bit mm can address: IRET to such a slot in 32-bit mode faults
	 * (#GP beyond the segment limit; QEMU's TCG runs the truncated eip
	 * instead), and the program would die of a SIGSEGV of ours.  The
	 * core takes the breakpoint out of this mm instead, and the thread
	 * runs its own instruction.
	 */
	if (!op->is64 &&
	    utask->xol_vaddr + UPROBE_XOL_SLOT_BYTES - 1 > U32_MAX)
		return -ERANGE;

	regs->ip = utask->xol_vaddr;
	uprobe_x86_mark_traps(at);

	if (op->fix & UPROBE_FIX_SCRATCH) {
		unsigned long *scratch = uprobe_x86_gpr(regs, op->scratch);

		at->saved_scratch = *scratch;
		*scratch = utask->vaddr + op->len;
	}

	/*
	 * Branch stepping would let our step run on to the next branch:
	 * switch it off for the step, post_xol decides whether it resumes.
	 */
	at->saved_tf = regs->flags & X86_EFLAGS_TF;
	at->saved_blockstep = test_thread_flag(TIF_BLOCKSTEP);
	if (at->saved_blockstep)
		set_task_blockstep(current, false);
	if (op->fix & UPROBE_FIX_INT3_STOP)
		at->int3_stop_ip = utask->xol_vaddr + op->len +
				   UPROBE_SWBP_INSN_SIZE;
	else
		regs->flags |= X86_EFLAGS_TF;
	return 0;
}

/* Undo what pre_xol did to registers, whatever became of the step. */
static void uprobe_x86_restore(struct arch_uprobe_task *at,
			       const struct uprobe_x86_op *op,
			       struct pt_regs *regs, bool keep_tf)
{
	at->int3_stop_ip = 0;
	if (op->fix & UPROBE_FIX_SCRATCH)
		*uprobe_x86_gpr(regs, op->scratch) = at->saved_scratch;
	if (!keep_tf) {
		regs->flags &= ~X86_EFLAGS_TF;
		if (at->saved_tf)
			regs->flags |= X86_EFLAGS_TF;
	}
}

/**
 * arch_uprobe_post_xol() - finish a completed step of the slot copy
 * @aup: the probe
 * @regs: user registers, ip where the copy stopped
 *
 * Context: task context of the probed task.
 * Return: 0, or -EFAULT if a return address could not be corrected.
 */
int arch_uprobe_post_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;
	const struct uprobe_x86_op *op = &aup->op;
	unsigned long next = uprobe_x86_trunc(op, utask->vaddr + op->len);
	bool branched = true;
	int err = 0;

	current->thread.trap_nr = at->saved_trap_nr;
	uprobe_x86_restore(at, op, regs, op->fix & UPROBE_FIX_POPF);

	if (op->fix & UPROBE_FIX_IP) {
		/*
		 * Stopped at the end of the copy, after the int3 that ends
		 * a rep string instruction, or (under somebody else's TF)
		 * on the copy itself between two iterations.
		 */
		unsigned long off = regs->ip - utask->xol_vaddr;

		if (off > op->len)
			off = op->len;
		regs->ip = utask->vaddr + off;
		branched = false;
	} else if (op->fix & UPROBE_FIX_CALL_REL) {
		regs->ip = uprobe_x86_trunc(op, next + op->imm);
		err = uprobe_x86_put_word(op, regs->sp, next);
	} else if (op->fix & UPROBE_FIX_CALL) {
		/* Indirect call: ip is its target already. */
		err = uprobe_x86_put_word(op, regs->sp, next);
	}
	/* Else an indirect jmp or a ret: ip is the target already. */

	if (op->fix & UPROBE_FIX_PUSHF && !at->saved_tf) {
		u16 image;

		/* TF is bit 8: in the low word of any pushf image. */
		if (!get_user(image, (u16 __user *)regs->sp))
			err = put_user(image & ~X86_EFLAGS_TF,
				       (u16 __user *)regs->sp);
		else
			err = -EFAULT;
	}

	if (at->saved_tf)
		uprobe_x86_report_step(regs, at->saved_blockstep, branched);
	else if (at->saved_blockstep)
		set_task_blockstep(current, true);
	return err;
}

/**
 * arch_uprobe_trap_not_ours() - the program's own int3 was hit
 * @regs: user registers, ip after the int3
 *
 * The die notifier took the trap before do_int3_user() could record it:
 * record it as that would, so the SIGTRAP frame shows trap 3, error 0
 * rather than the numbers of the task's last fault.
 */
void arch_uprobe_trap_not_ours(struct pt_regs *regs)
{
	current->thread.trap_nr = X86_TRAP_BP;
	current->thread.error_code = 0;
}

/**
 * arch_uprobe_other_trap_insn() - did the program's "int $3" trap?
 * @regs: user registers, ip just past the instruction that trapped
 *
 * "int $3" (cd 03) raises the same #BP as int3 with ip past its two
 * bytes; no error code or flag tells them apart, only the bytes do.
 *
 * Return: true when cd 03 ends at ip.
 */
bool arch_uprobe_other_trap_insn(struct pt_regs *regs)
{
	u8 insn[2];

	if (copy_from_user(insn, (void __user *)(regs->ip - 2), sizeof(insn)))
		return false;
	return insn[0] == 0xcd && insn[1] == X86_TRAP_BP;
}

/**
 * arch_uprobe_xol_was_trapped() - did the stepped copy fault?
 * @t: the stepping task (current)
 *
 * Return: true when a fault (whose signal is pending) ended the step.
 */
bool arch_uprobe_xol_was_trapped(struct task_struct *t)
{
	return t->thread.trap_nr != UPROBE_X86_STEPPING;
}

/**
 * arch_uprobe_abort_xol() - give up a step that did not complete
 * @aup: the probe
 * @regs: user registers
 *
 * Puts ip back on the original instruction, so that a pending fault
 * signal is delivered as if that instruction had faulted in place.
 *
 * Context: task context of the probed task.
 */
void arch_uprobe_abort_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;

	/* A fault's trap number stays: the signal frame reports it. */
	if (current->thread.trap_nr == UPROBE_X86_STEPPING)
		current->thread.trap_nr = at->saved_trap_nr;
	uprobe_x86_restore(at, &aup->op, regs, false);
	if (at->saved_blockstep)
		set_task_blockstep(current, true);
	regs->ip = utask->vaddr;
}

/*
 * An int3 right after a rep string instruction in the slot ends its step.
 * (utask->auprobe is only meant for the handlers: keep our own record.)
 */
static bool uprobe_x86_int3_ends_step(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	return utask && utask->autask.int3_stop_ip &&
	       regs->ip == utask->autask.int3_stop_ip;
}

/**
 * arch_uprobe_exception_notify() - the core's die notifier, x86 side
 * @self: the notifier block
 * @val: DIE_INT3 or DIE_DEBUG (others are ignored)
 * @data: &struct die_args; for DIE_DEBUG its err points at the DR6 value
 *
 * Context: exception entry from user mode, interrupts off.
 * Return: NOTIFY_STOP when the trap was a breakpoint hit or the end of a
 * step of ours, NOTIFY_DONE otherwise.
 */
int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs = args->regs;
	unsigned long *dr6;

	if (!regs || !user_mode(regs))
		return NOTIFY_DONE;

	switch (val) {
	case DIE_INT3:
		/*
		 * do_int3_user() gave the trap to uprobe_breakpoint_trap()
		 * first: what comes here is a trap during a step.
		 */
		if (uprobe_x86_int3_ends_step(regs) &&
		    uprobe_post_sstep_notifier(regs))
			return NOTIFY_STOP;
		if (uprobe_pre_sstep_notifier(regs))
			return NOTIFY_STOP;
		break;
	case DIE_DEBUG:
		dr6 = (unsigned long *)args->err;
		if ((*dr6 & DR_STEP) && uprobe_post_sstep_notifier(regs)) {
			/* Consumed: post_xol reports a step trap if one is due. */
			*dr6 &= ~DR_STEP;
			return NOTIFY_STOP;
		}
		/* A step that took a jump site's jump: the step trap goes on. */
		if (*dr6 & DR_STEP)
			uprobe_jump_stepped(regs);
		break;
	}
	return NOTIFY_DONE;
}

/**
 * arch_uretprobe_hijack_return_addr() - divert a function's return
 * @trampoline_vaddr: where the function shall return to instead
 * @regs: user registers at the function's first instruction, so that the
 *	return address is the word at sp
 *
 * Context: task context of the probed task.
 * Return: the original return address, or -1 if the stack could not be
 * read or written (then it is unchanged), or if the trampoline is out of
 * the code's reach.
 */
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs)
{
	bool is64 = user_64bit_mode(regs);
	/* 32-bit code's stack is at esp, whatever rsp's upper half holds. */
	void __user *slot = (void __user *)(is64 ? regs->sp : (u32)regs->sp);
	unsigned long orig;

	/*
	 * 32-bit code in a 64-bit process (see arch_uprobe_pre_xol()): its
	 * ret would keep the low half of a trampoline above 4 GiB and jump
	 * there.  The return is left alone and not probed.
	 */
	if (!is64 && trampoline_vaddr > U32_MAX) {
		pr_warn_ratelimited("pid %d: 32-bit code cannot return through the trampoline at %#lx, return not probed\n",
				    current->pid, trampoline_vaddr);
		return -1;
	}

	/* One user access window of the word's size, not two copies. */
	if (!user_access_begin(slot, is64 ? 8 : 4))
		return -1;
	if (is64) {
		u64 v;

		unsafe_get_user(v, (u64 __user *)slot, fault);
		unsafe_put_user((u64)trampoline_vaddr, (u64 __user *)slot, fault);
		orig = v;
	} else {
		u32 v;

		unsafe_get_user(v, (u32 __user *)slot, fault);
		unsafe_put_user((u32)trampoline_vaddr, (u32 __user *)slot, fault);
		orig = v;
	}
	user_access_end();
	return orig;
fault:
	user_access_end();
	return -1;
}

/**
 * arch_uretprobe_is_alive() - is a pending return still on the stack?
 * @ret: the pending return, with the sp recorded when it was hijacked
 *	(pointing at the return address)
 * @ctx: where we are: a new function entry (call), a chained entry
 *	reusing the same return address, or a return through the trampoline
 * @regs: user registers now
 *
 * The stack grows down.  At a call, sp points at the return address just
 * pushed, so a frame whose address is at sp or below was left (longjmp)
 * and overwritten.  At a chained entry or a return, the frame at sp itself
 * is still the live one (its address is the one in use, or the one just
 * popped by the ret that brought us here is the frame above).
 *
 * Return: true when the frame of @ret is still live.
 */
bool arch_uretprobe_is_alive(struct return_instance *ret, enum rp_check ctx,
			     struct pt_regs *regs)
{
	/*
	 * 32-bit code in a 64-bit process runs on a stack of its own, whose
	 * esp says nothing of the 64-bit frames pending (no 32-bit return is
	 * probed there: see arch_uretprobe_hijack_return_addr()).  Dropping
	 * them would send the thread SIGILL at their returns.
	 */
	if (!user_64bit_mode(regs) && is_64bit_mm(current->mm))
		return true;
	if (ctx == RP_CHECK_CALL)
		return regs->sp < ret->stack;
	return regs->sp <= ret->stack;
}

/*
 * The return trampoline of 64-bit tasks: save the three registers the
 * syscall instruction destroys, then enter the kernel by the uretprobe
 * syscall, which puts them back and returns to the real return address.
 * The stack below sp is free at this point: the function that returned
 * had its frame there.  If the syscall comes back here, it did not run
 * (a ptracer skipped it, syscall user dispatch or a seccomp filter took
 * it): the breakpoint after it finishes the return instead.
 */
#define UPROBE_TRAMP_SYSCALL_END	11	/* where syscall leaves ip */

static const u8 uprobe_syscall_tramp[] = {
	0x50,					/* push %rax */
	0x51,					/* push %rcx */
	0x41, 0x53,				/* push %r11 */
	0xb8, __NR_uretprobe & 0xff,		/* mov $__NR_uretprobe, %eax */
	(__NR_uretprobe >> 8) & 0xff, 0, 0,
	0x0f, 0x05,				/* syscall */
	UPROBE_SWBP_INSN,			/* int3 */
};

/* What the trampoline pushed, lowest address first. */
struct uprobe_tramp_frame {
	unsigned long	r11;
	unsigned long	cx;
	unsigned long	ax;
};

/**
 * arch_uretprobe_syscall_trampoline() - the x86_64 syscall trampoline
 * @len: set to its length
 *
 * Return: its code, for XOL slot 1.
 */
const void *arch_uretprobe_syscall_trampoline(unsigned int *len)
{
	BUILD_BUG_ON(sizeof(uprobe_syscall_tramp) - 1 != UPROBE_TRAMP_SYSCALL_END);
	*len = sizeof(uprobe_syscall_tramp);
	return uprobe_syscall_tramp;
}

/**
 * arch_uretprobe_may_use_syscall() - may this return use the syscall?
 * @regs: user registers at the probed function's entry
 *
 * Not for 32-bit code (it has no such syscall), nor for a task whose
 * syscalls a ptracer watches or emulates (it would see an extra syscall)
 * or that syscall user dispatch sends to a signal handler (the handler
 * would see it).  Seccomp filters let the trampoline's syscall through.
 *
 * Return: true when the syscall trampoline may be used.
 */
bool arch_uretprobe_may_use_syscall(struct pt_regs *regs)
{
	return user_64bit_mode(regs) &&
	       !test_syscall_work(SYSCALL_TRACE) &&
	       !test_syscall_work(SYSCALL_EMU) &&
	       !test_syscall_work(SYSCALL_USER_DISPATCH);
}

/**
 * arch_uretprobe_syscall_unwind() - restore what the trampoline saved
 * @regs: user registers in the syscall trampoline, after its pushes
 *
 * Return: 0, or -EFAULT when the stack cannot be read (unchanged then).
 */
int arch_uretprobe_syscall_unwind(struct pt_regs *regs)
{
	struct uprobe_tramp_frame __user *f = (void __user *)regs->sp;
	unsigned long r11, cx, ax;

	/* Three loads in one user access window, on every return. */
	if (!user_access_begin(f, sizeof(*f)))
		return -EFAULT;
	unsafe_get_user(r11, &f->r11, fault);
	unsafe_get_user(cx, &f->cx, fault);
	unsafe_get_user(ax, &f->ax, fault);
	user_access_end();
	regs->r11 = r11;
	regs->cx = cx;
	regs->ax = ax;
	regs->sp += sizeof(*f);
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/*
 * The syscall trampoline's way into the kernel.  Called from anywhere
 * else, it does nothing, as on a kernel without it.
 */
SYSCALL_DEFINE0(uretprobe)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long tramp = uprobe_get_syscall_trampoline_vaddr();

	if (tramp == -1UL || regs->ip != tramp + UPROBE_TRAMP_SYSCALL_END)
		return -ENOSYS;
	if (arch_uretprobe_syscall_unwind(regs)) {
		force_sig(SIGSEGV);
		return -EFAULT;
	}
	/*
	 * ax now holds the function's return value: with orig_ax >= 0 a
	 * value of -ERESTARTSYS & co. would have the syscall restarted.
	 */
	regs->orig_ax = -1;
	regs->ip = tramp;
	uprobe_handle_trampoline(regs);
	return regs->ax;
}
