// SPDX-License-Identifier: GPL-2.0
/*
 * test-files.c - whole-file reads and writes, directories and line counts for the Check tests,
 * failing the test on an I/O error.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "test-files.h"

/*
 * @fd's contents up to its end: from offset 0 with pread() when @positional, else from its
 * file offset on. @what names the file in a failure.
 */
static void *read_to_end(int fd, bool positional, size_t *len, const char *what)
{
	size_t size = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	for (;;) {
		if (size == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
		n = positional ? pread(fd, buf + size, cap - size, (off_t)size) :
				 read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_msg(n >= 0, "%s: %s", what, strerror(errno));
		if (!n)
			break;
		size += (size_t)n;
	}
	buf[size] = '\0';
	if (len)
		*len = size;
	return buf;
}

void *test__slurp_or_null(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *buf;

	if (fd < 0)
		return NULL;
	buf = read_to_end(fd, false, len, path);
	close(fd);
	return buf;
}

void *test__slurp(const char *path, size_t *len)
{
	void *buf = test__slurp_or_null(path, len);

	ck_assert_msg(buf, "%s: %s", path, strerror(errno));
	return buf;
}

void *test__slurp_fd(int fd, size_t *len)
{
	return read_to_end(fd, true, len, "slurp_fd");
}

size_t test__read_stream(FILE *f, char *buf, size_t size)
{
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	return n;
}

/* @dir/@name in @path (PATH_MAX bytes), or @name alone when @dir is NULL. */
static const char *join(char *path, const char *dir, const char *name)
{
	if (!dir)
		return name;
	ck_assert_int_lt(snprintf(path, PATH_MAX, "%s/%s", dir, name), PATH_MAX);
	return path;
}

void test__write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char buf[PATH_MAX];
	const char *path = join(buf, dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, data, len) == (ssize_t)len, "%s: short write", path);
	ck_assert_msg(close(fd) == 0, "%s: %s", path, strerror(errno));
}

void test__write_text(const char *dir, const char *name, const char *text)
{
	test__write_file(dir, name, text, strlen(text));
}

void test__write_temp(char *path, const void *data, size_t len)
{
	int fd = mkstemp(path);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_msg(write(fd, data, len) == (ssize_t)len, "%s: short write", path);
	ck_assert_msg(close(fd) == 0, "%s: %s", path, strerror(errno));
}

void test__copy_file(const char *from, const char *dir, const char *name)
{
	size_t len;
	void *buf = test__slurp(from, &len);

	test__write_file(dir, name, buf, len);
	free(buf);
}

void test__make_dir(const char *dir, const char *name)
{
	char buf[PATH_MAX];
	const char *path = join(buf, dir, name);

	unlink(path);
	ck_assert_msg(!mkdir(path, 0755), "%s: %s", path, strerror(errno));
}

void test__make_temp_dir(char *buf, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	int n = snprintf(buf, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);

	ck_assert_msg(n >= 0 && (size_t)n < size, "%s: too long a path", buf);
	ck_assert_msg(mkdtemp(buf), "%s: %s", buf, strerror(errno));
}

/* nftw() callback of test__remove_tree(): remove one entry, children before their parent. */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -errno : 0;
}

int test__remove_tree(const char *dir)
{
	struct stat st;
	int ret;

	if (lstat(dir, &st))
		return errno == ENOENT ? 0 : -errno;
	ret = nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	if (ret == -1)
		return -errno;
	return ret;
}

size_t test__count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}
