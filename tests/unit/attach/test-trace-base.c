// SPDX-License-Identifier: GPL-2.0
/*
 * test-trace-base.c - retention of `vbts attach --trace-base`: run names, the plan of which
 * runs go (oldest first, by count and bytes, the new run's reserve counted), and pruning on
 * disk (whole runs only, nothing that is not a run, no symbolic link followed).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-files.h"
#include "tests.h"
#include "trace-base.h"

START_TEST(test_names)
{
	char buf[TRACE_BASE_NAME_MAX];

	ck_assert(trace_base__is_run("20261202T060102Z-123"));
	ck_assert(trace_base__is_run("20261202T060102Z-123-2"));
	ck_assert(trace_base__is_run("20261202T060102Z-4294967295-4294967295"));
	ck_assert(!trace_base__is_run("20261202T060102Z-"));
	ck_assert(!trace_base__is_run("20261202T060102Z-0123"));
	ck_assert(!trace_base__is_run("20261202T060102Z-12345678901"));
	ck_assert(!trace_base__is_run("20261202T060102Z-1-"));
	ck_assert(!trace_base__is_run("20261202T060102Z-1/x"));
	ck_assert(!trace_base__is_run("20261202X060102Z-1"));
	ck_assert(!trace_base__is_run("2026120zT060102Z-1"));
	ck_assert(!trace_base__is_run("etc"));
	ck_assert(!trace_base__is_run(".."));
	ck_assert(!trace_base__is_run(""));

	ck_assert_int_eq(trace_base__run_name(0, 42, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "19700101T000000Z-42");
	ck_assert_int_eq(trace_base__run_name(1764655262, 7, 3, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "20251202T060102Z-7-3");
	ck_assert(trace_base__is_run(buf));
	ck_assert_int_eq(trace_base__run_name(0, 42, 0, buf, 10), -EINVAL);
}
END_TEST

START_TEST(test_plan)
{
	const uint64_t b[] = { 100, 200, 300, 400 };
	struct trace_base_limits l = { 0 };
	const uint64_t huge[] = { UINT64_MAX, UINT64_MAX, 5 };

	/* no limit: everything stays */
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 0);
	/* count: 4 old + the new one, at most 3 kept: the 2 oldest go */
	l.keep_runs = 3;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 2);
	l.keep_runs = 1;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 4);
	l.keep_runs = 5;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 0);
	/* bytes: 1000 in all; at most 700 kept: 100 and 200 go */
	l = (struct trace_base_limits){ .keep_bytes = 700 };
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 2);
	/* exactly at the limit stays */
	l.keep_bytes = 1000;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 0);
	/* the new run's budget counts: 1000 + 150 > 1000 */
	l.reserve = 150;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 2);
	/* a reserve beyond the limit empties the base, and no more */
	l.reserve = 5000;
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 4);
	/* both: whichever asks for more */
	l = (struct trace_base_limits){ .keep_runs = 4, .keep_bytes = 450 };
	ck_assert_uint_eq(trace_base__plan(b, 4, &l), 3);
	/* sums beyond 64 bits do not wrap to "fits" */
	l = (struct trace_base_limits){ .keep_bytes = 10 };
	ck_assert_uint_eq(trace_base__plan(huge, 3, &l), 2);
	ck_assert_uint_eq(trace_base__plan(NULL, 0, &l), 0);
}
END_TEST

static void write_bytes(const char *path, size_t n)
{
	char *buf = calloc(1, n ? n : 1);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(f);
	memset(buf, 'x', n);
	ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
}

static void make_run(const char *base, const char *name, size_t bytes)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", base, name);
	ck_assert_int_eq(mkdir(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/%s/vcpu0.00000000.vseg", base, name);
	write_bytes(p, bytes);
	snprintf(p, sizeof(p), "%s/%s/crash.json", base, name);
	write_bytes(p, 10);
	snprintf(p, sizeof(p), "%s/%s/debuginfod", base, name);
	ck_assert_int_eq(mkdir(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/%s/debuginfod/f", base, name);
	write_bytes(p, 10);
}

static bool exists(const char *base, const char *name)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", base, name);
	return lstat(p, &st) == 0;
}

START_TEST(test_prune)
{
	char dir[] = "/tmp/check-trace-base-XXXXXX", base[128], outside[128], p[512];
	char err[256], run[512];
	struct trace_base_limits l = { .keep_runs = 3 };
	size_t removed;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/base/dom", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	/* a missing base is created, with its parent */
	ck_assert_int_eq(trace_base__prune(base, &l, &removed, err, sizeof(err)), 0);
	ck_assert_uint_eq(removed, 0);
	ck_assert(exists(base, "."));

	ck_assert_int_eq(mkdir(outside, 0750), 0);
	snprintf(p, sizeof(p), "%s/keep", outside);
	write_bytes(p, 10);
	/* listed out of order: names, not readdir's order, say which is oldest */
	make_run(base, "20261202T060300Z-9", 64 << 10);
	make_run(base, "20261202T060100Z-7", 64 << 10);
	make_run(base, "20261202T060200Z-8", 64 << 10);
	make_run(base, "20261202T060100Z-7-1", 64 << 10);
	/* not runs: never counted nor removed */
	snprintf(p, sizeof(p), "%s/notes", base);
	ck_assert_int_eq(mkdir(p, 0750), 0);
	snprintf(p, sizeof(p), "%s/19990101T000000Z-1", base);
	write_bytes(p, 10); /* a file with a run's name */
	/* a link inside a run is removed, not followed */
	snprintf(p, sizeof(p), "%s/20261202T060100Z-7/link", base);
	ck_assert_int_eq(symlink(outside, p), 0);

	ck_assert_int_eq(trace_base__prune(base, &l, &removed, err, sizeof(err)), 0);
	ck_assert_uint_eq(removed, 2);
	ck_assert(!exists(base, "20261202T060100Z-7"));
	ck_assert(!exists(base, "20261202T060100Z-7-1"));
	ck_assert(exists(base, "20261202T060200Z-8"));
	ck_assert(exists(base, "20261202T060300Z-9"));
	ck_assert(exists(base, "notes"));
	ck_assert(exists(base, "19990101T000000Z-1"));
	ck_assert(exists(outside, "keep"));

	/* bytes: two runs of 64 KiB and more; 100 KiB keeps one */
	l = (struct trace_base_limits){ .keep_bytes = 100 << 10 };
	ck_assert_int_eq(trace_base__prune(base, &l, &removed, err, sizeof(err)), 0);
	ck_assert_uint_eq(removed, 1);
	ck_assert(!exists(base, "20261202T060200Z-8"));
	ck_assert(exists(base, "20261202T060300Z-9"));
	/* with a reserve of the new run's budget, it goes too */
	l.reserve = 90 << 10;
	ck_assert_int_eq(trace_base__prune(base, &l, &removed, err, sizeof(err)), 0);
	ck_assert_uint_eq(removed, 1);
	ck_assert(!exists(base, "20261202T060300Z-9"));

	/* a fresh run: empty, named as a run */
	ck_assert_int_eq(trace_base__new_run(base, run, sizeof(run), err, sizeof(err)), 0);
	ck_assert(trace_base__is_run(strrchr(run, '/') + 1));
	ck_assert_int_eq(rmdir(run), 0);

	/* a base that is a file is refused with its name */
	snprintf(p, sizeof(p), "%s/file", dir);
	write_bytes(p, 1);
	ck_assert_int_lt(trace_base__prune(p, &l, &removed, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "file"));
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

Suite *trace_base_suite(void)
{
	Suite *s = suite_create("trace-base");
	TCase *tc = tcase_create("retention");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_plan);
	tcase_add_test(tc, test_prune);
	suite_add_tcase(s, tc);
	return s;
}
