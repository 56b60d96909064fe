/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent.h - the agent channel (vbts/agent-proto.h): a byte stream of JSON lines per vCPU,
 * each line bounded, parsed, reduced to the known members, stamped with time and vCPU and
 * appended to events.jsonl. Everything else is counted, never logged per line.
 */
#ifndef VBTS_VMM_AGENT_H
#define VBTS_VMM_AGENT_H

#include <stdint.h>
#include <stdio.h>

#include "elf-store.h"
#include "iobus.h"

struct agent;

/* Longest string member kept. */
#define AGENT_STRING_MAX 64

/**
 * struct agent_stats - what the guest sent.
 * @stored:      lines written to events.jsonl
 * @too_long:    lines over VBTS_AGENT_LINE_MAX bytes (dropped)
 * @invalid:     lines that are not a JSON object with a string "event" (dropped)
 * @over_limit:  good lines past VBTS_AGENT_EVENTS_MAX (dropped)
 * @members_dropped: unknown or ill-typed members removed from stored lines
 * @bytes:       bytes received
 * @elf_dropped: agent-elf-* lines refused (bad members, refused by the store, no store,
 *               from another address space than the upload's)
 * @forged:      task, exec or exit lines of a guest whose processes the VMM follows itself
 *               (dropped: those events are the VMM's own, see agent__set_introspected())
 * @elf:         the ELF store's counters (zero without a store)
 */
struct agent_stats {
	uint64_t stored;
	uint64_t too_long;
	uint64_t invalid;
	uint64_t over_limit;
	uint64_t members_dropped;
	uint64_t bytes;
	uint64_t elf_dropped;
	uint64_t forged;
	struct elf_store_stats elf;
};

/* Writers (address spaces) whose partial lines are kept apart per vCPU; the least recently
 * written one makes room for a new writer (its partial line is dropped, counted invalid). */
#define AGENT_WRITERS 8
/* Complete lines from other writers after which an unfinished upload may be taken over by a
 * begin from another address space (one that never ends its upload blocks nobody for long). */
#define AGENT_ELF_IDLE_LINES 1024

/**
 * agent_space_fn - the address space of the code writing on a vCPU now.
 * @ctx:  what agent__set_space() was given
 * @vcpu: the vCPU, in the thread that runs it
 *
 * Return: an id of the address space (a guest CR3's address-space bits), 0 when unknown.
 */
typedef uint64_t (*agent_space_fn)(void *ctx, unsigned int vcpu);

/**
 * agent__create() - an agent channel.
 * @nr_vcpus: vCPUs that may write (AGENT_WRITERS line buffers each)
 * @events:   where stored lines go (not owned); NULL to count only
 * @start_ns: CLOCK_MONOTONIC of trace start; "time" is relative to it
 * @max_events: lines stored at most (VBTS_AGENT_EVENTS_MAX in the VMM)
 *
 * Return: the channel, or NULL with errno ENOMEM.
 */
struct agent *agent__create(unsigned int nr_vcpus, FILE *events, uint64_t start_ns,
			    uint64_t max_events);

/**
 * agent__destroy() - flush and free; a partial last line is dropped (counted invalid).
 * @a: may be NULL
 */
void agent__destroy(struct agent *a);

/**
 * agent__set_events() - where stored lines go from now on (the trace directory is created
 * after the devices).
 * @a:        channel
 * @events:   stream, not owned; NULL to count only
 * @start_ns: CLOCK_MONOTONIC of trace start; "time" is relative to it from now on
 */
void agent__set_events(struct agent *a, FILE *events, uint64_t start_ns);

/**
 * agent__set_store() - where uploaded ELF files go from now on: DIR/debuginfod (an unfinished
 * upload is dropped).
 * @a:   channel
 * @dir: the trace directory; NULL to count and drop uploads
 *
 * Return: 0 or -ENOMEM.
 */
int agent__set_store(struct agent *a, const char *dir);

/**
 * agent__feed() - one byte from a vCPU.
 * @a:    channel
 * @vcpu: the vCPU (out-of-range indices are counted as invalid bytes of vCPU 0's stream)
 * @byte: the byte
 */
void agent__feed(struct agent *a, unsigned int vcpu, uint8_t byte);

/**
 * agent__feed_space() - one byte from a vCPU, written by the code of address space @space.
 * @a:     channel
 * @vcpu:  the vCPU (out-of-range indices are counted as invalid bytes)
 * @space: the writer's address space (agent_space_fn): processes that write at once, each a
 *         byte at a time, keep their lines apart; an ELF upload's lines count only from the
 *         address space that began it
 * @byte:  the byte
 */
void agent__feed_space(struct agent *a, unsigned int vcpu, uint64_t space, uint8_t byte);

/**
 * agent__set_space() - how agent__io() learns the writer of each byte.
 * @a:   channel
 * @fn:  called for each byte written, on the vCPU's thread, without the channel's lock;
 *       NULL: every byte is of address space 0 (one writer per vCPU)
 * @ctx: passed to @fn
 */
void agent__set_space(struct agent *a, agent_space_fn fn, void *ctx);

/**
 * agent__io() - io_handler_fn of VBTS_AGENT_PORT: each written byte is fed; reads return 0.
 * @dev: the struct agent
 * @acc: the access
 *
 * Return: 0.
 */
int agent__io(void *dev, struct io_access *acc);

/**
 * agent__set_introspected() - the VMM follows the guest's processes itself (a Linux guest).
 * @a:  the channel
 * @on: from now on, the guest's own task, exec and exit lines are dropped and counted as
 *      forged: in events.jsonl those names are the VMM's, which decode trusts
 */
void agent__set_introspected(struct agent *a, bool on);

/**
 * agent__stats() - copy the counters.
 * @a:     channel
 * @stats: filled in
 */
void agent__stats(struct agent *a, struct agent_stats *stats);

/**
 * agent__register() - put the device on the VM's PIO bus: VBTS_AGENT_PORT, served by agent__io().
 * @a:   the channel
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int agent__register(struct agent *a, struct io_bus *pio);

#endif /* VBTS_VMM_AGENT_H */
