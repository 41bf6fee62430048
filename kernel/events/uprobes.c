// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the registry of probes and their consumers.
 *
 * Probes sit in one rbtree ordered by (inode address, offset): a file's
 * probes are adjacent, and a mapped range is found with one descent.  A
 * probe stays in the tree while it has consumers; it is freed with its
 * last reference, after an SRCU grace period.
 *
 * Locks, outermost first; none is taken in the other order:
 *
 *  uprobe->register_rwsem (rwsem)
 *	Write: a change of the probe's consumer list and the install or
 *	remove walk after it.  A batch walks after dropping it, deciding
 *	from the list as it is under each mmap_lock.  Read: the hit path,
 *	for UPROBE_HANDLER_REMOVE.
 *  dup_mmap_sem (rwsem, uprobes_install.c)
 *	Read: fork, until the new mm is linked.  Write: a walk.  So each mm
 *	is walked, or copied from one the walk has finished.
 *  mapping->i_mmap_rwsem (read)
 *	Only to collect the mms to walk; dropped before any mmap_lock.
 *  mm->mmap_lock
 *	Write: writing or restoring a breakpoint, adding table entries
 *	(an entry is added before its breakpoint is written, and erased
 *	before it is restored).
 *	Read: munmap erasing its own range, the hit path's slow lookup
 *	adding a missing entry or reading the byte that trapped.
 *  uprobes_analyze_mutex (mutex)
 *	The one-time analysis of a probe; never held over I/O.
 *  uprobes_treelock (rwlock), bp_table->lock, bp_table->pending_lock,
 *  xol_area->lock (spinlocks)
 *	Innermost: no other lock nests in them (but, in bp_table->lock,
 *	the rhashtable's bucket locks, its GFP_ATOMIC allocations and the
 *	queueing of its resize), nothing sleeps under them (a probe's last
 *	uprobe_put() only queues its free).
 *
 * Lockless:
 *  - A hit looks its address up in the mm's bp table under RCU and runs
 *    the handlers under uprobes_srcu, emulating there with page faults
 *    off.  What may wait on the process (the slow lookup, making the XOL
 *    area, a slot, a page, a removal a handler asked for) runs after the
 *    read section on a uprobe_tryget() reference; a dying probe's hit is
 *    re-executed.
 *  - Consumer lists are published with release stores and read under
 *    uprobes_srcu.  uprobe_unregister() waits for a grace period before
 *    it returns; uprobe_unregister_nosync() leaves that to its caller.
 */

#define pr_fmt(fmt) "uprobes: " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/srcu.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

DEFINE_SRCU(uprobes_srcu);

static struct rb_root uprobes_tree = RB_ROOT;
static DEFINE_RWLOCK(uprobes_treelock);

static void uprobe_free_srcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe, rcu));
}

/**
 * uprobe_put - drop a reference on a probe
 * @uprobe: the probe
 *
 * Context: any.  The probe is freed after an SRCU grace period.
 */
void uprobe_put(struct uprobe *uprobe)
{
	if (refcount_dec_and_test(&uprobe->ref))
		call_srcu(&uprobes_srcu, &uprobe->rcu, uprobe_free_srcu);
}

/**
 * uprobe_find - look a probe up in the registry
 * @inode: the file
 * @offset: the offset in it
 *
 * Context: any but NMI; takes uprobes_treelock.
 * Return: the probe, referenced, or NULL.
 */
struct uprobe *uprobe_find(struct inode *inode, loff_t offset)
{
	struct uprobe *uprobe;

	read_lock(&uprobes_treelock);
	uprobe = uprobe_tree_search(&uprobes_tree, inode, offset);
	if (uprobe)
		uprobe_get(uprobe);
	read_unlock(&uprobes_treelock);
	return uprobe;
}

/**
 * uprobe_registry_empty - is no probe registered?
 *
 * Context: any.  Racy, which is enough for uprobe_mmap(): a probe added
 * meanwhile finds the new mapping in its own walk.
 * Return: true when the registry is empty.
 */
bool uprobe_registry_empty(void)
{
	return RB_EMPTY_ROOT(&uprobes_tree);
}

/**
 * uprobe_collect_range - the next probes of a file range
 * @inode: the file
 * @start: first offset
 * @end: offset past the range
 * @items: where to put them
 * @room: how many @items can take
 *
 * Context: takes uprobes_treelock.
 * Return: how many were put in @items, by offset, each zeroed but for
 * its referenced probe; fewer than @room only when the range is done.
 */
unsigned int uprobe_collect_range(struct inode *inode, loff_t start,
				  loff_t end, struct uprobe_walk_item *items,
				  unsigned int room)
{
	struct uprobe_range r = { inode, start, end };
	unsigned int got = 0;
	struct rb_node *n;

	if (!room)
		return 0;
	read_lock(&uprobes_treelock);
	for (n = rb_find_first(&r, &uprobes_tree, uprobe_range_cmp); n;
	     n = rb_next_match(&r, n, uprobe_range_cmp)) {
		items[got] = (struct uprobe_walk_item) {
			.uprobe = uprobe_get(rb_entry(n, struct uprobe, rb_node)),
		};
		if (++got == room)
			break;
	}
	read_unlock(&uprobes_treelock);
	return got;
}

static int cmp_mm(const void *a, const void *b)
{
	const struct mm_struct *ma = *(struct mm_struct * const *)a;
	const struct mm_struct *mb = *(struct mm_struct * const *)b;

	return ma < mb ? -1 : ma > mb;
}

/* Up to @room of the mms that map the range, with references; how many. */
static unsigned int fill_mms(struct address_space *mapping, pgoff_t first,
			     pgoff_t last, struct mm_struct **mms,
			     unsigned int room)
{
	struct vm_area_struct *vma;
	unsigned int got = 0;

	i_mmap_lock_read(mapping);
	vma_interval_tree_foreach(vma, &mapping->i_mmap, first, last) {
		if (!vma_probeable(vma))
			continue;
		if (got < room) {
			if (!mmget_not_zero(vma->vm_mm))
				continue;
			mms[got] = vma->vm_mm;
		}
		got++;
	}
	i_mmap_unlock_read(mapping);
	return got;
}

/**
 * uprobe_collect_mms - the mms that may hold breakpoints in a file range
 * @inode: the file
 * @first: first page index
 * @last: last page index
 * @nr: set to the number of mms
 * @gfp: for the array
 *
 * Context: may sleep; takes i_mmap_rwsem.
 * Return: a kvmalloc()ed array of referenced mms, each once (NULL when
 * none), or ERR_PTR(-ENOMEM).
 */
struct mm_struct **uprobe_collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, unsigned int *nr, gfp_t gfp)
{
	struct mm_struct **mms = NULL;
	unsigned int room = 0, got, i, j;

	/* Not allocated under i_mmap_rwsem: grown, then filled again. */
	for (;;) {
		got = fill_mms(inode->i_mapping, first, last, mms, room);
		if (got <= room)
			break;
		for (i = 0; i < room; i++)
			mmput(mms[i]);
		kvfree(mms);
		room = got + 4;
		mms = kvmalloc_array(room, sizeof(*mms), gfp);
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

/**
 * uprobe_filter_chain - does any consumer want the breakpoint in @mm?
 * @uprobe: the probe
 * @ctx: why we ask
 * @mm: the mm
 *
 * Context: may sleep.
 * Return: true if some consumer has no filter or its filter says yes.
 */
bool uprobe_filter_chain(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
			 struct mm_struct *mm)
{
	struct uprobe_consumer *uc;
	bool want = false;
	int idx;

	idx = srcu_read_lock(&uprobes_srcu);
	for (uc = READ_ONCE(uprobe->consumers); uc; uc = READ_ONCE(uc->next)) {
		if (!uc->filter || uc->filter(uc, ctx, mm)) {
			want = true;
			break;
		}
	}
	srcu_read_unlock(&uprobes_srcu, idx);
	return want;
}

static void consumer_add(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	lockdep_assert_held_write(&uprobe->register_rwsem);
	uc->next = uprobe->consumers;
	/* Readers under uprobes_srcu see @uc complete. */
	smp_store_release(&uprobe->consumers, uc);
}

static bool consumer_del(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	struct uprobe_consumer **pp;

	lockdep_assert_held_write(&uprobe->register_rwsem);
	for (pp = &uprobe->consumers; *pp; pp = &(*pp)->next) {
		if (*pp == uc) {
			/* uc->next stays valid for readers already on uc. */
			WRITE_ONCE(*pp, uc->next);
			return true;
		}
	}
	return false;
}

static bool consumer_present(struct uprobe *uprobe, struct uprobe_consumer *uc)
{
	struct uprobe_consumer *c;

	lockdep_assert_held(&uprobe->register_rwsem);
	for (c = uprobe->consumers; c; c = c->next)
		if (c == uc)
			return true;
	return false;
}

/* The registry's probe at (@inode, @offset), made if need be; referenced. */
static struct uprobe *uprobe_get_or_create(struct inode *inode, loff_t offset,
					   loff_t ref_ctr_offset)
{
	struct uprobe *uprobe, *new;

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	refcount_set(&new->ref, 2);	/* the tree's and the caller's */
	new->inode = inode;
	new->offset = offset;
	new->ref_ctr_offset = ref_ctr_offset;
	init_rwsem(&new->register_rwsem);
	ihold(inode);
	write_lock(&uprobes_treelock);
	uprobe = uprobe_tree_insert(&uprobes_tree, new);
	if (uprobe)
		uprobe_get(uprobe);
	write_unlock(&uprobes_treelock);
	if (!uprobe)
		return new;
	iput(inode);	/* @new was never visible */
	kfree(new);
	if (uprobe->ref_ctr_offset != ref_ctr_offset) {
		pr_warn("inode %lu offset %#llx: ref_ctr_offset %#llx differs from %#llx already registered\n",
			inode->i_ino, (unsigned long long)offset,
			(unsigned long long)ref_ctr_offset,
			(unsigned long long)uprobe->ref_ctr_offset);
		uprobe_put(uprobe);
		return ERR_PTR(-EINVAL);
	}
	return uprobe;
}

/*
 * Wait for the handlers of consumers just unlinked.  Expedited: tools
 * disable events one at a time, each waiting here; an expedited SRCU
 * grace period sends no IPIs.
 */
static void uprobe_wait_handlers(void)
{
	synchronize_srcu_expedited(&uprobes_srcu);
}

/* Take a probe without consumers out of the registry. */
static void uprobe_retire(struct uprobe *uprobe)
{
	lockdep_assert_held_write(&uprobe->register_rwsem);
	/* A batch retires after dropping the rwsem: retire once. */
	if (uprobe->consumers || test_bit(UPROBE_F_DEAD, &uprobe->flags))
		return;
	write_lock(&uprobes_treelock);
	rb_erase(&uprobe->rb_node, &uprobes_tree);
	set_bit(UPROBE_F_DEAD, &uprobe->flags);
	write_unlock(&uprobes_treelock);
	/*
	 * Drop the inode now, while the consumer's owner still holds the
	 * file: a probe that table entries keep alive must not pin it past
	 * an unmount.  From here on, the pointer is only compared.
	 */
	iput(uprobe->inode);
	uprobe_put(uprobe);
}

/*
 * The live probe at @inode:@offset, made if need be, with its
 * register_rwsem held for write and a reference for the caller.
 */
static struct uprobe *uprobe_get_locked(struct inode *inode, loff_t offset,
					loff_t ref_ctr_offset)
{
	struct uprobe *uprobe;

	for (;;) {
		uprobe = uprobe_get_or_create(inode, offset, ref_ctr_offset);
		if (IS_ERR(uprobe))
			return uprobe;
		down_write(&uprobe->register_rwsem);
		if (!test_bit(UPROBE_F_DEAD, &uprobe->flags))
			return uprobe;
		/* Retired meanwhile: make a new one. */
		up_write(&uprobe->register_rwsem);
		uprobe_put(uprobe);
	}
}

static int uprobe_check_target(struct uprobe_consumer *uc, struct inode *inode,
			       loff_t offset, loff_t ref_ctr_offset)
{
	struct address_space *mapping = inode->i_mapping;

	if (!uc->handler && !uc->ret_handler)
		return -EINVAL;
	if (!S_ISREG(inode->i_mode))
		return -EBADF;
	/* The original bytes are read through the page cache. */
	if (!mapping->a_ops->read_folio && !shmem_mapping(mapping))
		return -EIO;
	if (offset < 0 || offset >= i_size_read(inode) ||
	    !IS_ALIGNED(offset, UPROBE_SWBP_INSN_SIZE) ||
	    ref_ctr_offset < 0 || !IS_ALIGNED(ref_ctr_offset, sizeof(short)))
		return -EINVAL;
	return 0;
}

/**
 * uprobe_register_refctr - add a consumer to the probe at @inode:@offset
 * @inode: the file (a regular file); the caller holds a reference on it
 *	until the consumer's unregistration has returned, and, after
 *	uprobe_unregister_nosync(), until uprobe_unregister_sync()
 * @offset: the instruction's offset in it
 * @ref_ctr_offset: file offset of a 16-bit SDT semaphore to count the
 *	probe's live breakpoints in, or 0
 * @uc: the consumer, with a handler or a ret_handler
 *
 * The breakpoint goes into every mm that maps the file executable, now
 * or later, where some consumer's filter wants it.
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: 0 once the breakpoint is in place; -EINVAL for a consumer
 * without handlers, an offset out of the file or misaligned, or a bad
 * @ref_ctr_offset (or one other than the probe's); -EBADF for a file
 * that is not regular; -EIO for one the page cache cannot read;
 * -ENOTSUPP (or -EINVAL) for an instruction the architecture refuses;
 * -ENOMEM.  On failure nothing is left behind.
 */
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc)
{
	struct uprobe *uprobe;
	int ret;

	ret = uprobe_check_target(uc, inode, offset, ref_ctr_offset);
	if (ret)
		return ret;
	/* A reader still on @uc from a _nosync() must not see its new ->next. */
	uprobe_unregister_sync();
	uprobe = uprobe_get_locked(inode, offset, ref_ctr_offset);
	if (IS_ERR(uprobe))
		return PTR_ERR(uprobe);

	consumer_add(uprobe, uc);
	ret = uprobe_install_all(uprobe, uc);
	if (ret) {
		consumer_del(uprobe, uc);
		uprobe_remove_all(uprobe);
		uprobe_retire(uprobe);
	}
	up_write(&uprobe->register_rwsem);
	uprobe_put(uprobe);

	/* Where it was installed, @uc's handler may be running. */
	if (ret)
		uprobe_wait_handlers();
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_register_refctr);

/**
 * uprobe_register - add a consumer to the probe at @inode:@offset
 * @inode: the file, held by the caller as for uprobe_register_refctr()
 * @offset: the instruction's offset in it
 * @uc: the consumer
 *
 * uprobe_register_refctr() without an SDT semaphore.
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: as uprobe_register_refctr().
 */
int uprobe_register(struct inode *inode, loff_t offset,
		    struct uprobe_consumer *uc)
{
	return uprobe_register_refctr(inode, offset, 0, uc);
}
EXPORT_SYMBOL_GPL(uprobe_register);

/**
 * uprobe_apply - re-evaluate a consumer's filter in every mm
 * @inode: the file
 * @offset: the probe's offset
 * @uc: a consumer already registered there
 * @add: install where @uc's filter wants the breakpoint, or remove it
 *	where no consumer's filter does
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: 0, -ENOENT when @uc is not registered there, or an install
 * error.
 */
int uprobe_apply(struct inode *inode, loff_t offset,
		 struct uprobe_consumer *uc, bool add)
{
	struct uprobe *uprobe;
	int ret = -ENOENT;

	uprobe = uprobe_find(inode, offset);
	if (!uprobe)
		return -ENOENT;

	down_write(&uprobe->register_rwsem);
	if (consumer_present(uprobe, uc)) {
		ret = 0;
		if (add)
			ret = uprobe_install_all(uprobe, uc);
		else
			uprobe_remove_all(uprobe);
	}
	up_write(&uprobe->register_rwsem);
	uprobe_put(uprobe);
	return ret;
}

/* ---- many registrations at once ---- */

static int cmp_walk_item(const void *a, const void *b)
{
	const struct uprobe *ua = ((const struct uprobe_walk_item *)a)->uprobe;
	const struct uprobe *ub = ((const struct uprobe_walk_item *)b)->uprobe;

	return uprobe_key_cmp(ua->inode, ua->offset, ub->inode, ub->offset);
}

/* Are @items in (inode, offset) order (@dir 1) or in reverse (@dir -1)? */
static bool walk_items_ordered(struct uprobe_walk_item *items,
			       unsigned int nr, int dir)
{
	unsigned int i;

	for (i = 1; i < nr; i++)
		if (cmp_walk_item(&items[i - 1], &items[i]) * dir > 0)
			return false;
	return true;
}

/*
 * Sort @items by (inode, offset) and walk each file's run once.  Tools
 * define probes in file order and disable them in reverse: no sort.
 */
static void walk_items(struct uprobe_walk_item *items, unsigned int nr)
{
	unsigned int start, end;

	if (nr > 1 && walk_items_ordered(items, nr, -1)) {
		for (start = 0, end = nr - 1; start < end; start++, end--)
			swap(items[start], items[end]);
	} else if (!walk_items_ordered(items, nr, 1)) {
		sort(items, nr, sizeof(*items), cmp_walk_item, NULL);
	}
	for (start = 0; start < nr; start = end) {
		struct inode *inode = items[start].uprobe->inode;

		for (end = start + 1; end < nr; end++)
			if (items[end].uprobe->inode != inode)
				break;
		uprobe_walk_batch(inode, items + start, end - start);
	}
}

/**
 * uprobe_register_batch - add many consumers, each to its own probe
 * @regs: the registrations; each one's ->err is set
 * @nr: how many
 *
 * Each succeeds or fails as uprobe_register_refctr() would, but the
 * breakpoints are written in one pass over the mms of each file.
 *
 * Context: process context, may sleep; no uprobes lock held.
 * Return: 0 when all succeeded, else the first error in @regs order;
 * -ENOMEM, with every ->err set, when there was no memory to start.
 */
int uprobe_register_batch(struct uprobe_reg *regs, unsigned int nr)
{
	struct uprobe_walk_item *items;
	unsigned int i, n = 0;
	bool undone = false;
	int ret = 0;

	if (!nr)
		return 0;
	items = kvmalloc_array(nr, sizeof(*items), GFP_KERNEL);
	if (!items) {
		for (i = 0; i < nr; i++)
			regs[i].err = -ENOMEM;
		return -ENOMEM;
	}
	uprobe_unregister_sync();	/* see uprobe_register_refctr() */

	for (i = 0; i < nr; i++) {
		struct uprobe_reg *r = &regs[i];
		struct uprobe *uprobe;

		r->err = uprobe_check_target(r->uc, r->inode, r->offset,
					     r->ref_ctr_offset);
		if (r->err)
			continue;
		uprobe = uprobe_get_locked(r->inode, r->offset,
					   r->ref_ctr_offset);
		r->err = PTR_ERR_OR_ZERO(uprobe);
		if (r->err)
			continue;
		consumer_add(uprobe, r->uc);
		up_write(&uprobe->register_rwsem);
		items[n++] = (struct uprobe_walk_item){
			.uprobe = uprobe, .uc = r->uc, .idx = i,
		};
	}

	walk_items(items, n);

	/* Undo the failed ones, as uprobe_register_refctr() does. */
	for (i = 0; i < n; i++) {
		struct uprobe *uprobe = items[i].uprobe;

		if (items[i].err) {
			regs[items[i].idx].err = items[i].err;
			down_write(&uprobe->register_rwsem);
			consumer_del(uprobe, items[i].uc);
			uprobe_remove_all(uprobe);
			uprobe_retire(uprobe);
			up_write(&uprobe->register_rwsem);
			undone = true;
		}
		uprobe_put(uprobe);
	}
	kvfree(items);
	if (undone)
		uprobe_wait_handlers();

	for (i = 0; i < nr && !ret; i++)
		ret = regs[i].err;
	return ret;
}

/*
 * The grace period covering every uprobe_unregister_nosync() so far: the
 * newest cookie, as cookies of one SRCU domain only grow (modulo wrap).
 */
static DEFINE_SPINLOCK(unreg_cookie_lock);
static unsigned long unreg_cookie;
static bool unreg_pending;

static void unreg_start_grace_period(void)
{
	unsigned long cookie;

	cookie = start_poll_synchronize_srcu(&uprobes_srcu);
	spin_lock(&unreg_cookie_lock);
	if (!unreg_pending || ULONG_CMP_LT(unreg_cookie, cookie))
		unreg_cookie = cookie;
	unreg_pending = true;
	spin_unlock(&unreg_cookie_lock);
}

/* Take @uc off its probe and the breakpoint out where nobody wants it. */
static void uprobe_unlink_consumer(struct inode *inode, loff_t offset,
				   struct uprobe_consumer *uc)
{
	struct uprobe *uprobe;
	bool found;

	uprobe = uprobe_find(inode, offset);
	if (WARN_ON_ONCE(!uprobe))
		return;

	down_write(&uprobe->register_rwsem);
	found = consumer_del(uprobe, uc);
	if (found) {
		uprobe_remove_all(uprobe);
		uprobe_retire(uprobe);
	}
	up_write(&uprobe->register_rwsem);
	uprobe_put(uprobe);
	WARN_ON_ONCE(!found);
}

/**
 * uprobe_unregister_nosync - remove a consumer, without waiting for its
 *	handlers
 * @inode: the file
 * @offset: the probe's offset
 * @uc: the consumer
 *
 * As uprobe_unregister(), but a handler of @uc may still run when this
 * returns: call uprobe_unregister_sync() (or free through
 * uprobe_call_after_unregister()) before freeing @uc or what its handlers
 * use.  Many unregistrations then share one grace period.
 *
 * Context: process context, may sleep; no uprobes lock held.
 */
void uprobe_unregister_nosync(struct inode *inode, loff_t offset,
			      struct uprobe_consumer *uc)
{
	uprobe_unlink_consumer(inode, offset, uc);
	unreg_start_grace_period();
}

/**
 * uprobe_unregister_batch_nosync - remove many consumers without waiting
 *	for their handlers
 * @regs: the registrations to undo (->ref_ctr_offset and ->err unused)
 * @nr: how many
 *
 * As uprobe_unregister_nosync() of each, with one pass over the mms of
 * each file.
 *
 * Context: process context, may sleep; no uprobes lock held.
 */
void uprobe_unregister_batch_nosync(struct uprobe_reg *regs, unsigned int nr)
{
	struct uprobe_walk_item *items;
	unsigned int i, n = 0;

	if (!nr)
		return;
	items = kvmalloc_array(nr, sizeof(*items), GFP_KERNEL);
	if (!items) {
		for (i = 0; i < nr; i++)
			uprobe_unregister_nosync(regs[i].inode, regs[i].offset,
						 regs[i].uc);
		return;
	}
	for (i = 0; i < nr; i++) {
		struct uprobe *uprobe;
		bool found;

		uprobe = uprobe_find(regs[i].inode, regs[i].offset);
		if (WARN_ON_ONCE(!uprobe))
			continue;
		down_write(&uprobe->register_rwsem);
		found = consumer_del(uprobe, regs[i].uc);
		up_write(&uprobe->register_rwsem);
		if (WARN_ON_ONCE(!found)) {
			uprobe_put(uprobe);
			continue;
		}
		items[n++] = (struct uprobe_walk_item){ .uprobe = uprobe };
	}

	walk_items(items, n);

	for (i = 0; i < n; i++) {
		struct uprobe *uprobe = items[i].uprobe;

		down_write(&uprobe->register_rwsem);
		uprobe_retire(uprobe);
		up_write(&uprobe->register_rwsem);
		uprobe_put(uprobe);
	}
	kvfree(items);
	unreg_start_grace_period();
}

/**
 * uprobe_unregister_sync - wait for the handlers of every consumer removed
 *	by uprobe_unregister_nosync()
 *
 * Context: process context, may sleep; returns at once when the grace
 * period is over already.
 */
void uprobe_unregister_sync(void)
{
	unsigned long cookie;
	bool pending;

	spin_lock(&unreg_cookie_lock);
	pending = unreg_pending;
	cookie = unreg_cookie;
	spin_unlock(&unreg_cookie_lock);

	if (pending && !poll_state_synchronize_srcu(&uprobes_srcu, cookie))
		uprobe_wait_handlers();
}

/**
 * uprobe_call_after_unregister - run @func once the handlers of every
 *	consumer unregistered so far are over
 * @head: an rcu_head in the object @func frees
 * @func: the callback, run in softirq context
 *
 * The asynchronous uprobe_unregister_sync().
 *
 * Context: any.
 */
void uprobe_call_after_unregister(struct rcu_head *head, rcu_callback_t func)
{
	call_srcu(&uprobes_srcu, head, func);
}

/**
 * uprobe_unregister - remove a consumer from the probe at @inode:@offset
 * @inode: the file
 * @offset: the probe's offset
 * @uc: the consumer
 *
 * The breakpoint leaves every mm where no remaining consumer wants it.
 * When this returns no handler of @uc runs: @uc may be freed.
 *
 * Context: process context, may sleep; no uprobes lock held.
 */
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc)
{
	uprobe_unlink_consumer(inode, offset, uc);
	uprobe_wait_handlers();
}
EXPORT_SYMBOL_GPL(uprobe_unregister);

/**
 * uprobes_init - set up the uprobes core
 *
 * Context: boot, once.
 */
void __init uprobes_init(void)
{
	uprobe_bpt_cache_init();
	uprobes_hit_init();
}
