// SPDX-License-Identifier: GPL-2.0
/*
 * test-ring.c - ring files of a test's trace directory, written with the VMM's ring writer.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>

#include "ring-writer.h"
#include "test-ring.h"

void test__write_ring(const char *dir, uint32_t vcpu, uint64_t capacity,
		      const struct vbts_record *recs, size_t n, unsigned int refused)
{
	struct ring_writer_config cfg = {
		.capacity = capacity, .mode = VBTS_RING_WRAP, .vcpu_id = vcpu, .vm_id = 0xab,
	};
	struct ring_writer *w;
	char path[256];

	snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, vcpu);
	w = ring_writer__create(path, &cfg);
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(ring_writer__append(w, &recs[i]), 0);
	if (refused)
		ring_writer__freeze(w);
	for (unsigned int i = 0; i < refused; i++)
		ck_assert_int_eq(ring_writer__append(w, &recs[0]), -EROFS);
	ck_assert_int_eq(ring_writer__close(w), 0);
}
