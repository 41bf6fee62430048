/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the parts of the uprobes core share.  See uprobes.c for the locking
 * rules; each part is one file:
 *
 *   uprobes.c          the registry: probes by (inode, offset), consumers,
 *                      register/unregister/apply
 *   uprobes_install.c  breakpoints: copy-on-write of one page of one mm,
 *                      walking the mms that map a file, mmap/munmap/fork,
 *                      SDT counters
 *   uprobes_bptable.c  the per-mm table of installed addresses
 *   uprobes_xol.c      the per-mm "[uprobes]" mapping: trampoline, slots
 *   uprobes_hit.c      a thread hits a breakpoint: handlers, emulation or
 *                      a step out of line, signals, per-thread state
 *   uprobes_direct.c   out of line without a step: a copy and a jump back
 *                      in a slot the thread owns
 *   uprobes_ret.c      return probes: hijacked returns and the trampoline
 *   uprobes_jump.c     sites entered by a jump to a stub, not a trap
 *   uprobes_debug.c    delays that widen race windows, for tests
 */
#ifndef _KERNEL_EVENTS_UPROBES_INTERNAL_H
#define _KERNEL_EVENTS_UPROBES_INTERNAL_H

#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
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
#define UPROBE_F_DEAD		1	/* out of the registry: look it up again */

/**
 * struct uprobe - one probed (inode, offset)
 * @rb_node: in the registry, ordered by (@inode, @offset).
 * @ref: the registry holds one reference while the probe is in it, each
 *	per-mm table entry one, each pending return instance one, each
 *	return instance a thread keeps for reuse one (uprobes_ret.c), and
 *	any code path that looked the probe up one.
 * @inode: the probed file; a reference is held while the probe is in the
 *	registry (uprobe_retire() drops it), and a dead probe's is only
 *	compared, never dereferenced.
 * @offset: the probed file offset.
 * @ref_ctr_offset: file offset of the SDT semaphore, 0 when none.
 * @register_rwsem: serialises changes of @consumers and the install or
 *	remove walk that follows such a change.
 * @consumers: singly linked list; written under @register_rwsem (write),
 *	read under uprobes_srcu.
 * @flags: UPROBE_F_*.
 * @analyze_err: result of arch_uprobe_analyze_insn() once ANALYZED.
 * @rcu: frees the probe after an SRCU grace period.
 * @arch: the architecture's view: the original bytes and how to run them.
 */
struct uprobe {
	struct rb_node		rb_node;
	refcount_t		ref;
	struct inode		*inode;
	loff_t			offset;
	loff_t			ref_ctr_offset;
	struct rw_semaphore	register_rwsem;
	struct uprobe_consumer	*consumers;
	unsigned long		flags;
	int			analyze_err;
	struct rcu_head		rcu;
	struct arch_uprobe	arch;
};

struct bp_array;

/**
 * struct uprobe_bp_table - the breakpoints installed in one mm
 * @arr: breakpoint address -> struct uprobe *, an open-addressed hash read
 *	by the hit path under RCU without a lock (uprobes_bptable.c).  Each
 *	entry holds a reference on its probe.
 * @lock: serialises the writers of @arr and @live.
 * @live: entries in @arr.
 * @pending_lock: protects @refctr_pending (munmap paths change it with
 *	mmap_lock held only for read, or not at all for a truncation).
 * @refctr_pending: breakpoints written here whose SDT semaphore was not
 *	mapped yet (struct refctr_pending), counted when it gets mapped,
 *	forgotten when the breakpoint's range is unmapped first.
 * @dropping: the task that is unmapping a private copy of a page that no
 *	breakpoint is left on (drop_identical_copy(), under mmap_lock for
 *	write), or NULL: uprobe_munmap() has nothing to forget for it.
 * @rcu: frees the table of an exited mm after an RCU grace period: a
 *	truncation may still reach its VMAs through i_mmap (exit_mmap()
 *	unlinks them after uprobe_clear_state()), and its uprobe_munmap()
 *	reads the table under rcu_read_lock().
 */
struct uprobe_bp_table {
	struct bp_array __rcu	*arr;
	spinlock_t		lock;		/* see above */
	unsigned int		live;
	spinlock_t		pending_lock;	/* see above */
	struct list_head	refctr_pending;
	struct task_struct	*dropping;
	struct rcu_head		rcu;
};

/* The XOL area: a few pages of slots, populated as slots are handed out. */
#define XOL_NR_PAGES		4
#define XOL_SLOTS_PER_PAGE	(PAGE_SIZE / UPROBE_XOL_SLOT_BYTES)
#define XOL_NR_SLOTS		(XOL_NR_PAGES * XOL_SLOTS_PER_PAGE)
/* Slots threads may own (uprobes_direct.c); the rest are lent for steps. */
#define XOL_OWNED_MAX		(XOL_NR_SLOTS - 32)

/**
 * struct xol_area - the "[uprobes]" mapping of one mm
 * @vaddr: its user address; slot 0 at @vaddr is the return trampoline
 *	that traps, slot 1 the one that makes a syscall (if the architecture
 *	has one, see @syscall_tramp).
 * @lock: protects @slots and @pages.
 * @slot_waiters: threads waiting for a free slot; a thread that ends its
 *	step wakes them only when this is non-zero.
 * @wq: where they wait.
 * @slots: bitmap of the slots handed out (the trampolines' always).
 * @owned: how many of them threads own for direct runs; at most
 *	XOL_OWNED_MAX, so that steps always find slots.
 * @syscall_tramp: slot 1 holds arch_uretprobe_syscall_trampoline().
 * @pages: the pages behind the mapping, NULL until a slot on them is used.
 */
struct xol_area {
	unsigned long		vaddr;
	spinlock_t		lock;	/* see above */
	atomic_t		slot_waiters;
	wait_queue_head_t	wq;
	DECLARE_BITMAP(slots, XOL_NR_SLOTS);
	unsigned int		owned;
	struct page		*pages[XOL_NR_PAGES];
	bool			syscall_tramp;
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

/* current->mm's XOL area, made if needed: see xol_make_area(). */
static inline struct xol_area *xol_get_area(void)
{
	struct xol_area *area = mm_xol_area(current->mm);

	return likely(area) ? area : xol_make_area();
}

/* The slot of the syscall trampoline, right after the breakpoint's. */
#define XOL_SYSCALL_SLOT	1

/* Is @addr in one of @area's return trampolines? */
static inline bool xol_is_trampoline(struct xol_area *area, unsigned long addr)
{
	unsigned long sys = xol_slot_vaddr(area, XOL_SYSCALL_SLOT);

	return addr == area->vaddr ||
	       (area->syscall_tramp && addr - sys < UPROBE_XOL_SLOT_BYTES);
}

extern struct srcu_struct uprobes_srcu;

/* uprobes.c: the registry */
/**
 * uprobe_key_cmp - order of two probe keys in the registry
 * @ia: inode of the first key
 * @oa: offset of the first key
 * @ib: inode of the second key
 * @ob: offset of the second key
 *
 * Return: <0, 0 or >0 as (@ia, @oa) sorts before, equal to or after
 * (@ib, @ob): by inode address first, so a file's probes are adjacent.
 */
static __always_inline int uprobe_key_cmp(const struct inode *ia, loff_t oa,
					  const struct inode *ib, loff_t ob)
{
	if (ia != ib)
		return ia < ib ? -1 : 1;
	if (oa != ob)
		return oa < ob ? -1 : 1;
	return 0;
}

struct uprobe *get_uprobe(struct uprobe *uprobe);
void put_uprobe(struct uprobe *uprobe);
struct uprobe *uprobe_tree_search(struct rb_root *root, struct inode *inode,
				  loff_t offset);
struct uprobe *uprobe_tree_insert(struct rb_root *root, struct uprobe *new);
struct uprobe *uprobe_tree_insert_near(struct rb_root *root,
				       struct uprobe *new, struct uprobe *hint);
struct rb_node *uprobe_tree_first(struct rb_root *root, struct inode *inode,
				  loff_t start);
bool uprobe_in_range(struct rb_node *n, struct inode *inode, loff_t end);
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
struct uprobe_bp_table *bp_table_create(struct mm_struct *mm);
void bp_table_init(struct uprobe_bp_table *t);

/* Slot addresses no breakpoint can have: above any user address. */
#define BP_EMPTY	(~0UL)
#define BP_DEAD		(~0UL - 1)

struct bp_slot {
	unsigned long	vaddr;
	struct uprobe	*uprobe;
};

/* @mask and @shift: what every lookup would derive from @bits. */
struct bp_array {
	struct rcu_head	rcu;
	unsigned int	bits;
	unsigned int	mask;
	unsigned int	shift;
	unsigned int	filled;		/* live and dead slots */
	struct bp_slot	slots[];
};

/* hash_long(@vaddr, a->bits), with the shift kept in the array */
static __always_inline unsigned int bp_hash(const struct bp_array *a,
					    unsigned long vaddr)
{
#if BITS_PER_LONG == 64
	return (vaddr * GOLDEN_RATIO_64) >> a->shift;
#else
	return (vaddr * GOLDEN_RATIO_32) >> a->shift;
#endif
}

/**
 * bp_table_lookup - the probe whose breakpoint is at @vaddr
 * @t: the table
 * @vaddr: the address
 *
 * Inline: every hit starts with it.
 *
 * Context: under uprobes_srcu, which keeps the result valid; no lock.
 * Return: the probe (no reference taken) or NULL.
 */
static __always_inline struct uprobe *
bp_table_lookup(struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct uprobe *uprobe = NULL;
	struct bp_array *a;
	unsigned int mask, i, n;
	unsigned long k;

	rcu_read_lock();
	a = rcu_dereference(t->arr);
	if (!a)
		goto out;
	mask = a->mask;
	i = bp_hash(a, vaddr);
	/* Bounded: a writer may refill the slots we already passed. */
	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		struct bp_slot *s = &a->slots[i];

		k = READ_ONCE(s->vaddr);
		if (k == BP_EMPTY)
			break;
		if (k != vaddr)
			continue;
		smp_rmb();	/* the probe written before the address */
		uprobe = READ_ONCE(s->uprobe);
		smp_rmb();	/* and the address still ours after it */
		if (READ_ONCE(s->vaddr) != vaddr)
			uprobe = NULL;
		break;
	}
out:
	rcu_read_unlock();
	return uprobe;
}

/**
 * bp_table - the breakpoint table of @mm, if it has one
 * @mm: the mm
 *
 * Return: the table or NULL.
 */
static __always_inline struct uprobe_bp_table *bp_table(struct mm_struct *mm)
{
	/* Pairs with the cmpxchg in bp_table_create(). */
	return smp_load_acquire(&mm->uprobes_state.bp_table);
}

/**
 * uprobe_bp_lookup - the probe whose breakpoint is at @vaddr in @mm
 * @mm: the mm
 * @vaddr: the address
 *
 * Inline: every hit starts with it.
 *
 * Context: under uprobes_srcu, which keeps the result valid; no lock.
 * Return: the probe (no reference taken) or NULL.
 */
static __always_inline struct uprobe *uprobe_bp_lookup(struct mm_struct *mm,
						       unsigned long vaddr)
{
	struct uprobe_bp_table *t = bp_table(mm);

	return t ? bp_table_lookup(t, vaddr) : NULL;
}

int bp_table_prepare(struct uprobe_bp_table *t, unsigned int more);
int bp_table_add(struct uprobe_bp_table *t, unsigned long vaddr,
		 struct uprobe *uprobe);
int bp_table_set(struct uprobe_bp_table *t, unsigned long vaddr,
		 struct uprobe *uprobe);
void bp_table_lock(struct uprobe_bp_table *t) __acquires(&t->lock);
void bp_table_unlock(struct uprobe_bp_table *t) __releases(&t->lock);
int bp_table_claim_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			  struct uprobe *uprobe);
bool bp_table_release_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			     struct uprobe *uprobe);
void bp_table_erase(struct uprobe_bp_table *t, unsigned long vaddr);
void bp_table_erase_range(struct uprobe_bp_table *t, unsigned long start,
			  unsigned long end);
int bp_table_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		 bool (*keep)(unsigned long vaddr, void *arg), void *arg);
void bp_table_free(struct uprobe_bp_table *t);

/* Where a file offset is mapped in @vma, and back. */
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

/*
 * A dead probe maps nothing: its inode may be gone, and another file's
 * inode may have its address (uprobe_retire() drops it).  A live one
 * holds its inode, so the comparison is sound.
 */
static inline bool probe_inode_is(struct uprobe *uprobe, struct inode *inode)
{
	return !test_bit(UPROBE_F_DEAD, &uprobe->flags) && uprobe->inode == inode;
}

/*
 * Breakpoints can be only in private mappings that may execute: a shared
 * mapping would have us write into the page cache.
 */
static inline bool vma_probeable(struct vm_area_struct *vma)
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
static inline bool vma_installable(struct vm_area_struct *vma)
{
	return vma_probeable(vma) && !(vma->vm_flags & VM_WRITE);
}

/* uprobes_install.c: breakpoints in mms */
int uprobe_install_all(struct uprobe *uprobe, struct uprobe_consumer *uc);
void uprobe_remove_all(struct uprobe *uprobe);

/**
 * struct uprobe_walk_item - one probe of a batched walk
 * @uprobe: the probe, referenced by the caller
 * @uc: the consumer to install for, or NULL to remove (in a batch) or
 *	to install for any consumer that wants it (for a new mapping)
 * @err: the first install error for this probe, 0 if none
 * @idx: the caller's index for it
 * @vaddr: the walk's: where the probe is in the VMA being visited
 * @orig: the walk's: the probed instruction's bytes, to restore
 * @pick: the walk's: this page's opcode is to be written in this mm
 * @written: the walk's: it was (the byte changed)
 * @foreign: the walk's: the byte is the program's own, left alone
 * @failed: the walk's: it could not be written
 * @fresh: the walk's: its table entry is new in this mm
 * @want: the walk's: it goes into this mm (filters asked once)
 */
struct uprobe_walk_item {
	struct uprobe		*uprobe;
	struct uprobe_consumer	*uc;
	int			err;
	unsigned int		idx;
	unsigned long		vaddr;
	const void		*orig;
	bool			pick;
	bool			written;
	bool			foreign;
	bool			failed;
	bool			fresh;
	bool			want;
};

void uprobe_walk_batch(struct inode *inode, struct uprobe_walk_item *items,
		       unsigned int nr);

/*
 * Does @it's probe go into @mm?  Installed for a consumer, its filter
 * says; for a new mapping (->uc NULL), any consumer's.  Inline: a batch
 * asks it for every probe in every mm.
 */
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
static inline bool uprobe_may_have_bps(struct uprobe *uprobe)
{
	if (!test_bit(UPROBE_F_ANALYZED, &uprobe->flags))
		return false;
	smp_rmb();	/* analyze_err, set before the bit */
	return !uprobe->analyze_err;
}

struct uprobe *uprobe_bp_lookup_slow(struct mm_struct *mm, unsigned long vaddr);
struct page_vma_mapped_walk;
bool uprobe_page_unmap(struct vm_area_struct *vma, struct page *page,
		       unsigned long vaddr, struct page_vma_mapped_walk *pvmw,
		       pte_t *pte);
void uprobe_page_remap(struct page_vma_mapped_walk *pvmw, pte_t pte);
bool uprobe_unapply_current(struct uprobe *uprobe, unsigned long vaddr);
void uprobe_remove_current(struct uprobe *uprobe, unsigned long vaddr);

/* uprobes_refctr.c: SDT semaphores of the breakpoints written */
void refctr_on_install(struct uprobe *uprobe, struct mm_struct *mm,
		       struct uprobe_bp_table *t, unsigned long vaddr);
void refctr_on_refind(struct uprobe *uprobe, struct mm_struct *mm,
		      struct uprobe_bp_table *t, unsigned long vaddr);
void refctr_on_remove(struct uprobe *uprobe, struct mm_struct *mm,
		      struct uprobe_bp_table *t, unsigned long vaddr);
void refctr_on_mmap(struct vm_area_struct *vma);
void refctr_on_munmap(struct uprobe_bp_table *t, unsigned long start,
		      unsigned long end);
void refctr_on_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		   bool (*keep)(unsigned long vaddr, void *arg), void *arg);
void refctr_free_all(struct uprobe_bp_table *t);

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
/* pure slot bookkeeping, for KUnit */
int xol_bitmap_take(unsigned long *slots, unsigned int nr);

/* uprobes_hit.c: a thread at a breakpoint */
void uprobes_hit_init(void);

/* uprobes_direct.c: copies run from an owned slot, without a step */
bool uprobe_direct_run(struct uprobe *uprobe, struct pt_regs *regs,
		       struct uprobe_task *utask, unsigned long bp_vaddr);
bool uprobe_direct_signal(struct uprobe_task *utask);
void uprobe_direct_release(struct uprobe_task *utask, struct mm_struct *mm);

static inline bool uprobe_direct_in_slot(struct uprobe_task *utask,
					 unsigned long ip)
{
	return utask->own_slot &&
	       ip - utask->own_xol_vaddr < UPROBE_XOL_SLOT_BYTES;
}

/* uprobes_jump.c: sites entered by a jump to a stub instead of a trap */
#ifndef UPROBE_JUMP_STUB_BYTES
/* The architecture has none (arch_uprobe_jump_stubs() says so). */
#define UPROBE_JUMP_STUB_BYTES	64
#define UPROBE_JUMP_INSN_BYTES	8
#define UPROBE_JUMP_SYSCALL_AT	UINT_MAX
#define UPROBE_JUMP_TRAP_AT	UINT_MAX
#endif

extern bool uprobe_jump_on;
void uprobe_jump_init(void);
bool uprobe_jump_at(struct mm_struct *mm, unsigned long vaddr, const u8 *code);
bool uprobe_jump_undo(struct vm_area_struct *vma, struct page *page,
		      unsigned long vaddr, u8 *code, const u8 *orig, bool sync);
bool uprobe_jump_hidden(struct mm_struct *mm, unsigned long vaddr,
			const u8 *code, const u8 *orig);
void uprobe_jump_install(struct uprobe *uprobe, unsigned long vaddr,
			 unsigned int len);
void uprobe_jump_dup(struct mm_struct *oldmm, struct mm_struct *newmm);
void uprobe_jump_free(struct mm_struct *mm);
bool uprobe_jump_trap(struct pt_regs *regs, unsigned long bp_vaddr);
/* uprobes_hit.c */
void uprobe_jump_defer(struct pt_regs *regs, unsigned long vaddr,
		       unsigned int len);

/* uprobes_debug.c: race windows widened for tests */
enum uprobe_delay_point {
	UPROBE_DELAY_MUNMAP,	/* uprobe_munmap(), the table just read */
	UPROBE_DELAY_DROP,	/* drop_identical_copy(), compared, not zapped */
	UPROBE_DELAY_NR
};

void __uprobe_debug_delay(enum uprobe_delay_point point);

/* Compiled out, call and all, without CONFIG_UPROBES_RACE_DELAYS. */
static inline void uprobe_debug_delay(enum uprobe_delay_point point)
{
	if (IS_ENABLED(CONFIG_UPROBES_RACE_DELAYS))
		__uprobe_debug_delay(point);
}

/* uprobes_ret.c: return probes */
void uprobe_push_return(struct uprobe *uprobe, struct pt_regs *regs,
			struct uprobe_task *utask);
bool uprobe_trampoline_trap(struct pt_regs *regs, unsigned long bp_vaddr);
void uprobe_free_returns(struct uprobe_task *utask);
int uprobe_dup_returns(struct uprobe_task *from, struct uprobe_task *to);
extern atomic_long_t uprobes_dropped_returns;
/* Return instances a thread keeps for reuse, with their probe references. */
#define RI_CACHE_MAX	4
struct return_instance *ri_get(struct uprobe_task *utask,
			       struct uprobe *uprobe);
void ri_recycle(struct uprobe_task *utask, struct return_instance *ri);
/* pure list bookkeeping, for KUnit */
struct return_instance *ri_pop_dead(struct uprobe_task *utask,
				    bool (*alive)(struct return_instance *ri,
						  void *arg),
				    void *arg);
struct return_instance *ri_returning_chain(struct return_instance *dead);
void ri_free_list(struct return_instance *ri, bool put);

#endif /* _KERNEL_EVENTS_UPROBES_INTERNAL_H */
