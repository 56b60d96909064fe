/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share: the entry points libFuzzer calls,
 * invariant checks that end the run as a finding, and input bytes as a file.
 */
#ifndef VBTS_TESTS_FUZZ_H
#define VBTS_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * An invariant of the code under test does not hold for this input: abort, so that libFuzzer
 * reports it like a sanitizer finding and keeps the input as the reproducer.
 */
#define FUZZ_ASSERT(cond)                                                                      \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: %s: invariant '%s' does not hold\n", __FILE__, \
				__LINE__, __func__, #cond);                                    \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* Writes all of @data to @fd; returns 0 or -1. */
static inline int fuzz_write_all(int fd, const uint8_t *data, size_t size)
{
	while (size) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			return -1;
		data += n;
		size -= (size_t)n;
	}
	return 0;
}

/*
 * The input as an anonymous regular file, for code that opens paths: returns the memfd and
 * its name in /proc/self/fd (@path, 32 bytes), or -1.
 */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path)
{
	int fd = memfd_create("vbts-fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fuzz_write_all(fd, data, size)) {
		close(fd);
		return -1;
	}
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* VBTS_TESTS_FUZZ_H */
