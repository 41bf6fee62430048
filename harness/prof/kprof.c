// SPDX-License-Identifier: GPL-2.0
/*
 * kprof: a QEMU TCG plugin counting the guest instructions executed at
 * each address between two executions of a marker address.
 *
 *   qemu-system-x86_64 ... -plugin kprof.so,arg=toggle=HEX,arg=out=FILE
 *
 * The first execution of the instruction at "toggle" (the first
 * instruction of a kernel function the guest calls on purpose, e.g.
 * __x64_sys_sync) starts counting, the second stops it; later rounds are
 * reported as totals only.  At exit FILE gets "# rounds N", one
 * "# round I TOTAL" line per round, then "VADDR COUNT" for every address
 * executed in the first round (user-space addresses are summed as 1).
 * A "rep" string instruction counts once per iteration, as -icount does.
 *
 * Debian's QEMU 7.2 ships no plugin header: the few declarations of its
 * plugin API (version 1) used here are written out below.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(unsigned int, void *);
typedef void (*atexit_cb)(qemu_plugin_id_t, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *,
						 size_t);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *,
						enum qemu_plugin_op, void *,
						uint64_t);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *,
					    udata_cb, enum qemu_plugin_cb_flags,
					    void *);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, atexit_cb, void *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define HBITS	22
#define HSIZE	(1u << HBITS)
#define MAX_ROUNDS 16

struct ent {
	uint64_t va, cnt, snap, acc;
};

static struct ent *tab;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t toggle, round_total[MAX_ROUNDS];
static int on, rounds;
static const char *out = "kprof.out";

/* Open addressing; entries are never removed, so a counter never moves. */
static struct ent *lookup(uint64_t va)
{
	uint64_t h = (va * 0x9E3779B97F4A7C15ull) >> (64 - HBITS);

	for (;; h = (h + 1) & (HSIZE - 1)) {
		if (tab[h].va == va)
			return &tab[h];
		if (!tab[h].va) {
			tab[h].va = va;
			return &tab[h];
		}
	}
}

static void flip(unsigned int vcpu, void *udata)
{
	uint64_t i, total = 0;

	for (i = 0; i < HSIZE; i++) {
		if (!tab[i].va)
			continue;
		if (!on) {
			tab[i].snap = tab[i].cnt;
			continue;
		}
		total += tab[i].cnt - tab[i].snap;
		if (rounds == 0)
			tab[i].acc += tab[i].cnt - tab[i].snap;
	}
	if (on) {
		if (rounds < MAX_ROUNDS)
			round_total[rounds] = total;
		rounds++;
	}
	on = !on;
}

static void translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		struct ent *e = lookup(va < 0x800000000000ull ? 1 : va);

		qemu_plugin_register_vcpu_insn_exec_inline(insn,
				QEMU_PLUGIN_INLINE_ADD_U64, &e->cnt, 1);
		if (va == toggle)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, flip,
					QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
	pthread_mutex_unlock(&lock);
}

static void report(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out, "w");
	uint64_t i;
	int r;

	if (!f)
		return;
	fprintf(f, "# rounds %d\n", rounds);
	for (r = 0; r < rounds && r < MAX_ROUNDS; r++)
		fprintf(f, "# round %d %llu\n", r,
			(unsigned long long)round_total[r]);
	for (i = 0; i < HSIZE; i++)
		if (tab[i].va && tab[i].acc)
			fprintf(f, "%llx %llu\n", (unsigned long long)tab[i].va,
				(unsigned long long)tab[i].acc);
	fclose(f);
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
	}
	if (!toggle)
		return -1;
	tab = calloc(HSIZE, sizeof(*tab));
	if (!tab)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translate);
	qemu_plugin_register_atexit_cb(id, report, NULL);
	return 0;
}
