/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols-int.h - internals of the symbol tables that tests need: a count of the work that
 * loading and lookups do.
 */
#ifndef VBTS_DECODER_SYMBOLS_INT_H
#define VBTS_DECODER_SYMBOLS_INT_H

#include <stdint.h>

#include "symbols.h"

/**
 * symbols__count_probes() - count the work of the table's lookups.
 * @s:      table
 * @probes: incremented by one for every symbol entry a lookup examines; NULL stops counting
 */
void symbols__count_probes(struct symbols *s, uint64_t *probes);

/**
 * symbols__load_probes() - the work of naming the PLT entries and giving each symbol its
 * extent when the table was loaded: PLT entries, relocations and symbol entries examined,
 * sorting not included.
 * @s: table
 *
 * Return: the count.
 */
uint64_t symbols__load_probes(const struct symbols *s);

#endif /* VBTS_DECODER_SYMBOLS_INT_H */
