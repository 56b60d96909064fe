// SPDX-License-Identifier: GPL-2.0
/*
 * log.c - the state of the pr_*() logging of log.h.
 */
#include "log.h"

/* pr_debug() prints: set once by the command line (--debug) before any thread starts. */
bool log__debug;
