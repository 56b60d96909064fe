/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-perfetto.h - `vbts decode --format perfetto`: the calls of each task (of each thread,
 * when the trace names them) on each vCPU as slices of a Chrome trace (the Trace Event
 * Format's JSON, which Perfetto's UI and Chromium's about:tracing open):
 *
 *   {"displayTimeUnit":"ns","traceEvents":[
 *   {"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"ping[1]"}},
 *   {"ph":"M","name":"thread_name","pid":1,"tid":0,"args":{"name":"vcpu0 ping[1]"}},
 *   {"ph":"B","name":"main","pid":1,"tid":0,"ts":0.1,"args":{"addr":"0x0"}},
 *   {"ph":"E","pid":1,"tid":0,"ts":0.3},
 *   ...
 *   ]}
 *
 * A track (pid, tid) per stream of flow.h: pid is the task's process (its tgid when known,
 * else its pid; 0 for code of no known task; a thread's tgid for a thread the trace named),
 * tid the stream's number, so that one task's threads and vCPUs are tracks of one process;
 * a thread's track is named "vcpuN name[pid]" with the thread's pid, its process
 * "name[tgid]". A slice (a B and its E event) per function on the call stack: from the
 * record that entered it to the one that left it, or the end of the trace. ts is the
 * record's time in microseconds (ns / 1000, the trace's time stamps: branches between two
 * time stamps share one), never less than the track's last. Names are JSON strings of the
 * guest's bytes (out-buf.h: valid UTF-8, escaped). Streamed: memory is the flow tracker's.
 */
#ifndef VBTS_DECODER_EXPORT_PERFETTO_H
#define VBTS_DECODER_EXPORT_PERFETTO_H

#include "export-format.h"

extern const struct export_format_ops perfetto_format;

#endif /* VBTS_DECODER_EXPORT_PERFETTO_H */
