// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * x86 uprobes: which probed instructions we emulate, run out of line, or
 * refuse.  A pure function of the bytes and the mode (64-bit or 32-bit
 * compat code), so that KUnit (uprobes_kunit.c) pins down every decision.
 *
 * The rules, in the order they are applied:
 *
 * 1. The kernel's decoder (insn_decode()) must accept the bytes and know
 *    the opcode's operands in the form given, prefixes included: an opcode
 *    with a ModRM byte must have one for the decoder too, or the slot
 *    would get a truncated copy.
 *
 * 2. Refused (-ENOTSUPP), because a copy run elsewhere under TF cannot
 *    behave as the original:
 *    - int3, int n, into, int1, ud0/ud1/ud2: they trap by design;
 *    - syscall, sysenter, sysret, sysexit: the kernel would return to, or
 *      restart at, the slot;
 *    - far call/jmp/ret, iret, and anything that loads a segment register
 *      (mov/pop to sreg, lds/les/lss/lfs/lgs, arpl, lar/lsl, the 0f00
 *      group): they change CS or SS, and a load of SS hides the step trap;
 *    - in/out/ins/outs, cli/sti, hlt, and the privileged or virtualisation
 *      instructions (mov cr/dr, rdmsr/wrmsr, lgdt & co, invd, wbinvd,
 *      clts, rsm, vmx, getsec, invpcid, xsaves/xrstors, shadow-stack
 *      writes): they fault in an ordinary process, and under iopl/ioperm
 *      the trap pair would change their timing;
 *    - xbegin/xabort: no transaction survives our int3;
 *    - 3DNow! and XOP: the decoder does not know their operands;
 *    - opcodes undefined in the task's mode (e.g. push es in 64-bit code);
 *    - a branch with an operand-size prefix (66): AMD truncates the target
 *      to 16 bits, Intel does not;
 *    - loop/jrcxz with an address-size prefix (the counter would be ecx).
 *
 * 3. Emulated (no single-step): the common instructions of prologues and
 *    branches, mov of an immediate to a register, and in 64-bit code a
 *    32/64-bit mov between a register and memory: enum uprobe_x86_emul.
 *
 * 4. Everything else runs out of line.  A rip-relative operand becomes
 *    [scratch + disp32], scratch being a register the instruction does not
 *    use, loaded with the original next-ip for the step.  A lock prefix is
 *    fine there: the locked access is to the same memory.
 */

#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/insn.h>
#include <asm/insn-eval.h>
#include <asm/processor-flags.h>

#include "uprobes_insn.h"

/* Everything the classifier needs, decoded once. */
struct uprobe_x86_ctx {
	struct insn		insn;
	struct uprobe_x86_op	*op;
	u8			*ixol;
	const char		**why;
	bool			is64;
	u8			opc;	/* opcode byte within its map */
	u8			modrm;
	u8			reg;	/* ModRM.reg with REX.R/VEX.R */
	u8			rm;	/* ModRM.rm with REX.B/VEX.B */
	u8			mod;
};

static int refuse(struct uprobe_x86_ctx *c, const char *reason)
{
	*c->why = reason;
	return -ENOTSUPP;
}

static bool has_prefix(struct insn *insn, u8 prefix)
{
	insn_byte_t p;
	int i;

	for_each_insn_prefix(insn, i, p)
		if (p == prefix)
			return true;
	return false;
}

/*
 * More than one segment prefix: in 64-bit code "gs ds" addresses through
 * ds on Intel (the last wins) and through gs on AMD.  Only the CPU knows.
 */
static bool seg_ambiguous(struct insn *insn)
{
	int i, n = 0;
	insn_byte_t p;

	for_each_insn_prefix(insn, i, p)
		if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e ||
		    p == 0x64 || p == 0x65)
			n++;
	return n > 1;
}

/* Without REX, a byte register 4-7 in ModRM.reg is %ah, %ch, %dh or %bh. */
static bool reg_is_high_byte(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;
	u8 opc = c->opc;

	if (insn->rex_prefix.nbytes || insn_is_avx(insn) || c->reg < 4 ||
	    c->reg > 7)
		return false;
	if (insn->opcode.bytes[0] == 0x0f)	/* cmpxchg, xadd r/m8, r8 */
		return insn->opcode.nbytes == 2 && (opc == 0xb0 || opc == 0xc0);
	/* the ALU ops r/m8,r8 and r8,r/m8; test, xchg, mov r/m8 */
	return (opc < 0x40 && !(opc & 0xc5)) || opc == 0x84 || opc == 0x86 ||
	       opc == 0x88 || opc == 0x8a;
}

/*
 * Registers the copy must not borrow for rip: those named by ModRM.reg or
 * VEX.vvvv (whatever their kind), and those the opcode uses implicitly.
 */
static u16 scratch_forbidden(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;
	u16 mask = BIT(c->reg);
	u8 m = 0;

	if (reg_is_high_byte(c))
		mask |= BIT(c->reg - 4);

	if (insn_is_avx(insn)) {
		mask |= BIT(~X86_VEX_V(insn->vex_prefix.bytes[2]) & 0xf);
		m = insn_vex_m_bits(insn);
	} else if (insn->opcode.bytes[0] == 0x0f) {
		m = insn->opcode.bytes[1] == 0x38 ? 2 :
		    insn->opcode.bytes[1] == 0x3a ? 3 : 1;
	}

	switch (m) {
	case 0:
		if (c->opc == 0xf6 || c->opc == 0xf7)	/* mul/div: rdx:rax */
			mask |= BIT(UPROBE_X86_AX) | BIT(UPROBE_X86_DX);
		if (c->opc == 0xd2 || c->opc == 0xd3)	/* shift by cl */
			mask |= BIT(UPROBE_X86_CX);
		break;
	case 1:
		if (c->opc == 0xa5 || c->opc == 0xad)	/* shld/shrd by cl */
			mask |= BIT(UPROBE_X86_CX);
		if (c->opc == 0xb0 || c->opc == 0xb1)	/* cmpxchg: rax */
			mask |= BIT(UPROBE_X86_AX);
		if (c->opc == 0xae)			/* xsave family: edx:eax */
			mask |= BIT(UPROBE_X86_AX) | BIT(UPROBE_X86_DX);
		if (c->opc == 0xc7)	/* cmpxchg8b/16b, xsavec: a, b, c, d */
			mask |= GENMASK(UPROBE_X86_BX, UPROBE_X86_AX);
		break;
	case 2:
		if (c->opc == 0xf6)			/* mulx: rdx */
			mask |= BIT(UPROBE_X86_DX);
		break;
	case 3:
		if (c->opc >= 0x60 && c->opc <= 0x63)	/* pcmp[ei]str[im] */
			mask |= GENMASK(UPROBE_X86_DX, UPROBE_X86_AX);
		break;
	}
	return mask;
}

/*
 * Rewrite a rip-relative ModRM (mod=00 rm=101) in the copy to mod=10
 * rm=scratch: [scratch + disp32].  Scratch is one of registers 0-7, so no
 * REX byte is needed; the B bit, ignored for rip, now counts: clear it.
 */
static int fix_rip_relative(struct uprobe_x86_ctx *c)
{
	/* The first of rax, rcx, rdx, rbx, rsi, rdi the copy leaves alone. */
	unsigned long avail = ~(unsigned long)scratch_forbidden(c) &
			     (GENMASK(UPROBE_X86_BX, UPROBE_X86_AX) |
			      BIT(UPROBE_X86_SI) | BIT(UPROBE_X86_DI));
	struct insn *insn = &c->insn;
	unsigned int scratch;

	if (!avail)
		return refuse(c, "rip-relative operand and no free scratch register");
	scratch = __ffs(avail);

	c->ixol[insn_offset_modrm(insn)] = 0x80 | (c->modrm & 0x38) | scratch;
	if (insn->rex_prefix.nbytes)
		c->ixol[insn_offset_rex_prefix(insn)] &= ~1;	/* REX.B = 0 */
	if (insn->vex_prefix.nbytes >= 3)
		c->ixol[insn_offset_vex_prefix(insn) + 1] |= 0x20; /* ~B = 1 */
	c->op->scratch = scratch;
	c->op->fix |= UPROBE_FIX_SCRATCH;
	c->op->imm = insn->displacement.value;	/* operand at next-ip + imm */
	return 0;
}

/*
 * Might the copy move the stack pointer?  A direct run reloads the scratch
 * register from below it.  Generous: any rsp in ModRM.reg or VEX.vvvv, and
 * push or pop of a memory operand.
 */
static bool copy_may_move_sp(struct uprobe_x86_ctx *c)
{
	if (scratch_forbidden(c) & BIT(UPROBE_X86_SP))
		return true;
	if (insn_is_avx(&c->insn) || c->insn.opcode.bytes[0] == 0x0f)
		return false;
	return (c->opc == 0xff && (c->reg & 7) == 6) ||	/* push r/m */
	       (c->opc == 0x8f && (c->reg & 7) == 0);	/* pop r/m */
}

/*
 * Is the rip-relative operand within a known span of next-ip + disp?  Not
 * with an fs/gs base or a 32-bit address, nor for bt/bts/btr/btc by a
 * register.  A direct run needs it to rule out the scratch save slot.
 */
static bool rip_operand_bounded(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;

	if (has_prefix(insn, 0x64) || has_prefix(insn, 0x65) ||
	    has_prefix(insn, 0x67))
		return false;
	return insn_is_avx(insn) || insn->opcode.bytes[0] != 0x0f ||
	       insn->opcode.nbytes != 2 ||
	       (c->opc != 0xa3 && c->opc != 0xab && c->opc != 0xb3 &&
		c->opc != 0xbb);
}

/* Can the out-of-line form run as a copy and a jump back (see @direct)? */
static bool direct_form(struct uprobe_x86_ctx *c)
{
	const struct uprobe_x86_op *op = c->op;

	if (!op->is64 || !op->xol_len)
		return false;
	if (op->fix == UPROBE_FIX_IP)
		return true;
	return op->fix == (UPROBE_FIX_IP | UPROBE_FIX_SCRATCH) &&
	       !copy_may_move_sp(c) && rip_operand_bounded(c);
}

/* Run out of line, fixing ip afterwards unless @fix says otherwise. */
static int xol(struct uprobe_x86_ctx *c, u8 fix)
{
	c->op->fix |= fix;
	if (insn_rip_relative(&c->insn))
		return fix_rip_relative(c);
	return 0;
}

static int emulate(struct uprobe_x86_ctx *c, enum uprobe_x86_emul kind)
{
	c->op->emul = kind;
	return 0;
}

/* Relative branches: no out-of-line form, except a call's (it can fault). */
static int emulate_branch(struct uprobe_x86_ctx *c, enum uprobe_x86_emul kind)
{
	if (has_prefix(&c->insn, 0x66))
		return refuse(c, "operand-size prefix on a branch");
	c->op->imm = c->insn.immediate.value;
	c->op->xol_len = 0;
	return emulate(c, kind);
}

/*
 * call rel32 runs out of line as "call .+5", which faults on the push as
 * the original would; post_xol then fixes the return address and ip.
 */
static int emulate_call(struct uprobe_x86_ctx *c)
{
	static const u8 call_next[] = { 0xe8, 0, 0, 0, 0 };
	int err = emulate_branch(c, UPROBE_EMUL_CALL);

	if (err)
		return err;
	memset(c->ixol, UPROBE_SWBP_INSN, MAX_UINSN_BYTES);
	memcpy(c->ixol, call_next, sizeof(call_next));
	c->op->xol_len = sizeof(call_next);
	c->op->fix = UPROBE_FIX_CALL_REL;
	return 0;
}

static int classify_push_pop(struct uprobe_x86_ctx *c, enum uprobe_x86_emul kind)
{
	/* pushw/popw run out of line (opnd_bytes does not show the 66). */
	if (has_prefix(&c->insn, 0x66))
		return xol(c, UPROBE_FIX_IP);
	c->op->reg = (c->opc & 7) | (X86_REX_B(c->insn.rex_prefix.value) ? 8 : 0);
	c->op->size = c->is64 ? 8 : 4;
	c->op->fix = UPROBE_FIX_IP;
	return emulate(c, kind);
}

/* The memory operand taken apart, for the hit to compute its address. */
static void split_address(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;
	u8 rex = insn->rex_prefix.value, sib = insn->sib.value;
	struct uprobe_x86_op *op = c->op;

	op->index = UPROBE_X86_NO_REG;
	op->scale = 0;
	if (insn_rip_relative(insn)) {
		op->base = UPROBE_X86_RIP;
	} else if (insn->sib.nbytes) {
		op->base = X86_SIB_BASE(sib) | (X86_REX_B(rex) ? 8 : 0);
		/* Base 101 with mod 00: no base, a 32-bit displacement. */
		if (X86_SIB_BASE(sib) == 5 && c->mod == 0)
			op->base = UPROBE_X86_NO_REG;
		/* Index 100 means none, unless REX.X makes it r12. */
		op->index = X86_SIB_INDEX(sib) | (X86_REX_X(rex) ? 8 : 0);
		if (op->index == UPROBE_X86_SP)
			op->index = UPROBE_X86_NO_REG;
		op->scale = X86_SIB_SCALE(sib);
	} else {
		op->base = c->rm;
	}
	op->imm = insn->displacement.value;
}

/* split_address(), and the fs or gs base of a memory mov or branch. */
static void split_seg_address(struct uprobe_x86_ctx *c)
{
	split_address(c);
	c->op->seg = has_prefix(&c->insn, 0x64) ? UPROBE_X86_SEG_FS :
		     has_prefix(&c->insn, 0x65) ? UPROBE_X86_SEG_GS :
		     UPROBE_X86_SEG_NONE;
}

/*
 * mov between a general register and memory (89/8b).  Emulated in 64-bit
 * code only, where only fs and gs have a base (a compat task may have its
 * own segments in its LDT), and without a 67 prefix.  The out-of-line form
 * stays, for a load or store that would fault.
 */
static int classify_mov_mem(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;
	struct uprobe_x86_op *op = c->op;
	int err = xol(c, UPROBE_FIX_IP);

	if (err || !c->is64 || has_prefix(insn, 0x67) || seg_ambiguous(insn))
		return err;

	split_seg_address(c);
	op->store = c->opc == 0x89;
	op->reg = c->reg;
	op->size = insn->opnd_bytes;
	return emulate(c, UPROBE_EMUL_MOV_MEM);
}

/* mov r/m, reg (89) and mov reg, r/m (8b), 32/64-bit. */
static int classify_mov(struct uprobe_x86_ctx *c)
{
	unsigned int size = c->insn.opnd_bytes;

	if (size != 4 && size != 8)
		return xol(c, UPROBE_FIX_IP);
	if (c->mod != 3)
		return classify_mov_mem(c);
	c->op->size = size;
	c->op->reg = c->opc == 0x89 ? c->rm : c->reg;
	c->op->src = c->opc == 0x89 ? c->reg : c->rm;
	c->op->fix = UPROBE_FIX_IP;
	return emulate(c, UPROBE_EMUL_MOV);
}

/*
 * mov $imm, reg: b8+r (imm32, or imm64 with REX.W) and c7 /0 on a register
 * (imm32, sign-extended with REX.W).  An imm64 is emulated only when it is
 * the sign extension of its low half; 16-bit forms run out of line.
 */
static int classify_mov_imm(struct uprobe_x86_ctx *c)
{
	struct insn *insn = &c->insn;
	unsigned int size = insn->opnd_bytes;
	s32 lo = insn->immediate1.value;

	if (size != 4 && size != 8)
		return xol(c, UPROBE_FIX_IP);
	if (insn->immediate2.nbytes && insn->immediate2.value != (lo < 0 ? -1 : 0))
		return xol(c, UPROBE_FIX_IP);
	if (c->opc == 0xc7)
		c->op->reg = c->rm;
	else
		c->op->reg = (c->opc & 7) |
			     (X86_REX_B(insn->rex_prefix.value) ? 8 : 0);
	c->op->size = size;
	c->op->imm = lo;
	c->op->fix = UPROBE_FIX_IP;
	return emulate(c, UPROBE_EMUL_MOV_IMM);
}

/* add/sub $imm, %rsp (or %esp in a compat task): prologues and epilogues. */
static int classify_group1(struct uprobe_x86_ctx *c)
{
	unsigned int sub = X86_MODRM_REG(c->modrm) == 5;

	if (c->opc == 0x82 && c->is64)
		return refuse(c, "undefined in 64-bit mode");
	if ((c->opc == 0x81 || c->opc == 0x83) && c->mod == 3 &&
	    c->rm == UPROBE_X86_SP && (sub || X86_MODRM_REG(c->modrm) == 0) &&
	    c->insn.opnd_bytes == (c->is64 ? 8 : 4) &&
	    !has_prefix(&c->insn, 0xf0)) {
		c->op->sub = sub;
		c->op->size = c->insn.opnd_bytes;
		c->op->imm = c->insn.immediate.value;
		c->op->fix = UPROBE_FIX_IP;
		return emulate(c, UPROBE_EMUL_ALU_SP);
	}
	return xol(c, UPROBE_FIX_IP);
}

/*
 * lea touches no memory: it never faults and ignores segments.  Emulated
 * in 64-bit code with a 32- or 64-bit destination and no 67 prefix.
 */
static int classify_lea(struct uprobe_x86_ctx *c)
{
	unsigned int size = c->insn.opnd_bytes;
	int err;

	if (c->mod == 3)
		return refuse(c, "lea with a register operand is undefined");
	err = xol(c, UPROBE_FIX_IP);
	if (err || !c->is64 || has_prefix(&c->insn, 0x67) ||
	    (size != 4 && size != 8))
		return err;
	split_address(c);
	c->op->reg = c->reg;
	c->op->size = size;
	return emulate(c, UPROBE_EMUL_LEA);
}

/*
 * A rep string instruction traps after every iteration under TF: it runs
 * to completion and stops on an int3 placed after it in the slot instead.
 */
static int classify_string(struct uprobe_x86_ctx *c)
{
	struct uprobe_x86_op *op = c->op;

	if (!insn_has_rep_prefix(&c->insn))
		return xol(c, UPROBE_FIX_IP);
	c->ixol[op->len] = UPROBE_SWBP_INSN;
	op->xol_len = op->len + 1;
	return xol(c, UPROBE_FIX_IP | UPROBE_FIX_INT3_STOP);
}

/*
 * call and jmp through a register or memory (ff /2, ff /4).  Emulated in
 * 64-bit code (a 64-bit operand) without a 67 prefix; the out-of-line form
 * stays, for a load or push that would fault.
 */
static int classify_branch_ind(struct uprobe_x86_ctx *c, bool call)
{
	struct insn *insn = &c->insn;
	struct uprobe_x86_op *op = c->op;
	int err;

	if (has_prefix(insn, 0x66))
		return refuse(c, "operand-size prefix on a branch");
	err = xol(c, call ? UPROBE_FIX_CALL : 0);
	if (err || !c->is64 || has_prefix(insn, 0x67) || seg_ambiguous(insn))
		return err;
	if (c->mod == 3) {
		op->src = c->rm;
	} else {
		split_seg_address(c);
		op->mem = 1;
	}
	return emulate(c, call ? UPROBE_EMUL_CALL_IND : UPROBE_EMUL_JMP_IND);
}

static int classify_group5(struct uprobe_x86_ctx *c)
{
	switch (X86_MODRM_REG(c->modrm)) {
	case 0: case 1: case 6:		/* inc, dec, push */
		return xol(c, UPROBE_FIX_IP);
	case 2:				/* call near indirect */
		return classify_branch_ind(c, true);
	case 4:				/* jmp near indirect */
		return classify_branch_ind(c, false);
	case 3: case 5:
		return refuse(c, "far call or jump");
	default:
		return refuse(c, "undefined opcode");
	}
}

static int classify_one_byte(struct uprobe_x86_ctx *c)
{
	u8 opc = c->opc;

	switch (opc) {
	case 0x06: case 0x0e: case 0x16: case 0x1e:	/* push sreg */
	case 0x27: case 0x2f: case 0x37: case 0x3f:	/* daa das aaa aas */
	case 0x60: case 0x61: case 0x62:		/* pusha popa bound */
	case 0xd4: case 0xd5:				/* aam aad */
		if (c->is64)
			return refuse(c, "undefined in 64-bit mode");
		return xol(c, UPROBE_FIX_IP);
	case 0x07: case 0x17: case 0x1f:		/* pop sreg */
	case 0x8e:					/* mov to sreg */
	case 0xc4: case 0xc5:				/* les lds */
		return refuse(c, "loads a segment register");
	case 0x50 ... 0x57:
		return classify_push_pop(c, UPROBE_EMUL_PUSH);
	case 0x58 ... 0x5f:
		return classify_push_pop(c, UPROBE_EMUL_POP);
	case 0x63:
		if (!c->is64)
			return refuse(c, "arpl adjusts a segment selector");
		return xol(c, UPROBE_FIX_IP);		/* movsxd */
	case 0x6c ... 0x6f: case 0xe4 ... 0xe7: case 0xec ... 0xef:
		return refuse(c, "port I/O");
	case 0x70 ... 0x7f:
		c->op->cc = opc & 0xf;
		return emulate_branch(c, UPROBE_EMUL_JCC);
	case 0x80 ... 0x83:
		return classify_group1(c);
	case 0x89: case 0x8b:
		return classify_mov(c);
	case 0x8d:
		return classify_lea(c);
	case 0x8f:
		if (X86_MODRM_REG(c->modrm))
			return refuse(c, "XOP-encoded or undefined");
		return xol(c, UPROBE_FIX_IP);		/* pop r/m */
	case 0x90:
		/* 41 90 is xchg %eax,%r8d, not a nop. */
		if (X86_REX_B(c->insn.rex_prefix.value))
			return xol(c, UPROBE_FIX_IP);
		c->op->fix = UPROBE_FIX_IP;
		return emulate(c, UPROBE_EMUL_NOP);	/* nop, pause */
	case 0x9a: case 0xea: case 0xca: case 0xcb:
		return refuse(c, "far call, jump or return");
	case 0x9c:
		return xol(c, UPROBE_FIX_IP | UPROBE_FIX_PUSHF);
	case 0x9d:
		return xol(c, UPROBE_FIX_IP | UPROBE_FIX_POPF);
	case 0xa4 ... 0xa7: case 0xaa ... 0xaf:
		return classify_string(c);
	case 0xc2: case 0xc3:
		if (has_prefix(&c->insn, 0x66))
			return refuse(c, "operand-size prefix on a branch");
		/* The out-of-line form is the ret itself. */
		c->op->imm = opc == 0xc2 ? c->insn.immediate.value & 0xffff : 0;
		c->op->fix = 0;
		return emulate(c, UPROBE_EMUL_RET);
	case 0xb8 ... 0xbf:
		return classify_mov_imm(c);
	case 0xc6: case 0xc7:
		if (c->modrm == 0xf8)
			return refuse(c, "transactional memory (xabort/xbegin)");
		if (X86_MODRM_REG(c->modrm))
			return refuse(c, "undefined opcode");
		if (opc == 0xc7 && c->mod == 3)
			return classify_mov_imm(c);
		return xol(c, UPROBE_FIX_IP);
	case 0xcc: case 0xcd: case 0xce: case 0xf1:
		return refuse(c, "software interrupt or breakpoint");
	case 0xcf:
		return refuse(c, "iret");
	case 0xd6:
		return refuse(c, "undefined opcode (salc)");
	case 0xe0 ... 0xe3:
		if (has_prefix(&c->insn, 0x67))
			return refuse(c, "address-size prefix on loop/jrcxz");
		c->op->cc = opc & 3;
		return emulate_branch(c, UPROBE_EMUL_LOOP);
	case 0xe8:
		return emulate_call(c);
	case 0xe9: case 0xeb:
		return emulate_branch(c, UPROBE_EMUL_JMP);
	case 0xf4:
		return refuse(c, "hlt is privileged");
	case 0xfa: case 0xfb:
		return refuse(c, "changes the interrupt flag");
	case 0xfe:
		if (X86_MODRM_REG(c->modrm) > 1)
			return refuse(c, "undefined opcode");
		return xol(c, UPROBE_FIX_IP);
	case 0xff:
		return classify_group5(c);
	default:	/* ALU, test, xchg, other movs, shifts, x87, flag ops... */
		return xol(c, UPROBE_FIX_IP);
	}
}

/* 0f 01: only xgetbv, xtest, serialize, rdpkru, wrpkru and rdtscp. */
static int classify_group7(struct uprobe_x86_ctx *c)
{
	static const u8 allowed[] = { 0xd0, 0xd6, 0xe8, 0xee, 0xef, 0xf9 };

	if (memchr(allowed, c->modrm, sizeof(allowed)))
		return xol(c, UPROBE_FIX_IP);
	return refuse(c, "system instruction (0f 01 group)");
}

static int classify_group9(struct uprobe_x86_ctx *c)
{
	u8 reg = X86_MODRM_REG(c->modrm);

	if ((c->mod != 3 && (reg == 1 || reg == 4)) ||	/* cmpxchg8b/16b, xsavec */
	    (c->mod == 3 && (reg == 6 || reg == 7)))	/* rdrand, rdseed, rdpid */
		return xol(c, UPROBE_FIX_IP);
	return refuse(c, "privileged or virtualisation instruction (0f c7 group)");
}

/*
 * A 0f opcode with a ModRM byte runs out of line only if the decoder found
 * one too (rule 1): its map lacks some forms (0f 19, 0f 1d, cmov with f2).
 */
static int xol_modrm(struct uprobe_x86_ctx *c)
{
	if (!c->insn.modrm.nbytes)
		return refuse(c, "opcode unknown to the decoder");
	return xol(c, UPROBE_FIX_IP);
}

static int classify_two_byte(struct uprobe_x86_ctx *c)
{
	u8 opc = c->opc;

	switch (opc) {
	case 0x00: case 0x02: case 0x03:
		return refuse(c, "segment descriptor instruction");
	case 0x01:
		return classify_group7(c);
	case 0x05: case 0x07: case 0x34: case 0x35:
		return refuse(c, "system call or return");
	case 0x06: case 0x08: case 0x09: case 0x20 ... 0x23:
	case 0x30: case 0x32: case 0x37: case 0xaa:
		return refuse(c, "privileged instruction");
	case 0x0b: case 0xb9: case 0xff:
		return refuse(c, "undefined by design (ud0/ud1/ud2)");
	case 0x0e: case 0x0f:
		return refuse(c, "3DNow! instruction");
	case 0x1e:
		/* endbr64/endbr32: nops, user space has no IBT. */
		if (has_prefix(&c->insn, 0xf3) &&
		    (c->modrm == 0xfa || c->modrm == 0xfb)) {
			c->op->fix = UPROBE_FIX_IP;
			return emulate(c, UPROBE_EMUL_NOP);
		}
		return xol_modrm(c);
	case 0x1f:
		if (X86_MODRM_REG(c->modrm))
			return xol_modrm(c);	/* reserved nop */
		/* nopl/nopw of any length: the operand is never read. */
		c->op->fix = UPROBE_FIX_IP;
		return emulate(c, UPROBE_EMUL_NOP);
	case 0x78: case 0x79:
		/* 66/f2: SSE4a extrq/insertq; otherwise vmread/vmwrite. */
		if (has_prefix(&c->insn, 0x66) || has_prefix(&c->insn, 0xf2))
			return xol_modrm(c);
		return refuse(c, "virtualisation instruction");
	case 0x80 ... 0x8f:
		c->op->cc = opc & 0xf;
		return emulate_branch(c, UPROBE_EMUL_JCC);
	case 0xa1: case 0xa9: case 0xb2: case 0xb4: case 0xb5:
		return refuse(c, "loads a segment register");
	case 0xb8:
		if (!has_prefix(&c->insn, 0xf3))
			return refuse(c, "jmpe");
		return xol_modrm(c);		/* popcnt */
	case 0xc7:
		return classify_group9(c);
	/* rdtsc, rdpmc, emms, push fs, cpuid, push gs, bswap: no ModRM */
	case 0x31: case 0x33: case 0x77: case 0xa0: case 0xa2: case 0xa8:
	case 0xc8 ... 0xcf:
		return xol(c, UPROBE_FIX_IP);
	case 0x0d: case 0x10 ... 0x1d: case 0x28 ... 0x2f:
	case 0x40 ... 0x76: case 0x7c ... 0x7f:
	case 0x90 ... 0x9f: case 0xa3 ... 0xa5: case 0xab ... 0xb1:
	case 0xb3: case 0xb6: case 0xb7: case 0xba ... 0xc6: case 0xd0 ... 0xfe:
		return xol_modrm(c);
	default:
		return refuse(c, "undefined opcode");
	}
}

/* The 0f38 and 0f3a maps, legacy or VEX/EVEX, and the EVEX-only maps. */
static int classify_escape_map(struct uprobe_x86_ctx *c, u8 map)
{
	bool p66 = insn_last_prefix_id(&c->insn) == 1 || has_prefix(&c->insn, 0x66);

	if (!inat_has_modrm(c->insn.attr))
		return refuse(c, "opcode unknown to the decoder");
	if (map == 2 && !insn_is_avx(&c->insn)) {
		if (p66 && c->opc >= 0x80 && c->opc <= 0x82)
			return refuse(c, "privileged instruction (invept/invvpid/invpcid)");
		if ((c->opc == 0xf5 && p66) ||
		    (c->opc == 0xf6 && !c->insn.prefixes.nbytes))
			return refuse(c, "shadow-stack write");
	}
	return xol(c, UPROBE_FIX_IP);
}

/* Decode @bytes into @c and make the plan. */
static int classify(struct uprobe_x86_ctx *c, const u8 *bytes)
{
	struct insn *insn = &c->insn;
	struct uprobe_x86_op *op = c->op;
	insn_attr_t attr;
	u8 rex, map;

	memset(op, 0, sizeof(*op));
	*c->why = NULL;
	if (insn_decode(insn, bytes, MAX_UINSN_BYTES,
			c->is64 ? INSN_MODE_64 : INSN_MODE_32) < 0) {
		*c->why = "not a valid instruction";
		return -EINVAL;
	}
	if (insn_has_emulate_prefix(insn))
		return refuse(c, "hypervisor emulation prefix");

	op->len = insn->length;
	op->is64 = c->is64;
	op->xol_len = insn->length;
	memset(c->ixol, UPROBE_SWBP_INSN, MAX_UINSN_BYTES);
	memcpy(c->ixol, bytes, insn->length);
	/*
	 * The decoder takes the byte after a REX, or after four distinct
	 * legacy prefixes, as the opcode; the CPU would go on with prefixes
	 * there, ignoring the REX.  Length and operands would be wrong.
	 */
	attr = inat_get_opcode_attribute(insn->opcode.bytes[0]);
	if (inat_is_legacy_prefix(attr) ||
	    (c->is64 && inat_is_rex_prefix(attr)))
		return refuse(c, insn->rex_prefix.nbytes ?
			      "REX prefix not right before the opcode" :
			      "more legacy prefixes than the decoder takes");

	rex = insn->rex_prefix.value;
	if (insn->modrm.nbytes) {
		c->modrm = insn->modrm.bytes[0];
		c->mod = X86_MODRM_MOD(c->modrm);
		c->reg = X86_MODRM_REG(c->modrm);
		c->rm = X86_MODRM_RM(c->modrm);
		if (insn_is_avx(insn)) {
			/* VEX/EVEX keep R and B inverted in their first byte. */
			c->reg |= X86_VEX_R(insn->vex_prefix.bytes[1]) ? 0 : 8;
			if (insn->vex_prefix.nbytes >= 3)
				c->rm |= X86_VEX_B(insn->vex_prefix.bytes[1]) ? 0 : 8;
		} else {
			c->reg |= X86_REX_R(rex) ? 8 : 0;
			c->rm |= X86_REX_B(rex) ? 8 : 0;
		}
	}

	c->opc = insn->opcode.bytes[insn->opcode.nbytes - 1];
	if (insn_is_avx(insn)) {
		map = insn_vex_m_bits(insn);
		return map == 1 ? xol(c, UPROBE_FIX_IP) :
				  classify_escape_map(c, map);
	}
	if (insn->opcode.bytes[0] != 0x0f)
		return classify_one_byte(c);
	map = insn->opcode.bytes[1];
	if (map == 0x38 || map == 0x3a)
		return classify_escape_map(c, map == 0x38 ? 2 : 3);
	return classify_two_byte(c);
}

/**
 * uprobe_x86_analyze() - decide how a probed instruction is handled
 * @bytes: MAX_UINSN_BYTES of original code starting at the instruction
 * @is64: the code is 64-bit (false: 32-bit compat code)
 * @op: the plan: emulation in @op->emul and/or repairs in @op->fix
 * @ixol: MAX_UINSN_BYTES for the out-of-line copy
 * @why: on refusal, set to a static string saying why
 *
 * Context: any.
 * Return: 0 when the instruction can be probed, -ENOTSUPP when it is
 * refused, -EINVAL when the bytes do not decode.
 */
int uprobe_x86_analyze(const u8 *bytes, bool is64, struct uprobe_x86_op *op,
		       u8 *ixol, const char **why)
{
	struct uprobe_x86_ctx c = {
		.op = op, .ixol = ixol, .why = why, .is64 = is64,
	};
	int err = classify(&c, bytes);

	/* Nothing we emulate takes a lock prefix: the CPU raises #UD. */
	if (!err && op->emul != UPROBE_EMUL_NONE &&
	    has_prefix(&c.insn, 0xf0))
		err = refuse(&c, "lock prefix on an instruction that takes none");
	if (err) {
		u8 len = op->len;

		/* Keep only the length, for the message. */
		memset(op, 0, sizeof(*op));
		op->len = len;
		return err;
	}
	op->direct = direct_form(&c);
	return 0;
}

/**
 * uprobe_x86_has_xol_form() - whether a plan can be run out of line
 * @op: a plan made by uprobe_x86_analyze()
 *
 * Context: any.
 * Return: false for the relative branches that are always emulated.
 */
bool uprobe_x86_has_xol_form(const struct uprobe_x86_op *op)
{
	return op->xol_len;
}

/**
 * uprobe_x86_cond() - evaluate an x86 condition code
 * @cc: the condition, as in the low nibble of jcc/setcc/cmovcc
 * @flags: the flags register
 *
 * Context: any.
 * Return: whether the condition holds.
 */
bool uprobe_x86_cond(unsigned int cc, unsigned long flags)
{
	bool cf = flags & X86_EFLAGS_CF, zf = flags & X86_EFLAGS_ZF;
	bool sf = flags & X86_EFLAGS_SF, of = flags & X86_EFLAGS_OF;
	bool pf = flags & X86_EFLAGS_PF;
	/* o, b, e, be, s, p, l, le; an odd cc is the negation of the even. */
	const bool holds[8] = {
		of, cf, zf, cf || zf, sf, pf, sf != of, zf || sf != of,
	};

	return holds[(cc >> 1) & 7] != (cc & 1);
}

/**
 * uprobe_x86_loop_taken() - whether loop/jrcxz branches
 * @variant: 0 loopne, 1 loope, 2 loop, 3 jrcxz (the opcode minus 0xe0)
 * @count: the counter after the loop's decrement (jrcxz: as it is)
 * @flags: the flags register
 *
 * Context: any.
 * Return: whether the branch is taken.
 */
bool uprobe_x86_loop_taken(unsigned int variant, unsigned long count,
			   unsigned long flags)
{
	bool zf = flags & X86_EFLAGS_ZF;

	if (variant >= 3)
		return !count;
	/* loopne wants ZF clear, loope set, loop either. */
	return count && (variant == 2 || zf == variant);
}

#define UPROBE_X86_ARITH_FLAGS \
	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | X86_EFLAGS_ZF | \
	 X86_EFLAGS_SF | X86_EFLAGS_OF)

/**
 * uprobe_x86_add_sub() - add or subtract as the ALU does, flags included
 * @sub: subtract @b from @a (else add)
 * @a: first operand
 * @b: second operand (already sign-extended to @size)
 * @size: operand size in bytes: 1, 2, 4 or 8
 * @flags: the flags register; CF, PF, AF, ZF, SF and OF are recomputed
 *
 * Context: any.
 * Return: the result, truncated to @size.
 */
unsigned long uprobe_x86_add_sub(bool sub, unsigned long a, unsigned long b,
				 unsigned int size, unsigned long *flags)
{
	unsigned long mask = size >= sizeof(long) ? ~0UL : BIT(size * 8) - 1;
	unsigned long sign = BIT(size * 8 - 1);
	unsigned long f = *flags & ~UPROBE_X86_ARITH_FLAGS;
	unsigned long r;

	a &= mask;
	b &= mask;
	r = (sub ? a - b : a + b) & mask;
	if (sub ? a < b : r < a)
		f |= X86_EFLAGS_CF;
	/* OF: r's sign is not a's, b's being a's (add) or not (sub). */
	if (((sub ? a : ~a) ^ b) & (a ^ r) & sign)
		f |= X86_EFLAGS_OF;
	if ((a ^ b ^ r) & 0x10)
		f |= X86_EFLAGS_AF;
	if (!r)
		f |= X86_EFLAGS_ZF;
	if (r & sign)
		f |= X86_EFLAGS_SF;
	if (!(hweight8(r & 0xff) & 1))
		f |= X86_EFLAGS_PF;
	*flags = f;
	return r;
}

/**
 * uprobe_x86_alu_sp() - add or subtract on the stack pointer, as the hit does
 * @sub: subtract @b from @a (else add)
 * @a: the stack pointer
 * @b: the immediate, sign-extended
 * @size: 4 or 8 (the stack word: an emulated add/sub on %esp or %rsp)
 * @flags: the flags register; CF, PF, AF, ZF, SF and OF are replaced
 *
 * As uprobe_x86_add_sub(), but the CPU itself computes the flags.
 *
 * Context: any.
 * Return: the result, truncated to @size.
 */
unsigned long uprobe_x86_alu_sp(bool sub, unsigned long a, unsigned long b,
				unsigned int size, unsigned long *flags)
{
	unsigned long f;
	u32 a32 = a;

	if (size == 8 && sub)
		asm ("sub %[b], %[a]\n\tpushf\n\tpop %[f]"
		     : [a] "+r" (a), [f] "=r" (f) : [b] "r" (b) : "cc");
	else if (size == 8)
		asm ("add %[b], %[a]\n\tpushf\n\tpop %[f]"
		     : [a] "+r" (a), [f] "=r" (f) : [b] "r" (b) : "cc");
	else if (sub)
		asm ("subl %[b], %[a]\n\tpushf\n\tpop %[f]"
		     : [a] "+r" (a32), [f] "=r" (f) : [b] "r" ((u32)b) : "cc");
	else
		asm ("addl %[b], %[a]\n\tpushf\n\tpop %[f]"
		     : [a] "+r" (a32), [f] "=r" (f) : [b] "r" ((u32)b) : "cc");
	*flags = (*flags & ~UPROBE_X86_ARITH_FLAGS) | (f & UPROBE_X86_ARITH_FLAGS);
	return size == 8 ? a : a32;
}
