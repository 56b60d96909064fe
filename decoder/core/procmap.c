// SPDX-License-Identifier: GPL-2.0
/*
 * procmap.c - CR3 (+ time) -> guest task, from the task events of events.jsonl.
 *
 * The guest writes events.jsonl, so a map may hold hundreds of thousands of tasks and exits,
 * and a trace as many records to look up: every lookup is a binary search. The first query
 * after a change sorts the tasks into announcement order, (start, order added), the order
 * added breaking ties (the line of the file), the thread announcements after all of them in
 * the same order, and builds an index of the tasks alone sorted by (cr3, start, order) whose
 * keys are kept apart (struct of arrays: a search reads only the keys). Then each thread
 * announcement's CR3 owner is looked up there (one of the owner's pid is ignored). Exit
 * events are kept apart and matched to their announcements through an index of every
 * announcement not ignored by (pid, start, order), kept for procmap__lookup_thread() when
 * there are thread announcements.
 *
 * Processes are numbered in the same pass, through the same index by pid: an announcement
 * starts a process when its pid's previous one exited.
 *
 * Each query also has a plain linear path, the reference the indexed one is tested against
 * (procmap-int.h); it also answers when there is no memory for the index.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "events.h"
#include "procmap-int.h"
#include "symbols.h"
#include "trace-keys.h"

struct procmap_exit {
	int64_t pid, code;
	uint64_t time;
};

/*
 * A task and the order it was added in (its line in events.jsonl): @task is handed out. A
 * thread announcement's @ignored and, when it is, @owner (the position of its CR3's task) are
 * set by the indexing.
 */
struct procmap_entry {
	struct procmap_task task;
	size_t order;
	size_t owner;
	bool ignored;
};

/*
 * A task's search key and its position in the tasks array; among equal keys the order added
 * decides, as in announcement order.
 */
struct sort_key {
	uint64_t k1, k2;        /* (cr3, start), or (pid_key(pid), start) */
	size_t order;
	size_t pos;
};

struct procmap {
	/*
	 * Sorted while @indexed: the tasks by (start, order), then the @nr_threads thread
	 * announcements by (start, order).
	 */
	struct procmap_entry *tasks;
	size_t nr, alloc, nr_threads;
	struct procmap_exit *exits;     /* in file order; later ones win */
	size_t nr_exits, alloc_exits;
	/*
	 * The lookup index, an entry per task (thread announcements left out), or NULL (no
	 * tasks, the reference paths chosen, or no memory): entry i is tasks[by_key[i]], whose
	 * cr3 and start are key_cr3[i] and key_start[i]; sorted by (cr3, start, order).
	 */
	uint64_t *key_cr3, *key_start;
	size_t *by_key;
	/*
	 * The thread lookup index: the @nr_pid_keys announcements not ignored by (pid, start,
	 * order), or NULL (no thread announcements, the reference paths chosen, or no memory).
	 */
	struct sort_key *pid_keys;
	size_t nr_pid_keys;
	size_t nr_processes;
	bool indexed;                   /* order, index, exits and processes up to date */
	bool reference;                 /* answer by the linear paths */
	uint64_t *probes;               /* work counter for tests, or NULL */
	uint64_t bad_lines, first_bad_line;
};

struct procmap *procmap__new(void)
{
	return calloc(1, sizeof(struct procmap));
}

/* The tasks are tasks[0, nr_tasks_of()), the thread announcements the rest. */
static size_t nr_tasks_of(const struct procmap *pm)
{
	return pm->nr - pm->nr_threads;
}

static void free_task_strings(struct procmap_task *t)
{
	free((char *)t->name);
	free((char *)t->build_id);
	free((char *)t->exe);
}

/* A copy of @s, or NULL when @s is NULL; *@failed set when there is no memory for it. */
static char *copy_optional(const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = strdup(s);
	if (!copy)
		*failed = true;
	return copy;
}

int procmap__add_task(struct procmap *pm, const struct procmap_task *t)
{
	struct procmap_entry *e;
	struct procmap_task copy = { 0 };
	bool failed = false;

	if (pm->nr == pm->alloc) {
		size_t alloc = pm->alloc ? pm->alloc * 2 : 16;

		e = realloc(pm->tasks, alloc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		pm->tasks = e;
		pm->alloc = alloc;
	}
	copy.name = copy_optional(t->name, &failed);
	copy.build_id = copy_optional(t->build_id, &failed);
	copy.exe = copy_optional(t->exe, &failed);
	if (failed || !copy.name) {
		free_task_strings(&copy);
		return -ENOMEM;
	}
	for (char *c = (char *)copy.build_id; c && *c; c++)
		*c = (char)tolower((unsigned char)*c);
	copy.pid = t->pid;
	copy.cr3 = t->cr3 & VBTS_CR3_MASK;
	copy.start = t->start;
	copy.tgid = t->tgid_valid ? t->tgid : 0;
	copy.tgid_valid = t->tgid_valid;
	copy.ppid = t->ppid_valid ? t->ppid : 0;
	copy.ppid_valid = t->ppid_valid;
	copy.exec = t->exec;
	copy.load_base = t->load_base_valid ? t->load_base : 0;
	copy.load_base_valid = t->load_base_valid;
	copy.thread = t->thread;
	e = &pm->tasks[pm->nr];
	memset(e, 0, sizeof(*e));
	e->task = copy;
	e->order = pm->nr++;
	pm->nr_threads += copy.thread;
	pm->indexed = false;
	return 0;
}

int procmap__add(struct procmap *pm, int64_t pid, const char *name, uint64_t cr3,
		 uint64_t start)
{
	struct procmap_task t = { .pid = pid, .name = name, .cr3 = cr3, .start = start };

	return procmap__add_task(pm, &t);
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

/* A hex string "0x..." (as CR3s are written) or a non-negative integer. */
static int parse_address(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!s || !isxdigit((unsigned char)s[s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 2 : 0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

/* The members of a task, thread or exec event; -1 when one is missing or bad. */
static int parse_task(json_t *root, bool exec, struct procmap_task *t)
{
	json_t *pid = json_object_get(root, EVENTS_KEY_PID);
	json_t *tgid = json_object_get(root, EVENTS_KEY_TGID);
	json_t *ppid = json_object_get(root, EVENTS_KEY_PPID);
	json_t *build_id = json_object_get(root, EVENTS_KEY_BUILD_ID);
	json_t *exe = json_object_get(root, EVENTS_KEY_EXE);
	json_t *load_base = json_object_get(root, EVENTS_KEY_LOAD_BASE);
	const char *cr3s;
	char *end;

	t->name = json_string_value(json_object_get(root, EVENTS_KEY_NAME));
	cr3s = json_string_value(json_object_get(root, EVENTS_KEY_CR3));
	if (!json_is_integer(pid) || !t->name || !cr3s)
		return -1;
	t->pid = json_integer_value(pid);
	errno = 0;
	t->cr3 = strtoull(cr3s, &end, 16);
	if (errno || end == cr3s || *end)
		return -1;
	if (tgid) {
		if (!json_is_integer(tgid))
			return -1;
		t->tgid = json_integer_value(tgid);
		t->tgid_valid = true;
	}
	if (ppid) {
		if (!json_is_integer(ppid))
			return -1;
		t->ppid = json_integer_value(ppid);
		t->ppid_valid = true;
	}
	t->exec = exec;
	if (!exec)
		return build_id || exe || load_base ? -1 : 0;
	if (build_id) {
		t->build_id = json_string_value(build_id);
		if (!t->build_id || !symbols__build_id_valid(t->build_id))
			return -1;
	}
	if (exe) {
		t->exe = json_string_value(exe);
		if (!t->exe || !t->exe[0])
			return -1;
	}
	if (load_base) {
		if (parse_address(load_base, &t->load_base))
			return -1;
		t->load_base_valid = true;
	}
	return 0;
}

/* Returns 1 for a task event taken, 0 for a well-formed other event, -1 bad, -ENOMEM. */
static int parse_event(struct procmap *pm, const char *event, json_t *root)
{
	struct procmap_task t = { 0 };
	json_int_t time = 0;
	json_t *v;

	v = json_object_get(root, EVENTS_KEY_TIME);
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return -1;
		time = json_integer_value(v);
	}
	if (!strcmp(event, EVENT_EXIT)) {
		json_t *code = json_object_get(root, EVENTS_KEY_CODE);

		v = json_object_get(root, EVENTS_KEY_PID);
		if (!json_is_integer(v) || (code && !json_is_integer(code)))
			return -1;
		return procmap__add_exit(pm, json_integer_value(v),
					 code ? json_integer_value(code) : 0,
					 (uint64_t)time) ? -ENOMEM : 1;
	}
	if (strcmp(event, EVENT_TASK) && strcmp(event, EVENT_EXEC) && strcmp(event, EVENT_THREAD))
		return 0;
	if (parse_task(root, !strcmp(event, EVENT_EXEC), &t))
		return -1;
	t.thread = !strcmp(event, EVENT_THREAD);
	t.start = (uint64_t)time;
	return procmap__add_task(pm, &t) ? -ENOMEM : 1;
}

int procmap__add_event(struct procmap *pm, const char *event, json_t *obj, uint64_t lineno)
{
	int ret = event ? parse_event(pm, event, obj) : -1;

	if (ret == -ENOMEM)
		return ret;
	if (ret < 0)
		note_bad(pm, lineno);
	return 0;
}

static int take_event(void *ctx, const char *event, json_t *obj, uint64_t lineno)
{
	return procmap__add_event(ctx, event, obj, lineno);
}

static void take_too_long(void *ctx, uint64_t lineno)
{
	note_bad(ctx, lineno);
}

static const struct events_ops procmap_events = {
	.event = take_event,
	.too_long = take_too_long,
};

int procmap__add_line(struct procmap *pm, char *line, size_t len, uint64_t lineno)
{
	return events__parse_line(line, len, lineno, &procmap_events, pm);
}

int procmap__load(struct procmap *pm, const char *path)
{
	return events__load(path, &procmap_events, pm, NULL, 0);
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

/* Storage order: the tasks, then the thread announcements, each in announcement order. */
static int cmp_entry(const void *a, const void *b)
{
	const struct procmap_entry *x = a, *y = b;

	if (x->task.thread != y->task.thread)
		return x->task.thread ? 1 : -1;
	return entry_before(x, y) ? -1 : entry_before(y, x);
}

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
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Sorted keys: by (pid, start) of every announcement not ignored, or by (cr3, start) of the
 * tasks; their count in *@n. NULL without any or without memory.
 */
static struct sort_key *sorted_keys(const struct procmap *pm, bool by_pid, size_t *n)
{
	size_t i, end = by_pid ? pm->nr : nr_tasks_of(pm);
	struct sort_key *keys;

	*n = 0;
	if (!end)
		return NULL;
	keys = malloc(end * sizeof(*keys)); /* no overflow: smaller than the tasks array */
	if (!keys)
		return NULL;
	for (i = 0; i < end; i++) {
		const struct procmap_entry *e = &pm->tasks[i];

		if (e->ignored)
			continue;
		keys[*n].k1 = by_pid ? pid_key(e->task.pid) : e->task.cr3;
		keys[*n].k2 = e->task.start;
		keys[*n].order = e->order;
		keys[*n].pos = i;
		(*n)++;
	}
	if (!*n) {
		free(keys);
		return NULL;
	}
	qsort(keys, *n, sizeof(*keys), cmp_key);
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

/* Index of the first key of k1 @k1 or greater, counting the steps in *probes. */
static size_t lower_bound(const struct sort_key *keys, size_t n, uint64_t k1, uint64_t *probes)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		(*probes)++;
		if (keys[mid].k1 < k1)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Reference: the task an exit ends, by a scan of every announcement. */
static struct procmap_entry *exit_task_ref(struct procmap *pm, const struct procmap_exit *x,
					   uint64_t *probes)
{
	struct procmap_entry *best = NULL;
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		struct procmap_entry *e = &pm->tasks[i];

		(*probes)++;
		if (e->ignored || e->task.pid != x->pid || e->task.start > x->time)
			continue;
		if (!best || entry_before(best, e))
			best = e;
	}
	return best;
}

/*
 * Each exit ends the task of its pid announced last at or before it (the later line on a
 * tie), thread announcements included, ignored ones not; of several exits of one task, the
 * last in the file counts. @keys: the @n keys by pid, or NULL for the reference path.
 */
static void apply_exits(struct procmap *pm, const struct sort_key *keys, size_t n,
			uint64_t *probes)
{
	size_t i, j;

	for (i = 0; i < pm->nr; i++)
		pm->tasks[i].task.exited = false;
	for (j = 0; j < pm->nr_exits; j++) {
		const struct procmap_exit *x = &pm->exits[j];
		struct procmap_entry *e = NULL;

		if (keys) {
			i = upper_bound(keys, n, pid_key(x->pid), x->time, probes);
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
}

/*
 * Whether @e continues the process of @prev, the announcement of its pid before it: not
 * after an exit, nor, when either is a thread announcement, with another tgid (another task
 * that reused the pid of a thread, whose end no exit event tells).
 */
static bool continues(const struct procmap_entry *prev, const struct procmap_entry *e)
{
	const struct procmap_task *p = &prev->task, *t = &e->task;

	if (p->exited)
		return false;
	if (!p->thread && !t->thread)
		return true;
	return p->tgid_valid == t->tgid_valid && p->tgid == t->tgid;
}

/*
 * Reference: the announcement of @e's pid before it, not ignored: the latest one of the tasks
 * [0, @tasks_end) and of the thread announcements [nr_tasks_of(), @threads_end), which hold
 * those announced before @e (and @e, which is skipped).
 */
static const struct procmap_entry *previous_ref(const struct procmap *pm,
						const struct procmap_entry *e, size_t tasks_end,
						size_t threads_end, uint64_t *probes)
{
	const struct procmap_entry *found[2] = { NULL, NULL };
	size_t ends[2][2] = { { 0, tasks_end }, { nr_tasks_of(pm), threads_end } };

	for (int s = 0; s < 2; s++) {
		for (size_t j = ends[s][1]; j-- > ends[s][0];) {
			const struct procmap_entry *c = &pm->tasks[j];

			(*probes)++;
			if (c != e && !c->ignored && c->task.pid == e->task.pid) {
				found[s] = c;
				break;
			}
		}
	}
	if (!found[0] || (found[1] && entry_before(found[0], found[1])))
		return found[1];
	return found[0];
}

/*
 * Numbers the processes in the order of their first announcement, the tasks' and the thread
 * announcements' merged: an announcement continues the process of its pid's previous one
 * unless continues() says otherwise. @keys: the @n announcements by (pid, start, order), or
 * NULL for the reference path, which looks for the previous announcement of each pid by a
 * scan. An ignored thread announcement gets its owner's process.
 */
static int number_processes(struct procmap *pm, const struct sort_key *keys, size_t n,
			    uint64_t *probes)
{
	size_t nt = nr_tasks_of(pm), a = 0, b = nt, *head = NULL, i, k;

	pm->nr_processes = 0;
	if (keys) {
		/* head[i]: the position of the first announcement of task i's process. */
		head = malloc(pm->nr * sizeof(*head));
		if (!head)
			return -ENOMEM;
		for (k = 0; k < n; k++) {
			(*probes)++;
			if (k && keys[k - 1].k1 == keys[k].k1 &&
			    continues(&pm->tasks[keys[k - 1].pos], &pm->tasks[keys[k].pos]))
				head[keys[k].pos] = head[keys[k - 1].pos];
			else
				head[keys[k].pos] = keys[k].pos;
		}
	}
	for (k = 0; k < pm->nr; k++) {
		struct procmap_entry *e;
		const struct procmap_entry *prev = NULL;

		/* The next one in announcement order. */
		if (b == pm->nr || (a < nt && entry_before(&pm->tasks[a], &pm->tasks[b])))
			i = a++;
		else
			i = b++;
		e = &pm->tasks[i];
		if (e->ignored)
			continue;
		if (head) {
			if (head[i] != i)
				prev = &pm->tasks[head[i]];
		} else {
			prev = previous_ref(pm, e, a, b, probes);
			if (prev && !continues(prev, e))
				prev = NULL;
		}
		e->task.process = prev ? prev->task.process : pm->nr_processes++;
	}
	for (i = nt; i < pm->nr; i++) {
		struct procmap_entry *e = &pm->tasks[i];

		if (e->ignored)
			e->task.process = pm->tasks[e->owner].task.process;
	}
	free(head);
	return 0;
}

static void free_index(struct procmap *pm)
{
	free(pm->key_cr3);
	free(pm->key_start);
	free(pm->by_key);
	free(pm->pid_keys);
	pm->key_cr3 = pm->key_start = NULL;
	pm->by_key = NULL;
	pm->pid_keys = NULL;
	pm->nr_pid_keys = 0;
}

/* The lookup index; without memory for it, lookups take the reference path. */
static void build_index(struct procmap *pm)
{
	struct sort_key *keys;
	size_t i, n;

	free_index(pm);
	if (pm->reference)
		return;
	keys = sorted_keys(pm, false, &n);
	if (!keys)
		return;
	pm->key_cr3 = malloc(n * sizeof(*pm->key_cr3));
	pm->key_start = malloc(n * sizeof(*pm->key_start));
	pm->by_key = malloc(n * sizeof(*pm->by_key));
	if (!pm->key_cr3 || !pm->key_start || !pm->by_key) {
		free_index(pm);
		free(keys);
		return;
	}
	for (i = 0; i < n; i++) {
		pm->key_cr3[i] = keys[i].k1;
		pm->key_start[i] = keys[i].k2;
		pm->by_key[i] = keys[i].pos;
	}
	free(keys);
}

/* ---- queries ------------------------------------------------------------------------------ */

/* Reference: a scan of every task. */
static const struct procmap_task *lookup_ref(const struct procmap *pm, uint64_t cr3,
					     uint64_t time, bool time_valid, uint64_t *probes)
{
	const struct procmap_entry *first = NULL, *best = NULL;
	size_t i;

	for (i = 0; i < nr_tasks_of(pm); i++) {
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
	size_t nt = nr_tasks_of(pm), lo = 0, hi = nt, first;

	/* The first (earliest) task of @cr3. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		(*probes)++;
		if (kc[mid] < cr3)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nt || kc[lo] != cr3)
		return NULL;
	first = lo;
	if (time_valid) {
		/* The tasks of @cr3 announced at or before @time are a prefix of [first, nt). */
		hi = nt;
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

/* The task that owns @cr3 at @time: the index, or without it the reference path. */
static const struct procmap_task *lookup_cr3(const struct procmap *pm, uint64_t cr3,
					     uint64_t time, bool time_valid, uint64_t *probes)
{
	if (pm->key_cr3)
		return lookup_indexed(pm, cr3, time, time_valid, probes);
	return lookup_ref(pm, cr3, time, time_valid, probes);
}

/*
 * The CR3 owner of each thread announcement, the task procmap__lookup() gives at its time:
 * one of the owner's own pid is ignored.
 */
static void find_owners(struct procmap *pm, uint64_t *probes)
{
	for (size_t i = nr_tasks_of(pm); i < pm->nr; i++) {
		struct procmap_entry *e = &pm->tasks[i];
		const struct procmap_task *owner;

		owner = lookup_cr3(pm, e->task.cr3, e->task.start, true, probes);
		e->owner = owner ? owner->index : 0;
		e->ignored = owner && owner->pid == e->task.pid;
	}
}

/* Deferred to the first query; a const query reorders a logically unchanged map. */
static void ensure_indexed(const struct procmap *cpm)
{
	struct procmap *pm = (struct procmap *)cpm;
	uint64_t probes = 0;
	struct sort_key *keys;
	size_t i, n = 0;

	if (pm->indexed)
		return;
	if (pm->nr > 1) /* an empty map has no array: qsort() must not see its NULL */
		qsort(pm->tasks, pm->nr, sizeof(*pm->tasks), cmp_entry);
	for (i = 0; i < pm->nr; i++) {
		pm->tasks[i].task.index = pm->tasks[i].task.thread ? i - nr_tasks_of(pm) : i;
		pm->tasks[i].ignored = false;
	}
	build_index(pm);
	find_owners(pm, &probes);
	keys = pm->reference ? NULL : sorted_keys(pm, true, &n);
	apply_exits(pm, keys, n, &probes);
	if (number_processes(pm, keys, n, &probes))
		number_processes(pm, NULL, 0, &probes); /* no memory: the linear path */
	if (keys && pm->nr_threads) {
		pm->pid_keys = keys;
		pm->nr_pid_keys = n;
	} else {
		free(keys);
	}
	add_probes(pm, probes);
	pm->indexed = true;
}

const struct procmap_task *procmap__lookup(const struct procmap *pm, uint64_t cr3,
					   uint64_t time, bool time_valid)
{
	const struct procmap_task *t;
	uint64_t probes = 0;

	ensure_indexed(pm);
	t = lookup_cr3(pm, cr3 & VBTS_CR3_MASK, time, time_valid, &probes);
	add_probes(pm, probes);
	return t;
}

/* Reference: the announcement of @pid procmap__lookup_thread() examines, by a scan. */
static const struct procmap_entry *thread_ref(const struct procmap *pm, int64_t pid,
					      uint64_t time, bool time_valid, uint64_t *probes)
{
	const struct procmap_entry *first = NULL, *best = NULL;
	size_t i;

	for (i = 0; i < pm->nr; i++) {
		const struct procmap_entry *e = &pm->tasks[i];

		(*probes)++;
		if (e->ignored || e->task.pid != pid)
			continue;
		if (!first || entry_before(e, first))
			first = e;
		if (time_valid && e->task.start <= time && (!best || entry_before(best, e)))
			best = e;
	}
	return best ? best : first;
}

/* The same by two binary searches over the keys by pid. */
static const struct procmap_entry *thread_indexed(const struct procmap *pm, int64_t pid,
						  uint64_t time, bool time_valid,
						  uint64_t *probes)
{
	const struct sort_key *keys = pm->pid_keys;
	size_t n = pm->nr_pid_keys, first, i;

	first = lower_bound(keys, n, pid_key(pid), probes);
	if (first == n || keys[first].k1 != pid_key(pid))
		return NULL;
	if (time_valid) {
		i = upper_bound(keys, n, pid_key(pid), time, probes);
		if (i > first)
			first = i - 1;
	}
	return &pm->tasks[keys[first].pos];
}

const struct procmap_task *procmap__lookup_thread(const struct procmap *pm, int64_t pid,
						  int64_t tgid, uint64_t time, bool time_valid)
{
	const struct procmap_entry *e;
	uint64_t probes = 0;

	ensure_indexed(pm);
	if (!pm->nr_threads)
		return NULL;
	if (pm->pid_keys)
		e = thread_indexed(pm, pid, time, time_valid, &probes);
	else
		e = thread_ref(pm, pid, time, time_valid, &probes);
	add_probes(pm, probes);
	if (!e || !e->task.thread || (e->task.tgid_valid && e->task.tgid != tgid))
		return NULL;
	if (time_valid && e->task.exited && e->task.exit_time < time)
		return NULL;
	return &e->task;
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
			if (!pm->tasks[i].ignored && pm->tasks[i].task.pid == pid)
				return &pm->tasks[i].task;
	}
	for (i = 0; i < pm->nr; i++)
		if (!pm->tasks[i].ignored && !strcmp(pm->tasks[i].task.name, key))
			return &pm->tasks[i].task;
	return NULL;
}

/* The name of @t is @key, or for a Linux task what the kernel kept of it. */
static bool name_matches(const struct procmap_task *t, const char *key)
{
	if (!strcmp(t->name, key))
		return true;
	return t->tgid_valid && strlen(t->name) == PROCMAP_COMM_LEN &&
	       strlen(key) > PROCMAP_COMM_LEN && !strncmp(t->name, key, PROCMAP_COMM_LEN);
}

size_t procmap__nr_processes(const struct procmap *pm)
{
	ensure_indexed(pm);
	return pm->nr_processes;
}

size_t procmap__select(const struct procmap *pm, const char *key, bool *selected)
{
	size_t i, n = 0;
	bool *seen;
	char *end;
	long long pid = 0;
	bool numeric;

	ensure_indexed(pm);
	errno = 0;
	if (*key)
		pid = strtoll(key, &end, 10);
	numeric = *key && !errno && !*end;
	/* Counted once per process: the flags of the call mark the ones seen. */
	seen = calloc(pm->nr_processes ? pm->nr_processes : 1, sizeof(*seen));
	for (int pass = numeric ? 0 : 1; pass < 2 && !n; pass++) {
		for (i = 0; i < pm->nr; i++) {
			const struct procmap_task *t = &pm->tasks[i].task;
			bool match = pass ? name_matches(t, key) :
					    t->pid == pid || (t->tgid_valid && t->tgid == pid);

			if (!match || pm->tasks[i].ignored)
				continue;
			selected[t->process] = true;
			if (!seen) {
				/* No memory to count exactly: at least one. */
				n = 1;
				continue;
			}
			if (!seen[t->process]) {
				seen[t->process] = true;
				n++;
			}
		}
	}
	free(seen);
	return n;
}

const struct procmap_task *procmap__crashed(const struct procmap *pm)
{
	const struct procmap_entry *best = NULL;
	size_t i;

	ensure_indexed(pm);
	for (i = 0; i < pm->nr; i++) {
		const struct procmap_entry *e = &pm->tasks[i];
		const struct procmap_task *t = &e->task;

		if (!t->exited || t->exit_code < 128)
			continue;
		/* On a tie, the one announced last (an ignored one never exits). */
		if (!best || t->exit_time > best->task.exit_time ||
		    (t->exit_time == best->task.exit_time && entry_before(best, e)))
			best = e;
	}
	return best ? &best->task : NULL;
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
	return nr_tasks_of(pm);
}

const struct procmap_task *procmap__task(const struct procmap *pm, size_t i)
{
	ensure_indexed(pm);
	return &pm->tasks[i].task;
}

size_t procmap__nr_threads(const struct procmap *pm)
{
	return pm->nr_threads;
}

const struct procmap_task *procmap__thread(const struct procmap *pm, size_t i)
{
	ensure_indexed(pm);
	return &pm->tasks[nr_tasks_of(pm) + i].task;
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
		free_task_strings(&pm->tasks[i].task);
	free(pm->tasks);
	free(pm->exits);
	free_index(pm);
	free(pm);
}
