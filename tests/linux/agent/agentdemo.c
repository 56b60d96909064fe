// SPDX-License-Identifier: GPL-2.0
/*
 * agentdemo.c - the agent test's PIE program: calls into libagentdemo.so, writes "ready" to
 * the FIFO named by its first argument (its library is mapped by now), then waits until /init
 * writes to the FIFO named by its second one (so it is alive while the agent reads /proc), and
 * exits.
 */
#include <fcntl.h>
#include <stdio.h>
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
	return 0;
}
