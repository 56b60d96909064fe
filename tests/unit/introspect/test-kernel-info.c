// SPDX-License-Identifier: GPL-2.0
/*
 * test-kernel-info.c - member offsets from the fake kernel's BTF (nested anonymous members at
 * non-zero offsets, modifiers, a bit field), symbols from System.map, __ksymtab and the image,
 * and every way the files can be wrong.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "introspect-tests.h"
#include "kernel-info.h"
#include "test-files.h"

static struct fake_kernel fk;
static char err[256];

static void teardown(void)
{
	fk_destroy(&fk);
}

static void check_layout(const struct kernel_layout *l)
{
	ck_assert_uint_eq(l->task_size, FK_TASK_SIZE);
	ck_assert_uint_eq(l->task_pid, FK_TASK_PID);
	ck_assert_uint_eq(l->task_tgid, FK_TASK_TGID);
	ck_assert_uint_eq(l->task_comm, FK_TASK_COMM);
	ck_assert_uint_eq(l->task_comm_len, 16);
	ck_assert_uint_eq(l->task_mm, FK_TASK_MM);
	ck_assert_uint_eq(l->task_active_mm, FK_TASK_ACTIVE_MM);
	ck_assert_uint_eq(l->task_tasks, FK_TASK_TASKS);
	ck_assert_uint_eq(l->task_group_leader, FK_TASK_GROUP_LEADER);
	ck_assert_uint_eq(l->task_exit_state, FK_TASK_EXIT_STATE);
	ck_assert_uint_eq(l->task_signal, FK_TASK_SIGNAL);
	ck_assert_uint_eq(l->mm_pgd, FK_MM_PGD);
	ck_assert_uint_eq(l->list_next, 0);
}

static uint64_t sym(const struct kernel_info *ki, enum kernel_sym s, enum kernel_sym_source src)
{
	uint64_t addr = 0;

	ck_assert_int_eq(kernel_info__symbol(ki, s, &addr), 0);
	ck_assert_int_eq(kernel_info__symbol_source(ki, s), src);
	return addr;
}

START_TEST(test_vmlinux_alone)
{
	struct kernel_info *ki;
	const struct kernel_layout *l;
	const uint8_t *id;
	uint64_t va, addr;
	size_t len;

	fk_create(&fk, NULL);
	ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	l = kernel_info__layout(ki);
	check_layout(l);
	ck_assert_uint_eq(l->task_thread_node, FK_TASK_THREAD_NODE);
	ck_assert_uint_eq(l->task_thread_group, KERNEL_LAYOUT_ABSENT);
	ck_assert_uint_eq(l->signal_thread_head, FK_SIGNAL_THREAD_HEAD);
	ck_assert_uint_eq(l->pcpu_current_task, FK_PCPU_CURRENT);

	ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_TASK, KERNEL_SYM_FROM_KSYMTAB), FK_INIT_TASK);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_PER_CPU_OFFSET, KERNEL_SYM_FROM_KSYMTAB),
			  FK_PER_CPU_OFFSET);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_CURRENT, KERNEL_SYM_FROM_KSYMTAB), FK_PCPU_HOT);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_PAGE_OFFSET_BASE, KERNEL_SYM_FROM_KSYMTAB),
			  FK_PAGE_OFFSET_BASE);
	/* not exported: from init_task's initializer */
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_MM, KERNEL_SYM_FROM_IMAGE), FK_INIT_MM);
	/* not exported: from the first LOCK CMPXCHG of panic(), past an unlocked one */
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_PANIC_CPU, KERNEL_SYM_FROM_CODE), FK_PANIC_CPU);
	ck_assert_int_eq(kernel_info__symbol(ki, KERNEL_SYM_ENTRY_SYSCALL_64, &addr), -ENOENT);
	ck_assert_int_eq(kernel_info__symbol_source(ki, KERNEL_SYM_ENTRY_SYSCALL_64),
			 KERNEL_SYM_FROM_NONE);

	/* the build-ID note, not the Xen note before it (it holds an address, relocated) */
	ck_assert_int_eq(kernel_info__identity(ki, &va, &id, &len), 0);
	ck_assert_uint_eq(va, FK_NOTES + 24);
	ck_assert_uint_eq(len, 36);
	ck_assert_int_eq(memcmp(id, fk.image + (FK_NOTES - FK_LINK_BASE) + 24, len), 0);
	kernel_info__close(ki);
}
END_TEST

/* panic_cpu stays unknown when panic()'s first LOCK CMPXCHG is not on a variable that is -1. */
START_TEST(test_panic_cpu_not_found)
{
	const struct fk_btf_opts zero = { .panic_cpu_zero = true }, late = { .panic_cpu_late = true };
	const struct fk_btf_opts *opts[] = { &zero, &late };
	struct kernel_info *ki;
	uint64_t addr;

	for (size_t i = 0; i < 2; i++) {
		fk_create(&fk, opts[i]);
		ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
		ck_assert_msg(ki, "%s", err);
		ck_assert_int_eq(kernel_info__symbol(ki, KERNEL_SYM_PANIC_CPU, &addr), -ENOENT);
		ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_TASK, KERNEL_SYM_FROM_KSYMTAB),
				  FK_INIT_TASK);
		kernel_info__close(ki);
		if (i == 0)
			fk_destroy(&fk);
	}
}
END_TEST

START_TEST(test_with_system_map)
{
	struct kernel_info *ki;

	fk_create(&fk, NULL);
	ki = kernel_info__open(fk.vmlinux, fk.sysmap, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_TASK, KERNEL_SYM_FROM_SYSTEM_MAP), FK_INIT_TASK);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_MM, KERNEL_SYM_FROM_SYSTEM_MAP), FK_INIT_MM);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_ENTRY_SYSCALL_64, KERNEL_SYM_FROM_SYSTEM_MAP),
			  FK_ENTRY_SYSCALL_64);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_CURRENT, KERNEL_SYM_FROM_SYSTEM_MAP), FK_PCPU_HOT);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_PANIC_CPU, KERNEL_SYM_FROM_SYSTEM_MAP), FK_PANIC_CPU);
	kernel_info__close(ki);
}
END_TEST

START_TEST(test_raw_btf)
{
	struct kernel_info *ki;
	const uint8_t *id;
	uint64_t va;
	size_t len;

	fk_create(&fk, NULL);
	ki = kernel_info__open(fk.btf_raw, fk.sysmap, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	check_layout(kernel_info__layout(ki));
	ck_assert_int_eq(kernel_info__identity(ki, &va, &id, &len), -ENOENT);
	kernel_info__close(ki);

	/* raw BTF has no symbols of its own */
	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.btf_raw, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "raw BTF needs a System.map"));
}
END_TEST

START_TEST(test_system_map_of_another_build)
{
	struct kernel_info *ki;

	fk_create(&fk, NULL);
	test__write_text(NULL, fk.sysmap, "ffffffff81010040 D init_task\n");
	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.vmlinux, fk.sysmap, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "another build"));

	/* Debian's placeholder is as good as none */
	test__write_text(NULL, fk.sysmap, "ffffffffffffffff B The real System.map is in the "
					  "linux-image-<version>-dbg package\n");
	ki = kernel_info__open(fk.vmlinux, fk.sysmap, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_INIT_TASK, KERNEL_SYM_FROM_KSYMTAB), FK_INIT_TASK);
	kernel_info__close(ki);

	ck_assert_ptr_null(kernel_info__open(fk.vmlinux, "/nonexistent/System.map", err,
					     sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

static const struct {
	struct fk_btf_opts o;
	const char *err;
} broken[] = {
	{ { .no_pid = true }, "no member pid" },
	{ { .pid_bitfield = true }, "not a bit field" },
	{ { .pid_pointer = true }, "task_struct.pid has an unexpected type" },
	{ { .comm_100 = true }, "task_struct.comm has an unexpected type" },
	{ { .self_nesting = true }, "within a sane nesting" },
};

START_TEST(test_broken_btf)
{
	fk_create(&fk, &broken[_i].o);
	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.vmlinux, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, broken[_i].err), "%s", err);
}
END_TEST

START_TEST(test_older_kernel)
{
	const struct fk_btf_opts o = { .no_pcpu_hot = true, .no_thread_node = true };
	const struct kernel_layout *l;
	struct kernel_info *ki;

	fk_create(&fk, &o);
	ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	l = kernel_info__layout(ki);
	check_layout(l);
	ck_assert_uint_eq(l->task_thread_group, FK_TASK_THREAD_NODE);
	ck_assert_uint_eq(l->task_thread_node, KERNEL_LAYOUT_ABSENT);
	ck_assert_uint_eq(l->signal_thread_head, KERNEL_LAYOUT_ABSENT);
	/* current_task, a per-CPU pointer of its own */
	ck_assert_uint_eq(l->pcpu_current_task, 0);
	ck_assert_uint_eq(sym(ki, KERNEL_SYM_CURRENT, KERNEL_SYM_FROM_KSYMTAB), FK_PCPU_HOT);
	kernel_info__close(ki);
}
END_TEST

START_TEST(test_bad_files)
{
	uint8_t junk[64];
	size_t size;
	void *btf;
	FILE *f;

	fk_create(&fk, NULL);
	/* BTF cut short */
	btf = fk_btf(NULL, &size);
	f = fopen(fk.btf_raw, "wb");
	fwrite(btf, 1, size / 2, f);
	fclose(f);
	free(btf);
	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.btf_raw, fk.sysmap, err, sizeof(err)));
	ck_assert_int_ne(errno, 0);
	ck_assert_ptr_nonnull(strstr(err, "BTF rejected"));

	/* an ELF file without .BTF */
	memset(junk, 0, sizeof(junk));
	{
		const char *const names[] = { ".text" };
		const uint32_t types[] = { SHT_PROGBITS };
		const uint64_t addrs[] = { FK_LINK_BASE };
		const void *const data[] = { junk };
		const size_t sizes[] = { sizeof(junk) };

		fk_write_elf(fk.vmlinux, names, types, addrs, data, sizes, 1);
	}
	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.vmlinux, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOEXEC);
	ck_assert_ptr_nonnull(strstr(err, "CONFIG_DEBUG_INFO_BTF"));

	errno = 0;
	ck_assert_ptr_null(kernel_info__open(fk.sysmap, NULL, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOEXEC);
}
END_TEST

Suite *kernel_info_suite(void)
{
	Suite *s = suite_create("kernel_info");
	TCase *tc = tcase_create("kernel_info");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_vmlinux_alone);
	tcase_add_test(tc, test_with_system_map);
	tcase_add_test(tc, test_panic_cpu_not_found);
	tcase_add_test(tc, test_raw_btf);
	tcase_add_test(tc, test_system_map_of_another_build);
	tcase_add_loop_test(tc, test_broken_btf, 0, sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, test_older_kernel);
	tcase_add_test(tc, test_bad_files);
	suite_add_tcase(s, tc);
	return s;
}
