/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plt.h - names for the PLT stubs of an x86-64 ELF file, "puts@plt" as objdump and gdb give
 * them: the entries of .plt (lazy binding), .plt.sec (IBT) and .plt.got whose indirect jump
 * goes through a GOT slot that a R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT relocation binds to
 * a dynamic symbol.
 *
 * The file comes from the guest: every count, index, offset and name is checked, the work is
 * linear in the file's size, and what is kept is bounded (PLT_ENTRIES_MAX, PLT_NAMES_MAX).
 */
#ifndef VBTS_DECODER_PLT_H
#define VBTS_DECODER_PLT_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* PLT entries examined in one file, at most: a large shared library has a few thousand. */
#define PLT_ENTRIES_MAX (1u << 20)
/* Bytes of the names made for one file, at most. */
#define PLT_NAMES_MAX (16u << 20)

/**
 * struct plt_entry - one named PLT entry.
 * @addr:  its link-time address
 * @size:  its size in bytes (the section's entry size)
 * @shndx: the index of its section
 * @name:  "SYMBOL@plt", into the names of its struct plt_table
 */
struct plt_entry {
	uint64_t addr;
	uint64_t size;
	unsigned int shndx;
	const char *name;
};

/**
 * struct plt_table - the named PLT entries of one file.
 * @entries: the entries, in the order of their sections
 * @nr:      how many
 * @names:   the block of their names
 * @probes:  work done: section entries and relocations examined
 */
struct plt_table {
	struct plt_entry *entries;
	size_t nr;
	char *names;
	uint64_t probes;
};

/**
 * plt__read() - name the PLT entries of an ELF file.
 * @elf: the file (libelf)
 * @t:   filled; empty for a file that is not x86-64 or has no PLT the relocations name
 *
 * An entry is named when it is one indirect jump through a RIP-relative GOT slot (`jmp
 * *disp(%rip)`, after an optional endbr64 and bnd prefix) and a relocation of that slot names
 * a symbol; PLT0 and the lazy stubs of an IBT PLT have none and stay unnamed, as in objdump.
 * Damaged sections, tables and names are skipped.
 *
 * Return: 0, or -ENOMEM (@t then empty).
 */
int plt__read(Elf *elf, struct plt_table *t);

/**
 * plt__free() - free what plt__read() made (not @t itself).
 * @t: the table
 */
void plt__free(struct plt_table *t);

#endif /* VBTS_DECODER_PLT_H */
