// SPDX-License-Identifier: GPL-2.0
/*
 * agentdemo.c - the agent test's PIE program: calls into libagentdemo.so, then waits until
 * /init writes to the FIFO named by its argument (so it is alive, with its library mapped,
 * while the agent reads /proc), and exits.
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
	if (argc < 2)
		return 0;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	while (read(fd, &c, 1) > 0)
		;
	return 0;
}
