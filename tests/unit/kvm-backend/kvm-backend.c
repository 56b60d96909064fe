// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-backend.c - check-kvm-backend: the kvm tracer backend on a KVM with kvm-patches/ loaded,
 * around the hand-assembled 64-bit ring-0 guest of check-step-kvm.
 *
 * The guest (identity-mapped 2 MiB page, flat GDT, a 64-bit IDT gate for #UD):
 *   0x1000  jmp 0x1004                 JMP
 *   0x1004  mov $3, %ecx               (another count in the watermark test)
 *   0x1009  loop 0x1009                LOOP, twice
 *   0x100b  call 0x1040                CALL; 0x1040 ret -> 0x1010  RET
 *   0x1010  mov %ss, %eax; mov %eax, %ss; jmp 0x1018   JMP covered by the mov-ss step:
 *                                      recorded all the same (the kernel decodes the
 *                                      instruction a MOV SS step also covers)
 *   0x1018  ud2                        EXCEPTION 6 -> 0x1100 (delivered and stepped in the
 *                                      kernel: no gap)
 *   0x101a  mov $0x80, %dx; out %al, %dx                 an I/O exit
 *   0x101f  build an iretq frame; iretq -> 0x1032       IRET
 *   0x1032  hlt
 *   0x1100  #UD handler: nop; addq $2, (%rsp); iretq
 * Exit status: 0 all passed, 1 a failure, 77 no /dev/kvm or no KVM_CAP_X86_BTS (stock KVM; the
 * kvm-patches suite runs this inside the harness with the patched modules).
 */
#include <string.h>

#include <check.h>
#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "kvm-backend/kvm-backend.h"
#include "kvm-env.h"
#include "kvm-guest.h"
#include "kvm.h"
#include "tracer.h"

static bool in_handler(uint64_t a)
{
	return a >= KVM_GUEST_HANDLER_LO && a < KVM_GUEST_HANDLER_HI;
}

/* START, the vCPU's task, times that do not go back, STOP; no gap and no loss. */
static void check_frame(struct kvm_env *e, uint64_t cpl_bits)
{
	const struct vbts_record *r = e->rec;
	uint64_t last = 0, t;

	ck_assert_uint_ge(e->nrec, 3);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[0]), VBTS_ESC_START);
	ck_assert_uint_eq(vbts_record__escape_aux(&r[0]), cpl_bits);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[1]), VBTS_ESC_TASK_ARRIVE);
	ck_assert_uint_eq(r[1].to, 0x10000);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[e->nrec - 1]), VBTS_ESC_STOP);
	for (unsigned int i = 0; i < e->nrec; i++) {
		if (!vbts_record__is_escape(&r[i]))
			continue;
		switch (vbts_record__escape_kind(&r[i])) {
		case VBTS_ESC_START:
		case VBTS_ESC_STOP:
			t = r[i].to;
			break;
		case VBTS_ESC_TASK_ARRIVE:
			t = vbts_record__escape_aux(&r[i]);
			break;
		default:
			ck_abort_msg("escape kind %u at %u", vbts_record__escape_kind(&r[i]), i);
			continue;
		}
		/* ns since the trace started, converted from the guest TSC: a few seconds */
		ck_assert_uint_ge(t, last);
		ck_assert_uint_lt(t, 60ULL * 1000000000ULL);
		last = t;
	}
	ck_assert_uint_eq(e->tv.stat_gaps, 0);
	ck_assert_uint_eq(e->tv.stat_records, e->nrec);
	ck_assert_uint_eq(e->io_exits, 1);
}

/* The branches outside the #UD handler, in order, with the loop taken @loops times. */
static void check_branches(struct kvm_env *e, unsigned int loops)
{
	const unsigned int nexp = kvm_guest_nr_branches;
	const struct vbts_record *r = e->rec;
	unsigned int nb = 0, want = nexp - 2 + loops, handler = 0;

	for (unsigned int i = 0; i < e->nrec; i++) {
		const struct kvm_guest_branch *x;

		if (vbts_record__is_escape(&r[i]))
			continue;
		ck_assert(r[i].flags & VBTS_REC_CPL_VALID);
		ck_assert_uint_eq((r[i].flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT, 0);
		if (in_handler(r[i].from)) {
			handler++;
			continue;
		}
		ck_assert_msg(nb < want, "extra branch %#llx -> %#llx",
			      (unsigned long long)r[i].from, (unsigned long long)r[i].to);
		/* kvm_guest_branches[1] stands for every loop branch */
		x = &kvm_guest_branches[nb < 1 ? 0 : nb < 1 + loops ? 1 : nb - loops + 2];
		ck_assert_msg(r[i].from == x->from && r[i].to == x->to && kvm_env__kind(&r[i]) == x->kind,
			      "branch %u: %#llx -> %#llx kind %u, want %#llx -> %#llx kind %u", nb,
			      (unsigned long long)r[i].from, (unsigned long long)r[i].to,
			      kvm_env__kind(&r[i]), (unsigned long long)x->from,
			      (unsigned long long)x->to, x->kind);
		if (x->kind == VBTS_BR_EXCEPTION) {
			ck_assert(r[i].flags & VBTS_REC_VECTOR_VALID);
			ck_assert_uint_eq((r[i].flags & VBTS_REC_VECTOR_MASK) >>
						  VBTS_REC_VECTOR_SHIFT, 6);
		}
		nb++;
	}
	ck_assert_uint_eq(nb, want);
	/* the handler is stepped in the kernel: its iretq back to 0x101a is recorded */
	ck_assert_uint_eq(handler, 1);
}

START_TEST(test_kvm_trace)
{
	struct kvm_env *e = kvm_env__create(VBTS_CPL_ALL, 0x1000);

	e->tv.ring_records = 65536;
	kvm_env__run(e, &kvm_tracer_ops, VBTS_KVM_EXIT_X86_BTS);
	kvm_env__records(e);
	check_frame(e, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	check_branches(e, 2);
	ck_assert_uint_eq(e->tracer_exits, 0);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_watermark)
{
	/* 300 loop iterations through a 64-record kernel ring: watermark exits, nothing lost */
	struct kvm_env *e;
	uint32_t count = 300;

	e = kvm_env__create(VBTS_CPL_ALL, 0x1000);
	e->tv.ring_records = 64;
	kvm_guest__put(e->mem, KVM_GUEST_LOOP_COUNT_GPA, &count, sizeof(count));
	kvm_env__run(e, &kvm_tracer_ops, VBTS_KVM_EXIT_X86_BTS);
	kvm_env__records(e);
	check_frame(e, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	check_branches(e, count - 1);
	ck_assert_uint_ge(e->tracer_exits, 300 / 32 - 1);
	kvm_env__destroy(e);
}
END_TEST

START_TEST(test_kvm_filter_user)
{
	struct kvm_env *e = kvm_env__create(VBTS_CPL_USER, 0x1000);

	e->tv.ring_records = 65536;
	kvm_env__run(e, &kvm_tracer_ops, VBTS_KVM_EXIT_X86_BTS);
	kvm_env__records(e);
	check_frame(e, VBTS_START_CPL_USER);
	for (unsigned int i = 0; i < e->nrec; i++)
		ck_assert_msg(vbts_record__is_escape(&e->rec[i]), "a ring-0 branch was recorded");
	kvm_env__destroy(e);
}
END_TEST

static Suite *kvm_backend_suite(void)
{
	Suite *s = suite_create("kvm-backend");
	TCase *tc = tcase_create("guest");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_kvm_trace);
	tcase_add_test(tc, test_kvm_watermark);
	tcase_add_test(tc, test_kvm_filter_user);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return kvm_env__main(kvm_backend_suite(), kvm_bts__usable,
			     "this KVM has no KVM_CAP_X86_BTS (load the modules of kvm-patches/)");
}
