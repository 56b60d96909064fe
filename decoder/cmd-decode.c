// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-decode.c - `vbts decode`: print the records of a trace directory, oldest first.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "export.h"
#include "trace-dir.h"

static const char decode_usage[] =
	"usage: vbts decode [OPTIONS] DIR\n"
	"\n"
	"Print the branch records and events of the trace directory DIR (written by\n"
	"`vbts run --trace DIR`), oldest first, all vCPUs merged by time.\n"
	"\n"
	"options:\n"
	"  --format text|jsonl  text: one perf-script-like line per record, with task names\n"
	"                       and symbols; jsonl: one JSON object per record (default text)\n"
	"  --vcpu N             only vCPU N\n"
	"  --last N             only the N newest branch records, with the other records\n"
	"                       among and after them (everything when there are fewer)\n"
	"  --task NAME|PID      only the records of this guest task (from events.jsonl);\n"
	"                       losses, start, stop and freeze records are always shown\n"
	"  --crashed            like --task, for the task that crashed last (exit code of\n"
	"                       128 or more in events.jsonl, e.g. 139 for a fatal fault)\n"
	"  --cpl all|user|kernel  only branch records from CPL > 0 (user) or CPL 0 (kernel);\n"
	"                       other records are kept (default all)\n"
	"  --summary            then print a summary of the vCPUs decoded (--task, --crashed,\n"
	"                       --cpl and --last do not narrow it): records, branches, gaps,\n"
	"                       losses, task switches, the tasks seen and their exit codes\n"
	"  --lines              text: add the source file and line of each address when\n"
	"                       the image has DWARF line information\n"
	"  --image ELF          take symbols from ELF instead of the image vm.json names\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success, 2 bad arguments or a missing or invalid trace directory\n"
	"(a truncated or corrupted ring file is reported with its name and offset); also 2\n"
	"when a ring file, events.jsonl or the image could not be read: each is reported and\n"
	"the rest is decoded.\n";

struct decode_opts {
	const char *dir;
	const char *image;
	const char *task;
	bool crashed;
	int cpl;        /* -1 all, 0 kernel, 3 user */
	enum export_format format;
	int vcpu;
	bool last_set;
	uint64_t last;
	bool summary;
	bool lines;
};

/*
 * The records of --last N: a FIFO that holds the N newest branch records and the records
 * among and after them, so memory stays bounded by N (plus the escapes in between).
 */
struct record_fifo {
	struct decoded_record *buf;
	size_t cap, head, len;
	uint64_t branches;
};

static struct decoded_record *fifo_at(struct record_fifo *q, size_t i)
{
	return &q->buf[(q->head + i) % q->cap];
}

static void fifo_pop(struct record_fifo *q)
{
	if (fifo_at(q, 0)->type == DECODED_BRANCH)
		q->branches--;
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

static int fifo_push(struct record_fifo *q, const struct decoded_record *r, uint64_t last)
{
	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256, i;
		struct decoded_record *buf = malloc(cap * sizeof(*buf));

		if (!buf)
			return -ENOMEM;
		for (i = 0; i < q->len; i++)
			buf[i] = *fifo_at(q, i);
		free(q->buf);
		q->buf = buf;
		q->cap = cap;
		q->head = 0;
	}
	*fifo_at(q, q->len++) = *r;
	if (r->type != DECODED_BRANCH)
		return 0;
	if (++q->branches > last) {
		/* Drop the oldest branch and whatever preceded the next one. */
		do
			fifo_pop(q);
		while (q->branches > last);
		while (q->len && fifo_at(q, 0)->type != DECODED_BRANCH)
			fifo_pop(q);
	}
	return 0;
}

static void print_warning(void *ctx, const char *line)
{
	fprintf(stderr, "vbts decode: warning: %s\n", line);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct decode_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_VCPU, OPT_LAST, OPT_TASK, OPT_SUMMARY, OPT_IMAGE, OPT_LINES,
	       OPT_CRASHED, OPT_CPL };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "last", required_argument, NULL, OPT_LAST },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "crashed", no_argument, NULL, OPT_CRASHED },
		{ "cpl", required_argument, NULL, OPT_CPL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->vcpu = -1;
	o->cpl = -1;
	optind = 0; /* full re-initialisation: the command may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (!strcmp(optarg, "text")) {
				o->format = EXPORT_TEXT;
			} else if (!strcmp(optarg, "jsonl")) {
				o->format = EXPORT_JSONL;
			} else {
				fprintf(stderr,
					"vbts decode: unknown format '%s' (text or jsonl)\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_VCPU:
			if (parse_u64(optarg, &v) || v > INT32_MAX) {
				fprintf(stderr, "vbts decode: bad vCPU number '%s'\n", optarg);
				return -EINVAL;
			}
			o->vcpu = (int)v;
			break;
		case OPT_LAST:
			if (parse_u64(optarg, &o->last)) {
				fprintf(stderr, "vbts decode: bad --last count '%s'\n", optarg);
				return -EINVAL;
			}
			o->last_set = true;
			break;
		case OPT_TASK:
			o->task = optarg;
			break;
		case OPT_SUMMARY:
			o->summary = true;
			break;
		case OPT_IMAGE:
			o->image = optarg;
			break;
		case OPT_LINES:
			o->lines = true;
			break;
		case OPT_CRASHED:
			o->crashed = true;
			break;
		case OPT_CPL:
			if (!strcmp(optarg, "all")) {
				o->cpl = -1;
			} else if (!strcmp(optarg, "user")) {
				o->cpl = 3;
			} else if (!strcmp(optarg, "kernel")) {
				o->cpl = 0;
			} else {
				fprintf(stderr, "vbts decode: unknown CPL filter '%s' "
						"(all, user or kernel)\n", optarg);
				return -EINVAL;
			}
			break;
		case 'h':
			fputs(decode_usage, stdout);
			return 1;
		default:
			fprintf(stderr, "vbts decode: unknown or incomplete option '%s'\n",
				argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (o->task && o->crashed) {
		fprintf(stderr, "vbts decode: --task and --crashed exclude each other\n");
		return -EINVAL;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vbts decode: %s\nusage: vbts decode [OPTIONS] DIR\n",
			optind >= argc ? "no trace directory given" : "more than one directory");
		return -EINVAL;
	}
	o->dir = argv[optind];
	return 0;
}

/* Does the record pass the --cpl filter? Branches of unknown CPL do not. */
static bool cpl_matches(const struct decoded_record *r, int cpl)
{
	if (cpl < 0 || r->type != DECODED_BRANCH)
		return true;
	if (!r->cpl_valid)
		return false;
	return cpl == 0 ? r->cpl == 0 : r->cpl > 0;
}

/* Does the record pass the --task filter? */
static bool task_matches(const struct exporter *e, const struct decoded_record *r,
			 const struct procmap_task *want)
{
	const struct procmap_task *t;

	switch (r->type) {
	case DECODED_LOST:
	case DECODED_START:
	case DECODED_STOP:
	case DECODED_FREEZE:
	case DECODED_UNKNOWN:
		return true;
	default:
		break;
	}
	t = exporter__task(e, r);
	return t && t->pid == want->pid && !strcmp(t->name, want->name);
}

static int decode(int argc, char **argv)
{
	struct trace_dir_options topts = { .warn = print_warning };
	char err[TRACE_DIR_ERR_MAX];
	const struct procmap_task *want = NULL;
	struct trace_summary sum = { 0 };
	struct record_fifo fifo = { 0 };
	struct decoded_record r;
	struct decode_opts o;
	struct exporter e;
	struct trace_dir *t;
	struct decoder *d;
	int ret, status = 0;
	size_t i;

	ret = parse_args(argc, argv, &o);
	if (ret)
		return ret > 0 ? 0 : 2;
	topts.image = o.image;
	topts.no_symbols = o.format != EXPORT_TEXT;
	t = trace_dir__open(o.dir, &topts, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "vbts decode: %s\n", err);
		return 2;
	}
	e.out = stdout;
	e.format = o.format;
	e.procmap = trace_dir__procmap(t);
	e.symbols = o.format == EXPORT_TEXT ? trace_dir__symbols(t) : NULL;
	e.lines = o.lines;
	if (o.task) {
		want = procmap__find(e.procmap, o.task);
		if (!want) {
			fprintf(stderr, "vbts decode: %s: no task '%s' in events.jsonl\n", o.dir,
				o.task);
			status = 2;
			goto out_close;
		}
	} else if (o.crashed) {
		want = procmap__crashed(e.procmap);
		if (!want) {
			fprintf(stderr, "vbts decode: %s: no crashed task in events.jsonl\n",
				o.dir);
			status = 2;
			goto out_close;
		}
	}
	d = trace_dir__decoder(t, o.vcpu);
	if (!d) {
		if (errno == ENOENT)
			fprintf(stderr, "vbts decode: %s: no vCPU %d in this trace\n", o.dir,
				o.vcpu);
		else
			fprintf(stderr, "vbts decode: %s: %s\n", o.dir, strerror(errno));
		status = 2;
		goto out_close;
	}
	while ((ret = decoder__next(d, &r)) > 0) {
		if (o.summary && trace_summary__add(&sum, &r))
			goto out_nomem;
		if (want && !task_matches(&e, &r, want))
			continue;
		if (!cpl_matches(&r, o.cpl))
			continue;
		if (o.last_set) {
			if (o.last && fifo_push(&fifo, &r, o.last))
				goto out_nomem;
			continue;
		}
		if (exporter__record(&e, &r))
			goto out_write;
	}
	if (ret < 0) {
		fprintf(stderr, "vbts decode: %s: a ring file changed under the reader: %s\n",
			o.dir, strerror(-ret));
		status = 2;
		goto out_free;
	}
	/* N branches kept: start at the oldest of them; fewer: everything is shown. */
	i = 0;
	if (o.last && fifo.branches == o.last)
		while (i < fifo.len && fifo_at(&fifo, i)->type != DECODED_BRANCH)
			i++;
	for (; i < fifo.len; i++)
		if (exporter__record(&e, fifo_at(&fifo, i)))
			goto out_write;
	if (o.summary && exporter__summary(&e, &sum))
		goto out_write;
	if (fflush(stdout))
		goto out_write;
	/* The rest was decoded; what could not be read was reported when the trace opened. */
	if (trace_dir__damaged(t))
		status = 2;
	goto out_free;

out_write:
	fprintf(stderr, "vbts decode: write error: %s\n", strerror(errno));
	status = 1;
	goto out_free;
out_nomem:
	fprintf(stderr, "vbts decode: out of memory\n");
	status = 1;
out_free:
	free(fifo.buf);
	trace_summary__release(&sum);
	decoder__free(d);
out_close:
	trace_dir__close(t);
	return status;
}

const struct vbts_command cmd_decode = {
	.name = "decode",
	.summary = "print the branch records of a trace directory (text or jsonl)",
	.usage = decode_usage,
	.fn = decode,
};
