// SPDX-License-Identifier: GPL-2.0
/*
 * test-cli.c - option errors of `vbts attach`, refused before /dev/kvm is opened or anything
 * started: one error line, exit status 2, nothing on stdout, nothing created.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "vbts-run.h"

static const struct {
	const char *args[11];
	const char *words;
} option_errors[] = {
	{ { "attach" }, "no VM" },
	{ { "attach", "--trace", "@DIR" }, "no VM" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--domain", "d" }, "more than one VM" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--", "qemu" }, "more than one VM" },
	{ { "attach", "--pid", "1" }, "--trace DIR is missing" },
	{ { "attach", "--trace", "@DIR", "--pid", "abc" }, "--pid abc: expected a number" },
	{ { "attach", "--trace", "@DIR", "--pid", "0" }, "--pid 0: expected a number" },
	{ { "attach", "--trace", "@DIR", "--pid", "-4" }, "--pid -4: expected a number" },
	{ { "attach", "--trace", "@DIR", "--pid", "99999999999" }, "expected a number" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--cpl", "ring3" },
	  "--cpl ring3: expected all, user or kernel" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--task", "xyz" }, "--task xyz" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--task", "10000000000000" }, "--task" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--ring", "0" }, "--ring 0" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--connect", "qemu:///system" },
	  "--connect is for --domain" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--start" }, "--start is for --domain" },
	{ { "attach", "--trace", "@DIR", "--start", "--", "qemu" }, "--start is for --domain" },
	{ { "attach", "--trace", "@DIR", "--start" }, "no VM" },
	{ { "attach", "--trace", "@DIR", "--domain", "d", "--start=1" },
	  "option '--start' takes no argument" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "extra" }, "unexpected argument 'extra'" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--bogus" }, "unknown option '--bogus'" },
	{ { "attach", "--trace", "@DIR", "--pid" }, "'--pid' needs an argument" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--start-at", "" }, "--start-at: expected" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--start-at", "bin/sh" },
	  "--start-at: expected a process name" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--kernel", "/nonexistent/vmlinuz" },
	  "--kernel /nonexistent/vmlinuz: No such file or directory" },
	{ { "attach", "--trace", "@DIR", "--pid", "1", "--kernel" }, "'--kernel' needs an argument" },
	{ { "attach", "--trace", "@FILE", "--pid", "1" }, "is not a directory" },
	{ { "attach", "--trace", "@DIR", "--trace-base", "@DIR", "--pid", "1" },
	  "--trace DIR and --trace-base BASE: give one" },
	{ { "attach", "--trace", "@DIR", "--keep-runs", "3", "--pid", "1" },
	  "--keep-runs and --keep-bytes are for --trace-base" },
	{ { "attach", "--trace-base", "@DIR", "--keep-runs", "0", "--pid", "1" },
	  "--keep-runs 0: expected a number" },
	{ { "attach", "--trace-base", "@DIR", "--keep-bytes", "1T", "--pid", "1" },
	  "--keep-bytes 1T: expected a number of bytes" },
	{ { "attach", "--trace", "@DIR", "--disk-budget", "1M", "--pid", "1" },
	  "are for --mode stream" },
	{ { "attach", "--trace", "@DIR", "--mode", "ring", "--pid", "1" },
	  "--mode ring: expected wrap or stream" },
	{ { "attach", "--trace", "@DIR", "--mode", "stream", "--on-full", "x", "--pid", "1" },
	  "--on-full x: expected stall, drop or rotate" },
	{ { "attach", "--trace", "@DIR", "--on-full", "rotate", "--pid", "1" },
	  "are for --mode stream" },
	{ { "attach", "--trace", "@DIR", "--mode", "stream", "--on-full", "rotate", "--seal", "k",
	    "--pid", "1" },
	  "not with --seal" },
	{ { "attach", "--trace", "@FULL", "--pid", "1" }, "exists and is not empty" },
};

START_TEST(test_option_errors)
{
	char dir[] = "/tmp/check-attach-cli-XXXXXX", trace[128], file[128], full[128];
	const char *args[12];
	struct vbts_output o;
	struct stat st;
	unsigned int n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(full, sizeof(full), "%s/full", dir);
	ck_assert_int_eq(mkdir(full, 0700), 0);
	vbts_run__touch(file);
	{
		char inner[160];

		snprintf(inner, sizeof(inner), "%s/x", full);
		vbts_run__touch(inner);
	}
	for (; n < 11 && option_errors[_i].args[n]; n++) {
		const char *a = option_errors[_i].args[n];

		args[n] = !strcmp(a, "@DIR") ? trace : !strcmp(a, "@FILE") ? file :
			  !strcmp(a, "@FULL") ? full : a;
	}
	args[n] = NULL;
	vbts_run__vbts(args, &o);
	ck_assert_msg(o.status == 2, "status %d: %s", o.status, o.err);
	ck_assert_msg(strstr(o.err, option_errors[_i].words), "%s", o.err);
	ck_assert_int_eq(test__count_lines(o.err), 1);
	ck_assert_str_eq(o.out, "");
	ck_assert_int_eq(stat(trace, &st), -1);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

START_TEST(test_help)
{
	const char *args[] = { "help", "attach", NULL };
	struct vbts_output o;

	vbts_run__vbts(args, &o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_ptr_nonnull(strstr(o.out, "usage: vbts attach"));
	ck_assert_ptr_nonnull(strstr(o.out, "--domain NAME"));
	ck_assert_ptr_nonnull(strstr(o.out, "--start"));
}
END_TEST

Suite *attach_cli_suite(void)
{
	Suite *s = suite_create("attach-cli");
	TCase *tc = tcase_create("options");

	tcase_add_loop_test(tc, test_option_errors, 0,
			    sizeof(option_errors) / sizeof(option_errors[0]));
	tcase_add_test(tc, test_help);
	suite_add_tcase(s, tc);
	return s;
}
