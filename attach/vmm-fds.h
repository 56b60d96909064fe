/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmm-fds.h - a running KVM VMM's VM and vCPU file descriptors, read from /proc/PID/fd.
 *
 * KVM names its anonymous inodes "kvm-vm" and "kvm-vcpu:N" (N the vCPU id), so the links of
 * /proc/PID/fd say which fd number of the VMM is its VM and which are its vCPUs. Everything
 * read there belongs to another process and is validated: link text bounded, numbers in range,
 * one VM only, no vCPU id twice.
 */
#ifndef VBTS_ATTACH_VMM_FDS_H
#define VBTS_ATTACH_VMM_FDS_H

#include <stddef.h>

/* vCPU ids accepted (KVM_MAX_VCPU_IDS of x86 is 4096 * 4). */
#define VMM_FDS_MAX_VCPU_ID 16383U
/* The most vCPUs recorded (KVM_MAX_VCPUS of x86 in Linux 6.12). */
#define VMM_FDS_MAX_VCPUS 1024U
/* The most fds of the VMM looked at. */
#define VMM_FDS_MAX_SCAN 65536U

/* What one /proc/PID/fd link names. */
enum vmm_fd_kind {
	VMM_FD_OTHER = 0, /* any other file */
	VMM_FD_VM,        /* anon_inode:kvm-vm */
	VMM_FD_VCPU,      /* anon_inode:kvm-vcpu:N */
	VMM_FD_BAD,       /* looks like a KVM inode but is malformed */
};

/**
 * struct vmm_fds - the KVM fds of one VMM process.
 * @pid:       the process
 * @vm_fd:     the fd number of its VM in that process
 * @nr_vcpus:  vCPU fds found
 * @vcpu_id:   their vCPU ids, ascending
 * @vcpu_fd:   their fd numbers in that process, in the order of @vcpu_id
 */
struct vmm_fds {
	int pid;
	int vm_fd;
	unsigned int nr_vcpus;
	unsigned int vcpu_id[VMM_FDS_MAX_VCPUS];
	int vcpu_fd[VMM_FDS_MAX_VCPUS];
};

/**
 * vmm_fds__classify() - what a /proc/PID/fd link's text names.
 * @target: the link's text (need not be NUL-terminated)
 * @len:    its length
 * @vcpu:   receives N for VMM_FD_VCPU
 *
 * Return: enum vmm_fd_kind; "anon_inode:kvm-vcpu:" with anything but a decimal number in
 * [0, VMM_FDS_MAX_VCPU_ID] without leading zeros is VMM_FD_BAD.
 */
enum vmm_fd_kind vmm_fds__classify(const char *target, size_t len, unsigned int *vcpu);

/**
 * vmm_fds__scan() - find the VM and vCPU fds of process @pid under @proc (normally "/proc").
 * @proc:   the proc file system's mount point
 * @pid:    the VMM's pid, > 0
 * @out:    receives the fds
 * @err:    receives one line on failure (printable: nothing of the process's strings unescaped)
 * @errlen: its size
 *
 * Return: 0; -ESRCH when there is no such process, -EACCES/-EPERM when its fds cannot be read,
 * -ENOENT when it has no KVM VM (not a KVM VMM), -ENOTUNIQ when it has more than one VM,
 * -EPROTO for a malformed or duplicate vCPU link or no vCPU, -E2BIG beyond the bounds above.
 */
int vmm_fds__scan(const char *proc, int pid, struct vmm_fds *out, char *err, size_t errlen);

#endif /* VBTS_ATTACH_VMM_FDS_H */
