// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - check-introspect: kernel files, BTF layout, symbols (kallsyms tables too) and
 * task-list walks of vmm/introspect/, and the process events of vmm/record/guest-tasks.c, on a
 * made-up kernel.
 */
#include "check-main.h"
#include "introspect-tests.h"

VBTS_CHECK_MAIN(kallsyms_suite, ksyms_suite, vmlinux_suite, kernel_info_suite, introspect_suite,
		guest_tasks_suite)
