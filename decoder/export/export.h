/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export.h - decoded records as text (perf-script-like) or JSON lines, and a trace summary.
 *
 * The jsonl shapes are a stable interface (tests and the oracle comparator read them):
 *   {"type":"branch","vcpu":0,"seq":12,"from":"0x100077","to":"0x10007f","cpl":0,
 *    "kind":"call","vector":14,"task":"ping"}   (cpl, kind, vector, task only when known)
 *   {"type":"task-arrive","vcpu":0,"seq":13,"cr3":"0x203000","time":123,"task":"ping"}
 *   {"type":"task-depart", same members}
 *   A task of a Linux guest (its event carried a tgid) adds "pid" and "tgid" after "task":
 *   ...,"task":"bash","pid":812,"tgid":812}
 *   A record of a guest thread the trace named (from a "thread" record on its vCPU on) has the
 *   thread's "pid" and "tgid" instead, also when its task is unknown (then without "task"):
 *   ...,"task":"prog","pid":42,"tgid":41}
 *   {"type":"thread","vcpu":0,"seq":15,"task":"prog","pid":42,"tgid":41}
 *      (the thread that runs on the vCPU from here on)
 *   {"type":"entry","vcpu":0,"seq":16,"to":"0x401000","reason":"signal","task":"prog",
 *    "pid":42,"tgid":41}   (the thread enters user mode at "to", its next instruction;
 *      reason "first", "exec", "signal", "sigreturn", or the record's number for another)
 *   {"type":"gap","vcpu":0,"seq":14,"from":"0x100080","to":"0x100200","reason":"idt"}
 *      (from or to is left out for an orphan half whose partner is missing)
 *   {"type":"lost","vcpu":0,"seq":0,"count":7}
 *   {"type":"time"|"stop","vcpu":0,"seq":9,"time":123}
 *   {"type":"start","vcpu":0,"seq":0,"time":0,"trace":"all"|"user"|"kernel"|"none"}
 *   {"type":"freeze","vcpu":0,"seq":9,"time":123,"reason":"panic"}
 *   {"type":"unknown","vcpu":0,"seq":9,"kind":42,"payload":"0x0","aux":"0x0"}
 *      (an escape record of a kind this decoder does not know; reported, not an error)
 * Members appear in this order; no other members are emitted.
 */
#ifndef VBTS_DECODER_EXPORT_H
#define VBTS_DECODER_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder.h"
#include "procmap.h"
#include "symbolizer.h"

/* The output formats; those after EXPORT_JSONL have a module of their own (export-*.h). */
enum export_format {
	EXPORT_TEXT,
	EXPORT_JSONL,
	EXPORT_CALLS,
	EXPORT_FOLDED,
	EXPORT_CALLGRIND,
	EXPORT_PERFETTO,
	EXPORT_LCOV,
	EXPORT_AVRO,
	EXPORT_DRCOV,
	EXPORT_PERF,
	EXPORT_FORMAT_MAX
};

/**
 * export_format__parse() - the format of a --format name.
 * @name:   "text", "jsonl", "calls", ...
 * @format: receives EXPORT_*
 *
 * Return: 0, or -EINVAL for an unknown name.
 */
int export_format__parse(const char *name, enum export_format *format);

/**
 * export_format__name() - the --format name of a format.
 * @format: EXPORT_*
 *
 * Return: a static string ("?" for an out-of-range value).
 */
const char *export_format__name(enum export_format format);

/**
 * export_format__symbols() - whether a format shows symbols (the trace's symbol tables are
 * loaded for it).
 * @format: EXPORT_*
 *
 * Return: true for every format but jsonl.
 */
bool export_format__symbols(enum export_format format);

/**
 * export_format__binary() - whether a format writes binary data (not for a terminal).
 * @format: EXPORT_*
 *
 * Return: true for avro, drcov and perf.
 */
bool export_format__binary(enum export_format format);

/**
 * export_format__records() - whether a format writes records as they come (text, jsonl),
 * which --summary may follow.
 * @format: EXPORT_*
 *
 * Return: true for text and jsonl.
 */
bool export_format__records(enum export_format format);

/**
 * struct exporter_options - where and how records are written.
 * @out:     stream
 * @format:  EXPORT_*
 * @procmap: task names, or NULL
 * @symbolizer: the symbols of the guest's code, or NULL (every format but jsonl, which never
 *           carries symbols)
 * @lines:   text: add " (file:line)" after symbols when DWARF has them
 * @cache_bits: tests of the annotator's caches: 2^@cache_bits entries of its address cache
 *           and sets of its text cache (annotator__new_sized()); 0 for the default sizes
 */
struct exporter_options {
	FILE *out;
	enum export_format format;
	const struct procmap *procmap;
	const struct symbolizer *symbolizer;
	bool lines;
	unsigned int cache_bits;
};

/*
 * An exporter: formats records into a large buffer (out-buf.h) written to the stream in big
 * blocks, with the tasks, labels and symbols of annotator.h.
 */
struct exporter;

struct cr3_index;

/**
 * struct trace_summary - counts over a decoded trace.
 * @records:  decoded items
 * @branches: branch records
 * @gaps:     gap items
 * @lost:     records lost (sum of lost items); UINT64_MAX when the sum does not fit, i.e.
 *            at least that many
 * @switches: task arrivals
 * @tasks:    distinct tasks (CR3 values) seen arriving
 * @unknown:  escape records of an unknown kind
 * @freezes:  freeze records
 */
struct trace_summary {
	uint64_t records, branches, gaps, lost, switches, tasks, unknown, freezes;
	/* private: the distinct CR3 values in the order first seen, a hash index of them, and
	 * when each first arrived (it is named by the task that had it then: CR3s are reused) */
	uint64_t *cr3s;
	uint64_t *first_time;
	size_t nr_cr3s, alloc_cr3s;
	struct cr3_index *index;
	uint64_t probes;        /* index entries examined: the work, for tests */
};

/**
 * exporter__new() - an exporter.
 * @o: options (copied)
 *
 * Return: the exporter, or NULL with errno = ENOMEM.
 */
struct exporter *exporter__new(const struct exporter_options *o);

/**
 * exporter__record() - write one decoded record (buffered: see exporter__flush()).
 * @e: exporter
 * @r: record (copied when kept)
 *
 * Symbolized text is formatted a few records late (the cache entries of the newer records'
 * addresses are fetched meanwhile); exporter__flush() writes what is held back.
 *
 * Return: 0, or the first error so far: -EIO when the stream reported a write error, -ENOMEM.
 */
int exporter__record(struct exporter *e, const struct decoded_record *r);

/**
 * exporter__task() - the task a record belongs to, per the process map.
 * @e: exporter
 * @r: record
 *
 * Return: the task, or NULL when unknown.
 */
const struct procmap_task *exporter__task(struct exporter *e, const struct decoded_record *r);

/**
 * exporter__flush() - write what is buffered to the stream (which is not fflush()ed).
 * @e: exporter
 *
 * Return: 0, or the first error so far: -EIO, -ENOMEM.
 */
int exporter__flush(struct exporter *e);

/**
 * exporter__finish() - write what the format keeps until the end (the counts of an aggregating
 * format, the slices still open, ...) and flush; nothing more may be written after it.
 * @e: exporter
 *
 * Return: 0, or the first error so far: -EIO, -ENOMEM, or an error of the format's library.
 */
int exporter__finish(struct exporter *e);

/**
 * exporter__free() - release the exporter; what is still buffered is dropped.
 * @e: exporter, may be NULL
 */
void exporter__free(struct exporter *e);

/**
 * trace_summary__add() - count one record.
 * @s: summary (zero-initialised before the first call)
 * @r: record
 *
 * Return: 0 or -ENOMEM.
 */
int trace_summary__add(struct trace_summary *s, const struct decoded_record *r);

/**
 * exporter__summary() - write a summary (text lines, or one jsonl object of type "summary"),
 * after the records buffered, and flush.
 * @e: exporter
 * @s: summary
 *
 * A lost count of UINT64_MAX is a lower bound: text prints ">= 18446744073709551615 lost",
 * jsonl adds "lost_saturated":true after "lost".
 *
 * Return: 0, or -EIO on a write error, -ENOMEM.
 */
int exporter__summary(struct exporter *e, const struct trace_summary *s);

/**
 * trace_summary__release() - free what the summary allocated.
 * @s: summary
 */
void trace_summary__release(struct trace_summary *s);

#endif /* VBTS_DECODER_EXPORT_H */
