// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-ring.c - copy the patched KVM's per-vCPU branch trace ring into a vbts ring file, in
 * batches (ring_writer__append_n(): one publication per batch of records).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest-tasks.h"
#include "kvm-ring.h"
#include "ring-writer.h"

size_t kvm_ring__map_len(uint64_t nr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return VBTS_KVM_X86_BTS_RING_HEADER_SIZE +
	       ((nr * sizeof(struct vbts_record) + page - 1) & ~(page - 1));
}

/* Not set up yet: the vCPU writes its ring's size and record size when it applies CONFIGURE. */
static bool header_zero(const struct vbts_kvm_x86_bts_ring_header *h)
{
	return !__atomic_load_n(&h->nr_records, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&h->record_size, __ATOMIC_ACQUIRE);
}

static bool header_ok(const struct kvm_ring *kr)
{
	return __atomic_load_n(&kr->hdr->nr_records, __ATOMIC_ACQUIRE) == kr->nr &&
	       kr->hdr->record_size == sizeof(struct vbts_record);
}

static int map(struct kvm_ring *kr, int fd, off_t offset, uint64_t nr, bool pending, char *err,
	       size_t errlen)
{
	int ret;

	memset(kr, 0, sizeof(*kr));
	kr->skip_arrive = ~0ULL;
	kr->cr3 = ~0ULL;
	kr->nr = nr;
	kr->map_len = kvm_ring__map_len(nr);
	kr->map = mmap(NULL, kr->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
	if (kr->map == MAP_FAILED) {
		ret = -errno;
		kr->map = NULL;
		snprintf(err, errlen, "mmap of the branch trace ring: %s", strerror(-ret));
		return ret;
	}
	kr->hdr = kr->map;
	kr->recs = (const struct vbts_record *)((char *)kr->map +
						VBTS_KVM_X86_BTS_RING_HEADER_SIZE);
	if (pending && header_zero(kr->hdr)) {
		kr->pending = true;
		return 0;
	}
	if (!header_ok(kr)) {
		snprintf(err, errlen, "the kernel's ring has %" PRIu64 " records of %u bytes",
			 (uint64_t)kr->hdr->nr_records, kr->hdr->record_size);
		kvm_ring__unmap(kr);
		return -EPROTO;
	}
	return 0;
}

int kvm_ring__map(struct kvm_ring *kr, int fd, off_t offset, uint64_t nr, char *err,
		  size_t errlen)
{
	return map(kr, fd, offset, nr, false, err, errlen);
}

int kvm_ring__map_pending(struct kvm_ring *kr, int fd, off_t offset, uint64_t nr, char *err,
			  size_t errlen)
{
	return map(kr, fd, offset, nr, true, err, errlen);
}

bool kvm_ring__broken(const struct kvm_ring *kr)
{
	return kr->broken;
}

void kvm_ring__unmap(struct kvm_ring *kr)
{
	if (kr->map)
		munmap(kr->map, kr->map_len);
	kr->map = NULL;
	kr->hdr = NULL;
	kr->recs = NULL;
}

uint32_t kvm_ring__cpl(enum vbts_cpl_filter f)
{
	switch (f) {
	case VBTS_CPL_USER:
		return VBTS_KVM_X86_BTS_CPL_USER;
	case VBTS_CPL_KERNEL:
		return VBTS_KVM_X86_BTS_CPL_KERNEL;
	default:
		return VBTS_KVM_X86_BTS_CPL_USER | VBTS_KVM_X86_BTS_CPL_KERNEL;
	}
}

uint64_t kvm_ring__tsc_to_ns(const struct kvm_ring *kr, uint64_t tsc)
{
	const struct kvm_ring_clock *c = kr->clock;
	uint64_t khz = kr->khz, tsc0 = kr->tsc0, ns0 = kr->ns0;
	unsigned __int128 d;

	if (c && c->khz && c->anchored) {
		khz = c->khz;
		tsc0 = c->tsc0;
		ns0 = c->ns0;
	}
	if (!khz)
		return kr->copy_ns > kr->ns0 ? kr->copy_ns : kr->ns0;
	if (tsc < tsc0) {
		d = (unsigned __int128)(tsc0 - tsc) * 1000000U / khz;
		return d >= ns0 ? 0 : ns0 - (uint64_t)d;
	}
	d = (unsigned __int128)(tsc - tsc0) * 1000000U / khz + ns0;
	return d > VBTS_ESC_AUX_MAX ? VBTS_ESC_AUX_MAX : (uint64_t)d;
}

/* The shared clock's anchor: the first guest TSC copied, at this copy's time. */
static void anchor_clock(struct kvm_ring *kr, uint64_t tsc)
{
	struct kvm_ring_clock *c = kr->clock;

	if (!c || !c->khz || c->anchored)
		return;
	c->tsc0 = tsc;
	c->ns0 = kr->copy_ns > kr->last_ns ? kr->copy_ns : kr->last_ns;
	c->anchored = true;
}

/* Records of one drain go to the ring file in batches of this many: one publication each. */
#define BATCH 256

struct batch {
	struct tracer_vcpu *tv;
	unsigned int n;
	struct vbts_record r[BATCH];
};

static void put(struct tracer_vcpu *tv, const struct vbts_record *r)
{
	if (ring_writer__append(tv->ring, r) == 0)
		tv->stat_records++;
}

static void batch_flush(struct batch *b)
{
	uint64_t before;
	int ret;

	if (!b->n)
		return;
	before = ring_writer__lost(b->tv->ring);
	ret = ring_writer__append_n(b->tv->ring, b->r, b->n);
	/* a stream that dropped some of them stored the others */
	b->tv->stat_records += !ret ? b->n : ret == -ENOSPC ?
			       b->n - (ring_writer__lost(b->tv->ring) - before) : 0;
	b->n = 0;
}

static void batch_put(struct batch *b, const struct vbts_record *r)
{
	b->r[b->n++] = *r;
	if (b->n == BATCH)
		batch_flush(b);
}

/* The TASK_PID record after a TASK_ARRIVE, when @tv->tasks knows the process. */
static bool pid_record(struct tracer_vcpu *tv, struct vbts_record *r)
{
	int32_t pid, tgid;

	if (!tv->tasks || !guest_tasks__current_pid(tv->tasks, tv->index, &pid, &tgid))
		return false;
	*r = vbts_record__make_escape(VBTS_ESC_TASK_PID,
				      (uint32_t)pid | (uint64_t)(uint32_t)tgid << 32, 0);
	return true;
}

void kvm_ring__put_escape(struct tracer_vcpu *tv, unsigned int kind, uint64_t to, uint64_t aux)
{
	struct vbts_record r = vbts_record__make_escape(kind, to, aux);

	put(tv, &r);
}

void kvm_ring__put_pid(struct tracer_vcpu *tv)
{
	struct vbts_record r;

	if (pid_record(tv, &r))
		put(tv, &r);
}

/* One kernel record into the batch, its guest-TSC times converted. */
static void copy_record(struct batch *b, struct kvm_ring *kr, struct vbts_record r)
{
	struct tracer_vcpu *tv = b->tv;
	uint64_t aux;

	if (!vbts_record__is_escape(&r)) {
		batch_put(b, &r);
		return;
	}
	aux = vbts_record__escape_aux(&r);
	switch (vbts_record__escape_kind(&r)) {
	case VBTS_ESC_TASK_ARRIVE:
		if (r.to == kr->skip_arrive)
			return;
		/* fall through */
	case VBTS_ESC_TASK_DEPART:
	case VBTS_ESC_GAP_END:
		anchor_clock(kr, aux);
		kr->last_ns = kvm_ring__tsc_to_ns(kr, aux);
		r = vbts_record__make_escape(vbts_record__escape_kind(&r), r.to, kr->last_ns);
		break;
	case VBTS_ESC_START:
	case VBTS_ESC_STOP:
	case VBTS_ESC_TIME:
		anchor_clock(kr, r.to);
		kr->last_ns = kvm_ring__tsc_to_ns(kr, r.to);
		r.to = kr->last_ns;
		break;
	case VBTS_ESC_GAP_BEGIN:
		tv->stat_gaps++;
		break;
	default:
		break;
	}
	batch_put(b, &r);
	if (vbts_record__escape_kind(&r) == VBTS_ESC_THREAD && tv->tasks)
		guest_tasks__thread(tv->tasks, tv->index, (int32_t)(uint32_t)r.to,
				    (int32_t)(uint32_t)(r.to >> 32), aux, kr->cr3, kr->last_ns);
	if (vbts_record__escape_kind(&r) != VBTS_ESC_TASK_ARRIVE)
		return;
	if (kr->follow) {
		if (tv->tasks &&
		    guest_tasks__switch(tv->tasks, tv->index, kr->cr3, r.to, kr->last_ns))
			kr->user_seen = true;
		kr->arrivals++;
	}
	kr->cr3 = r.to;
	if (pid_record(tv, &r))
		batch_put(b, &r);
}

uint64_t kvm_ring__drain(struct kvm_ring *kr, struct tracer_vcpu *tv)
{
	uint64_t head, tail, lost, n, first;

	if (kr->broken)
		return 0;
	if (kr->pending) {
		if (header_zero(kr->hdr))
			return 0; /* the vCPU has not set its ring up yet */
		kr->pending = false;
		if (!header_ok(kr)) {
			kr->broken = true;
			kvm_ring__put_escape(tv, VBTS_ESC_LOST, 0, 0);
			return 0;
		}
	}
	head = __atomic_load_n(&kr->hdr->head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&kr->hdr->tail, __ATOMIC_RELAXED);
	lost = __atomic_load_n(&kr->hdr->lost, __ATOMIC_RELAXED);
	if (tail > head || head - tail > kr->nr || head < kr->next) {
		/* Not what the kernel writes: start again at head, count what is skipped. */
		kvm_ring__put_escape(tv, VBTS_ESC_LOST, head >= kr->next ? head - kr->next : 0, 0);
		kr->next = head;
		kr->lost = lost;
		__atomic_store_n(&kr->hdr->tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	if (tail > kr->next || lost != kr->lost) {
		/* The ring wrapped over records not yet copied. */
		n = tail > kr->next ? tail - kr->next : 0;
		if (lost > kr->lost && lost - kr->lost > n)
			n = lost - kr->lost;
		kvm_ring__put_escape(tv, VBTS_ESC_LOST, n, 0);
		kr->lost = lost;
		if (tail > kr->next)
			kr->next = tail;
	}
	first = kr->next;
	if (kr->next < head) {
		struct batch b = { .tv = tv };
		uint64_t slot = kr->next % kr->nr; /* one divide per drain, not per record */

		for (; kr->next < head; kr->next++) {
			copy_record(&b, kr, kr->recs[slot]);
			if (++slot == kr->nr)
				slot = 0;
		}
		batch_flush(&b);
	}
	__atomic_store_n(&kr->hdr->tail, head, __ATOMIC_RELEASE);
	return head - first;
}
