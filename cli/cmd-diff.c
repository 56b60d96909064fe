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
#include "escape.h"
#include "trace-diff.h"

static const char diff_usage[] =
	"usage: vbts diff [OPTIONS] A B\n"
	"\n"
	"Compare the branches of the trace directories A and B (two runs of the same guest\n"
	"code), task by task and vCPU by vCPU, and show for each task and vCPU whose branches\n"
	"differ the first branch that differs (or where one trace's branches end) and the\n"
	"branches before it on both sides, with symbols. A task is matched by its name and\n"
	"pid in events.jsonl. A program loaded at other addresses in the two runs (a PIE under\n"
	"ASLR) compares equal when its exec events carry its build ID and load base: its user\n"
	"addresses are compared as offsets from the load base.\n"
	"\n"
	"options:\n"
	"  --task NAME|PID      only this guest process (as for vbts decode); repeatable\n"
	"  --vcpu N             only vCPU N\n"
	"  --context N          branches shown before each difference (default 5, at most\n"
	"                       1000)\n"
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

static int parse_count(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -EINVAL : 0;
}

static int diff(int argc, char **argv)
{
	enum { OPT_TASK = 256, OPT_VCPU, OPT_CONTEXT, OPT_SYMBOLS };
	static const struct option longopts[] = {
		{ "task", required_argument, NULL, OPT_TASK },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "context", required_argument, NULL, OPT_CONTEXT },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct trace_diff_options o = { .vcpu = -1, .context = 5, .out = stdout };
	const char **tasks = calloc((size_t)argc + 1, sizeof(*tasks));
	const char **symbols = calloc((size_t)argc + 1, sizeof(*symbols));
	char err[TRACE_DIR_ERR_MAX], q[256];
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
			if (parse_count(optarg, INT32_MAX, &v)) {
				fprintf(stderr, "vbts diff: bad vCPU number '%s'\n",
					escape__str(q, sizeof(q), optarg));
				goto out;
			}
			o.vcpu = (int)v;
			break;
		case OPT_CONTEXT:
			if (parse_count(optarg, TRACE_DIFF_CONTEXT_MAX, &v)) {
				fprintf(stderr, "vbts diff: bad --context '%s' (0 to %d)\n",
					escape__str(q, sizeof(q), optarg), TRACE_DIFF_CONTEXT_MAX);
				goto out;
			}
			o.context = (unsigned int)v;
			break;
		case OPT_SYMBOLS:
			symbols[nr_symbols++] = optarg;
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
	if (argc - optind != 2) {
		fprintf(stderr, "vbts diff: two trace directories needed\n"
				"usage: vbts diff [OPTIONS] A B\n");
		goto out;
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
	ret = trace_diff__run(&o, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "vbts diff: %s\n", err);
		goto out;
	}
	status = ret;
	/* Something of a trace could not be read: the answer may be wrong. */
	if (trace_dir__damaged(o.trace[0]) || trace_dir__damaged(o.trace[1]))
		status = 2;
out:
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
