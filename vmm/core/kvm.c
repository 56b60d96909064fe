// SPDX-License-Identifier: GPL-2.0
/*
 * kvm.c - the /dev/kvm wrapper: named ioctls, up-front API and capability checks, VM creation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kvm.h"
#include "log.h"

/* Where KVM may put the three pages of the real-mode TSS (Intel); just below the BIOS. */
#define KVM_TSS_GPA 0xfffbd000UL
#define CPUID_MAX_ENTRIES 512

/* What the VMM cannot work without, with why, for the one-line message. */
static const struct {
	long cap;
	const char *name;
	const char *why;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY", "guest RAM from the VMM" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR", "protected-mode guests" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID", "a CPUID for the guest" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT", "kicking vCPUs" },
};

int kvm__ioctl_named(int fd, unsigned long req, unsigned long arg, const char *name, bool quiet)
{
	int ret;

	/* A kick interrupts KVM_RUN on purpose; any other ioctl is simply issued again. */
	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR && req != KVM_RUN);
	if (ret < 0) {
		ret = -errno;
		if (!quiet)
			pr_err("%s: %s", name, strerror(-ret));
	}
	return ret;
}

int kvm__check_extension(const struct kvm *k, long cap)
{
	int fd = k->vm_fd >= 0 ? k->vm_fd : k->sys_fd;
	int ret = kvm__ioctl_quiet(fd, KVM_CHECK_EXTENSION, cap);

	return ret < 0 ? 0 : ret;
}

static int get_supported_cpuid(struct kvm *k)
{
	struct kvm_cpuid2 *cpuid;
	int ret;

	cpuid = calloc(1, sizeof(*cpuid) + CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return -ENOMEM;
	cpuid->nent = CPUID_MAX_ENTRIES;
	ret = kvm__ioctl(k->sys_fd, KVM_GET_SUPPORTED_CPUID, cpuid);
	if (ret < 0) {
		free(cpuid);
		return ret;
	}
	k->cpuid = cpuid;
	return 0;
}

int kvm__open(struct kvm *k)
{
	int ret;

	memset(k, 0, sizeof(*k));
	k->vm_fd = -1;
	k->sys_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (k->sys_fd < 0) {
		ret = errno;
		pr_err("cannot open /dev/kvm: %s (KVM is not available here)", strerror(ret));
		return -ENODEV;
	}
	ret = kvm__ioctl_quiet(k->sys_fd, KVM_GET_API_VERSION, 0);
	if (ret < 0) {
		pr_err("/dev/kvm is not a usable KVM device (KVM_GET_API_VERSION: %s)",
		       strerror(-ret));
		ret = -ENODEV;
		goto err_close_sys;
	}
	if (ret != KVM_API_VERSION) {
		pr_err("KVM API version %d, vbts needs %d", ret, KVM_API_VERSION);
		ret = -ENOTSUP;
		goto err_close_sys;
	}
	for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++) {
		if (!kvm__check_extension(k, required_caps[i].cap)) {
			pr_err("KVM lacks %s (needed for %s)", required_caps[i].name,
			       required_caps[i].why);
			ret = -ENOTSUP;
			goto err_close_sys;
		}
	}
	k->max_vcpus = kvm__check_extension(k, KVM_CAP_MAX_VCPUS);
	if (!k->max_vcpus)
		k->max_vcpus = kvm__check_extension(k, KVM_CAP_NR_VCPUS);
	if (!k->max_vcpus)
		k->max_vcpus = 1;
	ret = kvm__ioctl(k->sys_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret < 0)
		goto err_close_sys;
	if ((size_t)ret < sizeof(struct kvm_run)) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE: %d is smaller than struct kvm_run", ret);
		ret = -ENOTSUP;
		goto err_close_sys;
	}
	k->run_size = ret;
	ret = get_supported_cpuid(k);
	if (ret < 0)
		goto err_close_sys;
	ret = kvm__ioctl(k->sys_fd, KVM_CREATE_VM, 0);
	if (ret < 0)
		goto err_free_cpuid;
	k->vm_fd = ret;
	ret = kvm__ioctl(k->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_GPA);
	if (ret < 0)
		goto err_close_vm;
	return 0;

err_close_vm:
	close(k->vm_fd);
	k->vm_fd = -1;
err_free_cpuid:
	free(k->cpuid);
	k->cpuid = NULL;
err_close_sys:
	close(k->sys_fd);
	k->sys_fd = -1;
	return ret;
}

void kvm__close(struct kvm *k)
{
	if (k->vm_fd >= 0)
		close(k->vm_fd);
	if (k->sys_fd >= 0)
		close(k->sys_fd);
	free(k->cpuid);
	k->vm_fd = -1;
	k->sys_fd = -1;
	k->cpuid = NULL;
}

int kvm__get_msr(int vcpu_fd, uint32_t index, uint64_t *value)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = { .hdr.nmsrs = 1, .e.index = index };
	int ret = kvm__ioctl_quiet(vcpu_fd, KVM_GET_MSRS, &m);

	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	*value = m.e.data;
	return 0;
}
