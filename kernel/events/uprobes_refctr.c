// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: SDT semaphores.
 *
 * A probe's ref_ctr_offset names a 16-bit counter in the file's data that
 * the program tests before preparing the probe's arguments.  Each
 * breakpoint written in an mm adds one to the counter in that mm's
 * writable private mapping, written as ptrace would; each removed
 * subtracts one.
 *
 * An ELF loader maps the file read-only first and the data segment over
 * it after: a breakpoint written before the counter is mapped waits in
 * the table's pending list, and is counted by uprobe_refctr_on_mmap() or
 * forgotten when its range is unmapped first.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/* A probe whose SDT semaphore is not mapped in the mm yet. */
struct refctr_pending {
	struct list_head	node;
	struct uprobe		*uprobe;
	unsigned long		vaddr;	/* of the breakpoint */
};

/* Does @vma map the probe's file over its semaphore, however protected? */
static bool vma_covers_refctr(struct vm_area_struct *vma, struct uprobe *uprobe)
{
	return vma->vm_file && probe_inode_is(uprobe, file_inode(vma->vm_file)) &&
	       uprobe->ref_ctr_offset >= vaddr_to_offset(vma, vma->vm_start) &&
	       uprobe->ref_ctr_offset < vaddr_to_offset(vma, vma->vm_end);
}

static bool vma_holds_refctr(struct vm_area_struct *vma, struct uprobe *uprobe)
{
	return (vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE &&
	       vma_covers_refctr(vma, uprobe);
}

/* The writable mapping of the probe's file that holds its semaphore. */
static struct vm_area_struct *refctr_vma(struct uprobe *uprobe,
					 struct mm_struct *mm)
{
	struct vm_area_struct *vma = find_vma(mm, 0);

	while (vma && !vma_holds_refctr(vma, uprobe))
		vma = find_vma(mm, vma->vm_end);
	return vma;
}

static int refctr_add(struct uprobe *uprobe, struct vm_area_struct *vma,
		      short d)
{
	unsigned long vaddr = offset_to_vaddr(vma, uprobe->ref_ctr_offset);
	struct page *page;
	short *ctr;
	void *kaddr;
	long got;
	int err = 0;

	got = get_user_pages_remote(vma->vm_mm, vaddr, 1, FOLL_WRITE, &page,
				    NULL, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	kaddr = kmap_local_page(page);
	ctr = kaddr + offset_in_page(vaddr);
	if (*ctr + d < 0)
		err = -ERANGE;	/* never below zero */
	else
		*ctr += d;
	kunmap_local(kaddr);
	set_page_dirty_lock(page);
	put_page(page);
	if (err)
		pr_warn_ratelimited("SDT semaphore at %#lx in pid %d would go below zero\n",
				    vaddr, current->pid);
	return err;
}

/* Keep the breakpoint at @vaddr pending, once. */
static void refctr_wait(struct uprobe *uprobe, struct uprobe_bp_table *t,
			unsigned long vaddr)
{
	struct refctr_pending *p, *q;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return;	/* uncounted: the program skips the probe's site */
	p->uprobe = uprobe_get(uprobe);
	p->vaddr = vaddr;
	spin_lock(&t->pending_lock);
	list_for_each_entry(q, &t->refctr_pending, node)
		if (q->uprobe == uprobe && q->vaddr == vaddr)
			goto dup;
	list_add(&p->node, &t->refctr_pending);
	spin_unlock(&t->pending_lock);
	return;
dup:
	spin_unlock(&t->pending_lock);
	uprobe_put(p->uprobe);
	kfree(p);
}

/**
 * uprobe_refctr_on_install - count a breakpoint just written
 * @uprobe: its probe
 * @mm: the mm
 * @t: @mm's table
 * @vaddr: the breakpoint's address
 *
 * Context: @mm's mmap_lock held for write.
 */
void uprobe_refctr_on_install(struct uprobe *uprobe, struct mm_struct *mm,
			      struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct vm_area_struct *vma;

	mmap_assert_write_locked(mm);
	vma = refctr_vma(uprobe, mm);
	if (vma)
		refctr_add(uprobe, vma, 1);
	else
		refctr_wait(uprobe, t, vaddr);
}

/* Is the semaphore's page a private copy (so counted already)? */
static bool refctr_page_private(struct uprobe *uprobe, struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	struct page *page;
	bool anon = false;

	for (vma = find_vma(mm, 0); vma && !anon; vma = find_vma(mm, vma->vm_end)) {
		if (!vma_covers_refctr(vma, uprobe))
			continue;
		page = follow_page(vma, offset_to_vaddr(vma, uprobe->ref_ctr_offset),
				   FOLL_GET);
		if (IS_ERR_OR_NULL(page))
			continue;
		anon = PageAnon(page);
		put_page(page);
	}
	return anon;
}

/**
 * uprobe_refctr_on_refind - a breakpoint found in place without an entry
 * @uprobe: its probe
 * @mm: the mm
 * @t: @mm's table
 * @vaddr: the breakpoint's address
 *
 * A split re-made the mapping (uprobe_munmap(), then uprobe_mmap() of each
 * part), forgetting any pending count.  A semaphore mapped writable, or
 * in a private copy, was counted; otherwise the count waits again.
 *
 * Context: @mm's mmap_lock held for write.
 */
void uprobe_refctr_on_refind(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr)
{
	mmap_assert_write_locked(mm);
	if (!refctr_vma(uprobe, mm) && !refctr_page_private(uprobe, mm))
		refctr_wait(uprobe, t, vaddr);
}

static void refctr_pending_free_list(struct list_head *list)
{
	struct refctr_pending *p, *tmp;

	list_for_each_entry_safe(p, tmp, list, node) {
		uprobe_put(p->uprobe);
		kfree(p);
	}
}

/* Move the pending records of @t that @match accepts to @out. */
static void refctr_pending_take(struct uprobe_bp_table *t, struct list_head *out,
				bool (*match)(struct refctr_pending *p, void *arg),
				void *arg)
{
	struct refctr_pending *p, *tmp;

	if (list_empty(&t->refctr_pending))
		return;
	spin_lock(&t->pending_lock);
	list_for_each_entry_safe(p, tmp, &t->refctr_pending, node)
		if (match(p, arg))
			list_move(&p->node, out);
	spin_unlock(&t->pending_lock);
}

struct pending_key {
	struct uprobe		*uprobe;
	unsigned long		start, end;
	bool			one;	/* stop after the first match */
	bool			found;
};

static bool pending_key_match(struct refctr_pending *p, void *arg)
{
	struct pending_key *k = arg;

	if ((k->one && k->found) || (k->uprobe && p->uprobe != k->uprobe) ||
	    p->vaddr < k->start || p->vaddr >= k->end)
		return false;
	k->found = true;
	return true;
}

/**
 * uprobe_refctr_on_remove - uncount a breakpoint just taken out
 * @uprobe: its probe
 * @mm: the mm
 * @t: @mm's table, or NULL
 * @vaddr: the breakpoint's address
 *
 * Context: @mm's mmap_lock held for write.
 */
void uprobe_refctr_on_remove(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct pending_key k = { .uprobe = uprobe, .start = vaddr,
				 .end = vaddr + 1, .one = true };
	struct vm_area_struct *vma;
	LIST_HEAD(gone);

	mmap_assert_write_locked(mm);
	/* Still pending: never counted. */
	if (t)
		refctr_pending_take(t, &gone, pending_key_match, &k);
	if (k.found) {
		refctr_pending_free_list(&gone);
		return;
	}
	vma = refctr_vma(uprobe, mm);
	if (vma)
		refctr_add(uprobe, vma, -1);
}

/* A record for @arg's semaphore, or a dead probe's, to forget. */
static bool pending_in_vma(struct refctr_pending *p, void *arg)
{
	return test_bit(UPROBE_F_DEAD, &p->uprobe->flags) ||
	       vma_holds_refctr(arg, p->uprobe);
}

/**
 * uprobe_refctr_on_mmap - count the breakpoints waiting for a new mapping
 * @vma: a VMA just mapped
 *
 * Context: @vma's mmap_lock held for write.
 */
void uprobe_refctr_on_mmap(struct vm_area_struct *vma)
{
	struct uprobe_bp_table *t = uprobe_mm_bpt(vma->vm_mm);
	struct refctr_pending *p;
	LIST_HEAD(ready);

	mmap_assert_write_locked(vma->vm_mm);
	if (!t || (vma->vm_flags & (VM_WRITE | VM_SHARED)) != VM_WRITE)
		return;
	refctr_pending_take(t, &ready, pending_in_vma, vma);
	list_for_each_entry(p, &ready, node)
		if (vma_holds_refctr(vma, p->uprobe))
			refctr_add(p->uprobe, vma, 1);
	refctr_pending_free_list(&ready);
}

/**
 * uprobe_refctr_on_munmap - forget the pending counts of a range being unmapped
 * @t: the mm's table
 * @start: first address of the range
 * @end: address past it
 *
 * Context: as uprobe_munmap(); takes @t's pending_lock.
 */
void uprobe_refctr_on_munmap(struct uprobe_bp_table *t, unsigned long start,
			     unsigned long end)
{
	struct pending_key k = { .start = start, .end = end };
	LIST_HEAD(gone);

	refctr_pending_take(t, &gone, pending_key_match, &k);
	refctr_pending_free_list(&gone);
}

/**
 * uprobe_refctr_on_dup - copy the pending counts a forked mm inherits
 * @new: the child's table
 * @old: the parent's
 * @keep: whether the child has the breakpoint at an address
 * @arg: for @keep
 *
 * Only those of live probes whose breakpoint the child has.  Without
 * memory, the child's semaphore stays uncounted, never miscounted.
 *
 * Context: does not sleep.
 */
void uprobe_refctr_on_dup(struct uprobe_bp_table *new,
			  struct uprobe_bp_table *old,
			  bool (*keep)(unsigned long vaddr, void *arg),
			  void *arg)
{
	struct refctr_pending *p, *q;

	spin_lock(&old->pending_lock);
	list_for_each_entry(p, &old->refctr_pending, node) {
		if (test_bit(UPROBE_F_DEAD, &p->uprobe->flags) ||
		    !keep(p->vaddr, arg))
			continue;
		q = kmalloc(sizeof(*q), GFP_NOWAIT | __GFP_NOWARN);
		if (!q)
			break;
		q->uprobe = uprobe_get(p->uprobe);
		q->vaddr = p->vaddr;
		list_add_tail(&q->node, &new->refctr_pending);
	}
	spin_unlock(&old->pending_lock);
}

/**
 * uprobe_refctr_free_all - drop a table's pending counts
 * @t: a table nobody can reach any more
 */
void uprobe_refctr_free_all(struct uprobe_bp_table *t)
{
	refctr_pending_free_list(&t->refctr_pending);
}
