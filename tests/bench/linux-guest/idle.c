// SPDX-License-Identifier: GPL-2.0
/*
 * idle.c - bench-idle, the mostly sleeping process of the Linux benchmarks (static): it wakes
 * every 10 ms and sleeps again until it is killed, so that a tracer following it alone is
 * switched in and out while another program runs.
 */
#include <time.h>

int main(void)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

	for (;;)
		nanosleep(&tick, NULL);
}
