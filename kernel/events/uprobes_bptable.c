// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the per-mm table of installed breakpoints.
 *
 * Every hit looks its address up here, without a lock, so the table is an
 * open-addressed hash of (address, probe) slots in one array: a lookup is
 * a hash and, almost always, one slot compared; an insert writes a slot,
 * with no allocation until the array grows.  (A maple tree did the job
 * before: its RCU mode copies a node and allocates on every store, which
 * was most of the cost of installing a breakpoint in an mm.)
 *
 * Writers (install and removal under mmap_lock, munmap paths under
 * mmap_lock for read or i_mmap_rwsem, the hit path's re-add) serialise on
 * the table's spinlock and never allocate under it.  Readers hold
 * rcu_read_lock() and need no lock: a slot's probe is written before its
 * address, and a reader that found its address checks it again after
 * reading the probe, so a slot being reused for another address is seen
 * as a miss, never as a wrong probe.  A miss is harmless: the hit path
 * falls back to the VMA (uprobe_bp_lookup_slow()).  The array is replaced
 * when it grows, the old one freed after an RCU grace period.
 *
 * Erased slots become tombstones, so that lookups probe past them; a
 * rebuild (when live plus dead slots pass 3/4 of the array) drops them.
 * Range operations (munmap, fork, exit) scan the whole array: they are
 * rare next to hits, and munmap skips mappings that cannot hold probes.
 *
 * Memory: 16 bytes a slot, with the array between 3/8 and 3/4 full, so
 * 21 to 43 bytes per breakpoint (16 slots, 256 bytes, at least), plus the
 * table's header.
 */

#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "uprobes_internal.h"

#define BP_MIN_SLOTS	16

static unsigned int bp_nr_slots(const struct bp_array *a)
{
	return 1U << a->bits;
}

static struct bp_array *bp_array_alloc(unsigned int bits)
{
	struct bp_array *a;
	unsigned int i;

	a = kvmalloc(struct_size(a, slots, 1UL << bits), GFP_KERNEL);
	if (!a)
		return NULL;
	a->bits = bits;
	a->mask = (1U << bits) - 1;
	a->shift = BITS_PER_LONG - bits;
	a->filled = 0;
	/* A slot's probe is read only where its address matched. */
	for (i = 0; i < (1U << bits); i++)
		a->slots[i].vaddr = BP_EMPTY;
	return a;
}

/* The array size for @live entries: at most half full after a rebuild. */
static unsigned int bp_bits_for(unsigned int live)
{
	unsigned int bits = ilog2(BP_MIN_SLOTS);

	while ((1U << bits) < 2 * live)
		bits++;
	return bits;
}

/* The smallest array that takes @n entries without a rebuild. */
static unsigned int bp_bits_to_fit(unsigned int n)
{
	unsigned int bits = ilog2(BP_MIN_SLOTS);

	while ((3UL << bits) < 4UL * n)
		bits++;
	return bits;
}

static bool bp_array_has_room(const struct bp_array *a, unsigned int more)
{
	return a && (a->filled + more) * 4UL <= bp_nr_slots(a) * 3UL;
}

/*
 * The slot holding @vaddr, or where to put it (the first dead slot on the
 * way, else the empty slot that ended the search).  Under t->lock.
 */
static struct bp_slot *bp_array_find(struct bp_array *a, unsigned long vaddr,
				     bool *found)
{
	unsigned int mask = bp_nr_slots(a) - 1, i = bp_hash(a, vaddr);
	struct bp_slot *dead = NULL, *s;

	for (;; i = (i + 1) & mask) {
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

/* Fill a free slot: the probe first, then the address readers match. */
static void bp_slot_fill(struct bp_array *a, struct bp_slot *s,
			 unsigned long vaddr, struct uprobe *uprobe)
{
	if (s->vaddr == BP_EMPTY)
		a->filled++;
	WRITE_ONCE(s->uprobe, uprobe);
	smp_wmb();	/* pairs with smp_rmb() in uprobe_bp_lookup() */
	WRITE_ONCE(s->vaddr, vaddr);
}

static void bp_slot_kill(struct bp_slot *s)
{
	WRITE_ONCE(s->vaddr, BP_DEAD);
	/* Before the slot can be filled again: see bp_slot_fill(). */
	smp_wmb();
}

/* Make every slot of @a empty again; it holds no live entry. */
static void bp_array_clear(struct bp_array *a)
{
	unsigned int i;

	for (i = 0; i < bp_nr_slots(a); i++)
		if (a->slots[i].vaddr != BP_EMPTY)
			WRITE_ONCE(a->slots[i].vaddr, BP_EMPTY);
	a->filled = 0;
}

/* Copy @old's live slots into the empty @new; nobody reads @new yet. */
static void bp_array_rehash(struct bp_array *new, struct bp_array *old)
{
	unsigned int i;
	bool found;

	for (i = 0; old && i < bp_nr_slots(old); i++) {
		struct bp_slot *s = &old->slots[i];

		if (s->vaddr == BP_EMPTY || s->vaddr == BP_DEAD)
			continue;
		bp_slot_fill(new, bp_array_find(new, s->vaddr, &found),
			     s->vaddr, s->uprobe);
	}
}

/**
 * bp_table_create - the breakpoint table of @mm, created if needed
 * @mm: the mm, with mmap_lock held
 *
 * Return: the table, or NULL without memory.
 */
struct uprobe_bp_table *bp_table_create(struct mm_struct *mm)
{
	struct uprobe_bp_table *t = bp_table(mm), *old;

	if (t)
		return t;
	t = kmalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	bp_table_init(t);
	/* Under mmap_lock for read two threads may race to create it. */
	old = cmpxchg_release(&mm->uprobes_state.bp_table, NULL, t);
	if (old) {
		kfree(t);
		return old;
	}
	return t;
}

/**
 * bp_table_init - set up an empty table
 * @t: the table
 */
void bp_table_init(struct uprobe_bp_table *t)
{
	RCU_INIT_POINTER(t->arr, NULL);
	t->live = 0;
	t->dropping = NULL;
	spin_lock_init(&t->lock);
	spin_lock_init(&t->pending_lock);
	INIT_LIST_HEAD(&t->refctr_pending);
}

/*
 * Make room for @more entries: on return with t->lock held, t->arr has
 * that many free slots.  Allocates with the lock dropped.  One entry at a
 * time, a rebuild leaves the array half full, so that the next is far;
 * many at once, it is made just big enough for them.
 */
static int bp_table_reserve(struct uprobe_bp_table *t, unsigned int more)
	__acquires(&t->lock)
{
	struct bp_array *old, *new = NULL;
	unsigned int bits;

	for (;;) {
		spin_lock(&t->lock);
		old = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
		if (bp_array_has_room(old, more))
			break;
		/*
		 * Only tombstones (all the breakpoints were taken out, as
		 * when a group of events is disabled): empty the array in
		 * place rather than allocate another.  A reader then misses,
		 * as it would anyway.
		 */
		if (old && !t->live && more * 4UL <= bp_nr_slots(old) * 3UL) {
			bp_array_clear(old);
			break;
		}
		bits = more == 1 ? bp_bits_for(t->live + 1) :
				   bp_bits_to_fit(t->live + more);
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
	if (unlikely(new))	/* another writer grew the array meanwhile */
		kvfree(new);
	return 0;
}

/*
 * Point @vaddr at @uprobe; with @replace false, only if it has no entry.
 * The table takes a reference on @uprobe, and drops the one of an entry
 * it replaces.
 */
static int bp_table_put_entry(struct uprobe_bp_table *t, unsigned long vaddr,
			      struct uprobe *uprobe, bool replace)
{
	struct uprobe *old = NULL;
	struct bp_array *a;
	struct bp_slot *s;
	bool found;
	int err;

	err = bp_table_reserve(t, 1);
	if (err)
		goto unlock;
	a = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
	s = bp_array_find(a, vaddr, &found);
	if (found) {
		if (!replace) {
			err = -EEXIST;
			goto unlock;
		}
		old = s->uprobe;
		WRITE_ONCE(s->uprobe, get_uprobe(uprobe));
	} else {
		bp_slot_fill(a, s, vaddr, get_uprobe(uprobe));
		t->live++;
	}
unlock:
	spin_unlock(&t->lock);
	if (old)
		put_uprobe(old);
	return err;
}

/**
 * bp_table_prepare - make room for many entries at once
 * @t: the table
 * @more: how many entries are about to be added
 *
 * One rebuild of the array for a batch instead of one each time it
 * fills up; the array then holds @more more entries without a rebuild.
 *
 * Return: 0 or -ENOMEM (and then entries are still added one by one).
 */
int bp_table_prepare(struct uprobe_bp_table *t, unsigned int more)
{
	int err = bp_table_reserve(t, more);

	spin_unlock(&t->lock);
	return err;
}

/**
 * bp_table_add - add an entry for @vaddr if it has none
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Return: 0, -EEXIST, or -ENOMEM.
 */
int bp_table_add(struct uprobe_bp_table *t, unsigned long vaddr,
		 struct uprobe *uprobe)
{
	return bp_table_put_entry(t, vaddr, uprobe, false);
}

/**
 * bp_table_set - point @vaddr at @uprobe, replacing any entry it has
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Return: 0 or -ENOMEM.
 */
int bp_table_set(struct uprobe_bp_table *t, unsigned long vaddr,
		 struct uprobe *uprobe)
{
	return bp_table_put_entry(t, vaddr, uprobe, true);
}

/**
 * bp_table_lock - start a writer section over many entries
 * @t: the table
 *
 * For bp_table_claim_locked() and bp_table_release_locked(): one lock
 * for the breakpoints of a page rather than one each.
 */
void bp_table_lock(struct uprobe_bp_table *t)
	__acquires(&t->lock)
{
	spin_lock(&t->lock);
}

/**
 * bp_table_unlock - end a writer section
 * @t: the table
 */
void bp_table_unlock(struct uprobe_bp_table *t)
	__releases(&t->lock)
{
	spin_unlock(&t->lock);
}

/**
 * bp_table_claim_locked - point @vaddr at @uprobe unless it already is
 * @t: the table, under bp_table_lock()
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * An entry for another probe (one since unregistered) is replaced, and its
 * reference dropped: no probe is freed before an SRCU grace period.  Never
 * grows the array.
 *
 * Return: 0 when the entry was added, 1 when it pointed at @uprobe
 * already, 2 when it was another probe's and was replaced, -ENOSPC when
 * the array has no room for one more entry (bp_table_prepare() it outside
 * the lock, then try again).
 */
int bp_table_claim_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			  struct uprobe *uprobe)
{
	struct bp_array *a;
	struct bp_slot *s;
	bool found;

	a = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
	if (!a)
		return -ENOSPC;
	s = bp_array_find(a, vaddr, &found);
	if (!found) {
		if (!bp_array_has_room(a, 1))
			return -ENOSPC;
		bp_slot_fill(a, s, vaddr, get_uprobe(uprobe));
		t->live++;
		return 0;
	}
	if (s->uprobe == uprobe)
		return 1;
	put_uprobe(s->uprobe);
	WRITE_ONCE(s->uprobe, get_uprobe(uprobe));
	return 2;
}

/**
 * bp_table_release_locked - erase @vaddr's entry unless another probe owns it
 * @t: the table, under bp_table_lock()
 * @vaddr: the breakpoint's address
 * @uprobe: the probe whose breakpoint is being taken out
 *
 * A walk that removes @uprobe's breakpoints may come after @uprobe was
 * retired and another probe installed at the same place: that probe's
 * entry (and breakpoint) stay.
 *
 * Return: false when the entry belongs to a live probe other than
 * @uprobe; true otherwise (the entry, if any, is gone).
 */
bool bp_table_release_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			     struct uprobe *uprobe)
{
	struct bp_array *a;
	struct bp_slot *s;
	bool found;

	a = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
	if (!a)
		return true;
	s = bp_array_find(a, vaddr, &found);
	if (!found)
		return true;
	if (s->uprobe != uprobe && !test_bit(UPROBE_F_DEAD, &s->uprobe->flags))
		return false;
	put_uprobe(s->uprobe);
	bp_slot_kill(s);
	t->live--;
	return true;
}

/**
 * bp_table_erase - remove the entry for @vaddr, if any
 * @t: the table
 * @vaddr: the address
 */
void bp_table_erase(struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct uprobe *old = NULL;
	struct bp_array *a;
	struct bp_slot *s;
	bool found;

	spin_lock(&t->lock);
	a = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
	if (a) {
		s = bp_array_find(a, vaddr, &found);
		if (found) {
			old = s->uprobe;
			bp_slot_kill(s);
			t->live--;
		}
	}
	spin_unlock(&t->lock);
	if (old)
		put_uprobe(old);
}

/**
 * bp_table_erase_range - remove the entries in [@start, @end)
 * @t: the table
 * @start: the first address
 * @end: the address past the range
 *
 * The references of the erased entries are dropped after the lock: no
 * probe is freed before an SRCU grace period anyway.
 */
void bp_table_erase_range(struct uprobe_bp_table *t, unsigned long start,
			  unsigned long end)
{
	struct bp_array *a;
	unsigned int i;

	spin_lock(&t->lock);
	a = rcu_dereference_protected(t->arr, lockdep_is_held(&t->lock));
	for (i = 0; a && t->live && i < bp_nr_slots(a); i++) {
		struct bp_slot *s = &a->slots[i];

		if (s->vaddr < start || s->vaddr >= end)
			continue;	/* BP_EMPTY and BP_DEAD are >= end */
		put_uprobe(s->uprobe);
		bp_slot_kill(s);
		t->live--;
	}
	spin_unlock(&t->lock);
}

/**
 * bp_table_dup - copy the entries of @old that @keep wants into @new
 * @new: a table nobody reads yet
 * @old: the table to copy
 * @keep: called for each entry without the lock; false leaves it out
 * @arg: its argument
 *
 * Return: 0 or -ENOMEM (then @new has no entries).
 */
int bp_table_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		 bool (*keep)(unsigned long vaddr, void *arg), void *arg)
{
	struct bp_array *a, *copy = NULL;
	unsigned int i, bits = 0;
	size_t size;

	for (;;) {
		spin_lock(&old->lock);
		a = rcu_dereference_protected(old->arr, lockdep_is_held(&old->lock));
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
	size = struct_size(a, slots, bp_nr_slots(a));
	memcpy(copy, a, size);
	for (i = 0; i < bp_nr_slots(copy); i++) {
		struct bp_slot *s = &copy->slots[i];

		if (s->vaddr != BP_EMPTY && s->vaddr != BP_DEAD)
			get_uprobe(s->uprobe);
	}
	new->live = old->live;
	spin_unlock(&old->lock);

	for (i = 0; i < bp_nr_slots(copy); i++) {
		struct bp_slot *s = &copy->slots[i];

		if (s->vaddr == BP_EMPTY || s->vaddr == BP_DEAD ||
		    keep(s->vaddr, arg))
			continue;
		put_uprobe(s->uprobe);
		s->vaddr = BP_DEAD;
		new->live--;
	}
	rcu_assign_pointer(new->arr, copy);
	return 0;
}

/**
 * bp_table_free - drop every entry and free the table
 * @t: a table nobody can reach any more
 */
void bp_table_free(struct uprobe_bp_table *t)
{
	struct bp_array *a = rcu_dereference_protected(t->arr, true);
	unsigned int i;

	for (i = 0; a && i < bp_nr_slots(a); i++) {
		struct bp_slot *s = &a->slots[i];

		if (s->vaddr != BP_EMPTY && s->vaddr != BP_DEAD)
			put_uprobe(s->uprobe);
	}
	kvfree(a);
	kfree(t);
}
