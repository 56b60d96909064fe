// SPDX-License-Identifier: GPL-2.0
/*
 * text-fmt.c - decimal numbers without printf: two digits per division.
 */
#include "text-fmt.h"

/* "00" to "99": two decimal digits per division. */
static const char two_digits[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* The number of decimal digits of @v, 1 to 20. */
static unsigned int decimal_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
		10000000000000ULL, 100000000000000ULL, 1000000000000000ULL,
		10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL,
		10000000000000000000ULL,
	};
	/* log10(2) ~ 1233 / 4096: t is the digits of v, or one more, less one (t <= 19). */
	unsigned int bits = 64 - (unsigned int)__builtin_clzll(v | 1);
	unsigned int t = (bits * 1233) >> 12;

	return t + 1 - ((v | 1) < pow10[t]);
}

char *text_fmt__u64(char *p, uint64_t v)
{
	unsigned int n = decimal_digits(v);
	char *q = p + n;

	while (v >= 100) {
		unsigned int d = (unsigned int)(v % 100);

		v /= 100;
		q -= 2;
		memcpy(q, two_digits + 2 * d, 2);
	}
	if (v >= 10)
		memcpy(q - 2, two_digits + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return p + n;
}

char *text_fmt__i64(char *p, int64_t v)
{
	if (v >= 0)
		return text_fmt__u64(p, (uint64_t)v);
	*p++ = '-';
	/* -(v + 1) + 1: no overflow for INT64_MIN. */
	return text_fmt__u64(p, (uint64_t)(-(v + 1)) + 1);
}
