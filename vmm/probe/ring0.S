/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring0.S - probe guest: a few ring-0 instructions with a taken jump, ESI = PROBE_MAGIC_ESI,
 * then PROBE_PORT_DONE. Single-stepped for `cpl0 single-step`, run plain for `sync regs`.
 */
#include "common.S"

probe_main:
	mov	$PROBE_MAGIC_ESI, %esi
	xor	%eax, %eax
	inc	%eax
	add	%eax, %eax
	jmp	1f
	ud2
1:	mov	$PROBE_PORT_DONE, %dx
	mov	$1, %al
	outb	%al, %dx
	hlt
	ret
