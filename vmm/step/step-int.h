/* SPDX-License-Identifier: GPL-2.0 */
/*
 * step-int.h - internals of the single-step tracer that the unit tests drive: the pure
 * decision logic (what happened between two observations of a vCPU) and the gate lookups.
 *
 * Nothing here touches KVM: the glue in step.c reads the vCPU state, fills these structures
 * and writes the records they produce.
 */
#ifndef VBTS_VMM_STEP_STEP_INT_H
#define VBTS_VMM_STEP_STEP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <vbts/ring-format.h>

#include "tracer.h"
#include "gva.h"
#include "insn.h"

/* Instructions that leave through a handler the step does not follow (IDT, SYSCALL MSRs). */
#define STEP_EVENT_FLAGS (INSN_F_VECTOR | INSN_F_SYSCALL | INSN_F_SYSENTER)

/**
 * struct step_obs - the vCPU as observed after an exit or before a run.
 * @la:  linear address of the next instruction (CS base + RIP outside 64-bit mode)
 * @cr3: CR3 as read (masked when reported)
 * @cpl: current privilege level
 */
struct step_obs {
	uint64_t la;
	uint64_t cr3;
	uint8_t cpl;
};

/**
 * struct step_decoded - one decoded instruction and what is known of its target.
 * @la:         linear address
 * @info:       classification
 * @has_target: @target is the exact linear address control reaches when it transfers: the
 *              direct branch target, the handler of a verified gate / the SYSCALL MSR, or
 *              the return address an iret pops
 * @target:     that address
 * @cond_known: @info is a jcc, loop(cc) or jrcxz and @cond_taken was evaluated on the
 *              RFLAGS and rCX it executes with (step__cond_taken())
 * @cond_taken: it transfers control, whether or not @target is its fall-through address
 */
struct step_decoded {
	uint64_t la;
	struct insn_info info;
	bool has_target;
	uint64_t target;
	bool cond_known;
	bool cond_taken;
};

/**
 * step__cond_taken() - whether a conditional branch transfers control.
 * @info:   the decoded jcc, loop(cc) or jrcxz (@info->cond)
 * @rflags: RFLAGS before it executes
 * @rcx:    RCX before it executes; loop decrements its @info->adsize low bytes first
 * @taken:  result
 *
 * Return: 0; -EINVAL when @info is not one of those branches.
 */
int step__cond_taken(const struct insn_info *info, uint64_t rflags, uint64_t rcx, bool *taken);

/**
 * struct step_insn - what a step was armed for.
 * @valid:      the instruction could be read and decoded (else the step is a gap)
 * @has_second: @first is `mov ss`/`pop ss`: @second shares its step
 * @cpl:        CPL at @first
 * @real:       real-address mode (CR0.PE clear): no instruction changes the CPL
 * @lmode:      long mode: no hardware task switches, far jmp/call only keep or lower the CPL
 * @first:      the instruction at RIP
 * @second:     the instruction after it, when @has_second
 * @has_landing: @first is an iret, or an event-raising instruction with a verified handler,
 *              and @landing is the instruction at @first.target, at CPL @landing_cpl: this
 *              host's KVM may stop the step only after it (measured for iretq and ud2).
 * @landing_cpl: CPL @landing runs at
 * @ret_cpl_known: @first is an iret or far ret and @ret_cpl is the CPL it returns to (the
 *              RPL of the CS on the stack; a fault on the way goes to CPL 0)
 * @ret_cpl:    that CPL
 * @landing:    the instruction at the iret's return address or the handler
 */
struct step_insn {
	bool valid;
	bool has_second;
	uint8_t cpl;
	bool real;
	bool lmode;
	bool has_landing;
	uint8_t landing_cpl;
	bool ret_cpl_known;
	uint8_t ret_cpl;
	struct step_decoded first;
	struct step_decoded second;
	struct step_decoded landing;
};

/* The most records one exit or one plan produces. */
#define STEP_OUT_MAX 8

/**
 * struct step_branch - a branch the guest took, whatever the host's CPL filter: what
 * guest-visible BTS stores (guest-bts.h).
 * @from: linear address of the branch instruction
 * @to:   its target
 * @cpl:  CPL of the branch instruction
 */
struct step_branch {
	uint64_t from;
	uint64_t to;
	uint8_t cpl;
};

/**
 * struct step_out - records produced by one decision, in stream order.
 * @rec:        records
 * @n:          how many
 * @br:         every branch of the decision, in order, also those the filter keeps out of @rec
 * @nbr:        how many
 * @retired:    instructions seen retiring (set by step__classify())
 * @hlt_retired: a `hlt` retired under the step (the exit should be seen as a halt)
 */
struct step_out {
	struct vbts_record rec[STEP_OUT_MAX];
	unsigned int n;
	struct step_branch br[STEP_OUT_MAX];
	unsigned int nbr;
	unsigned int retired;
	bool hlt_retired;
};

/* Verdicts of step__classify(). */
enum step_verdict {
	STEP_PENDING = 0, /* the instruction has not completed yet: step it again */
	STEP_DONE = 1,    /* it retired; any branch is in the output */
	STEP_LOST = 2,    /* control went somewhere unseen: GAP_BEGIN is in the output */
};

/**
 * step__classify() - decide what happened between the armed instruction and now.
 * @in:         the instruction(s) the step was armed for (@in->valid)
 * @now_la:     linear address of the next instruction now
 * @singlestep: the exit is the step's own KVM_EXIT_DEBUG; else some other exit
 * @filter:     enum vbts_cpl_filter for branch records
 * @out:        records appended here (branch, then GAP_BEGIN)
 *
 * Return: enum step_verdict.
 */
enum step_verdict step__classify(const struct step_insn *in, uint64_t now_la, bool singlestep,
				 enum vbts_cpl_filter filter, struct step_out *out);

/**
 * struct step_core - the per-vCPU state machine, without KVM.
 * @filter:    enum vbts_cpl_filter
 * @can_cpl0:  single-step works in CPL 0
 * @can_cpl3:  single-step works in CPL > 0
 * @armed:     @insn was armed for the last run
 * @gap_open:  a GAP_BEGIN was written and its GAP_END not yet
 * @have_cr3:  @cr3 was reported
 * @cr3:       the last CR3 reported (masked)
 * @insn:      the armed instruction
 * @steps:     instructions seen retiring under a step
 * @records:   records produced (branches and escapes)
 * @branches:  branch records produced
 * @gaps:      gaps opened
 */
struct step_core {
	enum vbts_cpl_filter filter;
	bool can_cpl0;
	bool can_cpl3;
	bool armed;
	bool gap_open;
	bool have_cr3;
	uint64_t cr3;
	struct step_insn insn;
	uint64_t steps;
	uint64_t records;
	uint64_t branches;
	uint64_t gaps;
};

/**
 * step_core__start() - the first records of a trace: START and the current task.
 * @c:   state, zero-initialized with @filter, @can_cpl0 and @can_cpl3 set
 * @now: current state
 * @ns:  time since trace start
 * @out: records
 */
void step_core__start(struct step_core *c, const struct step_obs *now, uint64_t ns,
		      struct step_out *out);

/**
 * step_core__plan() - before a run: decide whether to arm a single-step for @next.
 * @c:    state
 * @now:  current state
 * @next: the decoded instruction at @now->la (@next->valid false when it could not be read)
 * @ns:   time since trace start
 * @out:  records (GAP_END when control is regained, GAP_BEGIN when it is given up)
 *
 * Return: true to arm the single-step for this run.
 */
bool step_core__plan(struct step_core *c, const struct step_obs *now, const struct step_insn *next,
		     uint64_t ns, struct step_out *out);

/**
 * step_core__exit() - after a run: account for the armed instruction and CR3 changes.
 * @c:          state
 * @now:        state after the exit
 * @singlestep: the exit is a single-step KVM_EXIT_DEBUG
 * @ns:         time since trace start
 * @out:        records
 *
 * Return: true when the exit was this tracer's own single-step (consumed).
 */
bool step_core__exit(struct step_core *c, const struct step_obs *now, bool singlestep,
		     uint64_t ns, struct step_out *out);

/**
 * step_core__emulated() - the VMM executed @d itself (a privilege transition, transition.c):
 * control is regained at @from if a gap was open, the branch @from → @now is recorded with
 * @from's CPL, and a CR3 change is reported.
 * @c:    state
 * @from: state at the instruction
 * @d:    the instruction (its kind and vector go into the record)
 * @now:  state after it
 * @ns:   time since trace start
 * @out:  records
 */
void step_core__emulated(struct step_core *c, const struct step_obs *from,
			 const struct step_decoded *d, const struct step_obs *now, uint64_t ns,
			 struct step_out *out);

/**
 * step_core__stop() - the last record of a trace (closes an open gap first).
 * @c:   state
 * @now: current state
 * @ns:  time since trace start
 * @out: records
 */
void step_core__stop(struct step_core *c, const struct step_obs *now, uint64_t ns,
		     struct step_out *out);

/**
 * struct step_tables - descriptor tables, as in the vCPU's special registers.
 */
struct step_tables {
	uint64_t idt_base;
	uint16_t idt_limit;
	uint64_t gdt_base;
	uint16_t gdt_limit;
	uint64_t ldt_base;
	uint32_t ldt_limit;
	bool ldt_usable;
};

/**
 * step__gate_target() - where the CPU delivers @vector, if the guest's IDT says so exactly.
 * @s:      address space (the IDT and GDT are at linear addresses)
 * @t:      descriptor tables
 * @real:   real-address mode (IVT of 4-byte far pointers); not for virtual-8086 mode
 * @lmode:  long mode (16-byte gates)
 * @vector: the vector
 * @soft:   raised by int n/int3/into: the gate's DPL must be >= @cpl
 * @cpl:    CPL of the raising instruction
 * @la:     result: linear address of the handler
 *
 * Return: 0; -ERANGE when the entry is beyond the IDT limit; -EFAULT when a table cannot be
 * read; -ENOENT for a not-present gate or segment; -EPERM when the DPL check fails (#GP
 * instead); -EOPNOTSUPP for task gates and other types the tracer does not follow.
 */
int step__gate_target(const struct gva_space *s, const struct step_tables *t, bool real,
		      bool lmode, uint8_t vector, bool soft, uint8_t cpl, uint64_t *la);

#endif /* VBTS_VMM_STEP_STEP_INT_H */
