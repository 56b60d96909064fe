/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seg-codec.h - the payload of a closed stream segment (vbts/segment-format.h): the
 * delta-varint transform v1 of its records and the zstd frame around it.
 *
 * Both directions are bounded: the decoder takes untrusted bytes and fails with -EINVAL on
 * anything that is not exactly the expected number of well-formed records.
 */
#ifndef VBTS_COMMON_SEG_CODEC_H
#define VBTS_COMMON_SEG_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <vbts/segment-format.h>

/**
 * seg_codec__encode() - the delta-varint transform v1 of @n records.
 * @recs: records
 * @n:    how many
 * @out:  room for @n * VBTS_SEG_DV1_MAX_BYTES bytes
 *
 * Return: the bytes written.
 */
size_t seg_codec__encode(const struct vbts_record *recs, size_t n, uint8_t *out);

/**
 * seg_codec__decode() - exactly @n records back from their transform.
 * @in:  the transform's bytes (untrusted)
 * @len: their number
 * @out: room for @n records
 * @n:   records expected
 *
 * Return: 0, or -EINVAL when @in is not exactly @n records (a varint that runs past @len or
 * past 10 bytes, bytes left over).
 */
int seg_codec__decode(const uint8_t *in, size_t len, struct vbts_record *out, size_t n);

/**
 * seg_codec__compress() - the payload of a closed segment: zstd frame of the transform.
 * @recs:  records
 * @n:     how many, at most VBTS_SEG_MAX_RECORDS
 * @level: zstd level (1 is fast and enough for branch records)
 * @out:   receives a malloc'd frame
 * @len:   receives its size
 *
 * Return: 0, -EINVAL for too many records, -ENOMEM, or -EIO when zstd fails.
 */
int seg_codec__compress(const struct vbts_record *recs, size_t n, int level, void **out,
			size_t *len);

struct seg_compressor;

/**
 * seg_compressor__new() - a compressor that keeps its zstd context and buffers between
 * segments (a writer's: no allocation per segment).
 * @level:       zstd level
 * @max_records: the most records one call compresses, at most VBTS_SEG_MAX_RECORDS
 *
 * Return: the compressor, or NULL (ENOMEM, EINVAL).
 */
struct seg_compressor *seg_compressor__new(int level, size_t max_records);

/**
 * seg_compressor__run() - as seg_codec__compress(), into the compressor's own buffer.
 * @c:     compressor
 * @recs:  records
 * @n:     how many, at most its max_records
 * @frame: receives the frame, valid until the next call
 * @len:   receives its size
 *
 * Return: 0, -EINVAL for too many records, or -EIO when zstd fails.
 */
int seg_compressor__run(struct seg_compressor *c, const struct vbts_record *recs, size_t n,
			const void **frame, size_t *len);

/**
 * seg_compressor__free() - free.
 * @c: compressor, may be NULL
 */
void seg_compressor__free(struct seg_compressor *c);

/**
 * seg_codec__decompress() - the records of a closed segment's payload.
 * @frame: the zstd frame (untrusted)
 * @len:   its size
 * @n:     records the header says it holds, at most VBTS_SEG_MAX_RECORDS
 * @out:   receives a malloc'd array of @n records
 * @err:   receives a short reason on failure
 * @errlen: its size
 *
 * The frame must state its content size, at most @n * VBTS_SEG_DV1_MAX_BYTES, and hold
 * exactly one frame that decodes to exactly @n records.
 *
 * Return: 0, -EINVAL (with @err), or -ENOMEM.
 */
int seg_codec__decompress(const void *frame, size_t len, uint64_t n, struct vbts_record **out,
			  char *err, size_t errlen);

/**
 * seg_codec__read_records() - the records of a segment file whose header was checked.
 * @fd:  the file
 * @h:   its header: a raw segment's records follow it, a zstd one's frame of
 *       @h->payload_size bytes does (the caller has checked the size against the file)
 * @n:   records wanted: a raw segment's first @n, or exactly what the frame must decode to
 * @out: receives a malloc'd array of @n records
 *
 * Return: 0; -EIO when the file is shorter than that, -EINVAL when the frame does not decode
 * to @n records, -ENOMEM.
 */
int seg_codec__read_records(int fd, const struct vbts_seg_header *h, uint64_t n,
			    struct vbts_record **out);

#endif /* VBTS_COMMON_SEG_CODEC_H */
