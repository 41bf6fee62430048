/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _LINUX_UPROBES_H
#define _LINUX_UPROBES_H
/*
 * User-space probes: breakpoints at an (inode, offset) of a file, hit by
 * every process that maps it.  A consumer registers on a file offset; the
 * core writes the breakpoint into each mm's private copy of the page,
 * runs the consumers' handlers on a hit, then runs the original
 * instruction (emulated, or stepped out of line) and, for consumers with
 * a ret_handler, catches the function's return.
 */

#include <linux/errno.h>
#include <linux/types.h>

struct inode;
struct path;
struct mm_struct;
struct notifier_block;
struct page;
struct pt_regs;
struct task_struct;
struct vm_area_struct;

/* A handler's return value: bit 0 asks to take the breakpoint out of this mm. */
#define UPROBE_HANDLER_REMOVE		1
#define UPROBE_HANDLER_MASK		1

/* Pending return probes per task; deeper returns are not caught. */
#define MAX_URETPROBE_DEPTH		64

/* Why the core asks a consumer's filter whether it wants an mm. */
enum uprobe_filter_ctx {
	UPROBE_FILTER_REGISTER,		/* installing for a new consumer */
	UPROBE_FILTER_UNREGISTER,	/* a consumer left: keep it here? */
	UPROBE_FILTER_MMAP,		/* the file was just mapped */
};

/**
 * struct uprobe_consumer - one user of a probe
 * @handler: runs before the probed instruction, in the task that hit it
 *	(may sleep).  Returns 0 or UPROBE_HANDLER_REMOVE: when every
 *	consumer's handler asks it, the breakpoint leaves this mm unless a
 *	filter still wants it.
 * @ret_handler: runs when the probed function returns, with its address.
 * @filter: optional; whether this consumer wants the breakpoint in @mm.
 *	May run under the mm's mmap_lock: must not sleep for long.
 * @next: the core's (the probe's consumer list).
 */
struct uprobe_consumer {
	int (*handler)(struct uprobe_consumer *self, struct pt_regs *regs);
	int (*ret_handler)(struct uprobe_consumer *self,
			   unsigned long func, struct pt_regs *regs);
	bool (*filter)(struct uprobe_consumer *self,
		       enum uprobe_filter_ctx ctx, struct mm_struct *mm);

	struct uprobe_consumer *next;
};

/**
 * struct uprobe_late_work - what a handler leaves for later in its hit
 * @func: runs once, in the task that hit, with the hit's registers, out of
 *	the handlers' read-side section and before the probed instruction
 *	runs or a return is hijacked: it may wait for a page.
 * @next: the core's.
 */
struct uprobe_late_work {
	void (*func)(struct uprobe_late_work *work, struct pt_regs *regs);
	struct uprobe_late_work *next;
};

/**
 * struct uprobe_reg - one registration of a batch
 * @inode: the file
 * @offset: the instruction's offset in it
 * @ref_ctr_offset: file offset of the SDT semaphore, or 0
 * @uc: the consumer
 * @err: set by uprobe_register_batch(): 0, or why this one failed
 */
struct uprobe_reg {
	struct inode		*inode;
	loff_t			offset;
	loff_t			ref_ctr_offset;
	struct uprobe_consumer	*uc;
	int			err;
};

#ifdef CONFIG_UPROBES
#include <asm/uprobes.h>

enum uprobe_task_state {
	UTASK_RUNNING,		/* not inside a hit */
	UTASK_SSTEP,		/* stepping the copy in the XOL slot */
	UTASK_SSTEP_ACK,	/* the step trapped back: finish it */
	UTASK_SSTEP_TRAPPED,	/* the step faulted or a fatal signal came */
};

/* Per-thread state, allocated at the first hit. */
struct uprobe_task {
	enum uprobe_task_state		state;
	struct arch_uprobe_task		autask;		/* the arch's step state */
	/* The probed address, while handlers run or its copy is stepped. */
	unsigned long			vaddr;
	/* The slot being stepped; @vaddr when a step is retried. */
	unsigned long			xol_vaddr;
	struct arch_uprobe		*auprobe;	/* in a hit (perf reads it) */
	/* Kept for the step: no probe reference while user space runs. */
	struct arch_uprobe		step_copy;
	unsigned int			xol_slot;	/* lent for the step, or 0 */
	/* The slot this thread owns for direct runs (or 0), and its copy. */
	unsigned int			own_slot;
	unsigned long			own_xol_vaddr;
	unsigned long			own_vaddr;	/* probed address, or 0 */
	struct arch_uprobe		own_copy;
	unsigned int			depth;		/* of @return_instances */
	struct return_instance		*return_instances; /* newest first */
	struct return_instance		*ri_cache;	/* kept for reuse */
	unsigned int			ri_cached;
	bool				syscall_hidden;	/* from ptrace, till its exit */
	struct uprobe_late_work		*late_work;	/* of this hit, oldest first */
};

/* Context in which arch_uretprobe_is_alive() is asked about a frame. */
enum rp_check {
	RP_CHECK_CALL,		/* at a probed function's entry */
	RP_CHECK_CHAIN_CALL,	/* ... reached by a tail call from one */
	RP_CHECK_RET,		/* at the trampoline, after a return */
};

/**
 * struct return_instance - one hijacked return address
 * @uprobe: the probe that hijacked it (referenced).
 * @func: the probed function's address.
 * @stack: user stack pointer at the entry hit.
 * @orig_ret_vaddr: the real return address.
 * @chained: the return address was the trampoline already (a tail call):
 *	this frame returns with the next one.
 * @next: the next older instance.
 */
struct return_instance {
	struct uprobe			*uprobe;
	unsigned long			func;
	unsigned long			stack;
	unsigned long			orig_ret_vaddr;
	bool				chained;
	struct return_instance		*next;
};

struct xol_area;
struct uprobe_bp_table;

/**
 * struct uprobes_state - per-mm state, in mm_struct
 * @xol_area: the "[uprobes]" mapping (trampolines, XOL slots), or NULL.
 * @bp_table: the breakpoints installed in this mm, or NULL.
 * @move_start: with @move_end, the range mremap() is moving page table
 *	entries into, between uprobe_start_move() and uprobe_end_move().
 * @move_end: the end of that range; 0 when no move is under way.
 */
struct uprobes_state {
	struct xol_area		*xol_area;
	struct uprobe_bp_table	*bp_table;
	unsigned long		move_start;
	unsigned long		move_end;
};

/* The architecture's; the core has __weak defaults for some. */
int set_swbp(struct arch_uprobe *aup, struct mm_struct *mm, unsigned long vaddr);
int set_orig_insn(struct arch_uprobe *aup, struct mm_struct *mm, unsigned long vaddr);
bool is_swbp_insn(uprobe_opcode_t *insn);
bool is_trap_insn(uprobe_opcode_t *insn);
unsigned long uprobe_get_swbp_addr(struct pt_regs *regs);
unsigned long uprobe_get_trap_addr(struct pt_regs *regs);
int uprobe_write_opcode(struct arch_uprobe *auprobe, struct mm_struct *mm,
			unsigned long vaddr, uprobe_opcode_t opcode);
int arch_uprobe_analyze_insn(struct arch_uprobe *aup, struct mm_struct *mm,
			     unsigned long addr);
int arch_uprobe_pre_xol(struct arch_uprobe *aup, struct pt_regs *regs);
int arch_uprobe_post_xol(struct arch_uprobe *aup, struct pt_regs *regs);
bool arch_uprobe_xol_was_trapped(struct task_struct *tsk);
int arch_uprobe_exception_notify(struct notifier_block *self,
				 unsigned long val, void *data);
void arch_uprobe_abort_xol(struct arch_uprobe *aup, struct pt_regs *regs);
unsigned long arch_uretprobe_hijack_return_addr(unsigned long trampoline_vaddr,
						struct pt_regs *regs);
bool arch_uretprobe_is_alive(struct return_instance *ret, enum rp_check ctx,
			     struct pt_regs *regs);
#ifndef arch_uprobe_ignore
bool arch_uprobe_ignore(struct arch_uprobe *aup, struct pt_regs *regs);
#endif
void arch_uprobe_copy_ixol(struct page *page, unsigned long vaddr,
			   void *src, unsigned long len);
bool arch_uprobe_skip_sstep(struct arch_uprobe *aup, struct pt_regs *regs);
bool arch_uprobe_direct_ok(struct arch_uprobe *aup, struct pt_regs *regs);
unsigned int arch_uprobe_direct_code(struct arch_uprobe *aup,
				     unsigned long vaddr, u8 *code);
unsigned long arch_uprobe_direct_next(struct arch_uprobe *aup,
				      unsigned long vaddr);
bool arch_uprobe_direct_start(struct arch_uprobe *aup, unsigned long vaddr,
			      struct pt_regs *regs);
void arch_uprobe_direct_leave(struct arch_uprobe *aup, struct pt_regs *regs);
bool arch_uprobe_direct_trapped(void);
void arch_uprobe_trap_not_ours(struct pt_regs *regs);
bool arch_uprobe_other_trap_insn(struct pt_regs *regs);
const void *arch_uretprobe_syscall_trampoline(unsigned int *len);
bool arch_uretprobe_may_use_syscall(struct pt_regs *regs);
int arch_uretprobe_syscall_unwind(struct pt_regs *regs);

/* For consumers. */
int uprobe_register(struct inode *inode, loff_t offset,
		    struct uprobe_consumer *uc);
int uprobe_register_refctr(struct inode *inode, loff_t offset,
			   loff_t ref_ctr_offset, struct uprobe_consumer *uc);
int uprobe_apply(struct inode *inode, loff_t offset,
		 struct uprobe_consumer *uc, bool add);
void uprobe_unregister(struct inode *inode, loff_t offset,
		       struct uprobe_consumer *uc);
void uprobe_unregister_nosync(struct inode *inode, loff_t offset,
			      struct uprobe_consumer *uc);
void uprobe_unregister_sync(void);
void uprobe_add_late_work(struct uprobe_late_work *work);
void uprobe_call_after_unregister(struct rcu_head *head, rcu_callback_t func);
int uprobe_register_batch(struct uprobe_reg *regs, unsigned int nr);
void uprobe_unregister_batch_nosync(struct uprobe_reg *regs, unsigned int nr);
int uprobe_analyze_unmapped(const struct path *path, loff_t offset);

/* For mm, fork, exit, signals and traps. */
void uprobes_init(void);
int uprobe_mmap(struct vm_area_struct *vma);
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end);
void uprobe_start_dup_mmap(void);
void uprobe_end_dup_mmap(void);
void uprobe_start_move(struct mm_struct *mm, unsigned long start,
		       unsigned long end);
void uprobe_end_move(struct mm_struct *mm);
void uprobe_dup_mmap(struct mm_struct *oldmm, struct mm_struct *newmm);
void uprobe_free_utask(struct task_struct *t);
void uprobe_copy_process(struct task_struct *t, unsigned long flags);
void uprobe_clear_state(struct mm_struct *mm);
int uprobe_pre_sstep_notifier(struct pt_regs *regs);
int uprobe_post_sstep_notifier(struct pt_regs *regs);
void uprobe_notify_resume(struct pt_regs *regs);
bool uprobe_breakpoint_trap(struct pt_regs *regs);
bool uprobe_deny_signal(void);
unsigned long uprobe_get_trampoline_vaddr(void);
unsigned long uprobe_get_syscall_trampoline_vaddr(void);
bool uprobe_in_syscall_trampoline(struct pt_regs *regs);
bool uprobe_syscall_hide_entry(struct pt_regs *regs);
bool uprobe_syscall_hide_exit(void);
void uprobe_handle_trampoline(struct pt_regs *regs);
void uprobe_fix_callchain(u64 *ips, unsigned int nr, bool in_user);

#else /* !CONFIG_UPROBES */

struct uprobes_state {
};

static inline int uprobe_register(struct inode *inode, loff_t offset,
				  struct uprobe_consumer *uc)
{
	return -EOPNOTSUPP;
}

static inline int uprobe_register_refctr(struct inode *inode, loff_t offset,
					 loff_t ref_ctr_offset,
					 struct uprobe_consumer *uc)
{
	return -EOPNOTSUPP;
}

static inline int uprobe_apply(struct inode *inode, loff_t offset,
			       struct uprobe_consumer *uc, bool add)
{
	return -EOPNOTSUPP;
}

static inline int uprobe_register_batch(struct uprobe_reg *regs,
					unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		regs[i].err = -EOPNOTSUPP;
	return nr ? -EOPNOTSUPP : 0;
}

static inline void uprobe_call_after_unregister(struct rcu_head *head,
						rcu_callback_t func)
{
	func(head);
}

static inline void uprobe_unregister(struct inode *inode, loff_t offset,
				     struct uprobe_consumer *uc) { }
static inline void uprobe_unregister_nosync(struct inode *inode, loff_t offset,
					    struct uprobe_consumer *uc) { }
static inline void uprobe_unregister_batch_nosync(struct uprobe_reg *regs,
						  unsigned int nr) { }
static inline void uprobe_unregister_sync(void) { }
static inline int uprobe_analyze_unmapped(const struct path *path,
					  loff_t offset) { return 0; }

static inline void uprobes_init(void) { }
static inline int uprobe_mmap(struct vm_area_struct *vma) { return 0; }
static inline void uprobe_munmap(struct vm_area_struct *vma,
				 unsigned long start, unsigned long end) { }
static inline void uprobe_start_dup_mmap(void) { }
static inline void uprobe_end_dup_mmap(void) { }
static inline void uprobe_start_move(struct mm_struct *mm, unsigned long start,
				     unsigned long end) { }
static inline void uprobe_end_move(struct mm_struct *mm) { }
static inline void uprobe_dup_mmap(struct mm_struct *oldmm,
				   struct mm_struct *newmm) { }
static inline void uprobe_free_utask(struct task_struct *t) { }
static inline void uprobe_copy_process(struct task_struct *t,
				       unsigned long flags) { }
static inline void uprobe_clear_state(struct mm_struct *mm) { }
static inline void uprobe_notify_resume(struct pt_regs *regs) { }
static inline bool uprobe_breakpoint_trap(struct pt_regs *regs) { return false; }
static inline bool uprobe_deny_signal(void) { return false; }
static inline bool uprobe_in_syscall_trampoline(struct pt_regs *regs) { return false; }
static inline bool uprobe_syscall_hide_entry(struct pt_regs *regs) { return false; }
static inline bool uprobe_syscall_hide_exit(void) { return false; }

static inline void uprobe_fix_callchain(u64 *ips, unsigned int nr,
					bool in_user) { }

/* A macro, so that this header need not pull in ptrace.h. */
#define uprobe_get_trap_addr(regs)	instruction_pointer(regs)

#endif /* !CONFIG_UPROBES */
#endif /* _LINUX_UPROBES_H */
