/* SPDX-License-Identifier: GPL-2.0 */
/*
 * insn.h - x86 instruction classification for the step tracer (Zydis underneath).
 *
 * Given the bytes at the guest's instruction pointer and the machine mode, tell the step
 * tracer how long the instruction is, which kind of branch it is if it transfers control,
 * where a direct branch goes, and the facts that change how a single-step must be read:
 * REP string iterations, the `mov ss` trap shadow, software interrupts and instructions that
 * may change the CPL.
 */
#ifndef VBTS_VMM_STEP_INSN_H
#define VBTS_VMM_STEP_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

/* The longest x86 instruction. */
#define INSN_MAX_LEN 15

/**
 * enum insn_mode - the execution mode an instruction is decoded in.
 * @INSN_MODE_REAL16:   real mode or virtual-8086 mode
 * @INSN_MODE_PROT16:   protected mode, 16-bit code segment
 * @INSN_MODE_PROT32:   protected mode, 32-bit code segment
 * @INSN_MODE_COMPAT16: long mode, 16-bit compatibility code segment
 * @INSN_MODE_COMPAT32: long mode, 32-bit compatibility code segment
 * @INSN_MODE_LONG64:   64-bit mode
 */
enum insn_mode {
	INSN_MODE_REAL16 = 0,
	INSN_MODE_PROT16,
	INSN_MODE_PROT32,
	INSN_MODE_COMPAT16,
	INSN_MODE_COMPAT32,
	INSN_MODE_LONG64,
	INSN_MODE_MAX
};

/* struct insn_info.flags */
#define INSN_F_REP_STRING (1U << 0) /* REP-prefixed string op: may retire at its own address */
#define INSN_F_MOV_SS (1U << 1)     /* mov to %ss / pop %ss: the next instruction shares the step */
#define INSN_F_DIRECT (1U << 2)     /* @target is the exact new IP when the branch is taken */
#define INSN_F_COND (1U << 3)       /* may fall through (jcc, loop, jrcxz, into) */
#define INSN_F_VECTOR (1U << 4)     /* @vector is valid: the instruction raises that vector */
#define INSN_F_SOFT_INT (1U << 5)   /* int n, int3, into: the gate DPL is checked */
#define INSN_F_SYSCALL (1U << 6)    /* syscall */
#define INSN_F_SYSENTER (1U << 7)   /* sysenter */
#define INSN_F_CPL_CHANGE (1U << 8) /* may change the CPL (iret, sysret, far transfers, ...) */
#define INSN_F_HLT (1U << 9)        /* hlt */
#define INSN_F_FAR (1U << 10)       /* far jmp/call/ret: new CS */
#define INSN_F_CR3 (1U << 11)       /* mov to %cr3 */
#define INSN_F_SYSEXIT (1U << 12)   /* sysexit (else a VBTS_BR_SYSRET is sysret) */

/**
 * struct insn_info - one classified instruction.
 * @len:    length in bytes, 1..15
 * @kind:   enum vbts_branch_kind the instruction produces when it transfers control;
 *          VBTS_BR_UNKNOWN (0) for instructions that never do by themselves
 * @vector: the vector raised (int n, int3, into, int1, ud0/1/2), valid with INSN_F_VECTOR
 * @opsize: operand size in bytes (2, 4 or 8): the stack slot size of iret and far ret
 * @adsize: address size in bytes (2, 4 or 8): the width of rCX for loop and jrcxz
 * @cond:   the condition of a conditional branch, as its one-byte opcode: 0x70 + cc for a
 *          jcc in either encoding, 0xe0 loopne, 0xe1 loope, 0xe2 loop, 0xe3 jrcxz; else 0
 * @flags:  INSN_F_*
 * @target: with INSN_F_DIRECT, the new instruction pointer (not linear: add the CS base)
 */
struct insn_info {
	uint8_t len;
	uint8_t kind;
	uint8_t vector;
	uint8_t opsize;
	uint8_t adsize;
	uint8_t cond;
	uint16_t flags;
	uint64_t target;
};

/**
 * struct insn_decoder - per-vCPU decoder state: one initialized Zydis decoder per mode.
 * Not shared between threads; never written after insn_decoder__init().
 */
struct insn_decoder {
	ZydisDecoder zd[INSN_MODE_MAX];
};

/**
 * insn_decoder__init() - prepare a decoder for every mode.
 * @d: decoder to fill
 *
 * Return: 0, or -EINVAL if the decoder library refuses a mode.
 */
int insn_decoder__init(struct insn_decoder *d);

/**
 * insn__mode() - the mode the CPU decodes instructions in.
 * @cr0:    CR0 (PE is bit 0)
 * @efer:   IA32_EFER (LMA is bit 10)
 * @rflags: RFLAGS (VM is bit 17)
 * @cs_l:   CS.L
 * @cs_db:  CS.D/B
 *
 * Return: the enum insn_mode.
 */
enum insn_mode insn__mode(uint64_t cr0, uint64_t efer, uint64_t rflags, bool cs_l, bool cs_db);

/**
 * insn__decode() - classify the instruction at @ip.
 * @d:     decoder
 * @mode:  enum insn_mode
 * @ip:    the instruction pointer (RIP/EIP/IP, not linear): direct targets are relative to it
 * @bytes: instruction bytes
 * @n:     number of valid bytes at @bytes (may be more than the instruction needs)
 * @out:   result
 *
 * Return: 0; -EINVAL for a bad @mode; -EILSEQ when the bytes are not a valid instruction;
 * -ENODATA when @n bytes are too few to hold it.
 */
int insn__decode(const struct insn_decoder *d, enum insn_mode mode, uint64_t ip,
		 const uint8_t *bytes, size_t n, struct insn_info *out);

/**
 * struct insn_mem - the one data access of a simple load or store.
 * @la:    linear address of its first byte
 * @len:   bytes accessed
 * @write: a store (else a load)
 */
struct insn_mem {
	uint64_t la;
	uint32_t len;
	bool write;
};

/* Index of each register in the @gpr array of insn__mem_access(): the encoding order. */
enum insn_gpr {
	INSN_RAX = 0, INSN_RCX, INSN_RDX, INSN_RBX, INSN_RSP, INSN_RBP, INSN_RSI, INSN_RDI,
	INSN_R8, INSN_R9, INSN_R10, INSN_R11, INSN_R12, INSN_R13, INSN_R14, INSN_R15,
	INSN_GPR_MAX
};

/**
 * insn__mem_access() - the data access of a plain 64-bit-mode load or store, for predicting
 * its page fault: mov, movzx, movsx(d) to or from memory, and cmp, test, add, sub, and, or,
 * xor, adc, sbb reading memory into a register. Exactly one explicit memory operand, read or
 * written but not both, no lock prefix, no other (hidden) memory access.
 * @d:       decoder
 * @ip:      RIP of the instruction
 * @bytes:   instruction bytes
 * @n:       valid bytes at @bytes
 * @gpr:     the general registers, enum insn_gpr order
 * @fs_base: FS base (an fs: override adds it)
 * @gs_base: GS base
 * @out:     result
 *
 * Return: 0; -ENOENT for any other instruction; -EILSEQ or -ENODATA as insn__decode().
 */
int insn__mem_access(const struct insn_decoder *d, uint64_t ip, const uint8_t *bytes, size_t n,
		     const uint64_t gpr[INSN_GPR_MAX], uint64_t fs_base, uint64_t gs_base,
		     struct insn_mem *out);

#endif /* VBTS_VMM_STEP_INSN_H */
