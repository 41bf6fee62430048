// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: what a probed instruction is.
 *
 * A probe's instruction is read from its file and judged by the
 * architecture once, at the probe's first install, in the first mm that
 * maps it (the architecture needs an mm to know the instruction set):
 * the verdict (a plan for the hit, or a refusal) is kept in the probe.
 * Reads happen outside any lock that other analyses or forks wait for,
 * and the pages of many probes are read ahead together.  A probe that no
 * process maps yet is judged from the page cache when its event is
 * enabled, so that a refusal reaches whoever enabled it
 * (uprobe_analyze_unmapped()).
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

static DEFINE_MUTEX(uprobes_analyze_mutex);

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
 * Analyse the probed instruction, once per probe, at its first install
 * (the architecture needs an mm to know the instruction set).  A verdict
 * of the architecture is kept; a failure to read the file is not.  The
 * bytes are read before the mutex is taken: a slow read (FUSE, NFS) must
 * not hold up every other analysis on the system, and the forks that
 * wait for the walk that holds dup_mmap_sem meanwhile.
 */
noinline int uprobe_analyze(struct uprobe *uprobe, struct vm_area_struct *vma,
			    unsigned long vaddr)
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
 * has not failed, and it goes into @mm?
 */
static bool item_to_analyze(const struct uprobe_walk_item *it,
			    struct mm_struct *mm)
{
	return !test_bit(UPROBE_F_ANALYZED, &it->uprobe->flags) && !it->err &&
	       uprobe_item_wanted(it, mm);
}

/*
 * Analyse the probes of @items (sorted, all in @vma, to install) that
 * item_to_analyze() picks, reading their pages into the page cache first,
 * one request per run of nearby pages: analysed one by one, each probe on
 * a page not cached yet waited for a read of its own, a network round trip
 * per page on 9p or NFS.  Return: how many were analysed, failures
 * included (a failed read is tried again by uprobe_prepare()).
 */
unsigned int uprobe_analyze_items(struct vm_area_struct *vma,
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
 * Analyse the probes of @items that are not yet, in the mms that map them
 * now, before the walk: the analysis reads the file, and the walk holds
 * dup_mmap_sem, which every fork() on the system waits for.  Each mm is
 * locked for read only, as a page fault would be.  What is left (a probe
 * whose page cannot be read, an mm mapped since) is analysed by the walk.
 */
void uprobe_analyze_ahead(struct inode *inode, struct uprobe_walk_item *items,
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
	mms = uprobe_collect_mms(inode, items[0].uprobe->offset >> PAGE_SHIFT,
				 items[nr - 1].uprobe->offset >> PAGE_SHIFT,
				 &nr_mms, GFP_KERNEL);
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
				j = uprobe_first_item_from(items, nr,
							   vaddr_to_offset(vma, vma->vm_start));
				for (k = j; k < nr && items[k].uprobe->offset < end; k++)
					;
				left -= min(left, uprobe_analyze_items(vma, items + j, k - j));
			}
			mmap_read_unlock(mms[i]);
		}
		mmput(mms[i]);
	}
	kvfree(mms);
}
