// SPDX-License-Identifier: GPL-2.0
/*
 * test-ring-reader.c - the reader on boundary cases (capacity 1, committed == capacity,
 * capacity + 1, huge committed), chunked reads of exactly N records, and every header field
 * corrupted or the file truncated: a specific error naming the file and offset, never a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-reader.h"
#include "ring-test.h"

/* Writes a ring file by hand: header fields as given, the window's slots filled. */
static void make_ring_file(const char *path, uint64_t capacity, uint64_t committed,
			   uint64_t lost, uint32_t flags)
{
	struct vbts_ring_header h;
	uint64_t first = committed > capacity ? committed - capacity : 0;
	int fd;

	memset(&h, 0, sizeof(h));
	h.magic = VBTS_RING_MAGIC;
	h.version = VBTS_RING_VERSION;
	h.header_size = VBTS_RING_HEADER_SIZE;
	h.record_size = sizeof(struct vbts_record);
	h.mode = VBTS_RING_WRAP;
	h.vcpu_id = 0;
	h.capacity = capacity;
	h.committed = committed;
	h.lost = lost;
	h.flags = flags;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	ck_assert_int_eq(ftruncate(fd, (off_t)(sizeof(h) + capacity * sizeof(struct vbts_record))),
			 0);
	for (uint64_t s = first; s < committed; s++) {
		struct vbts_record rec = ring_test_record(s);
		off_t off = (off_t)(sizeof(h) + (s % capacity) * sizeof(rec));

		ck_assert_int_eq(pwrite(fd, &rec, sizeof(rec), off), sizeof(rec));
	}
	close(fd);
}

static void patch(const char *path, off_t off, const void *bytes, size_t len)
{
	int fd = open(path, O_RDWR);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

/* Reads everything with chunks of @chunk; checks seq order and content; returns the count. */
static uint64_t read_checked(struct ring_reader *r, size_t chunk, uint64_t want_first)
{
	struct vbts_record *buf = calloc(chunk + 1, sizeof(*buf));
	uint64_t first, next = want_first, total = 0;
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	/* A sentinel after the chunk: the reader must never write past @chunk records. */
	buf[chunk].from = 0xdeadbeef;
	while ((n = ring_reader__read(r, buf, chunk, &first)) > 0) {
		ck_assert_uint_le((size_t)n, chunk);
		ck_assert_uint_eq(first, next);
		for (ssize_t i = 0; i < n; i++)
			ck_assert(ring_test_record_ok(&buf[i], first + (uint64_t)i));
		next = first + (uint64_t)n;
		total += (uint64_t)n;
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(buf[chunk].from, 0xdeadbeef);
	free(buf);
	return total;
}

#define CLOSED VBTS_RING_F_CLOSED
#define FROZEN VBTS_RING_F_FROZEN

/*
 * A closed or frozen ring yields its whole window; a ring whose writer may still be storing
 * (no flag: live, or killed) does not trust the slot of the next record once it is full.
 */
static const struct {
	uint64_t capacity, committed, lost;
	uint32_t flags;
	uint64_t want_first, want_n;
} boundary_cases[] = {
	{ 1, 0, 0, CLOSED, 0, 0 },
	{ 1, 1, 0, CLOSED, 0, 1 },
	{ 1, 2, 1, CLOSED, 1, 1 },
	{ 1, 5, 4, FROZEN, 4, 1 },
	{ 1, 1, 0, 0, 1, 0 },
	{ 1, 5, 4, 0, 5, 0 },
	{ 8, 0, 0, CLOSED, 0, 0 },
	{ 8, 7, 0, CLOSED, 0, 7 },
	{ 8, 7, 0, 0, 0, 7 },
	{ 8, 8, 0, CLOSED, 0, 8 },              /* committed == capacity */
	{ 8, 8, 0, 0, 1, 7 },
	{ 8, 9, 1, CLOSED, 1, 8 },              /* committed == capacity + 1 */
	{ 8, 9, 1, 0, 2, 7 },
	{ 8, 17, 9, CLOSED | FROZEN, 9, 8 },
	{ 8, 1ULL << 63, (1ULL << 63) - 8, CLOSED, (1ULL << 63) - 8, 8 }, /* huge committed */
	{ 8, UINT64_MAX, UINT64_MAX - 8, CLOSED, UINT64_MAX - 8, 8 },
	{ 8, UINT64_MAX, UINT64_MAX - 8, 0, UINT64_MAX - 7, 7 },
	{ 3, 1000, 997 + 50, FROZEN, 997, 3 },  /* lost > overwritten: refused appends */
};

START_TEST(test_boundaries)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	static const size_t chunks[] = { 1, 2, 3, 7, 8, 9, 100 };
	struct ring_reader *r;

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	make_ring_file(path, boundary_cases[_i].capacity, boundary_cases[_i].committed,
		       boundary_cases[_i].lost, boundary_cases[_i].flags);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "case %d: %s", _i, err);
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		ck_assert_int_eq(ring_reader__begin(r), 0);
		ck_assert_uint_eq(read_checked(r, chunks[c], boundary_cases[_i].want_first),
				  boundary_cases[_i].want_n);
	}
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

#define OFF(field) offsetof(struct vbts_ring_header, field)

/* One corruption of a valid 8-slot, 5-record file, and the error it must produce. */
static const struct {
	const char *what;
	off_t off;
	uint64_t value;
	size_t len;
	const char *want;
} corruptions[] = {
	{ "magic", OFF(magic), 0x4141414141414141ULL, 8,
	  "offset 0x0: bad magic 0x4141414141414141, not a vbts ring file" },
	{ "version", OFF(version), 2, 2, "offset 0x8: unsupported ring version 2" },
	{ "version 0", OFF(version), 0, 2, "offset 0x8: unsupported ring version 0" },
	{ "header_size", OFF(header_size), 64, 2, "offset 0xa: header size 64, expected 4096" },
	{ "record_size", OFF(record_size), 16, 2, "offset 0xc: record size 16, expected 24" },
	{ "mode", OFF(mode), 7, 2, "offset 0xe: unknown ring mode 7" },
	{ "flags", OFF(flags), 0x80, 4, "offset 0x14: unknown flags 0x80" },
	{ "capacity 0", OFF(capacity), 0, 8, "offset 0x18: capacity 0, must be at least 1" },
	{ "capacity big", OFF(capacity), 1000000, 8,
	  "offset 0x18: capacity 1000000 does not fit a file of 4288 bytes" },
	{ "capacity overflow", OFF(capacity), UINT64_MAX / 4, 8,
	  "offset 0x18: capacity 4611686018427387903 does not fit a file of 4288 bytes" },
	{ "capacity small", OFF(capacity), 4, 8,
	  "offset 0x1060: 96 bytes after the last of 4 record slots" },
	{ "lost", OFF(committed), 100, 8,
	  "offset 0x30: lost 0 is less than the 92 records that committed 100 implies were "
	  "overwritten" },
};

START_TEST(test_corrupted_header)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX], want[512];

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	make_ring_file(path, 8, 5, 0, CLOSED);
	patch(path, corruptions[_i].off, &corruptions[_i].value, corruptions[_i].len);
	errno = 0;
	ck_assert_ptr_null(ring_reader__open(path, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	snprintf(want, sizeof(want), "%s: %s", path, corruptions[_i].want);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s:\n got  '%s'\n want '%s'",
		      corruptions[_i].what, err, want);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_truncated)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX], want[512];
	static const off_t sizes[] = { 0, 1, 8, 100, 4095, 4096, 4096 + 24 * 8 - 1 };
	static const char *const wants[] = {
		"offset 0x0: file of 0 bytes ends inside the 4096-byte ring header",
		"offset 0x1: file of 1 bytes ends inside the 4096-byte ring header",
		"offset 0x8: file of 8 bytes ends inside the 4096-byte ring header",
		"offset 0x64: file of 100 bytes ends inside the 4096-byte ring header",
		"offset 0xfff: file of 4095 bytes ends inside the 4096-byte ring header",
		"offset 0x18: capacity 8 does not fit a file of 4096 bytes",
		"offset 0x18: capacity 8 does not fit a file of 4287 bytes",
	};
	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	make_ring_file(path, 8, 5, 0, CLOSED);
	ck_assert_int_eq(truncate(path, sizes[_i]), 0);
	ck_assert_ptr_null(ring_reader__open(path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: %s", path, wants[_i]);
	ck_assert_msg(!strcmp(err, want), "got '%s' want '%s'", err, want);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_not_a_file)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX], want[512];

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/missing.ring", dir);
	ck_assert_ptr_null(ring_reader__open(path, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	ck_assert_str_eq(err, want);
	ck_assert_ptr_null(ring_reader__open(dir, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ring_test_rmdir(dir);
}
END_TEST

/* Random garbage of every size around the header: errors, never a crash. */
START_TEST(test_garbage)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	unsigned int seed = 12345;

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	for (int round = 0; round < 200; round++) {
		size_t len = 4096 + (size_t)(rand_r(&seed) % 512);
		unsigned char *b = malloc(len);
		struct ring_reader *r;
		FILE *f;

		ck_assert_ptr_nonnull(b);
		for (size_t i = 0; i < len; i++)
			b[i] = (unsigned char)rand_r(&seed);
		if (round % 2) {
			/* Keep the magic so the later checks are reached. */
			uint64_t m = VBTS_RING_MAGIC;

			memcpy(b, &m, 8);
			b[8] = 1, b[9] = 0;
		}
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(b, 1, len, f), len);
		fclose(f);
		free(b);
		r = ring_reader__open(path, err, sizeof(err));
		ck_assert_ptr_null(r);
		ck_assert(!strncmp(err, path, strlen(path)));
		ck_assert(strstr(err, ": offset 0x"));
	}
	ring_test_rmdir(dir);
}
END_TEST

Suite *ring_reader_suite(void)
{
	Suite *s = suite_create("ring-reader");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_boundaries, 0,
			    (int)(sizeof(boundary_cases) / sizeof(boundary_cases[0])));
	tcase_add_loop_test(tc, test_corrupted_header, 0,
			    (int)(sizeof(corruptions) / sizeof(corruptions[0])));
	tcase_add_loop_test(tc, test_truncated, 0, 7);
	tcase_add_test(tc, test_not_a_file);
	tcase_add_test(tc, test_garbage);
	suite_add_tcase(s, tc);
	return s;
}
