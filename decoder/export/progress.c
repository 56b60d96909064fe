// SPDX-License-Identifier: GPL-2.0
/*
 * progress.c - the progress line of long decodes on a terminal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

/* Back to the start of the line, and erase to its end (ECMA-48 EL). */
#define LINE_START "\r"
#define ERASE_TO_END "\033[K"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* All of @len bytes, or as many as the terminal takes (a progress line is never an error). */
static void write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

void progress__init(struct progress *p, int fd, const char *what, const char *unit,
		    uint64_t total, bool quiet, unsigned int delay_ms)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->next = UINT64_MAX;
	if (quiet || !isatty(fd))
		return;
	p->start_ns = now_ns();
	p->delay_ns = (uint64_t)delay_ms * 1000000;
	p->next = 0;
}

void progress__show(struct progress *p, uint64_t count)
{
	uint64_t now = now_ns();
	char line[256];
	int n;

	p->next = count + PROGRESS_STEP;
	if (now - p->start_ns < p->delay_ns ||
	    (p->shown && now - p->last_ns < PROGRESS_INTERVAL_MS * 1000000ULL))
		return;
	if (p->total) {
		/* The count may pass the total (items the records make): 99% until the end. */
		uint64_t hundredth = p->total / 100 ? p->total / 100 : 1;
		uint64_t pct = count / hundredth > 99 ? 99 : count / hundredth;

		n = snprintf(line, sizeof(line),
			     LINE_START "%s: %" PRIu64 "%% (%" PRIu64 " of %" PRIu64 " %s)"
			     ERASE_TO_END, p->what, pct, count, p->total, p->unit);
	} else {
		n = snprintf(line, sizeof(line), LINE_START "%s: %" PRIu64 " %s" ERASE_TO_END,
			     p->what, count, p->unit);
	}
	if (n > 0)
		write_all(p->fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	p->shown = true;
	p->last_ns = now;
}

void progress__end(struct progress *p)
{
	if (!p->shown)
		return;
	write_all(p->fd, LINE_START ERASE_TO_END, strlen(LINE_START ERASE_TO_END));
	p->shown = false;
}
