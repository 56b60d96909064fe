/* SPDX-License-Identifier: GPL-2.0 */
/*
 * introspect-tests.h - the suites of check-introspect.
 */
#ifndef VBTS_TESTS_UNIT_INTROSPECT_TESTS_H
#define VBTS_TESTS_UNIT_INTROSPECT_TESTS_H

#include <check.h>

Suite *kallsyms_suite(void);
Suite *ksyms_suite(void);
Suite *vmlinux_suite(void);
Suite *kernel_info_suite(void);
Suite *introspect_suite(void);
Suite *guest_tasks_suite(void);

#endif /* VBTS_TESTS_UNIT_INTROSPECT_TESTS_H */
