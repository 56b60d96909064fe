// SPDX-License-Identifier: GPL-2.0
/*
 * uapi-check.c - compile-time proof that the patched <linux/kvm.h> ring UAPI and
 * include/vbts/ring-format.h use the same numbers and layouts, and that the VMM's own
 * copy of the ioctl UAPI, include/vbts/kvm-bts-uapi.h, equals the patched header.
 */
#include <stddef.h>
#include <linux/kvm.h>

#include "vbts/kvm-bts-uapi.h"
#include "vbts/ring-format.h"

#define SAME(a, b) _Static_assert((unsigned long long)(a) == (unsigned long long)(b), #a " != " #b)

/* records */
SAME(sizeof(struct kvm_x86_bts_record), sizeof(struct vbts_record));
SAME(offsetof(struct kvm_x86_bts_record, from), offsetof(struct vbts_record, from));
SAME(offsetof(struct kvm_x86_bts_record, to), offsetof(struct vbts_record, to));
SAME(offsetof(struct kvm_x86_bts_record, flags), offsetof(struct vbts_record, flags));

/* escapes */
SAME(KVM_X86_BTS_ESCAPE, VBTS_ESCAPE);
SAME(KVM_X86_BTS_ESC_KIND_MASK, VBTS_ESC_KIND_MASK);
SAME(KVM_X86_BTS_ESC_AUX_SHIFT, VBTS_ESC_AUX_SHIFT);
SAME(KVM_X86_BTS_ESC_TASK_DEPART, VBTS_ESC_TASK_DEPART);
SAME(KVM_X86_BTS_ESC_TASK_ARRIVE, VBTS_ESC_TASK_ARRIVE);
SAME(KVM_X86_BTS_ESC_LOST, VBTS_ESC_LOST);
SAME(KVM_X86_BTS_ESC_START, VBTS_ESC_START);
SAME(KVM_X86_BTS_ESC_STOP, VBTS_ESC_STOP);

/* START aux: the CPL filter */
SAME(KVM_X86_BTS_CPL_USER, VBTS_START_CPL_USER);
SAME(KVM_X86_BTS_CPL_KERNEL, VBTS_START_CPL_KERNEL);

/* ring modes */
SAME(KVM_X86_BTS_RING_WRAP, VBTS_RING_WRAP);
SAME(KVM_X86_BTS_RING_STREAM, VBTS_RING_STREAM);
SAME(KVM_X86_BTS_RING_HEADER_SIZE, VBTS_RING_HEADER_SIZE);

/* CR3 values in task escapes: the vbts mask, PCID and NOFLUSH cleared */
SAME(~(0xfffULL | (1ULL << 63)), VBTS_CR3_MASK);

#ifdef KVM_X86_BTS_REC_KIND_SHIFT
/* branch record annotations (software branch stepping) */
SAME(KVM_X86_BTS_REC_CPL_SHIFT, VBTS_REC_CPL_SHIFT);
SAME(KVM_X86_BTS_REC_CPL_VALID, VBTS_REC_CPL_VALID);
SAME(KVM_X86_BTS_REC_KIND_SHIFT, VBTS_REC_KIND_SHIFT);
SAME(KVM_X86_BTS_REC_VECTOR_SHIFT, VBTS_REC_VECTOR_SHIFT);
SAME(KVM_X86_BTS_REC_VECTOR_VALID, VBTS_REC_VECTOR_VALID);
SAME(KVM_X86_BTS_ESC_GAP_BEGIN, VBTS_ESC_GAP_BEGIN);
SAME(KVM_X86_BTS_ESC_GAP_END, VBTS_ESC_GAP_END);
SAME(KVM_X86_BTS_ESC_TIME, VBTS_ESC_TIME);
SAME(KVM_X86_BTS_ESC_THREAD, VBTS_ESC_THREAD);
SAME(KVM_X86_BTS_ESC_ENTRY, VBTS_ESC_ENTRY);
SAME(KVM_X86_BTS_ENTRY_FIRST, VBTS_ENTRY_FIRST);
SAME(KVM_X86_BTS_ENTRY_EXEC, VBTS_ENTRY_EXEC);
SAME(KVM_X86_BTS_ENTRY_SIGNAL, VBTS_ENTRY_SIGNAL);
SAME(KVM_X86_BTS_ENTRY_SIGRETURN, VBTS_ENTRY_SIGRETURN);
SAME(KVM_X86_BTS_GAP_UNKNOWN, VBTS_GAP_UNKNOWN);
SAME(KVM_X86_BTS_GAP_IDT, VBTS_GAP_IDT);
SAME(KVM_X86_BTS_GAP_SYSCALL, VBTS_GAP_SYSCALL);
SAME(KVM_X86_BTS_BR_UNKNOWN, VBTS_BR_UNKNOWN);
SAME(KVM_X86_BTS_BR_JCC, VBTS_BR_JCC);
SAME(KVM_X86_BTS_BR_JMP, VBTS_BR_JMP);
SAME(KVM_X86_BTS_BR_JMP_IND, VBTS_BR_JMP_IND);
SAME(KVM_X86_BTS_BR_CALL, VBTS_BR_CALL);
SAME(KVM_X86_BTS_BR_CALL_IND, VBTS_BR_CALL_IND);
SAME(KVM_X86_BTS_BR_RET, VBTS_BR_RET);
SAME(KVM_X86_BTS_BR_FAR_JMP, VBTS_BR_FAR_JMP);
SAME(KVM_X86_BTS_BR_FAR_CALL, VBTS_BR_FAR_CALL);
SAME(KVM_X86_BTS_BR_FAR_RET, VBTS_BR_FAR_RET);
SAME(KVM_X86_BTS_BR_LOOP, VBTS_BR_LOOP);
SAME(KVM_X86_BTS_BR_JRCXZ, VBTS_BR_JRCXZ);
SAME(KVM_X86_BTS_BR_INT, VBTS_BR_INT);
SAME(KVM_X86_BTS_BR_SYSCALL, VBTS_BR_SYSCALL);
SAME(KVM_X86_BTS_BR_SYSRET, VBTS_BR_SYSRET);
SAME(KVM_X86_BTS_BR_IRET, VBTS_BR_IRET);
SAME(KVM_X86_BTS_BR_EXCEPTION, VBTS_BR_EXCEPTION);
SAME(KVM_X86_BTS_BR_INTERRUPT, VBTS_BR_INTERRUPT);
SAME(KVM_X86_BTS_BR_OTHER, VBTS_BR_OTHER);
#endif

/* vbts/kvm-bts-uapi.h: every number and every field offset of the patched header */
#define SAME_V(name) SAME(name, VBTS_##name)
#define SAME_FIELD(s, f) \
	SAME(offsetof(struct s, f), offsetof(struct vbts_##s, f)); \
	SAME(sizeof(((struct s *)0)->f), sizeof(((struct vbts_##s *)0)->f))
#define SAME_SIZE(s) SAME(sizeof(struct s), sizeof(struct vbts_##s))

SAME_V(KVM_CAP_X86_CR3_TRACE);
SAME_V(KVM_CAP_X86_BTS);
SAME_V(KVM_EXIT_X86_CR3_LOAD);
SAME_V(KVM_EXIT_X86_BTS);
SAME(offsetof(struct kvm_run, x86_cr3_load), offsetof(struct kvm_run, padding));
SAME(offsetof(struct kvm_run, x86_bts), offsetof(struct kvm_run, padding));
SAME(sizeof(((struct kvm_run *)0)->x86_cr3_load), sizeof(struct vbts_kvm_x86_cr3_load));
SAME(sizeof(((struct kvm_run *)0)->x86_bts), sizeof(struct vbts_kvm_x86_bts_exit));
SAME(offsetof(struct kvm_run, x86_cr3_load.old_cr3) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_cr3_load, old_cr3));
SAME(offsetof(struct kvm_run, x86_cr3_load.new_cr3) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_cr3_load, new_cr3));
SAME(offsetof(struct kvm_run, x86_cr3_load.guest_tsc) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_cr3_load, guest_tsc));
SAME(offsetof(struct kvm_run, x86_cr3_load.flags) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_cr3_load, flags));
SAME(offsetof(struct kvm_run, x86_cr3_load.new_ctx) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_cr3_load, new_ctx));
SAME_V(KVM_X86_CR3_LOAD_CTX);
SAME(offsetof(struct kvm_run, x86_bts.head) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_bts_exit, head));
SAME(offsetof(struct kvm_run, x86_bts.tail) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_bts_exit, tail));
SAME(offsetof(struct kvm_run, x86_bts.lost) - offsetof(struct kvm_run, padding),
     offsetof(struct vbts_kvm_x86_bts_exit, lost));

SAME_V(KVM_X86_CR3_TRACE_MAX);
SAME_V(KVM_X86_CR3_TRACE_ENABLE);
SAME_V(KVM_X86_CR3_TRACE_EXIT);
SAME_V(KVM_X86_CR3_TRACE_KPTI);
SAME_SIZE(kvm_x86_cr3_trace);
SAME_FIELD(kvm_x86_cr3_trace, flags);
SAME_FIELD(kvm_x86_cr3_trace, nr_cr3);
SAME_FIELD(kvm_x86_cr3_trace, cr3);
SAME_V(KVM_X86_CR3_TRACE_CAP_QUIET);
SAME_V(KVM_X86_CR3_QUIET_MAX);
SAME_V(KVM_X86_CR3_QUIET_ADD);
SAME_V(KVM_X86_CR3_QUIET_CLEAR);
SAME_V(KVM_X86_SET_CR3_QUIET);
SAME_SIZE(kvm_x86_cr3_quiet);
SAME_FIELD(kvm_x86_cr3_quiet, flags);
SAME_FIELD(kvm_x86_cr3_quiet, ctx_stride);
SAME_FIELD(kvm_x86_cr3_quiet, ctx_count);
SAME_FIELD(kvm_x86_cr3_quiet, pad);
SAME_FIELD(kvm_x86_cr3_quiet, ctx_offset);
SAME_FIELD(kvm_x86_cr3_quiet, cr3);
SAME_FIELD(kvm_x86_cr3_quiet, ctx);

SAME_V(KVM_X86_BTS_MODE_RING);
SAME_V(KVM_X86_BTS_MODE_STEP);
SAME_V(KVM_X86_BTS_MODE_GUEST);
SAME_V(KVM_X86_BTS_MODE_HW);
SAME_V(KVM_X86_BTS_RING_PAGE_OFFSET);
SAME_V(KVM_X86_BTS_RING_HEADER_SIZE);
SAME_V(KVM_X86_BTS_MAX_RECORDS);
SAME_V(KVM_X86_BTS_RING_WRAP);
SAME_V(KVM_X86_BTS_RING_STREAM);
SAME_V(KVM_X86_BTS_RING_F_ENABLED);
SAME_V(KVM_X86_BTS_RING_F_GUEST_TSC);
SAME_V(KVM_X86_BTS_CPL_USER);
SAME_V(KVM_X86_BTS_CPL_KERNEL);
SAME_V(KVM_X86_BTS_CFG_BRANCHES);
SAME_V(KVM_X86_BTS_CFG_TASK);
SAME_V(KVM_X86_BTS_CFG_THREADS);
SAME_V(KVM_X86_BTS_MODE_RETURNS);

SAME_SIZE(kvm_x86_bts_ring_header);
SAME_FIELD(kvm_x86_bts_ring_header, head);
SAME_FIELD(kvm_x86_bts_ring_header, tail);
SAME_FIELD(kvm_x86_bts_ring_header, lost);
SAME_FIELD(kvm_x86_bts_ring_header, flags);
SAME_FIELD(kvm_x86_bts_ring_header, record_size);
SAME_FIELD(kvm_x86_bts_ring_header, nr_records);

SAME_SIZE(kvm_x86_bts_config);
SAME_FIELD(kvm_x86_bts_config, mode);
SAME_FIELD(kvm_x86_bts_config, cpl);
SAME_FIELD(kvm_x86_bts_config, nr_records);
SAME_FIELD(kvm_x86_bts_config, watermark);
SAME_FIELD(kvm_x86_bts_config, flags);
SAME_FIELD(kvm_x86_bts_config, thread_current);
SAME_FIELD(kvm_x86_bts_config, thread_pid);
SAME_FIELD(kvm_x86_bts_config, thread_tgid);
SAME_FIELD(kvm_x86_bts_config, reserved);

SAME_SIZE(kvm_x86_bts_status);
SAME_FIELD(kvm_x86_bts_status, head);
SAME_FIELD(kvm_x86_bts_status, tail);
SAME_FIELD(kvm_x86_bts_status, lost);
SAME_FIELD(kvm_x86_bts_status, nr_records);
SAME_FIELD(kvm_x86_bts_status, watermark);
SAME_FIELD(kvm_x86_bts_status, flags);
SAME_FIELD(kvm_x86_bts_status, mode);
SAME_FIELD(kvm_x86_bts_status, cpl);
SAME_FIELD(kvm_x86_bts_status, pad);
SAME_FIELD(kvm_x86_bts_status, reserved);

SAME_SIZE(kvm_x86_bts_drain);
SAME_FIELD(kvm_x86_bts_drain, addr);
SAME_FIELD(kvm_x86_bts_drain, max_records);
SAME_FIELD(kvm_x86_bts_drain, nr_records);
SAME_FIELD(kvm_x86_bts_drain, first);

SAME_V(KVM_X86_SET_CR3_TRACE);
SAME_V(KVM_X86_BTS_CONFIGURE);
SAME_V(KVM_X86_BTS_ENABLE);
SAME_V(KVM_X86_BTS_DISABLE);
SAME_V(KVM_X86_BTS_STATUS);
SAME_V(KVM_X86_BTS_DRAIN);
SAME_V(KVM_X86_BTS_CLEAR);
SAME_V(KVM_X86_BTS_FORGET_CR3);

/* attaching a tracer from another process */
SAME_V(KVM_X86_BTS_MODE_ATTACH);
SAME_V(KVM_X86_BTS_TRACER_F_PENDING);
SAME_V(KVM_X86_BTS_TRACER_F_VM_GONE);
SAME_SIZE(kvm_x86_bts_attach);
SAME_FIELD(kvm_x86_bts_attach, pidfd);
SAME_FIELD(kvm_x86_bts_attach, vm_fd);
SAME_FIELD(kvm_x86_bts_attach, flags);
SAME_FIELD(kvm_x86_bts_attach, pad);
SAME_SIZE(kvm_x86_bts_tracer_info);
SAME_FIELD(kvm_x86_bts_tracer_info, nr_vcpus);
SAME_FIELD(kvm_x86_bts_tracer_info, max_ids);
SAME_FIELD(kvm_x86_bts_tracer_info, ids_addr);
SAME_FIELD(kvm_x86_bts_tracer_info, mmap_stride);
SAME_FIELD(kvm_x86_bts_tracer_info, flags);
SAME_FIELD(kvm_x86_bts_tracer_info, pad);
SAME_FIELD(kvm_x86_bts_tracer_info, reserved);
SAME_SIZE(kvm_x86_bts_tracer_config);
SAME_FIELD(kvm_x86_bts_tracer_config, vcpu);
SAME_FIELD(kvm_x86_bts_tracer_config, cr3_flags);
SAME_FIELD(kvm_x86_bts_tracer_config, config);
SAME_FIELD(kvm_x86_bts_tracer_config, nr_cr3);
SAME_FIELD(kvm_x86_bts_tracer_config, pad);
SAME_FIELD(kvm_x86_bts_tracer_config, cr3);
SAME_SIZE(kvm_x86_bts_tracer_status);
SAME_FIELD(kvm_x86_bts_tracer_status, vcpu);
SAME_FIELD(kvm_x86_bts_tracer_status, flags);
SAME_FIELD(kvm_x86_bts_tracer_status, error);
SAME_FIELD(kvm_x86_bts_tracer_status, pad);
SAME_FIELD(kvm_x86_bts_tracer_status, status);
SAME_SIZE(kvm_x86_bts_tracer_drain);
SAME_FIELD(kvm_x86_bts_tracer_drain, vcpu);
SAME_FIELD(kvm_x86_bts_tracer_drain, pad);
SAME_FIELD(kvm_x86_bts_tracer_drain, drain);
SAME_V(KVM_X86_BTS_ATTACH);
SAME_V(KVM_X86_BTS_TRACER_INFO);
SAME_V(KVM_X86_BTS_TRACER_CONFIGURE);
SAME_V(KVM_X86_BTS_TRACER_ENABLE);
SAME_V(KVM_X86_BTS_TRACER_DISABLE);
SAME_V(KVM_X86_BTS_TRACER_STATUS);
SAME_V(KVM_X86_BTS_TRACER_DRAIN);
SAME_V(KVM_X86_BTS_TRACER_CLEAR);

/* reading guest memory through the tracer */
SAME_SIZE(kvm_x86_bts_tracer_read);
SAME_FIELD(kvm_x86_bts_tracer_read, gpa);
SAME_FIELD(kvm_x86_bts_tracer_read, addr);
SAME_FIELD(kvm_x86_bts_tracer_read, len);
SAME_FIELD(kvm_x86_bts_tracer_read, flags);
SAME_FIELD(kvm_x86_bts_tracer_read, pad);
SAME_V(KVM_X86_BTS_TRACER_READ_MAX);
SAME_V(KVM_X86_BTS_TRACER_READ_GPA);

int main(void)
{
	return 0;
}
