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
 *
 * The image comes from the guest's side and libdw trusts the section headers it is given
 * (a string section cut short by its header makes it read past its buffer). So the layout is
 * checked first: every section inside the file, none overlapping another or the ELF and
 * section headers, compressed DWARF with a sane header and decompressed here, DWARF sections
 * of a sane size, string sections NUL-terminated. A file that fails keeps its symbols and
 * loses its source lines, with the reason kept for one warning.
 */
#include <errno.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input-file.h"
#include "escape.h"
#include "symbols.h"

/* A DWARF section's size once decompressed: far above any guest image's. */
#define DWARF_SECTION_MAX (1ULL << 30)
/* Deflate's largest expansion: 1032 output bytes per input byte. */
#define ZLIB_RATIO_MAX 1032
/* Room for the reason the DWARF is not used. */
#define DWARF_PROBLEM_MAX 192

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
	char dwarf_problem[DWARF_PROBLEM_MAX]; /* why DWARF the file has is not used, or "" */
};

/* A byte range of the file that nothing else may share. */
struct file_range {
	uint64_t start, end;
	size_t index;           /* section index; SIZE_MAX: ELF header, SIZE_MAX - 1: section table */
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

static void __attribute__((format(printf, 2, 3))) dwarf_problem(struct symbols *s,
								   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->dwarf_problem, sizeof(s->dwarf_problem), fmt, ap);
	va_end(ap);
}

/* "section N (NAME)", the name escaped and bounded: it comes from the file. */
static const char *section_label(char *buf, size_t len, size_t index, const char *name)
{
	char esc[64];

	snprintf(buf, len, "section %zu (%s)", index, escape__str(esc, sizeof(esc), name));
	return buf;
}

static const char *range_label(char *buf, size_t len, const struct file_range *r, Elf *elf,
			       size_t shstrndx)
{
	GElf_Shdr sh;
	const char *name = NULL;

	if (r->index == SIZE_MAX)
		return "the ELF header";
	if (r->index == SIZE_MAX - 1)
		return "the section header table";
	if (gelf_getshdr(elf_getscn(elf, r->index), &sh))
		name = elf_strptr(elf, shstrndx, sh.sh_name);
	return section_label(buf, len, r->index, name ? name : "?");
}

static int cmp_range(const void *a, const void *b)
{
	const struct file_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* A name libdw takes for a DWARF section: .debug_*, .zdebug_*, with or without LTO's prefix. */
static const char *dwarf_name(const char *name)
{
	if (!name)
		return NULL;
	if (!strncmp(name, ".gnu.debuglto_", 14))
		name += 14;
	return !strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7) ? name : NULL;
}

static bool has_dwarf(Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    dwarf_name(elf_strptr(elf, shstrndx, sh.sh_name)))
			return true;
	return false;
}

/* Every section with file bytes lies inside the file and shares them with nothing else. */
static int check_layout(struct symbols *s, Elf *elf, uint64_t size, size_t shnum,
			size_t shstrndx)
{
	struct file_range *r;
	char la[96], lb[96];
	GElf_Ehdr eh;
	size_t n = 0, i;
	uint64_t table;
	int ret = -EINVAL;

	if (!gelf_getehdr(elf, &eh) || eh.e_shentsize != gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT)) {
		dwarf_problem(s, "unreadable ELF header");
		return -EINVAL;
	}
	table = (uint64_t)eh.e_shentsize * shnum;
	if (eh.e_shoff > size || table > size - eh.e_shoff) {
		dwarf_problem(s, "the section header table lies outside the file");
		return -EINVAL;
	}
	r = calloc(shnum + 2, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r[n++] = (struct file_range){ 0, gelf_fsize(elf, ELF_T_EHDR, 1, EV_CURRENT), SIZE_MAX };
	r[n++] = (struct file_range){ eh.e_shoff, eh.e_shoff + table, SIZE_MAX - 1 };
	for (i = 1; i < shnum; i++) {
		GElf_Shdr sh;

		if (!gelf_getshdr(elf_getscn(elf, i), &sh)) {
			dwarf_problem(s, "section %zu: unreadable header", i);
			goto out;
		}
		if (sh.sh_type == SHT_NULL || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
			dwarf_problem(s, "%s: %" PRIu64 " bytes at offset %#" PRIx64
				      " lie outside the file of %" PRIu64 " bytes",
				      range_label(la, sizeof(la), &(struct file_range){ .index = i },
						  elf, shstrndx),
				      (uint64_t)sh.sh_size, (uint64_t)sh.sh_offset, size);
			goto out;
		}
		r[n++] = (struct file_range){ sh.sh_offset, sh.sh_offset + sh.sh_size, i };
	}
	qsort(r, n, sizeof(*r), cmp_range);
	for (i = 1; i < n; i++) {
		if (r[i].start < r[i - 1].end) {
			dwarf_problem(s, "%s overlaps %s",
				      range_label(la, sizeof(la), &r[i], elf, shstrndx),
				      range_label(lb, sizeof(lb), &r[i - 1], elf, shstrndx));
			goto out;
		}
	}
	ret = 0;
out:
	free(r);
	return ret;
}

/* A compressed DWARF section: its header checked, then decompressed for libdw. */
static int check_compressed(struct symbols *s, Elf_Scn *scn, const GElf_Shdr *sh,
			    const char *label)
{
	GElf_Chdr ch;

	if (!gelf_getchdr(scn, &ch)) {
		dwarf_problem(s, "%s: unreadable compression header", label);
		return -EINVAL;
	}
	if (ch.ch_type != ELFCOMPRESS_ZLIB) {
		dwarf_problem(s, "%s: unknown compression type %u", label, ch.ch_type);
		return -EINVAL;
	}
	if (!ch.ch_size || ch.ch_size > DWARF_SECTION_MAX ||
	    ch.ch_size / ZLIB_RATIO_MAX > sh->sh_size) {
		dwarf_problem(s, "%s: implausible size %" PRIu64 " once decompressed from %" PRIu64
			      " bytes", label, (uint64_t)ch.ch_size, (uint64_t)sh->sh_size);
		return -EINVAL;
	}
	if (ch.ch_addralign & (ch.ch_addralign - 1)) {
		dwarf_problem(s, "%s: alignment %" PRIu64 " is not a power of two", label,
			      (uint64_t)ch.ch_addralign);
		return -EINVAL;
	}
	if (elf_compress(scn, 0, 0) < 0) {
		dwarf_problem(s, "%s: cannot be decompressed: %s", label, elf_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

/* The DWARF sections: compressed ones decompressed, sizes bounded, strings terminated. */
static int check_dwarf_sections(struct symbols *s, Elf *elf, size_t shstrndx)
{
	Elf_Scn *scn = NULL;
	char label[96];
	GElf_Shdr sh;
	int ret;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		size_t len;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = dwarf_name(elf_strptr(elf, shstrndx, sh.sh_name));
		if (!name)
			continue;
		section_label(label, sizeof(label), elf_ndxscn(scn), name);
		if (!strncmp(name, ".zdebug", 7)) {
			/* Its size hides in its data; binutils has written SHF_COMPRESSED since 2.26. */
			dwarf_problem(s, "%s: GNU-style compressed DWARF is not supported", label);
			return -EINVAL;
		}
		if (sh.sh_flags & SHF_COMPRESSED) {
			ret = check_compressed(s, scn, &sh, label);
			if (ret)
				return ret;
			if (!gelf_getshdr(scn, &sh)) {
				dwarf_problem(s, "%s: unreadable header", label);
				return -EINVAL;
			}
		}
		if (sh.sh_size > DWARF_SECTION_MAX) {
			dwarf_problem(s, "%s: implausible size %" PRIu64, label, (uint64_t)sh.sh_size);
			return -EINVAL;
		}
		len = strlen(name);
		if (len > 8 && !strcmp(name + len - 8, "_str.dwo"))
			len -= 4;
		if (len < 4 || strncmp(name + len - 4, "_str", 4))
			continue;
		/* libdw reads its strings with strlen(): the last one must end in the section. */
		data = elf_getdata(scn, NULL);
		if (!data || (data->d_size && ((const char *)data->d_buf)[data->d_size - 1])) {
			dwarf_problem(s, "%s: string section not NUL-terminated", label);
			return -EINVAL;
		}
	}
	return 0;
}

/* Whether libdw may be given @elf: 0, -EINVAL with s->dwarf_problem set, or -ENOMEM. */
static int check_dwarf_input(struct symbols *s, Elf *elf, int fd)
{
	size_t shnum, shstrndx;
	struct stat st;
	int ret;

	if (elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx)) {
		dwarf_problem(s, "unreadable section headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	if (!has_dwarf(elf, shstrndx))
		return 0;
	if (fstat(fd, &st)) {
		dwarf_problem(s, "%s", strerror(errno));
		return -EINVAL;
	}
	ret = check_layout(s, elf, (uint64_t)st.st_size, shnum, shstrndx);
	if (ret)
		return ret;
	return check_dwarf_sections(s, elf, shstrndx);
}

struct symbols *symbols__load(const char *path)
{
	int fd = input_file__open(path, SYMBOLS_FILE_MAX, NULL, NULL, 0);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return symbols__load_fd(fd);
}

struct symbols *symbols__load_fd(int fd)
{
	struct symbols *s;
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = ENOEXEC;
		goto err_close;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = ENOMEM;
		goto err_close;
	}
	s->fd = -1;
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
	err = -check_dwarf_input(s, elf, fd);
	if (err == ENOMEM)
		goto err_end;
	if (!err)
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
	symbols__free(s);
err_close:
	close(fd);
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

const char *symbols__dwarf_problem(const struct symbols *s)
{
	return s->dwarf_problem[0] ? s->dwarf_problem : NULL;
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
