// SPDX-License-Identifier: GPL-2.0
/*
 * test-out-buf.c - the exporters' buffered writer against the plain paths it replaced: numbers
 * against printf, terminal escaping against escape__fputs(), JSON strings against the
 * fprintf-based writer `vbts decode` used before, on chosen and random values and strings,
 * short and longer than a buffer reservation; writes larger than the buffer; a stream that
 * fails.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder-test.h"
#include "escape.h"
#include "out-buf.h"

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* The value of the i-th case: the edges first, then random ones of every magnitude. */
static uint64_t number_case(unsigned int i, uint64_t *rng)
{
	static const uint64_t edges[] = {
		0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 0xf, 0x10, 0xff, 0x100,
		9999999999999999999ULL, 10000000000000000000ULL, UINT64_MAX, UINT64_MAX - 1,
		(uint64_t)INT64_MAX, (uint64_t)INT64_MIN, (uint64_t)INT64_MIN + 1,
		0x8000000000000000ULL, 0x7fffffffffffffffULL, 0xffffffff, 0x100000000ULL,
	};
	uint64_t v;

	if (i < sizeof(edges) / sizeof(edges[0]))
		return edges[i];
	v = next_rand(rng);
	return v >> (next_rand(rng) % 64);
}

START_TEST(test_numbers)
{
	char want[64], got[64];
	uint64_t rng = 0x1234567, v;

	for (unsigned int i = 0; i < 200000; i++) {
		v = number_case(i, &rng);
		snprintf(want, sizeof(want), "%" PRIu64, v);
		*out_buf__fmt_u64(got, v) = '\0';
		if (strcmp(want, got))
			ck_abort_msg("u64 %s written as %s", want, got);
		snprintf(want, sizeof(want), "%" PRId64, (int64_t)v);
		*out_buf__fmt_i64(got, (int64_t)v) = '\0';
		if (strcmp(want, got))
			ck_abort_msg("i64 %s written as %s", want, got);
		snprintf(want, sizeof(want), "%" PRIx64, v);
		*out_buf__fmt_hex(got, v) = '\0';
		if (strcmp(want, got))
			ck_abort_msg("hex %s written as %s", want, got);
	}
}
END_TEST

/* The JSON string writer of `vbts decode` before the buffered writer: the reference. */
static void json_string_ref(FILE *f, const char *s)
{
	size_t len = strlen(s), k;
	uint32_t cp;

	fputc('"', f);
	while (len) {
		k = escape__utf8_char(s, len, &cp);
		if (!k)
			fputs("\\ufffd", f);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (!escape__printable(cp))
			fprintf(f, "\\u%04x", (unsigned int)cp);
		else
			fwrite(s, 1, k, f);
		k = k ? k : 1;
		s += k;
		len -= k;
	}
	fputc('"', f);
}

static const char *const hostile_strings[] = {
	"", "plain_name", "a\"b\\c\n\x1b[31m\x7f", "\xff\xc3(ok\xe2\x82", "\xc2\x80\xc2\x9f",
	"caf\xc3\xa9 \xe2\x80\xae rtl \xe2\x80\xa8 ls", "\xf0\x9f\x98\x80 emoji", "\xed\xa0\x80",
	"\xf4\x90\x80\x80", "\xe0\x80\xaf", "tab\there\rcr\r\n", "\\\\", "\"",
};

/* The i-th string: the hostile ones, then random bytes of random lengths (some > 4 KiB). */
static char *string_case(unsigned int i, uint64_t *rng)
{
	size_t n, k;
	char *s;

	if (i < sizeof(hostile_strings) / sizeof(hostile_strings[0]))
		return strdup(hostile_strings[i]);
	n = next_rand(rng) % (i % 10 ? 64 : 9000);
	s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	for (k = 0; k < n; k++) {
		uint64_t r = next_rand(rng);

		/* Mostly printable ASCII, some UTF-8 lead and continuation bytes, some controls. */
		s[k] = (char)(r % 4 ? 0x20 + r % 0x5f : 1 + (r >> 8) % 255);
	}
	s[n] = '\0';
	return s;
}

/* Writes @s with @put through an out_buf and with @ref to a stream; compares. */
static void compare_writers(const char *s, void (*put)(struct out_buf *ob, const char *s),
			    void (*ref)(FILE *f, const char *s))
{
	char *got = NULL, *want = NULL;
	size_t got_len = 0, want_len = 0;
	FILE *g = open_memstream(&got, &got_len), *w = open_memstream(&want, &want_len);
	struct out_buf ob;

	ck_assert(g && w);
	ck_assert_int_eq(out_buf__init(&ob, g), 0);
	/* Something before and after: the string is not the first thing in the buffer. */
	out_buf__puts(&ob, "<");
	put(&ob, s);
	out_buf__puts(&ob, ">");
	ck_assert_int_eq(out_buf__flush(&ob), 0);
	out_buf__release(&ob);
	fputc('<', w);
	ref(w, s);
	fputc('>', w);
	fclose(g);
	fclose(w);
	if (got_len != want_len || memcmp(got, want, got_len))
		ck_abort_msg("wrote\n%s\nnot\n%s", got, want);
	free(got);
	free(want);
}

static void escape_ref(FILE *f, const char *s)
{
	escape__fputs(f, s);
}

START_TEST(test_strings)
{
	uint64_t rng = 0xabcdef;

	for (unsigned int i = 0; i < 2000; i++) {
		char *s = string_case(i, &rng);

		compare_writers(s, out_buf__escaped, escape_ref);
		compare_writers(s, out_buf__json_string, json_string_ref);
		free(s);
	}
}
END_TEST

/* Writes of every size, more than the buffer holds, come out whole and in order. */
START_TEST(test_large_writes)
{
	size_t total = 3 * OUT_BUF_SIZE + 12345, pos = 0, got_len = 0, n;
	char *src = malloc(total), *got = NULL;
	FILE *g = open_memstream(&got, &got_len);
	uint64_t rng = 42;
	struct out_buf ob;

	ck_assert(src && g);
	for (size_t i = 0; i < total; i++)
		src[i] = (char)next_rand(&rng);
	ck_assert_int_eq(out_buf__init(&ob, g), 0);
	for (unsigned int i = 0; pos < total; i++) {
		n = i % 3 == 0 ? 1 : i % 3 == 1 ? next_rand(&rng) % 5000 : next_rand(&rng) % 70000;
		if (n > total - pos)
			n = total - pos;
		out_buf__write(&ob, src + pos, n);
		pos += n;
	}
	ck_assert_int_eq(out_buf__flush(&ob), 0);
	out_buf__release(&ob);
	fclose(g);
	ck_assert_uint_eq(got_len, total);
	ck_assert(!memcmp(got, src, total));
	free(got);
	free(src);
}
END_TEST

/* A stream that refuses the bytes: the error is kept and reported, later writes dropped. */
START_TEST(test_write_error)
{
	FILE *full = fopen("/dev/full", "w");
	struct out_buf ob;

	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	ck_assert_int_eq(out_buf__init(&ob, full), 0);
	out_buf__puts(&ob, "lost");
	ck_assert_int_eq(out_buf__error(&ob), 0);
	ck_assert_int_eq(out_buf__flush(&ob), -EIO);
	out_buf__u64(&ob, 7);
	ck_assert_int_eq(out_buf__flush(&ob), -EIO);
	ck_assert_int_eq(out_buf__error(&ob), -EIO);
	out_buf__release(&ob);
	fclose(full);
}
END_TEST

Suite *out_buf_suite(void)
{
	Suite *s = suite_create("out-buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_large_writes);
	tcase_add_test(tc, test_write_error);
	suite_add_tcase(s, tc);
	return s;
}
