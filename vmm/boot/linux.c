// SPDX-License-Identifier: GPL-2.0
/*
 * linux.c - Linux kernels: bzImage (64-bit boot protocol) and vmlinux (PVH entry).
 *
 * bzImage: the protected-mode kernel (after the (setup_sects + 1) * 512 bytes of real-mode
 * setup) goes to pref_address; boot_params gets the image's setup header, the e820 map, the
 * command line, the initrd and the RSDP; the vCPU starts in 64-bit mode at startup_64 (load
 * address + 0x200) with RSI = boot_params, the first 4 GiB identity-mapped and a GDT with
 * __BOOT_CS/__BOOT_DS.
 *
 * PVH: the PT_LOAD segments go to their physical addresses; struct hvm_start_info carries the
 * memory map, the command line, the initrd as module 0 and the RSDP; the vCPU starts in flat
 * 32-bit protected mode at the XEN_ELFNOTE_PHYS32_ENTRY address with EBX = hvm_start_info.
 *
 * Images are untrusted: every header field, offset and size is checked before use, and each
 * failure names the field.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "boot/acpi.h"
#include "boot/linux.h"
#include "devices/acpi-pm.h"
#include "devices/i8042.h"
#include "loader.h"
#include "memory.h"
#include "pc.h"
#include "pvpanic.h"
#include "x86.h"

#define MAX_SEGMENTS 16
#define E820_MAX 8

struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

struct segment {
	uint64_t gpa;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
};

static void put8(uint8_t *p, uint8_t v)
{
	*p = v;
}

/* The PC memory map: low RAM with the EBDA and BIOS area reserved, RAM above 1 MiB, KVM's
 * private pages below 4 GiB, RAM above 4 GiB. */
static unsigned int build_e820(const struct guest_memory *mem, struct e820_entry *e)
{
	uint64_t low = guest_memory__low_size(mem);
	uint64_t high = guest_memory__size(mem) - low;
	unsigned int n = 0;

	e[n++] = (struct e820_entry){ 0, LINUX_EBDA_GPA, E820_RAM };
	e[n++] = (struct e820_entry){ LINUX_EBDA_GPA, 0xa0000 - LINUX_EBDA_GPA, E820_RESERVED };
	e[n++] = (struct e820_entry){ ACPI_TABLES_GPA, ACPI_TABLES_END - ACPI_TABLES_GPA,
				      E820_RESERVED };
	e[n++] = (struct e820_entry){ LINUX_HIGH_GPA, low - LINUX_HIGH_GPA, E820_RAM };
	e[n++] = (struct e820_entry){ PC_IDENTITY_MAP_GPA, PC_KVM_AREA_END - PC_IDENTITY_MAP_GPA,
				      E820_RESERVED };
	if (high)
		e[n++] = (struct e820_entry){ GUEST_MEMORY_HIGH_START, high, E820_RAM };
	return n;
}

/*
 * Everything both protocols share: low memory cleared, GDT, command line, ACPI tables, and the
 * initrd at the top of low RAM below @initrd_max (exclusive), above @kernel_end. Fills
 * @initrd_gpa (0 when none) and @rsdp.
 */
static int write_common(struct guest_memory *mem, const struct loader_config *cfg,
			bool long_mode, uint64_t kernel_end, uint64_t initrd_max,
			uint64_t *initrd_gpa, uint64_t *rsdp, struct loaded_image *out)
{
	const uint64_t gdt[4] = {
		0,
		0,
		x86_desc(X86_DESC_P | X86_DESC_S | X86_DESC_TYPE_CODE_XR | X86_DESC_ACCESSED,
			 X86_DESC_FLAG_G | (long_mode ? X86_DESC_FLAG_L : X86_DESC_FLAG_DB), 0,
			 0xfffff),
		x86_desc(X86_DESC_P | X86_DESC_S | X86_DESC_TYPE_DATA_RW | X86_DESC_ACCESSED,
			 X86_DESC_FLAG_G | X86_DESC_FLAG_DB, 0, 0xfffff),
	};
	const struct acpi_config acpi = {
		.nr_vcpus = cfg->nr_vcpus ? cfg->nr_vcpus : 1,
		.pm1a_evt = ACPI_PM1A_EVT_PORT,
		.pm1a_cnt = ACPI_PM1A_CNT_PORT,
		.sci_irq = ACPI_PM_SCI_IRQ,
		.s5_slp_typ = ACPI_PM_S5_SLP_TYP,
		.reset_port = I8042_CMD_PORT,
		.reset_value = I8042_CMD_RESET,
		.pvpanic_port = PVPANIC_PORT,
	};
	uint64_t low = guest_memory__low_size(mem), top, start;
	uint8_t *area;
	long ret;

	/* Everything below 1 MiB: the boot data, the EBDA and the BIOS area. */
	area = guest_memory__ptr(mem, 0, LINUX_HIGH_GPA);
	if (!area)
		return loaded_image__fail(out, -E2BIG, "guest RAM too small");
	memset(area, 0, LINUX_HIGH_GPA);
	memcpy(area + LINUX_GDT_GPA, gdt, sizeof(gdt));
	memcpy(area + LINUX_CMDLINE_GPA, cfg->cmdline, strlen(cfg->cmdline) + 1);
	ret = acpi__build(area + ACPI_TABLES_GPA, ACPI_TABLES_END - ACPI_TABLES_GPA,
			  ACPI_TABLES_GPA, &acpi);
	if (ret < 0)
		return loaded_image__fail(out, (int)ret, "ACPI tables for %u vCPUs: %s", acpi.nr_vcpus,
			    strerror((int)-ret));
	*rsdp = ACPI_TABLES_GPA;

	*initrd_gpa = 0;
	if (!cfg->initrd)
		return 0;
	top = initrd_max < low ? initrd_max : low;
	if (cfg->initrd_len > top || (top - cfg->initrd_len) < kernel_end)
		return loaded_image__fail(out, -E2BIG,
			    "initrd of %zu bytes does not fit in guest RAM between the kernel's end "
			    "%#llx and %#llx (more --memory?)",
			    cfg->initrd_len, (unsigned long long)kernel_end,
			    (unsigned long long)top);
	start = (top - cfg->initrd_len) & ~(X86_PAGE_SIZE - 1);
	if (start < kernel_end)
		return loaded_image__fail(out, -E2BIG, "initrd of %zu bytes does not fit above the kernel",
			    cfg->initrd_len);
	if (cfg->initrd_len)
		memcpy(guest_memory__ptr(mem, start, cfg->initrd_len), cfg->initrd,
		       cfg->initrd_len);
	*initrd_gpa = start;
	return 0;
}

static void set_boot_segments(struct loaded_image *out)
{
	out->boot.gdt_base = LINUX_GDT_GPA;
	out->boot.gdt_limit = 4 * 8 - 1;
	out->boot.cs = LINUX_BOOT_CS;
	out->boot.ds = LINUX_BOOT_DS;
}

/* The command line: the caller's, or the default; NULL with @out->error when too long. */
static const char *command_line(const struct loader_config *cfg, uint64_t max,
				struct loaded_image *out)
{
	const char *s = cfg->cmdline ? cfg->cmdline : LINUX_DEFAULT_CMDLINE;
	size_t n = strlen(s);

	if (n > max) {
		loaded_image__fail(out, -EINVAL, "command line of %zu bytes is longer than the kernel's limit of "
			 "%llu", n, (unsigned long long)max);
		return NULL;
	}
	return s;
}

/* ---- bzImage ----------------------------------------------------------------------------- */

static bool bzimage_probe(const uint8_t *img, size_t len)
{
	return len >= HDR_MAGIC + 4 && get_le16(img + HDR_BOOT_FLAG) == HDR_BOOT_FLAG_MAGIC &&
	       !memcmp(img + HDR_MAGIC, "HdrS", 4);
}

/* The identity map of the first 4 GiB in 2 MiB pages. */
static void write_page_tables(uint8_t *low)
{
	uint8_t *pml4 = low + LINUX_PML4_GPA, *pdpt = low + LINUX_PDPT_GPA;

	put_le64(pml4, LINUX_PDPT_GPA | X86_PTE_P | X86_PTE_RW);
	for (unsigned int i = 0; i < 4; i++) {
		uint8_t *pd = low + LINUX_PD_GPA + i * X86_PAGE_SIZE;

		put_le64(pdpt + 8 * i, (LINUX_PD_GPA + i * X86_PAGE_SIZE) | X86_PTE_P | X86_PTE_RW);
		for (unsigned int j = 0; j < X86_PT_ENTRIES; j++)
			put_le64(pd + 8 * j, ((uint64_t)(i * X86_PT_ENTRIES + j) << 21) | X86_PTE_P |
						  X86_PTE_RW | X86_PTE_PS);
	}
}

static int bzimage_load(const uint8_t *img, size_t len, const struct loader_config *lcfg,
			struct guest_memory *mem, struct loaded_image *out)
{
	struct loader_config cfg = *lcfg;
	uint64_t low = guest_memory__low_size(mem), setup_size, kernel_size, load, init_size;
	uint64_t initrd_gpa, initrd_max, rsdp, hdr_end;
	unsigned int setup_sects, version;
	struct e820_entry e820[E820_MAX];
	unsigned int ne820;
	uint8_t *bp, *low_mem;
	int ret;

	if (len < 1024)
		return loaded_image__fail(out, -ENOEXEC, "truncated bzImage: %zu bytes, the setup header alone "
			    "needs 1024", len);
	version = get_le16(img + HDR_VERSION);
	if (version < 0x020c)
		return loaded_image__fail(out, -ENOEXEC, "boot protocol %u.%02u: vbts needs 2.12 or newer (a "
			    "64-bit bzImage)", version >> 8, version & 0xff);
	hdr_end = 0x202 + img[0x201];
	if (hdr_end > HDR_END_MAX)
		return loaded_image__fail(out, -ENOEXEC, "setup header end %#llx is past the boot_params' "
			    "header space (%#x)", (unsigned long long)hdr_end, HDR_END_MAX);
	if (!(img[HDR_LOADFLAGS] & HDR_LOADFLAGS_LOADED_HIGH))
		return loaded_image__fail(out, -ENOEXEC, "not a bzImage: loadflags lack LOADED_HIGH (a zImage)");
	if (!(get_le16(img + HDR_XLOADFLAGS) & HDR_XLF_KERNEL_64))
		return loaded_image__fail(out, -ENOEXEC, "not a 64-bit kernel: xloadflags lack XLF_KERNEL_64");
	setup_sects = img[HDR_SETUP_SECTS] ? img[HDR_SETUP_SECTS] : 4;
	setup_size = (uint64_t)(setup_sects + 1) * 512;
	if (setup_size >= len)
		return loaded_image__fail(out, -ENOEXEC, "setup_sects %u: the real-mode setup (%llu bytes) does "
			    "not leave a kernel in the file's %zu bytes", img[HDR_SETUP_SECTS],
			    (unsigned long long)setup_size, len);
	kernel_size = (uint64_t)get_le32(img + HDR_SYSSIZE) * 16;
	if (!kernel_size || kernel_size > len - setup_size)
		return loaded_image__fail(out, -ENOEXEC, "truncated bzImage: syssize says the kernel has %llu "
			    "bytes after the setup, the file has %llu",
			    (unsigned long long)kernel_size,
			    (unsigned long long)(len - setup_size));
	init_size = get_le32(img + HDR_INIT_SIZE);
	if (init_size < kernel_size)
		return loaded_image__fail(out, -ENOEXEC, "init_size %#llx is smaller than the kernel (%#llx)",
			    (unsigned long long)init_size, (unsigned long long)kernel_size);
	load = get_le64(img + HDR_PREF_ADDRESS);
	if (!load)
		load = LINUX_HIGH_GPA;
	if (load < LINUX_HIGH_GPA || (load & (X86_PAGE_SIZE - 1)) || load >= (1ULL << 32))
		return loaded_image__fail(out, -ENOEXEC, "pref_address %#llx is not a page-aligned address "
			    "between 1 MiB and 4 GiB", (unsigned long long)load);
	if (init_size > low || load > low - init_size)
		return loaded_image__fail(out, -E2BIG, "the kernel needs guest RAM up to %#llx (pref_address + "
			    "init_size); --memory gives %llu MiB below the PCI hole",
			    (unsigned long long)(load + init_size),
			    (unsigned long long)(low >> 20));
	cfg.cmdline = command_line(lcfg, get_le32(img + HDR_CMDLINE_SIZE) < LINUX_CMDLINE_MAX ?
				   get_le32(img + HDR_CMDLINE_SIZE) : LINUX_CMDLINE_MAX, out);
	if (!cfg.cmdline)
		return -EINVAL;
	initrd_max = (uint64_t)get_le32(img + HDR_INITRD_ADDR_MAX) + 1;
	ret = write_common(mem, &cfg, true, load + init_size, initrd_max, &initrd_gpa, &rsdp,
			   out);
	if (ret < 0)
		return ret;

	low_mem = guest_memory__ptr(mem, 0, LINUX_HIGH_GPA);
	write_page_tables(low_mem);
	bp = low_mem + LINUX_BOOT_PARAMS_GPA;
	memcpy(bp + HDR_START, img + HDR_START, hdr_end - HDR_START);
	put8(bp + HDR_TYPE_OF_LOADER, HDR_LOADER_UNDEFINED);
	put_le32(bp + HDR_CODE32_START, load);
	put_le32(bp + HDR_CMD_LINE_PTR, LINUX_CMDLINE_GPA);
	put_le32(bp + HDR_RAMDISK_IMAGE, initrd_gpa);
	put_le32(bp + HDR_RAMDISK_SIZE, initrd_gpa ? cfg.initrd_len : 0);
	put_le64(bp + BP_ACPI_RSDP_ADDR, rsdp);
	ne820 = build_e820(mem, e820);
	put8(bp + BP_E820_ENTRIES, ne820);
	for (unsigned int i = 0; i < ne820; i++) {
		uint8_t *e = bp + BP_E820_TABLE + 20 * i;

		put_le64(e, e820[i].addr);
		put_le64(e + 8, e820[i].size);
		put_le32(e + 16, e820[i].type);
	}
	memcpy(guest_memory__ptr(mem, load, kernel_size), img + setup_size, kernel_size);

	out->entry = load + HDR_STARTUP_64_OFFSET;
	out->pc = true;
	set_boot_segments(out);
	out->boot.rip = out->entry;
	out->boot.rsp = LINUX_STACK_TOP;
	out->boot.rsi = LINUX_BOOT_PARAMS_GPA;
	out->boot.long_mode = true;
	out->boot.cr3 = LINUX_PML4_GPA;
	return 0;
}

const struct loader_format bzimage_format = {
	.name = "bzImage",
	.probe = bzimage_probe,
	.load = bzimage_load,
};

/* ---- PVH --------------------------------------------------------------------------------- */

/* The PHYS32 entry of a note area; true when found, *bad set for a malformed entry note. */
static bool find_pvh_note(const uint8_t *p, uint64_t size, uint64_t *entry, bool *bad)
{
	uint64_t off = 0;

	while (size - off >= 12) {
		uint32_t namesz = get_le32(p + off), descsz = get_le32(p + off + 4);
		uint32_t type = get_le32(p + off + 8);
		uint64_t name_off = off + 12;
		uint64_t desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
		uint64_t next = desc_off + (((uint64_t)descsz + 3) & ~3ULL);

		if (desc_off > size || descsz > size - desc_off)
			return false;
		if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 &&
		    !memcmp(p + name_off, "Xen", 4)) {
			if (descsz == 4) {
				*entry = get_le32(p + desc_off);
			} else if (descsz == 8) {
				*entry = get_le64(p + desc_off);
			} else {
				*bad = true;
				return false;
			}
			return true;
		}
		if (next > size)
			return false;
		off = next;
	}
	return false;
}

/* The ELF64 header and the PHYS32 entry; false when this is not a PVH kernel. */
static bool pvh_entry(const uint8_t *img, size_t len, Elf64_Ehdr *eh, uint64_t *entry,
		      bool *bad)
{
	*bad = false;
	if (len < sizeof(*eh) || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64 ||
	    img[EI_DATA] != ELFDATA2LSB)
		return false;
	memcpy(eh, img, sizeof(*eh));
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > len ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len - eh->e_phoff)
		return false;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, img + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			continue;
		if (find_pvh_note(img + ph.p_offset, ph.p_filesz, entry, bad))
			return true;
	}
	return false;
}

static bool pvh_probe(const uint8_t *img, size_t len)
{
	Elf64_Ehdr eh;
	uint64_t entry;
	bool bad;

	return pvh_entry(img, len, &eh, &entry, &bad) || bad;
}

static int pvh_segments(const uint8_t *img, size_t len, const Elf64_Ehdr *eh, uint64_t low,
			struct segment *segs, unsigned int *nr, struct loaded_image *out)
{
	*nr = 0;
	if (eh->e_machine != EM_X86_64)
		return loaded_image__fail(out, -ENOEXEC, "ELF machine %u is not x86-64", eh->e_machine);
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		struct segment *s;

		memcpy(&ph, img + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		if (*nr == MAX_SEGMENTS)
			return loaded_image__fail(out, -ENOEXEC, "more than %d loadable segments", MAX_SEGMENTS);
		if (ph.p_filesz > ph.p_memsz)
			return loaded_image__fail(out, -ENOEXEC, "segment %u: file size %#llx > memory size %#llx",
				    *nr, (unsigned long long)ph.p_filesz,
				    (unsigned long long)ph.p_memsz);
		if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
			return loaded_image__fail(out, -ENOEXEC, "truncated file: segment %u needs bytes up to "
				    "%#llx, the file has %#zx", *nr,
				    (unsigned long long)ph.p_offset + ph.p_filesz, len);
		if (ph.p_paddr < LINUX_HIGH_GPA)
			return loaded_image__fail(out, -ENOEXEC, "segment %u at %#llx is below 1 MiB", *nr,
				    (unsigned long long)ph.p_paddr);
		if (ph.p_paddr > low || ph.p_memsz > low - ph.p_paddr)
			return loaded_image__fail(out, -E2BIG, "segment %u [%#llx, %#llx) is outside guest RAM "
				    "below the PCI hole (%llu MiB; more --memory?)", *nr,
				    (unsigned long long)ph.p_paddr,
				    (unsigned long long)(ph.p_paddr + ph.p_memsz),
				    (unsigned long long)(low >> 20));
		s = &segs[*nr];
		s->gpa = ph.p_paddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		for (unsigned int j = 0; j < *nr; j++)
			if (s->gpa < segs[j].gpa + segs[j].memsz &&
			    segs[j].gpa < s->gpa + s->memsz)
				return loaded_image__fail(out, -ENOEXEC, "segments %u and %u overlap", j, *nr);
		(*nr)++;
	}
	if (!*nr)
		return loaded_image__fail(out, -ENOEXEC, "ELF file without loadable segments");
	return 0;
}

static int pvh_load(const uint8_t *img, size_t len, const struct loader_config *lcfg,
		    struct guest_memory *mem, struct loaded_image *out)
{
	struct loader_config cfg = *lcfg;
	uint64_t low = guest_memory__low_size(mem), entry = 0, end = 0, initrd_gpa, rsdp;
	struct segment segs[MAX_SEGMENTS];
	struct e820_entry e820[E820_MAX];
	unsigned int nr, ne820;
	uint8_t *low_mem, *si, *e;
	Elf64_Ehdr eh;
	bool bad, in_segment = false;
	int ret;

	if (!pvh_entry(img, len, &eh, &entry, &bad))
		return loaded_image__fail(out, -ENOEXEC, "the PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) has a "
			    "descriptor of neither 4 nor 8 bytes");
	ret = pvh_segments(img, len, &eh, low, segs, &nr, out);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < nr; i++) {
		if (segs[i].gpa + segs[i].memsz > end)
			end = segs[i].gpa + segs[i].memsz;
		in_segment |= entry >= segs[i].gpa && entry - segs[i].gpa < segs[i].filesz;
	}
	if (!in_segment)
		return loaded_image__fail(out, -ENOEXEC, "PVH entry %#llx is not inside a loaded segment",
			    (unsigned long long)entry);
	cfg.cmdline = command_line(lcfg, LINUX_CMDLINE_MAX, out);
	if (!cfg.cmdline)
		return -EINVAL;
	ret = write_common(mem, &cfg, false, end, 1ULL << 32, &initrd_gpa, &rsdp, out);
	if (ret < 0)
		return ret;

	low_mem = guest_memory__ptr(mem, 0, LINUX_HIGH_GPA);
	si = low_mem + LINUX_START_INFO_GPA;
	put_le32(si, HVM_START_MAGIC);
	put_le32(si + 4, 1); /* version: with the memory map */
	put_le32(si + 8, 0); /* flags */
	if (initrd_gpa) {
		uint8_t *m = low_mem + LINUX_MODLIST_GPA;

		put_le32(si + 12, 1); /* nr_modules */
		put_le64(si + 16, LINUX_MODLIST_GPA);
		put_le64(m, initrd_gpa);
		put_le64(m + 8, cfg.initrd_len);
	}
	put_le64(si + 24, LINUX_CMDLINE_GPA);
	put_le64(si + 32, rsdp);
	ne820 = build_e820(mem, e820);
	put_le64(si + 40, LINUX_MEMMAP_GPA);
	put_le32(si + 48, ne820);
	e = low_mem + LINUX_MEMMAP_GPA;
	for (unsigned int i = 0; i < ne820; i++, e += HVM_MEMMAP_ENTRY_SIZE) {
		put_le64(e, e820[i].addr);
		put_le64(e + 8, e820[i].size);
		put_le32(e + 16, e820[i].type);
	}
	for (unsigned int i = 0; i < nr; i++) {
		uint8_t *dst = guest_memory__ptr(mem, segs[i].gpa, segs[i].memsz);

		memcpy(dst, img + segs[i].offset, segs[i].filesz);
		memset(dst + segs[i].filesz, 0, segs[i].memsz - segs[i].filesz);
	}

	out->entry = entry;
	out->pc = true;
	set_boot_segments(out);
	out->boot.rip = entry;
	out->boot.ebx = LINUX_START_INFO_GPA;
	loader__build_id(img, len, out->build_id);
	return 0;
}

const struct loader_format pvh_format = {
	.name = "pvh",
	.probe = pvh_probe,
	.load = pvh_load,
};
