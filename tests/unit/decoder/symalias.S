/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symalias.S - symbols that share an address, for the symbolizer's choice among them: at 0 a
 * sized function and a label (the label reaches further), at 0x10 two labels.
 */
	.text
	.globl	sized
	.type	sized, @function
	.globl	label_at_0
sized:					/* 0x00, sized 0x4 */
label_at_0:				/* 0x00, up to 0x10 */
	.rept	4
	nop
	.endr
	.size	sized, . - sized
	.rept	0xc
	nop
	.endr
	.globl	b_label
	.globl	a_label
a_label:				/* 0x10: both up to the end of .text */
b_label:
	.rept	0x10
	nop
	.endr
	.section .note.GNU-stack, "", @progbits
