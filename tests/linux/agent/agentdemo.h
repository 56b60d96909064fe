/* SPDX-License-Identifier: GPL-2.0 */
/* agentdemo.h - the interface of libagentdemo.so. */
#ifndef VBTS_TESTS_AGENTDEMO_H
#define VBTS_TESTS_AGENTDEMO_H

/**
 * agentdemo_sum() - the sum of @n integers.
 * @v: the integers
 * @n: their count
 *
 * Return: the sum.
 */
int agentdemo_sum(const int *v, int n);

#endif /* VBTS_TESTS_AGENTDEMO_H */
