// SPDX-License-Identifier: GPL-2.0
/*
 * clock.c - the VMM's clock: CLOCK_MONOTONIC in nanoseconds.
 */
#include <time.h>

#include "clock.h"

uint64_t clock__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
