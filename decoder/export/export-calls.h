/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-calls.h - `vbts decode --format calls`: the function-call history of each task (of
 * each thread, when the trace names them) on each vCPU, indented by call depth, as gdb's
 * `record function-call-history /c` shows it:
 *
 *   # vcpu0 ping[1]
 *   1	main
 *   2	  parse
 *   3	    deref
 *   4	  parse
 *   5	main
 *
 * A line per function segment (a stretch of execution in one function between calls and
 * returns, see flow.h), numbered per stream from 1, a tab, two spaces per call level and the
 * function's name escaped for a terminal ("[unknown]" for code no symbol covers). A "# vCPU
 * task" line comes first and whenever the stream changes (a thread the trace named is
 * "name[pid]" with its pid, "[pid]" of no known task). Levels deeper than
 * CALLS_INDENT_MAX are written "[level N] " after CALLS_INDENT_MAX indentations; calls deeper
 * than FLOW_DEPTH_MAX have no lines. Streamed: memory is the flow tracker's.
 */
#ifndef VBTS_DECODER_EXPORT_CALLS_H
#define VBTS_DECODER_EXPORT_CALLS_H

#include "export-format.h"

/* Call levels indented at most. */
#define CALLS_INDENT_MAX 64

extern const struct export_format_ops calls_format;

#endif /* VBTS_DECODER_EXPORT_CALLS_H */
