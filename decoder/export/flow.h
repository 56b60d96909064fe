/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flow.h - the control flow of each thread on each vCPU, from decoded branch records: the
 * straight-line run that ends at each branch (from the target of the one before it), and a
 * call stack of the functions the runs are in. The exporters that show calls (call history,
 * callgrind, Chrome trace, folded stacks) and coverage (lcov, drcov) are built on it.
 *
 * A stream is one (vCPU, task, thread) triple: the task of a record as the annotator finds it,
 * or its CR3 when no task had it, and the guest thread the trace named for the record (none
 * for a record before the first thread record of its task's stay on the vCPU, and in a trace
 * without thread records). Records of a stream are taken in the order they come.
 *
 * The stack follows the branch kinds: a call, an interrupt, an exception or a system call
 * enters the function of its target; a return (ret, iret, sysret) leaves the innermost
 * function, and when the function returned to is not the one below it, the frames above the
 * closest frame of that function are left too (a longjmp), or, when no frame has it (a return
 * into code entered before the trace started), the one below is left and replaced. A
 * branch whose source is not in the innermost function (a tail call, a jump, or a record lost)
 * replaces the innermost function with the source's, so that the stack always ends in the
 * function executing. A stack starts with the function of its first branch. Functions are the
 * symbols of the annotator (one per name the symbol tables give; every unnamed address is the
 * one function "[unknown]"); a gap replaces the innermost function with the one control came
 * back to. An entry (the thread enters user mode elsewhere than where it left it: a new
 * thread, an exec, a signal handler, a sigreturn) is no branch: the stream's frames are left
 * and its stack starts again with the function of the entry's address, where the next run
 * begins.
 *
 * Memory: FLOW_DEPTH_MAX frames per stream at most (deeper calls are counted, not kept: they
 * have no callbacks), and one stream per (vCPU, task, thread) with branches or entries.
 */
#ifndef VBTS_DECODER_FLOW_H
#define VBTS_DECODER_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "annotator.h"
#include "decoder.h"

/* Frames of a stream's call stack kept at most. */
#define FLOW_DEPTH_MAX 256
/* The name of the function of addresses no symbol covers. */
#define FLOW_UNKNOWN "[unknown]"

/**
 * struct flow_frame - one function on a stream's call stack.
 * @name:      the symbol's name as the tables own it (its identity), NULL for unnamed code
 * @text:      the name escaped for a terminal (FLOW_UNKNOWN for unnamed code)
 * @text_len:  its length
 * @start:     the symbol's address (the address itself for unnamed code)
 * @branches:  the stream's branch count when the function was entered (the branch that
 *             entered it included when it was a call: the branches made inside are the count
 *             when it is left minus this)
 * @time:      the record's time then (ns), @time_valid whether it had one
 * @user:      the exporter's own value for the frame (0 when entered)
 * @event:     entered by a system call, an interrupt or an exception: a trace of user mode
 *             alone has no return from it, so a branch from the function under it leaves it
 */
struct flow_frame {
	const char *name;
	const char *text;
	size_t text_len;
	uint64_t start;
	uint64_t branches;
	uint64_t time;
	bool time_valid;
	uint64_t user;
	bool event;
};

/**
 * struct flow_stream - one thread of a task on one vCPU.
 * @vcpu:      the vCPU
 * @task:      the task, or NULL when no task had the CR3
 * @cr3, @cr3_valid: the CR3 of its records
 * @thread_pid, @thread_tgid, @thread_valid: the guest thread of its records, when the trace
 *             named one
 * @frames:    the call stack, outermost first; @depth frames kept
 * @hidden:    calls deeper than FLOW_DEPTH_MAX, counted
 * @branches:  branch records of the stream so far
 * @run_start: where the run that ends at the next branch began (the target of the last branch
 *             or gap), when @run_valid
 * @user:      the exporter's own value for the stream (0 when created)
 * @index:     the stream's number, in the order streams were first met
 */
struct flow_stream {
	uint32_t vcpu;
	const struct procmap_task *task;
	uint64_t cr3;
	bool cr3_valid;
	uint32_t thread_pid, thread_tgid;
	bool thread_valid;
	struct flow_frame *frames;
	unsigned int depth, alloc;
	uint64_t hidden;
	uint64_t branches;
	uint64_t run_start;
	bool run_valid;
	uint64_t user;
	size_t index;
};

/**
 * struct flow_ops - what an exporter is told; each callback may be NULL and returns 0 or a
 * -errno that stops the record (flow__record() returns it).
 * @enter:  @f was pushed on @s's stack (@call: by a call-like branch, false when it replaces
 *          the innermost function or starts the stack); @r is the record that did it (a
 *          branch, a gap or an entry), NULL for none
 * @leave:  @f is about to be popped (@r: the record, NULL at flow__finish())
 * @branch: @r, a branch of @s, after its run was taken into account and before the stack
 *          changes for it: the innermost frame is the function of its source
 */
struct flow_ops {
	int (*enter)(void *ctx, struct flow_stream *s, struct flow_frame *f, bool call,
		     const struct decoded_record *r);
	int (*leave)(void *ctx, struct flow_stream *s, struct flow_frame *f,
		     const struct decoded_record *r);
	int (*branch)(void *ctx, struct flow_stream *s, const struct decoded_record *r);
};

struct flow;

/**
 * flow__new() - a flow tracker.
 * @a:     the annotator that names tasks and functions (must outlive the tracker)
 * @ops:   callbacks (copied)
 * @ctx:   their argument
 * @stack: follow call stacks (enter/leave callbacks); false: runs only
 *
 * Return: the tracker, or NULL with errno = ENOMEM.
 */
struct flow *flow__new(struct annotator *a, const struct flow_ops *ops, void *ctx, bool stack);

/**
 * flow__record() - take one decoded record (branches, gaps and entries matter, others are
 * ignored).
 * @f: tracker
 * @r: record
 *
 * Return: 0, -ENOMEM, or the first error a callback returned.
 */
int flow__record(struct flow *f, const struct decoded_record *r);

/**
 * flow__finish() - leave every frame still on a stack (innermost first, streams in the order
 * they were first met), as if the trace returned from everything.
 * @f: tracker
 *
 * Return: 0, or the first error a callback returned.
 */
int flow__finish(struct flow *f);

/**
 * flow__stream() - the stream of a record.
 * @f: tracker
 * @r: record
 *
 * Return: the stream (valid until flow__free()), or NULL when out of memory.
 */
struct flow_stream *flow__stream(struct flow *f, const struct decoded_record *r);

/**
 * flow__function() - the function of an address, as the frames name it.
 * @f:    tracker
 * @task: the task of the address, or NULL
 * @addr: guest address
 * @out:  receives @name, @text, @text_len and @start (the other members are zeroed)
 *
 * Return: 0, or -ENOMEM.
 */
int flow__function(struct flow *f, const struct procmap_task *task, uint64_t addr,
		   struct flow_frame *out);

/**
 * flow__nr_streams() - streams met so far.
 * @f: tracker
 *
 * Return: the count.
 */
size_t flow__nr_streams(const struct flow *f);

/**
 * flow__stream_at() - the i-th stream, in the order streams were first met.
 * @f: tracker
 * @i: index < flow__nr_streams()
 *
 * Return: the stream.
 */
struct flow_stream *flow__stream_at(const struct flow *f, size_t i);

/**
 * flow__free() - release the tracker and its streams.
 * @f: tracker, may be NULL
 */
void flow__free(struct flow *f);

#endif /* VBTS_DECODER_FLOW_H */
