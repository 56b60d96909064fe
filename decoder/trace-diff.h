/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-diff.h - where two traces of the same guest code first take different branches: per
 * task and vCPU, the index of the first branch record that differs (or where one trace's
 * branches end), with the branches before it on both sides.
 *
 * A stream is the branch records of one task on one vCPU: the task by its name and pid in
 * events.jsonl (so that two runs of one guest match), records of no known task by their vCPU
 * alone. Two streams are equal when they have as many branches and each pair has the same
 * source and target. Addresses of the same code may differ between the runs when a program is
 * loaded elsewhere (ASLR): a user address (below SYMBOLIZER_USER_END) of a task whose exec
 * event carries a build ID and a load base is compared as its offset from the load base, so
 * that a PIE loaded at two bases compares equal, while two different builds (other build IDs)
 * never do.
 *
 * Two passes over each trace, memory bounded whatever their length: the first keeps per
 * stream a hash of every TRACE_DIFF_CHUNK branches (keyed with a random seed drawn per run,
 * so that a guest cannot make two different chunks collide on purpose) and finds the first
 * chunk that differs; the second keeps that chunk's records, and the context before it, of
 * the streams that differ.
 */
#ifndef VBTS_DECODER_TRACE_DIFF_H
#define VBTS_DECODER_TRACE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-dir.h"

/* Branches per hashed chunk. */
#define TRACE_DIFF_CHUNK 4096
/* Branches of context shown before a difference, at most. */
#define TRACE_DIFF_CONTEXT_MAX 1000
/* Streams that differ shown with their branches, at most; the others are counted. */
#define TRACE_DIFF_SHOWN_MAX 64

/**
 * struct trace_diff_options - what to compare and how much to show.
 * @trace:    the two traces (opened with symbols: the branches shown are symbolized)
 * @vcpu:     only this vCPU id, or -1 for all
 * @tasks:    --task keys (procmap__select()) that select the streams compared; none: all
 * @nr_tasks: how many
 * @context:  branches shown before each difference, at most TRACE_DIFF_CONTEXT_MAX
 * @out:      where the report goes
 */
struct trace_diff_options {
	struct trace_dir *trace[2];
	int vcpu;
	const char *const *tasks;
	size_t nr_tasks;
	unsigned int context;
	FILE *out;
};

/**
 * trace_diff__run() - compare two traces and report, on @o->out, each stream that differs
 * (its first difference and the branches before it on both sides, with symbols) and a
 * last line that says whether the traces are equal.
 * @o:   options
 * @err: receives one error line on failure
 * @errlen: its size
 *
 * Return: 0 when every stream is equal, 1 when one differs, or -errno: -ENOENT (a --task key
 * that names no task of either trace, a --vcpu that neither has), -EIO (a ring changed under
 * the reader, a write error), -ENOMEM.
 */
int trace_diff__run(const struct trace_diff_options *o, char *err, size_t errlen);

#endif /* VBTS_DECODER_TRACE_DIFF_H */
