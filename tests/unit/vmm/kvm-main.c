// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-main.c - check-vmm-kvm: `vbts run` and `vbts probe` on the host's /dev/kvm with the
 * test guests: exit status, console, trace directory, agent events, refusals of bad input,
 * and how runs end: a guest that exits while vCPUs start, signals at each point of start-up
 * (stopped there with the test hook VBTS_TEST_STOP_AT), --timeout, a blocked console.
 * Every vbts run has a hang guard. Exits 77 when /dev/kvm cannot be opened.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "check-main.h"
#include "kvm.h"
#include "memory.h"
#include "test-files.h"
#include "vcpu-int.h"
#include "vm.h"

/* Per-test state (Check forks each test): its scratch directory and the last file read. */
static char tmp[PATH_MAX];
static char *slurped;

static void make_tmp(void)
{
	test__make_temp_dir(tmp, sizeof(tmp), "check-vmm-kvm");
}

static void remove_tmp(void)
{
	ck_assert_int_eq(test__remove_tree(tmp), 0);
}

/*
 * Start vbts with @args (NULL-terminated) and @env ("NAME=VALUE" added to its environment, or
 * NULL); stdout and stderr go to tmp/out and tmp/err.
 */
static pid_t vbts_spawn(const char *const *args, const char *env)
{
	const char *argv[32] = { VBTS_EXE };
	char out[PATH_MAX + 8], err[PATH_MAX + 8];
	int n = 1;
	pid_t pid;

	while (*args && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/out", tmp);
	snprintf(err, sizeof(err), "%s/err", tmp);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		if (env)
			putenv((char *)env);
		execv(VBTS_EXE, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

#define HANG_GUARD_S 60

/*
 * waitpid(@pid, @options) with a hang guard of HANG_GUARD_S seconds (no timing is asserted):
 * the wait status, or -1 when vbts did not change state in time (it is then killed).
 */
static int wait_guarded(pid_t pid, int options)
{
	int status;

	for (int i = 0; i < HANG_GUARD_S * 100; i++) {
		pid_t r = waitpid(pid, &status, options | WNOHANG);

		ck_assert_int_ge(r, 0);
		if (r == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Run vbts with @args (NULL-terminated) to its end; its exit status. */
static int vbts(const char *const *args)
{
	int status = wait_guarded(vbts_spawn(args, NULL), 0);

	ck_assert_msg(status != -1, "vbts %s did not end within %d s", args[0], HANG_GUARD_S);
	ck_assert_msg(WIFEXITED(status), "vbts %s was killed by signal %d", args[0],
		      WTERMSIG(status));
	return WEXITSTATUS(status);
}

/* The text of tmp/@name, or NULL when there is none; valid until the next call. */
static char *slurp(const char *name)
{
	char path[PATH_MAX + 16];

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", tmp, name), (int)sizeof(path));
	free(slurped);
	slurped = test__slurp_or_null(path, NULL);
	return slurped;
}

/* Entries of the directory tmp/@name other than . and ..; -1 when it cannot be opened. */
static int entries(const char *name)
{
	char path[PATH_MAX + 16];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* Start vbts with @args and VBTS_TEST_STOP_AT=@point; wait until it stops itself there. */
static pid_t vbts_stop_at(const char *const *args, const char *point)
{
	static char env[64];
	pid_t pid;
	int status;

	snprintf(env, sizeof(env), "VBTS_TEST_STOP_AT=%s", point);
	pid = vbts_spawn(args, env);
	status = wait_guarded(pid, WUNTRACED);
	ck_assert_msg(status != -1 && WIFSTOPPED(status), "vbts did not stop at %s", point);
	return pid;
}

/* vbts_stop_at(), then send it @sig and continue it. Return: its pid. */
static pid_t vbts_signal_at(const char *const *args, const char *point, int sig)
{
	pid_t pid = vbts_stop_at(args, point);

	ck_assert_int_eq(kill(pid, sig), 0);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	return pid;
}

/* Wait for vbts (hang guard) and check that it exited with @want, after @point. */
static void expect_exit(pid_t pid, int want, const char *point)
{
	int status = wait_guarded(pid, 0);

	ck_assert_msg(status != -1, "vbts did not end after a signal at %s", point);
	ck_assert_msg(WIFEXITED(status), "vbts was killed by signal %d at %s", WTERMSIG(status),
		      point);
	ck_assert_msg(WEXITSTATUS(status) == want, "exit status %d at %s, expected %d",
		      WEXITSTATUS(status), point, want);
}

START_TEST(test_run_hello)
{
	char console[PATH_MAX + 16];

	make_tmp();
	snprintf(console, sizeof(console), "%s/console", tmp);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--console", console, "--stats", HELLO_ELF,
						NULL }), 67);
	ck_assert_str_eq(slurp("console"), "hello\n");
	ck_assert_ptr_nonnull(strstr(slurp("err"), "unclaimed pio 0 reads 1 writes"));
	ck_assert_ptr_nonnull(strstr(slurp("err"), "exits IO="));
	/* Without --console the guest writes to stdout. */
	ck_assert_int_eq(vbts((const char *[]){ "run", HELLO_ELF, NULL }), 67);
	ck_assert_str_eq(slurp("out"), "hello\n");
	ck_assert_str_eq(slurp("err"), "");
	ck_assert_int_eq(vbts((const char *[]){ "run", "--vcpus", "2", HELLO_ELF, NULL }), 67);
	remove_tmp();
}
END_TEST

START_TEST(test_run_trace)
{
	char dir[PATH_MAX + 8], ring[PATH_MAX + 32], *ev;
	struct vbts_ring_header hdr;
	json_t *o;
	FILE *f;

	make_tmp();
	snprintf(dir, sizeof(dir), "%s/trace", tmp);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--ring", "1024",
						HELLO_ELF, NULL }), 67);
	ev = slurp("trace/events.jsonl");
	ck_assert_ptr_nonnull(ev);
	/* the over-long and the hostile line are dropped */
	ck_assert_int_eq(test__count_lines(ev), 1);
	o = json_loads(ev, JSON_DISABLE_EOF_CHECK, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "hello");
	ck_assert_ptr_null(json_object_get(o, "evil"));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "vcpu")), 0);
	json_decref(o);

	o = json_loads(slurp("trace/vm.json"), 0, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(strlen(json_string_value(json_object_get(o, "build_id"))), 40);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "ring_records")), 1024);
	json_decref(o);

	snprintf(ring, sizeof(ring), "%s/trace/vcpu0.ring", tmp);
	f = fopen(ring, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(&hdr, sizeof(hdr), 1, f), 1);
	fclose(f);
	ck_assert_uint_eq(hdr.magic, VBTS_RING_MAGIC);
	ck_assert_uint_eq(hdr.capacity, 1024);
	ck_assert_uint_ge(hdr.committed, 2); /* at least start and stop */
	ck_assert_uint_ne(hdr.flags & VBTS_RING_F_CLOSED, 0);
	remove_tmp();
}
END_TEST

/*
 * The guest exits with its first instruction, while vbts may still be starting the other
 * vCPUs' threads: every run ends with the guest's status, none hangs (a stop request is never
 * lost). Each run has the hang guard of vbts().
 */
START_TEST(test_stop_while_starting)
{
	char vcpus[16];
	struct kvm k;

	make_tmp();
	ck_assert_int_eq(kvm__open(&k), 0);
	snprintf(vcpus, sizeof(vcpus), "%u", k.max_vcpus < 256 ? k.max_vcpus : 256);
	kvm__close(&k);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(vbts((const char *[]){ "run", "--vcpus", vcpus, EXIT_ELF, NULL }),
				 67);
	remove_tmp();
}
END_TEST

/* The points of start-up where the test hook can stop `vbts run --trace DIR --vcpus 2`. */
static const char *const startup_points[] = {
	"core", "memory", "vcpus", "devices", "trace-dir", "vm.json", "vcpu0.ring", "vcpu1.ring",
	"collector", "console",
};

#define NR_STARTUP_POINTS (sizeof(startup_points) / sizeof(startup_points[0]))

/*
 * SIGTERM or SIGINT at each point of start-up: vbts exits with 128 + the signal after one
 * line, the trace directory is as it was before (absent, or empty), and a new run into it
 * succeeds. Loop: _i / 2 is the point, bit 0 whether DIR existed (empty); the signal
 * alternates between points.
 */
START_TEST(test_signal_during_startup)
{
	const char *point = startup_points[_i / 2];
	int sig = (_i / 2) & 1 ? SIGINT : SIGTERM;
	char dir[PATH_MAX + 8];
	const char *args[] = { "run", "--vcpus", "2", "--trace", dir, HELLO_ELF, NULL };

	make_tmp();
	snprintf(dir, sizeof(dir), "%s/trace", tmp);
	if (_i & 1)
		ck_assert_int_eq(mkdir(dir, 0755), 0);
	expect_exit(vbts_signal_at(args, point, sig), 128 + sig, point);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "start-up"));
	if (_i & 1)
		ck_assert_int_eq(entries("trace"), 0);
	else
		ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_int_eq(vbts(args), 67);
	ck_assert_int_eq(entries("trace"), 4);
	remove_tmp();
}
END_TEST

/*
 * --timeout counts start-up too: a start-up held up past it (stopped by the test hook, or
 * opening a console FIFO nobody reads) ends with 1 and leaves nothing.
 */
START_TEST(test_timeout_during_startup)
{
	char dir[PATH_MAX + 8], fifo[PATH_MAX + 8];
	const char *args[] = { "run", "--timeout", "1", "--trace", dir, HELLO_ELF, NULL };
	const char *with_fifo[] = { "run", "--timeout", "1", "--console", fifo, "--trace", dir,
				    HELLO_ELF, NULL };
	pid_t pid;

	make_tmp();
	snprintf(dir, sizeof(dir), "%s/trace", tmp);
	/* Held at vm.json for 2 s: past the 1 s timeout. */
	pid = vbts_stop_at(args, "vm.json");
	sleep(2);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	expect_exit(pid, 1, "vm.json");
	ck_assert_ptr_nonnull(strstr(slurp("err"), "--timeout"));
	ck_assert_int_eq(access(dir, F_OK), -1);

	/* A console FIFO nobody reads: opening it blocks until the timeout interrupts it. */
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(vbts(with_fifo), 1);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "--timeout"));
	ck_assert_int_eq(access(dir, F_OK), -1);
	remove_tmp();
}
END_TEST

/*
 * SIGTERM once the guest runs (the hook stops vbts right after starting the vCPUs), and
 * --timeout: the run ends with 143 or 1 and the trace is closed and decodes.
 */
START_TEST(test_stop_while_running)
{
	char dir[PATH_MAX + 8], ring[PATH_MAX + 32];
	const char *args[] = { "run", "--console", "/dev/null", "--trace", dir, SPIN_ELF, NULL };
	const char *timed[] = { "run", "--console", "/dev/null", "--timeout", "1", SPIN_ELF, NULL };
	struct vbts_ring_header hdr;
	FILE *f;

	make_tmp();
	snprintf(dir, sizeof(dir), "%s/trace", tmp);
	expect_exit(vbts_signal_at(args, "running", SIGTERM), 143, "running");
	ck_assert_ptr_nonnull(strstr(slurp("err"), "stopping the guest"));
	snprintf(ring, sizeof(ring), "%s/vcpu0.ring", dir);
	f = fopen(ring, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fread(&hdr, sizeof(hdr), 1, f), 1);
	fclose(f);
	ck_assert_uint_eq(hdr.magic, VBTS_RING_MAGIC);
	ck_assert_uint_ne(hdr.flags & VBTS_RING_F_CLOSED, 0);
	ck_assert_int_eq(vbts((const char *[]){ "decode", dir, NULL }), 0);
	ck_assert_int_eq(vbts(timed), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "--timeout"));
	remove_tmp();
}
END_TEST

/*
 * The guest writes to a console nobody reads (a FIFO) until its vCPU thread blocks in the
 * write: SIGTERM still ends the run.
 */
START_TEST(test_stop_blocked_console)
{
	char fifo[PATH_MAX + 8];
	const char *args[] = { "run", "--console", fifo, SPIN_ELF, NULL };
	int rd, queued = 0, last = -1;
	pid_t pid;

	make_tmp();
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	pid = vbts_spawn(args, NULL);
	/* Wait (bounded) until the pipe stops filling: the writer is blocked. */
	for (int i = 0; i < HANG_GUARD_S * 10 && (queued < 4096 || queued != last); i++) {
		last = queued;
		usleep(100000);
		ck_assert_int_eq(ioctl(rd, FIONREAD, &queued), 0);
	}
	ck_assert_int_ge(queued, 4096);
	ck_assert_int_eq(kill(pid, SIGTERM), 0);
	expect_exit(pid, 143, "a blocked console");
	close(rd);
	remove_tmp();
}
END_TEST

START_TEST(test_bad_input)
{
	char dir[PATH_MAX + 8], file[PATH_MAX + 16];
	FILE *f;

	make_tmp();
	snprintf(file, sizeof(file), "%s/keep", tmp);
	f = fopen(file, "w");
	fputs("x\n", f);
	fclose(f);
	/* tmp is not empty (keep, and the out/err files). */
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", tmp, HELLO_ELF, NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "exists and is not empty"));
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_int_eq(access(file, F_OK), 0);

	snprintf(dir, sizeof(dir), "%s/t", tmp);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--ring", "0", HELLO_ELF,
						NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--ring", "999999999999",
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(access(dir, F_OK), -1);
	/* stream mode's limits: named, one line, nothing created */
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--mode", "stream",
						"--segment", "99999999", HELLO_ELF, NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "the limit is 2 to 4194304"));
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--mode", "stream",
						"--disk-budget", "1000000G", HELLO_ELF, NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "free on the trace directory's file system"));
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--mode", "stream",
						"--disk-budget", "4K", HELLO_ELF, NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "below two segments per vCPU"));
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--mode", "ring",
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--on-full", "wait",
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--disk-budget", "-1",
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(access(dir, F_OK), -1);

	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, file, NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "not an ELF file"));
	ck_assert_int_eq(access(dir, F_OK), -1); /* nothing half-written */
	ck_assert_int_eq(vbts((const char *[]){ "run", "/proc/self/exe", NULL }), 2);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "ELF64"));
	ck_assert_int_eq(vbts((const char *[]){ "run", "/nonexistent", NULL }), 2);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--memory", "0", HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--cpl", "ring2", HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(vbts((const char *[]){ "run", NULL }), 2);
	remove_tmp();
}
END_TEST

/* Write @text to tmp/@name. */
static void put_file(const char *name, const char *text)
{
	test__write_text(tmp, name, text);
}

/*
 * A refused run changes no file: the console named by --console keeps its contents when the
 * trace directory, the backend or the image is refused; a refused console leaves no trace
 * directory. Each refusal is one line, exit status 2.
 */
START_TEST(test_refused_run_changes_nothing)
{
	char console[PATH_MAX + 16], full[PATH_MAX + 16], file[PATH_MAX + 16], dir[PATH_MAX + 16];
	int status;

	make_tmp();
	snprintf(console, sizeof(console), "%s/console", tmp);
	snprintf(full, sizeof(full), "%s/full", tmp);
	snprintf(file, sizeof(file), "%s/not-elf", tmp);
	snprintf(dir, sizeof(dir), "%s/t", tmp);
	put_file("not-elf", "data\n");
	put_file("console", "keep\n");
	ck_assert_int_eq(mkdir(full, 0755), 0);
	put_file("full/x", "x\n");

	ck_assert_int_eq(vbts((const char *[]){ "run", "--console", console, "--trace", full,
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "exists and is not empty"));
	ck_assert_str_eq(slurp("console"), "keep\n");
	ck_assert_int_eq(entries("full"), 1);

	ck_assert_int_eq(vbts((const char *[]){ "run", "--console", console, "--trace", dir,
						file, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_str_eq(slurp("console"), "keep\n");
	ck_assert_int_eq(access(dir, F_OK), -1);

	/*
	 * Where this KVM has no kvm backend, --backend kvm is refused; where it has one (the
	 * series' modules), the run succeeds and its trace is removed for the next case.
	 */
	status = vbts((const char *[]){ "run", "--console", console, "--trace", dir, "--backend",
					"kvm", HELLO_ELF, NULL });
	if (status == 2) {
		ck_assert_int_eq(test__count_lines(slurp("err")), 1);
		ck_assert_str_eq(slurp("console"), "keep\n");
		ck_assert_int_eq(access(dir, F_OK), -1);
	} else {
		ck_assert_int_eq(status, 0);
		ck_assert_int_eq(access(dir, F_OK), 0);
		ck_assert_int_eq(test__remove_tree(dir), 0);
	}

	/* A console that cannot be opened: no trace directory is left. */
	ck_assert_int_eq(vbts((const char *[]){ "run", "--console", full, "--trace", dir,
						HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_int_eq(entries("full"), 1);
	remove_tmp();
}
END_TEST

/*
 * An image that is not a regular file (a FIFO nobody writes, a directory) or is larger than
 * guest memory: one line, exit 2, at once (the hang guard of vbts()).
 */
START_TEST(test_image_not_regular)
{
	char fifo[PATH_MAX + 16], big[PATH_MAX + 16];

	make_tmp();
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	snprintf(big, sizeof(big), "%s/big.elf", tmp);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(vbts((const char *[]){ "run", fifo, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "not a regular file"));
	ck_assert_int_eq(vbts((const char *[]){ "run", tmp, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	put_file("big.elf", "");
	ck_assert_int_eq(truncate(big, (3 << 20) + 1), 0);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--memory", "3", big, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "larger than"));
	remove_tmp();
}
END_TEST

/* --trace naming a regular file: refused as not a directory (one line), the file kept. */
START_TEST(test_trace_is_a_file)
{
	char file[PATH_MAX + 16];

	make_tmp();
	snprintf(file, sizeof(file), "%s/file", tmp);
	put_file("file", "data\n");
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", file, HELLO_ELF, NULL }), 2);
	ck_assert_int_eq(test__count_lines(slurp("err")), 1);
	ck_assert_ptr_nonnull(strstr(slurp("err"), "is not a directory"));
	ck_assert_ptr_null(strstr(slurp("err"), "not empty"));
	ck_assert_str_eq(slurp("file"), "data\n");
	remove_tmp();
}
END_TEST

START_TEST(test_probe)
{
	static const char *const keys[] = {
		"cpl0_single_step", "cpl3_single_step", "cpl3_hw_breakpoint", "user_msr_exits",
		"sync_regs", "kvm_bts_backend",
	};
	static const char *const names[] = {
		"cpl0 single-step: ", "cpl3 single-step: ", "cpl3 hw breakpoint: ",
		"user msr exits: ", "sync regs: ", "kvm bts backend: ",
	};
	json_t *o;
	char *out;

	make_tmp();
	ck_assert_int_eq(vbts((const char *[]){ "probe", NULL }), 0);
	out = slurp("out");
	ck_assert_int_eq(test__count_lines(out), 7);
	ck_assert_ptr_nonnull(strstr(out, "\nkvm bts modes: "));
	for (int i = 0; i < 6; i++) {
		char *p = strstr(out, names[i]);

		ck_assert_msg(p, "no line '%s'", names[i]);
		p += strlen(names[i]);
		ck_assert(!strncmp(p, "yes\n", 4) || !strncmp(p, "no\n", 3));
	}
	ck_assert_int_eq(vbts((const char *[]){ "probe", "--json", NULL }), 0);
	o = json_loads(slurp("out"), 0, NULL);
	ck_assert_ptr_nonnull(o);
	for (int i = 0; i < 6; i++)
		ck_assert(json_is_boolean(json_object_get(o, keys[i])));
	ck_assert(json_is_string(json_object_get(o, "kvm_bts_modes")));
	json_decref(o);
	remove_tmp();
}
END_TEST

/* Wait (bounded) until the vCPU reaches @want; false if it never does. */
static bool reaches(struct vcpu *v, enum vcpu_state want)
{
	for (int i = 0; i < 5000; i++) {
		if (vcpu__state(v) == want)
			return true;
		usleep(1000);
	}
	return false;
}

START_TEST(test_vcpu_states)
{
	/* mov $0x2000, %eax; 1: incl (%eax); jmp 1b - in 32- and 64-bit mode alike */
	static const uint8_t spin[] = { 0xb8, 0x00, 0x20, 0x00, 0x00, 0xff, 0x00, 0xeb, 0xfc };
	volatile uint32_t *count;
	struct vcpu_boot boot = { .rip = 0x100000, .cs = 0x10, .ds = 0x18, .gdt_limit = 0 };
	struct vm vm;
	struct vcpu *v;
	uint64_t intr;

	vm__init(&vm);
	ck_assert_int_eq(kvm__open(&vm.kvm), 0);
	ck_assert_int_eq(vcpu__install_kick_signal(), 0);
	vm.mem = guest_memory__create(4 << 20);
	ck_assert_ptr_nonnull(vm.mem);
	ck_assert_int_eq(guest_memory__register(vm.mem, vm.kvm.vm_fd), 0);
	memcpy(guest_memory__ptr(vm.mem, 0x100000, sizeof(spin)), spin, sizeof(spin));
	v = vcpu__create(&vm, 0);
	ck_assert_ptr_nonnull(v);
	vm.vcpus = &v;
	vm.nr_vcpus = 1;
	vm.nr_live = 1;
	ck_assert_int_eq(vcpu__set_boot(v, &boot), 0);
	ck_assert_int_eq(vcpu__start(v, true), 0);
	ck_assert(reaches(v, VCPU_RUNNING));
	/* The guest counts: the vCPU thread is inside KVM_RUN, and stays there until kicked. */
	count = guest_memory__ptr(vm.mem, 0x2000, sizeof(*count));
	for (int i = 0; i < 5000 && !*count; i++)
		usleep(1000);
	ck_assert_uint_ne(*count, 0);

	/* Pause kicks it out of KVM_RUN (signal + immediate_exit) and parks it. */
	vcpu__request(v, VCPU_PAUSED);
	ck_assert(reaches(v, VCPU_PAUSED));
	intr = v->exits[KVM_EXIT_INTR];
	ck_assert_uint_ge(intr, 1);
	vcpu__request(v, VCPU_RUNNING);
	ck_assert(reaches(v, VCPU_RUNNING));

	/* A stop request ends the thread; the first status wins. */
	vm__request_stop(&vm, 5);
	vm__request_stop(&vm, 9);
	vcpu__join(v);
	ck_assert_int_eq(vcpu__state(v), VCPU_STOPPED);
	ck_assert_int_eq(vm__wait(&vm, 0), 5);
	vcpu__request(v, VCPU_RUNNING);
	ck_assert_int_eq(v->request, VCPU_STOPPED);
	vcpu__destroy(v);
	kvm__close(&vm.kvm);
	guest_memory__destroy(vm.mem);
	vm__fini(&vm);
}
END_TEST

START_TEST(test_parked_ap_and_halt)
{
	static const uint8_t halt[] = { 0xf4 }; /* hlt */
	struct vcpu_boot boot = { .rip = 0x100000, .cs = 0x10, .ds = 0x18 };
	struct vcpu *vcpus[2];
	struct vm vm;

	vm__init(&vm);
	ck_assert_int_eq(kvm__open(&vm.kvm), 0);
	ck_assert_int_eq(vcpu__install_kick_signal(), 0);
	vm.mem = guest_memory__create(4 << 20);
	ck_assert_int_eq(guest_memory__register(vm.mem, vm.kvm.vm_fd), 0);
	memcpy(guest_memory__ptr(vm.mem, 0x100000, 1), halt, 1);
	for (int i = 0; i < 2; i++) {
		vcpus[i] = vcpu__create(&vm, i);
		ck_assert_ptr_nonnull(vcpus[i]);
	}
	vm.vcpus = vcpus;
	vm.nr_vcpus = 2;
	vm.nr_live = 1;
	ck_assert_int_eq(vcpu__set_boot(vcpus[0], &boot), 0);
	ck_assert_int_eq(vcpu__start(vcpus[1], false), 0);
	ck_assert(reaches(vcpus[1], VCPU_PAUSED));
	ck_assert_int_eq(vcpu__start(vcpus[0], true), 0);
	/* The BSP halts: the last live vCPU is done, the run ends with 0, the AP is stopped. */
	while (vm__wait(&vm, 1000000000ULL) == -ETIMEDOUT)
		;
	ck_assert_int_eq(vm.exit_status, 0);
	for (int i = 0; i < 2; i++) {
		vcpu__join(vcpus[i]);
		ck_assert_int_eq(vcpu__state(vcpus[i]), VCPU_STOPPED);
		vcpu__destroy(vcpus[i]);
	}
	kvm__close(&vm.kvm);
	guest_memory__destroy(vm.mem);
	vm__fini(&vm);
}
END_TEST

static Suite *kvm_suite(void)
{
	Suite *s = suite_create("vmm-kvm");
	TCase *tc = tcase_create("run");
	TCase *stop = tcase_create("stop");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_hello);
	tcase_add_test(tc, test_run_trace);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_refused_run_changes_nothing);
	tcase_add_test(tc, test_trace_is_a_file);
	tcase_add_test(tc, test_image_not_regular);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_vcpu_states);
	tcase_add_test(tc, test_parked_ap_and_halt);
	suite_add_tcase(s, tc);
	/* Many runs each (and slow inside the QEMU harness): a wider hang guard. */
	tcase_set_timeout(stop, 300);
	tcase_add_test(stop, test_stop_while_starting);
	tcase_add_loop_test(stop, test_signal_during_startup, 0, NR_STARTUP_POINTS * 2);
	tcase_add_test(stop, test_timeout_during_startup);
	tcase_add_test(stop, test_stop_while_running);
	tcase_add_test(stop, test_stop_blocked_console);
	suite_add_tcase(s, stop);
	return s;
}

int main(void)
{
	static Suite *(*const suites[])(void) = { kvm_suite };

	if (!check_main__have_kvm())
		return 77;
	return check_main__run(suites, 1);
}
