// SPDX-License-Identifier: GPL-2.0
/*
 * test-golden.c - `vbts decode` end to end: a trace directory is generated from the tables
 * below (ring files through the real ring writer, vm.json naming the symtest ELF object,
 * events.jsonl), decoded in several modes, and compared with the golden files in tests/data/.
 * Bad trace directories and bad arguments must give one clear line and exit status 2.
 *
 * VBTS_UPDATE_GOLDEN=1 in the environment rewrites the golden files instead of comparing.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <jansson.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "commands.h"
#include "decoder-test.h"
#include "ring-writer.h"
#include "test-files.h"
#include "test-ring.h"
#include "trace-dir.h"

#define CR3_PING 0x203000
#define CR3_CRASH 0x204000

static const struct vbts_record vcpu0[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 3, VBTS_BR_CALL),                /* main+0x13 => parse */
	BR(0x45, 0x50, 3, VBTS_BR_JCC),
	BR(0x6f, 0x70, 3, VBTS_BR_CALL),                /* parse => deref */
	BR(0x7a, 0x18, 3, VBTS_BR_RET),
	BR(0x20, 0x90, 3, VBTS_BR_SYSCALL),             /* main => isr_entry */
	ESC(VBTS_ESC_GAP_BEGIN, 0x90, VBTS_GAP_SYSCALL),
	ESC(VBTS_ESC_GAP_END, 0xb0, 200),
	BR(0xb8, 0x24, 0, VBTS_BR_SYSRET),
	ESC(VBTS_ESC_TASK_DEPART, CR3_PING, 300),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_CRASH, 310),
	BR(0x30, 0x44, 3, VBTS_BR_CALL),
	BR(0x48, 0x72, 3, VBTS_BR_CALL),
	BRV(0x75, 0x90, 3, VBTS_BR_EXCEPTION, 14),   /* deref faults: #PF */
	ESC(VBTS_ESC_GAP_BEGIN, 0x90, VBTS_GAP_IDT),
	ESC(VBTS_ESC_LOST, 5, 0),
	ESC(0x33, 0x1, 0x2),                            /* a kind from a newer writer */
	{ 0x1000, 0x2000, 0 },                          /* no annotations, no symbols */
	ESC(VBTS_ESC_FREEZE, 400, VBTS_FREEZE_PANIC),
	ESC(VBTS_ESC_STOP, 410, 0),
};

/* Written into a 4-slot ring: the first 3 are overwritten; then frozen, 2 appends refused. */
static const struct vbts_record vcpu1[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TIME, 50, 0),
	BR(0x1, 0x2, 0, VBTS_BR_JMP),
	ESC(VBTS_ESC_TIME, 150, 0),
	BR(0x3, 0x4, 0, VBTS_BR_JMP),
	ESC(VBTS_ESC_GAP_END, 0x5, 250),                /* its begin was overwritten */
	BR(0xa0, 0xb0, 0, VBTS_BR_JMP_IND),
};

static const char events[] =
	"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
	"\"cr3\":\"0x203000\"}\n"
	"{\"time\":95,\"vcpu\":0,\"event\":\"task\",\"pid\":2,\"name\":\"crash\","
	"\"cr3\":\"0x204000\"}\n"
	"garbage line\n"
	"{\"time\":420,\"vcpu\":0,\"event\":\"exit\",\"pid\":2,\"code\":139}\n"
	"{\"time\":430,\"vcpu\":0,\"event\":\"exit\",\"pid\":1,\"code\":0}\n";

static void write_vm_json(const char *dir, const char *image, const char *build_id)
{
	char path[256], vm[512];

	snprintf(vm, sizeof(vm),
		 "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"%s\","
		 "\"build_id\":%s%s%s,\"vcpus\":2,\"memory_mib\":16,\"backend\":\"step\","
		 "\"cpl\":\"all\",\"ring_records\":64,\"start_time_ns\":1700000000000000000}\n",
		 image, build_id ? "\"" : "", build_id ? build_id : "null", build_id ? "\"" : "");
	snprintf(path, sizeof(path), "%s/vm.json", dir);
	test__write_text(NULL, path, vm);
}

/* Rewrites vm.json for a single vCPU. */
static int vm_json_set_vcpus_1(const char *dir)
{
	char path[256];
	char *text, *p;

	snprintf(path, sizeof(path), "%s/vm.json", dir);
	text = test__slurp_or_null(path, NULL);
	if (!text)
		return -1;
	p = strstr(text, "\"vcpus\":2");
	if (p)
		p[8] = '1';
	test__write_text(NULL, path, text);
	free(text);
	return p ? 0 : -1;
}

void make_golden_trace(char *dir)
{
	char path[256];

	snprintf(dir, 64, "/tmp/vbts-trace-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, NULL);
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	test__write_text(NULL, path, events);
	test__write_ring(dir, 0, 64, vcpu0, sizeof(vcpu0) / sizeof(vcpu0[0]), 0);
	test__write_ring(dir, 1, 4, vcpu1, sizeof(vcpu1) / sizeof(vcpu1[0]), 2);
}

void remove_trace(const char *dir)
{
	test__remove_tree(dir);
}

int run_decode(char **out, char **err, char **argv)
{
	return run_command(&cmd_decode, out, err, argv);
}

int run_command_fds(const struct vbts_command *cmd, int ofd, int efd, char **argv)
{
	int saved_out = dup(1), saved_err = dup(2), argc = 0, status;

	ck_assert(saved_out >= 0 && saved_err >= 0);
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	dup2(ofd, 1);
	dup2(efd, 2);
	status = cmd->fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	return status;
}

int run_command(const struct vbts_command *cmd, char **out, char **err, char **argv)
{
	char opath[] = "/tmp/vbts-out-XXXXXX", epath[] = "/tmp/vbts-err-XXXXXX";
	int ofd = mkstemp(opath), efd = mkstemp(epath), status;

	ck_assert(ofd >= 0 && efd >= 0);
	status = run_command_fds(cmd, ofd, efd, argv);
	close(ofd);
	close(efd);
	*out = test__slurp(opath, NULL);
	*err = test__slurp(epath, NULL);
	unlink(opath);
	unlink(epath);
	return status;
}

void compare_golden(const char *name, const char *got)
{
	char path[512];
	char *want;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	if (getenv("VBTS_UPDATE_GOLDEN")) {
		test__write_text(NULL, path, got);
		return;
	}
	want = test__slurp_or_null(path, NULL);
	ck_assert_msg(want, "%s: missing (VBTS_UPDATE_GOLDEN=1 creates it)", path);
	ck_assert_msg(!strcmp(want, got), "%s differs; got:\n%s", path, got);
	free(want);
}

void assert_printable(const char *text, size_t max_lines)
{
	size_t pos = 0, len = strlen(text), lines = 0;
	mbstate_t st;
	wchar_t wc;

	ck_assert_ptr_nonnull(setlocale(LC_CTYPE, "C.UTF-8"));
	memset(&st, 0, sizeof(st));
	while (pos < len) {
		size_t k = mbrtowc(&wc, text + pos, len - pos, &st);

		ck_assert_msg(k != (size_t)-1 && k != (size_t)-2 && k,
			      "invalid UTF-8 at byte %zu of:\n%s", pos, text);
		if (wc == L'\n')
			lines++;
		else
			ck_assert_msg(!iswcntrl((wint_t)wc), "control U+%04x at byte %zu of:\n%s",
				      (unsigned int)wc, pos, text);
		pos += k;
	}
	ck_assert_msg(!len || text[len - 1] == '\n', "unterminated last line:\n%s", text);
	ck_assert_msg(lines <= max_lines, "%zu lines, at most %zu expected:\n%s", lines,
		      max_lines, text);
	setlocale(LC_CTYPE, "C");
}

static const struct {
	const char *golden;
	const char *args[8];
} golden_cases[] = {
	{ "decode.txt", { NULL } },
	{ "decode.jsonl", { "--format", "jsonl", NULL } },
	{ "decode-last3-summary.txt", { "--last", "3", "--summary", NULL } },
	{ "decode-vcpu1.jsonl", { "--vcpu", "1", "--format", "jsonl", "--summary", NULL } },
	{ "decode-task-crash.txt", { "--task", "crash", NULL } },
	{ "decode-last0-summary.jsonl", { "--last", "0", "--summary", "--format", "jsonl", NULL } },
	{ "decode-vcpu0-last4-lines.txt", { "--vcpu", "0", "--last", "4", "--lines", NULL } },
	/* More than there are: everything, as without --last. */
	{ "decode-vcpu1.jsonl",
	  { "--vcpu", "1", "--format", "jsonl", "--summary", "--last", "1000", NULL } },
	{ "decode-last1.jsonl", { "--format", "jsonl", "--last", "1", NULL } },
	{ "decode-crashed-last4-summary.txt", { "--crashed", "--last", "4", "--summary", NULL } },
	{ "decode-cpl-user.jsonl", { "--cpl", "user", "--format", "jsonl", NULL } },
	{ "decode-cpl-kernel-last2.txt", { "--cpl", "kernel", "--last", "2", NULL } },
	{ "decode-calls.txt", { "--format", "calls", NULL } },
	{ "decode.folded", { "--format", "folded", NULL } },
	{ "decode.callgrind", { "--format", "callgrind", NULL } },
	{ "decode-perfetto.json", { "--format", "perfetto", NULL } },
	{ "decode.info", { "--format", "lcov", NULL } },
	{ "decode-calls-vcpu0-task-ping.txt",
	  { "--format", "calls", "--vcpu", "0", "--task", "ping", NULL } },
};

START_TEST(test_golden)
{
	char dir[64], *out, *err, *argv[12];
	int argc = 0, status;

	make_golden_trace(dir);
	argv[argc++] = "decode";
	for (int i = 0; golden_cases[_i].args[i]; i++)
		argv[argc++] = (char *)golden_cases[_i].args[i];
	argv[argc++] = dir;
	argv[argc] = NULL;
	status = run_decode(&out, &err, argv);
	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	/* The one warning: the bad events line. */
	ck_assert_msg(strstr(err, "events.jsonl: 1 unusable line ignored (the first is line 3)"),
		      "stderr: %s", err);
	compare_golden(golden_cases[_i].golden, out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* Kernel code only and no events.jsonl: a process map without tasks. */
static const struct vbts_record kernel_only[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x7000, 10),
	BR(0x13, 0x40, 0, VBTS_BR_CALL),
	BR(0x7a, 0x18, 0, VBTS_BR_RET),
	ESC(VBTS_ESC_TASK_DEPART, 0x7000, 20),
	ESC(VBTS_ESC_STOP, 30, 0),
};

static const struct {
	const char *args[5];
	int status;
	const char *golden;     /* stdout, for status 0 */
	const char *error;      /* in stderr, for status 2 */
} no_task_cases[] = {
	{ { "--summary", NULL }, 0, "decode-notasks-summary.txt" },
	{ { "--summary", "--format", "jsonl", NULL }, 0, "decode-notasks-summary.jsonl" },
	/* An image without a symbol table: every address is unknown. */
	{ { "--summary", "--image", SYMTEST_STRIPPED, NULL }, 0, "decode-notasks-stripped.txt" },
	{ { "--task", "1", NULL }, 2, NULL, "no task '1' in events.jsonl" },
	{ { "--crashed", NULL }, 2, NULL, "no crashed task in events.jsonl" },
};

START_TEST(test_no_tasks)
{
	char dir[64], *out, *err, *argv[8];
	int argc = 0, status;

	snprintf(dir, sizeof(dir), "/tmp/vbts-notasks-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, NULL);
	ck_assert_int_eq(vm_json_set_vcpus_1(dir), 0);
	test__write_ring(dir, 0, 16, kernel_only, sizeof(kernel_only) / sizeof(kernel_only[0]), 0);
	argv[argc++] = "decode";
	for (int i = 0; no_task_cases[_i].args[i]; i++)
		argv[argc++] = (char *)no_task_cases[_i].args[i];
	argv[argc++] = dir;
	argv[argc] = NULL;
	status = run_decode(&out, &err, argv);
	ck_assert_msg(status == no_task_cases[_i].status, "exit %d: %s", status, err);
	if (no_task_cases[_i].golden) {
		ck_assert_str_eq(err, "");
		compare_golden(no_task_cases[_i].golden, out);
	} else {
		ck_assert_str_eq(out, "");
		ck_assert_msg(strstr(err, no_task_cases[_i].error), "stderr: %s", err);
	}
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* Lost counts from the ring whose sum does not fit in 64 bits. */
static const struct vbts_record many_lost[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_LOST, 1ULL << 63, 0),
	BR(0x13, 0x40, 0, VBTS_BR_CALL),
	ESC(VBTS_ESC_LOST, 1ULL << 63, 0),
	ESC(VBTS_ESC_LOST, 5, 0),
	ESC(VBTS_ESC_STOP, 30, 0),
};

/* The summary says "at least" the largest count, in text and in valid JSON. */
START_TEST(test_lost_saturated)
{
	char dir[64], *out, *err, *line;
	char *text_argv[] = { "decode", "--summary", dir, NULL };
	char *jsonl_argv[] = { "decode", "--summary", "--format", "jsonl", dir, NULL };
	json_error_t jerr;
	json_t *summary;

	snprintf(dir, sizeof(dir), "/tmp/vbts-lost-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, NULL);
	ck_assert_int_eq(vm_json_set_vcpus_1(dir), 0);
	test__write_ring(dir, 0, 16, many_lost, sizeof(many_lost) / sizeof(many_lost[0]), 0);

	ck_assert_int_eq(run_decode(&out, &err, text_argv), 0);
	compare_golden("decode-lost-saturated-summary.txt", out);
	ck_assert_msg(strstr(out, " >= 18446744073709551615 lost,"), "%s", out);
	free(out);
	free(err);

	ck_assert_int_eq(run_decode(&out, &err, jsonl_argv), 0);
	compare_golden("decode-lost-saturated-summary.jsonl", out);
	line = strstr(out, "{\"type\":\"summary\"");
	ck_assert_ptr_nonnull(line);
	summary = json_loads(line, JSON_DECODE_INT_AS_REAL, &jerr);
	ck_assert_msg(summary, "%s: %s", line, jerr.text);
	ck_assert(json_real_value(json_object_get(summary, "lost")) >= 18446744073709551615.0);
	ck_assert(json_is_true(json_object_get(summary, "lost_saturated")));
	json_decref(summary);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/* Where the symbols come from: vm.json's image, the build-ID cache, --image. */
static const struct {
	const char *image;      /* "SYM": the symtest object */
	const char *build_id;
	bool cache;             /* copy the object to DIR/symbols/<build_id>/executable */
	bool image_opt;         /* pass --image SYM */
	const char *golden;
	const char *warning;    /* in stderr, or NULL */
} sym_cases[] = {
	{ "SYM", "deadbeef01020304", false, false, "decode.txt", NULL },
	{ "SYM", "DEADBEEF01020304", false, false, "decode.txt", NULL },
	{ "/moved/away.elf", "deadbeef01020304", true, false, "decode.txt", NULL },
	{ "SYM", "0123456789abcdef", false, false, "decode-nosyms.txt",
	  "build ID deadbeef01020304 differs from the traced image's 0123456789abcdef" },
	{ "SYM", "0123456789abcdef", false, true, "decode.txt", NULL },
	{ "/moved/away.elf", NULL, false, false, "decode-nosyms.txt",
	  "/moved/away.elf: No such file or directory, no symbols" },
	{ "/moved/away.elf", NULL, false, true, "decode.txt", NULL },
	/* vm.json's image name is not ours either: escaped in the warning. */
	{ "/moved/\\u001b[2J\\u000a\\u202eaway.elf", NULL, false, false, "decode-nosyms.txt",
	  "/moved/\\x1b[2J\\n\\xe2\\x80\\xaeaway.elf: No such file or directory, no symbols" },
};

START_TEST(test_symbol_sources)
{
	char dir[64], path[512], *out, *err, *argv[6];
	int argc = 0, status;

	make_golden_trace(dir);
	write_vm_json(dir, strcmp(sym_cases[_i].image, "SYM") ? sym_cases[_i].image : SYMTEST64,
		      sym_cases[_i].build_id);
	if (sym_cases[_i].cache) {
		snprintf(path, sizeof(path), "%s/symbols", dir);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/symbols/%s", dir, sym_cases[_i].build_id);
		ck_assert_int_eq(mkdir(path, 0755), 0);
		test__copy_file(SYMTEST64, path, "executable");
	}
	argv[argc++] = "decode";
	if (sym_cases[_i].image_opt) {
		argv[argc++] = "--image";
		argv[argc++] = SYMTEST64;
	}
	argv[argc++] = dir;
	argv[argc] = NULL;
	status = run_decode(&out, &err, argv);
	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	assert_printable(err, 2);
	if (sym_cases[_i].warning)
		ck_assert_msg(strstr(err, sym_cases[_i].warning), "stderr: %s", err);
	else
		ck_assert_msg(!strstr(err, "symbols"), "stderr: %s", err);
	compare_golden(sym_cases[_i].golden, out);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * Copies @src to @dst with every occurrence of pairs[i][0] (lens[i] bytes, found at least
 * once) replaced by pairs[i][1] (as long).
 */
static void copy_replacing(const char *src, const char *dst, const char *const (*pairs)[2],
			   size_t npairs, const size_t *lens)
{
	size_t len;
	char *buf = test__slurp(src, &len);

	for (size_t p = 0; p < npairs; p++) {
		size_t hits = 0;

		for (char *at = buf; (at = memmem(at, len - (size_t)(at - buf), pairs[p][0],
						  lens[p])); at += lens[p]) {
			memcpy(at, pairs[p][1], lens[p]);
			hits++;
		}
		ck_assert_msg(hits, "%s: pattern %zu not found", src, p);
	}
	test__write_file(NULL, dst, buf, len);
	free(buf);
}

/* The formats of lines of text that show the guest's names, and their golden files. */
static const struct {
	const char *format, *golden;
} hostile_line_formats[] = {
	{ "calls", "decode-hostile-calls.txt" },
	{ "folded", "decode-hostile.folded" },
	{ "callgrind", "decode-hostile.callgrind" },
	{ "lcov", "decode-hostile.info" },
};

/*
 * Guest-visible BTS drops (VBTS_ESC_GUEST_BTS_DROP): named with the dropped branch (symbolized)
 * and the reason, in text and jsonl, not as an unknown escape; the kvm backend's kernel count
 * (reason kernel) as a number of records.
 */
static const struct vbts_record guest_bts_drops[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	ESC(VBTS_ESC_TASK_ARRIVE, CR3_PING, 100),
	BR(0x13, 0x40, 0, VBTS_BR_CALL),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x45, VBTS_GUEST_BTS_DROP_FULL),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x6f, VBTS_GUEST_BTS_DROP_DS_AREA),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x7a, VBTS_GUEST_BTS_DROP_FIELDS),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x20, VBTS_GUEST_BTS_DROP_BUFFER),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0xb8, VBTS_GUEST_BTS_DROP_INDEX),
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x30, 77),         /* a reason from a newer writer */
	ESC(VBTS_ESC_GUEST_BTS_DROP, 3, VBTS_GUEST_BTS_DROP_KERNEL), /* the kernel's count */
	ESC(VBTS_ESC_STOP, 410, 0),
};

START_TEST(test_guest_bts_drop)
{
	static const char *const formats[][2] = {
		{ "text", "decode-guest-bts-drop.txt" },
		{ "jsonl", "decode-guest-bts-drop.jsonl" },
	};
	char dir[64], path[256], *out, *err;

	snprintf(dir, sizeof(dir), "/tmp/vbts-gbts-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, NULL);
	ck_assert_int_eq(vm_json_set_vcpus_1(dir), 0);
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	test__write_text(NULL, path,
			 "{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,\"name\":\"ping\","
			 "\"cr3\":\"0x203000\"}\n");
	test__write_ring(dir, 0, 64, guest_bts_drops, sizeof(guest_bts_drops) / sizeof(guest_bts_drops[0]),
		   0);
	for (unsigned int i = 0; i < 2; i++) {
		char *argv[] = { "decode", "--format", (char *)formats[i][0], "--summary", dir, NULL };

		ck_assert_int_eq(run_decode(&out, &err, argv), 0);
		ck_assert_str_eq(err, "");
		ck_assert_msg(!strstr(out, "unknown\n") && !strstr(out, "\"type\":\"unknown\""),
			      "%s", out);
		compare_golden(formats[i][1], out);
		free(out);
		free(err);
	}
	remove_trace(dir);
}
END_TEST

/*
 * Guest-chosen symbol names, source file names and task names: the text output shows them
 * escaped, one line per record (no forged lines, nothing a terminal obeys); jsonl stays
 * valid JSON.
 */
START_TEST(test_hostile_names)
{
	/* Same-length replacements in the string tables of the symtest object. */
	static const char *const names[][2] = {
		{ "\0main\0", "\0\x1b[2J\0" },                          /* clears the screen */
		{ "\0parse\0", "\0p\x7f\x1b\x9b\xc3\0" },               /* DEL, 8-bit CSI, cut */
		{ "\0deref\0", "\0d\xc3\xa9\t\\\0" },                   /* valid UTF-8, tab, \ */
		{ "\0isr_entry\0", "\0\n  vcpu0 \0" },                  /* a forged line */
		{ "\0isr_common\0", "\0\xe2\x80\xae" "evil\xff\xfe\r\0" },  /* RLO, invalid, CR */
		{ "symtest.S\0", "s\x1b[31m\ny\x7f\0" },                 /* the DWARF file name */
	};
	static const size_t lens[] = { 6, 7, 7, 11, 12, 10 };
	static const char hostile_events[] =
		"{\"time\":90,\"vcpu\":0,\"event\":\"task\",\"pid\":1,"
		"\"name\":\"\\u001b]0;owned\\u0007\",\"cr3\":\"0x203000\"}\n"
		"{\"time\":95,\"vcpu\":0,\"event\":\"task\",\"pid\":2,"
		"\"name\":\"two\\nlines\\u202e\\u009b\\\\\",\"cr3\":\"0x204000\"}\n";
	char dir[64], image[128], path[256], *out, *err, *pristine, *perr;
	char *text_argv[] = { "decode", "--lines", "--summary", "--image", image, dir, NULL };
	char *plain_argv[] = { "decode", "--summary", "--image", SYMTEST64, dir, NULL };
	char *jsonl_argv[] = { "decode", "--format", "jsonl", "--summary", dir, NULL };
	size_t lines = 0;

	make_golden_trace(dir);
	snprintf(image, sizeof(image), "%s/hostile.o", dir);
	copy_replacing(SYMTEST64, image, names, sizeof(names) / sizeof(names[0]), lens);
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	test__write_text(NULL, path, hostile_events);

	/* As many lines as with harmless names. */
	ck_assert_int_eq(run_decode(&pristine, &perr, plain_argv), 0);
	for (const char *p = pristine; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(run_decode(&out, &err, text_argv), 0);
	ck_assert_str_eq(err, "");
	assert_printable(out, lines);
	compare_golden("decode-hostile.txt", out);
	free(out);
	free(err);

	ck_assert_int_eq(run_decode(&out, &err, jsonl_argv), 0);
	assert_printable(out, SIZE_MAX);
	for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		json_error_t jerr;
		json_t *j;

		*nl = '\0';
		j = json_loads(line, 0, &jerr);
		ck_assert_msg(j, "not JSON: %s (%s)", line, jerr.text);
		json_decref(j);
		*nl = '\n';
	}
	compare_golden("decode-hostile.jsonl", out);
	free(out);
	free(err);
	free(pristine);
	free(perr);

	/* The Chrome trace: one valid JSON document, the guest's names in it. */
	{
		char *perfetto_argv[] = { "decode", "--format", "perfetto", "--image", image,
					  dir, NULL };
		json_error_t jerr;
		json_t *j;

		ck_assert_int_eq(run_decode(&out, &err, perfetto_argv), 0);
		ck_assert_str_eq(err, "");
		assert_printable(out, SIZE_MAX);
		j = json_loads(out, 0, &jerr);
		ck_assert_msg(j, "not JSON: %s (line %d)", jerr.text, jerr.line);
		json_decref(j);
		compare_golden("decode-hostile-perfetto.json", out);
		free(out);
		free(err);
	}

	/* The line formats of their own modules: as many lines, each printable. */
	for (size_t i = 0; i < sizeof(hostile_line_formats) / sizeof(hostile_line_formats[0]);
	     i++) {
		char *fmt = (char *)hostile_line_formats[i].format;
		char *plain_fmt_argv[] = { "decode", "--format", fmt, "--image", SYMTEST64, dir,
					   NULL };
		char *fmt_argv[] = { "decode", "--format", fmt, "--image", image, dir, NULL };

		ck_assert_int_eq(run_decode(&pristine, &perr, plain_fmt_argv), 0);
		lines = 0;
		for (const char *p = pristine; *p; p++)
			lines += *p == '\n';
		ck_assert_int_eq(run_decode(&out, &err, fmt_argv), 0);
		ck_assert_str_eq(err, "");
		compare_golden(hostile_line_formats[i].golden, out);
		/* The formats' own tabs are fine; a guest's tab is written "\t". */
		for (char *p = out; *p; p++)
			*p = *p == '\t' ? ' ' : *p;
		assert_printable(out, lines);
		free(out);
		free(err);
		free(pristine);
		free(perr);
	}
	remove_trace(dir);
}
END_TEST

/*
 * An image whose DWARF fails the checks made before libdw reads it: the same output as
 * without --lines, and one warning that says why.
 */
START_TEST(test_corrupt_dwarf_warning)
{
	/* .debug_str cut to its first byte: the strings run off its end. */
	char dir[64], image[128], *out, *err, *want, *werr;
	char *lines_argv[] = { "decode", "--vcpu", "0", "--last", "4", "--lines", "--image", image,
			       dir, NULL };
	char *plain_argv[] = { "decode", "--vcpu", "0", "--last", "4", "--image", SYMTEST64, dir,
			       NULL };
	const uint32_t one = 1;
	bool patched = false;
	Elf64_Shdr sh, str;
	Elf64_Ehdr eh;
	const char *w;
	int fd;

	make_golden_trace(dir);
	snprintf(image, sizeof(image), "%s/corrupt.o", dir);
	copy_replacing(SYMTEST64, image, NULL, 0, NULL);
	fd = open(image, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	ck_assert_int_eq(pread(fd, &str, sizeof(str),
			       (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(str))),
			 (ssize_t)sizeof(str));
	for (unsigned int i = 1; i < eh.e_shnum && !patched; i++) {
		off_t at = (off_t)(eh.e_shoff + i * sizeof(sh));
		char name[16] = "";

		ck_assert_int_eq(pread(fd, &sh, sizeof(sh), at), (ssize_t)sizeof(sh));
		ck_assert_int_ge(pread(fd, name, sizeof(name) - 1,
				       (off_t)(str.sh_offset + sh.sh_name)), 0);
		if (strcmp(name, ".debug_str"))
			continue;
		ck_assert_int_eq(pwrite(fd, &one, 4, at + (off_t)offsetof(Elf64_Shdr, sh_size)), 4);
		patched = true;
	}
	ck_assert(patched);
	close(fd);

	ck_assert_int_eq(run_decode(&want, &werr, plain_argv), 0);
	ck_assert_int_eq(run_decode(&out, &err, lines_argv), 0);
	ck_assert_str_eq(out, want);
	/* The other warning is the bad line of events.jsonl. */
	w = strstr(err, "corrupt.o: section ");
	ck_assert_msg(w && strstr(w, " (.debug_str): string section not NUL-terminated, no "
				     "source lines\n"), "stderr: %s", err);
	ck_assert_msg(!strstr(strchr(w, '\n'), "no source lines"), "more than one warning: %s",
		      err);
	assert_printable(err, 2);
	free(out);
	free(err);
	free(want);
	free(werr);
	remove_trace(dir);
}
END_TEST

/* One decoder pass; checks every item, returns the number of branches and lost records. */
static uint64_t live_pass(struct trace_dir *t, uint64_t *lost)
{
	struct decoder *d = trace_dir__decoder(t, -1);
	struct decoded_record r;
	uint64_t expected = 0, branches = 0, first, end;
	int ret;

	ck_assert_ptr_nonnull(d);
	*lost = 0;
	while ((ret = decoder__next(d, &r)) > 0) {
		ck_assert_uint_eq(r.seq, expected);
		if (r.type == DECODED_LOST) {
			expected += r.count;
			*lost += r.count;
			continue;
		}
		ck_assert_int_eq(r.type, DECODED_BRANCH);
		ck_assert_uint_eq(r.from, 0x100000 + r.seq);
		ck_assert_uint_eq(r.to, r.seq ^ 0x5555);
		expected++;
		branches++;
	}
	ck_assert_int_eq(ret, 0);
	/* Every seq of the window is accounted for, as a branch or as lost. */
	ring_reader__window(trace_dir__ring(t, 0), &first, &end);
	ck_assert_uint_eq(expected, end);
	decoder__free(d);
	return branches;
}

#define LIVE_RECORDS 3000000ULL

/*
 * The decoder over a ring that a writer process keeps wrapping: every branch it returns is
 * intact (its content encodes its seq) and lost items account for every seq it skips. Once the
 * writer is gone (killed: the ring is not closed), the ring yields capacity - 1 records.
 */
START_TEST(test_live_trace)
{
	struct ring_writer_config cfg = { .capacity = 64, .mode = VBTS_RING_WRAP, .vm_id = 0xab };
	char dir[64], path[256], c;
	struct trace_dir *t;
	uint64_t lost;
	int fds[2], status;
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/vbts-live-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_vm_json(dir, SYMTEST64, NULL);
	ck_assert_int_eq(vm_json_set_vcpus_1(dir), 0);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct ring_writer *w = ring_writer__create(path, &cfg);

		if (!w || write(fds[1], "x", 1) != 1)
			_exit(1);
		for (uint64_t s = 0; s < LIVE_RECORDS; s++) {
			struct vbts_record r = { 0x100000 + s, s ^ 0x5555, 0 };

			ring_writer__append(w, &r);
		}
		_exit(0); /* like a kill: the ring is never closed */
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	close(fds[0]);
	t = trace_dir__open(dir, NULL, path, sizeof(path));
	ck_assert_msg(t, "%s", path);
	do
		live_pass(t, &lost);
	while (waitpid(pid, &status, WNOHANG) == 0);
	/* Not its status: a memory checker may report the writer's unfreed ring there. */
	ck_assert(WIFEXITED(status));
	ck_assert_uint_eq(live_pass(t, &lost), 63);
	ck_assert_uint_eq(lost, LIVE_RECORDS - 63);
	trace_dir__close(t);
	remove_trace(dir);
}
END_TEST

/* A broken or missing ring of a trace that has others: test-inputs.c (the rest is decoded). */
enum bad_setup {
	BAD_NONE, BAD_NO_VMJSON, BAD_VMJSON, BAD_NO_CRASH, BAD_VMJSON_ARRAY, BAD_VMJSON_VCPUS,
	BAD_VMJSON_CONTROL, BAD_VMJSON_BIDI,
};

static const struct {
	enum bad_setup setup;
	const char *args[5];
	const char *want;       /* substring of the one stderr line; "DIR" is the directory */
} bad_cases[] = {
	{ BAD_NONE, { "/nonexistent/trace", NULL }, "/nonexistent/trace: No such file" },
	{ BAD_NO_VMJSON, { "DIR", NULL }, "DIR: no vm.json, not a vbts trace directory" },
	{ BAD_VMJSON, { "DIR", NULL }, "DIR/vm.json: line 1: " },
	{ BAD_VMJSON_ARRAY, { "DIR", NULL }, "DIR/vm.json: not a JSON object" },
	{ BAD_VMJSON_VCPUS, { "DIR", NULL }, "DIR/vm.json: \"vcpus\" must be an integer from 1" },
	/* jansson quotes the bad token: the guest's bytes, escaped. */
	{ BAD_VMJSON_CONTROL, { "DIR", NULL }, "DIR/vm.json: line 1: invalid token near '\\x1b'" },
	{ BAD_VMJSON_BIDI, { "DIR", NULL },
	  "DIR/vm.json: line 1: invalid token near '\\xe2\\x80\\xae" },
	{ BAD_NONE, { "--format", "xml", "DIR", NULL }, "unknown format 'xml'" },
	{ BAD_NONE, { "--format", "\x1b[2J", "DIR", NULL }, "unknown format '\\x1b[2J'" },
	{ BAD_NONE, { "--format", "calls", "--summary", "DIR" },
	  "--summary goes with --format text or jsonl only" },
	{ BAD_NONE, { "--vcpu", "7", "DIR", NULL }, "DIR: no vCPU 7 in this trace" },
	{ BAD_NONE, { "--vcpu", "-1", "DIR", NULL }, "bad vCPU number '-1'" },
	{ BAD_NONE, { "--last", "x", "DIR", NULL }, "bad --last count 'x'" },
	{ BAD_NONE, { "--task", "nobody", "DIR", NULL }, "DIR: no task 'nobody' in events.jsonl" },
	{ BAD_NONE, { "--bogus", "DIR", NULL }, "unknown or incomplete option '--bogus'" },
	{ BAD_NONE, { "--cpl", "2", "DIR", NULL }, "unknown CPL filter '2'" },
	{ BAD_NONE, { "--task", "ping", "--crashed", "DIR" }, "exclude each other" },
	{ BAD_NO_CRASH, { "--crashed", "DIR", NULL }, "DIR: no crashed task in events.jsonl" },
	{ BAD_NONE, { NULL }, "no trace directory given" },
	{ BAD_NONE, { "DIR", "DIR", NULL }, "more than one directory" },
};

START_TEST(test_bad_input)
{
	char dir[64], path[256], want[512], *out, *err, *argv[8];
	const char *p;
	int argc = 0, status;

	make_golden_trace(dir);
	switch (bad_cases[_i].setup) {
	case BAD_NO_VMJSON:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		unlink(path);
		break;
	case BAD_VMJSON:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_text(NULL, path, "{\"vcpus\":");
		break;
	case BAD_VMJSON_ARRAY:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_text(NULL, path, "[1, 2]\n");
		break;
	case BAD_VMJSON_VCPUS:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_text(NULL, path, "{\"vcpus\": 0}\n");
		break;
	case BAD_VMJSON_CONTROL:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_text(NULL, path, "{\"vcpus\":\x1b[2J\x1b]0;owned\a}\n");
		break;
	case BAD_VMJSON_BIDI:
		snprintf(path, sizeof(path), "%s/vm.json", dir);
		test__write_text(NULL, path, "{\"vcpus\":\xe2\x80\xae\xc2\x9b}\n");
		break;
	case BAD_NO_CRASH:
		snprintf(path, sizeof(path), "%s/events.jsonl", dir);
		test__write_text(NULL, path, "{\"event\":\"exit\",\"pid\":2,\"code\":0}\n");
		break;
	default:
		break;
	}
	argv[argc++] = "decode";
	for (int i = 0; bad_cases[_i].args[i]; i++) {
		const char *a = bad_cases[_i].args[i];

		argv[argc++] = strcmp(a, "DIR") ? (char *)a : dir;
	}
	argv[argc] = NULL;
	status = run_decode(&out, &err, argv);
	ck_assert_int_eq(status, 2);
	ck_assert_str_eq(out, "");
	/* Build the expected text with DIR replaced. */
	want[0] = '\0';
	for (p = bad_cases[_i].want; *p;) {
		if (!strncmp(p, "DIR", 3)) {
			strcat(want, dir);
			p += 3;
		} else {
			strncat(want, p++, 1);
		}
	}
	ck_assert_msg(strstr(err, want), "stderr '%s' lacks '%s'", err, want);
	ck_assert_msg(!strncmp(err, "vbts decode: ", 13), "stderr: %s", err);
	assert_printable(err, 2);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

START_TEST(test_help)
{
	char *out, *err, *argv[] = { "decode", "--help", NULL };

	ck_assert_int_eq(run_decode(&out, &err, argv), 0);
	ck_assert(strstr(out, "usage: vbts decode [OPTIONS] DIR"));
	ck_assert_str_eq(err, "");
	free(out);
	free(err);
}
END_TEST

Suite *golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_golden, 0,
			    (int)(sizeof(golden_cases) / sizeof(golden_cases[0])));
	tcase_add_loop_test(tc, test_bad_input, 0,
			    (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_lost_saturated);
	tcase_add_loop_test(tc, test_no_tasks, 0,
			    (int)(sizeof(no_task_cases) / sizeof(no_task_cases[0])));
	tcase_add_test(tc, test_live_trace);
	tcase_add_loop_test(tc, test_symbol_sources, 0,
			    (int)(sizeof(sym_cases) / sizeof(sym_cases[0])));
	tcase_add_test(tc, test_hostile_names);
	tcase_add_test(tc, test_guest_bts_drop);
	tcase_add_test(tc, test_corrupt_dwarf_warning);
	suite_add_tcase(s, tc);
	return s;
}
