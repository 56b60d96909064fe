// SPDX-License-Identifier: GPL-2.0
/*
 * opts.c - the numbers and sizes of the commands' options, parsed and refused alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "opts.h"

int opts__u64(const char *opt, const char *s, uint64_t min, uint64_t max, int base,
	      uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v < min || v > max) {
		pr_err("%s %s: expected a number in [%" PRIu64 ", %" PRIu64 "]", opt, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int opts__size(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (errno || end == s || *end || s[0] == '-' || s[0] == '+' || v == 0 ||
	    v > (UINT64_MAX >> shift)) {
		pr_err("%s %s: expected a number of bytes > 0, with K, M or G", opt, s);
		return -EINVAL;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

int opts__collector(int opt, const char *arg, struct trace_collector_config *c)
{
	switch (opt) {
	case 'M':
		if (!strcmp(arg, "wrap")) {
			c->mode = TRACE_MODE_WRAP;
		} else if (!strcmp(arg, "stream")) {
			c->mode = TRACE_MODE_STREAM;
		} else {
			pr_err("--mode %s: expected wrap or stream", arg);
			return -EINVAL;
		}
		return 0;
	case 'G':
		/* the limits are the collector check's, with its own message */
		return opts__u64("--segment", arg, 1, UINT64_MAX, 0, &c->segment_records);
	case 'B':
		return opts__size("--disk-budget", arg, &c->disk_budget);
	case 'F':
		if (!strcmp(arg, "stall")) {
			c->on_full = TRACE_ON_FULL_STALL;
		} else if (!strcmp(arg, "drop")) {
			c->on_full = TRACE_ON_FULL_DROP;
		} else {
			pr_err("--on-full %s: expected stall or drop", arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}
