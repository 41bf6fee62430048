// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: probe points in user programs, defined
 * through tracefs (uprobe_events, dynamic_events) and recorded into the
 * trace buffers of the tracefs instances that enable them.
 *
 * The perf and BPF side of the same events lives in trace_uprobe_perf.c;
 * the definition syntax, argument parsing and event plumbing are the
 * shared probe-event code of trace_probe.c and trace_dynevent.c.
 *
 * Who may enable an event, and what that installs
 * ------------------------------------------------
 * An event is enabled by any mix of tracefs instances (TP_FLAG_TRACE, set
 * while at least one instance's file is linked), and perf events or BPF
 * programs (TP_FLAG_PROFILE, set while perf has the event registered).
 * The first of them registers each probe point's uprobe_consumer with the
 * uprobes core, the last one unregisters it.  Which processes get a
 * breakpoint is the consumer's filter: all of them while a tracefs
 * instance traces the event, otherwise only those the perf events select
 * (trace_uprobe_perf_wants()).  Whenever that set grows or shrinks while
 * the consumers stay registered, uprobe_apply() brings the breakpoints in
 * line with it.
 *
 * Locking
 * -------
 * event_mutex serialises definitions, enabling, disabling and perf
 * open/close; it is held around every call into the uprobes core that
 * registers, applies or unregisters a consumer.  dyn_event_ops_mutex
 * additionally covers parsing, for the error log.  The hit path takes
 * neither: it runs in the probed task, may sleep while it reads user
 * memory, reads the event flags with acquire semantics and walks the
 * tracefs links under RCU.  When the last user lets go of an event, its
 * consumers are unregistered without waiting for running handlers
 * (uprobe_unregister_nosync()); the wait comes before the event or a
 * probe point is freed (see unregister_all_consumers()), or the free is
 * queued after it (a perf-made probe), so that disabling a whole group,
 * or closing many perf events, does not pay a grace period per event.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/namei.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/unaligned.h>

#include "trace_uprobe.h"
#include "trace_probe_tmpl.h"

/*
 * The largest record a hit produces.  Strings are cut to fit, so that a
 * record always fits one ring-buffer page, with room to spare for the
 * page's and the event's own headers.
 */
#define UPROBE_RECORD_MAX	(PAGE_SIZE - 128)

/* Records up to this size are built on the stack, bigger ones in a kmalloc. */
#define UPROBE_RECORD_ONSTACK	128

/*
 * A hit's record while it fits on the stack: the dispatcher writes the
 * head in place, build_record() appends the rest, and clears what it uses
 * a word at a time (hence the word of slack).
 */
union uprobe_stack_record {
	struct uprobe_entry_head	entry;
	struct uretprobe_entry_head	ret;
	u8				buf[UPROBE_RECORD_ONSTACK + sizeof(u64)];
};

/* Our type of dynamic event; its methods are defined further down. */
static struct dyn_event_operations trace_uprobe_ops;

static bool is_trace_uprobe(struct dyn_event *ev)
{
	return ev->ops == &trace_uprobe_ops;
}

static struct trace_uprobe *to_trace_uprobe(struct dyn_event *ev)
{
	return container_of(ev, struct trace_uprobe, devent);
}

/* The probe points of the event @tp belongs to, @tp included. */
#define for_each_sibling(pos, probe)	\
	list_for_each_entry(pos, trace_probe_probe_list(probe), tp.list)

static int uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs);
static int uretprobe_dispatcher(struct uprobe_consumer *uc,
				unsigned long func, struct pt_regs *regs);
static bool uprobe_consumer_filter(struct uprobe_consumer *uc,
				   enum uprobe_filter_ctx ctx,
				   struct mm_struct *mm);

/**
 * trace_uprobe_alloc - allocate a probe point and its own event
 * @group: the event's group (system)
 * @event: the event's name
 * @nargs: how many fetch arguments the definition has
 * @is_return: whether this is a return probe
 *
 * The probe has no file yet (see trace_uprobe_lookup_file()), is not on
 * any list and not registered with the uprobes core.
 *
 * Return: the probe, or an ERR_PTR().
 */
struct trace_uprobe *trace_uprobe_alloc(const char *group, const char *event,
					int nargs, bool is_return)
{
	struct trace_uprobe *tu;
	int ret;

	tu = kzalloc(struct_size(tu, tp.args, nargs), GFP_KERNEL);
	if (!tu)
		return ERR_PTR(-ENOMEM);

	tu->nhit = alloc_percpu(unsigned long);
	if (!tu->nhit) {
		kfree(tu);
		return ERR_PTR(-ENOMEM);
	}

	ret = trace_probe_init(&tu->tp, event, group, true);
	if (ret < 0) {
		free_percpu(tu->nhit);
		kfree(tu);
		return ERR_PTR(ret);
	}
	trace_uprobe_filter_init(trace_uprobe_filter(tu));

	tu->is_return = is_return;
	tu->consumer.handler = uprobe_dispatcher;
	if (is_return)
		tu->consumer.ret_handler = uretprobe_dispatcher;
	tu->consumer.filter = uprobe_consumer_filter;
	dyn_event_init(&tu->devent, &trace_uprobe_ops);
	INIT_LIST_HEAD(&tu->batch_node);

	return tu;
}

static void trace_uprobe_release_memory(struct trace_uprobe *tu)
{
	path_put(&tu->path);
	trace_probe_cleanup(&tu->tp);
	kfree(tu->filename);
	free_percpu(tu->nhit);
	kfree(tu);
}

/**
 * trace_uprobe_free - free a probe point that is on no list
 * @tu: the probe, or NULL
 *
 * The probe must not be registered with the uprobes core.
 */
void trace_uprobe_free(struct trace_uprobe *tu)
{
	if (!tu)
		return;

	WARN_ON_ONCE(tu->registered);
	/* A handler left running by a disable without waiting. */
	uprobe_unregister_sync();
	trace_uprobe_release_memory(tu);
}

static void trace_uprobe_free_work(struct work_struct *work)
{
	trace_uprobe_release_memory(container_of(work, struct trace_uprobe,
						 free_work));
}

/* SRCU callbacks run with bottom halves off; path_put() may sleep. */
static void trace_uprobe_free_rcu(struct rcu_head *head)
{
	struct trace_uprobe *tu = container_of(head, struct trace_uprobe,
					       free_rcu);

	INIT_WORK(&tu->free_work, trace_uprobe_free_work);
	schedule_work(&tu->free_work);
}

/**
 * trace_uprobe_free_later - trace_uprobe_free() without waiting
 * @tu: the probe, on no list and not registered with the uprobes core
 *
 * Frees @tu once a handler left running by its unregistration is over,
 * from a workqueue: a perf event closed pays no grace period of ours
 * (perf waits for one of its own per event already).
 */
void trace_uprobe_free_later(struct trace_uprobe *tu)
{
	WARN_ON_ONCE(tu->registered);
	/*
	 * The file now: handlers never use it, and a umount right after
	 * the perf event is closed must not find its mount busy.
	 */
	path_put(&tu->path);
	tu->path = (struct path){};
	uprobe_call_after_unregister(&tu->free_rcu, trace_uprobe_free_rcu);
}

/**
 * trace_uprobe_lookup_file - resolve and pin the file a probe is in
 * @tu: the probe
 * @filename: the path as the user gave it
 *
 * Return: 0, -ENOENT (or another lookup error) when the path does not
 * resolve, -EINVAL when it is not a regular file, -ENOMEM.
 */
int trace_uprobe_lookup_file(struct trace_uprobe *tu, const char *filename)
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

/*
 * The probe points defined through tracefs, indexed by event name and by
 * place (inode, offset), so that a definition finds the event it joins
 * and the points it must agree with without a scan of all the others:
 * with a scan, defining N probes cost O(N^2).  Under event_mutex.
 */
#define TU_INDEX_BITS	12
static struct hlist_head tu_by_name[1 << TU_INDEX_BITS];
static struct hlist_head tu_by_place[1 << TU_INDEX_BITS];

static struct hlist_head *name_bucket(const char *event, const char *group)
{
	u32 h = jhash(event, strlen(event), jhash(group, strlen(group), 0));

	return &tu_by_name[hash_32(h, TU_INDEX_BITS)];
}

static struct hlist_head *place_bucket(struct inode *inode,
				       unsigned long offset)
{
	unsigned long h = (unsigned long)inode ^ hash_long(offset, BITS_PER_LONG);

	return &tu_by_place[hash_long(h, TU_INDEX_BITS)];
}

/* A definition becomes visible: in the dynamic events and the indexes. */
static void trace_uprobe_link(struct trace_uprobe *tu)
{
	lockdep_assert_held(&event_mutex);
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
	hlist_add_head(&tu->name_node,
		       name_bucket(trace_probe_name(&tu->tp),
				   trace_probe_group_name(&tu->tp)));
	hlist_add_head(&tu->place_node,
		       place_bucket(trace_uprobe_inode(tu), tu->offset));
}

static void trace_uprobe_unlink(struct trace_uprobe *tu)
{
	lockdep_assert_held(&event_mutex);
	hlist_del(&tu->name_node);
	hlist_del(&tu->place_node);
	dyn_event_remove(&tu->devent);
}

/**
 * trace_uprobe_find - look a tracefs-defined probe up by its event
 * @event: the event's name
 * @group: the event's group
 *
 * Context: event_mutex held.
 * Return: the first probe point of that event, or NULL.
 */
struct trace_uprobe *trace_uprobe_find(const char *event, const char *group)
{
	struct trace_event_call *call;
	struct trace_uprobe *tu;

	lockdep_assert_held(&event_mutex);
	hlist_for_each_entry(tu, name_bucket(event, group), name_node) {
		if (strcmp(trace_probe_name(&tu->tp), event) ||
		    strcmp(trace_probe_group_name(&tu->tp), group))
			continue;
		call = trace_probe_event_call(&tu->tp);
		return trace_uprobe_primary_from_call(call);
	}
	return NULL;
}

/**
 * trace_uprobe_primary_from_call - the first probe point of an event
 * @call: the event
 *
 * Return: the probe point whose definition the event's format follows.
 */
struct trace_uprobe *trace_uprobe_primary_from_call(struct trace_event_call *call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);

	if (WARN_ON_ONCE(!tp))
		return NULL;

	return container_of(tp, struct trace_uprobe, tp);
}

/* Registration with the uprobes core */

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

static int trace_uprobe_register_consumer(struct trace_uprobe *tu)
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

static void trace_uprobe_unregister_consumer(struct trace_uprobe *tu)
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
static bool uprobe_consumer_filter(struct uprobe_consumer *uc,
				   enum uprobe_filter_ctx ctx,
				   struct mm_struct *mm)
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

/* Adding and removing definitions */

static bool same_place(struct trace_uprobe *a, struct trace_uprobe *b)
{
	return trace_uprobe_inode(a) == trace_uprobe_inode(b) &&
	       a->offset == b->offset;
}

static bool same_arg_bodies(struct trace_uprobe *a, struct trace_uprobe *b)
{
	int i;

	for (i = 0; i < a->tp.nr_args; i++)
		if (strcmp(a->tp.args[i].comm, b->tp.args[i].comm))
			return false;
	return true;
}

/*
 * Whether @tu may join the event of @to as one more probe point: only as
 * the same kind of probe, with the same argument names and types (one
 * format for all the points), and not as a copy of a point it has.
 */
static int may_join(struct trace_uprobe *tu, struct trace_uprobe *to)
{
	struct trace_uprobe *pos;
	int diff;

	if (tu->is_return != to->is_return) {
		trace_probe_log_set_index(0);
		trace_probe_log_err(0, DIFF_PROBE_TYPE);
		return -EEXIST;
	}

	diff = trace_probe_compare_arg_type(&tu->tp, &to->tp);
	if (diff) {
		/* @diff counts arguments from 1, and they start at argv[2]. */
		trace_probe_log_set_index(diff + 1);
		trace_probe_log_err(0, DIFF_ARG_TYPE);
		return -EEXIST;
	}

	for_each_sibling(pos, &to->tp) {
		if (same_place(pos, tu) && same_arg_bodies(pos, tu)) {
			trace_probe_log_set_index(0);
			trace_probe_log_err(0, SAME_PROBE);
			return -EEXIST;
		}
	}
	return 0;
}

static int join_event(struct trace_uprobe *tu, struct trace_uprobe *to)
{
	int ret;

	ret = may_join(tu, to);
	if (!ret)
		ret = trace_probe_append(&tu->tp, &to->tp);
	if (ret)
		return ret;

	/* A point added to a live event starts working right away. */
	if (trace_probe_is_enabled(&tu->tp)) {
		ret = trace_uprobe_register_consumer(tu);
		if (ret) {
			trace_probe_unlink(&tu->tp);
			return ret;
		}
	}

	trace_uprobe_link(tu);
	return 0;
}

/*
 * The uprobes core keys a breakpoint by (inode, offset) and keeps one
 * reference counter per breakpoint: two definitions naming different
 * counters for the same place cannot both work.
 */
static bool ref_ctr_conflicts(struct trace_uprobe *tu)
{
	struct trace_uprobe *other;

	hlist_for_each_entry(other, place_bucket(trace_uprobe_inode(tu),
						 tu->offset), place_node) {
		if (same_place(other, tu) &&
		    other->ref_ctr_offset != tu->ref_ctr_offset)
			return true;
	}
	return false;
}

static int register_trace_uprobe(struct trace_uprobe *tu)
{
	struct trace_uprobe *old;
	int ret;

	mutex_lock(&event_mutex);

	if (ref_ctr_conflicts(tu)) {
		pr_warn("Reference counter offset mismatch.\n");
		ret = -EINVAL;
		goto out;
	}

	old = trace_uprobe_find(trace_probe_name(&tu->tp),
				trace_probe_group_name(&tu->tp));
	if (old) {
		ret = join_event(tu, old);
		goto out;
	}

	/* A new event: its name must be free among all trace events. */
	trace_uprobe_init_event_call(tu);
	ret = trace_probe_register_event_call(&tu->tp);
	if (ret == -EEXIST) {
		trace_probe_log_set_index(0);
		trace_probe_log_err(0, EVENT_EXIST);
	} else if (ret) {
		pr_warn("cannot register event %s/%s: %d\n",
			trace_probe_group_name(&tu->tp),
			trace_probe_name(&tu->tp), ret);
	} else {
		trace_uprobe_link(tu);
	}
out:
	mutex_unlock(&event_mutex);
	return ret;
}

/*
 * Parse "OFFSET[%return][(REF_CTR_OFFSET)]" at @offs, the part of the place
 * after its last colon; @place is the whole place, for error positions.
 */
static int parse_offsets(char *place, char *offs, unsigned long *offset,
			 unsigned long *ref_ctr_offset, bool *is_return)
{
	char *rctr, *rctr_end, *suffix;

	rctr = strchr(offs, '(');
	if (rctr) {
		rctr_end = strchr(rctr, ')');
		if (!rctr_end) {
			trace_probe_log_err(rctr + strlen(rctr) - place,
					    REFCNT_OPEN_BRACE);
			return -EINVAL;
		}
		if (rctr_end[1] != '\0') {
			trace_probe_log_err(rctr_end + 1 - place,
					    BAD_REFCNT_SUFFIX);
			return -EINVAL;
		}
		*rctr++ = '\0';
		*rctr_end = '\0';
		if (kstrtoul(rctr, 0, ref_ctr_offset)) {
			trace_probe_log_err(rctr - place, BAD_REFCNT);
			return -EINVAL;
		}
	}

	suffix = strchr(offs, '%');
	if (suffix) {
		if (strcmp(suffix, "%return")) {
			trace_probe_log_err(suffix - place, BAD_ADDR_SUFFIX);
			return -EINVAL;
		}
		*suffix = '\0';
		*is_return = true;
	}

	if (kstrtoul(offs, 0, offset)) {
		trace_probe_log_err(offs - place, BAD_UPROBE_OFFS);
		return -EINVAL;
	}
	return 0;
}

/*
 * The event name a definition gets when it names none, as 6.1 forms it:
 * "p_", the file's base name up to its first '.', '-' or '_', and the
 * offset; return probes too start with "p_".
 */
static void make_event_name(char *buf, const char *filename,
			    unsigned long offset)
{
	const char *base = kbasename(filename);
	int len = strcspn(base, "._-");

	snprintf(buf, MAX_EVENT_NAME_LEN, "p_%.*s_0x%lx", len, base, offset);
}

/*
 * Symbol strings look a value up in the kernel's symbol table, which says
 * nothing about a user address: refuse the type before anything else of
 * the argument is parsed, as an unknown one.
 */
static int check_arg_type(const char *arg)
{
	const char *body, *type;
	size_t len;

	body = strchr(arg, '=');
	body = body ? body + 1 : arg;
	type = strchr(body, ':');
	if (!type++)
		return 0;

	len = strcspn(type, "[");
	if (len != strlen("symstr") || strncmp(type, "symstr", len))
		return 0;

	trace_probe_log_err(type - arg, BAD_TYPE);
	return -EINVAL;
}

/*
 * Definition syntax:
 *   p[:[GRP/][EVENT]] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]
 *   r[:[GRP/][EVENT]] PATH:OFFSET[(REF_CTR_OFFSET)] [FETCHARGS]
 */
static int __trace_uprobe_create(int argc, const char **argv)
{
	const char *event = NULL, *group = UPROBE_EVENT_SYSTEM;
	char gbuf[MAX_EVENT_NAME_LEN], buf[MAX_EVENT_NAME_LEN];
	unsigned long offset = 0, ref_ctr_offset = 0;
	struct trace_uprobe *tu = NULL;
	char *place = NULL, *offs;
	unsigned int flags;
	struct path path;
	bool is_return;
	int i, ret;

	/*
	 * "p" or "r", then a place: a path with a slash, a colon and a number
	 * after the last colon.  Anything else is another kind of probe's
	 * syntax (or no syntax at all, rejected without an error log, as in
	 * 6.1).
	 */
	if (argc < 2 || !argv[0][0] || !strchr("pr", argv[0][0]))
		return -ECANCELED;
	offs = strrchr(argv[1], ':');
	if (!strchr(argv[1], '/') || !offs || !isdigit(offs[1]))
		return -ECANCELED;
	is_return = argv[0][0] == 'r';

	trace_probe_log_init("trace_uprobe", argc, argv);
	trace_probe_log_set_index(1);

	place = kstrdup(argv[1], GFP_KERNEL);
	if (!place)
		return -ENOMEM;
	offs = place + (offs - argv[1]);
	*offs++ = '\0';

	/* The file is checked first, its offsets after. */
	ret = kern_path(place, LOOKUP_FOLLOW, &path);
	if (ret) {
		trace_probe_log_err(0, FILE_NOT_FOUND);
		goto out;
	}
	if (!d_is_reg(path.dentry)) {
		trace_probe_log_err(0, NO_REGULAR_FILE);
		ret = -EINVAL;
		goto out_path;
	}

	ret = parse_offsets(place, offs, &offset, &ref_ctr_offset, &is_return);
	if (ret)
		goto out_path;

	/* Only "p:" and "r:" name the event; "r10" and the like do not. */
	trace_probe_log_set_index(0);
	if (argv[0][1] == ':') {
		event = &argv[0][2];
		ret = traceprobe_parse_event_name(&event, &group, gbuf, 2);
		if (ret)
			goto out_path;
	}
	if (!event) {
		make_event_name(buf, place, offset);
		event = buf;
	}

	tu = trace_uprobe_alloc(group, event, argc - 2, is_return);
	if (IS_ERR(tu)) {
		ret = PTR_ERR(tu);
		tu = NULL;
		goto out_path;
	}
	/* The probe keeps the path (and the reference) looked up above. */
	tu->path = path;
	tu->inode = d_real_inode(path.dentry);
	tu->filename = place;
	place = NULL;
	tu->offset = offset;
	tu->ref_ctr_offset = ref_ctr_offset;

	flags = is_return ? TPARG_FL_RETURN : 0;
	for (i = 0; i < argc - 2 && i < MAX_TRACE_ARGS; i++) {
		trace_probe_log_set_index(i + 2);
		ret = check_arg_type(argv[i + 2]);
		if (ret)
			goto out;
		ret = traceprobe_parse_probe_arg(&tu->tp, i, argv[i + 2], flags);
		if (ret)
			goto out;
	}

	ret = traceprobe_set_print_fmt(&tu->tp, is_return ?
				       PROBE_PRINT_RETURN : PROBE_PRINT_NORMAL);
	if (ret < 0)
		goto out;

	ret = register_trace_uprobe(tu);
	if (!ret) {
		tu = NULL;
	} else if (ret != -ENOMEM && ret != -EEXIST && ret != -EINVAL) {
		trace_probe_log_set_index(1);
		trace_probe_log_err(0, FAIL_REG_PROBE);
	}
out:
	trace_uprobe_free(tu);
	kfree(place);
	trace_probe_log_clear();
	return ret;

out_path:
	path_put(&path);
	goto out;
}

/* dyn_event_operations.create: split the line into words and parse. */
static int trace_uprobe_create(const char *raw_command)
{
	return trace_probe_create(raw_command, __trace_uprobe_create);
}

/* A line written to uprobe_events: a deletion or a definition. */
static int create_or_delete_trace_uprobe(const char *line)
{
	int ret = line[0] == '-' ? dyn_event_release(line, &trace_uprobe_ops) :
				   dyn_event_create(line, &trace_uprobe_ops);

	/* Not a uprobe definition at all: plain EINVAL, nothing logged. */
	return ret == -ECANCELED ? -EINVAL : ret;
}

/*
 * Remove one probe point.  A point that shares its event with others may
 * go at any time; the last one takes the event along, and only when
 * nothing uses the event (enabled, or held by perf or an open file).
 */
static int trace_uprobe_release(struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int ret;

	lockdep_assert_held(&event_mutex);

	if (!trace_probe_has_sibling(&tu->tp)) {
		if (trace_probe_is_enabled(&tu->tp) ||
		    trace_event_dyn_busy(call))
			return -EBUSY;
		/* The event's files go next; no late handler may use them. */
		uprobe_unregister_sync();
		ret = trace_probe_unregister_event_call(&tu->tp);
		if (ret)
			return ret;
	}

	trace_uprobe_unregister_consumer(tu);
	trace_uprobe_unlink(tu);
	trace_probe_unlink(&tu->tp);
	trace_uprobe_free(tu);
	return 0;
}

static bool trace_uprobe_is_busy(struct dyn_event *ev)
{
	return trace_probe_is_enabled(&to_trace_uprobe(ev)->tp);
}

/*
 * The place as the listings show it and as a deletion must name it: the
 * path as given, the offset in 16 hex digits, the counter if any.
 */
static char *place_string(struct trace_uprobe *tu)
{
	const int digits = sizeof(unsigned long) * 2;

	if (tu->ref_ctr_offset)
		return kasprintf(GFP_KERNEL, "%s:0x%0*lx(0x%lx)", tu->filename,
				 digits, tu->offset, tu->ref_ctr_offset);
	return kasprintf(GFP_KERNEL, "%s:0x%0*lx", tu->filename, digits,
			 tu->offset);
}

/*
 * "-:[GRP/]EVENT [PLACE [ARGS]]": an empty event name matches the whole
 * group; a place and leading arguments, when given, narrow it down to
 * the probe points defined that way.
 */
static bool trace_uprobe_match(const char *system, const char *event,
			       int argc, const char **argv,
			       struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	char *place;
	bool same;

	if (event[0] && strcmp(event, trace_probe_name(&tu->tp)))
		return false;
	if (system && strcmp(system, trace_probe_group_name(&tu->tp)))
		return false;
	if (!argc)
		return true;

	place = place_string(tu);
	same = place && !strcmp(place, argv[0]);
	kfree(place);

	return same && trace_probe_match_command_args(&tu->tp, argc - 1,
						      argv + 1);
}

/* One line of uprobe_events (and dynamic_events): the definition. */
static int trace_uprobe_show(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	struct probe_arg *arg;
	char *place;

	place = place_string(tu);
	if (!place)
		return -ENOMEM;
	seq_printf(m, "%c:%s/%s %s", tu->is_return ? 'r' : 'p',
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp),
		   place);
	kfree(place);

	for (arg = tu->tp.args; arg < tu->tp.args + tu->tp.nr_args; arg++)
		seq_printf(m, " %s=%s", arg->name, arg->comm);
	seq_putc(m, '\n');
	return 0;
}

static struct dyn_event_operations trace_uprobe_ops = {
	.create		= trace_uprobe_create,
	.match		= trace_uprobe_match,
	.show		= trace_uprobe_show,
	.is_busy	= trace_uprobe_is_busy,
	.free		= trace_uprobe_release,
};

static unsigned long trace_uprobe_nhit(struct trace_uprobe *tu)
{
	unsigned long nhit = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		nhit += *per_cpu_ptr(tu->nhit, cpu);
	return nhit;
}

/* One line of uprobe_profile: file, event, hits. */
static int trace_uprobe_show_hits(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);

	seq_printf(m, "  %s %-44s %15lu\n", tu->filename,
		   trace_probe_name(&tu->tp), trace_uprobe_nhit(tu));
	return 0;
}

/*
 * tracefs: uprobe_events and uprobe_profile are two listings of the same
 * thing, the uprobes among the dynamic events (walked under event_mutex),
 * and share their file operations.  Each file's private data, kept by
 * tracefs in its inode, is its line printer; only uprobe_events takes
 * writes.
 */
typedef int (*uprobe_line_fn)(struct seq_file *m, struct dyn_event *ev);

static bool is_uprobe_events(struct file *file)
{
	return file_inode(file)->i_private == trace_uprobe_show;
}

static int uprobe_list_show(struct seq_file *m, void *v)
{
	uprobe_line_fn print_line = m->private;
	struct dyn_event *ev = v;

	return is_trace_uprobe(ev) ? print_line(m, ev) : 0;
}

static const struct seq_operations uprobe_list_seq_ops = {
	.start	= dyn_event_seq_start,
	.next	= dyn_event_seq_next,
	.stop	= dyn_event_seq_stop,
	.show	= uprobe_list_show,
};

static int uprobe_list_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;

	/*
	 * "echo DEF > uprobe_events" replaces the whole list, all or
	 * nothing: with one event busy, none is removed (EBUSY).
	 */
	if (is_uprobe_events(file) && (file->f_mode & FMODE_WRITE) &&
	    (file->f_flags & O_TRUNC)) {
		ret = dyn_events_release_all(&trace_uprobe_ops);
		if (ret)
			return ret;
	}

	ret = seq_open(file, &uprobe_list_seq_ops);
	if (!ret)
		((struct seq_file *)file->private_data)->private =
			inode->i_private;
	return ret;
}

static ssize_t uprobe_list_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	if (!is_uprobe_events(file))
		return -EINVAL;

	/* One definition or deletion a line, '#' comments allowed. */
	return trace_parse_run_command(file, ubuf, count, ppos,
				       create_or_delete_trace_uprobe);
}

/*
 * Reading is plain seq_file.  Never a module (UPROBE_EVENTS is a bool):
 * no .owner to pin.
 */
static const struct file_operations uprobe_list_fops = {
	.open = uprobe_list_open, .write = uprobe_list_write,
	.read_iter = seq_read_iter, .llseek = seq_lseek,
	.release = seq_release,
};

/*
 * Fetching arguments
 *
 * Everything a uprobe reads is in the probed task's memory, read in the
 * task's own context where faulting a page in is allowed: registers and
 * the user stack, memory through user pointers, strings.  The only kernel
 * strings are $comm and immediate strings, stored by store_kernel_string().
 */

/* What the fetch code needs to know about one hit. */
struct uprobe_hit {
	struct pt_regs		*regs;
	/* Where the probed file's offset 0 is mapped, for @+OFFSET. */
	unsigned long		file_base;
};

/*
 * The helpers trace_probe_tmpl.h asks for.  All memory a uprobe reads is
 * the probed task's, so the plain and the "_user" variants are the same.
 */
static const char __user *user_ptr(unsigned long addr)
{
	return (const char __user *)addr;
}

static nokprobe_inline int probe_mem_read_user(void *dest, void *src, size_t size)
{
	return copy_from_user(dest, user_ptr((unsigned long)src), size) ?
	       -EFAULT : 0;
}

static nokprobe_inline int probe_mem_read(void *dest, void *src, size_t size)
{
	return probe_mem_read_user(dest, src, size);
}

/* With its NUL; 0 on a fault; a longer string is cut to the maximum. */
static nokprobe_inline int fetch_store_strlen_user(unsigned long addr)
{
	long len = strnlen_user(user_ptr(addr), MAX_STRING_SIZE);

	return len > MAX_STRING_SIZE ? MAX_STRING_SIZE : len;
}

static nokprobe_inline int fetch_store_strlen(unsigned long addr)
{
	return fetch_store_strlen_user(addr);
}

/* Make the data location at @dest say that @len bytes were stored. */
static void set_stored_len(void *dest, int len)
{
	*(u32 *)dest = make_data_loc(len, get_loc_offs(*(u32 *)dest));
}

/*
 * Copy the user string at @addr into the room the data location at @dest
 * describes: the whole string with its NUL, or as much as fits followed
 * by a NUL, or nothing on a fault (the location then says 0 bytes, which
 * prints as a fault).
 */
static nokprobe_inline int fetch_store_string_user(unsigned long addr, void *dest, void *base)
{
	int room = get_loc_len(*(u32 *)dest);
	char *buf = get_loc_data(dest, base);
	long copied;

	if (unlikely(!room))
		return -ENOMEM;

	copied = strncpy_from_user(buf, user_ptr(addr), room);
	if (copied < 0) {
		set_stored_len(dest, 0);
		return copied;
	}
	/* No NUL within the room: cut the string to fit. */
	copied = copied < room ? copied + 1 : room;
	buf[copied - 1] = '\0';
	set_stored_len(dest, copied);
	return copied;
}

static nokprobe_inline int fetch_store_string(unsigned long addr, void *dest, void *base)
{
	return fetch_store_string_user(addr, dest, base);
}

/* $comm and immediate strings: the only strings in kernel memory. */
static int store_kernel_string(const char *str, struct fetch_insn *code,
			       void *dest, void *base)
{
	int len = strlen(str) + 1;
	int room;
	char *buf;

	/* The parser gives these a string store and nothing else. */
	if (code->op != FETCH_OP_ST_STRING || code[1].op != FETCH_OP_END)
		return -EILSEQ;
	if (!dest)
		return len;

	room = get_loc_len(*(u32 *)dest);
	if (!room)
		return -ENOMEM;
	len = min(len, room);
	buf = get_loc_data(dest, base);
	memcpy(buf, str, len - 1);
	buf[len - 1] = '\0';
	set_stored_len(dest, len);
	return len;
}

/* The word at user address @addr, or 0 if it cannot be read. */
static unsigned long read_user_word(unsigned long addr)
{
	unsigned long word;

	if (get_user(word, (unsigned long __user *)addr))
		return 0;
	return word;
}

/*
 * The first stage of a fetch: a value taken from the hit itself.  Returns
 * false for an operation that cannot start a uprobe fetch.
 */
static bool fetch_context_value(const struct fetch_insn *code,
				const struct uprobe_hit *hit,
				unsigned long *val)
{
	struct pt_regs *regs = hit->regs;
	unsigned long sp = user_stack_pointer(regs);

	if (code->op == FETCH_OP_REG)
		*val = regs_get_register(regs, code->param);
	else if (code->op == FETCH_OP_STACKP)
		*val = sp;
	else if (code->op == FETCH_OP_STACK)
		*val = read_user_word(sp + code->param * sizeof(long));
	else if (code->op == FETCH_OP_RETVAL)
		*val = regs_return_value(regs);
	else if (code->op == FETCH_OP_IMM)
		*val = code->immediate;
	else if (code->op == FETCH_OP_FOFFS)
		*val = hit->file_base + code->immediate;
	else
		return false;
	return true;
}

static int
process_fetch_insn(struct fetch_insn *code, void *rec, void *dest, void *base)
{
	unsigned long val;

	/* $comm and immediate strings are stored whole, from kernel memory. */
	if (code->op == FETCH_OP_COMM)
		return store_kernel_string(current->comm, code + 1, dest, base);
	if (code->op == FETCH_OP_DATA)
		return store_kernel_string(code->data, code + 1, dest, base);

	if (!fetch_context_value(code, rec, &val))
		return -EILSEQ;

	/* Dereferences, the store, bitfields and arrays: the common stages. */
	return process_fetch_insn_bottom(code + 1, val, dest, base);
}

/*
 * Build the record of one hit: @head_size bytes of head (already filled
 * in by the caller, at the start of @sr), then the fetch arguments, then
 * their strings.  Returns 0, or -ENOMEM when no buffer could be had.
 */
static __always_inline int build_record(struct trace_uprobe *tu,
					struct uprobe_hit *hit, int head_size,
					struct uprobe_record *rec,
					union uprobe_stack_record *sr)
{
	struct trace_probe *tp = &tu->tp;
	int i, len, room, dsize = 0;
	void *data;

	for (i = 0; i < tp->nr_args; i++) {
		if (!tp->args[i].dynamic)
			continue;
		len = process_fetch_insn(tp->args[i].code, hit, NULL, NULL);
		if (len > 0)
			dsize += len;
	}
	dsize = min_t(int, dsize, UPROBE_RECORD_MAX - head_size - tp->size);

	rec->size = head_size + tp->size + dsize;
	/* With room for perf's padding, so that perf can take it as it is. */
	room = trace_uprobe_perf_size(rec->size);
	if (room <= UPROBE_RECORD_ONSTACK) {
		rec->data = sr->buf;	/* the head is there already */
		/*
		 * No old stack bytes may reach a reader: an argument that
		 * faults stores nothing, and perf copies the padding out.
		 * Without arguments, that is the padding only: one store
		 * (the buffer has a word of slack for it).
		 */
		data = rec->data + head_size;
		if (room - head_size <= sizeof(u64))
			put_unaligned(0ULL, (u64 *)data);
		else
			memset(data, 0, room - head_size);
	} else {
		rec->data = kzalloc(room, GFP_KERNEL);
		if (!rec->data)
			return -ENOMEM;
		memcpy(rec->data, sr, head_size);
	}

	if (tp->nr_args)
		store_trace_args(rec->data + head_size, tp, hit, head_size,
				 dsize);
	return 0;
}

static void free_record(struct uprobe_record *rec,
			union uprobe_stack_record *sr)
{
	if (rec->data != sr->buf)
		kfree(rec->data);
}

/* The hit path */

/* Copy the record into the buffer of every tracefs instance tracing it. */
static void uprobe_trace_output(struct trace_uprobe *tu, struct pt_regs *regs,
				struct uprobe_record *rec)
{
	const int hdr = sizeof(struct trace_entry);
	/* trace_event_buffer_reserve() sets every field. */
	struct trace_event_buffer fbuffer __uninitialized;
	struct event_file_link *link;
	void *entry;

	/* The ring buffer and the pid filters want a fixed CPU. */
	preempt_disable();
	rcu_read_lock();
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		struct trace_event_file *file = link->file;

		if (trace_trigger_soft_disabled(file))
			continue;
		entry = trace_event_buffer_reserve(&fbuffer, file, rec->size);
		if (!entry)
			continue;
		memcpy(entry + hdr, rec->data + hdr, rec->size - hdr);
		fbuffer.regs = regs;
		trace_event_buffer_commit(&fbuffer);
	}
	rcu_read_unlock();
	preempt_enable();
}

/*
 * Everything a hit does once the event's head fields are known: BPF,
 * then one record for tracefs and perf alike.  Returns whether the
 * breakpoint is still wanted in this process.
 */
static __always_inline bool uprobe_hit(struct trace_uprobe *tu,
				       struct uprobe_hit *hit,
				       union uprobe_stack_record *sr,
				       int head_size)
{
	unsigned int flags = trace_probe_load_flag(&tu->tp);
	bool traced = flags & TP_FLAG_TRACE, to_perf = false;
	struct uprobe_record rec __uninitialized;	/* build_record() sets it */

	if ((flags & TP_FLAG_PROFILE) &&
	    trace_uprobe_perf_wants(trace_uprobe_filter(tu), current->mm)) {
		to_perf = trace_uprobe_perf_run_bpf(tu, hit->regs);
	} else if (!traced) {
		/* Inherited from a parent, or installed for another consumer. */
		return false;
	}

	if (!traced && !to_perf)
		return true;

	if (build_record(tu, hit, head_size, &rec, sr))
		return true;

	if (traced)
		uprobe_trace_output(tu, hit->regs, &rec);
	if (to_perf)
		trace_uprobe_perf_output(tu, hit->regs, &rec);

	free_record(&rec, sr);
	return true;
}

/*
 * The address of the breakpoint that was hit.  The core may or may not
 * have rewound the instruction pointer past the trap instruction yet, but
 * a file offset and its mapped address agree below the page size, so the
 * probe's offset tells where the instruction starts.
 */
static unsigned long probe_vaddr(struct trace_uprobe *tu, struct pt_regs *regs)
{
	unsigned long ip = instruction_pointer(regs);

	return ip - ((ip - tu->offset) & ~PAGE_MASK);
}

static int uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;	/* see uprobe_hit() */
	struct uprobe_entry_head *head = &sr.entry;
	struct uprobe_hit hit = { .regs = regs };

	/* A return probe's entry only decides whether to wait for the return. */
	if (tu->is_return) {
		if (uprobe_consumer_filter(uc, UPROBE_FILTER_MMAP, current->mm))
			return 0;
		return UPROBE_HANDLER_REMOVE;
	}
	this_cpu_inc(*tu->nhit);

	head->ent = (struct trace_entry){};	/* perf's or tracefs's to fill */
	head->ip = probe_vaddr(tu, regs);
	hit.file_base = head->ip - tu->offset;

	return uprobe_hit(tu, &hit, &sr, sizeof(*head)) ?
	       0 : UPROBE_HANDLER_REMOVE;
}

static int uretprobe_dispatcher(struct uprobe_consumer *uc,
				unsigned long func, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;	/* see uprobe_hit() */
	struct uretprobe_entry_head *head = &sr.ret;
	struct uprobe_hit hit = { .regs = regs };

	this_cpu_inc(*tu->nhit);

	head->ent = (struct trace_entry){};
	head->func = func;
	head->ret_ip = instruction_pointer(regs);
	hit.file_base = func - tu->offset;

	uprobe_hit(tu, &hit, &sr, sizeof(*head));
	return 0;
}

/* The event class */

static enum print_line_t
print_uprobe_event(struct trace_iterator *iter, int flags,
		   struct trace_event *event)
{
	struct trace_event_call *call;
	struct trace_seq *s = &iter->seq;
	struct trace_probe *tp;
	u8 *data;

	call = container_of(event, struct trace_event_call, event);
	tp = trace_probe_primary_from_call(call);
	if (WARN_ON_ONCE(!tp))
		goto out;

	if (container_of(tp, struct trace_uprobe, tp)->is_return) {
		struct uretprobe_entry_head *field = (void *)iter->ent;

		trace_seq_printf(s, "%s: (0x%lx <- 0x%lx)",
				 trace_probe_name(tp), field->ret_ip,
				 field->func);
		data = (u8 *)&field[1];
	} else {
		struct uprobe_entry_head *field = (void *)iter->ent;

		trace_seq_printf(s, "%s: (0x%lx)", trace_probe_name(tp),
				 field->ip);
		data = (u8 *)&field[1];
	}

	if (print_probe_args(s, tp->args, tp->nr_args, data, iter->ent) < 0)
		goto out;

	trace_seq_putc(s, '\n');
out:
	return trace_handle_return(s);
}

static int define_head_field(struct trace_event_call *call, const char *name,
			     size_t offset)
{
	return trace_define_field(call, "unsigned long", name, offset,
				  sizeof(unsigned long), 0, FILTER_OTHER);
}

/* The format: the head fields of the probe's kind, then the arguments. */
static int uprobe_event_define_fields(struct trace_event_call *call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(call);
	size_t head_size;
	int ret;

	if (WARN_ON_ONCE(!tp))
		return -ENOENT;

	if (container_of(tp, struct trace_uprobe, tp)->is_return) {
		const size_t func = offsetof(struct uretprobe_entry_head, func);
		const size_t ret_ip = offsetof(struct uretprobe_entry_head,
					       ret_ip);

		ret = define_head_field(call, FIELD_STRING_FUNC, func);
		if (!ret)
			ret = define_head_field(call, FIELD_STRING_RETIP, ret_ip);
		head_size = sizeof(struct uretprobe_entry_head);
	} else {
		const size_t ip = offsetof(struct uprobe_entry_head, ip);

		ret = define_head_field(call, FIELD_STRING_IP, ip);
		head_size = sizeof(struct uprobe_entry_head);
	}

	return ret ?: traceprobe_define_arg_fields(call, head_size, tp);
}

/*
 * What trace_events.c (tracefs instances) and trace_event_perf.c (perf,
 * and BPF through it) ask of the event, always under event_mutex.  For
 * the tracefs requests @data is the instance's file; perf's registration
 * is for all its events at once, its open and close for one of them.
 */
static int trace_uprobe_register(struct trace_event_call *event,
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

static struct trace_event_functions uprobe_funcs = {
	.trace		= print_uprobe_event,
};

static struct trace_event_fields uprobe_fields_array[] = {
	{ .type = TRACE_FUNCTION_TYPE,
	  .define_fields = uprobe_event_define_fields },
	{}
};

/**
 * trace_uprobe_init_event_call - set up the event of a new probe point
 * @tu: the probe point, whose event is its own
 *
 * Fills in what the event's format, output and registration need; the
 * caller registers the event (tracefs) or hands it to perf (local probes).
 */
void trace_uprobe_init_event_call(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	call->event.funcs = &uprobe_funcs;
	call->class->fields_array = uprobe_fields_array;
	call->flags = TRACE_EVENT_FL_UPROBE | TRACE_EVENT_FL_CAP_ANY;
	call->class->reg = trace_uprobe_register;
}

/* The tracefs files: both listings, and which one may be written. */
static const struct {
	const char	*name;
	umode_t		mode;
	uprobe_line_fn	print_line;
} uprobe_files[] = {
	{ "uprobe_events",	TRACE_MODE_WRITE,	trace_uprobe_show },
	{ "uprobe_profile",	TRACE_MODE_READ,	trace_uprobe_show_hits },
};

/*
 * The dynamic-event type is there even when tracefs is not (for the
 * in-kernel users of dynamic events); the files only with tracefs.
 */
static __init int init_uprobe_trace(void)
{
	int i, ret;

	ret = dyn_event_register(&trace_uprobe_ops);
	if (ret || tracing_init_dentry())
		return ret;

	for (i = 0; i < ARRAY_SIZE(uprobe_files); i++)
		trace_create_file(uprobe_files[i].name, uprobe_files[i].mode,
				  NULL, uprobe_files[i].print_line,
				  &uprobe_list_fops);
	return 0;
}

fs_initcall(init_uprobe_trace);
