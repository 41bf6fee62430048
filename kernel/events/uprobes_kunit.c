// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for the pure parts of the uprobes core: the registry's order
 * and lookups, the XOL slot bitmap, the bookkeeping of pending return
 * probes (which frames are dead, which chain returns) and the per-mm
 * table of installed breakpoints.
 */

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "uprobes_internal.h"

/* Only the addresses of these are used, as registry keys. */
static struct inode *const inode_a = (struct inode *)0x1000;
static struct inode *const inode_b = (struct inode *)0x2000;

static struct uprobe *fake_uprobe(struct kunit *test, struct inode *inode,
				  loff_t offset)
{
	struct uprobe *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, u);
	u->inode = inode;
	u->offset = offset;
	return u;
}

static void key_order_is_inode_then_offset(struct kunit *test)
{
	KUNIT_EXPECT_LT(test, uprobe_key_cmp(inode_a, 0x900, inode_b, 0x10), 0);
	KUNIT_EXPECT_GT(test, uprobe_key_cmp(inode_b, 0x10, inode_a, 0x900), 0);
	KUNIT_EXPECT_LT(test, uprobe_key_cmp(inode_a, 0x10, inode_a, 0x11), 0);
	KUNIT_EXPECT_GT(test, uprobe_key_cmp(inode_a, 0x11, inode_a, 0x10), 0);
	KUNIT_EXPECT_EQ(test, uprobe_key_cmp(inode_a, 0x10, inode_a, 0x10), 0);
}

static void insert_refuses_duplicate_key(struct kunit *test)
{
	struct rb_root root = RB_ROOT;
	struct uprobe *u1 = fake_uprobe(test, inode_a, 0x100);
	struct uprobe *u2 = fake_uprobe(test, inode_a, 0x100);

	KUNIT_EXPECT_NULL(test, uprobe_tree_insert(&root, u1));
	KUNIT_EXPECT_PTR_EQ(test, uprobe_tree_insert(&root, u2), u1);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_tree_search(&root, inode_a, 0x100), u1);
	KUNIT_EXPECT_NULL(test, uprobe_tree_search(&root, inode_b, 0x100));
	KUNIT_EXPECT_NULL(test, uprobe_tree_search(&root, inode_a, 0x101));
}

/* What uprobe_mmap() relies on: one file's probes in a range, in order. */
static void range_walk_stays_in_file_and_range(struct kunit *test)
{
	static const loff_t offs[] = { 0x50, 0x1000, 0x1004, 0x1fff, 0x2000, 0x3000 };
	struct rb_root root = RB_ROOT;
	struct uprobe_range r = { inode_a, 0x1000, 0x2000 };
	struct uprobe_range past = { inode_a, 0x3001, 0x9000 };
	loff_t seen[ARRAY_SIZE(offs)];
	unsigned int i, n = 0;
	struct rb_node *node;

	/* Probes of another file on both sides of inode_a's in key order. */
	uprobe_tree_insert(&root, fake_uprobe(test, (struct inode *)0x0800, 0x1500));
	uprobe_tree_insert(&root, fake_uprobe(test, inode_b, 0x1500));
	for (i = ARRAY_SIZE(offs); i-- > 0;)
		uprobe_tree_insert(&root, fake_uprobe(test, inode_a, offs[i]));

	for (node = rb_find_first(&r, &root, uprobe_range_cmp); node;
	     node = rb_next_match(&r, node, uprobe_range_cmp))
		seen[n++] = rb_entry(node, struct uprobe, rb_node)->offset;

	KUNIT_ASSERT_EQ(test, n, 3U);
	KUNIT_EXPECT_EQ(test, seen[0], (loff_t)0x1000);
	KUNIT_EXPECT_EQ(test, seen[1], (loff_t)0x1004);
	KUNIT_EXPECT_EQ(test, seen[2], (loff_t)0x1fff);

	/* A range past the file's last probe finds nothing. */
	KUNIT_EXPECT_NULL(test, rb_find_first(&past, &root, uprobe_range_cmp));
}

static void slots_are_taken_lowest_first_until_full(struct kunit *test)
{
	DECLARE_BITMAP(slots, 8) = { 0 };
	int i;

	__set_bit(0, slots);	/* the trampoline */
	for (i = 1; i < 8; i++)
		KUNIT_EXPECT_EQ(test, xol_bitmap_take(slots, 8), i);
	KUNIT_EXPECT_EQ(test, xol_bitmap_take(slots, 8), -1);

	__clear_bit(5, slots);
	KUNIT_EXPECT_EQ(test, xol_bitmap_take(slots, 8), 5);
	KUNIT_EXPECT_EQ(test, xol_bitmap_take(slots, 8), -1);
}

/* Pending returns of a fake thread, by stack address; "alive" is sp <= stack. */
static struct return_instance *push_ri(struct kunit *test,
				       struct uprobe_task *utask,
				       unsigned long stack, bool chained)
{
	struct return_instance *ri = kzalloc(sizeof(*ri), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ri);
	ri->stack = stack;
	ri->chained = chained;
	ri->next = utask->return_instances;
	utask->return_instances = ri;
	utask->depth++;
	return ri;
}

static bool alive_if_at_or_above_sp(struct return_instance *ri, void *arg)
{
	return *(unsigned long *)arg <= ri->stack;
}

static void plain_return_pops_only_its_frame(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct return_instance *outer, *inner, *dead;
	unsigned long sp = 0x7f00 + 8;	/* inner's frame returned */

	outer = push_ri(test, &utask, 0x8000, false);
	inner = push_ri(test, &utask, 0x7f00, false);

	dead = uprobe_ri_pop_dead(&utask, alive_if_at_or_above_sp, &sp);
	KUNIT_EXPECT_PTR_EQ(test, dead, inner);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_ri_returning_chain(dead), inner);
	KUNIT_EXPECT_PTR_EQ(test, utask.return_instances, outer);
	KUNIT_EXPECT_EQ(test, utask.depth, 1U);
	uprobe_ri_free_list(dead, false);
	uprobe_ri_free_list(utask.return_instances, false);
}

static void longjmp_past_frames_drops_them(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct return_instance *outer, *mid, *dead;
	unsigned long sp = 0x7e00 + 8;	/* mid's frame returned ... */

	outer = push_ri(test, &utask, 0x8000, false);
	mid = push_ri(test, &utask, 0x7e00, false);
	push_ri(test, &utask, 0x7d00, false);	/* ... after a longjmp out of these */
	push_ri(test, &utask, 0x7c00, false);

	dead = uprobe_ri_pop_dead(&utask, alive_if_at_or_above_sp, &sp);
	KUNIT_ASSERT_NOT_NULL(test, dead);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_ri_returning_chain(dead), mid);
	KUNIT_EXPECT_NULL(test, mid->next);
	KUNIT_EXPECT_PTR_EQ(test, utask.return_instances, outer);
	KUNIT_EXPECT_EQ(test, utask.depth, 1U);
	uprobe_ri_free_list(dead, false);
	uprobe_ri_free_list(utask.return_instances, false);
}

static void tail_call_chain_returns_together(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct return_instance *b, *c, *dead;
	unsigned long sp = 0x7f00 + 8;	/* a's (and b's) frame returned */

	push_ri(test, &utask, 0x7f00, false);	/* a */
	b = push_ri(test, &utask, 0x7f00, true);	/* a tail-called b */
	c = push_ri(test, &utask, 0x7e00, false);	/* b called c, longjmp'd out */

	dead = uprobe_ri_pop_dead(&utask, alive_if_at_or_above_sp, &sp);
	KUNIT_EXPECT_PTR_EQ(test, dead, c);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_ri_returning_chain(dead), b);
	KUNIT_EXPECT_NULL(test, utask.return_instances);
	KUNIT_EXPECT_EQ(test, utask.depth, 0U);
	uprobe_ri_free_list(dead, false);
}

static void return_matching_no_frame_pops_nothing(struct kunit *test)
{
	struct uprobe_task utask = { };
	unsigned long sp = 0x1000;	/* another stack, below every frame */

	push_ri(test, &utask, 0x8000, false);
	KUNIT_EXPECT_NULL(test, uprobe_ri_pop_dead(&utask, alive_if_at_or_above_sp, &sp));
	KUNIT_EXPECT_EQ(test, utask.depth, 1U);
	uprobe_ri_free_list(utask.return_instances, false);
}

/*
 * A probe for the reuse cases, with RB references besides the ones the
 * cache takes: one put too many shows as a wrong count, not as a free of
 * the test's memory.
 */
#define RB	100
static struct uprobe *ret_uprobe(struct kunit *test, loff_t offset)
{
	struct uprobe *u = fake_uprobe(test, inode_a, offset);

	refcount_set(&u->ref, RB);
	return u;
}

/* One call of a return-probed function: its entry and its return. */
static struct return_instance *call_once(struct kunit *test,
					 struct uprobe_task *utask,
					 struct uprobe *u)
{
	struct return_instance *ri = uprobe_ri_get(utask, u);

	KUNIT_ASSERT_NOT_NULL(test, ri);
	KUNIT_EXPECT_PTR_EQ(test, ri->uprobe, u);
	uprobe_ri_recycle(utask, ri);
	return ri;
}

/*
 * Calls of the same few return-probed functions reuse the instances that
 * hold their probes, and write no reference count once warm.
 */
static void returns_of_cached_probes_take_no_reference(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct uprobe *a = ret_uprobe(test, 0x100), *b = ret_uprobe(test, 0x200);
	struct return_instance *ra, *rb;
	int i;

	ra = call_once(test, &utask, a);
	rb = call_once(test, &utask, b);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), RB + 1);
	for (i = 0; i < 10; i++) {
		KUNIT_EXPECT_PTR_EQ(test, call_once(test, &utask, a), ra);
		KUNIT_EXPECT_PTR_EQ(test, call_once(test, &utask, b), rb);
	}
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, 2U);
	uprobe_free_returns(&utask);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), RB);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), RB);
}

/*
 * An unregistered probe's reference goes back at the thread's next
 * return-probe hit, wherever its instance is in the cache, and the
 * instance serves the next probe.
 */
static void cached_dead_probe_reference_goes_at_next_hit(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct uprobe *a = ret_uprobe(test, 0x100), *b = ret_uprobe(test, 0x200);
	struct uprobe *c = ret_uprobe(test, 0x300);
	struct return_instance *rb;

	rb = call_once(test, &utask, b);
	call_once(test, &utask, a);	/* cached: a, then b */
	set_bit(UPROBE_F_DEAD, &b->flags);
	call_once(test, &utask, a);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), RB);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), RB + 1);
	/* b's instance, without a probe now, is c's. */
	KUNIT_EXPECT_PTR_EQ(test, call_once(test, &utask, c), rb);
	KUNIT_EXPECT_EQ(test, refcount_read(&c->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, 2U);
	/* A dead probe's instance is recycled without it. */
	rb = uprobe_ri_get(&utask, c);
	set_bit(UPROBE_F_DEAD, &c->flags);
	uprobe_ri_recycle(&utask, rb);
	KUNIT_EXPECT_EQ(test, refcount_read(&c->ref), RB);
	KUNIT_EXPECT_NULL(test, rb->uprobe);
	uprobe_free_returns(&utask);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), RB);
}

/*
 * A miss takes the instance of a dead probe before the least recent one;
 * a probe without references gets no instance and changes no count.
 */
static void return_cache_miss_prefers_a_dead_probe_s_instance(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct uprobe *u[4], *gone = ret_uprobe(test, 0x900);
	struct return_instance *rb;
	int i;

	for (i = 0; i < 4; i++)
		u[i] = ret_uprobe(test, 0x100 * (i + 1));
	call_once(test, &utask, u[2]);
	rb = call_once(test, &utask, u[1]);
	call_once(test, &utask, u[0]);	/* cached: 0, 1, 2 */
	set_bit(UPROBE_F_DEAD, &u[1]->flags);
	KUNIT_EXPECT_PTR_EQ(test, call_once(test, &utask, u[3]), rb);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[1]->ref), RB);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[2]->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[3]->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, 3U);

	refcount_set(&gone->ref, 0);
	KUNIT_EXPECT_NULL(test, uprobe_ri_get(&utask, gone));
	KUNIT_EXPECT_EQ(test, utask.ri_cached, 3U);
	uprobe_free_returns(&utask);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&u[i]->ref), RB);
}

/*
 * More probes than the cache holds: the least recently cached instance
 * changes probe; a full cache frees what comes back beyond it.
 */
static void full_return_cache_gives_way_least_recent_first(struct kunit *test)
{
	struct uprobe_task utask = { };
	struct return_instance *ri[RI_CACHE_MAX + 1];
	struct uprobe *u[RI_CACHE_MAX + 1];
	int i;

	for (i = 0; i <= RI_CACHE_MAX; i++)
		u[i] = ret_uprobe(test, 0x100 * (i + 1));
	for (i = 0; i < RI_CACHE_MAX; i++)
		call_once(test, &utask, u[i]);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, (unsigned int)RI_CACHE_MAX);
	call_once(test, &utask, u[RI_CACHE_MAX]);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[0]->ref), RB);
	for (i = 1; i <= RI_CACHE_MAX; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&u[i]->ref), RB + 1);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, (unsigned int)RI_CACHE_MAX);

	/* Nested calls: every instance out, then one return too many. */
	for (i = 0; i <= RI_CACHE_MAX; i++) {
		ri[i] = uprobe_ri_get(&utask, u[i]);
		KUNIT_ASSERT_NOT_NULL(test, ri[i]);
	}
	KUNIT_EXPECT_EQ(test, utask.ri_cached, 0U);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[0]->ref), RB + 1);
	for (i = RI_CACHE_MAX; i >= 0; i--)
		uprobe_ri_recycle(&utask, ri[i]);
	KUNIT_EXPECT_EQ(test, utask.ri_cached, (unsigned int)RI_CACHE_MAX);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[0]->ref), RB);
	uprobe_free_returns(&utask);
	for (i = 0; i <= RI_CACHE_MAX; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&u[i]->ref), RB);
}

/* ---- the per-mm bp table ---- */

static struct uprobe *table_uprobe(struct kunit *test, loff_t offset)
{
	struct uprobe *u = fake_uprobe(test, inode_a, offset);

	refcount_set(&u->ref, 1);	/* ours: the table's come on top */
	return u;
}

static struct uprobe_bp_table *new_table(struct kunit *test)
{
	struct uprobe_bp_table *t = kmalloc(sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, uprobe_bpt_init(t), 0);
	return t;
}

/*
 * The hit's inline walk of the current bucket table, once the table
 * stops growing: every entry's probe, nothing for an address not in it.
 */
static void table_hit_lookup_agrees(struct kunit *test,
				    struct uprobe_bp_table *t,
				    unsigned long base, unsigned long n,
				    struct uprobe **u)
{
	struct mm_struct *mm = kunit_kzalloc(test, sizeof(*mm), GFP_KERNEL);
	struct bucket_table *tbl;
	unsigned long i;
	int idx;

	KUNIT_ASSERT_NOT_NULL(test, mm);
	mm->uprobes_state.bp_table = t;
	/* Flush the resize worker until no table is being filled. */
	for (i = 0; i < 100; i++) {
		flush_work(&t->ht.run_work);
		mutex_lock(&t->ht.mutex);
		tbl = rht_dereference(t->ht.tbl, &t->ht);
		if (!rht_dereference(tbl->future_tbl, &t->ht))
			break;	/* and ht.mutex keeps a resize from starting */
		mutex_unlock(&t->ht.mutex);
	}
	KUNIT_ASSERT_LT(test, i, 100UL);
	idx = srcu_read_lock(&uprobes_srcu);
	for (i = 0; i < n; i++) {
		unsigned long va = base + (i % 3 == 0 ? i : i % 3 == 1 ?
					   i * PAGE_SIZE : i << 20);

		KUNIT_EXPECT_PTR_EQ(test, uprobe_bp_lookup(mm, va), u[i % 3]);
	}
	KUNIT_EXPECT_NULL(test, uprobe_bp_lookup(mm, base + 1));
	srcu_read_unlock(&uprobes_srcu, idx);
	mutex_unlock(&t->ht.mutex);
}

/*
 * Addresses that collide in any hash: neighbouring bytes, one page apart,
 * far apart.  The table's growth to thousands keeps every entry.
 */
static void table_finds_every_entry_through_growth(struct kunit *test)
{
	struct uprobe_bp_table *t = new_table(test);
	struct uprobe *u[3];
	unsigned long i, base = 0x400000;

	for (i = 0; i < 3; i++)
		u[i] = table_uprobe(test, i);
	for (i = 0; i < 3000; i++) {
		unsigned long va = base + (i % 3 == 0 ? i : i % 3 == 1 ?
					   i * PAGE_SIZE : i << 20);

		KUNIT_ASSERT_EQ(test, uprobe_bpt_add(t, va, u[i % 3]), 0);
	}
	KUNIT_EXPECT_EQ(test, t->live, 3000U);
	KUNIT_EXPECT_EQ(test, refcount_read(&u[0]->ref), 1 + 1000);
	for (i = 0; i < 3000; i++) {
		unsigned long va = base + (i % 3 == 0 ? i : i % 3 == 1 ?
					   i * PAGE_SIZE : i << 20);

		KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, va), u[i % 3]);
	}
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, base + 1));
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, base - 1));
	table_hit_lookup_agrees(test, t, base, 3000, u);
	uprobe_bpt_free(t);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, refcount_read(&u[i]->ref), 1);
}

/* add refuses a taken address, set replaces it, erase keeps the rest. */
static void table_add_set_erase(struct kunit *test)
{
	struct uprobe_bp_table *t = new_table(test);
	struct uprobe *a = table_uprobe(test, 1), *b = table_uprobe(test, 2);
	unsigned long va;

	for (va = 0x1000; va < 0x1000 + 64; va++)
		KUNIT_ASSERT_EQ(test, uprobe_bpt_add(t, va, a), 0);
	KUNIT_EXPECT_EQ(test, uprobe_bpt_add(t, 0x1010, b), -EEXIST);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x1010), a);
	KUNIT_EXPECT_EQ(test, uprobe_bpt_set(t, 0x1010, b), 0);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x1010), b);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + 63);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 1 + 1);

	/* Every other one out: the rest still found. */
	for (va = 0x1000; va < 0x1000 + 64; va += 2)
		uprobe_bpt_erase(t, va);
	uprobe_bpt_erase(t, 0x9999);	/* absent: nothing happens */
	for (va = 0x1000; va < 0x1000 + 64; va++)
		KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, va),
				    va & 1 ? a : NULL);
	KUNIT_EXPECT_EQ(test, t->live, 32U);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + 32);
	/* Erased addresses are added again, without duplicates. */
	for (va = 0x1000; va < 0x1000 + 64; va++)
		uprobe_bpt_add(t, va, b);
	KUNIT_EXPECT_EQ(test, t->live, 64U);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x1001), a);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x1002), b);
	uprobe_bpt_free(t);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 1);
}

/* A batch's locked writes: claim once, replace a stale owner, release. */
static void table_claim_and_release(struct kunit *test)
{
	struct uprobe_bp_table *t = new_table(test);
	struct uprobe *a = table_uprobe(test, 1), *b = table_uprobe(test, 2);
	unsigned long va, n;
	int ret;

	uprobe_bpt_lock(t);
	/* No entry in the pool: the caller must make room outside the lock. */
	KUNIT_EXPECT_EQ(test, uprobe_bpt_claim_locked(t, 0x1000, a), -ENOSPC);
	uprobe_bpt_unlock(t);
	KUNIT_ASSERT_EQ(test, uprobe_bpt_prepare(t, 40), 0);

	uprobe_bpt_lock(t);
	/* Room for the 40 asked at least, then a refusal, never an allocation. */
	for (va = 0x1000; (ret = uprobe_bpt_claim_locked(t, va, a)) == 0; va++)
		;
	n = va - 0x1000;
	KUNIT_EXPECT_EQ(test, ret, -ENOSPC);
	KUNIT_EXPECT_GE(test, n, 40UL);
	KUNIT_EXPECT_EQ(test, t->live, n);
	/* Already there: nothing changes, no reference taken. */
	KUNIT_EXPECT_EQ(test, uprobe_bpt_claim_locked(t, 0x1000, a), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + n);
	/* Another probe's entry is replaced, its reference dropped. */
	KUNIT_EXPECT_EQ(test, uprobe_bpt_claim_locked(t, 0x1001, b), 2);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + n - 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 1 + 1);

	/* b is live: a's walk must leave b's entry. */
	KUNIT_EXPECT_FALSE(test, uprobe_bpt_release_locked(t, 0x1001, a));
	KUNIT_EXPECT_TRUE(test, uprobe_bpt_release_locked(t, 0x1002, a));
	KUNIT_EXPECT_TRUE(test, uprobe_bpt_release_locked(t, 0x9999, a));
	/* A retired owner's entry goes with whoever walks there. */
	set_bit(UPROBE_F_DEAD, &b->flags);
	KUNIT_EXPECT_TRUE(test, uprobe_bpt_release_locked(t, 0x1001, a));
	uprobe_bpt_unlock(t);

	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x1001));
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x1002));
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x1003), a);
	KUNIT_EXPECT_EQ(test, t->live, n - 2);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + n - 2);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 1);
	uprobe_bpt_free(t);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1);
}

/* What munmap relies on: [start, end) goes, both neighbours stay. */
static void table_erase_range_is_half_open(struct kunit *test)
{
	struct uprobe_bp_table *t = new_table(test);
	struct uprobe *a = table_uprobe(test, 1);
	unsigned long va;

	for (va = 0x10000; va < 0x10000 + 8 * PAGE_SIZE; va += PAGE_SIZE / 4)
		KUNIT_ASSERT_EQ(test, uprobe_bpt_add(t, va, a), 0);
	KUNIT_ASSERT_EQ(test, uprobe_bpt_add(t, 0x12fff, a), 0);
	uprobe_bpt_erase_range(t, 0x12000, 0x14000);
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x12400));
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x11c00), a);
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x12000));
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x12fff));
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(t, 0x13c00));
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x14000), a);
	KUNIT_EXPECT_EQ(test, t->live, 32U - 8);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + 24);
	uprobe_bpt_free(t);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1);
}

/*
 * The bucket is the hash's low bits: addresses that differ only in high
 * bits (mappings a page, 4 MiB, 2 TiB apart; 64 MiB on 32-bit) must
 * spread, for each of three seeds, or a process could pile its
 * breakpoints into one chain.
 */
static void table_hash_spreads_high_bits(struct kunit *test)
{
	static const unsigned int shifts[] = {
		PAGE_SHIFT, 22, BITS_PER_LONG == 64 ? 41 : 26,
	};
	DECLARE_BITMAP(seen, 64);
	unsigned int s, seed, i;

	for (s = 0; s < ARRAY_SIZE(shifts); s++) {
		for (seed = 0; seed < 3; seed++) {
			bitmap_zero(seen, 64);
			for (i = 0; i < 64; i++) {
				unsigned long va = 0x1234UL +
					((unsigned long)i << shifts[s]);

				__set_bit(uprobe_bpt_hash(&va, sizeof(va),
							  seed * 0x9e3779b9) & 63,
					  seen);
			}
			KUNIT_EXPECT_GE_MSG(test, bitmap_weight(seen, 64), 32U,
					    "shift %u seed %u", shifts[s], seed);
		}
	}
}

static bool keep_below_0x5000(unsigned long vaddr, void *arg)
{
	return vaddr < 0x5000;
}

/* Fork: the child's table has what the filter keeps, with references. */
static void table_dup_copies_what_is_kept(struct kunit *test)
{
	struct uprobe_bp_table *t = new_table(test), *c = new_table(test);
	struct uprobe *a = table_uprobe(test, 1);
	unsigned long va;

	for (va = 0x1000; va < 0x9000; va += 0x100)
		KUNIT_ASSERT_EQ(test, uprobe_bpt_add(t, va, a), 0);
	uprobe_bpt_erase(t, 0x1100);
	uprobe_bpt_dup(c, t, keep_below_0x5000, NULL);
	KUNIT_EXPECT_EQ(test, c->live, 0x40U - 1);
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(c, 0x4f00), a);
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(c, 0x1100));
	KUNIT_EXPECT_NULL(test, uprobe_bpt_lookup(c, 0x5000));
	KUNIT_EXPECT_PTR_EQ(test, uprobe_bpt_lookup(t, 0x5000), a);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1 + 0x80 - 1 + 0x40 - 1);
	uprobe_bpt_free(c);
	uprobe_bpt_free(t);
	KUNIT_EXPECT_EQ(test, refcount_read(&a->ref), 1);
}

static struct kunit_case uprobes_core_cases[] = {
	KUNIT_CASE(key_order_is_inode_then_offset),
	KUNIT_CASE(insert_refuses_duplicate_key),
	KUNIT_CASE(range_walk_stays_in_file_and_range),
	KUNIT_CASE(slots_are_taken_lowest_first_until_full),
	KUNIT_CASE(plain_return_pops_only_its_frame),
	KUNIT_CASE(longjmp_past_frames_drops_them),
	KUNIT_CASE(tail_call_chain_returns_together),
	KUNIT_CASE(return_matching_no_frame_pops_nothing),
	KUNIT_CASE(returns_of_cached_probes_take_no_reference),
	KUNIT_CASE(cached_dead_probe_reference_goes_at_next_hit),
	KUNIT_CASE(full_return_cache_gives_way_least_recent_first),
	KUNIT_CASE(return_cache_miss_prefers_a_dead_probe_s_instance),
	KUNIT_CASE(table_finds_every_entry_through_growth),
	KUNIT_CASE(table_add_set_erase),
	KUNIT_CASE(table_claim_and_release),
	KUNIT_CASE(table_erase_range_is_half_open),
	KUNIT_CASE(table_hash_spreads_high_bits),
	KUNIT_CASE(table_dup_copies_what_is_kept),
	{}
};

static struct kunit_suite uprobes_core_suite = {
	.name = "uprobes_core",
	.test_cases = uprobes_core_cases,
};

kunit_test_suite(uprobes_core_suite);

MODULE_LICENSE("GPL");
