/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opts.h - the numbers and sizes of the commands' options, parsed and refused alike.
 */
#ifndef VBTS_CLI_OPTS_H
#define VBTS_CLI_OPTS_H

#include <stdint.h>

#include "trace.h"

/**
 * opts__u64() - an option's number in [@min, @max]; says which option and why when it is not.
 * @opt:  the option's name, for the error line
 * @s:    its argument (no sign)
 * @min:  the least accepted
 * @max:  the most accepted
 * @base: as strtoull's (0: decimal, 0x hexadecimal, 0 octal)
 * @out:  receives the number
 *
 * Return: 0 or -EINVAL.
 */
int opts__u64(const char *opt, const char *s, uint64_t min, uint64_t max, int base,
	      uint64_t *out);

/**
 * opts__size() - an option's byte count, > 0, with an optional K, M or G (powers of 1024).
 * @opt: the option's name, for the error line
 * @s:   its argument
 * @out: receives the count
 *
 * Return: 0 or -EINVAL.
 */
int opts__size(const char *opt, const char *s, uint64_t *out);

/**
 * opts__collector() - the trace collector's options that vbts run and vbts attach share:
 * --mode wrap|stream ('M'), --segment N ('G'), --disk-budget SIZE ('B'), --on-full
 * stall|drop ('F').
 * @opt: the option's getopt value
 * @arg: its argument
 * @c:   the collector's configuration, set
 *
 * Return: 0 when taken, -EINVAL when refused (said), 1 when @opt is none of them.
 */
int opts__collector(int opt, const char *arg, struct trace_collector_config *c);

#endif /* VBTS_CLI_OPTS_H */
