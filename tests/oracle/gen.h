/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gen.h - runs an image under QEMU TCG with the execution log and caches its branch list.
 */
#ifndef VBTS_ORACLE_GEN_H
#define VBTS_ORACLE_GEN_H

#include <stddef.h>

/* Bump when the parser's output changes: cached lists of older versions are not used. */
#define ORACLE_LIST_VERSION 1

/**
 * struct gen_opts - how to run QEMU.
 * @qemu:      the qemu-system-x86_64 binary (looked up in PATH)
 * @cache_dir: where lists live, one per image content: <dir>/<key>.jsonl
 * @dfilter:   log only the image's loaded range (-dfilter): the BIOS's millions of
 *             instructions are not logged; an image that branches outside itself needs 0
 * @keep_log:  keep QEMU's log next to the list (<key>.log)
 * @timeout_s: QEMU is killed after this many seconds
 */
struct gen_opts {
	const char *qemu;
	const char *cache_dir;
	int dfilter;
	int keep_log;
	unsigned int timeout_s;
};

/**
 * oracle__cache_key() - the cache key of the image at @path: list version, content hash and
 * size, written to @key (at least 48 bytes).
 * Returns 0 or -errno of reading the file.
 */
int oracle__cache_key(const char *path, char *key, size_t keylen);

/**
 * oracle__generate() - the branch list of @image: from the cache, else by running QEMU.
 * The list's path goes to @out (size @outlen); @err (size @errlen) says why on failure.
 * Returns 0; -ENOENT when QEMU is not installed; -ENOEXEC for an image that is not an ELF
 * with an entry point; -ETIMEDOUT when QEMU ran too long; -EPROTO for a log the parser
 * cannot follow or that never reaches the entry point; other -errno of file operations.
 */
int oracle__generate(const char *image, const struct gen_opts *o, char *out, size_t outlen,
		     char *err, size_t errlen);

#endif /* VBTS_ORACLE_GEN_H */
