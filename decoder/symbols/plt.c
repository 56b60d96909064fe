// SPDX-License-Identifier: GPL-2.0
/*
 * plt.c - names for the PLT stubs of an x86-64 ELF file (plt.h).
 *
 * As binutils' synthetic symbols: each entry of .plt, .plt.sec and .plt.got is decoded, and
 * the GOT slot its `jmp *disp(%rip)` reads is looked up among the relocations. First the
 * entries (at most PLT_ENTRIES_MAX) and their slots, sorted; then one pass over the
 * relocations names the slots that entries use, each once; then the names are copied into
 * one block. A slot two entries use (a hostile file) is named once for both; names stop at
 * PLT_NAMES_MAX bytes in all, so a long name that many relocations share costs its length
 * once. Sections libelf cannot read (outside the file, NOBITS), symbol and string tables of
 * the wrong type or entry size, string tables without their final NUL, symbol indexes past
 * the table and name offsets past its strings are skipped.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "plt.h"

static const char plt_suffix[] = "@plt";

/* An entry found, before it is named. */
struct plt_found {
	uint64_t addr, size, got;
	unsigned int shndx;
};

/* A GOT slot some entry jumps through, and the name a relocation gives it. */
struct plt_slot {
	uint64_t got;
	const char *sym;        /* in a string table libelf read, NULL while unnamed */
	size_t len;
	const char *name;       /* "sym@plt" in the names block */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct plt_slot *find_slot(struct plt_slot *slots, size_t nr, uint64_t got)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (slots[mid].got == got)
			return &slots[mid];
		if (slots[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * The GOT slot of the entry at @p (@len bytes, at @addr): one `jmp *disp32(%rip)` (ff 25),
 * optionally after endbr64 (f3 0f 1e fa) and a bnd prefix (f2), at the entry's start.
 */
static bool entry_slot(const unsigned char *p, size_t len, uint64_t addr, uint64_t *got)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		i = sizeof(endbr64);
	if (i < len && p[i] == 0xf2)
		i++;
	if (len < i + 6 || p[i] != 0xff || p[i + 1] != 0x25)
		return false;
	memcpy(&disp, p + i + 2, sizeof(disp)); /* x86-64: little-endian, as the host */
	*got = addr + i + 6 + (uint64_t)(int64_t)disp;
	return true;
}

static bool is_plt_section(const char *name)
{
	return name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			!strcmp(name, ".plt.got"));
}

/* The entries of every PLT section that jump through a GOT slot; at most PLT_ENTRIES_MAX. */
static int find_entries(Elf *elf, size_t shstrndx, struct plt_found **out, size_t *nr,
			uint64_t *probes)
{
	struct plt_found *f = NULL;
	size_t n = 0, alloc = 0, examined = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) && examined < PLT_ENTRIES_MAX) {
		GElf_Shdr sh;
		Elf_Data *data;
		uint64_t esize, size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    !is_plt_section(elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		esize = sh.sh_entsize == 8 || sh.sh_entsize == 16 ? sh.sh_entsize : 16;
		size = data->d_size < sh.sh_size ? data->d_size : sh.sh_size;
		if (sh.sh_addr > UINT64_MAX - size)
			continue; /* the section wraps the address space */
		for (uint64_t off = 0; off + esize <= size && examined < PLT_ENTRIES_MAX;
		     off += esize) {
			uint64_t got;

			examined++;
			if (!entry_slot((const unsigned char *)data->d_buf + off, esize,
					sh.sh_addr + off, &got))
				continue;
			if (n == alloc) {
				size_t grow = alloc ? 2 * alloc : 64;
				struct plt_found *g = realloc(f, grow * sizeof(*f));

				if (!g) {
					free(f);
					return -ENOMEM;
				}
				f = g;
				alloc = grow;
			}
			f[n++] = (struct plt_found){ sh.sh_addr + off, esize, got,
						     (unsigned int)elf_ndxscn(scn) };
		}
	}
	*probes += examined;
	*out = f;
	*nr = n;
	return 0;
}

/* The distinct slots of @f, sorted. */
static struct plt_slot *make_slots(const struct plt_found *f, size_t n, size_t *nr)
{
	uint64_t *got = malloc((n ? n : 1) * sizeof(*got));
	struct plt_slot *slots = calloc(n ? n : 1, sizeof(*slots));
	size_t k = 0;

	if (!got || !slots) {
		free(got);
		free(slots);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		got[i] = f[i].got;
	qsort(got, n, sizeof(*got), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || slots[k - 1].got != got[i])
			slots[k++].got = got[i];
	free(got);
	*nr = k;
	return slots;
}

/*
 * Names the slots from the JUMP_SLOT and GLOB_DAT relocations of every SHT_RELA section
 * whose symbol table is a real one; the first relocation of a slot wins. Returns the bytes
 * the names take ("sym@plt\0" each), at most PLT_NAMES_MAX.
 */
static size_t name_slots(Elf *elf, struct plt_slot *slots, size_t nr, uint64_t *probes)
{
	size_t rela_size = gelf_fsize(elf, ELF_T_RELA, 1, EV_CURRENT);
	size_t sym_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t total = 0;
	Elf_Scn *scn = NULL;

	if (!rela_size || !sym_size)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh, strsh;
		Elf_Scn *symscn, *strscn;
		Elf_Data *data, *symdata, *strdata;
		size_t n, nsyms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize != rela_size)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) ||
		    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB) ||
		    symsh.sh_entsize != sym_size)
			continue;
		strscn = elf_getscn(elf, symsh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
			continue;
		data = elf_getdata(scn, NULL);
		symdata = elf_getdata(symscn, NULL);
		strdata = elf_getdata(strscn, NULL);
		/* A string table that ends in its NUL: every name in it ends, found in O(1). */
		if (!data || !symdata || !strdata || !strdata->d_buf || !strdata->d_size ||
		    ((const char *)strdata->d_buf)[strdata->d_size - 1])
			continue;
		/* What libelf read, not what the headers claim. */
		n = data->d_size / rela_size;
		nsyms = symdata->d_size / sym_size;
		for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
			struct plt_slot *slot;
			unsigned long type;
			size_t symi, len;
			const char *name;
			GElf_Rela r;
			GElf_Sym sym;

			(*probes)++;
			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			symi = GELF_R_SYM(r.r_info);
			/* An addend names "sym+0x..@plt" in objdump: not a call stub's slot. */
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !symi ||
			    symi >= nsyms || r.r_addend)
				continue;
			slot = find_slot(slots, nr, r.r_offset);
			if (!slot || slot->sym || !gelf_getsym(symdata, (int)symi, &sym))
				continue;
			if (sym.st_name >= strdata->d_size)
				continue;
			name = (const char *)strdata->d_buf + sym.st_name;
			if (!*name)
				continue;
			len = strnlen(name, PLT_NAMES_MAX - total);
			if (len + sizeof(plt_suffix) > PLT_NAMES_MAX - total)
				return total; /* the names' budget is spent */
			slot->sym = name;
			slot->len = len;
			total += len + sizeof(plt_suffix);
		}
	}
	return total;
}

int plt__read(Elf *elf, struct plt_table *t)
{
	struct plt_found *found = NULL;
	struct plt_slot *slots = NULL;
	size_t nfound = 0, nslots = 0, names_len, pos = 0, shstrndx;
	GElf_Ehdr eh;
	int ret = -ENOMEM;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	if (find_entries(elf, shstrndx, &found, &nfound, &t->probes))
		return -ENOMEM;
	if (!nfound)
		return 0;
	slots = make_slots(found, nfound, &nslots);
	if (!slots)
		goto out;
	names_len = name_slots(elf, slots, nslots, &t->probes);
	if (!names_len) {
		ret = 0;
		goto out;
	}
	t->names = malloc(names_len);
	t->entries = calloc(nfound, sizeof(*t->entries));
	if (!t->names || !t->entries) {
		plt__free(t);
		goto out;
	}
	for (size_t i = 0; i < nslots; i++) {
		if (!slots[i].sym)
			continue;
		slots[i].name = t->names + pos;
		memcpy(t->names + pos, slots[i].sym, slots[i].len);
		memcpy(t->names + pos + slots[i].len, plt_suffix, sizeof(plt_suffix));
		pos += slots[i].len + sizeof(plt_suffix);
	}
	for (size_t i = 0; i < nfound; i++) {
		const struct plt_slot *slot = find_slot(slots, nslots, found[i].got);

		if (!slot || !slot->name)
			continue;
		t->entries[t->nr++] = (struct plt_entry){ found[i].addr, found[i].size,
							  found[i].shndx, slot->name };
	}
	ret = 0;
out:
	free(found);
	free(slots);
	return ret;
}

void plt__free(struct plt_table *t)
{
	free(t->entries);
	free(t->names);
	t->entries = NULL;
	t->names = NULL;
	t->nr = 0;
}
