// SPDX-License-Identifier: GPL-2.0
/*
 * minios.c - test guest: a tiny deterministic multitasking kernel.
 *
 * Four user tasks in ring 3, each with its own page tables (own CR3): the first 2 MiB (the
 * image; page 0 left unmapped so NULL faults) shared, and a private stack page at
 * USER_STACK_VA. System calls write, yield and exit, by SYSCALL or int 0x80. Scheduling is
 * cooperative round-robin with interrupts masked throughout: no timer, every run identical.
 * Task 3 ("crash") dereferences NULL three calls deep (main, parse, deref) after at least 16
 * branches of its own since it last entered ring 3; the kernel reports the page fault and
 * kills it. When every task is gone the guest exits with value 0.
 *
 * Agent channel: {"event":"task","pid":1,"name":"ping","cr3":"0x…"} per task at creation,
 * {"event":"exit","pid":N,"code":C} per task at its end (139 for the killed one).
 * Console, last: "minios: cr3 loads P P ..." - the task of every CR3 load in order (the first
 * SWITCH_LOG of them, then "+N more"), for a tracer's task markers to be checked against.
 */
#include "guest.h"

#define NTASKS 4
#define USER_STACK_VA 0x400000ULL /* page directory entry 2 */
#define USER_STACK_TOP (USER_STACK_VA + 4096)
#define PTE_USER 0x7ULL           /* present, writable, user */
#define EXIT_KILLED 139           /* what a shell shows for SIGSEGV */
#define SWITCH_LOG 128

enum { SYS_WRITE = 0, SYS_YIELD = 1, SYS_EXIT = 2 };
enum { TASK_RUNNABLE = 1, TASK_DEAD = 2 };

struct address_space {
	uint64_t pml4[512];
	uint64_t pdpt[512];
	uint64_t pd[512];
	uint64_t stack_pt[512];
	uint8_t stack[4096];
};

struct task {
	int pid;
	const char *name;
	void (*entry)(void);
	int state;
	uint64_t cr3;
	struct trap_frame ctx; /* user context while not running */
};

static struct address_space spaces[NTASKS] __attribute__((aligned(4096)));
static uint64_t low_pt[512] __attribute__((aligned(4096)));
static struct task tasks[NTASKS];
static int current;
static uint8_t switch_log[SWITCH_LOG]; /* pid per CR3 load, in order */
static unsigned int nr_switches;

/* ---- user side: runs in ring 3 ------------------------------------------------------- */

static inline long sys_syscall(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

static inline long sys_int80(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "memory");
	return ret;
}

static __attribute__((noreturn)) void user_exit(long code)
{
	sys_syscall(SYS_EXIT, code, 0);
	__builtin_unreachable();
}

/* "<word> <n>\n" into buf; returns the length. */
static __attribute__((noinline)) long user_format(char *buf, const char *word, int n)
{
	long len = 0;

	while (*word)
		buf[len++] = *word++;
	buf[len++] = ' ';
	if (n >= 10)
		buf[len++] = (char)('0' + n / 10);
	buf[len++] = (char)('0' + n % 10);
	buf[len++] = '\n';
	return len;
}

static void ping_main(void)
{
	char buf[32];
	int i;

	for (i = 0; i < 3; i++) {
		sys_syscall(SYS_WRITE, (long)buf, user_format(buf, "ping", i));
		sys_syscall(SYS_YIELD, 0, 0);
	}
	user_exit(0);
}

static void pong_main(void)
{
	char buf[32];
	int i;

	for (i = 0; i < 3; i++) {
		sys_int80(SYS_WRITE, (long)buf, user_format(buf, "pong", i));
		sys_int80(SYS_YIELD, 0, 0);
	}
	sys_int80(SYS_EXIT, 0, 0);
	__builtin_unreachable();
}

static const char *const config_keys[] = { "mode", "size" };
static const int config_values[] = { 1, 2 };

/* The value of s's key, or NULL when the key is unknown. */
static __attribute__((noipa)) const int *crash_lookup(const char *s)
{
	unsigned int i, k;

	for (i = 0; i < 2; i++) {
		for (k = 0; config_keys[i][k] && config_keys[i][k] == s[k]; k++)
			;
		if (!config_keys[i][k] && s[k] == '=')
			return &config_values[i];
	}
	return NULL;
}

static __attribute__((noipa)) int crash_deref(const int *p)
{
	return *p;
}

/* A checksum of the line, so that the crashed task has a few more branches of its own. */
static __attribute__((noipa)) unsigned int crash_checksum(const char *s)
{
	unsigned int sum = 0;

	while (*s)
		sum = sum * 31 + (unsigned char)*s++;
	return sum;
}

static __attribute__((noipa)) int crash_parse(const char *s)
{
	if (crash_checksum(s) == 0)
		return 0;
	return crash_deref(crash_lookup(s)) + 1;
}

static void crash_main(void)
{
	char buf[32];

	sys_syscall(SYS_WRITE, (long)buf, user_format(buf, "crash: parsing", 1));
	sys_syscall(SYS_YIELD, 0, 0);
	user_exit(crash_parse("port=80"));
}

static __attribute__((noipa)) int count_sum(int n)
{
	return n ? n + count_sum(n - 1) : 0;
}

static void count_main(void)
{
	char buf[32];
	int sum = count_sum(10);

	sys_syscall(SYS_WRITE, (long)buf, user_format(buf, "count", sum));
	user_exit(sum);
}

/* ---- kernel side --------------------------------------------------------------------- */

static void announce_exit(const struct task *t, uint64_t code)
{
	struct agent_line l;

	agent_line_init(&l, "exit");
	agent_line_int(&l, "pid", (uint64_t)t->pid);
	agent_line_int(&l, "code", code);
	agent_line_send(&l);
}

static void task_create(int i, const char *name, void (*entry)(void))
{
	struct address_space *s = &spaces[i];
	struct task *t = &tasks[i];
	struct agent_line l;

	s->pml4[0] = (uint64_t)s->pdpt | PTE_USER;
	s->pdpt[0] = (uint64_t)s->pd | PTE_USER;
	s->pd[0] = (uint64_t)low_pt | PTE_USER;
	s->pd[USER_STACK_VA >> 21] = (uint64_t)s->stack_pt | PTE_USER;
	s->stack_pt[0] = (uint64_t)s->stack | PTE_USER;

	t->pid = i + 1;
	t->name = name;
	t->entry = entry;
	t->state = TASK_RUNNABLE;
	t->cr3 = (uint64_t)s->pml4;
	/* First entry by SYSRETQ, as if returning from a system call. */
	t->ctx.vector = VEC_SYSCALL;
	t->ctx.rip = (uint64_t)entry;
	t->ctx.rsp = USER_STACK_TOP - 8; /* as after a call: rsp + 8 is 16-byte aligned */
	t->ctx.rflags = GUEST_RFLAGS;
	t->ctx.cs = USER_CS;
	t->ctx.ss = USER_DS;

	uart_puts("minios: task ");
	uart_dec((uint64_t)t->pid);
	uart_putc(' ');
	uart_puts(name);
	uart_puts(" cr3 ");
	uart_hex(t->cr3);
	uart_putc('\n');
	agent_line_init(&l, "task");
	agent_line_int(&l, "pid", (uint64_t)t->pid);
	agent_line_str(&l, "name", name);
	agent_line_hex(&l, "cr3", t->cr3);
	agent_line_send(&l);
}

static void load_cr3(int task)
{
	if (nr_switches < SWITCH_LOG)
		switch_log[nr_switches] = (uint8_t)tasks[task].pid;
	nr_switches++;
	write_cr3(tasks[task].cr3);
}

static void print_switch_log(void)
{
	unsigned int i;

	uart_puts("minios: cr3 loads");
	for (i = 0; i < nr_switches && i < SWITCH_LOG; i++) {
		uart_putc(' ');
		uart_dec(switch_log[i]);
	}
	if (nr_switches > SWITCH_LOG) {
		uart_puts(" +");
		uart_dec(nr_switches - SWITCH_LOG);
		uart_puts(" more");
	}
	uart_putc('\n');
}

/* Make the next runnable task current and load its context into *f; exit when none is left. */
static void schedule(struct trap_frame *f)
{
	int i, next;

	for (i = 1; i <= NTASKS; i++) {
		next = (current + i) % NTASKS;
		if (tasks[next].state == TASK_RUNNABLE)
			break;
	}
	if (i > NTASKS) {
		uart_puts("minios: all tasks finished\n");
		print_switch_log();
		guest_done();
	}
	if (tasks[next].cr3 != tasks[current].cr3 || tasks[current].state == TASK_DEAD)
		load_cr3(next);
	current = next;
	*f = tasks[next].ctx;
}

static void task_exit(struct task *t, uint64_t code)
{
	t->state = TASK_DEAD;
	uart_puts("minios: task ");
	uart_dec((uint64_t)t->pid);
	uart_puts(" exited with ");
	uart_dec(code);
	uart_putc('\n');
	announce_exit(t, code);
}

/* A user buffer is valid inside the task's stack page or the image, above page 0. */
static int user_range_ok(uint64_t p, uint64_t len)
{
	if (len > 256)
		return 0;
	if (p >= USER_STACK_VA && p + len <= USER_STACK_TOP)
		return 1;
	return p >= 0x1000 && p + len <= 0x200000;
}

static void do_syscall(struct task *t, struct trap_frame *f)
{
	const char *buf;
	uint64_t i;

	switch (f->rax) {
	case SYS_WRITE:
		if (!user_range_ok(f->rdi, f->rsi)) {
			f->rax = (uint64_t)-1;
			return;
		}
		buf = (const char *)f->rdi;
		for (i = 0; i < f->rsi; i++)
			uart_putc(buf[i]);
		f->rax = f->rsi;
		return;
	case SYS_YIELD:
		f->rax = 0;
		t->ctx = *f;
		schedule(f);
		return;
	case SYS_EXIT:
		task_exit(t, f->rdi);
		schedule(f);
		return;
	default:
		f->rax = (uint64_t)-1;
		return;
	}
}

static __attribute__((noreturn)) void panic(const struct trap_frame *f)
{
	uart_puts("minios: kernel exception ");
	uart_dec(f->vector);
	uart_puts(" at ");
	uart_hex(f->rip);
	uart_putc('\n');
	guest_exit((uint8_t)(GUEST_EXIT_EXCEPTION + (f->vector & 0x1f)));
}

void guest_trap(struct trap_frame *f)
{
	struct task *t = &tasks[current];

	switch (f->vector) {
	case VEC_SYSCALL:
	case VEC_INT_USER:
		do_syscall(t, f);
		return;
	case VEC_PF:
		if ((f->cs & 3) != 3)
			panic(f);
		uart_puts("minios: task ");
		uart_dec((uint64_t)t->pid);
		uart_puts(" (");
		uart_puts(t->name);
		uart_puts(") killed: page fault at ");
		uart_hex(read_cr2());
		uart_puts(", rip ");
		uart_hex(f->rip);
		uart_putc('\n');
		task_exit(t, EXIT_KILLED);
		schedule(f);
		return;
	default:
		panic(f);
	}
}

void guest_main(uint32_t magic, uint32_t mbi)
{
	struct trap_frame *f;
	unsigned int i;

	GUEST_ASSERT(magic == 0x2badb002);
	cpu_init();
	uart_puts("minios: booting\n");
	for (i = 1; i < 512; i++)
		low_pt[i] = ((uint64_t)i << 12) | PTE_USER;
	task_create(0, "ping", ping_main);
	task_create(1, "pong", pong_main);
	task_create(2, "crash", crash_main);
	task_create(3, "count", count_main);

	current = 0;
	load_cr3(0);
	f = (struct trap_frame *)(cpu_trap_stack_top() - sizeof(*f));
	*f = tasks[0].ctx;
	trap_resume(f);
}
