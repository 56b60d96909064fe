// SPDX-License-Identifier: GPL-2.0
/*
 * export.c - text and jsonl output of decoded records, and the trace summary.
 *
 * Task names, symbol names and source file names come from the guest: jsonl escapes what JSON
 * needs escaped and replaces invalid UTF-8, text escapes everything a terminal would act on
 * (escape.h). Both are made once per task and per name (annotator.h); a record is formatted
 * by hand into the output buffer (out-buf.h), no printf.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "annotator.h"
#include "escape.h"
#include "export-callgrind.h"
#include "export-avro.h"
#include "export-drcov.h"
#include "export-calls.h"
#include "export-folded.h"
#include "export-lcov.h"
#include "export-perf.h"
#include "export-perfetto.h"
#include "export-format.h"
#include "export.h"
#include "out-buf.h"
#include "record-json.h"

/* Columns of the text output's task label and record type, padded with spaces. */
#define TEXT_TASK_WIDTH 16
#define TEXT_TYPE_WIDTH 12

/*
 * Records a symbolizing text exporter holds back: while the oldest is written, the cache
 * entries of the addresses of the newer ones are on their way from memory
 * (annotator__prefetch()).
 */
#define TEXT_AHEAD 16

/* A record held back, with its task. */
struct text_pending {
	struct decoded_record r;
	const struct procmap_task *task;
};

/* The formats of their own modules, by enum export_format (NULL: text and jsonl). */
static const struct export_format_ops *const formats[EXPORT_FORMAT_MAX] = {
	[EXPORT_CALLS] = &calls_format,
	[EXPORT_FOLDED] = &folded_format,
	[EXPORT_CALLGRIND] = &callgrind_format,
	[EXPORT_PERFETTO] = &perfetto_format,
	[EXPORT_LCOV] = &lcov_format,
	[EXPORT_AVRO] = &avro_format,
	[EXPORT_DRCOV] = &drcov_format,
	[EXPORT_PERF] = &perf_format,
};

int export_format__parse(const char *name, enum export_format *format)
{
	for (unsigned int i = 0; i < EXPORT_FORMAT_MAX; i++) {
		if (!strcmp(name, export_format__name((enum export_format)i))) {
			*format = (enum export_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *export_format__name(enum export_format format)
{
	if (format == EXPORT_TEXT)
		return "text";
	if (format == EXPORT_JSONL)
		return "jsonl";
	if ((unsigned int)format < EXPORT_FORMAT_MAX && formats[format])
		return formats[format]->name;
	return "?";
}

bool export_format__symbols(enum export_format format)
{
	return format != EXPORT_JSONL;
}

bool export_format__binary(enum export_format format)
{
	return format == EXPORT_AVRO || format == EXPORT_DRCOV || format == EXPORT_PERF;
}

bool export_format__records(enum export_format format)
{
	return format == EXPORT_TEXT || format == EXPORT_JSONL;
}

struct exporter {
	struct exporter_options o;
	struct annotator *annotator;
	struct out_buf ob;
	const struct export_format_ops *format; /* a format of its own module, or NULL */
	void *format_state;
	bool symbols;           /* text: addresses are symbolized */
	struct text_pending ahead[TEXT_AHEAD];  /* symbolized text: records held back */
	unsigned int ahead_first, ahead_len;
	int err;                /* -ENOMEM met while annotating */
};

struct exporter *exporter__new(const struct exporter_options *o)
{
	struct exporter *e = calloc(1, sizeof(*e));

	if (!e)
		goto err_nomem;
	e->o = *o;
	if (out_buf__init(&e->ob, o->out))
		goto err_free;
	/* jsonl never carries symbols: no symbolizer, no cache for it. */
	e->annotator = annotator__new_sized(o->procmap, export_format__symbols(o->format) ?
					    o->symbolizer : NULL, o->cache_bits, o->cache_bits);
	if (!e->annotator)
		goto err_free;
	if ((unsigned int)o->format < EXPORT_FORMAT_MAX && formats[o->format]) {
		struct export_env env = { .ob = &e->ob, .annotator = e->annotator, .o = &e->o };
		int err;

		e->format = formats[o->format];
		e->format_state = e->format->new(&env);
		if (!e->format_state) {
			err = errno;
			exporter__free(e);
			errno = err;
			return NULL;
		}
	}
	e->symbols = o->format == EXPORT_TEXT && annotator__has_symbols(e->annotator);
	return e;

err_free:
	exporter__free(e);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	if (e->format_state && e->format->free)
		e->format->free(e->format_state);
	annotator__free(e->annotator);
	out_buf__release(&e->ob);
	free(e);
}

static void text_drain(struct exporter *e);

int exporter__flush(struct exporter *e)
{
	int ret;

	text_drain(e);
	ret = out_buf__flush(&e->ob);

	return ret ? ret : e->err;
}

const struct procmap_task *exporter__task(struct exporter *e, const struct decoded_record *r)
{
	return annotator__task(e->annotator, r);
}

/* A string constant at @p. */
#define PUT(p, lit) out_buf__fmt_str((p), (lit), sizeof(lit) - 1)

static char *put_str(char *p, const char *s)
{
	return out_buf__fmt_str(p, s, strlen(s));
}

/* ---- jsonl -------------------------------------------------------------------------------- */

/*
 * "task", and for a Linux task "pid" and "tgid"; for a record of a thread the trace named,
 * the thread's "pid" and "tgid" instead of the task's (with "task" when the task is known);
 * nothing for an unknown task of no thread.
 */
static void json_task(struct exporter *e, const struct decoded_record *r)
{
	const struct procmap_task *t = annotator__task(e->annotator, r);
	const struct annotator_task *l;
	char *p;

	if (t) {
		l = annotator__labels(e->annotator, t);
		if (!l) {
			e->err = -ENOMEM;
			return;
		}
		out_buf__write(&e->ob, l->json, r->thread_valid ? l->json_name_len : l->json_len);
	}
	if (!r->thread_valid)
		return;
	p = out_buf__reserve(&e->ob, 16 + 2 * OUT_BUF_NUMBER_MAX);
	out_buf__commit(&e->ob, record_json__thread(p, r));
}

/* One jsonl line: the record's shape (record-json.h) with decode's task labels in it. */
static void jsonl_record(struct exporter *e, const struct decoded_record *r)
{
	char *p = out_buf__reserve(&e->ob, RECORD_JSON_MAX);

	p = record_json__begin(p, r);
	if (record_json__has_task(r)) {
		out_buf__commit(&e->ob, p);
		json_task(e, r);
		p = out_buf__reserve(&e->ob, 2);
	}
	p = PUT(p, "}\n");
	out_buf__commit(&e->ob, p);
}

/* ---- text --------------------------------------------------------------------------------- */

/* Room for the fixed parts of a text record: names, labels and numbers are bounded. */
#define TEXT_RECORD_MAX 512

static char *pad(char *p, size_t len, size_t width)
{
	for (; len < width; len++)
		*p++ = ' ';
	return p;
}

/*
 * "name[pid]", "cr3:0x..." or "-" for the task @t of @r, padded to TEXT_TASK_WIDTH columns
 * (the escaped label is bounded: annotator.h); for a record of a thread the trace named,
 * "name[pid]" with the thread's pid, "[pid]" when its task is unknown.
 */
static char *text_task(struct exporter *e, char *p, const struct procmap_task *t,
		       const struct decoded_record *r)
{
	const struct annotator_task *l;
	char *start = p;

	if (t) {
		l = annotator__labels(e->annotator, t);
		if (!l) {
			e->err = -ENOMEM;
			return p;
		}
		p = out_buf__fmt_str(p, l->text, r->thread_valid ? l->text_name_len : l->text_len);
	}
	if (r->thread_valid) {
		*p++ = '[';
		p = out_buf__fmt_u64(p, r->thread_pid);
		*p++ = ']';
	} else if (!t && r->cr3_valid) {
		p = PUT(p, "cr3:0x");
		p = out_buf__fmt_hex(p, r->cr3);
	} else if (!t) {
		*p++ = '-';
	}
	return pad(p, (size_t)(p - start), TEXT_TASK_WIDTH);
}

/* An address, with its symbol and line when the exporter symbolizes; "?" when unknown. */
static void text_addr(struct exporter *e, const struct procmap_task *task, uint64_t addr,
		      bool valid)
{
	/* "0x" addr " " name "+0x" offset " (" file ":" line ")" without the two texts. */
	const size_t fixed = 2 + 16 + 1 + 3 + 16 + 2 + 1 + OUT_BUF_NUMBER_MAX + 1;
	const struct annotator_addr *a;
	const char *text;
	size_t len;
	bool line;
	char *p;
	int ret;

	if (!valid) {
		out_buf__putc(&e->ob, '?');
		return;
	}
	if (!e->symbols) {
		out_buf__hex(&e->ob, addr);
		return;
	}
	/* The text after the address as the annotator keeps it: a probe and a copy. */
	ret = annotator__addr_text(e->annotator, task, addr, e->o.lines, &text, &len);
	if (!ret) {
		p = out_buf__reserve(&e->ob, 2 + 16 + ANNOTATOR_TEXT_MAX);
		p = PUT(p, "0x");
		p = out_buf__fmt_hex(p, addr);
		out_buf__commit(&e->ob, out_buf__fmt_str(p, text, len));
		return;
	}
	if (ret != -E2BIG) {
		e->err = ret;
		return;
	}
	a = annotator__addr(e->annotator, task, addr, e->o.lines);
	if (!a) {
		e->err = -ENOMEM;
		return;
	}
	line = e->o.lines && a->file;
	if (a->name_text_len + (line ? a->file_text_len : 0) > OUT_BUF_RESERVE_MAX - fixed) {
		/* Names too long for one reservation: piece by piece. */
		out_buf__hex(&e->ob, addr);
		if (!a->name) {
			out_buf__write(&e->ob, " [unknown]", 10);
		} else {
			out_buf__putc(&e->ob, ' ');
			out_buf__write(&e->ob, a->name_text, a->name_text_len);
			out_buf__write(&e->ob, "+", 1);
			out_buf__hex(&e->ob, a->offset);
		}
		if (line) {
			out_buf__write(&e->ob, " (", 2);
			out_buf__write(&e->ob, a->file_text, a->file_text_len);
			out_buf__putc(&e->ob, ':');
			p = out_buf__reserve(&e->ob, OUT_BUF_NUMBER_MAX + 1);
			p = out_buf__fmt_i64(p, a->line);
			*p++ = ')';
			out_buf__commit(&e->ob, p);
		}
		return;
	}
	p = out_buf__reserve(&e->ob, OUT_BUF_RESERVE_MAX);
	p = PUT(p, "0x");
	p = out_buf__fmt_hex(p, addr);
	if (!a->name) {
		p = PUT(p, " [unknown]");
	} else {
		*p++ = ' ';
		p = out_buf__fmt_str(p, a->name_text, a->name_text_len);
		p = PUT(p, "+0x");
		p = out_buf__fmt_hex(p, a->offset);
	}
	if (line) {
		p = PUT(p, " (");
		p = out_buf__fmt_str(p, a->file_text, a->file_text_len);
		*p++ = ':';
		p = out_buf__fmt_i64(p, a->line);
		*p++ = ')';
	}
	out_buf__commit(&e->ob, p);
}

/* Writes @r of task @t. */
static void text_record(struct exporter *e, const struct decoded_record *r,
			const struct procmap_task *t)
{
	char *p = out_buf__reserve(&e->ob, TEXT_RECORD_MAX);
	const struct record_name *kind, *type;
	const char *reason;

	p = PUT(p, "  vcpu");
	p = out_buf__fmt_u64(p, r->vcpu);
	if (r->type == DECODED_BRANCH) {
		p = PUT(p, " cpl");
		*p++ = r->cpl_valid ? (char)('0' + r->cpl) : '?';
		*p++ = ' ';
		p = text_task(e, p, t, r);
		*p++ = ' ';
		out_buf__commit(&e->ob, p);
		text_addr(e, t, r->from, true);
		out_buf__write(&e->ob, "  =>  ", 6);
		text_addr(e, t, r->to, true);
		p = out_buf__reserve(&e->ob, TEXT_RECORD_MAX);
		kind = branch_kind__record_name(r->kind);
		if (kind) {
			p = PUT(p, "  (");
			p = out_buf__fmt_str(p, kind->s, kind->len);
			if (r->vector_valid) {
				*p++ = ' ';
				p = out_buf__fmt_u64(p, r->vector);
			}
			*p++ = ')';
		}
		*p++ = '\n';
		out_buf__commit(&e->ob, p);
		return;
	}

	p = PUT(p, " ---- ");
	p = text_task(e, p, t, r);
	*p++ = ' ';
	type = decoded_type__record_name(r->type);
	p = out_buf__fmt_str(p, type->s, type->len);
	p = pad(p, type->len, TEXT_TYPE_WIDTH);
	switch (r->type) {
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		p = PUT(p, " cr3 0x");
		p = out_buf__fmt_hex(p, r->cr3);
		p = PUT(p, " at ");
		p = out_buf__fmt_u64(p, r->time);
		p = PUT(p, " ns");
		break;
	case DECODED_GAP:
		*p++ = ' ';
		out_buf__commit(&e->ob, p);
		text_addr(e, t, r->from, r->from_valid);
		out_buf__write(&e->ob, "  ..  ", 6);
		text_addr(e, t, r->to, r->to_valid);
		p = out_buf__reserve(&e->ob, TEXT_RECORD_MAX);
		p = PUT(p, "  (");
		p = put_str(p, gap_reason__name(r->aux));
		*p++ = ')';
		break;
	case DECODED_LOST:
		*p++ = ' ';
		p = out_buf__fmt_u64(p, r->count);
		p = PUT(p, " records");
		break;
	case DECODED_START:
		p = PUT(p, " at ");
		p = out_buf__fmt_u64(p, r->time);
		p = PUT(p, " ns, tracing ");
		p = put_str(p, start_trace__name(r->aux));
		break;
	case DECODED_FREEZE:
		p = PUT(p, " at ");
		p = out_buf__fmt_u64(p, r->time);
		p = PUT(p, " ns (");
		p = put_str(p, freeze_reason__name(r->aux));
		*p++ = ')';
		break;
	case DECODED_GUEST_BTS_DROP:
		*p++ = ' ';
		if (r->aux == VBTS_GUEST_BTS_DROP_KERNEL) {
			p = out_buf__fmt_u64(p, r->from);
			p = PUT(p, " records");
		} else {
			out_buf__commit(&e->ob, p);
			text_addr(e, t, r->from, r->from_valid);
			p = out_buf__reserve(&e->ob, TEXT_RECORD_MAX);
		}
		p = PUT(p, "  (");
		p = put_str(p, guest_bts_drop__name(r->aux));
		*p++ = ')';
		break;
	case DECODED_TIME:
	case DECODED_STOP:
		p = PUT(p, " at ");
		p = out_buf__fmt_u64(p, r->time);
		p = PUT(p, " ns");
		break;
	case DECODED_TASK_PID:
	case DECODED_THREAD:
		p = PUT(p, " pid ");
		p = out_buf__fmt_u64(p, (uint32_t)r->payload);
		p = PUT(p, " tgid ");
		p = out_buf__fmt_u64(p, r->payload >> 32);
		break;
	case DECODED_ENTRY:
		*p++ = ' ';
		out_buf__commit(&e->ob, p);
		text_addr(e, t, r->to, r->to_valid);
		p = out_buf__reserve(&e->ob, TEXT_RECORD_MAX);
		reason = entry_reason__name(r->aux);
		if (reason) {
			p = PUT(p, "  (");
			p = put_str(p, reason);
		} else {
			p = PUT(p, "  (reason ");
			p = out_buf__fmt_u64(p, r->aux);
		}
		*p++ = ')';
		break;
	default:
		p = PUT(p, " escape kind ");
		p = out_buf__fmt_u64(p, r->esc_kind);
		p = PUT(p, " payload 0x");
		p = out_buf__fmt_hex(p, r->payload);
		p = PUT(p, " aux 0x");
		p = out_buf__fmt_hex(p, r->aux);
		break;
	}
	*p++ = '\n';
	out_buf__commit(&e->ob, p);
}

/* Writes the oldest record held back. */
static void text_write_oldest(struct exporter *e)
{
	const struct text_pending *q = &e->ahead[e->ahead_first];

	e->ahead_first = (e->ahead_first + 1) % TEXT_AHEAD;
	e->ahead_len--;
	text_record(e, &q->r, q->task);
}

/*
 * Text output of @r: written at once without symbols; with them held back behind
 * TEXT_AHEAD - 1 newer records, whose cache entries are fetched meanwhile.
 */
static void text_hold(struct exporter *e, const struct decoded_record *r)
{
	const struct procmap_task *t = annotator__task(e->annotator, r);
	struct text_pending *q;

	if (!e->symbols) {
		text_record(e, r, t);
		return;
	}
	if (r->from_valid || r->type == DECODED_BRANCH)
		annotator__prefetch(e->annotator, t, r->from);
	if (r->to_valid || r->type == DECODED_BRANCH)
		annotator__prefetch(e->annotator, t, r->to);
	if (e->ahead_len == TEXT_AHEAD)
		text_write_oldest(e);
	q = &e->ahead[(e->ahead_first + e->ahead_len) % TEXT_AHEAD];
	q->r = *r;
	q->task = t;
	e->ahead_len++;
}

/* Writes every record held back. */
static void text_drain(struct exporter *e)
{
	while (e->ahead_len)
		text_write_oldest(e);
}

int exporter__finish(struct exporter *e)
{
	int ret = 0;

	if (e->format && e->format->finish)
		ret = e->format->finish(e->format_state);
	if (ret) {
		e->err = e->err ? e->err : ret;
		return ret;
	}
	return exporter__flush(e);
}

int exporter__record(struct exporter *e, const struct decoded_record *r)
{
	if (e->format) {
		int ret = e->format->record(e->format_state, r);

		if (ret)
			return ret;
		return out_buf__error(&e->ob);
	}
	if (e->o.format == EXPORT_JSONL)
		jsonl_record(e, r);
	else
		text_hold(e, r);
	if (e->err)
		return e->err;
	return out_buf__error(&e->ob);
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

int exporter__summary(struct exporter *e, const struct trace_summary *s)
{
	FILE *f = e->o.out;
	bool lost_saturated = s->lost == UINT64_MAX; /* the count is a lower bound */
	int ret;

	/* After the records: what is buffered goes first. */
	ret = exporter__flush(e);
	if (ret)
		return ret;
	if (e->o.format == EXPORT_JSONL) {
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
			const struct procmap_task *t = exporter__task(e, &r);
			const struct annotator_task *l;

			l = t ? annotator__labels(e->annotator, t) : NULL;

			if (t && !l)
				return -ENOMEM;
			if (l)
				fprintf(f, " %s", l->text);
			else
				fprintf(f, " cr3:0x%" PRIx64, r.cr3);
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
