// SPDX-License-Identifier: GPL-2.0
/*
 * test-export.c - the outputs of `vbts decode --format` read by their real consumers: each
 * trace is decoded into a file and handed to the program that reads that format (Debian's
 * genhtml, callgrind_annotate, an Avro reader, speedscope (npm) in Debian's headless Chromium,
 * or, where none is packaged, a reader written from the format's description in
 * tests/unit/decoder/consumers/), which must accept it and find in it what the trace holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "commands.h"
#include "decoder-test.h"
#include "flow.h"
#include "test-files.h"
#include "test-ring.h"
#include "test-run.h"

/* Debian's python3, whose packages (python3-avro) the project installs: not another on PATH. */
#define PYTHON3 "/usr/bin/python3"

/* Room for a command's output kept for messages. */
#define TOOL_OUT_MAX 65536

/*
 * Runs `vbts decode ARGS... DIR` with stdout into @path; returns its exit status and leaves
 * its stderr in @err (at most TOOL_OUT_MAX bytes).
 */
static int decode_into(const char *path, const char *dir, const char *const *args, char *err)
{
	char epath[] = "/tmp/vbts-export-err-XXXXXX";
	int ofd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), efd = mkstemp(epath);
	int argc = 0, status;
	char *argv[24];
	ssize_t n;

	ck_assert(ofd >= 0 && efd >= 0);
	argv[argc++] = "decode";
	for (size_t i = 0; args[i]; i++)
		argv[argc++] = (char *)args[i];
	argv[argc++] = (char *)dir;
	argv[argc] = NULL;
	status = run_command_fds(&cmd_decode, ofd, efd, argv);
	close(ofd);
	n = pread(efd, err, TOOL_OUT_MAX - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(efd);
	unlink(epath);
	return status;
}

/* Runs a program (PATH searched) with stdout and stderr into @out (TOOL_OUT_MAX bytes). */
static int run_tool(const char *const *argv, char *out)
{
	return test__run(NULL, argv, out, TOOL_OUT_MAX, NULL, 0);
}

/* A consumer script of tests/unit/decoder/consumers/. */
static void consumer(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", CONSUMERS_DIR, name);
}

/*
 * Folded stacks as flamegraph.pl reads them (Debian has no flamegraph package): every line
 * taken, and the samples of the golden trace where its branches were made.
 */
START_TEST(test_folded_read)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	const char *args[] = { "--format", "folded", NULL };
	const char *check[] = { PYTHON3, script, out, "12", "ping[1];main=2",
				"ping[1];main;parse=2", "ping[1];main;parse;deref=1",
				"ping[1];main;isr_common=1",
				"crash[2];main;parse;deref;[unknown]=1", "[no task];main=1", NULL };

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/out.folded", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "folded.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	remove_trace(dir);
}
END_TEST

/* Lines that must be in a tool's output. */
static void assert_lines(const char *out, const char *const *want)
{
	for (size_t i = 0; want[i]; i++)
		ck_assert_msg(strstr(out, want[i]), "'%s' not in:\n%s", want[i], out);
	ck_assert_msg(!strstr(out, "WARNING"), "warnings in:\n%s", out);
}

/*
 * Callgrind's profile read by valgrind's callgrind_annotate: every line taken (no warning),
 * the branches made in each function of the golden trace (self and inclusive), and the
 * calls between them with their counts.
 */
START_TEST(test_callgrind_annotate)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX];
	const char *args[] = { "--format", "callgrind", NULL };
	const char *self[] = { "callgrind_annotate", out, NULL };
	const char *incl[] = { "callgrind_annotate", "--inclusive=yes", out, NULL };
	const char *tree[] = { "callgrind_annotate", "--tree=calling", out, NULL };
	static const char *const self_want[] = {
		"12 (100.0%)  PROGRAM TOTALS", "\n4 (33.33%)  symtest.S:main",
		"\n3 (25.00%)  symtest.S:parse", "\n2 (16.67%)  symtest.S:deref",
		"\n1 ( 8.33%)  ???:[unknown]", NULL,
	};
	static const char *const incl_want[] = {
		"\n11 (91.67%)  symtest.S:main", "\n 6 (50.00%)  symtest.S:parse",
		"\n 3 (25.00%)  symtest.S:deref", NULL,
	};
	static const char *const tree_want[] = {
		"6 (50.00%)  >   symtest.S:parse (2x) []",
		"3 (25.00%)  >   symtest.S:deref (2x) []",
		"1 ( 8.33%)  >   ???:[unknown] (1x) []", NULL,
	};

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/callgrind.out", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	ck_assert_msg(run_tool(self, tool) == 0, "%s", tool);
	assert_lines(tool, self_want);
	ck_assert_msg(run_tool(incl, tool) == 0, "%s", tool);
	assert_lines(tool, incl_want);
	ck_assert_msg(run_tool(tree, tool) == 0, "%s", tool);
	assert_lines(tool, tree_want);
	remove_trace(dir);
}
END_TEST

/*
 * Chrome trace JSON read as the Trace Event Format defines it (no trace viewer is packaged
 * in Debian or npm to run here): valid JSON, slices nested per track, every track named, and
 * the calls of the golden trace's tasks as slices.
 */
START_TEST(test_perfetto_read)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	const char *args[] = { "--format", "perfetto", NULL };
	const char *check[] = { PYTHON3, script, out, "ping[1]:main=1", "ping[1]:main>parse=1",
				"ping[1]:main>parse>deref=1", "ping[1]:main>isr_entry=1",
				"ping[1]:main>isr_common=1", "crash[2]:main>parse>deref>[unknown]=1",
				"[no task]:main=1", "[no task]:isr_common=1", NULL };

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/trace.json", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "trace_event.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	ck_assert_str_eq(tool, "13 slices\n");
	remove_trace(dir);
}
END_TEST

/*
 * speedscope (npm), the flame graph viewer, in headless Chromium: it reads folded stacks,
 * callgrind profiles and Chrome trace events, each by its own importer. Decodes the golden
 * trace into @name in the format @format and checks speedscope's Sandwich view (and profile
 * list) for @want (consumers/speedscope.py's arguments).
 */
static void speedscope_check(const char *format, const char *name, const char *const *want)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	const char *args[] = { "--format", format, NULL };
	const char *check[16] = { PYTHON3, script, SPEEDSCOPE_DIR, out };
	size_t n = 4;

	for (size_t i = 0; want[i]; i++) {
		ck_assert_uint_lt(n, sizeof(check) / sizeof(check[0]) - 1);
		check[n++] = want[i];
	}
	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "speedscope.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	remove_trace(dir);
}

/*
 * The golden trace's 12 branches as folded stacks: main is on the stack of 11 of them and
 * makes 4 itself (one per task's main, two in ping's), parse 6 and 3, deref 3 and 2; the task
 * frames carry their branches (ping 6, crash 4, the two of [no task]).
 */
START_TEST(test_speedscope_folded)
{
	const char *want[] = { "main=11/4", "parse=6/3", "deref=3/2", "isr_entry=1/1",
			       "isr_common=1/1", "[unknown]=1/1", "ping[1]=6/0", "crash[2]=4/0",
			       "[no task]=2/0", NULL };

	speedscope_check("folded", "out.folded", want);
}
END_TEST

/*
 * The same trace as a callgrind profile gives the same inclusive and self branches per
 * function (speedscope merges the tasks: callgrind has no task level).
 */
START_TEST(test_speedscope_callgrind)
{
	const char *want[] = { "main=11/4", "parse=6/3", "deref=3/2", "isr_common=1/1",
			       "[unknown]=1/1", NULL };

	speedscope_check("callgrind", "callgrind.out", want);
}
END_TEST

/*
 * As Chrome trace events: a profile per task and vCPU, named as the trace names them, the
 * first (vCPU 1's kernel side) with its one slice of main, 100 ns long.
 */
START_TEST(test_speedscope_chrome_trace)
{
	const char *want[] = { "profile:[no task] (pid 0), vcpu1 [no task] (tid 1)=100.00ns",
			       "profile:ping[1] (pid 1), vcpu0 ping[1] (tid 0)=100.00ns",
			       "profile:crash[2] (pid 2), vcpu0 crash[2] (tid 2)=0.00ns",
			       "main {\"addr\":\"0x0\"}=100.00ns/100.00ns", NULL };

	speedscope_check("perfetto", "trace.json", want);
}
END_TEST

/*
 * The lcov tracefile rendered by genhtml next to symtest.S, the source of the golden trace's
 * image (its line tables name it): the summary counts lines, functions and branches, and the
 * source page shows how often each line ran and the branch taken.
 */
START_TEST(test_lcov_genhtml)
{
	char dir[64], out[128], html[128], page[256], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX];
	const char *args[] = { "--format", "lcov", NULL };
	const char *gen[] = { "genhtml", "--branch-coverage", "--function-coverage", "-o", html,
			      out, NULL };
	static const char *const summary[] = {
		"lines......: 100.0% (6 of 6 lines)", "functions..: 80.0% (4 of 5 functions)",
		"branches...: 100.0% (1 of 1 branch)", NULL,
	};
	static const char *const lines[] = {
		/* main ran 5 times, parse 4 with its branch taken once, deref 3 */
		"lineNum\">      12 </span>                :<span class=\"lineCov\">          5 :",
		"lineNum\">      20 </span>           [<span class=\"branchCov\" title=\"Branch 0 "
		"was taken 1 time\"> + </span>]:<span class=\"lineCov\">          4 :",
		"lineNum\">      27 </span>                :<span class=\"lineCov\">          3 :",
		NULL,
	};
	char *text;

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/trace.info", dir);
	snprintf(html, sizeof(html), "%s/html", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	ck_assert_msg(test__run(CONSUMERS_DIR "/..", gen, tool, TOOL_OUT_MAX, NULL, 0) == 0,
		      "%s", tool);
	assert_lines(tool, summary);
	snprintf(page, sizeof(page), "%s/decoder/symtest.S.gcov.html", html);
	text = test__slurp_or_null(page, NULL);
	ck_assert_msg(text, "%s: not written; genhtml said:\n%s", page, tool);
	for (size_t i = 0; lines[i]; i++)
		ck_assert_msg(strstr(text, lines[i]), "'%s' not in %s", lines[i], page);
	free(text);
	remove_trace(dir);
}
END_TEST

/*
 * The Avro container file read by Apache Avro's Python library (python3-avro, not the C
 * library that wrote it): the schema of decoder/vbts-branch.avsc, a row per branch of the
 * golden trace in decoding order, with its vCPU, time, task and symbols.
 */
START_TEST(test_avro_read)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	const char *args[] = { "--format", "avro", NULL };
	const char *check[] = {
		PYTHON3, script, out, AVRO_SCHEMA, "12",
		"0:vcpu=0", "0:seq=2", "0:time_ns=100", "0:from=19", "0:to=64", "0:cpl=3",
		"0:kind=call", "0:vector=null", "0:cr3=2109440", "0:task=ping", "0:pid=1",
		"0:tgid=null", "0:from_symbol=main", "0:from_offset=19", "0:to_symbol=parse",
		"0:to_offset=0",
		"5:vcpu=1", "5:task=null", "5:cr3=null", "5:time_ns=150", "5:kind=jmp",
		"10:kind=exception", "10:vector=14", "10:task=crash", "10:to_symbol=isr_entry",
		"11:from=4096", "11:kind=null", "11:cpl=null", "11:from_symbol=null",
		"11:from_offset=null", NULL,
	};

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/trace.avro", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "avro_read.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	ck_assert_msg(!strncmp(tool, "deflate {", 9), "%s", tool);
	remove_trace(dir);
}
END_TEST

/*
 * The drcov file read as Lighthouse's drcov parser reads it (consumers/drcov_read.py): the
 * image is the one module, at its own addresses; a block per run between two branches of a
 * task and vCPU (from a target, or a gap's end, to the next source, the source's byte
 * included); the first branch of each stream starts none, and the run into the lost records
 * of crash does not fit the image.
 */
START_TEST(test_drcov_read)
{
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512], path[600];
	const char *args[] = { "--format", "drcov", NULL };
	const char *check[] = { PYTHON3, script, out, "1", "8", "module:0=0x0,0xc0", path,
				"block:0:40:6", "block:0:50:32", "block:0:70:11", "block:0:18:9",
				"block:0:b0:9", "block:0:44:5", "block:0:72:4", "block:0:5:156",
				NULL };

	make_golden_trace(dir);
	snprintf(out, sizeof(out), "%s/trace.drcov", dir);
	snprintf(path, sizeof(path), "path:0=%s", SYMTEST64);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "drcov_read.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	ck_assert_msg(!strncmp(tool, "flavor  drcov\n", 14), "%s", tool);
	remove_trace(dir);
}
END_TEST

/* A trace directory of one vCPU running the image @image with @n records. */
static void make_trace(char *dir, const char *image, const struct vbts_record *recs, size_t n)
{
	char vm[128];
	FILE *f;

	snprintf(dir, 64, "/tmp/vbts-drcov-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(vm, sizeof(vm), "%s/vm.json", dir);
	f = fopen(vm, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"%s\","
		   "\"vcpus\":1}\n", image);
	ck_assert_int_eq(fclose(f), 0);
	test__write_ring(dir, 0, n, recs, n, 0);
}

/*
 * A loop run 50 times gives its blocks once each; a run outside the image is left out and
 * said once on stderr.
 */
START_TEST(test_drcov_dedup)
{
	enum { LOOPS = 50 };
	static struct vbts_record recs[3 * LOOPS + 8];
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	const char *args[] = { "--format", "drcov", NULL };
	const char *check[] = { PYTHON3, script, out, "1", "4", "block:0:40:6", "block:0:50:32",
				"block:0:46:10", "block:0:20:17", NULL };
	size_t n = 0;
	const char *p;

	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL);
	recs[n++] = br(0x13, 0x40, 0, VBTS_BR_CALL);
	for (int i = 0; i < LOOPS; i++) {
		recs[n++] = br(0x45, 0x50, 0, VBTS_BR_JCC);     /* 0x40..0x45 */
		recs[n++] = br(0x6f, 0x46, 0, VBTS_BR_JMP);     /* 0x50..0x6f */
		recs[n++] = br(0x4f, 0x40, 0, VBTS_BR_JMP);     /* 0x46..0x4f */
	}
	recs[n++] = br(0x45, 0x100000, 0, VBTS_BR_JMP);
	recs[n++] = br(0x100010, 0x20, 0, VBTS_BR_JMP);         /* in no module */
	recs[n++] = br(0x30, 0x13, 0, VBTS_BR_RET);             /* 0x20..0x30 */
	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 10, 0);
	make_trace(dir, SYMTEST64, recs, n);
	snprintf(out, sizeof(out), "%s/trace.drcov", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "drcov_read.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	p = strstr(err, "no known module");
	ck_assert_msg(p && !strstr(p + 1, "no known module") &&
		      strstr(err, "drcov: 1 run between branches in no known module"), "%s", err);
	remove_trace(dir);
}
END_TEST

/*
 * An image whose path holds a newline, an escape sequence, ", " (the module table's
 * separator) and a blank at its end (a reader strips the line): one module line with the
 * path escaped.
 */
START_TEST(test_drcov_hostile_path)
{
	static const struct vbts_record recs[] = {
		ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL),
		BR(0x13, 0x40, 0, VBTS_BR_CALL),
		BR(0x45, 0x50, 0, VBTS_BR_JCC),
		ESC(VBTS_ESC_STOP, 10, 0),
	};
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512];
	char image[256], want[400], copy[600];
	const char *args[] = { "--format", "drcov", "--image", image, NULL };
	const char *check[] = { PYTHON3, script, out, "1", "1", "block:0:40:6", want, NULL };
	const char *cp[] = { "cp", SYMTEST64, image, NULL };

	make_trace(dir, SYMTEST64, recs, sizeof(recs) / sizeof(recs[0]));
	snprintf(image, sizeof(image), "%s/ evil\n, 1, 0x0\x1b[31m .o ", dir);
	snprintf(want, sizeof(want), "path:0=%s/ evil\\n\\x2c 1\\x2c 0x0\\x1b[31m .o\\x20",
		 dir);
	ck_assert_msg(run_tool(cp, copy) == 0, "%s", copy);
	snprintf(out, sizeof(out), "%s/trace.drcov", dir);
	ck_assert_msg(decode_into(out, dir, args, err) == 0, "%s", err);
	consumer(script, sizeof(script), "drcov_read.py");
	ck_assert_msg(run_tool(check, tool) == 0, "%s", tool);
	remove_trace(dir);
}
END_TEST

/*
 * Recursion deeper than the stacks keep (FLOW_DEPTH_MAX frames): 600 calls of parse into
 * itself and 600 returns. The folded stacks stay FLOW_DEPTH_MAX frames deep with every branch
 * counted, the Chrome trace stays balanced, and the call history has a line per level kept.
 */
START_TEST(test_deep_recursion)
{
	enum { DEPTH = 600 };
	static struct vbts_record recs[2 * DEPTH + 4];
	char dir[64], out[128], err[TOOL_OUT_MAX], tool[TOOL_OUT_MAX], script[512], vm[512];
	const char *folded[] = { "--format", "folded", NULL };
	const char *perfetto[] = { "--format", "perfetto", NULL };
	const char *calls[] = { "--format", "calls", NULL };
	const char *fold_check[] = { PYTHON3, script, out, "1201", NULL };
	const char *trace_check[] = { PYTHON3, script, out, NULL };
	size_t n = 0, frames, most = 0, lines = 0;
	char *text, *line;
	FILE *f;

	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_START, 0, VBTS_START_CPL_KERNEL);
	recs[n++] = br(0x13, 0x40, 0, VBTS_BR_CALL);
	for (int i = 0; i < DEPTH; i++)
		recs[n++] = br(0x45, 0x40, 0, VBTS_BR_CALL);
	for (int i = 0; i < DEPTH; i++)
		recs[n++] = br(0x6f, 0x46, 0, VBTS_BR_RET);
	recs[n++] = (struct vbts_record)ESC(VBTS_ESC_STOP, 10, 0);
	snprintf(dir, sizeof(dir), "/tmp/vbts-deep-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(vm, sizeof(vm), "%s/vm.json", dir);
	f = fopen(vm, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"image\":\"%s\","
		   "\"vcpus\":1}\n", SYMTEST64);
	ck_assert_int_eq(fclose(f), 0);
	test__write_ring(dir, 0, n, recs, n, 0);

	snprintf(out, sizeof(out), "%s/out.folded", dir);
	ck_assert_msg(decode_into(out, dir, folded, err) == 0, "%s", err);
	consumer(script, sizeof(script), "folded.py");
	ck_assert_msg(run_tool(fold_check, tool) == 0, "%s", tool);
	text = test__slurp(out, NULL);
	for (line = text; *line; line = strchr(line, '\n') + 1) {
		frames = 1;
		for (char *p = line; *p != '\n'; p++)
			frames += *p == ';';
		most = frames > most ? frames : most;
	}
	/* The task's frame ("[no task]") and FLOW_DEPTH_MAX functions. */
	ck_assert_uint_eq(most, 1 + FLOW_DEPTH_MAX);
	free(text);

	snprintf(out, sizeof(out), "%s/trace.json", dir);
	ck_assert_msg(decode_into(out, dir, perfetto, err) == 0, "%s", err);
	consumer(script, sizeof(script), "trace_event.py");
	ck_assert_msg(run_tool(trace_check, tool) == 0, "%s", tool);

	snprintf(out, sizeof(out), "%s/calls.txt", dir);
	ck_assert_msg(decode_into(out, dir, calls, err) == 0, "%s", err);
	text = test__slurp(out, NULL);
	for (line = text; *line; line = strchr(line, '\n') + 1)
		lines++;
	/* Down the kept levels and back up: a header and about two lines a level. */
	ck_assert_msg(lines > FLOW_DEPTH_MAX && lines < 2 * FLOW_DEPTH_MAX + 8, "%zu", lines);
	ck_assert_msg(strstr(text, "[level 255] parse"), "%s", text);
	free(text);
	remove_trace(dir);
}
END_TEST

static Suite *export_suite(void)
{
	Suite *s = suite_create("export");
	TCase *tc = tcase_create("consumers");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_folded_read);
	tcase_add_test(tc, test_callgrind_annotate);
	tcase_add_test(tc, test_perfetto_read);
	tcase_add_test(tc, test_speedscope_folded);
	tcase_add_test(tc, test_speedscope_callgrind);
	tcase_add_test(tc, test_speedscope_chrome_trace);
	tcase_add_test(tc, test_lcov_genhtml);
	tcase_add_test(tc, test_avro_read);
	tcase_add_test(tc, test_drcov_read);
	tcase_add_test(tc, test_drcov_dedup);
	tcase_add_test(tc, test_drcov_hostile_path);
	tcase_add_test(tc, test_deep_recursion);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(export_suite)
