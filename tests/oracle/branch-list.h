/* SPDX-License-Identifier: GPL-2.0 */
/*
 * branch-list.h - a list of branch and gap records read from JSON lines.
 *
 * Two inputs share this reader: the oracle's list ({"from":"0x…","to":"0x…","cpl":N}, no
 * "type") and `vbts decode --format jsonl` ("type":"branch" records with "seq", and "gap"
 * records; a "lost" record counts as a gap; every other type is skipped).
 */
#ifndef VBTS_ORACLE_BRANCH_LIST_H
#define VBTS_ORACLE_BRANCH_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/**
 * struct branch_rec - one record.
 * @from, @to: the branch (for a gap: where control was lost and regained, 0 if absent)
 * @cpl:       CPL at the source, -1 when the record has none
 * @gap:       1 for a gap (or loss) record
 * @seq:       "seq" of a vbts record, else the record's index
 * @line:      line number in the input, for reports
 */
struct branch_rec {
	uint64_t from;
	uint64_t to;
	int cpl;
	int gap;
	uint64_t seq;
	size_t line;
};

struct branch_list {
	struct branch_rec *recs;
	size_t n;
	size_t cap;
};

/* enum cpl_filter - which branches a comparison looks at, by CPL at the source. */
enum cpl_filter {
	CPL_FILTER_ALL,
	CPL_FILTER_USER,   /* CPL > 0 */
	CPL_FILTER_KERNEL, /* CPL 0 */
};

/**
 * branch_list__parse_cpl() - "all", "user" or "kernel" to *@f.
 * Returns 0 or -EINVAL.
 */
int branch_list__parse_cpl(const char *s, enum cpl_filter *f);

/* Whether a record passes @f (gaps and records without a CPL always do). */
int branch_rec__match_cpl(const struct branch_rec *r, enum cpl_filter f);

/**
 * branch_list__append() - add a copy of @r.
 * Returns 0 or -ENOMEM.
 */
int branch_list__append(struct branch_list *l, const struct branch_rec *r);

/**
 * branch_list__read() - append the records of the JSON lines in @f.
 * @name: the input's name for error messages, written to @err (size @errlen)
 * Returns 0, -EINVAL for a line that is not a JSON object with valid fields, -ENOMEM, -EIO.
 */
int branch_list__read(struct branch_list *l, FILE *f, const char *name, char *err,
		      size_t errlen);

/**
 * branch_list__load() - branch_list__read() of the file at @path.
 * Returns as branch_list__read(), or -errno of fopen().
 */
int branch_list__load(struct branch_list *l, const char *path, char *err, size_t errlen);

void branch_list__free(struct branch_list *l);

#endif /* VBTS_ORACLE_BRANCH_LIST_H */
