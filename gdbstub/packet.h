/* SPDX-License-Identifier: GPL-2.0 */
/*
 * packet.h - gdb remote serial protocol framing: a byte-at-a-time parser of `$data#cs` packets
 * (checksum, `}` escapes, `*` run lengths, bounded size) and the encoder of replies.
 */
#ifndef VBTS_GDBSTUB_PACKET_H
#define VBTS_GDBSTUB_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest packet payload accepted or sent (decoded bytes); advertised as PacketSize. */
#define GDB_PACKET_MAX 4096

/**
 * enum gdb_packet_event - what one byte fed to the parser completed.
 * @GDB_PKT_MORE:      nothing yet
 * @GDB_PKT_READY:     a packet with a good checksum: its payload is in the parser
 * @GDB_PKT_ACK:       a `+` outside a packet
 * @GDB_PKT_NAK:       a `-` outside a packet (the peer asks for the last reply again)
 * @GDB_PKT_INTERRUPT: a ^C (0x03) outside a packet
 * @GDB_PKT_BAD_SUM:   a packet whose checksum does not match (or is not two hex digits)
 * @GDB_PKT_TOO_LONG:  a packet longer than GDB_PACKET_MAX: the connection cannot go on
 * @GDB_PKT_BAD:       garbage: a byte outside a packet that is none of the above, or a packet
 *                     whose escapes or run lengths are invalid
 */
enum gdb_packet_event {
	GDB_PKT_MORE,
	GDB_PKT_READY,
	GDB_PKT_ACK,
	GDB_PKT_NAK,
	GDB_PKT_INTERRUPT,
	GDB_PKT_BAD_SUM,
	GDB_PKT_TOO_LONG,
	GDB_PKT_BAD,
};

/**
 * struct gdb_packet_parser - the state of one direction of a connection.
 * @state:  where in a packet the next byte falls (internal)
 * @sum:    running checksum of the raw bytes between `$` and `#`
 * @cs:     the checksum digits read so far
 * @esc:    the previous raw byte was `}`
 * @rle:    the previous raw byte was `*`
 * @bad:    the packet so far is invalid (bad escape or run length)
 * @len:    payload bytes decoded so far
 * @data:   the decoded payload, NUL-terminated when GDB_PKT_READY
 */
struct gdb_packet_parser {
	int state;
	uint8_t sum;
	char cs[2];
	bool esc, rle, bad;
	size_t len;
	char data[GDB_PACKET_MAX + 1];
};

/**
 * gdb_packet_parser__init() - a parser waiting for its first packet.
 * @p: the parser
 */
void gdb_packet_parser__init(struct gdb_packet_parser *p);

/**
 * gdb_packet_parser__feed() - take one byte of the stream.
 * @p: the parser
 * @c: the byte
 *
 * After GDB_PKT_READY, @p->data holds @p->len bytes of payload (escapes and run lengths
 * undone) and a NUL; the next byte starts over. After GDB_PKT_BAD_SUM or GDB_PKT_BAD the
 * parser waits for the next packet; after GDB_PKT_TOO_LONG the rest of the packet is garbage.
 *
 * Return: the event this byte completed.
 */
enum gdb_packet_event gdb_packet_parser__feed(struct gdb_packet_parser *p, uint8_t c);

/**
 * gdb_packet__encode() - frame a reply: `$`, the payload with `#`, `$`, `}` and `*` escaped,
 * `#` and the checksum.
 * @data: payload
 * @len:  its length
 * @out:  receives the packet (not NUL-terminated)
 * @cap:  size of @out; 2 * @len + 4 is always enough
 *
 * Return: the packet's length, or -ENOSPC when @out is too small.
 */
int gdb_packet__encode(const void *data, size_t len, char *out, size_t cap);

/**
 * gdb_packet__hex() - the value of one hex digit.
 * @c: the character
 *
 * Return: 0-15, or -1 when @c is not a hex digit.
 */
int gdb_packet__hex(char c);

#endif /* VBTS_GDBSTUB_PACKET_H */
