// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-backend.c - check-kvm-backend: the kvm tracer backend on a KVM with kvm-patches/ loaded,
 * around the hand-assembled 64-bit ring-0 guest of check-step-kvm.
 *
 * The guest (identity-mapped 2 MiB page, flat GDT, a 64-bit IDT gate for #UD):
 *   0x1000  jmp 0x1004                 JMP
 *   0x1004  mov $3, %ecx               (another count in the watermark test)
 *   0x1009  loop 0x1009                LOOP, twice
 *   0x100b  call 0x1040                CALL; 0x1040 ret -> 0x1010  RET
 *   0x1010  mov %ss, %eax; mov %eax, %ss; jmp 0x1018   JMP covered by the mov-ss step:
 *                                      recorded all the same (the kernel decodes the
 *                                      instruction a MOV SS step also covers)
 *   0x1018  ud2                        EXCEPTION 6 -> 0x1100 (delivered and stepped in the
 *                                      kernel: no gap)
 *   0x101a  mov $0x80, %dx; out %al, %dx                 an I/O exit
 *   0x101f  build an iretq frame; iretq -> 0x1032       IRET
 *   0x1032  hlt
 *   0x1100  #UD handler: nop; addq $2, (%rsp); iretq
 * Exit status: 0 all passed, 1 a failure, 77 no /dev/kvm or no KVM_CAP_X86_BTS (stock KVM; the
 * kvm-patches suite runs this inside the harness with the patched modules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "kvm-backend/kvm-backend.h"
#include "kvm-guest.h"
#include "kvm.h"
#include "memory.h"
#include "ring-writer.h"
#include "tracer.h"

#define GUEST_RAM (4ULL << 20)
#define MAX_RUNS 100000
#define MAX_RECORDS 4096

/**
 * struct kvm_env - one VM with one vCPU and the tracer's view of it.
 */
struct kvm_env {
	struct kvm k;
	struct guest_memory *mem;
	int vcpu;
	struct kvm_run *run;
	int run_size;
	char dir[64];
	char path[96];
	struct tracer_vcpu tv;
	unsigned int io_exits;
	unsigned int halts;
	unsigned int bts_exits;
	uint64_t halt_rip;
	struct vbts_record rec[MAX_RECORDS];
	unsigned int nrec;
};

static void env_create(struct kvm_env *e, enum vbts_cpl_filter cpl, uint64_t ring_records,
		       uint64_t rip)
{
	struct ring_writer_config cfg = { .capacity = MAX_RECORDS, .mode = VBTS_RING_WRAP };

	memset(e, 0, sizeof(*e));
	ck_assert_int_eq(kvm__open(&e->k), 0);
	e->mem = guest_memory__create(GUEST_RAM);
	ck_assert_ptr_nonnull(e->mem);
	ck_assert_int_eq(guest_memory__register(e->mem, e->k.vm_fd), 0);
	e->vcpu = ioctl(e->k.vm_fd, KVM_CREATE_VCPU, 0);
	ck_assert_int_ge(e->vcpu, 0);
	ck_assert_int_eq(ioctl(e->vcpu, KVM_SET_CPUID2, e->k.cpuid), 0);
	e->run_size = e->k.run_size;
	e->run = mmap(NULL, e->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, e->vcpu, 0);
	ck_assert(e->run != MAP_FAILED);
	kvm_guest__setup(e->mem, e->vcpu, rip);

	snprintf(e->dir, sizeof(e->dir), "/tmp/check-kvm-backend.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->path, sizeof(e->path), "%s/vcpu0.ring", e->dir);
	e->tv.ring = ring_writer__create(e->path, &cfg);
	ck_assert_ptr_nonnull(e->tv.ring);
	e->tv.index = 0;
	e->tv.fd = e->vcpu;
	e->tv.run = e->run;
	e->tv.mem = e->mem;
	e->tv.cpl = cpl;
	e->tv.ring_records = ring_records;
	e->tv.start_ns = kvm_guest__monotonic_ns();
}

/* The exit loop of the VMM, reduced to what this guest does. */
static void env_run(struct kvm_env *e)
{
	const struct tracer_ops *ops = &kvm_tracer_ops;
	struct kvm_regs regs;
	int ret;

	ck_assert_int_eq(ops->vcpu_init(&e->tv), 0);
	for (unsigned int i = 0; i < MAX_RUNS; i++) {
		ck_assert_int_eq(ops->before_run(&e->tv), 0);
		ck_assert_int_eq(ioctl(e->vcpu, KVM_RUN, 0), 0);
		ret = ops->after_exit(&e->tv);
		ck_assert_int_ge(ret, 0);
		if (ret == 1) {
			ck_assert_uint_eq(e->run->exit_reason, VBTS_KVM_EXIT_X86_BTS);
			e->bts_exits++;
			continue;
		}
		if (e->run->exit_reason == KVM_EXIT_IO) {
			ck_assert_uint_eq(e->run->io.port, 0x80);
			e->io_exits++;
			continue;
		}
		ck_assert_msg(e->run->exit_reason == KVM_EXIT_HLT, "unexpected exit %u",
			      e->run->exit_reason);
		e->halts++;
		break;
	}
	ck_assert_uint_eq(e->halts, 1);
	ck_assert_int_eq(ioctl(e->vcpu, KVM_GET_REGS, &regs), 0);
	ck_assert_uint_eq(regs.rip, 0x1033); /* right after the hlt */
	ops->vcpu_fini(&e->tv);
}

/* Read the ring back: the writer published every record (no wrap at this size). */
static void env_records(struct kvm_env *e)
{
	struct vbts_ring_header h;
	FILE *f;

	ck_assert_int_eq(ring_writer__close(e->tv.ring), 0);
	e->tv.ring = NULL;
	f = fopen(e->path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(&h, sizeof(h), 1, f), 1);
	ck_assert_uint_eq(h.magic, VBTS_RING_MAGIC);
	ck_assert_uint_le(h.committed, MAX_RECORDS);
	e->nrec = (unsigned int)h.committed;
	ck_assert_uint_eq(fread(e->rec, sizeof(e->rec[0]), e->nrec, f), e->nrec);
	fclose(f);
}

static void env_destroy(struct kvm_env *e)
{
	if (e->tv.ring)
		ring_writer__close(e->tv.ring);
	unlink(e->path);
	rmdir(e->dir);
	munmap(e->run, e->run_size);
	close(e->vcpu);
	kvm__close(&e->k);
	guest_memory__destroy(e->mem);
}

static unsigned int kind_of(const struct vbts_record *r)
{
	return (unsigned int)((r->flags & VBTS_REC_KIND_MASK) >> VBTS_REC_KIND_SHIFT);
}

static bool in_handler(uint64_t a)
{
	return a >= KVM_GUEST_HANDLER_LO && a < KVM_GUEST_HANDLER_HI;
}

/* START, the vCPU's task, times that do not go back, STOP; no gap and no loss. */
static void check_frame(struct kvm_env *e, uint64_t cpl_bits)
{
	const struct vbts_record *r = e->rec;
	uint64_t last = 0, t;

	ck_assert_uint_ge(e->nrec, 3);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[0]), VBTS_ESC_START);
	ck_assert_uint_eq(vbts_record__escape_aux(&r[0]), cpl_bits);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[1]), VBTS_ESC_TASK_ARRIVE);
	ck_assert_uint_eq(r[1].to, 0x10000);
	ck_assert_uint_eq(vbts_record__escape_kind(&r[e->nrec - 1]), VBTS_ESC_STOP);
	for (unsigned int i = 0; i < e->nrec; i++) {
		if (!vbts_record__is_escape(&r[i]))
			continue;
		switch (vbts_record__escape_kind(&r[i])) {
		case VBTS_ESC_START:
		case VBTS_ESC_STOP:
			t = r[i].to;
			break;
		case VBTS_ESC_TASK_ARRIVE:
			t = vbts_record__escape_aux(&r[i]);
			break;
		default:
			ck_abort_msg("escape kind %u at %u", vbts_record__escape_kind(&r[i]), i);
			continue;
		}
		/* ns since the trace started, converted from the guest TSC: a few seconds */
		ck_assert_uint_ge(t, last);
		ck_assert_uint_lt(t, 60ULL * 1000000000ULL);
		last = t;
	}
	ck_assert_uint_eq(e->tv.stat_gaps, 0);
	ck_assert_uint_eq(e->tv.stat_records, e->nrec);
	ck_assert_uint_eq(e->io_exits, 1);
}

/* The branches outside the #UD handler, in order, with the loop taken @loops times. */
static void check_branches(struct kvm_env *e, unsigned int loops)
{
	const unsigned int nexp = kvm_guest_nr_branches;
	const struct vbts_record *r = e->rec;
	unsigned int nb = 0, want = nexp - 2 + loops, handler = 0;

	for (unsigned int i = 0; i < e->nrec; i++) {
		const struct kvm_guest_branch *x;

		if (vbts_record__is_escape(&r[i]))
			continue;
		ck_assert(r[i].flags & VBTS_REC_CPL_VALID);
		ck_assert_uint_eq((r[i].flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT, 0);
		if (in_handler(r[i].from)) {
			handler++;
			continue;
		}
		ck_assert_msg(nb < want, "extra branch %#llx -> %#llx",
			      (unsigned long long)r[i].from, (unsigned long long)r[i].to);
		/* kvm_guest_branches[1] stands for every loop branch */
		x = &kvm_guest_branches[nb < 1 ? 0 : nb < 1 + loops ? 1 : nb - loops + 2];
		ck_assert_msg(r[i].from == x->from && r[i].to == x->to && kind_of(&r[i]) == x->kind,
			      "branch %u: %#llx -> %#llx kind %u, want %#llx -> %#llx kind %u", nb,
			      (unsigned long long)r[i].from, (unsigned long long)r[i].to,
			      kind_of(&r[i]), (unsigned long long)x->from,
			      (unsigned long long)x->to, x->kind);
		if (x->kind == VBTS_BR_EXCEPTION) {
			ck_assert(r[i].flags & VBTS_REC_VECTOR_VALID);
			ck_assert_uint_eq((r[i].flags & VBTS_REC_VECTOR_MASK) >>
						  VBTS_REC_VECTOR_SHIFT, 6);
		}
		nb++;
	}
	ck_assert_uint_eq(nb, want);
	/* the handler is stepped in the kernel: its iretq back to 0x101a is recorded */
	ck_assert_uint_eq(handler, 1);
}

START_TEST(test_kvm_trace)
{
	struct kvm_env *e = calloc(1, sizeof(*e));

	ck_assert_ptr_nonnull(e);
	env_create(e, VBTS_CPL_ALL, 65536, 0x1000);
	env_run(e);
	env_records(e);
	check_frame(e, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	check_branches(e, 2);
	ck_assert_uint_eq(e->bts_exits, 0);
	env_destroy(e);
	free(e);
}
END_TEST

START_TEST(test_kvm_watermark)
{
	/* 300 loop iterations through a 64-record kernel ring: watermark exits, nothing lost */
	struct kvm_env *e = calloc(1, sizeof(*e));
	uint32_t count = 300;

	ck_assert_ptr_nonnull(e);
	env_create(e, VBTS_CPL_ALL, 64, 0x1000);
	kvm_guest__put(e->mem, KVM_GUEST_LOOP_COUNT_GPA, &count, sizeof(count));
	env_run(e);
	env_records(e);
	check_frame(e, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	check_branches(e, count - 1);
	ck_assert_uint_ge(e->bts_exits, 300 / 32 - 1);
	env_destroy(e);
	free(e);
}
END_TEST

START_TEST(test_kvm_filter_user)
{
	struct kvm_env *e = calloc(1, sizeof(*e));

	ck_assert_ptr_nonnull(e);
	env_create(e, VBTS_CPL_USER, 65536, 0x1000);
	env_run(e);
	env_records(e);
	check_frame(e, VBTS_START_CPL_USER);
	for (unsigned int i = 0; i < e->nrec; i++)
		ck_assert_msg(vbts_record__is_escape(&e->rec[i]), "a ring-0 branch was recorded");
	env_destroy(e);
	free(e);
}
END_TEST

static Suite *kvm_backend_suite(void)
{
	Suite *s = suite_create("kvm-backend");
	TCase *tc = tcase_create("guest");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_kvm_trace);
	tcase_add_test(tc, test_kvm_watermark);
	tcase_add_test(tc, test_kvm_filter_user);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int fd, failed;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("SKIP: /dev/kvm: %s\n", strerror(errno));
		return 77;
	}
	if (!kvm_bts__usable(fd)) {
		close(fd);
		printf("SKIP: this KVM has no KVM_CAP_X86_BTS (load the modules of kvm-patches/)\n");
		return 77;
	}
	close(fd);
	sr = srunner_create(kvm_backend_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
