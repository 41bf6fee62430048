// SPDX-License-Identifier: GPL-2.0
/*
 * shared: a QEMU TCG plugin recording the guest memory writes of each vCPU
 * between two executions of a marker address, and reporting the 64-byte
 * cache lines (by guest physical address) that more than one vCPU wrote.
 *
 *   qemu-system-x86_64 -smp 2 ... \
 *       -plugin shared.so,arg=toggle=HEX,arg=out=FILE[,arg=user=1]
 *
 * The first execution of the instruction at "toggle" (the first
 * instruction of a kernel function the guest calls on purpose, e.g.
 * __x64_sys_sync) opens a window, the next one closes it, and so on: every
 * pair of executions is one round.  Only writes made by instructions at
 * kernel addresses are recorded (user=1: every instruction's).
 *
 * When a round closes, FILE gets (appended; hex fields are 0x-less):
 *   R ROUND WRITES LINES SHARED DROPPED
 *       all writes recorded, distinct lines written, lines written by
 *       more than one vCPU, writes the tables had no room for
 *   L ROUND LINE VCPUMASK BOUNCES VADDR
 *       one shared line: its physical address, the vCPUs that wrote it,
 *       how many of its writes came from a vCPU other than the previous
 *       writer (what would move the line between caches), the virtual
 *       address of its first write in the round (a kernel stack's lines
 *       are in the vmalloc area with CONFIG_VMAP_STACK)
 *   W ROUND LINE VCPU PC COUNT
 *       the writes one instruction (virtual address PC) of one vCPU made
 *       to that shared line
 *
 * QEMU hands the writes it makes itself for an instruction to that
 * instruction's callbacks: the frame an interrupt or exception pushes is
 * counted as written by the interrupted instruction (a "ret" may write).
 *
 * vCPUs run in parallel host threads (MTTCG).  The line table is shared
 * and lock-free (a key is claimed by compare-and-swap, never moved nor
 * removed within a round); the (line, instruction) table is per vCPU, so
 * only its own vCPU's thread ever writes it.  Tables are cleared when a
 * round opens: no vCPU records then.
 *
 * Debian's QEMU 7.2 ships no plugin header: the few declarations of its
 * plugin API (version 1) used here are written out below, as in kprof.c.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(unsigned int, void *);
typedef void (*mem_cb)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *,
						 size_t);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *,
					    udata_cb, enum qemu_plugin_cb_flags,
					    void *);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *, mem_cb,
				      enum qemu_plugin_cb_flags,
				      enum qemu_plugin_mem_rw, void *);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t,
						  uint64_t);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS	8
#define LINE_BITS	21		/* distinct lines in one round */
#define SITE_BITS	20		/* (line, instruction) pairs per vCPU */
#define KERNEL_START	0xffff800000000000ull

/* A cache line written in this round; key is line number + 1, 0: free. */
struct line {
	_Atomic uint64_t key;
	_Atomic uint32_t mask;		/* bit v: vCPU v wrote it */
	_Atomic uint32_t last;		/* the last writer's vCPU + 1 */
	_Atomic uint64_t bounces;
	_Atomic uint64_t vaddr;		/* of the first write seen */
};

/* One vCPU's writes by one instruction to one line; line + 1, 0: free. */
struct site {
	uint64_t line, pc, count;
};

static struct line *lines;
static struct site *sites[MAX_VCPUS];
static uint64_t writes[MAX_VCPUS], dropped[MAX_VCPUS];
static atomic_int on;
static int round_no, nvcpus, user;
static uint64_t toggle;
static const char *out = "shared.out";

static uint64_t hash(uint64_t a, uint64_t b)
{
	return (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
}

/*
 * The line's entry, claimed if new and @claim; NULL when it is not there
 * and not claimed, or the table is full.
 */
static struct line *line_get(uint64_t line, bool claim)
{
	uint64_t key = line + 1, mask = (1ull << LINE_BITS) - 1;
	uint64_t h = hash(key, 0) >> (64 - LINE_BITS), i;

	for (i = 0; i < (1ull << LINE_BITS) / 2; i++, h = (h + 1) & mask) {
		uint64_t k = atomic_load_explicit(&lines[h].key,
						  memory_order_acquire);

		if (k == key)
			return &lines[h];
		if (k)
			continue;
		if (!claim)
			return NULL;
		if (atomic_compare_exchange_strong(&lines[h].key, &k, key) ||
		    k == key)
			return &lines[h];
	}
	return NULL;
}

static struct site *site_get(unsigned int vcpu, uint64_t line, uint64_t pc)
{
	uint64_t mask = (1ull << SITE_BITS) - 1;
	uint64_t h = hash(line + 1, pc) >> (64 - SITE_BITS), i;
	struct site *t = sites[vcpu];

	for (i = 0; i < (1ull << SITE_BITS) / 2; i++, h = (h + 1) & mask) {
		if (t[h].line == line + 1 && t[h].pc == pc)
			return &t[h];
		if (!t[h].line) {
			t[h].line = line + 1;
			t[h].pc = pc;
			return &t[h];
		}
	}
	return NULL;
}

static void record(unsigned int vcpu, uint64_t line, uint64_t pc,
		   uint64_t vaddr)
{
	struct line *l = line_get(line, true);
	struct site *s = site_get(vcpu, line, pc);
	uint32_t bit = 1u << vcpu, prev;

	if (!l || !s) {
		dropped[vcpu]++;
		return;
	}
	s->count++;
	if (!atomic_load_explicit(&l->vaddr, memory_order_relaxed))
		atomic_store_explicit(&l->vaddr, vaddr, memory_order_relaxed);
	if (!(atomic_load_explicit(&l->mask, memory_order_relaxed) & bit))
		atomic_fetch_or(&l->mask, bit);
	prev = atomic_exchange_explicit(&l->last, vcpu + 1,
					memory_order_relaxed);
	if (prev && prev != vcpu + 1)
		atomic_fetch_add_explicit(&l->bounces, 1, memory_order_relaxed);
}

static void on_write(unsigned int vcpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw;
	uint64_t pa, last;

	/* QEMU 7.2 calls back for loads too, whatever the filter says. */
	if (!atomic_load_explicit(&on, memory_order_acquire) ||
	    vcpu >= MAX_VCPUS || !qemu_plugin_mem_is_store(info))
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	last = (pa + (1u << qemu_plugin_mem_size_shift(info)) - 1) >> 6;
	writes[vcpu]++;
	record(vcpu, pa >> 6, (uint64_t)(uintptr_t)udata, vaddr);
	if (last != pa >> 6)		/* a write across two lines */
		record(vcpu, last, (uint64_t)(uintptr_t)udata, vaddr + 64);
}

static void round_open(void)
{
	int v;

	memset(lines, 0, sizeof(*lines) << LINE_BITS);
	for (v = 0; v < nvcpus; v++) {
		memset(sites[v], 0, sizeof(*sites[v]) << SITE_BITS);
		writes[v] = dropped[v] = 0;
	}
	atomic_store_explicit(&on, 1, memory_order_release);
}

static void round_close(void)
{
	uint64_t i, w = 0, d = 0, n = 0, shared = 0;
	FILE *f;
	int v;

	atomic_store_explicit(&on, 0, memory_order_release);
	f = fopen(out, "a");
	if (!f)
		return;
	for (v = 0; v < nvcpus; v++) {
		w += writes[v];
		d += dropped[v];
	}
	for (i = 0; i < (1ull << LINE_BITS); i++) {
		struct line *l = &lines[i];

		if (!l->key)
			continue;
		n++;
		if (!(l->mask & (l->mask - 1)))
			continue;
		shared++;
		fprintf(f, "L %d %llx %x %llu %llx\n", round_no,
			(unsigned long long)(l->key - 1) << 6, l->mask,
			(unsigned long long)l->bounces,
			(unsigned long long)l->vaddr & ~63ull);
	}
	for (v = 0; v < nvcpus; v++) {
		for (i = 0; i < (1ull << SITE_BITS); i++) {
			struct site *s = &sites[v][i];
			struct line *l;

			if (!s->line)
				continue;
			l = line_get(s->line - 1, false);
			if (!l || !(l->mask & (l->mask - 1)))
				continue;
			fprintf(f, "W %d %llx %d %llx %llu\n", round_no,
				(unsigned long long)(s->line - 1) << 6, v,
				(unsigned long long)s->pc,
				(unsigned long long)s->count);
		}
	}
	fprintf(f, "R %d %llu %llu %llu %llu\n", round_no,
		(unsigned long long)w, (unsigned long long)n,
		(unsigned long long)shared, (unsigned long long)d);
	fclose(f);
	round_no++;
}

static void flip(unsigned int vcpu, void *udata)
{
	if (atomic_load(&on))
		round_close();
	else
		round_open();
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		if (va == toggle)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, flip,
					QEMU_PLUGIN_CB_NO_REGS, NULL);
		if (va >= KERNEL_START || user)
			qemu_plugin_register_vcpu_mem_cb(insn, on_write,
					QEMU_PLUGIN_CB_NO_REGS,
					QEMU_PLUGIN_MEM_W,
					(void *)(uintptr_t)va);
	}
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "toggle=", 7))
			toggle = strtoull(argv[i] + 7, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
		else if (!strcmp(argv[i], "user=1"))
			user = 1;
	}
	nvcpus = info->system_emulation ? info->system.max_vcpus : 1;
	if (!toggle || nvcpus > MAX_VCPUS) {
		fprintf(stderr, "shared: need toggle=HEX and at most %d vCPUs\n",
			MAX_VCPUS);
		return -1;
	}
	lines = calloc(1ull << LINE_BITS, sizeof(*lines));
	if (!lines)
		return -1;
	for (i = 0; i < nvcpus; i++) {
		sites[i] = calloc(1ull << SITE_BITS, sizeof(*sites[i]));
		if (!sites[i])
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	return 0;
}
