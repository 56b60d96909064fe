/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symlong.S - a function whose name (8,192 bytes: "long_symbol" and 2^10 times "_abcdefg")
 * is longer than what one reservation of the exporters' output buffer holds.
 */
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
#define N0 _abcdefg
#define N1 XCAT(N0, N0)
#define N2 XCAT(N1, N1)
#define N3 XCAT(N2, N2)
#define N4 XCAT(N3, N3)
#define N5 XCAT(N4, N4)
#define N6 XCAT(N5, N5)
#define N7 XCAT(N6, N6)
#define N8 XCAT(N7, N7)
#define N9 XCAT(N8, N8)
#define N10 XCAT(N9, N9)
#define NAME XCAT(long_symbol, N10)

	.text
	.globl	NAME
	.type	NAME, @function
NAME:					/* 0x00, sized 0x10 */
	.rept	0x10
	nop
	.endr
	.size	NAME, . - NAME
	.section .note.GNU-stack, "", @progbits
