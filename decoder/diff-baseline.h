/* SPDX-License-Identifier: GPL-2.0 */
/*
 * diff-baseline.h - a baseline that knows its own noise: what several runs of the same test did,
 * per guest thread (matched by identity, diff-ident.h, with asynchronous events left out as
 * trace-diff.h does), and the comparison of another run with it that reports only what lies
 * outside the variation the runs showed.
 *
 * The baseline file is one JSON document (version 1), written by `vbts baseline create`:
 *   {"vbts_baseline":1,"runs":3,"strict":false,
 *    "streams":[{"id":"noisy","runs":3,"branches":[min,max],
 *                "functions":{"rounds":[min,max],"checksum":[min,max]},
 *                "lines":["diffprog.c:120", ...],
 *                "edges":[["0x10001105","0x10001120","0x0"], ...]}]}
 * "runs" of a stream: the runs that had it; "functions": the branches from each function,
 * least and most over the runs that had the stream; "lines": the source lines reached; "edges":
 * every branch direction taken, as compared (source, target, program tag, hex). Names and files
 * are escaped (escape.h).
 *
 * A run differs from the baseline where it does what no run of the baseline did: a stream the
 * baseline never had; a stream every run of the baseline had that it lacks; a branch direction,
 * a function or a source line no run reached; a function whose branch count was the same in
 * every run of the baseline (at least two) and is another here. What varied among the runs (a
 * data-dependent loop's counts, a stream some runs had, the order threads interleave in, which
 * per-thread streams do not see) is accepted.
 */
#ifndef VBTS_DECODER_DIFF_BASELINE_H
#define VBTS_DECODER_DIFF_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "trace-diff.h"
#include "trace-dir.h"

/* Largest baseline file read. */
#define DIFF_BASELINE_FILE_MAX (256u << 20)
/* Runs of one baseline, at most. */
#define DIFF_BASELINE_RUNS_MAX 1000

/**
 * struct diff_baseline_options - what is recorded or compared.
 * @tasks:    --task keys that select the streams; none: all
 * @nr_tasks: how many
 * @vcpu:     only this vCPU id, or -1
 * @strict:   asynchronous events count too (a baseline made so compares so)
 */
struct diff_baseline_options {
	const char *const *tasks;
	size_t nr_tasks;
	int vcpu;
	bool strict;
};

/**
 * diff_baseline__create() - record a baseline of several runs.
 * @out:    the baseline file, written whole (a temporary file renamed over it)
 * @runs:   the runs' traces, opened with symbols
 * @nr:     how many, 1 to DIFF_BASELINE_RUNS_MAX
 * @o:      options
 * @err:    receives one error line on failure
 * @errlen: its size
 *
 * Return: 0, or -errno: -ENOENT (a --task key that names no task of any run), -EIO (a ring
 * changed under the reader, the file cannot be written), -ENOMEM.
 */
int diff_baseline__create(const char *out, struct trace_dir *const *runs, size_t nr,
			  const struct diff_baseline_options *o, char *err, size_t errlen);

/**
 * diff_baseline__compare() - compare a run with a baseline.
 * @path:   the baseline file
 * @run:    the run's trace, opened with symbols
 * @o:      options (@strict is the baseline's own)
 * @res:    receives the comparison, the baseline as A and the run as B
 *          (trace_diff_result__free())
 * @err:    receives one error line on failure
 * @errlen: its size
 *
 * Return: 0 when the run is within the baseline, 1 when it differs, or -errno: -EINVAL (not a
 * baseline file of this version), -EFBIG, -ENOENT (no such file, a --task key that names no
 * task of the run), -EIO, -ENOMEM.
 */
int diff_baseline__compare(const char *path, struct trace_dir *run,
			   const struct diff_baseline_options *o, struct trace_diff_result *res,
			   char *err, size_t errlen);

#endif /* VBTS_DECODER_DIFF_BASELINE_H */
