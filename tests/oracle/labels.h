/* SPDX-License-Identifier: GPL-2.0 */
/*
 * labels.h - the label table of a test guest image and its check against branch records.
 *
 * Symbols br_<r>_<kind>_from / br_<r>_<kind>_to name a branch that must be recorded with
 * exactly that source and target; nb_<r>_<kind> names an instruction that must never be a
 * branch's source. <r> is k (CPL 0) or u (CPL 3); the CPL filter selects the pairs checked.
 */
#ifndef VBTS_ORACLE_LABELS_H
#define VBTS_ORACLE_LABELS_H

#include <stdint.h>
#include <stdio.h>

#include "branch-list.h"

/**
 * struct label - one expected branch (@to != 0) or one non-branch (@to == 0, @nonbranch).
 */
struct label {
	char name[64];
	int cpl;
	int nonbranch;
	uint64_t from;
	uint64_t to;
};

struct label_table {
	struct label *labels;
	size_t n;
	uint64_t entry; /* the image's entry point */
};

/**
 * label_table__load() - read the labels from the symbol table of the ELF image at @path
 * (ELF32 or ELF64). A _from without its _to (or the reverse) is an error.
 * Returns 0, -errno of open(), -ENOEXEC for a file libelf cannot read or without a symbol
 * table, -EINVAL for an unpaired label, -ENOMEM. @err (size @errlen) says why.
 */
int label_table__load(struct label_table *t, const char *path, char *err, size_t errlen);

void label_table__free(struct label_table *t);

/**
 * label_table__check() - every selected pair appears in @list as a branch record with exact
 * from/to, and no branch record starts at a selected non-branch label. Each miss is named on
 * @report (may be NULL).
 * Returns the number of labels checked; *@failed gets the number of misses.
 */
size_t label_table__check(const struct label_table *t, const struct branch_list *list,
			  enum cpl_filter f, size_t *failed, FILE *report);

/**
 * image__symbol() - the value of symbol @name in the ELF image at @path.
 * Returns 0, -ENOENT when the image has no such symbol, -ENOEXEC when it is not an ELF file
 * with a symbol table, -errno of open().
 */
int image__symbol(const char *path, const char *name, uint64_t *value);

#endif /* VBTS_ORACLE_LABELS_H */
