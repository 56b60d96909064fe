/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collector.h - the attach collector: opens a running VM's tracing through KVM's attach
 * interface (kvm-patches/), maps each vCPU's kernel ring and copies its records into the
 * trace directory's ring files with the same routine as the VMM's kvm backend.
 *
 * Locking: a collector belongs to one thread.
 */
#ifndef VBTS_ATTACH_COLLECTOR_H
#define VBTS_ATTACH_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include "tracer.h"
#include "vmm-fds.h"

/* --task: CR3 values given at most. */
#define COLLECTOR_MAX_CR3 64
/* --start-at: process names given at most. */
#define COLLECTOR_MAX_START_AT 16

struct collector;

/**
 * struct collector_config - what to trace and where.
 * @trace_dir:    the trace directory (new or empty)
 * @cpl:          CPL filter
 * @ring_records: records per ring file (wrap mode)
 * @collector:    the trace's mode and, in stream mode, its segment size, disk budget and
 *                on-full behaviour, as `vbts run --mode stream` (trace.h); its ring_records
 *                is @ring_records
 * @stop:         stream mode, on-full stall: true ends a stall (a stop signal came); may be
 *                NULL
 * @stop_ctx:     its argument
 * @cr3:          --task: only these address spaces (guest CR3, PCID bits ignored)
 * @nr_cr3:       how many (0: all)
 * @via:          how the VM was found: "pid", "qemu" (started by vbts attach), "libvirt"
 * @domain:       the libvirt domain's name, NULL otherwise
 * @image:        the guest image (QEMU's -kernel), NULL when unknown; a Linux kernel's (a
 *                bzImage or vmlinux with BTF) processes are named through introspection
 * @system_map:   its System.map, or NULL
 * @start_at:     process names (a comm or the executable's base name, as `vbts run --task`):
 *                branches are recorded from the first load of one of them the collector sees
 *                (a Linux guest whose kernel is introspected); until then the rings record
 *                address-space loads only and the guest runs unstepped
 * @nr_start_at:  their number, at most COLLECTOR_MAX_START_AT
 */
struct collector_config {
	const char *trace_dir;
	enum vbts_cpl_filter cpl;
	uint64_t ring_records;
	struct trace_collector_config collector;
	bool (*stop)(void *ctx);
	void *stop_ctx;
	uint64_t cr3[COLLECTOR_MAX_CR3];
	unsigned int nr_cr3;
	const char *via;
	const char *domain;
	const char *image;
	const char *system_map;
	const char *start_at[COLLECTOR_MAX_START_AT];
	unsigned int nr_start_at;
};

/**
 * collector__supported() - whether this host's KVM lets another process trace a VM.
 * @kvm_fd: /dev/kvm
 *
 * Return: true when KVM reports the attach capability.
 */
bool collector__supported(int kvm_fd);

/**
 * collector__attach() - open the VM's tracing, create the trace directory, enable the rings.
 * @kvm_fd: /dev/kvm
 * @pidfd:  a pidfd of the VMM
 * @fds:    its VM and vCPU fds (vmm-fds.h)
 * @cfg:    what to trace
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: the collector, or NULL with errno set: ENOTSUP (no attach support), EPERM (no
 * permission to trace that process), EBUSY (another collector traces this VM), ESRCH (the
 * VMM is gone), the errors of trace__create(); nothing is left in the trace directory then.
 */
struct collector *collector__attach(int kvm_fd, int pidfd, const struct vmm_fds *fds,
				    const struct collector_config *cfg, char *err, size_t errlen);

/**
 * collector__fd() - the fd to poll(): readable at a ring's watermark, hung up when the VM is
 * destroyed.
 * @c: collector
 *
 * Return: the fd.
 */
int collector__fd(const struct collector *c);

/**
 * collector__events() - the trace's events.jsonl, for what else the trace records (the guest
 * agent's channel: agent-socket.h).
 * @c:        collector
 * @start_ns: receives the trace's start (CLOCK_MONOTONIC), which events' times count from
 *
 * Return: the stream, owned by the trace (valid until collector__close()).
 */
FILE *collector__events(struct collector *c, uint64_t *start_ns);

/**
 * collector__trace() - the trace directory the collector writes.
 * @c: collector
 *
 * Return: its trace, owned by @c until collector__close().
 */
struct trace *collector__trace(struct collector *c);

/**
 * collector__drain() - copy what every vCPU's kernel ring holds into the ring files.
 * @c: collector
 *
 * Return: records copied.
 */
uint64_t collector__drain(struct collector *c);

/**
 * collector__freeze() - stop recording at once and keep the rings as they are (a crash):
 * the kernel rings are disabled, drained, and each ring file gets a FREEZE record.
 * @c:      collector
 * @reason: enum vbts_freeze_reason
 */
void collector__freeze(struct collector *c, unsigned int reason);

/**
 * collector__crash_report() - the crash report of a panic once the rings are frozen
 * (attach-crash.h): crash.json (@index 0) or crash-N.json in the trace directory, from the
 * ring of the vCPU that recorded last, with kallsyms.map and the KASLR slide written first
 * for a Linux guest whose kernel was found, so that its kernel addresses are named.
 * @c:     collector, after collector__freeze()
 * @index: 0 for crash.json, N for crash-N.json
 * @vcpu:  receives the vCPU reported on
 *
 * Return: 0, -EINVAL when the rings are not frozen, or the -errno of writing the report.
 */
int collector__crash_report(struct collector *c, unsigned int index, unsigned int *vcpu);

/**
 * collector__close() - disable the rings, copy what is left, close the trace directory and
 * the tracing fd (the VM keeps running); frees @c.
 * @c: may be NULL
 *
 * Return: 0 or -errno of closing the trace.
 */
int collector__close(struct collector *c);

#endif /* VBTS_ATTACH_COLLECTOR_H */
