/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest-maps.h - the executable mappings a Linux guest's agent reported (the "agent-map" events
 * of events.jsonl) and the ELF files of the trace's build-ID store (DIR/debuginfod/<build-id>/
 * executable, vmm/record/elf-store.c): what names a user address of a PIE or a shared
 * library at its load address without --symbols.
 *
 *   {"time":..,"vcpu":..,"event":"agent-map","v":1,"pid":60,"start":"0x55d0c000",
 *    "end":"0x55d0d000","offset":"0x1000","path":"/bin/demo","build_id":"4f1c..."}
 *
 * "pid" is the guest process (its tgid). A mapping of a file at START with file offset OFF
 * has the bias START - vaddr(OFF), vaddr() the file's PT_LOAD segments (symbols__offset_vaddr()).
 * Each build ID's file is loaded once (symbols__load(), with its checks of hostile ELF files),
 * when an address first needs it, and only when its own GNU build ID note is the one its
 * directory names. Everything comes from the guest: lines that do not parse are counted, a
 * file that cannot be used is reported once and names nothing.
 */
#ifndef VBTS_DECODER_GUEST_MAPS_H
#define VBTS_DECODER_GUEST_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

/* Mappings kept at most: every line events.jsonl may hold (VBTS_AGENT_EVENTS_MAX). */
#define GUEST_MAPS_MAX 65536
/* Bytes of a reported path kept (VBTS_AGENT_PATH_MAX). */
#define GUEST_MAPS_PATH_MAX 256

/**
 * struct guest_map - one reported mapping.
 * @pid:      the guest process (tgid) it belongs to
 * @time:     when it was reported, ns since the trace started
 * @start:    its first address
 * @end:      one past its last
 * @offset:   the file offset mapped at @start
 * @path:     the file's path in the guest, guest bytes (escape before printing)
 * @build_id: the file's GNU build ID, lowercase hex
 * @order:    its position among the mappings read (the line order)
 */
struct guest_map {
	int64_t pid;
	uint64_t time;
	uint64_t start, end, offset;
	const char *path;
	const char *build_id;
	size_t order;
};

struct guest_maps;

/**
 * guest_maps__new() - an empty set of mappings.
 * @store:    the build-ID store (DIR/debuginfod), or NULL: then no file names anything
 * @warn:     called with one printable line per file that cannot be used, or NULL
 * @warn_ctx: its argument
 *
 * Return: the set, or NULL with errno = ENOMEM.
 */
struct guest_maps *guest_maps__new(const char *store,
				   void (*warn)(void *warn_ctx, const char *line), void *warn_ctx);

/**
 * guest_maps__add_line() - take the agent-map event of one events.jsonl line.
 * @gm:   set
 * @line: the line, NUL-terminated, without its newline
 *
 * Other events are ignored; an agent-map event without a valid pid, start < end, offset,
 * build ID (2 to SYMBOLS_BUILD_ID_MAX bytes in hex) and a path of at most GUEST_MAPS_PATH_MAX
 * bytes is counted as bad, as is one past GUEST_MAPS_MAX.
 *
 * Return: 0, or -ENOMEM.
 */
int guest_maps__add_line(struct guest_maps *gm, const char *line);

/**
 * guest_maps__load() - take the agent-map events of an events.jsonl file.
 * @gm:   set
 * @path: the file (at most PROCMAP_FILE_MAX bytes, lines of at most PROCMAP_LINE_MAX are read)
 *
 * Return: 0, or -errno: the errors of input_lines__open() (-ENOENT, ...), -EIO, -ENOMEM.
 */
int guest_maps__load(struct guest_maps *gm, const char *path);

/**
 * guest_maps__nr() - mappings kept.
 * @gm: set
 *
 * Return: the count.
 */
size_t guest_maps__nr(const struct guest_maps *gm);

/**
 * guest_maps__bad() - agent-map events that were not kept.
 * @gm: set
 *
 * Return: the count.
 */
uint64_t guest_maps__bad(const struct guest_maps *gm);

/**
 * guest_maps__get() - the i-th mapping, in the order (pid, time, line).
 * @gm: set
 * @i:  index below guest_maps__nr()
 *
 * Return: the mapping.
 */
const struct guest_map *guest_maps__get(const struct guest_maps *gm, size_t i);

/**
 * guest_maps__range() - the mappings of a process reported in a time window.
 * @gm:    set
 * @pid:   the process (tgid)
 * @lo:    first time
 * @hi:    end of the window (excluded)
 * @first: receives the index of the first
 *
 * O(log n).
 *
 * Return: how many there are, from @first on.
 */
size_t guest_maps__range(const struct guest_maps *gm, int64_t pid, uint64_t lo, uint64_t hi,
			 size_t *first);

/**
 * guest_maps__table() - the symbol table of a mapping's file, and its bias.
 * @gm:   set
 * @m:    a mapping of @gm
 * @bias: receives run-time minus link-time address for the mapping
 *
 * The file is loaded the first time one of its mappings asks (once per build ID, whatever
 * the number of mappings and processes), and checked: a regular file of at most
 * SYMBOLS_FILE_MAX bytes that is ELF (symbols__load()), whose build ID is its directory's.
 * A file that fails is reported once through the warn callback.
 *
 * Return: the table, or NULL when the store has no usable file for the build ID or the file
 * has no loadable segment holding the mapping's offset.
 */
const struct symbols *guest_maps__table(struct guest_maps *gm, const struct guest_map *m,
					uint64_t *bias);

/**
 * guest_maps__files_loaded() - build IDs whose file was opened, for tests.
 * @gm: set
 *
 * Return: the count.
 */
size_t guest_maps__files_loaded(const struct guest_maps *gm);

/**
 * guest_maps__free() - release the set and the tables it loaded.
 * @gm: set, may be NULL
 */
void guest_maps__free(struct guest_maps *gm);

#endif /* VBTS_DECODER_GUEST_MAPS_H */
