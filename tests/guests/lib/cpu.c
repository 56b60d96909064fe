// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.c - TSS, IDT, SYSCALL MSRs and the kernel entry/exit paths of the test guests.
 *
 * Every entry builds a struct trap_frame on the stack and calls guest_trap(). Entries from
 * ring 3 use the trap stack (TSS.RSP0, and the SYSCALL stub switches to it by hand), so a
 * frame from ring 3 always sits at the top of that stack and a handler may replace it with
 * another task's saved context. Exit: SYSRETQ for frames marked VEC_SYSCALL (symbol
 * trap_sysretq), IRETQ otherwise (symbol trap_iretq).
 */
#include "guest.h"

#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_FMASK 0xc0000084

/* RFLAGS bits SYSCALL clears: IF, DF, AC. TF stays, so a stepping tracer follows. */
#define SYSCALL_FMASK 0x40600ULL

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_high;
	uint32_t zero;
} __attribute__((packed));

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct table_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern uint64_t gdt[];
extern char trap_stubs[], trap_stack_top[], syscall_entry[];

static struct idt_gate idt[256] __attribute__((aligned(16)));
static struct tss64 tss __attribute__((aligned(16)));

/*
 * Stubs: vectors 0-31, then VEC_INT_USER and VEC_INT_KERNEL; each is 16 bytes long so that
 * stub N of the table starts at trap_stubs + 16 * N (vectors 0x80, 0x81 are entries 32, 33).
 */
__asm__(
	".text\n"
	".macro trap_stub vec, has_error\n"
	"	.balign 16\n"
	"	.globl trap_stub_\\vec\n"
	"	.type trap_stub_\\vec, @function\n"
	"trap_stub_\\vec:\n"
	"	.if \\has_error == 0\n"
	"	pushq $0\n"
	"	.endif\n"
	"	pushq $\\vec\n"
	"	jmp trap_common\n"
	"	.size trap_stub_\\vec, . - trap_stub_\\vec\n"
	".endm\n"
	".balign 16\n"
	".globl trap_stubs\n"
	"trap_stubs:\n"
	"trap_stub 0, 0; trap_stub 1, 0; trap_stub 2, 0; trap_stub 3, 0\n"
	"trap_stub 4, 0; trap_stub 5, 0; trap_stub 6, 0; trap_stub 7, 0\n"
	"trap_stub 8, 1; trap_stub 9, 0; trap_stub 10, 1; trap_stub 11, 1\n"
	"trap_stub 12, 1; trap_stub 13, 1; trap_stub 14, 1; trap_stub 15, 0\n"
	"trap_stub 16, 0; trap_stub 17, 1; trap_stub 18, 0; trap_stub 19, 0\n"
	"trap_stub 20, 0; trap_stub 21, 1; trap_stub 22, 0; trap_stub 23, 0\n"
	"trap_stub 24, 0; trap_stub 25, 0; trap_stub 26, 0; trap_stub 27, 0\n"
	"trap_stub 28, 0; trap_stub 29, 1; trap_stub 30, 1; trap_stub 31, 0\n"
	"trap_stub 128, 0; trap_stub 129, 0\n"

	/* SYSCALL: RCX = user RIP, R11 = user RFLAGS, RSP still the caller's. */
	".balign 16\n"
	".globl syscall_entry\n"
	".type syscall_entry, @function\n"
	"syscall_entry:\n"
	"	mov %rsp, syscall_saved_rsp(%rip)\n"
	"	lea trap_stack_top(%rip), %rsp\n"
	"	pushq $0x1b\n"                         /* ss: USER_DS */
	"	pushq syscall_saved_rsp(%rip)\n"
	"	push %r11\n"
	"	pushq $0x23\n"                         /* cs: USER_CS */
	"	push %rcx\n"
	"	pushq $0\n"
	"	pushq $0x100\n"                        /* VEC_SYSCALL */
	"	jmp trap_common\n"
	"	ud2\n" /* a jump to the next instruction would be invisible in QEMU's log */
	".size syscall_entry, . - syscall_entry\n"

	".globl trap_common\n"
	".type trap_common, @function\n"
	"trap_common:\n"
	"	push %rax\n	push %rbx\n	push %rcx\n	push %rdx\n	push %rsi\n"
	"	push %rdi\n	push %rbp\n	push %r8\n	push %r9\n	push %r10\n"
	"	push %r11\n	push %r12\n	push %r13\n	push %r14\n	push %r15\n"
	"	mov %rsp, %rdi\n"
	"	call guest_trap\n"
	".globl trap_restore\n"
	"trap_restore:\n"
	"	pop %r15\n	pop %r14\n	pop %r13\n	pop %r12\n	pop %r11\n"
	"	pop %r10\n	pop %r9\n	pop %r8\n	pop %rbp\n	pop %rdi\n"
	"	pop %rsi\n	pop %rdx\n	pop %rcx\n	pop %rbx\n	pop %rax\n"
	"	cmpq $0x100, (%rsp)\n"
	"	je trap_exit_sysret\n"
	"	add $16, %rsp\n"
	".globl trap_iretq\n"
	"trap_iretq:\n"
	"	iretq\n"
	"trap_exit_sysret:\n"
	"	add $16, %rsp\n"
	"	mov (%rsp), %rcx\n"
	"	mov 16(%rsp), %r11\n"
	"	mov 24(%rsp), %rsp\n"
	".globl trap_sysretq\n"
	"trap_sysretq:\n"
	"	sysretq\n"
	".size trap_common, . - trap_common\n"

	".globl trap_resume\n"
	".type trap_resume, @function\n"
	"trap_resume:\n"
	"	mov %rdi, %rsp\n"
	"	jmp trap_restore\n"
	".size trap_resume, . - trap_resume\n"

	".section .bss\n"
	".balign 16\n"
	"syscall_saved_rsp:\n"
	"	.skip 8\n"
	"	.skip 16384\n"
	".globl trap_stack_top\n"
	"trap_stack_top:\n"
	".text\n");

static void set_gate(unsigned int vector, unsigned int stub, unsigned int dpl)
{
	uint64_t addr = (uint64_t)trap_stubs + 16 * stub;
	struct idt_gate *g = &idt[vector];

	g->offset_low = (uint16_t)addr;
	g->selector = GDT_KERNEL_CS;
	g->ist = 0;
	g->type_attr = (uint8_t)(0x8e | (dpl << 5)); /* present, 64-bit interrupt gate */
	g->offset_mid = (uint16_t)(addr >> 16);
	g->offset_high = (uint32_t)(addr >> 32);
	g->zero = 0;
}

void cpu_set_rsp0(uint64_t rsp0)
{
	tss.rsp[0] = rsp0;
}

uint64_t cpu_trap_stack_top(void)
{
	return (uint64_t)trap_stack_top;
}

void cpu_init(void)
{
	uint64_t base = (uint64_t)&tss, limit = sizeof(tss) - 1;
	struct table_ptr idtr;
	unsigned int v;

	tss.iomap_base = sizeof(tss);
	cpu_set_rsp0(cpu_trap_stack_top());
	/* 64-bit available TSS descriptor (LTR marks it busy: gdt[] is in .data). */
	gdt[GDT_TSS / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
			   (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[GDT_TSS / 8 + 1] = base >> 32;
	__asm__ volatile("ltr %w0" : : "r"(GDT_TSS) : "memory");

	for (v = 0; v < 32; v++)
		set_gate(v, v, v == VEC_BP ? 3 : 0);
	set_gate(VEC_INT_USER, 32, 3);
	set_gate(VEC_INT_KERNEL, 33, 0);
	idtr.limit = sizeof(idt) - 1;
	idtr.base = (uint64_t)idt;
	__asm__ volatile("lidt %0" : : "m"(idtr) : "memory");

	wrmsr(MSR_STAR, ((uint64_t)GDT_KERNEL_DS << 48) | ((uint64_t)GDT_KERNEL_CS << 32));
	wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
	wrmsr(MSR_FMASK, SYSCALL_FMASK);
}
