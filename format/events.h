/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events.h - the one reader of a trace's events.jsonl: bounded lines of JSON objects, each
 * with an "event" name (the keys are trace-keys.h's). What each event means is its user's
 * (the process map takes task events, the guest maps agent-map events); this reader only
 * splits the file into events and says which lines are none.
 */
#ifndef VBTS_FORMAT_EVENTS_H
#define VBTS_FORMAT_EVENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Longest events.jsonl line read, newline excluded; the VMM writes far shorter ones. */
#define EVENTS_LINE_MAX 4096
/* Bytes of events.jsonl read at most: VBTS_AGENT_EVENTS_MAX lines of 1 KiB. */
#define EVENTS_FILE_MAX (64ULL << 20)

/**
 * struct events_ops - what a reader of events.jsonl is told.
 * @event:    one line: its "event" name and the line's object (both borrowed for the call),
 *            or @name and @obj NULL for a line that is no event (a NUL byte in it, not a
 *            JSON object, no "event" string, duplicate keys); returns 0 to go on, or -errno
 *            to stop (-ENOMEM)
 * @too_long: optional; a line longer than EVENTS_LINE_MAX, skipped
 * @cut:      optional; the file ends early for the reader: -EFBIG (larger than
 *            EVENTS_FILE_MAX: the lines after @lineno are not read) or a read error after
 *            line @lineno
 */
struct events_ops {
	int (*event)(void *ctx, const char *name, json_t *obj, uint64_t lineno);
	void (*too_long)(void *ctx, uint64_t lineno);
	void (*cut)(void *ctx, int err, uint64_t lineno);
};

/**
 * events__parse_line() - one line of events.jsonl to @ops->event.
 * @line:   the line, with or without its newline (a trailing CR or LF is not read)
 * @len:    its length in bytes; longer than EVENTS_LINE_MAX is no event
 * @lineno: its number in the file, passed on
 * @ops:    the callbacks (only @event is used)
 * @ctx:    their argument
 *
 * An empty line is skipped.
 *
 * Return: 0, or what @ops->event returned to stop.
 */
int events__parse_line(const char *line, size_t len, uint64_t lineno,
		       const struct events_ops *ops, void *ctx);

/**
 * events__load() - every line of an events.jsonl file to @ops, in order.
 * @path:   the file: a regular file (input_lines__open())
 * @ops:    the callbacks
 * @ctx:    their argument
 * @err:    receives one line when the file cannot be opened (may be NULL)
 * @errlen: its size
 *
 * Return: 0; -errno when the file cannot be opened (-ENOENT, -EINVAL for anything but a
 * regular file, -ENOMEM), @ops->cut not called; -EFBIG or the read error after @ops->cut was
 * told (the events before it were given); or what @ops->event returned to stop.
 */
int events__load(const char *path, const struct events_ops *ops, void *ctx, char *err,
		 size_t errlen);

#endif /* VBTS_FORMAT_EVENTS_H */
