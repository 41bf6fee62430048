// SPDX-License-Identifier: GPL-2.0
/*
 * libuprobe_shlib.so: a tiny shared library the uprobes selftests probe
 * in several processes at once, load after a probe exists, and map a
 * second time at another address.  shlib_lea is position independent and
 * touches no data, so it runs the same from any private alias mapping of
 * its page.
 */
asm("	.text\n"
"	.p2align 4\n"
"	.globl shlib_lea\n"
"	.type shlib_lea, @function\n"
"shlib_lea:\n"
"	lea 7(%rdi,%rsi,1), %rax\n"
"	ret\n"
"	.size shlib_lea, .-shlib_lea\n"
);

/* A C function with a stack frame: 2 * a + b. */
__attribute__((noinline)) long shlib_twice(long a, long b)
{
	asm volatile("" ::: "memory");
	return 2 * a + b;
}
