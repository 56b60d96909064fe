/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record-json.h - the JSON shape of one decoded record: one line of `vbts decode --format
 * jsonl`, and the "record" of the control socket's get and drain (doc/control-protocol.md).
 * Both write it here, so the two never differ.
 *
 * A record is written in three parts: record_json__begin() ("{" and the record's own members),
 * then, for the types record_json__has_task() names, the task members (decode's task labels,
 * then record_json__thread()), then "}". record_json__format() writes the whole record for a
 * reader that has no task labels.
 */
#ifndef VBTS_FORMAT_RECORD_JSON_H
#define VBTS_FORMAT_RECORD_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "record.h"

/* Room for a record written by record_json__begin() and record_json__thread(), and "}". */
#define RECORD_JSON_MAX 512

/**
 * record_json__begin() - "{", the type, vcpu and seq, and the members of the record's type.
 * @p: where, with room for RECORD_JSON_MAX bytes
 * @r: the record
 *
 * Return: the end of what was written (no NUL).
 */
char *record_json__begin(char *p, const struct decoded_record *r);

/**
 * record_json__has_task() - whether the task members follow the record's own: branches,
 * task arrive and depart, task-pid, thread and entry records.
 * @r: the record
 *
 * Return: true when they do.
 */
bool record_json__has_task(const struct decoded_record *r);

/**
 * record_json__thread() - the guest thread's "pid" and "tgid" members, for a record of a
 * thread the trace named (@r->thread_valid); nothing otherwise.
 * @p: where
 * @r: the record
 *
 * Return: the end of what was written.
 */
char *record_json__thread(char *p, const struct decoded_record *r);

/**
 * record_json__format() - the whole record, without task labels and without a newline.
 * @buf: at least RECORD_JSON_MAX bytes; receives the text, NUL-terminated
 * @r:   the record
 *
 * Return: the length of the text.
 */
size_t record_json__format(char *buf, const struct decoded_record *r);

#endif /* VBTS_FORMAT_RECORD_JSON_H */
