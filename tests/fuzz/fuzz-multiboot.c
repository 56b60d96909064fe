// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-multiboot.c - libFuzzer target: an input is a boot image, loaded by loader__load() (the
 * multiboot v1 loader) into a small guest memory, and scanned for its GNU build ID.
 *
 * Beyond the sanitizers it checks what loader.h promises: a refused image gets -ENOEXEC or
 * -E2BIG and one printable error line; a loaded one has its entry point in guest RAM; a build
 * ID is an even number of lowercase hex digits.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "loader.h"
#include "memory.h"

#define RAM (16ULL << 20)

static struct guest_memory *mem;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	mem = guest_memory__create(RAM);
	if (!mem)
		abort();
	return 0;
}

static void check_line(const char *s)
{
	for (; *s; s++)
		FUZZ_ASSERT(*s >= 0x20 && *s < 0x7f);
}

static void check_build_id(const char *hex)
{
	size_t n = strlen(hex);

	FUZZ_ASSERT(n % 2 == 0 && n <= 2 * LOADER_BUILD_ID_MAX);
	for (; *hex; hex++)
		FUZZ_ASSERT(isdigit((unsigned char)*hex) || (*hex >= 'a' && *hex <= 'f'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hex[2 * LOADER_BUILD_ID_MAX + 1];
	struct loaded_image out;
	int ret;

	ret = loader__load(data, size, "fuzz", mem, &out);
	if (ret) {
		FUZZ_ASSERT(ret == -ENOEXEC || ret == -E2BIG);
		FUZZ_ASSERT(out.error[0]);
		check_line(out.error);
	} else {
		FUZZ_ASSERT(out.format);
		FUZZ_ASSERT(out.entry < guest_memory__low_size(mem));
		FUZZ_ASSERT(out.boot.rip == out.entry);
		check_build_id(out.build_id);
	}
	loader__build_id(data, size, hex);
	check_build_id(hex);
	return 0;
}
