// SPDX-License-Identifier: GPL-2.0
/*
 * test-target.c - the gdb stub's target over trace directories written here: a thread per
 * vCPU, its PC and a crash report's registers; a thread per guest thread when thread records
 * name them, its branches across vCPUs and its blocks broken where it resumes elsewhere;
 * blocks filtered to the thread's CPL with an excursion that comes back left out; a Linux
 * program's memory where its exec loaded it; --task and --vcpu.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "gdbstub-test.h"
#include "test-files.h"
#include "test-ring.h"
#include "trace-target.h"

#define BR(from, to, cpl, kind)                                                              \
	{ (from), (to),                                                                      \
	  VBTS_REC_CPL_VALID | ((uint64_t)(cpl) << VBTS_REC_CPL_SHIFT) |                     \
		  ((uint64_t)(kind) << VBTS_REC_KIND_SHIFT) }
#define ESC(kind, payload, aux)                                                              \
	{ VBTS_ESCAPE, (payload), ((uint64_t)(aux) << VBTS_ESC_AUX_SHIFT) | (kind) }
#define IDS(pid, tgid) ((uint64_t)(tgid) << 32 | (pid))
#define START ESC(VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL)
#define K 0xffffffff81000000ULL

/* A trace of two vCPUs in a new directory @dir (room for 64 bytes). */
static void make_trace(char *dir, const struct vbts_record *r0, size_t n0,
		       const struct vbts_record *r1, size_t n1, const char *events)
{
	snprintf(dir, 64, "/tmp/vbts-gdb-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	test__write_text(dir, "vm.json",
			 "{\"version\":1,\"vm_id\":\"00000000000000ab\",\"vcpus\":2}\n");
	if (events)
		test__write_text(dir, "events.jsonl", events);
	test__write_ring(dir, 0, 64, r0, n0, 0);
	test__write_ring(dir, 1, 64, r1, n1, 0);
}

/* The files make_trace() and the tests write, then the directory. */
static void remove_trace(const char *dir)
{
	static const char *const names[] = { "vm.json", "events.jsonl", "crash.json",
					     "vcpu0.ring", "vcpu1.ring" };
	char path[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}

static struct trace_target *open_target(const char *dir, int vcpu, const char *task)
{
	struct trace_target_options o = { .vcpu = vcpu, .task = task };
	char err[1024];
	struct trace_target *tt = trace_target__open(dir, &o, err, sizeof(err));

	ck_assert_msg(tt != NULL, "%s", err);
	return tt;
}

/* Thread @t's blocks are @want (newest first, @n of them). */
static void check_blocks(struct trace_target *tt, unsigned int t,
			 const struct gdb_btrace_block *want, size_t n)
{
	const struct gdb_btrace_block *b;
	size_t nr;

	ck_assert_int_eq(trace_target__ops()->btrace(tt, t, &b, &nr), 0);
	ck_assert_uint_eq(nr, n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(b[i].begin == want[i].begin && b[i].end == want[i].end,
			      "thread %u block %zu: %#llx-%#llx, want %#llx-%#llx", t, i,
			      (unsigned long long)b[i].begin, (unsigned long long)b[i].end,
			      (unsigned long long)want[i].begin, (unsigned long long)want[i].end);
	}
}

static void check_describe(struct trace_target *tt, unsigned int t, const char *want)
{
	char buf[64];

	trace_target__ops()->describe(tt, t, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
}

/* vCPU 0: user code that makes a system call which comes back to the instruction it left. */
static const struct vbts_record vcpu0_user[] = {
	START,
	BR(0x1000, 0x1100, 3, VBTS_BR_JMP),
	BR(0x1104, K, 3, VBTS_BR_SYSCALL),
	BR(K + 4, K + 8, 0, VBTS_BR_JMP),
	BR(K + 0xc, 0x1104, 0, VBTS_BR_IRET),
	BR(0x1108, 0x1200, 3, VBTS_BR_JMP),
};

/*
 * vCPU 1: kernel code that returns to user code, which comes back in elsewhere; the last
 * branch is a system call from user mode, so the thread is in the kernel.
 */
static const struct vbts_record vcpu1_kernel[] = {
	START,
	BR(K, K + 0x100, 0, VBTS_BR_CALL),
	BR(K + 0x104, 0x5000, 0, VBTS_BR_SYSRET),
	BR(0x5004, 0x5010, 3, VBTS_BR_JMP),
	BR(0x5014, K + 0x200, 3, VBTS_BR_SYSCALL),
	BR(K + 0x208, K + 0x300, 0, VBTS_BR_JMP),
	BR(K + 0x304, 0x6000, 0, VBTS_BR_SYSRET),
	BR(0x6004, K + 0x400, 3, VBTS_BR_SYSCALL),
};

START_TEST(test_target_vcpus)
{
	static const struct gdb_btrace_block user[] = { { 0x1200, 0x1200 }, { 0x1100, 0x1108 } };
	static const struct gdb_btrace_block kernel[] = {
		{ K + 0x400, K + 0x400 }, { K + 0x300, K + 0x304 }, { K + 0x200, K + 0x208 },
		{ K + 0x100, K + 0x104 },
	};
	struct trace_target *tt;
	struct gdb_regs r;
	char dir[64];

	make_trace(dir, vcpu0_user, sizeof(vcpu0_user) / sizeof(vcpu0_user[0]), vcpu1_kernel,
		   sizeof(vcpu1_kernel) / sizeof(vcpu1_kernel[0]), NULL);
	test__write_text(dir, "crash.json", "{\"version\":1,\"reason\":\"panic\",\"time\":5,"
			 "\"vcpu\":1,\"cr3\":null,\"process\":null,\"registers\":"
			 "{\"rip\":\"0x99\",\"rsp\":\"0x8000\",\"rax\":\"0x1\",\"cr2\":\"0x5\"},"
			 "\"branches\":[]}\n");
	tt = open_target(dir, -1, NULL);
	ck_assert_uint_eq(trace_target__ops()->nr_threads(tt), 2);
	check_describe(tt, 0, "vCPU 0");
	check_describe(tt, 1, "vCPU 1");
	check_blocks(tt, 0, user, 2);
	check_blocks(tt, 1, kernel, 4);
	/* The PC is the trace's; the crash report gives the others. */
	trace_target__ops()->regs(tt, 0, &r);
	ck_assert_uint_eq(r.valid, 1u << GDB_REG_RIP);
	ck_assert_uint_eq(r.val[GDB_REG_RIP], 0x1200);
	trace_target__ops()->regs(tt, 1, &r);
	ck_assert_uint_eq(r.valid, 1u << GDB_REG_RIP | 1u << GDB_REG_RSP | 1u << GDB_REG_RAX);
	ck_assert_uint_eq(r.val[GDB_REG_RIP], K + 0x400);
	ck_assert_uint_eq(r.val[GDB_REG_RSP], 0x8000);
	/* Nothing is mapped without an image. */
	ck_assert_uint_eq(trace_target__ops()->read_mem(tt, 0, 0x1000, &r, 1), 0);
	trace_target__close(tt);

	tt = open_target(dir, 1, NULL);
	ck_assert_uint_eq(trace_target__ops()->nr_threads(tt), 1);
	check_describe(tt, 0, "vCPU 1");
	check_blocks(tt, 0, kernel, 4);
	trace_target__close(tt);
	remove_trace(dir);
}
END_TEST

/* Thread 41 runs on vCPU 0, then on vCPU 1 where it resumes elsewhere; 42 on vCPU 0. */
static const struct vbts_record vcpu0_threads[] = {
	START,
	ESC(VBTS_ESC_TIME, 10, 0),
	ESC(VBTS_ESC_THREAD, IDS(41, 41), 0x1000),
	BR(0x1000, 0x1100, 3, VBTS_BR_JMP),
	BR(0x1104, 0x1200, 3, VBTS_BR_JMP),
	ESC(VBTS_ESC_THREAD, IDS(42, 41), 0x2000),
	BR(0x2000, 0x2100, 3, VBTS_BR_JMP),
};

static const struct vbts_record vcpu1_threads[] = {
	START,
	ESC(VBTS_ESC_TIME, 100, 0),
	ESC(VBTS_ESC_THREAD, IDS(41, 41), 0x1000),
	ESC(VBTS_ESC_ENTRY, 0x1300, VBTS_ENTRY_SIGNAL),
	BR(0x1310, 0x1400, 3, VBTS_BR_JMP),
	BR(0x1404, 0x1500, 3, VBTS_BR_JMP),
};

START_TEST(test_target_threads)
{
	static const struct gdb_btrace_block t41[] = {
		{ 0x1500, 0x1500 }, { 0x1400, 0x1404 }, { 0x1100, 0x1104 },
	};
	static const struct gdb_btrace_block t42[] = { { 0x2100, 0x2100 } };
	struct trace_target *tt;
	struct gdb_regs r;
	char dir[64];

	make_trace(dir, vcpu0_threads, sizeof(vcpu0_threads) / sizeof(vcpu0_threads[0]),
		   vcpu1_threads, sizeof(vcpu1_threads) / sizeof(vcpu1_threads[0]), NULL);
	test__write_text(dir, "crash.json", "{\"version\":1,\"reason\":\"process-crash\","
			 "\"time\":5,\"vcpu\":1,\"cr3\":\"0x1000\",\"process\":{\"pid\":42,"
			 "\"tgid\":41,\"comm\":\"t\"},\"registers\":{\"rsp\":\"0x7000\"},"
			 "\"branches\":[]}\n");
	tt = open_target(dir, -1, NULL);
	ck_assert_uint_eq(trace_target__ops()->nr_threads(tt), 2);
	check_describe(tt, 0, "pid 41 tgid 41");
	check_describe(tt, 1, "pid 42 tgid 41");
	check_blocks(tt, 0, t41, 3);
	check_blocks(tt, 1, t42, 1);
	trace_target__ops()->regs(tt, 0, &r);
	ck_assert_uint_eq(r.valid, 1u << GDB_REG_RIP);
	ck_assert_uint_eq(r.val[GDB_REG_RIP], 0x1500);
	trace_target__ops()->regs(tt, 1, &r);
	ck_assert_uint_eq(r.valid, 1u << GDB_REG_RIP | 1u << GDB_REG_RSP);
	ck_assert_uint_eq(r.val[GDB_REG_RSP], 0x7000);
	trace_target__close(tt);

	/* --task by a thread's pid: that thread only. */
	tt = open_target(dir, -1, "42");
	ck_assert_uint_eq(trace_target__ops()->nr_threads(tt), 1);
	check_describe(tt, 0, "pid 42 tgid 41");
	check_blocks(tt, 0, t42, 1);
	trace_target__close(tt);
	remove_trace(dir);
}
END_TEST

/*
 * A Linux program (linux-prog.S linked at 0x10000000, by its build ID) exec'd with a load base
 * of 0x20000000: its thread reads it there; the same file given as --symbols is also mapped
 * at its link address, for every thread.
 */
#define PROG_CR3 0x3000000ULL
#define PROG_BASE 0x20000000ULL
#define PROG_TEXT 0x1000ULL     /* .text from the load base */

static const struct vbts_record vcpu0_prog[] = {
	START,
	ESC(VBTS_ESC_TASK_ARRIVE, PROG_CR3, 100),
	BR(PROG_BASE + PROG_TEXT, PROG_BASE + PROG_TEXT + 0x20, 3, VBTS_BR_CALL),
};

static const struct vbts_record vcpu1_none[] = {
	START,
	BR(0x1000, 0x1100, 3, VBTS_BR_JMP),
};

START_TEST(test_target_program)
{
	static const char *const paths[] = { LINUX_STATIC };
	struct trace_target_options o = { .vcpu = -1, .symbol_paths = paths,
					  .nr_symbol_paths = 1 };
	uint8_t at_base[16], at_link[16], none[16];
	struct trace_target *tt;
	char dir[64], err[1024];

	make_trace(dir, vcpu0_prog, sizeof(vcpu0_prog) / sizeof(vcpu0_prog[0]), vcpu1_none,
		   sizeof(vcpu1_none) / sizeof(vcpu1_none[0]),
		   "{\"time\":100,\"vcpu\":0,\"event\":\"exec\",\"pid\":41,\"tgid\":41,"
		   "\"name\":\"prog\",\"cr3\":\"0x3000000\",\"load_base\":\"0x20000000\","
		   "\"exe\":\"/bin/prog\","
		   "\"build_id\":\"5747a71c0000000000000000000000000000000a\"}\n");
	tt = trace_target__open(dir, &o, err, sizeof(err));
	ck_assert_msg(tt != NULL, "%s", err);
	/* gdb's view of it: the program by its guest path, where it was loaded. */
	{
		const struct gdb_process_file *f;
		uint64_t entry = 0;
		FILE *elf = fopen(LINUX_STATIC, "rb");
		size_t nr;

		ck_assert_ptr_nonnull(elf);
		ck_assert_int_eq(fseek(elf, 24, SEEK_SET), 0);         /* e_entry */
		ck_assert_uint_eq(fread(&entry, sizeof(entry), 1, elf), 1);
		fclose(elf);
		ck_assert_int_eq(trace_target__ops()->files(tt, 0, &f, &nr), 0);
		ck_assert_uint_eq(nr, 1);
		ck_assert(f[0].exec);
		ck_assert_str_eq(f[0].name, "/bin/prog");
		ck_assert_str_eq(f[0].host_path, LINUX_STATIC);
		ck_assert_uint_eq(f[0].l_addr, PROG_BASE - 0x10000000);
		ck_assert_uint_eq(f[0].entry, entry + PROG_BASE - 0x10000000);
		ck_assert_uint_eq(f[0].phdr, PROG_BASE + 64);
		ck_assert_int_eq(trace_target__ops()->files(tt, 1, &f, &nr), 0);
		ck_assert_uint_eq(nr, 0);
	}
	ck_assert_uint_eq(trace_target__ops()->read_mem(tt, 0, PROG_BASE + PROG_TEXT, at_base,
							sizeof(at_base)), sizeof(at_base));
	ck_assert_uint_eq(trace_target__ops()->read_mem(tt, 0, 0x10000000 + PROG_TEXT, at_link,
							sizeof(at_link)), sizeof(at_link));
	ck_assert_mem_eq(at_base, at_link, sizeof(at_base));
	/* vCPU 1 ran no task of that program: only the link address is mapped. */
	ck_assert_uint_eq(trace_target__ops()->read_mem(tt, 1, PROG_BASE + PROG_TEXT, none,
							sizeof(none)), 0);
	ck_assert_uint_eq(trace_target__ops()->read_mem(tt, 1, 0x10000000 + PROG_TEXT, none,
							sizeof(none)), sizeof(none));
	trace_target__close(tt);
	remove_trace(dir);
}
END_TEST

/*
 * The ring stopped and started around a process's leaving the vCPU (task-depart ... STOP,
 * START, task-arrive): thread 41 entered the kernel at 0x10001010 (an interrupt), came back
 * and ran straight on to 0x10001018 (linux-prog.S's nops), its block goes on. Thread 42's
 * ring was stopped while its process stayed (no task-depart): what it ran is unknown, its
 * block ends where it left.
 */
#define DEP_CR3 0x4000000ULL
#define DEPART_RUN(tid)                                                                      \
	START, ESC(VBTS_ESC_TASK_ARRIVE, DEP_CR3, 100), ESC(VBTS_ESC_THREAD, IDS(tid, tid), 0),  \
	BR(0x10001000, 0x1000100e, 3, VBTS_BR_JMP), BR(0x10001010, K, 3, VBTS_BR_INTERRUPT)

static const struct vbts_record vcpu0_depart[] = {
	DEPART_RUN(41),
	ESC(VBTS_ESC_TASK_DEPART, DEP_CR3, 200), ESC(VBTS_ESC_STOP, 200, 0),
	START, ESC(VBTS_ESC_TASK_ARRIVE, DEP_CR3, 300), ESC(VBTS_ESC_THREAD, IDS(41, 41), 0),
	BR(0x10001018, 0x10001000, 3, VBTS_BR_JMP),
};

static const struct vbts_record vcpu1_stopped[] = {
	DEPART_RUN(42),
	ESC(VBTS_ESC_STOP, 200, 0), START, ESC(VBTS_ESC_THREAD, IDS(42, 42), 0),
	BR(0x10001018, 0x10001000, 3, VBTS_BR_JMP),
};

START_TEST(test_target_depart)
{
	static const char *const paths[] = { LINUX_STATIC };
	static const struct gdb_btrace_block t41[] = {
		{ 0x10001000, 0x10001000 }, { 0x1000100e, 0x10001018 },
	};
	static const struct gdb_btrace_block t42[] = {
		{ 0x10001000, 0x10001000 }, { 0x1000100e, 0x10001010 },
	};
	struct trace_target_options o = { .vcpu = -1, .symbol_paths = paths,
					  .nr_symbol_paths = 1 };
	struct trace_target *tt;
	char dir[64], err[1024];

	make_trace(dir, vcpu0_depart, sizeof(vcpu0_depart) / sizeof(vcpu0_depart[0]),
		   vcpu1_stopped, sizeof(vcpu1_stopped) / sizeof(vcpu1_stopped[0]), NULL);
	tt = trace_target__open(dir, &o, err, sizeof(err));
	ck_assert_msg(tt != NULL, "%s", err);
	ck_assert_uint_eq(trace_target__ops()->nr_threads(tt), 2);
	check_describe(tt, 0, "pid 41 tgid 41");
	check_blocks(tt, 0, t41, 2);
	check_describe(tt, 1, "pid 42 tgid 42");
	check_blocks(tt, 1, t42, 2);
	trace_target__close(tt);
	remove_trace(dir);
}
END_TEST

START_TEST(test_target_errors)
{
	struct trace_target_options o = { .vcpu = 5 };
	char dir[64], err[1024];

	make_trace(dir, vcpu0_user, sizeof(vcpu0_user) / sizeof(vcpu0_user[0]), vcpu1_kernel,
		   sizeof(vcpu1_kernel) / sizeof(vcpu1_kernel[0]),
		   "{\"time\":1,\"vcpu\":0,\"event\":\"task\",\"pid\":7,\"name\":\"sh\","
		   "\"cr3\":\"0x9000\"}\n");
	ck_assert_ptr_null(trace_target__open(dir, &o, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no vCPU 5"));
	o.vcpu = -1;
	o.task = "nosuch";
	ck_assert_ptr_null(trace_target__open(dir, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "no task 'nosuch'"));
	/* A task of events.jsonl whose CR3 no record has. */
	o.task = "sh";
	ck_assert_ptr_null(trace_target__open(dir, &o, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "no branch of task 'sh'"));
	remove_trace(dir);
	ck_assert_ptr_null(trace_target__open(dir, &o, err, sizeof(err)));
}
END_TEST

Suite *trace_target_suite(void)
{
	Suite *s = suite_create("trace-target");
	TCase *tc = tcase_create("target");

	tcase_add_test(tc, test_target_vcpus);
	tcase_add_test(tc, test_target_threads);
	tcase_add_test(tc, test_target_program);
	tcase_add_test(tc, test_target_errors);
	tcase_add_test(tc, test_target_depart);
	suite_add_tcase(s, tc);
	return s;
}
