// SPDX-License-Identifier: GPL-2.0
/*
 * test-ring-writer.c - ring files: round trip, escapes, wrap and loss accounting, freeze,
 * bad configurations, kill -9 of the writer, and reading a file while it is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "ring-reader.h"
#include "ring-writer.h"
#include "ring-test.h"
#include "test-files.h"

void ring_test_tmpdir(char *buf)
{
	test__make_temp_dir(buf, 64, "vbts-ring");
}

void ring_test_rmdir(const char *dir)
{
	test__remove_tree(dir);
}

static struct ring_writer *new_ring(const char *dir, const char *name, uint64_t capacity,
				    char *path)
{
	struct ring_writer_config cfg = {
		.capacity = capacity,
		.mode = VBTS_RING_WRAP,
		.vcpu_id = 3,
		.vm_id = 0x1122334455667788ULL,
		.start_time_ns = 1700000000000000000ULL,
	};
	struct ring_writer *w;

	snprintf(path, 256, "%s/%s", dir, name);
	w = ring_writer__create(path, &cfg);
	ck_assert_msg(w, "ring_writer__create: %s", strerror(errno));
	return w;
}

/* Reads the whole window and checks every record against its seq; returns the count. */
static uint64_t read_all_checked(struct ring_reader *r, uint64_t *first_out)
{
	struct vbts_record buf[7]; /* odd chunk size: exercise chunk boundaries */
	uint64_t first, expect = UINT64_MAX, total = 0;
	ssize_t n;

	while ((n = ring_reader__read(r, buf, 7, &first)) > 0) {
		if (expect == UINT64_MAX && first_out)
			*first_out = first;
		ck_assert(expect == UINT64_MAX || first >= expect);
		/* Not ck_assert(): Check records every assertion that holds, slowly. */
		for (ssize_t i = 0; i < n; i++)
			if (!ring_test_record_ok(&buf[i], first + (uint64_t)i))
				ck_abort_msg("record %llu torn or misplaced",
					     (unsigned long long)(first + (uint64_t)i));
		expect = first + (uint64_t)n;
		total += (uint64_t)n;
	}
	ck_assert_int_eq(n, 0);
	return total;
}

START_TEST(test_round_trip)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	const struct vbts_ring_header *h;
	struct ring_writer *w;
	struct ring_reader *r;
	uint64_t first = 99;

	ring_test_tmpdir(dir);
	w = new_ring(dir, "vcpu3.ring", 8, path);
	for (uint64_t s = 0; s < 5; s++) {
		struct vbts_record rec = ring_test_record(s);

		ck_assert_int_eq(ring_writer__append(w, &rec), 0);
	}
	ck_assert_uint_eq(ring_writer__committed(w), 5);
	ck_assert_int_eq(ring_writer__close(w), 0);

	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	h = ring_reader__header(r);
	ck_assert_uint_eq(h->magic, VBTS_RING_MAGIC);
	ck_assert_uint_eq(h->version, VBTS_RING_VERSION);
	ck_assert_uint_eq(h->capacity, 8);
	ck_assert_uint_eq(h->vcpu_id, 3);
	ck_assert_uint_eq(h->vm_id, 0x1122334455667788ULL);
	ck_assert_uint_eq(h->start_time_ns, 1700000000000000000ULL);
	ck_assert_uint_eq(h->committed, 5);
	ck_assert_uint_eq(h->lost, 0);
	ck_assert_uint_eq(h->flags, VBTS_RING_F_CLOSED);
	ck_assert_uint_eq(read_all_checked(r, &first), 5);
	ck_assert_uint_eq(first, 0);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_escape_kinds)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	struct vbts_record buf[VBTS_ESC_MAX];
	struct ring_writer *w;
	struct ring_reader *r;
	uint64_t first;
	unsigned int k;

	ring_test_tmpdir(dir);
	w = new_ring(dir, "vcpu0.ring", 16, path);
	for (k = 1; k < VBTS_ESC_MAX; k++)
		ck_assert_int_eq(ring_writer__escape(w, k, 0x1000 * k, VBTS_ESC_AUX_MAX - k), 0);
	ck_assert_int_eq(ring_writer__close(w), 0);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	ck_assert_int_eq(ring_reader__read(r, buf, VBTS_ESC_MAX, &first), VBTS_ESC_MAX - 1);
	for (k = 1; k < VBTS_ESC_MAX; k++) {
		ck_assert(vbts_record__is_escape(&buf[k - 1]));
		ck_assert_uint_eq(vbts_record__escape_kind(&buf[k - 1]), k);
		ck_assert_uint_eq(buf[k - 1].to, 0x1000 * k);
		ck_assert_uint_eq(vbts_record__escape_aux(&buf[k - 1]), VBTS_ESC_AUX_MAX - k);
	}
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_wrap_and_loss)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	struct ring_writer *w;
	struct ring_reader *r;
	uint64_t first = 0, wfirst, wend;

	ring_test_tmpdir(dir);
	w = new_ring(dir, "vcpu0.ring", 4, path);
	for (uint64_t s = 0; s < 10; s++) {
		struct vbts_record rec = ring_test_record(s);

		ck_assert_int_eq(ring_writer__append(w, &rec), 0);
	}
	ck_assert_int_eq(ring_writer__close(w), 0);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	ck_assert_uint_eq(ring_reader__header(r)->committed, 10);
	ck_assert_uint_eq(ring_reader__header(r)->lost, 6);
	ring_reader__window(r, &wfirst, &wend);
	ck_assert_uint_eq(wfirst, 6);
	ck_assert_uint_eq(wend, 10);
	ck_assert_uint_eq(read_all_checked(r, &first), 4);
	ck_assert_uint_eq(first, 6);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * A ring resized while it records: the file under its name is replaced by one of the new
 * size with the newest records that fit (numbering goes on, what does not fit is counted
 * lost), then appends go on there; growing keeps every record the ring held.
 */
START_TEST(test_resize)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	struct ring_writer *w;
	struct ring_reader *r;
	struct vbts_record rec;
	uint64_t first = 0, wfirst, wend;
	struct stat st;

	ring_test_tmpdir(dir);
	w = new_ring(dir, "vcpu0.ring", 8, path);
	for (uint64_t s = 0; s < 11; s++) {
		rec = ring_test_record(s);
		ck_assert_int_eq(ring_writer__append(w, &rec), 0);
	}
	/* 8 held (3 overwritten); shrunk to 5: 3 more lost */
	ck_assert_int_eq(ring_writer__resize(w, 5), 0);
	ck_assert_uint_eq(ring_writer__committed(w), 11);
	ck_assert_uint_eq(ring_writer__lost(w), 6);
	ck_assert_int_eq(ring_writer__read(w, 5, &rec), -ENOENT);
	ck_assert_int_eq(ring_writer__read(w, 6, &rec), 0);
	ck_assert(ring_test_record_ok(&rec, 6));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_size, VBTS_RING_HEADER_SIZE + 5 * sizeof(struct vbts_record));
	/* grown to 20: nothing more lost; then 4 more appended */
	ck_assert_int_eq(ring_writer__resize(w, 20), 0);
	for (uint64_t s = 11; s < 15; s++) {
		rec = ring_test_record(s);
		ck_assert_int_eq(ring_writer__append(w, &rec), 0);
	}
	ck_assert_uint_eq(ring_writer__lost(w), 6);
	/* the same size, and 0: nothing changes, or refused */
	ck_assert_int_eq(ring_writer__resize(w, 20), 0);
	ck_assert_int_eq(ring_writer__resize(w, 0), -EINVAL);
	ck_assert_int_eq(ring_writer__close(w), 0);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	ck_assert_uint_eq(ring_reader__header(r)->committed, 15);
	ck_assert_uint_eq(ring_reader__header(r)->lost, 6);
	ck_assert_uint_eq(ring_reader__header(r)->capacity, 20);
	ring_reader__window(r, &wfirst, &wend);
	ck_assert_uint_eq(wfirst, 6);
	ck_assert_uint_eq(wend, 15);
	ck_assert_uint_eq(read_all_checked(r, &first), 9);
	ck_assert_uint_eq(first, 6);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_freeze)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX];
	struct vbts_record rec = ring_test_record(0);
	struct ring_writer *w;
	struct ring_reader *r;

	ring_test_tmpdir(dir);
	w = new_ring(dir, "vcpu0.ring", 4, path);
	for (uint64_t s = 0; s < 6; s++) {
		rec = ring_test_record(s);
		ck_assert_int_eq(ring_writer__append(w, &rec), 0);
	}
	ring_writer__freeze(w);
	ck_assert_int_eq(ring_writer__append(w, &rec), -EROFS);
	ck_assert_int_eq(ring_writer__escape(w, VBTS_ESC_STOP, 1, 0), -EROFS);
	ck_assert_uint_eq(ring_writer__committed(w), 6);
	ck_assert_int_eq(ring_writer__close(w), 0);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	ck_assert_uint_eq(ring_reader__header(r)->flags, VBTS_RING_F_FROZEN | VBTS_RING_F_CLOSED);
	ck_assert_uint_eq(ring_reader__header(r)->committed, 6);
	ck_assert_uint_eq(ring_reader__header(r)->lost, 2 + 2); /* 2 overwritten, 2 refused */
	ck_assert_uint_eq(read_all_checked(r, NULL), 4);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

START_TEST(test_bad_config)
{
	struct ring_writer_config cfg = { .capacity = 4, .mode = VBTS_RING_WRAP };
	char dir[64], path[256];
	struct ring_writer *w;
	struct stat st;

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/x.ring", dir);

	cfg.capacity = 0;
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.capacity = 4;
	cfg.mode = VBTS_RING_STREAM; /* not in v1 */
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, EINVAL);
	cfg.mode = VBTS_RING_WRAP;
	cfg.capacity = UINT64_MAX / 8;
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_int_ne(stat(path, &st), 0); /* nothing left behind */

	cfg.capacity = 4;
	w = ring_writer__create(path, &cfg);
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(ring_writer__close(w), 0);
	ck_assert_int_eq(ring_writer__close(NULL), 0);

	snprintf(path, sizeof(path), "%s/no/such/dir.ring", dir);
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, ENOENT);
	ring_test_rmdir(dir);
}
END_TEST

/* Space that cannot be had shows up at creation, and nothing is left behind. */
START_TEST(test_no_space)
{
	struct ring_writer_config cfg = { .capacity = 1000, .mode = VBTS_RING_WRAP };
	struct rlimit old, small = { .rlim_cur = 8192, .rlim_max = RLIM_INFINITY };
	char dir[64], path[256];
	struct stat st;
	void (*old_handler)(int);

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small.rlim_max = old.rlim_max;
	old_handler = signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	ck_assert_ptr_null(ring_writer__create(path, &cfg));
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_handler);
	ck_assert_int_ne(stat(path, &st), 0);
	ring_test_rmdir(dir);
}
END_TEST

/*
 * The writer child appends @total records (forever when 0) and tells the parent, through a
 * pipe, when it has appended @announce of them.
 */
static pid_t spawn_writer(const char *path, uint64_t capacity, uint64_t announce, uint64_t total,
			  int *rfd)
{
	struct ring_writer_config cfg = { .capacity = capacity, .mode = VBTS_RING_WRAP };
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct ring_writer *w = ring_writer__create(path, &cfg);
		char c = 'x';

		close(fds[0]);
		if (!w)
			_exit(1);
		for (uint64_t s = 0; !total || s < total; s++) {
			struct vbts_record rec = ring_test_record(s);

			ring_writer__append(w, &rec);
			if (s + 1 == announce && write(fds[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0); /* without closing the ring, like a crash */
	}
	close(fds[1]);
	*rfd = fds[0];
	return pid;
}

START_TEST(test_survives_kill9)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX], c;
	struct ring_reader *r;
	uint64_t first = 0, n, committed;
	int status, rfd;
	pid_t pid;

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	pid = spawn_writer(path, 1024, 5000, 0, &rfd);
	ck_assert_int_eq(read(rfd, &c, 1), 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(rfd);

	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	committed = ring_reader__header(r)->committed;
	ck_assert_uint_ge(committed, 5000);
	ck_assert_uint_eq(ring_reader__header(r)->flags & VBTS_RING_F_CLOSED, 0);
	ck_assert_uint_ge(ring_reader__header(r)->lost, committed - 1024);
	/* Killed, not closed: the slot it may have been storing into is not trusted. */
	n = read_all_checked(r, &first);
	ck_assert_uint_eq(n, 1023);
	ck_assert_uint_eq(first, committed - 1023);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

#define LIVE_RECORDS 3000000ULL

/*
 * Ring capacities of the live test: a small ring, and one of several times the records the
 * reader reads before it drops their pages from its mapping (about 1 MiB), of a size that is
 * no whole number of pages: pages dropped and read again after the writer wrapped.
 */
static const uint64_t live_capacities[] = { 16, 200003 };

/*
 * Readers racing a live writer: never a torn or misplaced record. When the writer is done
 * (exited without closing), a read yields exactly capacity - 1 records.
 */
START_TEST(test_live_reader)
{
	char dir[64], path[256], err[RING_READER_ERR_MAX], c;
	uint64_t first, end, capacity = live_capacities[_i];
	struct ring_reader *r;
	int status, rfd;
	pid_t pid;

	ring_test_tmpdir(dir);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	pid = spawn_writer(path, capacity, capacity + 100, LIVE_RECORDS, &rfd);
	ck_assert_int_eq(read(rfd, &c, 1), 1);
	close(rfd);
	r = ring_reader__open(path, err, sizeof(err));
	ck_assert_msg(r, "%s", err);
	do {
		ck_assert_int_eq(ring_reader__begin(r), 0);
		ring_reader__window(r, &first, &end);
		ck_assert_uint_eq(end - first, capacity);
		read_all_checked(r, NULL);
	} while (waitpid(pid, &status, WNOHANG) == 0);
	/* Not its status: a memory checker may report the writer's unfreed ring there. */
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(ring_reader__begin(r), 0);
	ck_assert_uint_eq(read_all_checked(r, &first), capacity - 1);
	ck_assert_uint_eq(first, LIVE_RECORDS - (capacity - 1));
	/* A second pass over the same window, its pages dropped by the first. */
	ck_assert_int_eq(ring_reader__begin(r), 0);
	ck_assert_uint_eq(read_all_checked(r, &first), capacity - 1);
	ring_reader__close(r);
	ring_test_rmdir(dir);
}
END_TEST

Suite *ring_writer_suite(void)
{
	Suite *s = suite_create("ring-writer");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_escape_kinds);
	tcase_add_test(tc, test_wrap_and_loss);
	tcase_add_test(tc, test_resize);
	tcase_add_test(tc, test_freeze);
	tcase_add_test(tc, test_bad_config);
	tcase_add_test(tc, test_no_space);
	tcase_add_test(tc, test_survives_kill9);
	tcase_add_loop_test(tc, test_live_reader, 0,
			    (int)(sizeof(live_capacities) / sizeof(live_capacities[0])));
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(ring_writer_suite, ring_reader_suite, segments_suite)
