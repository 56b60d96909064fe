// SPDX-License-Identifier: GPL-2.0
/*
 * test-dispatch.c - the vCPU exit loop's dispatch and handlers, fed fabricated struct kvm_run
 * (no KVM), with the real UART and debug-exit devices on the bus; the vCPU state requests.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vbts/agent-proto.h>
#include <vbts/kvm-bts-uapi.h>

#include "debug-exit.h"
#include "probe.h"
#include "ring-writer.h"
#include "test-files.h"
#include "tests.h"
#include "uart.h"
#include "vcpu-int.h"
#include "vm.h"

#define RUN_BYTES 8192

struct fixture {
	struct vm vm;
	struct vcpu v;
	struct kvm_run *run;
	FILE *out;
	struct uart *uart;
	char text[256]; /* what the UART wrote, see output() */
};

static void notify_stop(void *opaque, int status)
{
	vm__request_stop(opaque, status);
}

static struct fixture *setup(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	vm__init(&f->vm);
	f->run = aligned_alloc(4096, RUN_BYTES);
	ck_assert_ptr_nonnull(f->run);
	memset(f->run, 0, RUN_BYTES);
	f->out = tmpfile();
	f->uart = uart__create(f->out, 1 << 20);
	f->vm.dexit.notify = notify_stop;
	f->vm.dexit.opaque = &f->vm;
	ck_assert_int_eq(io_bus__register(&f->vm.pio, VBTS_UART_PORT, UART_NR_PORTS, uart__io,
					  f->uart, "uart"), 0);
	ck_assert_int_eq(io_bus__register(&f->vm.pio, VBTS_DEBUG_EXIT_PORT, 1, debug_exit__io,
					  &f->vm.dexit, "debug-exit"), 0);
	vcpu__init_detached(&f->v, &f->vm, 0, f->run, RUN_BYTES);
	return f;
}

static void teardown(struct fixture *f)
{
	uart__destroy(f->uart);
	fclose(f->out);
	free(f->run);
	vm__fini(&f->vm);
	free(f);
}

/* Fabricate a port I/O exit; the data goes at offset 4096 like KVM puts it. */
static void fab_io(struct kvm_run *run, uint16_t port, bool out, unsigned int size,
		   unsigned int count, const void *data)
{
	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
	run->io.port = port;
	run->io.size = size;
	run->io.count = count;
	run->io.data_offset = 4096;
	if (data)
		memcpy((uint8_t *)run + 4096, data, (size_t)size * count);
}

static const char *output(struct fixture *f)
{
	test__read_stream(f->out, f->text, sizeof(f->text));
	return f->text;
}

START_TEST(test_io_uart)
{
	struct fixture *f = setup();
	uint8_t *data = (uint8_t *)f->run + 4096;

	fab_io(f->run, VBTS_UART_PORT, true, 1, 1, "A");
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	fab_io(f->run, VBTS_UART_PORT + UART_LSR, false, 1, 1, NULL);
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert_uint_eq(data[0] & 0x60, 0x60);
	/* rep outsb: three bytes in one exit. */
	fab_io(f->run, VBTS_UART_PORT, true, 1, 3, "xyz");
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert_str_eq(output(f), "Axyz");
	ck_assert(!vm__stop_requested(&f->vm));
	teardown(f);
}
END_TEST

START_TEST(test_io_unclaimed)
{
	struct fixture *f = setup();
	uint8_t *data = (uint8_t *)f->run + 4096;

	fab_io(f->run, 0x80, true, 1, 1, "\x01");
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	fab_io(f->run, 0xcf8, false, 4, 1, NULL);
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert_uint_eq(data[0] & data[1] & data[2] & data[3], 0xff);
	ck_assert_uint_eq(f->vm.pio.unhandled_writes, 1);
	ck_assert_uint_eq(f->vm.pio.unhandled_reads, 1);
	ck_assert(!vm__stop_requested(&f->vm));
	teardown(f);
}
END_TEST

START_TEST(test_io_debug_exit)
{
	struct fixture *f = setup();

	fab_io(f->run, VBTS_DEBUG_EXIT_PORT, true, 1, 1, "\x21");
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert(vm__stop_requested(&f->vm));
	ck_assert_int_eq(f->vm.exit_status, 67);
	/* The first stop wins: a later failure does not change the status. */
	f->run->exit_reason = KVM_EXIT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert_int_eq(f->vm.exit_status, 67);
	teardown(f);
}
END_TEST

/* An operating system's triple fault is its last way to reset: the run ends with status 0. */
START_TEST(test_triple_fault_pc_reset)
{
	struct fixture *f = setup();
	static char pc_present; /* the exit handler only asks whether the VM is a PC */

	f->vm.pc = (struct pc *)&pc_present;
	f->run->exit_reason = KVM_EXIT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert(vm__stop_requested(&f->vm));
	ck_assert_int_eq(f->vm.exit_status, 0);
	f->vm.pc = NULL;
	teardown(f);
}
END_TEST

START_TEST(test_io_malformed)
{
	struct fixture *f = setup();

	fab_io(f->run, VBTS_UART_PORT, true, 3, 1, "abc");
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert_int_eq(f->vm.exit_status, 1);
	teardown(f);

	f = setup();
	fab_io(f->run, VBTS_UART_PORT, true, 1, 1, "a");
	f->run->io.count = 100000; /* would run past the mapping */
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert_int_eq(f->vm.exit_status, 1);
	ck_assert_str_eq(output(f), "");
	teardown(f);
}
END_TEST

START_TEST(test_mmio_unclaimed)
{
	struct fixture *f = setup();

	f->run->exit_reason = KVM_EXIT_MMIO;
	f->run->mmio.phys_addr = 0xfee00000;
	f->run->mmio.len = 4;
	f->run->mmio.is_write = 0;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert_uint_eq(f->run->mmio.data[0], 0xff);
	ck_assert_uint_eq(f->vm.mmio.unhandled_reads, 1);
	f->run->mmio.len = 9;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	teardown(f);
}
END_TEST

/* Exit reasons and what the loop must do with each. */
static const struct {
	uint32_t reason;
	int action;
	int status; /* exit status after the exit; -1: no stop requested */
} exit_table[] = {
	{ KVM_EXIT_HLT, VCPU_HALT, -1 },
	{ KVM_EXIT_INTR, VCPU_CONTINUE, -1 },
	{ KVM_EXIT_SHUTDOWN, VCPU_STOP, 1 },
	{ KVM_EXIT_INTERNAL_ERROR, VCPU_STOP, 1 },
	{ KVM_EXIT_FAIL_ENTRY, VCPU_STOP, 1 },
	{ KVM_EXIT_DEBUG, VCPU_STOP, 1 },
	{ KVM_EXIT_SYSTEM_EVENT, VCPU_STOP, 1 },
	{ KVM_EXIT_X86_RDMSR, VCPU_CONTINUE, -1 },
	{ KVM_EXIT_X86_WRMSR, VCPU_CONTINUE, -1 },
	{ KVM_EXIT_HYPERCALL, VCPU_STOP, 1 },
	{ KVM_EXIT_UNKNOWN, VCPU_STOP, 1 },
	{ 63, VCPU_STOP, 1 },
	{ 0xdead, VCPU_STOP, 1 },
};

START_TEST(test_exit_table)
{
	struct fixture *f = setup();

	f->run->exit_reason = exit_table[_i].reason;
	f->run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	f->run->internal.ndata = 2;
	f->run->system_event.type = KVM_SYSTEM_EVENT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), exit_table[_i].action);
	if (exit_table[_i].status < 0) {
		ck_assert(!vm__stop_requested(&f->vm));
	} else {
		ck_assert(vm__stop_requested(&f->vm));
		ck_assert_int_eq(f->vm.exit_status, exit_table[_i].status);
	}
	teardown(f);
}
END_TEST

START_TEST(test_crash_noted_in_ring)
{
	struct fixture *f = setup();
	struct ring_writer_config rc = { .capacity = 8, .mode = VBTS_RING_WRAP };
	char path[] = "/tmp/check-vmm-ring-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	f->v.tv.ring = ring_writer__create(path, &rc);
	ck_assert_ptr_nonnull(f->v.tv.ring);
	f->run->exit_reason = KVM_EXIT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert(f->v.frozen);
	ck_assert_uint_eq(ring_writer__committed(f->v.tv.ring), 1);
	/* A second fatal exit does not add another freeze record. */
	f->run->exit_reason = KVM_EXIT_INTERNAL_ERROR;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert_uint_eq(ring_writer__committed(f->v.tv.ring), 1);
	ck_assert_int_eq(ring_writer__close(f->v.tv.ring), 0);
	unlink(path);
	teardown(f);
}
END_TEST

/* A ring with a task's branches for the crash tests; @path receives its (unlinked) name. */
static struct ring_writer *crash_ring(void)
{
	struct ring_writer_config rc = { .capacity = 16, .mode = VBTS_RING_WRAP };
	char path[] = "/tmp/check-vmm-ring-XXXXXX";
	struct ring_writer *w;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	w = ring_writer__create(path, &rc);
	ck_assert_ptr_nonnull(w);
	unlink(path);
	ck_assert_int_eq(ring_writer__escape(w, VBTS_ESC_TASK_ARRIVE, 0x5000, 1), 0);
	for (uint64_t i = 1; i <= 3; i++) {
		struct vbts_record r = { .from = 0x100 * i, .to = 0x100 * i + 0x10 };

		ck_assert_int_eq(ring_writer__append(w, &r), 0);
	}
	return w;
}

static json_t *load_report(const char *dir, const char *name)
{
	char path[256];
	json_error_t je;
	json_t *o;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	o = json_load_file(path, 0, &je);
	ck_assert_msg(o, "%s: %s", path, je.text);
	return o;
}

static void remove_reports(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/crash.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/crash-1.json", dir);
	unlink(path);
	rmdir(dir);
}

/* A triple fault writes crash.json: reason, vCPU, the vCPU's last branches; the run ends. */
START_TEST(test_crash_report_triple_fault)
{
	struct fixture *f = setup();
	char dir[] = "/tmp/check-vmm-crash-XXXXXX";
	json_t *o, *br;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	f->vm.crash_dir = dir;
	f->vm.crash_branches = 2;
	f->v.tv.ring = crash_ring();
	f->run->exit_reason = KVM_EXIT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_STOP);
	ck_assert(vm__stop_requested(&f->vm));
	o = load_report(dir, "crash.json");
	ck_assert_str_eq(json_string_value(json_object_get(o, "reason")), "triple-fault");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "vcpu")), 0);
	/* No vCPU file descriptor here: no registers, and the report says why. */
	ck_assert(json_is_null(json_object_get(o, "registers")));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(o, "registers_note")),
				     "KVM_GET_REGS"));
	br = json_object_get(o, "branches");
	ck_assert_uint_eq(json_array_size(br), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(br, 0), "from")),
			 "0x200");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(br, 1), "to")),
			 "0x310");
	json_decref(o);
	ck_assert_int_eq(ring_writer__close(f->v.tv.ring), 0);
	remove_reports(dir);
	teardown(f);
}
END_TEST

/* --on-crash pause: the vCPU parks instead of ending the run; a second crash gets crash-1. */
START_TEST(test_crash_pause)
{
	struct fixture *f = setup();
	char dir[] = "/tmp/check-vmm-crash-XXXXXX";
	struct vcpu *vcpus[1] = { &f->v };
	json_t *o;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	f->vm.crash_dir = dir;
	f->vm.crash_branches = 32;
	f->vm.on_crash = CRASH_ACTION_PAUSE;
	f->vm.vcpus = vcpus;
	f->vm.nr_vcpus = 1;
	f->v.tv.ring = crash_ring();
	f->run->exit_reason = KVM_EXIT_SHUTDOWN;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert(!vm__stop_requested(&f->vm));
	ck_assert_int_eq(f->v.request, VCPU_PAUSED);
	ck_assert_int_eq(vcpu__crash(&f->v, CRASH_PANIC, NULL), CRASH_ACTION_PAUSE);
	o = load_report(dir, "crash.json");
	ck_assert_uint_eq(json_array_size(json_object_get(o, "branches")), 3);
	json_decref(o);
	o = load_report(dir, "crash-1.json");
	ck_assert_str_eq(json_string_value(json_object_get(o, "reason")), "panic");
	json_decref(o);
	f->vm.vcpus = NULL;
	f->vm.nr_vcpus = 0;
	ck_assert_int_eq(ring_writer__close(f->v.tv.ring), 0);
	remove_reports(dir);
	teardown(f);
}
END_TEST

START_TEST(test_msr_refused)
{
	struct fixture *f = setup();

	f->run->exit_reason = KVM_EXIT_X86_WRMSR;
	f->run->msr.index = 0x1d9;
	f->run->msr.error = 0;
	ck_assert_int_eq(vcpu__dispatch(&f->v, f->run), VCPU_CONTINUE);
	ck_assert_uint_eq(f->run->msr.error, 1);
	teardown(f);
}
END_TEST

START_TEST(test_state_requests)
{
	struct fixture *f = setup();

	ck_assert_int_eq(f->v.request, VCPU_RUNNING);
	vcpu__request(&f->v, VCPU_PAUSED);
	ck_assert_int_eq(f->v.request, VCPU_PAUSED);
	vcpu__request(&f->v, VCPU_STEPPING); /* resume: stepping is how it runs, not a request */
	ck_assert_int_eq(f->v.request, VCPU_RUNNING);
	vcpu__request(&f->v, VCPU_STOPPED);
	vcpu__request(&f->v, VCPU_RUNNING); /* stopped is final */
	ck_assert_int_eq(f->v.request, VCPU_STOPPED);
	ck_assert_int_eq(f->run->immediate_exit, 0); /* no thread to kick */
	teardown(f);
}
END_TEST

/*
 * A stop requested before a vCPU's thread starts wins over the start (parked or live): the
 * thread ends at once and never runs guest code. Loop: _i is @live of vcpu__start().
 */
START_TEST(test_stop_before_start)
{
	struct fixture *f = setup();
	struct vcpu *vp = &f->v;

	f->vm.vcpus = &vp;
	f->vm.nr_vcpus = 1;
	ck_assert_int_eq(vcpu__install_kick_signal(), 0);
	vm__request_stop(&f->vm, 3);
	ck_assert_int_eq(vcpu__start(&f->v, _i), 0);
	/* A hang guard only: the thread ends at once, or parks for ever when the stop is lost. */
	for (int i = 0; i < 3000 && vcpu__state(&f->v) != VCPU_STOPPED; i++)
		usleep(1000);
	ck_assert_int_eq(vcpu__state(&f->v), VCPU_STOPPED);
	ck_assert_int_eq(f->v.request, VCPU_STOPPED);
	vcpu__join(&f->v);
	for (unsigned int r = 0; r < VCPU_NR_EXIT_COUNTERS; r++)
		ck_assert_uint_eq(f->v.exits[r], 0);
	ck_assert_int_eq(vm__wait(&f->vm, 0), 3);
	teardown(f);
}
END_TEST

START_TEST(test_exit_names)
{
	ck_assert_str_eq(vcpu__exit_name(KVM_EXIT_IO), "IO");
	ck_assert_str_eq(vcpu__exit_name(KVM_EXIT_X86_WRMSR), "X86_WRMSR");
	ck_assert_ptr_null(vcpu__exit_name(1000));
}
END_TEST

/* `vbts probe`'s last line: KVM_CAP_X86_BTS's bits as words, unknown bits in hex. */
START_TEST(test_probe_modes)
{
	char buf[64], tiny[6];

	ck_assert_str_eq(probe__format_modes(0, buf, sizeof(buf)), "none");
	ck_assert_str_eq(probe__format_modes(VBTS_KVM_X86_BTS_MODE_RING |
					     VBTS_KVM_X86_BTS_MODE_STEP |
					     VBTS_KVM_X86_BTS_MODE_GUEST, buf, sizeof(buf)),
			 "ring step guest");
	ck_assert_str_eq(probe__format_modes(VBTS_KVM_X86_BTS_MODE_HW | 0x100, buf, sizeof(buf)),
			 "hw 0x100");
	ck_assert_str_eq(probe__format_modes(0x30, buf, sizeof(buf)), "0x30");
	/* Truncated, never overrun. */
	ck_assert_str_eq(probe__format_modes(VBTS_KVM_X86_BTS_MODE_RING |
					     VBTS_KVM_X86_BTS_MODE_STEP, tiny, sizeof(tiny)),
			 "ring");
}
END_TEST

Suite *dispatch_suite(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("exits");

	tcase_add_test(tc, test_io_uart);
	tcase_add_test(tc, test_io_unclaimed);
	tcase_add_test(tc, test_io_debug_exit);
	tcase_add_test(tc, test_io_malformed);
	tcase_add_test(tc, test_triple_fault_pc_reset);
	tcase_add_test(tc, test_mmio_unclaimed);
	tcase_add_loop_test(tc, test_exit_table, 0, sizeof(exit_table) / sizeof(exit_table[0]));
	tcase_add_test(tc, test_crash_noted_in_ring);
	tcase_add_test(tc, test_crash_report_triple_fault);
	tcase_add_test(tc, test_crash_pause);
	tcase_add_test(tc, test_msr_refused);
	tcase_add_test(tc, test_probe_modes);
	tcase_add_test(tc, test_state_requests);
	tcase_add_loop_test(tc, test_stop_before_start, 0, 2);
	tcase_add_test(tc, test_exit_names);
	suite_add_tcase(s, tc);
	return s;
}
