// SPDX-License-Identifier: GPL-2.0
/*
 * test-symbols.c - the symbolizer on real ELF objects built for the test (symtest.S, as
 * ELF64 and ELF32), and the process map on good and bad events.jsonl lines.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotator.h"
#include "decoder-test.h"
#include "escape.h"
#include "export.h"
#include "procmap.h"
#include "symbol-files.h"
#include "symbols.h"
#include "test-files.h"

static const struct {
	uint64_t addr;
	const char *name;       /* NULL: no symbol */
	uint64_t offset;
} lookups[] = {
	{ 0x00, "main", 0 },
	{ 0x13, "main", 0x13 },
	{ 0x3f, "main", 0x3f },
	{ 0x40, "parse", 0 },
	{ 0x6f, "parse", 0x2f },
	{ 0x70, "deref", 0 },
	{ 0x7f, "deref", 0xf },
	{ 0x80, NULL, 0 },              /* padding after a sized symbol */
	{ 0x8f, NULL, 0 },
	{ 0x90, "isr_entry", 0 },
	{ 0xaf, "isr_entry", 0x1f },    /* a label reaches up to the next symbol */
	{ 0xb0, "isr_common", 0 },
	{ 0xbf, "isr_common", 0xf },
	{ 0xc0, NULL, 0 },              /* past the end of .text */
	{ 0x100000, NULL, 0 },
	{ UINT64_MAX, NULL, 0 },
};

static void check_lookups(const char *path)
{
	struct symbols *s = symbols__load(path);
	struct symbol_hit hit;

	ck_assert_msg(s, "%s: %s", path, strerror(errno));
	ck_assert_uint_eq(symbols__count(s), 5); /* counter is data */
	ck_assert_str_eq(symbols__build_id(s), "deadbeef01020304");
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		int ret = symbols__lookup(s, lookups[i].addr, &hit);

		if (!lookups[i].name) {
			ck_assert_msg(ret == -ENOENT, "%#llx resolved to %s",
				      (unsigned long long)lookups[i].addr, ret ? "?" : hit.name);
			continue;
		}
		ck_assert_msg(!ret, "%#llx: no symbol", (unsigned long long)lookups[i].addr);
		ck_assert_str_eq(hit.name, lookups[i].name);
		ck_assert_uint_eq(hit.offset, lookups[i].offset);
	}
	symbols__free(s);
}

/* Source lines from the assembler's DWARF: the line of each block's instruction. */
static void check_lines(const char *path)
{
	static const struct {
		uint64_t addr;
		int line;       /* 0: none */
	} want[] = {
		{ 0x00, 12 }, { 0x3f, 12 }, { 0x40, 20 }, { 0x75, 27 }, { 0x85, 32 },
		{ 0x90, 38 }, { 0xb5, 43 }, { 0x1000, 0 },
	};
	struct symbols *s = symbols__load(path);
	const char *file;
	int line;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int ret = symbols__line(s, want[i].addr, &file, &line);

		if (!want[i].line) {
			ck_assert_int_eq(ret, -ENOENT);
			continue;
		}
		ck_assert_msg(!ret, "%#llx: no line", (unsigned long long)want[i].addr);
		ck_assert_str_eq(file, "symtest.S");
		ck_assert_int_eq(line, want[i].line);
	}
	symbols__free(s);
}

START_TEST(test_symbols_elf64)
{
	check_lookups(SYMTEST64);
	check_lines(SYMTEST64);
}
END_TEST

START_TEST(test_symbols_elf32)
{
	check_lookups(SYMTEST32);
	check_lines(SYMTEST32);
}
END_TEST

/* An image stripped of its symbol table (and DWARF): loads, and knows no address. */
START_TEST(test_symbols_stripped)
{
	struct symbols *s = symbols__load(SYMTEST_STRIPPED);
	struct symbol_hit hit;
	const char *file;
	int line;

	ck_assert_msg(s, "%s: %s", SYMTEST_STRIPPED, strerror(errno));
	ck_assert_uint_eq(symbols__count(s), 0);
	ck_assert_str_eq(symbols__build_id(s), "deadbeef01020304");
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		ck_assert_int_eq(symbols__lookup(s, lookups[i].addr, &hit), -ENOENT);
		ck_assert_int_eq(symbols__line(s, lookups[i].addr, &file, &line), -ENOENT);
	}
	symbols__free(s);
}
END_TEST

/* Of the symbols of one address, the preferred one that covers the address names it. */
START_TEST(test_symbols_aliases)
{
	static const struct {
		uint64_t addr;
		const char *name;
	} want[] = {
		{ 0x0, "sized" }, { 0x3, "sized" }, { 0x4, "label_at_0" }, { 0xf, "label_at_0" },
		{ 0x10, "a_label" }, { 0x1f, "a_label" },
	};
	struct symbols *s = symbols__load(SYMALIAS);
	struct symbol_hit hit;

	ck_assert_msg(s, "%s: %s", SYMALIAS, strerror(errno));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_msg(!symbols__lookup(s, want[i].addr, &hit), "%#llx: no symbol",
			      (unsigned long long)want[i].addr);
		ck_assert_msg(!strcmp(hit.name, want[i].name), "%#llx: %s, want %s",
			      (unsigned long long)want[i].addr, hit.name, want[i].name);
	}
	ck_assert_int_eq(symbols__lookup(s, 0x20, &hit), -ENOENT);
	symbols__free(s);
}
END_TEST

START_TEST(test_symbols_errors)
{
	char path[] = "/tmp/vbts-notelf-XXXXXX";
	int fd;

	ck_assert_ptr_null(symbols__load("/nonexistent/file"));
	ck_assert_int_eq(errno, ENOENT);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "not an elf file", 15), 15);
	close(fd);
	ck_assert_ptr_null(symbols__load(path));
	ck_assert_int_eq(errno, ENOEXEC);
	unlink(path);
	symbols__free(NULL);
}
END_TEST

/* ---- corrupted images ----------------------------------------------------------------------- */

/* An ELF file in memory, ELF32 or ELF64 (little endian), for patching header fields. */
struct elf_image {
	unsigned char *buf;
	size_t len;
	bool is64;
};

enum sh_field { SH_TYPE, SH_FLAGS, SH_OFFSET, SH_SIZE, SH_ADDR };

static void image_read(struct elf_image *im, const char *path)
{
	im->buf = test__slurp(path, &im->len);
	ck_assert_uint_gt(im->len, sizeof(Elf64_Ehdr));
	ck_assert(!memcmp(im->buf, ELFMAG, SELFMAG) && im->buf[EI_DATA] == ELFDATA2LSB);
	im->is64 = im->buf[EI_CLASS] == ELFCLASS64;
}

static size_t field_off(const struct elf_image *im, enum sh_field f)
{
	static const size_t off64[] = { offsetof(Elf64_Shdr, sh_type),
		offsetof(Elf64_Shdr, sh_flags), offsetof(Elf64_Shdr, sh_offset),
		offsetof(Elf64_Shdr, sh_size), offsetof(Elf64_Shdr, sh_addr) };
	static const size_t off32[] = { offsetof(Elf32_Shdr, sh_type),
		offsetof(Elf32_Shdr, sh_flags), offsetof(Elf32_Shdr, sh_offset),
		offsetof(Elf32_Shdr, sh_size), offsetof(Elf32_Shdr, sh_addr) };

	return im->is64 ? off64[f] : off32[f];
}

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* The file offset of the section header of @name (it must exist). */
static size_t shdr_at(const struct elf_image *im, const char *name)
{
	size_t shoff, entsize, num, strndx, stroff;

	if (im->is64) {
		shoff = le(im->buf + offsetof(Elf64_Ehdr, e_shoff), 8);
		entsize = le(im->buf + offsetof(Elf64_Ehdr, e_shentsize), 2);
		num = le(im->buf + offsetof(Elf64_Ehdr, e_shnum), 2);
		strndx = le(im->buf + offsetof(Elf64_Ehdr, e_shstrndx), 2);
		stroff = le(im->buf + shoff + strndx * entsize + offsetof(Elf64_Shdr, sh_offset), 8);
	} else {
		shoff = le(im->buf + offsetof(Elf32_Ehdr, e_shoff), 4);
		entsize = le(im->buf + offsetof(Elf32_Ehdr, e_shentsize), 2);
		num = le(im->buf + offsetof(Elf32_Ehdr, e_shnum), 2);
		strndx = le(im->buf + offsetof(Elf32_Ehdr, e_shstrndx), 2);
		stroff = le(im->buf + shoff + strndx * entsize + offsetof(Elf32_Shdr, sh_offset), 4);
	}
	for (size_t i = 1; i < num; i++) {
		size_t at = shoff + i * entsize;

		if (!strcmp((const char *)im->buf + stroff + le(im->buf + at, 4), name))
			return at;
	}
	ck_abort_msg("no section %s", name);
	return 0;
}

static uint64_t shdr_get(const struct elf_image *im, const char *name, enum sh_field f)
{
	size_t width = im->is64 && f != SH_TYPE ? 8 : 4;

	return le(im->buf + shdr_at(im, name) + field_off(im, f), width);
}

/* Four bytes at @off (the low half of a 64-bit field). */
static void put32(struct elf_image *im, size_t off, uint32_t v)
{
	ck_assert_uint_le(off + 4, im->len);
	for (int i = 0; i < 4; i++)
		im->buf[off + i] = (unsigned char)(v >> 8 * i);
}

static void image_write_temp(const struct elf_image *im, char *path)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, im->buf, im->len), (ssize_t)im->len);
	close(fd);
}

enum patch_kind {
	PATCH_SET,              /* field = v */
	PATCH_ADD,              /* field += v */
	PATCH_OR,               /* field |= v */
	PATCH_FILE_END,         /* field = file size - v */
	PATCH_OFFSET_OF,        /* field = sh_offset of section @other */
	PATCH_SHOFF,            /* field = e_shoff (the section header table) */
	PATCH_CHDR_TYPE,        /* ch_type of the compressed section = v */
	PATCH_CHDR_SIZE,        /* ch_size of the compressed section = v */
};

/* Each a 4-byte change of one header of a real image with DWARF 5. */
static const struct {
	const char *image;
	const char *section;
	enum sh_field field;
	enum patch_kind kind;
	uint32_t v;
	const char *other;
	const char *problem;    /* in symbols__dwarf_problem() */
} corruptions[] = {
	/* String sections cut short: their last string runs off the end. */
	{ DWARF_IMAGE, ".debug_line_str", SH_SIZE, PATCH_SET, 1, NULL, "not NUL-terminated" },
	{ DWARF_IMAGE, ".debug_line_str", SH_SIZE, PATCH_ADD, (uint32_t)-1, NULL,
	  "(.debug_line_str): string section not NUL-terminated" },
	{ DWARF_IMAGE, ".debug_str", SH_SIZE, PATCH_SET, 3, NULL, "(.debug_str): string section" },
	/* Sections moved onto others, onto the headers, or out of the file. */
	{ DWARF_IMAGE, ".debug_line_str", SH_OFFSET, PATCH_ADD, 1, NULL, "overlaps" },
	{ DWARF_IMAGE, ".debug_line_str", SH_OFFSET, PATCH_OFFSET_OF, 0, ".debug_line",
	  "overlaps" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_OFFSET, PATCH_OFFSET_OF, 0, ".debug_loclists",
	  "(.debug_rnglists)" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_OFFSET, PATCH_SET, 0, NULL,
	  "(.debug_rnglists) overlaps the ELF header" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_OFFSET, PATCH_SHOFF, 0, NULL,
	  "the section header table" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_OFFSET, PATCH_FILE_END, 1, NULL,
	  "lie outside the file" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_SIZE, PATCH_SET, 0xffffffff, NULL,
	  "lie outside the file" },
	{ DWARF_IMAGE, ".debug_line", SH_SIZE, PATCH_SET, 0x7fffffff, NULL, "outside the file" },
	/* Claimed to be compressed: the header is the section's own bytes. */
	{ DWARF_IMAGE, ".debug_line_str", SH_FLAGS, PATCH_OR, SHF_COMPRESSED, NULL,
	  "unknown compression type" },
	{ DWARF_IMAGE, ".debug_rnglists", SH_FLAGS, PATCH_OR, SHF_COMPRESSED, NULL,
	  "(.debug_rnglists): " },
	/* Compressed sections whose header lies about the type or the size. */
	{ DWARF_IMAGE_Z, ".debug_line_str", 0, PATCH_CHDR_TYPE, 77, NULL,
	  "(.debug_line_str): unknown compression type 77" },
	{ DWARF_IMAGE_Z, ".debug_line", 0, PATCH_CHDR_SIZE, 0x7fffffff, NULL,
	  "(.debug_line): implausible size 2147483647 once decompressed" },
	{ DWARF_IMAGE_Z, ".debug_line_str", 0, PATCH_CHDR_SIZE, 1, NULL,
	  "(.debug_line_str): cannot be decompressed" },
};

static void corrupt_image(struct elf_image *im, size_t c)
{
	size_t at = shdr_at(im, corruptions[c].section), off = at + field_off(im,
									     corruptions[c].field);
	uint32_t old = (uint32_t)le(im->buf + off, 4), v = corruptions[c].v;
	size_t chdr = (size_t)shdr_get(im, corruptions[c].section, SH_OFFSET);

	switch (corruptions[c].kind) {
	case PATCH_SET:
		break;
	case PATCH_ADD:
		v += old;
		break;
	case PATCH_OR:
		v |= old;
		break;
	case PATCH_FILE_END:
		v = (uint32_t)im->len - v;
		break;
	case PATCH_OFFSET_OF:
		v = (uint32_t)shdr_get(im, corruptions[c].other, SH_OFFSET);
		break;
	case PATCH_SHOFF:
		v = (uint32_t)(im->is64 ? le(im->buf + offsetof(Elf64_Ehdr, e_shoff), 8) :
					  le(im->buf + offsetof(Elf32_Ehdr, e_shoff), 4));
		break;
	case PATCH_CHDR_TYPE:
		ck_assert(shdr_get(im, corruptions[c].section, SH_FLAGS) & SHF_COMPRESSED);
		off = chdr + (im->is64 ? offsetof(Elf64_Chdr, ch_type) :
					 offsetof(Elf32_Chdr, ch_type));
		break;
	case PATCH_CHDR_SIZE:
		ck_assert(shdr_get(im, corruptions[c].section, SH_FLAGS) & SHF_COMPRESSED);
		off = chdr + (im->is64 ? offsetof(Elf64_Chdr, ch_size) :
					 offsetof(Elf32_Chdr, ch_size));
		break;
	}
	put32(im, off, v);
}

/*
 * A corrupted copy of a real image loads with the same symbols as the original and without
 * source lines (the original has them at the same addresses), and nothing reads out of
 * bounds: run under valgrind (meson test --setup valgrind) and ASan builds as well.
 */
START_TEST(test_symbols_corrupted_dwarf)
{
	char path[] = "/tmp/vbts-corrupt-XXXXXX";
	struct elf_image im;
	struct symbols *good, *bad;
	uint64_t text, text_size;
	size_t with_lines = 0;

	image_read(&im, corruptions[_i].image);
	text = shdr_get(&im, ".text", SH_ADDR);
	text_size = shdr_get(&im, ".text", SH_SIZE);
	good = symbols__load(corruptions[_i].image);
	ck_assert_ptr_nonnull(good);
	corrupt_image(&im, (size_t)_i);
	image_write_temp(&im, path);
	bad = symbols__load(path);
	ck_assert_msg(bad, "%s: %s", path, strerror(errno));
	ck_assert_ptr_null(symbols__dwarf_problem(good));
	ck_assert_msg(symbols__dwarf_problem(bad) &&
		      strstr(symbols__dwarf_problem(bad), corruptions[_i].problem),
		      "problem '%s', want '%s'", symbols__dwarf_problem(bad),
		      corruptions[_i].problem);
	ck_assert_uint_eq(symbols__count(bad), symbols__count(good));
	ck_assert_uint_gt(symbols__count(bad), 10);
	for (uint64_t a = text; a < text + text_size; a += 3) {
		struct symbol_hit hg, hb;
		const char *file;
		int line, rg = symbols__lookup(good, a, &hg), rb = symbols__lookup(bad, a, &hb);

		ck_assert_int_eq(rb, rg);
		if (!rg) {
			ck_assert_str_eq(hb.name, hg.name);
			ck_assert_uint_eq(hb.offset, hg.offset);
		}
		with_lines += !symbols__line(good, a, &file, &line);
		ck_assert_msg(symbols__line(bad, a, &file, &line) == -ENOENT,
			      "%#llx: a source line from a corrupted image",
			      (unsigned long long)a);
	}
	ck_assert_uint_gt(with_lines, text_size / 3 / 2);
	symbols__free(bad);
	symbols__free(good);
	unlink(path);
	free(im.buf);
}
END_TEST

/* The compressed copy gives the same source lines as the original. */
START_TEST(test_symbols_compressed_dwarf)
{
	struct symbols *plain = symbols__load(DWARF_IMAGE), *z = symbols__load(DWARF_IMAGE_Z);
	struct elf_image im;
	uint64_t text, text_size;
	size_t with_lines = 0;

	ck_assert(plain && z);
	image_read(&im, DWARF_IMAGE_Z);
	ck_assert(shdr_get(&im, ".debug_info", SH_FLAGS) & SHF_COMPRESSED);
	text = shdr_get(&im, ".text", SH_ADDR);
	text_size = shdr_get(&im, ".text", SH_SIZE);
	for (uint64_t a = text; a < text + text_size; a++) {
		const char *fp, *fz;
		int lp, lz, rp = symbols__line(plain, a, &fp, &lp), rz = symbols__line(z, a, &fz, &lz);

		ck_assert_int_eq(rz, rp);
		if (rp)
			continue;
		ck_assert_str_eq(fz, fp);
		ck_assert_int_eq(lz, lp);
		with_lines++;
	}
	ck_assert_uint_gt(with_lines, text_size / 2);
	symbols__free(plain);
	symbols__free(z);
	free(im.buf);
}
END_TEST

/*
 * A symbol name longer than one reservation of the output buffer is written whole, in text
 * (jsonl carries no symbols), and an address no symbol covers stays [unknown] beside it.
 */
START_TEST(test_long_symbol_name)
{
	struct symbolizer *sz = symbolizer__new();
	struct symbols *image = symbols__load(SYMLONG);
	struct exporter_options eo = { .format = EXPORT_TEXT };
	struct decoded_record r = {
		.type = DECODED_BRANCH, .vcpu = 1, .seq = 7, .from = 0x3, .to = 0x40,
		.from_valid = true, .to_valid = true,
	};
	char name[8192 + 16], *want, *buf = NULL;
	struct exporter *e;
	size_t len = 0;

	ck_assert(sz && image);
	strcpy(name, "long_symbol");
	for (int i = 0; i < 1024; i++)
		strcat(name, "_abcdefg");
	symbolizer__set_image(sz, image);
	eo.symbolizer = sz;
	eo.out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(eo.out);
	e = exporter__new(&eo);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(exporter__record(e, &r), 0);
	r.from = 0x40;
	r.to = 0xf;
	ck_assert_int_eq(exporter__record(e, &r), 0);
	ck_assert_int_eq(exporter__flush(e), 0);
	exporter__free(e);
	fclose(eo.out);
	ck_assert_int_ge(asprintf(&want,
				  "  vcpu1 cpl? -                0x3 %s+0x3  =>  0x40 [unknown]\n"
				  "  vcpu1 cpl? -                0x40 [unknown]  =>  0xf %s+0xf\n",
				  name, name), 0);
	ck_assert_msg(!strcmp(buf, want), "got %zu bytes, not %zu", strlen(buf), strlen(want));
	free(want);
	free(buf);
	symbolizer__free(sz);
}
END_TEST

/*
 * The annotator's memoized answers are the symbolizer's: random addresses around the text of a
 * real image (twice as many as the cache holds, so that answers are replaced), with and
 * without source lines, the lines asked for after the symbol was cached and before.
 */
START_TEST(test_annotator_reference)
{
	struct symbolizer *sz = symbolizer__new();
	struct symbols *image = symbols__load(DWARF_IMAGE);
	uint64_t rng = 0x5eed, text, span = 2 * ANNOTATOR_ADDR_CACHE;
	size_t named = 0, with_lines = 0;
	struct annotator *a;
	struct elf_image im;

	ck_assert(sz && image);
	symbolizer__set_image(sz, image);
	a = annotator__new(NULL, sz);
	ck_assert_ptr_nonnull(a);
	image_read(&im, DWARF_IMAGE);
	text = shdr_get(&im, ".text", SH_ADDR);
	for (unsigned int i = 0; i < 400000; i++) {
		/* Mostly near the text, where repeats hit the cache. */
		uint64_t r = (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17);
		uint64_t addr = i % 4 ? text - 0x100 + r % 0x2000 : text - span / 4 + r % span;
		bool lines = r >> 63;
		const struct annotator_addr *got = annotator__addr(a, NULL, addr, lines);
		struct symbol_hit hit;
		const char *file;
		int line, ret;

		ck_assert_ptr_nonnull(got);
		ret = symbolizer__lookup(sz, NULL, addr, &hit);
		if (got->addr != addr || (ret == 0) != (got->name != NULL) ||
		    (!ret && (strcmp(got->name, hit.name) || got->offset != hit.offset ||
			      strlen(hit.name) != got->name_text_len)))
			ck_abort_msg("%#" PRIx64 ": %s+%#" PRIx64 ", not %s", addr,
				     got->name ? got->name : "(none)", got->offset,
				     ret ? "(none)" : hit.name);
		named += !ret;
		if (!lines)
			continue;
		ret = symbolizer__line(sz, NULL, addr, &file, &line);
		if ((ret == 0) != (got->file != NULL) ||
		    (!ret && (strcmp(got->file, file) || got->line != line)))
			ck_abort_msg("%#" PRIx64 ": line %s:%d, not %s:%d", addr,
				     got->file ? got->file : "(none)", got->line,
				     ret ? "(none)" : file, ret ? 0 : line);
		with_lines += !ret;
	}
	ck_assert_uint_gt(named, 1000);
	ck_assert_uint_gt(with_lines, 1000);
	annotator__free(a);
	symbolizer__free(sz);
	free(im.buf);
}
END_TEST

/* ---- text cache ---------------------------------------------------------------------------- */

/*
 * The text written after an address, from the symbolizer alone (no cache): " name+0xoff" with
 * the name escaped, " [unknown]", and with @lines " (file:line)" when a table has its line.
 */
static void reference_text(const struct symbolizer *sz, const struct procmap_task *t,
			   uint64_t addr, bool lines, char *out, size_t size)
{
	char esc[4 * 8192 + 1];
	struct symbol_hit hit;
	const char *file;
	size_t n;
	int line;

	n = (size_t)snprintf(out, size, "0x%" PRIx64, addr);
	if (symbolizer__lookup(sz, t, addr, &hit)) {
		n += (size_t)snprintf(out + n, size - n, " [unknown]");
	} else {
		escape__buf(esc, sizeof(esc), hit.name, strlen(hit.name), 0);
		n += (size_t)snprintf(out + n, size - n, " %s+0x%" PRIx64, esc, hit.offset);
	}
	if (lines && !symbolizer__line(sz, t, addr, &file, &line)) {
		escape__buf(esc, sizeof(esc), file, strlen(file), 0);
		snprintf(out + n, size - n, " (%s:%d)", esc, line);
	}
}

/* A System.map whose names a guest chose: controls, escapes, bytes that are not UTF-8, long. */
static const char *const hostile_names[] = {
	"plain_kernel_fn", "red\x1b[31mname", "back\\slash", "ctl\x01\x02" "bell\x07",
	"\xff\xfe\x80", "du\x7f" "el",
	"a_kernel_function_whose_name_is_too_long_for_a_text_cache_entry",
	"short", "k",
};

#define HOSTILE_BASE 0xffffffff81000000ULL
/* The text of LINUX_STATIC. */
#define LINUX_BASE 0x10001000ULL

static void write_hostile_map(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < sizeof(hostile_names) / sizeof(hostile_names[0]); i++)
		fprintf(f, "%016llx T %s\n", (unsigned long long)(HOSTILE_BASE + 0x100 * i),
			hostile_names[i]);
	fclose(f);
}

/*
 * A symbolizer where one user address means different things in different tasks (a task
 * bound to a program by its name, one bound to nothing: two scopes), kernel addresses name
 * hostile System.map symbols, and the rest falls to a real image with DWARF lines.
 */
static struct symbolizer *scoped_symbolizer(struct procmap **pm, struct symbol_files **sf,
					    char *map_path)
{
	struct symbolizer *sz = symbolizer__new();
	struct system_map_stats st;
	struct symbols *image = symbols__load(DWARF_IMAGE), *map;
	char err[256];
	int fd = mkstemp(map_path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_hostile_map(map_path);
	map = symbols__load_system_map(map_path, &st, err, sizeof(err));
	ck_assert_msg(map, "%s", err);
	ck_assert(sz && image);
	symbolizer__set_image(sz, image);
	symbolizer__set_kernel(sz, NULL, map, 0);
	*pm = procmap__new();
	*sf = symbol_files__new(NULL, NULL);
	ck_assert(*pm && *sf);
	ck_assert_int_eq(symbol_files__add(*sf, LINUX_STATIC, err, sizeof(err)), 0);
	ck_assert_int_eq(procmap__add(*pm, 1, "vbts-linux-static", 0x1000, 0), 0);
	ck_assert_int_eq(procmap__add(*pm, 2, "other", 0x2000, 0), 0);
	ck_assert_int_eq(symbolizer__bind(sz, *sf, *pm, NULL, NULL), 0);
	return sz;
}

/* Addresses of every kind: the bound objects', the image's text, hostile kernel names, none. */
static uint64_t pick_addr(uint64_t r, uint64_t text)
{
	switch (r % 5) {
	case 0:
		return LINUX_BASE + (r >> 8) % 0x50;                     /* the bound program */
	case 1:
	case 2:
		return text + (r >> 8) % 0x3000;                          /* image, lines */
	case 3:
		return HOSTILE_BASE + (r >> 8) % (0x100 * 10);            /* hostile names */
	default:
		return (r >> 8) % 2 ? UINT64_MAX - (r >> 16) % 64 : 0x7fff0000 + (r >> 16) % 64;
	}
}

/*
 * The annotator's cached texts are the symbolizer's, formatted: random addresses of two
 * scopes, with and without lines, on caches of the default size and on tiny ones (entries
 * replaced all the time, collisions on every probe), each checked against reference_text().
 * A cache that answered with the entry of another address, scope, or with a text made without
 * the lines, would fail here.
 */
START_TEST(test_annotator_text_reference)
{
	static const unsigned int bits[] = { 0, 1, 3 };
	char map_path[] = "/tmp/vbts-hostile-map-XXXXXX";
	char want[8192 + 256], got[8192 + 256];
	uint64_t text, replaced_text = 0;
	struct symbol_files *sf;
	struct procmap *pm;
	struct symbolizer *sz = scoped_symbolizer(&pm, &sf, map_path);
	const struct procmap_task *tasks[3] = { NULL, procmap__task(pm, 0),
						procmap__task(pm, 1) };
	struct elf_image im;
	size_t cached = 0, long_texts = 0, scoped = 0;

	image_read(&im, DWARF_IMAGE);
	text = shdr_get(&im, ".text", SH_ADDR);
	ck_assert(tasks[1] && tasks[2]);
	/* The two scopes name an address differently. */
	reference_text(sz, tasks[1], LINUX_BASE + 0x20, false, want, sizeof(want));
	reference_text(sz, tasks[2], LINUX_BASE + 0x20, false, got, sizeof(got));
	ck_assert_str_eq(want, "0x10001020 work+0x0");
	ck_assert_str_ne(want, got);
	for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
		struct annotator *a = annotator__new_sized(pm, sz, bits[b], bits[b]);
		uint64_t rng = 0x7e57 + b;

		ck_assert_ptr_nonnull(a);
		for (unsigned int i = 0; i < 200000; i++) {
			uint64_t r = (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17);
			/* A small working set, revisited: hits, and on tiny caches replacements. */
			uint64_t addr = pick_addr(i % 3 ? r % 96 * 0x9e3779b97f4a7c15ULL >> 1 : r,
						  text);
			const struct procmap_task *t = tasks[(r >> 40) % 3];
			bool lines = (r >> 50) & 1;
			const char *s;
			size_t len;
			int ret;

			ret = annotator__addr_text(a, t, addr, lines, &s, &len);
			ck_assert(ret == 0 || ret == -E2BIG);
			reference_text(sz, t, addr, lines, want, sizeof(want));
			if (ret == -E2BIG) {
				/* Too long for an entry: the text output formats this answer. */
				const struct annotator_addr *x = annotator__addr(a, t, addr, lines);

				ck_assert_ptr_nonnull(x);
				len = (size_t)snprintf(got, sizeof(got), "0x%" PRIx64, addr);
				if (x->name)
					len += (size_t)snprintf(got + len, sizeof(got) - len,
								" %.*s+0x%" PRIx64,
								(int)x->name_text_len,
								x->name_text, x->offset);
				else
					len += (size_t)snprintf(got + len, sizeof(got) - len,
								" [unknown]");
				if (lines && x->file)
					snprintf(got + len, sizeof(got) - len, " (%.*s:%d)",
						 (int)x->file_text_len, x->file_text, x->line);
				long_texts++;
			} else {
				snprintf(got, sizeof(got), "0x%" PRIx64 "%.*s", addr, (int)len, s);
				cached++;
			}
			if (strcmp(got, want))
				ck_abort_msg("cache 2^%u, task %zu, %s: \"%s\", not \"%s\"",
					     bits[b], (size_t)((r >> 40) % 3),
					     lines ? "lines" : "symbol", got, want);
			scoped += t && addr >= LINUX_BASE && addr < LINUX_BASE + 0x50;
			replaced_text += addr >= text && addr < text + 0x3000 && lines;
		}
		annotator__free(a);
	}
	ck_assert_uint_gt(cached, 100000);
	ck_assert_uint_gt(long_texts, 100);
	ck_assert_uint_gt(scoped, 10000);
	ck_assert_uint_gt(replaced_text, 10000);
	symbolizer__free(sz);
	symbol_files__free(sf);
	procmap__free(pm);
	unlink(map_path);
	free(im.buf);
}
END_TEST

/*
 * Symbolized text and --lines output, record by record, are the uncached answers of the
 * symbolizer formatted (reference_text()), with caches of the default size and with tiny ones
 * (so that entries are replaced and sets collide while records are held back for prefetching),
 * for branches of two tasks of different scopes and no task, hostile kernel names, and
 * addresses without a symbol.
 */
START_TEST(test_text_output_cache_reference)
{
	static const unsigned int bits[] = { 0, 1, 2 };
	char map_path[] = "/tmp/vbts-hostile-map-XXXXXX";
	static char want[8192 * 4];
	char from[8192 + 256], to[8192 + 256];
	struct symbol_files *sf;
	struct procmap *pm;
	struct symbolizer *sz = scoped_symbolizer(&pm, &sf, map_path);
	static const char *const labels[] = { "-", "vbts-linux-static[1]", "other[2]" };
	static const uint64_t cr3s[] = { 0, 0x1000, 0x2000 };
	struct elf_image im;
	uint64_t text;

	image_read(&im, DWARF_IMAGE);
	text = shdr_get(&im, ".text", SH_ADDR);
	for (size_t b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
		for (int lines = 0; lines < 2; lines++) {
			struct exporter_options eo = {
				.format = EXPORT_TEXT, .procmap = pm, .symbolizer = sz,
				.lines = lines, .cache_bits = bits[b],
			};
			uint64_t rng = 0xca5e + b * 2 + (uint64_t)lines;
			char *buf = NULL, *line, *next;
			struct exporter *e;
			size_t len = 0, n = 0;
			unsigned int records = 20000;

			eo.out = open_memstream(&buf, &len);
			ck_assert_ptr_nonnull(eo.out);
			e = exporter__new(&eo);
			ck_assert_ptr_nonnull(e);
			for (unsigned int i = 0; i < records; i++) {
				uint64_t r = (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17);
				unsigned int k = (unsigned int)((r >> 40) % 3);
				struct decoded_record rec = {
					.type = DECODED_BRANCH, .vcpu = 0, .seq = i,
					.from = pick_addr(r % 64 * 0x9e3779b97f4a7c15ULL >> 1,
							  text),
					.to = pick_addr(r, text), .from_valid = true,
					.to_valid = true, .cr3 = cr3s[k], .cr3_valid = k != 0,
				};

				ck_assert_int_eq(exporter__record(e, &rec), 0);
			}
			ck_assert_int_eq(exporter__flush(e), 0);
			exporter__free(e);
			fclose(eo.out);

			/* The same records again, formatted from the symbolizer alone. */
			rng = 0xca5e + b * 2 + (uint64_t)lines;
			line = buf;
			for (unsigned int i = 0; i < records; i++, line = next) {
				uint64_t r = (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17);
				unsigned int k = (unsigned int)((r >> 40) % 3);
				const struct procmap_task *t = k ? procmap__task(pm, k - 1) : NULL;
				uint64_t fa = pick_addr(r % 64 * 0x9e3779b97f4a7c15ULL >> 1, text);

				reference_text(sz, t, fa, lines, from, sizeof(from));
				reference_text(sz, t, pick_addr(r, text), lines, to, sizeof(to));
				snprintf(want, sizeof(want), "  vcpu0 cpl? %-16s %s  =>  %s\n",
					 labels[k], from, to);
				next = strchr(line, '\n');
				ck_assert_ptr_nonnull(next);
				next++;
				if ((size_t)(next - line) != strlen(want) ||
				    memcmp(line, want, strlen(want)))
					ck_abort_msg("cache 2^%u%s, record %u: \"%.*s\", "
						     "not \"%s\"", bits[b],
						     lines ? " --lines" : "", i,
						     (int)(next - line - 1), line, want);
				n++;
			}
			ck_assert_str_eq(line, "");
			ck_assert_uint_eq(n, records);
			free(buf);
		}
	}
	symbolizer__free(sz);
	symbol_files__free(sf);
	procmap__free(pm);
	unlink(map_path);
	free(im.buf);
}
END_TEST

Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("core");

	/* The annotator's reference comparisons run 200,000 lookups each: slow on a busy host. */
	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, test_symbols_elf64);
	tcase_add_test(tc, test_symbols_elf32);
	tcase_add_test(tc, test_symbols_stripped);
	tcase_add_test(tc, test_symbols_aliases);
	tcase_add_test(tc, test_symbols_errors);
	tcase_add_loop_test(tc, test_symbols_corrupted_dwarf, 0,
			    (int)(sizeof(corruptions) / sizeof(corruptions[0])));
	tcase_add_test(tc, test_symbols_compressed_dwarf);
	tcase_add_test(tc, test_annotator_reference);
	tcase_add_test(tc, test_annotator_text_reference);
	tcase_add_test(tc, test_text_output_cache_reference);
	tcase_add_test(tc, test_long_symbol_name);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- process map -------------------------------------------------------------------------- */

START_TEST(test_procmap_lines)
{
	char path[] = "/tmp/vbts-events-XXXXXX";
	const struct procmap_task *t;
	struct procmap *pm;
	uint64_t first;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	test__write_text(NULL, path,
		"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
		"\"cr3\":\"0x203000\"}\n"
		"{\"time\":110,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"pong\","
		"\"cr3\":\"0x204000\"}\n"
		"\n"
		"not json at all\n"                                              /* bad: 4 */
		"{\"event\":\"task\",\"pid\":\"3\",\"name\":\"x\",\"cr3\":\"0x10\"}\n" /* bad */
		"{\"event\":\"task\",\"pid\":3,\"name\":\"x\",\"cr3\":\"zz\"}\n"    /* bad */
		"{\"event\":\"task\",\"pid\":3,\"cr3\":\"0x1000\"}\n"              /* bad */
		"[1,2,3]\n"                                                      /* bad */
		"{\"time\":500,\"vcpu\":0,\"event\":\"exit\",\"pid\":1,\"code\":-11}\n"
		"{\"time\":600,\"vcpu\":0,\"event\":\"task\",\"pid\":9,\"name\":\"cr\\u0001sh\","
		"\"cr3\":\"0x203fff\"}\n"          /* cr3 reused (PCID bits masked) */
		"{\"time\":650,\"event\":\"exit\",\"pid\":9,\"code\":139}\n"
		"{\"time\":660,\"event\":\"exit\",\"pid\":\"9\"}\n"                /* bad */
		"{\"time\":700,\"event\":\"task\",\"pid\":10,\"name\":\"late\","
		"\"cr3\":\"0x9000\"}");
	pm = procmap__new();
	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmap__load(pm, path), 0);
	ck_assert_uint_eq(procmap__nr_tasks(pm), 4);
	ck_assert_uint_eq(procmap__bad_lines(pm, &first), 6);
	ck_assert_uint_eq(first, 4);
	t = procmap__crashed(pm);
	ck_assert(t && t->pid == 9 && t->exited && t->exit_code == 139 && t->exit_time == 650);

	t = procmap__lookup(pm, 0x203000, 200, true);
	ck_assert(t && t->pid == 1 && !strcmp(t->name, "ping"));
	ck_assert(t->exited && t->exit_code == -11 && t->exit_time == 500);
	ck_assert(!procmap__lookup(pm, 0x204000, 0, false)->exited);
	t = procmap__lookup(pm, 0x203000, 600, true);
	ck_assert(t && t->pid == 9 && !strcmp(t->name, "cr\001sh"));
	t = procmap__lookup(pm, 0x203000, 50, true);    /* before any announcement */
	ck_assert(t && t->pid == 1);
	t = procmap__lookup(pm, 0x203000, 0, false);    /* no time: the earliest */
	ck_assert(t && t->pid == 1);
	t = procmap__lookup(pm, 0x204000, 0, false);
	ck_assert(t && t->pid == 2);
	ck_assert_ptr_null(procmap__lookup(pm, 0x205000, 0, false));
	ck_assert_ptr_null(procmap__lookup(pm, 0, 0, false));

	ck_assert_int_eq(procmap__find(pm, "pong")->pid, 2);
	ck_assert_str_eq(procmap__find(pm, "9")->name, "cr\001sh");
	ck_assert_ptr_null(procmap__find(pm, "nobody"));
	ck_assert_int_eq(procmap__task(pm, 0)->pid, 1);    /* time order */
	ck_assert_int_eq(procmap__task(pm, 3)->pid, 10);
	procmap__free(pm);

	pm = procmap__new();
	ck_assert_int_eq(procmap__load(pm, "/nonexistent/events.jsonl"), -ENOENT);
	ck_assert_ptr_null(procmap__crashed(pm));
	ck_assert_uint_eq(procmap__bad_lines(pm, &first), 0);
	ck_assert_uint_eq(first, 0);
	procmap__free(pm);
	procmap__free(NULL);
	unlink(path);
}
END_TEST

START_TEST(test_procmap_long_and_binary_lines)
{
	char path[] = "/tmp/vbts-events-XXXXXX";
	struct procmap *pm;
	uint64_t first;
	char *big;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	big = malloc(100000);
	ck_assert_ptr_nonnull(big);
	memset(big, 'a', 99999);
	big[99999] = '\0';
	f = fopen(path, "w");
	fprintf(f, "%s\n", big);
	fwrite("{\"event\":\"task\"\0}\n", 1, 18, f);
	fprintf(f, "{\"event\":\"task\",\"pid\":1,\"name\":\"ok\",\"cr3\":\"0x1000\"}\n");
	fclose(f);
	free(big);
	pm = procmap__new();
	ck_assert_int_eq(procmap__load(pm, path), 0);
	ck_assert_uint_eq(procmap__nr_tasks(pm), 1);
	ck_assert_uint_eq(procmap__bad_lines(pm, &first), 2);
	ck_assert_uint_eq(first, 1);
	procmap__free(pm);
	unlink(path);
}
END_TEST

/*
 * Guest-chosen task names cannot break the output: jsonl stays valid JSON (controls escaped,
 * invalid UTF-8 replaced by U+FFFD), text shows them escaped.
 */
START_TEST(test_hostile_task_names)
{
	struct decoded_record r = {
		.type = DECODED_BRANCH, .vcpu = 0, .seq = 7, .from = 0x10, .to = 0x20,
		.from_valid = true, .to_valid = true, .cr3 = 0x5000, .cr3_valid = true,
	};
	struct exporter_options eo = { .format = EXPORT_JSONL };
	struct procmap *pm = procmap__new();
	struct exporter *e;
	char *buf = NULL, *line;
	size_t len = 0;

	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmap__add(pm, 1, "a\"b\\c\n\x1b[31m\x7f", 0x5000, 0), 0);
	ck_assert_int_eq(procmap__add(pm, 2, "\xff\xc3(ok\xe2\x82", 0x6000, 0), 0);
	eo.procmap = pm;
	eo.out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(eo.out);
	e = exporter__new(&eo);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(exporter__record(e, &r), 0);
	r.cr3 = 0x6000;
	ck_assert_int_eq(exporter__record(e, &r), 0);
	ck_assert_int_eq(exporter__flush(e), 0);
	exporter__free(e);
	eo.format = EXPORT_TEXT;
	e = exporter__new(&eo);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(exporter__record(e, &r), 0);
	r.cr3 = 0x5000;
	ck_assert_int_eq(exporter__record(e, &r), 0);
	ck_assert_int_eq(exporter__flush(e), 0);
	exporter__free(e);
	fclose(eo.out);
	ck_assert_str_eq(buf,
			 "{\"type\":\"branch\",\"vcpu\":0,\"seq\":7,\"from\":\"0x10\",\"to\":\"0x20\","
			 "\"task\":\"a\\\"b\\\\c\\u000a\\u001b[31m\\u007f\"}\n"
			 "{\"type\":\"branch\",\"vcpu\":0,\"seq\":7,\"from\":\"0x10\",\"to\":\"0x20\","
			 "\"task\":\"\\ufffd\\ufffd(ok\\ufffd\\ufffd\"}\n"
			 "  vcpu0 cpl? \\xff\\xc3(ok\\xe2\\x82[2] 0x10  =>  0x20\n"
			 "  vcpu0 cpl? a\"b\\\\c\\n\\x1b[31m\\x7f[1] 0x10  =>  0x20\n");
	/* Both jsonl lines parse, and the names come back as the guest sent the valid parts. */
	line = buf;
	for (int i = 0; i < 2; i++) {
		char *nl = strchr(line, '\n');
		json_error_t jerr;
		json_t *j;

		ck_assert_ptr_nonnull(nl);
		j = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		ck_assert_msg(j, "%s", jerr.text);
		ck_assert_str_eq(json_string_value(json_object_get(j, "task")),
				 i ? "\xef\xbf\xbd\xef\xbf\xbd(ok\xef\xbf\xbd\xef\xbf\xbd" :
				     "a\"b\\c\n\x1b[31m\x7f");
		json_decref(j);
		line = nl + 1;
	}
	free(buf);
	procmap__free(pm);
}
END_TEST

/* A long name is cut in the text label, visibly, and the record stays one line. */
START_TEST(test_long_task_name)
{
	struct decoded_record r = {
		.type = DECODED_BRANCH, .vcpu = 0, .seq = 7, .from = 0x10, .to = 0x20,
		.from_valid = true, .to_valid = true, .cr3 = 0x5000, .cr3_valid = true,
	};
	struct exporter_options eo = { .format = EXPORT_TEXT };
	struct procmap *pm = procmap__new();
	struct exporter *e;
	char name[300], *buf = NULL;
	size_t len = 0;

	memset(name, '\x1b', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmap__add(pm, 1, name, 0x5000, 0), 0);
	eo.procmap = pm;
	eo.out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(eo.out);
	e = exporter__new(&eo);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(exporter__record(e, &r), 0);
	ck_assert_int_eq(exporter__flush(e), 0);
	exporter__free(e);
	fclose(eo.out);
	ck_assert_msg(strstr(buf, "\\x1b\\x1b...[1] 0x10  =>  0x20\n"), "%s", buf);
	ck_assert_uint_lt(len, 120);
	ck_assert_ptr_null(strchr(buf, '\x1b'));
	free(buf);
	procmap__free(pm);
}
END_TEST

Suite *procmap_suite(void)
{
	Suite *s = suite_create("procmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_procmap_lines);
	tcase_add_test(tc, test_procmap_long_and_binary_lines);
	tcase_add_test(tc, test_hostile_task_names);
	tcase_add_test(tc, test_long_task_name);
	suite_add_tcase(s, tc);
	return s;
}
