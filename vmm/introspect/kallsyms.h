/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kallsyms.h - every symbol of a Linux kernel, from the kallsyms tables in its own vmlinux ELF,
 * found through the kallsyms_* addresses its vmcoreinfo (kernel/vmcore_info.c, Linux 6.0+)
 * gives. Debian's kernels ship no System.map; the running kernel's vmcoreinfo page says where
 * the tables are, and the tables are read from the host's copy of the image it booted.
 *
 * The vmcoreinfo text comes from guest memory and is hostile: it only names addresses, each
 * checked to lie in an allocated section of the image with file contents (elfsec__at()); the tables are bounded and checked entry by entry,
 * and the result must give the exported symbols (__ksymtab) their addresses, or nothing is used.
 */
#ifndef VBTS_VMM_INTROSPECT_KALLSYMS_H
#define VBTS_VMM_INTROSPECT_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Bytes of a vmcoreinfo text read at most (the kernel's VMCOREINFO_BYTES is a page). */
#define KALLSYMS_VMCOREINFO_MAX 4096
/* Symbols accepted at most (Debian 6.12 has about 190000). */
#define KALLSYMS_MAX_SYMS (1U << 21)
/* Longest name (the kernel's KSYM_NAME_LEN). */
#define KALLSYMS_NAME_MAX 512

/**
 * enum kallsyms_table - the tables vmcoreinfo names, as SYMBOL(<name>)=<hex> lines.
 * @KALLSYMS_NAMES:         kallsyms_names, the compressed names
 * @KALLSYMS_NUM_SYMS:      kallsyms_num_syms, an unsigned int
 * @KALLSYMS_TOKEN_TABLE:   kallsyms_token_table, 256 NUL-terminated tokens
 * @KALLSYMS_TOKEN_INDEX:   kallsyms_token_index, 256 u16 offsets into the token table
 * @KALLSYMS_OFFSETS:       kallsyms_offsets, an int per symbol
 * @KALLSYMS_RELATIVE_BASE: kallsyms_relative_base, an unsigned long
 * @KALLSYMS_TABLES:        their number
 */
enum kallsyms_table {
	KALLSYMS_NAMES,
	KALLSYMS_NUM_SYMS,
	KALLSYMS_TOKEN_TABLE,
	KALLSYMS_TOKEN_INDEX,
	KALLSYMS_OFFSETS,
	KALLSYMS_RELATIVE_BASE,
	KALLSYMS_TABLES,
};

/**
 * struct kallsyms_where - where the tables are, as the running kernel says.
 * @addr: run-time address of each table
 */
struct kallsyms_where {
	uint64_t addr[KALLSYMS_TABLES];
};

/**
 * kallsyms__parse_vmcoreinfo() - the tables' addresses from a vmcoreinfo text.
 * @text: the text ("KEY=VALUE" lines), not NUL-terminated
 * @len:  bytes at @text; at most KALLSYMS_VMCOREINFO_MAX are read, up to the first NUL
 * @out:  result
 *
 * Return: 0 when every table is named once with a valid address; -ENOENT when one is missing;
 * -EINVAL when one is named twice or with a malformed value.
 */
int kallsyms__parse_vmcoreinfo(const char *text, size_t len, struct kallsyms_where *out);

/**
 * kallsyms__write_map() - decode the tables and write them as a System.map.
 * @elf:   the vmlinux ELF the guest booted (trusted: the host's file)
 * @size:  bytes at @elf
 * @where: the tables' run-time addresses (from the guest)
 * @slide: the KASLR slide: run time minus link time
 * @out:   where the "<16 hex digits> <type> <name>" lines go, link-time addresses, in table
 *         order; names of other bytes than [A-Za-z0-9_.$] are left out
 * @nr:    result: the lines written; may be NULL
 * @err:   one line saying why, on failure
 * @errlen: bytes at @err
 *
 * The addresses are kallsyms_relative_base plus an offset, or, for a kernel built with
 * absolute per-CPU symbols, those for negative offsets; which one is the one that gives every
 * exported function among panic, _printk, schedule and kfree the address __ksymtab gives it.
 *
 * Return: 0; -ENOEXEC when @elf is not an ELF file; -EINVAL when a table lies outside the
 * image's sections (or the image is no sane little-endian ELF64 file), is malformed, or does not agree with __ksymtab; -ENOMEM;
 * -EIO when writing fails.
 */
int kallsyms__write_map(const uint8_t *elf, size_t size, const struct kallsyms_where *where,
			uint64_t slide, FILE *out, size_t *nr, char *err, size_t errlen);

#endif /* VBTS_VMM_INTROSPECT_KALLSYMS_H */
