// SPDX-License-Identifier: GPL-2.0
/*
 * trace-diff.c - how two traces of the same guest code differ (trace-diff.h).
 *
 * Each trace is read into a profile (trace-diff-int.h): its streams in a table keyed by their
 * identity (interned per trace by diff-ident.c, so a pointer compare finds them), the hashes
 * of their chunks, and, in the second pass of the streams that differ (every stream for
 * --coverage), their tables of functions, lines and edges. The branches of a stream are hashed
 * with a multiply-xorshift keyed by a seed drawn at random, chunk by chunk.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "escape.h"
#include "procmap.h"
#include "symbols.h"
#include "trace-diff-int.h"
#include "trace-diff.h"

/* The source compared for an entry to user mode (it has none): a value no address has. */
#define ENTRY_FROM 0xfffffffffffff000ULL
/* The kind of an edge that is an entry. */
#define ENTRY_KIND 0xff
/* Bytes of an instruction, at most: an interrupt returns to its instruction or the next. */
#define INSN_MAX 15
/* Bytes of one formatted address, and of a line of two. */
#define ADDR_MAX 256
#define LINE_MAX (2 * ADDR_MAX + 64)

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

/* ---- tables ------------------------------------------------------------------------------ */

struct kmap_entry *kmap__find(const struct kmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	key |= !key;
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key)
			return &m->e[i];
	return NULL;
}

int kmap__add(struct kmap *m, uint64_t key, struct kmap_entry **out)
{
	struct kmap_entry *e;
	size_t i;

	key |= !key;
	e = kmap__find(m, key);
	if (e) {
		*out = e;
		return 0;
	}
	if (2 * (m->nr + 1) > m->cap) {
		struct kmap n = { .cap = m->cap ? 2 * m->cap : 64 };

		n.e = calloc(n.cap, sizeof(*n.e));
		if (!n.e)
			return -ENOMEM;
		for (size_t j = 0; j < m->cap; j++) {
			if (!m->e[j].key)
				continue;
			for (i = mix(m->e[j].key) & (n.cap - 1); n.e[i].key; i = (i + 1) & (n.cap - 1))
				;
			n.e[i] = m->e[j];
		}
		n.nr = m->nr;
		free(m->e);
		*m = n;
	}
	for (i = mix(key) & (m->cap - 1); m->e[i].key; i = (i + 1) & (m->cap - 1))
		;
	e = &m->e[i];
	memset(e, 0, sizeof(*e));
	e->key = key;
	m->nr++;
	*out = e;
	return 1;
}

void kmap__free(struct kmap *m)
{
	free(m->e);
	memset(m, 0, sizeof(*m));
}

static uint64_t line_key(const char *file, int line)
{
	return mix(str_hash(file) ^ mix((uint64_t)(unsigned int)line + 1));
}

/* ---- one trace --------------------------------------------------------------------------- */

int diff_profile__init(struct diff_profile *p, struct trace_dir *t, const char *const *tasks,
		       size_t nr_tasks, bool *found, int vcpu, bool strict)
{
	const struct procmap *pm = trace_dir__procmap(t);

	p->trace = t;
	p->vcpu = vcpu;
	p->strict = strict;
	if (getrandom(&p->seed, sizeof(p->seed), GRND_NONBLOCK) != sizeof(p->seed))
		p->seed = 0x9e3779b97f4a7c15ULL;
	p->annotator = annotator__new(pm, trace_dir__symbolizer(t));
	p->ident = diff_ident__new(pm);
	if (!p->annotator || !p->ident)
		return -ENOMEM;
	if (!nr_tasks)
		return 0;
	p->want = calloc(procmap__nr_processes(pm) + 1, sizeof(*p->want));
	p->ids = calloc(nr_tasks, sizeof(*p->ids));
	if (!p->want || !p->ids)
		return -ENOMEM;
	for (size_t i = 0; i < nr_tasks; i++) {
		char *end;
		unsigned long v = strtoul(tasks[i], &end, 10);
		size_t n = procmap__select(pm, tasks[i], p->want);

		if (tasks[i][0] >= '0' && tasks[i][0] <= '9' && !*end && v <= UINT32_MAX)
			p->ids[p->nr_ids++] = (uint32_t)v;
		if (found)
			found[i] = n > 0;
	}
	return 0;
}

void diff_profile__release(struct diff_profile *p)
{
	for (size_t i = 0; i < p->nr; i++) {
		struct diff_pstream *s = p->streams[i];

		free(s->hashes);
		free(s->recs);
		free(s->tasks);
		free(s->keys);
		kmap__free(&s->fns);
		kmap__free(&s->lines);
		kmap__free(&s->edges);
		free(s);
	}
	free(p->streams);
	free(p->want);
	free(p->ids);
	annotator__free(p->annotator);
	diff_ident__free(p->ident);
	memset(p->buckets, 0, sizeof(p->buckets));
	p->streams = NULL;
	p->nr = p->alloc = 0;
	p->want = NULL;
	p->ids = NULL;
	p->annotator = NULL;
	p->ident = NULL;
}

static struct diff_pstream *stream_of(struct diff_profile *p, const char *id, int64_t pid,
				      const struct procmap_task *t)
{
	uint64_t h = mix((uintptr_t)id);
	struct diff_pstream *s;

	for (s = p->buckets[h % DIFF_BUCKETS]; s; s = s->next)
		if (s->id == id)
			return s;
	if (p->nr == p->alloc) {
		size_t alloc = p->alloc ? 2 * p->alloc : 16;
		struct diff_pstream **q = realloc(p->streams, alloc * sizeof(*q));

		if (!q)
			return NULL;
		p->streams = q;
		p->alloc = alloc;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = id;
	s->hash = str_hash(id);
	s->pid = pid;
	s->task = t;
	s->cur = p->seed;
	s->stats = p->all_stats;
	s->next = p->buckets[h % DIFF_BUCKETS];
	p->buckets[h % DIFF_BUCKETS] = s;
	p->streams[p->nr++] = s;
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
static uint64_t key_of(const struct diff_profile *p, const struct procmap_task *t, uint64_t addr)
{
	if (addr >= SYMBOLIZER_USER_END)
		return addr - p->slide;
	if (relative(t))
		return addr - t->load_base;
	return addr;
}

/* The program's build ID when its addresses are offsets: two builds are different code. */
static uint64_t tag_of(const struct procmap_task *t)
{
	return relative(t) ? mix(str_hash(t->build_id)) | 1 : 0;
}

/* The compared form of an item: source, target, program. */
static void item_keys(const struct diff_profile *p, const struct procmap_task *t,
		      const struct decoded_record *r, uint64_t k[3])
{
	if (r->type == DECODED_ENTRY)
		k[0] = ENTRY_FROM + (r->aux & 0xff);
	else
		k[0] = key_of(p, t, r->from);
	k[1] = key_of(p, t, r->to);
	k[2] = tag_of(t);
}

static bool async_kind(unsigned int kind)
{
	return kind == VBTS_BR_INTERRUPT || kind == VBTS_BR_EXCEPTION;
}

/*
 * Whether @r is compared: not an asynchronous event, nor what the guest ran from one up to its
 * return (see the top of trace-diff.h). @count: count the events (the first pass).
 */
static bool compared(const struct diff_profile *p, struct diff_pstream *s,
		     const struct decoded_record *r, bool count)
{
	unsigned int top;

	if (p->strict)
		return true;
	if (r->type == DECODED_ENTRY) {
		s->nest = 0;    /* back in user mode, wherever it was */
		return true;
	}
	if (s->nest) {
		top = s->nest - 1;
		if (s->nest_cpl_valid[top] && s->nest_cpl[top] > 0 && r->cpl_valid &&
		    r->cpl == s->nest_cpl[top]) {
			/* user mode runs again: its return is not in the trace */
			s->nest = 0;
		} else if ((r->kind == VBTS_BR_IRET || r->kind == VBTS_BR_UNKNOWN) &&
			   r->to >= s->nest_from[top] && r->to - s->nest_from[top] <= INSN_MAX) {
			s->nest--;      /* the return */
			return false;
		}
	}
	if (async_kind(r->kind)) {
		if (count)
			s->async++;
		if (s->nest == DIFF_NEST_MAX)
			s->nest--;      /* forget the oldest but one: a runaway */
		s->nest_from[s->nest] = r->from;
		s->nest_cpl[s->nest] = r->cpl;
		s->nest_cpl_valid[s->nest] = r->cpl_valid;
		s->nest++;
		return false;
	}
	return !s->nest;
}

uint64_t diff_profile__edge_key(const uint64_t k[3])
{
	return mix(k[0] ^ mix(k[1] ^ mix(k[2])));
}

uint64_t diff_profile__name_key(const char *text)
{
	return mix(str_hash(text));
}

/* Adds what an address says to the function and line tables. */
static int stats_addr(struct diff_profile *p, struct diff_pstream *s,
		      const struct procmap_task *t, uint64_t addr, bool source)
{
	const struct annotator_addr *a = annotator__addr(p->annotator, t, addr, true);
	struct kmap_entry *e;
	const char *file;
	int line, ret;

	if (!a)
		return -ENOMEM;
	file = a->file;
	line = a->line;
	if (a->name) {
		ret = kmap__add(&s->fns, str_hash(a->name), &e);
		if (ret < 0)
			return ret;
		e->s = a->name;
		e->count += source;
	}
	if (file) {
		ret = kmap__add(&s->lines, line_key(file, line), &e);
		if (ret < 0)
			return ret;
		e->s = file;
		e->line = line;
	}
	return 0;
}

static int stats_item(struct diff_profile *p, struct diff_pstream *s,
		      const struct procmap_task *t, const struct decoded_record *r,
		      const uint64_t k[3])
{
	struct kmap_entry *e;
	int ret;

	if (r->type != DECODED_ENTRY) {
		ret = stats_addr(p, s, t, r->from, true);
		if (ret)
			return ret;
	}
	ret = stats_addr(p, s, t, r->to, false);
	if (ret)
		return ret;
	ret = kmap__add(&s->edges, diff_profile__edge_key(k), &e);
	if (ret < 0)
		return ret;
	if (ret) {
		memcpy(e->k, k, sizeof(e->k));
		e->from = r->type == DECODED_ENTRY ? 0 : r->from;
		e->to = r->to;
		e->task = t;
		e->kind = r->type == DECODED_ENTRY ? ENTRY_KIND : r->kind;
	}
	e->count++;
	return 0;
}

static int hash_item(struct diff_profile *p, struct diff_pstream *s, const uint64_t k[3])
{
	s->cur = mix(s->cur ^ k[0]) + p->seed;
	s->cur = mix(s->cur ^ k[1]) + k[2];
	if (++s->n % TRACE_DIFF_CHUNK == 0) {
		if (s->n / TRACE_DIFF_CHUNK > s->alloc) {
			size_t alloc = s->alloc ? 2 * s->alloc : 16;
			uint64_t *q = realloc(s->hashes, alloc * sizeof(*q));

			if (!q)
				return -ENOMEM;
			s->hashes = q;
			s->alloc = alloc;
		}
		s->hashes[s->n / TRACE_DIFF_CHUNK - 1] = s->cur;
		s->cur = p->seed;
	}
	return 0;
}

static int keep_item(struct diff_pstream *s, const struct procmap_task *t,
		     const struct decoded_record *r, const uint64_t k[3])
{
	uint64_t i = s->seen++;

	if (!s->differs || i < s->lo || i >= s->hi)
		return 0;
	if (!s->recs) {
		size_t n = (size_t)(s->hi - s->lo);

		s->recs = malloc(n * sizeof(*s->recs));
		s->tasks = malloc(n * sizeof(*s->tasks));
		s->keys = malloc(n * sizeof(*s->keys));
		if (!s->recs || !s->tasks || !s->keys)
			return -ENOMEM;
	}
	s->recs[s->nr] = *r;
	s->tasks[s->nr] = t;
	memcpy(s->keys[s->nr], k, sizeof(s->keys[0]));
	s->nr++;
	return 0;
}

/* Reads the trace once: the first pass (@first) or the second. */
static int pass(struct diff_profile *p, bool first)
{
	const struct procmap *pm = trace_dir__procmap(p->trace);
	struct decoder *dec = trace_dir__decoder(p->trace, p->vcpu);
	struct decoded_record r;
	int ret;

	if (!dec)
		return errno == ENOENT ? 0 : -errno;
	for (size_t i = 0; i < p->nr; i++) {
		p->streams[i]->nest = 0;
		p->streams[i]->seen = 0;
	}
	while ((ret = decoder__next(dec, &r)) > 0) {
		const struct procmap_task *t;
		struct diff_pstream *s;
		const char *id;
		uint64_t k[3];
		int64_t pid;

		if (r.type != DECODED_BRANCH && r.type != DECODED_ENTRY)
			continue;
		t = annotator__task(p->annotator, &r);
		if (p->want && !trace_dir__task_selects(pm, &r, p->want, p->ids, p->nr_ids, t))
			continue;
		id = diff_ident__of(p->ident, &r, t, &pid);
		s = id ? stream_of(p, id, pid, t) : NULL;
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		if (!compared(p, s, &r, first))
			continue;
		item_keys(p, t, &r, k);
		if (first) {
			ret = hash_item(p, s, k);
			if (!ret && p->lcov)
				ret = exporter__record(p->lcov, &r);
		} else {
			ret = keep_item(s, t, &r, k);
		}
		if (!ret && s->stats && first == p->all_stats)
			ret = stats_item(p, s, t, &r, k);
		if (ret)
			break;
	}
	decoder__free(dec);
	if (ret >= 0 && first) {
		p->branches = p->async = 0;
		for (size_t i = 0; i < p->nr; i++) {
			p->branches += p->streams[i]->n;
			p->async += p->streams[i]->async;
		}
	}
	return ret < 0 ? ret : 0;
}

/* The threads of the trace, for their places among their processes' (diff_ident__see()). */
static int see_threads(struct diff_profile *p)
{
	struct decoder *dec = trace_dir__decoder(p->trace, p->vcpu);
	struct decoded_record r;
	int ret;

	if (!dec)
		return errno == ENOENT ? 0 : -errno;
	while ((ret = decoder__next(dec, &r)) > 0) {
		if (!r.thread_valid || (r.type != DECODED_BRANCH && r.type != DECODED_ENTRY))
			continue;
		ret = diff_ident__see(p->ident, &r, annotator__task(p->annotator, &r));
		if (ret)
			break;
	}
	decoder__free(dec);
	return ret < 0 ? ret : 0;
}

int diff_profile__read(struct diff_profile *p)
{
	int ret = see_threads(p);

	return ret ? ret : pass(p, true);
}

void diff_profile__addr(struct diff_profile *p, const struct procmap_task *t, uint64_t addr,
			char *buf, size_t len)
{
	const struct annotator_addr *a = annotator__addr(p->annotator, t, addr, true);
	int n;

	if (!a || !a->name)
		n = snprintf(buf, len, "0x%" PRIx64, addr);
	else
		n = snprintf(buf, len, "%.*s+0x%" PRIx64, (int)a->name_text_len, a->name_text,
			     a->offset);
	if (a && a->file && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " (%.*s:%d)", (int)a->file_text_len,
			 a->file_text, a->line);
}

/* ---- the comparison ---------------------------------------------------------------------- */

static struct diff_pstream *find_peer(const struct diff_profile *p, const struct diff_pstream *s)
{
	for (size_t i = 0; i < p->nr; i++)
		if (p->streams[i]->n && p->streams[i]->hash == s->hash &&
		    !strcmp(p->streams[i]->id, s->id))
			return p->streams[i];
	return NULL;
}

/* Whether the first pass says @a and @b differ, and from which chunk. */
static bool first_chunk(struct diff_pstream *a, struct diff_pstream *b)
{
	uint64_t full_a = a->n / TRACE_DIFF_CHUNK, full_b = b->n / TRACE_DIFF_CHUNK, c;

	for (c = 0; c < full_a && c < full_b; c++)
		if (a->hashes[c] != b->hashes[c])
			break;
	a->chunk = b->chunk = c;
	if (c < full_a && c < full_b)
		return true;
	return a->n != b->n || a->cur != b->cur;
}

static char *dup_text(const char *s)
{
	return strdup(s ? s : "");
}

/* One compared item as a line of text. */
static void item_text(struct diff_profile *p, const struct decoded_record *r,
		      const struct procmap_task *t, char *buf, size_t len)
{
	char from[ADDR_MAX], to[ADDR_MAX];
	const char *kind;

	diff_profile__addr(p, t, r->to, to, sizeof(to));
	if (r->type == DECODED_ENTRY) {
		snprintf(buf, len, "entry => 0x%" PRIx64 " %s", r->to, to);
		return;
	}
	diff_profile__addr(p, t, r->from, from, sizeof(from));
	kind = branch_kind__name(r->kind);
	snprintf(buf, len, "0x%" PRIx64 " %s => 0x%" PRIx64 " %s%s%s", r->from, from, r->to, to,
		 kind ? "  " : "", kind ? kind : "");
}

/* "function (file:line)" of what item @i of @s runs first: its source (an entry's target). */
static char *where_text(struct diff_profile *p, const struct diff_pstream *s, uint64_t i)
{
	const struct decoded_record *r = &s->recs[i - s->lo];
	const struct annotator_addr *a;
	char buf[LINE_MAX];

	a = annotator__addr(p->annotator, s->tasks[i - s->lo],
			    r->type == DECODED_ENTRY ? r->to : r->from, true);
	if (!a)
		return NULL;
	if (a->file)
		snprintf(buf, sizeof(buf), "%.*s (%.*s:%d)", (int)a->name_text_len,
			 a->name ? a->name_text : "?", (int)a->file_text_len, a->file_text,
			 a->line);
	else
		snprintf(buf, sizeof(buf), "%.*s", (int)a->name_text_len,
			 a->name ? a->name_text : "?");
	return strdup(buf);
}

static int add_text(char ***list, size_t *nr, size_t *more, size_t max, const char *text)
{
	char **l;

	if (*nr >= max) {
		(*more)++;
		return 0;
	}
	l = realloc(*list, (*nr + 1) * sizeof(*l));
	if (!l)
		return -ENOMEM;
	*list = l;
	l[*nr] = strdup(text);
	if (!l[*nr])
		return -ENOMEM;
	(*nr)++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The escaped text of a name or a file. */
static void esc(char *buf, size_t len, const char *s)
{
	escape__str(buf, len, s ? s : "?");
}

/* The functions and lines of @x that @y does not have, sorted, into @side. */
static int only_in(const struct diff_pstream *x, const struct diff_pstream *y,
		   struct trace_diff_side *side)
{
	char **fns = NULL, **lines = NULL, buf[LINE_MAX], q[ADDR_MAX];
	size_t nf = 0, nl = 0, mf = 0, ml = 0;
	int ret = 0;

	for (size_t i = 0; i < x->fns.cap && !ret; i++) {
		const struct kmap_entry *e = &x->fns.e[i];

		if (!e->key || kmap__find(&y->fns, e->key))
			continue;
		esc(q, sizeof(q), e->s);
		snprintf(buf, sizeof(buf), "fn %s", q);
		ret = add_text(&fns, &nf, &mf, SIZE_MAX, buf);
	}
	for (size_t i = 0; i < x->lines.cap && !ret; i++) {
		const struct kmap_entry *e = &x->lines.e[i];

		if (!e->key || kmap__find(&y->lines, e->key))
			continue;
		esc(q, sizeof(q), e->s);
		snprintf(buf, sizeof(buf), "%s:%d", q, e->line);
		ret = add_text(&lines, &nl, &ml, SIZE_MAX, buf);
	}
	if (!ret) {
		if (nf)
			qsort(fns, nf, sizeof(*fns), cmp_str);
		if (nl)
			qsort(lines, nl, sizeof(*lines), cmp_str);
	}
	for (size_t i = 0; i < nf && !ret; i++)
		ret = add_text(&side->only, &side->nr_only, &side->more_only, TRACE_DIFF_LIST_MAX,
			       fns[i]);
	for (size_t i = 0; i < nl && !ret; i++)
		ret = add_text(&side->only, &side->nr_only, &side->more_only, TRACE_DIFF_LIST_MAX,
			       lines[i]);
	for (size_t i = 0; i < nf; i++)
		free(fns[i]);
	for (size_t i = 0; i < nl; i++)
		free(lines[i]);
	free(fns);
	free(lines);
	return ret;
}

static int cmp_count(const void *pa, const void *pb)
{
	const struct trace_diff_count *a = pa, *b = pb;
	uint64_t da = a->count[0] > a->count[1] ? a->count[0] - a->count[1] :
		      a->count[1] - a->count[0];
	uint64_t db = b->count[0] > b->count[1] ? b->count[0] - b->count[1] :
		      b->count[1] - b->count[0];

	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* The functions whose branch counts differ, the largest differences first. */
static int counts(const struct diff_pstream *a, const struct diff_pstream *b,
		  struct trace_diff_stream *ds)
{
	struct trace_diff_count *c = NULL;
	size_t n = 0;
	char q[ADDR_MAX];

	for (int k = 0; k < 2; k++) {
		const struct diff_pstream *x = k ? b : a, *y = k ? a : b;

		for (size_t i = 0; i < x->fns.cap; i++) {
			const struct kmap_entry *e = &x->fns.e[i], *f;
			struct trace_diff_count *nc;

			if (!e->key)
				continue;
			f = kmap__find(&y->fns, e->key);
			if (k && f)
				continue;       /* counted from A's side */
			if ((f ? f->count : 0) == e->count)
				continue;
			nc = realloc(c, (n + 1) * sizeof(*c));
			if (!nc)
				goto nomem;
			c = nc;
			esc(q, sizeof(q), e->s);
			c[n].name = strdup(q);
			if (!c[n].name)
				goto nomem;
			c[n].count[k] = e->count;
			c[n].count[!k] = f ? f->count : 0;
			n++;
		}
	}
	if (n)
		qsort(c, n, sizeof(*c), cmp_count);
	ds->counts = c;
	ds->nr_counts = n < TRACE_DIFF_LIST_MAX ? n : TRACE_DIFF_LIST_MAX;
	ds->more_counts = n - ds->nr_counts;
	for (size_t i = ds->nr_counts; i < n; i++)
		free(c[i].name);
	return 0;
nomem:
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
	return -ENOMEM;
}

/*
 * The first difference of a pair the first pass says differ, its context and what differs
 * beyond it. Returns 1 when they differ, 0 when the chunks' hashes collided, or -errno.
 */
static int describe(struct diff_profile *pr[2], struct diff_pstream *s[2],
		    struct trace_diff_stream *ds, unsigned int context)
{
	char buf[LINE_MAX];
	uint64_t i, from, to;
	int ret;

	for (i = s[0]->chunk * TRACE_DIFF_CHUNK; ; i++) {
		if (i >= s[0]->n || i >= s[1]->n)
			break;
		if (i >= (s[0]->chunk + 1) * TRACE_DIFF_CHUNK)
			return 0;       /* the chunks' hashes collided: nothing differs */
		if (i - s[0]->lo >= s[0]->nr || i - s[1]->lo >= s[1]->nr)
			return -EIO;    /* the second pass read less than the first */
		if (memcmp(s[0]->keys[i - s[0]->lo], s[1]->keys[i - s[1]->lo],
			   sizeof(s[0]->keys[0])))
			break;
	}
	if (i >= s[0]->n && i >= s[1]->n)
		return 0;
	ds->differs = true;
	ds->first = i;
	from = i > context ? i - context : 0;
	if (from < s[0]->lo)
		from = s[0]->lo;
	ds->context_first = from;
	to = i + context;
	for (int k = 0; k < 2; k++) {
		struct trace_diff_side *x = &ds->side[k];

		for (uint64_t j = from; j <= to && j < s[k]->n && j - s[k]->lo < s[k]->nr; j++) {
			size_t more = 0;

			item_text(pr[k], &s[k]->recs[j - s[k]->lo], s[k]->tasks[j - s[k]->lo], buf,
				  sizeof(buf));
			ret = add_text(&x->context, &x->nr_context, &more, SIZE_MAX, buf);
			if (ret)
				return ret;
		}
		if (i < s[k]->n && i - s[k]->lo < s[k]->nr) {
			x->where = where_text(pr[k], s[k], i);
			if (!x->where)
				return -ENOMEM;
		}
		ret = only_in(s[k], s[!k], x);
		if (ret)
			return ret;
	}
	ret = counts(s[0], s[1], ds);
	return ret ? ret : 1;
}

static int fill_side(struct trace_diff_side *x, const struct diff_pstream *s)
{
	char q[256];

	if (!s)
		return 0;
	x->present = true;
	x->pid = s->pid;
	x->branches = s->n;
	x->async = s->async;
	if (s->task && s->task->build_id) {
		esc(q, sizeof(q), s->task->build_id);
		x->build_id = strdup(q);
		if (!x->build_id)
			return -ENOMEM;
	}
	return 0;
}

/* The union of a table over the streams of a profile. */
static int union_of(const struct diff_profile *p, size_t off, struct kmap *u)
{
	for (size_t i = 0; i < p->nr; i++) {
		const struct kmap *m = (const struct kmap *)((const char *)p->streams[i] + off);

		for (size_t j = 0; j < m->cap; j++) {
			struct kmap_entry *e;
			int ret;

			if (!m->e[j].key)
				continue;
			ret = kmap__add(u, m->e[j].key, &e);
			if (ret < 0)
				return ret;
			if (ret)
				*e = m->e[j];
		}
	}
	return 0;
}

/* The lines and edges each run covered and the other did not. */
static int coverage(struct diff_profile *pr[2], struct trace_diff_result *res)
{
	struct kmap lines[2] = { { 0 } }, edges[2] = { { 0 } };
	char buf[LINE_MAX], q[ADDR_MAX], from[ADDR_MAX], to[ADDR_MAX];
	int ret = 0;

	for (int k = 0; k < 2 && !ret; k++) {
		ret = union_of(pr[k], offsetof(struct diff_pstream, lines), &lines[k]);
		if (!ret)
			ret = union_of(pr[k], offsetof(struct diff_pstream, edges), &edges[k]);
		res->lines[k] = lines[k].nr;
		res->edges[k] = edges[k].nr;
	}
	for (int k = 0; k < 2 && !ret; k++) {
		for (size_t i = 0; i < lines[k].cap && !ret; i++) {
			const struct kmap_entry *e = &lines[k].e[i];

			if (!e->key || kmap__find(&lines[!k], e->key))
				continue;
			esc(q, sizeof(q), e->s);
			snprintf(buf, sizeof(buf), "%s:%d", q, e->line);
			ret = add_text(&res->cov_lines[k], &res->nr_cov_lines[k],
				       &res->more_cov_lines[k], TRACE_DIFF_COVERAGE_MAX, buf);
		}
		for (size_t i = 0; i < edges[k].cap && !ret; i++) {
			const struct kmap_entry *e = &edges[k].e[i];
			const char *kind;

			if (!e->key || kmap__find(&edges[!k], e->key))
				continue;
			diff_profile__addr(pr[k], e->task, e->to, to, sizeof(to));
			if (e->kind == ENTRY_KIND) {
				snprintf(buf, sizeof(buf), "entry => %s", to);
			} else {
				diff_profile__addr(pr[k], e->task, e->from, from, sizeof(from));
				kind = branch_kind__name(e->kind);
				snprintf(buf, sizeof(buf), "%s => %s%s%s", from, to, kind ? "  " : "",
					 kind ? kind : "");
			}
			ret = add_text(&res->cov_edges[k], &res->nr_cov_edges[k],
				       &res->more_cov_edges[k], TRACE_DIFF_COVERAGE_MAX, buf);
		}
		if (!ret && res->nr_cov_lines[k])
			qsort(res->cov_lines[k], res->nr_cov_lines[k], sizeof(char *), cmp_str);
		if (!ret && res->nr_cov_edges[k])
			qsort(res->cov_edges[k], res->nr_cov_edges[k], sizeof(char *), cmp_str);
	}
	for (int k = 0; k < 2; k++) {
		kmap__free(&lines[k]);
		kmap__free(&edges[k]);
	}
	return ret;
}

static int add_stream(struct trace_diff_result *res, struct trace_diff_stream **out)
{
	struct trace_diff_stream *s = realloc(res->streams, (res->nr + 1) * sizeof(*s));

	if (!s)
		return -ENOMEM;
	res->streams = s;
	*out = &s[res->nr++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

int trace_diff__run(const struct trace_diff_options *o, struct trace_diff_result *res,
		    char *err, size_t errlen)
{
	struct diff_profile p[2] = { { 0 } }, *pr[2] = { &p[0], &p[1] };
	struct exporter *lcov[2] = { NULL, NULL };
	bool *found[2] = { NULL, NULL };
	size_t shown = 0;
	int ret = -ENOMEM, k;

	*err = '\0';
	memset(res, 0, sizeof(*res));
	res->strict = o->strict;
	res->coverage = o->coverage;
	for (k = 0; k < 2; k++) {
		found[k] = calloc(o->nr_tasks + 1, sizeof(*found[k]));
		if (!found[k])
			goto out;
		ret = diff_profile__init(&p[k], o->trace[k], o->tasks, o->nr_tasks, found[k],
					 o->vcpu, o->strict);
		if (ret)
			goto out;
		if (o->coverage && o->lcov[k]) {
			struct exporter_options eo = {
				.out = o->lcov[k], .format = EXPORT_LCOV,
				.procmap = trace_dir__procmap(o->trace[k]),
				.symbolizer = trace_dir__symbolizer(o->trace[k]),
			};

			lcov[k] = exporter__new(&eo);
			if (!lcov[k]) {
				ret = -ENOMEM;
				goto out;
			}
			p[k].lcov = lcov[k];
		}
	}
	p[1].seed = p[0].seed;  /* the chunks of both traces are hashed alike */
	for (size_t i = 0; i < o->nr_tasks; i++) {
		if (!found[0][i] && !found[1][i]) {
			char q[256];

			snprintf(err, errlen, "no task '%s' in either trace",
				 escape__str(q, sizeof(q), o->tasks[i]));
			ret = -ENOENT;
			goto out;
		}
	}
	/* Kernel text at two KASLR slides is the same code when both slides are known. */
	if (!trace_dir__kaslr_slide(o->trace[0], &p[0].slide) ||
	    !trace_dir__kaslr_slide(o->trace[1], &p[1].slide))
		p[0].slide = p[1].slide = 0;
	/* First pass: streams and hashes of chunks. */
	for (k = 0; k < 2; k++) {
		ret = diff_profile__read(&p[k]);
		if (ret)
			goto out_read;
		if (lcov[k] && exporter__finish(lcov[k])) {
			snprintf(err, errlen, "cannot write the lcov file of %c", "AB"[k]);
			ret = -EIO;
			goto out;
		}
		res->branches[k] = p[k].branches;
		res->async[k] = p[k].async;
	}
	/* Pairs, and the streams that differ: their first chunk, and the context around it. */
	for (k = 0; k < 2; k++) {
		for (size_t i = 0; i < p[k].nr; i++) {
			struct diff_pstream *s = p[k].streams[i], *peer;

			if (!s->n)
				continue;       /* asynchronous events alone: no stream */
			if (k == 0) {
				peer = find_peer(&p[1], s);
				s->peer = peer;
				if (peer)
					peer->peer = s;
				s->differs = !peer || first_chunk(s, peer);
			} else if (s->peer) {
				s->differs = s->peer->differs;
				s->chunk = s->peer->chunk;
			} else {
				s->differs = true;
			}
			s->stats = o->coverage || s->differs;
			if (!s->differs || !s->peer)
				continue;
			s->lo = s->chunk * TRACE_DIFF_CHUNK;
			s->lo = s->lo > o->context ? s->lo - o->context : 0;
			s->hi = (s->chunk + 1) * TRACE_DIFF_CHUNK + o->context + 1;
		}
	}
	for (k = 0; k < 2; k++) {
		ret = pass(&p[k], false);
		if (ret)
			goto out_read;
	}
	/* The report. */
	for (k = 0; k < 2; k++) {
		for (size_t i = 0; i < p[k].nr; i++) {
			struct diff_pstream *s[2], *x = p[k].streams[i];
			struct trace_diff_stream *ds;

			if (!x->n || (k && x->peer))
				continue;
			s[k] = x;
			s[!k] = x->peer;
			ret = add_stream(res, &ds);
			if (!ret)
				ds->id = dup_text(x->id);
			if (ret || !ds->id)
				goto nomem;
			if (fill_side(&ds->side[0], s[0]) || fill_side(&ds->side[1], s[1]))
				goto nomem;
			if (!x->differs)
				continue;
			if (!s[0] || !s[1]) {
				ds->differs = true;
				res->differ++;
				continue;
			}
			if (shown == TRACE_DIFF_SHOWN_MAX) {
				ds->differs = true;
				res->differ++;
				continue;
			}
			ret = describe(pr, s, ds, o->context);
			if (ret < 0)
				goto out_read;
			res->differ += ret;
			shown += ret;
		}
	}
	if (o->coverage) {
		ret = coverage(pr, res);
		if (ret)
			goto nomem;
	}
	ret = res->differ ? 1 : 0;
	goto out;

nomem:
	ret = -ENOMEM;
out_read:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else
		snprintf(err, errlen, "a ring file changed under the reader: %s", strerror(-ret));
out:
	if (ret == -ENOMEM && !*err)
		snprintf(err, errlen, "out of memory");
	for (k = 0; k < 2; k++) {
		exporter__free(lcov[k]);
		diff_profile__release(&p[k]);
		free(found[k]);
	}
	if (ret < 0)
		trace_diff_result__free(res);
	return ret;
}

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

void trace_diff_result__free(struct trace_diff_result *res)
{
	for (size_t i = 0; i < res->nr; i++) {
		struct trace_diff_stream *s = &res->streams[i];

		free(s->id);
		for (int k = 0; k < 2; k++) {
			free(s->side[k].build_id);
			free(s->side[k].where);
			free_list(s->side[k].context, s->side[k].nr_context);
			free_list(s->side[k].only, s->side[k].nr_only);
		}
		for (size_t j = 0; j < s->nr_counts; j++)
			free(s->counts[j].name);
		free(s->counts);
	}
	free(res->streams);
	for (int k = 0; k < 2; k++) {
		free_list(res->cov_lines[k], res->nr_cov_lines[k]);
		free_list(res->cov_edges[k], res->nr_cov_edges[k]);
	}
	memset(res, 0, sizeof(*res));
}
