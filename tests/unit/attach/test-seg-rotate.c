// SPDX-License-Identifier: GPL-2.0
/*
 * test-seg-rotate.c - `vbts attach --on-full rotate`: which segment files may go (closed
 * ones, oldest first across vCPUs, never the newest SEG_ROTATE_KEEP of a vCPU) and removal on
 * disk (nothing but closed segments: not the open one, temporary files or other files).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "seg-rotate.h"
#include "test-files.h"
#include "tests.h"

START_TEST(test_names)
{
	unsigned int v;
	uint64_t i;

	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.00000000.vseg", &v, &i), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_uint_eq(i, 0);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu12.00000345.vseg", &v, &i), 0);
	ck_assert_uint_eq(v, 12);
	ck_assert_uint_eq(i, 345);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.open.vseg", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.00000001.vseg.tmp", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.spare1.vseg.tmp", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.0000001.vseg", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu01.00000001.vseg", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu.00000001.vseg", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu123456.00000001.vseg", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("crash.json", &v, &i), -EINVAL);
	ck_assert_int_eq(seg_rotate__parse_name("vcpu0.ring", &v, &i), -EINVAL);
}
END_TEST

START_TEST(test_plan)
{
	/* vCPU 0: 6 segments (2 may go), vCPU 1: 5 segments (1 may go) */
	struct seg_file f[11];
	size_t n = 0;
	uint64_t freed;

	for (unsigned int i = 0; i < 6; i++)
		f[n++] = (struct seg_file){ .vcpu = 0, .index = i, .mtime = 10 + i * 10,
					    .bytes = 100 };
	for (unsigned int i = 0; i < 5; i++)
		f[n++] = (struct seg_file){ .vcpu = 1, .index = i, .mtime = 5 + i * 10,
					    .bytes = 100 };
	/* the oldest: vCPU 1's segment 0 (time 5) */
	freed = seg_rotate__plan(f, n, 1);
	ck_assert_uint_eq(freed, 100);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(f[i].drop, f[i].vcpu == 1 && f[i].index == 0);
	/* all that may go: 3, never a vCPU's newest 4 */
	freed = seg_rotate__plan(f, n, 1000000);
	ck_assert_uint_eq(freed, 300);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(f[i].drop, f[i].vcpu == 0 ? f[i].index < 2 : f[i].index < 1);
	/* nothing wanted, nothing marked */
	ck_assert_uint_eq(seg_rotate__plan(f, n, 0), 0);
	ck_assert_uint_eq(seg_rotate__plan(f, SEG_ROTATE_KEEP, 1000), 0);
}
END_TEST

static void file_at(const char *dir, const char *name, size_t bytes, time_t when)
{
	char p[512], buf[4096];
	struct timeval tv[2] = { { when, 0 }, { when, 0 } };
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	memset(buf, 'x', sizeof(buf));
	for (size_t k = 0; k < bytes; k += sizeof(buf))
		ck_assert_uint_eq(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(utimes(p, tv), 0);
}

static bool here(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

START_TEST(test_run)
{
	char dir[] = "/tmp/check-seg-rotate-XXXXXX", name[64];
	size_t removed;
	int64_t freed;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (unsigned int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "vcpu0.%08u.vseg", i);
		file_at(dir, name, 8192, 1000 + i);
	}
	file_at(dir, "vcpu0.open.vseg", 8192, 900);
	file_at(dir, "vcpu0.00000007.vseg.tmp", 8192, 900);
	file_at(dir, "vcpu0.spare1.vseg.tmp", 8192, 900);
	file_at(dir, "crash.json", 8192, 900);
	file_at(dir, "vm.json", 8192, 900);
	/* two segments' worth: 0 and 1 go */
	freed = seg_rotate__run(dir, 16384, &removed);
	ck_assert_int_ge(freed, 16384);
	ck_assert_uint_eq(removed, 2);
	ck_assert(!here(dir, "vcpu0.00000000.vseg"));
	ck_assert(!here(dir, "vcpu0.00000001.vseg"));
	ck_assert(here(dir, "vcpu0.00000002.vseg"));
	/* everything else may go but the newest 4 */
	freed = seg_rotate__run(dir, UINT64_MAX, &removed);
	ck_assert_uint_eq(removed, 1);
	ck_assert(!here(dir, "vcpu0.00000002.vseg"));
	for (unsigned int i = 3; i < 7; i++) {
		snprintf(name, sizeof(name), "vcpu0.%08u.vseg", i);
		ck_assert(here(dir, name));
	}
	ck_assert(here(dir, "vcpu0.open.vseg"));
	ck_assert(here(dir, "vcpu0.00000007.vseg.tmp"));
	ck_assert(here(dir, "vcpu0.spare1.vseg.tmp"));
	ck_assert(here(dir, "crash.json"));
	ck_assert(here(dir, "vm.json"));
	ck_assert_int_eq(seg_rotate__run(dir, UINT64_MAX, &removed), 0);
	ck_assert_uint_eq(removed, 0);
	ck_assert_int_eq(test__remove_tree(dir), 0);
	ck_assert_int_eq(seg_rotate__run(dir, 1, &removed), -ENOENT);
}
END_TEST

Suite *seg_rotate_suite(void)
{
	Suite *s = suite_create("seg-rotate");
	TCase *tc = tcase_create("rotation");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_plan);
	tcase_add_test(tc, test_run);
	suite_add_tcase(s, tc);
	return s;
}
