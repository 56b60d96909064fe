// SPDX-License-Identifier: GPL-2.0
/*
 * test-escape.c - escaping of guest-controlled text: a table of inputs and their exact
 * escaped forms, the bound on the length, the byte-at-a-time stream against the buffer form,
 * and every 1- and 2-byte input (plus pseudo-random longer ones) checked with the C library's
 * own UTF-8 decoder: valid UTF-8 out, no control character out.
 */
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "check-main.h"
#include "escape.h"

static const struct {
	const char *in;
	size_t len;             /* 0: strlen(in) */
	unsigned int flags;
	const char *out;
} cases[] = {
	{ "plain text", 0, 0, "plain text" },
	{ "", 0, 0, "" },
	{ "a\\b", 0, 0, "a\\\\b" },
	{ "\x1b[2Jcleared", 0, 0, "\\x1b[2Jcleared" },
	{ "l1\nl2\tx\r", 0, 0, "l1\\nl2\\tx\\r" },
	{ "del\x7f bel\a nul", 0, 0, "del\\x7f bel\\x07 nul" },
	{ "a\0b", 3, 0, "a\\x00b" },
	/* Valid printable UTF-8 stays as it is. */
	{ "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80 \xef\xbf\xbd", 0, 0,
	  "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80 \xef\xbf\xbd" },
	/* Invalid: a stray byte, a lead without its continuation, overlong, surrogate, too big. */
	{ "\xff", 0, 0, "\\xff" },
	{ "\x80x", 0, 0, "\\x80x" },
	{ "\xc3(", 0, 0, "\\xc3(" },
	{ "\xc0\xaf", 0, 0, "\\xc0\\xaf" },
	{ "\xe0\x80\xaf", 0, 0, "\\xe0\\x80\\xaf" },
	{ "\xed\xa0\x80", 0, 0, "\\xed\\xa0\\x80" },
	{ "\xf4\x90\x80\x80", 0, 0, "\\xf4\\x90\\x80\\x80" },
	{ "\xf5\x80\x80\x80", 0, 0, "\\xf5\\x80\\x80\\x80" },
	{ "end\xe2\x82", 0, 0, "end\\xe2\\x82" },
	{ "\xe2\x82\xe2\x82\xac", 0, 0, "\\xe2\\x82\xe2\x82\xac" },
	/* Valid but acting on the terminal or on how the line reads. */
	{ "\xc2\x9b" "2J", 0, 0, "\\xc2\\x9b2J" },
	{ "abc\xe2\x80\xae" "fdp.exe", 0, 0, "abc\\xe2\\x80\\xaefdp.exe" },
	{ "x\xe2\x80\xa8y", 0, 0, "x\\xe2\\x80\\xa8y" },
	{ "\xe2\x81\xa6i\xe2\x81\xa9", 0, 0, "\\xe2\\x81\\xa6i\\xe2\\x81\\xa9" },
	/* A console: its own line structure and backslashes are kept, a lone CR is not. */
	{ "a\r\nb\n\tc\rd\\e\x1b", 0, ESCAPE_KEEP_NEWLINE | ESCAPE_KEEP_BACKSLASH,
	  "a\r\nb\n\tc\\rd\\e\\x1b" },
	{ "cr at end\r", 0, ESCAPE_KEEP_NEWLINE, "cr at end\\r" },
	{ "\r\r\n", 0, ESCAPE_KEEP_NEWLINE, "\\r\r\n" },
};

START_TEST(test_escape_table)
{
	char out[256];
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].in);
	size_t n = escape__buf(out, sizeof(out), cases[_i].in, len, cases[_i].flags);

	ck_assert_str_eq(out, cases[_i].out);
	ck_assert_uint_eq(n, strlen(cases[_i].out));
}
END_TEST

START_TEST(test_escape_bound)
{
	char out[16];

	/* Fits exactly: no marker. */
	ck_assert_uint_eq(escape__buf(out, 11, "abcdefghij", 10, 0), 10);
	ck_assert_str_eq(out, "abcdefghij");
	/* One more: cut, with "..." within the size. */
	ck_assert_uint_eq(escape__buf(out, 11, "abcdefghijk", 11, 0), 10);
	ck_assert_str_eq(out, "abcdefg...");
	/* An escape is never split: "\x1b" whole or not at all. */
	escape__buf(out, 10, "\x1b\x1b\x1b", 3, 0);
	ck_assert_str_eq(out, "\\x1b...");
	/* Nor is a UTF-8 character. */
	escape__buf(out, 8, "\xe2\x9c\x93\xe2\x9c\x93\xe2\x9c\x93", 9, 0);
	ck_assert_str_eq(out, "\xe2\x9c\x93...");
	/* Tiny buffers. */
	ck_assert_uint_eq(escape__buf(out, 1, "abc", 3, 0), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(escape__buf(out, 3, "abcdef", 6, 0), 2);
	ck_assert_str_eq(out, "..");
	out[0] = 'z';
	ck_assert_uint_eq(escape__buf(out, 0, "abc", 3, 0), 0);
	ck_assert_int_eq(out[0], 'z');
	ck_assert_str_eq(escape__str(out, sizeof(out), NULL), "(null)");
	ck_assert_str_eq(escape__str(out, sizeof(out), "a\nb"), "a\\nb");
}
END_TEST

START_TEST(test_escape_utf8_char)
{
	static const struct {
		const char *in;
		size_t n, len;
		uint32_t cp;
	} chars[] = {
		{ "a", 1, 1, 'a' },
		{ "\xc3\xa9", 2, 2, 0xe9 },
		{ "\xc3\xa9", 1, 0, 0 },                /* incomplete */
		{ "\xe2\x80\xae", 3, 3, 0x202e },
		{ "\xf0\x9f\x98\x80", 4, 4, 0x1f600 },
		{ "\xf4\x8f\xbf\xbf", 4, 4, 0x10ffff },
		{ "\xf0\x9f\x98", 3, 0, 0 },
		{ "\xc0\xaf", 2, 0, 0 },                /* overlong */
		{ "\xed\xa0\x80", 3, 0, 0 },            /* surrogate */
		{ "\xf4\x90\x80\x80", 4, 0, 0 },        /* above U+10FFFF */
		{ "\x80", 1, 0, 0 },
		{ "\xff", 1, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(chars) / sizeof(chars[0]); i++) {
		uint32_t cp = 0;

		ck_assert_uint_eq(escape__utf8_char(chars[i].in, chars[i].n, &cp), chars[i].len);
		ck_assert_uint_eq(cp, chars[i].cp);
	}
	ck_assert(escape__printable('a') && escape__printable(0xe9) && escape__printable(0xa0));
	ck_assert(escape__printable(0x1f600) && escape__printable(0x202f));
	ck_assert(!escape__printable(0x1b) && !escape__printable(0x7f) && !escape__printable(0x9b));
	ck_assert(!escape__printable(0x202e) && !escape__printable(0x2028));
	ck_assert(!escape__printable(0x2066) && !escape__printable(0x200f));
}
END_TEST

/* The stream, fed one byte at a time, writes what the buffer form writes. */
START_TEST(test_escape_stream)
{
	static const unsigned int flags[] = { 0, ESCAPE_KEEP_NEWLINE,
					      ESCAPE_KEEP_NEWLINE | ESCAPE_KEEP_BACKSLASH };

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t fl = 0; fl < sizeof(flags) / sizeof(flags[0]); fl++) {
			size_t len = cases[c].len ? cases[c].len : strlen(cases[c].in), blen;
			struct escape_stream es;
			char want[256], *buf = NULL;
			FILE *f = open_memstream(&buf, &blen);

			ck_assert_ptr_nonnull(f);
			escape__buf(want, sizeof(want), cases[c].in, len, flags[fl]);
			escape_stream__init(&es, flags[fl]);
			for (size_t i = 0; i < len; i++)
				escape_stream__putc(&es, f, (unsigned char)cases[c].in[i]);
			escape_stream__flush(&es, f);
			fclose(f);
			ck_assert_msg(!strcmp(buf, want), "case %zu flags %u: '%s' != '%s'", c,
				      flags[fl], buf, want);
			free(buf);
		}
	}
}
END_TEST

/* Nothing is held back longer than it takes to decide. */
START_TEST(test_escape_stream_holds_only_undecided)
{
	static const char emoji[] = "\xf0\x9f\x98\x80";
	struct escape_stream es;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	escape_stream__init(&es, ESCAPE_KEEP_NEWLINE);
	for (int i = 0; i < 3; i++) {
		escape_stream__putc(&es, f, (unsigned char)emoji[i]);
		fflush(f);
		ck_assert_uint_eq(len, 0);
	}
	escape_stream__putc(&es, f, (unsigned char)emoji[3]);
	fflush(f);
	ck_assert_str_eq(buf, emoji);
	escape_stream__putc(&es, f, '\r');
	fflush(f);
	ck_assert_str_eq(buf, emoji);
	escape_stream__putc(&es, f, 'x');
	escape_stream__putc(&es, f, '\xe2');
	escape_stream__putc(&es, f, 'y');
	fflush(f);
	ck_assert_str_eq(buf, "\xf0\x9f\x98\x80\\rx\\xe2y");
	fclose(f);
	free(buf);
}
END_TEST

/* The C library's decoder accepts the output, and it has no control character. */
static void check_safe(const unsigned char *in, size_t len)
{
	char out[4 * ESCAPE_UNIT_MAX + 1];
	mbstate_t st;
	size_t pos = 0, n;
	wchar_t wc;

	n = escape__buf(out, sizeof(out), in, len, 0);
	memset(&st, 0, sizeof(st));
	while (pos < n) {
		size_t k = mbrtowc(&wc, out + pos, n - pos, &st);

		/* Not ck_assert: it costs a message to the runner per call, here millions. */
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
			ck_abort_msg("input %02x %02x...: output is not valid UTF-8", in[0],
				     len > 1 ? in[1] : 0);
		if (iswcntrl((wint_t)wc))
			ck_abort_msg("input %02x %02x...: control U+%04x out", in[0],
				     len > 1 ? in[1] : 0, (unsigned int)wc);
		pos += k;
	}
}

START_TEST(test_escape_exhaustive)
{
	unsigned char in[5];
	uint32_t x = 12345;

	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
	for (unsigned int a = 0; a < 256; a++) {
		in[0] = (unsigned char)a;
		check_safe(in, 1);
		for (unsigned int b = 0; b < 256; b++) {
			in[1] = (unsigned char)b;
			check_safe(in, 2);
		}
	}
	/* Longer inputs, biased to lead and continuation bytes (xorshift, fixed seed). */
	for (int i = 0; i < 300000; i++) {
		for (int j = 0; j < 5; j++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			in[j] = (unsigned char)(x & 1 ? 0x80 | (x >> 8 & 0x7f) : x >> 8);
		}
		check_safe(in, 3 + (x >> 20) % 3);
	}
}
END_TEST

START_TEST(test_escape_utf8_dup)
{
	char *u = escape__utf8_dup("a\xff\xc3\xa9" "b\xc3", SIZE_MAX);

	ck_assert_str_eq(u, "a\xef\xbf\xbd\xc3\xa9" "b\xef\xbf\xbd");
	free(u);
	u = escape__utf8_dup("abcdef", 3);
	ck_assert_str_eq(u, "abc");
	free(u);
}
END_TEST

static Suite *escape_suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_escape_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_escape_bound);
	tcase_add_test(tc, test_escape_utf8_char);
	tcase_add_test(tc, test_escape_stream);
	tcase_add_test(tc, test_escape_stream_holds_only_undecided);
	tcase_add_test(tc, test_escape_exhaustive);
	tcase_add_test(tc, test_escape_utf8_dup);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(escape_suite)
