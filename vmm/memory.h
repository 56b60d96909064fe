/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memory.h - guest physical memory: allocation, KVM slots and bounds-checked host access.
 */
#ifndef VBTS_VMM_MEMORY_H
#define VBTS_VMM_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct guest_memory;

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
 * Return: the RAM size in bytes.
 */
uint64_t guest_memory__size(const struct guest_memory *mem);

#endif /* VBTS_VMM_MEMORY_H */
