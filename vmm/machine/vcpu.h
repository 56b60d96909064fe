/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpu.h - vCPUs: one thread each (named vcpu-N), an explicit state machine, kicks by signal
 * plus immediate_exit, and the dispatch-only exit loop with the tracer hooks of tracer.h.
 */
#ifndef VBTS_VMM_VCPU_H
#define VBTS_VMM_VCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "kvm-backend/kvm-counters.h"
#include "crash-report.h"
#include "guest-bts.h"

struct guest_crash;
struct ring_writer;
struct vcpu;
struct vm;

/**
 * enum vcpu_state - what a vCPU thread is doing (or is asked to do).
 * @VCPU_RUNNING:  running guest code
 * @VCPU_PAUSED:   parked in its thread, not in KVM_RUN (APs not started by the boot protocol
 *                 wait here too)
 * @VCPU_STEPPING: running guest code under a tracer backend
 * @VCPU_STOPPED:  done; the thread has ended or is about to
 */
enum vcpu_state {
	VCPU_RUNNING,
	VCPU_PAUSED,
	VCPU_STEPPING,
	VCPU_STOPPED,
};

/**
 * struct vcpu_boot - initial state: flat 32-bit protected mode, paging off (multiboot, probes,
 * Linux's PVH entry), or 64-bit mode with paging when @long_mode (Linux's 64-bit entry).
 * @rip, @rsp:       entry point and stack
 * @eax, @ebx:       boot protocol registers
 * @rsi:             boot protocol register (Linux: boot_params)
 * @gdt_base, @gdt_limit: GDTR (the GDT holding @cs and @ds must be in guest memory)
 * @cs, @ds:         selectors of the flat code and data segments (ds also for es, ss, fs, gs)
 * @long_mode:       64-bit code segment, CR0.PG, CR4.PAE, EFER.LME/LMA
 * @cr3:             the page tables when @long_mode
 */
struct vcpu_boot {
	uint64_t rip;
	uint64_t rsp;
	uint32_t eax;
	uint32_t ebx;
	uint64_t rsi;
	uint32_t gdt_base;
	uint16_t gdt_limit;
	uint16_t cs;
	uint16_t ds;
	bool long_mode;
	uint64_t cr3;
};

/* Exit reasons counted one by one for --stats; larger ones share the last slot. */
#define VCPU_NR_EXIT_COUNTERS 64

/**
 * vcpu__install_kick_signal() - install the (empty) handler of the kick signal; once, by main.
 *
 * Return: 0 or -errno.
 */
int vcpu__install_kick_signal(void);

/**
 * vcpu__create() - KVM_CREATE_VCPU, map its kvm_run, give it the host's CPUID.
 * @vm:    the VM (its kvm must be open)
 * @index: vCPU index (APIC id)
 *
 * Return: the vCPU, or NULL with errno set (the failing ioctl is reported).
 */
struct vcpu *vcpu__create(struct vm *vm, unsigned int index);

/**
 * vcpu__destroy() - unmap and close; the thread must have been joined.
 * @v: may be NULL
 */
void vcpu__destroy(struct vcpu *v);

/**
 * vcpu__set_boot() - load a flat 32-bit protected-mode or 64-bit state.
 * @v: vCPU, not running
 * @b: the state
 *
 * Return: 0 or -errno from KVM_GET/SET_SREGS/REGS.
 */
int vcpu__set_boot(struct vcpu *v, const struct vcpu_boot *b);

/**
 * vcpu__set_ring() - the ring file this vCPU's tracer writes to (before vcpu__start()).
 * @v:    vCPU
 * @ring: ring writer, owned by the caller
 */
void vcpu__set_ring(struct vcpu *v, struct ring_writer *ring);

/**
 * enum vcpu_recording - whether a vCPU's branches go to its ring (vcpu__recording()).
 * @VCPU_REC_NONE:    no ring (not tracing)
 * @VCPU_REC_ON:      recording
 * @VCPU_REC_OFF:     stopped by the control socket (a STOP record ends the recording)
 * @VCPU_REC_FROZEN:  the ring is frozen (a FREEZE record, then nothing more)
 */
enum vcpu_recording {
	VCPU_REC_NONE,
	VCPU_REC_ON,
	VCPU_REC_OFF,
	VCPU_REC_FROZEN,
};

/* Requests of vcpu__control(), applied by the vCPU thread before its next KVM_RUN. */
#define VCPU_CTL_STOP (1U << 0)   /* STOP record, then the guest runs unrecorded */
#define VCPU_CTL_START (1U << 1)  /* START record (with the CPL filter), recording again */
#define VCPU_CTL_FREEZE (1U << 2) /* FREEZE record (operator), the ring frozen for good */
#define VCPU_CTL_CPL (1U << 3)    /* a new CPL filter, told by a START record */
#define VCPU_CTL_SIZE (1U << 4)   /* a new ring size (vcpu__resize()) */

/**
 * vcpu__control() - ask the vCPU thread to change its recording; kicks it out of KVM_RUN.
 * @v:   vCPU
 * @req: VCPU_CTL_* bits (a later STOP cancels a pending START and the other way round)
 * @cpl: enum vbts_cpl_filter, for VCPU_CTL_CPL
 *
 * Safe from any thread: the vCPU thread applies the request between two runs, so the ring
 * keeps one writer. A vCPU that runs no more (halted, parked) applies it when it runs again.
 */
void vcpu__control(struct vcpu *v, unsigned int req, unsigned int cpl);

/**
 * vcpu__resize() - ask the vCPU thread to give its wrap-mode ring another size
 * (ring_writer__resize()), as vcpu__control() asks.
 * @v:       vCPU
 * @records: record slots, >= 1 (the caller checked the memory budget)
 */
void vcpu__resize(struct vcpu *v, uint64_t records);

/**
 * vcpu__ring_size() - the size of the vCPU's ring, as its thread last set it.
 * @v: vCPU
 *
 * Return: record slots, 0 without a ring.
 */
uint64_t vcpu__ring_size(struct vcpu *v);

/**
 * vcpu__recording() - the vCPU's recording state.
 * @v:       vCPU
 * @pending: receives the VCPU_CTL_* bits not applied yet (may be NULL)
 * @cpl:     receives the CPL filter in force (may be NULL)
 *
 * Return: enum vcpu_recording.
 */
enum vcpu_recording vcpu__recording(struct vcpu *v, unsigned int *pending, unsigned int *cpl);

/**
 * vcpu__start() - start the vCPU thread.
 * @v:    vCPU
 * @live: run guest code now; otherwise park in VCPU_PAUSED (an AP the boot protocol does not
 *        start). A stop requested before (vm__request_stop() while vCPUs are being started)
 *        is kept: the thread then ends at once without running guest code.
 *
 * Return: 0 or -errno from pthread_create.
 */
int vcpu__start(struct vcpu *v, bool live);

/**
 * vcpu__start_ap() - start the thread of an AP that the guest starts itself: it enters KVM_RUN
 * at once, where KVM's in-kernel LAPIC holds it until the guest's INIT and SIPI, and it does
 * not keep the run going (a bare guest's run ends with its BSP, as without the AP).
 * @v: vCPU (not the BSP) of a VM with an in-kernel irqchip
 *
 * Return: 0 or -errno from pthread_create.
 */
int vcpu__start_ap(struct vcpu *v);

/**
 * vcpu__request() - ask the vCPU to change state; kicks it out of KVM_RUN when needed.
 * @v:     vCPU
 * @state: VCPU_RUNNING (resume), VCPU_PAUSED or VCPU_STOPPED (final: no later request or
 *         vcpu__start() undoes it; asking again kicks the thread again)
 */
void vcpu__request(struct vcpu *v, enum vcpu_state state);

/**
 * vcpu__kick() - make the vCPU leave KVM_RUN once (exit reason KVM_EXIT_INTR, seen by its
 * tracer's after_exit) and go on; nothing when it is not running guest code.
 * @v: vCPU
 */
void vcpu__kick(struct vcpu *v);

/**
 * vcpu__state() - the vCPU's current state.
 * @v: vCPU
 *
 * Return: enum vcpu_state.
 */
enum vcpu_state vcpu__state(struct vcpu *v);

/**
 * vcpu__join() - wait for the thread to end (after VCPU_STOPPED was requested).
 * @v: vCPU
 */
void vcpu__join(struct vcpu *v);

/**
 * vcpu__join_timed() - vcpu__join(), waiting at most @timeout_ns.
 * @v:          vCPU
 * @timeout_ns: nanoseconds to wait at most
 *
 * Return: 0 when the thread has ended (or was never started), -ETIMEDOUT when it still runs.
 */
int vcpu__join_timed(struct vcpu *v, uint64_t timeout_ns);

/**
 * vcpu__address_space() - the address space the vCPU runs in: its CR3's address-space bits
 * (guest_tasks__id(); the PCID and the page-table isolation bit dropped).
 * @v: the vCPU, called on its own thread (at an exit)
 *
 * Return: the id, or 0 when paging is off or the registers cannot be read.
 */
uint64_t vcpu__address_space(struct vcpu *v);

/**
 * vcpu__post_panic() - the guest kernel panicked on this vCPU, as another thread learned (the
 * guest's panic_cpu, a reset after a panic): the vCPU's own thread writes the report and
 * carries out --on-crash when it next leaves KVM_RUN, or when it ends. Kicks it.
 * @v: vCPU
 */
void vcpu__post_panic(struct vcpu *v);

/**
 * vcpu__note_crash() - the guest died on this vCPU: write a FREEZE escape record (@reason) to
 * its ring now and freeze the ring when the thread ends, so the path into the crash is kept.
 * Only the first call counts. Call it from the vCPU's own thread.
 * @v:      vCPU
 * @reason: enum vbts_freeze_reason
 */
void vcpu__note_crash(struct vcpu *v, unsigned int reason);

/**
 * vcpu__crash() - the guest crashed on this vCPU: write a FREEZE escape record, write the crash
 * report (crash.json or crash-N.json in vm->crash_dir, with the last vm->crash_branches
 * branches of the task) and carry out --on-crash. Call it from the vCPU's own thread.
 * @v:    vCPU
 * @kind: what crashed
 * @gc:   CRASH_PROCESS: the process and its signal; otherwise NULL (the process the vCPU ran
 *        is named when introspection knows it)
 *
 * A process crash freezes the ring only when the run does not go on; a panic or a triple
 * fault always freezes it (vcpu__note_crash()). The registers are the vCPU's now: for a panic
 * or a triple fault those of the crash; a process is gone when its exit is seen, so its
 * report has none.
 *
 * Return: the action taken: CRASH_ACTION_CONTINUE, CRASH_ACTION_EXIT (the caller ends the
 * run) or CRASH_ACTION_PAUSE (every vCPU was asked to pause).
 */
enum crash_action vcpu__crash(struct vcpu *v, enum crash_kind kind, const struct guest_crash *gc);

/**
 * vcpu__dispatch() - handle one exit: the one switch on exit_reason, dispatch only.
 * @v:   vCPU
 * @run: its kvm_run, exit_reason set
 *
 * Return: VCPU_CONTINUE, VCPU_HALT (this vCPU stops running guest code) or VCPU_STOP (the run
 * is over: a stop was requested with the status; errors were reported in one line).
 */
int vcpu__dispatch(struct vcpu *v, struct kvm_run *run);

#define VCPU_CONTINUE 0
#define VCPU_HALT 1
#define VCPU_STOP 2

/**
 * struct vcpu_stats - counters of one vCPU, read after its thread ended.
 * @exits:        by exit reason (the last slot counts all larger reasons)
 * @steps, @records, @gaps: from the tracer backend
 * @gbts:         guest-visible BTS (all zero without it)
 * @kvm:          the kernel tracer's counters (kvm backend; not valid otherwise)
 */
struct vcpu_stats {
	uint64_t exits[VCPU_NR_EXIT_COUNTERS];
	uint64_t steps;
	uint64_t records;
	uint64_t gaps;
	struct guest_bts_stats gbts;
	struct kvm_counters kvm;
};

/**
 * vcpu__stats() - copy the counters.
 * @v:     vCPU, its thread joined
 * @stats: filled in
 */
void vcpu__stats(const struct vcpu *v, struct vcpu_stats *stats);

/**
 * vcpu__exit_name() - the KVM_EXIT_* name of an exit reason.
 * @reason: exit reason
 *
 * Return: a static string ("IO", "HLT", ...) or NULL when unknown.
 */
const char *vcpu__exit_name(unsigned int reason);

#endif /* VBTS_VMM_VCPU_H */
