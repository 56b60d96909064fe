// SPDX-License-Identifier: GPL-2.0
/*
 * work.c - bench-work, the workloads of the Linux benchmarks that take every way back to user
 * mode (static): each prints "bench-work: MODE N in S s" timed with CLOCK_MONOTONIC inside the
 * guest.
 *
 *   bench-work syscall N    N getppid(2) calls
 *   bench-work fork N       N times: fork, the child execs "bench-work nop", wait
 *   bench-work pipe N       N times a pipeline of two execs of bench-work: "put" writes a line
 *                           into the pipe, "get" reads it, both waited for
 *   bench-work signal N     N signals sent to itself, each handled
 *   bench-work threads N    4 threads, each making N/4 getppid(2) calls and a loop
 *   bench-work nop|put|get  the pipeline's and the exec's programs
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_THREADS 4

static const char *self = "/bin/bench-work";
static volatile sig_atomic_t handled;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(const char *mode, int in, int out)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("bench-work: fork");
		exit(1);
	}
	if (!pid) {
		if (in >= 0)
			dup2(in, 0);
		if (out >= 0)
			dup2(out, 1);
		execl(self, "bench-work", mode, (char *)NULL);
		_exit(127);
	}
}

static void wait_all(void)
{
	int status;

	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			exit(1);
}

static void on_signal(int sig)
{
	handled += sig;
}

static void *thread_main(void *arg)
{
	unsigned long n = (unsigned long)arg, x = n;

	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + getppid();
		for (int k = 0; k < 8; k++)
			x ^= x >> 7;
	}
	return (void *)x;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
	pthread_t threads[NR_THREADS];
	char line[16];
	int fds[2];
	double t0;

	if (!strcmp(mode, "nop"))
		return 0;
	if (!strcmp(mode, "put"))
		return write(1, "x\n", 2) == 2 ? 0 : 1;
	if (!strcmp(mode, "get"))
		return read(0, line, sizeof(line)) > 0 ? 0 : 1;

	printf("bench-work: start %s %lu\n", mode, n);
	fflush(stdout);
	t0 = now();
	if (!strcmp(mode, "syscall")) {
		for (unsigned long i = 0; i < n; i++)
			getppid();
	} else if (!strcmp(mode, "fork")) {
		for (unsigned long i = 0; i < n; i++) {
			run("nop", -1, -1);
			wait_all();
		}
	} else if (!strcmp(mode, "pipe")) {
		for (unsigned long i = 0; i < n; i++) {
			if (pipe(fds)) {
				perror("bench-work: pipe");
				return 1;
			}
			run("put", -1, fds[1]);
			run("get", fds[0], -1);
			close(fds[0]);
			close(fds[1]);
			wait_all();
		}
	} else if (!strcmp(mode, "signal")) {
		signal(SIGUSR1, on_signal);
		for (unsigned long i = 0; i < n; i++)
			raise(SIGUSR1);
	} else if (!strcmp(mode, "threads")) {
		for (int t = 0; t < NR_THREADS; t++)
			if (pthread_create(&threads[t], NULL, thread_main,
					   (void *)(n / NR_THREADS))) {
				fprintf(stderr, "bench-work: pthread_create failed\n");
				return 1;
			}
		for (int t = 0; t < NR_THREADS; t++)
			pthread_join(threads[t], NULL);
	} else {
		fprintf(stderr, "usage: bench-work syscall|fork|pipe|signal|threads N\n");
		return 2;
	}
	printf("bench-work: %s %lu in %.6f s\n", mode, n, now() - t0);
	return 0;
}
