// SPDX-License-Identifier: GPL-2.0
/*
 * sysrq-crash.c - the process that panics the guest kernel in panic-path-check: it writes 'c'
 * to /proc/sysrq-trigger, as `echo c > /proc/sysrq-trigger` does. Static, so that it is its
 * own executable: `--task sysrq-crash` selects it from the CR3 load of its exec (a busybox
 * applet's comm is set after that load, so it is selected only at a later exit to vbts).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	if (fd < 0) {
		perror("sysrq-crash: /proc/sysrq-trigger");
		return 1;
	}
	if (write(fd, "c", 1) != 1)
		perror("sysrq-crash: write");
	close(fd);
	return 1;
}
