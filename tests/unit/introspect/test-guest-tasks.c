// SPDX-License-Identifier: GPL-2.0
/*
 * test-guest-tasks.c - vmm/record/guest-tasks.c on the fake kernel: the task, exec and exit
 * events a Linux guest's CR3 loads give, the --task selection (comm, executable name, pid,
 * children), the final comm after execve, exits found without a CR3 load, hostile comm bytes,
 * thread events copied after their process's exit, the creator's tgid (ppid) of the events,
 * and the new introspection reads it uses (executable name, parent, exit code).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "fake-kernel.h"
#include "guest-tasks.h"
#include "introspect-tests.h"
#include "memory.h"

#define SLIDE 0x1f400000ULL
#define POB 0xffff9a0000000000ULL

static struct fake_kernel fk;
static struct guest_memory *mem;
static struct guest_tasks *gt;
static FILE *events;
static char err[256];

static void setup(void)
{
	fk_create(&fk, NULL);
	fk_boot(&fk, SLIDE, POB, false);
	mem = guest_memory__create(fk.ram_size);
	ck_assert_ptr_nonnull(mem);
	events = tmpfile();
	ck_assert_ptr_nonnull(events);
	gt = NULL;
}

static void teardown(void)
{
	guest_tasks__destroy(gt);
	fclose(events);
	guest_memory__destroy(mem);
	fk_destroy(&fk);
}

/* The guest's RAM as the fake kernel holds it now. */
static void sync_ram(void)
{
	memcpy(guest_memory__ptr(mem, 0, fk.ram_size), fk.ram, fk.ram_size);
}

static void start(const char *const *select, unsigned int nr)
{
	struct guest_tasks_config cfg = {
		.kernel = fk.vmlinux, .select = select, .nr_select = nr, .nr_vcpus = 2, .mem = mem,
	};

	gt = guest_tasks__create(&cfg, err, sizeof(err));
	ck_assert_msg(gt, "%s", err);
	guest_tasks__set_events(gt, events);
	sync_ram();
	ck_assert_int_eq(guest_tasks__attach(gt, fk.root, fk_cr4(&fk), 0), 0);
	ck_assert_msg(guest_tasks__kaslr_slide(gt, &(uint64_t){ 0 }), "no slide");
}

static void set_comm(uint64_t task, const char *comm)
{
	char c[16] = { 0 };

	memcpy(c, comm, strnlen(comm, sizeof(c)));
	fk_wbytes(&fk, task + FK_TASK_COMM, c, sizeof(c));
}

/* Every event written so far, as one JSON array. */
static json_t *read_events(void)
{
	json_t *all = json_array();
	char line[1024];

	fflush(events);
	rewind(events);
	while (fgets(line, sizeof(line), events)) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_msg(o, "not JSON: %s", line);
		json_array_append_new(all, o);
	}
	return all;
}

/* The one event of @kind for @pid; fails unless there is exactly one. */
static json_t *event_of(json_t *all, const char *kind, int pid)
{
	json_t *found = NULL, *o;
	size_t i;

	json_array_foreach(all, i, o) {
		if (strcmp(json_string_value(json_object_get(o, "event")), kind) ||
		    json_integer_value(json_object_get(o, "pid")) != pid)
			continue;
		ck_assert_msg(!found, "two %s events for pid %d", kind, pid);
		found = o;
	}
	ck_assert_msg(found, "no %s event for pid %d in %s", kind, pid, json_dumps(all, JSON_COMPACT));
	return found;
}

static const char *name_of(json_t *o)
{
	return json_string_value(json_object_get(o, "name"));
}

START_TEST(test_exec_exit)
{
	static const char *const sel[] = { "prog" };
	uint64_t pgd_sh = fk_pgd(&fk, true), pgd_child = fk_pgd(&fk, true);
	uint64_t pgd_prog = fk_pgd(&fk, true);
	uint64_t mm_sh = fk_mm(&fk, pgd_sh), mm_child = fk_mm(&fk, pgd_child);
	uint64_t mm_prog = fk_mm(&fk, pgd_prog);
	uint64_t sh, child, tasks[2];
	json_t *all, *o;

	fk_exe(&fk, mm_sh, "busybox");
	fk_exe(&fk, mm_child, "busybox");
	fk_exe(&fk, mm_prog, "prog");
	sh = fk_task(&fk, 10, 10, "sh", mm_sh);
	child = fk_task(&fk, 11, 11, "sh", mm_child);
	fk_w64(&fk, child + FK_TASK_REAL_PARENT, sh);
	tasks[0] = sh;
	tasks[1] = child;
	fk_link(&fk, tasks, 2);
	start(sel, 1);

	ck_assert(!guest_tasks__switch(gt, 0, fk.root, pgd_sh, 100));
	ck_assert(!guest_tasks__switch(gt, 0, pgd_sh, pgd_child, 200));
	/* execve: the new address space is loaded before the comm is set */
	fk_w64(&fk, child + FK_TASK_MM, mm_prog);
	sync_ram();
	ck_assert_msg(guest_tasks__switch(gt, 0, pgd_child, pgd_prog, 300),
		      "the executable's name selects the exec'd process at its first load");
	ck_assert(!guest_tasks__settle(gt, 0, false));
	all = read_events();
	/* the fork child is announced as it was; the exec waits for the final comm */
	ck_assert_str_eq(name_of(event_of(all, "task", 11)), "sh");
	ck_assert_uint_eq(json_array_size(all), 1);
	json_decref(all);

	set_comm(child, "prog");
	sync_ram();
	guest_tasks__settle(gt, 0, false);
	all = read_events();
	o = event_of(all, "exec", 11);
	ck_assert_str_eq(name_of(o), "prog");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "time")), 300);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "tgid")), 11);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "vcpu")), 0);
	json_decref(all);

	/* it dies of SIGSEGV with core; its address space stays loaded (no CR3 load) */
	ck_assert(!guest_tasks__gone(gt, 0, 350));
	fk_w64(&fk, child + FK_TASK_MM, 0);
	fk_w32(&fk, child + FK_TASK_EXIT_CODE, 11 | 0x80);
	sync_ram();
	{
		bool gone[2];

		ck_assert_uint_eq(guest_tasks__reap(gt, 400, gone), 1);
		ck_assert(gone[0] && !gone[1]);
	}
	ck_assert(guest_tasks__gone(gt, 0, 450));
	all = read_events();
	o = event_of(all, "exit", 11);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "code")), 139);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "time")), 400);
	json_decref(all);

	/* the end writes what is still pending: sh's comm never became its executable's name */
	guest_tasks__settle(gt, 0, true);
	all = read_events();
	ck_assert_str_eq(name_of(event_of(all, "task", 10)), "sh");
	json_decref(all);
}
END_TEST

/*
 * An announcement still waiting for the final comm when its address space is taken for
 * another process's (the page tables of an exec'd process used again) is written with the
 * address space it was made for: `vbts attach` settles only at each copy of the rings.
 */
START_TEST(test_pending_keeps_its_address_space)
{
	uint64_t pgd_a = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true);
	uint64_t mm_a = fk_mm(&fk, pgd_a), mm_b = fk_mm(&fk, pgd_b), mm_a2;
	uint64_t sh, other, tasks[2];
	char want[24];
	json_t *all;

	fk_exe(&fk, mm_a, "busybox");
	fk_exe(&fk, mm_b, "prog");
	sh = fk_task(&fk, 10, 10, "sh", mm_a);
	tasks[0] = sh;
	fk_link(&fk, tasks, 1);
	start(NULL, 0);
	/* sh's announcement waits: its comm is not its executable's name */
	guest_tasks__switch(gt, 0, fk.root, pgd_a, 100);
	/* it execs (nothing settles), and its old page tables go to a new process */
	fk_w64(&fk, sh + FK_TASK_MM, mm_b);
	mm_a2 = fk_mm(&fk, pgd_a);
	fk_exe(&fk, mm_a2, "other");
	other = fk_task(&fk, 11, 11, "other", mm_a2);
	tasks[0] = sh;
	tasks[1] = other;
	fk_link(&fk, tasks, 2);
	sync_ram();
	guest_tasks__switch(gt, 1, fk.root, pgd_a, 200);
	guest_tasks__switch(gt, 0, fk.root, pgd_b, 300);
	guest_tasks__settle(gt, 0, true);
	guest_tasks__settle(gt, 1, true);
	all = read_events();
	snprintf(want, sizeof(want), "%#llx", (unsigned long long)guest_tasks__id(pgd_a));
	ck_assert_str_eq(json_string_value(json_object_get(event_of(all, "task", 10), "cr3")),
			 want);
	snprintf(want, sizeof(want), "%#llx", (unsigned long long)guest_tasks__id(pgd_b));
	ck_assert_str_eq(json_string_value(json_object_get(event_of(all, "exec", 10), "cr3")),
			 want);
	json_decref(all);
}
END_TEST

START_TEST(test_select_pid_and_children)
{
	static const char *const sel[] = { "20" };
	uint64_t pgd_a = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true), pgd_c = fk_pgd(&fk, true);
	uint64_t a, b, c, tasks[3];

	a = fk_task(&fk, 20, 20, "server", fk_mm(&fk, pgd_a));
	b = fk_task(&fk, 21, 21, "server", fk_mm(&fk, pgd_b));
	c = fk_task(&fk, 22, 22, "other", fk_mm(&fk, pgd_c));
	fk_w64(&fk, b + FK_TASK_REAL_PARENT, a);
	fk_w64(&fk, c + FK_TASK_REAL_PARENT, fk_init_task(&fk));
	tasks[0] = a;
	tasks[1] = b;
	tasks[2] = c;
	fk_link(&fk, tasks, 3);
	start(sel, 1);

	ck_assert(!guest_tasks__switch(gt, 1, fk.root, pgd_c, 10));
	ck_assert(guest_tasks__switch(gt, 1, pgd_c, pgd_a, 20));
	ck_assert_msg(guest_tasks__switch(gt, 1, pgd_a, pgd_b, 30),
		      "a child of a recorded process is recorded");
	ck_assert(!guest_tasks__switch(gt, 1, pgd_b, pgd_c, 40));
	/* the kernel's own page tables are nobody's to record */
	ck_assert(!guest_tasks__switch(gt, 1, pgd_c, fk.root, 50));
	/* an address space no process has */
	ck_assert(!guest_tasks__switch(gt, 1, fk.root, fk_pgd(&fk, true), 60));
}
END_TEST

START_TEST(test_all_processes)
{
	uint64_t pgd = fk_pgd(&fk, true), t;

	t = fk_task(&fk, 30, 30, "any", fk_mm(&fk, pgd));
	fk_link(&fk, &t, 1);
	start(NULL, 0);
	ck_assert_msg(guest_tasks__switch(gt, 0, fk.root, pgd, 1),
		      "without --task every process is recorded");
	ck_assert(!guest_tasks__switch(gt, 0, pgd, fk.root, 2));
}
END_TEST

START_TEST(test_renewed_address_space)
{
	uint64_t pgd = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true), tasks[2];
	int32_t pid = 0, tgid = 0;

	tasks[0] = fk_task(&fk, 50, 50, "first", fk_mm(&fk, pgd));
	tasks[1] = fk_task(&fk, 51, 51, "other", fk_mm(&fk, pgd_b));
	fk_link(&fk, tasks, 2);
	start(NULL, 0);
	ck_assert(!guest_tasks__current_pid(gt, 0, &pid, &tgid));
	guest_tasks__switch(gt, 0, fk.root, pgd, 1);
	ck_assert_msg(guest_tasks__renewed(gt, 0), "an address space seen the first time");
	ck_assert(guest_tasks__current_pid(gt, 0, &pid, &tgid));
	ck_assert_int_eq(pid, 50);
	ck_assert_int_eq(tgid, 50);
	guest_tasks__switch(gt, 0, pgd, pgd_b, 2);
	guest_tasks__switch(gt, 0, pgd_b, pgd, 3);
	ck_assert_msg(!guest_tasks__renewed(gt, 0), "the same process loaded again");
	/* the first process exits; its page tables go to a new one */
	fk_w64(&fk, tasks[0] + FK_TASK_MM, 0);
	tasks[0] = fk_task(&fk, 52, 52, "second", fk_mm(&fk, pgd));
	fk_link(&fk, tasks, 2);
	sync_ram();
	guest_tasks__switch(gt, 0, pgd, pgd_b, 4);
	ck_assert(!guest_tasks__renewed(gt, 0));
	guest_tasks__switch(gt, 0, pgd_b, pgd, 5);
	ck_assert_msg(guest_tasks__renewed(gt, 0), "page tables used again by another process");
	ck_assert(!guest_tasks__renewed(gt, 7));
}
END_TEST

START_TEST(test_unresolved_not_walked_again)
{
	uint64_t pgd = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true), tasks[2];

	tasks[0] = fk_task(&fk, 60, 60, "other", fk_mm(&fk, pgd_b));
	fk_link(&fk, tasks, 1);
	start(NULL, 0);
	/* no process has pgd: one walk, not one per load */
	for (int i = 0; i < 5; i++) {
		ck_assert(!guest_tasks__switch(gt, 0, pgd_b, pgd, 10 + i));
		ck_assert(guest_tasks__switch(gt, 0, pgd, pgd_b, 10 + i));
	}
	ck_assert_uint_eq(guest_tasks__walks_saved(gt), 4);
	/* a process created since has it: the task list's tail moved */
	tasks[1] = fk_task(&fk, 61, 61, "new", fk_mm(&fk, pgd));
	fk_link(&fk, tasks, 2);
	sync_ram();
	ck_assert_msg(guest_tasks__switch(gt, 0, pgd_b, pgd, 20),
		      "a process created after the walk is found");
	ck_assert_uint_eq(guest_tasks__walks_saved(gt), 4);
}
END_TEST

START_TEST(test_unresolved_walked_again_later)
{
	uint64_t pgd = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true), t;

	t = fk_task(&fk, 70, 70, "other", fk_mm(&fk, pgd_b));
	fk_link(&fk, &t, 1);
	start(NULL, 0);
	ck_assert(!guest_tasks__switch(gt, 0, pgd_b, pgd, 100));
	ck_assert(!guest_tasks__switch(gt, 0, pgd, pgd, 200));
	ck_assert(!guest_tasks__switch(gt, 0, pgd_b, pgd, 300));
	ck_assert_uint_eq(guest_tasks__walks_saved(gt), 2);
	/* a second later it is walked for again, whatever the task list */
	ck_assert(!guest_tasks__switch(gt, 0, pgd_b, pgd, 300 + 2000000000ULL));
	ck_assert_uint_eq(guest_tasks__walks_saved(gt), 2);
}
END_TEST

START_TEST(test_hostile_comm)
{
	uint64_t pgd = fk_pgd(&fk, true), t;
	json_t *all;

	t = fk_task(&fk, 40, 40, "x", fk_mm(&fk, pgd));
	/* invalid UTF-8, a control byte, and no NUL in comm[16] */
	fk_wbytes(&fk, t + FK_TASK_COMM, "\xff\xfe\x01\xc3(abcdefghijklm", 16);
	fk_link(&fk, &t, 1);
	start(NULL, 0);
	guest_tasks__switch(gt, 0, fk.root, pgd, 5);
	guest_tasks__settle(gt, 0, true);
	all = read_events();
	ck_assert_str_eq(name_of(event_of(all, "task", 40)),
			 "\xef\xbf\xbd\xef\xbf\xbd\x01\xef\xbf\xbd(abcdefghijk");
	json_decref(all);
}
END_TEST

START_TEST(test_bad_select)
{
	static const char *const bad[][1] = { { "" }, { "a/b" }, { "99999999999" }, { "12x" } };
	struct guest_tasks_config cfg = { .kernel = fk.vmlinux, .nr_select = 1, .nr_vcpus = 1,
					  .mem = mem };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg.select = bad[i];
		ck_assert_msg(!guest_tasks__create(&cfg, err, sizeof(err)), "--task '%s' accepted",
			      bad[i][0]);
		ck_assert_int_eq(errno, EINVAL);
		ck_assert_msg(strstr(err, "--task"), "%s", err);
	}
}
END_TEST

START_TEST(test_exe_name_reads)
{
	struct introspect_mem m = fk_mem(&fk);
	struct introspect_attach at = { .cr3 = fk.root, .cr4 = fk_cr4(&fk) };
	uint64_t pgd = fk_pgd(&fk, true), mm = fk_mm(&fk, pgd), mm2 = fk_mm(&fk, pgd), parent, t;
	uint64_t dentry, last = POB + fk.ram_size - 4;
	struct kernel_info *ki;
	struct introspect *in;
	struct guest_task gtask;
	char buf[8];
	int32_t ppid;

	dentry = fk_exe(&fk, mm, "longer-name");
	parent = fk_task(&fk, 50, 50, "parent", 0);
	t = fk_task(&fk, 51, 51, "child", mm);
	fk_w64(&fk, t + FK_TASK_REAL_PARENT, parent);
	fk_w32(&fk, t + FK_TASK_EXIT_CODE, 3 << 8);
	fk_link(&fk, &t, 1);
	ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	in = introspect__open(ki, &m, &at, err, sizeof(err));
	ck_assert_msg(in, "%s", err);

	ck_assert_int_eq(introspect__exe_name(in, mm, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "longer-"); /* cut to the buffer */
	ck_assert_int_eq(introspect__exe_name(in, mm2, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(introspect__exe_name(in, 0x1000, buf, sizeof(buf)), -EINVAL);
	/* a name running into the end of RAM, unterminated */
	fk_wbytes(&fk, last, "abcd", 4);
	fk_w64(&fk, dentry + FK_DENTRY_NAME, last);
	ck_assert_int_eq(introspect__exe_name(in, mm, buf, sizeof(buf)), -EFAULT);
	/* a name pointer into user space */
	fk_w64(&fk, dentry + FK_DENTRY_NAME, 0x400000);
	ck_assert_int_eq(introspect__exe_name(in, mm, buf, sizeof(buf)), -EFAULT);

	ck_assert_int_eq(introspect__read_task(in, t, &gtask), 0);
	ck_assert_int_eq(gtask.exit_code, 3 << 8);
	ck_assert_int_eq(introspect__parent_tgid(in, &gtask, &ppid), 0);
	ck_assert_int_eq(ppid, 50);
	fk_w64(&fk, t + FK_TASK_REAL_PARENT, 0x1234);
	ck_assert_int_eq(introspect__read_task(in, t, &gtask), 0);
	ck_assert_int_eq(introspect__parent_tgid(in, &gtask, &ppid), -EINVAL);
	ck_assert_int_eq(introspect__read_task(in, 0x1000, &gtask), -EINVAL);
	introspect__close(in);
	kernel_info__close(ki);
}
END_TEST

/*
 * A thread record copied after its process's exit was seen (the exit on another vCPU, or the
 * CR3 load that saw it copied the ring only afterwards) still announces the thread, under its
 * process's name; task and thread events say which process created theirs (ppid).
 */
START_TEST(test_thread_after_owner_exit)
{
	uint64_t pgd = fk_pgd(&fk, true), pgd_b = fk_pgd(&fk, true), mm = fk_mm(&fk, pgd);
	uint64_t parent, leader, thread, other, tasks[3];
	json_t *all, *o;
	char want[24];

	parent = fk_task(&fk, 7, 7, "init", fk_mm(&fk, fk_pgd(&fk, true)));
	leader = fk_task(&fk, 100, 100, "prog", mm);
	thread = fk_task(&fk, 101, 100, "prog", mm);
	other = fk_task(&fk, 102, 102, "other", fk_mm(&fk, pgd_b));
	fk_exe(&fk, mm, "prog");
	fk_w64(&fk, leader + FK_TASK_REAL_PARENT, parent);
	fk_w64(&fk, thread + FK_TASK_REAL_PARENT, parent);
	fk_w64(&fk, other + FK_TASK_REAL_PARENT, leader);
	tasks[0] = leader;
	tasks[1] = thread;
	tasks[2] = other;
	fk_link(&fk, tasks, 3);
	start(NULL, 0);

	/* the leader runs on vCPU 1, its thread on vCPU 0 */
	guest_tasks__switch(gt, 1, fk.root, pgd, 10);
	guest_tasks__switch(gt, 0, fk.root, pgd, 20);
	guest_tasks__switch(gt, 0, pgd, pgd_b, 25);
	/* both exit; vCPU 1 sees it at its next load, before vCPU 0's ring is copied */
	fk_w64(&fk, leader + FK_TASK_MM, 0);
	fk_w64(&fk, thread + FK_TASK_MM, 0);
	fk_w32(&fk, thread + FK_TASK_PID, 0);
	sync_ram();
	guest_tasks__switch(gt, 1, pgd, pgd_b, 30);
	guest_tasks__thread(gt, 0, 101, 100, thread & 0x00ffffffffffffffULL, pgd, 21);
	guest_tasks__settle(gt, 0, true);
	all = read_events();
	event_of(all, "exit", 100);
	o = event_of(all, "thread", 101);
	ck_assert_str_eq(name_of(o), "prog");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "tgid")), 100);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "time")), 21);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "ppid")), 7);
	snprintf(want, sizeof(want), "%#llx", (unsigned long long)guest_tasks__id(pgd));
	ck_assert_str_eq(json_string_value(json_object_get(o, "cr3")), want);
	ck_assert_int_eq(json_integer_value(json_object_get(event_of(all, "task", 100), "ppid")),
			 7);
	ck_assert_int_eq(json_integer_value(json_object_get(event_of(all, "task", 102), "ppid")),
			 100);
	json_decref(all);

	/* once: the same record again announces nothing */
	guest_tasks__thread(gt, 0, 101, 100, thread & 0x00ffffffffffffffULL, pgd, 22);
	/* a record that is not of the exited process's thread group announces nothing */
	guest_tasks__thread(gt, 0, 103, 555, thread & 0x00ffffffffffffffULL, pgd, 23);
	all = read_events();
	event_of(all, "thread", 101);
	ck_assert_uint_eq(json_array_size(all), 4);
	json_decref(all);
}
END_TEST

/* A task whose parent pointer is no kernel pointer is announced without a ppid. */
START_TEST(test_task_without_parent)
{
	uint64_t pgd = fk_pgd(&fk, true), t;
	json_t *all, *o;

	t = fk_task(&fk, 40, 40, "orphan", fk_mm(&fk, pgd));
	fk_w64(&fk, t + FK_TASK_REAL_PARENT, 0x1234);
	fk_link(&fk, &t, 1);
	start(NULL, 0);
	guest_tasks__switch(gt, 0, fk.root, pgd, 5);
	guest_tasks__settle(gt, 0, true);
	all = read_events();
	o = event_of(all, "task", 40);
	ck_assert_ptr_null(json_object_get(o, "ppid"));
	json_decref(all);
}
END_TEST

Suite *guest_tasks_suite(void)
{
	Suite *s = suite_create("guest-tasks");
	TCase *tc = tcase_create("guest-tasks");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_exec_exit);
	tcase_add_test(tc, test_pending_keeps_its_address_space);
	tcase_add_test(tc, test_select_pid_and_children);
	tcase_add_test(tc, test_all_processes);
	tcase_add_test(tc, test_renewed_address_space);
	tcase_add_test(tc, test_unresolved_not_walked_again);
	tcase_add_test(tc, test_unresolved_walked_again_later);
	tcase_add_test(tc, test_hostile_comm);
	tcase_add_test(tc, test_bad_select);
	tcase_add_test(tc, test_exe_name_reads);
	tcase_add_test(tc, test_thread_after_owner_exit);
	tcase_add_test(tc, test_task_without_parent);
	suite_add_tcase(s, tc);
	return s;
}
