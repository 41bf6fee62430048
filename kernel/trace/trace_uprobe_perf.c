// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: perf, on a tracefs event or a probe of its own
 * (the "uprobe" PMU), and BPF through perf.
 *
 * The filter counts system-wide perf events and lists per-task ones, each
 * standing for the mm of the task it counts for (trace_uprobe_event_mm());
 * the breakpoints follow (a stray one goes at its first hit).
 * filter->rwlock serialises writers.  Readers walk the list under RCU: an
 * entry is freed a grace period after its unlinking, and perf frees the
 * event and its context only after our close.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/namei.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/trace_events.h>

#include "trace_uprobe.h"

static bool is_systemwide(struct perf_event *event)
{
	return !event->hw.target;
}

/* Whether the other perf events want @event's breakpoints (or it has no mm). */
static bool covered_by_others(struct trace_uprobe_filter *filter,
			      struct perf_event *event)
{
	struct perf_follower *f;
	struct mm_struct *mm;
	bool covered;

	lockdep_assert_held(&filter->rwlock);

	if (filter->nr_systemwide)
		return true;
	if (is_systemwide(event))
		return false;

	rcu_read_lock();
	mm = trace_uprobe_event_mm(event);
	covered = !mm;
	list_for_each_entry(f, &filter->perf_events, node) {
		if (covered)
			break;
		covered = f->event != event && trace_uprobe_event_mm(f->event) == mm;
	}
	rcu_read_unlock();
	return covered;
}

static struct perf_follower *find_follower(struct trace_uprobe_filter *filter,
					   struct perf_event *event)
{
	struct perf_follower *f;

	lockdep_assert_held(&filter->rwlock);
	list_for_each_entry(f, &filter->perf_events, node) {
		if (f->event == event)
			return f;
	}
	return NULL;
}

/**
 * trace_uprobe_perf_open - a perf event starts using a uprobe event
 * @call: the uprobe event
 * @event: the perf event
 *
 * Adds @event to the filter and installs the breakpoints it wants.
 *
 * Context: event_mutex held.
 * Return: 0, or the error of uprobe_apply() and @event is not added.
 */
int trace_uprobe_perf_open(struct trace_event_call *call,
			   struct perf_event *event)
{
	struct trace_uprobe *tu = trace_uprobe_primary_from_call(call);
	struct trace_uprobe_filter *filter;
	struct perf_follower *f = NULL;
	bool widens;
	int ret;

	lockdep_assert_held(&event_mutex);
	if (!tu)
		return -ENODEV;
	filter = trace_uprobe_filter(tu);

	if (!is_systemwide(event)) {
		f = kmalloc(sizeof(*f), GFP_KERNEL);
		if (!f)
			return -ENOMEM;
		f->event = event;
	}

	write_lock(&filter->rwlock);
	widens = !covered_by_others(filter, event);
	if (f)
		list_add_rcu(&f->node, &filter->perf_events);
	else
		WRITE_ONCE(filter->nr_systemwide, filter->nr_systemwide + 1);
	write_unlock(&filter->rwlock);

	if (!widens || trace_probe_test_flag(&tu->tp, TP_FLAG_TRACE))
		return 0;

	ret = trace_uprobe_apply_all(&tu->tp, true);
	if (ret)
		trace_uprobe_perf_close(call, event);
	return ret;
}

/**
 * trace_uprobe_perf_close - a perf event stops using a uprobe event
 * @call: the uprobe event
 * @event: the perf event
 *
 * Removes @event from the filter and the breakpoints nobody wants now.
 *
 * Context: event_mutex held.
 * Return: 0 or the error of uprobe_apply().
 */
int trace_uprobe_perf_close(struct trace_event_call *call,
			    struct perf_event *event)
{
	struct trace_uprobe *tu = trace_uprobe_primary_from_call(call);
	struct trace_uprobe_filter *filter;
	struct perf_follower *f = NULL;
	bool narrows;

	lockdep_assert_held(&event_mutex);
	if (!tu)
		return -ENODEV;
	filter = trace_uprobe_filter(tu);

	write_lock(&filter->rwlock);
	if (is_systemwide(event)) {
		WRITE_ONCE(filter->nr_systemwide, filter->nr_systemwide - 1);
	} else {
		f = find_follower(filter, event);
		if (!WARN_ON_ONCE(!f))
			list_del_rcu(&f->node);
	}
	narrows = !covered_by_others(filter, event);
	write_unlock(&filter->rwlock);
	if (f)
		kfree_rcu(f, rcu);

	if (!narrows || trace_probe_test_flag(&tu->tp, TP_FLAG_TRACE))
		return 0;

	return trace_uprobe_apply_all(&tu->tp, false);
}

/**
 * trace_uprobe_perf_bpf - run the BPF programs attached to an event
 * @call: the event, with programs attached
 * @regs: the user registers at the hit
 *
 * Context: the probed task, may sleep (sleepable programs).
 * Return: false when a program dropped the hit for perf.
 */
bool trace_uprobe_perf_bpf(struct trace_event_call *call, struct pt_regs *regs)
{
#ifdef CONFIG_BPF_EVENTS
	return bpf_prog_run_array_sleepable(call->prog_array, regs, bpf_prog_run);
#else
	return true;
#endif
}

/* Resolve and pin @filename: 0, a lookup error, -EINVAL or -ENOMEM. */
static int lookup_file(struct trace_uprobe *tu, const char *filename)
{
	struct path path;
	int ret;

	ret = kern_path(filename, LOOKUP_FOLLOW, &path);
	if (ret)
		return ret;

	if (!d_is_reg(path.dentry)) {
		path_put(&path);
		return -EINVAL;
	}

	tu->filename = kstrdup(filename, GFP_KERNEL);
	if (!tu->filename) {
		path_put(&path);
		return -ENOMEM;
	}
	tu->path = path;
	tu->inode = d_real_inode(path.dentry);

	return 0;
}

/**
 * create_local_trace_uprobe - make a probe for the perf uprobe PMU
 * @name: the path of the probed file
 * @offs: the probe's offset in the file
 * @ref_ctr_offset: the offset of its SDT semaphore in the file, or 0
 * @is_return: whether this is a return probe
 *
 * Context: may sleep.
 * Return: the event, or an ERR_PTR(): a lookup error such as -ENOENT,
 * -EINVAL for a file that is not regular, -ENOMEM.
 */
struct trace_event_call *
create_local_trace_uprobe(char *name, unsigned long offs,
			  unsigned long ref_ctr_offset, bool is_return)
{
	struct trace_uprobe *tu;
	int ret;

	tu = trace_uprobe_alloc(UPROBE_EVENT_SYSTEM, "DUMMY_EVENT", 0, is_return);
	if (IS_ERR(tu))
		return ERR_CAST(tu);

	ret = lookup_file(tu, name);
	if (ret)
		goto error;
	tu->offset = offs;
	tu->ref_ctr_offset = ref_ctr_offset;

	tu->record_in_place = trace_uprobe_record_in_place(&tu->tp);
	trace_uprobe_init_event_call(tu);
	ret = traceprobe_set_print_fmt(&tu->tp, is_return ?
				       PROBE_PRINT_RETURN : PROBE_PRINT_NORMAL);
	if (ret < 0)
		goto error;

	return trace_probe_event_call(&tu->tp);

error:
	trace_uprobe_free(tu);
	return ERR_PTR(ret);
}

/**
 * destroy_local_trace_uprobe - free a probe made for the perf uprobe PMU
 * @event_call: what create_local_trace_uprobe() returned
 *
 * Context: perf has unregistered the event.
 */
void destroy_local_trace_uprobe(struct trace_event_call *event_call)
{
	struct trace_uprobe *tu = trace_uprobe_primary_from_call(event_call);

	if (!tu || WARN_ON(trace_probe_is_enabled(&tu->tp)))
		return;

	trace_uprobe_free_later(tu);
}

/**
 * bpf_get_uprobe_info - describe the uprobe behind a perf event, for BPF
 * @event: the perf event
 * @fd_type: set to BPF_FD_TYPE_UPROBE or BPF_FD_TYPE_URETPROBE
 * @filename: set to the probed file's path, as given
 * @probe_offset: set to the probe's offset in the file
 * @probe_addr: set to 0
 * @perf_type_tracepoint: unused: the first probe point answers either way
 *
 * Return: 0, or -EINVAL when the event has no probe point.
 */
int bpf_get_uprobe_info(const struct perf_event *event, u32 *fd_type,
			const char **filename, u64 *probe_offset,
			u64 *probe_addr, bool perf_type_tracepoint)
{
	struct trace_uprobe *tu = trace_uprobe_primary_from_call(event->tp_event);

	if (!tu)
		return -EINVAL;

	*fd_type = tu->is_return ? BPF_FD_TYPE_URETPROBE : BPF_FD_TYPE_UPROBE;
	*filename = tu->filename;
	*probe_offset = tu->offset;
	*probe_addr = 0;
	return 0;
}
