/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loader.h - boot images: a table of formats (multiboot v1 ELF32, Linux bzImage, PVH ELF),
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

/* Largest image file read; largest initrd (never more than guest memory either). */
#define LOADER_MAX_FILE (256ULL << 20)
#define LOADER_MAX_INITRD (1ULL << 30)

#define LOADER_BUILD_ID_MAX 64 /* bytes of a GNU build ID kept */

/**
 * struct loaded_image - the result of loading an image.
 * @format:   name of the format that took it ("multiboot")
 * @boot:     initial state of the boot vCPU
 * @entry:    entry point
 * @build_id: GNU build ID as lowercase hex, "" when the image has none
 * @pc:       the guest is an operating system that needs the PC platform (interrupt
 *            controllers, timer, ACPI devices; every vCPU started by the guest itself)
 * @error:    on failure, one line saying what is wrong with the image
 */
struct loaded_image {
	const char *format;
	struct vcpu_boot boot;
	uint64_t entry;
	char build_id[2 * LOADER_BUILD_ID_MAX + 1];
	bool pc;
	char error[256];
};

/**
 * loaded_image__fail() - say in @out->error what is wrong with the image, printf-style.
 * @out: the load result
 * @err: what to return
 * @fmt: the message (one line)
 *
 * Return: @err, so a loader can `return loaded_image__fail(out, -EINVAL, ...)`.
 */
int loaded_image__fail(struct loaded_image *out, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * struct loader_config - what is handed to the guest besides the image.
 * @cmdline:    the command line (NUL-terminated)
 * @initrd:     initial RAM disk bytes (untrusted size), NULL when none
 * @initrd_len: their number
 * @nr_vcpus:   vCPUs of the VM (described in the firmware tables)
 */
struct loader_config {
	const char *cmdline;
	const uint8_t *initrd;
	size_t initrd_len;
	unsigned int nr_vcpus;
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
	int (*load)(const uint8_t *img, size_t len, const struct loader_config *cfg,
		    struct guest_memory *mem, struct loaded_image *out);
};

/* Multiboot v1, ELF32 (multiboot.c). */
extern const struct loader_format multiboot_format;
/* Linux: bzImage through the 64-bit boot protocol, vmlinux through PVH (boot/linux.c). */
extern const struct loader_format bzimage_format;
extern const struct loader_format pvh_format;

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
 * loader__load_config() - loader__load() with an initrd and the VM's vCPU count.
 * @img: image bytes (untrusted)
 * @len: their number
 * @cfg: command line, initrd, vCPUs
 * @mem: guest memory
 * @out: filled in; @out->error says what is wrong on failure
 *
 * Return: as loader__load(); -EINVAL when the format takes no initrd.
 */
int loader__load_config(const uint8_t *img, size_t len, const struct loader_config *cfg,
			struct guest_memory *mem, struct loaded_image *out);

/**
 * loader__load_files() - read a kernel and an initrd and load them.
 * @kernel:   image file
 * @initrd:   initial RAM disk file, NULL for none
 * @append:   the command line; NULL for the format's default (multiboot: the image path,
 *            followed by @append when given, as QEMU builds it)
 * @nr_vcpus: vCPUs of the VM
 * @mem:      guest memory
 * @out:      filled in; @out->error names the file and the problem on failure
 *
 * Return: as loader__load_config(), plus -errno from reading the files.
 */
int loader__load_files(const char *kernel, const char *initrd, const char *append,
		       unsigned int nr_vcpus, struct guest_memory *mem, struct loaded_image *out);

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
