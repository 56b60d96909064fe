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
#include <sys/wait.h>
#include <unistd.h>

/* What one vbts command printed. */
struct vbts_output {
	int status;
	char out[8192];
	char err[8192];
};

static inline void vbts_run__read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	lseek(fd, 0, SEEK_SET);
	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
}

/* Run vbts with @args (NULL-terminated, at most 30). */
static inline void vbts_run__vbts(const char *const *args, struct vbts_output *o)
{
	const char *argv[32] = { VBTS_EXE };
	char out[] = "/tmp/check-vbts-out-XXXXXX", err[] = "/tmp/check-vbts-err-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err), n = 1, status;
	pid_t pid;

	ck_assert_int_ge(fo, 0);
	ck_assert_int_ge(fe, 0);
	unlink(out);
	unlink(err);
	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		execv(VBTS_EXE, (char *const *)argv);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	o->status = WEXITSTATUS(status);
	vbts_run__read_all(fo, o->out, sizeof(o->out));
	vbts_run__read_all(fe, o->err, sizeof(o->err));
	close(fo);
	close(fe);
}

static inline int vbts_run__lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static inline void vbts_run__touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	close(fd);
}

static inline void vbts_run__rm(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

#endif /* VBTS_TESTS_UNIT_VBTS_RUN_H */
