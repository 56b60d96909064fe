// SPDX-License-Identifier: GPL-2.0
/*
 * test-linux.c - booting Linux without KVM: the bzImage and PVH loaders on images built here
 * (and on Debian's bzImage when tests/harness/prepare cached it), read back from guest memory
 * (boot_params, e820, command line, initrd placement, page tables, hvm_start_info), hostile
 * images, the ACPI tables (checksums, pointers, MADT, FADT, DSDT) and the per-vCPU CPUID.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "boot/acpi.h"
#include "boot/linux.h"
#include "cpuid.h"
#include "devices/acpi-pm.h"
#include "devices/i8042.h"
#include "loader.h"
#include "memory.h"
#include "pvpanic.h"
#include "tests.h"
#include "x86.h"

#define RAM (64ULL << 20)

static uint8_t *gpa(struct guest_memory *mem, uint64_t addr, uint64_t len)
{
	uint8_t *p = guest_memory__ptr(mem, addr, len);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* ---- a synthetic bzImage ------------------------------------------------------------------ */

#define BZ_SETUP_SECTS 4
#define BZ_KERNEL 0x10000 /* bytes of protected-mode kernel */
#define BZ_LEN ((BZ_SETUP_SECTS + 1) * 512 + BZ_KERNEL)
#define BZ_PREF 0x1000000ULL
#define BZ_INIT_SIZE 0x400000U

static uint8_t *build_bzimage(size_t *len)
{
	uint8_t *img = calloc(1, BZ_LEN);
	uint8_t *k = img + (BZ_SETUP_SECTS + 1) * 512;

	img[HDR_SETUP_SECTS] = BZ_SETUP_SECTS;
	put_le32(img + HDR_SYSSIZE, BZ_KERNEL / 16);
	put_le16(img + HDR_BOOT_FLAG, HDR_BOOT_FLAG_MAGIC);
	img[HDR_JUMP] = 0xeb;
	img[HDR_JUMP + 1] = 0x6a; /* the header ends at 0x26c */
	memcpy(img + HDR_MAGIC, "HdrS", 4);
	put_le16(img + HDR_VERSION, 0x020f);
	img[HDR_LOADFLAGS] = HDR_LOADFLAGS_LOADED_HIGH;
	put_le32(img + HDR_CODE32_START, 0x100000);
	put_le32(img + HDR_INITRD_ADDR_MAX, 0x7fffffff);
	put_le32(img + HDR_KERNEL_ALIGNMENT, 0x200000);
	img[HDR_RELOCATABLE_KERNEL] = 1;
	put_le16(img + HDR_XLOADFLAGS, HDR_XLF_KERNEL_64 | 0x2);
	put_le32(img + HDR_CMDLINE_SIZE, 2047);
	put_le64(img + HDR_PREF_ADDRESS, BZ_PREF);
	put_le32(img + HDR_INIT_SIZE, BZ_INIT_SIZE);
	for (unsigned int i = 0; i < BZ_KERNEL; i++)
		k[i] = i * 7 + 3;
	*len = BZ_LEN;
	return img;
}

/* The e820 map in boot_params: sane (sorted, disjoint) and covering RAM as the VM has it. */
static void check_e820(const uint8_t *e, unsigned int n, uint64_t ram)
{
	uint64_t prev_end = 0, usable = 0;

	ck_assert_uint_ge(n, 4);
	for (unsigned int i = 0; i < n; i++, e += 20) {
		uint64_t addr = get_le64(e), size = get_le64(e + 8);
		uint32_t type = get_le32(e + 16);

		ck_assert_uint_ge(addr, prev_end);
		ck_assert_uint_gt(size, 0);
		ck_assert(type == E820_RAM || type == E820_RESERVED);
		if (type == E820_RAM)
			usable += size;
		prev_end = addr + size;
	}
	/* All RAM but the EBDA and the BIOS area. */
	ck_assert_uint_eq(usable, ram - (0x100000 - LINUX_EBDA_GPA));
}

START_TEST(test_bzimage_boot_params)
{
	struct guest_memory *mem = guest_memory__create(RAM);
	static const char cmdline[] = "console=ttyS0 quiet vbts.token=x";
	uint8_t initrd[100 * 1024], *img, *bp, *p;
	struct loader_config cfg = {
		.cmdline = cmdline, .initrd = initrd, .initrd_len = sizeof(initrd), .nr_vcpus = 2,
	};
	struct loaded_image li;
	uint64_t rd, pde;
	size_t len;

	for (unsigned int i = 0; i < sizeof(initrd); i++)
		initrd[i] = i ^ 0x5a;
	img = build_bzimage(&len);
	ck_assert_int_eq(loader__load_config(img, len, &cfg, mem, &li), 0);
	ck_assert_str_eq(li.format, "bzImage");
	ck_assert(li.pc);
	/* 64-bit entry: startup_64 = load address + 0x200, RSI = boot_params. */
	ck_assert_uint_eq(li.entry, BZ_PREF + 0x200);
	ck_assert_uint_eq(li.boot.rip, li.entry);
	ck_assert(li.boot.long_mode);
	ck_assert_uint_eq(li.boot.rsi, LINUX_BOOT_PARAMS_GPA);
	ck_assert_uint_eq(li.boot.cr3, LINUX_PML4_GPA);
	ck_assert_uint_eq(li.boot.cs, 0x10);
	ck_assert_uint_eq(li.boot.ds, 0x18);
	/* __BOOT_CS is a 64-bit code segment, __BOOT_DS flat read/write data. */
	p = gpa(mem, li.boot.gdt_base, li.boot.gdt_limit + 1);
	ck_assert_uint_eq(li.boot.gdt_limit, 31);
	ck_assert_uint_eq(get_le64(p + 0x10), 0x00af9b000000ffffULL);
	ck_assert_uint_eq(get_le64(p + 0x18), 0x00cf93000000ffffULL);
	/* The protected-mode kernel at pref_address. */
	ck_assert_mem_eq(gpa(mem, BZ_PREF, BZ_KERNEL), img + (BZ_SETUP_SECTS + 1) * 512,
			 BZ_KERNEL);

	bp = gpa(mem, LINUX_BOOT_PARAMS_GPA, BP_SIZE);
	/* The setup header is the image's, with the loader's fields filled in. */
	ck_assert_mem_eq(bp + HDR_MAGIC, "HdrS", 4);
	ck_assert_uint_eq(get_le16(bp + HDR_VERSION), 0x020f);
	ck_assert_uint_eq(get_le32(bp + HDR_INIT_SIZE), BZ_INIT_SIZE);
	ck_assert_uint_eq(bp[HDR_TYPE_OF_LOADER], 0xff);
	ck_assert_uint_eq(get_le32(bp + HDR_CODE32_START), BZ_PREF);
	ck_assert_uint_eq(bp[BP_SENTINEL], 0);
	ck_assert_uint_eq(bp[0x26c], 0); /* nothing past the header's end */
	/* Command line. */
	ck_assert_uint_eq(get_le32(bp + HDR_CMD_LINE_PTR), LINUX_CMDLINE_GPA);
	ck_assert_uint_eq(get_le32(bp + BP_EXT_CMD_LINE_PTR), 0);
	ck_assert_str_eq((char *)gpa(mem, LINUX_CMDLINE_GPA, sizeof(cmdline)), cmdline);
	/* The initrd: page-aligned, as high as RAM allows, above the kernel's init_size. */
	rd = get_le32(bp + HDR_RAMDISK_IMAGE);
	ck_assert_uint_eq(get_le32(bp + HDR_RAMDISK_SIZE), sizeof(initrd));
	ck_assert_uint_eq(rd & 0xfff, 0);
	ck_assert_uint_le(rd + sizeof(initrd), RAM);
	ck_assert_uint_gt(rd + sizeof(initrd), RAM - 0x1000);
	ck_assert_uint_ge(rd, BZ_PREF + BZ_INIT_SIZE);
	ck_assert_mem_eq(gpa(mem, rd, sizeof(initrd)), initrd, sizeof(initrd));
	/* e820 and the RSDP. */
	check_e820(bp + BP_E820_TABLE, bp[BP_E820_ENTRIES], RAM);
	ck_assert_uint_eq(get_le64(bp + BP_ACPI_RSDP_ADDR), ACPI_TABLES_GPA);
	ck_assert_mem_eq(gpa(mem, ACPI_TABLES_GPA, 8), "RSD PTR ", 8);
	/* The identity map covers the kernel, boot_params and the command line. */
	p = gpa(mem, LINUX_PML4_GPA, 0x1000);
	ck_assert_uint_eq(get_le64(p) & X86_PTE_ADDR_MASK, LINUX_PDPT_GPA);
	p = gpa(mem, LINUX_PDPT_GPA, 0x1000);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_uint_eq(get_le64(p + 8 * i),
				  (LINUX_PD_GPA + i * 0x1000) | X86_PTE_P | X86_PTE_RW);
	pde = get_le64(gpa(mem, LINUX_PD_GPA + 8 * (BZ_PREF >> 21), 8));
	ck_assert_uint_eq(pde, BZ_PREF | X86_PTE_P | X86_PTE_RW | X86_PTE_PS);
	pde = get_le64(gpa(mem, LINUX_PD_GPA + 3 * 0x1000 + 8 * 511, 8));
	ck_assert_uint_eq(pde & X86_PTE_ADDR_MASK, (4ULL << 30) - (2ULL << 20));
	free(img);
	guest_memory__destroy(mem);
}
END_TEST

/* Without --append the kernel gets the serial console; without --initrd no ramdisk. */
START_TEST(test_bzimage_defaults)
{
	struct guest_memory *mem = guest_memory__create((5ULL << 30));
	struct loader_config cfg = { .nr_vcpus = 1 };
	struct loaded_image li;
	uint8_t *img, *bp;
	size_t len;

	img = build_bzimage(&len);
	ck_assert_int_eq(loader__load_config(img, len, &cfg, mem, &li), 0);
	bp = gpa(mem, LINUX_BOOT_PARAMS_GPA, BP_SIZE);
	ck_assert_str_eq((char *)gpa(mem, LINUX_CMDLINE_GPA, 16), LINUX_DEFAULT_CMDLINE);
	ck_assert_uint_eq(get_le32(bp + HDR_RAMDISK_IMAGE), 0);
	ck_assert_uint_eq(get_le32(bp + HDR_RAMDISK_SIZE), 0);
	/* 5 GiB: 3 GiB below the PCI hole, 2 GiB from 4 GiB on. */
	check_e820(bp + BP_E820_TABLE, bp[BP_E820_ENTRIES], 5ULL << 30);
	ck_assert_uint_eq(get_le64(bp + BP_E820_TABLE + 20 * (bp[BP_E820_ENTRIES] - 1)), 4ULL << 30);
	free(img);
	guest_memory__destroy(mem);
}
END_TEST

/* Hostile or unusable images: one line each, the right error, nothing loaded. */
static const struct bz_case {
	const char *name;
	unsigned int off, width; /* field to overwrite (width 0: none) */
	uint64_t value;
	size_t len;             /* truncate to this when non-zero */
	uint64_t ram;           /* 0: RAM */
	size_t initrd_len;
	size_t cmdline_len;
	int err;
	const char *msg;
} bz_cases[] = {
	{ "truncated header", 0, 0, 0, 600, 0, 0, 0, -ENOEXEC, "truncated bzImage" },
	{ "truncated kernel", 0, 0, 0, BZ_LEN - 16, 0, 0, 0, -ENOEXEC, "truncated bzImage" },
	{ "old protocol", HDR_VERSION, 2, 0x0206, 0, 0, 0, 0, -ENOEXEC, "boot protocol 2.06" },
	{ "32-bit kernel", HDR_XLOADFLAGS, 2, 0, 0, 0, 0, 0, -ENOEXEC, "XLF_KERNEL_64" },
	{ "zImage", HDR_LOADFLAGS, 1, 0, 0, 0, 0, 0, -ENOEXEC, "LOADED_HIGH" },
	{ "setup_sects huge", HDR_SETUP_SECTS, 1, 255, 0, 0, 0, 0, -ENOEXEC, "setup_sects 255" },
	{ "syssize huge", HDR_SYSSIZE, 4, 0xffffffff, 0, 0, 0, 0, -ENOEXEC, "truncated bzImage" },
	{ "syssize 0", HDR_SYSSIZE, 4, 0, 0, 0, 0, 0, -ENOEXEC, "truncated bzImage" },
	{ "init_size small", HDR_INIT_SIZE, 4, 0x100, 0, 0, 0, 0, -ENOEXEC, "init_size" },
	{ "pref_address low", HDR_PREF_ADDRESS, 8, 0x8000, 0, 0, 0, 0, -ENOEXEC, "pref_address" },
	{ "pref_address high", HDR_PREF_ADDRESS, 8, 1ULL << 40, 0, 0, 0, 0, -ENOEXEC,
	  "pref_address" },
	{ "init_size huge", HDR_INIT_SIZE, 4, 0xfff00000, 0, 0, 0, 0, -E2BIG, "needs guest RAM" },
	{ "header past boot_params", HDR_JUMP + 1, 1, 0xff, 0, 0, 0, 0, -ENOEXEC,
	  "setup header end" },
	{ "RAM too small", 0, 0, 0, 0, 16ULL << 20, 0, 0, -E2BIG, "needs guest RAM" },
	{ "initrd too big", 0, 0, 0, 0, 0, 60ULL << 20, 0, -E2BIG, "initrd of" },
	{ "initrd over initrd_addr_max", HDR_INITRD_ADDR_MAX, 4, 0x1400ffe, 0, 0, 4096, 0, -E2BIG,
	  "initrd of" },
	{ "command line too long", 0, 0, 0, 0, 0, 0, 2048, -EINVAL, "command line of 2048" },
	{ "command line over cmdline_size", HDR_CMDLINE_SIZE, 4, 10, 0, 0, 0, 11, -EINVAL,
	  "limit of 10" },
};

START_TEST(test_bzimage_hostile)
{
	const struct bz_case *c = &bz_cases[_i];
	struct guest_memory *mem = guest_memory__create(c->ram ? c->ram : RAM);
	struct loader_config cfg = { .nr_vcpus = 1 };
	uint8_t *img, *rd = NULL;
	char *cmdline = NULL;
	struct loaded_image li;
	size_t len;

	img = build_bzimage(&len);
	if (c->width)
		memcpy(img + c->off, &c->value, c->width);
	if (c->len)
		len = c->len;
	if (c->initrd_len) {
		rd = calloc(1, c->initrd_len);
		cfg.initrd = rd;
		cfg.initrd_len = c->initrd_len;
	}
	if (c->cmdline_len) {
		cmdline = malloc(c->cmdline_len + 1);
		memset(cmdline, 'x', c->cmdline_len);
		cmdline[c->cmdline_len] = '\0';
		cfg.cmdline = cmdline;
	}
	ck_assert_msg(loader__load_config(img, len, &cfg, mem, &li) == c->err, "%s: %s", c->name,
		      li.error);
	ck_assert_msg(strstr(li.error, c->msg), "%s: '%s' lacks '%s'", c->name, li.error, c->msg);
	ck_assert_ptr_null(strchr(li.error, '\n'));
	/* Nothing was loaded at the kernel's address. */
	if (c->ram != 16ULL << 20)
		ck_assert_uint_eq(*gpa(mem, BZ_PREF, 1), 0);
	free(cmdline);
	free(rd);
	free(img);
	guest_memory__destroy(mem);
}
END_TEST

/* Debian's own bzImage, when tests/harness/prepare cached it under the build directory. */
START_TEST(test_bzimage_debian)
{
	struct guest_memory *mem = guest_memory__create(256ULL << 20);
	struct loaded_image li;
	glob_t g;
	uint8_t *bp;

	if (glob(VBTS_BUILD_ROOT "/harness/*/root/boot/vmlinuz-*", 0, NULL, &g) || !g.gl_pathc) {
		fprintf(stderr, "test_bzimage_debian: no Debian bzImage under %s/harness (run "
			"tests/harness/prepare); the synthetic images stand in\n", VBTS_BUILD_ROOT);
		guest_memory__destroy(mem);
		return;
	}
	ck_assert_msg(loader__load_files(g.gl_pathv[0], NULL, NULL, 1, mem, &li) == 0, "%s",
		      li.error);
	ck_assert_str_eq(li.format, "bzImage");
	bp = gpa(mem, LINUX_BOOT_PARAMS_GPA, BP_SIZE);
	ck_assert_uint_ge(get_le16(bp + HDR_VERSION), 0x020c);
	ck_assert(get_le16(bp + HDR_XLOADFLAGS) & HDR_XLF_KERNEL_64);
	ck_assert_uint_eq(li.entry, get_le64(bp + HDR_PREF_ADDRESS) + 0x200);
	ck_assert_uint_ge(get_le32(bp + HDR_CMDLINE_SIZE), strlen(LINUX_DEFAULT_CMDLINE));
	globfree(&g);
	guest_memory__destroy(mem);
}
END_TEST

/* ---- a synthetic PVH vmlinux -------------------------------------------------------------- */

#define PVH_LOAD 0x1000000ULL
#define PVH_FILESZ 0x2000
#define PVH_MEMSZ 0x3000
#define PVH_ENTRY (PVH_LOAD + 0x10)
#define PVH_SEG_OFF 0x1000
#define PVH_NOTE_OFF 0x200
#define PVH_LEN (PVH_SEG_OFF + PVH_FILESZ)

struct pvh_spec {
	uint32_t descsz;  /* 8 when 0 */
	uint64_t entry;   /* PVH_ENTRY when 0 */
	uint64_t paddr;   /* PVH_LOAD when 0 */
	uint64_t memsz;   /* PVH_MEMSZ when 0 */
	bool no_note;
	size_t len;       /* PVH_LEN when 0 */
};

static uint8_t *build_pvh(const struct pvh_spec *s, size_t *len)
{
	uint8_t *img = calloc(1, PVH_LEN);
	Elf64_Ehdr eh = {
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_entry = 0xffffffff81000000ULL,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = 2,
	};
	Elf64_Phdr ph[2] = {
		{
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_offset = PVH_SEG_OFF,
			.p_vaddr = 0xffffffff81000000ULL,
			.p_paddr = s->paddr ? s->paddr : PVH_LOAD,
			.p_filesz = PVH_FILESZ,
			.p_memsz = s->memsz ? s->memsz : PVH_MEMSZ,
		},
		{
			.p_type = PT_NOTE,
			.p_offset = PVH_NOTE_OFF,
			.p_filesz = 12 + 4 + 8,
		},
	};
	uint8_t *n = img + PVH_NOTE_OFF;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), ph, sizeof(ph));
	put_le32(n, 4);
	put_le32(n + 4, s->descsz ? s->descsz : 8);
	put_le32(n + 8, s->no_note ? 1 : XEN_ELFNOTE_PHYS32_ENTRY);
	memcpy(n + 12, "Xen", 4);
	put_le64(n + 16, s->entry ? s->entry : PVH_ENTRY);
	for (unsigned int i = 0; i < PVH_FILESZ; i++)
		img[PVH_SEG_OFF + i] = i * 13 + 1;
	*len = s->len ? s->len : PVH_LEN;
	return img;
}

START_TEST(test_pvh_start_info)
{
	struct guest_memory *mem = guest_memory__create(RAM);
	static const char cmdline[] = "console=ttyS0 root=/dev/ram";
	const struct pvh_spec spec = { 0 };
	uint8_t initrd[5000], *img, *si, *m, *bss;
	struct loader_config cfg = {
		.cmdline = cmdline, .initrd = initrd, .initrd_len = sizeof(initrd), .nr_vcpus = 3,
	};
	struct loaded_image li;
	uint64_t rd;
	size_t len;

	memset(initrd, 0x77, sizeof(initrd));
	img = build_pvh(&spec, &len);
	/* Stale bytes where the segment's bss goes must be cleared. */
	memset(gpa(mem, PVH_LOAD, PVH_MEMSZ), 0xcc, PVH_MEMSZ);
	ck_assert_msg(loader__load_config(img, len, &cfg, mem, &li) == 0, "%s", li.error);
	ck_assert_str_eq(li.format, "pvh");
	ck_assert(li.pc);
	/* 32-bit protected mode at the note's entry, EBX = hvm_start_info. */
	ck_assert(!li.boot.long_mode);
	ck_assert_uint_eq(li.boot.rip, PVH_ENTRY);
	ck_assert_uint_eq(li.boot.ebx, LINUX_START_INFO_GPA);
	ck_assert_uint_eq(get_le64(gpa(mem, li.boot.gdt_base + li.boot.cs, 8)),
			  0x00cf9b000000ffffULL);
	ck_assert_mem_eq(gpa(mem, PVH_LOAD, PVH_FILESZ), img + PVH_SEG_OFF, PVH_FILESZ);
	bss = gpa(mem, PVH_LOAD + PVH_FILESZ, PVH_MEMSZ - PVH_FILESZ);
	for (unsigned int i = 0; i < PVH_MEMSZ - PVH_FILESZ; i++)
		ck_assert_uint_eq(bss[i], 0);

	si = gpa(mem, LINUX_START_INFO_GPA, HVM_START_INFO_SIZE);
	ck_assert_uint_eq(get_le32(si), HVM_START_MAGIC);
	ck_assert_uint_eq(get_le32(si + 4), 1);
	ck_assert_uint_eq(get_le32(si + 12), 1); /* the initrd is module 0 */
	m = gpa(mem, get_le64(si + 16), HVM_MODLIST_ENTRY_SIZE);
	rd = get_le64(m);
	ck_assert_uint_eq(get_le64(m + 8), sizeof(initrd));
	ck_assert_uint_eq(rd & 0xfff, 0);
	ck_assert_uint_ge(rd, PVH_LOAD + PVH_MEMSZ);
	ck_assert_uint_le(rd + sizeof(initrd), RAM);
	ck_assert_mem_eq(gpa(mem, rd, sizeof(initrd)), initrd, sizeof(initrd));
	ck_assert_str_eq((char *)gpa(mem, get_le64(si + 24), sizeof(cmdline)), cmdline);
	ck_assert_uint_eq(get_le64(si + 32), ACPI_TABLES_GPA);
	/* The memory map has the e820 layout (24-byte entries). */
	{
		unsigned int n = get_le32(si + 48);
		uint8_t *mm = gpa(mem, get_le64(si + 40), n * HVM_MEMMAP_ENTRY_SIZE);
		uint8_t e820[BP_E820_MAX * 20];

		for (unsigned int i = 0; i < n; i++)
			memcpy(e820 + 20 * i, mm + HVM_MEMMAP_ENTRY_SIZE * i, 20);
		check_e820(e820, n, RAM);
	}
	free(img);
	guest_memory__destroy(mem);
}
END_TEST

static const struct pvh_case {
	const char *name;
	struct pvh_spec spec;
	uint64_t ram;
	size_t initrd_len;
	int err;
	const char *msg;
} pvh_cases[] = {
	{ "bad note descriptor", { .descsz = 2 }, 0, 0, -ENOEXEC, "neither 4 nor 8" },
	{ "entry outside the kernel", { .entry = 0x500000 }, 0, 0, -ENOEXEC,
	  "not inside a loaded segment" },
	{ "segment below 1 MiB", { .paddr = 0x8000 }, 0, 0, -ENOEXEC, "below 1 MiB" },
	{ "segment beyond RAM", { .memsz = 1ULL << 40 }, 0, 0, -E2BIG, "outside guest RAM" },
	{ "truncated segment", { .len = PVH_LEN - 1 }, 0, 0, -ENOEXEC, "truncated file" },
	{ "RAM too small", { 0 }, 8ULL << 20, 0, -E2BIG, "outside guest RAM" },
	{ "initrd too big", { 0 }, 0, 48ULL << 20, -E2BIG, "initrd of" },
	{ "no PVH note", { .no_note = true }, 0, 0, -ENOEXEC, "neither a PVH entry note" },
};

START_TEST(test_pvh_hostile)
{
	const struct pvh_case *c = &pvh_cases[_i];
	struct guest_memory *mem = guest_memory__create(c->ram ? c->ram : RAM);
	struct loader_config cfg = { .nr_vcpus = 1 };
	struct loaded_image li;
	uint8_t *img, *rd = NULL;
	size_t len;

	img = build_pvh(&c->spec, &len);
	if (c->initrd_len) {
		rd = calloc(1, c->initrd_len);
		cfg.initrd = rd;
		cfg.initrd_len = c->initrd_len;
	}
	ck_assert_msg(loader__load_config(img, len, &cfg, mem, &li) == c->err, "%s: %s", c->name,
		      li.error);
	ck_assert_msg(strstr(li.error, c->msg), "%s: '%s' lacks '%s'", c->name, li.error, c->msg);
	ck_assert_ptr_null(strchr(li.error, '\n'));
	free(rd);
	free(img);
	guest_memory__destroy(mem);
}
END_TEST

/* ---- ACPI ------------------------------------------------------------------------------- */

static const struct acpi_config acpi_cfg = {
	.pm1a_evt = ACPI_PM1A_EVT_PORT,
	.pm1a_cnt = ACPI_PM1A_CNT_PORT,
	.sci_irq = ACPI_PM_SCI_IRQ,
	.s5_slp_typ = ACPI_PM_S5_SLP_TYP,
	.reset_port = I8042_CMD_PORT,
	.reset_value = I8042_CMD_RESET,
	.pvpanic_port = PVPANIC_PORT,
};

#define ACPI_GPA 0xe0000ULL
#define ACPI_SIZE 0x20000

/* The table at @addr inside the buffer, its signature and checksum checked. */
static const uint8_t *table(const uint8_t *buf, uint64_t addr, const char *sig)
{
	const uint8_t *t;

	ck_assert_uint_ge(addr, ACPI_GPA);
	ck_assert_uint_lt(addr + ACPI_HEADER_SIZE, ACPI_GPA + ACPI_SIZE);
	t = buf + (addr - ACPI_GPA);
	ck_assert_mem_eq(t, sig, 4);
	ck_assert_uint_le(addr + get_le32(t + 4), ACPI_GPA + ACPI_SIZE);
	ck_assert_uint_eq(acpi__checksum(t, get_le32(t + 4)), 0);
	return t;
}

static bool contains(const uint8_t *p, size_t len, const void *needle, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(p + i, needle, n))
			return true;
	return false;
}

START_TEST(test_acpi_tables)
{
	static const uint8_t s5[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04,
				      0x0a, ACPI_PM_S5_SLP_TYP, 0x0a, ACPI_PM_S5_SLP_TYP, 0x00,
				      0x00 };
	static const uint8_t io[] = { 0x47, 0x01, 0x05, 0x05, 0x05, 0x05, 0x01, 0x01, 0x79 };
	static const uint8_t hid[] = "\x08_HID\x0dQEMU0001";
	uint8_t *buf = malloc(ACPI_SIZE);
	struct acpi_config cfg = acpi_cfg;
	const uint8_t *rsdp, *xsdt, *rsdt, *fadt, *madt, *dsdt, *facs, *e;
	unsigned int lapics = 0, ioapics = 0;
	long used;

	cfg.nr_vcpus = 3;
	used = acpi__build(buf, ACPI_SIZE, ACPI_GPA, &cfg);
	ck_assert_int_gt(used, 0);
	ck_assert_int_lt(used, 0x1000);
	rsdp = buf;
	ck_assert_mem_eq(rsdp, "RSD PTR ", 8);
	ck_assert_uint_eq(acpi__checksum(rsdp, 20), 0);
	ck_assert_uint_eq(acpi__checksum(rsdp, ACPI_RSDP_SIZE), 0);
	ck_assert_uint_eq(rsdp[15], 2);
	ck_assert_uint_eq(get_le32(rsdp + 20), ACPI_RSDP_SIZE);
	xsdt = table(buf, get_le64(rsdp + 24), "XSDT");
	rsdt = table(buf, get_le32(rsdp + 16), "RSDT");
	ck_assert_uint_eq(get_le32(xsdt + 4), ACPI_HEADER_SIZE + 16);
	ck_assert_uint_eq(get_le32(rsdt + 4), ACPI_HEADER_SIZE + 8);
	fadt = table(buf, get_le64(xsdt + 36), "FACP");
	madt = table(buf, get_le64(xsdt + 44), "APIC");
	ck_assert_uint_eq(get_le32(rsdt + 36), get_le64(xsdt + 36));
	ck_assert_uint_eq(get_le32(rsdt + 40), get_le64(xsdt + 44));

	/* FADT: PM1a blocks, SCI, reset register, FACS and DSDT. */
	ck_assert_uint_eq(get_le32(fadt + 4), ACPI_FADT_SIZE);
	ck_assert_uint_eq(get_le16(fadt + 46), ACPI_PM_SCI_IRQ);
	ck_assert_uint_eq(get_le32(fadt + 48), 0); /* SMI_CMD: always in ACPI mode */
	ck_assert_uint_eq(get_le32(fadt + 56), ACPI_PM1A_EVT_PORT);
	ck_assert_uint_eq(get_le32(fadt + 64), ACPI_PM1A_CNT_PORT);
	ck_assert_uint_eq(fadt[88], ACPI_PM1A_EVT_LEN);
	ck_assert_uint_eq(fadt[89], ACPI_PM1A_CNT_LEN);
	ck_assert_uint_eq(get_le32(fadt + 112) & (1U << 10), 1U << 10); /* RESET_REG_SUP */
	ck_assert_uint_eq(get_le32(fadt + 112) & (1U << 20), 0);        /* not HW-reduced */
	ck_assert_uint_eq(fadt[116], 1);                            /* system I/O */
	ck_assert_uint_eq(get_le64(fadt + 120), I8042_CMD_PORT);
	ck_assert_uint_eq(fadt[128], I8042_CMD_RESET);
	facs = buf + (get_le32(fadt + 36) - ACPI_GPA);
	ck_assert_uint_eq(get_le32(fadt + 36) % 64, 0);
	ck_assert_mem_eq(facs, "FACS", 4);
	ck_assert_uint_eq(get_le32(facs + 4), ACPI_FACS_SIZE);
	ck_assert_uint_eq(get_le32(fadt + 40), get_le64(fadt + 140));
	dsdt = table(buf, get_le64(fadt + 140), "DSDT");

	/* DSDT: \_S5 with the PM block's sleep type, the pvpanic device with its port. */
	ck_assert(contains(dsdt, get_le32(dsdt + 4), s5, sizeof(s5)));
	ck_assert(contains(dsdt, get_le32(dsdt + 4), hid, sizeof(hid)));
	ck_assert(contains(dsdt, get_le32(dsdt + 4), io, sizeof(io)));
	ck_assert(contains(dsdt, get_le32(dsdt + 4), "\x10", 1));
	/* The scope's PkgLength covers the rest of the definition block up to \_S5. */
	{
		const uint8_t *scope = dsdt + ACPI_HEADER_SIZE;

		ck_assert_uint_eq(scope[0], 0x10);
		ck_assert_uint_lt(scope[1], 0x40);
		ck_assert_uint_eq(scope[1] + 1, get_le32(dsdt + 4) - ACPI_HEADER_SIZE - sizeof(s5));
		ck_assert_mem_eq(scope + 2, "\\_SB_", 5);
	}

	/* MADT: one enabled LAPIC per vCPU with APIC id = index, the IOAPIC, SCI override. */
	ck_assert_uint_eq(get_le32(madt + 36), X86_APIC_DEFAULT_BASE);
	for (e = madt + 44; e < madt + get_le32(madt + 4); e += e[1]) {
		ck_assert_uint_gt(e[1], 0);
		if (e[0] == 0) {
			ck_assert_uint_eq(e[3], lapics);
			ck_assert_uint_eq(get_le32(e + 4) & 1, 1);
			lapics++;
		} else if (e[0] == 1) {
			ck_assert_uint_eq(get_le32(e + 4), X86_IOAPIC_DEFAULT_BASE);
			ck_assert_uint_eq(get_le32(e + 8), 0);
			ioapics++;
		} else if (e[0] == 2) {
			ck_assert_uint_eq(e[3], ACPI_PM_SCI_IRQ);
		}
	}
	ck_assert(e == madt + get_le32(madt + 4));
	ck_assert_uint_eq(lapics, 3);
	ck_assert_uint_eq(ioapics, 1);

	/* Bad configurations and too little room. */
	cfg.nr_vcpus = 0;
	ck_assert_int_eq(acpi__build(buf, ACPI_SIZE, ACPI_GPA, &cfg), -EINVAL);
	cfg.nr_vcpus = ACPI_MAX_VCPUS + 1;
	ck_assert_int_eq(acpi__build(buf, ACPI_SIZE, ACPI_GPA, &cfg), -EINVAL);
	cfg.nr_vcpus = ACPI_MAX_VCPUS;
	ck_assert_int_gt(acpi__build(buf, ACPI_SIZE, ACPI_GPA, &cfg), 0);
	ck_assert_int_eq(acpi__build(buf, 0x400, ACPI_GPA, &cfg), -E2BIG);
	ck_assert_int_eq(acpi__build(buf, ACPI_SIZE, ACPI_GPA + 8, &cfg), -EINVAL);
	free(buf);
}
END_TEST

/* ---- CPUID ------------------------------------------------------------------------------ */

static struct kvm_cpuid2 *supported_cpuid(void)
{
	static const struct kvm_cpuid_entry2 e[] = {
		{ .function = 0, .eax = 0xd },
		{ .function = 1, .ebx = 0x07ff0800, .edx = 1U << 28 },
		{ .function = 4, .index = 0, .eax = 0xfc004121 },
		{ .function = 4, .index = 3, .eax = 0xfc07c163 },
		{ .function = 0xb, .index = 0, .eax = 1, .ebx = 2, .ecx = 0x100, .edx = 7 },
		{ .function = 0xb, .index = 1, .eax = 4, .ebx = 16, .ecx = 0x201, .edx = 7 },
		{ .function = 0x40000000, .eax = 0x40000001, .ebx = 0x4b4d564b },
		{ .function = 0x40000001, .eax = 0x01007afb },
		{ .function = 0x80000008, .eax = 0x3030, .ecx = 0x0000700f },
		{ .function = 0x8000001e, .eax = 7, .ebx = 0x0103, .ecx = 0x0301 },
	};
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + sizeof(e));

	c->nent = sizeof(e) / sizeof(e[0]);
	memcpy(c->entries, e, sizeof(e));
	return c;
}

static const struct kvm_cpuid_entry2 *leaf(const struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	for (unsigned int i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == idx)
			return &c->entries[i];
	ck_abort_msg("leaf %#x.%u missing", fn, idx);
	return NULL;
}

START_TEST(test_cpuid_topology)
{
	struct kvm_cpuid2 *sup = supported_cpuid(), *c;
	const struct kvm_cpuid_entry2 *e;

	c = cpuid__for_vcpu(sup, 2, 3, CPUID_TSC_DEADLINE);
	/* Leaf 0xb regenerated: 3 subleaves instead of KVM's 2, everything else kept. */
	ck_assert_uint_eq(c->nent, sup->nent + 1);
	e = leaf(c, 1, 0);
	ck_assert_uint_eq(e->ebx >> 24, 2);
	ck_assert_uint_eq((e->ebx >> 16) & 0xff, 4); /* 3 vCPUs need 2 bits of APIC id */
	ck_assert_uint_eq(e->ebx & 0xffff, 0x0800);
	ck_assert(e->edx & X86_CPUID_1_EDX_HTT);
	ck_assert(e->ecx & X86_CPUID_1_ECX_HYPERVISOR);
	ck_assert(e->ecx & X86_CPUID_1_ECX_TSC_DEADLINE);
	ck_assert_uint_eq(leaf(c, 4, 0)->eax >> 26, 3);
	ck_assert_uint_eq((leaf(c, 4, 0)->eax >> 14) & 0xfff, 0);
	ck_assert_uint_eq((leaf(c, 4, 3)->eax >> 14) & 0xfff, 3);
	ck_assert_uint_eq(leaf(c, 4, 3)->eax & 0x3fff, 0x0163);
	e = leaf(c, 0xb, 0);
	ck_assert_uint_eq(e->ebx, 1);
	ck_assert_uint_eq(e->ecx, 0x100);
	ck_assert_uint_eq(e->edx, 2);
	ck_assert_uint_eq(e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX, KVM_CPUID_FLAG_SIGNIFCANT_INDEX);
	e = leaf(c, 0xb, 1);
	ck_assert_uint_eq(e->eax, 2);
	ck_assert_uint_eq(e->ebx, 3);
	ck_assert_uint_eq(e->ecx, 0x201);
	ck_assert_uint_eq(e->edx, 2);
	e = leaf(c, 0xb, 2);
	ck_assert_uint_eq(e->ecx, 2); /* type 0: the end */
	ck_assert_uint_eq(e->ebx, 0);
	/* KVM's paravirtual leaves (kvmclock) are untouched. */
	ck_assert_uint_eq(leaf(c, 0x40000001, 0)->eax, 0x01007afb);
	ck_assert_uint_eq(leaf(c, 0x40000000, 0)->ebx, 0x4b4d564b);
	e = leaf(c, 0x80000008, 0);
	ck_assert_uint_eq(e->ecx, 0x2002);
	ck_assert_uint_eq(e->eax, 0x3030);
	e = leaf(c, 0x8000001e, 0);
	ck_assert_uint_eq(e->eax, 2);
	ck_assert_uint_eq(e->ebx, 0x0002);
	ck_assert_uint_eq(e->ecx, 0);
	free(c);

	/* One vCPU: no HTT, one logical processor, no TSC deadline unless asked. */
	c = cpuid__for_vcpu(sup, 0, 1, 0);
	e = leaf(c, 1, 0);
	ck_assert_uint_eq(e->ebx, 0x00010800);
	ck_assert(!(e->edx & X86_CPUID_1_EDX_HTT));
	ck_assert(!(e->ecx & X86_CPUID_1_ECX_TSC_DEADLINE));
	ck_assert_uint_eq(leaf(c, 0xb, 1)->eax, 0);
	ck_assert_uint_eq(leaf(c, 4, 0)->eax >> 26, 0);
	free(c);
	/* An index past nr_vcpus still gets a consistent topology. */
	c = cpuid__for_vcpu(sup, 5, 0, 0);
	ck_assert_uint_eq(leaf(c, 0xb, 1)->ebx, 6);
	free(c);
	free(sup);
}
END_TEST

/* Multiboot images take no initrd. */
START_TEST(test_multiboot_no_initrd)
{
	struct guest_memory *mem = guest_memory__create(RAM);
	struct loaded_image li;
	int ret;

	ret = loader__load_files(HELLO_ELF, HELLO_ELF, NULL, 1, mem, &li);
	ck_assert_int_eq(ret, -EINVAL);
	ck_assert_ptr_nonnull(strstr(li.error, "no initrd"));
	ck_assert_int_eq(loader__load_files(HELLO_ELF, NULL, "a b", 1, mem, &li), 0);
	ck_assert(!li.pc);
	guest_memory__destroy(mem);
}
END_TEST

Suite *linux_suite(void)
{
	Suite *s = suite_create("linux");
	TCase *tc = tcase_create("boot");

	tcase_add_test(tc, test_bzimage_boot_params);
	tcase_add_test(tc, test_bzimage_defaults);
	tcase_add_loop_test(tc, test_bzimage_hostile, 0, sizeof(bz_cases) / sizeof(bz_cases[0]));
	tcase_add_test(tc, test_bzimage_debian);
	tcase_add_test(tc, test_pvh_start_info);
	tcase_add_loop_test(tc, test_pvh_hostile, 0, sizeof(pvh_cases) / sizeof(pvh_cases[0]));
	tcase_add_test(tc, test_acpi_tables);
	tcase_add_test(tc, test_cpuid_topology);
	tcase_add_test(tc, test_multiboot_no_initrd);
	suite_add_tcase(s, tc);
	return s;
}
