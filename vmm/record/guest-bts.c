// SPDX-License-Identifier: GPL-2.0
/*
 * guest-bts.c - guest-visible BTS emulated by the VMM: the guest's DEBUGCTL and DS_AREA, and
 * its branch records stored into its own DS buffer (see guest-bts.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kvm.h"
#include "log.h"
#include "x86.h"
#include "guest-bts.h"
#include "gva.h"

bool guest_bts__enabled(const struct guest_bts *gb)
{
	return (gb->debugctl & (X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS)) ==
	       (X86_DEBUGCTL_TR | X86_DEBUGCTL_BTS);
}

static bool canonical(uint64_t la, bool la57)
{
	unsigned int bits = la57 ? 57 : 48;

	return (uint64_t)((int64_t)(la << (64 - bits)) >> (64 - bits)) == la;
}

/* Whether [@la, @la + @len) wraps around or has a non-canonical end. */
static bool bad_linear(uint64_t la, uint64_t len, bool la57)
{
	return la + len - 1 < la || !canonical(la, la57) || !canonical(la + len - 1, la57);
}

int guest_bts__wrmsr(struct guest_bts *gb, uint32_t index, uint64_t value, bool la57)
{
	switch (index) {
	case X86_MSR_IA32_DEBUGCTL:
		if (value & ~(GUEST_BTS_DEBUGCTL_BITS | GUEST_BTS_DEBUGCTL_IGNORED)) {
			gb->stats.gp++;
			return -EINVAL;
		}
		gb->debugctl = value & GUEST_BTS_DEBUGCTL_BITS;
		gb->dropping = false;
		return 0;
	case X86_MSR_IA32_DS_AREA:
		if (!canonical(value, la57)) {
			gb->stats.gp++;
			return -EINVAL;
		}
		gb->ds_area = value;
		gb->dropping = false;
		return 0;
	default:
		return -ENOENT;
	}
}

int guest_bts__rdmsr(const struct guest_bts *gb, uint32_t index, uint64_t *value)
{
	switch (index) {
	case X86_MSR_IA32_DEBUGCTL:
		*value = gb->debugctl;
		return 0;
	case X86_MSR_IA32_DS_AREA:
		*value = gb->ds_area;
		return 0;
	default:
		return -ENOENT;
	}
}

static enum guest_bts_result dropped(struct guest_bts *gb, enum guest_bts_drop why,
				     enum guest_bts_drop *drop)
{
	gb->stats.dropped++;
	*drop = why;
	return GUEST_BTS_DROPPED;
}

enum guest_bts_result guest_bts__store(struct guest_bts *gb, const struct gva_space *as,
				       uint64_t from, uint64_t to, uint8_t cpl,
				       enum guest_bts_drop *drop)
{
	const uint64_t rs = X86_BTS_RECORD_SIZE;
	bool la57 = as->cr4 & X86_CR4_LA57, btint = gb->debugctl & X86_DEBUGCTL_BTINT;
	uint64_t ds[X86_DS_BTS_FIELDS], rec[3] = { from, to, 0 };
	uint64_t base, index, max, threshold;

	if (!guest_bts__enabled(gb))
		return GUEST_BTS_OFF;
	if (gb->debugctl & (cpl ? X86_DEBUGCTL_BTS_OFF_USR : X86_DEBUGCTL_BTS_OFF_OS))
		return GUEST_BTS_FILTERED;
	/* One copy of the fields: another vCPU may rewrite them while this one is checked. */
	if (bad_linear(gb->ds_area, sizeof(ds), la57) ||
	    gva__read(as, gb->ds_area, ds, sizeof(ds)))
		return dropped(gb, GUEST_BTS_DROP_DS_AREA, drop);
	base = ds[X86_DS_BTS_BASE / 8];
	index = ds[X86_DS_BTS_INDEX / 8];
	max = ds[X86_DS_BTS_ABS_MAX / 8];
	threshold = ds[X86_DS_BTS_THRESHOLD / 8];
	/* base + rs cannot wrap once bad_linear() passed it */
	if (bad_linear(base, rs, la57) || index < base || max < base + rs ||
	    (index - base) % rs)
		return dropped(gb, GUEST_BTS_DROP_FIELDS, drop);
	if (index > max - rs) {
		/* no room: BTINT stops storing (the handler drains), circular mode wraps */
		if (btint)
			return dropped(gb, GUEST_BTS_DROP_FULL, drop);
		index = base;
	}
	if (bad_linear(index, rs, la57) || gva__write(as, index, rec, sizeof(rec)))
		return dropped(gb, GUEST_BTS_DROP_BUFFER, drop);
	index += rs;
	/* circular mode: the index returns to the base when it reaches the maximum */
	if (!btint && index > max - rs)
		index = base;
	if (gva__write(as, gb->ds_area + X86_DS_BTS_INDEX, &index, sizeof(index)))
		return dropped(gb, GUEST_BTS_DROP_INDEX, drop);
	gb->stats.stored++;
	if (btint && index >= threshold) {
		gb->stats.pmis++;
		return GUEST_BTS_PMI;
	}
	return GUEST_BTS_STORED;
}

int guest_bts__setup_vm(struct kvm *k)
{
	/* A filter bitmap bit clear denies the access: KVM exits to userspace instead. */
	static const uint8_t deny;
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER,
	};
	struct kvm_msr_filter filter = {
		.flags = KVM_MSR_FILTER_DEFAULT_ALLOW,
		.ranges = {
			{
				.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
				.nmsrs = 1,
				.base = X86_MSR_IA32_DEBUGCTL,
				.bitmap = (uint8_t *)&deny,
			},
			{
				.flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
				.nmsrs = 1,
				.base = X86_MSR_IA32_DS_AREA,
				.bitmap = (uint8_t *)&deny,
			},
		},
	};
	int ret;

	if (!kvm__check_extension(k, KVM_CAP_X86_USER_SPACE_MSR) ||
	    !kvm__check_extension(k, KVM_CAP_X86_MSR_FILTER)) {
		pr_err("--guest-bts: this KVM lacks KVM_CAP_X86_USER_SPACE_MSR or "
		       "KVM_CAP_X86_MSR_FILTER");
		return -ENOTSUP;
	}
	ret = kvm__ioctl(k->vm_fd, KVM_ENABLE_CAP, &cap);
	if (ret < 0)
		return ret;
	ret = kvm__ioctl(k->vm_fd, KVM_X86_SET_MSR_FILTER, &filter);
	return ret < 0 ? ret : 0;
}

int guest_bts__setup_vcpu(int vcpu_fd)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = X86_MSR_IA32_MISC_ENABLE };
	int ret;

	ret = kvm__ioctl(vcpu_fd, KVM_GET_MSRS, &m);
	if (ret < 0)
		return ret;
	if (ret != 1)
		return -EIO;
	m.e.data = (m.e.data & ~X86_MISC_ENABLE_BTS_UNAVAIL) | X86_MISC_ENABLE_PEBS_UNAVAIL;
	ret = kvm__ioctl(vcpu_fd, KVM_SET_MSRS, &m);
	if (ret < 0)
		return ret;
	return ret == 1 ? 0 : -EIO;
}

static int set_msr(int vcpu_fd, uint32_t index, uint64_t value)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = index, .e.data = value };
	int ret = kvm__ioctl_quiet(vcpu_fd, KVM_SET_MSRS, &m);

	if (ret < 0)
		return ret;
	return ret == 1 ? 0 : -ENOTSUP;
}

int guest_bts__mark(int vcpu_fd)
{
	uint64_t v = 0;
	int ret;

	ret = set_msr(vcpu_fd, X86_MSR_SMI_COUNT, GUEST_BTS_RESET_MARK);
	if (ret < 0)
		return ret;
	ret = kvm__get_msr(vcpu_fd, X86_MSR_SMI_COUNT, &v);
	if (ret < 0)
		return ret == -EIO ? -ENOTSUP : ret;
	return v == GUEST_BTS_RESET_MARK ? 0 : -ENOTSUP;
}

int guest_bts__check_reset(struct guest_bts *gb, int vcpu_fd)
{
	uint64_t v;
	int ret;

	if (!gb->reset_mark)
		return 0;
	ret = kvm__get_msr(vcpu_fd, X86_MSR_SMI_COUNT, &v);
	if (ret < 0)
		return ret;
	if (v)
		return 0;
	gb->debugctl = 0;
	gb->dropping = false;
	ret = guest_bts__mark(vcpu_fd);
	if (ret < 0)
		gb->reset_mark = false;
	return 1;
}

int guest_bts__pmi(int vcpu_fd, bool mask, bool *nmi)
{
	struct kvm_lapic_state lapic;
	uint32_t v, irr;
	uint64_t apic_base;
	unsigned int vec;
	int ret;

	ret = kvm__get_msr(vcpu_fd, X86_MSR_IA32_APIC_BASE, &apic_base);
	if (ret < 0)
		return ret;
	if (!(apic_base & X86_APIC_BASE_ENABLE))
		return -EAGAIN;
	ret = kvm__ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic);
	if (ret < 0)
		return ret;
	memcpy(&v, &lapic.regs[X86_APIC_REG_LVTPC], sizeof(v));
	if (v & X86_APIC_LVT_MASKED)
		return -EAGAIN;
	*nmi = (v & X86_APIC_DM_MASK) == X86_APIC_DM_NMI;
	vec = v & X86_APIC_LVT_VECTOR_MASK;
	if ((v & X86_APIC_DM_MASK) == X86_APIC_DM_FIXED && vec >= 16) {
		/* IRR: 8 registers of 32 bits, 16 bytes apart */
		memcpy(&irr, &lapic.regs[X86_APIC_REG_IRR + (vec / 32) * 16], sizeof(irr));
		irr |= 1U << (vec % 32);
		memcpy(&lapic.regs[X86_APIC_REG_IRR + (vec / 32) * 16], &irr, sizeof(irr));
	} else if (!mask) {
		return 0;
	}
	if (mask) {
		v |= X86_APIC_LVT_MASKED;
		memcpy(&lapic.regs[X86_APIC_REG_LVTPC], &v, sizeof(v));
	}
	ret = kvm__ioctl(vcpu_fd, KVM_SET_LAPIC, &lapic);
	return ret < 0 ? ret : 0;
}
