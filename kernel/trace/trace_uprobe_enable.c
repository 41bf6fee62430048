// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: enabling and disabling them, that is
 * registering their probe points' consumers with the uprobes core.
 *
 * An event is enabled by any mix of tracefs instances (TP_FLAG_TRACE, set
 * while at least one instance's file is linked), and perf events or BPF
 * programs (TP_FLAG_PROFILE, set while perf has the event registered).
 * The first of them registers each probe point's uprobe_consumer with the
 * uprobes core, the last one unregisters it.  Which processes get a
 * breakpoint is the consumer's filter: all of them while a tracefs
 * instance traces the event, otherwise only those the perf events select
 * (trace_uprobe_perf_wants()).  Whenever that set grows or shrinks while
 * the consumers stay registered, uprobe_apply() brings the breakpoints in
 * line with it.  Locking: see trace_uprobe.c.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/uprobes.h>

#include "trace_uprobe.h"

/*
 * Batches.  Writing a system's "enable" file (or set_event) enables or
 * disables its events one after another under event_mutex, and each
 * registration with the core would walk every mm mapping the probed file.
 * trace_events.c brackets that loop with trace_uprobe_batch_begin() and
 * trace_uprobe_batch_end().  Enabling, the consumers of the uprobe events
 * the loop may enable are registered beforehand in one
 * uprobe_register_batch(), each event's enable then finds its consumer
 * registered (or, where the batch failed, registers it alone and gets the
 * error itself), and the end unregisters those the loop did not enable.
 * Disabling, the loop queues the unregistrations on batch_list and the end
 * does them in one uprobe_unregister_batch_nosync().  Both under
 * event_mutex.
 */
enum trace_uprobe_batch { BATCH_NONE, BATCH_ENABLE, BATCH_DISABLE };
static enum trace_uprobe_batch batch;
static LIST_HEAD(batch_list);

int trace_uprobe_register_consumer(struct trace_uprobe *tu)
{
	struct inode *inode = trace_uprobe_inode(tu);
	int ret;

	if (tu->registered)
		return 0;

	if (tu->ref_ctr_offset)
		ret = uprobe_register_refctr(inode, tu->offset,
					     tu->ref_ctr_offset, &tu->consumer);
	else
		ret = uprobe_register(inode, tu->offset, &tu->consumer);
	if (!ret)
		tu->registered = true;

	return ret;
}

/*
 * Without @wait, a handler of @tu may still run after this returns: see
 * unregister_all_consumers() for who may do that.
 */
static void __trace_uprobe_unregister_consumer(struct trace_uprobe *tu,
					       bool wait)
{
	if (!tu->registered)
		return;

	if (!wait && batch == BATCH_DISABLE) {
		/* Done in one go by trace_uprobe_batch_end(). */
		if (list_empty(&tu->batch_node))
			list_add_tail(&tu->batch_node, &batch_list);
		return;
	}
	if (wait)
		uprobe_unregister(trace_uprobe_inode(tu), tu->offset,
				  &tu->consumer);
	else
		uprobe_unregister_nosync(trace_uprobe_inode(tu), tu->offset,
					 &tu->consumer);
	tu->registered = false;
}

void trace_uprobe_unregister_consumer(struct trace_uprobe *tu)
{
	__trace_uprobe_unregister_consumer(tu, true);
}

/* Not "* const": tracing_log_err() takes a const char **. */
static const char *trace_uprobe_enable_errs[] = {
	"This instruction cannot be probed",
};

/*
 * An instruction the core refuses, in a file no process mapped when the
 * event was enabled: the enable fails, and error_log says where, as for
 * a definition refused.
 */
static int trace_uprobe_check_insn(struct trace_uprobe *tu)
{
	const char *grp = trace_probe_group_name(&tu->tp);
	const char *ev = trace_probe_name(&tu->tp);
	char *cmd;
	int ret;

	if (tu->insn_checked)
		return 0;
	ret = uprobe_analyze_unmapped(&tu->path, tu->offset);
	if (!ret) {
		tu->insn_checked = true;
		return 0;
	}
	cmd = kasprintf(GFP_KERNEL, "%c:%s/%s %s:0x%lx",
			tu->is_return ? 'r' : 'p', grp, ev, tu->filename,
			tu->offset);
	if (cmd) {
		/* The caret under the offset. */
		tracing_log_err(NULL, "trace_uprobe", cmd,
				trace_uprobe_enable_errs, 0,
				strlen(cmd) - strlen(strrchr(cmd, ':')) + 1);
		kfree(cmd);
	}
	return ret;
}

/*
 * Register every probe point of an event, or none: a partly enabled event
 * would silently miss the hits of the points that failed.
 */
static int register_all_consumers(struct trace_probe *tp)
{
	struct trace_uprobe *tu, *done;
	int ret;

	for_each_sibling(tu, tp) {
		ret = trace_uprobe_register_consumer(tu);
		if (ret)
			goto undo;
	}
	/* Registered, so that a process mapping the file meanwhile counts. */
	for_each_sibling(tu, tp) {
		ret = trace_uprobe_check_insn(tu);
		if (ret) {
			tu = NULL;	/* undo them all */
			goto undo;
		}
	}
	return 0;

undo:
	for_each_sibling(done, tp) {
		if (done == tu)
			break;
		trace_uprobe_unregister_consumer(done);
	}
	return ret;
}

/*
 * Unregister every probe point of an event, without waiting for handlers
 * already running: a group of many events is then disabled without a
 * grace period per event.  Such a late handler touches nothing that is
 * freed before the wait:
 *  - it finds no tracefs link (they are unlinked under RCU, and the trace
 *    buffers they lead to are freed only after an RCU grace period);
 *  - it writes to perf only after seeing TP_FLAG_PROFILE with preemption
 *    off, and perf frees its per-CPU lists and buffers after clearing the
 *    flag (TRACE_REG_PERF_UNREGISTER) and an RCU grace period;
 *  - the trace_uprobe and its event stay until trace_uprobe_release() or
 *    trace_uprobe_free(), which wait for it (uprobe_unregister_sync()),
 *    or trace_uprobe_free_later(), which frees them after it.
 */
static void unregister_all_consumers(struct trace_probe *tp)
{
	struct trace_uprobe *tu;

	for_each_sibling(tu, tp)
		__trace_uprobe_unregister_consumer(tu, false);
}

/* Would __ftrace_set_clr_event_nolock() enable @tu's event? */
static bool batch_matches(struct trace_uprobe *tu, const char *match,
			  const char *sub, const char *event)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	const char *name = trace_event_name(call);
	const char *system = call->class->system;

	if (call->flags & TRACE_EVENT_FL_IGNORE_ENABLE)
		return false;
	if (match && strcmp(match, name) && strcmp(match, system))
		return false;
	if (sub && strcmp(sub, system))
		return false;
	return !event || !strcmp(event, name);
}

static struct uprobe_reg *batch_regs(unsigned int nr)
{
	struct uprobe_reg *regs = kvmalloc_array(nr, sizeof(*regs), GFP_KERNEL);
	struct trace_uprobe *tu;
	unsigned int i = 0;

	if (!regs)
		return NULL;
	list_for_each_entry(tu, &batch_list, batch_node)
		regs[i++] = (struct uprobe_reg){
			.inode = trace_uprobe_inode(tu),
			.offset = tu->offset,
			.ref_ctr_offset = tu->ref_ctr_offset,
			.uc = &tu->consumer,
		};
	return regs;
}

/* Unregister the consumers on batch_list and empty it. */
static void batch_unregister(unsigned int nr)
{
	struct trace_uprobe *tu, *tmp;
	struct uprobe_reg *regs;

	regs = nr > 1 ? batch_regs(nr) : NULL;
	if (regs)
		uprobe_unregister_batch_nosync(regs, nr);
	list_for_each_entry_safe(tu, tmp, &batch_list, batch_node) {
		if (!regs)
			uprobe_unregister_nosync(trace_uprobe_inode(tu),
						 tu->offset, &tu->consumer);
		tu->registered = false;
		list_del_init(&tu->batch_node);
	}
	kvfree(regs);
}

/**
 * trace_uprobe_batch_begin - many events are about to be enabled or disabled
 * @match: as __ftrace_set_clr_event_nolock()'s arguments
 * @sub: ditto
 * @event: ditto
 * @set: 1 to enable, 0 to disable
 *
 * Context: event_mutex held, until the matching trace_uprobe_batch_end().
 */
void trace_uprobe_batch_begin(const char *match, const char *sub,
			      const char *event, int set)
{
	struct trace_uprobe *tu, *tmp;
	struct uprobe_reg *regs;
	struct dyn_event *pos;
	unsigned int nr = 0, i = 0;

	lockdep_assert_held(&event_mutex);
	if (WARN_ON_ONCE(batch != BATCH_NONE))
		return;
	if (!set) {
		batch = BATCH_DISABLE;
		return;
	}

	for_each_dyn_event(pos) {
		if (!is_trace_uprobe(pos))
			continue;
		tu = to_trace_uprobe(pos);
		if (tu->registered || trace_probe_is_enabled(&tu->tp) ||
		    !batch_matches(tu, match, sub, event))
			continue;
		list_add_tail(&tu->batch_node, &batch_list);
		nr++;
	}
	batch = BATCH_ENABLE;
	/* Alone, or without memory for the batch: one at a time. */
	regs = nr > 1 ? batch_regs(nr) : NULL;
	if (!regs) {
		list_for_each_entry_safe(tu, tmp, &batch_list, batch_node)
			list_del_init(&tu->batch_node);
		return;
	}
	/* Until its event is enabled, the filter wants every mm. */
	list_for_each_entry(tu, &batch_list, batch_node)
		WRITE_ONCE(tu->batch_wants, true);
	uprobe_register_batch(regs, nr);
	list_for_each_entry(tu, &batch_list, batch_node)
		tu->registered = !regs[i++].err;
	kvfree(regs);
}

/**
 * trace_uprobe_batch_end - the events of the batch are enabled or disabled
 *
 * Context: event_mutex held.
 */
void trace_uprobe_batch_end(void)
{
	struct trace_uprobe *tu, *tmp;
	unsigned int nr = 0;

	lockdep_assert_held(&event_mutex);
	if (batch == BATCH_ENABLE) {
		/* Keep the consumers whose events the loop enabled. */
		list_for_each_entry_safe(tu, tmp, &batch_list, batch_node) {
			WRITE_ONCE(tu->batch_wants, false);
			if (!tu->registered || trace_probe_is_enabled(&tu->tp))
				list_del_init(&tu->batch_node);
			else
				nr++;
		}
	} else {
		list_for_each_entry(tu, &batch_list, batch_node)
			nr++;
	}
	batch = BATCH_NONE;
	batch_unregister(nr);
}

/**
 * trace_uprobe_apply_all - re-evaluate the filter of every probe point
 * @tp: any probe point of the event
 * @add: true when the filter now selects more processes than before,
 *	 false when it selects fewer
 *
 * Installs the breakpoints the filter now wants, or removes those it no
 * longer wants, in every process that maps the probed files.
 *
 * Context: event_mutex held; the consumers are registered.
 * Return: 0 or the first error of uprobe_apply().
 */
int trace_uprobe_apply_all(struct trace_probe *tp, bool add)
{
	struct trace_uprobe *tu;
	int ret = 0, err;

	lockdep_assert_held(&event_mutex);

	for_each_sibling(tu, tp) {
		if (!tu->registered)
			continue;
		err = uprobe_apply(trace_uprobe_inode(tu), tu->offset,
				   &tu->consumer, add);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/*
 * Enable the event for a tracefs instance (@file) or for perf (@file is
 * NULL).  Tracefs and perf users may be mixed freely: the consumers are
 * registered by the first user, and a tracefs instance joining perf-only
 * users widens the filter to every process.
 */
static int probe_event_enable(struct trace_event_call *call,
			      struct trace_event_file *file)
{
	struct trace_probe *tp;
	bool was_enabled, was_traced;
	int ret;

	lockdep_assert_held(&event_mutex);

	tp = trace_probe_primary_from_call(call);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;

	was_enabled = trace_probe_is_enabled(tp);
	was_traced = trace_probe_test_flag(tp, TP_FLAG_TRACE);

	if (file) {
		if (trace_probe_get_file_link(tp, file))
			return 0;
		ret = trace_probe_add_file(tp, file);
		if (ret)
			return ret;
	} else {
		trace_probe_set_flag(tp, TP_FLAG_PROFILE);
	}

	if (!was_enabled)
		ret = register_all_consumers(tp);
	else if (file && !was_traced)
		ret = trace_uprobe_apply_all(tp, true);
	else
		ret = 0;

	if (ret) {
		if (file)
			trace_probe_remove_file(tp, file);
		else
			trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
		if (was_enabled && file && !was_traced)
			trace_uprobe_apply_all(tp, false);
	}
	return ret;
}

static int probe_event_disable(struct trace_event_call *call,
			       struct trace_event_file *file)
{
	struct trace_probe *tp;
	bool narrowed = false;
	int ret;

	lockdep_assert_held(&event_mutex);

	tp = trace_probe_primary_from_call(call);
	if (WARN_ON_ONCE(!tp))
		return -ENODEV;

	if (file) {
		/* Clears TP_FLAG_TRACE with the last link. */
		ret = trace_probe_remove_file(tp, file);
		if (ret)
			return ret;
		narrowed = !trace_probe_test_flag(tp, TP_FLAG_TRACE);
	} else {
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
	}

	if (!trace_probe_is_enabled(tp))
		unregister_all_consumers(tp);
	else if (narrowed)
		/* Only perf users remain: keep their processes only. */
		trace_uprobe_apply_all(tp, false);

	return 0;
}

/*
 * Whether the breakpoint of @uc belongs in @mm: everywhere while a tracefs
 * instance traces the event, where the perf events want it otherwise.
 */
bool trace_uprobe_consumer_filter(struct uprobe_consumer *uc,
				  enum uprobe_filter_ctx ctx, struct mm_struct *mm)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	unsigned int flags = trace_probe_load_flag(&tu->tp);

	if (flags & TP_FLAG_TRACE)
		return true;
	if (flags & TP_FLAG_PROFILE)
		return trace_uprobe_perf_wants(trace_uprobe_filter(tu), mm);
	/* Registered by a batch ahead of its tracefs enable (never with perf). */
	return READ_ONCE(tu->batch_wants);
}

/*
 * What trace_events.c (tracefs instances) and trace_event_perf.c (perf,
 * and BPF through it) ask of the event, always under event_mutex.  For
 * the tracefs requests @data is the instance's file; perf's registration
 * is for all its events at once, its open and close for one of them.
 */
int trace_uprobe_register(struct trace_event_call *event,
			  enum trace_reg type, void *data)
{
	switch (type) {
	case TRACE_REG_REGISTER:
	case TRACE_REG_PERF_REGISTER:
		return probe_event_enable(event, type == TRACE_REG_REGISTER ?
					  data : NULL);
	case TRACE_REG_UNREGISTER:
	case TRACE_REG_PERF_UNREGISTER:
		return probe_event_disable(event, type == TRACE_REG_UNREGISTER ?
					   data : NULL);
	case TRACE_REG_PERF_OPEN:
		return trace_uprobe_perf_open(event, data);
	case TRACE_REG_PERF_CLOSE:
		return trace_uprobe_perf_close(event, data);
	default:
		/* Perf's add/del: the default per-CPU lists do. */
		return 0;
	}
}
