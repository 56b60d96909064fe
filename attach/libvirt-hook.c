// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt-hook.c - /usr/libexec/vbts/libvirt-hook, libvirt's qemu hook (linked from
 * /etc/libvirt/hooks/qemu.d/): when a configured domain's QEMU starts, (re)start its
 * recorder `vbts-attach@DOMAIN.service` through systemctl, without a shell.
 *
 *   libvirt-hook DOMAIN OPERATION SUBOPERATION EXTRA   (the domain's XML on stdin, unread)
 *
 * libvirtd waits for its hooks and the recorder calls libvirt's API: systemctl --no-block
 * only queues the job. A domain is configured when /etc/vbts/attach.d/DOMAIN.conf exists.
 * The exit status is always 0: a recorder must never keep a domain from running; what went
 * wrong goes to stderr, which libvirtd logs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder.h"

#define SYSTEMCTL "/bin/systemctl"

int main(int argc, char **argv)
{
	char unit[RECORDER_UNIT_MAX];
	enum recorder_action act;
	char *args[5];
	pid_t pid;
	int status;

	if (argc < 3)
		return 0;
	act = recorder__action(argv[2]);
	if (act == RECORDER_NONE || !recorder__valid_domain(argv[1]) ||
	    !recorder__configured(RECORDER_CONF_DIR, argv[1]))
		return 0;
	if (recorder__unit_name(argv[1], unit, sizeof(unit)) < 0) {
		fprintf(stderr, "vbts libvirt hook: the domain's name is too long for a unit\n");
		return 0;
	}
	args[0] = "systemctl";
	args[1] = "--no-block";
	args[2] = act == RECORDER_RESTART ? "restart" : "start";
	args[3] = unit;
	args[4] = NULL;
	pid = fork();
	if (pid == 0) {
		execv(SYSTEMCTL, args);
		fprintf(stderr, "vbts libvirt hook: %s: %s\n", SYSTEMCTL, strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		fprintf(stderr, "vbts libvirt hook: cannot run %s: %s\n", SYSTEMCTL,
			strerror(errno));
		return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "vbts libvirt hook: systemctl %s %s failed\n", args[2], unit);
	return 0;
}
