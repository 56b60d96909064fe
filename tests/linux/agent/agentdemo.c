// SPDX-License-Identifier: GPL-2.0
/*
 * agentdemo.c - the agent test's PIE program: calls into libagentdemo.so, writes "ready" to
 * the FIFO named by its first argument (its library is mapped by now), then waits until /init
 * writes to the FIFO named by its second one (so it is alive while the agent reads /proc), and
 * exits. With a third argument, "spin", it first runs 20 ms (CLOCK_MONOTONIC, read through the
 * vDSO) in user mode, calling into its library: a collector that started recording while it
 * was blocked (vbts attach --start-at) is sure to see it back in user mode at a timer
 * interrupt, where a return from the kernel it did not follow is not.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agentdemo.h"

int main(int argc, char **argv)
{
	int v[] = { 3, 5, 7 };
	char c;
	int fd;

	printf("agentdemo: sum %d\n", agentdemo_sum(v, 3));
	fflush(stdout);
	if (argc < 3)
		return 0;
	fd = open(argv[1], O_WRONLY);
	if (fd < 0 || write(fd, "ready\n", 6) != 6)
		return 1;
	close(fd);
	fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return 1;
	while (read(fd, &c, 1) > 0)
		;
	if (argc > 3 && !strcmp(argv[3], "spin")) {
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			v[0] = agentdemo_sum(v, 3) & 7;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	}
	return 0;
}
