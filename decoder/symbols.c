// SPDX-License-Identifier: GPL-2.0
/*
 * symbols.c - ELF symbol tables (libelf/gelf) as a sorted array searched by address.
 *
 * Function and untyped symbols (STT_FUNC, STT_NOTYPE: assembly labels) of SHT_SYMTAB, or of
 * SHT_DYNSYM when there is no symtab, are kept. Section, file and data symbols are not: a
 * branch lands in code. No per-address memoization: a binary search over a few thousand
 * entries is cheaper than the text formatting around it.
 *
 * Source lines come from DWARF through libdw when the file has it; the ELF handle and its
 * file stay open for that as long as the table lives.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

struct symbol {
	uint64_t start;
	uint64_t end;           /* one past the last covered address */
	uint64_t size;          /* 0 for labels */
	unsigned int shndx;
	bool global;
	const char *name;       /* into names */
};

struct symbols {
	struct symbol *syms;    /* sorted by start */
	size_t nr;
	char *names;            /* all names, NUL separated */
	char *build_id;
	int fd;                 /* kept open for libdw, -1 without DWARF */
	Elf *elf;
	Dwarf *dwarf;
};

static int cmp_symbol(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Prefer sized symbols, then global ones, then the name, for a stable choice. */
	if (!!x->size != !!y->size)
		return x->size ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int read_build_id(Elf *elf, struct symbols *s)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
			const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;
			size_t i;

			if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
				continue;
			s->build_id = malloc(nhdr.n_descsz * 2 + 1);
			if (!s->build_id)
				return -ENOMEM;
			for (i = 0; i < nhdr.n_descsz; i++)
				sprintf(s->build_id + 2 * i, "%02x", desc[i]);
			s->build_id[2 * nhdr.n_descsz] = '\0';
			return 0;
		}
	}
	return 0;
}

/* Finds SHT_SYMTAB, else SHT_DYNSYM. */
static Elf_Scn *find_symtab(Elf *elf, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dshdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		if (shdr->sh_type == SHT_SYMTAB)
			return scn;
		if (shdr->sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dshdr = *shdr;
		}
	}
	if (dyn)
		*shdr = dshdr;
	return dyn;
}

/* Reads the kept symbols; names are copied into one block. */
static int read_symbols(Elf *elf, struct symbols *s)
{
	Elf_Scn *scn;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t n, i, names_len = 0, pos = 0;

	scn = find_symtab(elf, &shdr);
	if (!scn || !shdr.sh_entsize)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = shdr.sh_size / shdr.sh_entsize;
	s->syms = calloc(n ? n : 1, sizeof(*s->syms));
	if (!s->syms)
		return -ENOMEM;

	/* Pass 1: count name bytes; pass 2: copy. */
	for (int pass = 0; pass < 2; pass++) {
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			unsigned int type;
			size_t len;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_NOTYPE) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			len = strlen(name) + 1;
			if (pass == 0) {
				names_len += len;
				continue;
			}
			memcpy(s->names + pos, name, len);
			s->syms[s->nr].start = sym.st_value;
			s->syms[s->nr].size = sym.st_size;
			s->syms[s->nr].shndx = sym.st_shndx;
			s->syms[s->nr].global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
			s->syms[s->nr].name = s->names + pos;
			s->nr++;
			pos += len;
		}
		if (pass == 0) {
			s->names = malloc(names_len ? names_len : 1);
			if (!s->names)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Sets each symbol's end; labels end at the next symbol of their section or the section end. */
static void set_extents(Elf *elf, struct symbols *s)
{
	size_t i, j;

	if (s->nr > 1) /* without a symbol table there is no array: qsort() must not see NULL */
		qsort(s->syms, s->nr, sizeof(*s->syms), cmp_symbol);
	for (i = 0; i < s->nr; i++) {
		struct symbol *sym = &s->syms[i];
		Elf_Scn *scn;
		GElf_Shdr shdr;

		if (sym->size) {
			sym->end = sym->start + sym->size;
			continue;
		}
		sym->end = sym->start + 1;
		scn = elf_getscn(elf, sym->shndx);
		if (scn && gelf_getshdr(scn, &shdr) && shdr.sh_addr + shdr.sh_size > sym->start)
			sym->end = shdr.sh_addr + shdr.sh_size;
		for (j = i + 1; j < s->nr; j++) {
			if (s->syms[j].start > sym->start) {
				if (s->syms[j].start < sym->end)
					sym->end = s->syms[j].start;
				break;
			}
		}
	}
}

struct symbols *symbols__load(const char *path)
{
	struct symbols *s;
	Elf *elf;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOEXEC;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		goto err_free;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = ENOEXEC;
		goto err_end;
	}
	err = -read_build_id(elf, s);
	if (err)
		goto err_end;
	err = -read_symbols(elf, s);
	if (err)
		goto err_end;
	set_extents(elf, s);
	s->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (s->dwarf) {
		s->fd = fd;
		s->elf = elf;
		return s;
	}
	elf_end(elf);
	close(fd);
	return s;

err_end:
	elf_end(elf);
	close(fd);
err_free:
	symbols__free(s);
	errno = err;
	return NULL;
}

int symbols__lookup(const struct symbols *s, uint64_t addr, struct symbol_hit *hit)
{
	size_t lo = 0, hi = s->nr;

	/* Last symbol with start <= addr; among equal starts the first one sorts best. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back over symbols that start at or before addr but do not cover it. */
	for (int steps = 0; lo > 0 && steps < 4; steps++) {
		const struct symbol *sym = &s->syms[lo - 1];
		size_t best = lo - 1;

		/* Go to the preferred symbol of this start address. */
		while (best > 0 && s->syms[best - 1].start == sym->start)
			best--;
		for (size_t k = best; k < lo; k++) {
			if (addr < s->syms[k].end) {
				hit->name = s->syms[k].name;
				hit->offset = addr - s->syms[k].start;
				return 0;
			}
		}
		/* Only a sized symbol further back can still cover addr (nesting is rare). */
		lo = best;
		if (lo > 0 && s->syms[lo - 1].size == 0)
			break;
	}
	return -ENOENT;
}

int symbols__line(const struct symbols *s, uint64_t addr, const char **file, int *line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *src;

	if (!s->dwarf || !dwarf_addrdie(s->dwarf, addr, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, addr);
	if (!l)
		return -ENOENT;
	src = dwarf_linesrc(l, NULL, NULL);
	if (!src || dwarf_lineno(l, line))
		return -ENOENT;
	*file = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;
	return 0;
}

const char *symbols__build_id(const struct symbols *s)
{
	return s->build_id;
}

size_t symbols__count(const struct symbols *s)
{
	return s->nr;
}

void symbols__free(struct symbols *s)
{
	if (!s)
		return;
	if (s->dwarf)
		dwarf_end(s->dwarf);
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	free(s->syms);
	free(s->names);
	free(s->build_id);
	free(s);
}
