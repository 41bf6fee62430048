// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: a hit and its record, built once for the
 * tracefs instances and perf (and BPF) alike.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

#include <linux/sched/signal.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/unaligned.h>

#include "trace_uprobe.h"
#include "trace_probe_tmpl.h"

/* The largest record: strings are cut to fit one ring-buffer page. */
#define UPROBE_RECORD_MAX	(PAGE_SIZE - 128)

/* Records up to this size are built on the stack, bigger ones kmalloc'ed. */
#define UPROBE_RECORD_ONSTACK	128

/* Slack for build_record()'s clearing; buf first or GCC aligns it to 16. */
union uprobe_stack_record {
	u8				buf[UPROBE_RECORD_ONSTACK + sizeof(u64)];
	struct uprobe_entry_head	entry;
	struct uretprobe_entry_head	ret;
};

struct uprobe_hit {
	struct pt_regs		*regs;
	unsigned long		file_base;	/* for @+OFFSET */
	bool			nofault;	/* fetch without bringing a page in */
	bool			failed;		/* one of those fetches failed */
};

/*
 * Set by a failed read of user memory that a page fault might make good.
 * Read back only by a fetch without page faults, which runs with
 * preemption off (fetch_begin()).
 */
static DEFINE_PER_CPU(bool, fetch_failed);

static __always_inline void fetch_fail(unsigned long addr)
{
	/* A NULL pointer's faults are for good: no second try for them. */
	if (addr >= mmap_min_addr)
		this_cpu_write(fetch_failed, true);
}

static __always_inline void fetch_begin(struct uprobe_hit *hit)
{
	if (!hit->nofault)
		return;
	preempt_disable();
	pagefault_disable();
	__this_cpu_write(fetch_failed, false);
}

static __always_inline void fetch_end(struct uprobe_hit *hit)
{
	if (!hit->nofault)
		return;
	hit->failed |= __this_cpu_read(fetch_failed);
	pagefault_enable();
	preempt_enable();
}

/* A uprobe reads user memory only: plain and _user agree. */
static nokprobe_inline int probe_mem_read_user(void *dest, void *src, size_t size)
{
	if (likely(!copy_from_user(dest, (__force void __user *)src, size)))
		return 0;
	fetch_fail((unsigned long)src);
	return -EFAULT;
}

static nokprobe_inline int probe_mem_read(void *dest, void *src, size_t size)
{
	return probe_mem_read_user(dest, src, size);
}

/* With its NUL; 0 on a fault; a longer string is cut to the maximum. */
static nokprobe_inline int fetch_store_strlen_user(unsigned long addr)
{
	long len = strnlen_user((const char __user *)addr, MAX_STRING_SIZE);

	if (unlikely(!len))
		fetch_fail(addr);
	return min_t(long, len, MAX_STRING_SIZE);
}

static nokprobe_inline int fetch_store_strlen(unsigned long addr)
{
	return fetch_store_strlen_user(addr);
}

static void set_stored_len(void *dest, int len)
{
	*(u32 *)dest = make_data_loc(len, get_loc_offs(*(u32 *)dest));
}

/* Whole, or cut to fit the room with a NUL, or 0 bytes on a fault. */
static nokprobe_inline int fetch_store_string_user(unsigned long addr, void *dest, void *base)
{
	int room = get_loc_len(*(u32 *)dest);
	char *buf = get_loc_data(dest, base);
	long copied;

	if (unlikely(!room))
		return -ENOMEM;

	copied = strncpy_from_user(buf, (const char __user *)addr, room);
	if (copied < 0) {
		fetch_fail(addr);
		set_stored_len(dest, 0);
		return copied;
	}
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

	/* The parser gives these a string store and nothing else. */
	if (code->op != FETCH_OP_ST_STRING || code[1].op != FETCH_OP_END)
		return -EILSEQ;
	if (!dest)
		return len;

	room = get_loc_len(*(u32 *)dest);
	if (!room)
		return -ENOMEM;
	len = min(len, room);
	strscpy(get_loc_data(dest, base), str, len);
	set_stored_len(dest, len);
	return len;
}

static int
process_fetch_insn(struct fetch_insn *code, void *rec, void *dest, void *base)
{
	struct uprobe_hit *hit = rec;
	struct pt_regs *regs = hit->regs;
	unsigned long val;

	switch (code->op) {
	case FETCH_OP_REG:
		val = regs_get_register(regs, code->param);
		break;
	case FETCH_OP_STACKP:
		val = user_stack_pointer(regs);
		break;
	case FETCH_OP_STACK:	/* 0 on a fault */
		if (get_user(val, (unsigned long __user *)user_stack_pointer(regs) +
			     code->param))
			fetch_fail(user_stack_pointer(regs));
		break;
	case FETCH_OP_RETVAL:
		val = regs_return_value(regs);
		break;
	case FETCH_OP_IMM:
		val = code->immediate;
		break;
	case FETCH_OP_FOFFS:
		val = hit->file_base + code->immediate;
		break;
	case FETCH_OP_COMM:
		return store_kernel_string(current->comm, code + 1, dest, base);
	case FETCH_OP_DATA:
		return store_kernel_string(code->data, code + 1, dest, base);
	default:
		return -EILSEQ;
	}

	return process_fetch_insn_bottom(code + 1, val, dest, base);
}

/* Build the record: the head (already at @sr), the arguments, the strings. */
static __always_inline int build_record(struct trace_uprobe *tu,
					struct uprobe_hit *hit, int head_size,
					struct uprobe_record *rec,
					union uprobe_stack_record *sr)
{
	struct trace_probe *tp = &tu->tp;
	int room, dsize;
	void *data;

	/* __get_data_size() passes its "regs" on to process_fetch_insn(). */
	fetch_begin(hit);
	dsize = __get_data_size(tp, (void *)hit);
	fetch_end(hit);
	dsize = min_t(int, dsize, UPROBE_RECORD_MAX - head_size - tp->size);

	rec->size = head_size + tp->size + dsize;
	/* With room for perf's padding: perf takes it as it is. */
	room = trace_uprobe_perf_size(rec->size);
	if (room <= UPROBE_RECORD_ONSTACK) {
		rec->data = sr->buf;
		/* No stale byte out: a fault stores nothing, perf copies padding. */
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

	if (!tp->nr_args)
		return 0;
	fetch_begin(hit);
	store_trace_args(rec->data + head_size, tp, hit, head_size, dsize);
	fetch_end(hit);
	return 0;
}

/* The event file flags under which a hit takes the generic path. */
#define UPROBE_TRACE_GENERIC	(EVENT_FILE_FL_PID_FILTER |	\
				 EVENT_FILE_FL_FILTERED |	\
				 EVENT_FILE_FL_TRIGGER_MODE |	\
				 EVENT_FILE_FL_TRIGGER_COND |	\
				 EVENT_FILE_FL_SOFT_DISABLED)

/* Through trace_event_buffer_reserve(), for filters and triggers. */
static void uprobe_trace_generic(struct trace_event_file *file,
				 struct uprobe_record *rec,
				 unsigned int trace_ctx)
{
	struct trace_event_buffer fbuffer __uninitialized;	/* all set */

	if (trace_trigger_soft_disabled(file) ||
	    !trace_event_buffer_reserve(&fbuffer, file, rec->size))
		return;
	/* Head too: the reserved context counts our preempt_disable(). */
	memcpy(fbuffer.entry, rec->data, rec->size);
	fbuffer.trace_ctx = trace_ctx;
	trace_event_buffer_commit(&fbuffer);
}

/* For a file that neither filters nor triggers. */
static void uprobe_trace_plain(struct trace_event_file *file,
			       struct uprobe_record *rec,
			       unsigned int trace_ctx)
{
	struct trace_event_buffer fbuffer __uninitialized;	/* all set */

	fbuffer.buffer = file->tr->array_buffer.buffer;
	fbuffer.event = ring_buffer_lock_reserve(fbuffer.buffer, rec->size);
	if (!fbuffer.event)
		return;
	fbuffer.entry = ring_buffer_event_data(fbuffer.event);
	memcpy(fbuffer.entry, rec->data, rec->size);
	if (trace_event_commit_is_plain(file->tr)) {
		trace_buffer_unlock_commit_nostack(fbuffer.buffer, fbuffer.event);
		return;
	}
	fbuffer.trace_file = file;
	fbuffer.trace_ctx = trace_ctx;
	/* No regs: a stack trace from the user's shows the probed address only. */
	fbuffer.regs = NULL;
	trace_event_buffer_commit(&fbuffer);
}

/**
 * trace_uprobe_record_in_place - may hits write straight into the buffer?
 * @tp: the event's probe, its arguments parsed
 *
 * Only when every argument is a register, the stack pointer, the return
 * value or an immediate, stored raw or as a bitfield: no fault, no sleep.
 * The record must also fit on the stack, for instances that filter.
 *
 * Return: true when the hits may write their record in place.
 */
bool trace_uprobe_record_in_place(struct trace_probe *tp)
{
	struct fetch_insn *code;
	int i;

	if (tp->size > UPROBE_RECORD_ONSTACK - sizeof(struct uretprobe_entry_head))
		return false;
	for (i = 0; i < tp->nr_args; i++) {
		code = tp->args[i].code;
		if (code->op != FETCH_OP_REG && code->op != FETCH_OP_STACKP &&
		    code->op != FETCH_OP_RETVAL && code->op != FETCH_OP_IMM)
			return false;
		if ((++code)->op != FETCH_OP_ST_RAW)
			return false;
		if ((++code)->op == FETCH_OP_MOD_BF)
			code++;
		if (code->op != FETCH_OP_END)
			return false;
	}
	return true;
}

/* Write the head at @sr, then the arguments, into @file's ring buffer. */
static __always_inline void uprobe_trace_write_in_place(struct trace_event_file *file,
							struct trace_uprobe *tu,
							struct uprobe_hit *hit,
							union uprobe_stack_record *sr,
							int head_size)
{
	struct trace_buffer *buffer = file->tr->array_buffer.buffer;
	struct trace_probe *tp = &tu->tp;
	struct ring_buffer_event *event;
	void *entry;

	event = ring_buffer_lock_reserve(buffer, head_size + tp->size);
	if (!event)
		return;
	entry = ring_buffer_event_data(event);
	memcpy(entry, sr->buf, head_size);
	if (tp->nr_args)
		store_trace_args(entry + head_size, tp, hit, head_size, 0);
	trace_buffer_unlock_commit_nostack(buffer, event);
}

/*
 * To every instance tracing the event.  With no data in @rec yet, a plain
 * instance gets it written in place, any other gets it built at @sr first.
 * Nothing once @tu is dead (a late hit's; see uprobe_late_hit_run()).
 */
static __always_inline void uprobe_trace_output(struct trace_uprobe *tu,
						struct uprobe_record *rec,
						struct uprobe_hit *hit,
						union uprobe_stack_record *sr,
						int head_size)
{
	struct trace_event_call *call;
	bool built = rec->data;
	struct event_file_link *link;
	unsigned int trace_ctx;

	/* Before preempt_disable(): _dec() undoes it on preemptible kernels only. */
	trace_ctx = tracing_gen_ctx();
	/* The ring buffer and the pid filters want a fixed CPU. */
	preempt_disable();
	rcu_read_lock();
	if (unlikely(READ_ONCE(tu->dead)))
		goto out;
	call = trace_probe_event_call(&tu->tp);
	tracing_generic_entry_update(built ? rec->data : (void *)sr->buf,
				     call->event.type, trace_ctx);
	trace_probe_for_each_link_rcu(link, &tu->tp) {
		struct trace_event_file *file = link->file;
		bool generic = READ_ONCE(file->flags) & UPROBE_TRACE_GENERIC;

		if (!built) {
			if (likely(!generic && trace_event_commit_is_plain(file->tr))) {
				uprobe_trace_write_in_place(file, tu, hit, sr, head_size);
				continue;
			}
			if (tu->tp.nr_args)
				store_trace_args(sr->buf + head_size, &tu->tp, hit,
						 head_size, 0);
			rec->data = sr->buf;
			built = true;
		}
		if (unlikely(generic))
			uprobe_trace_generic(file, rec, trace_ctx);
		else
			uprobe_trace_plain(file, rec, trace_ctx);
	}
out:
	rcu_read_unlock();
	preempt_enable();
}

/*
 * A hit whose arguments need a page brought in, finished later in the hit
 * (uprobe_add_late_work()): out of the uprobes_srcu read section, where a
 * page that takes its time (a FUSE daemon's, a userfaultfd's) would hold up
 * every unregistration, and the tracefs operations behind event_mutex.
 * It holds a reference to @tu; it writes in an RCU read-side section, and
 * only while @tu is not dead (trace_uprobe_stop_late_hits()).
 */
struct uprobe_late_hit {
	struct uprobe_late_work		work;
	struct trace_uprobe		*tu;
	unsigned long			file_base;
	int				head_size;
	bool				traced;
	bool				to_perf;
	union {
		struct uprobe_entry_head	entry;
		struct uretprobe_entry_head	ret;
	} head;
};

static void uprobe_late_hit_run(struct uprobe_late_work *work, struct pt_regs *regs)
{
	struct uprobe_late_hit *late = container_of(work, struct uprobe_late_hit, work);
	union uprobe_stack_record sr __uninitialized;	/* the head copied in */
	struct uprobe_hit hit = { .regs = regs, .file_base = late->file_base };
	struct trace_uprobe *tu = late->tu;
	struct uprobe_record rec;

	if (fatal_signal_pending(current) || READ_ONCE(tu->dead))
		goto out;
	memcpy(sr.buf, &late->head, late->head_size);
	if (build_record(tu, &hit, late->head_size, &rec, &sr))
		goto out;
	/* A wait for the page that a kill ended read nothing. */
	if (fatal_signal_pending(current))
		goto free;
	if (late->traced)
		uprobe_trace_output(tu, &rec, &hit, &sr, late->head_size);
	if (late->to_perf) {
		/* A read-side section for trace_uprobe_stop_late_hits(). */
		preempt_disable();
		if (!READ_ONCE(tu->dead))
			trace_uprobe_perf_output(tu, regs, &rec);
		preempt_enable();
	}
free:
	if (rec.data != sr.buf)
		kfree(rec.data);
out:
	trace_uprobe_put(tu);
	kfree(late);
}

/* Finish the hit later; false without memory for it. */
static bool uprobe_hit_later(struct trace_uprobe *tu, struct uprobe_hit *hit,
			     union uprobe_stack_record *sr, int head_size,
			     bool traced, bool to_perf)
{
	struct uprobe_late_hit *late;

	/* No reclaim: it could wait on what we are leaving the wait for. */
	late = kmalloc(sizeof(*late), GFP_NOWAIT | __GFP_NOWARN);
	if (!late)
		return false;
	late->work.func = uprobe_late_hit_run;
	late->tu = tu;
	late->file_base = hit->file_base;
	late->head_size = head_size;
	late->traced = traced;
	late->to_perf = to_perf;
	memcpy(&late->head, sr->buf, head_size);
	/* Not the last: @tu is freed a grace period of uprobes_srcu after. */
	refcount_inc(&tu->ref);
	uprobe_add_late_work(&late->work);
	return true;
}

/* A hit, its head filled in: false when this mm wants no breakpoint. */
static __always_inline bool uprobe_hit(struct trace_uprobe *tu,
				       struct uprobe_hit *hit,
				       union uprobe_stack_record *sr,
				       int head_size)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	unsigned int flags = trace_probe_load_flag(&tu->tp);
	bool traced = flags & TP_FLAG_TRACE, to_perf = false;
	struct uprobe_record rec __uninitialized;	/* set below */

	if ((flags & TP_FLAG_PROFILE) &&
	    trace_uprobe_perf_wants(trace_uprobe_filter(tu), current->mm)) {
		/* Out of line only with BPF programs, which may drop the hit. */
		to_perf = !bpf_prog_array_valid(call) ||
			  trace_uprobe_perf_bpf(call, hit->regs);
	} else if (!traced) {
		/* Inherited from a parent, or installed for another consumer. */
		return false;
	}

	if (!to_perf) {
		if (!traced)
			return true;
		if (tu->record_in_place) {
			rec.data = NULL;
			rec.size = head_size + tu->tp.size;
			uprobe_trace_output(tu, &rec, hit, sr, head_size);
			return true;
		}
	}

	/*
	 * A fetch that failed may succeed with a page brought in: later in
	 * the hit.  Without memory for that, what could be read is recorded.
	 */
	hit->nofault = true;
	if (build_record(tu, hit, head_size, &rec, sr))
		return true;
	if (unlikely(hit->failed) &&
	    uprobe_hit_later(tu, hit, sr, head_size, traced, to_perf)) {
		if (rec.data != sr->buf)
			kfree(rec.data);
		return true;
	}

	if (traced)
		uprobe_trace_output(tu, &rec, hit, sr, head_size);
	if (to_perf)
		trace_uprobe_perf_output(tu, hit->regs, &rec);

	if (rec.data != sr->buf)
		kfree(rec.data);
	return true;
}

/**
 * trace_uprobe_dispatcher - a probe point's uprobe_consumer.handler
 * @uc: the consumer
 * @regs: the user registers
 *
 * A return probe's entry only decides whether to wait for the return.
 *
 * Context: the probed task, may sleep.
 * Return: 0, or UPROBE_HANDLER_REMOVE when nobody wants hits in this mm.
 */
int trace_uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;
	struct uprobe_entry_head *head = &sr.entry;
	struct uprobe_hit hit = { .regs = regs };
	unsigned long ip = instruction_pointer(regs);

	if (tu->is_return)
		return trace_uprobe_consumer_filter(uc, UPROBE_FILTER_MMAP, current->mm) ?
		       0 : UPROBE_HANDLER_REMOVE;
	this_cpu_inc(*tu->nhit);

	/*
	 * head->ent is filled in by tracefs, then perf.  Rewound or not, @ip
	 * and the probe's file offset agree below the page size.
	 */
	head->ip = ip - ((ip - tu->offset) & ~PAGE_MASK);
	hit.file_base = head->ip - tu->offset;

	return uprobe_hit(tu, &hit, &sr, sizeof(*head)) ?
	       0 : UPROBE_HANDLER_REMOVE;
}

/**
 * trace_uretprobe_dispatcher - a return probe's uprobe_consumer.ret_handler
 * @uc: the consumer
 * @func: the probed function's address
 * @regs: the user registers at the return
 *
 * Context: the probed task, may sleep.
 * Return: 0.
 */
int trace_uretprobe_dispatcher(struct uprobe_consumer *uc,
			       unsigned long func, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;
	struct uretprobe_entry_head *head = &sr.ret;
	struct uprobe_hit hit = { .regs = regs };

	this_cpu_inc(*tu->nhit);

	head->func = func;
	head->ret_ip = instruction_pointer(regs);
	hit.file_base = func - tu->offset;

	uprobe_hit(tu, &hit, &sr, sizeof(*head));
	return 0;
}

static enum print_line_t print_uprobe_event(struct trace_iterator *iter, int flags,
					    struct trace_event *event)
{
	struct trace_seq *s = &iter->seq;
	struct trace_probe *tp;
	u8 *data;

	tp = trace_probe_primary_from_call(container_of(event, struct trace_event_call, event));
	if (WARN_ON_ONCE(!tp))
		goto out;

	if (container_of(tp, struct trace_uprobe, tp)->is_return) {
		struct uretprobe_entry_head *field = (void *)iter->ent;

		trace_seq_printf(s, "%s: (0x%lx <- 0x%lx)", trace_probe_name(tp),
				 field->ret_ip, field->func);
		data = (u8 *)&field[1];
	} else {
		struct uprobe_entry_head *field = (void *)iter->ent;

		trace_seq_printf(s, "%s: (0x%lx)", trace_probe_name(tp), field->ip);
		data = (u8 *)&field[1];
	}

	if (print_probe_args(s, tp->args, tp->nr_args, data, iter->ent) == 0)
		trace_seq_putc(s, '\n');
out:
	return trace_handle_return(s);
}

/* The format: the head fields of the probe's kind, then the arguments. */
static int uprobe_event_define_fields(struct trace_event_call *event_call)
{
	struct trace_probe *tp = trace_probe_primary_from_call(event_call);
	size_t size;
	int ret;

	if (WARN_ON_ONCE(!tp))
		return -ENOENT;

	if (container_of(tp, struct trace_uprobe, tp)->is_return) {
		struct uretprobe_entry_head field;

		size = sizeof(field);
		DEFINE_FIELD(unsigned long, func, FIELD_STRING_FUNC, 0);
		DEFINE_FIELD(unsigned long, ret_ip, FIELD_STRING_RETIP, 0);
	} else {
		struct uprobe_entry_head field;

		size = sizeof(field);
		DEFINE_FIELD(unsigned long, ip, FIELD_STRING_IP, 0);
	}
	return traceprobe_define_arg_fields(event_call, size, tp);
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
 */
void trace_uprobe_init_event_call(struct trace_uprobe *tu)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);

	call->event.funcs = &uprobe_funcs;
	call->class->fields_array = uprobe_fields_array;
	call->flags = TRACE_EVENT_FL_UPROBE | TRACE_EVENT_FL_CAP_ANY;
	call->class->reg = trace_uprobe_register;
}
