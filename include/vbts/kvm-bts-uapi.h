/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-bts-uapi.h - the branch-trace additions of kvm-patches/ to <linux/kvm.h>, for a VMM built
 * against stock kernel headers.
 *
 * Every name here is the patched header's name with a VBTS_ prefix (struct kvm_x86_bts_config
 * is struct vbts_kvm_x86_bts_config), so both can be included together.
 * kvm-patches/uapi-check.c compiles this header against the patched <linux/kvm.h> and fails the
 * build when a number or a layout differs: this file is the only copy in the VMM.
 * The record layout, escape kinds, gap reasons and branch kinds are those of
 * vbts/ring-format.h (checked by the same file).
 */
#ifndef VBTS_KVM_BTS_UAPI_H
#define VBTS_KVM_BTS_UAPI_H

#include <linux/kvm.h>
#include <linux/types.h>

/* Capabilities (KVM_CHECK_EXTENSION on /dev/kvm or the VM fd). */
#define VBTS_KVM_CAP_X86_CR3_TRACE 1000
#define VBTS_KVM_CAP_X86_BTS 1001

/* Exit reasons. */
#define VBTS_KVM_EXIT_X86_CR3_LOAD 1000
#define VBTS_KVM_EXIT_X86_BTS 1001

/* kvm_run union member of VBTS_KVM_EXIT_X86_CR3_LOAD, at the union's offset (run->padding). */
struct vbts_kvm_x86_cr3_load {
	__u64 old_cr3;
	__u64 new_cr3;
	__u64 guest_tsc;
	__u64 flags;   /* VBTS_KVM_X86_CR3_LOAD_*; 0 from a series before its quiet set */
	__u64 new_ctx; /* with VBTS_KVM_X86_CR3_LOAD_CTX: the new address space's context */
};

/* vbts_kvm_x86_cr3_load.flags: new_ctx is the context the kernel read */
#define VBTS_KVM_X86_CR3_LOAD_CTX (1ULL << 0)

/* kvm_run union member of VBTS_KVM_EXIT_X86_BTS, at the union's offset (run->padding). */
struct vbts_kvm_x86_bts_exit {
	__u64 head;
	__u64 tail;
	__u64 lost;
};

/* CR3 load tracing (VBTS_KVM_CAP_X86_CR3_TRACE). */
#define VBTS_KVM_X86_CR3_TRACE_MAX 64
#define VBTS_KVM_X86_CR3_TRACE_ENABLE (1U << 0)
#define VBTS_KVM_X86_CR3_TRACE_EXIT (1U << 1)
#define VBTS_KVM_X86_CR3_TRACE_KPTI (1U << 2)

struct vbts_kvm_x86_cr3_trace {
	__u32 flags;
	__u32 nr_cr3;
	__u64 cr3[VBTS_KVM_X86_CR3_TRACE_MAX];
};

/*
 * The quiet set (VBTS_KVM_CAP_X86_CR3_TRACE returns a mask with ..._CAP_QUIET): a CR3 load from
 * one of its address spaces to another makes no exit. Each is kept with the context id the
 * guest kernel gave it, read at each load from its per-CPU area: ctx_offset + asid * ctx_stride
 * from the GS base (asid = PCID - 1 with CR4.PCIDE, else 0, below ctx_count): Linux's
 * cpu_tlbstate.ctxs[asid].ctx_id, unique per mm, so that a page table a new process reuses is
 * not quiet. The layout is given with each call.
 */
#define VBTS_KVM_X86_CR3_TRACE_CAP_QUIET (1U << 1)
#define VBTS_KVM_X86_CR3_QUIET_MAX 128
#define VBTS_KVM_X86_CR3_QUIET_ADD (1U << 0)
#define VBTS_KVM_X86_CR3_QUIET_CLEAR (1U << 1)

struct vbts_kvm_x86_cr3_quiet {
	__u32 flags;
	__u32 ctx_stride;
	__u32 ctx_count;
	__u32 pad;
	__u64 ctx_offset;
	__u64 cr3;
	__u64 ctx;
};

/* Modes returned by VBTS_KVM_CAP_X86_BTS. */
#define VBTS_KVM_X86_BTS_MODE_RING (1U << 0)
#define VBTS_KVM_X86_BTS_MODE_STEP (1U << 1)
#define VBTS_KVM_X86_BTS_MODE_GUEST (1U << 2)
#define VBTS_KVM_X86_BTS_MODE_HW (1U << 3)
#define VBTS_KVM_X86_BTS_MODE_ATTACH (1U << 4)
/* VBTS_KVM_X86_BTS_CFG_THREADS: the guest kernel is never stepped, threads are named. */
#define VBTS_KVM_X86_BTS_MODE_RETURNS (1U << 5)

/* The ring, mmap'd from the vCPU fd at this page offset: a header page, then the records. */
#define VBTS_KVM_X86_BTS_RING_PAGE_OFFSET 1000
#define VBTS_KVM_X86_BTS_RING_HEADER_SIZE 4096
#define VBTS_KVM_X86_BTS_MAX_RECORDS (1ULL << 24)

#define VBTS_KVM_X86_BTS_RING_WRAP 0
#define VBTS_KVM_X86_BTS_RING_STREAM 1

#define VBTS_KVM_X86_BTS_RING_F_ENABLED (1U << 0)
/* Escape record times are guest TSC values (56 bits in aux). */
#define VBTS_KVM_X86_BTS_RING_F_GUEST_TSC (1U << 1)

struct vbts_kvm_x86_bts_ring_header {
	__u64 head;
	__u64 tail;
	__u64 lost;
	__u32 flags;
	__u32 record_size;
	__u64 nr_records;
};

/* CPL filter of the configuration. */
#define VBTS_KVM_X86_BTS_CPL_USER (1U << 0)
#define VBTS_KVM_X86_BTS_CPL_KERNEL (1U << 1)

/* Record guest branches by stepping in the kernel (VBTS_KVM_X86_BTS_MODE_STEP). */
#define VBTS_KVM_X86_BTS_CFG_BRANCHES (1ULL << 0)
/*
 * The ring is enabled only while the tasks it records run: with the kernel in the CPL filter,
 * interrupt and NMI handlers run unstepped in a gap (patch "interrupt and NMI handlers unstepped
 * when recording a task's kernel code").
 */
#define VBTS_KVM_X86_BTS_CFG_TASK (1ULL << 1)
/*
 * VBTS_KVM_X86_BTS_MODE_RETURNS, the CPL filter at user mode only: the guest kernel runs
 * unstepped; each return to user mode is caught at its IRET or SYSRET, where the thread is
 * named (THREAD escape) from its current-task pointer, thread_current bytes into the per-CPU
 * area, and the 32-bit pid and tgid at thread_pid and thread_tgid in the task; an ENTRY escape
 * marks a thread that comes back elsewhere than where it left.
 */
#define VBTS_KVM_X86_BTS_CFG_THREADS (1ULL << 2)

struct vbts_kvm_x86_bts_config {
	__u32 mode;
	__u32 cpl;
	__u64 nr_records;
	__u64 watermark;
	__u64 flags;
	__u64 thread_current;
	__u32 thread_pid;
	__u32 thread_tgid;
	__u64 reserved[2];
};

struct vbts_kvm_x86_bts_status {
	__u64 head;
	__u64 tail;
	__u64 lost;
	__u64 nr_records;
	__u64 watermark;
	__u32 flags;
	__u32 mode;
	__u32 cpl;
	__u32 pad;
	__u64 reserved[4];
};

struct vbts_kvm_x86_bts_drain {
	__u64 addr;
	__u64 max_records;
	__u64 nr_records;
	__u64 first;
};

/* vCPU ioctls. */
#define VBTS_KVM_X86_SET_CR3_TRACE _IOW(KVMIO, 0xf0, struct vbts_kvm_x86_cr3_trace)
#define VBTS_KVM_X86_BTS_CONFIGURE _IOW(KVMIO, 0xf1, struct vbts_kvm_x86_bts_config)
#define VBTS_KVM_X86_BTS_ENABLE _IO(KVMIO, 0xf2)
#define VBTS_KVM_X86_BTS_DISABLE _IO(KVMIO, 0xf3)
#define VBTS_KVM_X86_BTS_STATUS _IOR(KVMIO, 0xf4, struct vbts_kvm_x86_bts_status)
#define VBTS_KVM_X86_BTS_DRAIN _IOWR(KVMIO, 0xf5, struct vbts_kvm_x86_bts_drain)
#define VBTS_KVM_X86_BTS_CLEAR _IO(KVMIO, 0xf6)
#define VBTS_KVM_X86_BTS_FORGET_CR3 _IOW(KVMIO, 0xf7, __u64)
#define VBTS_KVM_X86_SET_CR3_QUIET _IOW(KVMIO, 0xee, struct vbts_kvm_x86_cr3_quiet)

/*
 * Tracing a VM that another process runs (VBTS_KVM_X86_BTS_MODE_ATTACH).
 *
 * VBTS_KVM_X86_BTS_ATTACH is a /dev/kvm ioctl: vm_fd is the VMM's VM fd copied into the caller's
 * own fd table with pidfd_getfd(2) (the ptrace ATTACH check), pidfd names the VMM (the VM must
 * be its address space's); CAP_PERFMON or CAP_SYS_ADMIN. It returns a tracer fd (O_CLOEXEC).
 * One tracer per VM, and none while the VMM uses the rings itself: -EBUSY.
 * Tracer fd ioctls name a vCPU by index (0 .. nr_vcpus - 1); ENABLE, DISABLE and CLEAR take the
 * index as the ioctl argument. Changes are applied by the vCPU before its next entry (STATUS
 * flag VBTS_KVM_X86_BTS_TRACER_F_PENDING until then). mmap(tracer fd, index * mmap_stride) maps
 * that vCPU's ring (same header and records as the vCPU fd's ring). poll(): EPOLLIN when a ring
 * holds >= its watermark (>= 1 record for watermark 0), EPOLLHUP when the VM is gone. Closing the
 * tracer (last reference, mappings included) stops stepping on every vCPU; the rings keep their
 * records for the next tracer.
 */
struct vbts_kvm_x86_bts_attach {
	__u32 pidfd;
	__u32 vm_fd;
	__u32 flags;
	__u32 pad;
};

#define VBTS_KVM_X86_BTS_TRACER_F_PENDING (1U << 0)
#define VBTS_KVM_X86_BTS_TRACER_F_VM_GONE (1U << 1)

struct vbts_kvm_x86_bts_tracer_info {
	__u32 nr_vcpus;
	__u32 max_ids;
	__u64 ids_addr;
	__u64 mmap_stride;
	__u32 flags;
	__u32 pad;
	__u64 reserved[4];
};

/* cr3_flags: VBTS_KVM_X86_CR3_TRACE_ENABLE and _KPTI only (never _EXIT). */
struct vbts_kvm_x86_bts_tracer_config {
	__u32 vcpu;
	__u32 cr3_flags;
	struct vbts_kvm_x86_bts_config config;
	__u32 nr_cr3;
	__u32 pad;
	__u64 cr3[VBTS_KVM_X86_CR3_TRACE_MAX];
};

struct vbts_kvm_x86_bts_tracer_status {
	__u32 vcpu;
	__u32 flags;
	__s32 error;
	__u32 pad;
	struct vbts_kvm_x86_bts_status status;
};

struct vbts_kvm_x86_bts_tracer_drain {
	__u32 vcpu;
	__u32 pad;
	struct vbts_kvm_x86_bts_drain drain;
};

#define VBTS_KVM_X86_BTS_ATTACH _IOW(KVMIO, 0xf8, struct vbts_kvm_x86_bts_attach)
#define VBTS_KVM_X86_BTS_TRACER_INFO _IOWR(KVMIO, 0xf9, struct vbts_kvm_x86_bts_tracer_info)
#define VBTS_KVM_X86_BTS_TRACER_CONFIGURE _IOW(KVMIO, 0xfa, struct vbts_kvm_x86_bts_tracer_config)
#define VBTS_KVM_X86_BTS_TRACER_ENABLE _IO(KVMIO, 0xfb)
#define VBTS_KVM_X86_BTS_TRACER_DISABLE _IO(KVMIO, 0xfc)
#define VBTS_KVM_X86_BTS_TRACER_STATUS _IOWR(KVMIO, 0xfd, struct vbts_kvm_x86_bts_tracer_status)
#define VBTS_KVM_X86_BTS_TRACER_DRAIN _IOWR(KVMIO, 0xfe, struct vbts_kvm_x86_bts_tracer_drain)
#define VBTS_KVM_X86_BTS_TRACER_CLEAR _IO(KVMIO, 0xff)

/*
 * VBTS_KVM_X86_BTS_TRACER_READ_GPA (tracer fd): len bytes (1 to VBTS_KVM_X86_BTS_TRACER_READ_MAX)
 * of guest physical memory at gpa, through the VM's user memory slots, to the buffer at addr;
 * flags and pad 0. All or nothing: 0; -ENOENT when part of the range is in no memory slot (a
 * hole, MMIO), -EFAULT when a page cannot be read, -ESRCH once the VMM's address space is gone,
 * -ENOTTY from a kernel without it. Nothing is ever written to guest memory.
 */
struct vbts_kvm_x86_bts_tracer_read {
	__u64 gpa;
	__u64 addr;
	__u32 len;
	__u32 flags;
	__u64 pad;
};

#define VBTS_KVM_X86_BTS_TRACER_READ_MAX (64U << 10)
#define VBTS_KVM_X86_BTS_TRACER_READ_GPA _IOW(KVMIO, 0xef, struct vbts_kvm_x86_bts_tracer_read)

#endif /* VBTS_KVM_BTS_UAPI_H */
