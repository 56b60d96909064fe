// SPDX-License-Identifier: GPL-2.0
/*
 * annotator.c - tasks, task labels, symbols and source lines of decoded records, memoized.
 *
 * The address cache is direct-mapped: a multiply-shift hash of (address, scope) picks the one
 * entry an answer may sit in, and a new answer replaces the old. A trace whose addresses all
 * collide (the guest chooses them) gets no hits and costs what the symbolizer costs without a
 * cache, never more. Escaped text is kept per distinct name pointer (names are owned by the
 * symbol tables, which live as long as the symbolizer), in an open-addressing table that grows
 * with the names met: at most the names of the tables.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotator.h"
#include "escape.h"
#include "out-buf.h"

/* vCPUs whose last task is remembered (by vCPU id modulo this), a power of two. */
#define TASK_MEMO 64

struct task_memo {
	uint32_t vcpu;
	bool used, time_valid;
	uint64_t cr3, time;
	const struct procmap_task *task;
};

/* An answer of the address cache; @state 0: empty. */
struct addr_entry {
	uintptr_t scope;
	unsigned int state;     /* ADDR_* bits */
	struct annotator_addr info;
};

#define ADDR_SYMBOL (1u << 0)   /* info.name is known (maybe NULL) */
#define ADDR_LINE (1u << 1)     /* info.file and info.line are known (maybe NULL) */

/* A name and its text escaped for a terminal (@text == @raw when nothing needs escaping). */
struct text {
	const char *raw;
	char *text;
	size_t len;
};

struct annotator {
	const struct procmap *pm;
	const struct symbolizer *sz;
	bool has_symbols;
	struct task_memo memo[TASK_MEMO];
	struct annotator_task *labels;  /* per task index, .task NULL until made */
	size_t nr_labels;
	struct addr_entry *addrs;       /* ANNOTATOR_ADDR_CACHE entries */
	struct annotator_addr none;     /* the answer without a symbolizer */
	struct text *texts;             /* open addressing on raw, 2^texts_bits slots */
	unsigned int texts_bits;
	size_t nr_texts;
};

struct annotator *annotator__new(const struct procmap *pm, const struct symbolizer *sz)
{
	struct annotator *a = calloc(1, sizeof(*a));

	if (!a)
		goto err_nomem;
	a->pm = pm;
	a->sz = sz;
	a->has_symbols = sz && symbolizer__has_tables(sz);
	if (pm) {
		a->nr_labels = procmap__nr_tasks(pm);
		a->labels = calloc(a->nr_labels ? a->nr_labels : 1, sizeof(*a->labels));
		if (!a->labels)
			goto err_free;
	}
	if (sz) {
		a->addrs = calloc(ANNOTATOR_ADDR_CACHE, sizeof(*a->addrs));
		if (!a->addrs)
			goto err_free;
	}
	return a;

err_free:
	annotator__free(a);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

const struct procmap_task *annotator__task(struct annotator *a, const struct decoded_record *r)
{
	struct task_memo *m = &a->memo[r->vcpu & (TASK_MEMO - 1)];

	if (!a->pm || !r->cr3_valid)
		return NULL;
	if (m->used && m->vcpu == r->vcpu && m->cr3 == r->cr3 && m->time == r->time &&
	    m->time_valid == r->time_valid)
		return m->task;
	m->task = procmap__lookup(a->pm, r->cr3, r->time, r->time_valid);
	m->used = true;
	m->vcpu = r->vcpu;
	m->cr3 = r->cr3;
	m->time = r->time;
	m->time_valid = r->time_valid;
	return m->task;
}

/* Makes the labels of @t into @l. Returns 0 or -ENOMEM. */
static int make_labels(const struct procmap_task *t, struct annotator_task *l)
{
	char name[ANNOTATOR_NAME_TEXT_MAX + 1], *text, *json, *p;
	size_t len = strlen(t->name);
	int n;

	/* As `vbts decode` always labelled its tasks: "%s[%" PRId64 "]". */
	escape__str(name, sizeof(name), t->name);
	n = snprintf(NULL, 0, "%s[%" PRId64 "]", name, t->pid);
	text = malloc((size_t)n + 1);
	/* ,"task": + the string + ,"pid":P,"tgid":T */
	json = malloc(8 + 6 * len + 2 + 2 * (8 + OUT_BUF_NUMBER_MAX));
	if (!text || !json) {
		free(text);
		free(json);
		return -ENOMEM;
	}
	snprintf(text, (size_t)n + 1, "%s[%" PRId64 "]", name, t->pid);
	p = out_buf__fmt_str(json, ",\"task\":", 8);
	p = out_buf__fmt_json(p, t->name, len);
	if (t->tgid_valid) {
		p = out_buf__fmt_str(p, ",\"pid\":", 7);
		p = out_buf__fmt_i64(p, t->pid);
		p = out_buf__fmt_str(p, ",\"tgid\":", 8);
		p = out_buf__fmt_i64(p, t->tgid);
	}
	l->text = text;
	l->text_len = (size_t)n;
	l->json = json;
	l->json_len = (size_t)(p - json);
	l->task = t;
	return 0;
}

const struct annotator_task *annotator__labels(struct annotator *a, const struct procmap_task *t)
{
	struct annotator_task *l;

	/* Only the tasks of the map have a slot: its index says which. */
	if (!a->pm || t->index >= a->nr_labels || procmap__task(a->pm, t->index) != t)
		return NULL;
	l = &a->labels[t->index];
	if (!l->task && make_labels(t, l))
		return NULL;
	return l;
}

/* Nothing of @s changes when it is escaped for a terminal: printable ASCII, no '\\'. */
static bool plain_text(const char *s, size_t *len)
{
	const char *p = s;

	for (; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f || *p == '\\')
			return false;
	*len = (size_t)(p - s);
	return true;
}

static size_t text_slot(const struct annotator *a, const char *raw)
{
	return (size_t)(((uint64_t)(uintptr_t)raw * 0x9e3779b97f4a7c15ULL) >> (64 - a->texts_bits));
}

/* The texts table, twice as large (at most half full afterwards). Returns 0 or -ENOMEM. */
static int grow_texts(struct annotator *a)
{
	unsigned int bits = a->texts_bits ? a->texts_bits + 1 : 8;
	struct text *old = a->texts, *t = calloc((size_t)1 << bits, sizeof(*t));
	size_t old_n = a->texts_bits ? (size_t)1 << a->texts_bits : 0;

	if (!t)
		return -ENOMEM;
	a->texts = t;
	a->texts_bits = bits;
	for (size_t i = 0; i < old_n; i++) {
		size_t j;

		if (!old[i].raw)
			continue;
		for (j = text_slot(a, old[i].raw); t[j].raw; j = (j + 1) & (((size_t)1 << bits) - 1))
			;
		t[j] = old[i];
	}
	free(old);
	return 0;
}

/*
 * The text of @raw escaped for a terminal, made once per distinct pointer. Returns NULL when
 * out of memory.
 */
static const struct text *escaped(struct annotator *a, const char *raw)
{
	size_t mask, i, len;
	struct text *t;

	if (2 * (a->nr_texts + 1) > ((size_t)1 << a->texts_bits) || !a->texts_bits)
		if (grow_texts(a))
			return NULL;
	mask = ((size_t)1 << a->texts_bits) - 1;
	for (i = text_slot(a, raw); a->texts[i].raw; i = (i + 1) & mask)
		if (a->texts[i].raw == raw)
			return &a->texts[i];
	t = &a->texts[i];
	if (plain_text(raw, &len)) {
		t->text = (char *)raw;
		t->len = len;
	} else {
		/* At most 4 output bytes per input byte (\xNN): never cut. */
		len = strlen(raw);
		t->text = malloc(4 * len + 1);
		if (!t->text)
			return NULL;
		t->len = escape__buf(t->text, 4 * len + 1, raw, len, 0);
	}
	t->raw = raw;
	a->nr_texts++;
	return t;
}

static size_t addr_slot(uint64_t addr, uintptr_t scope)
{
	uint64_t h = (addr ^ ((uint64_t)scope * 0xff51afd7ed558ccdULL)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> (64 - __builtin_ctz(ANNOTATOR_ADDR_CACHE)));
}

const struct annotator_addr *annotator__addr(struct annotator *a, const struct procmap_task *t,
					     uint64_t addr, bool lines)
{
	uintptr_t scope;
	struct addr_entry *e;
	const struct text *x;
	struct symbol_hit hit;
	const char *file;
	int line;

	if (!a->sz) {
		a->none = (struct annotator_addr){ .addr = addr };
		return &a->none;
	}
	scope = symbolizer__scope(a->sz, t, addr);
	e = &a->addrs[addr_slot(addr, scope)];
	if (!e->state || e->info.addr != addr || e->scope != scope) {
		e->state = 0;
		memset(&e->info, 0, sizeof(e->info));
		e->info.addr = addr;
		e->scope = scope;
	}
	if (!(e->state & ADDR_SYMBOL)) {
		if (!symbolizer__lookup(a->sz, t, addr, &hit)) {
			x = escaped(a, hit.name);
			if (!x) {
				e->state = 0;
				return NULL;
			}
			e->info.name = hit.name;
			e->info.name_text = x->text;
			e->info.name_text_len = x->len;
			e->info.offset = hit.offset;
		}
		e->state |= ADDR_SYMBOL;
	}
	if (lines && !(e->state & ADDR_LINE)) {
		if (!symbolizer__line(a->sz, t, addr, &file, &line)) {
			x = escaped(a, file);
			if (!x) {
				e->state = 0;
				return NULL;
			}
			e->info.file = file;
			e->info.file_text = x->text;
			e->info.file_text_len = x->len;
			e->info.line = line;
		}
		e->state |= ADDR_LINE;
	}
	return &e->info;
}

bool annotator__has_symbols(const struct annotator *a)
{
	return a->has_symbols;
}

void annotator__free(struct annotator *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_labels; i++) {
		free((char *)a->labels[i].text);
		free((char *)a->labels[i].json);
	}
	free(a->labels);
	if (a->texts_bits) {
		for (size_t i = 0; i < (size_t)1 << a->texts_bits; i++)
			if (a->texts[i].raw && a->texts[i].text != a->texts[i].raw)
				free(a->texts[i].text);
	}
	free(a->texts);
	free(a->addrs);
	free(a);
}
