// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-guest-bts-init.c - check-guest-bts-init: an INIT of a vCPU clears the IA32_DEBUGCTL that
 * guest-visible BTS emulates (`vbts run --guest-bts`, step backend), as RESET and INIT do on
 * the CPU, and keeps IA32_DS_AREA. The INIT is KVM's own (an INIT latched with
 * KVM_SET_VCPU_EVENTS, taken by KVM_GET_MP_STATE: kvm_vcpu_reset() in the kernel, unseen by
 * userspace); the guest's MSR accesses are the exits KVM gives the VMM for them.
 * Exits 77 when /dev/kvm cannot be opened or this KVM cannot tell an INIT to userspace (it does
 * not keep MSR_SMI_COUNT).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check-main.h"
#include "guest-bts.h"
#include "kvm.h"
#include "vcpu-int.h"
#include "vm.h"
#include "x86.h"

struct init_env {
	struct vm vm;
	struct vcpu *v;
	struct kvm_run run;
};

static void env_create(struct init_env *e)
{
	memset(e, 0, sizeof(*e));
	vm__init(&e->vm);
	ck_assert_int_eq(kvm__open(&e->vm.kvm), 0);
	ck_assert_int_ge(kvm__ioctl(e->vm.kvm.vm_fd, KVM_CREATE_IRQCHIP, 0), 0);
	ck_assert_int_eq(guest_bts__setup_vm(&e->vm.kvm), 0);
	e->vm.guest_bts = true;
	e->v = vcpu__create(&e->vm, 0);
	ck_assert_ptr_nonnull(e->v);
}

static void env_destroy(struct init_env *e)
{
	vcpu__destroy(e->v);
	kvm__close(&e->vm.kvm);
	vm__fini(&e->vm);
}

/* The guest's WRMSR or RDMSR of a filtered MSR, as KVM reports it; returns msr.error. */
static unsigned int guest_msr(struct init_env *e, bool write, uint32_t index, uint64_t *value)
{
	memset(&e->run, 0, sizeof(e->run));
	e->run.exit_reason = write ? KVM_EXIT_X86_WRMSR : KVM_EXIT_X86_RDMSR;
	e->run.msr.reason = KVM_MSR_EXIT_REASON_FILTER;
	e->run.msr.index = index;
	e->run.msr.data = write ? *value : 0;
	ck_assert_int_eq(vcpu__dispatch(e->v, &e->run), VCPU_CONTINUE);
	if (!write)
		*value = e->run.msr.data;
	return e->run.msr.error;
}

/* INIT, as the LAPIC delivers it: latched, then taken by KVM (kvm_apic_accept_events()). */
static void init_vcpu(struct init_env *e)
{
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;

	ck_assert_int_ge(kvm__ioctl(e->v->fd, KVM_GET_VCPU_EVENTS, &ev), 0);
	ev.flags = KVM_VCPUEVENT_VALID_SMM;
	ev.smi.latched_init = 1;
	ck_assert_int_ge(kvm__ioctl(e->v->fd, KVM_SET_VCPU_EVENTS, &ev), 0);
	ck_assert_int_ge(kvm__ioctl(e->v->fd, KVM_GET_MP_STATE, &mp), 0);
}

START_TEST(test_init_clears_debugctl)
{
	const uint64_t on = X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS | X86_DEBUGCTL_BTINT;
	struct init_env e;
	uint64_t v;

	env_create(&e);
	ck_assert(e.v->gbts.reset_mark);
	v = on;
	ck_assert_uint_eq(guest_msr(&e, true, X86_MSR_IA32_DEBUGCTL, &v), 0);
	v = 0x100000;
	ck_assert_uint_eq(guest_msr(&e, true, X86_MSR_IA32_DS_AREA, &v), 0);
	/* No INIT yet: the guest's values stay. */
	ck_assert_uint_eq(guest_msr(&e, false, X86_MSR_IA32_DEBUGCTL, &v), 0);
	ck_assert_uint_eq(v, on);
	ck_assert(guest_bts__enabled(&e.v->gbts));

	init_vcpu(&e);
	ck_assert_uint_eq(guest_msr(&e, false, X86_MSR_IA32_DEBUGCTL, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert(!guest_bts__enabled(&e.v->gbts));
	ck_assert_uint_eq(guest_msr(&e, false, X86_MSR_IA32_DS_AREA, &v), 0);
	ck_assert_uint_eq(v, 0x100000);

	/* The mark is set again: the next INIT is told too, a write in between is kept. */
	v = on;
	ck_assert_uint_eq(guest_msr(&e, true, X86_MSR_IA32_DEBUGCTL, &v), 0);
	ck_assert_int_eq(guest_bts__check_reset(&e.v->gbts, e.v->fd), 0);
	ck_assert(guest_bts__enabled(&e.v->gbts));
	init_vcpu(&e);
	ck_assert_int_eq(guest_bts__check_reset(&e.v->gbts, e.v->fd), 1);
	ck_assert(!guest_bts__enabled(&e.v->gbts));
	env_destroy(&e);
}
END_TEST

static Suite *init_suite(void)
{
	Suite *s = suite_create("guest-bts-init");
	TCase *tc = tcase_create("init");

	tcase_add_test(tc, test_init_clears_debugctl);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct vm vm;
	struct vcpu *v;
	SRunner *sr;
	int failed, ret;

	vm__init(&vm);
	if (kvm__open(&vm.kvm) < 0) {
		printf("skip: /dev/kvm is not available\n");
		return 77;
	}
	v = vcpu__create(&vm, 0);
	ret = v ? guest_bts__mark(v->fd) : -errno;
	vcpu__destroy(v);
	kvm__close(&vm.kvm);
	vm__fini(&vm);
	if (ret == -ENOTSUP) {
		printf("skip: this KVM does not keep MSR_SMI_COUNT: it cannot tell an INIT\n");
		return 77;
	}
	if (ret < 0) {
		printf("cannot create a vCPU or set MSR_SMI_COUNT: %s\n", strerror(-ret));
		return 1;
	}
	sr = srunner_create(init_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
