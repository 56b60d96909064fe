/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procmap.h - the process map of a trace: CR3 (+ time) -> guest task, from events.jsonl.
 *
 * events.jsonl holds one JSON object per line, written by the VMM from what the guest (or
 * introspection) reported; "task", "exec", "thread" and "exit" events are used, e.g.
 *   {"time":123,"vcpu":0,"event":"task","pid":1,"name":"ping","cr3":"0x203000"}
 *   {"time":456,"vcpu":0,"event":"exit","pid":1,"code":0}
 * and for a Linux guest, whose processes the VMM resolves from the kernel's own data:
 *   {"time":..,"vcpu":..,"event":"task","pid":P,"tgid":T,"name":"comm","cr3":"0x.."}
 *   {"time":..,"vcpu":..,"event":"exec","pid":P,"tgid":T,"name":"newcomm","cr3":"0x..",
 *    "build_id":"hex","exe":"/path","load_base":"0x.."}   (the last three optional)
 *   {"time":..,"vcpu":..,"event":"thread","pid":P,"tgid":T,"name":"comm","cr3":"0x.."}
 * A task event announces a CR3 first resolved to a process; an exec event the new address
 * space (a new CR3) and name of a process that called execve(); load_base is the address its
 * lowest loadable segment was mapped at (a PIE's). Each announcement is one entry of the map.
 * A thread event announces a pid that ran in user mode in the address space of another
 * process, the CR3's owner, which keeps it: a thread of that process, or a child created with
 * CLONE_VM (vfork), which has no CR3 of its own until it execs (an exec event of its pid).
 * A thread event has the members of a task event. A thread announcement never names the
 * records of a CR3 (procmap__lookup() never returns it, even when no task has its CR3); it is
 * kept apart, procmap__thread() (procmap__lookup_thread() for a record's thread).
 *
 * A process is the run of announcements of one pid up to its exit: an exec, or another CR3
 * resolved to it, continues the process of its pid, and the first announcement after an exit
 * of the pid starts a new one (pids are reused). Thread announcements count as well: the
 * process of a vfork child is its thread announcement, then its exec and what follows, up to
 * its exit, and a thread of another process is a process of its own. Where one of two
 * successive announcements of a pid is a thread announcement, the second continues the
 * process of the first only with the same tgid (Linux never changes a task's tgid: another
 * tgid is another task, which reused the pid of a thread whose end no exit event tells).
 * A thread announcement whose pid is its CR3's owner's (procmap__lookup() at its time) is
 * ignored: it starts no process, continues none, ends none and selects nothing.
 *
 * Times are ns since the trace started, as in escape records. The guest controls the content:
 * lines that do not parse or lack members are counted, never fatal.
 */
#ifndef VBTS_DECODER_PROCMAP_H
#define VBTS_DECODER_PROCMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

struct procmap;

/* Longest events.jsonl line used, and bytes of it read at most (format/events.h). */
#define PROCMAP_LINE_MAX EVENTS_LINE_MAX
#define PROCMAP_FILE_MAX EVENTS_FILE_MAX

/* Bytes of a Linux task's comm: TASK_COMM_LEN less its NUL. */
#define PROCMAP_COMM_LEN 15

/**
 * struct procmap_task - one task announcement as the events describe it.
 * @pid:   guest pid
 * @name:  command name (owned by the procmap)
 * @cr3:   page-table root (masked with VBTS_CR3_MASK)
 * @start: time of the announcement, ns since trace start
 * @exited: an exit event was seen for it (an exit ends the task of its pid announced last
 *          at or before it)
 * @exit_code: the code of that event (128 + signal number for a task killed by a fault,
 *            by the shell's convention: 139 for SIGSEGV)
 * @exit_time: time of that event
 * @tgid, @tgid_valid: the thread group (Linux guests: the event carried "tgid")
 * @ppid, @ppid_valid: the tgid of the process that created it, when the event said ("ppid")
 * @exec:  announced by an exec event
 * @build_id: GNU build ID of the program, lowercase hex, or NULL (owned by the procmap)
 * @exe:   path of the program in the guest, or NULL (owned by the procmap)
 * @load_base, @load_base_valid: where the program's lowest loadable segment was mapped
 * @thread: announced by a thread event (see the top of this file)
 * @index: position in time order among the task announcements (procmap__task(pm, index) is
 *         this task), or, for a thread announcement, among those (procmap__thread())
 * @process: the process it belongs to, below procmap__nr_processes() (an ignored thread
 *           announcement: its CR3 owner's)
 */
struct procmap_task {
	int64_t pid;
	const char *name;
	uint64_t cr3;
	uint64_t start;
	bool exited;
	int64_t exit_code;
	uint64_t exit_time;
	int64_t tgid;
	bool tgid_valid;
	int64_t ppid;
	bool ppid_valid;
	bool exec;
	const char *build_id;
	const char *exe;
	uint64_t load_base;
	bool load_base_valid;
	bool thread;
	size_t index;
	size_t process;
};

/**
 * procmap__new() - an empty process map.
 *
 * Return: the map, or NULL with errno = ENOMEM.
 */
struct procmap *procmap__new(void);

/**
 * procmap__load() - add the task, exec, thread and exit events of an events.jsonl file.
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
 * procmap__add_event() - add one event of events.jsonl (events__load()'s event callback).
 * @pm:     map
 * @event:  its "event" name, NULL for a line that is no event
 * @obj:    the line's object
 * @lineno: its number in the file, for procmap__bad_lines()
 *
 * Task, exec, thread and exit events are taken; other events are ignored. An event without
 * its members, or a line that is no event, is counted (procmap__bad_lines()), not an error.
 *
 * Return: 0, or -ENOMEM.
 */
int procmap__add_event(struct procmap *pm, const char *event, json_t *obj, uint64_t lineno);

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
 * procmap__add_task() - add one announcement with every member.
 * @pm: map
 * @t:  the announcement: @pid, @name, @cr3, @start, @thread and the Linux members (@tgid,
 *      @exec, @build_id, @exe, @load_base with their valid flags); the strings are copied,
 *      the other members ignored
 *
 * Return: 0 or -ENOMEM.
 */
int procmap__add_task(struct procmap *pm, const struct procmap_task *t);

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
 * @cr3. Thread announcements are never returned.
 */
const struct procmap_task *procmap__lookup(const struct procmap *pm, uint64_t cr3,
					   uint64_t time, bool time_valid);

/**
 * procmap__lookup_thread() - the thread announcement a guest thread ran under at a time.
 * @pm:         map
 * @pid:        the thread's pid (a thread record's)
 * @tgid:       its tgid
 * @time:       ns since trace start
 * @time_valid: false when the time is unknown
 *
 * Of the announcements of @pid that are not ignored (thread, task and exec ones), the one
 * announced last at or before @time; with no time, or when every one is later, the earliest
 * (as procmap__lookup() chooses). It is returned when it is a thread announcement of @tgid
 * (or of no tgid) whose process had not exited before @time: @pid then ran in another
 * process's address space, and its records there are those of its own process, whatever
 * their CR3's task. O(log n), O(1) without thread announcements.
 *
 * Return: the thread announcement (valid until the map is next changed or freed), or NULL.
 */
const struct procmap_task *procmap__lookup_thread(const struct procmap *pm, int64_t pid,
						  int64_t tgid, uint64_t time, bool time_valid);

/**
 * procmap__find() - a task by name or pid, for filters.
 * @pm:  map
 * @key: a decimal pid or a task name
 *
 * Return: the first matching task in time order, else the first matching thread announcement
 * not ignored, or NULL.
 */
const struct procmap_task *procmap__find(const struct procmap *pm, const char *key);

/**
 * procmap__nr_processes() - number of processes (see the top of this file).
 * @pm: map
 *
 * Return: the count.
 */
size_t procmap__nr_processes(const struct procmap *pm);

/**
 * procmap__select() - the processes a --task key names.
 * @pm:       map
 * @key:      a decimal pid, or a command name
 * @selected: procmap__nr_processes() flags: those of the processes named are set, the others
 *            left as they are
 *
 * A decimal @key names the processes with that pid (or, for Linux tasks, that tgid); when
 * there is none, it is taken as a name. A name names every process that had it at any time,
 * before or after an exec; the name of a thread announcement names its process (a vfork
 * child's, by the name it ran under before its exec), never its CR3 owner's. The kernel keeps
 * PROCMAP_COMM_LEN bytes of a Linux task's name: a longer @key names the Linux tasks whose
 * name is its first PROCMAP_COMM_LEN bytes. Ignored thread announcements name nothing.
 *
 * Return: the number of processes named.
 */
size_t procmap__select(const struct procmap *pm, const char *key, bool *selected);

/**
 * procmap__crashed() - the task that crashed last.
 * @pm: map
 *
 * Return: of the announcements with an exit code of 128 or more (killed), thread ones
 * included, the one whose exit came last (on a tie, the one announced last); NULL when there
 * is none.
 */
const struct procmap_task *procmap__crashed(const struct procmap *pm);

/**
 * procmap__nr_tasks() - number of task announcements loaded (task and exec events).
 * @pm: map
 *
 * Return: the count, thread announcements left out.
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
 * procmap__nr_threads() - number of thread announcements loaded (thread events).
 * @pm: map
 *
 * Return: the count, ignored ones included.
 */
size_t procmap__nr_threads(const struct procmap *pm);

/**
 * procmap__thread() - the i-th thread announcement, in time order (ties in the order added).
 * @pm: map
 * @i:  index < procmap__nr_threads()
 *
 * Return: the announcement.
 */
const struct procmap_task *procmap__thread(const struct procmap *pm, size_t i);

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
