/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the parts of the uprobes core (kernel/events/uprobes*.c) share.
 * Locking: see uprobes.c.
 */
#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H
#define _KERNEL_EVENTS_UPROBES_INTERNAL_H

#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/rhashtable.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/uprobes.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* uprobe->flags */
#define UPROBE_F_ANALYZED	0	/* arch analysis done, see analyze_err */
#define UPROBE_F_DEAD		1	/* out of the registry */

/* One probed (inode, offset). */
struct uprobe {
	struct rb_node		rb_node;	/* in the registry */
	/*
	 * Held by the registry, each bp table entry, each return instance
	 * (pending or cached) and each path that looked the probe up.
	 */
	refcount_t		ref;
	/* Referenced while in the registry; once dead, only compared. */
	struct inode		*inode;
	loff_t			offset;
	loff_t			ref_ctr_offset;	/* SDT semaphore, or 0 */
	/* Serialises changes of @consumers and the walk after each. */
	struct rw_semaphore	register_rwsem;
	/* Written under @register_rwsem, read under uprobes_srcu. */
	struct uprobe_consumer	*consumers;
	unsigned long		flags;		/* UPROBE_F_* */
	int			analyze_err;	/* the verdict, once ANALYZED */
	struct rcu_head		rcu;		/* freed after SRCU */
	struct arch_uprobe	arch;		/* the bytes, how to run them */
};

/* The breakpoints installed in one mm (uprobes_bptable.c). */
struct uprobe_bp_table {
	/* Address -> entry, read under RCU. */
	struct rhashtable	ht;
	spinlock_t		lock;		/* writers of all below */
	struct list_head	entries;	/* every entry in @ht */
	struct list_head	pool;		/* entries for the next writes */
	unsigned int		live;		/* entries in @ht */
	/* Own lock: munmap paths may not hold mmap_lock for write. */
	spinlock_t		pending_lock;
	struct list_head	refctr_pending;	/* SDT counts not made yet */
	/* In drop_identical_copy(): its uprobe_munmap() keeps the entries. */
	struct task_struct	*dropping;
	/* Freed after RCU: a truncation's uprobe_munmap() may read it. */
	struct rcu_work		free_work;
};

#define XOL_NR_PAGES		4
#define XOL_SLOTS_PER_PAGE	(PAGE_SIZE / UPROBE_XOL_SLOT_BYTES)
#define XOL_NR_SLOTS		(XOL_NR_PAGES * XOL_SLOTS_PER_PAGE)
/* Slots threads may own; the rest are lent for steps. */
#define XOL_OWNED_MAX		(XOL_NR_SLOTS - 32)

/* The "[uprobes]" mapping of one mm. */
struct xol_area {
	/* Slot 0: the trapping return trampoline; 1: the syscall one. */
	unsigned long		vaddr;
	spinlock_t		lock;		/* @slots, @owned, @pages */
	atomic_t		slot_waiters;	/* threads in @wq */
	wait_queue_head_t	wq;		/* waiting for a free slot */
	DECLARE_BITMAP(slots, XOL_NR_SLOTS);	/* in use, trampolines too */
	unsigned int		owned;		/* <= XOL_OWNED_MAX */
	struct page		*pages[XOL_NR_PAGES];	/* NULL until used */
	bool			syscall_tramp;	/* slot 1 has a trampoline */
	bool			unmapped;	/* the program unmapped it */
};

static inline struct xol_area *mm_xol_area(struct mm_struct *mm)
{
	/* Pairs with the release store in xol_make_area(). */
	return smp_load_acquire(&mm->uprobes_state.xol_area);
}

static inline unsigned long xol_slot_vaddr(struct xol_area *area,
					   unsigned int slot)
{
	return area->vaddr + (unsigned long)slot * UPROBE_XOL_SLOT_BYTES;
}

struct xol_area *xol_make_area(void);

/*
 * A program may unmap its area and map its own code there: then nothing
 * at those addresses is ours, and no step or return may be sent there.
 */
static inline bool xol_area_mapped(const struct xol_area *area)
{
	return !READ_ONCE(area->unmapped);
}

/* current->mm's XOL area, made if needed; NULL if none or unmapped. */
static inline struct xol_area *xol_get_area(void)
{
	struct xol_area *area = mm_xol_area(current->mm);

	if (unlikely(!area))
		area = xol_make_area();
	return area && xol_area_mapped(area) ? area : NULL;
}

#define XOL_SYSCALL_SLOT	1

static inline bool xol_is_trampoline(struct xol_area *area, unsigned long addr)
{
	unsigned long sys = xol_slot_vaddr(area, XOL_SYSCALL_SLOT);

	return (addr == area->vaddr ||
		(area->syscall_tramp && addr - sys < UPROBE_XOL_SLOT_BYTES)) &&
	       xol_area_mapped(area);
}

extern struct srcu_struct uprobes_srcu;

/* uprobes.c: the registry */

/* Registry order: by inode address, then offset; a file's probes adjoin. */
static __always_inline int uprobe_key_cmp(const struct inode *ia, loff_t oa,
					  const struct inode *ib, loff_t ob)
{
	if (ia != ib)
		return ia < ib ? -1 : 1;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	return 0;
}

static inline struct uprobe *uprobe_get(struct uprobe *uprobe)
{
	refcount_inc(&uprobe->ref);
	return uprobe;
}

/* A reference on a probe found under uprobes_srcu; false if it is dying. */
static inline bool uprobe_tryget(struct uprobe *uprobe)
{
	return refcount_inc_not_zero(&uprobe->ref);
}

void uprobe_put(struct uprobe *uprobe);

/* Probes of one file in [@start, @end): a key for rb_find_first(). */
struct uprobe_range {
	const struct inode	*inode;
	loff_t			start;
	loff_t			end;
};

/* 0 when the probe at @n is in the range, <0 when after it, >0 before. */
static inline int uprobe_range_cmp(const void *key, const struct rb_node *n)
{
	const struct uprobe_range *r = key;
	const struct uprobe *u = rb_entry(n, struct uprobe, rb_node);

	if (uprobe_key_cmp(r->inode, r->start, u->inode, u->offset) > 0)
		return 1;
	if (uprobe_key_cmp(r->inode, r->end, u->inode, u->offset) <= 0)
		return -1;
	return 0;
}

static inline int uprobe_node_cmp(struct rb_node *a, const struct rb_node *b)
{
	const struct uprobe *ua = rb_entry(a, struct uprobe, rb_node);
	const struct uprobe *ub = rb_entry(b, struct uprobe, rb_node);

	return uprobe_key_cmp(ua->inode, ua->offset, ub->inode, ub->offset);
}

/* The probe at (@inode, @offset) in @root, or NULL; no reference taken. */
static inline struct uprobe *uprobe_tree_search(struct rb_root *root,
						struct inode *inode,
						loff_t offset)
{
	struct uprobe_range r = { inode, offset, offset + 1 };

	return rb_entry_safe(rb_find(&r, root, uprobe_range_cmp),
			     struct uprobe, rb_node);
}

/* Insert @new unless its key is there: NULL, or the probe there. */
static inline struct uprobe *uprobe_tree_insert(struct rb_root *root,
						struct uprobe *new)
{
	return rb_entry_safe(rb_find_add(&new->rb_node, root, uprobe_node_cmp),
			     struct uprobe, rb_node);
}

struct uprobe *uprobe_find(struct inode *inode, loff_t offset);
bool uprobe_registry_empty(void);
struct uprobe_walk_item;
unsigned int uprobe_collect_range(struct inode *inode, loff_t start,
				  loff_t end, struct uprobe_walk_item *items,
				  unsigned int room);
struct mm_struct **uprobe_collect_mms(struct inode *inode, pgoff_t first,
				      pgoff_t last, unsigned int *nr, gfp_t gfp);
bool uprobe_filter_chain(struct uprobe *uprobe, enum uprobe_filter_ctx ctx,
			 struct mm_struct *mm);

static inline bool uprobe_has_consumers(struct uprobe *uprobe)
{
	return READ_ONCE(uprobe->consumers);
}

/* uprobes_bptable.c: the per-mm table of installed breakpoints */
struct uprobe_bp_table *uprobe_bpt_create(struct mm_struct *mm);
int uprobe_bpt_init(struct uprobe_bp_table *t);

struct uprobe_bp_entry {
	struct rhash_head	node;
	unsigned long		vaddr;
	struct uprobe		*uprobe;	/* referenced */
	union {
		struct list_head list;		/* on ->entries or ->pool */
		struct rcu_head	rcu;		/* once off both */
	};
};

/*
 * rhashtable takes a bucket from the hash's low bits.  hash_long()'s low
 * bits depend on the address's low bits only: breakpoints in mappings a
 * power of two apart would share one chain whatever the seed.  The
 * finalizer of MurmurHash3 brings every bit of the address and of the
 * seed down to them, in eight operations.
 */
static __always_inline u32 uprobe_bpt_hash(const void *data, u32 len, u32 seed)
{
	unsigned long h = *(const unsigned long *)data ^ seed;

#if BITS_PER_LONG == 64
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdUL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53UL;
	h ^= h >> 33;
#else
	h ^= h >> 16;
	h *= 0x85ebca6bUL;
	h ^= h >> 13;
	h *= 0xc2b2ae35UL;
	h ^= h >> 16;
#endif
	return h;
}

static inline int uprobe_bpt_cmp(struct rhashtable_compare_arg *arg,
				 const void *obj)
{
	const struct uprobe_bp_entry *e = obj;

	return e->vaddr != *(const unsigned long *)arg->key;
}

/* The key compared inline: memcmp() would cost a hit 17 instructions. */
static const struct rhashtable_params uprobe_bpt_params = {
	.key_len		= sizeof(unsigned long),
	.key_offset		= offsetof(struct uprobe_bp_entry, vaddr),
	.head_offset		= offsetof(struct uprobe_bp_entry, node),
	.hashfn			= uprobe_bpt_hash,
	.obj_cmpfn		= uprobe_bpt_cmp,
	.nelem_hint		= 4,		/* most mms have a few */
	.automatic_shrinking	= true,
};

/* The probe at @vaddr in @t, or NULL; no reference taken. */
static __always_inline struct uprobe *
uprobe_bpt_lookup(struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct uprobe_bp_entry *e;
	struct uprobe *uprobe = NULL;

	rcu_read_lock();
	e = rhashtable_lookup(&t->ht, &vaddr, uprobe_bpt_params);
	if (e)
		uprobe = READ_ONCE(e->uprobe);
	rcu_read_unlock();
	return uprobe;
}

static __always_inline struct uprobe_bp_table *uprobe_mm_bpt(struct mm_struct *mm)
{
	/* Pairs with the cmpxchg_release() in uprobe_bpt_create(). */
	return smp_load_acquire(&mm->uprobes_state.bp_table);
}

/*
 * The hit's lookup: the probe at @vaddr in @mm, or NULL; valid until
 * uprobes_srcu is left.  GCC keeps rhashtable_lookup() out of line, so
 * the current bucket table's chain is walked here, inline in the trap;
 * only while a resize is under way does a miss ask rhashtable_lookup(),
 * which also looks in the table being filled.  rcu_read_lock() covers the
 * entries and bucket tables, which are freed after an RCU grace period.
 */
static __always_inline struct uprobe *uprobe_bp_lookup(struct mm_struct *mm,
						       unsigned long vaddr)
{
	struct uprobe_bp_table *t = uprobe_mm_bpt(mm);
	struct uprobe *uprobe = NULL;
	struct uprobe_bp_entry *e;
	struct bucket_table *tbl;
	struct rhash_head *pos;
	unsigned int idx;

	lockdep_assert(srcu_read_lock_held(&uprobes_srcu));
	if (!t)
		return NULL;
	rcu_read_lock();
	tbl = rht_dereference_rcu(t->ht.tbl, &t->ht);
	idx = uprobe_bpt_params.hashfn(&vaddr, uprobe_bpt_params.key_len,
				       tbl->hash_rnd);
	idx = rht_bucket_index(tbl, idx);
	rht_for_each_entry_rcu(e, pos, tbl, idx, node) {
		if (e->vaddr == vaddr) {
			uprobe = READ_ONCE(e->uprobe);
			goto out;
		}
	}
	/*
	 * Only a resize moves an entry to another chain, and it sets
	 * future_tbl first: no need for rhashtable_lookup()'s check of the
	 * chain's end marker.  Its barrier before future_tbl, though.
	 */
	smp_rmb();
	if (unlikely(rcu_access_pointer(tbl->future_tbl)))
		uprobe = uprobe_bpt_lookup(t, vaddr);
out:
	rcu_read_unlock();
	return uprobe;
}

int uprobe_bpt_prepare(struct uprobe_bp_table *t, unsigned int more);
int uprobe_bpt_add(struct uprobe_bp_table *t, unsigned long vaddr,
		   struct uprobe *uprobe);
int uprobe_bpt_set(struct uprobe_bp_table *t, unsigned long vaddr,
		   struct uprobe *uprobe);

/* A writer section for the _locked() calls. */
static inline void uprobe_bpt_lock(struct uprobe_bp_table *t)
	__acquires(&t->lock)
{
	spin_lock(&t->lock);
}

static inline void uprobe_bpt_unlock(struct uprobe_bp_table *t)
	__releases(&t->lock)
{
	spin_unlock(&t->lock);
}

int uprobe_bpt_claim_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			    struct uprobe *uprobe) __must_hold(&t->lock);
bool uprobe_bpt_retry(struct uprobe_bp_table *t, int *err, unsigned int more,
		      unsigned int *tries) __must_hold(&t->lock);
bool uprobe_bpt_release_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			       struct uprobe *uprobe);
void uprobe_bpt_erase(struct uprobe_bp_table *t, unsigned long vaddr);
void uprobe_bpt_erase_range(struct uprobe_bp_table *t, unsigned long start,
			    unsigned long end);
void uprobe_bpt_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		    bool (*keep)(unsigned long vaddr, void *arg), void *arg);
void __init uprobe_bpt_cache_init(void);
void uprobe_bpt_trim_pool(struct uprobe_bp_table *t);
void uprobe_bpt_free(struct uprobe_bp_table *t);

static inline unsigned long offset_to_vaddr(struct vm_area_struct *vma,
					    loff_t offset)
{
	return vma->vm_start + offset - ((loff_t)vma->vm_pgoff << PAGE_SHIFT);
}

static inline loff_t vaddr_to_offset(struct vm_area_struct *vma,
				     unsigned long vaddr)
{
	return ((loff_t)vma->vm_pgoff << PAGE_SHIFT) + (vaddr - vma->vm_start);
}

/* Does @vma overlap the range mremap() is moving entries into? */
static inline bool uprobe_moving_into(struct vm_area_struct *vma)
{
	struct uprobes_state *st = &vma->vm_mm->uprobes_state;

	return vma->vm_start < st->move_end && vma->vm_end > st->move_start;
}

/* A dead probe's inode pointer may be reused: it matches no file. */
static inline bool probe_inode_is(struct uprobe *uprobe, struct inode *inode)
{
	return !test_bit(UPROBE_F_DEAD, &uprobe->flags) && uprobe->inode == inode;
}

/* Private and executable: a shared mapping would write the page cache. */
static inline bool vma_probeable(struct vm_area_struct *vma)
{
	vm_flags_t mask = VM_HUGETLB | VM_MAYEXEC | VM_MAYSHARE;

	return vma->vm_file && (vma->vm_flags & mask) == VM_MAYEXEC;
}

/*
 * Not writable either: there the byte may be the program's own data,
 * which a breakpoint would hide and its removal destroy.
 */
static inline bool vma_installable(struct vm_area_struct *vma)
{
	return vma_probeable(vma) && !(vma->vm_flags & VM_WRITE);
}

/* uprobes_install.c: breakpoints in mms */
int uprobe_install_all(struct uprobe *uprobe, struct uprobe_consumer *uc);
void uprobe_remove_all(struct uprobe *uprobe);

/* One probe of a batched walk. */
struct uprobe_walk_item {
	struct uprobe		*uprobe;	/* referenced by the caller */
	/* Install for it; NULL: remove, or install for any (mmap). */
	struct uprobe_consumer	*uc;
	int			err;		/* first install error */
	unsigned int		idx;		/* the caller's index */
	/* The walk's own, for the mm being visited: */
	unsigned long		vaddr;		/* where the probe is */
	const void		*orig;		/* the bytes to restore */
	bool			pick;		/* to be written here */
	bool			written;	/* it was: the byte changed */
	bool			foreign;	/* the program's own byte */
	bool			failed;		/* could not be written */
	bool			fresh;		/* its entry is new here */
	bool			want;		/* it goes into this mm */
};

void uprobe_walk_batch(struct inode *inode, struct uprobe_walk_item *items,
		       unsigned int nr);

/* Does @it's probe go into @mm?  With ->uc NULL, any consumer decides. */
static inline bool uprobe_item_wanted(const struct uprobe_walk_item *it,
				      struct mm_struct *mm)
{
	struct uprobe_consumer *uc = it->uc;

	if (!uc)
		return uprobe_has_consumers(it->uprobe) &&
		       uprobe_filter_chain(it->uprobe, UPROBE_FILTER_MMAP, mm);
	return !uc->filter || uc->filter(uc, UPROBE_FILTER_REGISTER, mm);
}

unsigned int uprobe_first_item_from(struct uprobe_walk_item *items,
				    unsigned int nr, loff_t offset);

/* uprobes_analyze.c: the probed instruction, read and judged */
int uprobe_analyze(struct uprobe *uprobe, struct vm_area_struct *vma,
		   unsigned long vaddr);
unsigned int uprobe_analyze_items(struct vm_area_struct *vma,
				  struct uprobe_walk_item *items,
				  unsigned int nr);
void uprobe_analyze_ahead(struct inode *inode, struct uprobe_walk_item *items,
			  unsigned int nr);

/* The analysis verdict, analysing first if needed. */
static __always_inline int uprobe_prepare(struct uprobe *uprobe,
					  struct vm_area_struct *vma,
					  unsigned long vaddr)
{
	if (test_bit(UPROBE_F_ANALYZED, &uprobe->flags)) {
		smp_rmb();	/* pairs with smp_wmb() in uprobe_analyze() */
		return uprobe->analyze_err;
	}
	return uprobe_analyze(uprobe, vma, vaddr);
}

/*
 * Only an accepted probe writes breakpoints: at any other's address a
 * 0xcc is the program's own.
 */
static inline bool uprobe_may_have_bps(struct uprobe *uprobe)
{
	if (!test_bit(UPROBE_F_ANALYZED, &uprobe->flags))
		return false;
	smp_rmb();	/* pairs with smp_wmb() in uprobe_analyze() */
	return !uprobe->analyze_err;
}

struct uprobe *uprobe_bp_lookup_slow(struct mm_struct *mm, unsigned long vaddr,
				     bool *trap);
bool uprobe_unapply_current(struct uprobe *uprobe, unsigned long vaddr);
void uprobe_remove_current(struct uprobe *uprobe, unsigned long vaddr);

/* uprobes_refctr.c: SDT semaphores of the breakpoints written */
void uprobe_refctr_on_install(struct uprobe *uprobe, struct mm_struct *mm,
			      struct uprobe_bp_table *t, unsigned long vaddr);
void uprobe_refctr_on_refind(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr);
void uprobe_refctr_on_remove(struct uprobe *uprobe, struct mm_struct *mm,
			     struct uprobe_bp_table *t, unsigned long vaddr);
void uprobe_refctr_on_mmap(struct vm_area_struct *vma);
void uprobe_refctr_on_munmap(struct uprobe_bp_table *t, unsigned long start,
			     unsigned long end);
void uprobe_refctr_on_dup(struct uprobe_bp_table *new,
			  struct uprobe_bp_table *old,
			  bool (*keep)(unsigned long vaddr, void *arg),
			  void *arg);
void uprobe_refctr_free_all(struct uprobe_bp_table *t);

/* uprobes_xol.c: the "[uprobes]" area */
unsigned int xol_take_slot(struct xol_area *area);
void xol_put_slot(struct xol_area *area, unsigned int slot);
void xol_fill_slot(struct xol_area *area, unsigned int slot,
		   struct arch_uprobe *aup);
unsigned int xol_take_own_slot(struct xol_area *area);
void xol_put_own_slot(struct xol_area *area, unsigned int slot);
void xol_write_slot(struct xol_area *area, unsigned int slot,
		    const void *code, unsigned int len);
void xol_dup_area(struct mm_struct *oldmm, struct mm_struct *newmm);
void xol_free_area(struct mm_struct *mm);
int xol_bitmap_take(unsigned long *slots, unsigned int nr);

/* uprobes_hit.c: a thread at a breakpoint */
void uprobes_hit_init(void);
void uprobe_run_late_work(struct uprobe_task *utask, struct pt_regs *regs,
			  struct arch_uprobe *auprobe);

/* uprobes_direct.c: copies run from an owned slot, without a step */
bool uprobe_direct_run(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr,
		       bool may_sleep);
bool uprobe_direct_signal(struct uprobe_task *utask);
void uprobe_direct_release(struct uprobe_task *utask, struct mm_struct *mm);

static inline bool uprobe_direct_in_slot(struct uprobe_task *utask,
					 unsigned long ip)
{
	return utask->own_slot &&
	       ip - utask->own_xol_vaddr < UPROBE_XOL_SLOT_BYTES &&
	       xol_area_mapped(mm_xol_area(current->mm));
}

/* uprobes_debug.c: race windows widened for tests */
enum uprobe_delay_point {
	UPROBE_DELAY_MUNMAP,	/* uprobe_munmap(), the table just read */
	UPROBE_DELAY_DROP,	/* drop_identical_copy(), compared, not zapped */
	UPROBE_DELAY_NR
};

void __uprobe_debug_delay(enum uprobe_delay_point point);

static inline void uprobe_debug_delay(enum uprobe_delay_point point)
{
	if (IS_ENABLED(CONFIG_UPROBES_RACE_DELAYS))
		__uprobe_debug_delay(point);
}

/* uprobes_ret.c: return probes */
bool uprobe_push_return(struct uprobe *uprobe, struct pt_regs *regs,
			struct uprobe_task *utask, bool may_fault);
bool uprobe_trampoline_trap(struct pt_regs *regs, unsigned long bp_vaddr);
void uprobe_free_returns(struct uprobe_task *utask);
int uprobe_dup_returns(struct uprobe_task *from, struct uprobe_task *to);
/* Return instances a thread keeps for reuse. */
#define RI_CACHE_MAX	4
struct return_instance *uprobe_ri_get(struct uprobe_task *utask,
				      struct uprobe *uprobe);
void uprobe_ri_recycle(struct uprobe_task *utask, struct return_instance *ri);
struct return_instance *uprobe_ri_pop_dead(struct uprobe_task *utask,
					   bool (*alive)(struct return_instance *ri,
							 void *arg),
					   void *arg);
struct return_instance *uprobe_ri_returning_chain(struct return_instance *dead);
void uprobe_ri_free_list(struct return_instance *ri, bool put);

#endif /* _KERNEL_EVENTS_UPROBES_INTERNAL_H */
