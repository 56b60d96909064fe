/* SPDX-License-Identifier: GPL-2.0 */
/*
 * msr.S - probe guest: WRMSR IA32_DEBUGCTL (filtered to the VMM by the probe), then
 * PROBE_PORT_DONE. Without the filter the write would #GP (reported on PROBE_PORT_FAULT).
 */
#include "common.S"
#include "../core/x86.h"

probe_main:
	mov	$X86_MSR_IA32_DEBUGCTL, %ecx
	xor	%eax, %eax
	xor	%edx, %edx
	wrmsr
	mov	$PROBE_PORT_DONE, %dx
	mov	$1, %al
	outb	%al, %dx
	hlt
	ret
