// SPDX-License-Identifier: GPL-2.0
/*
 * test-core.c - the step decisions fed with fabricated observations, and IDT gate lookups
 * over descriptor tables built in a buffer.
 */
#include <errno.h>
#include <stdlib.h>

#include <vbts/ring-format.h>

#include "step-int.h"
#include "step-tests.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static struct step_decoded dec(uint64_t la, uint8_t len, uint8_t kind, uint16_t flags)
{
	struct step_decoded d = { .la = la };

	d.info.len = len;
	d.info.kind = kind;
	d.info.flags = flags;
	return d;
}

static struct step_decoded with_target(struct step_decoded d, uint64_t target)
{
	d.has_target = true;
	d.target = target;
	return d;
}

static struct step_decoded with_vector(struct step_decoded d, uint8_t vector)
{
	d.info.vector = vector;
	d.info.flags |= INSN_F_VECTOR | INSN_F_CPL_CHANGE;
	return d;
}

static struct step_insn one(struct step_decoded d, uint8_t cpl)
{
	struct step_insn in = { .valid = true, .cpl = cpl, .first = d };

	return in;
}

static void assert_branch(const struct vbts_record *r, uint64_t from, uint64_t to, uint8_t cpl,
			  uint8_t kind)
{
	ck_assert_msg(!vbts_record__is_escape(r), "expected a branch record");
	ck_assert_uint_eq(r->from, from);
	ck_assert_uint_eq(r->to, to);
	ck_assert(r->flags & VBTS_REC_CPL_VALID);
	ck_assert_uint_eq((r->flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT, cpl);
	ck_assert_uint_eq((r->flags & VBTS_REC_KIND_MASK) >> VBTS_REC_KIND_SHIFT, kind);
}

static void assert_escape(const struct vbts_record *r, unsigned int kind, uint64_t payload,
			  uint64_t aux)
{
	ck_assert_msg(vbts_record__is_escape(r), "expected an escape record");
	ck_assert_uint_eq(vbts_record__escape_kind(r), kind);
	ck_assert_uint_eq(r->to, payload);
	ck_assert_uint_eq(vbts_record__escape_aux(r), aux);
}

/* ---- step__classify ---------------------------------------------------------------------- */

START_TEST(test_classify_sequential)
{
	struct step_insn in = one(dec(0x1000, 1, 0, 0), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x1001, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	ck_assert(!out.hlt_retired);
}
END_TEST

START_TEST(test_classify_jcc)
{
	struct step_insn in = one(with_target(dec(0x1000, 2, VBTS_BR_JCC,
						  INSN_F_DIRECT | INSN_F_COND), 0x1010), 0);
	struct step_out out = { 0 };

	/* taken */
	ck_assert_int_eq(step__classify(&in, 0x1010, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1000, 0x1010, 0, VBTS_BR_JCC);
	ck_assert(!(out.rec[0].flags & VBTS_REC_VECTOR_VALID));
	ck_assert(!(out.rec[0].flags & VBTS_REC_PREDICTED));
	/* not taken */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x1002, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* somewhere else: not a branch we saw */
	ck_assert_int_eq(step__classify(&in, 0x5000, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x1000, VBTS_GAP_UNKNOWN);
}
END_TEST

START_TEST(test_classify_jmp_self)
{
	struct step_insn in = one(with_target(dec(0x1000, 2, VBTS_BR_JMP, INSN_F_DIRECT), 0x1000),
				  0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x1000, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1000, 0x1000, 0, VBTS_BR_JMP);
}
END_TEST

START_TEST(test_classify_rep)
{
	struct step_insn in = one(dec(0x1000, 2, 0, INSN_F_REP_STRING), 0);
	struct step_out out = { 0 };

	/* next iteration: the same address, not a branch */
	ck_assert_int_eq(step__classify(&in, 0x1000, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* an I/O exit in the middle: not done yet */
	ck_assert_int_eq(step__classify(&in, 0x1000, false, VBTS_CPL_ALL, &out), STEP_PENDING);
	ck_assert_int_eq(step__classify(&in, 0x1002, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
}
END_TEST

START_TEST(test_classify_indirect)
{
	struct step_insn in = one(dec(0x401000, 1, VBTS_BR_RET, 0), 3);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x400123, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x401000, 0x400123, 3, VBTS_BR_RET);
	/* another exit elsewhere after an indirect transfer proves nothing: a gap */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x400123, false, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x401000, VBTS_GAP_UNKNOWN);
}
END_TEST

START_TEST(test_classify_other_exits)
{
	/* out %al,%dx: exits before (RIP at it) or after it completed (RIP past it) */
	struct step_insn in = one(dec(0x1007, 1, 0, 0), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x1007, false, VBTS_CPL_ALL, &out), STEP_PENDING);
	ck_assert_int_eq(step__classify(&in, 0x1008, false, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* a step that did not move, for a plain instruction: nothing to record */
	ck_assert_int_eq(step__classify(&in, 0x1007, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* a fault delivered through the IDT: control is elsewhere */
	ck_assert_int_eq(step__classify(&in, 0x8000, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x1007, VBTS_GAP_UNKNOWN);
}
END_TEST

START_TEST(test_classify_hlt)
{
	struct step_insn in = one(dec(0x102a, 1, 0, INSN_F_HLT), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x102b, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert(out.hlt_retired);
	out.hlt_retired = false;
	/* a KVM_EXIT_HLT past it is a halt already */
	ck_assert_int_eq(step__classify(&in, 0x102b, false, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert(!out.hlt_retired);
}
END_TEST

START_TEST(test_classify_mov_ss)
{
	/* mov %eax,%ss at 0x1005; jmp +2 at 0x1007 → 0x100b (measured: one step for both) */
	struct step_insn in = {
		.valid = true,
		.has_second = true,
		.cpl = 0,
		.first = dec(0x1005, 2, 0, INSN_F_MOV_SS),
		.second = with_target(dec(0x1007, 2, VBTS_BR_JMP, INSN_F_DIRECT), 0x100b),
	};
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x100b, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1007, 0x100b, 0, VBTS_BR_JMP);

	/* mov ss; nop: sequential over both */
	in.second = dec(0x1007, 1, 0, 0);
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x1008, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* an exit before the second completed */
	ck_assert_int_eq(step__classify(&in, 0x1007, false, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_int_eq(step__classify(&in, 0x1005, false, VBTS_CPL_ALL, &out), STEP_PENDING);
	ck_assert_uint_eq(out.n, 0);
	/* the mov ss faulted: the gap starts at it, not at the second instruction */
	ck_assert_int_eq(step__classify(&in, 0x9000, true, VBTS_CPL_ALL, &out), STEP_LOST);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x1005, VBTS_GAP_UNKNOWN);

	/* mov ss; loop 1f; 1: with the loop taken, and with it not taken */
	in.second = with_target(dec(0x1007, 2, VBTS_BR_LOOP, INSN_F_DIRECT | INSN_F_COND),
				0x1009);
	in.second.cond_known = true;
	in.second.cond_taken = true;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x1009, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1007, 0x1009, 0, VBTS_BR_LOOP);
	in.second.cond_taken = false;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x1009, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* mov ss; call 1f; 1: */
	in.second = with_target(dec(0x1007, 5, VBTS_BR_CALL, INSN_F_DIRECT), 0x100c);
	ck_assert_int_eq(step__classify(&in, 0x100c, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1007, 0x100c, 0, VBTS_BR_CALL);

	/* pop %ss; ret */
	in.first = dec(0x2000, 1, 0, INSN_F_MOV_SS);
	in.second = dec(0x2001, 1, VBTS_BR_RET, 0);
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x3456, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x2001, 0x3456, 0, VBTS_BR_RET);
}
END_TEST

START_TEST(test_classify_int)
{
	struct step_insn in = one(with_target(with_vector(dec(0x401000, 2, VBTS_BR_INT,
							      INSN_F_SOFT_INT), 0x80),
					      0xffffffff81000000ULL), 3);
	struct step_out out = { 0 };

	/* the step stopped at the handler: the branch, no gap */
	ck_assert_int_eq(step__classify(&in, 0xffffffff81000000ULL, true, VBTS_CPL_ALL, &out),
			 STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x401000, 0xffffffff81000000ULL, 3, VBTS_BR_INT);
	ck_assert(out.rec[0].flags & VBTS_REC_VECTOR_VALID);
	ck_assert_uint_eq((out.rec[0].flags & VBTS_REC_VECTOR_MASK) >> VBTS_REC_VECTOR_SHIFT, 0x80);

	/* delivery cleared TF: the branch to the verified handler, then a gap from there */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x401234, false, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[0], 0x401000, 0xffffffff81000000ULL, 3, VBTS_BR_INT);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0xffffffff81000000ULL, VBTS_GAP_IDT);

	/* the handler ran unseen and returned right after the int: still a gap */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x401002, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0xffffffff81000000ULL, VBTS_GAP_IDT);

	/* no verified gate: no branch, the gap starts at the instruction */
	in.first.has_target = false;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x401234, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x401000, VBTS_GAP_IDT);

	/* the kernel filter drops the user-mode branch but keeps the gap */
	in.first.has_target = true;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x401234, false, VBTS_CPL_KERNEL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0xffffffff81000000ULL, VBTS_GAP_IDT);
}
END_TEST

START_TEST(test_classify_into)
{
	struct step_insn in = one(with_vector(dec(0x1000, 1, VBTS_BR_INT,
						  INSN_F_SOFT_INT | INSN_F_COND), 4), 0);
	struct step_out out = { 0 };

	/* OF clear: a no-op */
	ck_assert_int_eq(step__classify(&in, 0x1001, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* OF set, verified gate: it always leaves */
	in.first = with_target(in.first, 0x2000);
	ck_assert_int_eq(step__classify(&in, 0x1001, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[0], 0x1000, 0x2000, 0, VBTS_BR_INT);
}
END_TEST

START_TEST(test_classify_ud2_emulated)
{
	/* measured on this host: ud2 at 0x100b, handler 0x1110, next step at 0x1111 */
	struct step_insn in = one(with_target(with_vector(dec(0x100b, 2, VBTS_BR_EXCEPTION, 0), 6),
					      0x1110), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x1111, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[0], 0x100b, 0x1110, 0, VBTS_BR_EXCEPTION);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0x1110, VBTS_GAP_IDT);

	/* with the handler's first instruction (a nop) decoded, no gap is needed */
	in.has_landing = true;
	in.landing = dec(0x1110, 1, 0, 0);
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x1111, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x100b, 0x1110, 0, VBTS_BR_EXCEPTION);
	ck_assert(out.rec[0].flags & VBTS_REC_VECTOR_VALID);
	ck_assert_uint_eq(out.retired, 2);
	/* a handler that ran unseen and returned elsewhere still is a gap */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x100e, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0x1110, VBTS_GAP_IDT);
}
END_TEST

START_TEST(test_classify_syscall)
{
	struct step_insn in = one(with_target(dec(0x400100, 2, VBTS_BR_SYSCALL,
						  INSN_F_SYSCALL | INSN_F_CPL_CHANGE),
					      0xffffffff81800000ULL), 3);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x400102, true, VBTS_CPL_USER, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[0], 0x400100, 0xffffffff81800000ULL, 3, VBTS_BR_SYSCALL);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0xffffffff81800000ULL, VBTS_GAP_SYSCALL);
	/* FMASK without TF: the step stops at LSTAR */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0xffffffff81800000ULL, true, VBTS_CPL_USER, &out),
			 STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
}
END_TEST

START_TEST(test_classify_iret)
{
	/* iretq at 0x100c2d returning to 0x100c31 (lea, 7 bytes), as measured */
	struct step_insn in = one(with_target(dec(0x100c2d, 2, VBTS_BR_IRET, INSN_F_CPL_CHANGE),
					      0x100c31), 0);
	struct step_out out = { 0 };

	in.has_landing = true;
	in.landing = dec(0x100c31, 7, 0, 0);
	/* real KVM: the step stops at the return address */
	ck_assert_int_eq(step__classify(&in, 0x100c31, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x100c2d, 0x100c31, 0, VBTS_BR_IRET);
	ck_assert_uint_eq(out.retired, 1);
	/* this host: it stops after the instruction there; never a branch to 0x100c38 */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x100c38, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x100c2d, 0x100c31, 0, VBTS_BR_IRET);
	ck_assert_uint_eq(out.retired, 2);
	/* the landing instruction is a taken jmp: both branches */
	in.landing = with_target(dec(0x100c31, 2, VBTS_BR_JMP, INSN_F_DIRECT), 0x100d00);
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x100d00, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[1], 0x100c31, 0x100d00, 0, VBTS_BR_JMP);
	/* anywhere else: a gap from the iret, not a branch */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x200000, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x100c2d, VBTS_GAP_UNKNOWN);
	/* without a prediction, the step trap shows the target */
	in.first.has_target = false;
	in.has_landing = false;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x200000, true, VBTS_CPL_ALL, &out), STEP_DONE);
	assert_branch(&out.rec[0], 0x100c2d, 0x200000, 0, VBTS_BR_IRET);
}
END_TEST

START_TEST(test_classify_sysret)
{
	/* sysretq with RCX known: measured nested, no step trap after it */
	struct step_insn in = one(with_target(dec(0x10032c, 3, VBTS_BR_SYSRET, INSN_F_CPL_CHANGE),
					      0x100f66), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x100f66, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x10032c, 0x100f66, 0, VBTS_BR_SYSRET);
	/* the step came back elsewhere, much later: the sysret, then a gap from its target */
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x100fc7, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[0], 0x10032c, 0x100f66, 0, VBTS_BR_SYSRET);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_BEGIN, 0x100f66, VBTS_GAP_SYSCALL);
	/* unpredicted: never a branch to wherever the step came back */
	in.first.has_target = false;
	out.n = 0;
	ck_assert_int_eq(step__classify(&in, 0x100fc7, true, VBTS_CPL_ALL, &out), STEP_LOST);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x10032c, VBTS_GAP_SYSCALL);
}
END_TEST

START_TEST(test_classify_to_next)
{
	/* call 1f; 1: */
	struct step_insn call = one(with_target(dec(0x1000, 5, VBTS_BR_CALL, INSN_F_DIRECT),
						0x1005), 0);
	/* je 1f; 1: */
	struct step_insn je = one(with_target(dec(0x1000, 2, VBTS_BR_JCC,
						  INSN_F_DIRECT | INSN_F_COND), 0x1002), 0);
	/* iretq whose return address is right after it */
	struct step_insn iret = one(with_target(dec(0x102e, 2, VBTS_BR_IRET, INSN_F_CPL_CHANGE),
						0x1030), 0);
	struct step_out out = { 0 };

	/* taken all the same: recorded as hardware BTS records them */
	ck_assert_int_eq(step__classify(&call, 0x1005, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1000, 0x1005, 0, VBTS_BR_CALL);
	ck_assert_int_eq(step__classify(&iret, 0x1030, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[1], 0x102e, 0x1030, 0, VBTS_BR_IRET);
	/* not yet retired (another exit first): nothing */
	out.n = 0;
	ck_assert_int_eq(step__classify(&call, 0x1005, false, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* a conditional one whose condition was not evaluated: no record */
	ck_assert_int_eq(step__classify(&je, 0x1002, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* evaluated before the step: not taken, no record; taken, recorded */
	je.first.cond_known = true;
	ck_assert_int_eq(step__classify(&je, 0x1002, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	je.first.cond_taken = true;
	ck_assert_int_eq(step__classify(&je, 0x1002, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1000, 0x1002, 0, VBTS_BR_JCC);
	/* ... but not before it retired */
	out.n = 0;
	ck_assert_int_eq(step__classify(&je, 0x1002, false, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	/* this host: the trap comes after the hlt at the return address; the halt is handed on */
	iret.first.target = 0x1032;
	iret.has_landing = true;
	iret.landing = dec(0x1032, 1, 0, INSN_F_HLT);
	ck_assert_int_eq(step__classify(&iret, 0x1033, true, VBTS_CPL_ALL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x102e, 0x1032, 0, VBTS_BR_IRET);
	ck_assert(out.hlt_retired);
}
END_TEST

/* ---- step__cond_taken ---------------------------------------------------------------------- */

#define CF (1ULL << 0)
#define PF (1ULL << 2)
#define ZF (1ULL << 6)
#define SF (1ULL << 7)
#define OF (1ULL << 11)

struct cond_case {
	const char *what;
	enum insn_mode mode;
	uint8_t bytes[6];
	uint8_t n;
	uint64_t rflags;
	uint64_t rcx;
	bool taken;
};

/*
 * The conditions of SDM vol. 2 (Jcc, LOOP/LOOPcc, JCXZ/JECXZ/JRCXZ): LOOP decrements rCX at
 * the address size and then tests it; JrCXZ tests it unchanged; a 67 prefix selects ECX in
 * 64-bit mode, CX in 16-bit code.
 */
static const struct cond_case cond_cases[] = {
	{ "jo", INSN_MODE_LONG64, { 0x70, 0 }, 2, OF, 0, true },
	{ "jo, OF clear", INSN_MODE_LONG64, { 0x70, 0 }, 2, SF | ZF | CF | PF, 0, false },
	{ "jno", INSN_MODE_LONG64, { 0x71, 0 }, 2, 0, 0, true },
	{ "jb", INSN_MODE_LONG64, { 0x72, 0 }, 2, CF, 0, true },
	{ "jae", INSN_MODE_LONG64, { 0x73, 0 }, 2, CF, 0, false },
	{ "je", INSN_MODE_LONG64, { 0x74, 0 }, 2, ZF, 0, true },
	{ "je, ZF clear", INSN_MODE_LONG64, { 0x74, 0 }, 2, 0, 0, false },
	{ "jne", INSN_MODE_LONG64, { 0x75, 0 }, 2, 0, 0, true },
	{ "jbe, CF", INSN_MODE_LONG64, { 0x76, 0 }, 2, CF, 0, true },
	{ "jbe, ZF", INSN_MODE_LONG64, { 0x76, 0 }, 2, ZF, 0, true },
	{ "ja", INSN_MODE_LONG64, { 0x77, 0 }, 2, 0, 0, true },
	{ "ja, ZF", INSN_MODE_LONG64, { 0x77, 0 }, 2, ZF, 0, false },
	{ "js", INSN_MODE_LONG64, { 0x78, 0 }, 2, SF, 0, true },
	{ "jns", INSN_MODE_LONG64, { 0x79, 0 }, 2, SF, 0, false },
	{ "jp", INSN_MODE_LONG64, { 0x7a, 0 }, 2, PF, 0, true },
	{ "jnp", INSN_MODE_LONG64, { 0x7b, 0 }, 2, PF, 0, false },
	{ "jl, SF != OF", INSN_MODE_LONG64, { 0x7c, 0 }, 2, SF, 0, true },
	{ "jl, SF == OF", INSN_MODE_LONG64, { 0x7c, 0 }, 2, SF | OF, 0, false },
	{ "jge, SF == OF", INSN_MODE_LONG64, { 0x7d, 0 }, 2, SF | OF, 0, true },
	{ "jle, ZF", INSN_MODE_LONG64, { 0x7e, 0 }, 2, ZF | SF | OF, 0, true },
	{ "jle, OF", INSN_MODE_LONG64, { 0x7e, 0 }, 2, OF, 0, true },
	{ "jle, none", INSN_MODE_LONG64, { 0x7e, 0 }, 2, SF | OF, 0, false },
	{ "jg", INSN_MODE_LONG64, { 0x7f, 0 }, 2, 0, 0, true },
	{ "jg, SF", INSN_MODE_LONG64, { 0x7f, 0 }, 2, SF, 0, false },
	{ "je rel32", INSN_MODE_LONG64, { 0x0f, 0x84, 0, 0, 0, 0 }, 6, ZF, 0, true },
	{ "jbe rel16, 32-bit mode", INSN_MODE_PROT32, { 0x66, 0x0f, 0x86, 0, 0 }, 5, 0, 0, false },
	{ "loop, rcx 2", INSN_MODE_LONG64, { 0xe2, 0 }, 2, 0, 2, true },
	{ "loop, rcx 1", INSN_MODE_LONG64, { 0xe2, 0 }, 2, 0, 1, false },
	{ "loop, rcx 0 wraps", INSN_MODE_LONG64, { 0xe2, 0 }, 2, 0, 0, true },
	{ "loop, rcx 2^32 + 1", INSN_MODE_LONG64, { 0xe2, 0 }, 2, 0, 0x100000001ULL, true },
	{ "addr32 loop, ecx 1", INSN_MODE_LONG64, { 0x67, 0xe2, 0 }, 3, 0, 0x100000001ULL, false },
	{ "loop, 16-bit, cx 1", INSN_MODE_REAL16, { 0xe2, 0 }, 2, 0, 0x10001, false },
	{ "loop, 32-bit, ecx 1", INSN_MODE_PROT32, { 0xe2, 0 }, 2, 0, 0xff00000001ULL, false },
	{ "loope, ZF", INSN_MODE_LONG64, { 0xe1, 0 }, 2, ZF, 2, true },
	{ "loope, no ZF", INSN_MODE_LONG64, { 0xe1, 0 }, 2, 0, 2, false },
	{ "loope, rcx 1", INSN_MODE_LONG64, { 0xe1, 0 }, 2, ZF, 1, false },
	{ "loopne, no ZF", INSN_MODE_LONG64, { 0xe0, 0 }, 2, 0, 2, true },
	{ "loopne, ZF", INSN_MODE_LONG64, { 0xe0, 0 }, 2, ZF, 2, false },
	{ "jrcxz, 0", INSN_MODE_LONG64, { 0xe3, 0 }, 2, 0, 0, true },
	{ "jrcxz, 2^32", INSN_MODE_LONG64, { 0xe3, 0 }, 2, 0, 0x100000000ULL, false },
	{ "jecxz, 2^32", INSN_MODE_LONG64, { 0x67, 0xe3, 0 }, 3, 0, 0x100000000ULL, true },
	{ "jcxz, 16-bit", INSN_MODE_REAL16, { 0xe3, 0 }, 2, 0, 0x10000, true },
};

START_TEST(test_cond_taken)
{
	const struct cond_case *c = &cond_cases[_i];
	struct insn_decoder d;
	struct insn_info info;
	bool taken = !c->taken;

	ck_assert_int_eq(insn_decoder__init(&d), 0);
	ck_assert_int_eq(insn__decode(&d, c->mode, 0x1000, c->bytes, c->n, &info), 0);
	ck_assert_msg(info.len == c->n, "%s: length %u", c->what, info.len);
	ck_assert_msg(!step__cond_taken(&info, c->rflags, c->rcx, &taken), "%s: refused", c->what);
	ck_assert_msg(taken == c->taken, "%s: %s", c->what, taken ? "taken" : "not taken");
}
END_TEST

START_TEST(test_cond_refused)
{
	/* jmp rel8, call rel32, into (32-bit), ret: not conditional branches */
	static const uint8_t bytes[][5] = { { 0xeb, 0 }, { 0xe8, 0, 0, 0, 0 }, { 0xce }, { 0xc3 } };
	static const enum insn_mode modes[] = { INSN_MODE_LONG64, INSN_MODE_LONG64,
						INSN_MODE_PROT32, INSN_MODE_LONG64 };
	struct insn_decoder d;
	struct insn_info info;
	bool taken;

	ck_assert_int_eq(insn_decoder__init(&d), 0);
	for (unsigned int i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ck_assert_int_eq(insn__decode(&d, modes[i], 0x1000, bytes[i], 5, &info), 0);
		ck_assert_int_eq(step__cond_taken(&info, ZF | CF | OF, 0, &taken), -EINVAL);
	}
}
END_TEST

START_TEST(test_classify_filter)
{
	struct step_insn in = one(dec(0x1000, 2, VBTS_BR_JMP_IND, 0), 0);
	struct step_out out = { 0 };

	ck_assert_int_eq(step__classify(&in, 0x2000, true, VBTS_CPL_USER, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 0);
	ck_assert_int_eq(step__classify(&in, 0x2000, true, VBTS_CPL_KERNEL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	in.cpl = 3;
	ck_assert_int_eq(step__classify(&in, 0x2000, true, VBTS_CPL_KERNEL, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_int_eq(step__classify(&in, 0x2000, true, VBTS_CPL_USER, &out), STEP_DONE);
	ck_assert_uint_eq(out.n, 2);
	assert_branch(&out.rec[1], 0x1000, 0x2000, 3, VBTS_BR_JMP_IND);
}
END_TEST

/* ---- the state machine ------------------------------------------------------------------- */

static struct step_core core(bool cpl0, bool cpl3, enum vbts_cpl_filter filter)
{
	struct step_core c = { .filter = filter, .can_cpl0 = cpl0, .can_cpl3 = cpl3 };

	return c;
}

static struct step_obs obs(uint64_t la, uint64_t cr3, uint8_t cpl)
{
	struct step_obs o = { .la = la, .cr3 = cr3, .cpl = cpl };

	return o;
}

/* START and the first TASK_ARRIVE, thrown away; the records counters restart at 0. */
static void started(struct step_core *c, const struct step_obs *o)
{
	struct step_out out = { 0 };

	step_core__start(c, o, 0, &out);
	c->records = 0;
}

START_TEST(test_core_start_stop)
{
	struct step_core c = core(true, false, VBTS_CPL_ALL);
	struct step_obs o = obs(0x100000, 0x8000000000012123ULL, 0);
	struct step_out out = { 0 };

	step_core__start(&c, &o, 5, &out);
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[0], VBTS_ESC_START, 5, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_ARRIVE, 0x12000, 5);
	ck_assert_uint_eq(c.records, 2);
	out.n = 0;
	step_core__stop(&c, &o, 9, &out);
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_STOP, 9, 0);

	c = core(true, true, VBTS_CPL_USER);
	o = obs(0, 0, 0);
	out.n = 0;
	step_core__start(&c, &o, 0, &out);
	assert_escape(&out.rec[0], VBTS_ESC_START, 0, VBTS_START_CPL_USER);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_ARRIVE, 0, 0); /* paging off: CR3 0 */
	c = core(true, true, VBTS_CPL_KERNEL);
	out.n = 0;
	step_core__start(&c, &o, 0, &out);
	assert_escape(&out.rec[0], VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL);
}
END_TEST

START_TEST(test_core_steps_and_tasks)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_insn jmp = one(with_target(dec(0x1000, 2, VBTS_BR_JMP, INSN_F_DIRECT), 0x2000),
				   0);
	struct step_insn movcr3 = one(dec(0x2000, 3, 0, INSN_F_CR3), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x1000, 0x10000, 0);

	step_core__start(&c, &o, 0, &out);
	out.n = 0;
	ck_assert(step_core__plan(&c, &o, &jmp, 1, &out));
	ck_assert_uint_eq(out.n, 0);
	o.la = 0x2000;
	ck_assert(step_core__exit(&c, &o, true, 2, &out));
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x1000, 0x2000, 0, VBTS_BR_JMP);
	/* mov %rax,%cr3: a task switch seen after the step */
	out.n = 0;
	ck_assert(step_core__plan(&c, &o, &movcr3, 3, &out));
	o.la = 0x2003;
	o.cr3 = 0x20000 | 0x5; /* PCID bits are masked */
	ck_assert(step_core__exit(&c, &o, true, 4, &out));
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[0], VBTS_ESC_TASK_DEPART, 0x10000, 4);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_ARRIVE, 0x20000, 4);
	ck_assert_uint_eq(c.steps, 2);
	ck_assert_uint_eq(c.branches, 1);
	ck_assert_uint_eq(c.records, 5);
	/* a debug exit when nothing was armed is not ours */
	out.n = 0;
	ck_assert(!step_core__exit(&c, &o, true, 5, &out));
	ck_assert_uint_eq(out.n, 0);
}
END_TEST

/* A transition the VMM executed: the gap closes at it, the branch carries its CPL and vector. */
START_TEST(test_core_emulated)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_decoded sysret = dec(0x1000, 3, VBTS_BR_SYSRET, INSN_F_CPL_CHANGE);
	struct step_decoded int80 = with_vector(dec(0x400100, 2, VBTS_BR_INT, INSN_F_SOFT_INT),
						0x80);
	struct step_obs k = obs(0x1000, 0x10000, 0), u = obs(0x400000, 0x10000, 3);
	struct step_out out = { 0 };

	started(&c, &k);
	c.gap_open = true;
	step_core__emulated(&c, &k, &sysret, &u, 7, &out);
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_END, 0x1000, 7);
	assert_branch(&out.rec[1], 0x1000, 0x400000, 0, VBTS_BR_SYSRET);
	ck_assert(!c.gap_open);
	ck_assert(!c.armed);
	ck_assert_uint_eq(c.steps, 1);
	ck_assert_uint_eq(c.branches, 1);
	ck_assert_uint_eq(c.records, 2);

	/* from CPL 3 into the kernel: the vector is in the record */
	out.n = 0;
	u.la = 0x400100;
	k.la = 0x100290;
	step_core__emulated(&c, &u, &int80, &k, 8, &out);
	ck_assert_uint_eq(out.n, 1);
	assert_branch(&out.rec[0], 0x400100, 0x100290, 3, VBTS_BR_INT);
	ck_assert(out.rec[0].flags & VBTS_REC_VECTOR_VALID);
	ck_assert_uint_eq((out.rec[0].flags >> VBTS_REC_VECTOR_SHIFT) & 0xff, 0x80);

	/* the filter drops the kernel's branch; a new CR3 is reported */
	c.filter = VBTS_CPL_USER;
	out.n = 0;
	k.la = 0x1000;
	u.cr3 = 0x20000;
	step_core__emulated(&c, &k, &sysret, &u, 9, &out);
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[0], VBTS_ESC_TASK_DEPART, 0x10000, 9);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_ARRIVE, 0x20000, 9);
	ck_assert_uint_eq(c.steps, 3);
}
END_TEST

START_TEST(test_core_cr3_sanity)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_insn ret = one(dec(0x400000, 1, VBTS_BR_RET, 0), 3);
	struct step_insn movcr3 = one(dec(0x1000, 3, 0, INSN_F_CR3), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x400000, 0x10000, 3);

	started(&c, &o);
	/* a plain ret cannot switch tasks: a step showing a new CR3 is not this ret's */
	ck_assert(step_core__plan(&c, &o, &ret, 1, &out));
	o.la = 0x500000;
	o.cr3 = 0x20000;
	ck_assert(step_core__exit(&c, &o, true, 2, &out));
	ck_assert_uint_eq(out.n, 3);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x400000, VBTS_GAP_UNKNOWN);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_DEPART, 0x10000, 2);
	assert_escape(&out.rec[2], VBTS_ESC_TASK_ARRIVE, 0x20000, 2);
	ck_assert_uint_eq(c.branches, 0);
	/* mov to CR3 may */
	out.n = 0;
	o = obs(0x1000, 0x20000, 0);
	ck_assert(step_core__plan(&c, &o, &movcr3, 3, &out));
	ck_assert_uint_eq(out.n, 1); /* GAP_END */
	o.la = 0x1003;
	o.cr3 = 0x30000;
	ck_assert(step_core__exit(&c, &o, true, 4, &out));
	ck_assert_uint_eq(out.n, 3);
	assert_escape(&out.rec[1], VBTS_ESC_TASK_DEPART, 0x20000, 4);
	ck_assert(!c.gap_open);
}
END_TEST

START_TEST(test_core_gap_regained)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_insn mov = one(dec(0x1000, 3, 0, 0), 0);
	struct step_insn nop = one(dec(0x8000, 1, 0, 0), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x1000, 0, 0);

	started(&c, &o);
	ck_assert(step_core__plan(&c, &o, &mov, 1, &out));
	o.la = 0x8000; /* a page fault handler ran unseen and did I/O */
	ck_assert(!step_core__exit(&c, &o, false, 2, &out));
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x1000, VBTS_GAP_UNKNOWN);
	ck_assert(c.gap_open);
	ck_assert(step_core__plan(&c, &o, &nop, 3, &out));
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_END, 0x8000, 3);
	ck_assert(!c.gap_open);
	ck_assert_uint_eq(c.gaps, 1);
}
END_TEST

START_TEST(test_core_nostep)
{
	/* this host: CPL 0 steps, CPL 3 does not */
	struct step_core c = core(true, false, VBTS_CPL_ALL);
	struct step_insn iret = one(dec(0x1000, 2, VBTS_BR_IRET, INSN_F_CPL_CHANGE), 0);
	struct step_insn user = one(dec(0x400000, 1, 0, 0), 3);
	struct step_insn intn = one(with_vector(dec(0x1000, 2, VBTS_BR_INT, INSN_F_SOFT_INT), 0x30),
				    0);
	struct step_insn out_insn = one(dec(0x3000, 1, 0, 0), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x1000, 0, 0);

	started(&c, &o);
	/* an int n in CPL 0 only enters CPL 0: stepped */
	ck_assert(step_core__plan(&c, &o, &intn, 0, &out));
	ck_assert_uint_eq(out.n, 0);
	/* an iretq in CPL 0 may enter CPL 3: not stepped, a gap from the iret */
	ck_assert(!step_core__plan(&c, &o, &iret, 1, &out));
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x1000, VBTS_GAP_NOSTEP);
	ck_assert(!step_core__exit(&c, &o, false, 2, &out));
	/* user mode exits: still not steppable, no more records */
	o = obs(0x400000, 0, 3);
	ck_assert(!step_core__exit(&c, &o, false, 3, &out));
	ck_assert(!step_core__plan(&c, &o, &user, 4, &out));
	ck_assert_uint_eq(out.n, 1);
	/* back in the kernel: regained */
	o = obs(0x3000, 0, 0);
	ck_assert(!step_core__exit(&c, &o, false, 5, &out));
	ck_assert(step_core__plan(&c, &o, &out_insn, 6, &out));
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_END, 0x3000, 6);
	ck_assert_uint_eq(c.gaps, 1);

	/* a host that steps nothing: one gap, never armed */
	c = core(false, false, VBTS_CPL_ALL);
	out.n = 0;
	ck_assert(!step_core__plan(&c, &o, &out_insn, 7, &out));
	ck_assert(!step_core__plan(&c, &o, &out_insn, 8, &out));
	ck_assert_uint_eq(out.n, 1);
}
END_TEST

START_TEST(test_core_far_reach)
{
	/* CPL 0 steps, CPL 3 does not */
	struct step_core c = core(true, false, VBTS_CPL_ALL);
	struct step_insn ljmp = one(dec(0x1000, 7, VBTS_BR_FAR_JMP, INSN_F_FAR | INSN_F_CPL_CHANGE),
				    0);
	struct step_insn lret = one(dec(0x1000, 2, VBTS_BR_FAR_RET, INSN_F_FAR | INSN_F_CPL_CHANGE),
				    0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x1000, 0, 0);

	/* legacy protected mode: a far jmp may switch tasks, to any CPL */
	ck_assert(!step_core__plan(&c, &o, &ljmp, 0, &out));
	/* long mode: far jmp/call never leave CPL 0 for an outer ring */
	ljmp.lmode = true;
	ck_assert(step_core__plan(&c, &o, &ljmp, 0, &out));
	/* far ret may return outward, in any mode */
	lret.lmode = true;
	ck_assert(!step_core__plan(&c, &o, &lret, 0, &out));
	/* ... unless the CS it pops says it stays in ring 0 */
	lret.ret_cpl_known = true;
	lret.ret_cpl = 0;
	ck_assert(step_core__plan(&c, &o, &lret, 0, &out));
	lret.ret_cpl = 3;
	ck_assert(!step_core__plan(&c, &o, &lret, 0, &out));
	/* real-address mode: nothing changes the CPL */
	lret.ret_cpl_known = false;
	lret.lmode = false;
	lret.real = true;
	ck_assert(step_core__plan(&c, &o, &lret, 0, &out));
}
END_TEST

START_TEST(test_core_unreadable)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_insn bad = { .valid = false };
	struct step_insn nop = one(dec(0x9000, 1, 0, 0), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0xdead000, 0, 0);

	started(&c, &o);
	ck_assert(step_core__plan(&c, &o, &bad, 1, &out));
	ck_assert_uint_eq(out.n, 1);
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0xdead000, VBTS_GAP_MEMORY);
	o.la = 0x9000;
	ck_assert(step_core__exit(&c, &o, true, 2, &out));
	ck_assert_uint_eq(out.n, 1);
	ck_assert(step_core__plan(&c, &o, &nop, 3, &out));
	ck_assert_uint_eq(out.n, 2);
	assert_escape(&out.rec[1], VBTS_ESC_GAP_END, 0x9000, 3);

	/* where only CPL 0 steps, an unknown instruction is not stepped */
	c = core(true, false, VBTS_CPL_ALL);
	out.n = 0;
	ck_assert(!step_core__plan(&c, &o, &bad, 4, &out));
	assert_escape(&out.rec[0], VBTS_ESC_GAP_BEGIN, 0x9000, VBTS_GAP_NOSTEP);
}
END_TEST

START_TEST(test_core_pending)
{
	struct step_core c = core(true, true, VBTS_CPL_ALL);
	struct step_insn in = one(dec(0x1008, 1, 0, 0), 0);
	struct step_out out = { 0 };
	struct step_obs o = obs(0x1008, 0, 0);

	started(&c, &o);
	/* in %dx,%al: an I/O exit before it completes, then the step after it: one step */
	ck_assert(step_core__plan(&c, &o, &in, 1, &out));
	ck_assert(!step_core__exit(&c, &o, false, 2, &out));
	ck_assert_uint_eq(c.steps, 0);
	ck_assert(step_core__plan(&c, &o, &in, 3, &out));
	o.la = 0x1009;
	ck_assert(step_core__exit(&c, &o, true, 4, &out));
	ck_assert_uint_eq(c.steps, 1);
	ck_assert_uint_eq(out.n, 0);
}
END_TEST

/* ---- gates ------------------------------------------------------------------------------- */

#define RAM_SIZE (1ULL << 20)

static uint64_t gate32(uint32_t off, uint16_t sel, unsigned int type, unsigned int dpl,
		       bool present)
{
	return (off & 0xffff) | ((uint64_t)sel << 16) |
	       ((uint64_t)((present ? 0x80 : 0) | (dpl << 5) | type) << 40) |
	       ((uint64_t)(off >> 16) << 48);
}

static struct fake_ram gram;
static struct gva_space gspace;
static struct step_tables gt;

static void gates_setup(void)
{
	gram.size = RAM_SIZE;
	gram.buf = calloc(1, RAM_SIZE);
	ck_assert_ptr_nonnull(gram.buf);
	memset(&gspace, 0, sizeof(gspace));
	gspace.ptr = fake_ram_ptr;
	gspace.ctx = &gram;
	gspace.cr0 = 1;
	/* GDT at 0x4000: null, flat code, data, code based at 0x10000, 64-bit code */
	fake_put64(&gram, 0x4008, 0x00cf9a000000ffffULL);
	fake_put64(&gram, 0x4010, 0x00cf92000000ffffULL);
	fake_put64(&gram, 0x4018, 0x00cf9a010000ffffULL);
	fake_put64(&gram, 0x4020, 0x00af9a000000ffffULL);
	fake_put64(&gram, 0x4028, 0x00cf1a000000ffffULL); /* not present */
	memset(&gt, 0, sizeof(gt));
	gt.gdt_base = 0x4000;
	gt.gdt_limit = 0x2f;
	gt.idt_base = 0x3000;
	gt.idt_limit = 0x7ff;
}

static void gates_teardown(void)
{
	free(gram.buf);
	gram.buf = NULL;
}

START_TEST(test_gate_32)
{
	uint64_t la = 0;

	fake_put64(&gram, 0x3000 + 0x20 * 8, gate32(0x1100, 0x08, 0xe, 0, true));
	fake_put64(&gram, 0x3000 + 0x80 * 8, gate32(0x200, 0x18, 0xf, 3, true));
	fake_put64(&gram, 0x3000 + 0x05 * 8, gate32(0, 0x28, 0x5, 0, true)); /* task gate */
	fake_put64(&gram, 0x3000 + 0x07 * 8, gate32(0x1100, 0x08, 0xe, 0, false));
	fake_put64(&gram, 0x3000 + 0x06 * 8, gate32(0x1110, 0x08, 0xe, 0, true));
	fake_put64(&gram, 0x3000 + 0x09 * 8, gate32(0x12345678, 0x08, 0x6, 0, true)); /* 16-bit */
	fake_put64(&gram, 0x3000 + 0x0a * 8, gate32(0x1000, 0x00, 0xe, 0, true)); /* null sel */
	fake_put64(&gram, 0x3000 + 0x0b * 8, gate32(0x1000, 0x10, 0xe, 0, true)); /* data seg */
	fake_put64(&gram, 0x3000 + 0x0c * 8, gate32(0x1000, 0x28, 0xe, 0, true)); /* not present */
	fake_put64(&gram, 0x3000 + 0x0d * 8, gate32(0x1000, 0x38, 0xe, 0, true)); /* beyond GDT */
	fake_put64(&gram, 0x3000 + 0x0e * 8, gate32(0x1000, 0x0c, 0xe, 0, true)); /* LDT, none */

	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x20, true, 0, &la), 0);
	ck_assert_uint_eq(la, 0x1100);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x80, true, 3, &la), 0);
	ck_assert_uint_eq(la, 0x10200);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x20, true, 3, &la), -EPERM);
	/* ud2 from CPL 3 ignores the DPL */
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 6, false, 3, &la), 0);
	ck_assert_uint_eq(la, 0x1110);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 5, true, 0, &la),
			 -EOPNOTSUPP);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 7, true, 0, &la), -ENOENT);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 9, true, 0, &la), 0);
	ck_assert_uint_eq(la, 0x5678);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x0a, true, 0, &la),
			 -ENOENT);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x0b, true, 0, &la),
			 -EOPNOTSUPP);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x0c, true, 0, &la),
			 -ENOENT);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x0d, true, 0, &la),
			 -ERANGE);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x0e, true, 0, &la),
			 -ENOENT);
	/* beyond the IDT limit */
	gt.idt_limit = 0x20 * 8 + 6;
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x20, true, 0, &la),
			 -ERANGE);
	/* IDT outside guest RAM */
	gt.idt_limit = 0x7ff;
	gt.idt_base = RAM_SIZE - 0x100;
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, false, 0x20, true, 0, &la),
			 -EFAULT);
}
END_TEST

START_TEST(test_gate_long)
{
	uint64_t la = 0, off = 0xffffffff81000abcULL;

	gspace.efer = 0x500;
	gt.idt_limit = 0xfff;
	fake_put64(&gram, 0x3000 + 3 * 16, gate32((uint32_t)off, 0x20, 0xe, 3, true));
	fake_put64(&gram, 0x3000 + 3 * 16 + 8, off >> 32);
	fake_put64(&gram, 0x3000 + 4 * 16, gate32(0x1000, 0x08, 0xe, 3, true)); /* 32-bit CS */
	fake_put64(&gram, 0x3000 + 5 * 16, gate32(0x1000, 0x20, 0xc, 3, true)); /* call gate */
	fake_put64(&gram, 0x3000 + 0x80 * 16, gate32(0x1000, 0x20, 0xf, 0, true));

	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 3, true, 3, &la), 0);
	ck_assert_uint_eq(la, off);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 4, true, 0, &la),
			 -EOPNOTSUPP);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 5, true, 0, &la),
			 -EOPNOTSUPP);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 0x80, true, 3, &la), -EPERM);
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 0x80, true, 0, &la), 0);
	ck_assert_uint_eq(la, 0x1000);
	gt.idt_limit = 0x80 * 16 + 8; /* the high half of the gate is beyond the limit */
	ck_assert_int_eq(step__gate_target(&gspace, &gt, false, true, 0x80, true, 0, &la),
			 -ERANGE);
}
END_TEST

START_TEST(test_gate_real)
{
	uint64_t la = 0;

	gt.idt_base = 0;
	gt.idt_limit = 0x3ff;
	fake_put32(&gram, 0x10 * 4, 0xf000e000); /* f000:e000 */
	ck_assert_int_eq(step__gate_target(&gspace, &gt, true, false, 0x10, true, 0, &la), 0);
	ck_assert_uint_eq(la, 0xfe000);
	gt.idt_limit = 0x10 * 4 + 2;
	ck_assert_int_eq(step__gate_target(&gspace, &gt, true, false, 0x10, true, 0, &la),
			 -ERANGE);
}
END_TEST

START_TEST(test_gate_random)
{
	/* descriptor tables of random bytes: an answer or an error, never a read outside RAM */
	uint64_t x = 0xb7e151628aed2a6bULL, la;

	for (uint64_t i = 0; i < RAM_SIZE / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fake_put64(&gram, i * 8, x);
	}
	for (unsigned int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		gt.idt_base = (i & 1) ? (x & (RAM_SIZE - 1)) : x;
		gt.idt_limit = (uint16_t)(x >> 16);
		gt.gdt_base = (x >> 20) & (RAM_SIZE - 1);
		gt.gdt_limit = (uint16_t)(x >> 40);
		gt.ldt_base = x >> 8;
		gt.ldt_limit = (uint32_t)(x >> 24);
		gt.ldt_usable = i & 4;
		(void)step__gate_target(&gspace, &gt, (i & 8) != 0, (i & 16) != 0, (uint8_t)x,
					(i & 32) != 0, (uint8_t)(i & 3), &la);
	}
}
END_TEST

Suite *core_suite(void)
{
	Suite *s = suite_create("step");
	TCase *tc = tcase_create("classify");
	TCase *sm = tcase_create("state-machine");
	TCase *gates = tcase_create("gates");

	tcase_add_test(tc, test_classify_sequential);
	tcase_add_test(tc, test_classify_jcc);
	tcase_add_test(tc, test_classify_jmp_self);
	tcase_add_test(tc, test_classify_rep);
	tcase_add_test(tc, test_classify_indirect);
	tcase_add_test(tc, test_classify_other_exits);
	tcase_add_test(tc, test_classify_hlt);
	tcase_add_test(tc, test_classify_mov_ss);
	tcase_add_test(tc, test_classify_int);
	tcase_add_test(tc, test_classify_into);
	tcase_add_test(tc, test_classify_ud2_emulated);
	tcase_add_test(tc, test_classify_syscall);
	tcase_add_test(tc, test_classify_iret);
	tcase_add_test(tc, test_classify_sysret);
	tcase_add_test(tc, test_classify_to_next);
	tcase_add_test(tc, test_classify_filter);
	tcase_add_loop_test(tc, test_cond_taken, 0, sizeof(cond_cases) / sizeof(cond_cases[0]));
	tcase_add_test(tc, test_cond_refused);
	suite_add_tcase(s, tc);

	tcase_add_test(sm, test_core_start_stop);
	tcase_add_test(sm, test_core_steps_and_tasks);
	tcase_add_test(sm, test_core_cr3_sanity);
	tcase_add_test(sm, test_core_gap_regained);
	tcase_add_test(sm, test_core_nostep);
	tcase_add_test(sm, test_core_far_reach);
	tcase_add_test(sm, test_core_unreadable);
	tcase_add_test(sm, test_core_pending);
	tcase_add_test(sm, test_core_emulated);
	suite_add_tcase(s, sm);

	tcase_add_checked_fixture(gates, gates_setup, gates_teardown);
	tcase_add_test(gates, test_gate_32);
	tcase_add_test(gates, test_gate_long);
	tcase_add_test(gates, test_gate_real);
	tcase_add_test(gates, test_gate_random);
	suite_add_tcase(s, gates);
	return s;
}
