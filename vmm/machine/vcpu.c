// SPDX-License-Identifier: GPL-2.0
/*
 * vcpu.c - vCPU threads: the state machine, kicks, the dispatch-only exit loop and its
 * handlers, and the tracer hooks of tracer.h.
 *
 * Locking: v->lock protects v->state, v->request and setting run->immediate_exit when kicking.
 * The vCPU thread alone touches its kvm_run otherwise, and its exit counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpuid.h"
#include "crash-report.h"
#include "guest-tasks.h"
#include "iobus.h"
#include "kvm.h"
#include "log.h"
#include "ring-writer.h"
#include "vcpu-int.h"
#include "vm.h"
#include "x86.h"

#define KICK_SIGNAL SIGUSR1

static const char *const exit_names[] = {
	[KVM_EXIT_UNKNOWN] = "UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "EXCEPTION",
	[KVM_EXIT_IO] = "IO",
	[KVM_EXIT_HYPERCALL] = "HYPERCALL",
	[KVM_EXIT_DEBUG] = "DEBUG",
	[KVM_EXIT_HLT] = "HLT",
	[KVM_EXIT_MMIO] = "MMIO",
	[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
	[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
	[KVM_EXIT_INTR] = "INTR",
	[KVM_EXIT_SET_TPR] = "SET_TPR",
	[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
	[KVM_EXIT_NMI] = "NMI",
	[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
	[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	[KVM_EXIT_X86_RDMSR] = "X86_RDMSR",
	[KVM_EXIT_X86_WRMSR] = "X86_WRMSR",
};

const char *vcpu__exit_name(unsigned int reason)
{
	if (reason < sizeof(exit_names) / sizeof(exit_names[0]))
		return exit_names[reason];
	return NULL;
}

static void kick_handler(int sig)
{
	/* Only interrupts KVM_RUN (-EINTR); the request is read by the vCPU thread. */
}

int vcpu__install_kick_signal(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigemptyset(&sa.sa_mask);
	if (sigaction(KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	return 0;
}

static void vm_stop(struct vcpu *v)
{
	vcpu__request(v, VCPU_STOPPED);
}

/* What vm.c asks of the vCPUs (vm.h). */
static const struct vm_vcpu_ops vm_vcpu_ops = {
	.stop = vm_stop,
	.post_panic = vcpu__post_panic,
};

void vcpu__init_detached(struct vcpu *v, struct vm *vm, unsigned int index, struct kvm_run *run,
			 size_t run_bytes)
{
	memset(v, 0, sizeof(*v));
	vm->vcpu_ops = &vm_vcpu_ops;
	v->vm = vm;
	v->index = index;
	v->fd = -1;
	v->run = run;
	v->run_bytes = run_bytes;
	v->state = VCPU_PAUSED;
	v->request = VCPU_RUNNING;
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->cond, NULL);
	v->tv.index = index;
	v->tv.fd = -1;
	v->tv.run = run;
	v->tv.mem = vm->mem;
	v->tv.cpl = vm->cpl;
	v->tv.caps = vm->caps;
	v->tv.start_ns = vm->start_ns;
	v->tv.ring_records = vm->ring_records;
	v->tv.tasks = vm->tasks;
	v->tv.gbts = vm->guest_bts ? &v->gbts : NULL;
	v->ctl_cpl = vm->cpl;
	v->gbts_kvm_dropped.fd = -1;
}

/*
 * Some KVMs give the guest a CPUID of their own, whatever the VMM sets: then the guest sees no
 * DS bit and will not use BTS. Said once, on vCPU 0.
 */
static void check_guest_bts_cpuid(int fd, unsigned int nent)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));

	if (!c)
		return;
	c->nent = nent;
	if (kvm__ioctl_quiet(fd, KVM_GET_CPUID2, c) >= 0) {
		for (unsigned int i = 0; i < c->nent; i++) {
			if (c->entries[i].function == 1 &&
			    !(c->entries[i].edx & X86_CPUID_1_EDX_DS))
				pr_warn("--guest-bts: this KVM does not give the guest the VMM's "
					"CPUID (leaf 1 reads back without DS)");
		}
	}
	free(c);
}

/* Give each vCPU the host's CPUID with its own APIC id and the VM's topology. */
static int set_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *cpuid;
	unsigned int flags = 0;
	int ret;

	if (v->vm->pc && kvm__check_extension(&v->vm->kvm, KVM_CAP_TSC_DEADLINE_TIMER))
		flags |= CPUID_TSC_DEADLINE;
	if (v->vm->guest_bts || v->vm->guest_bts_kvm)
		flags |= CPUID_GUEST_BTS;
	cpuid = cpuid__for_vcpu(v->vm->kvm.cpuid, v->index, v->vm->nr_vcpus, flags);
	if (!cpuid)
		return -ENOMEM;
	ret = kvm__ioctl(v->fd, KVM_SET_CPUID2, cpuid);
	v->gbts.mask_lvtpc = cpuid__intel_compatible(cpuid);
	if (ret >= 0 && (v->vm->guest_bts || v->vm->guest_bts_kvm) && v->index == 0)
		check_guest_bts_cpuid(v->fd, cpuid->nent);
	free(cpuid);
	return ret < 0 ? ret : 0;
}

struct vcpu *vcpu__create(struct vm *vm, unsigned int index)
{
	struct vcpu *v;
	void *run;
	int fd, ret;

	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	fd = kvm__ioctl(vm->kvm.vm_fd, KVM_CREATE_VCPU, index);
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	run = mmap(NULL, vm->kvm.run_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (run == MAP_FAILED) {
		ret = -errno;
		pr_err("mmap of vCPU %u's kvm_run: %s", index, strerror(errno));
		goto err_close;
	}
	vcpu__init_detached(v, vm, index, run, vm->kvm.run_size);
	v->fd = fd;
	v->tv.fd = fd;
	v->run_size = vm->kvm.run_size;
	ret = set_cpuid(v);
	if (ret < 0)
		goto err_unmap;
	if (vm->platform_init_vcpu) {
		ret = vm->platform_init_vcpu(fd);
		if (ret < 0)
			goto err_unmap;
	}
	if (vm->guest_bts) {
		ret = guest_bts__setup_vcpu(fd);
		if (ret < 0)
			goto err_unmap;
		/* Without the mark a guest's INIT leaves its DEBUGCTL as it was (said once). */
		v->gbts.reset_mark = guest_bts__mark(fd) == 0;
		if (!v->gbts.reset_mark && index == 0)
			pr_debug("--guest-bts: this KVM does not keep MSR_SMI_COUNT: an INIT of a "
				 "vCPU does not clear its DEBUGCTL");
	}
	if (vm->guest_bts_kvm) {
		/* The kernel counts the guest's records it drops; without it they go untold. */
		ret = kvm_stat__open(fd, "guest_bts_dropped", &v->gbts_kvm_dropped);
		if (ret < 0 && index == 0)
			pr_warn("--guest-bts --backend kvm: no vCPU stat guest_bts_dropped (%s): "
				"records the kernel drops are not counted", strerror(-ret));
	}
	return v;

err_unmap:
	munmap(run, vm->kvm.run_size);
	pthread_cond_destroy(&v->cond);
	pthread_mutex_destroy(&v->lock);
err_close:
	close(fd);
err_free:
	free(v);
	errno = -ret;
	return NULL;
}

void vcpu__destroy(struct vcpu *v)
{
	if (!v)
		return;
	if (v->run_size)
		munmap(v->run, v->run_size);
	kvm_stat__close(&v->gbts_kvm_dropped);
	if (v->fd >= 0)
		close(v->fd);
	pthread_cond_destroy(&v->cond);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

/* A flat 4 GiB ring-0 segment, 32-bit, as the boot GDT describes it. */
static void set_segment(struct kvm_segment *s, uint16_t sel, uint8_t type)
{
	memset(s, 0, sizeof(*s));
	s->base = 0;
	s->limit = 0xffffffff;
	s->selector = sel;
	s->type = type;
	s->present = 1;
	s->dpl = 0;
	s->db = 1;
	s->s = 1;
	s->l = 0;
	s->g = 1;
}

int vcpu__set_boot(struct vcpu *v, const struct vcpu_boot *b)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int ret;

	ret = kvm__ioctl(v->fd, KVM_GET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	set_segment(&sregs.cs, b->cs, 0xb); /* execute/read, accessed */
	set_segment(&sregs.ds, b->ds, 0x3); /* read/write, accessed */
	sregs.es = sregs.ds;
	sregs.ss = sregs.ds;
	sregs.fs = sregs.ds;
	sregs.gs = sregs.ds;
	/* TR and LDTR as after reset: usable, selector 0. */
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.type = 0xb; /* busy 32-bit TSS */
	sregs.tr.present = 1;
	sregs.tr.limit = 0xffff;
	memset(&sregs.ldt, 0, sizeof(sregs.ldt));
	sregs.ldt.type = 0x2;
	sregs.ldt.present = 1;
	sregs.ldt.limit = 0xffff;
	sregs.gdt.base = b->gdt_base;
	sregs.gdt.limit = b->gdt_limit;
	sregs.idt.base = 0; /* the real-mode IVT, as the BIOS leaves it */
	sregs.idt.limit = 0x3ff;
	sregs.cr0 = 0x11; /* PE | ET, paging off */
	sregs.cr3 = 0;
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (b->long_mode) {
		sregs.cs.l = 1;
		sregs.cs.db = 0;
		sregs.cr0 |= X86_CR0_PG;
		sregs.cr3 = b->cr3;
		sregs.cr4 = X86_CR4_PAE;
		sregs.efer = X86_EFER_LME | X86_EFER_LMA;
	}
	ret = kvm__ioctl(v->fd, KVM_SET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	memset(&regs, 0, sizeof(regs));
	regs.rip = b->rip;
	regs.rsp = b->rsp;
	regs.rax = b->eax;
	regs.rbx = b->ebx;
	regs.rsi = b->rsi;
	regs.rflags = 0x2;
	ret = kvm__ioctl(v->fd, KVM_SET_REGS, &regs);
	return ret < 0 ? ret : 0;
}

void vcpu__set_ring(struct vcpu *v, struct ring_writer *ring)
{
	v->tv.ring = ring;
	v->ring = ring;
	v->ring_size = ring ? ring_writer__capacity(ring) : 0;
	v->rec = ring ? VCPU_REC_ON : VCPU_REC_NONE;
}

void vcpu__control(struct vcpu *v, unsigned int req, unsigned int cpl)
{
	unsigned int old, new;

	if (req & VCPU_CTL_CPL)
		__atomic_store_n(&v->ctl_cpl, cpl, __ATOMIC_RELAXED);
	old = __atomic_load_n(&v->ctl_req, __ATOMIC_RELAXED);
	do {
		new = old | req;
		/* The last of stop and start wins. */
		if (req & VCPU_CTL_STOP)
			new &= ~VCPU_CTL_START;
		if (req & VCPU_CTL_START)
			new &= ~VCPU_CTL_STOP;
	} while (!__atomic_compare_exchange_n(&v->ctl_req, &old, new, false, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	vcpu__kick(v);
}

void vcpu__resize(struct vcpu *v, uint64_t records)
{
	__atomic_store_n(&v->ctl_size, records, __ATOMIC_RELAXED);
	vcpu__control(v, VCPU_CTL_SIZE, 0);
}

uint64_t vcpu__ring_size(struct vcpu *v)
{
	return __atomic_load_n(&v->ring_size, __ATOMIC_RELAXED);
}

enum vcpu_recording vcpu__recording(struct vcpu *v, unsigned int *pending, unsigned int *cpl)
{
	if (pending)
		*pending = __atomic_load_n(&v->ctl_req, __ATOMIC_ACQUIRE);
	if (cpl)
		*cpl = __atomic_load_n(&v->ctl_cpl, __ATOMIC_RELAXED);
	return __atomic_load_n(&v->rec, __ATOMIC_ACQUIRE);
}

static void set_recording(struct vcpu *v, enum vcpu_recording rec)
{
	__atomic_store_n(&v->rec, rec, __ATOMIC_RELEASE);
}

/*
 * Before a stopped vCPU appends to its ring: said first, with a full fence, since a reader
 * trusts a stopped ring whole (vmm/control/control.c).
 */
static void before_append(struct vcpu *v)
{
	if (__atomic_load_n(&v->rec, __ATOMIC_RELAXED) != VCPU_REC_OFF)
		return;
	__atomic_store_n(&v->rec, VCPU_REC_ON, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The START record's aux for a CPL filter (as the step backend writes it). */
static uint64_t start_aux(unsigned int cpl)
{
	uint64_t aux = 0;

	if (cpl != VBTS_CPL_KERNEL)
		aux |= VBTS_START_CPL_USER;
	if (cpl != VBTS_CPL_USER)
		aux |= VBTS_START_CPL_KERNEL;
	return aux;
}

/*
 * A new ring size: the ring file is replaced by one of that size with the newest records
 * (ring_writer__resize()); when that fails the ring stays as it was, said once per request.
 */
static void apply_size(struct vcpu *v)
{
	uint64_t n = __atomic_load_n(&v->ctl_size, __ATOMIC_RELAXED);
	int ret = ring_writer__resize(v->ring, n);

	if (ret < 0)
		pr_warn("vcpu %u: ring size %" PRIu64 ": %s", v->index, n, strerror(-ret));
	else
		__atomic_store_n(&v->ring_size, n, __ATOMIC_RELAXED);
}

/* A backend's own control (the kvm backend's kernel ring); a failure ends the run. */
static void backend_control(struct vcpu *v, enum tracer_control what)
{
	int ret = v->vm->tracer->control(&v->tv, what);

	if (ret < 0) {
		pr_err("vcpu %u: %s: %s", v->index, what == TRACER_CTL_STOP ? "stop" :
		       what == TRACER_CTL_START ? "start" : "cpl", strerror(-ret));
		vm__request_stop(v->vm, 1);
	}
}

/*
 * Apply what the control socket asked for, in the vCPU's own thread (the ring's one writer)
 * and between two runs. The step backend has @tv.ring taken away while stopped (it then
 * leaves the guest unstepped) and the VMM writes its STOP and START records; a backend with
 * its own control (the kvm backend: its kernel ring writes them) is asked to do it. A frozen
 * ring refuses what it would still append.
 */
static void apply_control(struct vcpu *v)
{
	unsigned int req = __atomic_exchange_n(&v->ctl_req, 0, __ATOMIC_ACQUIRE);
	const struct tracer_ops *ops = v->vm->tracer;
	bool own = ops && ops->control, detach = ops && !strcmp(ops->name, "step");
	uint64_t now = clock__now_ns() - v->tv.start_ns;
	enum vcpu_recording rec = __atomic_load_n(&v->rec, __ATOMIC_RELAXED);

	if (!v->ring || rec == VCPU_REC_FROZEN)
		return;
	if (req & VCPU_CTL_SIZE)
		apply_size(v);
	if (req & VCPU_CTL_CPL) {
		v->tv.cpl = __atomic_load_n(&v->ctl_cpl, __ATOMIC_RELAXED);
		/* A new filter is told like the first one, unless a STOP follows at once. */
		if (own)
			backend_control(v, TRACER_CTL_CPL);
		else if (rec == VCPU_REC_ON && !(req & (VCPU_CTL_STOP | VCPU_CTL_FREEZE)))
			ring_writer__escape(v->ring, VBTS_ESC_START, now, start_aux(v->tv.cpl));
	}
	if (req & VCPU_CTL_FREEZE) {
		before_append(v);
		ring_writer__escape(v->ring, VBTS_ESC_FREEZE, now, VBTS_FREEZE_OPERATOR);
		ring_writer__freeze(v->ring);
		v->frozen = true;
		if (detach)
			v->tv.ring = NULL;
		/* After the header's flag: "frozen" in status means the ring is read whole. */
		set_recording(v, VCPU_REC_FROZEN);
		return;
	}
	if ((req & VCPU_CTL_STOP) && rec == VCPU_REC_ON && (detach || own)) {
		if (own) {
			backend_control(v, TRACER_CTL_STOP);
		} else {
			ring_writer__escape(v->ring, VBTS_ESC_STOP, now, 0);
			v->tv.ring = NULL;
		}
		set_recording(v, VCPU_REC_OFF);
	} else if ((req & VCPU_CTL_START) && rec == VCPU_REC_OFF) {
		before_append(v);
		if (own) {
			backend_control(v, TRACER_CTL_START);
		} else {
			v->tv.ring = v->ring;
			ring_writer__escape(v->ring, VBTS_ESC_START, now, start_aux(v->tv.cpl));
		}
		set_recording(v, VCPU_REC_ON);
	}
}

/* Best effort, for messages: the guest's RIP, or ~0 when it cannot be read (tests). */
static uint64_t guest_rip(struct vcpu *v)
{
	struct kvm_regs regs;

	if (v->fd < 0 || kvm__ioctl_quiet(v->fd, KVM_GET_REGS, &regs) < 0)
		return ~0ULL;
	return regs.rip;
}

uint64_t vcpu__address_space(struct vcpu *v)
{
	struct kvm_sregs sregs;

	if (v->fd < 0 || kvm__ioctl_quiet(v->fd, KVM_GET_SREGS, &sregs) < 0 ||
	    !(sregs.cr0 & X86_CR0_PG))
		return 0;
	return guest_tasks__id(sregs.cr3);
}

/* Report a fatal condition of this vCPU in one line and end the run with status 1. */
#define vcpu_fail(v, fmt, ...)                                                    \
	({                                                                        \
		pr_err("vcpu %u: " fmt, (v)->index, ##__VA_ARGS__);               \
		vm__request_stop((v)->vm, 1);                                     \
		VCPU_STOP;                                                        \
	})

int vcpu__exit_io(struct vcpu *v, struct kvm_run *run)
{
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	unsigned int size = run->io.size;
	struct io_access a = {
		.vcpu = v->index,
		.size = size,
		.write = run->io.direction == KVM_EXIT_IO_OUT,
	};

	if (size != 1 && size != 2 && size != 4)
		return vcpu_fail(v, "port I/O of %u bytes at port %#x", size, run->io.port);
	/* String I/O: @count accesses of @size bytes, back to back in the data page. */
	if ((uint64_t)run->io.data_offset + (uint64_t)run->io.count * size > v->run_bytes)
		return vcpu_fail(v, "port I/O data outside the kvm_run mapping");
	for (uint32_t i = 0; i < run->io.count; i++) {
		a.data = data + (size_t)i * size;
		io_bus__access(&v->vm->pio, run->io.port, &a);
	}
	return vm__stop_requested(v->vm) ? VCPU_STOP : VCPU_CONTINUE;
}

int vcpu__exit_mmio(struct vcpu *v, struct kvm_run *run)
{
	struct io_access a = {
		.vcpu = v->index,
		.data = run->mmio.data,
		.size = run->mmio.len,
		.write = run->mmio.is_write,
	};

	if (a.size == 0 || a.size > sizeof(run->mmio.data))
		return vcpu_fail(v, "MMIO access of %u bytes at %#llx", a.size,
				 (unsigned long long)run->mmio.phys_addr);
	io_bus__access(&v->vm->mmio, run->mmio.phys_addr, &a);
	return vm__stop_requested(v->vm) ? VCPU_STOP : VCPU_CONTINUE;
}

int vcpu__exit_hlt(struct vcpu *v, struct kvm_run *run)
{
	/* No interrupt controller: nothing can wake a halted vCPU. */
	pr_info("vcpu %u: guest halted at rip %#llx", v->index,
		(unsigned long long)guest_rip(v));
	return VCPU_HALT;
}

void vcpu__note_crash(struct vcpu *v, unsigned int reason)
{
	struct ring_writer *ring = v->ring ? v->ring : v->tv.ring;

	/* The ring's own pointer: a crash while the control socket stopped recording counts. */
	if (!ring || v->frozen)
		return;
	if (v->ring)
		before_append(v);
	ring_writer__escape(ring, VBTS_ESC_FREEZE, clock__now_ns() - v->tv.start_ns, reason);
	v->frozen = true;
	if (v->ring)
		set_recording(v, VCPU_REC_FROZEN);
}

/* The vCPU's registers now, into @g; false when KVM would not give them. */
static bool crash_regs(struct vcpu *v, struct crash_regs *g)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (v->fd < 0 || kvm__ioctl_quiet(v->fd, KVM_GET_REGS, &regs) < 0 ||
	    kvm__ioctl_quiet(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return false;
	*g = (struct crash_regs){
		.rax = regs.rax, .rbx = regs.rbx, .rcx = regs.rcx, .rdx = regs.rdx,
		.rsi = regs.rsi, .rdi = regs.rdi, .rbp = regs.rbp, .rsp = regs.rsp,
		.r8 = regs.r8, .r9 = regs.r9, .r10 = regs.r10, .r11 = regs.r11,
		.r12 = regs.r12, .r13 = regs.r13, .r14 = regs.r14, .r15 = regs.r15,
		.rip = regs.rip, .rflags = regs.rflags,
		.cr0 = sregs.cr0, .cr2 = sregs.cr2, .cr3 = sregs.cr3, .cr4 = sregs.cr4,
		.efer = sregs.efer, .cs = sregs.cs.selector, .ss = sregs.ss.selector,
	};
	return true;
}

static void write_crash_report(struct vcpu *v, enum crash_kind kind, const struct guest_crash *gc)
{
	struct crash_report r = { .kind = kind, .vcpu = v->index };
	struct guest_crash cur;
	struct vbts_record *br = NULL;
	unsigned int index;
	uint64_t id = ~0ULL;
	int ret;

	if (!v->vm->crash_dir)
		return;
	index = __atomic_fetch_add(&v->vm->nr_crashes, 1, __ATOMIC_RELAXED);
	if (index >= CRASH_REPORT_MAX) {
		if (index == CRASH_REPORT_MAX)
			pr_warn("more than %u crashes: later ones get no report", CRASH_REPORT_MAX);
		return;
	}
	r.time_ns = clock__now_ns() - v->tv.start_ns;
	r.requested = v->vm->crash_branches;
	if (kind == CRASH_PROCESS) {
		r.regs_note = "the process had exited when its exit was seen: the vCPU's registers "
			      "then are not those of the fault, none are given";
		r.signo = gc->signo;
		r.time_ns = gc->time_ns;
	} else {
		r.have_regs = crash_regs(v, &r.regs);
		if (!r.have_regs)
			r.regs_note = "KVM_GET_REGS or KVM_GET_SREGS failed";
		/* loads between processes not recorded may have stayed in the kernel */
		if (r.have_regs && v->tv.tasks)
			guest_tasks__resync(v->tv.tasks, v->index, r.regs.cr3);
		gc = v->tv.tasks && guest_tasks__current(v->tv.tasks, v->index, &cur) ? &cur :
									      NULL;
	}
	if (gc) {
		r.have_process = true;
		r.pid = gc->pid;
		r.tgid = gc->tgid;
		snprintf(r.comm, sizeof(r.comm), "%s", gc->comm);
		r.cr3 = gc->id;
		/* A process's own branches; a kernel's crash: whatever the vCPU ran last. */
		if (kind == CRASH_PROCESS)
			id = gc->id;
	}
	if (!r.cr3 && r.have_regs)
		r.cr3 = r.regs.cr3 & VBTS_CR3_MASK;
	if (v->tv.ring && r.requested) {
		br = calloc(r.requested, sizeof(*br));
		if (br)
			r.nr_branches = crash_report__collect(v->tv.ring, id, r.requested, br,
							      &r.ring_seq);
	}
	r.branches = br;
	if (kind != CRASH_PROCESS && v->vm->kernel_symbols)
		v->vm->kernel_symbols(v->vm);
	ret = crash_report__write(v->vm->crash_dir, index, &r);
	if (ret)
		pr_err("vcpu %u: cannot write the crash report: %s", v->index, strerror(-ret));
	free(br);
}

enum crash_action vcpu__crash(struct vcpu *v, enum crash_kind kind, const struct guest_crash *gc)
{
	enum crash_action act = v->vm->on_crash;
	unsigned int reason;

	if (act == CRASH_ACTION_DEFAULT)
		act = kind == CRASH_PROCESS ? CRASH_ACTION_CONTINUE : CRASH_ACTION_EXIT;
	switch (kind) {
	case CRASH_PROCESS:
		reason = VBTS_FREEZE_PROCESS_CRASH;
		break;
	case CRASH_PANIC:
		reason = VBTS_FREEZE_PANIC;
		break;
	default:
		reason = VBTS_FREEZE_TRIPLE_FAULT;
		break;
	}
	if (kind == CRASH_PROCESS && act == CRASH_ACTION_CONTINUE) {
		/* The ring goes on: the FREEZE record marks the crash, the report keeps it. */
		if (v->tv.ring && !v->frozen)
			ring_writer__escape(v->tv.ring, VBTS_ESC_FREEZE,
					    clock__now_ns() - v->tv.start_ns, reason);
	} else {
		vcpu__note_crash(v, reason);
	}
	write_crash_report(v, kind, gc);
	if (act == CRASH_ACTION_PAUSE) {
		pr_info("vcpu %u: the guest crashed (%s): vCPUs paused, waiting for SIGINT, SIGTERM "
			"or SIGHUP", v->index, crash_report__kind_name(kind));
		for (unsigned int i = 0; i < v->vm->nr_vcpus; i++)
			if (v->vm->vcpus[i] != v)
				vcpu__request(v->vm->vcpus[i], VCPU_PAUSED);
		pthread_mutex_lock(&v->lock);
		if (v->request == VCPU_RUNNING)
			v->request = VCPU_PAUSED;
		pthread_mutex_unlock(&v->lock);
	}
	return act;
}

/* Process crashes introspection saw on this vCPU: a report each, then --on-crash. */
static int process_crashes(struct vcpu *v)
{
	struct guest_crash gc;
	int ret = VCPU_CONTINUE;

	if (!v->tv.tasks)
		return VCPU_CONTINUE;
	while (guest_tasks__take_crash(v->tv.tasks, v->index, &gc)) {
		/* Said for the crashes that get a report: a guest cannot flood the log. */
		if (__atomic_load_n(&v->vm->nr_crashes, __ATOMIC_RELAXED) < CRASH_REPORT_MAX)
			pr_info("vcpu %u: process %d was killed by %s", v->index, (int)gc.pid,
				crash_report__signal_name(gc.signo));
		if (vcpu__crash(v, CRASH_PROCESS, &gc) == CRASH_ACTION_EXIT) {
			vm__request_stop(v->vm, 1);
			ret = VCPU_STOP;
		}
	}
	return ret;
}

void vcpu__post_panic(struct vcpu *v)
{
	__atomic_store_n(&v->panic_posted, true, __ATOMIC_RELEASE);
	vcpu__kick(v);
}

/* A panic posted by vcpu__post_panic(): its report, then --on-crash. */
static int posted_panic(struct vcpu *v)
{
	if (!__atomic_exchange_n(&v->panic_posted, false, __ATOMIC_ACQ_REL))
		return VCPU_CONTINUE;
	if (vcpu__crash(v, CRASH_PANIC, NULL) == CRASH_ACTION_EXIT) {
		vm__request_stop(v->vm, 1);
		return VCPU_STOP;
	}
	return VCPU_CONTINUE;
}

/* Whether the guest kernel panicked before this triple fault, claimed for its report. */
static bool panicked_before(struct vcpu *v, int32_t *cpu)
{
	return v->vm->tasks && guest_tasks__panicking(v->vm->tasks, cpu) &&
	       vm__claim_panic(v->vm);
}

int vcpu__exit_shutdown(struct vcpu *v, struct kvm_run *run)
{
	int32_t cpu;

	if (panicked_before(v, &cpu)) {
		pr_err("vcpu %u: the guest kernel panicked (its panic_cpu is %d), then reset the "
		       "machine (triple fault)", v->index, (int)cpu);
		if (vcpu__crash(v, CRASH_PANIC, NULL) == CRASH_ACTION_PAUSE)
			return VCPU_CONTINUE;
		vm__request_stop(v->vm, 1);
		return VCPU_STOP;
	}
	if (vcpu__crash(v, CRASH_TRIPLE_FAULT, NULL) == CRASH_ACTION_PAUSE)
		return VCPU_CONTINUE;
	/* An operating system's last way to reset the machine (Linux: reboot=t): not an error. */
	if (v->vm->pc) {
		pr_info("vcpu %u: the guest reset the machine (triple fault)", v->index);
		vm__request_stop(v->vm, 0);
		return VCPU_STOP;
	}
	return vcpu_fail(v, "triple fault: the guest shut down (rip %#llx)",
			 (unsigned long long)guest_rip(v));
}

static const char *internal_error_name(uint32_t suberror)
{
	switch (suberror) {
	case KVM_INTERNAL_ERROR_EMULATION:
		return "instruction emulation failed";
	case KVM_INTERNAL_ERROR_SIMUL_EX:
		return "exception while delivering an exception";
	case KVM_INTERNAL_ERROR_DELIVERY_EV:
		return "exit during event delivery";
	case KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON:
		return "unexpected exit reason";
	default:
		return "unknown";
	}
}

int vcpu__exit_internal_error(struct vcpu *v, struct kvm_run *run)
{
	uint32_t n = run->internal.ndata;

	vcpu__note_crash(v, VBTS_FREEZE_VMM_ERROR);
	return vcpu_fail(v, "KVM internal error, suberror %u (%s), rip %#llx, data[%u] %#llx %#llx",
			 run->internal.suberror, internal_error_name(run->internal.suberror),
			 (unsigned long long)guest_rip(v), n,
			 (unsigned long long)(n > 0 ? run->internal.data[0] : 0),
			 (unsigned long long)(n > 1 ? run->internal.data[1] : 0));
}

int vcpu__exit_fail_entry(struct vcpu *v, struct kvm_run *run)
{
	vcpu__note_crash(v, VBTS_FREEZE_VMM_ERROR);
	return vcpu_fail(v, "VM entry failed, hardware reason %#llx",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
}

int vcpu__exit_intr(struct vcpu *v, struct kvm_run *run)
{
	/* A kick: the loop reads the request next. */
	return VCPU_CONTINUE;
}

int vcpu__exit_debug(struct vcpu *v, struct kvm_run *run)
{
	/* A debug exit the tracer did not consume: nobody asked for it. */
	return vcpu_fail(v, "unexpected debug exit (exception %u at pc %#llx)",
			 run->debug.arch.exception, (unsigned long long)run->debug.arch.pc);
}

/* CR4.LA57 of the vCPU, for the canonical check of a DS_AREA write (false in tests). */
static bool vcpu_la57(struct vcpu *v)
{
	struct kvm_sregs sregs;

	if (v->fd < 0 || kvm__ioctl_quiet(v->fd, KVM_GET_SREGS, &sregs) < 0)
		return false;
	return sregs.cr4 & X86_CR4_LA57;
}

int vcpu__exit_msr(struct vcpu *v, struct kvm_run *run)
{
	uint64_t value = 0;
	int ret = -ENOENT;

	/* RESET and INIT clear DEBUGCTL: KVM did one since the last exit, or not. */
	if (v->vm->guest_bts && v->fd >= 0 && guest_bts__check_reset(&v->gbts, v->fd) < 0)
		return vcpu_fail(v, "cannot read MSR_SMI_COUNT");
	/* Only guest-visible BTS's two MSRs are filtered to userspace; refuse any other (#GP). */
	if (v->vm->guest_bts && run->exit_reason == KVM_EXIT_X86_RDMSR) {
		ret = guest_bts__rdmsr(&v->gbts, run->msr.index, &value);
		run->msr.data = value;
	} else if (v->vm->guest_bts)
		ret = guest_bts__wrmsr(&v->gbts, run->msr.index, run->msr.data,
				       run->msr.index == X86_MSR_IA32_DS_AREA && vcpu_la57(v));
	run->msr.error = ret < 0;
	return VCPU_CONTINUE;
}

int vcpu__exit_system_event(struct vcpu *v, struct kvm_run *run)
{
	switch (run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		return vcpu_fail(v, "the guest shut down (system event)");
	case KVM_SYSTEM_EVENT_RESET:
		return vcpu_fail(v, "the guest requested a reset (not supported)");
	case KVM_SYSTEM_EVENT_CRASH:
		return vcpu_fail(v, "the guest crashed (system event)");
	default:
		return vcpu_fail(v, "system event %u", run->system_event.type);
	}
}

int vcpu__exit_unknown(struct vcpu *v, struct kvm_run *run)
{
	const char *name = vcpu__exit_name(run->exit_reason);

	return vcpu_fail(v, "unhandled KVM exit reason %u (%s)", run->exit_reason,
			 name ? name : "unknown");
}

int vcpu__dispatch(struct vcpu *v, struct kvm_run *run)
{
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		return vcpu__exit_io(v, run);
	case KVM_EXIT_MMIO:
		return vcpu__exit_mmio(v, run);
	case KVM_EXIT_HLT:
		return vcpu__exit_hlt(v, run);
	case KVM_EXIT_SHUTDOWN:
		return vcpu__exit_shutdown(v, run);
	case KVM_EXIT_INTERNAL_ERROR:
		return vcpu__exit_internal_error(v, run);
	case KVM_EXIT_FAIL_ENTRY:
		return vcpu__exit_fail_entry(v, run);
	case KVM_EXIT_INTR:
		return vcpu__exit_intr(v, run);
	case KVM_EXIT_DEBUG:
		return vcpu__exit_debug(v, run);
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		return vcpu__exit_msr(v, run);
	case KVM_EXIT_SYSTEM_EVENT:
		return vcpu__exit_system_event(v, run);
	default:
		return vcpu__exit_unknown(v, run);
	}
}

/*
 * The one place @request changes (v->lock held): VCPU_STOPPED is final, so a stop request wins
 * over every later request or start, whichever thread comes last.
 */
static void set_request(struct vcpu *v, enum vcpu_state state)
{
	if (v->request != VCPU_STOPPED)
		v->request = state == VCPU_STEPPING ? VCPU_RUNNING : state;
}

void vcpu__request(struct vcpu *v, enum vcpu_state state)
{
	pthread_mutex_lock(&v->lock);
	set_request(v, state);
	pthread_cond_broadcast(&v->cond);
	if (v->request != VCPU_RUNNING && v->started &&
	    (v->state == VCPU_RUNNING || v->state == VCPU_STEPPING)) {
		v->run->immediate_exit = 1;
		pthread_kill(v->thread, KICK_SIGNAL);
	}
	pthread_mutex_unlock(&v->lock);
}

void vcpu__kick(struct vcpu *v)
{
	pthread_mutex_lock(&v->lock);
	if (v->started && (v->state == VCPU_RUNNING || v->state == VCPU_STEPPING)) {
		v->run->immediate_exit = 1;
		pthread_kill(v->thread, KICK_SIGNAL);
	}
	pthread_mutex_unlock(&v->lock);
}

enum vcpu_state vcpu__state(struct vcpu *v)
{
	enum vcpu_state s;

	pthread_mutex_lock(&v->lock);
	s = v->state;
	pthread_mutex_unlock(&v->lock);
	return s;
}

/* Park while paused; false when the vCPU must stop. */
static bool wait_runnable(struct vcpu *v)
{
	bool ok;

	pthread_mutex_lock(&v->lock);
	while (v->request == VCPU_PAUSED) {
		v->state = VCPU_PAUSED;
		pthread_cond_wait(&v->cond, &v->lock);
	}
	ok = v->request != VCPU_STOPPED;
	if (ok)
		v->state = v->tracing ? VCPU_STEPPING : VCPU_RUNNING;
	pthread_mutex_unlock(&v->lock);
	return ok;
}

static void count_exit(struct vcpu *v, uint32_t reason)
{
	v->exits[reason < VCPU_NR_EXIT_COUNTERS ? reason : VCPU_NR_EXIT_COUNTERS - 1]++;
}

/* The guest debug the debugger wants of a vCPU no tracer runs; 0 or -errno. */
static int debug_arm(struct vcpu *v)
{
	struct kvm_guest_debug dbg = { 0 };
	int ret;

	dbg.control = v->vm->debug->guest_debug(v->vm->debug_ctx, v->index);
	if (dbg.control == v->dbg_control)
		return 0;
	ret = kvm__ioctl(v->fd, KVM_SET_GUEST_DEBUG, &dbg);
	if (ret < 0)
		return ret;
	v->dbg_control = dbg.control;
	return 0;
}

/* One KVM_RUN with the tracer hooks around it: VCPU_CONTINUE, VCPU_HALT or VCPU_STOP. */
static int run_once(struct vcpu *v)
{
	const struct tracer_ops *ops = v->vm->tracer;
	struct kvm_run *run = v->run;
	int ret;

	if (__atomic_load_n(&v->ctl_req, __ATOMIC_RELAXED))
		apply_control(v);
	if (v->tracing) {
		ret = ops->before_run(&v->tv);
		if (ret < 0)
			return vcpu_fail(v, "tracer %s before KVM_RUN: %s", ops->name,
					 strerror(-ret));
	}
	if (v->vm->debug && !v->tracing) {
		ret = debug_arm(v);
		if (ret < 0)
			return vcpu_fail(v, "KVM_SET_GUEST_DEBUG: %s", strerror(-ret));
	}
	ret = kvm__ioctl_quiet(v->fd, KVM_RUN, 0);
	run->immediate_exit = 0;
	if (ret < 0) {
		if (ret != -EINTR && ret != -EAGAIN)
			return vcpu_fail(v, "KVM_RUN: %s", strerror(-ret));
		run->exit_reason = KVM_EXIT_INTR;
	}
	count_exit(v, run->exit_reason);
	if (v->tracing) {
		ret = ops->after_exit(&v->tv);
		if (ret < 0)
			return vcpu_fail(v, "tracer %s after exit %u: %s", ops->name,
					 run->exit_reason, strerror(-ret));
		if (process_crashes(v) == VCPU_STOP || posted_panic(v) == VCPU_STOP)
			return VCPU_STOP;
		if (ret == 1)
			return VCPU_CONTINUE;
	} else if (posted_panic(v) == VCPU_STOP) {
		return VCPU_STOP;
	}
	/* The debugger's own single-step, its exit consumed (it looks at it in vcpu_thread). */
	if (run->exit_reason == KVM_EXIT_DEBUG && v->dbg_control && !v->tracing)
		return VCPU_CONTINUE;
	return vcpu__dispatch(v, run);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	const struct tracer_ops *ops = v->vm->tracer;
	bool live = v->live;
	char name[16];
	int ret;

	snprintf(name, sizeof(name), "vcpu-%u", v->index);
	pthread_setname_np(pthread_self(), name);

	if (!wait_runnable(v))
		goto out;
	if (ops) {
		ret = ops->vcpu_init(&v->tv);
		if (ret < 0) {
			vcpu_fail(v, "tracer %s: %s", ops->name, strerror(-ret));
			goto out;
		}
		v->tracing = true;
	}
	while (wait_runnable(v)) {
		ret = run_once(v);
		if (ret == VCPU_CONTINUE) {
			if (v->vm->debug)
				v->vm->debug->exited(v->vm->debug_ctx, v->index, v->fd, v->run);
			continue;
		}
		if (ret == VCPU_HALT && live) {
			live = false;
			vm__vcpu_done(v->vm);
		}
		break;
	}
	/* A panic posted while the run ended (a reset after the panic) still gets its report. */
	posted_panic(v);
	if (v->tracing)
		ops->vcpu_fini(&v->tv);
	if (v->frozen)
		ring_writer__freeze(v->ring ? v->ring : v->tv.ring);
out:
	if (live)
		vm__vcpu_done(v->vm);
	pthread_mutex_lock(&v->lock);
	v->state = VCPU_STOPPED;
	pthread_mutex_unlock(&v->lock);
	return NULL;
}

static int start(struct vcpu *v, bool run, bool live)
{
	int ret;

	pthread_mutex_lock(&v->lock);
	/* A stop requested before the start (the guest already ended the run) is kept. */
	set_request(v, run && !v->vm->debug_hold ? VCPU_RUNNING : VCPU_PAUSED);
	v->live = live;
	v->tv.mem = v->vm->mem;
	v->tv.cpl = v->vm->cpl;
	v->ctl_cpl = v->vm->cpl;
	v->tv.caps = v->vm->caps;
	v->tv.start_ns = v->vm->start_ns;
	v->tv.ring_records = v->vm->ring_records;
	v->tv.tasks = v->vm->tasks;
	v->tv.gbts = v->vm->guest_bts ? &v->gbts : NULL;
	v->tv.gbts_kvm_dropped = v->gbts_kvm_dropped.fd >= 0 ? &v->gbts_kvm_dropped : NULL;
	ret = pthread_create(&v->thread, NULL, vcpu_thread, v);
	if (!ret)
		v->started = true;
	pthread_mutex_unlock(&v->lock);
	return -ret;
}

int vcpu__start(struct vcpu *v, bool live)
{
	return start(v, live, live);
}

int vcpu__start_ap(struct vcpu *v)
{
	return start(v, true, false);
}

void vcpu__join(struct vcpu *v)
{
	if (v->started)
		pthread_join(v->thread, NULL);
	v->started = false;
}

int vcpu__join_timed(struct vcpu *v, uint64_t timeout_ns)
{
	struct timespec ts;
	uint64_t end;
	int ret;

	if (!v->started)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	end = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec + timeout_ns;
	ts.tv_sec = end / 1000000000ULL;
	ts.tv_nsec = end % 1000000000ULL;
	ret = pthread_timedjoin_np(v->thread, NULL, &ts);
	if (ret == ETIMEDOUT)
		return -ETIMEDOUT;
	v->started = false;
	return 0;
}

void vcpu__stats(const struct vcpu *v, struct vcpu_stats *stats)
{
	memcpy(stats->exits, v->exits, sizeof(stats->exits));
	stats->steps = v->tv.stat_steps;
	stats->records = v->tv.stat_records;
	stats->gaps = v->tv.stat_gaps;
	stats->gbts = v->gbts.stats;
	if (v->gbts_kvm_dropped.fd >= 0 &&
	    kvm_stat__read(&v->gbts_kvm_dropped, &stats->gbts.dropped) < 0)
		stats->gbts.dropped = v->tv.gbts_kvm_told;
	stats->kvm = (struct kvm_counters){ 0 };
	if (v->vm->tracer == &kvm_tracer_ops) {
		kvm_counters__read(v->fd, &stats->kvm);
		stats->kvm.cr3_exits = v->tv.stat_cr3_exits;
	}
}
