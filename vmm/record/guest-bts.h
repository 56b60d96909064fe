/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest-bts.h - guest-visible BTS emulated by the VMM (`vbts run --guest-bts`, step backend):
 * the guest's IA32_DEBUGCTL and IA32_DS_AREA, trapped with KVM_CAP_X86_USER_SPACE_MSR and an
 * MSR filter for exactly those two MSRs; CPUID DS, DTES64 and DS-CPL; MISC_ENABLE with
 * BTS_UNAVAILABLE clear; and the stores of branch records into the guest's own BTS buffer
 * through its page tables, with the SDM's semantics (SDM-BTS.md): circular at the absolute
 * maximum without BTINT, with BTINT nothing stored once full and a PMI through the LAPIC's
 * LVTPC when the index reaches the threshold, BTS_OFF_OS / BTS_OFF_USR by the CPL of the
 * branch.
 *
 * The semantics are those of kvm-patches/ patch 7 (the kvm backend), record for record, so
 * that both backends leave the same buffer: the DS area's four BTS fields are read once per
 * record, checked (canonical, index within [base, maximum], a whole number of records from
 * the base, maximum at least one record past the base), the record and then the index are
 * written. Everything the guest hands in is hostile: a store that cannot be made exactly is
 * dropped and counted, never retried, and never writes anywhere but present, writable guest
 * RAM (gva__write()).
 *
 * Locking: none. Each struct guest_bts belongs to its vCPU's thread.
 */
#ifndef VBTS_VMM_GUEST_BTS_H
#define VBTS_VMM_GUEST_BTS_H

#include <stdbool.h>
#include <stdint.h>

#include <vbts/ring-format.h>

#include "x86.h"

struct gva_space;
struct kvm;

/* The IA32_DEBUGCTL bits the guest owns; LBR and BTF are accepted and dropped, as KVM does. */
#define GUEST_BTS_DEBUGCTL_BITS                                                            \
	(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTINT | X86_DEBUGCTL_BTS_OFF_OS | \
	 X86_DEBUGCTL_BTS_OFF_USR)
#define GUEST_BTS_DEBUGCTL_IGNORED (X86_DEBUGCTL_LBR | X86_DEBUGCTL_BTF)

/**
 * enum guest_bts_drop - why a record was not stored (aux of VBTS_ESC_GUEST_BTS_DROP, the values
 * of enum vbts_guest_bts_drop).
 * @GUEST_BTS_DROP_DS_AREA: the DS area is not canonical or cannot be read
 * @GUEST_BTS_DROP_FIELDS:  its BTS fields are inconsistent (base not canonical, index below
 *                          the base or not a whole number of records from it, maximum less
 *                          than one record past the base)
 * @GUEST_BTS_DROP_FULL:    BTINT and no room for another record before the maximum
 * @GUEST_BTS_DROP_BUFFER:  the record's bytes are not canonical, present, writable guest RAM
 * @GUEST_BTS_DROP_INDEX:   the record was written but the index could not be
 */
enum guest_bts_drop {
	GUEST_BTS_DROP_DS_AREA = VBTS_GUEST_BTS_DROP_DS_AREA,
	GUEST_BTS_DROP_FIELDS = VBTS_GUEST_BTS_DROP_FIELDS,
	GUEST_BTS_DROP_FULL = VBTS_GUEST_BTS_DROP_FULL,
	GUEST_BTS_DROP_BUFFER = VBTS_GUEST_BTS_DROP_BUFFER,
	GUEST_BTS_DROP_INDEX = VBTS_GUEST_BTS_DROP_INDEX,
};

/**
 * struct guest_bts_stats - what one vCPU's guest BTS did, for `vbts run --stats`.
 * @stored:  records written into the guest's buffer
 * @dropped: records dropped (enum guest_bts_drop)
 * @pmis:    threshold PMIs raised (delivered through LVTPC unless it was masked)
 * @gp:      MSR writes refused with #GP (reserved DEBUGCTL bits, a non-canonical DS area)
 */
struct guest_bts_stats {
	uint64_t stored;
	uint64_t dropped;
	uint64_t pmis;
	uint64_t gp;
};

/**
 * struct guest_bts - one vCPU's guest-visible BTS.
 * @debugctl: the guest's IA32_DEBUGCTL (GUEST_BTS_DEBUGCTL_BITS only)
 * @ds_area:  the guest's IA32_DS_AREA
 * @dropping: the last record was dropped (the next drop writes no new escape record)
 * @mask_lvtpc: a PMI masks LVTPC (the guest's CPUID is Intel-compatible, as KVM decides it)
 * @reset_mark: the vCPU holds the mark that tells a RESET or INIT (guest_bts__mark())
 * @stats:    counters
 */
struct guest_bts {
	uint64_t debugctl;
	uint64_t ds_area;
	bool dropping;
	bool mask_lvtpc;
	bool reset_mark;
	struct guest_bts_stats stats;
};

/* Results of guest_bts__store(). */
enum guest_bts_result {
	GUEST_BTS_OFF = 0,      /* TR and BTS are not both set: nothing to do */
	GUEST_BTS_FILTERED = 1, /* BTS_OFF_OS / BTS_OFF_USR leave this CPL out */
	GUEST_BTS_STORED = 2,   /* stored */
	GUEST_BTS_PMI = 3,      /* stored, and with BTINT the index reached the threshold */
	GUEST_BTS_DROPPED = 4,  /* not stored (*drop says why) */
};

/**
 * guest_bts__enabled() - whether the guest has TR and BTS set.
 * @gb: guest BTS state
 *
 * Return: true when branches are to be stored.
 */
bool guest_bts__enabled(const struct guest_bts *gb);

/**
 * guest_bts__wrmsr() - the guest writes IA32_DEBUGCTL or IA32_DS_AREA.
 * @gb:    guest BTS state
 * @index: the MSR
 * @value: the value written
 * @la57:  CR4.LA57 (57-bit canonical addresses)
 *
 * DEBUGCTL: TR, BTS, BTINT, BTS_OFF_OS and BTS_OFF_USR are kept, LBR and BTF ignored (KVM
 * drops them for compatibility), any other bit is reserved. DS_AREA: any canonical address.
 *
 * Return: 0; -EINVAL when the CPU raises #GP (counted in @gb->stats.gp); -ENOENT for another
 * MSR.
 */
int guest_bts__wrmsr(struct guest_bts *gb, uint32_t index, uint64_t value, bool la57);

/**
 * guest_bts__rdmsr() - the guest reads IA32_DEBUGCTL or IA32_DS_AREA.
 * @gb:    guest BTS state
 * @index: the MSR
 * @value: its value
 *
 * Return: 0, or -ENOENT for another MSR.
 */
int guest_bts__rdmsr(const struct guest_bts *gb, uint32_t index, uint64_t *value);

/**
 * guest_bts__store() - the guest took a branch: store its record if the guest asked for it.
 * @gb:   guest BTS state
 * @as:   the guest's address space at the branch (its CR3: the DS area is a linear address)
 * @from: linear address of the branch instruction
 * @to:   linear address of its target
 * @cpl:  CPL of the branch instruction
 * @drop: the reason when the result is GUEST_BTS_DROPPED
 *
 * Return: enum guest_bts_result.
 */
enum guest_bts_result guest_bts__store(struct guest_bts *gb, const struct gva_space *as,
				       uint64_t from, uint64_t to, uint8_t cpl,
				       enum guest_bts_drop *drop);

/**
 * guest_bts__setup_vm() - trap IA32_DEBUGCTL and IA32_DS_AREA reads and writes to the VMM:
 * KVM_CAP_X86_USER_SPACE_MSR (filter exits) and an MSR filter that denies KVM exactly those
 * two MSRs; every other MSR stays KVM's. Before the vCPUs run.
 * @k: the VM
 *
 * Return: 0; -ENOTSUP when this KVM lacks either capability; other -errno from the ioctls
 * (reported).
 */
int guest_bts__setup_vm(struct kvm *k);

/**
 * guest_bts__setup_vcpu() - IA32_MISC_ENABLE with BTS_UNAVAILABLE clear and PEBS_UNAVAILABLE
 * set (a host-initiated write: the guest cannot change either bit).
 * @vcpu_fd: the vCPU
 *
 * Return: 0 or -errno (reported).
 */
int guest_bts__setup_vcpu(int vcpu_fd);

/*
 * RESET and INIT clear IA32_DEBUGCTL, but KVM handles INIT in the kernel (in-kernel LAPIC) and
 * tells userspace nothing. A mark does: MSR_SMI_COUNT, which KVM zeroes on RESET and INIT, which
 * the guest can read but not write, and which otherwise only counts up (SMIs). Set to
 * GUEST_BTS_RESET_MARK, it reads 0 after a RESET or INIT.
 */
#define GUEST_BTS_RESET_MARK 1ULL

/**
 * guest_bts__mark() - set the mark that tells a RESET or INIT of the vCPU (MSR_SMI_COUNT).
 * @vcpu_fd: the vCPU
 *
 * Return: 0; -ENOTSUP when this KVM does not keep the value (then a RESET or INIT cannot be
 * told); other -errno from KVM_SET_MSRS/KVM_GET_MSRS.
 */
int guest_bts__mark(int vcpu_fd);

/**
 * guest_bts__check_reset() - after a RESET or INIT of the vCPU since the mark was set: the
 * guest's IA32_DEBUGCTL cleared (IA32_DS_AREA is kept, as INIT keeps MSRs), the mark set again.
 * @gb:      guest BTS state (nothing is done unless @gb->reset_mark)
 * @vcpu_fd: the vCPU
 *
 * Return: 1 when the vCPU went through RESET or INIT, 0 when not, -errno from the MSR ioctls.
 */
int guest_bts__check_reset(struct guest_bts *gb, int vcpu_fd);

/**
 * guest_bts__pmi() - raise a threshold PMI through the in-kernel LAPIC's LVTPC, masking it on
 * the way as the local APIC does when it handles a performance-monitoring interrupt (KVM does
 * so for guests whose CPUID is Intel-compatible).
 * @vcpu_fd: the vCPU (in-kernel LAPIC)
 * @mask:    set LVTPC's mask bit with the PMI
 * @nmi:     true when LVTPC delivers an NMI: the caller delivers it
 *
 * A fixed vector is made pending in the LAPIC's IRR (the LAPIC delivers it when the guest
 * allows); an NMI is left to the caller; other delivery modes are ignored.
 *
 * Return: 0 (*@nmi set); -EAGAIN when the LAPIC is disabled or LVTPC masked (no PMI, nothing
 * changed); other -errno from KVM_GET_LAPIC/KVM_SET_LAPIC.
 */
int guest_bts__pmi(int vcpu_fd, bool mask, bool *nmi);

#endif /* VBTS_VMM_GUEST_BTS_H */
