// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uprobes/x86: probed long nops entered by a jump instead of an int3.
 *
 * A probe on a nop of five bytes or more (0f 1f /0, with any prefixes)
 * in 64-bit code is, after its first hit in an mm, a jmp rel32 to a stub
 * in a "[uprobes-jump]" page within 2 GiB (kernel/events/uprobes_jump.c
 * places, binds and writes).  The jump pushes nothing: the 128 bytes
 * below %rsp that the ABI leaves to leaf functions (the red zone) are
 * never touched.  The stub moves %rsp below the red zone before its
 * first store, saves the three registers the syscall instruction and its
 * number destroy, and enters the kernel by the uprobe syscall, which
 * puts them back, runs the consumers with every register as at an int3
 * on the nop, and returns to the instruction after it.
 *
 * Whoever else sees the thread in a stub gets the site instead: a signal
 * (its frame, a debugger's stop, a core dump) finds it put back at the
 * site with what the stub changed undone (arch_uprobe_jump_rewind()); a
 * fault in the stub, such as a push on a bogus %rsp, is not delivered but
 * undone, and the hit handled as if the nop had run (fixup_vdso_exception()
 * calls uprobe_jump_fixup()); a single-step that took the jump ends after
 * the nop (uprobe_jump_stepped()).  Known to show the stub: a ptracer
 * tracing syscalls sees the stub's, and a thread preempted in the stub
 * (a few instructions) is seen there by a profiler's sample or an rseq
 * abort check, as with a step out of line.
 */

#include <linux/ptrace.h>
#include <linux/sync_core.h>
#include <linux/syscalls.h>
#include <linux/uprobes.h>
#include <asm/unaligned.h>

#define UPROBE_JUMP_RED_ZONE	128
#define UPROBE_JMP32		0xe9

/*
 * The stub, UPROBE_JUMP_STUB_BYTES long, the same for every site: the
 * kernel knows the site from the stub's address.  Offsets in the comments
 * are what arch_uprobe_jump_rewind() knows them by.
 */
static const u8 uprobe_jump_stub[UPROBE_JUMP_STUB_BYTES] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,		/*  0: lea -0x80(%rsp),%rsp */
	0x50,					/*  5: push %rax */
	0x51,					/*  6: push %rcx */
	0x41, 0x53,				/*  7: push %r11 */
	0xb8, __NR_uprobe & 0xff,		/*  9: mov $__NR_uprobe,%eax */
	(__NR_uprobe >> 8) & 0xff, 0, 0,
	0x0f, 0x05,				/* 14: syscall */
	/* Reached only when the syscall did not run: undo, then trap. */
	0x41, 0x5b,				/* 16: pop %r11 */
	0x59,					/* 18: pop %rcx */
	0x58,					/* 19: pop %rax */
	0x48, 0x8d, 0xa4, 0x24,			/* 20: lea 0x80(%rsp),%rsp */
	0x80, 0x00, 0x00, 0x00,
	0xcc,					/* 28: int3 */
	0xcc, 0xcc, 0xcc,
};

/* What the stub pushed, lowest address first: the return trampoline's frame. */
struct uprobe_jump_frame {
	unsigned long	r11;
	unsigned long	cx;
	unsigned long	ax;
};

/**
 * arch_uprobe_jump_stubs() - fill the page of stubs
 * @page: a page's kernel address
 *
 * Return: true.
 */
bool arch_uprobe_jump_stubs(void *page)
{
	unsigned int i;

	BUILD_BUG_ON(UPROBE_JUMP_SYSCALL_AT != 16 || UPROBE_JUMP_TRAP_AT != 28);
	BUILD_BUG_ON(uprobe_jump_stub[UPROBE_JUMP_TRAP_AT] != 0xcc);
	for (i = 0; i < PAGE_SIZE / UPROBE_JUMP_STUB_BYTES; i++)
		memcpy(page + i * UPROBE_JUMP_STUB_BYTES, uprobe_jump_stub,
		       UPROBE_JUMP_STUB_BYTES);
	return true;
}

/**
 * arch_uprobe_jump_sync() - make this CPU fetch code anew
 *
 * Run on each CPU that runs an mm whose code a jump was just written into
 * or taken out of, between the steps of the change.
 */
void arch_uprobe_jump_sync(void)
{
	sync_core();
}

/* 0f 1f /0 behind prefixes: the long nop forms compilers emit. */
static bool uprobe_x86_long_nop(const u8 *insn, unsigned int len)
{
	unsigned int i = 0;

	while (i < len &&
	       (insn[i] == 0x66 || insn[i] == 0x67 || insn[i] == 0xf2 ||
		insn[i] == 0xf3 || insn[i] == 0x2e || insn[i] == 0x3e ||
		insn[i] == 0x26 || insn[i] == 0x36 || insn[i] == 0x64 ||
		insn[i] == 0x65))
		i++;
	if (i < len && (insn[i] & 0xf0) == 0x40)	/* REX */
		i++;
	return i + 2 < len && insn[i] == 0x0f && insn[i + 1] == 0x1f &&
	       !(insn[i + 2] & 0x38);
}

/**
 * arch_uprobe_jump_ok() - may this probe's breakpoint become a jump?
 * @aup: the probe, just hit
 * @regs: the registers of the thread that hit it
 *
 * Return: the instruction's length when it is a long nop of at least a
 * jump's size, in 64-bit code, run by a 64-bit thread; 0 otherwise.
 */
unsigned int arch_uprobe_jump_ok(struct arch_uprobe *aup, struct pt_regs *regs)
{
	const struct uprobe_x86_op *op = &aup->op;

	/* The hit path asked arch_uprobe_jump_maybe() already: the same test. */
	if (!arch_uprobe_jump_maybe(aup) || !op->is64 || !user_64bit_mode(regs) ||
	    !uprobe_x86_long_nop(aup->insn, op->len))
		return 0;
	return op->len;
}

/**
 * arch_uprobe_jump_insn() - the jump from a site to a stub
 * @aup: the probe
 * @vaddr: the site
 * @stub: the stub
 * @insn: set to the jump's UPROBE_JUMP_INSN_BYTES bytes
 *
 * Return: UPROBE_JUMP_INSN_BYTES, or 0 when @stub is out of reach.
 */
unsigned int arch_uprobe_jump_insn(struct arch_uprobe *aup, unsigned long vaddr,
				   unsigned long stub, u8 *insn)
{
	long rel = stub - (vaddr + UPROBE_JUMP_INSN_BYTES);

	if (rel != (s32)rel)
		return 0;
	insn[0] = UPROBE_JMP32;
	put_unaligned_le32((s32)rel, insn + 1);
	return UPROBE_JUMP_INSN_BYTES;
}

/**
 * arch_uprobe_jump_target() - where would the bytes at a site jump to?
 * @vaddr: the site
 * @code: its first UPROBE_JUMP_INSN_BYTES bytes
 *
 * Return: the target of a jmp rel32 at @vaddr, 0 when it is not one.
 */
unsigned long arch_uprobe_jump_target(unsigned long vaddr, const u8 *code)
{
	if (code[0] != UPROBE_JMP32)
		return 0;
	return vaddr + UPROBE_JUMP_INSN_BYTES +
	       (long)(s32)get_unaligned_le32(code + 1);
}

/**
 * arch_uprobe_jump_rewind() - undo what a stub did so far
 * @regs: the user registers of a thread in a stub
 * @at: its offset in the stub
 *
 * Puts back %rsp and the saved registers as they were at the site (the
 * caller moves ip there).  The stub changes no flags.
 *
 * Return: false when @at is not in the stub's code or the saved
 * registers cannot be read (then nothing is changed).
 */
bool arch_uprobe_jump_rewind(struct pt_regs *regs, unsigned int at)
{
	struct uprobe_jump_frame __user *f = (void __user *)regs->sp;
	unsigned long r11 = regs->r11, cx = regs->cx, ax = regs->ax;
	unsigned int pushed;

	switch (at) {
	case 0:
	case UPROBE_JUMP_TRAP_AT:
		return true;
	case 5:
	case 20:
		regs->sp += UPROBE_JUMP_RED_ZONE;
		return true;
	case 6:
	case 7:
	case 9:
		pushed = at == 6 ? 1 : at == 7 ? 2 : 3;
		regs->sp += pushed * 8 + UPROBE_JUMP_RED_ZONE;
		return true;
	case 14:
		if (get_user(ax, &f->ax))
			return false;
		break;
	case UPROBE_JUMP_SYSCALL_AT:
		if (get_user(r11, &f->r11) || get_user(cx, &f->cx) ||
		    get_user(ax, &f->ax))
			return false;
		break;
	case 18:	/* r11 popped: the frame starts one word up */
		if (get_user(cx, &f->r11) || get_user(ax, &f->cx))
			return false;
		regs->sp -= 8;
		break;
	case 19:
		if (get_user(ax, &f->r11))
			return false;
		regs->sp -= 16;
		break;
	default:
		return false;
	}
	regs->r11 = r11;
	regs->cx = cx;
	regs->ax = ax;
	regs->sp += sizeof(*f) + UPROBE_JUMP_RED_ZONE;
	return true;
}

/*
 * The stubs' way into the kernel.  From anywhere but a stub's syscall
 * instruction it does nothing and fails with ENXIO.
 */
SYSCALL_DEFINE0(uprobe)
{
	struct pt_regs *regs = task_pt_regs(current);
	unsigned int len, at;
	unsigned long site;

	site = uprobe_jump_site(regs->ip, &len, &at);
	if (!site || at != UPROBE_JUMP_SYSCALL_AT || !user_64bit_mode(regs))
		return -ENXIO;
	/* The stub saved what the return trampoline saves, in its order. */
	if (arch_uretprobe_syscall_unwind(regs)) {
		/* The stack the stub just wrote is gone: another thread unmapped it. */
		force_sig(SIGSEGV);
		return -EFAULT;
	}
	regs->sp += UPROBE_JUMP_RED_ZONE;
	/* Not a syscall to restart: ax is the program's. */
	regs->orig_ax = -1;
	uprobe_jump_hit(regs, site, len);
	return regs->ax;
}
