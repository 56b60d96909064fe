/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-gen.h - synthetic one-vCPU trace directories of a given record count: a normal one
 * and hostile ones that made the decoder's task bookkeeping quadratic. Shared by check-decoder
 * and the decode benchmark (decode-trace-gen).
 *
 * Every trace has vm.json ("vcpus":1, no image), vcpu0.ring holding exactly @nr records
 * (START first, nothing lost) and events.jsonl. Times are ns since the trace start.
 *
 *   normal:       branches, a TASK_ARRIVE every TRACE_GEN_NORMAL_SWITCH records cycling over
 *                 TRACE_GEN_NORMAL_TASKS tasks announced (and exited) in events.jsonl
 *   distinct-cr3: nr - 1 TASK_ARRIVE records, each with a CR3 of its own
 *                 (trace_gen__distinct_cr3()); events.jsonl is empty
 *   exits:        nr / 2 tasks "t<i>" (pid i + 1, CR3 trace_gen__exits_cr3(i), announced at
 *                 10 i) and as many exit events (code i % 256, at 10 T + i), then the ring:
 *                 pairs of TASK_ARRIVE of task i % T at 10 i + 5 and a branch
 *   shared-cr3:   nr / 2 tasks "s<i>" (pid i + 1, announced at 10 i) all with CR3
 *                 TRACE_GEN_ONE_CR3, then the ring: per 4 records one TASK_ARRIVE of that CR3
 *                 (at trace_gen__shared_time(k) for the k-th) and 3 branches
 */
#ifndef VBTS_TESTS_TRACE_GEN_H
#define VBTS_TESTS_TRACE_GEN_H

#include <stdint.h>

enum trace_gen_kind {
	TRACE_GEN_NORMAL,
	TRACE_GEN_DISTINCT_CR3,
	TRACE_GEN_EXITS,
	TRACE_GEN_SHARED_CR3,
	TRACE_GEN_MAX
};

#define TRACE_GEN_NORMAL_TASKS 8
#define TRACE_GEN_NORMAL_SWITCH 1024
#define TRACE_GEN_ONE_CR3 0x5000ULL

/**
 * trace_gen__write() - write a trace directory.
 * @dir:  an existing directory without vm.json, vcpu0.ring or events.jsonl
 * @kind: TRACE_GEN_*
 * @nr:   ring records, >= 2
 *
 * Return: 0, or -EINVAL (bad @kind or @nr), or -errno from creating the files.
 */
int trace_gen__write(const char *dir, enum trace_gen_kind kind, uint64_t nr);

/**
 * trace_gen__kind() - the kind of a name ("normal", "distinct-cr3", "exits", "shared-cr3").
 * @name: name
 *
 * Return: TRACE_GEN_*, or TRACE_GEN_MAX for an unknown name.
 */
enum trace_gen_kind trace_gen__kind(const char *name);

/* The CR3 of the i-th arrival of a distinct-cr3 trace: same low 24 bits for all. */
static inline uint64_t trace_gen__distinct_cr3(uint64_t i)
{
	return (i + 1) << 24;
}

/* The CR3 of task i of an exits trace. */
static inline uint64_t trace_gen__exits_cr3(uint64_t i)
{
	return 0x10000000ULL + (i << 12);
}

/* The time of the k-th of @arrivals TASK_ARRIVE records of a shared-cr3 trace of @tasks tasks. */
static inline uint64_t trace_gen__shared_time(uint64_t k, uint64_t arrivals, uint64_t tasks)
{
	return k * (10 * tasks + 20) / (arrivals ? arrivals : 1);
}

#endif /* VBTS_TESTS_TRACE_GEN_H */
