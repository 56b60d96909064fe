// SPDX-License-Identifier: GPL-2.0
/*
 * export.c - text and jsonl output of decoded records, and the trace summary.
 *
 * Task names, symbol names and source file names come from the guest: jsonl escapes what JSON
 * needs escaped and replaces invalid UTF-8, text escapes everything a terminal would act on
 * (escape.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "escape.h"
#include "export.h"

/* Escaped bytes of a task name in a text label, at most; the pid follows. */
#define TASK_NAME_TEXT_MAX 48

const struct procmap_task *exporter__task(const struct exporter *e,
					  const struct decoded_record *r)
{
	if (!e->procmap || !r->cr3_valid)
		return NULL;
	return procmap__lookup(e->procmap, r->cr3, r->time, r->time_valid);
}

/* ---- jsonl -------------------------------------------------------------------------------- */

/*
 * A JSON string that is valid UTF-8 whatever @s holds (each ill-formed byte becomes U+FFFD)
 * and safe to print: what escape__printable() rejects is written as \uXXXX.
 */
static void json_string(FILE *f, const char *s)
{
	size_t len = strlen(s), k;
	uint32_t cp;

	fputc('"', f);
	while (len) {
		k = escape__utf8_char(s, len, &cp);
		if (!k)
			fputs("\\ufffd", f);
		else if (cp == '"' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (!escape__printable(cp))
			fprintf(f, "\\u%04x", (unsigned int)cp); /* all of them below U+10000 */
		else
			fwrite(s, 1, k, f);
		k = k ? k : 1;
		s += k;
		len -= k;
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

/* "task", and for a Linux task "pid" and "tgid"; nothing for an unknown task. */
static void json_task(FILE *f, const struct procmap_task *task)
{
	if (!task)
		return;
	fputs(",\"task\":", f);
	json_string(f, task->name);
	if (task->tgid_valid)
		fprintf(f, ",\"pid\":%" PRId64 ",\"tgid\":%" PRId64, task->pid, task->tgid);
}

static void jsonl_record(const struct exporter *e, const struct decoded_record *r)
{
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
		json_task(f, exporter__task(e, r));
		break;
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		json_addr(f, "cr3", r->cr3, true);
		fprintf(f, ",\"time\":%" PRIu64, r->time);
		json_task(f, exporter__task(e, r));
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

/* Room for a task label: the escaped name, "[pid]" and the NUL. */
#define TASK_LABEL_MAX (TASK_NAME_TEXT_MAX + 24)

/* "name[pid]", "cr3:0x..." or "-" for the task @t of @r; the guest's name escaped, bounded. */
static void task_label(const struct procmap_task *t, const struct decoded_record *r, char *buf,
		       size_t len)
{
	char name[TASK_NAME_TEXT_MAX + 1];

	if (t) {
		snprintf(buf, len, "%s[%" PRId64 "]", escape__str(name, sizeof(name), t->name),
			 t->pid);
	} else if (r->cr3_valid) {
		snprintf(buf, len, "cr3:0x%" PRIx64, r->cr3);
	} else {
		snprintf(buf, len, "-");
	}
}

static void text_addr(const struct exporter *e, FILE *f, const struct procmap_task *task,
		      uint64_t addr, bool valid)
{
	struct symbol_hit hit;
	const char *file;
	int line;

	if (!valid) {
		fputs("?", f);
		return;
	}
	fprintf(f, "0x%" PRIx64, addr);
	if (!e->symbolizer || !symbolizer__has_tables(e->symbolizer))
		return;
	if (symbolizer__lookup(e->symbolizer, task, addr, &hit)) {
		fputs(" [unknown]", f);
	} else {
		fputc(' ', f);
		escape__fputs(f, hit.name);
		fprintf(f, "+0x%" PRIx64, hit.offset);
	}
	if (e->lines && !symbolizer__line(e->symbolizer, task, addr, &file, &line)) {
		fputs(" (", f);
		escape__fputs(f, file);
		fprintf(f, ":%d)", line);
	}
}

static void text_record(const struct exporter *e, const struct decoded_record *r)
{
	const struct procmap_task *t = exporter__task(e, r);
	char task[TASK_LABEL_MAX];
	const char *kind;
	FILE *f = e->out;

	task_label(t, r, task, sizeof(task));
	if (r->type == DECODED_BRANCH) {
		fprintf(f, "  vcpu%" PRIu32 " cpl%c %-16s ", r->vcpu,
			r->cpl_valid ? (char)('0' + r->cpl) : '?', task);
		text_addr(e, f, t, r->from, true);
		fputs("  =>  ", f);
		text_addr(e, f, t, r->to, true);
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
		text_addr(e, f, t, r->from, r->from_valid);
		fputs("  ..  ", f);
		text_addr(e, f, t, r->to, r->to_valid);
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

/*
 * The distinct CR3s of a summary: chained hashing over the cr3s array. The guest chooses its
 * CR3 values and a trace file may be forged, so the hash is a multiply-shift with an odd
 * multiplier drawn at random per summary: whatever the CR3s, two of them share a bucket with
 * a chance of at most 2 / buckets, and an arrival costs O(1) expected.
 */
struct cr3_index {
	uint64_t mult;
	unsigned int bits;      /* 2^bits buckets, >= the number of CR3s */
	size_t *head;           /* per bucket: 1 + position in cr3s of its first CR3, 0: empty */
	size_t *next;           /* per CR3: 1 + position of the next one of its bucket, 0: last */
};

#define CR3_INDEX_MIN_BITS 4

static size_t cr3_bucket(const struct cr3_index *ix, uint64_t cr3)
{
	return (size_t)((cr3 * ix->mult) >> (64 - ix->bits));
}

static struct cr3_index *cr3_index_new(void)
{
	struct cr3_index *ix = calloc(1, sizeof(*ix));

	if (!ix)
		return NULL;
	if (getrandom(&ix->mult, sizeof(ix->mult), GRND_NONBLOCK) != sizeof(ix->mult))
		ix->mult = 0x9e3779b97f4a7c15ULL; /* no entropy yet: correct, only predictable */
	ix->mult |= 1;
	return ix;
}

/* Re-buckets the first @nr CR3s into 2^bits buckets. */
static int cr3_index_rehash(struct trace_summary *s, size_t nr, unsigned int bits)
{
	struct cr3_index *ix = s->index;
	size_t *head = calloc((size_t)1 << bits, sizeof(*head)), i, b;

	if (!head)
		return -ENOMEM;
	free(ix->head);
	ix->head = head;
	ix->bits = bits;
	for (i = 0; i < nr; i++) {
		b = cr3_bucket(ix, s->cr3s[i]);
		ix->next[i] = head[b];
		head[b] = i + 1;
	}
	s->probes += nr;
	return 0;
}

/*
 * Adds @cr3 to the distinct CR3s unless it is there already, with @time, when it first
 * arrived (UINT64_MAX: unknown).
 */
static int summary_add_cr3(struct trace_summary *s, uint64_t cr3, uint64_t time)
{
	struct cr3_index *ix = s->index;
	size_t i, nr = s->nr_cr3s;

	if (!ix) {
		ix = s->index = cr3_index_new();
		if (!ix)
			return -ENOMEM;
	}
	if (ix->head) {
		for (i = ix->head[cr3_bucket(ix, cr3)]; i; i = ix->next[i - 1]) {
			s->probes++;
			if (s->cr3s[i - 1] == cr3)
				return 0;
		}
	}
	if (nr == s->alloc_cr3s) {
		size_t alloc = s->alloc_cr3s ? 2 * s->alloc_cr3s : 16;
		uint64_t *p = realloc(s->cr3s, alloc * sizeof(*p));
		size_t *next;

		if (!p)
			return -ENOMEM;
		s->cr3s = p;
		p = realloc(s->first_time, alloc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->first_time = p;
		next = realloc(ix->next, alloc * sizeof(*next));
		if (!next)
			return -ENOMEM;
		ix->next = next;
		s->alloc_cr3s = alloc;
	}
	s->cr3s[nr] = cr3;
	s->first_time[nr] = time;
	if (!ix->head || nr + 1 > (size_t)1 << ix->bits) {
		/* At most one CR3 per bucket on average. */
		if (cr3_index_rehash(s, nr + 1, ix->head ? ix->bits + 1 : CR3_INDEX_MIN_BITS))
			return -ENOMEM;
	} else {
		i = cr3_bucket(ix, cr3);
		ix->next[nr] = ix->head[i];
		ix->head[i] = nr + 1;
	}
	s->nr_cr3s = nr + 1;
	s->tasks = s->nr_cr3s;
	return 0;
}

int trace_summary__add(struct trace_summary *s, const struct decoded_record *r)
{
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
		return summary_add_cr3(s, r->cr3, r->time_valid ? r->time : UINT64_MAX);
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
			struct decoded_record r = {
				.cr3 = s->cr3s[i], .cr3_valid = true,
				.time = s->first_time[i],
				.time_valid = s->first_time[i] != UINT64_MAX,
			};
			char task[TASK_LABEL_MAX];

			const struct procmap_task *t = exporter__task(e, &r);

			task_label(t, &r, task, sizeof(task));
			fprintf(f, " %s", task);
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
	free(s->first_time);
	s->first_time = NULL;
	s->nr_cr3s = s->alloc_cr3s = 0;
	if (s->index) {
		free(s->index->head);
		free(s->index->next);
		free(s->index);
		s->index = NULL;
	}
}
