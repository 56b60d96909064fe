// SPDX-License-Identifier: GPL-2.0
/*
 * test-linux.c - the decoder's side of Linux guests: System.map tables (table-tested lines,
 * hostile files, the work of loading and lookups counted), the process map's exec and thread
 * events and process selection.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder-test.h"
#include "procmap-int.h"
#include "symbols-int.h"
#include "test-files.h"

/* A temporary file holding @len bytes of @data; its path in @path (room for 32 bytes). */
static void temp_file(char *path, const void *data, size_t len)
{
	strcpy(path, "/tmp/vbts-linux-XXXXXX");
	test__write_temp(path, data, len);
}

/* ---- process map ---------------------------------------------------------------------------- */

/*
 * A shell (pid 10) forks a child (pid 11, CR3 0x5000 while it is still "sh"), which execs
 * a program with a long name (new CR3 0x6000) and exits; pid 12 then reuses CR3 0x5000, and
 * pid 11 itself is reused by an unrelated process after the exit.
 */
static const char linux_events[] =
	"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":10,\"tgid\":10,\"name\":\"sh\","
	"\"cr3\":\"0x4000\"}\n"
	"{\"time\":200,\"vcpu\":1,\"event\":\"task\",\"pid\":11,\"tgid\":11,\"name\":\"sh\","
	"\"cr3\":\"0x5000\"}\n"
	"{\"time\":300,\"vcpu\":1,\"event\":\"exec\",\"pid\":11,\"tgid\":11,"
	"\"name\":\"vbts-linux-stat\",\"cr3\":\"0x6000\",\"build_id\":\"AB12cd34\","
	"\"exe\":\"/bin/vbts-linux-static\",\"load_base\":\"0x555555554000\"}\n"
	"{\"time\":400,\"vcpu\":1,\"event\":\"exit\",\"pid\":11,\"code\":0}\n"
	"{\"time\":500,\"vcpu\":0,\"event\":\"task\",\"pid\":12,\"tgid\":12,\"name\":\"cat\","
	"\"cr3\":\"0x5000\"}\n"
	"{\"time\":600,\"vcpu\":0,\"event\":\"task\",\"pid\":11,\"tgid\":11,\"name\":\"late\","
	"\"cr3\":\"0x7000\"}\n"
	"{\"time\":700,\"vcpu\":0,\"event\":\"exec\",\"pid\":13,\"tgid\":10,\"name\":\"thread\","
	"\"cr3\":\"0x8000\",\"load_base\":4096}\n"
	/* Bad: each one member wrong. */
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"build_id\":\"../../etc\"}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"build_id\":\"abc\"}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"exe\":\"\"}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"load_base\":\"0xzz\"}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"load_base\":-1}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"tgid\":\"20\"}\n"
	"{\"time\":800,\"event\":\"task\",\"pid\":20,\"name\":\"x\",\"cr3\":\"0x9000\","
	"\"build_id\":\"abcd\"}\n"
	"{\"time\":800,\"event\":\"exec\",\"pid\":20,\"name\":\"x\"}\n";

START_TEST(test_procmap_exec)
{
	const struct procmap_task *t, *sh, *child;
	struct procmap *pm = procmap__new();
	char path[32];
	uint64_t first;
	bool sel[16];

	ck_assert_ptr_nonnull(pm);
	temp_file(path, linux_events, sizeof(linux_events) - 1);
	procmap__use_reference(pm, _i);
	ck_assert_int_eq(procmap__load(pm, path), 0);
	unlink(path);
	ck_assert_uint_eq(procmap__nr_tasks(pm), 6);
	ck_assert_uint_eq(procmap__bad_lines(pm, &first), 8);
	ck_assert_uint_eq(first, 8);

	/* The child before and after its exec: one process, two address spaces. */
	child = procmap__lookup(pm, 0x5000, 250, true);
	ck_assert(child && child->pid == 11 && !strcmp(child->name, "sh") && !child->exec);
	ck_assert(child->tgid_valid && child->tgid == 11 && !child->build_id && !child->exe);
	t = procmap__lookup(pm, 0x6000, 350, true);
	ck_assert(t && t->pid == 11 && !strcmp(t->name, "vbts-linux-stat") && t->exec);
	ck_assert_str_eq(t->build_id, "ab12cd34");
	ck_assert_str_eq(t->exe, "/bin/vbts-linux-static");
	ck_assert(t->load_base_valid && t->load_base == 0x555555554000ULL);
	ck_assert(t->exited && t->exit_code == 0 && t->exit_time == 400);
	ck_assert(!child->exited);
	ck_assert_uint_eq(t->process, child->process);
	ck_assert_ptr_eq(procmap__task(pm, t->index), t);
	/* CR3 0x5000 reused after the exec freed it, pid 11 reused after the exit. */
	t = procmap__lookup(pm, 0x5000, 550, true);
	ck_assert(t && t->pid == 12 && !strcmp(t->name, "cat"));
	t = procmap__lookup(pm, 0x7000, 650, true);
	ck_assert(t && t->pid == 11 && !strcmp(t->name, "late"));
	ck_assert_uint_ne(t->process, child->process);
	sh = procmap__lookup(pm, 0x4000, 150, true);
	ck_assert(sh && sh->pid == 10);
	t = procmap__lookup(pm, 0x8000, 750, true);
	ck_assert(t && t->load_base_valid && t->load_base == 4096 && !t->build_id);
	ck_assert_uint_eq(procmap__nr_processes(pm), 5);

	/* Names: any name a process had; pids: the processes of that pid or tgid. */
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "sh", sel), 2);
	ck_assert(sel[sh->process] && sel[child->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "vbts-linux-stat", sel), 1);
	ck_assert(sel[child->process] && !sel[sh->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "vbts-linux-static", sel), 1);
	ck_assert(sel[child->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "vbts-linux-stXX", sel), 0);
	ck_assert_uint_eq(procmap__select(pm, "11", sel), 2);
	ck_assert(sel[child->process] && !sel[sh->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "10", sel), 2);   /* pid 10, and tgid 10 */
	ck_assert(sel[sh->process] && !sel[child->process]);
	ck_assert_uint_eq(procmap__select(pm, "99", sel), 0);
	ck_assert_uint_eq(procmap__select(pm, "", sel), 0);
	procmap__free(pm);
}
END_TEST

/*
 * A process (pid 10, "mt-oracle", CR3 0x1000) with a thread (pid 12, tgid 10, "mt-worker") and
 * a vfork child (pid 11) that runs in its address space as "mt-oracle", then execs "mt-exec"
 * (CR3 0x2000) and exits; then the parent exits.
 */
static const char thread_events[] =
	"{\"time\":100,\"vcpu\":0,\"event\":\"task\",\"pid\":10,\"tgid\":10,"
	"\"name\":\"mt-oracle\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":200,\"vcpu\":1,\"event\":\"thread\",\"pid\":11,\"tgid\":11,"
	"\"name\":\"mt-oracle\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":250,\"vcpu\":0,\"event\":\"thread\",\"pid\":12,\"tgid\":10,"
	"\"name\":\"mt-worker\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":300,\"vcpu\":1,\"event\":\"exec\",\"pid\":11,\"tgid\":11,"
	"\"name\":\"mt-exec\",\"cr3\":\"0x2000\",\"exe\":\"/mt-exec\"}\n"
	"{\"time\":400,\"vcpu\":1,\"event\":\"exit\",\"pid\":11,\"code\":0}\n"
	"{\"time\":500,\"vcpu\":0,\"event\":\"exit\",\"pid\":10,\"code\":0}\n";

/* A map of @text, by the reference paths when @reference. */
static struct procmap *load_events(const char *text, size_t len, bool reference)
{
	struct procmap *pm = procmap__new();
	char path[32];

	ck_assert_ptr_nonnull(pm);
	temp_file(path, text, len);
	procmap__use_reference(pm, reference);
	ck_assert_int_eq(procmap__load(pm, path), 0);
	unlink(path);
	return pm;
}

START_TEST(test_procmap_thread)
{
	static const uint64_t times[] = { 0, 100, 150, 200, 250, 299, 300, 399, 400, 450, 1000 };
	struct procmap *pm = load_events(thread_events, sizeof(thread_events) - 1, _i);
	const struct procmap_task *a, *child, *worker, *t;
	bool sel[8];

	ck_assert_uint_eq(procmap__bad_lines(pm, NULL), 0);
	ck_assert_uint_eq(procmap__nr_tasks(pm), 2);
	ck_assert_uint_eq(procmap__nr_threads(pm), 2);
	ck_assert_uint_eq(procmap__nr_processes(pm), 3);
	a = procmap__task(pm, 0);
	ck_assert(a->pid == 10 && !strcmp(a->name, "mt-oracle") && !a->thread && a->exited);
	child = procmap__thread(pm, 0);
	ck_assert(child->pid == 11 && child->tgid == 11 && !strcmp(child->name, "mt-oracle"));
	ck_assert(child->thread && child->cr3 == 0x1000 && child->start == 200);
	ck_assert(child->index == 0 && !child->exited);
	worker = procmap__thread(pm, 1);
	ck_assert(worker->pid == 12 && worker->tgid == 10 && worker->thread && worker->index == 1);

	/* CR3 0x1000 stays the parent's at every time; 0x2000 is the child's exec. */
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		ck_assert_ptr_eq(procmap__lookup(pm, 0x1000, times[i], true), a);
		t = procmap__lookup(pm, 0x2000, times[i], true);
		ck_assert(t && t->pid == 11 && !strcmp(t->name, "mt-exec") && t->exec);
		ck_assert(t->exited && t->exit_time == 400 && !t->thread);
		ck_assert_uint_eq(t->process, child->process);
		ck_assert_ptr_eq(procmap__task(pm, t->index), t);
	}
	ck_assert_ptr_eq(procmap__lookup(pm, 0x1000, 0, false), a);
	ck_assert_uint_ne(child->process, a->process);
	ck_assert_uint_ne(worker->process, a->process);
	ck_assert_uint_ne(worker->process, child->process);

	/* The child's thread is its own process's until its exec; the worker's always. */
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 11, 11, 100, true), child); /* the earliest */
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 11, 11, 200, true), child);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 11, 11, 299, true), child);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 11, 11, 0, false), child);
	ck_assert_ptr_null(procmap__lookup_thread(pm, 11, 11, 300, true));
	ck_assert_ptr_null(procmap__lookup_thread(pm, 11, 11, 450, true));
	ck_assert_ptr_null(procmap__lookup_thread(pm, 11, 99, 250, true)); /* another task */
	ck_assert_ptr_null(procmap__lookup_thread(pm, 10, 10, 250, true));
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 12, 10, 1000, true), worker);
	ck_assert_ptr_null(procmap__lookup_thread(pm, 13, 13, 250, true));

	/* A name selects the processes that had it: the child's by the name it ran under. */
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "mt-oracle", sel), 2);
	ck_assert(sel[a->process] && sel[child->process] && !sel[worker->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "mt-exec", sel), 1);
	ck_assert(sel[child->process] && !sel[a->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "11", sel), 1);
	ck_assert(sel[child->process] && !sel[a->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "mt-worker", sel), 1);
	ck_assert(sel[worker->process]);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "10", sel), 2);  /* pid 10, and tgid 10 */
	ck_assert(sel[a->process] && sel[worker->process] && !sel[child->process]);
	ck_assert_ptr_null(procmap__crashed(pm));
	procmap__free(pm);
}
END_TEST

/*
 * Thread events that are bad lines (each one member wrong, as for a task event), that repeat
 * their owner's pid (ignored), whose CR3 no task has, that come before their CR3's task, that
 * end by an exit, and a pid of a thread reused by another task.
 */
static const char hostile_thread_events[] =
	"{\"time\":100,\"event\":\"task\",\"pid\":10,\"tgid\":10,\"name\":\"mt-oracle\","
	"\"cr3\":\"0x1000\"}\n"
	/* 2: bad */
	"{\"time\":200,\"event\":\"thread\",\"pid\":11,\"tgid\":11,\"name\":\"x\","
	"\"cr3\":\"0xzz\"}\n"
	"{\"time\":200,\"event\":\"thread\",\"pid\":11,\"tgid\":11,\"name\":\"x\"}\n"
	"{\"time\":200,\"event\":\"thread\",\"pid\":\"11\",\"name\":\"x\","
	"\"cr3\":\"0x1000\"}\n"
	"{\"time\":200,\"event\":\"thread\",\"pid\":11,\"name\":\"x\",\"cr3\":\"0x1000\","
	"\"build_id\":\"abcd\"}\n"
	"{\"time\":-1,\"event\":\"thread\",\"pid\":11,\"name\":\"x\",\"cr3\":\"0x1000\"}\n"
	"{\"time\":200,\"event\":\"thread\",\"pid\":11,\"tgid\":null,\"name\":\"x\","
	"\"cr3\":\"0x1000\"}\n"
	/* 8: the owner's own pid, later and earlier than its task: ignored */
	"{\"time\":200,\"event\":\"thread\",\"pid\":10,\"tgid\":10,\"name\":\"renamed\","
	"\"cr3\":\"0x1000\"}\n"
	"{\"time\":10,\"event\":\"thread\",\"pid\":10,\"tgid\":10,\"name\":\"early-self\","
	"\"cr3\":\"0x1000\"}\n"
	/* 10: a CR3 no task has; one before its CR3's task (the task owns it all the same) */
	"{\"time\":300,\"event\":\"thread\",\"pid\":12,\"tgid\":12,\"name\":\"orphan\","
	"\"cr3\":\"0x9000\"}\n"
	"{\"time\":50,\"event\":\"thread\",\"pid\":13,\"tgid\":13,\"name\":\"early\","
	"\"cr3\":\"0x1000\"}\n"
	/* 12: a thread of pid 10; its pid reused by a process after it ended, untold */
	"{\"time\":150,\"event\":\"thread\",\"pid\":14,\"tgid\":10,\"name\":\"t14\","
	"\"cr3\":\"0x1000\"}\n"
	"{\"time\":700,\"event\":\"task\",\"pid\":14,\"tgid\":14,\"name\":\"reuse\","
	"\"cr3\":\"0x5000\"}\n"
	/* 14: a vfork child that exits without an exec; its pid reused */
	"{\"time\":160,\"event\":\"thread\",\"pid\":15,\"tgid\":15,\"name\":\"vf\","
	"\"cr3\":\"0x1000\"}\n"
	"{\"time\":170,\"event\":\"exit\",\"pid\":15,\"code\":0}\n"
	"{\"time\":800,\"event\":\"task\",\"pid\":15,\"tgid\":15,\"name\":\"new15\","
	"\"cr3\":\"0x6000\"}\n"
	/* 17: the exit ends the task of pid 10, not its ignored thread announcements */
	"{\"time\":600,\"event\":\"exit\",\"pid\":10,\"code\":139}\n";

/* The thread announcement named @name. */
static const struct procmap_task *thread_named(const struct procmap *pm, const char *name)
{
	for (size_t i = 0; i < procmap__nr_threads(pm); i++)
		if (!strcmp(procmap__thread(pm, i)->name, name))
			return procmap__thread(pm, i);
	ck_abort_msg("no thread announcement %s", name);
	return NULL;
}

START_TEST(test_procmap_thread_hostile)
{
	struct procmap *pm = load_events(hostile_thread_events,
					 sizeof(hostile_thread_events) - 1, _i);
	const struct procmap_task *a, *t, *orphan, *early, *t14, *vf;
	uint64_t first;
	bool sel[16];

	ck_assert_uint_eq(procmap__bad_lines(pm, &first), 6);
	ck_assert_uint_eq(first, 2);
	ck_assert_uint_eq(procmap__nr_tasks(pm), 3);
	ck_assert_uint_eq(procmap__nr_threads(pm), 6);
	/* mt-oracle, orphan, early, t14, reuse, vf, new15: the ignored two are none */
	ck_assert_uint_eq(procmap__nr_processes(pm), 7);
	a = procmap__lookup(pm, 0x1000, 0, false);
	ck_assert(a && a->pid == 10 && !strcmp(a->name, "mt-oracle"));
	for (uint64_t time = 0; time < 1000; time += 50)
		ck_assert_ptr_eq(procmap__lookup(pm, 0x1000, time, true), a);
	ck_assert_ptr_null(procmap__lookup(pm, 0x9000, 300, true));
	ck_assert(a->exited && a->exit_code == 139 && a->exit_time == 600);
	ck_assert_ptr_eq(procmap__crashed(pm), a);

	/* Ignored: no process of their own, no name, never a thread's. */
	t = thread_named(pm, "renamed");
	ck_assert(!t->exited && t->process == a->process);
	ck_assert_uint_eq(thread_named(pm, "early-self")->process, a->process);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "renamed", sel), 0);
	ck_assert_uint_eq(procmap__select(pm, "early-self", sel), 0);
	ck_assert_uint_eq(procmap__select(pm, "10", sel), 2);   /* pid 10, tgid 10: t14 */
	ck_assert(sel[a->process] && sel[thread_named(pm, "t14")->process]);
	ck_assert_ptr_null(procmap__lookup_thread(pm, 10, 10, 250, true));
	ck_assert_ptr_null(procmap__lookup_thread(pm, 10, 10, 10, true));
	ck_assert_ptr_eq(procmap__find(pm, "10"), a);
	ck_assert_ptr_null(procmap__find(pm, "renamed"));

	/* A CR3 no task has, or whose task comes later: processes all the same. */
	orphan = thread_named(pm, "orphan");
	early = thread_named(pm, "early");
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "orphan", sel), 1);
	ck_assert(sel[orphan->process] && !sel[a->process]);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 12, 12, 350, true), orphan);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 13, 13, 60, true), early);
	ck_assert_uint_ne(early->process, a->process);
	ck_assert_ptr_eq(procmap__find(pm, "early"), early);

	/* Another tgid: another task, another process. */
	t14 = thread_named(pm, "t14");
	t = procmap__lookup(pm, 0x5000, 700, true);
	ck_assert(t && t->pid == 14 && t->process != t14->process);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 14, 10, 600, true), t14);
	ck_assert_ptr_null(procmap__lookup_thread(pm, 14, 14, 750, true));

	/* An exit ends a thread announcement's process. */
	vf = thread_named(pm, "vf");
	ck_assert(vf->exited && vf->exit_time == 170);
	ck_assert_ptr_eq(procmap__lookup_thread(pm, 15, 15, 170, true), vf);
	ck_assert_ptr_null(procmap__lookup_thread(pm, 15, 15, 171, true));
	t = procmap__lookup(pm, 0x6000, 800, true);
	ck_assert(t && t->pid == 15 && t->process != vf->process);
	memset(sel, 0, sizeof(sel));
	ck_assert_uint_eq(procmap__select(pm, "15", sel), 2);
	procmap__free(pm);
}
END_TEST

Suite *linux_procmap_suite(void)
{
	Suite *s = suite_create("linux-procmap");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_procmap_exec, 0, 2);
	tcase_add_loop_test(tc, test_procmap_thread, 0, 2);
	tcase_add_loop_test(tc, test_procmap_thread_hostile, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- System.map ----------------------------------------------------------------------------- */

static const struct {
	const char *line;
	int kind;               /* 1 text symbol, 0 other type, -1 malformed */
	uint64_t addr;
	const char *name;
} map_lines[] = {
	{ "ffffffff81000000 T _stext", 1, 0xffffffff81000000ULL, "_stext" },
	{ "ffffffff81000010 t local_fn", 1, 0xffffffff81000010ULL, "local_fn" },
	{ "ffffffff81000020 W weak_fn", 1, 0xffffffff81000020ULL, "weak_fn" },
	{ "ffffffff81000030 w weak_local", 1, 0xffffffff81000030ULL, "weak_local" },
	{ "FFFFFFFF81000040 T upper_hex", 1, 0xffffffff81000040ULL, "upper_hex" },
	{ "1000 T short_address", 1, 0x1000, "short_address" },
	{ "ffffffff81000050 T with_cr\r", 1, 0xffffffff81000050ULL, "with_cr" },
	{ "ffffffff82000000 D data_symbol", 0 },
	{ "ffffffff82000000 B bss_symbol", 0 },
	{ "0000000000000000 A absolute", 0 },
	{ "ffffffff82000000 r rodata", 0 },
	{ "ffffffff82000000 ? unknown_type", 0 },
	{ "", -1 },
	{ "ffffffff81000000", -1 },
	{ "ffffffff81000000 T", -1 },
	{ "ffffffff81000000 T ", -1 },
	{ "ffffffff81000000 TT name", -1 },
	{ "ffffffff81000000  T name", -1 },
	{ "ffffffff81000000 T two words", -1 },
	{ "ffffffff81000000 T tab\tname", -1 },
	{ "ffffffff81000000 T esc\x1b[2J", -1 },
	{ "1ffffffff81000000 T seventeen_digits", -1 },
	{ "0xffffffff81000000 T prefixed", -1 },
	{ "xyz T not_hex", -1 },
	{ "ffffffff81000000 5 digit_type", -1 },
	{ " ffffffff81000000 T leading_blank", -1 },
};

/* Each line alone, then all of them in one file. */
START_TEST(test_system_map_lines)
{
	struct system_map_stats st;
	struct symbol_hit hit;
	struct symbols *s;
	char path[32], text[256];
	int n;

	n = snprintf(text, sizeof(text), "%s\n", map_lines[_i].line);
	temp_file(path, text, (size_t)n);
	s = symbols__load_system_map(path, &st, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(st.lines, 1);
	ck_assert_uint_eq(st.malformed, map_lines[_i].kind < 0);
	ck_assert_uint_eq(st.first_malformed, map_lines[_i].kind < 0 ? 1 : 0);
	ck_assert_uint_eq(symbols__count(s), map_lines[_i].kind > 0);
	ck_assert_uint_eq(symbols__elf_type(s), 0);
	if (map_lines[_i].kind > 0) {
		ck_assert_int_eq(symbols__lookup(s, map_lines[_i].addr, &hit), 0);
		ck_assert_str_eq(hit.name, map_lines[_i].name);
		ck_assert_uint_eq(hit.offset, 0);
		/* The last symbol covers its own address only. */
		ck_assert_int_eq(symbols__lookup(s, map_lines[_i].addr + 1, &hit), -ENOENT);
	}
	symbols__free(s);
	unlink(path);
}
END_TEST

START_TEST(test_system_map_extents)
{
	static const char map[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 t alias_local\n"      /* an alias: the global name wins */
		"ffffffff81000100 T second\n"
		"ffffffff81000180 D data_between\n"     /* not text: no end for second */
		"ffffffff81000200 W weak_third\n"
		"ffffffff81001000 T last\n";
	struct system_map_stats st;
	struct symbol_hit hit;
	struct symbols *s;
	char path[32];

	temp_file(path, map, sizeof(map) - 1);
	s = symbols__load_system_map(path, &st, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(st.lines, 6);
	ck_assert_uint_eq(st.malformed, 0);
	ck_assert(!st.placeholder && !st.cut);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81000000ULL, &hit), 0);
	ck_assert_str_eq(hit.name, "_text");
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff810000ffULL, &hit), 0);
	ck_assert(!strcmp(hit.name, "_text") && hit.offset == 0xff);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff810001ffULL, &hit), 0);
	ck_assert(!strcmp(hit.name, "second") && hit.offset == 0xff);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81000fffULL, &hit), 0);
	ck_assert(!strcmp(hit.name, "weak_third") && hit.offset == 0xdff);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81001000ULL, &hit), 0);
	ck_assert_str_eq(hit.name, "last");
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81001001ULL, &hit), -ENOENT);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff80ffffffULL, &hit), -ENOENT);
	ck_assert_int_eq(symbols__lookup(s, 0, &hit), -ENOENT);
	symbols__free(s);
	unlink(path);
}
END_TEST

/* Debian's placeholder is recognised; an empty file is a map without symbols. */
START_TEST(test_system_map_placeholder)
{
	static const char placeholder[] = "ffffffffffffffff B The real System.map is in the "
					  "linux-image-<version>-dbg package\n";
	struct system_map_stats st;
	struct symbols *s;
	char path[32];

	temp_file(path, placeholder, sizeof(placeholder) - 1);
	s = symbols__load_system_map(path, &st, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert(st.placeholder);
	ck_assert_uint_eq(symbols__count(s), 0);
	symbols__free(s);
	unlink(path);

	temp_file(path, "", 0);
	s = symbols__load_system_map(path, &st, NULL, 0);
	ck_assert_ptr_nonnull(s);
	ck_assert(!st.placeholder && !st.lines && !st.malformed);
	ck_assert_uint_eq(symbols__count(s), 0);
	symbols__free(s);
	unlink(path);
}
END_TEST

/* Lines far longer than any name, binary garbage, NUL bytes: counted, never fatal. */
START_TEST(test_system_map_hostile)
{
	size_t huge = 4u << 20, len = 0;
	struct system_map_stats st;
	struct symbol_hit hit;
	struct symbols *s;
	char path[32], err[256];
	char *buf = malloc(huge + 4096);

	ck_assert_ptr_nonnull(buf);
	len += (size_t)sprintf(buf + len, "ffffffff81000000 T first\n");
	memset(buf + len, 'a', huge);                           /* one 4 MiB line */
	len += huge;
	buf[len++] = '\n';
	for (int i = 0; i < 512; i++)                           /* binary garbage */
		buf[len++] = (char)(i * 37 + 11);
	buf[len++] = '\n';
	memcpy(buf + len, "ffffffff81000100 T nul\0byte\n", 28);
	len += 28;
	len += (size_t)sprintf(buf + len, "ffffffff81000200 T after\n");
	temp_file(path, buf, len);
	free(buf);
	s = symbols__load_system_map(path, &st, err, sizeof(err));
	ck_assert_msg(s, "%s", err);
	ck_assert_uint_eq(symbols__count(s), 2);
	ck_assert_uint_ge(st.malformed, 3);
	ck_assert_uint_eq(st.first_malformed, 2);
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81000100ULL, &hit), 0);
	ck_assert_str_eq(hit.name, "first");
	ck_assert_int_eq(symbols__lookup(s, 0xffffffff81000200ULL, &hit), 0);
	ck_assert_str_eq(hit.name, "after");
	symbols__free(s);
	unlink(path);

	ck_assert_ptr_null(symbols__load_system_map("/nonexistent/System.map", &st, err,
						    sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(symbols__load_system_map("/dev/zero", &st, err, sizeof(err)));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
}
END_TEST

/*
 * Aliases: MAP_ALIASES names at one address, then MAP_ALIASES distinct ones. Loading and each
 * lookup do work bounded by C n and C log n; walking the aliases (n^2 / 2 to load, n per
 * lookup) is 100 times over these bounds.
 */
#define MAP_ALIASES 20000u
#define MAP_LOG2 15
#define MAP_LOAD_PROBES_MAX (8ULL * 2 * MAP_ALIASES)
#define MAP_LOOKUP_PROBES_MAX (8ULL * MAP_LOG2)

START_TEST(test_system_map_aliases)
{
	size_t cap = 2 * MAP_ALIASES * 48, len = 0;
	struct system_map_stats st;
	struct symbol_hit hit;
	struct symbols *s;
	uint64_t probes = 0, worst = 0;
	char path[32];
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	for (unsigned int i = 0; i < MAP_ALIASES; i++)
		len += (size_t)snprintf(buf + len, cap - len, "ffffffff81000000 t alias%05u\n", i);
	for (unsigned int i = 0; i < MAP_ALIASES; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%016" PRIx64 " T fn%05u\n",
					(uint64_t)(0xffffffff81001000ULL + 16 * (uint64_t)i), i);
	temp_file(path, buf, len);
	free(buf);
	s = symbols__load_system_map(path, &st, NULL, 0);
	ck_assert_ptr_nonnull(s);
	unlink(path);
	ck_assert_msg(symbols__load_probes(s) <= MAP_LOAD_PROBES_MAX, "%" PRIu64 " probes to load",
		      symbols__load_probes(s));
	symbols__count_probes(s, &probes);
	for (uint64_t a = 0xffffffff81000000ULL; a < 0xffffffff81001000ULL; a += 0x100) {
		probes = 0;
		ck_assert_int_eq(symbols__lookup(s, a, &hit), 0);
		ck_assert_str_eq(hit.name, "alias00000");
		worst = probes > worst ? probes : worst;
	}
	for (unsigned int i = 0; i < MAP_ALIASES; i += 97) {
		probes = 0;
		ck_assert_int_eq(symbols__lookup(s, 0xffffffff81001000ULL + 16 * (uint64_t)i + 3,
						 &hit), 0);
		ck_assert_uint_eq(hit.offset, 3);
		worst = probes > worst ? probes : worst;
	}
	ck_assert_msg(worst <= MAP_LOOKUP_PROBES_MAX, "%" PRIu64 " probes for one lookup", worst);
	symbols__free(s);
}
END_TEST

static uint64_t rnd(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/*
 * Random maps with few addresses and many aliases, against the rule spelled out: the symbols
 * of the greatest address <= addr, the global one first, then the first name; covering up to
 * the next address (the last one its own address only).
 */
START_TEST(test_system_map_reference)
{
	uint64_t state = 0x2545f4914f6cdd1dULL + (uint64_t)_i;

	for (int round = 0; round < 100; round++) {
		size_t n = rnd(&state) % 24, len = 0;
		uint64_t addrs[24];
		char names[24][8], types[24];
		char text[24 * 40], path[32];
		struct system_map_stats st;
		struct symbols *s;

		for (size_t i = 0; i < n; i++) {
			addrs[i] = 0xffffffff81000000ULL + (rnd(&state) % 6) * 0x10;
			types[i] = "TtWwD"[rnd(&state) % 5];
			snprintf(names[i], sizeof(names[i]), "f%02u", (unsigned int)(rnd(&state) % 50));
			len += (size_t)sprintf(text + len, "%016" PRIx64 " %c %s\n", addrs[i],
					       types[i], names[i]);
		}
		temp_file(path, text, len);
		s = symbols__load_system_map(path, &st, NULL, 0);
		ck_assert_ptr_nonnull(s);
		unlink(path);
		for (uint64_t a = 0xffffffff80fffff0ULL; a < 0xffffffff81000080ULL; a++) {
			const char *want = NULL;
			uint64_t start = 0, end = 0;
			bool global = false, found = false;
			struct symbol_hit hit;
			int ret;

			for (size_t i = 0; i < n; i++)
				if (types[i] != 'D' && addrs[i] <= a && (!found || addrs[i] > start))
					start = addrs[i], found = true;
			for (size_t i = 0; found && i < n; i++) {
				bool g = types[i] == 'T' || types[i] == 'W';

				if (types[i] == 'D' || addrs[i] != start)
					continue;
				if (!want || (g && !global) ||
				    (g == global && strcmp(names[i], want) < 0))
					want = names[i], global = g;
			}
			end = start + 1;
			for (size_t i = 0; found && i < n; i++)
				if (types[i] != 'D' && addrs[i] > start &&
				    (end == start + 1 || addrs[i] < end))
					end = addrs[i];
			if (a >= end)
				want = NULL;
			ret = symbols__lookup(s, a, &hit);
			if (!want && ret != -ENOENT)
				ck_abort_msg("%#" PRIx64 ": %s, want none", a, hit.name);
			if (want && (ret || strcmp(hit.name, want) || hit.offset != a - start))
				ck_abort_msg("%#" PRIx64 ": %s, want %s", a, ret ? "none" : hit.name,
					     want);
		}
		symbols__free(s);
	}
}
END_TEST

Suite *system_map_suite(void)
{
	Suite *s = suite_create("system-map");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_system_map_lines, 0,
			    (int)(sizeof(map_lines) / sizeof(map_lines[0])));
	tcase_add_test(tc, test_system_map_extents);
	tcase_add_test(tc, test_system_map_placeholder);
	tcase_add_test(tc, test_system_map_hostile);
	tcase_add_test(tc, test_system_map_aliases);
	tcase_add_loop_test(tc, test_system_map_reference, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
