/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef _LINUX_UPROBES_H
#define _LINUX_UPROBES_H
/*
 * User-space probes (uprobes): breakpoints at an (inode, offset) of an
 * executable file, hit by every process that maps that file.
 *
 * A consumer (a tracing event, a perf event, a BPF program) registers
 * itself on a file offset.  The core writes a breakpoint into a private,
 * copy-on-write copy of the page in every mm that maps the file, runs the
 * consumers' handlers when a thread hits it, then runs the original
 * instruction (emulated by the architecture or executed out of line in a
 * small per-mm area) and lets the thread go on.  Consumers with a
 * ret_handler also see the probed function return.
 *
 * This header is shared by the generic core (kernel/events/uprobes*.c),
 * the architecture code (arch/.../uprobes.c) and the rest of the kernel.
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

/*
 * Return probes pending on one task, at most.  A deeper call does not get
 * its return hijacked (its ret_handlers do not run) and is counted in
 * uprobes_dropped_returns; the program itself is not affected.
 */
#define MAX_URETPROBE_DEPTH		64

/* Why the core asks a consumer's filter whether it wants an mm. */
enum uprobe_filter_ctx {
	UPROBE_FILTER_REGISTER,		/* installing for a new consumer */
	UPROBE_FILTER_UNREGISTER,	/* a consumer left: keep it here? */
	UPROBE_FILTER_MMAP,		/* the file was just mapped */
};

/**
 * struct uprobe_consumer - one user of a probe
 * @handler: called at the probed instruction, before it runs, in the
 *	context of the task that hit it (may sleep).  Returns 0, or
 *	UPROBE_HANDLER_REMOVE to ask that the breakpoint leave this mm
 *	(honoured when every consumer with a handler asks it and no
 *	filter still wants the mm).
 * @ret_handler: called when the probed function returns, with the
 *	function's address and the registers at the return.
 * @filter: optional; says whether this consumer wants the breakpoint in
 *	@mm.  Must not sleep for long: it runs under the mm's mmap_lock.
 * @next: owned by the core (the probe's list of consumers).
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

/* Where a task is in handling a hit; arch code reads it (sparc). */
enum uprobe_task_state {
	UTASK_RUNNING,		/* not inside a hit */
	UTASK_SSTEP,		/* stepping the copy in the XOL slot */
	UTASK_SSTEP_ACK,	/* the step trapped back: finish it */
	UTASK_SSTEP_TRAPPED,	/* the step faulted or a fatal signal came */
};

/**
 * struct uprobe_task - per-thread uprobes state, allocated at a first hit
 * @state: see enum uprobe_task_state.
 * @autask: the architecture's per-thread step state.
 * @vaddr: address of the probed instruction while it is being stepped
 *	(or while the handlers run).
 * @xol_vaddr: address of the XOL slot holding the copy during a step;
 *	equal to @vaddr when a hit's step could not start and is retried.
 * @auprobe: the probe being handled or stepped (arch/x86/events reads
 *	->insn from handlers); NULL outside a hit.
 * @step_copy: the probe's arch data, copied for the step so that no
 *	reference on the probe is held while user space runs the slot.
 * @xol_slot: index of the XOL slot in its mm's area that this thread
 *	holds for the step in progress, 0 outside a step: a slot is lent
 *	for one step only (see start_step() in kernel/events/uprobes_hit.c).
 * @own_slot: index of the XOL slot this thread owns for running copies
 *	without a step (kernel/events/uprobes_direct.c), 0 when none.
 * @own_xol_vaddr: that slot's address.
 * @own_vaddr: the probed address whose copy the slot holds, 0 when none.
 * @own_copy: the arch data of that probe, as the slot was written from.
 * @return_instances: pending return probes, most recent first.
 * @depth: length of @return_instances.
 * @ri_cache: freed return instances kept for the thread's next returns.
 * @ri_cached: length of @ri_cache.
 * @jump_site: a probed address whose jump a single-step took into its
 *	stub (kernel/events/uprobes_jump.c): the hit is handled on the way
 *	back to user space; 0 otherwise.
 */
struct uprobe_task {
	enum uprobe_task_state		state;
	struct arch_uprobe_task		autask;
	unsigned long			vaddr;
	unsigned long			xol_vaddr;
	struct arch_uprobe		*auprobe;
	struct arch_uprobe		step_copy;
	unsigned int			xol_slot;
	unsigned int			own_slot;
	unsigned long			own_xol_vaddr;
	unsigned long			own_vaddr;
	struct arch_uprobe		own_copy;
	unsigned int			depth;
	struct return_instance		*return_instances;
	struct return_instance		*ri_cache;
	unsigned int			ri_cached;
	unsigned long			jump_site;
};

/* Context in which arch_uretprobe_is_alive() is asked about a frame. */
enum rp_check {
	RP_CHECK_CALL,		/* at a probed function's entry */
	RP_CHECK_CHAIN_CALL,	/* ... reached by a tail call from one */
	RP_CHECK_RET,		/* at the trampoline, after a return */
};

/**
 * struct return_instance - one hijacked return address
 * @uprobe: the probe whose entry hijacked it (a reference is held).
 * @func: the probed function's address (the entry breakpoint).
 * @stack: user stack pointer at the entry hit.
 * @orig_ret_vaddr: the real return address.
 * @chained: the return address found at entry was already the
 *	trampoline (a tail call from another probed function): this frame
 *	returns together with the next one on the list.
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
struct uprobe_jumps;

/**
 * struct uprobes_state - per-mm uprobes state (embedded in mm_struct)
 * @xol_area: the "[uprobes]" mapping with the trampoline and XOL slots,
 *	created at the first step or return probe in this mm.
 * @bp_table: the breakpoints installed in this mm, by address, read
 *	locklessly on a hit; created at the first install.
 * @jumps: the stubs that probed sites jump to instead of trapping, and
 *	the site each stands for (kernel/events/uprobes_jump.c); shared
 *	with forked children until one side adds a stub.
 */
struct uprobes_state {
	struct xol_area		*xol_area;
	struct uprobe_bp_table	*bp_table;
	struct uprobe_jumps __rcu	*jumps;
};

/* The architecture's side; __weak defaults live in the core. */
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
#ifndef arch_uprobe_ignore	/* or the architecture's inline one */
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
unsigned int arch_uprobe_jump_ok(struct arch_uprobe *aup, struct pt_regs *regs);
#ifndef arch_uprobe_jump_maybe
/* Whether arch_uprobe_jump_ok() may say yes: an architecture may tell early. */
static inline bool arch_uprobe_jump_maybe(const struct arch_uprobe *aup)
{
	return true;
}
#endif
unsigned int arch_uprobe_jump_insn(struct arch_uprobe *aup, unsigned long vaddr,
				   unsigned long stub, u8 *insn);
unsigned long arch_uprobe_jump_target(unsigned long vaddr, const u8 *code);
bool arch_uprobe_jump_stubs(void *page);
bool arch_uprobe_jump_rewind(struct pt_regs *regs, unsigned int at);
void arch_uprobe_jump_sync(void);
bool arch_uprobe_other_trap_insn(struct pt_regs *regs);
const void *arch_uretprobe_syscall_trampoline(unsigned int *len);
bool arch_uretprobe_may_use_syscall(struct pt_regs *regs);
int arch_uretprobe_syscall_unwind(struct pt_regs *regs);

/* The core, called by consumers. */
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
void uprobe_call_after_unregister(struct rcu_head *head, rcu_callback_t func);
int uprobe_register_batch(struct uprobe_reg *regs, unsigned int nr);
void uprobe_unregister_batch_nosync(struct uprobe_reg *regs, unsigned int nr);
int uprobe_analyze_unmapped(const struct path *path, loff_t offset);

/* The core, called by mm, fork, exec/exit, signals and traps. */
void uprobes_init(void);
int uprobe_mmap(struct vm_area_struct *vma);
void uprobe_munmap(struct vm_area_struct *vma, unsigned long start,
		   unsigned long end);
int uprobe_mremap(struct vm_area_struct *vma, unsigned long start,
		  unsigned long end);
void uprobe_start_dup_mmap(void);
void uprobe_end_dup_mmap(void);
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
void uprobe_handle_trampoline(struct pt_regs *regs);
unsigned long uprobe_jump_site(unsigned long stub, unsigned int *len,
			       unsigned int *at);
void uprobe_jump_hit(struct pt_regs *regs, unsigned long vaddr,
		     unsigned int len);
bool uprobe_jump_fixup(struct pt_regs *regs);
bool uprobe_jump_stepped(struct pt_regs *regs);
bool uprobe_jump_from_stub(struct pt_regs *regs);
void uprobe_jump_leave(struct pt_regs *regs);
void uprobe_fix_callchain(u64 *ips, unsigned int nr, bool in_user);

#else /* !CONFIG_UPROBES */

struct uprobes_state {
};

static inline void uprobes_init(void)
{
}

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

static inline void uprobe_unregister(struct inode *inode, loff_t offset,
				     struct uprobe_consumer *uc)
{
}

static inline void uprobe_unregister_nosync(struct inode *inode, loff_t offset,
					    struct uprobe_consumer *uc)
{
}

static inline void uprobe_unregister_sync(void)
{
}

static inline void uprobe_call_after_unregister(struct rcu_head *head,
						rcu_callback_t func)
{
	func(head);
}

static inline int uprobe_register_batch(struct uprobe_reg *regs,
					unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		regs[i].err = -EOPNOTSUPP;
	return nr ? -EOPNOTSUPP : 0;
}

static inline void uprobe_unregister_batch_nosync(struct uprobe_reg *regs,
						  unsigned int nr)
{
}

static inline int uprobe_analyze_unmapped(const struct path *path,
					  loff_t offset)
{
	return 0;
}

static inline int uprobe_mmap(struct vm_area_struct *vma)
{
	return 0;
}

static inline void uprobe_munmap(struct vm_area_struct *vma,
				 unsigned long start, unsigned long end)
{
}

static inline int uprobe_mremap(struct vm_area_struct *vma,
				unsigned long start, unsigned long end)
{
	return 0;
}

static inline void uprobe_start_dup_mmap(void)
{
}

static inline void uprobe_end_dup_mmap(void)
{
}

static inline void uprobe_dup_mmap(struct mm_struct *oldmm,
				   struct mm_struct *newmm)
{
}

static inline void uprobe_notify_resume(struct pt_regs *regs)
{
}

static inline bool uprobe_breakpoint_trap(struct pt_regs *regs)
{
	return false;
}

static inline bool uprobe_deny_signal(void)
{
	return false;
}

static inline void uprobe_free_utask(struct task_struct *t)
{
}

static inline void uprobe_copy_process(struct task_struct *t,
				       unsigned long flags)
{
}

static inline void uprobe_clear_state(struct mm_struct *mm)
{
}

static inline void uprobe_fix_callchain(u64 *ips, unsigned int nr,
					bool in_user)
{
}

static inline bool uprobe_jump_fixup(struct pt_regs *regs)
{
	return false;
}

static inline bool uprobe_jump_from_stub(struct pt_regs *regs)
{
	return false;
}

static inline void uprobe_jump_leave(struct pt_regs *regs)
{
}

static inline bool uprobe_in_syscall_trampoline(struct pt_regs *regs)
{
	return false;
}

/* A macro, so that this header need not pull in ptrace.h. */
#define uprobe_get_trap_addr(regs)	instruction_pointer(regs)

#endif /* !CONFIG_UPROBES */
#endif /* _LINUX_UPROBES_H */
