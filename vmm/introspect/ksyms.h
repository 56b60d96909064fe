/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms.h - link-time addresses of a few named kernel symbols, from a System.map file or from the
 * exported-symbol table (__ksymtab, __ksymtab_gpl) of the vmlinux ELF itself.
 *
 * Debian's linux-image packages ship a placeholder System.map (the real one is in the -dbg
 * package); every symbol introspection needs except entry_SYSCALL_64 is exported, so the
 * vmlinux alone is enough when the KASLR slide is found another way.
 */
#ifndef VBTS_VMM_INTROSPECT_KSYMS_H
#define VBTS_VMM_INTROSPECT_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest System.map line considered (the kernel's KSYM_NAME_LEN is 512). */
#define KSYMS_LINE_MAX 600

/**
 * struct ksym_want - one symbol looked up.
 * @name:  its name
 * @addr:  result: its link-time address (per-CPU symbols: the offset in the per-CPU area)
 * @found: result: whether @addr is set
 * @global: result: whether the line that set it had an upper-case (global) type
 */
struct ksym_want {
	const char *name;
	uint64_t addr;
	bool found;
	bool global;
};

/**
 * ksyms__from_system_map() - look symbols up in a System.map ("<hex> <type> <name>" lines).
 * @path: the file
 * @want: the symbols; entries already found are overwritten
 * @n:    entries at @want
 * @lines: result: the number of well-formed symbol lines in the file (0 for Debian's
 *        placeholder); may be NULL
 *
 * Malformed and over-long lines are skipped. When a name appears more than once, the first
 * global (upper-case type) line wins, else the first line.
 *
 * Return: 0, or -errno when the file cannot be read.
 */
int ksyms__from_system_map(const char *path, struct ksym_want *want, size_t n, size_t *lines);

/**
 * ksyms__parse_line() - parse one System.map line.
 * @line: the line, NUL-terminated, with or without its newline
 * @addr: result: the address
 * @type: result: the type letter
 * @name: result: start of the name inside @line
 * @name_len: result: its length
 *
 * Return: 0, or -EINVAL when the line is not exactly "<hex, 1-16 digits> <letter> <name>".
 */
int ksyms__parse_line(const char *line, uint64_t *addr, char *type, const char **name,
		      size_t *name_len);

/**
 * ksyms__from_ksymtab() - look symbols up in the exported-symbol tables of a vmlinux ELF.
 * @elf:  the ELF file's bytes
 * @size: bytes at @elf
 * @want: the symbols; entries already found are left alone
 * @n:    entries at @want
 * @exported: result: the number of exported symbols seen; may be NULL
 *
 * Each entry is a struct kernel_symbol with 32-bit place-relative offsets (x86-64 kernels since
 * 4.19: value, name, namespace, 12 bytes), resolved at link time in the file.
 *
 * Return: 0; -ENOEXEC when @elf is not a little-endian ELF64 file; -ENOENT when it has no
 * __ksymtab section; -EINVAL when a table is not inside the file.
 */
int ksyms__from_ksymtab(const uint8_t *elf, size_t size, struct ksym_want *want, size_t n,
			size_t *exported);

#endif /* VBTS_VMM_INTROSPECT_KSYMS_H */
