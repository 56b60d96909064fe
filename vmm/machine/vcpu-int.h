/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpu-int.h - vCPU internals the unit tests need: the structure and the exit handlers, so a
 * test can feed a fabricated struct kvm_run to each handler without KVM.
 */
#ifndef VBTS_VMM_VCPU_INT_H
#define VBTS_VMM_VCPU_INT_H

#include <pthread.h>

#include "guest-bts.h"
#include "tracer.h"
#include "vcpu.h"

/**
 * struct vcpu - one vCPU.
 * @vm:       its VM
 * @index:    vCPU index
 * @fd:       KVM vCPU fd (-1 in tests)
 * @run:      the mmap'd kvm_run
 * @run_size: its mapping size (0 when not mmap'd)
 * @run_bytes: bytes of @run that exit data may point into (the mapping, or the test buffer)
 * @thread:   the vcpu-N thread, valid when @started
 * @started:  the thread was created (set under @lock)
 * @live:     started to run guest code (counted in vm->nr_live), not parked
 * @lock, @cond: protect @state, @request and the kick (immediate_exit)
 * @state:    what the thread is doing
 * @request:  what it was asked to do; VCPU_STOPPED is final (a stop wins over any later
 *            request or start)
 * @tv:       what the tracer backend sees
 * @tracing:  the tracer's vcpu_init succeeded
 * @exits:    exit counters, written by the vCPU thread only
 * @frozen:   the vCPU died (triple fault, KVM error): its ring is frozen after the tracer's
 *            last records
 * @gbts:     its guest-visible BTS (used when vm->guest_bts)
 * @ring:     the ring this vCPU owns (what vcpu__set_ring() gave); @tv.ring is it while
 *            recording and NULL while the control socket stopped or froze recording
 * @ctl_req:  VCPU_CTL_* bits asked for by the control thread, taken by the vCPU thread
 *            (atomic)
 * @ctl_cpl:  the CPL filter of a VCPU_CTL_CPL request (atomic)
 * @ctl_size: the ring size of a VCPU_CTL_SIZE request (atomic)
 * @ring_size: the ring's size, set by the vCPU thread (atomic)
 * @rec:      enum vcpu_recording, written by the vCPU thread, read by others (atomic)
 * @dbg_control: the KVM_GUESTDBG_* bits the debugger (vm->debug) last had set on it
 */
struct vcpu {
	struct vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	size_t run_bytes;
	pthread_t thread;
	bool started;
	bool live;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum vcpu_state state;
	enum vcpu_state request;
	struct tracer_vcpu tv;
	bool tracing;
	uint64_t exits[VCPU_NR_EXIT_COUNTERS];
	bool frozen;
	bool panic_posted;	/* vcpu__post_panic(): atomic */
	struct guest_bts gbts;
	struct ring_writer *ring;
	unsigned int ctl_req;
	unsigned int ctl_cpl;
	uint64_t ctl_size;
	uint64_t ring_size;
	unsigned int rec;
	struct kvm_stat gbts_kvm_dropped;
	uint32_t dbg_control;
};

/*
 * The exit handlers vcpu__dispatch() calls, one per exit reason; each takes the vCPU and its
 * kvm_run and returns VCPU_CONTINUE, VCPU_HALT or VCPU_STOP (after reporting the failure in
 * one line and requesting the stop with status 1). None returns an -errno.
 *
 * vcpu__exit_io():            port I/O (also string I/O) to the PIO bus
 * vcpu__exit_mmio():          MMIO to the MMIO bus
 * vcpu__exit_hlt():           halt: this vCPU stops running guest code
 * vcpu__exit_shutdown():      triple fault: FREEZE record, stop (status 0 for a PC guest:
 *                             an operating system's way to reset)
 * vcpu__exit_internal_error(): KVM could not go on (suberror reported): FREEZE record, stop
 * vcpu__exit_fail_entry():    VM entry failed: FREEZE record, stop
 * vcpu__exit_intr():          a kick: continue (the loop reads the request)
 * vcpu__exit_debug():         a debug exit no tracer consumed: stop
 * vcpu__exit_msr():           an MSR access sent to userspace: IA32_DEBUGCTL and IA32_DS_AREA
 *                             of guest-visible BTS (guest-bts.h), any other refused with #GP
 * vcpu__exit_system_event():  shutdown, reset or crash event: stop
 * vcpu__exit_unknown():       any other exit: stop
 */
int vcpu__exit_io(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_mmio(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_hlt(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_shutdown(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_internal_error(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_fail_entry(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_intr(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_debug(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_msr(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_system_event(struct vcpu *v, struct kvm_run *run);
int vcpu__exit_unknown(struct vcpu *v, struct kvm_run *run);

/**
 * vcpu__init_detached() - a vCPU without KVM (fd -1) over a caller-provided kvm_run, for tests.
 * @v:     zeroed by the caller or not; fully initialized
 * @vm:    its VM
 * @index: vCPU index
 * @run:   a buffer standing in for the kvm_run mapping
 * @run_bytes: its size, at least sizeof(struct kvm_run)
 */
void vcpu__init_detached(struct vcpu *v, struct vm *vm, unsigned int index, struct kvm_run *run,
			 size_t run_bytes);

#endif /* VBTS_VMM_VCPU_INT_H */
