/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-stats.h - one counter of a vCPU's binary statistics (KVM_GET_STATS_FD), read by name:
 * the kvm backend's guest_bts_dropped (kvm-patches/ patch 7), for `vbts run --stats` and the
 * trace's guest-bts-drop records.
 *
 * The file's header and descriptors are read once, at open, and checked (sizes bounded, the
 * value inside the data block); a read is then one pread() of the value.
 *
 * Locking: none; a struct kvm_stat is read by one thread at a time.
 */
#ifndef VBTS_VMM_KVM_STATS_H
#define VBTS_VMM_KVM_STATS_H

#include <stdint.h>
#include <sys/types.h>

/**
 * struct kvm_stat - one statistic of a vCPU's stats file.
 * @fd:     the stats file (-1 when closed)
 * @offset: the file offset of its first (u64) value
 */
struct kvm_stat {
	int fd;
	off_t offset;
};

/**
 * kvm_stat__open() - find the statistic @name of a vCPU.
 * @vcpu_fd: the vCPU
 * @name:    the statistic's name (as in /sys/kernel/debug/kvm, "exits" say)
 * @s:       filled in; its fd is -1 on failure
 *
 * Return: 0; -ENOTSUP when this KVM has no KVM_GET_STATS_FD; -ENOENT when it has no such
 * statistic; -EPROTO for a stats file that breaks its own layout; other -errno.
 */
int kvm_stat__open(int vcpu_fd, const char *name, struct kvm_stat *s);

/**
 * kvm_stat__read() - the statistic's current (first) value.
 * @s:     an open statistic
 * @value: its value
 *
 * Return: 0, or -errno (-EBADF when @s is not open).
 */
int kvm_stat__read(const struct kvm_stat *s, uint64_t *value);

/**
 * kvm_stat__close() - close the stats file (nothing when it is not open).
 * @s: the statistic
 */
void kvm_stat__close(struct kvm_stat *s);

#endif /* VBTS_VMM_KVM_STATS_H */
