/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracer-mem.h - a traced VM's guest-physical memory as `vbts attach` reads it: through the
 * tracer fd (KVM_X86_BTS_TRACER_READ_GPA, kvm-patches/ patch 19), since the VM fd's ioctls
 * refuse any process but the VMM. It is the accessor that introspection of a Linux guest reads
 * through (vmm/record/guest-tasks.h, struct guest_tasks_config.phys), the same code as `vbts run`'s
 * over the VMM's own memory.
 *
 * Whole 4 KiB pages are read and kept in a small cache, so that the page-table pages of one
 * walk are read once; tracer_mem__invalidate() forgets them (the guest runs on). Guest memory
 * is hostile: what the accessor returns is bytes, nothing more.
 *
 * Locking: a tracer_mem belongs to one thread; tracer_mem__read() may be called from others.
 */
#ifndef VBTS_ATTACH_TRACER_MEM_H
#define VBTS_ATTACH_TRACER_MEM_H

#include <stdint.h>

/* Pages cached. */
#define TRACER_MEM_PAGES 64U

struct tracer_mem;

/**
 * struct tracer_mem_stats - what was read.
 * @reads:  pages read through the tracer fd
 * @hits:   accesses served from the cache
 * @failed: reads the kernel refused (a hole, a page it could not read)
 */
struct tracer_mem_stats {
	uint64_t reads;
	uint64_t hits;
	uint64_t failed;
};

/**
 * tracer_mem__open() - a reader of the guest memory of the VM a tracer fd traces.
 * @tfd: the tracer fd (not owned; it must stay open while the reader is used)
 *
 * Return: the reader, or NULL with errno ENOMEM.
 */
struct tracer_mem *tracer_mem__open(int tfd);

/**
 * tracer_mem__probe() - whether this host's KVM reads guest memory for a tracer.
 * @m: the reader
 *
 * Reads one byte at guest-physical 0.
 *
 * Return: 0 when it does (a hole at 0 counts: the ioctl is there); -ENOTTY (or -EINVAL) from a
 * kernel without KVM_X86_BTS_TRACER_READ_GPA; -ESRCH when the VMM is gone; another -errno.
 */
int tracer_mem__probe(struct tracer_mem *m);

/**
 * tracer_mem__ptr() - the accessor of struct gva_space and struct guest_tasks_config.phys.
 * @ctx: the struct tracer_mem (its cache is updated: const only by the accessor's type)
 * @gpa: guest-physical address
 * @len: bytes, 1 to 4096 - (@gpa % 4096): within one page
 *
 * Return: a pointer to the bytes, valid until the next call on @ctx; NULL when the range
 * crosses a page, or the page is no guest RAM or cannot be read.
 */
void *tracer_mem__ptr(const void *ctx, uint64_t gpa, uint64_t len);

/**
 * tracer_mem__read() - the reader of struct guest_tasks_config.read: bytes, not cached.
 * @ctx: the struct tracer_mem; only its fd is used, so another thread may call this beside
 *       the reader's own (not counted in its stats)
 * @gpa: guest-physical address
 * @buf: where the bytes go
 * @len: 1 to VBTS_KVM_X86_BTS_TRACER_READ_MAX bytes, in one read through the tracer fd
 *
 * Return: 0, or -errno: -ENOENT when any of the range is no guest RAM, -EINVAL for a bad
 * length.
 */
int tracer_mem__read(const void *ctx, uint64_t gpa, void *buf, size_t len);

/**
 * tracer_mem__invalidate() - forget the cached pages (the guest has run since they were read).
 * @m: the reader
 */
void tracer_mem__invalidate(struct tracer_mem *m);

/**
 * tracer_mem__stats() - counters.
 * @m:  the reader
 * @st: filled in
 */
void tracer_mem__stats(const struct tracer_mem *m, struct tracer_mem_stats *st);

/**
 * tracer_mem__close() - free the reader.
 * @m: may be NULL
 */
void tracer_mem__close(struct tracer_mem *m);

#endif /* VBTS_ATTACH_TRACER_MEM_H */
