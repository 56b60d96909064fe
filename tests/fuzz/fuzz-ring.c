// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-ring.c - libFuzzer target: the bytes of a ring file through the ring reader, the decoder
 * and both exporters.
 *
 * Beyond the sanitizers it checks what ring-reader.h promises: a file that is refused gets one
 * error line; a file that is taken yields records oldest first, each chunk inside the window
 * fixed by ring_reader__begin(), never more than the window holds, and never -EIO (the file
 * does not change while it is read).
 */
#include <errno.h>
#include <string.h>

#include "decoder.h"
#include "export.h"
#include "fuzz.h"
#include "ring-reader.h"

/* Largest chunk asked of ring_reader__read(). */
#define CHUNK_MAX 7

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

/* Every record of the window in chunks of @chunk, checked against the window. */
static void read_window(struct ring_reader *r, size_t chunk)
{
	const struct vbts_ring_header *h = ring_reader__header(r);
	struct vbts_record buf[CHUNK_MAX];
	uint64_t first, end, next, seq, total = 0;
	ssize_t n;

	FUZZ_ASSERT(ring_reader__begin(r) == 0);
	ring_reader__window(r, &first, &end);
	FUZZ_ASSERT(first <= end && end - first <= h->capacity);
	next = first;
	while ((n = ring_reader__read(r, buf, chunk, &seq)) > 0) {
		FUZZ_ASSERT((size_t)n <= chunk);
		FUZZ_ASSERT(seq >= next);
		FUZZ_ASSERT(seq <= end && (uint64_t)n <= end - seq);
		next = seq + (uint64_t)n;
		total += (uint64_t)n;
	}
	FUZZ_ASSERT(n == 0);
	FUZZ_ASSERT(total <= end - first);
}

static ssize_t source_read(void *ctx, struct vbts_record *buf, size_t max, uint64_t *first_seq)
{
	return ring_reader__read(ctx, buf, max, first_seq);
}

static const struct decoder_source_ops source_ops = {
	.read = source_read,
};

/* The whole ring through the decoder, exported in @format, with a summary. */
static void decode(struct ring_reader *r, enum export_format format)
{
	struct decoder_source src = {
		.vcpu = ring_reader__header(r)->vcpu_id,
		.ops = &source_ops,
		.ctx = r,
	};
	struct exporter_options eo = { .out = devnull, .format = format };
	struct exporter *e = exporter__new(&eo);
	struct trace_summary sum = { 0 };
	struct decoded_record rec;
	struct decoder *d;
	int ret;

	FUZZ_ASSERT(e);
	FUZZ_ASSERT(ring_reader__begin(r) == 0);
	d = decoder__new(&src, 1);
	FUZZ_ASSERT(d);
	while ((ret = decoder__next(d, &rec)) > 0) {
		FUZZ_ASSERT(rec.type < DECODED_TYPE_MAX);
		FUZZ_ASSERT(rec.vcpu == src.vcpu);
		FUZZ_ASSERT(trace_summary__add(&sum, &rec) == 0);
		FUZZ_ASSERT(exporter__record(e, &rec) == 0);
	}
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(exporter__summary(e, &sum) == 0);
	exporter__free(e);
	trace_summary__release(&sum);
	decoder__free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[32], err[RING_READER_ERR_MAX];
	struct ring_reader *r;
	int fd;

	fd = fuzz_memfd(data, size, path);
	FUZZ_ASSERT(fd >= 0);
	r = ring_reader__open(path, err, sizeof(err));
	if (!r) {
		FUZZ_ASSERT(errno == EINVAL);
		FUZZ_ASSERT(err[0] && !strchr(err, '\n'));
		close(fd);
		return 0;
	}
	read_window(r, 1);
	read_window(r, CHUNK_MAX);
	decode(r, EXPORT_TEXT);
	decode(r, EXPORT_JSONL);
	ring_reader__close(r);
	close(fd);
	return 0;
}
