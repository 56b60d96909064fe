// SPDX-License-Identifier: GPL-2.0
/*
 * start-trace.c - a process for `vbts attach --start-at start-trace` to see: static, so that it
 * starts quickly, it waits until the FIFO named by its first argument is written and closed,
 * then exits 0. While it waits the collector has seen it loaded and records branches.
 */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char c;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 1;
	while (read(fd, &c, 1) > 0)
		;
	return 0;
}
