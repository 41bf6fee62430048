// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: a thread hits a breakpoint.
 *
 * handle_swbp() runs in the trap (uprobe_breakpoint_trap()) or on the way
 * out (die notifier, TIF_UPROBE, uprobe_notify_resume()).  The handlers
 * run under uprobes_srcu with ip at the probed address; the instruction
 * is then emulated, run from the thread's own slot (uprobes_direct.c), or
 * stepped in an XOL slot from a copy of the arch data, so that no probe
 * reference is held while user space runs.  Whatever may wait on the
 * process itself (a slot, its mmap_lock, a page fault) runs out of
 * uprobes_srcu, on a reference (uprobe_tryget()); only a handler's own
 * fault can still make a grace period wait.
 *
 * The states of a thread (current->utask):
 *
 *   state         utask                             entered / left
 *   ------------  --------------------------------  ----------------------
 *   running       UTASK_RUNNING                     the normal state
 *   step retry    UTASK_RUNNING, auprobe NULL,      start_step() found no
 *                 xol_vaddr == vaddr == the         slot / the next hit
 *                 breakpoint (no step has that)     there (step only)
 *   in own slot   UTASK_RUNNING, ip in the owned    uprobe_direct_run() /
 *                 slot (uprobe_direct_in_slot())    its jump back
 *   stepping      UTASK_SSTEP, auprobe, xol_slot    start_step() / the trap
 *   step done     UTASK_SSTEP_ACK                   the step's trap / resume
 *   step aborted  UTASK_SSTEP_TRAPPED               fault or fatal signal /
 *                                                   resume
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
 * Kept for out-of-tree users (SystemTap) where the arch has an inline one.
 *
 * Return: the breakpoint's address.
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
 * Return: true to skip the handlers and the instruction.
 */
bool __weak arch_uprobe_ignore(struct arch_uprobe *aup, struct pt_regs *regs)
{
	return false;
}
#endif

/**
 * arch_uprobe_trap_not_ours - record a trap no probe owns, for its SIGTRAP
 * @regs: the registers
 */
void __weak arch_uprobe_trap_not_ours(struct pt_regs *regs)
{
}

/**
 * arch_uprobe_other_trap_insn - did a longer trap instruction trap?
 * @regs: the registers, ip just past it
 *
 * Return: true when a trap instruction of the program's (x86: "int $3")
 * ends at ip.
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

/* current's uprobes state, made at its first hit; NULL without memory. */
static __always_inline struct uprobe_task *uprobe_get_utask(void)
{
	struct uprobe_task *utask = current->utask;

	return likely(utask) ? utask : uprobe_alloc_utask();
}

/**
 * uprobe_free_utask - free a task's uprobes state
 * @t: the task, current, releasing its mm (exit or exec)
 */
void uprobe_free_utask(struct task_struct *t)
{
	struct uprobe_task *utask = t->utask;
	struct xol_area *area;

	WARN_ON_ONCE(t != current);
	if (!utask)
		return;
	/*
	 * Unpublished before anything is freed: a perf NMI that interrupts
	 * us walks the user stack through current->utask (the x86 callchain
	 * unwinder's is_uprobe_at_func_entry(), uprobe_fix_callchain()).
	 * Those readers run on this CPU, so a compiler barrier orders it.
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
 * A fork or vfork child gets a copy of the pending returns.
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
 * Return: the probed address for a trap in a copy, else ip.
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
	struct uprobe_task *utask = current->utask;

	return current->mm && (test_bit(MMF_HAS_UPROBES, &current->mm->flags) ||
			       (utask && utask->return_instances));
}

/**
 * uprobe_pre_sstep_notifier - a breakpoint trapped in user space
 * @regs: the registers
 *
 * Context: the trap handler, interrupts may be off.
 * Return: 1 when it may be ours (TIF_UPROBE is set), 0 else.
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

/**
 * uprobes_hit_init - register the die notifier
 */
void __init uprobes_hit_init(void)
{
	WARN_ON(register_die_notifier(&uprobe_exception_nb));
}

/*
 * No probe at @bp_vaddr: a trap instruction of the program's (@trap, read
 * with the table) gets SIGTRAP; a breakpoint removed since it trapped runs
 * the restored instruction (unless its bytes, with the one before, read
 * as "int $3").
 */
static void handle_not_ours(struct pt_regs *regs, unsigned long bp_vaddr,
			    bool trap)
{
	if (trap || arch_uprobe_other_trap_insn(regs)) {
		arch_uprobe_trap_not_ours(regs);
		force_sig(SIGTRAP);
		return;
	}
	instruction_pointer_set(regs, bp_vaddr);
}

/**
 * uprobe_add_late_work - leave part of a handler's work for later in the hit
 * @work: the work, its ->func set; kept until ->func runs
 *
 * For what may wait on the process (a page of a FUSE file, of userfaultfd
 * memory): in the handler, under uprobes_srcu, such a wait would hold up
 * every unregistration.  The works of a hit run in the order they were
 * added, after every handler and out of uprobes_srcu, before the probed
 * instruction runs or a return is hijacked: with the hit's registers and
 * user stack.  Whatever the handler uses there it must keep alive itself.
 * A work must not add another.
 *
 * Context: a handler or return handler, in the task that hit.
 */
void uprobe_add_late_work(struct uprobe_late_work *work)
{
	struct uprobe_late_work **p = &current->utask->late_work;

	while (*p)
		p = &(*p)->next;
	work->next = NULL;
	*p = work;
}

/**
 * uprobe_run_late_work - run the late works the handlers of a hit added
 * @utask: current's uprobes state
 * @regs: the hit's registers
 * @auprobe: the probe hit, for perf's unwinder; NULL for a return's
 *
 * Context: current, out of uprobes_srcu; @auprobe referenced; may sleep.
 */
void uprobe_run_late_work(struct uprobe_task *utask, struct pt_regs *regs,
			  struct arch_uprobe *auprobe)
{
	struct uprobe_late_work *work = utask->late_work, *next;

	utask->late_work = NULL;
	utask->auprobe = auprobe;
	for (; work; work = next) {
		next = work->next;	/* ->func may free @work */
		work->func(work, regs);
	}
	utask->auprobe = NULL;
	WARN_ON_ONCE(utask->late_work);
}

/* What run_handlers() leaves to be done out of uprobes_srcu. */
enum hit_todo {
	HIT_DONE,		/* nothing */
	HIT_PUSH_RETURN,	/* a return to hijack, but not in uprobes_srcu */
	HIT_UNAPPLY,		/* no consumer wants the breakpoint here */
};

/* Run the handlers.  Return: what is left to do out of uprobes_srcu. */
static __always_inline enum hit_todo
run_handlers(struct uprobe *uprobe, struct pt_regs *regs,
	     struct uprobe_task *utask, unsigned long bp_vaddr)
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

	/*
	 * Making the area takes mmap_lock; a page may need bringing in; late
	 * works read the stack before its return address is replaced.  All
	 * out of uprobes_srcu.
	 */
	if (want_return && keep &&
	    (unlikely(!mm_xol_area(current->mm) || utask->late_work) ||
	     !uprobe_push_return(uprobe, regs, utask, false)))
		return HIT_PUSH_RETURN;
	return !keep && uprobe_has_consumers(uprobe) ? HIT_UNAPPLY : HIT_DONE;
}

/* Leave "step retry": was the thread in it for this breakpoint? */
static bool leave_step_retry(struct uprobe_task *utask, unsigned long bp_vaddr)
{
	bool retry = utask->xol_vaddr == bp_vaddr && utask->vaddr == bp_vaddr;

	utask->xol_vaddr = 0;
	return retry;
}

/* Set the thread up to single-step the instruction's copy in an XOL slot. */
static void start_step(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr)
{
	struct xol_area *area = xol_get_area();

	if (!area) {
		area = mm_xol_area(current->mm);
		/* The program unmapped [uprobes]: nowhere to step. */
		if (area && !xol_area_mapped(area))
			goto cannot_run;
		goto no_slot;
	}
	/* For this step only: a slot kept while blocked could starve others. */
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
	/* "step retry"; perf reads auprobe, which is NULL in user space. */
	utask->auprobe = NULL;
	utask->vaddr = bp_vaddr;
	utask->xol_vaddr = bp_vaddr;
	return;
cannot_run:
	/* Refused in this mode, or no area: a retry would trap forever. */
	utask->auprobe = NULL;
	pr_warn_ratelimited("pid %d: cannot run the instruction at %#lx out of line, probe removed from this process\n",
			    current->pid, bp_vaddr);
	uprobe_remove_current(uprobe, bp_vaddr);
}

/*
 * Emulate the instruction, or run it from the thread's filled slot, if
 * that needs no page brought in: a fault could wait on anything (a FUSE
 * daemon, a userfaultfd), and under uprobes_srcu it would make every
 * unregistration wait with it.
 */
static __always_inline bool run_insn_nofault(struct uprobe *uprobe,
					     struct pt_regs *regs,
					     struct uprobe_task *utask,
					     unsigned long bp_vaddr)
{
#ifdef arch_uprobe_skip_sstep_nofault
	bool done;

	pagefault_disable();
	done = arch_uprobe_skip_sstep_nofault(&uprobe->arch, regs) ||
	       uprobe_direct_run(uprobe, regs, utask, bp_vaddr, false);
	pagefault_enable();
	return done;
#else
	/* Its emulation may act on a failed access (s390 signals it). */
	return false;
#endif
}

/*
 * The rest of a hit, out of uprobes_srcu on a reference (@uprobe's):
 * what is left may wait on this process (a slot its other threads hold,
 * its mmap_lock, a page), and nobody else may have to wait for that.
 */
static noinline void handle_swbp_slow(struct uprobe *uprobe,
				      struct pt_regs *regs,
				      struct uprobe_task *utask,
				      unsigned long bp_vaddr, enum hit_todo todo)
{
	if (utask->late_work)
		uprobe_run_late_work(utask, regs, &uprobe->arch);
	if (todo == HIT_PUSH_RETURN)
		uprobe_push_return(uprobe, regs, utask, true);
	if (todo == HIT_UNAPPLY && uprobe_unapply_current(uprobe, bp_vaddr))
		goto out;
	/* Not tried yet, or it needed a page: now one may be brought in. */
	if (arch_uprobe_skip_sstep(&uprobe->arch, regs))
		goto out;
	if (uprobe_direct_run(uprobe, regs, utask, bp_vaddr, true))
		goto out;
	start_step(uprobe, regs, utask, bp_vaddr);
out:
	uprobe_put(uprobe);
}

static __always_inline void handle_swbp(struct pt_regs *regs)
{
	unsigned long bp_vaddr = arch_uprobe_swbp_addr(regs);
	struct mm_struct *mm = current->mm;
	struct uprobe *uprobe, *held = NULL;
	struct uprobe_task *utask = NULL;
	enum hit_todo todo = HIT_DONE;
	bool trap;
	int idx;

	idx = srcu_read_lock(&uprobes_srcu);
	uprobe = uprobe_bp_lookup(mm, bp_vaddr);
	if (unlikely(!uprobe)) {
		srcu_read_unlock(&uprobes_srcu, idx);
		/* The trampolines are never in the table: look there first. */
		if (uprobe_trampoline_trap(regs, bp_vaddr))
			return;
		held = uprobe_bp_lookup_slow(mm, bp_vaddr, &trap);
		if (!held) {
			/* Also on a fatal signal: a core dump shows the site. */
			if (fatal_signal_pending(current))
				instruction_pointer_set(regs, bp_vaddr);
			else
				handle_not_ours(regs, bp_vaddr, trap);
			return;
		}
		uprobe = held;
		idx = srcu_read_lock(&uprobes_srcu);
	}

	/* Handlers see the probed address; an early return re-executes it. */
	instruction_pointer_set(regs, bp_vaddr);
	utask = uprobe_get_utask();
	if (!utask)
		goto out;
	if (arch_uprobe_ignore(&uprobe->arch, regs))
		goto out;
	if (!leave_step_retry(utask, bp_vaddr))
		todo = run_handlers(uprobe, regs, utask, bp_vaddr);
	if (likely(todo == HIT_DONE && !utask->late_work) &&
	    run_insn_nofault(uprobe, regs, utask, bp_vaddr))
		goto out;
	if (!held && !uprobe_tryget(uprobe))
		goto out;	/* unregistered: the hit is re-executed */
	srcu_read_unlock(&uprobes_srcu, idx);
	handle_swbp_slow(uprobe, regs, utask, bp_vaddr, todo);
	return;
out:
	srcu_read_unlock(&uprobes_srcu, idx);
	if (unlikely(utask && utask->late_work))
		/* Unregistered meanwhile, @uprobe may be gone unless held. */
		uprobe_run_late_work(utask, regs, held ? &held->arch : NULL);
	if (held)
		uprobe_put(held);
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
	/* 0: the step of a copy in the thread's own slot */
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

	lockdep_assert_irqs_enabled();
	clear_thread_flag(TIF_UPROBE);
	utask = current->utask;
	if (utask && utask->state != UTASK_RUNNING)
		finish_step(utask, regs);
	else
		handle_swbp(regs);
}

/**
 * uprobe_breakpoint_trap - handle a breakpoint hit in its trap
 * @regs: the user registers, as the trap left them
 *
 * A thread in a step is left to the die notifier, which knows its traps.
 *
 * Context: breakpoint trap, interrupts off; enables them and may sleep.
 * Return: true when the trap was handled, false to go on without uprobes.
 */
bool uprobe_breakpoint_trap(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;

	lockdep_assert_irqs_disabled();
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
 * A fatal signal, or one the stepped instruction caused, aborts the step;
 * others wait for finish_step().  A thread in its own slot leaves it, or
 * steps from there.
 *
 * Context: get_signal().
 * Return: true to deliver nothing now.
 */
bool uprobe_deny_signal(void)
{
	struct uprobe_task *utask = current->utask;
	bool abort_step;

	if (likely(!utask))
		return false;
	if (utask->state == UTASK_RUNNING &&
	    !(utask->own_slot && uprobe_direct_signal(utask)))
		return false;
	WARN_ON_ONCE(utask->state != UTASK_SSTEP);
	if (!task_sigpending(current))
		return true;

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
