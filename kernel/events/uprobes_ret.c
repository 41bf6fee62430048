// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: return probes.
 *
 * At the entry hit, the return address is swapped for a trampoline in the
 * XOL area and a struct return_instance is pushed on the thread's list,
 * deepest first.  The return lands in the trampoline: the instance is
 * popped and the ret_handlers run with ip at the real return address.
 * Frames left without a return (longjmp) are told by their stack pointers
 * and dropped unhandled.  A tail call finds the trampoline as return
 * address: its instance is chained to the previous one.  At most
 * MAX_URETPROBE_DEPTH returns are pending per thread; deeper ones are
 * not probed.
 *
 * A thread caches up to RI_CACHE_MAX spent instances with their probe
 * references, so that hitting the same probes writes no reference count;
 * an unregistered probe stays allocated until the thread next takes an
 * instance, or exits.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/compat.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uprobes.h>
#include <asm/syscall.h>

#include "uprobes_internal.h"

/* A cached instance whose probe is gone gives its reference back. */
static void uprobe_ri_forget_dead(struct return_instance *ri)
{
	if (ri->uprobe && test_bit(UPROBE_F_DEAD, &ri->uprobe->flags)) {
		uprobe_put(ri->uprobe);
		ri->uprobe = NULL;
	}
}

static struct return_instance *uprobe_ri_unlink(struct uprobe_task *utask,
						struct return_instance **p)
{
	struct return_instance *ri = *p;

	*p = ri->next;
	utask->ri_cached--;
	return ri;
}

/**
 * uprobe_ri_get - an instance for a return of @uprobe, with a reference on it
 * @utask: current's state
 * @uprobe: the probe, found under uprobes_srcu or referenced
 *
 * Return: the instance, out of the cache; NULL when there is no memory
 * or the probe has lost its last reference.
 */
struct return_instance *uprobe_ri_get(struct uprobe_task *utask,
				      struct uprobe *uprobe)
{
	struct return_instance **p, **hit = NULL, **spare = NULL, **last = NULL;
	struct return_instance *ri;

	for (p = &utask->ri_cache; (ri = *p); p = &ri->next) {
		uprobe_ri_forget_dead(ri);
		if (ri->uprobe == uprobe)
			hit = p;
		else if (!ri->uprobe)
			spare = p;
		last = p;
	}
	if (hit)
		return uprobe_ri_unlink(utask, hit);
	if (!uprobe_tryget(uprobe))
		return NULL;
	if (spare) {
		p = spare;
	} else if (utask->ri_cached >= RI_CACHE_MAX) {
		p = last;
	} else {
		ri = kmalloc(sizeof(*ri), GFP_KERNEL);
		if (!ri) {
			uprobe_put(uprobe);
			return NULL;
		}
		ri->uprobe = uprobe;
		return ri;
	}
	ri = uprobe_ri_unlink(utask, p);
	if (ri->uprobe)
		uprobe_put(ri->uprobe);
	ri->uprobe = uprobe;
	return ri;
}

/**
 * uprobe_ri_recycle - cache a spent instance, or free it if the cache is full
 * @utask: current's state
 * @ri: the instance, unlinked
 */
void uprobe_ri_recycle(struct uprobe_task *utask, struct return_instance *ri)
{
	uprobe_ri_forget_dead(ri);
	if (utask->ri_cached >= RI_CACHE_MAX) {
		if (ri->uprobe)
			uprobe_put(ri->uprobe);
		kfree(ri);
		return;
	}
	ri->next = utask->ri_cache;
	utask->ri_cache = ri;
	utask->ri_cached++;
}

static void uprobe_ri_recycle_list(struct uprobe_task *utask,
				   struct return_instance *ri)
{
	while (ri) {
		struct return_instance *next = ri->next;

		uprobe_ri_recycle(utask, ri);
		ri = next;
	}
}

/**
 * arch_uretprobe_is_alive - may a pending return's frame still return?
 * @ret: the return instance
 * @ctx: where the question is asked
 * @regs: the task's registers
 *
 * An architecture that cannot tell (from the stack pointer) keeps every
 * frame until it returns or the chain is full.
 *
 * Return: true if the frame may still return through the trampoline.
 */
bool __weak arch_uretprobe_is_alive(struct return_instance *ret,
				    enum rp_check ctx, struct pt_regs *regs)
{
	return true;
}

struct alive_check {
	enum rp_check		ctx;
	struct pt_regs		*regs;
};

static bool uprobe_ri_alive(struct return_instance *ri, void *arg)
{
	struct alive_check *c = arg;

	return arch_uretprobe_is_alive(ri, c->ctx, c->regs);
}

/**
 * uprobe_ri_free_list - free a list of return instances
 * @ri: the first
 * @put: drop each one's probe reference (false only for KUnit fakes)
 */
void uprobe_ri_free_list(struct return_instance *ri, bool put)
{
	while (ri) {
		struct return_instance *next = ri->next;

		if (put && ri->uprobe)
			uprobe_put(ri->uprobe);
		kfree(ri);
		ri = next;
	}
}

/**
 * uprobe_ri_pop_dead - pop the instances whose frames are gone
 * @utask: the thread's state
 * @alive: says whether an instance's frame is still on the stack
 * @arg: passed to @alive
 *
 * Return: the popped instances, most recent first, or NULL.
 */
struct return_instance *uprobe_ri_pop_dead(struct uprobe_task *utask,
					   bool (*alive)(struct return_instance *ri,
							 void *arg),
					   void *arg)
{
	struct return_instance *first = utask->return_instances;
	struct return_instance *ri = first, *last = NULL;

	while (ri && !alive(ri, arg)) {
		last = ri;
		ri = ri->next;
		utask->depth--;
	}
	if (!last)
		return NULL;
	last->next = NULL;
	utask->return_instances = ri;
	return first;
}

/**
 * uprobe_ri_returning_chain - which popped instances belong to the return
 * @dead: instances popped at the trampoline (non-empty), most recent first
 *
 * Return: the oldest, with the instances chained to it (tail calls)
 * before it; those before them were abandoned.
 */
struct return_instance *uprobe_ri_returning_chain(struct return_instance *dead)
{
	struct return_instance *ri, *start = dead;

	for (ri = dead; ri->next; ri = ri->next)
		if (!ri->chained)
			start = ri->next;
	return start;
}

static noinline void __drop_dead(struct uprobe_task *utask,
				 enum rp_check ctx, struct pt_regs *regs)
{
	struct alive_check c = { .ctx = ctx, .regs = regs };

	uprobe_ri_recycle_list(utask, uprobe_ri_pop_dead(utask, uprobe_ri_alive, &c));
}

/* Inline: nothing is pending at the entry of a leaf, the usual case. */
static __always_inline void drop_dead(struct uprobe_task *utask,
				      enum rp_check ctx, struct pt_regs *regs)
{
	if (utask->return_instances)
		__drop_dead(utask, ctx, regs);
}

/**
 * uprobe_push_return - hijack the return of the function just entered
 * @uprobe: the probe hit at its first instruction
 * @regs: the registers, ip at the probe
 * @utask: current's state
 * @may_fault: the return address's page may be brought in
 *
 * Context: the hit path, under uprobes_srcu (without @may_fault: a fault
 * there could wait on anything) or holding a reference on @uprobe; makes
 * current->mm's XOL area if it has none (mmap_lock).
 * Return: false when the stack could not be written without a fault (try
 * again with @may_fault), true otherwise, the return hijacked or not.
 */
bool uprobe_push_return(struct uprobe *uprobe, struct pt_regs *regs,
			struct uprobe_task *utask, bool may_fault)
{
	unsigned long trampoline, orig;
	struct return_instance *ri;
	struct xol_area *area;
	bool chained;

	/* Frames wholly below the stack pointer are gone in any case. */
	drop_dead(utask, RP_CHECK_CHAIN_CALL, regs);
	if (utask->depth >= MAX_URETPROBE_DEPTH) {
		pr_warn_ratelimited("pid %d: more than %d return probes pending, not probing this return\n",
				    current->pid, MAX_URETPROBE_DEPTH);
		return true;
	}

	area = xol_get_area();
	if (!area)
		return true;
	trampoline = area->vaddr;
	if (area->syscall_tramp && arch_uretprobe_may_use_syscall(regs))
		trampoline = xol_slot_vaddr(area, XOL_SYSCALL_SLOT);
	/* Unregistered while the handlers ran: nothing to catch. */
	if (test_bit(UPROBE_F_DEAD, &uprobe->flags))
		return true;
	ri = uprobe_ri_get(utask, uprobe);
	if (!ri)
		return true;
	if (!may_fault)
		pagefault_disable();
	orig = arch_uretprobe_hijack_return_addr(trampoline, regs);
	if (!may_fault)
		pagefault_enable();
	if (orig == -1) {
		uprobe_ri_recycle(utask, ri);
		return may_fault;
	}

	chained = xol_is_trampoline(area, orig);
	if (!chained) {
		/* A frame at this very stack slot was left by a longjmp. */
		drop_dead(utask, RP_CHECK_CALL, regs);
	} else if (!utask->return_instances) {
		pr_warn_ratelimited("pid %d: the trampoline is the return address but no return is pending\n",
				    current->pid);
		uprobe_ri_recycle(utask, ri);
		return true;
	}
	if (chained)
		orig = utask->return_instances->orig_ret_vaddr;

	ri->func = instruction_pointer(regs);
	ri->stack = user_stack_pointer(regs);
	ri->orig_ret_vaddr = orig;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return true;
}

static void run_ret_handlers(struct return_instance *ri, struct pt_regs *regs)
{
	struct uprobe_consumer *uc;

	for (uc = READ_ONCE(ri->uprobe->consumers); uc; uc = READ_ONCE(uc->next))
		if (uc->ret_handler)
			uc->ret_handler(uc, ri->func, regs);
}

/**
 * uprobe_handle_trampoline - a function returned through a trampoline
 * @regs: the registers as just after the return; ip is set to the real
 *	return address
 *
 * A return that matches no pending frame gets SIGILL.
 *
 * Context: current, on its way back to user space; may sleep.
 */
void uprobe_handle_trampoline(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct alive_check c = { .ctx = RP_CHECK_RET, .regs = regs };
	struct return_instance *dead, *ri;
	int idx;

	if (!utask || !utask->return_instances)
		goto sigill;
	dead = uprobe_ri_pop_dead(utask, uprobe_ri_alive, &c);
	if (!dead)
		goto sigill;

	ri = uprobe_ri_returning_chain(dead);
	instruction_pointer_set(regs, ri->orig_ret_vaddr);
	idx = srcu_read_lock(&uprobes_srcu);
	for (; ri; ri = ri->next)
		run_ret_handlers(ri, regs);
	srcu_read_unlock(&uprobes_srcu, idx);
	if (unlikely(utask->late_work))
		uprobe_run_late_work(utask, regs, NULL);
	uprobe_ri_recycle_list(utask, dead);
	return;

sigill:
	pr_warn_ratelimited("pid %d: returned through the uprobes trampoline with no matching return pending, sending SIGILL\n",
			    current->pid);
	force_sig(SIGILL);
}

/**
 * arch_uretprobe_may_use_syscall - may this return use the syscall trampoline?
 * @regs: the registers at the probed function's entry
 */
bool __weak arch_uretprobe_may_use_syscall(struct pt_regs *regs)
{
	return false;
}

/**
 * arch_uretprobe_syscall_unwind - restore what the syscall trampoline saved
 * @regs: the registers at its breakpoint or syscall
 *
 * Return: 0, -EFAULT when they cannot be read, or -EINVAL (default).
 */
int __weak arch_uretprobe_syscall_unwind(struct pt_regs *regs)
{
	return -EINVAL;
}

/**
 * uprobe_syscall_hide_entry - is this syscall the return trampoline's?
 * @regs: current's user registers at a syscall entry with work to do
 *
 * The entry work asks, so that a tracer or a dispatcher of the program's
 * syscalls does not see one the program did not make.  The answer is kept
 * for the exit work of the same syscall (uprobe_syscall_hide_exit()) only
 * when that work will run: when the task is traced.  Every syscall entry
 * with work sets it anew.
 *
 * Context: current, syscall entry work.
 * Return: true for the uretprobe syscall made from current's syscall
 * trampoline with returns pending.
 */
bool uprobe_syscall_hide_entry(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	bool hide = false;

	if (likely(!utask))
		return false;
#ifdef __NR_uretprobe
	hide = utask->return_instances && !in_compat_syscall() &&
	       syscall_get_nr(current, regs) == __NR_uretprobe &&
	       uprobe_in_syscall_trampoline(regs);
	utask->syscall_hidden = hide && test_syscall_work(SYSCALL_TRACE);
#endif
	return hide;
}

/**
 * uprobe_syscall_hide_exit - was this syscall's entry hidden?
 *
 * Context: current, syscall exit work.
 * Return: true once after uprobe_syscall_hide_entry() hid a traced task's
 * syscall.
 */
bool uprobe_syscall_hide_exit(void)
{
	struct uprobe_task *utask = current->utask;

	if (likely(!utask || !utask->syscall_hidden))
		return false;
	utask->syscall_hidden = false;
	return true;
}

/**
 * uprobe_trampoline_trap - a breakpoint trapped: is it a trampoline's?
 * @regs: the registers
 * @bp_vaddr: the breakpoint's address
 *
 * The syscall trampoline traps when its syscall did not reach us (ptrace,
 * seccomp, syscall user dispatch).
 *
 * Return: true when it was one (and has been dealt with).
 */
bool uprobe_trampoline_trap(struct pt_regs *regs, unsigned long bp_vaddr)
{
	struct xol_area *area = mm_xol_area(current->mm);

	if (!area || !xol_is_trampoline(area, bp_vaddr))
		return false;
	if (bp_vaddr != area->vaddr) {
		if (arch_uretprobe_syscall_unwind(regs)) {
			force_sig(SIGSEGV);
			return true;
		}
		instruction_pointer_set(regs,
					xol_slot_vaddr(area, XOL_SYSCALL_SLOT));
	}
	uprobe_handle_trampoline(regs);
	return true;
}

/**
 * uprobe_free_returns - drop a thread's pending returns and its cache
 * @utask: its state
 */
void uprobe_free_returns(struct uprobe_task *utask)
{
	struct return_instance *ri = utask->return_instances;

	/* Unlinked before freed: see uprobe_fix_callchain(). */
	utask->return_instances = NULL;
	utask->depth = 0;
	uprobe_ri_free_list(ri, true);
	ri = utask->ri_cache;
	utask->ri_cache = NULL;
	utask->ri_cached = 0;
	uprobe_ri_free_list(ri, true);
}

/**
 * uprobe_fix_callchain - put real return addresses into a user stack trace
 * @ips: the user part of a perf callchain of current, innermost first
 * @nr: its length
 * @in_user: current was interrupted in user mode
 *
 * The list changes only in current's process context, unlinking before
 * freeing: it is read from there, or from an interrupt of user mode.
 */
void uprobe_fix_callchain(u64 *ips, unsigned int nr, bool in_user)
{
	struct uprobe_task *utask = current->utask;
	struct return_instance *ri;
	struct xol_area *area;
	unsigned int i;

	if (!utask || !current->mm || (!in_task() && !in_user))
		return;
	ri = utask->return_instances;
	area = READ_ONCE(current->mm->uprobes_state.xol_area);
	if (!ri || !area)
		return;

	for (i = 0; i < nr && ri; i++) {
		if (!xol_is_trampoline(area, ips[i]))
			continue;
		while (ri->chained && ri->next)
			ri = ri->next;
		ips[i] = ri->orig_ret_vaddr;
		ri = ri->next;
	}
}

/**
 * uprobe_dup_returns - copy pending returns to a forked child
 * @from: the parent's state
 * @to: the child's, empty
 *
 * Return: 0 or -ENOMEM (with nothing copied).
 */
int uprobe_dup_returns(struct uprobe_task *from, struct uprobe_task *to)
{
	struct return_instance **tail = &to->return_instances;
	struct return_instance *ri, *n;

	for (ri = from->return_instances; ri; ri = ri->next) {
		n = kmemdup(ri, sizeof(*ri), GFP_KERNEL);
		if (!n) {
			uprobe_free_returns(to);
			return -ENOMEM;
		}
		uprobe_get(n->uprobe);
		n->next = NULL;
		*tail = n;
		tail = &n->next;
		to->depth++;
	}
	return 0;
}
