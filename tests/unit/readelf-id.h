/* SPDX-License-Identifier: GPL-2.0 */
/*
 * readelf-id.h - an ELF file's GNU build ID as binutils' readelf prints it: an independent
 * reader for the tests of the VMM's own (tests only).
 */
#ifndef VBTS_TESTS_UNIT_READELF_ID_H
#define VBTS_TESTS_UNIT_READELF_ID_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/**
 * readelf_id__get() - the build ID of @path, in hex, as `readelf -n` prints it.
 * @path: the ELF file (no single quote in it)
 * @out:  where the hex digits go, NUL-terminated
 * @len:  the size of @out
 *
 * Fails the test when readelf prints no build ID.
 */
static inline void readelf_id__get(const char *path, char *out, size_t len)
{
	char cmd[512], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && !found) {
			snprintf(out, len, "%s", s + 10);
			out[strcspn(out, " \n")] = '\0';
			found = true;
		}
	}
	pclose(p);
	ck_assert(found);
}

#endif /* VBTS_TESTS_UNIT_READELF_ID_H */
