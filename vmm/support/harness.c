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
#define KVM_PATCHES_BUILD VBTS_SOURCE_ROOT "/kvm-patches/build"
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

/* Waits for @pid; its exit status, or -1 when it did not exit normally. */
static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			pr_err("--harness: waitpid: %s", strerror(errno));
			return -1;
		}
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * Brings the series' modules in @build/kvm-patches up to date with kvm-patches/build (a no-op
 * of a few seconds when nothing changed; the first build fetches Debian's kernel source).
 * Return: 0, or -1 when they cannot be built (said in one line).
 */
static int build_series(const char *build, const char *out)
{
	char env_out[PATH_MAX + 32], env_build[PATH_MAX + 32];
	char *args[] = { (char *)KVM_PATCHES_BUILD, NULL };
	char **env;
	size_t n = 0;
	pid_t pid;
	int ret;

	if (access(KVM_PATCHES_BUILD, X_OK) < 0) {
		pr_err("--harness: %s: %s", KVM_PATCHES_BUILD, strerror(errno));
		return -1;
	}
	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env) {
		pr_err("--harness: out of memory");
		return -1;
	}
	snprintf(env_out, sizeof(env_out), "KVM_PATCHES_OUT=%s", out);
	snprintf(env_build, sizeof(env_build), "VBTS_BUILD_DIR=%s", build);
	n = 0;
	env[n++] = env_out;
	env[n++] = env_build;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "KVM_PATCHES_OUT=", 16) && strncmp(*e, "VBTS_BUILD_DIR=", 15))
			env[n++] = *e;
	env[n] = NULL;
	pr_info("--harness: bringing the kvm-patches modules up to date (%s/modules)", out);
	ret = posix_spawn(&pid, KVM_PATCHES_BUILD, NULL, NULL, args, env);
	free(env);
	if (ret) {
		pr_err("--harness: %s: %s", KVM_PATCHES_BUILD, strerror(ret));
		return -1;
	}
	if (wait_child(pid) != 0) {
		pr_err("--harness: kvm-patches/build failed; the kvm backend needs its modules");
		return -1;
	}
	return 0;
}

int harness__run(char **argv, enum harness_kvm kvm, unsigned int timeout_s)
{
	char self[PATH_MAX], copy[PATH_MAX], build[PATH_MAX], *args[HARNESS_MAX_ARGS];
	char limit[24];
	char series[PATH_MAX + 16], modules[PATH_MAX + 32];
	bool use_series = false;
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
	snprintf(series, sizeof(series), "%s/kvm-patches", build);
	snprintf(modules, sizeof(modules), "%s/modules", series);
	if (kvm == HARNESS_KVM_SERIES_CACHED) {
		char ko[PATH_MAX + 48];

		snprintf(ko, sizeof(ko), "%s/kvm.ko", modules);
		if (access(ko, R_OK) == 0)
			kvm = HARNESS_KVM_SERIES;
	}
	if (kvm == HARNESS_KVM_SERIES) {
		if (build_series(build, series) < 0)
			return 1;
		use_series = true;
	}
	args[n++] = (char *)HARNESS_RUN;
	args[n++] = (char *)"--build";
	args[n++] = build;
	if (use_series) {
		args[n++] = (char *)"--kvm-modules";
		args[n++] = modules;
	}
	/* The harness outlasts the inner command's own limit (its default may be shorter). */
	if (timeout_s) {
		snprintf(limit, sizeof(limit), "%llu",
			 (unsigned long long)timeout_s + HARNESS_TIMEOUT_MARGIN_S);
		args[n++] = (char *)"--timeout";
		args[n++] = limit;
	}
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
	status = wait_child(pid);
	if (status < 0)
		return 1;
	switch (status) {
	case 77:
		pr_err("--harness: the QEMU harness cannot run on this machine");
		return 2;
	case 124:
	case 125:
		pr_err("--harness: the harness failed (status %d)", status);
		return 1;
	default:
		return status;
	}
}
