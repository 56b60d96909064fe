// SPDX-License-Identifier: GPL-2.0
/*
 * test-segments.c - stream segments: round trip through compression, the open segment read
 * live and after kill -9, truncated and hostile segment files (bounded, one line, the other
 * segments read), the disk budget with drop and with stall, loss records in-stream, the
 * payload codec on extreme values, and the wrap ring's batch append.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "ring-reader.h"
#include "ring-test.h"
#include "ring-writer.h"
#include "seg-codec.h"
#include "seg-reader.h"
#include "seg-writer.h"

#define SEG 100
/* Records a segment of SEG slots holds: its last slot is kept for a LOST record. */
#define U (SEG - 1)

static struct seg_budget big_budget = { .limit = 1ULL << 30 };

/*
 * Segments compressed by the calling thread: the link wraps seg_compressor__run()
 * (-Wl,--wrap, tests/unit/ring/meson.build) to count the calls per thread.
 */
static __thread unsigned int compressions_here;

int __real_seg_compressor__run(struct seg_compressor *c, const struct vbts_record *recs,
			       size_t n, const void **frame, size_t *len);
int __wrap_seg_compressor__run(struct seg_compressor *c, const struct vbts_record *recs,
			       size_t n, const void **frame, size_t *len);

int __wrap_seg_compressor__run(struct seg_compressor *c, const struct vbts_record *recs,
			       size_t n, const void **frame, size_t *len)
{
	compressions_here++;
	return __real_seg_compressor__run(c, recs, n, frame, len);
}

static struct seg_writer *new_writer(const char *dir, uint64_t seg, struct seg_budget *b,
				     unsigned int on_full)
{
	struct seg_writer_config cfg = {
		.dir = dir,
		.vcpu_id = 2,
		.vm_id = 0x1122334455667788ULL,
		.start_time_ns = 1700000000000000000ULL,
		.segment_records = seg,
		.budget = b ? b : &big_budget,
		.on_full = on_full,
		.stall_ns = 1000000,
	};
	struct seg_writer *w = seg_writer__create(&cfg);

	ck_assert_msg(w, "seg_writer__create: %s", strerror(errno));
	return w;
}

static void append_seq(struct seg_writer *w, uint64_t from, uint64_t n)
{
	for (uint64_t s = from; s < from + n; s++) {
		struct vbts_record r = ring_test_record(s);

		ck_assert_int_eq(seg_writer__append(w, &r, 1), 1);
	}
}

struct warned {
	unsigned int n;
	char last[1024];
};

static void count_warn(void *ctx, const char *line)
{
	struct warned *wd = ctx;

	wd->n++;
	snprintf(wd->last, sizeof(wd->last), "%s", line);
}

/*
 * Reads vCPU 2's stream of @dir; checks every record against its seq; returns the records
 * read, *@gaps the seqs skipped.
 */
static uint64_t read_all(const char *dir, struct warned *wd, uint64_t *gaps)
{
	char err[SEG_READER_ERR_MAX];
	struct vbts_record buf[37];
	struct seg_reader *r;
	uint64_t total = 0, next = 0, first;
	ssize_t n;

	r = seg_reader__open(dir, 2, count_warn, wd, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	*gaps = 0;
	while ((n = seg_reader__read(r, buf, 37, &first)) > 0) {
		ck_assert_uint_ge(first, next);
		*gaps += first - next;
		for (ssize_t i = 0; i < n; i++)
			ck_assert_msg(ring_test_record_ok(&buf[i], first + (uint64_t)i),
				      "record %llu", (unsigned long long)(first + (uint64_t)i));
		total += (uint64_t)n;
		next = first + (uint64_t)n;
	}
	ck_assert_int_eq(n, 0);
	seg_reader__close(r);
	return total;
}

static void seg_name(char *buf, size_t len, const char *dir, unsigned int index)
{
	snprintf(buf, len, "%s/vcpu2.%08u.vseg", dir, index);
}

static struct vbts_seg_header read_header(const char *path)
{
	struct vbts_seg_header h;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	return h;
}

START_TEST(test_round_trip)
{
	struct warned wd = { 0 };
	char dir[64], path[128];
	struct stat st;
	uint64_t gaps;
	struct seg_writer *w;

	ring_test_tmpdir(dir);
	w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);
	append_seq(w, 0, 1050);
	ck_assert_uint_eq(seg_writer__committed(w), 1050);
	ck_assert_int_eq(seg_writer__close(w), 0);
	/* 10 full segments and the last, all compressed, and no more */
	for (unsigned int i = 0; i <= 10; i++) {
		struct vbts_seg_header h;

		seg_name(path, sizeof(path), dir, i);
		h = read_header(path);
		ck_assert_uint_eq(h.encoding, VBTS_SEG_ENC_ZSTD_DV1);
		ck_assert_uint_eq(h.first_seq, i * U);
		ck_assert_uint_eq(h.committed, i < 10 ? U : 1050 - 10 * U);
		ck_assert(h.flags & VBTS_SEG_F_CLOSED);
		ck_assert(!!(h.flags & VBTS_SEG_F_LAST) == (i == 10));
	}
	seg_name(path, sizeof(path), dir, 11);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 1050);
	ck_assert_uint_eq(gaps, 0);
	ck_assert_uint_eq(wd.n, 0);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * The appending (vCPU) thread only copies records: full segments are compressed and written
 * by the writer's collector thread, never by the thread that appends; once the writer is
 * closed every one of them is compressed all the same.
 */
START_TEST(test_append_does_not_compress)
{
	struct warned wd = { 0 };
	char dir[64], path[128];
	struct seg_writer *w;
	uint64_t gaps;

	ring_test_tmpdir(dir);
	w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);
	compressions_here = 0;
	append_seq(w, 0, 20 * U + 5);
	ck_assert_uint_eq(compressions_here, 0);
	ck_assert_int_eq(seg_writer__close(w), 0);
	for (unsigned int i = 0; i < 20; i++) {
		seg_name(path, sizeof(path), dir, i);
		ck_assert_uint_eq(read_header(path).encoding, VBTS_SEG_ENC_ZSTD_DV1);
	}
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 20 * U + 5);
	ck_assert_uint_eq(gaps, 0);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * A reader of a live stream, while the writer (another process) renames segments closed,
 * compresses them and takes their pages for later segments: every record it reads is the
 * record of its seq, and it never takes a segment for damaged.
 */
START_TEST(test_live_reader)
{
	char dir[64];
	unsigned int rounds = 0;
	int status;
	pid_t pid;

	ring_test_tmpdir(dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct seg_writer *w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);

		for (uint64_t s = 0; s < 3000 * U; s++) {
			struct vbts_record r = ring_test_record(s);

			if (seg_writer__append(w, &r, 1) != 1)
				_exit(1);
		}
		_exit(seg_writer__close(w) ? 1 : 0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		struct warned wd = { 0 };
		char err[SEG_READER_ERR_MAX];
		struct vbts_record buf[64];
		struct seg_reader *r = seg_reader__open(dir, 2, count_warn, &wd, err, sizeof(err));
		uint64_t first;
		ssize_t n;

		if (!r)
			continue; /* nothing there yet */
		while ((n = seg_reader__read(r, buf, 64, &first)) > 0)
			for (ssize_t i = 0; i < n; i++)
				ck_assert_msg(ring_test_record_ok(&buf[i], first + (uint64_t)i),
					      "record %llu", (unsigned long long)(first + (uint64_t)i));
		seg_reader__close(r);
		ck_assert_msg(wd.n == 0, "%s", wd.last);
		rounds++;
	}
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_gt(rounds, 0);
	ring_test_rmdir(dir);
}
END_TEST

/* Branch-like records compress to a few bytes each. */
START_TEST(test_compresses)
{
	struct vbts_record *recs = calloc(65536, sizeof(*recs));
	struct vbts_record *back;
	char err[128];
	void *frame;
	size_t len;

	ck_assert_ptr_nonnull(recs);
	for (unsigned int i = 0; i < 65536; i++) {
		/* a loop of 5 branches with a counter-dependent exit now and then */
		uint64_t base = 0x401000 + (i % 5) * 0x20;

		recs[i].from = base + 0x10;
		recs[i].to = (i % 97) ? base + 0x20 : 0x402000;
		recs[i].flags = VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
				((uint64_t)VBTS_BR_JCC << VBTS_REC_KIND_SHIFT);
	}
	ck_assert_int_eq(seg_codec__compress(recs, 65536, 1, &frame, &len), 0);
	ck_assert_msg(len < 65536 * 4 / 10, "%zu bytes for 65536 records", len);
	ck_assert_int_eq(seg_codec__decompress(frame, len, 65536, &back, err, sizeof(err)), 0);
	ck_assert_int_eq(memcmp(back, recs, 65536 * sizeof(*recs)), 0);
	free(back);
	free(frame);
	free(recs);
}
END_TEST

/* Extreme values go through the transform unchanged; a hostile transform is refused. */
START_TEST(test_codec_extremes)
{
	struct vbts_record r[6] = {
		{ 0, 0, 0 },
		{ ~0ULL, ~0ULL, ~0ULL },
		{ 1ULL << 63, 0, 1ULL << 63 },
		{ 0x7fffffffffffffffULL, 0x8000000000000000ULL, 1 },
		{ VBTS_ESCAPE, 5, VBTS_ESC_LOST },
		{ 0xffffffff81000000ULL, 0x1000, 0x123456789abcdef0ULL },
	}, back[6];
	uint8_t buf[6 * VBTS_SEG_DV1_MAX_BYTES], bad[11];
	size_t len = seg_codec__encode(r, 6, buf);

	ck_assert_uint_le(len, sizeof(buf));
	ck_assert_int_eq(seg_codec__decode(buf, len, back, 6), 0);
	ck_assert_int_eq(memcmp(back, r, sizeof(r)), 0);
	/* one byte short, one byte over, one record too many */
	ck_assert_int_eq(seg_codec__decode(buf, len - 1, back, 6), -EINVAL);
	ck_assert_int_eq(seg_codec__decode(buf, len, back, 5), -EINVAL);
	/* a varint of 11 bytes, and a 10th byte above 1 */
	memset(bad, 0xff, sizeof(bad));
	ck_assert_int_eq(seg_codec__decode(bad, sizeof(bad), back, 1), -EINVAL);
	memset(bad, 0x80, 9);
	bad[9] = 2;
	ck_assert_int_eq(seg_codec__decode(bad, 10, back, 1), -EINVAL);
	/* an escape whose aux runs past 56 bits; a literal branch from VBTS_ESCAPE */
	{
		static const uint8_t esc[] = { 0, 5, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0x02 };
		static const uint8_t lit[] = { 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					       0xff, 0xff, 0x01, 0, 0 };

		ck_assert_int_eq(seg_codec__decode(esc, sizeof(esc), back, 1), -EINVAL);
		ck_assert_int_eq(seg_codec__decode(lit, sizeof(lit), back, 1), -EINVAL);
	}
}
END_TEST

/* A writer in a child process that appends @n records and is killed (SIGKILL) there. */
static void killed_writer(const char *dir, uint64_t n)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct seg_writer *w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);

		append_seq(w, 0, n);
		raise(SIGKILL);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* The open segment is read while its writer runs, and after it was killed mid-segment. */
START_TEST(test_kill9_mid_segment)
{
	struct warned wd = { 0 };
	char dir[64], path[128];
	struct vbts_seg_header h;
	uint64_t gaps;
	int status;
	pid_t pid;

	ring_test_tmpdir(dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct seg_writer *w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);

		append_seq(w, 0, 3 * U + 42);
		/* and read live by another process while still open */
		raise(SIGKILL);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	snprintf(path, sizeof(path), "%s/vcpu2.open.vseg", dir);
	h = read_header(path);
	ck_assert_uint_eq(h.encoding, VBTS_SEG_ENC_RAW);
	ck_assert_uint_eq(h.index, 3);
	ck_assert_uint_eq(h.committed, 42);
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 3 * U + 42);
	ck_assert_uint_eq(gaps, 0);
	ck_assert_uint_eq(wd.n, 0);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * Stopped between writing the closed segment and starting the open one over: both hold the
 * same records; the open one is skipped without a word.
 */
START_TEST(test_open_superseded)
{
	struct warned wd = { 0 };
	char dir[64], path[128], open_path[128];
	struct vbts_seg_header h;
	struct vbts_record recs[U];
	uint64_t gaps;
	int fd;

	ring_test_tmpdir(dir);
	killed_writer(dir, 2 * U);
	snprintf(open_path, sizeof(open_path), "%s/vcpu2.open.vseg", dir);
	h = read_header(open_path);
	ck_assert_uint_eq(h.index, 1);
	ck_assert_uint_eq(h.committed, U);
	/* segment 1 as the writer would have closed it (raw encoding) */
	fd = open(open_path, O_RDONLY);
	ck_assert_int_eq(pread(fd, recs, sizeof(recs), VBTS_SEG_HEADER_SIZE), (ssize_t)sizeof(recs));
	close(fd);
	h.flags = VBTS_SEG_F_CLOSED;
	h.capacity = U;
	seg_name(path, sizeof(path), dir, 1);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	ck_assert_int_eq(write(fd, recs, sizeof(recs)), (ssize_t)sizeof(recs));
	close(fd);
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 2 * U);
	ck_assert_uint_eq(gaps, 0);
	ck_assert_uint_eq(wd.n, 0);
	ring_test_rmdir(dir);
}
END_TEST

/* A raw segment cut inside a record: the whole records before the cut, one line. */
START_TEST(test_truncated_open_segment)
{
	struct warned wd = { 0 };
	char dir[64], path[128];
	uint64_t gaps;

	ring_test_tmpdir(dir);
	killed_writer(dir, U + 42);
	snprintf(path, sizeof(path), "%s/vcpu2.open.vseg", dir);
	ck_assert_int_eq(truncate(path, VBTS_SEG_HEADER_SIZE + 10 * 24 + 13), 0);
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), U + 10);
	ck_assert_uint_eq(wd.n, 1);
	ck_assert_msg(strstr(wd.last, "10 whole records"), "%s", wd.last);
	ring_test_rmdir(dir);
}
END_TEST

/* Each hostile change to a closed segment: that segment skipped with one line, others read. */
START_TEST(test_hostile_segments)
{
	static const struct {
		unsigned int off;
		unsigned int size;
		uint64_t value;
		const char *says;
	} cases[] = {
		{ 0x00, 8, 0x4141414141414141ULL, "bad magic" },
		{ 0x08, 2, 2, "unsupported segment version" },
		{ 0x0a, 2, 64, "header size" },
		{ 0x0c, 2, 16, "record size" },
		{ 0x0e, 2, 7, "unknown segment encoding" },
		{ 0x10, 4, 9, "vCPU 9" },
		{ 0x14, 4, 0x80, "unknown flags" },
		{ 0x18, 8, 5, "segment 5" },
		{ 0x28, 8, 1ULL << 40, "more than a segment holds" },
		{ 0x28, 8, SEG + 1, "capacity" },
		{ 0x30, 8, ~0ULL, "overflows" },
		{ 0x40, 8, SEG - 2, "capacity" },
		{ 0x48, 8, 12, "payload size" },
		{ 0x48, 8, ~0ULL, "payload size" },
		{ 0x80, 8, 0x0123456789abcdefULL, "" },     /* the zstd frame's magic */
		{ 0x90, 8, 0xdeadbeefdeadbeefULL, "zstd" }, /* its content (checksummed) */
	};

	for (unsigned int c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct warned wd = { 0 };
		char dir[64], path[128];
		struct seg_writer *w;
		uint64_t gaps, v = cases[c].value;
		int fd;

		ring_test_tmpdir(dir);
		w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);
		append_seq(w, 0, 3 * U);
		ck_assert_int_eq(seg_writer__close(w), 0);
		seg_name(path, sizeof(path), dir, 1);
		fd = open(path, O_RDWR);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(pwrite(fd, &v, cases[c].size, cases[c].off),
				 (ssize_t)cases[c].size);
		close(fd);
		ck_assert_uint_eq(read_all(dir, &wd, &gaps), 2 * U);
		ck_assert_uint_eq(gaps, U);
		ck_assert_msg(wd.n == 1, "case %u: %u lines", c, wd.n);
		ck_assert_msg(strstr(wd.last, cases[c].says) && strstr(wd.last, "segment skipped"),
			      "case %u: %s", c, wd.last);
		ring_test_rmdir(dir);
	}
}
END_TEST

/* Files that are no segment at all, short or empty: an error or a skip, never a crash. */
START_TEST(test_garbage_files)
{
	char dir[64], path[128], err[SEG_READER_ERR_MAX], junk[4096];
	struct warned wd = { 0 };
	struct seg_reader *r;
	int fd;

	ring_test_tmpdir(dir);
	r = seg_reader__open(dir, 2, count_warn, &wd, err, sizeof(err));
	ck_assert_ptr_null(r);
	ck_assert_int_eq(errno, ENOENT);
	for (unsigned int i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	seg_name(path, sizeof(path), dir, 0);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_eq(write(fd, junk, 100), 100);
	close(fd);
	seg_name(path, sizeof(path), dir, 1);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	r = seg_reader__open(dir, 2, count_warn, &wd, err, sizeof(err));
	ck_assert_ptr_null(r);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "no readable segment"), "%s", err);
	/* a directory named like a segment is not read */
	ring_test_rmdir(dir);
	ring_test_tmpdir(dir);
	seg_name(path, sizeof(path), dir, 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	r = seg_reader__open(dir, 2, count_warn, &wd, err, sizeof(err));
	ck_assert_ptr_null(r);
	rmdir(path);
	ring_test_rmdir(dir);
}
END_TEST

/* Stored records of a stream with drops: the LOST records say exactly the dropped ones. */
static uint64_t lost_said(const char *dir, uint64_t *records)
{
	char err[SEG_READER_ERR_MAX];
	struct vbts_record buf[64];
	struct seg_reader *r = seg_reader__open(dir, 2, NULL, NULL, err, sizeof(err));
	uint64_t first, lost = 0;
	ssize_t n;

	ck_assert_msg(r, "%s", err);
	*records = 0;
	while ((n = seg_reader__read(r, buf, 64, &first)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i].from == VBTS_ESCAPE &&
			    vbts_record__escape_kind(&buf[i]) == VBTS_ESC_LOST)
				lost += buf[i].to;
		*records += (uint64_t)n;
	}
	seg_reader__close(r);
	return lost;
}

/*
 * The budget holds segment 0 (compressed), the open segment 1 and the spare the collector
 * made, with 64 bytes to spare: from then on only compressed segments fill it, until it is
 * full.
 */
static void fill_budget(struct seg_writer *w, struct seg_budget *b)
{
	append_seq(w, 0, U + 1);
	seg_writer__sync(w);
	b->limit = b->used + 64;
}

/* A consumer takes every closed segment away: returns the records they held. */
static uint64_t take_segments(const char *dir)
{
	uint64_t records = 0;
	char path[128];

	for (unsigned int i = 0; i < 100000; i++) {
		struct vbts_seg_header h;
		int fd;

		seg_name(path, sizeof(path), dir, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
		close(fd);
		records += h.committed;
		ck_assert_int_eq(unlink(path), 0);
	}
	return records;
}

START_TEST(test_budget_drop)
{
	struct seg_budget b = { .limit = 1ULL << 30 };
	struct seg_writer *w;
	uint64_t records, lost, committed, taken;
	char dir[64];

	ring_test_tmpdir(dir);
	w = new_writer(dir, SEG, &b, SEG_ON_FULL_DROP);
	fill_budget(w, &b);
	for (uint64_t i = 0; i < 100 * U; i++) {
		struct vbts_record r = ring_test_record(U + 1 + i);

		seg_writer__append(w, &r, 1);
	}
	seg_writer__sync(w);
	ck_assert_uint_gt(seg_writer__lost(w), 0);
	ck_assert_uint_le(b.used, b.limit);
	/* a consumer takes the closed segments away: the writer finds the space again */
	taken = take_segments(dir);
	seg_writer__sync(w);
	committed = seg_writer__committed(w);
	for (uint64_t i = 0; i < 5000; i++) {
		struct vbts_record r = ring_test_record(0);

		seg_writer__append(w, &r, 1);
	}
	ck_assert_uint_gt(seg_writer__committed(w), committed + U);
	seg_writer__sync(w);
	ck_assert_uint_le(b.used, b.limit);
	lost = seg_writer__lost(w);
	committed = seg_writer__committed(w);
	ck_assert_int_eq(seg_writer__close(w), 0);
	/* every dropped record is in a LOST record, every record kept but those taken is read */
	ck_assert_uint_eq(lost_said(dir, &records), lost);
	ck_assert_uint_eq(records + taken, committed);
	ring_test_rmdir(dir);
}
END_TEST

struct stall_ctx {
	const char *dir;
	unsigned int calls;
	unsigned int free_every; /* take the closed segments away every so many calls (0: never) */
	unsigned int stop_at;    /* give up at this call */
	uint64_t taken;          /* records taken away */
};

static bool stall_stop(void *ctx)
{
	struct stall_ctx *sc = ctx;

	sc->calls++;
	if (sc->free_every && sc->calls % sc->free_every == 0)
		sc->taken += take_segments(sc->dir);
	return sc->stop_at && sc->calls >= sc->stop_at;
}

static struct seg_writer *stall_writer(const char *dir, struct seg_budget *b,
				       struct stall_ctx *sc)
{
	struct seg_writer_config cfg = {
		.dir = dir,
		.vcpu_id = 2,
		.vm_id = 0x1122334455667788ULL,
		.segment_records = SEG,
		.budget = b,
		.on_full = SEG_ON_FULL_STALL,
		.stop = stall_stop,
		.stop_ctx = sc,
		.stall_ns = 1000000,
	};
	struct seg_writer *w = seg_writer__create(&cfg);

	ck_assert_ptr_nonnull(w);
	return w;
}

/* Stall: the append waits until space comes back, and then nothing is lost. */
START_TEST(test_budget_stall)
{
	struct seg_budget b = { .limit = 1ULL << 30 };
	struct stall_ctx sc = { .free_every = 5 };
	struct warned wd = { 0 };
	struct seg_writer *w;
	char dir[64];
	uint64_t gaps;

	ring_test_tmpdir(dir);
	sc.dir = dir;
	w = stall_writer(dir, &b, &sc);
	fill_budget(w, &b);
	append_seq(w, U + 1, 100 * U);
	/* it waited, until the consumer took segments away (and the collector made room) */
	ck_assert_uint_ge(sc.calls, 5);
	ck_assert_uint_eq(seg_writer__lost(w), 0);
	ck_assert_int_eq(seg_writer__close(w), 0);
	/* the consumer took some; the others hold every other record */
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 101 * U + 1 - sc.taken);
	ck_assert_uint_eq(gaps, sc.taken);
	ring_test_rmdir(dir);
}
END_TEST

/* Stall ends when the run ends: the records are then dropped and counted. */
START_TEST(test_budget_stall_stop)
{
	struct seg_budget b = { .limit = 1ULL << 30 };
	struct stall_ctx sc = { .stop_at = 3 };
	struct seg_writer *w;
	uint64_t records, lost, committed;
	char dir[64];

	ring_test_tmpdir(dir);
	sc.dir = dir;
	w = stall_writer(dir, &b, &sc);
	fill_budget(w, &b);
	for (uint64_t i = 0; i < 100 * U; i++) {
		struct vbts_record r = ring_test_record(U + 1 + i);

		seg_writer__append(w, &r, 1);
	}
	ck_assert_uint_ge(sc.calls, 3);
	lost = seg_writer__lost(w);
	committed = seg_writer__committed(w);
	ck_assert_uint_gt(lost, 0);
	seg_writer__close(w);
	ck_assert_uint_eq(lost_said(dir, &records), lost);
	ck_assert_uint_eq(records, committed);
	ring_test_rmdir(dir);
}
END_TEST

/* A real full disk: a 64 KiB tmpfs in a mount namespace of this test's own process. */
static bool small_tmpfs(const char *dir)
{
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=64k") < 0) {
		fprintf(stderr, "test-segments: full-disk test skipped: cannot mount a tmpfs: %s\n",
			strerror(errno));
		return false;
	}
	return true;
}

START_TEST(test_disk_full)
{
	struct seg_budget b = { .limit = 1ULL << 40 }; /* the disk, not the budget, is full */
	struct warned wd = { 0 };
	struct seg_writer *w;
	uint64_t gaps, lost, records, kept;
	char dir[64];

	ring_test_tmpdir(dir);
	if (!small_tmpfs(dir)) {
		rmdir(dir);
		return;
	}
	/* 1000-record segments: the open one takes 24 KiB, closed ones about 20 KiB each */
	{
		struct seg_writer_config cfg = {
			.dir = dir, .vcpu_id = 2, .vm_id = 0x1122334455667788ULL,
			.segment_records = 1000, .budget = &b, .on_full = SEG_ON_FULL_DROP,
		};

		w = seg_writer__create(&cfg);
		ck_assert_ptr_nonnull(w);
	}
	for (uint64_t s = 0; s < 100000; s++) {
		struct vbts_record r = ring_test_record(s);

		seg_writer__append(w, &r, 1);
	}
	lost = seg_writer__lost(w);
	kept = seg_writer__committed(w);
	ck_assert_uint_gt(lost, 0);
	ck_assert_int_eq(seg_writer__close(w) <= 0, 1);
	/* what was kept reads back, and the LOST records say every drop */
	ck_assert_uint_eq(lost_said(dir, &records), lost);
	ck_assert_uint_eq(records, kept);
	(void)wd;
	(void)gaps;
	umount(dir);
	rmdir(dir);
}
END_TEST

/* The wrap ring's batch append equals record-by-record appends, overwrite counts included. */
START_TEST(test_ring_append_n)
{
	struct ring_writer_config cfg = { .capacity = 7, .mode = VBTS_RING_WRAP };
	struct vbts_record recs[40], a, b;
	struct ring_writer *w1, *w2;
	char dir[64], p1[128], p2[128];

	ring_test_tmpdir(dir);
	snprintf(p1, sizeof(p1), "%s/a.ring", dir);
	snprintf(p2, sizeof(p2), "%s/b.ring", dir);
	w1 = ring_writer__create(p1, &cfg);
	w2 = ring_writer__create(p2, &cfg);
	ck_assert_ptr_nonnull(w1);
	ck_assert_ptr_nonnull(w2);
	for (unsigned int i = 0; i < 40; i++)
		recs[i] = ring_test_record(i);
	/* batches of 3, 1, 9 (more than the ring), 0, 27 */
	ck_assert_int_eq(ring_writer__append_n(w1, recs, 3), 0);
	ck_assert_int_eq(ring_writer__append_n(w1, recs + 3, 1), 0);
	ck_assert_int_eq(ring_writer__append_n(w1, recs + 4, 9), 0);
	ck_assert_int_eq(ring_writer__append_n(w1, recs + 13, 0), 0);
	ck_assert_int_eq(ring_writer__append_n(w1, recs + 13, 27), 0);
	for (unsigned int i = 0; i < 40; i++)
		ck_assert_int_eq(ring_writer__append(w2, &recs[i]), 0);
	ck_assert_uint_eq(ring_writer__committed(w1), 40);
	ck_assert_uint_eq(ring_writer__lost(w1), ring_writer__lost(w2));
	ck_assert_uint_eq(ring_writer__lost(w1), 33);
	for (uint64_t s = 33; s < 40; s++) {
		ck_assert_int_eq(ring_writer__read(w1, s, &a), 0);
		ck_assert_int_eq(ring_writer__read(w2, s, &b), 0);
		ck_assert(ring_test_record_ok(&a, s) && ring_test_record_ok(&b, s));
	}
	ring_writer__close(w1);
	ring_writer__close(w2);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * The writer's own readers and writers of its directory beside a hostile user: a FIFO where a
 * closed segment was is not read back (the vCPU's thread never waits on it), FIFOs and a
 * symbolic link under the collector's temporary names neither stop it nor are written
 * through; the run's segments stay readable (alarm: a blocked call fails the test).
 */
START_TEST(test_writer_beside_fifos)
{
	char dir[64], path[128], tmp[160], victim[160];
	struct warned wd = { 0 };
	struct vbts_record rec;
	struct seg_writer *w;
	struct stat st;
	uint64_t gaps;
	int fd;

	ring_test_tmpdir(dir);
	w = new_writer(dir, SEG, NULL, SEG_ON_FULL_STALL);
	append_seq(w, 0, 3 * U);
	seg_writer__sync(w);
	alarm(20);
	seg_name(path, sizeof(path), dir, 1);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(seg_writer__read(w, U + 3, &rec), -ENOENT);
	ck_assert_int_eq(seg_writer__read(w, 3, &rec), 0);
	ck_assert(ring_test_record_ok(&rec, 3));
	/* the next closed segments' temporary names taken: a FIFO, a symbolic link */
	seg_name(path, sizeof(path), dir, 3);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_eq(mkfifo(tmp, 0600), 0);
	seg_name(path, sizeof(path), dir, 4);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(symlink(victim, tmp), 0);
	append_seq(w, 3 * U, 3 * U);
	seg_writer__sync(w);
	ck_assert_int_eq(seg_writer__read(w, 3 * U + 7, &rec), 0);
	ck_assert(ring_test_record_ok(&rec, 3 * U + 7));
	ck_assert_int_eq(seg_writer__read(w, 4 * U + 7, &rec), 0);
	ck_assert(ring_test_record_ok(&rec, 4 * U + 7));
	ck_assert_int_eq(seg_writer__close(w), 0);
	alarm(0);
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	/* every segment but the FIFO's read, that one named */
	seg_name(path, sizeof(path), dir, 1);
	ck_assert_uint_eq(read_all(dir, &wd, &gaps), 5 * U);
	ck_assert_uint_eq(gaps, U);
	ck_assert_msg(strstr(wd.last, "not a regular file (a FIFO)"), "%s", wd.last);
	ck_assert_int_eq(unlink(path), 0);
	ring_test_rmdir(dir);
}
END_TEST

Suite *segments_suite(void)
{
	Suite *s = suite_create("segments");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_compresses);
	tcase_add_test(tc, test_append_does_not_compress);
	tcase_add_test(tc, test_live_reader);
	tcase_add_test(tc, test_codec_extremes);
	tcase_add_test(tc, test_kill9_mid_segment);
	tcase_add_test(tc, test_truncated_open_segment);
	tcase_add_test(tc, test_open_superseded);
	tcase_add_test(tc, test_hostile_segments);
	tcase_add_test(tc, test_garbage_files);
	tcase_add_test(tc, test_budget_drop);
	tcase_add_test(tc, test_budget_stall);
	tcase_add_test(tc, test_budget_stall_stop);
	tcase_add_test(tc, test_disk_full);
	tcase_add_test(tc, test_ring_append_n);
	tcase_add_test(tc, test_writer_beside_fifos);
	suite_add_tcase(s, tc);
	return s;
}
