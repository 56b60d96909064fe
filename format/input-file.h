/* SPDX-License-Identifier: GPL-2.0 */
/*
 * input-file.h - open and read the untrusted files of a trace directory with bounds.
 *
 * Every input of `vbts decode` (vm.json, the ring files, events.jsonl, the guest image) must be
 * a regular file of bounded size. A FIFO would block the open forever, a device such as
 * /dev/zero or /dev/urandom never ends, and a directory or socket cannot be read at all: all
 * of them are refused before a byte is read, whether named directly or through a symbolic
 * link. Files are opened with O_NONBLOCK, so not even the open can block on a file that turns
 * into a FIFO between the check and the open; the type is checked again on the open
 * descriptor. Read errors are errors, never taken for the end of the file.
 *
 * Error lines name the file as it was given: "PATH: what is wrong".
 */
#ifndef VBTS_FORMAT_INPUT_FILE_H
#define VBTS_FORMAT_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/**
 * input_file__open() - open a regular file of at most @max_size bytes for reading.
 * @path:     the file; a symbolic link is followed, what it leads to must be a regular file
 * @max_size: largest size accepted, in bytes (UINT64_MAX: any)
 * @st:       receives the fstat of the open descriptor, may be NULL
 * @err:      receives one error line on failure ("PATH: not a regular file (a FIFO)"), may be
 *            NULL
 * @errlen:   size of @err
 *
 * Return: the descriptor (O_RDONLY | O_NONBLOCK | O_CLOEXEC), or -errno: -ENOENT and the
 * other errors of stat(2) and open(2), -EINVAL for anything but a regular file, -EFBIG for a
 * file larger than @max_size.
 */
int input_file__open(const char *path, uint64_t max_size, struct stat *st, char *err,
		     size_t errlen);

/**
 * input_file__open_entry() - open a regular file of a trace directory by its own name, for
 * reading, without following a symbolic link: what a reader that runs beside the writer (the
 * control socket's views, the VMM's own reads back) opens, where nothing may block.
 * @path:   the file
 * @st:     receives the fstat of the open descriptor, may be NULL
 * @err:    receives one error line on failure ("PATH: not a regular file (a FIFO)"), may be
 *          NULL
 * @errlen: size of @err
 *
 * Like input_file__open() without a size limit, but a symbolic link is refused, not followed.
 *
 * Return: the descriptor (O_RDONLY | O_NONBLOCK | O_CLOEXEC), or -errno: -ENOENT and the other
 * errors of lstat(2) and open(2), -ELOOP for a symbolic link, -EINVAL for anything else that is
 * not a regular file.
 */
int input_file__open_entry(const char *path, struct stat *st, char *err, size_t errlen);

/**
 * input_file__read() - read a whole regular file of at most @max_size bytes.
 * @path:     the file
 * @max_size: largest size accepted, in bytes
 * @buf:      receives the contents, NUL-terminated (free() it)
 * @len:      receives the length without the NUL
 * @err:      receives one error line on failure, may be NULL
 * @errlen:   size of @err
 *
 * A file that grows past @max_size while it is read is refused like one that was too large
 * from the start.
 *
 * Return: 0, or -errno: the errors of input_file__open(), -EIO and the other errors of
 * read(2), -ENOMEM.
 */
int input_file__read(const char *path, size_t max_size, char **buf, size_t *len, char *err,
		     size_t errlen);

struct input_lines;

/**
 * input_lines__open() - read a regular file line by line, with bounds.
 * @path:     the file
 * @line_max: longest line returned, in bytes without the newline
 * @size_max: bytes read at most; the rest of a larger file is not read
 * @err:      receives one error line on failure, may be NULL
 * @errlen:   size of @err
 *
 * Memory stays bounded by @line_max whatever the file holds.
 *
 * Return: the reader, or NULL with errno set: the errors of input_file__open() (the size is
 * not checked there: the file may still be growing), ENOMEM.
 */
struct input_lines *input_lines__open(const char *path, size_t line_max, uint64_t size_max,
				      char *err, size_t errlen);

/**
 * input_lines__next() - the next line.
 * @in:   reader
 * @line: receives the line without its newline, NUL-terminated, valid until the next call
 *        (it may contain NUL bytes of its own: use @len)
 * @len:  receives its length
 *
 * A last line without a newline is returned like the others, unless the size limit cut it.
 *
 * Return: 1 for a line; 0 at the end of the file; -E2BIG for a line longer than the limit,
 * which is skipped (input_lines__lineno() is its number, the next call goes on after it);
 * -EFBIG once the size limit is reached with more to read (the rest is not read; the next
 * call returns 0); -EIO and the other errors of read(2), after which the reader is finished
 * (the next call returns 0).
 */
int input_lines__next(struct input_lines *in, char **line, size_t *len);

/**
 * input_lines__lineno() - the number of the line last returned or skipped (1-based).
 * @in: reader
 *
 * Return: the line number, 0 before the first line.
 */
uint64_t input_lines__lineno(const struct input_lines *in);

/**
 * input_lines__close() - close the file and free the reader.
 * @in: reader, may be NULL
 */
void input_lines__close(struct input_lines *in);

#endif /* VBTS_FORMAT_INPUT_FILE_H */
