// SPDX-License-Identifier: GPL-2.0
/*
 * test-kallsyms.c - vmcoreinfo texts and kallsyms tables, well-formed or not: a made-up
 * vmlinux whose .rodata holds the tables as scripts/kallsyms.c lays them out (one token per
 * byte value) and whose __ksymtab exports panic.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "introspect-tests.h"
#include "kallsyms.h"
#include "test-files.h"

#define TEXT 0xffffffff81000000ULL
#define KSYMTAB 0xffffffff82000000ULL
#define KSTRINGS 0xffffffff82001000ULL
#define RODATA 0xffffffff82002000ULL
#define SLIDE 0x3c00000ULL
/* The tables inside .rodata. */
#define NUM_SYMS 0x0
#define BASE 0x8
#define OFFSETS 0x10
#define TOKEN_INDEX 0x100
#define TOKEN_TABLE 0x400
#define NAMES 0x800
#define RODATA_SIZE 0x1000

struct ksym {
	const char *name;	/* with its type letter first */
	uint64_t addr;
};

static const struct ksym syms[] = {
	{ "Tpanic", TEXT + 0x200 },
	{ "tschedule.cold", TEXT + 0x300 },
	{ "tbad name", TEXT + 0x400 },		/* a space: left out */
	{ "t\x1b[2Jclear", TEXT + 0x500 },	/* a terminal escape: left out */
	{ "Dpcpu_hot", 0x40 },			/* per-CPU: absolute percpu kernels only */
};

struct image {
	uint8_t rodata[RODATA_SIZE];
	uint8_t ksymtab[12];
	char kstrings[16];
	size_t size;
	uint8_t *elf;
};

static char elf_path[] = "/tmp/vbts-kallsyms-XXXXXX";

static void w32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/*
 * The tables for the first @n symbols, offsets as a kernel with absolute per-CPU symbols has
 * them if @abs_percpu; __ksymtab says panic is at @panic.
 */
static void build(struct image *im, size_t n, bool abs_percpu, uint64_t panic)
{
	uint8_t *r = im->rodata, *names = r + NAMES;
	uint64_t base = TEXT;
	size_t i, j;

	memset(im, 0, sizeof(*im));
	w32(r + NUM_SYMS, (uint32_t)n);
	memcpy(r + BASE, &base, 8);
	/* token c is the one-byte string "c"; token 0 the empty string */
	for (i = 0; i < 256; i++) {
		uint16_t off = (uint16_t)(2 * i);

		memcpy(r + TOKEN_INDEX + 2 * i, &off, 2);
		r[TOKEN_TABLE + off] = (uint8_t)i;
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(syms[i].name);
		int32_t off;

		if (!abs_percpu)
			off = (int32_t)(uint32_t)(syms[i].addr - base);
		else if (syms[i].addr < TEXT)
			off = (int32_t)syms[i].addr;
		else
			off = (int32_t)(base - 1 - syms[i].addr);
		memcpy(r + OFFSETS + 4 * i, &off, 4);
		*names++ = (uint8_t)len;
		for (j = 0; j < len; j++)
			*names++ = (uint8_t)syms[i].name[j];
	}
	w32(im->ksymtab, (uint32_t)(panic - KSYMTAB));
	w32(im->ksymtab + 4, (uint32_t)(KSTRINGS - (KSYMTAB + 4)));
	strcpy(im->kstrings, "panic");
}

static void write_elf(struct image *im)
{
	const char *const names[] = { "__ksymtab", "__ksymtab_strings", ".rodata" };
	const uint32_t types[] = { SHT_PROGBITS, SHT_PROGBITS, SHT_PROGBITS };
	const uint64_t addrs[] = { KSYMTAB, KSTRINGS, RODATA };
	const void *const data[] = { im->ksymtab, im->kstrings, im->rodata };
	const size_t sizes[] = { sizeof(im->ksymtab), sizeof(im->kstrings), RODATA_SIZE };
	int fd = mkstemp(elf_path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	fk_write_elf(elf_path, names, types, addrs, data, sizes, 3);
	im->elf = test__slurp(elf_path, &im->size);
	unlink(elf_path);
	strcpy(elf_path, "/tmp/vbts-kallsyms-XXXXXX");
}

/* Where a guest running the image at SLIDE says the tables are. */
static struct kallsyms_where where(void)
{
	struct kallsyms_where w;

	w.addr[KALLSYMS_NAMES] = RODATA + NAMES + SLIDE;
	w.addr[KALLSYMS_NUM_SYMS] = RODATA + NUM_SYMS + SLIDE;
	w.addr[KALLSYMS_TOKEN_TABLE] = RODATA + TOKEN_TABLE + SLIDE;
	w.addr[KALLSYMS_TOKEN_INDEX] = RODATA + TOKEN_INDEX + SLIDE;
	w.addr[KALLSYMS_OFFSETS] = RODATA + OFFSETS + SLIDE;
	w.addr[KALLSYMS_RELATIVE_BASE] = RODATA + BASE + SLIDE;
	return w;
}

/* kallsyms__write_map() into a string; returns its return value. */
static int write_map(struct image *im, const struct kallsyms_where *w, char *out, size_t cap,
		     size_t *nr)
{
	char err[256] = "";
	FILE *f = fmemopen(out, cap, "w");
	int ret;

	ck_assert_ptr_nonnull(f);
	memset(out, 0, cap);
	ret = kallsyms__write_map(im->elf, im->size, w, SLIDE, f, nr, err, sizeof(err));
	fclose(f);
	ck_assert_msg(!ret || err[0], "an error without a message");
	return ret;
}

START_TEST(test_tables)
{
	struct kallsyms_where w = where();
	static struct image im;
	char out[1024];
	size_t nr = 0;

	/* relative offsets: the per-CPU symbol is not there */
	build(&im, 4, false, TEXT + 0x200);
	write_elf(&im);
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), 0);
	ck_assert_uint_eq(nr, 2);
	ck_assert_str_eq(out, "ffffffff81000200 T panic\nffffffff81000300 t schedule.cold\n");
	free(im.elf);

	/* absolute per-CPU symbols, negative offsets from the base for the rest */
	build(&im, 5, true, TEXT + 0x200);
	write_elf(&im);
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), 0);
	ck_assert_uint_eq(nr, 3);
	ck_assert_str_eq(out, "ffffffff81000200 T panic\nffffffff81000300 t schedule.cold\n"
			      "0000000000000040 D pcpu_hot\n");
	free(im.elf);
}
END_TEST

/* Tables that lie, are cut or point elsewhere: refused with -EINVAL, nothing written. */
START_TEST(test_hostile_tables)
{
	static struct image im;
	struct kallsyms_where w;
	char out[1024];
	size_t nr = 7;
	uint16_t far = 0xfff0;

	/* __ksymtab puts panic elsewhere: these are not the image's tables */
	build(&im, 2, false, TEXT + 0x280);
	write_elf(&im);
	w = where();
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	ck_assert_uint_eq(nr, 0);
	ck_assert_str_eq(out, "");
	free(im.elf);

	build(&im, 2, false, TEXT + 0x200);
	write_elf(&im);
	/* a table outside the image, below the kernel, or under the slide */
	w = where();
	w.addr[KALLSYMS_NAMES] = RODATA + RODATA_SIZE + SLIDE;
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	w = where();
	w.addr[KALLSYMS_OFFSETS] = 0x1000 + SLIDE;
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	w = where();
	w.addr[KALLSYMS_TOKEN_TABLE] = 0x10;
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	/* the offsets run past the end of .rodata */
	w = where();
	w.addr[KALLSYMS_OFFSETS] = RODATA + RODATA_SIZE - 4 + SLIDE;
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);

	/* more symbols than the names hold: the last name runs past .rodata */
	build(&im, 2, false, TEXT + 0x200);
	w32(im.rodata + NUM_SYMS, 3);
	memset(im.rodata + NAMES + 0x40, 0, RODATA_SIZE - NAMES - 0x40);
	im.rodata[RODATA_SIZE - 1] = 0x7f;
	write_elf(&im);
	w = where();
	w.addr[KALLSYMS_NAMES] = RODATA + RODATA_SIZE - 1 + SLIDE;
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);

	/* no symbol; too many */
	build(&im, 2, false, TEXT + 0x200);
	w32(im.rodata + NUM_SYMS, 0);
	write_elf(&im);
	w = where();
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);
	build(&im, 2, false, TEXT + 0x200);
	w32(im.rodata + NUM_SYMS, KALLSYMS_MAX_SYMS + 1);
	write_elf(&im);
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);

	/* a token index past .rodata */
	build(&im, 2, false, TEXT + 0x200);
	memcpy(im.rodata + TOKEN_INDEX + 2 * 'p', &far, 2);
	write_elf(&im);
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);

	/* a name longer than KALLSYMS_NAME_MAX: two-byte length of 600 tokens of "pp" */
	build(&im, 1, false, TEXT + 0x200);
	im.rodata[TOKEN_TABLE + 2 * 'p' + 1] = 'p';
	im.rodata[TOKEN_TABLE + 2 * 'p' + 2] = 0;	/* token 'q' becomes "" */
	im.rodata[NAMES] = 0x80 | (600 & 0x7f);
	im.rodata[NAMES + 1] = 600 >> 7;
	memset(im.rodata + NAMES + 2, 'p', RODATA_SIZE - NAMES - 2);
	write_elf(&im);
	ck_assert_int_eq(write_map(&im, &w, out, sizeof(out), &nr), -EINVAL);
	free(im.elf);

	/* not an ELF file */
	ck_assert_int_eq(kallsyms__write_map((const uint8_t *)"junk", 4, &w, SLIDE, stdout, &nr,
					     (char[64]){ 0 }, 64), -ENOEXEC);
}
END_TEST

START_TEST(test_vmcoreinfo)
{
	static const char good[] =
		"OSRELEASE=6.12.117+deb12-amd64\nBUILD-ID=0011\nPAGESIZE=4096\n"
		"SYMBOL(kallsyms_names)=ffffffff82a00000\n"
		"SYMBOL(kallsyms_num_syms)=ffffffff82a00010\n"
		"SYMBOL(kallsyms_token_table)=ffffffff82a00020\n"
		"SYMBOL(kallsyms_token_index)=ffffffff82a00030\n"
		"SYMBOL(kallsyms_offsets)=ffffffff82a00040\n"
		"SYMBOL(kallsyms_relative_base)=FFFFFFFF82A00050\n"
		"SYMBOL(kallsyms_names_extra)=1\n"
		"KERNELOFFSET=3c00000\n";
	struct kallsyms_where w;
	char buf[KALLSYMS_VMCOREINFO_MAX + 128];

	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(good, sizeof(good), &w), 0);
	ck_assert_uint_eq(w.addr[KALLSYMS_NAMES], 0xffffffff82a00000ULL);
	ck_assert_uint_eq(w.addr[KALLSYMS_NUM_SYMS], 0xffffffff82a00010ULL);
	ck_assert_uint_eq(w.addr[KALLSYMS_RELATIVE_BASE], 0xffffffff82a00050ULL);

	/* a table missing, named twice, malformed, outside the kernel's half */
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(good, 120, &w), -ENOENT);
	snprintf(buf, sizeof(buf), "%sSYMBOL(kallsyms_names)=ffffffff82a00000\n", good);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, strlen(buf), &w), -EINVAL);
	snprintf(buf, sizeof(buf), "SYMBOL(kallsyms_num_syms)=ffffffff82g00010\n%s", good);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, strlen(buf), &w), -EINVAL);
	snprintf(buf, sizeof(buf), "SYMBOL(kallsyms_num_syms)=\n%s", good);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, strlen(buf), &w), -EINVAL);
	snprintf(buf, sizeof(buf), "SYMBOL(kallsyms_offsets)=1ffffffff82a00040\n%s", good);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, strlen(buf), &w), -EINVAL);
	snprintf(buf, sizeof(buf), "SYMBOL(kallsyms_offsets)=82a00040\n%s", good);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, strlen(buf), &w), -EINVAL);

	/* read up to the first NUL, and no further than KALLSYMS_VMCOREINFO_MAX */
	memcpy(buf, good, sizeof(good));
	buf[40] = '\0';
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, sizeof(good), &w), -ENOENT);
	memset(buf, '\n', sizeof(buf));
	/* all of it but the last table's line, whose first 3 bytes come before the limit */
	memcpy(buf + KALLSYMS_VMCOREINFO_MAX + 97 - (sizeof(good) - 1), good, sizeof(good) - 1);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, sizeof(buf), &w), -ENOENT);
	memcpy(buf + KALLSYMS_VMCOREINFO_MAX - (sizeof(good) - 1), good, sizeof(good) - 1);
	ck_assert_int_eq(kallsyms__parse_vmcoreinfo(buf, sizeof(buf), &w), 0);
}
END_TEST

Suite *kallsyms_suite(void)
{
	Suite *s = suite_create("kallsyms");
	TCase *tc = tcase_create("kallsyms");

	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_hostile_tables);
	tcase_add_test(tc, test_vmcoreinfo);
	suite_add_tcase(s, tc);
	return s;
}
