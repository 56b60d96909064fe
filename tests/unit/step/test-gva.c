// SPDX-License-Identifier: GPL-2.0
/*
 * test-gva.c - guest page walks over page tables built in a buffer, for every paging mode.
 */
#include <errno.h>
#include <stdlib.h>

#include "gva.h"
#include "step-tests.h"
#include "x86.h"

#define RAM_SIZE (8ULL << 20)

static struct fake_ram ram;

static void ram_setup(void)
{
	ram.size = RAM_SIZE;
	ram.buf = calloc(1, RAM_SIZE);
	ck_assert_ptr_nonnull(ram.buf);
}

static void ram_teardown(void)
{
	free(ram.buf);
	ram.buf = NULL;
}

static struct gva_space space(uint64_t cr0, uint64_t cr3, uint64_t cr4, uint64_t efer)
{
	struct gva_space s = {
		.ptr = fake_ram_ptr, .ctx = &ram, .cr0 = cr0, .cr3 = cr3, .cr4 = cr4, .efer = efer,
	};
	return s;
}

static uint64_t xlate(const struct gva_space *s, uint64_t la)
{
	uint64_t gpa = ~0ULL;

	ck_assert_msg(gva__translate(s, la, &gpa) == 0, "la %#llx should be mapped",
		      (unsigned long long)la);
	return gpa;
}

static void unmapped(const struct gva_space *s, uint64_t la)
{
	uint64_t gpa = 0;

	ck_assert_msg(gva__translate(s, la, &gpa) == -EFAULT, "la %#llx should not be mapped",
		      (unsigned long long)la);
}

START_TEST(test_paging_off)
{
	struct gva_space s = space(X86_CR0_PE, 0, 0, 0);
	char buf[4];

	ck_assert_uint_eq(xlate(&s, 0x1234), 0x1234);
	ck_assert_uint_eq(xlate(&s, 0x100001234ULL), 0x1234); /* 32-bit linear addresses */
	memcpy(ram.buf + 0x5000, "abcd", 4);
	ck_assert_int_eq(gva__read(&s, 0x5000, buf, 4), 0);
	ck_assert_int_eq(memcmp(buf, "abcd", 4), 0);
	/* beyond RAM: refused, never read */
	ck_assert_int_eq(gva__read(&s, RAM_SIZE - 2, buf, 4), -EFAULT);
	ck_assert_uint_eq(gva__read_prefix(&s, RAM_SIZE - 2, buf, 4), 2);
	ck_assert_int_eq(gva__read(&s, 0xfffffffe, buf, 4), -EFAULT);
}
END_TEST

START_TEST(test_paging_32)
{
	struct gva_space s = space(X86_CR0_PE | X86_CR0_PG, 0x1000, 0, 0);
	uint64_t gpa;

	/* PDE 1: 0x400000-0x7fffff */
	fake_put32(&ram, 0x1000 + 1 * 4, 0x2000 | X86_PTE_P | X86_PTE_RW);
	fake_put32(&ram, 0x2000 + 5 * 4, 0x300000 | X86_PTE_P);      /* PTE 5 */
	fake_put32(&ram, 0x2000 + 6 * 4, 0x301000);          /* PTE 6: not present */
	/* PDE 2: 4 MiB page with PSE */
	fake_put32(&ram, 0x1000 + 2 * 4, 0x400000 | X86_PTE_P | X86_PTE_PS);
	/* PDE 3: 4 MiB page at 0x1_00400000 (PSE-36: PDE bits 20:13 are address bits 39:32) */
	fake_put32(&ram, 0x1000 + 3 * 4, 0x400000 | (1U << 13) | X86_PTE_P | X86_PTE_PS);
	/* PDE 4: table at the end of RAM */
	fake_put32(&ram, 0x1000 + 4 * 4, 0x7ff000 | X86_PTE_P);
	/* PDE 1023: table beyond RAM */
	fake_put32(&ram, 0x1000 + 1023 * 4, 0xfffff000 | X86_PTE_P);

	ck_assert_uint_eq(xlate(&s, 0x405123), 0x300123);
	unmapped(&s, 0x406000);
	unmapped(&s, 0x0);       /* PDE 0 not present */
	unmapped(&s, 0xffc00000); /* table outside RAM */
	unmapped(&s, 0x812345);  /* PS without CR4.PSE: a table at 0x400000 of empty entries */
	s.cr4 = X86_CR4_PSE;
	ck_assert_uint_eq(xlate(&s, 0x812345), 0x412345);
	ck_assert_uint_eq(xlate(&s, 0xc00042), 0x100400042ULL);
	ck_assert_int_eq(gva__translate(&s, 0x1000000, &gpa), -EFAULT); /* PTE in a zero table */
}
END_TEST

START_TEST(test_paging_pae)
{
	struct gva_space s = space(X86_CR0_PE | X86_CR0_PG, 0x1020, X86_CR4_PAE, 0);

	fake_put64(&ram, 0x1020 + 0 * 8, 0x2000 | X86_PTE_P);       /* PDPTE 0 */
	/* PDPTE 3: directory beyond RAM */
	fake_put64(&ram, 0x1020 + 3 * 8, 0x7ffff000 | X86_PTE_P);
	fake_put64(&ram, 0x2000 + 1 * 8, 0x3000 | X86_PTE_P);       /* PDE 1 */
	fake_put64(&ram, 0x2000 + 2 * 8, 0x600000 | X86_PTE_P | X86_PTE_PS); /* PDE 2: 2 MiB page */
	fake_put64(&ram, 0x3000 + 3 * 8, 0x5000 | X86_PTE_P | (1ULL << 63)); /* PTE 3, NX */

	ck_assert_uint_eq(xlate(&s, 0x203456), 0x5456);
	ck_assert_uint_eq(xlate(&s, 0x412345), 0x612345);
	unmapped(&s, 0x204000);
	unmapped(&s, 0x40000000); /* PDPTE 1 not present */
	unmapped(&s, 0xc0000000);
}
END_TEST

static void build_4level(uint64_t root)
{
	/* low half: la 0x1000 → 0x7000, la 0x2000 → 0x3000, la 0x200000 (2 MiB) → 0x600000 */
	fake_put64(&ram, root + 0 * 8, 0x11000 | X86_PTE_P);
	fake_put64(&ram, 0x11000 + 0 * 8, 0x12000 | X86_PTE_P);
	fake_put64(&ram, 0x11000 + 1 * 8, 0x40000000 | X86_PTE_P | X86_PTE_PS); /* 1 GiB page */
	fake_put64(&ram, 0x12000 + 0 * 8, 0x13000 | X86_PTE_P);
	/* 2 MiB, PAT */
	fake_put64(&ram, 0x12000 + 1 * 8, 0x600000 | X86_PTE_P | X86_PTE_PS | (1ULL << 12));
	fake_put64(&ram, 0x13000 + 1 * 8, 0x7000 | X86_PTE_P);
	fake_put64(&ram, 0x13000 + 2 * 8, 0x3000 | X86_PTE_P);
	/* high half: 0xffff800000000000 → PML4 256 → the same PDPT */
	fake_put64(&ram, root + 256 * 8, 0x11000 | X86_PTE_P);
	/* a PS bit in a PML4 entry is reserved */
	fake_put64(&ram, root + 2 * 8, 0x11000 | X86_PTE_P | X86_PTE_PS);
}

START_TEST(test_paging_4level)
{
	struct gva_space s = space(X86_CR0_PE | X86_CR0_PG, 0x10000 | 0x123 /* PCID */, X86_CR4_PAE,
				   X86_EFER_LMA | 0x100);
	char buf[4];

	build_4level(0x10000);
	ck_assert_uint_eq(xlate(&s, 0x1abc), 0x7abc);
	ck_assert_uint_eq(xlate(&s, 0x212345), 0x612345);
	ck_assert_uint_eq(xlate(&s, 0x40001234), 0x40001234);
	ck_assert_uint_eq(xlate(&s, 0xffff800000001abcULL), 0x7abc);
	unmapped(&s, 0x3000);
	unmapped(&s, 0x0000800000000000ULL); /* not canonical */
	unmapped(&s, 0x00ff000000001000ULL); /* not canonical with 4 levels */
	unmapped(&s, 0x10000000000ULL);       /* PML4 2 has PS set */

	/* a read crossing a page boundary into a different physical page */
	memcpy(ram.buf + 0x7ffe, "AB", 2);
	memcpy(ram.buf + 0x3000, "CD", 2);
	ck_assert_int_eq(gva__read(&s, 0x1ffe, buf, 4), 0);
	ck_assert_int_eq(memcmp(buf, "ABCD", 4), 0);
	/* the next page is unmapped: only the prefix */
	ck_assert_uint_eq(gva__read_prefix(&s, 0x2ffe, buf, 4), 2);
	ck_assert_int_eq(gva__read(&s, 0x2ffe, buf, 4), -EFAULT);
	/* a 1 GiB page beyond RAM translates but cannot be read */
	ck_assert_int_eq(gva__read(&s, 0x40001234, buf, 4), -EFAULT);
}
END_TEST

START_TEST(test_paging_5level)
{
	struct gva_space s = space(X86_CR0_PE | X86_CR0_PG, 0x20000, X86_CR4_PAE | X86_CR4_LA57,
				   X86_EFER_LMA);

	fake_put64(&ram, 0x20000 + 1 * 8, 0x10000 | X86_PTE_P); /* PML5 1 → the 4-level tree */
	fake_put64(&ram, 0x20000 + 511 * 8, 0x10000 | X86_PTE_P);
	build_4level(0x10000);
	ck_assert_uint_eq(xlate(&s, 0x0001000000001abcULL), 0x7abc);
	ck_assert_uint_eq(xlate(&s, 0xffff800000001abcULL), 0x7abc);
	unmapped(&s, 0x1abc); /* PML5 0 not present */
	unmapped(&s, 0x0100000000000000ULL); /* not canonical with 5 levels */
}
END_TEST

START_TEST(test_paging_hostile)
{
	struct gva_space s = space(X86_CR0_PE | X86_CR0_PG, 0x10000, X86_CR4_PAE, X86_EFER_LMA);
	char buf[16];

	/* every entry points at the table itself: the walk ends after 4 levels */
	for (int i = 0; i < 512; i++)
		fake_put64(&ram, 0x10000 + i * 8, 0x10000 | X86_PTE_P);
	ck_assert_uint_eq(xlate(&s, 0x1008), 0x10008);
	/* entries with every address bit set */
	fake_put64(&ram, 0x10000, ~0ULL & ~X86_PTE_PS);
	unmapped(&s, 0x1000);
	/* CR3 beyond RAM */
	s.cr3 = 0xffffffffff000ULL;
	unmapped(&s, 0x1000);
	ck_assert_uint_eq(gva__read_prefix(&s, 0x1000, buf, sizeof(buf)), 0);
}
END_TEST

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(test_paging_random)
{
	/* page tables of random bytes, every mode: walks end, reads stay inside RAM */
	static const uint64_t modes[][3] = {
		{ X86_CR0_PE | X86_CR0_PG, 0, 0 },
		{ X86_CR0_PE | X86_CR0_PG, X86_CR4_PSE, 0 },
		{ X86_CR0_PE | X86_CR0_PG, X86_CR4_PAE, 0 },
		{ X86_CR0_PE | X86_CR0_PG, X86_CR4_PAE, X86_EFER_LMA },
		{ X86_CR0_PE | X86_CR0_PG, X86_CR4_PAE | X86_CR4_LA57, X86_EFER_LMA },
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL, gpa;
	uint8_t buf[64];

	for (uint64_t i = 0; i < RAM_SIZE / 8; i++) {
		uint64_t v = xorshift(&x);

		/* mostly addresses inside RAM, with random flag and high bits */
		if (v & 1)
			v = (v & (RAM_SIZE - 1) & ~0xfffULL) | (v >> 52) | (v & (1ULL << 63));
		fake_put64(&ram, i * 8, v);
	}
	for (unsigned int m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		for (unsigned int i = 0; i < 20000; i++) {
			struct gva_space s = space(modes[m][0], xorshift(&x), modes[m][1],
						   modes[m][2]);
			uint64_t la = xorshift(&x);
			size_t n;

			if (i & 1)
				la &= 0x7fffffffffffULL; /* canonical, low half */
			if (gva__translate(&s, la, &gpa) == 0 && (i & 2))
				(void)gva__read(&s, la, buf, sizeof(buf));
			n = gva__read_prefix(&s, la, buf, (i % sizeof(buf)) + 1);
			ck_assert_uint_le(n, (i % sizeof(buf)) + 1);
		}
	}
}
END_TEST

Suite *gva_suite(void)
{
	Suite *s = suite_create("gva");
	TCase *tc = tcase_create("walk");

	tcase_add_checked_fixture(tc, ram_setup, ram_teardown);
	tcase_add_test(tc, test_paging_off);
	tcase_add_test(tc, test_paging_32);
	tcase_add_test(tc, test_paging_pae);
	tcase_add_test(tc, test_paging_4level);
	tcase_add_test(tc, test_paging_5level);
	tcase_add_test(tc, test_paging_hostile);
	tcase_add_test(tc, test_paging_random);
	suite_add_tcase(s, tc);
	return s;
}
