// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ program whose probed functions throw, for the return-probe tests.
 *
 *   uprobe_target_cxx catch_inside N   ut_cx_catcher(i) catches what
 *                                      ut_cx_thrower(i) throws (odd i)
 *   uprobe_target_cxx throw_through N  main catches what ut_cx_middle(i)
 *                                      lets through from ut_cx_thrower(i)
 *
 * It prints "ok SUM", the sum of what every call returned or threw, which
 * must not depend on whether the functions are probed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline, used))

extern "C" {

NOINLINE long ut_cx_thrower(long i)
{
	asm volatile("" ::: "memory");
	if (i & 1)
		throw i;
	return i;
}

NOINLINE long ut_cx_middle(long i)
{
	long r = ut_cx_thrower(i);

	asm volatile("" ::: "memory");
	return r + 1;
}

NOINLINE long ut_cx_catcher(long i)
{
	try {
		return ut_cx_thrower(i);
	} catch (long v) {
		return v * 10;
	}
}

}

int main(int argc, char **argv)
{
	long n, i, sum = 0;

	if (argc < 3)
		return 2;
	n = strtol(argv[2], NULL, 0);
	if (!strcmp(argv[1], "catch_inside")) {
		for (i = 0; i < n; i++)
			sum += ut_cx_catcher(i);
	} else if (!strcmp(argv[1], "throw_through")) {
		for (i = 0; i < n; i++) {
			try {
				sum += ut_cx_middle(i);
			} catch (long v) {
				sum += v * 10;
			}
		}
	} else {
		return 2;
	}
	printf("ok %ld\n", sum);
	return 0;
}
