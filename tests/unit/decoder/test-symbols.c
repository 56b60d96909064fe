// SPDX-License-Identifier: GPL-2.0
/*
 * test-symbols.c - the symbolizer on real ELF objects built for the test (symtest.S, as
 * ELF64 and ELF32), and the process map on good and bad events.jsonl lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder-test.h"
#include "export.h"
#include "procmap.h"
#include "symbols.h"

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

Suite *symbols_suite(void)
{
	Suite *s = suite_create("symbols");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_symbols_elf64);
	tcase_add_test(tc, test_symbols_elf32);
	tcase_add_test(tc, test_symbols_stripped);
	tcase_add_test(tc, test_symbols_errors);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- process map -------------------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

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
	write_file(path,
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

/* Guest-chosen task names cannot break the output: escaped in jsonl, replaced in text. */
START_TEST(test_hostile_task_names)
{
	struct decoded_record r = {
		.type = DECODED_BRANCH, .vcpu = 0, .seq = 7, .from = 0x10, .to = 0x20,
		.from_valid = true, .to_valid = true, .cr3 = 0x5000, .cr3_valid = true,
	};
	struct exporter e = { .format = EXPORT_JSONL };
	struct procmap *pm = procmap__new();
	char *buf = NULL;
	size_t len = 0;

	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmap__add(pm, 1, "a\"b\\c\n\x1b[31m\x7f", 0x5000, 0), 0);
	e.procmap = pm;
	e.out = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(e.out);
	ck_assert_int_eq(exporter__record(&e, &r), 0);
	e.format = EXPORT_TEXT;
	ck_assert_int_eq(exporter__record(&e, &r), 0);
	fclose(e.out);
	ck_assert_str_eq(buf,
			 "{\"type\":\"branch\",\"vcpu\":0,\"seq\":7,\"from\":\"0x10\",\"to\":\"0x20\","
			 "\"task\":\"a\\\"b\\\\c\\u000a\\u001b[31m\\u007f\"}\n"
			 "  vcpu0 cpl? a\"b\\c??[31m?[1]  0x10  =>  0x20\n");
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
	suite_add_tcase(s, tc);
	return s;
}
