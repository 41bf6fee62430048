// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: running an instruction's copy out of line without a step.
 *
 * An instruction the architecture accepts runs as a copy and a jump back,
 * in an XOL slot the thread owns until it exits or execs: no second trap,
 * and the slot is rewritten only for another probe.  Others are stepped.
 * Nothing but the thread itself sees its ip in the slot: a signal moves it
 * out (uprobe_direct_signal()), a trap reports the original address.  A
 * profiler's sample or an rseq check sees the slot, as during a step.
 */

#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uprobes.h>

#include <asm/unaligned.h>

#include "uprobes_internal.h"

/**
 * arch_uprobe_direct_next - where the jump back after the copy goes
 * @aup: the probe
 * @vaddr: its address
 */
unsigned long __weak arch_uprobe_direct_next(struct arch_uprobe *aup,
					     unsigned long vaddr)
{
	return 0;
}

/**
 * arch_uprobe_direct_code - write the copy and the jump back; 0 to step
 * @aup: the probe
 * @vaddr: its address
 * @code: UPROBE_XOL_SLOT_BYTES to fill
 */
unsigned int __weak arch_uprobe_direct_code(struct arch_uprobe *aup,
					    unsigned long vaddr, u8 *code)
{
	return 0;
}

/**
 * arch_uprobe_direct_ok - may this hit run the copy without a step?
 * @aup: the probe
 * @regs: the registers at the hit
 */
bool __weak arch_uprobe_direct_ok(struct arch_uprobe *aup,
				  struct pt_regs *regs)
{
	return false;
}

/**
 * arch_uprobe_direct_start - prepare the registers for the copy; false to step
 * @aup: the probe
 * @vaddr: its address
 * @regs: the registers at the hit
 */
bool __weak arch_uprobe_direct_start(struct arch_uprobe *aup,
				     unsigned long vaddr, struct pt_regs *regs)
{
	return true;
}

/**
 * arch_uprobe_direct_leave - undo arch_uprobe_direct_start() early
 * @aup: the probe whose copy the slot holds
 * @regs: the registers, ip in the slot
 */
void __weak arch_uprobe_direct_leave(struct arch_uprobe *aup,
				     struct pt_regs *regs)
{
}

/**
 * arch_uprobe_direct_trapped - did the copy fault since the last start?
 */
bool __weak arch_uprobe_direct_trapped(void)
{
	return false;
}

/* memcmp() of a few bytes, inline: out of line, it is two calls per hit. */
static __always_inline bool same_bytes(const void *a, const void *b, size_t n)
{
	size_t i = 0;

	for (; i + sizeof(long) <= n; i += sizeof(long))
		if (get_unaligned((const unsigned long *)(a + i)) !=
		    get_unaligned((const unsigned long *)(b + i)))
			return false;
	for (; i < n; i++)
		if (((const u8 *)a)[i] != ((const u8 *)b)[i])
			return false;
	return true;
}

#ifdef CONFIG_X86	/* the only direct runs; ->op is x86's emulation */
static __always_inline bool same_op(const struct arch_uprobe *a,
				    const struct arch_uprobe *b)
{
	return same_bytes(&a->op, &b->op, sizeof(a->op));
}
#else
static __always_inline bool same_op(const struct arch_uprobe *a,
				    const struct arch_uprobe *b)
{
	return true;
}
#endif

/* Does the owned slot hold the copy of @aup probed at @vaddr? */
static __always_inline bool slot_holds(struct uprobe_task *utask,
				       struct arch_uprobe *aup,
				       unsigned long vaddr)
{
	return utask->own_vaddr == vaddr &&
	       xol_area_mapped(mm_xol_area(current->mm)) &&
	       same_bytes(&utask->own_copy.ixol, &aup->ixol, sizeof(aup->ixol)) &&
	       same_op(&utask->own_copy, aup);
}

/* Own a slot and write the copy of @aup for @vaddr into it. */
static noinline bool fill_own_slot(struct uprobe_task *utask,
				   struct arch_uprobe *aup,
				   unsigned long vaddr)
{
	u8 code[UPROBE_XOL_SLOT_BYTES];
	struct xol_area *area;
	unsigned int len;

	len = arch_uprobe_direct_code(aup, vaddr, code);
	if (!len || WARN_ON_ONCE(len > sizeof(code)))
		return false;
	area = xol_get_area();
	if (!area)
		return false;
	if (!utask->own_slot) {
		utask->own_slot = xol_take_own_slot(area);
		if (!utask->own_slot)
			return false;
		utask->own_xol_vaddr = xol_slot_vaddr(area, utask->own_slot);
	}
	xol_write_slot(area, utask->own_slot, code, len);
	utask->own_copy = *aup;
	utask->own_vaddr = vaddr;
	return true;
}

/**
 * uprobe_direct_run - send a thread at a hit to its copy without a step
 * @uprobe: the probe hit, whose handlers have run
 * @regs: the thread's user registers
 * @utask: its uprobes state
 * @bp_vaddr: the probed address
 * @may_sleep: the slot may be filled, a page brought in
 *
 * Context: the hit; without @may_sleep under uprobes_srcu with page
 * faults off, from a filled slot only; with it, out of uprobes_srcu
 * holding a reference on @uprobe.
 * Return: true when ip now points at the copy, false to step it (or to
 * try again with @may_sleep).
 */
bool uprobe_direct_run(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr,
		       bool may_sleep)
{
	struct arch_uprobe *aup = &uprobe->arch;

	RCU_LOCKDEP_WARN(!may_sleep && !srcu_read_lock_held(&uprobes_srcu),
			 "no SRCU");
	if (!arch_uprobe_direct_ok(aup, regs))
		return false;
	if (unlikely(!slot_holds(utask, aup, bp_vaddr)) &&
	    (!may_sleep || !fill_own_slot(utask, aup, bp_vaddr)))
		return false;
	if (!arch_uprobe_direct_start(aup, bp_vaddr, regs))
		return false;
	instruction_pointer_set(regs, utask->own_xol_vaddr);
	return true;
}

/**
 * uprobe_direct_signal - a signal for a thread that may be in its slot
 * @utask: current's uprobes state, not in a step
 *
 * Past the copy, ip moves to where the jump goes; on a copy that faulted,
 * back to the probed address; before the copy ran, the thread steps it.
 *
 * Context: get_signal(), through uprobe_deny_signal().
 * Return: true when current now steps its copy, false to go on with the
 * signal, ip out of the slot.
 */
bool uprobe_direct_signal(struct uprobe_task *utask)
{
	struct pt_regs *regs = current_pt_regs();
	unsigned long ip = instruction_pointer(regs);
	bool trapped = arch_uprobe_direct_trapped();

	WARN_ON_ONCE(utask != current->utask);
	if (!uprobe_direct_in_slot(utask, ip))
		return false;
	arch_uprobe_direct_leave(&utask->own_copy, regs);
	if (ip != utask->own_xol_vaddr) {
		ip = arch_uprobe_direct_next(&utask->own_copy, utask->own_vaddr);
		instruction_pointer_set(regs, ip);
		return false;
	}
	if (trapped) {
		instruction_pointer_set(regs, utask->own_vaddr);
		return false;
	}

	utask->auprobe = &utask->own_copy;
	utask->vaddr = utask->own_vaddr;
	utask->xol_vaddr = utask->own_xol_vaddr;
	utask->xol_slot = 0;
	if (arch_uprobe_pre_xol(utask->auprobe, regs)) {
		/* Cannot happen for a plan that qualified: hit again. */
		utask->auprobe = NULL;
		utask->xol_vaddr = 0;
		instruction_pointer_set(regs, utask->own_vaddr);
		return false;
	}
	utask->state = UTASK_SSTEP;
	return true;
}

/**
 * uprobe_direct_release - give a thread's owned slot back
 * @utask: the thread's uprobes state
 * @mm: the mm whose area the slot is in (exit or exec)
 */
void uprobe_direct_release(struct uprobe_task *utask, struct mm_struct *mm)
{
	struct xol_area *area = mm ? mm->uprobes_state.xol_area : NULL;

	if (utask->own_slot && area)
		xol_put_own_slot(area, utask->own_slot);
	utask->own_slot = 0;
	utask->own_vaddr = 0;
}
