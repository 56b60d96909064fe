// SPDX-License-Identifier: GPL-2.0
/*
 * test-qemu-log.c - the QEMU log parser on small fabricated logs in QEMU 7.2's format.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "oracle-tests.h"
#include "qemu-log.h"

struct collected {
	struct oracle_branch b[32];
	int n;
};

static int collect(void *ctx, const struct oracle_branch *b)
{
	struct collected *c = ctx;

	ck_assert_int_lt(c->n, 32);
	c->b[c->n++] = *b;
	return 0;
}

static int parse_text(const char *text, uint64_t entry, struct collected *c)
{
	struct qemu_log *log = qemu_log__new(entry, collect, c);
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(log);
	ck_assert_ptr_nonnull(f);
	memset(c, 0, sizeof(*c));
	ret = qemu_log__parse_file(log, f);
	fclose(f);
	qemu_log__delete(log);
	return ret;
}

#define TB(pc, text) "----------------\nIN: \n" pc ":  " text "\n\n"
#define TRACE(pc, flags) "Trace 0: 0x7f8c7c2cd380 [0000000000000000/00000000" pc "/" flags \
	"/ff000201] \n"

/* BIOS, the jump to the entry, then straight-line code, a jmp and a call across CPLs. */
static const char basic_log[] =
	TB("0x000c02a7", "ff e1                    jmpl     *%ecx")
	TRACE("000c02a7", "000000b0")
	TB("0x00100000", "fa                       cli      ")
	TRACE("00100000", "000000b0")
	TB("0x00100001", "eb 05                    jmp      0x100008")
	TRACE("00100001", "000000b0")
	TB("0x00100008", "0f 05                    syscall  ")
	TRACE("00100008", "0000c0b3")
	TB("0x00100200", "90                       nop      ")
	TRACE("00100200", "0000c0b0")
	TB("0x00100201", "c3                       retq     ")
	TRACE("00100201", "0000c0b0")
	TB("0x0010000a", "90                       nop      ")
	TRACE("0010000a", "0000c0b3");

START_TEST(test_basic)
{
	struct collected c;

	ck_assert_int_eq(parse_text(basic_log, 0x100000, &c), 0);
	ck_assert_int_eq(c.n, 3);
	ck_assert_uint_eq(c.b[0].from, 0x100001);
	ck_assert_uint_eq(c.b[0].to, 0x100008);
	ck_assert_int_eq(c.b[0].cpl, 0);
	ck_assert_uint_eq(c.b[1].from, 0x100008);
	ck_assert_uint_eq(c.b[1].to, 0x100200);
	ck_assert_int_eq(c.b[1].cpl, 3);
	ck_assert_uint_eq(c.b[2].from, 0x100201);
	ck_assert_uint_eq(c.b[2].to, 0x10000a);
	ck_assert_int_eq(c.b[2].cpl, 0);
}
END_TEST

/* A 10-byte movabs wraps: its length is 10, so 0x10000a is sequential, not a branch. */
static const char wrapped_log[] =
	TB("0x00100000", "48 b8 ef cd ab 89 67 45  movabsq  $0x123456789abcdef, %rax\n"
	   "0x00100008:  23 01")
	TRACE("00100000", "000000b0")
	TB("0x0010000a", "eb 10                    jmp      0x10001c")
	TRACE("0010000a", "000000b0")
	TB("0x0010001c", "90                       nop      ")
	TRACE("0010001c", "000000b0");

START_TEST(test_wrapped)
{
	struct collected c;

	ck_assert_int_eq(parse_text(wrapped_log, 0x100000, &c), 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.b[0].from, 0x10000a);
	ck_assert_uint_eq(c.b[0].to, 0x10001c);
}
END_TEST

/* REP MOVSB repeats its PC (not a branch); a plain instruction repeating its PC would be. */
static const char rep_log[] =
	TB("0x00100000", "f3 a4                    rep movsb (%rsi), (%rdi)")
	TRACE("00100000", "000000b0")
	TRACE("00100000", "000000b0")
	TRACE("00100000", "000000b0")
	TB("0x00100002", "eb fe                    jmp      0x100002")
	TRACE("00100002", "000000b0")
	TRACE("00100002", "000000b0");

START_TEST(test_rep)
{
	struct collected c;

	ck_assert_int_eq(parse_text(rep_log, 0x100000, &c), 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.b[0].from, 0x100002);
	ck_assert_uint_eq(c.b[0].to, 0x100002);
}
END_TEST

/* "Stopped execution" takes back the Trace line before it: that block did not run then. */
static const char stopped_log[] =
	TB("0x00100000", "90                       nop      ")
	TRACE("00100000", "000000b0")
	TB("0x00100001", "eb 05                    jmp      0x100008")
	TRACE("00100001", "000000b0")
	TB("0x00100008", "90                       nop      ")
	TRACE("00100008", "000000b0")
	"Stopped execution of TB chain before 0x7f8c7c086700 [0000000000100008] \n"
	TRACE("00100008", "000000b0")
	TB("0x00100009", "90                       nop      ")
	TRACE("00100009", "000000b0");

START_TEST(test_stopped)
{
	struct collected c;

	ck_assert_int_eq(parse_text(stopped_log, 0x100000, &c), 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.b[0].from, 0x100001);
	ck_assert_uint_eq(c.b[0].to, 0x100008);
}
END_TEST

/* Without -singlestep a block holds several instructions: the branch is from the last one. */
static const char multi_log[] =
	"----------------\nIN: \n"
	"0x00100000:  90                       nop      \n"
	"0x00100001:  31 c0                    xorl     %eax, %eax\n"
	"0x00100003:  74 0b                    je       0x100010\n\n"
	TRACE("00100000", "000000b0")
	TB("0x00100010", "90                       nop      ")
	TRACE("00100010", "000000b0");

START_TEST(test_multi_insn_block)
{
	struct collected c;

	ck_assert_int_eq(parse_text(multi_log, 0x100000, &c), 0);
	ck_assert_int_eq(c.n, 1);
	ck_assert_uint_eq(c.b[0].from, 0x100003);
	ck_assert_uint_eq(c.b[0].to, 0x100010);
}
END_TEST

START_TEST(test_entry_never_reached)
{
	struct collected c;

	ck_assert_int_eq(parse_text(basic_log, 0x200000, &c), -ENOENT);
	ck_assert_int_eq(c.n, 0);
}
END_TEST

static const char missing_tb_log[] =
	TB("0x00100000", "90                       nop      ")
	TRACE("00100000", "000000b0")
	TRACE("00100004", "000000b0");

START_TEST(test_trace_without_block)
{
	struct collected c;

	ck_assert_int_eq(parse_text(missing_tb_log, 0x100000, &c), -EPROTO);
}
END_TEST

Suite *qemu_log_suite(void)
{
	Suite *s = suite_create("qemu-log");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_basic);
	tcase_add_test(tc, test_wrapped);
	tcase_add_test(tc, test_rep);
	tcase_add_test(tc, test_stopped);
	tcase_add_test(tc, test_multi_insn_block);
	tcase_add_test(tc, test_entry_never_reached);
	tcase_add_test(tc, test_trace_without_block);
	suite_add_tcase(s, tc);
	return s;
}
