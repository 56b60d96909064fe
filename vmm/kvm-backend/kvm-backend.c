// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-backend.c - the in-kernel tracer backend: KVM (patched by kvm-patches/) steps the guest
 * and writes branch records into a per-vCPU ring; this backend copies them into the vbts ring
 * file.
 *
 * Set-up per vCPU: KVM_X86_BTS_CONFIGURE (wrap mode, the CPL filter, branch stepping, a ring of
 * the --ring size capped at KVM_BTS_MAX_RING, watermark at half of it), CR3 load tracing so
 * that the kernel writes task-depart/task-arrive records, mmap of the ring, ENABLE (the kernel
 * writes START). Records are copied out at KVM_EXIT_X86_BTS (the watermark) and at every other
 * exit; DISABLE (the kernel writes STOP) and a last copy end the trace.
 *
 * Times: the kernel stamps escape records with the guest TSC (KVM_X86_BTS_RING_F_GUEST_TSC).
 * At set-up the backend reads the guest TSC (MSR 0x10) next to CLOCK_MONOTONIC and the
 * vCPU's TSC frequency (KVM_GET_TSC_KHZ); a guest TSC value t is stored as
 *   ns0 + (t - tsc0) * 10^6 / khz     (0 when that is negative),
 * ns0 being the set-up time in ns since tv->start_ns, as the step backend's times are. A guest
 * that writes its own TSC shifts the times it is stamped with after that; nothing else does.
 *
 * The ring's head and tail are read once per copy and checked (tail <= head, head - tail <=
 * nr_records); a ring that breaks these is resynchronised at its head and the skipped records
 * counted as lost.
 *
 * Linux guests (tv->tasks): every CR3 load exits (KVM_X86_CR3_TRACE_EXIT, with the KPTI halves
 * of one PGD as one address space) and is handed to guest-tasks, which resolves it to its
 * process. With --task (or --cpl user: then every process but the kernel's own) the kernel
 * ring is enabled only while a selected process's address space is loaded: ENABLE (START,
 * then the TASK_ARRIVE written here) when one is loaded, DISABLE (STOP) when another is, so
 * every other process runs unstepped and leaves no record; the kernel's TASK_ARRIVE of a
 * process not selected is not copied.
 *
 * A guest's own BTS (--guest-bts, the kernel's guest mode): the records the kernel could not
 * store into the guest's buffer are counted in the vCPU stat guest_bts_dropped; each increase
 * seen after a copy is one guest-bts-drop record (reason kernel, `to` = how many).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "guest-tasks.h"
#include "kvm-backend.h"
#include "log.h"
#include "ring-writer.h"
#include "kvm.h"
#include "tracer.h"
#include "x86.h"

#define KVM_BTS_MAX_RING (1ULL << 20)
#define KVM_BTS_MIN_RING 64ULL

/**
 * struct kvm_bts - the backend's state of one vCPU.
 * @map:      the mmap'd ring (header page, then the records)
 * @map_len:  its length
 * @hdr:      the ring header (shared with the kernel)
 * @recs:     the records (shared with the kernel)
 * @nr:       record slots
 * @next:     sequence number of the next record to copy
 * @lost:     the kernel's lost count already reported
 * @tsc0:     guest TSC at set-up
 * @ns0:      ns since trace start at set-up
 * @khz:      guest TSC frequency in kHz, 0 when unknown (times are then all @ns0)
 * @last_ns:  the time of the last escape record copied
 * @enabled:  the kernel ring is enabled
 * @selective: --task: the ring is enabled only while a selected process runs
 * @skip_arrive: a TASK_ARRIVE to this address-space id is not copied (~0: none)
 * @no_forget: the kernel has no KVM_X86_BTS_FORGET_CR3
 */
struct kvm_bts {
	void *map;
	size_t map_len;
	struct vbts_kvm_x86_bts_ring_header *hdr;
	const struct vbts_record *recs;
	uint64_t nr;
	uint64_t next;
	uint64_t lost;
	uint64_t tsc0;
	uint64_t ns0;
	uint64_t khz;
	uint64_t last_ns;
	bool enabled;
	bool selective;
	uint64_t skip_arrive;
	bool no_forget;
};

static uint64_t tsc_to_ns(const struct kvm_bts *kb, uint64_t tsc)
{
	unsigned __int128 d;

	if (!kb->khz)
		return kb->ns0;
	if (tsc < kb->tsc0) {
		d = (unsigned __int128)(kb->tsc0 - tsc) * 1000000U / kb->khz;
		return d >= kb->ns0 ? 0 : kb->ns0 - (uint64_t)d;
	}
	d = (unsigned __int128)(tsc - kb->tsc0) * 1000000U / kb->khz + kb->ns0;
	return d > VBTS_ESC_AUX_MAX ? VBTS_ESC_AUX_MAX : (uint64_t)d;
}

static void put(struct tracer_vcpu *tv, const struct vbts_record *r)
{
	if (ring_writer__append(tv->ring, r) == 0)
		tv->stat_records++;
}

static void put_escape(struct tracer_vcpu *tv, unsigned int kind, uint64_t to, uint64_t aux)
{
	struct vbts_record r = vbts_record__make_escape(kind, to, aux);

	put(tv, &r);
}

/* After a TASK_ARRIVE: the guest's pid and tgid of the process loaded, when known. */
static void put_pid(struct tracer_vcpu *tv)
{
	int32_t pid, tgid;

	if (tv->tasks && guest_tasks__current_pid(tv->tasks, tv->index, &pid, &tgid))
		put_escape(tv, VBTS_ESC_TASK_PID, (uint32_t)pid | (uint64_t)(uint32_t)tgid << 32, 0);
}

/* One kernel record into the ring file, its guest-TSC times converted. */
static void copy_record(struct tracer_vcpu *tv, struct kvm_bts *kb, struct vbts_record r)
{
	uint64_t aux;

	if (!vbts_record__is_escape(&r)) {
		put(tv, &r);
		return;
	}
	aux = vbts_record__escape_aux(&r);
	switch (vbts_record__escape_kind(&r)) {
	case VBTS_ESC_TASK_ARRIVE:
		if (r.to == kb->skip_arrive)
			return;
		/* fall through */
	case VBTS_ESC_TASK_DEPART:
	case VBTS_ESC_GAP_END:
		kb->last_ns = tsc_to_ns(kb, aux);
		r = vbts_record__make_escape(vbts_record__escape_kind(&r), r.to, kb->last_ns);
		break;
	case VBTS_ESC_START:
	case VBTS_ESC_STOP:
		kb->last_ns = tsc_to_ns(kb, r.to);
		r.to = kb->last_ns;
		break;
	case VBTS_ESC_GAP_BEGIN:
		tv->stat_gaps++;
		break;
	default:
		break;
	}
	put(tv, &r);
	if (vbts_record__escape_kind(&r) == VBTS_ESC_TASK_ARRIVE)
		put_pid(tv);
}

/* Copy every record the kernel published since the last copy, and consume them. */
static void drain(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	uint64_t head, tail, lost, n;

	head = __atomic_load_n(&kb->hdr->head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&kb->hdr->tail, __ATOMIC_RELAXED);
	lost = __atomic_load_n(&kb->hdr->lost, __ATOMIC_RELAXED);
	if (tail > head || head - tail > kb->nr || head < kb->next) {
		/* Not what the kernel writes: start again at head, count what is skipped. */
		put_escape(tv, VBTS_ESC_LOST, head >= kb->next ? head - kb->next : 0, 0);
		kb->next = head;
		kb->lost = lost;
		__atomic_store_n(&kb->hdr->tail, head, __ATOMIC_RELEASE);
		return;
	}
	if (tail > kb->next || lost != kb->lost) {
		/* The ring wrapped over records not yet copied. */
		n = tail > kb->next ? tail - kb->next : 0;
		if (lost > kb->lost && lost - kb->lost > n)
			n = lost - kb->lost;
		put_escape(tv, VBTS_ESC_LOST, n, 0);
		kb->lost = lost;
		if (tail > kb->next)
			kb->next = tail;
	}
	for (; kb->next < head; kb->next++)
		copy_record(tv, kb, kb->recs[kb->next % kb->nr]);
	__atomic_store_n(&kb->hdr->tail, head, __ATOMIC_RELEASE);
}

/*
 * The guest's own BTS under the kernel (--guest-bts --backend kvm): records the kernel dropped
 * since the last look (its vCPU stat guest_bts_dropped) are told by one guest-bts-drop record,
 * after the branches copied with them.
 */
static void tell_guest_bts_drops(struct tracer_vcpu *tv)
{
	uint64_t n;

	if (!tv->gbts_kvm_dropped || kvm_stat__read(tv->gbts_kvm_dropped, &n) < 0 ||
	    n <= tv->gbts_kvm_told)
		return;
	put_escape(tv, VBTS_ESC_GUEST_BTS_DROP, n - tv->gbts_kvm_told, VBTS_GUEST_BTS_DROP_KERNEL);
	tv->gbts_kvm_told = n;
}

/* Guest TSC now, and the ns since trace start it corresponds to. */
static void sample_clock(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	int khz;

	khz = kvm__ioctl_quiet(tv->fd, KVM_GET_TSC_KHZ, NULL);
	kb->khz = khz > 0 ? (uint64_t)khz : 0;
	if (kvm__get_msr(tv->fd, X86_MSR_IA32_TSC, &kb->tsc0))
		kb->khz = 0;
	kb->ns0 = tracer_vcpu__now_ns(tv);
	kb->last_ns = kb->ns0;
}

/* The guest's CR4 and LSTAR, for guest-tasks to find the kernel; 0, or -errno. */
static int read_attach_regs(struct tracer_vcpu *tv, uint64_t *cr4, uint64_t *lstar)
{
	struct kvm_sregs sregs;
	int ret;

	ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	*cr4 = sregs.cr4;
	if (kvm__get_msr(tv->fd, X86_MSR_LSTAR, lstar))
		*lstar = 0;
	return 0;
}

/* Start recording (selected process loaded): the kernel's START, then its TASK_ARRIVE. */
static int ring_on(struct tracer_vcpu *tv, struct kvm_bts *kb, uint64_t id, uint64_t ns)
{
	int ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_ENABLE, NULL);

	if (ret < 0) {
		pr_err("vCPU %u: KVM_X86_BTS_ENABLE: %s", tv->index, strerror(-ret));
		return ret;
	}
	kb->enabled = true;
	drain(tv, kb);
	/* Not before the kernel's START: escape times never go back. */
	put_escape(tv, VBTS_ESC_TASK_ARRIVE, id, ns > kb->last_ns ? ns : kb->last_ns);
	put_pid(tv);
	return 0;
}

/* Stop recording (another process loaded): its STOP. */
static int ring_off(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	int ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_DISABLE, NULL);

	if (ret < 0) {
		pr_err("vCPU %u: KVM_X86_BTS_DISABLE: %s", tv->index, strerror(-ret));
		return ret;
	}
	kb->enabled = false;
	drain(tv, kb);
	return 0;
}

/*
 * Another process has address space @cr3 now: what the kernel keeps for threads of its last
 * owner that went into the guest kernel while recorded (the step to judge when they come
 * back) would be wrongly waited for. Kernels before FORGET_CR3 keep nothing.
 */
static void forget(struct tracer_vcpu *tv, struct kvm_bts *kb, uint64_t cr3)
{
	int ret;

	if (kb->no_forget)
		return;
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_FORGET_CR3, &cr3);
	if (ret == -EINVAL || ret == -ENOTTY)
		kb->no_forget = true;
}

/* A CR3 load of a Linux guest: resolve it, and with --task switch the ring on or off. */
static int cr3_loaded(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	const struct vbts_kvm_x86_cr3_load *ld = (const void *)tv->run->padding;
	uint64_t id = guest_tasks__id(ld->new_cr3), ns = tsc_to_ns(kb, ld->guest_tsc);
	uint64_t cr4, lstar;
	bool traced;

	if (!guest_tasks__attached(tv->tasks) && !read_attach_regs(tv, &cr4, &lstar))
		guest_tasks__attach(tv->tasks, ld->new_cr3, cr4, lstar);
	traced = guest_tasks__switch(tv->tasks, tv->index, ld->old_cr3, ld->new_cr3, ns);
	if (guest_tasks__renewed(tv->tasks, tv->index))
		forget(tv, kb, ld->new_cr3);
	if (!kb->selective) {
		drain(tv, kb);
		return 0;
	}
	kb->skip_arrive = traced ? ~0ULL : id;
	drain(tv, kb);
	kb->skip_arrive = ~0ULL;
	if (kb->enabled && !traced)
		return ring_off(tv, kb);
	if (!kb->enabled && traced)
		return ring_on(tv, kb, id, ns);
	return 0;
}

/*
 * Another exit of a Linux guest: the process recorded may have exited (the kernel keeps its
 * address space loaded while kernel threads run), a queued task announcement may be due.
 */
static int settle(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	struct kvm_sregs sregs;
	int ret;

	if (kb->selective && kb->enabled &&
	    guest_tasks__gone(tv->tasks, tv->index, tracer_vcpu__now_ns(tv)))
		return ring_off(tv, kb);
	if (!guest_tasks__settle(tv->tasks, tv->index, false) || !kb->selective || kb->enabled)
		return 0;
	/* Its final comm selects the process (execve via a link of another name). */
	ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	return ring_on(tv, kb, guest_tasks__id(sregs.cr3), tracer_vcpu__now_ns(tv));
}

static uint32_t kernel_cpl(enum vbts_cpl_filter f)
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

int kvm_bts__modes(int kvm_fd)
{
	int ret = kvm__ioctl_quiet(kvm_fd, KVM_CHECK_EXTENSION, VBTS_KVM_CAP_X86_BTS);

	return ret < 0 ? 0 : ret;
}

bool kvm_bts__usable(int kvm_fd)
{
	unsigned int need = VBTS_KVM_X86_BTS_MODE_RING | VBTS_KVM_X86_BTS_MODE_STEP;
	int cr3 = kvm__ioctl_quiet(kvm_fd, KVM_CHECK_EXTENSION, VBTS_KVM_CAP_X86_CR3_TRACE);

	return ((unsigned int)kvm_bts__modes(kvm_fd) & need) == need && cr3 > 0;
}

int kvm_bts__guest_mode(int kvm_fd)
{
	const uint32_t ecx = X86_CPUID_1_ECX_DTES64 | X86_CPUID_1_ECX_DS_CPL;
	struct kvm_cpuid2 *c;
	int ret = -ENOTSUP;
	unsigned int n = 256;

	if (!((unsigned int)kvm_bts__modes(kvm_fd) & VBTS_KVM_X86_BTS_MODE_GUEST))
		return -ENOTSUP;
	c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
	if (!c)
		return -ENOMEM;
	c->nent = n;
	if (kvm__ioctl(kvm_fd, KVM_GET_EMULATED_CPUID, c) < 0) {
		free(c);
		return -EIO;
	}
	for (unsigned int i = 0; i < c->nent && i < n; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == 1 && (e->edx & X86_CPUID_1_EDX_DS) && (e->ecx & ecx) == ecx)
			ret = 0;
	}
	free(c);
	return ret;
}

static int kvm_bts_init(struct tracer_vcpu *tv)
{
	struct vbts_kvm_x86_cr3_trace cr3 = { .flags = VBTS_KVM_X86_CR3_TRACE_ENABLE };
	struct vbts_kvm_x86_bts_config cfg = { .mode = VBTS_KVM_X86_BTS_RING_WRAP };
	struct kvm_sregs sregs;
	struct kvm_bts *kb;
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	kb = calloc(1, sizeof(*kb));
	if (!kb)
		return -ENOMEM;
	kb->skip_arrive = ~0ULL;
	/* Recording user mode only, a Linux guest's kernel threads and boot have nothing to give. */
	kb->selective = tv->tasks &&
			(guest_tasks__selective(tv->tasks) || tv->cpl == VBTS_CPL_USER);
	if (tv->tasks)
		cr3.flags |= VBTS_KVM_X86_CR3_TRACE_EXIT | VBTS_KVM_X86_CR3_TRACE_KPTI;
	kb->nr = tv->ring_records ? tv->ring_records : 65536;
	if (kb->nr > KVM_BTS_MAX_RING)
		kb->nr = KVM_BTS_MAX_RING;
	if (kb->nr < KVM_BTS_MIN_RING)
		kb->nr = KVM_BTS_MIN_RING;
	cfg.cpl = kernel_cpl(tv->cpl);
	cfg.nr_records = kb->nr;
	cfg.watermark = kb->nr / 2;
	cfg.flags = VBTS_KVM_X86_BTS_CFG_BRANCHES;
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_CONFIGURE, &cfg);
	if (ret < 0) {
		pr_err("vCPU %u: KVM_X86_BTS_CONFIGURE: %s", tv->index, strerror(-ret));
		goto err_free;
	}
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
	if (ret < 0) {
		pr_err("vCPU %u: KVM_X86_SET_CR3_TRACE: %s", tv->index, strerror(-ret));
		goto err_free;
	}
	ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		goto err_cr3;
	kb->map_len = VBTS_KVM_X86_BTS_RING_HEADER_SIZE +
		      ((kb->nr * sizeof(struct vbts_record) + page - 1) & ~(uint64_t)(page - 1));
	kb->map = mmap(NULL, kb->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, tv->fd,
		       (off_t)VBTS_KVM_X86_BTS_RING_PAGE_OFFSET * page);
	if (kb->map == MAP_FAILED) {
		ret = -errno;
		pr_err("vCPU %u: mmap of the branch trace ring: %s", tv->index, strerror(-ret));
		goto err_cr3;
	}
	kb->hdr = kb->map;
	kb->recs = (const struct vbts_record *)((char *)kb->map +
						VBTS_KVM_X86_BTS_RING_HEADER_SIZE);
	if (kb->hdr->nr_records != kb->nr || kb->hdr->record_size != sizeof(struct vbts_record)) {
		pr_err("vCPU %u: the kernel's ring has %" PRIu64 " records of %u bytes", tv->index,
		       (uint64_t)kb->hdr->nr_records, kb->hdr->record_size);
		ret = -EPROTO;
		goto err_unmap;
	}
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_CLEAR, NULL);
	if (ret < 0)
		goto err_unmap;
	sample_clock(tv, kb);
	tv->priv = kb;
	/* With --task nothing is recorded until a selected process is loaded. */
	if (kb->selective)
		return 0;
	/* The kernel's START, then the task the vCPU starts in, as the step backend writes. */
	ret = ring_on(tv, kb, tv->tasks ? guest_tasks__id(sregs.cr3) : sregs.cr3 & VBTS_CR3_MASK,
		      kb->last_ns);
	if (ret < 0) {
		tv->priv = NULL;
		goto err_unmap;
	}
	return 0;

err_unmap:
	munmap(kb->map, kb->map_len);
err_cr3:
	cr3.flags = 0;
	kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
err_free:
	free(kb);
	return ret;
}

static int kvm_bts_before_run(struct tracer_vcpu *tv)
{
	(void)tv;
	return 0;
}

static int kvm_bts_after_exit(struct tracer_vcpu *tv)
{
	struct kvm_bts *kb = tv->priv;
	int ret;

	if (tv->run->exit_reason == VBTS_KVM_EXIT_X86_CR3_LOAD) {
		if (!tv->tasks)
			return -EPROTO; /* not asked for */
		ret = cr3_loaded(tv, kb);
		return ret < 0 ? ret : 1;
	}
	drain(tv, kb);
	tell_guest_bts_drops(tv);
	if (tv->tasks) {
		ret = settle(tv, kb);
		if (ret < 0)
			return ret;
	}
	return tv->run->exit_reason == VBTS_KVM_EXIT_X86_BTS ? 1 : 0;
}

static void kvm_bts_fini(struct tracer_vcpu *tv)
{
	struct vbts_kvm_x86_cr3_trace cr3 = { 0 };
	struct kvm_bts *kb = tv->priv;
	int ret;

	if (!kb)
		return;
	if (tv->tasks)
		guest_tasks__settle(tv->tasks, tv->index, true);
	/* the last drops before the kernel's STOP */
	drain(tv, kb);
	tell_guest_bts_drops(tv);
	if (kb->enabled) {
		ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_DISABLE, NULL);
		if (ret < 0) {
			pr_err("vCPU %u: KVM_X86_BTS_DISABLE: %s", tv->index, strerror(-ret));
			drain(tv, kb);
			put_escape(tv, VBTS_ESC_STOP, tracer_vcpu__now_ns(tv), 0);
		} else {
			drain(tv, kb);
		}
		kb->enabled = false;
	}
	kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
	munmap(kb->map, kb->map_len);
	free(kb);
	tv->priv = NULL;
}

const struct tracer_ops kvm_tracer_ops = {
	.name = "kvm",
	.vcpu_init = kvm_bts_init,
	.before_run = kvm_bts_before_run,
	.after_exit = kvm_bts_after_exit,
	.vcpu_fini = kvm_bts_fini,
};
