// SPDX-License-Identifier: GPL-2.0
/*
 * test-recorder.c - the per-domain recorder's libvirt hook: which hook calls (re)start it,
 * which domain names it takes, and their unit names, checked against systemd's own
 * `systemd-escape --template vbts-attach@.service` when it is installed.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder.h"
#include "test-files.h"
#include "tests.h"

START_TEST(test_action)
{
	ck_assert_int_eq(recorder__action("started"), RECORDER_RESTART);
	ck_assert_int_eq(recorder__action("reconnect"), RECORDER_START);
	ck_assert_int_eq(recorder__action("prepare"), RECORDER_NONE);
	ck_assert_int_eq(recorder__action("start"), RECORDER_NONE);
	ck_assert_int_eq(recorder__action("stopped"), RECORDER_NONE);
	ck_assert_int_eq(recorder__action("release"), RECORDER_NONE);
	ck_assert_int_eq(recorder__action(""), RECORDER_NONE);
}
END_TEST

START_TEST(test_valid)
{
	ck_assert(recorder__valid_domain("web-1"));
	ck_assert(recorder__valid_domain("a b"));
	ck_assert(recorder__valid_domain("dom.x"));
	ck_assert(!recorder__valid_domain(""));
	ck_assert(!recorder__valid_domain("."));
	ck_assert(!recorder__valid_domain(".."));
	ck_assert(!recorder__valid_domain(".hidden"));
	ck_assert(!recorder__valid_domain("a/b"));
	ck_assert(!recorder__valid_domain("a\nb"));
	ck_assert(!recorder__valid_domain("a\x1b[2Jb"));
}
END_TEST

/* systemd-escape's answer for @name, or NULL when it is not installed. */
static char *systemd_escape(const char *name)
{
	static char out[512];
	int p[2];
	pid_t pid;
	ssize_t n;
	int status;

	if (access("/usr/bin/systemd-escape", X_OK))
		return NULL;
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		dup2(p[1], 1);
		execl("/usr/bin/systemd-escape", "systemd-escape", "--template",
		      "vbts-attach@.service", "--", name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], out, sizeof(out) - 1);
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_gt(n, 0);
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return out;
}

START_TEST(test_unit_name)
{
	static const char *const names[] = {
		"web1", "web-1", "a b", "dom.x", "x_y:z", "caf\xc3\xa9", "back\\slash", "1", "-",
		"a$(reboot)", "quote'\"",
	};
	char buf[RECORDER_UNIT_MAX], big[201];
	const char *want;

	ck_assert_int_eq(recorder__unit_name("web-1", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "vbts-attach@web\\x2d1.service");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_int_eq(recorder__unit_name(names[i], buf, sizeof(buf)), 0);
		want = systemd_escape(names[i]);
		if (want)
			ck_assert_str_eq(buf, want);
	}
	ck_assert_int_eq(recorder__unit_name("a/b", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(recorder__unit_name("web1", buf, 10), -ENAMETOOLONG);
	/* 200 bytes escaped to 800: beyond a unit name's 255 */
	memset(big, '-', 200);
	big[200] = '\0';
	ck_assert_int_eq(recorder__unit_name(big, buf, sizeof(buf)), -ENAMETOOLONG);
	memset(big, 'a', 200);
	ck_assert_int_eq(recorder__unit_name(big, buf, sizeof(buf)), 0);
	ck_assert_uint_lt(strlen(buf), RECORDER_UNIT_MAX);
}
END_TEST

START_TEST(test_configured)
{
	char dir[] = "/tmp/check-recorder-XXXXXX", p[256];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/web1.conf", dir);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/adir.conf", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert(recorder__configured(dir, "web1"));
	ck_assert(!recorder__configured(dir, "web2"));
	ck_assert(!recorder__configured(dir, "adir"));
	ck_assert(!recorder__configured(dir, "../web1"));
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

Suite *recorder_suite(void)
{
	Suite *s = suite_create("recorder");
	TCase *tc = tcase_create("hook");

	tcase_add_test(tc, test_action);
	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_unit_name);
	tcase_add_test(tc, test_configured);
	suite_add_tcase(s, tc);
	return s;
}
