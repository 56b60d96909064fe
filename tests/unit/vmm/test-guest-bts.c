// SPDX-License-Identifier: GPL-2.0
/*
 * test-guest-bts.c - guest-visible BTS's stores into a guest's DS buffer (guest-bts.c) over a
 * fabricated guest memory with 4-level paging: the SDM's modes, and every hostile DS
 * configuration dropped without a byte written where it must not be.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "cpuid.h"
#include "guest-bts.h"
#include "gva.h"
#include "tests.h"
#include "x86.h"

/*
 * 64 KiB of guest RAM; VA 0..2 MiB mapped with 4 KiB pages: page n at GPA n * 4 KiB for
 * n < 16, except page RO_PAGE (read-only) and NP_PAGE (not present); page MMIO_PAGE maps
 * GPA 0xfee00000 (not RAM).
 */
#define MEM_SIZE 0x10000
#define PML4 0x1000
#define PDPT 0x2000
#define PD 0x3000
#define PT 0x4000
#define DS 0x5000      /* the DS area */
#define BUF 0x6000     /* a buffer of BUF_RECS records, pages 6 and 7 */
#define RO_PAGE 9
#define NP_PAGE 11
#define MMIO_PAGE 12
#define REC 24

static uint8_t *mem;

static void *mem_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	if (gpa >= MEM_SIZE || len > MEM_SIZE - gpa)
		return NULL;
	return mem + gpa;
}

static void put64(uint64_t gpa, uint64_t v)
{
	memcpy(mem + gpa, &v, 8);
}

static uint64_t get64(uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, mem + gpa, 8);
	return v;
}

static struct gva_space as(void)
{
	struct gva_space s = {
		.ptr = mem_ptr,
		.cr0 = X86_CR0_PE | X86_CR0_PG | X86_CR0_WP,
		.cr3 = PML4,
		.cr4 = X86_CR4_PAE,
		.efer = X86_EFER_LME | X86_EFER_LMA,
	};
	return s;
}

static void setup(void)
{
	mem = calloc(1, MEM_SIZE);
	ck_assert_ptr_nonnull(mem);
	put64(PML4, PDPT | X86_PTE_P | X86_PTE_RW);
	put64(PDPT, PD | X86_PTE_P | X86_PTE_RW);
	put64(PD, PT | X86_PTE_P | X86_PTE_RW);
	for (uint64_t n = 1; n < 16; n++)
		put64(PT + 8 * n, (n << 12) | X86_PTE_P | X86_PTE_RW);
	put64(PT + 8 * RO_PAGE, ((uint64_t)RO_PAGE << 12) | X86_PTE_P);
	put64(PT + 8 * NP_PAGE, 0);
	put64(PT + 8 * MMIO_PAGE, 0xfee00000ULL | X86_PTE_P | X86_PTE_RW);
}

static void teardown(void)
{
	free(mem);
}

static void ds_set(uint64_t base, uint64_t index, uint64_t max, uint64_t threshold)
{
	put64(DS + X86_DS_BTS_BASE, base);
	put64(DS + X86_DS_BTS_INDEX, index);
	put64(DS + X86_DS_BTS_ABS_MAX, max);
	put64(DS + X86_DS_BTS_THRESHOLD, threshold);
}

static struct guest_bts gb_new(uint64_t debugctl)
{
	struct guest_bts gb = { .debugctl = debugctl, .ds_area = DS };
	return gb;
}

static enum guest_bts_result store(struct guest_bts *gb, uint64_t n, uint8_t cpl,
				   enum guest_bts_drop *drop)
{
	struct gva_space s = as();

	return guest_bts__store(gb, &s, 0x1000 + n, 0x2000 + n, cpl, drop);
}

/* Bytes of guest memory outside [keep, keep + len) equal to a snapshot @snap. */
static void assert_only_changed(const uint8_t *snap, uint64_t keep, uint64_t len)
{
	for (uint64_t i = 0; i < MEM_SIZE; i++) {
		if (i >= keep && i < keep + len)
			continue;
		ck_assert_msg(mem[i] == snap[i], "byte %#llx changed", (unsigned long long)i);
	}
}

START_TEST(test_circular)
{
	struct guest_bts gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
	enum guest_bts_drop drop;

	/* 4 records; the maximum an exact multiple, then one byte more (the 32-bit SDM text) */
	for (unsigned int extra = 0; extra < 2; extra++) {
		ds_set(BUF, BUF, BUF + 4 * REC + extra, BUF + 5 * REC);
		for (uint64_t n = 0; n < 6; n++)
			ck_assert_int_eq(store(&gb, n, 0, &drop), GUEST_BTS_STORED);
		ck_assert_uint_eq(get64(DS + X86_DS_BTS_INDEX), BUF + 2 * REC);
		ck_assert_uint_eq(get64(BUF), 0x1004);
		ck_assert_uint_eq(get64(BUF + 8), 0x2004);
		ck_assert_uint_eq(get64(BUF + 16), 0);
		ck_assert_uint_eq(get64(BUF + REC), 0x1005);
		ck_assert_uint_eq(get64(BUF + 2 * REC), 0x1002);
		ck_assert_uint_eq(get64(BUF + 3 * REC), 0x1003);
		ck_assert_uint_eq(get64(BUF + 4 * REC), 0);
	}
	ck_assert_uint_eq(gb.stats.stored, 12);
	ck_assert_uint_eq(gb.stats.dropped, 0);
}
END_TEST

START_TEST(test_btint)
{
	struct guest_bts gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTINT);
	enum guest_bts_drop drop;
	uint8_t snap[MEM_SIZE];

	ds_set(BUF, BUF, BUF + 4 * REC, BUF + 2 * REC);
	ck_assert_int_eq(store(&gb, 0, 0, &drop), GUEST_BTS_STORED);
	ck_assert_int_eq(store(&gb, 1, 0, &drop), GUEST_BTS_PMI);
	ck_assert_int_eq(store(&gb, 2, 0, &drop), GUEST_BTS_PMI);
	ck_assert_int_eq(store(&gb, 3, 0, &drop), GUEST_BTS_PMI);
	ck_assert_uint_eq(get64(DS + X86_DS_BTS_INDEX), BUF + 4 * REC);
	/* full: nothing stored, nothing written, the index stays at the maximum */
	memcpy(snap, mem, MEM_SIZE);
	ck_assert_int_eq(store(&gb, 4, 0, &drop), GUEST_BTS_DROPPED);
	ck_assert_int_eq(drop, GUEST_BTS_DROP_FULL);
	assert_only_changed(snap, 0, 0);
	ck_assert_uint_eq(gb.stats.pmis, 3);
	ck_assert_uint_eq(gb.stats.dropped, 1);
	/* the handler drains: from the base again */
	put64(DS + X86_DS_BTS_INDEX, BUF);
	ck_assert_int_eq(store(&gb, 5, 0, &drop), GUEST_BTS_STORED);
	ck_assert_uint_eq(get64(BUF), 0x1005);
}
END_TEST

START_TEST(test_modes)
{
	static const struct {
		uint64_t debugctl;
		enum guest_bts_result cpl0, cpl3;
	} t[] = {
		{ 0, GUEST_BTS_OFF, GUEST_BTS_OFF },
		{ X86_DEBUGCTL_BTS, GUEST_BTS_OFF, GUEST_BTS_OFF },
		{ X86_DEBUGCTL_TR, GUEST_BTS_OFF, GUEST_BTS_OFF },
		{ X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS, GUEST_BTS_STORED, GUEST_BTS_STORED },
		{ X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTS_OFF_OS, GUEST_BTS_FILTERED,
		  GUEST_BTS_STORED },
		{ X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTS_OFF_USR, GUEST_BTS_STORED,
		  GUEST_BTS_FILTERED },
		{ X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTS_OFF_OS |
			  X86_DEBUGCTL_BTS_OFF_USR | X86_DEBUGCTL_BTINT,
		  GUEST_BTS_FILTERED, GUEST_BTS_FILTERED },
	};
	enum guest_bts_drop drop;

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct guest_bts gb = gb_new(t[i].debugctl);

		ds_set(BUF, BUF, BUF + 8 * REC, BUF + 9 * REC);
		ck_assert_int_eq(store(&gb, 0, 0, &drop), t[i].cpl0);
		ck_assert_int_eq(store(&gb, 1, 3, &drop), t[i].cpl3);
		ck_assert_uint_eq(get64(DS + X86_DS_BTS_INDEX),
				  BUF + REC * ((t[i].cpl0 == GUEST_BTS_STORED) +
					       (t[i].cpl3 == GUEST_BTS_STORED)));
	}
}
END_TEST

/* One hostile DS configuration: the record is dropped for @why and only @keep changes. */
static void hostile(uint64_t ds_area, uint64_t debugctl, uint64_t base, uint64_t index,
		    uint64_t max, uint64_t thr, enum guest_bts_drop why)
{
	struct guest_bts gb = gb_new(debugctl);
	enum guest_bts_drop drop = 0;
	uint8_t snap[MEM_SIZE];

	gb.ds_area = ds_area;
	ds_set(base, index, max, thr);
	memcpy(snap, mem, MEM_SIZE);
	ck_assert_int_eq(store(&gb, 0, 0, &drop), GUEST_BTS_DROPPED);
	ck_assert_int_eq(drop, why);
	ck_assert_uint_eq(gb.stats.dropped, 1);
	ck_assert_uint_eq(gb.stats.stored, 0);
	assert_only_changed(snap, 0, 0);
}

START_TEST(test_hostile)
{
	const uint64_t on = X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS, bi = on | X86_DEBUGCTL_BTINT;
	const uint64_t m = BUF + 8 * REC;

	/* the DS area: not mapped, outside RAM, MMIO, non-canonical, wrapping */
	hostile((uint64_t)NP_PAGE << 12, on, BUF, BUF, m, m + REC, GUEST_BTS_DROP_DS_AREA);
	hostile(0x300000, on, BUF, BUF, m, m + REC, GUEST_BTS_DROP_DS_AREA);
	hostile((uint64_t)MMIO_PAGE << 12, on, BUF, BUF, m, m + REC, GUEST_BTS_DROP_DS_AREA);
	hostile(0x0000800000000000ULL, on, BUF, BUF, m, m + REC, GUEST_BTS_DROP_DS_AREA);
	hostile(0xfffffffffffffff0ULL, on, BUF, BUF, m, m + REC, GUEST_BTS_DROP_DS_AREA);
	/* the fields: index below the base or unaligned, maximum < base + 24, near 2^64 */
	hostile(DS, on, BUF, BUF - REC, m, m + REC, GUEST_BTS_DROP_FIELDS);
	hostile(DS, on, BUF, BUF + 1, m, m + REC, GUEST_BTS_DROP_FIELDS);
	hostile(DS, on, BUF, BUF, BUF + REC - 1, m + REC, GUEST_BTS_DROP_FIELDS);
	hostile(DS, on, 0x0000800000000000ULL, 0x0000800000000000ULL, ~0ULL, ~0ULL,
		GUEST_BTS_DROP_FIELDS);
	hostile(DS, on, 0xfffffffffffffff0ULL, 0xfffffffffffffff0ULL, ~0ULL, ~0ULL,
		GUEST_BTS_DROP_FIELDS);
	hostile(DS, on, ~0ULL - 2 * REC, ~0ULL - 2 * REC, 0, 0, GUEST_BTS_DROP_FIELDS);
	/* a canonical buffer at the top of the address space: not mapped */
	hostile(DS, on, 0xffffffffffff0000ULL, 0xffffffffffff0000ULL, 0xffffffffffffff00ULL,
		0xffffffffffffff00ULL, GUEST_BTS_DROP_BUFFER);
	/* BTINT: index past the maximum, threshold anywhere */
	hostile(DS, bi, BUF, m + REC, m, BUF, GUEST_BTS_DROP_FULL);
	hostile(DS, bi, BUF, m, m, ~0ULL, GUEST_BTS_DROP_FULL);
	/* the buffer: outside RAM, MMIO, not present, read-only, straddling either */
	hostile(DS, on, 0x300000, 0x300000, 0x300000 + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
	hostile(DS, on, (uint64_t)MMIO_PAGE << 12, (uint64_t)MMIO_PAGE << 12,
		((uint64_t)MMIO_PAGE << 12) + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
	hostile(DS, on, (uint64_t)NP_PAGE << 12, (uint64_t)NP_PAGE << 12,
		((uint64_t)NP_PAGE << 12) + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
	hostile(DS, on, (uint64_t)RO_PAGE << 12, (uint64_t)RO_PAGE << 12,
		((uint64_t)RO_PAGE << 12) + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
	hostile(DS, on, ((uint64_t)NP_PAGE << 12) - 16, ((uint64_t)NP_PAGE << 12) - 16,
		((uint64_t)NP_PAGE << 12) + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
	hostile(DS, on, ((uint64_t)RO_PAGE << 12) - 16, ((uint64_t)RO_PAGE << 12) - 16,
		((uint64_t)RO_PAGE << 12) + 8 * REC, 0, GUEST_BTS_DROP_BUFFER);
}
END_TEST

START_TEST(test_ds_read_only)
{
	struct guest_bts gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
	uint64_t ro = (uint64_t)RO_PAGE << 12;
	enum guest_bts_drop drop = 0;
	uint8_t snap[MEM_SIZE];

	/* the DS area on a read-only page: the record is written, the index cannot be */
	gb.ds_area = ro;
	put64(ro + X86_DS_BTS_BASE, BUF);
	put64(ro + X86_DS_BTS_INDEX, BUF);
	put64(ro + X86_DS_BTS_ABS_MAX, BUF + 4 * REC);
	memcpy(snap, mem, MEM_SIZE);
	ck_assert_int_eq(store(&gb, 0, 0, &drop), GUEST_BTS_DROPPED);
	ck_assert_int_eq(drop, GUEST_BTS_DROP_INDEX);
	assert_only_changed(snap, BUF, REC);
	ck_assert_uint_eq(get64(ro + X86_DS_BTS_INDEX), BUF);
}
END_TEST

START_TEST(test_overlap)
{
	struct guest_bts gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
	enum guest_bts_drop drop;
	uint8_t snap[MEM_SIZE];

	/* the buffer starts at the DS area: each record overwrites the fields, then bounded */
	ds_set(DS, DS, DS + 4 * REC, DS + 5 * REC);
	memcpy(snap, mem, MEM_SIZE);
	for (uint64_t n = 0; n < 64; n++)
		store(&gb, n, 0, &drop);
	assert_only_changed(snap, DS, 4 * REC);
	ck_assert_uint_eq(gb.stats.stored + gb.stats.dropped, 64);

	/* index past the maximum in circular mode: back to the base */
	gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
	ds_set(BUF, BUF + 100 * REC, BUF + 4 * REC, 0);
	ck_assert_int_eq(store(&gb, 7, 0, &drop), GUEST_BTS_STORED);
	ck_assert_uint_eq(get64(BUF), 0x1007);
	ck_assert_uint_eq(get64(DS + X86_DS_BTS_INDEX), BUF + REC);
}
END_TEST

START_TEST(test_smap)
{
	struct guest_bts gb = gb_new(X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
	enum guest_bts_drop drop = 0;
	uint8_t snap[MEM_SIZE];
	struct gva_space s = as();

	/* the buffer's pages are user pages (U/S at every level of their walk) */
	put64(PML4, get64(PML4) | X86_PTE_US);
	put64(PDPT, get64(PDPT) | X86_PTE_US);
	put64(PD, get64(PD) | X86_PTE_US);
	put64(PT + 8 * (BUF >> 12), get64(PT + 8 * (BUF >> 12)) | X86_PTE_US);
	ds_set(BUF, BUF, BUF + 4 * REC, 0);

	/* SMAP: a supervisor store to a user page is refused, nothing is written */
	s.cr4 |= X86_CR4_SMAP;
	memcpy(snap, mem, MEM_SIZE);
	ck_assert_int_eq(guest_bts__store(&gb, &s, 0x1000, 0x2000, 3, &drop), GUEST_BTS_DROPPED);
	ck_assert_int_eq(drop, GUEST_BTS_DROP_BUFFER);
	assert_only_changed(snap, 0, 0);

	/* opened (CPL < 3 with RFLAGS.AC), or SMAP off: stored */
	s.smap_open = true;
	ck_assert_int_eq(guest_bts__store(&gb, &s, 0x1001, 0x2001, 0, &drop), GUEST_BTS_STORED);
	s.smap_open = false;
	s.cr4 &= ~X86_CR4_SMAP;
	ck_assert_int_eq(guest_bts__store(&gb, &s, 0x1002, 0x2002, 3, &drop), GUEST_BTS_STORED);
	ck_assert_uint_eq(get64(BUF), 0x1001);
	ck_assert_uint_eq(get64(BUF + REC), 0x1002);

	/* a supervisor page under SMAP: stored */
	put64(PT + 8 * (BUF >> 12), get64(PT + 8 * (BUF >> 12)) & ~X86_PTE_US);
	s.cr4 |= X86_CR4_SMAP;
	ck_assert_int_eq(guest_bts__store(&gb, &s, 0x1003, 0x2003, 3, &drop), GUEST_BTS_STORED);
	ck_assert_uint_eq(get64(BUF + 2 * REC), 0x1003);
}
END_TEST

START_TEST(test_msrs)
{
	struct guest_bts gb = { 0 };
	uint64_t v;

	ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_DEBUGCTL,
					  GUEST_BTS_DEBUGCTL_BITS | X86_DEBUGCTL_LBR |
						  X86_DEBUGCTL_BTF,
					  false),
			 0);
	ck_assert_int_eq(guest_bts__rdmsr(&gb, X86_MSR_IA32_DEBUGCTL, &v), 0);
	ck_assert_uint_eq(v, GUEST_BTS_DEBUGCTL_BITS);
	for (unsigned int bit = 2; bit < 64; bit++) {
		if ((1ULL << bit) & GUEST_BTS_DEBUGCTL_BITS)
			continue;
		ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_DEBUGCTL, 1ULL << bit, false),
				 -EINVAL);
	}
	ck_assert_uint_eq(gb.debugctl, GUEST_BTS_DEBUGCTL_BITS);
	ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_DS_AREA, 0x00007ffffffff000ULL, false),
			 0);
	ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_DS_AREA, 0x0000800000000000ULL, false),
			 -EINVAL);
	ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_DS_AREA, 0x0000800000000000ULL, true),
			 0);
	ck_assert_int_eq(guest_bts__rdmsr(&gb, X86_MSR_IA32_DS_AREA, &v), 0);
	ck_assert_uint_eq(v, 0x0000800000000000ULL);
	ck_assert_int_eq(guest_bts__wrmsr(&gb, X86_MSR_IA32_MISC_ENABLE, 0, false), -ENOENT);
	ck_assert_int_eq(guest_bts__rdmsr(&gb, X86_MSR_EFER, &v), -ENOENT);
}
END_TEST

START_TEST(test_cpuid)
{
	struct kvm_cpuid2 *sup = calloc(1, sizeof(*sup) + sizeof(sup->entries[0])), *c;

	ck_assert_ptr_nonnull(sup);
	sup->nent = 1;
	sup->entries[0].function = 1;
	c = cpuid__for_vcpu(sup, 0, 1, CPUID_GUEST_BTS);
	ck_assert_ptr_nonnull(c);
	ck_assert(c->entries[0].edx & X86_CPUID_1_EDX_DS);
	ck_assert(c->entries[0].ecx & X86_CPUID_1_ECX_DTES64);
	ck_assert(c->entries[0].ecx & X86_CPUID_1_ECX_DS_CPL);
	free(c);
	c = cpuid__for_vcpu(sup, 0, 1, 0);
	ck_assert(!(c->entries[0].edx & X86_CPUID_1_EDX_DS));
	ck_assert(!(c->entries[0].ecx & (X86_CPUID_1_ECX_DTES64 | X86_CPUID_1_ECX_DS_CPL)));
	free(c);
	free(sup);
}
END_TEST

Suite *guest_bts_suite(void)
{
	Suite *s = suite_create("guest-bts");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_circular);
	tcase_add_test(tc, test_btint);
	tcase_add_test(tc, test_modes);
	tcase_add_test(tc, test_hostile);
	tcase_add_test(tc, test_ds_read_only);
	tcase_add_test(tc, test_overlap);
	tcase_add_test(tc, test_smap);
	tcase_add_test(tc, test_msrs);
	tcase_add_test(tc, test_cpuid);
	suite_add_tcase(s, tc);
	return s;
}
