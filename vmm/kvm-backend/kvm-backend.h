/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-backend.h - what the VMM asks of the in-kernel tracer backend besides its tracer_ops.
 */
#ifndef VBTS_VMM_KVM_BACKEND_H
#define VBTS_VMM_KVM_BACKEND_H

#include <stdbool.h>

/**
 * kvm_bts__modes() - the KVM_X86_BTS_MODE_* bits this host's KVM reports.
 * @kvm_fd: /dev/kvm or a VM fd
 *
 * Return: the modes, 0 when the capability is absent (stock KVM).
 */
int kvm_bts__modes(int kvm_fd);

/**
 * kvm_bts__usable() - whether the kvm backend can run here (ring, branch stepping, CR3 tracing).
 * @kvm_fd: /dev/kvm or a VM fd
 *
 * Return: true when all three capabilities are reported.
 */
bool kvm_bts__usable(int kvm_fd);

/**
 * kvm_bts__guest_mode() - whether this KVM virtualizes BTS for the guest itself (kvm-patches/
 * patch 7): KVM_CAP_X86_BTS has KVM_X86_BTS_MODE_GUEST and KVM_GET_EMULATED_CPUID reports DS,
 * DTES64 and DS-CPL in leaf 1. A VMM that sets all three in a vCPU's CPUID gets the guest's
 * IA32_DEBUGCTL, IA32_DS_AREA and MISC_ENABLE handled by the kernel, its branches stored into
 * its own buffer by in-kernel stepping, the threshold PMI through the in-kernel LAPIC.
 * @kvm_fd: /dev/kvm
 *
 * Return: 0 when it does; -ENOTSUP when it does not; other -errno from the ioctls.
 */
int kvm_bts__guest_mode(int kvm_fd);

#endif /* VBTS_VMM_KVM_BACKEND_H */
