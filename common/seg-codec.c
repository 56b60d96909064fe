// SPDX-License-Identifier: GPL-2.0
/*
 * seg-codec.c - delta-varint transform v1 and zstd framing of closed stream segments.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "seg-codec.h"

static inline uint64_t zz(uint64_t v)
{
	return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static inline uint64_t unzz(uint64_t v)
{
	return (v >> 1) ^ (0 - (v & 1));
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* One varint from [*p, end): false when it runs past @end or is not a valid 64-bit value. */
static inline bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;

	for (unsigned int shift = 0; shift < 70; shift += 7) {
		uint8_t b;

		if (q == end)
			return false;
		b = *q++;
		if (shift == 63 && b > 1)
			return false;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*v = r;
			return true;
		}
	}
	return false;
}

/* First varint of a record: a tag, or the branch's straight-line run. */
#define TAG_ESCAPE 0  /* an escape record follows */
#define TAG_LITERAL 1 /* a branch whose run does not fit: its from follows as it is */
#define TAG_RUN 2     /* tag - TAG_RUN = zz(from - prev_to) */

size_t seg_codec__encode(const struct vbts_record *recs, size_t n, uint8_t *out)
{
	uint64_t prev_to = 0, prev_flags = 0, esc_to[256] = { 0 }, esc_flags[256] = { 0 };
	uint8_t *p = out;

	for (size_t i = 0; i < n; i++) {
		const struct vbts_record *r = &recs[i];
		uint64_t run = zz(r->from - prev_to);
		unsigned int k = (unsigned int)(r->flags & 0xff);

		if (r->from == VBTS_ESCAPE) {
			*p++ = TAG_ESCAPE;
			*p++ = (uint8_t)k;
			p = put_varint(p, zz(r->to - esc_to[k]));
			p = put_varint(p, zz((r->flags >> 8) - (esc_flags[k] >> 8)));
			esc_to[k] = r->to;
			esc_flags[k] = r->flags;
			continue;
		}
		if (run <= UINT64_MAX - TAG_RUN) {
			p = put_varint(p, run + TAG_RUN);
		} else {
			*p++ = TAG_LITERAL;
			p = put_varint(p, r->from);
		}
		p = put_varint(p, zz(r->to - r->from));
		p = put_varint(p, r->flags ^ prev_flags);
		prev_to = r->to;
		prev_flags = r->flags;
	}
	return (size_t)(p - out);
}

int seg_codec__decode(const uint8_t *in, size_t len, struct vbts_record *out, size_t n)
{
	const uint8_t *p = in, *end = in + len;
	uint64_t prev_to = 0, prev_flags = 0, esc_to[256] = { 0 }, esc_flags[256] = { 0 }, a, b, c;

	for (size_t i = 0; i < n; i++) {
		unsigned int k;

		if (!get_varint(&p, end, &a))
			return -EINVAL;
		if (a == TAG_ESCAPE) {
			if (p == end)
				return -EINVAL;
			k = *p++;
			if (!get_varint(&p, end, &b) || !get_varint(&p, end, &c))
				return -EINVAL;
			c = (esc_flags[k] >> 8) + unzz(c);
			if (c > VBTS_ESC_AUX_MAX)
				return -EINVAL;
			out[i].from = VBTS_ESCAPE;
			out[i].to = esc_to[k] + unzz(b);
			out[i].flags = (c << 8) | k;
			esc_to[k] = out[i].to;
			esc_flags[k] = out[i].flags;
			continue;
		}
		if (a == TAG_LITERAL) {
			if (!get_varint(&p, end, &a))
				return -EINVAL;
			out[i].from = a;
		} else {
			out[i].from = prev_to + unzz(a - TAG_RUN);
		}
		/* a branch is never coded with from == VBTS_ESCAPE: that is an escape's tag */
		if (out[i].from == VBTS_ESCAPE || !get_varint(&p, end, &b) ||
		    !get_varint(&p, end, &c))
			return -EINVAL;
		out[i].to = out[i].from + unzz(b);
		out[i].flags = c ^ prev_flags;
		prev_to = out[i].to;
		prev_flags = out[i].flags;
	}
	return p == end ? 0 : -EINVAL;
}

int seg_codec__compress(const struct vbts_record *recs, size_t n, int level, void **out,
			size_t *len)
{
	ZSTD_CCtx *cctx;
	uint8_t *tx;
	void *frame;
	size_t txlen, bound, r;

	if (n > VBTS_SEG_MAX_RECORDS)
		return -EINVAL;
	tx = malloc(n * VBTS_SEG_DV1_MAX_BYTES + 1);
	if (!tx)
		return -ENOMEM;
	txlen = seg_codec__encode(recs, n, tx);
	bound = ZSTD_compressBound(txlen);
	frame = malloc(bound);
	cctx = ZSTD_createCCtx();
	if (!frame || !cctx) {
		ZSTD_freeCCtx(cctx);
		free(frame);
		free(tx);
		return -ENOMEM;
	}
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
	r = ZSTD_compress2(cctx, frame, bound, tx, txlen);
	ZSTD_freeCCtx(cctx);
	free(tx);
	if (ZSTD_isError(r)) {
		free(frame);
		return -EIO;
	}
	*out = frame;
	*len = r;
	return 0;
}

struct seg_compressor {
	ZSTD_CCtx *cctx;
	size_t max_records;
	uint8_t *tx;
	void *frame;
	size_t frame_cap;
};

struct seg_compressor *seg_compressor__new(int level, size_t max_records)
{
	struct seg_compressor *c;

	if (max_records > VBTS_SEG_MAX_RECORDS) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_records = max_records;
	c->tx = malloc(max_records * VBTS_SEG_DV1_MAX_BYTES + 1);
	c->frame_cap = ZSTD_compressBound(max_records * VBTS_SEG_DV1_MAX_BYTES);
	c->frame = malloc(c->frame_cap);
	c->cctx = ZSTD_createCCtx();
	if (!c->tx || !c->frame || !c->cctx) {
		seg_compressor__free(c);
		errno = ENOMEM;
		return NULL;
	}
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setParameter(c->cctx, ZSTD_c_contentSizeFlag, 1);
	return c;
}

int seg_compressor__run(struct seg_compressor *c, const struct vbts_record *recs, size_t n,
			const void **frame, size_t *len)
{
	size_t txlen, r;

	if (n > c->max_records)
		return -EINVAL;
	txlen = seg_codec__encode(recs, n, c->tx);
	r = ZSTD_compress2(c->cctx, c->frame, c->frame_cap, c->tx, txlen);
	if (ZSTD_isError(r))
		return -EIO;
	*frame = c->frame;
	*len = r;
	return 0;
}

void seg_compressor__free(struct seg_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->cctx);
	free(c->frame);
	free(c->tx);
	free(c);
}

int seg_codec__decompress(const void *frame, size_t len, uint64_t n, struct vbts_record **out,
			  char *err, size_t errlen)
{
	unsigned long long size;
	struct vbts_record *recs;
	uint8_t *tx;
	size_t r;
	int ret;

	if (n > VBTS_SEG_MAX_RECORDS) {
		snprintf(err, errlen, "%llu records, more than a segment holds",
			 (unsigned long long)n);
		return -EINVAL;
	}
	r = ZSTD_findFrameCompressedSize(frame, len);
	if (ZSTD_isError(r) || r != len) {
		snprintf(err, errlen, "payload is not one zstd frame of %zu bytes", len);
		return -EINVAL;
	}
	size = ZSTD_getFrameContentSize(frame, len);
	if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ||
	    size > n * VBTS_SEG_DV1_MAX_BYTES || size < n * 3) {
		snprintf(err, errlen, "zstd frame content size does not fit %llu records",
			 (unsigned long long)n);
		return -EINVAL;
	}
	tx = malloc(size ? size : 1);
	recs = malloc(n ? n * sizeof(*recs) : 1);
	if (!tx || !recs) {
		free(tx);
		free(recs);
		return -ENOMEM;
	}
	r = ZSTD_decompress(tx, size, frame, len);
	if (ZSTD_isError(r) || r != size) {
		snprintf(err, errlen, "zstd: %s", ZSTD_isError(r) ? ZSTD_getErrorName(r) :
			 "short frame");
		ret = -EINVAL;
		goto err_free;
	}
	if (seg_codec__decode(tx, size, recs, n)) {
		snprintf(err, errlen, "the payload is not %llu records of transform v1",
			 (unsigned long long)n);
		ret = -EINVAL;
		goto err_free;
	}
	free(tx);
	*out = recs;
	return 0;

err_free:
	free(tx);
	free(recs);
	return ret;
}

int seg_codec__read_records(int fd, const struct vbts_seg_header *h, uint64_t n,
			    struct vbts_record **out)
{
	struct vbts_record *recs;
	char err[128];
	void *frame;
	size_t len;
	int ret;

	if (n > VBTS_SEG_MAX_RECORDS)
		return -EINVAL;
	if (h->encoding == VBTS_SEG_ENC_RAW) {
		len = n * sizeof(*recs);
		recs = malloc(len ? len : 1);
		if (!recs)
			return -ENOMEM;
		if (pread(fd, recs, len, VBTS_SEG_HEADER_SIZE) != (ssize_t)len) {
			free(recs);
			return -EIO;
		}
		*out = recs;
		return 0;
	}
	if (h->encoding != VBTS_SEG_ENC_ZSTD_DV1 || h->payload_size > SIZE_MAX)
		return -EINVAL;
	frame = malloc(h->payload_size ? h->payload_size : 1);
	if (!frame)
		return -ENOMEM;
	if (pread(fd, frame, h->payload_size, VBTS_SEG_HEADER_SIZE) != (ssize_t)h->payload_size)
		ret = -EIO;
	else
		ret = seg_codec__decompress(frame, h->payload_size, n, out, err, sizeof(err));
	free(frame);
	return ret;
}
