// SPDX-License-Identifier: GPL-2.0
/*
 * guest-init.c - /init of the introspection test's initramfs (static): reports what the host
 * side must find, and makes one process after another run on the CPU on request.
 *
 * Lines on the console (stdout), all starting with "vbts-":
 *   vbts-lstar 0x...            MSR_LSTAR, read through /dev/cpu/0/msr (msr.ko from /msr.ko.xz)
 *   vbts-sym NAME 0x...         from /proc/kallsyms: the runtime addresses of a few symbols
 *   vbts-task pid=N tgid=N comm=NAME   each test task, about itself
 *   vbts-ready                  all tasks reported
 *   vbts-spinning pid=N tid=N   after a "next" line on the console: the next spinner runs (the
 *                               previous one is stopped with SIGSTOP)
 *   vbts-done                   no spinner left; the last one keeps running
 * The spinners, in order: a forked process "vbts-spin1", a process exec'ed as "vbts-exec", and
 * the second thread "vbts-zthread" of a process whose leader "vbts-zleader" has exited.
 * "vbts-sleep" only sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSR_LSTAR 0xc0000082U
#define MODULE_INIT_COMPRESSED_FILE 4

/* The guest's uptime, to see where the time of a test run goes. */
static void report_uptime(const char *what)
{
	char buf[64] = "";
	int fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0)
		dprintf(1, "vbts-uptime %s %.*s\n", what, (int)strcspn(buf, " "), buf);
	if (fd >= 0)
		close(fd);
}

static void report_self(void)
{
	char comm[17] = "";

	prctl(PR_GET_NAME, comm);
	dprintf(1, "vbts-task pid=%d tgid=%d comm=%s\n", (int)syscall(SYS_gettid), getpid(), comm);
}

/* Waits for the go byte on @fd, says so, then runs on the CPU for ever. */
static void __attribute__((noreturn)) spin_on_go(int fd, int ready)
{
	char c;

	report_self();
	if (write(ready, "r", 1) != 1)
		_exit(1);
	while (read(fd, &c, 1) != 1)
		;
	dprintf(1, "vbts-spinning pid=%d tid=%d\n", getpid(), (int)syscall(SYS_gettid));
	for (;;)
		__asm__ volatile("" ::: "memory");
}

static void load_msr_module(void)
{
	uint64_t lstar;
	int fd;

	fd = open("/msr.ko.xz", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", MODULE_INIT_COMPRESSED_FILE)) {
		dprintf(1, "vbts-lstar-error loading msr.ko: %s\n", strerror(errno));
		return;
	}
	close(fd);
	fd = open("/dev/cpu/0/msr", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &lstar, sizeof(lstar), MSR_LSTAR) != sizeof(lstar)) {
		dprintf(1, "vbts-lstar-error reading MSR_LSTAR: %s\n", strerror(errno));
		return;
	}
	close(fd);
	dprintf(1, "vbts-lstar 0x%" PRIx64 "\n", lstar);
}

static void print_symbols(void)
{
	static const char *const names[] = { "entry_SYSCALL_64", "init_task", "init_mm",
					     "__per_cpu_offset", "pcpu_hot", "page_offset_base" };
	char line[600], name[512], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		dprintf(1, "vbts-sym-error /proc/kallsyms: %s\n", strerror(errno));
		return;
	}
	size_t left = sizeof(names) / sizeof(names[0]);

	/* /proc/kallsyms is slow under TCG (seconds): stop once all are found */
	while (left && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3 || strchr(line, '['))
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			if (!strcmp(name, names[i])) {
				dprintf(1, "vbts-sym %s 0x%llx\n", name, addr);
				left--;
			}
		}
	}
	fclose(f);
}

struct zthread {
	int go;
	int ready;
};

static void *zthread(void *arg)
{
	struct zthread *z = arg;

	prctl(PR_SET_NAME, "vbts-zthread");
	spin_on_go(z->go, z->ready);
}

/* A process whose leader exits while its second thread lives on: the leader is a zombie. */
static void __attribute__((noreturn)) zleader(int go, int ready)
{
	static struct zthread z;
	pthread_t t;

	prctl(PR_SET_NAME, "vbts-zleader");
	report_self();
	z.go = go;
	z.ready = ready;
	if (pthread_create(&t, NULL, zthread, &z))
		_exit(1);
	pthread_exit(NULL);
}

/* Starts a task that sends one byte on @ready once it has reported itself. */
static pid_t start(const char *kind, int go, int ready)
{
	pid_t pid = fork();
	char gofd[16], readyfd[16];

	if (pid)
		return pid;
	if (!strcmp(kind, "spin")) {
		prctl(PR_SET_NAME, "vbts-spin1");
		spin_on_go(go, ready);
	} else if (!strcmp(kind, "exec")) {
		snprintf(gofd, sizeof(gofd), "%d", go);
		snprintf(readyfd, sizeof(readyfd), "%d", ready);
		execl("/vbts-exec", "vbts-exec", "--spin", gofd, readyfd, (char *)NULL);
		_exit(1);
	} else if (!strcmp(kind, "zleader")) {
		zleader(go, ready);
	}
	/* sleep */
	prctl(PR_SET_NAME, "vbts-sleep");
	report_self();
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "sleep", "spin", "exec", "zleader" };
	pid_t pids[4];
	int go[4][2], ready[2];
	char line[64], c;

	if (argc == 4 && !strcmp(argv[1], "--spin"))
		spin_on_go(atoi(argv[2]), atoi(argv[3]));

	mkdir("/proc", 0555);
	mkdir("/dev", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	report_uptime("init");
	load_msr_module();
	report_uptime("msr");
	print_symbols();
	report_uptime("kallsyms");
	report_self();

	if (pipe(ready))
		return 1;
	for (int i = 0; i < 4; i++) {
		if (pipe(go[i]))
			return 1;
		pids[i] = start(kinds[i], go[i][0], ready[1]);
	}
	for (int i = 0; i < 4; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	report_uptime("ready");
	dprintf(1, "vbts-ready\n");

	/* on each "next": stop the spinner running, let the next one go */
	for (int i = 1; i < 4; i++) {
		if (!fgets(line, sizeof(line), stdin))
			break;
		if (i > 1)
			kill(pids[i - 1], SIGSTOP);
		if (write(go[i][1], "g", 1) != 1)
			return 1;
	}
	dprintf(1, "vbts-done\n");
	for (;;)
		pause();
}
