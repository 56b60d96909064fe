// SPDX-License-Identifier: GPL-2.0
/*
 * libcrashlib.c - the shared library of the crash test's PIE program: crashlib_deposit()
 * stores through the NULL pointer crashlib_find() returns for an unknown name. The functions
 * stay out of line, so that each is a function of its own in the trace and for gdb.
 */
#include <string.h>

#include "crashlib.h"

static __attribute__((noinline)) unsigned int checksum(const char *s)
{
	unsigned int sum = 0;

	while (*s)
		sum = sum * 31 + (unsigned char)*s++;
	return sum;
}

__attribute__((noinline)) struct account *crashlib_find(struct account *t, int n,
							 const char *name)
{
	unsigned int sum = checksum(name);

	for (int i = 0; i < n; i++)
		if (checksum(t[i].name) == sum && !strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static __attribute__((noinline)) long fee(long amount)
{
	return amount / 10 + 1;
}

__attribute__((noinline)) void crashlib_deposit(struct account *a, long amount)
{
	long f = fee(amount);

	a->balance += amount - f;	/* a is NULL for an unknown name: SIGSEGV */
}
