// SPDX-License-Identifier: GPL-2.0
/*
 * test-ksyms.c - System.map lines and files, and exported-symbol tables, well-formed or not.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsec.h"
#include "fake-kernel.h"
#include "introspect-tests.h"
#include "ksyms.h"
#include "test-files.h"

static const struct {
	const char *line;
	int ret;
	uint64_t addr;
	char type;
	const char *name;
} lines[] = {
	{ "ffffffff81000000 T _text\n", 0, 0xffffffff81000000ULL, 'T', "_text" },
	{ "0000000000000040 D pcpu_hot", 0, 0x40, 'D', "pcpu_hot" },
	{ "FFFFFFFF8200ABCD d init_task\n", 0, 0xffffffff8200abcdULL, 'd', "init_task" },
	{ "1 A x\n", 0, 1, 'A', "x" },
	/* Debian's placeholder: more than three fields */
	{ "ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg package\n",
	  -EINVAL },
	{ "fffffffffffffffff T too_many_digits\n", -EINVAL },
	{ " ffffffff81000000 T leading_space\n", -EINVAL },
	{ "ffffffff81000000 T\n", -EINVAL },
	{ "ffffffff81000000 T \n", -EINVAL },
	{ "ffffffff81000000  T two_spaces\n", -EINVAL },
	{ "ffffffff81000000 1 digit_type\n", -EINVAL },
	{ "ffffffff81000000\tT tab\n", -EINVAL },
	{ "ffffffff81000000 t mod_sym\t[kvm]\n", -EINVAL }, /* /proc/kallsyms module line */
	{ "ffffffff81000000 T name\nrest", -EINVAL },
	{ "xyz T name\n", -EINVAL },
	{ "", -EINVAL },
};

START_TEST(test_parse_line)
{
	const char *name = NULL;
	size_t len = 0;
	uint64_t addr = 0;
	char type = 0;
	int ret = ksyms__parse_line(lines[_i].line, &addr, &type, &name, &len);

	ck_assert_msg(ret == lines[_i].ret, "line %d: %d", _i, ret);
	if (ret)
		return;
	ck_assert_uint_eq(addr, lines[_i].addr);
	ck_assert_int_eq(type, lines[_i].type);
	ck_assert_uint_eq(len, strlen(lines[_i].name));
	ck_assert_int_eq(memcmp(name, lines[_i].name, len), 0);
}
END_TEST

static char map_path[32];

static void write_map(const char *text)
{
	strcpy(map_path, "/tmp/vbts-sysmap-XXXXXX");
	test__write_temp(map_path, text, strlen(text));
}

START_TEST(test_system_map)
{
	char *text = malloc(4 * KSYMS_LINE_MAX);
	struct ksym_want w[] = { { .name = "init_task" }, { .name = "init_mm" },
				 { .name = "pcpu_hot" }, { .name = "absent" },
				 { .name = "after_long" } };
	size_t lines_ok = 0, len;

	ck_assert_ptr_nonnull(text);
	/* a local first, then the global; an over-long line; the last line unterminated */
	strcpy(text, "ffffffff81099990 d init_task\n"
		     "ffffffff81010000 D init_task\n"
		     "ffffffff81099998 D init_task\n"
		     "ffffffff81011000 d init_mm\n"
		     "ffffffff81000000 T ");
	len = strlen(text);
	memset(text + len, 'x', 2 * KSYMS_LINE_MAX);
	strcpy(text + len + 2 * KSYMS_LINE_MAX, "\nffffffff81000010 T after_long\n"
				    "garbage line\n"
				    "0000000000000040 D pcpu_hot");
	write_map(text);
	free(text);
	ck_assert_int_eq(ksyms__from_system_map(map_path, w, 5, &lines_ok), 0);
	unlink(map_path);
	ck_assert_uint_eq(lines_ok, 6);
	ck_assert(w[0].found && w[0].global);
	ck_assert_uint_eq(w[0].addr, 0xffffffff81010000ULL); /* the first global */
	ck_assert(w[1].found && !w[1].global);
	ck_assert_uint_eq(w[1].addr, 0xffffffff81011000ULL); /* a local when that is all */
	ck_assert(w[2].found);
	ck_assert_uint_eq(w[2].addr, 0x40);
	ck_assert(!w[3].found);
	ck_assert(w[4].found);
	ck_assert_uint_eq(w[4].addr, 0xffffffff81000010ULL);
}
END_TEST

START_TEST(test_system_map_placeholder)
{
	struct ksym_want w[] = { { .name = "init_task" } };
	size_t n = 99;

	write_map("ffffffffffffffff B The real System.map is in the linux-image-<version>-dbg "
		  "package\n");
	ck_assert_int_eq(ksyms__from_system_map(map_path, w, 1, &n), 0);
	unlink(map_path);
	ck_assert_uint_eq(n, 0);
	ck_assert(!w[0].found);
	ck_assert_int_eq(ksyms__from_system_map("/nonexistent/System.map", w, 1, &n), -ENOENT);
}
END_TEST

START_TEST(test_ksymtab)
{
	struct ksym_want w[] = { { .name = "init_task" }, { .name = "pcpu_hot" },
				 { .name = "__per_cpu_offset" }, { .name = "init_mm" } };
	struct fake_kernel fk;
	size_t size, n = 0;
	uint8_t *elf;

	fk_create(&fk, NULL);
	elf = test__slurp(fk.vmlinux, &size);
	ck_assert_int_eq(ksyms__from_ksymtab(elf, size, w, 4, &n), 0);
	ck_assert_uint_eq(n, 5); /* init_task, page_offset_base, __per_cpu_offset, pcpu_hot, panic */
	ck_assert(w[0].found && w[1].found && w[2].found && !w[3].found);
	ck_assert_uint_eq(w[0].addr, FK_INIT_TASK);
	ck_assert_uint_eq(w[1].addr, FK_PCPU_HOT); /* per-CPU: an offset below the image */
	ck_assert_uint_eq(w[2].addr, FK_PER_CPU_OFFSET);

	/* not ELF; truncated section headers */
	ck_assert_int_eq(ksyms__from_ksymtab((const uint8_t *)"junk", 4, w, 4, &n), -ENOEXEC);
	ck_assert_int_eq(ksyms__from_ksymtab(elf, size - 8, w, 4, &n), -ENOEXEC);
	free(elf);
	fk_destroy(&fk);
}
END_TEST

/* A name offset pointing outside __ksymtab_strings: the table is refused, nothing read. */
START_TEST(test_ksymtab_bad_name)
{
	struct ksym_want w[] = { { .name = "init_task" } };
	struct elf_section sec;
	struct fake_kernel fk;
	size_t size, n = 0;
	uint8_t *elf;
	int32_t bad = 0x7fffff00;

	fk_create(&fk, NULL);
	elf = test__slurp(fk.vmlinux, &size);
	ck_assert_int_eq(elfsec__find(elf, size, "__ksymtab", &sec), 0);
	/* entry 1's name offset, 12 + 4 bytes into the table */
	memcpy((uint8_t *)sec.data + 16, &bad, 4);
	ck_assert_int_eq(ksyms__from_ksymtab(elf, size, w, 1, &n), -EINVAL);
	free(elf);
	fk_destroy(&fk);
}
END_TEST

Suite *ksyms_suite(void)
{
	Suite *s = suite_create("ksyms");
	TCase *tc = tcase_create("ksyms");

	tcase_add_loop_test(tc, test_parse_line, 0, sizeof(lines) / sizeof(lines[0]));
	tcase_add_test(tc, test_system_map);
	tcase_add_test(tc, test_system_map_placeholder);
	tcase_add_test(tc, test_ksymtab);
	tcase_add_test(tc, test_ksymtab_bad_name);
	suite_add_tcase(s, tc);
	return s;
}
