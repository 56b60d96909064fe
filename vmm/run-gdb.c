// SPDX-License-Identifier: GPL-2.0
/*
 * run-gdb.c - vbts run --gdb: the gdb stub (gdbstub/server.h) over the running VM.
 *
 * All-stop: gdb holds the VM paused (every vCPU parked in its thread, vcpu__request()); it
 * reads and writes registers with the vCPU fds and memory through the vCPU's page tables
 * (gva.h) while they are parked. Breakpoints are addresses compared with the vCPU's RIP after
 * every exit it goes on from (vm->debug's exited hook): every instruction is one exit where the
 * vCPU is single-stepped, by the step tracer's own steps when it traces, else by
 * KVM_GUESTDBG_SINGLESTEP armed while gdb has a breakpoint or a step pending. Guest memory is
 * never patched, so Z0 and Z1 are the same thing, and what gdb reads is the guest's code.
 * A vCPU at a CPL this host's KVM cannot single-step (vbts probe) runs to its next exit.
 *
 * A fault of user-mode code that the step tracer delivers itself (a load or store that
 * certainly page-faults; not a Linux guest's, see fault_stops()) is held by it while gdb is
 * connected (tracer_vcpu.fault_stop): the vCPU stops at the faulting instruction, gdb gets
 * the signal a process would get, and the fault is delivered to the guest when gdb resumes
 * that vCPU (tracer_vcpu.fault_pass).
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "bts-blocks.h"
#include "gva.h"
#include "kvm.h"
#include "log.h"
#include "memory.h"
#include "record.h"
#include "ring-writer.h"
#include "run-gdb.h"
#include "server.h"
#include "trace.h"
#include "vcpu-int.h"
#include "vcpu.h"
#include "vm.h"
#include "x86.h"

/* Breakpoints at once (gdb sets one per location). */
#define BP_MAX 64
/* How long gdb waits for the vCPUs to park before giving up on a stop. */
#define PARK_TIMEOUT_NS (10ULL * 1000000000ULL)
/* The BTS size btrace-conf reports: gdb's default (the ring's size is --ring's). */
#define BTS_SIZE 0x10000
/* Seconds a reply may wait for the client to read; then the session ends. */
#define SEND_TIMEOUT_S 10
/* The newest block runs on to the PC: no further than this past the last branch. */
#define BLOCK_TAIL_MAX 0x10000

/* A vCPU's `record btrace` as gdb set it. */
struct bt_state {
	bool on;
	uint64_t start_seq;     /* the ring's committed count when recording was turned on */
	uint64_t start_pc;      /* and the PC then: the first instruction of the history */
	bool read;              /* read since: read_seq and read_pc hold */
	uint64_t read_seq, read_pc;
	struct gdb_btrace_block *blocks;
	size_t nr;
};

struct run_gdb {
	struct vm *vm;
	struct trace *trace;
	int listen_fd;
	int event_fd;           /* the stub's wake-up: a stop, the end of the VM */
	int quit_fd;            /* the accept loop's end */
	pthread_t thread;
	bool started;
	char where[128];        /* the address listened on, for messages */
	ZydisDecoder zd;

	pthread_mutex_t lock;   /* everything below */
	bool *held;             /* the vCPUs gdb paused and resumes */
	bool resumed;           /* gdb resumed the VM; its stop not reported yet */
	bool active;            /* resumed with a breakpoint or a step: exits are looked at
				 * (atomic: the vCPU threads' fast path) */
	int step_vcpu;          /* the vCPU single-stepped alone, or -1 */
	int fault_vcpu;         /* the vCPU whose held fault gdb was told of, or -1 */
	struct gdb_stop stop;   /* the last stop */
	bool ended;             /* the VM is gone */
	int status;
	uint64_t bp[BP_MAX];
	char bp_type[BP_MAX];
	unsigned int nr_bp;
	struct bt_state *bt;
};

static void wake(struct run_gdb *g)
{
	uint64_t one = 1;

	if (write(g->event_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_warn("gdb: eventfd: %s", strerror(errno));
}

static enum vcpu_state requested(struct vcpu *v)
{
	enum vcpu_state r;

	pthread_mutex_lock(&v->lock);
	r = v->request;
	pthread_mutex_unlock(&v->lock);
	return r;
}

/* Ask every vCPU that runs to pause (g->lock held); they become held. */
static void pause_all_locked(struct run_gdb *g)
{
	for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
		struct vcpu *v = g->vm->vcpus[i];

		if (requested(v) == VCPU_RUNNING)
			g->held[i] = true;
		if (g->held[i])
			vcpu__request(v, VCPU_PAUSED);
	}
}

/* Wait until every held vCPU is parked (or gone); -ETIMEDOUT. */
static int wait_parked(struct run_gdb *g)
{
	struct timespec ts = { .tv_nsec = 1000000 };
	uint64_t waited = 0;

	for (;;) {
		bool all = true;

		for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
			enum vcpu_state s = vcpu__state(g->vm->vcpus[i]);

			if (g->held[i] && s != VCPU_PAUSED && s != VCPU_STOPPED) {
				all = false;
				vcpu__kick(g->vm->vcpus[i]);
			}
		}
		if (all)
			return 0;
		if (waited >= PARK_TIMEOUT_NS)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
		waited += (uint64_t)ts.tv_nsec;
	}
}

static void resume_held_locked(struct run_gdb *g, int only)
{
	for (unsigned int i = 0; i < g->vm->nr_vcpus; i++)
		if (g->held[i] && (only < 0 || (unsigned int)only == i))
			vcpu__request(g->vm->vcpus[i], VCPU_RUNNING);
}

/* ---- the vCPU threads' side (vm->debug) --------------------------------------------------- */

/*
 * gdb's signal (its own numbering, as in a stop reply) for an exception of user-mode code:
 * the signal Linux sends the process for it, as gdbserver reports it.
 */
static int fault_signal(uint8_t vector)
{
	switch (vector) {
	case 0:         /* #DE */
	case 7:         /* #NM */
	case 16:        /* #MF */
	case 19:        /* #XM */
		return 8;       /* SIGFPE */
	case 1:         /* #DB */
	case 3:         /* #BP */
		return 5;       /* SIGTRAP */
	case 6:         /* #UD */
		return 4;       /* SIGILL */
	case 11:        /* #NP */
	case 12:        /* #SS */
	case 17:        /* #AC */
		return 10;      /* SIGBUS */
	default:        /* #PF, #GP, #TS, #OF, #BR */
		return 11;      /* SIGSEGV */
	}
}

/* The tracer held a fault of vCPU @vcpu before the guest's handler: the VM stops there. */
static void fault_held(struct run_gdb *g, unsigned int vcpu, const struct tracer_fault *f)
{
	pthread_mutex_lock(&g->lock);
	/* Not resumed: the VM stops for another reason, the fault is held again after it. */
	if (g->resumed) {
		g->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = vcpu,
					     .sig = fault_signal(f->vector) };
		g->fault_vcpu = (int)vcpu;
		g->resumed = false;
		__atomic_store_n(&g->active, false, __ATOMIC_RELEASE);
		pause_all_locked(g);
		wake(g);
	}
	pthread_mutex_unlock(&g->lock);
}

static uint32_t hook_guest_debug(void *ctx, unsigned int vcpu)
{
	struct run_gdb *g = ctx;

	return __atomic_load_n(&g->active, __ATOMIC_ACQUIRE) ?
	       KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP : 0;
}

static void hook_exited(void *ctx, unsigned int vcpu, int fd, struct kvm_run *run)
{
	struct run_gdb *g = ctx;
	struct kvm_regs regs;
	uint64_t rip;
	bool hit = false, hw = false;

	if (g->vm->vcpus[vcpu]->tv.fault.held) {
		fault_held(g, vcpu, &g->vm->vcpus[vcpu]->tv.fault);
		return;
	}
	if (!__atomic_load_n(&g->active, __ATOMIC_ACQUIRE) || run->exit_reason == KVM_EXIT_INTR)
		return;
	if (run->kvm_valid_regs & KVM_SYNC_X86_REGS)
		rip = run->s.regs.regs.rip;
	else if (kvm__ioctl_quiet(fd, KVM_GET_REGS, &regs) == 0)
		rip = regs.rip;
	else
		return;
	pthread_mutex_lock(&g->lock);
	if (!g->resumed || !g->active) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (g->step_vcpu == (int)vcpu) {
		hit = true;
	} else {
		for (unsigned int i = 0; i < g->nr_bp; i++) {
			if (g->bp[i] == rip) {
				hit = true;
				hw = g->bp_type[i] == '1';
				break;
			}
		}
	}
	if (hit) {
		g->stop = (struct gdb_stop){
			.kind = GDB_STOP_SIGNAL, .thread = vcpu, .sig = 5,
			.swbreak = g->step_vcpu != (int)vcpu && !hw,
			.hwbreak = g->step_vcpu != (int)vcpu && hw,
		};
		g->resumed = false;
		__atomic_store_n(&g->active, false, __ATOMIC_RELEASE);
		pause_all_locked(g);
		wake(g);
	}
	pthread_mutex_unlock(&g->lock);
}

static const struct vm_debug_ops debug_ops = {
	.guest_debug = hook_guest_debug,
	.exited = hook_exited,
};

/* ---- the target gdb sees (gdb_target_ops) ------------------------------------------------ */

static void *mem_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	return guest_memory__ptr(ctx, gpa, len);
}

static int vcpu_fd(struct run_gdb *g, unsigned int t)
{
	return t < g->vm->nr_vcpus ? g->vm->vcpus[t]->fd : -1;
}

static int space_of(struct run_gdb *g, unsigned int t, struct gva_space *as)
{
	struct kvm_sregs sr;

	if (kvm__ioctl_quiet(vcpu_fd(g, t), KVM_GET_SREGS, &sr) < 0)
		return -EIO;
	*as = (struct gva_space){
		.ptr = mem_ptr, .ctx = g->vm->mem,
		.cr0 = sr.cr0, .cr3 = sr.cr3, .cr4 = sr.cr4, .efer = sr.efer,
	};
	return 0;
}

static unsigned int op_nr_threads(void *ctx)
{
	struct run_gdb *g = ctx;

	return g->vm->nr_vcpus;
}

static void op_regs(void *ctx, unsigned int t, struct gdb_regs *r)
{
	struct run_gdb *g = ctx;
	struct kvm_regs k;
	struct kvm_sregs sr;

	memset(r, 0, sizeof(*r));
	if (kvm__ioctl_quiet(vcpu_fd(g, t), KVM_GET_REGS, &k) < 0 ||
	    kvm__ioctl_quiet(vcpu_fd(g, t), KVM_GET_SREGS, &sr) < 0)
		return;
	r->val[GDB_REG_RAX] = k.rax;
	r->val[GDB_REG_RBX] = k.rbx;
	r->val[GDB_REG_RCX] = k.rcx;
	r->val[GDB_REG_RDX] = k.rdx;
	r->val[GDB_REG_RSI] = k.rsi;
	r->val[GDB_REG_RDI] = k.rdi;
	r->val[GDB_REG_RBP] = k.rbp;
	r->val[GDB_REG_RSP] = k.rsp;
	r->val[GDB_REG_R8] = k.r8;
	r->val[GDB_REG_R9] = k.r9;
	r->val[GDB_REG_R10] = k.r10;
	r->val[GDB_REG_R11] = k.r11;
	r->val[GDB_REG_R12] = k.r12;
	r->val[GDB_REG_R13] = k.r13;
	r->val[GDB_REG_R14] = k.r14;
	r->val[GDB_REG_R15] = k.r15;
	r->val[GDB_REG_RIP] = k.rip;
	r->val[GDB_REG_EFLAGS] = k.rflags & 0xffffffffULL;
	r->val[GDB_REG_CS] = sr.cs.selector;
	r->val[GDB_REG_SS] = sr.ss.selector;
	r->val[GDB_REG_DS] = sr.ds.selector;
	r->val[GDB_REG_ES] = sr.es.selector;
	r->val[GDB_REG_FS] = sr.fs.selector;
	r->val[GDB_REG_GS] = sr.gs.selector;
	r->valid = (1u << GDB_REG_NR) - 1;
}

static int op_write_regs(void *ctx, unsigned int t, const struct gdb_regs *r)
{
	static const unsigned int seg[] = { GDB_REG_CS, GDB_REG_SS, GDB_REG_DS, GDB_REG_ES,
					    GDB_REG_FS, GDB_REG_GS };
	struct run_gdb *g = ctx;
	struct gdb_regs cur;
	struct kvm_regs k;
	__u64 *gp[GDB_REG_EFLAGS + 1] = {
		&k.rax, &k.rbx, &k.rcx, &k.rdx, &k.rsi, &k.rdi, &k.rbp, &k.rsp, &k.r8, &k.r9,
		&k.r10, &k.r11, &k.r12, &k.r13, &k.r14, &k.r15, &k.rip, &k.rflags,
	};
	int ret;

	if (t >= g->vm->nr_vcpus)
		return -EINVAL;
	op_regs(ctx, t, &cur);
	if (!cur.valid)
		return -EIO;
	/* A selector is loaded with its descriptor: gdb may only write back what it read. */
	for (unsigned int i = 0; i < sizeof(seg) / sizeof(seg[0]); i++)
		if ((r->valid & (1u << seg[i])) && (r->val[seg[i]] & 0xffff) != cur.val[seg[i]])
			return -EINVAL;
	ret = kvm__ioctl_quiet(vcpu_fd(g, t), KVM_GET_REGS, &k);
	if (ret < 0)
		return ret;
	for (unsigned int n = 0; n <= GDB_REG_EFLAGS; n++)
		if (r->valid & (1u << n))
			*gp[n] = n == GDB_REG_EFLAGS ? (r->val[n] & 0xffffffffULL) | 2 : r->val[n];
	ret = kvm__ioctl_quiet(vcpu_fd(g, t), KVM_SET_REGS, &k);
	if (ret < 0)
		return ret;
	/* The step tracer keeps the state it read: it reads it again. */
	g->vm->vcpus[t]->tv.regs_changed = true;
	return 0;
}

static size_t op_read_mem(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len)
{
	struct run_gdb *g = ctx;
	struct gva_space as;

	if (space_of(g, t, &as))
		return 0;
	return gva__read_prefix(&as, addr, buf, len);
}

/* A debugger's store: every page mapped to guest RAM, whatever its R/W bit; all or nothing. */
static int op_write_mem(void *ctx, unsigned int t, uint64_t addr, const void *buf, size_t len)
{
	struct run_gdb *g = ctx;
	struct gva_space as;
	uint64_t gpa;

	if (space_of(g, t, &as))
		return -EIO;
	for (int pass = 0; pass < 2; pass++) {
		size_t done = 0;

		while (done < len) {
			uint64_t la = addr + done;
			size_t n = 4096 - (size_t)(la & 4095);
			void *p;

			if (n > len - done)
				n = len - done;
			if (gva__translate(&as, la, &gpa))
				return -EFAULT;
			p = guest_memory__ptr(g->vm->mem, gpa, n);
			if (!p)
				return -EFAULT;
			if (pass)
				memcpy(p, (const uint8_t *)buf + done, n);
			done += n;
		}
	}
	return 0;
}

static int op_breakpoint(void *ctx, char type, uint64_t addr, bool insert)
{
	struct run_gdb *g = ctx;
	int ret = insert ? -ENOSPC : -ENOENT;

	pthread_mutex_lock(&g->lock);
	for (unsigned int i = 0; i < g->nr_bp; i++) {
		if (g->bp[i] != addr || g->bp_type[i] != type)
			continue;
		if (insert) {
			ret = 0;        /* already there */
		} else {
			g->bp[i] = g->bp[g->nr_bp - 1];
			g->bp_type[i] = g->bp_type[g->nr_bp - 1];
			g->nr_bp--;
			ret = 0;
		}
		goto out;
	}
	if (insert && g->nr_bp < BP_MAX) {
		g->bp[g->nr_bp] = addr;
		g->bp_type[g->nr_bp++] = type;
		ret = 0;
	}
out:
	pthread_mutex_unlock(&g->lock);
	return ret;
}

static int op_resume(void *ctx, int step)
{
	struct run_gdb *g = ctx;

	pthread_mutex_lock(&g->lock);
	if (g->ended) {
		pthread_mutex_unlock(&g->lock);
		wake(g);        /* the stub learns the end from op_stopped() */
		return 0;
	}
	if (step >= 0 && ((unsigned int)step >= g->vm->nr_vcpus || !g->held[step])) {
		pthread_mutex_unlock(&g->lock);
		return -ESRCH;  /* a vCPU that does not run: nothing to step */
	}
	if (g->fault_vcpu >= 0) {
		/* gdb goes on from the fault: the guest's handler gets it now */
		__atomic_store_n(&g->vm->vcpus[g->fault_vcpu]->tv.fault_pass, true,
				 __ATOMIC_RELEASE);
		g->fault_vcpu = -1;
	}
	g->step_vcpu = step;
	g->resumed = true;
	__atomic_store_n(&g->active, step >= 0 || g->nr_bp > 0, __ATOMIC_RELEASE);
	resume_held_locked(g, step);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

static void op_interrupt(void *ctx)
{
	struct run_gdb *g = ctx;
	unsigned int t = 0;

	pthread_mutex_lock(&g->lock);
	if (g->resumed) {
		for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
			if (g->held[i]) {
				t = i;
				break;
			}
		}
		g->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = t, .sig = 2 };
		g->resumed = false;
		__atomic_store_n(&g->active, false, __ATOMIC_RELEASE);
		pause_all_locked(g);
		wake(g);
	}
	pthread_mutex_unlock(&g->lock);
}

static int op_event_fd(void *ctx)
{
	struct run_gdb *g = ctx;

	return g->event_fd;
}

static int op_stopped(void *ctx, struct gdb_stop *stop)
{
	struct run_gdb *g = ctx;
	uint64_t v;
	int ret;

	if (read(g->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&g->lock);
	if (g->ended) {
		*stop = (struct gdb_stop){ .kind = GDB_STOP_EXITED, .status = g->status };
		pthread_mutex_unlock(&g->lock);
		return 1;
	}
	if (g->resumed) {
		pthread_mutex_unlock(&g->lock);
		return 0;
	}
	*stop = g->stop;
	pthread_mutex_unlock(&g->lock);
	ret = wait_parked(g);
	return ret < 0 ? ret : 1;
}

static int op_btrace_enable(void *ctx, unsigned int t, bool on, char *err, size_t errlen)
{
	struct run_gdb *g = ctx;
	struct bt_state *b = &g->bt[t];
	struct gdb_regs r;

	if (!on) {
		b->on = false;
		return 0;
	}
	if (!g->trace || !trace__ring(g->trace, t)) {
		snprintf(err, errlen, "No branch trace: run vbts run with --trace DIR.");
		return -ENOTSUP;
	}
	op_regs(ctx, t, &r);
	b->on = true;
	b->read = false;
	b->start_seq = ring_writer__committed(trace__ring(g->trace, t));
	b->start_pc = r.val[GDB_REG_RIP];
	return 0;
}

struct insn_ctx {
	struct run_gdb *g;
	unsigned int t;
};

static uint64_t next_insn(void *ctx, uint64_t addr)
{
	struct insn_ctx *ic = ctx;
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
	ZydisDecodedInstruction zi;
	size_t n = op_read_mem(ic->g, ic->t, addr, bytes, sizeof(bytes));

	if (!n || ZYAN_FAILED(ZydisDecoderDecodeInstruction(&ic->g->zd, NULL, bytes, n, &zi)))
		return 0;
	return addr + zi.length;
}

static int push(struct bts_branch **br, size_t *nr, size_t *cap, const struct bts_branch *b)
{
	if (*nr == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		struct bts_branch *n = realloc(*br, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		*br = n;
		*cap = c;
	}
	(*br)[(*nr)++] = *b;
	return 0;
}

/*
 * The vCPU's blocks since @from_seq of its ring, the first starting at @pc0 (where the vCPU
 * was then) unless records were lost since; the newest runs on to the PC.
 */
static int ring_blocks(struct run_gdb *g, unsigned int t, uint64_t from_seq, uint64_t pc0,
		       uint64_t rip, unsigned int cpl, bool *lost)
{
	struct ring_writer *w = trace__ring(g->trace, t);
	uint64_t end = ring_writer__committed(w), cap = ring_writer__capacity(w);
	uint64_t oldest = cap && end > cap ? end - cap : 0;
	struct insn_ctx ic = { .g = g, .t = t };
	struct bt_state *b = &g->bt[t];
	struct bts_branch *br = NULL, x;
	size_t nr = 0, nbr = 0;
	bool brk = false;
	int ret = 0;

	*lost = oldest > from_seq;
	if (!*lost) {
		x = (struct bts_branch){ .from = pc0, .to = pc0, .from_in = true, .to_in = true,
					 .after_break = true };
		ret = push(&br, &nr, &nbr, &x);
	}
	brk = *lost;
	for (uint64_t seq = *lost ? oldest : from_seq; !ret && seq < end; seq++) {
		struct vbts_record rec;
		struct decoded_record d;

		if (ring_writer__read(w, seq, &rec)) {
			brk = true;
			continue;
		}
		record__decode_one(t, seq, &rec, &d);
		switch (d.type) {
		case DECODED_BRANCH:
			if (!d.from_valid || !d.to_valid) {
				brk = true;
				break;
			}
			x = (struct bts_branch){ .from = d.from, .to = d.to, .after_break = brk,
						 .from_in = !d.cpl_valid || (d.cpl > 0) == (cpl > 0) };
			ret = push(&br, &nr, &nbr, &x);
			brk = false;
			break;
		case DECODED_GAP:
		case DECODED_LOST:
		case DECODED_START:
		case DECODED_STOP:
		case DECODED_FREEZE:
			brk = true;
			break;
		default:
			break;
		}
	}
	if (ret) {
		free(br);
		return ret;
	}
	/* Where a branch went is where the next one was taken; the last went to the PC. */
	for (size_t i = 0; i < nr; i++)
		br[i].to_in = i + 1 == nr || br[i + 1].from_in;
	free(b->blocks);
	b->blocks = NULL;
	b->nr = 0;
	ret = bts_blocks__build(br, nr, next_insn, &ic, &b->blocks, &b->nr);
	free(br);
	if (!ret && b->nr && rip >= b->blocks[0].begin &&
	    rip - b->blocks[0].begin < BLOCK_TAIL_MAX)
		b->blocks[0].end = rip;
	return ret;
}

static int op_btrace_read(void *ctx, unsigned int t, enum gdb_btrace_read how,
			  const struct gdb_btrace_block **blocks, size_t *nr)
{
	struct run_gdb *g = ctx;
	struct bt_state *b = &g->bt[t];
	struct gdb_regs r;
	uint64_t end, rip;
	bool lost;
	int ret;

	if (!b->on || !g->trace)
		return -ENODATA;
	op_regs(ctx, t, &r);
	rip = r.val[GDB_REG_RIP];
	end = ring_writer__committed(trace__ring(g->trace, t));
	*blocks = NULL;
	*nr = 0;
	if (how == GDB_BTRACE_NEW && b->read && end == b->read_seq && rip == b->read_pc)
		return 0;
	if (how == GDB_BTRACE_DELTA) {
		/* gdb put the PC of the enable into its trace: a delta is from there on. */
		uint64_t pc0 = b->read ? b->read_pc : b->start_pc;

		ret = ring_blocks(g, t, b->read ? b->read_seq : b->start_seq, pc0, rip,
				  (unsigned int)r.val[GDB_REG_CS] & 3, &lost);
		if (!ret && (lost || !b->nr || b->blocks[b->nr - 1].begin != pc0))
			ret = -EOVERFLOW;       /* gdb reads the whole trace again */
		if (!ret)
			b->blocks[b->nr - 1].begin = 0;
	} else {
		ret = ring_blocks(g, t, b->start_seq, b->start_pc, rip,
				  (unsigned int)r.val[GDB_REG_CS] & 3, &lost);
	}
	if (ret)
		return ret;
	b->read = true;
	b->read_seq = end;
	b->read_pc = rip;
	*blocks = b->blocks;
	*nr = b->nr;
	return 0;
}

static void op_describe(void *ctx, unsigned int t, char *buf, size_t cap)
{
	struct run_gdb *g = ctx;
	enum vcpu_state s = vcpu__state(g->vm->vcpus[t]);

	snprintf(buf, cap, "vcpu %u%s", t, s == VCPU_STOPPED ? " (halted)" : "");
}

static const struct gdb_target_ops live_ops = {
	.nr_threads = op_nr_threads,
	.regs = op_regs,
	.read_mem = op_read_mem,
	.describe = op_describe,
	.bts_size = BTS_SIZE,
	.write_regs = op_write_regs,
	.write_mem = op_write_mem,
	.breakpoint = op_breakpoint,
	.resume = op_resume,
	.interrupt = op_interrupt,
	.event_fd = op_event_fd,
	.stopped = op_stopped,
	.btrace_enable = op_btrace_enable,
	.btrace_read = op_btrace_read,
};

/* ---- connections ------------------------------------------------------------------------- */

/*
 * While a session lasts the step tracer holds the faults of user-mode code for it; not a Linux
 * guest's (vm->pc): most of them are demand paging, and which one is fatal is the kernel's
 * decision, taken after the handler ran.
 */
static void fault_stops(struct run_gdb *g, bool on)
{
	on = on && !g->vm->pc;
	for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
		struct tracer_vcpu *tv = &g->vm->vcpus[i]->tv;

		__atomic_store_n(&tv->fault_pass, false, __ATOMIC_RELEASE);
		__atomic_store_n(&tv->fault_stop, on, __ATOMIC_RELEASE);
	}
	g->fault_vcpu = -1;
}

/* One gdb session: the VM stopped at its start, running again (as before) at its end. */
static void serve(struct run_gdb *g, int fd)
{
	char err[256] = "";
	int ret;

	pthread_mutex_lock(&g->lock);
	if (g->ended) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	pause_all_locked(g);
	g->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .sig = 5 };
	for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
		if (g->held[i]) {
			g->stop.thread = i;
			break;
		}
	}
	g->resumed = false;
	pthread_mutex_unlock(&g->lock);
	if (wait_parked(g) < 0) {
		pr_warn("gdb: the vCPUs did not stop; connection closed");
	} else {
		pr_info("gdb: connected; the VM is stopped");
		pthread_mutex_lock(&g->lock);
		fault_stops(g, true);
		pthread_mutex_unlock(&g->lock);
		ret = gdb_server__run(fd, fd, &live_ops, g, err, sizeof(err));
		if (ret < 0)
			pr_warn("gdb: %s; connection closed, the guest runs on", err);
	}
	pthread_mutex_lock(&g->lock);
	fault_stops(g, false);
	g->nr_bp = 0;
	g->step_vcpu = -1;
	g->resumed = false;
	__atomic_store_n(&g->active, false, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < g->vm->nr_vcpus; i++) {
		free(g->bt[i].blocks);
		memset(&g->bt[i], 0, sizeof(g->bt[i]));
	}
	if (!g->ended)
		resume_held_locked(g, -1);
	memset(g->held, 0, g->vm->nr_vcpus * sizeof(*g->held));
	pthread_mutex_unlock(&g->lock);
}

static void *gdb_thread(void *arg)
{
	static const struct timeval send_timeout = { .tv_sec = SEND_TIMEOUT_S };
	struct run_gdb *g = arg;
	struct pollfd pfd[2];
	int fd;

	pthread_setname_np(pthread_self(), "gdb");
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = g->listen_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = g->quit_fd, .events = POLLIN };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_warn("gdb: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		/* A client that reads none of its replies cannot hold the VM for ever. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout)))
			pr_warn("gdb: SO_SNDTIMEO: %s", strerror(errno));
		serve(g, fd);
		close(fd);
	}
	return NULL;
}

/* --gdb's argument: PORT, :PORT, ADDR:PORT or [ADDR]:PORT. */
static int parse_addr(const char *arg, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon = strrchr(arg, ':');
	const char *h = arg, *he;
	size_t n;

	if (!colon) {
		snprintf(host, hcap, "127.0.0.1");
		colon = arg - 1;
		he = NULL;
	} else {
		he = colon;
		if (*h == '[' && he > h && he[-1] == ']') {
			h++;
			he--;
		}
		n = (size_t)(he - h);
		if (n >= hcap)
			return -EINVAL;
		if (!n)
			snprintf(host, hcap, "127.0.0.1");
		else {
			memcpy(host, h, n);
			host[n] = '\0';
		}
	}
	n = strlen(colon + 1);
	if (!n || n >= pcap || strspn(colon + 1, "0123456789") != n || atoi(colon + 1) > 65535)
		return -EINVAL;
	memcpy(port, colon + 1, n + 1);
	return 0;
}

static int listen_on(struct run_gdb *g, const char *arg, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[256], port[8], h[64], p[8];
	struct addrinfo *ai;
	int fd, one = 1, ret;

	if (parse_addr(arg, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "--gdb %s: not [ADDR:]PORT", arg);
		return -EINVAL;
	}
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "--gdb %s: %s", arg, gai_strerror(ret));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		ret = -errno;
		snprintf(err, errlen, "--gdb %s: %s", arg, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return ret;
	}
	freeaddrinfo(ai);
	if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p),
			NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(g->where, sizeof(g->where), "%s", arg);
	else
		snprintf(g->where, sizeof(g->where), ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
			 h, p);
	g->listen_fd = fd;
	return 0;
}

struct run_gdb *run_gdb__create(struct vm *vm, const char *addr, bool hold,
				struct trace *trace, char *err, size_t errlen)
{
	struct run_gdb *g = calloc(1, sizeof(*g));
	int ret = -ENOMEM;

	if (!g)
		goto fail;
	g->listen_fd = g->event_fd = g->quit_fd = -1;
	g->vm = vm;
	g->trace = trace;
	g->step_vcpu = -1;
	g->fault_vcpu = -1;
	pthread_mutex_init(&g->lock, NULL);
	ZydisDecoderInit(&g->zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	g->held = calloc(vm->nr_vcpus, sizeof(*g->held));
	g->bt = calloc(vm->nr_vcpus, sizeof(*g->bt));
	if (!g->held || !g->bt) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	g->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g->quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->event_fd < 0 || g->quit_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	ret = listen_on(g, addr, err, errlen);
	if (ret < 0)
		goto fail;
	vm->debug = &debug_ops;
	vm->debug_ctx = g;
	vm->debug_hold = hold;
	return g;

fail:
	run_gdb__destroy(g);
	errno = -ret;
	return NULL;
}

void run_gdb__hold(struct run_gdb *g, unsigned int index)
{
	if (g && index < g->vm->nr_vcpus)
		g->held[index] = true;
}

int run_gdb__start(struct run_gdb *g)
{
	int ret = -pthread_create(&g->thread, NULL, gdb_thread, g);

	if (!ret) {
		g->started = true;
		pr_info("gdb: listening on %s (target remote %s)%s", g->where, g->where,
			g->vm->debug_hold ? "; the guest waits for gdb" : "");
	}
	return ret;
}

void run_gdb__vm_ended(struct run_gdb *g, int status)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->ended = true;
	g->status = status;
	__atomic_store_n(&g->active, false, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g->lock);
	wake(g);
}

void run_gdb__destroy(struct run_gdb *g)
{
	uint64_t one = 1;

	if (!g)
		return;
	if (g->started) {
		run_gdb__vm_ended(g, g->status);
		if (write(g->quit_fd, &one, sizeof(one)) < 0)
			pr_warn("gdb: eventfd: %s", strerror(errno));
		pthread_join(g->thread, NULL);
	}
	if (g->vm && g->vm->debug_ctx == g) {
		g->vm->debug = NULL;
		g->vm->debug_ctx = NULL;
	}
	if (g->listen_fd >= 0)
		close(g->listen_fd);
	if (g->event_fd >= 0)
		close(g->event_fd);
	if (g->quit_fd >= 0)
		close(g->quit_fd);
	for (unsigned int i = 0; g->bt && i < g->vm->nr_vcpus; i++)
		free(g->bt[i].blocks);
	free(g->bt);
	free(g->held);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
