/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bytes.h - little-endian fields at any alignment: boot headers, firmware tables and guest
 * memory are read and written through these (x86 is little endian, so a memcpy is the load).
 */
#ifndef VBTS_VMM_BYTES_H
#define VBTS_VMM_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t get_le16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

#endif /* VBTS_VMM_BYTES_H */
