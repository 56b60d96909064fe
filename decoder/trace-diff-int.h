/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-diff-int.h - what trace-diff.c learns of one trace, for the baselines of
 * diff-baseline.c: its streams (a guest thread each, by identity, diff-ident.h), their
 * compared branches with the asynchronous events left out, and their profiles: branches per
 * function, source lines and edges (source and target as compared) reached.
 */
#ifndef VBTS_DECODER_TRACE_DIFF_INT_H
#define VBTS_DECODER_TRACE_DIFF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "annotator.h"
#include "diff-ident.h"
#include "export.h"
#include "trace-dir.h"

/* Interrupts nested in one stream that are followed to their return, at most. */
#define DIFF_NEST_MAX 8

/*
 * One entry of a profile table: a function (@s its name, @count the branches from it), a line
 * (@s its file, @line), or an edge (@from, @to as recorded, @k as compared, @task, @kind,
 * @count times).
 */
struct kmap_entry {
	uint64_t key;
	uint64_t k[3];
	uint64_t count;
	const char *s;
	int line;
	unsigned int kind;
	uint64_t from, to;
	const struct procmap_task *task;
};

/* An open-addressed table of entries by a 64-bit key (0 is free). */
struct kmap {
	struct kmap_entry *e;
	size_t cap, nr;
};

struct kmap_entry *kmap__find(const struct kmap *m, uint64_t key);
int kmap__add(struct kmap *m, uint64_t key, struct kmap_entry **out);
void kmap__free(struct kmap *m);

/* One guest thread's branches in one trace. */
struct diff_pstream {
	const char *id;                 /* identity (owned by the profile's diff_ident) */
	uint64_t hash;                  /* of @id's text */
	int64_t pid;                    /* this run's */
	const struct procmap_task *task;        /* the first task of its records */
	uint64_t n;                     /* branches compared */
	uint64_t async;                 /* asynchronous events left out */
	uint64_t *hashes;               /* one per full chunk */
	size_t alloc;
	uint64_t cur;
	bool stats;                     /* the tables below are filled */
	struct kmap fns, lines, edges;
	/* the interrupts and exceptions being followed to their return */
	unsigned int nest;
	uint64_t nest_from[DIFF_NEST_MAX];
	unsigned int nest_cpl[DIFF_NEST_MAX];
	bool nest_cpl_valid[DIFF_NEST_MAX];
	/* second pass: the compared items [lo, hi) kept */
	uint64_t seen, lo, hi;
	struct decoded_record *recs;
	const struct procmap_task **tasks;
	uint64_t (*keys)[3];
	size_t nr;
	struct diff_pstream *next;      /* in its bucket */
	struct diff_pstream *peer;      /* the other trace's stream of the same identity */
	bool differs;
	uint64_t chunk;                 /* the first chunk that differs */
};

#define DIFF_BUCKETS 1024

/* What is learnt of one trace. */
struct diff_profile {
	struct trace_dir *trace;
	struct annotator *annotator;
	struct diff_ident *ident;
	uint64_t slide;                 /* kernel addresses are compared less this */
	bool *want;                     /* --task: per process, or NULL for all */
	uint32_t *ids;                  /* --task keys that are pids */
	size_t nr_ids;
	int vcpu;
	bool strict;
	uint64_t seed;
	struct diff_pstream **streams;  /* in the order met */
	size_t nr, alloc;
	struct diff_pstream *buckets[DIFF_BUCKETS];
	struct exporter *lcov;          /* the compared branches as lcov, or NULL */
	bool all_stats;                 /* fill the tables of every stream */
	uint64_t branches, async;
};

/**
 * diff_profile__init() - a profile of a trace, not read yet.
 * @p:      the profile (zeroed by the caller)
 * @t:      the trace, opened with symbols
 * @tasks:  --task keys, or NULL
 * @nr_tasks: how many
 * @found:  receives, per key, whether it named a process of @t (may be NULL)
 * @vcpu:   only this vCPU, or -1
 * @strict: asynchronous events are compared too
 *
 * Return: 0 or -ENOMEM.
 */
int diff_profile__init(struct diff_profile *p, struct trace_dir *t, const char *const *tasks,
		       size_t nr_tasks, bool *found, int vcpu, bool strict);

/**
 * diff_profile__read() - the first pass: every stream, the hash of each chunk of its
 * branches, and with @p->all_stats its tables.
 * @p: the profile
 *
 * Return: 0, or -errno: -EIO (a ring changed under the reader), -ENOMEM.
 */
int diff_profile__read(struct diff_profile *p);

/**
 * diff_profile__addr() - the symbol and line of an address of a stream, as text.
 * @p:    the profile
 * @t:    the task
 * @addr: the address
 * @buf:  receives "name+0xoff (file:line)", escaped
 * @len:  its room
 */
void diff_profile__addr(struct diff_profile *p, const struct procmap_task *t, uint64_t addr,
			char *buf, size_t len);

/**
 * diff_profile__edge_key() - the table key of an edge as compared.
 * @k: source, target, program (as trace-diff.c compares them)
 *
 * Return: the key; the same in every run for the same edge.
 */
uint64_t diff_profile__edge_key(const uint64_t k[3]);

/**
 * diff_profile__name_key() - the table key of an escaped function name or "file:line" text.
 * @text: the text
 *
 * Return: the key.
 */
uint64_t diff_profile__name_key(const char *text);

/**
 * diff_profile__release() - free what the profile holds (not the trace).
 * @p: the profile
 */
void diff_profile__release(struct diff_profile *p);

#endif /* VBTS_DECODER_TRACE_DIFF_INT_H */
