// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: writing and removing breakpoints in the mms that map a file.
 *
 * How a breakpoint gets into one mm.  The probed page of a private,
 * executable file mapping is broken copy-on-write for this mm alone (a
 * forced write fault through get_user_pages_remote(), the way ptrace
 * pokes text), and the breakpoint opcode is written into that anonymous
 * copy.  The page cache page, the file and every other mm keep the
 * original bytes.  One opcode is written at a time, in one store, so
 * another thread of the mm executes either the old instruction or the
 * breakpoint, never a mix.  Removing it stores the original opcode back;
 * when the copy then equals the file's page again, the copy is unmapped
 * so that the next fault maps the shared file page and the memory is
 * given back.  A thread that trapped on a breakpoint removed meanwhile
 * finds no probe and no breakpoint at the address, and simply executes
 * the restored instruction (uprobes_hit.c).
 *
 * The bp table.  Each mm with breakpoints has a table of them (struct
 * uprobe_bp_table): address -> probe, read by the hit path without locks.
 * It is a cache of what is in the pages: an entry is added before its
 * breakpoint is written (a thread that traps on it finds it) and erased
 * before it is restored, and paths that
 * lose entries while the pages keep their breakpoints (vma merges and
 * splits, mremap, truncation) are caught by the hit path, which falls back
 * to looking the probe up through the VMA and re-adds the entry.  What it
 * must never hold is an entry for an address that now maps something
 * else: every path that unmaps a range calls uprobe_munmap(), which erases
 * the entries in it, and fork copies only entries of copied VMAs.
 *
 * Memory (x86_64): the table costs 21 to 43 bytes per installed
 * breakpoint (uprobes_bptable.c), and each probed page a private 4 KiB
 * copy while it holds breakpoints.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/oom.h>
#include <linux/pagemap.h>
#include <linux/rmap.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/*
 * See the lock list in uprobes.c.  A plain rwsem: a percpu one makes each
 * install or remove walk wait for an RCU grace period to take it for
 * write (milliseconds, more than the walk of a batch of hundreds of
 * probes), to spare fork one atomic next to the tasklist_lock it takes
 * for write anyway.
 */
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

bool __weak is_swbp_insn(uprobe_opcode_t *insn)
{
	return *insn == UPROBE_SWBP_INSN;
}

bool __weak is_trap_insn(uprobe_opcode_t *insn)
{
	return is_swbp_insn(insn);
}

/* ---- reading and writing one opcode ---- */

/*
 * The page at @vaddr of @mm as it is, without breaking copy-on-write or
 * splitting a huge page; NULL when it is the file's own page: no
 * breakpoint of ours is in the page cache, so there is nothing to restore
 * there and the mm must not be touched.  An ERR_PTR() when the page could
 * not be had (the caller may have a fatal signal pending).
 */
static struct page *private_copy(struct mm_struct *mm, unsigned long vaddr)
{
	struct page *page;
	long got;

	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL, NULL);
	if (got != 1)
		return ERR_PTR(got < 0 ? got : -EFAULT);
	if (!PageAnon(page)) {
		put_page(page);
		return NULL;
	}
	return page;
}

/* Is a breakpoint at @vaddr in @page (mapped at @vaddr's page)? */
static bool page_has_swbp(struct page *page, unsigned long vaddr)
{
	uprobe_opcode_t cur;

	memcpy_from_page((char *)&cur, page, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
	return is_swbp_insn(&cur);
}

/* Is there a jump of ours at @vaddr in @page (mapped at @vaddr's page)? */
static bool page_has_jump(struct mm_struct *mm, struct page *page,
			  unsigned long vaddr)
{
	u8 code[UPROBE_JUMP_INSN_BYTES];

	if (!rcu_access_pointer(mm->uprobes_state.jumps) ||
	    offset_in_page(vaddr) + sizeof(code) > PAGE_SIZE)
		return false;
	memcpy_from_page((char *)code, page, offset_in_page(vaddr),
			 sizeof(code));
	return uprobe_jump_at(mm, vaddr, code);
}

/* Read the opcode at @vaddr of @mm without breaking copy-on-write. */
static int read_opcode(struct mm_struct *mm, unsigned long vaddr,
		       uprobe_opcode_t *opcode, bool *jump)
{
	struct page *page;
	long got;

	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	memcpy_from_page((char *)opcode, page, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
	*jump = page_has_jump(mm, page, vaddr);
	put_page(page);
	return 0;
}

/*
 * After a restore: if this mm's copy of the page equals the file's page
 * again, unmap the copy; the next fault maps the file page.  Not in a
 * writable mapping (another thread may store into the copy between the
 * compare and the unmap, and its store would be lost), nor a page pinned
 * for I/O (its user would keep the copy while the program saw another
 * page).  A locked mapping gets the file's page back at once.
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
	/*
	 * The zap calls uprobe_munmap(), whose scan of the whole table would
	 * find nothing: every restore erases the entry first, and the
	 * mapping (with any semaphore update it waits for) stays.
	 */
	uprobe_debug_delay(UPROBE_DELAY_DROP);
	t = bp_table(vma->vm_mm);
	if (t)
		WRITE_ONCE(t->dropping, current);
	zap_page_range(vma, vaddr & PAGE_MASK, PAGE_SIZE);
	if (t)
		WRITE_ONCE(t->dropping, NULL);
	/* Forced: an execute-only mapping is locked too. */
	if ((vma->vm_flags & VM_LOCKED) &&
	    get_user_pages_remote(vma->vm_mm, vaddr, 1, FOLL_FORCE, &file_page,
				  NULL, NULL) == 1)
		put_page(file_page);	/* mapped and locked again */
}

/*
 * Take @page, the mm's copy mapped at @vaddr of @vma, out of the page
 * table while its bytes change; @pvmw then holds the page table lock, and
 * @pte the entry for uprobe_page_remap() to put back.  On x86 a one-byte int3
 * written into running code is safe, but an emulator need not be: QEMU's
 * TCG, translating the page on another vCPU while it is written, keeps
 * the old bytes for as long as the page stays mapped (a breakpoint
 * installed, never hit; or, restored, a trap that never ends).  With the
 * entry cleared and flushed, no CPU running the mm is still fetching
 * from the page (an IPI is taken between instructions, and TCG takes it
 * between translated blocks), and none fetches from it until it is back:
 * a thread that touches it faults and waits for our mmap_lock.  A jump
 * taken out meanwhile needs no step-by-step sync.  The same page goes
 * back, so secondary MMUs need not know.  Return: false when the page is
 * not mapped by a PTE there (nothing is held then).
 */
bool uprobe_page_unmap(struct vm_area_struct *vma, struct page *page,
		       unsigned long vaddr, struct page_vma_mapped_walk *pvmw,
		       pte_t *pte)
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
	*pte = ptep_clear_flush(pvmw->vma, pvmw->address, pvmw->pte);
	return true;
}

void uprobe_page_remap(struct page_vma_mapped_walk *pvmw, pte_t pte)
{
	set_pte_at(pvmw->vma->vm_mm, pvmw->address, pvmw->pte, pte);
	page_vma_mapped_walk_done(pvmw);
}

/*
 * Will an install of the picked @items write a byte into @page?  Not
 * where the breakpoint is already, nor over a byte of the program's.
 */
static bool install_writes(struct uprobe_walk_item *items, unsigned int nr,
			   struct page *page)
{
	uprobe_opcode_t cur;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!items[i].pick)
			continue;
		memcpy_from_page((char *)&cur, page,
				 offset_in_page(items[i].vaddr),
				 UPROBE_SWBP_INSN_SIZE);
		if (!is_swbp_insn(&cur) &&
		    !memcmp(&cur, items[i].orig, UPROBE_SWBP_INSN_SIZE))
			return true;
	}
	return false;
}

/*
 * Write the breakpoints of the picked @items, all on one page of @mm
 * (@install, @swbp being the breakpoint opcode), or put back their
 * ->orig bytes, in this mm's private copy of the page: one forced write
 * fault (the way ptrace pokes text) for all of them.  A restore looks
 * first: an mm whose page has no breakpoint of ours (it never got one,
 * or the program or a debugger changed the bytes) is left exactly as it
 * is, no copy made, no huge page split.  After restores, a copy equal to
 * the file's page again is dropped.  Sets ->written where a byte changed
 * and ->foreign where it was left to its owner (see uprobe_write_opcode()).
 */
static int write_page_opcodes(struct mm_struct *mm,
			      struct uprobe_walk_item *items, unsigned int nr,
			      bool install, uprobe_opcode_t swbp)
{
	unsigned int flags = FOLL_FORCE | FOLL_WRITE | FOLL_SPLIT_PMD;
	struct page_vma_mapped_walk pvmw;
	struct uprobe_walk_item *it;
	struct vm_area_struct *vma;
	unsigned long vaddr = 0;
	bool dirty = false, unmapped;
	struct page *page;
	unsigned int i, tries;
	void *kaddr;
	pte_t pte;
	long got;

	mmap_assert_write_locked(mm);
	for (i = 0; i < nr && !vaddr; i++)
		if (items[i].pick)
			vaddr = items[i].vaddr;
	if (!install) {
		bool any = false;

		page = private_copy(mm, vaddr);
		if (IS_ERR_OR_NULL(page))
			return PTR_ERR_OR_ZERO(page);
		for (i = 0; i < nr && !any; i++)
			any = items[i].pick &&
			      (page_has_swbp(page, items[i].vaddr) ||
			       page_has_jump(mm, page, items[i].vaddr));
		put_page(page);
		if (!any)
			return 0;
	}
	/*
	 * It breaks COW even when there turns out to be nothing to write,
	 * but then the page is a copy already (a breakpoint is there).
	 * Reclaim or migration may unmap the page between the fault and
	 * the walk (our reference does not stop them): fault it in again.
	 */
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
		if (install && !install_writes(items, nr, page)) {
			unmapped = false;
			break;
		}
		unmapped = uprobe_page_unmap(vma, page, vaddr, &pvmw, &pte);
		if (unmapped || tries == 2)
			break;
		put_page(page);
	}
	kaddr = kmap_local_page(page);
	for (i = 0; i < nr; i++) {
		uprobe_opcode_t cur, op = swbp;
		void *at;

		it = &items[i];
		if (!it->pick)
			continue;
		at = kaddr + offset_in_page(it->vaddr);
		/* A jump to a stub goes first: the breakpoint is back. */
		if (!install && it->uprobe) {
			const u8 *orig = (const u8 *)&it->uprobe->arch.insn;

			if (uprobe_jump_undo(vma, page, it->vaddr, at, orig,
					     !unmapped)) {
				dirty = true;
			} else if (uprobe_jump_hidden(mm, it->vaddr, at, orig)) {
				it->foreign = true;
				continue;
			}
		}
		memcpy(&cur, at, UPROBE_SWBP_INSN_SIZE);
		if (!install)
			memcpy(&op, it->orig, UPROBE_SWBP_INSN_SIZE);
		/* The program's own byte stays; a jump of ours is installed. */
		if (install && !is_swbp_insn(&cur) &&
		    memcmp(&cur, it->orig, UPROBE_SWBP_INSN_SIZE)) {
			it->foreign = !page_has_jump(mm, page, it->vaddr);
			continue;
		}
		/* Nothing to do, or a byte someone else changed: left. */
		if (!memcmp(&cur, &op, UPROBE_SWBP_INSN_SIZE) ||
		    is_swbp_insn(&cur) == install)
			continue;
		copy_to_user_page(vma, page, it->vaddr, at, &op,
				  UPROBE_SWBP_INSN_SIZE);
		it->written = true;
		dirty = true;
	}
	kunmap_local(kaddr);
	if (unmapped)
		uprobe_page_remap(&pvmw, pte);
	if (dirty)
		set_page_dirty_lock(page);
	if (!install)
		drop_identical_copy(vma, vaddr, page);
	put_page(page);
	return 0;
}

/**
 * uprobe_write_opcode - write one opcode into @mm's private copy of a page
 * @auprobe: the probe, whose insn holds the probed instruction's bytes
 * @mm: the mm, with its mmap_lock held for write
 * @vaddr: where
 * @opcode: the breakpoint, or the original opcode to restore
 *
 * Writing the breakpoint where one already is, or restoring where there is
 * none (another tool changed the byte, or it was never written), does
 * nothing.  Nor does writing it over a byte that is not the probed
 * instruction's: the program (a JIT that mapped the file writable, then
 * executable) or a debugger put its own there, which the breakpoint would
 * hide and its removal, putting the file's byte back, destroy.
 *
 * Return: 0 when the opcode was written, 1 when nothing had to be done,
 * UPROBE_OPCODE_FOREIGN when the byte was left to its owner, -errno on
 * failure.
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
 * @mm: the mm, with mmap_lock held for write
 * @vaddr: the probed address
 *
 * Return: as uprobe_write_opcode().
 */
int __weak set_swbp(struct arch_uprobe *aup, struct mm_struct *mm,
		    unsigned long vaddr)
{
	return uprobe_write_opcode(aup, mm, vaddr, UPROBE_SWBP_INSN);
}

/**
 * set_orig_insn - restore the original opcode at @vaddr in @mm
 * @aup: the probe (its insn holds the original bytes)
 * @mm: the mm, with mmap_lock held for write
 * @vaddr: the probed address
 *
 * Return: as uprobe_write_opcode().
 */
int __weak set_orig_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			 unsigned long vaddr)
{
	return uprobe_write_opcode(aup, mm, vaddr,
				   *(uprobe_opcode_t *)&aup->insn);
}

/* ---- the breakpoints of one page in one mm ---- */

/*
 * Write or restore the opcodes of the picked @items, all on one page of
 * @mm; ->failed says which could not be.  Architectures that override
 * set_swbp() (arm: the breakpoint depends on the probed instruction) go
 * one opcode at a time through it.  Return: the first error, or 0.
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
 * Point the table entries of @items (picked, all on one page) at
 * their probes, under one lock.  Those already there are unpicked.  At
 * the first entry the batch adds in this mm, the table makes room for
 * @room more at once (so a table is grown once per batch, not as it fills
 * up, and an mm that gets none of them gets no array); @room is then
 * zeroed.  Return: how many are still picked.
 */
static unsigned int claim_page_entries(struct uprobe_bp_table *t,
				       struct uprobe_walk_item *items,
				       unsigned int nr, unsigned int *room)
{
	unsigned int i, picked = 0;
	int ret;

	bp_table_lock(t);
	for (i = 0; i < nr; i++) {
		struct uprobe_walk_item *it = &items[i];

		if (!it->pick)
			continue;
		while ((ret = bp_table_claim_locked(t, it->vaddr, it->uprobe)) ==
		       -ENOSPC) {
			bp_table_unlock(t);
			ret = bp_table_prepare(t, *room ?: 1);
			*room = 0;
			bp_table_lock(t);
			if (ret)
				break;
		}
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
	bp_table_unlock(t);
	return picked;
}

/*
 * Decide once per item from @i on, up to the first whose offset is at
 * @end, which go into @mm (->want), and count them in @room: the room
 * their table entries need (see claim_page_entries()).  Return: the index
 * of that first item past the range.
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

/*
 * Install the probes of @items, all on one page of @vma, in its mm where
 * items_in_vma() said they go: the table entries first (a thread that traps on a
 * breakpoint finds its entry), then the breakpoints.  See
 * claim_page_entries() for @room.  Errors go to the items' ->err.
 */
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
		it->pick = false;
		it->written = false;
		it->foreign = false;
		it->failed = false;
		/* Not here, or failed elsewhere (undone later). */
		if (!it->want || it->err)
			continue;
		it->vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		err = uprobe_prepare(it->uprobe, vma, it->vaddr);
		if (err) {
			it->err = err;
			continue;
		}
		it->orig = &it->uprobe->arch.insn;
		it->pick = true;
		picked++;
	}
	if (!picked)
		return;
	t = bp_table_create(mm);
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
		/*
		 * Not ours here, when foreign.  A dead probe's entry that the
		 * claim replaced goes too: a breakpoint of its still there
		 * is found again by the hit path's slow lookup.
		 */
		if (it->failed || it->foreign) {
			bp_table_erase(t, it->vaddr);
			if (it->failed)
				it->err = err;
			continue;
		}
		if (!it->uprobe->ref_ctr_offset)
			continue;
		/*
		 * The semaphore counts breakpoints written, not entries.  One
		 * found in place under a dead probe's entry (its removal
		 * failed) keeps that probe's count; one under no entry was
		 * lost by a split (see refctr_on_refind()).
		 */
		if (it->written)
			refctr_on_install(it->uprobe, mm, t, it->vaddr);
		else if (it->fresh)
			refctr_on_refind(it->uprobe, mm, t, it->vaddr);
	}
}

/*
 * Take out the breakpoints of @items, all on one page of @vma, that no
 * consumer wants in its mm any more (all of them, with @force): the
 * table entries first, then the bytes.
 */
static void remove_page(struct vm_area_struct *vma,
			struct uprobe_walk_item *items, unsigned int nr,
			bool force)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t = bp_table(mm);
	struct uprobe_walk_item *it;
	unsigned int i, picked = 0;

	for (i = 0; i < nr; i++) {
		it = &items[i];
		it->pick = false;
		it->written = false;
		it->foreign = false;
		it->failed = false;
		if (!uprobe_may_have_bps(it->uprobe))
			continue;
		if (!force && uprobe_has_consumers(it->uprobe) &&
		    uprobe_filter_chain(it->uprobe, UPROBE_FILTER_UNREGISTER, mm))
			continue;
		it->vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		it->orig = &it->uprobe->arch.insn;
		it->pick = true;
		picked++;
	}
	if (picked && t) {
		bp_table_lock(t);
		for (i = 0; i < nr; i++) {
			it = &items[i];
			/*
			 * A batched unregister walks after its probe may have
			 * been retired and a new probe installed at the same
			 * place: the breakpoint is the new probe's.
			 */
			if (it->pick &&
			    !bp_table_release_locked(t, it->vaddr, it->uprobe)) {
				it->pick = false;
				picked--;
			}
		}
		bp_table_unlock(t);
	}
	if (!picked)
		return;
	write_items(mm, items, nr, false);
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (!it->pick)
			continue;
		/*
		 * Not restored (a fatal signal of ours stops
		 * get_user_pages(), or no memory): the entry goes back, so
		 * that a hit still finds the probe, whose instruction it then
		 * runs, rather than taking the breakpoint for the program's
		 * own and killing it with SIGTRAP.
		 */
		if (it->failed) {
			if (t)
				bp_table_add(t, it->vaddr, it->uprobe);
		} else if (it->written && it->uprobe->ref_ctr_offset) {
			refctr_on_remove(it->uprobe, mm, t, it->vaddr);
		}
	}
}

/* ---- a batch of probes over every mm that maps them ---- */

/* The first of @items (sorted by offset) at or after @offset. */
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

/*
 * Visit every place of @mm where an item's probe is mapped: the VMAs of the
 * file as they are now, under the mm's lock, so a mapping moved or added
 * since the mms were collected is not missed.  The probes of one page are
 * written or restored together.
 */
static void walk_batch_mm(struct mm_struct *mm, struct inode *inode,
			  struct uprobe_walk_item *items, unsigned int nr,
			  bool install, unsigned int *to_analyze)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	unsigned int i, j, room = 0;
	pgoff_t page;
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
		while (i < nr && items[i].uprobe->offset < end) {
			page = items[i].uprobe->offset >> PAGE_SHIFT;
			for (j = i + 1; j < nr && items[j].uprobe->offset < end; j++)
				if (items[j].uprobe->offset >> PAGE_SHIFT != page)
					break;
			if (install)
				install_page(vma, items + i, j - i, &room);
			else
				remove_page(vma, items + i, j - i, false);
			i = j;
		}
	}
}

/**
 * uprobe_walk_batch - install or remove the breakpoints of many probes
 * @inode: the file all the probes are on
 * @items: the probes, sorted by offset; each with the consumer to install
 *	for (as uprobe_install_all()), or with ->uc NULL to take the
 *	breakpoint out where no consumer wants it (as uprobe_remove_all())
 * @nr: how many
 *
 * One pass over the mms that map the file, each locked once, instead of
 * one per probe.  The probes' register_rwsem need not be held: a
 * consumer is on its probe's list before its breakpoint is written, and
 * every decision is taken from the list as it is under the mm's
 * mmap_lock, so walks of the same probe may interleave.
 *
 * Context: process context, may sleep; no uprobes lock held but, for a
 * batch of one, the probe's register_rwsem (uprobe_install_all()).
 * Return: nothing; an install error is stored in its item's ->err, and
 * items with ->err set on entry are skipped.  Removal does not fail.
 */
void uprobe_walk_batch(struct inode *inode, struct uprobe_walk_item *items,
		       unsigned int nr)
{
	bool install = items[0].uc;
	struct mm_struct **mms;
	unsigned int nr_mms = 0, i, to_analyze = 0;
	loff_t last = items[nr - 1].uprobe->offset;

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
 * @uprobe: the probe, with its register_rwsem held for write
 * @uc: the consumer whose filter decides, per mm
 *
 * A batch of one: see uprobe_walk_batch().
 *
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
 * @uprobe: the probe, with its register_rwsem held for write
 */
void uprobe_remove_all(struct uprobe *uprobe)
{
	struct uprobe_walk_item it = { .uprobe = uprobe };

	lockdep_assert_held_write(&uprobe->register_rwsem);
	uprobe_walk_batch(uprobe->inode, &it, 1);
}

/* ---- the hit path's helpers ---- */

/**
 * uprobe_bp_lookup_slow - find the probe at @vaddr through the VMA
 * @mm: current->mm
 * @vaddr: the breakpoint address
 *
 * For a breakpoint whose table entry was lost (see the top of this file):
 * the VMA gives the file and offset, the registry the probe, and the entry
 * is added back if the breakpoint is really there.
 *
 * Context: under uprobes_srcu, which keeps the result valid; takes
 * mmap_lock for read.
 * Return: the probe (no reference) or NULL.
 */
struct uprobe *uprobe_bp_lookup_slow(struct mm_struct *mm, unsigned long vaddr)
{
	struct uprobe_bp_table *t;
	struct vm_area_struct *vma;
	struct uprobe *uprobe;
	uprobe_opcode_t op;
	bool jump = false;

	mmap_read_lock(mm);
	uprobe = uprobe_bp_lookup(mm, vaddr);
	if (uprobe)
		goto out;
	vma = vma_lookup(mm, vaddr);
	if (!vma || !vma_probeable(vma))
		goto out;
	uprobe = uprobe_find(file_inode(vma->vm_file),
			     vaddr_to_offset(vma, vaddr));
	if (!uprobe)
		goto out;
	/* A refused probe's 0xcc is the program's own: it gets SIGTRAP. */
	if (read_opcode(mm, vaddr, &op, &jump) ||
	    (!is_swbp_insn(&op) && !jump) || !uprobe_may_have_bps(uprobe)) {
		put_uprobe(uprobe);
		uprobe = NULL;
		goto out;
	}
	t = bp_table_create(mm);
	if (t)
		bp_table_add(t, vaddr, uprobe);
	/* SRCU keeps it for the caller; the table holds its own ref. */
	put_uprobe(uprobe);
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
 * uprobe_unapply_current - honour UPROBE_HANDLER_REMOVE
 * @uprobe: the probe just hit
 * @vaddr: where
 *
 * Removes the breakpoint at @vaddr from current->mm if no consumer's filter
 * wants it there.
 *
 * Context: process context; takes register_rwsem (read), then mmap_lock.
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
 * uprobe_remove_current - take a probe's breakpoint out of current->mm
 * @uprobe: the probe just hit, whose instruction this thread cannot run
 * @vaddr: where
 *
 * Whatever the consumers want: the alternative is a thread that traps
 * on the breakpoint forever.  A later install (a new mapping, another
 * registration) may write it again, to the same end.
 *
 * Context: process context; takes mmap_lock.
 */
void uprobe_remove_current(struct uprobe *uprobe, unsigned long vaddr)
{
	remove_current(uprobe, vaddr);
}

/* ---- mmap, munmap, fork, exit ---- */

/* Install @nr probes of @vma, by offset, and drop their references. */
static void mmap_install(struct vm_area_struct *vma,
			 struct uprobe_walk_item *items, unsigned int nr)
{
	unsigned int i, j, room;
	bool want_any;
	pgoff_t page;

	/*
	 * Nothing to install when no item is wanted; otherwise every page:
	 * claim_page_entries() zeroes @room once it has grown the table.
	 */
	items_in_vma(vma->vm_mm, items, 0, nr, LLONG_MAX, &room);
	want_any = room;
	/* The probes of one page together, as uprobe_walk_batch() does. */
	for (i = 0; want_any && i < nr; i = j) {
		page = items[i].uprobe->offset >> PAGE_SHIFT;
		for (j = i + 1; j < nr; j++)
			if (items[j].uprobe->offset >> PAGE_SHIFT != page)
				break;
		install_page(vma, items + i, j - i, &room);
	}
	for (i = 0; i < nr; i++) {
		/* Most likely an instruction the arch refuses, seen only now. */
		if (items[i].err)
			pr_warn_ratelimited("pid %d: probe at %pD:%#llx not installed: %d\n",
					    current->pid, vma->vm_file,
					    (unsigned long long)items[i].uprobe->offset,
					    items[i].err);
		put_uprobe(items[i].uprobe);
	}
}

/*
 * Probes a mapping installs at a time: a bounded, small array however many
 * the file has (a whole table of them would be allocated and freed at every
 * mmap of the file).
 */
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

	if (!vma->vm_file)
		return 0;
	refctr_on_mmap(vma);
	if (!vma_installable(vma) || uprobe_registry_empty())
		return 0;

	inode = file_inode(vma->vm_file);
	end = vaddr_to_offset(vma, vma->vm_end);
	/* Most mappings hold no probe: no allocation for them. */
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
		/*
		 * A page's probes are written in one go when they fit: those
		 * of the last page wait for the next round, unless they are
		 * all there is (a page with more probes than fit is written
		 * in parts, as registrations at different times would be).
		 */
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
 * The pages themselves go with the mapping (or, for a merge or split, stay
 * and are found again by uprobe_mmap()).
 *
 * Context: mmap_lock held (read or write), or the mapping's i_mmap_rwsem
 * when a truncation unmaps it.
 */
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t;

	/*
	 * Only where a breakpoint can be (what vma_probeable() tests never
	 * changes for a VMA): the table scan is not free.  An mm without
	 * users is being torn down, table and all.
	 */
	if (start >= end || !vma_probeable(vma) || !atomic_read(&mm->mm_users))
		return;
	/* A truncation may race with uprobe_clear_state(): see there. */
	rcu_read_lock();
	t = bp_table(mm);
	uprobe_debug_delay(UPROBE_DELAY_MUNMAP);
	if (!t || READ_ONCE(t->dropping) == current)
		goto out;
	bp_table_erase_range(t, start, end);
	refctr_on_munmap(t, start, end);
out:
	rcu_read_unlock();
}

void uprobe_start_dup_mmap(void)
{
	down_read(&dup_mmap_sem);
}

void uprobe_end_dup_mmap(void)
{
	up_read(&dup_mmap_sem);
}

/* The VMA at @vaddr of @arg (the parent's mm) goes to the child. */
static bool vma_copied(unsigned long vaddr, void *arg)
{
	struct vm_area_struct *vma = vma_lookup(arg, vaddr);

	return vma && !(vma->vm_flags & VM_DONTCOPY);
}

/**
 * uprobe_dup_mmap - give a forked mm its parent's breakpoint state
 * @oldmm: the parent's mm, mmap_lock held for write
 * @newmm: the child's, not yet visible
 *
 * dup_mmap() copies the pages holding the breakpoints; this copies the
 * table entries of the VMAs it copies, the pending SDT updates and the XOL
 * area.  Entries that do not make it (no memory) are found again by the
 * hit path's slow lookup.
 */
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct uprobe_bp_table *old = bp_table(oldmm), *new;

	if (!test_bit(MMF_HAS_UPROBES, &oldmm->flags))
		return;
	set_bit(MMF_HAS_UPROBES, &newmm->flags);
	xol_dup_area(oldmm, newmm);
	uprobe_jump_dup(oldmm, newmm);
	if (!old)
		return;
	new = bp_table_create(newmm);
	if (!new)
		return;
	bp_table_dup(new, old, vma_copied, oldmm);
	refctr_on_dup(new, old, vma_copied, oldmm);
}

static void bp_table_free_rcu(struct rcu_head *rcu)
{
	struct uprobe_bp_table *t = container_of(rcu, struct uprobe_bp_table, rcu);

	refctr_free_all(t);
	bp_table_free(t);
}

/**
 * uprobe_clear_state - free an mm's uprobes state
 * @mm: the mm, without users any more
 *
 * __mmput() calls this before exit_mmap(), and a failed fork or exec
 * drops an mm whose VMAs are linked too: until they are unlinked, a
 * truncation of their file (unmap_mapping_range(), under i_mmap_rwsem
 * only) calls uprobe_munmap() on them.  The table is unpublished here and
 * freed after an RCU grace period, which outlasts every such call.
 */
void uprobe_clear_state(struct mm_struct *mm)
{
	struct uprobe_bp_table *t = bp_table(mm);

	xol_free_area(mm);
	uprobe_jump_free(mm);
	if (!t)
		return;
	WRITE_ONCE(mm->uprobes_state.bp_table, NULL);
	call_rcu(&t->rcu, bp_table_free_rcu);
}
