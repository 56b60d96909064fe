/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-perf.h - `vbts decode --format perf`: the branches of a trace as a perf.data file of
 * Intel BTS data, which an unmodified `perf script --itrace=b` (Linux's perf, 6.1 on) decodes.
 *
 * The file (little-endian, perf's own layout: tools/perf/util/header.c, intel-bts.c):
 *   - the header ("PERFILE2"), one attr of type PERFDATA_BTS_PMU_TYPE with one sample ID;
 *   - in the data section: PERF_RECORD_AUXTRACE_INFO of type intel_bts; a COMM record per
 *     perf thread; a MMAP2 record per (thread, loaded image) the thread's branches touch;
 *     then one PERF_RECORD_AUXTRACE per run of consecutive branches of one thread, followed
 *     by the run as 24-byte BTS records {from, to, misc} and one all-zero record (perf skips
 *     it, and its reader stops one record early: the padding keeps the last real one);
 *   - no feature section.
 * Records carry no time: perf queues the runs by their reference (1, 2, ...) and synthesizes
 * their branches in the trace's order once the COMM and MMAP2 records are read.
 *
 * Threads: perf knows host threads only, so each guest thread becomes one: a task of the
 * process map (a record's CR3) and the thread the trace names on its vCPU (a thread record),
 * else the task's pid. Its perf pid and tid are the guest pid when no other perf thread had
 * it, else PERFDATA_TID_BASE + n; branches of no known task go to a thread per vCPU,
 * PERFDATA_TID_BASE + n too, named "vcpuN". Every perf thread is its own process (pid ==
 * tid): guest processes with the same pid before and after an exec keep their own maps.
 * Names are escaped as guest text is and cut to 15 bytes, as a Linux comm.
 *
 * Maps: an image (symbolizer__module(): the --image, a task's --symbols file or build-ID
 * store file) holding a branch's source or target below 2^63 is mapped into the thread at its
 * run-time base, its file named by its absolute host path, so perf reads the file's symbols
 * and instruction bytes. Guest kernel addresses (2^63 and up) are left to perf, which looks
 * them up in the host's kernel: they get no guest symbols.
 *
 * Only branch records are written; gaps, losses and task switches are not. Memory: 24 bytes
 * per branch and one entry per perf thread and map, until exporter__finish().
 */
#ifndef VBTS_DECODER_EXPORT_PERF_H
#define VBTS_DECODER_EXPORT_PERF_H

#include "export-format.h"

/* The attr type the AUXTRACE_INFO names as the BTS PMU's (any value; this one is unused). */
#define PERFDATA_BTS_PMU_TYPE 0x7fff0001u

/* The first perf pid/tid given to a thread whose guest pid is taken or unknown. */
#define PERFDATA_TID_BASE 0x40000000u

extern const struct export_format_ops perf_format;

#endif /* VBTS_DECODER_EXPORT_PERF_H */
