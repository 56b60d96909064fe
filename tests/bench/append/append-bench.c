// SPDX-License-Identifier: GPL-2.0
/*
 * append-bench.c - the collector's append cost against memcpy of the same bytes, and the
 * stream codec's bytes per record on real traces.
 *
 *   append-bench speed DIR [MILLION_RECORDS]
 *       ns per record of: memcpy of the records into a ring-sized buffer (the baseline), the
 *       v1 ring append (a divide and header stores per record, kept here as the reference),
 *       ring_writer__append(), ring_writer__append_n() in batches of 64, and stream mode
 *       (segments of 65536 records): what the traced vCPU pays, the appending thread's time
 *       while the collector keeps up (two segments at a time, then an untimed
 *       seg_writer__sync()); then, appending without pause, the appending thread's CPU time,
 *       the CPU time its collector thread spends (zstd and the segment files), and the
 *       end-to-end time with the writer's close (every segment compressed: the rate the
 *       collector sustains); each the median of 5 runs.
 *   append-bench size TRACE_DIR|RING_FILE...
 *       the records of wrap-mode rings (or of a trace directory's vcpuN.ring) through the
 *       stream codec in segments of 65536 records: bytes per record and per branch.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring-reader.h"
#include "ring-writer.h"
#include "seg-codec.h"
#include "seg-writer.h"

#define RING 65536
#define BATCH 64
#define RUNS 5

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A loop of branches, as a traced guest makes them. */
static void gen(struct vbts_record *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t base = 0x401000 + (i % 7) * 0x30;

		r[i].from = base + 0x12;
		r[i].to = (i % 101) ? base + 0x30 : 0x402000 + (i % 13) * 0x10;
		r[i].flags = VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
			     ((uint64_t)(i % 101 ? VBTS_BR_JCC : VBTS_BR_CALL) << VBTS_REC_KIND_SHIFT);
	}
}

/* The v1 append: a divide and a store of lost and committed for every record. */
struct v1_ring {
	struct vbts_ring_header *hdr;
	struct vbts_record *slots;
	uint64_t capacity, seq, lost;
};

static __attribute__((noinline)) void v1_append(struct v1_ring *w, const struct vbts_record *rec)
{
	w->slots[w->seq % w->capacity] = *rec;
	if (w->seq >= w->capacity) {
		w->lost++;
		__atomic_store_n(&w->hdr->lost, w->lost, __ATOMIC_RELAXED);
	}
	w->seq++;
	__atomic_store_n(&w->hdr->committed, w->seq, __ATOMIC_RELEASE);
}

/* CPU time of the whole process (every thread) in ns. */
static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ns_per_rec(uint64_t *t, size_t n)
{
	qsort(t, RUNS, sizeof(*t), cmp_u64);
	return (double)t[RUNS / 2] / (double)n;
}

static void rm_dir(const char *dir)
{
	struct dirent *de;
	char p[8192];
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
	closedir(d);
	rmdir(dir);
}

static int speed(const char *dir, size_t n)
{
	struct vbts_record *src = malloc(n * sizeof(*src));
	struct vbts_record *buf = malloc(RING * sizeof(*buf));
	struct ring_writer_config rc = { .capacity = RING, .mode = VBTS_RING_WRAP };
	uint64_t t_memcpy[RUNS], t_v1[RUNS], t_one[RUNS], t_n[RUNS], t_stream[RUNS], t0;
	uint64_t t_vcpu[RUNS], t_vcpu_cpu[RUNS], t_coll[RUNS], t_burst[RUNS];
	char path[4096], sdir[4096];
	double m, v1, one, bn, st, vc, vcc, co, bu;

	if (!src || !buf)
		return 1;
	gen(src, n);
	for (int run = 0; run < RUNS; run++) {
		struct ring_writer *w;
		struct v1_ring v = { 0 };
		size_t slot = 0;

		/* memcpy of the same bytes, batch by batch into a ring-sized buffer */
		t0 = now_ns();
		for (size_t i = 0; i < n; i += BATCH) {
			size_t k = n - i < BATCH ? n - i : BATCH;

			if (slot + k > RING)
				slot = 0;
			memcpy(&buf[slot], &src[i], k * sizeof(*src));
			slot += k;
			__asm__ volatile("" : : "r"(buf) : "memory");
		}
		t_memcpy[run] = now_ns() - t0;

		snprintf(path, sizeof(path), "%s/v1-%d.ring", dir, run);
		w = ring_writer__create(path, &rc);
		if (!w) {
			fprintf(stderr, "append-bench: %s: %s\n", path, strerror(errno));
			return 1;
		}
		/* the v1 append writes into a ring of the same shape (the same file's mapping) */
		v.hdr = malloc(sizeof(*v.hdr));
		v.slots = buf;
		v.capacity = RING;
		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			v1_append(&v, &src[i]);
		t_v1[run] = now_ns() - t0;
		free(v.hdr);

		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			ring_writer__append(w, &src[i]);
		t_one[run] = now_ns() - t0;
		t0 = now_ns();
		for (size_t i = 0; i < n; i += BATCH)
			ring_writer__append_n(w, &src[i], n - i < BATCH ? n - i : BATCH);
		t_n[run] = now_ns() - t0;
		ring_writer__close(w);
		unlink(path);

		snprintf(sdir, sizeof(sdir), "%s/stream-%d", dir, run);
		if (mkdir(sdir, 0755) < 0) {
			fprintf(stderr, "append-bench: %s: %s\n", sdir, strerror(errno));
			return 1;
		}
		{
			struct seg_budget budget = { .limit = 1ULL << 40 };
			struct seg_writer_config sc = {
				.dir = sdir, .segment_records = RING, .budget = &budget,
				.on_full = SEG_ON_FULL_DROP,
			};
			uint64_t p0, th0;

			w = ring_writer__create_stream(&sc);
			if (!w) {
				fprintf(stderr, "append-bench: %s: %s\n", sdir, strerror(errno));
				return 1;
			}

			/* the collector keeping up: two segments, then it catches up untimed */
			t_burst[run] = 0;
			for (size_t i = 0; i < n; i += 2 * RING) {
				size_t end = n - i < 2 * RING ? n : i + 2 * RING;

				t0 = now_ns();
				for (size_t j = i; j < end; j += BATCH)
					ring_writer__append_n(w, &src[j],
							      end - j < BATCH ? end - j : BATCH);
				t_burst[run] += now_ns() - t0;
				seg_writer__sync(ring_writer__stream(w));
			}
			ring_writer__close(w);
			rm_dir(sdir);
			if (mkdir(sdir, 0755) < 0 || !(w = ring_writer__create_stream(&sc))) {
				fprintf(stderr, "append-bench: %s: %s\n", sdir, strerror(errno));
				return 1;
			}
			p0 = process_cpu_ns();
			th0 = thread_cpu_ns();
			t0 = now_ns();
			for (size_t i = 0; i < n; i += BATCH)
				ring_writer__append_n(w, &src[i], n - i < BATCH ? n - i : BATCH);
			t_vcpu[run] = now_ns() - t0;
			t_vcpu_cpu[run] = thread_cpu_ns() - th0;
			ring_writer__close(w);
			t_stream[run] = now_ns() - t0;
			/* the collector's: the process's CPU time but this thread's */
			t_coll[run] = (process_cpu_ns() - p0) - (thread_cpu_ns() - th0);
		}
		rm_dir(sdir);
	}
	m = median_ns_per_rec(t_memcpy, n);
	v1 = median_ns_per_rec(t_v1, n);
	one = median_ns_per_rec(t_one, n);
	bn = median_ns_per_rec(t_n, n);
	st = median_ns_per_rec(t_stream, n);
	vc = median_ns_per_rec(t_vcpu, n);
	co = median_ns_per_rec(t_coll, n);
	vcc = median_ns_per_rec(t_vcpu_cpu, n);
	bu = median_ns_per_rec(t_burst, n);
	printf("append: %zu records of 24 bytes, ring of %d, median of %d runs, one core\n", n,
	       RING, RUNS);
	printf("append: memcpy (baseline)          %6.2f ns/record  %7.1f M records/s\n", m,
	       1e3 / m);
	printf("append: v1 append (divide, stores) %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       v1, 1e3 / v1, m / v1);
	printf("append: ring_writer__append()      %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       one, 1e3 / one, m / one);
	printf("append: ring_writer__append_n(%d)  %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       BATCH, bn, 1e3 / bn, m / bn);
	printf("append: stream, vCPU (collector keeps up) %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       bu, 1e3 / bu, m / bu);
	printf("append: stream, vCPU, no pause, wall      %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       vc, 1e3 / vc, m / vc);
	printf("append: stream, vCPU, no pause, CPU       %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       vcc, 1e3 / vcc, m / vcc);
	printf("append: stream, collector CPU              %6.2f ns/record (zstd and files, its own thread)\n", co);
	printf("append: stream, end to end (close)         %6.2f ns/record  %7.1f M records/s  %.2fx memcpy\n",
	       st, 1e3 / st, m / st);
	free(src);
	free(buf);
	return 0;
}

/* Compresses @n records as segments of RING: adds to the byte and branch counts. */
static int account(const struct vbts_record *r, size_t n, uint64_t *bytes, uint64_t *branches)
{
	for (size_t i = 0; i < n; i += RING - 1) {
		size_t k = n - i < RING - 1 ? n - i : RING - 1;
		void *frame;
		size_t len;

		if (seg_codec__compress(&r[i], k, 1, &frame, &len))
			return -1;
		free(frame);
		*bytes += VBTS_SEG_HEADER_SIZE + len;
	}
	for (size_t i = 0; i < n; i++)
		*branches += r[i].from != VBTS_ESCAPE;
	return 0;
}

static int size_of(const char *path, uint64_t *recs, uint64_t *bytes, uint64_t *branches)
{
	char err[RING_READER_ERR_MAX];
	struct ring_reader *r = ring_reader__open(path, err, sizeof(err));
	struct vbts_record *all = NULL;
	size_t n = 0, cap = 0;
	uint64_t first;
	ssize_t k;

	if (!r) {
		fprintf(stderr, "append-bench: %s\n", err);
		return -1;
	}
	for (;;) {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			all = realloc(all, cap * sizeof(*all));
			if (!all)
				return -1;
		}
		k = ring_reader__read(r, all + n, 4096, &first);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	ring_reader__close(r);
	*recs += n;
	k = account(all, n, bytes, branches);
	free(all);
	return (int)k;
}

static int sizes(int argc, char **argv)
{
	uint64_t recs = 0, bytes = 0, branches = 0;
	char p[4096];
	struct stat st;

	for (int i = 0; i < argc; i++) {
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			for (unsigned int v = 0;; v++) {
				snprintf(p, sizeof(p), "%s/vcpu%u.ring", argv[i], v);
				if (access(p, R_OK))
					break;
				if (size_of(p, &recs, &bytes, &branches))
					return 1;
			}
		} else if (size_of(argv[i], &recs, &bytes, &branches)) {
			return 1;
		}
	}
	printf("size: %" PRIu64 " records (%" PRIu64 " branches) in %" PRIu64
	       " stream bytes: %.2f bytes per branch (raw 24, %.1fx smaller)\n",
	       recs, branches, bytes, branches ? (double)bytes / (double)branches : 0.0,
	       bytes ? 24.0 * (double)recs / (double)bytes : 0.0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "speed"))
		return speed(argv[2], argc > 3 ? strtoul(argv[3], NULL, 0) * 1000000UL : 20000000UL);
	if (argc >= 3 && !strcmp(argv[1], "size"))
		return sizes(argc - 2, argv + 2);
	fprintf(stderr, "usage: append-bench speed DIR [MILLION_RECORDS]\n"
			"       append-bench size TRACE_DIR|RING_FILE...\n");
	return 2;
}
