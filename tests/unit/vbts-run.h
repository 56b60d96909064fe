/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vbts-run.h - run the vbts binary to its end and keep what it printed (tests only).
 */
#ifndef VBTS_TESTS_UNIT_VBTS_RUN_H
#define VBTS_TESTS_UNIT_VBTS_RUN_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-files.h"
#include "test-run.h"

/* What one vbts command printed. */
struct vbts_output {
	int status;
	char out[8192];
	char err[8192];
};

/* Run vbts with @args (NULL-terminated, at most 30); it must end by itself, not by a signal. */
static inline void vbts_run__vbts(const char *const *args, struct vbts_output *o)
{
	const char *argv[32] = { VBTS_EXE };
	int n = 1;

	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	o->status = test__run(NULL, argv, o->out, sizeof(o->out), o->err, sizeof(o->err));
	ck_assert_int_lt(o->status, 128);
}

static inline void vbts_run__touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

#endif /* VBTS_TESTS_UNIT_VBTS_RUN_H */
