/* SPDX-License-Identifier: GPL-2.0 */
/*
 * text-fmt.h - hand-written number and string formatting at a pointer, without printf: what
 * the jsonl shape of a record (record-json.h) and the exporters write with, a few stores a
 * field. Each helper writes at @p, never a NUL, and returns the end of what it wrote.
 */
#ifndef VBTS_FORMAT_TEXT_FMT_H
#define VBTS_FORMAT_TEXT_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Characters of the longest number the text_fmt__*() helpers write. */
#define TEXT_FMT_NUMBER_MAX 24

/**
 * text_fmt__u64() - @v in decimal at @p (at most 20 characters, no NUL).
 * @p: where
 * @v: the value
 *
 * Return: the end of what was written.
 */
char *text_fmt__u64(char *p, uint64_t v);

/**
 * text_fmt__i64() - @v in decimal at @p, with a '-' when negative (at most 20 characters).
 * @p: where
 * @v: the value
 *
 * Return: the end of what was written.
 */
char *text_fmt__i64(char *p, int64_t v);

/**
 * text_fmt__hex() - @v in lowercase hex at @p, without "0x" or leading zeros ("0" for 0),
 * as printf's %x (at most 16 characters).
 * @p: where
 * @v: the value
 *
 * Return: the end of what was written.
 */
static inline char *text_fmt__hex(char *p, uint64_t v)
{
	static const char digits[16] = "0123456789abcdef";
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	char *end = p + n;

	do {
		*--end = digits[v & 0xf];
		v >>= 4;
	} while (end > p);
	return p + n;
}

/**
 * text_fmt__str() - a string of @n bytes at @p (memcpy with the end returned).
 * @p: where
 * @s: the bytes
 * @n: how many
 *
 * Return: the end of what was written.
 */
static inline char *text_fmt__str(char *p, const char *s, size_t n)
{
	uint64_t a, b;
	uint32_t c, d;

	/* Short strings, the common case, without a call: two overlapping loads and stores. */
	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(p, &a, 8);
		memcpy(p + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&c, s, 4);
		memcpy(&d, s + n - 4, 4);
		memcpy(p, &c, 4);
		memcpy(p + n - 4, &d, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			p[i] = s[i];
	} else {
		memcpy(p, s, n);
	}
	return p + n;
}

#endif /* VBTS_FORMAT_TEXT_FMT_H */
