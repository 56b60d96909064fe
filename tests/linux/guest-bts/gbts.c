// SPDX-License-Identifier: GPL-2.0
/*
 * gbts.c - a Linux guest's process that programs BTS itself (`vbts run --guest-bts`): through
 * /dev/cpu/0/msr (msr.ko) it points IA32_DS_AREA at a DS area and buffer in its own locked
 * memory, sets IA32_DEBUGCTL to TR | BTS | BTS_OFF_OS, takes labelled branches in user mode,
 * clears DEBUGCTL and checks its buffer record by record against its labels.
 *
 * While BTS is on, the process blocks once in read() and a child pinned to the same CPU runs
 * user code: the child was forked before the DS area was mapped, so it has nothing at that
 * address and its branches must be dropped (the VMM counts them), never stored anywhere. The
 * child exits only once BTS is off: every instruction of the guest, its kernel's included, is
 * stepped while BTS is on, and an exit is a long way through the kernel.
 *
 * Both run SCHED_FIFO: stepped, a task switch takes longer than a CFS time slice, so with two
 * runnable CFS tasks the scheduler would switch between them at every tick and neither would
 * get back to user mode. A SCHED_FIFO task is neither time-sliced nor preempted by the one it
 * wakes (the kernel's RT throttling still gives CFS tasks their 5%).
 *
 * The records this process must find, in order (ring 3 only, BTS_OFF_OS):
 *   lx_jmp_from -> lx_jmp_to, lx_call_from -> lx_call_to, lx_ret_from -> lx_ret_to,
 *   lx_sc_write -> K, lx_sc_read -> K, lx_ind_from -> lx_ind_to, lx_sc_off -> K,
 * K being the kernel's system-call entry (one address, in the kernel half). Between them only
 * interrupts and exceptions taken in user mode may appear: from an instruction of lx_seq to a
 * kernel address. Nothing past the index, the DS area's other fields unchanged.
 *
 * Prints "gbts: ..." lines; "gbts: ok" and exit status 0 when every check passed, 1 when one
 * failed, 2 when the set-up failed (CPUID without DS, DTES64 and DS-CPL; no msr device).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cpuid.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSR_DEBUGCTL 0x1d9
#define MSR_DS_AREA 0x600
#define TR (1ULL << 6)
#define BTS (1ULL << 7)
#define OFF_OS (1ULL << 9)

#define DS_VA 0x5a5a00000000ULL /* the DS area; the buffer on the next page */
#define REC 24
#define CAP 64
#define KERNEL_HALF 0xffff800000000000ULL
#define CANARY 0xa5

struct ds_area {
	uint64_t bts_base, bts_index, bts_max, bts_threshold;
	uint64_t pebs[5];
};

struct rec {
	uint64_t from, to, flags;
};

#define L(name) ".globl " name "\n" name ":\n"

/*
 * lx_seq(msr_fd, wfd, rfd, &on, &off, &byte): DEBUGCTL = on (pwrite on the msr device), the
 * labelled branches, a write() to wfd and a read() from rfd (the child runs meanwhile),
 * DEBUGCTL = off. Every system call is a bare SYSCALL here, labelled: no library code runs
 * while BTS is on.
 */
__asm__(
	".text\n"
	".globl lx_seq\n"
	".type lx_seq, @function\n"
	"lx_seq:\n"
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	mov %rdi, %rbx\n"          /* msr fd */
	"	mov %rsi, %r12\n"          /* write fd */
	"	mov %rdx, %r13\n"          /* read fd */
	"	mov %r8, %r14\n"           /* &off */
	"	mov %r9, %r15\n"           /* &byte */
	"	mov $18, %eax\n"           /* pwrite64(msr fd, &on, 8, DEBUGCTL) */
	"	mov %rbx, %rdi\n"
	"	mov %rcx, %rsi\n"
	"	mov $8, %edx\n"
	"	mov $0x1d9, %r10d\n"
	"	syscall\n"
	L("lx_jmp_from")
	"	jmp lx_jmp_to\n"
	"	ud2\n"
	L("lx_jmp_to")
	L("lx_call_from")
	"	call lx_leaf\n"
	L("lx_ret_to")
	"	mov $1, %eax\n"            /* write(wfd, &byte, 1) */
	"	mov %r12, %rdi\n"
	"	mov %r15, %rsi\n"
	"	mov $1, %edx\n"
	L("lx_sc_write")
	"	syscall\n"
	"	xor %eax, %eax\n"          /* read(rfd, &byte, 1) */
	"	mov %r13, %rdi\n"
	"	mov %r15, %rsi\n"
	"	mov $1, %edx\n"
	L("lx_sc_read")
	"	syscall\n"
	"	lea lx_ind_to(%rip), %rax\n"
	L("lx_ind_from")
	"	jmp *%rax\n"
	"	ud2\n"
	L("lx_ind_to")
	"	mov $18, %eax\n"           /* pwrite64(msr fd, &off, 8, DEBUGCTL) */
	"	mov %rbx, %rdi\n"
	"	mov %r14, %rsi\n"
	"	mov $8, %edx\n"
	"	mov $0x1d9, %r10d\n"
	L("lx_sc_off")
	"	syscall\n"
	"	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	ret\n"
	"lx_leaf:\n"
	L("lx_call_to")
	"	nop\n"
	L("lx_ret_from")
	"	ret\n"
	L("lx_seq_end")
	".size lx_seq, . - lx_seq\n");

void lx_seq(long msr_fd, long wfd, long rfd, const uint64_t *on, const uint64_t *off, char *byte);
extern char lx_seq_end[], lx_jmp_from[], lx_jmp_to[], lx_call_from[], lx_call_to[], lx_ret_from[],
	lx_ret_to[], lx_sc_write[], lx_sc_read[], lx_ind_from[], lx_ind_to[], lx_sc_off[];

static int failed;

static void bad(const char *what, unsigned int i, uint64_t a, uint64_t b)
{
	printf("gbts: FAIL: %s: record %u: %#llx %#llx\n", what, i, (unsigned long long)a,
	       (unsigned long long)b);
	failed = 1;
}

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The child: waits for the parent's byte, takes user-mode branches on CPU 0, answers, and waits
 * for a second byte, sent once BTS is off: its exit (a long way through the kernel) is not
 * stepped for the parent's BTS.
 */
static void child(int rfd, int wfd)
{
	volatile unsigned int sum = 0;
	char b;

	if (pin_cpu0() || read(rfd, &b, 1) != 1)
		_exit(3);
	for (unsigned int i = 0; i < 200; i++)
		sum += i & 1 ? i : 1;
	if (write(wfd, &b, 1) != 1 || read(rfd, &b, 1) != 1)
		_exit(3);
	_exit(sum ? 0 : 4);
}

static int msr_write(int fd, uint32_t msr, uint64_t v)
{
	return pwrite(fd, &v, sizeof(v), msr) == sizeof(v) ? 0 : -1;
}

int main(void)
{
	const struct rec want[] = {
		{ (uint64_t)lx_jmp_from, (uint64_t)lx_jmp_to, 0 },
		{ (uint64_t)lx_call_from, (uint64_t)lx_call_to, 0 },
		{ (uint64_t)lx_ret_from, (uint64_t)lx_ret_to, 0 },
		{ (uint64_t)lx_sc_write, 0, 0 },
		{ (uint64_t)lx_sc_read, 0, 0 },
		{ (uint64_t)lx_ind_from, (uint64_t)lx_ind_to, 0 },
		{ (uint64_t)lx_sc_off, 0, 0 },
	};
	const unsigned int nwant = sizeof(want) / sizeof(want[0]);
	const struct sched_param fifo = { .sched_priority = 1 };
	uint64_t on = TR | BTS | OFF_OS, off = 0, entry = 0, base, max;
	unsigned int a, b, c, d, n, w = 0, events = 0, status;
	int to_child[2], to_parent[2], fd, pid;
	struct ds_area *ds;
	struct rec *buf;
	char byte = 'x';
	uint8_t *m;

	setvbuf(stdout, NULL, _IONBF, 0);
	__cpuid(1, a, b, c, d);
	if (!(d & (1U << 21)) || !(c & (1U << 2)) || !(c & (1U << 4))) {
		printf("gbts: CPUID.01H without DS, DTES64 or DS-CPL (edx %#x ecx %#x)\n", d, c);
		return 2;
	}
	if (pin_cpu0() || sched_setscheduler(0, SCHED_FIFO, &fifo) || pipe(to_child) ||
	    pipe(to_parent)) {
		perror("gbts: set-up");
		return 2;
	}
	/* Before the DS area exists: the child has nothing at DS_VA. */
	pid = fork();
	if (pid < 0) {
		perror("gbts: fork");
		return 2;
	}
	if (!pid)
		child(to_child[0], to_parent[1]);
	m = mmap((void *)DS_VA, 3 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_POPULATE | MAP_LOCKED, -1, 0);
	if (m != (void *)DS_VA) {
		perror("gbts: mmap of the DS area");
		return 2;
	}
	memset(m, CANARY, 3 * 4096);
	ds = (struct ds_area *)m;
	buf = (struct rec *)(m + 4096);
	memset(buf, 0, CAP * REC);
	base = (uint64_t)buf;
	max = base + CAP * REC;
	ds->bts_base = base;
	ds->bts_index = base;
	ds->bts_max = max;
	ds->bts_threshold = max + REC;
	fd = open("/dev/cpu/0/msr", O_RDWR);
	if (fd < 0 || msr_write(fd, MSR_DS_AREA, DS_VA)) {
		perror("gbts: /dev/cpu/0/msr");
		return 2;
	}
	lx_seq(fd, to_child[1], to_parent[0], &on, &off, &byte);
	msr_write(fd, MSR_DS_AREA, 0);
	if (write(to_child[1], &byte, 1) != 1)
		bad("the child's second byte", 0, 0, 0);
	if (waitpid(pid, (int *)&status, 0) != pid || status)
		bad("the child failed", 0, status, 0);

	if (ds->bts_base != base || ds->bts_max != max || ds->bts_threshold != max + REC)
		bad("DS area fields changed", 0, ds->bts_base, ds->bts_max);
	if (ds->bts_index < base || ds->bts_index > max || (ds->bts_index - base) % REC) {
		bad("index", 0, ds->bts_index, base);
		n = 0;
	} else {
		n = (unsigned int)((ds->bts_index - base) / REC);
	}
	for (unsigned int i = 0; i < n; i++) {
		const struct rec *r = &buf[i];

		printf("gbts: rec %#llx %#llx\n", (unsigned long long)r->from,
		       (unsigned long long)r->to);
		if (r->flags)
			bad("flags", i, r->flags, 0);
		if (r->from < (uint64_t)lx_seq || r->from >= (uint64_t)lx_seq_end) {
			bad("from outside the labelled code", i, r->from, r->to);
			continue;
		}
		if (w < nwant && r->from == want[w].from &&
		    (want[w].to ? r->to == want[w].to : r->to >= KERNEL_HALF)) {
			if (!want[w].to && entry && r->to != entry)
				bad("system calls enter the kernel at two addresses", i, r->to, entry);
			if (!want[w].to)
				entry = r->to;
			w++;
			continue;
		}
		/* an interrupt or exception taken in user mode */
		if (r->to < KERNEL_HALF)
			bad("not a labelled branch", i, r->from, r->to);
		events++;
	}
	if (w != nwant)
		bad("labelled branches found", w, w, nwant);
	/* nothing past the index: the rest of the buffer, the page after it */
	for (uint8_t *p = (uint8_t *)&buf[n]; p < (uint8_t *)buf + CAP * REC; p++)
		if (*p)
			bad("written past the index", (unsigned int)(p - (uint8_t *)buf), *p, 0);
	for (uint8_t *p = m + 4096 + CAP * REC; p < m + 3 * 4096; p++)
		if (*p != CANARY) {
			bad("written past the buffer", (unsigned int)(p - m), *p, CANARY);
			break;
		}
	printf("gbts: %u records: %u labelled, %u interrupts or exceptions\n", n, w, events);
	if (failed)
		return 1;
	printf("gbts: ok\n");
	return 0;
}
