// SPDX-License-Identifier: GPL-2.0
/* libagentdemo.c - the shared library of the agent test's PIE program. */
#include "agentdemo.h"

int agentdemo_sum(const int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}
