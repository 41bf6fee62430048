// SPDX-License-Identifier: GPL-2.0
/*
 * libclientlib.so: a shared library for the client tests to probe, so
 * that a probe in a library (not in the program) is tested with each
 * client.  workload's "scale N" calls lib_scale(i) for i = 0..N-1.
 */
__attribute__((noinline)) int lib_scale(int x)
{
	asm volatile("" ::: "memory");
	return 3 * x + 1;
}
