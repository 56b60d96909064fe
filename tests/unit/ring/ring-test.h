/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring-test.h - helpers shared by the ring file tests: temporary directories and records
 * whose content is a function of their seq (so a torn or misplaced record is detectable).
 */
#ifndef VBTS_TESTS_RING_TEST_H
#define VBTS_TESTS_RING_TEST_H

#include <check.h>
#include <stdint.h>
#include <vbts/ring-format.h>

Suite *ring_writer_suite(void);
Suite *ring_reader_suite(void);
Suite *segments_suite(void);

/* A record that encodes @seq in all three fields. */
static inline struct vbts_record ring_test_record(uint64_t seq)
{
	struct vbts_record r = {
		.from = 0x100000 + seq,
		.to = seq ^ 0x5555555555555555ULL,
		.flags = (seq * 0x9e3779b97f4a7c15ULL) & ~0xffULL,
	};
	return r;
}

static inline int ring_test_record_ok(const struct vbts_record *r, uint64_t seq)
{
	struct vbts_record want = ring_test_record(seq);

	return r->from == want.from && r->to == want.to && r->flags == want.flags;
}

/**
 * ring_test_tmpdir() - a fresh temporary directory (removed by ring_test_rmdir()).
 * @buf: receives the path, at least 64 bytes
 */
void ring_test_tmpdir(char *buf);

/**
 * ring_test_rmdir() - remove a directory and everything in it.
 * @dir: directory
 */
void ring_test_rmdir(const char *dir);

#endif /* VBTS_TESTS_RING_TEST_H */
