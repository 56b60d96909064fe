// SPDX-License-Identifier: GPL-2.0
/*
 * test-perf.c - `vbts decode --format perf` read by Debian's unmodified `perf script`: the
 * branches perf synthesizes from the file's Intel BTS data must be those of
 * `vbts decode --format jsonl` of the same trace, in order and as many, and the symbols perf
 * finds through the file's COMM and MMAP2 records must be the ones `vbts decode` names. A
 * trace with hostile task names exports with its names bounded. Skipped (77) without perf.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "decoder-test.h"
#include "test-files.h"
#include "test-ring.h"
#include "test-run.h"

#define PERF "/usr/bin/perf"

/* Room for a command's output. */
#define TOOL_OUT_MAX (1 << 20)

/* linux-prog.S: _start, work and leaf at these offsets of .text (as test-linux-decode.c). */
#define STATIC_TEXT 0x10001000ULL
#define PIE_LOAD_BASE 0x555555554000ULL
#define PIE_TEXT (PIE_LOAD_BASE + 0x1000)
#define START 0x00
#define WORK 0x20
#define LEAF 0x40
#define STATIC_BUILD_ID "5747a71c0000000000000000000000000000000a"
#define KTEXT 0xffffffff82001000ULL

/* The most branches a trace of these tests has. */
#define BRANCHES_MAX 64

/*
 * A branch before any task; a shell (pid 50) that execs the static program (by build ID);
 * a PIE (pid 51, by path, at a known load base); a process without a file (pid 60); a
 * thread (pid 52) of pid 50's program, named by a thread record; kernel branches among them.
 */
static const char events[] =
	"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":50,\"tgid\":50,\"name\":\"sh\","
	"\"cr3\":\"0x2000000\"}\n"
	"{\"time\":200,\"vcpu\":0,\"event\":\"exec\",\"pid\":50,\"tgid\":50,"
	"\"name\":\"vbts-linux-stat\",\"cr3\":\"0x3000000\",\"build_id\":\"" STATIC_BUILD_ID "\"}\n"
	"{\"time\":400,\"vcpu\":0,\"event\":\"exec\",\"pid\":51,\"tgid\":51,"
	"\"name\":\"vbts-linux-pie\",\"cr3\":\"0x4000000\",\"exe\":\"/usr/bin/vbts-linux-pie\","
	"\"load_base\":\"0x555555554000\"}\n"
	"{\"time\":600,\"vcpu\":0,\"event\":\"task\",\"pid\":60,\"tgid\":60,\"name\":\"nofile\","
	"\"cr3\":\"0x6000000\"}\n";

static const struct vbts_record ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL),
	BR(KTEXT + 0x10, KTEXT + 0x20, 0, VBTS_BR_JMP),                 /* no task */
	ESC(VBTS_ESC_TASK_ARRIVE, 0x2000000, 100),
	BR(0x401234, 0x401300, 3, VBTS_BR_CALL),                        /* sh: no file */
	ESC(VBTS_ESC_TASK_DEPART, 0x2000000, 190),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x3000000, 200),
	BR(STATIC_TEXT + START, STATIC_TEXT + WORK, 3, VBTS_BR_CALL),
	BR(STATIC_TEXT + WORK, STATIC_TEXT + LEAF, 3, VBTS_BR_CALL),
	BR(STATIC_TEXT + LEAF + 1, STATIC_TEXT + WORK + 5, 3, VBTS_BR_RET),
	BR(STATIC_TEXT + WORK + 0xa, KTEXT, 3, VBTS_BR_SYSCALL),
	BR(KTEXT + 0x40, KTEXT + 0x200, 0, VBTS_BR_CALL),
	BR(KTEXT + 0x180, STATIC_TEXT + WORK + 0xc, 0, VBTS_BR_SYSRET),
	BR(STATIC_TEXT + WORK + 0xc, STATIC_TEXT + START + 5, 3, VBTS_BR_RET),
	ESC(VBTS_ESC_THREAD, 52 | (50ULL << 32), 0),
	BR(STATIC_TEXT + START + 5, STATIC_TEXT + WORK, 3, VBTS_BR_CALL),
	BR(STATIC_TEXT + WORK, STATIC_TEXT + LEAF, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, 0x3000000, 390),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x4000000, 400),
	BR(PIE_TEXT + START, PIE_TEXT + WORK, 3, VBTS_BR_CALL),
	BR(PIE_TEXT + WORK, PIE_TEXT + LEAF, 3, VBTS_BR_CALL),
	BR(PIE_TEXT + LEAF + 1, PIE_TEXT + WORK + 5, 3, VBTS_BR_RET),
	ESC(VBTS_ESC_TASK_DEPART, 0x4000000, 590),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x6000000, 600),
	BR(0x401000, 0x401100, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_TASK_DEPART, 0x6000000, 690),
	ESC(VBTS_ESC_TASK_ARRIVE, 0x3000000, 700),                      /* back to pid 50 */
	BR(STATIC_TEXT + LEAF + 1, STATIC_TEXT + WORK + 5, 3, VBTS_BR_RET),
	ESC(VBTS_ESC_STOP, 990, 0),
};

/* One branch: its addresses and, where the program names them, their symbols. */
struct branch {
	uint64_t from, to;
	char from_sym[128], to_sym[128];
};

/* The trace in @dir (room for 64 bytes) and its guest's root file system DIR/rootfs. */
static void make_trace(char *dir, const char *ev)
{
	snprintf(dir, 64, "/tmp/vbts-perf-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	test__write_text(dir, "vm.json", "{\"version\":1,\"vm_id\":\"00000000000000ab\","
			 "\"kernel\":\"/boot/vmlinuz-test\",\"vcpus\":1,\"backend\":\"step\"}\n");
	test__write_text(dir, "events.jsonl", ev);
	test__write_ring(dir, 0, 64, ring, sizeof(ring) / sizeof(ring[0]), 0);
	test__make_dir(dir, "rootfs");
	test__make_dir(dir, "rootfs/bin");
	test__make_dir(dir, "rootfs/usr");
	test__make_dir(dir, "rootfs/usr/bin");
	test__copy_file(LINUX_STATIC, dir, "rootfs/bin/vbts-linux-static");
	test__copy_file(LINUX_PIE, dir, "rootfs/usr/bin/vbts-linux-pie");
}

/* @n bytes at @p, little-endian. */
static uint64_t get_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* "HEX [SYM]" of one side of a perf or text line into @addr, @sym ("" when none). */
static void parse_side(const char *s, size_t len, uint64_t *addr, char *sym, size_t size)
{
	char buf[256], *end, *p;

	ck_assert_uint_lt(len, sizeof(buf));
	memcpy(buf, s, len);
	buf[len] = '\0';
	p = buf + strspn(buf, " ");
	errno = 0;
	*addr = strtoull(p, &end, 16);
	ck_assert_msg(!errno && end != p, "no address in '%s'", buf);
	p = end + strspn(end, " ");
	end = p + strcspn(p, " ");
	*end = '\0';
	snprintf(sym, size, "%s", p);
}

/*
 * The branches of `perf script -F ip,sym,symoff,addr` output: lines "IP SYM+OFF => ADDR
 * SYM+OFF" (perf prints BTS samples so). Returns how many.
 */
static size_t parse_perf(char *out, struct branch *b, size_t max)
{
	size_t n = 0;

	for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *arrow;

		*nl = '\0';
		arrow = strstr(line, "=>");
		ck_assert_msg(arrow, "not a branch: '%s'", line);
		ck_assert_uint_lt(n, max);
		parse_side(line, (size_t)(arrow - line), &b[n].from, b[n].from_sym,
			   sizeof(b[n].from_sym));
		parse_side(arrow + 2, strlen(arrow + 2), &b[n].to, b[n].to_sym,
			   sizeof(b[n].to_sym));
		n++;
		*nl = '\n';
	}
	return n;
}

/*
 * The branch lines of `vbts decode` text output ("  vcpu0 cpl3 TASK 0xFROM SYM  =>  0xTO SYM
 * (kind)"). Returns how many.
 */
static size_t parse_text(char *out, struct branch *b, size_t max)
{
	size_t n = 0;

	for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *from, *arrow, *kind;

		*nl = '\0';
		arrow = strstr(line, "  =>  ");
		if (!strncmp(line, "  vcpu", 6) && arrow) {
			ck_assert_uint_lt(n, max);
			from = strstr(line, " 0x");
			ck_assert_ptr_nonnull(from);
			kind = strstr(arrow, "  (");
			parse_side(from, (size_t)(arrow - from), &b[n].from, b[n].from_sym,
				   sizeof(b[n].from_sym));
			parse_side(arrow + 6, kind ? (size_t)(kind - arrow - 6) : strlen(arrow + 6),
				   &b[n].to, b[n].to_sym, sizeof(b[n].to_sym));
			n++;
		}
		*nl = '\n';
	}
	return n;
}

/* The branches of `vbts decode --format jsonl` output, in order. Returns how many. */
static size_t parse_jsonl(const char *out, struct branch *b, size_t max)
{
	size_t n = 0;

	for (const char *p = out; (p = strstr(p, "{\"type\":\"branch\"")); p++) {
		const char *f = strstr(p, "\"from\":\""), *t = strstr(p, "\"to\":\"");

		ck_assert(f && t);
		ck_assert_uint_lt(n, max);
		memset(&b[n], 0, sizeof(b[n]));
		b[n].from = strtoull(f + 8, NULL, 16);
		b[n].to = strtoull(t + 6, NULL, 16);
		n++;
	}
	return n;
}

/* `vbts decode ARGS... -o DIR/perf.data DIR`, which must succeed; its stderr into @err. */
static void export_perf(const char *dir, const char *const *args, char *path, size_t len,
			char **err)
{
	const char *argv[16];
	char *out;
	int argc = 0;

	snprintf(path, len, "%s/perf.data", dir);
	argv[argc++] = "--format";
	argv[argc++] = "perf";
	argv[argc++] = "-o";
	argv[argc++] = path;
	for (; *args; args++)
		argv[argc++] = *args;
	argv[argc++] = dir;
	argv[argc] = NULL;
	ck_assert_int_eq(run_decode_nofile(&out, err, 0, argv), 0);
	ck_assert_str_eq(out, "");
	free(out);
}

/* `perf script` of @path: its branches into @b; returns how many. */
/* What the last perf script printed (its head), for the messages of a failed comparison. */
static char perf_said[2048];

static size_t perf_script(const char *path, struct branch *b, size_t max)
{
	const char *argv[] = { PERF, "script", "-f", "-i", path, "--itrace=b",
			       "-F", "ip,sym,symoff,addr", NULL };
	char *out = malloc(TOOL_OUT_MAX), *err = malloc(TOOL_OUT_MAX);
	size_t n;

	ck_assert(out && err);
	ck_assert_msg(test__run(NULL, argv, out, TOOL_OUT_MAX, err, TOOL_OUT_MAX) == 0,
		      "perf script: %s%s", out, err);
	snprintf(perf_said, sizeof(perf_said), "%s%s", err, out);
	n = parse_perf(out, b, max);
	free(out);
	free(err);
	return n;
}

/*
 * The branches perf lists are those of jsonl, in order; perf names every user address that
 * `vbts decode` names (with --symbols) with the same symbol and offset.
 */
START_TEST(test_perf_script_branches)
{
	static struct branch want[BRANCHES_MAX], got[BRANCHES_MAX], text[BRANCHES_MAX];
	const char *jsonl_argv[] = { "--format", "jsonl", NULL, NULL };
	char dir[64], path[256], rootfs[128], *out, *err;
	const char *text_argv[] = { "--symbols", rootfs, NULL, NULL };
	const char *perf_args[] = { "--symbols", rootfs, NULL };
	size_t n, m, named = 0;

	make_trace(dir, events);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", dir);
	jsonl_argv[2] = dir;
	ck_assert_int_eq(run_decode_nofile(&out, &err, 0, jsonl_argv), 0);
	n = parse_jsonl(out, want, BRANCHES_MAX);
	free(out);
	free(err);
	text_argv[2] = dir;
	ck_assert_int_eq(run_decode_nofile(&out, &err, 0, text_argv), 0);
	ck_assert_uint_eq(parse_text(out, text, BRANCHES_MAX), n);
	free(out);
	free(err);

	export_perf(dir, perf_args, path, sizeof(path), &err);
	free(err);
	m = perf_script(path, got, BRANCHES_MAX);
	ck_assert_uint_eq(m, n);
	ck_assert_uint_eq(n, 16);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(got[i].from == want[i].from && got[i].to == want[i].to,
			      "branch %zu: perf %" PRIx64 " => %" PRIx64 ", jsonl %" PRIx64
			      " => %" PRIx64, i, got[i].from, got[i].to, want[i].from, want[i].to);
		ck_assert(text[i].from == want[i].from && text[i].to == want[i].to);
		if (text[i].from < 1ULL << 63 && text[i].from_sym[0] &&
		    strcmp(text[i].from_sym, "[unknown]")) {
			ck_assert_msg(!strcmp(got[i].from_sym, text[i].from_sym),
				      "branch %zu from: perf %s, decode %s; perf said:\n%s", i,
				      got[i].from_sym, text[i].from_sym, perf_said);
			named++;
		}
		if (text[i].to < 1ULL << 63 && text[i].to_sym[0] &&
		    strcmp(text[i].to_sym, "[unknown]")) {
			ck_assert_msg(!strcmp(got[i].to_sym, text[i].to_sym),
				      "branch %zu to: perf %s, decode %s; perf said:\n%s", i,
				      got[i].to_sym, text[i].to_sym, perf_said);
			named++;
		}
	}
	/* Both programs and the thread named (16 + 6 names): not a comparison of nothing. */
	ck_assert_uint_eq(named, 22);
	remove_trace(dir);
}
END_TEST

/*
 * The golden trace (test-golden.c: two vCPUs, a wrapped ring, tasks, branches of no task, an
 * image that is a relocatable object perf cannot map): every branch, in jsonl's order.
 */
START_TEST(test_perf_golden_trace)
{
	static struct branch want[BRANCHES_MAX], got[BRANCHES_MAX];
	const char *jsonl_argv[] = { "--format", "jsonl", NULL, NULL };
	const char *perf_args[] = { NULL };
	char dir[64], path[256], *out, *err;
	size_t n;

	make_golden_trace(dir);
	jsonl_argv[2] = dir;
	ck_assert_int_eq(run_decode_nofile(&out, &err, 0, jsonl_argv), 0);
	n = parse_jsonl(out, want, BRANCHES_MAX);
	free(out);
	free(err);
	ck_assert_uint_gt(n, 8);
	export_perf(dir, perf_args, path, sizeof(path), &err);
	free(err);
	ck_assert_uint_eq(perf_script(path, got, BRANCHES_MAX), n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i].from == want[i].from && got[i].to == want[i].to,
			      "branch %zu: perf %" PRIx64 " => %" PRIx64 ", jsonl %" PRIx64
			      " => %" PRIx64, i, got[i].from, got[i].to, want[i].from, want[i].to);
	remove_trace(dir);
}
END_TEST

/* --task and --vcpu narrow the export as they narrow jsonl. */
START_TEST(test_perf_task_filter)
{
	static struct branch want[BRANCHES_MAX], got[BRANCHES_MAX];
	const char *jsonl_argv[] = { "--format", "jsonl", "--task", "vbts-linux-pie", NULL, NULL };
	const char *perf_args[] = { "--task", "vbts-linux-pie", "--vcpu", "0", NULL };
	char dir[64], path[256], *out, *err;
	size_t n;

	make_trace(dir, events);
	jsonl_argv[4] = dir;
	ck_assert_int_eq(run_decode_nofile(&out, &err, 0, jsonl_argv), 0);
	n = parse_jsonl(out, want, BRANCHES_MAX);
	free(out);
	free(err);
	ck_assert_uint_eq(n, 3);
	export_perf(dir, perf_args, path, sizeof(path), &err);
	free(err);
	ck_assert_uint_eq(perf_script(path, got, BRANCHES_MAX), n);
	for (size_t i = 0; i < n; i++)
		ck_assert(got[i].from == want[i].from && got[i].to == want[i].to);
	remove_trace(dir);
}
END_TEST

/*
 * Hostile task names (escape sequences, newlines, invalid UTF-8, a long name): the export
 * holds each COMM name escaped and bounded to 15 bytes, and perf still reads every branch.
 */
START_TEST(test_perf_hostile_names)
{
	static const char hostile[] =
		"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":50,\"tgid\":50,"
		"\"name\":\"\\u001b]0;owned\\u0007\",\"cr3\":\"0x2000000\"}\n"
		"{\"time\":200,\"vcpu\":0,\"event\":\"exec\",\"pid\":50,\"tgid\":50,"
		"\"name\":\"two\\nlines\\u202e\\u009b\\\\ and a very long name after them\","
		"\"cr3\":\"0x3000000\",\"build_id\":\"" STATIC_BUILD_ID "\"}\n"
		"{\"time\":400,\"vcpu\":0,\"event\":\"task\",\"pid\":51,\"tgid\":51,"
		"\"name\":\"\\u00ff\\u00fe\\r\\t\",\"cr3\":\"0x4000000\"}\n";
	static struct branch got[BRANCHES_MAX];
	const char *perf_args[] = { NULL };
	char dir[64], path[256], *err;
	unsigned char *data;
	uint64_t off, end;
	size_t len, comms = 0;

	make_trace(dir, hostile);
	export_perf(dir, perf_args, path, sizeof(path), &err);
	free(err);
	data = test__slurp(path, &len);
	/* The data section (header: magic, size, attr_size, attrs, then data's offset, size). */
	ck_assert_uint_ge(len, 104);
	ck_assert(!memcmp(data, "PERFILE2", 8));
	off = get_le(data + 40, 8);
	end = off + get_le(data + 48, 8);
	ck_assert_uint_eq(end, len);
	/* Every COMM record (type 3): a name of printable bytes, at most 15 of them. */
	while (off < end) {
		uint32_t type = (uint32_t)get_le(data + off, 4);
		uint64_t size = get_le(data + off + 6, 2), name_len;

		ck_assert_uint_ge(size, 8);
		ck_assert_uint_le(off + size, end);
		/*
		 * COMM and MMAP2 (type 10): perf reads a map's file in the mount namespace of
		 * /proc/PID; the pid must be no host process's (above pid_max's 2^22).
		 */
		if (type == 3 || type == 10)
			ck_assert_msg(get_le(data + off + 8, 4) >= 1u << 22,
				      "record type %u: pid %" PRIu64 " may be a host process's",
				      type, get_le(data + off + 8, 4));
		if (type == 3) {
			const unsigned char *name = data + off + 16;

			name_len = strnlen((const char *)name, size - 16);
			ck_assert_uint_lt(name_len, size - 16);
			ck_assert_uint_le(name_len, 15);
			for (size_t i = 0; i < name_len; i++)
				ck_assert_msg(name[i] >= 0x20 && name[i] != 0x7f,
					      "byte 0x%02x in a COMM name", name[i]);
			comms++;
		}
		if (type == 71)
			size += get_le(data + off + 8, 8);      /* its BTS records */
		off += size;
	}
	free(data);
	/* The vCPU's thread, the shell, its exec and its thread, the other process. */
	ck_assert_uint_eq(comms, 5);
	ck_assert_uint_eq(perf_script(path, got, BRANCHES_MAX), 16);
	remove_trace(dir);
}
END_TEST

/* -o FILE holds, byte for byte, what stdout gets without it; an unwritable FILE is status 2. */
START_TEST(test_output_file)
{
	static const char *const formats[] = { "text", "jsonl", "perf" };
	char dir[64], path[256], *out, *err, *file;
	size_t len;

	make_trace(dir, events);
	snprintf(path, sizeof(path), "%s/out", dir);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const char *to_stdout[] = { "--format", formats[i], dir, NULL };
		const char *to_file[] = { "--format", formats[i], "-o", path, dir, NULL };
		char *stdout_bytes;

		ck_assert_int_eq(run_decode_nofile(&stdout_bytes, &err, 0, to_stdout), 0);
		free(err);
		ck_assert_int_eq(run_decode_nofile(&out, &err, 0, to_file), 0);
		ck_assert_str_eq(out, "");
		free(out);
		free(err);
		file = test__slurp(path, &len);
		ck_assert_uint_gt(len, 0);
		ck_assert_msg(!memcmp(file, stdout_bytes, len) && stdout_bytes[len] == '\0',
			      "--format %s: -o differs from stdout", formats[i]);
		free(file);
		free(stdout_bytes);
	}
	{
		const char *bad[] = { "--format", "perf", "-o", "/nonexistent/dir/perf.data", dir,
				      NULL };

		ck_assert_int_eq(run_decode_nofile(&out, &err, 0, bad), 2);
		ck_assert_msg(strstr(err, "/nonexistent/dir/perf.data: No such file or directory"),
			      "%s", err);
		free(out);
		free(err);
	}
	remove_trace(dir);
}
END_TEST

static Suite *perf_suite(void)
{
	Suite *s = suite_create("perf");
	TCase *tc = tcase_create("perf-script");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_perf_script_branches);
	tcase_add_test(tc, test_perf_golden_trace);
	tcase_add_test(tc, test_perf_task_filter);
	tcase_add_test(tc, test_perf_hostile_names);
	tcase_add_test(tc, test_output_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	Suite *(*const suites[])(void) = { perf_suite };

	if (access(PERF, X_OK)) {
		printf("skip: %s is not installed (Debian's linux-perf)\n", PERF);
		return 77;
	}
	return check_main__run(suites, 1);
}
