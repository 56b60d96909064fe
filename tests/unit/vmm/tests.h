/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests.h - the suites of check-vmm.
 */
#ifndef VBTS_TESTS_UNIT_VMM_TESTS_H
#define VBTS_TESTS_UNIT_VMM_TESTS_H

#include <check.h>

Suite *dispatch_suite(void);
Suite *multiboot_suite(void);
Suite *devices_suite(void);
Suite *trace_suite(void);
Suite *cli_suite(void);
Suite *linux_suite(void);
Suite *guest_bts_suite(void);
Suite *agent_elf_suite(void);
Suite *control_suite(void);
Suite *control_json_suite(void);

#endif /* VBTS_TESTS_UNIT_VMM_TESTS_H */
