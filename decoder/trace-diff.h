/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-diff.h - how two traces of the same guest code differ: per guest thread, matched by
 * what it is rather than by pid (diff-ident.h), the first branch that differs with the
 * branches around it on both sides, then the functions and source lines each run reached
 * that the other did not and the branches per function that differ; and, when asked, the
 * coverage of each run against the other.
 *
 * A stream is the branches of one guest thread (a process's, for a guest whose threads the
 * trace does not name; a vCPU's, for records of no known task), on whichever vCPU they ran,
 * in the order the decoder merges the vCPUs. What is compared is the program's own control
 * flow: a branch's source and target, and a thread's entries to user mode elsewhere than it
 * left it (a signal handler, an exec). Asynchronous events are left out unless @strict: an
 * external interrupt or NMI, an exception (a page fault returns to the faulting instruction;
 * one that does not return, a crash, shows as the flow that follows it), and what the guest
 * ran from it up to its return to where it was (an IRET to that instruction or the next, or
 * the next branch at the interrupted CPL when the trace does not record the return). Task
 * switches and times are not branches and are never compared.
 *
 * Addresses of the same code may differ between the runs when a program is loaded elsewhere
 * (ASLR): a user address (below SYMBOLIZER_USER_END) of a task whose exec event carries a
 * build ID and a load base is compared as its offset from the load base, and two different
 * build IDs are never equal; a kernel address less the KASLR slide when both traces know
 * theirs.
 *
 * Two passes over each trace, memory bounded by the traces' code, not their length: the first
 * keeps per stream a hash of every TRACE_DIFF_CHUNK branches (keyed with a random seed drawn
 * per run, so that a guest cannot make two different chunks collide on purpose) and finds the
 * first chunk that differs; the second keeps that chunk's branches, and the context around
 * it, of the streams that differ, and counts their branches per function and the lines and
 * edges they reached.
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
/* Branches of context shown before (and after) a difference, at most. */
#define TRACE_DIFF_CONTEXT_MAX 1000
/* Streams that differ shown with their branches, at most; the others are counted. */
#define TRACE_DIFF_SHOWN_MAX 64
/* Entries of each list of a stream (functions, lines, counts) kept, at most; the others are
 * counted. */
#define TRACE_DIFF_LIST_MAX 20
/* Entries of each coverage list kept, at most. */
#define TRACE_DIFF_COVERAGE_MAX 10000

/**
 * struct trace_diff_options - what to compare and how much to show.
 * @trace:    the two traces (opened with symbols: the branches shown are symbolized)
 * @vcpu:     only this vCPU id, or -1 for all
 * @tasks:    --task keys (procmap__select()) that select the streams compared; none: all
 * @nr_tasks: how many
 * @context:  branches shown before and after each difference, at most TRACE_DIFF_CONTEXT_MAX
 * @strict:   asynchronous events (interrupts, exceptions, what their handlers ran) count too
 * @coverage: also work out the lines and edges each run covered and the other did not
 * @lcov:     with @coverage, where to write each side's lcov tracefile, or NULL
 */
struct trace_diff_options {
	struct trace_dir *trace[2];
	int vcpu;
	const char *const *tasks;
	size_t nr_tasks;
	unsigned int context;
	bool strict;
	bool coverage;
	FILE *lcov[2];
};

/**
 * struct trace_diff_side - one run's side of a stream.
 * @present:  the run has the stream
 * @pid:      its pid in this run (-1 when unknown)
 * @branches: branches compared
 * @async:    asynchronous events left out
 * @build_id: the program's build ID, or NULL
 * @context:  the branches around the first difference, one line each ("0x13 main+0x13
 *            (file.c:20) => 0x40 parse+0x0 (file.c:30)  call"), escaped; the first is the
 *            branch trace_diff_stream.context_first, the difference is at
 *            trace_diff_stream.first
 * @nr_context: how many
 * @where:    the function and line of the first differing branch's source, or NULL when the
 *            stream ended there
 * @only:     the functions ("fn name") and lines ("file:line") this run reached and the other
 *            did not, at most TRACE_DIFF_LIST_MAX, functions first
 * @nr_only:  how many kept
 * @more_only: how many more there were
 */
struct trace_diff_side {
	bool present;
	int64_t pid;
	uint64_t branches;
	uint64_t async;
	char *build_id;
	char **context;
	size_t nr_context;
	char *where;
	char **only;
	size_t nr_only, more_only;
};

/**
 * struct trace_diff_count - a function whose branches differ in number.
 * @name:  its name, escaped
 * @count: branches from it in A and in B
 */
struct trace_diff_count {
	char *name;
	uint64_t count[2];
};

/**
 * struct trace_diff_stream - one guest thread of either run.
 * @id:      its identity (diff-ident.h), printable
 * @differs: the runs' branches differ (or only one run has it)
 * @first:   the index of the first compared branch that differs
 * @context_first: the index of the first line of the sides' @context
 * @side:    A and B
 * @counts:  the functions whose branch counts differ, at most TRACE_DIFF_LIST_MAX
 * @nr_counts: how many kept
 * @more_counts: how many more
 */
struct trace_diff_stream {
	char *id;
	bool differs;
	uint64_t first;
	uint64_t context_first;
	struct trace_diff_side side[2];
	struct trace_diff_count *counts;
	size_t nr_counts, more_counts;
};

/**
 * struct trace_diff_result - the comparison.
 * @streams:  every stream, in the order first met (A's, then those only in B)
 * @nr:       how many
 * @differ:   how many differ
 * @branches: branches compared per run
 * @async:    asynchronous events left out per run
 * @strict:   asynchronous events were compared
 * @coverage: the coverage below was worked out
 * @cov_lines: per run, the lines ("file:line") it covered and the other did not
 * @nr_cov_lines: how many kept; @more_cov_lines how many more
 * @cov_edges: per run, the branch directions ("src (file:line) => dst (file:line)") it took
 *             and the other did not
 * @nr_cov_edges: how many kept; @more_cov_edges how many more
 * @lines:    per run, the lines it covered
 * @edges:    per run, the branch directions it took
 * @baseline_runs: a comparison of a run (B) with a baseline (A, diff-baseline.h): the runs the
 *            baseline was made of; 0 for two traces
 */
struct trace_diff_result {
	struct trace_diff_stream *streams;
	size_t nr;
	size_t differ;
	uint64_t branches[2];
	uint64_t async[2];
	bool strict;
	bool coverage;
	char **cov_lines[2];
	size_t nr_cov_lines[2], more_cov_lines[2];
	char **cov_edges[2];
	size_t nr_cov_edges[2], more_cov_edges[2];
	uint64_t lines[2], edges[2];
	unsigned int baseline_runs;
};

/**
 * trace_diff__run() - compare two traces.
 * @o:      options
 * @res:    receives the comparison (trace_diff_result__free())
 * @err:    receives one error line on failure
 * @errlen: its size
 *
 * Return: 0 when every stream is equal, 1 when one differs, or -errno: -ENOENT (a --task key
 * that names no task of either trace), -EIO (a ring changed under the reader, an lcov file
 * that cannot be written), -ENOMEM.
 */
int trace_diff__run(const struct trace_diff_options *o, struct trace_diff_result *res,
		    char *err, size_t errlen);

/**
 * trace_diff_result__free() - release what a comparison holds.
 * @res: the comparison (zeroed, or filled by trace_diff__run())
 */
void trace_diff_result__free(struct trace_diff_result *res);

#endif /* VBTS_DECODER_TRACE_DIFF_H */
