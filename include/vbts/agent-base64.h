/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * agent-base64.h - the base64 of the agent channel's "agent-elf-data" lines (agent-proto.h),
 * as the guest agent writes it: standard alphabet, '=' padding, no line breaks.
 */
#ifndef VBTS_AGENT_BASE64_H
#define VBTS_AGENT_BASE64_H

#include <stddef.h>
#include <stdint.h>

/**
 * agent_base64__encode() - encode bytes for an agent-elf-data line.
 * @in:  the bytes
 * @n:   their number
 * @out: room for 4 * ((@n + 2) / 3) + 1 bytes: the text, NUL-terminated
 */
static inline void agent_base64__encode(const unsigned char *in, size_t n, char *out)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
	}
	out[o] = '\0';
}

#endif /* VBTS_AGENT_BASE64_H */
