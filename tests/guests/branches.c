// SPDX-License-Identifier: GPL-2.0
/*
 * branches.c - test guest: one labelled instance of every branch kind, in ring 0, then ring 3.
 *
 * Label table (global symbols of the image):
 *   br_<r>_<kind>_from / br_<r>_<kind>_to   a taken branch that must be recorded exactly
 *   nb_<r>_<kind>                           an instruction that is never a branch's source
 * <r> is k (CPL 0 at the source) or u (CPL 3). Labels on lib/cpu.c's handler entries and
 * SYSRETQ (br_k_int_to, br_u_syscall_to, ...) are aliases made by the linker (--defsym in
 * meson.build). Branches inside handlers carry no labels: a single-stepping tracer loses the
 * handler body (TF is cleared on IDT delivery).
 *
 * The ring-0 part runs first and stands alone: built with -DBRANCHES_KERNEL_ONLY (image
 * branches-k) the guest exits after it. Exit values: 0 done; GUEST_EXIT_EXCEPTION + vector on
 * an unexpected exception, e.g. 0x2d for the #GP a KVM raises when it cannot enter ring 3.
 */
#include "guest.h"

#define SYS_NOP 0
#define SYS_EXIT 1

/* Global label NAME at the current position. */
#define L(name) ".globl " name "\n" name ":\n"
#define BR(r, kind) "br_" r "_" kind

/*
 * The branch kinds that look the same in both rings. r: "k" or "u"; cs: the ring's code
 * selector. Clobbers rax, rcx, rdx, rsi, rdi, rbx; expects a stack.
 */
#define COMMON_BRANCHES(r, cs)                                                          \
	"	xor %eax, %eax\n"                                                       \
	L(BR(r, "jcc_taken_from"))                                                     \
	"	jz " BR(r, "jcc_taken_to") "\n"                                         \
	"	ud2\n"                                                                  \
	L(BR(r, "jcc_taken_to"))                                                       \
	"	test %eax, %eax\n"                                                      \
	L("nb_" r "_jcc_not_taken")                                                    \
	"	jnz branches_fail\n"                                                    \
	L(BR(r, "jmp_from"))                                                           \
	"	jmp " BR(r, "jmp_to") "\n"                                              \
	"	ud2\n"                                                                  \
	L(BR(r, "jmp_to"))                                                             \
	"	lea " BR(r, "jmp_ind_to") "(%rip), %rax\n"                              \
	L(BR(r, "jmp_ind_from"))                                                       \
	"	jmp *%rax\n"                                                            \
	"	ud2\n"                                                                  \
	L(BR(r, "jmp_ind_to"))                                                         \
	L(BR(r, "call_from"))                                                          \
	"	call " r "_leaf\n"                                                      \
	L(BR(r, "ret_to"))                                                             \
	"	lea " r "_leaf2(%rip), %rax\n"                                          \
	L(BR(r, "call_ind_from"))                                                      \
	"	call *%rax\n"                                                           \
	L(BR(r, "far_jmp_from"))                                                       \
	"	ljmpl *" r "_far_jmp_ptr(%rip)\n"                                       \
	"	ud2\n"                                                                  \
	L(BR(r, "far_jmp_to"))                                                         \
	L(BR(r, "far_call_from"))                                                      \
	"	lcalll *" r "_far_call_ptr(%rip)\n"                                     \
	L(BR(r, "far_ret_to"))                                                         \
	"	pushq $" cs "\n"                                                        \
	"	lea " BR(r, "lretq_to") "(%rip), %rax\n"                                \
	"	push %rax\n"                                                            \
	L(BR(r, "lretq_from"))                                                         \
	"	lretq\n"                                                                \
	"	ud2\n"                                                                  \
	L(BR(r, "lretq_to"))                                                           \
	"	mov $3, %ecx\n"                                                         \
	L(BR(r, "loop_to"))                                                            \
	"	add $1, %ebx\n"                                                         \
	L(BR(r, "loop_from"))                                                          \
	"	loop " BR(r, "loop_to") "\n"                                            \
	"	xor %ecx, %ecx\n"                                                       \
	L(BR(r, "jrcxz_from"))                                                         \
	"	jrcxz " BR(r, "jrcxz_to") "\n"                                          \
	"	ud2\n"                                                                  \
	L(BR(r, "jrcxz_to"))                                                           \
	"	mov %rsp, %rax\n"                                                       \
	"	mov %ss, %edx\n"                                                       \
	"	push %rdx\n"                                                            \
	"	push %rax\n"                                                            \
	"	pushq $2\n"                                                             \
	"	pushq $" cs "\n"                                                        \
	"	lea " BR(r, "iretq_to") "(%rip), %rax\n"                                \
	"	push %rax\n"                                                            \
	L(BR(r, "iretq_from"))                                                         \
	"	iretq\n"                                                                \
	"	ud2\n"                                                                  \
	L(BR(r, "iretq_to"))                                                           \
	"	lea branches_src(%rip), %rsi\n"                                         \
	"	lea branches_dst(%rip), %rdi\n"                                         \
	"	mov $16, %ecx\n"                                                        \
	L("nb_" r "_rep_movsb")                                                        \
	"	rep movsb\n"                                                            \
	"	mov %ss, %eax\n"                                                        \
	L("nb_" r "_mov_ss")                                                           \
	"	mov %eax, %ss\n"                                                        \
	L("nb_" r "_after_mov_ss")                                                     \
	"	add $1, %ebx\n"

/* Callees and far pointers of COMMON_BRANCHES. */
#define COMMON_CALLEES(r, cs)                                                           \
	".type " r "_leaf, @function\n"                                                 \
	r "_leaf:\n"                                                                    \
	L(BR(r, "call_to"))                                                            \
	"	add $1, %ebx\n"                                                         \
	L(BR(r, "ret_from"))                                                           \
	"	ret\n"                                                                  \
	".size " r "_leaf, . - " r "_leaf\n"                                            \
	".type " r "_leaf2, @function\n"                                                \
	r "_leaf2:\n"                                                                   \
	L(BR(r, "call_ind_to"))                                                        \
	"	add $2, %ebx\n"                                                         \
	"	ret\n"                                                                  \
	".size " r "_leaf2, . - " r "_leaf2\n"                                          \
	".type " r "_far_leaf, @function\n"                                             \
	r "_far_leaf:\n"                                                                \
	L(BR(r, "far_call_to"))                                                        \
	"	add $3, %ebx\n"                                                         \
	L(BR(r, "far_ret_from"))                                                       \
	"	lretl\n"                                                                \
	".size " r "_far_leaf, . - " r "_far_leaf\n"                                    \
	".pushsection .data\n"                                                          \
	".balign 8\n"                                                                   \
	r "_far_jmp_ptr:\n"                                                             \
	"	.long " BR(r, "far_jmp_to") "\n"                                        \
	"	.word " cs "\n"                                                         \
	".balign 8\n"                                                                   \
	r "_far_call_ptr:\n"                                                            \
	"	.long " r "_far_leaf\n"                                                 \
	"	.word " cs "\n"                                                         \
	".popsection\n"

__asm__(
	".text\n"
	/* Ring 0: returns to its C caller. */
	".globl ring0_branches\n"
	".type ring0_branches, @function\n"
	"ring0_branches:\n"
	"	push %rbx\n"
	"	xor %ebx, %ebx\n"
	COMMON_BRANCHES("k", "0x08")
#ifndef BRANCHES_KERNEL_ONLY
	L(BR("k", "int_from"))
	"	int $0x81\n"
#endif
	/* SYSCALL in ring 0, to an entry that returns by an indirect jump. */
	"	mov $0xc0000082, %ecx\n"
	"	lea k_syscall_entry(%rip), %rax\n"
	"	xor %edx, %edx\n"
	"	wrmsr\n"
	L(BR("k", "syscall_from"))
	"	syscall\n"
	L(BR("k", "syscall_back_to"))
	"	mov $0xc0000082, %ecx\n"
	"	lea syscall_entry(%rip), %rax\n"
	"	xor %edx, %edx\n"
	"	wrmsr\n"
	L(BR("k", "ud2_from"))
	"	ud2\n"
	L("k_ud2_resume")
	"	mov %ebx, %eax\n"
	"	pop %rbx\n"
	"	ret\n"
	".size ring0_branches, . - ring0_branches\n"
	COMMON_CALLEES("k", "0x08")
	".type k_syscall_entry, @function\n"
	"k_syscall_entry:\n"
	L(BR("k", "syscall_to"))
	"	pushq $2\n"
	"	popfq\n"
	L(BR("k", "syscall_back_from"))
	"	jmp *%rcx\n"
	".size k_syscall_entry, . - k_syscall_entry\n"
	".globl branches_fail\n"
	"branches_fail:\n"
	"	ud2\n"

#ifndef BRANCHES_KERNEL_ONLY
	/* Into ring 3 with IRETQ; the ring-3 part ends with the exit system call. */
	".globl enter_ring3\n"
	".type enter_ring3, @function\n"
	"enter_ring3:\n"
	"	pushq $0x1b\n"
	"	lea user_stack_top(%rip), %rax\n"
	"	push %rax\n"
	"	pushq $2\n"
	"	pushq $0x23\n"
	"	lea ring3_branches(%rip), %rax\n"
	"	push %rax\n"
	L(BR("k", "iretq_user_from"))
	"	iretq\n"
	"	ud2\n" /* ring3_branches must not be the next instruction: invisible to QEMU */
	".size enter_ring3, . - enter_ring3\n"

	".type ring3_branches, @function\n"
	"ring3_branches:\n"
	L(BR("k", "iretq_user_to"))
	"	xor %ebx, %ebx\n"
	COMMON_BRANCHES("u", "0x23")
	/*
	 * After each return from a handler comes a plain instruction first: a single-stepping
	 * tracer regains control only after the first instruction behind an IRETQ, and each
	 * labelled kind should be observable on its own.
	 */
	L(BR("u", "int_from"))
	"	int $0x80\n"
	"	add $1, %ebx\n"
	L(BR("u", "int3_from"))
	"	int3\n"
	"	mov $0, %eax\n" /* SYS_NOP */
	L(BR("u", "syscall_from"))
	"	syscall\n"
	L(BR("k", "sysretq_to"))
	"	add $1, %ebx\n"
	L(BR("u", "ud2_from"))
	"	ud2\n"
	L("u_ud2_resume")
	"	mov $1, %eax\n" /* SYS_EXIT */
	L(BR("u", "exit_from"))
	"	syscall\n"
	"	ud2\n"
	".size ring3_branches, . - ring3_branches\n"
	COMMON_CALLEES("u", "0x23")

	".section .bss\n"
	".balign 4096\n"
	"user_stack:\n"
	"	.skip 4096\n"
	"user_stack_top:\n"
#endif
	".data\n"
	"branches_src:\n"
	"	.ascii \"0123456789abcdef\"\n"
	".section .bss\n"
	"branches_dst:\n"
	"	.skip 16\n"
	".text\n");

int ring0_branches(void);
__attribute__((noreturn)) void enter_ring3(void);
extern char k_ud2_resume[], u_ud2_resume[], br_k_ud2_from[], br_u_ud2_from[];

static __attribute__((noreturn)) void unexpected(const struct trap_frame *f)
{
	uart_puts("branches: unexpected exception ");
	uart_dec(f->vector);
	uart_puts(" at ");
	uart_hex(f->rip);
	uart_puts(" cpl ");
	uart_dec(f->cs & 3);
	uart_puts(" error ");
	uart_hex(f->error);
	uart_putc('\n');
	guest_exit((uint8_t)(GUEST_EXIT_EXCEPTION + (f->vector & 0x1f)));
}

void guest_trap(struct trap_frame *f)
{
	switch (f->vector) {
	case VEC_SYSCALL:
		if (f->rax == SYS_EXIT) {
			uart_puts("branches: done\n");
			guest_done();
		}
		return;
	case VEC_INT_USER:
	case VEC_INT_KERNEL:
	case VEC_BP:
		return;
	case VEC_UD:
		if (f->rip == (uint64_t)br_k_ud2_from) {
			f->rip = (uint64_t)k_ud2_resume;
			return;
		}
#ifndef BRANCHES_KERNEL_ONLY
		if (f->rip == (uint64_t)br_u_ud2_from) {
			f->rip = (uint64_t)u_ud2_resume;
			return;
		}
#endif
		unexpected(f);
	default:
		unexpected(f);
	}
}

void guest_main(uint32_t magic, uint32_t mbi)
{
	int n;

	GUEST_ASSERT(magic == 0x2badb002);
	cpu_init();
	uart_puts("branches: ring 0\n");
	n = ring0_branches();
	GUEST_ASSERT(n == 10);
#ifdef BRANCHES_KERNEL_ONLY
	uart_puts("branches: done\n");
	guest_done();
#else
	uart_puts("branches: ring 3\n");
	enter_ring3();
#endif
}
