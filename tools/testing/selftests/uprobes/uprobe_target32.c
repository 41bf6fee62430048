// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit (compat) program for the uprobes selftests, built with -m32:
 *
 *   uprobe_target32 lea N A B     ut32_lea(A, B) N times (a stepped load)
 *   uprobe_target32 push N A      ut32_push(A) N times (an emulated push)
 *   uprobe_target32 depth N D     ut32_depth(D) N times (recursion)
 *   uprobe_target32 args N A B S  ut32_args(A, B, S) N times
 *
 * It prints "ok R", the last result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

asm("	.text\n"
/* cdecl: a + b, the first instruction loads from the stack (stepped) */
"	.p2align 4\n"
"	.globl ut32_lea\n"
"	.type ut32_lea, @function\n"
"ut32_lea:\n"
"	mov 4(%esp), %eax\n"
"	add 8(%esp), %eax\n"
"	ret\n"
"	.size ut32_lea, .-ut32_lea\n"
/* push (emulated): a + 1 */
"	.p2align 4\n"
"	.globl ut32_push\n"
"	.type ut32_push, @function\n"
"ut32_push:\n"
"	push %ebx\n"
"	mov 8(%esp), %ebx\n"
"	lea 1(%ebx), %eax\n"
"	pop %ebx\n"
"	ret\n"
"	.size ut32_push, .-ut32_push\n"
);

int ut32_lea(int a, int b);
int ut32_push(int a);

__attribute__((noinline, used)) int ut32_depth(int n)
{
	asm volatile("" ::: "memory");
	return n <= 0 ? 0 : ut32_depth(n - 1) + 1;
}

__attribute__((noinline, used)) int ut32_args(int a, int b, const char *s)
{
	asm volatile("" ::: "memory");
	return a + b + (int)strlen(s);
}

int main(int argc, char **argv)
{
	long i, n;
	int r = 0;

	if (argc < 4)
		return 2;
	n = strtol(argv[2], NULL, 0);
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[1], "lea") && argc >= 5)
			r = ut32_lea(atoi(argv[3]), atoi(argv[4]));
		else if (!strcmp(argv[1], "push"))
			r = ut32_push(atoi(argv[3]));
		else if (!strcmp(argv[1], "depth"))
			r = ut32_depth(atoi(argv[3]));
		else if (!strcmp(argv[1], "args") && argc >= 6)
			r = ut32_args(atoi(argv[3]), atoi(argv[4]), argv[5]);
		else
			return 2;
	}
	printf("ok %d\n", r);
	return 0;
}
