/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-run.h - run a program to its end and keep what it printed, for the Check tests.
 */
#ifndef VBTS_TESTS_TEST_RUN_H
#define VBTS_TESTS_TEST_RUN_H

#include <stddef.h>

/**
 * test__run() - run @argv in a child process, wait for it, and keep its output.
 * @cwd: the directory the program runs in, or NULL for this one.
 * @argv: the program (a name is searched in PATH, a path is run as is) and its arguments,
 *        NULL-terminated.
 * @out: where its stdout goes, truncated to @out_size - 1 bytes and NUL-terminated.
 * @out_size: the size of @out, at least 1.
 * @err: where its stderr goes, as @out; NULL: stderr joins stdout in @out.
 * @err_size: the size of @err (ignored when @err is NULL).
 *
 * A program that cannot be started prints "PROGRAM: ERROR" with a hint to its stderr and
 * exits 127; a @cwd that cannot be entered makes it exit 126. Setting up the temporary files
 * or the child fails the running test.
 *
 * Return: the program's exit status, or 128 + N when signal N ended it.
 */
int test__run(const char *cwd, const char *const *argv, char *out, size_t out_size, char *err,
	      size_t err_size);

#endif /* VBTS_TESTS_TEST_RUN_H */
