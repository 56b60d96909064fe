// SPDX-License-Identifier: GPL-2.0
/*
 * tracer-mem.c - guest-physical memory of a traced VM through the tracer fd, page by page,
 * with a direct-mapped cache of TRACER_MEM_PAGES pages.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>
#include <vbts/kvm-bts-uapi.h>

#include "tracer-mem.h"

#define PAGE 4096ULL

struct tracer_mem_page {
	uint64_t gfn;
	bool valid;
	uint8_t bytes[PAGE];
};

struct tracer_mem {
	int tfd;
	struct tracer_mem_stats st;
	struct tracer_mem_page page[TRACER_MEM_PAGES];
};

struct tracer_mem *tracer_mem__open(int tfd)
{
	struct tracer_mem *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->tfd = tfd;
	return m;
}

/* One read through the tracer fd: 0 or -errno. */
static int read_gpa(struct tracer_mem *m, uint64_t gpa, void *buf, uint32_t len)
{
	struct vbts_kvm_x86_bts_tracer_read rd = {
		.gpa = gpa, .addr = (uint64_t)(uintptr_t)buf, .len = len,
	};

	return ioctl(m->tfd, VBTS_KVM_X86_BTS_TRACER_READ_GPA, &rd) ? -errno : 0;
}

int tracer_mem__probe(struct tracer_mem *m)
{
	uint8_t b;
	int ret = read_gpa(m, 0, &b, 1);

	return ret == -ENOENT ? 0 : ret;
}

int tracer_mem__read(const void *ctx, uint64_t gpa, void *buf, size_t len)
{
	if (!len || len > VBTS_KVM_X86_BTS_TRACER_READ_MAX)
		return -EINVAL;
	return read_gpa((struct tracer_mem *)ctx, gpa, buf, (uint32_t)len);
}

void *tracer_mem__ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	struct tracer_mem *m = (struct tracer_mem *)ctx;
	uint64_t gfn = gpa / PAGE, off = gpa % PAGE;
	struct tracer_mem_page *p;

	if (!len || len > PAGE - off)
		return NULL;
	p = &m->page[gfn % TRACER_MEM_PAGES];
	if (p->valid && p->gfn == gfn) {
		m->st.hits++;
		return p->bytes + off;
	}
	m->st.reads++;
	p->valid = false;
	if (read_gpa(m, gfn * PAGE, p->bytes, PAGE)) {
		m->st.failed++;
		return NULL;
	}
	p->gfn = gfn;
	p->valid = true;
	return p->bytes + off;
}

void tracer_mem__invalidate(struct tracer_mem *m)
{
	for (unsigned int i = 0; i < TRACER_MEM_PAGES; i++)
		m->page[i].valid = false;
}

void tracer_mem__stats(const struct tracer_mem *m, struct tracer_mem_stats *st)
{
	*st = m->st;
}

void tracer_mem__close(struct tracer_mem *m)
{
	free(m);
}
