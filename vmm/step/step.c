// SPDX-License-Identifier: GPL-2.0
/*
 * step.c - the single-step tracer backend: KVM_SET_GUEST_DEBUG single-step around every
 * KVM_RUN, guest state in and records out; the decisions are in step-core.c.
 *
 * Per vCPU, before each run: read the state (sync regs when the host has them), decode the
 * instruction at RIP, predict its exact target where the guest's tables define one (direct
 * branches, IDT gates, SYSCALL/SYSENTER MSRs), then arm the step (again every time: KVM
 * swallows steps at instructions it intercepts unless re-armed) or, where the host cannot step
 * the CPL the instruction runs at or may enter, disarm it and open a gap. After each exit:
 * read the state again and let step_core__exit() explain the difference.
 *
 * The transitions after which the step trap does not come back (sysretq, iretq to CPL 3 with
 * the popped TF clear, syscall when FMASK clears TF, int n through the IDT), and every other
 * syscall (the CPU would save the step's TF in R11), are executed by the VMM itself when the host can step both sides (transition.c): the guest gets their exact
 * architectural result through KVM_SET_SREGS/KVM_SET_REGS and its memory, the branch is
 * recorded, and the step goes on at the target. A user-mode load or store that certainly
 * raises a page fault is handled the same way (the fault delivered by the VMM, the exception
 * branch recorded). Where transition.c declines (anything the CPU would fault on otherwise,
 * anything unusual) the CPU executes the instruction and a gap follows.
 *
 * The guest is hostile: every guest address goes through gva.c's bounds-checked walks, every
 * failure to read or decode becomes a gap record, and nothing here logs per guest event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvm.h"
#include "memory.h"
#include "ring-writer.h"
#include "guest-bts.h"
#include "log.h"
#include "tracer.h"
#include "x86.h"
#include "step-int.h"
#include "transition.h"

/* The most transitions executed by the VMM before one run (an int at an iret's target...). */
#define TRANSITION_CHAIN_MAX 4

/**
 * struct step_vcpu - the backend's per-vCPU state (tracer_vcpu.priv).
 * @core:   the decision state machine
 * @dec:    instruction decoder
 * @regs:   general registers at the last observation
 * @sregs:  special registers at the last observation
 * @fresh:  @regs/@sregs are the state the next KVM_RUN starts from
 * @dbg_on: single-step is armed in KVM
 * @pmi:    a store into the guest's BTS buffer reached its threshold with BTINT: a PMI goes
 *          through LVTPC before the next run
 * @nmi:    a PMI through LVTPC as an NMI waits for the VMM to deliver it (while NMIs are
 *          blocked, or until the guest state allows it)
 */
struct step_vcpu {
	struct step_core core;
	struct insn_decoder dec;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	bool fresh;
	bool dbg_on;
	bool pmi;
	bool nmi;
};

static void *mem_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	return guest_memory__ptr(ctx, gpa, len);
}

/* Read the state: from kvm_run's sync area after an exit when @sync, else by ioctl. */
static int read_state(struct tracer_vcpu *tv, struct step_vcpu *sv, bool sync)
{
	int ret;

	if (sync && tv->caps.sync_regs &&
	    (tv->run->kvm_valid_regs & (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) ==
		    (KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS)) {
		sv->regs = tv->run->s.regs.regs;
		sv->sregs = tv->run->s.regs.sregs;
		sv->fresh = true;
		return 0;
	}
	ret = kvm__ioctl(tv->fd, KVM_GET_REGS, &sv->regs);
	if (ret < 0)
		return ret;
	ret = kvm__ioctl(tv->fd, KVM_GET_SREGS, &sv->sregs);
	if (ret < 0)
		return ret;
	sv->fresh = true;
	return 0;
}

static enum insn_mode state_mode(const struct step_vcpu *sv)
{
	return insn__mode(sv->sregs.cr0, sv->sregs.efer, sv->regs.rflags, sv->sregs.cs.l,
			  sv->sregs.cs.db);
}

/* Linear address of @ip in the current code segment. */
static uint64_t linear(const struct step_vcpu *sv, enum insn_mode mode, uint64_t ip)
{
	if (mode == INSN_MODE_LONG64)
		return ip;
	return (sv->sregs.cs.base + ip) & 0xffffffffULL;
}

static void observe(const struct step_vcpu *sv, struct step_obs *o)
{
	enum insn_mode mode = state_mode(sv);

	o->la = linear(sv, mode, sv->regs.rip);
	o->cr3 = sv->sregs.cr3;
	if (!(sv->sregs.cr0 & X86_CR0_PE))
		o->cpl = 0;
	else if ((sv->regs.rflags & X86_RFLAGS_VM) && !(sv->sregs.efer & X86_EFER_LMA))
		o->cpl = 3;
	else
		o->cpl = sv->sregs.ss.dpl & 3; /* SS.DPL is the CPL in protected mode */
}

static void address_space(const struct tracer_vcpu *tv, const struct step_vcpu *sv,
			  struct gva_space *s)
{
	struct step_obs now;

	s->ptr = mem_ptr;
	s->ctx = tv->mem;
	s->cr0 = sv->sregs.cr0;
	s->cr3 = sv->sregs.cr3;
	s->cr4 = sv->sregs.cr4;
	s->efer = sv->sregs.efer;
	observe(sv, &now);
	s->smap_open = now.cpl != 3 && (sv->regs.rflags & X86_RFLAGS_AC);
}

static int read_msr(const struct tracer_vcpu *tv, uint32_t index, uint64_t *value)
{
	return kvm__get_msr(tv->fd, index, value);
}

/* The exact handler of an event-raising instruction, if the guest state defines one. */
static void predict_event(const struct tracer_vcpu *tv, const struct step_vcpu *sv,
			  enum insn_mode mode, uint8_t cpl, struct step_decoded *d)
{
	const struct kvm_sregs *sr = &sv->sregs;
	bool lmode = sr->efer & X86_EFER_LMA;
	uint64_t v;

	if (d->info.flags & INSN_F_VECTOR) {
		struct step_tables t = {
			.idt_base = sr->idt.base,
			.idt_limit = sr->idt.limit,
			.gdt_base = sr->gdt.base,
			.gdt_limit = sr->gdt.limit,
			.ldt_base = sr->ldt.base,
			.ldt_limit = sr->ldt.limit,
			.ldt_usable = sr->ldt.present && !sr->ldt.unusable,
		};
		struct gva_space s;
		bool real = !(sr->cr0 & X86_CR0_PE);

		if ((sv->regs.rflags & X86_RFLAGS_VM) && !lmode)
			return; /* virtual-8086 mode: IOPL-sensitive, not followed */
		if (d->info.vector == 4 && (d->info.flags & INSN_F_COND) &&
		    !(sv->regs.rflags & X86_RFLAGS_OF))
			return; /* into without OF falls through */
		address_space(tv, sv, &s);
		if (!step__gate_target(&s, &t, real, lmode, d->info.vector,
				       d->info.flags & INSN_F_SOFT_INT, cpl, &d->target))
			d->has_target = true;
		return;
	}
	if (d->info.flags & INSN_F_SYSCALL) {
		if (!lmode || !(sr->efer & X86_EFER_SCE))
			return;
		if (!read_msr(tv, mode == INSN_MODE_LONG64 ? X86_MSR_LSTAR : X86_MSR_CSTAR, &v)) {
			d->target = mode == INSN_MODE_LONG64 ? v : (v & 0xffffffffULL);
			d->has_target = true;
		}
		return;
	}
	if (d->info.flags & INSN_F_SYSENTER) {
		uint64_t cs;

		if (!(sr->cr0 & X86_CR0_PE) || read_msr(tv, X86_MSR_IA32_SYSENTER_CS, &cs) ||
		    !(cs & 0xfffc) || read_msr(tv, X86_MSR_IA32_SYSENTER_EIP, &v))
			return;
		d->target = lmode ? v : (v & 0xffffffffULL);
		d->has_target = true;
	}
}

/*
 * Where sysret/sysexit go: RCX/RDX, when the guest state lets them execute (CPL 0, the MSRs
 * enabled, a canonical target); else nothing is predicted and a gap is written.
 */
static void predict_sysret(const struct tracer_vcpu *tv, const struct step_vcpu *sv,
			   uint8_t cpl, struct step_decoded *d)
{
	const struct kvm_sregs *sr = &sv->sregs;
	uint64_t v, cs;

	if (cpl != 0 || !(sr->cr0 & X86_CR0_PE))
		return;
	if (d->info.flags & INSN_F_SYSEXIT) {
		if (read_msr(tv, X86_MSR_IA32_SYSENTER_CS, &cs) || !(cs & 0xfffc))
			return;
		v = sv->regs.rdx;
	} else {
		if (!(sr->efer & X86_EFER_SCE))
			return;
		v = sv->regs.rcx;
	}
	if (d->info.opsize != 8)
		v &= 0xffffffffULL;
	else if ((uint64_t)((int64_t)(v << 16) >> 16) != v)
		return; /* non-canonical: #GP in ring 0 */
	d->target = v;
	d->has_target = true;
}

/* Decode the instruction at linear @la / @ip; false when it cannot be read or decoded. */
static bool decode_at(const struct tracer_vcpu *tv, struct step_vcpu *sv, enum insn_mode mode,
		      uint8_t cpl, uint64_t la, uint64_t ip, struct step_decoded *d)
{
	uint8_t bytes[INSN_MAX_LEN];
	struct gva_space s;
	size_t n;

	address_space(tv, sv, &s);
	n = gva__read_prefix(&s, la, bytes, sizeof(bytes));
	memset(d, 0, sizeof(*d));
	d->la = la;
	if (n == 0 || insn__decode(&sv->dec, mode, ip, bytes, n, &d->info))
		return false;
	if (d->info.flags & INSN_F_DIRECT) {
		d->target = linear(sv, mode, d->info.target);
		d->has_target = true;
	} else if (d->info.flags & STEP_EVENT_FLAGS) {
		predict_event(tv, sv, mode, cpl, d);
	} else if (d->info.kind == VBTS_BR_SYSRET) {
		predict_sysret(tv, sv, cpl, d);
	}
	return true;
}

/*
 * The return address of an iret or far ret, popped from the stack it will use, the CPL it
 * returns to, and the instruction there: the step after an iret may only stop past that
 * instruction. The return CS is taken as flat outside real mode; when it is not, the
 * prediction fails to match and a gap is written instead of a branch.
 */
static void predict_return(const struct tracer_vcpu *tv, struct step_vcpu *sv,
			   enum insn_mode mode, struct step_insn *in)
{
	const struct kvm_sregs *sr = &sv->sregs;
	unsigned int sz = in->first.info.opsize;
	uint64_t sp = sv->regs.rsp, ip = 0, cs = 0, fl = 0;
	struct gva_space s;

	if ((sz != 2 && sz != 4 && sz != 8) || ((sv->regs.rflags & X86_RFLAGS_VM) && !in->lmode))
		return;
	if (mode != INSN_MODE_LONG64)
		sp = (sr->ss.base + (sr->ss.db ? (sp & 0xffffffffULL) : (sp & 0xffff))) &
		     0xffffffffULL;
	address_space(tv, sv, &s);
	if (gva__read(&s, sp, &ip, sz) || gva__read(&s, sp + sz, &cs, sz))
		return;
	if (in->real) {
		in->first.target = ((cs & 0xffff) << 4) + (ip & 0xffff);
		in->landing_cpl = 0;
	} else {
		in->first.target = mode == INSN_MODE_LONG64 ? ip : (ip & 0xffffffffULL);
		in->landing_cpl = cs & 3;
		in->ret_cpl = cs & 3;
		in->ret_cpl_known = true;
		if (in->first.info.kind == VBTS_BR_IRET && !in->lmode) {
			/* a nested-task return, or a return to virtual-8086 mode */
			if ((sv->regs.rflags & X86_RFLAGS_NT) ||
			    gva__read(&s, sp + 2 * sz, &fl, sz) || (fl & X86_RFLAGS_VM))
				in->ret_cpl_known = false;
		}
	}
	in->first.has_target = true;
	if (in->first.info.kind == VBTS_BR_IRET)
		in->has_landing = decode_at(tv, sv, mode, in->landing_cpl, in->first.target, ip,
					    &in->landing);
}

/*
 * The first instruction of the handler an event-raising instruction enters (64-bit code in
 * long mode, else a flat 32-bit segment is assumed): where the step may stop after it when
 * the host steps into the handler (measured here for ud2).
 */
static void decode_handler(const struct tracer_vcpu *tv, struct step_vcpu *sv,
			   struct step_insn *in)
{
	enum insn_mode hmode = in->lmode ? INSN_MODE_LONG64 : INSN_MODE_PROT32;

	in->landing_cpl = 0;
	in->has_landing = decode_at(tv, sv, hmode, 0, in->first.target, in->first.target,
				    &in->landing);
}

/*
 * Whether a conditional branch about to run under the step is taken, from the current RFLAGS
 * and RCX (a `mov ss`/`pop ss` before it changes neither): a jcc whose target is its own
 * fall-through address is told from a not-taken one only this way.
 */
static void eval_cond(const struct step_vcpu *sv, struct step_decoded *d)
{
	d->cond_known = !step__cond_taken(&d->info, sv->regs.rflags, sv->regs.rcx,
					  &d->cond_taken);
}

static void decode_next(const struct tracer_vcpu *tv, struct step_vcpu *sv,
			const struct step_obs *o, struct step_insn *in)
{
	enum insn_mode mode = state_mode(sv);
	uint64_t ip2;

	memset(in, 0, sizeof(*in));
	in->cpl = o->cpl;
	in->real = !(sv->sregs.cr0 & X86_CR0_PE);
	in->lmode = sv->sregs.efer & X86_EFER_LMA;
	in->valid = decode_at(tv, sv, mode, o->cpl, o->la, sv->regs.rip, &in->first);
	if (!in->valid)
		return;
	eval_cond(sv, &in->first);
	if (in->first.info.kind == VBTS_BR_IRET || in->first.info.kind == VBTS_BR_FAR_RET)
		predict_return(tv, sv, mode, in);
	else if ((in->first.info.flags & STEP_EVENT_FLAGS) && in->first.has_target && !in->real)
		decode_handler(tv, sv, in);
	if (!(in->first.info.flags & INSN_F_MOV_SS))
		return;
	ip2 = sv->regs.rip + in->first.info.len;
	if (mode != INSN_MODE_LONG64)
		ip2 &= (mode == INSN_MODE_PROT32 || mode == INSN_MODE_COMPAT32) ? 0xffffffffULL :
										  0xffffULL;
	in->has_second = true;
	in->valid = decode_at(tv, sv, mode, o->cpl, linear(sv, mode, ip2), ip2, &in->second);
	if (in->valid)
		eval_cond(sv, &in->second);
}

/*
 * The guest's own BTS: each branch of @o stored into its buffer (guest-bts.c), a threshold
 * PMI noted for the next run, the first of a run of dropped records told in the trace.
 */
static void store_guest_bts(struct tracer_vcpu *tv, struct step_vcpu *sv,
			    const struct step_out *o)
{
	struct guest_bts *gb = tv->gbts;
	enum guest_bts_drop drop;
	struct gva_space s;

	if (!gb || !o->nbr || !guest_bts__enabled(gb))
		return;
	/* A RESET or INIT since the last store cleared DEBUGCTL (KVM did it unseen). */
	if (guest_bts__check_reset(gb, tv->fd) && !guest_bts__enabled(gb))
		return;
	address_space(tv, sv, &s);
	for (unsigned int i = 0; i < o->nbr; i++) {
		switch (guest_bts__store(gb, &s, o->br[i].from, o->br[i].to, o->br[i].cpl,
					 &drop)) {
		case GUEST_BTS_PMI:
			sv->pmi = true;
			gb->dropping = false;
			break;
		case GUEST_BTS_STORED:
			gb->dropping = false;
			break;
		case GUEST_BTS_DROPPED:
			if (gb->dropping)
				break;
			gb->dropping = true;
			if (tv->ring && !ring_writer__escape(tv->ring, VBTS_ESC_GUEST_BTS_DROP,
							     o->br[i].from, drop))
				tv->stat_records++;
			break;
		default:
			break;
		}
	}
}

static void write_out(struct tracer_vcpu *tv, struct step_vcpu *sv, const struct step_out *o)
{
	const struct step_core *c = &sv->core;

	/* one publication for the step's records; a frozen ring counts them as lost itself */
	if (tv->ring && o->n && ring_writer__append_n(tv->ring, o->rec, o->n) == 0)
		tv->stat_records += o->n;
	tv->stat_steps = c->steps;
	tv->stat_gaps = c->gaps;
	store_guest_bts(tv, sv, o);
}

/* Whether an event is in flight that the CPU would deliver or unblock around the instruction. */
static bool events_quiet(const struct tracer_vcpu *tv, bool iret)
{
	struct kvm_vcpu_events ev;

	if (kvm__ioctl_quiet(tv->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return false;
	if (ev.exception.injected || ev.exception.pending || ev.nmi.injected || ev.nmi.pending ||
	    ev.interrupt.injected || ev.interrupt.shadow)
		return false;
	return !(iret && ev.nmi.masked); /* iret unblocks NMIs: not emulated */
}

/* The MSRs @kind reads; false when they cannot be read or the CPU's own step follows it. */
static bool transition_msrs(const struct tracer_vcpu *tv, uint8_t kind,
			    struct transition_state *st)
{
	if (kind != VBTS_BR_SYSRET && kind != VBTS_BR_SYSCALL)
		return true;
	if (read_msr(tv, X86_MSR_STAR, &st->star))
		return false;
	if (kind == VBTS_BR_SYSRET)
		return true;
	/*
	 * Every syscall, also one whose FMASK keeps TF: stepped by the CPU, it would save the
	 * step's TF in R11, and the guest's SYSRET would set TF for good (a #DB of its own once
	 * the step stops).
	 */
	if (read_msr(tv, X86_MSR_FMASK, &st->fmask))
		return false;
	return !read_msr(tv, X86_MSR_LSTAR, &st->lstar);
}

/* Give the guest the state @st the VMM computed for @d and record the transfer. */
static int apply_emulated(struct tracer_vcpu *tv, struct step_vcpu *sv, const struct step_obs *o,
			  const struct step_decoded *d, const struct transition_state *st,
			  struct step_out *out)
{
	struct step_obs now;
	int ret;

	ret = kvm__ioctl(tv->fd, KVM_SET_SREGS, &st->sregs);
	if (ret < 0)
		return ret;
	ret = kvm__ioctl(tv->fd, KVM_SET_REGS, &st->regs);
	if (ret < 0)
		return ret;
	ret = read_state(tv, sv, false);
	if (ret < 0)
		return ret;
	observe(sv, &now);
	step_core__emulated(&sv->core, o, d, &now, tracer_vcpu__now_ns(tv), out);
	return 1;
}

/*
 * Execute the privilege transition at RIP in the VMM (transition.c) when the step would not
 * follow it: the guest gets the architectural result through KVM_SET_SREGS/KVM_SET_REGS and
 * guest memory, the branch is recorded, and stepping goes on at the target. Only when the
 * host can step both the CPL here and the CPL there.
 *
 * Return: 1 when executed (@sv holds the new state, read back from KVM), 0 when the CPU is to
 * execute the instruction, -errno when setting the state failed.
 */
static int run_transition(struct tracer_vcpu *tv, struct step_vcpu *sv, const struct step_obs *o,
			  const struct step_insn *next, struct step_out *out)
{
	const struct step_core *c = &sv->core;
	struct transition_state st = { .cpl_ok = 0 };
	uint8_t kind = next->first.info.kind;

	if (!next->valid || next->has_second || state_mode(sv) != INSN_MODE_LONG64 ||
	    !transition__wanted(&next->first.info) || !(o->cpl == 0 ? c->can_cpl0 : c->can_cpl3))
		return 0;
	if (!transition_msrs(tv, kind, &st) || !events_quiet(tv, kind == VBTS_BR_IRET))
		return 0;
	/* the special registers as they are now, not as cached */
	if (kvm__ioctl(tv->fd, KVM_GET_REGS, &st.regs) < 0 ||
	    kvm__ioctl(tv->fd, KVM_GET_SREGS, &st.sregs) < 0)
		return 0;
	if (st.regs.rip != sv->regs.rip)
		return 0;
	st.cpl_ok = (c->can_cpl0 ? 1U : 0U) | (c->can_cpl3 ? 0xeU : 0U);
	if (transition__emulate(&st, &next->first.info, mem_ptr, tv->mem))
		return 0;
	return apply_emulated(tv, sv, o, &next->first, &st, out);
}

static void gprs(const struct kvm_regs *r, uint64_t g[INSN_GPR_MAX])
{
	g[INSN_RAX] = r->rax;
	g[INSN_RCX] = r->rcx;
	g[INSN_RDX] = r->rdx;
	g[INSN_RBX] = r->rbx;
	g[INSN_RSP] = r->rsp;
	g[INSN_RBP] = r->rbp;
	g[INSN_RSI] = r->rsi;
	g[INSN_RDI] = r->rdi;
	g[INSN_R8] = r->r8;
	g[INSN_R9] = r->r9;
	g[INSN_R10] = r->r10;
	g[INSN_R11] = r->r11;
	g[INSN_R12] = r->r12;
	g[INSN_R13] = r->r13;
	g[INSN_R14] = r->r14;
	g[INSN_R15] = r->r15;
}

/* The page fault the load or store at RIP raises, if it raises one for sure; false otherwise. */
static bool predict_fault(const struct tracer_vcpu *tv, struct step_vcpu *sv,
			  const struct transition_state *st, const struct step_decoded *d,
			  struct insn_mem *m, uint32_t *code)
{
	uint8_t bytes[INSN_MAX_LEN];
	uint64_t g[INSN_GPR_MAX];
	struct gva_space s;
	size_t n;

	address_space(tv, sv, &s);
	n = gva__read_prefix(&s, d->la, bytes, sizeof(bytes));
	gprs(&st->regs, g);
	if (n < d->info.len ||
	    insn__mem_access(&sv->dec, st->regs.rip, bytes, n, g, st->sregs.fs.base,
			     st->sregs.gs.base, m))
		return false;
	return transition__user_fault(st, m->la, m->len, m->write, mem_ptr, tv->mem, code) == 1;
}

/*
 * A load or store in user mode that will raise a page fault: the CPU would enter the handler
 * with TF clear. The VMM delivers the fault itself (transition.c) when it knows the fault for
 * sure, records the exception branch and steps on in the handler. When the VMM's debugger
 * asks for it (tv->fault_stop) the fault is held instead, the vCPU where it faulted, until
 * the debugger resumes it (tv->fault_pass).
 *
 * Return: as run_transition(), or 2 when the fault is held (tv->fault).
 */
static int run_fault(struct tracer_vcpu *tv, struct step_vcpu *sv, const struct step_obs *o,
		     const struct step_insn *next, struct step_out *out)
{
	const struct step_core *c = &sv->core;
	struct transition_state st = { .cpl_ok = 0 };
	struct step_decoded d = next->first;
	struct insn_mem m;
	uint32_t code;

	if (!next->valid || next->has_second || o->cpl != 3 || !c->can_cpl0 || !c->can_cpl3 ||
	    state_mode(sv) != INSN_MODE_LONG64 || d.info.kind != VBTS_BR_UNKNOWN ||
	    (d.info.flags & (STEP_EVENT_FLAGS | INSN_F_REP_STRING | INSN_F_MOV_SS)))
		return 0;
	st.regs = sv->regs;
	st.sregs = sv->sregs;
	if (!predict_fault(tv, sv, &st, &d, &m, &code) || !events_quiet(tv, false))
		return 0;
	/* again on the state as it is now, not as cached */
	if (kvm__ioctl(tv->fd, KVM_GET_REGS, &st.regs) < 0 ||
	    kvm__ioctl(tv->fd, KVM_GET_SREGS, &st.sregs) < 0 || st.regs.rip != sv->regs.rip ||
	    !predict_fault(tv, sv, &st, &d, &m, &code))
		return 0;
	if (__atomic_load_n(&tv->fault_stop, __ATOMIC_ACQUIRE) &&
	    !__atomic_exchange_n(&tv->fault_pass, false, __ATOMIC_ACQ_REL)) {
		tv->fault = (struct tracer_fault){ .held = true, .vector = X86_TRAP_PF,
						   .error_code = code, .address = m.la };
		return 2;
	}
	st.cpl_ok = 0x9; /* CPL 0 and 3: both steppable, checked above */
	if (transition__page_fault(&st, m.la, code, mem_ptr, tv->mem))
		return 0;
	d.info.kind = VBTS_BR_EXCEPTION;
	d.info.vector = 14;
	d.info.flags |= INSN_F_VECTOR;
	return apply_emulated(tv, sv, o, &d, &st, out);
}

/*
 * A threshold PMI of the guest's BTS goes through LVTPC (guest_bts__pmi()); a fixed vector is
 * left pending in the LAPIC, an NMI is delivered by the VMM (deliver_nmi()).
 */
static int raise_pmi(struct tracer_vcpu *tv, struct step_vcpu *sv)
{
	bool nmi = false;
	int ret;

	sv->pmi = false;
	ret = guest_bts__pmi(tv->fd, tv->gbts->mask_lvtpc, &nmi);
	if (ret == -EAGAIN)
		return 0;
	if (ret < 0)
		return ret;
	sv->nmi |= nmi;
	return 0;
}

/*
 * The PMI's NMI, delivered by the VMM through the guest's IDT as the CPU would between two
 * instructions (transition__interrupt()), so that the event is a branch record, in the guest's
 * buffer too, and the step goes on in the handler (the CPU clears TF on the way); NMIs are then
 * blocked until the guest's IRET. While they are blocked, or an event is in flight, it waits.
 * Where the VMM cannot deliver it (not 64-bit mode, an unusual gate), KVM does (KVM_NMI) and
 * the handler is a gap.
 *
 * Return: 1 when delivered by the VMM (@sv holds the new state), 0 when it waits or KVM
 * delivers it, -errno.
 */
static int deliver_nmi(struct tracer_vcpu *tv, struct step_vcpu *sv, const struct step_obs *o,
		       struct step_out *out)
{
	const struct step_core *c = &sv->core;
	struct transition_state st = { .cpl_ok = 0 };
	struct step_decoded d = { .la = o->la };
	struct kvm_vcpu_events ev;
	int ret;

	ret = kvm__ioctl(tv->fd, KVM_GET_VCPU_EVENTS, &ev);
	if (ret < 0)
		return ret;
	if (ev.nmi.masked || ev.nmi.injected || ev.nmi.pending || ev.exception.injected ||
	    ev.exception.pending || ev.interrupt.injected ||
	    (ev.interrupt.shadow & KVM_X86_SHADOW_INT_MOV_SS))
		return 0;
	sv->nmi = false;
	if (kvm__ioctl(tv->fd, KVM_GET_REGS, &st.regs) < 0 ||
	    kvm__ioctl(tv->fd, KVM_GET_SREGS, &st.sregs) < 0)
		return -EIO;
	st.cpl_ok = c->can_cpl0 ? 1U : 0U;
	if (transition__interrupt(&st, X86_TRAP_NMI, mem_ptr, tv->mem)) {
		ret = kvm__ioctl(tv->fd, KVM_NMI, 0);
		return ret < 0 ? ret : 0;
	}
	d.info.kind = VBTS_BR_INTERRUPT;
	d.info.flags = INSN_F_VECTOR;
	d.info.vector = X86_TRAP_NMI;
	ret = apply_emulated(tv, sv, o, &d, &st, out);
	if (ret < 0)
		return ret;
	ev.nmi.masked = 1;
	ev.flags &= KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SHADOW |
		    KVM_VCPUEVENT_VALID_SMM;
	ret = kvm__ioctl(tv->fd, KVM_SET_VCPU_EVENTS, &ev);
	return ret < 0 ? ret : 1;
}

/* Whether anything needs the step: the host's trace, or the guest's own BTS. */
static bool wanted(const struct tracer_vcpu *tv, const struct step_vcpu *sv)
{
	return tv->ring || sv->nmi || sv->pmi || (tv->gbts && guest_bts__enabled(tv->gbts));
}

static int set_step(struct tracer_vcpu *tv, struct step_vcpu *sv, bool on)
{
	struct kvm_guest_debug dbg = { 0 };
	int ret;

	if (!on && !sv->dbg_on)
		return 0;
	if (on)
		dbg.control = KVM_GUESTDBG_ENABLE | KVM_GUESTDBG_SINGLESTEP;
	ret = kvm__ioctl(tv->fd, KVM_SET_GUEST_DEBUG, &dbg);
	if (ret < 0)
		return ret;
	sv->dbg_on = on;
	return 0;
}

static int step_vcpu_init(struct tracer_vcpu *tv)
{
	struct step_out out = { .n = 0 };
	struct step_obs o;
	struct step_vcpu *sv;
	int ret;

	sv = calloc(1, sizeof(*sv));
	if (!sv)
		return -ENOMEM;
	ret = insn_decoder__init(&sv->dec);
	if (ret)
		goto err_free;
	ret = read_state(tv, sv, false);
	if (ret)
		goto err_free;
	sv->core.filter = tv->cpl;
	sv->core.can_cpl0 = tv->caps.step_cpl0;
	sv->core.can_cpl3 = tv->caps.step_cpl3;
	observe(sv, &o);
	step_core__start(&sv->core, &o, tracer_vcpu__now_ns(tv), &out);
	write_out(tv, sv, &out);
	tv->priv = sv;
	return 0;

err_free:
	free(sv);
	return ret;
}

static int step_before_run(struct tracer_vcpu *tv)
{
	struct step_vcpu *sv = tv->priv;
	struct step_out out = { .n = 0 };
	struct step_insn next;
	struct step_obs o;
	bool arm;
	int ret;

	sv->core.filter = tv->cpl; /* the control socket may change it between runs */
	tv->fault.held = false;
	if (!wanted(tv, sv)) {
		/* neither traced by the host nor by the guest: run unstepped */
		sv->core.armed = false;
		sv->fresh = false;
		return set_step(tv, sv, false);
	}
	if (!sv->fresh || tv->regs_changed) {
		tv->regs_changed = false;
		ret = read_state(tv, sv, false);
		if (ret)
			return ret;
	}
	if (sv->pmi) {
		ret = raise_pmi(tv, sv);
		if (ret)
			return ret;
	}
	observe(sv, &o);
	if (sv->nmi) {
		ret = deliver_nmi(tv, sv, &o, &out);
		if (ret < 0)
			return ret;
		if (ret) {
			write_out(tv, sv, &out);
			out.n = 0;
			out.nbr = 0;
			observe(sv, &o);
		}
	}
	decode_next(tv, sv, &o, &next);
	for (unsigned int i = 0; i < TRANSITION_CHAIN_MAX; i++) {
		ret = run_transition(tv, sv, &o, &next, &out);
		if (ret == 0)
			ret = run_fault(tv, sv, &o, &next, &out);
		if (ret < 0)
			return ret;
		if (ret == 0)
			break;
		if (ret == 2) {
			/* held for the debugger: KVM_RUN returns at once, nothing runs */
			tv->run->immediate_exit = 1;
			sv->fresh = false;
			return 0;
		}
		write_out(tv, sv, &out);
		out.n = 0;
		out.nbr = 0;
		observe(sv, &o);
		decode_next(tv, sv, &o, &next);
	}
	/* a resumption from a held fault is for that fault alone */
	__atomic_store_n(&tv->fault_pass, false, __ATOMIC_RELEASE);
	arm = step_core__plan(&sv->core, &o, &next, tracer_vcpu__now_ns(tv), &out);
	write_out(tv, sv, &out);
	ret = set_step(tv, sv, arm);
	if (ret)
		return ret;
	if (tv->caps.sync_regs)
		tv->run->kvm_valid_regs = KVM_SYNC_X86_REGS | KVM_SYNC_X86_SREGS;
	/*
	 * The run changes the state: after_exit() reads it again. Between that and the next
	 * before_run() the VMM only dispatches the exit, which leaves the registers alone (I/O
	 * and MMIO results reach the guest through the next KVM_RUN), so that reading stays the
	 * state the next run starts from.
	 */
	sv->fresh = false;
	return 0;
}

static int step_after_exit(struct tracer_vcpu *tv)
{
	struct step_vcpu *sv = tv->priv;
	struct kvm_run *run = tv->run;
	struct step_out out = { .n = 0 };
	struct step_obs o;
	bool singlestep, consumed;
	int ret;

	/* An interrupted KVM_RUN may not have refreshed the sync area. */
	ret = read_state(tv, sv, run->exit_reason != KVM_EXIT_INTR);
	if (ret)
		return ret;
	observe(sv, &o);
	singlestep = run->exit_reason == KVM_EXIT_DEBUG &&
		     run->debug.arch.exception == X86_TRAP_DB && (run->debug.arch.dr6 & X86_DR6_BS);
	consumed = step_core__exit(&sv->core, &o, singlestep, tracer_vcpu__now_ns(tv), &out);
	write_out(tv, sv, &out);
	if (consumed && out.hlt_retired) {
		/* The step reported the hlt's completion instead of the halt: hand the halt on. */
		run->exit_reason = KVM_EXIT_HLT;
		return 0;
	}
	return consumed ? 1 : 0;
}

static void step_vcpu_fini(struct tracer_vcpu *tv)
{
	struct step_vcpu *sv = tv->priv;
	struct step_out out = { .n = 0 };
	struct step_obs o;

	if (!sv)
		return;
	set_step(tv, sv, false);
	observe(sv, &o);
	step_core__stop(&sv->core, &o, tracer_vcpu__now_ns(tv), &out);
	write_out(tv, sv, &out);
	free(sv);
	tv->priv = NULL;
}

const struct tracer_ops step_tracer_ops = {
	.name = "step",
	.vcpu_init = step_vcpu_init,
	.before_run = step_before_run,
	.after_exit = step_after_exit,
	.vcpu_fini = step_vcpu_fini,
};
