/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols.h - one symbol table: address -> symbol+offset (and source line when DWARF is
 * present), from an ELF file's symbol tables (elfutils) or from a Linux System.map. Works for
 * ELF32 multiboot images whose symbols describe 64-bit code below 4 GiB as well as for ELF64
 * executables, shared objects and kernels.
 *
 * Addresses are the file's own (link-time) addresses: a caller that knows where the file was
 * loaded (a PIE's load base, a kernel's KASLR slide) subtracts its bias first (symbolizer.h).
 */
#ifndef VBTS_DECODER_SYMBOLS_H
#define VBTS_DECODER_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbols;

/* Largest image read, in bytes: far above any guest kernel with its debug information. */
#define SYMBOLS_FILE_MAX (1ULL << 30)
/* Largest System.map read, in bytes: a distribution kernel's is about 6 MiB. */
#define SYSTEM_MAP_FILE_MAX (64ULL << 20)
/* Longest System.map line used, newline excluded: the kernel's names are at most 512 bytes. */
#define SYSTEM_MAP_LINE_MAX 1024
/* PT_LOAD program headers kept for symbols__offset_vaddr(): a linker writes 4 or 5. */
#define SYMBOLS_SEGMENTS_MAX 16
/* Longest GNU build ID kept, in bytes (SHA-1 gives 20). */
#define SYMBOLS_BUILD_ID_MAX 64

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
 * struct symbols_file_info - what symbols__probe_fd() learns from an ELF file's headers.
 * @type:     e_type (ET_EXEC, ET_DYN, ET_REL, ...)
 * @build_id: the GNU build ID as lowercase hex, "" when the file has none
 * @symtab:   entries of its symbol table (SHT_SYMTAB, else SHT_DYNSYM), 0 without one
 * @dwarf:    it has DWARF sections
 */
struct symbols_file_info {
	unsigned int type;
	char build_id[2 * SYMBOLS_BUILD_ID_MAX + 1];
	uint64_t symtab;
	bool dwarf;
};

/**
 * struct system_map_stats - what symbols__load_system_map() skipped.
 * @lines:          lines read
 * @malformed:      lines that are not "ADDRESS TYPE NAME" (hex address, one-letter type, a
 *                  name without blanks), lines longer than SYSTEM_MAP_LINE_MAX included
 * @first_malformed: the number of the first of them (1-based), 0 when there is none
 * @placeholder:    the file is the one-line placeholder Debian's linux-image packages ship
 *                  ("... The real System.map is in the linux-image-<version>-dbg package")
 * @cut:            the file is larger than SYSTEM_MAP_FILE_MAX: the lines after @lines
 *                  were not read
 */
struct system_map_stats {
	uint64_t lines, malformed, first_malformed;
	bool placeholder;
	bool cut;
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
 * symbols__load_system_map() - read the text symbols of a Linux System.map.
 * @path:   the file, as `nm -n vmlinux` prints it: "ffffffff81000000 T _stext" per line
 * @stats:  receives the counts of what was skipped
 * @err:    receives one error line on failure, may be NULL
 * @errlen: size of @err
 *
 * Text symbols (types T, t, W, w) are kept; each extends up to the next symbol's address,
 * the last one covers its own address only. Other types are skipped, malformed lines counted
 * in @stats. At most SYSTEM_MAP_FILE_MAX bytes of a regular file are read, in lines of at most
 * SYSTEM_MAP_LINE_MAX bytes (input_lines__open()).
 *
 * Return: the table (possibly without a symbol: see symbols__count()), or NULL with errno
 * set: the errors of input_file__open() (ENOENT, EINVAL for anything but a regular file, ...),
 * EIO and the other errors of read(2), ENOMEM.
 */
struct symbols *symbols__load_system_map(const char *path, struct system_map_stats *stats,
					 char *err, size_t errlen);

/**
 * symbols__probe_fd() - read the headers of an ELF file without loading its symbols.
 * @fd:   the file, opened by input_file__open() (left open)
 * @info: receives what the headers say
 *
 * Return: 0, -ENOEXEC for a file that is not ELF or whose section headers cannot be read.
 */
int symbols__probe_fd(int fd, struct symbols_file_info *info);

/**
 * symbols__lookup() - the symbol covering @addr.
 * @s:    table
 * @addr: guest address
 * @hit:  receives name and offset
 *
 * A symbol with a size covers [start, start + size); a symbol without one (an assembly label,
 * a System.map entry) covers the addresses up to the next symbol within its section. Among
 * symbols of one address, sized ones are preferred, then global ones, then the first name.
 * O(log n), whatever the table holds.
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
 * them (section names readable, inside the file, no overlaps, sane sizes and compression
 * headers, terminated string sections) keeps its symbols and has no source lines.
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
 * symbols__build_id_valid() - whether @hex is a GNU build ID as a trace may carry it.
 * @hex: the text
 *
 * 2 to SYMBOLS_BUILD_ID_MAX bytes in hex digits (either case) and nothing else: a build ID
 * names a directory of a debuginfod-like cache, so "../" or "/" must not pass.
 *
 * Return: true when it is one.
 */
bool symbols__build_id_valid(const char *hex);

/**
 * symbols__elf_type() - the ELF file's e_type.
 * @s: table
 *
 * Return: ET_EXEC, ET_DYN, ET_REL, ..., or ET_NONE for a System.map.
 */
unsigned int symbols__elf_type(const struct symbols *s);

/**
 * symbols__link_base() - where the file's lowest loadable segment starts, page aligned.
 * @s:    table
 * @base: receives the p_vaddr of its lowest PT_LOAD segment rounded down to 4 KiB (0 for a
 *        PIE linked at 0): the address a load base is measured against
 *
 * Return: 0, or -ENOENT when the file has no readable PT_LOAD program header.
 */
int symbols__link_base(const struct symbols *s, uint64_t *base);

/**
 * symbols__offset_vaddr() - the link-time address of a file offset, as a mapping of the file
 * at that offset sees it.
 * @s:      table
 * @offset: byte offset in the file (a mapping's offset, or an address's offset in a mapping
 *          plus the mapping's)
 * @vaddr:  receives the link-time address of that byte: offset - p_offset + p_vaddr of the
 *          first of the file's SYMBOLS_SEGMENTS_MAX first PT_LOAD segments whose pages hold it
 *
 * A mapping of the file at run-time address START and offset OFF has the bias START - vaddr
 * of OFF. Segments whose range wraps around are ignored.
 *
 * Return: 0, or -ENOENT when no kept segment holds @offset.
 */
int symbols__offset_vaddr(const struct symbols *s, uint64_t offset, uint64_t *vaddr);

/**
 * symbols__set_path() - the file the table was read from, for symbols__path().
 * @s:    table
 * @path: its path (copied); symbols__load() and symbols__load_system_map() set it themselves
 *
 * Return: 0, or -ENOMEM.
 */
int symbols__set_path(struct symbols *s, const char *path);

/**
 * symbols__path() - the file the table was read from.
 * @s: table
 *
 * Return: the path as it was given (not escaped: it may hold any byte but NUL), or NULL when
 * none was set (symbols__load_fd()).
 */
const char *symbols__path(const struct symbols *s);

/**
 * symbols__extent() - the link-time addresses the file's code and data occupy.
 * @s:     table
 * @start: receives the first: symbols__link_base() when the file has PT_LOAD segments, else
 *         (a relocatable object, a System.map) the lowest symbol's address
 * @end:   receives one past the last: the end of the highest PT_LOAD segment (p_vaddr +
 *         p_memsz), else the highest end of a symbol (symbols__lookup()'s extent)
 *
 * O(1) with segments, O(n) in the symbols without.
 *
 * Return: 0, or -ENOENT when the file has neither segments nor symbols.
 */
int symbols__extent(const struct symbols *s, uint64_t *start, uint64_t *end);

/**
 * symbols__count() - number of symbols in the table.
 * @s: table
 *
 * Symbols that can never be the answer of a lookup (an alias at the same address that a
 * preferred symbol covers wholly) are not kept.
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
