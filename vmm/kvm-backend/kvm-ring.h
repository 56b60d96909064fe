/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-ring.h - the reading side of the patched KVM's per-vCPU branch trace ring: map it, copy
 * its records into a vbts ring file with the guest-TSC times of escape records converted, and
 * consume them. One routine for every collector of those rings: the VMM's kvm backend (the ring
 * mmap'd from a vCPU fd) and `vbts attach` (mmap'd from a tracer fd).
 *
 * The ring's head and tail are read once per copy and checked (tail <= head, head - tail <=
 * nr_records); a ring that breaks these is resynchronised at its head and the skipped records
 * counted as lost. Everything in the ring is written by the kernel, but a bad ring is never
 * trusted to index the records.
 *
 * Locking: a struct kvm_ring belongs to the thread of its tracer_vcpu.
 */
#ifndef VBTS_VMM_KVM_RING_H
#define VBTS_VMM_KVM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "tracer.h"

/**
 * struct kvm_ring_clock - guest TSC to time, shared by the rings of one VM, for a collector
 * that cannot read the guest's TSC (`vbts attach`): the first guest TSC an escape of any of
 * them carries is anchored at the time of its copy (at most a copy's delay late), the others
 * follow at @khz, the host TSC's frequency (the guest's, unless its VMM scales it). All the
 * rings' times then keep the guest's order across vCPUs, which a thread that moves between
 * them needs. Used by one thread at a time (the collector's).
 * @khz:      frequency, 0 when unknown (times are then copy times)
 * @tsc0:     the anchored guest TSC
 * @ns0:      its time, ns since the trace started
 * @anchored: @tsc0 and @ns0 are set
 */
struct kvm_ring_clock {
	uint64_t khz;
	uint64_t tsc0;
	uint64_t ns0;
	bool anchored;
};

/**
 * struct kvm_ring - one mapped kernel ring and the copy's state.
 * @map:         the mmap'd ring (header page, then the records)
 * @map_len:     its length
 * @hdr:         the ring header (shared with the kernel)
 * @recs:        the records (shared with the kernel)
 * @nr:          record slots
 * @next:        sequence number of the next record to copy
 * @lost:        the kernel's lost count already reported
 * @tsc0:        guest TSC at set-up
 * @ns0:         ns since trace start at set-up
 * @khz:         guest TSC frequency in kHz, 0 when unknown (times are then @copy_ns, or all
 *               @ns0 without it)
 * @copy_ns:     with @khz 0: the time of the current copy (ns since trace start), which a
 *               collector in another process than the VMM sets before each drain; 0: none
 * @last_ns:     the time of the last escape record copied
 * @skip_arrive: a TASK_ARRIVE to this address-space id is not copied (~0: none)
 * @pending:     the header is not set up yet (kvm_ring__map_pending())
 * @broken:      the header turned out to be another ring's: nothing is copied
 * @follow:      each TASK_ARRIVE copied is reported to @tv->tasks (guest_tasks__switch()) as
 *               it is copied, before its TASK_PID: for a collector that learns of CR3 loads
 *               from the ring alone (`vbts attach`); the VMM's backend reports them at the
 *               load's exit instead
 * @cr3:         the address space of the stream's last TASK_ARRIVE, copied or written by the
 *               VMM (~0: none): the owner of the threads the ring names
 * @arrivals:    with @follow: TASK_ARRIVE records copied
 * @user_seen:   with @follow: a TASK_ARRIVE was resolved to a process that is to be recorded
 *               (guest_tasks__switch() returned true)
 * @clock:       the VM's shared clock, or NULL: @tsc0, @ns0 and @khz are this ring's
 */
struct kvm_ring {
	void *map;
	size_t map_len;
	struct vbts_kvm_x86_bts_ring_header *hdr;
	const struct vbts_record *recs;
	uint64_t nr;
	uint64_t next;
	uint64_t lost;
	uint64_t tsc0;
	uint64_t ns0;
	uint64_t khz;
	uint64_t copy_ns;
	uint64_t last_ns;
	uint64_t skip_arrive;
	bool pending;
	bool broken;
	bool follow;
	uint64_t cr3;
	uint64_t arrivals;
	bool user_seen;
	struct kvm_ring_clock *clock;
};

/**
 * kvm_ring__map_len() - the bytes to map for a ring of @nr records.
 * @nr: records
 *
 * Return: the header page plus the records, page-aligned.
 */
size_t kvm_ring__map_len(uint64_t nr);

/**
 * kvm_ring__map() - map a configured ring of @nr records and check its header.
 * @kr:     receives the mapping; its copy state starts at sequence 0, times unknown
 * @fd:     the vCPU fd or the tracer fd
 * @offset: the ring's offset in @fd, in bytes
 * @nr:     the records configured
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, -EPROTO when the header does not say @nr records of 24 bytes, -errno of mmap.
 */
int kvm_ring__map(struct kvm_ring *kr, int fd, off_t offset, uint64_t nr, char *err,
		  size_t errlen);

/**
 * kvm_ring__map_pending() - kvm_ring__map() for a ring whose vCPU may not have applied its
 * configuration yet (a tracer attached from another process: the vCPU sets the ring up before
 * its next guest entry): a header without its size yet is accepted, kvm_ring__drain() copies nothing
 * until the header says @nr records of 24 bytes, and a header that says anything else then
 * stops the copy for good (kvm_ring__broken()).
 * @kr:     as for kvm_ring__map()
 * @fd:     the tracer fd
 * @offset: the ring's offset in @fd, in bytes
 * @nr:     the records configured
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: as kvm_ring__map().
 */
int kvm_ring__map_pending(struct kvm_ring *kr, int fd, off_t offset, uint64_t nr, char *err,
			  size_t errlen);

/**
 * kvm_ring__broken() - whether the copy stopped on a header that is not the ring configured.
 * @kr: ring
 *
 * Return: true when it did (the ring file got one LOST record for it).
 */
bool kvm_ring__broken(const struct kvm_ring *kr);

/**
 * kvm_ring__unmap() - unmap the ring.
 * @kr: ring (may be unmapped)
 */
void kvm_ring__unmap(struct kvm_ring *kr);

/**
 * kvm_ring__cpl() - the kernel's CPL filter bits for a vbts CPL filter.
 * @f: the filter
 *
 * Return: VBTS_KVM_X86_BTS_CPL_USER and/or VBTS_KVM_X86_BTS_CPL_KERNEL.
 */
uint32_t kvm_ring__cpl(enum vbts_cpl_filter f);

/**
 * kvm_ring__tsc_to_ns() - a guest TSC value as ns since trace start:
 * ns0 + (t - tsc0) * 10^6 / khz, 0 when negative; when the frequency is unknown, the time of
 * the copy (@kr->copy_ns) when set and later than @kr->ns0, else @kr->ns0.
 * @kr:  ring
 * @tsc: guest TSC
 *
 * Return: nanoseconds.
 */
uint64_t kvm_ring__tsc_to_ns(const struct kvm_ring *kr, uint64_t tsc);

/**
 * kvm_ring__put_escape() - append an escape record to @tv's ring file (counted).
 * @tv:   the vCPU
 * @kind: enum vbts_escape_kind
 * @to:   its to field
 * @aux:  its aux
 */
void kvm_ring__put_escape(struct tracer_vcpu *tv, unsigned int kind, uint64_t to, uint64_t aux);

/**
 * kvm_ring__put_pid() - after a TASK_ARRIVE: the guest's pid and tgid of the process loaded,
 * when @tv->tasks knows it.
 * @tv: the vCPU
 */
void kvm_ring__put_pid(struct tracer_vcpu *tv);

/**
 * kvm_ring__drain() - copy every record the kernel published since the last copy into
 * @tv->ring, and consume them (the header's tail is set to its head).
 * @kr: ring
 * @tv: the vCPU (@tv->ring, its stat_ counters, @tv->tasks for pids)
 *
 * Return: records read from the kernel ring.
 */
uint64_t kvm_ring__drain(struct kvm_ring *kr, struct tracer_vcpu *tv);

#endif /* VBTS_VMM_KVM_RING_H */
