// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: a thread hits a breakpoint.
 *
 *  1. The breakpoint traps.  An architecture whose trap handler calls
 *     uprobe_breakpoint_trap() (x86) has the hit handled right there;
 *     otherwise its die notifier calls uprobe_pre_sstep_notifier(), which
 *     sets TIF_UPROBE, and uprobe_notify_resume() handles it on the way
 *     back to user space.  Either only when the mm has (or had)
 *     breakpoints of ours.
 *  2. handle_swbp(): the address is looked up in the mm's bp table (no
 *     lock); if it is not there, it may be a return trampoline's (for
 *     uprobes_ret.c), else it is looked up through the VMA.  No probe
 *     and no breakpoint any more: the probe was removed meanwhile, run
 *     the restored instruction.  No probe but a breakpoint: it is the
 *     program's own, SIGTRAP as usual.
 *  3. The consumers' handlers run (under uprobes_srcu), with regs->ip at
 *     the probed address; a return probe hijacks the return address.
 *  4. The instruction runs: emulated by the architecture when it can,
 *     otherwise copied into this thread's XOL slot and single-stepped
 *     there (UTASK_SSTEP).  The step's trap calls
 *     uprobe_post_sstep_notifier() (UTASK_SSTEP_ACK), and
 *     uprobe_notify_resume() lets the architecture fix the registers up.
 *  5. Signals that arrive during the step wait for its end
 *     (uprobe_deny_signal()); a fault in the stepped copy, or a fatal
 *     signal, aborts the step (UTASK_SSTEP_TRAPPED) with the registers as
 *     if the instruction had faulted in place, and the signal follows.
 *
 * No reference on the probe is held while user space runs the step: the
 * architecture's data is copied into the thread's struct uprobe_task.
 *
 * The states of a thread (current->utask), and how each is told:
 *
 *   state           utask                               entered / left
 *   --------------  ----------------------------------  -----------------------
 *   running         state UTASK_RUNNING                 the normal state
 *   step retry      UTASK_RUNNING, xol_vaddr == vaddr   start_step() found no
 *                   == the breakpoint, auprobe NULL     slot / its next hit there
 *                   (a pair no step has: a slot is      (the handlers ran: only
 *                   never a probed address)             the step is retried)
 *   in own slot     UTASK_RUNNING, ip in the owned      uprobe_direct_run() /
 *                   slot (uprobe_direct_in_slot())      its jump back; user
 *                                                       space leaves it, so ip,
 *                                                       not a field, says
 *   stepping        UTASK_SSTEP, auprobe, xol_slot      start_step() / the trap
 *   step done       UTASK_SSTEP_ACK                     the step's trap / resume
 *   step aborted    UTASK_SSTEP_TRAPPED                 a fault or fatal signal
 *                                                       in the step / resume
 *
 * Memory: a thread that hit a probe has a struct uprobe_task, about 110
 * bytes on x86_64 (kmalloc-128), freed at exit or exec, plus an XOL slot
 * during a step (uprobes_xol.c) and its pending returns (uprobes_ret.c).
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/kdebug.h>
#include <linux/mm.h>
#include <linux/ptrace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/**
 * uprobe_get_swbp_addr - the address of the breakpoint that just trapped
 * @regs: the registers at the trap
 *
 * Out-of-tree runtimes look this up by name (SystemTap 4.8's refuses to
 * load without it), so it stays a real function even where the hit path
 * uses the architecture's inline arch_uprobe_swbp_addr() instead.
 *
 * Return: the breakpoint's address; architectures whose trap leaves the
 * instruction pointer elsewhere override this.
 */
unsigned long __weak uprobe_get_swbp_addr(struct pt_regs *regs)
{
#ifdef arch_uprobe_swbp_addr
	return arch_uprobe_swbp_addr(regs);
#else
	return instruction_pointer(regs) - UPROBE_SWBP_INSN_SIZE;
#endif
}

#ifndef arch_uprobe_swbp_addr
#define arch_uprobe_swbp_addr uprobe_get_swbp_addr
#endif

#ifndef arch_uprobe_ignore
/**
 * arch_uprobe_ignore - should this hit be ignored?
 * @aup: the probe
 * @regs: the registers
 *
 * Return: true to skip the handlers and the instruction (the architecture
 * has moved the instruction pointer itself).
 */
bool __weak arch_uprobe_ignore(struct arch_uprobe *aup, struct pt_regs *regs)
{
	return false;
}
#endif

/**
 * arch_uprobe_trap_not_ours - a trap instruction no probe owns was hit
 * @regs: the registers
 *
 * The program's own breakpoint: the architecture records what its trap
 * handler would have before the core sends SIGTRAP, so that the signal
 * frame is the one the program gets without uprobes.
 */
void __weak arch_uprobe_trap_not_ours(struct pt_regs *regs)
{
}

/**
 * arch_uprobe_other_trap_insn - did another form of trap instruction trap?
 * @regs: the registers, ip just past the instruction that trapped
 *
 * Called for a trap no probe owns when no breakpoint instruction ends at
 * ip.  An architecture whose breakpoint trap can also come from a longer
 * instruction (x86: "int $3") says whether one ends at ip, so that the
 * program gets its SIGTRAP rather than being sent back into the middle of
 * that instruction as if a breakpoint of ours had been removed.
 *
 * Return: true when the program's own trap instruction ends at ip.
 */
bool __weak arch_uprobe_other_trap_insn(struct pt_regs *regs)
{
	return false;
}

static noinline struct uprobe_task *uprobe_alloc_utask(void)
{
	current->utask = kzalloc(sizeof(*current->utask), GFP_KERNEL);
	return current->utask;
}

/* current's uprobes state, made at its first hit; NULL when out of memory */
static __always_inline struct uprobe_task *uprobe_get_utask(void)
{
	struct uprobe_task *utask = current->utask;

	return likely(utask) ? utask : uprobe_alloc_utask();
}

/**
 * uprobe_free_utask - free a task's uprobes state
 * @t: the task, releasing its mm (exit or exec); t->mm is still that mm
 */
void uprobe_free_utask(struct task_struct *t)
{
	struct uprobe_task *utask = t->utask;
	struct xol_area *area;

	if (!utask)
		return;
	/*
	 * Unpublished before anything is freed: a perf NMI that interrupts
	 * us walks the user stack through current->utask (the x86 callchain
	 * unwinder's is_uprobe_at_func_entry(), uprobe_fix_callchain()).
	 */
	WRITE_ONCE(t->utask, NULL);
	barrier();
	if (utask->xol_slot && t->mm) {
		area = t->mm->uprobes_state.xol_area;
		if (area)
			xol_put_slot(area, utask->xol_slot);
	}
	uprobe_direct_release(utask, t->mm);
	uprobe_free_returns(utask);
	kfree(utask);
}

/**
 * uprobe_copy_process - uprobes state of a new task
 * @t: the child
 * @flags: its clone flags
 *
 * A child that runs on a copy of its parent's stack (fork) or on the same
 * stack (vfork) returns through the same hijacked addresses, so it gets a
 * copy of the pending return probes; a new thread starts clean.
 */
void uprobe_copy_process(struct task_struct *t, unsigned long flags)
{
	struct uprobe_task *utask = current->utask, *n;

	t->utask = NULL;
	if (!utask || !utask->return_instances)
		return;
	if (t->mm == current->mm && !(flags & CLONE_VFORK))
		return;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n || uprobe_dup_returns(utask, n)) {
		/* It will get SIGILL if it returns through the trampoline. */
		pr_warn_ratelimited("pid %d: no memory for the child's pending return probes\n",
				    t->pid);
		kfree(n);
		return;
	}
	t->utask = n;
}

/**
 * uprobe_get_trap_addr - the address a trap should report
 * @regs: the registers at the trap
 *
 * Return: the probed instruction's address for a trap in the stepped
 * copy or in the copy run from the thread's own slot, else the
 * instruction pointer.
 */
unsigned long uprobe_get_trap_addr(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (likely(!utask))
		return instruction_pointer(regs);
	if (utask->state != UTASK_RUNNING)
		return utask->vaddr;
	if (uprobe_direct_in_slot(utask, instruction_pointer(regs)))
		return utask->own_vaddr;
	return instruction_pointer(regs);
}

/* A breakpoint trapped in current: can it be a probe or trampoline of ours? */
static __always_inline bool trap_may_be_ours(void)
{
	struct mm_struct *mm = current->mm;
	struct uprobe_task *utask = current->utask;

	if (!mm)
		return false;
	return test_bit(MMF_HAS_UPROBES, &mm->flags) ||
	       (utask && utask->return_instances);
}

/**
 * uprobe_pre_sstep_notifier - a breakpoint trapped in user space
 * @regs: the registers
 *
 * Context: the trap handler, interrupts may be off.
 * Return: 1 when it may be ours (uprobe_notify_resume() will see), 0 else.
 */
int uprobe_pre_sstep_notifier(struct pt_regs *regs)
{
	if (!trap_may_be_ours())
		return 0;
	set_thread_flag(TIF_UPROBE);
	return 1;
}

/**
 * uprobe_post_sstep_notifier - a single-step trapped in user space
 * @regs: the registers
 *
 * Context: the trap handler, interrupts may be off.
 * Return: 1 when it ends one of our steps, 0 else.
 */
int uprobe_post_sstep_notifier(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	bool ours = current->mm && utask && utask->state == UTASK_SSTEP;

	if (ours) {
		utask->state = UTASK_SSTEP_ACK;
		set_thread_flag(TIF_UPROBE);
	}
	return ours;
}

/* Kprobes (INT_MAX) see kernel traps first; ours are user traps. */
static struct notifier_block uprobe_exception_nb = {
	.priority	= INT_MAX - 1,
	.notifier_call	= arch_uprobe_exception_notify,
};

void __init uprobes_hit_init(void)
{
	WARN_ON(register_die_notifier(&uprobe_exception_nb));
}

/*
 * No probe at @bp_vaddr: either the program's own trap instruction
 * (deliver SIGTRAP as without uprobes) or a breakpoint of ours removed
 * since it trapped (run the restored instruction).
 *
 * A longer trap instruction of the program's (x86's "int $3", cd 03)
 * ends at ip without a breakpoint before it.  It could also be a removed
 * breakpoint's restored instruction starting with the second byte (03)
 * right after an instruction ending in the first (cd): that needs both
 * the bytes and a removal racing the hit, and then the program gets a
 * SIGTRAP; the other choice would send every "int $3" back into its own
 * middle.
 */
static void handle_not_ours(struct pt_regs *regs, unsigned long bp_vaddr)
{
	uprobe_opcode_t op;

	if ((!copy_from_user(&op, (void __user *)bp_vaddr, UPROBE_SWBP_INSN_SIZE) &&
	     is_trap_insn(&op)) || arch_uprobe_other_trap_insn(regs)) {
		arch_uprobe_trap_not_ours(regs);
		force_sig(SIGTRAP);
		return;
	}
	instruction_pointer_set(regs, bp_vaddr);
}

/*
 * Run the consumers' handlers.  Return true when they had the breakpoint
 * removed from this mm, so that the original instruction is back at
 * @bp_vaddr and just runs.
 */
static __always_inline bool run_handlers(struct uprobe *uprobe,
					 struct pt_regs *regs,
					 struct uprobe_task *utask,
					 unsigned long bp_vaddr)
{
	bool keep = false, want_return = false;
	struct uprobe_consumer *uc;

	utask->auprobe = &uprobe->arch;
	utask->vaddr = bp_vaddr;
	for (uc = READ_ONCE(uprobe->consumers); uc; uc = READ_ONCE(uc->next)) {
		want_return |= !!uc->ret_handler;
		/* A consumer keeps the breakpoint unless its handler says not. */
		if (!uc->handler ||
		    !(uc->handler(uc, regs) & UPROBE_HANDLER_REMOVE))
			keep = true;
	}
	utask->auprobe = NULL;

	if (want_return && keep)
		uprobe_push_return(uprobe, regs, utask);
	if (!keep && uprobe_has_consumers(uprobe))
		return uprobe_unapply_current(uprobe, bp_vaddr);
	return false;
}

/*
 * Enter "step retry" (see the top of this file): the handlers of the hit
 * at @bp_vaddr ran but its step could not start (no memory for the XOL
 * area or a slot's page); the thread goes back to the breakpoint, and its
 * next hit there only retries the step, so that the hit is handled once.
 * auprobe stays NULL, since perf reads it from samples taken while the
 * thread is in user space.
 */
static void enter_step_retry(struct uprobe_task *utask, unsigned long bp_vaddr)
{
	utask->vaddr = bp_vaddr;
	utask->xol_vaddr = bp_vaddr;
}

/* Leave "step retry": was the thread in it, for this breakpoint? */
static bool leave_step_retry(struct uprobe_task *utask, unsigned long bp_vaddr)
{
	bool retry = utask->xol_vaddr == bp_vaddr && utask->vaddr == bp_vaddr;

	utask->xol_vaddr = 0;
	return retry;
}

/*
 * Set the thread up to single-step the instruction's copy in its XOL slot.
 * On failure the thread is left at the breakpoint and will hit it again,
 * marked so that the handlers that already ran do not run twice.
 */
static void start_step(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr)
{
	struct xol_area *area = xol_get_area();

	if (!area)
		goto no_slot;
	/*
	 * The slot is held for this step only.  A thread that kept its slot
	 * from one hit to the next could sit in user space holding it (at a
	 * barrier, on a lock) while the thread it waits for sleeps in
	 * xol_take_slot(): with every slot held that way, a program with
	 * more threads than slots deadlocked.
	 */
	utask->xol_slot = xol_take_slot(area);
	if (!utask->xol_slot)
		goto no_slot;
	utask->step_copy = uprobe->arch;

	utask->auprobe = &utask->step_copy;
	utask->vaddr = bp_vaddr;
	utask->xol_vaddr = xol_slot_vaddr(area, utask->xol_slot);
	instruction_pointer_set(regs, utask->xol_vaddr);
	/* Before the slot is filled: the copy may change for this mode. */
	if (arch_uprobe_pre_xol(utask->auprobe, regs)) {
		instruction_pointer_set(regs, bp_vaddr);
		xol_put_slot(area, utask->xol_slot);
		utask->xol_slot = 0;
		goto cannot_run;
	}
	xol_fill_slot(area, utask->xol_slot, &utask->step_copy);
	utask->state = UTASK_SSTEP;
	return;
no_slot:
	/* For now: the next hit at the breakpoint tries again. */
	utask->auprobe = NULL;
	enter_step_retry(utask, bp_vaddr);
	return;
cannot_run:
	/*
	 * Not a lack of memory: the instruction cannot be run out of line
	 * as this thread would run it (x86: code of the other mode than the
	 * probe was analysed for, which that mode refuses).  Retrying would
	 * trap forever; the breakpoint leaves this mm instead, and the
	 * thread runs the original instruction.
	 */
	utask->auprobe = NULL;
	pr_warn_ratelimited("pid %d: cannot run the instruction at %#lx out of line, probe removed from this process\n",
			    current->pid, bp_vaddr);
	uprobe_remove_current(uprobe, bp_vaddr);
}

/* Inline in both callers: the trap handler's hit is the hot one. */
static __always_inline void handle_swbp(struct pt_regs *regs)
{
	unsigned long bp_vaddr = arch_uprobe_swbp_addr(regs);
	struct mm_struct *mm = current->mm;
	struct uprobe_task *utask;
	struct uprobe *uprobe;
	unsigned int len;
	int idx;

	idx = srcu_read_lock(&uprobes_srcu);
	uprobe = uprobe_bp_lookup(mm, bp_vaddr);
	if (unlikely(!uprobe)) {
		/* The trampolines are never in the table: look there first. */
		if (uprobe_trampoline_trap(regs, bp_vaddr) ||
		    uprobe_jump_trap(regs, bp_vaddr))
			goto out;
		uprobe = uprobe_bp_lookup_slow(mm, bp_vaddr);
	}
	if (!uprobe) {
		handle_not_ours(regs, bp_vaddr);
		goto out;
	}

	/* Handlers see the probed address; an early return re-executes it. */
	instruction_pointer_set(regs, bp_vaddr);
	utask = uprobe_get_utask();
	if (!utask)
		goto out;
	if (arch_uprobe_ignore(&uprobe->arch, regs))
		goto out;
	if (!leave_step_retry(utask, bp_vaddr) &&
	    run_handlers(uprobe, regs, utask, bp_vaddr))
		goto out;
	/* Two tests first: a trap that cannot become a jump stays cheap. */
	len = arch_uprobe_jump_maybe(&uprobe->arch) && READ_ONCE(uprobe_jump_on) ?
	      arch_uprobe_jump_ok(&uprobe->arch, regs) : 0;
	if (unlikely(len))
		uprobe_jump_install(uprobe, bp_vaddr, len);
	if (arch_uprobe_skip_sstep(&uprobe->arch, regs))
		goto out;
	if (uprobe_direct_run(uprobe, regs, utask, bp_vaddr))
		goto out;
	start_step(uprobe, regs, utask, bp_vaddr);
out:
	srcu_read_unlock(&uprobes_srcu, idx);
}

/**
 * uprobe_jump_hit - a thread came to a site through its stub
 * @regs: its user registers as they were at the site (ip aside)
 * @vaddr: the site
 * @len: the probed instruction's length
 *
 * The handlers run as for a breakpoint at @vaddr; then the instruction,
 * a nop, is done: the thread goes on after it.  A probe removed meanwhile
 * (the thread was in the stub) leaves only the nop to do.  A hit whose
 * handlers took the probe out of this mm runs the restored instruction.
 *
 * Context: the stub's syscall, or the way back to user space; may sleep.
 */
void uprobe_jump_hit(struct pt_regs *regs, unsigned long vaddr,
		     unsigned int len)
{
	struct mm_struct *mm = current->mm;
	struct uprobe_task *utask;
	struct uprobe *uprobe;
	int idx;

	instruction_pointer_set(regs, vaddr);
	idx = srcu_read_lock(&uprobes_srcu);
	uprobe = uprobe_bp_lookup(mm, vaddr);
	if (unlikely(!uprobe))
		uprobe = uprobe_bp_lookup_slow(mm, vaddr);
	utask = uprobe ? uprobe_get_utask() : NULL;
	if (utask && run_handlers(uprobe, regs, utask, vaddr))
		goto out;
	if (!uprobe || !arch_uprobe_skip_sstep(&uprobe->arch, regs))
		instruction_pointer_set(regs, vaddr + len);
out:
	srcu_read_unlock(&uprobes_srcu, idx);
}

/**
 * uprobe_jump_defer - a hit at a jump site, handled on the way out
 * @regs: the user registers, as at the site
 * @vaddr: the site
 * @len: the probed instruction's length
 *
 * For a hit found where handlers cannot run (a trap with interrupts off):
 * the thread is put after the instruction, as if it had run, and the hit
 * is handled in uprobe_notify_resume().  Without memory for the thread's
 * state, the hit is not reported.
 *
 * Context: any.
 */
void uprobe_jump_defer(struct pt_regs *regs, unsigned long vaddr,
		       unsigned int len)
{
	struct uprobe_task *utask = current->utask;

	if (!utask) {
		utask = kzalloc(sizeof(*utask), GFP_ATOMIC | __GFP_NOWARN);
		current->utask = utask;
	}
	instruction_pointer_set(regs, vaddr + len);
	if (!utask)
		return;
	utask->jump_site = vaddr;
	set_thread_flag(TIF_UPROBE);
}

/* The step trapped back (or was aborted): finish it. */
static void finish_step(struct uprobe_task *utask, struct pt_regs *regs)
{
	struct xol_area *area;
	int err = 0;

	if (utask->state == UTASK_SSTEP_ACK)
		err = arch_uprobe_post_xol(utask->auprobe, regs);
	else if (utask->state == UTASK_SSTEP_TRAPPED)
		arch_uprobe_abort_xol(utask->auprobe, regs);
	else
		return;		/* still stepping */

	utask->auprobe = NULL;
	utask->state = UTASK_RUNNING;
	area = current->mm->uprobes_state.xol_area;
	/* 0: the step of a copy in the thread's own slot (uprobes_direct.c) */
	if (area && utask->xol_slot)
		xol_put_slot(area, utask->xol_slot);
	utask->xol_slot = 0;

	if (unlikely(err)) {
		pr_warn_ratelimited("pid %d: cannot finish the step of the instruction at %#lx, sending SIGILL\n",
				    current->pid, utask->vaddr);
		force_sig(SIGILL);
	}

	/* Signals held back by uprobe_deny_signal() can come now. */
	spin_lock_irq(&current->sighand->siglock);
	recalc_sigpending();
	spin_unlock_irq(&current->sighand->siglock);
}

/**
 * uprobe_notify_resume - TIF_UPROBE work on the way back to user space
 * @regs: the user registers
 *
 * Context: process context, interrupts on, may sleep.
 */
void uprobe_notify_resume(struct pt_regs *regs)
{
	struct uprobe_task *utask;

	clear_thread_flag(TIF_UPROBE);
	utask = current->utask;
	if (utask && utask->jump_site) {
		unsigned long vaddr = utask->jump_site;

		utask->jump_site = 0;
		uprobe_jump_hit(regs, vaddr, instruction_pointer(regs) - vaddr);
		return;
	}
	if (utask && utask->state != UTASK_RUNNING)
		finish_step(utask, regs);
	else
		handle_swbp(regs);
}

/**
 * uprobe_breakpoint_trap - handle a breakpoint hit in its trap
 * @regs: the user registers, as the trap left them
 *
 * An architecture's breakpoint trap handler may call this first, for a
 * trap from user mode: a hit is then handled in the trap, with interrupts
 * on, instead of through the die notifier and TIF_UPROBE on the way back
 * to user space (a notifier chain and a pass of the exit work loop less
 * per hit).  A thread in the middle of a step is left to the notifier,
 * which knows the traps that end a step.
 *
 * Context: trap from user mode, interrupts off; turns them on meanwhile
 * and may sleep, as the exit work would.
 * Return: true when the trap was handled (a hit, a trampoline, or a
 * breakpoint of ours already gone), false to go on as without it.
 */
bool uprobe_breakpoint_trap(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	if (!user_mode(regs) || !trap_may_be_ours())
		return false;
	if (utask && utask->state != UTASK_RUNNING)
		return false;
	local_irq_enable();
	handle_swbp(regs);
	local_irq_disable();
	return true;
}

/**
 * uprobe_deny_signal - hold signals back during a step
 *
 * Called by get_signal().  While a thread steps an XOL copy, a signal
 * handler must not run (it would see the slot's address): the signal waits
 * until finish_step().  A fatal signal, or one caused by the stepped
 * instruction itself, aborts the step first.  A thread in its own slot
 * (uprobes_direct.c) leaves it first, or steps from there.
 *
 * Return: true to deliver nothing now.
 */
bool uprobe_deny_signal(void)
{
	struct uprobe_task *utask = current->utask;
	bool abort_step;

	/* Before anything: no one may see the thread in a stub. */
	uprobe_jump_leave(current_pt_regs());
	if (likely(!utask))
		return false;
	if (utask->state == UTASK_RUNNING &&
	    !(utask->own_slot && uprobe_direct_signal(utask)))
		return false;
	WARN_ON_ONCE(utask->state != UTASK_SSTEP);
	if (!task_sigpending(current))
		return true;

	/* The step's own fault, or a kill, ends the step first. */
	abort_step = __fatal_signal_pending(current) ||
		     arch_uprobe_xol_was_trapped(current);

	/* Park the signal; finish_step() recalculates TIF_SIGPENDING. */
	spin_lock_irq(&current->sighand->siglock);
	clear_thread_flag(TIF_SIGPENDING);
	spin_unlock_irq(&current->sighand->siglock);

	if (abort_step) {
		utask->state = UTASK_SSTEP_TRAPPED;
		set_thread_flag(TIF_UPROBE);
	}
	return true;
}
