// SPDX-License-Identifier: GPL-2.0
/*
 * harness.c - re-running a vbts subcommand inside tests/harness/run of the source tree.
 *
 * The harness mounts the host's root read-only and the work tree (the source tree, holding the
 * build directories) read-write at the same path, so the same binary runs inside and files it
 * writes under the work tree appear on the host.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"

extern char **environ;

#define HARNESS_RUN VBTS_SOURCE_ROOT "/tests/harness/run"
#define HARNESS_MAX_ARGS 256

bool harness__strip(int *argc, char **argv)
{
	bool found = false;
	int out = 0;

	for (int i = 0; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--harness")) {
			found = true;
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
	return found;
}

bool harness__path_inside(const char *path)
{
	char *copy = strdup(path), *dir, real[PATH_MAX];
	size_t n = strlen(VBTS_SOURCE_ROOT);
	bool inside = false;

	if (!copy)
		return false;
	/* The directory itself may not exist yet: resolve its parent. */
	dir = dirname(copy);
	if (realpath(dir, real))
		inside = !strncmp(real, VBTS_SOURCE_ROOT, n) && (real[n] == '/' || !real[n]);
	free(copy);
	return inside;
}

int harness__run(char **argv)
{
	char self[PATH_MAX], copy[PATH_MAX], build[PATH_MAX], *args[HARNESS_MAX_ARGS];
	ssize_t len;
	int n = 0, status, ret;
	pid_t pid;

	if (access(HARNESS_RUN, X_OK) < 0) {
		pr_err("--harness: %s: %s", HARNESS_RUN, strerror(errno));
		return 2;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0) {
		pr_err("--harness: cannot find this binary: %s", strerror(errno));
		return 1;
	}
	self[len] = '\0';
	/* The binary is BUILD/cli/vbts: the harness caches its kernel and initramfs in BUILD. */
	snprintf(copy, sizeof(copy), "%s", self);
	snprintf(build, sizeof(build), "%s", dirname(dirname(copy)));
	args[n++] = (char *)HARNESS_RUN;
	args[n++] = (char *)"--build";
	args[n++] = build;
	args[n++] = (char *)"--";
	args[n++] = self;
	for (int i = 0; argv[i]; i++) {
		if (n == HARNESS_MAX_ARGS - 1) {
			pr_err("--harness: too many arguments");
			return 2;
		}
		args[n++] = argv[i];
	}
	args[n] = NULL;
	ret = posix_spawn(&pid, HARNESS_RUN, NULL, NULL, args, environ);
	if (ret) {
		pr_err("--harness: %s: %s", HARNESS_RUN, strerror(ret));
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			pr_err("--harness: waitpid: %s", strerror(errno));
			return 1;
		}
	}
	if (!WIFEXITED(status))
		return 1;
	switch (WEXITSTATUS(status)) {
	case 77:
		pr_err("--harness: the QEMU harness cannot run on this machine");
		return 2;
	case 124:
	case 125:
		pr_err("--harness: the harness failed (status %d)", WEXITSTATUS(status));
		return 1;
	default:
		return WEXITSTATUS(status);
	}
}
