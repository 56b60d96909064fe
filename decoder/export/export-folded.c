// SPDX-License-Identifier: GPL-2.0
/*
 * export-folded.c - folded stacks (export-folded.h): the stacks of flow.h kept in a call tree
 * (call-tree.h), each frame pointing at its node; a branch counts one at the innermost node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call-tree.h"
#include "export-folded.h"
#include "export-flow.h"

/*
 * The parents of root nodes: a task, a CR3 no task had, no CR3, a thread the trace named (of
 * a task, or of no known task).
 */
#define ROOT_TASK CALL_TREE_ROOT
#define ROOT_CR3 (CALL_TREE_ROOT - 1)
#define ROOT_NONE (CALL_TREE_ROOT - 2)
#define ROOT_THREAD (CALL_TREE_ROOT - 3)
#define NO_TASK "[no task]"

struct folded {
	struct flow_export fx;     /* first: see export-flow.h */
	struct call_tree tree;
	struct call_tree threads;  /* a node per (task, thread): the key of its root */
	char **owned;           /* texts made here (cr3 and thread labels) */
	size_t nr_owned, alloc_owned;
};

/* @size bytes for a root's text, owned by @x. */
static char *own_text(struct folded *x, size_t size)
{
	char *s;

	if (x->nr_owned == x->alloc_owned) {
		size_t alloc = x->alloc_owned ? 2 * x->alloc_owned : 16;
		char **o = realloc(x->owned, alloc * sizeof(*o));

		if (!o)
			return NULL;
		x->owned = o;
		x->alloc_owned = alloc;
	}
	s = malloc(size);
	if (s)
		x->owned[x->nr_owned++] = s;
	return s;
}

/* "cr3:0x..." for a root, owned by @x. */
static char *cr3_text(struct folded *x, uint64_t cr3, size_t *len)
{
	char *s = own_text(x, 6 + 16 + 1), *p;

	if (!s)
		return NULL;
	p = out_buf__fmt_str(s, "cr3:0x", 6);
	p = out_buf__fmt_hex(p, cr3);
	*p = '\0';
	*len = (size_t)(p - s);
	return s;
}

/*
 * The root node of a thread's stacks, "name[pid]" with the thread's pid ("[pid]" of no
 * known task), one per task and thread whatever the vCPU. Returns it or -ENOMEM.
 */
static int64_t thread_root(struct folded *x, const struct flow_stream *s)
{
	const struct annotator_task *l = NULL;
	size_t name_len = 0;
	int64_t k, n;
	char *text, *p;

	k = call_tree__child(&x->threads, CALL_TREE_ROOT, (uintptr_t)s->task, NULL, 0);
	if (k >= 0)
		k = call_tree__child(&x->threads, (uint32_t)k,
				     (uint64_t)s->thread_tgid << 32 | s->thread_pid, NULL, 0);
	if (k < 0)
		return k;
	/* A node made once per thread: the text is made only for a new one. */
	n = call_tree__child(&x->tree, ROOT_THREAD, (uint64_t)k, NULL, 0);
	if (n < 0 || x->tree.nodes[n].text)
		return n;
	if (s->task) {
		l = annotator__labels(x->fx.env.annotator, s->task);
		if (!l)
			return -ENOMEM;
		name_len = l->text_name_len;
	}
	text = own_text(x, name_len + 2 + OUT_BUF_NUMBER_MAX + 1);
	if (!text)
		return -ENOMEM;
	p = out_buf__fmt_str(text, l ? l->text : "", name_len);
	*p++ = '[';
	p = out_buf__fmt_u64(p, s->thread_pid);
	*p++ = ']';
	*p = '\0';
	x->tree.nodes[n].text = text;
	x->tree.nodes[n].text_len = (size_t)(p - text);
	return n;
}

/* The root node of @s's stacks, made when it is first needed. Returns it or -ENOMEM. */
static int64_t root_of(struct folded *x, struct flow_stream *s)
{
	const struct annotator_task *l;
	int64_t n;
	size_t len;
	char *text;

	if (s->user)
		return (int64_t)s->user - 1;
	if (s->thread_valid) {
		n = thread_root(x, s);
	} else if (s->task) {
		l = annotator__labels(x->fx.env.annotator, s->task);
		if (!l)
			return -ENOMEM;
		n = call_tree__child(&x->tree, ROOT_TASK, (uintptr_t)s->task, l->text,
				     l->text_len);
	} else if (s->cr3_valid) {
		/* A node made once per CR3: the text is made only for a new one. */
		n = call_tree__child(&x->tree, ROOT_CR3, s->cr3, NULL, 0);
		if (n >= 0 && !x->tree.nodes[n].text) {
			text = cr3_text(x, s->cr3, &len);
			if (!text)
				return -ENOMEM;
			x->tree.nodes[n].text = text;
			x->tree.nodes[n].text_len = len;
		}
	} else {
		n = call_tree__child(&x->tree, ROOT_NONE, 0, NO_TASK, sizeof(NO_TASK) - 1);
	}
	if (n < 0)
		return n;
	s->user = (uint64_t)n + 1;
	return n;
}

static int folded_enter(void *ctx, struct flow_stream *s, struct flow_frame *f, bool call,
			const struct decoded_record *r)
{
	struct folded *x = ctx;
	int64_t parent, n;

	parent = f == s->frames ? root_of(x, s) : (int64_t)f[-1].user - 1;
	if (parent < 0)
		return (int)parent;
	n = call_tree__child(&x->tree, (uint32_t)parent, (uintptr_t)f->name, f->text,
			     f->text_len);
	if (n < 0)
		return (int)n;
	f->user = (uint64_t)n + 1;
	return 0;
}

static int folded_branch(void *ctx, struct flow_stream *s, const struct decoded_record *r)
{
	struct folded *x = ctx;

	/* The innermost frame kept: calls deeper than FLOW_DEPTH_MAX count there. */
	if (s->depth)
		x->tree.nodes[s->frames[s->depth - 1].user - 1].count++;
	return 0;
}

static void *folded_new(const struct export_env *env)
{
	static const struct flow_ops ops = { .enter = folded_enter, .branch = folded_branch };
	struct folded *x = flow_export__new(sizeof(*x), env, &ops, true);

	if (!x)
		return NULL;
	return x;
}

/* A frame's name with ';' written "\x3b": one frame of the line. */
static void put_frame(struct out_buf *ob, const char *s, size_t len)
{
	const char *semi;

	while ((semi = memchr(s, ';', len))) {
		out_buf__write(ob, s, (size_t)(semi - s));
		out_buf__write(ob, "\\x3b", 4);
		len -= (size_t)(semi - s) + 1;
		s = semi + 1;
	}
	out_buf__write(ob, s, len);
}

static int folded_finish(void *ctx)
{
	struct folded *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	/* A root, FLOW_DEPTH_MAX frames. */
	uint32_t path[FLOW_DEPTH_MAX + 1];

	for (size_t i = 0; i < x->tree.nr; i++) {
		const struct call_tree_node *n = &x->tree.nodes[i];
		size_t len = 0;
		uint32_t j = (uint32_t)i;

		if (!n->count)
			continue;
		for (;;) {
			path[len++] = j;
			if (x->tree.nodes[j].parent >= ROOT_THREAD || len == FLOW_DEPTH_MAX + 1)
				break;
			j = x->tree.nodes[j].parent;
		}
		while (len--) {
			const struct call_tree_node *f = &x->tree.nodes[path[len]];

			put_frame(ob, f->text, f->text_len);
			out_buf__putc(ob, len ? ';' : ' ');
		}
		out_buf__u64(ob, n->count);
		out_buf__putc(ob, '\n');
	}
	return 0;
}

static void folded_free(void *ctx)
{
	struct folded *x = ctx;

	flow__free(x->fx.flow);
	call_tree__release(&x->tree);
	call_tree__release(&x->threads);
	for (size_t i = 0; i < x->nr_owned; i++)
		free(x->owned[i]);
	free(x->owned);
	free(x);
}

const struct export_format_ops folded_format = {
	.name = "folded",
	.new = folded_new,
	.record = flow_export__record,
	.finish = folded_finish,
	.free = folded_free,
};
