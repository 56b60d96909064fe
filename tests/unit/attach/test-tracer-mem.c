// SPDX-License-Identifier: GPL-2.0
/*
 * test-tracer-mem.c - the guest-memory accessor of vbts attach on an fd that is no tracer (a
 * KVM without KVM_X86_BTS_TRACER_READ_GPA answers the same): the probe says so, every access
 * fails and is counted, and accesses that leave their page are refused before any read.
 * Reads through a real tracer are tested in the harness (harness-linux-agent-attach, and the
 * series' bts_attach_read_test).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "tests.h"
#include "tracer-mem.h"

START_TEST(test_not_a_tracer)
{
	struct tracer_mem_stats st;
	struct tracer_mem *m;
	int fd = open("/dev/null", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	m = tracer_mem__open(fd);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(tracer_mem__probe(m), -ENOTTY);
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1000, 8));
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1000, 8));
	tracer_mem__stats(m, &st);
	ck_assert_uint_eq(st.reads, 2);
	ck_assert_uint_eq(st.failed, 2);
	ck_assert_uint_eq(st.hits, 0);
	tracer_mem__close(m);
	close(fd);
}
END_TEST

START_TEST(test_page_bounds)
{
	struct tracer_mem_stats st;
	struct tracer_mem *m = tracer_mem__open(-1);

	ck_assert_ptr_nonnull(m);
	/* Nothing crosses a page, nothing is empty: refused before any read. */
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1ffc, 8));
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1000, 0));
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1000, 4097));
	ck_assert_ptr_null(tracer_mem__ptr(m, ~0ULL, 2));
	tracer_mem__stats(m, &st);
	ck_assert_uint_eq(st.reads, 0);
	/* A whole page is one read (that fails here: no fd). */
	ck_assert_ptr_null(tracer_mem__ptr(m, 0x1000, 4096));
	tracer_mem__stats(m, &st);
	ck_assert_uint_eq(st.reads, 1);
	tracer_mem__invalidate(m);
	tracer_mem__close(m);
	tracer_mem__close(NULL);
}
END_TEST

Suite *tracer_mem_suite(void)
{
	Suite *s = suite_create("tracer-mem");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_not_a_tracer);
	tcase_add_test(tc, test_page_bounds);
	suite_add_tcase(s, tc);
	return s;
}
