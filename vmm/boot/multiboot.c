// SPDX-License-Identifier: GPL-2.0
/*
 * multiboot.c - multiboot v1 ELF32 images, booted exactly as QEMU's `-kernel` boots them:
 * header in the first 8 KiB, PT_LOAD segments at p_paddr (or the header's a.out-kludge
 * addresses when flag 16 is set), 32-bit protected mode with flat segments (CS 0x10, data
 * 0x18), paging off, EAX = 0x2BADB002, EBX = the multiboot information (memory sizes, memory
 * map, command line, boot loader name).
 *
 * The image is untrusted: every offset, size and address is checked before use.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "loader.h"
#include "memory.h"

#define MB_MAGIC 0x1badb002U
#define MB_BOOT_MAGIC 0x2badb002U
#define MB_SEARCH 8192          /* the header lies in the first 8 KiB, 4-byte aligned */
#define MB_HEADER_SIZE 12       /* magic, flags, checksum */
#define MB_HEADER_ADDR_SIZE 32  /* ... plus the five a.out-kludge addresses */
#define MB_FLAG_ADDR (1U << 16) /* the header's address fields are valid */

/* struct multiboot_info offsets and flags */
#define MBI_FLAGS 0
#define MBI_MEM_LOWER 4
#define MBI_MEM_UPPER 8
#define MBI_CMDLINE 16
#define MBI_MMAP_LENGTH 44
#define MBI_MMAP_ADDR 48
#define MBI_BOOT_LOADER_NAME 64
#define MBI_SIZE 88
#define MBI_F_MEM (1U << 0)
#define MBI_F_CMDLINE (1U << 2)
#define MBI_F_MMAP (1U << 6)
#define MBI_F_LOADER_NAME (1U << 9)

/* Layout of the boot information area (see BOOT_AREA_* in loader.h). */
#define MBI_GPA BOOT_INFO_GPA
#define MMAP_GPA (BOOT_INFO_GPA + 0x100)
#define LOADER_NAME_GPA (BOOT_INFO_GPA + 0x1c0)
#define CMDLINE_GPA (BOOT_INFO_GPA + 0x200)
#define CMDLINE_MAX (BOOT_AREA_END - CMDLINE_GPA)

/* The PC memory map QEMU's BIOS reports, below 1 MiB. */
#define LOW_RAM_END 0x9fc00ULL
#define HIGH_RAM_START 0x100000ULL

#define NOT_ELF "not an ELF file (vbts boots multiboot v1 ELF32 images)"

#define GDT_CS 0x10
#define GDT_DS 0x18

static size_t search_end(size_t len)
{
	return len < MB_SEARCH ? len : MB_SEARCH;
}

static bool multiboot_probe(const uint8_t *img, size_t len)
{
	for (size_t i = 0; i + MB_HEADER_SIZE <= search_end(len); i += 4)
		if (get_le32(img + i) == MB_MAGIC)
			return true;
	return false;
}

/* Offset of the first header with a valid checksum, or -1. */
static long find_header(const uint8_t *img, size_t len, long *bad_at)
{
	*bad_at = -1;
	for (size_t i = 0; i + MB_HEADER_SIZE <= search_end(len); i += 4) {
		if (get_le32(img + i) != MB_MAGIC)
			continue;
		if (MB_MAGIC + get_le32(img + i + 4) + get_le32(img + i + 8) == 0)
			return (long)i;
		if (*bad_at < 0)
			*bad_at = (long)i;
	}
	return -1;
}

/* A range of guest-physical memory to fill: @filesz bytes from the image, then zeros. */
struct segment {
	uint64_t gpa;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
};

#define MAX_SEGMENTS 64

/* Check @seg against RAM, the boot area and the segments before it. */
static int check_segment(const struct segment *segs, unsigned int n, uint64_t ram,
			 struct loaded_image *out)
{
	const struct segment *s = &segs[n];
	uint64_t end = s->gpa + s->memsz;

	if (end > (1ULL << 32) || end > ram)
		return loaded_image__fail(out, -E2BIG,
			    "segment %u [%#llx, %#llx) is outside guest RAM (%llu MiB)", n,
			    (unsigned long long)s->gpa, (unsigned long long)end,
			    (unsigned long long)(ram >> 20));
	if (s->gpa < BOOT_AREA_END && BOOT_AREA_START < end)
		return loaded_image__fail(out, -ENOEXEC,
			    "segment %u [%#llx, %#llx) overlaps the boot information area "
			    "[%#llx, %#llx)", n, (unsigned long long)s->gpa,
			    (unsigned long long)end, BOOT_AREA_START, BOOT_AREA_END);
	for (unsigned int i = 0; i < n; i++)
		if (s->gpa < segs[i].gpa + segs[i].memsz && segs[i].gpa < end)
			return loaded_image__fail(out, -ENOEXEC, "segments %u and %u overlap", i, n);
	return 0;
}

/* ELF32 program headers → segments; the entry point as QEMU's load_elf computes it. */
static int elf_segments(const uint8_t *img, size_t len, struct segment *segs,
			unsigned int *nr, uint64_t *entry, struct loaded_image *out)
{
	Elf32_Ehdr eh;
	bool entry_fixed = false;

	if (len < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG))
		return loaded_image__fail(out, -ENOEXEC, NOT_ELF);
	if (img[EI_CLASS] == ELFCLASS64)
		return loaded_image__fail(out, -ENOEXEC,
			    "ELF64 image: multiboot v1 needs an ELF32 (i386) image");
	if (img[EI_CLASS] != ELFCLASS32 || img[EI_DATA] != ELFDATA2LSB)
		return loaded_image__fail(out, -ENOEXEC, "not a little-endian ELF32 file");
	if (len < sizeof(eh))
		return loaded_image__fail(out, -ENOEXEC, "truncated file: %zu bytes, the ELF header needs %zu",
			    len, sizeof(eh));
	memcpy(&eh, img, sizeof(eh));
	if (eh.e_machine != EM_386)
		return loaded_image__fail(out, -ENOEXEC, "ELF machine %u is not i386", eh.e_machine);
	if (eh.e_phentsize != sizeof(Elf32_Phdr) || eh.e_phnum == 0)
		return loaded_image__fail(out, -ENOEXEC, "ELF file without usable program headers");
	if ((uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf32_Phdr) > len)
		return loaded_image__fail(out, -ENOEXEC, "truncated file: program headers end past its %zu bytes",
			    len);
	*entry = eh.e_entry;
	*nr = 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf32_Phdr ph;
		struct segment *s;

		memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (*nr == MAX_SEGMENTS)
			return loaded_image__fail(out, -ENOEXEC, "more than %d loadable segments", MAX_SEGMENTS);
		if (ph.p_filesz > ph.p_memsz)
			return loaded_image__fail(out, -ENOEXEC, "segment %u: file size %#x > memory size %#x",
				    *nr, ph.p_filesz, ph.p_memsz);
		if ((uint64_t)ph.p_offset + ph.p_filesz > len)
			return loaded_image__fail(out, -ENOEXEC,
				    "truncated file: segment %u needs bytes up to %#llx, "
				    "the file has %#zx",
				    *nr, (unsigned long long)ph.p_offset + ph.p_filesz, len);
		s = &segs[*nr];
		s->gpa = ph.p_paddr;
		s->memsz = ph.p_memsz;
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		/* The ELF entry is virtual: move it with the executable segment holding it. */
		if (!entry_fixed && ph.p_vaddr != ph.p_paddr && (ph.p_flags & PF_X) &&
		    eh.e_entry >= ph.p_vaddr && eh.e_entry - ph.p_vaddr < ph.p_filesz) {
			*entry = (uint64_t)eh.e_entry - ph.p_vaddr + ph.p_paddr;
			entry_fixed = true;
		}
		(*nr)++;
	}
	if (!*nr)
		return loaded_image__fail(out, -ENOEXEC, "ELF file without loadable segments");
	return 0;
}

/* Flag 16: the header's own addresses say where the file goes (QEMU's a.out kludge). */
static int kludge_segments(const uint8_t *img, size_t len, size_t hdr, struct segment *seg,
			   uint64_t *entry, struct loaded_image *out)
{
	uint32_t header_addr, load_addr, load_end, bss_end;
	uint64_t text_offset, load_size, size;

	if (hdr + MB_HEADER_ADDR_SIZE > len)
		return loaded_image__fail(out, -ENOEXEC, "truncated file: multiboot address fields missing");
	header_addr = get_le32(img + hdr + 12);
	load_addr = get_le32(img + hdr + 16);
	load_end = get_le32(img + hdr + 20);
	bss_end = get_le32(img + hdr + 24);
	*entry = get_le32(img + hdr + 28);
	if (header_addr < load_addr || header_addr - load_addr > hdr)
		return loaded_image__fail(out, -ENOEXEC, "multiboot header_addr %#x / load_addr %#x are invalid",
			    header_addr, load_addr);
	text_offset = hdr - (header_addr - load_addr);
	if (load_end) {
		if (load_end < load_addr)
			return loaded_image__fail(out, -ENOEXEC, "multiboot load_end_addr below load_addr");
		load_size = load_end - load_addr;
		if (text_offset + load_size > len)
			return loaded_image__fail(out, -ENOEXEC,
				    "truncated file: %zu bytes, load_end_addr needs %llu", len,
				    (unsigned long long)(text_offset + load_size));
	} else {
		load_size = len - text_offset;
	}
	size = load_size;
	if (bss_end) {
		if (bss_end < load_addr + load_size)
			return loaded_image__fail(out, -ENOEXEC, "multiboot bss_end_addr below the loaded image");
		size = bss_end - load_addr;
	}
	if (!size)
		return loaded_image__fail(out, -ENOEXEC, "multiboot image of size 0");
	seg->gpa = load_addr;
	seg->memsz = size;
	seg->offset = text_offset;
	seg->filesz = load_size;
	return 0;
}

/* The multiboot information, memory map, command line and GDT in the boot area. */
static int write_boot_info(struct guest_memory *mem, const char *cmdline,
			   struct loaded_image *out)
{
	static const char loader_name[] = "vbts";
	static const uint64_t gdt[4] = {
		0,
		0,
		0x00cf9a000000ffffULL, /* 0x10: code, base 0, limit 4 GiB, 32-bit */
		0x00cf92000000ffffULL, /* 0x18: data, base 0, limit 4 GiB */
	};
	uint64_t ram = guest_memory__low_size(mem);
	uint64_t above = guest_memory__size(mem) - ram;
	const struct {
		uint64_t base, len;
		uint32_t type;
	} map[] = {
		{ 0, LOW_RAM_END, 1 },
		{ LOW_RAM_END, 0xa0000 - LOW_RAM_END, 2 },
		{ 0xf0000, 0x10000, 2 },
		{ HIGH_RAM_START, ram - HIGH_RAM_START, 1 },
		{ GUEST_MEMORY_HIGH_START, above, 1 }, /* only when there is RAM above 4 GiB */
	};
	size_t nmap = sizeof(map) / sizeof(map[0]) - (above ? 0 : 1);
	uint8_t *area = guest_memory__ptr(mem, BOOT_AREA_START, BOOT_AREA_END - BOOT_AREA_START);
	uint8_t *mbi, *e;
	size_t n;

	if (!area)
		return loaded_image__fail(out, -E2BIG, "guest RAM too small for the boot information");
	memset(area, 0, BOOT_AREA_END - BOOT_AREA_START);
	memcpy(area + (BOOT_GDT_GPA - BOOT_AREA_START), gdt, sizeof(gdt));
	mbi = area + (MBI_GPA - BOOT_AREA_START);
	put_le32(mbi + MBI_FLAGS, MBI_F_MEM | MBI_F_CMDLINE | MBI_F_MMAP | MBI_F_LOADER_NAME);
	put_le32(mbi + MBI_MEM_LOWER, LOW_RAM_END >> 10);
	put_le32(mbi + MBI_MEM_UPPER, (uint32_t)((ram - HIGH_RAM_START) >> 10));
	e = area + (MMAP_GPA - BOOT_AREA_START);
	for (size_t i = 0; i < nmap; i++, e += 24) {
		put_le32(e, 20); /* size of the entry after this field */
		put_le64(e + 4, map[i].base);
		put_le64(e + 12, map[i].len);
		put_le32(e + 20, map[i].type);
	}
	put_le32(mbi + MBI_MMAP_ADDR, MMAP_GPA);
	put_le32(mbi + MBI_MMAP_LENGTH, nmap * 24);
	memcpy(area + (LOADER_NAME_GPA - BOOT_AREA_START), loader_name, sizeof(loader_name));
	put_le32(mbi + MBI_BOOT_LOADER_NAME, LOADER_NAME_GPA);
	n = strnlen(cmdline, CMDLINE_MAX - 1);
	memcpy(area + (CMDLINE_GPA - BOOT_AREA_START), cmdline, n);
	put_le32(mbi + MBI_CMDLINE, CMDLINE_GPA);

	out->boot.gdt_base = BOOT_GDT_GPA;
	out->boot.gdt_limit = sizeof(gdt) - 1;
	out->boot.cs = GDT_CS;
	out->boot.ds = GDT_DS;
	out->boot.eax = MB_BOOT_MAGIC;
	out->boot.ebx = MBI_GPA;
	out->boot.rsp = 0;
	return 0;
}

static int multiboot_load(const uint8_t *img, size_t len, const struct loader_config *cfg,
			  struct guest_memory *mem, struct loaded_image *out)
{
	struct segment segs[MAX_SEGMENTS];
	uint64_t ram = guest_memory__low_size(mem), entry = 0;
	unsigned int nr = 0;
	long hdr, bad_at;
	uint32_t flags;
	int ret;

	if (len < SELFMAG || memcmp(img, ELFMAG, SELFMAG))
		return loaded_image__fail(out, -ENOEXEC, NOT_ELF);
	hdr = find_header(img, len, &bad_at);
	if (hdr < 0)
		return loaded_image__fail(out, -ENOEXEC, "multiboot header at offset %#lx has a bad checksum",
			    bad_at);
	flags = get_le32(img + hdr + 4);
	if (img[EI_CLASS] == ELFCLASS64 || !(flags & MB_FLAG_ADDR)) {
		ret = elf_segments(img, len, segs, &nr, &entry, out);
	} else {
		ret = kludge_segments(img, len, hdr, &segs[0], &entry, out);
		nr = 1;
	}
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < nr; i++) {
		ret = check_segment(segs, i, ram, out);
		if (ret < 0)
			return ret;
	}
	if (entry >= ram)
		return loaded_image__fail(out, -E2BIG, "entry point %#llx is outside guest RAM",
			    (unsigned long long)entry);
	if (cfg->initrd)
		return loaded_image__fail(out, -EINVAL, "multiboot images take no initrd");
	ret = write_boot_info(mem, cfg->cmdline, out);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < nr; i++) {
		uint8_t *dst = guest_memory__ptr(mem, segs[i].gpa, segs[i].memsz);

		memcpy(dst, img + segs[i].offset, segs[i].filesz);
		memset(dst + segs[i].filesz, 0, segs[i].memsz - segs[i].filesz);
	}
	out->entry = entry;
	out->boot.rip = entry;
	loader__build_id(img, len, out->build_id);
	return 0;
}

const struct loader_format multiboot_format = {
	.name = "multiboot",
	.probe = multiboot_probe,
	.load = multiboot_load,
};
