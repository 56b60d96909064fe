// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-counters.c - the patched KVM's branch tracer counters of a vCPU, read by name from its
 * statistics (kvm-stats.c), for `vbts run --stats` and vm.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "kvm-counters.h"
#include "kvm-stats.h"

static const struct {
	const char *name;	/* the vCPU statistic, and vm.json's member without "btrace_" */
	size_t offset;
	bool optional;		/* 0 from a series before it */
} fields[] = {
	{ "btrace_user_steps", offsetof(struct kvm_counters, user_steps) },
	{ "btrace_kernel_steps", offsetof(struct kvm_counters, kernel_steps) },
	{ "btrace_iret_steps", offsetof(struct kvm_counters, iret_steps) },
	{ "btrace_soft_sysrets", offsetof(struct kvm_counters, soft_sysrets) },
	{ "btrace_threads", offsetof(struct kvm_counters, threads) },
	{ "btrace_returns", offsetof(struct kvm_counters, returns) },
	{ "btrace_entries_first", offsetof(struct kvm_counters, entries_first) },
	{ "btrace_entries_exec", offsetof(struct kvm_counters, entries_exec) },
	{ "btrace_entries_signal", offsetof(struct kvm_counters, entries_signal) },
	{ "btrace_entries_sigreturn", offsetof(struct kvm_counters, entries_sigreturn) },
	{ "btrace_migrations", offsetof(struct kvm_counters, migrations) },
	{ "btrace_cr3_quiet", offsetof(struct kvm_counters, cr3_quiet), true },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static uint64_t *field(struct kvm_counters *c, size_t i)
{
	return (uint64_t *)((char *)c + fields[i].offset);
}

int kvm_counters__read(int vcpu_fd, struct kvm_counters *c)
{
	struct kvm_stat s;
	int ret;

	*c = (struct kvm_counters){ 0 };
	for (size_t i = 0; i < NFIELDS; i++) {
		ret = kvm_stat__open(vcpu_fd, fields[i].name, &s);
		if (ret == -ENOTSUP && fields[i].optional)
			continue;
		if (ret < 0)
			return ret == -ENOTSUP ? -ENOENT : ret;
		ret = kvm_stat__read(&s, field(c, i));
		kvm_stat__close(&s);
		if (ret < 0)
			return ret;
	}
	c->valid = true;
	return 0;
}

void kvm_counters__add(struct kvm_counters *sum, const struct kvm_counters *c)
{
	if (!c->valid)
		return;
	sum->valid = true;
	for (size_t i = 0; i < NFIELDS; i++)
		*field(sum, i) += *field((struct kvm_counters *)c, i);
	sum->cr3_exits += c->cr3_exits;
}

json_t *kvm_counters__json(const struct kvm_counters *c)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	for (size_t i = 0; i < NFIELDS; i++) {
		uint64_t v = *field((struct kvm_counters *)c, i);

		/* "btrace_" left out; counts beyond a JSON integer saturate */
		if (json_object_set_new(o, fields[i].name + 7,
					json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v))) {
			json_decref(o);
			return NULL;
		}
	}
	if (json_object_set_new(o, "cr3_exits", json_integer(c->cr3_exits > INT64_MAX ? INT64_MAX :
							      (json_int_t)c->cr3_exits))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void kvm_counters__print(const struct kvm_counters *c)
{
	fprintf(stderr, "vbts: stats: kernel tracer: instructions stepped at CPL 3 %" PRIu64
			", at CPL 0 %" PRIu64 "; returns to user mode caught at IRET %" PRIu64
			" (stepped over), at SYSRET %" PRIu64 " (performed)\n",
		c->user_steps, c->kernel_steps, c->iret_steps, c->soft_sysrets);
	fprintf(stderr, "vbts: stats: kernel tracer: user-mode entries: returns %" PRIu64
			", first of a thread %" PRIu64 ", exec %" PRIu64 ", signal %" PRIu64
			", sigreturn %" PRIu64 "; threads named %" PRIu64 ", moved between vCPUs %"
			PRIu64 "\n",
		c->returns, c->entries_first, c->entries_exec, c->entries_signal,
		c->entries_sigreturn, c->threads, c->migrations);
	fprintf(stderr, "vbts: stats: kernel tracer: CR3 loads: %" PRIu64 " exited to vbts, %" PRIu64
			" kept in the kernel (between processes not recorded)\n",
		c->cr3_exits, c->cr3_quiet);
}
