// SPDX-License-Identifier: GPL-2.0
/*
 * branch-list.c - reads oracle and `vbts decode --format jsonl` records.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "branch-list.h"

int branch_list__parse_cpl(const char *s, enum cpl_filter *f)
{
	if (!strcmp(s, "all"))
		*f = CPL_FILTER_ALL;
	else if (!strcmp(s, "user"))
		*f = CPL_FILTER_USER;
	else if (!strcmp(s, "kernel"))
		*f = CPL_FILTER_KERNEL;
	else
		return -EINVAL;
	return 0;
}

int branch_rec__match_cpl(const struct branch_rec *r, enum cpl_filter f)
{
	if (r->gap || r->cpl < 0 || f == CPL_FILTER_ALL)
		return 1;
	return f == CPL_FILTER_USER ? r->cpl > 0 : r->cpl == 0;
}

int branch_list__append(struct branch_list *l, const struct branch_rec *r)
{
	struct branch_rec *recs;
	size_t cap;

	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 256;
		recs = realloc(l->recs, cap * sizeof(*recs));
		if (!recs)
			return -ENOMEM;
		l->recs = recs;
		l->cap = cap;
	}
	l->recs[l->n++] = *r;
	return 0;
}

/* An address member: "0x…" string or a JSON integer. 0 if absent, -EINVAL if malformed. */
static int get_addr(json_t *obj, const char *key, uint64_t *v)
{
	json_t *m = json_object_get(obj, key);
	const char *s;
	char *end;

	*v = 0;
	if (!m)
		return 0;
	if (json_is_integer(m)) {
		*v = (uint64_t)json_integer_value(m);
		return 0;
	}
	if (!json_is_string(m))
		return -EINVAL;
	s = json_string_value(m);
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	return 0;
}

static int parse_record(json_t *obj, struct branch_rec *r, int *skip)
{
	json_t *type = json_object_get(obj, "type");
	json_t *cpl = json_object_get(obj, "cpl");
	json_t *seq = json_object_get(obj, "seq");
	const char *t = "branch";

	*skip = 0;
	if (type) {
		if (!json_is_string(type))
			return -EINVAL;
		t = json_string_value(type);
	}
	if (!strcmp(t, "branch")) {
		r->gap = 0;
	} else if (!strncmp(t, "gap", 3) || !strcmp(t, "lost")) {
		r->gap = 1;
	} else {
		*skip = 1;
		return 0;
	}
	if (get_addr(obj, "from", &r->from) || get_addr(obj, "to", &r->to))
		return -EINVAL;
	if (!r->gap && (!json_object_get(obj, "from") || !json_object_get(obj, "to")))
		return -EINVAL;
	r->cpl = -1;
	if (cpl) {
		if (!json_is_integer(cpl) || json_integer_value(cpl) < 0 ||
		    json_integer_value(cpl) > 3)
			return -EINVAL;
		r->cpl = (int)json_integer_value(cpl);
	}
	if (seq && json_is_integer(seq))
		r->seq = (uint64_t)json_integer_value(seq);
	return 0;
}

int branch_list__read(struct branch_list *l, FILE *f, const char *name, char *err,
		      size_t errlen)
{
	struct branch_rec r;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	json_error_t jerr;
	int ret = 0, skip;
	json_t *obj;

	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		obj = json_loads(line, JSON_DISABLE_EOF_CHECK, &jerr);
		if (!obj || !json_is_object(obj)) {
			snprintf(err, errlen, "%s:%zu: not a JSON object", name, lineno);
			json_decref(obj);
			ret = -EINVAL;
			goto out_free;
		}
		memset(&r, 0, sizeof(r));
		r.seq = l->n;
		r.line = lineno;
		ret = parse_record(obj, &r, &skip);
		json_decref(obj);
		if (ret) {
			snprintf(err, errlen, "%s:%zu: bad branch record", name, lineno);
			goto out_free;
		}
		if (skip)
			continue;
		ret = branch_list__append(l, &r);
		if (ret) {
			snprintf(err, errlen, "%s: out of memory", name);
			goto out_free;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", name);
		ret = -EIO;
	}
out_free:
	free(line);
	return ret;
}

int branch_list__load(struct branch_list *l, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	ret = branch_list__read(l, f, path, err, errlen);
	fclose(f);
	return ret;
}

void branch_list__free(struct branch_list *l)
{
	free(l->recs);
	l->recs = NULL;
	l->n = l->cap = 0;
}
