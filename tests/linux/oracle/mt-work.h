/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mt-work.h - the loop the threads-oracle programs run in each of their threads (mt-prog.c,
 * mt-dyn.c): nested loops, a switch compiled to a jump table and calls, whose control flow
 * depends on nothing but @rounds. Freestanding: no header, no libc.
 */
#ifndef VBTS_TESTS_MT_WORK_H
#define VBTS_TESTS_MT_WORK_H

#define OUT_OF_LINE __attribute__((noinline, noclone))

static OUT_OF_LINE unsigned long step(unsigned int sel, unsigned long x)
{
	switch (sel) {
	case 0:
		return x + 1;
	case 1:
		return x * 3;
	case 2:
		return x - 7;
	case 3:
		return x << 2;
	case 4:
		return x >> 1;
	case 5:
		return x ^ 0xa5;
	default:
		return x | 0x10;
	}
}

static OUT_OF_LINE __attribute__((unused)) unsigned long work(unsigned int rounds)
{
	volatile unsigned int n = rounds;
	unsigned long acc = 1;

	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < 5; j++)
			acc = step((i + j) % 7, acc);
	return acc;
}

#endif /* VBTS_TESTS_MT_WORK_H */
