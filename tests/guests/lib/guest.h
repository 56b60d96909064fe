/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest.h - the runtime shared by the freestanding test guests: ports, output, exit, CPU setup.
 *
 * Every guest is deterministic: interrupts stay masked in every mode (QEMU's PIT runs), no
 * output waits on a device status register, nothing branches on CPUID, the TSC or the
 * multiboot memory map, and no instruction jumps to the one right after it (such a jump is
 * invisible in QEMU's execution log). The same image then executes the same instructions under
 * QEMU TCG and under vbts.
 */
#ifndef VBTS_TESTS_GUEST_H
#define VBTS_TESTS_GUEST_H

#include <stddef.h>
#include <stdint.h>

#include "vbts/agent-proto.h"

/* GDT selectors (lib/start.c); the order is the one SYSRET needs. */
#define GDT_KERNEL_CS 0x08
#define GDT_KERNEL_DS 0x10
#define GDT_USER_DS 0x18 /* SYSRET: STAR[63:48] + 8 */
#define GDT_USER_CS 0x20 /* SYSRET: STAR[63:48] + 16 */
#define GDT_TSS 0x28     /* 16-byte system descriptor */
#define USER_CS (GDT_USER_CS | 3)
#define USER_DS (GDT_USER_DS | 3)

/* Vectors with a stub in the IDT (lib/cpu.c). */
#define VEC_UD 6
#define VEC_BP 3
#define VEC_GP 13
#define VEC_PF 14
#define VEC_INT_KERNEL 0x81 /* int n from ring 0 (gate DPL 0) */
#define VEC_INT_USER 0x80   /* int n from ring 3 (gate DPL 3) */
#define VEC_SYSCALL 0x100   /* not a vector: marks a frame built by the SYSCALL entry */

/* RFLAGS given to ring 3 and kept in ring 0: IF = 0, only the reserved bit 1 set. */
#define GUEST_RFLAGS 0x2ULL

/* Debug-exit values (port VBTS_DEBUG_EXIT_PORT); the exit status is (value << 1) | 1. */
#define GUEST_EXIT_DONE 0x00
#define GUEST_EXIT_ASSERT 0x01
#define GUEST_EXIT_EXCEPTION 0x20 /* + vector, for an exception nobody expected */

/**
 * struct trap_frame - the registers saved by every kernel entry (exception, int n, syscall).
 * The layout is fixed by the assembly in lib/cpu.c. A handler may rewrite the frame to resume
 * elsewhere; @vector == VEC_SYSCALL returns with SYSRETQ (to ring 3), anything else with IRETQ.
 */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;

	__asm__ volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

void *memset(void *s, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
size_t strlen(const char *s);

/* Output: COM1 (no status polling: both 8250s accept every byte) and the agent channel. */
void uart_putc(char c);
void uart_puts(const char *s);
void uart_hex(uint64_t v);
void uart_dec(uint64_t v);

/**
 * struct agent_line - one JSON line being built for the agent channel.
 * Appends past the end are cut off; agent_line_send() always ends the line.
 */
struct agent_line {
	char buf[VBTS_AGENT_LINE_MAX];
	size_t len;
};

void agent_line_init(struct agent_line *l, const char *event);
void agent_line_str(struct agent_line *l, const char *key, const char *val);
void agent_line_int(struct agent_line *l, const char *key, uint64_t val);
void agent_line_hex(struct agent_line *l, const char *key, uint64_t val);
void agent_line_send(struct agent_line *l);

/* Leave the VM through the debug-exit port: never returns. */
__attribute__((noreturn)) void guest_exit(uint8_t value);
__attribute__((noreturn)) void guest_done(void);
__attribute__((noreturn)) void guest_assert_fail(const char *what);

#define GUEST_ASSERT(cond)                                  \
	do {                                                \
		if (!(cond))                                \
			guest_assert_fail(#cond);           \
	} while (0)

/*
 * CPU setup (lib/cpu.c): TSS with RSP0, IDT stubs for the exceptions and the two int n
 * vectors, SYSCALL MSRs (LSTAR = syscall_entry, TF not masked so a stepping tracer can follow
 * into the kernel).
 */
void cpu_init(void);
void cpu_set_rsp0(uint64_t rsp0);
uint64_t cpu_trap_stack_top(void);

/* Provided by each guest: handle a kernel entry; may rewrite *f to resume elsewhere. */
void guest_trap(struct trap_frame *f);

/* Resume the context in *f (which must lie at the top of the trap stack): never returns. */
__attribute__((noreturn)) void trap_resume(struct trap_frame *f);

/* Entered by multiboot through lib/start.c, with paging and long mode on. */
void guest_main(uint32_t magic, uint32_t mbi);

#endif /* VBTS_TESTS_GUEST_H */
