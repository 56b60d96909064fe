// SPDX-License-Identifier: GPL-2.0
/*
 * prog.c - the program a Linux guest runs for the process-oracle test: static, no libc, raw
 * system calls, linked at a private address (0x10000000, a decoy copy at 0x20000000) so that
 * QEMU's -dfilter logs only its own instructions.
 *
 * Its user-mode control flow depends on nothing but its own code: no CPUID, no time, no pid,
 * nothing read from the kernel steers a branch. It runs loops, direct and indirect calls, a
 * switch compiled to a jump table (mt-work.h's step()), a recursive function, then writes a
 * fixed line and exits with status 0 (1 when its own arithmetic went wrong, which the test
 * sees in /init's report).
 */
#include "mt-work.h"

#define SYS_WRITE 1
#define SYS_EXIT 60

static long sys_call3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Each function below is kept out of line so that its call and return are real branches. */

static OUT_OF_LINE unsigned long op_add(unsigned long x)
{
	return x + 3;
}

static OUT_OF_LINE unsigned long op_mul(unsigned long x)
{
	return x * 5;
}

static OUT_OF_LINE unsigned long op_xor(unsigned long x)
{
	return x ^ 0x55;
}

static unsigned long (*const ops[])(unsigned long) = { op_add, op_mul, op_xor };

/* Recursive (not a tail call: the sum needs both results). */
static OUT_OF_LINE unsigned long fib(unsigned int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

static OUT_OF_LINE void print(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	sys_call3(SYS_WRITE, 1, (long)s, (long)n);
}

static OUT_OF_LINE unsigned long run(void)
{
	/* The optimiser must not fold the loops away: the bounds go through memory. */
	volatile unsigned int outer = 12, inner = 9, deep = 10;
	unsigned long acc = 1;

	for (unsigned int i = 0; i < outer; i++) {
		acc = ops[i % 3](acc);
		for (unsigned int j = 0; j < inner; j++)
			acc = step((i + j) % 9, acc);
	}
	return acc + fib(deep);
}

void prog_main(void);

__attribute__((used, noreturn)) void prog_main(void)
{
	unsigned long acc = run();

	print("oracle program: done\n");
	/* fib(10) = 55; the rest is whatever the loops computed, the same on every machine. */
	sys_call3(SYS_EXIT, acc == 0 ? 1 : 0, 0, 0);
	for (;;)
		;
}

/* The kernel enters with an empty, 16-byte aligned stack. */
__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call prog_main\n"
	"	hlt\n");
