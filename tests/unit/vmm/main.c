// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - check-vmm: unit tests of the VMM core (no KVM needed).
 */
#include "check-main.h"
#include "tests.h"

VBTS_CHECK_MAIN(dispatch_suite, multiboot_suite, devices_suite, trace_suite, cli_suite,
		linux_suite, guest_bts_suite, agent_elf_suite, control_suite,
		control_json_suite)
