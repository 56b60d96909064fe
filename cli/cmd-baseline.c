// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-baseline.c - `vbts baseline create OUT RUN...`: what several runs of the same test did,
 * with the variation among them, for `vbts diff --baseline OUT RUN` (diff-baseline.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "diff-baseline.h"
#include "escape.h"

static const char baseline_usage[] =
	"usage: vbts baseline create [OPTIONS] OUT RUN...\n"
	"\n"
	"Record in the file OUT what the trace directories RUN (several runs of the same test)\n"
	"did, guest thread by guest thread, and what varied among them, for vbts diff\n"
	"--baseline OUT.\n"
	"\n"
	"options:\n"
	"  --task NAME|PID      only this guest process; repeatable\n"
	"  --vcpu N             only vCPU N\n"
	"  --strict             count interrupts, exceptions and their handlers too\n"
	"  --symbols PATH       ELF files for the programs of a Linux guest's tasks; repeatable\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 written, 2 bad arguments or a run that cannot be read.\n";

static void print_warning(void *ctx, const char *line)
{
	fprintf(stderr, "vbts baseline: warning: %s: %s\n", (const char *)ctx, line);
}

static int baseline(int argc, char **argv)
{
	enum { OPT_TASK = 256, OPT_VCPU, OPT_SYMBOLS, OPT_STRICT };
	static const struct option longopts[] = {
		{ "task", required_argument, NULL, OPT_TASK },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff_baseline_options o = { .vcpu = -1 };
	const char **tasks = calloc((size_t)argc + 1, sizeof(*tasks));
	const char **symbols = calloc((size_t)argc + 1, sizeof(*symbols));
	struct trace_dir **runs = calloc((size_t)argc + 1, sizeof(*runs));
	char err[TRACE_DIR_ERR_MAX], q[256];
	size_t nr_symbols = 0, nr = 0;
	int c, status = 2;
	unsigned long v;

	if (!tasks || !symbols || !runs) {
		fprintf(stderr, "vbts baseline: out of memory\n");
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
				fprintf(stderr, "vbts baseline: bad vCPU number '%s'\n",
					escape__str(q, sizeof(q), optarg));
				goto out;
			}
			o.vcpu = (int)v;
			break;
		case OPT_SYMBOLS:
			symbols[nr_symbols++] = optarg;
			break;
		case OPT_STRICT:
			o.strict = true;
			break;
		case 'h':
			fputs(baseline_usage, stdout);
			status = 0;
			goto out;
		default:
			command__option_error("baseline", c, optopt, argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind < 1 || strcmp(argv[optind], "create")) {
		fprintf(stderr, "vbts baseline: %s\nusage: vbts baseline create [OPTIONS] OUT "
			"RUN...\n", argc - optind < 1 ? "a subcommand needed" :
			"the only subcommand is create");
		goto out;
	}
	if (argc - optind < 3) {
		fprintf(stderr, "vbts baseline: OUT and at least one RUN needed\n"
				"usage: vbts baseline create [OPTIONS] OUT RUN...\n");
		goto out;
	}
	if (argc - optind - 2 > DIFF_BASELINE_RUNS_MAX) {
		fprintf(stderr, "vbts baseline: at most %d runs\n", DIFF_BASELINE_RUNS_MAX);
		goto out;
	}
	for (int k = optind + 2; k < argc; k++) {
		struct trace_dir_options topts = {
			.warn = print_warning, .warn_ctx = argv[k],
			.symbol_paths = symbols, .nr_symbol_paths = nr_symbols,
		};

		runs[nr] = trace_dir__open(argv[k], &topts, err, sizeof(err));
		if (!runs[nr]) {
			fprintf(stderr, "vbts baseline: %s\n", err);
			goto out;
		}
		/* Something of a run could not be read: the baseline would be wrong. */
		if (trace_dir__damaged(runs[nr++])) {
			fprintf(stderr, "vbts baseline: %s: part of the trace cannot be read\n",
				escape__str(q, sizeof(q), argv[k]));
			goto out;
		}
	}
	if (diff_baseline__create(argv[optind + 1], runs, nr, &o, err, sizeof(err))) {
		fprintf(stderr, "vbts baseline: %s\n", err);
		goto out;
	}
	printf("baseline of %zu runs written to %s\n", nr,
	       escape__str(q, sizeof(q), argv[optind + 1]));
	status = 0;
out:
	for (size_t k = 0; runs && k < nr; k++)
		trace_dir__close(runs[k]);
	free(runs);
	free(tasks);
	free(symbols);
	return status;
}

const struct vbts_command cmd_baseline = {
	.name = "baseline",
	.summary = "record what several runs of a test did, and what varied among them",
	.usage = baseline_usage,
	.fn = baseline,
};
