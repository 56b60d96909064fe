// SPDX-License-Identifier: GPL-2.0
/*
 * test-libvirt.c - the parsers of what libvirt gives back about a domain's QEMU: its pid file
 * and a query-cpus-fast reply (both untrusted).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "libvirt-domain.h"
#include "tests.h"

static const struct {
	const char *text;
	size_t len; /* 0: strlen(text) */
	int ret;
	int pid;
} pid_files[] = {
	{ "1234", 0, 0, 1234 },
	{ "1234\n", 0, 0, 1234 },
	{ "2147483647\n", 0, 0, 2147483647 },
	{ "2147483648\n", 0, -EPROTO, 0 },
	{ "99999999999", 0, -EPROTO, 0 },
	{ "", 0, -EPROTO, 0 },
	{ "\n", 0, -EPROTO, 0 },
	{ "0\n", 0, -EPROTO, 0 },
	{ "012\n", 0, -EPROTO, 0 },
	{ "-5\n", 0, -EPROTO, 0 },
	{ "12 \n", 0, -EPROTO, 0 },
	{ "12\n\n", 0, -EPROTO, 0 },
	{ "12\0003", 4, -EPROTO, 0 },
	{ "1x", 0, -EPROTO, 0 },
};

START_TEST(test_pid_file)
{
	const char *t = pid_files[_i].text;
	size_t len = pid_files[_i].len ? pid_files[_i].len : strlen(t);
	int pid = -1;

	ck_assert_msg(libvirt_domain__parse_pid_file(t, len, &pid) == pid_files[_i].ret, "%s", t);
	if (!pid_files[_i].ret)
		ck_assert_int_eq(pid, pid_files[_i].pid);
}
END_TEST

static const struct {
	const char *reply;
	int ret;
	int tid;
} cpus[] = {
	{ "{\"return\": [{\"cpu-index\": 0, \"thread-id\": 4242, \"qom-path\": \"/machine\"}, "
	  "{\"cpu-index\": 1, \"thread-id\": 4243}], \"id\": \"libvirt-17\"}", 0, 4242 },
	{ "{\"return\": []}", -EPROTO, 0 },
	{ "{\"return\": {}}", -EPROTO, 0 },
	{ "{\"return\": [{\"thread-id\": 0}]}", -EPROTO, 0 },
	{ "{\"return\": [{\"thread-id\": -1}]}", -EPROTO, 0 },
	{ "{\"return\": [{\"thread-id\": 4294967297}]}", -EPROTO, 0 },
	{ "{\"return\": [{\"thread-id\": \"12\"}]}", -EPROTO, 0 },
	{ "{\"return\": [5]}", -EPROTO, 0 },
	{ "{\"error\": {\"class\": \"x\"}}", -EPROTO, 0 },
	{ "[", -EPROTO, 0 },
	{ "", -EPROTO, 0 },
};

START_TEST(test_cpus_tid)
{
	int tid = -1;

	ck_assert_msg(libvirt_domain__parse_cpus_tid(cpus[_i].reply, &tid) == cpus[_i].ret, "%s",
		      cpus[_i].reply);
	if (!cpus[_i].ret)
		ck_assert_int_eq(tid, cpus[_i].tid);
}
END_TEST

Suite *libvirt_suite(void)
{
	Suite *s = suite_create("libvirt-domain");
	TCase *tc = tcase_create("parsers");

	tcase_add_loop_test(tc, test_pid_file, 0, sizeof(pid_files) / sizeof(pid_files[0]));
	tcase_add_loop_test(tc, test_cpus_tid, 0, sizeof(cpus) / sizeof(cpus[0]));
	suite_add_tcase(s, tc);
	return s;
}
