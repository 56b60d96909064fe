// SPDX-License-Identifier: GPL-2.0
/*
 * procmap.c - CR3 (+ time) -> guest task, from the task events of events.jsonl.
 *
 * Tasks are kept in an array sorted by (cr3, start); a lookup is a binary search for the cr3
 * and then for the last announcement not after the time. Exit events are kept apart and
 * attached to their tasks when the array is sorted.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "procmap.h"

/* Longest line accepted; the VMM bounds the lines it writes far below this. */
#define PROCMAP_LINE_MAX 4096

struct procmap_exit {
	int64_t pid, code;
	uint64_t time;
};

struct procmap {
	struct procmap_task *tasks;     /* sorted by (cr3, start) */
	size_t nr, alloc;
	struct procmap_exit *exits;     /* applied to the tasks when sorting */
	size_t nr_exits, alloc_exits;
	struct procmap_task **by_time;  /* the same tasks in announcement order, built lazily */
	bool sorted;
	uint64_t bad_lines, first_bad_line;
};

struct procmap *procmap__new(void)
{
	return calloc(1, sizeof(struct procmap));
}

int procmap__add(struct procmap *pm, int64_t pid, const char *name, uint64_t cr3,
		 uint64_t start)
{
	struct procmap_task *t;
	char *copy;

	if (pm->nr == pm->alloc) {
		size_t alloc = pm->alloc ? pm->alloc * 2 : 16;

		t = realloc(pm->tasks, alloc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		pm->tasks = t;
		pm->alloc = alloc;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	t = &pm->tasks[pm->nr++];
	t->pid = pid;
	t->name = copy;
	t->cr3 = cr3 & VBTS_CR3_MASK;
	t->start = start;
	pm->sorted = false;
	return 0;
}

static int add_exit(struct procmap *pm, int64_t pid, int64_t code, uint64_t time)
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
	pm->sorted = false;
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
		ret = add_exit(pm, json_integer_value(v), code ? json_integer_value(code) : 0,
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

int procmap__load(struct procmap *pm, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len > PROCMAP_LINE_MAX || memchr(line, '\0', (size_t)len)) {
			note_bad(pm, lineno);
			continue;
		}
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		ret = parse_line(pm, line);
		if (ret == -ENOMEM)
			break;
		if (ret < 0)
			note_bad(pm, lineno);
		ret = 0;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	return ret;
}

static int cmp_cr3_start(const void *a, const void *b)
{
	const struct procmap_task *x = a, *y = b;

	if (x->cr3 != y->cr3)
		return x->cr3 < y->cr3 ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap_task *x = *(const struct procmap_task *const *)a;
	const struct procmap_task *y = *(const struct procmap_task *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Each exit ends the task with its pid announced last before it. */
static void apply_exits(struct procmap *pm)
{
	size_t i, j;

	for (i = 0; i < pm->nr; i++)
		pm->tasks[i].exited = false;
	for (j = 0; j < pm->nr_exits; j++) {
		const struct procmap_exit *e = &pm->exits[j];
		struct procmap_task *best = NULL;

		for (i = 0; i < pm->nr; i++) {
			struct procmap_task *t = &pm->tasks[i];

			if (t->pid != e->pid || t->start > e->time)
				continue;
			if (!best || t->start >= best->start)
				best = t;
		}
		if (best) {
			best->exited = true;
			best->exit_code = e->code;
			best->exit_time = e->time;
		}
	}
}

/* Sorting is deferred to the first query; a const query sorts a logically unchanged map. */
static void ensure_sorted(const struct procmap *cpm)
{
	struct procmap *pm = (struct procmap *)cpm;
	struct procmap_task **bt;
	size_t i;

	if (pm->sorted)
		return;
	if (pm->nr > 1) /* an empty map has no array: qsort() must not see its NULL */
		qsort(pm->tasks, pm->nr, sizeof(*pm->tasks), cmp_cr3_start);
	apply_exits(pm);
	free(pm->by_time);
	pm->by_time = NULL;
	bt = malloc((pm->nr ? pm->nr : 1) * sizeof(*bt));
	if (bt) {
		for (i = 0; i < pm->nr; i++)
			bt[i] = &pm->tasks[i];
		if (pm->nr > 1)
			qsort(bt, pm->nr, sizeof(*bt), cmp_start);
		pm->by_time = bt;
	}
	pm->sorted = true;
}

const struct procmap_task *procmap__lookup(const struct procmap *pm, uint64_t cr3,
					   uint64_t time, bool time_valid)
{
	size_t lo = 0, hi, first, best;

	ensure_sorted(pm);
	cr3 &= VBTS_CR3_MASK;
	hi = pm->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->tasks[mid].cr3 < cr3)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == pm->nr || pm->tasks[lo].cr3 != cr3)
		return NULL;
	first = best = lo;
	if (!time_valid)
		return &pm->tasks[first];
	for (; lo < pm->nr && pm->tasks[lo].cr3 == cr3 && pm->tasks[lo].start <= time; lo++)
		best = lo;
	return &pm->tasks[best];
}

const struct procmap_task *procmap__find(const struct procmap *pm, const char *key)
{
	char *end;
	long long pid;
	size_t i;

	ensure_sorted(pm);
	errno = 0;
	pid = strtoll(key, &end, 10);
	if (!errno && end != key && !*end) {
		for (i = 0; i < pm->nr; i++)
			if (procmap__task(pm, i)->pid == pid)
				return procmap__task(pm, i);
	}
	for (i = 0; i < pm->nr; i++)
		if (!strcmp(procmap__task(pm, i)->name, key))
			return procmap__task(pm, i);
	return NULL;
}

const struct procmap_task *procmap__crashed(const struct procmap *pm)
{
	const struct procmap_task *best = NULL;
	size_t i;

	ensure_sorted(pm);
	for (i = 0; i < pm->nr; i++) {
		const struct procmap_task *t = &pm->tasks[i];

		if (t->exited && t->exit_code >= 128 && (!best || t->exit_time >= best->exit_time))
			best = t;
	}
	return best;
}

size_t procmap__nr_tasks(const struct procmap *pm)
{
	return pm->nr;
}

const struct procmap_task *procmap__task(const struct procmap *pm, size_t i)
{
	ensure_sorted(pm);
	return pm->by_time ? pm->by_time[i] : &pm->tasks[i];
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
		free((char *)pm->tasks[i].name);
	free(pm->tasks);
	free(pm->exits);
	free(pm->by_time);
	free(pm);
}
