// SPDX-License-Identifier: GPL-2.0
/*
 * init.c - /init of the Linux boot tests' initramfs (static): says it reached user space with
 * the guest's uptime, the CPUs online and a token from the command line, announces itself on
 * the agent channel (port 0x700, through /dev/port), then does what vbts.action= asks:
 *
 *   exit      (default) write the number of CPUs online to the debug-exit port 0xf4 through
 *             /dev/port: vbts run exits with (cpus << 1) | 1
 *   poweroff  reboot(RB_POWER_OFF)
 *   reboot    reboot(RB_AUTOBOOT)
 *   panic     load the modules listed in /modules.list (pvpanic), then sysrq 'c'
 *   panic-nodriver  sysrq 'c' without loading them
 *   echo      print "ready for input", read a line from the console, print it back as
 *             "read: LINE", then exit as above
 *
 * A failure writes INIT_FAILED to the port (status 201).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "guest-exit.h"

#define AGENT_PORT 0x700
#define INIT_FAILED 100

/* Everything printed has left the UART (the tty layer sends it on THR-empty interrupts). */
static void drain(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);
}

static void port_write(unsigned char v)
{
	guest_exit("vbts-init", v);
}

static void die(const char *what)
{
	guest_die("vbts-init", what, INIT_FAILED);
}

/* One JSON line on the agent channel: byte by byte to the same port (/dev/port's write would
 * move on to the next port with each byte). */
static void agent_send(const char *line)
{
	int fd = open("/dev/port", O_WRONLY);

	for (const char *p = line; fd >= 0 && *p; p++)
		if (pwrite(fd, p, 1, AGENT_PORT) != 1)
			die("agent channel");
	if (fd < 0)
		die("/dev/port");
	close(fd);
}

static size_t read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die(path);
	n = read(fd, buf, size - 1);
	if (n < 0)
		die(path);
	buf[n] = '\0';
	close(fd);
	return n;
}

/* The value of "key=" on the command line, "" when absent. */
static void param(const char *cmdline, const char *key, char *out, size_t size)
{
	const char *p = cmdline;
	size_t klen = strlen(key), n = 0;

	out[0] = '\0';
	while ((p = strstr(p, key))) {
		if ((p == cmdline || p[-1] == ' ') && p[klen] == '=') {
			p += klen + 1;
			while (p[n] && p[n] != ' ' && p[n] != '\n' && n < size - 1)
				n++;
			memcpy(out, p, n);
			out[n] = '\0';
			return;
		}
		p += klen;
	}
}

static int cpus_online(void)
{
	static char buf[65536];
	int n = 0;

	read_file("/proc/cpuinfo", buf, sizeof(buf));
	for (char *p = buf; (p = strstr(p, "processor\t")); p++)
		n++;
	return n;
}

static void load_modules(void)
{
	char list[4096], *name, *save;

	read_file("/modules.list", list, sizeof(list));
	for (name = strtok_r(list, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
		int fd = open(name, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0) < 0)
			die(name);
		close(fd);
	}
}

int main(void)
{
	char cmdline[4096], uptime[128], action[32], token[64];
	int cpus;

	mkdir("/proc", 0555);
	if (mount("proc", "/proc", "proc", 0, NULL) < 0)
		die("mount /proc");
	read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	read_file("/proc/uptime", uptime, sizeof(uptime));
	uptime[strcspn(uptime, " ")] = '\0';
	param(cmdline, "vbts.action", action, sizeof(action));
	param(cmdline, "vbts.token", token, sizeof(token));
	cpus = cpus_online();
	agent_send("{\"event\":\"agent-proc\",\"pid\":1,\"comm\":\"init\"}\n");
	printf("vbts-init: user space after %s s, cpus online %d, token %s\n", uptime, cpus, token);
	drain();

	if (!strcmp(action, "echo")) {
		char line[256];

		printf("vbts-init: ready for input\n");
		drain();
		if (!fgets(line, sizeof(line), stdin))
			die("reading the console");
		line[strcspn(line, "\r\n")] = '\0';
		printf("vbts-init: read: %s\n", line);
		port_write(cpus);
	} else if (!action[0] || !strcmp(action, "exit")) {
		port_write(cpus);
	} else if (!strcmp(action, "poweroff")) {
		sync();
		reboot(RB_POWER_OFF);
		die("reboot(RB_POWER_OFF)");
	} else if (!strcmp(action, "reboot")) {
		sync();
		reboot(RB_AUTOBOOT);
		die("reboot(RB_AUTOBOOT)");
	} else if (!strcmp(action, "panic") || !strcmp(action, "panic-nodriver")) {
		int fd;

		if (!strcmp(action, "panic"))
			load_modules();
		fd = open("/proc/sysrq-trigger", O_WRONLY);
		if (fd < 0 || write(fd, "c", 1) != 1)
			die("/proc/sysrq-trigger");
		die("still alive after sysrq c");
	}
	errno = EINVAL;
	die(action);
	return 1;
}
