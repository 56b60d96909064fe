// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-env.c - the VM fixture of check-step-kvm and check-kvm-backend: the test guest of
 * kvm-guest.h on the host's /dev/kvm under a tracer backend, and the ring file it wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>
#include <linux/kvm.h>

#include "kvm-env.h"
#include "kvm-guest.h"
#include "memory.h"
#include "ring-writer.h"

#define GUEST_RAM (4ULL << 20)
#define MAX_RUNS 100000

struct kvm_env *kvm_env__create(enum vbts_cpl_filter cpl, uint64_t rip)
{
	struct ring_writer_config cfg = { .capacity = KVM_ENV_MAX_RECORDS,
					  .mode = VBTS_RING_WRAP };
	struct kvm_env *e = calloc(1, sizeof(*e));

	ck_assert_ptr_nonnull(e);
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

	snprintf(e->dir, sizeof(e->dir), "/tmp/check-kvm-env.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(e->dir));
	snprintf(e->path, sizeof(e->path), "%s/vcpu0.ring", e->dir);
	e->tv.ring = ring_writer__create(e->path, &cfg);
	ck_assert_ptr_nonnull(e->tv.ring);
	e->tv.index = 0;
	e->tv.fd = e->vcpu;
	e->tv.run = e->run;
	e->tv.mem = e->mem;
	e->tv.cpl = cpl;
	e->tv.start_ns = kvm_guest__monotonic_ns();
	return e;
}

void kvm_env__run(struct kvm_env *e, const struct tracer_ops *ops, uint32_t tracer_exit)
{
	struct kvm_regs regs;
	int ret;

	ck_assert_int_eq(ops->vcpu_init(&e->tv), 0);
	for (unsigned int i = 0; i < MAX_RUNS; i++) {
		ck_assert_int_eq(ops->before_run(&e->tv), 0);
		ck_assert_int_eq(ioctl(e->vcpu, KVM_RUN, 0), 0);
		ret = ops->after_exit(&e->tv);
		ck_assert_int_ge(ret, 0);
		if (ret == 1) {
			if (tracer_exit)
				ck_assert_uint_eq(e->run->exit_reason, tracer_exit);
			e->tracer_exits++;
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

void kvm_env__records(struct kvm_env *e)
{
	struct vbts_ring_header h;
	FILE *f;

	ck_assert_int_eq(ring_writer__close(e->tv.ring), 0);
	e->tv.ring = NULL;
	f = fopen(e->path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(&h, sizeof(h), 1, f), 1);
	ck_assert_uint_eq(h.magic, VBTS_RING_MAGIC);
	/* the writer published every record: no wrap at this size */
	ck_assert_uint_le(h.committed, KVM_ENV_MAX_RECORDS);
	e->nrec = (unsigned int)h.committed;
	ck_assert_uint_eq(fread(e->rec, sizeof(e->rec[0]), e->nrec, f), e->nrec);
	fclose(f);
}

void kvm_env__destroy(struct kvm_env *e)
{
	if (e->tv.ring)
		ring_writer__close(e->tv.ring);
	unlink(e->path);
	rmdir(e->dir);
	munmap(e->run, e->run_size);
	close(e->vcpu);
	kvm__close(&e->k);
	guest_memory__destroy(e->mem);
	free(e);
}

unsigned int kvm_env__kind(const struct vbts_record *r)
{
	return (unsigned int)((r->flags & VBTS_REC_KIND_MASK) >> VBTS_REC_KIND_SHIFT);
}

int kvm_env__main(Suite *s, bool (*usable)(int kvm_fd), const char *unusable)
{
	SRunner *sr;
	int fd, failed;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("SKIP: /dev/kvm: %s\n", strerror(errno));
		return 77;
	}
	if (usable && !usable(fd)) {
		close(fd);
		printf("SKIP: %s\n", unusable);
		return 77;
	}
	close(fd);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
