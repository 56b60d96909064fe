/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crash-print.h - `vbts decode DIR --crash`: the crash reports of a trace directory
 * (crash.json, crash-N.json, written by the VMM) printed as a person reads a backtrace.
 */
#ifndef VBTS_DECODER_CRASH_PRINT_H
#define VBTS_DECODER_CRASH_PRINT_H

#include <stddef.h>
#include <stdio.h>

struct annotator;
struct procmap;

/* crash-N.json looked for: N below this. */
#define CRASH_PRINT_REPORTS_MAX 1024

/**
 * crash_print__file() - print one crash report.
 * @out:    where
 * @path:   the report's file
 * @label:  its name in the output (the file's base name)
 * @a:      symbols of the trace's images, or NULL
 * @pm:     the trace's processes, or NULL
 * @err:    one line saying why, on failure
 * @errlen: bytes at @err
 *
 * Everything from the file (names, the guest's comm) is escaped; symbol names are escaped by
 * the annotator.
 *
 * Return: 0; -ENOENT when the file does not exist; -EINVAL when it is not a crash report
 * (too big, not JSON, members missing or of the wrong type); -EIO on a write error.
 */
int crash_print__file(FILE *out, const char *path, const char *label, struct annotator *a,
		      const struct procmap *pm, char *err, size_t errlen);

/**
 * crash_print__dir() - print every crash report of a trace directory, crash.json first, then
 * crash-1.json, crash-2.json, ...
 * @out, @a, @pm, @err, @errlen: as crash_print__file()
 * @dir: the trace directory
 *
 * Return: the number of reports printed (> 0); -ENOENT when there is none; the error of the
 * first report that could not be printed (the others are printed).
 */
int crash_print__dir(FILE *out, const char *dir, struct annotator *a, const struct procmap *pm,
		     char *err, size_t errlen);

#endif /* VBTS_DECODER_CRASH_PRINT_H */
