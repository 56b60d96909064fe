// SPDX-License-Identifier: GPL-2.0
/*
 * gva.c - guest page-table walks (paging off, 32-bit, PAE, 4-level, 5-level) and linear reads.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "x86.h"
#include "gva.h"

static bool read_u32(const struct gva_space *s, uint64_t gpa, uint32_t *v)
{
	const void *p = s->ptr(s->ctx, gpa, sizeof(*v));

	if (!p)
		return false;
	memcpy(v, p, sizeof(*v));
	return true;
}

static bool read_u64(const struct gva_space *s, uint64_t gpa, uint64_t *v)
{
	const void *p = s->ptr(s->ctx, gpa, sizeof(*v));

	if (!p)
		return false;
	memcpy(v, p, sizeof(*v));
	return true;
}

/* What every level of a walk allows: writes (R/W set), user-mode access (U/S set). */
struct perm {
	bool rw;
	bool us;
};

/* 32-bit paging: 2 levels of 4-byte entries, 4 MiB pages with CR4.PSE (PSE-36 high bits). */
static int walk_32(const struct gva_space *s, uint64_t la, uint64_t *gpa, struct perm *p)
{
	uint32_t pde, pte;

	la &= 0xffffffffULL;
	if (!read_u32(s, (s->cr3 & 0xfffff000ULL) + ((la >> 22) & 0x3ff) * 4, &pde))
		return -EFAULT;
	if (!(pde & X86_PTE_P))
		return -EFAULT;
	p->rw = pde & X86_PTE_RW;
	p->us = pde & X86_PTE_US;
	if ((pde & X86_PTE_PS) && (s->cr4 & X86_CR4_PSE)) {
		/* bits 20:13 of the PDE are physical address bits 39:32 */
		uint64_t base = (pde & 0xffc00000ULL) | ((uint64_t)((pde >> 13) & 0xff) << 32);

		*gpa = base | (la & 0x3fffff);
		return 0;
	}
	if (!read_u32(s, (pde & 0xfffff000ULL) + ((la >> 12) & 0x3ff) * 4, &pte))
		return -EFAULT;
	if (!(pte & X86_PTE_P))
		return -EFAULT;
	p->rw = p->rw && (pte & X86_PTE_RW);
	p->us = p->us && (pte & X86_PTE_US);
	*gpa = (pte & 0xfffff000ULL) | (la & 0xfff);
	return 0;
}

/*
 * PAE and long-mode paging: 8-byte entries, 9 bits per level. @levels counts the levels below
 * @table (2 for PAE's page directory, 4 or 5 in long mode). Large pages are allowed at the
 * levels mapping 1 GiB and 2 MiB.
 */
static int walk_table(const struct gva_space *s, uint64_t table, unsigned int levels, uint64_t la,
		      uint64_t *gpa, struct perm *p)
{
	for (unsigned int lvl = levels; lvl >= 1; lvl--) {
		unsigned int shift = 12 + 9 * (lvl - 1);
		uint64_t e;

		if (!read_u64(s, table + ((la >> shift) & 0x1ff) * 8, &e))
			return -EFAULT;
		if (!(e & X86_PTE_P))
			return -EFAULT;
		p->rw = p->rw && (e & X86_PTE_RW);
		p->us = p->us && (e & X86_PTE_US);
		if (lvl == 1) {
			*gpa = (e & X86_PTE_ADDR_MASK) | (la & 0xfff);
			return 0;
		}
		if ((e & X86_PTE_PS) && (lvl == 2 || lvl == 3)) {
			uint64_t mask = (1ULL << shift) - 1;

			*gpa = (e & X86_PTE_ADDR_MASK & ~mask) | (la & mask);
			return 0;
		}
		if (e & X86_PTE_PS)
			return -EFAULT; /* PS is reserved at this level */
		table = e & X86_PTE_ADDR_MASK;
	}
	return -EFAULT;
}

static int walk_pae(const struct gva_space *s, uint64_t la, uint64_t *gpa, struct perm *p)
{
	uint64_t pdpte;

	la &= 0xffffffffULL;
	if (!read_u64(s, (s->cr3 & 0xffffffe0ULL) + ((la >> 30) & 3) * 8, &pdpte))
		return -EFAULT;
	if (!(pdpte & X86_PTE_P))
		return -EFAULT;
	*p = (struct perm){ .rw = true, .us = true }; /* PAE PDPTEs have no R/W or U/S bit */
	return walk_table(s, pdpte & X86_PTE_ADDR_MASK, 2, la, gpa, p);
}

static int walk_long(const struct gva_space *s, uint64_t la, uint64_t *gpa, struct perm *p)
{
	unsigned int bits = (s->cr4 & X86_CR4_LA57) ? 57 : 48;
	int64_t sx = (int64_t)(la << (64 - bits)) >> (64 - bits);

	if ((uint64_t)sx != la)
		return -EFAULT; /* not canonical */
	*p = (struct perm){ .rw = true, .us = true };
	return walk_table(s, s->cr3 & X86_PTE_ADDR_MASK, bits == 57 ? 5 : 4, la, gpa, p);
}

static int translate(const struct gva_space *s, uint64_t la, uint64_t *gpa, struct perm *p)
{
	if (!(s->cr0 & X86_CR0_PG)) {
		*gpa = (s->efer & X86_EFER_LMA) ? la : (la & 0xffffffffULL);
		*p = (struct perm){ .rw = true, .us = false };
		return 0;
	}
	if (s->efer & X86_EFER_LMA)
		return walk_long(s, la, gpa, p);
	if (s->cr4 & X86_CR4_PAE)
		return walk_pae(s, la, gpa, p);
	return walk_32(s, la, gpa, p);
}

int gva__translate(const struct gva_space *s, uint64_t la, uint64_t *gpa)
{
	struct perm p;

	return translate(s, la, gpa, &p);
}

size_t gva__read_prefix(const struct gva_space *s, uint64_t la, void *buf, size_t len)
{
	bool wrap32 = !(s->efer & X86_EFER_LMA);
	size_t done = 0;

	while (done < len) {
		uint64_t a = la + done, gpa;
		size_t chunk;
		const void *p;

		if (wrap32)
			a &= 0xffffffffULL;
		chunk = X86_PAGE_SIZE - (a & (X86_PAGE_SIZE - 1));
		if (chunk > len - done)
			chunk = len - done;
		if (gva__translate(s, a, &gpa))
			break;
		p = s->ptr(s->ctx, gpa, chunk);
		if (!p)
			break;
		memcpy((uint8_t *)buf + done, p, chunk);
		done += chunk;
	}
	return done;
}

int gva__read(const struct gva_space *s, uint64_t la, void *buf, size_t len)
{
	return gva__read_prefix(s, la, buf, len) == len ? 0 : -EFAULT;
}

/* At most this many pages per gva__write() (8 bytes cross at most one boundary). */
#define GVA_WRITE_PAGES 4

int gva__write(const struct gva_space *s, uint64_t la, const void *buf, size_t len)
{
	bool wrap32 = !(s->efer & X86_EFER_LMA);
	struct perm p;
	uint8_t *dst[GVA_WRITE_PAGES];
	size_t size[GVA_WRITE_PAGES];
	unsigned int n = 0;
	size_t done = 0;

	/* Every page is checked before the first byte is written: nothing or all of it. */
	while (done < len) {
		uint64_t a = la + done, gpa;
		size_t chunk;

		if (wrap32)
			a &= 0xffffffffULL;
		chunk = X86_PAGE_SIZE - (a & (X86_PAGE_SIZE - 1));
		if (chunk > len - done)
			chunk = len - done;
		if (n == GVA_WRITE_PAGES || translate(s, a, &gpa, &p))
			return -EFAULT;
		/* a supervisor write: read-only pages are writable only with CR0.WP clear */
		if (!p.rw && (s->cr0 & X86_CR0_WP))
			return -EFAULT;
		/* and user pages only without SMAP, or with it opened (CPL < 3, RFLAGS.AC) */
		if (p.us && (s->cr4 & X86_CR4_SMAP) && !s->smap_open)
			return -EFAULT;
		dst[n] = s->ptr(s->ctx, gpa, chunk);
		if (!dst[n])
			return -EFAULT;
		size[n++] = chunk;
		done += chunk;
	}
	done = 0;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(dst[i], (const uint8_t *)buf + done, size[i]);
		done += size[i];
	}
	return 0;
}
