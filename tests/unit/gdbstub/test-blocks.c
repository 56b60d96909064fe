// SPDX-License-Identifier: GPL-2.0
/*
 * test-blocks.c - branches to gdb's BTS blocks: a table of branch sequences (inside the space,
 * excursions that come back to the same or the next instruction or elsewhere, breaks, a way
 * back that was not recorded) and the exact blocks, newest first.
 */
#include <stdlib.h>

#include "bts-blocks.h"
#include "gdbstub-test.h"

/* Every instruction of the tests is 2 bytes long, but at 0x90, which cannot be decoded. */
static uint64_t next_insn(void *ctx, uint64_t addr)
{
	return addr == 0x90 ? 0 : addr + 2;
}

#define IN_IN(f, t)  { f, t, true, true, false }
#define IN_OUT(f, t) { f, t, true, false, false }
#define OUT_OUT(f, t) { f, t, false, false, false }
#define OUT_IN(f, t) { f, t, false, true, false }
#define BREAK_IN_IN(f, t) { f, t, true, true, true }
#define K 0xffff0000

static const struct {
	const char *what;
	struct bts_branch br[8];
	size_t nr;
	struct gdb_btrace_block want[8];
	size_t nr_want;
} cases[] = {
	{ "nothing", { { 0 } }, 0, { { 0 } }, 0 },
	{ "one branch: one block at the PC", { IN_IN(0x10, 0x20) }, 1, { { 0x20, 0x20 } }, 1 },
	{ "branches inside the space", { IN_IN(0x10, 0x20), IN_IN(0x25, 0x30), IN_IN(0x38, 0x40) },
	  3, { { 0x40, 0x40 }, { 0x30, 0x38 }, { 0x20, 0x25 } }, 3 },
	{ "a system call back to the next instruction",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), OUT_OUT(K + 5, K + 9), OUT_IN(K + 10, 0x26),
	    IN_IN(0x2a, 0x50) }, 5, { { 0x50, 0x50 }, { 0x20, 0x2a } }, 2 },
	{ "a fault back to the same instruction",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), OUT_IN(K + 10, 0x24), IN_IN(0x2a, 0x50) }, 4,
	  { { 0x50, 0x50 }, { 0x20, 0x2a } }, 2 },
	{ "an interrupt back elsewhere",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), OUT_IN(K + 10, 0x60), IN_IN(0x64, 0x70) }, 4,
	  { { 0x70, 0x70 }, { 0x60, 0x64 }, { 0x20, 0x24 } }, 3 },
	{ "an excursion from an instruction that cannot be decoded, back after it",
	  { IN_IN(0x10, 0x80), IN_OUT(0x90, K), OUT_IN(K + 10, 0x92), IN_IN(0x94, 0x70) }, 4,
	  { { 0x70, 0x70 }, { 0x92, 0x94 }, { 0x80, 0x90 } }, 3 },
	{ "the excursion is the newest: its way back is the PC",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), OUT_IN(K + 10, 0x26) }, 3,
	  { { 0x20, 0x26 } }, 1 },
	{ "a break leaves out the block it cuts",
	  { IN_IN(0x10, 0x20), IN_IN(0x24, 0x30), BREAK_IN_IN(0x44, 0x50), IN_IN(0x54, 0x60) }, 4,
	  { { 0x60, 0x60 }, { 0x50, 0x54 }, { 0x20, 0x24 } }, 3 },
	{ "back inside with no branch back, not straight on: the open block ends where it left",
	  { IN_IN(0x10, 0x80), IN_OUT(0x8e, K), IN_IN(0xa0, 0xb0), IN_IN(0xb4, 0xc0) }, 4,
	  { { 0xc0, 0xc0 }, { 0xb0, 0xb4 }, { 0x80, 0x8e } }, 3 },
	{ "back inside with no branch back, straight on from where it left: one block",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), IN_IN(0x30, 0x40), IN_IN(0x44, 0x50) }, 4,
	  { { 0x50, 0x50 }, { 0x40, 0x44 }, { 0x20, 0x30 } }, 3 },
	{ "back inside with no branch back, behind where it left: the block ends there",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), IN_IN(0x1a, 0x40), IN_IN(0x44, 0x50) }, 4,
	  { { 0x50, 0x50 }, { 0x40, 0x44 }, { 0x20, 0x24 } }, 3 },
	{ "a break after an excursion: the block before it ended where it left",
	  { IN_IN(0x10, 0x20), IN_OUT(0x24, K), BREAK_IN_IN(0x70, 0x80), IN_IN(0x84, 0x90) }, 4,
	  { { 0x90, 0x90 }, { 0x80, 0x84 }, { 0x20, 0x24 } }, 3 },
	{ "a fault the thread stopped at: the newest block ends at it",
	  { IN_IN(0x10, 0x20), IN_IN(0x24, 0x30), IN_OUT(0x36, K) }, 3,
	  { { 0x30, 0x36 }, { 0x20, 0x24 } }, 2 },
	{ "branches outside before the first inside",
	  { OUT_OUT(K, K + 4), OUT_IN(K + 8, 0x20), IN_IN(0x24, 0x30) }, 3,
	  { { 0x30, 0x30 }, { 0x20, 0x24 } }, 2 },
};

START_TEST(test_blocks_table)
{
	struct gdb_btrace_block *b;
	size_t nr;

	ck_assert_int_eq(bts_blocks__build(cases[_i].br, cases[_i].nr, next_insn, NULL, &b, &nr),
			 0);
	ck_assert_msg(nr == cases[_i].nr_want, "%s: %zu blocks, want %zu", cases[_i].what, nr,
		      cases[_i].nr_want);
	for (size_t i = 0; i < nr; i++)
		ck_assert_msg(b[i].begin == cases[_i].want[i].begin &&
			      b[i].end == cases[_i].want[i].end,
			      "%s: block %zu is %#llx-%#llx, want %#llx-%#llx", cases[_i].what, i,
			      (unsigned long long)b[i].begin, (unsigned long long)b[i].end,
			      (unsigned long long)cases[_i].want[i].begin,
			      (unsigned long long)cases[_i].want[i].end);
	free(b);
}
END_TEST

Suite *bts_blocks_suite(void)
{
	Suite *s = suite_create("bts-blocks");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_blocks_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return s;
}
