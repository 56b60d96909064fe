// SPDX-License-Identifier: GPL-2.0
/*
 * seal-bench.c - what sealing costs the collector: the same records written in stream mode
 * with and without a sealer on the trace directory, and a large sealed trace for the verify
 * rate (tests/bench/seal).
 *
 *   seal-bench stream DIR KEY [MILLION_RECORDS]
 *       (default 50) RUNS pairs, unsealed and sealed (which goes first alternates), of: one
 *       vCPU's writer in stream mode (segments of 65536 records, its collector thread
 *       compressing and writing them, and telling the sealer of each) appending the
 *       records without pause, closed, and for the sealed run the sealer (sealer__start()
 *       before, sealer__finish() after: every segment hashed, checkpoints signed as in `vbts
 *       run --seal`). Prints each median's records per second end to end (the rate the
 *       collector sustains), the process's CPU time per record, and the ratios sealed over
 *       unsealed.
 *   seal-bench make DIR KEY MILLION_RECORDS
 *       a sealed stream-mode trace of that many records of varied addresses (segments of
 *       65536 records that zstd cannot shrink much: the verifier has bytes to hash); prints
 *       "records N bytes B".
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ring-writer.h"
#include "sealer.h"
#include "seg-writer.h"

#define SEGMENT 65536
#define BATCH 64
#define RUNS 7
#define SRC (1 << 20) /* distinct records, appended over and over */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Records: a loop of branches as a traced guest makes them, or (@varied) scattered ones. */
static void gen(struct vbts_record *r, size_t n, bool varied)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (size_t i = 0; i < n; i++) {
		uint64_t base = 0x401000 + (i % 7) * 0x30;

		if (varied) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			base = 0x400000 + (x & 0xffffff);
		}
		r[i].from = base + 0x12;
		r[i].to = (i % 101) ? base + 0x30 : 0x402000 + (i % 13) * 0x10;
		r[i].flags =
			VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
			((uint64_t)(i % 101 ? VBTS_BR_JCC : VBTS_BR_CALL) << VBTS_REC_KIND_SHIFT);
	}
}

static void rm_tree(const char *dir)
{
	struct dirent *de;
	char p[8192];
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			if (unlink(p) < 0 && errno == EISDIR)
				rm_tree(p);
		}
	closedir(d);
	rmdir(dir);
}

/* Write @n records, @src's @nsrc (a multiple of BATCH) over and over, into the new trace
 * directory @dir, sealed with @key when given; *@seal_cpu receives the CPU time sealing took
 * (the sealer thread's and its last checkpoint's). */
static int write_trace(const char *dir, const char *key, const struct vbts_record *src, size_t nsrc,
		       size_t n, uint64_t *seal_cpu)
{
	struct seg_budget budget = { .limit = 1ULL << 40 };
	struct seg_writer_config sc = {
		.dir = dir,
		.segment_records = SEGMENT,
		.budget = &budget,
		.on_full = SEG_ON_FULL_DROP,
		.start_time_ns = clock_ns(CLOCK_REALTIME),
	};
	struct sealer *s = NULL;
	struct ring_writer *w;
	char err[512];

	if (mkdir(dir, 0755) < 0) {
		fprintf(stderr, "seal-bench: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (key) {
		s = sealer__start(dir, key, 0, err, sizeof(err));
		if (!s) {
			fprintf(stderr, "seal-bench: %s\n", err);
			return -1;
		}
	}
	w = ring_writer__create_stream(&sc);
	if (!w) {
		fprintf(stderr, "seal-bench: %s: %s\n", dir, strerror(errno));
		sealer__abort(s);
		return -1;
	}
	if (s) /* as vbts run wires it */
		seg_writer__set_on_closed(ring_writer__stream(w), sealer__segment_closed, s);
	for (size_t i = 0; i < n; i += BATCH) {
		size_t k = i % nsrc;

		ring_writer__append_n(w, &src[k], n - i < BATCH ? n - i : BATCH);
	}
	ring_writer__close(w);
	if (s) {
		uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		*seal_cpu = sealer__cpu_ns(s);
		if (sealer__finish(s) < 0)
			return -1;
		*seal_cpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *t)
{
	qsort(t, RUNS, sizeof(*t), cmp_u64);
	return t[RUNS / 2];
}

static int stream(const char *dir, const char *key, size_t n)
{
	uint64_t wall[2][RUNS], cpu[2][RUNS], m_wall[2], m_cpu[2], seal_cpu[RUNS] = { 0 }, m_seal;
	struct vbts_record *src = malloc(SRC * sizeof(*src));
	char sub[4096];

	if (!src) {
		fprintf(stderr, "seal-bench: out of memory\n");
		return 1;
	}
	gen(src, SRC, false);
	for (int run = 0; run < RUNS; run++) {
		for (int k = 0; k < 2; k++) {
			/* Which goes first alternates: a drift of the host's load falls on both. */
			int sealed = k ^ (run & 1);
			uint64_t t0, c0;

			snprintf(sub, sizeof(sub), "%s/%s-%d", dir, sealed ? "sealed" : "plain",
				 run);
			c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
			t0 = clock_ns(CLOCK_MONOTONIC);
			if (write_trace(sub, sealed ? key : NULL, src, SRC, n, &seal_cpu[run]) < 0)
				return 1;
			wall[sealed][run] = clock_ns(CLOCK_MONOTONIC) - t0;
			cpu[sealed][run] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
		}
	}
	/* Removed at the end: files made where many were just removed cost ext4 more. */
	for (int run = 0; run < RUNS; run++)
		for (int sealed = 0; sealed < 2; sealed++) {
			snprintf(sub, sizeof(sub), "%s/%s-%d", dir, sealed ? "sealed" : "plain",
				 run);
			rm_tree(sub);
		}
	for (int sealed = 0; sealed < 2; sealed++) {
		m_wall[sealed] = median(wall[sealed]);
		m_cpu[sealed] = median(cpu[sealed]);
		printf("seal: stream, %-8s %zu records: %7.2f M records/s end to end, "
		       "%6.2f ns CPU per record (median of %d)\n",
		       sealed ? "sealed" : "unsealed", n, n * 1e3 / m_wall[sealed],
		       (double)m_cpu[sealed] / n, RUNS);
	}
	m_seal = median(seal_cpu);
	printf("seal: stream throughput sealed over unsealed: %.3f (goal >= 0.95); "
	       "CPU time sealed over unsealed: %.3f\n",
	       (double)m_wall[0] / m_wall[1], (double)m_cpu[1] / m_cpu[0]);
	/*
	 * The wall-time ratio shows what the host's other load does as much as what sealing
	 * costs. The sealer's own CPU time does not: with no CPU to spare, a collector loses
	 * that share of its throughput to it, and with a CPU to spare nothing.
	 */
	printf("seal: sealing's own CPU: %.2f ns per record, %.1f %% of the unsealed run's CPU: "
	       "throughput with no CPU to spare at least %.3f of unsealed (goal >= 0.95)\n",
	       (double)m_seal / n, 100.0 * m_seal / m_cpu[0],
	       (double)m_cpu[0] / (m_cpu[0] + m_seal));
	free(src);
	return 0;
}

static int make(const char *dir, const char *key, size_t n)
{
	struct vbts_record *src = malloc(SRC * sizeof(*src));
	uint64_t bytes = 0, seal_cpu;
	struct dirent *de;
	DIR *d;

	if (!src) {
		fprintf(stderr, "seal-bench: out of memory\n");
		return 1;
	}
	gen(src, SRC, true);
	if (write_trace(dir, key, src, SRC, n, &seal_cpu) < 0)
		return 1;
	free(src);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char p[8192];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (strcmp(de->d_name, "seal.log") && !stat(p, &st) && S_ISREG(st.st_mode))
			bytes += st.st_size;
	}
	if (d)
		closedir(d);
	printf("records %zu bytes %" PRIu64 "\n", n, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n;

	if (argc >= 4 && !strcmp(argv[1], "stream")) {
		n = (argc > 4 ? strtoull(argv[4], NULL, 10) : 50) * 1000000;
		return n ? stream(argv[2], argv[3], n) : 2;
	}
	if (argc == 5 && !strcmp(argv[1], "make")) {
		n = strtoull(argv[4], NULL, 10) * 1000000;
		return n ? make(argv[2], argv[3], n) : 2;
	}
	fprintf(stderr, "usage: seal-bench stream DIR KEY [MILLION_RECORDS]\n"
			"       seal-bench make DIR KEY MILLION_RECORDS\n");
	return 2;
}
