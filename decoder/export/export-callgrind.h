/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-callgrind.h - `vbts decode --format callgrind`: the functions of a trace with the
 * branches made in each and the calls between them, in the Callgrind profile format that
 * callgrind_annotate and KCachegrind read (valgrind's docs/callgrind-format):
 *
 *   # callgrind format
 *   version: 1
 *   creator: vbts decode
 *   positions: instr
 *   events: Branches
 *
 *   fl=(1) symtest.S
 *   fn=(1) main
 *   0x0 4                  branches made in main (self cost), at main's address
 *   cfn=(2) parse
 *   calls=2 0x40           main called parse twice (parse is at 0x40) ...
 *   0x13 5                 ... from 0x13 first; 5 branches were made inside those calls
 *   totals: 12
 *
 * The calls are those of the call stacks of flow.h: a function that replaces another under
 * the same caller (a tail call) counts as called by it; calls still open at the end of the
 * trace end there. Names ("[unknown]" for code no symbol covers) and files ("???" without a
 * line table) are escaped for a terminal, and given a number the first time ("(n) name")
 * and the number alone after. Functions come in the order met.
 *
 * Memory: one entry per distinct function and per distinct (caller, callee) pair.
 */
#ifndef VBTS_DECODER_EXPORT_CALLGRIND_H
#define VBTS_DECODER_EXPORT_CALLGRIND_H

#include "export-format.h"

extern const struct export_format_ops callgrind_format;

#endif /* VBTS_DECODER_EXPORT_CALLGRIND_H */
