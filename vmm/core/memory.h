/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memory.h - guest physical memory: allocation, KVM slots and bounds-checked host access.
 */
#ifndef VBTS_VMM_MEMORY_H
#define VBTS_VMM_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct guest_memory;

/*
 * Guest RAM as on a PC: up to GUEST_MEMORY_LOW_MAX at GPA 0 (below the 32-bit MMIO hole), the
 * rest from GUEST_MEMORY_HIGH_START (4 GiB) on; one KVM slot each.
 */
#define GUEST_MEMORY_MIN (2ULL << 20)
#define GUEST_MEMORY_MAX (64ULL << 30)
#define GUEST_MEMORY_LOW_MAX (3ULL << 30)
#define GUEST_MEMORY_HIGH_START (4ULL << 30)

/**
 * guest_memory__create() - allocate guest RAM (anonymous, zeroed, not yet given to KVM).
 * @size: bytes, a multiple of 4 KiB within [GUEST_MEMORY_MIN, GUEST_MEMORY_MAX]
 *
 * Return: the memory, or NULL with errno EINVAL (bad size) or ENOMEM.
 */
struct guest_memory *guest_memory__create(uint64_t size);

/**
 * guest_memory__register() - KVM_SET_USER_MEMORY_REGION for all of guest RAM (one or two
 * slots).
 * @mem:   guest memory
 * @vm_fd: the VM
 *
 * Return: 0 or -errno (reported with the ioctl's name).
 */
int guest_memory__register(struct guest_memory *mem, int vm_fd);

/**
 * guest_memory__destroy() - unmap guest RAM (after the VM is gone).
 * @mem: guest memory, may be NULL
 */
void guest_memory__destroy(struct guest_memory *mem);

/**
 * guest_memory__ptr() - host pointer to guest-physical range [gpa, gpa + len).
 * @mem: guest memory
 * @gpa: guest physical address
 * @len: length in bytes, > 0
 *
 * Return: a pointer valid for @len bytes, or NULL if any byte of the range is not guest RAM
 * (the range may not cross a slot boundary). Never trusts @gpa or @len.
 */
void *guest_memory__ptr(const struct guest_memory *mem, uint64_t gpa, uint64_t len);

/**
 * guest_memory__size() - bytes of guest RAM.
 * @mem: guest memory
 *
 * Return: the RAM size in bytes (below and above the hole together).
 */
uint64_t guest_memory__size(const struct guest_memory *mem);

/**
 * guest_memory__low_size() - bytes of guest RAM at GPA 0, below the 32-bit MMIO hole.
 * @mem: guest memory
 *
 * Return: min(size, GUEST_MEMORY_LOW_MAX); the rest starts at GUEST_MEMORY_HIGH_START.
 */
uint64_t guest_memory__low_size(const struct guest_memory *mem);

#endif /* VBTS_VMM_MEMORY_H */
