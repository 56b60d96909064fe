// SPDX-License-Identifier: GPL-2.0
/*
 * test-inputs.c - how `vbts decode` reads its inputs: the bounded line reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder-test.h"
#include "input-file.h"

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

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

	tcase_add_loop_test(tc, test_input_lines, 0,
			    (int)(sizeof(line_cases) / sizeof(line_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}
