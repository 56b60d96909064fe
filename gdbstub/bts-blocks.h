/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bts-blocks.h - a thread's branches as gdb's BTS blocks: the sequential runs between the
 * branches inside the thread's address space, with excursions out of it that come back where
 * they left (system calls, interrupts, faults) not breaking a run.
 */
#ifndef VBTS_GDBSTUB_BTS_BLOCKS_H
#define VBTS_GDBSTUB_BTS_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btrace-xml.h"

/**
 * struct bts_branch - one branch, oldest first, as the block builder needs it.
 * @from, @to:   source and target addresses
 * @from_in:     its source is in the thread's address space (CPL and CR3)
 * @to_in:       its target is; the newest branch's target is taken as inside (it is the PC)
 *               but when that branch leaves the space from inside it: then the thread
 *               stopped at its source (a process that crashed into the kernel)
 * @after_break: records were lost, or tracing stopped, between it and the branch before
 */
struct bts_branch {
	uint64_t from, to;
	bool from_in, to_in;
	bool after_break;
};

/**
 * bts_blocks__build() - the blocks of @nr branches, newest first, the first ending at the
 * newest branch's target (or source, see below).
 * @br:        the branches, oldest first
 * @nr:        how many
 * @next_insn: the address of the instruction after the one at @addr, 0 when unknown
 * @ctx:       argument of @next_insn
 * @out:       receives the blocks (malloc'd; NULL when there are none)
 * @nr_out:    receives their count
 *
 * A branch inside the space ends the block that runs to its source and starts one at its
 * target. A branch that leaves the space leaves the block open: when the branch that comes
 * back goes to the instruction left, or to the next one, the block goes on; elsewhere, the
 * block ends at the instruction left and a new one starts where it came back. A break ends
 * a block where nothing says where it ended: that block is left out, but for one open
 * outside the space, which ended at the instruction it left. A branch from inside the space
 * while a block is open outside it (the way back was not recorded, as in a user-mode trace)
 * goes on with the open block when the instructions from the one left run straight on to its
 * source (at most 4096 of them, by @next_insn); else it closes the open block at the
 * instruction it left, and the run up to that branch is unknown and left out. When the
 * newest branch leaves the space from inside it (its to_in false: a fault the thread
 * stopped at), the newest block ends at its source.
 *
 * Return: 0, or -ENOMEM.
 */
int bts_blocks__build(const struct bts_branch *br, size_t nr,
		      uint64_t (*next_insn)(void *ctx, uint64_t addr), void *ctx,
		      struct gdb_btrace_block **out, size_t *nr_out);

#endif /* VBTS_GDBSTUB_BTS_BLOCKS_H */
