/* SPDX-License-Identifier: GPL-2.0 */
/*
 * out-buf.h - the exporters' output: one large buffer written to a stream in big blocks, and
 * hand-written number formatting, so that a record costs a few stores instead of printf calls.
 *
 * Fast path: out_buf__reserve() makes room for up to OUT_BUF_RESERVE_MAX bytes and returns
 * where to write; the out_buf__fmt_*() helpers write at a pointer and return the end;
 * out_buf__commit() takes the end. Everything else (strings of any length, escaped guest text)
 * goes through the out_buf__*() writers, which reserve for themselves.
 *
 * Errors are sticky: the first failed write of the stream is kept and reported by
 * out_buf__flush() (and out_buf__error()); later writes are dropped.
 */
#ifndef VBTS_DECODER_OUT_BUF_H
#define VBTS_DECODER_OUT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "text-fmt.h"

/* The buffer, in bytes: what one write to the stream carries at most. */
#define OUT_BUF_SIZE (256u * 1024)
/* The most one out_buf__reserve() may ask for. */
#define OUT_BUF_RESERVE_MAX 4096u
/* Characters of the longest number the out_buf__fmt_*() helpers write. */
#define OUT_BUF_NUMBER_MAX TEXT_FMT_NUMBER_MAX

/**
 * struct out_buf - a buffered writer.
 * @buf:  OUT_BUF_SIZE bytes
 * @len:  bytes buffered
 * @sink: the stream they go to
 * @err:  0, or the -errno of the first failed write (-EIO, -ENOMEM)
 */
struct out_buf {
	char *buf;
	size_t len;
	FILE *sink;
	int err;
};

/**
 * out_buf__init() - an empty buffer for a stream.
 * @ob:   the writer
 * @sink: the stream (written with fwrite(); not closed by the writer)
 *
 * Return: 0, or -ENOMEM (then the writer must not be used; out_buf__release() is allowed).
 */
int out_buf__init(struct out_buf *ob, FILE *sink);

/**
 * out_buf__release() - free the buffer (what is buffered is dropped: flush first).
 * @ob: the writer (zeroed or initialised)
 */
void out_buf__release(struct out_buf *ob);

/**
 * out_buf__flush() - write what is buffered to the stream (not fflush()ed).
 * @ob: the writer
 *
 * Return: 0, or the first error of the writer: -EIO when the stream reported a write error,
 * -ENOMEM.
 */
int out_buf__flush(struct out_buf *ob);

/**
 * out_buf__error() - the first error of the writer so far.
 * @ob: the writer
 *
 * Return: 0, -EIO or -ENOMEM.
 */
static inline int out_buf__error(const struct out_buf *ob)
{
	return ob->err;
}

/* The slow half of out_buf__reserve(): flushes to make room. */
char *out_buf__make_room(struct out_buf *ob, size_t n);

/**
 * out_buf__reserve() - room for @n bytes.
 * @ob: the writer
 * @n:  bytes, at most OUT_BUF_RESERVE_MAX
 *
 * Return: where to write them; out_buf__commit() with the end of what was written.
 */
static inline char *out_buf__reserve(struct out_buf *ob, size_t n)
{
	if (__builtin_expect(OUT_BUF_SIZE - ob->len < n, 0))
		return out_buf__make_room(ob, n);
	return ob->buf + ob->len;
}

/**
 * out_buf__commit() - take what was written after out_buf__reserve().
 * @ob:  the writer
 * @end: one past the last byte written
 */
static inline void out_buf__commit(struct out_buf *ob, char *end)
{
	ob->len = (size_t)(end - ob->buf);
}

/**
 * out_buf__write() - @n bytes, however many.
 * @ob: the writer
 * @p:  the bytes
 * @n:  how many
 */
void out_buf__write(struct out_buf *ob, const void *p, size_t n);

/**
 * out_buf__puts() - a NUL-terminated string, as it is.
 * @ob: the writer
 * @s:  the string
 */
static inline void out_buf__puts(struct out_buf *ob, const char *s)
{
	out_buf__write(ob, s, strlen(s));
}

/**
 * out_buf__putc() - one byte.
 * @ob: the writer
 * @c:  the byte
 */
static inline void out_buf__putc(struct out_buf *ob, char c)
{
	char *p = out_buf__reserve(ob, 1);

	*p++ = c;
	out_buf__commit(ob, p);
}

/* The text_fmt__*() helpers (text-fmt.h) under the writers' names. */
static inline char *out_buf__fmt_u64(char *p, uint64_t v)
{
	return text_fmt__u64(p, v);
}

static inline char *out_buf__fmt_i64(char *p, int64_t v)
{
	return text_fmt__i64(p, v);
}

static inline char *out_buf__fmt_hex(char *p, uint64_t v)
{
	return text_fmt__hex(p, v);
}

static inline char *out_buf__fmt_str(char *p, const char *s, size_t n)
{
	return text_fmt__str(p, s, n);
}

/**
 * out_buf__u64() - @v in decimal.
 * @ob: the writer
 * @v:  the value
 */
static inline void out_buf__u64(struct out_buf *ob, uint64_t v)
{
	out_buf__commit(ob, out_buf__fmt_u64(out_buf__reserve(ob, OUT_BUF_NUMBER_MAX), v));
}

/**
 * out_buf__hex() - "0x" and @v in lowercase hex, as printf's "0x%x".
 * @ob: the writer
 * @v:  the value
 */
static inline void out_buf__hex(struct out_buf *ob, uint64_t v)
{
	char *p = out_buf__reserve(ob, OUT_BUF_NUMBER_MAX);

	*p++ = '0';
	*p++ = 'x';
	out_buf__commit(ob, out_buf__fmt_hex(p, v));
}

/**
 * out_buf__escaped() - a guest's string escaped for a terminal, as escape__fputs() writes it.
 * @ob: the writer
 * @s:  the string, of any length
 */
void out_buf__escaped(struct out_buf *ob, const char *s);

/**
 * out_buf__fmt_json() - @len bytes of a guest's string as a JSON string (with its quotes) at
 * @p, as out_buf__json_string() writes it: at most 6 * @len + 2 bytes.
 * @p:   where
 * @s:   the bytes (a NUL among them is written as \u0000)
 * @len: how many
 *
 * Return: the end of what was written.
 */
char *out_buf__fmt_json(char *p, const char *s, size_t len);

/**
 * out_buf__json_string() - a JSON string (with its quotes) of a guest's string: valid UTF-8
 * whatever @s holds (each ill-formed byte becomes U+FFFD), '"' and '\\' escaped, and what
 * escape__printable() rejects written as \uXXXX.
 * @ob: the writer
 * @s:  the string, of any length
 */
void out_buf__json_string(struct out_buf *ob, const char *s);

#endif /* VBTS_DECODER_OUT_BUF_H */
