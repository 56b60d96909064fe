// SPDX-License-Identifier: GPL-2.0
/*
 * collector.c - trace a VM another process runs: KVM_X86_BTS_ATTACH (kvm-patches/) gives a
 * tracer fd for the VMM's VM, whose per-vCPU rings are mapped and copied into the trace
 * directory by kvm-ring.c, the VMM's kvm backend's own copy.
 *
 * The VM fd is taken from the VMM with pidfd_getfd(2), which is where the kernel checks ptrace
 * access (PTRACE_MODE_ATTACH_REALCREDS); KVM_X86_BTS_ATTACH checks CAP_PERFMON and that the VM
 * is the VMM's. Configuration changes are applied by each vCPU before its next entry into the
 * guest: a QEMU started with -S runs its first guest instruction with tracing enabled.
 *
 * Records a previous tracer left in a ring are skipped (the copy starts at the ring's head). A
 * vCPU sets its ring up when it applies CONFIGURE: until then the mapped header is empty and
 * nothing is copied (kvm_ring__map_pending()).
 * Times: escape records carry the guest TSC, which another process cannot read (vCPU ioctls
 * from another mm fail), so its frequency is unknown: an escape's time is when it was copied
 * (kvm_ring's copy_ns, at most DRAIN_INTERVAL_MS of `vbts attach` late). The records' order is
 * exact, their times are not; a guest process's events carry the same times as its records.
 *
 * A Linux guest (the image is a kernel whose BTF vmm/introspect/ reads) has its processes
 * named as under `vbts run`: vmm/record/guest-tasks.c reads guest memory through the tracer fd
 * (tracer-mem.h) and is told of each TASK_ARRIVE as it is copied (kvm_ring's follow mode); it
 * writes the task, exec and exit events of events.jsonl and the TASK_PID records. The guest
 * kernel is looked for in guest memory at most once a second while CR3 loads come. With
 * --cpl user the rings record only the task escapes until the first process is seen (the
 * kernel's boot has no user mode, and a stepped boot takes hours nested), then branches too.
 * When kernel code is recorded, the kernel's symbols are written as kallsyms.map once a
 * process has run (guest_tasks__write_kallsyms(): its tables from the image, found through
 * the vmcoreinfo page in guest memory).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <linux/kvm.h>
#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "attach-crash.h"
#include "crash-report.h"
#include "errmsg.h"
#include "collector.h"
#include "kvm-backend/kvm-backend.h"
#include "guest-tasks.h"
#include "kvm-backend/kvm-ring.h"
#include "log.h"
#include "ring-writer.h"
#include "trace.h"
#include "tracer-mem.h"

#define KERNEL_RING_MAX (1ULL << 20)
#define KERNEL_RING_MIN 64ULL
/* How long closing waits for each vCPU to apply DISABLE (a paused vCPU never does). */
#define DISABLE_WAIT_MS 500
/* The guest kernel is looked for at most this often (each try reads guest memory). */
#define FIND_KERNEL_INTERVAL_NS 1000000000ULL
/* Exits of processes are looked for at most this often. */
#define REAP_INTERVAL_NS 100000000ULL
/* guest-tasks' bulk reads go through tracer_mem__read() in one ioctl each. */
_Static_assert(GUEST_TASKS_READ_MAX <= VBTS_KVM_X86_BTS_TRACER_READ_MAX,
	       "a guest-tasks read fits one KVM_X86_BTS_TRACER_READ_GPA");
/* Tries at writing kallsyms.map, the n-th 2^n s after the one before. */
#define KALLSYMS_TRIES 6

struct collector_vcpu {
	struct tracer_vcpu tv;
	struct kvm_ring ring;
	bool mapped;
	uint64_t last_copy_ns;	/* the last copy that brought records, ns since the start */
};

/**
 * struct collector - an attached VM.
 * @tfd:    the tracer fd
 * @nr:     vCPUs
 * @v:      their state
 * @trace:  the trace directory
 * @frozen: collector__freeze() ran
 * @mem:    guest memory through the tracer fd, for @tasks
 * @tasks:  a Linux guest's processes, NULL when they are not named
 * @base:   the tracer configuration of every vCPU (@base.vcpu and the BRANCHES flag set per call)
 * @deferred: branches are recorded once the first process is seen (--cpl user, @tasks)
 * @found_ns, @found_arrivals: the last look for the guest kernel, and the TASK_ARRIVEs by then
 * @reap_ns: the last look for exited processes
 * @gone:   per vCPU, for guest_tasks__reap()
 * @clock:  the rings' shared guest TSC to time (kvm-ring.h)
 */
struct collector {
	int tfd;
	unsigned int nr;
	struct collector_vcpu *v;
	struct trace *trace;
	char *dir;		/* the trace directory */
	uint64_t start_ns;	/* the trace's start, CLOCK_MONOTONIC */
	bool frozen;
	struct tracer_mem *mem;
	struct guest_tasks *tasks;
	struct vbts_kvm_x86_bts_tracer_config base;
	bool deferred;
	uint64_t found_ns;
	uint64_t found_arrivals;
	uint64_t reap_ns;
	bool *gone;
	char *kallsyms;		/* where the kernel's symbols go; NULL when not wanted */
	pthread_t ksym_thread;	/* writes them: kallsyms_worker() */
	bool ksym_started;
	bool ksym_stop;		/* atomic: the worker ends at its next look */
	bool ksym_done;		/* atomic: the worker wrote them */
	struct kvm_ring_clock clock;
};

/*
 * This host's TSC frequency in kHz, measured against CLOCK_MONOTONIC_RAW over 20 ms; 0 when it
 * cannot be. A guest's TSC runs at it unless its VMM scales it.
 */
static uint64_t host_tsc_khz(void)
{
	struct timespec a, b, d = { .tv_nsec = 20000000 };
	uint64_t t0, t1, ns;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &a))
		return 0;
	t0 = __rdtsc();
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	t1 = __rdtsc();
	if (clock_gettime(CLOCK_MONOTONIC_RAW, &b))
		return 0;
	ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	return ns && t1 > t0 ? (uint64_t)((unsigned __int128)(t1 - t0) * 1000000U / ns) : 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

bool collector__supported(int kvm_fd)
{
	return (unsigned int)kvm_bts__modes(kvm_fd) & VBTS_KVM_X86_BTS_MODE_ATTACH;
}

/* The tracer fd for @fds's VM; -errno with @err set. */
static int open_tracer(int kvm_fd, int pidfd, const struct vmm_fds *fds, char *err,
		       size_t errlen)
{
	struct vbts_kvm_x86_bts_attach a = { .pidfd = (uint32_t)pidfd };
	int vmfd, tfd, e;

	vmfd = (int)syscall(SYS_pidfd_getfd, pidfd, fds->vm_fd, 0);
	if (vmfd < 0) {
		e = errno;
		if (e == EPERM || e == EACCES)
			errmsg__set(err, errlen,
				"no permission to trace process %d: attaching needs ptrace access "
				"to it (same user and kernel.yama.ptrace_scope, or root)", fds->pid);
		else if (e == ESRCH)
			errmsg__set(err, errlen, "process %d is gone", fds->pid);
		else
			errmsg__set(err, errlen, "cannot take VM fd %d of process %d: %s", fds->vm_fd,
				fds->pid, strerror(e));
		return -e;
	}
	a.vm_fd = (uint32_t)vmfd;
	tfd = ioctl(kvm_fd, VBTS_KVM_X86_BTS_ATTACH, &a);
	e = errno;
	close(vmfd);
	if (tfd >= 0)
		return tfd;
	switch (e) {
	case EBUSY:
		errmsg__set(err, errlen,
			"the VM of process %d is already traced (another vbts attach, or its VMM "
			"uses the rings itself): one collector per VM", fds->pid);
		break;
	case EPERM:
		errmsg__set(err, errlen, "no permission to trace the VM of process %d: attaching needs "
			"CAP_PERFMON or CAP_SYS_ADMIN", fds->pid);
		break;
	case ESRCH:
		errmsg__set(err, errlen, "process %d is gone", fds->pid);
		break;
	case EOPNOTSUPP:
		errmsg__set(err, errlen, "the VM of process %d cannot be traced (protected guest state)",
			fds->pid);
		break;
	default:
		errmsg__set(err, errlen, "KVM_X86_BTS_ATTACH on the VM of process %d: %s", fds->pid,
			strerror(e));
	}
	return -e;
}

/*
 * Recording user mode of a Linux guest whose kernel layout is known: the kernel names the
 * guest threads and never steps the guest kernel (KVM_X86_BTS_CFG_THREADS), where it can.
 * Branches need not wait for the first process then (the boot has no user mode to step):
 * every process is recorded from its first instruction.
 */
static void name_threads(struct collector *c, const struct collector_config *cfg)
{
	uint64_t current;
	uint32_t pid, tgid;

	if (!c->tasks || cfg->cpl != VBTS_CPL_USER ||
	    guest_tasks__thread_layout(c->tasks, &current, &pid, &tgid))
		return;
	c->base.config.flags |= VBTS_KVM_X86_BTS_CFG_THREADS;
	c->base.config.thread_current = current;
	c->base.config.thread_pid = pid;
	c->base.config.thread_tgid = tgid;
	c->deferred = cfg->nr_start_at > 0;
}

/* The tracer configuration of vCPU @i: the escapes alone while branches are deferred. */
static struct vbts_kvm_x86_bts_tracer_config tracer_config(const struct collector *c,
							  unsigned int i)
{
	struct vbts_kvm_x86_bts_tracer_config tc = c->base;

	tc.vcpu = i;
	/* Deferred: the escapes alone, each waking the collector (watermark 0). */
	if (c->deferred) {
		tc.config.flags &= ~(uint64_t)VBTS_KVM_X86_BTS_CFG_BRANCHES;
		tc.config.watermark = 0;
	}
	return tc;
}

static int configure_vcpu(struct collector *c, unsigned int i, const struct collector_config *cfg,
			  uint64_t nr, uint64_t stride, uint64_t start_ns, char *err,
			  size_t errlen)
{
	struct vbts_kvm_x86_bts_tracer_config tc = tracer_config(c, i);
	struct collector_vcpu *v = &c->v[i];
	char why[160];
	int ret;

	v->tv.index = i;
	v->tv.fd = -1;
	v->tv.ring = trace__ring(c->trace, i);
	v->tv.cpl = cfg->cpl;
	v->tv.start_ns = start_ns;
	v->tv.ring_records = cfg->ring_records;
	v->tv.tasks = c->tasks;
	ret = ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_CONFIGURE, &tc) < 0 ? -errno : 0;
	if ((ret == -EINVAL || ret == -EOPNOTSUPP) &&
	    (c->base.config.flags & VBTS_KVM_X86_BTS_CFG_THREADS)) {
		/*
		 * A kernel without the returns mode (or VMX): its way back is stepped, and so
		 * is its boot until the first process, unless branches wait for it.
		 */
		c->base.config.flags &= ~(uint64_t)VBTS_KVM_X86_BTS_CFG_THREADS;
		c->base.config.thread_current = 0;
		c->base.config.thread_pid = 0;
		c->base.config.thread_tgid = 0;
		c->deferred = cfg->cpl == VBTS_CPL_USER || cfg->nr_start_at;
		tc = tracer_config(c, i);
		ret = ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_CONFIGURE, &tc) < 0 ? -errno : 0;
	}
	if (ret < 0) {
		errmsg__set(err, errlen, "vCPU %u: KVM_X86_BTS_TRACER_CONFIGURE: %s", i,
			strerror(-ret));
		return ret;
	}
	ret = kvm_ring__map_pending(&v->ring, c->tfd, (off_t)(i * stride), nr, why,
				    sizeof(why));
	if (ret < 0) {
		errmsg__set(err, errlen, "vCPU %u: %s", i, why);
		return ret;
	}
	v->mapped = true;
	v->ring.follow = true;
	v->ring.clock = &c->clock;
	/* What a previous tracer left is not this trace's: start at the head. */
	v->ring.next = __atomic_load_n(&v->ring.hdr->head, __ATOMIC_ACQUIRE);
	v->ring.lost = __atomic_load_n(&v->ring.hdr->lost, __ATOMIC_RELAXED);
	__atomic_store_n(&v->ring.hdr->tail, v->ring.next, __ATOMIC_RELEASE);
	v->ring.ns0 = v->ring.last_ns = tracer_vcpu__now_ns(&v->tv);
	if (ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_ENABLE, (unsigned long)i) < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "vCPU %u: KVM_X86_BTS_TRACER_ENABLE: %s", i, strerror(errno));
		return ret;
	}
	return 0;
}

static void release(struct collector *c)
{
	if (c->ksym_started) {
		__atomic_store_n(&c->ksym_stop, true, __ATOMIC_RELEASE);
		pthread_join(c->ksym_thread, NULL);
	}
	for (unsigned int i = 0; c->v && i < c->nr; i++)
		if (c->v[i].mapped)
			kvm_ring__unmap(&c->v[i].ring);
	guest_tasks__destroy(c->tasks);
	tracer_mem__close(c->mem);
	free(c->gone);
	free(c->kallsyms);
	free(c->dir);
	free(c->v);
	if (c->tfd >= 0)
		close(c->tfd);
	free(c);
}

/*
 * Name a Linux guest's processes: its kernel's BTF and symbols from the image, its memory
 * through the tracer fd. Anything missing leaves them unnamed, said in one line; the trace is
 * the same otherwise.
 */
static void tasks_init(struct collector *c, const struct collector_config *cfg)
{
	struct guest_tasks_config gc = { .kernel = cfg->image, .nr_vcpus = c->nr,
					 .system_map = cfg->system_map,
					 .select = cfg->start_at, .nr_select = cfg->nr_start_at,
					 .phys = tracer_mem__ptr, .read = tracer_mem__read };
	char err[320];
	int ret;

	if (!cfg->image) {
		pr_info("the guest's kernel image is not known (no -kernel, no --kernel): its "
			"processes are not named");
		goto no_tasks;
	}
	c->mem = tracer_mem__open(c->tfd);
	c->gone = calloc(c->nr, sizeof(*c->gone));
	if (!c->mem || !c->gone) {
		pr_warn("out of memory: the guest's processes are not named");
		goto no_tasks;
	}
	ret = tracer_mem__probe(c->mem);
	if (ret == -ENOTTY || ret == -EINVAL) {
		pr_warn("this host's KVM cannot read a traced guest's memory (no "
			"KVM_X86_BTS_TRACER_READ_GPA, kvm-patches/ patch 21): the guest's processes "
			"are not named");
		goto no_tasks;
	}
	if (ret < 0) {
		pr_warn("reading guest memory through the tracer: %s: the guest's processes are "
			"not named", strerror(-ret));
		goto no_tasks;
	}
	gc.phys_ctx = c->mem;
	c->tasks = guest_tasks__create(&gc, err, sizeof(err));
	if (!c->tasks) {
		pr_warn("%s is not a Linux kernel vbts can introspect (%s): the guest's processes "
			"are not named", cfg->image, err);
		goto no_tasks;
	}
	if (cfg->cpl != VBTS_CPL_USER &&
	    asprintf(&c->kallsyms, "%s/kallsyms.map", cfg->trace_dir) < 0)
		c->kallsyms = NULL;
	/* One id per process, whichever half of a KPTI pair is loaded (guest-tasks.h). */
	c->base.cr3_flags |= VBTS_KVM_X86_CR3_TRACE_KPTI;
	c->deferred = cfg->cpl == VBTS_CPL_USER || cfg->nr_start_at;
	return;

no_tasks:
	if (cfg->nr_start_at)
		pr_warn("--start-at needs the processes of a Linux guest: recording from the start");
}

struct collector *collector__attach(int kvm_fd, int pidfd, const struct vmm_fds *fds,
				    const struct collector_config *cfg, char *err, size_t errlen)
{
	struct vbts_kvm_x86_bts_tracer_info info = { 0 };
	struct trace_config tc = {
		.dir = cfg->trace_dir,
		.image = cfg->image,
		.build_id = NULL,
		.backend = "kvm",
		.cpl = cfg->cpl,
		.collector = cfg->collector,
		.stop = cfg->stop,
		.stop_ctx = cfg->stop_ctx,
		.attach_pid = fds->pid,
		.attach_via = cfg->via,
		.attach_domain = cfg->domain,
	};
	uint64_t nr, start_ns;
	struct collector *c;
	int ret;

	tc.collector.ring_records = cfg->ring_records;
	if (!collector__supported(kvm_fd)) {
		errmsg__set(err, errlen, "this host's KVM has no attach support");
		errno = ENOTSUP;
		return NULL;
	}
	if (cfg->nr_cr3 > VBTS_KVM_X86_CR3_TRACE_MAX) {
		errmsg__set(err, errlen, "at most %d --task", VBTS_KVM_X86_CR3_TRACE_MAX);
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->dir = strdup(cfg->trace_dir);
	if (!c->dir) {
		ret = -ENOMEM;
		c->tfd = -1;
		errmsg__set(err, errlen, "out of memory");
		goto err_release;
	}
	c->tfd = open_tracer(kvm_fd, pidfd, fds, err, errlen);
	if (c->tfd < 0) {
		ret = c->tfd;
		c->tfd = -1;
		goto err_release;
	}
	if (ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_INFO, &info) < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "KVM_X86_BTS_TRACER_INFO: %s", strerror(errno));
		goto err_release;
	}
	nr = cfg->ring_records;
	if (nr > KERNEL_RING_MAX)
		nr = KERNEL_RING_MAX;
	if (nr < KERNEL_RING_MIN)
		nr = KERNEL_RING_MIN;
	if (!info.nr_vcpus || info.nr_vcpus > VMM_FDS_MAX_VCPUS ||
	    info.mmap_stride < kvm_ring__map_len(nr) ||
	    info.mmap_stride % (uint64_t)sysconf(_SC_PAGESIZE)) {
		errmsg__set(err, errlen, "the tracer reports %u vCPUs, rings %" PRIu64 " bytes apart",
			info.nr_vcpus, (uint64_t)info.mmap_stride);
		ret = -EPROTO;
		goto err_release;
	}
	if (info.nr_vcpus != fds->nr_vcpus)
		pr_warn("process %d has %u vCPU fds, its VM %u vCPUs: tracing the VM's", fds->pid,
			fds->nr_vcpus, info.nr_vcpus);
	c->nr = info.nr_vcpus;
	c->v = calloc(c->nr, sizeof(*c->v));
	if (!c->v) {
		ret = -ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto err_release;
	}
	c->base = (struct vbts_kvm_x86_bts_tracer_config){
		.cr3_flags = VBTS_KVM_X86_CR3_TRACE_ENABLE,
		.config = {
			.mode = VBTS_KVM_X86_BTS_RING_WRAP,
			.cpl = kvm_ring__cpl(cfg->cpl),
			.nr_records = nr,
			.watermark = nr / 2,
			.flags = VBTS_KVM_X86_BTS_CFG_BRANCHES,
		},
		.nr_cr3 = cfg->nr_cr3,
	};
	for (unsigned int k = 0; k < cfg->nr_cr3; k++)
		c->base.cr3[k] = cfg->cr3[k];
	tasks_init(c, cfg);
	name_threads(c, cfg);
	c->clock.khz = host_tsc_khz();
	/* vm.json names a Linux guest's kernel "kernel": vbts decode reads its tasks' maps then. */
	tc.linux_kernel = c->tasks != NULL;
	tc.vcpus = c->nr;
	start_ns = monotonic_ns();
	c->start_ns = start_ns;
	c->trace = trace__create(&tc, err, errlen);
	if (!c->trace) {
		ret = -errno;
		goto err_release;
	}
	if (c->tasks)
		guest_tasks__set_events(c->tasks, trace__events(c->trace));
	for (unsigned int i = 0; i < c->nr; i++) {
		ret = configure_vcpu(c, i, cfg, nr, info.mmap_stride, start_ns, err, errlen);
		if (ret < 0)
			goto err_disable;
	}
	return c;

err_disable:
	for (unsigned int i = 0; i < c->nr; i++)
		ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_DISABLE, (unsigned long)i);
	trace__abort(c->trace);
err_release:
	release(c);
	errno = -ret;
	return NULL;
}

int collector__fd(const struct collector *c)
{
	return c->tfd;
}

FILE *collector__events(struct collector *c, uint64_t *start_ns)
{
	*start_ns = c->start_ns;
	return trace__events(c->trace);
}

/* Sleeps @s seconds, or less when the collector ends; false then. */
static bool ksym_sleep(struct collector *c, unsigned int s)
{
	struct timespec slice = { 0, 100 * 1000000 };

	for (unsigned int i = 0; i < s * 10; i++) {
		if (__atomic_load_n(&c->ksym_stop, __ATOMIC_ACQUIRE))
			return false;
		nanosleep(&slice, NULL);
	}
	return !__atomic_load_n(&c->ksym_stop, __ATOMIC_ACQUIRE);
}

/*
 * The running kernel's symbols into the trace directory, on a thread of its own: the search
 * of guest RAM for the vmcoreinfo page reads all of it through the tracer fd, which takes
 * seconds on a large or nested guest, while the collector must go on copying (the processes
 * of the loads it copies are resolved as it copies them). It uses only guest-tasks' kernel
 * and slide and tracer_mem__read(), which are safe beside the collector's thread. A failure
 * is tried again after 2, 4, ... 32 s, and told only after the last try.
 */
static void *kallsyms_worker(void *arg)
{
	struct collector *c = arg;
	char err[256];
	size_t nr;
	int ret = -ENOENT;

	for (unsigned int t = 1; t <= KALLSYMS_TRIES; t++) {
		err[0] = '\0';
		nr = 0;
		ret = guest_tasks__write_kallsyms(c->tasks, c->kallsyms, &nr, err, sizeof(err));
		if (!ret) {
			pr_info("the guest kernel's symbols (%zu, from its kallsyms tables) in %s",
				nr, c->kallsyms);
			__atomic_store_n(&c->ksym_done, true, __ATOMIC_RELEASE);
			return NULL;
		}
		if (t == KALLSYMS_TRIES || !ksym_sleep(c, 1U << t))
			break;
	}
	if (!__atomic_load_n(&c->ksym_stop, __ATOMIC_ACQUIRE))
		pr_warn("the guest kernel's symbols: %s: its addresses are not named",
			err[0] ? err : strerror(-ret));
	return NULL;
}

/* Whether a vCPU has a process with a pid loaded: the kernel's initcalls are done. */
static bool process_seen(struct collector *c)
{
	int32_t pid, tgid;

	for (unsigned int i = 0; i < c->nr; i++)
		if (guest_tasks__current_pid(c->tasks, i, &pid, &tgid) && pid > 0)
			return true;
	return false;
}

/*
 * kallsyms.map, when kernel code is recorded: started once a process has run, while guest
 * memory can still be read (the VM may be gone at the end). The kernel itself may be found
 * earlier (any address-space load, a temporary one of its boot too), before the initcall that
 * writes its vmcoreinfo.
 */
static void write_kallsyms(struct collector *c)
{
	int ret;

	if (!c->kallsyms || c->ksym_started || c->frozen || !guest_tasks__attached(c->tasks) ||
	    !process_seen(c))
		return;
	ret = pthread_create(&c->ksym_thread, NULL, kallsyms_worker, c);
	if (ret) {
		pr_warn("the guest kernel's symbols: %s: its addresses are not named",
			strerror(ret));
		free(c->kallsyms);
		c->kallsyms = NULL;
		return;
	}
	c->ksym_started = true;
}

/* Look for the guest kernel in guest memory, from the address space a vCPU loaded last. */
static void find_kernel(struct collector *c, uint64_t now)
{
	uint64_t arrivals = 0, cr3 = ~0ULL, slide;

	if (guest_tasks__attached(c->tasks) || now - c->found_ns < FIND_KERNEL_INTERVAL_NS)
		return;
	for (unsigned int i = 0; i < c->nr; i++) {
		arrivals += c->v[i].ring.arrivals;
		if (c->v[i].ring.cr3 != ~0ULL)
			cr3 = c->v[i].ring.cr3;
	}
	if (cr3 == ~0ULL || arrivals == c->found_arrivals)
		return;
	c->found_ns = now;
	c->found_arrivals = arrivals;
	if (guest_tasks__attach(c->tasks, cr3, 0, 0) || !guest_tasks__kaslr_slide(c->tasks, &slide))
		return;
	pr_info("the guest's Linux kernel found in its memory (KASLR slide %#" PRIx64 "): its "
		"processes are named in events.jsonl", slide);
}

/*
 * The first process ran: record branches from here on. A ring is configured only while
 * disabled, so each vCPU is told to disable, take the configuration and enable again, which
 * it does at once before its next entry (a STOP and a START in its ring).
 */
static void branches_on(struct collector *c)
{
	struct vbts_kvm_x86_bts_tracer_config tc;

	c->deferred = false;
	for (unsigned int i = 0; i < c->nr; i++) {
		tc = tracer_config(c, i);
		if (ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_DISABLE, (unsigned long)i) < 0 ||
		    ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_CONFIGURE, &tc) < 0 ||
		    ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_ENABLE, (unsigned long)i) < 0)
			pr_warn("vCPU %u: recording its branches: %s", i, strerror(errno));
	}
	pr_info("a guest process to record runs: recording branches from here on");
}

struct trace *collector__trace(struct collector *c)
{
	return c->trace;
}

/*
 * One vCPU's copy at @now, noting when it last brought records (attach_crash__pick_vcpu()):
 * every vCPU of one copy gets the same time, so that the order they are copied in counts not.
 */
static uint64_t drain_vcpu(struct collector *c, struct collector_vcpu *v, uint64_t now)
{
	uint64_t n = kvm_ring__drain(&v->ring, &v->tv);

	if (n)
		v->last_copy_ns = now - c->start_ns;
	return n;
}

uint64_t collector__drain(struct collector *c)
{
	uint64_t n = 0, now = monotonic_ns();
	bool user = false;

	if (c->tasks) {
		tracer_mem__invalidate(c->mem);
		find_kernel(c, now);
		write_kallsyms(c);
	}
	for (unsigned int i = 0; i < c->nr; i++) {
		c->v[i].ring.copy_ns = now - c->start_ns;
		n += drain_vcpu(c, &c->v[i], now);
		user |= c->v[i].ring.user_seen;
	}
	if (!c->tasks)
		return n;
	/* A process whose final comm is a --start-at name is one to record, too. */
	for (unsigned int i = 0; i < c->nr; i++)
		user |= guest_tasks__settle(c->tasks, i, false);
	if (now - c->reap_ns >= REAP_INTERVAL_NS) {
		c->reap_ns = now;
		guest_tasks__reap(c->tasks, now - c->start_ns, c->gone);
	}
	if (c->deferred && user && !c->frozen)
		branches_on(c);
	return n;
}

void collector__freeze(struct collector *c, unsigned int reason)
{
	uint64_t now = monotonic_ns();

	if (c->frozen)
		return;
	for (unsigned int i = 0; i < c->nr; i++) {
		struct collector_vcpu *v = &c->v[i];

		ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_DISABLE, (unsigned long)i);
		drain_vcpu(c, v, now);
		ring_writer__escape(v->tv.ring, VBTS_ESC_FREEZE, tracer_vcpu__now_ns(&v->tv),
				    reason);
		ring_writer__freeze(v->tv.ring);
	}
	c->frozen = true;
}

/*
 * Before a crash's report: the KASLR slide into vm.json and the kernel's symbols into
 * kallsyms.map, which the report's symbols are read from. The worker that writes them is
 * waited for (its retries cut short); when it has not written them, one more try here, while
 * the crashed guest's memory is still there.
 */
static void crash_kernel_symbols(struct collector *c)
{
	char err[256] = "";
	uint64_t slide;
	int ret;

	if (!c->tasks || !guest_tasks__kaslr_slide(c->tasks, &slide))
		return;
	trace__set_kaslr_slide(c->trace, slide);
	if (!c->kallsyms)
		return;
	if (c->ksym_started) {
		__atomic_store_n(&c->ksym_stop, true, __ATOMIC_RELEASE);
		pthread_join(c->ksym_thread, NULL);
		c->ksym_started = false;
	}
	if (__atomic_load_n(&c->ksym_done, __ATOMIC_ACQUIRE))
		return;
	tracer_mem__invalidate(c->mem);
	ret = guest_tasks__write_kallsyms(c->tasks, c->kallsyms, NULL, err, sizeof(err));
	if (ret < 0)
		pr_warn("the guest kernel's symbols: %s: the crash report's kernel addresses are not "
			"named", err[0] ? err : strerror(-ret));
	else
		c->ksym_done = true;
}

int collector__crash_report(struct collector *c, unsigned int index, unsigned int *vcpu)
{
	struct attach_crash_vcpu *v;
	int ret;

	if (!c->frozen)
		return -EINVAL;
	v = calloc(c->nr, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned int i = 0; i < c->nr; i++)
		v[i] = (struct attach_crash_vcpu){ .ring = c->v[i].tv.ring,
						   .last_copy_ns = c->v[i].last_copy_ns,
						   .last_escape_ns = c->v[i].ring.last_ns,
						   .cr3 = c->v[i].ring.cr3 };
	crash_kernel_symbols(c);
	ret = attach_crash__write(c->dir, index, v, c->nr, c->tasks,
				  monotonic_ns() - c->start_ns, CRASH_REPORT_BRANCHES_DEFAULT,
				  vcpu);
	free(v);
	return ret;
}

/* Whether vCPU @i still has a change to apply (DISABLE) and its VM is there. */
static bool pending(const struct collector *c, unsigned int i)
{
	struct vbts_kvm_x86_bts_tracer_status st = { .vcpu = i };

	if (ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_STATUS, &st) < 0)
		return false;
	return (st.flags & VBTS_KVM_X86_BTS_TRACER_F_PENDING) &&
	       !(st.flags & VBTS_KVM_X86_BTS_TRACER_F_VM_GONE);
}

/* Whether the last record of @w is a STOP. */
static bool ends_with_stop(const struct ring_writer *w)
{
	uint64_t n = ring_writer__committed(w);
	struct vbts_record r;

	return n && !ring_writer__read(w, n - 1, &r) && vbts_record__is_escape(&r) &&
	       vbts_record__escape_kind(&r) == VBTS_ESC_STOP;
}

int collector__close(struct collector *c)
{
	struct timespec slice = { 0, 10 * 1000000 };
	unsigned int waited = 0;
	bool wait;
	int ret;

	if (!c)
		return 0;
	if (!c->frozen) {
		for (unsigned int i = 0; i < c->nr; i++)
			ioctl(c->tfd, VBTS_KVM_X86_BTS_TRACER_DISABLE, (unsigned long)i);
		/* Each running vCPU writes its STOP when it applies DISABLE. */
		do {
			wait = false;
			for (unsigned int i = 0; i < c->nr && !wait; i++)
				wait = pending(c, i);
			if (wait) {
				nanosleep(&slice, NULL);
				waited += 10;
			}
		} while (wait && waited < DISABLE_WAIT_MS);
		for (unsigned int i = 0; i < c->nr; i++) {
			struct collector_vcpu *v = &c->v[i];

			kvm_ring__drain(&v->ring, &v->tv);
			/* A vCPU that did not stop (paused, or the VM is gone): its STOP is ours. */
			if (!ends_with_stop(v->tv.ring))
				kvm_ring__put_escape(&v->tv, VBTS_ESC_STOP,
						     tracer_vcpu__now_ns(&v->tv), 0);
		}
	}
	if (c->tasks) {
		uint64_t slide;

		for (unsigned int i = 0; i < c->nr; i++)
			guest_tasks__settle(c->tasks, i, true);
		guest_tasks__set_events(c->tasks, NULL);
		if (guest_tasks__kaslr_slide(c->tasks, &slide))
			trace__set_kaslr_slide(c->trace, slide);
	}
	ret = trace__close(c->trace);
	release(c);
	return ret;
}
