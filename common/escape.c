// SPDX-License-Identifier: GPL-2.0
/*
 * escape.c - guest-controlled bytes as text that a terminal shows and never obeys.
 *
 * One function decides, for the next character of the input, how many bytes it takes and
 * what it becomes; the buffer, FILE and stream interfaces only differ in where that goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"

static const char hex[] = "0123456789abcdef";

/* Appends \xNN for each of @n bytes; returns the new length. */
static size_t hex_bytes(char *out, size_t len, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[len++] = '\\';
		out[len++] = 'x';
		out[len++] = hex[p[i] >> 4];
		out[len++] = hex[p[i] & 0xf];
	}
	return len;
}

/*
 * The bytes a well-formed UTF-8 sequence starting at @p takes (Unicode's table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF), judged on its first @n bytes; the
 * result may exceed @n when those are a valid prefix. 0 when the sequence is ill-formed.
 */
static size_t utf8_length(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	need = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < need && i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return need;
}

static uint32_t utf8_decode(const unsigned char *p, size_t len)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = p[0] & lead_mask[len];

	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

size_t escape__utf8_char(const void *p, size_t n, uint32_t *cp)
{
	size_t len = utf8_length(p, n);

	if (!len || len > n)
		return 0;
	*cp = utf8_decode(p, len);
	return len;
}

/*
 * Besides C0 and DEL, valid characters that still act on a terminal or on how text reads:
 * C1 controls (8-bit CSI and friends), the bidi marks, embeddings, overrides and isolates,
 * and the line and paragraph separators.
 */
bool escape__printable(uint32_t cp)
{
	return !(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
		 cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069));
}

/*
 * The next character of @p (@n > 0 bytes) escaped into @out (ESCAPE_UNIT_MAX bytes), its
 * length in *@outlen.
 *
 * Return: the input bytes it took, or 0 when more input is needed to decide (never when
 * @final: then an unfinished sequence is invalid and a lone '\r' is escaped).
 */
static size_t escape_unit(const unsigned char *p, size_t n, bool final, unsigned int flags,
			  char *out, size_t *outlen)
{
	unsigned char c = p[0];
	bool keep_nl = flags & ESCAPE_KEEP_NEWLINE;
	size_t len;

	*outlen = 0;
	switch (c) {
	case '\n':
	case '\t':
		if (keep_nl) {
			out[(*outlen)++] = (char)c;
		} else {
			out[(*outlen)++] = '\\';
			out[(*outlen)++] = c == '\n' ? 'n' : 't';
		}
		return 1;
	case '\r':
		if (keep_nl && n < 2 && !final)
			return 0;
		if (keep_nl && n >= 2 && p[1] == '\n') {
			out[(*outlen)++] = '\r';
			out[(*outlen)++] = '\n';
			return 2;
		}
		out[(*outlen)++] = '\\';
		out[(*outlen)++] = 'r';
		return 1;
	case '\\':
		out[(*outlen)++] = '\\';
		if (!(flags & ESCAPE_KEEP_BACKSLASH))
			out[(*outlen)++] = '\\';
		return 1;
	default:
		break;
	}
	if (c < 0x20 || c == 0x7f) {
		*outlen = hex_bytes(out, 0, p, 1);
		return 1;
	}
	if (c < 0x80) {
		out[(*outlen)++] = (char)c;
		return 1;
	}
	len = utf8_length(p, n);
	if (len > n && !final)
		return 0;
	if (!len || len > n) {
		*outlen = hex_bytes(out, 0, p, 1);
		return 1;
	}
	if (!escape__printable(utf8_decode(p, len))) {
		*outlen = hex_bytes(out, 0, p, len);
	} else {
		memcpy(out, p, len);
		*outlen = len;
	}
	return len;
}

size_t escape__buf(char *dst, size_t size, const void *src, size_t len, unsigned int flags)
{
	const unsigned char *p = src;
	char out[ESCAPE_UNIT_MAX];
	size_t pos = 0, used = 0, safe = 0, outlen, dots;

	if (!size)
		return 0;
	while (pos < len) {
		pos += escape_unit(p + pos, len - pos, true, flags, out, &outlen);
		if (outlen > size - 1 - used) {
			/* Cut where "..." still fits after it. */
			used = safe;
			dots = size - 1 - used < 3 ? size - 1 - used : 3;
			memcpy(dst + used, "...", dots);
			used += dots;
			break;
		}
		memcpy(dst + used, out, outlen);
		used += outlen;
		if (size - 1 - used >= 3)
			safe = used;
	}
	dst[used] = '\0';
	return used;
}

const char *escape__str(char *dst, size_t size, const char *src)
{
	if (!src)
		src = "(null)";
	escape__buf(dst, size, src, strlen(src), 0);
	return dst;
}

int escape__fputs(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), pos = 0, outlen;
	char out[ESCAPE_UNIT_MAX];

	while (pos < len) {
		pos += escape_unit(p + pos, len - pos, true, 0, out, &outlen);
		fwrite(out, 1, outlen, f);
	}
	return ferror(f) ? -EIO : 0;
}

void escape_stream__init(struct escape_stream *es, unsigned int flags)
{
	es->flags = flags;
	es->npend = 0;
}

/* Writes every character the held-back bytes decide. */
static void stream_drain(struct escape_stream *es, FILE *f, bool final)
{
	char out[ESCAPE_UNIT_MAX];
	size_t used, outlen;

	while (es->npend) {
		used = escape_unit(es->pend, es->npend, final, es->flags, out, &outlen);
		if (!used)
			return;
		fwrite(out, 1, outlen, f);
		es->npend -= (unsigned int)used;
		memmove(es->pend, es->pend + used, es->npend);
	}
}

void escape_stream__putc(struct escape_stream *es, FILE *f, unsigned char c)
{
	/* Only an undecided prefix (at most 3 bytes) is ever held back, so this fits. */
	es->pend[es->npend++] = c;
	stream_drain(es, f, false);
}

void escape_stream__flush(struct escape_stream *es, FILE *f)
{
	stream_drain(es, f, true);
}

char *escape__utf8_dup(const char *s, size_t max)
{
	size_t n = strnlen(s, max), i = 0, o = 0;
	char *buf = malloc(n * 3 + 1);

	if (!buf)
		return NULL;
	while (i < n) {
		uint32_t cp;
		size_t len = escape__utf8_char(s + i, n - i, &cp);

		if (len) {
			memcpy(buf + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	buf[o] = '\0';
	return buf;
}
