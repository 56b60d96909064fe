/* SPDX-License-Identifier: GPL-2.0 */
/*
 * log.h - printf-checked diagnostics of the VMM: one line each, to stderr.
 *
 * Nothing on a path the guest controls may call these per event: count instead.
 */
#ifndef VBTS_VMM_LOG_H
#define VBTS_VMM_LOG_H

#include <stdbool.h>
#include <stdio.h>

/* Set once by main() before any thread starts; read-only afterwards. */
extern bool log__debug;

#define pr_err(fmt, ...) fprintf(stderr, "vbts: " fmt "\n", ##__VA_ARGS__)
#define pr_warn(fmt, ...) fprintf(stderr, "vbts: warning: " fmt "\n", ##__VA_ARGS__)
#define pr_info(fmt, ...) fprintf(stderr, "vbts: " fmt "\n", ##__VA_ARGS__)
#define pr_debug(fmt, ...)                                                            \
	do {                                                                          \
		if (log__debug)                                                       \
			fprintf(stderr, "vbts: debug: " fmt "\n", ##__VA_ARGS__);     \
	} while (0)

#endif /* VBTS_VMM_LOG_H */
