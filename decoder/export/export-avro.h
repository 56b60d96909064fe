/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-avro.h - `vbts decode --format avro`: the branch records as an Apache Avro object
 * container file (written with Debian's libavro), one row per branch with its vCPU, time,
 * task and symbols, so that query engines that read Avro (Spark, Trino, Flink, Hive) take a
 * fleet's branch logs as they are. The schema is decoder/vbts-branch.avsc (embedded in the
 * file's header, as Avro requires); records of other types are not written.
 *
 * Streamed: libavro buffers one block of rows, compressed with deflate, and writes it to the
 * exporter's stream, which it does not close.
 */
#ifndef VBTS_DECODER_EXPORT_AVRO_H
#define VBTS_DECODER_EXPORT_AVRO_H

#include "export-format.h"

/* Bytes of rows per block of the container file. */
#define AVRO_BLOCK_SIZE (256 * 1024)

extern const struct export_format_ops avro_format;

#endif /* VBTS_DECODER_EXPORT_AVRO_H */
