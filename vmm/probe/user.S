/* SPDX-License-Identifier: GPL-2.0 */
/*
 * user.S - probe guest for ring 3 as real guests run it: long mode with 4-level paging
 * (identity, user-accessible 2 MiB pages), then into ring 3 by IRETQ (EDI = PROBE_ENTER_IRETQ)
 * or SYSRETQ (EDI = PROBE_ENTER_SYSRETQ), a few instructions there, then PROBE_PORT_USER.
 * The address of the breakpoint site is reported on PROBE_PORT_INFO before entering ring 3.
 * Any exception (a #GP entering ring 3 on a KVM that cannot do it, a #DB that leaked into the
 * guest) is reported on PROBE_PORT_FAULT with its vector, then the guest halts.
 * Entered like every probe guest: flat 32-bit protected mode at PROBE_LOAD_GPA, paging off.
 */
#include "../core/x86.h"
#include "ports.h"

#define PML4 0x20000
#define PDPT 0x21000
#define PD 0x22000
#define KERNEL_STACK 0x80000
#define USER_STACK 0x70000
#define USER_SS 0x23	/* 0x20 | 3: SYSRET's STAR[63:48] + 8 */
#define USER_CS 0x2b	/* 0x28 | 3: SYSRET's STAR[63:48] + 16 */

	.code32
	.text
	.global start
start:
	jmp	entry32

	.balign 16
gdt:					/* at PROBE_GDT_OFFSET */
	.quad	0
	.quad	0x00af9a000000ffff	/* 0x08: ring-0 code, 64-bit */
	.quad	0x00cf9a000000ffff	/* 0x10: ring-0 code, 32-bit (the boot CS) */
	.quad	0x00cf92000000ffff	/* 0x18: ring-0 data (the boot DS) */
	.quad	0x00cff2000000ffff	/* 0x20: ring-3 data */
	.quad	0x00affa000000ffff	/* 0x28: ring-3 code, 64-bit */
tss_desc:
	.quad	0, 0			/* 0x30: 64-bit TSS, filled in below */
gdt_end:

gdtr:
	.word	gdt_end - gdt - 1
	.quad	gdt

	.balign 8
idtr:
	.word	32 * 16 - 1
	.quad	idt

	.balign 16
tss:
	.long	0
	.quad	KERNEL_STACK		/* rsp0 */
	.fill	22, 4, 0
	.word	0, 104			/* I/O map base beyond the limit: no bitmap */
tss_end:

	.balign 16
idt:
	.fill	64, 8, 0

entry32:
	lgdt	gdtr
	ljmp	$0x10, $1f
1:	mov	$0x18, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	$KERNEL_STACK, %esp

	/* Identity map of the first 1 GiB with user-accessible 2 MiB pages. */
	mov	$PML4, %ebx
	xor	%eax, %eax
	mov	$(3 * 4096 / 4), %ecx
2:	mov	%eax, (%ebx)
	add	$4, %ebx
	dec	%ecx
	jnz	2b
	movl	$(PDPT | 7), PML4
	movl	$(PD | 7), PDPT
	mov	$PD, %ebx
	mov	$0x87, %eax		/* present, writable, user, 2 MiB */
	mov	$512, %ecx
3:	mov	%eax, (%ebx)
	add	$0x200000, %eax
	add	$8, %ebx
	dec	%ecx
	jnz	3b

	mov	%cr4, %eax
	or	$0x20, %eax		/* PAE */
	mov	%eax, %cr4
	mov	$PML4, %eax
	mov	%eax, %cr3
	mov	$X86_MSR_EFER, %ecx
	rdmsr
	or	$0x101, %eax		/* LME, SCE */
	wrmsr
	mov	%cr0, %eax
	or	$0x80000000, %eax	/* PG */
	mov	%eax, %cr0
	ljmp	$0x08, $long_entry

	.code64
long_entry:
	mov	$0x18, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	$KERNEL_STACK, %rsp

	/* IDT: 64-bit interrupt gates, DPL 0, to the stubs (16 bytes apart). */
	lea	idt(%rip), %rbx
	lea	fault_stubs(%rip), %rdx
	mov	$32, %ecx
4:	mov	%edx, %eax
	and	$0xffff, %eax
	or	$0x00080000, %eax	/* selector 0x08 */
	mov	%eax, (%rbx)
	mov	%edx, %eax
	and	$0xffff0000, %eax
	or	$0x8e00, %eax		/* present, DPL 0, interrupt gate */
	mov	%eax, 4(%rbx)
	movq	$0, 8(%rbx)
	add	$16, %rbx
	add	$16, %rdx
	dec	%ecx
	jnz	4b
	lidt	idtr(%rip)

	/* TSS descriptor: base tss (below 4 GiB), limit 103, available 64-bit TSS. */
	lea	tss(%rip), %rdx
	mov	%edx, %eax
	shl	$16, %eax
	or	$(tss_end - tss - 1), %eax
	mov	%eax, tss_desc(%rip)
	mov	%edx, %eax
	shr	$16, %eax
	and	$0xff, %eax
	mov	%edx, %ecx
	and	$0xff000000, %ecx
	or	%ecx, %eax
	or	$0x8900, %eax
	mov	%eax, tss_desc + 4(%rip)
	mov	$0x30, %ax
	ltr	%ax

	mov	$PROBE_PORT_INFO, %dx
	lea	user_bp(%rip), %rax
	outl	%eax, %dx

	/* IOPL 3 so that ring 3 may use the report port. */
	pushq	$0x3002
	popfq

	cmp	$PROBE_ENTER_SYSRETQ, %edi
	je	by_sysretq

	pushq	$USER_SS
	pushq	$USER_STACK
	pushq	$0x3002
	pushq	$USER_CS
	lea	user_code(%rip), %rax
	pushq	%rax
	iretq

by_sysretq:
	mov	$X86_MSR_STAR, %ecx
	xor	%eax, %eax
	mov	$0x00180008, %edx	/* SYSRET base 0x18, SYSCALL base 0x08 */
	wrmsr
	lea	user_code(%rip), %rcx
	mov	$0x3002, %r11
	mov	$USER_STACK, %rsp
	sysretq

user_code:
	nop
user_bp:
	nop
	inc	%eax
	jmp	5f
	ud2
5:	mov	$PROBE_PORT_USER, %dx
	mov	$3, %al
	outb	%al, %dx
6:	jmp	6b

/* One stub per vector: report it, halt. */
	.balign 16
fault_stubs:
	.irp	v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.balign 16
	mov	$\v, %al
	jmp	fault_report
	.endr

fault_report:
	mov	$PROBE_PORT_FAULT, %dx
	outb	%al, %dx
7:	hlt
	jmp	7b
