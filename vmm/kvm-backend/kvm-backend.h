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

#endif /* VBTS_VMM_KVM_BACKEND_H */
