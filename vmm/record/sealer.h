/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sealer.h - the write side of sealed traces: every file of a trace directory is hashed into
 * the leaves of a Merkle tree in DIR/seal.log, and its root is signed with the forward-secure
 * sealing key (seal-key.h) at checkpoints: when the trace starts, when a segment is closed,
 * when a crash report appears, when a ring is frozen (wrap mode), every interval, and at the
 * end (doc/sealing.md).
 *
 * Threads: a `sealer` thread of its own hashes each segment as soon as its collector closes
 * it (sealer__segment_closed(), the segment writers' callback), polls the directory (a
 * readdir every 200 ms) for crash reports, frozen rings and segments it was not told of, and
 * writes the checkpoints: at most one per poll for closed segments, so that a fast stream
 * costs one signature and one fdatasync per 200 ms, and its end finds little left to hash.
 * sealer__checkpoint() may be called from any thread; a mutex orders the scans.
 */
#ifndef VBTS_VMM_SEALER_H
#define VBTS_VMM_SEALER_H

#include <stddef.h>
#include <stdint.h>

#include <vbts/seal-format.h>

struct sealer;

#define SEALER_DEFAULT_INTERVAL_S 10

/**
 * sealer__check_key() - whether @key_path is a sealing key that can seal now, without
 * evolving it: for a command to refuse before it creates anything.
 * @key_path: the sealing key
 * @err:      receives one line on refusal
 * @errlen:   its size
 *
 * Return: 0 or as seal_key__open(), -ERANGE when the time is outside its epochs.
 */
int sealer__check_key(const char *key_path, char *err, size_t errlen);

/**
 * sealer__start() - seal the trace directory @dir: create @dir/seal.log, seal what is there
 * (the first checkpoint), start the sealer thread.
 * @dir:        the trace directory, made already
 * @key_path:   the sealing key
 * @interval_s: at most this many seconds between two checkpoints (0: the default)
 * @err:        receives one line on failure
 * @errlen:     its size
 *
 * Return: the sealer, or NULL with errno set (EEXIST: @dir has a seal.log already, or as
 * seal_key__open() and seal_key__sign()); nothing is left in @dir then.
 */
struct sealer *sealer__start(const char *dir, const char *key_path, unsigned int interval_s,
			     char *err, size_t errlen);

/**
 * sealer__checkpoint() - seal what was written since the last checkpoint now.
 * @s:      sealer
 * @reason: enum vbts_seal_reason (VBTS_SEAL_REASON_CRASH also seals the rings as they are)
 *
 * Return: 0 or -errno (the key could not sign: reported on stderr once).
 */
int sealer__checkpoint(struct sealer *s, unsigned int reason);

/**
 * sealer__segment_closed() - a seg_closed_fn (seg-writer.h): segment @name of the trace
 * directory is closed, in its final form; the sealer thread hashes it soon. Never blocks on
 * the sealer's work: a name that finds the queue full is left to the next poll.
 * @ctx:  the sealer
 * @name: the segment's file name in the trace directory
 */
void sealer__segment_closed(void *ctx, const char *name);

/**
 * sealer__cpu_ns() - CPU time the sealer thread has used so far (its hashing, signing and
 * polling), for a bench to weigh sealing against the collector's own work.
 * @s: the sealer, before sealer__finish()
 *
 * Return: nanoseconds, 0 when the thread's clock cannot be read.
 */
uint64_t sealer__cpu_ns(struct sealer *s);

/**
 * sealer__finish() - stop the thread, seal every file as the run left it (the rings too) in
 * the last checkpoint, close seal.log; frees @s. Call it after the writers closed their
 * files.
 * @s: may be NULL
 *
 * Return: 0 or the first -errno of the sealer's life (reported on stderr).
 */
int sealer__finish(struct sealer *s);

/**
 * sealer__abort() - stop the thread, remove seal.log (the trace directory is going away);
 * frees @s.
 * @s: may be NULL
 */
void sealer__abort(struct sealer *s);

#endif /* VBTS_VMM_SEALER_H */
