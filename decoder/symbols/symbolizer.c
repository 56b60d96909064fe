// SPDX-License-Identifier: GPL-2.0
/*
 * symbolizer.c - which table names an address of a task: the guest image, the guest kernel's
 * tables shifted by its KASLR slide, and one ELF file per task (bound once, looked up per
 * record in O(1) through the task's index in the process map).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "guest-maps.h"
#include "symbolizer.h"

/* Escaped bytes of a name or path quoted in a warning, at most. */
#define QUOTE_MAX 256

/* The table of a task, and what to subtract from its addresses first. */
struct binding {
	const struct symbols *table;
	const struct symbol_file *file;
	uint64_t bias;
};

/* A file loaded for the tasks that use it: one per (device, inode). */
struct loaded {
	uint64_t dev, ino;
	struct symbols *table;  /* NULL when it could not be loaded */
};

/* A task's reported mappings: indices of guest_maps__get(), by start, one per start. */
struct task_maps {
	size_t *idx;
	size_t n;
};

struct symbolizer {
	struct symbols *image;
	struct symbols *vmlinux, *system_map;
	uint64_t slide;
	const struct procmap *pm;
	struct binding *bindings;       /* per task index of @pm */
	size_t nr_bindings;
	void *loaded;                   /* tsearch tree of struct loaded */
	bool files;                     /* symbolizer__bind() was given files */
	struct guest_maps *gm;          /* the agent's mappings, or NULL */
	const struct procmap *gm_pm;    /* the tasks @tmaps is for */
	struct task_maps *tmaps;        /* per task index of @gm_pm */
	size_t nr_tmaps;
};

/* One kind of problem of the binding: how many tasks, and the first one described. */
struct bind_problem {
	uint64_t count;
	char first[3 * QUOTE_MAX];
};

struct bind_ctx {
	struct symbolizer *sz;
	void (*warn)(void *warn_ctx, const char *line);
	void *warn_ctx;
	struct bind_problem no_base, ambiguous, other_id, no_segment;
};

struct symbolizer *symbolizer__new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer__set_image(struct symbolizer *sz, struct symbols *image)
{
	symbols__free(sz->image);
	sz->image = image;
}

void symbolizer__set_kernel(struct symbolizer *sz, struct symbols *vmlinux,
			    struct symbols *system_map, uint64_t slide)
{
	symbols__free(sz->vmlinux);
	symbols__free(sz->system_map);
	sz->vmlinux = vmlinux;
	sz->system_map = system_map;
	sz->slide = slide;
}

static void __attribute__((format(printf, 2, 3))) warn(struct bind_ctx *c, const char *fmt,
						       ...)
{
	char line[1024];
	va_list ap;

	if (!c->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	c->warn(c->warn_ctx, line);
}

/* "comm[pid]: what", the guest's text escaped; only the first of a kind is kept. */
static void __attribute__((format(printf, 3, 4))) note(struct bind_problem *p,
						       const struct procmap_task *t,
						       const char *fmt, ...)
{
	char name[QUOTE_MAX];
	size_t len;
	va_list ap;

	if (p->count++)
		return;
	len = (size_t)snprintf(p->first, sizeof(p->first), "%s[%" PRId64 "]: ",
			       escape__str(name, sizeof(name), t->name), t->pid);
	if (len >= sizeof(p->first))
		return;
	va_start(ap, fmt);
	vsnprintf(p->first + len, sizeof(p->first) - len, fmt, ap);
	va_end(ap);
}

static int cmp_loaded(const void *a, const void *b)
{
	const struct loaded *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The table of @f, loaded on first use; NULL when it cannot be (reported once). */
static const struct symbols *load(struct bind_ctx *c, const struct symbol_file *f, int *err)
{
	struct loaded key = { .dev = f->dev, .ino = f->ino }, *l, **node;
	char q[QUOTE_MAX], id[QUOTE_MAX];
	const char *have;

	*err = 0;
	node = tfind(&key, &c->sz->loaded, cmp_loaded);
	if (node)
		return (*node)->table;
	l = calloc(1, sizeof(*l));
	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	*l = key;
	node = tsearch(l, &c->sz->loaded, cmp_loaded);
	if (!node) {
		free(l);
		*err = -ENOMEM;
		return NULL;
	}
	escape__str(q, sizeof(q), f->path);
	l->table = symbols__load(f->path);
	if (!l->table) {
		if (errno == ENOMEM) {
			*err = -ENOMEM;
			return NULL;
		}
		warn(c, "%s: %s, not used for symbols", q, strerror(errno));
		return NULL;
	}
	have = symbols__build_id(l->table);
	if (strcmp(have ? have : "", f->info.build_id)) {
		warn(c, "%s: changed since it was searched (build ID %s), not used for symbols", q,
		     escape__str(id, sizeof(id), have ? have : "none"));
		symbols__free(l->table);
		l->table = NULL;
		return NULL;
	}
	if (!symbols__count(l->table))
		warn(c, "%s: no symbol table", q);
	if (symbols__dwarf_problem(l->table))
		warn(c, "%s: %s, no source lines", q, symbols__dwarf_problem(l->table));
	return l->table;
}

/* The files are one binary: one build ID, or one file reached by several paths. */
static bool same_binary(const struct symbol_file *a, const struct symbol_file *b)
{
	if (a->dev == b->dev && a->ino == b->ino)
		return true;
	return a->info.build_id[0] && !strcmp(a->info.build_id, b->info.build_id);
}

/* Of files of one binary, the one with the most symbols, then DWARF, then the first path. */
static const struct symbol_file *best_of(const struct symbol_file *const *f, size_t n)
{
	const struct symbol_file *best = f[0];

	for (size_t i = 1; i < n; i++) {
		if (f[i]->info.symtab != best->info.symtab) {
			if (f[i]->info.symtab > best->info.symtab)
				best = f[i];
		} else if (f[i]->info.dwarf && !best->info.dwarf) {
			best = f[i];
		}
	}
	return best;
}

/* Matches kept to tell several files from one: two are enough to see they differ. */
#define MATCH_MAX 64

/*
 * The file of @t by one key; NULL when none matches, or when the matches are not one binary
 * (*@stop then says not to try the next key).
 */
static const struct symbol_file *match(struct bind_ctx *c, const struct symbol_files *sf,
				       const struct procmap_task *t, enum symbol_files_key key,
				       const char *value, size_t len, bool *stop)
{
	const struct symbol_file *m[MATCH_MAX];
	char qa[QUOTE_MAX], qb[QUOTE_MAX];
	size_t n = symbol_files__match(sf, key, value, len, m, MATCH_MAX), i;

	if (!n)
		return NULL;
	*stop = true;
	for (i = 1; i < n && i < MATCH_MAX; i++) {
		if (!same_binary(m[0], m[i])) {
			note(&c->ambiguous, t, "%s and %s", escape__str(qa, sizeof(qa), m[0]->path),
			     escape__str(qb, sizeof(qb), m[i]->path));
			return NULL;
		}
	}
	if (n > MATCH_MAX) {
		note(&c->ambiguous, t, "%zu files", n);
		return NULL;
	}
	return best_of(m, n);
}

/* Finds, loads and places the file of task @t. Returns 0 or -ENOMEM. */
static int bind_task(struct bind_ctx *c, const struct symbol_files *sf,
		     const struct procmap_task *t, struct binding *b)
{
	const struct symbol_file *f = NULL;
	char q[QUOTE_MAX], qid[QUOTE_MAX];
	const struct symbols *table;
	uint64_t base;
	bool stop = false;
	int err;

	if (t->build_id)
		f = match(c, sf, t, SYMBOL_FILES_BUILD_ID, t->build_id, SIZE_MAX, &stop);
	if (!f && !stop && t->exe)
		f = match(c, sf, t, SYMBOL_FILES_PATH, t->exe, SIZE_MAX, &stop);
	if (!f && !stop)
		f = match(c, sf, t, SYMBOL_FILES_NAME, t->name, PROCMAP_COMM_LEN, &stop);
	if (!f)
		return 0;
	if (t->build_id && f->info.build_id[0] && strcmp(t->build_id, f->info.build_id)) {
		note(&c->other_id, t, "%s has %s, the task %s",
		     escape__str(q, sizeof(q), f->path), f->info.build_id,
		     escape__str(qid, sizeof(qid), t->build_id));
		return 0;
	}
	if (f->info.type == ET_DYN && !t->load_base_valid) {
		note(&c->no_base, t, "%s", escape__str(q, sizeof(q), f->path));
		return 0;
	}
	table = load(c, f, &err);
	if (!table)
		return err;
	b->bias = 0;
	if (f->info.type == ET_DYN) {
		if (symbols__link_base(table, &base)) {
			note(&c->no_segment, t, "%s", escape__str(q, sizeof(q), f->path));
			return 0;
		}
		b->bias = t->load_base - base;
	}
	b->table = table;
	b->file = f;
	return 0;
}

int symbolizer__bind(struct symbolizer *sz, const struct symbol_files *sf,
		     const struct procmap *pm, void (*warn_fn)(void *warn_ctx, const char *line),
		     void *warn_ctx)
{
	struct bind_ctx c = { .sz = sz, .warn = warn_fn, .warn_ctx = warn_ctx };
	size_t n = procmap__nr_tasks(pm), i;
	int ret = 0;

	free(sz->bindings);
	sz->bindings = NULL;
	sz->nr_bindings = 0;
	sz->pm = pm;
	sz->files = sz->files || symbol_files__nr(sf);
	if (!n || !symbol_files__nr(sf))
		return 0;
	sz->bindings = calloc(n, sizeof(*sz->bindings));
	if (!sz->bindings)
		return -ENOMEM;
	sz->nr_bindings = n;
	for (i = 0; i < n && !ret; i++)
		ret = bind_task(&c, sf, procmap__task(pm, i), &sz->bindings[i]);
	if (ret)
		return ret;
	if (c.no_base.count)
		warn(&c, "%" PRIu64 " task%s run%s a PIE or shared object whose load base the "
		     "events do not give, not symbolized (the first: %s)", c.no_base.count,
		     c.no_base.count == 1 ? "" : "s", c.no_base.count == 1 ? "s" : "",
		     c.no_base.first);
	if (c.ambiguous.count)
		warn(&c, "%" PRIu64 " task%s match%s different ELF files by path or name, not "
		     "symbolized (the first: %s)", c.ambiguous.count,
		     c.ambiguous.count == 1 ? "" : "s", c.ambiguous.count == 1 ? "es" : "",
		     c.ambiguous.first);
	if (c.other_id.count)
		warn(&c, "%" PRIu64 " task%s: the ELF file of the same path or name has another "
		     "build ID, not symbolized (the first: %s)", c.other_id.count,
		     c.other_id.count == 1 ? "" : "s", c.other_id.first);
	if (c.no_segment.count)
		warn(&c, "%" PRIu64 " task%s: a PIE or shared object without a loadable segment, "
		     "not symbolized (the first: %s)", c.no_segment.count,
		     c.no_segment.count == 1 ? "" : "s", c.no_segment.first);
	return 0;
}

/* The binding of @t, or NULL. */
static const struct binding *binding_of(const struct symbolizer *sz,
					const struct procmap_task *t)
{
	const struct binding *b;

	if (!t || !sz->pm || t->index >= sz->nr_bindings || procmap__task(sz->pm, t->index) != t)
		return NULL;
	b = &sz->bindings[t->index];
	return b->table ? b : NULL;
}

const struct symbol_file *symbolizer__file(const struct symbolizer *sz,
					   const struct procmap_task *t)
{
	const struct binding *b = binding_of(sz, t);

	return b ? b->file : NULL;
}

/* The reported mappings of @t, or NULL. */
static const struct task_maps *tmaps_of(const struct symbolizer *sz,
					const struct procmap_task *t)
{
	const struct task_maps *tm;

	if (!t || !sz->gm_pm || t->index >= sz->nr_tmaps || procmap__task(sz->gm_pm, t->index) != t)
		return NULL;
	tm = &sz->tmaps[t->index];
	return tm->n ? tm : NULL;
}

/* The reported mapping of @t that holds @addr, or NULL. O(log n). */
static const struct guest_map *guest_map_of(const struct symbolizer *sz,
					    const struct procmap_task *t, uint64_t addr)
{
	const struct task_maps *tm = tmaps_of(sz, t);
	const struct guest_map *m;
	size_t lo = 0, hi;

	if (!tm)
		return NULL;
	hi = tm->n;
	/* The last mapping that starts at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (guest_maps__get(sz->gm, tm->idx[mid])->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	m = guest_maps__get(sz->gm, tm->idx[lo - 1]);
	return addr < m->end ? m : NULL;
}

/* The table of the reported mapping of @t that holds @addr, with its bias; or NULL. */
static const struct symbols *guest_table(const struct symbolizer *sz,
					 const struct procmap_task *t, uint64_t addr,
					 uint64_t *bias, const struct guest_map **map)
{
	const struct guest_map *m = guest_map_of(sz, t, addr);

	if (!m)
		return NULL;
	if (map)
		*map = m;
	return guest_maps__table(sz->gm, m, bias);
}

/* The tables for @addr in the order they are tried, with their biases; returns how many. */
static size_t tables_for(const struct symbolizer *sz, const struct procmap_task *t,
			 uint64_t addr, const struct symbols **tables, uint64_t *bias)
{
	const struct binding *b;
	size_t n = 0;

	if (addr >= SYMBOLIZER_KERNEL_START) {
		if (sz->vmlinux) {
			tables[n] = sz->vmlinux;
			bias[n++] = sz->slide;
		}
		if (sz->system_map) {
			tables[n] = sz->system_map;
			bias[n++] = sz->slide;
		}
	} else if (addr < SYMBOLIZER_USER_END) {
		if ((b = binding_of(sz, t))) {
			tables[n] = b->table;
			bias[n++] = b->bias;
		}
		if ((tables[n] = guest_table(sz, t, addr, &bias[n], NULL)))
			n++;
	}
	if (sz->image) {
		tables[n] = sz->image;
		bias[n++] = 0;
	}
	return n;
}

uintptr_t symbolizer__scope(const struct symbolizer *sz, const struct procmap_task *t,
			     uint64_t addr)
{
	const struct binding *b;

	/* tables_for(): only a user address looks at the task, through its binding and maps. */
	if (addr >= SYMBOLIZER_USER_END)
		return 0;
	b = binding_of(sz, t);
	if (b)
		return (uintptr_t)b;
	return (uintptr_t)tmaps_of(sz, t);
}

int symbolizer__lookup(const struct symbolizer *sz, const struct procmap_task *t,
		       uint64_t addr, struct symbol_hit *hit)
{
	const struct symbols *tables[4];
	uint64_t bias[4];
	size_t n = tables_for(sz, t, addr, tables, bias);

	for (size_t i = 0; i < n; i++)
		if (!symbols__lookup(tables[i], addr - bias[i], hit))
			return 0;
	return -ENOENT;
}

int symbolizer__line(const struct symbolizer *sz, const struct procmap_task *t, uint64_t addr,
		     const char **file, int *line)
{
	const struct symbols *tables[4];
	uint64_t bias[4];
	size_t n = tables_for(sz, t, addr, tables, bias);

	for (size_t i = 0; i < n; i++)
		if (!symbols__line(tables[i], addr - bias[i], file, line))
			return 0;
	return -ENOENT;
}

int symbolizer__module(const struct symbolizer *sz, const struct procmap_task *t, uint64_t addr,
		       struct symbolizer_module *m)
{
	const struct symbols *tables[4];
	const struct guest_map *gmap = NULL;
	uint64_t bias[4], start, end, gbias;
	size_t n = tables_for(sz, t, addr, tables, bias);

	for (size_t i = 0; i < n; i++) {
		if (symbols__extent(tables[i], &start, &end))
			continue;
		/* In the table's own addresses: no wrap-around of a bias to care about. */
		if (addr - bias[i] < start || addr - bias[i] >= end)
			continue;
		m->path = symbols__path(tables[i]) ? symbols__path(tables[i]) : "";
		m->guest_path = NULL;
		if (addr < SYMBOLIZER_USER_END &&
		    guest_table(sz, t, addr, &gbias, &gmap) == tables[i] && gbias == bias[i])
			m->guest_path = gmap->path;
		m->base = start + bias[i];
		m->end = end + bias[i];
		m->table = tables[i];
		return 0;
	}
	return -ENOENT;
}

bool symbolizer__has_tables(const struct symbolizer *sz)
{
	return sz->image || sz->vmlinux || sz->system_map || sz->files ||
	       (sz->gm && guest_maps__nr(sz->gm));
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Qsort context: the set the indices are of. */
static const struct guest_maps *sort_gm;

/* By start, then as reported (index order is (pid, time, line)). */
static int cmp_by_start(const void *a, const void *b)
{
	const struct guest_map *x = guest_maps__get(sort_gm, *(const size_t *)a);
	const struct guest_map *y = guest_maps__get(sort_gm, *(const size_t *)b);

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return cmp_size(a, b);
}

static void free_tmaps(struct symbolizer *sz)
{
	for (size_t i = 0; i < sz->nr_tmaps; i++)
		free(sz->tmaps[i].idx);
	free(sz->tmaps);
	sz->tmaps = NULL;
	sz->nr_tmaps = 0;
}

int symbolizer__set_guest_maps(struct symbolizer *sz, struct guest_maps *gm,
			       const struct procmap *pm)
{
	size_t nr = pm ? procmap__nr_tasks(pm) : 0;
	struct task_maps *tm = calloc(nr ? nr : 1, sizeof(*tm));
	uint64_t *next_exec = NULL;

	if (gm && nr) {
		next_exec = malloc(procmap__nr_processes(pm) * sizeof(*next_exec));
		if (next_exec)
			for (size_t i = 0; i < procmap__nr_processes(pm); i++)
				next_exec[i] = UINT64_MAX;
	}
	if (!tm || (gm && nr && !next_exec)) {
		free(tm);
		free(next_exec);
		guest_maps__free(gm);
		return -ENOMEM;
	}
	free_tmaps(sz);
	guest_maps__free(sz->gm);
	sz->gm = gm;
	sz->gm_pm = pm;
	sz->tmaps = tm;
	sz->nr_tmaps = nr;
	if (!gm)
		return 0;
	/*
	 * A task's window: from its exec (0 for a first announcement) to the next exec of its
	 * process, found walking the tasks from the last one back.
	 */
	for (size_t i = nr; i-- > 0;) {
		const struct procmap_task *t = procmap__task(pm, i);
		int64_t pid = t->tgid_valid ? t->tgid : t->pid;
		uint64_t lo = t->exec ? t->start : 0, hi = next_exec[t->process];
		size_t first, n, k = 0;

		if (t->exec)
			next_exec[t->process] = t->start;
		n = guest_maps__range(gm, pid, lo, hi, &first);
		if (!n)
			continue;
		tm[i].idx = malloc(n * sizeof(size_t));
		if (!tm[i].idx) {
			free(next_exec);
			return -ENOMEM;
		}
		for (size_t j = 0; j < n; j++)
			tm[i].idx[j] = first + j;
		sort_gm = gm;
		qsort(tm[i].idx, n, sizeof(size_t), cmp_by_start);
		/* One per start: the one reported last. */
		for (size_t j = 0; j < n; j++) {
			if (k && guest_maps__get(gm, tm[i].idx[k - 1])->start ==
				 guest_maps__get(gm, tm[i].idx[j])->start)
				k--;
			tm[i].idx[k++] = tm[i].idx[j];
		}
		tm[i].n = k;
	}
	free(next_exec);
	return 0;
}

static void free_loaded(void *p)
{
	struct loaded *l = p;

	symbols__free(l->table);
	free(l);
}

void symbolizer__free(struct symbolizer *sz)
{
	if (!sz)
		return;
	symbols__free(sz->image);
	symbols__free(sz->vmlinux);
	symbols__free(sz->system_map);
	free(sz->bindings);
	tdestroy(sz->loaded, free_loaded);
	free_tmaps(sz);
	guest_maps__free(sz->gm);
	free(sz);
}
