/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests.h - the suites of check-attach.
 */
#ifndef VBTS_TESTS_UNIT_ATTACH_TESTS_H
#define VBTS_TESTS_UNIT_ATTACH_TESTS_H

#include <check.h>

Suite *vmm_fds_suite(void);
Suite *qmp_suite(void);
Suite *libvirt_suite(void);
Suite *attach_cli_suite(void);
Suite *agent_socket_suite(void);
Suite *tracer_mem_suite(void);
Suite *trace_base_suite(void);
Suite *seg_rotate_suite(void);
Suite *recorder_suite(void);
Suite *attach_crash_suite(void);

#endif /* VBTS_TESTS_UNIT_ATTACH_TESTS_H */
