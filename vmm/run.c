// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - a `vbts run`: boot an image in a VM, optionally trace its branches, and exit with
 * the guest's debug-exit status.
 *
 * Set-up and tear-down follow one ordered table (core → memory → platform → vCPUs → devices
 * → collector → console), torn down in reverse; a failing stage unwinds the ones before it.
 * Everything that can refuse the run comes before the first file is created or truncated.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vbts/agent-proto.h>

#include "agent.h"
#include "clock.h"
#include "control.h"
#include "debug-exit.h"
#include "guest-bts.h"
#include "guest-tasks.h"
#include "kvm.h"
#ifdef VBTS_HAVE_KVM_BACKEND
#include "kvm-backend/kvm-backend.h"
#endif
#include "loader.h"
#include "log.h"
#include "memory.h"
#include "pc.h"
#include "probe.h"
#include "pvpanic.h"
#include "ring-writer.h"
#include "sealer.h"
#include "run.h"
#include "run-gdb.h"
#include "test-hook.h"
#include "trace-keys.h"
#include "trace.h"
#include "uart.h"
#include "vcpu.h"
#include "vm.h"

#define CONSOLE_LIMIT (64ULL << 20) /* guest console bytes written at most */

struct run_ctx {
	struct run_opts opts;
	struct vm vm;
	struct loaded_image img;
	FILE *console;
	struct trace *trace;
	struct sealer *sealer; /* --seal: seals the trace directory as it is written */
	bool guest_ran;  /* vCPU threads were started: the trace is kept, not removed */
	bool *gone;      /* per vCPU, for guest_tasks__reap() */
	int fail_status; /* exit status when a stage fails: 1, or 2 for bad input */
	struct control *control;
	struct run_gdb *gdb;
	bool bare_irqchip; /* a bare guest with an in-kernel irqchip: it may start its APs */
};

/* agent_space_fn: the address space of the vCPU writing to the agent channel. */
static uint64_t agent_space(void *ctx, unsigned int vcpu)
{
	struct vm *vm = ctx;

	return vcpu < vm->nr_vcpus && vm->vcpus && vm->vcpus[vcpu] ?
	       vcpu__address_space(vm->vcpus[vcpu]) : 0;
}
/* ---- stop signals ---------------------------------------------------------------------- */

/*
 * SIGINT, SIGTERM and SIGHUP end a run cleanly, and so does SIGALRM, the --timeout. From the
 * start of `vbts run` on, a handler records the first of them; the main thread looks at it
 * between the stages of start-up and while the guest runs, and blocking calls of the main
 * thread return EINTR (no SA_RESTART), so none waits for ever. vCPU threads block them.
 * File scope: a signal handler can reach nothing else.
 */
static volatile sig_atomic_t stop_signal;

static const int stop_signal_list[] = { SIGINT, SIGTERM, SIGHUP, SIGALRM };

#define NR_STOP_SIGNALS (sizeof(stop_signal_list) / sizeof(stop_signal_list[0]))

static void catch_stop_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	for (unsigned int i = 0; i < NR_STOP_SIGNALS; i++)
		sigaddset(set, stop_signal_list[i]);
}

/* Catch the stop signals (@old receives the previous actions) and arm the --timeout. */
static int catch_stop_signals(unsigned int timeout_s, struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = catch_stop_signal };

	stop_signal = 0;
	sigemptyset(&sa.sa_mask);
	for (unsigned int i = 0; i < NR_STOP_SIGNALS; i++) {
		if (sigaction(stop_signal_list[i], &sa, &old[i]) < 0) {
			int ret = -errno;

			while (i--)
				sigaction(stop_signal_list[i], &old[i], NULL);
			return ret;
		}
	}
	alarm(timeout_s);
	return 0;
}

static void release_stop_signals(const struct sigaction *old)
{
	alarm(0);
	for (unsigned int i = 0; i < NR_STOP_SIGNALS; i++)
		sigaction(stop_signal_list[i], &old[i], NULL);
}

/* A stop signal came before the guest ran: say so; the exit status. */
static int stopped_in_startup(struct run_ctx *c)
{
	int sig = stop_signal;

	if (sig == SIGALRM) {
		pr_err("--timeout %u s passed during start-up: stopped before the guest ran",
		       c->opts.timeout_s);
		return 1;
	}
	pr_err("%s during start-up: stopped before the guest ran", strsignal(sig));
	return 128 + sig;
}

/* ---- stages ----------------------------------------------------------------------------- */

static int core_init(struct run_ctx *c)
{
	int ret;

	vm__init(&c->vm);
	c->vm.start_ns = clock__now_ns();
	ret = vcpu__install_kick_signal();
	if (ret < 0) {
		pr_err("cannot install the vCPU kick signal: %s", strerror(-ret));
		return ret;
	}
	ret = kvm__open(&c->vm.kvm);
	if (ret == -ENODEV || ret == -ENOTSUP)
		c->fail_status = 2;
	if (ret < 0)
		return ret;
	if (c->opts.vcpus > c->vm.kvm.max_vcpus) {
		pr_err("--vcpus %u: this KVM supports at most %u", c->opts.vcpus,
		       c->vm.kvm.max_vcpus);
		c->fail_status = 2;
		kvm__close(&c->vm.kvm);
		return -EINVAL;
	}
	return 0;
}

static void core_fini(struct run_ctx *c)
{
	kvm__close(&c->vm.kvm);
	vm__fini(&c->vm);
}

static int memory_init(struct run_ctx *c)
{
	int ret;

	c->vm.mem = guest_memory__create((uint64_t)c->opts.memory_mib << 20);
	if (!c->vm.mem) {
		pr_err("cannot allocate %u MiB of guest memory: %s", c->opts.memory_mib,
		       strerror(errno));
		return -errno;
	}
	ret = guest_memory__register(c->vm.mem, c->vm.kvm.vm_fd);
	if (ret < 0)
		goto err_destroy;
	ret = loader__load_files(c->opts.image, c->opts.initrd, c->opts.append, c->opts.vcpus,
				 c->vm.mem, &c->img);
	if (ret < 0) {
		pr_err("%s: %s", c->opts.image, c->img.error);
		if (ret != -ENOMEM)
			c->fail_status = 2;
		goto err_destroy;
	}
	pr_debug("%s: %s image, entry %#" PRIx64, c->opts.image, c->img.format, c->img.entry);
	return 0;

err_destroy:
	guest_memory__destroy(c->vm.mem);
	c->vm.mem = NULL;
	return ret;
}

static void memory_fini(struct run_ctx *c)
{
	guest_memory__destroy(c->vm.mem);
	c->vm.mem = NULL;
}

/* The PC platform of an operating system; before the vCPUs (see pc.h). */
static int platform_init(struct run_ctx *c)
{
	int ret;

	if (c->opts.guest_bts && c->opts.backend == RUN_BACKEND_KVM) {
		/* The kernel's guest mode: the VMM only sets the CPUID bits that ask for it. */
		ret = -ENOTSUP;
#ifdef VBTS_HAVE_KVM_BACKEND
		ret = kvm_bts__guest_mode(c->vm.kvm.sys_fd);
#endif
		if (ret == -ENOTSUP) {
			pr_err("--guest-bts --backend kvm: this KVM does not report guest-visible BTS "
			       "(KVM_X86_BTS_MODE_GUEST and DS, DTES64, DS-CPL in "
			       "KVM_GET_EMULATED_CPUID: load the modules of kvm-patches/)");
			c->fail_status = 2;
		}
		if (ret < 0)
			return ret;
		c->vm.guest_bts_kvm = true;
	} else if (c->opts.guest_bts) {
		ret = guest_bts__setup_vm(&c->vm.kvm);
		if (ret == -ENOTSUP)
			c->fail_status = 2;
		if (ret < 0)
			return ret;
		c->vm.guest_bts = true;
	}
	if (c->opts.guest_bts) {
		/* A bare guest gets an in-kernel LAPIC for its LVTPC (the threshold PMI). */
		if (!c->img.pc) {
			ret = kvm__ioctl(c->vm.kvm.vm_fd, KVM_CREATE_IRQCHIP, 0);
			if (ret < 0)
				return ret;
			c->bare_irqchip = true;
			return 0;
		}
	}
	if (!c->img.pc)
		return 0;
	c->vm.pc = pc__create(&c->vm);
	return c->vm.pc ? 0 : -errno;
}

static void platform_fini(struct run_ctx *c)
{
	pc__destroy(c->vm.pc);
	c->vm.pc = NULL;
}

static void vcpus_fini(struct run_ctx *c);

static int vcpus_init(struct run_ctx *c)
{
	int ret;

	c->vm.vcpus = calloc(c->opts.vcpus, sizeof(*c->vm.vcpus));
	if (!c->vm.vcpus)
		return -ENOMEM;
	c->vm.nr_vcpus = c->opts.vcpus;
	for (unsigned int i = 0; i < c->opts.vcpus; i++) {
		c->vm.vcpus[i] = vcpu__create(&c->vm, i);
		if (!c->vm.vcpus[i]) {
			ret = -errno;
			goto err_destroy;
		}
	}
	/* The boot protocol starts the BSP; APs stay parked until something starts them. */
	ret = vcpu__set_boot(c->vm.vcpus[0], &c->img.boot);
	if (ret < 0)
		goto err_destroy;
	return 0;

err_destroy:
	vcpus_fini(c);
	return ret;
}

static void vcpus_fini(struct run_ctx *c)
{
	for (unsigned int i = 0; i < c->vm.nr_vcpus; i++)
		vcpu__destroy(c->vm.vcpus[i]);
	free(c->vm.vcpus);
	c->vm.vcpus = NULL;
	c->vm.nr_vcpus = 0;
}

static void debug_exit_notify(void *opaque, int status)
{
	vm__request_stop(opaque, status);
}

/* pvpanic: a panic freezes the panicking vCPU's ring and ends the run with status 1. */
static void pvpanic_notify(void *opaque, unsigned int vcpu, unsigned int events)
{
	struct vm *vm = opaque;

	if (!(events & PVPANIC_PANICKED) || vcpu >= vm->nr_vcpus || vm__stop_requested(vm) ||
	    !vm__claim_panic(vm))
		return;
	pr_err("vcpu %u: the guest panicked (pvpanic)", vcpu);
	if (vcpu__crash(vm->vcpus[vcpu], CRASH_PANIC, NULL) == CRASH_ACTION_EXIT)
		vm__request_stop(vm, 1);
}

static void devices_fini(struct run_ctx *c);

static int devices_init(struct run_ctx *c)
{
	int ret;

	/* The console file is opened last (console_init), once nothing can refuse the run. */
	c->vm.uart = uart__create(NULL, CONSOLE_LIMIT);
	c->vm.dexit.notify = debug_exit_notify;
	c->vm.dexit.opaque = &c->vm;
	c->vm.pvpanic.notify = pvpanic_notify;
	c->vm.pvpanic.opaque = &c->vm;
	c->vm.agent = agent__create(c->opts.vcpus, NULL, c->vm.start_ns, VBTS_AGENT_EVENTS_MAX);
	if (!c->vm.uart || !c->vm.agent) {
		ret = -ENOMEM;
		goto err_fini;
	}
	ret = uart__register(c->vm.uart, &c->vm.pio);
	if (!ret)
		ret = debug_exit__register(&c->vm.dexit, &c->vm.pio);
	if (!ret)
		ret = agent__register(c->vm.agent, &c->vm.pio);
	/* Processes writing the channel at once keep their lines apart. */
	agent__set_space(c->vm.agent, agent_space, &c->vm);
	if (!ret)
		ret = pvpanic__register(&c->vm.pvpanic, &c->vm.pio);
	if (ret < 0) {
		pr_err("device set-up: %s", strerror(-ret));
		goto err_fini;
	}
	if (c->vm.pc) {
		ret = pc__connect_uart(c->vm.pc, c->vm.uart);
		if (ret < 0)
			goto err_fini;
	}
	return 0;

err_fini:
	devices_fini(c);
	return ret;
}

static void devices_fini(struct run_ctx *c)
{
	pc__disconnect_uart(c->vm.pc);
	agent__destroy(c->vm.agent);
	c->vm.agent = NULL;
	uart__destroy(c->vm.uart);
	c->vm.uart = NULL;
}

/* The tracer of --backend; 0, or -errno with fail_status set. */
static int choose_backend(struct run_ctx *c)
{
	bool kvm = false;

#ifdef VBTS_HAVE_KVM_BACKEND
	kvm = kvm_bts__usable(c->vm.kvm.sys_fd);
#endif
	if (c->opts.guest_bts && c->opts.backend != RUN_BACKEND_KVM)
		kvm = false; /* the step backend emulates it; the kernel's only when asked for */
	if (c->opts.backend == RUN_BACKEND_KVM && !kvm) {
		pr_err("--backend kvm: this KVM does not report KVM_CAP_X86_BTS with branch "
		       "stepping and CR3 tracing (load the modules of kvm-patches/)");
		c->fail_status = 2;
		return -ENOTSUP;
	}
#ifdef VBTS_HAVE_KVM_BACKEND
	if (kvm && c->opts.backend != RUN_BACKEND_STEP) {
		c->vm.tracer = &kvm_tracer_ops;
		return 0;
	}
#endif
#ifdef VBTS_HAVE_STEP
	c->vm.tracer = &step_tracer_ops;
	return 0;
#else
	pr_err("--trace: this vbts was built without the step tracer backend");
	c->fail_status = 2;
	return -ENOTSUP;
#endif
}

static void tasks_fini(struct run_ctx *c)
{
	guest_tasks__destroy(c->vm.tasks);
	c->vm.tasks = NULL;
	free(c->gone);
	c->gone = NULL;
}

/*
 * A Linux guest's processes, for the kvm backend; what the step backend cannot do on one is
 * said here. 0, or -errno with fail_status set.
 */
static int tasks_init(struct run_ctx *c)
{
	struct guest_tasks_config cfg = {
		.kernel = c->opts.image,
		.system_map = c->opts.system_map,
		.select = c->opts.tasks,
		.nr_select = c->opts.nr_tasks,
		.nr_vcpus = c->opts.vcpus,
		.mem = c->vm.mem,
	};
	char err[320];
	int ret;

	if (!c->img.pc) {
		if (c->opts.nr_tasks) {
			pr_err("--task: %s is no Linux kernel; a multiboot guest's tasks are those "
			       "its agent announces (vbts decode --task)", c->opts.image);
			c->fail_status = 2;
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(c->vm.tracer->name, "kvm")) {
		if (c->opts.nr_tasks) {
			pr_err("--task needs --backend kvm (kvm-patches/'s modules): stock KVM does "
			       "not report a guest's CR3 loads, so the step backend cannot tell its "
			       "processes apart");
			c->fail_status = 2;
			return -ENOTSUP;
		}
		pr_warn("the step backend on a Linux guest: stock KVM reports no CR3 loads, so "
			"records are not attributed to processes, and code entered through the "
			"guest's IDT (interrupts, exceptions, system calls) shows as gaps");
		return 0;
	}
	c->gone = calloc(c->opts.vcpus, sizeof(*c->gone));
	if (!c->gone)
		return -ENOMEM;
	c->vm.tasks = guest_tasks__create(&cfg, err, sizeof(err));
	if (!c->vm.tasks) {
		ret = -errno;
		tasks_fini(c);
		pr_err("%s: %s", c->opts.image, err);
		c->fail_status = ret == -ENOMEM ? 1 : 2;
		return ret;
	}
	agent__set_introspected(c->vm.agent, true);
	return 0;
}

/* Whether a stalled stream writer should give up: the run is ending. */
static bool run_stopping(void *ctx)
{
	return stop_signal || vm__stop_requested(ctx);
}

/*
 * The guest kernel's symbols into the trace directory (kallsyms.map, a System.map that `vbts
 * decode` uses when vm.json names none with symbols) and its KASLR slide into vm.json, once:
 * before the report of a kernel crash (a failure is a warning), else at the end of a run that
 * recorded kernel code (quietly: a run's stderr is its guest's story).
 */
static void write_kernel_symbols(struct run_ctx *c, bool quiet)
{
	static bool done;
	char path[4096], err[256] = "";
	uint64_t slide;
	int ret;

	if (!c->trace || !c->vm.tasks || __atomic_exchange_n(&done, true, __ATOMIC_ACQ_REL))
		return;
	if (!guest_tasks__kaslr_slide(c->vm.tasks, &slide))
		return;
	trace__set_kaslr_slide(c->trace, slide);
	if ((size_t)snprintf(path, sizeof(path), "%s/kallsyms.map", c->opts.trace_dir) >=
	    sizeof(path))
		return;
	ret = guest_tasks__write_kallsyms(c->vm.tasks, path, NULL, err, sizeof(err));
	if (ret < 0 && !quiet)
		pr_warn("the guest kernel's symbols: %s", err[0] ? err : strerror(-ret));
}

/* vm.kernel_symbols: before a kernel crash's report. */
static void save_kernel_symbols(struct vm *vm)
{
	write_kernel_symbols((struct run_ctx *)((char *)vm - offsetof(struct run_ctx, vm)), false);
}

static int collector_init(struct run_ctx *c)
{
	struct trace_config cfg = {
		.dir = c->opts.trace_dir,
		.image = c->opts.image,
		.build_id = c->img.build_id,
		.vcpus = c->opts.vcpus,
		.memory_mib = c->opts.memory_mib,
		.backend = NULL,
		.cpl = c->opts.cpl,
		.collector = c->opts.collector,
		.stop = run_stopping,
		.stop_ctx = &c->vm,
	};
	char err[256], *image, *map = NULL;
	int ret;

	/* The kernel's guest-visible BTS needs no tracer: only the host's trace does. */
	if (!c->opts.trace_dir && (!c->opts.guest_bts || c->vm.guest_bts_kvm))
		return 0;
	ret = choose_backend(c);
	if (ret < 0)
		return ret;
	if (!c->opts.trace_dir) {
		/* --guest-bts alone: the tracer runs for the guest's buffer, without rings */
		ret = probe__run(&c->vm.caps);
		if (ret < 0)
			pr_err("cannot probe this host's KVM: %s", strerror(-ret));
		return ret;
	}
	cfg.backend = c->vm.tracer->name;
	ret = tasks_init(c);
	if (ret < 0)
		return ret;
	c->vm.ring_records = c->opts.collector.mode == TRACE_MODE_STREAM ?
			     c->opts.collector.segment_records : c->opts.collector.ring_records;
	c->vm.crash_dir = c->opts.trace_dir;
	c->vm.kernel_symbols = save_kernel_symbols;
	c->vm.crash_branches = c->opts.crash_branches;
	c->vm.on_crash = c->opts.on_crash;
	/* The step backend needs to know what single-step can do here; the kvm one does not. */
	if (strcmp(c->vm.tracer->name, "kvm")) {
		ret = probe__run(&c->vm.caps);
		if (ret < 0) {
			pr_err("cannot probe this host's KVM: %s", strerror(-ret));
			goto err_tasks;
		}
		if (!c->vm.caps.step_cpl0)
			pr_warn("this host's KVM cannot single-step CPL 0 either: expect gaps only");
		else if (!c->vm.caps.step_cpl3 && c->opts.cpl == VBTS_CPL_USER)
			pr_warn("this host's KVM cannot single-step CPL 3: user-mode code shows as "
				"gaps (--harness runs it where it can)");
	}
	c->vm.cpl = c->opts.cpl;
	/* Escape-record and event times count from here, next to the ring headers' start. */
	c->vm.start_ns = clock__now_ns();
	/* vm.json names the image absolutely: the decoder may run from anywhere. */
	image = realpath(c->opts.image, NULL);
	if (image)
		cfg.image = image;
	cfg.linux_kernel = c->img.pc;
	if (c->opts.system_map) {
		map = realpath(c->opts.system_map, NULL);
		cfg.system_map = map ? map : c->opts.system_map;
	}
	c->trace = trace__create(&cfg, err, sizeof(err));
	free(image);
	free(map);
	if (!c->trace) {
		ret = -errno;
		if (ret == -EINTR && stop_signal)
			goto err_tasks; /* reported as a stop during start-up */
		pr_err("%s", err);
		if (ret != -ENOMEM)
			c->fail_status = 2;
		goto err_tasks;
	}
	if (c->opts.seal_key) {
		c->sealer = sealer__start(c->opts.trace_dir, c->opts.seal_key,
					  c->opts.seal_interval_s, err, sizeof(err));
		if (!c->sealer) {
			ret = -errno;
			pr_err("%s", err);
			trace__abort(c->trace);
			c->trace = NULL;
			c->fail_status = 2;
			goto err_tasks;
		}
		trace__set_on_closed(c->trace, sealer__segment_closed, c->sealer);
	}
	for (unsigned int i = 0; i < c->vm.nr_vcpus; i++)
		vcpu__set_ring(c->vm.vcpus[i], trace__ring(c->trace, i));
	agent__set_events(c->vm.agent, trace__events(c->trace), c->vm.start_ns);
	ret = agent__set_store(c->vm.agent, c->opts.trace_dir);
	if (ret < 0) {
		pr_err("agent: %s", strerror(-ret));
		goto err_tasks;
	}
	if (c->vm.tasks)
		guest_tasks__set_events(c->vm.tasks, trace__events(c->trace));
	return 0;

err_tasks:
	tasks_fini(c);
	return ret;
}

/* vm.json's "kvm_tracer": what the kernel tracer did, summed over the vCPUs. */
static void save_kvm_counters(struct run_ctx *c)
{
	struct kvm_counters sum = { 0 };
	struct vcpu_stats vs;

	for (unsigned int i = 0; i < c->vm.nr_vcpus; i++) {
		vcpu__stats(c->vm.vcpus[i], &vs);
		kvm_counters__add(&sum, &vs.kvm);
	}
	if (sum.valid && trace__set_json(c->trace, VM_KEY_KVM_TRACER, kvm_counters__json(&sum)) < 0)
		pr_warn("vm.json: the kernel tracer's counters could not be written");
}

static void collector_fini(struct run_ctx *c)
{
	uint64_t slide;
	int ret;

	if (!c->trace)
		return;
	agent__set_events(c->vm.agent, NULL, c->vm.start_ns);
	if (c->vm.tasks && c->guest_ran && c->vm.cpl != VBTS_CPL_USER)
		write_kernel_symbols(c, true);
	if (c->vm.tasks) {
		guest_tasks__set_events(c->vm.tasks, NULL);
		if (c->guest_ran && guest_tasks__kaslr_slide(c->vm.tasks, &slide))
			trace__set_kaslr_slide(c->trace, slide);
	}
	tasks_fini(c);
	if (c->guest_ran && c->vm.tracer == &kvm_tracer_ops)
		save_kvm_counters(c);
	if (!c->guest_ran) {
		/* Start-up did not finish: nothing was recorded, leave DIR as it was. */
		trace__set_on_closed(c->trace, NULL, NULL);
		sealer__abort(c->sealer);
		c->sealer = NULL;
		trace__abort(c->trace);
		c->trace = NULL;
		return;
	}
	ret = trace__close(c->trace);
	if (ret < 0)
		pr_err("closing trace directory %s: %s", c->opts.trace_dir, strerror(-ret));
	c->trace = NULL;
	/* The last checkpoint seals every file as the run left it (sealer__finish() reports). */
	sealer__finish(c->sealer);
	c->sealer = NULL;
}

/* ---- control socket --------------------------------------------------------------------- */

static int control_state(void *opaque, unsigned int vcpu, struct control_vcpu_state *st)
{
	struct vm *vm = opaque;
	static const char *const run_names[] = {
		[VCPU_RUNNING] = "running", [VCPU_PAUSED] = "paused",
		[VCPU_STEPPING] = "running", [VCPU_STOPPED] = "stopped",
	};
	enum vcpu_state s;

	if (vcpu >= vm->nr_vcpus)
		return -EINVAL;
	s = vcpu__state(vm->vcpus[vcpu]);
	st->run = (unsigned int)s < 4 ? run_names[s] : "unknown";
	st->rec = vcpu__recording(vm->vcpus[vcpu], &st->pending, &st->cpl);
	return 0;
}

static int control_request(void *opaque, unsigned int vcpu, unsigned int req, unsigned int cpl)
{
	struct vm *vm = opaque;

	if (vcpu >= vm->nr_vcpus)
		return -EINVAL;
	vcpu__control(vm->vcpus[vcpu], req, cpl);
	return 0;
}

/*
 * config mode: what a running trace can switch to. A trace's mode is fixed when its files are
 * made (a stream-mode run's control socket answers config mode itself).
 */
static int control_set_mode(void *opaque, unsigned int vcpu, unsigned int mode, char *err,
			    size_t errlen)
{
	if (mode == VBTS_RING_WRAP)
		return 0;
	snprintf(err, errlen, "a running trace's mode is fixed when its files are made (vbts "
		 "run --mode stream)");
	return -ENOTSUP;
}

/* config size: the vCPU thread replaces its ring file (vcpu.c, ring_writer__resize()). */
static int control_resize(void *opaque, unsigned int vcpu, uint64_t records)
{
	struct vm *vm = opaque;

	if (vcpu >= vm->nr_vcpus)
		return -EINVAL;
	vcpu__resize(vm->vcpus[vcpu], records);
	return 0;
}

/* config tasks: a Linux guest's processes as --task selects them, from their next load. */
static int control_set_tasks(void *opaque, const char *const *names, unsigned int nr,
			     char *err, size_t errlen)
{
	struct vm *vm = opaque;

	if (!vm->tasks) {
		snprintf(err, errlen, "the task filter needs a Linux guest followed by its kernel "
			 "(--kernel with --backend kvm)");
		return -ENOTSUP;
	}
	return guest_tasks__set_select(vm->tasks, names, nr, err, errlen);
}

static const struct control_target_ops control_ops = {
	.state = control_state,
	.request = control_request,
	.set_mode = control_set_mode,
	.resize = control_resize,
	.set_tasks = control_set_tasks,
};

/* --control: the socket and its thread, once the trace exists. */
static int control_init(struct run_ctx *c)
{
	struct control_config cfg = {
		.path = c->opts.control,
		.trace_dir = c->opts.trace_dir,
		.nr_vcpus = c->opts.vcpus,
		.ring_records = c->opts.collector.ring_records,
		.stream = c->opts.collector.mode == TRACE_MODE_STREAM,
		.segment_records = c->opts.collector.segment_records,
		.backend = c->vm.tracer ? c->vm.tracer->name : NULL,
		.tasks = c->opts.tasks,
		.nr_tasks = c->opts.nr_tasks,
		.ops = &control_ops,
		.opaque = &c->vm,
	};
	char err[512];
	int ret;

	if (!c->opts.control)
		return 0;
	c->control = control__create(&cfg, err, sizeof(err));
	if (!c->control) {
		ret = -errno;
		pr_err("%s", err);
		if (ret != -ENOMEM)
			c->fail_status = 2;
		return ret;
	}
	ret = control__start(c->control);
	if (ret < 0) {
		pr_err("cannot start the control thread: %s", strerror(-ret));
		control__destroy(c->control);
		c->control = NULL;
	}
	return ret;
}

static void control_fini(struct run_ctx *c)
{
	control__destroy(c->control);
	c->control = NULL;
}

/* --gdb: the listening socket and the VM's debugger; its thread starts with the vCPUs. */
static int gdb_init(struct run_ctx *c)
{
	char err[512];

	if (!c->opts.gdb)
		return 0;
#ifdef VBTS_HAVE_KVM_BACKEND
	if (c->vm.tracer == &kvm_tracer_ops) {
		pr_err("--gdb: the kvm backend is not served yet: give --backend step");
		c->fail_status = 2;
		return -ENOTSUP;
	}
#endif
	/* Breakpoints and steps are seen at single-steps: say what this host's KVM steps. */
	if (!c->vm.tracer && probe__run(&c->vm.caps) < 0)
		pr_warn("--gdb: this host's KVM could not be probed: breakpoints may not be seen");
	else if (!c->vm.caps.step_cpl0 && !c->vm.caps.step_cpl3)
		pr_warn("--gdb: this host's KVM cannot single-step the guest: breakpoints and "
			"steps are seen only where the guest exits to the VMM (vbts probe)");
	else if (!c->vm.caps.step_cpl3)
		pr_warn("--gdb: this host's KVM cannot single-step CPL 3: breakpoints and steps "
			"in guest user mode are not seen (vbts probe)");
	c->gdb = run_gdb__create(&c->vm, c->opts.gdb, c->opts.gdb_wait, c->trace, err,
				 sizeof(err));
	if (!c->gdb) {
		pr_err("%s", err);
		if (errno != ENOMEM)
			c->fail_status = 2;
		return -errno;
	}
	if (c->opts.gdb_wait)
		for (unsigned int i = 0; i < c->vm.nr_vcpus; i++)
			if (i == 0 || c->vm.pc || c->bare_irqchip)
				run_gdb__hold(c->gdb, i);
	return 0;
}

static void gdb_fini(struct run_ctx *c)
{
	run_gdb__destroy(c->gdb);
	c->gdb = NULL;
}

/*
 * The guest's console: the last stage, so that a run refused for any other reason leaves
 * the file as it was (opening it truncates it).
 */
static int console_init(struct run_ctx *c)
{
	int ret;

	if (!c->opts.console) {
		c->console = stdout;
	} else {
		c->console = fopen(c->opts.console, "we");
		if (!c->console) {
			ret = -errno;
			/* A FIFO without a reader blocks until a stop signal interrupts it. */
			if (ret == -EINTR && stop_signal)
				return ret;
			pr_err("--console %s: %s", c->opts.console, strerror(-ret));
			c->fail_status = 2;
			return ret;
		}
	}
	uart__set_output(c->vm.uart, c->console);
	return 0;
}

static void console_fini(struct run_ctx *c)
{
	uart__set_output(c->vm.uart, NULL);
	if (c->console && c->console != stdout)
		fclose(c->console);
	c->console = NULL;
}

static const struct stage {
	const char *name;
	int (*init)(struct run_ctx *c);
	void (*fini)(struct run_ctx *c);
} stages[] = {
	{ "core", core_init, core_fini },
	{ "memory", memory_init, memory_fini },
	{ "platform", platform_init, platform_fini },
	{ "vcpus", vcpus_init, vcpus_fini },
	{ "devices", devices_init, devices_fini },
	{ "collector", collector_init, collector_fini },
	{ "control", control_init, control_fini },
	{ "gdb", gdb_init, gdb_fini },
	{ "console", console_init, console_fini },
};

#define NR_STAGES (sizeof(stages) / sizeof(stages[0]))

/* ---- running ---------------------------------------------------------------------------- */

static void print_stats(struct run_ctx *c, uint64_t wall_ns)
{
	struct vcpu_stats vs, sum = { 0 };
	struct agent_stats as;
	uint64_t records = 0, lost = 0, written, dropped;
	char line[1024];
	size_t n = 0;

	for (unsigned int i = 0; i < c->vm.nr_vcpus; i++) {
		vcpu__stats(c->vm.vcpus[i], &vs);
		kvm_counters__add(&sum.kvm, &vs.kvm);
		for (unsigned int r = 0; r < VCPU_NR_EXIT_COUNTERS; r++)
			sum.exits[r] += vs.exits[r];
		sum.steps += vs.steps;
		sum.gaps += vs.gaps;
		sum.gbts.stored += vs.gbts.stored;
		sum.gbts.dropped += vs.gbts.dropped;
		sum.gbts.pmis += vs.gbts.pmis;
		sum.gbts.gp += vs.gbts.gp;
		if (c->trace)
			records += ring_writer__committed(trace__ring(c->trace, i));
		if (c->trace && c->opts.collector.mode == TRACE_MODE_STREAM)
			lost += ring_writer__lost(trace__ring(c->trace, i));
	}
	fprintf(stderr, "vbts: stats: wall time %.3f s\n", wall_ns / 1e9);
	if (c->trace && c->opts.collector.mode == TRACE_MODE_STREAM)
		fprintf(stderr, "vbts: stats: stream records dropped %" PRIu64 "\n", lost);
	line[0] = '\0';
	for (unsigned int r = 0; r < VCPU_NR_EXIT_COUNTERS && n < sizeof(line) - 64; r++) {
		const char *name = vcpu__exit_name(r);

		if (!sum.exits[r])
			continue;
		if (r == VCPU_NR_EXIT_COUNTERS - 1 || !name)
			n += snprintf(line + n, sizeof(line) - n, " %s%u=%" PRIu64,
				      r == VCPU_NR_EXIT_COUNTERS - 1 ? ">=" : "#", r, sum.exits[r]);
		else
			n += snprintf(line + n, sizeof(line) - n, " %s=%" PRIu64, name,
				      sum.exits[r]);
	}
	fprintf(stderr, "vbts: stats: exits%s\n", n ? line : " none");
	fprintf(stderr, "vbts: stats: records written %" PRIu64 ", gaps %" PRIu64
			", instructions stepped %" PRIu64 "\n", records, sum.gaps, sum.steps);
	if (sum.kvm.valid)
		kvm_counters__print(&sum.kvm);
	fprintf(stderr, "vbts: stats: unclaimed pio %" PRIu64 " reads %" PRIu64
			" writes, mmio %" PRIu64 " reads %" PRIu64 " writes\n",
		c->vm.pio.unhandled_reads, c->vm.pio.unhandled_writes,
		c->vm.mmio.unhandled_reads, c->vm.mmio.unhandled_writes);
	if (c->vm.guest_bts)
		fprintf(stderr, "vbts: stats: guest bts: records stored %" PRIu64 ", dropped %"
				PRIu64 ", threshold reached %" PRIu64 ", msr writes refused %" PRIu64
				"\n", sum.gbts.stored, sum.gbts.dropped, sum.gbts.pmis, sum.gbts.gp);
	else if (c->vm.guest_bts_kvm)
		fprintf(stderr, "vbts: stats: guest bts: records dropped %" PRIu64 " (counted by "
				"the kernel)\n", sum.gbts.dropped);
	uart__stats(c->vm.uart, &written, &dropped);
	agent__stats(c->vm.agent, &as);
	fprintf(stderr, "vbts: stats: console %" PRIu64 " bytes (%" PRIu64 " dropped); agent %"
			PRIu64 " events stored, %" PRIu64 " too long, %" PRIu64 " invalid, %"
			PRIu64 " over the limit, %" PRIu64 " members dropped, %" PRIu64 " forged\n",
		written, dropped, as.stored, as.too_long, as.invalid, as.over_limit,
		as.members_dropped, as.forged);
	fprintf(stderr, "vbts: stats: agent elf files stored %" PRIu64 " (%" PRIu64 " bytes), %"
			PRIu64 " messages dropped: bad build id %" PRIu64 ", too big %" PRIu64
			", over budget %" PRIu64 ", duplicate %" PRIu64 ", abandoned %" PRIu64
			", bad data %" PRIu64 ", build id mismatch %" PRIu64 ", write errors %"
			PRIu64 "\n", as.elf.stored, as.elf.bytes, as.elf_dropped, as.elf.bad_id,
		as.elf.too_big, as.elf.over_budget, as.elf.duplicate, as.elf.abandoned,
		as.elf.bad_data, as.elf.mismatch, as.elf.io_errors);
}

#define WAIT_SLICE_NS (100ULL * 1000000ULL)
/* How often the main thread looks at the guest while the run goes on. */
#define POLL_SLICE_NS (20ULL * 1000000ULL)

/*
 * A panic without the guest's pvpanic driver (Debian loads none by itself): the guest's
 * panic_cpu, read every POLL_SLICE_NS (the panic path recorded meanwhile pushes older
 * branches out of the crash report). The panicking CPU spins with interrupts off, so its
 * vCPU is kicked to write the report.
 */
static void poll_panic(struct run_ctx *c)
{
	unsigned int i;
	int32_t cpu;

	if (!c->vm.tasks || !guest_tasks__panicking(c->vm.tasks, &cpu) ||
	    !vm__claim_panic(&c->vm))
		return;
	i = (uint32_t)cpu < c->vm.nr_vcpus ? (unsigned int)cpu : 0;
	pr_err("vcpu %u: the guest kernel panicked (its panic_cpu is %d)", i, (int)cpu);
	vm__post_panic(&c->vm, i);
}

/* Wait for the end of the run, a stop signal or the timeout; returns the exit status. */
static int wait_vm(struct run_ctx *c)
{
	int status, sig;

	for (;;) {
		status = vm__wait(&c->vm, POLL_SLICE_NS);
		if (status != -ETIMEDOUT)
			return status;
		/*
		 * A recorded process can end without another CR3 load on its vCPU (the kernel
		 * keeps the address space of an exited task loaded while kernel threads run):
		 * its vCPU is kicked, and its tracer stops recording.
		 */
		if (c->vm.tasks && c->gone &&
		    guest_tasks__reap(c->vm.tasks, clock__now_ns() - c->vm.start_ns, c->gone))
			for (unsigned int i = 0; i < c->vm.nr_vcpus; i++)
				if (c->gone[i])
					vcpu__kick(c->vm.vcpus[i]);
		poll_panic(c);
		sig = stop_signal;
		if (sig == SIGALRM) {
			pr_err("the guest did not exit within --timeout %u s; stopped",
			       c->opts.timeout_s);
			vm__request_stop(&c->vm, 1);
		} else if (sig) {
			pr_err("%s: stopping the guest", strsignal(sig));
			vm__request_stop(&c->vm, 128 + sig);
		}
	}
}

/* Join the vCPU threads of a run that is over. */
static void join_vcpus(struct run_ctx *c, unsigned int started)
{
	for (unsigned int i = 0; i < started; i++) {
		/*
		 * Kick again while waiting: a kick that lands just before a vCPU thread blocks
		 * (writing to a console nobody reads) does not interrupt that block, the next
		 * one does.
		 */
		while (vcpu__join_timed(c->vm.vcpus[i], WAIT_SLICE_NS) == -ETIMEDOUT)
			vm__request_stop(&c->vm, 1);
	}
}

static int run_vm(struct run_ctx *c)
{
	uint64_t t0 = clock__now_ns();
	unsigned int started = 0;
	sigset_t stop_set, old_set;
	int status, ret = 0;

	/* The vCPU threads inherit a mask without the stop signals: only the main thread
	 * catches them. */
	stop_signals(&stop_set);
	pthread_sigmask(SIG_BLOCK, &stop_set, &old_set);
	/* An operating system starts its APs itself: they wait in KVM_RUN for INIT/SIPI. */
	c->vm.nr_live = c->vm.pc ? c->vm.nr_vcpus : 1;
	for (unsigned int i = 0; i < c->vm.nr_vcpus; i++) {
		/* A bare guest with an in-kernel LAPIC (--guest-bts) may start its APs, too. */
		if (i && !c->vm.pc && c->bare_irqchip)
			ret = vcpu__start_ap(c->vm.vcpus[i]);
		else
			ret = vcpu__start(c->vm.vcpus[i], i == 0 || c->vm.pc);
		if (ret < 0) {
			pr_err("cannot start vCPU %u's thread: %s", i, strerror(-ret));
			break;
		}
		c->guest_ran = true;
		started++;
	}
	if (!ret && c->gdb) {
		ret = run_gdb__start(c->gdb);
		if (ret < 0)
			pr_err("cannot start the gdb thread: %s", strerror(-ret));
	}
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	test_hook__stop_at("running");
	if (ret < 0) {
		vm__request_stop(&c->vm, 1);
		status = 1;
	} else {
		status = wait_vm(c);
	}
	alarm(0); /* the run is over: the --timeout has nothing left to stop */
	join_vcpus(c, started);
	run_gdb__vm_ended(c->gdb, status);
	if (c->opts.stats)
		print_stats(c, clock__now_ns() - t0);
	return status;
}

int run__vm(const struct run_opts *o)
{
	struct sigaction old_actions[NR_STOP_SIGNALS];
	struct run_ctx *c;
	unsigned int done = 0;
	int status, ret;

	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_err("out of memory");
		return 1;
	}
	c->opts = *o;
	/* Refuse a bad ring size or trace directory before touching anything. */
	if (c->opts.trace_dir) {
		char err[512];

		if (trace__collector_check(&c->opts.collector, c->opts.vcpus, c->opts.trace_dir,
					   trace__host_available_memory(), err, sizeof(err)) < 0 ||
		    trace__check_dir(c->opts.trace_dir, err, sizeof(err)) < 0 ||
		    (c->opts.seal_key &&
		     sealer__check_key(c->opts.seal_key, err, sizeof(err)) < 0) ||
		    (c->opts.control &&
		     control__check_path(c->opts.control, err, sizeof(err)) < 0)) {
			pr_err("%s", err);
			free(c);
			return 2;
		}
	}
	ret = catch_stop_signals(c->opts.timeout_s, old_actions);
	if (ret < 0) {
		pr_err("cannot catch the stop signals: %s", strerror(-ret));
		free(c);
		return 1;
	}
	c->fail_status = 1;
	for (; done < NR_STAGES && !stop_signal; done++) {
		if (stages[done].init(c) < 0)
			break;
		test_hook__stop_at(stages[done].name);
	}
	if (stop_signal)
		status = stopped_in_startup(c);
	else if (done < NR_STAGES)
		status = c->fail_status;
	else
		status = run_vm(c);
	while (done--)
		stages[done].fini(c);
	release_stop_signals(old_actions);
	free(c);
	return status;
}
