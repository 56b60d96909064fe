/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-folded.h - `vbts decode --format folded`: folded stacks for flame graphs, the input
 * of Brendan Gregg's flamegraph.pl (and of the viewers that read its collapsed format):
 *
 *   ping[1];main;parse;deref 2
 *
 * One line per distinct call stack that made branches: the task ("name[pid]", "cr3:0x..."
 * for a CR3 no task had, "[no task]"; for a thread the trace named, "name[pid]" with the
 * thread's pid, "[pid]" of no known task), then the functions from the outermost (flow.h), ';'
 * between them, a space and the number of branch records made with that stack innermost
 * (the weight: a branch is where the trace sees execution). Names are escaped for a
 * terminal and ';' is written "\x3b", so that a name is one frame. Lines come in the order
 * the stacks were first met.
 *
 * Memory: one node per distinct (stack, function) pair met: a call tree, bounded by the
 * trace's distinct call paths of at most FLOW_DEPTH_MAX frames.
 */
#ifndef VBTS_DECODER_EXPORT_FOLDED_H
#define VBTS_DECODER_EXPORT_FOLDED_H

#include "export-format.h"

extern const struct export_format_ops folded_format;

#endif /* VBTS_DECODER_EXPORT_FOLDED_H */
