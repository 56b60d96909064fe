// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - check-attach: vbts attach's parsers and option errors, its crash report, without KVM.
 */
#include "check-main.h"
#include "tests.h"

VBTS_CHECK_MAIN(vmm_fds_suite, qmp_suite, libvirt_suite, attach_cli_suite, agent_socket_suite,
		tracer_mem_suite, trace_base_suite, seg_rotate_suite,
		recorder_suite, attach_crash_suite)
