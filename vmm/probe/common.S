/* SPDX-License-Identifier: GPL-2.0 */
/*
 * common.S - the start of every probe guest (included first): a GDT with ring-0 and ring-3
 * flat segments and a TSS, an IDT whose 32 exception handlers report their vector on
 * PROBE_PORT_FAULT and halt, and the entry that loads all of it and calls probe_main
 * (EDI and ESI are preserved for probe_main).
 * Entered in flat 32-bit protected mode at PROBE_LOAD_GPA, paging off, interrupts off.
 */
#include "ports.h"

	.code32
	.text
	.global start
start:
	jmp	entry

	.balign 16
gdt:					/* at PROBE_GDT_OFFSET */
	.quad	0
	.quad	0
	.quad	0x00cf9a000000ffff	/* 0x10: ring-0 code */
	.quad	0x00cf92000000ffff	/* 0x18: ring-0 data */
	.quad	0x00cffa000000ffff	/* 0x20: ring-3 code */
	.quad	0x00cff2000000ffff	/* 0x28: ring-3 data */
tss_desc:
	.quad	0			/* 0x30: TSS, filled in at entry */
gdt_end:

gdtr:
	.word	gdt_end - gdt - 1
	.long	gdt

	.balign 8
idtr:
	.word	32 * 8 - 1
	.long	idt

	.balign 16
tss:
	.long	0			/* link */
	.long	0x80000			/* esp0 */
	.long	0x18			/* ss0 */
	.fill	23, 4, 0
	.word	0, 104			/* trap, I/O map base beyond the limit: no bitmap */
tss_end:

	.balign 8
idt:
	.fill	32, 8, 0

/* One stub per vector: report it, halt. */
	.balign 16
fault_stubs:
	.irp	v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.balign 8
	mov	$\v, %al
	jmp	fault_report
	.endr

fault_report:
	mov	$PROBE_PORT_FAULT, %dx
	outb	%al, %dx
1:	hlt
	jmp	1b

entry:
	lgdt	gdtr
	ljmp	$0x10, $1f
1:	mov	$0x18, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	%ax, %fs
	mov	%ax, %gs
	mov	$0x80000, %esp

	/* IDT: 32-bit interrupt gates, DPL 0, to the stubs (8 bytes apart). */
	mov	$idt, %ebx
	mov	$fault_stubs, %edx
	mov	$32, %ecx
2:	mov	%edx, %eax
	and	$0xffff, %eax
	or	$0x00100000, %eax	/* selector 0x10 */
	mov	%eax, (%ebx)
	mov	%edx, %eax
	and	$0xffff0000, %eax
	or	$0x8e00, %eax		/* present, DPL 0, 32-bit interrupt gate */
	mov	%eax, 4(%ebx)
	add	$8, %ebx
	add	$8, %edx
	dec	%ecx
	jnz	2b
	lidt	idtr

	/* TSS descriptor: base tss, limit 103, available 32-bit TSS. */
	mov	$tss, %eax
	mov	%eax, %edx
	shl	$16, %eax
	or	$(tss_end - tss - 1), %eax
	mov	%eax, tss_desc
	mov	%edx, %eax
	shr	$16, %eax
	and	$0xff, %eax
	mov	%edx, %ecx
	and	$0xff000000, %ecx
	or	%ecx, %eax
	or	$0x8900, %eax
	mov	%eax, tss_desc + 4
	mov	$0x30, %ax
	ltr	%ax

	call	probe_main
3:	hlt
	jmp	3b
