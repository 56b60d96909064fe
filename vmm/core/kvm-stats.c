// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-stats.c - one counter of a vCPU's binary statistics, read by name (see kvm-stats.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/kvm.h>

#include "kvm.h"
#include "kvm-stats.h"

/* Bounds of what a stats file may claim: KVM's names are 48 bytes, a few dozen statistics. */
#define KVM_STAT_MAX_NAME 1024U
#define KVM_STAT_MAX_DESC 4096U

/* Reads exactly @len bytes at @off; 0 or -errno (-EPROTO when the file is shorter). */
static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EPROTO;
}

int kvm_stat__open(int vcpu_fd, const char *name, struct kvm_stat *s)
{
	struct kvm_stats_header h;
	struct kvm_stats_desc *d;
	size_t dsize, nlen = strlen(name);
	int fd, ret = -ENOENT;

	s->fd = -1;
	fd = kvm__ioctl_quiet(vcpu_fd, KVM_GET_STATS_FD, NULL);
	if (fd < 0)
		return fd == -EINVAL || fd == -ENOTTY ? -ENOTSUP : fd;
	ret = read_at(fd, &h, sizeof(h), 0);
	if (ret < 0)
		goto err;
	if (h.name_size == 0 || h.name_size > KVM_STAT_MAX_NAME || h.num_desc > KVM_STAT_MAX_DESC ||
	    nlen >= h.name_size) {
		ret = h.name_size && nlen >= h.name_size ? -ENOENT : -EPROTO;
		goto err;
	}
	dsize = sizeof(*d) + h.name_size;
	d = malloc(dsize);
	if (!d) {
		ret = -ENOMEM;
		goto err;
	}
	ret = -ENOENT;
	for (uint32_t i = 0; i < h.num_desc; i++) {
		int r = read_at(fd, d, dsize, (off_t)h.desc_offset + (off_t)i * (off_t)dsize);

		if (r < 0) {
			ret = r;
			break;
		}
		if (memcmp(d->name, name, nlen + 1))
			continue;
		/* a cumulative or instant counter of u64 values, at least one */
		if (d->size == 0) {
			ret = -EPROTO;
			break;
		}
		s->offset = (off_t)h.data_offset + (off_t)d->offset;
		s->fd = fd;
		ret = 0;
		break;
	}
	free(d);
	if (!ret) {
		uint64_t v;

		/* the value must be inside the file */
		ret = kvm_stat__read(s, &v);
		if (!ret)
			return 0;
		s->fd = -1;
	}
err:
	close(fd);
	return ret;
}

int kvm_stat__read(const struct kvm_stat *s, uint64_t *value)
{
	if (s->fd < 0)
		return -EBADF;
	return read_at(s->fd, value, sizeof(*value), s->offset);
}

void kvm_stat__close(struct kvm_stat *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
