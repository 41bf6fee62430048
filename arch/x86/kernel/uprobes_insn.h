/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure half of x86 uprobes: instruction analysis and the arithmetic of
 * emulation, free of pt_regs and user memory so that KUnit can drive it.
 */
#ifndef _X86_KERNEL_UPROBES_INSN_H
#define _X86_KERNEL_UPROBES_INSN_H

#include <linux/types.h>
#include <linux/uprobes.h>

/* General register numbers, as ModRM/REX/VEX encode them. */
enum uprobe_x86_reg {
	UPROBE_X86_AX, UPROBE_X86_CX, UPROBE_X86_DX, UPROBE_X86_BX,
	UPROBE_X86_SP, UPROBE_X86_BP, UPROBE_X86_SI, UPROBE_X86_DI,
	UPROBE_X86_R8, UPROBE_X86_R9, UPROBE_X86_R10, UPROBE_X86_R11,
	UPROBE_X86_R12, UPROBE_X86_R13, UPROBE_X86_R14, UPROBE_X86_R15,
};

int uprobe_x86_analyze(const u8 *bytes, bool is64, struct uprobe_x86_op *op,
		       u8 *ixol, const char **why);
bool uprobe_x86_has_xol_form(const struct uprobe_x86_op *op);
bool uprobe_x86_cond(unsigned int cc, unsigned long flags);
bool uprobe_x86_loop_taken(unsigned int variant, unsigned long count,
			   unsigned long flags);
unsigned long uprobe_x86_add_sub(bool sub, unsigned long a, unsigned long b,
				 unsigned int size, unsigned long *flags);
unsigned long uprobe_x86_alu_sp(bool sub, unsigned long a, unsigned long b,
				unsigned int size, unsigned long *flags);

#endif /* _X86_KERNEL_UPROBES_INSN_H */
