// SPDX-License-Identifier: GPL-2.0
/*
 * cpuid.c - per-vCPU CPUID: KVM's supported leaves, the hypervisor bit, APIC id and topology.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpuid.h"
#include "x86.h"

/* Bits needed to number @n items (0 for 1). */
static unsigned int id_bits(unsigned int n)
{
	unsigned int bits = 0;

	while ((1U << bits) < n)
		bits++;
	return bits;
}

static void shape_leaf(struct kvm_cpuid_entry2 *e, unsigned int index, unsigned int nr,
		       unsigned int flags)
{
	unsigned int bits = id_bits(nr), share;

	switch (e->function) {
	case 1:
		/* EBX: initial APIC id, logical processors per package (valid with HTT). */
		e->ebx = (e->ebx & 0xffff) | ((1U << bits) & 0xff) << 16 | (index & 0xff) << 24;
		if (nr > 1)
			e->edx |= X86_CPUID_1_EDX_HTT;
		else
			e->edx &= ~X86_CPUID_1_EDX_HTT;
		e->ecx |= X86_CPUID_1_ECX_HYPERVISOR;
		if (flags & CPUID_TSC_DEADLINE)
			e->ecx |= X86_CPUID_1_ECX_TSC_DEADLINE;
		if (flags & CPUID_GUEST_BTS) {
			e->edx |= X86_CPUID_1_EDX_DS;
			e->ecx |= X86_CPUID_1_ECX_DTES64 | X86_CPUID_1_ECX_DS_CPL;
		}
		break;
	case 4:
		/* Cores per package - 1; the last-level cache is shared by all of them. */
		share = ((e->eax >> 5) & 7) >= 3 ? (1U << bits) - 1 : 0;
		e->eax = (e->eax & 0x00003fff) | share << 14 | ((1U << bits) - 1) << 26;
		break;
	case 0x80000008:
		/* ApicIdCoreIdSize and the number of cores - 1. */
		e->ecx = (e->ecx & ~0xf0ffU) | bits << 12 | ((nr - 1) & 0xff);
		break;
	case 0x8000001e:
		/* Extended APIC id; core id, one thread per core; node 0 of one. */
		e->eax = index;
		e->ebx = (e->ebx & ~0xffffU) | (index & 0xff);
		e->ecx &= ~0x7ffU;
		break;
	default:
		break;
	}
}

/* Leaf 0xb or 0x1f: SMT level (1 thread), core level (@nr cores), then the end. */
static void topology_leaf(struct kvm_cpuid_entry2 *e, uint32_t function, unsigned int index,
			  unsigned int nr)
{
	for (unsigned int sub = 0; sub < 3; sub++) {
		memset(&e[sub], 0, sizeof(e[sub]));
		e[sub].function = function;
		e[sub].index = sub;
		e[sub].flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
		e[sub].edx = index;
		e[sub].ecx = sub;
	}
	e[0].eax = 0;
	e[0].ebx = 1;
	e[0].ecx |= X86_CPUID_TOPO_TYPE_SMT << 8;
	e[1].eax = id_bits(nr);
	e[1].ebx = nr;
	e[1].ecx |= X86_CPUID_TOPO_TYPE_CORE << 8;
}

struct kvm_cpuid2 *cpuid__for_vcpu(const struct kvm_cpuid2 *supported, unsigned int index,
				   unsigned int nr_vcpus, unsigned int flags)
{
	unsigned int nr = nr_vcpus > index ? nr_vcpus : index + 1, n = 0, extra = 0;
	bool has_b = false, has_1f = false;
	struct kvm_cpuid2 *c;

	for (unsigned int i = 0; i < supported->nent; i++) {
		has_b |= supported->entries[i].function == 0xb;
		has_1f |= supported->entries[i].function == 0x1f;
	}
	extra = (has_b ? 3 : 0) + (has_1f ? 3 : 0);
	c = calloc(1, sizeof(*c) + (supported->nent + extra) * sizeof(c->entries[0]));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < supported->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &supported->entries[i];

		if (e->function == 0xb || e->function == 0x1f)
			continue;
		c->entries[n] = *e;
		shape_leaf(&c->entries[n], index, nr, flags);
		n++;
	}
	if (has_b) {
		topology_leaf(&c->entries[n], 0xb, index, nr);
		n += 3;
	}
	if (has_1f) {
		topology_leaf(&c->entries[n], 0x1f, index, nr);
		n += 3;
	}
	c->nent = n;
	return c;
}

bool cpuid__intel_compatible(const struct kvm_cpuid2 *c)
{
	static const char *const vendors[] = { "GenuineIntel", "CentaurHauls", "  Shanghai  " };

	for (unsigned int i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];
		char v[12];

		if (e->function != 0)
			continue;
		memcpy(v, &e->ebx, 4);
		memcpy(v + 4, &e->edx, 4);
		memcpy(v + 8, &e->ecx, 4);
		for (unsigned int k = 0; k < sizeof(vendors) / sizeof(vendors[0]); k++)
			if (!memcmp(v, vendors[k], sizeof(v)))
				return true;
	}
	return false;
}
