// SPDX-License-Identifier: GPL-2.0
/*
 * crash-symbols.c - the function, line and module of each branch of a crash report, written
 * into the report before the VMM stores it.
 *
 * Locking: none; it opens the trace directory for itself, read-only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash-symbols.h"
#include "escape.h"
#include "trace-dir.h"
#include "trace-keys.h"

static int set_text(json_t *o, const char *key, const char *text)
{
	char *s = escape__utf8_dup(text, CRASH_SYMBOLS_NAME_MAX);
	int ret = s ? json_object_set_new(o, key, json_string(s)) : -1;

	free(s);
	return ret ? -ENOMEM : 0;
}

/* "0x..." as the VMM writes addresses. */
static int get_hex(json_t *o, const char *key, uint64_t *v)
{
	const char *s = json_string_value(json_object_get(o, key));
	char *end;

	if (!s || strncmp(s, "0x", 2))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s + 2, &end, 16);
	return errno || end == s + 2 || *end ? -EINVAL : 0;
}

/* The symbol object of @addr, or NULL (nothing known, or out of memory: *@ret). */
static json_t *site(const struct symbolizer *sz, const struct procmap_task *t, uint64_t addr,
		    int *ret)
{
	struct symbolizer_module m;
	struct symbol_hit hit;
	const char *file, *path;
	char off[24];
	int line, r = 0;
	json_t *o;

	o = json_object();
	if (!o) {
		*ret = -ENOMEM;
		return NULL;
	}
	if (!symbolizer__lookup(sz, t, addr, &hit)) {
		snprintf(off, sizeof(off), "0x%" PRIx64, hit.offset);
		r |= set_text(o, CRASH_KEY_SYM_FUNCTION, hit.name);
		r |= json_object_set_new(o, CRASH_KEY_SYM_OFFSET, json_string(off)) ? -ENOMEM : 0;
	}
	if (!symbolizer__line(sz, t, addr, &file, &line)) {
		r |= set_text(o, CRASH_KEY_SYM_FILE, file);
		r |= json_object_set_new(o, CRASH_KEY_SYM_LINE, json_integer(line)) ? -ENOMEM : 0;
	}
	if (!symbolizer__module(sz, t, addr, &m)) {
		path = m.guest_path ? m.guest_path : m.path;
		if (!m.guest_path && strrchr(path, '/'))
			path = strrchr(path, '/') + 1;
		if (*path)
			r |= set_text(o, CRASH_KEY_SYM_MODULE, path);
	}
	if (r || !json_object_size(o)) {
		if (r)
			*ret = -ENOMEM;
		json_decref(o);
		return NULL;
	}
	return o;
}

int crash_symbols__annotate(const char *dir, json_t *report)
{
	const struct procmap_task *t = NULL;
	const struct symbolizer *sz;
	const struct procmap *pm;
	char err[TRACE_DIR_ERR_MAX];
	struct trace_dir *td;
	json_t *br, *time;
	uint64_t cr3, addr;
	int ret = 0, named = 0;

	br = json_object_get(report, "branches");
	time = json_object_get(report, "time");
	if (!json_is_array(br) || !json_is_integer(time))
		return -EINVAL;
	if (!json_array_size(br))
		return 0;
	td = trace_dir__open(dir, NULL, err, sizeof(err));
	if (!td)
		return -errno;
	sz = trace_dir__symbolizer(td);
	pm = trace_dir__procmap(td);
	if (pm && !get_hex(report, "cr3", &cr3))
		t = procmap__lookup(pm, cr3, (uint64_t)json_integer_value(time), true);
	for (size_t i = 0; sz && i < json_array_size(br) && !ret; i++) {
		json_t *b = json_array_get(br, i), *s;
		static const char *const keys[][2] = { { "from", "from_symbol" },
						       { "to", "to_symbol" } };

		for (size_t k = 0; k < 2 && !ret; k++) {
			if (get_hex(b, keys[k][0], &addr))
				continue;
			s = site(sz, t, addr, &ret);
			if (!s)
				continue;
			if (json_object_set_new(b, keys[k][1], s))
				ret = -ENOMEM;
			named++;
		}
	}
	trace_dir__close(td);
	return ret ? ret : named;
}
