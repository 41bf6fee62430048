// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes: the per-mm table of installed breakpoints.
 *
 * Every hit looks its address up here without a lock: an rhashtable of
 * entries (address, referenced probe), read under RCU.  Writers serialise
 * on t->lock, which also guards the list of entries that range
 * operations (munmap, fork, exit) walk.  No writer allocates an entry
 * under the lock: each takes one from the table's pool, filled outside
 * it (uprobe_bpt_retry()); the pool keeps what a walk did not use for
 * the next one.  An erased
 * entry is freed after a grace period; a probe replaced in an entry is
 * seen old or new, and SRCU keeps the old one alive.  A miss is harmless:
 * the hit path falls back to the VMA (uprobe_bp_lookup_slow()).
 */

#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/rhashtable.h>
#include <linux/slab.h>

#include "uprobes_internal.h"

/* Tries of an insert the rhashtable refused, 0.5 to 1 ms apart. */
#define BP_TRIES	10

static struct kmem_cache *bp_entry_cache;

/* Put up to @n fresh entries in @t's pool; return how many. */
static unsigned int bp_pool_fill(struct uprobe_bp_table *t, unsigned int n)
{
	struct uprobe_bp_entry *e;
	unsigned int added = 0;
	LIST_HEAD(fresh);

	for (; added < n; added++) {
		e = kmem_cache_alloc(bp_entry_cache, GFP_KERNEL);
		if (!e)
			break;
		list_add(&e->list, &fresh);
	}
	spin_lock(&t->lock);
	list_splice(&fresh, &t->pool);
	spin_unlock(&t->lock);
	return added;
}

static struct uprobe_bp_entry *bp_find(struct uprobe_bp_table *t,
				       unsigned long vaddr)
{
	return rhashtable_lookup_fast(&t->ht, &vaddr, uprobe_bpt_params);
}

static void bp_entry_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(bp_entry_cache,
			container_of(rcu, struct uprobe_bp_entry, rcu));
}

/* Drop an entry; readers may still see it until a grace period. */
static void bp_erase(struct uprobe_bp_table *t, struct uprobe_bp_entry *e)
{
	WARN_ON_ONCE(rhashtable_remove_fast(&t->ht, &e->node, uprobe_bpt_params));
	list_del(&e->list);	/* before ->rcu, its union partner, is used */
	t->live--;
	uprobe_put(e->uprobe);
	call_rcu(&e->rcu, bp_entry_free_rcu);
}

/**
 * uprobe_bpt_cache_init - create the slab cache of table entries
 *
 * Context: boot, once.
 */
void __init uprobe_bpt_cache_init(void)
{
	bp_entry_cache = KMEM_CACHE(uprobe_bp_entry, SLAB_PANIC);
}

/* Entries a table's pool keeps between walks; the rest are freed. */
#define BP_POOL_KEEP	16

/**
 * uprobe_bpt_trim_pool - free what a walk left in the pool, but a few
 * @t: the table
 *
 * Context: takes t->lock.
 */
void uprobe_bpt_trim_pool(struct uprobe_bp_table *t)
{
	struct uprobe_bp_entry *e, *tmp;
	unsigned int n = 0;
	LIST_HEAD(spare);

	spin_lock(&t->lock);
	list_for_each_entry_safe(e, tmp, &t->pool, list)
		if (++n > BP_POOL_KEEP)
			list_move(&e->list, &spare);
	spin_unlock(&t->lock);
	list_for_each_entry_safe(e, tmp, &spare, list)
		kmem_cache_free(bp_entry_cache, e);
}

/**
 * uprobe_bpt_init - set up an empty table
 * @t: the table
 *
 * Context: may sleep.
 * Return: 0, or -EINVAL for bad rhashtable parameters (never for lack
 * of memory: rhashtable_init() falls back to the smallest table).
 */
int uprobe_bpt_init(struct uprobe_bp_table *t)
{
	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->entries);
	INIT_LIST_HEAD(&t->pool);
	t->live = 0;
	t->dropping = NULL;
	spin_lock_init(&t->pending_lock);
	INIT_LIST_HEAD(&t->refctr_pending);
	return rhashtable_init(&t->ht, &uprobe_bpt_params);
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
	if (!t || uprobe_bpt_init(t)) {
		kfree(t);
		return NULL;
	}
	/* Under mmap_lock for read, two threads may race here. */
	old = cmpxchg_release(&mm->uprobes_state.bp_table, NULL, t);
	if (old) {
		uprobe_bpt_free(t);
		return old;
	}
	return t;
}

/**
 * uprobe_bpt_prepare - make room for entries about to be claimed
 * @t: the table
 * @more: how many
 *
 * Context: may sleep.
 * Return: 0, or -ENOMEM when not even one entry could be made.
 */
int uprobe_bpt_prepare(struct uprobe_bp_table *t, unsigned int more)
{
	return bp_pool_fill(t, more) ? 0 : -ENOMEM;
}

/*
 * Under t->lock: point @vaddr at @uprobe as uprobe_bpt_claim_locked()
 * does, or with @replace false return -EEXIST for a taken @vaddr.
 */
static int bp_claim(struct uprobe_bp_table *t, unsigned long vaddr,
		    struct uprobe *uprobe, bool replace)
{
	struct uprobe_bp_entry *e = bp_find(t, vaddr);
	struct uprobe *old;
	int err;

	if (e) {
		if (!replace)
			return -EEXIST;
		if (e->uprobe == uprobe)
			return 1;
		old = e->uprobe;
		WRITE_ONCE(e->uprobe, uprobe_get(uprobe));
		uprobe_put(old);
		return 2;
	}
	e = list_first_entry_or_null(&t->pool, struct uprobe_bp_entry, list);
	if (!e)
		return -ENOSPC;
	e->vaddr = vaddr;
	e->uprobe = uprobe;
	/*
	 * Never -EEXIST: t->lock is held and @vaddr was not found.  -EBUSY
	 * and -ENOMEM pass once the resize the table asked for is done.
	 */
	err = rhashtable_insert_fast(&t->ht, &e->node, uprobe_bpt_params);
	if (err)
		return -EAGAIN;
	uprobe_get(uprobe);
	list_move(&e->list, &t->entries);
	t->live++;
	return 0;
}

/**
 * uprobe_bpt_retry - whether a claim that failed should be tried again
 * @t: the table
 * @err: what uprobe_bpt_claim_locked() returned
 * @more: entries to put in the pool if it is empty
 * @tries: the caller's count of -EAGAIN, from 0
 *
 * Context: uprobe_bpt_lock() held; dropped and taken again.  May sleep.
 * Return: true to claim again; false with @err final (-EAGAIN becomes
 * -ENOMEM).
 */
bool uprobe_bpt_retry(struct uprobe_bp_table *t, int *err, unsigned int more,
		      unsigned int *tries)
	__must_hold(&t->lock)
{
	lockdep_assert_held(&t->lock);
	if (*err != -ENOSPC && (*err != -EAGAIN || ++*tries > BP_TRIES)) {
		if (*err == -EAGAIN)
			*err = -ENOMEM;
		return false;
	}
	spin_unlock(&t->lock);
	if (*err == -ENOSPC)
		*err = bp_pool_fill(t, more) ? 0 : -ENOMEM;
	else
		usleep_range(500, 1000);	/* for the resize worker */
	spin_lock(&t->lock);
	return !*err;
}

static int bp_put_entry(struct uprobe_bp_table *t, unsigned long vaddr,
			struct uprobe *uprobe, bool replace)
{
	unsigned int tries = 0;
	int err;

	spin_lock(&t->lock);
	do {
		err = bp_claim(t, vaddr, uprobe, replace);
	} while (err < 0 && uprobe_bpt_retry(t, &err, 1, &tries));
	spin_unlock(&t->lock);
	return min(err, 0);
}

/**
 * uprobe_bpt_add - add an entry for @vaddr if it has none
 * @t: the table
 * @vaddr: the breakpoint's address
 * @uprobe: its probe; the table takes a reference
 *
 * Context: may sleep.
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
 * Context: may sleep.
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
 * Another probe's entry (one since retired) is replaced.  Never
 * allocates an entry: a new one comes from the pool.
 *
 * Context: uprobe_bpt_lock() held.
 * Return: 0 when added, 1 when it was @uprobe's already, 2 when another
 * probe's entry was replaced, -ENOSPC when the pool is empty or -EAGAIN
 * when the table is resizing: see uprobe_bpt_retry().
 */
int uprobe_bpt_claim_locked(struct uprobe_bp_table *t, unsigned long vaddr,
			    struct uprobe *uprobe)
	__must_hold(&t->lock)
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
	struct uprobe_bp_entry *e;

	lockdep_assert_held(&t->lock);
	e = bp_find(t, vaddr);
	if (!e)
		return true;
	if (e->uprobe != uprobe && !test_bit(UPROBE_F_DEAD, &e->uprobe->flags))
		return false;
	bp_erase(t, e);
	return true;
}

/**
 * uprobe_bpt_erase - remove the entry for @vaddr, if any
 * @t: the table
 * @vaddr: the address
 *
 * Context: takes t->lock; may be called under rcu_read_lock().
 */
void uprobe_bpt_erase(struct uprobe_bp_table *t, unsigned long vaddr)
{
	struct uprobe_bp_entry *e;

	spin_lock(&t->lock);
	e = bp_find(t, vaddr);
	if (e)
		bp_erase(t, e);
	spin_unlock(&t->lock);
}

/**
 * uprobe_bpt_erase_range - remove the entries in [@start, @end)
 * @t: the table
 * @start: the first address
 * @end: the address past the range
 *
 * Context: takes t->lock; may be called under rcu_read_lock().
 */
void uprobe_bpt_erase_range(struct uprobe_bp_table *t, unsigned long start,
			    unsigned long end)
{
	struct uprobe_bp_entry *e, *tmp;

	spin_lock(&t->lock);
	list_for_each_entry_safe(e, tmp, &t->entries, list)
		if (e->vaddr >= start && e->vaddr < end)
			bp_erase(t, e);
	spin_unlock(&t->lock);
}

/**
 * uprobe_bpt_dup - copy the entries of @old that @keep wants into @new
 * @new: a table nobody reads yet
 * @old: the table to copy
 * @keep: called for each entry, without the lock; false leaves it out
 * @arg: its argument
 *
 * An entry that cannot be made, or that the rhashtable refuses, is
 * left out: the hit path's slow lookup finds it again.
 *
 * Context: may sleep.
 */
void uprobe_bpt_dup(struct uprobe_bp_table *new, struct uprobe_bp_table *old,
		    bool (*keep)(unsigned long vaddr, void *arg), void *arg)
{
	struct uprobe_bp_entry *e, *c, *tmp;
	unsigned int n = 0, need, added;
	LIST_HEAD(copies);

	/* Entries for the copies, made with @old's lock dropped. */
	for (;;) {
		spin_lock(&old->lock);
		need = old->live;
		if (n >= need)
			break;
		spin_unlock(&old->lock);
		added = bp_pool_fill(new, need - n);
		n += added;
		if (!added) {
			spin_lock(&old->lock);
			break;
		}
	}
	list_for_each_entry(e, &old->entries, list) {
		c = list_first_entry_or_null(&new->pool, struct uprobe_bp_entry,
					     list);
		if (!c)
			break;
		c->vaddr = e->vaddr;
		c->uprobe = uprobe_get(e->uprobe);
		list_move_tail(&c->list, &copies);
	}
	spin_unlock(&old->lock);

	list_for_each_entry_safe(c, tmp, &copies, list) {
		if (!keep(c->vaddr, arg) ||
		    rhashtable_insert_fast(&new->ht, &c->node, uprobe_bpt_params)) {
			uprobe_put(c->uprobe);
			list_move(&c->list, &new->pool);
			continue;
		}
		list_move_tail(&c->list, &new->entries);
		new->live++;
	}
	uprobe_bpt_trim_pool(new);
}

/**
 * uprobe_bpt_free - drop every entry and free the table
 * @t: a table nobody can reach any more
 *
 * Context: process context, may sleep.
 */
void uprobe_bpt_free(struct uprobe_bp_table *t)
{
	struct uprobe_bp_entry *e, *tmp;

	rhashtable_destroy(&t->ht);
	list_for_each_entry_safe(e, tmp, &t->entries, list) {
		uprobe_put(e->uprobe);
		kmem_cache_free(bp_entry_cache, e);
	}
	list_for_each_entry_safe(e, tmp, &t->pool, list)
		kmem_cache_free(bp_entry_cache, e);
	kfree(t);
}
