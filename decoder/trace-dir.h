/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-dir.h - a vbts trace directory opened for decoding: vm.json, the vcpuN.ring files,
 * events.jsonl (task names) and the symbols of the guest's code.
 *
 * vm.json (written by `vbts run --trace`), of a multiboot guest:
 *   {"version":1,"vm_id":"<hex>","image":"PATH","build_id":"<hex>","vcpus":N,
 *    "start_time_ns":..., ...}
 * of a Linux guest:
 *   {"version":1,"vm_id":"<hex>","kernel":"PATH","system_map":"PATH","kaslr_slide":N,
 *    "vmlinux":"PATH","vcpus":N, ...}    (system_map, kaslr_slide and vmlinux optional)
 * Only "vcpus" matters for decoding (without it the vcpuN.ring files are counted); "image"
 * and "build_id" select the symbols of a multiboot guest, "system_map", "vmlinux" and
 * "kaslr_slide" (bytes: run-time minus link-time address of the kernel's text; absent when
 * unknown, and then kernel addresses are not symbolized) those of a Linux guest's kernel,
 * "vm_id" is checked against the ring headers. A relative path that does not exist is also
 * looked for in the trace directory. kallsyms.map (TRACE_DIR_KALLSYMS), the running kernel's
 * symbols as `vbts run` read them from its kallsyms tables, is the Linux kernel's System.map
 * when there and no --system-map is given. The programs of a Linux guest's tasks are symbolized from
 * the ELF files of trace_dir_options.symbol_paths (symbolizer.h).
 *
 * Every file is untrusted and read through input-file.h: a regular file of bounded size
 * (vm.json TRACE_DIR_VM_JSON_MAX, events.jsonl PROCMAP_FILE_MAX in lines of at most
 * PROCMAP_LINE_MAX, the image SYMBOLS_FILE_MAX, System.map SYSTEM_MAP_FILE_MAX in lines of at
 * most SYSTEM_MAP_LINE_MAX, a ring the size its header gives), never a FIFO or a device.
 * Without a usable vm.json or any readable ring there is no trace; a ring, events.jsonl or
 * the image that cannot be read is reported and the rest decoded.
 */
#ifndef VBTS_DECODER_TRACE_DIR_H
#define VBTS_DECODER_TRACE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"
#include "procmap.h"
#include "ring-reader.h"
#include "symbolizer.h"
#include "symbols.h"

/* Room for one error line. */
#define TRACE_DIR_ERR_MAX 1024
/* Warning lines of one trace_dir__open() at most; one more line counts the others. */
#define TRACE_DIR_WARN_MAX 10
/* Largest vm.json read; `vbts run` writes less than 1 KiB. */
#define TRACE_DIR_VM_JSON_MAX (1 << 20)
/* The guest kernel's symbols in System.map form, written by `vbts run` (guest-tasks.h). */
#define TRACE_DIR_KALLSYMS "kallsyms.map"

struct trace_dir;

/**
 * struct trace_dir_options - how to open a trace directory.
 * @image:    ELF file for symbols instead of the one vm.json names, or NULL
 * @no_symbols: do not load symbols at all (output that does not show them)
 * @symbol_paths: ELF files or directories of them for the tasks' programs
 *            (symbol_files__add()); a PATH that cannot be used is a problem that leaves part
 *            of the trace unsymbolized (trace_dir__damaged())
 * @nr_symbol_paths: how many
 * @system_map: the guest kernel's System.map instead of the one vm.json names, or NULL
 * @kaslr_slide: the guest kernel's KASLR slide instead of vm.json's, when @kaslr_slide_set
 * @warn:     called with one line per problem that does not stop decoding (a ring skipped,
 *            missing symbols, bad events lines, vm_id mismatch), or NULL to drop them; at most
 *            TRACE_DIR_WARN_MAX lines, then one that counts the others
 * @warn_ctx: argument of @warn
 */
struct trace_dir_options {
	const char *image;
	bool no_symbols;
	const char *const *symbol_paths;
	size_t nr_symbol_paths;
	const char *system_map;
	int64_t kaslr_slide;
	bool kaslr_slide_set;
	void (*warn)(void *warn_ctx, const char *line);
	void *warn_ctx;
};

/**
 * trace_dir__open() - open and validate a trace directory.
 * @dir:    the directory
 * @opts:   options, may be NULL
 * @err:    receives one error line on failure
 * @errlen: size of @err (TRACE_DIR_ERR_MAX is enough)
 *
 * A ring file that cannot be read is skipped with a warning, so are events.jsonl and the
 * image: see trace_dir__damaged().
 *
 * Return: the trace, or NULL with errno set: ENOENT (no directory, no vm.json, the only ring
 * missing), ENOTDIR, EINVAL (vm.json is invalid or not a regular file, no ring file is
 * readable), EFBIG (vm.json larger than TRACE_DIR_VM_JSON_MAX), EIO, ENOMEM.
 */
struct trace_dir *trace_dir__open(const char *dir, const struct trace_dir_options *opts,
				  char *err, size_t errlen);

/**
 * trace_dir__nr_vcpus() - number of ring files opened (unreadable ones are skipped).
 * @t: trace
 *
 * Return: the count, at least 1.
 */
unsigned int trace_dir__nr_vcpus(const struct trace_dir *t);

/**
 * trace_dir__ring() - the i-th ring.
 * @t: trace
 * @i: index < trace_dir__nr_vcpus()
 *
 * Return: the reader, or NULL when that vCPU was recorded in stream mode (segments).
 */
struct ring_reader *trace_dir__ring(const struct trace_dir *t, unsigned int i);

/**
 * trace_dir__vcpu_id() - the vCPU of the i-th ring or stream.
 * @t: trace
 * @i: index < trace_dir__nr_vcpus()
 *
 * Return: its vCPU id.
 */
uint32_t trace_dir__vcpu_id(const struct trace_dir *t, unsigned int i);

/**
 * trace_dir__window() - the records the i-th ring or stream holds, [first, end) in seqs.
 * @t:     trace
 * @i:     index < trace_dir__nr_vcpus()
 * @first: receives the first
 * @end:   receives one past the last
 */
void trace_dir__window(const struct trace_dir *t, unsigned int i, uint64_t *first,
		       uint64_t *end);

/**
 * trace_dir__decoder() - a decoder over the rings.
 * @t:    trace
 * @vcpu: only this vCPU id, or -1 for all
 *
 * Each call re-reads the rings from their oldest record (a second pass, or a live trace).
 *
 * Return: the decoder, or NULL with errno set: ENOENT (no such vCPU), EIO (a ring's committed
 * count went backwards), ENOMEM.
 */
struct decoder *trace_dir__decoder(struct trace_dir *t, int vcpu);

/**
 * trace_dir__damaged() - problems that left part of the trace unread.
 * @t: trace
 *
 * Each was reported through the warn callback: a ring file skipped, events.jsonl not a regular
 * file or read only in part, the image, System.map or vmlinux not a regular file or too
 * large, a System.map or vmlinux named by an option that cannot be read, a --symbols PATH
 * that cannot be used.
 *
 * Return: their count, 0 when everything could be read.
 */
unsigned int trace_dir__damaged(const struct trace_dir *t);

/**
 * trace_dir__kaslr_slide() - the guest kernel's KASLR slide (--kaslr-slide, else vm.json's).
 * @t:     the trace directory
 * @slide: the slide, when known
 *
 * Return: true when known.
 */
bool trace_dir__kaslr_slide(const struct trace_dir *t, uint64_t *slide);

/**
 * trace_dir__procmap() - the process map from events.jsonl (empty when there is none).
 * @t: trace
 *
 * Return: the map.
 */
const struct procmap *trace_dir__procmap(const struct trace_dir *t);

/**
 * trace_dir__task_selects() - whether a record passes a --task filter.
 * @pm: the process map (trace_dir__procmap())
 * @r: the record
 * @want: a flag per process of @pm, the processes selected
 * @ids: the --task keys that are pids: they select a thread the trace named by its pid or tgid
 * @nr_ids: how many @ids
 * @cr3_task: the task of @r's CR3 (procmap__lookup(), or a memo of it), or NULL
 *
 * A record is of the process of its CR3's task, and also, when its thread ran in that address
 * space under a thread event (a thread, or a vfork child before its exec), of that thread's
 * process. Records of no branch (losses, starts, stops, freezes, unknown) always pass.
 *
 * Return: true when @r is of a selected process.
 */
bool trace_dir__task_selects(const struct procmap *pm, const struct decoded_record *r,
			     const bool *want, const uint32_t *ids, size_t nr_ids,
			     const struct procmap_task *cr3_task);

/**
 * trace_dir__symbols() - the guest image's symbols.
 * @t: trace
 *
 * Return: the table, or NULL when none could be loaded.
 */
const struct symbols *trace_dir__symbols(const struct trace_dir *t);

/**
 * trace_dir__symbolizer() - every source of symbols of the trace: the image, the guest
 * kernel's tables, the tasks' programs.
 * @t: trace
 *
 * Return: the symbolizer, or NULL when the trace was opened with no_symbols.
 */
const struct symbolizer *trace_dir__symbolizer(const struct trace_dir *t);

/**
 * trace_dir__close() - close everything.
 * @t: trace, may be NULL
 */
void trace_dir__close(struct trace_dir *t);

#endif /* VBTS_DECODER_TRACE_DIR_H */
