// SPDX-License-Identifier: GPL-2.0
/*
 * export.c - text and jsonl output of decoded records, and the trace summary.
 *
 * Task names come from the guest: jsonl escapes them, text replaces unprintable bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

const struct procmap_task *exporter__task(const struct exporter *e,
					  const struct decoded_record *r)
{
	if (!e->procmap || !r->cr3_valid)
		return NULL;
	return procmap__lookup(e->procmap, r->cr3, r->time, r->time_valid);
}

/* ---- jsonl -------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* An address member; an unknown address (an orphan gap half) is left out. */
static void json_addr(FILE *f, const char *key, uint64_t v, bool valid)
{
	if (valid)
		fprintf(f, ",\"%s\":\"0x%" PRIx64 "\"", key, v);
}

static const char *start_filter_name(uint64_t aux)
{
	bool user = aux & VBTS_START_CPL_USER, kernel = aux & VBTS_START_CPL_KERNEL;

	return user && kernel ? "all" : user ? "user" : kernel ? "kernel" : "none";
}

static void jsonl_record(const struct exporter *e, const struct decoded_record *r)
{
	const struct procmap_task *task = NULL;
	const char *kind;
	FILE *f = e->out;

	fprintf(f, "{\"type\":\"%s\",\"vcpu\":%" PRIu32 ",\"seq\":%" PRIu64,
		decoded_type__name(r->type), r->vcpu, r->seq);
	switch (r->type) {
	case DECODED_BRANCH:
		json_addr(f, "from", r->from, true);
		json_addr(f, "to", r->to, true);
		if (r->cpl_valid)
			fprintf(f, ",\"cpl\":%u", r->cpl);
		kind = branch_kind__name(r->kind);
		if (kind)
			fprintf(f, ",\"kind\":\"%s\"", kind);
		if (r->vector_valid)
			fprintf(f, ",\"vector\":%u", r->vector);
		task = exporter__task(e, r);
		if (task) {
			fputs(",\"task\":", f);
			json_string(f, task->name);
		}
		break;
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		json_addr(f, "cr3", r->cr3, true);
		fprintf(f, ",\"time\":%" PRIu64, r->time);
		task = exporter__task(e, r);
		if (task) {
			fputs(",\"task\":", f);
			json_string(f, task->name);
		}
		break;
	case DECODED_GAP:
		json_addr(f, "from", r->from, r->from_valid);
		json_addr(f, "to", r->to, r->to_valid);
		fprintf(f, ",\"reason\":\"%s\"", gap_reason__name(r->aux));
		break;
	case DECODED_LOST:
		fprintf(f, ",\"count\":%" PRIu64, r->count);
		break;
	case DECODED_START:
		fprintf(f, ",\"time\":%" PRIu64 ",\"trace\":\"%s\"", r->time,
			start_filter_name(r->aux));
		break;
	case DECODED_FREEZE:
		fprintf(f, ",\"time\":%" PRIu64 ",\"reason\":\"%s\"", r->time,
			freeze_reason__name(r->aux));
		break;
	case DECODED_TIME:
	case DECODED_STOP:
		fprintf(f, ",\"time\":%" PRIu64, r->time);
		break;
	default:
		fprintf(f, ",\"kind\":%u,\"payload\":\"0x%" PRIx64 "\",\"aux\":\"0x%" PRIx64 "\"",
			r->esc_kind, r->payload, r->aux);
		break;
	}
	fputs("}\n", f);
}

/* ---- text --------------------------------------------------------------------------------- */

/* "name[pid]", "cr3:0x..." or "-", with unprintable bytes of guest names replaced. */
static void task_label(const struct exporter *e, const struct decoded_record *r, char *buf,
		       size_t len)
{
	const struct procmap_task *t = exporter__task(e, r);
	size_t i;

	if (t) {
		snprintf(buf, len, "%.40s[%" PRId64 "]", t->name, t->pid);
		for (i = 0; buf[i]; i++)
			if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f)
				buf[i] = '?';
	} else if (r->cr3_valid) {
		snprintf(buf, len, "cr3:0x%" PRIx64, r->cr3);
	} else {
		snprintf(buf, len, "-");
	}
}

static void text_addr(const struct exporter *e, FILE *f, uint64_t addr, bool valid)
{
	struct symbol_hit hit;
	const char *file;
	int line;

	if (!valid) {
		fputs("?", f);
		return;
	}
	fprintf(f, "0x%" PRIx64, addr);
	if (!e->symbols)
		return;
	if (symbols__lookup(e->symbols, addr, &hit))
		fputs(" [unknown]", f);
	else
		fprintf(f, " %s+0x%" PRIx64, hit.name, hit.offset);
	if (e->lines && !symbols__line(e->symbols, addr, &file, &line))
		fprintf(f, " (%s:%d)", file, line);
}

static void text_record(const struct exporter *e, const struct decoded_record *r)
{
	char task[64];
	const char *kind;
	FILE *f = e->out;

	task_label(e, r, task, sizeof(task));
	if (r->type == DECODED_BRANCH) {
		fprintf(f, "  vcpu%" PRIu32 " cpl%c %-16s ", r->vcpu,
			r->cpl_valid ? (char)('0' + r->cpl) : '?', task);
		text_addr(e, f, r->from, true);
		fputs("  =>  ", f);
		text_addr(e, f, r->to, true);
		kind = branch_kind__name(r->kind);
		if (kind && r->vector_valid)
			fprintf(f, "  (%s %u)", kind, r->vector);
		else if (kind)
			fprintf(f, "  (%s)", kind);
		fputc('\n', f);
		return;
	}

	fprintf(f, "  vcpu%" PRIu32 " ---- %-16s %-12s", r->vcpu, task,
		decoded_type__name(r->type));
	switch (r->type) {
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		fprintf(f, " cr3 0x%" PRIx64 " at %" PRIu64 " ns", r->cr3, r->time);
		break;
	case DECODED_GAP:
		fputc(' ', f);
		text_addr(e, f, r->from, r->from_valid);
		fputs("  ..  ", f);
		text_addr(e, f, r->to, r->to_valid);
		fprintf(f, "  (%s)", gap_reason__name(r->aux));
		break;
	case DECODED_LOST:
		fprintf(f, " %" PRIu64 " records", r->count);
		break;
	case DECODED_START:
		fprintf(f, " at %" PRIu64 " ns, tracing %s", r->time, start_filter_name(r->aux));
		break;
	case DECODED_FREEZE:
		fprintf(f, " at %" PRIu64 " ns (%s)", r->time, freeze_reason__name(r->aux));
		break;
	case DECODED_TIME:
	case DECODED_STOP:
		fprintf(f, " at %" PRIu64 " ns", r->time);
		break;
	default:
		fprintf(f, " escape kind %u payload 0x%" PRIx64 " aux 0x%" PRIx64, r->esc_kind,
			r->payload, r->aux);
		break;
	}
	fputc('\n', f);
}

int exporter__record(const struct exporter *e, const struct decoded_record *r)
{
	if (e->format == EXPORT_JSONL)
		jsonl_record(e, r);
	else
		text_record(e, r);
	return ferror(e->out) ? -EIO : 0;
}

/* ---- summary ------------------------------------------------------------------------------ */

int trace_summary__add(struct trace_summary *s, const struct decoded_record *r)
{
	size_t i;

	s->records++;
	switch (r->type) {
	case DECODED_BRANCH:
		s->branches++;
		break;
	case DECODED_GAP:
		s->gaps++;
		break;
	case DECODED_LOST:
		/* The counts come from the ring: saturate rather than wrap. */
		s->lost = r->count > UINT64_MAX - s->lost ? UINT64_MAX : s->lost + r->count;
		break;
	case DECODED_FREEZE:
		s->freezes++;
		break;
	case DECODED_UNKNOWN:
		s->unknown++;
		break;
	case DECODED_TASK_ARRIVE:
		s->switches++;
		for (i = 0; i < s->nr_cr3s; i++)
			if (s->cr3s[i] == r->cr3)
				return 0;
		if (s->nr_cr3s == s->alloc_cr3s) {
			size_t alloc = s->alloc_cr3s ? 2 * s->alloc_cr3s : 16;
			uint64_t *p = realloc(s->cr3s, alloc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			s->cr3s = p;
			s->alloc_cr3s = alloc;
		}
		s->cr3s[s->nr_cr3s++] = r->cr3;
		s->tasks = s->nr_cr3s;
		break;
	default:
		break;
	}
	return 0;
}

int exporter__summary(const struct exporter *e, const struct trace_summary *s)
{
	FILE *f = e->out;
	bool lost_saturated = s->lost == UINT64_MAX; /* the count is a lower bound */

	if (e->format == EXPORT_JSONL) {
		fprintf(f,
			"{\"type\":\"summary\",\"records\":%" PRIu64 ",\"branches\":%" PRIu64
			",\"gaps\":%" PRIu64 ",\"lost\":%" PRIu64 "%s,\"task_switches\":%" PRIu64
			",\"tasks\":%" PRIu64 ",\"freezes\":%" PRIu64 ",\"unknown\":%" PRIu64 "}\n",
			s->records, s->branches, s->gaps, s->lost,
			lost_saturated ? ",\"lost_saturated\":true" : "", s->switches, s->tasks,
			s->freezes, s->unknown);
	} else {
		fprintf(f,
			"summary: %" PRIu64 " records, %" PRIu64 " branches, %" PRIu64
			" gaps, %s%" PRIu64 " lost, %" PRIu64 " task switches, %" PRIu64
			" tasks, %" PRIu64 " freezes",
			s->records, s->branches, s->gaps, lost_saturated ? ">= " : "", s->lost,
			s->switches, s->tasks, s->freezes);
		if (s->unknown)
			fprintf(f, ", %" PRIu64 " unknown escapes", s->unknown);
		fputc('\n', f);
		if (s->nr_cr3s)
			fputs("tasks:", f);
		for (size_t i = 0; i < s->nr_cr3s; i++) {
			struct decoded_record r = { .cr3 = s->cr3s[i], .cr3_valid = true };
			char task[64];

			const struct procmap_task *t;

			task_label(e, &r, task, sizeof(task));
			fprintf(f, " %s", task);
			t = exporter__task(e, &r);
			if (t && t->exited)
				fprintf(f, " (exit %" PRId64 ")", t->exit_code);
		}
		if (s->nr_cr3s)
			fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

void trace_summary__release(struct trace_summary *s)
{
	free(s->cr3s);
	s->cr3s = NULL;
	s->nr_cr3s = s->alloc_cr3s = 0;
}
