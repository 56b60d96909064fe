// SPDX-License-Identifier: GPL-2.0
/*
 * symbols.c - symbol tables as a sorted array searched by address: the symbols of an ELF file
 * (libelf/gelf) or the text symbols of a Linux System.map.
 *
 * Function and untyped symbols (STT_FUNC, STT_NOTYPE: assembly labels) of SHT_SYMTAB, or of
 * SHT_DYNSYM when there is no symtab, are kept. Section, file and data symbols are not: a
 * branch lands in code. The PLT stubs of an x86-64 file, which no symbol table names, get
 * objdump's names ("puts@plt", plt.h) as sized symbols of their own, made once with the
 * table. No per-address memoization here: the exporters memoize per address (annotator.h).
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
#include <ctype.h>
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
#include "plt.h"
#include "symbols-int.h"

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

/* A PT_LOAD segment: file bytes [offset, offset + filesz) at link address vaddr. */
struct segment {
	uint64_t offset, filesz, vaddr;
};

struct symbols {
	struct symbol *syms;    /* sorted by start */
	size_t nr;
	char *names;            /* all names, NUL separated */
	char *plt_names;        /* the names of the PLT entries (plt.h) */
	char *build_id;
	unsigned int elf_type;  /* ET_NONE for a System.map */
	bool has_link_base;
	uint64_t link_base;     /* lowest PT_LOAD p_vaddr, 4 KiB aligned */
	uint64_t link_end;      /* one past the highest PT_LOAD byte */
	struct segment segs[SYMBOLS_SEGMENTS_MAX]; /* the first PT_LOAD headers */
	unsigned int nr_segs;
	char *path;             /* the file it was read from, or NULL */
	uint64_t *probes;       /* lookup work counter for tests, or NULL */
	uint64_t load_probes;   /* work of read_plt() and set_extents() */
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

/* The first NT_GNU_BUILD_ID note of a note section, as lowercase hex; "" when there is none. */
static void read_build_id(Elf *elf, char out[2 * SYMBOLS_BUILD_ID_MAX + 1])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	out[0] = '\0';
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
			/* gelf_getnote() checked that the note lies inside the section. */
			if (!nhdr.n_descsz || nhdr.n_descsz > SYMBOLS_BUILD_ID_MAX)
				return;
			for (i = 0; i < nhdr.n_descsz; i++)
				sprintf(out + 2 * i, "%02x", desc[i]);
			return;
		}
	}
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
	/* What libelf read, not what the header claims. */
	n = data->d_size / shdr.sh_entsize;
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

/*
 * Adds the named PLT entries of the file as sized local symbols: a symbol of the file's own
 * at the same address is preferred (cmp_symbol()).
 */
static int read_plt(Elf *elf, struct symbols *s)
{
	struct plt_table t;
	struct symbol *syms;

	if (plt__read(elf, &t))
		return -ENOMEM;
	s->load_probes += t.probes;
	if (!t.nr) {
		plt__free(&t);
		return 0;
	}
	syms = realloc(s->syms, (s->nr + t.nr) * sizeof(*syms));
	if (!syms) {
		plt__free(&t);
		return -ENOMEM;
	}
	s->syms = syms;
	for (size_t i = 0; i < t.nr; i++)
		s->syms[s->nr++] = (struct symbol){ .start = t.entries[i].addr,
						    .size = t.entries[i].size,
						    .shndx = t.entries[i].shndx,
						    .name = t.entries[i].name };
	s->plt_names = t.names;
	t.names = NULL;
	plt__free(&t);
	return 0;
}

/* start + size, or the end of the address space when that wraps (a hostile size). */
static uint64_t sized_end(uint64_t start, uint64_t size)
{
	return size > UINT64_MAX - start ? UINT64_MAX : start + size;
}

/*
 * Sets each symbol's end; labels end at the next symbol of their section or the section end
 * (@elf NULL: a System.map, whose entries end at the next symbol or cover their own address).
 * Then drops the symbols no lookup can return: of the symbols of one start address, in their
 * order of preference, one whose end is not beyond the end of a preferred one. What is left
 * has, per start address, ends that grow with the index: symbols__lookup() searches them.
 * Linear after the sort, however many symbols share an address.
 */
static void set_extents(Elf *elf, struct symbols *s)
{
	uint64_t next = UINT64_MAX, group_end = 0;
	bool have_next = false;
	size_t i, kept = 0;

	if (s->nr > 1) /* without a symbol table there is no array: qsort() must not see NULL */
		qsort(s->syms, s->nr, sizeof(*s->syms), cmp_symbol);
	/* Backwards, so that @next is the start of the next symbol with a greater start. */
	for (i = s->nr; i-- > 0;) {
		struct symbol *sym = &s->syms[i];
		Elf_Scn *scn;
		GElf_Shdr shdr;

		s->load_probes++;
		if (i + 1 < s->nr && s->syms[i + 1].start > sym->start) {
			next = s->syms[i + 1].start;
			have_next = true;
		}
		if (sym->size) {
			sym->end = sized_end(sym->start, sym->size);
			continue;
		}
		sym->end = sized_end(sym->start, 1);
		if (!elf) {
			if (have_next)
				sym->end = next;
			continue;
		}
		scn = elf_getscn(elf, sym->shndx);
		if (scn && gelf_getshdr(scn, &shdr) &&
		    sized_end(shdr.sh_addr, shdr.sh_size) > sym->start)
			sym->end = sized_end(shdr.sh_addr, shdr.sh_size);
		if (have_next && next < sym->end)
			sym->end = next;
	}
	for (i = 0; i < s->nr; i++) {
		s->load_probes++;
		if (!kept || s->syms[kept - 1].start != s->syms[i].start)
			group_end = 0;
		else if (s->syms[i].end <= group_end)
			continue;
		group_end = s->syms[i].end;
		s->syms[kept++] = s->syms[i];
	}
	s->nr = kept;
}

/* The lowest PT_LOAD segment's address: what a load base of the file is measured against. */
static void read_link_base(Elf *elf, struct symbols *s)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!s->has_link_base || ph.p_vaddr < s->link_base)
			s->link_base = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz >= ph.p_vaddr && ph.p_vaddr + ph.p_memsz > s->link_end)
			s->link_end = ph.p_vaddr + ph.p_memsz;
		s->has_link_base = true;
		/* Kept only when it neither wraps nor lies outside the file's offsets' range. */
		if (s->nr_segs < SYMBOLS_SEGMENTS_MAX && ph.p_offset + ph.p_filesz >= ph.p_offset &&
		    ph.p_vaddr + ph.p_filesz >= ph.p_vaddr)
			s->segs[s->nr_segs++] = (struct segment){ ph.p_offset, ph.p_filesz,
								   ph.p_vaddr };
	}
	s->link_base &= ~0xfffULL;
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
	GElf_Shdr sh;
	struct stat st;
	int ret;

	if (elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx)) {
		dwarf_problem(s, "unreadable section headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	/* Without section names, DWARF sections cannot be found, nor checked. */
	if (shnum && (shstrndx >= shnum || !gelf_getshdr(elf_getscn(elf, shstrndx), &sh) ||
		      sh.sh_type != SHT_STRTAB)) {
		dwarf_problem(s, "the section names (section %zu) are not a string table",
			      shstrndx);
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
	struct symbols *s;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	s = symbols__load_fd(fd);
	if (s && symbols__set_path(s, path)) {
		symbols__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

struct symbols *symbols__load_fd(int fd)
{
	char build_id[2 * SYMBOLS_BUILD_ID_MAX + 1];
	struct symbols *s;
	GElf_Ehdr eh;
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
	read_build_id(elf, build_id);
	if (build_id[0]) {
		s->build_id = strdup(build_id);
		if (!s->build_id) {
			err = ENOMEM;
			goto err_end;
		}
	}
	if (gelf_getehdr(elf, &eh))
		s->elf_type = eh.e_type;
	read_link_base(elf, s);
	err = -read_symbols(elf, s);
	if (!err)
		err = -read_plt(elf, s);
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

int symbols__probe_fd(int fd, struct symbols_file_info *info)
{
	size_t shnum, shstrndx;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf *elf;
	int ret = -ENOEXEC;

	memset(info, 0, sizeof(*info));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	info->type = eh.e_type;
	read_build_id(elf, info->build_id);
	scn = find_symtab(elf, &sh);
	if (scn && sh.sh_entsize && sh.sh_type != SHT_NOBITS)
		info->symtab = sh.sh_size / sh.sh_entsize;
	info->dwarf = has_dwarf(elf, shstrndx);
	ret = 0;
out:
	elf_end(elf);
	return ret;
}

/* ---- System.map -------------------------------------------------------------------------- */

/* Debian's linux-image packages ship this one line instead of the map. */
#define SYSTEM_MAP_PLACEHOLDER "The real System.map is in the linux-image-"

/* Room for the symbols and names of a System.map, grown as lines are read. */
struct map_builder {
	struct symbol *syms;
	size_t nr, alloc;
	char *names;
	size_t names_len, names_alloc;
};

/*
 * "ADDRESS TYPE NAME": 1 to 16 hex digits, one space, one letter (or '?'), one space, a name
 * of printable bytes without blanks. Returns 1 for a text symbol, 0 for another type, -1 for a
 * malformed line.
 */
static int parse_map_line(const char *line, size_t len, uint64_t *addr, bool *global,
			  const char **name, size_t *name_len)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;
	char type;

	for (; i < len && isxdigit((unsigned char)line[i]); i++, digits++) {
		if (digits == 16)
			return -1;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)line[i]) ? line[i] - '0' :
					 (tolower((unsigned char)line[i]) - 'a' + 10));
	}
	if (!digits || i + 3 > len || line[i] != ' ' || line[i + 2] != ' ')
		return -1;
	type = line[i + 1];
	if (!isalpha((unsigned char)type) && type != '?')
		return -1;
	i += 3;
	if (i == len)
		return -1;
	for (size_t k = i; k < len; k++)
		if ((unsigned char)line[k] <= ' ' || line[k] == 0x7f)
			return -1;
	if (!strchr("TtWw", type))
		return 0;
	*addr = v;
	*global = isupper((unsigned char)type);
	*name = line + i;
	*name_len = len - i;
	return 1;
}

static int map_add(struct map_builder *b, uint64_t addr, bool global, const char *name,
		   size_t len)
{
	if (b->nr == b->alloc) {
		size_t alloc = b->alloc ? 2 * b->alloc : 1024;
		struct symbol *p = realloc(b->syms, alloc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->syms = p;
		b->alloc = alloc;
	}
	if (b->names_len + len + 1 > b->names_alloc) {
		size_t alloc = b->names_alloc ? 2 * b->names_alloc : 16384;
		char *p;

		while (alloc < b->names_len + len + 1)
			alloc *= 2;
		p = realloc(b->names, alloc);
		if (!p)
			return -ENOMEM;
		b->names = p;
		b->names_alloc = alloc;
	}
	memcpy(b->names + b->names_len, name, len);
	b->names[b->names_len + len] = '\0';
	/* The names block may still move: keep the offset until it is complete. */
	b->syms[b->nr] = (struct symbol){
		.start = addr, .global = global, .name = (const char *)(uintptr_t)b->names_len,
	};
	b->nr++;
	b->names_len += len + 1;
	return 0;
}

struct symbols *symbols__load_system_map(const char *path, struct system_map_stats *stats,
					 char *err, size_t errlen)
{
	struct map_builder b = { 0 };
	struct input_lines *in;
	struct symbols *s;
	size_t len, name_len;
	const char *name;
	uint64_t addr;
	bool global;
	char *line;
	int ret;

	memset(stats, 0, sizeof(*stats));
	in = input_lines__open(path, SYSTEM_MAP_LINE_MAX, SYSTEM_MAP_FILE_MAX, err, errlen);
	if (!in)
		return NULL;
	while ((ret = input_lines__next(in, &line, &len)) != 0) {
		if (ret == -EFBIG) {
			stats->cut = true;
			continue;
		}
		if (ret < 0 && ret != -E2BIG) {
			if (err && errlen)
				snprintf(err, errlen, "%s: read error after line %" PRIu64 ": %s",
					 path, input_lines__lineno(in), strerror(-ret));
			goto err_free;
		}
		stats->lines++;
		if (ret == 1 && len && line[len - 1] == '\r')
			len--;
		if (ret == 1 && stats->lines == 1 && memmem(line, len, SYSTEM_MAP_PLACEHOLDER,
							    strlen(SYSTEM_MAP_PLACEHOLDER)))
			stats->placeholder = true;
		ret = ret == 1 ? parse_map_line(line, len, &addr, &global, &name, &name_len) : -1;
		if (ret < 0) {
			if (!stats->malformed++)
				stats->first_malformed = input_lines__lineno(in);
			continue;
		}
		if (ret && map_add(&b, addr, global, name, name_len)) {
			ret = -ENOMEM;
			if (err && errlen)
				snprintf(err, errlen, "%s: out of memory", path);
			goto err_free;
		}
	}
	input_lines__close(in);
	in = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		goto err_free;
	}
	s->fd = -1;
	s->syms = b.syms;
	s->nr = b.nr;
	s->names = b.names;
	for (size_t i = 0; i < s->nr; i++)
		s->syms[i].name = s->names + (uintptr_t)s->syms[i].name;
	set_extents(NULL, s);
	if (symbols__set_path(s, path)) {
		symbols__free(s);
		s = NULL;
		errno = ENOMEM;
		if (err)
			snprintf(err, errlen, "%s: out of memory", path);
	}
	return s;

err_free:
	input_lines__close(in);
	free(b.syms);
	free(b.names);
	errno = -ret;
	return NULL;
}

/* The first index in [lo, hi) whose symbol starts after @addr (hi when none does). */
static size_t first_after(const struct symbols *s, size_t lo, size_t hi, uint64_t addr,
			  uint64_t *probes)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		(*probes)++;
		if (s->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int symbols__lookup(const struct symbols *s, uint64_t addr, struct symbol_hit *hit)
{
	uint64_t probes = 0;
	size_t hi, lo, first;
	int ret = -ENOENT;

	hi = first_after(s, 0, s->nr, addr, &probes);
	/*
	 * [first, hi) are the symbols of the greatest start <= addr, their ends growing: the
	 * first whose end is beyond addr is the preferred one covering it. When none does, walk
	 * back a few start addresses: only a sized symbol can reach further (nesting is rare).
	 */
	for (int steps = 0; hi > 0 && steps < 4; steps++) {
		uint64_t start = s->syms[hi - 1].start;

		/*
		 * The first symbol of @start: after every one below it. Mostly the symbol itself
		 * (one symbol per address): a search only when it has aliases.
		 */
		probes++;
		if (hi == 1 || s->syms[hi - 2].start != start)
			first = hi - 1;
		else
			first = start ? first_after(s, 0, hi - 1, start - 1, &probes) : 0;
		lo = first;
		for (size_t h = hi; lo < h;) {
			size_t mid = lo + (h - lo) / 2;

			probes++;
			if (s->syms[mid].end <= addr)
				lo = mid + 1;
			else
				h = mid;
		}
		if (lo < hi) {
			hit->name = s->syms[lo].name;
			hit->offset = addr - s->syms[lo].start;
			ret = 0;
			break;
		}
		hi = first;
		if (hi > 0 && s->syms[hi - 1].size == 0)
			break;
	}
	if (s->probes)
		*s->probes += probes;
	return ret;
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

bool symbols__build_id_valid(const char *hex)
{
	size_t n = 0;

	for (; hex[n]; n++)
		if (!isxdigit((unsigned char)hex[n]) || n >= 2 * SYMBOLS_BUILD_ID_MAX)
			return false;
	return n >= 4 && n % 2 == 0;
}

unsigned int symbols__elf_type(const struct symbols *s)
{
	return s->elf_type;
}

int symbols__link_base(const struct symbols *s, uint64_t *base)
{
	if (!s->has_link_base)
		return -ENOENT;
	*base = s->link_base;
	return 0;
}

int symbols__offset_vaddr(const struct symbols *s, uint64_t offset, uint64_t *vaddr)
{
	for (unsigned int i = 0; i < s->nr_segs; i++) {
		const struct segment *g = &s->segs[i];

		/* Page granular, as mmap(2) maps a segment: its first page holds more of the file. */
		if ((offset & ~0xfffULL) >= (g->offset & ~0xfffULL) &&
		    offset < g->offset + g->filesz) {
			*vaddr = offset - g->offset + g->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int symbols__set_path(struct symbols *s, const char *path)
{
	char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	free(s->path);
	s->path = p;
	return 0;
}

const char *symbols__path(const struct symbols *s)
{
	return s->path;
}

int symbols__extent(const struct symbols *s, uint64_t *start, uint64_t *end)
{
	if (s->has_link_base && s->link_end > s->link_base) {
		*start = s->link_base;
		*end = s->link_end;
		return 0;
	}
	if (!s->nr)
		return -ENOENT;
	*start = s->syms[0].start;
	*end = s->syms[0].end;
	for (size_t i = 1; i < s->nr; i++)
		if (s->syms[i].end > *end)
			*end = s->syms[i].end;
	return 0;
}

void symbols__count_probes(struct symbols *s, uint64_t *probes)
{
	s->probes = probes;
}

uint64_t symbols__load_probes(const struct symbols *s)
{
	return s->load_probes;
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
	free(s->plt_names);
	free(s->build_id);
	free(s->path);
	free(s);
}
