/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oracle-tests.h - the Check suites of the oracle's unit-test binary.
 */
#ifndef VBTS_ORACLE_TESTS_H
#define VBTS_ORACLE_TESTS_H

#include <check.h>

Suite *qemu_log_suite(void);
Suite *compare_suite(void);
Suite *labels_suite(void);
Suite *images_suite(void);
Suite *gen_suite(void);

#endif /* VBTS_ORACLE_TESTS_H */
