// SPDX-License-Identifier: GPL-2.0
/*
 * mt-dyn.c - the dynamically linked program of the threads-oracle test: glibc's pthreads and
 * signals, its own code linked at a private address (0x10000000, not a PIE) so that QEMU's
 * -dfilter logs only that code, its loader and libc copied into the initramfs, user address
 * randomization off (norandmaps) so that the loader's entry is the same in every boot.
 *
 * The main thread says where the loader begins ("mt-dyn: ldso-entry 0x..."), takes a signal
 * through raise(3), starts two threads with pthread_create(3), worker_a and worker_b, each
 * running a loop of its own, and joins them; each thread says who it is ("mt-dyn: ROLE TID").
 * No branch of its own code depends on another thread's timing, on an address or on the
 * processor (glibc's ifuncs are outside its code).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mt-work.h"


static volatile unsigned long handled;

static OUT_OF_LINE void say(const char *role)
{
	printf("mt-dyn: %s %08lx\n", role, (unsigned long)syscall(SYS_gettid));
	fflush(stdout);
}

static void on_usr1(int sig)
{
	handled += work(2) + (unsigned long)sig;
}

static void *worker_a(void *arg)
{
	handled += work(5);
	say("worker_a");
	return arg;
}

static void *worker_b(void *arg)
{
	handled += work(7);
	say("worker_b");
	return arg;
}

int main(void)
{
	const Elf64_Ehdr *ld = (const Elf64_Ehdr *)getauxval(AT_BASE);
	pthread_t a, b;

	printf("mt-dyn: ldso-entry %#lx\n", ld ? (unsigned long)ld + ld->e_entry : 0UL);
	say("main");
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	handled += work(3);
	if (pthread_create(&a, NULL, worker_a, NULL) || pthread_create(&b, NULL, worker_b, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	handled += work(2);
	return handled ? 0 : 1;
}
