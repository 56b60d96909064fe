// SPDX-License-Identifier: GPL-2.0
/*
 * step-core.c - the single-step tracer's decisions, as pure functions of observed states.
 *
 * What a step means, measured with KVM_SET_GUEST_DEBUG(SINGLESTEP) re-armed before every
 * KVM_RUN, on this host's KVM ("here": ring 0 emulated) and on kvm-amd nested in the QEMU
 * harness ("nested"):
 * - A single-step KVM_EXIT_DEBUG (DR6.BS, exception 1) comes after one instruction retired,
 *   or after two following `mov ss`/`pop ss` (both: `mov %eax,%ss; jmp` stopped at the jump
 *   target).
 * - Other exits come either before the instruction completed (RIP still at it; the next
 *   KVM_RUN completes it and the step trap follows) or after it completed, with no step trap
 *   for it at all (RIP past it). Here: IN, MMIO reads and each REP OUTS/STOS iteration exit
 *   before, OUT and MMIO writes after. Nested: IN, OUT, MMIO reads and REP iterations exit
 *   before, MMIO writes after. Same RIP means "not yet", the fall-through means "retired".
 * - HLT: nested, KVM_EXIT_HLT with RIP past the hlt. Here the step wins: a KVM_EXIT_DEBUG
 *   past the hlt, and then either the next KVM_RUN reports the halt (a 64-bit guest) or the
 *   guest runs on as if it never halted (a 32-bit one); the glue turns that step back into a
 *   halt exit (@hlt_retired).
 * - Delivery through the guest's IDT clears TF. Nested, the handler runs unseen and the step
 *   trap comes after the first instruction its iret returns to (int $0x20 at X, handler
 *   `nop; iret`: next stop at X + 2 + 1). Here ud2 stopped after the handler's first
 *   instruction, and int n / int3 in ring 0 end in KVM_EXIT_INTERNAL_ERROR. Either way control
 *   reappears somewhere unpredicted: the branch to a verified handler, then a gap from it.
 * - iretq: nested, the step stops at the return address. Here it stops only after the
 *   instruction there (the emulated iret does not trap): the iret's return address is read
 *   from the stack beforehand and that instruction decoded (@landing), so neither case
 *   records a branch to the wrong place. lret stops at the return address in both.
 * - SYSCALL with a FMASK that keeps TF: the step stops at LSTAR (both).
 * - Nested, sysretq and an iretq to ring 3 whose popped RFLAGS has TF clear run the user code
 *   unstepped, and int n / syscall with TF in FMASK enter the kernel with TF clear: step.c
 *   executes those in the VMM (transition.c) and reports them with step_core__emulated().
 */
#include <errno.h>
#include <string.h>

#include "x86.h"
#include "step-int.h"

static void emit(struct step_out *out, const struct vbts_record *r)
{
	if (out->n < STEP_OUT_MAX)
		out->rec[out->n++] = *r;
}

static void emit_escape(struct step_out *out, unsigned int kind, uint64_t payload, uint64_t aux)
{
	struct vbts_record r = vbts_record__make_escape(kind, payload, aux);

	emit(out, &r);
}

static bool cpl_wanted(enum vbts_cpl_filter filter, uint8_t cpl)
{
	switch (filter) {
	case VBTS_CPL_USER:
		return cpl > 0;
	case VBTS_CPL_KERNEL:
		return cpl == 0;
	default:
		return true;
	}
}

static void emit_branch(struct step_out *out, enum vbts_cpl_filter filter, uint8_t cpl,
			const struct step_decoded *d, uint64_t to)
{
	struct vbts_record r = {
		.from = d->la,
		.to = to,
		.flags = VBTS_REC_CPL_VALID | ((uint64_t)(cpl & 3) << VBTS_REC_CPL_SHIFT) |
			 ((uint64_t)d->info.kind << VBTS_REC_KIND_SHIFT),
	};

	if (out->nbr < STEP_OUT_MAX)
		out->br[out->nbr++] = (struct step_branch){ .from = d->la, .to = to, .cpl = cpl };
	if (!cpl_wanted(filter, cpl))
		return;
	if (d->info.flags & INSN_F_VECTOR)
		r.flags |= ((uint64_t)d->info.vector << VBTS_REC_VECTOR_SHIFT) |
			   VBTS_REC_VECTOR_VALID;
	emit(out, &r);
}

/*
 * Transfers after which the step trap may not come: IDT deliveries and SYSCALL clear TF,
 * SYSRET/SYSEXIT load RFLAGS from the guest's registers (measured nested: no trap after
 * sysretq, the task ran unseen until the next exit).
 */
static bool unseen_after(const struct step_decoded *d)
{
	return (d->info.flags & STEP_EVENT_FLAGS) || d->info.kind == VBTS_BR_SYSRET;
}

static uint64_t gap_reason(const struct step_decoded *d)
{
	if ((d->info.flags & (INSN_F_SYSCALL | INSN_F_SYSENTER)) ||
	    d->info.kind == VBTS_BR_SYSRET)
		return VBTS_GAP_SYSCALL;
	if (d->info.flags & INSN_F_VECTOR)
		return VBTS_GAP_IDT;
	return VBTS_GAP_UNKNOWN;
}

static uint64_t next_la(const struct step_decoded *d)
{
	return d->la + d->info.len;
}

/* @d did not fall through: explain where it went, or give up with a gap. */
static enum step_verdict resolve(const struct step_decoded *d, uint8_t cpl, uint64_t now_la,
				 bool singlestep, enum vbts_cpl_filter filter,
				 struct step_out *out)
{
	if (unseen_after(d)) {
		if (!d->has_target) {
			emit_escape(out, VBTS_ESC_GAP_BEGIN, d->la, gap_reason(d));
			return STEP_LOST;
		}
		emit_branch(out, filter, cpl, d, d->target);
		if (now_la == d->target)
			return STEP_DONE;
		/* the handler ran without us from its first instruction on */
		emit_escape(out, VBTS_ESC_GAP_BEGIN, d->target, gap_reason(d));
		return STEP_LOST;
	}
	if (d->info.kind == VBTS_BR_UNKNOWN) {
		/* not a branch, yet control is elsewhere: an exception or interrupt */
		emit_escape(out, VBTS_ESC_GAP_BEGIN, d->la, VBTS_GAP_UNKNOWN);
		return STEP_LOST;
	}
	if (d->has_target) {
		/* direct branches; iret with its popped return address */
		if (now_la == d->target) {
			emit_branch(out, filter, cpl, d, now_la);
			return STEP_DONE;
		}
		emit_escape(out, VBTS_ESC_GAP_BEGIN, d->la, VBTS_GAP_UNKNOWN);
		return STEP_LOST;
	}
	if (singlestep && !(d->info.flags & INSN_F_DIRECT)) {
		/* an indirect, far or return transfer: the step trap shows where it went */
		emit_branch(out, filter, cpl, d, now_la);
		return STEP_DONE;
	}
	/* another exit after an indirect transfer: it may not have been the transfer's target */
	emit_escape(out, VBTS_ESC_GAP_BEGIN, d->la, VBTS_GAP_UNKNOWN);
	return STEP_LOST;
}

/* The jcc condition cc (0..15): odd ones are the negation of the even one before them. */
static bool test_cc(unsigned int cc, uint64_t fl)
{
	bool r;

	switch ((cc >> 1) & 7) {
	case 0:
		r = fl & X86_RFLAGS_OF;
		break;
	case 1:
		r = fl & X86_RFLAGS_CF;
		break;
	case 2:
		r = fl & X86_RFLAGS_ZF;
		break;
	case 3:
		r = fl & (X86_RFLAGS_CF | X86_RFLAGS_ZF);
		break;
	case 4:
		r = fl & X86_RFLAGS_SF;
		break;
	case 5:
		r = fl & X86_RFLAGS_PF;
		break;
	case 6:
		r = !(fl & X86_RFLAGS_SF) != !(fl & X86_RFLAGS_OF);
		break;
	default:
		r = (fl & X86_RFLAGS_ZF) || !(fl & X86_RFLAGS_SF) != !(fl & X86_RFLAGS_OF);
		break;
	}
	return (cc & 1) ? !r : r;
}

int step__cond_taken(const struct insn_info *info, uint64_t rflags, uint64_t rcx, bool *taken)
{
	uint64_t mask;

	if (!(info->flags & INSN_F_COND) || info->kind == VBTS_BR_INT)
		return -EINVAL;
	if (info->kind == VBTS_BR_JCC && (info->cond & 0xf0) == 0x70) {
		*taken = test_cc(info->cond & 0xf, rflags);
		return 0;
	}
	if (info->adsize != 2 && info->adsize != 4 && info->adsize != 8)
		return -EINVAL;
	mask = info->adsize == 8 ? ~0ULL : (1ULL << (info->adsize * 8)) - 1;
	switch (info->cond) {
	case 0xe0: /* loopne: --rCX != 0 && !ZF */
	case 0xe1: /* loope: --rCX != 0 && ZF */
	case 0xe2: /* loop: --rCX != 0 */
		if (info->kind != VBTS_BR_LOOP)
			return -EINVAL;
		*taken = ((rcx - 1) & mask) &&
			 (info->cond == 0xe2 || !(rflags & X86_RFLAGS_ZF) == (info->cond == 0xe0));
		return 0;
	case 0xe3: /* jrcxz: rCX == 0 */
		if (info->kind != VBTS_BR_JRCXZ)
			return -EINVAL;
		*taken = !(rcx & mask);
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * A transfer to its own fall-through address (`call 1f; 1:`, `ljmp $cs, $1f; 1:`) is taken
 * all the same, and hardware BTS records it: so does the step, once the step trap shows the
 * instruction retired. A conditional one (`je 1f; 1:`) is recorded when its condition,
 * evaluated on the RFLAGS and rCX it executed with, held. QEMU's execution log, the oracle,
 * shows neither: the test guests contain none (tests/oracle checks their images).
 */
static bool taken_to_next(const struct step_decoded *d)
{
	if (d->info.kind == VBTS_BR_UNKNOWN || (d->info.flags & (INSN_F_REP_STRING | INSN_F_HLT)))
		return false;
	if (d->info.flags & INSN_F_COND)
		return d->cond_known && d->cond_taken;
	return true;
}

/*
 * The step after an iret or an event stopped one instruction past the return address or the
 * handler's entry (this host's KVM emulates them and traps only after the next instruction):
 * control went to the predicted address and the instruction there either fell through or
 * took its direct branch.
 */
static bool resolve_landing(const struct step_insn *in, uint64_t now_la,
			    enum vbts_cpl_filter filter, struct step_out *out)
{
	const struct step_decoded *i = &in->first, *l = &in->landing;
	bool taken;

	if (!in->has_landing || !i->has_target || l->la != i->target)
		return false;
	if (unseen_after(l) || (l->info.flags & INSN_F_MOV_SS))
		return false;
	/* its flags are the ones the iret pops: a conditional branch to next is not judged */
	taken = (l->info.flags & INSN_F_DIRECT) && now_la == l->target &&
		(l->target != next_la(l) || taken_to_next(l));
	if (!taken && now_la != next_la(l) &&
	    !((l->info.flags & INSN_F_REP_STRING) && now_la == l->la))
		return false;
	emit_branch(out, filter, in->cpl, i, i->target);
	if (taken)
		emit_branch(out, filter, in->landing_cpl, l, now_la);
	out->hlt_retired = l->info.flags & INSN_F_HLT;
	return true;
}

/*
 * int n, int3, ud2, syscall, and into with OF set never fall through: when control shows up at
 * the next instruction or at the instruction itself, a handler ran and returned unseen.
 */
static bool always_leaves(const struct step_decoded *d)
{
	if (!unseen_after(d))
		return false;
	return !(d->info.flags & INSN_F_COND) || d->has_target;
}

static enum step_verdict classify_pair(const struct step_insn *in, uint64_t now_la,
				       bool singlestep, enum vbts_cpl_filter filter,
				       struct step_out *out)
{
	const struct step_decoded *a = &in->first, *b = &in->second;

	if (now_la == a->la) {
		out->retired = 0;
		return singlestep ? STEP_DONE : STEP_PENDING;
	}
	if (now_la == b->la && !singlestep) {
		out->retired = 1; /* the mov ss retired, the second did not yet */
		return STEP_DONE;
	}
	if (always_leaves(b))
		return resolve(b, in->cpl, now_la, singlestep, filter, out);
	if (now_la == b->la || now_la == next_la(b)) {
		out->hlt_retired = singlestep && ((a->info.flags | b->info.flags) & INSN_F_HLT);
		if (singlestep && now_la == next_la(b) && taken_to_next(b))
			emit_branch(out, filter, in->cpl, b, now_la);
		return STEP_DONE;
	}
	if (b->info.kind == VBTS_BR_UNKNOWN) {
		/* neither transfers control: the mov ss itself may have faulted */
		emit_escape(out, VBTS_ESC_GAP_BEGIN, a->la, VBTS_GAP_UNKNOWN);
		return STEP_LOST;
	}
	return resolve(b, in->cpl, now_la, singlestep, filter, out);
}

enum step_verdict step__classify(const struct step_insn *in, uint64_t now_la, bool singlestep,
				 enum vbts_cpl_filter filter, struct step_out *out)
{
	const struct step_decoded *a = &in->first;

	out->retired = in->has_second ? 2 : 1;
	if (in->has_second)
		return classify_pair(in, now_la, singlestep, filter, out);

	if (now_la == a->la && !singlestep) {
		out->retired = 0;
		return STEP_PENDING;
	}
	if (always_leaves(a)) {
		if (singlestep && a->has_target && now_la != a->target &&
		    resolve_landing(in, now_la, filter, out)) {
			out->retired = 2;
			return STEP_DONE;
		}
		return resolve(a, in->cpl, now_la, singlestep, filter, out);
	}
	if (now_la == next_la(a)) {
		out->hlt_retired = singlestep && (a->info.flags & INSN_F_HLT);
		if (singlestep && taken_to_next(a))
			emit_branch(out, filter, in->cpl, a, now_la);
		return STEP_DONE;
	}
	if (now_la == a->la) {
		if (a->info.flags & INSN_F_REP_STRING)
			return STEP_DONE; /* the next iteration */
		if (a->info.kind != VBTS_BR_UNKNOWN)
			return resolve(a, in->cpl, now_la, singlestep, filter, out); /* to itself */
		out->retired = 0;
		return STEP_DONE; /* no progress seen */
	}
	if (singlestep && now_la != a->target && resolve_landing(in, now_la, filter, out)) {
		out->retired = 2;
		return STEP_DONE;
	}
	return resolve(a, in->cpl, now_la, singlestep, filter, out);
}

static bool can_step(const struct step_core *c, uint8_t cpl)
{
	return cpl == 0 ? c->can_cpl0 : c->can_cpl3;
}

/* The CPLs @d may run at or lead to, as a bit mask (bit n = CPL n). */
static unsigned int reach(const struct step_insn *in, const struct step_decoded *d, uint8_t cpl)
{
	unsigned int m = 1U << (cpl & 3);

	if (in->real)
		return m;
	if (d->info.flags & STEP_EVENT_FLAGS)
		return m | 1U; /* handlers run at CPL 0 */
	if ((d->info.kind == VBTS_BR_FAR_JMP || d->info.kind == VBTS_BR_FAR_CALL) && in->lmode)
		return (2U << (cpl & 3)) - 1; /* call gates only go inward: CPL 0..cpl */
	if ((d->info.kind == VBTS_BR_FAR_RET || d->info.kind == VBTS_BR_IRET) && d == &in->first &&
	    in->ret_cpl_known)
		return m | (1U << (in->ret_cpl & 3)) | 1U;
	if (d->info.flags & INSN_F_CPL_CHANGE)
		return 0xf;
	return m;
}

static bool steppable(const struct step_core *c, const struct step_obs *now,
		      const struct step_insn *next)
{
	unsigned int m;

	if (!next->valid)
		m = 0xf; /* unknown: it may be anything */
	else {
		m = reach(next, &next->first, now->cpl);
		if (next->has_second)
			m |= reach(next, &next->second, now->cpl);
	}
	for (uint8_t cpl = 0; cpl < 4; cpl++) {
		if ((m & (1U << cpl)) && !can_step(c, cpl))
			return false;
	}
	return true;
}

static void count(struct step_core *c, const struct step_out *out, unsigned int from)
{
	for (unsigned int i = from; i < out->n; i++) {
		c->records++;
		if (!vbts_record__is_escape(&out->rec[i]))
			c->branches++;
	}
}

static uint64_t masked_cr3(uint64_t cr3)
{
	return cr3 & VBTS_CR3_MASK;
}

static void report_cr3(struct step_core *c, const struct step_obs *now, uint64_t ns,
		       struct step_out *out)
{
	if (c->have_cr3 && masked_cr3(now->cr3) == c->cr3)
		return;
	if (c->have_cr3)
		emit_escape(out, VBTS_ESC_TASK_DEPART, c->cr3, ns);
	c->cr3 = masked_cr3(now->cr3);
	c->have_cr3 = true;
	emit_escape(out, VBTS_ESC_TASK_ARRIVE, c->cr3, ns);
}

void step_core__start(struct step_core *c, const struct step_obs *now, uint64_t ns,
		      struct step_out *out)
{
	uint64_t aux = 0;
	unsigned int n0 = out->n;

	if (c->filter != VBTS_CPL_KERNEL)
		aux |= VBTS_START_CPL_USER;
	if (c->filter != VBTS_CPL_USER)
		aux |= VBTS_START_CPL_KERNEL;
	emit_escape(out, VBTS_ESC_START, ns, aux);
	c->cr3 = masked_cr3(now->cr3);
	c->have_cr3 = true;
	emit_escape(out, VBTS_ESC_TASK_ARRIVE, c->cr3, ns);
	count(c, out, n0);
}

bool step_core__plan(struct step_core *c, const struct step_obs *now, const struct step_insn *next,
		     uint64_t ns, struct step_out *out)
{
	unsigned int n0 = out->n;

	if (!steppable(c, now, next)) {
		if (!c->gap_open) {
			emit_escape(out, VBTS_ESC_GAP_BEGIN, now->la, VBTS_GAP_NOSTEP);
			c->gap_open = true;
			c->gaps++;
		}
		c->armed = false;
		count(c, out, n0);
		return false;
	}
	if (!next->valid) {
		/* step it anyway: the next exit shows where control went */
		if (!c->gap_open) {
			emit_escape(out, VBTS_ESC_GAP_BEGIN, now->la, VBTS_GAP_MEMORY);
			c->gap_open = true;
			c->gaps++;
		}
	} else if (c->gap_open) {
		emit_escape(out, VBTS_ESC_GAP_END, now->la, ns);
		c->gap_open = false;
	}
	c->insn = *next;
	c->insn.cpl = now->cpl;
	c->armed = true;
	count(c, out, n0);
	return true;
}

/*
 * Instructions after which a new CR3 is no surprise: mov to CR3, task switches (far
 * transfers, IDT, iret), and those after which the guest runs unseen anyway (sysret).
 */
static bool may_load_cr3(const struct step_decoded *d)
{
	return (d->info.flags & (INSN_F_CR3 | INSN_F_FAR)) || unseen_after(d) ||
	       d->info.kind == VBTS_BR_IRET;
}

/* Whether a new CR3 is explained by the armed instruction(s). */
static bool cr3_explained(const struct step_core *c, const struct step_obs *now)
{
	const struct step_insn *in = &c->insn;

	if (!c->have_cr3 || masked_cr3(now->cr3) == c->cr3)
		return true;
	return may_load_cr3(&in->first) || (in->has_second && may_load_cr3(&in->second));
}

/* What the armed instruction did; false when control was lost. */
static bool account(struct step_core *c, const struct step_obs *now, bool singlestep,
		    struct step_out *out)
{
	const struct step_insn *in = &c->insn;
	enum step_verdict v;

	if (!cr3_explained(c, now)) {
		/* another task ran: whatever the step shows, it is not this instruction's */
		emit_escape(out, VBTS_ESC_GAP_BEGIN, in->first.la, VBTS_GAP_UNKNOWN);
		return false;
	}
	v = step__classify(in, now->la, singlestep, c->filter, out);
	c->steps += out->retired;
	return v != STEP_LOST;
}

bool step_core__exit(struct step_core *c, const struct step_obs *now, bool singlestep,
		     uint64_t ns, struct step_out *out)
{
	unsigned int n0 = out->n;
	bool consumed = false;

	if (c->armed) {
		c->armed = false;
		consumed = singlestep;
		if (c->insn.valid && !account(c, now, singlestep, out)) {
			c->gap_open = true;
			c->gaps++;
		}
	}
	report_cr3(c, now, ns, out);
	count(c, out, n0);
	return consumed;
}

void step_core__emulated(struct step_core *c, const struct step_obs *from,
			 const struct step_decoded *d, const struct step_obs *now, uint64_t ns,
			 struct step_out *out)
{
	unsigned int n0 = out->n;

	if (c->gap_open) {
		emit_escape(out, VBTS_ESC_GAP_END, from->la, ns);
		c->gap_open = false;
	}
	emit_branch(out, c->filter, from->cpl, d, now->la);
	c->armed = false;
	c->steps++;
	report_cr3(c, now, ns, out);
	count(c, out, n0);
}

void step_core__stop(struct step_core *c, const struct step_obs *now, uint64_t ns,
		     struct step_out *out)
{
	unsigned int n0 = out->n;

	if (c->gap_open) {
		emit_escape(out, VBTS_ESC_GAP_END, now->la, ns);
		c->gap_open = false;
	}
	emit_escape(out, VBTS_ESC_STOP, ns, 0);
	count(c, out, n0);
}

/* ---- gates ------------------------------------------------------------------------------- */

/* The code segment descriptor of @sel: present, code; its base. */
static int code_segment(const struct gva_space *s, const struct step_tables *t, uint16_t sel,
			bool lmode, uint64_t *base)
{
	uint64_t tbase, d;
	uint32_t limit;

	if ((sel & ~3U) == 0)
		return -ENOENT; /* null selector */
	if (sel & 4) {
		if (!t->ldt_usable)
			return -ENOENT;
		tbase = t->ldt_base;
		limit = t->ldt_limit;
	} else {
		tbase = t->gdt_base;
		limit = t->gdt_limit;
	}
	if ((uint64_t)(sel & ~7U) + 7 > limit)
		return -ERANGE;
	if (gva__read(s, tbase + (sel & ~7U), &d, sizeof(d)))
		return -EFAULT;
	if (!(d & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -ENOENT;
	if (!(d & X86_DESC_ACCESS_BIT(X86_DESC_S)) ||
	    !(d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_CODE)))
		return -EOPNOTSUPP;
	if (lmode && !(d & X86_DESC_FLAGS_BIT(X86_DESC_FLAG_L)))
		return -EOPNOTSUPP; /* a 64-bit handler is all the tracer follows in long mode */
	*base = lmode ? 0 : (((d >> 16) & 0xffffff) | (((d >> 56) & 0xff) << 24));
	return 0;
}

int step__gate_target(const struct gva_space *s, const struct step_tables *t, bool real,
		      bool lmode, uint8_t vector, bool soft, uint8_t cpl, uint64_t *la)
{
	uint64_t g[2] = { 0, 0 }, off, base;
	unsigned int size = lmode ? 16 : 8, type, dpl;
	uint16_t sel;
	int err;

	if (real) {
		uint16_t ivt[2];

		if ((uint64_t)vector * 4 + 3 > t->idt_limit)
			return -ERANGE;
		if (gva__read(s, t->idt_base + (uint64_t)vector * 4, ivt, sizeof(ivt)))
			return -EFAULT;
		*la = ((uint64_t)ivt[1] << 4) + ivt[0];
		return 0;
	}
	if ((uint64_t)vector * size + size - 1 > t->idt_limit)
		return -ERANGE;
	if (gva__read(s, t->idt_base + (uint64_t)vector * size, g, size))
		return -EFAULT;
	if (!(g[0] & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -ENOENT;
	type = (g[0] >> 40) & 0xf;
	dpl = (g[0] >> 45) & 3;
	if (soft && cpl > dpl)
		return -EPERM;
	sel = (g[0] >> 16) & 0xffff;
	off = (g[0] & 0xffff) | ((g[0] >> 32) & 0xffff0000ULL);
	if (lmode) {
		if (type != X86_DESC_TYPE_GATE_INT && type != X86_DESC_TYPE_GATE_TRAP)
			return -EOPNOTSUPP;
		off |= g[1] << 32;
	} else if (type == X86_DESC_TYPE_GATE16_INT || type == X86_DESC_TYPE_GATE16_TRAP) {
		off &= 0xffff; /* 16-bit gate */
	} else if (type != X86_DESC_TYPE_GATE_INT && type != X86_DESC_TYPE_GATE_TRAP) {
		return -EOPNOTSUPP; /* task gates and reserved types */
	}
	err = code_segment(s, t, sel, lmode, &base);
	if (err)
		return err;
	*la = lmode ? off : ((base + off) & 0xffffffffULL);
	return 0;
}
