// SPDX-License-Identifier: GPL-2.0
/*
 * The hit target of the uprobes benchmark (harness/bench).
 *
 * Every probe-site class has one tiny function, written in asm so that the
 * probed instruction is exactly the one named: the global symbol s_CLASS
 * sits on that instruction (and is a function symbol, so perf probe,
 * bpftrace and uprobe_events can all name it).  main() calls one class's
 * function N times in a loop and prints the loop's duration from
 * CLOCK_MONOTONIC; the runner subtracts the same loop run without a probe.
 *
 *   hit CLASS N [REPS]     REPS loops of N calls, one "CLASS ns" line each
 *   hit all N [REPS]       every class in turn
 *   hit threads T N        T threads each making N calls of s_nop; one
 *                          "threads T ns" line (wall time of the slowest)
 *   hit list               the class names and the symbol probed for each
 *
 * Under qemu -icount shift=0 a guest nanosecond is one guest instruction,
 * so the same lines give instructions per hit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_var = 42;

/* What the indirect branch classes go through (to callee, a bare ret). */
void callee(void);
void (*const callee_ptr)(void) = callee;

/*
 * f_CLASS is what the loop calls; s_CLASS is the probed instruction.  Each
 * function is self-contained (no call into another probed site), so a
 * probe on s_X fires exactly once per call of f_X.
 */
asm(
"	.text\n"
"	.p2align 4\n"
"	.globl f_nop, s_nop\n"
"	.type f_nop, @function\n"
"	.type s_nop, @function\n"
"f_nop:\n"
"s_nop:	nop\n"
"	ret\n"
"	.size f_nop, .-f_nop\n"
"	.size s_nop, .-s_nop\n"

"	.p2align 4\n"
"	.globl f_nopl, s_nopl\n"
"	.type f_nopl, @function\n"
"	.type s_nopl, @function\n"
"f_nopl:\n"
"s_nopl:	nopl 0x0(%rax)\n"			/* 0f 1f 40 00 */
"	ret\n"
"	.size f_nopl, .-f_nopl\n"
"	.size s_nopl, .-s_nopl\n"

"	.p2align 4\n"
"	.globl f_nop5, s_nop5\n"
"	.type f_nop5, @function\n"
"	.type s_nop5, @function\n"
"f_nop5:\n"
"s_nop5:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"	/* nopl 0x0(%rax,%rax,1) */
"	ret\n"
"	.size f_nop5, .-f_nop5\n"
"	.size s_nop5, .-s_nop5\n"

"	.p2align 4\n"
"	.globl f_endbr64, s_endbr64\n"
"	.type f_endbr64, @function\n"
"	.type s_endbr64, @function\n"
"f_endbr64:\n"
"s_endbr64:\n"
"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n"		/* endbr64 */
"	ret\n"
"	.size f_endbr64, .-f_endbr64\n"
"	.size s_endbr64, .-s_endbr64\n"

"	.p2align 4\n"
"	.globl f_push, s_push\n"
"	.type f_push, @function\n"
"	.type s_push, @function\n"
"f_push:\n"
"s_push:	push %rbp\n"
"	pop %rbp\n"
"	ret\n"
"	.size f_push, .-f_push\n"
"	.size s_push, .-s_push\n"

"	.p2align 4\n"
"	.globl f_movrbp, s_movrbp\n"
"	.type f_movrbp, @function\n"
"	.type s_movrbp, @function\n"
"f_movrbp:\n"
"	push %rbp\n"
"s_movrbp:\n"
"	mov %rsp, %rbp\n"
"	pop %rbp\n"
"	ret\n"
"	.size f_movrbp, .-f_movrbp\n"
"	.size s_movrbp, .-s_movrbp\n"

"	.p2align 4\n"
"	.globl f_subrsp, s_subrsp\n"
"	.type f_subrsp, @function\n"
"	.type s_subrsp, @function\n"
"f_subrsp:\n"
"s_subrsp:\n"
"	sub $0x18, %rsp\n"
"	add $0x18, %rsp\n"
"	ret\n"
"	.size f_subrsp, .-f_subrsp\n"
"	.size s_subrsp, .-s_subrsp\n"

"	.p2align 4\n"
"	.globl f_riprel, s_riprel\n"
"	.type f_riprel, @function\n"
"	.type s_riprel, @function\n"
"f_riprel:\n"
"s_riprel:\n"
"	mov bench_var(%rip), %eax\n"
"	ret\n"
"	.size f_riprel, .-f_riprel\n"
"	.size s_riprel, .-s_riprel\n"

/* A rip-relative operand that no kernel emulates: always run out of line. */
"	.p2align 4\n"
"	.globl f_ripadd, s_ripadd\n"
"	.type f_ripadd, @function\n"
"	.type s_ripadd, @function\n"
"f_ripadd:\n"
"s_ripadd:\n"
"	add bench_var(%rip), %eax\n"
"	ret\n"
"	.size f_ripadd, .-f_ripadd\n"
"	.size s_ripadd, .-s_ripadd\n"

"	.p2align 4\n"
"	.globl f_xor, s_xor\n"
"	.type f_xor, @function\n"
"	.type s_xor, @function\n"
"f_xor:\n"
"s_xor:\n"
"	xor %eax, %eax\n"
"	ret\n"
"	.size f_xor, .-f_xor\n"
"	.size s_xor, .-s_xor\n"

"	.p2align 4\n"
"	.type callee, @function\n"
"callee:	ret\n"
"	.size callee, .-callee\n"

"	.p2align 4\n"
"	.globl f_call, s_call\n"
"	.type f_call, @function\n"
"	.type s_call, @function\n"
"f_call:\n"
"s_call:	call callee\n"
"	ret\n"
"	.size f_call, .-f_call\n"
"	.size s_call, .-s_call\n"

/* Indirect branches: a call through a pointer and a PLT-style jump. */
"	.p2align 4\n"
"	.globl f_callind, s_callind\n"
"	.type f_callind, @function\n"
"	.type s_callind, @function\n"
"f_callind:\n"
"s_callind:	call *callee_ptr(%rip)\n"
"	ret\n"
"	.size f_callind, .-f_callind\n"
"	.size s_callind, .-s_callind\n"

"	.p2align 4\n"
"	.globl f_plt, s_plt\n"
"	.type f_plt, @function\n"
"	.type s_plt, @function\n"
"f_plt:\n"
"s_plt:	jmp *callee_ptr(%rip)\n"
"	.size f_plt, .-f_plt\n"
"	.size s_plt, .-s_plt\n"

"	.p2align 4\n"
"	.globl f_ret, s_ret\n"
"	.type f_ret, @function\n"
"	.type s_ret, @function\n"
"f_ret:\n"
"s_ret:	ret\n"
"	.size f_ret, .-f_ret\n"
"	.size s_ret, .-s_ret\n"

/* The return probe's leaf: probed with r: on its entry symbol. */
"	.p2align 4\n"
"	.globl f_retprobe, s_retprobe\n"
"	.type f_retprobe, @function\n"
"	.type s_retprobe, @function\n"
"f_retprobe:\n"
"s_retprobe:\n"
"	mov $1, %eax\n"
"	ret\n"
"	.size f_retprobe, .-f_retprobe\n"
"	.size s_retprobe, .-s_retprobe\n"

/* The same with a 5-byte nop first: a return probe on a patchable entry. */
"	.p2align 4\n"
"	.globl f_retnop5, s_retnop5\n"
"	.type f_retnop5, @function\n"
"	.type s_retnop5, @function\n"
"f_retnop5:\n"
"s_retnop5:	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
"	mov $1, %eax\n"
"	ret\n"
"	.size f_retnop5, .-f_retnop5\n"
"	.size s_retnop5, .-s_retnop5\n"
);

#define SITES(X) X(nop) X(nopl) X(nop5) X(endbr64) X(push) X(movrbp) \
		 X(subrsp) X(riprel) X(ripadd) X(xor) X(call) X(callind) X(plt) \
		 X(ret) X(retprobe) X(retnop5)
#define DECL(n) void f_##n(void);
SITES(DECL)
#define ENTRY(n) { #n, f_##n },
static const struct site {
	const char *name;
	void (*fn)(void);
} sites[] = { SITES(ENTRY) };
#define NSITES (sizeof(sites) / sizeof(sites[0]))

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The loop is the same for every class: an indirect call through a
 * volatile pointer, so the compiler keeps every call. */
static long long run_loop(void (*fn)(void), long n)
{
	void (*volatile f)(void) = fn;
	long long t0 = now_ns();

	for (long i = 0; i < n; i++)
		f();
	return now_ns() - t0;
}

struct thr {
	long n;
	long long t;
};

static pthread_barrier_t start;

static void *thread_fn(void *arg)
{
	struct thr *t = arg;

	pthread_barrier_wait(&start);
	t->t = run_loop(f_nop, t->n);
	return NULL;
}

static int threads(int nt, long n)
{
	pthread_t tid[64];
	struct thr t[64];
	long long t0, wall;

	if (nt < 1 || nt > 64)
		return 2;
	pthread_barrier_init(&start, NULL, nt + 1);
	for (int i = 0; i < nt; i++) {
		t[i].n = n;
		pthread_create(&tid[i], NULL, thread_fn, &t[i]);
	}
	t0 = now_ns();
	pthread_barrier_wait(&start);
	for (int i = 0; i < nt; i++)
		pthread_join(tid[i], NULL);
	wall = now_ns() - t0;
	printf("threads %d %lld\n", nt, wall);
	return 0;
}

int main(int argc, char **argv)
{
	long n, reps;
	int found = 0;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (unsigned int i = 0; i < NSITES; i++)
			printf("%s s_%s\n", sites[i].name, sites[i].name);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: hit CLASS|all N [REPS] | hit threads T N | hit list\n");
		return 2;
	}
	if (!strcmp(argv[1], "threads"))
		return argc == 4 ? threads(atoi(argv[2]), atol(argv[3])) : 2;
	n = atol(argv[2]);
	reps = argc > 3 ? atol(argv[3]) : 1;
	for (unsigned int i = 0; i < NSITES; i++) {
		if (strcmp(argv[1], "all") && strcmp(argv[1], sites[i].name))
			continue;
		found = 1;
		for (long r = 0; r < reps; r++)
			printf("%s %lld\n", sites[i].name, run_loop(sites[i].fn, n));
	}
	fflush(stdout);
	if (!found) {
		fprintf(stderr, "hit: no class '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
