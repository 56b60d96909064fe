/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-base.h - a base directory that holds a trace directory per start of a long-running
 * collector (`vbts attach --trace-base BASE`), and its retention: the oldest runs are removed
 * whole (segments, rings, crash reports and events together) until a count and a byte limit
 * hold.
 *
 * A run is a subdirectory named YYYYMMDDTHHMMSSZ-PID[-N] (UTC; -N when a name is taken): the
 * names sort by start time, and nothing else in BASE is ever counted or removed. Sizes are
 * those of the files under a run (not following symbolic links, in blocks allocated).
 */
#ifndef VBTS_ATTACH_TRACE_BASE_H
#define VBTS_ATTACH_TRACE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A run directory's name: "YYYYMMDDTHHMMSSZ-" (17), a pid (at most 10), "-N" (at most 11). */
#define TRACE_BASE_NAME_MAX 40
/* Runs looked at in BASE at most (the others are left alone and said). */
#define TRACE_BASE_MAX_RUNS 65536

/**
 * struct trace_base_limits - what retention keeps.
 * @keep_runs:  runs kept at most, the new one included (0: any number)
 * @keep_bytes: bytes of all runs at most, the new one's @reserve included (0: any)
 * @reserve:    bytes the new run may still write (its disk budget in stream mode)
 */
struct trace_base_limits {
	uint64_t keep_runs;
	uint64_t keep_bytes;
	uint64_t reserve;
};

/**
 * trace_base__is_run() - whether @name is a run directory's name.
 * @name: a directory entry's name
 *
 * Return: true for YYYYMMDDTHHMMSSZ-PID or YYYYMMDDTHHMMSSZ-PID-N.
 */
bool trace_base__is_run(const char *name);

/**
 * trace_base__run_name() - the name of a run started at @when by process @pid.
 * @when: start time
 * @pid:  the collector's pid
 * @seq:  0, or N for the name's -N suffix (when the plain name is taken)
 * @buf:  receives the name
 * @len:  its size, at least TRACE_BASE_NAME_MAX
 *
 * Return: 0, or -EINVAL (@len too small, a time gmtime() cannot break down).
 */
int trace_base__run_name(time_t when, int pid, unsigned int seq, char *buf, size_t len);

/**
 * trace_base__plan() - which of the runs (oldest first) to remove so that the limits hold
 * once a new run is added: the oldest go first.
 * @bytes:  each run's size, oldest first
 * @n:      how many
 * @lim:    the limits
 *
 * Return: how many of the oldest to remove (0 to @n): fewer than @n only if the rest fit.
 */
size_t trace_base__plan(const uint64_t *bytes, size_t n, const struct trace_base_limits *lim);

/**
 * trace_base__prune() - apply retention to BASE before a new run: remove the oldest runs
 * whole, as trace_base__plan() says.
 * @base:    the base directory (created, mode 0750, with its parent, when missing)
 * @lim:     the limits
 * @removed: receives how many runs were removed, may be NULL
 * @err:     receives one line on failure
 * @errlen:  its size
 *
 * Return: 0, or -errno (BASE unreadable or not a directory, a run that could not be removed:
 * the runs after it are kept).
 */
int trace_base__prune(const char *base, const struct trace_base_limits *lim, size_t *removed,
		      char *err, size_t errlen);

/**
 * trace_base__new_run() - create a fresh, empty run directory in BASE for a collector
 * started now.
 * @base:   the base directory (exists)
 * @path:   receives BASE/NAME
 * @len:    its size
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, or -errno (ENAMETOOLONG, mkdir's error).
 */
int trace_base__new_run(const char *base, char *path, size_t len, char *err, size_t errlen);

#endif /* VBTS_ATTACH_TRACE_BASE_H */
