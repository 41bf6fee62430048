// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: return probes.
 *
 * At the entry hit of a probe with a ret_handler, the architecture swaps
 * the return address on the user stack for a trampoline in the XOL area
 * and the core pushes a struct return_instance on the thread's list: the
 * real return address and the stack pointer at entry.  When the function
 * returns it lands in the trampoline, which enters the kernel; the core
 * pops the instance, runs the ret_handlers with regs->ip already at the
 * real return address, and the thread goes on from there.
 *
 * There are two trampolines.  Slot 0 is a breakpoint, and works for every
 * task.  Where the architecture provides one, slot 1 enters the kernel by
 * a syscall, which costs less than a trap; it is used for the tasks that
 * arch_uretprobe_may_use_syscall() approves (on x86, 64-bit tasks whose
 * syscalls nobody intercepts), and falls back to a breakpoint of its own
 * when the syscall was not let through.
 *
 * The list is ordered by stack depth, most recent (deepest) first.  Frames
 * a program leaves without returning (longjmp, exceptions, siglongjmp out
 * of a handler) are found by comparing stack pointers, through
 * arch_uretprobe_is_alive():
 *  - at an entry hit, instances whose frames lie below the current stack
 *    pointer are dropped before the new one is pushed;
 *  - at the trampoline, every instance whose frame is no longer on the
 *    stack is popped; the oldest of them is the frame that just returned
 *    (with the tail-called frames chained onto it), the others were
 *    abandoned and are dropped without running their handlers.
 * A return through the trampoline that matches no pending frame (a
 * program that switched to another stack, or copied a stack holding a
 * trampoline address) cannot be sent anywhere sensible: the thread gets
 * SIGILL.
 *
 * A tail call from one probed function to another finds the trampoline
 * already in the return slot; its instance is "chained" to the previous
 * one and returns with it.
 *
 * At most MAX_URETPROBE_DEPTH instances are pending per thread; deeper
 * calls are not hijacked, and counted in uprobes_dropped_returns.
 *
 * Memory: 48 bytes (kmalloc-64) per pending return on x86_64; a thread
 * keeps up to RI_CACHE_MAX freed ones for its next returns, so that a hit
 * of a return probe normally allocates nothing.
 *
 * A pending instance holds a reference on its probe.  A cached one keeps
 * the reference of its last probe, and the next return of that probe
 * takes the instance with the reference: a thread that keeps hitting the
 * same few return probes writes no probe's reference count, a cache line
 * all the threads hitting the probe would otherwise bounce between their
 * CPUs twice a call.  The price: a probe that has been unregistered stays
 * allocated (not its file: uprobe_retire() let that go) until each thread
 * that cached it enters a return-probed function again (ri_get() looks
 * at the whole cache), or exits; at most RI_CACHE_MAX probes per thread.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

atomic_long_t uprobes_dropped_returns = ATOMIC_LONG_INIT(0);

/* A cached instance whose probe is gone gives its reference back. */
static void ri_forget_dead(struct return_instance *ri)
{
	if (ri->uprobe && test_bit(UPROBE_F_DEAD, &ri->uprobe->flags)) {
		put_uprobe(ri->uprobe);
		ri->uprobe = NULL;
	}
}

static struct return_instance *ri_unlink(struct uprobe_task *utask,
					 struct return_instance **p)
{
	struct return_instance *ri = *p;

	*p = ri->next;
	utask->ri_cached--;
	return ri;
}

/**
 * ri_get - an instance for a return of @uprobe, with a reference on it
 * @utask: current's state
 * @uprobe: the probe, found under uprobes_srcu
 *
 * The cached instance that holds @uprobe if there is one: no reference
 * count is written.  Else @uprobe is referenced anew, for a cached
 * instance without a probe, a new one while the cache has room, or the
 * least recently cached one (its probe's reference dropped).  Cached
 * instances of probes that have been unregistered give their reference
 * back on the way.
 *
 * Return: the instance, unlinked from the cache; NULL when there is no
 * memory or the probe has lost its last reference.
 */
struct return_instance *ri_get(struct uprobe_task *utask,
			       struct uprobe *uprobe)
{
	struct return_instance **p, **hit = NULL, **spare = NULL, **last = NULL;
	struct return_instance *ri;

	for (p = &utask->ri_cache; (ri = *p); p = &ri->next) {
		ri_forget_dead(ri);
		if (ri->uprobe == uprobe)
			hit = p;
		else if (!ri->uprobe)
			spare = p;
		last = p;
	}
	if (hit)
		return ri_unlink(utask, hit);
	if (!refcount_inc_not_zero(&uprobe->ref))
		return NULL;
	if (spare) {
		p = spare;
	} else if (utask->ri_cached >= RI_CACHE_MAX) {
		p = last;
	} else {
		ri = kmalloc(sizeof(*ri), GFP_KERNEL);
		if (!ri) {
			put_uprobe(uprobe);
			return NULL;
		}
		ri->uprobe = uprobe;
		return ri;
	}
	ri = ri_unlink(utask, p);
	if (ri->uprobe)
		put_uprobe(ri->uprobe);
	ri->uprobe = uprobe;
	return ri;
}

/**
 * ri_recycle - keep an instance that is done with for the next return
 * @utask: current's state
 * @ri: the instance, unlinked
 *
 * @ri keeps the reference on its probe, unless the probe has been
 * unregistered; with the cache full, @ri is freed instead.
 */
void ri_recycle(struct uprobe_task *utask, struct return_instance *ri)
{
	ri_forget_dead(ri);
	if (utask->ri_cached >= RI_CACHE_MAX) {
		if (ri->uprobe)
			put_uprobe(ri->uprobe);
		kfree(ri);
		return;
	}
	ri->next = utask->ri_cache;
	utask->ri_cache = ri;
	utask->ri_cached++;
}

/* Recycle a list of instances (their probe references with them). */
static void ri_recycle_list(struct uprobe_task *utask,
			    struct return_instance *ri)
{
	while (ri) {
		struct return_instance *next = ri->next;

		ri_recycle(utask, ri);
		ri = next;
	}
}

struct alive_check {
	enum rp_check		ctx;
	struct pt_regs		*regs;
};

static bool ri_alive(struct return_instance *ri, void *arg)
{
	struct alive_check *c = arg;

	return arch_uretprobe_is_alive(ri, c->ctx, c->regs);
}

/**
 * ri_free_list - free a list of return instances
 * @ri: the first
 * @put: drop each one's probe reference, if it has one (false only for
 *	KUnit fakes)
 */
void ri_free_list(struct return_instance *ri, bool put)
{
	while (ri) {
		struct return_instance *next = ri->next;

		if (put && ri->uprobe)
			put_uprobe(ri->uprobe);
		kfree(ri);
		ri = next;
	}
}

/**
 * ri_pop_dead - pop the instances whose frames are gone
 * @utask: the thread's state
 * @alive: says whether an instance's frame is still on the stack
 * @arg: passed to @alive
 *
 * Pops from the most recent end while @alive says no.
 *
 * Return: the popped instances, still linked most recent first (the last
 * one's ->next is NULL), or NULL.
 */
struct return_instance *ri_pop_dead(struct uprobe_task *utask,
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
 * ri_returning_chain - which popped instances belong to the return
 * @dead: instances popped at the trampoline (non-empty), most recent first
 *
 * The oldest popped instance is the frame that returned; the instances
 * just before it that are chained to it (tail calls) return with it.
 *
 * Return: the first instance of that chain; those before it in @dead were
 * abandoned.
 */
struct return_instance *ri_returning_chain(struct return_instance *dead)
{
	struct return_instance *ri, *start = dead;

	for (ri = dead; ri->next; ri = ri->next)
		if (!ri->chained)
			start = ri->next;
	return start;
}

static void __drop_dead(struct uprobe_task *utask, enum rp_check ctx,
			struct pt_regs *regs)
{
	struct alive_check c = { .ctx = ctx, .regs = regs };

	ri_recycle_list(utask, ri_pop_dead(utask, ri_alive, &c));
}

static __always_inline void drop_dead(struct uprobe_task *utask,
				      enum rp_check ctx, struct pt_regs *regs)
{
	/* Nothing pending: the usual case at the entry of a leaf function. */
	if (utask->return_instances)
		__drop_dead(utask, ctx, regs);
}

/**
 * uprobe_push_return - hijack the return of the function just entered
 * @uprobe: the probe hit at its first instruction
 * @regs: the registers, regs->ip at the probe
 * @utask: current's state
 *
 * Context: the hit path, under uprobes_srcu.
 */
void uprobe_push_return(struct uprobe *uprobe, struct pt_regs *regs,
			struct uprobe_task *utask)
{
	unsigned long trampoline, orig;
	struct return_instance *ri;
	struct xol_area *area;
	bool chained;

	/* Frames wholly below the stack pointer are gone in any case. */
	drop_dead(utask, RP_CHECK_CHAIN_CALL, regs);
	if (utask->depth >= MAX_URETPROBE_DEPTH) {
		atomic_long_inc(&uprobes_dropped_returns);
		pr_warn_ratelimited("pid %d: more than %d return probes pending, not probing this return\n",
				    current->pid, MAX_URETPROBE_DEPTH);
		return;
	}

	area = xol_get_area();
	if (!area)
		return;
	trampoline = area->vaddr;
	if (area->syscall_tramp && arch_uretprobe_may_use_syscall(regs))
		trampoline = xol_slot_vaddr(area, XOL_SYSCALL_SLOT);
	/*
	 * The handlers ran on a consumer list read under SRCU: meanwhile the
	 * probe may have been unregistered (its consumers gone), and even
	 * have lost its last reference, to be freed once this hit is over.
	 * Then there is no return to catch.
	 */
	if (test_bit(UPROBE_F_DEAD, &uprobe->flags))
		return;
	ri = ri_get(utask, uprobe);
	if (!ri)
		return;
	orig = arch_uretprobe_hijack_return_addr(trampoline, regs);
	if (orig == -1) {
		ri_recycle(utask, ri);
		return;
	}

	chained = xol_is_trampoline(area, orig);
	if (!chained) {
		/* A frame at this very stack slot was left by a longjmp. */
		drop_dead(utask, RP_CHECK_CALL, regs);
	} else if (!utask->return_instances) {
		pr_warn_ratelimited("pid %d: the trampoline is the return address but no return is pending\n",
				    current->pid);
		ri_recycle(utask, ri);
		return;
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
 * @regs: the registers as just after the return (regs->ip in the
 *	trampoline); regs->ip is set to the real return address
 *
 * Runs the ret_handlers of the frame that returned.  A return that
 * matches no pending frame gets SIGILL.
 *
 * Context: current's process context on its way back to user space (the
 * trampoline's trap or syscall), may sleep.
 */
void uprobe_handle_trampoline(struct pt_regs *regs)
{
	struct uprobe_task *utask = current->utask;
	struct alive_check c = { .ctx = RP_CHECK_RET, .regs = regs };
	struct return_instance *dead, *ri;
	int idx;

	if (!utask || !utask->return_instances)
		goto sigill;
	dead = ri_pop_dead(utask, ri_alive, &c);
	if (!dead)
		goto sigill;

	ri = ri_returning_chain(dead);
	instruction_pointer_set(regs, ri->orig_ret_vaddr);
	idx = srcu_read_lock(&uprobes_srcu);
	for (; ri; ri = ri->next)
		run_ret_handlers(ri, regs);
	srcu_read_unlock(&uprobes_srcu, idx);
	ri_recycle_list(utask, dead);
	return;

sigill:
	pr_warn_ratelimited("pid %d: returned through the uprobes trampoline with no matching return pending, sending SIGILL\n",
			    current->pid);
	force_sig(SIGILL);
}

/**
 * arch_uretprobe_may_use_syscall - may this return use the syscall trampoline?
 * @regs: the registers at the probed function's entry
 *
 * Return: true when the task's syscall from the trampoline will reach the
 * kernel's handler (the default: false, the breakpoint always works).
 */
bool __weak arch_uretprobe_may_use_syscall(struct pt_regs *regs)
{
	return false;
}

/**
 * arch_uretprobe_syscall_unwind - undo what the syscall trampoline saved
 * @regs: the registers at its breakpoint or syscall
 *
 * Restores the registers the trampoline saved on the stack and the stack
 * pointer, so that @regs are as just after the return.
 *
 * Return: 0, -EFAULT when the saved registers cannot be read, or (the
 * default, for architectures without a syscall trampoline) -EINVAL.
 */
int __weak arch_uretprobe_syscall_unwind(struct pt_regs *regs)
{
	return -EINVAL;
}

/**
 * uprobe_trampoline_trap - a breakpoint trapped: is it a trampoline's?
 * @regs: the registers
 * @bp_vaddr: the breakpoint's address
 *
 * Slot 0's breakpoint is the breakpoint trampoline.  The one in the
 * syscall trampoline is reached only when its syscall did not run our
 * handler (a ptracer or syscall user dispatch took it, or a seccomp
 * filter refused it): finish the return here instead.
 *
 * Context: uprobe_notify_resume().
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

	/* Unlink first: kfree() may reach uprobe_fix_callchain(). */
	utask->return_instances = NULL;
	utask->depth = 0;
	ri_free_list(ri, true);
	ri = utask->ri_cache;
	utask->ri_cache = NULL;
	utask->ri_cached = 0;
	ri_free_list(ri, true);
}

/**
 * uprobe_fix_callchain - put real return addresses into a user stack trace
 * @ips: the user part of a perf callchain of current, innermost first
 * @nr: its length
 * @in_user: current was interrupted in user mode
 *
 * A stack walk finds a trampoline wherever a pending return probe has
 * hijacked a return address, one return slot per pending instance (a
 * chain of tail calls shares one), in the order of the instance list.
 * Replace each with the address the function will really return to.
 * A first entry in a jump stub (uprobes_jump.c) becomes its probed site.
 *
 * The list is current's own and changes only in current's process
 * context, unlinking before freeing; so it can be walked from the task
 * itself or from an interrupt that came while it ran in user mode, and is
 * left alone otherwise.
 */
void uprobe_fix_callchain(u64 *ips, unsigned int nr, bool in_user)
{
	struct uprobe_task *utask = current->utask;
	unsigned int i, len, at;
	struct return_instance *ri;
	struct xol_area *area;
	unsigned long site;

	/* In a jump stub, or entering the kernel from one: at the site. */
	if (nr && current->mm) {
		site = uprobe_jump_site(ips[0], &len, &at);
		if (site)
			ips[0] = site;
	}
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
		get_uprobe(n->uprobe);
		n->next = NULL;
		*tail = n;
		tail = &n->next;
		to->depth++;
	}
	return 0;
}
