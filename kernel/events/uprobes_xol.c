// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the per-mm "[uprobes]" mapping, made at the first step out of
 * line or hijacked return: read+exec pages, as high as the task can
 * address.  The pages are the kernel's, allocated as slots on them are
 * first used; the fault handler maps those of the faulting mm's own area,
 * so a forked child's copy of the VMA shows the child's pages.
 *
 * Slot 0 holds the breakpoint return trampoline, slot 1 the syscall one
 * if the architecture has it.  Any other slot is lent for one step, or
 * owned by a thread until it exits or execs (at most XOL_OWNED_MAX).
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

static vm_fault_t xol_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct xol_area *area = mm_xol_area(vma->vm_mm);
	unsigned long index = (vmf->address - vma->vm_start) >> PAGE_SHIFT;
	struct page *page = NULL;

	/* A page no slot has used yet faults as if unmapped. */
	if (!area || vma->vm_start != area->vaddr || index >= XOL_NR_PAGES)
		return VM_FAULT_SIGSEGV;
	spin_lock(&area->lock);
	page = area->pages[index];
	if (page)
		get_page(page);
	spin_unlock(&area->lock);
	if (!page)
		return VM_FAULT_SIGSEGV;
	vmf->page = page;
	return 0;
}

/* Pending returns point at the trampoline's address: it cannot move. */
static int xol_mremap(struct vm_area_struct *new_vma)
{
	return -EINVAL;
}

/* Nor can a part of it go: the slots' addresses are fixed. */
static int xol_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

/*
 * Unmapped, or mapped over: see xol_area_mapped().  At exit the area is
 * gone already (uprobe_clear_state() runs before exit_mmap()); a failed
 * mremap() closes a new VMA at another address, which is not ours.
 */
static void xol_close(struct vm_area_struct *vma)
{
	struct xol_area *area = mm_xol_area(vma->vm_mm);

	if (area && vma->vm_start == area->vaddr)
		WRITE_ONCE(area->unmapped, true);
}

static const char *xol_name(struct vm_area_struct *vma)
{
	return "[uprobes]";
}

/*
 * A special mapping, but with a close method: the trampolines must know
 * whether the code at their addresses is still theirs.
 */
static const struct vm_operations_struct xol_vm_ops = {
	.close		= xol_close,
	.fault		= xol_fault,
	.mremap		= xol_mremap,
	.may_split	= xol_may_split,
	.name		= xol_name,
};

/* As _install_special_mapping(), with xol_vm_ops. */
static int xol_add_vma(struct mm_struct *mm, unsigned long vaddr)
{
	unsigned long len = XOL_NR_PAGES * PAGE_SIZE;
	struct vm_area_struct *vma;

	vma = vm_area_alloc(mm);
	if (!vma)
		return -ENOMEM;
	vma->vm_start = vaddr;
	vma->vm_end = vaddr + len;
	vma->vm_flags = (VM_READ | VM_EXEC | VM_MAYREAD | VM_MAYEXEC |
			 VM_DONTDUMP | VM_DONTEXPAND | VM_SOFTDIRTY |
			 mm->def_flags) & VM_LOCKED_CLEAR_MASK;
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	vma->vm_ops = &xol_vm_ops;
	if (insert_vm_struct(mm, vma)) {
		vm_area_free(vma);
		return -ENOMEM;
	}
	vm_stat_account(mm, vma->vm_flags, len >> PAGE_SHIFT);
	perf_event_mmap(vma);
	return 0;
}

/**
 * arch_uprobe_copy_ixol - copy an instruction into an XOL slot
 * @page: the slot's page
 * @vaddr: the slot's user address
 * @src: the bytes
 * @len: how many
 *
 * Architectures with incoherent instruction caches override this.
 */
void __weak arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
				  void *src, unsigned long len)
{
	memcpy_to_page(page, offset_in_page(vaddr), src, len);
}

/**
 * arch_uretprobe_syscall_trampoline - a return trampoline without a trap
 * @len: set to its length in bytes (at most UPROBE_XOL_SLOT_BYTES)
 *
 * Return: the code, or NULL (default: only the breakpoint).
 */
const void * __weak arch_uretprobe_syscall_trampoline(unsigned int *len)
{
	return NULL;
}

static void xol_write_trampolines(struct xol_area *area)
{
	uprobe_opcode_t bp = UPROBE_SWBP_INSN;
	const void *code;
	unsigned int len;

	arch_uprobe_copy_ixol(area->pages[0], area->vaddr, &bp,
			      UPROBE_SWBP_INSN_SIZE);
	code = arch_uretprobe_syscall_trampoline(&len);
	if (!code || WARN_ON_ONCE(len > UPROBE_XOL_SLOT_BYTES))
		return;
	xol_write_slot(area, XOL_SYSCALL_SLOT, code, len);
	area->syscall_tramp = true;
}

static void xol_area_free(struct xol_area *area)
{
	int i;

	for (i = 0; i < XOL_NR_PAGES; i++)
		if (area->pages[i])
			put_page(area->pages[i]);
	kfree(area);
}

/* An area with its first page, and its trampolines if @vaddr is known. */
static struct xol_area *xol_area_new(unsigned long vaddr)
{
	struct xol_area *area;

	area = kzalloc(sizeof(*area), GFP_KERNEL);
	if (!area)
		return NULL;
	area->pages[0] = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
	if (!area->pages[0]) {
		kfree(area);
		return NULL;
	}
	spin_lock_init(&area->lock);
	init_waitqueue_head(&area->wq);
	/* Both trampoline slots, whether or not the second is used. */
	__set_bit(0, area->slots);
	__set_bit(XOL_SYSCALL_SLOT, area->slots);
	area->vaddr = vaddr;
	if (vaddr)
		xol_write_trampolines(area);
	return area;
}

/* The highest free range below TASK_SIZE (the task's own limit). */
static unsigned long xol_find_range(void)
{
	struct vm_unmapped_area_info info = {
		.flags		= VM_UNMAPPED_AREA_TOPDOWN,
		.length		= XOL_NR_PAGES * PAGE_SIZE,
		.low_limit	= max_t(unsigned long, PAGE_SIZE, mmap_min_addr),
		.high_limit	= TASK_SIZE,
	};

	return vm_unmapped_area(&info);
}

/**
 * xol_make_area - current->mm's XOL area, made if needed
 *
 * Context: process context, may sleep; takes mmap_lock for write the
 * first time.
 * Return: the area, or NULL (no memory, no address space, fatal signal).
 */
struct xol_area *xol_make_area(void)
{
	struct mm_struct *mm = current->mm;
	struct xol_area *area = mm_xol_area(mm), *new;
	unsigned long vaddr;

	if (area)
		return area;
	new = xol_area_new(0);
	if (!new)
		return NULL;
	if (mmap_write_lock_killable(mm))
		goto free;
	area = mm->uprobes_state.xol_area;
	if (area)
		goto unlock;	/* another thread made it */
	vaddr = xol_find_range();
	if (IS_ERR_VALUE(vaddr))
		goto unlock;
	if (xol_add_vma(mm, vaddr))
		goto unlock;
	new->vaddr = vaddr;
	xol_write_trampolines(new);
	/* Readers see the trampolines written: pairs with mm_xol_area(). */
	smp_store_release(&mm->uprobes_state.xol_area, new);
	area = new;
	new = NULL;
unlock:
	mmap_write_unlock(mm);
free:
	if (new)
		xol_area_free(new);
	return area;
}

/**
 * uprobe_get_trampoline_vaddr - where current's return trampoline is
 *
 * Return: its user address, or -1 when current->mm has no XOL area or
 * the program unmapped it.
 */
unsigned long uprobe_get_trampoline_vaddr(void)
{
	struct xol_area *area = mm_xol_area(current->mm);

	return area && xol_area_mapped(area) ? area->vaddr : -1;
}

/**
 * uprobe_get_syscall_trampoline_vaddr - where current's syscall trampoline is
 *
 * Return: its user address, or -1 when current->mm has none.
 */
unsigned long uprobe_get_syscall_trampoline_vaddr(void)
{
	struct xol_area *area = current->mm ? mm_xol_area(current->mm) : NULL;

	if (!area || !area->syscall_tramp || !xol_area_mapped(area))
		return -1;
	return xol_slot_vaddr(area, XOL_SYSCALL_SLOT);
}

/**
 * uprobe_in_syscall_trampoline - is current in its syscall trampoline?
 * @regs: current's user registers
 *
 * Return: true when ip is in current->mm's syscall trampoline.
 */
bool uprobe_in_syscall_trampoline(struct pt_regs *regs)
{
	unsigned long tramp = uprobe_get_syscall_trampoline_vaddr();

	return tramp != -1UL &&
	       instruction_pointer(regs) - tramp < UPROBE_XOL_SLOT_BYTES;
}

/**
 * xol_bitmap_take - take the first free slot of a bitmap
 * @slots: the bitmap
 * @nr: its size in bits
 *
 * Return: the slot's index (now set), or -1 when all are taken.
 */
int xol_bitmap_take(unsigned long *slots, unsigned int nr)
{
	unsigned int i = find_first_zero_bit(slots, nr);

	if (i >= nr)
		return -1;
	__set_bit(i, slots);
	return i;
}

/*
 * Take a free slot whose page is there, allocating the page if needed;
 * an owned slot only while fewer than XOL_OWNED_MAX are owned.
 * Return: the slot, 0 when none is free, or -ENOMEM.
 */
static int xol_try_take(struct xol_area *area, bool own)
{
	struct page *page = NULL, **pp = NULL;
	int slot;

	for (;;) {
		spin_lock(&area->lock);
		slot = -1;
		if (!own || area->owned < XOL_OWNED_MAX)
			slot = xol_bitmap_take(area->slots, XOL_NR_SLOTS);
		if (slot <= 0)
			break;
		pp = &area->pages[slot / XOL_SLOTS_PER_PAGE];
		if (*pp || page)
			break;
		/* Its page is not there yet: make one and retry. */
		__clear_bit(slot, area->slots);
		spin_unlock(&area->lock);
		page = alloc_page(GFP_HIGHUSER | __GFP_ZERO);
		if (!page)
			return -ENOMEM;
	}
	if (slot > 0) {
		if (!*pp)
			swap(*pp, page);
		area->owned += own;
	}
	spin_unlock(&area->lock);
	if (page)
		__free_page(page);
	return max(slot, 0);
}

/**
 * xol_take_slot - get a slot for current's step, waiting for one if need be
 * @area: current->mm's area
 *
 * Context: process context, may sleep, not in uprobes_srcu: the wait lasts
 * as long as the process's other threads keep their slots.
 * Return: the slot index (> 0), or 0 on a fatal signal or no memory.
 */
unsigned int xol_take_slot(struct xol_area *area)
{
	int slot;

	for (;;) {
		slot = xol_try_take(area, false);
		if (slot)
			return max(slot, 0);

		atomic_inc(&area->slot_waiters);
		slot = wait_event_killable(area->wq,
					   !bitmap_full(area->slots, XOL_NR_SLOTS));
		atomic_dec(&area->slot_waiters);
		if (slot)
			return 0;
	}
}

/**
 * xol_take_own_slot - get a slot current keeps
 * @area: current->mm's area
 *
 * Context: process context, may sleep.
 * Return: the slot index (> 0), or 0 when no more may be owned or no
 * memory.
 */
unsigned int xol_take_own_slot(struct xol_area *area)
{
	return max(xol_try_take(area, true), 0);
}

static void xol_release(struct xol_area *area, unsigned int slot, bool own)
{
	spin_lock(&area->lock);
	__clear_bit(slot, area->slots);
	area->owned -= own;
	spin_unlock(&area->lock);
	/* The bit cleared before the count is read: see prepare_to_wait(). */
	smp_mb();
	if (atomic_read(&area->slot_waiters))
		wake_up(&area->wq);
}

/**
 * xol_put_slot - give a step's slot back
 * @area: the area it came from
 * @slot: its index
 */
void xol_put_slot(struct xol_area *area, unsigned int slot)
{
	xol_release(area, slot, false);
}

/**
 * xol_put_own_slot - give an owned slot back
 * @area: the area it came from
 * @slot: its index
 */
void xol_put_own_slot(struct xol_area *area, unsigned int slot)
{
	xol_release(area, slot, true);
}

/**
 * xol_write_slot - write code into a slot
 * @area: the area
 * @slot: a slot current holds or owns, or a trampoline's
 * @code: the code
 * @len: its length, at most UPROBE_XOL_SLOT_BYTES
 */
void xol_write_slot(struct xol_area *area, unsigned int slot,
		    const void *code, unsigned int len)
{
	struct page *page = area->pages[slot / XOL_SLOTS_PER_PAGE];

	arch_uprobe_copy_ixol(page, xol_slot_vaddr(area, slot), (void *)code,
			      len);
}

/**
 * xol_fill_slot - copy a probe's out-of-line instruction into a slot
 * @area: current->mm's area
 * @slot: a slot current holds
 * @aup: the probe's arch data (its ixol)
 */
void xol_fill_slot(struct xol_area *area, unsigned int slot,
		   struct arch_uprobe *aup)
{
	BUILD_BUG_ON(sizeof(aup->ixol) > UPROBE_XOL_SLOT_BYTES);
	xol_write_slot(area, slot, &aup->ixol, sizeof(aup->ixol));
}

/**
 * xol_dup_area - give a forked mm an area at its parent's address
 * @oldmm: the parent's mm
 * @newmm: the child's, which gets a copy of the parent's VMA unless the
 *	parent unmapped it or marked it MADV_DONTFORK
 *
 * Context: @oldmm's mmap_lock held for write.
 */
void xol_dup_area(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct xol_area *old = mm_xol_area(oldmm), *new;
	struct vm_area_struct *vma;

	mmap_assert_write_locked(oldmm);
	if (!old)
		return;
	new = xol_area_new(old->vaddr);
	if (!new)
		return;
	/* The child gets the VMA only if it is the parent's and copied. */
	vma = vma_lookup(oldmm, old->vaddr);
	new->unmapped = !xol_area_mapped(old) || !vma ||
			vma->vm_ops != &xol_vm_ops ||
			(vma->vm_flags & VM_DONTCOPY);
	newmm->uprobes_state.xol_area = new;
}

/**
 * xol_free_area - free an mm's area
 * @mm: the mm, without users
 */
void xol_free_area(struct mm_struct *mm)
{
	struct xol_area *area = mm->uprobes_state.xol_area;

	if (!area)
		return;
	mm->uprobes_state.xol_area = NULL;
	xol_area_free(area);
}
