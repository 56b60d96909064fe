// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-guest.c - the hand-assembled 64-bit ring-0 guest that check-step-kvm and
 * check-kvm-backend trace, and how it is put into a VM (see kvm-guest.h for its listing).
 */
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <check.h>
#include <linux/kvm.h>

#include <vbts/ring-format.h>

#include "kvm-guest.h"
#include "memory.h"

const struct kvm_guest_branch kvm_guest_branches[] = {
	{ 0x1000, 0x1004, VBTS_BR_JMP },
	{ 0x1009, 0x1009, VBTS_BR_LOOP },
	{ 0x1009, 0x1009, VBTS_BR_LOOP },
	{ 0x100b, 0x1040, VBTS_BR_CALL },
	{ 0x1040, 0x1010, VBTS_BR_RET },
	{ 0x1014, 0x1018, VBTS_BR_JMP },
	{ 0x1018, 0x1100, VBTS_BR_EXCEPTION },
	{ 0x102e, 0x1032, VBTS_BR_IRET },
};

const unsigned int kvm_guest_nr_branches =
	sizeof(kvm_guest_branches) / sizeof(kvm_guest_branches[0]);

static const uint8_t guest_code[] = {
	0xeb, 0x02,                         /* 1000 jmp 0x1004 */
	0x0f, 0x0b,                         /* 1002 ud2 (skipped) */
	0xb9, 0x03, 0x00, 0x00, 0x00,       /* 1004 mov $3,%ecx */
	0xe2, 0xfe,                         /* 1009 loop 0x1009 */
	0xe8, 0x30, 0x00, 0x00, 0x00,       /* 100b call 0x1040 */
	0x8c, 0xd0,                         /* 1010 mov %ss,%eax */
	0x8e, 0xd0,                         /* 1012 mov %eax,%ss */
	0xeb, 0x02,                         /* 1014 jmp 0x1018 */
	0x0f, 0x0b,                         /* 1016 ud2 (skipped) */
	0x0f, 0x0b,                         /* 1018 ud2 -> #UD handler, back at 0x101a */
	0x66, 0xba, 0x80, 0x00,             /* 101a mov $0x80,%dx */
	0xee,                               /* 101e out %al,%dx */
	0x48, 0x89, 0xe0,                   /* 101f mov %rsp,%rax */
	0x6a, 0x10,                         /* 1022 push $0x10 (ss) */
	0x50,                               /* 1024 push %rax (rsp) */
	0x6a, 0x02,                         /* 1025 push $2 (rflags) */
	0x6a, 0x08,                         /* 1027 push $8 (cs) */
	0x68, 0x32, 0x10, 0x00, 0x00,       /* 1029 push $0x1032 (rip) */
	0x48, 0xcf,                         /* 102e iretq */
	0x0f, 0x0b,                         /* 1030 ud2 (skipped) */
};

static const uint8_t guest_tail[] = { 0xf4, 0x0f, 0x0b };          /* 1032 hlt; ud2 */
static const uint8_t guest_leaf[] = { 0xc3 };                      /* 1040 ret */
static const uint8_t guest_ud[] = {
	0x90,                               /* 1100 nop */
	0x48, 0x83, 0x04, 0x24, 0x02,       /* 1101 addq $2,(%rsp) */
	0x48, 0xcf,                         /* 1106 iretq */
};

static void put64(struct guest_memory *mem, uint64_t gpa, uint64_t v)
{
	void *p = guest_memory__ptr(mem, gpa, sizeof(v));

	ck_assert_ptr_nonnull(p);
	memcpy(p, &v, sizeof(v));
}

void kvm_guest__put(struct guest_memory *mem, uint64_t gpa, const void *src, size_t len)
{
	void *p = guest_memory__ptr(mem, gpa, len);

	ck_assert_ptr_nonnull(p);
	memcpy(p, src, len);
}

void kvm_guest__setup(struct guest_memory *mem, int vcpu_fd, uint64_t rip)
{
	struct kvm_segment code = {
		.base = 0, .limit = 0xffffffff, .selector = 8, .type = 11, .present = 1,
		.dpl = 0, .db = 0, .s = 1, .l = 1, .g = 1,
	};
	struct kvm_segment data = {
		.base = 0, .limit = 0xffffffff, .selector = 0x10, .type = 3, .present = 1,
		.dpl = 0, .db = 1, .s = 1, .g = 1,
	};
	struct kvm_regs regs = { .rip = rip, .rsp = 0x8000, .rflags = 2 };
	struct kvm_sregs sregs;

	kvm_guest__put(mem, 0x1000, guest_code, sizeof(guest_code));
	kvm_guest__put(mem, 0x1032, guest_tail, sizeof(guest_tail));
	kvm_guest__put(mem, 0x1040, guest_leaf, sizeof(guest_leaf));
	kvm_guest__put(mem, 0x1100, guest_ud, sizeof(guest_ud));
	/* IDT: vector 6, 64-bit interrupt gate to 0x1100 */
	put64(mem, 0x3000 + 6 * 16, 0x1100 | (8ULL << 16) | (0x8eULL << 40));
	put64(mem, 0x3000 + 6 * 16 + 8, 0);
	/* GDT: null, 64-bit code, data */
	put64(mem, 0x4008, 0x00af9a000000ffffULL);
	put64(mem, 0x4010, 0x00cf92000000ffffULL);
	/* PML4 -> PDPT -> PD with one 2 MiB page at 0 */
	put64(mem, 0x10000, 0x11000 | 3);
	put64(mem, 0x11000, 0x12000 | 3);
	put64(mem, 0x12000, 0x83);

	ck_assert_int_eq(ioctl(vcpu_fd, KVM_GET_SREGS, &sregs), 0);
	sregs.cs = code;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = data;
	sregs.gdt.base = 0x4000;
	sregs.gdt.limit = 0x17;
	sregs.idt.base = 0x3000;
	sregs.idt.limit = 0xfff;
	sregs.cr3 = 0x10000;
	sregs.cr4 = 0x20;                 /* PAE */
	sregs.cr0 = 0x80000011;           /* PG, ET, PE */
	sregs.efer = 0x500;               /* LME, LMA */
	ck_assert_int_eq(ioctl(vcpu_fd, KVM_SET_SREGS, &sregs), 0);
	ck_assert_int_eq(ioctl(vcpu_fd, KVM_SET_REGS, &regs), 0);
}

uint64_t kvm_guest__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
