// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the per-mm table of installed breakpoints.
 *
 * Every hit looks its address up here without a lock.  The table is an
 * open-addressed hash of (address, probe) slots in one array.  Writers
 * serialise on t->lock and never allocate under it; readers hold only
 * rcu_read_lock().  A grown array replaces the old one, which is freed
 * after a grace period.  A miss is harmless: the hit path falls back to
 * the VMA (uprobe_bp_lookup_slow()).
 *
 * Slot protocol.  A writer fills a free slot (bp_slot_fill()):
 *  W1. stores the probe;
 *  W2. smp_wmb();
 *  W3. stores the address.
 * It erases a slot (bp_slot_kill()):
 *  K1. stores BP_DEAD;
 *  K2. smp_wmb(), so that K1 is seen before the W1 of a reuse.
 * A reader (uprobe_bpt_lookup(), uprobes_internal.h):
 *  R1. loads the address; on a match:
 *  R2. smp_rmb(), pairing with W2;
 *  R3. loads the probe;
 *  R4. smp_rmb(), pairing with K2;
 *  R5. loads the address again: if it changed, the slot was reused and
 *      the probe may be another address's, so it is a miss.
 * A probe replaced in place (same address) is seen old or new; SRCU keeps
 * the old one alive.
 *
 * Erased slots stay as tombstones that lookups probe past, until a
 * rebuild (live and dead slots past 3/4 of the array).  Range operations
 * (munmap, fork, exit) scan the whole array.
 */

#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "uprobes_internal.h"

#define BP_MIN_SLOTS	16

static unsigned int bp_nr_slots(const struct uprobe_bp_array *a)
{
	return a->mask + 1;
}

static bool bp_slot_live(const struct uprobe_bp_slot *s)
{
	return s->vaddr < BP_DEAD;	/* neither BP_DEAD nor BP_EMPTY */
}

static struct uprobe_bp_array *bp_array(struct uprobe_bp_table *t)
{
	return rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
}

static struct uprobe_bp_array *bp_array_alloc(unsigned int bits)
{
	struct uprobe_bp_array *a;
	unsigned int i;

	a = kvmalloc(struct_size(a, slots, 1UL << bits), GFP_KERNEL);
	if (!a)
		return NULL;
	a->bits = bits;
	a->mask = (1U << bits) - 1;
	a->filled = 0;
	for (i = 0; i < (1U << bits); i++)
		a->slots[i].vaddr = BP_EMPTY;
	return a;
}

static bool bp_array_has_room(const struct uprobe_bp_array *a, unsigned int more)
{
	return a && (a->filled + more) * 4UL <= bp_nr_slots(a) * 3UL;
}

/*
 * The slot holding @vaddr, or where to put it: the first tombstone on the
 * way, else the empty slot that ended the search.
 */
static struct uprobe_bp_slot *bp_array_find(struct uprobe_bp_array *a,
					    unsigned long vaddr, bool *found)
{
	unsigned int i = bp_hash(a, vaddr);
	struct uprobe_bp_slot *dead = NULL, *s;

	for (;; i = (i + 1) & a->mask) {
		s = &a->slots[i];
		if (s->vaddr == vaddr) {
			*found = true;
			return s;
		}
		if (s->vaddr == BP_DEAD && !dead)
			dead = s;
		if (s->vaddr == BP_EMPTY)
			break;
	}
	*found = false;
	return dead ?: s;
}

static void bp_slot_fill(struct uprobe_bp_array *a, struct uprobe_bp_slot *s,
			 unsigned long vaddr, struct uprobe *uprobe)
{
	if (s->vaddr == BP_EMPTY)
		a->filled++;
	WRITE_ONCE(s->uprobe, uprobe);		/* W1 */
	smp_wmb();				/* W2 */
	WRITE_ONCE(s->vaddr, vaddr);		/* W3 */
}

static void bp_slot_kill(struct uprobe_bp_slot *s)
{
	WRITE_ONCE(s->vaddr, BP_DEAD);		/* K1 */
	smp_wmb();				/* K2 */
}

/* Drop a live slot's entry. */
static void bp_slot_erase(struct uprobe_bp_table *t, struct uprobe_bp_slot *s)
{
	uprobe_put(s->uprobe);
	bp_slot_kill(s);
	t->live--;
}

/* Empty every slot of @a, which has no live one. */
static void bp_array_clear(struct uprobe_bp_array *a)
{
	unsigned int i;

	for (i = 0; i < bp_nr_slots(a); i++)
		if (a->slots[i].vaddr != BP_EMPTY)
			WRITE_ONCE(a->slots[i].vaddr, BP_EMPTY);
	a->filled = 0;
}

/* Copy @old's live slots into the empty @new, which nobody reads yet. */
static void bp_array_rehash(struct uprobe_bp_array *new, struct uprobe_bp_array *old)
{
	unsigned int i;
	bool found;

	for (i = 0; old && i < bp_nr_slots(old); i++) {
		struct uprobe_bp_slot *s = &old->slots[i];

		if (bp_slot_live(s))
			bp_slot_fill(new, bp_array_find(new, s->vaddr, &found),
				     s->vaddr, s->uprobe);
	}
}

/**
 * uprobe_bpt_create - the breakpoint table of @mm, created if needed
 * @mm: the mm
 *
 * Context: @mm's mmap_lock held, or @mm not yet visible (fork).
 * Return: the table, or NULL without memory.
 */
struct uprobe_bp_table *uprobe_bpt_create(struct mm_struct *mm)
{
	struct uprobe_bp_table *t = uprobe_mm_bpt(mm), *old;

	if (t)
		return t;
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	uprobe_bpt_init(t);
	/* Under mmap_lock for read, two threads may race here. */
	old = cmpxchg_release(&mm->uprobes_state.bp_table, NULL, t);
	if (old) {
		kfree(t);
		return old;
	}
	return t;
}

/**
 * uprobe_bpt_init - set up an empty table
 * @t: the table
 */
void uprobe_bpt_init(struct uprobe_bp_table *t)
{
	RCU_INIT_POINTER(t->arr, NULL);
	t->live = 0;
	t->dropping = NULL;
	spin_lock_init(&t->lock);
	spin_lock_init(&t->pending_lock);
	INIT_LIST_HEAD(&t->refctr_pending);
}

/*
 * Return with t->lock held and room for @more entries in t->arr (or
 * -ENOMEM).  Allocates with the lock dropped.  For one entry the new
 * array is half full; for many, just big enough.
 */
static int uprobe_bpt_reserve(struct uprobe_bp_table *t, unsigned int more)
	__acquires(&t->lock)
{
	struct uprobe_bp_array *old, *new = NULL;
	unsigned long need;
	unsigned int bits;

	for (;;) {
		spin_lock(&t->lock);
		old = bp_array(t);
		if (bp_array_has_room(old, more))
			break;
		/* Only tombstones: empty the array in place. */
		if (old && !t->live && more * 4UL <= bp_nr_slots(old) * 3UL) {
			bp_array_clear(old);
			break;
		}
		need = more == 1 ? 2UL * (t->live + 1) :
				   DIV_ROUND_UP(4UL * (t->live + more), 3);
		bits = max_t(unsigned int, ilog2(BP_MIN_SLOTS), order_base_2(need));
		if (new && new->bits >= bits) {
			bp_array_rehash(new, old);
			rcu_assign_pointer(t->arr, new);
			new = NULL;
			if (old)
				kvfree_rcu(old, rcu);
			break;
		}
		spin_unlock(&t->lock);
		kvfree(new);
		new = bp_array_alloc(bits);
		if (!new) {
			spin_lock(&t->lock);
			return -ENOMEM;
		}
	}
	/* Another writer grew the array meanwhile.  No vfree() under a lock. */
	if (new)
		kvfree_rcu(new, rcu);
	return 0;
}

/*
 * Under t->lock: point @vaddr at @uprobe, as uprobe_bpt_claim_locked()
 * does, or with @replace false return -EEXIST for a taken @vaddr.
 */
static int bp_claim(struct uprobe_bp_table *t, unsigned long vaddr,
		    struct uprobe *uprobe, bool replace)
{
	struct uprobe_bp_array *a = bp_array(t);
	struct uprobe_bp_slot *s;
	struct uprobe *old;
	bool found;

	if (!a)
		return -ENOSPC;
	s = bp_array_find(a, vaddr, &found);
	if (!found) {
		if (!bp_array_has_room(a, 1))
			return -ENOSPC;
		bp_slot_fill(a, s, vaddr, uprobe_get(uprobe));
		t->live++;
		return 0;
	}
	if (!replace)
		return -EEXIST;
	if (s->uprobe == uprobe)
		return 1;
	old = s->uprobe;
	WRITE_ONCE(s->uprobe, uprobe_get(uprobe));
	uprobe_put(old);
	return 2;
}

static int bp_put_entry(struct uprobe_bp_table *t, unsigned long vaddr,
			struct uprobe *uprobe, bool replace)
{
	int err = uprobe_bpt_reserve(t, 1);

	if (!err)
		err = bp_claim(t, vaddr, uprobe, replace);
	spin_unlock(&t->lock);
	return min(err, 0);
}

/**
 * uprobe_bpt_prepare - make room for many entries at once
 * @t: the table
 * @more: how many entries are about to be added
 *
 * One rebuild for a batch instead of one each time the array fills up.
 *
 * Return: 0 or -ENOMEM (entries can still be added one by one).
 */
int uprobe_bpt_prepare(struct uprobe_bp_table *t, unsigned int more)
{
	int err = uprobe_bpt_reserve(t, more);

	spin_unlock(&t->lock);
	return err;
}

/**
 * uprobe_bpt_add - add an entry for @vaddr if it has none
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Return: 0, -EEXIST or -ENOMEM.
 */
int uprobe_bpt_add(struct uprobe_bp_table *t, unsigned long vaddr,
		   struct uprobe *uprobe)
{
	return bp_put_entry(t, vaddr, uprobe, false);
}

/**
 * uprobe_bpt_set - point @vaddr at @uprobe, replacing any entry
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Return: 0 or -ENOMEM.
 */
int uprobe_bpt_set(struct uprobe_bp_table *t, unsigned long vaddr,
		   struct uprobe *uprobe)
{
	return bp_put_entry(t, vaddr, uprobe, true);
}

/**
 * uprobe_bpt_claim_locked - point @vaddr at @uprobe unless it already is
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Another probe's entry (one since retired) is replaced.  Never grows
 * the array.
 *
 * Context: uprobe_bpt_lock() held.
 * Return: 0 when added, 1 when it was @uprobe's already, 2 when another
 * probe's entry was replaced, -ENOSPC when the array is full (call
 * uprobe_bpt_prepare() outside the lock and try again).
 */
int uprobe_bpt_claim_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			    struct uprobe *uprobe)
{
	lockdep_assert_held(&t->lock);
	return bp_claim(t, vaddr, uprobe, true);
}

/**
 * uprobe_bpt_release_locked - erase @vaddr's entry unless another probe owns it
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: the probe whose breakpoint is being taken out
 *
 * A walk that removes @uprobe may come after another probe was installed
 * at the same place: that probe's entry stays.
 *
 * Context: uprobe_bpt_lock() held.
 * Return: false when the entry is a live probe's other than @uprobe,
 * else true (the entry, if any, is gone).
 */
bool uprobe_bpt_release_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			       struct uprobe *uprobe)
{
	struct uprobe_bp_array *a;
	struct uprobe_bp_slot *s;
	bool found;

	lockdep_assert_held(&t->lock);
	a = bp_array(t);
	if (!a)
		return true;
	s = bp_array_find(a, vaddr, &found);
	if (!found)
		return true;
	if (s->uprobe != uprobe && !test_bit(UPROBE_F_DEAD, &s->uprobe->flags))
		return false;
	bp_slot_erase(t, s);
	return true;
}

/**
 * uprobe_bpt_erase - remove the entry for @vaddr, if any
 * @t: the table
 * @vaddr: the address
 */
void uprobe_bpt_erase(struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct uprobe_bp_array *a;
	struct uprobe_bp_slot *s;
	bool found;

	spin_lock(&t->lock);
	a = bp_array(t);
	if (a) {
		s = bp_array_find(a, vaddr, &found);
		if (found)
			bp_slot_erase(t, s);
	}
	spin_unlock(&t->lock);
}

/**
 * uprobe_bpt_erase_range - remove the entries in [@start, @end)
 * @t: the table
 * @start: the first address
 * @end: the address past the range
 */
void uprobe_bpt_erase_range(struct uprobe_bp_table *t, unsigned long start,
			    unsigned long end)
{
	struct uprobe_bp_array *a;
	unsigned int i;

	spin_lock(&t->lock);
	a = bp_array(t);
	for (i = 0; a && t->live && i < bp_nr_slots(a); i++) {
		struct uprobe_bp_slot *s = &a->slots[i];

		/* BP_EMPTY and BP_DEAD are >= @end */
		if (s->vaddr >= start && s->vaddr < end)
			bp_slot_erase(t, s);
	}
	spin_unlock(&t->lock);
}

/**
 * uprobe_bpt_dup - copy the entries of @old that @keep wants into @new
 * @new: a table nobody reads yet
 * @old: the table to copy
 * @keep: called for each entry, without the lock; false leaves it out
 * @arg: its argument
 *
 * Return: 0 or -ENOMEM (then @new has no entries).
 */
int uprobe_bpt_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		   bool (*keep)(unsigned long vaddr, void *arg), void *arg)
{
	struct uprobe_bp_array *a, *copy = NULL;
	unsigned int i, bits;

	for (;;) {
		spin_lock(&old->lock);
		a = bp_array(old);
		if (!a || (copy && copy->bits == a->bits))
			break;
		bits = a->bits;
		spin_unlock(&old->lock);
		kvfree(copy);
		copy = bp_array_alloc(bits);
		if (!copy)
			return -ENOMEM;
	}
	if (!a) {
		spin_unlock(&old->lock);
		kvfree(copy);
		return 0;
	}
	memcpy(copy, a, struct_size(a, slots, bp_nr_slots(a)));
	for (i = 0; i < bp_nr_slots(copy); i++)
		if (bp_slot_live(&copy->slots[i]))
			uprobe_get(copy->slots[i].uprobe);
	new->live = old->live;
	spin_unlock(&old->lock);

	for (i = 0; i < bp_nr_slots(copy); i++) {
		struct uprobe_bp_slot *s = &copy->slots[i];

		if (bp_slot_live(s) && !keep(s->vaddr, arg)) {
			uprobe_put(s->uprobe);
			s->vaddr = BP_DEAD;
			new->live--;
		}
	}
	rcu_assign_pointer(new->arr, copy);
	return 0;
}

/**
 * uprobe_bpt_free - drop every entry and free the table
 * @t: a table nobody can reach any more
 */
void uprobe_bpt_free(struct uprobe_bp_table *t)
{
	struct uprobe_bp_array *a = rcu_dereference_protected(t->arr, true);
	unsigned int i;

	for (i = 0; a && i < bp_nr_slots(a); i++)
		if (bp_slot_live(&a->slots[i]))
			uprobe_put(a->slots[i].uprobe);
	kvfree(a);
	kfree(t);
}
