/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-target.h - a recorded trace directory as the target of the gdb stub: a thread per
 * vCPU, its registers at its last record, read-only memory from the guest's images, and its
 * branches as BTS blocks filtered to its address space and CPL.
 */
#ifndef VBTS_GDBSTUB_TRACE_TARGET_H
#define VBTS_GDBSTUB_TRACE_TARGET_H

#include <stddef.h>

#include "server.h"

struct trace_target;

/**
 * struct trace_target_options - what to serve.
 * @vcpu:            only this vCPU id, or -1 for every vCPU of the trace
 * @task:            only the branches of this guest process (a name or pid of events.jsonl,
 *                   or a pid or tgid of the trace's thread records), or NULL; a vCPU where
 *                   it never ran is no thread
 * @symbol_paths:    more ELF files mapped into memory at their link addresses (files; a
 *                   directory is left to the decoder's symbols)
 * @nr_symbol_paths: how many
 * @warn:            called with one line per problem that does not stop the stub, or NULL
 * @warn_ctx:        argument of @warn
 */
struct trace_target_options {
	int vcpu;
	const char *task;
	const char *const *symbol_paths;
	size_t nr_symbol_paths;
	void (*warn)(void *warn_ctx, const char *line);
	void *warn_ctx;
};

/**
 * trace_target__open() - read a trace directory: every branch of the chosen vCPUs, once.
 * @dir:    the trace directory (`vbts run --trace DIR`)
 * @opts:   options
 * @err:    receives one line on failure
 * @errlen: size of @err
 *
 * Return: the target, or NULL with errno set: the errors of trace_dir__open(), ENOENT (no
 * such vCPU, no such task, or no branch of the task on the vCPUs chosen), EIO (a ring changed under the reader), ENOMEM.
 */
struct trace_target *trace_target__open(const char *dir, const struct trace_target_options *opts,
					char *err, size_t errlen);

/**
 * trace_target__ops() - the stub's view of the target; its context is @tt.
 *
 * Return: the operations (static).
 */
const struct gdb_target_ops *trace_target__ops(void);

/**
 * trace_target__close() - release everything.
 * @tt: the target, may be NULL
 */
void trace_target__close(struct trace_target *tt);

#endif /* VBTS_GDBSTUB_TRACE_TARGET_H */
