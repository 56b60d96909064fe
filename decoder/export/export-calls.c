// SPDX-License-Identifier: GPL-2.0
/*
 * export-calls.c - the function-call history (export-calls.h).
 *
 * A segment's line is written at the first branch made in it, when the innermost frame of
 * its stream is the function executing: a segment is new when the depth or the function
 * differs from the stream's last line. The last segment of each stream (where its trace
 * ends, without a branch of its own) is written at the end.
 */
#include <errno.h>
#include <stdlib.h>

#include "export-calls.h"
#include "export.h"
#include "export-flow.h"

/* What a stream's last line was. */
struct calls_line {
	uint64_t number;
	uint64_t level;
	const char *name;
	bool written;
};

struct calls {
	struct flow_export fx;     /* first: see export-flow.h */
	struct calls_line *lines;       /* per stream index */
	size_t nr_lines;
	const struct flow_stream *last; /* the stream of the last line written */
};

/* The line state of @s, or NULL when out of memory. */
static struct calls_line *line_of(struct calls *c, const struct flow_stream *s)
{
	if (s->index >= c->nr_lines) {
		size_t n = 2 * (s->index + 1);
		struct calls_line *p = realloc(c->lines, n * sizeof(*p));

		if (!p)
			return NULL;
		for (size_t i = c->nr_lines; i < n; i++)
			p[i] = (struct calls_line){ 0 };
		c->lines = p;
		c->nr_lines = n;
	}
	return &c->lines[s->index];
}

static void header(struct calls *c, const struct flow_stream *s)
{
	struct out_buf *ob = c->fx.env.ob;
	const struct annotator_task *l = NULL;
	char *p;

	if (s->task) {
		l = annotator__labels(c->fx.env.annotator, s->task);
		if (!l)
			return;
	}
	p = out_buf__reserve(ob, OUT_BUF_RESERVE_MAX);
	p = out_buf__fmt_str(p, "# vcpu", 6);
	p = out_buf__fmt_u64(p, s->vcpu);
	*p++ = ' ';
	/* A thread the trace named: "name[pid]" with its pid, "[pid]" of no known task. */
	if (l) {
		p = out_buf__fmt_str(p, l->text, s->thread_valid ? l->text_name_len : l->text_len);
	} else if (!s->thread_valid && s->cr3_valid) {
		p = out_buf__fmt_str(p, "cr3:0x", 6);
		p = out_buf__fmt_hex(p, s->cr3);
	} else if (!s->thread_valid) {
		*p++ = '-';
	}
	if (s->thread_valid) {
		*p++ = '[';
		p = out_buf__fmt_u64(p, s->thread_pid);
		*p++ = ']';
	}
	*p++ = '\n';
	out_buf__commit(ob, p);
}

/* Writes the line of the innermost frame of @s unless it is the stream's last line. */
static int segment(struct calls *c, struct flow_stream *s)
{
	struct calls_line *l = line_of(c, s);
	const struct flow_frame *f;
	struct out_buf *ob = c->fx.env.ob;
	uint64_t level;
	char *p;

	if (!l)
		return -ENOMEM;
	if (!s->depth || s->hidden)
		return 0;
	f = &s->frames[s->depth - 1];
	level = s->depth - 1;
	if (l->written && l->level == level && l->name == f->name)
		return 0;
	if (c->last != s) {
		header(c, s);
		c->last = s;
	}
	l->written = true;
	l->level = level;
	l->name = f->name;
	p = out_buf__reserve(ob, OUT_BUF_NUMBER_MAX + 1 + 2 * CALLS_INDENT_MAX + 32);
	p = out_buf__fmt_u64(p, ++l->number);
	*p++ = '\t';
	for (uint64_t i = 0; i < level && i < CALLS_INDENT_MAX; i++) {
		*p++ = ' ';
		*p++ = ' ';
	}
	if (level > CALLS_INDENT_MAX) {
		p = out_buf__fmt_str(p, "[level ", 7);
		p = out_buf__fmt_u64(p, level);
		p = out_buf__fmt_str(p, "] ", 2);
	}
	out_buf__commit(ob, p);
	out_buf__write(ob, f->text, f->text_len);
	out_buf__putc(ob, '\n');
	return 0;
}

static int calls_branch(void *ctx, struct flow_stream *s, const struct decoded_record *r)
{
	return segment(ctx, s);
}

static void *calls_new(const struct export_env *env)
{
	static const struct flow_ops ops = { .branch = calls_branch };
	struct calls *c = flow_export__new(sizeof(*c), env, &ops, true);

	if (!c)
		return NULL;
	return c;
}

/* The segment each stream ends in. */
static int calls_finish(void *x)
{
	struct calls *c = x;
	int ret;

	for (size_t i = 0; i < flow__nr_streams(c->fx.flow); i++) {
		ret = segment(c, flow__stream_at(c->fx.flow, i));
		if (ret)
			return ret;
	}
	return 0;
}

static void calls_free(void *x)
{
	struct calls *c = x;

	flow__free(c->fx.flow);
	free(c->lines);
	free(c);
}

const struct export_format_ops calls_format = {
	.name = "calls",
	.new = calls_new,
	.record = flow_export__record,
	.finish = calls_finish,
	.free = calls_free,
};
