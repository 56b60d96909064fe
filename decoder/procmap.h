/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procmap.h - the process map of a trace: CR3 (+ time) -> guest task, from events.jsonl.
 *
 * events.jsonl holds one JSON object per line, written by the VMM from what the guest (or
 * introspection) reported; "task" and "exit" events are used, e.g.
 *   {"time":123,"vcpu":0,"event":"task","pid":1,"name":"ping","cr3":"0x203000"}
 *   {"time":456,"vcpu":0,"event":"exit","pid":1,"code":0}
 * Times are ns since the trace started, as in escape records. The guest controls the content:
 * lines that do not parse or lack members are counted, never fatal.
 */
#ifndef VBTS_DECODER_PROCMAP_H
#define VBTS_DECODER_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmap;

/* Longest events.jsonl line used, newline excluded; the VMM writes far shorter ones. */
#define PROCMAP_LINE_MAX 4096
/* Bytes of events.jsonl read at most: VBTS_AGENT_EVENTS_MAX lines of 1 KiB. */
#define PROCMAP_FILE_MAX (64ULL << 20)

/**
 * struct procmap_task - one task as the events describe it.
 * @pid:   guest pid
 * @name:  command name (owned by the procmap)
 * @cr3:   page-table root (masked with VBTS_CR3_MASK)
 * @start: time of the announcement, ns since trace start
 * @exited: an exit event was seen for it (an exit ends the task of its pid announced last
 *          at or before it)
 * @exit_code: the code of that event (128 + signal number for a task killed by a fault,
 *            by the shell's convention: 139 for SIGSEGV)
 * @exit_time: time of that event
 */
struct procmap_task {
	int64_t pid;
	const char *name;
	uint64_t cr3;
	uint64_t start;
	bool exited;
	int64_t exit_code;
	uint64_t exit_time;
};

/**
 * procmap__new() - an empty process map.
 *
 * Return: the map, or NULL with errno = ENOMEM.
 */
struct procmap *procmap__new(void);

/**
 * procmap__load() - add the task events of an events.jsonl file.
 * @pm:   map
 * @path: the file
 *
 * Reads at most PROCMAP_FILE_MAX bytes of a regular file (input_lines__open()).
 *
 * Return: 0, or -errno when the file cannot be opened or read: -ENOENT, -EINVAL for anything
 * but a regular file, -EFBIG when it is larger than PROCMAP_FILE_MAX (the tasks of the part
 * read are kept), -EIO, ...; -ENOMEM. Bad lines, and lines longer than PROCMAP_LINE_MAX, are
 * not errors: see procmap__bad_lines().
 */
int procmap__load(struct procmap *pm, const char *path);

/**
 * procmap__add_line() - add the event of one events.jsonl line.
 * @pm:     map
 * @line:   the line, without its newline (a trailing CR is removed in place)
 * @len:    its length in bytes (at most PROCMAP_LINE_MAX; a NUL byte in it makes it bad)
 * @lineno: its number in the file, for procmap__bad_lines()
 *
 * Return: 0, or -ENOMEM. A line that is not a usable event is counted, not an error.
 */
int procmap__add_line(struct procmap *pm, char *line, size_t len, uint64_t lineno);

/**
 * procmap__add() - add one task (tests, and sources other than events.jsonl).
 * @pm:    map
 * @pid:   pid
 * @name:  command name (copied)
 * @cr3:   page-table root
 * @start: announcement time
 *
 * Return: 0 or -ENOMEM.
 */
int procmap__add(struct procmap *pm, int64_t pid, const char *name, uint64_t cr3,
		 uint64_t start);

/**
 * procmap__lookup() - the task that owned @cr3 at @time.
 * @pm:         map
 * @cr3:        page-table root
 * @time:       ns since trace start
 * @time_valid: false when the time is unknown
 *
 * CR3 values are reused after a task exits: among the tasks announced with @cr3, the one
 * announced last at or before @time wins; with no time, or when every announcement is later
 * (tasks are often announced just after they first ran), the earliest one. Announcements of
 * the same time are ordered as they were added (the lines of events.jsonl). O(log n).
 *
 * Return: the task (valid until the map is next changed or freed), or NULL when no task had
 * @cr3.
 */
const struct procmap_task *procmap__lookup(const struct procmap *pm, uint64_t cr3,
					   uint64_t time, bool time_valid);

/**
 * procmap__find() - a task by name or pid, for filters.
 * @pm:  map
 * @key: a decimal pid or a task name
 *
 * Return: the first matching task, or NULL.
 */
const struct procmap_task *procmap__find(const struct procmap *pm, const char *key);

/**
 * procmap__crashed() - the task that crashed last.
 * @pm: map
 *
 * Return: of the tasks with an exit code of 128 or more (killed), the one whose exit came
 * last; NULL when there is none.
 */
const struct procmap_task *procmap__crashed(const struct procmap *pm);

/**
 * procmap__nr_tasks() - number of task announcements loaded.
 * @pm: map
 *
 * Return: the count.
 */
size_t procmap__nr_tasks(const struct procmap *pm);

/**
 * procmap__task() - the i-th task announcement, in time order (ties in the order added).
 * @pm: map
 * @i:  index < procmap__nr_tasks()
 *
 * Return: the task.
 */
const struct procmap_task *procmap__task(const struct procmap *pm, size_t i);

/**
 * procmap__bad_lines() - lines of the loaded files that were not usable.
 * @pm:         map
 * @first_line: receives the number of the first bad line (1-based), 0 when there is none
 *
 * Return: the count.
 */
uint64_t procmap__bad_lines(const struct procmap *pm, uint64_t *first_line);

/**
 * procmap__free() - release the map.
 * @pm: map, may be NULL
 */
void procmap__free(struct procmap *pm);

#endif /* VBTS_DECODER_PROCMAP_H */
