/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seal-verify.h - the read side of sealed traces (vbts/seal-format.h, doc/sealing.md): check
 * a trace directory against its seal.log and a verification key, name what fails; write and
 * check the inclusion proof of one file. Every byte of seal.log, the proof and the trace is
 * untrusted: read with bounds, names escaped by the caller before they reach a terminal.
 */
#ifndef VBTS_FORMAT_SEAL_VERIFY_H
#define VBTS_FORMAT_SEAL_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vbts/seal-format.h>

/* seal.log and proofs are read whole, up to these sizes. */
#define SEAL_VERIFY_MAX_LOG (1ULL << 30)
#define SEAL_VERIFY_MAX_PROOF (16ULL << 20)
/* Problems kept in a report (all are counted). */
#define SEAL_VERIFY_MAX_PROBLEMS 1000

/* enum seal_verdict: what a trace directory is. */
enum seal_verdict {
	SEAL_VERIFIED = 0,  /* every file is as the last checkpoint sealed it, the run ended */
	SEAL_PARTIAL = 1,   /* what the last checkpoint sealed verifies; the rest is unsealed
			     * (the run did not end: killed, or still running) */
	SEAL_FAILED = 2,    /* something sealed was changed, or a checkpoint does not verify */
	SEAL_UNSEALED = 3,  /* no seal.log: the trace was not sealed */
};

/* enum seal_problem_kind: how bad one finding is. */
enum seal_problem_kind {
	SEAL_P_TAMPERED = 0, /* fails verification */
	SEAL_P_UNSEALED = 1, /* written after the last checkpoint: not covered, not a failure */
};

/**
 * struct seal_problem - one finding.
 * @kind:       enum seal_problem_kind
 * @file:       the file concerned (relative to the trace directory; VBTS_SEAL_LOG_NAME for
 *              the log itself), raw bytes from the trace: escape before printing
 * @checkpoint: the checkpoint concerned, -1 when none
 * @offset:     the first byte concerned, or -1
 * @end:        the byte after the last concerned, or -1
 * @message:    what is wrong, one line without the file's name
 */
struct seal_problem {
	int kind;
	char file[VBTS_SEAL_NAME_MAX + 1];
	int64_t checkpoint;
	int64_t offset;
	int64_t end;
	char message[256];
};

/**
 * struct seal_report - the result of seal_verify__dir().
 * @verdict:        enum seal_verdict
 * @key_given:      a verification key was given and the trace names it
 * @vk:             the verification key seal.log names
 * @trace_id:       the trace's id
 * @checkpoints:    checkpoints in seal.log
 * @good:           of them, verified in a row from the first
 * @leaves:         leaves in seal.log
 * @sealed_leaves:  leaves covered by the last good checkpoint
 * @files:          files sealed
 * @bytes:          bytes checked
 * @head:           the last good checkpoint (valid when @good)
 * @first_epoch:    the epoch of the first checkpoint
 * @ended:          the last good checkpoint is the run's end and nothing follows it
 * @nr_problems:    findings, counted
 * @nr_tampered:    of them, failures
 * @problems:       the first SEAL_VERIFY_MAX_PROBLEMS of them
 */
struct seal_report {
	int verdict;
	bool key_given;
	struct vbts_seal_vk vk;
	uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE];
	uint64_t checkpoints, good, leaves, sealed_leaves, files, bytes;
	struct vbts_seal_checkpoint head;
	uint32_t first_epoch;
	bool ended;
	uint64_t nr_problems, nr_tampered;
	struct seal_problem *problems;
};

/**
 * seal_verify__dir() - verify a trace directory.
 * @dir:    the trace directory
 * @vk:     the verification key the trace must be sealed with, NULL: the one it names (then
 *          only its consistency is checked, not who sealed it)
 * @out:    receives the report (free with seal_report__free())
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0 (the report says what the trace is), -ENOTDIR / -ENOENT / -EACCES (@dir cannot be
 * read), -ENOMEM.
 */
int seal_verify__dir(const char *dir, const struct vbts_seal_vk *vk, struct seal_report **out,
		     char *err, size_t errlen);

/**
 * seal_report__free() - free a report.
 * @r: may be NULL
 */
void seal_report__free(struct seal_report *r);

/**
 * seal_report__reason_name() - "start", "segment", "crash", "interval", "end".
 * @reason: enum vbts_seal_reason
 *
 * Return: a static string ("?" for another value).
 */
const char *seal_report__reason_name(uint32_t reason);

/**
 * seal_verify__prove() - write the inclusion proof of one file of a sealed trace: its leaves,
 * their audit paths to the last good checkpoint, that checkpoint and its key path.
 * @dir:    the trace directory
 * @file:   the file, relative to @dir (or a path into it)
 * @vk:     as for seal_verify__dir()
 * @out:    the proof file to write (made new, never overwritten)
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, -EBADMSG (the trace or the file does not verify, or the file has unsealed
 * bytes), -ENOENT (the file is not sealed), -E2BIG (more than VBTS_SEAL_PROOF_MAX_LEAVES
 * leaves), or -errno of reading or writing.
 */
int seal_verify__prove(const char *dir, const char *file, const struct vbts_seal_vk *vk,
		       const char *out, char *err, size_t errlen);

/**
 * struct seal_proof_info - what a proof proved.
 * @name:       the file's name in its trace (raw: escape before printing)
 * @trace_id:   the trace
 * @checkpoint: the checkpoint that sealed it
 * @size:       bytes proved
 * @key_given:  checked against a verification key given (else the proof's own)
 */
struct seal_proof_info {
	char name[VBTS_SEAL_NAME_MAX + 1];
	uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE];
	struct vbts_seal_checkpoint checkpoint;
	uint64_t size;
	bool key_given;
};

/**
 * seal_verify__proof() - check a file against an inclusion proof, without its trace.
 * @proof:  the proof file
 * @vk:     the verification key (NULL: the one the proof names)
 * @file:   the file
 * @info:   receives what was proved
 * @err:    receives one line saying why not, or why the input is bad
 * @errlen: its size
 *
 * Return: 0 proved, 1 not proved (@err says why), -errno for bad input (unreadable files,
 * a proof that is not one: -EINVAL).
 */
int seal_verify__proof(const char *proof, const struct vbts_seal_vk *vk, const char *file,
		       struct seal_proof_info *info, char *err, size_t errlen);

#endif /* VBTS_FORMAT_SEAL_VERIFY_H */
