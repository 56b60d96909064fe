/* SPDX-License-Identifier: GPL-2.0 */
/*
 * transition.h - architectural emulation of the 64-bit privilege transitions after which a
 * single-step trap does not come: sysretq, iretq to CPL 3, syscall with TF in FMASK,
 * int n / int3 and ud0/1/2 (#UD) through a 64-bit interrupt or trap gate, and the page fault
 * of a user-mode load or store (predicted with a user-mode page walk, delivered like int n).
 *
 * Pure: the vCPU state comes in a struct, guest memory through a guest-physical accessor.
 * Every check the CPU makes on the way is made here; where the CPU would fault, or anything
 * is unusual, nothing is changed and the caller lets the CPU execute the instruction itself.
 * Guest memory (stack pushes, descriptor accessed bits, page-table accessed/dirty bits) is
 * written only after every check passed.
 */
#ifndef VBTS_VMM_STEP_TRANSITION_H
#define VBTS_VMM_STEP_TRANSITION_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "insn.h"

/**
 * struct transition_state - the vCPU as the instruction finds it, and as it leaves it.
 * @regs:   general registers; RFLAGS as the guest sees it (without a tracer's TF)
 * @sregs:  special registers (segments, descriptor tables, CR0/3/4, EFER)
 * @star:   IA32_STAR (sysret, syscall)
 * @lstar:  IA32_LSTAR (syscall)
 * @fmask:  IA32_FMASK (syscall)
 * @cpl_ok: bit n set: the transition may end at CPL n (else it is refused)
 */
struct transition_state {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	uint64_t star;
	uint64_t lstar;
	uint64_t fmask;
	unsigned int cpl_ok;
};

/**
 * transition__wanted() - whether @info is an instruction this module emulates.
 * @info: the decoded instruction (64-bit mode)
 *
 * Return: true for sysretq, iretq, syscall, int n / int3 and ud0/ud1/ud2 (#UD).
 */
bool transition__wanted(const struct insn_info *info);

/**
 * transition__emulate() - execute one transition instruction on @st and guest memory.
 * @st:   state; on success it is the state after the instruction
 * @info: the decoded instruction at @st->regs.rip (64-bit mode)
 * @ptr:  guest-physical accessor: a host pointer valid for [gpa, gpa + len), or NULL when
 *        any of it is not guest RAM (guest_memory__ptr() semantics); writes go through it
 * @ctx:  first argument of @ptr
 *
 * Page walks use @st->sregs (CR0, CR3, CR4, EFER), as the CPU would for supervisor data
 * accesses, and set the accessed and dirty bits the CPU sets.
 *
 * Return: 0 when emulated; -EOPNOTSUPP for another instruction, another mode, or a case not
 * emulated (LDT selectors, conforming or 32-bit code, a return to CPL 0, the guest's own TF,
 * ...); -EINVAL when the CPU would raise an exception; -EFAULT when memory the instruction
 * touches is not mapped to guest RAM or the access would fault; -EPERM when the result
 * would run at a CPL outside @st->cpl_ok; -E2BIG when it would write more than this module
 * buffers. On any error @st and guest memory are unchanged.
 */
int transition__emulate(struct transition_state *st, const struct insn_info *info,
			void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len), const void *ctx);

/**
 * transition__user_fault() - whether a user-mode data access at CPL 3 raises a page fault.
 * @st:    state (CPL 3, 64-bit mode)
 * @la:    linear address of the access
 * @len:   bytes (1..64)
 * @write: a store
 * @ptr:   guest-physical accessor, as for transition__emulate(); nothing is written
 * @ctx:   its first argument
 * @code:  result: the page-fault error code, when it faults
 *
 * Return: 0 when the access succeeds; 1 when it raises #PF with @code (CR2 = @la);
 * -EOPNOTSUPP when that is not known exactly (another exception may come first: a
 * non-canonical address, alignment checking, protection keys; a reserved bit; page tables
 * outside guest RAM; the second page of a split access faulting).
 */
int transition__user_fault(const struct transition_state *st, uint64_t la, uint32_t len,
			   bool write, void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			   const void *ctx, uint32_t *code);

/**
 * transition__page_fault() - deliver a page fault raised by the instruction at RIP.
 * @st:   state; on success the state in the handler (CR2 = @cr2)
 * @cr2:  the faulting linear address
 * @code: the error code
 * @ptr:  guest-physical accessor, as for transition__emulate()
 * @ctx:  its first argument
 *
 * The delivery of transition__emulate()'s int n, with the error code pushed, the faulting
 * RIP and RF set in the pushed RFLAGS, and no check of the gate's DPL.
 *
 * Return: 0, or the errors of transition__emulate() (nothing changed).
 */
int transition__page_fault(struct transition_state *st, uint64_t cr2, uint32_t code,
			   void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			   const void *ctx);

/**
 * transition__interrupt() - deliver an external interrupt or an NMI before the instruction at
 * RIP (a PMI of guest-visible BTS, say), as the CPU delivers one between two instructions.
 * @st:     state; on success the state in the handler
 * @vector: the vector (2 for an NMI)
 * @ptr:    guest-physical accessor, as for transition__emulate()
 * @ctx:    its first argument
 *
 * The delivery of transition__emulate()'s int n, with RIP pushed as it is, RFLAGS pushed
 * unchanged, no error code and no check of the gate's DPL. Whether the event is blocked (IF,
 * NMI blocking, an interrupt shadow) is the caller's to check.
 *
 * Return: 0, or the errors of transition__emulate() (nothing changed).
 */
int transition__interrupt(struct transition_state *st, uint8_t vector,
			  void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			  const void *ctx);

#endif /* VBTS_VMM_STEP_TRANSITION_H */
