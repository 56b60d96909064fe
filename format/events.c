// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - events.jsonl split into events: bounded lines (input-file.h), each a JSON object
 * without duplicate keys that names its "event".
 */
#include <errno.h>
#include <string.h>

#include "events.h"
#include "input-file.h"
#include "trace-keys.h"

int events__parse_line(const char *line, size_t len, uint64_t lineno,
		       const struct events_ops *ops, void *ctx)
{
	const char *name;
	json_t *root;
	int ret;

	if (len > EVENTS_LINE_MAX || memchr(line, '\0', len))
		return ops->event(ctx, NULL, NULL, lineno);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (!len)
		return 0;
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	name = json_string_value(json_object_get(root, EVENTS_KEY_EVENT));
	if (!json_is_object(root) || !name)
		ret = ops->event(ctx, NULL, NULL, lineno);
	else
		ret = ops->event(ctx, name, root, lineno);
	json_decref(root);
	return ret;
}

int events__load(const char *path, const struct events_ops *ops, void *ctx, char *err,
		 size_t errlen)
{
	struct input_lines *in;
	uint64_t lineno;
	char *line;
	size_t len;
	int ret;

	in = input_lines__open(path, EVENTS_LINE_MAX, EVENTS_FILE_MAX, err, errlen);
	if (!in)
		return -errno;
	while ((ret = input_lines__next(in, &line, &len)) != 0) {
		lineno = input_lines__lineno(in);
		if (ret == -E2BIG) {
			if (ops->too_long)
				ops->too_long(ctx, lineno);
			continue;
		}
		if (ret < 0) {
			if (ops->cut)
				ops->cut(ctx, ret, lineno);
			break;
		}
		ret = events__parse_line(line, len, lineno, ops, ctx);
		if (ret)
			break;
	}
	input_lines__close(in);
	return ret;
}
