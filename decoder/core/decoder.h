/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decoder.h - the vbts record decoder: a stateful, multi-vCPU decoder with a pull API over the
 * pure record parser of format/record.h. It knows nothing about files, ELF or output formats:
 * records come from callbacks (struct decoder_source), and names are resolved by the caller.
 */
#ifndef VBTS_DECODER_DECODER_H
#define VBTS_DECODER_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <vbts/ring-format.h>

#include "record.h"

/**
 * struct decoder_source_ops - where one vCPU's records come from.
 * @read:    copy up to @max records oldest first into @buf, *first_seq = seq of buf[0];
 *           a first_seq beyond the previous end means records in between were lost.
 *           Returns the count, 0 at the end, or -errno.
 * @dropped: optional; records lost after the last one returned (e.g. the end of a live ring
 *           overwritten while it was read, appends refused by a frozen ring), asked once at
 *           the end of the stream with the seq that would have come next
 */
struct decoder_source_ops {
	ssize_t (*read)(void *ctx, struct vbts_record *buf, size_t max, uint64_t *first_seq);
	uint64_t (*dropped)(void *ctx, uint64_t end_seq);
};

/**
 * struct decoder_source - one vCPU's record stream.
 * @vcpu:      the vCPU id reported in decoded records
 * @first_seq: the seq the stream is expected to start at (records before it are reported as
 *             lost: 0 for a trace read from its start)
 * @ops, @ctx: the callbacks and their argument
 */
struct decoder_source {
	uint32_t vcpu;
	uint64_t first_seq;
	const struct decoder_source_ops *ops;
	void *ctx;
};

struct decoder;

/**
 * decoder__new() - a decoder over one or more vCPU streams, merged by time.
 * @src:    the streams (copied)
 * @nr_src: how many, >= 1
 *
 * Streams are merged in runs: a run starts at a record that carries a timestamp and lasts
 * until the next such record of the same vCPU (branch records carry no time). Runs are
 * emitted in order of their start time; the records before a vCPU's first timestamp form a
 * run with time 0. Ties go to the lower vCPU id.
 *
 * Return: the decoder, or NULL with errno set (EINVAL, ENOMEM).
 */
struct decoder *decoder__new(const struct decoder_source *src, size_t nr_src);

/**
 * decoder__next() - the next decoded item.
 * @d:   decoder
 * @out: receives the item
 *
 * Return: 1 with *@out filled, 0 at the end of every stream, or -errno from a source's read
 * callback (-EIO, ...), after which the decoder is finished.
 */
int decoder__next(struct decoder *d, struct decoded_record *out);

/**
 * decoder__free() - release the decoder (not the sources' contexts).
 * @d: decoder, may be NULL
 */
void decoder__free(struct decoder *d);

#endif /* VBTS_DECODER_DECODER_H */
