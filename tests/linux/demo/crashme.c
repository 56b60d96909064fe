// SPDX-License-Identifier: GPL-2.0
/*
 * crashme.c - the program `./vbts demo linux` traces in a Linux guest (static, with debug
 * information): main() reads a small table of accounts, looks one up that is not there and
 * stores through the NULL pointer the lookup returned, so the process dies of SIGSEGV. Its
 * last user-mode branches name these functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct account {
	const char *name;
	long balance;
};

static struct account accounts[] = {
	{ "alice", 120 },
	{ "bob", 75 },
	{ "carol", 310 },
};

/* The functions stay out of line, so that each shows up in the trace under its own name. */
static __attribute__((noinline)) unsigned int checksum(const char *s)
{
	unsigned int sum = 0;

	while (*s)
		sum = sum * 31 + (unsigned char)*s++;
	return sum;
}

static __attribute__((noinline)) struct account *find_account(const char *name)
{
	unsigned int sum = checksum(name);

	for (size_t i = 0; i < sizeof(accounts) / sizeof(accounts[0]); i++)
		if (checksum(accounts[i].name) == sum && !strcmp(accounts[i].name, name))
			return &accounts[i];
	return NULL;
}

static __attribute__((noinline)) void deposit(struct account *a, long amount)
{
	a->balance += amount;	/* a is NULL for an unknown name: SIGSEGV */
}

static __attribute__((noinline)) long total(void)
{
	long sum = 0;

	for (size_t i = 0; i < sizeof(accounts) / sizeof(accounts[0]); i++)
		sum += accounts[i].balance;
	return sum;
}

int main(int argc, char **argv)
{
	const char *who = argc > 1 ? argv[1] : "mallory";
	long amount = argc > 2 ? atol(argv[2]) : 10;

	printf("crashme: %zu accounts, total %ld; depositing %ld for %s\n",
	       sizeof(accounts) / sizeof(accounts[0]), total(), amount, who);
	fflush(stdout);
	deposit(find_account(who), amount);
	printf("crashme: total now %ld\n", total());
	return 0;
}
