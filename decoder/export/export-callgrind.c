// SPDX-License-Identifier: GPL-2.0
/*
 * export-callgrind.c - the Callgrind profile format (export-callgrind.h).
 *
 * Functions are the roots of one call tree (call-tree.h) keyed by their name, whose count is
 * their self cost; calls are the nodes of another keyed by (caller, callee), whose count is
 * the number of calls, with their inclusive cost and first call site beside. A frame's user
 * value holds 1 + its function's index in the low half and 1 + its call's in the high half.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call-tree.h"
#include "export-callgrind.h"
#include "export.h"
#include "export-flow.h"

#define UNKNOWN_FILE "???"

struct call_cost {
	uint64_t inclusive;
	uint64_t site;          /* the first call's source address */
};

struct callgrind {
	struct flow_export fx;     /* first: see export-flow.h */
	struct call_tree fns;   /* roots: functions, count = self cost */
	uint64_t *fn_start;     /* per function: its address */
	const struct procmap_task **fn_task;    /* per function: a task of its code */
	struct call_tree calls; /* (caller, callee), count = calls */
	struct call_cost *costs;
	size_t alloc_fns, alloc_calls;
	uint64_t total;
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

/* The function of frame @f; returns its index, or -ENOMEM. */
static int64_t function_of(struct callgrind *x, const struct flow_stream *s,
			   const struct flow_frame *f)
{
	size_t nr = x->fns.nr, alloc = x->alloc_fns;
	int64_t i = call_tree__child(&x->fns, CALL_TREE_ROOT, (uintptr_t)f->name, f->text,
				     f->text_len);

	if (i < 0 || x->fns.nr == nr)
		return i;
	if (ensure((void **)&x->fn_start, &alloc, sizeof(*x->fn_start), (size_t)i) ||
	    ensure((void **)&x->fn_task, &x->alloc_fns, sizeof(*x->fn_task), (size_t)i))
		return -ENOMEM;
	x->fn_start[i] = f->start;
	x->fn_task[i] = s->task;
	return i;
}

static int cg_enter(void *ctx, struct flow_stream *s, struct flow_frame *f, bool call,
		    const struct decoded_record *r)
{
	struct callgrind *x = ctx;
	int64_t fn = function_of(x, s, f), caller, c;
	size_t nr;

	if (fn < 0)
		return (int)fn;
	f->user = (uint64_t)fn + 1;
	if (f == s->frames)
		return 0;
	caller = (int64_t)(f[-1].user & UINT32_MAX) - 1;
	nr = x->calls.nr;
	c = call_tree__child(&x->calls, (uint32_t)caller, (uint64_t)fn, NULL, 0);
	if (c < 0)
		return (int)c;
	if (x->calls.nr != nr) {
		if (ensure((void **)&x->costs, &x->alloc_calls, sizeof(*x->costs), (size_t)c))
			return -ENOMEM;
		x->costs[c] = (struct call_cost){
			.site = r && r->from_valid ? r->from : f[-1].start,
		};
	}
	x->calls.nodes[c].count++;
	f->user |= ((uint64_t)c + 1) << 32;
	return 0;
}

static int cg_leave(void *ctx, struct flow_stream *s, struct flow_frame *f,
		    const struct decoded_record *r)
{
	struct callgrind *x = ctx;
	uint64_t c = f->user >> 32;

	if (c)
		x->costs[c - 1].inclusive += s->branches - f->branches;
	return 0;
}

static int cg_branch(void *ctx, struct flow_stream *s, const struct decoded_record *r)
{
	struct callgrind *x = ctx;

	x->total++;
	if (s->depth)
		x->fns.nodes[(s->frames[s->depth - 1].user & UINT32_MAX) - 1].count++;
	return 0;
}

static void *cg_new(const struct export_env *env)
{
	static const struct flow_ops ops = {
		.enter = cg_enter, .leave = cg_leave, .branch = cg_branch,
	};
	struct callgrind *x = flow_export__new(sizeof(*x), env, &ops, true);

	if (!x)
		return NULL;
	return x;
}

/* "key=(n) text" the first time (@seen false), "key=(n)" after. */
static void put_name(struct out_buf *ob, const char *key, uint64_t n, bool seen,
		     const char *text, size_t len)
{
	char *p = out_buf__reserve(ob, 16 + OUT_BUF_NUMBER_MAX);

	p = out_buf__fmt_str(p, key, strlen(key));
	*p++ = '=';
	*p++ = '(';
	p = out_buf__fmt_u64(p, n);
	*p++ = ')';
	out_buf__commit(ob, p);
	if (!seen) {
		out_buf__putc(ob, ' ');
		out_buf__write(ob, text, len);
	}
	out_buf__putc(ob, '\n');
}

/* "0xADDR COST\n" */
static void put_cost(struct out_buf *ob, uint64_t addr, uint64_t cost)
{
	char *p = out_buf__reserve(ob, 2 * OUT_BUF_NUMBER_MAX + 4);

	*p++ = '0';
	*p++ = 'x';
	p = out_buf__fmt_hex(p, addr);
	*p++ = ' ';
	p = out_buf__fmt_u64(p, cost);
	*p++ = '\n';
	out_buf__commit(ob, p);
}

static int cg_finish(void *ctx)
{
	struct callgrind *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	size_t nf = x->fns.nr, *first = NULL, *next = NULL;
	struct call_tree files = { 0 };
	uint32_t *file_of = NULL;
	bool *file_seen = NULL, *fn_seen = NULL;
	uint32_t last_file = UINT32_MAX;
	int ret = flow__finish(x->fx.flow);

	if (ret)
		return ret;
	ret = -ENOMEM;
	/* The calls of each caller: first[caller] and next[call], 1 + index, 0 none. */
	first = calloc(nf + 1, sizeof(*first));
	next = calloc(x->calls.nr + 1, sizeof(*next));
	file_of = calloc(nf + 1, sizeof(*file_of));
	fn_seen = calloc(nf + 1, sizeof(*fn_seen));
	if (!first || !next || !file_of || !fn_seen)
		goto out;
	for (size_t c = x->calls.nr; c-- > 0;) {
		next[c] = first[x->calls.nodes[c].parent];
		first[x->calls.nodes[c].parent] = c + 1;
	}
	/* The file of each function's address, numbered in the order first met. */
	for (size_t i = 0; i < nf; i++) {
		const struct annotator_addr *a;
		const char *text = UNKNOWN_FILE;
		size_t len = sizeof(UNKNOWN_FILE) - 1;
		int64_t k;

		if (x->fns.nodes[i].key) {
			a = annotator__addr(x->fx.env.annotator, x->fn_task[i], x->fn_start[i], true);
			if (!a)
				goto out;
			if (a->file) {
				text = a->file_text;
				len = a->file_text_len;
			}
		}
		k = call_tree__child(&files, CALL_TREE_ROOT, (uintptr_t)text, text, len);
		if (k < 0)
			goto out;
		file_of[i] = (uint32_t)k;
	}
	file_seen = calloc(files.nr + 1, sizeof(*file_seen));
	if (!file_seen)
		goto out;

	out_buf__puts(ob, "# callgrind format\nversion: 1\ncreator: vbts decode\n"
			  "positions: instr\nevents: Branches\n");
	for (size_t i = 0; i < nf; i++) {
		const struct call_tree_node *fn = &x->fns.nodes[i];
		uint32_t fl = file_of[i];

		out_buf__putc(ob, '\n');
		if (fl != last_file) {
			put_name(ob, "fl", fl + 1, file_seen[fl], files.nodes[fl].text,
				 files.nodes[fl].text_len);
			file_seen[fl] = true;
			last_file = fl;
		}
		put_name(ob, "fn", i + 1, fn_seen[i], fn->text, fn->text_len);
		fn_seen[i] = true;
		put_cost(ob, x->fn_start[i], fn->count);
		for (size_t c = first[i]; c; c = next[c - 1]) {
			const struct call_tree_node *call = &x->calls.nodes[c - 1];
			size_t callee = (size_t)call->key;
			uint32_t cfl = file_of[callee];
			char *p;

			if (cfl != fl) {
				put_name(ob, "cfi", cfl + 1, file_seen[cfl], files.nodes[cfl].text,
					 files.nodes[cfl].text_len);
				file_seen[cfl] = true;
			}
			put_name(ob, "cfn", callee + 1, fn_seen[callee],
				 x->fns.nodes[callee].text, x->fns.nodes[callee].text_len);
			fn_seen[callee] = true;
			p = out_buf__reserve(ob, 2 * OUT_BUF_NUMBER_MAX + 16);
			p = out_buf__fmt_str(p, "calls=", 6);
			p = out_buf__fmt_u64(p, call->count);
			p = out_buf__fmt_str(p, " 0x", 3);
			p = out_buf__fmt_hex(p, x->fn_start[callee]);
			*p++ = '\n';
			out_buf__commit(ob, p);
			put_cost(ob, x->costs[c - 1].site, x->costs[c - 1].inclusive);
		}
	}
	out_buf__puts(ob, "\ntotals: ");
	out_buf__u64(ob, x->total);
	out_buf__putc(ob, '\n');
	ret = 0;
out:
	free(first);
	free(next);
	free(file_of);
	free(file_seen);
	free(fn_seen);
	call_tree__release(&files);
	return ret;
}

static void cg_free(void *ctx)
{
	struct callgrind *x = ctx;

	flow__free(x->fx.flow);
	call_tree__release(&x->fns);
	call_tree__release(&x->calls);
	free(x->fn_start);
	free(x->fn_task);
	free(x->costs);
	free(x);
}

const struct export_format_ops callgrind_format = {
	.name = "callgrind",
	.new = cg_new,
	.record = flow_export__record,
	.finish = cg_finish,
	.free = cg_free,
};
