// SPDX-License-Identifier: GPL-2.0
/*
 * ring-writer.c - writing side of vbts ring files (placeholder).
 */
#include "ring-writer.h"
