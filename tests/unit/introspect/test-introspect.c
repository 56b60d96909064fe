// SPDX-License-Identifier: GPL-2.0
/*
 * test-introspect.c - introspection of the fake kernel booted in test RAM: the KASLR slide (by
 * the build ID, by LSTAR), CR3 resolution with PCID, bit 63 and the KPTI halves, the process
 * list, `current`, and guest memory that lies: cycles, endless lists, bad pointers, zombies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-kernel.h"
#include "introspect-tests.h"
#include "introspect.h"
#include "kernel-info.h"

#define POB_L4 0xffff9a4c80000000ULL
#define POB_L5 0xff29db0a80000000ULL
#define EXIT_ZOMBIE 16

static struct fake_kernel fk;
static struct kernel_info *ki;
static char err[256];

static void setup(void)
{
	fk_create(&fk, NULL);
	ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
}

static void teardown(void)
{
	kernel_info__close(ki);
	fk_destroy(&fk);
}

static struct introspect *attach(const struct kernel_info *k, uint64_t cr3, uint64_t lstar,
				 uint32_t max_tasks, uint32_t flags)
{
	struct introspect_mem mem = fk_mem(&fk);
	struct introspect_attach at = {
		.cr3 = cr3, .cr4 = fk_cr4(&fk), .lstar = lstar, .max_tasks = max_tasks,
		.flags = flags,
	};

	return introspect__open(k, &mem, &at, err, sizeof(err));
}

struct list {
	struct guest_task t[64];
	size_t n;
};

static int collect(const struct guest_task *t, void *ctx)
{
	struct list *l = ctx;

	ck_assert_uint_lt(l->n, 64);
	l->t[l->n++] = *t;
	return 0;
}

static const struct {
	uint64_t slide;
	uint64_t pob;
	bool la57;
} boots[] = {
	{ 0, 0xffff888000000000ULL, false },	/* nokaslr */
	{ 0x1f400000, POB_L4, false },		/* KASLR, 4-level */
	{ 0x3e000000, POB_L5, true },		/* KASLR, 5-level */
	/* the direct map's last slot: the image lies less than 64 TiB above it */
	{ 0x600000, 0xffffc00000000000ULL, false },
};

/* Processes: init (KPTI pgd), kthreadd (no mm), spin (KPTI pgd), a 16-char unterminated comm. */
struct procs {
	uint64_t pgd_init, pgd_spin, pgd_long;
	uint64_t init, kthreadd, spin, longname;
};

static void populate(struct procs *p)
{
	uint64_t tasks[4];

	p->pgd_init = fk_pgd(&fk, true);
	p->pgd_spin = fk_pgd(&fk, true);
	p->pgd_long = fk_pgd(&fk, true);
	p->init = fk_task(&fk, 1, 1, "init", fk_mm(&fk, p->pgd_init));
	p->kthreadd = fk_task(&fk, 2, 2, "kthreadd", 0);
	p->spin = fk_task(&fk, 100, 100, "spin", fk_mm(&fk, p->pgd_spin));
	p->longname = fk_task(&fk, 200, 200, "0123456789abcdef", fk_mm(&fk, p->pgd_long));
	fk_wbytes(&fk, p->longname + FK_TASK_COMM + 16, "tail", 4); /* what follows comm[] */
	tasks[0] = p->init;
	tasks[1] = p->kthreadd;
	tasks[2] = p->spin;
	tasks[3] = p->longname;
	fk_link(&fk, tasks, 4);
}

static void expect_resolve(struct introspect *in, uint64_t cr3, int32_t pid)
{
	struct guest_task t;
	int ret = introspect__resolve_cr3(in, cr3, &t);

	ck_assert_msg(ret == 0, "CR3 %#llx: %d", (unsigned long long)cr3, ret);
	ck_assert_msg(t.pid == pid, "CR3 %#llx resolves to pid %d, not %d", (unsigned long long)cr3,
		      t.pid, pid);
}

START_TEST(test_resolve)
{
	const uint64_t user_cr3_bits = 0x1000 | 0x800 | 0x7; /* KPTI user half, user PCID */
	struct introspect *in, *ref;
	struct guest_task t;
	struct procs p;
	struct list l = { .n = 0 }, lr = { .n = 0 };
	uint64_t reads;

	fk_boot(&fk, boots[_i].slide, boots[_i].pob, boots[_i].la57);
	populate(&p);
	/* attached at a user-mode CR3: the KPTI user half maps none of the kernel's data here */
	in = attach(ki, p.pgd_spin | user_cr3_bits, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_uint_eq(introspect__slide(in), boots[_i].slide);
	ck_assert_uint_eq(introspect__page_offset_base(in), boots[_i].pob);
	ck_assert_uint_eq(introspect__kernel_root(in), fk.root);

	expect_resolve(in, p.pgd_spin, 100);
	expect_resolve(in, p.pgd_spin | 0x5, 100);			/* PCID */
	expect_resolve(in, p.pgd_spin | (1ULL << 63) | 0x5, 100);	/* no-flush bit */
	expect_resolve(in, p.pgd_spin | user_cr3_bits, 100);		/* user half */
	expect_resolve(in, p.pgd_init + 0x1000, 1);
	expect_resolve(in, p.pgd_long, 200);
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -ENOENT);
	ck_assert_int_eq(introspect__resolve_cr3(in, p.pgd_long + 0x2000, &t), -ENOENT);

	/* the kernel's own tables: init_task */
	ck_assert_int_eq(introspect__resolve_cr3(in, fk.root | 0x1, &t), 0);
	ck_assert_int_eq(t.pid, 0);
	ck_assert_str_eq(t.comm, "swapper/0");
	ck_assert_uint_eq(t.pgd, fk.root);

	/* a resolution costs a bounded number of reads per task */
	reads = introspect__stats(in)->reads;
	expect_resolve(in, p.pgd_long, 200);
	ck_assert_uint_le(introspect__stats(in)->reads - reads, 3 * 5);

	ck_assert_int_eq(introspect__for_each_process(in, collect, &l), 0);
	ck_assert_uint_eq(l.n, 5);
	ck_assert_int_eq(l.t[0].pid, 0);
	ck_assert_uint_eq(l.t[0].task, fk_init_task(&fk));
	ck_assert_uint_eq(l.t[0].mm, 0);
	ck_assert_int_eq(l.t[1].pid, 1);
	ck_assert_str_eq(l.t[1].comm, "init");
	ck_assert_uint_eq(l.t[1].pgd, p.pgd_init);
	ck_assert_uint_eq(l.t[1].task, p.init);
	ck_assert_int_eq(l.t[2].pid, 2);
	ck_assert_uint_eq(l.t[2].mm, 0);
	ck_assert_uint_eq(l.t[2].pgd, 0);
	ck_assert_int_eq(l.t[3].tgid, 100);
	ck_assert_str_eq(l.t[4].comm, "0123456789abcdef"); /* unterminated: cut at comm[16] */

	/* the page-walk reference path agrees */
	ref = attach(ki, p.pgd_spin, 0, 0, INTROSPECT_WALK_PGD);
	ck_assert_msg(ref, "%s", err);
	ck_assert_int_eq(introspect__for_each_process(ref, collect, &lr), 0);
	ck_assert_uint_eq(lr.n, l.n);
	ck_assert_int_eq(memcmp(lr.t, l.t, l.n * sizeof(l.t[0])), 0);
	introspect__close(ref);

	/* current of CPU 0 */
	fk_w64(&fk, boots[_i].pob + FK_PERCPU_PHYS + FK_PCPU_HOT + FK_PCPU_CURRENT, p.spin);
	ck_assert_int_eq(introspect__current(in, 0, &t), 0);
	ck_assert_int_eq(t.pid, 100);
	ck_assert_uint_eq(t.pgd, p.pgd_spin);
	ck_assert_int_eq(introspect__current(in, 8192, &t), -EINVAL);
	fk_w64(&fk, boots[_i].pob + FK_PERCPU_PHYS + FK_PCPU_HOT + FK_PCPU_CURRENT, 0x41414141);
	ck_assert_int_eq(introspect__current(in, 0, &t), -EFAULT);
	introspect__close(in);
}
END_TEST

/* Without KPTI a PGD may be the page right after another process's: that is an exact match,
 * not the other's user half. */
/*
 * Opened before the kernel randomized its direct map (an early CR3 load that `vbts attach`
 * reads late): page_offset_base still has its boot value then, and the first CR3 that finds no
 * process has it read again.
 */
START_TEST(test_late_page_offset_base)
{
	const uint64_t boot = 0xffff888000000000ULL;
	struct introspect *in;
	struct guest_task t;
	struct procs p;

	fk_boot(&fk, 0x1f400000, POB_L4, false);
	populate(&p);
	fk_w64(&fk, fk_rt(&fk, FK_PAGE_OFFSET_BASE), boot);
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_uint_eq(introspect__page_offset_base(in), boot);
	fk_w64(&fk, fk_rt(&fk, FK_PAGE_OFFSET_BASE), POB_L4);
	expect_resolve(in, p.pgd_spin, 100);
	ck_assert_uint_eq(introspect__page_offset_base(in), POB_L4);
	expect_resolve(in, p.pgd_init, 1);
	/* no process's address space: not found, the base kept */
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -ENOENT);
	ck_assert_uint_eq(introspect__page_offset_base(in), POB_L4);
	/* a base that is none is not taken */
	fk_w64(&fk, fk_rt(&fk, FK_PAGE_OFFSET_BASE), 0x1234);
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -ENOENT);
	ck_assert_uint_eq(introspect__page_offset_base(in), POB_L4);
	introspect__close(in);
}
END_TEST

START_TEST(test_exact_beats_user_half)
{
	struct introspect *in;
	uint64_t x, tasks[2];

	fk_boot(&fk, 0x200000, POB_L4, false);
	x = fk_pgd(&fk, true); /* 8 KiB aligned, both pages free */
	tasks[0] = fk_task(&fk, 10, 10, "lower", fk_mm(&fk, x));
	tasks[1] = fk_task(&fk, 11, 11, "upper", fk_mm(&fk, x + 0x1000));
	fk_link(&fk, tasks, 2);
	in = attach(ki, x, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	expect_resolve(in, x + 0x1000, 11);
	expect_resolve(in, x, 10);
	introspect__close(in);
}
END_TEST

/* panic_cpu read where the slid image has it: -1 until a CPU panics; unknown without it. */
START_TEST(test_panic_cpu)
{
	const struct fk_btf_opts zero = { .panic_cpu_zero = true };
	struct introspect *in;
	struct procs p;
	int32_t cpu = 7;

	fk_boot(&fk, 0x1f400000, POB_L4, false);
	populate(&p);
	in = attach(ki, p.pgd_init, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__panic_cpu(in, &cpu), 0);
	ck_assert_int_eq(cpu, -1);
	fk_w32(&fk, fk_rt(&fk, FK_PANIC_CPU), 1);
	ck_assert_int_eq(introspect__panic_cpu(in, &cpu), 0);
	ck_assert_int_eq(cpu, 1);
	introspect__close(in);

	/* a panic() whose LOCK CMPXCHG operand does not start as -1: not taken */
	teardown();
	fk_create(&fk, &zero);
	ki = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(ki, "%s", err);
	fk_boot(&fk, 0, POB_L4, false);
	populate(&p);
	in = attach(ki, p.pgd_init, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__panic_cpu(in, &cpu), -ENOENT);
	introspect__close(in);
}
END_TEST

START_TEST(test_lstar)
{
	struct kernel_info *with_map, *raw;
	struct introspect *in;
	struct procs p;
	uint64_t slide = 0x2c00000, entry = FK_ENTRY_SYSCALL_64 + slide;

	fk_boot(&fk, slide, POB_L4, false);
	populate(&p);
	with_map = kernel_info__open(fk.vmlinux, fk.sysmap, err, sizeof(err));
	ck_assert_msg(with_map, "%s", err);
	in = attach(with_map, p.pgd_init, entry, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_uint_eq(introspect__slide(in), slide);
	introspect__close(in);

	/* LSTAR that is no slid entry_SYSCALL_64, or a slide where the image is not */
	errno = 0;
	ck_assert_ptr_null(attach(with_map, p.pgd_init, entry + 0x1000, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "is not entry_SYSCALL_64"));
	ck_assert_ptr_null(attach(with_map, p.pgd_init, entry + 0x200000, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not where LSTAR says"));
	kernel_info__close(with_map);

	/* raw BTF: no image to look for, LSTAR is the only way */
	raw = kernel_info__open(fk.btf_raw, fk.sysmap, err, sizeof(err));
	ck_assert_msg(raw, "%s", err);
	in = attach(raw, p.pgd_init, entry, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_uint_eq(introspect__slide(in), slide);
	expect_resolve(in, p.pgd_spin, 100);
	introspect__close(in);
	errno = 0;
	ck_assert_ptr_null(attach(raw, p.pgd_init, 0, 0, 0));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "no way to find the KASLR slide"));
	kernel_info__close(raw);
}
END_TEST

START_TEST(test_bad_attach)
{
	struct procs p;

	fk_boot(&fk, 0x1f400000, POB_L4, false);
	populate(&p);
	/* CR3s that map nothing: zero RAM, beyond RAM */
	errno = 0;
	ck_assert_ptr_null(attach(ki, 0x1ff0000, 0, 0, 0));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(attach(ki, 1ULL << 40, 0, 0, 0));
	ck_assert_int_eq(errno, ENOENT);

	/* init_task that is no init_task */
	fk_w32(&fk, fk_init_task(&fk) + FK_TASK_PID, 5);
	ck_assert_ptr_null(attach(ki, p.pgd_init, 0, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	fk_w32(&fk, fk_init_task(&fk) + FK_TASK_PID, 0);

	/* page_offset_base that is no direct-map base */
	fk_w64(&fk, fk_rt(&fk, FK_PAGE_OFFSET_BASE), 0x1234);
	ck_assert_ptr_null(attach(ki, p.pgd_init, 0, 0, 0));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "page_offset_base"));
	fk_w64(&fk, fk_rt(&fk, FK_PAGE_OFFSET_BASE), POB_L4);

	/* init_mm.pgd pointing at nothing */
	fk_w64(&fk, fk_rt(&fk, FK_INIT_MM) + FK_MM_PGD, 0xffffffffc1234000ULL);
	ck_assert_ptr_null(attach(ki, p.pgd_init, 0, 0, 0));
	ck_assert_int_eq(errno, EFAULT);
}
END_TEST

/* A ring of tasks that does not come back to init_task: found, in few steps. */
START_TEST(test_cycle)
{
	struct introspect *in;
	struct guest_task t;
	uint64_t tasks[6];
	char name[8];

	fk_boot(&fk, 0, POB_L4, false);
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		tasks[i] = fk_task(&fk, 10 + i, 10 + i, name, fk_mm(&fk, fk_pgd(&fk, false)));
	}
	fk_link(&fk, tasks, 6);
	fk_w64(&fk, tasks[5] + FK_TASK_TASKS, tasks[2] + FK_TASK_TASKS); /* t5 -> t2 */
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -ELOOP);
	/* Brent: within a small multiple of the list's length, not at the max_tasks bound */
	ck_assert_uint_le(introspect__stats(in)->tasks, 4 * 7);
	introspect__close(in);
}
END_TEST

/* A well-formed list longer than the bound: cut there. */
START_TEST(test_bound)
{
	struct introspect *in;
	struct guest_task t;
	uint64_t tasks[20];

	fk_boot(&fk, 0, POB_L4, false);
	for (int i = 0; i < 20; i++)
		tasks[i] = fk_task(&fk, 10 + i, 10 + i, "many", 0);
	fk_link(&fk, tasks, 20);
	in = attach(ki, fk.root, 0, 8, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -ELOOP);
	ck_assert_uint_le(introspect__stats(in)->tasks, 9);
	introspect__close(in);
}
END_TEST

static int count(const struct guest_task *t, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static const uint64_t bad_next[] = {
	0x00007fff12345678ULL,		/* user address */
	0x8000000000000000ULL,		/* not canonical */
	POB_L4 + 0x600003,		/* misaligned */
	POB_L4 + FK_RAM_SIZE + 0x1000,	/* unmapped */
	0,
};

START_TEST(test_bad_next)
{
	struct introspect *in;
	struct guest_task t;
	uint64_t tasks[2];
	int n = 0;

	fk_boot(&fk, 0, POB_L4, false);
	tasks[0] = fk_task(&fk, 10, 10, "a", fk_mm(&fk, fk_pgd(&fk, false)));
	tasks[1] = fk_task(&fk, 11, 11, "b", fk_mm(&fk, fk_pgd(&fk, false)));
	fk_link(&fk, tasks, 2);
	fk_w64(&fk, tasks[0] + FK_TASK_TASKS, bad_next[_i]);
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__resolve_cr3(in, 0x1ff0000, &t), -EFAULT);
	ck_assert_int_eq(introspect__for_each_process(in, count, &n), -EFAULT);
	ck_assert_int_eq(n, 2); /* init_task and "a" came before the bad pointer */
	introspect__close(in);
}
END_TEST

/* Tasks whose mm or pgd is garbage are skipped; the walk goes on. */
START_TEST(test_bad_mm)
{
	struct introspect *in;
	uint64_t tasks[4], bad_pgd_mm;
	struct list l = { .n = 0 };

	fk_boot(&fk, 0, POB_L4, false);
	bad_pgd_mm = fk_mm(&fk, 0);
	fk_w64(&fk, bad_pgd_mm + FK_MM_PGD, POB_L4 + 0x123); /* not page aligned */
	tasks[0] = fk_task(&fk, 10, 10, "bad-mm", 0x4141414141414141ULL);
	tasks[1] = fk_task(&fk, 11, 11, "bad-pgd", bad_pgd_mm);
	tasks[2] = fk_task(&fk, 12, 12, "mm-unmapped", POB_L4 + FK_RAM_SIZE + 0x100);
	tasks[3] = fk_task(&fk, 13, 13, "good", fk_mm(&fk, fk_pgd(&fk, false)));
	fk_link(&fk, tasks, 4);
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__for_each_process(in, collect, &l), 0);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(l.t[1].comm, "good");
	ck_assert_uint_eq(introspect__stats(in)->skipped, 3);
	introspect__close(in);
}
END_TEST

/* A process whose leader exited: its mm comes from a live thread (signal->thread_head). */
START_TEST(test_zombie_leader)
{
	struct introspect *in;
	uint64_t leader, thread, sig, head, mm, pgd;

	fk_boot(&fk, 0x1f400000, POB_L4, false);
	pgd = fk_pgd(&fk, true);
	mm = fk_mm(&fk, pgd);
	leader = fk_task(&fk, 50, 50, "zleader", 0);
	thread = fk_task(&fk, 51, 50, "zthread", mm);
	fk_w32(&fk, leader + FK_TASK_EXIT_STATE, EXIT_ZOMBIE);
	sig = fk_mm(&fk, 0); /* any 128 bytes of the heap */
	head = sig + FK_SIGNAL_THREAD_HEAD;
	fk_w64(&fk, leader + FK_TASK_SIGNAL, sig);
	/* thread_head -> leader.thread_node -> thread.thread_node -> thread_head */
	fk_w64(&fk, head, leader + FK_TASK_THREAD_NODE);
	fk_w64(&fk, leader + FK_TASK_THREAD_NODE, thread + FK_TASK_THREAD_NODE);
	fk_w64(&fk, thread + FK_TASK_THREAD_NODE, head);
	fk_link(&fk, &leader, 1);

	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	expect_resolve(in, pgd + 0x1000, 50);
	introspect__close(in);

	/* a thread ring that never returns to its head */
	fk_w64(&fk, thread + FK_TASK_MM, 0);
	fk_w64(&fk, thread + FK_TASK_THREAD_NODE, leader + FK_TASK_THREAD_NODE);
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	{
		struct guest_task t;

		ck_assert_int_eq(introspect__resolve_cr3(in, pgd, &t), -ELOOP);
	}
	introspect__close(in);
}
END_TEST

/* Before 6.7: the leader's thread_group ring, and a per-CPU current_task. */
START_TEST(test_older_kernel)
{
	const struct fk_btf_opts o = { .no_pcpu_hot = true, .no_thread_node = true };
	struct kernel_info *old;
	struct introspect *in;
	struct guest_task t;
	uint64_t leader, thread, mm, pgd;

	kernel_info__close(ki);
	ki = NULL;
	fk_destroy(&fk);
	fk_create(&fk, &o);
	old = kernel_info__open(fk.vmlinux, NULL, err, sizeof(err));
	ck_assert_msg(old, "%s", err);
	fk_boot(&fk, 0, POB_L4, false);
	pgd = fk_pgd(&fk, false);
	mm = fk_mm(&fk, pgd);
	leader = fk_task(&fk, 60, 60, "zleader", 0);
	thread = fk_task(&fk, 61, 60, "zthread", mm);
	fk_w32(&fk, leader + FK_TASK_EXIT_STATE, EXIT_ZOMBIE);
	fk_w64(&fk, leader + FK_TASK_THREAD_NODE, thread + FK_TASK_THREAD_NODE);
	fk_w64(&fk, thread + FK_TASK_THREAD_NODE, leader + FK_TASK_THREAD_NODE);
	fk_link(&fk, &leader, 1);
	fk_w64(&fk, POB_L4 + FK_PERCPU_PHYS + FK_PCPU_HOT, thread);

	in = attach(old, pgd, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	expect_resolve(in, pgd, 60);
	ck_assert_int_eq(introspect__current(in, 0, &t), 0);
	ck_assert_int_eq(t.pid, 61);
	introspect__close(in);
	kernel_info__close(old);
}
END_TEST

/* A task forged in memory the kernel's tables map at a user address: never followed. */
START_TEST(test_user_pointer)
{
	struct introspect *in;
	struct list l = { .n = 0 };
	uint64_t tasks[1], forged = 0x400000, forged_pa = 0x1f00000;

	fk_boot(&fk, 0, POB_L4, false);
	tasks[0] = fk_task(&fk, 10, 10, "real", fk_mm(&fk, fk_pgd(&fk, false)));
	fk_link(&fk, tasks, 1);
	/* a copy of "real" named "forged", at a user address, linked after it */
	fk_map_user(&fk, forged, forged_pa);
	memcpy(fk.ram + forged_pa, fk.ram + fk_pa(&fk, tasks[0]), FK_TASK_SIZE);
	memcpy(fk.ram + forged_pa + FK_TASK_COMM, "forged", 7);
	fk_w64(&fk, tasks[0] + FK_TASK_TASKS, forged + FK_TASK_TASKS);
	in = attach(ki, fk.root, 0, 0, 0);
	ck_assert_msg(in, "%s", err);
	ck_assert_int_eq(introspect__for_each_process(in, collect, &l), -EFAULT);
	ck_assert_uint_eq(l.n, 2);
	ck_assert_str_eq(l.t[1].comm, "real");
	introspect__close(in);
}
END_TEST

Suite *introspect_suite(void)
{
	Suite *s = suite_create("introspect");
	TCase *tc = tcase_create("introspect");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_resolve, 0, sizeof(boots) / sizeof(boots[0]));
	tcase_add_test(tc, test_exact_beats_user_half);
	tcase_add_test(tc, test_late_page_offset_base);
	tcase_add_test(tc, test_lstar);
	tcase_add_test(tc, test_panic_cpu);
	tcase_add_test(tc, test_bad_attach);
	tcase_add_test(tc, test_cycle);
	tcase_add_test(tc, test_bound);
	tcase_add_loop_test(tc, test_bad_next, 0, sizeof(bad_next) / sizeof(bad_next[0]));
	tcase_add_test(tc, test_bad_mm);
	tcase_add_test(tc, test_user_pointer);
	tcase_add_test(tc, test_zombie_leader);
	tcase_add_test(tc, test_older_kernel);
	suite_add_tcase(s, tc);
	return s;
}
