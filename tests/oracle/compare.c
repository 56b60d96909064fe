// SPDX-License-Identifier: GPL-2.0
/*
 * compare.c - segment-wise matching of vbts records against the oracle.
 *
 * Leftmost placement of each segment is optimal: placing a segment further right never helps
 * a later one. Cost is O(oracle * segment) in the worst case, fine for test guests.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "compare.h"

#define CONTEXT 3

struct view {
	const struct branch_rec **r;
	size_t n;
};

static int filter_list(const struct branch_list *l, enum cpl_filter f, struct view *v)
{
	size_t i;

	v->n = 0;
	v->r = calloc(l->n + 1, sizeof(*v->r));
	if (!v->r)
		return -ENOMEM;
	for (i = 0; i < l->n; i++)
		if (branch_rec__match_cpl(&l->recs[i], f))
			v->r[v->n++] = &l->recs[i];
	return 0;
}

static int same(const struct branch_rec *a, const struct branch_rec *b)
{
	return a->from == b->from && a->to == b->to;
}

static void print_rec(FILE *out, const char *mark, const char *who, size_t idx,
		      const struct branch_rec *r)
{
	fprintf(out, "  %s %s[%zu] 0x%" PRIx64 " -> 0x%" PRIx64 " cpl %d (line %zu, seq %" PRIu64
		")\n", mark, who, idx, r->from, r->to, r->cpl, r->line, r->seq);
}

static void print_context(FILE *out, const struct view *o, size_t oi, const struct view *v,
			  size_t vi)
{
	size_t i;

	fprintf(out, " oracle around index %zu:\n", oi);
	for (i = oi > CONTEXT ? oi - CONTEXT : 0; i < o->n && i <= oi + CONTEXT; i++)
		print_rec(out, i == oi ? ">" : " ", "oracle", i, o->r[i]);
	if (oi >= o->n)
		fprintf(out, "  > oracle[%zu] (end of list)\n", oi);
	fprintf(out, " vbts around record %zu:\n", vi);
	for (i = vi > CONTEXT ? vi - CONTEXT : 0; i < v->n && i <= vi + CONTEXT; i++) {
		if (v->r[i]->gap)
			fprintf(out, "  %s gap 0x%" PRIx64 " .. 0x%" PRIx64 " (line %zu)\n",
				i == vi ? ">" : " ", v->r[i]->from, v->r[i]->to, v->r[i]->line);
		else
			print_rec(out, i == vi ? ">" : " ", "vbts", i, v->r[i]);
	}
	if (vi >= v->n)
		fprintf(out, "  > vbts[%zu] (end of records)\n", vi);
}

/* Number of records of segment [vs, ve) that match the oracle from position p on. */
static size_t prefix_match(const struct view *o, size_t p, const struct view *v, size_t vs,
			   size_t ve)
{
	size_t k = 0;

	while (vs + k < ve && p + k < o->n && same(o->r[p + k], v->r[vs + k]))
		k++;
	return k;
}

/* Describe the divergence at oracle position oi / vbts record vi. */
static void report_divergence(FILE *out, const struct view *o, size_t oi, const struct view *v,
			      size_t vi)
{
	size_t i;

	if (!out)
		return;
	if (vi >= v->n || v->r[vi]->gap) {
		fprintf(out, "incomplete: the oracle has branch 0x%" PRIx64 " -> 0x%" PRIx64
			" that vbts did not record (no gap there)\n", o->r[oi]->from, o->r[oi]->to);
	} else if (oi >= o->n) {
		fprintf(out, "unsound: vbts branch 0x%" PRIx64 " -> 0x%" PRIx64
			" (seq %" PRIu64 ") is past the end of the oracle\n",
			v->r[vi]->from, v->r[vi]->to, v->r[vi]->seq);
	} else {
		for (i = oi; i < o->n && !same(o->r[i], v->r[vi]); i++)
			;
		if (i < o->n)
			fprintf(out, "incomplete: the oracle has branch 0x%" PRIx64 " -> 0x%" PRIx64
				" before vbts branch seq %" PRIu64 " (no gap there)\n",
				o->r[oi]->from, o->r[oi]->to, v->r[vi]->seq);
		else
			fprintf(out, "unsound: vbts branch 0x%" PRIx64 " -> 0x%" PRIx64
				" (seq %" PRIu64 ") is not in the oracle at or after index %zu\n",
				v->r[vi]->from, v->r[vi]->to, v->r[vi]->seq, oi);
	}
	print_context(out, o, oi, v, vi);
}

static int compare(const struct branch_list *oracle, const struct branch_list *vbts,
		   enum cpl_filter f, int prefix, struct compare_result *res, FILE *report)
{
	struct view o, v;
	size_t pos = 0, vs = 0, ve, p, best_p, best_k, k, i;
	int anchored = 1, err;

	*res = (struct compare_result){ .ok = 1 };
	err = filter_list(oracle, f, &o);
	if (err)
		return err;
	err = filter_list(vbts, f, &v);
	if (err)
		goto out_free_oracle;
	/* The oracle has no gaps; drop any a hand-written list might carry. */
	for (i = k = 0; i < o.n; i++)
		if (!o.r[i]->gap)
			o.r[k++] = o.r[i];
	o.n = k;
	res->oracle_n = o.n;
	for (i = 0; i < v.n; i++) {
		if (v.r[i]->gap)
			res->gaps++;
		else
			res->vbts_n++;
	}

	for (;;) {
		while (vs < v.n && v.r[vs]->gap) {
			anchored = 0;
			vs++;
		}
		for (ve = vs; ve < v.n && !v.r[ve]->gap; ve++)
			;
		if (ve > vs && anchored) {
			k = prefix_match(&o, pos, &v, vs, ve);
			if (vs + k < ve) {
				report_divergence(report, &o, pos + k, &v, vs + k);
				res->ok = 0;
				goto out;
			}
			pos += k;
		} else if (ve > vs) {
			best_p = pos;
			best_k = 0;
			for (p = pos; p < o.n; p++) {
				k = prefix_match(&o, p, &v, vs, ve);
				if (k > best_k) {
					best_k = k;
					best_p = p;
				}
				if (vs + k == ve)
					break;
			}
			if (vs + best_k < ve) {
				report_divergence(report, &o, best_p + best_k, &v, vs + best_k);
				res->ok = 0;
				goto out;
			}
			pos = best_p + best_k;
		}
		res->matched += ve - vs;
		if (ve == v.n)
			break;
		vs = ve;
	}
	/* Without a trailing gap the trace ended where the oracle ends (unless cut short). */
	if (!prefix && !(v.n && v.r[v.n - 1]->gap) && pos < o.n) {
		report_divergence(report, &o, pos, &v, v.n);
		res->ok = 0;
	}
out:
	free(v.r);
out_free_oracle:
	free(o.r);
	return err;
}

int oracle__compare(const struct branch_list *oracle, const struct branch_list *vbts,
		    enum cpl_filter f, struct compare_result *res, FILE *report)
{
	return compare(oracle, vbts, f, 0, res, report);
}

int oracle__compare_prefix(const struct branch_list *oracle, const struct branch_list *vbts,
			   enum cpl_filter f, struct compare_result *res, FILE *report)
{
	return compare(oracle, vbts, f, 1, res, report);
}

int oracle__compare_exact(const struct branch_list *oracle, const struct branch_list *vbts,
			  enum cpl_filter f, struct compare_result *res, FILE *report)
{
	int err = oracle__compare(oracle, vbts, f, res, report);
	size_t i;

	if (err || !res->ok || !res->gaps)
		return err;
	res->ok = 0;
	for (i = 0; i < vbts->n && !vbts->recs[i].gap; i++)
		;
	if (report)
		fprintf(report, "not exact: gap 0x%" PRIx64 " .. 0x%" PRIx64 " (line %zu)\n",
			vbts->recs[i].from, vbts->recs[i].to, vbts->recs[i].line);
	return 0;
}

int oracle__check_tail(const struct branch_list *oracle, const struct branch_list *vbts,
		       uint64_t target, size_t count, struct compare_result *res, FILE *report)
{
	size_t e, start, len, p, k, best_k = 0, best_p = 0, i;
	struct view o, v;
	int err;

	*res = (struct compare_result){ 0 };
	err = filter_list(oracle, CPL_FILTER_ALL, &o);
	if (err)
		return err;
	err = filter_list(vbts, CPL_FILTER_ALL, &v);
	if (err)
		goto out_free_oracle;
	for (e = 0; e < o.n && (o.r[e]->gap || o.r[e]->to != target); e++)
		;
	if (e == o.n) {
		err = -ENOENT;
		goto out;
	}
	for (start = e; start > 0 && e + 1 - start < count; start--)
		if (o.r[start - 1]->gap || o.r[start - 1]->cpl != o.r[e]->cpl)
			break;
	len = e + 1 - start;
	res->oracle_n = len;
	for (i = 0; i < v.n; i++)
		res->vbts_n += !v.r[i]->gap;
	for (p = 0; p < v.n && best_k < len; p++) {
		for (k = 0; k < len && p + k < v.n && !v.r[p + k]->gap &&
			    same(v.r[p + k], o.r[start + k]); k++)
			;
		if (k > best_k) {
			best_k = k;
			best_p = p;
		}
	}
	res->matched = best_k;
	res->ok = best_k == len;
	if (!res->ok && report) {
		fprintf(report, "missing: the %zu branches into 0x%" PRIx64 " are not all recorded"
			" in a row (longest run %zu)\n", len, target, best_k);
		fprintf(report, " oracle:\n");
		for (k = 0; k < len; k++)
			print_rec(report, k == best_k ? ">" : " ", "oracle", start + k,
				  o.r[start + k]);
		if (best_k)
			print_context(report, &o, start + best_k, &v, best_p + best_k);
	}
out:
	free(v.r);
out_free_oracle:
	free(o.r);
	return err;
}
