// SPDX-License-Identifier: GPL-2.0
/*
 * opts.c - the numbers and sizes of the commands' options, parsed and refused alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

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
