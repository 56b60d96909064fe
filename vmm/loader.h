/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader.h - boot images: a table of formats (multiboot v1 ELF32 now; bzImage can plug in),
 * each validating the untrusted image and placing it in guest memory with its boot state.
 */
#ifndef VBTS_VMM_LOADER_H
#define VBTS_VMM_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vcpu.h"

struct guest_memory;

/* The loader's own area in low memory: GDT, then the boot information. Images may not
 * overlap it. */
#define BOOT_AREA_START 0x8000ULL
#define BOOT_GDT_GPA 0x8000ULL
#define BOOT_INFO_GPA 0x9000ULL
#define BOOT_AREA_END 0xa000ULL

/* Largest image file read (and never more than guest memory). */
#define LOADER_MAX_FILE (256ULL << 20)

#define LOADER_BUILD_ID_MAX 64 /* bytes of a GNU build ID kept */

/**
 * struct loaded_image - the result of loading an image.
 * @format:   name of the format that took it ("multiboot")
 * @boot:     initial state of the boot vCPU
 * @entry:    entry point
 * @build_id: GNU build ID as lowercase hex, "" when the image has none
 * @error:    on failure, one line saying what is wrong with the image
 */
struct loaded_image {
	const char *format;
	struct vcpu_boot boot;
	uint64_t entry;
	char build_id[2 * LOADER_BUILD_ID_MAX + 1];
	char error[256];
};

/**
 * struct loader_format - one image format.
 * @name:  format name
 * @probe: true when @img looks like this format (cheap, no validation)
 * @load:  validate and load into @mem; 0, or -ENOEXEC/-EINVAL/-E2BIG with @out->error set
 */
struct loader_format {
	const char *name;
	bool (*probe)(const uint8_t *img, size_t len);
	int (*load)(const uint8_t *img, size_t len, const char *cmdline,
		    struct guest_memory *mem, struct loaded_image *out);
};

/* Multiboot v1, ELF32 (multiboot.c). */
extern const struct loader_format multiboot_format;

/**
 * loader__load() - load an image held in memory with the first format that recognizes it.
 * @img:     image bytes (untrusted)
 * @len:     their number
 * @cmdline: the command line handed to the guest
 * @mem:     guest memory
 * @out:     filled in; @out->error says what is wrong on failure
 *
 * Return: 0; -ENOEXEC when no format recognizes the image or it is not valid for its format
 * (bad input), -E2BIG when it does not fit in guest memory (bad input).
 */
int loader__load(const uint8_t *img, size_t len, const char *cmdline, struct guest_memory *mem,
		 struct loaded_image *out);

/**
 * loader__load_file() - read @path and loader__load() it; the command line is the path.
 * @path: image file: a regular file no larger than guest memory and LOADER_MAX_FILE (anything
 *        else is refused without waiting, a FIFO included)
 * @mem:  guest memory
 * @out:  filled in; @out->error names the problem on failure
 *
 * Return: as loader__load(), plus -EINVAL when @path is not a regular file, -E2BIG when it is
 * too large, -errno from reading it (each with @out->error set).
 */
int loader__load_file(const char *path, struct guest_memory *mem, struct loaded_image *out);

/**
 * loader__build_id() - find an NT_GNU_BUILD_ID note in an ELF32 or ELF64 image.
 * @img: image bytes (untrusted)
 * @len: their number
 * @hex: receives the ID as lowercase hex, "" when absent; 2 * LOADER_BUILD_ID_MAX + 1 bytes
 */
void loader__build_id(const uint8_t *img, size_t len, char *hex);

#endif /* VBTS_VMM_LOADER_H */
