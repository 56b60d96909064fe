/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols.h - guest address -> symbol+offset (and source line when DWARF is present), from
 * the guest image's ELF symbol tables (elfutils). Works for ELF32 multiboot images whose
 * symbols describe 64-bit code below 4 GiB as well as for ELF64 files.
 */
#ifndef VBTS_DECODER_SYMBOLS_H
#define VBTS_DECODER_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct symbols;

/* Largest image read, in bytes: far above any guest kernel with its debug information. */
#define SYMBOLS_FILE_MAX (1ULL << 30)

/**
 * struct symbol_hit - the result of a lookup.
 * @name:   symbol name (owned by the table)
 * @offset: address - symbol start
 */
struct symbol_hit {
	const char *name;
	uint64_t offset;
};

/**
 * symbols__load() - read the symbol tables of an ELF file.
 * @path: ELF file (executable, object or shared object, 32 or 64 bit)
 *
 * Only a regular file of at most SYMBOLS_FILE_MAX bytes is read (input_file__open()).
 *
 * Return: the table, or NULL with errno set: open(2) errors, EINVAL for anything but a
 * regular file, EFBIG for one larger than SYMBOLS_FILE_MAX, ENOEXEC for a file that is not
 * ELF, ENOMEM.
 */
struct symbols *symbols__load(const char *path);

/**
 * symbols__load_fd() - read the symbol tables of an ELF file already open.
 * @fd: the file, opened by input_file__open(); the table owns it from now on (it is closed
 *      on failure too)
 *
 * Return: the table, or NULL with errno set: ENOEXEC for a file that is not ELF, ENOMEM.
 */
struct symbols *symbols__load_fd(int fd);

/**
 * symbols__lookup() - the symbol covering @addr.
 * @s:    table
 * @addr: guest address
 * @hit:  receives name and offset
 *
 * A symbol with a size covers [start, start + size); a symbol without one (an assembly label)
 * covers the addresses up to the next symbol within its section.
 *
 * Return: 0, or -ENOENT when no symbol covers @addr.
 */
int symbols__lookup(const struct symbols *s, uint64_t addr, struct symbol_hit *hit);

/**
 * symbols__line() - the source line of @addr, from DWARF.
 * @s:    table
 * @addr: guest address
 * @file: receives the source file's base name (owned by the table)
 * @line: receives the line number
 *
 * Return: 0, or -ENOENT when the file has no DWARF line information for @addr.
 */
int symbols__line(const struct symbols *s, uint64_t addr, const char **file, int *line);

/**
 * symbols__dwarf_problem() - why the file's DWARF is not used, when it has DWARF.
 * @s: table
 *
 * A file whose section headers or DWARF sections fail the checks made before libdw reads
 * them (inside the file, no overlaps, sane sizes and compression headers, terminated string
 * sections) keeps its symbols and has no source lines.
 *
 * Return: one line of printable text (owned by the table), or NULL when the DWARF is used or
 * the file has none.
 */
const char *symbols__dwarf_problem(const struct symbols *s);

/**
 * symbols__build_id() - the file's GNU build ID as lowercase hex.
 * @s: table
 *
 * Return: the hex string, or NULL when the file has no NT_GNU_BUILD_ID note.
 */
const char *symbols__build_id(const struct symbols *s);

/**
 * symbols__count() - number of symbols in the table.
 * @s: table
 *
 * Return: the count.
 */
size_t symbols__count(const struct symbols *s);

/**
 * symbols__free() - release the table.
 * @s: table, may be NULL
 */
void symbols__free(struct symbols *s);

#endif /* VBTS_DECODER_SYMBOLS_H */
