/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vm.h - one virtual machine: KVM, guest memory, vCPUs, buses and devices, and the stop
 * request that ends a run with an exit status.
 *
 * Locking: @lock protects @stop_requested, @exit_status and @nr_live; vCPU threads signal
 * @cond when they change. Everything else is set up by the main thread before the vCPU
 * threads start and only read by them afterwards (counters are updated atomically).
 */
#ifndef VBTS_VMM_VM_H
#define VBTS_VMM_VM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "crash-report.h"
#include "debug-exit.h"
#include "iobus.h"
#include "kvm.h"
#include "pvpanic.h"
#include "tracer.h"

struct agent;
struct guest_memory;
struct pc;
struct uart;
struct vcpu;

/**
 * struct vm_vcpu_ops - what the VM asks of its vCPUs. vm.c sits beneath vcpu.c and reaches the
 * vCPUs through these alone; vcpu.c sets them on the VM of every vCPU it sets up.
 * @stop:       stop the vCPU for good, kicking it out of KVM_RUN (vcpu__request(VCPU_STOPPED))
 * @post_panic: the guest kernel panicked on the vCPU (vcpu__post_panic())
 */
struct vm_vcpu_ops {
	void (*stop)(struct vcpu *v);
	void (*post_panic)(struct vcpu *v);
};

/**
 * struct vm_debug_ops - a debugger of the VM's vCPUs (vbts run --gdb); every call is on the
 * vCPU's own thread.
 * @guest_debug: before a KVM_RUN of a vCPU no tracer runs: the KVM_GUESTDBG_* bits the
 *               debugger needs for it (KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP to see
 *               every instruction), 0 for none; the vCPU consumes the debug exits it asked for
 * @exited:      after an exit was handled and the vCPU goes on: @run's registers (its
 *               KVM_SYNC_X86_REGS when @run->kvm_valid_regs has them) or @fd's say where it
 *               is; the debugger may ask every vCPU to pause
 */
struct vm_debug_ops {
	uint32_t (*guest_debug)(void *ctx, unsigned int vcpu);
	void (*exited)(void *ctx, unsigned int vcpu, int fd, struct kvm_run *run);
};

/**
 * struct vm - a VM and what its vCPU threads share.
 * @kvm:            /dev/kvm and the VM fd
 * @mem:            guest RAM
 * @nr_vcpus:       vCPUs
 * @vcpus:          [nr_vcpus]
 * @vcpu_ops:       what vm.c asks of the vCPUs of @vcpus, set by vcpu.c
 * @pio, @mmio:     the buses
 * @uart:           the console
 * @dexit:          the debug-exit port
 * @pvpanic:        the pvpanic port
 * @agent:          the agent channel, NULL when absent
 * @pc:             the PC platform of an operating system (pc.h), NULL for bare guests: then
 *                  a HLT halts the vCPU for good and a triple fault is a crash
 * @platform_init_vcpu: what the platform's firmware leaves in a new vCPU, called by
 *                  vcpu__create() with its fd (pc__init_vcpu(), set by pc__create()), NULL
 *                  for bare guests
 * @tracer:         tracer backend, NULL when not tracing
 * @caps:           host capabilities handed to the tracer
 * @cpl:            the tracer's CPL filter
 * @start_ns:       CLOCK_MONOTONIC when the run started
 * @ring_records:   records per ring file, handed to the tracer
 * @tasks:          a Linux guest's processes (vmm/record/guest-tasks.h), handed to the
 *                  tracer; NULL for other guests
 * @guest_bts:      guest-visible BTS emulated by the VMM (vmm/record/guest-bts.h): CPUID DS
 *                  bits, MISC_ENABLE, DEBUGCTL and DS_AREA exits, records into the guest's
 *                  buffer
 * @guest_bts_kvm:  guest-visible BTS virtualized by the kernel (kvm backend, kvm-patches/
 *                  patch 7): the VMM sets the CPUID DS bits, KVM does the rest
 * @debug:          the debugger, or NULL (set before the vCPU threads start)
 * @debug_ctx:      its argument
 * @debug_hold:     vCPUs start paused (vbts run --gdb-wait): the debugger resumes them
 * @lock, @cond:    see the file comment
 * @stop_requested: the run is over; vCPUs stop at their next exit
 * @exit_status:    the process exit status of the run (first stop request wins)
 * @nr_live:        vCPUs still running guest code (not halted, not parked)
 */
struct vm {
	struct kvm kvm;
	struct guest_memory *mem;
	unsigned int nr_vcpus;
	struct vcpu **vcpus;
	const struct vm_vcpu_ops *vcpu_ops;
	struct io_bus pio;
	struct io_bus mmio;
	struct uart *uart;
	struct debug_exit dexit;
	struct pvpanic pvpanic;
	struct agent *agent;
	struct pc *pc;
	int (*platform_init_vcpu)(int vcpu_fd);
	const struct tracer_ops *tracer;
	struct tracer_caps caps;
	enum vbts_cpl_filter cpl;
	uint64_t start_ns;
	uint64_t ring_records;
	struct guest_tasks *tasks;
	bool guest_bts;
	bool guest_bts_kvm;
	const char *crash_dir;
	/* Before a kernel crash's report (panic, triple fault): save the guest kernel's symbols
	 * into @crash_dir for the report's kernel addresses; NULL for none. */
	void (*kernel_symbols)(struct vm *vm);
	unsigned int crash_branches;
	enum crash_action on_crash;
	const struct vm_debug_ops *debug;
	void *debug_ctx;
	bool debug_hold;
	unsigned int nr_crashes;
	bool panic_claimed;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop_requested;
	int exit_status;
	unsigned int nr_live;
};

/**
 * vm__init() - initialize the shared state of @vm (locks, buses); no KVM yet.
 * @vm: zeroed or not; fully overwritten
 */
void vm__init(struct vm *vm);

/**
 * vm__fini() - release what vm__init() set up.
 * @vm: vm
 */
void vm__fini(struct vm *vm);

/**
 * vm__request_stop() - end the run with @status (the first request wins) and kick every vCPU.
 * @vm:     vm
 * @status: process exit status
 */
void vm__request_stop(struct vm *vm, int status);

/**
 * vm__claim_panic() - claim the report of the guest's kernel panic: pvpanic, the guest's
 * panic_cpu and a reset after a panic all see the same panic, and one of them reports it.
 * @vm: vm
 *
 * Return: true for the first caller, false after.
 */
bool vm__claim_panic(struct vm *vm);

/**
 * vm__post_panic() - the guest kernel panicked on vCPU @index, as another thread learned (the
 * guest's panic_cpu, a reset after a panic): that vCPU's own thread writes the report and
 * carries out --on-crash when it next leaves KVM_RUN, or when it ends.
 * @vm:    vm
 * @index: the vCPU, < @vm->nr_vcpus
 */
void vm__post_panic(struct vm *vm, unsigned int index);

/**
 * vm__stop_requested() - whether the run is over.
 * @vm: vm
 *
 * Return: true once vm__request_stop() was called.
 */
bool vm__stop_requested(struct vm *vm);

/**
 * vm__vcpu_done() - a live vCPU stopped running guest code on its own (halted, failed).
 * @vm: vm
 *
 * When the last live vCPU is done, the run ends with status 0 unless a stop was requested.
 */
void vm__vcpu_done(struct vm *vm);

/**
 * vm__wait() - wait until the run is over, at most @slice_ns.
 * @vm:       vm
 * @slice_ns: nanoseconds to wait at most
 *
 * Return: the run's exit status once a stop was requested, -ETIMEDOUT when the slice passed
 * first (the run goes on).
 */
int vm__wait(struct vm *vm, uint64_t slice_ns);

#endif /* VBTS_VMM_VM_H */
