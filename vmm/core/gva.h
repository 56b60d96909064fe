/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gva.h - guest linear → guest physical translation for every x86 paging mode, and reads of
 * guest linear memory, over a bounds-checked guest-physical accessor.
 *
 * Nothing read from guest page tables is trusted: every entry is fetched through the accessor,
 * which refuses ranges outside guest RAM, and a walk has a fixed number of levels.
 * Accessed/dirty bits are never written; reads check no permission (U/S, R/W, NX): the
 * tracer reads what the CPU fetched or is about to deliver to. Writes (gva__write(), for the
 * guest's own BTS buffer) check R/W.
 */
#ifndef VBTS_VMM_STEP_GVA_H
#define VBTS_VMM_STEP_GVA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct gva_space - one guest address space as the CPU sees it.
 * @ptr:  guest-physical accessor: host pointer valid for [gpa, gpa + len), or NULL when any of
 *        it is not guest RAM (the semantics of guest_memory__ptr())
 * @ctx:  first argument of @ptr
 * @cr0:  CR0 (PG is bit 31)
 * @cr3:  CR3
 * @cr4:  CR4 (PSE bit 4, PAE bit 5, LA57 bit 12, SMAP bit 21)
 * @efer: IA32_EFER (LMA is bit 10)
 * @smap_open: supervisor writes may store to user pages although CR4.SMAP is set (the CPU is
 *        at CPL < 3 with RFLAGS.AC set); only gva__write() looks at it
 */
struct gva_space {
	void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len);
	const void *ctx;
	uint64_t cr0;
	uint64_t cr3;
	uint64_t cr4;
	uint64_t efer;
	bool smap_open;
};

/**
 * gva__translate() - translate one linear address.
 * @s:    address space
 * @la:   linear address
 * @gpa:  result: guest physical address
 *
 * Return: 0; -EFAULT when the address is not mapped (a non-present or reserved entry, a table
 * outside guest RAM, or a non-canonical address in long mode).
 */
int gva__translate(const struct gva_space *s, uint64_t la, uint64_t *gpa);

/**
 * gva__read_prefix() - copy guest linear memory, page by page, up to the first unmapped byte.
 * @s:   address space
 * @la:  linear address (wraps at 4 GiB outside long mode)
 * @buf: destination
 * @len: bytes wanted
 *
 * Return: the number of bytes copied, 0..@len.
 */
size_t gva__read_prefix(const struct gva_space *s, uint64_t la, void *buf, size_t len);

/**
 * gva__read() - copy @len bytes of guest linear memory; may cross page boundaries.
 * @s:   address space
 * @la:  linear address
 * @buf: destination
 * @len: bytes
 *
 * Return: 0, or -EFAULT when any byte is not mapped to guest RAM.
 */
int gva__read(const struct gva_space *s, uint64_t la, void *buf, size_t len);

/**
 * gva__write() - store @len bytes into guest linear memory as a supervisor-mode write.
 * @s:   address space
 * @la:  linear address (wraps at 4 GiB outside long mode)
 * @buf: the bytes
 * @len: their number, at most 3 pages' worth (a store crosses at most a few pages)
 *
 * Every page must be mapped to guest RAM (never MMIO, never outside it) and writable: R/W set
 * at every level of the walk, unless CR0.WP is clear (then a supervisor write ignores R/W);
 * a user page (U/S set at every level) only when CR4.SMAP is clear or @s->smap_open is set. All
 * pages are checked before the first byte is written: on failure nothing is written. Accessed
 * and dirty bits are not set.
 *
 * Return: 0, or -EFAULT when any byte cannot be written.
 */
int gva__write(const struct gva_space *s, uint64_t la, const void *buf, size_t len);

#endif /* VBTS_VMM_STEP_GVA_H */
