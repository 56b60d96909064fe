// SPDX-License-Identifier: GPL-2.0
/*
 * guest-bts.c - test guest: programs BTS itself, as on Intel hardware, and checks its own
 * buffer against its labels (`vbts run --guest-bts`).
 *
 * The labelled sequence bts_seq (seq_<kind>_from / seq_<kind>_to) takes NSEQ branches between
 * the WRMSR that sets IA32_DEBUGCTL and the one that clears it. The guest runs it in every
 * mode of the SDM's table that ring 0 can show (TR, BTS, BTS_OFF_OS, BTS_OFF_USR, BTINT),
 * checks the records (from, to, flags 0) and the index, the circular wrap at the absolute
 * maximum (an exact multiple of the record size and one more byte), and with BTINT the PMI
 * through the x2APIC's LVTPC (an NMI): once at the threshold when the handler does not drain,
 * records stop when the buffer is full; with a handler that drains like Linux's, every branch
 * arrives, the PMI's own record (interrupted instruction -> nmi_entry) and its IRETQ among
 * them. Whether a PMI masks LVTPC is the platform's (KVM masks it for Intel-compatible CPUID
 * only): the checks hold either way.
 *
 * Built with -DGUEST_BTS_HOSTILE (image guest-bts-hostile) it gives BTS every hostile DS
 * configuration instead and checks that it keeps running, that nothing but its buffer changes
 * and that nothing is stored where it cannot be; the VMM counts the records it drops.
 *
 * On a CPU whose IA32_DS_AREA does not keep its value (QEMU TCG) it runs the labelled sequence
 * once and exits with GUEST_EXIT_NO_DS: that run's execution log is the oracle of its buffer
 * (seq_jmp_from up to seq_end, tests/kvm/guest-bts-oracle).
 *
 * Console: "guest-bts: <check> ok" per check, the records of each run as "rec <from> <to>"
 * lines (the same under every backend), "guest-bts: done". Exit value 0 when every check
 * passed, GUEST_EXIT_CPUID when only CPUID lacked the DS bits (the other checks run without
 * them: some KVMs give the guest a CPUID of their own, and vbts run says so), GUEST_EXIT_ASSERT
 * otherwise.
 */
#include "guest.h"

#define MSR_APIC_BASE 0x1b
#define MSR_MISC_ENABLE 0x1a0
#define MSR_DEBUGCTL 0x1d9
#define MSR_DS_AREA 0x600
#define MSR_X2APIC_SVR 0x80f
#define MSR_X2APIC_LVTPC 0x834
#define APIC_BASE_EXTD (1ULL << 10)
#define APIC_BASE_EN (1ULL << 11)
#define LVT_NMI (4U << 8)
#define LVT_MASKED (1U << 16)
#define MISC_BTS_UNAVAIL (1ULL << 11)
#define MISC_PEBS_UNAVAIL (1ULL << 12)

#define TR (1ULL << 6)
#define BTS (1ULL << 7)
#define BTINT (1ULL << 8)
#define OFF_OS (1ULL << 9)
#define OFF_USR (1ULL << 10)

#define REC 24ULL
#define NSEQ 7
#define CAP 16   /* records in the buffer */
#define DRAIN 64 /* records the PMI handler keeps */

/* Exit value when every check but CPUID's passed (a KVM that ignores the VMM's CPUID). */
#define GUEST_EXIT_CPUID 0x02
/* Exit value on a CPU without a DS save area (QEMU TCG): the labelled sequence ran alone. */
#define GUEST_EXIT_NO_DS 0x03

/* The mode checks, which the hostile image does not run. */
#define MODES_ONLY __attribute__((unused))

#define L(name) ".globl " name "\n" name ":\n"

/*
 * bts_seq(debugctl): IA32_DEBUGCTL = debugctl, NSEQ branches, IA32_DEBUGCTL = 0, return.
 * try_wrmsr(msr, value): 1 when the WRMSR raised #GP (guest_trap() resumes it), else 0.
 * nmi_entry: the PMI's handler; clears DEBUGCTL before its first branch, calls bts_pmi() and
 * restores DEBUGCTL before its IRETQ (nmi_iretq, the one branch of it BTS records).
 */
__asm__(
	".text\n"
	".globl bts_seq\n"
	".type bts_seq, @function\n"
	"bts_seq:\n"
	"	mov %rdi, %rax\n"
	"	mov %rdi, %rdx\n"
	"	shr $32, %rdx\n"
	"	mov $0x1d9, %ecx\n"
	"	wrmsr\n"
	L("seq_jmp_from")
	"	jmp seq_jmp_to\n"
	"	ud2\n"
	L("seq_jmp_to")
	"	xor %eax, %eax\n"
	L("seq_jcc_from")
	"	jz seq_jcc_to\n"
	"	ud2\n"
	L("seq_jcc_to")
	"	test %eax, %eax\n"
	"	jnz seq_fail\n"
	L("seq_call_from")
	"	call seq_leaf\n"
	L("seq_ret_to")
	"	mov $3, %ecx\n"
	L("seq_loop_to")
	"	add $1, %eax\n"
	L("seq_loop_from")
	"	loop seq_loop_to\n"
	"	lea seq_ind_to(%rip), %rax\n"
	L("seq_ind_from")
	"	jmp *%rax\n"
	"	ud2\n"
	L("seq_ind_to")
	"	xor %eax, %eax\n"
	"	xor %edx, %edx\n"
	"	mov $0x1d9, %ecx\n"
	"	wrmsr\n"
	L("seq_end")
	"	ret\n"
	"seq_leaf:\n"
	L("seq_call_to")
	"	nop\n"
	L("seq_ret_from")
	"	ret\n"
	"seq_fail:\n"
	"	ud2\n"
	".size bts_seq, . - bts_seq\n"

	".globl try_wrmsr\n"
	".type try_wrmsr, @function\n"
	"try_wrmsr:\n"
	"	mov %edi, %ecx\n"
	"	mov %rsi, %rax\n"
	"	mov %rsi, %rdx\n"
	"	shr $32, %rdx\n"
	"	xor %r8d, %r8d\n"
	L("try_wrmsr_site")
	"	wrmsr\n"
	L("try_wrmsr_resume")
	"	mov %r8d, %eax\n"
	"	ret\n"
	".size try_wrmsr, . - try_wrmsr\n"

	".globl nmi_entry\n"
	".type nmi_entry, @function\n"
	"nmi_entry:\n"
	"	push %rax\n"
	"	push %rcx\n"
	"	push %rdx\n"
	"	mov $0x1d9, %ecx\n"
	"	rdmsr\n"
	"	push %rax\n"
	"	push %rdx\n"
	"	xor %eax, %eax\n"
	"	xor %edx, %edx\n"
	"	wrmsr\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %r8\n"
	"	push %r9\n"
	"	push %r10\n"
	"	push %r11\n"
	"	call bts_pmi\n"
	"	pop %r11\n"
	"	pop %r10\n"
	"	pop %r9\n"
	"	pop %r8\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	mov $0x1d9, %ecx\n"
	"	wrmsr\n"
	"	pop %rdx\n"
	"	pop %rcx\n"
	"	pop %rax\n"
	L("nmi_iretq")
	"	iretq\n"
	".size nmi_entry, . - nmi_entry\n");

struct ds_area {
	uint64_t bts_base, bts_index, bts_max, bts_threshold;
	uint64_t pebs[5];
};

struct rec {
	uint64_t from, to, flags;
};

void bts_seq(uint64_t debugctl);
int try_wrmsr(uint32_t msr, uint64_t value);
void bts_pmi(void);
extern char seq_jmp_from[], seq_jmp_to[], seq_jcc_from[], seq_jcc_to[], seq_call_from[],
	seq_call_to[], seq_ret_from[], seq_ret_to[], seq_loop_from[], seq_loop_to[],
	seq_ind_from[], seq_ind_to[], try_wrmsr_site[], try_wrmsr_resume[], nmi_entry[],
	nmi_iretq[];

static struct ds_area ds __attribute__((aligned(64)));
static struct rec buf[CAP + 1] __attribute__((aligned(64)));
static struct rec drained[DRAIN];
static volatile unsigned int ndrained, pmis, pmi_drain;

static void expected(struct rec e[NSEQ])
{
	const struct rec t[NSEQ] = {
		{ (uint64_t)seq_jmp_from, (uint64_t)seq_jmp_to, 0 },
		{ (uint64_t)seq_jcc_from, (uint64_t)seq_jcc_to, 0 },
		{ (uint64_t)seq_call_from, (uint64_t)seq_call_to, 0 },
		{ (uint64_t)seq_ret_from, (uint64_t)seq_ret_to, 0 },
		{ (uint64_t)seq_loop_from, (uint64_t)seq_loop_to, 0 },
		{ (uint64_t)seq_loop_from, (uint64_t)seq_loop_to, 0 },
		{ (uint64_t)seq_ind_from, (uint64_t)seq_ind_to, 0 },
	};

	memcpy(e, t, sizeof(t));
}

static void fail(const char *check, const char *what, uint64_t a, uint64_t b)
{
	uart_puts("guest-bts: ");
	uart_puts(check);
	uart_puts(": ");
	uart_puts(what);
	uart_putc(' ');
	uart_hex(a);
	uart_putc(' ');
	uart_hex(b);
	uart_putc('\n');
	guest_exit(GUEST_EXIT_ASSERT);
}

static void ok(const char *check)
{
	uart_puts("guest-bts: ");
	uart_puts(check);
	uart_puts(" ok\n");
}

static void print_recs(const struct rec *r, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uart_puts("rec ");
		uart_hex(r[i].from);
		uart_putc(' ');
		uart_hex(r[i].to);
		uart_putc('\n');
	}
}

/* The DS area over buf with @cap records, the threshold @thr records from the base. */
static void ds_setup(unsigned int cap, uint64_t max_extra, uint64_t thr)
{
	memset(buf, 0, sizeof(buf));
	ds.bts_base = (uint64_t)buf;
	ds.bts_index = (uint64_t)buf;
	ds.bts_max = (uint64_t)buf + cap * REC + max_extra;
	ds.bts_threshold = (uint64_t)buf + thr * REC;
	wrmsr(MSR_DS_AREA, (uint64_t)&ds);
}

static unsigned int stored(void)
{
	return (unsigned int)((ds.bts_index - ds.bts_base) / REC);
}

static void check_recs(const char *check, const struct rec *got, const struct rec *want,
		       unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (got[i].from != want[i].from)
			fail(check, "from", got[i].from, want[i].from);
		if (got[i].to != want[i].to)
			fail(check, "to", got[i].to, want[i].to);
		if (got[i].flags)
			fail(check, "flags", i, got[i].flags);
	}
}

static MODES_ONLY void check_none(const char *check, uint64_t debugctl)
{
	ds_setup(CAP, 0, CAP + 1);
	bts_seq(debugctl);
	if (ds.bts_index != ds.bts_base)
		fail(check, "records stored", stored(), 0);
	for (unsigned int i = 0; i < CAP + 1; i++)
		if (buf[i].from || buf[i].to || buf[i].flags)
			fail(check, "buffer written", i, buf[i].from);
	ok(check);
}

static void check_all(const char *check, uint64_t debugctl)
{
	struct rec e[NSEQ];

	expected(e);
	ds_setup(CAP, 0, CAP + 1);
	bts_seq(debugctl);
	if (stored() != NSEQ)
		fail(check, "records", stored(), NSEQ);
	check_recs(check, buf, e, NSEQ);
	if (buf[NSEQ].from || buf[NSEQ].to)
		fail(check, "past the index", buf[NSEQ].from, buf[NSEQ].to);
	print_recs(buf, NSEQ);
	ok(check);
}

/* Circular mode: 4 records wrap at the maximum; slot i holds the newest record i (mod 4). */
static MODES_ONLY void check_wrap(const char *check, uint64_t max_extra)
{
	struct rec e[NSEQ], want[4];

	expected(e);
	ds_setup(4, max_extra, 5);
	bts_seq(TR | BTS);
	if (ds.bts_index != ds.bts_base + (NSEQ % 4) * REC)
		fail(check, "wrap position", ds.bts_index - ds.bts_base, (NSEQ % 4) * REC);
	for (unsigned int i = 0; i < NSEQ; i++)
		want[i % 4] = e[i];
	check_recs(check, buf, want, 4);
	if (buf[4].from || buf[4].to)
		fail(check, "past the maximum", buf[4].from, buf[4].to);
	print_recs(buf, 4);
	ok(check);
}

void bts_pmi(void)
{
	unsigned int n = stored();

	pmis++;
	if (!pmi_drain) {
		/* leave the buffer full and the PMI masked: BTINT stores nothing more */
		wrmsr(MSR_X2APIC_LVTPC, LVT_NMI | LVT_MASKED);
		return;
	}
	for (unsigned int i = 0; i < n && ndrained < DRAIN; i++)
		drained[ndrained++] = buf[i];
	ds.bts_index = ds.bts_base;
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI);
}

/* IDT entry @vector: a 64-bit interrupt gate of DPL 0 to @handler (the IDT of lib/cpu.c). */
static void set_gate(unsigned int vector, const void *handler)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) idtr;
	uint64_t a = (uint64_t)handler, *g;

	__asm__ volatile("sidt %0" : "=m"(idtr));
	g = (uint64_t *)(idtr.base + 16 * vector);
	g[0] = (a & 0xffff) | ((uint64_t)GDT_KERNEL_CS << 16) | (0x8eULL << 40) |
	       ((a & 0xffff0000ULL) << 32);
	g[1] = a >> 32;
}

static void lapic_init(void)
{
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
	wrmsr(MSR_X2APIC_SVR, 0x1ff);
	set_gate(2, nmi_entry);
}

/*
 * The records of a BTINT run in order (@all, @n): the PMI's records come in pairs, the event
 * (interrupted instruction -> nmi_entry) and the handler's IRETQ back to the same instruction;
 * the others are the labelled branches in order, the first of those pairs right after the
 * record that reached the threshold (@thr records). Returns the labelled records seen.
 */
static unsigned int check_btint(const char *check, const struct rec *all, unsigned int n,
				unsigned int thr)
{
	unsigned int labelled = 0, events = 0;
	struct rec e[NSEQ];

	expected(e);
	for (unsigned int i = 0; i < n; i++) {
		if (all[i].flags)
			fail(check, "flags", i, all[i].flags);
		if (all[i].to == (uint64_t)nmi_entry) {
			if (!events && labelled != thr)
				fail(check, "first pmi after record", labelled, thr);
			events++;
			if (i + 1 < n && (all[i + 1].from != (uint64_t)nmi_iretq ||
					  all[i + 1].to != all[i].from))
				fail(check, "pmi not followed by its iretq", i, all[i + 1].from);
			if (i + 1 < n)
				i++;
			continue;
		}
		if (labelled == NSEQ)
			fail(check, "extra record", i, all[i].from);
		if (all[i].from != e[labelled].from || all[i].to != e[labelled].to)
			fail(check, "record", i, all[i].from);
		labelled++;
	}
	if (!events || events != pmis)
		fail(check, "pmis", pmis, events);
	return labelled;
}

static MODES_ONLY void check_btint_full(void)
{
	const char *check = "btint full";

	pmis = 0;
	pmi_drain = 0;
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI);
	ds_setup(6, 0, 3);
	bts_seq(TR | BTS | BTINT);
	if (ds.bts_index != ds.bts_max)
		fail(check, "not full", stored(), 6);
	if (check_btint(check, buf, 6, 3) == NSEQ)
		fail(check, "nothing dropped", NSEQ, 6);
	print_recs(buf, 6);
	ok(check);
}

static MODES_ONLY void check_btint_drain(void)
{
	const char *check = "btint drain";
	static struct rec all[DRAIN + CAP];
	unsigned int n = 0, labelled;

	pmis = 0;
	ndrained = 0;
	pmi_drain = 1;
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI);
	ds_setup(8, 0, 4);
	bts_seq(TR | BTS | BTINT);
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI | LVT_MASKED);
	for (unsigned int i = 0; i < ndrained; i++)
		all[n++] = drained[i];
	for (unsigned int i = 0; i < stored(); i++)
		all[n++] = buf[i];
	labelled = check_btint(check, all, n, 4);
	if (labelled != NSEQ)
		fail(check, "labelled records", labelled, NSEQ);
	uart_puts("pmis ");
	uart_dec(pmis);
	uart_putc('\n');
	print_recs(all, n);
	ok(check);
}

/* Set when CPUID lacks the DS bits: the other checks still run, the exit value says it. */
static int cpuid_failed;

static void check_enumeration(void)
{
	const char *check = "enumeration";
	uint32_t a, b, c, d;
	uint64_t misc;

	cpuid(1, &a, &b, &c, &d);
	if (!(d & (1U << 21)) || !(c & (1U << 2)) || !(c & (1U << 4))) {
		uart_puts("guest-bts: enumeration: CPUID.01H without DS, DTES64 or DS-CPL ");
		uart_hex(d);
		uart_putc(' ');
		uart_hex(c);
		uart_putc('\n');
		cpuid_failed = 1;
	}
	misc = rdmsr(MSR_MISC_ENABLE);
	if (misc & MISC_BTS_UNAVAIL)
		fail(check, "MISC_ENABLE.BTS_UNAVAILABLE set", misc, 0);
	if (!(misc & MISC_PEBS_UNAVAIL))
		fail(check, "MISC_ENABLE.PEBS_UNAVAILABLE clear", misc, 0);
	ok(check);
}

static MODES_ONLY void check_msrs(void)
{
	const char *check = "msrs";

	wrmsr(MSR_DS_AREA, (uint64_t)&ds);
	if (rdmsr(MSR_DS_AREA) != (uint64_t)&ds)
		fail(check, "DS_AREA read back", rdmsr(MSR_DS_AREA), (uint64_t)&ds);
	if (!try_wrmsr(MSR_DS_AREA, 0x0000800000000000ULL))
		fail(check, "non-canonical DS_AREA accepted", 0, 0);
	if (rdmsr(MSR_DS_AREA) != (uint64_t)&ds)
		fail(check, "DS_AREA changed by a refused write", rdmsr(MSR_DS_AREA), 0);
	wrmsr(MSR_DEBUGCTL, OFF_OS | OFF_USR | BTINT);
	if (rdmsr(MSR_DEBUGCTL) != (OFF_OS | OFF_USR | BTINT))
		fail(check, "DEBUGCTL read back", rdmsr(MSR_DEBUGCTL), OFF_OS | OFF_USR | BTINT);
	wrmsr(MSR_DEBUGCTL, 0);
	for (unsigned int bit = 2; bit < 6; bit++)
		if (!try_wrmsr(MSR_DEBUGCTL, 1ULL << bit))
			fail(check, "reserved DEBUGCTL bit accepted", bit, 0);
	if (!try_wrmsr(MSR_DEBUGCTL, 1ULL << 63))
		fail(check, "reserved DEBUGCTL bit accepted", 63, 0);
	if (rdmsr(MSR_DEBUGCTL) != 0)
		fail(check, "DEBUGCTL changed by a refused write", rdmsr(MSR_DEBUGCTL), 0);
	ok(check);
}

void guest_trap(struct trap_frame *f)
{
	if (f->vector == VEC_GP && f->rip == (uint64_t)try_wrmsr_site) {
		f->r8 = 1;
		f->rip = (uint64_t)try_wrmsr_resume;
		return;
	}
	uart_puts("guest-bts: unexpected exception ");
	uart_dec(f->vector);
	uart_puts(" at ");
	uart_hex(f->rip);
	uart_putc('\n');
	guest_exit((uint8_t)(GUEST_EXIT_EXCEPTION + (f->vector & 0x1f)));
}

#ifdef GUEST_BTS_HOSTILE
/*
 * A 2 MiB window at HOSTILE_VA mapped with 4 KiB pages: page n at HOSTILE_VA + n * 4 KiB is
 * RAM (the same physical address) except HP_RO (read-only), HP_NP (not present), HP_MMIO
 * (the local APIC's page) and HP_NORAM (beyond the guest's RAM). Pages HP_RAM0 and HP_RAM2
 * are the canaries around them.
 */
#define HOSTILE_VA 0x1000000ULL
#define HP_RAM0 0
#define HP_RO 1
#define HP_RAM2 2
#define HP_NP 3
#define HP_MMIO 5
#define HP_NORAM 6
#define HP(n) (HOSTILE_VA + (uint64_t)(n) * 4096)
#define CANARY 0x5a

static uint64_t hostile_pt[512] __attribute__((aligned(4096)));

static void hostile_map(void)
{
	uint64_t *pml4 = (uint64_t *)(read_cr3() & ~0xfffULL);
	uint64_t *pdpt = (uint64_t *)(pml4[0] & 0x000ffffffffff000ULL);
	uint64_t *pd = (uint64_t *)(pdpt[0] & 0x000ffffffffff000ULL);

	for (unsigned int i = 0; i < 512; i++)
		hostile_pt[i] = (HOSTILE_VA + i * 4096ULL) | 0x3;
	hostile_pt[HP_RO] &= ~0x2ULL;
	hostile_pt[HP_NP] = 0;
	hostile_pt[HP_MMIO] = 0xfee00000ULL | 0x3;
	hostile_pt[HP_NORAM] = 0x7ff00000ULL | 0x3; /* 2 GiB: beyond --memory's default */
	pd[HOSTILE_VA >> 21] = (uint64_t)hostile_pt | 0x3;
	write_cr3(read_cr3());
}

static void canaries_set(void)
{
	memset((void *)HP(HP_RAM0), CANARY, 4096);
	memset((void *)HP(HP_RAM2), CANARY, 4096);
	memset(buf, CANARY, sizeof(buf));
}

static void canaries_check_pages(const char *check)
{
	const uint8_t *a = (const uint8_t *)HP(HP_RAM0), *b = (const uint8_t *)HP(HP_RAM2);

	for (unsigned int i = 0; i < 4096; i++) {
		if (a[i] != CANARY)
			fail(check, "written below the read-only page", i, a[i]);
		if (b[i] != CANARY)
			fail(check, "written around the unmapped page", i, b[i]);
	}
}

static void canaries_check(const char *check)
{
	const uint8_t *c = (const uint8_t *)buf;

	canaries_check_pages(check);
	for (unsigned int i = 0; i < sizeof(buf); i++)
		if (c[i] != CANARY)
			fail(check, "buffer written", i, c[i]);
}

/*
 * One hostile configuration: the DS area at @area with these fields; BTS on for the labelled
 * sequence; nothing may be stored anywhere (the guest keeps running to check it).
 */
static void hostile(const char *check, uint64_t area, uint64_t debugctl, uint64_t base,
		    uint64_t index, uint64_t max, uint64_t thr)
{
	struct ds_area *d = (struct ds_area *)area;
	int mapped = area >= (uint64_t)&ds && area < (uint64_t)&ds + sizeof(ds);

	canaries_set();
	if (mapped) {
		d->bts_base = base;
		d->bts_index = index;
		d->bts_max = max;
		d->bts_threshold = thr;
	}
	wrmsr(MSR_DS_AREA, area);
	pmis = 0;
	bts_seq(debugctl);
	canaries_check(check);
	if (mapped && (d->bts_index != index || d->bts_base != base || d->bts_max != max))
		fail(check, "DS area changed", d->bts_index, index);
	ok(check);
}

static void check_hostile(void)
{
	const uint64_t on = TR | BTS, bi = TR | BTS | BTINT, b = (uint64_t)buf;
	const uint64_t m = b + CAP * REC, area = (uint64_t)&ds;
	struct rec e[NSEQ];

	hostile_map();
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI);
	pmi_drain = 0;
	/* the DS area: outside RAM, MMIO, not mapped, straddling the unmapped page */
	hostile("ds area outside ram", HP(HP_NORAM), on, 0, 0, 0, 0);
	hostile("ds area in mmio", HP(HP_MMIO), on, 0, 0, 0, 0);
	hostile("ds area not mapped", HP(HP_NP), on, 0, 0, 0, 0);
	hostile("ds area straddling", HP(HP_NP) - 16, on, 0, 0, 0, 0);
	if (!try_wrmsr(MSR_DS_AREA, 0x0000800000000000ULL))
		fail("ds area non-canonical", "accepted", 0, 0);
	ok("ds area non-canonical");
	/* the buffer: outside RAM, MMIO, not canonical, straddling unmapped or read-only */
	hostile("buffer outside ram", area, on, HP(HP_NORAM), HP(HP_NORAM), HP(HP_NORAM) + 4096,
		~0ULL);
	hostile("buffer in mmio", area, on, HP(HP_MMIO), HP(HP_MMIO), HP(HP_MMIO) + 4096, ~0ULL);
	hostile("buffer non-canonical", area, on, 0x0000800000000000ULL, 0x0000800000000000ULL,
		0x0000800000001000ULL, ~0ULL);
	hostile("buffer straddling unmapped", area, on, HP(HP_NP) - 16, HP(HP_NP) - 16,
		HP(HP_NP) + 4096, ~0ULL);
	hostile("buffer straddling read-only", area, on, HP(HP_RO) - 16, HP(HP_RO) - 16,
		HP(HP_RO) + 4096, ~0ULL);
	hostile("buffer read-only", area, on, HP(HP_RO), HP(HP_RO), HP(HP_RO) + 4096, ~0ULL);
	/* the fields: unaligned index, index below the base, maximum < base + 24, near 2^64 */
	hostile("index unaligned", area, on, b, b + 1, m, ~0ULL);
	hostile("index below base", area, on, b, b - REC, m, ~0ULL);
	hostile("maximum < base + 24", area, on, b, b, b + REC - 1, ~0ULL);
	hostile("sizes near 2^64", area, on, 0xffffffffffffff00ULL, 0xffffffffffffff00ULL,
		~0ULL, ~0ULL);
	hostile("maximum wraps", area, on, ~0ULL - 2 * REC, ~0ULL - 2 * REC, 8, 0);
	hostile("index > maximum, btint", area, bi, b, m + REC, m, b);
	hostile("threshold beyond the maximum, full", area, bi, b, m, m, m + REC);
	ok("hostile fields");

	/* index > maximum without BTINT: back to the base, as the wrap does */
	expected(e);
	ds_setup(CAP, 0, CAP + 1);
	ds.bts_index = m + 5 * REC;
	bts_seq(on);
	if (stored() != NSEQ)
		fail("index > maximum", "records", stored(), NSEQ);
	check_recs("index > maximum", buf, e, NSEQ);
	ok("index > maximum");

	/* threshold below the base: every store reaches it; PMIs, no hang */
	pmis = 0;
	ds_setup(CAP, 0, 0);
	ds.bts_threshold = 0;
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI);
	bts_seq(bi);
	if (!pmis || stored() < NSEQ)
		fail("threshold below the base", "pmis, records", pmis, stored());
	ok("threshold below the base");

	/* the DS area inside its own buffer: records overwrite the fields, bounded */
	canaries_set();
	ds.bts_base = b;
	ds.bts_index = b;
	ds.bts_max = b + 4 * REC;
	ds.bts_threshold = ~0ULL;
	memcpy(buf, &ds, sizeof(ds));
	wrmsr(MSR_DS_AREA, b);
	bts_seq(on);
	for (unsigned int i = 4 * REC; i < sizeof(buf); i++)
		if (((uint8_t *)buf)[i] != CANARY)
			fail("ds area in its buffer", "written past the maximum", i, 0);
	ok("ds area in its buffer");
	wrmsr(MSR_X2APIC_LVTPC, LVT_NMI | LVT_MASKED);
}

/*
 * A second vCPU rewriting the DS area while this one traces into it (`--vcpus 2 --append
 * smp2`). The AP is started with INIT and SIPI through the x2APIC's ICR into a real-mode
 * trampoline copied to AP_TRAMP, which goes straight to long mode on the BSP's page tables and
 * GDT and calls ap_main().
 *
 * The AP only ever writes these values (b the buffer's base, m its maximum, NC non-canonical),
 * mostly the index, so that a store often finds good fields that turn bad right after it read
 * them: base in {b, NC, HP(HP_NORAM)}, index in {b + k * 24, b + 1, b - 24, m + 24, NC,
 * HP(HP_MMIO)}, maximum in {m, b + 8}. Whatever mixture of them a store reads, it is dropped or it writes a
 * record inside [b, m): the fields check refuses a base of NC or above m and a maximum of
 * b + 8, an index beyond the maximum returns to the base. So the BSP can check afterwards that
 * nothing outside [b, m) changed and that every record in it is one of its labelled branches.
 */
#define AP_TRAMP 0x7000ULL
#define ICR_INIT 0x4500ULL
#define ICR_SIPI 0x4600ULL
#define MSR_X2APIC_ICR 0x830
#define AP_WAIT (1UL << 22) /* polls (no PAUSE: KVM exits on PAUSE loops): a hang guard */
#define NC 0x0000800000000000ULL
#define RACE_RUNS 40

#define TRAMP_ADDR(sym) "(0x7000 + " #sym " - ap_tramp)"

__asm__(
	".text\n"
	".code16\n"
	".globl ap_tramp\n"
	"ap_tramp:\n"
	"	cli\n"
	"	xor %ax, %ax\n"
	"	mov %ax, %ds\n"
	"	lgdtl " TRAMP_ADDR(ap_tramp_gdtr) "\n"
	"	mov %cr4, %eax\n"
	"	or $0x20, %eax\n"                      /* PAE */
	"	mov %eax, %cr4\n"
	"	mov " TRAMP_ADDR(ap_tramp_cr3) ", %eax\n"
	"	mov %eax, %cr3\n"
	"	mov $0xc0000080, %ecx\n"               /* EFER */
	"	rdmsr\n"
	"	or $0x101, %eax\n"                     /* LME, SCE */
	"	wrmsr\n"
	"	mov %cr0, %eax\n"
	"	or $0x80010001, %eax\n"                /* PG, WP, PE */
	"	mov %eax, %cr0\n"
	"	ljmpl *" TRAMP_ADDR(ap_tramp_far) "\n"
	".balign 8\n"
	".globl ap_tramp_gdtr\n"
	"ap_tramp_gdtr:\n"
	"	.word 0\n"
	"	.long 0\n"
	".balign 4\n"
	".globl ap_tramp_cr3\n"
	"ap_tramp_cr3:\n"
	"	.long 0\n"
	".globl ap_tramp_far\n"
	"ap_tramp_far:\n"
	"	.long 0\n"
	"	.word 0x08\n"
	".globl ap_tramp_end\n"
	"ap_tramp_end:\n"
	".code64\n"
	".globl ap_start64\n"
	".type ap_start64, @function\n"
	"ap_start64:\n"
	"	mov $0x10, %eax\n"
	"	mov %eax, %ds\n"
	"	mov %eax, %es\n"
	"	mov %eax, %ss\n"
	"	lea ap_stack_top(%rip), %rsp\n"
	"	call ap_main\n"
	"1:	hlt\n"
	"	jmp 1b\n"
	".size ap_start64, . - ap_start64\n"
	".bss\n"
	".balign 16\n"
	"ap_stack:\n"
	"	.skip 8192\n"
	"ap_stack_top:\n"
	".text\n");

extern char ap_tramp[], ap_tramp_gdtr[], ap_tramp_cr3[], ap_tramp_far[], ap_tramp_end[],
	ap_start64[];
void ap_main(void);

enum ap_cmd { AP_NONE, AP_BAD, AP_GOOD, AP_RACE, AP_STOP };

static volatile unsigned int ap_up, ap_cmd, ap_ack;
static volatile uint64_t ap_rewrites;
static struct rec sbuf[CAP + 2] __attribute__((aligned(64))); /* guard, CAP records, guard */

static uint64_t smp_b(void)
{
	return (uint64_t)&sbuf[1];
}

static uint64_t smp_m(void)
{
	return smp_b() + CAP * REC;
}

static void ds_good(void)
{
	ds.bts_base = smp_b();
	ds.bts_index = smp_b();
	ds.bts_max = smp_m();
	ds.bts_threshold = ~0ULL;
}

void ap_main(void)
{
	const uint64_t b = smp_b(), m = smp_m();
	/* mostly the index, between good and bad values; base and maximum now and then */
	const uint64_t indexes[] = { b + 3 * REC, b - REC, b,  b + 1, b + 3 * REC, m + REC, NC,
				     b + 5 * REC, HP(HP_MMIO) };
	const uint64_t bases[] = { b, NC, b, b, b, HP(HP_NORAM) };
	const uint64_t maxes[] = { m, m, m, b + 8, m, m };
	unsigned int last = AP_NONE;
	uint64_t n = 0;

	ap_up = 1;
	for (;;) {
		unsigned int c = ap_cmd;

		if (c == last) {
			if (c != AP_RACE)
				continue;
			if (n % 10 < 9) {
				ds.bts_index = indexes[n % 10];
			} else {
				ds.bts_base = bases[(n / 10) % 6];
				ds.bts_max = maxes[(n / 10) % 6];
			}
			n++;
			__asm__ volatile("" : : : "memory");
			ap_rewrites = n;
			continue;
		}
		switch (c) {
		case AP_BAD:
			ds_good();
			ds.bts_index = b + 1;
			break;
		case AP_GOOD:
		case AP_STOP:
			ds_good();
			break;
		default:
			break;
		}
		last = c;
		/* the fields before the answer (x86 keeps stores in order; the compiler must) */
		__asm__ volatile("" : : : "memory");
		ap_ack = c;
		if (c == AP_STOP)
			return;
	}
}

static void ap_send(unsigned int cmd)
{
	__asm__ volatile("" : : : "memory");
	ap_cmd = cmd;
	for (unsigned long i = 0; i < AP_WAIT && ap_ack != cmd; i++)
		;
	if (ap_ack != cmd)
		fail("second vcpu", "no answer to command", cmd, ap_ack);
	__asm__ volatile("" : : : "memory");
}

static void ap_boot(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) gdtr;
	uint8_t *t = (uint8_t *)AP_TRAMP;
	uint32_t cr3 = (uint32_t)read_cr3(), far = (uint32_t)(uint64_t)ap_start64;
	uint32_t base;

	__asm__ volatile("sgdt %0" : "=m"(gdtr));
	base = (uint32_t)gdtr.base;
	memcpy(t, ap_tramp, (size_t)(ap_tramp_end - ap_tramp));
	memcpy(t + (ap_tramp_gdtr - ap_tramp), &gdtr.limit, 2);
	memcpy(t + (ap_tramp_gdtr - ap_tramp) + 2, &base, 4);
	memcpy(t + (ap_tramp_cr3 - ap_tramp), &cr3, 4);
	memcpy(t + (ap_tramp_far - ap_tramp), &far, 4);
	wrmsr(MSR_X2APIC_ICR, (1ULL << 32) | ICR_INIT);
	wrmsr(MSR_X2APIC_ICR, (1ULL << 32) | ICR_SIPI | (AP_TRAMP >> 12));
	for (unsigned long i = 0; i < AP_WAIT && !ap_up; i++)
		;
	if (!ap_up)
		fail("second vcpu", "the AP did not start", 1, 0);
}

/* Every record in [b, m) is empty or one of the labelled branches; nothing else changed. */
static void smp_check_buffer(const char *check)
{
	struct rec e[NSEQ];
	const uint8_t *g0 = (const uint8_t *)&sbuf[0], *g1 = (const uint8_t *)&sbuf[CAP + 1];

	expected(e);
	for (unsigned int i = 0; i < REC; i++)
		if (g0[i] != CANARY || g1[i] != CANARY)
			fail(check, "written outside the buffer", i, g0[i] != CANARY ? 0 : 1);
	for (unsigned int i = 1; i <= CAP; i++) {
		int known = !sbuf[i].from && !sbuf[i].to && !sbuf[i].flags;

		for (unsigned int k = 0; k < NSEQ && !known; k++)
			known = sbuf[i].from == e[k].from && sbuf[i].to == e[k].to &&
				!sbuf[i].flags;
		if (!known)
			fail(check, "not a labelled branch", i, sbuf[i].from);
	}
}

static void check_second_vcpu(void)
{
	const char *check = "second vcpu rewriting the ds area";
	const uint64_t b = smp_b(), m = smp_m();
	struct rec e[NSEQ];
	unsigned int stored_recs = 0;

	expected(e);
	memset(sbuf, 0, sizeof(sbuf));
	memset(&sbuf[0], CANARY, sizeof(sbuf[0]));
	memset(&sbuf[CAP + 1], CANARY, sizeof(sbuf[0]));
	canaries_set();
	ds_good();
	wrmsr(MSR_DS_AREA, (uint64_t)&ds);
	ap_boot();

	/* in step: the AP's inconsistent fields drop every record, its good ones keep them */
	ap_send(AP_BAD);
	bts_seq(TR | BTS);
	if (ds.bts_index != b + 1)
		fail(check, "index of the bad fields changed", ds.bts_index, b + 1);
	smp_check_buffer(check);
	for (unsigned int i = 1; i <= CAP; i++)
		if (sbuf[i].from)
			fail(check, "stored with bad fields", i, sbuf[i].from);
	ap_send(AP_GOOD);
	bts_seq(TR | BTS);
	if (ds.bts_index != b + NSEQ * REC)
		fail(check, "records after the good fields", (ds.bts_index - b) / REC, NSEQ);
	check_recs(check, &sbuf[1], e, NSEQ);

	/* racing: the AP rewrites field after field while this vCPU traces */
	ap_send(AP_RACE);
	for (unsigned int r = 0; r < RACE_RUNS; r++)
		bts_seq(TR | BTS);
	ap_send(AP_STOP);
	smp_check_buffer(check);
	canaries_check_pages(check);
	for (unsigned int i = 1; i <= CAP; i++)
		stored_recs += !!sbuf[i].from;
	if (ds.bts_base != b || ds.bts_max != m)
		fail(check, "fields the AP left", ds.bts_base, ds.bts_max);
	uart_puts("guest-bts: second vcpu: ");
	uart_dec(ap_rewrites);
	uart_puts(" rewrites, ");
	uart_dec(stored_recs);
	uart_puts(" slots written\n");
	ok(check);
}

/* Whether the multiboot command line has @word (as a whole word). */
static int cmdline_has(uint32_t mbi, const char *word)
{
	const char *c;
	size_t n = 0;

	if (!(*(const uint32_t *)(uint64_t)mbi & (1U << 2)))
		return 0;
	c = (const char *)(uint64_t)*(const uint32_t *)(uint64_t)(mbi + 16);
	while (word[n])
		n++;
	for (; *c; c++) {
		size_t i = 0;

		if (c != (const char *)(uint64_t)*(const uint32_t *)(uint64_t)(mbi + 16) &&
		    c[-1] != ' ')
			continue;
		while (i < n && c[i] == word[i])
			i++;
		if (i == n && (c[n] == ' ' || !c[n]))
			return 1;
	}
	return 0;
}
#endif

/*
 * Whether IA32_DS_AREA keeps what is written to it. A CPU without a DS save area (QEMU TCG,
 * which ignores the MSR) runs the labelled sequence once, BTS or not, and stops: QEMU's
 * execution log of that run gives the branches the guest's buffer must hold (the oracle).
 */
static void oracle_run(void)
{
	if (!try_wrmsr(MSR_DS_AREA, (uint64_t)&ds) && rdmsr(MSR_DS_AREA) == (uint64_t)&ds)
		return;
	uart_puts("guest-bts: no DS save area: the labelled sequence runs alone\n");
	bts_seq(TR | BTS);
	guest_exit(GUEST_EXIT_NO_DS);
}

void guest_main(uint32_t magic, uint32_t mbi)
{
	GUEST_ASSERT(magic == 0x2badb002);
	cpu_init();
	lapic_init();
	oracle_run();
	check_enumeration();
#ifdef GUEST_BTS_HOSTILE
	check_hostile();
	/* and BTS still works afterwards */
	check_all("tr bts after", TR | BTS);
	if (cmdline_has(mbi, "smp2")) {
		check_second_vcpu();
		check_all("tr bts after the second vcpu", TR | BTS);
	}
#else
	check_msrs();
	check_none("tr off", BTS);
	check_none("bts off", TR);
	check_all("tr bts", TR | BTS);
	check_none("bts_off_os", TR | BTS | OFF_OS);
	check_all("bts_off_usr", TR | BTS | OFF_USR);
	check_none("bts_off_os bts_off_usr", TR | BTS | OFF_OS | OFF_USR);
	check_none("bts_off_os bts_off_usr btint", TR | BTS | OFF_OS | OFF_USR | BTINT);
	check_wrap("wrap", 0);
	check_wrap("wrap max+1", 1);
	check_btint_full();
	check_btint_drain();
#endif
	uart_puts("guest-bts: done\n");
	guest_exit(cpuid_failed ? GUEST_EXIT_CPUID : GUEST_EXIT_DONE);
}
