/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symtest.S - a symbol table with a fixed layout for the symbolizer and golden tests
 * (assembled once as ELF64 and once as ELF32). Offsets are part of the golden files; real
 * instructions rather than .skip so that the assembler emits DWARF line information.
 */
	.text
	.globl	main
	.type	main, @function
main:					/* 0x00, sized 0x40 */
	.rept	0x40
	nop
	.endr
	.size	main, . - main

	.globl	parse
	.type	parse, @function
parse:					/* 0x40, sized 0x30 */
	.rept	0x30
	nop
	.endr
	.size	parse, . - parse

	.type	deref, @function	/* local */
deref:					/* 0x70, sized 0x10 */
	.rept	0x10
	nop
	.endr
	.size	deref, . - deref

	.rept	0x10			/* 0x80: padding no symbol covers */
	int3
	.endr

	.globl	isr_entry		/* 0x90: an assembly label, no type, no size */
isr_entry:
	.rept	0x20
	nop
	.endr
	.globl	isr_common		/* 0xb0: the next label ends isr_entry */
isr_common:
	.rept	0x10
	nop
	.endr
					/* 0xc0: end of .text */
	.data
	.globl	counter			/* data symbols are not branch targets */
	.type	counter, @object
counter:
	.quad	0
	.size	counter, 8
	/* A GNU build ID note: deadbeef01020304 */
	.section .note.gnu.build-id, "a", @note
	.balign	4
	.long	4, 8, 3
	.asciz	"GNU"
	.byte	0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04
	.section .note.GNU-stack, "", @progbits
