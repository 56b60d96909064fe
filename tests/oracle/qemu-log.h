/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qemu-log.h - taken branches from QEMU 7.2's `-singlestep -d in_asm,exec,nochain` log.
 *
 * The log is fed line by line. `in_asm` blocks give each translation block's instructions
 * (bytes, so lengths; long encodings continue on lines without a mnemonic); `Trace` lines give
 * the executed blocks in order with their CPL (flags & 3); "Stopped execution of TB chain
 * before … [pc]" takes back the Trace line just printed (that block did not run). A step whose
 * successor is not its block's fall-through address is a taken branch from the block's last
 * instruction, except the repeat of a REP string instruction. Steps before the first one at
 * the entry point (the BIOS, the option ROM) are ignored.
 */
#ifndef VBTS_ORACLE_QEMU_LOG_H
#define VBTS_ORACLE_QEMU_LOG_H

#include <stdint.h>
#include <stdio.h>

/**
 * struct oracle_branch - one taken branch: source instruction, target, CPL at the source.
 */
struct oracle_branch {
	uint64_t from;
	uint64_t to;
	int cpl;
};

struct qemu_log;

/* Called for each branch in execution order; a nonzero return stops the parse with it. */
typedef int (*qemu_log_branch_fn)(void *ctx, const struct oracle_branch *b);

/**
 * qemu_log__new() - a parser that reports branches from the first step at @entry on.
 * Returns NULL with errno ENOMEM on failure.
 */
struct qemu_log *qemu_log__new(uint64_t entry, qemu_log_branch_fn fn, void *ctx);

void qemu_log__delete(struct qemu_log *log);

/**
 * qemu_log__feed() - parse one line (with or without its newline).
 * Returns 0, the callback's nonzero return, -EPROTO for a Trace of a block never shown by
 * in_asm, or -ENOMEM.
 */
int qemu_log__feed(struct qemu_log *log, const char *line);

/**
 * qemu_log__finish() - end of log: reports nothing more but checks the entry was reached.
 * Returns 0, or -ENOENT when no step reached the entry point.
 */
int qemu_log__finish(struct qemu_log *log);

/**
 * qemu_log__parse_file() - feed every line of @f, then finish.
 * Returns as qemu_log__feed()/qemu_log__finish(), or -EIO on a read error.
 */
int qemu_log__parse_file(struct qemu_log *log, FILE *f);

/* Counters for reports: steps after the entry, branches reported, lines not understood. */
uint64_t qemu_log__steps(const struct qemu_log *log);
uint64_t qemu_log__branches(const struct qemu_log *log);
uint64_t qemu_log__unknown_lines(const struct qemu_log *log);

#endif /* VBTS_ORACLE_QEMU_LOG_H */
