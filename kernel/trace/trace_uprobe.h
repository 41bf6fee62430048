/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uprobe-based trace events: what their files share: the definitions
 * (trace_uprobe.c), enabling (trace_uprobe_enable.c), a hit
 * (trace_uprobe_hit.c) and the perf/BPF side (trace_uprobe_perf.c).
 *
 * A trace_uprobe is one probe point, a (file, offset) pair, attached to a
 * trace event.  Several probe points may feed one event; they then share
 * the event's trace_probe_event, its flags and its perf filter.  Each
 * probe point owns one uprobe_consumer, registered with the uprobes core
 * while anybody (a tracefs instance, a perf event, a BPF program through a
 * perf event) has the event enabled.
 */
#ifndef _TRACE_UPROBE_H
#define _TRACE_UPROBE_H

#include <linux/path.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/uprobes.h>
#include <linux/workqueue.h>

#include "trace_dynevent.h"
#include "trace_probe.h"

#define UPROBE_EVENT_SYSTEM	"uprobes"

struct trace_uprobe {
	struct dyn_event		devent;
	/* In the indexes by event name and by place: see trace_uprobe.c. */
	struct hlist_node		name_node;
	struct hlist_node		place_node;
	struct uprobe_consumer		consumer;
	/* Pins the probed file's inode for as long as the probe exists. */
	struct path			path;
	/*
	 * The inode the probe is registered on, resolved once: on overlayfs
	 * d_real_inode() of the path turns from the lower file to the upper
	 * one at a copy-up, and unregistering must find the same probe.
	 */
	struct inode			*inode;
	char				*filename;
	unsigned long			offset;
	unsigned long			ref_ctr_offset;
	unsigned long __percpu		*nhit;
	/* The consumer is registered with the core: set under event_mutex. */
	bool				registered;
	/* Registered ahead of its enable by a batch (trace_uprobe.c). */
	bool				batch_wants;
	struct list_head		batch_node;
	bool				is_return;
	/* The instruction passed uprobe_analyze_unmapped() once. */
	bool				insn_checked;
	/* Hits may write the record into the ring buffer directly. */
	bool				record_in_place;
	/* A perf-made probe is freed after the handlers: see trace_uprobe.c */
	union {
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

/* The fixed head of an entry probe's record (the format file's fields). */
struct uprobe_entry_head {
	struct trace_entry	ent;
	unsigned long		ip;
};

/* The fixed head of a return probe's record. */
struct uretprobe_entry_head {
	struct trace_entry	ent;
	unsigned long		func;
	unsigned long		ret_ip;
};

static inline struct trace_uprobe *to_trace_uprobe(struct dyn_event *ev)
{
	return container_of(ev, struct trace_uprobe, devent);
}

static inline struct inode *trace_uprobe_inode(struct trace_uprobe *tu)
{
	return tu->inode;
}

static inline struct trace_uprobe_filter *
trace_uprobe_filter(struct trace_uprobe *tu)
{
	return tu->tp.event->filter;
}

bool is_trace_uprobe(struct dyn_event *ev);
struct trace_uprobe *trace_uprobe_primary_from_call(struct trace_event_call *call);
struct trace_uprobe *trace_uprobe_find(const char *event, const char *group);
struct trace_uprobe *trace_uprobe_alloc(const char *group, const char *event,
					int nargs, bool is_return);
void trace_uprobe_free(struct trace_uprobe *tu);
void trace_uprobe_free_later(struct trace_uprobe *tu);
int trace_uprobe_lookup_file(struct trace_uprobe *tu, const char *filename);
void trace_uprobe_init_event_call(struct trace_uprobe *tu);

/* The probe points of the event @tp belongs to, @tp included. */
#define for_each_sibling(pos, probe)	\
	list_for_each_entry(pos, trace_probe_probe_list(probe), tp.list)

/* Enabling and disabling (trace_uprobe_enable.c). */
int trace_uprobe_register_consumer(struct trace_uprobe *tu);
void trace_uprobe_unregister_consumer(struct trace_uprobe *tu);
int trace_uprobe_apply_all(struct trace_probe *tp, bool add);
bool trace_uprobe_consumer_filter(struct uprobe_consumer *uc,
				  enum uprobe_filter_ctx ctx, struct mm_struct *mm);
int trace_uprobe_register(struct trace_event_call *event,
			  enum trace_reg type, void *data);

/* A hit (trace_uprobe_hit.c). */
bool trace_uprobe_record_in_place(struct trace_probe *tp);
int trace_uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs);
int trace_uretprobe_dispatcher(struct uprobe_consumer *uc,
			       unsigned long func, struct pt_regs *regs);
enum print_line_t trace_uprobe_print_event(struct trace_iterator *iter,
					   int flags, struct trace_event *event);

/* The perf and BPF side (trace_uprobe_perf.c). */

/* A per-task perf event on a filter's list. */
struct perf_follower {
	struct list_head	node;
	struct perf_event	*event;
	/* Readers dereference it after perf has let the task go. */
	struct task_struct	*task;
	struct rcu_head		rcu;
};

/**
 * trace_uprobe_perf_wants - whether any perf event wants hits in a process
 * @filter: the event's filter
 * @mm: the process's mm
 *
 * Inline: every hit of an event perf uses asks it.
 *
 * Context: any.
 * Return: true when a system-wide perf event is open, or a per-task one
 * follows a task of @mm.
 */
static __always_inline bool
trace_uprobe_perf_wants(struct trace_uprobe_filter *filter, struct mm_struct *mm)
{
	struct perf_follower *f;
	bool ret = false;

	if (READ_ONCE(filter->nr_systemwide))
		return true;

	/* No lock: see trace_uprobe_perf.c. */
	rcu_read_lock();
	list_for_each_entry_rcu(f, &filter->perf_events, node) {
		if (READ_ONCE(f->task->mm) == mm) {
			ret = true;
			break;
		}
	}
	rcu_read_unlock();

	return ret;
}

void trace_uprobe_filter_init(struct trace_uprobe_filter *filter);
int trace_uprobe_perf_open(struct trace_event_call *call,
			   struct perf_event *event);
int trace_uprobe_perf_close(struct trace_event_call *call,
			    struct perf_event *event);
bool trace_uprobe_perf_bpf(struct trace_event_call *call, struct pt_regs *regs);

/*
 * Run the BPF programs attached to @tu's event, if any: false when one
 * asked to drop the hit for perf.  Inline, since most hits have none.
 */
static inline bool trace_uprobe_perf_run_bpf(struct trace_uprobe *tu,
					     struct pt_regs *regs)
{
#ifdef CONFIG_BPF_EVENTS
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	if (bpf_prog_array_valid(call))
		return trace_uprobe_perf_bpf(call, regs);
#endif
	return true;
}

/* A record of @size bytes as perf passes it: u64 aligned with its u32 size. */
static inline int trace_uprobe_perf_size(int size)
{
	return ALIGN(size + sizeof(u32), sizeof(u64)) - sizeof(u32);
}

/**
 * trace_uprobe_perf_output - hand a hit's record to the perf events
 * @tu: the probe point hit
 * @regs: the user registers at the hit, for the samples
 * @rec: the record; perf_tp_event() fills in its trace_entry head (over
 *	what tracefs may have put there); its buffer has room for perf's
 *	padding (see trace_uprobe_perf_size()), already zeroed
 *
 * The record is handed over where it is: perf reads it only while
 * perf_tp_event() runs, so it need not be copied into perf's per-CPU
 * buffer first.
 *
 * Inline: it is on the path of every hit perf counts.
 *
 * Context: the probed task; disables preemption for perf's lists.
 */
static __always_inline void
trace_uprobe_perf_output(struct trace_uprobe *tu, struct pt_regs *regs,
			 struct uprobe_record *rec)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int size = trace_uprobe_perf_size(rec->size);
	struct hlist_head __percpu *heads;
	struct hlist_head *head;
	int rctx;

	/*
	 * Perf frees the lists after unregistering and a grace period:
	 * seeing the flag set with preemption off keeps them here.
	 */
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
	perf_tp_event(call->event.type, 1, rec->data, size, regs, head, rctx,
		      NULL);
out:
	preempt_enable();
}

#endif /* _TRACE_UPROBE_H */
