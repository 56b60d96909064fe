/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gdbstub-test.h - the suites of check-gdbstub, one per test file.
 */
#ifndef VBTS_TESTS_GDBSTUB_TEST_H
#define VBTS_TESTS_GDBSTUB_TEST_H

#include <check.h>

Suite *gdbstub_suite(void);     /* test-packet.c */
Suite *bts_blocks_suite(void);  /* test-blocks.c */
Suite *trace_target_suite(void); /* test-target.c */
Suite *live_target_suite(void); /* test-live.c */

#endif /* VBTS_TESTS_GDBSTUB_TEST_H */
