// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-run.c - `vbts run`: its options and usage; the run itself is vmm/run.c's, or the QEMU
 * harness's with --harness.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "crash-report.h"
#include "crash-symbols.h"
#include "harness.h"
#include "log.h"
#include "opts.h"
#include "memory.h"
#include "run.h"
#include "trace.h"

#define DEFAULT_MEMORY_MIB 256

static const char usage[] =
	"usage: vbts run [--trace DIR [--seal KEY [--seal-interval SECONDS]]]\n"
	"                [--backend auto|kvm|step] [--cpl all|user|kernel]\n"
	"                [--ring RECORDS] [--mode wrap|stream] [--segment RECORDS]\n"
	"                [--disk-budget BYTES] [--on-full stall|drop]\n"
	"                [--vcpus N] [--memory MIB] [--console FILE] [--stats]\n"
	"                [--timeout SECONDS] [--harness] [--initrd FILE] [--append CMDLINE]\n"
	"                [--task NAME|PID]... [--system-map FILE] [--guest-bts]\n"
	"                [--control SOCKET] [--gdb [ADDR:]PORT [--gdb-wait]]\n"
	"                IMAGE | --kernel IMAGE\n"
	"\n"
	"Boot IMAGE in a KVM virtual machine and run it until it writes to the debug-exit port\n"
	"0xf4, powers off or resets. IMAGE is a multiboot v1 ELF32 image (booted as QEMU's -kernel\n"
	"boots it), a Linux bzImage (64-bit boot protocol) or an uncompressed vmlinux (PVH entry),\n"
	"a regular file no larger than guest memory.\n"
	"\n"
	"  --kernel IMAGE     the image (instead of the last argument)\n"
	"  --initrd FILE      Linux: the initial RAM disk, placed high in RAM below 4 GiB\n"
	"  --append CMDLINE   the command line (Linux default: console=ttyS0; multiboot: the\n"
	"                     image path, then CMDLINE)\n"
	"  --trace DIR        record taken branches into DIR (new or empty): vm.json, one\n"
	"                     vcpuN.ring per vCPU, events.jsonl from the agent channel\n"
	"  --seal KEY         seal DIR with the sealing key KEY (vbts keygen) as it is\n"
	"                     written: DIR/seal.log, checkpoints signed at every closed\n"
	"                     segment, crash report, --seal-interval and the end (vbts verify)\n"
	"  --seal-interval SECONDS  at most this long between two checkpoints (default 10)\n"
	"  --backend NAME     who records the branches: kvm (KVM with kvm-patches/ steps the\n"
	"                     guest in the kernel), step (single-step exits to the VMM), auto\n"
	"                     (default: kvm when this KVM has KVM_CAP_X86_BTS, else step)\n"
	"  --cpl FILTER       record branches at CPL all (default), user (CPL > 0) or\n"
	"                     kernel (CPL 0)\n"
	"  --task NAME|PID    Linux, --backend kvm: record only this process (a comm, cut to\n"
	"                     15 bytes, or the base name of its executable when it execs; or a\n"
	"                     pid), with its threads and what it execs into; every other task\n"
	"                     runs unstepped. Repeatable (at most 64)\n"
	"  --system-map FILE  Linux: the kernel's System.map, for finding the kernel in guest\n"
	"                     memory and for symbolizing kernel addresses (named in vm.json)\n"
	"  --guest-bts        the guest may use BTS itself: CPUID DS, DTES64 and DS-CPL,\n"
	"                     MISC_ENABLE without BTS_UNAVAILABLE, IA32_DEBUGCTL (TR, BTS, BTINT,\n"
	"                     BTS_OFF_OS, BTS_OFF_USR) and IA32_DS_AREA; the VMM steps the guest\n"
	"                     while it has TR and BTS set and stores each branch into its DS\n"
	"                     buffer, a threshold PMI through the LAPIC's LVTPC (step backend;\n"
	"                     records it cannot store are dropped and counted: --stats, and a\n"
	"                     guest-bts-drop record in DIR). With --backend kvm the kernel does\n"
	"                     it (kvm-patches/) and counts the records it drops (--stats, and\n"
	"                     guest-bts-drop records of reason kernel in DIR). Independent of\n"
	"                     --trace and --cpl\n"
	"  --ring RECORDS     records per ring file (default 65536; wrap mode keeps the newest)\n"
	"  --mode wrap|stream wrap (default): a ring file per vCPU, the newest records, a fixed\n"
	"                     size (the flight recorder); stream: every record, in segment\n"
	"                     files vcpuN.SSSSSSSS.vseg, each zstd-compressed when full\n"
	"  --segment RECORDS  stream: records per segment (default 65536, at most 4194304)\n"
	"  --disk-budget BYTES  stream: bytes of segment files of the trace (K, M, G; default\n"
	"                     4G or half the free space, at most the free space)\n"
	"  --on-full stall|drop  stream: when the budget or the disk is full, stall the traced\n"
	"                     vCPU until there is space (default), or drop records and count\n"
	"                     them in the trace (a lost record)\n"
	"  --vcpus N          vCPUs (default 1; the boot protocol starts vCPU 0; a Linux guest,\n"
	"                     or a multiboot guest with --guest-bts (it has LAPICs), starts the\n"
	"                     others itself through INIT/SIPI)\n"
	"  --memory MIB       guest RAM in MiB (default 256, at most 65536; RAM beyond 3 GiB\n"
	"                     continues at 4 GiB, as on a PC)\n"
	"  --console FILE     write the guest's serial output to FILE instead of stdout\n"
	"  --stats            print exits by reason, records, instructions stepped, wall time\n"
	"  --timeout SECONDS  end the run SECONDS after vbts started (exit status 1)\n"
	"  --harness          run inside the QEMU harness (tests/harness/run: QEMU TCG with\n"
	"                     nested SVM and Debian's KVM), for hosts whose KVM cannot step\n"
	"                     ring 3; DIR must then lie inside the source tree. With --backend\n"
	"                     kvm the harness loads kvm-patches/'s modules, built on first use\n"
	"                     (kvm-patches/build, cached in BUILD/kvm-patches); auto uses them\n"
	"                     once built. The harness waits --timeout plus 120 s (else its\n"
	"                     default, 600 s)\n"
	"  --on-crash exit|continue|pause\n"
	"                     what the VM does after a crash: a guest process killed by\n"
	"                     SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT (seen by\n"
	"                     introspection), a kernel panic (pvpanic) or a triple fault. exit\n"
	"                     ends the run (status 1; a Linux guest's triple fault: 0);\n"
	"                     continue lets the guest run on (a triple fault ends the run\n"
	"                     anyway); pause stops every vCPU where it is and waits, the trace\n"
	"                     open, until SIGINT, SIGTERM, SIGHUP or --timeout ends the run.\n"
	"                     Default: continue after a process crash, exit after a panic or\n"
	"                     a triple fault. Each crash writes a report into DIR: crash.json,\n"
	"                     then crash-1.json, ... (`vbts decode DIR --crash` prints them)\n"
	"  --control SOCKET   serve the control socket SOCKET (a new unix socket, mode 0600;\n"
	"                     a stale one is replaced): JSON lines with the verbs status,\n"
	"                     start, stop, config, get, count, drain, clear, freeze and\n"
	"                     subscribe (`vbts ctl`, doc/control-protocol.md); needs --trace\n"
	"  --gdb [ADDR:]PORT  serve gdb's remote protocol on PORT (loopback unless ADDR is\n"
	"                     given): vCPUs are threads, a connection stops the VM, gdb's\n"
	"                     continue, step, breakpoints, registers and memory act on it;\n"
	"                     with --trace, `record btrace bts` reads the vCPU's ring\n"
	"                     (doc/gdb.md)\n"
	"  --gdb-wait         with --gdb: the guest runs no instruction before gdb continues it\n"
	"  --crash-branches N the last N branches of the crashed task in a crash report\n"
	"                     (default 32, at most 4096)\n"
	"\n"
	"A Linux guest traced by --backend kvm has its processes resolved from guest memory\n"
	"through the kernel's BTF: events.jsonl gets a task event for each address space first\n"
	"loaded, an exec event when a process execs and an exit event when it is gone.\n"
	"\n"
	"Devices: 8250 UART at 0x3f8, debug-exit at 0xf4, agent channel at 0x700 (JSON lines to\n"
	"events.jsonl), pvpanic at 0x505. Linux guests also get KVM's interrupt controllers and\n"
	"PIT, ACPI tables (one LAPIC per vCPU; power off through \\_S5 at the PM1a control port\n"
	"0x604; pvpanic as device QEMU0001), the i8042 reset command on port 0x64, the UART's\n"
	"IRQ 4 and, when standard input is a terminal, console input.\n"
	"\n"
	"Exit status: the guest's debug-exit status ((value << 1) | 1); 0 when a Linux guest\n"
	"powers off or resets (i8042, ACPI reset or triple fault); 1 when the guest or the VMM\n"
	"fails (pvpanic, a multiboot guest's triple fault, a process crash with --on-crash exit,\n"
	"KVM error, timeout); 2 on bad input;\n"
	"128 + N when signal N (SIGINT, SIGTERM, SIGHUP) ended the run. A run ended before its\n"
	"guest started leaves DIR as it was; once the guest ran, DIR is closed and decodes.\n";

/* ---- options ---------------------------------------------------------------------------- */

/* Ends the one line of an option error. */
#define HELP_HINT "see 'vbts help run'"


static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "cpl", required_argument, NULL, 'c' },
		{ "backend", required_argument, NULL, 'b' },
		{ "ring", required_argument, NULL, 'r' },
		{ "mode", required_argument, NULL, 'M' },
		{ "segment", required_argument, NULL, 'G' },
		{ "disk-budget", required_argument, NULL, 'B' },
		{ "on-full", required_argument, NULL, 'F' },
		{ "vcpus", required_argument, NULL, 'v' },
		{ "memory", required_argument, NULL, 'm' },
		{ "console", required_argument, NULL, 'o' },
		{ "stats", no_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "debug", no_argument, NULL, 'd' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "append", required_argument, NULL, 'a' },
		{ "task", required_argument, NULL, 'p' },
		{ "system-map", required_argument, NULL, 'S' },
		{ "guest-bts", no_argument, NULL, 'g' },
		{ "on-crash", required_argument, NULL, 'C' },
		{ "crash-branches", required_argument, NULL, 'N' },
		{ "control", required_argument, NULL, 'X' },
		{ "seal", required_argument, NULL, 'L' },
		{ "seal-interval", required_argument, NULL, 'I' },
		{ "gdb", required_argument, NULL, 'D' },
		{ "gdb-wait", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int opt;

	memset(o, 0, sizeof(*o));
	trace__collector_defaults(&o->collector);
	o->vcpus = 1;
	o->memory_mib = DEFAULT_MEMORY_MIB;
	o->crash_branches = CRASH_REPORT_BRANCHES_DEFAULT;
	optind = 1;
	opterr = 0; /* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, "+:", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			o->trace_dir = optarg;
			break;
		case 'c':
			if (!strcmp(optarg, "all")) {
				o->cpl = VBTS_CPL_ALL;
			} else if (!strcmp(optarg, "user")) {
				o->cpl = VBTS_CPL_USER;
			} else if (!strcmp(optarg, "kernel")) {
				o->cpl = VBTS_CPL_KERNEL;
			} else {
				pr_err("--cpl %s: expected all, user or kernel", optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			if (!strcmp(optarg, "auto")) {
				o->backend = RUN_BACKEND_AUTO;
			} else if (!strcmp(optarg, "kvm")) {
				o->backend = RUN_BACKEND_KVM;
			} else if (!strcmp(optarg, "step")) {
				o->backend = RUN_BACKEND_STEP;
			} else {
				pr_err("--backend %s: expected auto, kvm or step", optarg);
				return -EINVAL;
			}
			break;
		case 'r':
			/* 0 is refused by the budget check with its own message. */
			if (opts__u64("--ring", optarg, 0, UINT64_MAX, 0, &o->collector.ring_records))
				return -EINVAL;
			break;
		case 'M':
		case 'G':
		case 'B':
		case 'F':
			if (opts__collector(opt, optarg, &o->collector))
				return -EINVAL;
			break;
		case 'v':
			if (opts__u64("--vcpus", optarg, 1, 256, 0, &v))
				return -EINVAL;
			o->vcpus = v;
			break;
		case 'm':
			if (opts__u64("--memory", optarg, GUEST_MEMORY_MIN >> 20,
				      GUEST_MEMORY_MAX >> 20, 0, &v))
				return -EINVAL;
			o->memory_mib = v;
			break;
		case 'o':
			o->console = optarg;
			break;
		case 's':
			o->stats = true;
			break;
		case 'T':
			if (opts__u64("--timeout", optarg, 1, 1000000, 0, &v))
				return -EINVAL;
			o->timeout_s = v;
			break;
		case 'd':
			log__debug = true;
			break;
		case 'k':
			o->image = optarg;
			break;
		case 'i':
			o->initrd = optarg;
			break;
		case 'a':
			o->append = optarg;
			break;
		case 'p':
			if (o->nr_tasks == GUEST_TASKS_MAX_SELECT) {
				pr_err("--task given more than %u times", GUEST_TASKS_MAX_SELECT);
				return -EINVAL;
			}
			o->tasks[o->nr_tasks++] = optarg;
			break;
		case 'S':
			o->system_map = optarg;
			break;
		case 'g':
			o->guest_bts = true;
			break;
		case 'C':
			if (!strcmp(optarg, "exit")) {
				o->on_crash = CRASH_ACTION_EXIT;
			} else if (!strcmp(optarg, "continue")) {
				o->on_crash = CRASH_ACTION_CONTINUE;
			} else if (!strcmp(optarg, "pause")) {
				o->on_crash = CRASH_ACTION_PAUSE;
			} else {
				pr_err("--on-crash %s: expected exit, continue or pause", optarg);
				return -EINVAL;
			}
			break;
		case 'L':
			o->seal_key = optarg;
			break;
		case 'I':
			if (opts__u64("--seal-interval", optarg, 1, 86400, 0, &v))
				return -EINVAL;
			o->seal_interval_s = v;
			break;
		case 'X':
			o->control = optarg;
			break;
		case 'D':
			o->gdb = optarg;
			break;
		case 'W':
			o->gdb_wait = true;
			break;
		case 'N':
			if (opts__u64("--crash-branches", optarg, 0, CRASH_REPORT_BRANCHES_MAX, 0, &v))
				return -EINVAL;
			o->crash_branches = v;
			break;
		default:
			command__option_error("run", opt, optopt, argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (o->image && optind != argc) {
		pr_err("--kernel %s and the image %s: give one of them; %s", o->image, argv[optind],
		       HELP_HINT);
		return -EINVAL;
	}
	if (!o->image && optind == argc) {
		pr_err("no IMAGE given; %s", HELP_HINT);
		return -EINVAL;
	}
	if (!o->image && optind < argc - 1 && argv[optind + 1][0] == '-') {
		pr_err("'%s' after IMAGE %s: options go before IMAGE; %s", argv[optind + 1],
		       argv[optind], HELP_HINT);
		return -EINVAL;
	}
	if (!o->image && optind < argc - 1) {
		pr_err("one IMAGE expected, got '%s' and '%s'; %s", argv[optind], argv[optind + 1],
		       HELP_HINT);
		return -EINVAL;
	}
	if (!o->image)
		o->image = argv[optind];
	if (o->control && !o->trace_dir) {
		pr_err("--control serves a trace's rings: give --trace DIR too; %s", HELP_HINT);
		return -EINVAL;
	}
	if (o->gdb_wait && !o->gdb) {
		pr_err("--gdb-wait waits for gdb: give --gdb [ADDR:]PORT too; %s", HELP_HINT);
		return -EINVAL;
	}
	if (o->gdb && o->backend == RUN_BACKEND_KVM) {
		pr_err("--gdb with --backend kvm: the series' KVM refuses breakpoints and steps while "
		       "its tracer steps (doc/gdb.md, Not served); use --backend step, or --trace "
		       "and vbts gdb DIR afterwards; %s", HELP_HINT);
		return -EINVAL;
	}
	if ((o->seal_key || o->seal_interval_s) && !o->trace_dir) {
		pr_err("--seal seals a trace directory: give --trace DIR too; %s", HELP_HINT);
		return -EINVAL;
	}
	if (o->seal_interval_s && !o->seal_key) {
		pr_err("--seal-interval is of sealing: give --seal KEY too; %s", HELP_HINT);
		return -EINVAL;
	}
	if (o->nr_tasks && !o->trace_dir) {
		pr_err("--task selects what is recorded: give --trace DIR too; %s", HELP_HINT);
		return -EINVAL;
	}
	return 0;
}
static int run(int argc, char **argv)
{
	struct run_opts opts = { 0 };
	enum harness_kvm kvm;
	bool harness;

	harness = harness__strip(&argc, argv);
	if (parse_opts(argc, argv, &opts) < 0)
		return 2;
	if (harness) {
		if (opts.trace_dir && !harness__path_inside(opts.trace_dir)) {
			pr_err("--harness: trace directory %s is outside the source tree %s and "
			       "would not come back", opts.trace_dir, VBTS_SOURCE_ROOT);
			return 2;
		}
		/* --backend kvm needs the series' modules; auto uses them once built. */
		kvm = opts.backend == RUN_BACKEND_KVM  ? HARNESS_KVM_SERIES :
		      opts.backend == RUN_BACKEND_AUTO ? HARNESS_KVM_SERIES_CACHED :
							 HARNESS_KVM_STOCK;
		return harness__run(argv, kvm, opts.timeout_s);
	}
	/* A crash report of the run names its branches' functions and lines. */
	crash_report__set_annotate(crash_symbols__annotate);
	return run__vm(&opts);
}

const struct vbts_command cmd_run = {
	.name = "run",
	.summary = "boot a guest image in a VM, optionally recording its branches",
	.usage = usage,
	.fn = run,
};
