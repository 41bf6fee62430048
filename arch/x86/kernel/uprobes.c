// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes on x86: the part that touches registers and user memory.
 *
 * A hit is emulated when the plan of uprobe_x86_analyze() allows it and
 * nothing faults; else the copy is stepped out of line under TF, or run
 * without a step in a slot the thread owns (arch_uprobe_direct_*()).  A
 * copy that faults is given up: ip goes back to the original, so the
 * signal looks as if the original had faulted.
 *
 * thread.trap_nr tells whether a fault ended a step: pre_xol and a direct
 * start set it to UPROBE_X86_STEPPING, every user fault overwrites it,
 * and post_xol (or the next get_signal() after a direct run) restores it.
 * A child forked in between reports trapno -1 until it faults itself.
 *
 * Somebody else's single-stepping (ptrace, the program's own TF) is kept:
 * an emulated or stepped instruction reports the trap the original would.
 */

#define pr_fmt(fmt) "uprobes/x86: " fmt

#include <linux/kdebug.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
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
 * Where general register @n (ModRM numbering) is in struct pt_regs.  Not
 * pt_regs_offset(): an inline table costs a load on the hit path, that
 * one a call.
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

/* One user access of 8 (@is64) or 4 bytes. */
static __always_inline int uprobe_x86_put(bool is64, unsigned long addr,
					  unsigned long val)
{
	if (is64)
		return put_user((u64)val, (u64 __user *)addr);
	return put_user((u32)val, (u32 __user *)addr);
}

/* As uprobe_x86_put(); @val is zero-extended, and untouched on a fault. */
static __always_inline int uprobe_x86_get(bool is64, unsigned long addr,
					  unsigned long *val)
{
	u64 v64;
	u32 v32;

	if (is64) {
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
 * Report the trap a single-stepped instruction raises.  Under branch
 * stepping only a control transfer traps, and the CPU then ends it.
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
 * A 64-bit branch to a non-canonical address raises #GP at the branch,
 * before any push or pop.  32-bit targets wrap, as ip does.
 */
static bool uprobe_x86_bad_target(const struct uprobe_x86_op *op,
				  unsigned long ip)
{
	return op->is64 && !__is_canonical_address(ip, __VIRTUAL_MASK_SHIFT + 1);
}

/* The address of a memory operand before any segment base; @next: rip. */
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
/* The linear address of a memory operand, unless a watchpoint or #AC is due. */
static bool uprobe_x86_mem_addr(const struct uprobe_x86_op *op,
				struct pt_regs *regs, unsigned long next,
				unsigned int size, unsigned long *addr)
{
	if (this_cpu_read(cpu_dr7) & DR_GLOBAL_ENABLE_MASK)
		return false;
	*addr = uprobe_x86_address(op, regs, next);
	if (op->seg == UPROBE_X86_SEG_FS)
		*addr += x86_fsbase_read_task(current);
	else if (op->seg == UPROBE_X86_SEG_GS)
		*addr += x86_gsbase_read_task(current);
	return !((regs->flags & X86_EFLAGS_AC) && (*addr & (size - 1)));
}

/* UPROBE_EMUL_MOV_MEM; false, with nothing done, if it would fault. */
static bool uprobe_x86_mov_mem(const struct uprobe_x86_op *op,
			       struct pt_regs *regs, unsigned long next)
{
	unsigned long *reg = uprobe_x86_gpr(regs, op->reg);
	unsigned long addr;

	if (!uprobe_x86_mem_addr(op, regs, next, op->size, &addr))
		return false;
	if (op->store)
		return !uprobe_x86_put(op->size == 8, addr, *reg);
	return !uprobe_x86_get(op->size == 8, addr, reg);
}

/* An indirect branch's target; false if its load faults or it is bad. */
static bool uprobe_x86_branch_target(const struct uprobe_x86_op *op,
				     struct pt_regs *regs, unsigned long next,
				     unsigned long *target)
{
	unsigned long addr, v;

	if (!op->mem)
		v = *uprobe_x86_gpr(regs, op->src);
	else if (!uprobe_x86_mem_addr(op, regs, next, 8, &addr) ||
		 uprobe_x86_get(true, addr, &v))
		return false;
	if (uprobe_x86_bad_target(op, v))
		return false;
	*target = v;
	return true;
}
#endif

enum uprobe_x86_emulated {
	UPROBE_X86_NOT_DONE,	/* nothing done: the CPU must run it */
	UPROBE_X86_DONE,	/* its effect is in regs */
	UPROBE_X86_FAULTED,	/* it raised its fault, regs untouched */
};

/* What the CPU does for a #GP in user mode. */
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
	unsigned int word = op->is64 ? 8 : 4;
	unsigned long next = regs->ip + op->len;
	unsigned long new_ip = next, val;

	switch (op->emul) {
	case UPROBE_EMUL_NOP:
		break;
	case UPROBE_EMUL_JMP:
	case UPROBE_EMUL_JCC:
		if (op->emul == UPROBE_EMUL_JMP ||
		    uprobe_x86_cond(op->cc, regs->flags))
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
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		regs->cx = val;
		break;
	case UPROBE_EMUL_CALL:
		new_ip = next + op->imm;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		val = uprobe_x86_trunc(op, regs->sp - word);
		if (uprobe_x86_put(op->is64, val, uprobe_x86_trunc(op, next)))
			return UPROBE_X86_NOT_DONE;
		regs->sp = val;
		break;
	case UPROBE_EMUL_RET:
		/* 32-bit code addresses its stack by esp alone. */
		if (uprobe_x86_get(op->is64, uprobe_x86_trunc(op, regs->sp),
				   &new_ip))
			return UPROBE_X86_NOT_DONE;
		if (uprobe_x86_bad_target(op, new_ip))
			return uprobe_x86_raise_gp();
		regs->sp = uprobe_x86_trunc(op, regs->sp + word + op->imm);
		break;
	case UPROBE_EMUL_PUSH:
		/* push %rsp pushes the value from before the push. */
		val = uprobe_x86_trunc(op, regs->sp - word);
		if (uprobe_x86_put(op->is64, val, *uprobe_x86_gpr(regs, op->reg)))
			return UPROBE_X86_NOT_DONE;
		regs->sp = val;
		break;
	case UPROBE_EMUL_POP:
		if (uprobe_x86_get(op->is64, uprobe_x86_trunc(op, regs->sp), &val))
			return UPROBE_X86_NOT_DONE;
		/* pop %rsp leaves the popped value, not the incremented one. */
		regs->sp = uprobe_x86_trunc(op, regs->sp + word);
		*uprobe_x86_gpr(regs, op->reg) = val;
		break;
	case UPROBE_EMUL_MOV:
	case UPROBE_EMUL_LEA:
	case UPROBE_EMUL_MOV_IMM:
		if (op->emul == UPROBE_EMUL_MOV)
			val = *uprobe_x86_gpr(regs, op->src);
		else if (op->emul == UPROBE_EMUL_LEA)
			val = uprobe_x86_address(op, regs, next);
		else
			val = (long)op->imm;
		/* A 32-bit destination is zero-extended. */
		*uprobe_x86_gpr(regs, op->reg) = op->size == 8 ? val : (u32)val;
		break;
	case UPROBE_EMUL_ALU_SP:
		regs->sp = uprobe_x86_alu_sp(op->sub, regs->sp, (long)op->imm,
					     op->size, &regs->flags);
		break;
#ifdef CONFIG_X86_64	/* planned for 64-bit code only */
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
		if (!uprobe_x86_branch_target(op, regs, next, &val) ||
		    uprobe_x86_put(true, regs->sp - 8, next))
			return UPROBE_X86_NOT_DONE;
		regs->sp -= 8;
		new_ip = val;
		break;
#endif
	default:
		return UPROBE_X86_NOT_DONE;
	}
	regs->ip = uprobe_x86_trunc(op, new_ip);
	return UPROBE_X86_DONE;
}

/* Emulate @op for a hit and report the step a debugger asked for. */
static noinline bool uprobe_x86_emulate_hit(const struct uprobe_x86_op *op,
					    struct pt_regs *regs)
{
	unsigned long next = regs->ip + op->len;
	enum uprobe_x86_emulated done = uprobe_x86_emulate(op, regs);

	if (done != UPROBE_X86_DONE)
		return done == UPROBE_X86_FAULTED;	/* a fault ends no step */
	if (regs->flags & X86_EFLAGS_TF)
		uprobe_x86_report_step(regs, test_thread_flag(TIF_BLOCKSTEP),
				       regs->ip != uprobe_x86_trunc(op, next));
	return true;
}

/*
 * A 64-bit push of a register, or a call to below 2^47 (canonical in any
 * paging mode); false, with nothing done, for anything else or a fault.
 */
static __always_inline bool uprobe_x86_push64(const struct uprobe_x86_op *op,
					      struct pt_regs *regs)
{
	unsigned long next = regs->ip + op->len, new_ip = next, val;

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
 * A plan for the mode the thread runs in now.  A probe's plan is for the
 * mode of the first mm that mapped it, but the CPU decides per instruction
 * (a 32-bit program probed via a 64-bit mm, a far jump to 32-bit code).
 */
static int uprobe_x86_this_mode(const u8 *insn, struct pt_regs *regs,
				struct uprobe_x86_op *op, u8 *ixol)
{
	const char *why;

	return uprobe_x86_analyze(insn, user_64bit_mode(regs), op, ixol, &why);
}

/* A plan made for the other mode: emulated from a plan for this one. */
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
 * arch_uprobe_skip_sstep() beyond its fast path.  The other mode's plan
 * has a frame of its own: here it would cost every hit a larger one.
 */
static noinline bool uprobe_x86_skip_sstep(struct arch_uprobe *aup,
					   struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	if (unlikely(op->is64 != user_64bit_mode(regs)))
		return uprobe_x86_skip_other_mode(aup, regs);
	if (op->emul == UPROBE_EMUL_NONE)
		return false;
	if (op->emul == UPROBE_EMUL_NOP && !(regs->flags & X86_EFLAGS_TF)) {
		regs->ip = uprobe_x86_trunc(op, regs->ip + op->len);
		return true;
	}
	return uprobe_x86_emulate_hit(op, regs);
}

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
 * Context: the hit in current, after the handlers ran.
 * Return: true when it was emulated (no step needed), false to step it.
 */
bool arch_uprobe_skip_sstep(struct arch_uprobe *aup, struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	/* The common probes: a nop, push or call of 64-bit code not stepped. */
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

/* Mark thread.trap_nr, keeping its value unless a direct run marked it. */
static void uprobe_x86_mark_traps(struct arch_uprobe_task *at)
{
	if (current->thread.trap_nr != UPROBE_X86_STEPPING)
		at->saved_trap_nr = current->thread.trap_nr;
	current->thread.trap_nr = UPROBE_X86_STEPPING;
}

/* A direct run saves the scratch register just below the red zone. */
#define UPROBE_X86_SCRATCH_SAVE		(-136)
/* The most a memory operand spans (xsave of every component). */
#define UPROBE_X86_MAX_OPERAND		SZ_16K

/**
 * arch_uprobe_direct_start() - the thread goes to run a copy without a step
 * @aup: the probe, for which arch_uprobe_direct_ok() said yes
 * @vaddr: its address
 * @regs: the thread's user registers at the hit
 *
 * Context: the hit in current.
 * Return: true, or false to step instead.
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
		/* The copy's operand may overlap the save slot: step it. */
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
 * Restores the scratch register: the copy does not write it, and the
 * reload gives it that value.
 *
 * Context: get_signal() of current.
 */
void arch_uprobe_direct_leave(struct arch_uprobe *aup, struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	if (op->fix & UPROBE_FIX_SCRATCH)
		*uprobe_x86_gpr(regs, op->scratch) =
			current->utask->autask.saved_scratch;
}

/**
 * arch_uprobe_direct_trapped() - did a fault come since the last direct start?
 *
 * Context: get_signal() of current, which owns a slot.
 * Return: true when a fault (whose signal is pending) came since; else
 * false, with thread.trap_nr restored for the signal frame.
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
 * Context: the hit in current.
 * Return: true for a plan marked @direct, in 64-bit code nobody steps.
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
 * The copy; "mov -136(%rsp), %scratch" if it has a scratch register (flags
 * untouched); "jmp *0(%rip)" and the absolute next-ip (no rel32 reaches).
 *
 * Context: any.
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
 * Context: any.
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
 * @addr: the probe's address in @mm, for the message
 *
 * Fills @aup->op and @aup->ixol, or logs why the instruction is refused.
 *
 * Context: process context.
 * Return: 0, -ENOTSUPP for a refused instruction, -EINVAL for bytes that
 * do not decode.
 */
int arch_uprobe_analyze_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			     unsigned long addr)
{
	bool is64 = IS_ENABLED(CONFIG_X86_64) && is_64bit_mm(mm);
	const char *why;
	int err;

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
 * @aup: the thread's copy of the probe; takes this mode's plan if need be
 * @regs: user registers; the core has pointed ip at the slot
 *
 * Context: the hit in current, before the core fills the slot from @aup.
 * Return: 0; -EINVAL for a plan without an out-of-line form, -ENOEXEC for
 * an instruction refused in the thread's mode, -ERANGE for 32-bit code
 * whose slot is above 4 GiB.
 */
int arch_uprobe_pre_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;
	const struct uprobe_x86_op *op = &aup->op;

	if (op->is64 != user_64bit_mode(regs) &&
	    uprobe_x86_this_mode(aup->insn, regs, &aup->op, aup->ixol))
		return -ENOEXEC;
	if (!uprobe_x86_has_xol_form(op))
		return -EINVAL;
	/* 32-bit code keeps only eip: IRET to a slot above 4 GiB faults. */
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

	/* Branch stepping would run on to the next branch: off for the step. */
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
 * Context: current, on its way back to user space.
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
		/* At the end of the copy, past its int3, or inside a rep. */
		regs->ip = utask->vaddr + min_t(unsigned long,
						regs->ip - utask->xol_vaddr,
						op->len);
		branched = false;
	} else if (op->fix & (UPROBE_FIX_CALL | UPROBE_FIX_CALL_REL)) {
		if (op->fix & UPROBE_FIX_CALL_REL)
			regs->ip = uprobe_x86_trunc(op, next + op->imm);
		err = uprobe_x86_put(op->is64, regs->sp, next);
	}
	/* Else a branch: ip is its target already. */

	if (op->fix & UPROBE_FIX_PUSHF && !at->saved_tf) {
		/* TF is bit 8: in the low word of any pushf image. */
		u16 __user *image = (u16 __user *)regs->sp;
		u16 flags;

		err = get_user(flags, image) ?:
		      put_user(flags & ~X86_EFLAGS_TF, image);
	}

	if (at->saved_tf)
		uprobe_x86_report_step(regs, at->saved_blockstep, branched);
	else if (at->saved_blockstep)
		set_task_blockstep(current, true);
	return err;
}

/**
 * arch_uprobe_trap_not_ours() - record the program's own int3 for SIGTRAP
 * @regs: user registers, ip after the int3
 *
 * Context: the breakpoint trap of current, instead of do_int3_user().
 */
void arch_uprobe_trap_not_ours(struct pt_regs *regs)
{
	current->thread.trap_nr = X86_TRAP_BP;
	current->thread.error_code = 0;
}

/**
 * arch_uprobe_other_trap_insn() - did the program's "int $3" (cd 03) trap?
 * @regs: user registers, ip just past the instruction that trapped
 *
 * Context: the breakpoint trap of current; may fault on user memory.
 * Return: true when cd 03, not int3, ends at ip.
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
 * @t: the stepping task, current
 *
 * Context: get_signal() of @t.
 * Return: true when a fault (whose signal is pending) ended the step.
 */
bool arch_uprobe_xol_was_trapped(struct task_struct *t)
{
	WARN_ON_ONCE(t != current);
	return t->thread.trap_nr != UPROBE_X86_STEPPING;
}

/**
 * arch_uprobe_abort_xol() - put ip back on the original after a failed step
 * @aup: the probe
 * @regs: user registers
 *
 * Context: current, on its way back to user space.
 */
void arch_uprobe_abort_xol(struct arch_uprobe *aup, struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct arch_uprobe_task *at = &utask->autask;

	/* A fault's trap number stays, for its signal frame. */
	if (current->thread.trap_nr == UPROBE_X86_STEPPING)
		current->thread.trap_nr = at->saved_trap_nr;
	uprobe_x86_restore(at, &aup->op, regs, false);
	if (at->saved_blockstep)
		set_task_blockstep(current, true);
	regs->ip = utask->vaddr;
}

/* The int3 after a rep string instruction's copy ends its step. */
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
		lockdep_assert_irqs_disabled();
		/* uprobe_breakpoint_trap() took the hits: this is a step's. */
		if (uprobe_x86_int3_ends_step(regs) &&
		    uprobe_post_sstep_notifier(regs))
			return NOTIFY_STOP;
		if (uprobe_pre_sstep_notifier(regs))
			return NOTIFY_STOP;
		break;
	case DIE_DEBUG:
		lockdep_assert_irqs_disabled();
		dr6 = (unsigned long *)args->err;
		if ((*dr6 & DR_STEP) && uprobe_post_sstep_notifier(regs)) {
			/* Consumed: post_xol reports a step trap if one is due. */
			*dr6 &= ~DR_STEP;
			return NOTIFY_STOP;
		}
		break;
	}
	return NOTIFY_DONE;
}

/**
 * arch_uretprobe_hijack_return_addr() - divert a function's return
 * @trampoline_vaddr: where the function shall return to instead
 * @regs: user registers at the function's entry: the return address is at sp
 *
 * Context: the hit in current.
 * Return: the original return address, or -1 (stack unchanged) if the
 * stack is not accessible or the trampoline is out of the code's reach.
 */
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs)
{
	bool is64 = user_64bit_mode(regs);
	void __user *slot = (void __user *)(is64 ? regs->sp : (u32)regs->sp);
	unsigned long orig;

	/* 32-bit code's ret would truncate a trampoline above 4 GiB. */
	if (!is64 && trampoline_vaddr > U32_MAX) {
		pr_warn_ratelimited("pid %d: 32-bit code cannot return through the trampoline at %#lx, return not probed\n",
				    current->pid, trampoline_vaddr);
		return -1;
	}

	/* One user access window, not two copies: every return probe's entry. */
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
 * @ret: the pending return, with the sp at which it was hijacked
 * @ctx: a new call, a chained entry reusing the return address, or a
 *	return through the trampoline
 * @regs: user registers now
 *
 * At a call, sp points at the address just pushed: a frame at sp or below
 * was left (longjmp).  Otherwise the frame at sp is still live.
 *
 * Context: current.
 * Return: true when the frame of @ret is still live.
 */
bool arch_uretprobe_is_alive(struct return_instance *ret, enum rp_check ctx,
			     struct pt_regs *regs)
{
	/* 32-bit code in a 64-bit mm says nothing of the 64-bit frames. */
	if (!user_64bit_mode(regs) && is_64bit_mm(current->mm))
		return true;
	if (ctx == RP_CHECK_CALL)
		return regs->sp < ret->stack;
	return regs->sp <= ret->stack;
}

#ifdef CONFIG_X86_64
/*
 * The return trampoline of 64-bit tasks: save what syscall destroys, below
 * sp (the returned function's frame was there), and enter the uretprobe
 * syscall, which restores it.  If the syscall did not run, the int3 does.
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
 * Context: any.
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
 * Context: the hit in current.
 * Return: true for 64-bit code, unless a ptracer or syscall user dispatch
 * would see the extra syscall.
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
 * Context: current.
 * Return: 0, or -EFAULT when the stack cannot be read (unchanged then).
 */
int arch_uretprobe_syscall_unwind(struct pt_regs *regs)
{
	struct uprobe_tramp_frame __user *f = (void __user *)regs->sp;
	unsigned long r11, cx, ax;

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
 * The trampoline's way in.  Made from anywhere else it is the program's
 * own, which gets SIGILL, as uretprobe(2) says.
 */
SYSCALL_DEFINE0(uretprobe)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned long tramp = uprobe_get_syscall_trampoline_vaddr();

	if (tramp == -1UL || regs->ip != tramp + UPROBE_TRAMP_SYSCALL_END) {
		force_sig(SIGILL);
		return -ENOSYS;
	}
	if (arch_uretprobe_syscall_unwind(regs)) {
		force_sig(SIGSEGV);
		return -EFAULT;
	}
	/* ax is the return value now: orig_ax >= 0 might restart it. */
	regs->orig_ax = -1;
	regs->ip = tramp;
	uprobe_handle_trampoline(regs);
	return regs->ax;
}
#endif /* CONFIG_X86_64: the 32-bit kernel keeps the int3 trampoline */
