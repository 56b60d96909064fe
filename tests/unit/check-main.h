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
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/**
 * check_main__run() - run @n suites and say whether every test passed.
 * @suites: the suites' constructors
 * @n:      their number
 *
 * Return: EXIT_SUCCESS when every test passed, EXIT_FAILURE otherwise.
 */
static inline int check_main__run(Suite *(*const *suites)(void), size_t n)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < n; i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/**
 * check_main__have_kvm() - whether /dev/kvm opens; says why not in a skip line when it does not.
 *
 * Return: true when it opens.
 */
static inline bool check_main__have_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("skip: /dev/kvm is not available (%s)\n", strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

#define VBTS_CHECK_MAIN(...)                                                        \
	int main(void)                                                              \
	{                                                                           \
		Suite *(*const suites[])(void) = { __VA_ARGS__ };                   \
		return check_main__run(suites, sizeof(suites) / sizeof(suites[0])); \
	}

#endif /* VBTS_TESTS_CHECK_MAIN_H */
