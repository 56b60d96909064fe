/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linux-prog.S - a program of a Linux guest for the symbolizer tests: no libc, linked once as
 * a static executable at 0x10000000 (-Wl,-Ttext-segment=0x10000000) and once as a PIE, each
 * with a build ID of its own. .text starts a page after the link base (0x10001000, 0x1000);
 * offsets and source lines are part of the golden files.
 */
	.text
	.balign	4096
	.globl	_start
	.type	_start, @function
_start:					/* 0x00, sized 0x20 */
	call	work
	mov	$60, %eax		/* exit(0) */
	xor	%edi, %edi
	syscall
	.skip	0x20 - (. - _start), 0x90
	.size	_start, . - _start

	.globl	work
	.type	work, @function
work:					/* 0x20, sized 0x20 */
	call	leaf
	mov	$39, %eax		/* getpid() */
	syscall
	ret
	.skip	0x20 - (. - work), 0x90
	.size	work, . - work

	.type	leaf, @function		/* local */
leaf:					/* 0x40, sized 0x10 */
	nop
	ret
	.skip	0x10 - (. - leaf), 0x90
	.size	leaf, . - leaf
	.section .note.GNU-stack, "", @progbits
