// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-ring.c - check-kvm-ring: the copy of the kernel's branch trace ring into a ring file
 * (vmm/kvm-backend/kvm-ring.c, shared by the kvm backend and vbts attach), on a ring that the
 * test writes as the kernel does, in a memfd mapped as the kernel's ring is mapped: records in
 * order, a wrap counted as lost, a header that breaks its invariants resynchronised at its head,
 * a header of another size refused, escape times converted, records of a previous tracer
 * skipped by starting at the head, a ring its vCPU sets up only after it was mapped (attach).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vbts/kvm-bts-uapi.h>
#include <vbts/ring-format.h>

#include "check-main.h"
#include "kvm-backend/kvm-ring.h"
#include "ring-writer.h"

#define NR 64

/*
 * Appends to the ring file, counted: the link wraps ring_writer__append() and
 * ring_writer__append_n() (-Wl,--wrap, tests/unit/kvm-backend/meson.build).
 */
static unsigned int appends;

int __real_ring_writer__append(struct ring_writer *w, const struct vbts_record *rec);
int __wrap_ring_writer__append(struct ring_writer *w, const struct vbts_record *rec);
int __real_ring_writer__append_n(struct ring_writer *w, const struct vbts_record *recs,
				 uint64_t n);
int __wrap_ring_writer__append_n(struct ring_writer *w, const struct vbts_record *recs,
				 uint64_t n);

int __wrap_ring_writer__append(struct ring_writer *w, const struct vbts_record *rec)
{
	appends++;
	return __real_ring_writer__append(w, rec);
}

int __wrap_ring_writer__append_n(struct ring_writer *w, const struct vbts_record *recs,
				 uint64_t n)
{
	appends++;
	return __real_ring_writer__append_n(w, recs, n);
}

struct fixture {
	int fd;
	struct vbts_kvm_x86_bts_ring_header *hdr; /* the "kernel's" view */
	struct vbts_record *recs;
	size_t len;
	struct kvm_ring kr;
	struct tracer_vcpu tv;
	char path[64];
};

static void setup(struct fixture *f, uint64_t hdr_nr)
{
	struct ring_writer_config rc = { .capacity = 1024, .mode = VBTS_RING_WRAP };
	char err[160];
	int fd;

	memset(f, 0, sizeof(*f));
	f->len = kvm_ring__map_len(NR);
	f->fd = memfd_create("kernel-ring", MFD_CLOEXEC);
	ck_assert_int_ge(f->fd, 0);
	ck_assert_int_eq(ftruncate(f->fd, (off_t)f->len), 0);
	f->hdr = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	ck_assert_ptr_ne(f->hdr, MAP_FAILED);
	f->recs = (void *)((char *)f->hdr + VBTS_KVM_X86_BTS_RING_HEADER_SIZE);
	f->hdr->nr_records = hdr_nr;
	f->hdr->record_size = sizeof(struct vbts_record);
	strcpy(f->path, "/tmp/check-kvm-ring-XXXXXX");
	fd = mkstemp(f->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(f->path);
	f->tv.ring = ring_writer__create(f->path, &rc);
	ck_assert_ptr_nonnull(f->tv.ring);
	if (hdr_nr == NR)
		ck_assert_int_eq(kvm_ring__map(&f->kr, f->fd, 0, NR, err, sizeof(err)), 0);
}

static void teardown(struct fixture *f)
{
	kvm_ring__unmap(&f->kr);
	ring_writer__close(f->tv.ring);
	unlink(f->path);
	munmap(f->hdr, f->len);
	close(f->fd);
}

/* The "kernel" publishes branch records from..from+n-1 (wrapping, counting what it drops). */
static void kernel_put(struct fixture *f, uint64_t from, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t h = f->hdr->head;

		if (h - f->hdr->tail == NR) {
			f->hdr->tail++;
			f->hdr->lost++;
		}
		f->recs[h % NR] = (struct vbts_record){ .from = from + i, .to = 0x1000 + i };
		f->hdr->head = h + 1;
	}
}

static struct vbts_record got(struct fixture *f, uint64_t seq)
{
	struct vbts_record r;

	ck_assert_int_eq(ring_writer__read(f->tv.ring, seq, &r), 0);
	return r;
}

START_TEST(test_copy_in_order)
{
	struct fixture f;

	setup(&f, NR);
	kernel_put(&f, 100, 10);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 10);
	ck_assert_uint_eq(f.hdr->tail, 10);
	kernel_put(&f, 200, 60);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 60);
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 70);
	ck_assert_uint_eq(f.tv.stat_records, 70);
	for (unsigned int i = 0; i < 10; i++)
		ck_assert_uint_eq(got(&f, i).from, 100 + i);
	for (unsigned int i = 0; i < 60; i++)
		ck_assert_uint_eq(got(&f, 10 + i).from, 200 + i);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	teardown(&f);
}
END_TEST

/*
 * A drain appends its records to the ring file in batches, not one call per record (a call
 * publishes the ring header: one publication per batch); escapes and their times in order.
 */
START_TEST(test_drain_batches)
{
	struct vbts_record r;
	struct fixture f;

	setup(&f, NR);
	kernel_put(&f, 100, 30);
	f.recs[f.hdr->head % NR] = vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, 0x5000, 0);
	f.hdr->head++;
	kernel_put(&f, 300, 30);
	appends = 0;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 61);
	ck_assert_uint_le(appends, 2);
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 61);
	ck_assert_uint_eq(f.tv.stat_records, 61);
	for (unsigned int i = 0; i < 30; i++) {
		ck_assert_uint_eq(got(&f, i).from, 100 + i);
		ck_assert_uint_eq(got(&f, 31 + i).from, 300 + i);
	}
	r = got(&f, 30);
	ck_assert_uint_eq(vbts_record__escape_kind(&r), VBTS_ESC_TASK_ARRIVE);
	ck_assert_uint_eq(r.to, 0x5000);
	teardown(&f);
}
END_TEST

/* The kernel wrapped over 36 records not copied: one LOST record says so, then the rest. */
START_TEST(test_wrap_counts_lost)
{
	struct vbts_record r;
	struct fixture f;

	setup(&f, NR);
	kernel_put(&f, 0, NR + 36);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), NR);
	r = got(&f, 0);
	ck_assert(vbts_record__is_escape(&r));
	ck_assert_uint_eq(vbts_record__escape_kind(&r), VBTS_ESC_LOST);
	ck_assert_uint_eq(r.to, 36);
	for (unsigned int i = 0; i < NR; i++)
		ck_assert_uint_eq(got(&f, 1 + i).from, 36 + i);
	teardown(&f);
}
END_TEST

/* Heads and tails the kernel never writes: nothing indexed with them, resync at head. */
static const struct {
	uint64_t head, tail;
} bad_headers[] = {
	{ 5, 9 },          /* tail beyond head */
	{ 1000, 0 },       /* more than NR records */
	{ ~0ULL, 0 },
};

START_TEST(test_bad_header)
{
	struct vbts_record r;
	struct fixture f;

	setup(&f, NR);
	kernel_put(&f, 0, 3);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 3);
	f.hdr->head = bad_headers[_i].head;
	f.hdr->tail = bad_headers[_i].tail;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 4);
	r = got(&f, 3);
	ck_assert(vbts_record__is_escape(&r));
	ck_assert_uint_eq(vbts_record__escape_kind(&r), VBTS_ESC_LOST);
	ck_assert_uint_eq(f.hdr->tail, bad_headers[_i].head);
	teardown(&f);
}
END_TEST

START_TEST(test_header_size_refused)
{
	char err[160] = "";
	struct kvm_ring kr;
	struct fixture f;

	setup(&f, NR * 2);
	ck_assert_int_eq(kvm_ring__map(&kr, f.fd, 0, NR, err, sizeof(err)), -EPROTO);
	ck_assert_ptr_nonnull(strstr(err, "128 records of 24 bytes"));
	ck_assert_ptr_null(kr.map);
	teardown(&f);
}
END_TEST

/* Guest TSC times: converted at the known frequency, all the set-up time when unknown. */
START_TEST(test_escape_times)
{
	struct vbts_record r;
	struct fixture f;

	setup(&f, NR);
	f.kr.ns0 = 5000;
	f.kr.tsc0 = 1000000;
	f.kr.khz = 1000000; /* 1 GHz: one tick a ns */
	f.recs[0] = (struct vbts_record){ .from = ~0ULL, .to = 1002000,
					  .flags = VBTS_ESC_START };
	f.recs[1] = vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, 0x3000, 1003000);
	f.hdr->head = 2;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 2);
	r = got(&f, 0);
	ck_assert_uint_eq(r.to, 7000);
	r = got(&f, 1);
	ck_assert_uint_eq(vbts_record__escape_aux(&r), 8000);
	ck_assert_uint_eq(r.to, 0x3000);
	f.kr.khz = 0;
	f.recs[2] = vbts_record__make_escape(VBTS_ESC_TASK_DEPART, 0x3000, 99999999);
	f.hdr->head = 3;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 1);
	r = got(&f, 2);
	ck_assert_uint_eq(vbts_record__escape_aux(&r), 5000);
	teardown(&f);
}
END_TEST

/* A tracer that starts at the head (vbts attach) copies none of what was there before. */
START_TEST(test_start_at_head)
{
	struct fixture f;

	setup(&f, NR);
	kernel_put(&f, 0, 20);
	f.kr.next = f.hdr->head;
	f.hdr->tail = f.hdr->head;
	kernel_put(&f, 500, 2);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 2);
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 2);
	ck_assert_uint_eq(got(&f, 0).from, 500);
	teardown(&f);
}
END_TEST

/* A ring the vCPU has not set up yet (attach): nothing copied until it has, then all of it. */
START_TEST(test_pending_header)
{
	char err[160] = "";
	struct fixture f;

	setup(&f, 0);
	f.hdr->record_size = 0;
	ck_assert_int_eq(kvm_ring__map(&f.kr, f.fd, 0, NR, err, sizeof(err)), -EPROTO);
	ck_assert_int_eq(kvm_ring__map_pending(&f.kr, f.fd, 0, NR, err, sizeof(err)), 0);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	/* half set up: the size without the record size */
	f.hdr->nr_records = NR;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	f.hdr->record_size = sizeof(struct vbts_record);
	kernel_put(&f, 40, 5);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 5);
	ck_assert(!kvm_ring__broken(&f.kr));
	ck_assert_uint_eq(got(&f, 4).from, 44);
	teardown(&f);
}
END_TEST

/* A pending ring that turns out to be of another size: one LOST record, nothing indexed. */
START_TEST(test_pending_header_wrong)
{
	struct vbts_record r;
	char err[160] = "";
	struct fixture f;

	setup(&f, 0);
	f.hdr->record_size = 0;
	ck_assert_int_eq(kvm_ring__map_pending(&f.kr, f.fd, 0, NR, err, sizeof(err)), 0);
	f.hdr->nr_records = NR * 4;
	f.hdr->record_size = sizeof(struct vbts_record);
	f.hdr->head = 200;
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	ck_assert(kvm_ring__broken(&f.kr));
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 1);
	r = got(&f, 0);
	ck_assert_uint_eq(vbts_record__escape_kind(&r), VBTS_ESC_LOST);
	ck_assert_uint_eq(kvm_ring__drain(&f.kr, &f.tv), 0);
	ck_assert_uint_eq(ring_writer__committed(f.tv.ring), 1);
	teardown(&f);
}
END_TEST

static Suite *kvm_ring_suite(void)
{
	Suite *s = suite_create("kvm-ring");
	TCase *tc = tcase_create("copy");

	tcase_add_test(tc, test_copy_in_order);
	tcase_add_test(tc, test_drain_batches);
	tcase_add_test(tc, test_wrap_counts_lost);
	tcase_add_loop_test(tc, test_bad_header, 0, sizeof(bad_headers) / sizeof(bad_headers[0]));
	tcase_add_test(tc, test_header_size_refused);
	tcase_add_test(tc, test_escape_times);
	tcase_add_test(tc, test_start_at_head);
	tcase_add_test(tc, test_pending_header);
	tcase_add_test(tc, test_pending_header_wrong);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(kvm_ring_suite)
