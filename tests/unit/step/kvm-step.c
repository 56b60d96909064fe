// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-step.c - check-step-kvm: the step backend on the host's /dev/kvm, around a hand-assembled
 * 64-bit ring-0 guest with a known list of taken branches.
 *
 * The guest (identity-mapped 2 MiB page, flat GDT, a 64-bit IDT gate for #UD):
 *   0x1000  jmp 0x1004                 JMP
 *   0x1004  mov $3, %ecx
 *   0x1009  loop 0x1009                LOOP, twice
 *   0x100b  call 0x1040                CALL; 0x1040 ret -> 0x1010  RET
 *   0x1010  mov %ss, %eax; mov %eax, %ss; jmp 0x1018   JMP covered by the mov-ss step
 *   0x1018  ud2                        EXCEPTION 6 -> 0x1100, then a gap if the host does
 *                                      not step into the handler (TF cleared)
 *   0x101a  mov $0x80, %dx; out %al, %dx                 an I/O exit
 *   0x101f  build an iretq frame; iretq -> 0x1032       IRET
 *   0x1032  hlt                        the loop ends at the halt (a ud2 follows)
 *   0x1100  #UD handler: nop; addq $2, (%rsp); iretq
 * A second guest, started at 0x1200, branches to its own fall-through addresses (to_next below)
 * and ends at the same hlt.
 * Exit status: 0 all passed, 1 a failure, 77 no usable /dev/kvm.
 */
#include <string.h>

#include <check.h>
#include <vbts/ring-format.h>

#include "kvm-env.h"
#include "kvm-guest.h"
#include "kvm.h"
#include "tracer.h"

/*
 * Branches whose target is the next instruction: taken all the same (hardware BTS records them),
 * except the jne and the second loop, whose conditions fail.
 */
static const uint8_t to_next[] = {
	0x31, 0xc0,                         /* 1200 xor %eax, %eax (ZF = 1) */
	0xeb, 0x00,                         /* 1202 jmp 1f; 1:       JMP */
	0xe8, 0x00, 0x00, 0x00, 0x00,       /* 1204 call 1f; 1:      CALL */
	0x5a,                               /* 1209 pop %rdx */
	0x74, 0x00,                         /* 120a je 1f; 1:        JCC, taken */
	0x75, 0x00,                         /* 120c jne 1f; 1:       not taken */
	0xb9, 0x02, 0x00, 0x00, 0x00,       /* 120e mov $2, %ecx */
	0xe2, 0x00,                         /* 1213 loop 1f; 1:      LOOP, rcx 2 -> 1 */
	0xe2, 0x00,                         /* 1215 loop 1f; 1:      not taken, rcx 1 -> 0 */
	0xe3, 0x00,                         /* 1217 jrcxz 1f; 1:     JRCXZ */
	0x8c, 0xd0,                         /* 1219 mov %ss, %eax */
	0x8e, 0xd0,                         /* 121b mov %eax, %ss */
	0x74, 0x00,                         /* 121d je 1f; 1:        JCC, in the mov-ss step */
	0x48, 0x8d, 0x05, 0x02, 0, 0, 0,    /* 121f lea 0x1228(%rip), %rax */
	0x50,                               /* 1226 push %rax */
	0xc3,                               /* 1227 ret              RET to 1228 */
	0xe9, 0x05, 0xfe, 0xff, 0xff,       /* 1228 jmp 0x1032       JMP to the hlt */
};

static const struct kvm_guest_branch to_next_expected[] = {
	{ 0x1202, 0x1204, VBTS_BR_JMP },
	{ 0x1204, 0x1209, VBTS_BR_CALL },
	{ 0x120a, 0x120c, VBTS_BR_JCC },
	{ 0x1213, 0x1215, VBTS_BR_LOOP },
	{ 0x1217, 0x1219, VBTS_BR_JRCXZ },
	{ 0x121d, 0x121f, VBTS_BR_JCC },
	{ 0x1227, 0x1228, VBTS_BR_RET },
	{ 0x1228, 0x1032, VBTS_BR_JMP },
};

static bool in_handler(uint64_t a)
{
	return a >= KVM_GUEST_HANDLER_LO && a < KVM_GUEST_HANDLER_HI;
}

/* The whole trace: escapes in the right places, and exactly the expected branches. */
static void check_full_trace(struct kvm_env *e)
{
	unsigned int nb = 0, gap_begin = 0, gap_end = 0;
	const struct vbts_record *r = e->rec;

	ck_assert_uint_ge(e->nrec, 4);
	ck_assert(vbts_record__is_escape(&r[0]));
	ck_assert_uint_eq(vbts_record__escape_kind(&r[0]), VBTS_ESC_START);
	ck_assert_uint_eq(vbts_record__escape_aux(&r[0]),
			  VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[1]), VBTS_ESC_TASK_ARRIVE);
	ck_assert_uint_eq(r[1].to, 0x10000);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[e->nrec - 1]), VBTS_ESC_STOP);

	for (unsigned int i = 2; i < e->nrec - 1; i++) {
		if (vbts_record__is_escape(&r[i])) {
			unsigned int k = vbts_record__escape_kind(&r[i]);

			if (k == VBTS_ESC_GAP_BEGIN) {
				/* the only gap: the #UD handler, entered with TF cleared */
				ck_assert_uint_eq(r[i].to, 0x1100);
				ck_assert_uint_eq(vbts_record__escape_aux(&r[i]), VBTS_GAP_IDT);
				gap_begin++;
			} else if (k == VBTS_ESC_GAP_END) {
				ck_assert_uint_eq(gap_end + 1, gap_begin);
				gap_end++;
			} else {
				ck_abort_msg("unexpected escape kind %u at %u", k, i);
			}
			continue;
		}
		ck_assert(r[i].flags & VBTS_REC_CPL_VALID);
		ck_assert_uint_eq((r[i].flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT, 0);
		if (in_handler(r[i].from))
			continue; /* whatever part of the handler this host lets us see */
		ck_assert_msg(nb < kvm_guest_nr_branches,
			      "extra branch %#llx -> %#llx", (unsigned long long)r[i].from,
			      (unsigned long long)r[i].to);
		ck_assert_msg(r[i].from == kvm_guest_branches[nb].from && r[i].to == kvm_guest_branches[nb].to &&
				      kvm_env__kind(&r[i]) == kvm_guest_branches[nb].kind,
			      "branch %u: %#llx -> %#llx kind %u, want %#llx -> %#llx kind %u", nb,
			      (unsigned long long)r[i].from, (unsigned long long)r[i].to,
			      kvm_env__kind(&r[i]), (unsigned long long)kvm_guest_branches[nb].from,
			      (unsigned long long)kvm_guest_branches[nb].to, kvm_guest_branches[nb].kind);
		if (kvm_guest_branches[nb].kind == VBTS_BR_EXCEPTION) {
			ck_assert(r[i].flags & VBTS_REC_VECTOR_VALID);
			ck_assert_uint_eq((r[i].flags & VBTS_REC_VECTOR_MASK) >>
						  VBTS_REC_VECTOR_SHIFT, 6);
		}
		nb++;
	}
	ck_assert_uint_eq(nb, kvm_guest_nr_branches);
	/* nested kvm-amd: the handler runs unseen (one gap); this host steps into it (none) */
	ck_assert_uint_le(gap_begin, 1);
	ck_assert_uint_eq(gap_end, gap_begin);
	ck_assert_uint_eq(e->io_exits, 1);
	ck_assert_uint_ge(e->tv.stat_steps, 20);
	ck_assert_uint_eq(e->tv.stat_gaps, gap_begin);
	ck_assert_uint_eq(e->tv.stat_records, e->nrec);
}

static struct tracer_caps host_caps(bool sync)
{
	struct tracer_caps caps = { .step_cpl0 = true, .sync_regs = sync };

	return caps;
}

START_TEST(test_kvm_trace)
{
	struct kvm_env *e = kvm_env__create(VBTS_CPL_ALL, 0x1000);

	e->tv.caps = host_caps(_i == 1);
	if (_i == 1 && !kvm__check_extension(&e->k, KVM_CAP_SYNC_REGS)) {
		kvm_env__destroy(e);
		return; /* no sync regs on this host: the ioctl path was tested already */
	}
	kvm_env__run(e, &step_tracer_ops, 0);
	kvm_env__records(e);
	check_full_trace(e);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_to_next)
{
	const unsigned int n = sizeof(to_next_expected) / sizeof(to_next_expected[0]);
	struct kvm_env *e;
	const struct vbts_record *r;

	e = kvm_env__create(VBTS_CPL_ALL, 0x1200);
	e->tv.caps = host_caps(false);
	kvm_guest__put(e->mem, 0x1200, to_next, sizeof(to_next));
	kvm_env__run(e, &step_tracer_ops, 0);
	kvm_env__records(e);
	/* START, TASK_ARRIVE, the branches in order, STOP: no gap */
	ck_assert_uint_eq(e->nrec, 2 + n + 1);
	ck_assert_uint_eq(vbts_record__escape_kind(&e->rec[e->nrec - 1]), VBTS_ESC_STOP);
	for (unsigned int i = 0; i < n; i++) {
		r = &e->rec[2 + i];
		ck_assert_msg(!vbts_record__is_escape(r), "record %u is an escape", 2 + i);
		ck_assert_msg(r->from == to_next_expected[i].from && r->to == to_next_expected[i].to &&
				      kvm_env__kind(r) == to_next_expected[i].kind,
			      "branch %u: %#llx -> %#llx kind %u, want %#llx -> %#llx kind %u", i,
			      (unsigned long long)r->from, (unsigned long long)r->to, kvm_env__kind(r),
			      (unsigned long long)to_next_expected[i].from,
			      (unsigned long long)to_next_expected[i].to, to_next_expected[i].kind);
		ck_assert_uint_eq((r->flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT, 0);
	}
	ck_assert_uint_eq(e->tv.stat_gaps, 0);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_filter_user)
{
	struct kvm_env *e = kvm_env__create(VBTS_CPL_USER, 0x1000);

	e->tv.caps = host_caps(false);
	kvm_env__run(e, &step_tracer_ops, 0);
	kvm_env__records(e);
	ck_assert_uint_eq(vbts_record__escape_aux(&e->rec[0]), VBTS_START_CPL_USER);
	for (unsigned int i = 0; i < e->nrec; i++)
		ck_assert_msg(vbts_record__is_escape(&e->rec[i]), "a ring-0 branch was recorded");
	ck_assert_uint_ge(e->tv.stat_steps, 20);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_nostep)
{
	/* a host that cannot step at all: one gap from the start to the end, no branch */
	struct kvm_env *e;
	struct tracer_caps none = { 0 };

	e = kvm_env__create(VBTS_CPL_ALL, 0x1000);
	e->tv.caps = none;
	kvm_env__run(e, &step_tracer_ops, 0);
	kvm_env__records(e);
	ck_assert_uint_eq(e->nrec, 5);
	ck_assert_uint_eq(vbts_record__escape_kind(&e->rec[2]), VBTS_ESC_GAP_BEGIN);
	ck_assert_uint_eq(e->rec[2].to, 0x1000);
	ck_assert_uint_eq(vbts_record__escape_aux(&e->rec[2]), VBTS_GAP_NOSTEP);
	ck_assert_uint_eq(vbts_record__escape_kind(&e->rec[3]), VBTS_ESC_GAP_END);
	ck_assert_uint_eq(vbts_record__escape_kind(&e->rec[4]), VBTS_ESC_STOP);
	ck_assert_uint_eq(e->tv.stat_steps, 0);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_hlt)
{
	/* a hlt stepped on its own is still a halt (this host reports a step past it instead) */
	struct kvm_env *e = kvm_env__create(VBTS_CPL_ALL, 0x1032);

	e->tv.caps = host_caps(false);
	kvm_env__run(e, &step_tracer_ops, 0);
	kvm_env__records(e);
	ck_assert_uint_eq(e->nrec, 3); /* START, TASK_ARRIVE, STOP */
	ck_assert_uint_eq(e->tv.stat_steps, 1);
	kvm_env__destroy(e);
}
END_TEST

static Suite *kvm_step_suite(void)
{
	Suite *s = suite_create("step-kvm");
	TCase *tc = tcase_create("guest");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_kvm_trace, 0, 2);
	tcase_add_test(tc, test_kvm_to_next);
	tcase_add_test(tc, test_kvm_filter_user);
	tcase_add_test(tc, test_kvm_nostep);
	tcase_add_test(tc, test_kvm_hlt);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return kvm_env__main(kvm_step_suite(), NULL, NULL);
}
