// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-main.c - check-attach-kvm: vbts attach's pieces against a real QEMU on this host's
 * /dev/kvm (exit 77 without /dev/kvm or qemu-system-x86_64):
 *   - QMP with QEMU itself: greeting, capabilities, query-status of a VM started with -S,
 *     quit;
 *   - the VM and vCPU fds of that QEMU found in /proc/PID/fd;
 *   - `vbts attach` on a KVM without attach support (this host's stock KVM): one clear line,
 *     exit 2, nothing started or created; with attach support (the harness's patched modules)
 *     the same command goes on to the target instead.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check-main.h"
#include "collector.h"
#include "qmp.h"
#include "vbts-run.h"
#include "vmm-fds.h"

#define QEMU "qemu-system-x86_64"

/* A QEMU with a KVM VM of @vcpus vCPUs, paused (-S), its QMP at @sock. */
static pid_t start_qemu(const char *sock, unsigned int vcpus)
{
	char qmp[200], smp[16];
	pid_t pid;

	snprintf(qmp, sizeof(qmp), "unix:%s,server=on,wait=off", sock);
	snprintf(smp, sizeof(smp), "%u", vcpus);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		execlp(QEMU, QEMU, "-enable-kvm", "-machine", "pc", "-smp", smp, "-m", "64",
		       "-display", "none", "-nodefaults", "-S", "-qmp", qmp, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Connect to @sock once QEMU made it (a hang guard of 60 s, not a timing assertion). */
static struct qmp *connect_qmp(const char *sock, pid_t pid)
{
	struct timespec slice = { 0, 20 * 1000000 };
	char err[256];
	struct qmp *q;

	for (int i = 0; i < 3000; i++) {
		q = qmp__connect(sock, 10000, err, sizeof(err));
		if (q)
			return q;
		ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
		nanosleep(&slice, NULL);
	}
	ck_abort_msg("QEMU made no QMP socket: %s", err);
	return NULL;
}

static void quit_qemu(struct qmp *q, pid_t pid)
{
	char err[256];
	int status;

	ck_assert_int_eq(qmp__execute(q, "quit", NULL, err, sizeof(err)), 0);
	qmp__close(q);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}

START_TEST(test_qemu_qmp_and_fds)
{
	char dir[] = "/tmp/check-attach-kvm-XXXXXX", sock[128], err[256] = "", status[32];
	struct vmm_fds *fds = malloc(sizeof(*fds));
	bool running = true;
	struct qmp *q;
	pid_t pid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/qmp.sock", dir);
	pid = start_qemu(sock, 3);
	q = connect_qmp(sock, pid);
	ck_assert_msg(qmp__handshake(q, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(qmp__query_status(q, &running, status, sizeof(status), err,
					sizeof(err)) == 0, "%s", err);
	ck_assert(!running);
	ck_assert_str_eq(status, "prelaunch");
	ck_assert_msg(vmm_fds__scan("/proc", pid, fds, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ge(fds->vm_fd, 3);
	ck_assert_uint_eq(fds->nr_vcpus, 3);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(fds->vcpu_id[i], i);
		ck_assert_int_ne(fds->vcpu_fd[i], fds->vm_fd);
	}
	quit_qemu(q, pid);
	free(fds);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

START_TEST(test_no_attach_support)
{
	char dir[] = "/tmp/check-attach-kvm-XXXXXX", sock[128], trace[128], marker[128];
	char pidstr[16], script[200], err[256];
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	bool supported = collector__supported(kvm);
	struct vbts_output o;
	struct stat st;
	struct qmp *q;
	pid_t pid;

	close(kvm);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/qmp.sock", dir);
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(marker, sizeof(marker), "%s/started", dir);
	pid = start_qemu(sock, 1);
	q = connect_qmp(sock, pid);
	ck_assert_msg(qmp__handshake(q, err, sizeof(err)) == 0, "%s", err);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	{
		const char *args[] = { "attach", "--trace", trace, "--pid", pidstr, NULL };

		if (!supported) {
			vbts_run__vbts(args, &o);
			ck_assert_msg(o.status == 2, "status %d: %s", o.status, o.err);
			ck_assert_msg(strstr(o.err, "cannot trace a VM that another process runs "
						    "(no KVM_CAP_X86_BTS_ATTACH)"), "%s", o.err);
			ck_assert_int_eq(test__count_lines(o.err), 1);
			ck_assert_int_eq(stat(trace, &st), -1);
		}
	}
	{
		/* a process that is no VMM: refused for what it is, or for the KVM */
		char self[16];
		const char *args[] = { "attach", "--trace", trace, "--pid", self, NULL };

		snprintf(self, sizeof(self), "%d", (int)getpid());
		vbts_run__vbts(args, &o);
		ck_assert_msg(o.status == 2, "status %d: %s", o.status, o.err);
		ck_assert_msg(strstr(o.err, supported ? "not a KVM VMM" : "no KVM_CAP_X86_BTS_ATTACH"),
			      "%s", o.err);
		ck_assert_int_eq(stat(trace, &st), -1);
	}
	if (!supported) {
		/* -- QEMU: nothing is started when the KVM cannot attach */
		const char *args[] = { "attach", "--trace", trace, "--", "/bin/sh", "-c", script,
				       NULL };

		snprintf(script, sizeof(script), "touch '%s'", marker);
		vbts_run__vbts(args, &o);
		ck_assert_msg(o.status == 2, "status %d: %s", o.status, o.err);
		ck_assert_int_eq(stat(marker, &st), -1);
		ck_assert_int_eq(stat(trace, &st), -1);
	}
	/* The VM was not disturbed: still paused, still answering. */
	{
		bool running = true;
		char status[32];

		ck_assert_msg(qmp__query_status(q, &running, status, sizeof(status), err,
						sizeof(err)) == 0, "%s", err);
		ck_assert_str_eq(status, "prelaunch");
	}
	quit_qemu(q, pid);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

static Suite *attach_kvm_suite(void)
{
	Suite *s = suite_create("attach-kvm");
	TCase *tc = tcase_create("qemu");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_qemu_qmp_and_fds);
	tcase_add_test(tc, test_no_attach_support);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	static Suite *(*const suites[])(void) = { attach_kvm_suite };

	if (!check_main__have_kvm())
		return 77;
	if (system("command -v " QEMU " >/dev/null 2>&1")) {
		printf("skip: no %s\n", QEMU);
		return 77;
	}
	return check_main__run(suites, 1);
}
