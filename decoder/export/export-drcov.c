// SPDX-License-Identifier: GPL-2.0
/*
 * export-drcov.c - the basic blocks run, as a drcov file (export-drcov.h).
 *
 * Tables (call-tree.h used as hash maps): modules keyed by their table, then by their base
 * (the node's count is 1 + the module's id); blocks keyed by (module id, offset << 16 | size).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call-tree.h"
#include "escape.h"
#include "export-drcov.h"
#include "export.h"
#include "export-flow.h"
#include "symbolizer.h"

struct drcov {
	struct flow_export fx;     /* first: see export-flow.h */
	struct call_tree mod_keys;      /* table, then base: count = 1 + id */
	struct symbolizer_module *mods; /* per id */
	size_t nr_mods, alloc_mods;
	struct call_tree blocks;        /* (id, offset << 16 | size) */
	uint64_t unknown, unfit;        /* blocks left out */
};

/* The id of @m, made when new; returns it or -ENOMEM. */
static int64_t module_id(struct drcov *x, const struct symbolizer_module *m)
{
	int64_t t, b;

	t = call_tree__child(&x->mod_keys, CALL_TREE_ROOT, (uintptr_t)m->table, NULL, 0);
	b = t < 0 ? t : call_tree__child(&x->mod_keys, (uint32_t)t, m->base, NULL, 0);
	if (b < 0)
		return b;
	if (x->mod_keys.nodes[b].count)
		return (int64_t)x->mod_keys.nodes[b].count - 1;
	if (x->nr_mods == x->alloc_mods) {
		size_t n = x->alloc_mods ? 2 * x->alloc_mods : 16;
		void *p = realloc(x->mods, n * sizeof(*x->mods));

		if (!p)
			return -ENOMEM;
		x->mods = p;
		x->alloc_mods = n;
	}
	x->mods[x->nr_mods] = *m;
	x->mod_keys.nodes[b].count = ++x->nr_mods;
	return (int64_t)x->nr_mods - 1;
}

static int drcov_branch(void *ctx, struct flow_stream *s, const struct decoded_record *r)
{
	struct drcov *x = ctx;
	const struct symbolizer *sz = x->fx.env.o->symbolizer;
	struct symbolizer_module m;
	uint64_t start = s->run_start;
	int64_t id, b;

	if (!s->run_valid)
		return 0;
	if (r->from < start || r->from - start >= DRCOV_BLOCK_MAX) {
		x->unfit++;
		return 0;
	}
	if (!sz || symbolizer__module(sz, s->task, start, &m)) {
		x->unknown++;
		return 0;
	}
	if (r->from >= m.end || start - m.base > UINT32_MAX) {
		x->unfit++;
		return 0;
	}
	id = module_id(x, &m);
	if (id < 0)
		return (int)id;
	if (id > UINT16_MAX) {  /* more modules than an entry can name */
		x->unknown++;
		return 0;
	}
	b = call_tree__child(&x->blocks, (uint32_t)id,
			     (start - m.base) << 16 | (r->from - start + 1), NULL, 0);
	return b < 0 ? (int)b : 0;
}

static void *drcov_new(const struct export_env *env)
{
	static const struct flow_ops ops = { .branch = drcov_branch };
	struct drcov *x = flow_export__new(sizeof(*x), env, &ops, false);

	if (!x)
		return NULL;
	return x;
}

/* @path escaped for one field of a module line. Returns 0 or -ENOMEM. */
static int put_path(struct out_buf *ob, const char *path)
{
	size_t len = strlen(path), n;
	char *e = malloc(len * ESCAPE_UNIT_MAX + 1);

	if (!e)
		return -ENOMEM;
	n = escape__buf(e, len * ESCAPE_UNIT_MAX + 1, path, len, 0);
	for (size_t i = 0; i < n; i++) {
		if (e[i] == ',' || (e[i] == ' ' && (!i || i == n - 1)))
			out_buf__puts(ob, e[i] == ',' ? "\\x2c" : "\\x20");
		else
			out_buf__putc(ob, e[i]);
	}
	free(e);
	return 0;
}

static void put_le(unsigned char *p, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static int drcov_finish(void *ctx)
{
	struct drcov *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	char line[160];
	int ret;

	out_buf__puts(ob, "DRCOV VERSION: 2\nDRCOV FLAVOR: drcov\n");
	snprintf(line, sizeof(line), "Module Table: version 2, count %zu\n", x->nr_mods);
	out_buf__puts(ob, line);
	out_buf__puts(ob, "Columns: id, base, end, entry, checksum, timestamp, path\n");
	for (size_t i = 0; i < x->nr_mods; i++) {
		snprintf(line, sizeof(line), "%3zu, 0x%016" PRIx64 ", 0x%016" PRIx64
			 ", 0x%016x, 0x%08x, 0x%08x, ", i, x->mods[i].base, x->mods[i].end, 0, 0,
			 0);
		out_buf__puts(ob, line);
		ret = put_path(ob, x->mods[i].path);
		if (ret)
			return ret;
		out_buf__putc(ob, '\n');
	}
	snprintf(line, sizeof(line), "BB Table: %zu bbs\n", x->blocks.nr);
	out_buf__puts(ob, line);
	for (size_t i = 0; i < x->blocks.nr; i++) {
		const struct call_tree_node *n = &x->blocks.nodes[i];
		unsigned char e[8];

		put_le(e, n->key >> 16, 4);
		put_le(e + 4, n->key & 0xffff, 2);
		put_le(e + 6, n->parent, 2);
		out_buf__write(ob, e, sizeof(e));
	}
	if (x->unknown)
		fprintf(stderr, "vbts decode: drcov: %" PRIu64 " run%s between branches in no known "
			"module (no --image, --symbols, System.map or vmlinux holds %s), left out\n",
			x->unknown, x->unknown == 1 ? "" : "s", x->unknown == 1 ? "it" : "them");
	if (x->unfit)
		fprintf(stderr, "vbts decode: drcov: %" PRIu64 " run%s between branches that do "
			"not fit together (a loss?), left out\n", x->unfit,
			x->unfit == 1 ? "" : "s");
	return 0;
}

static void drcov_free(void *ctx)
{
	struct drcov *x = ctx;

	flow__free(x->fx.flow);
	call_tree__release(&x->mod_keys);
	call_tree__release(&x->blocks);
	free(x->mods);
	free(x);
}

const struct export_format_ops drcov_format = {
	.name = "drcov",
	.new = drcov_new,
	.record = flow_export__record,
	.finish = drcov_finish,
	.free = drcov_free,
};
