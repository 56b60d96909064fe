/* SPDX-License-Identifier: GPL-2.0 */
/* crashlib.h - the interface of libcrashlib.so. */
#ifndef VBTS_TESTS_CRASHLIB_H
#define VBTS_TESTS_CRASHLIB_H

/**
 * struct account - a name and its balance.
 * @name:    the name
 * @balance: the balance
 */
struct account {
	const char *name;
	long balance;
};

/**
 * crashlib_find() - the account of a name.
 * @t:    the accounts
 * @n:    their number
 * @name: the name
 *
 * Return: the account, or NULL when no account has @name.
 */
struct account *crashlib_find(struct account *t, int n, const char *name);

/**
 * crashlib_deposit() - add an amount, less a fee, to an account.
 * @a:      the account; NULL is a bug: the process dies of SIGSEGV
 * @amount: the amount
 */
void crashlib_deposit(struct account *a, long amount);

#endif /* VBTS_TESTS_CRASHLIB_H */
