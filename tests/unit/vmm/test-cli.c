// SPDX-License-Identifier: GPL-2.0
/*
 * test-cli.c - option errors of the vbts binary's commands (no KVM needed: they are refused
 * before anything is opened): one error line, at most a hint line, exit status 2, nothing on
 * stdout; `vbts help CMD` still prints the whole usage; `vbts ctl` prints what a hostile
 * control socket sends as printable ASCII only.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests.h"
#include "vbts-run.h"

/*
 * A control socket that answers one request with @reply (@len bytes), or closes at once when
 * @reply is NULL: a forked child, its pid returned; the socket at @path.
 */
static pid_t fake_control(const char *path, const char *reply, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), c;
	char buf[4096];
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		c = accept(fd, NULL, NULL);
		if (c < 0)
			_exit(1);
		if (reply) {
			/* the request line first, then the reply */
			ssize_t n;

			while ((n = read(c, buf, sizeof(buf))) > 0 && !memchr(buf, '\n', (size_t)n))
				;
			if (write(c, reply, len) != (ssize_t)len)
				_exit(1);
		}
		close(c);
		_exit(0);
	}
	close(fd);
	return pid;
}

/* What vbts ctl prints of hostile responses: nothing a terminal acts on, the right status. */
static const struct {
	const char *reply;
	size_t len;
	int status;
	const char *out;
} ctl_replies[] = {
#define R(s) s, sizeof(s) - 1
	{ R("\x1b]0;pwned\x07\x1b[2J not json\n"), 2, "\\x1b]0;pwned\\x07\\x1b[2J not json\n" },
	{ R("{\"v\":1,\"ok\":true,\"s\":\"\\u001b[2J\xc3\xa9\xe2\x80\xae\"}\n"), 0,
	  "{\"v\":1,\"ok\":true,\"s\":\"\\u001B[2J\\u00E9\\u202E\"}\n" },
	{ R("{\"v\":1,\"error\":\"no\",\"code\":\"x\"}\n"), 2,
	  "{\"v\":1,\"error\":\"no\",\"code\":\"x\"}\n" },
	{ R("{\"a\":1}\0\x1b[31m\n"), 2, "{\"a\":1}\\x00\\x1b[31m\n" },
	{ R("{\"a\":\"\x9b\xff\"}\n"), 2, "{\"a\":\"\\x9b\\xff\"}\n" },
	{ NULL, 0, 2, "" },
#undef R
};

START_TEST(test_ctl_escapes)
{
	struct vbts_output *o = malloc(sizeof(*o));
	char path[] = "/tmp/check-vmm-ctl-XXXXXX";
	char sock[sizeof(path) + 8];
	int status;
	pid_t pid;

	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(mkdtemp(path));
	snprintf(sock, sizeof(sock), "%s/s", path);
	pid = fake_control(sock, ctl_replies[_i].reply, ctl_replies[_i].len);
	vbts_run__vbts((const char *[]){ "ctl", sock, "status", NULL }, o);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	unlink(sock);
	rmdir(path);
	ck_assert_msg(o->status == ctl_replies[_i].status, "status %d: %s%s", o->status, o->out,
		      o->err);
	ck_assert_str_eq(o->out, ctl_replies[_i].out);
	for (const char *p = o->out; *p; p++)
		ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p < 0x7f), "byte %#x printed",
			      (unsigned char)*p);
	free(o);
}
END_TEST

/* The arguments, and words the error line must contain. */
static const struct {
	const char *args[8];
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
	{ { "run", "--control", "s", "x.elf", NULL }, "--trace" },
	/* refused before anything is created: the trace directory is not made */
	{ { "run", "--trace", "/tmp/check-vmm-cli-no-trace", "--control", VBTS_EXE, "x.elf", NULL },
	  "--control" },
	{ { "run", "--trace", "/tmp/check-vmm-cli-no-trace", "--control", "/nonexistent-dir/s",
	    "x.elf", NULL }, "/nonexistent-dir" },
	{ { "ctl", NULL }, "SOCKET" },
	{ { "ctl", "/nonexistent/vbts.sock", NULL }, "VERB" },
	{ { "ctl", "/nonexistent/vbts.sock", "status", NULL }, "cannot connect" },
	{ { "ctl", "/nonexistent/vbts.sock", "get", "vcpu", NULL }, "KEY=VALUE" },
	{ { "ctl", "/nonexistent/vbts.sock", "--raw", NULL }, "--raw" },
};

START_TEST(test_option_error)
{
	struct vbts_output *o = malloc(sizeof(*o));

	ck_assert_ptr_nonnull(o);
	vbts_run__vbts(option_errors[_i].args, o);
	ck_assert_int_eq(o->status, 2);
	ck_assert_str_eq(o->out, "");
	ck_assert_msg(test__count_lines(o->err) >= 1 && test__count_lines(o->err) <= 2,
		      "vbts %s printed %zu lines", option_errors[_i].args[0],
		      test__count_lines(o->err));
	ck_assert_msg(strstr(o->err, option_errors[_i].mention), "'%s' not in: %s",
		      option_errors[_i].mention, o->err);
	ck_assert_int_eq(access("/tmp/check-vmm-cli-no-trace", F_OK), -1);
	ck_assert_int_eq(access(VBTS_EXE, X_OK), 0);
	free(o);
}
END_TEST

START_TEST(test_help_prints_usage)
{
	static const char *const cmds[] = { "run", "probe", "decode", "ctl" };
	struct vbts_output *o = malloc(sizeof(*o));

	ck_assert_ptr_nonnull(o);
	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		vbts_run__vbts((const char *[]){ "help", cmds[i], NULL }, o);
		ck_assert_int_eq(o->status, 0);
		ck_assert_ptr_nonnull(strstr(o->out, "usage: vbts"));
		ck_assert_int_gt(test__count_lines(o->out), 5);
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
	tcase_add_loop_test(tc, test_ctl_escapes, 0, sizeof(ctl_replies) / sizeof(ctl_replies[0]));
	suite_add_tcase(s, tc);
	return s;
}
