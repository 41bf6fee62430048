// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: running an instruction's copy out of line without a step.
 *
 * A probed instruction that is neither emulated nor needs repairs after
 * running elsewhere that the copy cannot make itself (no branch, no flags
 * image; a rip-relative operand's scratch register the copy reloads)
 * runs as a copy followed by a jump back to the instruction after the
 * original, in an XOL slot that the thread owns until it exits or execs.
 * The hit returns to user space at the slot and that is all: no second
 * trap, no slot taken and given back per hit, and the slot is rewritten
 * only when the thread hits a different probe than the last time.
 *
 * The architecture says which plans qualify (arch_uprobe_direct_ok()),
 * writes the code (arch_uprobe_direct_code()), prepares the registers at
 * the hit and puts them back if the thread leaves the slot early
 * (arch_uprobe_direct_start(), arch_uprobe_direct_leave()), and says
 * where the jump back lands (arch_uprobe_direct_next()).  Cases that
 * must step as before: somebody else's single-step or branch-step (TF set
 * at the hit), a thread that cannot own a slot (XOL_OWNED_MAX reached, no
 * memory), a start the architecture refuses (x86: a stack it cannot
 * write the scratch register's value to).
 *
 * Nothing but the thread itself may see it in the slot, so the places
 * that show a thread's ip are corrected here:
 *
 *  - a signal (get_signal() calls uprobe_deny_signal() before anything
 *    else, debugger stops and core dumps included): past the copy, on
 *    the jump back, ip is moved to where the jump goes, exactly the
 *    state without probes.  On a copy that faulted, ip is moved back to
 *    the original instruction, as for a step that faulted (the hit is
 *    handled again if the program's handler returns to it).  On a copy
 *    that has not run yet, the thread steps it now as a step started at
 *    the hit would: uprobes_hit.c holds the signal until the step ends.
 *    The architecture tells a fault from an arrival
 *    (arch_uprobe_direct_trapped());
 *  - a trap's reported address (uprobe_get_trap_addr()) is the original
 *    instruction's.
 *
 * As with a step, a profiler's sample or an rseq abort check taken while
 * the thread is in the slot sees the slot's address.
 */

#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uprobes.h>
#include <asm/unaligned.h>

#include "uprobes_internal.h"

unsigned long __weak arch_uprobe_direct_next(struct arch_uprobe *aup,
					     unsigned long vaddr)
{
	return 0;
}

unsigned int __weak arch_uprobe_direct_code(struct arch_uprobe *aup,
					    unsigned long vaddr, u8 *code)
{
	return 0;
}

bool __weak arch_uprobe_direct_ok(struct arch_uprobe *aup,
				  struct pt_regs *regs)
{
	return false;
}

bool __weak arch_uprobe_direct_start(struct arch_uprobe *aup,
				     unsigned long vaddr, struct pt_regs *regs)
{
	return true;
}

void __weak arch_uprobe_direct_leave(struct arch_uprobe *aup,
				     struct pt_regs *regs)
{
}

bool __weak arch_uprobe_direct_trapped(void)
{
	return false;
}

/*
 * memcmp() of a few bytes, inline: it runs on every hit, where two calls
 * of the out-of-line memcmp() cost 80 guest instructions.
 */
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

/* Does the owned slot hold the copy of @aup probed at @vaddr? */
static __always_inline bool slot_holds(struct uprobe_task *utask,
				       struct arch_uprobe *aup,
				       unsigned long vaddr)
{
	return utask->own_vaddr == vaddr &&
	       same_bytes(utask->own_copy.ixol, aup->ixol, sizeof(aup->ixol)) &&
	       same_bytes(&utask->own_copy.op, &aup->op, sizeof(aup->op));
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
 *
 * Context: the hit, under uprobes_srcu; may sleep (first use of a slot).
 * Return: true when ip now points at the copy, false to step it.
 */
bool uprobe_direct_run(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr)
{
	struct arch_uprobe *aup = &uprobe->arch;

	if (!arch_uprobe_direct_ok(aup, regs))
		return false;
	if (unlikely(!slot_holds(utask, aup, bp_vaddr)) &&
	    !fill_own_slot(utask, aup, bp_vaddr))
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
 * Context: get_signal(), through uprobe_deny_signal().
 * Return: true when current now steps its copy, with signals held back
 * until the step ends (as for a step started at a hit); false to go on
 * with the signal, ip no longer in the slot.
 */
bool uprobe_direct_signal(struct uprobe_task *utask)
{
	struct pt_regs *regs = current_pt_regs();
	unsigned long ip = instruction_pointer(regs);
	bool trapped = arch_uprobe_direct_trapped();

	if (!uprobe_direct_in_slot(utask, ip))
		return false;
	arch_uprobe_direct_leave(&utask->own_copy, regs);
	if (ip != utask->own_xol_vaddr) {
		/* The copy ran; the jump back did not yet. */
		ip = arch_uprobe_direct_next(&utask->own_copy, utask->own_vaddr);
		instruction_pointer_set(regs, ip);
		return false;
	}
	if (trapped) {
		/* The copy faulted: report it in place, as an aborted step. */
		instruction_pointer_set(regs, utask->own_vaddr);
		return false;
	}

	/* The copy has not run yet: step it, out of the thread's own slot. */
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
