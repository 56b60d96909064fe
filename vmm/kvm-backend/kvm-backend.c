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
 * The copy itself (checks of the ring's head and tail, times, losses) is kvm-ring.c's, shared
 * with `vbts attach`.
 *
 * Linux guests (tv->tasks): every CR3 load exits (KVM_X86_CR3_TRACE_EXIT, with the KPTI halves
 * of one PGD as one address space) and is handed to guest-tasks, which resolves it to its
 * process. With --task (or --cpl user: then every process but the kernel's own) the kernel
 * ring is enabled only while a selected process's address space is loaded: ENABLE (START,
 * then the TASK_ARRIVE written here) when one is loaded, DISABLE (STOP) when another is, so
 * every other process runs unstepped and leaves no record; the kernel's TASK_ARRIVE of a
 * process not selected is not copied. Such a ring is configured with KVM_X86_BTS_CFG_TASK
 * (when the kernel knows it): the interrupt and NMI handlers that run while a selected process
 * is loaded are not its code, and run unstepped in a gap instead of being recorded.
 * Recording user mode only, the ring asks for KVM_X86_BTS_CFG_THREADS where the kernel has
 * it (KVM_X86_BTS_MODE_RETURNS): the guest kernel is never stepped, every return to user
 * mode is caught at its IRET or SYSRET, and the ring names the guest thread (THREAD records)
 * and marks a thread that comes back elsewhere than it left (ENTRY records); the offsets that
 * find the current thread in the guest come from its BTF (guest_tasks__thread_layout()).
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
#include <time.h>
#include <unistd.h>

#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "guest-tasks.h"
#include "kvm-backend.h"
#include "kvm-ring.h"
#include "log.h"
#include "ring-writer.h"
#include "kvm.h"
#include "tracer.h"
#include "x86.h"

#define KVM_BTS_MAX_RING (1ULL << 20)
#define KVM_BTS_MIN_RING 64ULL
/* The longest a process's loads stay quiet before it is looked at again (a rename). */
#define QUIET_RENEW_NS 1000000000ULL

/**
 * struct kvm_bts - the backend's state of one vCPU.
 * @ring:     the kernel ring mapped from the vCPU fd, and the copy's state (kvm-ring.h)
 * @enabled:  the kernel ring is enabled
 * @selective: --task (or --cpl user with a Linux guest): the ring is enabled only while a
 *            selected process runs; follows the control socket's task filter and CPL
 * @no_forget: the kernel has no KVM_X86_BTS_FORGET_CR3
 * @no_threads: the kernel refused KVM_X86_BTS_CFG_THREADS (no returns mode): it steps the
 *            guest kernel's way back to user mode and names no thread
 * @no_task_flag: the kernel refused KVM_X86_BTS_CFG_TASK
 * @no_quiet: the kernel or the guest's BTF has no quiet set (KVM_X86_SET_CR3_QUIET)
 * @quiet_gen: guest_tasks__select_gen() when the quiet set was last filled; another empties it
 * @quiet_ns: when the quiet set was last emptied
 * @stopped:  the control socket stopped recording: the ring stays disabled until it starts
 *            it again
 * @cfg:      the kernel ring's configuration (CONFIGURE again with another CPL filter)
 */
struct kvm_bts {
	struct kvm_ring ring;
	bool enabled;
	bool selective;
	bool no_forget;
	bool stopped;
	bool no_task_flag;
	bool no_threads;
	bool no_quiet;
	unsigned int quiet_gen;
	uint64_t quiet_ns;
	struct vbts_kvm_x86_bts_config cfg;
};

/*
 * KVM_X86_BTS_CONFIGURE with kb->cfg. A selective ring (enabled only while a selected process
 * runs) asks for KVM_X86_BTS_CFG_TASK, so that the kernel runs the handlers of the interrupts
 * and NMIs that come while it runs unstepped, in a gap, rather than step them as the task's
 * kernel code; a kernel without it refuses the flag, and is configured again without it.
 */
static int configure(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	uint64_t current;
	uint32_t pid, tgid;
	int ret;

	kb->cfg.flags = VBTS_KVM_X86_BTS_CFG_BRANCHES;
	if (kb->selective && !kb->no_task_flag)
		kb->cfg.flags |= VBTS_KVM_X86_BTS_CFG_TASK;
	kb->cfg.thread_current = 0;
	kb->cfg.thread_pid = 0;
	kb->cfg.thread_tgid = 0;
	if (tv->tasks && tv->cpl == VBTS_CPL_USER && !kb->no_threads &&
	    !guest_tasks__thread_layout(tv->tasks, &current, &pid, &tgid)) {
		kb->cfg.flags |= VBTS_KVM_X86_BTS_CFG_THREADS;
		kb->cfg.thread_current = current;
		kb->cfg.thread_pid = pid;
		kb->cfg.thread_tgid = tgid;
	}
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_CONFIGURE, &kb->cfg);
	if ((ret == -EINVAL || ret == -EOPNOTSUPP) &&
	    (kb->cfg.flags & VBTS_KVM_X86_BTS_CFG_THREADS)) {
		/* A kernel before the series' returns mode (or without it: VMX). */
		kb->no_threads = true;
		return configure(tv, kb);
	}
	if (ret == -EINVAL && (kb->cfg.flags & VBTS_KVM_X86_BTS_CFG_TASK)) {
		kb->no_task_flag = true;
		kb->cfg.flags = VBTS_KVM_X86_BTS_CFG_BRANCHES;
		ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_CONFIGURE, &kb->cfg);
	}
	if (ret < 0)
		pr_err("vCPU %u: KVM_X86_BTS_CONFIGURE: %s", tv->index, strerror(-ret));
	return ret;
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
	kvm_ring__put_escape(tv, VBTS_ESC_GUEST_BTS_DROP, n - tv->gbts_kvm_told,
			     VBTS_GUEST_BTS_DROP_KERNEL);
	tv->gbts_kvm_told = n;
}

/* Guest TSC now, and the ns since trace start it corresponds to. */
static void sample_clock(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	int khz;

	khz = kvm__ioctl_quiet(tv->fd, KVM_GET_TSC_KHZ, NULL);
	kb->ring.khz = khz > 0 ? (uint64_t)khz : 0;
	if (kvm__get_msr(tv->fd, X86_MSR_IA32_TSC, &kb->ring.tsc0))
		kb->ring.khz = 0;
	kb->ring.ns0 = tracer_vcpu__now_ns(tv);
	kb->ring.last_ns = kb->ring.ns0;
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

/* Whether only selected processes are recorded (a Linux guest, --task or user mode only). */
static bool selective(const struct tracer_vcpu *tv)
{
	return tv->tasks && (guest_tasks__selective(tv->tasks) || tv->cpl == VBTS_CPL_USER);
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
	kvm_ring__drain(&kb->ring, tv);
	kb->ring.cr3 = id;
	/* Not before the kernel's START: escape times never go back. */
	kvm_ring__put_escape(tv, VBTS_ESC_TASK_ARRIVE, id, ns > kb->ring.last_ns ? ns : kb->ring.last_ns);
	kvm_ring__put_pid(tv);
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
	kvm_ring__drain(&kb->ring, tv);
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

/*
 * The quiet set of the vCPU (kvm-bts-uapi.h): emptied (@clear) and/or given address space
 * @cr3 with context @ctx. Kernels before it, or a guest whose BTF lacks cpu_tlbstate, keep
 * every load exiting.
 */
static void quiet(struct tracer_vcpu *tv, struct kvm_bts *kb, bool clear, bool add,
		  uint64_t cr3, uint64_t ctx)
{
	struct vbts_kvm_x86_cr3_quiet q = { .cr3 = cr3, .ctx = ctx };
	uint64_t offset;
	int ret;

	if (kb->no_quiet ||
	    guest_tasks__tlb_layout(tv->tasks, &offset, &q.ctx_stride, &q.ctx_count)) {
		kb->no_quiet = true;
		return;
	}
	q.ctx_offset = offset;
	q.flags = (clear ? VBTS_KVM_X86_CR3_QUIET_CLEAR : 0) | (add ? VBTS_KVM_X86_CR3_QUIET_ADD : 0);
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_QUIET, &q);
	if (ret == -ENOTTY || ret == -EINVAL || ret == -EOPNOTSUPP)
		kb->no_quiet = true;
}

/*
 * Processes found quiet may be selected now: the selection changed (control socket), or one
 * renamed itself (prctl) without an exec. The quiet set is emptied then, and at least every
 * QUIET_RENEW_NS, so that every process's next load exits again.
 */
static void quiet_renew(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	unsigned int gen = guest_tasks__select_gen(tv->tasks);
	uint64_t now = tracer_vcpu__now_ns(tv);

	if (gen == kb->quiet_gen && now - kb->quiet_ns < QUIET_RENEW_NS)
		return;
	kb->quiet_gen = gen;
	kb->quiet_ns = now;
	quiet(tv, kb, true, false, 0, 0);
}

/*
 * A CR3 load of a Linux guest: resolve it, and with --task switch the ring on or off. A process
 * that is not selected and has its final name has nothing more to tell at its loads: it joins
 * the quiet set, with the context the kernel read at this load.
 */
static int cr3_loaded(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	const struct vbts_kvm_x86_cr3_load *ld = (const void *)tv->run->padding;
	uint64_t id = guest_tasks__id(ld->new_cr3), ns = kvm_ring__tsc_to_ns(&kb->ring, ld->guest_tsc);
	uint64_t cr4, lstar;
	bool traced;

	if (!guest_tasks__attached(tv->tasks) && !read_attach_regs(tv, &cr4, &lstar))
		guest_tasks__attach(tv->tasks, ld->new_cr3, cr4, lstar);
	traced = guest_tasks__switch(tv->tasks, tv->index, ld->old_cr3, ld->new_cr3, ns);
	if (guest_tasks__renewed(tv->tasks, tv->index))
		forget(tv, kb, ld->new_cr3);
	if (!kb->selective) {
		kvm_ring__drain(&kb->ring, tv);
		return 0;
	}
	kb->ring.skip_arrive = traced ? ~0ULL : id;
	kvm_ring__drain(&kb->ring, tv);
	kb->ring.skip_arrive = ~0ULL;
	quiet_renew(tv, kb);
	if ((ld->flags & VBTS_KVM_X86_CR3_LOAD_CTX) &&
	    guest_tasks__quiet(tv->tasks, tv->index, ld->new_cr3, ld->new_ctx) && !traced)
		quiet(tv, kb, false, true, ld->new_cr3, ld->new_ctx);
	if (kb->enabled && !traced)
		return ring_off(tv, kb);
	if (!kb->enabled && traced && !kb->stopped)
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
	if (!guest_tasks__settle(tv->tasks, tv->index, false) || !kb->selective || kb->enabled ||
	    kb->stopped)
		return 0;
	/* Its final comm selects the process (execve via a link of another name). */
	ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	return ring_on(tv, kb, guest_tasks__id(sregs.cr3), tracer_vcpu__now_ns(tv));
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
	char err[160];
	uint64_t nr;
	int ret;

	kb = calloc(1, sizeof(*kb));
	if (!kb)
		return -ENOMEM;
	/* Recording user mode only, a Linux guest's kernel threads and boot have nothing to give. */
	kb->selective = selective(tv);
	if (tv->tasks)
		cr3.flags |= VBTS_KVM_X86_CR3_TRACE_EXIT | VBTS_KVM_X86_CR3_TRACE_KPTI;
	nr = tv->ring_records ? tv->ring_records : 65536;
	if (nr > KVM_BTS_MAX_RING)
		nr = KVM_BTS_MAX_RING;
	if (nr < KVM_BTS_MIN_RING)
		nr = KVM_BTS_MIN_RING;
	cfg.cpl = kvm_ring__cpl(tv->cpl);
	cfg.nr_records = nr;
	cfg.watermark = nr / 2;
	kb->cfg = cfg;
	ret = configure(tv, kb);
	if (ret < 0)
		goto err_free;
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
	if (ret < 0) {
		pr_err("vCPU %u: KVM_X86_SET_CR3_TRACE: %s", tv->index, strerror(-ret));
		goto err_free;
	}
	ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		goto err_cr3;
	ret = kvm_ring__map(&kb->ring, tv->fd, (off_t)VBTS_KVM_X86_BTS_RING_PAGE_OFFSET * page,
			    nr, err, sizeof(err));
	if (ret < 0) {
		pr_err("vCPU %u: %s", tv->index, err);
		goto err_cr3;
	}
	ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_CLEAR, NULL);
	if (ret < 0)
		goto err_unmap;
	sample_clock(tv, kb);
	tv->priv = kb;
	/* the quiet set's layout, so that the kernel reads the context of every load */
	if (tv->tasks) {
		kb->quiet_gen = guest_tasks__select_gen(tv->tasks);
		kb->quiet_ns = tracer_vcpu__now_ns(tv);
		quiet(tv, kb, true, false, 0, 0);
	}
	/* With --task nothing is recorded until a selected process is loaded. */
	if (kb->selective)
		return 0;
	/* The kernel's START, then the task the vCPU starts in, as the step backend writes. */
	ret = ring_on(tv, kb, tv->tasks ? guest_tasks__id(sregs.cr3) : sregs.cr3 & VBTS_CR3_MASK,
		      kb->ring.last_ns);
	if (ret < 0) {
		tv->priv = NULL;
		goto err_unmap;
	}
	return 0;

err_unmap:
	kvm_ring__unmap(&kb->ring);
err_cr3:
	cr3.flags = 0;
	kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
err_free:
	free(kb);
	return ret;
}

/* The address space loaded now, as the ring's TASK_ARRIVE names it. */
static int current_task(struct tracer_vcpu *tv, uint64_t *id)
{
	struct kvm_sregs sregs;
	int ret = kvm__ioctl_quiet(tv->fd, KVM_GET_SREGS, &sregs);

	if (ret < 0)
		return ret;
	*id = tv->tasks ? guest_tasks__id(sregs.cr3) : sregs.cr3 & VBTS_CR3_MASK;
	return 0;
}

/*
 * The task filter of the control socket may have changed: without one (and not user mode
 * only) the ring records whatever runs, so it is enabled again at once; with one it goes
 * off at the next load of a process it does not select.
 */
static int reselect(struct tracer_vcpu *tv, struct kvm_bts *kb)
{
	uint64_t id;
	int ret;

	kb->selective = selective(tv);
	if (kb->selective || kb->enabled || kb->stopped)
		return 0;
	ret = current_task(tv, &id);
	return ret < 0 ? ret : ring_on(tv, kb, id, tracer_vcpu__now_ns(tv));
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
		kb->selective = selective(tv);
		tv->stat_cr3_exits++;
		ret = cr3_loaded(tv, kb);
		return ret < 0 ? ret : 1;
	}
	kvm_ring__drain(&kb->ring, tv);
	tell_guest_bts_drops(tv);
	if (tv->tasks) {
		quiet_renew(tv, kb);
		ret = reselect(tv, kb);
		if (!ret)
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
	kvm_ring__drain(&kb->ring, tv);
	tell_guest_bts_drops(tv);
	if (kb->enabled) {
		ret = kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_BTS_DISABLE, NULL);
		if (ret < 0) {
			pr_err("vCPU %u: KVM_X86_BTS_DISABLE: %s", tv->index, strerror(-ret));
			kvm_ring__drain(&kb->ring, tv);
			kvm_ring__put_escape(tv, VBTS_ESC_STOP, tracer_vcpu__now_ns(tv), 0);
		} else {
			kvm_ring__drain(&kb->ring, tv);
		}
		kb->enabled = false;
	}
	kvm__ioctl_quiet(tv->fd, VBTS_KVM_X86_SET_CR3_TRACE, &cr3);
	kvm_ring__unmap(&kb->ring);
	free(kb);
	tv->priv = NULL;
}

/*
 * The control socket's start, stop and CPL filter: the kernel writes STOP when its ring is
 * disabled and START (with its CPL filter) when it is enabled; a new filter is configured
 * while the ring is disabled (the kernel refuses it on an enabled ring) and told by the
 * START of the ring enabled again. With --task the ring is enabled again only while a
 * selected process is loaded: after start, at the next CR3 load or exit of one.
 */
static int kvm_bts_control(struct tracer_vcpu *tv, enum tracer_control what)
{
	struct kvm_bts *kb = tv->priv;
	bool was = kb->enabled;
	uint64_t id;
	int ret;

	switch (what) {
	case TRACER_CTL_STOP:
		kb->stopped = true;
		return kb->enabled ? ring_off(tv, kb) : 0;
	case TRACER_CTL_START:
		kb->stopped = false;
		kb->selective = selective(tv);
		if (kb->enabled || kb->selective)
			return 0;
		ret = current_task(tv, &id);
		return ret < 0 ? ret : ring_on(tv, kb, id, tracer_vcpu__now_ns(tv));
	case TRACER_CTL_CPL:
		kb->selective = selective(tv);
		if (was) {
			ret = ring_off(tv, kb);
			if (ret < 0)
				return ret;
		}
		kb->cfg.cpl = kvm_ring__cpl(tv->cpl);
		ret = configure(tv, kb);
		if (!was)
			return ret;
		/* recording again, with the old filter if the new one was refused */
		if (current_task(tv, &id) < 0)
			id = 0;
		return ring_on(tv, kb, id, tracer_vcpu__now_ns(tv)) ?: ret;
	}
	return -EINVAL;
}

const struct tracer_ops kvm_tracer_ops = {
	.name = "kvm",
	.vcpu_init = kvm_bts_init,
	.before_run = kvm_bts_before_run,
	.after_exit = kvm_bts_after_exit,
	.vcpu_fini = kvm_bts_fini,
	.control = kvm_bts_control,
};
