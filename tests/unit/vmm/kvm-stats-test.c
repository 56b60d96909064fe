// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-stats-test.c - check-kvm-stats: kvm_stat__open() and kvm_stat__read() find a vCPU's
 * statistics by name in the binary stats file of this host's KVM and read their values at the
 * right offsets: after a guest ran one HLT, halt_exits is 1 and exits at least 1 (both 0
 * before); a name KVM does not have is -ENOENT; a closed statistic reads -EBADF.
 * Exits 77 when /dev/kvm cannot be opened or this KVM has no KVM_GET_STATS_FD.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "kvm-stats.h"

static int sys_fd = -1;

START_TEST(test_stats_by_name)
{
	struct kvm_userspace_memory_region slot = { .memory_size = 4096 };
	struct kvm_stat exits, halts, none;
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rflags = 2 };
	struct kvm_run *run;
	uint64_t n_exits, n_halts;
	int vm, vcpu, run_size;
	uint8_t *mem;

	vm = ioctl(sys_fd, KVM_CREATE_VM, 0);
	ck_assert_int_ge(vm, 0);
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(mem, MAP_FAILED);
	mem[0] = 0xf4; /* hlt, in real mode at 0 */
	slot.userspace_addr = (uint64_t)(uintptr_t)mem;
	ck_assert_int_eq(ioctl(vm, KVM_SET_USER_MEMORY_REGION, &slot), 0);
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	ck_assert_int_ge(vcpu, 0);
	run_size = ioctl(sys_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	ck_assert_int_gt(run_size, 0);
	run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	ck_assert_ptr_ne(run, MAP_FAILED);
	ck_assert_int_eq(ioctl(vcpu, KVM_GET_SREGS, &sregs), 0);
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	ck_assert_int_eq(ioctl(vcpu, KVM_SET_SREGS, &sregs), 0);
	ck_assert_int_eq(ioctl(vcpu, KVM_SET_REGS, &regs), 0);

	ck_assert_int_eq(kvm_stat__open(vcpu, "exits", &exits), 0);
	ck_assert_int_eq(kvm_stat__open(vcpu, "halt_exits", &halts), 0);
	ck_assert_int_eq(kvm_stat__open(vcpu, "no_such_statistic", &none), -ENOENT);
	ck_assert_int_eq(none.fd, -1);
	ck_assert_int_eq(kvm_stat__read(&none, &n_exits), -EBADF);
	ck_assert_int_eq(kvm_stat__read(&halts, &n_halts), 0);
	ck_assert_uint_eq(n_halts, 0);

	ck_assert_int_eq(ioctl(vcpu, KVM_RUN, 0), 0);
	ck_assert_uint_eq(run->exit_reason, KVM_EXIT_HLT);
	ck_assert_int_eq(kvm_stat__read(&exits, &n_exits), 0);
	ck_assert_int_eq(kvm_stat__read(&halts, &n_halts), 0);
	ck_assert_uint_eq(n_halts, 1);
	ck_assert_uint_ge(n_exits, 1);

	kvm_stat__close(&exits);
	kvm_stat__close(&exits); /* twice: nothing */
	ck_assert_int_eq(kvm_stat__read(&exits, &n_exits), -EBADF);
	kvm_stat__close(&halts);
	munmap(run, (size_t)run_size);
	close(vcpu);
	close(vm);
	munmap(mem, 4096);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kvm-stats");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	sys_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (sys_fd < 0) {
		printf("skip: /dev/kvm is not available\n");
		return 77;
	}
	if (ioctl(sys_fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD) <= 0) {
		printf("skip: this KVM has no KVM_GET_STATS_FD\n");
		return 77;
	}
	tcase_add_test(tc, test_stats_by_name);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	close(sys_fd);
	return failed ? 1 : 0;
}
