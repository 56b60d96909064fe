// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-main.c - check-vmm-kvm: `vbts run` and `vbts probe` on the host's /dev/kvm with the
 * hello guest: exit status, console, trace directory, agent events, refusals of bad input.
 * Exits 77 when /dev/kvm cannot be opened.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "check-main.h"
#include "kvm.h"
#include "memory.h"
#include "vcpu-int.h"
#include "vm.h"

/* Per-test state (Check forks each test): its scratch directory and the last file read. */
static char tmp[PATH_MAX];
static char slurped[1 << 16];

static void make_tmp(void)
{
	snprintf(tmp, sizeof(tmp), "%s/check-vmm-kvm-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void remove_tmp(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
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

#define HANG_GUARD_S 20

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

static char *slurp(const char *name)
{
	char path[PATH_MAX + 16];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(slurped, 1, sizeof(slurped) - 1, f);
	slurped[n] = '\0';
	fclose(f);
	return slurped;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
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
	ck_assert_int_eq(lines(ev), 1); /* the over-long and the hostile line are dropped */
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
	ck_assert_int_eq(lines(slurp("err")), 1);
	ck_assert_int_eq(access(file, F_OK), 0);

	snprintf(dir, sizeof(dir), "%s/t", tmp);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--ring", "0", HELLO_ELF,
						NULL }), 2);
	ck_assert_int_eq(lines(slurp("err")), 1);
	ck_assert_int_eq(access(dir, F_OK), -1);
	ck_assert_int_eq(vbts((const char *[]){ "run", "--trace", dir, "--ring", "999999999999",
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
	ck_assert_int_eq(lines(out), 7);
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

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_run_hello);
	tcase_add_test(tc, test_run_trace);
	tcase_add_test(tc, test_stop_while_starting);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_vcpu_states);
	tcase_add_test(tc, test_parked_ap_and_halt);
	suite_add_tcase(s, tc);
	return s;
}

static int run_suites(void)
{
	SRunner *sr = srunner_create(kvm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("skip: /dev/kvm is not available (%s)\n", strerror(errno));
		return 77;
	}
	close(fd);
	return run_suites();
}
