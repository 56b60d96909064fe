/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpuid.h - the CPUID a vCPU gets: KVM's supported set (with its paravirtual leaves, which
 * give Linux kvmclock) plus the hypervisor bit, this vCPU's APIC id, and a topology of
 * nr_vcpus cores with one thread each in one package.
 */
#ifndef VBTS_VMM_CPUID_H
#define VBTS_VMM_CPUID_H

#include <stdbool.h>
#include <linux/kvm.h>

/**
 * cpuid__for_vcpu() - the CPUID table for one vCPU.
 * @supported: KVM_GET_SUPPORTED_CPUID
 * @index:     the vCPU's index, which is its (x2)APIC id
 * @nr_vcpus:  vCPUs of the VM (a value below @index + 1 counts as @index + 1)
 * @flags:     CPUID_TSC_DEADLINE: advertise the TSC-deadline timer (KVM emulates it in its
 *             in-kernel LAPIC; KVM_CAP_TSC_DEADLINE_TIMER says so, not the supported CPUID);
 *             CPUID_GUEST_BTS: advertise DS, DTES64 and DS-CPL (guest-visible BTS, which the
 *             VMM or the kvm backend emulates)
 *
 * Leaves 1 (APIC id, logical count, HTT, hypervisor), 4 (cores per package), 0xb and 0x1f
 * (regenerated: SMT and core levels), 0x80000008 (core count) and 0x8000001e (extended APIC
 * id, core id) are rewritten when KVM reports them; the rest is KVM's.
 *
 * Return: a malloc'd table for KVM_SET_CPUID2, or NULL with errno ENOMEM.
 */
struct kvm_cpuid2 *cpuid__for_vcpu(const struct kvm_cpuid2 *supported, unsigned int index,
				   unsigned int nr_vcpus, unsigned int flags);

#define CPUID_TSC_DEADLINE (1U << 0)
#define CPUID_GUEST_BTS (1U << 1)

/**
 * cpuid__intel_compatible() - whether leaf 0 names an Intel-compatible vendor (Intel, Centaur,
 * Zhaoxin): KVM masks LVTPC on a PMI only for those guests.
 * @c: a CPUID table
 *
 * Return: true for those vendors.
 */
bool cpuid__intel_compatible(const struct kvm_cpuid2 *c);

#endif /* VBTS_VMM_CPUID_H */
