/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procmap-int.h - internals of the process map that tests need: a count of the work its
 * queries do, the plain reference paths the indexed ones are compared with, and exit events
 * without a file.
 */
#ifndef VBTS_DECODER_PROCMAP_INT_H
#define VBTS_DECODER_PROCMAP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "procmap.h"

/**
 * procmap__count_probes() - count the work of the map's queries.
 * @pm:     map
 * @probes: incremented by one for every task entry (or index slot) a lookup or the matching
 *          of exits to tasks examines; NULL stops counting
 */
void procmap__count_probes(struct procmap *pm, uint64_t *probes);

/**
 * procmap__use_reference() - answer queries by the plain linear paths instead of the index.
 * @pm:        map
 * @reference: true for the reference paths (linear in the number of tasks per query and per
 *             exit event), false for the indexed ones (the default)
 *
 * Both give the same answers; tests compare them on the same input.
 */
void procmap__use_reference(struct procmap *pm, bool reference);

/**
 * procmap__add_exit() - add one exit event.
 * @pm:   map
 * @pid:  pid of the task that exited
 * @code: its exit code
 * @time: time of the event
 *
 * Return: 0 or -ENOMEM.
 */
int procmap__add_exit(struct procmap *pm, int64_t pid, int64_t code, uint64_t time);

#endif /* VBTS_DECODER_PROCMAP_INT_H */
