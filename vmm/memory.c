// SPDX-License-Identifier: GPL-2.0
/*
 * memory.c - guest physical memory: one anonymous mapping at GPA 0, one KVM slot,
 * bounds-checked host access.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "kvm.h"
#include "memory.h"

struct guest_memory {
	void *host;    /* mapping of GPA [0, size) */
	uint64_t size; /* bytes */
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
	return mem;
}

int guest_memory__register(struct guest_memory *mem, int vm_fd)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = mem->size,
		.userspace_addr = (uint64_t)(uintptr_t)mem->host,
	};
	int ret = kvm__ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region);

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
	if (!len || gpa >= mem->size || len > mem->size - gpa)
		return NULL;
	return (char *)mem->host + gpa;
}

uint64_t guest_memory__size(const struct guest_memory *mem)
{
	return mem->size;
}
