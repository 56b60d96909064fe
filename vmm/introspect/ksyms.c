// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - symbol addresses from System.map and from the vmlinux's exported-symbol tables.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elfsec.h"
#include "ksyms.h"

int ksyms__parse_line(const char *line, uint64_t *addr, char *type, const char **name,
		      size_t *name_len)
{
	const char *p = line;
	uint64_t a = 0;
	size_t digits = 0, len = 0;

	for (; isxdigit((unsigned char)*p); p++) {
		int c = tolower((unsigned char)*p);

		if (++digits > 16)
			return -EINVAL;
		a = a << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	if (!digits || p[0] != ' ' || !isalpha((unsigned char)p[1]) || p[2] != ' ')
		return -EINVAL;
	*type = p[1];
	p += 3;
	while (p[len] && p[len] != '\n' && !isspace((unsigned char)p[len]))
		len++;
	if (!len || (p[len] && p[len] != '\n') || (p[len] == '\n' && p[len + 1]))
		return -EINVAL;
	*addr = a;
	*name = p;
	*name_len = len;
	return 0;
}

static void offer(struct ksym_want *want, size_t n, const char *name, size_t len, uint64_t addr,
		  bool global)
{
	for (size_t i = 0; i < n; i++) {
		struct ksym_want *w = &want[i];

		if (strlen(w->name) != len || memcmp(w->name, name, len))
			continue;
		/* the first global definition wins; a local one only until a global shows up */
		if (w->found && (w->global || !global))
			continue;
		w->addr = addr;
		w->found = true;
		w->global = global;
	}
}

int ksyms__from_system_map(const char *path, struct ksym_want *want, size_t n, size_t *lines)
{
	char buf[KSYMS_LINE_MAX + 2];
	size_t good = 0;
	bool skipping = false;
	FILE *f;

	for (size_t i = 0; i < n; i++)
		want[i].found = want[i].global = false;
	if (lines)
		*lines = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		bool whole = len && buf[len - 1] == '\n';
		const char *name;
		size_t name_len;
		uint64_t addr;
		char type;

		if (skipping) {
			skipping = !whole; /* the tail of an over-long line */
			continue;
		}
		if (!whole && !feof(f)) {
			skipping = true;
			continue;
		}
		if (ksyms__parse_line(buf, &addr, &type, &name, &name_len))
			continue;
		good++;
		offer(want, n, name, name_len, addr, isupper((unsigned char)type));
	}
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	if (lines)
		*lines = good;
	return 0;
}

static int32_t get_le32s(const uint8_t *p)
{
	uint32_t v = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

	return (int32_t)v;
}

/*
 * The name of entry @i of @tab, whose entries are @entsize bytes, or NULL unless it is a string
 * terminated inside @strs.
 */
static const char *entry_name(const struct elf_section *tab, size_t entsize, size_t i,
			      const struct elf_section *strs, size_t *len)
{
	uint64_t field = tab->addr + i * entsize + 4;
	uint64_t va = field + (uint64_t)(int64_t)get_le32s(tab->data + i * entsize + 4);
	uint64_t off = va - strs->addr;
	const uint8_t *end;

	if (va < strs->addr || off >= strs->size)
		return NULL;
	end = memchr(strs->data + off, '\0', strs->size - off);
	if (!end)
		return NULL;
	*len = end - (strs->data + off);
	return (const char *)strs->data + off;
}

/* Whether every entry of @tab, read as @entsize-byte entries, names a string of @strs. */
static bool layout_fits(const struct elf_section *tab, size_t entsize,
			const struct elf_section *strs)
{
	size_t len;

	if (tab->size % entsize)
		return false;
	for (size_t i = 0; i < tab->size / entsize; i++)
		if (!entry_name(tab, entsize, i, strs, &len) || !len)
			return false;
	return true;
}

int ksyms__from_ksymtab(const uint8_t *elf, size_t size, struct ksym_want *want, size_t n,
			size_t *exported)
{
	static const char *const tables[] = { "__ksymtab", "__ksymtab_gpl" };
	struct elf_section strs, tab;
	size_t count = 0;
	int ret;

	if (exported)
		*exported = 0;
	ret = elfsec__find(elf, size, "__ksymtab_strings", &strs);
	if (ret)
		return ret;
	if (!strs.data)
		return -EINVAL;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		size_t entsize;

		ret = elfsec__find(elf, size, tables[t], &tab);
		if (ret == -ENOENT && t > 0)
			continue;
		if (ret)
			return ret;
		if (!tab.data)
			return -EINVAL;
		/* 12 bytes {value, name, namespace} since 5.4, 8 bytes {value, name} before */
		if (layout_fits(&tab, 12, &strs))
			entsize = 12;
		else if (layout_fits(&tab, 8, &strs))
			entsize = 8;
		else
			return -EINVAL;
		for (size_t i = 0; i < tab.size / entsize; i++) {
			uint64_t field = tab.addr + i * entsize;
			int32_t rel = get_le32s(tab.data + i * entsize);
			const char *name;
			size_t len;

			name = entry_name(&tab, entsize, i, &strs, &len);
			for (size_t w = 0; w < n; w++) {
				if (want[w].found || strlen(want[w].name) != len ||
				    memcmp(want[w].name, name, len))
					continue;
				want[w].addr = field + (uint64_t)(int64_t)rel;
				want[w].found = true;
				want[w].global = true;
			}
			count++;
		}
	}
	if (exported)
		*exported = count;
	return 0;
}
