/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-counters.h - what the patched KVM's branch tracer did on a vCPU (its vCPU statistics
 * btrace_*, kvm-patches/ patch 22): instructions stepped by CPL, the returns to user mode it
 * caught and how each thread came back, for `vbts run --stats` and vm.json.
 */
#ifndef VBTS_VMM_KVM_COUNTERS_H
#define VBTS_VMM_KVM_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/**
 * struct kvm_counters - the branch tracer's counters of one vCPU, or their sum.
 * @valid:          the kernel has them (a series with its returns mode)
 * @user_steps:     user-mode instructions stepped
 * @kernel_steps:   guest kernel instructions stepped (0 when user mode alone is recorded)
 * @iret_steps:     IRETs of the guest kernel stepped over to catch a return to user mode
 * @soft_sysrets:   SYSRETs of the guest kernel performed by KVM
 * @threads:        thread records written (a change of thread on the vCPU)
 * @returns:        returns to user mode where the thread left it
 * @entries_first:  entries of a thread whose departure was not seen (a new thread or child)
 * @entries_exec:   entries into a new program
 * @entries_signal: entries elsewhere (a signal handler, a fault's fix-up)
 * @entries_sigreturn: entries through rt_sigreturn
 * @migrations:     returns on another vCPU than the one the thread left
 * @cr3_quiet:      CR3 loads between processes not recorded that made no exit (the quiet set)
 * @cr3_exits:      CR3 loads that exited to the VMM (counted by the VMM, not read by
 *                  kvm_counters__read())
 */
struct kvm_counters {
	bool valid;
	uint64_t user_steps;
	uint64_t kernel_steps;
	uint64_t iret_steps;
	uint64_t soft_sysrets;
	uint64_t threads;
	uint64_t returns;
	uint64_t entries_first;
	uint64_t entries_exec;
	uint64_t entries_signal;
	uint64_t entries_sigreturn;
	uint64_t migrations;
	uint64_t cr3_quiet;
	uint64_t cr3_exits;
};

/**
 * kvm_counters__read() - read a vCPU's counters.
 * @vcpu_fd: the vCPU
 * @c:       filled in; @c->valid false when the kernel lacks them
 *
 * Return: 0; -ENOENT when the kernel has no such statistics; other -errno.
 */
int kvm_counters__read(int vcpu_fd, struct kvm_counters *c);

/**
 * kvm_counters__add() - add @c to @sum (@sum->valid when either is).
 * @sum: the sum
 * @c:   one vCPU's
 */
void kvm_counters__add(struct kvm_counters *sum, const struct kvm_counters *c);

/**
 * kvm_counters__json() - the counters as vm.json's "kvm_tracer" object.
 * @c: the counters
 *
 * Return: a new JSON object, NULL when out of memory.
 */
json_t *kvm_counters__json(const struct kvm_counters *c);

/**
 * kvm_counters__print() - the counters as `vbts run --stats` lines on stderr.
 * @c: the counters
 */
void kvm_counters__print(const struct kvm_counters *c);

#endif /* VBTS_VMM_KVM_COUNTERS_H */
