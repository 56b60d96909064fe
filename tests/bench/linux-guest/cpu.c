// SPDX-License-Identifier: GPL-2.0
/*
 * cpu.c - bench-cpu, the CPU-bound program of the Linux benchmarks (static): "bench-cpu: start N"
 * when it starts, N rounds of an integer hash timed with CLOCK_MONOTONIC inside the guest,
 * then "bench-cpu: N iterations in S s (checksum C)" (the host may time the two lines, too).
 *
 *   bench-cpu N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long x = 88172645463325252UL;
	double t0, t1;

	printf("bench-cpu: start %lu\n", n);
	fflush(stdout);
	t0 = now();
	for (unsigned long i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	t1 = now();
	printf("bench-cpu: %lu iterations in %.6f s (checksum %lx)\n", n, t1 - t0, x);
	return 0;
}
