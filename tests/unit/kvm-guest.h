/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-guest.h - a hand-assembled 64-bit ring-0 guest for the KVM tests of the tracer backends.
 *
 * Identity-mapped 2 MiB page, flat GDT, a 64-bit IDT gate for #UD:
 *   0x1000  jmp 0x1004                 JMP
 *   0x1004  mov $3, %ecx               (the count lives at KVM_GUEST_LOOP_COUNT_GPA)
 *   0x1009  loop 0x1009                LOOP, twice
 *   0x100b  call 0x1040                CALL; 0x1040 ret -> 0x1010  RET
 *   0x1010  mov %ss, %eax; mov %eax, %ss; jmp 0x1018   JMP in the step the mov ss covers
 *   0x1018  ud2                        EXCEPTION 6 -> 0x1100
 *   0x101a  mov $0x80, %dx; out %al, %dx                 an I/O exit
 *   0x101f  build an iretq frame; iretq -> 0x1032       IRET
 *   0x1032  hlt
 *   0x1100  #UD handler: nop; addq $2, (%rsp); iretq
 */
#ifndef VBTS_TESTS_KVM_GUEST_H
#define VBTS_TESTS_KVM_GUEST_H

#include <stddef.h>
#include <stdint.h>

struct guest_memory;

#define KVM_GUEST_HANDLER_LO 0x1100 /* the #UD handler: [LO, HI) */
#define KVM_GUEST_HANDLER_HI 0x1108
#define KVM_GUEST_LOOP_COUNT_GPA 0x1005

/**
 * struct kvm_guest_branch - a branch the guest takes.
 * @from: source address
 * @to:   target address
 * @kind: VBTS_BR_*
 */
struct kvm_guest_branch {
	uint64_t from, to;
	unsigned int kind;
};

/* Every branch outside the #UD handler, in order, with the loop count 3 (two LOOP branches). */
extern const struct kvm_guest_branch kvm_guest_branches[];
extern const unsigned int kvm_guest_nr_branches;

/**
 * kvm_guest__put() - copy bytes into guest memory (a Check assertion fails outside RAM).
 * @mem: guest memory
 * @gpa: guest physical address
 * @src: bytes
 * @len: their number
 */
void kvm_guest__put(struct guest_memory *mem, uint64_t gpa, const void *src, size_t len);

/**
 * kvm_guest__setup() - load the guest and put the vCPU in 64-bit mode at @rip.
 * @mem:     guest memory (at least 4 MiB)
 * @vcpu_fd: the vCPU
 * @rip:     where it starts
 */
void kvm_guest__setup(struct guest_memory *mem, int vcpu_fd, uint64_t rip);

/**
 * kvm_guest__monotonic_ns() - CLOCK_MONOTONIC in ns, for struct tracer_vcpu's start_ns.
 *
 * Return: nanoseconds.
 */
uint64_t kvm_guest__monotonic_ns(void);

#endif /* VBTS_TESTS_KVM_GUEST_H */
