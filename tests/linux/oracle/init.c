// SPDX-License-Identifier: GPL-2.0
/*
 * init.c - /init of the process-oracle test's initramfs (static): starts /oracle (the traced
 * program) and /oracle-decoy (the same code at another address, under another name) side by
 * side, and for each prints the pid and the name the guest's kernel gives it once it has run:
 *
 *   vbts-oracle-init: spawned oracle pid 42 status 0
 *
 * (the name read from /proc/PID/comm of the exited child, before it is reaped), then exits
 * through the debug-exit port 0xf4 by /dev/port: value ORACLE_INIT_OK when both children
 * exited with status 0, ORACLE_INIT_FAILED otherwise. Programs named on the kernel command line
 * after "--" (which the kernel passes to /init as its arguments) are run instead of those two.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../guest-exit.h"

#define ORACLE_INIT_OK 0x10     /* vbts run and QEMU exit with (0x10 << 1) | 1 = 33 */
#define ORACLE_INIT_FAILED 0x64 /* 201 */

static const char *const default_programs[] = { "/oracle", "/oracle-decoy" };
#define NDEFAULT (sizeof(default_programs) / sizeof(default_programs[0]))
#define MAX_PROGRAMS 8

static void port_exit(unsigned char v)
{
	guest_exit("vbts-oracle-init", v);
}

static void die(const char *what)
{
	guest_die("vbts-oracle-init", what, ORACLE_INIT_FAILED);
}

/* The exited (not yet reaped) child's comm, newline cut. */
static void comm_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	n = read(fd, buf, size - 1);
	if (n < 0)
		die(path);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	close(fd);
}

int main(int argc, char **argv)
{
	const char *programs[MAX_PROGRAMS];
	pid_t pids[MAX_PROGRAMS];
	size_t nprograms = 0;
	int failed = 0;

	for (int i = 1; i < argc && nprograms < MAX_PROGRAMS; i++)
		programs[nprograms++] = argv[i];
	for (size_t i = 0; !nprograms && i < NDEFAULT; i++)
		programs[i] = default_programs[i];
	if (!nprograms)
		nprograms = NDEFAULT;

	mkdir("/proc", 0555);
	if (mount("proc", "/proc", "proc", 0, NULL) < 0)
		die("mount /proc");
	fflush(stdout);
	for (size_t i = 0; i < nprograms; i++) {
		char *const args[] = { (char *)programs[i], NULL };
		char *const envp[] = { NULL };

		pids[i] = fork();
		if (pids[i] < 0)
			die("fork");
		if (pids[i] == 0) {
			execve(programs[i], args, envp);
			_exit(127);
		}
	}
	for (size_t i = 0; i < nprograms; i++) {
		char comm[64];
		siginfo_t si;

		/* WNOWAIT: the child stays a zombie, its /proc entry readable. */
		if (waitid(P_PID, pids[i], &si, WEXITED | WNOWAIT) < 0)
			die("waitid");
		comm_of(pids[i], comm, sizeof(comm));
		printf("vbts-oracle-init: spawned %s pid %d status %d\n", comm, (int)pids[i],
		       si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
		if (si.si_code != CLD_EXITED || si.si_status != 0)
			failed = 1;
		if (waitpid(pids[i], NULL, 0) < 0)
			die("waitpid");
	}
	port_exit(failed ? ORACLE_INIT_FAILED : ORACLE_INIT_OK);
	return 1;
}
