/* SPDX-License-Identifier: GPL-2.0 */
/*
 * image-mem.h - read-only guest memory made of ELF images' loadable segments, each at the
 * virtual address it was linked for: what a post-mortem stub can show of a guest's code.
 */
#ifndef VBTS_GDBSTUB_IMAGE_MEM_H
#define VBTS_GDBSTUB_IMAGE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest ELF file mapped, and largest segment (a guest's code, not its disk). */
#define IMAGE_MEM_FILE_MAX (1ULL << 30)

struct image_mem;

/**
 * struct image_mem_file - an ELF file mapped, as a debugger's library list and auxiliary
 * vector tell it.
 * @path:    the file (host path, as it was given)
 * @bias:    run-time minus link-time address, modulo 2^64
 * @entry:   its entry point, run-time address
 * @phdr:    run-time address of its program headers, 0 when no loadable segment holds them
 * @phnum:   how many program headers
 * @dynamic: run-time address of its dynamic section (PT_DYNAMIC), 0 when it has none
 * @low:     run-time address of its first loadable segment (the lowest p_vaddr)
 * @program: it can be a process's program: ET_EXEC, or a PT_INTERP (a PIE; libc has one too)
 */
struct image_mem_file {
	char *path;
	uint64_t bias, entry, phdr, dynamic, low;
	unsigned int phnum;
	bool program;
};

/**
 * image_mem__new() - an empty memory: every read fails.
 *
 * Return: the memory, or NULL with errno ENOMEM.
 */
struct image_mem *image_mem__new(void);

/**
 * image_mem__add_elf() - map the PT_LOAD segments of an ELF file (their file bytes, then
 * zeros up to their memory size) at their virtual addresses. Segments added earlier win
 * where they overlap.
 * @m:    the memory
 * @path: the ELF file (a regular file of at most IMAGE_MEM_FILE_MAX bytes)
 *
 * Return: 0, or -errno: -ENOENT, -EACCES (open), -EINVAL (not a regular file or not an ELF
 * file), -EFBIG, -EIO, -ENOMEM.
 */
int image_mem__add_elf(struct image_mem *m, const char *path);

/**
 * image_mem__add_elf_loaded() - image_mem__add_elf() of a program loaded elsewhere than it
 * was linked for: its segments moved so that its lowest one (page aligned) starts at
 * @load_base.
 * @m:         the memory
 * @path:      the ELF file
 * @load_base: where its lowest loadable segment was mapped (a Linux exec's load base)
 *
 * Return: as image_mem__add_elf(), and -EINVAL for a file without a loadable segment.
 */
int image_mem__add_elf_loaded(struct image_mem *m, const char *path, uint64_t load_base);

/**
 * image_mem__add_elf_biased() - image_mem__add_elf() of a file mapped @bias bytes above its
 * link addresses (a shared library, as the guest agent reported its mapping).
 * @m:    the memory
 * @path: the ELF file
 * @bias: run-time minus link-time address, modulo 2^64
 *
 * Return: as image_mem__add_elf().
 */
int image_mem__add_elf_biased(struct image_mem *m, const char *path, uint64_t bias);

/**
 * image_mem__add_elf_mapped() - image_mem__add_elf() of a file whose offset @offset was
 * mapped at @start (a mapping /proc/PID/maps or the guest agent reports).
 * @m:      the memory
 * @path:   the ELF file
 * @start:  the mapping's first address
 * @offset: the file offset mapped there
 *
 * Return: as image_mem__add_elf(), and -EINVAL when no loadable segment holds @offset.
 */
int image_mem__add_elf_mapped(struct image_mem *m, const char *path, uint64_t start,
			     uint64_t offset);

/**
 * image_mem__read() - copy guest memory from @addr on.
 * @m:    the memory
 * @addr: guest virtual address
 * @buf:  receives the bytes
 * @len:  how many are wanted
 *
 * Return: how many bytes from @addr on are mapped and were copied (0: @addr is not mapped).
 */
size_t image_mem__read(const struct image_mem *m, uint64_t addr, void *buf, size_t len);

/**
 * image_mem__nr_files() - how many ELF files were mapped (image_mem__add_elf*() that
 * succeeded), in the order they were added.
 * @m: the memory
 *
 * Return: the count.
 */
size_t image_mem__nr_files(const struct image_mem *m);

/**
 * image_mem__file() - the @i-th file mapped.
 * @m: the memory
 * @i: below image_mem__nr_files()
 *
 * Return: the file (the memory's, until image_mem__free()).
 */
const struct image_mem_file *image_mem__file(const struct image_mem *m, size_t i);

/**
 * image_mem__free() - release the memory.
 * @m: the memory, may be NULL
 */
void image_mem__free(struct image_mem *m);

#endif /* VBTS_GDBSTUB_IMAGE_MEM_H */
