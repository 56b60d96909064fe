// SPDX-License-Identifier: GPL-2.0
/*
 * test-threads.c - `vbts decode` of a trace that names the guest's threads: two threads of
 * one process (one address space, one CR3: pids 41 and 42, tgid 41) take turns on one vCPU
 * through thread records, with an entry record of each reason and one of a reason no decoder
 * knows. Text, jsonl, calls and folded output against the golden files
 * tests/data/decode-threads*; --task by a thread's pid, by its tgid and by name; the
 * call stacks kept per thread; perfetto's tracks. And a vfork child announced by a thread
 * event, which runs in its parent's address space, then execs: --task by the name it ran
 * under, by its new name and by its pid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder-test.h"
#include "test-files.h"
#include "test-ring.h"

/* linux-prog.S linked at 0x10000000: _start, work and leaf in .text. */
#define TEXT 0x10001000ULL
#define START (TEXT + 0x00)
#define WORK (TEXT + 0x20)
#define LEAF (TEXT + 0x40)
#define STATIC_BUILD_ID "5747a71c0000000000000000000000000000000a"

#define SH_CR3 0x2000000ULL
#define PROG_CR3 0x3000000ULL
/* A thread's pid and tgid as a thread or task-pid record carries them. */
#define IDS(pid, tgid) ((uint64_t)(tgid) << 32 | (pid))
/* The guest's task_struct addresses, bits 0-55. */
#define TASK41 0x88800a001000ULL
#define TASK42 0x88800a002000ULL

/* Process 41: a shell that execs the program (by build ID); its thread 42 is made after. */
static const char thread_events[] =
	"{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":41,\"tgid\":41,\"name\":\"sh\","
	"\"cr3\":\"0x2000000\"}\n"
	"{\"time\":100,\"vcpu\":0,\"event\":\"exec\",\"pid\":41,\"tgid\":41,\"name\":\"prog\","
	"\"cr3\":\"0x3000000\",\"build_id\":\"" STATIC_BUILD_ID "\"}\n";

static const struct vbts_record thread_ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
	ESC(VBTS_ESC_TASK_ARRIVE, SH_CR3, 10),
	ESC(VBTS_ESC_TASK_PID, IDS(41, 41), 0),
	ESC(VBTS_ESC_THREAD, IDS(41, 41), TASK41),
	BR(0x401000, 0x401100, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_TASK_DEPART, SH_CR3, 90),
	/* 6: the exec: thread 41 begins the program */
	ESC(VBTS_ESC_TASK_ARRIVE, PROG_CR3, 100),
	ESC(VBTS_ESC_TASK_PID, IDS(41, 41), 0),
	ESC(VBTS_ESC_THREAD, IDS(41, 41), TASK41),
	ESC(VBTS_ESC_ENTRY, START, VBTS_ENTRY_EXEC),
	BR(START, WORK, 3, VBTS_BR_CALL),
	BR(WORK, LEAF, 3, VBTS_BR_CALL),
	/* 12: thread 42, new, in the same address space: no task switch; it leaves in leaf */
	ESC(VBTS_ESC_TIME, 150, 0),
	ESC(VBTS_ESC_THREAD, IDS(42, 41), TASK42),
	ESC(VBTS_ESC_ENTRY, WORK, VBTS_ENTRY_FIRST),
	BR(WORK, LEAF, 3, VBTS_BR_CALL),
	/* 16: thread 41 again, where it left (no entry): its stack is its own */
	ESC(VBTS_ESC_THREAD, IDS(41, 41), TASK41),
	BR(LEAF + 1, WORK + 5, 3, VBTS_BR_RET),
	/* 18: thread 42 again, in a signal handler (a stack of its own), then where its frame
	 * said */
	ESC(VBTS_ESC_TIME, 200, 0),
	ESC(VBTS_ESC_THREAD, IDS(42, 41), TASK42),
	ESC(VBTS_ESC_ENTRY, LEAF, VBTS_ENTRY_SIGNAL),
	BR(LEAF + 1, START + 0x10, 3, VBTS_BR_RET),
	ESC(VBTS_ESC_ENTRY, WORK + 0xc, VBTS_ENTRY_SIGRETURN),
	BR(WORK + 0xc, START + 5, 3, VBTS_BR_RET),
	/* 24: a reason no decoder knows: decoded all the same, the number shown */
	ESC(VBTS_ESC_ENTRY, START, 9),
	BR(START + 0xc, 0x401234, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_TASK_DEPART, PROG_CR3, 300),
	ESC(VBTS_ESC_STOP, 310, 0),
};

/* A trace of @n records of @ring in @dir (room for 64 bytes), with @events as events.jsonl. */
static void make_trace(char *dir, const char *events, const struct vbts_record *ring, size_t n)
{
	snprintf(dir, 64, "/tmp/vbts-threads-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	test__write_text(dir, "vm.json",
			 "{\"version\":1,\"vm_id\":\"00000000000000ab\","
			 "\"kernel\":\"/boot/vmlinuz-test\",\"system_map\":\"System.map\","
			 "\"kaslr_slide\":0,\"vcpus\":1,\"backend\":\"kvm\"}\n");
	test__write_text(dir, "System.map", "ffffffff81000000 T _stext\n"
					    "ffffffff81001000 T entry_SYSCALL_64\n"
					    "ffffffff81002000 T _etext\n");
	if (events)
		test__write_text(dir, "events.jsonl", events);
	test__write_ring(dir, 0, 64, ring, n, 0);
}

/* The trace of thread_ring in @dir (room for 64 bytes); @events: with events.jsonl. */
static void make_thread_trace(char *dir, bool events)
{
	make_trace(dir, events ? thread_events : NULL, thread_ring,
		   sizeof(thread_ring) / sizeof(thread_ring[0]));
}

/* `vbts decode --symbols LINUX_STATIC ARGS DIR`; returns the status. */
static int decode_threads(const char *dir, const char *const *args, char **out, char **err)
{
	const char *argv[16];
	int argc = 0;

	argv[argc++] = "--symbols";
	argv[argc++] = LINUX_STATIC;
	for (; *args && argc < 14; args++)
		argv[argc++] = *args;
	argv[argc++] = dir;
	argv[argc] = NULL;
	return run_decode_nofile(out, err, 0, argv);
}

/* The output of `vbts decode ARGS` of the trace, which must succeed without a word. */
static char *decode_ok(const char *dir, const char *const *args)
{
	char *out, *err;
	int status = decode_threads(dir, args, &out, &err);

	ck_assert_msg(status == 0, "exit %d: %s", status, err);
	ck_assert_str_eq(err, "");
	free(err);
	return out;
}

static const struct {
	const char *golden;
	const char *args[6];
	bool tabs;      /* lines are numbered with a tab */
} thread_golden_cases[] = {
	{ "decode-threads.txt", { "--summary", NULL } },
	{ "decode-threads.jsonl", { "--format", "jsonl", NULL } },
	{ "decode-threads-task-42.txt", { "--task", "42", NULL } },
	{ "decode-threads-calls.txt", { "--format", "calls", NULL }, true },
	{ "decode-threads.folded", { "--format", "folded", NULL } },
};

START_TEST(test_threads_golden)
{
	char dir[64], *out;

	make_thread_trace(dir, true);
	out = decode_ok(dir, thread_golden_cases[_i].args);
	if (!thread_golden_cases[_i].tabs)
		assert_printable(out, SIZE_MAX);
	compare_golden(thread_golden_cases[_i].golden, out);
	free(out);
	remove_trace(dir);
}
END_TEST

/* Whether @line (up to its newline) contains @s. */
static bool line_has(const char *line, const char *s)
{
	const char *end = strchr(line, '\n'), *hit = strstr(line, s);

	return hit && (!end || hit < end);
}

/*
 * The text lines of thread 42: its thread record and everything after it up to the next one
 * of another thread, labelled with its pid; the start and stop records, always shown.
 */
START_TEST(test_threads_task_pid)
{
	static const char *const args[] = { "--task", "42", NULL };
	char dir[64], *out;
	size_t lines = 0, entries = 0;

	make_thread_trace(dir, true);
	out = decode_ok(dir, args);
	for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
		lines++;
		if (line_has(l, " start ") || line_has(l, " stop "))
			continue;
		ck_assert_msg(line_has(l, "prog[42]"), "not thread 42's: %.*s",
			      (int)(strchr(l, '\n') - l), l);
		entries += line_has(l, " entry ");
	}
	/* start, 2 thread records, 4 entries, 4 branches, the task's departure, stop */
	ck_assert_uint_eq(lines, 13);
	ck_assert_uint_eq(entries, 4);
	ck_assert_ptr_nonnull(strstr(out, " thread       pid 42 tgid 41\n"));
	ck_assert_ptr_nonnull(strstr(out, " entry        0x10001020 work+0x0  (first)\n"));
	ck_assert_ptr_nonnull(strstr(out, " entry        0x10001040 leaf+0x0  (signal)\n"));
	ck_assert_ptr_nonnull(strstr(out, " entry        0x1000102c work+0xc  (sigreturn)\n"));
	ck_assert_ptr_nonnull(strstr(out, " entry        0x10001000 _start+0x0  (reason 9)\n"));
	ck_assert_ptr_null(strstr(out, "(exec)"));
	free(out);
	remove_trace(dir);
}
END_TEST

/*
 * Every record of the trace is of process 41: its tgid, its name before and after the exec
 * select them all, threads 41 and 42, in every format; so do 41 and 42 together.
 */
START_TEST(test_threads_task_process)
{
	static const char *const formats[] = { "text", "jsonl", "calls", "folded" };
	static const char *const keys[][4] = {
		{ "--task", "41" }, { "--task", "prog" }, { "--task", "sh" },
		{ "--task", "42", "--task", "41" },
	};
	char dir[64], *all, *out;

	make_thread_trace(dir, true);
	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		const char *args[8] = { "--format", formats[f], NULL };

		all = decode_ok(dir, args);
		ck_assert_ptr_nonnull(strstr(all, f == 1 ? "\"pid\":41" : "prog[41]"));
		ck_assert_ptr_nonnull(strstr(all, f == 1 ? "\"pid\":42" : "prog[42]"));
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			for (size_t i = 0; i < 4; i++)
				args[2 + i] = keys[k][i];
			out = decode_ok(dir, args);
			ck_assert_msg(!strcmp(out, all), "--format %s --task %s: %s", formats[f],
				      keys[k][1], out);
			free(out);
		}
		free(all);
	}
	remove_trace(dir);
}
END_TEST

/* The jsonl members of the thread's records: its pid and tgid, the task's name. */
START_TEST(test_threads_jsonl)
{
	static const char *const args[] = { "--format", "jsonl", NULL };
	char dir[64], *out;

	make_thread_trace(dir, true);
	out = decode_ok(dir, args);
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"thread\",\"vcpu\":0,\"seq\":13,"
					  "\"task\":\"prog\",\"pid\":42,\"tgid\":41}\n"));
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"entry\",\"vcpu\":0,\"seq\":14,"
					  "\"to\":\"0x10001020\",\"reason\":\"first\","
					  "\"task\":\"prog\",\"pid\":42,\"tgid\":41}\n"));
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"entry\",\"vcpu\":0,\"seq\":9,"
					  "\"to\":\"0x10001000\",\"reason\":\"exec\","
					  "\"task\":\"prog\",\"pid\":41,\"tgid\":41}\n"));
	ck_assert_ptr_nonnull(strstr(out, "\"reason\":\"signal\""));
	ck_assert_ptr_nonnull(strstr(out, "\"reason\":\"sigreturn\""));
	ck_assert_ptr_nonnull(strstr(out, "\"to\":\"0x10001000\",\"reason\":9,"));
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"branch\",\"vcpu\":0,\"seq\":15,"
					  "\"from\":\"0x10001020\",\"to\":\"0x10001040\",\"cpl\":3,"
					  "\"kind\":\"call\",\"task\":\"prog\",\"pid\":42,"
					  "\"tgid\":41}\n"));
	/* Before the thread is named, the task's own pid: the task-pid record. */
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"task-pid\",\"vcpu\":0,\"seq\":7,"
					  "\"guest_pid\":41,\"guest_tgid\":41,\"task\":\"prog\","
					  "\"pid\":41,\"tgid\":41}\n"));
	free(out);
	remove_trace(dir);
}
END_TEST

/*
 * Without events.jsonl: no task names, a thread is "[pid]" and its pid selects it all the
 * same (the trace names it); a pid neither names is an error, said so.
 */
START_TEST(test_threads_no_events)
{
	static const char *const args[] = { "--task", "42", NULL };
	static const char *const jargs[] = { "--task", "41", "--format", "jsonl", NULL };
	static const char *const bad[] = { "--task", "43", NULL };
	char dir[64], *out, *err;

	make_thread_trace(dir, false);
	out = decode_ok(dir, args);
	ck_assert_ptr_nonnull(strstr(out, "  vcpu0 ---- [42]             thread       "
					  "pid 42 tgid 41\n"));
	ck_assert_ptr_nonnull(strstr(out, "  vcpu0 cpl3 [42]             0x10001020"));
	ck_assert_ptr_null(strstr(out, "[41]"));
	ck_assert_ptr_null(strstr(out, "cr3:"));
	free(out);
	out = decode_ok(dir, jargs);
	ck_assert_ptr_nonnull(strstr(out, "\"to\":\"0x10001020\",\"reason\":\"first\","
					  "\"pid\":42,\"tgid\":41}\n"));
	/* The records before a thread is named have no task: not selected. */
	ck_assert_ptr_null(strstr(out, "task-arrive"));
	free(out);
	ck_assert_int_eq(decode_threads(dir, bad, &out, &err), 2);
	ck_assert_str_eq(out, "");
	ck_assert_msg(strstr(err, "no task '43' in events.jsonl nor a thread of that pid in the "
				  "trace\n"), "%s", err);
	free(out);
	free(err);
	remove_trace(dir);
}
END_TEST

/*
 * The call stacks are per thread: thread 41 returns from leaf into work (its own stack, a
 * segment line written at its first branch after), not from thread 42's; an entry restarts
 * the thread's stack at its function: thread 42, which left in leaf called from work, runs
 * the signal handler leaf at level 0, then work where sigreturn goes back, then _start.
 * Perfetto: a track per thread, in process 41.
 */
START_TEST(test_threads_stacks)
{
	static const char *const calls[] = { "--format", "calls", NULL };
	static const char *const perfetto[] = { "--format", "perfetto", NULL };
	char dir[64], *out;

	make_thread_trace(dir, true);
	out = decode_ok(dir, calls);
	ck_assert_ptr_nonnull(strstr(out, "# vcpu0 prog[41]\n1\t_start\n2\t  work\n"
					  "# vcpu0 prog[42]\n1\twork\n"
					  "# vcpu0 prog[41]\n3\t    leaf\n"
					  "# vcpu0 prog[42]\n2\tleaf\n3\twork\n4\t_start\n"
					  "# vcpu0 prog[41]\n4\t  work\n"
					  "# vcpu0 prog[42]\n5\t[unknown]\n"));
	free(out);
	out = decode_ok(dir, perfetto);
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":41,"
					  "\"tid\":1,\"args\":{\"name\":\"vcpu0 prog[41]\"}}"));
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":41,"
					  "\"tid\":2,\"args\":{\"name\":\"vcpu0 prog[42]\"}}"));
	/* The process of thread 42's track is process 41. */
	ck_assert_ptr_nonnull(strstr(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":41,"
					  "\"tid\":2,\"args\":{\"name\":\"prog[41]\"}}"));
	ck_assert_ptr_null(strstr(out, "\"pid\":42"));
	free(out);
	remove_trace(dir);
}
END_TEST

/*
 * A trace of user mode alone has a system call's or an interrupt's entry to the kernel but
 * never its return: the next branch from the function that made it leaves the kernel's frame,
 * and the stack does not grow by a level at each (it reached the 256 levels of a
 * crashed process's trace, every frame unnamed).
 */
static const struct vbts_record syscall_ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
	ESC(VBTS_ESC_TASK_ARRIVE, PROG_CR3, 100),
	ESC(VBTS_ESC_TASK_PID, IDS(41, 41), 0),
	ESC(VBTS_ESC_THREAD, IDS(41, 41), TASK41),
	ESC(VBTS_ESC_ENTRY, START, VBTS_ENTRY_EXEC),
	BR(START, WORK, 3, VBTS_BR_CALL),
	BR(WORK + 2, 0xffffffff81001000ULL, 3, VBTS_BR_SYSCALL),
	BR(WORK + 4, WORK + 8, 3, VBTS_BR_JMP),
	BR(WORK + 9, 0xffffffff81001000ULL, 3, VBTS_BR_INTERRUPT),
	BR(WORK + 10, WORK + 12, 3, VBTS_BR_JMP),
	BR(WORK + 13, 0xffffffff81001000ULL, 3, VBTS_BR_SYSCALL),
	BR(WORK + 14, START + 5, 3, VBTS_BR_RET),
	BR(START + 6, START + 8, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_TASK_DEPART, PROG_CR3, 300),
	ESC(VBTS_ESC_STOP, 310, 0),
};

START_TEST(test_threads_user_syscalls)
{
	static const char *const calls[] = { "--format", "calls", NULL };
	char dir[64], *out;

	make_trace(dir, thread_events, syscall_ring,
		   sizeof(syscall_ring) / sizeof(syscall_ring[0]));
	out = decode_ok(dir, calls);
	/* work stays one level under _start across its kernel entries, then returns */
	ck_assert_msg(strstr(out, "1\t_start\n2\t  work\n3\t_start\n"), "calls:\n%s", out);
	ck_assert_msg(!strstr(out, "    work"), "work entered again:\n%s", out);
	free(out);
	remove_trace(dir);
}
END_TEST

/* ---- a vfork child ------------------------------------------------------------------------ */

#define PARENT_CR3 0x1000ULL
#define CHILD_CR3 0x2000ULL
#define TASK10 0x88800a010000ULL
#define TASK11 0x88800a011000ULL

/*
 * mt-oracle (pid 10) vforks pid 11, which runs in mt-oracle's address space (a thread event:
 * the CR3 stays mt-oracle's) and execs mt-exec (the static program, by build ID), then exits.
 */
static const char vfork_events[] =
	"{\"time\":10,\"vcpu\":0,\"event\":\"task\",\"pid\":10,\"tgid\":10,"
	"\"name\":\"mt-oracle\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":100,\"vcpu\":0,\"event\":\"thread\",\"pid\":11,\"tgid\":11,"
	"\"name\":\"mt-oracle\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":200,\"vcpu\":0,\"event\":\"exec\",\"pid\":11,\"tgid\":11,"
	"\"name\":\"mt-exec\",\"cr3\":\"0x2000\",\"build_id\":\"" STATIC_BUILD_ID "\"}\n"
	"{\"time\":300,\"vcpu\":0,\"event\":\"exit\",\"pid\":11,\"code\":0}\n";

static const struct vbts_record vfork_ring[] = {
	ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER),
	ESC(VBTS_ESC_TASK_ARRIVE, PARENT_CR3, 10),
	ESC(VBTS_ESC_TASK_PID, IDS(10, 10), 0),
	ESC(VBTS_ESC_THREAD, IDS(10, 10), TASK10),
	BR(0x401000, 0x401100, 3, VBTS_BR_JMP),
	/* 5: the child, in its parent's address space, before its exec */
	ESC(VBTS_ESC_TIME, 100, 0),
	ESC(VBTS_ESC_THREAD, IDS(11, 11), TASK11),
	ESC(VBTS_ESC_ENTRY, 0x401200, VBTS_ENTRY_FIRST),
	BR(0x401200, 0x401300, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, PARENT_CR3, 190),
	/* 10: after its exec */
	ESC(VBTS_ESC_TASK_ARRIVE, CHILD_CR3, 200),
	ESC(VBTS_ESC_TASK_PID, IDS(11, 11), 0),
	ESC(VBTS_ESC_THREAD, IDS(11, 11), TASK11),
	ESC(VBTS_ESC_ENTRY, START, VBTS_ENTRY_EXEC),
	BR(START, WORK, 3, VBTS_BR_CALL),
	ESC(VBTS_ESC_TASK_DEPART, CHILD_CR3, 300),
	/* 16: the parent again */
	ESC(VBTS_ESC_TASK_ARRIVE, PARENT_CR3, 310),
	ESC(VBTS_ESC_TASK_PID, IDS(10, 10), 0),
	ESC(VBTS_ESC_THREAD, IDS(10, 10), TASK10),
	BR(0x401100, 0x401000, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_TASK_DEPART, PARENT_CR3, 400),
	ESC(VBTS_ESC_STOP, 410, 0),
};

static void make_vfork_trace(char *dir)
{
	make_trace(dir, vfork_events, vfork_ring, sizeof(vfork_ring) / sizeof(vfork_ring[0]));
}

/* The number of lines of @text that contain @s. */
static size_t lines_with(const char *text, const char *s)
{
	size_t n = 0;

	for (const char *l = text; *l; l = strchr(l, '\n') + 1)
		n += line_has(l, s);
	return n;
}

/*
 * The records of the child before its exec are labelled with its parent's task (their CR3's)
 * and its own pid (the thread record's); those after, with mt-exec. --task mt-oracle (the
 * name of both processes) selects every record; --task mt-exec the child's process, before
 * its exec too (a record of its thread under its thread event is its process's, whatever its
 * CR3), as --task 11 does; neither the parent's. --task 10, the parent's pid, selects the
 * records of the parent's CR3, which the child's before its exec are as well.
 */
START_TEST(test_threads_vfork)
{
	static const char *const all_args[] = { "--format", "jsonl", NULL };
	static const char *const oracle[] = { "--format", "jsonl", "--task", "mt-oracle", NULL };
	static const char *const exec[] = { "--format", "jsonl", "--task", "mt-exec", NULL };
	static const char *const pid[] = { "--format", "jsonl", "--task", "11", NULL };
	static const char *const parent[] = { "--format", "jsonl", "--task", "10", NULL };
	char dir[64], *all, *out, *by_pid;

	make_vfork_trace(dir);
	all = decode_ok(dir, all_args);
	out = decode_ok(dir, oracle);
	compare_golden("decode-threads-vfork-task-mt-oracle.jsonl", out);
	ck_assert_str_eq(out, all);
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"branch\",\"vcpu\":0,\"seq\":8,"
					  "\"from\":\"0x401200\",\"to\":\"0x401300\",\"cpl\":3,"
					  "\"kind\":\"call\",\"task\":\"mt-oracle\",\"pid\":11,"
					  "\"tgid\":11}\n"));
	ck_assert_ptr_nonnull(strstr(out, "\"task\":\"mt-exec\",\"pid\":11,\"tgid\":11}\n"));
	free(out);
	free(all);

	out = decode_ok(dir, exec);
	compare_golden("decode-threads-vfork-task-mt-exec.jsonl", out);
	/* start, stop; before the exec: thread, entry, branch, depart; after: 6 */
	ck_assert_uint_eq(lines_with(out, "{\"type\":"), 12);
	ck_assert_uint_eq(lines_with(out, "\"pid\":11,\"tgid\":11}"), 10);
	ck_assert_uint_eq(lines_with(out, "\"task\":\"mt-oracle\",\"pid\":11,"), 4);
	ck_assert_uint_eq(lines_with(out, "\"pid\":10,"), 0);
	ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"branch\",\"vcpu\":0,\"seq\":8,"));
	by_pid = decode_ok(dir, pid);
	ck_assert_str_eq(by_pid, out);
	free(by_pid);
	free(out);

	/* The parent's pid: its CR3's records, the child's before its exec among them. */
	out = decode_ok(dir, parent);
	ck_assert_uint_eq(lines_with(out, "{\"type\":"), 16);
	ck_assert_uint_eq(lines_with(out, "\"task\":\"mt-oracle\",\"pid\":11,"), 4);
	ck_assert_uint_eq(lines_with(out, "\"task\":\"mt-exec\""), 0);
	free(out);
	remove_trace(dir);
}
END_TEST

Suite *threads_suite(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_threads_golden, 0,
			    (int)(sizeof(thread_golden_cases) / sizeof(thread_golden_cases[0])));
	tcase_add_test(tc, test_threads_task_pid);
	tcase_add_test(tc, test_threads_task_process);
	tcase_add_test(tc, test_threads_jsonl);
	tcase_add_test(tc, test_threads_no_events);
	tcase_add_test(tc, test_threads_stacks);
	tcase_add_test(tc, test_threads_user_syscalls);
	tcase_add_test(tc, test_threads_vfork);
	suite_add_tcase(s, tc);
	return s;
}
