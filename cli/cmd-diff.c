// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-diff.c - `vbts diff A B`: where two traces of the same guest code first diverge.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "diff-baseline.h"
#include "diff-report.h"
#include "escape.h"
#include "trace-diff.h"

static const char diff_usage[] =
	"usage: vbts diff [OPTIONS] A B\n"
	"       vbts diff [OPTIONS] --baseline FILE RUN\n"
	"\n"
	"Compare the branches of the trace directories A and B (two runs of the same guest\n"
	"code) guest thread by guest thread, and show for each thread whose branches differ the\n"
	"first branch that differs with the branches around it on both sides, symbolized with\n"
	"source lines, then the functions and lines reached in one run only and the branches\n"
	"per function that differ. Threads and processes are matched by what they are, not by\n"
	"pid: the names of their programs, the process that made them, their creation order.\n"
	"Interrupts, exceptions and what their handlers ran are left out (--strict compares\n"
	"them). A program loaded at other addresses (a PIE under ASLR) compares equal when its\n"
	"exec events carry its build ID and load base.\n"
	"\n"
	"options:\n"
	"  --task NAME|PID      only this guest process (as for vbts decode); repeatable\n"
	"  --vcpu N             only vCPU N\n"
	"  --context N          branches shown before and after each difference (default 5,\n"
	"                       at most 1000)\n"
	"  --strict             compare interrupts, exceptions and their handlers too\n"
	"  --format FORMAT      text (default), json, junit or markdown\n"
	"  --coverage           also list the lines and branch directions covered in one run\n"
	"                       and not the other\n"
	"  --lcov-a FILE        with --coverage: write A's coverage as an lcov tracefile\n"
	"  --lcov-b FILE        with --coverage: write B's\n"
	"  --baseline FILE      compare the one trace RUN with a baseline of vbts baseline\n"
	"                       create: only what lies outside the variation of its runs\n"
	"  --symbols PATH       ELF files for the programs of a Linux guest's tasks, for\n"
	"                       both traces (as for vbts decode); repeatable\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 the traces are equal, 1 they differ, 2 bad arguments or a trace\n"
	"directory that cannot be read.\n";

static void print_warning(void *ctx, const char *line)
{
	fprintf(stderr, "vbts diff: warning: %s: %s\n", (const char *)ctx, line);
}

/* `vbts diff --baseline FILE RUN`: the status. */
static int diff_baseline(const struct trace_diff_options *d, const char *base, const char *dir,
			 const char **symbols, size_t nr_symbols, enum diff_format format)
{
	struct diff_baseline_options o = {
		.tasks = d->tasks, .nr_tasks = d->nr_tasks, .vcpu = d->vcpu,
	};
	struct trace_dir_options topts = {
		.warn = print_warning, .warn_ctx = (void *)dir,
		.symbol_paths = symbols, .nr_symbol_paths = nr_symbols,
	};
	struct trace_diff_result res = { 0 };
	char err[TRACE_DIR_ERR_MAX];
	const char *names[2] = { base, dir };
	struct trace_dir *t;
	int ret, status = 2;

	if (!dir) {
		fprintf(stderr, "vbts diff: --baseline FILE takes one trace directory\n"
				"usage: vbts diff [OPTIONS] --baseline FILE RUN\n");
		return 2;
	}
	if (d->coverage || d->strict) {
		fprintf(stderr, "vbts diff: --baseline compares as its baseline was made: no "
				"--coverage, no --strict\n");
		return 2;
	}
	t = trace_dir__open(dir, &topts, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "vbts diff: %s\n", err);
		return 2;
	}
	ret = diff_baseline__compare(base, t, &o, &res, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "vbts diff: %s\n", err);
		goto out;
	}
	if (diff_report__write(&res, format, names, stdout)) {
		fprintf(stderr, "vbts diff: cannot write the report\n");
		goto out;
	}
	status = trace_dir__damaged(t) ? 2 : ret;
out:
	trace_diff_result__free(&res);
	trace_dir__close(t);
	return status;
}

static int diff(int argc, char **argv)
{
	enum { OPT_TASK = 256, OPT_VCPU, OPT_CONTEXT, OPT_SYMBOLS, OPT_STRICT, OPT_FORMAT,
	       OPT_COVERAGE, OPT_LCOV_A, OPT_LCOV_B, OPT_BASELINE };
	static const struct option longopts[] = {
		{ "task", required_argument, NULL, OPT_TASK },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "coverage", no_argument, NULL, OPT_COVERAGE },
		{ "lcov-a", required_argument, NULL, OPT_LCOV_A },
		{ "lcov-b", required_argument, NULL, OPT_LCOV_B },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trace_diff_options o = { .vcpu = -1, .context = 5 };
	struct trace_diff_result res = { 0 };
	enum diff_format format = DIFF_FORMAT_TEXT;
	const char *lcov[2] = { NULL, NULL };
	const char *base = NULL;
	const char **tasks = calloc((size_t)argc + 1, sizeof(*tasks));
	const char **symbols = calloc((size_t)argc + 1, sizeof(*symbols));
	char err[TRACE_DIR_ERR_MAX], q[256];
	const char *names[2];
	size_t nr_symbols = 0;
	unsigned long v;
	int c, ret, status = 2;

	if (!tasks || !symbols) {
		fprintf(stderr, "vbts diff: out of memory\n");
		goto out;
	}
	o.tasks = tasks;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_TASK:
			tasks[o.nr_tasks++] = optarg;
			break;
		case OPT_VCPU:
			if (command__parse_count(optarg, INT32_MAX, &v)) {
				fprintf(stderr, "vbts diff: bad vCPU number '%s'\n",
					escape__str(q, sizeof(q), optarg));
				goto out;
			}
			o.vcpu = (int)v;
			break;
		case OPT_CONTEXT:
			if (command__parse_count(optarg, TRACE_DIFF_CONTEXT_MAX, &v)) {
				fprintf(stderr, "vbts diff: bad --context '%s' (0 to %d)\n",
					escape__str(q, sizeof(q), optarg), TRACE_DIFF_CONTEXT_MAX);
				goto out;
			}
			o.context = (unsigned int)v;
			break;
		case OPT_SYMBOLS:
			symbols[nr_symbols++] = optarg;
			break;
		case OPT_STRICT:
			o.strict = true;
			break;
		case OPT_FORMAT:
			if (diff_format__parse(optarg, &format)) {
				fprintf(stderr, "vbts diff: bad --format '%s' (text, json, junit or"
					" markdown)\n", escape__str(q, sizeof(q), optarg));
				goto out;
			}
			break;
		case OPT_COVERAGE:
			o.coverage = true;
			break;
		case OPT_LCOV_A:
		case OPT_LCOV_B:
			lcov[c == OPT_LCOV_B] = optarg;
			break;
		case OPT_BASELINE:
			base = optarg;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			status = 0;
			goto out;
		default:
			command__option_error("diff", c, optopt, argv[optind - 1]);
			goto out;
		}
	}
	if (base) {
		status = diff_baseline(&o, base, argc - optind == 1 ? argv[optind] : NULL,
				       symbols, nr_symbols, format);
		goto out;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "vbts diff: two trace directories needed\n"
				"usage: vbts diff [OPTIONS] A B\n");
		goto out;
	}
	if ((lcov[0] || lcov[1]) && !o.coverage) {
		fprintf(stderr, "vbts diff: --lcov-a and --lcov-b need --coverage\n");
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		if (!lcov[k])
			continue;
		o.lcov[k] = fopen(lcov[k], "w");
		if (!o.lcov[k]) {
			fprintf(stderr, "vbts diff: %s: %s\n", escape__str(q, sizeof(q), lcov[k]),
				strerror(errno));
			goto out;
		}
	}
	for (int k = 0; k < 2; k++) {
		struct trace_dir_options topts = {
			.warn = print_warning, .warn_ctx = argv[optind + k],
			.symbol_paths = symbols, .nr_symbol_paths = nr_symbols,
		};

		o.trace[k] = trace_dir__open(argv[optind + k], &topts, err, sizeof(err));
		if (!o.trace[k]) {
			fprintf(stderr, "vbts diff: %s\n", err);
			goto out;
		}
	}
	ret = trace_diff__run(&o, &res, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "vbts diff: %s\n", err);
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		if (o.lcov[k] && fclose(o.lcov[k])) {
			o.lcov[k] = NULL;
			fprintf(stderr, "vbts diff: %s: %s\n", escape__str(q, sizeof(q), lcov[k]),
				strerror(errno));
			goto out;
		}
		o.lcov[k] = NULL;
	}
	names[0] = argv[optind];
	names[1] = argv[optind + 1];
	if (diff_report__write(&res, format, names, stdout)) {
		fprintf(stderr, "vbts diff: cannot write the report\n");
		goto out;
	}
	status = ret;
	/* Something of a trace could not be read: the answer may be wrong. */
	if (trace_dir__damaged(o.trace[0]) || trace_dir__damaged(o.trace[1]))
		status = 2;
out:
	for (int k = 0; k < 2; k++)
		if (o.lcov[k])
			fclose(o.lcov[k]);
	trace_diff_result__free(&res);
	trace_dir__close(o.trace[0]);
	trace_dir__close(o.trace[1]);
	free(tasks);
	free(symbols);
	return status;
}

const struct vbts_command cmd_diff = {
	.name = "diff",
	.summary = "where two traces of the same guest code first take other branches",
	.usage = diff_usage,
	.fn = diff,
};
