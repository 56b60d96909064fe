// SPDX-License-Identifier: GPL-2.0
/*
 * test-trace.c - the trace directory: refusal cases, the memory budget, vm.json, ring files,
 * and removal of everything created when a run is aborted.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ring-writer.h"
#include "test-files.h"
#include "tests.h"
#include "trace.h"

static char base[PATH_MAX];

static void make_base(void)
{
	test__make_temp_dir(base, sizeof(base), "check-vmm-trace");
}

static void remove_tree(const char *dir)
{
	ck_assert_int_eq(test__remove_tree(dir), 0);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static struct trace_config config(const char *dir)
{
	struct trace_config c = {
		.dir = dir,
		.image = "guest.elf",
		.build_id = "abcdef",
		.vcpus = 2,
		.memory_mib = 64,
		.backend = "step",
		.cpl = VBTS_CPL_USER,
		.collector = { .mode = TRACE_MODE_WRAP, .ring_records = 16 },
	};
	return c;
}

START_TEST(test_new_dir)
{
	char dir[PATH_MAX + 8], path[PATH_MAX + 32], err[256] = "";
	struct trace_config c;
	struct trace *t;
	json_t *vm;

	make_base();
	snprintf(dir, sizeof(dir), "%s/t", base);
	c = config(dir);
	t = trace__create(&c, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_int_eq(count_entries(dir), 4); /* vm.json, vcpu0.ring, vcpu1.ring, events */
	ck_assert_ptr_nonnull(trace__ring(t, 1));
	ck_assert_ptr_null(trace__ring(t, 2));
	ck_assert_int_eq(ring_writer__escape(trace__ring(t, 0), VBTS_ESC_STOP, 1, 0), 0);
	ck_assert_int_eq(trace__close(t), 0);

	snprintf(path, sizeof(path), "%s/vm.json", dir);
	vm = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(vm);
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "version")), 1);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(vm, "vm_id"))), 16);
	ck_assert_str_eq(json_string_value(json_object_get(vm, "image")), "guest.elf");
	ck_assert_str_eq(json_string_value(json_object_get(vm, "build_id")), "abcdef");
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "vcpus")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "memory_mib")), 64);
	ck_assert_str_eq(json_string_value(json_object_get(vm, "backend")), "step");
	ck_assert_str_eq(json_string_value(json_object_get(vm, "cpl")), "user");
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "ring_records")), 16);
	ck_assert_int_gt(json_integer_value(json_object_get(vm, "start_time_ns")), 0);
	json_decref(vm);
	remove_tree(base);
}
END_TEST

START_TEST(test_empty_dir_accepted_and_abort)
{
	char err[256] = "";
	struct trace_config c;
	struct trace *t;

	make_base();
	c = config(base);
	t = trace__create(&c, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	ck_assert_int_eq(count_entries(base), 4);
	trace__abort(t);
	/* Everything made is gone; the directory the user made stays. */
	ck_assert_int_eq(count_entries(base), 0);
	remove_tree(base);
}
END_TEST

START_TEST(test_abort_removes_new_dir)
{
	char dir[PATH_MAX + 8], err[256] = "";
	struct trace_config c;
	struct trace *t;

	make_base();
	snprintf(dir, sizeof(dir), "%s/new", base);
	c = config(dir);
	t = trace__create(&c, err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	trace__abort(t);
	ck_assert_int_eq(access(dir, F_OK), -1);
	remove_tree(base);
}
END_TEST

START_TEST(test_refuse_non_empty)
{
	char file[PATH_MAX + 16], err[256] = "";
	struct trace_config c;
	FILE *f;

	make_base();
	snprintf(file, sizeof(file), "%s/keep.txt", base);
	f = fopen(file, "w");
	fputs("precious\n", f);
	fclose(f);
	c = config(base);
	errno = 0;
	ck_assert_ptr_null(trace__create(&c, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOTEMPTY);
	ck_assert_ptr_nonnull(strstr(err, "exists and is not empty"));
	ck_assert_ptr_nonnull(strstr(err, base));
	ck_assert_int_eq(count_entries(base), 1); /* untouched */

	/* A regular file where the directory should be: not a directory, not "not empty". */
	c = config(file);
	errno = 0;
	ck_assert_ptr_null(trace__create(&c, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, "is not a directory"));
	ck_assert_ptr_null(strstr(err, "not empty"));
	ck_assert_int_eq(count_entries(base), 1);
	remove_tree(base);
}
END_TEST

START_TEST(test_refuse_uncreatable)
{
	char dir[PATH_MAX + 16], err[256] = "";
	struct trace_config c;

	make_base();
	snprintf(dir, sizeof(dir), "%s/no/such/parent", base);
	c = config(dir);
	ck_assert_ptr_null(trace__create(&c, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot create trace directory"));
	ck_assert_int_eq(count_entries(base), 0);
	remove_tree(base);
}
END_TEST

/* trace__check_dir(): what trace__create() would refuse, found without creating anything. */
START_TEST(test_check_dir)
{
	char path[PATH_MAX + 32], err[256] = "";
	FILE *f;

	make_base();
	ck_assert_int_eq(trace__check_dir(base, err, sizeof(err)), 0); /* empty */
	snprintf(path, sizeof(path), "%s/new", base);
	ck_assert_int_eq(trace__check_dir(path, err, sizeof(err)), 0); /* to be made */
	ck_assert_int_eq(access(path, F_OK), -1);
	/* a bare name, made in the working directory */
	{
		char cwd[PATH_MAX];

		ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
		ck_assert_int_eq(chdir(base), 0);
		ck_assert_msg(trace__check_dir("bare", err, sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(chdir(cwd), 0);
	}
	snprintf(path, sizeof(path), "%s/no/such/parent", base);
	ck_assert_int_eq(trace__check_dir(path, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "cannot create trace directory"));
	snprintf(path, sizeof(path), "%s/file", base);
	f = fopen(path, "w");
	fputs("x\n", f);
	fclose(f);
	ck_assert_int_eq(trace__check_dir(path, err, sizeof(err)), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(err, "is not a directory"));
	snprintf(path, sizeof(path), "%s/file/sub", base);
	ck_assert_int_eq(trace__check_dir(path, err, sizeof(err)), -ENOTDIR);
	ck_assert_int_eq(trace__check_dir(base, err, sizeof(err)), -ENOTEMPTY);
	ck_assert_ptr_nonnull(strstr(err, "exists and is not empty"));
	ck_assert_int_eq(count_entries(base), 1);
	remove_tree(base);
}
END_TEST

/* Stream mode's limits: each refusal names the limit. */
START_TEST(test_stream_limits)
{
	struct trace_collector_config c;
	char err[256] = "";
	struct statvfs sv;
	uint64_t free_bytes;

	make_base();
	ck_assert_int_eq(statvfs(base, &sv), 0);
	free_bytes = (uint64_t)sv.f_bavail * sv.f_frsize;
	trace__collector_defaults(&c);
	c.mode = TRACE_MODE_STREAM;
	ck_assert_int_eq(trace__collector_check(&c, 2, base, 0, err, sizeof(err)), 0);
	/* defaults filled in: a laptop's disk keeps half its free space */
	ck_assert_uint_eq(c.segment_records, TRACE_DEFAULT_SEGMENT_RECORDS);
	ck_assert_uint_gt(c.disk_budget, 0);
	ck_assert_uint_le(c.disk_budget, TRACE_DEFAULT_DISK_BUDGET);
	ck_assert_uint_le(c.disk_budget, free_bytes / 2 + 1);

	trace__collector_defaults(&c);
	c.mode = TRACE_MODE_STREAM;
	c.segment_records = TRACE_MAX_SEGMENT_RECORDS + 1;
	ck_assert_int_eq(trace__collector_check(&c, 1, base, 0, err, sizeof(err)), -E2BIG);
	ck_assert_msg(strstr(err, "4194304"), "%s", err);
	c.segment_records = 1;
	ck_assert_int_eq(trace__collector_check(&c, 1, base, 0, err, sizeof(err)), -EINVAL);

	/* the memory budget: the host's available memory */
	c.segment_records = 1 << 20;
	ck_assert_int_eq(trace__collector_check(&c, 4, base, 64 << 20, err, sizeof(err)),
			 -E2BIG);
	ck_assert_msg(strstr(err, "memory budget of 64 MiB"), "%s", err);

	/* the disk budget: at most the free space, at least two segments per vCPU */
	c.segment_records = 0;
	c.disk_budget = free_bytes + (1ULL << 30);
	ck_assert_int_eq(trace__collector_check(&c, 1, base, 0, err, sizeof(err)), -E2BIG);
	ck_assert_msg(strstr(err, "free on the trace directory's file system"), "%s", err);
	c.disk_budget = 4096;
	ck_assert_int_eq(trace__collector_check(&c, 1, base, 0, err, sizeof(err)), -ENOSPC);
	ck_assert_msg(strstr(err, "below two segments per vCPU"), "%s", err);

	c.mode = 7;
	ck_assert_int_eq(trace__collector_check(&c, 1, base, 0, err, sizeof(err)), -EINVAL);
	remove_tree(base);
}
END_TEST

/* A stream trace: its open segments, removed whole by an abort. */
START_TEST(test_stream_create_abort)
{
	char dir[PATH_MAX + 8], path[PATH_MAX + 32], err[256] = "";
	struct trace_config c;
	struct trace *t;
	struct vbts_record r = { 0x1000, 0x2000, 0 };

	make_base();
	snprintf(dir, sizeof(dir), "%s/t", base);
	c = config(dir);
	c.collector.mode = TRACE_MODE_STREAM;
	c.collector.segment_records = 16;
	t = trace__create(&c, err, sizeof(err));
	ck_assert_msg(t, "%s", err);
	snprintf(path, sizeof(path), "%s/vcpu1.open.vseg", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(ring_writer__append(trace__ring(t, 0), &r), 0);
	ck_assert_uint_eq(ring_writer__committed(trace__ring(t, 0)), 40);
	trace__abort(t);
	/* the closed segments written while it ran are the trace's too */
	ck_assert_int_eq(access(dir, F_OK), -1);
	remove_tree(base);
}
END_TEST

/* The control socket's entry: budget and on-full change at run time, mode and sizes do not. */
START_TEST(test_set_collector)
{
	char dir[PATH_MAX + 8], err[256] = "";
	struct trace_collector_config now, want;
	struct trace_config c;
	struct trace *t;

	make_base();
	snprintf(dir, sizeof(dir), "%s/t", base);
	c = config(dir);
	c.collector.mode = TRACE_MODE_STREAM;
	c.collector.segment_records = 16;
	c.collector.disk_budget = 1 << 20;
	t = trace__create(&c, err, sizeof(err));
	ck_assert_msg(t, "%s", err);
	trace__collector(t, &now);
	ck_assert_uint_eq(now.disk_budget, 1 << 20);
	want = now;
	want.disk_budget = 2 << 20;
	want.on_full = TRACE_ON_FULL_DROP;
	ck_assert_int_eq(trace__set_collector(t, &want, err, sizeof(err)), 0);
	trace__collector(t, &now);
	ck_assert_uint_eq(now.disk_budget, 2 << 20);
	ck_assert_uint_eq(now.on_full, TRACE_ON_FULL_DROP);
	want.segment_records = 32;
	ck_assert_int_eq(trace__set_collector(t, &want, err, sizeof(err)), -EBUSY);
	want.segment_records = 16;
	want.mode = TRACE_MODE_WRAP;
	ck_assert_int_eq(trace__set_collector(t, &want, err, sizeof(err)), -EBUSY);
	want.mode = TRACE_MODE_STREAM;
	want.disk_budget = 100;
	ck_assert_int_eq(trace__set_collector(t, &want, err, sizeof(err)), -ENOSPC);
	trace__abort(t);
	remove_tree(base);
}
END_TEST

START_TEST(test_budget)
{
	char dir[PATH_MAX + 8], err[256] = "";
	struct trace_config c;

	ck_assert_int_eq(trace__check_budget(0, 1, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ring size 0"));
	ck_assert_int_eq(trace__check_budget(65536, 1, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(trace__check_budget(TRACE_RING_BUDGET / 24, 1, 0, err, sizeof(err)),
			 -E2BIG);
	ck_assert_ptr_nonnull(strstr(err, "memory budget"));
	ck_assert_int_eq(trace__check_budget(1 << 20, 64, 0, err, sizeof(err)), -E2BIG);
	ck_assert_int_eq(trace__check_budget(UINT64_MAX, 1, 0, err, sizeof(err)), -E2BIG);
	ck_assert_int_eq(trace__check_budget(UINT64_MAX / 2, 3, 0, err, sizeof(err)), -E2BIG);
	/* The host's available memory lowers the budget. */
	ck_assert_int_eq(trace__check_budget(65536, 1, 1 << 20, err, sizeof(err)), -E2BIG);

	make_base();
	snprintf(dir, sizeof(dir), "%s/t", base);
	c = config(dir);
	c.collector.ring_records = 0;
	ck_assert_ptr_null(trace__create(&c, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(access(dir, F_OK), -1); /* nothing created */
	remove_tree(base);
}
END_TEST

/*
 * vm.json rewritten while the run goes on (a Linux guest's KASLR slide found) beside a
 * hostile user: a FIFO or a symbolic link under its temporary name is neither waited on nor
 * written through (alarm: a blocked call fails the test).
 */
START_TEST(test_vm_json_beside_fifo)
{
	char dir[PATH_MAX + 8], path[PATH_MAX + 32], victim[PATH_MAX + 32], err[256] = "";
	struct trace_config c;
	struct trace *t;
	struct stat st;
	json_t *vm;

	make_base();
	snprintf(dir, sizeof(dir), "%s/t", base);
	c = config(dir);
	t = trace__create(&c, err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	snprintf(path, sizeof(path), "%s/.vm.json.tmp", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	alarm(10);
	ck_assert_int_eq(trace__set_kaslr_slide(t, 0x1000), 0);
	alarm(0);
	snprintf(victim, sizeof(victim), "%s/victim", base);
	ck_assert_int_eq(close(open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600)), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(trace__set_kaslr_slide(t, 0x2000), 0);
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(ring_writer__escape(trace__ring(t, 0), VBTS_ESC_STOP, 1, 0), 0);
	ck_assert_int_eq(trace__close(t), 0);
	snprintf(path, sizeof(path), "%s/vm.json", dir);
	vm = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(vm);
	ck_assert_int_eq(json_integer_value(json_object_get(vm, "kaslr_slide")), 0x2000);
	json_decref(vm);
	remove_tree(base);
}
END_TEST

Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("dir");

	tcase_add_test(tc, test_new_dir);
	tcase_add_test(tc, test_empty_dir_accepted_and_abort);
	tcase_add_test(tc, test_abort_removes_new_dir);
	tcase_add_test(tc, test_refuse_non_empty);
	tcase_add_test(tc, test_refuse_uncreatable);
	tcase_add_test(tc, test_check_dir);
	tcase_add_test(tc, test_budget);
	tcase_add_test(tc, test_stream_limits);
	tcase_add_test(tc, test_stream_create_abort);
	tcase_add_test(tc, test_set_collector);
	tcase_add_test(tc, test_vm_json_beside_fifo);
	suite_add_tcase(s, tc);
	return s;
}
