// SPDX-License-Identifier: GPL-2.0
/*
 * memory.c - guest physical memory: one anonymous mapping, one KVM slot below the 32-bit MMIO
 * hole and one above 4 GiB for the rest, bounds-checked host access.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kvm.h"
#include "memory.h"

struct guest_memory {
	void *host;    /* low RAM, then high RAM, back to back */
	uint64_t size; /* bytes in all */
	uint64_t low;  /* bytes at GPA 0 */
};

struct guest_memory *guest_memory__create(uint64_t size)
{
	struct guest_memory *mem;

	if (size < GUEST_MEMORY_MIN || size > GUEST_MEMORY_MAX || (size & 0xfff)) {
		errno = EINVAL;
		return NULL;
	}
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return NULL;
	mem->host = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem->host == MAP_FAILED) {
		free(mem);
		errno = ENOMEM;
		return NULL;
	}
	mem->size = size;
	mem->low = size < GUEST_MEMORY_LOW_MAX ? size : GUEST_MEMORY_LOW_MAX;
	return mem;
}

int guest_memory__register(struct guest_memory *mem, int vm_fd)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = mem->low,
		.userspace_addr = (uint64_t)(uintptr_t)mem->host,
	};
	int ret = kvm__ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region);

	if (ret < 0 || mem->size == mem->low)
		return ret < 0 ? ret : 0;
	region.slot = 1;
	region.guest_phys_addr = GUEST_MEMORY_HIGH_START;
	region.memory_size = mem->size - mem->low;
	region.userspace_addr = (uint64_t)(uintptr_t)mem->host + mem->low;
	ret = kvm__ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region);
	return ret < 0 ? ret : 0;
}

void guest_memory__destroy(struct guest_memory *mem)
{
	if (!mem)
		return;
	munmap(mem->host, mem->size);
	free(mem);
}

void *guest_memory__ptr(const struct guest_memory *mem, uint64_t gpa, uint64_t len)
{
	uint64_t high = mem->size - mem->low;

	if (!len)
		return NULL;
	if (gpa < mem->low)
		return len <= mem->low - gpa ? (char *)mem->host + gpa : NULL;
	if (gpa < GUEST_MEMORY_HIGH_START)
		return NULL;
	gpa -= GUEST_MEMORY_HIGH_START;
	if (gpa >= high || len > high - gpa)
		return NULL;
	return (char *)mem->host + mem->low + gpa;
}

uint64_t guest_memory__size(const struct guest_memory *mem)
{
	return mem->size;
}

uint64_t guest_memory__low_size(const struct guest_memory *mem)
{
	return mem->low;
}
