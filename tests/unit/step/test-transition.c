// SPDX-License-Identifier: GPL-2.0
/*
 * test-transition.c - sysretq, iretq, syscall, int n and user page faults executed by
 * transition.c over page tables, a GDT, an IDT and a TSS built in a buffer: the architectural
 * results, and every case where the CPU would fault or the module declines, with state and
 * memory unchanged; the loads and stores whose faults are predicted (insn__mem_access()).
 */
#include <errno.h>
#include <stdlib.h>

#include <vbts/ring-format.h>

#include "step-tests.h"
#include "transition.h"
#include "x86.h"

#define RAM_SIZE (8ULL << 20)

/* Layout (guest physical = linear): paging structures, descriptor tables, stacks. */
#define PML4 0x1000ULL
#define PDPT 0x2000ULL
#define PD 0x3000ULL
#define PT 0x4000ULL   /* 4 KiB pages for 0..2 MiB */
#define KSTACK_TOP 0x9000ULL
#define IST_TOP 0xa000ULL
#define GDT 0x10000ULL
#define TSS 0x11000ULL
#define IDT 0x12000ULL
#define USTACK 0x300ff8ULL /* in the 2 MiB page at 2 MiB */
#define UCODE 0x400100ULL  /* in the 2 MiB page at 4 MiB */
#define HANDLER 0x100290ULL

#define KCS 0x08
#define KDS 0x10
#define UDS 0x1b
#define UCS 0x23
#define TSS_SEL 0x28

#define DESC_KCODE 0x00af9a000000ffffULL
#define DESC_KDATA 0x00cf92000000ffffULL
#define DESC_UDATA 0x00cff2000000ffffULL
#define DESC_UCODE 0x00affa000000ffffULL
#define DESC_UCODE32 0x00cffa000000ffffULL

static struct fake_ram ram;
static uint8_t *snapshot;
static struct insn_decoder dec;

static uint64_t get64(uint64_t gpa)
{
	uint64_t v;

	memcpy(&v, ram.buf + gpa, sizeof(v));
	return v;
}

static uint64_t gate64(uint64_t off, uint16_t sel, unsigned int type, unsigned int dpl,
		       unsigned int ist)
{
	return (off & 0xffff) | ((uint64_t)sel << 16) | ((uint64_t)ist << 32) |
	       ((uint64_t)type << 40) | ((uint64_t)dpl << 45) | (1ULL << 47) |
	       ((off & 0xffff0000ULL) << 32);
}

static void set_gate(unsigned int vec, uint64_t lo, uint64_t hi)
{
	fake_put64(&ram, IDT + vec * 16, lo);
	fake_put64(&ram, IDT + vec * 16 + 8, hi);
}

static void setup(void)
{
	uint64_t tss_lo;

	ram.size = RAM_SIZE;
	ram.buf = calloc(1, RAM_SIZE);
	snapshot = malloc(RAM_SIZE);
	ck_assert_ptr_nonnull(ram.buf);
	ck_assert_ptr_nonnull(snapshot);
	ck_assert_int_eq(insn_decoder__init(&dec), 0);

	fake_put64(&ram, PML4, PDPT | X86_PTE_P | X86_PTE_RW | X86_PTE_US);
	fake_put64(&ram, PDPT, PD | X86_PTE_P | X86_PTE_RW | X86_PTE_US);
	/* 0..2 MiB: supervisor */
	fake_put64(&ram, PD + 0 * 8, PT | X86_PTE_P | X86_PTE_RW);
	/* 2..4 MiB: user */
	fake_put64(&ram, PD + 1 * 8, 0x200000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US | X86_PTE_PS);
	/* 4..6 MiB: user */
	fake_put64(&ram, PD + 2 * 8, 0x400000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US | X86_PTE_PS);
	for (uint64_t i = 1; i < 512; i++)
		fake_put64(&ram, PT + i * 8, (i << 12) | X86_PTE_P | X86_PTE_RW);

	fake_put64(&ram, GDT + 0x08, DESC_KCODE);
	fake_put64(&ram, GDT + 0x10, DESC_KDATA);
	fake_put64(&ram, GDT + 0x18, DESC_UDATA);
	fake_put64(&ram, GDT + 0x20, DESC_UCODE);
	tss_lo = 0x67 | ((TSS & 0xffffff) << 16) | (0x8bULL << 40);
	fake_put64(&ram, GDT + 0x28, tss_lo);
	fake_put64(&ram, GDT + 0x30, 0);
	fake_put64(&ram, GDT + 0x38, DESC_UCODE32);

	fake_put64(&ram, TSS + 4, KSTACK_TOP);  /* RSP0 */
	fake_put64(&ram, TSS + 0x24, IST_TOP);  /* IST1 */

	set_gate(0x80, gate64(HANDLER, KCS, 0xe, 3, 0), 0);
	set_gate(0x81, gate64(HANDLER + 0x10, KCS, 0xe, 0, 0), 0);
	set_gate(3, gate64(HANDLER + 0x20, KCS, 0xf, 3, 0), 0);
	set_gate(0x82, gate64(HANDLER + 0x30, KCS, 0xe, 3, 1), 0);
}

static void teardown(void)
{
	free(ram.buf);
	free(snapshot);
	ram.buf = NULL;
	snapshot = NULL;
}

static struct insn_info decode(const char *bytes, size_t n, uint64_t rip)
{
	struct insn_info info;

	ck_assert_int_eq(insn__decode(&dec, INSN_MODE_LONG64, rip, (const uint8_t *)bytes, n,
				      &info), 0);
	return info;
}

#define SYSRETQ "\x48\x0f\x07"
#define SYSRETL "\x0f\x07"
#define IRETQ "\x48\xcf"
#define IRETL "\xcf"
#define SYSCALL "\x0f\x05"
#define INT80 "\xcd\x80"
#define INT81 "\xcd\x81"
#define INT82 "\xcd\x82"
#define INT3 "\xcc"

static struct kvm_segment seg(uint16_t sel, uint8_t type, uint8_t dpl, bool code)
{
	struct kvm_segment s = {
		.limit = 0xffffffff, .selector = sel, .type = type, .present = 1, .dpl = dpl,
		.db = !code, .s = 1, .l = code, .g = 1,
	};
	return s;
}

static struct transition_state kernel_state(void)
{
	struct transition_state st = { .cpl_ok = 0xf };

	st.sregs.cr0 = X86_CR0_PE | X86_CR0_PG | X86_CR0_WP;
	st.sregs.cr3 = PML4;
	st.sregs.cr4 = X86_CR4_PAE;
	st.sregs.efer = X86_EFER_LME | X86_EFER_LMA | X86_EFER_SCE;
	st.sregs.cs = seg(KCS, 0xb, 0, true);
	st.sregs.ss = seg(KDS, 0x3, 0, false);
	st.sregs.ds = seg(KDS, 0x3, 0, false);
	st.sregs.es = seg(KDS, 0x3, 0, false);
	st.sregs.fs.unusable = 1;
	st.sregs.fs.base = 0x1234000;
	st.sregs.gs.unusable = 1;
	st.sregs.gdt.base = GDT;
	st.sregs.gdt.limit = 0x3f;
	st.sregs.idt.base = IDT;
	st.sregs.idt.limit = 256 * 16 - 1;
	st.sregs.tr = (struct kvm_segment){ .base = TSS, .limit = 0x67, .selector = TSS_SEL,
					    .type = 0xb, .present = 1 };
	st.star = ((uint64_t)0x10 << 48) | ((uint64_t)KCS << 32);
	st.lstar = 0x100500;
	st.fmask = 0x47700;
	st.regs.rip = 0x100400;
	st.regs.rsp = KSTACK_TOP - 40;
	st.regs.rflags = 0x2;
	return st;
}

static struct transition_state user_state(void)
{
	struct transition_state st = kernel_state();

	st.sregs.cs = seg(UCS, 0xb, 3, true);
	st.sregs.ss = seg(UDS, 0x3, 3, false);
	st.sregs.ds = seg(UDS, 0x3, 3, false);
	st.sregs.es = seg(UDS, 0x3, 3, false);
	st.regs.rip = UCODE;
	st.regs.rsp = USTACK;
	st.regs.rflags = 0x202;
	return st;
}

static int emulate(struct transition_state *st, const char *bytes, size_t n)
{
	struct insn_info info = decode(bytes, n, st->regs.rip);

	return transition__emulate(st, &info, fake_ram_ptr, &ram);
}

/* The emulation must fail with @err and leave the state and all of memory as they were. */
static void refused(struct transition_state st, const char *bytes, size_t n, int err,
		    const char *what)
{
	struct transition_state before = st;
	int ret;

	memcpy(snapshot, ram.buf, RAM_SIZE);
	ret = emulate(&st, bytes, n);
	ck_assert_msg(ret == err, "%s: got %d, expected %d", what, ret, err);
	ck_assert_msg(!memcmp(&st, &before, sizeof(st)), "%s: state changed", what);
	ck_assert_msg(!memcmp(snapshot, ram.buf, RAM_SIZE), "%s: memory changed", what);
}

static void assert_seg(const struct kvm_segment *s, uint16_t sel, uint8_t dpl, bool code)
{
	ck_assert_uint_eq(s->selector, sel);
	ck_assert_uint_eq(s->dpl, dpl);
	ck_assert_uint_eq(s->present, 1);
	ck_assert_uint_eq(s->unusable, 0);
	ck_assert_uint_eq(s->s, 1);
	ck_assert_uint_eq(s->l, code);
	ck_assert_uint_eq(s->db, !code);
	ck_assert_uint_eq(s->base, 0);
	ck_assert_uint_eq(s->limit, 0xffffffff);
	ck_assert_uint_eq(s->type, code ? 0xb : 0x3);
}

/* ---- which instructions -------------------------------------------------------------------- */

START_TEST(test_wanted)
{
	struct insn_info i;

	ck_assert(transition__wanted((i = decode(SYSRETQ, 3, 0), &i)));
	ck_assert(!transition__wanted((i = decode(SYSRETL, 2, 0), &i)));
	ck_assert(transition__wanted((i = decode(IRETQ, 2, 0), &i)));
	ck_assert(!transition__wanted((i = decode(IRETL, 1, 0), &i)));
	ck_assert(transition__wanted((i = decode(SYSCALL, 2, 0), &i)));
	ck_assert(transition__wanted((i = decode(INT80, 2, 0), &i)));
	ck_assert(transition__wanted((i = decode(INT3, 1, 0), &i)));
	ck_assert(transition__wanted((i = decode("\x0f\x0b", 2, 0), &i)));   /* ud2 */
	ck_assert(!transition__wanted((i = decode("\xf1", 1, 0), &i)));      /* int1 */
	ck_assert(!transition__wanted((i = decode("\x0f\x35", 2, 0), &i)));  /* sysexit */
	ck_assert(!transition__wanted((i = decode("\xc3", 1, 0), &i)));      /* ret */
	ck_assert(!transition__wanted((i = decode("\x48\xcb", 2, 0), &i)));  /* lretq */
}
END_TEST

/* ---- sysretq ------------------------------------------------------------------------------- */

START_TEST(test_sysret)
{
	struct transition_state st = kernel_state();

	st.regs.rcx = UCODE;
	st.regs.r11 = 0x246 | X86_RFLAGS_RF | X86_RFLAGS_VM | (1ULL << 3) | (1ULL << 40);
	st.regs.rsp = USTACK;
	memcpy(snapshot, ram.buf, RAM_SIZE);
	ck_assert_int_eq(emulate(&st, SYSRETQ, 3), 0);
	ck_assert_uint_eq(st.regs.rip, UCODE);
	ck_assert_uint_eq(st.regs.rflags, 0x246);
	ck_assert_uint_eq(st.regs.rsp, USTACK);
	assert_seg(&st.sregs.cs, 0x23, 3, true);
	assert_seg(&st.sregs.ss, 0x1b, 3, false);
	ck_assert(!memcmp(snapshot, ram.buf, RAM_SIZE)); /* sysret reads no memory */
}
END_TEST

START_TEST(test_sysret_refused)
{
	struct transition_state base = kernel_state(), st;

	base.regs.rcx = UCODE;
	base.regs.r11 = 0x202;

	st = base;
	st.sregs.ss.dpl = 3;
	refused(st, SYSRETQ, 3, -EINVAL, "CPL 3");
	st = base;
	st.sregs.efer &= ~X86_EFER_SCE;
	refused(st, SYSRETQ, 3, -EINVAL, "SCE clear");
	st = base;
	st.regs.rcx = 0x0000800000000000ULL;
	refused(st, SYSRETQ, 3, -EINVAL, "non-canonical RCX");
	st = base;
	st.regs.r11 |= X86_RFLAGS_TF;
	refused(st, SYSRETQ, 3, -EOPNOTSUPP, "the guest's own TF");
	st = base;
	st.cpl_ok = 1;
	refused(st, SYSRETQ, 3, -EPERM, "CPL 3 not steppable");
	st = base;
	refused(st, SYSRETL, 2, -EOPNOTSUPP, "sysretl");
	st = base;
	st.sregs.cs.l = 0;
	st.sregs.cs.db = 1;
	refused(st, SYSRETQ, 3, -EOPNOTSUPP, "compatibility mode");
	st = base;
	st.sregs.efer &= ~X86_EFER_LMA;
	refused(st, SYSRETQ, 3, -EOPNOTSUPP, "legacy mode");
}
END_TEST

/* ---- syscall ------------------------------------------------------------------------------- */

START_TEST(test_syscall)
{
	struct transition_state st = user_state();

	st.regs.rflags = 0x202 | X86_RFLAGS_TF | (1ULL << 10) | (1ULL << 7);
	st.regs.rflags &= ~X86_RFLAGS_TF; /* the guest-visible flags have no TF of the tracer */
	st.regs.rcx = 0x55;
	st.regs.r11 = 0x66;
	memcpy(snapshot, ram.buf, RAM_SIZE);
	ck_assert_int_eq(emulate(&st, SYSCALL, 2), 0);
	ck_assert_uint_eq(st.regs.rip, 0x100500);
	ck_assert_uint_eq(st.regs.rcx, UCODE + 2);
	ck_assert_uint_eq(st.regs.r11, 0x202 | (1ULL << 10) | (1ULL << 7));
	ck_assert_uint_eq(st.regs.rflags, 0x2 | (1ULL << 7)); /* IF, DF masked */
	ck_assert_uint_eq(st.regs.rsp, USTACK);
	assert_seg(&st.sregs.cs, 0x08, 0, true);
	assert_seg(&st.sregs.ss, 0x10, 0, false);
	ck_assert(!memcmp(snapshot, ram.buf, RAM_SIZE));
}
END_TEST

START_TEST(test_syscall_refused)
{
	struct transition_state base = user_state(), st;

	st = base;
	st.sregs.efer &= ~X86_EFER_SCE;
	refused(st, SYSCALL, 2, -EINVAL, "SCE clear");
	st = base;
	st.lstar = 0xffff700000000000ULL;
	refused(st, SYSCALL, 2, -EINVAL, "non-canonical LSTAR");
	st = base;
	st.cpl_ok = 0x8;
	refused(st, SYSCALL, 2, -EPERM, "CPL 0 not steppable");
	st = base;
	st.regs.rflags |= X86_RFLAGS_TF;
	refused(st, SYSCALL, 2, -EOPNOTSUPP, "the guest's own TF");
	st = base;
	st.sregs.cs.l = 0;
	refused(st, SYSCALL, 2, -EOPNOTSUPP, "compatibility mode");
}
END_TEST

/* ---- iretq --------------------------------------------------------------------------------- */

static struct transition_state iret_state(uint64_t rip, uint64_t cs, uint64_t fl, uint64_t rsp,
					  uint64_t ss)
{
	struct transition_state st = kernel_state();
	uint64_t sp = KSTACK_TOP - 40;

	fake_put64(&ram, sp, rip);
	fake_put64(&ram, sp + 8, cs);
	fake_put64(&ram, sp + 16, fl);
	fake_put64(&ram, sp + 24, rsp);
	fake_put64(&ram, sp + 32, ss);
	st.regs.rsp = sp;
	return st;
}

START_TEST(test_iret)
{
	struct transition_state st = iret_state(UCODE, 0xffff0000 | UCS, 0x246 | (1ULL << 5),
						USTACK, UDS);

	/* the stack page's entries: accessed bits clear, so the CPU sets them */
	fake_put64(&ram, PT + 8 * 8, 0x8000 | X86_PTE_P | X86_PTE_RW);
	ck_assert_int_eq(emulate(&st, IRETQ, 2), 0);
	ck_assert_uint_eq(st.regs.rip, UCODE);
	ck_assert_uint_eq(st.regs.rflags, 0x246); /* reserved bit 5 not loaded */
	ck_assert_uint_eq(st.regs.rsp, USTACK);
	ck_assert_uint_eq(st.sregs.cs.selector, UCS);
	ck_assert_uint_eq(st.sregs.cs.dpl, 3);
	ck_assert_uint_eq(st.sregs.cs.l, 1);
	ck_assert_uint_eq(st.sregs.cs.db, 0);
	ck_assert_uint_eq(st.sregs.cs.type, 0xb);
	ck_assert_uint_eq(st.sregs.cs.limit, 0xffffffff);
	ck_assert_uint_eq(st.sregs.ss.selector, UDS);
	ck_assert_uint_eq(st.sregs.ss.dpl, 3);
	ck_assert_uint_eq(st.sregs.ss.type, 0x3);
	ck_assert_uint_eq(st.sregs.ss.db, 1);
	/* DS and ES of DPL 0 become null; a null FS keeps its base */
	ck_assert_uint_eq(st.sregs.ds.selector, 0);
	ck_assert_uint_eq(st.sregs.ds.present, 0);
	ck_assert_uint_eq(st.sregs.es.selector, 0);
	ck_assert_uint_eq(st.sregs.fs.base, 0x1234000);
	/* accessed bits: the loaded descriptors, the page-table entries walked */
	ck_assert_uint_eq(get64(GDT + 0x20), DESC_UCODE | (1ULL << 40));
	ck_assert_uint_eq(get64(GDT + 0x18), DESC_UDATA | (1ULL << 40));
	ck_assert_uint_eq(get64(PT + 8 * 8), 0x8000 | X86_PTE_P | X86_PTE_RW | X86_PTE_A);
	ck_assert_uint_eq(get64(PML4) & X86_PTE_A, X86_PTE_A);
	ck_assert_uint_eq(get64(PD) & (X86_PTE_A | X86_PTE_D), X86_PTE_A);
	/* RF is loaded (a fault handler returning) */
	st = iret_state(UCODE, UCS, 0x202 | X86_RFLAGS_RF, USTACK, UDS);
	ck_assert_int_eq(emulate(&st, IRETQ, 2), 0);
	ck_assert_uint_eq(st.regs.rflags, 0x202 | X86_RFLAGS_RF);
	/* a data segment usable at CPL 3 stays */
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.sregs.ds = seg(UDS, 0x3, 3, false);
	ck_assert_int_eq(emulate(&st, IRETQ, 2), 0);
	ck_assert_uint_eq(st.sregs.ds.selector, UDS);
	ck_assert_uint_eq(st.sregs.ds.present, 1);
}
END_TEST

START_TEST(test_iret_refused)
{
	struct transition_state st;

#define IRET_REFUSED(rip, cs, fl, rsp, ss, err, what)                                           \
	do {                                                                                    \
		st = iret_state(rip, cs, fl, rsp, ss);                                          \
		refused(st, IRETQ, 2, err, what);                                               \
	} while (0)

	IRET_REFUSED(UCODE, KCS, 0x202, USTACK, KDS, -EOPNOTSUPP, "return to CPL 0");
	IRET_REFUSED(UCODE, 0x0b, 0x202, USTACK, UDS, -EINVAL, "CS DPL 0 with RPL 3");
	IRET_REFUSED(UCODE, 0x1b, 0x202, USTACK, UDS, -EINVAL, "CS is a data segment");
	IRET_REFUSED(UCODE, 0x03, 0x202, USTACK, UDS, -EINVAL, "null CS");
	IRET_REFUSED(UCODE, 0x27, 0x202, USTACK, UDS, -EOPNOTSUPP, "CS in the LDT");
	IRET_REFUSED(UCODE, 0x43, 0x202, USTACK, UDS, -EINVAL, "CS beyond the GDT limit");
	IRET_REFUSED(UCODE, 0x3b, 0x202, USTACK, UDS, -EOPNOTSUPP, "32-bit CS");
	IRET_REFUSED(UCODE, 0x2b, 0x202, USTACK, UDS, -EINVAL, "CS is the TSS");
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, 0x3, -EINVAL, "null SS");
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, 0x18, -EINVAL, "SS RPL 0");
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, 0x13, -EINVAL, "SS DPL 0");
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, UCS, -EINVAL, "SS is code");
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, 0x1f, -EOPNOTSUPP, "SS in the LDT");
	IRET_REFUSED(0x0000800000000000ULL, UCS, 0x202, USTACK, UDS, -EINVAL,
		     "non-canonical RIP");
	IRET_REFUSED(UCODE, UCS, 0x202 | X86_RFLAGS_TF, USTACK, UDS, -EOPNOTSUPP, "popped TF");
	IRET_REFUSED(UCODE, UCS, 0x202 | X86_RFLAGS_VM, USTACK, UDS, -EOPNOTSUPP, "popped VM");

	/* descriptors not present, or not writable */
	fake_put64(&ram, GDT + 0x20, DESC_UCODE & ~(1ULL << 47));
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, UDS, -EINVAL, "CS not present");
	fake_put64(&ram, GDT + 0x20, DESC_UCODE | (1ULL << 42));
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, UDS, -EOPNOTSUPP, "conforming CS");
	fake_put64(&ram, GDT + 0x20, DESC_UCODE);
	fake_put64(&ram, GDT + 0x18, DESC_UDATA & ~(1ULL << 47));
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, UDS, -EINVAL, "SS not present");
	fake_put64(&ram, GDT + 0x18, DESC_UDATA & ~(1ULL << 41));
	IRET_REFUSED(UCODE, UCS, 0x202, USTACK, UDS, -EINVAL, "SS read-only");
	fake_put64(&ram, GDT + 0x18, DESC_UDATA);

	/* the interrupted state */
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.regs.rflags |= X86_RFLAGS_NT;
	refused(st, IRETQ, 2, -EINVAL, "NT set");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.sregs.ss.dpl = 3;
	refused(st, IRETQ, 2, -EOPNOTSUPP, "iret at CPL 3");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.cpl_ok = 1;
	refused(st, IRETQ, 2, -EPERM, "CPL 3 not steppable");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	refused(st, IRETL, 1, -EOPNOTSUPP, "iretl");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.regs.rsp = 0x7fffe0; /* the frame runs beyond RAM: the walk finds no entry */
	refused(st, IRETQ, 2, -EFAULT, "stack not mapped");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.sregs.gdt.base = 0x7ffff0ULL;
	refused(st, IRETQ, 2, -EFAULT, "GDT not mapped");
	st = iret_state(UCODE, UCS, 0x202, USTACK, UDS);
	st.sregs.cr4 |= X86_CR4_SMAP;
	st.sregs.gdt.base = 0x200000; /* a user page: implicit supervisor access with SMAP */
	memcpy(ram.buf + 0x200000, ram.buf + GDT, 0x40);
	refused(st, IRETQ, 2, -EFAULT, "GDT on a user page with SMAP");
#undef IRET_REFUSED
}
END_TEST

/* ---- int n --------------------------------------------------------------------------------- */

static void assert_frame(uint64_t top, uint64_t rip, uint64_t cs, uint64_t fl, uint64_t rsp,
			 uint64_t ss)
{
	ck_assert_uint_eq(get64(top - 40), rip);
	ck_assert_uint_eq(get64(top - 32), cs);
	ck_assert_uint_eq(get64(top - 24), fl);
	ck_assert_uint_eq(get64(top - 16), rsp);
	ck_assert_uint_eq(get64(top - 8), ss);
}

START_TEST(test_int_from_user)
{
	struct transition_state st = user_state();

	st.regs.rflags = 0x202 | X86_RFLAGS_NT;
	st.regs.rsp = USTACK - 3;
	ck_assert_int_eq(emulate(&st, INT80, 2), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER);
	ck_assert_uint_eq(st.regs.rsp, KSTACK_TOP - 40);
	ck_assert_uint_eq(st.regs.rflags, 0x2); /* interrupt gate: IF, NT cleared */
	assert_frame(KSTACK_TOP, UCODE + 2, UCS, 0x202 | X86_RFLAGS_NT, USTACK - 3, UDS);
	ck_assert_uint_eq(st.sregs.cs.selector, KCS);
	ck_assert_uint_eq(st.sregs.cs.dpl, 0);
	ck_assert_uint_eq(st.sregs.cs.l, 1);
	ck_assert_uint_eq(st.sregs.ss.selector, 0);
	ck_assert_uint_eq(st.sregs.ss.dpl, 0);
	ck_assert_uint_eq(st.sregs.ss.unusable, 1);
	ck_assert_uint_eq(st.sregs.ds.selector, UDS); /* data segments untouched */
	/* the stack page: accessed and dirty; the descriptor: accessed */
	ck_assert_uint_eq(get64(PT + 8 * 8),
			  0x8000 | X86_PTE_P | X86_PTE_RW | X86_PTE_A | X86_PTE_D);
	ck_assert_uint_eq(get64(GDT + 0x08), DESC_KCODE | (1ULL << 40));
}
END_TEST

START_TEST(test_int_gates)
{
	struct transition_state st = user_state();

	/* int3 through a trap gate: IF stays */
	ck_assert_int_eq(emulate(&st, INT3, 1), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x20);
	ck_assert_uint_eq(st.regs.rflags, 0x202);
	assert_frame(KSTACK_TOP, UCODE + 1, UCS, 0x202, USTACK, UDS);

	/* an IST stack; an unaligned stack pointer in the TSS is aligned down */
	fake_put64(&ram, TSS + 0x24, IST_TOP - 8);
	st = user_state();
	ck_assert_int_eq(emulate(&st, INT82, 2), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x30);
	ck_assert_uint_eq(st.regs.rsp, IST_TOP - 16 - 40);
	assert_frame(IST_TOP - 16, UCODE + 2, UCS, 0x202, USTACK, UDS);

	/* from CPL 0 on the same stack, aligned down, SS kept */
	st = kernel_state();
	st.regs.rsp = 0x8808;
	st.regs.rflags = 0x246;
	ck_assert_int_eq(emulate(&st, INT81, 2), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x10);
	ck_assert_uint_eq(st.regs.rsp, 0x8800 - 40);
	ck_assert_uint_eq(st.regs.rflags, 0x46);
	assert_frame(0x8800, 0x100402, KCS, 0x246, 0x8808, KDS);
	ck_assert_uint_eq(st.sregs.ss.selector, KDS);
	ck_assert_uint_eq(st.sregs.ss.present, 1);

	/* a handler above 4 GiB */
	set_gate(0x80, gate64(HANDLER, KCS, 0xe, 3, 0), 0xffffffffULL);
	st = user_state();
	ck_assert_int_eq(emulate(&st, INT80, 2), 0);
	ck_assert_uint_eq(st.regs.rip, 0xffffffff00000000ULL | HANDLER);
}
END_TEST

/* ud2: #UD, a fault: its own RIP and RF pushed, no error code, the gate's DPL not checked. */
START_TEST(test_ud2)
{
	struct transition_state st = user_state();

	set_gate(6, gate64(HANDLER + 0x50, KCS, 0xe, 0, 0), 0);
	ck_assert_int_eq(emulate(&st, "\x0f\x0b", 2), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x50);
	ck_assert_uint_eq(st.regs.rsp, KSTACK_TOP - 40);
	ck_assert_uint_eq(st.regs.rflags, 0x2);
	assert_frame(KSTACK_TOP, UCODE, UCS, 0x202 | X86_RFLAGS_RF, USTACK, UDS);

	st = kernel_state();
	st.regs.rsp = 0x8800;
	ck_assert_int_eq(emulate(&st, "\x0f\xff\xc0", 3), 0); /* ud0 %eax,%eax */
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x50);
	assert_frame(0x8800, 0x100400, KCS, 0x2 | X86_RFLAGS_RF, 0x8800, KDS);

	set_gate(6, gate64(HANDLER + 0x50, KCS, 0xe, 0, 0) & ~(1ULL << 47), 0);
	refused(user_state(), "\x0f\x0b", 2, -EINVAL, "#UD gate not present");
}
END_TEST

START_TEST(test_int_refused)
{
	struct transition_state base = user_state(), st;
	uint64_t ok = gate64(HANDLER, KCS, 0xe, 3, 0);

#define INT_REFUSED(lo, hi, err, what)                                                          \
	do {                                                                                    \
		set_gate(0x80, lo, hi);                                                         \
		refused(base, INT80, 2, err, what);                                             \
		set_gate(0x80, ok, 0);                                                          \
	} while (0)

	refused(base, INT81, 2, -EINVAL, "gate DPL 0 from CPL 3");
	INT_REFUSED(ok & ~(1ULL << 47), 0, -EINVAL, "gate not present");
	INT_REFUSED(gate64(HANDLER, KCS, 0x5, 3, 0), 0, -EINVAL, "task gate");
	INT_REFUSED(gate64(HANDLER, KCS, 0xc, 3, 0), 0, -EINVAL, "call gate");
	INT_REFUSED(gate64(HANDLER, KCS, 0x6, 3, 0), 0, -EINVAL, "16-bit gate type");
	INT_REFUSED(ok, 1ULL << 40, -EINVAL, "upper type not zero");
	INT_REFUSED(gate64(HANDLER, 0, 0xe, 3, 0), 0, -EINVAL, "null CS");
	INT_REFUSED(gate64(HANDLER, 0x0c, 0xe, 3, 0), 0, -EOPNOTSUPP, "CS in the LDT");
	INT_REFUSED(gate64(HANDLER, 0x48, 0xe, 3, 0), 0, -EINVAL, "CS beyond the GDT");
	INT_REFUSED(gate64(HANDLER, KDS, 0xe, 3, 0), 0, -EINVAL, "CS is data");
	INT_REFUSED(gate64(HANDLER, 0x20, 0xe, 3, 0), 0, -EOPNOTSUPP, "CS of DPL 3");
	INT_REFUSED(gate64(HANDLER, 0x38, 0xe, 3, 0), 0, -EOPNOTSUPP, "32-bit CS");
	INT_REFUSED(ok, 0x00008000, -EINVAL, "non-canonical handler");

	fake_put64(&ram, GDT + 0x08, DESC_KCODE & ~(1ULL << 47));
	refused(base, INT80, 2, -EINVAL, "CS not present");
	fake_put64(&ram, GDT + 0x08, DESC_KCODE);

	st = base;
	st.sregs.idt.limit = 0x80 * 16 + 14;
	refused(st, INT80, 2, -EINVAL, "beyond the IDT limit");
	st = base;
	st.sregs.idt.base = 0x7ff000;
	refused(st, INT80, 2, -EFAULT, "IDT not mapped");
	st = base;
	st.sregs.tr.type = 0x9;
	refused(st, INT80, 2, -EOPNOTSUPP, "TSS not busy");
	st = base;
	st.sregs.tr.unusable = 1;
	refused(st, INT80, 2, -EOPNOTSUPP, "no TSS");
	st = base;
	st.sregs.tr.limit = 10;
	refused(st, INT80, 2, -EINVAL, "RSP0 beyond the TSS limit");
	st = base;
	st.cpl_ok = 8;
	refused(st, INT80, 2, -EPERM, "CPL 0 not steppable");
	st = base;
	st.regs.rflags |= X86_RFLAGS_TF;
	refused(st, INT80, 2, -EOPNOTSUPP, "the guest's own TF");
	st = base;
	st.sregs.ss.dpl = 1;
	refused(st, INT80, 2, -EOPNOTSUPP, "CPL 1");

	fake_put64(&ram, TSS + 4, 0x0000800000000000ULL);
	refused(base, INT80, 2, -EINVAL, "non-canonical RSP0");
	fake_put64(&ram, TSS + 4, 0x7ff000 + 0x1000);
	refused(base, INT80, 2, -EFAULT, "RSP0 beyond RAM");
	fake_put64(&ram, TSS + 4, KSTACK_TOP);

	/* the new stack's page read-only */
	fake_put64(&ram, PT + 8 * 8, 0x8000 | X86_PTE_P);
	refused(base, INT80, 2, -EFAULT, "read-only stack with CR0.WP");
	st = base;
	st.sregs.cr0 &= ~X86_CR0_WP;
	ck_assert_int_eq(emulate(&st, INT80, 2), 0); /* supervisor writes without WP */
	fake_put64(&ram, PT + 8 * 8, 0x8000 | X86_PTE_P | X86_PTE_RW);

	/* a kernel stack on a user page with SMAP */
	fake_put64(&ram, TSS + 4, 0x380000);
	st = base;
	st.sregs.cr4 |= X86_CR4_SMAP;
	refused(st, INT80, 2, -EFAULT, "stack on a user page with SMAP");
	fake_put64(&ram, TSS + 4, KSTACK_TOP);
#undef INT_REFUSED
}
END_TEST

/* ---- page faults of user loads and stores -------------------------------------------------- */

static int access_of(const char *bytes, size_t n, struct insn_mem *m)
{
	uint64_t g[INSN_GPR_MAX];

	for (unsigned int i = 0; i < INSN_GPR_MAX; i++)
		g[i] = 0x1000ULL * (i + 1);
	g[INSN_RDI] = 0xffffffff00000040ULL;
	return insn__mem_access(&dec, 0x400000, (const uint8_t *)bytes, n, g, 0x7000000,
				0x9000000, m);
}

START_TEST(test_mem_access)
{
	struct insn_mem m;

	ck_assert_int_eq(access_of("\x8b\x07", 2, &m), 0); /* mov (%rdi),%eax */
	ck_assert_uint_eq(m.la, 0xffffffff00000040ULL);
	ck_assert_uint_eq(m.len, 4);
	ck_assert(!m.write);
	ck_assert_int_eq(access_of("\x89\x44\x24\x10", 4, &m), 0); /* mov %eax,0x10(%rsp) */
	ck_assert_uint_eq(m.la, 0x5010);
	ck_assert(m.write);
	/* mov 0x100(%rip),%rax: relative to the next instruction */
	ck_assert_int_eq(access_of("\x48\x8b\x05\x00\x01\x00\x00", 7, &m), 0);
	ck_assert_uint_eq(m.la, 0x400000 + 7 + 0x100);
	ck_assert_uint_eq(m.len, 8);
	/* mov %fs:0x8,%rax */
	ck_assert_int_eq(access_of("\x64\x48\x8b\x04\x25\x08\x00\x00\x00", 9, &m), 0);
	ck_assert_uint_eq(m.la, 0x7000008);
	ck_assert_int_eq(access_of("\x67\x8b\x07", 3, &m), 0); /* mov (%edi),%eax */
	ck_assert_uint_eq(m.la, 0x40);
	ck_assert_int_eq(access_of("\x3b\x14\x8b", 3, &m), 0); /* cmp (%rbx,%rcx,4),%edx */
	ck_assert_uint_eq(m.la, 0x4000 + 4 * 0x2000);
	ck_assert_int_eq(access_of("\x0f\xb6\x47\xff", 4, &m), 0); /* movzbl -1(%rdi),%eax */
	ck_assert_uint_eq(m.la, 0xffffffff0000003fULL);
	ck_assert_uint_eq(m.len, 1);

	ck_assert_int_eq(access_of("\x01\x07", 2, &m), -ENOENT);         /* add %eax,(%rdi) */
	ck_assert_int_eq(access_of("\xf0\x01\x07", 3, &m), -ENOENT);     /* lock add */
	ck_assert_int_eq(access_of("\x50", 1, &m), -ENOENT);               /* push %rax */
	ck_assert_int_eq(access_of("\x48\x8d\x07", 3, &m), -ENOENT);     /* lea (%rdi),%rax */
	ck_assert_int_eq(access_of("\x8e\x1f", 2, &m), -ENOENT);          /* mov (%rdi),%ds */
	ck_assert_int_eq(access_of("\x89\xc7", 2, &m), -ENOENT);          /* mov %eax,%edi */
	ck_assert_int_eq(access_of("\xa5", 1, &m), -ENOENT);               /* movsl */
	ck_assert_int_eq(access_of("\x8b", 1, &m), -ENODATA);
}
END_TEST

static int user_fault(const struct transition_state *st, uint64_t la, uint32_t len, bool write,
		      uint32_t *code)
{
	*code = 0xdead;
	return transition__user_fault(st, la, len, write, fake_ram_ptr, &ram, code);
}

START_TEST(test_user_fault)
{
	struct transition_state st = user_state(), k = kernel_state();
	uint32_t code;

	ck_assert_int_eq(user_fault(&st, 0x300010, 8, false, &code), 0);
	ck_assert_int_eq(user_fault(&st, 0x300010, 8, true, &code), 0);
	ck_assert_int_eq(user_fault(&st, 0x3ffffe, 4, true, &code), 0); /* two user pages */
	ck_assert_int_eq(user_fault(&st, 0x0, 4, false, &code), 1); /* NULL: not present */
	ck_assert_uint_eq(code, 0x4);
	ck_assert_int_eq(user_fault(&st, 0x10, 4, true, &code), 1);
	ck_assert_uint_eq(code, 0x6);
	ck_assert_int_eq(user_fault(&st, 0x8000, 4, false, &code), 1); /* a supervisor page */
	ck_assert_uint_eq(code, 0x5);
	ck_assert_int_eq(user_fault(&st, 0x7ff000, 1, false, &code), 1); /* PD entry clear */
	ck_assert_uint_eq(code, 0x4);
	/* read-only user page */
	fake_put64(&ram, PD + 2 * 8, 0x400000 | X86_PTE_P | X86_PTE_US | X86_PTE_PS);
	ck_assert_int_eq(user_fault(&st, 0x400100, 2, false, &code), 0);
	ck_assert_int_eq(user_fault(&st, 0x400100, 2, true, &code), 1);
	ck_assert_uint_eq(code, 0x7);

	/* not predicted */
	ck_assert_int_eq(user_fault(&k, 0x0, 4, false, &code), -EOPNOTSUPP); /* CPL 0 */
	ck_assert_int_eq(user_fault(&st, 0x0000800000000000ULL, 4, false, &code), -EOPNOTSUPP);
	ck_assert_int_eq(user_fault(&st, 0x00007ffffffffffeULL, 4, false, &code), -EOPNOTSUPP);
	ck_assert_int_eq(user_fault(&st, 0x5ffffe, 4, false, &code), -EOPNOTSUPP); /* split */
	ck_assert_int_eq(user_fault(&st, 0x300000, 0, false, &code), -EOPNOTSUPP);
	st.sregs.cr0 |= 1ULL << 18;
	st.regs.rflags |= 1ULL << 18;
	ck_assert_int_eq(user_fault(&st, 0x0, 4, false, &code), -EOPNOTSUPP); /* AM and AC */
	st = user_state();
	st.sregs.cr4 |= 1ULL << 22;
	ck_assert_int_eq(user_fault(&st, 0x0, 4, false, &code), -EOPNOTSUPP); /* PKE */
	st = user_state();
	fake_put64(&ram, PD + 1 * 8,
		   0x200000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US | X86_PTE_PS | (1ULL << 63));
	ck_assert_int_eq(user_fault(&st, 0x300000, 4, false, &code), -EOPNOTSUPP); /* NX, !NXE */
	fake_put64(&ram, PD + 1 * 8,
		   0x200000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US | X86_PTE_PS | (1ULL << 13));
	ck_assert_int_eq(user_fault(&st, 0x300000, 4, false, &code), -EOPNOTSUPP); /* reserved */
	fake_put64(&ram, PD + 1 * 8, 0x7ff000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US);
	fake_put64(&ram, PDPT, 0x900000 | X86_PTE_P | X86_PTE_RW | X86_PTE_US);
	ck_assert_int_eq(user_fault(&st, 0x300000, 4, false, &code), -EOPNOTSUPP); /* beyond RAM */
}
END_TEST

START_TEST(test_page_fault)
{
	struct transition_state st = user_state(), before;

	set_gate(14, gate64(HANDLER + 0x40, KCS, 0xe, 0, 0), 0); /* DPL 0: not checked */
	st.regs.rflags = 0x202;
	ck_assert_int_eq(transition__page_fault(&st, 0x10, 0x4, fake_ram_ptr, &ram), 0);
	ck_assert_uint_eq(st.regs.rip, HANDLER + 0x40);
	ck_assert_uint_eq(st.regs.rsp, KSTACK_TOP - 48);
	ck_assert_uint_eq(st.regs.rflags, 0x2);
	ck_assert_uint_eq(st.sregs.cr2, 0x10);
	ck_assert_uint_eq(get64(KSTACK_TOP - 48), 0x4); /* error code */
	/* the faulting RIP, RF set in the pushed flags */
	assert_frame(KSTACK_TOP, UCODE, UCS, 0x202 | X86_RFLAGS_RF, USTACK, UDS);
	ck_assert_uint_eq(st.sregs.cs.selector, KCS);
	ck_assert_uint_eq(st.sregs.ss.unusable, 1);

	/* refused as int n is, nothing changed */
	st = user_state();
	set_gate(14, gate64(HANDLER + 0x40, KCS, 0xe, 0, 0) & ~(1ULL << 47), 0);
	before = st;
	memcpy(snapshot, ram.buf, RAM_SIZE);
	ck_assert_int_eq(transition__page_fault(&st, 0x10, 0x4, fake_ram_ptr, &ram), -EINVAL);
	ck_assert(!memcmp(&st, &before, sizeof(st)));
	ck_assert(!memcmp(snapshot, ram.buf, RAM_SIZE));
	set_gate(14, gate64(HANDLER + 0x40, KCS, 0xe, 0, 0), 0);
	st.sregs.cs.l = 0;
	ck_assert_int_eq(transition__page_fault(&st, 0x10, 0x4, fake_ram_ptr, &ram), -EOPNOTSUPP);
}
END_TEST

Suite *transition_suite(void)
{
	Suite *s = suite_create("transition");
	TCase *tc = tcase_create("transition");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_wanted);
	tcase_add_test(tc, test_sysret);
	tcase_add_test(tc, test_sysret_refused);
	tcase_add_test(tc, test_syscall);
	tcase_add_test(tc, test_syscall_refused);
	tcase_add_test(tc, test_iret);
	tcase_add_test(tc, test_iret_refused);
	tcase_add_test(tc, test_int_from_user);
	tcase_add_test(tc, test_int_gates);
	tcase_add_test(tc, test_int_refused);
	tcase_add_test(tc, test_ud2);
	tcase_add_test(tc, test_mem_access);
	tcase_add_test(tc, test_user_fault);
	tcase_add_test(tc, test_page_fault);
	suite_add_tcase(s, tc);
	return s;
}
