// SPDX-License-Identifier: GPL-2.0
/*
 * start.c - multiboot v1 entry of the test guests: own GDT, identity map, long mode, C.
 *
 * The image is an ELF (the a.out kludge bit is clear), so QEMU's -kernel and the vbts loader
 * both load it by its program headers and enter _start in 32-bit protected mode with
 * EAX = 0x2BADB002 and EBX = the multiboot information.
 *
 * The boot page tables are static data: the first GiB identity-mapped with 2 MiB pages, user
 * accessible (ring 3 code of the branches guest runs from the image itself).
 */
#include "guest.h"

__asm__(
	".section .multiboot, \"a\"\n"
	".balign 4\n"
	"multiboot_header:\n"
	"	.long 0x1badb002\n"                    /* magic */
	"	.long 0x00000003\n"                    /* page-align modules, memory info */
	"	.long -(0x1badb002 + 0x00000003)\n"    /* checksum */

	".data\n"
	".balign 16\n"
	".globl gdt\n"
	"gdt:\n"
	"	.quad 0\n"
	"	.quad 0x00af9a000000ffff\n"            /* 0x08 kernel code, 64-bit */
	"	.quad 0x00cf92000000ffff\n"            /* 0x10 kernel data */
	"	.quad 0x00cff2000000ffff\n"            /* 0x18 user data */
	"	.quad 0x00affa000000ffff\n"            /* 0x20 user code, 64-bit */
	"gdt_tss:\n"
	"	.quad 0, 0\n"                          /* 0x28 TSS, filled by cpu_init() */
	"gdt_end:\n"
	".balign 8\n"
	"gdt_ptr:\n"
	"	.word gdt_end - gdt - 1\n"
	"	.quad gdt\n"

	".section .data.pagetables, \"aw\"\n"
	".balign 4096\n"
	"boot_pml4:\n"
	"	.quad boot_pdpt + 0x7\n"
	"	.fill 511, 8, 0\n"
	"boot_pdpt:\n"
	"	.quad boot_pd + 0x7\n"
	"	.fill 511, 8, 0\n"
	"boot_pd:\n"
	"	.set i, 0\n"
	"	.rept 512\n"
	"	.quad (i << 21) | 0x87\n"              /* present, writable, user, 2 MiB */
	"	.set i, i + 1\n"
	"	.endr\n"

	".section .bss\n"
	".balign 16\n"
	"boot_stack:\n"
	"	.skip 16384\n"
	".globl boot_stack_top\n"
	"boot_stack_top:\n"

	".section .text.boot, \"ax\"\n"
	".code32\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	"	cli\n"
	"	cld\n"
	"	mov %eax, %edi\n"                      /* guest_main(magic, mbi) */
	"	mov %ebx, %esi\n"
	"	lgdt gdt_ptr\n"
	"	mov $0x10, %eax\n"
	"	mov %eax, %ds\n"
	"	mov %eax, %es\n"
	"	mov %eax, %fs\n"
	"	mov %eax, %gs\n"
	"	mov %eax, %ss\n"
	"	mov $boot_stack_top, %esp\n"
	"	mov %cr4, %eax\n"
	"	or $0x20, %eax\n"                      /* PAE */
	"	mov %eax, %cr4\n"
	"	mov $boot_pml4, %eax\n"
	"	mov %eax, %cr3\n"
	"	mov $0xc0000080, %ecx\n"               /* EFER */
	"	rdmsr\n"
	"	or $0x101, %eax\n"                     /* LME, SCE */
	"	wrmsr\n"
	"	mov %cr0, %eax\n"
	"	or $0x80010001, %eax\n"                /* PG, WP, PE */
	"	mov %eax, %cr0\n"
	"	ljmp $0x08, $start64\n"
	"	ud2\n" /* a jump to the next instruction would be invisible in QEMU's log */
	".code64\n"
	"start64:\n"
	"	mov $0x10, %eax\n"
	"	mov %eax, %ds\n"
	"	mov %eax, %es\n"
	"	mov %eax, %ss\n"
	"	mov $boot_stack_top, %esp\n"
	"	mov %edi, %edi\n"
	"	mov %esi, %esi\n"
	"	call guest_main\n"
	"	mov $0x7f, %edi\n"                     /* guest_main returned: a bug */
	"	call guest_exit\n"
	".size _start, . - _start\n"
	".text\n");
