// SPDX-License-Identifier: GPL-2.0
/*
 * annotator.c - tasks, task labels, symbols and source lines of decoded records, memoized.
 *
 * The address cache is direct-mapped: a multiply-shift hash of (address, scope) picks the one
 * entry an answer may sit in, and a new answer replaces the old. A trace whose addresses all
 * collide (the guest chooses them) gets no hits and costs what the symbolizer costs without a
 * cache, never more. Entries are small (32 bytes) so that the answers of a working set of
 * tens of thousands of addresses stay in the processor's caches: names are kept apart, once
 * per distinct name pointer (names are owned by the symbol tables, which live as long as the
 * symbolizer), with their escaped text, in an array indexed by an open-addressing table that
 * grow with the names met: at most the names of the tables.
 *
 * The text output asks for more: the exact text it writes after an address, " name+0xoff"
 * and " (file:line)", made once per (address, scope) and kept in a second cache whose
 * entries hold that text (a cache line each, four-way set associative, the least recently used
 * entry of a set replaced), so that an address costs the text output a probe and a copy. A
 * text longer than an entry holds is left to the first cache (annotator__addr_text() says
 * so); whatever the guest chooses, an answer costs at most what it costs without this cache
 * plus the formatting of one short text and the move of the entries of one set.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/*
 * One answer of the address cache, 32 bytes: two to a cache line. @name and @file say what is
 * known: NAME_UNKNOWN / FILE_UNKNOWN not looked up yet, NAME_NONE / FILE_NONE looked up and
 * absent, NAME_FAR a symbol whose offset does not fit @offset (looked up again each time),
 * else the index of its text plus NAME_TEXT / FILE_TEXT. An entry of another address or scope
 * is replaced.
 */
struct addr_entry {
	uint64_t addr;
	uintptr_t scope;
	uint32_t name, file;
	uint32_t offset;
	int32_t line;
};

_Static_assert(sizeof(struct addr_entry) == 32, "two entries to a cache line");

#define NAME_UNKNOWN 0u
#define NAME_NONE 1u
#define NAME_FAR 2u
#define NAME_TEXT 3u
#define FILE_UNKNOWN 0u
#define FILE_NONE 1u
#define FILE_TEXT 2u

/*
 * One answer of the text cache, a cache line: the text written after the address @addr of
 * @scope: @text[0, @sym_len) is " name+0xoff" or " [unknown]", @text[@sym_len, @sym_len +
 * @line_len) is " (file:line)" or nothing when no table has a line for it. @state says which
 * parts are known (TEXT_SYM, TEXT_LINE), or TEXT_LONG that a part does not fit in @text.
 */
struct text_entry {
	uint64_t addr;
	uintptr_t scope;
	uint8_t state;
	uint8_t sym_len, line_len;
	char text[ANNOTATOR_TEXT_MAX];
};

_Static_assert(sizeof(struct text_entry) == 64, "an entry a cache line");

#define TEXT_SYM 1u
#define TEXT_LINE 2u
#define TEXT_LONG 4u
/* Entries of a set of the text cache: up to four addresses of one hash kept together. */
#define TEXT_WAYS 4
/*
 * Entries of a set annotator__prefetch() loads: the most recently used ones, where an address
 * asked for again mostly is (loading all would exhaust the processor's fill buffers).
 */
#define PREFETCH_WAYS 2

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
	struct addr_entry *addrs;       /* 1 << addr_bits entries */
	unsigned int addr_bits;
	struct text_entry *tcache;      /* 1 << text_bits sets of TEXT_WAYS, made when first used */
	unsigned int text_bits;
	const struct procmap_task *scope_task;  /* the task of user_scope */
	uintptr_t user_scope;           /* its scope for user addresses */
	bool scope_valid;
	struct annotator_addr result;   /* the last answer */
	struct text *texts;             /* the distinct names met, in order */
	size_t nr_texts, alloc_texts;
	uint32_t *text_index;           /* open addressing on raw: 1 + index, 0 empty */
	unsigned int index_bits;
};

struct annotator *annotator__new(const struct procmap *pm, const struct symbolizer *sz)
{
	return annotator__new_sized(pm, sz, 0, 0);
}

struct annotator *annotator__new_sized(const struct procmap *pm, const struct symbolizer *sz,
				       unsigned int addr_bits, unsigned int text_bits)
{
	struct annotator *a = calloc(1, sizeof(*a));

	if (!a)
		goto err_nomem;
	a->addr_bits = addr_bits && addr_bits <= ANNOTATOR_ADDR_CACHE_BITS ?
		       addr_bits : ANNOTATOR_ADDR_CACHE_BITS;
	a->text_bits = text_bits && text_bits <= ANNOTATOR_TEXT_CACHE_BITS ?
		       text_bits : ANNOTATOR_TEXT_CACHE_BITS;
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
		a->addrs = calloc((size_t)1 << a->addr_bits, sizeof(*a->addrs));
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
	l->json_name_len = (size_t)(p - json);
	if (t->tgid_valid) {
		p = out_buf__fmt_str(p, ",\"pid\":", 7);
		p = out_buf__fmt_i64(p, t->pid);
		p = out_buf__fmt_str(p, ",\"tgid\":", 8);
		p = out_buf__fmt_i64(p, t->tgid);
	}
	l->text = text;
	l->text_len = (size_t)n;
	l->text_name_len = strlen(name);
	l->json = json;
	l->json_len = (size_t)(p - json);
	l->task = t;
	return 0;
}

const struct annotator_task *annotator__labels(struct annotator *a, const struct procmap_task *t)
{
	struct annotator_task *l;

	/* Only the tasks of the map have a slot: its index says which. */
	if (!a->pm || t->index >= a->nr_labels)
		return NULL;
	l = &a->labels[t->index];
	if (l->task == t)
		return l;
	if (l->task || procmap__task(a->pm, t->index) != t || make_labels(t, l))
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
	return (size_t)(((uint64_t)(uintptr_t)raw * 0x9e3779b97f4a7c15ULL) >> (64 - a->index_bits));
}

/* The index of texts, twice as large (at most half full afterwards). Returns 0 or -ENOMEM. */
static int grow_index(struct annotator *a)
{
	unsigned int bits = a->index_bits ? a->index_bits + 1 : 8;
	uint32_t *ix = calloc((size_t)1 << bits, sizeof(*ix));
	size_t mask = ((size_t)1 << bits) - 1, j;

	if (!ix)
		return -ENOMEM;
	free(a->text_index);
	a->text_index = ix;
	a->index_bits = bits;
	for (size_t i = 0; i < a->nr_texts; i++) {
		for (j = text_slot(a, a->texts[i].raw); ix[j]; j = (j + 1) & mask)
			;
		ix[j] = (uint32_t)i + 1;
	}
	return 0;
}

/*
 * The index in a->texts of @raw escaped for a terminal, made once per distinct pointer.
 * Returns -ENOMEM when out of memory.
 */
static int64_t escaped(struct annotator *a, const char *raw)
{
	size_t mask, i, len;
	struct text *t;

	if (2 * (a->nr_texts + 1) > ((size_t)1 << a->index_bits) || !a->index_bits) {
		/* Indexes are 32 bits: the names of the tables are far fewer. */
		if (a->nr_texts >= UINT32_MAX / 4 || grow_index(a))
			return -ENOMEM;
	}
	mask = ((size_t)1 << a->index_bits) - 1;
	for (i = text_slot(a, raw); a->text_index[i]; i = (i + 1) & mask)
		if (a->texts[a->text_index[i] - 1].raw == raw)
			return a->text_index[i] - 1;
	if (a->nr_texts == a->alloc_texts) {
		size_t alloc = a->alloc_texts ? 2 * a->alloc_texts : 256;

		t = realloc(a->texts, alloc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		a->texts = t;
		a->alloc_texts = alloc;
	}
	t = &a->texts[a->nr_texts];
	if (plain_text(raw, &len)) {
		t->text = (char *)raw;
		t->len = len;
	} else {
		/* At most 4 output bytes per input byte (\xNN): never cut. */
		len = strlen(raw);
		t->text = malloc(4 * len + 1);
		if (!t->text)
			return -ENOMEM;
		t->len = escape__buf(t->text, 4 * len + 1, raw, len, 0);
	}
	t->raw = raw;
	a->text_index[i] = (uint32_t)++a->nr_texts;
	return (int64_t)a->nr_texts - 1;
}

/* symbolizer__scope(), with the scope of the last task's user addresses remembered. */
static inline uintptr_t scope_of(struct annotator *a, const struct procmap_task *t, uint64_t addr)
{
	if (addr >= SYMBOLIZER_USER_END)
		return symbolizer__scope(a->sz, t, addr);
	if (!a->scope_valid || a->scope_task != t) {
		a->user_scope = symbolizer__scope(a->sz, t, addr);
		a->scope_task = t;
		a->scope_valid = true;
	}
	return a->user_scope;
}

/* The slot of (@addr, @scope) in a table of 1 << @bits (1 to 32). */
static size_t addr_slot(uint64_t addr, uintptr_t scope, unsigned int bits)
{
	uint64_t h = (addr ^ ((uint64_t)scope * 0xff51afd7ed558ccdULL)) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> (64 - bits));
}

static void set_name(struct annotator_addr *r, const struct text *x, uint64_t offset)
{
	r->name = x->raw;
	r->name_text = x->text;
	r->name_text_len = x->len;
	r->offset = offset;
}

/*
 * Looks the symbol of @addr up into @e; a symbol too far for @e goes into @r. Returns 0 or
 * -ENOMEM.
 */
static int lookup_name(struct annotator *a, const struct procmap_task *t, uint64_t addr,
		       struct addr_entry *e, struct annotator_addr *r)
{
	struct symbol_hit hit;
	int64_t x;

	if (symbolizer__lookup(a->sz, t, addr, &hit)) {
		e->name = NAME_NONE;
		return 0;
	}
	x = escaped(a, hit.name);
	if (x < 0)
		return -ENOMEM;
	if (hit.offset > UINT32_MAX) {
		e->name = NAME_FAR;
		set_name(r, &a->texts[x], hit.offset);
		return 0;
	}
	e->name = (uint32_t)x + NAME_TEXT;
	e->offset = (uint32_t)hit.offset;
	return 0;
}

/* Looks the source line of @addr up into @e. Returns 0 or -ENOMEM. */
static int lookup_line(struct annotator *a, const struct procmap_task *t, uint64_t addr,
		       struct addr_entry *e)
{
	const char *file;
	int64_t x;
	int line;

	if (symbolizer__line(a->sz, t, addr, &file, &line)) {
		e->file = FILE_NONE;
		return 0;
	}
	x = escaped(a, file);
	if (x < 0)
		return -ENOMEM;
	e->file = (uint32_t)x + FILE_TEXT;
	e->line = line;
	return 0;
}

const struct annotator_addr *annotator__addr(struct annotator *a, const struct procmap_task *t,
					     uint64_t addr, bool lines)
{
	struct annotator_addr *r = &a->result;
	struct addr_entry *e;
	const struct text *x;
	uintptr_t scope;

	*r = (struct annotator_addr){ .addr = addr };
	if (!a->sz)
		return r;
	scope = scope_of(a, t, addr);
	e = &a->addrs[addr_slot(addr, scope, a->addr_bits)];
	if (e->addr != addr || e->scope != scope)
		*e = (struct addr_entry){ .addr = addr, .scope = scope };
	if ((e->name == NAME_UNKNOWN || e->name == NAME_FAR) && lookup_name(a, t, addr, e, r))
		goto err_nomem;
	if (lines && e->file == FILE_UNKNOWN && lookup_line(a, t, addr, e))
		goto err_nomem;
	if (e->name >= NAME_TEXT)
		set_name(r, &a->texts[e->name - NAME_TEXT], e->offset);
	if (lines && e->file >= FILE_TEXT) {
		x = &a->texts[e->file - FILE_TEXT];
		r->file = x->raw;
		r->file_text = x->text;
		r->file_text_len = x->len;
		r->line = e->line;
	}
	return r;

err_nomem:
	*e = (struct addr_entry){ 0 };
	return NULL;
}

/* The bytes of the text cache. */
static size_t text_cache_size(const struct annotator *a)
{
	return ((size_t)TEXT_WAYS * sizeof(struct text_entry)) << a->text_bits;
}

/*
 * The text cache, made on first use: zeroed pages of the kernel's, in huge pages where it has
 * them (a page table walk less per address). Returns 0 or -ENOMEM.
 */
static int text_cache_make(struct annotator *a)
{
	size_t size = text_cache_size(a);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -ENOMEM;
	madvise(p, size, MADV_HUGEPAGE);
	a->tcache = p;
	return 0;
}

/* The set of (@addr, @scope) in the text cache. */
static struct text_entry *text_set(struct annotator *a, uint64_t addr, uintptr_t scope)
{
	return &a->tcache[TEXT_WAYS * addr_slot(addr, scope, a->text_bits)];
}

/* Writes the " name+0xoff" of @x into @e, or marks it TEXT_LONG when it does not fit. */
static void text_put_sym(struct text_entry *e, const struct annotator_addr *x)
{
	char *p = e->text;

	if (!x->name) {
		p = out_buf__fmt_str(p, " [unknown]", 10);
	} else if (x->name_text_len + 1 + 3 + 16 <= sizeof(e->text)) {
		*p++ = ' ';
		p = out_buf__fmt_str(p, x->name_text, x->name_text_len);
		p = out_buf__fmt_str(p, "+0x", 3);
		p = out_buf__fmt_hex(p, x->offset);
	} else {
		e->state |= TEXT_LONG;
		return;
	}
	e->sym_len = (uint8_t)(p - e->text);
	e->state |= TEXT_SYM;
}

/* Writes the " (file:line)" of @x after the symbol of @e, or marks @e TEXT_LONG. */
static void text_put_line(struct text_entry *e, const struct annotator_addr *x)
{
	char *start = e->text + e->sym_len, *p = start;

	if (x->file) {
		/* " (" file ":" line ")", the line at most 11 characters. */
		if (e->sym_len + x->file_text_len + 2 + 1 + 11 + 1 > sizeof(e->text)) {
			e->state |= TEXT_LONG;
			return;
		}
		p = out_buf__fmt_str(p, " (", 2);
		p = out_buf__fmt_str(p, x->file_text, x->file_text_len);
		*p++ = ':';
		p = out_buf__fmt_i64(p, x->line);
		*p++ = ')';
	}
	e->line_len = (uint8_t)(p - start);
	e->state |= TEXT_LINE;
}

void annotator__prefetch(struct annotator *a, const struct procmap_task *t, uint64_t addr)
{
	const char *set;

	if (!a->tcache)
		return;
	set = (const char *)text_set(a, addr, scope_of(a, t, addr));
	for (unsigned int w = 0; w < PREFETCH_WAYS; w++)
		__builtin_prefetch(set + w * sizeof(struct text_entry));
}

int annotator__addr_text(struct annotator *a, const struct procmap_task *t, uint64_t addr,
			 bool lines, const char **text, size_t *len)
{
	unsigned int want = lines ? TEXT_SYM | TEXT_LINE : TEXT_SYM;
	const struct annotator_addr *x;
	struct text_entry *set, *e, tmp;
	unsigned int w;
	uintptr_t scope;

	if (!a->sz)
		return -E2BIG;
	if (!a->tcache && text_cache_make(a))
		return -ENOMEM;
	scope = scope_of(a, t, addr);
	set = text_set(a, addr, scope);
	for (w = 0; w < TEXT_WAYS; w++)
		if (set[w].addr == addr && set[w].scope == scope && set[w].state)
			break;
	if (w) {
		/* The most recently used first; a new answer replaces the least recently used. */
		tmp = w < TEXT_WAYS ? set[w] : (struct text_entry){ .addr = addr, .scope = scope };
		memmove(&set[1], &set[0], (w < TEXT_WAYS ? w : TEXT_WAYS - 1) * sizeof(*set));
		set[0] = tmp;
	}
	e = &set[0];
	if ((e->state & want) != want && !(e->state & TEXT_LONG)) {
		x = annotator__addr(a, t, addr, lines);
		if (!x) {
			e->state = 0;
			return -ENOMEM;
		}
		if (!(e->state & TEXT_SYM))
			text_put_sym(e, x);
		if (lines && !(e->state & (TEXT_LINE | TEXT_LONG)))
			text_put_line(e, x);
	}
	if (e->state & TEXT_LONG)
		return -E2BIG;
	*text = e->text;
	*len = (size_t)e->sym_len + (lines ? e->line_len : 0);
	return 0;
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
	for (size_t i = 0; i < a->nr_texts; i++)
		if (a->texts[i].text != a->texts[i].raw)
			free(a->texts[i].text);
	free(a->texts);
	free(a->text_index);
	free(a->addrs);
	if (a->tcache)
		munmap(a->tcache, text_cache_size(a));
	free(a);
}
