/* SPDX-License-Identifier: GPL-2.0 */
/*
 * escape.h - guest-controlled bytes made safe for a terminal, a log file or one error line.
 *
 * Valid, printable UTF-8 passes unchanged. Everything a terminal could act on is written as
 * text instead: C0 controls and DEL as C escapes (\n \t \r) or \xNN, the bytes of invalid or
 * truncated UTF-8 (overlong forms, surrogates, stray continuation bytes) as \xNN each, and the
 * bytes of C1 controls (U+0080-U+009F, which some terminals obey as escape sequences), bidi
 * overrides and line separators as \xNN each. A backslash becomes \\ so that an escape in the
 * output always stands for a byte of the input.
 */
#ifndef VBTS_COMMON_ESCAPE_H
#define VBTS_COMMON_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The longest text one input character turns into: four bytes as \xNN each. */
#define ESCAPE_UNIT_MAX 16

enum escape_flags {
	/* '\n', '\t' and '\r' right before '\n' pass unchanged: multi-line text (a console). */
	ESCAPE_KEEP_NEWLINE = 1 << 0,
	/* '\\' passes unchanged (a console, whose text must stay the guest's own). */
	ESCAPE_KEEP_BACKSLASH = 1 << 1,
};

/**
 * escape__buf() - @len bytes of @src as one NUL-terminated, escaped string.
 * @dst:   output
 * @size:  room in @dst, including the NUL (nothing is written when 0)
 * @src:   bytes, NUL bytes included
 * @len:   how many
 * @flags: ESCAPE_* bits
 *
 * When the escaped text does not fit, it is cut between two escaped characters and ends
 * with "..." (so a bounded error line still shows that something was left out).
 *
 * Return: the length of the string written to @dst.
 */
size_t escape__buf(char *dst, size_t size, const void *src, size_t len, unsigned int flags);

/**
 * escape__str() - escape__buf() of a NUL-terminated string with no flags, for printf.
 * @dst:  output
 * @size: room in @dst, at least 1
 * @src:  the string, or NULL (written as "(null)")
 *
 * Return: @dst.
 */
const char *escape__str(char *dst, size_t size, const char *src);

/**
 * escape__utf8_dup() - guest bytes as valid UTF-8, for JSON.
 * @s:   NUL-terminated bytes
 * @max: at most this many bytes of @s are taken
 *
 * Each byte that starts no well-formed UTF-8 character becomes U+FFFD.
 *
 * Return: a malloc'd string, or NULL when out of memory.
 */
char *escape__utf8_dup(const char *s, size_t max);

/**
 * escape__utf8_char() - the well-formed UTF-8 character at @p.
 * @p:  bytes
 * @n:  how many, at least 1
 * @cp: receives its code point
 *
 * Well-formed as Unicode defines it: no overlong forms, no surrogates, nothing above
 * U+10FFFF, and complete within @n bytes.
 *
 * Return: its length, 1 to 4, or 0 when the bytes at @p do not start such a character.
 */
size_t escape__utf8_char(const void *p, size_t n, uint32_t *cp);

/**
 * escape__printable() - whether a terminal shows code point @cp and does nothing else.
 * @cp: code point
 *
 * Return: false for C0 controls, DEL, C1 controls, bidi controls and the line and paragraph
 * separators; true otherwise.
 */
bool escape__printable(uint32_t cp);

/**
 * escape__fputs() - write a NUL-terminated string escaped (no flags), whatever its length.
 * @f: stream
 * @s: the string
 *
 * Return: 0, or -EIO when the stream reports a write error.
 */
int escape__fputs(FILE *f, const char *s);

/**
 * struct escape_stream - escaping of a byte stream that arrives one byte at a time.
 * @flags: ESCAPE_* bits
 * @pend:  bytes held back: the start of a UTF-8 sequence, or a '\r' whose successor decides
 *         between "\r\n" and "\\r"
 * @npend: how many
 */
struct escape_stream {
	unsigned int flags;
	unsigned char pend[4];
	unsigned int npend;
};

/**
 * escape_stream__init() - an empty stream.
 * @es:    the state
 * @flags: ESCAPE_* bits
 */
void escape_stream__init(struct escape_stream *es, unsigned int flags);

/**
 * escape_stream__putc() - one more byte: write what it completes to @f.
 * @es: the state
 * @f:  stream
 * @c:  the byte
 *
 * At most 4 bytes are held back, never longer than it takes to know whether they form a
 * valid character.
 */
void escape_stream__putc(struct escape_stream *es, FILE *f, unsigned char c);

/**
 * escape_stream__flush() - the end of the input: write the held-back bytes (escaped, since an
 * unfinished sequence is invalid).
 * @es: the state
 * @f:  stream
 */
void escape_stream__flush(struct escape_stream *es, FILE *f);

#endif /* VBTS_COMMON_ESCAPE_H */
