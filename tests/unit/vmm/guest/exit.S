/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exit.S - a multiboot v1 guest that exits through the debug-exit port with 0x21 (status 67)
 * as its first instruction: the run ends while the VMM may still be starting vCPUs.
 */
#define DEBUG_EXIT 0xf4

	.section .multiboot, "a"
	.balign	4
	.long	0x1badb002
	.long	0
	.long	-0x1badb002

	.text
	.code32
	.global	_start
_start:
	movb	$0x21, %al
	outb	%al, $DEBUG_EXIT
	hlt
