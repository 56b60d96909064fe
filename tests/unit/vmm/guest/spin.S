/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spin.S - a multiboot v1 guest that never exits: it writes 'x' to the 8250's transmit
 * register forever (no polling), so only a timeout or a signal ends its run, and a console
 * that nobody reads fills up.
 */
#define UART 0x3f8

	.section .multiboot, "a"
	.balign	4
	.long	0x1badb002
	.long	0
	.long	-0x1badb002

	.text
	.code32
	.global	_start
_start:
	movw	$UART, %dx
	movb	$'x', %al
1:	outb	%al, %dx
	jmp	1b
