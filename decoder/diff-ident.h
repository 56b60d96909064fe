/* SPDX-License-Identifier: GPL-2.0 */
/*
 * diff-ident.h - what a guest task is, named so that two runs of the same guest agree: the
 * identity under which `vbts diff` and `vbts baseline` match a trace's threads and processes,
 * whatever pids the runs gave them.
 *
 * A process is named by its program: the name of each program it executed (exec events), in
 * order, joined by '>' ("mt-exec", or "sh>prog" for a process that executed two), or, when it
 * never executed one, the name it was announced under; then, for a vfork child announced in its
 * parent's address space, that process's identity before a '/' ("mt-oracle/mt-exec"); then,
 * for the second and later process of the same name, "#N" (N from 2: "mt-oracle#2" is the
 * second process named mt-oracle), placed under its parent: in the creation order of the
 * processes' parents (the "ppid" of their events; those whose parent the trace lacks first),
 * then in their own (the time of their first announcement, then their pid). A thread other than a
 * process's first (its pid is not its tgid) is its process's identity and ".tN", N its place
 * among the process's threads in the order of their pids, from 2 (Linux gives a new thread the
 * next free pid: their creation order): among the threads whose records the trace has
 * (diff_ident__see()), else among the threads events.jsonl announced. Records of no known
 * task are named by their vCPU ("vcpu0:-"). Names are escaped (escape.h) and cut to DIFF_IDENT_NAME_MAX bytes, so that an
 * identity is printable text, in JSON, JUnit or a terminal as it is.
 *
 * What events.jsonl does not tell is not guessed: in a trace without "ppid" (an earlier
 * version's) two forked processes of one name are told apart by their creation order alone.
 */
#ifndef VBTS_DECODER_DIFF_IDENT_H
#define VBTS_DECODER_DIFF_IDENT_H

#include <stdint.h>

#include "decoder.h"
#include "procmap.h"

/* Escaped bytes of one name in an identity, at most. */
#define DIFF_IDENT_NAME_MAX 64
/* Bytes of an identity, at most (a longer chain of parents is cut). */
#define DIFF_IDENT_MAX 512

struct diff_ident;

/**
 * diff_ident__new() - the identities of a process map's processes.
 * @pm: the map; it must not change while the identities are used
 *
 * O(n log n) in the announcements.
 *
 * Return: the identities, or NULL with errno = ENOMEM.
 */
struct diff_ident *diff_ident__new(const struct procmap *pm);

/**
 * diff_ident__of() - the identity of the thread a record belongs to.
 * @id:  identities
 * @r:   the record
 * @t:   the task of its CR3 (annotator__task()), or NULL
 * @pid: receives this run's pid of the thread (of the task without thread items), -1 when
 *       unknown
 *
 * A thread the trace names (thread items) whose thread announcement ran in another process's
 * address space (a vfork child before its exec) is of its own process; another thread is of
 * its CR3's process. O(1) for a record of the same thread as the previous one.
 *
 * Return: the identity (owned by @id, valid as long as it), or NULL when out of memory.
 */
const char *diff_ident__of(struct diff_ident *id, const struct decoded_record *r,
			   const struct procmap_task *t, int64_t *pid);

/**
 * diff_ident__see() - note the thread of a record before identities are asked for, so that a
 * thread is placed among its process's threads whether events.jsonl announced them or not.
 * @id: identities
 * @r:  a record
 * @t:  the task of its CR3, or NULL
 *
 * Return: 0, or -ENOMEM.
 */
int diff_ident__see(struct diff_ident *id, const struct decoded_record *r,
		    const struct procmap_task *t);

/**
 * diff_ident__process() - the identity of a process of the map.
 * @id: identities
 * @p:  process index, below procmap__nr_processes()
 *
 * Return: the identity (owned by @id).
 */
const char *diff_ident__process(const struct diff_ident *id, size_t p);

/**
 * diff_ident__free() - release the identities.
 * @id: identities, may be NULL
 */
void diff_ident__free(struct diff_ident *id);

#endif /* VBTS_DECODER_DIFF_IDENT_H */
