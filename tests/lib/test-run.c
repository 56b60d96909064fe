// SPDX-License-Identifier: GPL-2.0
/*
 * test-run.c - run a program to its end in a child process and keep its stdout and stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "test-run.h"

/* A new unlinked temporary file: the child writes it, the parent reads it back with pread(). */
static int temp_fd(void)
{
	char path[] = "/tmp/vbts-run-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	unlink(path);
	return fd;
}

/* What @fd holds from its start into @buf, at most @size - 1 bytes, NUL-terminated. */
static void read_back(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = pread(fd, buf + n, size - 1 - n, (off_t)n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		ck_assert_msg(r > 0, "reading a program's output: %s", strerror(errno));
		n += (size_t)r;
	}
	buf[n] = '\0';
}

int test__run(const char *cwd, const char *const *argv, char *out, size_t out_size, char *err,
	      size_t err_size)
{
	int ofd = temp_fd(), efd = err ? temp_fd() : ofd, status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(127);
		if (cwd && chdir(cwd))
			_exit(126);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "%s: %s (the project's ./vbts installs it)\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	read_back(ofd, out, out_size);
	close(ofd);
	if (err) {
		read_back(efd, err, err_size);
		close(efd);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
