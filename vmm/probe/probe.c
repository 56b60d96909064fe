// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - capability probes: each runs a probe guest (the .S files of vmm/probe, embedded)
 * in a fresh VM and watches what KVM reports. Every run has a budget of exits and of wall time (a
 * per-thread timer kicks KVM_RUN), so a KVM that misbehaves yields "no", never a hang.
 *
 * The ring-3 probes run ring 3 the way real guests do (long mode, paging). On a KVM that cannot
 * enter ring 3 by one method (IRETQ #GPs on some), they retry with the other (SYSRETQ); if
 * neither reaches ring 3, the ring-3 answers are no.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vbts/kvm-bts-uapi.h>

#include "clock.h"
#include "kvm.h"
#include "log.h"
#include "memory.h"
#include "probe.h"
#include "probe/ports.h"
#include "vcpu-int.h"
#include "vm.h"
#include "x86.h"

extern const uint8_t probe_blob_ring0[], probe_blob_ring0_end[];
extern const uint8_t probe_blob_user[], probe_blob_user_end[];
extern const uint8_t probe_blob_msr[], probe_blob_msr_end[];

#define PROBE_MEMORY (2ULL << 20)
#define PROBE_MAX_EXITS 100000
#define PROBE_TIMEOUT_NS (10ULL * 1000000000ULL) /* generous: nested KVM is slow */
#define PROBE_TICK_NS (100ULL * 1000000ULL)

static const char *const cap_names[PROBE_NR_CAPS] = {
	[PROBE_STEP_CPL0] = "cpl0 single-step",
	[PROBE_STEP_CPL3] = "cpl3 single-step",
	[PROBE_HWBP_CPL3] = "cpl3 hw breakpoint",
	[PROBE_USER_MSR] = "user msr exits",
	[PROBE_SYNC_REGS] = "sync regs",
	[PROBE_KVM_BTS] = "kvm bts backend",
};

static const char *const cap_keys[PROBE_NR_CAPS] = {
	[PROBE_STEP_CPL0] = "cpl0_single_step",
	[PROBE_STEP_CPL3] = "cpl3_single_step",
	[PROBE_HWBP_CPL3] = "cpl3_hw_breakpoint",
	[PROBE_USER_MSR] = "user_msr_exits",
	[PROBE_SYNC_REGS] = "sync_regs",
	[PROBE_KVM_BTS] = "kvm_bts_backend",
};

const char *probe__cap_name(enum probe_cap cap)
{
	return cap < PROBE_NR_CAPS ? cap_names[cap] : "?";
}

const char *probe__cap_key(enum probe_cap cap)
{
	return cap < PROBE_NR_CAPS ? cap_keys[cap] : "?";
}

bool probe__answer(const struct tracer_caps *caps, enum probe_cap cap)
{
	switch (cap) {
	case PROBE_STEP_CPL0:
		return caps->step_cpl0;
	case PROBE_STEP_CPL3:
		return caps->step_cpl3;
	case PROBE_HWBP_CPL3:
		return caps->hwbp_cpl3;
	case PROBE_USER_MSR:
		return caps->user_msr;
	case PROBE_SYNC_REGS:
		return caps->sync_regs;
	case PROBE_KVM_BTS:
		return caps->kvm_bts;
	default:
		return false;
	}
}

const char *probe__format_modes(unsigned int modes, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
		{ VBTS_KVM_X86_BTS_MODE_RING, "ring" },
		{ VBTS_KVM_X86_BTS_MODE_STEP, "step" },
		{ VBTS_KVM_X86_BTS_MODE_GUEST, "guest" },
		{ VBTS_KVM_X86_BTS_MODE_HW, "hw" },
	};
	size_t used = 0;
	int n;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(modes & names[i].bit))
			continue;
		modes &= ~names[i].bit;
		n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole words only */
			return buf;
		}
		used += (size_t)n;
	}
	if (modes)
		snprintf(buf + used, len - used, "%s0x%x", used ? " " : "", modes);
	else if (!used)
		snprintf(buf, len, "none");
	return buf;
}

static void say(struct probe_report *rep, enum probe_cap cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct probe_report *rep, enum probe_cap cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->why[cap], sizeof(rep->why[cap]), fmt, ap);
	va_end(ap);
}

/* One probe guest in its own VM, run from the calling thread. */
struct probe_vm {
	struct vm vm;
	struct vcpu *vcpu;
	timer_t timer;
	bool have_timer;
	uint64_t deadline_ns;
	unsigned int exits;
};

/* What one KVM_RUN of a probe ended with. */
enum probe_event {
	PROBE_EV_EXIT,    /* an exit to look at (run->exit_reason) */
	PROBE_EV_BUDGET,  /* out of time or exits */
	PROBE_EV_ERROR,   /* KVM_RUN or a set-up ioctl failed */
};

static void probe_vm_destroy(struct probe_vm *p)
{
	if (p->have_timer)
		timer_delete(p->timer);
	vcpu__destroy(p->vcpu);
	kvm__close(&p->vm.kvm);
	guest_memory__destroy(p->vm.mem);
	vm__fini(&p->vm);
}

/* Set @p up with @blob at PROBE_LOAD_GPA and EDI = @edi; @setup runs before the vCPU exists. */
static int probe_vm_create(struct probe_vm *p, const uint8_t *blob, const uint8_t *blob_end,
			   uint32_t edi, int (*setup)(struct probe_vm *p))
{
	struct vcpu_boot boot = {
		.rip = PROBE_LOAD_GPA,
		.rsp = 0x80000,
		.gdt_base = PROBE_LOAD_GPA + PROBE_GDT_OFFSET,
		.gdt_limit = 0x3f,
		.cs = 0x10,
		.ds = 0x18,
	};
	struct sigevent sev = { 0 };
	struct itimerspec its = { 0 };
	struct kvm_regs regs;
	size_t len = blob_end - blob;
	void *dst;
	int ret;

	memset(p, 0, sizeof(*p));
	vm__init(&p->vm);
	ret = kvm__open(&p->vm.kvm);
	if (ret < 0)
		goto err;
	p->vm.mem = guest_memory__create(PROBE_MEMORY);
	if (!p->vm.mem) {
		ret = -errno;
		goto err;
	}
	ret = guest_memory__register(p->vm.mem, p->vm.kvm.vm_fd);
	if (ret < 0)
		goto err;
	dst = guest_memory__ptr(p->vm.mem, PROBE_LOAD_GPA, len);
	if (!dst) {
		ret = -E2BIG;
		goto err;
	}
	memcpy(dst, blob, len);
	if (setup) {
		ret = setup(p);
		if (ret < 0)
			goto err;
	}
	p->vcpu = vcpu__create(&p->vm, 0);
	if (!p->vcpu) {
		ret = -errno;
		goto err;
	}
	ret = vcpu__set_boot(p->vcpu, &boot);
	if (ret < 0)
		goto err;
	ret = kvm__ioctl(p->vcpu->fd, KVM_GET_REGS, &regs);
	if (ret < 0)
		goto err;
	regs.rdi = edi;
	ret = kvm__ioctl(p->vcpu->fd, KVM_SET_REGS, &regs);
	if (ret < 0)
		goto err;
	/* A periodic tick interrupts KVM_RUN so the deadline is checked even if the guest
	 * never exits. */
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &p->timer) < 0) {
		ret = -errno;
		pr_err("probe: timer_create: %s", strerror(errno));
		goto err;
	}
	p->have_timer = true;
	its.it_value.tv_nsec = PROBE_TICK_NS;
	its.it_interval.tv_nsec = PROBE_TICK_NS;
	timer_settime(p->timer, 0, &its, NULL);
	p->deadline_ns = clock__now_ns() + PROBE_TIMEOUT_NS;
	return 0;

err:
	probe_vm_destroy(p);
	return ret;
}

/* One KVM_RUN, with @dbg (if any) set before it, as the step backend does. */
static enum probe_event probe_run(struct probe_vm *p, const struct kvm_guest_debug *dbg)
{
	int ret;

	for (;;) {
		if (++p->exits > PROBE_MAX_EXITS || clock__now_ns() > p->deadline_ns)
			return PROBE_EV_BUDGET;
		if (dbg && kvm__ioctl_quiet(p->vcpu->fd, KVM_SET_GUEST_DEBUG, dbg) < 0)
			return PROBE_EV_ERROR;
		ret = kvm__ioctl_quiet(p->vcpu->fd, KVM_RUN, 0);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		return ret < 0 ? PROBE_EV_ERROR : PROBE_EV_EXIT;
	}
}

static bool is_out(const struct kvm_run *run, uint16_t port)
{
	return run->exit_reason == KVM_EXIT_IO && run->io.direction == KVM_EXIT_IO_OUT &&
	       run->io.port == port;
}

static uint32_t io_value(const struct kvm_run *run)
{
	uint32_t v = 0;

	memcpy(&v, (const uint8_t *)run + run->io.data_offset,
	       run->io.size <= 4 ? run->io.size : 4);
	return v;
}

/* Describe how a probe run ended badly, for @why. */
static void describe_end(char *buf, size_t len, struct probe_vm *p, enum probe_event ev)
{
	struct kvm_run *run = p->vcpu->run;
	const char *name;

	if (ev == PROBE_EV_BUDGET) {
		snprintf(buf, len, "the probe guest did not finish within its budget");
	} else if (ev == PROBE_EV_ERROR) {
		snprintf(buf, len, "KVM_RUN or KVM_SET_GUEST_DEBUG failed");
	} else if (is_out(run, PROBE_PORT_FAULT)) {
		snprintf(buf, len, "the guest took exception %u", io_value(run));
	} else {
		struct kvm_regs regs = { 0 };

		kvm__ioctl_quiet(p->vcpu->fd, KVM_GET_REGS, &regs);
		name = vcpu__exit_name(run->exit_reason);
		snprintf(buf, len, "exit %s at %#llx", name ? name : "?",
			 (unsigned long long)regs.rip);
	}
}

static void probe_step_cpl0(struct probe_report *rep)
{
	struct kvm_guest_debug dbg = {
		.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP,
	};
	struct probe_vm p;
	unsigned int steps = 0;
	enum probe_event ev;

	if (probe_vm_create(&p, probe_blob_ring0, probe_blob_ring0_end, 0, NULL) < 0) {
		say(rep, PROBE_STEP_CPL0, "the probe VM could not be set up");
		return;
	}
	while ((ev = probe_run(&p, &dbg)) == PROBE_EV_EXIT) {
		struct kvm_run *run = p.vcpu->run;

		if (run->exit_reason == KVM_EXIT_DEBUG && run->debug.arch.exception == 1) {
			steps++;
			continue;
		}
		if (is_out(run, PROBE_PORT_DONE)) {
			rep->caps.step_cpl0 = steps >= 8;
			say(rep, PROBE_STEP_CPL0, "%u single-steps in ring 0", steps);
			probe_vm_destroy(&p);
			return;
		}
		break;
	}
	describe_end(rep->why[PROBE_STEP_CPL0], sizeof(rep->why[0]), &p, ev);
	probe_vm_destroy(&p);
}

/* Branch records in the mmap'd ring after the ring-0 probe ran with in-kernel stepping. */
static void probe_kvm_bts(struct probe_report *rep)
{
	const unsigned int need = VBTS_KVM_X86_BTS_MODE_RING | VBTS_KVM_X86_BTS_MODE_STEP;
	struct vbts_kvm_x86_bts_config cfg = {
		.mode = VBTS_KVM_X86_BTS_RING_WRAP,
		.cpl = VBTS_KVM_X86_BTS_CPL_USER | VBTS_KVM_X86_BTS_CPL_KERNEL,
		.nr_records = 256,
		.flags = VBTS_KVM_X86_BTS_CFG_BRANCHES,
	};
	const struct vbts_kvm_x86_bts_ring_header *hdr;
	size_t len = VBTS_KVM_X86_BTS_RING_HEADER_SIZE + 256 * 24;
	long page = sysconf(_SC_PAGESIZE);
	struct probe_vm p;
	enum probe_event ev;
	void *map;
	int modes;

	if (probe_vm_create(&p, probe_blob_ring0, probe_blob_ring0_end, 0, NULL) < 0) {
		say(rep, PROBE_KVM_BTS, "the probe VM could not be set up");
		return;
	}
	modes = kvm__check_extension(&p.vm.kvm, VBTS_KVM_CAP_X86_BTS);
	if (modes > 0)
		rep->caps.kvm_bts_modes = (unsigned int)modes;
	if (modes < 0 || ((unsigned int)modes & need) != need ||
	    kvm__check_extension(&p.vm.kvm, VBTS_KVM_CAP_X86_CR3_TRACE) <= 0) {
		say(rep, PROBE_KVM_BTS, "no KVM_CAP_X86_BTS ring and step modes, or no "
		    "KVM_CAP_X86_CR3_TRACE (stock KVM)");
		goto out_destroy;
	}
	if (kvm__ioctl_quiet(p.vcpu->fd, VBTS_KVM_X86_BTS_CONFIGURE, (unsigned long)&cfg) < 0) {
		say(rep, PROBE_KVM_BTS, "KVM_X86_BTS_CONFIGURE failed");
		goto out_destroy;
	}
	len = (len + page - 1) & ~(size_t)(page - 1);
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, p.vcpu->fd,
		   (off_t)VBTS_KVM_X86_BTS_RING_PAGE_OFFSET * page);
	if (map == MAP_FAILED) {
		say(rep, PROBE_KVM_BTS, "the ring cannot be mapped from the vCPU fd");
		goto out_destroy;
	}
	hdr = map;
	if (kvm__ioctl_quiet(p.vcpu->fd, VBTS_KVM_X86_BTS_ENABLE, 0) < 0) {
		say(rep, PROBE_KVM_BTS, "KVM_X86_BTS_ENABLE failed");
		goto out_unmap;
	}
	while ((ev = probe_run(&p, NULL)) == PROBE_EV_EXIT) {
		struct kvm_run *run = p.vcpu->run;
		const uint64_t *rec = (const uint64_t *)((const char *)map +
							 VBTS_KVM_X86_BTS_RING_HEADER_SIZE);
		uint64_t head, i, branches = 0;

		if (run->exit_reason == VBTS_KVM_EXIT_X86_BTS)
			continue;
		if (!is_out(run, PROBE_PORT_DONE))
			break;
		kvm__ioctl_quiet(p.vcpu->fd, VBTS_KVM_X86_BTS_DISABLE, 0);
		head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE);
		for (i = 0; i < head && i < cfg.nr_records; i++)
			branches += rec[3 * i] != ~0ULL;
		/* The probe's jmp at least, between START and STOP. */
		rep->caps.kvm_bts = branches >= 1;
		say(rep, PROBE_KVM_BTS, "%llu records in the in-kernel ring, %llu branches",
		    (unsigned long long)head, (unsigned long long)branches);
		goto out_unmap;
	}
	describe_end(rep->why[PROBE_KVM_BTS], sizeof(rep->why[0]), &p, ev);
out_unmap:
	munmap(map, len);
out_destroy:
	probe_vm_destroy(&p);
}

static void probe_sync_regs(struct probe_report *rep)
{
	const uint64_t want = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	struct probe_vm p;
	struct kvm_run *run;
	enum probe_event ev;
	int avail;

	if (probe_vm_create(&p, probe_blob_ring0, probe_blob_ring0_end, 0, NULL) < 0) {
		say(rep, PROBE_SYNC_REGS, "the probe VM could not be set up");
		return;
	}
	avail = kvm__check_extension(&p.vm.kvm, KVM_CAP_SYNC_REGS);
	if ((avail & want) != want) {
		say(rep, PROBE_SYNC_REGS, "KVM_CAP_SYNC_REGS lacks regs/sregs");
		probe_vm_destroy(&p);
		return;
	}
	run = p.vcpu->run;
	for (;;) {
		run->kvm_valid_regs = want;
		ev = probe_run(&p, NULL);
		if (ev != PROBE_EV_EXIT)
			break;
		if (is_out(run, PROBE_PORT_DONE)) {
			rep->caps.sync_regs = run->s.regs.regs.rsi == PROBE_MAGIC_ESI &&
					      run->s.regs.sregs.cs.selector == 0x10;
			say(rep, PROBE_SYNC_REGS, "regs in kvm_run %s the guest's",
			    rep->caps.sync_regs ? "matched" : "did not match");
			probe_vm_destroy(&p);
			return;
		}
		if (!(run->exit_reason == KVM_EXIT_IO && run->io.port == PROBE_PORT_INFO))
			break;
	}
	describe_end(rep->why[PROBE_SYNC_REGS], sizeof(rep->why[0]), &p, ev);
	probe_vm_destroy(&p);
}

static const uint8_t msr_filter_deny;

static int setup_msr_filter(struct probe_vm *p)
{
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER,
	};
	struct kvm_msr_filter filter = {
		.flags = KVM_MSR_FILTER_DEFAULT_ALLOW,
		.ranges[0] = {
			.flags = KVM_MSR_FILTER_WRITE,
			.nmsrs = 1,
			.base = X86_MSR_IA32_DEBUGCTL,
			.bitmap = (uint8_t *)&msr_filter_deny, /* bit clear: exit to userspace */
		},
	};
	int ret;

	if (!kvm__check_extension(&p->vm.kvm, KVM_CAP_X86_USER_SPACE_MSR) ||
	    !kvm__check_extension(&p->vm.kvm, KVM_CAP_X86_MSR_FILTER))
		return -ENOTSUP;
	ret = kvm__ioctl_quiet(p->vm.kvm.vm_fd, KVM_ENABLE_CAP, &cap);
	if (ret < 0)
		return ret;
	ret = kvm__ioctl_quiet(p->vm.kvm.vm_fd, KVM_X86_SET_MSR_FILTER, &filter);
	return ret < 0 ? ret : 0;
}

static void probe_user_msr(struct probe_report *rep)
{
	struct probe_vm p;
	bool seen = false;
	enum probe_event ev;

	if (probe_vm_create(&p, probe_blob_msr, probe_blob_msr_end, 0, setup_msr_filter) < 0) {
		say(rep, PROBE_USER_MSR,
		    "KVM refused KVM_CAP_X86_USER_SPACE_MSR or the MSR filter");
		return;
	}
	while ((ev = probe_run(&p, NULL)) == PROBE_EV_EXIT) {
		struct kvm_run *run = p.vcpu->run;

		if (run->exit_reason == KVM_EXIT_X86_WRMSR) {
			seen |= run->msr.index == X86_MSR_IA32_DEBUGCTL;
			run->msr.error = 0;
			continue;
		}
		if (is_out(run, PROBE_PORT_DONE)) {
			rep->caps.user_msr = seen;
			say(rep, PROBE_USER_MSR, "WRMSR IA32_DEBUGCTL %s to the VMM",
			    seen ? "exited" : "did not exit");
			probe_vm_destroy(&p);
			return;
		}
		break;
	}
	describe_end(rep->why[PROBE_USER_MSR], sizeof(rep->why[0]), &p, ev);
	probe_vm_destroy(&p);
}

/* Ring-3 probe modes. */
enum user_mode {
	USER_PLAIN, /* just reach ring 3 and report */
	USER_STEP,  /* single-step throughout; count steps at CPL 3 */
	USER_HWBP,  /* hardware breakpoint on the ring-3 site */
};

/* Run the user probe; true when ring 3 reported on PROBE_PORT_USER. @hits: CPL-3 steps or
 * breakpoint hits. */
static bool run_user(uint32_t method, enum user_mode mode, unsigned int *hits, char *why,
		     size_t whylen)
{
	struct kvm_guest_debug dbg = { 0 };
	const struct kvm_guest_debug *armed = NULL;
	struct probe_vm p;
	enum probe_event ev;
	uint64_t bp = 0;

	*hits = 0;
	if (probe_vm_create(&p, probe_blob_user, probe_blob_user_end, method, NULL) < 0) {
		snprintf(why, whylen, "the probe VM could not be set up");
		return false;
	}
	/* Debugging is armed only from PROBE_PORT_INFO on, a few instructions before ring 3:
	 * stepping the page-table set-up would cost thousands of exits (slow when nested). */
	while ((ev = probe_run(&p, armed)) == PROBE_EV_EXIT) {
		struct kvm_run *run = p.vcpu->run;
		struct kvm_sregs sregs;

		if (run->exit_reason == KVM_EXIT_DEBUG) {
			if (mode == USER_HWBP) {
				*hits += run->debug.arch.pc == bp;
				/* Resume past the breakpoint: the rest is unwatched. */
				dbg.control = KVM_GUESTDBG_ENABLE;
				continue;
			}
			if (kvm__ioctl_quiet(p.vcpu->fd, KVM_GET_SREGS, &sregs) == 0 &&
			    (sregs.cs.selector & 3) == 3)
				(*hits)++;
			continue;
		}
		if (is_out(run, PROBE_PORT_INFO)) {
			bp = io_value(run);
			if (mode == USER_STEP) {
				dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
				armed = &dbg;
			} else if (mode == USER_HWBP) {
				dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_USE_HW_BP;
				dbg.arch.debugreg[0] = bp;
				dbg.arch.debugreg[7] = 0x1; /* L0, execute, 1 byte */
				armed = &dbg;
			}
			continue;
		}
		if (is_out(run, PROBE_PORT_USER)) {
			probe_vm_destroy(&p);
			return true;
		}
		break;
	}
	describe_end(why, whylen, &p, ev);
	probe_vm_destroy(&p);
	return false;
}

static void probe_ring3(struct probe_report *rep)
{
	static const struct {
		uint32_t method;
		const char *name;
	} methods[] = {
		{ PROBE_ENTER_IRETQ, "iretq" },
		{ PROBE_ENTER_SYSRETQ, "sysretq" },
	};
	char why[128], tried[128] = "";
	unsigned int hits;
	size_t m;

	for (m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
		if (run_user(methods[m].method, USER_PLAIN, &hits, why, sizeof(why)))
			break;
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s: %.40s",
			 m ? "; " : "", methods[m].name, why);
	}
	if (m == sizeof(methods) / sizeof(methods[0])) {
		say(rep, PROBE_STEP_CPL3, "cannot enter ring 3 (%s)", tried);
		say(rep, PROBE_HWBP_CPL3, "cannot enter ring 3");
		return;
	}
	if (run_user(methods[m].method, USER_STEP, &hits, why, sizeof(why))) {
		rep->caps.step_cpl3 = hits >= 3;
		say(rep, PROBE_STEP_CPL3, "%u single-steps in ring 3 (entered by %s)", hits,
		    methods[m].name);
	} else {
		say(rep, PROBE_STEP_CPL3, "%s (entered by %s)", why, methods[m].name);
	}
	if (run_user(methods[m].method, USER_HWBP, &hits, why, sizeof(why))) {
		rep->caps.hwbp_cpl3 = hits > 0;
		say(rep, PROBE_HWBP_CPL3, "breakpoint %s", hits ? "hit" : "not hit");
	} else {
		say(rep, PROBE_HWBP_CPL3, "%s", why);
	}
}

int probe__report(struct probe_report *rep)
{
	struct kvm k;
	int ret;

	memset(rep, 0, sizeof(*rep));
	ret = kvm__open(&k);
	if (ret < 0)
		return ret == -ENOTSUP ? -ENODEV : ret;
	kvm__close(&k);
	ret = vcpu__install_kick_signal();
	if (ret < 0)
		return ret;
	probe_step_cpl0(rep);
	probe_ring3(rep);
	probe_user_msr(rep);
	probe_sync_regs(rep);
	probe_kvm_bts(rep);
	return 0;
}

int probe__run(struct tracer_caps *caps)
{
	struct probe_report rep;
	int ret = probe__report(&rep);

	*caps = rep.caps;
	return ret;
}
