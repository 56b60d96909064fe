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
 *
 * Built with -DMINIOS_BTS (image minios-bts, for `vbts run --guest-bts`): per-task BTS, as
 * Linux's ptrace-BTS gave it. Each task may have its own DS area and buffer in the kernel;
 * the task switch loads the next task's IA32_DS_AREA and IA32_DEBUGCTL (TR, BTS, BTS_OFF_OS:
 * a task's own ring-3 branches only, its system calls among them). System calls configure
 * (size in records and mode: wrap, circular; or fill, BTINT with no threshold reached: records
 * stop when full), status, get record N (oldest first), count, drain (records copied out,
 * printed as "rec <pid> <from> <to>", buffer cleared) and clear. Two more tasks, btsa and
 * btsb, use them on labelled sequences that yield in the middle (the other task's branches
 * must not reach their buffers) and exit with 0 when every check passed, else with the number
 * of the first failed check.
 */
#include "guest.h"

#ifdef MINIOS_BTS
#define NTASKS 6
#else
#define NTASKS 4
#endif
#define USER_STACK_VA 0x400000ULL /* page directory entry 2 */
#define USER_STACK_TOP (USER_STACK_VA + 4096)
#define PTE_USER 0x7ULL           /* present, writable, user */
#define EXIT_KILLED 139           /* what a shell shows for SIGSEGV */
#define SWITCH_LOG 128

enum { SYS_WRITE = 0, SYS_YIELD = 1, SYS_EXIT = 2 };
#ifdef MINIOS_BTS
enum {
	SYS_BTS_CONFIG = 3, /* rdi = records (0: off, at most BTS_MAX_RECS), rsi = mode */
	SYS_BTS_STATUS = 4, /* rdi = user struct bts_status */
	SYS_BTS_GET = 5,    /* rdi = N (0: oldest), rsi = user struct bts_rec */
	SYS_BTS_COUNT = 6,  /* records in the buffer */
	SYS_BTS_DRAIN = 7,  /* rdi = user struct bts_rec[rsi]: copied oldest first, cleared */
	SYS_BTS_CLEAR = 8,
};
enum { BTS_MODE_WRAP = 0, BTS_MODE_FILL = 1 };
#define BTS_MAX_RECS 64
#define MSR_DEBUGCTL 0x1d9
#define MSR_DS_AREA 0x600
#define DEBUGCTL_TR (1ULL << 6)
#define DEBUGCTL_BTS (1ULL << 7)
#define DEBUGCTL_BTINT (1ULL << 8)
#define DEBUGCTL_BTS_OFF_OS (1ULL << 9)
#define BTS_REC 24ULL

struct bts_rec {
	uint64_t from, to, flags;
};

struct bts_status {
	uint64_t size, mode, count;
};

/* A task's BTS: its DS area (BTS fields, then PEBS's, unused) and its buffer. */
struct task_bts {
	uint64_t bts_base, bts_index, bts_max, bts_threshold;
	uint64_t pebs[5];
	struct bts_rec buf[BTS_MAX_RECS];
	uint64_t debugctl;
	uint64_t size, mode;
} __attribute__((aligned(64)));

static void bts_switch(int next);
#endif
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

#ifdef MINIOS_BTS
#define L(name) ".globl " name "\n" name ":\n"

/*
 * btsa_seq(): configure(64, wrap), then jmp, yield, call, ret, count: returns the count, 5.
 * btsa_wrap(out): configure(4, wrap), jmp, call, ret, count (4: full, wrapped), drain into
 * out[8] (the drain's own record overwrites the jmp's), clear, count: returns (drained << 8) |
 * the last count, (4 << 8) | 1.
 * btsb_seq(): configure(2, fill), jmp, yield, call, ret, count: returns 2 (full, 3 dropped).
 * Every branch here is labelled; the system calls' records go to syscall_entry.
 */
__asm__(
	".text\n"
	".type btsa_seq, @function\n"
	"btsa_seq:\n"
	"	mov $3, %eax\n	mov $64, %edi\n	xor %esi, %esi\n	syscall\n"
	L("btsa_jmp_from")
	"	jmp btsa_jmp_to\n	ud2\n"
	L("btsa_jmp_to")
	"	mov $1, %eax\n"
	L("btsa_yield_from")
	"	syscall\n"
	L("btsa_call_from")
	"	call btsa_leaf\n"
	L("btsa_ret_to")
	"	mov $6, %eax\n"
	L("btsa_count_from")
	"	syscall\n"
	"	ret\n"
	"btsa_leaf:\n"
	L("btsa_call_to")
	"	nop\n"
	L("btsa_ret_from")
	"	ret\n"
	".size btsa_seq, . - btsa_seq\n"

	".type btsa_wrap, @function\n"
	"btsa_wrap:\n"
	"	push %r12\n	push %r13\n"
	"	mov %rdi, %r12\n"
	"	mov $3, %eax\n	mov $4, %edi\n	xor %esi, %esi\n	syscall\n"
	L("btsw_jmp_from")
	"	jmp btsw_jmp_to\n	ud2\n"
	L("btsw_jmp_to")
	L("btsw_call_from")
	"	call btsw_leaf\n"
	L("btsw_ret_to")
	"	mov $6, %eax\n"
	L("btsw_count_from")
	"	syscall\n"
	"	mov $7, %eax\n	mov %r12, %rdi\n	mov $8, %esi\n"
	L("btsw_drain_from")
	"	syscall\n"
	"	mov %rax, %r13\n"
	"	mov $8, %eax\n	syscall\n"
	"	mov $6, %eax\n	syscall\n"
	"	shl $8, %r13\n	or %r13, %rax\n"
	"	pop %r13\n	pop %r12\n"
	"	ret\n"
	"btsw_leaf:\n"
	L("btsw_call_to")
	"	nop\n"
	L("btsw_ret_from")
	"	ret\n"
	".size btsa_wrap, . - btsa_wrap\n"

	".type btsb_seq, @function\n"
	"btsb_seq:\n"
	"	mov $3, %eax\n	mov $2, %edi\n	mov $1, %esi\n	syscall\n"
	L("btsb_jmp_from")
	"	jmp btsb_jmp_to\n	ud2\n"
	L("btsb_jmp_to")
	"	mov $1, %eax\n"
	L("btsb_yield_from")
	"	syscall\n"
	L("btsb_call_from")
	"	call btsb_leaf\n"
	L("btsb_ret_to")
	"	mov $6, %eax\n"
	L("btsb_count_from")
	"	syscall\n"
	"	ret\n"
	"btsb_leaf:\n"
	L("btsb_call_to")
	"	nop\n"
	L("btsb_ret_from")
	"	ret\n"
	".size btsb_seq, . - btsb_seq\n");

long btsa_seq(void);
long btsa_wrap(struct bts_rec *out);
long btsb_seq(void);
extern char syscall_entry[], btsa_jmp_from[], btsa_jmp_to[], btsa_yield_from[],
	btsa_call_from[], btsa_call_to[], btsa_ret_from[], btsa_ret_to[], btsa_count_from[],
	btsw_jmp_from[], btsw_jmp_to[], btsw_call_from[], btsw_call_to[], btsw_ret_from[],
	btsw_ret_to[], btsw_count_from[], btsw_drain_from[], btsb_jmp_from[], btsb_jmp_to[],
	btsb_yield_from[], btsb_call_from[], btsb_call_to[];

#define U(p) ((uint64_t)(p))

/* Record @n (GET) is {@from, @to, 0}. */
static __attribute__((noinline)) int bts_rec_is(long n, uint64_t from, uint64_t to)
{
	struct bts_rec r = { 0, 0, 1 };

	if (sys_syscall(SYS_BTS_GET, n, (long)&r))
		return 0;
	return r.from == from && r.to == to && !r.flags;
}

static void btsa_main(void)
{
	const uint64_t e = U(syscall_entry);
	struct bts_status st;
	struct bts_rec out[8];
	char buf[32];
	long v;

	if (btsa_seq() != 5)
		user_exit(1);
	if (!bts_rec_is(0, U(btsa_jmp_from), U(btsa_jmp_to)) ||
	    !bts_rec_is(1, U(btsa_yield_from), e) ||
	    !bts_rec_is(2, U(btsa_call_from), U(btsa_call_to)) ||
	    !bts_rec_is(3, U(btsa_ret_from), U(btsa_ret_to)) ||
	    !bts_rec_is(4, U(btsa_count_from), e))
		user_exit(2);
	/* beyond the count: refused */
	if (!sys_syscall(SYS_BTS_GET, 1000, (long)out))
		user_exit(3);
	if (sys_syscall(SYS_BTS_STATUS, (long)&st, 0) || st.size != 64 ||
	    st.mode != BTS_MODE_WRAP || st.count < 6 || st.count > 64)
		user_exit(4);
	v = btsa_wrap(out);
	if (v != ((4 << 8) | 1))
		user_exit(5);
	if (out[0].from != U(btsw_call_from) || out[0].to != U(btsw_call_to) ||
	    out[1].from != U(btsw_ret_from) || out[1].to != U(btsw_ret_to) ||
	    out[2].from != U(btsw_count_from) || out[2].to != e ||
	    out[3].from != U(btsw_drain_from) || out[3].to != e)
		user_exit(6);
	/* too large a buffer, a bad mode, a user pointer into nowhere: refused */
	if (!sys_syscall(SYS_BTS_CONFIG, BTS_MAX_RECS + 1, BTS_MODE_WRAP) ||
	    !sys_syscall(SYS_BTS_CONFIG, 4, 7) || !sys_syscall(SYS_BTS_STATUS, 0x10, 0))
		user_exit(7);
	sys_syscall(SYS_BTS_CONFIG, 0, 0);
	if (sys_syscall(SYS_BTS_COUNT, 0, 0) != 0)
		user_exit(8);
	sys_syscall(SYS_WRITE, (long)buf, user_format(buf, "btsa ok", 0));
	user_exit(0);
}

static void btsb_main(void)
{
	char buf[32];

	if (btsb_seq() != 2)
		user_exit(1);
	if (!bts_rec_is(0, U(btsb_jmp_from), U(btsb_jmp_to)) ||
	    !bts_rec_is(1, U(btsb_yield_from), U(syscall_entry)))
		user_exit(2);
	sys_syscall(SYS_BTS_CLEAR, 0, 0);
	if (sys_syscall(SYS_BTS_COUNT, 0, 0) != 1)
		user_exit(3);
	sys_syscall(SYS_BTS_CONFIG, 0, 0);
	sys_syscall(SYS_WRITE, (long)buf, user_format(buf, "btsb ok", 0));
	user_exit(0);
}
#endif

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
#ifdef MINIOS_BTS
	if (next != current)
		bts_switch(next);
#endif
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

#ifdef MINIOS_BTS
static struct task_bts task_bts[NTASKS];

/* The task switch: the next task's DS area and DEBUGCTL (DEBUGCTL off while DS_AREA changes). */
static void bts_switch(int next)
{
	wrmsr(MSR_DEBUGCTL, 0);
	wrmsr(MSR_DS_AREA, task_bts[next].size ? (uint64_t)&task_bts[next] : 0);
	wrmsr(MSR_DEBUGCTL, task_bts[next].debugctl);
}

/* Records in the buffer: in wrap mode all of it once the slot at the index was written. */
static uint64_t bts_count(const struct task_bts *b)
{
	uint64_t n = (b->bts_index - b->bts_base) / BTS_REC;

	if (b->mode == BTS_MODE_WRAP && n < b->size && b->buf[n].from)
		return b->size;
	return n;
}

/* Record @n, oldest first. */
static const struct bts_rec *bts_nth(const struct task_bts *b, uint64_t n)
{
	uint64_t idx = (b->bts_index - b->bts_base) / BTS_REC;

	if (bts_count(b) == b->size && b->mode == BTS_MODE_WRAP)
		return &b->buf[(idx + n) % b->size];
	return &b->buf[n];
}

static void bts_clear(struct task_bts *b)
{
	memset(b->buf, 0, sizeof(b->buf));
	b->bts_index = b->bts_base;
}

static uint64_t bts_config(struct task_bts *b, uint64_t size, uint64_t mode)
{
	if (size > BTS_MAX_RECS || mode > BTS_MODE_FILL)
		return (uint64_t)-1;
	b->size = size;
	b->mode = mode;
	b->bts_base = (uint64_t)b->buf;
	b->bts_max = b->bts_base + size * BTS_REC;
	/* beyond the maximum: never reached, no PMI (fill mode stops storing when full) */
	b->bts_threshold = b->bts_max + BTS_REC;
	bts_clear(b);
	b->debugctl = size ? DEBUGCTL_TR | DEBUGCTL_BTS | DEBUGCTL_BTS_OFF_OS |
			     (mode == BTS_MODE_FILL ? DEBUGCTL_BTINT : 0) : 0;
	bts_switch(current);
	return 0;
}

static uint64_t bts_drain(struct task *t, struct task_bts *b, uint64_t ubuf, uint64_t max)
{
	uint64_t n = bts_count(b), i;
	struct bts_rec *out = (struct bts_rec *)ubuf;

	if (max > BTS_MAX_RECS || !user_range_ok(ubuf, max * sizeof(*out)))
		return (uint64_t)-1;
	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		out[i] = *bts_nth(b, i);
		uart_puts("rec ");
		uart_dec((uint64_t)t->pid);
		uart_putc(' ');
		uart_hex(out[i].from);
		uart_putc(' ');
		uart_hex(out[i].to);
		uart_putc('\n');
	}
	bts_clear(b);
	return n;
}

/* The BTS system calls: whether @f->rax was one (its result in @f->rax). */
static int bts_syscall(struct task *t, struct trap_frame *f)
{
	struct task_bts *b = &task_bts[current];
	struct bts_status *st;

	switch (f->rax) {
	case SYS_BTS_CONFIG:
		f->rax = bts_config(b, f->rdi, f->rsi);
		return 1;
	case SYS_BTS_STATUS:
		if (!user_range_ok(f->rdi, sizeof(*st))) {
			f->rax = (uint64_t)-1;
			return 1;
		}
		st = (struct bts_status *)f->rdi;
		st->size = b->size;
		st->mode = b->mode;
		st->count = bts_count(b);
		f->rax = 0;
		return 1;
	case SYS_BTS_GET:
		if (f->rdi >= bts_count(b) || !user_range_ok(f->rsi, sizeof(struct bts_rec))) {
			f->rax = (uint64_t)-1;
			return 1;
		}
		*(struct bts_rec *)f->rsi = *bts_nth(b, f->rdi);
		f->rax = 0;
		return 1;
	case SYS_BTS_COUNT:
		f->rax = bts_count(b);
		return 1;
	case SYS_BTS_DRAIN:
		f->rax = bts_drain(t, b, f->rdi, f->rsi);
		return 1;
	case SYS_BTS_CLEAR:
		bts_clear(b);
		f->rax = 0;
		return 1;
	default:
		return 0;
	}
}
#endif

static void do_syscall(struct task *t, struct trap_frame *f)
{
	const char *buf;
	uint64_t i;

#ifdef MINIOS_BTS
	if (bts_syscall(t, f))
		return;
#endif
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
#ifdef MINIOS_BTS
	task_create(4, "btsa", btsa_main);
	task_create(5, "btsb", btsb_main);
#endif

	current = 0;
	load_cr3(0);
	f = (struct trap_frame *)(cpu_trap_stack_top() - sizeof(*f));
	*f = tasks[0].ctx;
	trap_resume(f);
}
