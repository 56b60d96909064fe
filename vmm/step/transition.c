// SPDX-License-Identifier: GPL-2.0
/*
 * transition.c - sysretq, iretq, syscall, int n and user-mode page faults executed by the
 * VMM, as the SDM's pseudo-code for IA-32e mode defines them (SYSRET, IRET "return to outer
 * privilege level", SYSCALL, INT n "interrupt or trap gate" with the 64-bit stack frame, and
 * the same delivery for a #PF with its error code).
 *
 * Two phases: everything is read and checked first while the writes the instruction makes
 * (stack pushes, the accessed bit of a loaded descriptor, accessed/dirty bits of the page
 * tables walked) are queued; only when no check failed are they applied, then the registers.
 */
#include <errno.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "x86.h"
#include "gva.h"
#include "transition.h"

/* The most queued writes: 5 pushes and a few page walks' accessed/dirty bits. */
#define TR_WRITES_MAX 64

/**
 * struct tr_write - one deferred write of 1..8 bytes of guest-physical memory.
 * @gpa: address
 * @val: bytes (little endian), or the bits to set when @or
 * @len: bytes
 * @or:  set the bits of @val instead of storing @val
 */
struct tr_write {
	uint64_t gpa;
	uint64_t val;
	uint8_t len;
	bool or;
};

/**
 * struct tr_ctx - one emulation: the address space (paging registers, accessor), the queued
 * writes.
 */
struct tr_ctx {
	struct gva_space as;
	struct tr_write w[TR_WRITES_MAX];
	unsigned int nw;
};

static int queue(struct tr_ctx *x, uint64_t gpa, uint64_t val, uint8_t len, bool or)
{
	for (unsigned int i = 0; or && i < x->nw; i++) {
		if (x->w[i].or && x->w[i].gpa == gpa && x->w[i].len == len) {
			x->w[i].val |= val;
			return 0;
		}
	}
	if (x->nw == TR_WRITES_MAX)
		return -E2BIG;
	if (!x->as.ptr(x->as.ctx, gpa, len))
		return -EFAULT;
	x->w[x->nw++] = (struct tr_write){ .gpa = gpa, .val = val, .len = len, .or = or };
	return 0;
}

/*
 * Accessed/dirty and descriptor accessed bits are set with atomic ORs, as the CPU sets them,
 * so that another vCPU's update of the same entry is not lost.
 */
static void apply_writes(const struct tr_ctx *x)
{
	for (unsigned int i = 0; i < x->nw; i++) {
		const struct tr_write *w = &x->w[i];
		uint8_t *p = x->as.ptr(x->as.ctx, w->gpa, w->len);

		if (w->or && w->len == 8 && !(w->gpa & 7))
			__atomic_fetch_or((uint64_t *)(void *)p, w->val, __ATOMIC_SEQ_CST);
		else if (w->or && w->len == 1)
			__atomic_fetch_or(p, (uint8_t)w->val, __ATOMIC_SEQ_CST);
		else
			memcpy(p, &w->val, w->len);
	}
}

static bool canonical(uint64_t cr4, uint64_t la)
{
	unsigned int bits = (cr4 & X86_CR4_LA57) ? 57 : 48;

	return (uint64_t)((int64_t)(la << (64 - bits)) >> (64 - bits)) == la;
}

/* What a walk of the IA-32e paging structures for one linear address ended with. */
enum pt_end {
	PT_OK,          /* a leaf entry maps it */
	PT_NOT_PRESENT, /* an entry with P clear */
	PT_RESERVED,    /* a reserved bit set (NX without EFER.NXE, PS, large-page address) */
	PT_NOT_RAM,     /* an entry outside guest RAM */
};

/*
 * struct pt_walk - the entries one walk read, top level first, and what they allow.
 * @entry: guest-physical address of each entry read
 * @n:     their number
 * @leaf:  the leaf entry (PT_OK)
 * @mask:  the offset bits of the leaf's page
 * @rw:    R/W set at every level
 * @us:    U/S set at every level
 */
struct pt_walk {
	uint64_t entry[5];
	unsigned int n;
	uint64_t leaf;
	uint64_t mask;
	bool rw;
	bool us;
};

/* The 4- or 5-level walk of IA-32e paging for @la, without permission checks. */
static enum pt_end pt_walk(const struct tr_ctx *x, uint64_t la, struct pt_walk *w)
{
	unsigned int levels = (x->as.cr4 & X86_CR4_LA57) ? 5 : 4;
	uint64_t table = x->as.cr3 & X86_PTE_ADDR_MASK;

	w->n = 0;
	w->rw = true;
	w->us = true;
	for (unsigned int lvl = levels; lvl >= 1; lvl--) {
		unsigned int shift = 12 + 9 * (lvl - 1);
		uint64_t egpa = table + ((la >> shift) & 0x1ff) * 8, e;
		const void *p = x->as.ptr(x->as.ctx, egpa, 8);
		bool leaf;

		if (!p)
			return PT_NOT_RAM;
		memcpy(&e, p, 8);
		if (!(e & X86_PTE_P))
			return PT_NOT_PRESENT;
		if ((e & X86_PTE_NX) && !(x->as.efer & X86_EFER_NXE))
			return PT_RESERVED;
		w->entry[w->n++] = egpa;
		w->rw = w->rw && (e & X86_PTE_RW);
		w->us = w->us && (e & X86_PTE_US);
		leaf = lvl == 1 || ((e & X86_PTE_PS) && (lvl == 2 || lvl == 3));
		if (!leaf && (e & X86_PTE_PS))
			return PT_RESERVED;
		if (leaf) {
			w->mask = (1ULL << shift) - 1;
			if (lvl > 1 && (e & X86_PTE_ADDR_MASK & w->mask & ~0x1000ULL))
				return PT_RESERVED; /* reserved address bits of a large page */
			w->leaf = e;
			return PT_OK;
		}
		table = e & X86_PTE_ADDR_MASK;
	}
	return PT_RESERVED; /* not reached: level 1 is always a leaf */
}

/*
 * A supervisor data access to the page of @la: the walk with the permission checks of a
 * supervisor access (R/W with CR0.WP, SMAP on user pages, which is refused even where
 * EFLAGS.AC would allow it), queuing the accessed bit of every entry and the dirty bit of the
 * leaf for a write.
 */
static int walk(struct tr_ctx *x, uint64_t la, bool write, uint64_t *gpa)
{
	struct pt_walk w;
	int err;

	if (!canonical(x->as.cr4, la))
		return -EFAULT;
	if (!(x->as.cr0 & X86_CR0_PG))
		return -EOPNOTSUPP; /* long mode without paging does not exist */
	if (pt_walk(x, la, &w) != PT_OK)
		return -EFAULT;
	if (write && !w.rw && (x->as.cr0 & X86_CR0_WP))
		return -EFAULT; /* write-protected */
	if (w.us && (x->as.cr4 & X86_CR4_SMAP))
		return -EFAULT;
	for (unsigned int i = 0; i < w.n; i++) {
		err = queue(x, w.entry[i], X86_PTE_A | (i == w.n - 1 && write ? X86_PTE_D : 0), 8,
			    true);
		if (err)
			return err;
	}
	*gpa = (w.leaf & X86_PTE_ADDR_MASK & ~w.mask) | (la & (w.mask | 0xfff));
	return 0;
}

/* Read @len bytes of linear memory as a supervisor data read. */
static int read_la(struct tr_ctx *x, uint64_t la, void *buf, uint64_t len)
{
	uint64_t done = 0;

	while (done < len) {
		uint64_t a = la + done, gpa, chunk = X86_PAGE_SIZE - (a & (X86_PAGE_SIZE - 1));
		const void *p;
		int err;

		if (chunk > len - done)
			chunk = len - done;
		err = walk(x, a, false, &gpa);
		if (err)
			return err;
		p = x->as.ptr(x->as.ctx, gpa, chunk);
		if (!p)
			return -EFAULT;
		memcpy((uint8_t *)buf + done, p, chunk);
		done += chunk;
	}
	return 0;
}

/* Queue a supervisor write of @len (1..8) bytes within one page. */
static int write_la(struct tr_ctx *x, uint64_t la, uint64_t val, uint8_t len, bool or)
{
	uint64_t gpa;
	int err;

	if ((la & (X86_PAGE_SIZE - 1)) + len > X86_PAGE_SIZE)
		return -EOPNOTSUPP; /* never for the aligned pushes made here */
	err = walk(x, la, true, &gpa);
	if (err)
		return err;
	return queue(x, gpa, val, len, or);
}

/*
 * The descriptor of @sel in the GDT (LDT selectors are not emulated) and its linear address.
 * Return: 0, -EINVAL for a null selector or one beyond the GDT limit (#GP), -EOPNOTSUPP for
 * an LDT selector, or the error of the read.
 */
static int read_desc(struct tr_ctx *x, const struct kvm_sregs *sr, uint16_t sel, uint64_t *d,
		     uint64_t *la)
{
	if ((sel & ~3U) == 0)
		return -EINVAL;
	if (sel & 4)
		return -EOPNOTSUPP;
	if ((uint64_t)(sel & ~7U) + 7 > sr->gdt.limit)
		return -EINVAL;
	*la = sr->gdt.base + (sel & ~7U);
	return read_la(x, *la, d, 8);
}

/* The CPU sets a loaded descriptor's accessed bit (type bit 0, byte 5) when it is clear. */
static int mark_accessed(struct tr_ctx *x, uint64_t d, uint64_t la)
{
	if (d & X86_DESC_ACCESS_BIT(X86_DESC_ACCESSED))
		return 0;
	return write_la(x, la + 5, 1, 1, true);
}

/* The descriptor cache the CPU loads from code/data descriptor @d for selector @sel. */
static void load_seg(struct kvm_segment *s, uint64_t d, uint16_t sel)
{
	uint32_t limit = (uint32_t)((d & 0xffff) | ((d >> 32) & 0xf0000));

	memset(s, 0, sizeof(*s));
	s->base = ((d >> 16) & 0xffffff) | (((d >> 56) & 0xff) << 24);
	s->g = (d >> 55) & 1;
	s->limit = s->g ? (limit << 12) | 0xfff : limit;
	s->selector = sel;
	s->type = (uint8_t)(((d >> 40) & 0xf) | 1);
	s->s = (d >> 44) & 1;
	s->dpl = (d >> 45) & 3;
	s->present = (d >> 47) & 1;
	s->avl = (d >> 52) & 1;
	s->l = (d >> 53) & 1;
	s->db = (d >> 54) & 1;
}

/* The flat segments SYSCALL and SYSRET load without reading the GDT. */
static void flat_seg(struct kvm_segment *s, uint16_t sel, bool code, uint8_t dpl)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = code ? 0xb : 0x3;
	s->s = 1;
	s->dpl = dpl;
	s->present = 1;
	s->l = code;
	s->db = !code;
	s->g = 1;
}

/* Whether @st is in 64-bit mode: the mode all transitions here start in. */
static bool mode64(const struct transition_state *st)
{
	return (st->sregs.efer & X86_EFER_LMA) && st->sregs.cs.l;
}

static uint8_t cpl_of(const struct transition_state *st)
{
	return st->sregs.ss.dpl & 3;
}

static int sysret(struct transition_state *st, const struct insn_info *info)
{
	struct kvm_regs *r = &st->regs;
	uint16_t base = (uint16_t)(st->star >> 48);
	uint64_t fl = (r->r11 & X86_RFLAGS_SYSRET_MASK) | X86_RFLAGS_FIXED;

	if (info->opsize != 8 || !(st->sregs.efer & X86_EFER_SCE) || cpl_of(st) != 0)
		return -EINVAL; /* #UD, #GP; a 32-bit sysret is not emulated */
	if (!canonical(st->sregs.cr4, r->rcx))
		return -EINVAL; /* #GP(0) in ring 0 */
	if (fl & X86_RFLAGS_TF)
		return -EOPNOTSUPP; /* the guest steps itself */
	if (!(st->cpl_ok & (1U << 3)))
		return -EPERM;
	r->rip = r->rcx;
	r->rflags = fl;
	flat_seg(&st->sregs.cs, (uint16_t)((base + 16) | 3), true, 3);
	flat_seg(&st->sregs.ss, (uint16_t)((base + 8) | 3), false, 3);
	return 0;
}

static int syscall(struct transition_state *st, const struct insn_info *info)
{
	struct kvm_regs *r = &st->regs;
	uint16_t base = (uint16_t)(st->star >> 32);

	if (!(st->sregs.efer & X86_EFER_SCE))
		return -EINVAL; /* #UD */
	if (r->rflags & X86_RFLAGS_TF)
		return -EOPNOTSUPP; /* the guest steps itself */
	if (!canonical(st->sregs.cr4, st->lstar))
		return -EINVAL;
	if (!(st->cpl_ok & 1U))
		return -EPERM;
	r->rcx = r->rip + info->len;
	r->r11 = r->rflags;
	r->rflags = (r->rflags & ~st->fmask & ~X86_RFLAGS_RF) | X86_RFLAGS_FIXED;
	r->rip = st->lstar;
	flat_seg(&st->sregs.cs, base & 0xfffc, true, 0);
	flat_seg(&st->sregs.ss, (uint16_t)((base + 8) & 0xfffc), false, 0);
	return 0;
}

/*
 * IRET in IA-32e mode with a 64-bit operand, RETURN-TO-OUTER-PRIVILEGE-LEVEL to a 64-bit
 * code segment at CPL 3. DS, ES, FS and GS that the new CPL may not use become null (FS/GS
 * with a null selector are left alone, their base may be in use), keeping the cached base
 * and limit, as QEMU does.
 */
static int iret(struct transition_state *st, struct tr_ctx *x, const struct insn_info *info)
{
	struct kvm_sregs *sr = &st->sregs;
	struct kvm_segment *data[4] = { &sr->ds, &sr->es, &sr->fs, &sr->gs };
	uint64_t f[5], cs_d, ss_d, cs_la, ss_la, fl;
	uint16_t cs, ss;
	int err;

	if (info->opsize != 8)
		return -EOPNOTSUPP;
	if (st->regs.rflags & X86_RFLAGS_NT)
		return -EINVAL; /* #GP(0) */
	if (cpl_of(st) != 0)
		return -EOPNOTSUPP;
	err = read_la(x, st->regs.rsp, f, sizeof(f));
	if (err)
		return err;
	cs = (uint16_t)f[1];
	fl = f[2];
	ss = (uint16_t)f[4];
	if ((cs & 3) != 3)
		return -EOPNOTSUPP; /* only returns to user mode are emulated */
	if (fl & (X86_RFLAGS_TF | X86_RFLAGS_VM))
		return -EOPNOTSUPP; /* RF is loaded: it only masks instruction breakpoints */
	err = read_desc(x, sr, cs, &cs_d, &cs_la);
	if (err)
		return err;
	if (!(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_S)) ||
	    !(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_CODE)))
		return -EINVAL; /* #GP */
	if (cs_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_C))
		return -EOPNOTSUPP;
	if (((cs_d >> 45) & 3) != 3)
		return -EINVAL; /* non-conforming: DPL must equal RPL */
	if (!(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -EINVAL; /* #NP */
	if (!(cs_d & X86_DESC_FLAGS_BIT(X86_DESC_FLAG_L)) ||
	    (cs_d & X86_DESC_FLAGS_BIT(X86_DESC_FLAG_DB)))
		return -EOPNOTSUPP; /* compatibility mode */
	if ((ss & 3) != 3)
		return -EINVAL;
	err = read_desc(x, sr, ss, &ss_d, &ss_la);
	if (err)
		return err; /* a null SS to CPL 3 is a #GP too */
	if (!(ss_d & X86_DESC_ACCESS_BIT(X86_DESC_S)) ||
	    (ss_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_CODE)) ||
	    !(ss_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_RW)) ||
	    ((ss_d >> 45) & 3) != 3 || !(ss_d & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -EINVAL;
	if (!canonical(x->as.cr4, f[0]))
		return -EINVAL;
	if (!(st->cpl_ok & (1U << 3)))
		return -EPERM;
	err = mark_accessed(x, cs_d, cs_la);
	if (!err)
		err = mark_accessed(x, ss_d, ss_la);
	if (err)
		return err;

	apply_writes(x);
	st->regs.rip = f[0];
	st->regs.rflags = (fl & X86_RFLAGS_IRET_MASK) | X86_RFLAGS_FIXED;
	st->regs.rsp = f[3];
	load_seg(&sr->cs, cs_d, cs);
	load_seg(&sr->ss, ss_d, ss);
	for (unsigned int i = 0; i < 4; i++) {
		struct kvm_segment *s = data[i];

		if (i >= 2 && (s->selector & ~3U) == 0)
			continue;
		if (s->dpl < 3 && (s->type & 0xc) != 0xc) {
			s->selector = 0;
			s->present = 0;
			s->unusable = 1;
		}
	}
	return 0;
}

/**
 * struct tr_event - an event to deliver through the IDT.
 * @vector:  the vector
 * @soft:    raised by int n / int3: the gate's DPL is checked, RF is pushed as 0
 * @has_err: an error code is pushed
 * @err:     that error code
 * @rip:     the RIP pushed: the next instruction for int n, the faulting one for a fault
 * @external: an interrupt or NMI between two instructions: RF is pushed as it is
 */
struct tr_event {
	uint8_t vector;
	bool soft;
	bool external;
	bool has_err;
	uint32_t err;
	uint64_t rip;
};

/*
 * Delivery in IA-32e mode through a 64-bit interrupt or trap gate to a 64-bit,
 * non-conforming code segment of DPL 0: from CPL 3 with the stack switch to TSS.RSP0, or from
 * CPL 0 on the same stack; the IST when the gate names one. The frame is 5 qwords (6 with an
 * error code) on a 16-byte aligned stack. A fault pushes RF as 1 (SDM: "for any fault-class
 * exception ... the value pushed for RF is 1"), a software interrupt as 0.
 */
static int deliver(struct transition_state *st, struct tr_ctx *x, const struct tr_event *ev)
{
	struct kvm_sregs *sr = &st->sregs;
	struct kvm_regs *r = &st->regs;
	uint8_t cpl = cpl_of(st), vec = ev->vector;
	uint64_t g[2], cs_d, cs_la, off, rsp, frame[6];
	unsigned int type, dpl, ist, tss_off = 0, nf;
	uint16_t sel;
	int err;

	if (cpl != 0 && cpl != 3)
		return -EOPNOTSUPP;
	if (r->rflags & X86_RFLAGS_TF)
		return -EOPNOTSUPP; /* the guest steps itself */
	if ((uint64_t)vec * 16 + 15 > sr->idt.limit)
		return -EINVAL; /* #GP */
	err = read_la(x, sr->idt.base + (uint64_t)vec * 16, g, sizeof(g));
	if (err)
		return err;
	type = (g[0] >> 40) & 0x1f; /* with the S bit, which must be 0 */
	dpl = (g[0] >> 45) & 3;
	ist = (g[0] >> 32) & 7;
	if ((type != X86_DESC_TYPE_GATE_INT && type != X86_DESC_TYPE_GATE_TRAP) ||
	    ((g[1] >> 40) & 0x1f) != 0)
		return -EINVAL; /* #GP */
	if (ev->soft && dpl < cpl)
		return -EINVAL; /* #GP */
	if (!(g[0] & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -EINVAL; /* #NP */
	sel = (uint16_t)(g[0] >> 16);
	off = (g[0] & 0xffff) | ((g[0] >> 32) & 0xffff0000ULL) | (g[1] << 32);
	err = read_desc(x, sr, sel, &cs_d, &cs_la);
	if (err)
		return err;
	if (!(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_S)) ||
	    !(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_CODE)) || ((cs_d >> 45) & 3) > cpl)
		return -EINVAL;
	if (!(cs_d & X86_DESC_ACCESS_BIT(X86_DESC_P)))
		return -EINVAL;
	if ((cs_d & X86_DESC_ACCESS_BIT(X86_DESC_TYPE_C)) || ((cs_d >> 45) & 3) != 0 ||
	    !(cs_d & X86_DESC_FLAGS_BIT(X86_DESC_FLAG_L)) ||
	    (cs_d & X86_DESC_FLAGS_BIT(X86_DESC_FLAG_DB)))
		return -EOPNOTSUPP;
	if (!canonical(x->as.cr4, off))
		return -EINVAL;
	if (!(st->cpl_ok & 1U))
		return -EPERM;

	if (ist)
		tss_off = X86_TSS64_IST1 + 8 * (ist - 1);
	else if (cpl != 0)
		tss_off = X86_TSS64_RSP0;
	if (tss_off) {
		if (!sr->tr.present || sr->tr.unusable || sr->tr.s ||
		    sr->tr.type != X86_DESC_TYPE_TSS_BUSY)
			return -EOPNOTSUPP;
		if ((uint64_t)tss_off + 7 > sr->tr.limit)
			return -EINVAL; /* #TS */
		err = read_la(x, sr->tr.base + tss_off, &rsp, sizeof(rsp));
		if (err)
			return err;
		if (!canonical(x->as.cr4, rsp))
			return -EINVAL; /* #SS */
	} else {
		rsp = r->rsp;
	}
	rsp &= ~0xfULL;
	nf = 0;
	if (ev->has_err)
		frame[nf++] = ev->err;
	frame[nf++] = ev->rip;
	frame[nf++] = sr->cs.selector;
	frame[nf++] = ev->external ? r->rflags :
		      ev->soft	   ? r->rflags & ~X86_RFLAGS_RF :
				     r->rflags | X86_RFLAGS_RF;
	frame[nf++] = r->rsp;
	frame[nf++] = sr->ss.selector;
	for (unsigned int i = 0; i < nf; i++) {
		err = write_la(x, rsp - 8 * nf + 8 * i, frame[i], 8, false);
		if (err)
			return err;
	}
	err = mark_accessed(x, cs_d, cs_la);
	if (err)
		return err;

	apply_writes(x);
	r->rsp = rsp - 8 * nf;
	r->rip = off;
	r->rflags &= ~(X86_RFLAGS_TF | X86_RFLAGS_NT | X86_RFLAGS_RF | X86_RFLAGS_VM);
	if (type == X86_DESC_TYPE_GATE_INT)
		r->rflags &= ~X86_RFLAGS_IF;
	load_seg(&sr->cs, cs_d, sel & 0xfffc);
	if (cpl != 0) {
		/* a null SS with RPL 0, as QEMU loads it: selector 0, DPL 0, not present */
		memset(&sr->ss, 0, sizeof(sr->ss));
		sr->ss.unusable = 1;
	}
	return 0;
}

/* int n / int3 (soft, the next RIP pushed) or ud0/1/2 (#UD: a fault, its own RIP pushed). */
static int vector_insn(struct transition_state *st, struct tr_ctx *x,
		       const struct insn_info *info)
{
	bool soft = info->flags & INSN_F_SOFT_INT;
	struct tr_event ev = {
		.vector = info->vector, .soft = soft,
		.rip = soft ? st->regs.rip + info->len : st->regs.rip,
	};

	return deliver(st, x, &ev);
}

static void init_ctx(struct tr_ctx *x, const struct transition_state *st)
{
	x->as.cr0 = st->sregs.cr0;
	x->as.cr3 = st->sregs.cr3;
	x->as.cr4 = st->sregs.cr4;
	x->as.efer = st->sregs.efer;
}

bool transition__wanted(const struct insn_info *info)
{
	switch (info->kind) {
	case VBTS_BR_SYSRET:
		return !(info->flags & INSN_F_SYSEXIT) && info->opsize == 8;
	case VBTS_BR_IRET:
		return info->opsize == 8;
	case VBTS_BR_SYSCALL:
		return info->flags & INSN_F_SYSCALL;
	case VBTS_BR_INT:
		return (info->flags & INSN_F_SOFT_INT) && !(info->flags & INSN_F_COND);
	case VBTS_BR_EXCEPTION:
		return (info->flags & INSN_F_VECTOR) && info->vector == X86_TRAP_UD;
	default:
		return false;
	}
}

int transition__emulate(struct transition_state *st, const struct insn_info *info,
			void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len), const void *ctx)
{
	struct transition_state tmp;
	struct tr_ctx x = { .as = { .ptr = ptr, .ctx = ctx } };
	int err;

	if (!transition__wanted(info) || !mode64(st) || (st->regs.rflags & X86_RFLAGS_VM))
		return -EOPNOTSUPP;
	switch (info->kind) {
	case VBTS_BR_SYSRET:
		return sysret(st, info);
	case VBTS_BR_SYSCALL:
		return syscall(st, info);
	default:
		break;
	}
	/* iret and int touch memory: they work on a copy, @st changes only when they succeed */
	init_ctx(&x, st);
	tmp = *st;
	err = info->kind == VBTS_BR_IRET ? iret(&tmp, &x, info) : vector_insn(&tmp, &x, info);
	if (!err)
		*st = tmp;
	return err;
}

/*
 * A user-mode data access to the page of @la: 0 when it succeeds, 1 with the #PF error code
 * when it faults (not present, a supervisor page, a write to a read-only page), -EOPNOTSUPP
 * when the walk meets a reserved bit or leaves guest RAM (not predicted).
 */
static int user_page(const struct tr_ctx *x, uint64_t la, bool write, uint32_t *code)
{
	struct pt_walk w;

	switch (pt_walk(x, la, &w)) {
	case PT_OK:
		break;
	case PT_NOT_PRESENT:
		*code = X86_PF_USER | (write ? X86_PF_WRITE : 0);
		return 1;
	default:
		return -EOPNOTSUPP;
	}
	if (!w.us || (write && !w.rw)) {
		*code = X86_PF_PROT | X86_PF_USER | (write ? X86_PF_WRITE : 0);
		return 1;
	}
	return 0;
}

int transition__user_fault(const struct transition_state *st, uint64_t la, uint32_t len,
			   bool write, void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			   const void *ctx, uint32_t *code)
{
	struct tr_ctx x = { .as = { .ptr = ptr, .ctx = ctx } };
	int ret;

	init_ctx(&x, st);
	if (!mode64(st) || cpl_of(st) != 3 || !(x.as.cr0 & X86_CR0_PG) || len == 0 || len > 64)
		return -EOPNOTSUPP;
	if (x.as.cr4 & X86_CR4_PKE)
		return -EOPNOTSUPP; /* protection keys: not predicted */
	if ((x.as.cr0 & X86_CR0_AM) && (st->regs.rflags & X86_RFLAGS_AC))
		return -EOPNOTSUPP; /* an alignment check may come first */
	if (!canonical(x.as.cr4, la) || !canonical(x.as.cr4, la + len - 1))
		return -EOPNOTSUPP; /* #GP or #SS, not a page fault */
	ret = user_page(&x, la, write, code);
	if (ret)
		return ret;
	if ((la & ~(X86_PAGE_SIZE - 1)) == ((la + len - 1) & ~(X86_PAGE_SIZE - 1)))
		return 0;
	ret = user_page(&x, la + len - 1, write, code);
	return ret == 1 ? -EOPNOTSUPP : ret; /* which address CR2 gets is not predicted */
}

int transition__page_fault(struct transition_state *st, uint64_t cr2, uint32_t code,
			   void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			   const void *ctx)
{
	struct tr_event ev = { .vector = X86_TRAP_PF, .has_err = true, .err = code,
			       .rip = st->regs.rip };
	struct tr_ctx x = { .as = { .ptr = ptr, .ctx = ctx } };
	struct transition_state tmp;
	int err;

	if (!mode64(st) || (st->regs.rflags & X86_RFLAGS_VM))
		return -EOPNOTSUPP;
	if (st->regs.rflags & X86_RFLAGS_TF)
		return -EOPNOTSUPP;
	init_ctx(&x, st);
	tmp = *st;
	err = deliver(&tmp, &x, &ev);
	if (err)
		return err;
	tmp.sregs.cr2 = cr2;
	*st = tmp;
	return 0;
}

int transition__interrupt(struct transition_state *st, uint8_t vector,
			  void *(*ptr)(const void *ctx, uint64_t gpa, uint64_t len),
			  const void *ctx)
{
	struct tr_event ev = { .vector = vector, .external = true, .rip = st->regs.rip };
	struct tr_ctx x = { .as = { .ptr = ptr, .ctx = ctx } };
	struct transition_state tmp;
	int err;

	if (!mode64(st) || (st->regs.rflags & X86_RFLAGS_VM))
		return -EOPNOTSUPP;
	init_ctx(&x, st);
	tmp = *st;
	err = deliver(&tmp, &x, &ev);
	if (!err)
		*st = tmp;
	return err;
}
