/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring-format.h - the vbts ring file (v1) and record formats: the one definition shared by
 * the VMM, the decoder, the tests and the kvm-patches UAPI.
 *
 * A ring file is a 4 KiB header followed by `capacity` records of 24 bytes. All fields are
 * little endian. Record number `seq` (counting from 0 since the trace started) lives in slot
 * `seq % capacity`. The writer stores the record bytes first and only then publishes
 * `committed = seq + 1` with release ordering, so a reader (also one that opens the file after
 * the writer was killed) never takes a torn record for a committed one.
 *
 * Reader protocol for a live file: c1 = load_acquire(committed); copy the slots wanted;
 * c2 = load_acquire(committed). Records with seq in [max(c1 - capacity, c2 + 1 - capacity), c1)
 * are intact: everything older may have been overwritten while it was copied (wrap mode).
 * None is older than first_seq (a resized ring). A ring resized while it records is a new
 * file renamed over the old one: a reader that holds the old one finds it no longer grows,
 * and finds the new one under the name.
 */
#ifndef VBTS_RING_FORMAT_H
#define VBTS_RING_FORMAT_H

#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vbts formats are little endian and are accessed in place"
#endif

/* ---- records ---------------------------------------------------------------------------- */

/**
 * struct vbts_record - one 64-bit BTS record, exactly as the hardware stores it (SDM 17.4.8).
 * @from:  linear address of the branch instruction, or VBTS_ESCAPE for an escape record
 * @to:    linear address of the branch target (first instruction of a handler for events);
 *         for escape records the main payload
 * @flags: bit 4 is the hardware's "predicted" bit (never relied on); the other bits are
 *         reserved by hardware and carry vbts annotations (VBTS_REC_*) when vbts writes the
 *         record. For escape records: bits 0-7 the kind (enum vbts_escape_kind), bits 8-63
 *         a 56-bit auxiliary payload.
 */
struct vbts_record {
	uint64_t from;
	uint64_t to;
	uint64_t flags;
};

_Static_assert(sizeof(struct vbts_record) == 24, "BTS record is 24 bytes");

/* from == VBTS_ESCAPE marks a non-branch fact in the record stream. */
#define VBTS_ESCAPE (~0ULL)

/* Branch record flag annotations (bits the hardware leaves reserved). */
#define VBTS_REC_PREDICTED (1ULL << 4)   /* hardware only; vbts never sets it */
#define VBTS_REC_CPL_SHIFT 8             /* bits 8-9: CPL at the branch instruction */
#define VBTS_REC_CPL_MASK (3ULL << VBTS_REC_CPL_SHIFT)
#define VBTS_REC_CPL_VALID (1ULL << 10)  /* bits 8-9 are meaningful */
#define VBTS_REC_KIND_SHIFT 16           /* bits 16-23: enum vbts_branch_kind, 0 = unknown */
#define VBTS_REC_KIND_MASK (0xffULL << VBTS_REC_KIND_SHIFT)
#define VBTS_REC_VECTOR_SHIFT 24         /* bits 24-31: vector, for int n / exceptions */
#define VBTS_REC_VECTOR_MASK (0xffULL << VBTS_REC_VECTOR_SHIFT)
#define VBTS_REC_VECTOR_VALID (1ULL << 32)

/**
 * enum vbts_branch_kind - what kind of transfer a branch record describes (flags bits 16-23).
 * Hardware BTS does not report it; software backends do, 0 means unknown.
 */
enum vbts_branch_kind {
	VBTS_BR_UNKNOWN = 0,
	VBTS_BR_JCC = 1,       /* taken conditional jump */
	VBTS_BR_JMP = 2,       /* direct near jump */
	VBTS_BR_JMP_IND = 3,   /* indirect near jump */
	VBTS_BR_CALL = 4,      /* direct near call */
	VBTS_BR_CALL_IND = 5,  /* indirect near call */
	VBTS_BR_RET = 6,       /* near return */
	VBTS_BR_FAR_JMP = 7,
	VBTS_BR_FAR_CALL = 8,
	VBTS_BR_FAR_RET = 9,
	VBTS_BR_LOOP = 10,     /* loop, loope, loopne (taken) */
	VBTS_BR_JRCXZ = 11,    /* jecxz/jrcxz (taken) */
	VBTS_BR_INT = 12,      /* int n, int3, into: to = IDT handler */
	VBTS_BR_SYSCALL = 13,  /* syscall, sysenter */
	VBTS_BR_SYSRET = 14,   /* sysret, sysexit */
	VBTS_BR_IRET = 15,     /* iret/iretd/iretq */
	VBTS_BR_EXCEPTION = 16, /* fault or trap delivered through the IDT (ud2, #PF, ...) */
	VBTS_BR_INTERRUPT = 17, /* external interrupt or NMI injected at an instruction boundary */
	VBTS_BR_OTHER = 18,    /* any other taken transfer (e.g. rsm, vmfunc) */
	VBTS_BR_MAX
};

/**
 * enum vbts_escape_kind - non-branch facts, in flags bits 0-7 of an escape record.
 *
 * Times are nanoseconds since the trace started (the ring header's start_time_ns), from the
 * host's CLOCK_MONOTONIC; in the 56-bit aux field they wrap after 2.28 years.
 * CR3 values are stored with PCID (bits 0-11) and the NOFLUSH bit (63) masked.
 */
enum vbts_escape_kind {
	VBTS_ESC_NONE = 0,        /* never written; a zeroed slot reads as this */
	VBTS_ESC_TASK_DEPART = 1, /* to = CR3 of the task leaving the vCPU, aux = time */
	VBTS_ESC_TASK_ARRIVE = 2, /* to = CR3 of the task arriving, aux = time */
	VBTS_ESC_GAP_BEGIN = 3,   /* to = address where the tracer lost control, aux = gap reason */
	VBTS_ESC_GAP_END = 4,     /* to = address where it regained control, aux = time */
	VBTS_ESC_LOST = 5,        /* to = number of records dropped just before this one */
	VBTS_ESC_TIME = 6,        /* to = time */
	VBTS_ESC_START = 7,       /* to = time, aux = VBTS_START_* bits */
	VBTS_ESC_STOP = 8,        /* to = time, aux = 0 */
	VBTS_ESC_FREEZE = 9,      /* to = time, aux = enum vbts_freeze_reason */
	VBTS_ESC_GUEST_BTS_DROP = 10, /* the guest's own BTS dropped a record (guest-visible BTS):
				       * to = the branch's from, aux = enum vbts_guest_bts_drop;
				       * one per run of drops. aux = VBTS_GUEST_BTS_DROP_KERNEL:
				       * to = the records the kernel dropped since the last one */
	VBTS_ESC_TASK_PID = 11,   /* right after a TASK_ARRIVE, when the VMM knows the guest process:
				   * to = pid (bits 0-31) | tgid (bits 32-63), aux = 0 */
	VBTS_ESC_THREAD = 12,     /* the guest thread that runs from here on this vCPU, named at
				   * its return to user mode: to = pid (bits 0-31) | tgid
				   * (bits 32-63), aux = bits 0-55 of the guest's task address */
	VBTS_ESC_ENTRY = 13,      /* a thread enters user mode elsewhere than where it left it:
				   * to = its first user instruction (not run yet), aux = enum
				   * vbts_entry_reason; a return to where it left writes none */
	VBTS_ESC_MAX
};

/* aux of VBTS_ESC_GAP_BEGIN: why control was lost. */
enum vbts_gap_reason {
	VBTS_GAP_UNKNOWN = 0,    /* control came back somewhere the tracer did not predict */
	VBTS_GAP_IDT = 1,        /* event delivered through the guest IDT (TF cleared) */
	VBTS_GAP_SYSCALL = 2,    /* SYSCALL/SYSENTER with TF masked by the guest */
	VBTS_GAP_NOSTEP = 3,     /* the host cannot step here (e.g. CPL3 on this KVM) */
	VBTS_GAP_MEMORY = 4,     /* the instruction could not be read or decoded */
	VBTS_GAP_PAUSED = 5,     /* tracing was off for a while (operator request) */
	VBTS_GAP_MAX
};

/* aux of VBTS_ESC_ENTRY: why the thread is somewhere else than where it left user mode. */
enum vbts_entry_reason {
	VBTS_ENTRY_FIRST = 1,     /* no departure of it was seen: a new thread, a fork or vfork
				   * child, or one that left before tracing began */
	VBTS_ENTRY_EXEC = 2,      /* in another address space: the program it exec'd */
	VBTS_ENTRY_SIGNAL = 3,    /* elsewhere: a signal handler, or a fault's fix-up */
	VBTS_ENTRY_SIGRETURN = 4, /* where its rt_sigreturn's frame said */
	VBTS_ENTRY_MAX
};

/* aux of VBTS_ESC_GUEST_BTS_DROP: why the guest's own BTS did not store a record. */
enum vbts_guest_bts_drop {
	VBTS_GUEST_BTS_DROP_DS_AREA = 1, /* the DS area is not canonical or cannot be read */
	VBTS_GUEST_BTS_DROP_FIELDS = 2,  /* its BTS fields are inconsistent */
	VBTS_GUEST_BTS_DROP_FULL = 3,    /* BTINT and no room before the absolute maximum */
	VBTS_GUEST_BTS_DROP_BUFFER = 4,  /* the record's bytes are not writable guest RAM */
	VBTS_GUEST_BTS_DROP_INDEX = 5,   /* the record was written, the index could not be */
	VBTS_GUEST_BTS_DROP_KERNEL = 6,  /* the kvm backend's kernel dropped `to` records (its vCPU
					  * stat guest_bts_dropped; branches and reasons unknown) */
	VBTS_GUEST_BTS_DROP_MAX
};

/* aux of VBTS_ESC_START: the filter in force. */
#define VBTS_START_CPL_USER (1ULL << 0)   /* CPL > 0 recorded */
#define VBTS_START_CPL_KERNEL (1ULL << 1) /* CPL 0 recorded */

/* aux of VBTS_ESC_FREEZE. */
enum vbts_freeze_reason {
	VBTS_FREEZE_OPERATOR = 0,
	VBTS_FREEZE_TRIPLE_FAULT = 1,
	VBTS_FREEZE_PANIC = 2,       /* pvpanic or guest-reported panic */
	VBTS_FREEZE_VMM_ERROR = 3,
	VBTS_FREEZE_PROCESS_CRASH = 4, /* a guest process was killed by a fatal signal; the ring
					* goes on when the VM continues (--on-crash continue) */
};

#define VBTS_ESC_KIND_MASK 0xffULL
#define VBTS_ESC_AUX_SHIFT 8
#define VBTS_ESC_AUX_MAX ((1ULL << 56) - 1)
#define VBTS_CR3_MASK 0x7ffffffffffff000ULL

static inline int vbts_record__is_escape(const struct vbts_record *r)
{
	return r->from == VBTS_ESCAPE;
}

static inline unsigned int vbts_record__escape_kind(const struct vbts_record *r)
{
	return (unsigned int)(r->flags & VBTS_ESC_KIND_MASK);
}

static inline uint64_t vbts_record__escape_aux(const struct vbts_record *r)
{
	return r->flags >> VBTS_ESC_AUX_SHIFT;
}

static inline struct vbts_record vbts_record__make_escape(unsigned int kind, uint64_t payload,
							  uint64_t aux)
{
	struct vbts_record r = {
		.from = VBTS_ESCAPE,
		.to = payload,
		.flags = ((aux & VBTS_ESC_AUX_MAX) << VBTS_ESC_AUX_SHIFT) | (kind & VBTS_ESC_KIND_MASK),
	};
	return r;
}

/* ---- ring file -------------------------------------------------------------------------- */

#define VBTS_RING_MAGIC 0x474e495253544256ULL /* "VBTSRING" read as little endian */
#define VBTS_RING_VERSION 1
#define VBTS_RING_HEADER_SIZE 4096

/* enum vbts_ring_mode: what happens when the ring is full. */
enum vbts_ring_mode {
	VBTS_RING_WRAP = 0,   /* flight recorder: overwrite the oldest, count them in @lost */
	VBTS_RING_STREAM = 1, /* lossless segments bounded by a disk budget */
};

#define VBTS_RING_F_FROZEN (1U << 0) /* frozen on a crash: the writer appends nothing more */
#define VBTS_RING_F_CLOSED (1U << 1) /* the writer closed the file cleanly */

/**
 * struct vbts_ring_header - the first 4 KiB of a ring file.
 * Records start at offset @header_size; the file is header_size + capacity * record_size
 * bytes long.
 */
struct vbts_ring_header {
	uint64_t magic;         /* 0x00 VBTS_RING_MAGIC */
	uint16_t version;       /* 0x08 VBTS_RING_VERSION */
	uint16_t header_size;   /* 0x0a bytes before record 0, VBTS_RING_HEADER_SIZE */
	uint16_t record_size;   /* 0x0c sizeof(struct vbts_record) */
	uint16_t mode;          /* 0x0e enum vbts_ring_mode */
	uint32_t vcpu_id;       /* 0x10 vCPU index within the VM */
	uint32_t flags;         /* 0x14 VBTS_RING_F_* */
	uint64_t capacity;      /* 0x18 number of record slots, >= 1 */
	uint64_t vm_id;         /* 0x20 random id of the run, also in vm.json */
	uint64_t committed;     /* 0x28 seq of the next record; published after its bytes */
	uint64_t lost;          /* 0x30 records gone: overwritten (wrap) or dropped */
	uint64_t start_time_ns; /* 0x38 CLOCK_REALTIME of trace start, ns since the epoch */
	uint64_t first_seq;     /* 0x40 0, or when the writer resized the ring (a new file of
				 * another capacity replaced the old one under its name): the
				 * oldest record it kept; no record before it is in the file */
	uint8_t reserved[VBTS_RING_HEADER_SIZE - 0x48]; /* 0x48 zero */
};

_Static_assert(sizeof(struct vbts_ring_header) == VBTS_RING_HEADER_SIZE, "ring header is 4 KiB");
_Static_assert(__builtin_offsetof(struct vbts_ring_header, committed) == 0x28, "ABI");
_Static_assert(__builtin_offsetof(struct vbts_ring_header, start_time_ns) == 0x38, "ABI");
_Static_assert(__builtin_offsetof(struct vbts_ring_header, first_seq) == 0x40, "ABI");

#endif /* VBTS_RING_FORMAT_H */
