// SPDX-License-Identifier: GPL-2.0
/*
 * test-inputs.c - how `vbts decode` reads its inputs: the bounded line reader, and more ring
 * files than file descriptors. Every input is made for real in a temporary trace directory.
 *
 * Each decode runs in a child process with a hang guard (SIGALRM) and, outside valgrind, an
 * address-space limit, so that a decoder that blocks or grows without bound fails the test
 * instead of the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "commands.h"
#include "decoder-test.h"
#include "input-file.h"
#include "ring-writer.h"

/* Hang guard of one decode, in seconds: far above what a decode of these traces takes. */
#define DECODE_GUARD_S 30

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

static void write_text(const char *dir, const char *name, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	write_file(path, text, strlen(text));
}

static void write_ring(const char *dir, uint32_t vcpu, uint64_t capacity,
		       const struct vbts_record *recs, size_t n)
{
	struct ring_writer_config cfg = {
		.capacity = capacity, .mode = VBTS_RING_WRAP, .vcpu_id = vcpu, .vm_id = 0xab,
	};
	struct ring_writer *w;
	char path[512];

	snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, vcpu);
	w = ring_writer__create(path, &cfg);
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(ring_writer__append(w, &recs[i]), 0);
	ck_assert_int_eq(ring_writer__close(w), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void remove_trace(const char *dir)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static char *slurp_fd(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *buf;

	ck_assert_int_ge(len, 0);
	buf = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)len, 0), (ssize_t)len);
	buf[len] = '\0';
	return buf;
}

/**
 * run_decode() - `vbts decode ARGS...` in a child process.
 * @out, @err: receive its stdout and stderr
 * @nofile:    RLIMIT_NOFILE of the child (not under valgrind), 0 to keep the current one
 * @argv:      arguments after "decode", NULL-terminated
 *
 * Return: the exit status, or -N when signal N ended the child (SIGALRM: it hung).
 */
static int run_decode(char **out, char **err, rlim_t nofile, const char *const *argv)
{
	char opath[] = "/tmp/vbts-out-XXXXXX", epath[] = "/tmp/vbts-err-XXXXXX";
	int ofd = mkstemp(opath), efd = mkstemp(epath), status;
	pid_t pid;

	ck_assert(ofd >= 0 && efd >= 0);
	unlink(opath);
	unlink(epath);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *args[16];
		int argc = 0;

		args[argc++] = "decode";
		while (*argv && argc < 15)
			args[argc++] = (char *)*argv++;
		args[argc] = NULL;
		/* The test runner may handle SIGALRM itself: here it must end the child. */
		signal(SIGALRM, SIG_DFL);
		alarm(DECODE_GUARD_S);
		if (!RUNNING_ON_VALGRIND) {
			/* An input that grows memory without bound fails fast, not the machine. */
			struct rlimit as = { 1ULL << 30, 1ULL << 30 };

			setrlimit(RLIMIT_AS, &as);
		}
		/* valgrind keeps descriptors of its own at the top and refuses a lower limit. */
		if (nofile && !RUNNING_ON_VALGRIND) {
			struct rlimit nf = { nofile, nofile };

			if (setrlimit(RLIMIT_NOFILE, &nf))
				_exit(99);
		}
		if (dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
			_exit(99);
		close(ofd);
		close(efd);
		status = cmd_decode.fn(argc, args);
		fflush(stdout);
		fflush(stderr);
		_exit(status);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*out = slurp_fd(ofd);
	*err = slurp_fd(efd);
	close(ofd);
	close(efd);
	if (WIFSIGNALED(status))
		return -WTERMSIG(status);
	return WEXITSTATUS(status);
}

#define MANY_RINGS 1500
#define BRANCH_LINE "{\"type\":\"branch\""

/*
 * More rings than file descriptors: 1,500 vCPUs under RLIMIT_NOFILE 256. Each ring has one
 * time and one branch; the times run backwards with the vCPU number, so the merged output
 * must list the branches from the last vCPU to the first.
 */
START_TEST(test_many_rings)
{
	const char *argv[] = { "--format", "jsonl", NULL, NULL };
	char dir[64], vm[256], *out, *err, *p;
	unsigned int next = MANY_RINGS, vcpu;
	int status;

	snprintf(dir, sizeof(dir), "/tmp/vbts-rings-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(vm, sizeof(vm), "{\"version\":1,\"vm_id\":\"ab\",\"vcpus\":%u}\n", MANY_RINGS);
	write_text(dir, "vm.json", vm);
	for (unsigned int i = 0; i < MANY_RINGS; i++) {
		struct vbts_record recs[] = {
			ESC(VBTS_ESC_TIME, 10 * (MANY_RINGS - i), 0),
			BR(0x1000 + i, 0x2000 + i, 0, VBTS_BR_JMP),
		};

		write_ring(dir, i, 4, recs, 2);
	}
	argv[2] = dir;
	status = run_decode(&out, &err, 256, argv);
	ck_assert_msg(status == 0, "exit %d, stderr: %s", status, err);
	ck_assert_str_eq(err, "");
	for (p = strstr(out, BRANCH_LINE); p; p = strstr(p + 1, BRANCH_LINE)) {
		ck_assert_int_eq(sscanf(p, BRANCH_LINE ",\"vcpu\":%u", &vcpu), 1);
		ck_assert_uint_gt(next, 0);
		ck_assert_uint_eq(vcpu, --next);
	}
	ck_assert_uint_eq(next, 0);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * The line reader on contents around its limits. Results as text: "LINE@N|" for line N,
 * "!@N|" for line N too long, "#|" for the size limit reached, "$" at the end.
 */
static const struct {
	const char *data;
	size_t len;             /* 0: strlen(data) */
	size_t line_max;
	uint64_t size_max;
	const char *want;
} line_cases[] = {
	{ "", 0, 4, 100, "$" },
	{ "a\nbb\n", 0, 4, 100, "a@1|bb@2|$" },
	{ "a\nbb", 0, 4, 100, "a@1|bb@2|$" },            /* no newline at the end */
	{ "\n\n", 0, 4, 100, "@1|@2|$" },
	{ "abcd\nabcde\nx\n", 0, 4, 100, "abcd@1|!@2|x@3|$" },
	{ "abcd", 0, 4, 100, "abcd@1|$" },
	{ "abcde", 0, 4, 100, "!@1|$" },
	{ "a\nbcdefghijklmnopqrstuvwxyz\nc\n", 0, 2, 100, "a@1|!@2|c@3|$" },
	{ "a\nb\nc\n", 0, 4, 4, "a@1|b@2|#|$" },        /* the size limit */
	{ "a\nb\ncd", 0, 4, 5, "a@1|b@2|#|$" },        /* a line cut by it is no line */
	{ "a\nb\nc", 0, 4, 5, "a@1|b@2|c@3|$" },
	{ "a\nb\n", 0, 4, 4, "a@1|b@2|$" },            /* exactly the limit */
	{ "a\nbcdefgh", 0, 2, 6, "a@1|!@2|#|$" },
	{ "a\0b\nc\n", 6, 4, 100, "a@1|c@2|$" },        /* NUL bytes stay in the line */
};

START_TEST(test_input_lines)
{
	char path[] = "/tmp/vbts-lines-XXXXXX", got[256], *line;
	size_t len, n = 0, data_len;
	struct input_lines *in;
	int fd, ret;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	data_len = line_cases[_i].len ? line_cases[_i].len : strlen(line_cases[_i].data);
	write_file(path, line_cases[_i].data, data_len);
	in = input_lines__open(path, line_cases[_i].line_max, line_cases[_i].size_max, NULL, 0);
	ck_assert_ptr_nonnull(in);
	got[0] = '\0';
	do {
		ret = input_lines__next(in, &line, &len);
		if (ret == 1) {
			ck_assert_uint_le(len, line_cases[_i].line_max);
			ck_assert_int_eq(line[len], '\0');
			n += snprintf(got + n, sizeof(got) - n, "%s@%llu|", line,
				      (unsigned long long)input_lines__lineno(in));
		} else if (ret == -E2BIG) {
			n += snprintf(got + n, sizeof(got) - n, "!@%llu|",
				      (unsigned long long)input_lines__lineno(in));
		} else if (ret == -EFBIG) {
			n += snprintf(got + n, sizeof(got) - n, "#|");
		} else {
			ck_assert_int_eq(ret, 0);
			n += snprintf(got + n, sizeof(got) - n, "$");
		}
		ck_assert_uint_lt(n, sizeof(got));
	} while (ret);
	ck_assert_int_eq(input_lines__next(in, &line, &len), 0);
	input_lines__close(in);
	ck_assert_str_eq(got, line_cases[_i].want);
	unlink(path);
}
END_TEST

Suite *inputs_suite(void)
{
	Suite *s = suite_create("inputs");
	TCase *tc = tcase_create("core");

	/* Hang guards are in the children; this one only bounds a whole test. */
	tcase_set_timeout(tc, 4 * DECODE_GUARD_S);
	tcase_add_loop_test(tc, test_input_lines, 0,
			    (int)(sizeof(line_cases) / sizeof(line_cases[0])));
	tcase_add_test(tc, test_many_rings);
	suite_add_tcase(s, tc);
	return s;
}
