/* SPDX-License-Identifier: GPL-2.0 */
/*
 * clock.h - the VMM's clock: CLOCK_MONOTONIC in nanoseconds, the time base of a run (its
 * start, escape records' timestamps, the agent's lines, crash reports).
 */
#ifndef VBTS_VMM_CLOCK_H
#define VBTS_VMM_CLOCK_H

#include <stdint.h>

/**
 * clock__now_ns() - CLOCK_MONOTONIC in nanoseconds.
 *
 * Return: the time.
 */
uint64_t clock__now_ns(void);

#endif /* VBTS_VMM_CLOCK_H */
