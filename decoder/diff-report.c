// SPDX-License-Identifier: GPL-2.0
/*
 * diff-report.c - a comparison of two traces as text, JSON, JUnit XML or markdown
 * (diff-report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "diff-report.h"
#include "escape.h"

int diff_format__parse(const char *name, enum diff_format *format)
{
	static const char *const names[] = { "text", "json", "junit", "markdown" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i])) {
			*format = (enum diff_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *status_of(const struct trace_diff_stream *s)
{
	if (!s->side[1].present)
		return "only-a";
	if (!s->side[0].present)
		return "only-b";
	return s->differs ? "differs" : "equal";
}

/* "pid 127" or "no pid" */
static void pid_text(char *buf, size_t len, const struct trace_diff_side *x)
{
	if (x->pid >= 0)
		snprintf(buf, len, "pid %" PRId64, x->pid);
	else
		snprintf(buf, len, "no pid");
}

/* ---- text -------------------------------------------------------------------------------- */

/* A stream of a comparison with a baseline (A) that differs. */
static void text_baseline(const struct trace_diff_result *res, const struct trace_diff_stream *s,
			  FILE *out)
{
	const struct trace_diff_side *b = &s->side[1];
	char pb[32];

	pid_text(pb, sizeof(pb), b);
	if (!s->side[0].present) {
		fprintf(out, "%s: not in the baseline (%s, %" PRIu64 " branches)\n", s->id, pb,
			b->branches);
		return;
	}
	if (!b->present) {
		fprintf(out, "%s: in each of the baseline's %u runs, not in this one\n", s->id,
			res->baseline_runs);
		return;
	}
	fprintf(out, "%s: outside the baseline of %u runs (%s, %" PRIu64 " branches)\n", s->id,
		res->baseline_runs, pb, b->branches);
	if (b->nr_only) {
		fprintf(out, "  not in the baseline:");
		for (size_t j = 0; j < b->nr_only; j++)
			fprintf(out, "%s %s", j ? "," : "", b->only[j]);
		if (b->more_only)
			fprintf(out, ", and %zu more", b->more_only);
		fputc('\n', out);
	}
	if (s->nr_counts) {
		fprintf(out, "  branches per function, always the same in the baseline (baseline,"
			" run):");
		for (size_t j = 0; j < s->nr_counts; j++)
			fprintf(out, "%s %s %" PRIu64 " %" PRIu64, j ? "," : "", s->counts[j].name,
				s->counts[j].count[0], s->counts[j].count[1]);
		if (s->more_counts)
			fprintf(out, ", and %zu more", s->more_counts);
		fputc('\n', out);
	}
}

static void text_stream(const struct trace_diff_result *res, const struct trace_diff_stream *s,
			FILE *out)
{
	const struct trace_diff_side *a = &s->side[0], *b = &s->side[1];
	char pa[32], pb[32];

	if (res->baseline_runs) {
		text_baseline(res, s, out);
		return;
	}
	if (!a->present || !b->present) {
		const struct trace_diff_side *x = a->present ? a : b;

		pid_text(pa, sizeof(pa), x);
		fprintf(out, "%s: only in %c (%s, %" PRIu64 " branches)\n", s->id,
			a->present ? 'A' : 'B', pa, x->branches);
		return;
	}
	pid_text(pa, sizeof(pa), a);
	pid_text(pb, sizeof(pb), b);
	if (!a->nr_context && !b->nr_context) {
		fprintf(out, "%s: differs (A %s, %" PRIu64 " branches; B %s, %" PRIu64
			" branches)\n", s->id, pa, a->branches, pb, b->branches);
		return;
	}
	fprintf(out, "%s: first difference at branch %" PRIu64 " (A %s, %" PRIu64
		" branches; B %s, %" PRIu64 " branches)\n", s->id, s->first, pa, a->branches, pb,
		b->branches);
	if (a->build_id && b->build_id && strcmp(a->build_id, b->build_id))
		fprintf(out, "  the programs differ: build ID %s in A, %s in B\n", a->build_id,
			b->build_id);
	for (int k = 0; k < 2; k++)
		fprintf(out, "  %c at %s\n", "AB"[k],
			s->side[k].where ? s->side[k].where : "the end of its branches");
	for (int k = 0; k < 2; k++) {
		const struct trace_diff_side *x = &s->side[k];
		uint64_t j;

		for (j = 0; j < x->nr_context; j++)
			fprintf(out, "  %c %5" PRId64 "  %s\n", "AB"[k],
				(int64_t)(s->context_first + j - s->first), x->context[j]);
		if (s->context_first + j <= s->first)
			fprintf(out, "  %c %5" PRId64 "  (no more branches: %" PRIu64 " in all)\n",
				"AB"[k], (int64_t)(s->context_first + j - s->first), x->branches);
	}
	for (int k = 0; k < 2; k++) {
		const struct trace_diff_side *x = &s->side[k];

		if (!x->nr_only)
			continue;
		fprintf(out, "  reached only in %c:", "AB"[k]);
		for (size_t j = 0; j < x->nr_only; j++)
			fprintf(out, "%s %s", j ? "," : "", x->only[j]);
		if (x->more_only)
			fprintf(out, ", and %zu more", x->more_only);
		fputc('\n', out);
	}
	if (s->nr_counts) {
		fprintf(out, "  branches per function (A, B):");
		for (size_t j = 0; j < s->nr_counts; j++)
			fprintf(out, "%s %s %" PRIu64 " %" PRIu64, j ? "," : "", s->counts[j].name,
				s->counts[j].count[0], s->counts[j].count[1]);
		if (s->more_counts)
			fprintf(out, ", and %zu more", s->more_counts);
		fputc('\n', out);
	}
}

static void text_list(FILE *out, const char *title, char *const *l, size_t n, size_t more)
{
	if (!n)
		return;
	fprintf(out, "%s (%zu):\n", title, n + more);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "  %s\n", l[i]);
	if (more)
		fprintf(out, "  ... and %zu more\n", more);
}

static void text_coverage(const struct trace_diff_result *res, FILE *out)
{
	fprintf(out, "coverage: A %" PRIu64 " lines, %" PRIu64 " branch directions; B %" PRIu64
		" lines, %" PRIu64 " branch directions\n", res->lines[0], res->edges[0],
		res->lines[1], res->edges[1]);
	for (int k = 0; k < 2; k++) {
		char t[64];

		snprintf(t, sizeof(t), "lines covered only in %c", "AB"[k]);
		text_list(out, t, res->cov_lines[k], res->nr_cov_lines[k], res->more_cov_lines[k]);
		snprintf(t, sizeof(t), "branch directions taken only in %c", "AB"[k]);
		text_list(out, t, res->cov_edges[k], res->nr_cov_edges[k], res->more_cov_edges[k]);
	}
}

static void async_text(const struct trace_diff_result *res, char *buf, size_t len)
{
	if (res->strict)
		snprintf(buf, len, "asynchronous events compared");
	else
		snprintf(buf, len, "asynchronous events left out: %" PRIu64 " in A, %" PRIu64
			 " in B", res->async[0], res->async[1]);
}

static void text(const struct trace_diff_result *res, FILE *out)
{
	char as[128];

	for (size_t i = 0; i < res->nr; i++)
		if (res->streams[i].differs)
			text_stream(res, &res->streams[i], out);
	if (res->coverage)
		text_coverage(res, out);
	async_text(res, as, sizeof(as));
	if (res->baseline_runs && res->differ)
		fprintf(out, "the run differs from the baseline: %zu of %zu streams (%" PRIu64
			" branches; %s)\n", res->differ, res->nr, res->branches[1],
			res->strict ? "asynchronous events compared" : "asynchronous events left out");
	else if (res->baseline_runs)
		fprintf(out, "the run is within the baseline of %u runs: %zu streams, %" PRIu64
			" branches\n", res->baseline_runs, res->nr, res->branches[1]);
	else if (res->differ)
		fprintf(out, "traces differ: %zu of %zu streams (%" PRIu64 " branches in A, %"
			PRIu64 " in B; %s)\n", res->differ, res->nr, res->branches[0],
			res->branches[1], as);
	else
		fprintf(out, "traces are equal: %zu streams, %" PRIu64 " branches (%s)\n",
			res->nr, res->branches[0], as);
}

/* ---- JSON -------------------------------------------------------------------------------- */

static json_t *jstr(const char *s)
{
	json_t *j = json_string(s ? s : "");

	return j ? j : json_string("?");
}

static json_t *jlist(char *const *l, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, jstr(l[i]));
	return a;
}

static json_t *jside(const struct trace_diff_stream *s, int k)
{
	const struct trace_diff_side *x = &s->side[k];
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "pid", x->pid >= 0 ? json_integer(x->pid) : json_null());
	json_object_set_new(o, "branches", json_integer((json_int_t)x->branches));
	json_object_set_new(o, "async", json_integer((json_int_t)x->async));
	if (x->build_id)
		json_object_set_new(o, "build_id", jstr(x->build_id));
	if (!s->differs)
		return o;
	if (x->where)
		json_object_set_new(o, "where", jstr(x->where));
	json_object_set_new(o, "context", jlist(x->context, x->nr_context));
	json_object_set_new(o, "only", jlist(x->only, x->nr_only));
	json_object_set_new(o, "more_only", json_integer((json_int_t)x->more_only));
	return o;
}

static json_t *jab(uint64_t a, uint64_t b)
{
	return json_pack("{sIsI}", "a", (json_int_t)a, "b", (json_int_t)b);
}

static int json_out(const struct trace_diff_result *res, FILE *out)
{
	json_t *root = json_object(), *streams = json_array();
	int ret = -ENOMEM;

	if (!root || !streams)
		goto out;
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "equal", json_boolean(!res->differ));
	json_object_set_new(root, "strict", json_boolean(res->strict));
	if (res->baseline_runs)
		json_object_set_new(root, "baseline_runs", json_integer(res->baseline_runs));
	json_object_set_new(root, "branches", jab(res->branches[0], res->branches[1]));
	json_object_set_new(root, "async", jab(res->async[0], res->async[1]));
	for (size_t i = 0; i < res->nr; i++) {
		const struct trace_diff_stream *s = &res->streams[i];
		json_t *o = json_object(), *c;

		if (!o)
			goto out;
		json_array_append_new(streams, o);
		json_object_set_new(o, "id", jstr(s->id));
		json_object_set_new(o, "status", jstr(status_of(s)));
		if (s->side[0].present)
			json_object_set_new(o, "a", jside(s, 0));
		if (s->side[1].present)
			json_object_set_new(o, "b", jside(s, 1));
		if (!s->differs || !s->side[0].present || !s->side[1].present)
			continue;
		if (s->side[0].nr_context || s->side[1].nr_context) {
			json_object_set_new(o, "first", json_integer((json_int_t)s->first));
			json_object_set_new(o, "context_first",
					    json_integer((json_int_t)s->context_first));
		}
		c = json_array();
		for (size_t j = 0; c && j < s->nr_counts; j++)
			json_array_append_new(c, json_pack("{sssIsI}", "function",
				s->counts[j].name, "a", (json_int_t)s->counts[j].count[0],
				"b", (json_int_t)s->counts[j].count[1]));
		json_object_set_new(o, "counts", c);
		json_object_set_new(o, "more_counts", json_integer((json_int_t)s->more_counts));
	}
	json_object_set(root, "streams", streams);
	if (res->coverage) {
		json_t *cov = json_object();

		for (int k = 0; cov && k < 2; k++) {
			json_t *side = json_object();

			if (!side)
				break;
			json_object_set_new(side, "lines", json_integer((json_int_t)res->lines[k]));
			json_object_set_new(side, "edges", json_integer((json_int_t)res->edges[k]));
			json_object_set_new(side, "only_lines",
					    jlist(res->cov_lines[k], res->nr_cov_lines[k]));
			json_object_set_new(side, "more_only_lines",
					    json_integer((json_int_t)res->more_cov_lines[k]));
			json_object_set_new(side, "only_edges",
					    jlist(res->cov_edges[k], res->nr_cov_edges[k]));
			json_object_set_new(side, "more_only_edges",
					    json_integer((json_int_t)res->more_cov_edges[k]));
			json_object_set_new(cov, k ? "b" : "a", side);
		}
		json_object_set_new(root, "coverage", cov);
	}
	ret = json_dumpf(root, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	if (!ret && fputc('\n', out) == EOF)
		ret = -EIO;
out:
	json_decref(streams);
	json_decref(root);
	return ret;
}

/* ---- JUnit XML --------------------------------------------------------------------------- */

/* @s with XML's specials as references (the text is printable: escape.h). */
static void xml(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fprintf(out, "\\x%02x", (unsigned char)*s);
			else
				fputc(*s, out);
		}
	}
}

/* The one-line summary of a stream's difference. */
static void summary(const struct trace_diff_result *res, const struct trace_diff_stream *s,
		    char *buf, size_t len)
{
	const struct trace_diff_side *a = &s->side[0], *b = &s->side[1];

	if (res->baseline_runs && !a->present)
		snprintf(buf, len, "not in the baseline (%" PRIu64 " branches)", b->branches);
	else if (res->baseline_runs && !b->present)
		snprintf(buf, len, "in each run of the baseline, not in this one");
	else if (res->baseline_runs)
		snprintf(buf, len, "outside the baseline: %s%s%s",
			 b->nr_only ? b->only[0] : "", b->nr_only && s->nr_counts ? "; " : "",
			 s->nr_counts ? "other branch counts" : "");
	else if (!a->present || !b->present)
		snprintf(buf, len, "only in %c (%" PRIu64 " branches)", a->present ? 'A' : 'B',
			 a->present ? a->branches : b->branches);
	else if (!a->nr_context && !b->nr_context)
		snprintf(buf, len, "differs (%" PRIu64 " branches in A, %" PRIu64 " in B)",
			 a->branches, b->branches);
	else
		snprintf(buf, len, "first difference at branch %" PRIu64 ": A at %s, B at %s",
			 s->first, a->where ? a->where : "its end", b->where ? b->where : "its end");
}

static void junit(const struct trace_diff_result *res, FILE *out)
{
	char buf[1024];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(out, "<testsuites name=\"vbts diff\" tests=\"%zu\" failures=\"%zu\">\n", res->nr,
		res->differ);
	fprintf(out, "  <testsuite name=\"vbts diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\""
		" skipped=\"0\">\n", res->nr, res->differ);
	for (size_t i = 0; i < res->nr; i++) {
		const struct trace_diff_stream *s = &res->streams[i];

		fprintf(out, "    <testcase classname=\"vbts.diff\" name=\"");
		xml(out, s->id);
		if (!s->differs) {
			fprintf(out, "\"/>\n");
			continue;
		}
		fprintf(out, "\">\n      <failure type=\"divergence\" message=\"");
		summary(res, s, buf, sizeof(buf));
		xml(out, buf);
		fprintf(out, "\">");
		/* the text report of the stream */
		{
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);

			if (m) {
				text_stream(res, s, m);
				fclose(m);
				xml(out, text);
			}
			free(text);
		}
		fprintf(out, "</failure>\n    </testcase>\n");
	}
	fprintf(out, "  </testsuite>\n</testsuites>\n");
}

/* ---- markdown ---------------------------------------------------------------------------- */

/* @s in a markdown table cell: the characters of inline markup escaped with a backslash. */
static void md(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("\\`*_[]|<>~", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* Text in a code block: its backticks become quotes, so that it cannot close the fence. */
static void md_code(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc(*s == '`' ? '\'' : *s, out);
}

static void markdown(const struct trace_diff_result *res, const char *const names[2], FILE *out)
{
	char as[128], buf[1024], na[256], nb[256];
	size_t detail = 0;

	async_text(res, as, sizeof(as));
	escape__str(na, sizeof(na), names[0]);
	escape__str(nb, sizeof(nb), names[1]);
	if (res->baseline_runs)
		fprintf(out, "### vbts diff: %s\n\n", res->differ ?
			"the run is outside its baseline" : "the run is within its baseline");
	else
		fprintf(out, "### vbts diff: %s\n\n", res->differ ? "the runs differ" :
			"the runs are equal");
	fprintf(out, "A: `");
	md_code(out, na);
	fprintf(out, "`, B: `");
	md_code(out, nb);
	fprintf(out, "`. %zu of %zu streams differ; %" PRIu64 " branches in A, %" PRIu64
		" in B; %s.\n", res->differ, res->nr, res->branches[0], res->branches[1], as);
	if (res->differ) {
		fprintf(out, "\n| stream | status | first difference |\n|---|---|---|\n");
		for (size_t i = 0; i < res->nr; i++) {
			const struct trace_diff_stream *s = &res->streams[i];

			if (!s->differs)
				continue;
			summary(res, s, buf, sizeof(buf));
			fputs("| ", out);
			md(out, s->id);
			fprintf(out, " | %s | ", status_of(s));
			md(out, buf);
			fputs(" |\n", out);
		}
	}
	for (size_t i = 0; i < res->nr && detail < DIFF_MARKDOWN_DETAIL_MAX; i++) {
		const struct trace_diff_stream *s = &res->streams[i];

		if (!s->differs || !s->side[0].present || !s->side[1].present ||
		    (!s->side[0].nr_context && !s->side[1].nr_context && !res->baseline_runs))
			continue;
		detail++;
		fputs("\n<details><summary>", out);
		md(out, s->id);
		if (res->baseline_runs)
			fputs(": outside the baseline</summary>\n\n```\n", out);
		else
			fprintf(out, ": branch %" PRIu64 "</summary>\n\n```\n", s->first);
		{
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);

			if (m) {
				text_stream(res, s, m);
				fclose(m);
				md_code(out, text);
			}
			free(text);
		}
		fputs("```\n\n</details>\n", out);
	}
	if (res->coverage) {
		fprintf(out, "\nCoverage: A %" PRIu64 " lines, B %" PRIu64 " lines; only in A: %zu"
			" lines, %zu branch directions; only in B: %zu lines, %zu branch"
			" directions.\n", res->lines[0], res->lines[1],
			res->nr_cov_lines[0] + res->more_cov_lines[0],
			res->nr_cov_edges[0] + res->more_cov_edges[0],
			res->nr_cov_lines[1] + res->more_cov_lines[1],
			res->nr_cov_edges[1] + res->more_cov_edges[1]);
	}
}

int diff_report__write(const struct trace_diff_result *res, enum diff_format format,
		       const char *const names[2], FILE *out)
{
	int ret = 0;

	switch (format) {
	case DIFF_FORMAT_TEXT:
		text(res, out);
		break;
	case DIFF_FORMAT_JSON:
		ret = json_out(res, out);
		break;
	case DIFF_FORMAT_JUNIT:
		junit(res, out);
		break;
	case DIFF_FORMAT_MARKDOWN:
		markdown(res, names, out);
		break;
	}
	if (fflush(out) || ferror(out))
		return -EIO;
	return ret;
}
