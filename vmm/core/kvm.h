/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm.h - the /dev/kvm wrapper: one ioctl entry point that names the ioctl in every failure,
 * the API version and required capabilities checked up front, and the VM file descriptor.
 */
#ifndef VBTS_VMM_KVM_H
#define VBTS_VMM_KVM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/kvm.h>

/**
 * struct kvm - an open /dev/kvm and one VM.
 * @sys_fd:   /dev/kvm
 * @vm_fd:    the VM (KVM_CREATE_VM), -1 until created
 * @run_size: size of each vCPU's struct kvm_run mapping (KVM_GET_VCPU_MMAP_SIZE)
 * @max_vcpus: KVM_CAP_MAX_VCPUS
 * @cpuid:    KVM_GET_SUPPORTED_CPUID, handed to every vCPU
 */
struct kvm {
	int sys_fd;
	int vm_fd;
	int run_size;
	unsigned int max_vcpus;
	struct kvm_cpuid2 *cpuid;
};

/**
 * kvm__ioctl_named() - issue one KVM ioctl and report a failure as "NAME: strerror".
 * @fd:    /dev/kvm, VM or vCPU fd
 * @req:   the ioctl number
 * @arg:   its argument
 * @name:  the ioctl's name, for the message
 * @quiet: do not report the failure (the caller handles expected errors)
 *
 * Return: the ioctl's non-negative result, or -errno (reported unless @quiet).
 */
int kvm__ioctl_named(int fd, unsigned long req, unsigned long arg, const char *name, bool quiet);

/* kvm__ioctl(fd, KVM_X, arg): report failures; kvm__ioctl_quiet(): leave them to the caller. */
#define kvm__ioctl(fd, req, arg) kvm__ioctl_named(fd, req, (unsigned long)(arg), #req, false)
#define kvm__ioctl_quiet(fd, req, arg) kvm__ioctl_named(fd, req, (unsigned long)(arg), #req, true)

/**
 * kvm__open() - open /dev/kvm, check the API version and the required capabilities, and
 * create a VM.
 * @k: filled in
 *
 * Each failure is reported in one line.
 * Return: 0; -ENODEV when /dev/kvm is missing or unusable (bad input: the environment),
 * -ENOTSUP when the API version or a required capability is missing, other -errno from
 * KVM_CREATE_VM and friends.
 */
int kvm__open(struct kvm *k);

/**
 * kvm__close() - close the VM and /dev/kvm.
 * @k: as filled by kvm__open(); may be partially filled (fds of -1 are skipped)
 */
void kvm__close(struct kvm *k);

/**
 * kvm__check_extension() - KVM_CHECK_EXTENSION on the VM (or /dev/kvm before the VM exists).
 * @k:   kvm
 * @cap: KVM_CAP_*
 *
 * Return: the capability's value, 0 when absent.
 */
int kvm__check_extension(const struct kvm *k, long cap);

/**
 * kvm__get_msr() - one MSR of a vCPU (KVM_GET_MSRS), quietly.
 * @vcpu_fd: the vCPU fd
 * @index:   the MSR
 * @value:   its value, on success
 *
 * Return: 0, or -errno (-EIO when KVM read no MSR).
 */
int kvm__get_msr(int vcpu_fd, uint32_t index, uint64_t *value);

#endif /* VBTS_VMM_KVM_H */
