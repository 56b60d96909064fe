// SPDX-License-Identifier: GPL-2.0
/*
 * packet.c - gdb remote serial protocol framing: parse `$data#cs` packets, encode replies.
 */
#include <errno.h>

#include "packet.h"

/* Where the next byte falls. */
enum {
	ST_IDLE,        /* between packets */
	ST_DATA,        /* after `$` */
	ST_SUM,         /* after `#`: cs[] holds the digits read */
	ST_SUM2,
	ST_SKIP,        /* a packet too long: drop bytes until its `#` and checksum */
	ST_SKIP_SUM,
	ST_SKIP_SUM2,
};

/* The count a run-length byte gives: repeat the previous byte this many more times. */
#define RLE_BIAS 29

void gdb_packet_parser__init(struct gdb_packet_parser *p)
{
	p->state = ST_IDLE;
	p->sum = 0;
	p->esc = p->rle = p->bad = false;
	p->len = 0;
	p->data[0] = '\0';
}

int gdb_packet__hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void start_packet(struct gdb_packet_parser *p)
{
	p->state = ST_DATA;
	p->sum = 0;
	p->esc = p->rle = p->bad = false;
	p->len = 0;
}

/* One raw byte of payload, its escape or run length undone. Returns false when too long. */
static bool take_data(struct gdb_packet_parser *p, uint8_t c)
{
	size_t n;

	if (p->rle) {
		p->rle = false;
		/* A count needs a byte before it; counts below 3 are never sent, and `#` and `$`
		 * (counts 6 and 7) cannot be sent. */
		if (!p->len || c < RLE_BIAS + 3 || c > 126 || c == '#' || c == '$') {
			p->bad = true;
			return true;
		}
		n = (size_t)(c - RLE_BIAS);
		if (p->len + n > GDB_PACKET_MAX)
			return false;
		for (size_t i = 0; i < n; i++)
			p->data[p->len + i] = p->data[p->len - 1];
		p->len += n;
		return true;
	}
	if (p->esc) {
		p->esc = false;
		c ^= 0x20;
	} else if (c == '}') {
		p->esc = true;
		return true;
	} else if (c == '*') {
		p->rle = true;
		return true;
	}
	if (p->len >= GDB_PACKET_MAX)
		return false;
	p->data[p->len++] = (char)c;
	return true;
}

enum gdb_packet_event gdb_packet_parser__feed(struct gdb_packet_parser *p, uint8_t c)
{
	int hi, lo;

	switch (p->state) {
	case ST_IDLE:
		switch (c) {
		case '$':
			start_packet(p);
			return GDB_PKT_MORE;
		case '+':
			return GDB_PKT_ACK;
		case '-':
			return GDB_PKT_NAK;
		case 0x03:
			return GDB_PKT_INTERRUPT;
		default:
			return GDB_PKT_BAD;
		}
	case ST_DATA:
		/* Neither is ever escaped raw: `}` is followed by the byte ^ 0x20. */
		if (c == '#') {
			p->state = ST_SUM;
			return GDB_PKT_MORE;
		}
		if (c == '$') {
			/* A new packet inside one: the first was cut short. */
			start_packet(p);
			return GDB_PKT_BAD;
		}
		p->sum += c;
		if (!take_data(p, c)) {
			p->state = ST_SKIP;
			return GDB_PKT_TOO_LONG;
		}
		return GDB_PKT_MORE;
	case ST_SUM:
		p->cs[0] = (char)c;
		p->state = ST_SUM2;
		return GDB_PKT_MORE;
	case ST_SUM2:
		p->cs[1] = (char)c;
		p->state = ST_IDLE;
		hi = gdb_packet__hex(p->cs[0]);
		lo = gdb_packet__hex(p->cs[1]);
		if (hi < 0 || lo < 0 || (uint8_t)(hi << 4 | lo) != p->sum)
			return GDB_PKT_BAD_SUM;
		if (p->bad || p->esc || p->rle)
			return GDB_PKT_BAD;
		p->data[p->len] = '\0';
		return GDB_PKT_READY;
	case ST_SKIP:
		if (c == '#')
			p->state = ST_SKIP_SUM;
		return GDB_PKT_MORE;
	case ST_SKIP_SUM:
		p->state = ST_SKIP_SUM2;
		return GDB_PKT_MORE;
	default:
		p->state = ST_IDLE;
		return GDB_PKT_MORE;
	}
}

int gdb_packet__encode(const void *data, size_t len, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *d = data;
	uint8_t sum = 0;
	size_t o = 0;

	if (cap < 4)
		return -ENOSPC;
	out[o++] = '$';
	for (size_t i = 0; i < len; i++) {
		uint8_t c = d[i];

		if (o + 2 > cap - 3)
			return -ENOSPC;
		if (c == '#' || c == '$' || c == '}' || c == '*') {
			out[o++] = '}';
			sum += '}';
			c ^= 0x20;
		}
		out[o++] = (char)c;
		sum += c;
	}
	out[o++] = '#';
	out[o++] = digits[sum >> 4];
	out[o++] = digits[sum & 0xf];
	return (int)o;
}
