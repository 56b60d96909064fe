// SPDX-License-Identifier: GPL-2.0
/*
 * test-insn.c - instruction classification on real encodings in 16-, 32- and 64-bit modes.
 */
#include <errno.h>

#include <vbts/ring-format.h>

#include "insn.h"
#include "step-tests.h"

#define R16 INSN_MODE_REAL16
#define P16 INSN_MODE_PROT16
#define P32 INSN_MODE_PROT32
#define C32 INSN_MODE_COMPAT32
#define L64 INSN_MODE_LONG64

/* flags that must match exactly */
#define CHECKED_FLAGS                                                                      \
	(INSN_F_REP_STRING | INSN_F_MOV_SS | INSN_F_DIRECT | INSN_F_COND | INSN_F_VECTOR |  \
	 INSN_F_SOFT_INT | INSN_F_SYSCALL | INSN_F_SYSENTER | INSN_F_CPL_CHANGE | INSN_F_HLT | \
	 INSN_F_FAR | INSN_F_CR3 | INSN_F_SYSEXIT)

struct insn_case {
	const char *what;
	enum insn_mode mode;
	uint64_t ip;
	uint8_t bytes[INSN_MAX_LEN];
	uint8_t nbytes;
	uint8_t len;
	uint8_t kind;
	uint16_t flags;
	uint8_t vector;
	uint64_t target; /* checked with INSN_F_DIRECT */
};

#define VEC (INSN_F_VECTOR | INSN_F_CPL_CHANGE)

static const struct insn_case cases[] = {
	/* 64-bit mode */
	{ "je rel8", L64, 0x1000, { 0x74, 0x05 }, 2, 2, VBTS_BR_JCC, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x1007 },
	{ "je rel32", L64, 0x1000, { 0x0f, 0x84, 0x00, 0x01, 0, 0 }, 6, 6, VBTS_BR_JCC,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x1106 },
	{ "jg rel8 back", L64, 0x1000, { 0x7f, 0xf0 }, 2, 2, VBTS_BR_JCC,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0xff2 },
	{ "jmp .", L64, 0x1000, { 0xeb, 0xfe }, 2, 2, VBTS_BR_JMP, INSN_F_DIRECT, 0, 0x1000 },
	{ "jmp rel32", L64, 0xffffffff81000000ULL, { 0xe9, 0xfb, 0xff, 0xff, 0xff }, 5, 5,
	  VBTS_BR_JMP, INSN_F_DIRECT, 0, 0xffffffff81000000ULL },
	{ "jmp *%rax", L64, 0x1000, { 0xff, 0xe0 }, 2, 2, VBTS_BR_JMP_IND, 0, 0, 0 },
	{ "jmp *0(%rip)", L64, 0x1000, { 0xff, 0x25, 0, 0, 0, 0 }, 6, 6, VBTS_BR_JMP_IND, 0, 0, 0 },
	{ "call rel32", L64, 0x1000, { 0xe8, 0x10, 0, 0, 0 }, 5, 5, VBTS_BR_CALL, INSN_F_DIRECT,
	  0, 0x1015 },
	{ "call *%rax", L64, 0x1000, { 0xff, 0xd0 }, 2, 2, VBTS_BR_CALL_IND, 0, 0, 0 },
	{ "call *0(%rip)", L64, 0x1000, { 0xff, 0x15, 0, 0, 0, 0 }, 6, 6, VBTS_BR_CALL_IND, 0, 0,
	  0 },
	{ "ret", L64, 0x1000, { 0xc3 }, 1, 1, VBTS_BR_RET, 0, 0, 0 },
	{ "ret $8", L64, 0x1000, { 0xc2, 0x08, 0x00 }, 3, 3, VBTS_BR_RET, 0, 0, 0 },
	{ "lret", L64, 0x1000, { 0xcb }, 1, 1, VBTS_BR_FAR_RET, INSN_F_FAR | INSN_F_CPL_CHANGE,
	  0, 0 },
	{ "lretq", L64, 0x1000, { 0x48, 0xcb }, 2, 2, VBTS_BR_FAR_RET,
	  INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "ljmp *(%rsp)", L64, 0x1000, { 0xff, 0x2c, 0x24 }, 3, 3, VBTS_BR_FAR_JMP,
	  INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "lcall *(%rsp)", L64, 0x1000, { 0xff, 0x1c, 0x24 }, 3, 3, VBTS_BR_FAR_CALL,
	  INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "loop .", L64, 0x1000, { 0xe2, 0xfe }, 2, 2, VBTS_BR_LOOP, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x1000 },
	{ "loope", L64, 0x1000, { 0xe1, 0x10 }, 2, 2, VBTS_BR_LOOP, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x1012 },
	{ "loopne", L64, 0x1000, { 0xe0, 0x10 }, 2, 2, VBTS_BR_LOOP, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x1012 },
	{ "jrcxz", L64, 0x1000, { 0xe3, 0x10 }, 2, 2, VBTS_BR_JRCXZ, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x1012 },
	{ "jecxz (64)", L64, 0x1000, { 0x67, 0xe3, 0x10 }, 3, 3, VBTS_BR_JRCXZ,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x1013 },
	{ "int $0x80", L64, 0x1000, { 0xcd, 0x80 }, 2, 2, VBTS_BR_INT, VEC | INSN_F_SOFT_INT,
	  0x80, 0 },
	{ "int3", L64, 0x1000, { 0xcc }, 1, 1, VBTS_BR_INT, VEC | INSN_F_SOFT_INT, 3, 0 },
	{ "int1", L64, 0x1000, { 0xf1 }, 1, 1, VBTS_BR_INT, VEC, 1, 0 },
	{ "ud2", L64, 0x1000, { 0x0f, 0x0b }, 2, 2, VBTS_BR_EXCEPTION, VEC, 6, 0 },
	{ "syscall", L64, 0x1000, { 0x0f, 0x05 }, 2, 2, VBTS_BR_SYSCALL,
	  INSN_F_SYSCALL | INSN_F_CPL_CHANGE, 0, 0 },
	{ "sysretq", L64, 0x1000, { 0x48, 0x0f, 0x07 }, 3, 3, VBTS_BR_SYSRET, INSN_F_CPL_CHANGE,
	  0, 0 },
	{ "sysexit", L64, 0x1000, { 0x0f, 0x35 }, 2, 2, VBTS_BR_SYSRET,
	  INSN_F_CPL_CHANGE | INSN_F_SYSEXIT, 0, 0 },
	{ "iretq", L64, 0x1000, { 0x48, 0xcf }, 2, 2, VBTS_BR_IRET, INSN_F_CPL_CHANGE, 0, 0 },
	{ "iretd", L64, 0x1000, { 0xcf }, 1, 1, VBTS_BR_IRET, INSN_F_CPL_CHANGE, 0, 0 },
	{ "rep movsb", L64, 0x1000, { 0xf3, 0xa4 }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "rep stosq", L64, 0x1000, { 0xf3, 0x48, 0xab }, 3, 3, 0, INSN_F_REP_STRING, 0, 0 },
	{ "repe cmpsb", L64, 0x1000, { 0xf3, 0xa6 }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "repne scasb", L64, 0x1000, { 0xf2, 0xae }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "rep insb", L64, 0x1000, { 0xf3, 0x6c }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "movsb", L64, 0x1000, { 0xa4 }, 1, 1, 0, 0, 0, 0 },
	{ "mov %eax,%ss", L64, 0x1000, { 0x8e, 0xd0 }, 2, 2, 0, INSN_F_MOV_SS, 0, 0 },
	{ "mov %eax,%ds", L64, 0x1000, { 0x8e, 0xd8 }, 2, 2, 0, 0, 0, 0 },
	{ "mov (%rax),%ss", L64, 0x1000, { 0x8e, 0x10 }, 2, 2, 0, INSN_F_MOV_SS, 0, 0 },
	{ "hlt", L64, 0x1000, { 0xf4 }, 1, 1, 0, INSN_F_HLT, 0, 0 },
	{ "nop", L64, 0x1000, { 0x90, 0xcc, 0xcc }, 3, 1, 0, 0, 0, 0 },
	{ "mov $imm64,%rax", L64, 0x1000, { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10, 0, 0, 0,
	  0 },
	{ "rsm", L64, 0x1000, { 0x0f, 0xaa }, 2, 2, VBTS_BR_OTHER, INSN_F_CPL_CHANGE, 0, 0 },
	{ "mov %rax,%cr3", L64, 0x1000, { 0x0f, 0x22, 0xd8 }, 3, 3, 0, INSN_F_CR3, 0, 0 },
	{ "mov %rax,%cr0", L64, 0x1000, { 0x0f, 0x22, 0xc0 }, 3, 3, 0, 0, 0, 0 },
	{ "mov %eax,%cr3 (32)", P32, 0x1000, { 0x0f, 0x22, 0xd8 }, 3, 3, 0, INSN_F_CR3, 0, 0 },
	{ "wrmsr", L64, 0x1000, { 0x0f, 0x30 }, 2, 2, 0, 0, 0, 0 },

	/* 32-bit protected mode */
	{ "jne . (32)", P32, 0x100000, { 0x75, 0xfe }, 2, 2, VBTS_BR_JCC,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x100000 },
	{ "jmp rel16 wraps IP (32)", P32, 0x10000, { 0x66, 0xe9, 0x00, 0x00 }, 4, 4, VBTS_BR_JMP,
	  INSN_F_DIRECT, 0, 0x0004 },
	{ "jmp rel32 wraps at 4G (32)", P32, 0xfffffff0, { 0xe9, 0x20, 0, 0, 0 }, 5, 5,
	  VBTS_BR_JMP, INSN_F_DIRECT, 0, 0x15 },
	{ "call rel32 (32)", P32, 0x100000, { 0xe8, 0xfb, 0xff, 0xff, 0xff }, 5, 5, VBTS_BR_CALL,
	  INSN_F_DIRECT, 0, 0x100000 },
	{ "ljmp $8,$0x1000 (32)", P32, 0x100000, { 0xea, 0x00, 0x10, 0, 0, 0x08, 0 }, 7, 7,
	  VBTS_BR_FAR_JMP, INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "lcall $8,$0x1000 (32)", P32, 0x100000, { 0x9a, 0x00, 0x10, 0, 0, 0x08, 0 }, 7, 7,
	  VBTS_BR_FAR_CALL, INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "lret (32)", P32, 0x100000, { 0xcb }, 1, 1, VBTS_BR_FAR_RET,
	  INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "into (32)", P32, 0x100000, { 0xce }, 1, 1, VBTS_BR_INT,
	  VEC | INSN_F_SOFT_INT | INSN_F_COND, 4, 0 },
	{ "int $0x80 (32)", P32, 0x100000, { 0xcd, 0x80 }, 2, 2, VBTS_BR_INT,
	  VEC | INSN_F_SOFT_INT, 0x80, 0 },
	{ "iret (32)", P32, 0x100000, { 0xcf }, 1, 1, VBTS_BR_IRET, INSN_F_CPL_CHANGE, 0, 0 },
	{ "pop %ss (32)", P32, 0x100000, { 0x17 }, 1, 1, 0, INSN_F_MOV_SS, 0, 0 },
	{ "mov %eax,%ss (32)", P32, 0x100000, { 0x8e, 0xd0 }, 2, 2, 0, INSN_F_MOV_SS, 0, 0 },
	{ "jecxz (32)", P32, 0x100000, { 0xe3, 0x02 }, 2, 2, VBTS_BR_JRCXZ,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x100004 },
	{ "loop (32)", P32, 0x100000, { 0xe2, 0xfe }, 2, 2, VBTS_BR_LOOP,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x100000 },
	{ "rep outsb (32)", P32, 0x100000, { 0xf3, 0x6e }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "jmp *%eax (32)", P32, 0x100000, { 0xff, 0xe0 }, 2, 2, VBTS_BR_JMP_IND, 0, 0, 0 },
	{ "call *(%eax) (32)", P32, 0x100000, { 0xff, 0x10 }, 2, 2, VBTS_BR_CALL_IND, 0, 0, 0 },
	{ "ret (32)", P32, 0x100000, { 0xc3 }, 1, 1, VBTS_BR_RET, 0, 0, 0 },
	{ "sysenter (32)", P32, 0x100000, { 0x0f, 0x34 }, 2, 2, VBTS_BR_SYSCALL,
	  INSN_F_SYSENTER | INSN_F_CPL_CHANGE, 0, 0 },
	{ "ud2 (32)", P32, 0x100000, { 0x0f, 0x0b }, 2, 2, VBTS_BR_EXCEPTION, VEC, 6, 0 },
	{ "int3 (compat32)", C32, 0x8048000, { 0xcc }, 1, 1, VBTS_BR_INT, VEC | INSN_F_SOFT_INT,
	  3, 0 },
	{ "jmp . (compat32)", C32, 0x8048000, { 0xeb, 0xfe }, 2, 2, VBTS_BR_JMP, INSN_F_DIRECT, 0,
	  0x8048000 },
	{ "jmp rel32 (16-bit pm, 66)", P16, 0x100, { 0x66, 0xe9, 0x00, 0x00, 0x01, 0x00 }, 6, 6,
	  VBTS_BR_JMP, INSN_F_DIRECT, 0, 0x10106 },

	/* real mode */
	{ "jmp . (16)", R16, 0x7c00, { 0xeb, 0xfe }, 2, 2, VBTS_BR_JMP, INSN_F_DIRECT, 0, 0x7c00 },
	{ "jmp wraps at 64K (16)", R16, 0xfffe, { 0xeb, 0x10 }, 2, 2, VBTS_BR_JMP, INSN_F_DIRECT,
	  0, 0x10 },
	{ "jmp rel16 (16)", R16, 0x7c00, { 0xe9, 0xfd, 0xff }, 3, 3, VBTS_BR_JMP, INSN_F_DIRECT, 0,
	  0x7c00 },
	{ "call rel16 (16)", R16, 0x7c00, { 0xe8, 0x00, 0x00 }, 3, 3, VBTS_BR_CALL, INSN_F_DIRECT,
	  0, 0x7c03 },
	{ "je (16)", R16, 0x7c00, { 0x74, 0x02 }, 2, 2, VBTS_BR_JCC, INSN_F_DIRECT | INSN_F_COND,
	  0, 0x7c04 },
	{ "loop (16)", R16, 0x7c00, { 0xe2, 0xfe }, 2, 2, VBTS_BR_LOOP,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x7c00 },
	{ "jcxz (16)", R16, 0x7c00, { 0xe3, 0x00 }, 2, 2, VBTS_BR_JRCXZ,
	  INSN_F_DIRECT | INSN_F_COND, 0, 0x7c02 },
	{ "int $0x10 (16)", R16, 0x7c00, { 0xcd, 0x10 }, 2, 2, VBTS_BR_INT, VEC | INSN_F_SOFT_INT,
	  0x10, 0 },
	{ "iret (16)", R16, 0x7c00, { 0xcf }, 1, 1, VBTS_BR_IRET, INSN_F_CPL_CHANGE, 0, 0 },
	{ "retf (16)", R16, 0x7c00, { 0xcb }, 1, 1, VBTS_BR_FAR_RET,
	  INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "ljmp $0,$0x7c00 (16)", R16, 0x500, { 0xea, 0x00, 0x7c, 0x00, 0x00 }, 5, 5,
	  VBTS_BR_FAR_JMP, INSN_F_FAR | INSN_F_CPL_CHANGE, 0, 0 },
	{ "ret (16)", R16, 0x7c00, { 0xc3 }, 1, 1, VBTS_BR_RET, 0, 0, 0 },
	{ "rep movsb (16)", R16, 0x7c00, { 0xf3, 0xa4 }, 2, 2, 0, INSN_F_REP_STRING, 0, 0 },
	{ "mov %ax,%ss (16)", R16, 0x7c00, { 0x8e, 0xd0 }, 2, 2, 0, INSN_F_MOV_SS, 0, 0 },
	{ "pop %ss (16)", R16, 0x7c00, { 0x17 }, 1, 1, 0, INSN_F_MOV_SS, 0, 0 },
	{ "hlt (16)", R16, 0x7c00, { 0xf4 }, 1, 1, 0, INSN_F_HLT, 0, 0 },
};

START_TEST(test_insn_table)
{
	const struct insn_case *c = &cases[_i];
	struct insn_decoder d;
	struct insn_info info;
	int ret;

	ck_assert_int_eq(insn_decoder__init(&d), 0);
	ret = insn__decode(&d, c->mode, c->ip, c->bytes, c->nbytes, &info);
	ck_assert_msg(ret == 0, "%s: decode failed: %d", c->what, ret);
	ck_assert_msg(info.len == c->len, "%s: len %u, want %u", c->what, info.len, c->len);
	ck_assert_msg(info.kind == c->kind, "%s: kind %u, want %u", c->what, info.kind, c->kind);
	ck_assert_msg((info.flags & CHECKED_FLAGS) == c->flags, "%s: flags %#x, want %#x", c->what,
		      info.flags & CHECKED_FLAGS, c->flags);
	if (c->flags & INSN_F_VECTOR)
		ck_assert_msg(info.vector == c->vector, "%s: vector %u, want %u", c->what,
			      info.vector, c->vector);
	if (c->flags & INSN_F_DIRECT)
		ck_assert_msg(info.target == c->target, "%s: target %#llx, want %#llx", c->what,
			      (unsigned long long)info.target, (unsigned long long)c->target);
}
END_TEST

START_TEST(test_insn_errors)
{
	static const uint8_t into[] = { 0xce }, push_es[] = { 0x06 }, half[] = { 0x0f, 0x84, 0 };
	static const uint8_t pop_ss[] = { 0x17 }, lock_nop[] = { 0xf0, 0x90 };
	uint8_t long_insn[16];
	struct insn_decoder d;
	struct insn_info info;

	ck_assert_int_eq(insn_decoder__init(&d), 0);
	ck_assert_int_eq(insn__decode(&d, L64, 0, into, sizeof(into), &info), -EILSEQ);
	ck_assert_int_eq(insn__decode(&d, L64, 0, push_es, sizeof(push_es), &info), -EILSEQ);
	ck_assert_int_eq(insn__decode(&d, L64, 0, pop_ss, sizeof(pop_ss), &info), -EILSEQ);
	ck_assert_int_eq(insn__decode(&d, L64, 0, lock_nop, sizeof(lock_nop), &info), -EILSEQ);
	ck_assert_int_eq(insn__decode(&d, L64, 0, half, sizeof(half), &info), -ENODATA);
	ck_assert_int_eq(insn__decode(&d, L64, 0, half, 0, &info), -ENODATA);
	ck_assert_int_eq(insn__decode(&d, INSN_MODE_MAX, 0, half, sizeof(half), &info), -EINVAL);
	/* 16 prefixes: longer than any instruction may be */
	memset(long_insn, 0x66, sizeof(long_insn));
	ck_assert_int_lt(insn__decode(&d, L64, 0, long_insn, sizeof(long_insn), &info), 0);
}
END_TEST

START_TEST(test_insn_mode)
{
	/* cr0, efer, rflags, L, D/B */
	ck_assert_int_eq(insn__mode(0x10, 0, 2, false, false), INSN_MODE_REAL16);
	ck_assert_int_eq(insn__mode(0x10, 0, 2, false, true), INSN_MODE_REAL16);
	ck_assert_int_eq(insn__mode(0x11, 0, 2 | (1 << 17), false, true), INSN_MODE_REAL16);
	ck_assert_int_eq(insn__mode(0x11, 0, 2, false, false), INSN_MODE_PROT16);
	ck_assert_int_eq(insn__mode(0x11, 0, 2, false, true), INSN_MODE_PROT32);
	ck_assert_int_eq(insn__mode(0x80000011, 0x500, 2, true, false), INSN_MODE_LONG64);
	ck_assert_int_eq(insn__mode(0x80000011, 0x500, 2, false, true), INSN_MODE_COMPAT32);
	ck_assert_int_eq(insn__mode(0x80000011, 0x500, 2, false, false), INSN_MODE_COMPAT16);
	/* EFER.LME without LMA (paging not yet on) is still legacy protected mode */
	ck_assert_int_eq(insn__mode(0x11, 0x100, 2, true, true), INSN_MODE_PROT32);
}
END_TEST

START_TEST(test_insn_random)
{
	/* random bytes in every mode: a result within bounds or an error, never a crash */
	uint64_t x = 0x243f6a8885a308d3ULL;
	struct insn_decoder d;
	struct insn_info info;
	uint8_t bytes[INSN_MAX_LEN];

	ck_assert_int_eq(insn_decoder__init(&d), 0);
	for (unsigned int i = 0; i < 200000; i++) {
		enum insn_mode mode = (enum insn_mode)(i % INSN_MODE_MAX);
		size_t n = 1 + i % INSN_MAX_LEN;

		for (size_t b = 0; b < sizeof(bytes); b++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			bytes[b] = (uint8_t)x;
		}
		if (insn__decode(&d, mode, x, bytes, n, &info) == 0) {
			ck_assert_uint_ge(info.len, 1);
			ck_assert_uint_le(info.len, n);
			ck_assert_uint_lt(info.kind, VBTS_BR_MAX);
		}
	}
}
END_TEST

Suite *insn_suite(void)
{
	Suite *s = suite_create("insn");
	TCase *tc = tcase_create("classify");

	tcase_add_loop_test(tc, test_insn_table, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_insn_errors);
	tcase_add_test(tc, test_insn_mode);
	tcase_add_test(tc, test_insn_random);
	suite_add_tcase(s, tc);
	return s;
}
