// SPDX-License-Identifier: GPL-2.0
/*
 * export-lcov.c - an lcov tracefile of the lines run and branches taken (export-lcov.h).
 *
 * Tables (call-tree.h used as hash maps): files keyed by their text (the annotator's, one
 * pointer per distinct name), lines and branch sources keyed by (file, line) and (file,
 * address), functions by their name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call-tree.h"
#include "export-lcov.h"
#include "export-flow.h"

struct lcov {
	struct flow_export fx;     /* first: see export-flow.h */
	struct call_tree files;         /* roots keyed by text */
	struct call_tree lines;         /* (file, line), count = executions */
	struct call_tree branches;      /* (file, source address), count = taken */
	int *branch_line;               /* per branch source */
	size_t alloc_branches;
	struct call_tree fns;           /* roots keyed by name, count = calls */
	uint64_t *fn_start;
	const struct procmap_task **fn_task;
	size_t alloc_fns;
};

/* Grows @p (of @alloc elements of @size) to hold index @i. Returns 0 or -ENOMEM. */
static int ensure(void **p, size_t *alloc, size_t size, size_t i)
{
	size_t n = *alloc ? *alloc : 64;
	void *q;

	if (i < *alloc)
		return 0;
	while (n <= i)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*alloc = n;
	return 0;
}

/* The file of an answer with a line; returns its index or -ENOMEM. */
static int64_t file_of(struct lcov *x, const struct annotator_addr *a)
{
	return call_tree__child(&x->files, CALL_TREE_ROOT, (uintptr_t)a->file_text, a->file_text,
				a->file_text_len);
}

/* Counts the function of @addr (a call when @addr is its first byte). */
static int function(struct lcov *x, const struct procmap_task *t, uint64_t addr, bool entry)
{
	const struct annotator_addr *a = annotator__addr(x->fx.env.annotator, t, addr, false);
	size_t nr = x->fns.nr, alloc = x->alloc_fns;
	int64_t i;

	if (!a)
		return -ENOMEM;
	if (!a->name)
		return 0;
	i = call_tree__child(&x->fns, CALL_TREE_ROOT, (uintptr_t)a->name, a->name_text,
			     a->name_text_len);
	if (i < 0)
		return (int)i;
	if (x->fns.nr != nr) {
		if (ensure((void **)&x->fn_start, &alloc, sizeof(*x->fn_start), (size_t)i) ||
		    ensure((void **)&x->fn_task, &x->alloc_fns, sizeof(*x->fn_task), (size_t)i))
			return -ENOMEM;
		x->fn_start[i] = addr - a->offset;
		x->fn_task[i] = t;
	}
	if (entry && !a->offset)
		x->fns.nodes[i].count++;
	return 0;
}

static bool conditional(unsigned int kind)
{
	return kind == VBTS_BR_JCC || kind == VBTS_BR_LOOP || kind == VBTS_BR_JRCXZ;
}

static int lcov_branch(void *ctx, struct flow_stream *s, const struct decoded_record *r)
{
	struct lcov *x = ctx;
	uint64_t start = r->from, addr;
	const struct annotator_addr *a;
	const char *last_file = NULL;
	int last_line = 0, ret;
	int64_t f, n;

	if (s->run_valid && s->run_start <= r->from && r->from - s->run_start < LCOV_RUN_MAX)
		start = s->run_start;
	for (addr = start;; addr++) {
		a = annotator__addr(x->fx.env.annotator, s->task, addr, true);
		if (!a)
			return -ENOMEM;
		if (a->file && (a->file_text != last_file || a->line != last_line)) {
			last_file = a->file_text;
			last_line = a->line;
			f = file_of(x, a);
			n = f < 0 ? f : call_tree__child(&x->lines, (uint32_t)f,
							 (uint64_t)(uint32_t)a->line, NULL, 0);
			if (n < 0)
				return (int)n;
			x->lines.nodes[n].count++;
		}
		if (addr == r->from)
			break;
	}
	/* @a is the branch's source. */
	if (conditional(r->kind) && a->file) {
		size_t nr = x->branches.nr;

		f = file_of(x, a);
		n = f < 0 ? f : call_tree__child(&x->branches, (uint32_t)f, r->from, NULL, 0);
		if (n < 0)
			return (int)n;
		if (x->branches.nr != nr) {
			if (ensure((void **)&x->branch_line, &x->alloc_branches,
				   sizeof(*x->branch_line), (size_t)n))
				return -ENOMEM;
			x->branch_line[n] = a->line;
		}
		x->branches.nodes[n].count++;
	}
	ret = function(x, s->task, r->from, false);
	return ret ? ret : function(x, s->task, r->to, true);
}

static void *lcov_new(const struct export_env *env)
{
	static const struct flow_ops ops = { .branch = lcov_branch };
	struct lcov *x = flow_export__new(sizeof(*x), env, &ops, false);

	if (!x)
		return NULL;
	return x;
}

/* "KEY:N\n" */
static void put_count(struct out_buf *ob, const char *key, uint64_t n)
{
	out_buf__puts(ob, key);
	out_buf__u64(ob, n);
	out_buf__putc(ob, '\n');
}

/* Indexes of @t's nodes grouped by parent (a file), in the order made within each. */
struct by_file {
	size_t *first;  /* per file: where its indexes start in @order */
	size_t *order;
};

static int group(const struct call_tree *t, size_t nr_files, const uint32_t *file,
		 struct by_file *g)
{
	size_t *pos;

	g->first = calloc(nr_files + 1, sizeof(*g->first));
	g->order = malloc((t->nr + 1) * sizeof(*g->order));
	pos = calloc(nr_files + 1, sizeof(*pos));
	if (!g->first || !g->order || !pos) {
		free(pos);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nr; i++)
		g->first[(file ? file[i] : t->nodes[i].parent) + 1]++;
	for (size_t f = 0; f < nr_files; f++)
		g->first[f + 1] += g->first[f];
	memcpy(pos, g->first, (nr_files + 1) * sizeof(*pos));
	for (size_t i = 0; i < t->nr; i++)
		g->order[pos[file ? file[i] : t->nodes[i].parent]++] = i;
	free(pos);
	return 0;
}

static void group_free(struct by_file *g)
{
	free(g->first);
	free(g->order);
}

/* qsort_r() order of line indexes of @tree by line number. */
static int by_line(const void *a, const void *b, void *tree)
{
	const struct call_tree *t = tree;
	uint64_t x = t->nodes[*(const size_t *)a].key;
	uint64_t y = t->nodes[*(const size_t *)b].key;

	return x < y ? -1 : x > y;
}

static int lcov_finish(void *ctx)
{
	struct lcov *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	struct by_file lines = { 0 }, brs = { 0 }, fns = { 0 };
	uint32_t *fn_file = NULL;
	int *fn_line = NULL, ret = -ENOMEM;
	size_t nf;

	/* The file and line of each function's first byte; UINT32_MAX: none. */
	fn_file = malloc((x->fns.nr + 1) * sizeof(*fn_file));
	fn_line = malloc((x->fns.nr + 1) * sizeof(*fn_line));
	if (!fn_file || !fn_line)
		goto out;
	for (size_t i = 0; i < x->fns.nr; i++) {
		const struct annotator_addr *a = annotator__addr(x->fx.env.annotator, x->fn_task[i],
								 x->fn_start[i], true);
		int64_t f;

		if (!a)
			goto out;
		fn_file[i] = UINT32_MAX;
		if (!a->file)
			continue;
		f = file_of(x, a);
		if (f < 0)
			goto out;
		fn_file[i] = (uint32_t)f;
		fn_line[i] = a->line;
	}
	nf = x->files.nr;
	/* Functions without a line go to a file of their own index: past the last. */
	for (size_t i = 0; i < x->fns.nr; i++)
		if (fn_file[i] == UINT32_MAX)
			fn_file[i] = (uint32_t)nf;
	if (group(&x->lines, nf, NULL, &lines) || group(&x->branches, nf, NULL, &brs) ||
	    group(&x->fns, nf + 1, fn_file, &fns))
		goto out;
	for (size_t f = 0; f < nf; f++) {
		uint64_t hit = 0, n;

		out_buf__puts(ob, "TN:\nSF:");
		out_buf__write(ob, x->files.nodes[f].text, x->files.nodes[f].text_len);
		out_buf__putc(ob, '\n');
		for (size_t k = fns.first[f]; k < fns.first[f + 1]; k++) {
			const struct call_tree_node *fn = &x->fns.nodes[fns.order[k]];

			out_buf__puts(ob, "FN:");
			out_buf__u64(ob, (uint64_t)fn_line[fns.order[k]]);
			out_buf__putc(ob, ',');
			out_buf__write(ob, fn->text, fn->text_len);
			out_buf__puts(ob, "\nFNDA:");
			out_buf__u64(ob, fn->count);
			out_buf__putc(ob, ',');
			out_buf__write(ob, fn->text, fn->text_len);
			out_buf__putc(ob, '\n');
			hit += fn->count > 0;
		}
		put_count(ob, "FNF:", fns.first[f + 1] - fns.first[f]);
		put_count(ob, "FNH:", hit);
		n = 0;
		for (size_t k = brs.first[f]; k < brs.first[f + 1]; k++, n++) {
			out_buf__puts(ob, "BRDA:");
			out_buf__u64(ob, (uint64_t)x->branch_line[brs.order[k]]);
			/* Each source a block of its own, with its one known (taken) branch. */
			out_buf__putc(ob, ',');
			out_buf__u64(ob, n);
			out_buf__puts(ob, ",0,");
			out_buf__u64(ob, x->branches.nodes[brs.order[k]].count);
			out_buf__putc(ob, '\n');
		}
		put_count(ob, "BRF:", n);
		put_count(ob, "BRH:", n);
		qsort_r(lines.order + lines.first[f], lines.first[f + 1] - lines.first[f],
		      sizeof(*lines.order), by_line, &x->lines);
		for (size_t k = lines.first[f]; k < lines.first[f + 1]; k++) {
			const struct call_tree_node *l = &x->lines.nodes[lines.order[k]];

			out_buf__puts(ob, "DA:");
			out_buf__u64(ob, l->key);
			out_buf__putc(ob, ',');
			out_buf__u64(ob, l->count);
			out_buf__putc(ob, '\n');
		}
		n = lines.first[f + 1] - lines.first[f];
		put_count(ob, "LF:", n);
		put_count(ob, "LH:", n);
		out_buf__puts(ob, "end_of_record\n");
	}
	ret = 0;
out:
	group_free(&lines);
	group_free(&brs);
	group_free(&fns);
	free(fn_file);
	free(fn_line);
	return ret;
}

static void lcov_free(void *ctx)
{
	struct lcov *x = ctx;

	flow__free(x->fx.flow);
	call_tree__release(&x->files);
	call_tree__release(&x->lines);
	call_tree__release(&x->branches);
	call_tree__release(&x->fns);
	free(x->branch_line);
	free(x->fn_start);
	free(x->fn_task);
	free(x);
}

const struct export_format_ops lcov_format = {
	.name = "lcov",
	.new = lcov_new,
	.record = flow_export__record,
	.finish = lcov_finish,
	.free = lcov_free,
};
