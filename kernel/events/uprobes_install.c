// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: writing and removing breakpoints in the mms that map a file.
 *
 * A breakpoint goes into the mm's private copy of the page, one opcode in
 * one store; the page cache keeps the original.  The copy is made here,
 * not by a forced write fault, so that its memory cgroup charge may fail.
 * The mm's bp table caches address -> probe for the hit path: an entry is
 * added before its breakpoint is written and erased before it is
 * restored.  Entries lost while the breakpoint stays (vma merge or split,
 * mremap, truncation) are re-added by the slow lookup; an entry for an
 * address that maps something else must never stay (every unmap calls
 * uprobe_munmap(), fork copies only the entries of copied VMAs).
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/memcontrol.h>
#include <linux/mman.h>
#include <linux/mmu_notifier.h>
#include <linux/oom.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/userfaultfd_k.h>

#include "uprobes_internal.h"

/* See the lock list in uprobes.c. */
static DECLARE_RWSEM(dup_mmap_sem);

/* uprobe_write_opcode(): the byte is neither the original nor ours. */
#define UPROBE_OPCODE_FOREIGN	2

static bool vma_maps_probe(struct vm_area_struct *vma, struct uprobe *uprobe,
			   unsigned long vaddr)
{
	return vma && vma_probeable(vma) &&
	       probe_inode_is(uprobe, file_inode(vma->vm_file)) &&
	       vaddr_to_offset(vma, vaddr) == uprobe->offset;
}

/**
 * is_swbp_insn - is @insn the breakpoint opcode?
 * @insn: the opcode
 */
bool __weak is_swbp_insn(uprobe_opcode_t *insn)
{
	return *insn == UPROBE_SWBP_INSN;
}

/**
 * is_trap_insn - does @insn trap like the breakpoint?
 * @insn: the opcode
 */
bool __weak is_trap_insn(uprobe_opcode_t *insn)
{
	return is_swbp_insn(insn);
}

/* The page at @vaddr of @mm as it is: no COW break, no huge page split. */
static struct page *peek_page(struct mm_struct *mm, unsigned long vaddr)
{
	struct page *page;
	long got;

	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL, NULL);
	if (got != 1)
		return ERR_PTR(got < 0 ? got : -EFAULT);
	return page;
}

/* The opcode at @vaddr in @page, the page mapped there. */
static void page_opcode(struct page *page, unsigned long vaddr,
			uprobe_opcode_t *op)
{
	memcpy_from_page((char *)op, page, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
}

static int read_opcode(struct mm_struct *mm, unsigned long vaddr,
		       uprobe_opcode_t *op)
{
	struct page *page = peek_page(mm, vaddr);

	if (IS_ERR(page))
		return PTR_ERR(page);
	page_opcode(page, vaddr, op);
	put_page(page);
	return 0;
}

/*
 * After a restore: unmap @copy if it equals the file's page again.  Not
 * in a writable mapping (a store after the compare would be lost), nor
 * when pinned for I/O.
 */
static void drop_identical_copy(struct vm_area_struct *vma, unsigned long vaddr,
				struct page *copy)
{
	struct uprobe_bp_table *t;
	struct page *file_page;
	bool same;

	if ((vma->vm_flags & VM_WRITE) || page_maybe_dma_pinned(copy))
		return;
	file_page = find_get_page(vma->vm_file->f_mapping,
				  linear_page_index(vma, vaddr));
	if (!file_page)
		return;
	same = PageUptodate(file_page) && pages_identical(copy, file_page);
	put_page(file_page);
	if (!same)
		return;
	/* The zap's uprobe_munmap() must keep the mapping's SDT updates. */
	uprobe_debug_delay(UPROBE_DELAY_DROP);
	t = uprobe_mm_bpt(vma->vm_mm);
	if (t)
		WRITE_ONCE(t->dropping, current);
	zap_page_range(vma, vaddr & PAGE_MASK, PAGE_SIZE);
	if (t)
		WRITE_ONCE(t->dropping, NULL);
	/* A locked mapping gets the file page now (forced: maybe exec-only). */
	if ((vma->vm_flags & VM_LOCKED) &&
	    get_user_pages_remote(vma->vm_mm, vaddr, 1, FOLL_FORCE, &file_page,
				  NULL, NULL) == 1)
		put_page(file_page);
}

/*
 * Find the PTE that maps @page at @vaddr; @pvmw then holds the page table
 * lock.  Return: false if none does (reclaim or migration got there).
 */
static bool find_pte(struct vm_area_struct *vma, struct page *page,
		     unsigned long vaddr, struct page_vma_mapped_walk *pvmw)
{
	*pvmw = (struct page_vma_mapped_walk){
		.pfn = page_to_pfn(page), .nr_pages = 1,
		.pgoff = page_to_pgoff(page), .vma = vma,
		.address = vaddr & PAGE_MASK, .flags = PVMW_SYNC,
	};
	if (!page_vma_mapped_walk(pvmw))
		return false;
	if (!pvmw->pte || pvmw->address != (vaddr & PAGE_MASK)) {
		page_vma_mapped_walk_done(pvmw);
		return false;
	}
	return true;
}

/*
 * Would installing (or restoring) the picked @items change @page?  Sets
 * ->foreign where an install finds the program's own byte.
 */
static bool page_needs_write(struct uprobe_walk_item *items, unsigned int nr,
			     struct page *page, bool install)
{
	uprobe_opcode_t cur;
	bool any = false;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!items[i].pick)
			continue;
		page_opcode(page, items[i].vaddr, &cur);
		if (is_swbp_insn(&cur) == install)
			continue;
		if (!install || !memcmp(&cur, items[i].orig, UPROBE_SWBP_INSN_SIZE))
			any = true;
		else
			items[i].foreign = true;
	}
	return any;
}

/*
 * Write @swbp (@install) or ->orig at the picked @items in @page, which
 * @vma maps there, or will map once written (@fresh).  Sets ->written
 * where a byte changed.  Return: true if one did.
 */
static bool put_opcodes(struct vm_area_struct *vma, struct page *page,
			bool fresh, struct uprobe_walk_item *items,
			unsigned int nr, bool install, uprobe_opcode_t swbp)
{
	void *kaddr = kmap_local_page(page);
	struct uprobe_walk_item *it;
	bool dirty = false;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		uprobe_opcode_t cur, op = swbp;
		void *at;

		it = &items[i];
		if (!it->pick || it->foreign)
			continue;
		at = kaddr + offset_in_page(it->vaddr);
		memcpy(&cur, at, UPROBE_SWBP_INSN_SIZE);
		if (!install)
			memcpy(&op, it->orig, UPROBE_SWBP_INSN_SIZE);
		/* The program's own byte stays. */
		if (install && !is_swbp_insn(&cur) &&
		    memcmp(&cur, it->orig, UPROBE_SWBP_INSN_SIZE)) {
			it->foreign = true;
			continue;
		}
		/* Nothing to do, or a byte someone else changed. */
		if (!memcmp(&cur, &op, UPROBE_SWBP_INSN_SIZE) ||
		    is_swbp_insn(&cur) == install)
			continue;
		if (fresh)
			memcpy(at, &op, UPROBE_SWBP_INSN_SIZE);
		else
			copy_to_user_page(vma, page, it->vaddr, at, &op,
					  UPROBE_SWBP_INSN_SIZE);
		it->written = true;
		dirty = true;
	}
	kunmap_local(kaddr);
	if (dirty && fresh)
		flush_dcache_page(page);
	return dirty;
}

/*
 * Install the @items over @old, the file's page mapped at @vaddr: map a
 * new private copy with them written.  The copy is charged to the mm's
 * memory cgroup with __GFP_RETRY_MAYFAIL: at its limit this mm is left
 * out (-EDQUOT) where a write fault would OOM-kill the program for a
 * probe.  Return: the copy, with a reference; NULL if nothing was to be
 * written after all; or an ERR_PTR, -EAGAIN when @old is no longer
 * mapped there.
 */
static struct page *map_new_copy(struct vm_area_struct *vma,
				 struct page *old, unsigned long vaddr,
				 struct uprobe_walk_item *items, unsigned int nr,
				 uprobe_opcode_t swbp)
{
	const gfp_t gfp = __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned long addr = vaddr & PAGE_MASK;
	struct mm_struct *mm = vma->vm_mm;
	struct page_vma_mapped_walk pvmw;
	struct mmu_notifier_range range;
	struct page *new;
	pte_t pte, entry;
	int err;

	err = anon_vma_prepare(vma);
	if (err)
		return ERR_PTR(err);
	new = alloc_page_vma(GFP_HIGHUSER_MOVABLE | gfp, vma, addr);
	if (!new)
		return ERR_PTR(-ENOMEM);
	if (mem_cgroup_charge(page_folio(new), mm, GFP_KERNEL | gfp)) {
		put_page(new);
		return ERR_PTR(-EDQUOT);
	}
	if (copy_mc_user_highpage(new, old, addr, vma)) {
		memory_failure_queue(page_to_pfn(old), 0);
		put_page(new);
		return ERR_PTR(-EHWPOISON);
	}
	SetPageUptodate(new);

	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, vma, mm, addr,
				addr + PAGE_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	if (!find_pte(vma, old, addr, &pvmw)) {
		err = -EAGAIN;
		goto out;
	}
	/* Write-protected by userfaultfd: as a forced write fault fails. */
	if (userfaultfd_pte_wp(vma, *pvmw.pte)) {
		err = -EFAULT;
		goto out_unlock;
	}
	/* The file changed under us: nothing to write. */
	if (!put_opcodes(vma, new, true, items, nr, true, swbp))
		goto out_unlock;
	/* As a write fault's copy would be, but not writable. */
	entry = pte_sw_mkyoung(pte_mkdirty(mk_pte(new, vma->vm_page_prot)));
	flush_cache_page(vma, addr, page_to_pfn(old));
	pte = ptep_clear_flush(vma, addr, pvmw.pte);
	if (pte_soft_dirty(pte))
		entry = pte_mksoft_dirty(entry);
	if (pte_uffd_wp(pte))
		entry = pte_mkuffd_wp(entry);
	dec_mm_counter(mm, mm_counter_file(old));
	inc_mm_counter(mm, MM_ANONPAGES);
	page_add_new_anon_rmap(new, vma, addr);
	lru_cache_add_inactive_or_unevictable(new, vma);
	/* The mapping takes the allocation's reference; this is the caller's. */
	get_page(new);
	set_pte_at_notify(mm, addr, pvmw.pte, entry);
	update_mmu_cache(vma, addr, pvmw.pte);
	page_remove_rmap(old, vma, false);
	put_page(old);
	page_vma_mapped_walk_done(&pvmw);
	mmu_notifier_invalidate_range_end(&range);
	return new;

out_unlock:
	page_vma_mapped_walk_done(&pvmw);
out:
	mmu_notifier_invalidate_range_end(&range);
	put_page(new);
	return err ? ERR_PTR(err) : NULL;
}

/*
 * Write @swbp (@install) or ->orig at the picked @items, all on one page
 * of @mm.  Over the file's page an install maps a new copy; otherwise one
 * forced write fault makes the mm's page its own, then it is written.
 */
static int write_page_opcodes(struct mm_struct *mm,
			      struct uprobe_walk_item *items, unsigned int nr,
			      bool install, uprobe_opcode_t swbp)
{
	unsigned int flags = FOLL_FORCE | (install ? FOLL_SPLIT_PMD : 0);
	struct page_vma_mapped_walk pvmw;
	struct vm_area_struct *vma;
	unsigned long vaddr = 0;
	bool dirty, unmapped;
	struct page *page;
	unsigned int i, tries;
	pte_t pte;
	long got;

	mmap_assert_write_locked(mm);
	for (i = 0; i < nr && !vaddr; i++)
		if (items[i].pick)
			vaddr = items[i].vaddr;
	got = get_user_pages_remote(mm, vaddr, 1, flags, &page, &vma, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	/* The file's own page holds no breakpoint of ours. */
	if ((!install && !PageAnon(page)) ||
	    !page_needs_write(items, nr, page, install)) {
		put_page(page);
		return 0;
	}
	/* Not DAX: its pages are mapped without a reference or rmap. */
	if (install && !PageAnon(page) && !is_zone_device_page(page) &&
	    !(vma->vm_flags & VM_MAYSHARE) &&
	    folio_mapping(page_folio(page)) == vma->vm_file->f_mapping) {
		struct page *new = map_new_copy(vma, page, vaddr, items, nr,
						swbp);

		put_page(page);
		if (!IS_ERR_OR_NULL(new))
			put_page(new);
		if (!IS_ERR(new))
			return 0;
		/* Unmapped meanwhile: let the fault path find what is there. */
		if (PTR_ERR(new) != -EAGAIN)
			return PTR_ERR(new);
	} else {
		put_page(page);
	}

	/* Reclaim or migration may unmap the page before the walk: retry. */
	flags |= FOLL_WRITE | FOLL_SPLIT_PMD;
	for (tries = 0; ; tries++) {
		got = get_user_pages_remote(mm, vaddr, 1, flags, &page, &vma,
					    NULL);
		if (got != 1)
			return got < 0 ? got : -EFAULT;
		/* Never write through to the page cache. */
		if (WARN_ON_ONCE(!PageAnon(page) ||
				 (vma->vm_flags & VM_MAYSHARE))) {
			put_page(page);
			return -EFAULT;
		}
		if (install && !page_needs_write(items, nr, page, true)) {
			unmapped = false;
			break;
		}
		/*
		 * Out of the page table while it is written: QEMU's TCG
		 * would keep running stale translations of it.
		 */
		unmapped = find_pte(vma, page, vaddr, &pvmw);
		if (unmapped) {
			pte = ptep_clear_flush(vma, pvmw.address, pvmw.pte);
			break;
		}
		if (tries == 2)
			break;
		put_page(page);
	}
	dirty = put_opcodes(vma, page, false, items, nr, install, swbp);
	if (unmapped) {
		set_pte_at(mm, pvmw.address, pvmw.pte, pte);
		page_vma_mapped_walk_done(&pvmw);
	}
	if (dirty)
		set_page_dirty_lock(page);
	if (!install)
		drop_identical_copy(vma, vaddr, page);
	put_page(page);
	return 0;
}

/**
 * uprobe_write_opcode - write one opcode into @mm's private copy of a page
 * @auprobe: the probe; its insn holds the probed instruction's bytes
 * @mm: the mm
 * @vaddr: the address
 * @opcode: the breakpoint, or the original opcode to restore
 *
 * A byte that is neither is the program's (a JIT's) or a debugger's: it
 * stays.
 *
 * Context: mmap_lock of @mm held for write.
 * Return: 0 when written, 1 when nothing had to be done,
 * UPROBE_OPCODE_FOREIGN when the byte was left to its owner, or -errno.
 */
int uprobe_write_opcode(struct arch_uprobe *auprobe, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode)
{
	bool to_swbp = is_swbp_insn(&opcode);
	struct uprobe_walk_item it = {
		.vaddr = vaddr,
		.orig = to_swbp ? (const void *)&auprobe->insn : &opcode,
		.pick = true,
	};
	int err;

	err = write_page_opcodes(mm, &it, 1, to_swbp, opcode);
	if (err)
		return err;
	if (it.foreign)
		return UPROBE_OPCODE_FOREIGN;
	return it.written ? 0 : 1;
}

/**
 * set_swbp - write the breakpoint at @vaddr in @mm
 * @aup: the probe
 * @mm: the mm
 * @vaddr: the probed address
 *
 * Context: mmap_lock of @mm held for write.
 * Return: as uprobe_write_opcode().
 */
int __weak set_swbp(struct arch_uprobe *aup, struct mm_struct *mm,
		    unsigned long vaddr)
{
	return uprobe_write_opcode(aup, mm, vaddr, UPROBE_SWBP_INSN);
}

/**
 * set_orig_insn - restore the original opcode at @vaddr in @mm
 * @aup: the probe; its insn holds the original bytes
 * @mm: the mm
 * @vaddr: the probed address
 *
 * Context: mmap_lock of @mm held for write.
 * Return: as uprobe_write_opcode().
 */
int __weak set_orig_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			 unsigned long vaddr)
{
	return uprobe_write_opcode(aup, mm, vaddr,
				   *(uprobe_opcode_t *)&aup->insn);
}

/*
 * Write or restore the picked @items of one page; ->failed where not.
 * Arm overrides set_swbp(): one opcode at a time there.
 */
static int write_items(struct mm_struct *mm, struct uprobe_walk_item *items,
		       unsigned int nr, bool install)
{
	struct uprobe_walk_item *it;
	unsigned int i;
	int ret, err = 0;

	if (!IS_ENABLED(CONFIG_ARM)) {
		err = write_page_opcodes(mm, items, nr, install,
					 UPROBE_SWBP_INSN);
		for (i = 0; err && i < nr; i++)
			items[i].failed = items[i].pick;
		return err;
	}
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (!it->pick)
			continue;
		if (install)
			ret = set_swbp(&it->uprobe->arch, mm, it->vaddr);
		else
			ret = set_orig_insn(&it->uprobe->arch, mm, it->vaddr);
		it->failed = ret < 0;
		it->written = !ret;
		it->foreign = ret == UPROBE_OPCODE_FOREIGN;
		if (ret < 0 && !err)
			err = ret;
	}
	return err;
}

/*
 * Add the table entries of the picked @items; those already there are
 * unpicked.  The first fill of the table's pool makes room for @room
 * entries, then @room is zeroed.  Return: how many are still picked.
 */
static unsigned int claim_page_entries(struct uprobe_bp_table *t,
				       struct uprobe_walk_item *items,
				       unsigned int nr, unsigned int *room)
{
	unsigned int i, picked = 0, tries = 0, more;
	int ret;

	uprobe_bpt_lock(t);
	for (i = 0; i < nr; i++) {
		struct uprobe_walk_item *it = &items[i];

		if (!it->pick)
			continue;
		do {
			ret = uprobe_bpt_claim_locked(t, it->vaddr, it->uprobe);
			more = *room ?: 1;
			if (ret == -ENOSPC)
				*room = 0;
		} while (ret < 0 && uprobe_bpt_retry(t, &ret, more, &tries));
		if (ret < 0 || ret == 1) {
			it->pick = false;
			if (ret < 0)
				it->err = ret;
			continue;
		}
		/* Not over a dead probe's entry: see install_page(). */
		it->fresh = !ret;
		picked++;
	}
	uprobe_bpt_unlock(t);
	return picked;
}

/*
 * Ask the filters once: set ->want on @items[@i..] below offset @end and
 * count them in @room.  Return: the index of the first item past @end.
 */
static unsigned int items_in_vma(struct mm_struct *mm,
				 struct uprobe_walk_item *items, unsigned int i,
				 unsigned int nr, loff_t end, unsigned int *room)
{
	struct uprobe_walk_item *it;

	*room = 0;
	for (; i < nr && items[i].uprobe->offset < end; i++) {
		it = &items[i];
		it->want = !it->err && uprobe_item_wanted(it, mm);
		*room += it->want;
	}
	return i;
}

/* Reset the walk's fields of @it for @vma, unpicked. */
static void item_reset(struct uprobe_walk_item *it, struct vm_area_struct *vma)
{
	it->vaddr = offset_to_vaddr(vma, it->uprobe->offset);
	it->orig = &it->uprobe->arch.insn;
	it->pick = false;
	it->written = false;
	it->foreign = false;
	it->failed = false;
}

/* Install the wanted @items of one page of @vma; errors go to ->err. */
static void install_page(struct vm_area_struct *vma,
			 struct uprobe_walk_item *items, unsigned int nr,
			 unsigned int *room)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_walk_item *it;
	struct uprobe_bp_table *t;
	unsigned int i, picked = 0;
	int err;

	for (i = 0; i < nr; i++) {
		it = &items[i];
		item_reset(it, vma);
		/* Not here, or failed elsewhere (undone later). */
		if (!it->want || it->err)
			continue;
		err = uprobe_prepare(it->uprobe, vma, it->vaddr);
		if (err) {
			it->err = err;
			continue;
		}
		it->pick = true;
		picked++;
	}
	if (!picked)
		return;
	t = uprobe_bpt_create(mm);
	if (!t) {
		for (i = 0; i < nr; i++)
			if (items[i].pick)
				items[i].err = -ENOMEM;
		return;
	}
	if (!claim_page_entries(t, items, nr, room))
		return;

	/* Before the breakpoints can be hit: the trap handler checks it. */
	if (!test_bit(MMF_HAS_UPROBES, &mm->flags))
		set_bit(MMF_HAS_UPROBES, &mm->flags);
	err = write_items(mm, items, nr, true);
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (!it->pick)
			continue;
		/* No entry, not even the dead probe's the claim replaced. */
		if (it->failed || it->foreign) {
			uprobe_bpt_erase(t, it->vaddr);
			/* A memory cgroup at its limit leaves only its mm out. */
			if (it->failed && err == -EDQUOT)
				pr_warn_ratelimited("probe at %pD:%#llx left out of an mm whose memory cgroup is at its limit\n",
						    vma->vm_file,
						    (unsigned long long)it->uprobe->offset);
			else if (it->failed)
				it->err = err;
			continue;
		}
		if (!it->uprobe->ref_ctr_offset)
			continue;
		/* One found in place was counted, unless a split lost it. */
		if (it->written)
			uprobe_refctr_on_install(it->uprobe, mm, t, it->vaddr);
		else if (it->fresh)
			uprobe_refctr_on_refind(it->uprobe, mm, t, it->vaddr);
	}
}

/*
 * Remove the breakpoints of @items, one page of @vma, that no consumer
 * wants in its mm (all of them, with @force).
 */
static void remove_page(struct vm_area_struct *vma,
			struct uprobe_walk_item *items, unsigned int nr,
			bool force)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t = uprobe_mm_bpt(mm);
	struct uprobe_walk_item *it;
	unsigned int i, picked = 0;

	for (i = 0; i < nr; i++) {
		it = &items[i];
		item_reset(it, vma);
		if (!uprobe_may_have_bps(it->uprobe))
			continue;
		if (!force && uprobe_has_consumers(it->uprobe) &&
		    uprobe_filter_chain(it->uprobe, UPROBE_FILTER_UNREGISTER, mm))
			continue;
		it->pick = true;
		picked++;
	}
	if (picked && t) {
		uprobe_bpt_lock(t);
		for (i = 0; i < nr; i++) {
			it = &items[i];
			/* Not if a new probe took the place since. */
			if (it->pick &&
			    !uprobe_bpt_release_locked(t, it->vaddr, it->uprobe)) {
				it->pick = false;
				picked--;
			}
		}
		uprobe_bpt_unlock(t);
	}
	if (!picked)
		return;
	write_items(mm, items, nr, false);
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (!it->pick)
			continue;
		/* Not restored: a hit must find the probe, not SIGTRAP. */
		if (it->failed) {
			if (t)
				uprobe_bpt_add(t, it->vaddr, it->uprobe);
		} else if (it->written && it->uprobe->ref_ctr_offset) {
			uprobe_refctr_on_remove(it->uprobe, mm, t, it->vaddr);
		}
	}
}

/* Install or remove @items[@i..] below offset @end in @vma, by page. */
static void walk_vma(struct vm_area_struct *vma, struct uprobe_walk_item *items,
		     unsigned int i, unsigned int nr, loff_t end, bool install,
		     unsigned int *room)
{
	unsigned int j;
	pgoff_t page;

	for (; i < nr && items[i].uprobe->offset < end; i = j) {
		page = items[i].uprobe->offset >> PAGE_SHIFT;
		for (j = i + 1; j < nr && items[j].uprobe->offset < end; j++)
			if (items[j].uprobe->offset >> PAGE_SHIFT != page)
				break;
		if (install)
			install_page(vma, items + i, j - i, room);
		else
			remove_page(vma, items + i, j - i, false);
	}
}

/**
 * uprobe_first_item_from - the first item of a batch at or after @offset
 * @items: the batch, sorted by offset
 * @nr: its size
 * @offset: the file offset
 *
 * Return: its index, or @nr.
 */
unsigned int uprobe_first_item_from(struct uprobe_walk_item *items,
				    unsigned int nr, loff_t offset)
{
	unsigned int lo = 0, hi = nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (items[mid].uprobe->offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mm's VMAs as they are under its lock, not when the mms were listed. */
static void walk_batch_mm(struct mm_struct *mm, struct inode *inode,
			  struct uprobe_walk_item *items, unsigned int nr,
			  bool install, unsigned int *to_analyze)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct uprobe_bp_table *t;
	struct vm_area_struct *vma;
	unsigned int i, j, room = 0;
	loff_t end;

	for_each_vma(vmi, vma) {
		if (!vma_probeable(vma) || file_inode(vma->vm_file) != inode ||
		    (install && !vma_installable(vma)))
			continue;
		end = vaddr_to_offset(vma, vma->vm_end);
		i = uprobe_first_item_from(items, nr, vaddr_to_offset(vma, vma->vm_start));
		if (install) {
			j = items_in_vma(mm, items, i, nr, end, &room);
			if (*to_analyze)
				*to_analyze -= min(*to_analyze,
						   uprobe_analyze_items(vma, items + i, j - i));
		}
		walk_vma(vma, items, i, nr, end, install, &room);
	}
	/* What the walk's pool fills did not use. */
	t = uprobe_mm_bpt(mm);
	if (t)
		uprobe_bpt_trim_pool(t);
}

/**
 * uprobe_walk_batch - install or remove the breakpoints of many probes
 * @inode: the file all the probes are on
 * @items: the probes, sorted by offset; ->uc the consumer to install for,
 *	or NULL to remove where no consumer wants it
 * @nr: how many
 *
 * No register_rwsem needed: a consumer is listed before its breakpoint is
 * written, and each decision reads the list under the mm's mmap_lock.
 * Install errors go to ->err; items with ->err set are skipped.
 *
 * Context: process context, may sleep.
 */
void uprobe_walk_batch(struct inode *inode, struct uprobe_walk_item *items,
		       unsigned int nr)
{
	bool install = items[0].uc;
	struct mm_struct **mms;
	unsigned int nr_mms = 0, i, to_analyze = 0;
	loff_t last = items[nr - 1].uprobe->offset;

	might_sleep();
	if (install)
		uprobe_analyze_ahead(inode, items, nr);
	down_write(&dup_mmap_sem);
	mms = uprobe_collect_mms(inode, items[0].uprobe->offset >> PAGE_SHIFT,
				 last >> PAGE_SHIFT, &nr_mms,
				 install ? GFP_KERNEL : GFP_KERNEL | __GFP_NOFAIL);
	if (IS_ERR(mms)) {
		for (i = 0; i < nr; i++)
			if (!items[i].err)
				items[i].err = PTR_ERR(mms);
		goto out;
	}
	for (i = 0; install && i < nr; i++)
		if (!test_bit(UPROBE_F_ANALYZED, &items[i].uprobe->flags))
			to_analyze++;
	for (i = 0; i < nr_mms; i++) {
		mmap_write_lock(mms[i]);
		if (!check_stable_address_space(mms[i]) &&
		    (install || test_bit(MMF_HAS_UPROBES, &mms[i]->flags)))
			walk_batch_mm(mms[i], inode, items, nr, install,
				      &to_analyze);
		mmap_write_unlock(mms[i]);
		mmput(mms[i]);
		cond_resched();
	}
	kvfree(mms);
out:
	up_write(&dup_mmap_sem);
}

/**
 * uprobe_install_all - write a probe's breakpoint for a new consumer
 * @uprobe: the probe
 * @uc: the consumer whose filter decides, per mm
 *
 * Context: @uprobe->register_rwsem held for write.
 * Return: 0, or the first error (the caller undoes the rest).
 */
int uprobe_install_all(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	struct uprobe_walk_item it = { .uprobe = uprobe, .uc = uc };

	lockdep_assert_held_write(&uprobe->register_rwsem);
	uprobe_walk_batch(uprobe->inode, &it, 1);
	return it.err;
}

/**
 * uprobe_remove_all - take a probe's breakpoint out where nobody wants it
 * @uprobe: the probe
 *
 * Context: @uprobe->register_rwsem held for write.
 */
void uprobe_remove_all(struct uprobe *uprobe)
{
	struct uprobe_walk_item it = { .uprobe = uprobe };

	lockdep_assert_held_write(&uprobe->register_rwsem);
	uprobe_walk_batch(uprobe->inode, &it, 1);
}

/**
 * uprobe_bp_lookup_slow - find the probe at @vaddr through the VMA
 * @mm: current->mm
 * @vaddr: the breakpoint address
 * @trap: set to whether @vaddr holds a trap instruction of the program's;
 *	false when a probe is returned, the VMA is gone, the byte cannot be
 *	read, and on a fatal signal
 *
 * Re-adds the lost table entry if the breakpoint is there.  @trap is read
 * under mmap_lock like the table: read after dropping it, a breakpoint
 * put back meanwhile would look like the program's int3.
 *
 * Context: not under uprobes_srcu (the program may hold its mmap_lock);
 * takes mmap_lock for read, killable, and may fault the page in under it.
 * Return: the probe, referenced; NULL if none, or on a fatal signal.
 */
struct uprobe *uprobe_bp_lookup_slow(struct mm_struct *mm, unsigned long vaddr,
				     bool *trap)
{
	uprobe_opcode_t op = 0;	/* wider than the breakpoint on some archs */
	struct uprobe_bp_table *t;
	struct vm_area_struct *vma;
	struct uprobe *uprobe;
	bool have_op;
	int idx;

	*trap = false;
	if (mmap_read_lock_killable(mm))
		return NULL;
	t = uprobe_mm_bpt(mm);
	idx = srcu_read_lock(&uprobes_srcu);
	uprobe = t ? uprobe_bpt_lookup(t, vaddr) : NULL;
	if (uprobe && !uprobe_tryget(uprobe))
		uprobe = NULL;
	srcu_read_unlock(&uprobes_srcu, idx);
	if (uprobe)
		goto out;
	vma = vma_lookup(mm, vaddr);
	/* Unmapped since: the restart faults as the fetch would. */
	if (!vma)
		goto out;
	/*
	 * Without faulting first (mm is current's): that also reads a
	 * VM_PFNMAP page; the page is looked up if the restore zapped it.
	 */
	have_op = !copy_from_user_nofault(&op, (void __user *)vaddr,
					  UPROBE_SWBP_INSN_SIZE) ||
		  !read_opcode(mm, vaddr, &op);
	if (vma_probeable(vma))
		uprobe = uprobe_find(file_inode(vma->vm_file),
				     vaddr_to_offset(vma, vaddr));
	/* Ours only with our breakpoint there: a refused probe's is not. */
	if (uprobe && (!have_op || !is_swbp_insn(&op) ||
		       !uprobe_may_have_bps(uprobe))) {
		uprobe_put(uprobe);
		uprobe = NULL;
	}
	if (!uprobe) {
		*trap = have_op && is_trap_insn(&op);
		goto out;
	}
	/* The table takes its own reference; ours goes to the caller. */
	t = uprobe_bpt_create(mm);
	if (t)
		uprobe_bpt_add(t, vaddr, uprobe);
out:
	mmap_read_unlock(mm);
	return uprobe;
}

/* Take @uprobe's breakpoint at @vaddr out of current->mm, if it maps it. */
static bool remove_current(struct uprobe *uprobe, unsigned long vaddr)
{
	struct uprobe_walk_item it = { .uprobe = uprobe };
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool found;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, vaddr);
	found = vma_maps_probe(vma, uprobe, vaddr);
	if (found)
		remove_page(vma, &it, 1, true);
	mmap_write_unlock(mm);
	return found;
}

/**
 * uprobe_unapply_current - remove a breakpoint no filter wants in current->mm
 * @uprobe: the probe just hit
 * @vaddr: its address
 *
 * Context: takes register_rwsem (read), then mmap_lock.
 * Return: true when the original instruction is back at @vaddr.
 */
bool uprobe_unapply_current(struct uprobe *uprobe, unsigned long vaddr)
{
	bool removed = false;

	down_read(&uprobe->register_rwsem);
	if (!uprobe_filter_chain(uprobe, UPROBE_FILTER_UNREGISTER, current->mm))
		removed = remove_current(uprobe, vaddr);
	up_read(&uprobe->register_rwsem);
	return removed;
}

/**
 * uprobe_remove_current - take a breakpoint out of current->mm, wanted or not
 * @uprobe: the probe just hit, whose instruction this thread cannot run
 * @vaddr: its address
 *
 * Context: takes mmap_lock.
 */
void uprobe_remove_current(struct uprobe *uprobe, unsigned long vaddr)
{
	remove_current(uprobe, vaddr);
}

/* Install @nr probes of @vma, by offset, and drop their references. */
static void mmap_install(struct vm_area_struct *vma,
			 struct uprobe_walk_item *items, unsigned int nr)
{
	struct uprobe_bp_table *t;
	unsigned int i, room;

	items_in_vma(vma->vm_mm, items, 0, nr, LLONG_MAX, &room);
	if (room)
		walk_vma(vma, items, 0, nr, LLONG_MAX, true, &room);
	t = uprobe_mm_bpt(vma->vm_mm);
	if (t)
		uprobe_bpt_trim_pool(t);
	for (i = 0; i < nr; i++) {
		/* Most likely an instruction the arch refuses, seen only now. */
		if (items[i].err)
			pr_warn_ratelimited("pid %d: probe at %pD:%#llx not installed: %d\n",
					    current->pid, vma->vm_file,
					    (unsigned long long)items[i].uprobe->offset,
					    items[i].err);
		uprobe_put(items[i].uprobe);
	}
}

/* Probes a new mapping installs at a time. */
#define MMAP_CHUNK	64

/**
 * uprobe_mmap - write the breakpoints a new mapping needs
 * @vma: a VMA just mapped (or re-made by a merge or split)
 *
 * Context: mmap_lock held for write.
 * Return: 0 (failures leave the mapping without the breakpoint).
 */
int uprobe_mmap(struct vm_area_struct *vma)
{
	struct uprobe_walk_item one, *items;
	unsigned int nr, keep, cap;
	struct inode *inode;
	loff_t next, end;
	pgoff_t last;
	bool done;

	mmap_assert_write_locked(vma->vm_mm);
	/* mremap() calls again once the entries have moved in. */
	if (!vma->vm_file || uprobe_moving_into(vma))
		return 0;
	uprobe_refctr_on_mmap(vma);
	if (!vma_installable(vma) || uprobe_registry_empty())
		return 0;

	inode = file_inode(vma->vm_file);
	end = vaddr_to_offset(vma, vma->vm_end);
	/* No allocation for the many mappings without probes. */
	nr = uprobe_collect_range(inode, vaddr_to_offset(vma, vma->vm_start),
				  end, &one, 1);
	if (!nr)
		return 0;
	/* Without memory for more, one probe at a time does the same. */
	cap = MMAP_CHUNK;
	items = kmalloc_array(cap, sizeof(*items), GFP_KERNEL);
	if (items) {
		items[0] = one;
	} else {
		items = &one;
		cap = 1;
	}

	next = one.uprobe->offset + 1;
	for (;;) {
		nr += uprobe_collect_range(inode, next, end, items + nr, cap - nr);
		if (!nr)
			break;
		next = items[nr - 1].uprobe->offset + 1;
		done = nr < cap;
		/* The last page's probes wait, unless they fill the chunk. */
		keep = 0;
		if (!done) {
			last = items[nr - 1].uprobe->offset >> PAGE_SHIFT;
			while (keep < nr &&
			       items[nr - 1 - keep].uprobe->offset >> PAGE_SHIFT == last)
				keep++;
			if (keep == nr)
				keep = 0;
		}
		mmap_install(vma, items, nr - keep);
		if (done)
			break;
		memmove(items, items + nr - keep, keep * sizeof(*items));
		nr = keep;
	}

	if (items != &one)
		kfree(items);
	return 0;
}

/**
 * uprobe_munmap - forget the breakpoints of a range being unmapped
 * @vma: the VMA
 * @start: first address of the range
 * @end: address past it
 *
 * Context: mmap_lock held, or i_mmap_rwsem for a truncation.
 */
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t;

	/* An mm without users is being torn down, table and all. */
	if (start >= end || !vma_probeable(vma) || !atomic_read(&mm->mm_users))
		return;
	lockdep_assert(lockdep_is_held(&mm->mmap_lock) ||
		       lockdep_is_held(&vma->vm_file->f_mapping->i_mmap_rwsem));
	/* A truncation may race with uprobe_clear_state(): see there. */
	rcu_read_lock();
	t = uprobe_mm_bpt(mm);
	uprobe_debug_delay(UPROBE_DELAY_MUNMAP);
	if (!t || READ_ONCE(t->dropping) == current)
		goto out;
	uprobe_bpt_erase_range(t, start, end);
	uprobe_refctr_on_munmap(t, start, end);
out:
	rcu_read_unlock();
}

/**
 * uprobe_start_dup_mmap - fork starts copying an mm: walks wait
 */
void uprobe_start_dup_mmap(void)
{
	down_read(&dup_mmap_sem);
}

/**
 * uprobe_end_dup_mmap - fork is done copying an mm
 */
void uprobe_end_dup_mmap(void)
{
	up_read(&dup_mmap_sem);
}

/**
 * uprobe_start_move - mremap() is about to move page table entries
 * @mm: the mm
 * @start: first address of the mapping they move to
 * @end: address past it
 *
 * A merge of the destination with a neighbouring mapping of the file
 * runs uprobe_mmap() on the grown mapping before the entries move.  Any
 * page it mapped between @start and @end, a breakpoint's copy or one a
 * fault mapped around it, move_page_tables() would write over and leak.
 * Until uprobe_end_move(), uprobe_mmap() leaves a mapping that overlaps
 * the range alone; mremap() calls it once the entries are in place.
 *
 * Context: @mm's mmap_lock held for write.
 */
void uprobe_start_move(struct mm_struct *mm, unsigned long start,
		       unsigned long end)
{
	mmap_assert_write_locked(mm);
	mm->uprobes_state.move_start = start;
	mm->uprobes_state.move_end = end;
}

/**
 * uprobe_end_move - the move of uprobe_start_move() is done
 * @mm: the mm
 *
 * Context: @mm's mmap_lock held for write.
 */
void uprobe_end_move(struct mm_struct *mm)
{
	mmap_assert_write_locked(mm);
	mm->uprobes_state.move_start = 0;
	mm->uprobes_state.move_end = 0;
}

/* The VMA at @vaddr of @arg (the parent's mm) goes to the child. */
static bool vma_copied(unsigned long vaddr, void *arg)
{
	struct vm_area_struct *vma = vma_lookup(arg, vaddr);

	return vma && !(vma->vm_flags & VM_DONTCOPY);
}

/**
 * uprobe_dup_mmap - give a forked mm its parent's breakpoint state
 * @oldmm: the parent's mm
 * @newmm: the child's, not yet visible
 *
 * Entries lost for lack of memory are found again by the slow lookup.
 *
 * Context: @oldmm's mmap_lock held for write.
 */
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct uprobe_bp_table *old = uprobe_mm_bpt(oldmm), *new;

	mmap_assert_write_locked(oldmm);
	if (!test_bit(MMF_HAS_UPROBES, &oldmm->flags))
		return;
	set_bit(MMF_HAS_UPROBES, &newmm->flags);
	xol_dup_area(oldmm, newmm);
	if (!old)
		return;
	new = uprobe_bpt_create(newmm);
	if (!new)
		return;
	uprobe_bpt_dup(new, old, vma_copied, oldmm);
	uprobe_refctr_on_dup(new, old, vma_copied, oldmm);
}

static void uprobe_bpt_free_work(struct work_struct *work)
{
	struct uprobe_bp_table *t = container_of(to_rcu_work(work),
						 struct uprobe_bp_table, free_work);

	uprobe_refctr_free_all(t);
	uprobe_bpt_free(t);
}

/**
 * uprobe_clear_state - free an mm's uprobes state
 * @mm: the mm, without users any more
 *
 * The table is freed after an RCU grace period: until the VMAs are
 * unlinked, a truncation may still call uprobe_munmap() on them.
 */
void uprobe_clear_state(struct mm_struct *mm)
{
	struct uprobe_bp_table *t = uprobe_mm_bpt(mm);

	xol_free_area(mm);
	if (!t)
		return;
	WRITE_ONCE(mm->uprobes_state.bp_table, NULL);
	INIT_RCU_WORK(&t->free_work, uprobe_bpt_free_work);
	queue_rcu_work(system_wq, &t->free_work);
}
