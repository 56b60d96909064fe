/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decoder-int.h - internals of the decoder that tests use: its plain reference path.
 */
#ifndef VBTS_DECODER_DECODER_INT_H
#define VBTS_DECODER_DECODER_INT_H

#include <stdbool.h>

#include "decoder.h"

/**
 * decoder__use_reference() - decode every record through the general path (parse, queue,
 * dequeue) instead of writing branch items where they go: the reference the fast path is
 * compared with.
 * @d:         decoder, before its first decoder__next()
 * @reference: true for the reference path
 */
void decoder__use_reference(struct decoder *d, bool reference);

#endif /* VBTS_DECODER_DECODER_INT_H */
