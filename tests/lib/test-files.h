/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-files.h - whole-file reads and writes, directories and line counts for the Check
 * tests. An I/O error fails the running test (ck_assert) with the path and the error, so
 * callers check nothing (test__remove_tree() returns it instead, for a caller to assert on).
 */
#ifndef VBTS_TESTS_TEST_FILES_H
#define VBTS_TESTS_TEST_FILES_H

#include <stddef.h>
#include <stdio.h>

/**
 * test__slurp() - the whole file at @path in a malloc'd buffer, followed by a NUL byte (not
 * counted in *@len) so that a text file is a string.
 * @path: the file; it must exist and be readable, else the test fails.
 * @len: where the size in bytes goes; may be NULL.
 *
 * Return: the buffer; the caller frees it.
 */
void *test__slurp(const char *path, size_t *len);

/**
 * test__slurp_or_null() - test__slurp() of a file that may be missing.
 * @path: the file.
 * @len: where the size in bytes goes; may be NULL.
 *
 * Return: the buffer (the caller frees it), or NULL with errno set when @path cannot be
 * opened.
 */
void *test__slurp_or_null(const char *path, size_t *len);

/**
 * test__slurp_fd() - everything in @fd from offset 0 to its end, read with pread() (the file
 * offset is left where it was), in a malloc'd buffer followed by a NUL byte.
 * @fd: an open regular file.
 * @len: where the size in bytes goes; may be NULL.
 *
 * Return: the buffer; the caller frees it.
 */
void *test__slurp_fd(int fd, size_t *len);

/**
 * test__read_stream() - what has been written to @f so far (a tmpfile() standing in for an
 * output stream), from its start, as a string in @buf.
 * @f: the stream; it is flushed and rewound.
 * @buf: where the text goes, truncated to @size - 1 bytes and NUL-terminated.
 * @size: the size of @buf, at least 1.
 *
 * Return: the length of the text in @buf.
 */
size_t test__read_stream(FILE *f, char *buf, size_t size);

/**
 * test__write_file() - create or truncate the file @dir/@name and write @len bytes to it.
 * @dir: the directory, or NULL when @name is the whole path.
 * @name: the file's name in @dir (it may have directories of its own).
 * @data: the contents.
 * @len: their size in bytes.
 *
 * The file is created with mode 0644.
 */
void test__write_file(const char *dir, const char *name, const void *data, size_t len);

/**
 * test__write_text() - test__write_file() of the string @text (without its NUL byte).
 * @dir: the directory, or NULL when @name is the whole path.
 * @name: the file's name in @dir.
 * @text: the contents.
 */
void test__write_text(const char *dir, const char *name, const char *text);

/**
 * test__write_temp() - a new file from the mkstemp() template @path, holding @len bytes.
 * @path: a template ending in XXXXXX; it is changed to the new file's name.
 * @data: the contents.
 * @len: their size in bytes.
 */
void test__write_temp(char *path, const void *data, size_t len);

/**
 * test__copy_file() - the file @from copied to @dir/@name (created or truncated, mode 0644).
 * @from: the file to copy; it must exist.
 * @dir: the directory, or NULL when @name is the whole path.
 * @name: the copy's name in @dir.
 */
void test__copy_file(const char *from, const char *dir, const char *name);

/**
 * test__make_dir() - create the directory @dir/@name (mode 0755), in place of a file of that
 * name if there is one.
 * @dir: the directory it goes in, or NULL when @name is the whole path.
 * @name: its name in @dir (its parent must exist).
 */
void test__make_dir(const char *dir, const char *name);

/**
 * test__make_temp_dir() - create a new directory $TMPDIR/@name-XXXXXX (/tmp when TMPDIR is
 * unset or empty), as mkdtemp() does.
 * @buf: receives its path; the test fails when it does not fit.
 * @size: the size of @buf.
 * @name: the start of the directory's name.
 */
void test__make_temp_dir(char *buf, size_t size, const char *name);

/**
 * test__remove_tree() - remove @dir and everything under it, as `rm -rf` does.
 * @dir: the directory (or file); that it does not exist is not an error.
 *
 * Return: 0, or -errno of the first entry that could not be removed (the walk stops there).
 */
int test__remove_tree(const char *dir);

/**
 * test__count_lines() - the number of newline characters in the string @s.
 * @s: the text.
 *
 * Return: how many lines @s has, counting only those that end in a newline.
 */
size_t test__count_lines(const char *s);

#endif /* VBTS_TESTS_TEST_FILES_H */
