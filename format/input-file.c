// SPDX-License-Identifier: GPL-2.0
/*
 * input-file.c - bounded opening and reading of the untrusted files of a trace directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input-file.h"

struct input_lines {
	int fd;
	char *buf;              /* line_max + 2 bytes: a line, its newline, room for a NUL */
	size_t line_max;
	size_t start, end;      /* the bytes read and not returned yet */
	uint64_t size_max;
	uint64_t total;         /* bytes read, at most size_max */
	uint64_t lineno;
	bool skipping;          /* inside a line that was too long */
	bool eof;               /* nothing more to read: end of file or size_max reached */
	bool cut;               /* size_max reached with more to read */
	bool done;
};

static void __attribute__((format(printf, 3, 4))) set_err(char *err, size_t errlen,
							  const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static const char *file_type(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "of an unknown type";
}

/*
 * Open @path for reading if it is a regular file of at most @max_size bytes; @follow: a
 * symbolic link is followed (else refused). stat() or lstat() first, so that a device or FIFO
 * is not even opened (opening some devices has effects of its own); the fstat() decides.
 */
static int open_regular(const char *path, bool follow, uint64_t max_size, struct stat *st,
			char *err, size_t errlen)
{
	struct stat st_path, st_fd;
	int fd, ret;

	if (follow ? stat(path, &st_path) : lstat(path, &st_path)) {
		ret = -errno;
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (S_ISLNK(st_path.st_mode)) {
		set_err(err, errlen, "%s: a symbolic link, not followed", path);
		return -ELOOP;
	}
	if (!S_ISREG(st_path.st_mode)) {
		set_err(err, errlen, "%s: not a regular file (%s)", path,
			file_type(st_path.st_mode));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP && !follow)
			set_err(err, errlen, "%s: a symbolic link, not followed", path);
		else
			set_err(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st_fd)) {
		ret = -errno;
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		goto err_close;
	}
	if (!S_ISREG(st_fd.st_mode)) {
		ret = -EINVAL;
		set_err(err, errlen, "%s: not a regular file (%s)", path,
			file_type(st_fd.st_mode));
		goto err_close;
	}
	if ((uint64_t)st_fd.st_size > max_size) {
		ret = -EFBIG;
		set_err(err, errlen, "%s: %" PRIu64 " bytes, larger than the limit of %" PRIu64,
			path, (uint64_t)st_fd.st_size, max_size);
		goto err_close;
	}
	if (st)
		*st = st_fd;
	return fd;

err_close:
	close(fd);
	return ret;
}

int input_file__open(const char *path, uint64_t max_size, struct stat *st, char *err,
		     size_t errlen)
{
	return open_regular(path, true, max_size, st, err, errlen);
}

int input_file__open_entry(const char *path, struct stat *st, char *err, size_t errlen)
{
	return open_regular(path, false, UINT64_MAX, st, err, errlen);
}

int input_file__read(const char *path, size_t max_size, char **bufp, size_t *lenp, char *err,
		     size_t errlen)
{
	size_t cap, len = 0;
	struct stat st;
	char *buf, *nbuf;
	ssize_t n;
	int fd, ret;

	fd = input_file__open(path, max_size, &st, err, errlen);
	if (fd < 0)
		return fd;
	/* One byte more than expected, to see a file that grew: at most max_size + 1. */
	cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 1);
	if (!buf) {
		ret = -ENOMEM;
		set_err(err, errlen, "%s: out of memory", path);
		goto err_close;
	}
	for (;;) {
		if (len == cap) {
			if (cap > max_size) {
				ret = -EFBIG;
				set_err(err, errlen, "%s: grew past the limit of %zu bytes "
					"while it was read", path, max_size);
				goto err_free;
			}
			cap = cap > max_size / 2 ? max_size + 1 : cap * 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				ret = -ENOMEM;
				set_err(err, errlen, "%s: out of memory", path);
				goto err_free;
			}
			buf = nbuf;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			set_err(err, errlen, "%s: read: %s", path, strerror(-ret));
			goto err_free;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;

err_free:
	free(buf);
err_close:
	close(fd);
	return ret;
}

struct input_lines *input_lines__open(const char *path, size_t line_max, uint64_t size_max,
				      char *err, size_t errlen)
{
	struct input_lines *in;
	int fd;

	fd = input_file__open(path, UINT64_MAX, NULL, err, errlen);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	in = calloc(1, sizeof(*in));
	if (!in || line_max > SIZE_MAX - 2)
		goto err_nomem;
	in->buf = malloc(line_max + 2);
	if (!in->buf)
		goto err_nomem;
	in->fd = fd;
	in->line_max = line_max;
	in->size_max = size_max;
	return in;

err_nomem:
	free(in);
	close(fd);
	set_err(err, errlen, "%s: out of memory", path);
	errno = ENOMEM;
	return NULL;
}

/* Reads more into the buffer, after the bytes not returned yet. Returns 0 or -errno. */
static int fill(struct input_lines *in)
{
	size_t room;
	uint64_t left;
	ssize_t n;

	if (in->start) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	/* Callers leave at most line_max bytes: room >= 1. Read one byte past size_max. */
	room = in->line_max + 1 - in->end;
	left = in->size_max - in->total;
	if (left < room)
		room = (size_t)left + 1;
	do
		n = read(in->fd, in->buf + in->end, room);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0) {
		in->eof = true;
		return 0;
	}
	in->end += (size_t)n;
	in->total += (uint64_t)n;
	if (in->total > in->size_max) {
		in->end -= (size_t)(in->total - in->size_max);
		in->total = in->size_max;
		in->eof = true;
		in->cut = true;
	}
	return 0;
}

int input_lines__next(struct input_lines *in, char **line, size_t *len)
{
	int ret;

	for (;;) {
		char *nl;

		if (in->done)
			return 0;
		nl = memchr(in->buf + in->start, '\n', in->end - in->start);
		if (nl) {
			char *l = in->buf + in->start;

			in->start = (size_t)(nl - in->buf) + 1;
			if (in->skipping) {
				in->skipping = false;
				continue;
			}
			*nl = '\0';
			*line = l;
			*len = (size_t)(nl - l);
			in->lineno++;
			return 1;
		}
		if (in->skipping) {
			in->start = in->end = 0;
		} else if (in->end - in->start > in->line_max) {
			in->lineno++;
			in->skipping = true;
			in->start = in->end = 0;
			return -E2BIG;
		}
		if (in->eof) {
			in->done = true;
			if (in->cut)
				return -EFBIG;  /* a line cut by the limit is not a line */
			if (in->skipping || in->end == in->start)
				return 0;
			/* The last line has no newline (a writer killed mid-line, say). */
			in->buf[in->end] = '\0';
			*line = in->buf + in->start;
			*len = in->end - in->start;
			in->start = in->end;
			in->lineno++;
			return 1;
		}
		ret = fill(in);
		if (ret) {
			in->done = true;
			return ret;
		}
	}
}

uint64_t input_lines__lineno(const struct input_lines *in)
{
	return in->lineno;
}

void input_lines__close(struct input_lines *in)
{
	if (!in)
		return;
	close(in->fd);
	free(in->buf);
	free(in);
}
