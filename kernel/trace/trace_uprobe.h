/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe-based trace events.  A trace_uprobe is one probe point (file,
 * offset); the points of an event share its trace_probe_event and filter.
 */
#ifndef _TRACE_UPROBE_H
#define _TRACE_UPROBE_H

#include <linux/path.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/uprobes.h>
#include <linux/workqueue.h>

#include "trace_dynevent.h"
#include "trace_probe.h"

#define UPROBE_EVENT_SYSTEM	"uprobes"

struct trace_uprobe {
	struct dyn_event		devent;
	struct hlist_node		name_node;	/* index by event name */
	struct hlist_node		place_node;	/* index by place */
	struct uprobe_consumer		consumer;
	struct path			path;		/* pins the file */
	/* As registered: d_real_inode(@path) changes at a copy-up. */
	struct inode			*inode;
	char				*filename;
	unsigned long			offset;
	unsigned long			ref_ctr_offset;
	unsigned long __percpu		*nhit;
	bool				registered;	/* under event_mutex */
	bool				batch_wants;	/* see trace_uprobe_batch_begin() */
	struct list_head		batch_node;
	bool				is_return;
	bool				insn_checked;
	bool				record_in_place;
	/* Its memory: ours, and one per hit finished later (trace_uprobe_hit.c). */
	refcount_t			ref;
	bool				dead;	/* no late hit may write */
	union {					/* a perf-made probe's free */
		struct rcu_head		free_rcu;
		struct work_struct	free_work;
	};
	struct trace_probe		tp;	/* last: tp.args[] follows */
};

/* The record of one hit, built once and copied to every reader. */
struct uprobe_record {
	void		*data;		/* starts with a struct trace_entry */
	int		size;
};

/* The fixed heads of an entry and a return probe's record. */
struct uprobe_entry_head {
	struct trace_entry	ent;
	unsigned long		ip;
};

struct uretprobe_entry_head {
	struct trace_entry	ent;
	unsigned long		func;
	unsigned long		ret_ip;
};

static inline struct trace_uprobe *to_trace_uprobe(struct dyn_event *ev)
{
	return container_of(ev, struct trace_uprobe, devent);
}

static inline struct trace_uprobe_filter *trace_uprobe_filter(struct trace_uprobe *tu)
{
	return tu->tp.event->filter;
}

bool is_trace_uprobe(struct dyn_event *ev);
struct trace_uprobe *trace_uprobe_primary_from_call(struct trace_event_call *call);
struct trace_uprobe *trace_uprobe_alloc(const char *group, const char *event,
					int nargs, bool is_return);
void trace_uprobe_free(struct trace_uprobe *tu);
void trace_uprobe_free_later(struct trace_uprobe *tu);
void trace_uprobe_put(struct trace_uprobe *tu);

/* The probe points of the event @probe belongs to, @probe included. */
#define for_each_sibling(pos, probe)	\
	list_for_each_entry(pos, trace_probe_probe_list(probe), tp.list)

/* trace_uprobe_enable.c */
int trace_uprobe_register_consumer(struct trace_uprobe *tu);
void trace_uprobe_unregister_consumer(struct trace_uprobe *tu, bool wait);
int trace_uprobe_apply_all(struct trace_probe *tp, bool add);
bool trace_uprobe_consumer_filter(struct uprobe_consumer *uc,
				  enum uprobe_filter_ctx ctx, struct mm_struct *mm);
int trace_uprobe_register(struct trace_event_call *event,
			  enum trace_reg type, void *data);

/* trace_uprobe_hit.c */
bool trace_uprobe_record_in_place(struct trace_probe *tp);
int trace_uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs);
int trace_uretprobe_dispatcher(struct uprobe_consumer *uc,
			       unsigned long func, struct pt_regs *regs);
void trace_uprobe_init_event_call(struct trace_uprobe *tu);

/* trace_uprobe_perf.c: a per-task perf event on a filter's list. */
struct perf_follower {
	struct list_head	node;
	struct perf_event	*event;
	struct rcu_head		rcu;
};

/*
 * The mm of the task a per-task @event counts for now: the task whose
 * perf context holds it.  Perf swaps the contexts of inherited events
 * between the tasks it cloned them for, and a context whose task exited
 * holds an error pointer (TASK_TOMBSTONE): no mm.  Before the event has
 * a context (at its open), its target's.  A swap writes the two contexts'
 * tasks one after the other: a reader in between may see one task for
 * both, which only keeps a breakpoint one hit longer.
 * Context: RCU (a task read from a context is freed only after a grace
 * period); the event and its context live until our close.
 */
static __always_inline struct mm_struct *trace_uprobe_event_mm(struct perf_event *event)
{
	struct perf_event_context *ctx = READ_ONCE(event->ctx);
	struct task_struct *task = ctx ? READ_ONCE(ctx->task) : event->hw.target;

	return IS_ERR_OR_NULL(task) ? NULL : READ_ONCE(task->mm);
}

/* Whether a perf event is system wide or follows a task of @mm. */
static __always_inline bool
trace_uprobe_perf_wants(struct trace_uprobe_filter *filter, struct mm_struct *mm)
{
	struct perf_follower *f;
	bool ret = false;

	if (READ_ONCE(filter->nr_systemwide))
		return true;

	rcu_read_lock();
	list_for_each_entry_rcu(f, &filter->perf_events, node) {
		if (trace_uprobe_event_mm(f->event) == mm) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock();

	return ret;
}

int trace_uprobe_perf_open(struct trace_event_call *call, struct perf_event *event);
int trace_uprobe_perf_close(struct trace_event_call *call, struct perf_event *event);
bool trace_uprobe_perf_bpf(struct trace_event_call *call, struct pt_regs *regs);

/* A record of @size bytes as perf passes it: u64 aligned with its u32 size. */
static inline int trace_uprobe_perf_size(int size)
{
	return ALIGN(size + sizeof(u32), sizeof(u64)) - sizeof(u32);
}

/* Hand @rec to perf as it is, its buffer zeroed to trace_uprobe_perf_size(). */
static __always_inline void
trace_uprobe_perf_output(struct trace_uprobe *tu, struct pt_regs *regs,
			 struct uprobe_record *rec)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int size = trace_uprobe_perf_size(rec->size);
	struct hlist_head __percpu *heads;
	struct hlist_head *head;
	int rctx;

	/* Perf frees its lists a grace period after clearing the flag. */
	preempt_disable();
	if (!(trace_probe_load_flag(&tu->tp) & TP_FLAG_PROFILE))
		goto out;
	heads = READ_ONCE(call->perf_events);
	if (!heads)
		goto out;
	head = this_cpu_ptr(heads);
	if (hlist_empty(head))
		goto out;

	rctx = perf_swevent_get_recursion_context();
	if (rctx < 0)
		goto out;
	perf_tp_event(call->event.type, 1, rec->data, size, regs, head, rctx, NULL);
out:
	preempt_enable();
}

#endif /* _TRACE_UPROBE_H */
