/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-ring.h - ring files of a test's trace directory, written with the VMM's ring writer
 * (vmm/record/ring-writer.c, which a binary using this module links). A write error fails the
 * running test (ck_assert).
 */
#ifndef VBTS_TESTS_TEST_RING_H
#define VBTS_TESTS_TEST_RING_H

#include <stddef.h>
#include <stdint.h>

#include <vbts/ring-format.h>

/**
 * test__write_ring() - write a ring file DIR/vcpuN.ring (wrap mode, vm_id 0xab) with the ring
 * writer.
 * @dir:      trace directory
 * @vcpu:     N
 * @capacity: record slots
 * @recs:     records appended in order
 * @n:        how many
 * @refused:  when > 0, the ring is then frozen and that many more appends must be refused
 */
void test__write_ring(const char *dir, uint32_t vcpu, uint64_t capacity,
		      const struct vbts_record *recs, size_t n, unsigned int refused);

#endif /* VBTS_TESTS_TEST_RING_H */
