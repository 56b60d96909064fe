/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elfsec.h - the sections of a little-endian ELF64 file held in memory, found by name, with
 * every header field checked against the file's size.
 */
#ifndef VBTS_VMM_INTROSPECT_ELFSEC_H
#define VBTS_VMM_INTROSPECT_ELFSEC_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct elf_section - one section.
 * @addr: its link-time virtual address (sh_addr)
 * @size: bytes (sh_size)
 * @data: its bytes inside the file, or NULL for SHT_NOBITS
 */
struct elf_section {
	uint64_t addr;
	uint64_t size;
	const uint8_t *data;
};

/**
 * elfsec__find() - find a section by name.
 * @elf:  the file's bytes
 * @size: bytes at @elf
 * @name: section name, e.g. ".BTF"
 * @out:  the section
 *
 * Return: 0; -ENOEXEC when @elf is not a little-endian ELF64 file with sane section headers;
 * -ENOENT when no section has that name; -EINVAL when the section's bytes lie outside the file.
 */
int elfsec__find(const uint8_t *elf, size_t size, const char *name, struct elf_section *out);

/**
 * elfsec__at() - the file bytes a section holds at a link-time virtual address.
 * @elf:  the file's bytes
 * @size: bytes at @elf
 * @va:   the address (sh_addr-based: the sections of an executable such as vmlinux)
 * @len:  bytes wanted, all in one section
 *
 * Return: a pointer to @len bytes inside @elf, or NULL when no allocated section with file
 * contents holds all of [@va, @va + @len), or @elf is no sane little-endian ELF64 file.
 */
const uint8_t *elfsec__at(const uint8_t *elf, size_t size, uint64_t va, size_t len);

#endif /* VBTS_VMM_INTROSPECT_ELFSEC_H */
