// SPDX-License-Identifier: GPL-2.0
/*
 * test-crash.c - crash reports end to end: the VMM's writer (vmm/record/crash-report.c) takes the
 * last branches of a task out of a real ring and writes crash.json and crash-1.json into a
 * trace directory, `vbts decode DIR --crash` prints them, compared with a golden file; a
 * guest comm with terminal controls and invalid UTF-8 comes out escaped; a bad report gives
 * one line and exit status 2.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "crash-file.h"
#include "crash-report.h"
#include "decoder-test.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "test-files.h"

#define CR3_PING 0x203000
#define CR3_CRASH 0x204000

/* Two tasks on one vCPU: the crash report must hold the crashing task's branches only. */
static const struct vbts_record ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),
	BR(0x45, 0x50, 3, VBTS_BR_JCC),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_CRASH, 310),
	BR(0x30, 0x44, 3, VBTS_BR_CALL),            /* main => parse */
	BR(0x48, 0x72, 3, VBTS_BR_CALL),            /* parse => deref */
	BRV(0x75, 0xffffffff81000090ULL, 3, VBTS_BR_EXCEPTION, 14), /* deref faults: #PF */
	ESC(VBTS_ESC_TASK_DEPART, CR3_CRASH, 400),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 410),
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),            /* ping's, after the crash */
};

/* Collects from a ring of @capacity records holding ring[]. */
static unsigned int collect(uint64_t capacity, uint64_t id, unsigned int n,
			    struct vbts_record *out)
{
	struct ring_writer_config cfg = { .capacity = capacity, .mode = VBTS_RING_WRAP };
	char path[] = "/tmp/vbts-crash-ring-XXXXXX";
	struct ring_writer *w;
	unsigned int got;
	uint64_t seq;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	w = ring_writer__create(path, &cfg);
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < sizeof(ring) / sizeof(ring[0]); i++)
		ck_assert_int_eq(ring_writer__append(w, &ring[i]), 0);
	got = crash_report__collect(w, id, n, out, &seq);
	ck_assert_uint_eq(seq, sizeof(ring) / sizeof(ring[0]));
	ck_assert_int_eq(ring_writer__close(w), 0);
	unlink(path);
	return got;
}

START_TEST(test_collect)
{
	struct vbts_record out[8];

	/* The crashing task's three branches, oldest first; not ping's before or after. */
	ck_assert_uint_eq(collect(64, CR3_CRASH, 8, out), 3);
	ck_assert_uint_eq(out[0].from, 0x30);
	ck_assert_uint_eq(out[1].from, 0x48);
	ck_assert_uint_eq(out[2].from, 0x75);
	/* The last two only, oldest first. */
	ck_assert_uint_eq(collect(64, CR3_CRASH, 2, out), 2);
	ck_assert_uint_eq(out[0].from, 0x48);
	ck_assert_uint_eq(out[1].from, 0x75);
	/* Every task's: the newest is ping's. */
	ck_assert_uint_eq(collect(64, ~0ULL, 2, out), 2);
	ck_assert_uint_eq(out[1].from, 0x6f);
	/* A ring of 4 slots has lost the crashing task's arrival: its branches are unknown. */
	ck_assert_uint_eq(collect(4, CR3_CRASH, 8, out), 0);
	ck_assert_uint_eq(collect(64, CR3_CRASH, 0, out), 0);
}
END_TEST

/*
 * Stream mode: the crashing task's last branches are read back across closed segments (some
 * of them compressed by then), not only from the open segment. Segments of 8 slots (7
 * records): the task arrives in segment 0, its 40 branches run over 6 segments, the crash
 * report asks for the last 30.
 */
START_TEST(test_collect_stream)
{
	char dir[] = "/tmp/vbts-crash-seg-XXXXXX";
	struct seg_budget budget = { .limit = 1ULL << 30 };
	struct seg_writer_config sc = {
		.segment_records = 8, .budget = &budget, .on_full = SEG_ON_FULL_STALL,
	};
	struct vbts_record out[30], r;
	struct ring_writer *w;
	unsigned int got;
	uint64_t seq;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	sc.dir = dir;
	w = ring_writer__create_stream(&sc);
	ck_assert_ptr_nonnull(w);
	r = (struct vbts_record)ESC(VBTS_ESC_TASK_ARRIVE, CR3_CRASH, 1);
	ck_assert_int_eq(ring_writer__append(w, &r), 0);
	for (uint64_t i = 0; i < 40; i++) {
		r = (struct vbts_record)BR(0x1000 + i, 0x2000 + i, 3, VBTS_BR_JCC);
		ck_assert_int_eq(ring_writer__append(w, &r), 0);
	}
	/* the collector has compressed what it was handed */
	seg_writer__sync(ring_writer__stream(w));
	got = crash_report__collect(w, CR3_CRASH, 30, out, &seq);
	ck_assert_uint_eq(seq, 41);
	ck_assert_uint_eq(got, 30);
	for (unsigned int i = 0; i < 30; i++)
		ck_assert_uint_eq(out[i].from, 0x1000 + 10 + i);
	ck_assert_int_eq(ring_writer__close(w), 0);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

static void write_reports(const char *dir)
{
	struct vbts_record br[4];
	struct crash_report r = {
		.kind = CRASH_PROCESS,
		.signo = 11,
		.time_ns = 1500000123,
		.vcpu = 0,
		.regs_note = "the process had exited when its exit was seen",
		.cr3 = CR3_CRASH,
		.have_process = true,
		.pid = 2,
		.tgid = 2,
		/* A guest's hostile comm: terminal controls, an invalid UTF-8 byte. */
		.comm = "cr\x1b[2Jash\n\xff",
		.requested = 4,
	};
	struct crash_report p = {
		.kind = CRASH_PANIC,
		.time_ns = 2000000000,
		.vcpu = 1,
		.have_regs = true,
		.regs = { .rip = 0x44, .rsp = 0x7ff0, .rflags = 0x246, .cr3 = 0x1000, .cs = 0x10 },
		.cr3 = 0,
		.requested = 4,
	};

	r.nr_branches = collect(64, CR3_CRASH, 4, br);
	r.branches = br;
	r.ring_seq = 12;
	ck_assert_int_eq(crash_report__write(dir, 0, &r), 0);
	r.comm[0] = '\0';
	p.branches = br;
	p.nr_branches = 2;
	ck_assert_int_eq(crash_report__write(dir, 1, &p), 0);
}

START_TEST(test_report_file)
{
	char dir[64], path[128];
	json_error_t je;
	json_t *o;

	make_golden_trace(dir);
	write_reports(dir);
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	o = json_load_file(path, 0, &je);
	ck_assert_msg(o, "%s: %s", path, je.text);
	ck_assert_str_eq(json_string_value(json_object_get(o, "reason")), "process-crash");
	ck_assert_str_eq(json_string_value(json_object_get(o, "signal")), "SIGSEGV");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "vcpu")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "cr3")), "0x204000");
	ck_assert(json_is_null(json_object_get(o, "registers")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "process"),
							    "pid")), 2);
	/* Valid JSON text: the invalid byte became U+FFFD, the controls stay data. */
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "process"),
							   "comm")),
			 "cr\x1b[2Jash\n\xef\xbf\xbd");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "branches")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(o, "branches"), 2), "from")),
			 "0x75");
	json_decref(o);
	snprintf(path, sizeof(path), "%s/crash-1.json", dir);
	o = json_load_file(path, 0, &je);
	ck_assert_msg(o, "%s: %s", path, je.text);
	ck_assert_str_eq(json_string_value(json_object_get(o, "reason")), "panic");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "registers"),
							   "rip")), "0x44");
	ck_assert(json_is_null(json_object_get(o, "process")));
	json_decref(o);
	remove_trace(dir);
}
END_TEST

/* Annotations: one that dies the way a reader of a hostile ELF file might, one that works. */
static int annotate_crash(const char *dir, json_t *report)
{
	json_object_set_new(report, "annotated", json_true());
	raise(SIGSEGV);
	return 1;
}

static int annotate_mark(const char *dir, json_t *report)
{
	json_object_set_new(report, "annotated", json_true());
	return 1;
}

/*
 * The annotation runs apart from the VMM: when it crashes, the writer (and this test process)
 * goes on and the report is there without symbols; when it works, the report has them.
 */
START_TEST(test_report_annotate_isolated)
{
	struct crash_report r = { .kind = CRASH_PANIC, .time_ns = 5, .requested = 1 };
	struct vbts_record br[1] = { BR(0x30, 0x44, 3, VBTS_BR_CALL) };
	char dir[64], path[128];
	json_t *o;

	make_golden_trace(dir);
	r.branches = br;
	r.nr_branches = 1;
	crash_report__set_annotate(annotate_crash);
	ck_assert_int_eq(crash_report__write(dir, 0, &r), 0);
	crash_report__set_annotate(annotate_mark);
	ck_assert_int_eq(crash_report__write(dir, 1, &r), 0);
	crash_report__set_annotate(NULL);
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	o = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_null(json_object_get(o, "annotated"));
	ck_assert_uint_eq(json_array_size(json_object_get(o, "branches")), 1);
	json_decref(o);
	snprintf(path, sizeof(path), "%s/crash-1.json", dir);
	o = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_true(json_object_get(o, "annotated")));
	json_decref(o);
	remove_trace(dir);
}
END_TEST

START_TEST(test_print_golden)
{
	char dir[64], *out, *err;
	char *argv[] = { "decode", "--crash", dir, NULL };
	int status;

	make_golden_trace(dir);
	write_reports(dir);
	status = run_decode(&out, &err, argv);
	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	compare_golden("decode-crash.txt", out);
	assert_printable(out, 40);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

static const struct {
	const char *text;
	const char *error;
} bad_reports[] = {
	{ "", "not a crash report" },
	{ "[1]", "not a JSON object" },
	{ "{\"version\":2}", "member version" },
	{ "{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
	  "\"process\":null,\"registers\":null,\"branches\":[{\"from\":1,\"to\":\"0x2\"}]}",
	  "member branches" },
	{ "{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
	  "\"process\":{\"pid\":1},\"registers\":null,\"branches\":[]}",
	  "member process" },
	/* A branch's symbols of the wrong types. */
	{ "{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
	  "\"process\":null,\"registers\":null,\"branches\":[{\"from\":\"0x1\",\"to\":\"0x2\","
	  "\"to_symbol\":{\"function\":\"f\",\"line\":\"12\"}}]}",
	  "member branches" },
	{ "{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
	  "\"process\":null,\"registers\":null,\"branches\":[{\"from\":\"0x1\",\"to\":\"0x2\","
	  "\"from_symbol\":[1]}]}",
	  "member branches" },
};

/* A report whose symbols hold terminal controls: printed escaped, on their lines. */
START_TEST(test_print_hostile_symbols)
{
	static const char report[] =
		"{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
		"\"process\":null,\"registers\":null,\"branches\":[{\"from\":\"0x1\","
		"\"to\":\"0x2\",\"to_symbol\":{\"function\":\"f\\u001b[2J\",\"offset\":\"0x3\","
		"\"file\":\"a\\nb.c\",\"line\":12,\"module\":\"/lib/\\u202eso\"}}]}";
	char dir[64], path[128], *out, *err;
	char *argv[] = { "decode", "--crash", dir, NULL };
	FILE *f;

	make_golden_trace(dir);
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(report, f);
	fclose(f);
	ck_assert_int_eq(run_decode(&out, &err, argv), 0);
	ck_assert_msg(strstr(out, "  #0   0x2 f\\x1b[2J+0x3 at a\\nb.c:12 in /lib/\\xe2\\x80\\xaeso\n"),
		      "%s", out);
	assert_printable(out, 10);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

static int error_lines(const char *err)
{
	int n = 0;

	for (const char *p = err; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		n += strncmp(p, "vbts decode: warning:", 21) != 0;
	return n;
}

START_TEST(test_print_bad)
{
	char dir[64], path[128], *out, *err;
	char *argv[] = { "decode", "--crash", dir, NULL };
	FILE *f;
	int status;

	make_golden_trace(dir);
	if (_i < (int)(sizeof(bad_reports) / sizeof(bad_reports[0]))) {
		snprintf(path, sizeof(path), "%s/crash.json", dir);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(bad_reports[_i].text, f);
		fclose(f);
	}
	status = run_decode(&out, &err, argv);
	ck_assert_int_eq(status, 2);
	ck_assert_msg(strstr(err, _i < (int)(sizeof(bad_reports) / sizeof(bad_reports[0])) ?
				  bad_reports[_i].error : "no crash report"),
		      "stderr: %s", err);
	/* One line, besides the warnings (the golden trace's bad events line). */
	ck_assert_int_eq(error_lines(err), 1);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* A valid report of exactly @size bytes (padded with spaces) as DIR/crash.json. */
static void write_report_of_size(const char *dir, size_t size)
{
	static const char head[] =
		"{\"version\":1,\"reason\":\"panic\",\"time\":1,\"vcpu\":0,\"cr3\":null,"
		"\"process\":null,\"registers\":null,\"branches\":[{\"from\":\"0x1\","
		"\"to\":\"0x2\"}]";
	char path[128];
	FILE *f;

	ck_assert_uint_gt(size, sizeof(head));
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(head, f);
	for (size_t i = sizeof(head) - 1; i < size - 1; i++)
		fputc(' ', f);
	fputc('}', f);
	ck_assert_int_eq(fclose(f), 0);
}

/* The one limit of a report's size: a report of CRASH_FILE_SIZE_MAX bytes is read, one more
 * byte is refused in one line that names the limit. */
START_TEST(test_report_size_limit)
{
	char dir[64], *out, *err;
	char *argv[] = { "decode", "--crash", dir, NULL };
	int status;

	ck_assert_uint_eq(CRASH_FILE_SIZE_MAX, 1U << 20);
	make_golden_trace(dir);
	write_report_of_size(dir, CRASH_FILE_SIZE_MAX);
	status = run_decode(&out, &err, argv);
	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	free(out);
	free(err);
	write_report_of_size(dir, CRASH_FILE_SIZE_MAX + 1);
	status = run_decode(&out, &err, argv);
	ck_assert_int_eq(status, 2);
	ck_assert_msg(strstr(err, "crash.json: 1048577 bytes, more than a crash report's 1 MiB"),
		      "stderr: %s", err);
	ck_assert_int_eq(error_lines(err), 1);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* Symbols as long and as costly to write as a report's symbols can be (each byte a control
 * character, six bytes written). */
static int annotate_huge(const char *dir, json_t *report)
{
	json_t *br = json_object_get(report, "branches");
	char name[257];
	size_t i;
	json_t *b;

	memset(name, 0x01, 256);
	name[256] = '\0';
	json_array_foreach(br, i, b) {
		for (int k = 0; k < 2; k++)
			json_object_set_new(b, k ? "to_symbol" : "from_symbol",
					    json_pack("{s:s, s:s, s:i, s:s, s:s}", "function", name,
						      "offset", "0x10", "line", 12, "file", name,
						      "module", name));
	}
	return 1;
}

/*
 * What the VMM writes stays within that limit however much there is: the most branches a
 * report holds, a comm of control bytes, every register; and the same with the largest
 * symbols of every branch, of which the newest branches' are kept. `vbts decode --crash` reads
 * both.
 */
START_TEST(test_report_written_within_limit)
{
	struct crash_report r = {
		.kind = CRASH_PANIC,
		.time_ns = INT64_MAX,
		.vcpu = UINT32_MAX,
		.have_regs = true,
		.regs_note = "registers",
		.cr3 = ~0ULL,
		.have_process = true,
		.pid = INT32_MIN,
		.tgid = INT32_MIN,
		.ring_seq = ~0ULL,
		.requested = CRASH_REPORT_BRANCHES_MAX,
	};
	static struct vbts_record br[CRASH_REPORT_BRANCHES_MAX];
	char dir[64], path[128], *out, *err;
	char *argv[] = { "decode", "--crash", dir, NULL };
	json_t *o, *arr;
	struct stat st;
	int status;

	memset(&r.regs, 0xff, sizeof(r.regs));
	memset(r.comm, 0x01, CRASH_REPORT_COMM_MAX);
	for (unsigned int i = 0; i < CRASH_REPORT_BRANCHES_MAX; i++)
		br[i] = (struct vbts_record){ .from = ~0ULL - i, .to = ~0ULL - i, .flags = ~0ULL };
	r.branches = br;
	r.nr_branches = CRASH_REPORT_BRANCHES_MAX;
	make_golden_trace(dir);
	snprintf(path, sizeof(path), "%s/crash.json", dir);
	for (int annotated = 0; annotated < 2; annotated++) {
		crash_report__set_annotate(annotated ? annotate_huge : NULL);
		ck_assert_int_eq(crash_report__write(dir, 0, &r), 0);
		crash_report__set_annotate(NULL);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_msg(st.st_size <= CRASH_FILE_SIZE_MAX, "annotated %d: %lld bytes",
			      annotated, (long long)st.st_size);
		o = json_load_file(path, 0, NULL);
		ck_assert_ptr_nonnull(o);
		arr = json_object_get(o, "branches");
		ck_assert_uint_eq(json_array_size(arr), CRASH_REPORT_BRANCHES_MAX);
		if (annotated) {
			/* the newest have their symbols, the oldest gave theirs up */
			ck_assert_ptr_nonnull(json_object_get(json_array_get(arr,
				CRASH_REPORT_BRANCHES_MAX - 1), "to_symbol"));
			ck_assert_ptr_null(json_object_get(json_array_get(arr, 0), "to_symbol"));
		}
		json_decref(o);
		status = run_decode(&out, &err, argv);
		ck_assert_msg(status == 0, "annotated %d: exit %d: %s", annotated, status, err);
		free(out);
		free(err);
	}
	remove_trace(dir);
}
END_TEST

Suite *crash_suite(void)
{
	Suite *s = suite_create("crash");
	TCase *tc = tcase_create("crash");

	/* the reports of the most branches with the largest symbols take seconds under ASan */
	tcase_set_timeout(tc, 120);

	tcase_add_test(tc, test_collect);
	tcase_add_test(tc, test_collect_stream);
	tcase_add_test(tc, test_report_file);
	tcase_add_test(tc, test_report_annotate_isolated);
	tcase_add_test(tc, test_print_golden);
	tcase_add_test(tc, test_print_hostile_symbols);
	tcase_add_test(tc, test_report_size_limit);
	tcase_add_test(tc, test_report_written_within_limit);
	tcase_add_loop_test(tc, test_print_bad, 0,
			    (int)(sizeof(bad_reports) / sizeof(bad_reports[0])) + 1);
	suite_add_tcase(s, tc);
	return s;
}
