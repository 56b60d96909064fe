/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record.h - what one ring record is: the pure parse of a raw record (struct parsed_record),
 * the decoded item that the decoder and every reader of a trace share (struct decoded_record),
 * and the stable names of record kinds, as jsonl and the control socket give them.
 */
#ifndef VBTS_FORMAT_RECORD_H
#define VBTS_FORMAT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <vbts/ring-format.h>

/* What one decoded item is. */
enum decoded_type {
	DECODED_BRANCH,
	DECODED_TASK_ARRIVE,
	DECODED_TASK_DEPART,
	DECODED_GAP,            /* a GAP_BEGIN/GAP_END pair, or an orphan of either */
	DECODED_LOST,           /* records overwritten or dropped before this point */
	DECODED_TIME,
	DECODED_START,
	DECODED_STOP,
	DECODED_FREEZE,
	DECODED_TASK_PID,       /* the guest's pid and tgid of the task that just arrived */
	DECODED_GUEST_BTS_DROP, /* the guest's own BTS (guest-visible BTS) dropped records */
	DECODED_THREAD,         /* the guest thread that runs from here on, on its vCPU */
	DECODED_ENTRY,          /* a thread enters user mode elsewhere than where it left it */
	DECODED_UNKNOWN,        /* an escape record of a kind this decoder does not know */
	DECODED_TYPE_MAX
};

/**
 * struct parsed_record - one ring record taken apart, without any state (the pure layer).
 * @type:       DECODED_* (GAP_BEGIN and GAP_END both parse to DECODED_GAP, see @gap_end)
 * @from, @to:  branch addresses (branches only; an entry's address is its @payload)
 * @cpl:        CPL at the branch, when @cpl_valid
 * @kind:       enum vbts_branch_kind (0 unknown)
 * @vector:     vector, when @vector_valid
 * @payload:    escape payload (the record's `to`)
 * @aux:        escape auxiliary payload (56 bits)
 * @esc_kind:   escape kind as stored
 * @gap_end:    for DECODED_GAP: false = GAP_BEGIN, true = GAP_END
 * @time:       timestamp carried by the record, when @time_valid
 */
struct parsed_record {
	enum decoded_type type;
	uint64_t from, to;
	unsigned int cpl;
	bool cpl_valid;
	unsigned int kind;
	unsigned int vector;
	bool vector_valid;
	uint64_t payload, aux;
	unsigned int esc_kind;
	bool gap_end;
	uint64_t time;
	bool time_valid;
};

/**
 * record__parse() - take one raw record apart (pure, table-tested).
 * @rec: raw record
 * @out: result
 */
void record__parse(const struct vbts_record *rec, struct parsed_record *out);

/**
 * struct decoded_record - one item of the decoded stream.
 * @type:        DECODED_*
 * @vcpu:        vCPU id
 * @seq:         seq of the (first) ring record it comes from; for DECODED_LOST found by a
 *               jump in seq, the seq of the first missing record
 * @from, @to:   branch: addresses; gap: where control was lost / regained; guest BTS drop:
 *               @from is the branch whose record was dropped (the first of a run of drops);
 *               entry: @to is the thread's first user instruction (not run yet)
 * @from_valid, @to_valid: false for an orphan gap end or begin (the other half is missing)
 * @cpl, @cpl_valid: branch: CPL at the branch instruction
 * @kind:        branch: enum vbts_branch_kind (0 unknown)
 * @vector, @vector_valid: branch: vector of int n / exceptions
 * @cr3, @cr3_valid: task arrive/depart: the task's CR3; every other item: the CR3 of the task
 *               current on the vCPU (invalid before the first arrive and after a depart)
 * @time, @time_valid: ns since trace start: the record's own time for escapes that carry one,
 *               else the last time seen on this vCPU (the record happened after it)
 * @count:       DECODED_LOST: number of records lost
 * @aux:         gap: enum vbts_gap_reason; start: VBTS_START_* bits; freeze: reason;
 *               guest BTS drop: enum vbts_guest_bts_drop; entry: enum vbts_entry_reason as
 *               the record says (any value); thread: bits 0-55 of the guest's task address;
 *               unknown: the aux payload
 * @payload:     unknown: the escape payload; task-pid and thread: pid (bits 0-31) and tgid
 *               (32-63)
 * @esc_kind:    unknown: the escape kind
 * @thread_pid, @thread_tgid, @thread_valid: the guest thread the item belongs to, when
 *               @thread_valid: named by the last thread item of its vCPU (that item included),
 *               until a task arrive or a start, and up to the task depart that ends it (the
 *               depart included); never valid in a trace without thread items
 */
struct decoded_record {
	/* Ordered by size, without holes: a record is copied whole, often. */
	uint64_t seq;
	uint64_t from, to;
	uint64_t cr3;
	uint64_t time;
	uint64_t count;
	uint64_t aux;
	uint64_t payload;
	enum decoded_type type;
	uint32_t vcpu;
	unsigned int cpl;
	unsigned int kind;
	unsigned int vector;
	unsigned int esc_kind;
	uint32_t thread_pid;
	uint32_t thread_tgid;
	bool from_valid, to_valid;
	bool cpl_valid;
	bool vector_valid;
	bool cr3_valid;
	bool time_valid;
	bool thread_valid;
};

/**
 * record__item_members() - the members a decoded item takes from its own record alone: a
 * branch's addresses, CPL, kind and vector; a task's CR3; a lost count; an escape's payload
 * and aux as its type keeps them. Nothing for a gap (its halves pair up) or a time record;
 * type, vCPU, seq, time, task and thread are the caller's.
 * @p: the parsed record
 * @d: the item, its other members set by the caller
 */
void record__item_members(const struct parsed_record *p, struct decoded_record *d);

/**
 * record__decode_one() - one raw record read alone, as the decoder gives it with nothing
 * before it on its vCPU: no task, no thread, no time before it; a gap half is an orphan (a
 * GAP_BEGIN with an unknown end, a GAP_END with an unknown start and reason).
 * @vcpu: the vCPU the record belongs to
 * @seq:  its number
 * @rec:  the raw record
 * @out:  receives the item
 */
void record__decode_one(uint32_t vcpu, uint64_t seq, const struct vbts_record *rec,
			struct decoded_record *out);

/**
 * decoded_type__name() - the stable name of a type, as used in jsonl ("branch", "gap", ...).
 * @type: DECODED_*
 *
 * Return: a static string ("?" for an out-of-range value).
 */
const char *decoded_type__name(enum decoded_type type);

/**
 * struct record_name - a stable name and its length, for writers that copy it.
 * @s:   the name
 * @len: strlen(@s)
 */
struct record_name {
	const char *s;
	size_t len;
};

/**
 * decoded_type__record_name() - decoded_type__name() with its length.
 * @type: DECODED_*
 *
 * Return: a static name ("?" for an out-of-range value).
 */
const struct record_name *decoded_type__record_name(enum decoded_type type);

/**
 * branch_kind__record_name() - branch_kind__name() with its length.
 * @kind: kind
 *
 * Return: a static name, NULL for VBTS_BR_UNKNOWN and out-of-range values.
 */
const struct record_name *branch_kind__record_name(unsigned int kind);

/**
 * branch_kind__name() - the stable name of an enum vbts_branch_kind ("call", "jcc", ...).
 * @kind: kind
 *
 * Return: a static string, NULL for VBTS_BR_UNKNOWN and out-of-range values.
 */
const char *branch_kind__name(unsigned int kind);

/**
 * gap_reason__name() - the stable name of an enum vbts_gap_reason ("idt", "syscall", ...).
 * @reason: reason
 *
 * Return: a static string ("unknown" for unknown values).
 */
const char *gap_reason__name(uint64_t reason);

/**
 * freeze_reason__name() - the stable name of an enum vbts_freeze_reason.
 * @reason: reason
 *
 * Return: a static string ("unknown" for unknown values).
 */
const char *freeze_reason__name(uint64_t reason);

/**
 * guest_bts_drop__name() - the stable name of an enum vbts_guest_bts_drop ("ds-area",
 * "ds-fields", "full", "buffer", "index").
 * @reason: reason
 *
 * Return: a static string ("unknown" for unknown values).
 */
const char *guest_bts_drop__name(uint64_t reason);

/**
 * entry_reason__name() - the stable name of an enum vbts_entry_reason ("first", "exec",
 * "signal", "sigreturn").
 * @reason: reason, as an entry record gives it
 *
 * Return: a static string, NULL for any other value (shown as a number).
 */
const char *entry_reason__name(uint64_t reason);

/**
 * start_trace__name() - the stable name of a START record's VBTS_START_CPL_* bits ("all",
 * "user", "kernel", "none").
 * @aux: the record's aux payload
 *
 * Return: a static string.
 */
const char *start_trace__name(uint64_t aux);

#endif /* VBTS_FORMAT_RECORD_H */
