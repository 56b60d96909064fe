// SPDX-License-Identifier: GPL-2.0
/*
 * test-gen.c - the oracle cache: keys follow the content, a cached list is used without QEMU,
 * a missing QEMU is reported as such.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen.h"
#include "oracle-tests.h"
#include "test-files.h"

START_TEST(test_key_follows_content)
{
	char dir[] = "/tmp/vbts-oracle-gen.XXXXXX", a[256], b[256], ka[64], kb[64], kc[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	test__write_text(NULL, a, "same bytes");
	test__write_text(NULL, b, "same bytes");
	ck_assert_int_eq(oracle__cache_key(a, ka, sizeof(ka)), 0);
	ck_assert_int_eq(oracle__cache_key(b, kb, sizeof(kb)), 0);
	ck_assert_str_eq(ka, kb);
	test__write_text(NULL, b, "same bytez");
	ck_assert_int_eq(oracle__cache_key(b, kc, sizeof(kc)), 0);
	ck_assert_str_ne(ka, kc);
	ck_assert_int_eq(oracle__cache_key("/nonexistent/image", kc, sizeof(kc)), -ENOENT);
	unlink(a);
	unlink(b);
	rmdir(dir);
}
END_TEST

START_TEST(test_cached_and_missing_qemu)
{
	const char *image = getenv("VBTS_BRANCHES_IMAGE");
	char dir[] = "/tmp/vbts-oracle-gen.XXXXXX", key[64], path[512], out[512], err[512];
	struct gen_opts o = { .qemu = "/nonexistent/qemu-system-x86_64", .dfilter = 1,
			      .timeout_s = 10 };

	ck_assert_ptr_nonnull(image);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	o.cache_dir = dir;
	ck_assert_int_eq(oracle__generate(image, &o, out, sizeof(out), err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "not found"));

	ck_assert_int_eq(oracle__cache_key(image, key, sizeof(key)), 0);
	snprintf(path, sizeof(path), "%s/%s.jsonl", dir, key);
	test__write_text(NULL, path, "{\"from\":\"0x1\",\"to\":\"0x2\",\"cpl\":0}\n");
	ck_assert_int_eq(oracle__generate(image, &o, out, sizeof(out), err, sizeof(err)), 0);
	ck_assert_str_eq(out, path);

	ck_assert_int_eq(oracle__generate("/dev/null", &o, out, sizeof(out), err, sizeof(err)),
			 -ENOEXEC);
	unlink(path);
	rmdir(dir);
}
END_TEST

Suite *gen_suite(void)
{
	Suite *s = suite_create("gen");
	TCase *tc = tcase_create("cache");

	tcase_add_test(tc, test_key_follows_content);
	tcase_add_test(tc, test_cached_and_missing_qemu);
	suite_add_tcase(s, tc);
	return s;
}
