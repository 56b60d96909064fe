// SPDX-License-Identifier: GPL-2.0
/*
 * vmm-fds.c - the VM and vCPU fds of a running KVM VMM, from the links of /proc/PID/fd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errmsg.h"
#include "vmm-fds.h"

#define LINK_VM "anon_inode:kvm-vm"
#define LINK_VCPU "anon_inode:kvm-vcpu:"
/* Longer than any link KVM makes; a longer text is read cut to this and is not KVM's. */
#define LINK_MAX 128

/* A decimal number without sign or leading zeros, at most @max; -1 otherwise. */
static long parse_dec(const char *s, size_t len, unsigned long max)
{
	unsigned long v = 0;

	if (!len || len > 10 || (s[0] == '0' && len > 1))
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	return v > max ? -1 : (long)v;
}

enum vmm_fd_kind vmm_fds__classify(const char *target, size_t len, unsigned int *vcpu)
{
	const size_t vm_len = sizeof(LINK_VM) - 1, vcpu_len = sizeof(LINK_VCPU) - 1;
	long n;

	if (len == vm_len && !memcmp(target, LINK_VM, vm_len))
		return VMM_FD_VM;
	if (len < vcpu_len || memcmp(target, LINK_VCPU, vcpu_len))
		return VMM_FD_OTHER;
	n = parse_dec(target + vcpu_len, len - vcpu_len, VMM_FDS_MAX_VCPU_ID);
	if (n < 0)
		return VMM_FD_BAD;
	*vcpu = (unsigned int)n;
	return VMM_FD_VCPU;
}

/* Insert (id, fd) keeping vcpu_id ascending; -EPROTO for an id already there. */
static int add_vcpu(struct vmm_fds *out, unsigned int id, int fd)
{
	unsigned int i = out->nr_vcpus;

	if (out->nr_vcpus >= VMM_FDS_MAX_VCPUS)
		return -E2BIG;
	while (i > 0 && out->vcpu_id[i - 1] > id) {
		out->vcpu_id[i] = out->vcpu_id[i - 1];
		out->vcpu_fd[i] = out->vcpu_fd[i - 1];
		i--;
	}
	if (i > 0 && out->vcpu_id[i - 1] == id) {
		/* undo the shift */
		for (; i < out->nr_vcpus; i++) {
			out->vcpu_id[i] = out->vcpu_id[i + 1];
			out->vcpu_fd[i] = out->vcpu_fd[i + 1];
		}
		return -EPROTO;
	}
	out->vcpu_id[i] = id;
	out->vcpu_fd[i] = fd;
	out->nr_vcpus++;
	return 0;
}

/* One fd entry; 0 or -errno with @err set. */
static int scan_one(int dfd, const char *name, struct vmm_fds *out, char *err, size_t errlen)
{
	char target[LINK_MAX];
	unsigned int id = 0;
	ssize_t n;
	long fd;
	int ret;

	fd = parse_dec(name, strlen(name), INT_MAX);
	if (fd < 0)
		return 0; /* not an fd entry */
	n = readlinkat(dfd, name, target, sizeof(target));
	if (n < 0)
		return 0; /* closed meanwhile, or not a link */
	switch (vmm_fds__classify(target, (size_t)n, &id)) {
	case VMM_FD_VM:
		if (out->vm_fd >= 0) {
			errmsg__set(err, errlen, "process %d has more than one KVM VM (fds %d and %ld)",
				out->pid, out->vm_fd, fd);
			return -ENOTUNIQ;
		}
		out->vm_fd = (int)fd;
		return 0;
	case VMM_FD_VCPU:
		ret = add_vcpu(out, id, (int)fd);
		if (ret == -EPROTO)
			errmsg__set(err, errlen, "process %d has vCPU %u twice (fd %ld)", out->pid, id,
				fd);
		else if (ret < 0)
			errmsg__set(err, errlen, "process %d has more than %u vCPUs", out->pid,
				VMM_FDS_MAX_VCPUS);
		return ret;
	case VMM_FD_BAD:
		errmsg__set(err, errlen, "process %d: fd %ld is a KVM vCPU with a malformed name",
			out->pid, fd);
		return -EPROTO;
	default:
		return 0;
	}
}

int vmm_fds__scan(const char *proc, int pid, struct vmm_fds *out, char *err, size_t errlen)
{
	unsigned int seen = 0;
	struct dirent *de;
	char path[PATH_MAX];
	int dfd, ret = 0;
	DIR *d;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->vm_fd = -1;
	if (pid <= 0) {
		errmsg__set(err, errlen, "pid %d: not a process id", pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "%s/%d/fd", proc, pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		if (ret == -ENOENT) {
			errmsg__set(err, errlen, "no process %d", pid);
			return -ESRCH;
		}
		if (ret == -EACCES || ret == -EPERM)
			errmsg__set(err, errlen,
				"cannot read the fds of process %d: %s (attaching needs root, or "
				"ptrace access to it and CAP_PERFMON)", pid, strerror(-ret));
		else
			errmsg__set(err, errlen, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		errmsg__set(err, errlen, "cannot read %s: %s", path, strerror(-ret));
		return ret;
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (++seen > VMM_FDS_MAX_SCAN) {
			errmsg__set(err, errlen, "process %d has more than %u fds", pid,
				VMM_FDS_MAX_SCAN);
			ret = -E2BIG;
			break;
		}
		ret = scan_one(dirfd(d), de->d_name, out, err, errlen);
		if (ret < 0)
			break;
		errno = 0;
	}
	if (!ret && errno) {
		ret = -errno;
		errmsg__set(err, errlen, "cannot read %s: %s", path, strerror(-ret));
	}
	closedir(d);
	if (ret < 0)
		return ret;
	if (out->vm_fd < 0) {
		errmsg__set(err, errlen,
			"process %d has no KVM VM (no fd links to anon_inode:kvm-vm): not a KVM VMM, "
			"or its VM is not created yet", pid);
		return -ENOENT;
	}
	if (!out->nr_vcpus) {
		errmsg__set(err, errlen, "process %d has a KVM VM (fd %d) but no vCPU yet", pid,
			out->vm_fd);
		return -EPROTO;
	}
	return 0;
}
