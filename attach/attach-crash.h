/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attach-crash.h - the crash report of `vbts attach` (crash.json, the format and limits of
 * `vbts run`'s, vmm/record/crash-report.h): written once a crash that QEMU or libvirt reports
 * has frozen the rings, from the frozen ring of the vCPU that recorded last.
 *
 * Locking: none; called on the thread that writes the rings (the collector's).
 */
#ifndef VBTS_ATTACH_ATTACH_CRASH_H
#define VBTS_ATTACH_ATTACH_CRASH_H

#include <stdint.h>

struct guest_tasks;
struct ring_writer;

/* The registers note of every report of vbts attach: it has none to give. */
#define ATTACH_CRASH_REGS_NOTE                                                                 \
	"vbts attach reads no registers: KVM refuses a vCPU's ioctls from any process but its " \
	"VMM's, and the tracer gives none; the vCPU is the one whose ring got records last"

/**
 * struct attach_crash_vcpu - what the report is made from, per vCPU.
 * @ring:         the vCPU's ring or stream (frozen), read by its writer's thread
 * @last_copy_ns: the last copy that brought this vCPU records, ns since the trace started;
 *                0 when none did
 * @last_escape_ns: the time of its ring's newest escape record (guest TSC), 0 when none
 * @cr3:          the address space its ring loaded last (~0: none known)
 */
struct attach_crash_vcpu {
	struct ring_writer *ring;
	uint64_t last_copy_ns;
	uint64_t last_escape_ns;
	uint64_t cr3;
};

/**
 * attach_crash__pick_vcpu() - the vCPU a crash is reported on, when its VMM names none (QMP's
 * GUEST_PANICKED and libvirt's crash event do not): the one whose records were copied last;
 * among those copied at the same time, the one with the newest escape record; then the lowest
 * index.
 * @v:  the vCPUs
 * @nr: their number, >= 1
 *
 * Return: its index.
 */
unsigned int attach_crash__pick_vcpu(const struct attach_crash_vcpu *v, unsigned int nr);

/**
 * attach_crash__write() - write a panic's report into the trace directory.
 * @dir:      the trace directory
 * @index:    0 for crash.json, N for crash-N.json
 * @v:        the vCPUs, their rings frozen
 * @nr:       their number, >= 1
 * @tasks:    a Linux guest's processes (the process the vCPU ran), or NULL
 * @time_ns:  when the crash was seen, ns since the trace started
 * @branches: the last branch records to copy (CRASH_REPORT_BRANCHES_DEFAULT, ...)
 * @vcpu:     receives the vCPU reported on
 *
 * The report has reason panic, no registers (ATTACH_CRASH_REGS_NOTE), the last @branches
 * branch records of the vCPU's ring, and the symbols crash_report__set_annotate() adds.
 *
 * Return: 0, or the -errno of crash_report__write() (-ENOMEM, -EFBIG, what writing gave).
 */
int attach_crash__write(const char *dir, unsigned int index, const struct attach_crash_vcpu *v,
			unsigned int nr, struct guest_tasks *tasks, uint64_t time_ns,
			unsigned int branches, unsigned int *vcpu);

#endif /* VBTS_ATTACH_ATTACH_CRASH_H */
