// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: probed instructions entered by a jump instead of a trap.
 *
 * Where the architecture allows it (x86_64: a nop of five bytes or more
 * in 64-bit code), the first hit of a probe in an mm replaces its
 * breakpoint there by a jump to a stub: code the kernel maps into the mm
 * within the jump's reach, which enters the kernel by a syscall.  The
 * consumers see the registers as at the breakpoint (uprobe_jump_hit()),
 * and the thread goes on after the probed instruction: no trap per hit.
 *
 * The stubs.  Every stub is the same code (arch_uprobe_jump_stubs()), so
 * one page of them, made at boot, is mapped read+exec wherever an mm
 * needs stubs, as one-page "[uprobes-jump]" mappings placed within reach
 * of the sites.  A stub stands for the site it was bound to for the life
 * of the mm (struct uprobe_jumps says which): a thread that entered it
 * finishes there whatever happened to the probe meanwhile, and no stub is
 * ever bound to another site.  A probe that comes back at the same place
 * gets its old stub.  At most UPROBE_JUMP_MAX_PAGES pages an mm; beyond
 * that, without memory or without room within reach, the breakpoint stays.
 *
 * Writing the jump.  The jump goes into the mm's private copy of the page
 * that holds the breakpoint, as the breakpoint did (uprobes_install.c), in
 * two stores: the tail behind the breakpoint, then the first byte over it,
 * each followed by an IPI to the CPUs running the mm, so that none of
 * them runs a mix of old and new bytes.  Taking it out (before the
 * breakpoint is restored, uprobe_jump_undo()) is the reverse.
 *
 * Fork.  The child's pages have the jumps, its VMAs the stub mappings; it
 * shares the parent's struct uprobe_jumps by a reference (fork cannot fail
 * here), and whichever of them binds a new stub first makes its own copy.
 *
 * What the architecture fixes up around a stub (x86: uprobes_jump.c in
 * arch/x86/kernel): a signal arriving in a stub (the thread is put back at
 * the site as it was: uprobe_jump_leave()), a fault taken in a stub, such
 * as a push onto a bogus stack (uprobe_jump_fixup()), and a single-step
 * that jumped into one (uprobe_jump_stepped()): the latter two handle the
 * hit on the way back to user space, as though the instruction had run in
 * place.  A stub whose syscall did not run (a seccomp filter or a ptracer
 * refused it) puts the registers back and traps; the trap is handled as
 * the site's breakpoint would have been (uprobe_jump_trap()).
 *
 * Memory: one kmalloc of 16 bytes plus 1 KiB per stub page (128 stubs on
 * x86_64) an mm, shared with forked children until written.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/moduleparam.h>
#include <linux/rmap.h>
#include <linux/sched/mm.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "uprobes."

/*
 * /sys/module/uprobes/parameters/jump: 0 keeps every breakpoint a trap
 * (sites jumped already stay so), to measure one path against the other.
 */
bool uprobe_jump_on __read_mostly = true;
module_param_named(jump, uprobe_jump_on, bool, 0644);

#define UPROBE_JUMP_STUBS	(PAGE_SIZE / UPROBE_JUMP_STUB_BYTES)
#define UPROBE_JUMP_MAX_PAGES	16
/* A binding: the site's address, and the probed instruction's length. */
#define UPROBE_JUMP_LEN_SHIFT	56
#define UPROBE_JUMP_ADDR_MASK	(BIT_ULL(UPROBE_JUMP_LEN_SHIFT) - 1)

/**
 * struct uprobe_jump_page - one stub mapping of an mm
 * @vaddr: its address
 * @site: per stub, the site it stands for and the instruction's length
 *	(UPROBE_JUMP_LEN_SHIFT); 0 for a stub never bound
 */
struct uprobe_jump_page {
	unsigned long	vaddr;
	unsigned long	site[UPROBE_JUMP_STUBS];
};

/**
 * struct uprobe_jumps - the stub mappings of an mm
 * @ref: the mms sharing it (a fork shares, a write copies)
 * @full: no stub could be had: no more attempts in this mm
 * @nr: entries of @pages
 * @rcu: frees it after the readers of the hit path
 * @pages: the mappings, in the order they were made
 *
 * Changed only under the mmap_lock of its mm (for write), and only while
 * not shared; read under RCU by the mm's own threads.
 */
struct uprobe_jumps {
	refcount_t		ref;
	bool			full;
	unsigned int		nr;
	struct rcu_head		rcu;
	struct uprobe_jump_page	pages[];
};

static struct page *uprobe_jump_stub_pages[2];

/* Sites point at their stubs by address: the mapping cannot move. */
static int jump_mremap(const struct vm_special_mapping *sm,
		       struct vm_area_struct *new_vma)
{
	return -EINVAL;
}

static const struct vm_special_mapping jump_mapping = {
	.name	= "[uprobes-jump]",
	.pages	= uprobe_jump_stub_pages,
	.mremap	= jump_mremap,
};

unsigned int __weak arch_uprobe_jump_ok(struct arch_uprobe *aup,
					struct pt_regs *regs)
{
	return 0;
}

unsigned int __weak arch_uprobe_jump_insn(struct arch_uprobe *aup,
					  unsigned long vaddr,
					  unsigned long stub, u8 *insn)
{
	return 0;
}

unsigned long __weak arch_uprobe_jump_target(unsigned long vaddr,
					     const u8 *code)
{
	return 0;
}

bool __weak arch_uprobe_jump_stubs(void *page)
{
	return false;
}

bool __weak arch_uprobe_jump_rewind(struct pt_regs *regs, unsigned int at)
{
	return false;
}

/**
 * uprobe_jump_init - make the page of stubs
 *
 * Without it (no memory at boot) nothing is ever jumped.
 */
void __init uprobe_jump_init(void)
{
	struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

	if (!page)
		return;
	/* An architecture without jump sites has no stubs. */
	if (!arch_uprobe_jump_stubs(page_address(page))) {
		__free_page(page);
		return;
	}
	flush_dcache_page(page);
	uprobe_jump_stub_pages[0] = page;
}

static struct uprobe_jumps *mm_jumps(struct mm_struct *mm)
{
	return rcu_dereference_protected(mm->uprobes_state.jumps,
					 lockdep_is_held(&mm->mmap_lock) ||
					 !atomic_read(&mm->mm_users));
}

static void jumps_put(struct uprobe_jumps *j)
{
	if (j && refcount_dec_and_test(&j->ref))
		kvfree_rcu(j, rcu);
}

/**
 * uprobe_jump_site - the site a stub of current->mm stands for
 * @stub: an address in a stub mapping
 * @len: set to the probed instruction's length
 * @at: set to @stub's offset in its stub
 *
 * Context: any; lockless (RCU).
 * Return: the site's address, 0 when @stub is not in a bound stub.
 */
unsigned long uprobe_jump_site(unsigned long stub, unsigned int *len,
			       unsigned int *at)
{
	struct mm_struct *mm = current->mm;
	unsigned long base = stub & PAGE_MASK, site = 0;
	struct uprobe_jumps *j;
	unsigned int i;

	if (!mm || !rcu_access_pointer(mm->uprobes_state.jumps))
		return 0;
	rcu_read_lock();
	j = rcu_dereference(mm->uprobes_state.jumps);
	for (i = 0; j && i < j->nr; i++) {
		if (j->pages[i].vaddr != base)
			continue;
		site = READ_ONCE(j->pages[i].site[offset_in_page(stub) /
						  UPROBE_JUMP_STUB_BYTES]);
		break;
	}
	rcu_read_unlock();
	*len = site >> UPROBE_JUMP_LEN_SHIFT;
	*at = stub % UPROBE_JUMP_STUB_BYTES;
	return site & UPROBE_JUMP_ADDR_MASK;
}

/**
 * uprobe_jump_from_stub - does current's syscall come from a stub?
 * @regs: current's user registers at a syscall
 *
 * For seccomp: the stubs' syscall only finishes a hit the kernel itself
 * diverted, and a filter must not kill or refuse it.
 *
 * Return: true when it was made by a stub's syscall instruction.
 */
bool uprobe_jump_from_stub(struct pt_regs *regs)
{
	unsigned int len, at;

	return uprobe_jump_site(instruction_pointer(regs), &len, &at) &&
	       at == UPROBE_JUMP_SYSCALL_AT;
}

/*
 * Is @code, the bytes at @vaddr of @mm, a jump of ours to a stub bound to
 * @vaddr?  Under @mm's mmap_lock.
 */
bool uprobe_jump_at(struct mm_struct *mm, unsigned long vaddr, const u8 *code)
{
	unsigned long stub = arch_uprobe_jump_target(vaddr, code), site;
	struct uprobe_jumps *j = mm_jumps(mm);
	unsigned int i;

	if (!stub || !j || stub % UPROBE_JUMP_STUB_BYTES)
		return false;
	for (i = 0; i < j->nr; i++) {
		if (j->pages[i].vaddr != (stub & PAGE_MASK))
			continue;
		site = j->pages[i].site[offset_in_page(stub) /
					UPROBE_JUMP_STUB_BYTES];
		return (site & UPROBE_JUMP_ADDR_MASK) == vaddr;
	}
	return false;
}

/**
 * uprobe_jump_hidden - is a jump of ours under someone else's breakpoint?
 * @mm: the mm, its mmap_lock held
 * @vaddr: a site
 * @code: its bytes, in a page of @mm
 * @orig: the probed instruction's original bytes
 *
 * A debugger's breakpoint over the first byte of a jump leaves the jump's
 * tail behind it: restoring the nop's first byte there would make an
 * instruction of neither.  Such a site is left alone (the stub stays
 * bound, and serves the jump when the debugger puts it back).
 *
 * Return: true when @code is a breakpoint and a jump of ours's tail.
 */
bool uprobe_jump_hidden(struct mm_struct *mm, unsigned long vaddr,
			const u8 *code, const u8 *orig)
{
	const unsigned int bp_len = UPROBE_SWBP_INSN_SIZE;
	struct uprobe_jumps *j = mm_jumps(mm);
	u8 insn[UPROBE_JUMP_INSN_BYTES];
	unsigned long stub;
	unsigned int i, s;

	if (!j || offset_in_page(vaddr) + sizeof(insn) > PAGE_SIZE ||
	    !is_swbp_insn((uprobe_opcode_t *)code) ||
	    !memcmp(code + bp_len, orig + bp_len, sizeof(insn) - bp_len))
		return false;
	for (i = 0; i < j->nr; i++)
		for (s = 0; s < UPROBE_JUMP_STUBS; s++) {
			if ((j->pages[i].site[s] & UPROBE_JUMP_ADDR_MASK) != vaddr)
				continue;
			stub = j->pages[i].vaddr + s * UPROBE_JUMP_STUB_BYTES;
			if (arch_uprobe_jump_insn(NULL, vaddr, stub, insn) &&
			    !memcmp(code + bp_len, insn + bp_len,
				    sizeof(insn) - bp_len))
				return true;
		}
	return false;
}

/* A copy of @old (or a new empty set) with room for @pages pages. */
static struct uprobe_jumps *jumps_copy(struct uprobe_jumps *old,
				       unsigned int pages)
{
	struct uprobe_jumps *j;

	/* 16.5 KiB at most: no high-order allocation under mmap_lock. */
	j = kvzalloc(struct_size(j, pages, pages), GFP_KERNEL);
	if (!j)
		return NULL;
	refcount_set(&j->ref, 1);
	if (old) {
		j->nr = old->nr;
		memcpy(j->pages, old->pages, old->nr * sizeof(old->pages[0]));
	}
	return j;
}

/* Publish @j as @mm's, dropping the one it replaces. */
static void jumps_replace(struct mm_struct *mm, struct uprobe_jumps *j)
{
	struct uprobe_jumps *old = mm_jumps(mm);

	rcu_assign_pointer(mm->uprobes_state.jumps, j);
	jumps_put(old);
}

/*
 * A free place for one page of stubs that a jump at @vaddr reaches:
 * below the site's mapping first, where a heap does not grow.
 */
static unsigned long jump_place(struct vm_area_struct *vma, unsigned long vaddr,
				unsigned long reach)
{
	unsigned long lo = vaddr > reach ? vaddr - reach : 0;
	unsigned long hi = min(vaddr + reach, TASK_SIZE);
	struct vm_unmapped_area_info info = {
		.length = PAGE_SIZE,
	};
	unsigned long addr;

	lo = max3(lo, PAGE_ALIGN(mmap_min_addr), PAGE_SIZE);
	info.flags = VM_UNMAPPED_AREA_TOPDOWN;
	info.low_limit = PAGE_ALIGN(lo);
	info.high_limit = vma->vm_start;
	if (info.low_limit < info.high_limit) {
		addr = vm_unmapped_area(&info);
		if (!IS_ERR_VALUE(addr))
			return addr;
	}
	info.flags = 0;
	info.low_limit = vma->vm_end;
	info.high_limit = hi & PAGE_MASK;
	if (info.low_limit >= info.high_limit)
		return -ENOMEM;
	return vm_unmapped_area(&info);
}

/* Fill @insn with a jump from @vaddr to a free stub of @page, if it has one. */
static unsigned int jump_to_page(struct uprobe_jump_page *page,
				 struct arch_uprobe *aup, unsigned long vaddr,
				 unsigned int *slot, u8 *insn)
{
	unsigned int i;

	for (i = 0; i < UPROBE_JUMP_STUBS; i++)
		if (!page->site[i])
			break;
	if (i == UPROBE_JUMP_STUBS)
		return 0;
	*slot = i;
	return arch_uprobe_jump_insn(aup, vaddr,
				     page->vaddr + i * UPROBE_JUMP_STUB_BYTES,
				     insn);
}

/*
 * Bind a stub of current->mm to the site at @vaddr and fill @insn with
 * the jump to it.  Under mmap_lock for write.  Return: the jump's length,
 * 0 when there is no stub for it.
 */
static unsigned int jump_bind(struct vm_area_struct *vma,
			      struct arch_uprobe *aup, unsigned long vaddr,
			      unsigned int len, u8 *insn)
{
	unsigned long want = vaddr | (unsigned long)len << UPROBE_JUMP_LEN_SHIFT;
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_jumps *j = mm_jumps(mm), *nj;
	struct vm_area_struct *stub_vma;
	unsigned int i, s, n = 0;
	unsigned long addr;

	/* The site's own stub, if it had one. */
	for (i = 0; j && i < j->nr; i++)
		for (s = 0; s < UPROBE_JUMP_STUBS; s++)
			if (j->pages[i].site[s] == want)
				return arch_uprobe_jump_insn(aup, vaddr,
					j->pages[i].vaddr + s * UPROBE_JUMP_STUB_BYTES,
					insn);
	if (j && j->full)
		return 0;
	for (i = 0; j && i < j->nr && !n; i++)
		n = jump_to_page(&j->pages[i], aup, vaddr, &s, insn);
	if (n) {
		i--;
		if (refcount_read(&j->ref) > 1) {
			/* Shared with a fork: bind in a copy of our own. */
			nj = jumps_copy(j, j->nr);
			if (!nj)
				return 0;
			jumps_replace(mm, nj);
			j = nj;
		}
		WRITE_ONCE(j->pages[i].site[s], want);
		return n;
	}

	if (j && j->nr == UPROBE_JUMP_MAX_PAGES)
		goto full;
	addr = jump_place(vma, vaddr, SZ_2G - PAGE_SIZE);
	if (IS_ERR_VALUE(addr))
		goto full;
	nj = jumps_copy(j, j ? j->nr + 1 : 1);
	if (!nj)
		return 0;
	stub_vma = _install_special_mapping(mm, addr, PAGE_SIZE,
					    VM_READ | VM_EXEC | VM_MAYREAD |
					    VM_MAYEXEC | VM_DONTDUMP,
					    &jump_mapping);
	if (IS_ERR(stub_vma)) {
		kvfree(nj);
		return 0;
	}
	nj->pages[nj->nr].vaddr = addr;
	n = jump_to_page(&nj->pages[nj->nr], aup, vaddr, &s, insn);
	if (n)
		nj->pages[nj->nr].site[s] = want;
	nj->nr++;
	/* Published before the jump is written: its readers are the hits. */
	jumps_replace(mm, nj);
	return n;
full:
	/* A hint only, read locklessly (and by a fork child sharing it). */
	if (j)
		WRITE_ONCE(j->full, true);
	return 0;
}

void __weak arch_uprobe_jump_sync(void)
{
}

static void jump_sync_cpu(void *unused)
{
	arch_uprobe_jump_sync();
}

/* Every CPU that may be running @mm fetches its code anew. */
static void jump_sync(struct mm_struct *mm)
{
	/*
	 * The store before the read of the mask: a CPU that switches to the
	 * mm after the read has set its bit first, and fetches the new bytes.
	 */
	smp_mb();
	on_each_cpu_mask(mm_cpumask(mm), jump_sync_cpu, NULL, true);
}

/*
 * Store @n bytes of @src at @dst, which is @vaddr in @page of @vma, and
 * make every CPU running the mm see them before it goes on.
 */
static void jump_store(struct vm_area_struct *vma, struct page *page,
		       unsigned long vaddr, u8 *dst, const u8 *src,
		       unsigned int n, bool sync)
{
	copy_to_user_page(vma, page, vaddr, dst, src, n);
	if (sync)
		jump_sync(vma->vm_mm);
}

/**
 * uprobe_jump_undo - put the breakpoint back in place of a jump
 * @vma: the site's VMA, its mm's mmap_lock held for write
 * @page: the mm's copy of the site's page
 * @vaddr: the site
 * @code: the site's bytes in @page (kernel mapping)
 * @orig: the probed instruction's original bytes
 * @sync: the page is mapped (other threads may run it): write step by
 *	step, every CPU running the mm synchronised between the steps
 *
 * Context: uprobes_install.c, which restores the breakpoint's byte next.
 * Return: true when @code held a jump of ours, now the breakpoint.
 */
bool uprobe_jump_undo(struct vm_area_struct *vma, struct page *page,
		      unsigned long vaddr, u8 *code, const u8 *orig, bool sync)
{
	const unsigned int bp_len = UPROBE_SWBP_INSN_SIZE;
	uprobe_opcode_t bp = UPROBE_SWBP_INSN;

	if (offset_in_page(vaddr) + UPROBE_JUMP_INSN_BYTES > PAGE_SIZE ||
	    !uprobe_jump_at(vma->vm_mm, vaddr, code))
		return false;
	jump_store(vma, page, vaddr, code, (u8 *)&bp, bp_len, sync);
	jump_store(vma, page, vaddr + bp_len, code + bp_len, orig + bp_len,
		   UPROBE_JUMP_INSN_BYTES - bp_len, sync);
	return true;
}

/*
 * The original bytes at @vaddr of @vma: the probe's, or the file's for a
 * probe gone without taking its jump out (its removal was killed).
 * Return: true when a probe still has @vaddr, false for the file's bytes;
 * -ENOMEM in @err when there are none to be had.
 */
static bool jump_orig(struct vm_area_struct *vma, unsigned long vaddr,
		      u8 *orig, int *err)
{
	struct uprobe *uprobe;
	struct page *page;

	uprobe = uprobe_find(file_inode(vma->vm_file),
			     vaddr_to_offset(vma, vaddr));
	if (uprobe) {
		memcpy(orig, &uprobe->arch.insn, UPROBE_JUMP_INSN_BYTES);
		put_uprobe(uprobe);
		return true;
	}
	page = find_get_page(vma->vm_file->f_mapping,
			     linear_page_index(vma, vaddr));
	if (page && PageUptodate(page))
		memcpy_from_page((char *)orig, page, offset_in_page(vaddr),
				 UPROBE_JUMP_INSN_BYTES);
	else
		*err = -ENOMEM;
	if (page)
		put_page(page);
	return false;
}

/* The breakpoint back at @vaddr of @vma, if a jump of ours is there. */
static int jump_undo_at(struct vm_area_struct *vma, unsigned long vaddr)
{
	unsigned int flags = FOLL_FORCE | FOLL_WRITE | FOLL_SPLIT_PMD;
	u8 code[UPROBE_JUMP_INSN_BYTES], orig[UPROBE_JUMP_INSN_BYTES];
	const unsigned int bp_len = UPROBE_SWBP_INSN_SIZE;
	struct mm_struct *mm = vma->vm_mm;
	struct page_vma_mapped_walk pvmw;
	bool probed, unmapped, undone;
	struct page *page;
	int err = 0;
	pte_t pte;
	long got;
	u8 *at;

	/* A look first: no copy made, no huge page split, for nothing. */
	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	memcpy_from_page((char *)code, page, offset_in_page(vaddr), sizeof(code));
	got = PageAnon(page) && uprobe_jump_at(mm, vaddr, code);
	put_page(page);
	if (!got)
		return 0;
	probed = jump_orig(vma, vaddr, orig, &err);
	if (err)
		return err;
	got = get_user_pages_remote(mm, vaddr, 1, flags, &page, NULL, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	/* See uprobe_page_unmap(): no CPU fetches from it meanwhile. */
	unmapped = uprobe_page_unmap(vma, page, vaddr, &pvmw, &pte);
	at = kmap_local_page(page) + offset_in_page(vaddr);
	undone = uprobe_jump_undo(vma, page, vaddr, at, orig, !unmapped);
	/* A breakpoint without a probe would be the program's. */
	if (undone && !probed)
		copy_to_user_page(vma, page, vaddr, at, orig, bp_len);
	kunmap_local(at);
	if (unmapped)
		uprobe_page_remap(&pvmw, pte);
	if (undone)
		set_page_dirty_lock(page);
	put_page(page);
	return 0;
}

/**
 * uprobe_mremap - mremap() is about to move part of a mapping
 * @vma: the mapping
 * @start: the start of the part that moves
 * @end: its end
 *
 * A jump is relative to its own address: moved, it would go elsewhere
 * than to its stub.  The breakpoints are put back in place of the jumps;
 * they move with the pages, and the hit path finds them at their new
 * address.
 *
 * Context: mmap_lock held for write.
 * Return: 0, or -errno when a jump could not be taken out: the move
 * must not happen then.
 */
int uprobe_mremap(struct vm_area_struct *vma, unsigned long start,
		  unsigned long end)
{
	struct uprobe_jumps *j;
	unsigned long site;
	unsigned int i, s;
	int err;

	if (!rcu_access_pointer(vma->vm_mm->uprobes_state.jumps) ||
	    !vma_probeable(vma))
		return 0;
	start = max(start, vma->vm_start);
	end = min(end, vma->vm_end);
	j = mm_jumps(vma->vm_mm);
	for (i = 0; i < j->nr; i++)
		for (s = 0; s < UPROBE_JUMP_STUBS; s++) {
			site = j->pages[i].site[s] & UPROBE_JUMP_ADDR_MASK;
			if (site < start || site >= end)
				continue;
			err = jump_undo_at(vma, site);
			if (err)
				return err;
		}
	return 0;
}

/**
 * uprobe_jump_install - replace current->mm's breakpoint by a jump
 * @uprobe: the probe just hit at @vaddr, its handlers done
 * @vaddr: the site
 * @len: the probed instruction's length
 *
 * Context: the hit path, under uprobes_srcu; takes mmap_lock for write.
 */
void uprobe_jump_install(struct uprobe *uprobe, unsigned long vaddr,
			 unsigned int len)
{
	unsigned int flags = FOLL_FORCE | FOLL_WRITE | FOLL_SPLIT_PMD;
	const unsigned int bp_len = UPROBE_SWBP_INSN_SIZE;
	struct mm_struct *mm = current->mm;
	u8 insn[UPROBE_JUMP_INSN_BYTES];
	struct vm_area_struct *vma;
	struct uprobe_jumps *j;
	struct page *page;
	unsigned int n;
	u8 *code;

	if (!uprobe_jump_stub_pages[0] ||
	    offset_in_page(vaddr) + UPROBE_JUMP_INSN_BYTES > PAGE_SIZE)
		return;
	rcu_read_lock();
	j = rcu_dereference(mm->uprobes_state.jumps);
	n = j && READ_ONCE(j->full);
	rcu_read_unlock();
	if (n)
		return;
	/*
	 * Without the lock first: a site whose bytes are not the breakpoint
	 * and the nop's tail (a jump already, or another probe inside the
	 * nop) must not cost every hit the mmap_lock.
	 */
	if (copy_from_user(insn, (void __user *)vaddr, sizeof(insn)) ||
	    !is_swbp_insn((uprobe_opcode_t *)insn) ||
	    memcmp(insn + bp_len, (u8 *)&uprobe->arch.insn + bp_len,
		   sizeof(insn) - bp_len))
		return;
	if (mmap_write_lock_killable(mm))
		return;
	/* Still this probe's breakpoint, in a private copy of the page? */
	if (uprobe_bp_lookup(mm, vaddr) != uprobe ||
	    get_user_pages_remote(mm, vaddr, 1, flags, &page, &vma, NULL) != 1)
		goto unlock;
	/*
	 * Not where the program may store (a mapping made writable): its
	 * store between our check and our two writes would be lost.
	 */
	if (!PageAnon(page) || (vma->vm_flags & (VM_MAYSHARE | VM_WRITE)))
		goto put;
	code = kmap_local_page(page) + offset_in_page(vaddr);
	if (is_swbp_insn((uprobe_opcode_t *)code) &&
	    !memcmp(code + bp_len, (u8 *)&uprobe->arch.insn + bp_len,
		    UPROBE_JUMP_INSN_BYTES - bp_len)) {
		n = jump_bind(vma, &uprobe->arch, vaddr, len, insn);
		if (n == UPROBE_JUMP_INSN_BYTES) {
			/* The tail behind the breakpoint, then the head. */
			jump_store(vma, page, vaddr + bp_len, code + bp_len,
				   insn + bp_len, n - bp_len, true);
			jump_store(vma, page, vaddr, code, insn, bp_len, true);
			set_page_dirty_lock(page);
		}
	}
	kunmap_local(code);
put:
	put_page(page);
unlock:
	mmap_write_unlock(mm);
}

/**
 * uprobe_jump_dup - a forked mm shares its parent's stubs
 * @oldmm: the parent's mm, mmap_lock held for write
 * @newmm: the child's
 */
void uprobe_jump_dup(struct mm_struct *oldmm, struct mm_struct *newmm)
{
	struct uprobe_jumps *j = mm_jumps(oldmm);

	if (!j)
		return;
	refcount_inc(&j->ref);
	RCU_INIT_POINTER(newmm->uprobes_state.jumps, j);
}

/**
 * uprobe_jump_free - an mm without users drops its stubs' bindings
 * @mm: the mm
 */
void uprobe_jump_free(struct mm_struct *mm)
{
	struct uprobe_jumps *j = mm_jumps(mm);

	RCU_INIT_POINTER(mm->uprobes_state.jumps, NULL);
	jumps_put(j);
}

/*
 * The site of the stub at @addr, if @addr is still in a stub mapping of
 * current->mm: a program may have unmapped one and mapped code of its own
 * there, whose faults, signals and traps are its own.  Without @may_sleep
 * the answer is 0 when the mmap_lock is taken.  Not for the stubs'
 * syscall, on every hit: a program that makes it from its own code at a
 * stub's old address asked for the hit.
 */
static unsigned long jump_site_mapped(unsigned long addr, unsigned int *len,
				      unsigned int *at, bool may_sleep)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long site;

	site = uprobe_jump_site(addr, len, at);
	if (!site)
		return 0;
	if (may_sleep)
		mmap_read_lock(mm);
	else if (!mmap_read_trylock(mm))
		return 0;
	vma = vma_lookup(mm, addr);
	if (!vma || !vma_is_special_mapping(vma, &jump_mapping))
		site = 0;
	mmap_read_unlock(mm);
	return site;
}

/**
 * uprobe_jump_leave - put a thread found in a stub back at its site
 * @regs: its user registers
 *
 * Before a signal is delivered (or the thread stops, or dumps core), and
 * before an rseq critical section is checked after a preemption, a
 * thread in a stub is put back at the site with the registers as they
 * were there: nothing but the thread itself may see it in a stub.  It
 * goes through the jump again when it resumes at the site.
 *
 * Context: get_signal() (through uprobe_deny_signal()) or the rseq work
 * on the way back to user space; may sleep.
 */
void uprobe_jump_leave(struct pt_regs *regs)
{
	unsigned int len, at;
	unsigned long site;

	if (!current->mm || !rcu_access_pointer(current->mm->uprobes_state.jumps))
		return;
	site = jump_site_mapped(instruction_pointer(regs), &len, &at, true);
	if (site && arch_uprobe_jump_rewind(regs, at))
		instruction_pointer_set(regs, site);
}

/**
 * uprobe_jump_fixup - a fault in a stub is not the program's
 * @regs: the user registers at the fault
 *
 * A stub stores on the stack below the red zone, which a program running
 * with a bogus stack pointer (or one whose stack ends right there) does
 * not have: the registers are put back as at the site and the hit is
 * handled on the way back to user space, as for a breakpoint.
 *
 * Context: an exception from user mode, before a signal is sent for it,
 * interrupts on, no lock held; may sleep.
 * Return: true when the fault was a stub's and has been dealt with.
 */
bool uprobe_jump_fixup(struct pt_regs *regs)
{
	unsigned int len, at;
	unsigned long site;

	site = jump_site_mapped(instruction_pointer(regs), &len, &at, true);
	if (!site || !arch_uprobe_jump_rewind(regs, at))
		return false;
	uprobe_jump_defer(regs, site, len);
	return true;
}

/**
 * uprobe_jump_stepped - did a single-step take a site's jump?
 * @regs: the user registers at the step's trap
 *
 * The thread (a debugger's, or one stepping itself) is put where the step
 * of the probed instruction would have left it, the hit is handled on
 * the way back to user space, and the step's trap goes on as usual.
 *
 * Context: the debug trap, interrupts off.
 * Return: true when the step ended at the start of a stub.
 */
bool uprobe_jump_stepped(struct pt_regs *regs)
{
	unsigned int len, at;
	unsigned long site;

	site = jump_site_mapped(instruction_pointer(regs), &len, &at, false);
	if (!site || at)
		return false;
	uprobe_jump_defer(regs, site, len);
	return true;
}

/**
 * uprobe_jump_trap - did a stub's breakpoint trap?
 * @regs: the registers, as put back by the stub
 * @bp_vaddr: the breakpoint's address
 *
 * The stub traps when its syscall did not run: the hit is handled as the
 * site's breakpoint would have been.
 *
 * Return: true when it was a stub's (and has been dealt with).
 */
bool uprobe_jump_trap(struct pt_regs *regs, unsigned long bp_vaddr)
{
	unsigned int len, at;
	unsigned long site;

	site = jump_site_mapped(bp_vaddr, &len, &at, true);
	if (!site || at != UPROBE_JUMP_TRAP_AT)
		return false;
	uprobe_jump_hit(regs, site, len);
	return true;
}
