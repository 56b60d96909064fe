/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crash-report.h - the crash report of a trace directory (crash.json, crash-N.json): what
 * died, where, and the last branches of the task that died, copied from its vCPU's ring when
 * the crash was seen so that the report stands alone.
 */
#ifndef VBTS_VMM_CRASH_REPORT_H
#define VBTS_VMM_CRASH_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include <vbts/ring-format.h>

struct ring_writer;

/* Version of the report's format ("version"). */
#define CRASH_REPORT_VERSION 1
/* --crash-branches: default and largest value. */
#define CRASH_REPORT_BRANCHES_DEFAULT 32
#define CRASH_REPORT_BRANCHES_MAX 4096
/* Reports written at most in one run (a guest that crashes processes without end fills no
 * disk); later crashes are counted. */
#define CRASH_REPORT_MAX 64
/* Records of a ring looked at, newest first, for a task's last branches. */
#define CRASH_REPORT_WINDOW (1ULL << 20)
/* Seconds a report's symbols may take (crash_report__set_annotate()), a hang guard. */
#define CRASH_REPORT_SYMBOLS_SECONDS 60
/* Bytes of a guest comm kept (Linux's TASK_COMM_LEN, and room for longer kernels). */
#define CRASH_REPORT_COMM_MAX 64

/**
 * enum crash_kind - what died.
 * @CRASH_PROCESS:      a guest process killed by a fatal signal
 * @CRASH_PANIC:        the guest kernel panicked
 * @CRASH_TRIPLE_FAULT: the vCPU shut down (triple fault)
 */
enum crash_kind {
	CRASH_PROCESS,
	CRASH_PANIC,
	CRASH_TRIPLE_FAULT,
};

/**
 * enum crash_action - what the VM does after a crash (--on-crash).
 * @CRASH_ACTION_DEFAULT:  continue after a process crash, exit after a panic or triple fault
 * @CRASH_ACTION_CONTINUE: the guest runs on
 * @CRASH_ACTION_EXIT:     the run ends
 * @CRASH_ACTION_PAUSE:    every vCPU stops where it is; the run waits for a stop signal
 */
enum crash_action {
	CRASH_ACTION_DEFAULT,
	CRASH_ACTION_CONTINUE,
	CRASH_ACTION_EXIT,
	CRASH_ACTION_PAUSE,
};

/**
 * struct crash_regs - a vCPU's registers (KVM_GET_REGS and KVM_GET_SREGS).
 */
struct crash_regs {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rip, rflags;
	uint64_t cr0, cr2, cr3, cr4, efer;
	uint16_t cs, ss;
};

/**
 * struct crash_report - one crash.
 * @kind:         what died
 * @signo:        CRASH_PROCESS: the guest's signal number (Linux x86: 11 SIGSEGV, ...)
 * @time_ns:      when the crash was seen, ns since the trace started
 * @vcpu:         the vCPU it happened on
 * @have_regs:    @regs hold the vCPU's registers at the crash
 * @regs:         those registers
 * @regs_note:    why there are none, or what they are not, or NULL
 * @cr3:          the address space of the crash (masked with VBTS_CR3_MASK), 0 when unknown
 * @have_process: @pid, @tgid and @comm are known
 * @pid, @tgid:   the guest process
 * @comm:         its name (guest bytes, NUL-terminated)
 * @ring_seq:     committed records of the vCPU's ring when the branches were copied
 * @branches:     the last branches of the task, oldest first
 * @nr_branches:  their number
 * @requested:    how many were asked for
 */
struct crash_report {
	enum crash_kind kind;
	int signo;
	uint64_t time_ns;
	unsigned int vcpu;
	bool have_regs;
	struct crash_regs regs;
	const char *regs_note;
	uint64_t cr3;
	bool have_process;
	int32_t pid;
	int32_t tgid;
	char comm[CRASH_REPORT_COMM_MAX + 1];
	uint64_t ring_seq;
	const struct vbts_record *branches;
	unsigned int nr_branches;
	unsigned int requested;
};

/**
 * crash_report__collect() - the last branch records of a task in a ring.
 * @w:      the ring, on its writer's thread
 * @id:     the task's address-space id (GUEST_TASKS_CR3_ID bits of its CR3), or ~0 for the
 *          branches of every task
 * @n:      branches wanted
 * @out:    room for @n records: filled oldest first
 * @seq:    receives the committed records of the ring
 *
 * A branch belongs to the task of the TASK_ARRIVE escape before it (until a TASK_DEPART); the
 * newest CRASH_REPORT_WINDOW records are looked at.
 *
 * Return: the number of records in @out.
 */
unsigned int crash_report__collect(const struct ring_writer *w, uint64_t id, unsigned int n,
				   struct vbts_record *out, uint64_t *seq);

/**
 * crash_report__signal_name() - the name of a Linux x86 signal number.
 * @signo: the number
 *
 * Return: "SIGSEGV" and so on, or NULL when it is not one of the fatal signals of a crash
 * (SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV).
 */
const char *crash_report__signal_name(int signo);

/**
 * crash_report__kind_name() - the stable name of a crash kind ("reason" of the report).
 * @kind: the kind
 *
 * Return: "process-crash", "panic" or "triple-fault".
 */
const char *crash_report__kind_name(enum crash_kind kind);

/**
 * crash_report__set_annotate() - what adds the symbols of a report's branches.
 * @fn: called by crash_report__write() with the trace directory and the report's JSON
 *      object once the report is written (the decoder's crash_symbols__annotate(): the VMM
 *      itself reads no symbols), or NULL for none. It runs in a child process, which writes
 *      the report again when @fn named an address (returned > 0) and is killed after
 *      CRASH_REPORT_SYMBOLS_SECONDS: symbols come from files the guest uploaded, and neither
 *      a crash nor a hang of their reader may reach the VMM or lose the report.
 *
 * Set once, before the run starts.
 */
void crash_report__set_annotate(int (*fn)(const char *dir, json_t *report));

/**
 * crash_report__write() - write a report into a trace directory.
 * @dir:   the trace directory
 * @index: 0 for crash.json, N > 0 for crash-N.json
 * @r:     the report
 *
 * Written to a temporary file and renamed, so a reader sees the whole report or none; then,
 * with an annotation function (crash_report__set_annotate()), written again with symbols by
 * a child process that the caller waits for.
 *
 * Return: 0, or -errno (-ENOMEM, or what creating or writing the file gave).
 */
int crash_report__write(const char *dir, unsigned int index, const struct crash_report *r);

#endif /* VBTS_VMM_CRASH_REPORT_H */
