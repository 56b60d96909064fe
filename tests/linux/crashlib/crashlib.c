// SPDX-License-Identifier: GPL-2.0
/*
 * crashlib.c - the crash test's PIE program: looks up an account that exists through
 * libcrashlib.so, writes "ready" to the FIFO named by its first argument (its library is
 * mapped and used by now), waits until the FIFO named by its second one is closed (the
 * agent has reported its mappings and uploaded its files), then deposits into an account
 * that does not exist: libcrashlib.so's crashlib_deposit() dies of SIGSEGV.
 *
 *   crashlib [READY GO]
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "crashlib.h"

static struct account accounts[] = {
	{ "alice", 120 },
	{ "bob", 75 },
	{ "carol", 310 },
};

int main(int argc, char **argv)
{
	int n = sizeof(accounts) / sizeof(accounts[0]);
	char c;
	int fd;

	crashlib_deposit(crashlib_find(accounts, n, "bob"), 20);
	printf("crashlib: bob has %ld; depositing 10 for mallory\n", accounts[1].balance);
	fflush(stdout);
	if (argc >= 3) {
		fd = open(argv[1], O_WRONLY);
		if (fd < 0 || write(fd, "ready\n", 6) != 6)
			return 1;
		close(fd);
		fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return 1;
		while (read(fd, &c, 1) > 0)
			;
		close(fd);
	}
	crashlib_deposit(crashlib_find(accounts, n, "mallory"), 10);
	printf("crashlib: not reached\n");
	return 0;
}
