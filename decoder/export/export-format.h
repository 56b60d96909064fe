/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-format.h - what an output format other than text and jsonl gives the exporter
 * (export.h): its own state made from the exporter's writer and annotator, a record callback
 * and a finish callback that writes what the format keeps until the end (aggregated counts,
 * slices still open, a table whose size comes first).
 */
#ifndef VBTS_DECODER_EXPORT_FORMAT_H
#define VBTS_DECODER_EXPORT_FORMAT_H

#include "annotator.h"
#include "decoder.h"
#include "out-buf.h"

struct exporter_options;

/**
 * struct export_env - what a format writes with.
 * @ob:        the exporter's buffered writer (to the exporter's stream)
 * @annotator: tasks, labels and symbols (with the exporter's symbolizer)
 * @o:         the exporter's options
 */
struct export_env {
	struct out_buf *ob;
	struct annotator *annotator;
	const struct exporter_options *o;
};

/**
 * struct export_format_ops - one format.
 * @name:   its --format name
 * @new:    its state, or NULL with errno set (ENOMEM, or what the format's library says)
 * @record: take one record; 0 or -errno (-ENOMEM, -EIO)
 * @finish: write what is kept until the end into the writer (not flushed); 0 or -errno
 * @free:   release the state (may be NULL)
 */
struct export_format_ops {
	const char *name;
	void *(*new)(const struct export_env *env);
	int (*record)(void *x, const struct decoded_record *r);
	int (*finish)(void *x);
	void (*free)(void *x);
};

#endif /* VBTS_DECODER_EXPORT_FORMAT_H */
