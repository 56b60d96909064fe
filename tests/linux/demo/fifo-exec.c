// SPDX-License-Identifier: GPL-2.0
/*
 * fifo-exec.c - runs a program as SCHED_FIFO (busybox has no chrt): `fifo-exec PROG [ARG...]`
 * makes itself SCHED_FIFO, priority 10, and executes PROG, which keeps the policy.
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sched_param fifo = { .sched_priority = 10 };

	if (argc < 2) {
		fprintf(stderr, "usage: fifo-exec PROG [ARG...]\n");
		return 2;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &fifo)) {
		perror("fifo-exec: sched_setscheduler");
		return 1;
	}
	execv(argv[1], argv + 1);
	perror("fifo-exec: execv");
	return 1;
}
