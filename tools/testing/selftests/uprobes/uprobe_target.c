// SPDX-License-Identifier: GPL-2.0
/*
 * The program the uprobes selftests probe.
 *
 * It reads one command a line on stdin and answers one line on stdout
 * ("ok ..." or "err ..."), so a test can add and remove probes between
 * any two steps of a running process.  The probed functions are written
 * in assembly where the test needs to know the exact instruction under the
 * probe (one that is emulated, one executed out of line, a RIP-relative
 * load, a load that faults, an int3 of the program's own); the others are
 * plain C.  Every function returns a value the test can check, so a probe
 * that changed what the program computes is caught.
 *
 * With "--cmd LINE" it runs that one command at start (used after exec).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* The SDT semaphore: the kernel increments it while a probe uses ust:tick. */
unsigned short ust_tick_semaphore __attribute__((section(".probes"), used));

/* A constant the RIP-relative function adds, and data read with @+OFF. */
const long ut_rodata = 0x1234;
long ut_inc(long a);
long ut_negate(long a);
/* What the indirect branches below go through. */
long (*const ut_incptr)(long) = ut_inc;
long (*const ut_jtab[2])(long) = { ut_inc, ut_negate };
const long ut_table[16] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
volatile unsigned int ut_counter = 0xc0ffee;

/*
 * Functions with a known first instruction.  Each takes its arguments in
 * %rdi, %rsi and returns a value that proves the instruction ran right.
 */
asm("	.text\n"
/* add: an ALU op, executed out of line (not emulated). a + b */
"	.p2align 4\n"
"	.globl ut_step\n"
"	.type ut_step, @function\n"
"ut_step:\n"
"	add %rsi, %rdi\n"
"	mov %rdi, %rax\n"
"	ret\n"
"	.size ut_step, .-ut_step\n"
/* nop, then a 4-byte nop: both emulated or skipped. a */
"	.p2align 4\n"
"	.globl ut_nop\n"
"	.type ut_nop, @function\n"
"ut_nop:\n"
"	nop\n"
"	nopl 0(%rax)\n"
"	mov %rdi, %rax\n"
"	ret\n"
"	.size ut_nop, .-ut_nop\n"
/* push: emulated on x86. a + 1 */
"	.p2align 4\n"
"	.globl ut_push\n"
"	.type ut_push, @function\n"
"ut_push:\n"
"	push %rbx\n"
"	lea 1(%rdi), %rbx\n"
"	mov %rbx, %rax\n"
"	pop %rbx\n"
"	ret\n"
"	.size ut_push, .-ut_push\n"
/* RIP-relative load: needs the fix-up when stepped out of line. a + 0x1234 */
"	.p2align 4\n"
"	.globl ut_riprel\n"
"	.type ut_riprel, @function\n"
"ut_riprel:\n"
"	mov ut_rodata(%rip), %rax\n"
"	add %rdi, %rax\n"
"	ret\n"
"	.size ut_riprel, .-ut_riprel\n"
/*
 * A rip-relative add, not emulated, probed at ut_ripadd_add: its copy
 * borrows %rax, which holds b meanwhile, and a is kept in the last word
 * of the red zone.  a + b, or -1 when the red zone lost a.
 */
"	.p2align 4\n"
"	.globl ut_ripadd\n"
"	.type ut_ripadd, @function\n"
"ut_ripadd:\n"
"	mov %rsi, %rax\n"
"	mov %rdi, -0x80(%rsp)\n"
"	.globl ut_ripadd_add\n"
"ut_ripadd_add:\n"
"	add ut_rodata(%rip), %rdi\n"
"	sub ut_rodata(%rip), %rdi\n"
"	cmp -0x80(%rsp), %rdi\n"
"	jne 1f\n"
"	add %rdi, %rax\n"
"	ret\n"
"1:	mov $-1, %rax\n"
"	ret\n"
"	.size ut_ripadd, .-ut_ripadd\n"
/* call rel32. a + 1 */
"	.p2align 4\n"
"	.globl ut_callrel\n"
"	.type ut_callrel, @function\n"
"ut_callrel:\n"
"	call ut_inc\n"
"	ret\n"
"	.size ut_callrel, .-ut_callrel\n"
"	.p2align 4\n"
"	.globl ut_inc\n"
"	.type ut_inc, @function\n"
"ut_inc:\n"
"	lea 1(%rdi), %rax\n"
"	ret\n"
"	.size ut_inc, .-ut_inc\n"
/* jmp rel8 over a ud2. a + 2 */
"	.p2align 4\n"
"	.globl ut_jmp\n"
"	.type ut_jmp, @function\n"
"ut_jmp:\n"
"	jmp 1f\n"
"	ud2\n"
"1:	lea 2(%rdi), %rax\n"
"	ret\n"
"	.size ut_jmp, .-ut_jmp\n"
/* test; je (probed at +3). a ? a + 3 : 7 */
"	.p2align 4\n"
"	.globl ut_jcc\n"
"	.type ut_jcc, @function\n"
"ut_jcc:\n"
"	test %rdi, %rdi\n"
"	.globl ut_jcc_je\n"
"ut_jcc_je:\n"
"	je 1f\n"
"	lea 3(%rdi), %rax\n"
"	ret\n"
"1:	mov $7, %eax\n"
"	ret\n"
"	.size ut_jcc, .-ut_jcc\n"
/*
 * Indirect calls and jumps, each to ut_inc (a + 1) unless said otherwise:
 * through a register, rip-relative through memory (as a PLT does), with
 * the target on top of the stack, and through a table (b & 1 picks
 * ut_inc or ut_negate: a + 1 or -a).
 */
"	.p2align 4\n"
"	.globl ut_callreg\n"
"	.type ut_callreg, @function\n"
"ut_callreg:\n"
"	lea ut_inc(%rip), %r11\n"
"	.globl ut_callreg_call\n"
"ut_callreg_call:\n"
"	call *%r11\n"
"	ret\n"
"	.size ut_callreg, .-ut_callreg\n"
"	.p2align 4\n"
"	.globl ut_callmem\n"
"	.type ut_callmem, @function\n"
"ut_callmem:\n"
"	call *ut_incptr(%rip)\n"
"	ret\n"
"	.size ut_callmem, .-ut_callmem\n"
"	.p2align 4\n"
"	.globl ut_callsp\n"
"	.type ut_callsp, @function\n"
"ut_callsp:\n"
"	lea ut_inc(%rip), %rax\n"
"	push %rax\n"
"	.globl ut_callsp_call\n"
"ut_callsp_call:\n"
"	call *(%rsp)\n"
"	pop %rcx\n"
"	ret\n"
"	.size ut_callsp, .-ut_callsp\n"
"	.p2align 4\n"
"	.globl ut_jmpreg\n"
"	.type ut_jmpreg, @function\n"
"ut_jmpreg:\n"
"	lea ut_inc(%rip), %rax\n"
"	.globl ut_jmpreg_jmp\n"
"ut_jmpreg_jmp:\n"
"	jmp *%rax\n"
"	.size ut_jmpreg, .-ut_jmpreg\n"
"	.p2align 4\n"
"	.globl ut_jmpmem\n"
"	.type ut_jmpmem, @function\n"
"ut_jmpmem:\n"
"	jmp *ut_incptr(%rip)\n"
"	.size ut_jmpmem, .-ut_jmpmem\n"
"	.p2align 4\n"
"	.globl ut_jmptab\n"
"	.type ut_jmptab, @function\n"
"ut_jmptab:\n"
"	lea ut_jtab(%rip), %rax\n"
"	and $1, %esi\n"
"	.globl ut_jmptab_jmp\n"
"ut_jmptab_jmp:\n"
"	jmp *(%rax,%rsi,8)\n"
"	.size ut_jmptab, .-ut_jmptab\n"
"	.p2align 4\n"
"	.globl ut_negate\n"
"	.type ut_negate, @function\n"
"ut_negate:\n"
"	mov %rdi, %rax\n"
"	neg %rax\n"
"	ret\n"
"	.size ut_negate, .-ut_negate\n"
/* A call through the pointer a, with b: faults when a is a bad pointer. */
"	.p2align 4\n"
"	.globl ut_callptr\n"
"	.type ut_callptr, @function\n"
"ut_callptr:\n"
"	mov %rdi, %rax\n"
"	mov %rsi, %rdi\n"
"	.globl ut_callptr_call\n"
"ut_callptr_call:\n"
"	call *(%rax)\n"
"	.globl ut_callptr_end\n"
"ut_callptr_end:\n"
"	ret\n"
"	.size ut_callptr, .-ut_callptr\n"
/*
 * A return to a: the CPU raises #GP at the ret when a is not canonical
 * (QEMU's TCG returns first and faults at the fetch).  ut_retptr_end
 * resumes from either with the stack as at the call.
 */
"	.p2align 4\n"
"	.globl ut_retptr\n"
"	.type ut_retptr, @function\n"
"ut_retptr:\n"
"	mov %rsp, ut_retptr_sp(%rip)\n"
"	push %rdi\n"
"	.globl ut_retptr_ret\n"
"ut_retptr_ret:\n"
"	ret\n"
"	.globl ut_retptr_end\n"
"ut_retptr_end:\n"
"	mov ut_retptr_sp(%rip), %rsp\n"
"	ret\n"
"	.size ut_retptr, .-ut_retptr\n"
/* A jump to a: faults there, or at the jmp when a is not canonical. */
"	.p2align 4\n"
"	.globl ut_jmpptr\n"
"	.type ut_jmpptr, @function\n"
"ut_jmpptr:\n"
"	jmp *%rdi\n"
"	.size ut_jmpptr, .-ut_jmpptr\n"
/* A load through the first argument: faults when it is a bad pointer. */
"	.p2align 4\n"
"	.globl ut_load\n"
"	.type ut_load, @function\n"
"ut_load:\n"
"	mov (%rdi), %rax\n"
"	.globl ut_load_end\n"
"ut_load_end:\n"
"	ret\n"
"	.size ut_load, .-ut_load\n"
/* a / b, unsigned; probed on the div, which raises #DE when b is 0 */
"	.p2align 4\n"
"	.globl ut_div\n"
"	.type ut_div, @function\n"
"ut_div:\n"
"	mov %rdi, %rax\n"
"	xor %edx, %edx\n"
"	.globl ut_div_insn\n"
"ut_div_insn:\n"
"	div %rsi\n"
"	.globl ut_div_end\n"
"ut_div_end:\n"
"	ret\n"
"	.size ut_div, .-ut_div\n"
/* The stack canary, loaded %fs-relative. a, when the load was right. */
"	.p2align 4\n"
"	.globl ut_fscheck\n"
"	.type ut_fscheck, @function\n"
"ut_fscheck:\n"
"	mov %fs:0x28, %rax\n"
"	xor %fs:0x28, %rax\n"
"	add %rdi, %rax\n"
"	ret\n"
"	.size ut_fscheck, .-ut_fscheck\n"
/* A store below the stack pointer, read back. a + 1 */
"	.p2align 4\n"
"	.globl ut_store\n"
"	.type ut_store, @function\n"
"ut_store:\n"
"	mov %rdi, -0x10(%rsp)\n"
"	mov -0x10(%rsp), %rax\n"
"	add $1, %rax\n"
"	ret\n"
"	.size ut_store, .-ut_store\n"
/* A load with base, index and scale (probed at ut_index_mov). 10 + a + 1 */
"	.p2align 4\n"
"	.globl ut_index\n"
"	.type ut_index, @function\n"
"ut_index:\n"
"	lea ut_table(%rip), %rsi\n"
"	.globl ut_index_mov\n"
"ut_index_mov:\n"
"	mov 0x8(%rsi,%rdi,8), %rax\n"
"	ret\n"
"	.size ut_index, .-ut_index\n"
/* A 32-bit load clears the upper half of its register. a + 0x1234 */
"	.p2align 4\n"
"	.globl ut_load32\n"
"	.type ut_load32, @function\n"
"ut_load32:\n"
"	mov $-1, %rax\n"
"	.globl ut_load32_mov\n"
"ut_load32_mov:\n"
"	mov ut_rodata(%rip), %eax\n"
"	add %rdi, %rax\n"
"	ret\n"
"	.size ut_load32, .-ut_load32\n"
/* lea of base + index * scale + displacement. 5a + 8 */
"	.p2align 4\n"
"	.globl ut_leasib\n"
"	.type ut_leasib, @function\n"
"ut_leasib:\n"
"	lea 0x8(%rdi,%rdi,4), %rax\n"
"	ret\n"
"	.size ut_leasib, .-ut_leasib\n"
/* A 32-bit lea clears the upper half (probed at ut_lea32_lea). a + 1 */
"	.p2align 4\n"
"	.globl ut_lea32\n"
"	.type ut_lea32, @function\n"
"ut_lea32:\n"
"	mov $-1, %rax\n"
"	.globl ut_lea32_lea\n"
"ut_lea32_lea:\n"
"	lea 1(%rdi), %eax\n"
"	ret\n"
"	.size ut_lea32, .-ut_lea32\n"
/* lea through REX-extended base and index (at ut_learex_lea). a - 2 */
"	.p2align 4\n"
"	.globl ut_learex\n"
"	.type ut_learex, @function\n"
"ut_learex:\n"
"	push %r12\n"
"	push %r13\n"
"	mov %rdi, %r13\n"
"	mov $3, %r12\n"
"	.globl ut_learex_lea\n"
"ut_learex_lea:\n"
"	lea -0x8(%r13,%r12,2), %r11\n"
"	mov %r11, %rax\n"
"	pop %r13\n"
"	pop %r12\n"
"	ret\n"
"	.size ut_learex, .-ut_learex\n"
/* lea moving the stack pointer, and back (at ut_learsp_up). a + 4 */
"	.p2align 4\n"
"	.globl ut_learsp\n"
"	.type ut_learsp, @function\n"
"ut_learsp:\n"
"	lea -0x18(%rsp), %rsp\n"
"	mov %rdi, (%rsp)\n"
"	mov (%rsp), %rax\n"
"	.globl ut_learsp_up\n"
"ut_learsp_up:\n"
"	lea 0x18(%rsp), %rsp\n"
"	add $4, %rax\n"
"	ret\n"
"	.size ut_learsp, .-ut_learsp\n"
/* mov $imm32 clears the upper half (probed at ut_movimm_32). a + 0x1234 */
"	.p2align 4\n"
"	.globl ut_movimm\n"
"	.type ut_movimm, @function\n"
"ut_movimm:\n"
"	mov $-1, %rax\n"
"	.globl ut_movimm_32\n"
"ut_movimm_32:\n"
"	mov $0x1234, %eax\n"
"	add %rdi, %rax\n"
"	ret\n"
"	.size ut_movimm, .-ut_movimm\n"
/* mov $imm32 to a 64-bit register is sign-extended. a - 5 */
"	.p2align 4\n"
"	.globl ut_movneg\n"
"	.type ut_movneg, @function\n"
"ut_movneg:\n"
"	mov $-5, %rax\n"
"	add %rdi, %rax\n"
"	ret\n"
"	.size ut_movneg, .-ut_movneg\n"
/* An int3 of the program's own. a + 4 after the SIGTRAP handler returns. */
"	.p2align 4\n"
"	.globl ut_int3\n"
"	.type ut_int3, @function\n"
"ut_int3:\n"
"	int3\n"
"	.globl ut_int3_after\n"
"ut_int3_after:\n"
"	lea 4(%rdi), %rax\n"
"	ret\n"
"	.size ut_int3, .-ut_int3\n"
/* The same with the two-byte form, int $3 (cd 03). */
"	.p2align 4\n"
"	.globl ut_int_3\n"
"	.type ut_int_3, @function\n"
"ut_int_3:\n"
"	.byte 0xcd, 0x03\n"	/* as writes int $3 as int3 */
"	lea 4(%rdi), %rax\n"
"	ret\n"
"	.size ut_int_3, .-ut_int_3\n"
/* syscall stepped out of line: getpid() */
"	.p2align 4\n"
"	.globl ut_syscall\n"
"	.type ut_syscall, @function\n"
"ut_syscall:\n"
"	mov $39, %eax\n"
"	.globl ut_syscall_insn\n"
"ut_syscall_insn:\n"
"	syscall\n"
"	ret\n"
"	.size ut_syscall, .-ut_syscall\n"
/* Instructions nobody should be able to probe; never executed. */
"	.p2align 4\n"
"	.globl ut_never\n"
"	.type ut_never, @function\n"
"ut_never:\n"
"	.globl ut_never_hlt\n"
"ut_never_hlt:\n"
"	hlt\n"
"	.globl ut_never_int80\n"
"ut_never_int80:\n"
"	int $0x80\n"
"	.globl ut_never_in\n"
"ut_never_in:\n"
"	in (%dx), %al\n"
"	.globl ut_never_int1\n"
"ut_never_int1:\n"
"	.byte 0xf1\n"
"	ret\n"
"	.size ut_never, .-ut_never\n"
/* Page-aligned filler so that ut_far sits on a page of its own. */
"	.p2align 12\n"
"	.globl ut_far\n"
"	.type ut_far, @function\n"
"ut_far:\n"
"	lea 5(%rdi), %rax\n"
"	ret\n"
"	.size ut_far, .-ut_far\n"
"	.p2align 12\n"
/* 600 one-byte nops across a page boundary, for many probes at once. a */
"	.skip 3800\n"
"	.globl ut_sled\n"
"	.type ut_sled, @function\n"
"ut_sled:\n"
"	.rept 600\n"
"	nop\n"
"	.endr\n"
"	mov %rdi, %rax\n"
"	ret\n"
"	.size ut_sled, .-ut_sled\n"
);

/*
 * Registers across a return: ut_regs sets every register a function may
 * change, and the flags, to known values; ut_regcheck(n) calls it n times
 * with the registers a function must keep set to known values too, and
 * checks all of them after each return.  0 when every return was right,
 * else the number of calls left when one was not.
 */
asm("	.text\n"
"	.p2align 4\n"
"	.globl ut_regs\n"
"	.type ut_regs, @function\n"
"ut_regs:\n"
"	mov $0x11111111, %rax\n"
"	mov $-0x22222222, %rcx\n"
"	mov $0x33333333, %rdx\n"
"	mov $-0x44444444, %rsi\n"
"	mov $0x55555555, %rdi\n"
"	mov $-0x66666666, %r8\n"
"	mov $0x77777777, %r9\n"
"	mov $-0x12345678, %r10\n"
"	mov $0x7fffffff, %r11d\n"
"	add $1, %r11d\n"		/* OF, SF set; ZF clear */
"	stc\n"				/* CF set */
"	ret\n"
"	.size ut_regs, .-ut_regs\n"
"	.p2align 4\n"
"	.globl ut_regcheck\n"
"	.type ut_regcheck, @function\n"
"ut_regcheck:\n"
"	push %rbx\n"
"	push %rbp\n"
"	push %r12\n"
"	push %r13\n"
"	push %r14\n"
"	push %r15\n"
"	mov %rdi, %r15\n"
"	mov $-0x4f4f4f50, %rbx\n"
"	mov $0x3b3b3b3b, %rbp\n"
"	mov $-0x3d3d3d3e, %r12\n"
"	mov $0x2c2c2c2c, %r13\n"
"	mov %rsp, %r14\n"
"1:	test %r15, %r15\n"
"	jz 8f\n"
"	call ut_regs\n"
"	jnc 9f\n"
"	jno 9f\n"
"	jns 9f\n"
"	jz 9f\n"
"	cmp %r14, %rsp\n"
"	jne 9f\n"
"	cmp $0x11111111, %rax\n"
"	jne 9f\n"
"	cmp $-0x22222222, %rcx\n"
"	jne 9f\n"
"	cmp $0x33333333, %rdx\n"
"	jne 9f\n"
"	cmp $-0x44444444, %rsi\n"
"	jne 9f\n"
"	cmp $0x55555555, %rdi\n"
"	jne 9f\n"
"	cmp $-0x66666666, %r8\n"
"	jne 9f\n"
"	cmp $0x77777777, %r9\n"
"	jne 9f\n"
"	cmp $-0x12345678, %r10\n"
"	jne 9f\n"
"	mov $0x80000000, %eax\n"
"	cmp %rax, %r11\n"
"	jne 9f\n"
"	cmp $-0x4f4f4f50, %rbx\n"
"	jne 9f\n"
"	cmp $0x3b3b3b3b, %rbp\n"
"	jne 9f\n"
"	cmp $-0x3d3d3d3e, %r12\n"
"	jne 9f\n"
"	cmp $0x2c2c2c2c, %r13\n"
"	jne 9f\n"
"	dec %r15\n"
"	jmp 1b\n"
"8:	xor %eax, %eax\n"
"	jmp 7f\n"
"9:	mov %r15, %rax\n"
"7:	pop %r15\n"
"	pop %r14\n"
"	pop %r13\n"
"	pop %r12\n"
"	pop %rbp\n"
"	pop %rbx\n"
"	ret\n"
"	.size ut_regcheck, .-ut_regcheck\n"
);

long ut_regs(void);
long ut_regcheck(long n);
long ut_step(long a, long b);
long ut_nop(long a);
long ut_push(long a);
long ut_riprel(long a);
long ut_ripadd(long a, long b);
long ut_callrel(long a);
long ut_callreg(long a);
long ut_callmem(long a);
long ut_callsp(long a);
long ut_jmpreg(long a);
long ut_jmpmem(long a);
long ut_jmptab(long a, long b);
long ut_callptr(long p, long a);
long ut_jmpptr(long p);
long ut_retptr(long p);
extern char ut_retptr_ret[], ut_retptr_end[];
long ut_retptr_sp;
long ut_jmp(long a);
long ut_jcc(long a);
long ut_load(long p);
long ut_div(long a, long b);
long ut_fscheck(long a);
long ut_store(long a);
long ut_index(long a);
long ut_load32(long a);
long ut_movimm(long a);
long ut_movneg(long a);
long ut_int3(long a);
long ut_int_3(long a);
long ut_syscall(void);
long ut_far(long a);
extern char ut_load_end[], ut_int3_after[];
extern char ut_callptr_call[], ut_callptr_end[];
extern char ut_div_insn[], ut_div_end[];

#define NOINLINE __attribute__((noinline, noclone, used))

/* A function with a string argument: a + b + strlen(s). */
NOINLINE long ut_args(long a, unsigned int b, const char *s)
{
	asm volatile("" ::: "memory");
	return a + b + (long)strlen(s);
}

/* Plain recursion: fib(n). */
NOINLINE long ut_fib(long n)
{
	asm volatile("" ::: "memory");
	return n < 2 ? n : ut_fib(n - 1) + ut_fib(n - 2);
}

/* Recursion @n deep: returns n (each level adds one). */
NOINLINE long ut_depth(long n)
{
	asm volatile("" ::: "memory");
	return n <= 0 ? 0 : ut_depth(n - 1) + 1;
}

/* A plain C function: 3 * a + b. */
NOINLINE long ut_plain(long a, long b)
{
	asm volatile("" ::: "memory");
	return 3 * a + b;
}

/*
 * Values a syscall returns only to ask for its restart (-ERESTARTSYS to
 * -ERESTART_RESTARTBLOCK): -512 - a % 5.  A return probe must hand them
 * back untouched, with a signal pending or not.
 */
NOINLINE long ut_errval(long a, long b)
{
	asm volatile("" ::: "memory");
	return -512 - a % 5;
}

/*
 * Install a seccomp filter that kills the process on syscall @nr, then
 * return 5 * a (a return probe on it returns after the filter is in).
 * -errno when the filter could not be installed.
 */
NOINLINE long ut_sandbox(long nr, long a)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 5 * a;
}

/* syscall(nr): its result, or -errno. */
NOINLINE long ut_sys(long nr)
{
	long r = syscall(nr, 0, 0, 0);

	return r == -1 ? -errno : r;
}

/* longjmp out of two probed frames. */
static jmp_buf ut_jb;

NOINLINE long ut_lj_inner(long a)
{
	asm volatile("" ::: "memory");
	if (a >= 0)
		longjmp(ut_jb, (int)a + 1);
	return a;
}

NOINLINE long ut_lj_outer(long a)
{
	long r = ut_lj_inner(a);

	asm volatile("" ::: "memory");
	return r + 100;
}

/* siglongjmp out of a signal handler that ran inside a probed function. */
static sigjmp_buf ut_sjb;

static void ut_sigjump_handler(int sig)
{
	siglongjmp(ut_sjb, sig);
}

NOINLINE long ut_raiser(long sig)
{
	asm volatile("" ::: "memory");
	raise((int)sig);
	return -1;
}

/* fork inside a probed function: 1000 + a in the parent, 1001 + a in the child. */
static int forker_child_status;

NOINLINE long ut_forker(long a)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		return 1001 + a;
	if (pid > 0) {
		int st;

		waitpid(pid, &st, 0);
		forker_child_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}
	return pid > 0 ? 1000 + a : -1;
}

/* vfork inside a probed function: the child exits at once. */
NOINLINE long ut_vforker(long a)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(7);
	if (pid > 0) {
		int st;

		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) + a : -1;
	}
	return -1;
}

/* Blocks until a line arrives on stdin: a return pending for long. */
NOINLINE long ut_block(long a)
{
	char line[64];

	printf("blocked\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return -1;
	return a + 10;
}

/* exec from inside a probed function: never returns on success. */
static char ut_self[PATH_MAX - 64];

NOINLINE long ut_execer(long a)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "call ut_plain 1 %ld 0", a);
	fflush(stdout);
	execl(ut_self, ut_self, "--cmd", cmd, (char *)NULL);
	return -1;
}

/* SDT site: counts how often it saw the semaphore set. */
NOINLINE long ut_sdt(long n)
{
	long seen = 0, i;

	for (i = 0; i < n; i++) {
		if (*(volatile unsigned short *)&ust_tick_semaphore)
			seen++;
		STAP_PROBE1(ust, tick, i);
	}
	return seen;
}

typedef long (*ut_fn)(long, long, long);

struct fn {
	const char *name;
	void *fn;
};

static struct fn fns[] = {
	{ "ut_step", ut_step }, { "ut_nop", ut_nop }, { "ut_push", ut_push },
	{ "ut_riprel", ut_riprel }, { "ut_ripadd", ut_ripadd },
	{ "ut_callrel", ut_callrel }, { "ut_callreg", ut_callreg },
	{ "ut_callmem", ut_callmem }, { "ut_callsp", ut_callsp },
	{ "ut_jmpreg", ut_jmpreg }, { "ut_jmpmem", ut_jmpmem },
	{ "ut_jmptab", ut_jmptab }, { "ut_callptr", ut_callptr },
	{ "ut_negate", ut_negate }, { "ut_jmpptr", ut_jmpptr },
	{ "ut_jmp", ut_jmp }, { "ut_jcc", ut_jcc }, { "ut_load", ut_load },
	{ "ut_fscheck", ut_fscheck }, { "ut_store", ut_store },
	{ "ut_index", ut_index }, { "ut_load32", ut_load32 },
	{ "ut_movimm", ut_movimm }, { "ut_movneg", ut_movneg },
	{ "ut_int3", ut_int3 }, { "ut_syscall", ut_syscall },
	{ "ut_far", ut_far }, { "ut_args", ut_args }, { "ut_fib", ut_fib },
	{ "ut_depth", ut_depth }, { "ut_plain", ut_plain },
	{ "ut_lj_outer", ut_lj_outer }, { "ut_raiser", ut_raiser },
	{ "ut_forker", ut_forker }, { "ut_vforker", ut_vforker },
	{ "ut_block", ut_block }, { "ut_execer", ut_execer },
	{ "ut_sdt", ut_sdt }, { "ut_regs", ut_regs },
	{ "ut_regcheck", ut_regcheck }, { "ut_errval", ut_errval },
	{ "ut_sandbox", ut_sandbox }, { "ut_sys", ut_sys },
	{ "ut_div", ut_div },
	{ NULL, NULL },
};

/* The shared library and a private alias mapping of one of its pages. */
static void *lib;
static char *alias;
static size_t alias_len;
static long alias_off;

/* Move the alias to a fresh address (the old range is left unmapped). */
static int alias_move(void)
{
	char *dst = mmap(NULL, alias_len + 65536, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *n;

	if (dst == MAP_FAILED)
		return -1;
	n = mremap(alias, alias_len, alias_len, MREMAP_MAYMOVE | MREMAP_FIXED,
		   dst + 65536);
	munmap(dst, 65536);
	if (n == MAP_FAILED)
		return -1;
	alias = n;
	return 0;
}

static void *lookup(const char *name)
{
	struct fn *f;

	if (!strcmp(name, "alias"))
		return alias ? alias + (alias_off & 4095) : NULL;
	for (f = fns; f->name; f++)
		if (!strcmp(f->name, name))
			return f->fn;
	if (lib && dlsym(lib, name))
		return dlsym(lib, name);
	/* anything else we export (we are linked with -rdynamic) */
	return dlsym(RTLD_DEFAULT, name);
}

static char dir[PATH_MAX - 64];

static void libpath(char *buf, size_t len)
{
	snprintf(buf, len, "%s/libuprobe_shlib.so", dir);
}

/* Threads that call one function N times each, on a CPU of their own or not. */
struct job {
	ut_fn fn;
	long n, a, b, c, last;
	int cpu;		/* -1: wherever the scheduler puts it */
	pthread_barrier_t *bar;
};

static void *job_run(void *arg)
{
	struct job *j = arg;
	long i;

	if (j->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(j->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	pthread_barrier_wait(j->bar);
	for (i = 0; i < j->n; i++)
		j->last = j->fn(j->a, j->b, j->c);
	return NULL;
}

/*
 * A crowd of threads that each call a function once and then all wait
 * for one another: none may need anything the others still hold.
 */
struct crowd {
	ut_fn fn;
	long a, b, last;
	pthread_barrier_t *bar;
};

static void *crowd_run(void *arg)
{
	struct crowd *c = arg;

	c->last = c->fn(c->a, c->b, 0);
	pthread_barrier_wait(c->bar);
	return NULL;
}

/* Signal bookkeeping for the signal commands. */
static volatile long nsig, handler_calls;
static ut_fn sig_fn;
static volatile long sig_rip, sig_addr, sig_code, sig_rsp;
/* Where a caught SIGSEGV or SIGBUS resumes, with -1 in %rax. */
static void *sig_resume;
/* The "[uprobes]" mapping, and the signals whose context was inside it. */
static unsigned long xol_lo, xol_hi;
static volatile long sig_in_xol;

static void find_xol_area(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	xol_lo = 0;
	xol_hi = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[uprobes]"))
			sscanf(line, "%lx-%lx", &xol_lo, &xol_hi);
	if (f)
		fclose(f);
}

static void count_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	unsigned long ip = uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)si;
	if (ip >= xol_lo && ip < xol_hi)
		sig_in_xol++;
	nsig++;
	if (sig_fn) {
		sig_fn(1, 1, 0);
		handler_calls++;
	}
}

/* SIGSEGV/SIGTRAP: record where, then skip to the instruction after. */
static void where_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	sig_rip = uc->uc_mcontext.gregs[REG_RIP];
	sig_rsp = uc->uc_mcontext.gregs[REG_RSP];
	sig_addr = (long)si->si_addr;
	sig_code = si->si_code;
	nsig++;
	if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE) {
		uc->uc_mcontext.gregs[REG_RIP] =
			(long)(sig == SIGFPE ? ut_div_end : sig_resume);
		uc->uc_mcontext.gregs[REG_RAX] = -1;
	}
}

/* Catch @sig with where_handler(), its records cleared. */
static void where_catch(int sig)
{
	struct sigaction sa = { .sa_sigaction = where_handler,
				.sa_flags = SA_SIGINFO };

	sigaction(sig, &sa, NULL);
	sig_resume = ut_load_end;
	nsig = 0;
	sig_rip = 0;
	sig_addr = 0;
	sig_code = 0;
}

/*
 * @fn(@a, @b) with SIGSEGV and SIGBUS caught by where_handler(), which
 * resumes at @resume with -1 in %rax; the default actions afterwards.
 */
static long under_segv(ut_fn fn, void *resume, long a, long b)
{
	long r;

	where_catch(SIGBUS);
	where_catch(SIGSEGV);
	sig_resume = resume;
	r = fn(a, b, 0);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	return r;
}

/* The child forkpause left waiting, and its report pipe. */
/* Syscall user dispatch: the selector, and the SIGSYS it raised. */
static volatile char sud_selector;
static volatile long nsigsys;

static void sud_handler(int sig, siginfo_t *si, void *ucv)
{
	sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
	nsigsys++;
}

/*
 * A child traced with PTRACE_SYSCALL calls FN(A, B) N times and exits 0
 * when each returned @want; the tracer counts its syscall stops with
 * number @nr.
 */
static void ptraced(ut_fn fn, long n, long want, long a, long b, long nr)
{
	long i, bad = 0, seen = 0;
	struct user_regs_struct regs;
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (i = 0; i < n; i++)
			bad += fn(a, b, 0) != want;
		_exit(bad ? 1 : 0);
	}
	for (;;) {
		if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
			break;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			ptrace(PTRACE_GETREGS, pid, NULL, &regs);
			if ((long)regs.orig_rax == nr)
				seen++;
		} else if (WSTOPSIG(st) == SIGSTOP) {
			ptrace(PTRACE_SETOPTIONS, pid, NULL,
			       (void *)PTRACE_O_TRACESYSGOOD);
		}
		ptrace(PTRACE_SYSCALL, pid, NULL, NULL);
	}
	printf("ok %ld %d\n", seen,
	       WIFEXITED(st) ? WEXITSTATUS(st) : 0x100 + WTERMSIG(st));
}

static pid_t paused;
static int paused_pipe[2];

/* The last "ok" value printed, for --once's exit status. */
static long last_result;

static long parse(const char *s)
{
	return s ? strtol(s, NULL, 0) : 0;
}

/* One command; writes one reply line. */
static void run(char *line)
{
	char *argv[12] = { NULL };
	int argc = 0;
	char *save = NULL, *tok;
	ut_fn fn;

	for (tok = strtok_r(line, " \t\n", &save); tok && argc < 11;
	     tok = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = tok;
	if (!argc) {
		printf("err empty\n");
		return;
	}

	if (!strcmp(argv[0], "ping")) {
		printf("ok %d\n", getpid());
	} else if (!strcmp(argv[0], "call") && argc >= 3) {
		/* call FN N [A B C]: call N times, reply the last result */
		long i, n = parse(argv[2]), r = 0;

		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function %s\n", argv[1]);
			return;
		}
		for (i = 0; i < n; i++)
			r = fn(parse(argv[3]), parse(argv[4]), parse(argv[5]));
		last_result = r;
		printf("ok %ld\n", r);
	} else if (!strcmp(argv[0], "callstr") && argc >= 5) {
		/* callstr N A B STRING: ut_args(A, B, STRING) */
		long i, n = parse(argv[1]), r = 0;

		for (i = 0; i < n; i++)
			r = ut_args(parse(argv[2]), parse(argv[3]), argv[4]);
		printf("ok %ld\n", r);
	} else if ((!strcmp(argv[0], "threads") || !strcmp(argv[0], "pinned")) &&
		   argc >= 4) {
		/*
		 * threads FN T N [A B]: T threads call FN N times each.
		 * pinned FN T N [A B]: the same, thread i bound to the i-th
		 * CPU we may run on (round robin), so that they really run
		 * at the same time on different CPUs.
		 */
		long t, nt = parse(argv[2]);
		pthread_t th[64];
		struct job jobs[64];
		pthread_barrier_t bar;
		int cpus[CPU_SETSIZE], ncpu = 0, c;
		cpu_set_t allowed;
		long sum = 0;

		fn = lookup(argv[1]);
		if (!fn || nt < 1 || nt > 64) {
			printf("err bad threads\n");
			return;
		}
		if (!strcmp(argv[0], "pinned")) {
			if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
				printf("err sched_getaffinity %s\n", strerror(errno));
				return;
			}
			for (c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &allowed))
					cpus[ncpu++] = c;
		}
		pthread_barrier_init(&bar, NULL, nt);
		for (t = 0; t < nt; t++) {
			jobs[t] = (struct job){ fn, parse(argv[3]), parse(argv[4]),
					       parse(argv[5]), 0, 0,
					       ncpu ? cpus[t % ncpu] : -1, &bar };
			pthread_create(&th[t], NULL, job_run, &jobs[t]);
		}
		for (t = 0; t < nt; t++) {
			pthread_join(th[t], NULL);
			sum += jobs[t].last;
		}
		pthread_barrier_destroy(&bar);
		printf("ok %ld\n", sum);
	} else if (!strcmp(argv[0], "crowd") && argc >= 3) {
		/*
		 * crowd FN T [A B]: T threads (up to 512) call FN once each,
		 * then meet at a barrier; reply the sum of their results.
		 */
		long t, nt = parse(argv[2]), sum = 0, started;
		static pthread_t th[512];
		static struct crowd cr[512];
		pthread_barrier_t bar;
		pthread_attr_t attr;

		fn = lookup(argv[1]);
		if (!fn || nt < 1 || nt > 512) {
			printf("err bad crowd\n");
			return;
		}
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		pthread_barrier_init(&bar, NULL, nt);
		for (started = 0; started < nt; started++) {
			cr[started] = (struct crowd){ fn, parse(argv[3]),
						      parse(argv[4]), 0, &bar };
			if (pthread_create(&th[started], &attr, crowd_run,
					   &cr[started]))
				break;
		}
		pthread_attr_destroy(&attr);
		if (started < nt) {
			/* Cannot happen short of memory; do not leave them waiting. */
			printf("err pthread_create %ld of %ld\n", started, nt);
			fflush(stdout);
			_exit(1);
		}
		for (t = 0; t < nt; t++) {
			pthread_join(th[t], NULL);
			sum += cr[t].last;
		}
		pthread_barrier_destroy(&bar);
		printf("ok %ld\n", sum);
	} else if (!strcmp(argv[0], "byte") && argc >= 2) {
		/* byte FN [OFF]: the byte this process sees at FN+OFF */
		unsigned char *p = lookup(argv[1]);

		if (!p) {
			printf("err no function %s\n", argv[1]);
			return;
		}
		printf("ok 0x%02x\n", p[parse(argv[2])]);
	} else if (!strcmp(argv[0], "bytesum") && argc >= 3) {
		/* bytesum FN N: the sum of the N bytes this process sees at FN */
		unsigned char *p = lookup(argv[1]);
		long i, n = parse(argv[2]), sum = 0;

		if (!p) {
			printf("err no function %s\n", argv[1]);
			return;
		}
		for (i = 0; i < n; i++)
			sum += p[i];
		printf("ok %ld\n", sum);
	} else if (!strcmp(argv[0], "addr") && argc >= 2) {
		printf("ok 0x%lx\n", (unsigned long)lookup(argv[1]));
	} else if (!strcmp(argv[0], "fork") && argc >= 3) {
		/*
		 * fork FN N [A B]: the child calls FN N times and exits with
		 * the byte it sees at FN's first instruction afterwards (or
		 * 0xff if a call returned a wrong value vs its parent's).
		 */
		long n = parse(argv[2]);
		unsigned char *p;
		pid_t pid;
		int st;

		fn = lookup(argv[1]);
		p = (unsigned char *)fn;
		if (!fn) {
			printf("err no function\n");
			return;
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			long i;

			for (i = 0; i < n; i++)
				fn(parse(argv[3]), parse(argv[4]), 0);
			_exit(p[0]);
		}
		waitpid(pid, &st, 0);
		printf("ok %d 0x%02x\n", pid,
		       WIFEXITED(st) ? WEXITSTATUS(st) : 0x100 + WTERMSIG(st));
	} else if (!strcmp(argv[0], "forker") && argc >= 2) {
		/* forker A: ut_forker(A) forks; the child exits with its result - 1000 */
		long a = parse(argv[1]), r = ut_forker(a);

		if (r == 1001 + a)
			_exit(1 + a);
		printf("ok %ld %d\n", r, forker_child_status);
	} else if (!strcmp(argv[0], "forkpause") && argc >= 2) {
		/*
		 * forkpause FN: fork a child that waits for "release", then
		 * reports the byte it sees at FN and FN(1, 2)'s result.
		 */
		sigset_t set;

		fn = lookup(argv[1]);
		if (!fn || pipe(paused_pipe)) {
			printf("err forkpause\n");
			return;
		}
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		fflush(stdout);
		paused = fork();
		if (paused == 0) {
			unsigned char b;
			int sig;
			long v;

			close(paused_pipe[0]);
			sigwait(&set, &sig);
			b = *(unsigned char *)fn;
			v = fn(1, 2, 0);
			dprintf(paused_pipe[1], "0x%02x %ld\n", b, v);
			_exit(0);
		}
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		close(paused_pipe[1]);
		printf("ok %d\n", paused);
	} else if (!strcmp(argv[0], "release")) {
		char buf[128] = "";
		ssize_t n;

		if (paused <= 0) {
			printf("err nothing paused\n");
			return;
		}
		kill(paused, SIGUSR1);
		n = read(paused_pipe[0], buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (n > 0 && buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		waitpid(paused, NULL, 0);
		close(paused_pipe[0]);
		paused = 0;
		printf("ok %s\n", buf);
	} else if (!strcmp(argv[0], "spawnloop") && argc >= 4) {
		/*
		 * spawnloop N WANT CMD...: N times, fork+exec a fresh image
		 * running CMD; reply how many did not exit with status WANT.
		 */
		long i, n = parse(argv[1]), want = parse(argv[2]), bad = 0;
		char cmd[256] = "";
		int j;

		for (j = 3; j < argc; j++) {
			strcat(cmd, argv[j]);
			strcat(cmd, " ");
		}
		fflush(stdout);
		for (i = 0; i < n; i++) {
			pid_t pid = fork();
			int st;

			if (pid == 0) {
				int fd = open("/dev/null", O_RDWR);

				dup2(fd, 0);
				dup2(fd, 1);
				execl(ut_self, ut_self, "--once", cmd, (char *)NULL);
				_exit(127);
			}
			waitpid(pid, &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st) != want)
				bad++;
		}
		printf("ok %ld\n", bad);
	} else if (!strcmp(argv[0], "vfork") && argc >= 3) {
		/* vfork FN N: the child calls FN N times and _exits */
		long n = parse(argv[2]);
		pid_t pid;
		int st;

		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function\n");
			return;
		}
		fflush(stdout);
		pid = vfork();
		if (pid == 0) {
			long i, r = 0;

			for (i = 0; i < n; i++)
				r = fn(parse(argv[3]), parse(argv[4]), 0);
			_exit(r & 0xff);
		}
		waitpid(pid, &st, 0);
		printf("ok %d %d\n", pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (!strcmp(argv[0], "spawn") && argc >= 2) {
		/* spawn CMD...: fork+exec ourselves to run one command */
		char cmd[256] = "";
		pid_t pid;
		int i, st;

		for (i = 1; i < argc; i++) {
			strcat(cmd, argv[i]);
			strcat(cmd, " ");
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_RDWR);

			dup2(fd, 0);
			dup2(fd, 1);
			execl(ut_self, ut_self, "--once", cmd, (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		printf("ok %d %d\n", pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	} else if (!strcmp(argv[0], "exec") && argc >= 2) {
		/* exec CMD...: replace ourselves with a fresh image running CMD */
		char cmd[256] = "";
		int i;

		for (i = 1; i < argc; i++) {
			strcat(cmd, argv[i]);
			strcat(cmd, " ");
		}
		fflush(stdout);
		execl(ut_self, ut_self, "--cmd", cmd, (char *)NULL);
		printf("err exec %s\n", strerror(errno));
	} else if (!strcmp(argv[0], "dlopen")) {
		char p[PATH_MAX];

		libpath(p, sizeof(p));
		lib = dlopen(p, RTLD_NOW);
		printf(lib ? "ok\n" : "err %s\n", dlerror());
	} else if (!strcmp(argv[0], "dlclose")) {
		printf(lib && !dlclose(lib) ? "ok\n" : "err\n");
		lib = NULL;
	} else if (!strcmp(argv[0], "alias") && argc >= 3) {
		/* alias OFF NPAGES [shared]: map the library's page(s) at OFF r-x */
		char p[PATH_MAX];
		int fd;

		libpath(p, sizeof(p));
		alias_off = parse(argv[1]);
		alias_len = parse(argv[2]) * 4096;
		fd = open(p, O_RDONLY);
		alias = mmap(NULL, alias_len, PROT_READ | PROT_EXEC,
			     argc >= 4 && !strcmp(argv[3], "shared") ?
			     MAP_SHARED : MAP_PRIVATE, fd, alias_off & ~4095L);
		close(fd);
		if (alias == MAP_FAILED) {
			alias = NULL;
			printf("err mmap %s\n", strerror(errno));
			return;
		}
		printf("ok %p\n", alias);
	} else if (!strcmp(argv[0], "unalias")) {
		/* unalias [tail]: unmap the alias, or only its pages after the first */
		int r;

		if (argc >= 2 && !strcmp(argv[1], "tail")) {
			r = munmap(alias + 4096, alias_len - 4096);
			alias_len = 4096;
		} else {
			r = munmap(alias, alias_len);
			alias = NULL;
		}
		printf(r ? "err %s\n" : "ok\n", strerror(errno));
	} else if (!strcmp(argv[0], "mremap")) {
		/* mremap: move the alias to a fresh address */
		char *old = alias;

		if (alias_move()) {
			printf("err mremap %s\n", strerror(errno));
			return;
		}
		printf("ok %p %p\n", old, alias);
	} else if (!strcmp(argv[0], "remaploop") && argc >= 2) {
		/*
		 * remaploop N: N times, move the alias, call it with (i, 1, 0);
		 * replies the sum and the calls made, fewer than N when 60 s
		 * ran out first (a debug kernel).
		 */
		long i, n = parse(argv[1]), sum = 0;
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++) {
			if (alias_move()) {
				printf("err mremap %s\n", strerror(errno));
				return;
			}
			sum += ((ut_fn)(alias + (alias_off & 4095)))(i, 1, 0);
			if ((i & 15) == 15) {
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec >= 60) {
					i++;
					break;
				}
			}
		}
		printf("ok %ld %ld\n", sum, i);
	} else if (!strcmp(argv[0], "mprotect") && argc >= 2) {
		/* mprotect rw|rx|r: change the alias's protection */
		int prot = !strcmp(argv[1], "rw") ? PROT_READ | PROT_WRITE :
			   !strcmp(argv[1], "rx") ? PROT_READ | PROT_EXEC : PROT_READ;

		printf(mprotect(alias, alias_len, prot) ? "err %s\n" : "ok\n",
		       strerror(errno));
	} else if (!strcmp(argv[0], "setsema") && argc >= 2) {
		/* setsema V: the program writes its own semaphore */
		*(volatile unsigned short *)&ust_tick_semaphore = parse(argv[1]);
		printf("ok\n");
	} else if (!strcmp(argv[0], "sema")) {
		printf("ok %u\n", *(volatile unsigned short *)&ust_tick_semaphore);
	} else if (!strcmp(argv[0], "sud") && argc >= 3) {
		/*
		 * sud FN N [A B]: with syscall user dispatch sending every
		 * syscall to SIGSYS, call FN(A, B) N times.  Replies the
		 * last result and the SIGSYS raised meanwhile.
		 */
		struct sigaction sa = { .sa_sigaction = sud_handler,
					.sa_flags = SA_SIGINFO }, old;
		long i, n = parse(argv[2]), r = 0;

		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function\n");
			return;
		}
		nsigsys = 0;
		sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
		sigaction(SIGSYS, &sa, &old);
		if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON,
			  0, 0, &sud_selector)) {
			printf("err prctl %s\n", strerror(errno));
			return;
		}
		for (i = 0; i < n; i++) {
			sud_selector = SYSCALL_DISPATCH_FILTER_BLOCK;
			asm volatile("" ::: "memory");
			r = fn(parse(argv[3]), parse(argv[4]), 0);
			asm volatile("" ::: "memory");
			sud_selector = SYSCALL_DISPATCH_FILTER_ALLOW;
		}
		prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
		sigaction(SIGSYS, &old, NULL);
		printf("ok %ld %ld\n", r, nsigsys);
	} else if (!strcmp(argv[0], "ptraced") && argc >= 5) {
		/*
		 * ptraced FN N NR WANT [A B]: reply how many syscall stops
		 * with number NR a tracer saw while its child called FN(A, B)
		 * N times, and the child's exit (0: each result was WANT).
		 */
		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function\n");
			return;
		}
		ptraced(fn, parse(argv[2]), parse(argv[4]), parse(argv[5]),
			parse(argv[6]), parse(argv[3]));
	} else if (!strcmp(argv[0], "sigloop") && argc >= 4) {
		/*
		 * sigloop FN N USEC [handler]: call FN(i, 1) N times while an
		 * interval timer sends SIGALRM every USEC us; with "handler"
		 * the handler calls FN too.  Replies the sum of results, the
		 * signals seen, the handler's calls, the calls made and the
		 * signals whose context was in the "[uprobes]" mapping.
		 *
		 * On a slow kernel (KASAN under TCG) a hit can outlast USEC,
		 * and a handler that hits the probe again would then starve
		 * the loop: the interval is stretched to 10 times the cost of
		 * a call, measured over the first calls, and the loop ends
		 * early after 60 s.  The caller checks against the reply.
		 */
		long i, n = parse(argv[2]), usec = parse(argv[3]), sum = 0;
		struct itimerval it, off = { 0 };
		struct sigaction sa = { .sa_sigaction = count_handler,
					.sa_flags = SA_SIGINFO };
		struct timespec t0, t1;
		long calib = n < 64 ? n : 64, per_call;

		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function\n");
			return;
		}
		sig_fn = argc >= 5 ? fn : NULL;
		nsig = 0;
		handler_calls = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < calib; i++)
			sum += fn(i, 1, 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		find_xol_area();
		sig_in_xol = 0;
		per_call = ((t1.tv_sec - t0.tv_sec) * 1000000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000) / (calib ? calib : 1);
		if (usec < 10 * per_call)
			usec = 10 * per_call;
		it.it_interval.tv_sec = usec / 1000000;
		it.it_interval.tv_usec = usec % 1000000;
		it.it_value = it.it_interval;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (; i < n; i++) {
			sum += fn(i, 1, 0);
			if ((i & 63) == 63) {
				clock_gettime(CLOCK_MONOTONIC, &t1);
				if (t1.tv_sec - t0.tv_sec >= 60) {
					i++;
					break;
				}
			}
		}
		setitimer(ITIMER_REAL, &off, NULL);
		signal(SIGALRM, SIG_IGN);
		printf("ok %ld %ld %ld %ld %ld\n", sum, nsig, handler_calls, i,
		       sig_in_xol);
	} else if (!strcmp(argv[0], "failnth") && argc >= 4) {
		/*
		 * failnth FN NTH A: FN(A, 1) with the NTH-th allocation of
		 * this thread failing (fault injection's fail-nth).  The file
		 * is opened and FN's page faulted in first, so that only the
		 * call runs with the count set.  Replies the result and what
		 * is left of the count (0: the failure was injected).
		 */
		char left[32] = "";
		int fd, len;
		long r;

		fn = lookup(argv[1]);
		fd = open("/proc/thread-self/fail-nth", O_RDWR);
		if (!fn || fd < 0) {
			printf("err failnth %s\n", strerror(errno));
			return;
		}
		(void)*(volatile unsigned char *)fn;
		len = strlen(argv[2]);
		if (pwrite(fd, argv[2], len, 0) != len) {
			printf("err fail-nth %s\n", strerror(errno));
			close(fd);
			return;
		}
		r = fn(parse(argv[3]), 1, 0);
		if (pread(fd, left, sizeof(left) - 1, 0) < 0)
			strcpy(left, "-1");
		pwrite(fd, "0", 1, 0);
		close(fd);
		printf("ok %ld %ld\n", r, strtol(left, NULL, 10));
	} else if (!strcmp(argv[0], "failloop") && argc >= 3) {
		/*
		 * failloop FN N: the sum of FN(i, 1) for i < N, with this
		 * process's make-it-fail set around the loop only (the file
		 * opened and FN's page faulted in before), so that the
		 * allocations that fault injection fails are the hits'.
		 */
		long i, n = parse(argv[2]), sum = 0;
		int fd;

		fn = lookup(argv[1]);
		fd = open("/proc/self/make-it-fail", O_WRONLY);
		if (!fn || fd < 0) {
			printf("err failloop %s\n", strerror(errno));
			return;
		}
		(void)*(volatile unsigned char *)fn;
		if (pwrite(fd, "1", 1, 0) != 1) {
			printf("err make-it-fail %s\n", strerror(errno));
			close(fd);
			return;
		}
		for (i = 0; i < n; i++)
			sum += fn(i, 1, 0);
		pwrite(fd, "0", 1, 0);
		close(fd);
		printf("ok %ld\n", sum);
	} else if (!strcmp(argv[0], "fault") && argc >= 2) {
		/* fault ADDR: ut_load(ADDR) under a SIGSEGV handler */
		long r = under_segv((ut_fn)ut_load, ut_load_end, parse(argv[1]), 0);

		printf("ok %ld %ld 0x%lx 0x%lx\n", r, nsig,
		       sig_rip - (long)ut_load, sig_addr);
	} else if (!strcmp(argv[0], "callfault") && argc >= 2) {
		/* callfault ADDR: ut_callptr(ADDR, 1) under a SIGSEGV handler */
		long r = under_segv((ut_fn)ut_callptr, ut_callptr_end, parse(argv[1]), 1);

		printf("ok %ld %ld 0x%lx 0x%lx\n", r, nsig,
		       sig_rip - (long)ut_callptr_call, sig_addr);
	} else if (!strcmp(argv[0], "jmpfault") && argc >= 2) {
		/*
		 * jmpfault ADDR: ut_jmpptr(ADDR) under a SIGSEGV handler,
		 * resumed at a ret; replies the signal's RIP, si_addr and
		 * si_code as they are.
		 */
		long r = under_segv((ut_fn)ut_jmpptr, ut_callptr_end, parse(argv[1]), 0);

		printf("ok %ld %ld 0x%lx 0x%lx %ld\n", r, nsig, sig_rip,
		       sig_addr, sig_code);
	} else if (!strcmp(argv[0], "retfault") && argc >= 2) {
		/*
		 * retfault ADDR: ut_retptr(ADDR) under a SIGSEGV handler;
		 * replies the signal's RIP (from ut_retptr_ret), its RSP
		 * (from where the pushed ADDR is), si_addr and si_code.
		 */
		long r = under_segv((ut_fn)ut_retptr, ut_retptr_end,
				    parse(argv[1]), 0);

		printf("ok %ld %ld 0x%lx %ld 0x%lx %ld\n", r, nsig,
		       sig_rip - (long)ut_retptr_ret,
		       sig_rsp - (ut_retptr_sp - 8), sig_addr, sig_code);
	} else if (!strcmp(argv[0], "fpe") && argc >= 3) {
		/* fpe A B: ut_div(A, B) under a SIGFPE handler */
		long r;

		where_catch(SIGFPE);
		r = ut_div(parse(argv[1]), parse(argv[2]));
		signal(SIGFPE, SIG_DFL);
		printf("ok %ld %ld 0x%lx 0x%lx %ld\n", r, nsig,
		       sig_rip - (long)ut_div_insn,
		       sig_addr - (long)ut_div_insn, sig_code);
	} else if ((!strcmp(argv[0], "int3") || !strcmp(argv[0], "int_3")) &&
		   argc >= 2) {
		/* int3 A, int_3 A: ut_int3(A), ut_int_3(A) under a SIGTRAP handler */
		long (*fn)(long) = argv[0][3] == '_' ? ut_int_3 : ut_int3;
		long r;

		where_catch(SIGTRAP);
		r = fn(parse(argv[1]));
		signal(SIGTRAP, SIG_DFL);
		printf("ok %ld %ld 0x%lx %ld\n", r, nsig, sig_rip - (long)fn,
		       sig_code);
	} else if (!strcmp(argv[0], "longjmp") && argc >= 2) {
		/* longjmp A: ut_lj_outer(A) longjmps back here from ut_lj_inner */
		int v = setjmp(ut_jb);

		if (v == 0) {
			long r = ut_lj_outer(parse(argv[1]));

			printf("ok returned %ld\n", r);
			return;
		}
		printf("ok jumped %d\n", v);
	} else if (!strcmp(argv[0], "siglongjmp") && argc >= 2) {
		/* siglongjmp SIG: ut_raiser(SIG) whose handler siglongjmps here */
		int v;

		signal((int)parse(argv[1]), ut_sigjump_handler);
		v = sigsetjmp(ut_sjb, 1);
		if (v == 0) {
			long r = ut_raiser(parse(argv[1]));

			printf("ok returned %ld\n", r);
			return;
		}
		signal(v, SIG_DFL);
		printf("ok jumped %d\n", v);
	} else if (!strcmp(argv[0], "stepme") && argc >= 4) {
		/* stepme FN A B: stop ourselves (for a tracer), then FN(A, B) */
		long r;

		fn = lookup(argv[1]);
		if (!fn) {
			printf("err no function\n");
			return;
		}
		raise(SIGSTOP);
		r = fn(parse(argv[2]), parse(argv[3]), 0);
		printf("ok %ld\n", r);
	} else if (!strcmp(argv[0], "exit")) {
		printf("ok\n");
		fflush(stdout);
		exit(argc >= 2 ? (int)parse(argv[1]) : 0);
	} else {
		printf("err unknown command %s\n", argv[0]);
	}
}

int main(int argc, char **argv)
{
	char line[512];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", ut_self, sizeof(ut_self) - 1);
	if (n > 0)
		ut_self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", ut_self);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* --once CMD: run one command, exit with its result's low byte */
	if (argc >= 3 && !strcmp(argv[1], "--once")) {
		snprintf(line, sizeof(line), "%s", argv[2]);
		last_result = -1;
		run(line);
		fflush(stdout);
		return last_result & 0xff;
	}
	/* --cmd CMD: run one command, then go on reading stdin */
	if (argc >= 3 && !strcmp(argv[1], "--cmd")) {
		snprintf(line, sizeof(line), "%s", argv[2]);
		run(line);
		fflush(stdout);
	}
	while (fgets(line, sizeof(line), stdin)) {
		run(line);
		fflush(stdout);
	}
	return 0;
}
