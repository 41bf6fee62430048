// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: reading and judging the probed instruction.
 *
 * The architecture judges a probe's instruction once, at its first
 * install, in an mm that maps it (the mm gives the instruction set); the
 * verdict is kept in the probe.  The file is read outside the locks that
 * other analyses or forks wait for.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/compat.h>
#include <linux/elf.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

static DEFINE_MUTEX(uprobes_analyze_mutex);

/*
 * Copy @len bytes at @pos of @mapping to @dst.  With @file NULL, no I/O:
 * -ENODATA for a page not cached and up to date.
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
 * Copy the probed instruction, sizeof(arch.insn) bytes zero-padded past
 * the end of the file, to @dst.  @file as for read_file_bytes().
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

/**
 * uprobe_analyze - have the architecture judge a probe's instruction
 * @uprobe: the probe
 * @vma: a VMA mapping it
 * @vaddr: its address there
 *
 * Once per probe: the verdict is kept, a failure to read the file is not.
 * The file is read before the mutex is taken.
 *
 * Context: @vma's mmap_lock held; may sleep.
 * Return: 0 when the probe can be installed, else why not.
 */
noinline int uprobe_analyze(struct uprobe *uprobe, struct vm_area_struct *vma,
			    unsigned long vaddr)
{
	u8 insn[sizeof(uprobe->arch.insn)];
	int err;

	mmap_assert_locked(vma->vm_mm);
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
		/* The verdict before the bit: see uprobe_prepare(). */
		smp_wmb();
		set_bit(UPROBE_F_ANALYZED, &uprobe->flags);
	}
	err = uprobe->analyze_err;
unlock:
	mutex_unlock(&uprobes_analyze_mutex);
	return err;
}

/*
 * Is the probed file code of current's mode?  An ELF file says; any
 * other file is taken to be.  From the page cache only: -ENODATA if it
 * does not hold the bytes.
 */
static int file_in_current_mode(struct uprobe *uprobe)
{
	bool is64 = IS_ENABLED(CONFIG_64BIT) && !in_compat_syscall();
	u8 ident[EI_NIDENT];
	int err;

	if (i_size_read(uprobe->inode) < EI_NIDENT)
		return 1;
	err = read_file_bytes(uprobe->inode->i_mapping, NULL, 0, ident,
			      sizeof(ident));
	if (err)
		return err;
	if (memcmp(ident, ELFMAG, SELFMAG))
		return 1;
	return ident[EI_CLASS] == (is64 ? ELFCLASS64 : ELFCLASS32);
}

/* Read what uprobe_analyze_unmapped() judges: 1 to judge, 0 not to. */
static int read_unmapped(struct uprobe *uprobe, u8 *dst)
{
	int ret = file_in_current_mode(uprobe);

	if (ret <= 0)
		return ret;
	ret = read_orig_insn(uprobe, NULL, dst);
	return ret ? ret : 1;
}

/**
 * uprobe_analyze_unmapped - judge a registered probe no process maps yet
 * @path: the probed file
 * @offset: the offset a consumer was just registered at
 *
 * Without an mm mapping the file, the analysis waits for the first
 * install, where a refusal reaches nobody.  This asks the architecture
 * now, in current's mode, if the file is code of that mode, so that the
 * caller can report it.  It reads the page cache only: its callers hold
 * the tracing core's event_mutex, and a read could wait on the file's
 * filesystem (a FUSE daemon that sleeps) for as long as that likes.
 * Without the bytes there, no verdict.  Nothing is kept: the install
 * analyses again.
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: 0 when the probe is fine, already analysed, gone, or cannot be
 * judged in current's mode; -ENODATA when the page cache does not hold
 * the bytes; else the refusal (-ENOTSUPP or -EINVAL), and the caller
 * unregisters.
 */
int uprobe_analyze_unmapped(const struct path *path, loff_t offset)
{
	/* Probes are on the real inode, not overlayfs's. */
	struct uprobe *uprobe = uprobe_find(d_real_inode(path->dentry), offset);
	struct arch_uprobe *aup = NULL;
	int err = 0;

	if (!uprobe)
		return 0;
	if (test_bit(UPROBE_F_ANALYZED, &uprobe->flags) || !current->mm)
		goto out;
	aup = kzalloc(sizeof(*aup), GFP_KERNEL);
	if (!aup)
		goto out;
	err = read_unmapped(uprobe, (u8 *)&aup->insn);
	if (err <= 0) {
		/* Not current's mode, or past the end: no verdict here. */
		if (err != -ENODATA)
			err = 0;
		goto out;
	}
	if (is_trap_insn((uprobe_opcode_t *)&aup->insn))
		err = -ENOTSUPP;
	else
		err = arch_uprobe_analyze_insn(aup, current->mm, 0);
out:
	kfree(aup);
	uprobe_put(uprobe);
	return err;
}

#define ANALYZE_RA_GAP		16	/* pages between probes one read spans */
#define ANALYZE_RA_MAX		256	/* pages per read, at most */

static void readahead_pages(struct file *file, pgoff_t first, pgoff_t last)
{
	struct address_space *mapping = file->f_mapping;
	struct file_ra_state ra;

	file_ra_state_init(&ra, mapping);
	page_cache_sync_readahead(mapping, &ra, file, first, last - first + 1);
}

/* Is @it's probe not analysed yet, not failed, and wanted in @mm? */
static bool item_to_analyze(const struct uprobe_walk_item *it,
			    struct mm_struct *mm)
{
	return !test_bit(UPROBE_F_ANALYZED, &it->uprobe->flags) && !it->err &&
	       uprobe_item_wanted(it, mm);
}

/* Read the pages of the probes to analyse, one request per nearby run. */
static void readahead_items(struct vm_area_struct *vma,
			    struct uprobe_walk_item *items, unsigned int nr)
{
	struct file *file = vma->vm_file;
	loff_t size = i_size_read(file_inode(file));
	pgoff_t first = 0, last = 0, index, end;
	bool run = false;
	unsigned int i;

	if (!file->f_mapping->a_ops->readahead || shmem_mapping(file->f_mapping))
		return;
	for (i = 0; i < nr; i++) {
		struct uprobe *u = items[i].uprobe;

		if (u->offset >= size || !item_to_analyze(&items[i], vma->vm_mm))
			continue;
		index = u->offset >> PAGE_SHIFT;
		/* The instruction may end on the next page. */
		end = min_t(loff_t, u->offset + sizeof(u->arch.insn), size) - 1;
		end >>= PAGE_SHIFT;
		if (run && index <= last + ANALYZE_RA_GAP &&
		    end - first < ANALYZE_RA_MAX) {
			last = max(last, end);
			continue;
		}
		if (run)
			readahead_pages(file, first, last);
		first = index;
		last = end;
		run = true;
	}
	if (run)
		readahead_pages(file, first, last);
}

/**
 * uprobe_analyze_items - analyse the probes of a VMA not analysed yet
 * @vma: the VMA
 * @items: probes in @vma, sorted by offset
 * @nr: how many
 *
 * Their pages are read ahead first, rather than one by one.
 *
 * Context: @vma's mmap_lock held; may sleep.
 * Return: how many were analysed, failures included (a failed read is
 * tried again by uprobe_prepare()).
 */
unsigned int uprobe_analyze_items(struct vm_area_struct *vma,
				  struct uprobe_walk_item *items,
				  unsigned int nr)
{
	unsigned int i, done = 0;

	mmap_assert_locked(vma->vm_mm);
	readahead_items(vma, items, nr);
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
 * Does a probe left to analyse want @mm?  Asked without its mmap_lock, as
 * the hit path asks filters: a wrong answer only moves the analysis into
 * the walk, which asks again under the lock.
 */
static bool mm_wants_analysis(const struct uprobe_walk_item *items,
			      unsigned int nr, struct mm_struct *mm)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (item_to_analyze(&items[i], mm))
			return true;
	return false;
}

/**
 * uprobe_analyze_ahead - analyse a walk's probes before the walk
 * @inode: their file
 * @items: the probes, sorted by offset
 * @nr: how many
 *
 * The analysis reads the file, and the walk holds dup_mmap_sem, which
 * every fork waits for.  Each mm a probe wants is locked for read only.
 * What is left is analysed by the walk.
 *
 * Context: process context, may sleep; no mmap_lock held.
 */
void uprobe_analyze_ahead(struct inode *inode, struct uprobe_walk_item *items,
			  unsigned int nr)
{
	unsigned int nr_mms = 0, i, j, k, left = 0;
	struct vm_area_struct *vma;
	struct mm_struct **mms;

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

		/*
		 * An mm no probe wants would analyse nothing: skip its lock
		 * and its VMAs (every mm of a perf event's registration,
		 * before perf applies its filter).
		 */
		if (left && mm_wants_analysis(items, nr, mms[i]) &&
		    mmap_read_lock_killable(mms[i]) == 0) {
			for_each_vma(vmi, vma) {
				if (!left)
					break;
				if (!vma_installable(vma) ||
				    file_inode(vma->vm_file) != inode)
					continue;
				j = uprobe_first_item_from(items, nr,
							   vaddr_to_offset(vma, vma->vm_start));
				k = uprobe_first_item_from(items, nr,
							   vaddr_to_offset(vma, vma->vm_end));
				left -= min(left, uprobe_analyze_items(vma, items + j, k - j));
			}
			mmap_read_unlock(mms[i]);
		}
		mmput(mms[i]);
	}
	kvfree(mms);
}
