// SPDX-License-Identifier: GPL-2.0
/*
 * test-cli.c - option errors of the vbts binary's commands (no KVM needed: they are refused
 * before anything is opened): one error line, at most a hint line, exit status 2, nothing on
 * stdout; `vbts help CMD` still prints the whole usage.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"

/* What one vbts command printed. */
struct output {
	int status;
	char out[8192];
	char err[8192];
};

static void read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += r;
	buf[n] = '\0';
}

/* Run vbts with @args (NULL-terminated) to its end. */
static void vbts(const char *const *args, struct output *o)
{
	const char *argv[16] = { VBTS_EXE };
	char out[] = "/tmp/check-vmm-cli-XXXXXX", err[] = "/tmp/check-vmm-cli-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err), n = 1, status;
	pid_t pid;

	ck_assert_int_ge(fo, 0);
	ck_assert_int_ge(fe, 0);
	unlink(out);
	unlink(err);
	while (*args && n < 15)
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
	lseek(fo, 0, SEEK_SET);
	lseek(fe, 0, SEEK_SET);
	read_all(fo, o->out, sizeof(o->out));
	read_all(fe, o->err, sizeof(o->err));
	close(fo);
	close(fe);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The arguments, and words the error line must contain. */
static const struct {
	const char *args[6];
	const char *mention;
} option_errors[] = {
	{ { "run", NULL }, "IMAGE" },
	{ { "run", "--frob", "x.elf", NULL }, "--frob" },
	{ { "run", "-q", "x.elf", NULL }, "-q" },
	{ { "run", "--trace", NULL }, "--trace" },
	{ { "run", "a.elf", "b.elf", NULL }, "b.elf" },
	{ { "run", "a.elf", "--stats", NULL }, "options go before IMAGE" },
	{ { "run", "--stats=1", "x.elf", NULL }, "takes no argument" },
	{ { "run", "--vcpus", "0", "x.elf", NULL }, "--vcpus" },
	{ { "run", "--cpl", "ring2", "x.elf", NULL }, "--cpl" },
	{ { "run", "--on-crash", "reboot", "x.elf", NULL }, "expected exit, continue or pause" },
	{ { "run", "--crash-branches", "4097", "x.elf", NULL }, "--crash-branches" },
	{ { "decode", "--crash", "--last", "3", "dir", NULL }, "--crash goes with no" },
	{ { "probe", "--frob", NULL }, "--frob" },
	{ { "probe", "extra", NULL }, "extra" },
	{ { "decode", "--frob", "dir", NULL }, "--frob" },
	{ { "decode", NULL }, "directory" },
};

START_TEST(test_option_error)
{
	struct output *o = malloc(sizeof(*o));

	ck_assert_ptr_nonnull(o);
	vbts(option_errors[_i].args, o);
	ck_assert_int_eq(o->status, 2);
	ck_assert_str_eq(o->out, "");
	ck_assert_msg(lines(o->err) >= 1 && lines(o->err) <= 2, "vbts %s printed %d lines",
		      option_errors[_i].args[0], lines(o->err));
	ck_assert_msg(strstr(o->err, option_errors[_i].mention), "'%s' not in: %s",
		      option_errors[_i].mention, o->err);
	free(o);
}
END_TEST

START_TEST(test_help_prints_usage)
{
	static const char *const cmds[] = { "run", "probe", "decode" };
	struct output *o = malloc(sizeof(*o));

	ck_assert_ptr_nonnull(o);
	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		vbts((const char *[]){ "help", cmds[i], NULL }, o);
		ck_assert_int_eq(o->status, 0);
		ck_assert_ptr_nonnull(strstr(o->out, "usage: vbts"));
		ck_assert_int_gt(lines(o->out), 5);
	}
	free(o);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("options");

	tcase_add_loop_test(tc, test_option_error, 0,
			    sizeof(option_errors) / sizeof(option_errors[0]));
	tcase_add_test(tc, test_help_prints_usage);
	suite_add_tcase(s, tc);
	return s;
}
