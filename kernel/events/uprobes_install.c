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
 * It is a cache of what is in the pages: an entry is added after its
 * breakpoint is written and erased before it is restored, and paths that
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

#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/oom.h>
#include <linux/pagemap.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sort.h>
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
static DEFINE_MUTEX(uprobes_analyze_mutex);

/* A probe whose SDT semaphore is not mapped in the mm yet. */
struct refctr_pending {
	struct list_head	node;
	struct uprobe		*uprobe;
	unsigned long		vaddr;	/* of the breakpoint */
};

static unsigned long offset_to_vaddr(struct vm_area_struct *vma, loff_t offset)
{
	return vma->vm_start + offset - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

static loff_t vaddr_to_offset(struct vm_area_struct *vma, unsigned long vaddr)
{
	return ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (vaddr - vma->vm_start);
}

/*
 * Breakpoints can be only in private mappings that may execute: a shared
 * mapping would have us write into the page cache.
 */
static bool vma_probeable(struct vm_area_struct *vma)
{
	vm_flags_t mask = VM_HUGETLB | VM_MAYEXEC | VM_MAYSHARE;

	return vma->vm_file && (vma->vm_flags & mask) == VM_MAYEXEC;
}

/*
 * And they are written only where the program cannot store: in a
 * writable private mapping the byte at the probed offset may be the
 * program's own data, which the breakpoint would hide and its removal
 * (putting back the file's byte) destroy.  A mapping made writable after
 * the breakpoint went in still has it taken out (vma_probeable()).
 */
static bool vma_installable(struct vm_area_struct *vma)
{
	return vma_probeable(vma) && !(vma->vm_flags & VM_WRITE);
}

/* uprobe_write_opcode(): the byte is neither the original nor ours. */
#define UPROBE_OPCODE_FOREIGN	2

/*
 * A dead probe maps nothing: its inode may be gone, and another file's
 * inode may have its address (uprobe_retire() drops it).  A live one
 * holds its inode, so the comparison is sound.
 */
static bool probe_inode_is(struct uprobe *uprobe, struct inode *inode)
{
	return !test_bit(UPROBE_F_DEAD, &uprobe->flags) && uprobe->inode == inode;
}

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
 * Copy @len bytes at @pos of @mapping to @dst.  With @file NULL, only
 * from pages the page cache holds up to date, -ENODATA for one it does
 * not: no I/O (some filesystems read a page only through an open file).
 */
static int read_file_bytes(struct address_space *mapping, struct file *file,
			   loff_t pos, u8 *dst, size_t len)
{
	while (len) {
		pgoff_t index = pos >> PAGE_SHIFT;
		size_t off = offset_in_page(pos);
		size_t n = min(len, PAGE_SIZE - off);
		struct page *page;

		if (!file) {
			page = find_get_page(mapping, index);
			if (page && !PageUptodate(page)) {
				put_page(page);
				page = NULL;
			}
			if (!page)
				return -ENODATA;
		} else if (shmem_mapping(mapping)) {
			page = shmem_read_mapping_page(mapping, index);
		} else {
			page = read_mapping_page(mapping, index, file);
		}
		if (IS_ERR(page))
			return PTR_ERR(page);
		memcpy_from_page(dst, page, off, n);
		put_page(page);
		pos += n;
		dst += n;
		len -= n;
	}
	return 0;
}

/*
 * Copy as many bytes of the probed instruction as the architecture keeps
 * in arch.insn from the page cache to @dst (zeroes past the end of the
 * file).  Not every architecture defines MAX_UINSN_BYTES (arm64 keeps one
 * __le32), so the field's size is the measure.  @file is a mapping's
 * file, or NULL to read only what the page cache holds.
 */
static int read_orig_insn(struct uprobe *uprobe, struct file *file, u8 *dst)
{
	loff_t pos = uprobe->offset, size = i_size_read(uprobe->inode);
	size_t len = sizeof(uprobe->arch.insn);

	memset(dst, 0, len);
	if (pos >= size)
		return -EINVAL;
	return read_file_bytes(uprobe->inode->i_mapping, file, pos, dst,
			       min_t(loff_t, len, size - pos));
}

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

/* Read the opcode at @vaddr of @mm without breaking copy-on-write. */
static int read_opcode(struct mm_struct *mm, unsigned long vaddr,
		       uprobe_opcode_t *opcode)
{
	struct page *page;
	long got;

	got = get_user_pages_remote(mm, vaddr, 1, FOLL_FORCE, &page, NULL, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	memcpy_from_page((char *)opcode, page, offset_in_page(vaddr),
			 UPROBE_SWBP_INSN_SIZE);
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

/**
 * uprobe_write_opcode - write one opcode into @mm's private copy of a page
 * @auprobe: the probe (unused here; arch overrides of set_swbp pass it)
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
	unsigned int flags = FOLL_FORCE | FOLL_WRITE | FOLL_SPLIT_PMD;
	bool to_swbp = is_swbp_insn(&opcode);
	struct vm_area_struct *vma;
	uprobe_opcode_t cur;
	struct page *page;
	void *kaddr;
	long got;
	int ret;

	mmap_assert_write_locked(mm);
	/*
	 * A restore looks first: an mm whose page has no breakpoint of ours
	 * (it never got one, or the program or a debugger changed the byte)
	 * is left exactly as it is, no copy made, no huge page split.
	 */
	if (!to_swbp) {
		page = private_copy(mm, vaddr);
		if (IS_ERR_OR_NULL(page))
			return PTR_ERR_OR_ZERO(page) ?: 1;
		ret = page_has_swbp(page, vaddr);
		put_page(page);
		if (!ret)
			return 1;
	}
	/*
	 * One forced write fault both reads and writes: it breaks COW even
	 * when there turns out to be nothing to write, but then the page is
	 * a copy already (a breakpoint is there).
	 */
	got = get_user_pages_remote(mm, vaddr, 1, flags, &page, &vma, NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	/* Never write through to the page cache. */
	if (WARN_ON_ONCE(!PageAnon(page) || (vma->vm_flags & VM_MAYSHARE))) {
		put_page(page);
		return -EFAULT;
	}
	kaddr = kmap_local_page(page);
	memcpy(&cur, kaddr + offset_in_page(vaddr), UPROBE_SWBP_INSN_SIZE);
	ret = 1;
	if (to_swbp && !is_swbp_insn(&cur) &&
	    memcmp(&cur, auprobe->insn, UPROBE_SWBP_INSN_SIZE))
		ret = UPROBE_OPCODE_FOREIGN;
	else if (memcmp(&cur, &opcode, UPROBE_SWBP_INSN_SIZE) &&
		 (to_swbp ? !is_swbp_insn(&cur) : is_swbp_insn(&cur))) {
		copy_to_user_page(vma, page, vaddr,
				  kaddr + offset_in_page(vaddr), &opcode,
				  UPROBE_SWBP_INSN_SIZE);
		ret = 0;
	}
	kunmap_local(kaddr);
	if (!ret)
		set_page_dirty_lock(page);
	if (!to_swbp)
		drop_identical_copy(vma, vaddr, page);
	put_page(page);
	return ret;
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

/* ---- SDT semaphores ---- */

static loff_t vma_file_start(struct vm_area_struct *vma)
{
	return (loff_t)vma->vm_pgoff << PAGE_SHIFT;
}

static loff_t vma_file_end(struct vm_area_struct *vma)
{
	return vma_file_start(vma) + (vma->vm_end - vma->vm_start);
}

/* @vma maps the probe's file over its semaphore, whatever its protection. */
static bool vma_covers_refctr(struct vm_area_struct *vma, struct uprobe *uprobe)
{
	return vma->vm_file && probe_inode_is(uprobe, file_inode(vma->vm_file)) &&
	       uprobe->ref_ctr_offset >= vma_file_start(vma) &&
	       uprobe->ref_ctr_offset < vma_file_end(vma);
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

/* The data segment is not mapped yet: uprobe_mmap() will count it. */
static void refctr_wait(struct uprobe *uprobe, struct uprobe_bp_table *t,
			unsigned long vaddr)
{
	struct refctr_pending *p, *q;

	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return;	/* the semaphore stays at 0: the probe's site is skipped */
	p->uprobe = get_uprobe(uprobe);
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
	put_uprobe(p->uprobe);
	kfree(p);
}

static void refctr_on_install(struct uprobe *uprobe, struct mm_struct *mm,
			      struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct vm_area_struct *vma = refctr_vma(uprobe, mm);

	if (vma)
		refctr_add(uprobe, vma, 1);
	else
		refctr_wait(uprobe, t, vaddr);
}

/* The semaphore's page is a private copy: made so by a count, if any. */
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

/*
 * A breakpoint of ours found in place with no table entry: a split re-made
 * its mapping (uprobe_munmap() of the whole VMA, then uprobe_mmap() of
 * each part), which forgot the entry and any count still waiting for the
 * semaphore.  A loader that maps a whole library, then its data segment
 * over the tail, does that.  A semaphore mapped writable, or in a private
 * copy (a mapping made read-only since), was counted when the breakpoint
 * or the semaphore came; one only in the file's page (the loader's first
 * mapping of the whole file) or not mapped at all waits again.
 */
static void refctr_on_refind(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr)
{
	if (!refctr_vma(uprobe, mm) && !refctr_page_private(uprobe, mm))
		refctr_wait(uprobe, t, vaddr);
}

static void refctr_pending_free_list(struct list_head *list)
{
	struct refctr_pending *p, *tmp;

	list_for_each_entry_safe(p, tmp, list, node) {
		put_uprobe(p->uprobe);
		kfree(p);
	}
}

/*
 * Move the pending records of @t that @match accepts to @out.  Context:
 * any; the caller frees or applies them outside the lock.
 */
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

static void refctr_on_remove(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct pending_key k = { .uprobe = uprobe, .start = vaddr,
				 .end = vaddr + 1, .one = true };
	struct vm_area_struct *vma;
	LIST_HEAD(gone);

	/* Never counted: just forget it. */
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

/* A writable file mapping appeared: count the breakpoints waiting for it. */
static void refctr_apply_pending(struct vm_area_struct *vma)
{
	struct uprobe_bp_table *t = bp_table(vma->vm_mm);
	struct refctr_pending *p;
	LIST_HEAD(ready);

	if (!t || (vma->vm_flags & (VM_WRITE | VM_SHARED)) != VM_WRITE)
		return;
	refctr_pending_take(t, &ready, pending_in_vma, vma);
	list_for_each_entry(p, &ready, node)
		if (vma_holds_refctr(vma, p->uprobe))
			refctr_add(p->uprobe, vma, 1);
	refctr_pending_free_list(&ready);
}

/* ---- one breakpoint in one mm ---- */

/*
 * Analyse the probed instruction, once per probe, at its first install
 * (the architecture needs an mm to know the instruction set).  A verdict
 * of the architecture is kept; a failure to read the file is not.  The
 * bytes are read before the mutex is taken: a slow read (FUSE, NFS) must
 * not hold up every other analysis on the system, and the forks that
 * wait for the walk that holds dup_mmap_sem meanwhile.
 */
static noinline int uprobe_analyze(struct uprobe *uprobe,
				   struct vm_area_struct *vma, unsigned long vaddr)
{
	u8 insn[sizeof(uprobe->arch.insn)];
	int err;

	err = read_orig_insn(uprobe, vma->vm_file, insn);
	mutex_lock(&uprobes_analyze_mutex);
	if (!test_bit(UPROBE_F_ANALYZED, &uprobe->flags)) {
		if (err)
			goto unlock;
		memcpy(&uprobe->arch.insn, insn, sizeof(insn));
		if (is_trap_insn((uprobe_opcode_t *)&uprobe->arch.insn))
			err = -ENOTSUPP;
		else
			err = arch_uprobe_analyze_insn(&uprobe->arch,
						       vma->vm_mm, vaddr);
		uprobe->analyze_err = err;
		/* Pairs with the smp_rmb() above: the verdict before the bit. */
		smp_wmb();
		set_bit(UPROBE_F_ANALYZED, &uprobe->flags);
	}
	err = uprobe->analyze_err;
unlock:
	mutex_unlock(&uprobes_analyze_mutex);
	return err;
}

/*
 * Is the probed file code of the mode current runs in?  An ELF header
 * says; other files (scripts' interpreters are ELF, so: raw code) are
 * taken to be.  @file as for read_orig_insn().
 */
static int file_in_current_mode(struct uprobe *uprobe, struct file *file)
{
	bool is64 = IS_ENABLED(CONFIG_64BIT) && !in_compat_syscall();
	u8 ident[EI_NIDENT];
	int err;

	if (i_size_read(uprobe->inode) < EI_NIDENT)
		return 1;
	err = read_file_bytes(uprobe->inode->i_mapping, file, 0, ident,
			      sizeof(ident));
	if (err)
		return err;
	if (memcmp(ident, ELFMAG, SELFMAG))
		return 1;
	return ident[EI_CLASS] == (is64 ? ELFCLASS64 : ELFCLASS32);
}

/* Read what uprobe_analyze_unmapped() judges: 1 to judge, 0 not to. */
static int read_unmapped(struct uprobe *uprobe, struct file *file, u8 *dst)
{
	int ret = file_in_current_mode(uprobe, file);

	if (ret <= 0)
		return ret;
	ret = read_orig_insn(uprobe, file, dst);
	return ret ? ret : 1;
}

/**
 * uprobe_analyze_unmapped - judge a registered probe no process maps yet
 * @path: the probed file
 * @offset: the offset a consumer was just registered at
 *
 * A probe's instruction is analysed at its first install, in the first mm
 * that maps it (the architecture needs an mm to know the instruction
 * set).  With no such mm when it is registered, an instruction the
 * architecture refuses would be refused only when a process maps the
 * file, where no error reaches whoever registered the probe, and the
 * probe would silently never fire.  This reads the instruction and asks
 * the architecture now, in current's mode, when the file is code of that
 * mode; the plan itself is still made at the first install.  The bytes
 * come from the page cache when it holds them; the file is opened for a
 * read only when it does not, so that an enable does no I/O, and no
 * filesystem's open path, in the common case.
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: 0 when the probe is fine, already analysed, gone, or cannot be
 * judged here; the refusal (-ENOTSUPP or -EINVAL) otherwise, and the
 * caller then unregisters.
 */
int uprobe_analyze_unmapped(const struct path *path, loff_t offset)
{
	/* The inode probes are registered on: overlayfs's lower or upper one. */
	struct uprobe *uprobe = uprobe_find(d_real_inode(path->dentry), offset);
	struct arch_uprobe *aup = NULL;
	struct file *file = NULL;
	int err = 0, judge;

	if (!uprobe)
		return 0;
	if (test_bit(UPROBE_F_ANALYZED, &uprobe->flags) || !current->mm)
		goto out;
	aup = kzalloc(sizeof(*aup), GFP_KERNEL);
	if (!aup)
		goto out;
	judge = read_unmapped(uprobe, NULL, (u8 *)&aup->insn);
	if (judge == -ENODATA) {
		file = dentry_open(path, O_RDONLY, current_cred());
		if (IS_ERR(file)) {
			file = NULL;
			goto out;	/* no verdict: the install gives it */
		}
		judge = read_unmapped(uprobe, file, (u8 *)&aup->insn);
	}
	if (judge <= 0)
		goto out;
	if (is_trap_insn((uprobe_opcode_t *)&aup->insn))
		err = -ENOTSUPP;
	else
		err = arch_uprobe_analyze_insn(aup, current->mm, 0);
out:
	if (file)
		fput(file);
	kfree(aup);
	put_uprobe(uprobe);
	return err;
}
EXPORT_SYMBOL_GPL(uprobe_analyze_unmapped);

/* Inline: every install of a batch asks, and only the first analyses. */
static __always_inline int uprobe_prepare(struct uprobe *uprobe,
					  struct vm_area_struct *vma,
					  unsigned long vaddr)
{
	if (test_bit(UPROBE_F_ANALYZED, &uprobe->flags)) {
		smp_rmb();	/* analyze_err and arch, set before the bit */
		return uprobe->analyze_err;
	}
	return uprobe_analyze(uprobe, vma, vaddr);
}

/*
 * Only a probe whose instruction was analysed and accepted writes
 * breakpoints.  Any other (refused, or never installed: its bytes are not
 * even known) has none to take back, and the 0xcc a removal would find at
 * its address is the program's own (a probe on an int3 is refused).
 */
static bool uprobe_may_have_bps(struct uprobe *uprobe)
{
	if (!test_bit(UPROBE_F_ANALYZED, &uprobe->flags))
		return false;
	smp_rmb();	/* analyze_err, set before the bit */
	return !uprobe->analyze_err;
}

static int install_bp(struct uprobe *uprobe, struct vm_area_struct *vma,
		      unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t;
	struct uprobe *owner;
	int ret, err;

	mmap_assert_write_locked(mm);
	if (!vma_installable(vma))
		return 0;
	err = uprobe_prepare(uprobe, vma, vaddr);
	if (err)
		return err;
	t = bp_table_create(mm);
	if (!t)
		return -ENOMEM;
	owner = uprobe_bp_lookup(mm, vaddr);
	if (owner == uprobe)
		return 0;

	/* Before the breakpoint can be hit: the trap notifier checks it. */
	if (!test_bit(MMF_HAS_UPROBES, &mm->flags))
		set_bit(MMF_HAS_UPROBES, &mm->flags);

	ret = set_swbp(&uprobe->arch, mm, vaddr);
	if (ret < 0)
		return ret;
	if (ret == UPROBE_OPCODE_FOREIGN)
		return 0;	/* not ours to probe in this mm */
	/* Over a stale entry (from a probe since unregistered), if any. */
	err = bp_table_set(t, vaddr, uprobe);
	if (err) {
		if (!ret)
			set_orig_insn(&uprobe->arch, mm, vaddr);
		return err;
	}
	/*
	 * The semaphore counts breakpoints written, not entries.  One found
	 * in place under a dead probe's entry (its removal failed) keeps
	 * that probe's count.
	 */
	if (uprobe->ref_ctr_offset) {
		if (!ret)
			refctr_on_install(uprobe, mm, t, vaddr);
		else if (!owner)
			refctr_on_refind(uprobe, mm, t, vaddr);
	}
	return 0;
}

static void remove_bp(struct uprobe *uprobe, struct vm_area_struct *vma,
		      unsigned long vaddr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t = bp_table(mm);
	int ret;

	mmap_assert_write_locked(mm);
	if (!uprobe_may_have_bps(uprobe))
		return;
	if (t) {
		struct uprobe *owner = bp_table_lookup(t, vaddr);

		/*
		 * A batched unregister walks after its probe may have been
		 * retired and a new probe installed at the same place: the
		 * breakpoint is the new probe's.
		 */
		if (owner && owner != uprobe &&
		    !test_bit(UPROBE_F_DEAD, &owner->flags))
			return;
		/* Erase first: a thread trapping now finds no entry, then no bp. */
		bp_table_erase(t, vaddr);
	}
	ret = set_orig_insn(&uprobe->arch, mm, vaddr);
	/*
	 * Not restored (a fatal signal of ours stops get_user_pages(), or no
	 * memory): the entry goes back, so that a hit still finds the probe,
	 * whose instruction it then runs, rather than taking the breakpoint
	 * for the program's own and killing it with SIGTRAP.
	 */
	if (ret < 0 && t)
		bp_table_add(t, vaddr, uprobe);
	if (!ret && uprobe->ref_ctr_offset)
		refctr_on_remove(uprobe, mm, t, vaddr);
}

/* ---- all the mms that map a file ---- */

static int cmp_mm(const void *a, const void *b)
{
	const struct mm_struct *ma = *(struct mm_struct * const *)a;
	const struct mm_struct *mb = *(struct mm_struct * const *)b;

	return ma < mb ? -1 : ma > mb;
}

struct mm_target {
	struct mm_struct	*mm;
	unsigned long		vaddr;
};

/*
 * The (mm, address) pairs where @uprobe's offset is mapped executable, each
 * with a reference on the mm.  Collected under i_mmap_rwsem, which is
 * dropped before the mms are locked.  The array is allocated with @gfp.
 */
static struct mm_target *collect_targets(struct uprobe *uprobe,
					 unsigned int *nr, gfp_t gfp)
{
	struct address_space *mapping = uprobe->inode->i_mapping;
	pgoff_t pgoff = uprobe->offset >> PAGE_SHIFT;
	struct mm_target *targets = NULL;
	unsigned int want = 0, got, i;
	struct vm_area_struct *vma;

	for (;;) {
		got = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, pgoff, pgoff) {
			if (!vma_probeable(vma))
				continue;
			if (got < want) {
				if (!mmget_not_zero(vma->vm_mm))
					continue;
				targets[got].mm = vma->vm_mm;
				targets[got].vaddr =
					offset_to_vaddr(vma, uprobe->offset);
			}
			got++;
		}
		i_mmap_unlock_read(mapping);
		if (got <= want)
			break;
		for (i = 0; i < want; i++)
			mmput(targets[i].mm);
		kvfree(targets);
		want = got + 4;
		targets = kvmalloc_array(want, sizeof(*targets), gfp);
		if (!targets)
			return ERR_PTR(-ENOMEM);
	}
	*nr = got;
	return targets;
}

/*
 * Install @uprobe at @vaddr of @vma where @uc's filter wants it (@uc !=
 * NULL), or remove it if no consumer's filter wants it.  Both are
 * idempotent, so visiting a place twice does no harm.
 */
static int visit_vma(struct uprobe *uprobe, struct vm_area_struct *vma,
		     unsigned long vaddr, struct uprobe_consumer *uc)
{
	struct mm_struct *mm = vma->vm_mm;

	if (uc) {
		if (!uc->filter || uc->filter(uc, UPROBE_FILTER_REGISTER, mm))
			return install_bp(uprobe, vma, vaddr);
	} else if (!uprobe_filter_chain(uprobe, UPROBE_FILTER_UNREGISTER, mm)) {
		remove_bp(uprobe, vma, vaddr);
	}
	return 0;
}

/*
 * The address collected under i_mmap_rwsem no longer maps the probe: an
 * mremap() moved the mapping before we locked the mm, and the mapping at
 * the new address was linked after we looked, so it is on no list of
 * ours.  Its pages kept their breakpoints: visit every VMA of @mm that
 * maps the probe.
 */
static int visit_moved(struct uprobe *uprobe, struct mm_struct *mm,
		       struct uprobe_consumer *uc)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;
	unsigned long vaddr;
	int ret = 0;

	for_each_vma(vmi, vma) {
		if (!vma_probeable(vma) ||
		    file_inode(vma->vm_file) != uprobe->inode)
			continue;
		vaddr = offset_to_vaddr(vma, uprobe->offset);
		if (vaddr < vma->vm_start || vaddr >= vma->vm_end)
			continue;
		ret = visit_vma(uprobe, vma, vaddr, uc);
		if (ret)
			break;
	}
	return ret;
}

static void analyze_ahead(struct inode *inode, struct uprobe_walk_item *items,
			  unsigned int nr);

/*
 * Visit every mm mapping @uprobe: install it where @uc's filter wants it
 * (@uc != NULL), or remove it where no consumer's filter wants it.
 */
static int walk_targets(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	struct mm_target *targets;
	unsigned int nr = 0, i;
	int ret = 0, err;

	lockdep_assert_held_write(&uprobe->register_rwsem);
	if (uc && !test_bit(UPROBE_F_ANALYZED, &uprobe->flags)) {
		struct uprobe_walk_item it = { .uprobe = uprobe, .uc = uc };

		analyze_ahead(uprobe->inode, &it, 1);
	}
	down_write(&dup_mmap_sem);
	/*
	 * A removal that gave up for want of this array would leave
	 * breakpoints that no consumer owns (the undo of a failed install,
	 * an unregister): it waits for the memory instead.
	 */
	targets = collect_targets(uprobe, &nr,
				  uc ? GFP_KERNEL : GFP_KERNEL | __GFP_NOFAIL);
	if (IS_ERR(targets)) {
		ret = PTR_ERR(targets);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct mm_struct *mm = targets[i].mm;
		unsigned long vaddr = targets[i].vaddr;
		struct vm_area_struct *vma;

		if (ret)
			goto next;	/* stop at the first error */
		mmap_write_lock(mm);
		if (check_stable_address_space(mm))
			goto unlock;	/* being torn down */
		/* Never had a breakpoint: nothing to remove, do not touch. */
		if (!uc && !test_bit(MMF_HAS_UPROBES, &mm->flags))
			goto unlock;
		vma = vma_lookup(mm, vaddr);
		if (vma_maps_probe(vma, uprobe, vaddr))
			err = visit_vma(uprobe, vma, vaddr, uc);
		else
			err = visit_moved(uprobe, mm, uc);
		if (err)
			ret = err;
unlock:
		mmap_write_unlock(mm);
next:
		mmput(mm);
	}
	kvfree(targets);
out:
	up_write(&dup_mmap_sem);
	return ret;
}

/**
 * uprobe_install_all - write a probe's breakpoint for a new consumer
 * @uprobe: the probe, with its register_rwsem held for write
 * @uc: the consumer whose filter decides, per mm
 *
 * Return: 0, or the first error (the caller undoes the rest).
 */
int uprobe_install_all(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	return walk_targets(uprobe, uc);
}

/**
 * uprobe_remove_all - take a probe's breakpoint out where nobody wants it
 * @uprobe: the probe, with its register_rwsem held for write
 */
void uprobe_remove_all(struct uprobe *uprobe)
{
	walk_targets(uprobe, NULL);
}

/* ---- many probes of one file at once ---- */

/*
 * The mms that map any page of @inode in [@first, @last] executable, each
 * once, with a reference.  Like collect_targets(), for a range.
 */
static struct mm_struct **collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, unsigned int *nr, gfp_t gfp)
{
	struct address_space *mapping = inode->i_mapping;
	struct mm_struct **mms = NULL;
	unsigned int want = 0, got, i, j;
	struct vm_area_struct *vma;

	for (;;) {
		got = 0;
		i_mmap_lock_read(mapping);
		vma_interval_tree_foreach(vma, &mapping->i_mmap, first, last) {
			if (!vma_probeable(vma))
				continue;
			if (got < want) {
				if (!mmget_not_zero(vma->vm_mm))
					continue;
				mms[got] = vma->vm_mm;
			}
			got++;
		}
		i_mmap_unlock_read(mapping);
		if (got <= want)
			break;
		for (i = 0; i < want; i++)
			mmput(mms[i]);
		kvfree(mms);
		want = got + 4;
		mms = kvmalloc_array(want, sizeof(*mms), gfp);
		if (!mms)
			return ERR_PTR(-ENOMEM);
	}
	/* An mm maps a file in several VMAs: visit it once. */
	sort(mms, got, sizeof(*mms), cmp_mm, NULL);
	for (i = 0, j = 0; i < got; i++) {
		if (j && mms[j - 1] == mms[i])
			mmput(mms[i]);
		else
			mms[j++] = mms[i];
	}
	*nr = j;
	return mms;
}

/* The first of @items (sorted by offset) at or after @offset. */
static unsigned int first_item_from(struct uprobe_walk_item *items,
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
 * Write the breakpoints of the picked @items (all on one page of @vma), or
 * restore their original opcodes, through one forced write fault: what
 * set_swbp() and set_orig_insn() do one opcode at a time.  After restores,
 * the private copy is compared with the file's page once.  Sets ->written
 * where a byte changed.
 */
static int write_page_opcodes(struct vm_area_struct *vma,
			      struct uprobe_walk_item *items, unsigned int nr,
			      bool install)
{
	unsigned int flags = FOLL_FORCE | FOLL_WRITE | FOLL_SPLIT_PMD;
	struct vm_area_struct *gvma;
	unsigned long vaddr;
	bool dirty = false;
	struct page *page;
	unsigned int i;
	void *kaddr;
	long got;

	for (i = 0; !items[i].pick; i++)
		;	/* the caller picked one at least */
	vaddr = offset_to_vaddr(vma, items[i].uprobe->offset);
	/* As uprobe_write_opcode(): restore only in a page that has ours. */
	if (!install) {
		bool any = false;

		page = private_copy(vma->vm_mm, vaddr);
		if (IS_ERR_OR_NULL(page))
			return PTR_ERR_OR_ZERO(page);
		for (; i < nr && !any; i++) {
			unsigned long at;

			if (!items[i].pick)
				continue;
			at = offset_to_vaddr(vma, items[i].uprobe->offset);
			any = page_has_swbp(page, at);
		}
		put_page(page);
		if (!any)
			return 0;
	}
	got = get_user_pages_remote(vma->vm_mm, vaddr, 1, flags, &page, &gvma,
				    NULL);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	/* Never write through to the page cache. */
	if (WARN_ON_ONCE(!PageAnon(page) || (gvma->vm_flags & VM_MAYSHARE))) {
		put_page(page);
		return -EFAULT;
	}
	kaddr = kmap_local_page(page);
	for (i = 0; i < nr; i++) {
		struct uprobe_walk_item *it = &items[i];
		uprobe_opcode_t cur, op;
		void *at;

		if (!it->pick)
			continue;
		vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		at = kaddr + offset_in_page(vaddr);
		memcpy(&cur, at, UPROBE_SWBP_INSN_SIZE);
		if (install)
			op = UPROBE_SWBP_INSN;
		else
			memcpy(&op, it->uprobe->arch.insn, UPROBE_SWBP_INSN_SIZE);
		/* As uprobe_write_opcode(): the program's own byte stays. */
		if (install && !is_swbp_insn(&cur) &&
		    memcmp(&cur, it->uprobe->arch.insn, UPROBE_SWBP_INSN_SIZE)) {
			it->foreign = true;
			continue;
		}
		/* As uprobe_write_opcode(): leave a byte someone else changed. */
		if (!memcmp(&cur, &op, UPROBE_SWBP_INSN_SIZE) ||
		    is_swbp_insn(&cur) == install)
			continue;
		copy_to_user_page(gvma, page, vaddr, at, &op,
				  UPROBE_SWBP_INSN_SIZE);
		it->written = true;
		dirty = true;
	}
	kunmap_local(kaddr);
	if (dirty)
		set_page_dirty_lock(page);
	if (!install)
		drop_identical_copy(gvma, vaddr, page);
	put_page(page);
	return 0;
}

/* Pages between two probes' pages that one readahead still spans. */
#define ANALYZE_RA_GAP		16
/* At most this many pages per readahead. */
#define ANALYZE_RA_MAX		256

static void readahead_pages(struct file *file, pgoff_t first, pgoff_t last)
{
	struct address_space *mapping = file->f_mapping;
	struct file_ra_state ra;

	file_ra_state_init(&ra, mapping);
	page_cache_sync_readahead(mapping, &ra, file, first, last - first + 1);
}

/*
 * Is @it's probe still to be analysed, in @mm: not yet, its registration
 * has not failed, and it goes into @mm (its consumer's filter, as
 * install_page() asks)?
 */
static bool item_to_analyze(const struct uprobe_walk_item *it,
			    struct mm_struct *mm)
{
	struct uprobe_consumer *uc = it->uc;

	if (test_bit(UPROBE_F_ANALYZED, &it->uprobe->flags) || it->err)
		return false;
	return !uc->filter || uc->filter(uc, UPROBE_FILTER_REGISTER, mm);
}

/*
 * Analyse the probes of @items (sorted, all in @vma, to install) that
 * item_to_analyze() picks, reading their pages into the page cache first,
 * one request per run of nearby pages: analysed one by one, each probe on
 * a page not cached yet waited for a read of its own, a network round trip
 * per page on 9p or NFS.  Return: how many were analysed, failures
 * included (a failed read is tried again by uprobe_prepare()).
 */
static unsigned int analyze_items(struct vm_area_struct *vma,
				  struct uprobe_walk_item *items,
				  unsigned int nr)
{
	struct file *file = vma->vm_file;
	loff_t size = i_size_read(file_inode(file));
	pgoff_t first = 0, last = 0, index = 0, end = 0;
	unsigned int i, done = 0;
	bool run = false;

	if (file->f_mapping->a_ops->readahead && !shmem_mapping(file->f_mapping)) {
		for (i = 0; i <= nr; i++) {
			if (i < nr) {
				struct uprobe *u = items[i].uprobe;

				if (u->offset >= size ||
				    !item_to_analyze(&items[i], vma->vm_mm))
					continue;
				index = u->offset >> PAGE_SHIFT;
				/* The instruction may end on the next page. */
				end = min_t(loff_t, u->offset + sizeof(u->arch.insn),
					    size) - 1;
				end >>= PAGE_SHIFT;
				if (run && index <= last + ANALYZE_RA_GAP &&
				    end - first < ANALYZE_RA_MAX) {
					last = max(last, end);
					continue;
				}
			}
			if (run)
				readahead_pages(file, first, last);
			if (i < nr) {
				first = index;
				last = end;
				run = true;
			}
		}
	}
	for (i = 0; i < nr; i++) {
		struct uprobe *u = items[i].uprobe;

		if (!item_to_analyze(&items[i], vma->vm_mm))
			continue;
		uprobe_analyze(u, vma, offset_to_vaddr(vma, u->offset));
		done++;
	}
	return done;
}

/*
 * Point the table entries of @items (picked, all on one page of @vma) at
 * their probes, under one lock.  Those already there are unpicked.  At
 * the first entry the batch adds in this mm, the table makes room for
 * @room more at once (so a table is grown once per batch, not as it fills
 * up, and an mm that gets none of them gets no array); @room is then
 * zeroed.  Return: how many are still picked.
 */
static unsigned int claim_page_entries(struct uprobe_bp_table *t,
				       struct vm_area_struct *vma,
				       struct uprobe_walk_item *items,
				       unsigned int nr, unsigned int *room)
{
	unsigned int i, picked = 0;
	int ret;

	bp_table_lock(t);
	for (i = 0; i < nr; i++) {
		struct uprobe_walk_item *it = &items[i];
		unsigned long vaddr;

		if (!it->pick)
			continue;
		vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		while ((ret = bp_table_claim_locked(t, vaddr, it->uprobe)) ==
		       -ENOSPC) {
			bp_table_unlock(t);
			ret = bp_table_prepare(t, *room ?: 1);
			*room = 0;
			bp_table_lock(t);
			if (ret)
				break;
		}
		if (ret) {
			it->pick = false;
			if (ret < 0)
				it->err = ret;
			continue;
		}
		picked++;
	}
	bp_table_unlock(t);
	return picked;
}

/*
 * Install the probes of @items, all on one page of @vma, in its mm: the
 * table entries first (a thread that traps on a breakpoint finds its
 * entry), then the breakpoints, through one forced write fault.
 */
static void install_page(struct uprobe_bp_table *t, struct vm_area_struct *vma,
			 struct uprobe_walk_item *items, unsigned int nr,
			 unsigned int *room)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_walk_item *it;
	unsigned int i, picked = 0;
	unsigned long vaddr;
	int err;

	for (i = 0; i < nr; i++) {
		it = &items[i];
		it->pick = false;
		it->written = false;
		it->foreign = false;
		if (it->err)
			continue;	/* failed elsewhere: undone later */
		if (it->uc->filter &&
		    !it->uc->filter(it->uc, UPROBE_FILTER_REGISTER, mm))
			continue;
		vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		err = uprobe_prepare(it->uprobe, vma, vaddr) ?: (t ? 0 : -ENOMEM);
		if (err) {
			it->err = err;
			continue;
		}
		it->pick = true;
		picked++;
	}
	if (!picked || !claim_page_entries(t, vma, items, nr, room))
		return;

	/* Before the breakpoints can be hit: the trap handler checks it. */
	if (!test_bit(MMF_HAS_UPROBES, &mm->flags))
		set_bit(MMF_HAS_UPROBES, &mm->flags);
	err = write_page_opcodes(vma, items, nr, true);
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (!it->pick)
			continue;
		vaddr = offset_to_vaddr(vma, it->uprobe->offset);
		if (err) {
			it->err = err;
			bp_table_erase(t, vaddr);
			continue;
		}
		if (it->foreign) {
			bp_table_erase(t, vaddr);	/* not ours here */
			continue;
		}
		if (it->written && it->uprobe->ref_ctr_offset)
			refctr_on_install(it->uprobe, mm, t, vaddr);
	}
}

/*
 * Take out the breakpoints of @items, all on one page of @vma, that no
 * consumer wants in its mm any more: the table entries first, then the
 * bytes, as remove_bp() does.
 */
static void remove_page(struct uprobe_bp_table *t, struct vm_area_struct *vma,
			struct uprobe_walk_item *items, unsigned int nr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_walk_item *it;
	unsigned int i, picked = 0;
	unsigned long vaddr;

	for (i = 0; i < nr; i++) {
		it = &items[i];
		it->pick = false;
		it->written = false;
		if (!uprobe_may_have_bps(it->uprobe))
			continue;
		if (uprobe_has_consumers(it->uprobe) &&
		    uprobe_filter_chain(it->uprobe, UPROBE_FILTER_UNREGISTER, mm))
			continue;
		it->pick = true;
		picked++;
	}
	if (picked && t) {
		bp_table_lock(t);
		for (i = 0; i < nr; i++) {
			it = &items[i];
			if (!it->pick)
				continue;
			vaddr = offset_to_vaddr(vma, it->uprobe->offset);
			/* See remove_bp(). */
			if (!bp_table_release_locked(t, vaddr, it->uprobe)) {
				it->pick = false;
				picked--;
			}
		}
		bp_table_unlock(t);
	}
	if (!picked)
		return;
	if (write_page_opcodes(vma, items, nr, false)) {
		/* Not restored: the entries go back, as in remove_bp(). */
		for (i = 0; t && i < nr; i++) {
			it = &items[i];
			vaddr = offset_to_vaddr(vma, it->uprobe->offset);
			if (it->pick)
				bp_table_add(t, vaddr, it->uprobe);
		}
		return;
	}
	for (i = 0; i < nr; i++) {
		it = &items[i];
		if (it->written && it->uprobe->ref_ctr_offset)
			refctr_on_remove(it->uprobe, mm, t,
					 offset_to_vaddr(vma, it->uprobe->offset));
	}
}

/*
 * Architectures that override set_swbp() (arm: the breakpoint depends on
 * the probed instruction) write one opcode at a time.
 */
static bool batch_by_page(void)
{
	return !IS_ENABLED(CONFIG_ARM);
}

/*
 * Visit every place of @mm where an item's probe is mapped: the VMAs of the
 * file as they are now, under the mm's lock, so a mapping moved or added
 * since the mms were collected is not missed.  The probes of one page are
 * written or restored together.
 */
static void walk_batch_mm(struct mm_struct *mm, struct inode *inode,
			  struct uprobe_walk_item *items, unsigned int nr,
			  unsigned int *to_analyze)
{
	VMA_ITERATOR(vmi, mm, 0);
	bool install = items[0].uc;
	struct uprobe_bp_table *t = install ? bp_table_create(mm) : bp_table(mm);
	unsigned int room = nr;
	struct vm_area_struct *vma;
	struct uprobe_walk_item *it;
	unsigned int i, j;
	pgoff_t page;
	loff_t end;
	int err;

	for_each_vma(vmi, vma) {
		if (!vma_probeable(vma) || file_inode(vma->vm_file) != inode ||
		    (install && !vma_installable(vma)))
			continue;
		end = vaddr_to_offset(vma, vma->vm_end);
		i = first_item_from(items, nr, vaddr_to_offset(vma, vma->vm_start));
		if (install && *to_analyze) {
			for (j = i; j < nr && items[j].uprobe->offset < end; j++)
				;
			*to_analyze -= min(*to_analyze,
					   analyze_items(vma, items + i, j - i));
		}
		if (!batch_by_page()) {
			for (; i < nr && items[i].uprobe->offset < end; i++) {
				it = &items[i];
				if (it->err)
					continue;	/* undone later */
				err = visit_vma(it->uprobe, vma,
						offset_to_vaddr(vma, it->uprobe->offset),
						it->uc);
				if (err)
					it->err = err;
			}
			continue;
		}
		while (i < nr && items[i].uprobe->offset < end) {
			page = items[i].uprobe->offset >> PAGE_SHIFT;
			for (j = i + 1; j < nr && items[j].uprobe->offset < end; j++)
				if (items[j].uprobe->offset >> PAGE_SHIFT != page)
					break;
			if (install)
				install_page(t, vma, items + i, j - i, &room);
			else
				remove_page(t, vma, items + i, j - i);
			i = j;
		}
	}
}

/*
 * Analyse the probes of @items that are not yet, in the mms that map them
 * now, before the walk: the analysis reads the file, and the walk holds
 * dup_mmap_sem, which every fork() on the system waits for.  Each mm is
 * locked for read only, as a page fault would be.  What is left (a probe
 * whose page cannot be read, an mm mapped since) is analysed by the walk.
 */
static void analyze_ahead(struct inode *inode, struct uprobe_walk_item *items,
			  unsigned int nr)
{
	unsigned int nr_mms = 0, i, j, k, left = 0;
	struct vm_area_struct *vma;
	struct mm_struct **mms;
	loff_t end;

	for (i = 0; i < nr; i++)
		if (!items[i].err &&
		    !test_bit(UPROBE_F_ANALYZED, &items[i].uprobe->flags))
			left++;
	if (!left)
		return;
	mms = collect_mms(inode, items[0].uprobe->offset >> PAGE_SHIFT,
			  items[nr - 1].uprobe->offset >> PAGE_SHIFT, &nr_mms,
			  GFP_KERNEL);
	if (IS_ERR(mms))
		return;
	for (i = 0; i < nr_mms; i++) {
		VMA_ITERATOR(vmi, mms[i], 0);

		if (left && mmap_read_lock_killable(mms[i]) == 0) {
			for_each_vma(vmi, vma) {
				if (!left)
					break;
				if (!vma_installable(vma) ||
				    file_inode(vma->vm_file) != inode)
					continue;
				end = vaddr_to_offset(vma, vma->vm_end);
				j = first_item_from(items, nr,
						    vaddr_to_offset(vma, vma->vm_start));
				for (k = j; k < nr && items[k].uprobe->offset < end; k++)
					;
				left -= min(left, analyze_items(vma, items + j, k - j));
			}
			mmap_read_unlock(mms[i]);
		}
		mmput(mms[i]);
	}
	kvfree(mms);
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
 * one per probe.  Unlike uprobe_install_all(), the probes' register_rwsem
 * is not held: a consumer is on its probe's list before its breakpoint is
 * written, and every decision is taken from the list as it is under the
 * mm's mmap_lock, so walks of the same probe may interleave.
 *
 * Context: process context, may sleep; no uprobes lock held.
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
		analyze_ahead(inode, items, nr);
	down_write(&dup_mmap_sem);
	mms = collect_mms(inode, items[0].uprobe->offset >> PAGE_SHIFT,
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
			walk_batch_mm(mms[i], inode, items, nr, &to_analyze);
		mmap_write_unlock(mms[i]);
		mmput(mms[i]);
		cond_resched();
	}
	kvfree(mms);
out:
	up_write(&dup_mmap_sem);
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
	if (read_opcode(mm, vaddr, &op) || !is_swbp_insn(&op) ||
	    !uprobe_may_have_bps(uprobe)) {
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
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool removed = false;

	down_read(&uprobe->register_rwsem);
	mmap_write_lock(mm);
	if (!uprobe_filter_chain(uprobe, UPROBE_FILTER_UNREGISTER, mm)) {
		vma = vma_lookup(mm, vaddr);
		if (vma_maps_probe(vma, uprobe, vaddr)) {
			remove_bp(uprobe, vma, vaddr);
			removed = true;
		}
	}
	mmap_write_unlock(mm);
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
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	mmap_write_lock(mm);
	vma = vma_lookup(mm, vaddr);
	if (vma_maps_probe(vma, uprobe, vaddr))
		remove_bp(uprobe, vma, vaddr);
	mmap_write_unlock(mm);
}

/* ---- mmap, munmap, fork, exit ---- */

/**
 * uprobe_mmap - write the breakpoints a new mapping needs
 * @vma: a VMA just mapped (or re-made by a merge or split)
 *
 * Context: mmap_lock held for write.
 * Return: 0 (failures leave the mapping without the breakpoint).
 */
int uprobe_mmap(struct vm_area_struct *vma)
{
	struct uprobe **list;
	unsigned int nr, i;
	struct inode *inode;

	if (!vma->vm_file)
		return 0;
	refctr_apply_pending(vma);
	if (!vma_installable(vma) || uprobe_registry_empty())
		return 0;

	inode = file_inode(vma->vm_file);
	list = uprobe_collect_range(inode, vaddr_to_offset(vma, vma->vm_start),
				    vaddr_to_offset(vma, vma->vm_end), &nr);
	for (i = 0; i < nr; i++) {
		struct uprobe *uprobe = list[i];

		unsigned long vaddr = offset_to_vaddr(vma, uprobe->offset);
		int err = 0;

		if (uprobe_has_consumers(uprobe) &&
		    uprobe_filter_chain(uprobe, UPROBE_FILTER_MMAP, vma->vm_mm))
			err = install_bp(uprobe, vma, vaddr);
		/* Most likely an instruction the arch refuses, seen only now. */
		if (err)
			pr_warn_ratelimited("pid %d: probe at %pD:%#llx not installed: %d\n",
					    current->pid, vma->vm_file,
					    (unsigned long long)uprobe->offset, err);
		put_uprobe(uprobe);
	}
	kfree(list);
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
	struct pending_key k = { .start = start, .end = end };
	struct mm_struct *mm = vma->vm_mm;
	struct uprobe_bp_table *t;
	LIST_HEAD(gone);

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
	/*
	 * A breakpoint unmapped before its semaphore was mapped is not
	 * counted (an ELF loader maps the whole file first, then trims it).
	 */
	refctr_pending_take(t, &gone, pending_key_match, &k);
	refctr_pending_free_list(&gone);
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
	struct refctr_pending *p, *q;

	if (!test_bit(MMF_HAS_UPROBES, &oldmm->flags))
		return;
	set_bit(MMF_HAS_UPROBES, &newmm->flags);
	xol_dup_area(oldmm, newmm);
	if (!old)
		return;
	new = bp_table_create(newmm);
	if (!new)
		return;
	bp_table_dup(new, old, vma_copied, oldmm);
	spin_lock(&old->pending_lock);
	list_for_each_entry(p, &old->refctr_pending, node) {
		/* Only what the child has the breakpoint of, for a live probe. */
		if (test_bit(UPROBE_F_DEAD, &p->uprobe->flags) ||
		    !vma_copied(p->vaddr, oldmm))
			continue;
		q = kmalloc(sizeof(*q), GFP_NOWAIT | __GFP_NOWARN);
		if (!q)
			break;
		q->uprobe = get_uprobe(p->uprobe);
		q->vaddr = p->vaddr;
		list_add_tail(&q->node, &new->refctr_pending);
	}
	spin_unlock(&old->pending_lock);
}

static void bp_table_free_rcu(struct rcu_head *rcu)
{
	struct uprobe_bp_table *t = container_of(rcu, struct uprobe_bp_table, rcu);

	refctr_pending_free_list(&t->refctr_pending);
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
	if (!t)
		return;
	WRITE_ONCE(mm->uprobes_state.bp_table, NULL);
	call_rcu(&t->rcu, bp_table_free_rcu);
}
