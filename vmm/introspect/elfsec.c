// SPDX-License-Identifier: GPL-2.0
/*
 * elfsec.c - section lookup by name in an ELF64 file in memory, bounds-checked.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "elfsec.h"

static int shdr_at(const uint8_t *elf, size_t size, const Elf64_Ehdr *eh, unsigned int i,
		   Elf64_Shdr *sh)
{
	uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(*sh);

	if (off > size || sizeof(*sh) > size - off)
		return -ENOEXEC;
	memcpy(sh, elf + off, sizeof(*sh));
	return 0;
}

/* The ELF header of @elf and its section-name table, checked. */
static int headers(const uint8_t *elf, size_t size, Elf64_Ehdr *eh, Elf64_Shdr *strsh)
{
	if (size < sizeof(*eh) || memcmp(elf, ELFMAG, SELFMAG) || elf[EI_CLASS] != ELFCLASS64 ||
	    elf[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	memcpy(eh, elf, sizeof(*eh));
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
	    eh->e_shstrndx >= eh->e_shnum || eh->e_shoff >= size)
		return -ENOEXEC;
	if (shdr_at(elf, size, eh, eh->e_shstrndx, strsh))
		return -ENOEXEC;
	if (strsh->sh_type == SHT_NOBITS || strsh->sh_offset > size ||
	    strsh->sh_size > size - strsh->sh_offset)
		return -ENOEXEC;
	return 0;
}

int elfsec__find(const uint8_t *elf, size_t size, const char *name, struct elf_section *out)
{
	size_t want = strlen(name);
	Elf64_Shdr strsh, sh;
	Elf64_Ehdr eh;

	if (headers(elf, size, &eh, &strsh))
		return -ENOEXEC;
	for (unsigned int i = 1; i < eh.e_shnum; i++) {
		if (shdr_at(elf, size, &eh, i, &sh))
			return -ENOEXEC;
		/* the name, with its terminating NUL, must lie inside the string table */
		if (sh.sh_name >= strsh.sh_size || want >= strsh.sh_size - sh.sh_name)
			continue;
		if (memcmp(elf + strsh.sh_offset + sh.sh_name, name, want + 1))
			continue;
		out->addr = sh.sh_addr;
		out->size = sh.sh_size;
		out->data = NULL;
		if (sh.sh_type == SHT_NOBITS)
			return 0;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			return -EINVAL;
		out->data = elf + sh.sh_offset;
		return 0;
	}
	return -ENOENT;
}

const uint8_t *elfsec__at(const uint8_t *elf, size_t size, uint64_t va, size_t len)
{
	Elf64_Shdr strsh, sh;
	Elf64_Ehdr eh;

	if (headers(elf, size, &eh, &strsh))
		return NULL;
	for (unsigned int i = 1; i < eh.e_shnum; i++) {
		if (shdr_at(elf, size, &eh, i, &sh))
			return NULL;
		if (sh.sh_type == SHT_NOBITS || !(sh.sh_flags & SHF_ALLOC) || va < sh.sh_addr ||
		    va - sh.sh_addr > sh.sh_size || len > sh.sh_size - (va - sh.sh_addr))
			continue;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			return NULL;
		return elf + sh.sh_offset + (va - sh.sh_addr);
	}
	return NULL;
}
