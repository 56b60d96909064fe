/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86.h - architectural definitions of x86-64 the VMM uses: control-register, EFER and RFLAGS
 * bits, MSR indices, segment descriptors, page-table entries, local APIC registers and CPUID
 * bits (Intel SDM / AMD APM names). Includable from assembler sources (.S): only the macros
 * whose values carry no C suffix or cast (the MSR indices) are usable there.
 */
#ifndef VBTS_VMM_X86_H
#define VBTS_VMM_X86_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* CR0 */
#define X86_CR0_PE (1ULL << 0)  /* protection enable */
#define X86_CR0_MP (1ULL << 1)  /* monitor coprocessor */
#define X86_CR0_EM (1ULL << 2)  /* emulation */
#define X86_CR0_TS (1ULL << 3)  /* task switched */
#define X86_CR0_ET (1ULL << 4)  /* extension type (always 1) */
#define X86_CR0_NE (1ULL << 5)  /* numeric error */
#define X86_CR0_WP (1ULL << 16) /* write protect */
#define X86_CR0_AM (1ULL << 18) /* alignment mask */
#define X86_CR0_NW (1ULL << 29) /* not write-through */
#define X86_CR0_CD (1ULL << 30) /* cache disable */
#define X86_CR0_PG (1ULL << 31) /* paging */

/* CR4 */
#define X86_CR4_VME (1ULL << 0)
#define X86_CR4_PVI (1ULL << 1)
#define X86_CR4_TSD (1ULL << 2)
#define X86_CR4_DE (1ULL << 3)
#define X86_CR4_PSE (1ULL << 4)
#define X86_CR4_PAE (1ULL << 5)
#define X86_CR4_MCE (1ULL << 6)
#define X86_CR4_PGE (1ULL << 7)
#define X86_CR4_PCE (1ULL << 8)
#define X86_CR4_OSFXSR (1ULL << 9)
#define X86_CR4_OSXMMEXCPT (1ULL << 10)
#define X86_CR4_UMIP (1ULL << 11)
#define X86_CR4_LA57 (1ULL << 12)
#define X86_CR4_VMXE (1ULL << 13)
#define X86_CR4_SMXE (1ULL << 14)
#define X86_CR4_FSGSBASE (1ULL << 16)
#define X86_CR4_PCIDE (1ULL << 17)
#define X86_CR4_OSXSAVE (1ULL << 18)
#define X86_CR4_SMEP (1ULL << 20)
#define X86_CR4_SMAP (1ULL << 21)
#define X86_CR4_PKE (1ULL << 22)

/* IA32_EFER */
#define X86_EFER_SCE (1ULL << 0)  /* SYSCALL enable */
#define X86_EFER_LME (1ULL << 8)  /* long mode enable */
#define X86_EFER_LMA (1ULL << 10) /* long mode active */
#define X86_EFER_NXE (1ULL << 11) /* no-execute enable */

/* RFLAGS */
#define X86_RFLAGS_CF (1ULL << 0)
#define X86_RFLAGS_FIXED (1ULL << 1) /* reserved, always 1 */
#define X86_RFLAGS_PF (1ULL << 2)
#define X86_RFLAGS_AF (1ULL << 4)
#define X86_RFLAGS_ZF (1ULL << 6)
#define X86_RFLAGS_SF (1ULL << 7)
#define X86_RFLAGS_TF (1ULL << 8)
#define X86_RFLAGS_IF (1ULL << 9)
#define X86_RFLAGS_DF (1ULL << 10)
#define X86_RFLAGS_OF (1ULL << 11)
#define X86_RFLAGS_IOPL (3ULL << 12)
#define X86_RFLAGS_NT (1ULL << 14)
#define X86_RFLAGS_RF (1ULL << 16)
#define X86_RFLAGS_VM (1ULL << 17)
#define X86_RFLAGS_AC (1ULL << 18)
#define X86_RFLAGS_VIF (1ULL << 19)
#define X86_RFLAGS_VIP (1ULL << 20)
#define X86_RFLAGS_ID (1ULL << 21)
/* What SYSRET keeps of R11 (SDM: RFLAGS <- (R11 & 3C7FD7H) | 2). */
#define X86_RFLAGS_SYSRET_MASK 0x3c7fd7ULL
/* What IRET at CPL 0 loads: CF PF AF ZF SF TF IF DF OF IOPL NT RF AC VIF VIP ID. */
#define X86_RFLAGS_IRET_MASK 0x3f7fd5ULL

/* DR6 */
#define X86_DR6_BS (1ULL << 14) /* single step */

/* Exception vectors and the #PF error code */
#define X86_TRAP_DB 1
#define X86_TRAP_NMI 2
#define X86_TRAP_UD 6
#define X86_TRAP_PF 14
#define X86_PF_PROT (1U << 0) /* the page was present (protection violation) */
#define X86_PF_WRITE (1U << 1)
#define X86_PF_USER (1U << 2)

/* MSR indices */
#define X86_MSR_IA32_TSC 0x00000010
#define X86_MSR_IA32_APIC_BASE 0x0000001b
#define X86_MSR_SMI_COUNT 0x00000034 /* SMIs since RESET or INIT; read-only for software */
#define X86_MSR_IA32_MTRRCAP 0x000000fe
#define X86_MSR_IA32_SYSENTER_CS 0x00000174
#define X86_MSR_IA32_SYSENTER_ESP 0x00000175
#define X86_MSR_IA32_SYSENTER_EIP 0x00000176
#define X86_MSR_IA32_MISC_ENABLE 0x000001a0
#define X86_MSR_IA32_DEBUGCTL 0x000001d9
#define X86_MSR_IA32_PAT 0x00000277
#define X86_MSR_IA32_MTRR_DEF_TYPE 0x000002ff
#define X86_MSR_IA32_DS_AREA 0x00000600
#define X86_MSR_EFER 0xc0000080
#define X86_MSR_STAR 0xc0000081
#define X86_MSR_LSTAR 0xc0000082
#define X86_MSR_CSTAR 0xc0000083
#define X86_MSR_FMASK 0xc0000084
#define X86_MSR_FS_BASE 0xc0000100
#define X86_MSR_GS_BASE 0xc0000101
#define X86_MSR_KERNEL_GS_BASE 0xc0000102
#define X86_MSR_TSC_AUX 0xc0000103

/* IA32_MISC_ENABLE */
#define X86_MISC_ENABLE_FAST_STRING (1ULL << 0)
#define X86_MISC_ENABLE_BTS_UNAVAIL (1ULL << 11)
#define X86_MISC_ENABLE_PEBS_UNAVAIL (1ULL << 12)

/* IA32_DEBUGCTL (SDM Vol. 3B 17.4.1) */
#define X86_DEBUGCTL_LBR (1ULL << 0)
#define X86_DEBUGCTL_BTF (1ULL << 1)
#define X86_DEBUGCTL_TR (1ULL << 6)
#define X86_DEBUGCTL_BTS (1ULL << 7)
#define X86_DEBUGCTL_BTINT (1ULL << 8)
#define X86_DEBUGCTL_BTS_OFF_OS (1ULL << 9)  /* no BTS records at CPL 0 */
#define X86_DEBUGCTL_BTS_OFF_USR (1ULL << 10) /* no BTS records at CPL > 0 */

/* The 64-bit DS save area (DTES64): byte offsets of the BTS fields, and a BTS record. */
#define X86_DS_BTS_BASE 0x00
#define X86_DS_BTS_INDEX 0x08
#define X86_DS_BTS_ABS_MAX 0x10
#define X86_DS_BTS_THRESHOLD 0x18
#define X86_DS_BTS_FIELDS 4   /* the four 8-byte BTS fields at the start of the area */
#define X86_BTS_RECORD_SIZE 24 /* from, to, flags */
#define X86_BTS_FLAG_PREDICTED (1ULL << 4)

/* IA32_MTRR_DEF_TYPE: default memory type in bits 0-7 */
#define X86_MTRR_DEF_TYPE_E (1ULL << 11)  /* MTRRs enabled */
#define X86_MTRR_DEF_TYPE_FE (1ULL << 10) /* fixed-range MTRRs enabled */
#define X86_MTRR_TYPE_UC 0
#define X86_MTRR_TYPE_WB 6

/*
 * Segment descriptors (8 bytes): X86_DESC(access, flags, base, limit) with the access byte
 * (type in bits 0-3, S, DPL, P) and the flags nibble (AVL, L, D/B, G).
 */
#define X86_DESC_TYPE_DATA_RW 0x2   /* read/write data */
#define X86_DESC_TYPE_CODE_XR 0xa   /* execute/read code */
#define X86_DESC_ACCESSED 0x1
#define X86_DESC_TYPE_TSS_BUSY 0xb  /* busy 32-bit (64-bit in long mode) TSS */
#define X86_DESC_TYPE_LDT 0x2       /* system segment: LDT */
#define X86_DESC_TYPE_GATE16_INT 0x6  /* 16-bit interrupt gate */
#define X86_DESC_TYPE_GATE16_TRAP 0x7 /* 16-bit trap gate */
#define X86_DESC_TYPE_GATE_INT 0xe    /* 32-bit (64-bit in long mode) interrupt gate */
#define X86_DESC_TYPE_GATE_TRAP 0xf   /* 32-bit (64-bit in long mode) trap gate */
#define X86_DESC_TYPE_RW 0x2        /* code or data type bit: readable code / writable data */
#define X86_DESC_TYPE_C 0x4         /* code or data type bit: conforming code */
#define X86_DESC_TYPE_CODE 0x8      /* code or data type bit: code */
#define X86_DESC_S (1U << 4)        /* code or data (not a system segment) */
#define X86_DESC_DPL(n) ((unsigned int)(n) << 5)
#define X86_DESC_P (1U << 7)
#define X86_DESC_FLAG_L 0x2 /* 64-bit code */
#define X86_DESC_FLAG_DB 0x4 /* 32-bit default operand size */
#define X86_DESC_FLAG_G 0x8 /* limit in 4 KiB units */
/* The access byte's and the flags nibble's bits in a descriptor read as a 64-bit value */
#define X86_DESC_ACCESS_SHIFT 40
#define X86_DESC_FLAGS_SHIFT 52
#define X86_DESC_ACCESS_BIT(b) ((uint64_t)(b) << X86_DESC_ACCESS_SHIFT)
#define X86_DESC_FLAGS_BIT(f) ((uint64_t)(f) << X86_DESC_FLAGS_SHIFT)

/* 64-bit TSS: byte offsets of RSP0 and IST1 */
#define X86_TSS64_RSP0 0x04
#define X86_TSS64_IST1 0x24

#ifndef __ASSEMBLER__

static inline uint64_t x86_desc(unsigned int access, unsigned int flags, uint32_t base,
				uint32_t limit)
{
	return ((uint64_t)(base & 0xff000000) << 32) | ((uint64_t)(flags & 0xf) << 52) |
	       ((uint64_t)(limit & 0xf0000) << 32) | ((uint64_t)(access & 0xff) << 40) |
	       ((uint64_t)(base & 0x00ffffff) << 16) | (limit & 0xffff);
}
#endif

/* Page-table entries (4-level paging) */
#define X86_PTE_P (1ULL << 0)
#define X86_PTE_RW (1ULL << 1)
#define X86_PTE_US (1ULL << 2)
#define X86_PTE_PWT (1ULL << 3)
#define X86_PTE_PCD (1ULL << 4)
#define X86_PTE_A (1ULL << 5)
#define X86_PTE_D (1ULL << 6)
#define X86_PTE_PS (1ULL << 7) /* large page in a PDPTE or PDE */
#define X86_PTE_G (1ULL << 8)
#define X86_PTE_NX (1ULL << 63)
#define X86_PTE_ADDR_MASK 0x000ffffffffff000ULL
#define X86_PAGE_SIZE 0x1000ULL
#define X86_LARGE_PAGE_SIZE 0x200000ULL /* a PDE with PS */
#define X86_PT_ENTRIES 512

/* Local APIC and I/O APIC */
#define X86_APIC_DEFAULT_BASE 0xfee00000ULL
#define X86_APIC_BASE_ENABLE (1ULL << 11) /* IA32_APIC_BASE: the LAPIC is enabled */
#define X86_APIC_BASE_EXTD (1ULL << 10)   /* IA32_APIC_BASE: x2APIC mode */
#define X86_IOAPIC_DEFAULT_BASE 0xfec00000ULL
#define X86_APIC_REG_LVT0 0x350
#define X86_APIC_REG_LVT1 0x360
#define X86_APIC_REG_IRR 0x200   /* interrupt request register, 8 x 32 bits, 16 bytes apart */
#define X86_APIC_REG_LVTPC 0x340 /* performance-monitoring counters (PMI) */
#define X86_APIC_LVT_MASKED (1U << 16)
#define X86_APIC_LVT_VECTOR_MASK 0xffU
#define X86_APIC_DM_FIXED (0U << 8)
#define X86_APIC_DM_MASK (7U << 8)
#define X86_APIC_DM_NMI (4U << 8)
#define X86_APIC_DM_EXTINT (7U << 8)

/* CPUID */
#define X86_CPUID_1_ECX_X2APIC (1U << 21)
#define X86_CPUID_1_ECX_TSC_DEADLINE (1U << 24)
#define X86_CPUID_1_ECX_HYPERVISOR (1U << 31)
#define X86_CPUID_1_ECX_DTES64 (1U << 2) /* 64-bit DS area */
#define X86_CPUID_1_ECX_DS_CPL (1U << 4) /* CPL-qualified BTS (BTS_OFF_OS/USR) */
#define X86_CPUID_1_EDX_DS (1U << 21)    /* debug store: BTS, PEBS */
#define X86_CPUID_1_EDX_HTT (1U << 28)
#define X86_CPUID_80000001_ECX_CMP_LEGACY (1U << 1)
#define X86_CPUID_80000001_ECX_TOPOEXT (1U << 22)
#define X86_CPUID_TOPO_TYPE_SMT 1  /* leaf 0xb/0x1f ECX[15:8] */
#define X86_CPUID_TOPO_TYPE_CORE 2

#endif /* VBTS_VMM_X86_H */
