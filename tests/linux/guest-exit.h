/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest-exit.h - how the Linux test guests' static /init programs end a run: a byte to the
 * debug-exit port 0xf4 through /dev/port (the kernel does the I/O at CPL 0, so it works nested,
 * where user-space port I/O faults), after the console has drained.
 */
#ifndef VBTS_TESTS_LINUX_GUEST_EXIT_H
#define VBTS_TESTS_LINUX_GUEST_EXIT_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#define GUEST_DEBUG_EXIT_PORT 0xf4

/**
 * guest_exit() - write @v to the debug-exit port (vbts run exits with (v << 1) | 1), then wait
 * for the VMM to end the run; never returns.
 * @who: the program's name, prefixing the one line said when /dev/port fails
 * @v:   the value
 */
static inline void __attribute__((noreturn)) guest_exit(const char *who, unsigned char v)
{
	int fd;

	/* Everything printed has left the UART (the tty layer sends it on THR-empty interrupts). */
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
	fd = open("/dev/port", O_WRONLY);
	if (fd < 0 || lseek(fd, GUEST_DEBUG_EXIT_PORT, SEEK_SET) != GUEST_DEBUG_EXIT_PORT ||
	    write(fd, &v, 1) != 1)
		printf("%s: /dev/port: %s\n", who, strerror(errno));
	fflush(stdout);
	for (;;)
		pause();
}

/**
 * guest_die() - say what failed and why (errno), then end the run with @v; never returns.
 * @who:  the program's name
 * @what: what failed
 * @v:    the debug-exit value of a failure
 */
static inline void __attribute__((noreturn)) guest_die(const char *who, const char *what,
						       unsigned char v)
{
	printf("%s: FAILED: %s: %s\n", who, what, strerror(errno));
	guest_exit(who, v);
}

#endif /* VBTS_TESTS_LINUX_GUEST_EXIT_H */
