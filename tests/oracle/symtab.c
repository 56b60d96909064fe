// SPDX-License-Identifier: GPL-2.0
/*
 * symtab.c - a sorted array of an image's symbols, looked up by binary search.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab.h"

struct sym {
	uint64_t value;
	int func;
	char *name;
};

struct symtab {
	struct sym *syms;
	size_t n;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return y->func - x->func; /* functions first */
}

static int add_sym(struct symtab *st, size_t *cap, uint64_t value, int func, const char *name)
{
	struct sym *syms;

	if (st->n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		syms = realloc(st->syms, *cap * sizeof(*syms));
		if (!syms)
			return -ENOMEM;
		st->syms = syms;
	}
	st->syms[st->n].name = strdup(name);
	if (!st->syms[st->n].name)
		return -ENOMEM;
	st->syms[st->n].value = value;
	st->syms[st->n].func = func;
	st->n++;
	return 0;
}

struct symtab *symtab__load(const char *path)
{
	struct symtab *st;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	size_t cap = 0, i, n;
	int fd, err = ENOEXEC, found = 0, type;
	const char *name;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st) {
		err = ENOMEM;
		goto err_close;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto err_free;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		found = 1;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value)
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if (type != STT_FUNC && type != STT_NOTYPE)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name || !*name || name[0] == '.' || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx == SHN_ABS)
				continue;
			if (add_sym(st, &cap, sym.st_value, type == STT_FUNC, name)) {
				err = ENOMEM;
				goto err_free;
			}
		}
	}
	if (!found)
		goto err_free;
	qsort(st->syms, st->n, sizeof(*st->syms), cmp_sym);
	elf_end(elf);
	close(fd);
	return st;

err_free:
	elf_end(elf);
	symtab__free(st);
err_close:
	close(fd);
	errno = err;
	return NULL;
}

void symtab__free(struct symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n; i++)
		free(st->syms[i].name);
	free(st->syms);
	free(st);
}

const char *symtab__lookup(const struct symtab *st, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = st->n, mid;
	uint64_t v;

	/* the first symbol above addr */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->syms[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* the first entry (a function, if any) at the value just below */
	v = st->syms[lo - 1].value;
	while (lo > 1 && st->syms[lo - 2].value == v)
		lo--;
	*off = addr - v;
	return st->syms[lo - 1].name;
}

void symtab__annotate(const struct symtab *st, const char *text, FILE *out)
{
	const char *p = text, *name;
	uint64_t addr, off;
	size_t digits;
	char *end;

	while (*p) {
		if (p[0] == '0' && p[1] == 'x' && (p == text || !isalnum((unsigned char)p[-1]))) {
			addr = strtoull(p, &end, 16);
			if (end <= p + 2) {
				fputc(*p++, out);
				continue;
			}
			digits = (size_t)(end - p) - 2;
			fwrite(p, 1, (size_t)(end - p), out);
			p = end;
			if (digits >= 5 && (name = symtab__lookup(st, addr, &off))) {
				if (off)
					fprintf(out, " <%s+0x%" PRIx64 ">", name, off);
				else
					fprintf(out, " <%s>", name);
			}
			continue;
		}
		fputc(*p++, out);
	}
}
