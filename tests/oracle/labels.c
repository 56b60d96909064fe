// SPDX-License-Identifier: GPL-2.0
/*
 * labels.c - reads br_* / nb_* symbols with libelf and checks them against branch records.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "labels.h"

static struct label *find_label(struct label_table *t, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strlen(t->labels[i].name) == len && !strncmp(t->labels[i].name, name, len))
			return &t->labels[i];
	return NULL;
}

static int add_symbol(struct label_table *t, const char *sym, uint64_t value)
{
	size_t len = strlen(sym), stem;
	struct label *l, *labels;
	int is_from = 0, is_nb = 0;

	if (!strncmp(sym, "nb_", 3))
		is_nb = 1;
	else if (strncmp(sym, "br_", 3))
		return 0;
	if (len < 6 || (sym[3] != 'k' && sym[3] != 'u') || sym[4] != '_')
		return 0;
	stem = len;
	if (!is_nb) {
		if (len > 5 && !strcmp(sym + len - 5, "_from")) {
			is_from = 1;
			stem = len - 5;
		} else if (len > 3 && !strcmp(sym + len - 3, "_to")) {
			stem = len - 3;
		} else {
			return 0;
		}
	}
	if (stem >= sizeof(l->name))
		return -EINVAL;
	l = find_label(t, sym, stem);
	if (!l) {
		labels = realloc(t->labels, (t->n + 1) * sizeof(*labels));
		if (!labels)
			return -ENOMEM;
		t->labels = labels;
		l = &t->labels[t->n++];
		memset(l, 0, sizeof(*l));
		memcpy(l->name, sym, stem);
		l->cpl = sym[3] == 'k' ? 0 : 3;
		l->nonbranch = is_nb;
	}
	if (is_nb || is_from)
		l->from = value;
	else
		l->to = value;
	return 0;
}

int label_table__load(struct label_table *t, const char *path, char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	int fd, ret = -ENOEXEC, found = 0;
	size_t i, n;
	Elf *elf;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		goto err_end;
	}
	t->entry = ehdr.e_entry;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !shdr.sh_entsize)
			continue;
		found = 1;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name)
				continue;
			ret = add_symbol(t, name, sym.st_value);
			if (ret) {
				snprintf(err, errlen, "%s: label %s: %s", path, name,
					 strerror(-ret));
				goto err_end;
			}
		}
	}
	if (!found) {
		snprintf(err, errlen, "%s: no symbol table", path);
		ret = -ENOEXEC;
		goto err_end;
	}
	for (i = 0; i < t->n; i++) {
		if (!t->labels[i].nonbranch && (!t->labels[i].from || !t->labels[i].to)) {
			snprintf(err, errlen, "%s: label %s has no %s", path, t->labels[i].name,
				 t->labels[i].from ? "_to" : "_from");
			ret = -EINVAL;
			goto err_end;
		}
	}
	elf_end(elf);
	close(fd);
	return 0;

err_end:
	elf_end(elf);
	close(fd);
	label_table__free(t);
	return ret;
}

void label_table__free(struct label_table *t)
{
	free(t->labels);
	t->labels = NULL;
	t->n = 0;
}

size_t label_table__check(const struct label_table *t, const struct branch_list *list,
			  enum cpl_filter f, size_t *failed, FILE *report)
{
	size_t i, j, checked = 0;
	int hit;

	*failed = 0;
	for (i = 0; i < t->n; i++) {
		const struct label *l = &t->labels[i];
		struct branch_rec probe = { .cpl = l->cpl };

		if (!branch_rec__match_cpl(&probe, f))
			continue;
		checked++;
		hit = 0;
		for (j = 0; j < list->n && !hit; j++) {
			const struct branch_rec *r = &list->recs[j];

			if (r->gap)
				continue;
			if (l->nonbranch)
				hit = r->from == l->from;
			else
				hit = r->from == l->from && r->to == l->to;
		}
		if (hit == l->nonbranch) {
			(*failed)++;
			if (report && l->nonbranch)
				fprintf(report, "label %s: a branch starts at 0x%" PRIx64
					", which is not a branch\n", l->name, l->from);
			else if (report)
				fprintf(report, "label %s: no branch 0x%" PRIx64 " -> 0x%" PRIx64
					"\n", l->name, l->from, l->to);
		}
	}
	return checked;
}

int image__symbol(const char *path, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	int fd, ret = -ENOEXEC;
	const char *s;
	size_t i, n;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		ret = -ENOENT;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			s = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				ret = 0;
				goto out;
			}
		}
	}
out:
	elf_end(elf);
	close(fd);
	return ret;
}
