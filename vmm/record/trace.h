/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - the trace directory of a run: vm.json, one ring file per vCPU, events.jsonl.
 * Created whole or not at all: on a startup error everything created is removed again.
 */
#ifndef VBTS_VMM_TRACE_H
#define VBTS_VMM_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "seg-writer.h"
#include "tracer.h"

struct ring_writer;
struct trace;

/* Total bytes of ring files a run may map (also bounded by the host's available memory). */
#define TRACE_RING_BUDGET (1ULL << 30)
#define TRACE_DEFAULT_RING_RECORDS 65536
/* Stream mode: records per segment (1.5 MiB mapped per vCPU), and the most a run may ask. */
#define TRACE_DEFAULT_SEGMENT_RECORDS 65536
#define TRACE_MAX_SEGMENT_RECORDS (1ULL << 22)
/* Stream mode: the default disk budget, at most half the free space of the file system. */
#define TRACE_DEFAULT_DISK_BUDGET (4ULL << 30)

/* enum trace_mode: how each vCPU keeps its records. */
enum trace_mode {
	TRACE_MODE_WRAP = 0,   /* a ring file per vCPU: the newest records (flight recorder) */
	TRACE_MODE_STREAM = 1, /* compressed segment files: every record, up to a disk budget */
};

/* enum trace_on_full: stream mode, when the disk budget or the disk is full. */
enum trace_on_full {
	TRACE_ON_FULL_STALL = 0, /* the traced vCPU waits for space */
	TRACE_ON_FULL_DROP = 1,  /* records are dropped and counted in-stream */
};

/**
 * struct trace_collector_config - the collector's knobs, in one place for `vbts run` and the
 * control socket.
 * @mode:            enum trace_mode
 * @ring_records:    wrap: records per ring (default TRACE_DEFAULT_RING_RECORDS)
 * @segment_records: stream: records per segment (0: TRACE_DEFAULT_SEGMENT_RECORDS)
 * @disk_budget:     stream: bytes of segment files of the whole trace (0: the default,
 *                   TRACE_DEFAULT_DISK_BUDGET or half the file system's free space)
 * @on_full:         stream: enum trace_on_full
 */
struct trace_collector_config {
	unsigned int mode;
	uint64_t ring_records;
	uint64_t segment_records;
	uint64_t disk_budget;
	unsigned int on_full;
};

/**
 * trace__collector_defaults() - the default collector configuration (wrap mode).
 * @c: receives it
 */
void trace__collector_defaults(struct trace_collector_config *c);

/**
 * trace__collector_check() - validate @c against the memory and disk limits, and fill in
 * its defaults (0 fields of stream mode).
 * @c:      the configuration, completed in place
 * @vcpus:  vCPUs of the run
 * @dir:    the trace directory (or a path in the file system it will be on)
 * @avail:  bytes of host memory available (0: unknown)
 * @err:    receives one line naming the limit on refusal
 * @errlen: its size
 *
 * Return: 0, -EINVAL (a value out of range: 0 records, an unknown mode), -E2BIG (beyond the
 * memory budget or beyond the free space of the file system), -ENOSPC (a disk budget below
 * one segment per vCPU).
 */
int trace__collector_check(struct trace_collector_config *c, unsigned int vcpus,
			   const char *dir, uint64_t avail, char *err, size_t errlen);

/**
 * struct trace_config - what vm.json records and the rings need.
 * @dir:          trace directory: must not exist, or be an empty directory
 * @image:        image path as given, NULL when unknown (an attached VM)
 * @build_id:     its GNU build ID in hex, "" when none
 * @vcpus:        number of vCPUs (one ring each)
 * @memory_mib:   guest RAM
 * @backend:      tracer backend name
 * @cpl:          CPL filter
 * @collector:    mode, ring or segment size, disk budget (trace__collector_check()ed)
 * @stop:         stream mode, on-full stall: true ends a stall (the run is ending); may be
 *                NULL
 * @stop_ctx:     its argument
 * @linux_kernel: @image is a Linux kernel: vm.json names it "kernel" (the decoder then looks
 *                for the guest kernel's symbols, not an image's)
 * @system_map:   the kernel's System.map, NULL when not given
 * @attach_pid:   `vbts attach`: the pid of the VMM traced (vm.json's "attached"), 0 for a VM
 *                of `vbts run`
 * @attach_via:   how it was found: "pid", "qemu" (started by vbts attach), "libvirt"
 * @attach_domain: the libvirt domain's name, NULL otherwise
 */
struct trace_config {
	const char *dir;
	const char *image;
	const char *build_id;
	unsigned int vcpus;
	unsigned int memory_mib;
	const char *backend;
	enum vbts_cpl_filter cpl;
	struct trace_collector_config collector;
	bool linux_kernel;
	const char *system_map;
	bool (*stop)(void *ctx);
	void *stop_ctx;
	int attach_pid;
	const char *attach_via;
	const char *attach_domain;
};

/**
 * trace__check_budget() - whether @vcpus rings of @records records fit the memory budget.
 * @records:   records per ring
 * @vcpus:     rings
 * @avail:     bytes of host memory available (0: unknown, only TRACE_RING_BUDGET applies)
 * @err:       receives one line on failure
 * @errlen:    its size
 *
 * Return: 0, -EINVAL for 0 records, -E2BIG beyond the budget.
 */
int trace__check_budget(uint64_t records, unsigned int vcpus, uint64_t avail, char *err,
			size_t errlen);

/**
 * trace__check_dir() - whether trace__create() would accept @dir, without creating anything:
 * it does not exist and its parent is a writable directory, or it is an empty directory.
 * @dir:    the trace directory
 * @err:    receives one line on refusal ("trace directory DIR is not a directory", ...)
 * @errlen: its size
 *
 * Return: 0, -ENOTDIR (a file is there, or on the way), -ENOTEMPTY, or -errno (ENOENT for a
 * missing parent or a dangling symbolic link, EACCES, ...).
 */
int trace__check_dir(const char *dir, char *err, size_t errlen);

/**
 * trace__host_available_memory() - MemAvailable of /proc/meminfo in bytes.
 *
 * Return: bytes, or 0 when unknown.
 */
uint64_t trace__host_available_memory(void);

/**
 * trace__cpl_name() - "all", "user" or "kernel".
 * @cpl: filter
 *
 * Return: a static string.
 */
const char *trace__cpl_name(enum vbts_cpl_filter cpl);

/**
 * trace__create() - create the trace directory with vm.json, the ring files and events.jsonl.
 * @cfg: the run
 * @err: receives one line on failure ("trace directory DIR exists and is not empty", "...
 *       is not a directory", ...)
 * @errlen: its size
 *
 * Return: the trace, or NULL with errno set (ENOTEMPTY, ENOTDIR, EEXIST, EINVAL, E2BIG, or the
 * failing call's errno); nothing is left behind on failure.
 */
struct trace *trace__create(const struct trace_config *cfg, char *err, size_t errlen);

/**
 * trace__collector() - the collector configuration in force.
 * @t:   trace
 * @out: receives it
 */
void trace__collector(const struct trace *t, struct trace_collector_config *out);

/**
 * trace__set_collector() - change the collector configuration of a running trace.
 * @t:      trace
 * @c:      the new configuration; only the disk budget and on-full may change while the run
 *          goes on (mode and sizes are fixed when the files are created)
 * @err:    receives one line on refusal
 * @errlen: its size
 *
 * Return: 0, -EBUSY (mode or size changed), or as trace__collector_check().
 */
int trace__set_collector(struct trace *t, const struct trace_collector_config *c, char *err,
			 size_t errlen);

/**
 * trace__lost() - records dropped by the collector since the start, all vCPUs.
 * @t: trace
 *
 * Return: the count (stream mode; wrap mode counts overwritten records in the ring headers).
 */
uint64_t trace__lost(const struct trace *t);

/**
 * trace__set_on_closed() - in stream mode, call @fn(@ctx, name) for each segment any vCPU's
 * collector closes from now on (seg_writer__set_on_closed()); nothing in wrap mode.
 * @t:   trace
 * @fn:  the callback, NULL for none
 * @ctx: its argument
 */
void trace__set_on_closed(struct trace *t, seg_closed_fn fn, void *ctx);

/**
 * trace__ring() - the ring writer of one vCPU.
 * @t:    trace
 * @vcpu: index
 *
 * Return: the writer, owned by @t.
 */
struct ring_writer *trace__ring(struct trace *t, unsigned int vcpu);

/**
 * trace__events() - events.jsonl, opened for appending.
 * @t: trace
 *
 * Return: the stream, owned by @t.
 */
FILE *trace__events(struct trace *t);

/**
 * trace__vm_id() - the run's random id (also in vm.json and every ring header).
 * @t: trace
 *
 * Return: the id.
 */
uint64_t trace__vm_id(const struct trace *t);

/**
 * trace__set_kaslr_slide() - add the guest kernel's KASLR slide to vm.json (replaced whole).
 * @t:     trace
 * @slide: run-time minus link-time address of the kernel's text
 *
 * Return: 0 or -errno (vm.json stays as it was).
 */
int trace__set_kaslr_slide(struct trace *t, uint64_t slide);

/**
 * trace__set_json() - add a member to vm.json (replaced whole).
 * @t:     trace
 * @key:   its name
 * @value: its value; the reference is taken, also on failure
 *
 * Return: 0 or -errno (vm.json stays as it was).
 */
int trace__set_json(struct trace *t, const char *key, json_t *value);

/**
 * trace__close() - close the rings and events.jsonl cleanly; frees @t.
 * @t: may be NULL
 *
 * Return: 0 or the first -errno of closing a file (everything is closed regardless).
 */
int trace__close(struct trace *t);

/**
 * trace__abort() - close and remove everything trace__create() made; frees @t.
 * @t: may be NULL
 */
void trace__abort(struct trace *t);

#endif /* VBTS_VMM_TRACE_H */
