// SPDX-License-Identifier: GPL-2.0
/*
 * libuprobe_shlib.so: a tiny shared library the uprobes selftests probe
 * in several processes at once, load after a probe exists, and map a
 * second time at another address.  shlib_step starts with an instruction
 * that is stepped out of line, is position independent and touches no
 * data, so it runs the same from any private alias mapping of its page.
 */
asm("	.text\n"
"	.p2align 4\n"
"	.globl shlib_step\n"
"	.type shlib_step, @function\n"
"shlib_step:\n"
"	add %rsi, %rdi\n"
"	lea 7(%rdi), %rax\n"
"	ret\n"
"	.size shlib_step, .-shlib_step\n"
);

/* A C function with a stack frame: 2 * a + b. */
__attribute__((noinline)) long shlib_twice(long a, long b)
{
	asm volatile("" ::: "memory");
	return 2 * a + b;
}
