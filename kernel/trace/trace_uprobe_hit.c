// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-based trace events: a hit.  The consumer's handlers fetch the
 * event's arguments from the probed task, build the record once and hand
 * it to the tracefs instances and to perf (and BPF) alike.
 */
#define pr_fmt(fmt)	"trace_uprobe: " fmt

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
 * a word at a time (hence the word of slack).  The array comes first:
 * GCC gives a union whose first member is a 16-byte struct a 16-byte
 * alignment, which the dispatchers would pay for with a stack
 * realignment on every hit.
 */
union uprobe_stack_record {
	u8				buf[UPROBE_RECORD_ONSTACK + sizeof(u64)];
	struct uprobe_entry_head	entry;
	struct uretprobe_entry_head	ret;
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

/*
 * The flags of an instance's event file under which a hit takes the
 * generic path: a pid filter, an event filter, triggers, soft disabling.
 * Each may drop the record or do more with it.
 */
#define UPROBE_TRACE_GENERIC	(EVENT_FILE_FL_PID_FILTER |	\
				 EVENT_FILE_FL_FILTERED |	\
				 EVENT_FILE_FL_TRIGGER_MODE |	\
				 EVENT_FILE_FL_TRIGGER_COND |	\
				 EVENT_FILE_FL_SOFT_DISABLED)

/*
 * Write the record to @file's instance through trace_event_buffer_reserve()
 * and trace_event_buffer_commit(), which apply its filters and triggers.
 */
static void uprobe_trace_generic(struct trace_event_file *file,
				 struct uprobe_record *rec,
				 unsigned int trace_ctx)
{
	/* trace_event_buffer_reserve() sets every field. */
	struct trace_event_buffer fbuffer __uninitialized;
	void *entry;

	if (trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file, rec->size);
	if (!entry)
		return;
	/*
	 * The head too: the context reserving guessed counts our
	 * preempt_disable() and rcu_read_lock() when the kernel counts
	 * without preempting.
	 */
	memcpy(entry, rec->data, rec->size);
	fbuffer.trace_ctx = trace_ctx;
	trace_event_buffer_commit(&fbuffer);
}

/*
 * Write the record, its trace_entry filled in, to the instance of a file
 * that neither filters nor triggers.  Reserving and copying is all that
 * trace_event_buffer_reserve() would do for it, and the record is copied
 * whole.  Committing is all that trace_event_buffer_commit() would do,
 * unless the instance wants stack traces or the events are printed or
 * exported.
 */
static void uprobe_trace_plain(struct trace_event_file *file,
			       struct uprobe_record *rec,
			       unsigned int trace_ctx)
{
	/* Every field is set below: not zeroed first on every hit. */
	struct trace_event_buffer fbuffer __uninitialized;

	fbuffer.buffer = file->tr->array_buffer.buffer;
	fbuffer.event = ring_buffer_lock_reserve(fbuffer.buffer, rec->size);
	if (!fbuffer.event)
		return;
	fbuffer.entry = ring_buffer_event_data(fbuffer.event);
	memcpy(fbuffer.entry, rec->data, rec->size);
	if (trace_event_commit_is_plain(file->tr)) {
		trace_buffer_unlock_commit_nostack(fbuffer.buffer,
						   fbuffer.event);
		return;
	}
	fbuffer.trace_file = file;
	fbuffer.trace_ctx = trace_ctx;
	/*
	 * No registers: options/stacktrace records the kernel stack of
	 * this hit.  Ours are the user's, from which the unwinder would
	 * find only the probed address.
	 */
	fbuffer.regs = NULL;
	trace_event_buffer_commit(&fbuffer);
}

/**
 * trace_uprobe_record_in_place - may hits write their record into the buffer?
 * @tp: the event's probe, its arguments parsed
 *
 * Every argument must be a value of the hit itself (a register, the stack
 * pointer, the return value, an immediate), stored as it is or as a
 * bitfield.  A dereference reads user memory, which may
 * fault and sleep where a reserved ring-buffer event allows neither, and a
 * string's size is known only once it is read: such records are built
 * first and copied.  The record must also fit on the stack, for instances
 * that filter or trigger.
 *
 * Return: true when the hits of a tracefs-only event may write in place.
 */
bool trace_uprobe_record_in_place(struct trace_probe *tp)
{
	struct fetch_insn *code;
	int i;

	if (tp->size > UPROBE_RECORD_ONSTACK - sizeof(struct uretprobe_entry_head))
		return false;
	for (i = 0; i < tp->nr_args; i++) {
		code = tp->args[i].code;
		switch (code->op) {
		case FETCH_OP_REG:
		case FETCH_OP_STACKP:
		case FETCH_OP_RETVAL:
		case FETCH_OP_IMM:
			break;
		default:
			return false;
		}
		if ((++code)->op != FETCH_OP_ST_RAW)
			return false;
		if ((++code)->op == FETCH_OP_MOD_BF)
			code++;
		if (code->op != FETCH_OP_END)
			return false;
	}
	return true;
}

/*
 * Write a record that trace_uprobe_record_in_place() allows straight
 * into @file's ring buffer: the head (at the start of @sr, its trace_entry
 * filled in), then the arguments.  For a plain file (no filter, trigger
 * or pid filter) whose commit is plain.
 */
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
	/* A constant size: a few stores, not a copy loop. */
	memcpy(entry, sr->buf, head_size);
	if (tp->nr_args)
		store_trace_args(entry + head_size, tp, hit, head_size, 0);
	trace_buffer_unlock_commit_nostack(buffer, event);
}

/*
 * Write the hit's record to every tracefs instance tracing it.  @rec is
 * the record build_record() made, or, when trace_uprobe_record_in_place()
 * allows, has no data yet: a plain instance then gets it written straight
 * into its ring buffer, and any other gets it built at @sr first (every
 * byte is written: nothing to clear).  The head, at the start of the
 * record or of @sr, has its fields other than the trace_entry filled in.
 */
static __always_inline void uprobe_trace_output(struct trace_uprobe *tu,
						struct uprobe_record *rec,
						struct uprobe_hit *hit,
						union uprobe_stack_record *sr,
						int head_size)
{
	struct trace_event_call *call = trace_probe_event_call(&tu->tp);
	bool built = rec->data;
	struct event_file_link *link;
	unsigned int trace_ctx;

	/*
	 * The probed task's context, the same for every instance, taken
	 * before preempt_disable(): tracing_gen_ctx_dec() would take that
	 * back only on a preemptible kernel, not where the count is kept
	 * for debugging alone (PREEMPT_NONE with DEBUG_ATOMIC_SLEEP).
	 */
	trace_ctx = tracing_gen_ctx();
	tracing_generic_entry_update(built ? rec->data : (void *)sr->buf,
				     call->event.type, trace_ctx);
	/* The ring buffer and the pid filters want a fixed CPU. */
	preempt_disable();
	rcu_read_lock();
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
	struct uprobe_record rec __uninitialized;	/* set below */

	if ((flags & TP_FLAG_PROFILE) &&
	    trace_uprobe_perf_wants(trace_uprobe_filter(tu), current->mm)) {
		to_perf = trace_uprobe_perf_run_bpf(tu, hit->regs);
	} else if (!traced) {
		/* Inherited from a parent, or installed for another consumer. */
		return false;
	}

	if (!to_perf) {
		if (!traced)
			return true;
		/*
		 * Arguments that cannot fault: no record built first (see
		 * uprobe_trace_output()).  A call of its own, so that the
		 * compiler knows the record has no data yet.
		 */
		if (tu->record_in_place) {
			rec.data = NULL;
			rec.size = head_size + tu->tp.size;
			uprobe_trace_output(tu, &rec, hit, sr, head_size);
			return true;
		}
	}

	if (build_record(tu, hit, head_size, &rec, sr))
		return true;

	if (traced)
		uprobe_trace_output(tu, &rec, hit, sr, head_size);
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

int trace_uprobe_dispatcher(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;	/* see uprobe_hit() */
	struct uprobe_entry_head *head = &sr.entry;
	struct uprobe_hit hit = { .regs = regs };

	/* A return probe's entry only decides whether to wait for the return. */
	if (tu->is_return) {
		if (trace_uprobe_consumer_filter(uc, UPROBE_FILTER_MMAP, current->mm))
			return 0;
		return UPROBE_HANDLER_REMOVE;
	}
	this_cpu_inc(*tu->nhit);

	/* head->ent: tracefs, then perf, fill it in. */
	head->ip = probe_vaddr(tu, regs);
	hit.file_base = head->ip - tu->offset;

	return uprobe_hit(tu, &hit, &sr, sizeof(*head)) ?
	       0 : UPROBE_HANDLER_REMOVE;
}

int trace_uretprobe_dispatcher(struct uprobe_consumer *uc,
			       unsigned long func, struct pt_regs *regs)
{
	struct trace_uprobe *tu = container_of(uc, struct trace_uprobe, consumer);
	union uprobe_stack_record sr __uninitialized;	/* see uprobe_hit() */
	struct uretprobe_entry_head *head = &sr.ret;
	struct uprobe_hit hit = { .regs = regs };

	this_cpu_inc(*tu->nhit);

	head->func = func;
	head->ret_ip = instruction_pointer(regs);
	hit.file_base = func - tu->offset;

	uprobe_hit(tu, &hit, &sr, sizeof(*head));
	return 0;
}

/* A record as the trace file shows it. */
enum print_line_t trace_uprobe_print_event(struct trace_iterator *iter, int flags,
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
