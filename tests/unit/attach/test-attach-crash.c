// SPDX-License-Identifier: GPL-2.0
/*
 * test-attach-crash.c - the crash report of `vbts attach` (attach/attach-crash.c): the vCPU
 * that recorded last is the one reported on; its report, read back by the one reader
 * (format/crash-file.c), has reason panic, no registers and why, and the frozen ring's last
 * branches in order, from a ring file and from a stream's segments; crash-N.json numbered.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "attach-crash.h"
#include "crash-file.h"
#include "crash-report.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "test-files.h"
#include "tests.h"

START_TEST(test_pick)
{
	struct attach_crash_vcpu v[4] = {
		{ .last_copy_ns = 100, .last_escape_ns = 50 },
		{ .last_copy_ns = 300, .last_escape_ns = 10 },
		{ .last_copy_ns = 300, .last_escape_ns = 20 },
		{ .last_copy_ns = 200, .last_escape_ns = 90 },
	};

	/* the newest copy; of two, the newest escape */
	ck_assert_uint_eq(attach_crash__pick_vcpu(v, 4), 2);
	ck_assert_uint_eq(attach_crash__pick_vcpu(v, 2), 1);
	ck_assert_uint_eq(attach_crash__pick_vcpu(v, 1), 0);
	/* nothing copied anywhere: the first vCPU */
	memset(v, 0, sizeof(v));
	ck_assert_uint_eq(attach_crash__pick_vcpu(v, 4), 0);
	/* the newest copy wins over a newer escape */
	v[3].last_copy_ns = 1;
	v[0].last_escape_ns = 1000;
	ck_assert_uint_eq(attach_crash__pick_vcpu(v, 4), 3);
}
END_TEST

/* Branches from 0x1000 + i to 0x2000 + i, a task arrival and a freeze, as a frozen ring. */
static void fill(struct ring_writer *w, unsigned int n, uint64_t base)
{
	struct vbts_record r = vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, 0x204000, 1);

	ck_assert_int_eq(ring_writer__append(w, &r), 0);
	for (unsigned int i = 0; i < n; i++) {
		r = (struct vbts_record){ .from = base + 0x1000 + i, .to = base + 0x2000 + i,
					  .flags = i };
		ck_assert_int_eq(ring_writer__append(w, &r), 0);
	}
	ck_assert_int_eq(ring_writer__escape(w, VBTS_ESC_FREEZE, 5, VBTS_FREEZE_PANIC), 0);
	ring_writer__freeze(w);
}

/* The report at @dir/@name: panic on @vcpu, no registers, the last @n of @total branches. */
static void check_report(const char *dir, const char *name, unsigned int vcpu, uint64_t base,
			 unsigned int n, unsigned int total)
{
	struct crash_file cf;
	char path[512], err[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_msg(!crash_file__read(&cf, path, err, sizeof(err)), "%s", err);
	ck_assert_str_eq(cf.reason, "panic");
	ck_assert_uint_eq(cf.vcpu, vcpu);
	ck_assert(!cf.have_regs);
	ck_assert_ptr_nonnull(cf.regs_note);
	ck_assert_str_eq(cf.regs_note, ATTACH_CRASH_REGS_NOTE);
	ck_assert(cf.have_cr3);
	ck_assert_uint_eq(cf.cr3, 0x204000);
	ck_assert(!cf.have_process);
	ck_assert_uint_eq(cf.nr_branches, n);
	for (unsigned int i = 0; i < n; i++) {
		ck_assert_uint_eq(cf.branches[i].from, base + 0x1000 + total - n + i);
		ck_assert_uint_eq(cf.branches[i].to, base + 0x2000 + total - n + i);
		ck_assert_uint_eq(cf.branches[i].flags, total - n + i);
	}
	crash_file__release(&cf);
}

START_TEST(test_write_ring)
{
	struct ring_writer_config cfg = { .capacity = 64, .mode = VBTS_RING_WRAP };
	struct attach_crash_vcpu v[2] = { { .cr3 = ~0ULL }, { .cr3 = 0x204000 } };
	char dir[256], path[300];
	unsigned int vcpu = 99;

	test__make_temp_dir(dir, sizeof(dir), "vbts-attach-crash");
	for (unsigned int i = 0; i < 2; i++) {
		cfg.vcpu_id = i;
		snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, i);
		v[i].ring = ring_writer__create(path, &cfg);
		ck_assert_ptr_nonnull(v[i].ring);
		fill(v[i].ring, 10 + 40 * i, i << 16);
	}
	/* vCPU 1 recorded last: its last 32 of 50 branches, ring 64 records */
	v[0].last_copy_ns = 10;
	v[1].last_copy_ns = 20;
	ck_assert_int_eq(attach_crash__write(dir, 0, v, 2, NULL, 123, 32, &vcpu), 0);
	ck_assert_uint_eq(vcpu, 1);
	check_report(dir, "crash.json", 1, 1 << 16, 32, 50);
	/* A later report is crash-1.json; vCPU 0's 10 branches, all there are */
	v[0].last_copy_ns = 30;
	v[0].cr3 = 0x204000;
	ck_assert_int_eq(attach_crash__write(dir, 1, v, 2, NULL, 124, 32, &vcpu), 0);
	ck_assert_uint_eq(vcpu, 0);
	check_report(dir, "crash-1.json", 0, 0, 10, 10);
	for (unsigned int i = 0; i < 2; i++)
		ck_assert_int_eq(ring_writer__close(v[i].ring), 0);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

/* Stream mode: the branches come from the segments the trace keeps, closed ones too. */
START_TEST(test_write_stream)
{
	struct seg_budget budget = { .limit = 1ULL << 30 };
	struct seg_writer_config sc = {
		.segment_records = 8, .budget = &budget, .on_full = SEG_ON_FULL_STALL,
	};
	struct attach_crash_vcpu v = { .cr3 = 0x204000 };
	unsigned int vcpu = 99;
	char dir[256];

	test__make_temp_dir(dir, sizeof(dir), "vbts-attach-crash-seg");
	sc.dir = dir;
	v.ring = ring_writer__create_stream(&sc);
	ck_assert_ptr_nonnull(v.ring);
	fill(v.ring, 100, 0);
	seg_writer__sync(ring_writer__stream(v.ring));
	ck_assert_int_eq(attach_crash__write(dir, 0, &v, 1, NULL, 1, 40, &vcpu), 0);
	ck_assert_uint_eq(vcpu, 0);
	check_report(dir, "crash.json", 0, 0, 40, 100);
	ck_assert_int_eq(ring_writer__close(v.ring), 0);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

Suite *attach_crash_suite(void)
{
	Suite *s = suite_create("attach-crash");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_pick);
	tcase_add_test(tc, test_write_ring);
	tcase_add_test(tc, test_write_stream);
	suite_add_tcase(s, tc);
	return s;
}
