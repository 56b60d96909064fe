// SPDX-License-Identifier: GPL-2.0
/*
 * procmap.c - CR3 (+ time) -> guest task, from the task events of events.jsonl.
 *
 * The guest writes events.jsonl, so a map may hold hundreds of thousands of tasks and exits,
 * and a trace as many records to look up: every lookup is a binary search. The first query
 * after a change sorts the tasks into announcement order, (start, order added), the order
 * added breaking ties (the line of the file), and builds an index of them sorted by
 * (cr3, start, order) whose keys are kept apart (struct of arrays: a search reads only the
 * keys). Exit events are kept apart and matched to their tasks through a temporary index by
 * (pid, start, order).
 *
 * Each query also has a plain linear path, the reference the indexed one is tested against
 * (procmap-int.h); it also answers when there is no memory for the index.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "input-file.h"
#include "procmap-int.h"

struct procmap_exit {
	int64_t pid, code;
	uint64_t time;
};

/* A task and the order it was added in (its line in events.jsonl): @task is handed out. */
struct procmap_entry {
	struct procmap_task task;
	size_t order;
};

struct procmap {
	struct procmap_entry *tasks;    /* sorted by (start, order) while @indexed */
	size_t nr, alloc;
	struct procmap_exit *exits;     /* in file order; later ones win */
	size_t nr_exits, alloc_exits;
	/*
	 * The lookup index, @nr entries each, or NULL (no tasks, the reference paths chosen, or
	 * no memory): entry i is tasks[by_key[i]], whose cr3 and start are key_cr3[i] and
	 * key_start[i]; sorted by (cr3, start, order).
	 */
	uint64_t *key_cr3, *key_start;
	size_t *by_key;
	bool indexed;                   /* the order, the index and the exits are up to date */
	bool reference;                 /* answer by the linear paths */
	uint64_t *probes;               /* work counter for tests, or NULL */
	uint64_t bad_lines, first_bad_line;
};

struct procmap *procmap__new(void)
{
	return calloc(1, sizeof(struct procmap));
}

int procmap__add(struct procmap *pm, int64_t pid, const char *name, uint64_t cr3,
		 uint64_t start)
{
	struct procmap_entry *e;
	char *copy;

	if (pm->nr == pm->alloc) {
		size_t alloc = pm->alloc ? pm->alloc * 2 : 16;

		e = realloc(pm->tasks, alloc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		pm->tasks = e;
		pm->alloc = alloc;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	e = &pm->tasks[pm->nr];
	memset(e, 0, sizeof(*e));
	e->task.pid = pid;
	e->task.name = copy;
	e->task.cr3 = cr3 & VBTS_CR3_MASK;
	e->task.start = start;
	e->order = pm->nr++;
	pm->indexed = false;
	return 0;
}

int procmap__add_exit(struct procmap *pm, int64_t pid, int64_t code, uint64_t time)
{
	if (pm->nr_exits == pm->alloc_exits) {
		size_t alloc = pm->alloc_exits ? pm->alloc_exits * 2 : 16;
		struct procmap_exit *e = realloc(pm->exits, alloc * sizeof(*e));

		if (!e)
			return -ENOMEM;
		pm->exits = e;
		pm->alloc_exits = alloc;
	}
	pm->exits[pm->nr_exits].pid = pid;
	pm->exits[pm->nr_exits].code = code;
	pm->exits[pm->nr_exits].time = time;
	pm->nr_exits++;
	pm->indexed = false;
	return 0;
}

static void note_bad(struct procmap *pm, uint64_t lineno)
{
	if (!pm->bad_lines++)
		pm->first_bad_line = lineno;
}

/* Returns 1 for a task line taken, 0 for a well-formed other event, -1 bad, -ENOMEM. */
static int parse_line(struct procmap *pm, const char *line)
{
	json_t *root, *v;
	const char *event, *name, *cr3s;
	unsigned long long cr3;
	json_int_t pid, time = 0;
	char *end;
	int ret = -1;

	root = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
	if (!root || !json_is_object(root))
		goto out;
	event = json_string_value(json_object_get(root, "event"));
	if (!event)
		goto out;
	v = json_object_get(root, "time");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			goto out;
		time = json_integer_value(v);
	}
	if (!strcmp(event, "exit")) {
		json_t *code = json_object_get(root, "code");

		v = json_object_get(root, "pid");
		if (!json_is_integer(v) || (code && !json_is_integer(code)))
			goto out;
		ret = procmap__add_exit(pm, json_integer_value(v),
					code ? json_integer_value(code) : 0,
					(uint64_t)time) ? -ENOMEM : 1;
		goto out;
	}
	if (strcmp(event, "task")) {
		ret = 0;
		goto out;
	}
	v = json_object_get(root, "pid");
	name = json_string_value(json_object_get(root, "name"));
	cr3s = json_string_value(json_object_get(root, "cr3"));
	if (!json_is_integer(v) || !name || !cr3s)
		goto out;
	pid = json_integer_value(v);
	errno = 0;
	cr3 = strtoull(cr3s, &end, 16);
	if (errno || end == cr3s || *end)
		goto out;
	ret = procmap__add(pm, pid, name, cr3, (uint64_t)time) ? -ENOMEM : 1;
out:
	json_decref(root);
	return ret;
}

int procmap__add_line(struct procmap *pm, char *line, size_t len, uint64_t lineno)
{
	int ret;

	if (len > PROCMAP_LINE_MAX || memchr(line, '\0', len)) {
		note_bad(pm, lineno);
		return 0;
	}
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len)
		return 0;
	ret = parse_line(pm, line);
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		note_bad(pm, lineno);
	return 0;
}

int procmap__load(struct procmap *pm, const char *path)
{
	struct input_lines *in;
	char *line;
	size_t len;
	int ret;

	in = input_lines__open(path, PROCMAP_LINE_MAX, PROCMAP_FILE_MAX, NULL, 0);
	if (!in)
		return -errno;
	while ((ret = input_lines__next(in, &line, &len)) != 0) {
		if (ret == -E2BIG) {
			note_bad(pm, input_lines__lineno(in));
			continue;
		}
		if (ret < 0)
			break;
		ret = procmap__add_line(pm, line, len, input_lines__lineno(in));
		if (ret)
			break;
	}
	input_lines__close(in);
	return ret;
}

/* ---- order and index ---------------------------------------------------------------------- */

static void add_probes(const struct procmap *pm, uint64_t probes)
{
	if (pm->probes)
		*pm->probes += probes;
}

/* Announcement order: (start, order added). */
static bool entry_before(const struct procmap_entry *a, const struct procmap_entry *b)
{
	if (a->task.start != b->task.start)
		return a->task.start < b->task.start;
	return a->order < b->order;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct procmap_entry *x = a, *y = b;

	return entry_before(x, y) ? -1 : entry_before(y, x);
}

/*
 * A task's search key and its position in the tasks array; the tasks are in announcement
 * order, so among equal keys the position orders them the same way.
 */
struct sort_key {
	uint64_t k1, k2;        /* (cr3, start), or (pid_key(pid), start) */
	size_t pos;
};

/* Pids as unsigned keys of the same order. */
static uint64_t pid_key(int64_t pid)
{
	return (uint64_t)pid ^ (1ULL << 63);
}

static int cmp_key(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The tasks' keys by (pid, start) or (cr3, start), sorted; NULL without tasks or memory. */
static struct sort_key *sorted_keys(const struct procmap *pm, bool by_pid)
{
	struct sort_key *keys;
	size_t i;

	if (!pm->nr)
		return NULL;
	keys = malloc(pm->nr * sizeof(*keys)); /* no overflow: smaller than the tasks array */
	if (!keys)
		return NULL;
	for (i = 0; i < pm->nr; i++) {
		const struct procmap_task *t = &pm->tasks[i].task;

		keys[i].k1 = by_pid ? pid_key(t->pid) : t->cr3;
		keys[i].k2 = t->start;
		keys[i].pos = i;
	}
	qsort(keys, pm->nr, sizeof(*keys), cmp_key);
	return keys;
}

/* Index of the first key greater than (k1, k2), counting the steps in *probes. */
static size_t upper_bound(const struct sort_key *keys, size_t n, uint64_t k1, uint64_t k2,
			  uint64_t *probes)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		(*probes)++;
		if (keys[mid].k1 < k1 || (keys[mid].k1 == k1 && keys[mid].k2 <= k2))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Reference: the task an exit ends, by a scan of every task. */
static struct procmap_entry *exit_task_ref(struct procmap *pm, const struct procmap_exit *x,
					   uint64_t *probes)
{
	struct procmap_entry *best = NULL;
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		struct procmap_entry *e = &pm->tasks[i];

		(*probes)++;
		if (e->task.pid != x->pid || e->task.start > x->time)
			continue;
		if (!best || entry_before(best, e))
			best = e;
	}
	return best;
}

/*
 * Each exit ends the task of its pid announced last at or before it (the later line on a
 * tie); of several exits of one task, the last in the file counts.
 */
static void apply_exits(struct procmap *pm, uint64_t *probes)
{
	struct sort_key *keys = pm->reference ? NULL : sorted_keys(pm, true);
	size_t i, j;

	for (i = 0; i < pm->nr; i++)
		pm->tasks[i].task.exited = false;
	for (j = 0; j < pm->nr_exits; j++) {
		const struct procmap_exit *x = &pm->exits[j];
		struct procmap_entry *e = NULL;

		if (keys) {
			i = upper_bound(keys, pm->nr, pid_key(x->pid), x->time, probes);
			if (i && keys[i - 1].k1 == pid_key(x->pid))
				e = &pm->tasks[keys[i - 1].pos];
		} else {
			e = exit_task_ref(pm, x, probes);
		}
		if (e) {
			e->task.exited = true;
			e->task.exit_code = x->code;
			e->task.exit_time = x->time;
		}
	}
	free(keys);
}

static void free_index(struct procmap *pm)
{
	free(pm->key_cr3);
	free(pm->key_start);
	free(pm->by_key);
	pm->key_cr3 = pm->key_start = NULL;
	pm->by_key = NULL;
}

/* The lookup index; without memory for it, lookups take the reference path. */
static void build_index(struct procmap *pm)
{
	struct sort_key *keys;
	size_t i;

	free_index(pm);
	if (pm->reference)
		return;
	keys = sorted_keys(pm, false);
	if (!keys)
		return;
	pm->key_cr3 = malloc(pm->nr * sizeof(*pm->key_cr3));
	pm->key_start = malloc(pm->nr * sizeof(*pm->key_start));
	pm->by_key = malloc(pm->nr * sizeof(*pm->by_key));
	if (!pm->key_cr3 || !pm->key_start || !pm->by_key) {
		free_index(pm);
		free(keys);
		return;
	}
	for (i = 0; i < pm->nr; i++) {
		pm->key_cr3[i] = keys[i].k1;
		pm->key_start[i] = keys[i].k2;
		pm->by_key[i] = keys[i].pos;
	}
	free(keys);
}

/* Deferred to the first query; a const query reorders a logically unchanged map. */
static void ensure_indexed(const struct procmap *cpm)
{
	struct procmap *pm = (struct procmap *)cpm;
	uint64_t probes = 0;

	if (pm->indexed)
		return;
	if (pm->nr > 1) /* an empty map has no array: qsort() must not see its NULL */
		qsort(pm->tasks, pm->nr, sizeof(*pm->tasks), cmp_entry);
	build_index(pm);
	apply_exits(pm, &probes);
	add_probes(pm, probes);
	pm->indexed = true;
}

/* ---- queries ------------------------------------------------------------------------------ */

/* Reference: a scan of every task. */
static const struct procmap_task *lookup_ref(const struct procmap *pm, uint64_t cr3,
					     uint64_t time, bool time_valid, uint64_t *probes)
{
	const struct procmap_entry *first = NULL, *best = NULL;
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		const struct procmap_entry *e = &pm->tasks[i];

		(*probes)++;
		if (e->task.cr3 != cr3)
			continue;
		if (!first || entry_before(e, first))
			first = e;
		if (time_valid && e->task.start <= time && (!best || entry_before(best, e)))
			best = e;
	}
	if (best)
		return &best->task;
	return first ? &first->task : NULL;
}

/* Two binary searches over the index keys. */
static const struct procmap_task *lookup_indexed(const struct procmap *pm, uint64_t cr3,
						 uint64_t time, bool time_valid,
						 uint64_t *probes)
{
	const uint64_t *kc = pm->key_cr3, *ks = pm->key_start;
	size_t lo = 0, hi = pm->nr, first;

	/* The first (earliest) task of @cr3. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		(*probes)++;
		if (kc[mid] < cr3)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == pm->nr || kc[lo] != cr3)
		return NULL;
	first = lo;
	if (time_valid) {
		/* The tasks of @cr3 announced at or before @time are a prefix of [first, nr). */
		hi = pm->nr;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			(*probes)++;
			if (kc[mid] == cr3 && ks[mid] <= time)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > first)
			first = lo - 1;
	}
	return &pm->tasks[pm->by_key[first]].task;
}

const struct procmap_task *procmap__lookup(const struct procmap *pm, uint64_t cr3,
					   uint64_t time, bool time_valid)
{
	const struct procmap_task *t;
	uint64_t probes = 0;

	ensure_indexed(pm);
	cr3 &= VBTS_CR3_MASK;
	if (pm->key_cr3)
		t = lookup_indexed(pm, cr3, time, time_valid, &probes);
	else
		t = lookup_ref(pm, cr3, time, time_valid, &probes);
	add_probes(pm, probes);
	return t;
}

const struct procmap_task *procmap__find(const struct procmap *pm, const char *key)
{
	char *end;
	long long pid;
	size_t i;

	ensure_indexed(pm);
	errno = 0;
	pid = strtoll(key, &end, 10);
	if (!errno && end != key && !*end) {
		for (i = 0; i < pm->nr; i++)
			if (pm->tasks[i].task.pid == pid)
				return &pm->tasks[i].task;
	}
	for (i = 0; i < pm->nr; i++)
		if (!strcmp(pm->tasks[i].task.name, key))
			return &pm->tasks[i].task;
	return NULL;
}

const struct procmap_task *procmap__crashed(const struct procmap *pm)
{
	const struct procmap_task *best = NULL;
	size_t i;

	ensure_indexed(pm);
	for (i = 0; i < pm->nr; i++) {
		const struct procmap_task *t = &pm->tasks[i].task;

		if (t->exited && t->exit_code >= 128 && (!best || t->exit_time >= best->exit_time))
			best = t;
	}
	return best;
}

void procmap__count_probes(struct procmap *pm, uint64_t *probes)
{
	pm->probes = probes;
}

void procmap__use_reference(struct procmap *pm, bool reference)
{
	if (pm->reference != reference) {
		pm->reference = reference;
		pm->indexed = false;
	}
}

size_t procmap__nr_tasks(const struct procmap *pm)
{
	return pm->nr;
}

const struct procmap_task *procmap__task(const struct procmap *pm, size_t i)
{
	ensure_indexed(pm);
	return &pm->tasks[i].task;
}

uint64_t procmap__bad_lines(const struct procmap *pm, uint64_t *first_line)
{
	if (first_line)
		*first_line = pm->first_bad_line;
	return pm->bad_lines;
}

void procmap__free(struct procmap *pm)
{
	size_t i;

	if (!pm)
		return;
	for (i = 0; i < pm->nr; i++)
		free((char *)pm->tasks[i].task.name);
	free(pm->tasks);
	free(pm->exits);
	free_index(pm);
	free(pm);
}
