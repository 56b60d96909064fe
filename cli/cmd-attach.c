// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-attach.c - `vbts attach`: trace a KVM guest that another VMM runs (QEMU, a libvirt
 * domain), without any change to that VMM, into the trace directory format of `vbts run`.
 *
 * Order: everything that can refuse (options, trace directory, KVM's attach support, the
 * target process) comes before anything is started or created. With `-- QEMU ARGS` QEMU is
 * started paused (-S) with a QMP socket of our own, the collector attaches, then QMP `cont`
 * starts the guest, so the trace starts at its first instruction.
 *
 * The main thread waits in one poll() on: a signalfd of the stop signals (and SIGCHLD for a
 * QEMU we started), the collector's fd (watermark, VM destroyed), a pidfd of the VMM (it
 * exited), QMP (events: GUEST_PANICKED freezes the rings), libvirt's crash notification and
 * the guest agent's socket (--agent: agent-socket.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vbts/ring-format.h>
#include <vbts/segment-format.h>

#include "agent-socket.h"
#include "collector.h"
#include "commands.h"
#include "crash-report.h"
#include "crash-symbols.h"
#include "escape.h"
#include "libvirt-domain.h"
#include "log.h"
#include "opts.h"
#include "qmp.h"
#include "sealer.h"
#include "seg-rotate.h"
#include "trace-base.h"
#include "trace.h"
#include "vmm-fds.h"

#define QMP_TIMEOUT_MS 10000
/* How long QEMU may take to create its QMP socket (TCG in the harness is slow to start). */
#define QEMU_START_TIMEOUT_MS 60000
/* Records are copied at least this often, watermark or not. */
#define DRAIN_INTERVAL_MS 100
/* A QEMU we started gets this long to exit after SIGTERM, then SIGKILL. */
#define QEMU_STOP_TIMEOUT_MS 10000
#define ERR_MAX 512

static const char usage[] =
	"usage: vbts attach (--trace DIR | --trace-base BASE [--keep-runs N]\n"
	"                   [--keep-bytes BYTES]) [--seal KEY [--seal-interval SECONDS]]\n"
	"                   [--cpl all|user|kernel] [--task CR3]... [--ring RECORDS]\n"
	"                   [--mode wrap|stream] [--segment RECORDS]\n"
	"                   [--disk-budget BYTES] [--on-full stall|drop|rotate]\n"
	"                   [--agent SOCKET] [--start-at NAME]... [--kernel IMAGE]\n"
	"                   (--pid PID | --domain NAME [--connect URI] [--start] |\n"
	"                    -- QEMU [ARGS...])\n"
	"\n"
	"Record the taken branches of a KVM guest that another process runs, through the patched\n"
	"KVM of kvm-patches/ (KVM_CAP_X86_BTS_ATTACH): the VMM is not changed, its vCPUs never\n"
	"exit to it for tracing. The trace directory is the one `vbts run --trace` writes; vm.json\n"
	"says \"attached\" with the VMM's pid. Attaching needs root, or ptrace access to the VMM and\n"
	"CAP_PERFMON; one collector per VM.\n"
	"\n"
	"  --pid PID          a running VMM (QEMU): its VM and vCPUs are found in /proc/PID/fd\n"
	"  --domain NAME      a libvirt domain (its QEMU found through libvirt's API); when\n"
	"                     libvirt reports the domain crashed (pvpanic) the rings are frozen\n"
	"  --connect URI      libvirt's URI (default: libvirt's own default)\n"
	"  --start            with --domain: start the defined, inactive domain paused through\n"
	"                     libvirt, attach, then resume it: the trace starts at the guest's\n"
	"                     first instruction (its firmware's). The domain is destroyed when\n"
	"                     attaching fails; a stop signal ends the trace, the domain runs on\n"
	"  -- QEMU ARGS...    start QEMU (e.g. qemu-system-x86_64 -enable-kvm -kernel IMAGE): vbts\n"
	"                     adds -S unless ARGS have it and a QMP socket of its own (-qmp\n"
	"                     unix:...; QEMU accepts several monitors), attaches, then starts the\n"
	"                     guest with QMP cont (with -S in ARGS the guest is left paused for\n"
	"                     whoever gave it). A stop signal ends the trace, then QEMU\n"
	"                     (SIGTERM)\n"
	"  --trace DIR        the trace directory (new or empty)\n"
	"  --trace-base BASE  a fresh trace directory per start: BASE/YYYYMMDDTHHMMSSZ-PID\n"
	"                     (UTC), made once the VM is found; BASE is created when missing\n"
	"  --keep-runs N      with --trace-base: before a start, remove the oldest runs in BASE\n"
	"                     (each whole: its segments and crash reports together) so that at\n"
	"                     most N are kept, the new one included\n"
	"  --keep-bytes BYTES with --trace-base: ... so that the runs in BASE and the new run's\n"
	"                     disk budget (stream mode) hold at most BYTES (K, M, G)\n"
	"  --seal KEY         seal DIR with the sealing key KEY (vbts keygen) as it is\n"
	"                     written, as vbts run --seal does (vbts verify)\n"
	"  --seal-interval SECONDS  at most this long between two checkpoints (default 10)\n"
	"  --cpl FILTER       record branches at CPL all (default), user or kernel\n"
	"  --task CR3         record only the guest address space with this CR3 (hex; PCID bits\n"
	"                     ignored). Repeatable (at most 64)\n"
	"  --ring RECORDS     records per vCPU ring file (default 65536)\n"
	"  --mode wrap|stream wrap (default): a ring file per vCPU, the newest records; stream:\n"
	"                     every record, in segment files vcpuN.SSSSSSSS.vseg, each\n"
	"                     zstd-compressed when full, as vbts run --mode stream\n"
	"  --segment RECORDS  stream: records per segment (default 65536, at most 4194304)\n"
	"  --disk-budget BYTES  stream: bytes of segment files of the trace (K, M, G; default\n"
	"                     4G or half the free space, at most the free space)\n"
	"  --on-full stall|drop|rotate  stream: when the budget or the disk is full, stop\n"
	"                     copying (the kernel's rings then count what they lose) until\n"
	"                     there is space or a stop signal comes (default), drop records\n"
	"                     and count them in the trace (a lost record), or remove the\n"
	"                     oldest closed segments, whichever vCPU's, and go on (the newest\n"
	"                     4 of each vCPU stay; not with --seal)\n"
	"  --agent SOCKET     the guest agent's virtio-serial port, through QEMU's chardev socket\n"
	"                     (-chardev socket,id=a,path=SOCKET,server=on,wait=off -device\n"
	"                     virtio-serial -device virtserialport,chardev=a,name=org.vbts.agent.0):\n"
	"                     its messages go to DIR/events.jsonl, its ELF files to the build-ID\n"
	"                     store DIR/debuginfod, as `vbts run` stores its agent channel\n"
	"  --start-at NAME    record branches from the first time a process of this name (its\n"
	"                     comm or executable's base name) is seen loaded: until then the\n"
	"                     rings record address-space loads only and the guest runs\n"
	"                     unstepped (a Linux guest; its first instructions may be missed).\n"
	"                     Repeatable (at most 16). --cpl user alone waits for any process\n"
	"  --kernel IMAGE     the kernel the guest runs (a bzImage, or a vmlinux with BTF), for a\n"
	"                     guest booted from its disk (a copy of its /boot/vmlinuz-*); the\n"
	"                     default is QEMU's -kernel\n"
	"\n"
	"A Linux guest's processes are named in events.jsonl through its memory, read through the\n"
	"tracer (kvm-patches/ patch 21), with the kernel's BTF from its image (--kernel, or QEMU's\n"
	"-kernel). When kernel code is recorded, the kernel's symbols go to DIR/kallsyms.map.\n"
	"\n"
	"The trace ends when the VM ends (QEMU exits), or on SIGINT, SIGTERM or SIGHUP: the rings\n"
	"are disabled and copied, the VM keeps running (with -- QEMU, QEMU is then stopped). A\n"
	"collector killed outright leaves the VM running too, and its ring files readable up to\n"
	"their last published record.\n"
	"A crash that QEMU (GUEST_PANICKED) or libvirt (its crash event) reports freezes the\n"
	"rings and writes DIR/crash.json, as vbts run does (vbts decode DIR --crash).\n"
	"Exit status: 0 when the VM ended (with -- QEMU: QEMU's own exit status), 128 + N when\n"
	"signal N ended the trace, 1 when tracing failed or libvirt could not be reached (a\n"
	"retry may succeed), 2 on bad input, when this host's KVM has no attach support, or when\n"
	"the target is not a KVM VMM or cannot be traced (no such domain, one that does not run).\n";

struct attach_opts {
	const char *trace_dir;
	const char *trace_base;
	struct trace_base_limits keep;
	char *run_dir;          /* --trace-base: the run's directory, malloc'd */
	bool rotate;            /* --on-full rotate */
	const char *seal_key;
	unsigned int seal_interval_s;
	int pid;
	const char *domain;
	const char *connect;
	bool start;
	const char *agent;
	const char *kernel;
	char **qemu_argv;
	int qemu_argc;
	struct collector_config cc;
};

struct attach_ctx {
	struct attach_opts o;
	int kvm_fd;
	int sig_fd;
	int pidfd;
	pid_t child;           /* the QEMU we started, 0 otherwise */
	int child_status;      /* its wait status once reaped, -1 before */
	char *tmpdir;          /* holds our QMP socket */
	char *qmp_path;
	struct qmp *qmp;
	struct libvirt_domain *dom;
	bool dom_paused;       /* --start: the domain we started has not been resumed */
	struct vmm_fds fds;
	struct collector *col;
	struct sealer *sealer;  /* --seal: seals the trace directory as it is written */
	struct agent_socket *agent;
	char *image;
	int stop_sig;
	bool frozen;
	uint64_t rotated;       /* --on-full rotate: segment files removed */
	bool rotate_stuck;      /* ... and said that none could be */
};

/* ---- options ---------------------------------------------------------------------------- */


static int parse_opts(int argc, char **argv, struct attach_opts *o)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "pid", required_argument, NULL, 'p' },
		{ "domain", required_argument, NULL, 'd' },
		{ "connect", required_argument, NULL, 'c' },
		{ "start", no_argument, NULL, 's' },
		{ "cpl", required_argument, NULL, 'l' },
		{ "task", required_argument, NULL, 'k' },
		{ "ring", required_argument, NULL, 'r' },
		{ "agent", required_argument, NULL, 'a' },
		{ "start-at", required_argument, NULL, 'A' },
		{ "kernel", required_argument, NULL, 'K' },
		{ "seal", required_argument, NULL, 'L' },
		{ "seal-interval", required_argument, NULL, 'I' },
		{ "trace-base", required_argument, NULL, 'b' },
		{ "keep-runs", required_argument, NULL, 'n' },
		{ "keep-bytes", required_argument, NULL, 'y' },
		{ "mode", required_argument, NULL, 'M' },
		{ "segment", required_argument, NULL, 'G' },
		{ "disk-budget", required_argument, NULL, 'B' },
		{ "on-full", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int opt, modes;

	o->cc.ring_records = TRACE_DEFAULT_RING_RECORDS;
	trace__collector_defaults(&o->cc.collector);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+:", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			o->trace_dir = optarg;
			break;
		case 'b':
			o->trace_base = optarg;
			break;
		case 'n':
			if (opts__u64("--keep-runs", optarg, 1, UINT32_MAX, 10, &v))
				return -EINVAL;
			o->keep.keep_runs = v;
			break;
		case 'y':
			if (opts__size("--keep-bytes", optarg, &o->keep.keep_bytes))
				return -EINVAL;
			break;
		case 'M':
		case 'G':
		case 'B':
			if (opts__collector(opt, optarg, &o->cc.collector))
				return -EINVAL;
			break;
		case 'F':
			if (!strcmp(optarg, "stall")) {
				o->cc.collector.on_full = TRACE_ON_FULL_STALL;
			} else if (!strcmp(optarg, "drop")) {
				o->cc.collector.on_full = TRACE_ON_FULL_DROP;
			} else if (!strcmp(optarg, "rotate")) {
				/* the writer stalls; stall_stop() makes room */
				o->cc.collector.on_full = TRACE_ON_FULL_STALL;
				o->rotate = true;
			} else {
				pr_err("--on-full %s: expected stall, drop or rotate", optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (opts__u64("--pid", optarg, 1, INT_MAX, 10, &v))
				return -EINVAL;
			o->pid = (int)v;
			break;
		case 'd':
			o->domain = optarg;
			break;
		case 'L':
			o->seal_key = optarg;
			break;
		case 'I':
			if (opts__u64("--seal-interval", optarg, 1, 86400, 10, &v))
				return -EINVAL;
			o->seal_interval_s = v;
			break;
		case 'c':
			o->connect = optarg;
			break;
		case 's':
			o->start = true;
			break;
		case 'l':
			if (!strcmp(optarg, "all")) {
				o->cc.cpl = VBTS_CPL_ALL;
			} else if (!strcmp(optarg, "user")) {
				o->cc.cpl = VBTS_CPL_USER;
			} else if (!strcmp(optarg, "kernel")) {
				o->cc.cpl = VBTS_CPL_KERNEL;
			} else {
				pr_err("--cpl %s: expected all, user or kernel", optarg);
				return -EINVAL;
			}
			break;
		case 'k':
			if (o->cc.nr_cr3 == COLLECTOR_MAX_CR3) {
				pr_err("--task given more than %u times", COLLECTOR_MAX_CR3);
				return -EINVAL;
			}
			if (opts__u64("--task", optarg, 0, (1ULL << 52) - 1, 16, &v))
				return -EINVAL;
			o->cc.cr3[o->cc.nr_cr3++] = v & VBTS_CR3_MASK;
			break;
		case 'r':
			if (opts__u64("--ring", optarg, 1, UINT32_MAX, 0, &v))
				return -EINVAL;
			o->cc.ring_records = v;
			break;
		case 'a':
			o->agent = optarg;
			break;
		case 'A':
			if (o->cc.nr_start_at == COLLECTOR_MAX_START_AT) {
				pr_err("--start-at given more than %u times", COLLECTOR_MAX_START_AT);
				return -EINVAL;
			}
			if (!*optarg || strlen(optarg) > 255 || strchr(optarg, '/')) {
				pr_err("--start-at: expected a process name (1 to 255 bytes, no '/')");
				return -EINVAL;
			}
			o->cc.start_at[o->cc.nr_start_at++] = optarg;
			break;
		case 'K':
			o->kernel = optarg;
			break;
		default:
			command__option_error("attach", opt, optopt, argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc && !strcmp(argv[optind - 1], "--")) {
		o->qemu_argv = argv + optind;
		o->qemu_argc = argc - optind;
	} else if (optind < argc) {
		pr_err("unexpected argument '%s' (QEMU's command comes after --); see 'vbts help "
		       "attach'", argv[optind]);
		return -EINVAL;
	}
	modes = !!o->pid + !!o->domain + !!o->qemu_argv;
	if (modes != 1) {
		pr_err("%s: give one of --pid PID, --domain NAME or -- QEMU ARGS; see 'vbts help "
		       "attach'", modes ? "more than one VM" : "no VM");
		return -EINVAL;
	}
	if (o->connect && !o->domain) {
		pr_err("--connect is for --domain");
		return -EINVAL;
	}
	if (o->start && !o->domain) {
		pr_err("--start is for --domain (-- QEMU starts QEMU paused itself)");
		return -EINVAL;
	}
	if (!o->trace_dir == !o->trace_base) {
		pr_err("%s; see 'vbts help attach'", o->trace_dir ?
		       "--trace DIR and --trace-base BASE: give one" :
		       "--trace DIR is missing (or --trace-base BASE)");
		return -EINVAL;
	}
	if ((o->keep.keep_runs || o->keep.keep_bytes) && !o->trace_base) {
		pr_err("--keep-runs and --keep-bytes are for --trace-base");
		return -EINVAL;
	}
	if (o->cc.collector.mode != TRACE_MODE_STREAM &&
	    (o->cc.collector.segment_records || o->cc.collector.disk_budget ||
	     o->cc.collector.on_full != TRACE_ON_FULL_STALL || o->rotate)) {
		pr_err("--segment, --disk-budget and --on-full are for --mode stream");
		return -EINVAL;
	}
	if (o->rotate && o->seal_key) {
		pr_err("--on-full rotate removes files a seal covers: not with --seal");
		return -EINVAL;
	}
	if (o->seal_interval_s && !o->seal_key) {
		pr_err("--seal-interval is of sealing: give --seal KEY too; see 'vbts help attach'");
		return -EINVAL;
	}
	o->cc.trace_dir = o->trace_dir;
	o->cc.via = o->pid ? "pid" : o->domain ? "libvirt" : "qemu";
	o->cc.domain = o->domain;
	return 0;
}

/* ---- the target ------------------------------------------------------------------------- */

static int pidfd_open_pid(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/*
 * QEMU's -kernel argument from an argument vector, NULL when none. QEMU takes "-kernel X",
 * "--kernel X", "-kernel=X" is not QEMU's syntax.
 */
static const char *kernel_arg(char *const *argv, int argc)
{
	for (int i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-kernel") || !strcmp(argv[i], "--kernel"))
			return argv[i + 1];
	return NULL;
}

/* The -kernel of a running process, from /proc/PID/cmdline (bounded); malloc'd or NULL. */
static char *proc_kernel_arg(int pid)
{
	enum { MAX_CMDLINE = 1 << 20, MAX_ARGS = 4096 };
	char path[64], *buf, **argv, *p;
	const char *k;
	ssize_t n, len = 0;
	int fd, argc = 0;
	char *ret = NULL;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(MAX_CMDLINE + 1);
	argv = calloc(MAX_ARGS, sizeof(*argv));
	if (!buf || !argv)
		goto out;
	while (len < MAX_CMDLINE && (n = read(fd, buf + len, MAX_CMDLINE - len)) > 0)
		len += n;
	buf[len] = '\0';
	for (p = buf; p < buf + len && argc < MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	k = kernel_arg(argv, argc);
	if (k)
		ret = realpath(k, NULL);
out:
	close(fd);
	free(argv);
	free(buf);
	return ret;
}

static int find_vm(struct attach_ctx *c, int pid)
{
	char err[ERR_MAX];
	int ret;

	ret = vmm_fds__scan("/proc", pid, &c->fds, err, sizeof(err));
	if (ret < 0) {
		pr_err("%s", err);
		return ret;
	}
	c->pidfd = pidfd_open_pid(pid);
	if (c->pidfd < 0) {
		ret = -errno;
		pr_err("pidfd_open of process %d: %s", pid, strerror(errno));
		return ret;
	}
	if (!c->image)
		c->image = proc_kernel_arg(pid);
	return 0;
}

static bool has_arg(char *const *argv, int argc, const char *arg)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], arg))
			return true;
	return false;
}

/* Start QEMU paused with our QMP socket, and connect to it. 0 or -errno (reported). */
static int start_qemu(struct attach_ctx *c)
{
	const char *tmp = getenv("TMPDIR");
	char err[ERR_MAX], chardev[PATH_MAX + 64], **argv;
	bool paused = has_arg(c->o.qemu_argv, c->o.qemu_argc, "-S");
	const char *k = kernel_arg(c->o.qemu_argv, c->o.qemu_argc);
	struct timespec slice = { 0, 20 * 1000000 };
	sigset_t empty;
	int n = 0, status, waited = 0;

	if (asprintf(&c->tmpdir, "%s/vbts-attach-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) {
		c->tmpdir = NULL;
		return -ENOMEM;
	}
	if (!mkdtemp(c->tmpdir)) {
		pr_err("cannot create a directory for QEMU's QMP socket: %s", strerror(errno));
		free(c->tmpdir);
		c->tmpdir = NULL;
		return -errno;
	}
	if (asprintf(&c->qmp_path, "%s/qmp.sock", c->tmpdir) < 0) {
		c->qmp_path = NULL;
		return -ENOMEM;
	}
	if (k && !c->image)
		c->image = realpath(k, NULL);
	snprintf(chardev, sizeof(chardev), "unix:%s,server=on,wait=off", c->qmp_path);
	argv = calloc((size_t)c->o.qemu_argc + 4, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (int i = 0; i < c->o.qemu_argc; i++)
		argv[n++] = c->o.qemu_argv[i];
	if (!paused)
		argv[n++] = "-S";
	argv[n++] = "-qmp";
	argv[n++] = chardev;
	argv[n] = NULL;
	c->child = fork();
	if (c->child < 0) {
		free(argv);
		pr_err("fork: %s", strerror(errno));
		c->child = 0;
		return -errno;
	}
	if (c->child == 0) {
		sigemptyset(&empty);
		sigprocmask(SIG_SETMASK, &empty, NULL);
		execvp(argv[0], argv);
		fprintf(stderr, "vbts: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	free(argv);
	/* QEMU creates the socket early (wait=off): connect as soon as it is there. */
	for (;;) {
		c->qmp = qmp__connect(c->qmp_path, QMP_TIMEOUT_MS, err, sizeof(err));
		if (c->qmp)
			break;
		if (waitpid(c->child, &status, WNOHANG) == c->child) {
			c->child_status = status;
			c->child = 0;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return -ENOENT; /* the child said why */
			pr_err("QEMU exited (status %d) before it opened its QMP socket",
			       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return -ECHILD;
		}
		if (waited >= QEMU_START_TIMEOUT_MS) {
			pr_err("QEMU did not open its QMP socket within %d s",
			       QEMU_START_TIMEOUT_MS / 1000);
			return -ETIMEDOUT;
		}
		nanosleep(&slice, NULL);
		waited += 20;
	}
	if (qmp__handshake(c->qmp, err, sizeof(err)) < 0) {
		pr_err("%s", err);
		return -EPROTO;
	}
	return 0;
}

/* Stop a QEMU we started: SIGTERM, then SIGKILL after QEMU_STOP_TIMEOUT_MS. */
static void stop_qemu(struct attach_ctx *c)
{
	struct timespec slice = { 0, 20 * 1000000 };
	int status, waited = 0;

	if (!c->child)
		return;
	kill(c->child, SIGTERM);
	while (waitpid(c->child, &status, WNOHANG) != c->child) {
		if (waited >= QEMU_STOP_TIMEOUT_MS) {
			kill(c->child, SIGKILL);
			waitpid(c->child, &status, 0);
			break;
		}
		nanosleep(&slice, NULL);
		waited += 20;
	}
	c->child_status = status;
	c->child = 0;
}

/* ---- the collector's loop ---------------------------------------------------------------- */

/*
 * A crash QEMU or libvirt reported: the rings frozen, then crash.json from them. The first
 * crash freezes the rings for good, so a run has one report: a later crash event (libvirt's
 * after QEMU's for the same panic, or another) has no branches of its own to report.
 */
static void freeze(struct attach_ctx *c, const char *why)
{
	char name[PATH_MAX * 4];
	unsigned int vcpu;
	int ret;

	if (c->frozen)
		return;
	pr_info("%s: rings frozen", why);
	collector__freeze(c->col, VBTS_FREEZE_PANIC);
	c->frozen = true;
	ret = collector__crash_report(c->col, 0, &vcpu);
	if (ret < 0)
		pr_err("cannot write the crash report: %s", strerror(-ret));
	else
		pr_info("crash report of vCPU %u in %s/crash.json", vcpu,
			escape__str(name, sizeof(name), c->o.trace_dir));
}

/* One look at QMP's events; false once QMP is closed. */
static bool qmp_events(struct attach_ctx *c)
{
	int ev;

	for (;;) {
		ev = qmp__wait_event(c->qmp, 0);
		if (ev == -ETIMEDOUT)
			return true;
		if (ev < 0)
			return false;
		if (ev & QMP_EV_GUEST_PANICKED)
			freeze(c, "QEMU reports a guest panic");
	}
}

/* Wait until the VM ends or a stop signal; returns when the trace is to be closed. */
static void collect(struct attach_ctx *c)
{
	enum { P_SIG, P_COL, P_PID, P_QMP, P_DOM, P_AGENT, P_N };
	struct pollfd pfd[P_N];
	struct signalfd_siginfo si;
	int status;

	for (;;) {
		if (c->stop_sig || c->child_status >= 0)
			return; /* seen while a full budget stalled the copy */
		for (int i = 0; i < P_N; i++)
			pfd[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
		pfd[P_SIG].fd = c->sig_fd;
		pfd[P_COL].fd = collector__fd(c->col);
		pfd[P_PID].fd = c->pidfd;
		pfd[P_QMP].fd = c->qmp ? qmp__fd(c->qmp) : -1;
		pfd[P_DOM].fd = c->dom ? libvirt_domain__crash_fd(c->dom) : -1;
		pfd[P_AGENT].fd = c->agent ? agent_socket__fd(c->agent) : -1;
		if (poll(pfd, P_N, DRAIN_INTERVAL_MS) < 0 && errno != EINTR) {
			pr_err("poll: %s", strerror(errno));
			return;
		}
		collector__drain(c->col);
		if (pfd[P_QMP].revents & (POLLIN | POLLHUP) && !qmp_events(c)) {
			qmp__close(c->qmp);
			c->qmp = NULL;
		}
		if (pfd[P_AGENT].revents)
			agent_socket__read(c->agent);
		if (pfd[P_DOM].revents & POLLIN && libvirt_domain__crashed(c->dom))
			freeze(c, "libvirt reports the domain crashed");
		/*
		 * What QEMU said before it exited (a GUEST_PANICKED, the agent's last lines) is
		 * read above, before its exit ends the loop.
		 */
		if (pfd[P_SIG].revents & POLLIN &&
		    read(c->sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				if (c->child && waitpid(c->child, &status, WNOHANG) == c->child) {
					c->child_status = status;
					c->child = 0;
					return;
				}
			} else {
				c->stop_sig = (int)si.ssi_signo;
				pr_info("%s: ending the trace", strsignal(c->stop_sig));
				return;
			}
		}
		if (pfd[P_PID].revents & POLLIN)
			return; /* the VMM exited */
		if (pfd[P_COL].revents & (POLLHUP | POLLERR))
			return; /* the VM was destroyed */
	}
}

/* ---- the command -------------------------------------------------------------------------- */

static int block_signals(struct attach_ctx *c, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -errno;
	c->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (c->sig_fd < 0) {
		sigprocmask(SIG_SETMASK, old, NULL);
		return -errno;
	}
	return 0;
}

/*
 * Stream mode, on-full stall: called while the collector waits for space; a stop signal or
 * the VMM's exit ends the wait (what is not copied then is counted as lost).
 */
static bool stall_stop(void *ctx)
{
	struct attach_ctx *c = ctx;
	struct pollfd pfd[2] = { { .fd = c->sig_fd, .events = POLLIN },
				 { .fd = c->pidfd, .events = POLLIN } };
	struct signalfd_siginfo si;
	int status;

	if (c->stop_sig || c->child_status >= 0)
		return true;
	if (poll(pfd, 2, 0) <= 0)
		return false;
	if (pfd[0].revents & POLLIN && read(c->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			c->stop_sig = (int)si.ssi_signo;
			pr_info("%s: ending the trace", strsignal(c->stop_sig));
			return true;
		}
		if (c->child && waitpid(c->child, &status, WNOHANG) == c->child) {
			c->child_status = status;
			c->child = 0;
			return true;
		}
	}
	return pfd[1].revents & POLLIN;
}

/*
 * --on-full rotate: the budget is full and the writer waits (stall mode): remove the oldest
 * closed segments, two raw segments' worth per vCPU, which the writer takes back from the
 * budget at its next attempt. False: go on waiting.
 */
static bool rotate_stop(void *ctx)
{
	struct attach_ctx *c = ctx;
	uint64_t records = c->o.cc.collector.segment_records ?
				   c->o.cc.collector.segment_records :
				   TRACE_DEFAULT_SEGMENT_RECORDS;
	uint64_t want = 2 * (VBTS_SEG_HEADER_SIZE + records * sizeof(struct vbts_record)) *
			(c->fds.nr_vcpus ? c->fds.nr_vcpus : 1);
	size_t removed;
	int64_t freed;

	if (stall_stop(ctx))
		return true;
	freed = seg_rotate__run(c->o.trace_dir, want, &removed);
	if (freed < 0) {
		pr_warn("rotating the segments of %s: %s", c->o.trace_dir, strerror((int)-freed));
	} else if (removed) {
		c->rotated += removed;
		c->rotate_stuck = false;
	} else if (!c->rotate_stuck) {
		pr_warn("the disk budget is full and holds no segment that may be removed (the "
			"newest %d of each vCPU stay): copying waits", SEG_ROTATE_KEEP);
		c->rotate_stuck = true;
	}
	return false;
}

/*
 * --trace-base: retention over the earlier runs, then a fresh run directory, which becomes
 * the trace directory. 0, or -errno said.
 */
static int make_run_dir(struct attach_ctx *c)
{
	char err[ERR_MAX], path[PATH_MAX], name[PATH_MAX * 4];
	size_t removed;
	int ret;

	if (c->o.cc.collector.mode == TRACE_MODE_STREAM)
		c->o.keep.reserve = c->o.cc.collector.disk_budget ? c->o.cc.collector.disk_budget :
								     TRACE_DEFAULT_DISK_BUDGET;
	ret = trace_base__prune(c->o.trace_base, &c->o.keep, &removed, err, sizeof(err));
	if (ret < 0) {
		pr_err("%s", err);
		return ret;
	}
	if (removed)
		pr_info("%s: removed the %zu oldest run%s (--keep-runs, --keep-bytes)",
			escape__str(name, sizeof(name), c->o.trace_base), removed,
			removed == 1 ? "" : "s");
	ret = trace_base__new_run(c->o.trace_base, path, sizeof(path), err, sizeof(err));
	if (ret < 0) {
		pr_err("%s", err);
		return ret;
	}
	c->o.run_dir = strdup(path);
	if (!c->o.run_dir) {
		rmdir(path);
		pr_err("out of memory");
		return -ENOMEM;
	}
	c->o.trace_dir = c->o.run_dir;
	c->o.cc.trace_dir = c->o.run_dir;
	return 0;
}

/* A signal that came before the collector ran ends start-up: 0, or 128 + N. */
static int pending_stop(struct attach_ctx *c)
{
	struct signalfd_siginfo si;

	while (read(c->sig_fd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD) {
			pr_err("%s during start-up: nothing traced", strsignal((int)si.ssi_signo));
			return 128 + (int)si.ssi_signo;
		}
	return 0;
}

static int exit_status(const struct attach_ctx *c)
{
	if (c->stop_sig)
		return 128 + c->stop_sig;
	if (c->o.qemu_argv && c->child_status >= 0)
		return WIFEXITED(c->child_status) ? WEXITSTATUS(c->child_status) :
						     128 + WTERMSIG(c->child_status);
	return 0;
}

static int attach_vm(struct attach_ctx *c)
{
	char err[ERR_MAX], status[64];
	bool running;
	int ret;

	c->o.cc.image = c->image;
	c->col = collector__attach(c->kvm_fd, c->pidfd, &c->fds, &c->o.cc, err, sizeof(err));
	if (!c->col) {
		ret = -errno;
		pr_err("%s", err);
		return ret;
	}
	if (c->o.seal_key) {
		c->sealer = sealer__start(c->o.trace_dir, c->o.seal_key, c->o.seal_interval_s, err,
					  sizeof(err));
		if (!c->sealer) {
			ret = -errno;
			pr_err("%s", err);
			return ret;
		}
		trace__set_on_closed(collector__trace(c->col), sealer__segment_closed, c->sealer);
	}
	pr_info("attached to process %d: %u vCPUs, tracing into %s", c->fds.pid,
		c->fds.nr_vcpus, c->o.trace_dir);
	/* Before the guest starts: QEMU drops what the port gets while nobody is connected. */
	if (c->o.agent) {
		FILE *events;
		uint64_t start_ns;

		events = collector__events(c->col, &start_ns);
		c->agent = agent_socket__open(c->o.agent, events, start_ns, c->o.trace_dir, err,
					      sizeof(err));
		if (!c->agent) {
			ret = -errno;
			pr_err("%s", err);
			return ret;
		}
	}
	if (!c->qmp || has_arg(c->o.qemu_argv, c->o.qemu_argc, "-S"))
		return 0;
	if (qmp__query_status(c->qmp, &running, status, sizeof(status), err, sizeof(err)) ||
	    (!running && qmp__execute(c->qmp, "cont", NULL, err, sizeof(err)))) {
		pr_err("%s", err);
		return -EPROTO;
	}
	return 0;
}

/* What the agent's socket still holds, a line of what was dropped, then closed. */
static void close_agent(struct attach_ctx *c)
{
	struct agent_stats st;
	uint64_t dropped;

	if (!c->agent)
		return;
	/* Bounded: a guest that keeps writing does not hold the trace open. */
	for (int i = 0; i < 16 && agent_socket__read(c->agent) > 0; i++)
		;
	agent_socket__stats(c->agent, &st);
	dropped = st.too_long + st.invalid + st.over_limit + st.forged + st.elf_dropped;
	if (dropped)
		pr_info("agent: %" PRIu64 " events stored; dropped: %" PRIu64 " too long, %" PRIu64
			" invalid, %" PRIu64 " over the limit, %" PRIu64 " forged, %" PRIu64
			" upload messages", st.stored, st.too_long, st.invalid, st.over_limit,
			st.forged, st.elf_dropped);
	agent_socket__close(c->agent);
	c->agent = NULL;
}

static void ctx_fini(struct attach_ctx *c)
{
	if (c->qmp)
		qmp__close(c->qmp);
	libvirt_domain__close(c->dom);
	if (c->qmp_path)
		unlink(c->qmp_path);
	if (c->tmpdir)
		rmdir(c->tmpdir);
	free(c->qmp_path);
	free(c->tmpdir);
	free(c->image);
	free(c->o.run_dir);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->kvm_fd >= 0)
		close(c->kvm_fd);
	if (c->sig_fd >= 0)
		close(c->sig_fd);
}

static int attach(int argc, char **argv)
{
	struct attach_ctx ctx = { .kvm_fd = -1, .sig_fd = -1, .pidfd = -1, .child_status = -1 };
	struct attach_ctx *c = &ctx;
	char err[ERR_MAX], name[256];
	sigset_t old;
	int ret, status = 2, pid;

	if (parse_opts(argc, argv, &c->o) < 0)
		return 2;
	/* A crash report's symbols, read in a child process (crash-report.h). */
	crash_report__set_annotate(crash_symbols__annotate);
	c->o.cc.stop = c->o.rotate ? rotate_stop : stall_stop;
	c->o.cc.stop_ctx = c;
	if ((c->o.trace_dir && trace__check_dir(c->o.trace_dir, err, sizeof(err)) < 0) ||
	    (c->o.seal_key && sealer__check_key(c->o.seal_key, err, sizeof(err)) < 0)) {
		pr_err("%s", err);
		return 2;
	}
	if (c->o.kernel) {
		c->image = realpath(c->o.kernel, NULL);
		if (!c->image || access(c->image, R_OK)) {
			pr_err("--kernel %s: %s", escape__str(name, sizeof(name), c->o.kernel),
			       strerror(errno));
			ctx_fini(c);
			return 2;
		}
	}
	c->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (c->kvm_fd < 0) {
		pr_err("cannot open /dev/kvm: %s", strerror(errno));
		return 2;
	}
	if (!collector__supported(c->kvm_fd)) {
		pr_err("this host's KVM cannot trace a VM that another process runs (no "
		       "KVM_CAP_X86_BTS_ATTACH): load the KVM modules of kvm-patches/ (vbts run "
		       "--harness runs inside a VM that has them)");
		ctx_fini(c);
		return 2;
	}
	ret = block_signals(c, &old);
	if (ret < 0) {
		pr_err("cannot catch the stop signals: %s", strerror(-ret));
		ctx_fini(c);
		return 1;
	}
	if (c->o.domain) {
		c->dom = libvirt_domain__open(c->o.connect, c->o.domain, err, sizeof(err));
		/* libvirtd not reachable (yet): a failure to retry, not bad input */
		if (!c->dom && (errno == ECONNREFUSED || errno == EIO))
			status = 1;
		if (c->dom && c->o.start) {
			if (libvirt_domain__start_paused(c->dom, err, sizeof(err)) < 0) {
				pr_err("%s", err);
				goto out;
			}
			c->dom_paused = true;
		}
		if (!c->dom || libvirt_domain__pid(c->dom, &pid, err, sizeof(err)) < 0) {
			pr_err("%s", err);
			goto out;
		}
		if (libvirt_domain__watch_crash(c->dom, err, sizeof(err)) < 0)
			pr_warn("%s: a crash will not freeze the rings", err);
		pr_info("domain %s: QEMU process %d", escape__str(name, sizeof(name),
								 c->o.domain), pid);
	} else if (c->o.qemu_argv) {
		ret = start_qemu(c);
		status = 1;
		if (ret < 0)
			goto out;
		pid = c->child;
	} else {
		pid = c->o.pid;
	}
	status = pending_stop(c);
	if (status)
		goto out;
	/* Bad target: 2; a failure once QEMU is started by us: 1. */
	status = c->o.qemu_argv ? 1 : 2;
	if (find_vm(c, pid) < 0 || (c->o.trace_base && make_run_dir(c) < 0) ||
	    attach_vm(c) < 0) {
		close_agent(c);
		if (c->col) {
			collector__close(c->col);
			c->col = NULL;
		}
		sealer__finish(c->sealer);
		c->sealer = NULL;
		/* nothing is left in it then (trace__create()): an empty run is not kept */
		if (c->o.run_dir)
			rmdir(c->o.run_dir);
		goto out;
	}
	if (c->dom_paused) {
		if (libvirt_domain__resume(c->dom, err, sizeof(err)) < 0) {
			pr_err("%s", err);
			close_agent(c);
			collector__close(c->col);
			c->col = NULL;
			sealer__finish(c->sealer);
			c->sealer = NULL;
			status = 1;
			goto out;
		}
		c->dom_paused = false;
	}
	collect(c);
	if (c->rotated)
		pr_info("%" PRIu64 " segment files removed to stay within the disk budget "
			"(--on-full rotate)", c->rotated);
	close_agent(c);
	ret = collector__close(c->col);
	c->col = NULL;
	if (ret < 0)
		pr_err("closing trace directory %s: %s", c->o.trace_dir, strerror(-ret));
	/* The last checkpoint seals what the collector left (sealer__finish() reports). */
	sealer__finish(c->sealer);
	c->sealer = NULL;
	stop_qemu(c);
	status = ret < 0 ? 1 : exit_status(c);
out:
	stop_qemu(c);
	if (c->dom_paused)
		libvirt_domain__destroy(c->dom);
	ctx_fini(c);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}

const struct vbts_command cmd_attach = {
	.name = "attach",
	.summary = "trace a KVM guest that QEMU or libvirt runs (patched KVM)",
	.usage = usage,
	.fn = attach,
};
