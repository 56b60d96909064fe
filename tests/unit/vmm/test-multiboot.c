// SPDX-License-Identifier: GPL-2.0
/*
 * test-multiboot.c - the multiboot v1 loader on ELF images built here byte by byte (and the
 * hello guest built by meson): boot state, multiboot information, memory map, and every kind
 * of bad input.
 */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "loader.h"
#include "memory.h"
#include "tests.h"

#define RAM (16ULL << 20)
#define MB_MAGIC 0x1badb002U

/* How to build one test image. */
struct img_spec {
	unsigned char elf_class;  /* ELFCLASS32 (default when 0) or ELFCLASS64 */
	uint32_t mb_flags;
	uint32_t header_off;      /* file offset of the multiboot header; 0: 0x180 */
	bool bad_checksum;
	bool no_header;
	unsigned int nseg;        /* PT_LOAD segments (1 when 0) */
	uint32_t paddr[2], vaddr[2], filesz[2], memsz[2];
	uint32_t entry;
	bool build_id;
	uint32_t kludge[5];       /* header_addr, load_addr, load_end, bss_end, entry */
	size_t truncate_to;       /* cut the file here when non-zero */
};

#define SEG_OFF 0x1000    /* file offset of segment 0's bytes; segment 1 follows at +0x1000 */
#define NOTE_OFF 0x200
#define IMG_MAX 0x4000

/* Returns the image size; @img has IMG_MAX bytes. */
static size_t build_image(const struct img_spec *s, uint8_t *img)
{
	unsigned int nseg = s->nseg ? s->nseg : 1;
	uint32_t hoff = s->header_off ? s->header_off : 0x180;
	Elf32_Ehdr eh = { 0 };
	size_t len = SEG_OFF + nseg * 0x1000;

	memset(img, 0, IMG_MAX);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = s->elf_class ? s->elf_class : ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_entry = s->entry;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf32_Phdr);
	eh.e_phnum = nseg + (s->build_id ? 1 : 0);
	memcpy(img, &eh, sizeof(eh));
	for (unsigned int i = 0; i < nseg; i++) {
		Elf32_Phdr ph = {
			.p_type = PT_LOAD,
			.p_offset = SEG_OFF + i * 0x1000,
			.p_vaddr = s->vaddr[i] ? s->vaddr[i] : s->paddr[i],
			.p_paddr = s->paddr[i],
			.p_filesz = s->filesz[i],
			.p_memsz = s->memsz[i],
			.p_flags = PF_R | PF_X,
			.p_align = 0x1000,
		};

		memcpy(img + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
		memset(img + SEG_OFF + i * 0x1000, 0xa0 + i,
		       s->filesz[i] < 0x1000 ? s->filesz[i] : 0x1000);
	}
	if (s->build_id) {
		Elf32_Phdr ph = { .p_type = PT_NOTE, .p_offset = NOTE_OFF, .p_filesz = 36 };

		memcpy(img + sizeof(eh) + nseg * sizeof(ph), &ph, sizeof(ph));
		put_le32(img + NOTE_OFF, 4);
		put_le32(img + NOTE_OFF + 4, 20);
		put_le32(img + NOTE_OFF + 8, NT_GNU_BUILD_ID);
		memcpy(img + NOTE_OFF + 12, "GNU", 4);
		for (int i = 0; i < 20; i++)
			img[NOTE_OFF + 16 + i] = (uint8_t)(0x10 + i);
	}
	if (!s->no_header) {
		put_le32(img + hoff, MB_MAGIC);
		put_le32(img + hoff + 4, s->mb_flags);
		put_le32(img + hoff + 8, -(MB_MAGIC + s->mb_flags) + (s->bad_checksum ? 1 : 0));
		for (int i = 0; i < 5; i++)
			put_le32(img + hoff + 12 + 4 * i, s->kludge[i]);
	}
	if (hoff + 32 > len)
		len = hoff + 32;
	return s->truncate_to ? s->truncate_to : len;
}

/* A plain valid image: one segment at 1 MiB, 0x100 bytes of file, 0x2000 of memory. */
static struct img_spec valid_spec(void)
{
	struct img_spec s = { 0 };

	s.paddr[0] = 0x100000;
	s.filesz[0] = 0x100;
	s.memsz[0] = 0x2000;
	s.entry = 0x100010;
	return s;
}

static int load_spec(const struct img_spec *s, struct guest_memory *mem, struct loaded_image *li)
{
	uint8_t *img = malloc(IMG_MAX);
	size_t len;
	int ret;

	ck_assert_ptr_nonnull(img);
	len = build_image(s, img);
	ret = loader__load(img, len, "kernel --x", mem, li);
	free(img);
	return ret;
}

static struct guest_memory *new_mem(void)
{
	struct guest_memory *mem = guest_memory__create(RAM);

	ck_assert_ptr_nonnull(mem);
	return mem;
}

START_TEST(test_valid_boot_state)
{
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;
	const uint8_t *p, *mbi;

	/* Dirty the bss area first: the loader must zero it. */
	memset(guest_memory__ptr(mem, 0x100000, 0x2000), 0x55, 0x2000);
	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	ck_assert_str_eq(li.format, "multiboot");
	ck_assert_uint_eq(li.entry, 0x100010);
	ck_assert_uint_eq(li.boot.rip, 0x100010);
	ck_assert_uint_eq(li.boot.eax, 0x2badb002);
	ck_assert_uint_eq(li.boot.ebx, BOOT_INFO_GPA);
	ck_assert_uint_eq(li.boot.cs, 0x10);
	ck_assert_uint_eq(li.boot.ds, 0x18);
	ck_assert_uint_eq(li.boot.gdt_base, BOOT_GDT_GPA);
	ck_assert_str_eq(li.build_id, "");

	p = guest_memory__ptr(mem, 0x100000, 0x2000);
	ck_assert_uint_eq(p[0], 0xa0);
	ck_assert_uint_eq(p[0xff], 0xa0);
	ck_assert_uint_eq(p[0x100], 0);
	ck_assert_uint_eq(p[0x1fff], 0);

	/* The GDT: flat 32-bit code at 0x10, data at 0x18. */
	p = guest_memory__ptr(mem, BOOT_GDT_GPA, 32);
	ck_assert_uint_eq(get_le32(p + 0x10), 0x0000ffff);
	ck_assert_uint_eq(get_le32(p + 0x14), 0x00cf9a00);
	ck_assert_uint_eq(get_le32(p + 0x1c), 0x00cf9200);

	mbi = guest_memory__ptr(mem, BOOT_INFO_GPA, 88);
	ck_assert_uint_eq(get_le32(mbi) & 0x245, 0x245); /* mem, cmdline, mmap, loader name */
	ck_assert_uint_eq(get_le32(mbi + 4), 639);
	ck_assert_uint_eq(get_le32(mbi + 8), (RAM - (1 << 20)) >> 10);
	ck_assert_str_eq((const char *)guest_memory__ptr(mem, get_le32(mbi + 16), 11), "kernel --x");
	ck_assert_str_eq((const char *)guest_memory__ptr(mem, get_le32(mbi + 64), 5), "vbts");
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_memory_map)
{
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;
	const uint8_t *mbi, *e;
	uint64_t base, len, total = 0;
	uint32_t n;

	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	mbi = guest_memory__ptr(mem, BOOT_INFO_GPA, 88);
	n = get_le32(mbi + 44);
	ck_assert_uint_eq(n, 4 * 24);
	e = guest_memory__ptr(mem, get_le32(mbi + 48), n);
	ck_assert_ptr_nonnull(e);
	for (uint32_t off = 0; off < n; off += 24) {
		ck_assert_uint_eq(get_le32(e + off), 20);
		memcpy(&base, e + off + 4, 8);
		memcpy(&len, e + off + 12, 8);
		if (get_le32(e + off + 20) == 1)
			total += len;
		ck_assert_uint_le(base + len, RAM);
	}
	/* Available: [0, 0x9fc00) and [1 MiB, RAM). */
	ck_assert_uint_eq(total, 0x9fc00 + RAM - 0x100000);
	memcpy(&base, e + 3 * 24 + 4, 8);
	ck_assert_uint_eq(base, 0x100000);
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_memory_above_4g)
{
	const uint64_t g = 1ULL << 30;
	struct guest_memory *mem = guest_memory__create(5 * g);
	struct img_spec s = valid_spec();
	struct loaded_image li;
	const uint8_t *mbi, *e;
	uint64_t base, len;

	ck_assert_ptr_nonnull(mem);
	ck_assert_uint_eq(guest_memory__size(mem), 5 * g);
	ck_assert_uint_eq(guest_memory__low_size(mem), 3 * g);
	ck_assert_ptr_nonnull(guest_memory__ptr(mem, 3 * g - 1, 1));
	ck_assert_ptr_null(guest_memory__ptr(mem, 3 * g - 1, 2));
	ck_assert_ptr_null(guest_memory__ptr(mem, 3 * g, 1));
	ck_assert_ptr_null(guest_memory__ptr(mem, 4 * g - 1, 2));
	ck_assert_ptr_nonnull(guest_memory__ptr(mem, 4 * g, 2 * g));
	ck_assert_ptr_null(guest_memory__ptr(mem, 4 * g, 2 * g + 1));
	ck_assert_ptr_null(guest_memory__ptr(mem, 6 * g, 1));
	ck_assert_ptr_null(guest_memory__ptr(mem, ~0ULL, 2));
	ck_assert_ptr_null(guest_memory__ptr(mem, 0, 0));
	/* Distinct host bytes on both sides of the hole. */
	ck_assert_ptr_ne(guest_memory__ptr(mem, 4 * g, 1), guest_memory__ptr(mem, 0, 1));

	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	mbi = guest_memory__ptr(mem, BOOT_INFO_GPA, 88);
	ck_assert_uint_eq(get_le32(mbi + 8), (3 * g - (1 << 20)) >> 10);
	ck_assert_uint_eq(get_le32(mbi + 44), 5 * 24);
	e = guest_memory__ptr(mem, get_le32(mbi + 48), 5 * 24);
	memcpy(&base, e + 4 * 24 + 4, 8);
	memcpy(&len, e + 4 * 24 + 12, 8);
	ck_assert_uint_eq(base, 4 * g);
	ck_assert_uint_eq(len, 2 * g);
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_two_segments_and_build_id)
{
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;
	const uint8_t *p;

	s.nseg = 2;
	s.paddr[1] = 0x200000;
	s.filesz[1] = 0x10;
	s.memsz[1] = 0x10;
	s.build_id = true;
	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	p = guest_memory__ptr(mem, 0x200000, 0x10);
	ck_assert_uint_eq(p[0], 0xa1);
	ck_assert_str_eq(li.build_id, "101112131415161718191a1b1c1d1e1f20212223");
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_entry_moves_with_segment)
{
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;

	/* Linked at 3 GiB + 1 MiB, loaded at 1 MiB: the entry is translated like QEMU does. */
	s.vaddr[0] = 0xc0100000;
	s.entry = 0xc0100020;
	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	ck_assert_uint_eq(li.entry, 0x100020);
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_aout_kludge)
{
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;
	const uint8_t *p;

	/* Header at file offset 0x180 says: file offset 0 is loaded at 0x300000, 0x1000 bytes,
	 * bss up to 0x302000, entry 0x300100. */
	s.mb_flags = 1 << 16;
	s.kludge[0] = 0x300180;
	s.kludge[1] = 0x300000;
	s.kludge[2] = 0x301000;
	s.kludge[3] = 0x302000;
	s.kludge[4] = 0x300100;
	ck_assert_int_eq(load_spec(&s, mem, &li), 0);
	ck_assert_uint_eq(li.entry, 0x300100);
	p = guest_memory__ptr(mem, 0x300000, 0x2000);
	ck_assert_mem_eq(p, ELFMAG, SELFMAG);
	ck_assert_uint_eq(get_le32(p + 0x180), MB_MAGIC);
	ck_assert_uint_eq(p[0x1fff], 0);
	guest_memory__destroy(mem);
}
END_TEST

/* Table of bad images: each must fail with the given error and a message containing @says. */
struct bad_case {
	const char *name;
	void (*tweak)(struct img_spec *s);
	int err;
	const char *says;
};

static void tw_elf64(struct img_spec *s)
{
	s->elf_class = ELFCLASS64;
}

static void tw_no_header(struct img_spec *s)
{
	s->no_header = true;
}

static void tw_bad_checksum(struct img_spec *s)
{
	s->bad_checksum = true;
}

static void tw_header_too_far(struct img_spec *s)
{
	s->header_off = 0x2000; /* past the first 8 KiB */
}

static void tw_truncated_segment(struct img_spec *s)
{
	s->truncate_to = SEG_OFF + 0x80; /* segment 0 needs up to SEG_OFF + 0x100 */
}

static void tw_truncated_header(struct img_spec *s)
{
	s->header_off = 0x10;
	s->truncate_to = 0x30; /* ELF header cut; the multiboot header still inside */
}

static void tw_outside_ram(struct img_spec *s)
{
	s->paddr[0] = RAM - 0x1000; /* 0x2000 bytes from 1 page before the end */
}

static void tw_above_4g(struct img_spec *s)
{
	s->paddr[0] = 0xfffff000;
}

static void tw_boot_area(struct img_spec *s)
{
	s->paddr[0] = BOOT_AREA_START - 0x1000;
}

static void tw_overlap(struct img_spec *s)
{
	s->nseg = 2;
	s->paddr[1] = 0x101000;
	s->filesz[1] = 0x10;
	s->memsz[1] = 0x10;
}

static void tw_filesz_gt_memsz(struct img_spec *s)
{
	s->filesz[0] = 0x3000;
}

static void tw_entry_outside(struct img_spec *s)
{
	s->entry = 0x80000000;
}

static void tw_kludge_bad_addr(struct img_spec *s)
{
	s->mb_flags = 1 << 16;
	s->kludge[0] = 0x1000;   /* header_addr below load_addr */
	s->kludge[1] = 0x300000;
}

static void tw_no_segments(struct img_spec *s)
{
	s->memsz[0] = 0;
	s->filesz[0] = 0;
}

static const struct bad_case bad_cases[] = {
	{ "elf64", tw_elf64, -ENOEXEC, "ELF64" },
	{ "no header", tw_no_header, -ENOEXEC, "no multiboot header" },
	{ "bad checksum", tw_bad_checksum, -ENOEXEC, "bad checksum" },
	{ "header past 8 KiB", tw_header_too_far, -ENOEXEC, "no multiboot header" },
	{ "truncated segment", tw_truncated_segment, -ENOEXEC, "truncated" },
	{ "truncated header", tw_truncated_header, -ENOEXEC, "truncated" },
	{ "outside RAM", tw_outside_ram, -E2BIG, "outside guest RAM" },
	{ "above 4 GiB", tw_above_4g, -E2BIG, "outside guest RAM" },
	{ "boot area", tw_boot_area, -ENOEXEC, "boot information area" },
	{ "overlap", tw_overlap, -ENOEXEC, "overlap" },
	{ "filesz > memsz", tw_filesz_gt_memsz, -ENOEXEC, "file size" },
	{ "entry outside", tw_entry_outside, -E2BIG, "entry point" },
	{ "kludge addresses", tw_kludge_bad_addr, -ENOEXEC, "invalid" },
	{ "no segments", tw_no_segments, -ENOEXEC, "without loadable segments" },
};

START_TEST(test_bad_image)
{
	const struct bad_case *c = &bad_cases[_i];
	struct guest_memory *mem = new_mem();
	struct img_spec s = valid_spec();
	struct loaded_image li;
	int ret;

	c->tweak(&s);
	ret = load_spec(&s, mem, &li);
	ck_assert_msg(ret == c->err, "%s: got %d, want %d (%s)", c->name, ret, c->err, li.error);
	ck_assert_msg(strstr(li.error, c->says), "%s: message '%s' lacks '%s'", c->name,
		      li.error, c->says);
	ck_assert_msg(!strchr(li.error, '\n'), "%s: one line", c->name);
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_not_elf)
{
	struct guest_memory *mem = new_mem();
	struct loaded_image li;
	static const uint8_t text[] = "#!/bin/sh\necho not a kernel\n";

	ck_assert_int_eq(loader__load(text, sizeof(text), "", mem, &li), -ENOEXEC);
	ck_assert_ptr_nonnull(strstr(li.error, "not an ELF file"));
	ck_assert_int_eq(loader__load(text, 0, "", mem, &li), -ENOEXEC);
	guest_memory__destroy(mem);
}
END_TEST

START_TEST(test_hello_guest_file)
{
	struct guest_memory *mem = new_mem();
	struct loaded_image li;

	ck_assert_int_eq(loader__load_file(HELLO_ELF, mem, &li), 0);
	ck_assert_uint_eq(li.entry, 0x100000 + 12); /* after the 12-byte multiboot header */
	ck_assert_uint_eq(strlen(li.build_id), 40);
	ck_assert_int_eq(loader__load_file("/nonexistent/image", mem, &li), -ENOENT);
	ck_assert_int_eq(loader__load_file("/", mem, &li), -EINVAL);
	guest_memory__destroy(mem);
}
END_TEST

/*
 * Image files must be regular files no larger than guest memory: a FIFO (with no writer: the
 * open must not wait for one), a directory, a character device and a file one byte larger
 * than guest RAM are refused at once with one line, nothing read into guest memory.
 */
START_TEST(test_image_file_refusals)
{
	char dir[] = "/tmp/check-vmm-image-XXXXXX", fifo[64], big[64];
	struct guest_memory *mem = new_mem();
	struct loaded_image li;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(loader__load_file(fifo, mem, &li), -EINVAL);
	ck_assert_str_eq(li.error, "not a regular file");
	ck_assert_int_eq(loader__load_file(dir, mem, &li), -EINVAL);
	ck_assert_int_eq(loader__load_file("/dev/zero", mem, &li), -EINVAL);

	/* A (sparse) file one byte larger than guest RAM, then exactly as large. */
	snprintf(big, sizeof(big), "%s/big.elf", dir);
	f = fopen(big, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(truncate(big, RAM + 1), 0);
	ck_assert_int_eq(loader__load_file(big, mem, &li), -E2BIG);
	ck_assert_ptr_nonnull(strstr(li.error, "larger than"));
	ck_assert_ptr_null(strchr(li.error, '\n'));
	ck_assert_int_eq(truncate(big, RAM), 0);
	ck_assert_int_eq(loader__load_file(big, mem, &li), -ENOEXEC); /* read, all zeros */

	unlink(big);
	unlink(fifo);
	rmdir(dir);
	guest_memory__destroy(mem);
}
END_TEST

Suite *multiboot_suite(void)
{
	Suite *s = suite_create("multiboot");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, test_valid_boot_state);
	tcase_add_test(tc, test_memory_map);
	tcase_add_test(tc, test_memory_above_4g);
	tcase_add_test(tc, test_two_segments_and_build_id);
	tcase_add_test(tc, test_entry_moves_with_segment);
	tcase_add_test(tc, test_aout_kludge);
	tcase_add_loop_test(tc, test_bad_image, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_hello_guest_file);
	tcase_add_test(tc, test_image_file_refusals);
	suite_add_tcase(s, tc);
	return s;
}
