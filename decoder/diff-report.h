/* SPDX-License-Identifier: GPL-2.0 */
/*
 * diff-report.h - a comparison of two traces (trace-diff.h) as text for a terminal, JSON for
 * programs, JUnit XML for a CI's test report (one test case per stream, its divergence as the
 * failure) or markdown short enough for a pull-request comment. Every guest-derived string
 * of the comparison is escaped already (escape.h); JSON and XML escape their own specials.
 *
 * The JSON document (version 1):
 *   {"version":1,"equal":false,"strict":false,
 *    "branches":{"a":N,"b":N},"async":{"a":N,"b":N},
 *    "streams":[{"id":"mt-oracle","status":"equal"|"differs"|"only-a"|"only-b",
 *                "a":{"pid":127,"branches":N,"async":N,"build_id":"hex",
 *                     "where":"fn (file.c:12)","context":["0x.. fn+0x3 (file.c:12) => ..."],
 *                     "only":["fn name","file.c:40"],"more_only":0},
 *                "b":{...},"first":N,"context_first":N,
 *                "counts":[{"function":"fn","a":N,"b":N}],"more_counts":0}],
 *    "coverage":{"a":{"lines":N,"edges":N,"only_lines":[..],"only_edges":[..]},"b":{...}}}
 * (a side's members beyond "pid" only when known, "first" and after only for "differs",
 * "coverage" only with --coverage; a baseline comparison adds members, diff-baseline.h).
 */
#ifndef VBTS_DECODER_DIFF_REPORT_H
#define VBTS_DECODER_DIFF_REPORT_H

#include <stdio.h>

#include "trace-diff.h"

/* The report's formats. */
enum diff_format {
	DIFF_FORMAT_TEXT,
	DIFF_FORMAT_JSON,
	DIFF_FORMAT_JUNIT,
	DIFF_FORMAT_MARKDOWN,
};

/* Streams that differ shown in detail in markdown, at most; the others are listed. */
#define DIFF_MARKDOWN_DETAIL_MAX 5

/**
 * diff_format__parse() - the format of a --format name.
 * @name:   "text", "json", "junit" or "markdown"
 * @format: receives DIFF_FORMAT_*
 *
 * Return: 0, or -EINVAL for another name.
 */
int diff_format__parse(const char *name, enum diff_format *format);

/**
 * diff_report__write() - write a comparison.
 * @res:    the comparison
 * @format: DIFF_FORMAT_*
 * @names:  what A and B are (their directories), for the report's title; not escaped yet
 * @out:    where
 *
 * Return: 0, -EIO on a write error, -ENOMEM.
 */
int diff_report__write(const struct trace_diff_result *res, enum diff_format format,
		       const char *const names[2], FILE *out);

#endif /* VBTS_DECODER_DIFF_REPORT_H */
