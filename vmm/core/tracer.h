/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracer.h - the contract between the vCPU exit loop and a tracer backend (step, kvm).
 *
 * The vCPU thread calls, for each vCPU it runs:
 *   ops->vcpu_init() once before the first KVM_RUN,
 *   then in its loop: ops->before_run(); KVM_RUN; ops->after_exit(); dispatch the exit,
 *   ops->vcpu_fini() once after the last KVM_RUN (or when the guest stops).
 * All callbacks run in the vCPU's own thread; a backend keeps per-vCPU state in @priv.
 */
#ifndef VBTS_VMM_TRACER_H
#define VBTS_VMM_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <linux/kvm.h>

#include "kvm-stats.h"

struct guest_bts;
struct guest_memory;
struct guest_tasks;
struct ring_writer;

/* Which CPLs are recorded (enum vbts_cpl_filter). */
enum vbts_cpl_filter {
	VBTS_CPL_ALL = 0,
	VBTS_CPL_USER = 1,   /* CPL > 0 */
	VBTS_CPL_KERNEL = 2, /* CPL 0 */
};

/**
 * struct tracer_caps - what the host's KVM can do, as established by `vbts probe`.
 * @step_cpl0: single-step works in CPL 0
 * @step_cpl3: single-step works in CPL 3
 * @sync_regs: KVM_CAP_SYNC_REGS works (regs/sregs valid in kvm_run after each exit)
 * @hwbp_cpl3: guest-debug hardware breakpoints fire at CPL 3 addresses
 * @user_msr:  KVM_CAP_X86_USER_SPACE_MSR with an MSR filter delivers KVM_EXIT_X86_WRMSR
 * @kvm_bts:   the patched KVM's branch trace ring records a probe guest's branches (kvm backend)
 * @kvm_bts_modes: KVM_CAP_X86_BTS's mode bits (VBTS_KVM_X86_BTS_MODE_*), 0 on stock KVM
 */
struct tracer_caps {
	bool step_cpl0;
	bool step_cpl3;
	bool sync_regs;
	bool hwbp_cpl3;
	bool user_msr;
	bool kvm_bts;
	unsigned int kvm_bts_modes;
};

/**
 * struct tracer_fault - a fault of user-mode code that a backend holds before the guest's
 * handler runs, for the VMM's debugger (vbts run --gdb).
 * @held:       the backend held it at its last before_run(): the vCPU did not run (its
 *              KVM_RUN returned at once), its registers are those of the fault
 * @vector:     the exception (X86_TRAP_PF ...)
 * @error_code: its error code
 * @address:    a page fault's linear address (CR2 once delivered)
 */
struct tracer_fault {
	bool held;
	uint8_t vector;
	uint32_t error_code;
	uint64_t address;
};

/**
 * struct tracer_vcpu - what a backend sees of one vCPU.
 * @index:  vCPU index
 * @fd:     the vCPU fd
 * @run:    its mmap'd struct kvm_run
 * @mem:    guest memory
 * @ring:   its ring writer (owned by the VMM, valid until after vcpu_fini); NULL when the host
 *          does not trace (the backend runs for @gbts alone)
 * @cpl:    enum vbts_cpl_filter
 * @caps:   host capabilities
 * @start_ns: CLOCK_MONOTONIC at trace start (escape timestamps are relative to it)
 * @ring_records: records per ring file (--ring), a size hint for a backend's own buffers
 * @tasks:  a Linux guest's processes (vmm/record/guest-tasks.h): the backend reports CR3
 *          loads to it and, with --task, records only the processes it selects; NULL for
 *          other guests
 * @gbts:   the guest's own BTS (vmm/record/guest-bts.h) when the VMM emulates it
 *          (--guest-bts with the step backend): the backend stores each branch the guest
 *          takes into the guest's buffer; NULL otherwise
 * @gbts_kvm_dropped: the kernel's count of the guest's BTS records it dropped (the vCPU stat
 *          guest_bts_dropped) when the kernel gives the guest its BTS (--guest-bts with the kvm
 *          backend); NULL otherwise. The backend tells each increase in the trace.
 * @gbts_kvm_told: the part of that count already told in the trace
 * @priv:   backend state
 * @regs_changed: the VMM's debugger changed the registers while the vCPU was paused: a
 *          backend that keeps them across runs reads them again (it clears this)
 * @fault_stop: the VMM's debugger wants the faults of user-mode code that the backend delivers
 *          itself held before the guest's handler runs (@fault); atomic, set by the debugger
 * @fault_pass: the debugger resumed the vCPU from a held fault: the backend delivers the fault
 *          at its next before_run() (atomic; the backend clears it there)
 * @fault:  the fault held at the last before_run(), read by the debugger after the exit
 * @stat_steps:   single-steps taken (KVM_EXIT_DEBUG exits consumed), for `vbts run --stats`
 * @stat_records: records the backend appended to @ring
 * @stat_gaps:    gaps written (GAP_BEGIN records)
 * @stat_cr3_exits: CR3 loads of the guest that exited to the VMM (kvm backend)
 * The backend updates the stat_ counters; the VMM reads them after vcpu_fini.
 */
struct tracer_vcpu {
	unsigned int index;
	int fd;
	struct kvm_run *run;
	const struct guest_memory *mem;
	struct ring_writer *ring;
	enum vbts_cpl_filter cpl;
	struct tracer_caps caps;
	uint64_t start_ns;
	uint64_t ring_records;
	struct guest_tasks *tasks;
	struct guest_bts *gbts;
	const struct kvm_stat *gbts_kvm_dropped;
	uint64_t gbts_kvm_told;
	void *priv;
	bool regs_changed;
	bool fault_stop;
	bool fault_pass;
	struct tracer_fault fault;
	uint64_t stat_steps;
	uint64_t stat_records;
	uint64_t stat_gaps;
	uint64_t stat_cr3_exits;
};

/* What tracer_ops.control() is asked to do (from the control socket, between two runs). */
enum tracer_control {
	TRACER_CTL_STOP = 1,  /* stop recording: a STOP record, then nothing until START */
	TRACER_CTL_START = 2, /* record again: a START record with the CPL filter */
	TRACER_CTL_CPL = 3,   /* @cpl of struct tracer_vcpu changed: told by a START record when
			       * recording */
};

/**
 * struct tracer_ops - a tracer backend.
 * @name:       "step", "kvm"
 * @vcpu_init:  set up; returns 0 or -errno
 * @before_run: called before every KVM_RUN (re-arm stepping); 0 or -errno
 * @after_exit: called after every KVM_RUN with run->exit_reason set; returns 1 when it
 *              consumed the exit (its own KVM_EXIT_DEBUG), 0 to let the VMM dispatch it,
 *              -errno on a fatal error
 * @vcpu_fini:  final records (STOP), free @priv
 * @control:    a recording change of the control socket (enum tracer_control), in the vCPU's
 *              thread between two runs; 0 or -errno. NULL: the VMM does it (the step backend
 *              records nothing while it has no ring)
 */
struct tracer_ops {
	const char *name;
	int (*vcpu_init)(struct tracer_vcpu *tv);
	int (*before_run)(struct tracer_vcpu *tv);
	int (*after_exit)(struct tracer_vcpu *tv);
	void (*vcpu_fini)(struct tracer_vcpu *tv);
	int (*control)(struct tracer_vcpu *tv, enum tracer_control what);
};

/**
 * tracer_vcpu__now_ns() - the time of escape records: CLOCK_MONOTONIC ns since trace start.
 * @tv: the vCPU
 *
 * Return: nanoseconds since @tv->start_ns (0 if the clock reads earlier).
 */
static inline uint64_t tracer_vcpu__now_ns(const struct tracer_vcpu *tv)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return t > tv->start_ns ? t - tv->start_ns : 0;
}

/* The single-step backend (vmm/step/). */
extern const struct tracer_ops step_tracer_ops;

/* The in-kernel backend for KVM with kvm-patches/ (vmm/kvm-backend/). */
extern const struct tracer_ops kvm_tracer_ops;

#endif /* VBTS_VMM_TRACER_H */
