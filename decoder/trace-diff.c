// SPDX-License-Identifier: GPL-2.0
/*
 * trace-diff.c - the first difference of two traces, per task and vCPU (trace-diff.h).
 *
 * Streams of both traces live in one table keyed by (vCPU, task name, pid): a stream is found
 * for a record through a memo of the last task of its vCPU, else by a linear search of the
 * table's hash chain. The branches of a stream are hashed with a multiply-xorshift keyed by a
 * seed drawn at random, chunk by chunk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "annotator.h"
#include "escape.h"
#include "export.h"
#include "procmap.h"
#include "symbols.h"
#include "trace-diff.h"

/* vCPUs whose last stream is remembered (by vCPU id modulo this). */
#define MEMO 64

struct diff_side {
	bool present;
	const struct procmap_task *task;        /* the first task of the stream */
	uint64_t n;                     /* branches */
	uint64_t *hashes;               /* one per full chunk */
	size_t alloc;
	uint64_t cur;                   /* the hash of the chunk being read */
	uint64_t seen;                  /* branches of the second pass */
	/* Second pass: the records of [lo, hi) and their compared addresses. */
	struct decoded_record *recs;
	uint64_t (*keys)[3];
	const struct procmap_task *tag_task;    /* the task of @tag */
	uint64_t tag;
	size_t nr;
};

struct diff_stream {
	uint32_t vcpu;
	bool has_task;
	int64_t pid;
	const char *name;               /* the task's name (owned by a procmap) */
	uint64_t hash;                  /* of the key */
	struct diff_stream *next;       /* in its bucket */
	struct diff_side side[2];
	bool differs;
	uint64_t chunk;                 /* the first chunk that differs */
	uint64_t lo, hi;                /* the records kept in the second pass */
};

struct diff_memo {
	bool used;
	uint32_t vcpu;
	const struct procmap_task *task;
	struct diff_stream *s;
};

struct diff {
	const struct trace_diff_options *o;
	uint64_t seed;
	struct diff_stream **streams;   /* in the order met */
	size_t nr, alloc;
	struct diff_stream *buckets[1024];
	struct diff_memo memo[MEMO];
	bool *want[2];                  /* --task: per process of each trace, or NULL */
	uint64_t slide[2];              /* kernel addresses are compared less these */
	struct annotator *annotator[2];
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static struct diff_stream *stream_of(struct diff *d, uint32_t vcpu,
				     const struct procmap_task *t)
{
	struct diff_memo *m = &d->memo[vcpu % MEMO];
	int64_t pid = t ? t->pid : -1;
	const char *name = t ? t->name : NULL;
	uint64_t h = mix(str_hash(name) ^ mix((uint64_t)pid) ^ ((uint64_t)vcpu << 1) ^ !!t);
	struct diff_stream *s;

	if (m->used && m->vcpu == vcpu && m->task == t)
		return m->s;
	for (s = d->buckets[h % 1024]; s; s = s->next)
		if (s->hash == h && s->vcpu == vcpu && s->has_task == !!t && s->pid == pid &&
		    (!t || !strcmp(s->name, name)))
			goto found;
	if (d->nr == d->alloc) {
		size_t alloc = d->alloc ? 2 * d->alloc : 16;
		struct diff_stream **p = realloc(d->streams, alloc * sizeof(*p));

		if (!p)
			return NULL;
		d->streams = p;
		d->alloc = alloc;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->vcpu = vcpu;
	s->has_task = t;
	s->pid = pid;
	s->name = name;
	s->hash = h;
	s->next = d->buckets[h % 1024];
	d->buckets[h % 1024] = s;
	d->streams[d->nr++] = s;
found:
	m->used = true;
	m->vcpu = vcpu;
	m->task = t;
	m->s = s;
	return s;
}

/* Whether a task's user addresses are compared as offsets from its load base. */
static bool relative(const struct procmap_task *t)
{
	return t && t->build_id && t->load_base_valid;
}

/*
 * The address compared: a PIE's user address as its offset from the load base, a kernel
 * address less the KASLR slide when both traces know theirs.
 */
static uint64_t key_of(const struct diff *d, int k, const struct procmap_task *t,
		       uint64_t addr)
{
	if (addr >= SYMBOLIZER_USER_END)
		return addr - d->slide[k];
	if (relative(t))
		return addr - t->load_base;
	return addr;
}

/*
 * What else a branch is compared with: the program's build ID when its addresses are offsets
 * (two builds are different code whatever their offsets), hashed once per task.
 */
static uint64_t tag_of(struct diff_side *x, const struct procmap_task *t)
{
	if (!relative(t))
		return 0;
	if (x->tag_task != t) {
		x->tag_task = t;
		x->tag = mix(str_hash(t->build_id)) | 1;
	}
	return x->tag;
}

/*
 * The branch records of side @k that are compared, with their stream: calls @fn for each.
 * Returns 0, or -errno.
 */
static int each_branch(struct diff *d, int k,
		       int (*fn)(struct diff *d, int k, struct diff_stream *s,
				 const struct procmap_task *t, const struct decoded_record *r))
{
	struct decoder *dec = trace_dir__decoder(d->o->trace[k], d->o->vcpu);
	struct decoded_record r;
	int ret;

	if (!dec)
		return errno == ENOENT ? 0 : -errno;
	memset(d->memo, 0, sizeof(d->memo));
	while ((ret = decoder__next(dec, &r)) > 0) {
		const struct procmap_task *t;
		struct diff_stream *s;

		if (r.type != DECODED_BRANCH)
			continue;
		t = annotator__task(d->annotator[k], &r);
		if (d->want[k] && !(t && d->want[k][t->process]))
			continue;
		s = stream_of(d, r.vcpu, t);
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		ret = fn(d, k, s, t, &r);
		if (ret)
			break;
	}
	decoder__free(dec);
	return ret < 0 ? ret : 0;
}

static int hash_branch(struct diff *d, int k, struct diff_stream *s,
		       const struct procmap_task *t, const struct decoded_record *r)
{
	struct diff_side *x = &s->side[k];

	if (!x->present) {
		x->present = true;
		x->task = t;
		x->cur = d->seed;
	}
	x->cur = mix(x->cur ^ key_of(d, k, t, r->from)) + d->seed;
	x->cur = mix(x->cur ^ key_of(d, k, t, r->to)) + tag_of(x, t);
	if (++x->n % TRACE_DIFF_CHUNK == 0) {
		if (x->n / TRACE_DIFF_CHUNK > x->alloc) {
			size_t alloc = x->alloc ? 2 * x->alloc : 16;
			uint64_t *p = realloc(x->hashes, alloc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			x->hashes = p;
			x->alloc = alloc;
		}
		x->hashes[x->n / TRACE_DIFF_CHUNK - 1] = x->cur;
		x->cur = d->seed;
	}
	return 0;
}

static int keep_branch(struct diff *d, int k, struct diff_stream *s,
		       const struct procmap_task *t, const struct decoded_record *r)
{
	struct diff_side *x = &s->side[k];
	uint64_t i = x->seen++;

	if (!s->differs || i < s->lo || i >= s->hi)
		return 0;
	if (!x->recs) {
		x->recs = malloc((size_t)(s->hi - s->lo) * sizeof(*x->recs));
		x->keys = malloc((size_t)(s->hi - s->lo) * sizeof(*x->keys));
		if (!x->recs || !x->keys)
			return -ENOMEM;
	}
	x->recs[x->nr] = *r;
	x->keys[x->nr][0] = key_of(d, k, t, r->from);
	x->keys[x->nr][1] = key_of(d, k, t, r->to);
	x->keys[x->nr][2] = tag_of(x, t);
	x->nr++;
	return 0;
}

/* Whether the first pass says @s differs, and from which chunk. */
static bool first_chunk(struct diff_stream *s)
{
	const struct diff_side *a = &s->side[0], *b = &s->side[1];
	uint64_t full_a = a->n / TRACE_DIFF_CHUNK, full_b = b->n / TRACE_DIFF_CHUNK, c;

	if (!a->present || !b->present) {
		s->chunk = 0;
		return true;
	}
	for (c = 0; c < full_a && c < full_b; c++) {
		if (a->hashes[c] != b->hashes[c]) {
			s->chunk = c;
			return true;
		}
	}
	s->chunk = c;
	return a->n != b->n || a->cur != b->cur;
}

static void report(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void report(struct diff *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(d->o->out, fmt, ap);
	va_end(ap);
}

/* "vcpuN name[pid]" or "vcpuN -" of a stream. */
static void stream_label(struct diff *d, const struct diff_stream *s)
{
	const struct diff_side *x = s->side[0].present ? &s->side[0] : &s->side[1];
	int k = s->side[0].present ? 0 : 1;
	const struct annotator_task *l = x->task ?
		annotator__labels(d->annotator[k], x->task) : NULL;

	report(d, "vcpu%" PRIu32 " %s", s->vcpu, l ? l->text : "-");
}

/* The branches of side @k from @from to @to (stream indexes), one line each, symbolized. */
static int show(struct diff *d, struct exporter *e, const struct diff_stream *s, int k,
		uint64_t from, uint64_t to, uint64_t at)
{
	const struct diff_side *x = &s->side[k];
	int ret;

	for (uint64_t i = from; i <= to; i++) {
		report(d, "  %c %5" PRId64 " ", "AB"[k], (int64_t)(i - at));
		if (i >= x->n || i - s->lo >= x->nr) {
			report(d, "  (no more branches: %" PRIu64 " in all)\n", x->n);
			break;
		}
		if (fflush(d->o->out))
			return -EIO;
		ret = exporter__record(e, &x->recs[i - s->lo]);
		if (!ret)
			ret = exporter__flush(e);
		if (ret)
			return ret;
	}
	return 0;
}

/* Finds and reports the first difference of @s. Returns 1 when it differs, 0, or -errno. */
static int report_stream(struct diff *d, struct exporter *e[2], const struct diff_stream *s)
{
	const struct diff_side *a = &s->side[0], *b = &s->side[1];
	const char *ida = a->task ? a->task->build_id : NULL;
	const char *idb = b->task ? b->task->build_id : NULL;
	uint64_t i, from;
	int ret;

	if (!a->present || !b->present) {
		stream_label(d, s);
		report(d, ": only in %c (%" PRIu64 " branches)\n", a->present ? 'A' : 'B',
		       a->present ? a->n : b->n);
		return 1;
	}
	for (i = s->chunk * TRACE_DIFF_CHUNK; i < s->hi; i++) {
		if (i >= a->n || i >= b->n)
			break;
		if (i - s->lo >= a->nr || i - s->lo >= b->nr)
			return -EIO; /* the second pass read less than the first */
		if (memcmp(a->keys[i - s->lo], b->keys[i - s->lo], sizeof(a->keys[0])))
			break;
	}
	if (i == s->hi || (i >= a->n && i >= b->n))
		return 0; /* the chunks' hashes collided: nothing differs */
	stream_label(d, s);
	report(d, ": first difference at branch %" PRIu64 " (A has %" PRIu64 ", B %" PRIu64
	       " branches)\n", i, a->n, b->n);
	if (ida && idb && strcmp(ida, idb))
		report(d, "  the programs differ: build ID %s in A, %s in B\n", ida, idb);
	from = i > d->o->context ? i - d->o->context : 0;
	if (from < s->lo)
		from = s->lo;
	ret = show(d, e[0], s, 0, from, i, i);
	if (!ret)
		ret = show(d, e[1], s, 1, from, i, i);
	return ret ? ret : 1;
}

static void diff_release(struct diff *d)
{
	for (size_t i = 0; i < d->nr; i++) {
		for (int k = 0; k < 2; k++) {
			free(d->streams[i]->side[k].hashes);
			free(d->streams[i]->side[k].recs);
			free(d->streams[i]->side[k].keys);
		}
		free(d->streams[i]);
	}
	free(d->streams);
	for (int k = 0; k < 2; k++) {
		free(d->want[k]);
		annotator__free(d->annotator[k]);
	}
}

int trace_diff__run(const struct trace_diff_options *o, char *err, size_t errlen)
{
	struct diff d = { .o = o };
	struct exporter *e[2] = { NULL, NULL };
	size_t differ = 0, shown = 0;
	uint64_t branches = 0;
	int ret = -ENOMEM, k;

	*err = '\0';
	if (getrandom(&d.seed, sizeof(d.seed), GRND_NONBLOCK) != sizeof(d.seed))
		d.seed = 0x9e3779b97f4a7c15ULL;
	for (k = 0; k < 2; k++) {
		const struct procmap *pm = trace_dir__procmap(o->trace[k]);
		struct exporter_options eo = {
			.out = o->out, .format = EXPORT_TEXT, .procmap = pm,
			.symbolizer = trace_dir__symbolizer(o->trace[k]),
		};

		d.annotator[k] = annotator__new(pm, NULL);
		e[k] = exporter__new(&eo);
		if (!d.annotator[k] || !e[k])
			goto out;
		if (!o->nr_tasks)
			continue;
		d.want[k] = calloc(procmap__nr_processes(pm) + 1, sizeof(*d.want[k]));
		if (!d.want[k])
			goto out;
	}
	for (size_t i = 0; i < o->nr_tasks; i++) {
		size_t found = 0;

		for (k = 0; k < 2; k++)
			found += procmap__select(trace_dir__procmap(o->trace[k]), o->tasks[i],
						 d.want[k]);
		if (!found) {
			char q[256];

			snprintf(err, errlen, "no task '%s' in either trace",
				 escape__str(q, sizeof(q), o->tasks[i]));
			ret = -ENOENT;
			goto out;
		}
	}
	/* Kernel text at two KASLR slides is the same code when both slides are known. */
	if (trace_dir__kaslr_slide(o->trace[0], &d.slide[0]) &&
	    !trace_dir__kaslr_slide(o->trace[1], &d.slide[1]))
		d.slide[0] = 0;
	/* First pass: hashes of chunks. */
	for (k = 0; k < 2; k++) {
		ret = each_branch(&d, k, hash_branch);
		if (ret)
			goto out_read;
	}
	/* Second pass: the first chunk that differs, and the context before it. */
	for (size_t i = 0; i < d.nr; i++) {
		struct diff_stream *s = d.streams[i];

		branches += s->side[0].n;
		s->differs = first_chunk(s);
		if (!s->differs)
			continue;
		s->hi = (s->chunk + 1) * TRACE_DIFF_CHUNK;
		s->lo = s->chunk * TRACE_DIFF_CHUNK;
		s->lo = s->lo > o->context ? s->lo - o->context : 0;
	}
	for (k = 0; k < 2; k++) {
		ret = each_branch(&d, k, keep_branch);
		if (ret)
			goto out_read;
	}
	for (size_t i = 0; i < d.nr; i++) {
		if (!d.streams[i]->differs)
			continue;
		if (shown == TRACE_DIFF_SHOWN_MAX) {
			differ++;
			continue;
		}
		ret = report_stream(&d, e, d.streams[i]);
		if (ret < 0)
			goto out_read;
		differ += ret;
		shown += ret;
	}
	if (differ)
		report(&d, "traces differ: %zu of %zu task streams\n", differ, d.nr);
	else
		report(&d, "traces are equal: %zu task streams, %" PRIu64 " branches\n", d.nr,
		       branches);
	ret = fflush(o->out) ? -EIO : differ ? 1 : 0;
	goto out;

out_read:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else
		snprintf(err, errlen, "a ring file changed under the reader: %s", strerror(-ret));
out:
	if (ret == -ENOMEM && !*err)
		snprintf(err, errlen, "out of memory");
	exporter__free(e[0]);
	exporter__free(e[1]);
	diff_release(&d);
	return ret;
}
