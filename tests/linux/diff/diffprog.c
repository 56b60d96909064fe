// SPDX-License-Identifier: GPL-2.0
/*
 * diffprog.c - the program of the diff-check test (tests/linux/diff/diff-check): the same
 * control flow on every run, in two threads, so that two boots compare equal; built with
 * -DDIFF_CHANGED, one condition of checksum() tests another bit (same code layout, other
 * branches from the first value where the bits differ); built with -DDIFF_NOISY as /noisy, a
 * loop whose count comes from the time stamp counter (8 to 135 rounds), the noise a baseline
 * records. Static, no libc, raw system calls, linked at a private address (0x10000000).
 *
 *  - the main thread starts a thread (raw clone with CLONE_THREAD, on its own stack) that runs
 *    checksum(), writes a byte into a pipe and exits; the main thread reads that byte, runs
 *    checksum() itself and exits 0.
 *  - /noisy: rounds() of a count read from the TSC, then checksum(), exit 0.
 *
 * Nothing a thread does depends on another's timing: every wait is one blocking system call
 * whose result steers no branch.
 */
#define SYS_READ 0
#define SYS_WRITE 1
#define SYS_EXIT 60
#define SYS_EXIT_GROUP 231
#define SYS_PIPE2 293

#define CLONE_VM 0x100UL
#define CLONE_FS 0x200UL
#define CLONE_FILES 0x400UL
#define CLONE_SIGHAND 0x800UL
#define CLONE_THREAD 0x10000UL
#define CLONE_SYSVSEM 0x40000UL

#define STACK_SIZE 16384
#define OUT_OF_LINE __attribute__((noinline, noclone))

#ifdef DIFF_CHANGED
#define CHECK_BIT 2
#else
#define CHECK_BIT 1
#endif

long d_syscall(long nr, long a, long b, long c, long d);
long d_spawn(void *stack_top, void (*fn)(void), unsigned long flags);
void d_main(void);

/* The kernel enters with an empty, 16-byte aligned stack. */
__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call d_main\n"
	"	hlt\n"
	".globl d_syscall\n"
	"d_syscall:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	syscall\n"
	"	ret\n"
	/* long d_spawn(stack_top, fn, flags): the child calls @fn, which never returns */
	".globl d_spawn\n"
	"d_spawn:\n"
	"	mov %rsi, %r9\n"
	"	mov %rdi, %rsi\n"
	"	mov %rdx, %rdi\n"
	"	xor %edx, %edx\n"
	"	xor %r10d, %r10d\n"
	"	xor %r8d, %r8d\n"
	"	mov $56, %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jnz 1f\n"
	"	call *%r9\n"
	"	hlt\n"
	"1:	ret\n");

static volatile unsigned long sink;

static OUT_OF_LINE unsigned long step(unsigned int sel, unsigned long x)
{
	switch (sel) {
	case 0:
		return x + 1;
	case 1:
		return x * 3;
	case 2:
		return x - 7;
	case 3:
		return x << 2;
	case 4:
		return x >> 1;
	case 5:
		return x ^ 0xa5;
	default:
		return x | 0x10;
	}
}

static OUT_OF_LINE unsigned long twist(unsigned long x)
{
	return (x >> 3) ^ (x * 5);
}

static OUT_OF_LINE unsigned long checksum(unsigned int n)
{
	volatile unsigned int rounds = n;
	unsigned long acc = 11;

	for (unsigned int i = 0; i < rounds; i++) {
		acc = step(i % 7, acc);
		if (acc & CHECK_BIT)    /* diff-check: the condition */
			acc = twist(acc);       /* diff-check: the call */
	}
	return acc;
}

#ifdef DIFF_NOISY
static OUT_OF_LINE unsigned long rounds(unsigned int n)
{
	unsigned long acc = 3;

	for (unsigned int i = 0; i < n; i++)
		acc = step(i % 7, acc);
	return acc;
}

__attribute__((used, noreturn)) void d_main(void)
{
	unsigned int lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	sink = rounds(8 + ((lo >> 4) & 127));
	sink += checksum(12);
	d_syscall(SYS_EXIT_GROUP, 0, 0, 0, 0);
	for (;;)
		;
}
#else
unsigned char stack_t1[STACK_SIZE] __attribute__((aligned(STACK_SIZE)));
static int pipe_fds[2];

static OUT_OF_LINE void thread_main(void)
{
	char byte = 't';

	sink = checksum(9);
	d_syscall(SYS_WRITE, pipe_fds[1], (long)&byte, 1, 0);
	d_syscall(SYS_EXIT, 0, 0, 0, 0);
}

__attribute__((used, noreturn)) void d_main(void)
{
	char byte;

	d_syscall(SYS_PIPE2, (long)pipe_fds, 0, 0, 0);
	d_spawn(stack_t1 + STACK_SIZE, thread_main,
		CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM);
	/* Until the thread has written: one blocking read, whatever the order. */
	d_syscall(SYS_READ, pipe_fds[0], (long)&byte, 1, 0);
	sink += checksum(12);
	d_syscall(SYS_EXIT_GROUP, 0, 0, 0, 0);
	for (;;)
		;
}
#endif
