/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symtab.h - address to symbol+offset for the oracle's reports, from an image's symbol table.
 */
#ifndef VBTS_ORACLE_SYMTAB_H
#define VBTS_ORACLE_SYMTAB_H

#include <stdint.h>
#include <stdio.h>

struct symtab;

/**
 * symtab__load() - the named symbols of the ELF image at @path (functions and labels).
 * Returns NULL with errno set: ENOEXEC (not an ELF file with a symbol table), ENOMEM, or the
 * errno of open().
 */
struct symtab *symtab__load(const char *path);

void symtab__free(struct symtab *st);

/**
 * symtab__lookup() - the symbol at or below @addr, preferring functions among symbols at the
 * same address; *@off gets @addr minus its value. NULL when no symbol lies below @addr.
 */
const char *symtab__lookup(const struct symtab *st, uint64_t addr, uint64_t *off);

/**
 * symtab__annotate() - copy @text to @out, adding " <symbol+0xoff>" after every hexadecimal
 * address (0x followed by 5 or more digits) that has a symbol.
 */
void symtab__annotate(const struct symtab *st, const char *text, FILE *out);

#endif /* VBTS_ORACLE_SYMTAB_H */
