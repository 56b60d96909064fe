/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * segment-format.h - the vbts stream segment file (v1): the one definition shared by the VMM,
 * the decoder and the tests.
 *
 * In stream mode each vCPU writes its records (struct vbts_record, ring-format.h) into a
 * sequence of segments. Record number `seq` of a vCPU (counting from 0 since the trace
 * started) is in the segment whose [first_seq, first_seq + committed) holds it; segments of a
 * vCPU follow each other without holes (a consumer may remove the oldest ones).
 *
 *  - The open segment `vcpuN.open.vseg` (N the vCPU): encoding VBTS_SEG_ENC_RAW, a 128-byte
 *    header, then `capacity` record slots of 24 bytes, the file's size fixed. The writer
 *    reserves its blocks (posix_fallocate) before it maps them, so a full disk is an error of
 *    that call, never a SIGBUS on a store. It stores the record bytes first and only then
 *    publishes `committed` (release ordering), as a ring does: a reader (also after kill -9
 *    of the writer) trusts the first min(committed, capacity, whole slots in the file)
 *    records, nothing else. Its last slot is kept for a VBTS_ESC_LOST record. When it is
 *    full, the file is linked as closed segment `index` (raw, see below) and a spare file
 *    (`vcpuN.spareK.vseg.tmp`, made ahead, its header's index ~0 until then) is renamed over
 *    the open name with index + 1 and first_seq moved on. A reader that finds a closed
 *    segment of the open segment's index (it looked in between) skips the open one. At a
 *    clean end the open segment is closed too and removed.
 *  - Closed segments `vcpuN.SSSSSSSS.vseg` (SSSSSSSS the index in 8 decimal digits, from 0):
 *    the header, then either VBTS_SEG_ENC_ZSTD_DV1: `payload_size` bytes, one zstd frame
 *    (with its content size and checksum) of the delta-varint transform v1 of the segment's
 *    `committed` records; or VBTS_SEG_ENC_RAW when that would not be smaller: `committed`
 *    records as they are (capacity == committed). The file is written as
 *    `vcpuN.SSSSSSSS.vseg.tmp` and renamed into place: a reader never sees it half written.
 *    Until then (and for good when it could not be written: disk full, kill -9) the closed
 *    segment is the former open file, raw, with its `capacity` slots and `committed` records.
 *    The writer may take that raw file's pages for a later segment once the compressed copy
 *    has its name: a reader of a raw closed segment reads its header again after its records,
 *    and reads the name again when index, first_seq or committed changed.
 *
 * Delta-varint transform v1 (VBTS_SEG_ENC_ZSTD_DV1), per record, with state that starts at 0
 * in every segment: prev_to and prev_flags (of the last branch record), and for each escape
 * kind K (flags bits 0-7) esc_to[K] and esc_aux[K] (of the last escape record of that kind);
 * zz(x) = (x << 1) ^ (x >> 63) on the 64-bit two's complement value, and varint = LEB128
 * (7 bits a byte, low first, at most 10 bytes, the 10th byte at most 1). All arithmetic is
 * modulo 2^64.
 *   branch:  varint(zz(from - prev_to) + 2)     - the straight-line run before the branch
 *                                                 (when that is at most 2^64 - 3, else:
 *            varint(1), varint(from))           - the address as it is)
 *            varint(zz(to - from))              - the branch's displacement
 *            varint(flags ^ prev_flags)         - then prev_to = to, prev_flags = flags
 *   escape:  varint(0), byte K                  - from == VBTS_ESCAPE, its kind
 *            varint(zz(to - esc_to[K]))         - a time or CR3: against the last of its kind
 *            varint(zz(aux - esc_aux[K]))       - aux = flags >> 8, at most 2^56 - 1
 *                                                 then esc_to[K] = to, esc_aux[K] = aux
 * A branch record whose from is VBTS_ESCAPE cannot be coded (it is an escape). A typical
 * branch is 3 to 5 bytes before zstd, an escape 3 to 8; zstd then finds the loops. A decoder
 * takes exactly `committed` records and the payload to its last byte, or refuses the segment.
 *
 * Losses: when the writer must drop records (disk budget or disk full with on-full drop, a
 * frozen vCPU), it writes a VBTS_ESC_LOST record with the count before the next record it
 * keeps, and the header's `lost` (the vCPU's total since the trace started) counts them too.
 */
#ifndef VBTS_SEGMENT_FORMAT_H
#define VBTS_SEGMENT_FORMAT_H

#include <stdint.h>

#include <vbts/ring-format.h>

#define VBTS_SEG_MAGIC 0x0047455353544256ULL /* "VBTSSEG\0" read as little endian */
#define VBTS_SEG_VERSION 1
#define VBTS_SEG_HEADER_SIZE 128
#define VBTS_SEG_SUFFIX ".vseg"
#define VBTS_SEG_OPEN_SUFFIX ".open.vseg"

/* enum vbts_seg_encoding: what follows the header. */
enum vbts_seg_encoding {
	VBTS_SEG_ENC_RAW = 0,      /* capacity 24-byte slots, committed of them published */
	VBTS_SEG_ENC_ZSTD_DV1 = 1, /* a zstd frame of the delta-varint transform v1 */
};

#define VBTS_SEG_F_CLOSED (1U << 0) /* the writer finished this segment (the open segment:
				     * the trace ended and it could not be written out) */
#define VBTS_SEG_F_FROZEN (1U << 1) /* the vCPU was frozen (crash): nothing follows */
#define VBTS_SEG_F_LAST (1U << 2)   /* the trace ended: no segment follows this one */

/* A segment holds at most this many records (the writer's segment size is below it). */
#define VBTS_SEG_MAX_RECORDS (1ULL << 24)
/* The transform's longest record: three varints of at most 10 bytes. */
#define VBTS_SEG_DV1_MAX_BYTES 30

/**
 * struct vbts_seg_header - the first 128 bytes of a segment file.
 */
struct vbts_seg_header {
	uint64_t magic;         /* 0x00 VBTS_SEG_MAGIC, stored last at creation */
	uint16_t version;       /* 0x08 VBTS_SEG_VERSION */
	uint16_t header_size;   /* 0x0a VBTS_SEG_HEADER_SIZE */
	uint16_t record_size;   /* 0x0c sizeof(struct vbts_record) */
	uint16_t encoding;      /* 0x0e enum vbts_seg_encoding */
	uint32_t vcpu_id;       /* 0x10 vCPU index within the VM */
	uint32_t flags;         /* 0x14 VBTS_SEG_F_* */
	uint64_t index;         /* 0x18 segment number of this vCPU, from 0, as in the name (the
				 * open segment: the number its records will be closed as) */
	uint64_t vm_id;         /* 0x20 random id of the run, also in vm.json */
	uint64_t committed;     /* 0x28 records in this segment; raw: published after bytes */
	uint64_t first_seq;     /* 0x30 seq of its first record */
	uint64_t start_time_ns; /* 0x38 CLOCK_REALTIME of trace start, ns since the epoch */
	uint64_t capacity;      /* 0x40 record slots (open); == committed (closed) */
	uint64_t payload_size;  /* 0x48 zstd: bytes of the frame after the header; raw: 0 */
	uint64_t lost;          /* 0x50 records of the vCPU dropped so far (also in-stream) */
	uint8_t reserved[VBTS_SEG_HEADER_SIZE - 0x58]; /* 0x58 zero */
};

_Static_assert(sizeof(struct vbts_seg_header) == VBTS_SEG_HEADER_SIZE, "segment header size");
_Static_assert(__builtin_offsetof(struct vbts_seg_header, committed) == 0x28, "ABI");
_Static_assert(__builtin_offsetof(struct vbts_seg_header, lost) == 0x50, "ABI");
_Static_assert(VBTS_SEG_HEADER_SIZE % 8 == 0, "records stay 8-byte aligned");

#endif /* VBTS_SEGMENT_FORMAT_H */
