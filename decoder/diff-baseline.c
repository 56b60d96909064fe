// SPDX-License-Identifier: GPL-2.0
/*
 * diff-baseline.c - baselines of several runs and the comparison of a run with one
 * (diff-baseline.h).
 *
 * The runs are read one by one into profiles (trace-diff-int.h) with every stream's tables
 * filled; the baseline is built as a JSON document whose objects serve as the hash sets while it
 * is made (functions by name, lines by text, edges by their "source,target,tag" text) and are
 * turned into arrays when it is written. A comparison reads the file back into the same sets.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff-baseline.h"
#include "escape.h"
#include "input-file.h"
#include "trace-diff-int.h"

/* Bytes of an edge's text: three hex numbers. */
#define EDGE_TEXT 64
/* Bytes of a formatted name, line or edge. */
#define TEXT_MAX 640

static void edge_text(char *buf, size_t len, const uint64_t k[3])
{
	snprintf(buf, len, "0x%" PRIx64 ",0x%" PRIx64 ",0x%" PRIx64, k[0], k[1], k[2]);
}

static void line_text(char *buf, size_t len, const struct kmap_entry *e)
{
	char q[TEXT_MAX / 2];

	escape__str(q, sizeof(q), e->s ? e->s : "?");
	snprintf(buf, len, "%s:%d", q, e->line);
}

static void fn_text(char *buf, size_t len, const struct kmap_entry *e)
{
	escape__str(buf, len, e->s ? e->s : "?");
}

/* The run @p read, its --task keys checked: @found per key. */
static int read_run(struct diff_profile *p, struct trace_dir *t,
		    const struct diff_baseline_options *o, bool *found)
{
	int ret = diff_profile__init(p, t, o->tasks, o->nr_tasks, found, o->vcpu, o->strict);

	if (ret)
		return ret;
	p->all_stats = true;
	if (!trace_dir__kaslr_slide(t, &p->slide))
		p->slide = 0;
	return diff_profile__read(p);
}

static json_t *pair(json_int_t a, json_int_t b)
{
	return json_pack("[II]", a, b);
}

/* Widens the [min, max] pair @a to hold @v. */
static void widen(json_t *a, json_int_t v)
{
	if (v < json_integer_value(json_array_get(a, 0)))
		json_array_set_new(a, 0, json_integer(v));
	if (v > json_integer_value(json_array_get(a, 1)))
		json_array_set_new(a, 1, json_integer(v));
}

/* Adds one run's stream to the baseline's stream @bs (new: @first). */
static int merge_stream(json_t *bs, const struct diff_pstream *s, bool first)
{
	json_t *fns = json_object_get(bs, "functions"), *lines = json_object_get(bs, "lines");
	json_t *edges = json_object_get(bs, "edges"), *v;
	char buf[TEXT_MAX];
	const char *name;
	void *tmp;

	json_object_set_new(bs, "runs",
			    json_integer(json_integer_value(json_object_get(bs, "runs")) + 1));
	if (first)
		json_object_set_new(bs, "branches", pair((json_int_t)s->n, (json_int_t)s->n));
	else
		widen(json_object_get(bs, "branches"), (json_int_t)s->n);
	/* functions the stream did not reach this time: 0 branches */
	json_object_foreach_safe(fns, tmp, name, v) {
		const struct kmap_entry *e = NULL;

		for (size_t i = 0; i < s->fns.cap && !e; i++) {
			if (!s->fns.e[i].key)
				continue;
			fn_text(buf, sizeof(buf), &s->fns.e[i]);
			if (!strcmp(buf, name))
				e = &s->fns.e[i];
		}
		if (!e)
			widen(v, 0);
	}
	for (size_t i = 0; i < s->fns.cap; i++) {
		const struct kmap_entry *e = &s->fns.e[i];

		if (!e->key)
			continue;
		fn_text(buf, sizeof(buf), e);
		v = json_object_get(fns, buf);
		if (v)
			widen(v, (json_int_t)e->count);
		else if (json_object_set_new(fns, buf, pair(first ? (json_int_t)e->count : 0,
							    (json_int_t)e->count)))
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->lines.cap; i++) {
		if (!s->lines.e[i].key)
			continue;
		line_text(buf, sizeof(buf), &s->lines.e[i]);
		if (json_object_set_new(lines, buf, json_true()))
			return -ENOMEM;
	}
	for (size_t i = 0; i < s->edges.cap; i++) {
		if (!s->edges.e[i].key)
			continue;
		edge_text(buf, sizeof(buf), s->edges.e[i].k);
		if (json_object_set_new(edges, buf, json_true()))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of a set object as a sorted array. */
static json_t *set_array(json_t *set)
{
	size_t n = json_object_size(set), i = 0;
	const char **keys = calloc(n + 1, sizeof(*keys));
	json_t *a = json_array(), *v;
	const char *k;

	if (!keys || !a) {
		free(keys);
		json_decref(a);
		return NULL;
	}
	json_object_foreach(set, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_keys);
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(keys[i]));
	free(keys);
	return a;
}

int diff_baseline__create(const char *out, struct trace_dir *const *runs, size_t nr,
			  const struct diff_baseline_options *o, char *err, size_t errlen)
{
	json_t *streams = json_object(), *root = NULL, *list;
	bool *found = calloc(o->nr_tasks + 1, sizeof(*found));
	bool *any = calloc(o->nr_tasks + 1, sizeof(*any));
	char tmp[4096], q[256];
	int ret = -ENOMEM;
	FILE *f;

	*err = '\0';
	if (!streams || !found || !any)
		goto out;
	for (size_t r = 0; r < nr; r++) {
		struct diff_profile p = { 0 };

		ret = read_run(&p, runs[r], o, found);
		for (size_t i = 0; !ret && i < p.nr; i++) {
			const struct diff_pstream *s = p.streams[i];
			json_t *bs = json_object_get(streams, s->id);
			bool first = !bs;

			if (!s->n)
				continue;       /* asynchronous events alone */

			if (!bs) {
				bs = json_pack("{sIsosososo}", "runs", (json_int_t)0, "branches",
					       json_null(), "functions", json_object(), "lines",
					       json_object(), "edges", json_object());
				if (!bs || json_object_set_new(streams, s->id, bs)) {
					ret = -ENOMEM;
					break;
				}
			}
			ret = merge_stream(bs, s, first);
		}
		diff_profile__release(&p);
		for (size_t i = 0; i < o->nr_tasks; i++)
			any[i] |= found[i];
		if (ret) {
			if (ret != -ENOMEM)
				snprintf(err, errlen, "run %zu: a ring file changed under the reader:"
					 " %s", r + 1, strerror(-ret));
			goto out;
		}
	}
	for (size_t i = 0; i < o->nr_tasks; i++) {
		if (!any[i]) {
			snprintf(err, errlen, "no task '%s' in any run",
				 escape__str(q, sizeof(q), o->tasks[i]));
			ret = -ENOENT;
			goto out;
		}
	}
	/* The document: streams sorted by identity, sets as sorted arrays. */
	ret = -ENOMEM;
	list = json_array();
	root = json_pack("{sisIsbso}", "vbts_baseline", 1, "runs", (json_int_t)nr, "strict",
			 o->strict, "streams", list);
	if (!root)
		goto out;
	{
		size_t n = json_object_size(streams), i = 0;
		const char **ids = calloc(n + 1, sizeof(*ids));
		const char *k;
		json_t *v;

		if (!ids)
			goto out;
		json_object_foreach(streams, k, v)
			ids[i++] = k;
		qsort(ids, n, sizeof(*ids), cmp_keys);
		for (i = 0; i < n; i++) {
			json_t *bs = json_object_get(streams, ids[i]);
			json_t *s = json_pack("{sssOsOsOsoso}", "id", ids[i],
					      "runs", json_object_get(bs, "runs"),
					      "branches", json_object_get(bs, "branches"),
					      "functions", json_object_get(bs, "functions"),
					      "lines", set_array(json_object_get(bs, "lines")),
					      "edges", set_array(json_object_get(bs, "edges")));

			if (!s || json_array_append_new(list, s)) {
				free(ids);
				goto out;
			}
		}
		free(ids);
	}
	/* Whole or not at all: a temporary file beside it, renamed over it. */
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", out, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", escape__str(q, sizeof(q), out), strerror(errno));
		goto out;
	}
	ret = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	if (fputc('\n', f) == EOF)
		ret = -EIO;
	if (fclose(f))
		ret = -EIO;
	if (!ret && rename(tmp, out))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		snprintf(err, errlen, "%s: cannot write the baseline: %s",
			 escape__str(q, sizeof(q), out), strerror(-ret));
	}
out:
	if (ret == -ENOMEM && !*err)
		snprintf(err, errlen, "out of memory");
	json_decref(root);
	json_decref(streams);
	free(found);
	free(any);
	return ret;
}

/* ---- comparison -------------------------------------------------------------------------- */

/* Whether @a is an array of @n non-negative integers. */
static bool ints(const json_t *a, size_t n)
{
	if (!json_is_array(a) || json_array_size(a) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!json_is_integer(json_array_get(a, i)) ||
		    json_integer_value(json_array_get(a, i)) < 0)
			return false;
	return true;
}

/* Turns the arrays of strings "lines" and "edges" of @bs into sets; false when malformed. */
static bool stream_ok(json_t *bs)
{
	const char *members[] = { "lines", "edges" };
	json_t *fns = json_object_get(bs, "functions"), *v;
	const char *k;

	if (!json_is_string(json_object_get(bs, "id")) ||
	    !json_is_integer(json_object_get(bs, "runs")) ||
	    !ints(json_object_get(bs, "branches"), 2) || !json_is_object(fns))
		return false;
	json_object_foreach(fns, k, v)
		if (!ints(v, 2))
			return false;
	for (size_t m = 0; m < 2; m++) {
		json_t *a = json_object_get(bs, members[m]), *set = json_object();
		size_t i;

		if (!json_is_array(a) || !set) {
			json_decref(set);
			return false;
		}
		json_array_foreach(a, i, v) {
			if (!json_is_string(v) || json_object_set_new(set, json_string_value(v),
								       json_true())) {
				json_decref(set);
				return false;
			}
		}
		json_object_set_new(bs, members[m], set);
	}
	return true;
}

static int add_only(struct trace_diff_side *x, const char *text)
{
	char **l;

	if (x->nr_only >= TRACE_DIFF_LIST_MAX) {
		x->more_only++;
		return 0;
	}
	l = realloc(x->only, (x->nr_only + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	x->only = l;
	l[x->nr_only] = strdup(text);
	if (!l[x->nr_only])
		return -ENOMEM;
	x->nr_only++;
	return 0;
}

static int add_count(struct trace_diff_stream *ds, const char *name, uint64_t base, uint64_t run)
{
	struct trace_diff_count *c;

	if (ds->nr_counts >= TRACE_DIFF_LIST_MAX) {
		ds->more_counts++;
		return 0;
	}
	c = realloc(ds->counts, (ds->nr_counts + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	ds->counts = c;
	c[ds->nr_counts].name = strdup(name);
	if (!c[ds->nr_counts].name)
		return -ENOMEM;
	c[ds->nr_counts].count[0] = base;
	c[ds->nr_counts].count[1] = run;
	ds->nr_counts++;
	return 0;
}

/* What @s does that the baseline's stream @bs of @runs runs never did, into @ds. */
static int outside(struct diff_profile *p, const struct diff_pstream *s, json_t *bs,
		   unsigned int runs, struct trace_diff_stream *ds)
{
	json_t *fns = json_object_get(bs, "functions"), *lines = json_object_get(bs, "lines");
	json_t *edges = json_object_get(bs, "edges"), *v;
	bool every = json_integer_value(json_object_get(bs, "runs")) >= (json_int_t)runs;
	char buf[TEXT_MAX], from[TEXT_MAX / 2 - 8], to[TEXT_MAX / 2 - 8];
	const char *name;
	int ret = 0;

	for (size_t i = 0; i < s->fns.cap && !ret; i++) {
		const struct kmap_entry *e = &s->fns.e[i];
		json_int_t lo, hi;

		if (!e->key)
			continue;
		fn_text(buf, sizeof(buf), e);
		v = json_object_get(fns, buf);
		if (!v) {
			char t[TEXT_MAX + 4];

			snprintf(t, sizeof(t), "fn %s", buf);
			ret = add_only(&ds->side[1], t);
			continue;
		}
		lo = json_integer_value(json_array_get(v, 0));
		hi = json_integer_value(json_array_get(v, 1));
		/* a count that never varied, over runs that all had the stream */
		if (runs >= 2 && every && lo == hi && (json_int_t)e->count != lo)
			ret = add_count(ds, buf, (uint64_t)lo, e->count);
	}
	/* functions of a fixed count the run never left a branch in */
	json_object_foreach(fns, name, v) {
		bool seen = false;

		json_int_t lo = json_integer_value(json_array_get(v, 0));

		if (ret || runs < 2 || !every || !lo || lo != json_integer_value(json_array_get(v, 1)))
			continue;
		for (size_t i = 0; i < s->fns.cap && !seen; i++) {
			if (!s->fns.e[i].key)
				continue;
			fn_text(buf, sizeof(buf), &s->fns.e[i]);
			seen = !strcmp(buf, name);
		}
		/* the baseline file's text, escaped again: it may not be what vbts wrote */
		escape__str(buf, sizeof(buf), name);
		if (!seen)
			ret = add_count(ds, buf, (uint64_t)json_integer_value(json_array_get(v, 0)),
					0);
	}
	for (size_t i = 0; i < s->lines.cap && !ret; i++) {
		if (!s->lines.e[i].key)
			continue;
		line_text(buf, sizeof(buf), &s->lines.e[i]);
		if (!json_object_get(lines, buf))
			ret = add_only(&ds->side[1], buf);
	}
	for (size_t i = 0; i < s->edges.cap && !ret; i++) {
		const struct kmap_entry *e = &s->edges.e[i];
		const char *kind;

		if (!e->key)
			continue;
		edge_text(buf, sizeof(buf), e->k);
		if (json_object_get(edges, buf))
			continue;
		diff_profile__addr(p, e->task, e->to, to, sizeof(to));
		if (e->kind == 0xff) {
			snprintf(buf, sizeof(buf), "entry => %s", to);
		} else {
			diff_profile__addr(p, e->task, e->from, from, sizeof(from));
			kind = branch_kind__name(e->kind);
			snprintf(buf, sizeof(buf), "%s => %s%s%s", from, to, kind ? "  " : "",
				 kind ? kind : "");
		}
		ret = add_only(&ds->side[1], buf);
	}
	if (!ret)
		ds->differs = ds->side[1].nr_only || ds->side[1].more_only || ds->nr_counts ||
			      ds->more_counts;
	return ret;
}

static int new_stream(struct trace_diff_result *res, const char *id,
		      struct trace_diff_stream **out)
{
	struct trace_diff_stream *s = realloc(res->streams, (res->nr + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	res->streams = s;
	*out = &s[res->nr++];
	memset(*out, 0, sizeof(**out));
	(*out)->id = strdup(id);
	return (*out)->id ? 0 : -ENOMEM;
}

int diff_baseline__compare(const char *path, struct trace_dir *run,
			   const struct diff_baseline_options *o, struct trace_diff_result *res,
			   char *err, size_t errlen)
{
	struct diff_profile p = { 0 };
	struct diff_baseline_options bo = *o;
	bool *found = calloc(o->nr_tasks + 1, sizeof(*found));
	json_t *root = NULL, *streams, *byid = json_object(), *bs;
	char *text = NULL, q[256];
	json_error_t jerr;
	unsigned int runs;
	size_t len, i;
	int ret;

	*err = '\0';
	memset(res, 0, sizeof(*res));
	if (!found || !byid) {
		ret = -ENOMEM;
		goto out;
	}
	ret = input_file__read(path, DIFF_BASELINE_FILE_MAX, &text, &len, err, errlen);
	if (ret)
		goto out;
	ret = -EINVAL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s: not a baseline: line %d: %s",
			 escape__str(q, sizeof(q), path), jerr.line, jerr.text);
		goto out;
	}
	streams = json_object_get(root, "streams");
	if (json_integer_value(json_object_get(root, "vbts_baseline")) != 1 ||
	    !json_is_integer(json_object_get(root, "runs")) ||
	    json_integer_value(json_object_get(root, "runs")) < 1 ||
	    json_integer_value(json_object_get(root, "runs")) > DIFF_BASELINE_RUNS_MAX ||
	    !json_is_boolean(json_object_get(root, "strict")) || !json_is_array(streams)) {
		snprintf(err, errlen, "%s: not a baseline file of version 1",
			 escape__str(q, sizeof(q), path));
		goto out;
	}
	runs = (unsigned int)json_integer_value(json_object_get(root, "runs"));
	json_array_foreach(streams, i, bs) {
		if (!json_is_object(bs) || !stream_ok(bs) ||
		    json_object_get(byid, json_string_value(json_object_get(bs, "id")))) {
			snprintf(err, errlen, "%s: stream %zu of the baseline is malformed",
				 escape__str(q, sizeof(q), path), i);
			goto out;
		}
		json_object_set(byid, json_string_value(json_object_get(bs, "id")), bs);
	}
	bo.strict = json_is_true(json_object_get(root, "strict"));
	res->strict = bo.strict;
	res->baseline_runs = runs;
	ret = read_run(&p, run, &bo, found);
	if (ret) {
		if (ret != -ENOMEM)
			snprintf(err, errlen, "a ring file changed under the reader: %s",
				 strerror(-ret));
		goto out;
	}
	for (i = 0; i < o->nr_tasks; i++) {
		if (!found[i]) {
			snprintf(err, errlen, "no task '%s' in the run",
				 escape__str(q, sizeof(q), o->tasks[i]));
			ret = -ENOENT;
			goto out;
		}
	}
	res->branches[1] = p.branches;
	res->async[1] = p.async;
	for (i = 0; i < p.nr; i++) {
		const struct diff_pstream *s = p.streams[i];
		struct trace_diff_stream *ds;

		if (!s->n)
			continue;       /* asynchronous events alone */
		ret = new_stream(res, s->id, &ds);
		if (ret)
			goto out;
		ds->side[1].present = true;
		ds->side[1].pid = s->pid;
		ds->side[1].branches = s->n;
		ds->side[1].async = s->async;
		ds->side[0].pid = -1;
		bs = json_object_get(byid, s->id);
		if (!bs) {
			ds->differs = true;
			res->differ++;
			continue;
		}
		ds->side[0].present = true;
		ds->side[0].branches =
			(uint64_t)json_integer_value(json_array_get(json_object_get(bs, "branches"),
								    1));
		ret = outside(&p, s, bs, runs, ds);
		if (ret)
			goto out;
		res->differ += ds->differs;
	}
	json_array_foreach(streams, i, bs) {
		const char *id = json_string_value(json_object_get(bs, "id"));
		struct trace_diff_stream *ds;
		bool seen = false;

		for (size_t j = 0; j < p.nr && !seen; j++)
			seen = p.streams[j]->n && !strcmp(p.streams[j]->id, id);
		/* a stream some runs had: noise; one every run had: missing */
		if (seen || json_integer_value(json_object_get(bs, "runs")) < (json_int_t)runs)
			continue;
		ret = new_stream(res, escape__str(q, sizeof(q), id), &ds);
		if (ret)
			goto out;
		ds->side[0].present = true;
		ds->side[0].pid = ds->side[1].pid = -1;
		ds->side[0].branches =
			(uint64_t)json_integer_value(json_array_get(json_object_get(bs, "branches"),
								    1));
		ds->differs = true;
		res->differ++;
	}
	ret = res->differ ? 1 : 0;
out:
	if (ret == -ENOMEM && !*err)
		snprintf(err, errlen, "out of memory");
	if (ret < 0)
		trace_diff_result__free(res);
	diff_profile__release(&p);
	json_decref(byid);
	json_decref(root);
	free(text);
	free(found);
	return ret;
}
