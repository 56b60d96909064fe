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
};

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

/* Modes returned by VBTS_KVM_CAP_X86_BTS. */
#define VBTS_KVM_X86_BTS_MODE_RING (1U << 0)
#define VBTS_KVM_X86_BTS_MODE_STEP (1U << 1)
#define VBTS_KVM_X86_BTS_MODE_GUEST (1U << 2)
#define VBTS_KVM_X86_BTS_MODE_HW (1U << 3)

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

struct vbts_kvm_x86_bts_config {
	__u32 mode;
	__u32 cpl;
	__u64 nr_records;
	__u64 watermark;
	__u64 flags;
	__u64 reserved[4];
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

#endif /* VBTS_KVM_BTS_UAPI_H */
