/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-lcov.h - `vbts decode --format lcov`: the source lines a trace executed and the
 * conditional branches it took, as an lcov tracefile (geninfo(1)'s format, which genhtml
 * renders):
 *
 *   TN:
 *   SF:symtest.S
 *   FN:20,parse
 *   FNDA:1,parse                  calls: branches to the function's first byte
 *   FNF:1
 *   FNH:1
 *   BRDA:20,0,0,1                 a conditional branch of line 20 taken once
 *   BRF:1
 *   BRH:1
 *   DA:20,3                       line 20 ran 3 times
 *   LF:1
 *   LH:1
 *   end_of_record
 *
 * Execution is known between branches: each branch record ends a run of straight-line code
 * from the target of the one before it (of the same task and vCPU, flow.h) up to its own
 * source. Every byte of a run is looked up in the DWARF line tables, and each line met counts
 * one execution per run (consecutive bytes of one line count once). A run longer than
 * LCOV_RUN_MAX bytes (the records do not fit together: a loss, a forged trace) counts only
 * the branch's own line. BTS records taken branches only: BRDA lines give the taken count of
 * each conditional branch (jcc, loop, jrcxz) seen taken; the not-taken side is not known.
 * SF names are the base names the line tables give (genhtml renders them with --no-source
 * unless the sources are there), escaped for a terminal as function names are.
 *
 * Memory: one entry per distinct line, function and conditional branch source.
 */
#ifndef VBTS_DECODER_EXPORT_LCOV_H
#define VBTS_DECODER_EXPORT_LCOV_H

#include "export-format.h"

/* Bytes of a run looked up at most. */
#define LCOV_RUN_MAX 4096

extern const struct export_format_ops lcov_format;

#endif /* VBTS_DECODER_EXPORT_LCOV_H */
