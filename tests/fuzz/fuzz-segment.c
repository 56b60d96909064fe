// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-segment.c - libFuzzer target: the bytes of a stream segment file through the segment
 * reader (the first input byte says whether they are the open segment, vcpu0.open.vseg, or a
 * closed one, vcpu0.00000000.vseg; the rest are the file).
 *
 * Beyond the sanitizers it checks what seg-reader.h promises: a file that is refused gets one
 * error line; the records it yields come in chunks of at most what was asked, their seqs never
 * go back, and never more than the window holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "seg-reader.h"

#define CHUNK_MAX 7

static char dir[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/vbts-fuzz-segment-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	return 0;
}

static void ignore_warning(void *ctx, const char *line)
{
	FUZZ_ASSERT(line && line[0] && !strchr(line, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[PATH_MAX + 32], err[SEG_READER_ERR_MAX];
	struct vbts_record buf[CHUNK_MAX];
	uint64_t first, end, next, seq, total = 0;
	struct seg_reader *r;
	size_t chunk;
	ssize_t n;
	int fd;

	if (!size)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", dir,
		 data[0] & 1 ? "vcpu0.open.vseg" : "vcpu0.00000000.vseg");
	chunk = 1 + data[0] % CHUNK_MAX;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(fuzz_write_all(fd, data + 1, size - 1) == 0);
	close(fd);
	err[0] = '\0';
	r = seg_reader__open(dir, 0, ignore_warning, NULL, err, sizeof(err));
	if (!r) {
		FUZZ_ASSERT(err[0] && !strchr(err, '\n'));
		unlink(path);
		return 0;
	}
	seg_reader__window(r, &first, &end);
	FUZZ_ASSERT(first <= end);
	next = first;
	while ((n = seg_reader__read(r, buf, chunk, &seq)) > 0) {
		FUZZ_ASSERT((size_t)n <= chunk);
		FUZZ_ASSERT(seq >= next);
		next = seq + (uint64_t)n;
		total += (uint64_t)n;
	}
	FUZZ_ASSERT(n == 0);
	FUZZ_ASSERT(total <= end - first);
	seg_reader__close(r);
	unlink(path);
	return 0;
}
