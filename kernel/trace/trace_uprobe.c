// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events defined through tracefs (uprobe_events,
 * dynamic_events): parsing, adding, removing and listing them.
 *
 * event_mutex serialises definitions, enabling and perf open/close, and is
 * held around every consumer (un)registration and uprobe_apply().  A hit
 * takes no lock: it loads the flags with acquire, walks links under RCU.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/namei.h>
#include <linux/security.h>
#include <linux/string.h>

#include "trace_uprobe.h"

static struct dyn_event_operations trace_uprobe_ops;

/**
 * is_trace_uprobe - is a dynamic event a uprobe event?
 * @ev: the event
 *
 * Return: true for a uprobe event.
 */
bool is_trace_uprobe(struct dyn_event *ev)
{
	return ev->ops == &trace_uprobe_ops;
}

/**
 * trace_uprobe_alloc - allocate a probe point with an event of its own
 * @group: the event's group
 * @event: the event's name
 * @nargs: the number of fetch arguments
 * @is_return: whether this is a return probe
 *
 * Return: the probe, with no file yet, or an ERR_PTR().
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
	ret = tu->nhit ? trace_probe_init(&tu->tp, event, group, true) : -ENOMEM;
	if (ret < 0) {
		free_percpu(tu->nhit);
		kfree(tu);
		return ERR_PTR(ret);
	}
	/* The rest of the filter is zeroed by trace_probe_init(). */
	rwlock_init(&trace_uprobe_filter(tu)->rwlock);
	INIT_LIST_HEAD(&trace_uprobe_filter(tu)->perf_events);

	tu->is_return = is_return;
	tu->consumer.handler = trace_uprobe_dispatcher;
	if (is_return)
		tu->consumer.ret_handler = trace_uretprobe_dispatcher;
	tu->consumer.filter = trace_uprobe_consumer_filter;
	dyn_event_init(&tu->devent, &trace_uprobe_ops);
	INIT_LIST_HEAD(&tu->batch_node);
	refcount_set(&tu->ref, 1);

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
 * trace_uprobe_put - drop a reference to a probe point's memory
 * @tu: the probe point
 *
 * The last one frees it.
 *
 * Context: may sleep.
 */
void trace_uprobe_put(struct trace_uprobe *tu)
{
	if (refcount_dec_and_test(&tu->ref))
		trace_uprobe_release_memory(tu);
}

/*
 * trace_uprobe_stop_late_hits - no hit finished later writes any more
 * @tu: the probe point, whose handlers are over (uprobe_unregister_sync())
 *
 * A hit finished late (trace_uprobe_hit.c) writes in an RCU read-side
 * section, if @tu is not dead: after this its event's files may go, and
 * @tu->tp leave its event.
 *
 * Context: event_mutex held; waits for an RCU grace period, and only when
 * such a hit is pending.
 */
static void trace_uprobe_stop_late_hits(struct trace_uprobe *tu)
{
	if (refcount_read(&tu->ref) == 1) {
		/* After the last late hit's accesses: see its put. */
		smp_acquire__after_ctrl_dep();
		return;
	}
	WRITE_ONCE(tu->dead, true);
	synchronize_rcu();
}

/**
 * trace_uprobe_free - free a probe point
 * @tu: the probe, on no list and not registered, or NULL
 *
 * Context: may sleep: waits for handlers left running by a disable.
 */
void trace_uprobe_free(struct trace_uprobe *tu)
{
	if (!tu)
		return;

	WARN_ON_ONCE(tu->registered);
	uprobe_unregister_sync();
	/* A late hit may keep the rest, never the file's mount busy. */
	path_put(&tu->path);
	tu->path = (struct path){};
	trace_uprobe_put(tu);
}

static void trace_uprobe_free_work(struct work_struct *work)
{
	trace_uprobe_put(container_of(work, struct trace_uprobe, free_work));
}

/* SRCU callbacks run with bottom halves off; path_put() may sleep. */
static void trace_uprobe_free_rcu(struct rcu_head *head)
{
	struct trace_uprobe *tu = container_of(head, struct trace_uprobe, free_rcu);

	INIT_WORK(&tu->free_work, trace_uprobe_free_work);
	schedule_work(&tu->free_work);
}

/**
 * trace_uprobe_free_later - trace_uprobe_free() without waiting
 * @tu: the probe, on no list and not registered
 *
 * Frees @tu once no handler of it runs, from a workqueue.
 */
void trace_uprobe_free_later(struct trace_uprobe *tu)
{
	WARN_ON_ONCE(tu->registered);
	/* Handlers never use the path, and the mount must not stay busy. */
	path_put(&tu->path);
	tu->path = (struct path){};
	uprobe_call_after_unregister(&tu->free_rcu, trace_uprobe_free_rcu);
}

/*
 * The tracefs-defined probe points by event name and by place (inode,
 * offset): defining N probes must not cost O(N^2).  Under event_mutex.
 */
static DEFINE_HASHTABLE(tu_by_name, 12);
static DEFINE_HASHTABLE(tu_by_place, 12);

static u32 name_key(const char *event, const char *group)
{
	return jhash(event, strlen(event), jhash(group, strlen(group), 0));
}

static unsigned long place_key(struct trace_uprobe *tu)
{
	return (unsigned long)tu->inode ^ hash_long(tu->offset, BITS_PER_LONG);
}

static void trace_uprobe_link(struct trace_uprobe *tu)
{
	lockdep_assert_held(&event_mutex);
	dyn_event_add(&tu->devent, trace_probe_event_call(&tu->tp));
	hash_add(tu_by_name, &tu->name_node,
		 name_key(trace_probe_name(&tu->tp),
			  trace_probe_group_name(&tu->tp)));
	hash_add(tu_by_place, &tu->place_node, place_key(tu));
}

static void trace_uprobe_unlink(struct trace_uprobe *tu)
{
	lockdep_assert_held(&event_mutex);
	hash_del(&tu->name_node);
	hash_del(&tu->place_node);
	dyn_event_remove(&tu->devent);
}

/* The first probe point of a tracefs-defined event, or NULL. */
static struct trace_uprobe *trace_uprobe_find(const char *event, const char *group)
{
	struct trace_uprobe *tu;

	lockdep_assert_held(&event_mutex);
	hash_for_each_possible(tu_by_name, tu, name_node, name_key(event, group)) {
		if (!strcmp(trace_probe_name(&tu->tp), event) &&
		    !strcmp(trace_probe_group_name(&tu->tp), group))
			return trace_uprobe_primary_from_call(trace_probe_event_call(&tu->tp));
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

static bool same_place(struct trace_uprobe *a, struct trace_uprobe *b)
{
	return a->inode == b->inode && a->offset == b->offset;
}

static bool same_arg_bodies(struct trace_uprobe *a, struct trace_uprobe *b)
{
	int i;

	for (i = 0; i < a->tp.nr_args; i++)
		if (strcmp(a->tp.args[i].comm, b->tp.args[i].comm))
			return false;
	return true;
}

/* One format for all points of an event: same kind, names, types; no copy. */
static int may_join(struct trace_uprobe *tu, struct trace_uprobe *to)
{
	struct trace_uprobe *pos;
	int diff;

	trace_probe_log_set_index(0);
	if (tu->is_return != to->is_return) {
		trace_probe_log_err(0, DIFF_PROBE_TYPE);
		return -EEXIST;
	}

	diff = trace_probe_compare_arg_type(&tu->tp, &to->tp);
	if (diff) {
		/* @diff counts from 1; the arguments start at argv[2]. */
		trace_probe_log_set_index(diff + 1);
		trace_probe_log_err(0, DIFF_ARG_TYPE);
		return -EEXIST;
	}

	for_each_sibling(pos, &to->tp) {
		if (same_place(pos, tu) && same_arg_bodies(pos, tu)) {
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

	/* A point joining a live event works at once. */
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

/* The core keeps one reference counter per (inode, offset). */
static bool ref_ctr_conflicts(struct trace_uprobe *tu)
{
	struct trace_uprobe *other;

	hash_for_each_possible(tu_by_place, other, place_node, place_key(tu)) {
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

/* Parse "OFFSET[%return][(REF_CTR_OFFSET)]" at @offs, within @place. */
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

/* As 6.1 names an unnamed event, "p_" for a return probe too: p_BASE_0xOFFS. */
static void make_event_name(char *buf, const char *filename,
			    unsigned long offset)
{
	const char *base = kbasename(filename);
	int len = strcspn(base, "._-");		/* BASE ends at any of these */

	snprintf(buf, MAX_EVENT_NAME_LEN, "p_%.*s_0x%lx", len, base, offset);
}

/* symstr looks kernel symbols up, meaningless here: an unknown type. */
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

	/* Not ours, and not logged, unless "p"/"r" and a path with '/' and ":N". */
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

	/* "p:" and "r:" name the event; "r10" and the like do not. */
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

	tu->record_in_place = trace_uprobe_record_in_place(&tu->tp);
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

static int trace_uprobe_create(const char *raw_command)
{
	return trace_probe_create(raw_command, __trace_uprobe_create);
}

/* A line of uprobe_events: a deletion or a definition. */
static int create_or_delete_trace_uprobe(const char *line)
{
	int ret = line[0] == '-' ? dyn_event_release(line, &trace_uprobe_ops) :
				   dyn_event_create(line, &trace_uprobe_ops);

	/* Not a uprobe definition at all: plain EINVAL, nothing logged. */
	return ret == -ECANCELED ? -EINVAL : ret;
}

/* Remove a probe point; the last of an event takes it along, if unused. */
static int trace_uprobe_release(struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	int ret;

	lockdep_assert_held(&event_mutex);

	if (!trace_probe_has_sibling(&tu->tp) &&
	    (trace_probe_is_enabled(&tu->tp) || trace_event_dyn_busy(call)))
		return -EBUSY;
	/* Registered still only as a sibling of an enabled event. */
	trace_uprobe_unregister_consumer(tu, true);
	/* No late handler or hit may use the event's files, nor tu->tp.event. */
	uprobe_unregister_sync();
	trace_uprobe_stop_late_hits(tu);
	if (!trace_probe_has_sibling(&tu->tp)) {
		ret = trace_probe_unregister_event_call(&tu->tp);
		if (ret) {
			/* The probe stays; late hits meanwhile were lost. */
			WRITE_ONCE(tu->dead, false);
			return ret;
		}
	}

	trace_uprobe_unlink(tu);
	trace_probe_unlink(&tu->tp);
	trace_uprobe_free(tu);
	return 0;
}

static bool trace_uprobe_is_busy(struct dyn_event *ev)
{
	return trace_probe_is_enabled(&to_trace_uprobe(ev)->tp);
}

/* The place as listed and as a deletion names it: offsets in full hex. */
static char *place_string(struct trace_uprobe *tu)
{
	const int digits = sizeof(unsigned long) * 2;

	if (tu->ref_ctr_offset)
		return kasprintf(GFP_KERNEL, "%s:0x%0*lx(0x%lx)", tu->filename,
				 digits, tu->offset, tu->ref_ctr_offset);
	return kasprintf(GFP_KERNEL, "%s:0x%0*lx", tu->filename, digits, tu->offset);
}

/* "-:[GRP/]EVENT [PLACE [ARGS]]"; an empty EVENT matches the whole group. */
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

	return same && trace_probe_match_command_args(&tu->tp, argc - 1, argv + 1);
}

static int trace_uprobe_show(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	struct probe_arg *arg;
	char *place;

	place = place_string(tu);
	if (!place)
		return -ENOMEM;
	seq_printf(m, "%c:%s/%s %s", tu->is_return ? 'r' : 'p',
		   trace_probe_group_name(&tu->tp), trace_probe_name(&tu->tp), place);
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

/* One line of uprobe_profile: file, event, hits. */
static int trace_uprobe_show_hits(struct seq_file *m, struct dyn_event *ev)
{
	struct trace_uprobe *tu = to_trace_uprobe(ev);
	unsigned long nhit = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		nhit += *per_cpu_ptr(tu->nhit, cpu);
	seq_printf(m, "  %s %-44s %15lu\n", tu->filename,
		   trace_probe_name(&tu->tp), nhit);
	return 0;
}

/* uprobe_events and uprobe_profile share fops; i_private is the printer. */
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

	/* Truncating uprobe_events removes all uprobes, or none (EBUSY). */
	if (is_uprobe_events(file) && (file->f_mode & FMODE_WRITE) &&
	    (file->f_flags & O_TRUNC)) {
		ret = dyn_events_release_all(&trace_uprobe_ops);
		if (ret)
			return ret;
	}

	ret = seq_open(file, &uprobe_list_seq_ops);
	if (!ret)
		((struct seq_file *)file->private_data)->private = inode->i_private;
	return ret;
}

static ssize_t uprobe_list_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	if (!is_uprobe_events(file))
		return -EINVAL;

	return trace_parse_run_command(file, ubuf, count, ppos,
				       create_or_delete_trace_uprobe);
}

static const struct file_operations uprobe_list_fops = {
	.open = uprobe_list_open, .write = uprobe_list_write,
	.read_iter = seq_read_iter, .llseek = seq_lseek,
	.release = seq_release,
};

static const struct {
	const char	*name;
	umode_t		mode;
	uprobe_line_fn	print_line;
} uprobe_files[] = {
	{ "uprobe_events",	TRACE_MODE_WRITE,	trace_uprobe_show },
	{ "uprobe_profile",	TRACE_MODE_READ,	trace_uprobe_show_hits },
};

/* The dynamic-event type even without tracefs; the files only with it. */
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
