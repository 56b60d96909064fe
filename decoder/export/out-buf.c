// SPDX-License-Identifier: GPL-2.0
/*
 * out-buf.c - the exporters' buffered output and number formatting.
 */
#include <errno.h>
#include <stdlib.h>

#include "escape.h"
#include "out-buf.h"

int out_buf__init(struct out_buf *ob, FILE *sink)
{
	ob->buf = malloc(OUT_BUF_SIZE);
	ob->len = 0;
	ob->sink = sink;
	ob->err = ob->buf ? 0 : -ENOMEM;
	return ob->err;
}

void out_buf__release(struct out_buf *ob)
{
	free(ob->buf);
	ob->buf = NULL;
	ob->len = 0;
}

int out_buf__flush(struct out_buf *ob)
{
	if (ob->len && !ob->err && fwrite(ob->buf, 1, ob->len, ob->sink) != ob->len)
		ob->err = -EIO;
	ob->len = 0;
	return ob->err;
}

char *out_buf__make_room(struct out_buf *ob, size_t n)
{
	_Static_assert(OUT_BUF_RESERVE_MAX <= OUT_BUF_SIZE, "a reservation fits the buffer");
	(void)n;
	out_buf__flush(ob);
	return ob->buf;
}

void out_buf__write(struct out_buf *ob, const void *p, size_t n)
{
	if (n <= OUT_BUF_RESERVE_MAX) {
		out_buf__commit(ob, out_buf__fmt_str(out_buf__reserve(ob, n), p, n));
		return;
	}
	/* A long string: no copy. */
	out_buf__flush(ob);
	if (!ob->err && fwrite(p, 1, n, ob->sink) != n)
		ob->err = -EIO;
}

/* Printable ASCII that both escapings pass as it is: not '\\', not '"' (JSON). */
static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\' && c != '"';
}

void out_buf__escaped(struct out_buf *ob, const char *s)
{
	const char *start = s;
	size_t len;

	while (plain((unsigned char)*s) || *s == '"')
		s++;
	out_buf__write(ob, start, (size_t)(s - start));
	if (!*s)
		return;
	/* Something to escape: each input byte takes at most 4 output bytes. */
	len = strlen(s);
	if (len <= (OUT_BUF_RESERVE_MAX - 1) / 4) {
		char *p = out_buf__reserve(ob, OUT_BUF_RESERVE_MAX);

		out_buf__commit(ob, p + escape__buf(p, 4 * len + 1, s, len, 0));
		return;
	}
	out_buf__flush(ob);
	if (!ob->err && escape__fputs(ob->sink, s))
		ob->err = -EIO;
}

/*
 * The character at @s (@len > 0 bytes, not plain()) as JSON string text at @p, at most 6
 * bytes; *@used receives the input bytes it took.
 */
static char *json_char(char *p, const char *s, size_t len, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp;
	size_t k = escape__utf8_char(s, len, &cp);

	*used = k ? k : 1;
	if (!k)
		return out_buf__fmt_str(p, "\\ufffd", 6);
	if (cp == '"' || cp == '\\') {
		*p++ = '\\';
		*p++ = (char)cp;
		return p;
	}
	if (!escape__printable(cp)) {
		/* All of them below U+10000. */
		p = out_buf__fmt_str(p, "\\u", 2);
		for (int shift = 12; shift >= 0; shift -= 4)
			*p++ = hex[(cp >> shift) & 0xf];
		return p;
	}
	return out_buf__fmt_str(p, s, k);
}

char *out_buf__fmt_json(char *p, const char *s, size_t len)
{
	size_t k;

	*p++ = '"';
	while (len) {
		if (plain((unsigned char)*s)) {
			*p++ = *s++;
			len--;
			continue;
		}
		p = json_char(p, s, len, &k);
		s += k;
		len -= k;
	}
	*p++ = '"';
	return p;
}

void out_buf__json_string(struct out_buf *ob, const char *s)
{
	size_t len = strlen(s), k;

	if (len <= (OUT_BUF_RESERVE_MAX - 2) / 6) {
		out_buf__commit(ob, out_buf__fmt_json(out_buf__reserve(ob, 6 * len + 2), s, len));
		return;
	}
	out_buf__putc(ob, '"');
	while (len) {
		char *p = out_buf__reserve(ob, 6);

		if (plain((unsigned char)*s)) {
			*p++ = *s;
			k = 1;
		} else {
			p = json_char(p, s, len, &k);
		}
		out_buf__commit(ob, p);
		s += k;
		len -= k;
	}
	out_buf__putc(ob, '"');
}
