/* SPDX-License-Identifier: GPL-2.0 */
/*
 * progress.h - a progress line on a terminal for long decodes and exports: after a delay
 * (about a second, so that short runs show nothing), "vbts decode: 45% (5400000 of 12000000
 * records)" is written to stderr and rewritten in place a few times a second, then erased when
 * the work ends, before anything else is said there. Only when the descriptor is a terminal
 * and not --quiet: a log file or a pipe never gets it.
 *
 * The caller counts its work and calls progress__update() with the count as often as it
 * likes: one comparison, the clock read every PROGRESS_STEP items.
 */
#ifndef VBTS_DECODER_PROGRESS_H
#define VBTS_DECODER_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* Items between two reads of the clock. */
#define PROGRESS_STEP 65536
/* Time before the first line, and between two lines, in ms. */
#define PROGRESS_DELAY_MS 1000
#define PROGRESS_INTERVAL_MS 250

/**
 * struct progress - the state of a progress line.
 * @next:     the count at which progress__update() looks at the clock (UINT64_MAX: never)
 * @fd:       where the line goes
 * @what:     the line's prefix ("vbts decode")
 * @unit:     what is counted ("records")
 * @total:    the count at the end, 0 when unknown
 * @start_ns, @delay_ns, @last_ns: CLOCK_MONOTONIC at the start, the delay, the last line
 * @shown:    a line is on the terminal
 */
struct progress {
	uint64_t next;
	int fd;
	const char *what, *unit;
	uint64_t total;
	uint64_t start_ns, delay_ns, last_ns;
	bool shown;
};

/**
 * progress__init() - start counting.
 * @p:        the state
 * @fd:       the descriptor of the line (2); nothing is ever written unless it is a terminal
 * @what:     prefix of the line (not copied)
 * @unit:     what is counted (not copied)
 * @total:    the count at the end, 0 when unknown
 * @quiet:    never show anything
 * @delay_ms: nothing before this much time has passed (PROGRESS_DELAY_MS)
 */
void progress__init(struct progress *p, int fd, const char *what, const char *unit,
		    uint64_t total, bool quiet, unsigned int delay_ms);

/* The slow half of progress__update(). */
void progress__show(struct progress *p, uint64_t count);

/**
 * progress__update() - the work done so far.
 * @p:     the state
 * @count: items done
 */
static inline void progress__update(struct progress *p, uint64_t count)
{
	if (__builtin_expect(count >= p->next, 0))
		progress__show(p, count);
}

/**
 * progress__end() - erase the line, if one is shown; call before writing anything else to the
 * terminal, and at the end. The line may come back with the next progress__update().
 * @p: the state
 */
void progress__end(struct progress *p);

#endif /* VBTS_DECODER_PROGRESS_H */
