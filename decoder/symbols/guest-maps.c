// SPDX-License-Identifier: GPL-2.0
/*
 * guest-maps.c - the agent's reported mappings of a Linux guest's processes, and the build-ID
 * store's ELF files that name their addresses, each loaded once.
 *
 * Locking: none; one thread uses a set.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <search.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "guest-maps.h"
#include "events.h"
#include "procmap.h"
#include "trace-keys.h"

/* Escaped bytes of a path quoted in a warning, at most. */
#define QUOTE_MAX 256

/* The file of one build ID in the store. */
struct store_file {
	char *build_id;
	struct symbols *table;  /* NULL: not loaded yet, or not usable */
	bool tried;
};

/* A mapping and what its file's table makes of it. */
struct map_entry {
	struct guest_map m;
	struct store_file *file;
	bool bias_known, bias_bad;
	uint64_t bias;
};

struct guest_maps {
	char *store;
	void (*warn)(void *warn_ctx, const char *line);
	void *warn_ctx;
	struct map_entry *maps;
	size_t nr, cap;
	bool sorted;
	uint64_t bad;
	void *files;            /* tsearch tree of struct store_file, by build ID */
	size_t files_loaded;
};

struct guest_maps *guest_maps__new(const char *store,
				   void (*warn)(void *warn_ctx, const char *line), void *warn_ctx)
{
	struct guest_maps *gm = calloc(1, sizeof(*gm));

	if (!gm)
		return NULL;
	if (store) {
		gm->store = strdup(store);
		if (!gm->store) {
			free(gm);
			errno = ENOMEM;
			return NULL;
		}
	}
	gm->warn = warn;
	gm->warn_ctx = warn_ctx;
	gm->sorted = true;
	return gm;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct store_file *)a)->build_id,
		      ((const struct store_file *)b)->build_id);
}

/* The store's entry of @build_id (lowercase hex), created on first use; NULL: ENOMEM. */
static struct store_file *file_of(struct guest_maps *gm, const char *build_id)
{
	struct store_file key = { .build_id = (char *)build_id }, *f, **found;

	found = tfind(&key, &gm->files, cmp_file);
	if (found)
		return *found;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->build_id = strdup(build_id);
	if (!f->build_id || !tsearch(f, &gm->files, cmp_file)) {
		free(f->build_id);
		free(f);
		return NULL;
	}
	return f;
}

/* "0x..." hex as the VMM writes addresses; -EINVAL for anything else. */
static int parse_hex(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (!s || s[0] != '0' || s[1] != 'x' || !isxdigit((unsigned char)s[2]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

/* An agent-map event into the set: 0 (taken, or counted as bad), -ENOMEM. */
static int take_map(struct guest_maps *gm, json_t *root)
{
	struct map_entry e = { 0 };
	const char *path, *bid;
	char id[2 * SYMBOLS_BUILD_ID_MAX + 1];
	int ret = -EINVAL;
	json_t *v;

	v = json_object_get(root, EVENTS_KEY_PID);
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		goto out;
	e.m.pid = json_integer_value(v);
	v = json_object_get(root, EVENTS_KEY_TIME);
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
		goto out;
	e.m.time = v ? (uint64_t)json_integer_value(v) : 0;
	if (parse_hex(json_object_get(root, EVENTS_KEY_START), &e.m.start) ||
	    parse_hex(json_object_get(root, EVENTS_KEY_END), &e.m.end) ||
	    parse_hex(json_object_get(root, EVENTS_KEY_OFFSET), &e.m.offset) ||
	    e.m.start >= e.m.end)
		goto out;
	path = json_string_value(json_object_get(root, EVENTS_KEY_PATH));
	bid = json_string_value(json_object_get(root, EVENTS_KEY_BUILD_ID));
	if (!path || strlen(path) > GUEST_MAPS_PATH_MAX || !bid || !symbols__build_id_valid(bid))
		goto out;
	if (gm->nr >= GUEST_MAPS_MAX)
		goto out;
	for (size_t i = 0; i <= strlen(bid); i++)
		id[i] = (char)tolower((unsigned char)bid[i]);
	ret = -ENOMEM;
	if (gm->nr == gm->cap) {
		size_t cap = gm->cap ? 2 * gm->cap : 64;
		struct map_entry *n = realloc(gm->maps, cap * sizeof(*n));

		if (!n)
			goto out;
		gm->maps = n;
		gm->cap = cap;
	}
	e.file = file_of(gm, id);
	e.m.path = strdup(path);
	if (!e.file || !e.m.path) {
		free((char *)e.m.path);
		goto out;
	}
	e.m.build_id = e.file->build_id;
	e.m.order = gm->nr;
	gm->maps[gm->nr++] = e;
	gm->sorted = false;
	ret = 0;
out:
	if (ret == -EINVAL) {
		gm->bad++;
		ret = 0;
	}
	return ret;
}

static int take_event(void *ctx, const char *event, json_t *obj, uint64_t lineno)
{
	if (!event || strcmp(event, EVENT_AGENT_MAP))
		return 0;
	return take_map(ctx, obj);
}

/* Lines that are no event, too long or cut are not the maps' business: nothing is said. */
static const struct events_ops guest_maps_events = { .event = take_event };

int guest_maps__add_line(struct guest_maps *gm, const char *line)
{
	return events__parse_line(line, strlen(line), 0, &guest_maps_events, gm);
}

int guest_maps__load(struct guest_maps *gm, const char *path)
{
	return events__load(path, &guest_maps_events, gm, NULL, 0);
}

static int cmp_map(const void *a, const void *b)
{
	const struct guest_map *x = &((const struct map_entry *)a)->m;
	const struct guest_map *y = &((const struct map_entry *)b)->m;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void sort_maps(const struct guest_maps *cgm)
{
	struct guest_maps *gm = (struct guest_maps *)cgm;

	if (gm->sorted)
		return;
	qsort(gm->maps, gm->nr, sizeof(*gm->maps), cmp_map);
	gm->sorted = true;
}

size_t guest_maps__nr(const struct guest_maps *gm)
{
	return gm->nr;
}

uint64_t guest_maps__bad(const struct guest_maps *gm)
{
	return gm->bad;
}

const struct guest_map *guest_maps__get(const struct guest_maps *gm, size_t i)
{
	sort_maps(gm);
	return &gm->maps[i].m;
}

/* The first index whose (pid, time) is at or after (@pid, @time). */
static size_t lower_bound(const struct guest_maps *gm, int64_t pid, uint64_t time)
{
	size_t lo = 0, hi = gm->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct guest_map *m = &gm->maps[mid].m;

		if (m->pid < pid || (m->pid == pid && m->time < time))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t guest_maps__range(const struct guest_maps *gm, int64_t pid, uint64_t lo, uint64_t hi,
			 size_t *first)
{
	size_t a, b;

	sort_maps(gm);
	if (hi <= lo) {
		*first = 0;
		return 0;
	}
	a = lower_bound(gm, pid, lo);
	b = lower_bound(gm, pid, hi);
	*first = a;
	return b - a;
}

static void __attribute__((format(printf, 2, 3))) warn(struct guest_maps *gm, const char *fmt,
						       ...)
{
	char line[768];
	va_list ap;

	if (!gm->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	gm->warn(gm->warn_ctx, line);
}

/* Load @f from the store once; its table or NULL. */
static struct symbols *load_file(struct guest_maps *gm, struct store_file *f)
{
	char path[4096], q[QUOTE_MAX];
	const char *id;
	struct symbols *s;

	if (f->tried)
		return f->table;
	f->tried = true;
	if (!gm->store)
		return NULL;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s/executable", gm->store, f->build_id) >=
	    sizeof(path))
		return NULL;
	s = symbols__load(path);
	if (!s) {
		/* No upload for it: nothing to say, the agent sends only what its limits allow. */
		if (errno != ENOENT)
			warn(gm, "%s: not used: %s", escape__str(q, sizeof(q), path),
			     errno == ENOEXEC ? "not an ELF file" : strerror(errno));
		return NULL;
	}
	gm->files_loaded++;
	id = symbols__build_id(s);
	if (!id || strcmp(id, f->build_id)) {
		warn(gm, "%s: not used: its build ID is %s", escape__str(q, sizeof(q), path),
		     id ? id : "missing");
		symbols__free(s);
		return NULL;
	}
	f->table = s;
	return s;
}

const struct symbols *guest_maps__table(struct guest_maps *gm, const struct guest_map *m,
					uint64_t *bias)
{
	struct map_entry *e = (struct map_entry *)((char *)m - offsetof(struct map_entry, m));
	struct symbols *s = load_file(gm, e->file);
	uint64_t vaddr;

	if (!s || e->bias_bad)
		return NULL;
	if (!e->bias_known) {
		if (symbols__offset_vaddr(s, e->m.offset, &vaddr)) {
			e->bias_bad = true;
			return NULL;
		}
		e->bias = e->m.start - vaddr;
		e->bias_known = true;
	}
	*bias = e->bias;
	return s;
}

size_t guest_maps__files_loaded(const struct guest_maps *gm)
{
	return gm->files_loaded;
}

static void free_file(void *p)
{
	struct store_file *f = p;

	symbols__free(f->table);
	free(f->build_id);
	free(f);
}

void guest_maps__free(struct guest_maps *gm)
{
	if (!gm)
		return;
	for (size_t i = 0; i < gm->nr; i++)
		free((char *)gm->maps[i].m.path);
	free(gm->maps);
	tdestroy(gm->files, free_file);
	free(gm->store);
	free(gm);
}
