// SPDX-License-Identifier: GPL-2.0
/*
 * mt-prog.c - the program of the threads-oracle test: one process that takes every way back to
 * user mode a Linux process has, with the same control flow in each of its threads on every
 * run. Static, no libc, raw system calls, linked at a private address (0x10000000) so that
 * QEMU's -dfilter logs only its own instructions (and those of mt-exec, at 0x30000000).
 *
 *  - the main thread: a signal handler entered on its tgkill's return, left through a restorer
 *    that calls rt_sigreturn; a second handler that leaves by a longjmp of its own (the
 *    siglongjmp case: no rt_sigreturn);
 *  - a thread (raw clone with CLONE_THREAD, on its own stack stack_t1) that runs a loop, says
 *    who it is, writes a byte into a pipe and exits; the main thread reads that byte;
 *  - a vfork child (clone with CLONE_VM | CLONE_VFORK, on its own stack stack_vf) that says who
 *    it is and executes /mt-exec;
 *  - a fork child (its own address space, the main thread's stack addresses) that runs a loop,
 *    says who it is and exits; the main thread waits for it and for the vfork child.
 *
 * Built a second time with -DMT_EXEC as /mt-exec: a loop, "mt-oracle: exec TID", exit.
 *
 * Each says "mt-oracle: ROLE TID" with TID in 8 hex digits (a fixed loop: no branch depends on
 * the number), so that the test maps the roles to the threads of a trace. Nothing a thread
 * does depends on another's timing: every wait is one blocking system call whose result steers
 * no branch. Exit status 0; 1 when its own arithmetic went wrong.
 */
#include "mt-work.h"

#define SYS_READ 0
#define SYS_WRITE 1
#define SYS_RT_SIGACTION 13
#define SYS_RT_SIGRETURN 15
#define SYS_GETPID 39
#define SYS_CLONE 56
#define SYS_FORK 57
#define SYS_EXECVE 59
#define SYS_EXIT 60
#define SYS_WAIT4 61
#define SYS_GETTID 186
#define SYS_EXIT_GROUP 231
#define SYS_TGKILL 234
#define SYS_PIPE2 293

#define SIGUSR1 10
#define SIGUSR2 12
#define SIGCHLD 17
#define SA_RESTORER 0x04000000UL
#define SA_NODEFER 0x40000000UL

#define CLONE_VM 0x100UL
#define CLONE_FS 0x200UL
#define CLONE_FILES 0x400UL
#define CLONE_SIGHAND 0x800UL
#define CLONE_VFORK 0x4000UL
#define CLONE_THREAD 0x10000UL
#define CLONE_SYSVSEM 0x40000UL

#define STACK_SIZE 16384

long mt_syscall(long nr, long a, long b, long c, long d);
long mt_spawn(void *stack_top, void (*fn)(void), unsigned long flags);
void mt_restorer(void);
long mt_setjmp(unsigned long *buf);
void mt_longjmp(unsigned long *buf) __attribute__((noreturn));

/* The threads' own stacks: the test tells the threads apart by the stack they run on. */
unsigned char stack_t1[STACK_SIZE] __attribute__((aligned(STACK_SIZE)));
unsigned char stack_vf[STACK_SIZE] __attribute__((aligned(STACK_SIZE)));

static volatile unsigned long handled;

__asm__(".text\n"
	/* long mt_syscall(nr, a, b, c, d) */
	".globl mt_syscall\n"
	"mt_syscall:\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov %r8, %r10\n"
	"	syscall\n"
	"	ret\n"
	/*
	 * long mt_spawn(stack_top, fn, flags): clone onto @stack_top; the child calls @fn, which
	 * never returns, and the parent gets the child's tid.
	 */
	".globl mt_spawn\n"
	"mt_spawn:\n"
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
	"1:	ret\n"
	/* The signal restorer: rt_sigreturn. */
	".globl mt_restorer\n"
	"mt_restorer:\n"
	"	mov $15, %eax\n"
	"	syscall\n"
	"	hlt\n"
	/* long mt_setjmp(buf): 0 now, 1 when mt_longjmp(buf) comes back here. */
	".globl mt_setjmp\n"
	"mt_setjmp:\n"
	"	mov %rbx, 0(%rdi)\n"
	"	mov %rbp, 8(%rdi)\n"
	"	mov %r12, 16(%rdi)\n"
	"	mov %r13, 24(%rdi)\n"
	"	mov %r14, 32(%rdi)\n"
	"	mov %r15, 40(%rdi)\n"
	"	lea 8(%rsp), %rdx\n"
	"	mov %rdx, 48(%rdi)\n"
	"	mov (%rsp), %rdx\n"
	"	mov %rdx, 56(%rdi)\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".globl mt_longjmp\n"
	"mt_longjmp:\n"
	"	mov 0(%rdi), %rbx\n"
	"	mov 8(%rdi), %rbp\n"
	"	mov 16(%rdi), %r12\n"
	"	mov 24(%rdi), %r13\n"
	"	mov 32(%rdi), %r14\n"
	"	mov 40(%rdi), %r15\n"
	"	mov 48(%rdi), %rsp\n"
	"	mov $1, %eax\n"
	"	jmp *56(%rdi)\n");

struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

static OUT_OF_LINE void say(const char *role)
{
	static const char hex[] = "0123456789abcdef";
	char line[48];
	unsigned long tid = (unsigned long)mt_syscall(SYS_GETTID, 0, 0, 0, 0);
	unsigned int n = 0;

	for (const char *p = "mt-oracle: "; *p; p++)
		line[n++] = *p;
	for (; *role; role++)
		line[n++] = *role;
	line[n++] = ' ';
	for (int k = 7; k >= 0; k--)
		line[n++] = hex[(tid >> (4 * k)) & 15];
	line[n++] = '\n';
	mt_syscall(SYS_WRITE, 1, (long)line, n, 0);
}

#ifndef MT_EXEC
static int pipe_fds[2];
static unsigned long jmp_main[8];

static void on_usr1(int sig)
{
	handled += work(3) + (unsigned long)sig;
}

static void on_usr2(int sig)
{
	handled += (unsigned long)sig;
	mt_longjmp(jmp_main);
}

static OUT_OF_LINE void thread_main(void)
{
	char byte = 't';

	handled += work(6);
	say("thread");
	mt_syscall(SYS_WRITE, pipe_fds[1], (long)&byte, 1, 0);
	mt_syscall(SYS_EXIT, 0, 0, 0, 0);
}

static OUT_OF_LINE void vfork_main(void)
{
	static char *const argv[] = { "/mt-exec", 0 };
	static char *const envp[] = { 0 };

	say("vfork");
	mt_syscall(SYS_EXECVE, (long)argv[0], (long)argv, (long)envp, 0);
	mt_syscall(SYS_EXIT, 127, 0, 0, 0);
}

static OUT_OF_LINE void fork_main(void)
{
	handled += work(4);
	say("fork");
	mt_syscall(SYS_EXIT_GROUP, 0, 0, 0, 0);
}

static OUT_OF_LINE void handlers(void)
{
	struct kernel_sigaction sa = {
		.handler = on_usr1, .flags = SA_RESTORER, .restorer = mt_restorer,
	};
	long pid = mt_syscall(SYS_GETPID, 0, 0, 0, 0);
	long tid = mt_syscall(SYS_GETTID, 0, 0, 0, 0);

	mt_syscall(SYS_RT_SIGACTION, SIGUSR1, (long)&sa, 0, 8);
	sa.handler = on_usr2;
	sa.flags = SA_RESTORER | SA_NODEFER;
	mt_syscall(SYS_RT_SIGACTION, SIGUSR2, (long)&sa, 0, 8);
	/* Delivered on the return of tgkill: the handler, then rt_sigreturn back here. */
	mt_syscall(SYS_TGKILL, pid, tid, SIGUSR1, 0);
	handled += work(2);
	/* This handler leaves by a longjmp: no rt_sigreturn. */
	if (!mt_setjmp(jmp_main))
		mt_syscall(SYS_TGKILL, pid, tid, SIGUSR2, 0);
	handled += work(2);
}

void mt_main(void);

__attribute__((used, noreturn)) void mt_main(void)
{
	long fork_pid, vfork_pid;
	char byte;

	handlers();
	say("main");
	mt_syscall(SYS_PIPE2, (long)pipe_fds, 0, 0, 0);
	mt_spawn(stack_t1 + STACK_SIZE, thread_main,
		 CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM);
	/* Until the thread has written: one blocking read, whatever the order. */
	mt_syscall(SYS_READ, pipe_fds[0], (long)&byte, 1, 0);
	handled += work(2);
	vfork_pid = mt_spawn(stack_vf + STACK_SIZE, vfork_main, CLONE_VM | CLONE_VFORK | SIGCHLD);
	fork_pid = mt_syscall(SYS_FORK, 0, 0, 0, 0);
	if (fork_pid == 0)
		fork_main();
	mt_syscall(SYS_WAIT4, fork_pid, 0, 0, 0);
	mt_syscall(SYS_WAIT4, vfork_pid, 0, 0, 0);
	handled += work(2);
	mt_syscall(SYS_EXIT_GROUP, handled == 0 ? 1 : 0, 0, 0, 0);
	for (;;)
		;
}
#else
void mt_main(void);

__attribute__((used, noreturn)) void mt_main(void)
{
	handled += work(5);
	say("exec");
	mt_syscall(SYS_EXIT_GROUP, handled == 0 ? 1 : 0, 0, 0, 0);
	for (;;)
		;
}
#endif

/* The kernel enters with an empty, 16-byte aligned stack. */
__asm__(".text\n"
	".globl _start\n"
	"_start:\n"
	"	xor %ebp, %ebp\n"
	"	and $-16, %rsp\n"
	"	call mt_main\n"
	"	hlt\n");
