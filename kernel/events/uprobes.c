// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the registry of probes and their consumers.
 *
 * A probe (struct uprobe) is a file offset of an inode.  Probes live in one
 * rbtree ordered by (inode address, offset), so that all the probes of a
 * file sit next to each other and uprobe_mmap() finds those in a mapped
 * range with one descent.  A probe stays in the tree while it has
 * consumers; its memory goes away with its last reference, after an SRCU
 * grace period.
 *
 * Locks, outermost first.  Nothing here is taken in the other order.
 *
 *  uprobe->register_rwsem (rwsem)
 *	One probe's consumer list changes, and the walk over the mms that
 *	installs or removes its breakpoints after the change, under it held
 *	for write.  Batches (uprobe_register_batch()) change the lists under
 *	it but walk for many probes after dropping it: each decision reads
 *	the list under the mm's mmap_lock, which is enough (see
 *	uprobe_walk_batch()).  The hit path takes it for read only to
 *	honour UPROBE_HANDLER_REMOVE, which is rare.
 *  dup_mmap_sem (rwsem, uprobes_install.c)
 *	fork holds it for read from before it copies an mm until the copy is
 *	linked; an install or remove walk holds it for write, so that every
 *	mm is either seen by the walk or copied from one the walk finished.
 *  mapping->i_mmap_rwsem (read)
 *	Only while collecting the mms to visit; dropped
 *	before any mmap_lock is taken.
 *  mm->mmap_lock
 *	Held for write to write or restore a breakpoint in the mm and to add
 *	an entry to its table (uprobe_mmap() and fork already hold it);
 *	munmap paths may erase entries of a range they own with it held for
 *	read, and the hit path's slow lookup re-adds a missing entry for
 *	read, insert-if-absent only.
 *  uprobes_analyze_mutex (mutex)
 *	The one-time arch analysis of a probe's instruction; never held
 *	across I/O (the bytes are read first, and walks analyse before they
 *	take dup_mmap_sem: see analyze_ahead()).
 *  uprobes_treelock (rwlock), bp_table->lock, bp_table->pending_lock,
 *  xol_area->lock (spinlocks)
 *	Innermost; nothing is taken inside them, nothing sleeps under them.
 *
 * Lockless paths:
 *  - A hit looks its address up in the mm's bp table under RCU
 *    (uprobes_bptable.c) and uses the probe and its consumer list under
 *    uprobes_srcu, which also covers the handler calls.  It writes only
 *    per-CPU (srcu) and per-thread data unless the instruction must be
 *    stepped out of line (an XOL slot is taken and given back under the
 *    area's lock), or a return probe takes a reference on the probe.
 *  - Consumer lists are published with release stores and read with
 *    READ_ONCE() under uprobes_srcu; uprobe_unregister() waits for an
 *    expedited SRCU grace period (with no lock held) before it returns, so
 *    no handler of the removed consumer runs after that;
 *    uprobe_unregister_nosync() leaves that wait to its caller.
 *
 * Memory (x86_64, without lock debugging): a probe is a struct uprobe of
 * about 190 bytes (kmalloc-192 or -256, depending on the arch's struct
 * arch_uprobe); a consumer costs nothing here (the caller's structure
 * carries the link).  See uprobes_install.c, uprobes_xol.c and
 * uprobes_ret.c for the per-mm and per-thread costs.
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

struct uprobe *get_uprobe(struct uprobe *uprobe)
{
	refcount_inc(&uprobe->ref);
	return uprobe;
}

static void uprobe_free_srcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct uprobe, rcu));
}

/**
 * put_uprobe - drop a reference on a probe
 * @uprobe: the probe
 *
 * Context: any; the probe is freed after an SRCU grace period, so readers
 * that found it under uprobes_srcu may keep using it until they leave.
 */
void put_uprobe(struct uprobe *uprobe)
{
	if (refcount_dec_and_test(&uprobe->ref))
		call_srcu(&uprobes_srcu, &uprobe->rcu, uprobe_free_srcu);
}

/**
 * uprobe_tree_search - the probe at (@inode, @offset) in @root
 * @root: a tree of probes ordered by uprobe_key_cmp()
 * @inode: the file
 * @offset: the offset
 *
 * Context: the tree's lock held (for the registry: uprobes_treelock).
 * Return: the probe or NULL; no reference taken.
 */
struct uprobe *uprobe_tree_search(struct rb_root *root, struct inode *inode,
				  loff_t offset)
{
	struct rb_node *n = root->rb_node;

	while (n) {
		struct uprobe *u = rb_entry(n, struct uprobe, rb_node);
		int c = uprobe_key_cmp(inode, offset, u->inode, u->offset);

		if (!c)
			return u;
		n = c < 0 ? n->rb_left : n->rb_right;
	}
	return NULL;
}

/**
 * uprobe_tree_insert - put a probe into @root unless its key is there
 * @root: a tree of probes
 * @new: the probe
 *
 * Context: the tree's lock held for write.
 * Return: NULL when @new was inserted, else the probe already there.
 */
struct uprobe *uprobe_tree_insert(struct rb_root *root, struct uprobe *new)
{
	struct rb_node **link = &root->rb_node, *parent = NULL;

	while (*link) {
		struct uprobe *u = rb_entry(*link, struct uprobe, rb_node);
		int c = uprobe_key_cmp(new->inode, new->offset,
				       u->inode, u->offset);

		if (!c)
			return u;
		parent = *link;
		link = c < 0 ? &(*link)->rb_left : &(*link)->rb_right;
	}
	rb_link_node(&new->rb_node, parent, link);
	rb_insert_color(&new->rb_node, root);
	return NULL;
}

static int uprobe_node_cmp(const struct uprobe *a, const struct rb_node *n)
{
	const struct uprobe *b = rb_entry(n, struct uprobe, rb_node);

	return uprobe_key_cmp(a->inode, a->offset, b->inode, b->offset);
}

/**
 * uprobe_tree_insert_near - uprobe_tree_insert() next to a known probe
 * @root: a tree of probes
 * @new: the probe
 * @hint: a probe in @root (not erased) whose key is likely adjacent to
 *	@new's, or NULL
 *
 * A batch of registrations comes in offset order, so each new probe's
 * place is next to the previous one's: found from there in a step or two
 * (amortised) rather than by a descent from the root, which for a file
 * with thousands of probes was most of the cost of adding one.  Falls
 * back to the descent when @new does not go right before or after @hint.
 *
 * Context: the tree's lock held for write.
 * Return: NULL when @new was inserted, else the probe already there.
 */
struct uprobe *uprobe_tree_insert_near(struct rb_root *root,
				       struct uprobe *new, struct uprobe *hint)
{
	struct rb_node *h, *nb, *parent, **link;
	int c;

	if (!hint)
		return uprobe_tree_insert(root, new);
	h = &hint->rb_node;
	c = uprobe_node_cmp(new, h);
	if (!c)
		return hint;
	nb = c > 0 ? rb_next(h) : rb_prev(h);
	if (nb) {
		int cn = uprobe_node_cmp(new, nb);

		if (!cn)
			return rb_entry(nb, struct uprobe, rb_node);
		/* Past the neighbour too: not between it and @hint. */
		if (cn * c > 0)
			return uprobe_tree_insert(root, new);
	}
	/*
	 * @new goes between @h and @nb: as @h's child on that side if it has
	 * none, else as @nb's child on the other side, which @nb, the
	 * nearest node of @h's subtree on that side, cannot have.
	 */
	if (c > 0) {
		parent = h->rb_right ? nb : h;
		link = h->rb_right ? &nb->rb_left : &h->rb_right;
	} else {
		parent = h->rb_left ? nb : h;
		link = h->rb_left ? &nb->rb_right : &h->rb_left;
	}
	rb_link_node(&new->rb_node, parent, link);
	rb_insert_color(&new->rb_node, root);
	return NULL;
}

/**
 * uprobe_tree_first - the first probe of @inode at or after @start
 * @root: a tree of probes
 * @inode: the file
 * @start: the offset
 *
 * Context: the tree's lock held.
 * Return: its node (which may belong to another inode: check), or NULL.
 */
struct rb_node *uprobe_tree_first(struct rb_root *root, struct inode *inode,
				  loff_t start)
{
	struct rb_node *n = root->rb_node, *first = NULL;

	while (n) {
		struct uprobe *u = rb_entry(n, struct uprobe, rb_node);

		if (uprobe_key_cmp(inode, start, u->inode, u->offset) <= 0) {
			first = n;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return first;
}

/**
 * uprobe_find - look a probe up in the registry
 * @inode: the file
 * @offset: the offset in it
 *
 * Return: the probe with a reference the caller must put, or NULL.
 */
struct uprobe *uprobe_find(struct inode *inode, loff_t offset)
{
	struct uprobe *uprobe;

	read_lock(&uprobes_treelock);
	uprobe = uprobe_tree_search(&uprobes_tree, inode, offset);
	if (uprobe)
		get_uprobe(uprobe);
	read_unlock(&uprobes_treelock);
	return uprobe;
}

/*
 * A racy peek, good enough to skip the lookup on an mmap: a probe added
 * meanwhile finds the new mapping in its own walk.
 */
bool uprobe_registry_empty(void)
{
	return RB_EMPTY_ROOT(&uprobes_tree);
}

bool uprobe_in_range(struct rb_node *n, struct inode *inode, loff_t end)
{
	struct uprobe *u = rb_entry(n, struct uprobe, rb_node);

	return u->inode == inode && u->offset < end;
}

/**
 * uprobe_collect_range - the next probes of a file range
 * @inode: the file
 * @start: first offset
 * @end: offset past the range
 * @items: where to put them
 * @room: how many @items can take
 *
 * Context: any; takes uprobes_treelock for read.
 * Return: the number put in @items, by offset, each item zeroed but for
 * its probe, which has a reference; fewer than @room only when the range
 * holds no more.
 */
unsigned int uprobe_collect_range(struct inode *inode, loff_t start,
				  loff_t end, struct uprobe_walk_item *items,
				  unsigned int room)
{
	unsigned int got = 0;
	struct rb_node *n;

	if (!room)
		return 0;
	read_lock(&uprobes_treelock);
	for (n = uprobe_tree_first(&uprobes_tree, inode, start);
	     n && uprobe_in_range(n, inode, end); n = rb_next(n)) {
		items[got] = (struct uprobe_walk_item) {
			.uprobe = get_uprobe(rb_entry(n, struct uprobe, rb_node)),
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

/*
 * The mms that map any page of @inode in [@first, @last] executable, each
 * once, with a reference.  Collected under i_mmap_rwsem, which is dropped
 * before the mms are locked.  Return: a kvmalloc'ed array (NULL when
 * there are none) or ERR_PTR(-ENOMEM).
 */
struct mm_struct **uprobe_collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, unsigned int *nr, gfp_t gfp)
{
	struct mm_struct **mms = NULL;
	unsigned int room = 0, got, i, j;

	/*
	 * The array cannot be allocated under i_mmap_rwsem: when it turns
	 * out too small, it is grown and the walk done again.
	 */
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
 * Context: may sleep; no lock needed (the list is read under SRCU).
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
	/* Readers walking the list under SRCU see uc complete. */
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

	for (c = uprobe->consumers; c; c = c->next)
		if (c == uc)
			return true;
	return false;
}

static struct uprobe *uprobe_alloc(struct inode *inode, loff_t offset,
				   loff_t ref_ctr_offset)
{
	struct uprobe *uprobe;

	uprobe = kzalloc(sizeof(*uprobe), GFP_KERNEL);
	if (!uprobe)
		return ERR_PTR(-ENOMEM);
	refcount_set(&uprobe->ref, 1);
	uprobe->inode = inode;
	uprobe->offset = offset;
	uprobe->ref_ctr_offset = ref_ctr_offset;
	init_rwsem(&uprobe->register_rwsem);
	return uprobe;
}

/*
 * The registry's probe for (inode, offset), made if there is none, with a
 * reference for the caller (the tree holds its own).  Made first and
 * dropped if the key is there already: one descent of the tree (none from
 * @hint, the caller's previous probe, in a batch) instead of a lookup
 * and then an insert.
 */
static struct uprobe *uprobe_get_or_create(struct inode *inode, loff_t offset,
					   loff_t ref_ctr_offset,
					   struct uprobe *hint)
{
	struct uprobe *uprobe, *new;

	new = uprobe_alloc(inode, offset, ref_ctr_offset);
	if (IS_ERR(new))
		return new;

	/* The tree's reference and the caller's, if it goes in. */
	refcount_set(&new->ref, 2);
	ihold(inode);
	write_lock(&uprobes_treelock);
	/* A retired hint is out of the tree. */
	if (hint && test_bit(UPROBE_F_DEAD, &hint->flags))
		hint = NULL;
	uprobe = uprobe_tree_insert_near(&uprobes_tree, new, hint);
	if (uprobe)
		get_uprobe(uprobe);
	write_unlock(&uprobes_treelock);
	if (!uprobe)
		return new;
	/* The key was there: ours was never visible. */
	iput(inode);
	kfree(new);
	if (uprobe->ref_ctr_offset != ref_ctr_offset) {
		pr_warn("inode %lu offset %#llx: ref_ctr_offset %#llx differs from %#llx already registered\n",
			inode->i_ino, (unsigned long long)offset,
			(unsigned long long)ref_ctr_offset,
			(unsigned long long)uprobe->ref_ctr_offset);
		put_uprobe(uprobe);
		return ERR_PTR(-EINVAL);
	}
	return uprobe;
}

/*
 * Wait until no handler of a consumer just unlinked can still be running.
 *
 * Expedited, because tools disable events one after another (a group's
 * "enable" file, perf closing its events one by one) and each disable
 * waits here: a normal SRCU grace period sleeps for jiffies between its
 * scans, which made disabling 1,000 events take many seconds.  An
 * expedited SRCU grace period sends no IPIs and disturbs no other CPU; it
 * only scans the per-CPU reader counts without sleeping in between, so
 * its cost stays with the caller.
 */
static void uprobe_wait_handlers(void)
{
	synchronize_srcu_expedited(&uprobes_srcu);
}

/* Take a probe without consumers out of the registry. */
static void uprobe_retire(struct uprobe *uprobe)
{
	lockdep_assert_held_write(&uprobe->register_rwsem);
	/* A batched unregister retires after dropping the rwsem: once only. */
	if (uprobe->consumers || test_bit(UPROBE_F_DEAD, &uprobe->flags))
		return;
	write_lock(&uprobes_treelock);
	rb_erase(&uprobe->rb_node, &uprobes_tree);
	set_bit(UPROBE_F_DEAD, &uprobe->flags);
	write_unlock(&uprobes_treelock);
	/*
	 * The inode goes with the registry's reference, now, while the
	 * consumer's owner still holds the file: a probe kept alive by an
	 * mm's table or a reader until later must not hold it past an
	 * unmount, which would find the inode busy and leave our iput() to
	 * a dead superblock.  From now on the pointer may be another
	 * inode's: a dead probe matches no file (uprobes_install.c).
	 */
	iput(uprobe->inode);
	put_uprobe(uprobe);
}

/*
 * The live probe at @inode:@offset, made if need be, with its
 * register_rwsem held for write and a reference for the caller.
 */
static struct uprobe *uprobe_get_locked(struct inode *inode, loff_t offset,
					loff_t ref_ctr_offset,
					struct uprobe *hint)
{
	struct uprobe *uprobe;

	for (;;) {
		uprobe = uprobe_get_or_create(inode, offset, ref_ctr_offset,
					      hint);
		if (IS_ERR(uprobe))
			return uprobe;
		down_write(&uprobe->register_rwsem);
		if (!test_bit(UPROBE_F_DEAD, &uprobe->flags))
			return uprobe;
		/* Its last consumer left while we looked: take a new one. */
		up_write(&uprobe->register_rwsem);
		put_uprobe(uprobe);
	}
}

static int uprobe_check_target(struct inode *inode, loff_t offset,
			       loff_t ref_ctr_offset)
{
	struct address_space *mapping = inode->i_mapping;

	if (!S_ISREG(inode->i_mode))
		return -EBADF;
	/* We read the original bytes through the page cache. */
	if (!mapping->a_ops->read_folio && !shmem_mapping(mapping))
		return -EIO;
	/* -EINVAL, as it always was: tools report this errno to users. */
	if (offset < 0 || offset >= i_size_read(inode))
		return -EINVAL;
	if (!IS_ALIGNED(offset, UPROBE_SWBP_INSN_SIZE))
		return -EINVAL;
	if (ref_ctr_offset < 0 || !IS_ALIGNED(ref_ctr_offset, sizeof(short)))
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
 * The breakpoint is written into every mm mapping the file executable
 * where some consumer's filter wants it, and into each mm that maps it
 * later.
 *
 * Context: process context, may sleep; takes mmap_lock of those mms.
 * Return: 0 once the breakpoint is in all of them; -EINVAL for a bad
 * consumer, an offset outside the file or misaligned, a bad
 * @ref_ctr_offset (or one differing from the probe's existing one),
 * -EBADF for a file that is not regular, -EIO for one whose bytes cannot
 * be read through the page cache, -ENOTSUPP (or -EINVAL) from the
 * architecture for an instruction that cannot be probed, -ENOMEM.  On
 * failure nothing is left behind.
 */
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc)
{
	struct uprobe *uprobe;
	int ret;

	if (!uc->handler && !uc->ret_handler)
		return -EINVAL;
	ret = uprobe_check_target(inode, offset, ref_ctr_offset);
	if (ret)
		return ret;
	/*
	 * A reader still on @uc from an unregister without waiting would
	 * follow its new ->next into the list again: let such readers go.
	 */
	uprobe_unregister_sync();
	uprobe = uprobe_get_locked(inode, offset, ref_ctr_offset, NULL);
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
	put_uprobe(uprobe);

	/* Where it was installed, uc's handler may have run: wait it out. */
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
 * Context: process context, may sleep.
 * Return: see uprobe_register_refctr().
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
 * @add: true: install where @uc's filter now wants the breakpoint;
 *	false: remove where no consumer's filter wants it any more
 *
 * Context: process context, may sleep.
 * Return: 0, -ENOENT when @uc is not registered at @inode:@offset, or an
 * install error.
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
	put_uprobe(uprobe);
	return ret;
}

/* ---- many registrations at once ---- */

static int cmp_walk_item(const void *a, const void *b)
{
	const struct uprobe *ua = ((const struct uprobe_walk_item *)a)->uprobe;
	const struct uprobe *ub = ((const struct uprobe_walk_item *)b)->uprobe;

	return uprobe_key_cmp(ua->inode, ua->offset, ub->inode, ub->offset);
}

/* @items in (inode, offset) order, or in the reverse order (@dir -1). */
static bool walk_items_ordered(struct uprobe_walk_item *items,
			       unsigned int nr, int dir)
{
	unsigned int i;

	for (i = 1; i < nr; i++)
		if (cmp_walk_item(&items[i - 1], &items[i]) * dir > 0)
			return false;
	return true;
}

/* Sort @items by (inode, offset) and walk each file's run of them once. */
static void walk_items(struct uprobe_walk_item *items, unsigned int nr)
{
	unsigned int start, end;

	/*
	 * Probes defined in file order, as tools list symbols, need no sort;
	 * trace events are disabled in the reverse of that order.
	 */
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
 * Each registration succeeds or fails on its own, exactly as
 * uprobe_register_refctr() of it would, but the breakpoints are written
 * in one pass over the mms that map each file rather than one pass per
 * probe.  Tools enable whole groups of events on one binary at once.
 *
 * Context: process context, may sleep.
 * Return: 0 when all succeeded, else the error of the first that failed
 * (in @regs order); -ENOMEM, with every ->err set, when there was no
 * memory to start.
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

		r->err = -EINVAL;
		if (!r->uc->handler && !r->uc->ret_handler)
			continue;
		r->err = uprobe_check_target(r->inode, r->offset,
					     r->ref_ctr_offset);
		if (r->err)
			continue;
		uprobe = uprobe_get_locked(r->inode, r->offset,
					   r->ref_ctr_offset,
					   n ? items[n - 1].uprobe : NULL);
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

	/* Undo the failed ones as uprobe_register_refctr() would. */
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
		put_uprobe(uprobe);
	}
	kvfree(items);
	if (undone)
		uprobe_wait_handlers();

	for (i = 0; i < nr && !ret; i++)
		ret = regs[i].err;
	return ret;
}
EXPORT_SYMBOL_GPL(uprobe_register_batch);

/*
 * The grace period that covers every uprobe_unregister_nosync() so far,
 * started by the latest of them.  Cookies of one SRCU domain only grow
 * (modulo wrap), so keeping the newest one is enough.
 */
static DEFINE_SPINLOCK(unreg_cookie_lock);
static unsigned long unreg_cookie;
static bool unreg_pending;

/* Note a grace period for the handlers of consumers just unlinked. */
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
	put_uprobe(uprobe);
	WARN_ON_ONCE(!found);
}

/**
 * uprobe_unregister_nosync - remove a consumer, without waiting for its
 *	handlers
 * @inode: the file
 * @offset: the probe's offset
 * @uc: the consumer
 *
 * As uprobe_unregister(), except that a handler of @uc that was already
 * running may still be running, or about to start, when this returns; an
 * SRCU grace period is started in the background.  The caller must call
 * uprobe_unregister_sync() before it frees @uc or anything its handlers
 * use.  (Registering @uc again waits by itself.)  This lets a caller that
 * disables many probes pay for one grace period, not one each.
 *
 * Context: process context, may sleep; no uprobes lock may be held.
 */
void uprobe_unregister_nosync(struct inode *inode, loff_t offset,
			      struct uprobe_consumer *uc)
{
	uprobe_unlink_consumer(inode, offset, uc);
	unreg_start_grace_period();
}
EXPORT_SYMBOL_GPL(uprobe_unregister_nosync);

/**
 * uprobe_unregister_batch_nosync - remove many consumers without waiting
 *	for their handlers
 * @regs: the registrations to undo (->ref_ctr_offset and ->err unused)
 * @nr: how many
 *
 * As uprobe_unregister_nosync() of each, with one pass over the mms that
 * map each file to take the breakpoints out.  The caller must call
 * uprobe_unregister_sync() before it frees a consumer.
 *
 * Context: process context, may sleep; no uprobes lock may be held.
 */
void uprobe_unregister_batch_nosync(struct uprobe_reg *regs, unsigned int nr)
{
	struct uprobe_walk_item *items;
	unsigned int i, n = 0;

	if (!nr)
		return;
	items = kvmalloc_array(nr, sizeof(*items), GFP_KERNEL);
	if (!items) {
		/* Slower, but it cannot fail. */
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
			put_uprobe(uprobe);
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
		put_uprobe(uprobe);
	}
	kvfree(items);
	unreg_start_grace_period();
}
EXPORT_SYMBOL_GPL(uprobe_unregister_batch_nosync);

/**
 * uprobe_unregister_sync - wait for the handlers of every consumer removed
 *	by uprobe_unregister_nosync()
 *
 * Returns at once when the grace period started by the latest of them is
 * over already.
 *
 * Context: process context, may sleep.
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
EXPORT_SYMBOL_GPL(uprobe_unregister_sync);

/**
 * uprobe_call_after_unregister - run @func once the handlers of every
 *	consumer unregistered so far are over
 * @head: an rcu_head in the object @func frees
 * @func: the callback; it runs in softirq context
 *
 * The asynchronous uprobe_unregister_sync(): a caller that frees a
 * consumer after uprobe_unregister_nosync() need not wait for it, so
 * that closing many perf events in a row pays no grace period each.
 *
 * Context: any.
 */
void uprobe_call_after_unregister(struct rcu_head *head, rcu_callback_t func)
{
	call_srcu(&uprobes_srcu, head, func);
}
EXPORT_SYMBOL_GPL(uprobe_call_after_unregister);

/**
 * uprobe_unregister - remove a consumer from the probe at @inode:@offset
 * @inode: the file
 * @offset: the probe's offset
 * @uc: the consumer
 *
 * The breakpoint leaves every mm where no remaining consumer wants it (all
 * of them when @uc was the last).
 *
 * Context: process context, may sleep; no uprobes lock may be held.
 * When this returns no handler of @uc runs any more, so @uc may be freed.
 */
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc)
{
	uprobe_unlink_consumer(inode, offset, uc);
	uprobe_wait_handlers();
}
EXPORT_SYMBOL_GPL(uprobe_unregister);

void __init uprobes_init(void)
{
	uprobes_hit_init();
	uprobe_jump_init();
}
