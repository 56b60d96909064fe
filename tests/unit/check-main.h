/* SPDX-License-Identifier: GPL-2.0 */
/*
 * check-main.h - the shared main() of the Check unit-test binaries.
 *
 * Usage in one file of a test binary:
 *   VBTS_CHECK_MAIN(ring_suite, decoder_suite)
 * Exit status: 0 when every test passed, 1 otherwise.
 */
#ifndef VBTS_TESTS_CHECK_MAIN_H
#define VBTS_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define VBTS_CHECK_MAIN(...)                                                        \
	int main(void)                                                              \
	{                                                                           \
		Suite *(*suites[])(void) = { __VA_ARGS__ };                         \
		SRunner *sr = srunner_create(NULL);                                 \
		int failed;                                                         \
		for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)     \
			srunner_add_suite(sr, suites[i]());                         \
		srunner_run_all(sr, CK_NORMAL);                                     \
		failed = srunner_ntests_failed(sr);                                 \
		srunner_free(sr);                                                   \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                        \
	}

#endif /* VBTS_TESTS_CHECK_MAIN_H */
