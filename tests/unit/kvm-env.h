/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvm-env.h - one VM with one vCPU running the test guest of kvm-guest.h under a tracer backend,
 * and the ring file it wrote: the fixture of check-step-kvm and check-kvm-backend.
 */
#ifndef VBTS_TESTS_KVM_ENV_H
#define VBTS_TESTS_KVM_ENV_H

#include <stdbool.h>
#include <stdint.h>

#include <check.h>

#include <vbts/ring-format.h>

#include "kvm.h"
#include "tracer.h"

#define KVM_ENV_MAX_RECORDS 4096

/**
 * struct kvm_env - the VM, the tracer's view of its vCPU, what the run did and recorded.
 * @k:            the VM
 * @mem:          its memory (4 MiB)
 * @vcpu:         the vCPU fd
 * @run:          its kvm_run
 * @run_size:     the size of @run
 * @dir:          a directory of the test's own, for @path
 * @path:         the ring file
 * @tv:           what the backend sees; set its backend fields (caps, ring_records) before
 *                kvm_env__run()
 * @io_exits:     port 0x80 exits
 * @halts:        hlt exits
 * @tracer_exits: exits the backend consumed (after_exit() returned 1)
 * @rec:          the records, after kvm_env__records()
 * @nrec:         their number
 */
struct kvm_env {
	struct kvm k;
	struct guest_memory *mem;
	int vcpu;
	struct kvm_run *run;
	int run_size;
	char dir[64];
	char path[96];
	struct tracer_vcpu tv;
	unsigned int io_exits;
	unsigned int halts;
	unsigned int tracer_exits;
	struct vbts_record rec[KVM_ENV_MAX_RECORDS];
	unsigned int nrec;
};

/**
 * kvm_env__create() - a VM with the test guest loaded, its vCPU at @rip, and an empty ring file
 * (Check assertions fail on any error).
 * @cpl: the CPL filter the tracer is given
 * @rip: where the vCPU starts
 *
 * Return: the fixture, for kvm_env__destroy().
 */
struct kvm_env *kvm_env__create(enum vbts_cpl_filter cpl, uint64_t rip);

/**
 * kvm_env__run() - the VMM's exit loop, reduced to what the guest does: run under @ops until
 * the guest halts at its hlt, after one port 0x80 exit at most per pass.
 * @e:           the fixture
 * @ops:         the tracer backend
 * @tracer_exit: the exit reason every exit the backend consumes must have, 0 for any
 */
void kvm_env__run(struct kvm_env *e, const struct tracer_ops *ops, uint32_t tracer_exit);

/**
 * kvm_env__records() - close the ring file and read its records into @e->rec.
 * @e: the fixture
 */
void kvm_env__records(struct kvm_env *e);

/**
 * kvm_env__destroy() - remove the ring file and its directory, and free the VM and @e.
 * @e: the fixture
 */
void kvm_env__destroy(struct kvm_env *e);

/**
 * kvm_env__kind() - the branch kind of a record (VBTS_BR_*).
 * @r: a branch record
 *
 * Return: the kind.
 */
unsigned int kvm_env__kind(const struct vbts_record *r);

/**
 * kvm_env__main() - main() of a KVM test binary: skip (77, one line) without a usable
 * /dev/kvm, or when @usable says no; else run @s.
 * @s:        the suite
 * @usable:   an extra check on the /dev/kvm fd, or NULL
 * @unusable: the reason printed when @usable says no
 *
 * Return: the exit status: 0 all passed, 1 a failure, 77 skipped.
 */
int kvm_env__main(Suite *s, bool (*usable)(int kvm_fd), const char *unusable);

#endif /* VBTS_TESTS_KVM_ENV_H */
