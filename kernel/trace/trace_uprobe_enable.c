// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: enabling.  Tracefs (TP_FLAG_TRACE) and perf
 * (TP_FLAG_PROFILE) enable an event in any mix; the first registers its
 * consumers, the last unregisters them.  The filter wants every mm while
 * tracefs traces the event, else those perf wants; uprobe_apply() follows.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/uprobes.h>

#include "trace_uprobe.h"

/*
 * A system's "enable" file (un)registers its events one by one, each walking
 * every mm that maps the file; trace_events.c brackets that loop with
 * trace_uprobe_batch_begin() and _end().  Enabling, the begin registers in
 * one batch what the loop may enable, the end unregisters what it did not
 * (an event the batch failed registers alone, for its own error).
 * Disabling, the end unregisters in one batch.  Under event_mutex.
 */
enum trace_uprobe_batch { BATCH_NONE, BATCH_ENABLE, BATCH_DISABLE };
static enum trace_uprobe_batch batch;
static LIST_HEAD(batch_list);

/**
 * trace_uprobe_register_consumer - register a probe point with the core
 * @tu: the probe point, registered already or not
 *
 * Context: event_mutex held.
 * Return: 0 or the error of the registration.
 */
int trace_uprobe_register_consumer(struct trace_uprobe *tu)
{
	int ret;

	lockdep_assert_held(&event_mutex);
	if (tu->registered)
		return 0;

	ret = uprobe_register_refctr(tu->inode, tu->offset, tu->ref_ctr_offset,
				     &tu->consumer);
	if (!ret)
		tu->registered = true;

	return ret;
}

/**
 * trace_uprobe_unregister_consumer - unregister a probe point
 * @tu: the probe point, registered or not
 * @wait: wait for its running handlers (else see unregister_all_consumers())
 *
 * Context: event_mutex held.
 */
void trace_uprobe_unregister_consumer(struct trace_uprobe *tu, bool wait)
{
	lockdep_assert_held(&event_mutex);
	if (!tu->registered)
		return;

	if (!wait && batch == BATCH_DISABLE) {
		/* Done in one go by trace_uprobe_batch_end(). */
		if (list_empty(&tu->batch_node))
			list_add_tail(&tu->batch_node, &batch_list);
		return;
	}
	if (wait)
		uprobe_unregister(tu->inode, tu->offset, &tu->consumer);
	else
		uprobe_unregister_nosync(tu->inode, tu->offset, &tu->consumer);
	tu->registered = false;
}

static const char *insn_err = "This instruction cannot be probed";

/*
 * With no process mapping the file, the enable fails on a bad instruction
 * if the page cache holds it; if not, a later enable asks again.
 */
static int trace_uprobe_check_insn(struct trace_uprobe *tu)
{
	char *cmd;
	int ret;

	if (tu->insn_checked)
		return 0;
	ret = uprobe_analyze_unmapped(&tu->path, tu->offset);
	if (ret == -ENODATA)
		return 0;
	tu->insn_checked = !ret;
	if (!ret)
		return 0;
	cmd = kasprintf(GFP_KERNEL, "%c:%s/%s %s:0x%lx",
			tu->is_return ? 'r' : 'p', trace_probe_group_name(&tu->tp),
			trace_probe_name(&tu->tp), tu->filename, tu->offset);
	if (cmd) {
		/* The caret under the offset. */
		tracing_log_err(NULL, "trace_uprobe", cmd, &insn_err, 0,
				strrchr(cmd, ':') - cmd + 1);
		kfree(cmd);
	}
	return ret;
}

/* All probe points of an event or none: a partial event misses hits. */
static int register_all_consumers(struct trace_probe *tp)
{
	struct trace_uprobe *tu, *done;
	int ret;

	for_each_sibling(tu, tp) {
		ret = trace_uprobe_register_consumer(tu);
		if (ret)
			goto undo;
	}
	/* Checked once registered: a process mapping the file now counts. */
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
		trace_uprobe_unregister_consumer(done, true);
	}
	return ret;
}

/*
 * Not waiting for running handlers spares a grace period per event.  A late
 * handler finds the links and buffers under RCU, perf's lists under its
 * preempt_disable() (freed a grace period after TP_FLAG_PROFILE clears), and
 * the trace_uprobe until uprobe_unregister_sync() or trace_uprobe_free_later().
 */
static void unregister_all_consumers(struct trace_probe *tp)
{
	struct trace_uprobe *tu;

	for_each_sibling(tu, tp)
		trace_uprobe_unregister_consumer(tu, false);
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
			.inode = tu->inode,
			.offset = tu->offset,
			.ref_ctr_offset = tu->ref_ctr_offset,
			.uc = &tu->consumer,
		};
	return regs;
}

/* Unregister the @nr consumers on batch_list and empty it. */
static void batch_unregister(unsigned int nr)
{
	struct trace_uprobe *tu, *tmp;
	struct uprobe_reg *regs;

	regs = nr > 1 ? batch_regs(nr) : NULL;
	if (regs)
		uprobe_unregister_batch_nosync(regs, nr);
	list_for_each_entry_safe(tu, tmp, &batch_list, batch_node) {
		if (!regs)
			uprobe_unregister_nosync(tu->inode, tu->offset, &tu->consumer);
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
	list_for_each_entry_safe(tu, tmp, &batch_list, batch_node) {
		/* Enabling, keep the consumers whose events the loop enabled. */
		if (batch == BATCH_ENABLE) {
			WRITE_ONCE(tu->batch_wants, false);
			if (!tu->registered || trace_probe_is_enabled(&tu->tp)) {
				list_del_init(&tu->batch_node);
				continue;
			}
		}
		nr++;
	}
	batch = BATCH_NONE;
	batch_unregister(nr);
}

/**
 * trace_uprobe_apply_all - re-evaluate the filter of every probe point
 * @tp: any probe point of the event
 * @add: true when the filter now selects more processes, false for fewer
 *
 * Context: event_mutex held.
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
		err = uprobe_apply(tu->inode, tu->offset, &tu->consumer, add);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/* Enable for a tracefs instance (@file), or for perf (@file NULL). */
static int probe_event_enable(struct trace_event_call *call,
			      struct trace_event_file *file)
{
	struct trace_probe *tp;
	bool was_enabled, was_traced;
	int ret = 0;

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
	else if (file && !was_traced)	/* perf only so far: widen */
		ret = trace_uprobe_apply_all(tp, true);

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
		ret = trace_probe_remove_file(tp, file);
		if (ret)
			return ret;
		narrowed = !trace_probe_test_flag(tp, TP_FLAG_TRACE);
	} else {
		trace_probe_clear_flag(tp, TP_FLAG_PROFILE);
	}

	if (!trace_probe_is_enabled(tp))
		unregister_all_consumers(tp);
	else if (narrowed)	/* perf only now */
		trace_uprobe_apply_all(tp, false);

	return 0;
}

/**
 * trace_uprobe_consumer_filter - does a probe point's breakpoint belong in @mm?
 * @uc: the probe point's consumer
 * @ctx: unused
 * @mm: the process
 *
 * Context: any.
 * Return: true while a tracefs instance traces the event, or a perf event
 * or a batch enable wants @mm.
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
	return READ_ONCE(tu->batch_wants);
}

/**
 * trace_uprobe_register - the event's class->reg
 * @event: the event
 * @type: what tracefs or perf asks
 * @data: the trace_event_file, or the perf_event for PERF_OPEN and CLOSE
 *
 * Context: event_mutex held, but for TRACE_REG_PERF_ADD and _DEL.
 * Return: 0 or an error.
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
		return 0;	/* perf's add/del: the default lists do */
	}
}
