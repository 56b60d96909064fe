// SPDX-License-Identifier: GPL-2.0
/*
 * test-progress.c - the progress line of long decodes: written to a terminal (a pseudo-terminal
 * here) and erased at the end, never to a pipe or a file, never with --quiet.
 */
#include <errno.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "decoder-test.h"
#include "progress.h"
#include "trace-gen.h"

/* Written after the bytes under test: everything before it has arrived once it has. */
#define MARKER "#end#"

/*
 * What was written to @wfd so far, read from the other end @rfd (a pty master or a pipe):
 * a marker is written after it, and everything up to the marker read (a pty hands bytes over
 * asynchronously). Returned NUL-terminated, without the marker.
 */
static char *drain(int rfd, int wfd)
{
	static char buf[4096];
	size_t len = 0, mlen = strlen(MARKER);
	ssize_t n;

	ck_assert_int_eq(write(wfd, MARKER, mlen), (ssize_t)mlen);
	while (len < mlen || memcmp(buf + len - mlen, MARKER, mlen)) {
		ck_assert_uint_lt(len, sizeof(buf) - 1);
		n = read(rfd, buf + len, sizeof(buf) - 1 - len);
		ck_assert_int_gt(n, 0);
		len += (size_t)n;
	}
	buf[len - mlen] = '\0';
	return buf;
}

/* What a pipe whose write end is closed holds. */
static char *drain_pipe(int fd)
{
	static char buf[4096];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return buf;
}

START_TEST(test_progress_terminal)
{
	struct progress p;
	int master, slave;

	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	/* No delay: the first update shows the line, the next ones wait for the clock. */
	progress__init(&p, slave, "vbts decode", "records", 1000, false, 0);
	progress__update(&p, 0);
	progress__update(&p, 1);
	progress__update(&p, PROGRESS_STEP - 1);
	progress__end(&p);
	progress__end(&p);
	ck_assert_str_eq(drain(master, slave),
			 "\rvbts decode: 0% (0 of 1000 records)\033[K\r\033[K");
	/* Past the total (items the records made): 99% until the end. */
	progress__init(&p, slave, "vbts decode", "records", 1000, false, 0);
	progress__update(&p, 5000);
	progress__end(&p);
	ck_assert_str_eq(drain(master, slave),
			 "\rvbts decode: 99% (5000 of 1000 records)\033[K\r\033[K");
	/* An unknown total: the count alone. */
	progress__init(&p, slave, "vbts decode", "records", 0, false, 0);
	progress__update(&p, 7);
	progress__end(&p);
	ck_assert_str_eq(drain(master, slave), "\rvbts decode: 7 records\033[K\r\033[K");
	close(slave);
	close(master);
}
END_TEST

/* A pipe, or --quiet on a terminal: not a byte, whatever the count. */
START_TEST(test_progress_silent)
{
	struct progress p;
	int fds[2], master, slave;

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	progress__init(&p, fds[1], "vbts decode", "records", 1000, false, 0);
	for (uint64_t i = 0; i < 4 * PROGRESS_STEP; i++)
		progress__update(&p, i);
	progress__end(&p);
	ck_assert_str_eq(drain(fds[0], fds[1]), "");
	progress__init(&p, slave, "vbts decode", "records", 1000, true, 0);
	for (uint64_t i = 0; i < 4 * PROGRESS_STEP; i++)
		progress__update(&p, i);
	progress__end(&p);
	ck_assert_str_eq(drain(master, slave), "");
	close(fds[0]);
	close(fds[1]);
	close(slave);
	close(master);
}
END_TEST

/* `vbts decode --quiet` with stderr on a terminal: the records, and nothing on stderr. */
START_TEST(test_decode_quiet)
{
	char dir[] = "/tmp/vbts-progress-XXXXXX";
	int master, slave, out[2], status;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(trace_gen__write(dir, TRACE_GEN_NORMAL, 5000), 0);
	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	ck_assert_int_eq(pipe(out), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = { "decode", "--quiet", "--format", "jsonl", "--last", "1", dir,
				 NULL };

		signal(SIGALRM, SIG_DFL);
		alarm(30);
		if (dup2(out[1], 1) < 0 || dup2(slave, 2) < 0)
			_exit(99);
		status = cmd_decode.fn(7, argv);
		fflush(stdout);
		_exit(status);
	}
	close(out[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_ptr_nonnull(strstr(drain_pipe(out[0]), "\"type\":\"branch\""));
	ck_assert_str_eq(drain(master, slave), "");
	close(out[0]);
	close(slave);
	close(master);
	remove_trace(dir);
}
END_TEST

Suite *progress_suite(void)
{
	Suite *s = suite_create("progress");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_progress_terminal);
	tcase_add_test(tc, test_progress_silent);
	tcase_add_test(tc, test_decode_quiet);
	suite_add_tcase(s, tc);
	return s;
}
