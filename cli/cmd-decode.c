// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-decode.c - `vbts decode`: print the records of a trace directory, oldest first.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotator.h"
#include "commands.h"
#include "crash-print.h"
#include "escape.h"
#include "export.h"
#include "progress.h"
#include "seal-verify.h"
#include "trace-dir.h"

/* The --format names, for messages. */
#define FORMAT_NAMES "text, jsonl, calls, folded, callgrind, perfetto, lcov, avro, drcov, perf"

static const char decode_usage[] =
	"usage: vbts decode [OPTIONS] DIR\n"
	"\n"
	"Print the branch records and events of the trace directory DIR (written by\n"
	"`vbts run --trace DIR`), oldest first, all vCPUs merged by time.\n"
	"\n"
	"options:\n"
	"  --format FORMAT      how the records are written (default text):\n"
	"      text             a perf-script-like line per record, with tasks and symbols\n"
	"      jsonl            a JSON object per record\n"
	"      calls            the function-call history of each task and vCPU, indented\n"
	"                       by call depth (gdb's record function-call-history /c)\n"
	"      folded           folded stacks weighted by branches (flamegraph.pl)\n"
	"      callgrind        branches per function, calls between functions\n"
	"                       (callgrind_annotate, KCachegrind)\n"
	"      perfetto         a slice per call per task and vCPU, Chrome trace JSON\n"
	"                       (Perfetto's UI, Chromium's about:tracing)\n"
	"      lcov             source lines run and conditional branches taken, an lcov\n"
	"                       tracefile (genhtml)\n"
	"      avro             a row per branch with task, vCPU, time and symbols, an\n"
	"                       Avro object container file (schema in the source tree:\n"
	"                       decoder/vbts-branch.avsc); not to a terminal\n"
	"      drcov            the basic blocks run (from a branch's target to the next\n"
	"                       branch's source), DynamoRIO drcov's file (Lighthouse,\n"
	"                       bncov); modules: --image, --symbols, the guest kernel's\n"
	"                       vmlinux or System.map; not to a terminal\n"
	"      perf             the branches as a perf.data file of Intel BTS data, for\n"
	"                       `perf script --itrace=b` (guest processes as host threads\n"
	"                       with their --image or --symbols files mapped; see\n"
	"                       doc/outputs.md); not to a terminal\n"
	"  -o, --output FILE    write the output to FILE instead of stdout\n"
	"  --vcpu N             only vCPU N\n"
	"  --last N             only the N newest branch records, with the other records\n"
	"                       among and after them (everything when there are fewer)\n"
	"  --task NAME|PID      only the records of this guest process (from events.jsonl);\n"
	"                       repeatable. A name selects every process that had it, before\n"
	"                       or after an exec (a Linux comm is cut to 15 bytes: a longer\n"
	"                       NAME matches its first 15), a pid that process across its\n"
	"                       execs (or the processes of that tgid). Where the trace names\n"
	"                       guest threads (thread records), a thread's pid selects the\n"
	"                       records of that thread, a tgid those of all its threads; a\n"
	"                       thread or vfork child run in another's address space is a\n"
	"                       process of its own (events.jsonl's thread event): its name\n"
	"                       selects its records there too, and after its exec.\n"
	"                       Losses, start, stop and freeze records are always shown\n"
	"  --crashed            like --task, for the task that crashed last (exit code of\n"
	"                       128 or more in events.jsonl, e.g. 139 for a fatal fault)\n"
	"  --crash              print the crash reports of DIR (crash.json, crash-1.json, ...,\n"
	"                       written by `vbts run` when a guest process is killed by a\n"
	"                       fatal signal, the kernel panics or a vCPU triple-faults) as\n"
	"                       a backtrace: what died, the process, where it crashed, then\n"
	"                       its last branches newest first with symbols (--symbols,\n"
	"                       --image, --system-map and --kaslr-slide apply); no other\n"
	"                       output option goes with it. Exit status 2 when DIR has none\n"
	"  --cpl all|user|kernel  only branch records from CPL > 0 (user) or CPL 0 (kernel);\n"
	"                       other records are kept (default all)\n"
	"  --summary            text and jsonl: then print a summary of the vCPUs decoded\n"
	"                       (--task, --crashed, --cpl and --last do not narrow it):\n"
	"                       records, branches, gaps, losses, task switches, the tasks\n"
	"                       seen and their exit codes\n"
	"  --lines              text: add the source file and line of each address when\n"
	"                       the image has DWARF line information\n"
	"  --image ELF          take symbols from ELF instead of the image vm.json names\n"
	"  --symbols PATH       ELF files for the programs of a Linux guest's tasks: PATH is\n"
	"                       a file or a directory searched recursively (a guest's root\n"
	"                       file system, say); repeatable. A task's file is the one with\n"
	"                       its build ID, else its path (also below PATH), else its name;\n"
	"                       a PIE or shared object only when its load base is known\n"
	"  --system-map FILE    the guest kernel's System.map instead of the one vm.json names\n"
	"  --kaslr-slide N      the guest kernel's KASLR slide in bytes (decimal, or hex with\n"
	"                       0x; may be negative) instead of vm.json's kaslr_slide\n"
	"  --quiet              no progress line: without it, a decode that lasts more than\n"
	"                       a second shows one on stderr when stderr is a terminal and\n"
	"                       the output (stdout, or -o's FILE) is not\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 success, 2 bad arguments or a missing or invalid trace directory\n"
	"(a truncated or corrupted ring file is reported with its name and offset); also 2\n"
	"when a ring file, events.jsonl, the image or a file named by an option could not be\n"
	"read: each is reported and the rest is decoded.\n";

struct decode_opts {
	const char *dir;
	const char *output;     /* -o FILE, or NULL for stdout */
	const char *image;
	const char **tasks;     /* --task keys */
	size_t nr_tasks;
	uint32_t *ids;          /* the --task keys that are pids: of threads, or thread groups */
	size_t nr_ids;
	const char **symbols;   /* --symbols PATHs */
	size_t nr_symbols;
	const char *system_map;
	bool kaslr_slide_set;
	int64_t kaslr_slide;
	bool crashed;
	bool crash;
	int cpl;        /* -1 all, 0 kernel, 3 user */
	enum export_format format;
	int vcpu;
	bool last_set;
	uint64_t last;
	bool summary;
	bool lines;
	bool quiet;
};

/*
 * The records of --last N: a FIFO that holds the N newest branch records and the records
 * among and after them, so memory stays bounded by N (plus the escapes in between). Its
 * capacity is a power of two: positions wrap with a mask, every record goes through it.
 */
struct record_fifo {
	struct decoded_record *buf;
	size_t cap, head, len;
	uint64_t branches;
};

static struct decoded_record *fifo_at(struct record_fifo *q, size_t i)
{
	return &q->buf[(q->head + i) & (q->cap - 1)];
}

static void fifo_pop(struct record_fifo *q)
{
	if (fifo_at(q, 0)->type == DECODED_BRANCH)
		q->branches--;
	q->head = (q->head + 1) & (q->cap - 1);
	q->len--;
}

/* Where the next record goes: it is decoded there, then taken by fifo_push() or not. */
static struct decoded_record *fifo_tail(struct record_fifo *q)
{
	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256, i;
		struct decoded_record *buf = malloc(cap * sizeof(*buf));

		if (!buf)
			return NULL;
		for (i = 0; i < q->len; i++)
			buf[i] = *fifo_at(q, i);
		free(q->buf);
		q->buf = buf;
		q->cap = cap;
		q->head = 0;
	}
	return fifo_at(q, q->len);
}

/* Takes the record at fifo_tail(), then drops what precedes the @last newest branches. */
static void fifo_push(struct record_fifo *q, uint64_t last)
{
	if (fifo_at(q, q->len++)->type != DECODED_BRANCH)
		return;
	if (++q->branches > last) {
		/* Drop the oldest branch and whatever preceded the next one. */
		do
			fifo_pop(q);
		while (q->branches > last);
		while (q->len && fifo_at(q, 0)->type != DECODED_BRANCH)
			fifo_pop(q);
	}
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

/* A signed byte count: decimal, or hex with 0x, either with a leading '-'. */
static int parse_slide(const char *s, int64_t *v)
{
	const char *digits = s + (*s == '-');
	int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
	char *end;

	if (!isxdigit((unsigned char)digits[base == 16 ? 2 : 0]))
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, &end, base);
	return errno || *end ? -EINVAL : 0;
}

static void free_opts(struct decode_opts *o)
{
	free(o->tasks);
	free(o->symbols);
	free(o->ids);
	o->tasks = o->symbols = NULL;
	o->ids = NULL;
}

/* A --task key that is a decimal pid a thread record can carry (32 bits), as procmap reads it. */
static bool thread_id(const char *key, uint32_t *id)
{
	long long v;
	char *end;

	if (!*key)
		return false;
	errno = 0;
	v = strtoll(key, &end, 10);
	if (errno || *end || v < 0 || v > UINT32_MAX)
		return false;
	*id = (uint32_t)v;
	return true;
}

static int parse_args(int argc, char **argv, struct decode_opts *o)
{
	enum { OPT_FORMAT = 256, OPT_VCPU, OPT_LAST, OPT_TASK, OPT_SUMMARY, OPT_IMAGE, OPT_LINES,
	       OPT_CRASHED, OPT_CPL, OPT_SYMBOLS, OPT_SYSTEM_MAP, OPT_KASLR_SLIDE, OPT_QUIET,
	       OPT_CRASH };
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "last", required_argument, NULL, OPT_LAST },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "crashed", no_argument, NULL, OPT_CRASHED },
		{ "crash", no_argument, NULL, OPT_CRASH },
		{ "cpl", required_argument, NULL, OPT_CPL },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "system-map", required_argument, NULL, OPT_SYSTEM_MAP },
		{ "kaslr-slide", required_argument, NULL, OPT_KASLR_SLIDE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	memset(o, 0, sizeof(*o));
	o->vcpu = -1;
	o->cpl = -1;
	/* Each repeatable option holds fewer values than there are arguments. */
	o->tasks = calloc((size_t)argc + 1, sizeof(*o->tasks));
	o->symbols = calloc((size_t)argc + 1, sizeof(*o->symbols));
	o->ids = calloc((size_t)argc + 1, sizeof(*o->ids));
	if (!o->tasks || !o->symbols || !o->ids) {
		fprintf(stderr, "vbts decode: out of memory\n");
		return -ENOMEM;
	}
	optind = 0; /* full re-initialisation: the command may run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (export_format__parse(optarg, &o->format)) {
				char q[256];

				fprintf(stderr, "vbts decode: unknown format '%s' (%s)\n",
					escape__str(q, sizeof(q), optarg), FORMAT_NAMES);
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
			o->tasks[o->nr_tasks++] = optarg;
			if (thread_id(optarg, &o->ids[o->nr_ids]))
				o->nr_ids++;
			break;
		case OPT_SYMBOLS:
			o->symbols[o->nr_symbols++] = optarg;
			break;
		case OPT_SYSTEM_MAP:
			o->system_map = optarg;
			break;
		case OPT_KASLR_SLIDE:
			if (parse_slide(optarg, &o->kaslr_slide)) {
				fprintf(stderr, "vbts decode: bad --kaslr-slide '%s' "
						"(bytes, decimal or 0x hex)\n", optarg);
				return -EINVAL;
			}
			o->kaslr_slide_set = true;
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
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_CRASHED:
			o->crashed = true;
			break;
		case OPT_CRASH:
			o->crash = true;
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
		case 'o':
			o->output = optarg;
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
	if (o->summary && !export_format__records(o->format)) {
		fprintf(stderr, "vbts decode: --summary goes with --format text or jsonl only\n");
		return -EINVAL;
	}
	if (o->crash && (o->nr_tasks || o->crashed || o->summary || o->last_set ||
			 o->vcpu >= 0 || o->cpl >= 0 || o->lines || o->format != EXPORT_TEXT)) {
		fprintf(stderr, "vbts decode: --crash goes with no --task, --crashed, --summary, "
				"--last, --vcpu, --cpl, --lines or --format\n");
		return -EINVAL;
	}
	if (o->crash && o->output) {
		fprintf(stderr, "vbts decode: --crash prints to stdout: no -o\n");
		return -EINVAL;
	}
	if (o->nr_tasks && o->crashed) {
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

/* The records in the windows of the rings of @vcpu (-1: all), for the progress line. */
static uint64_t trace_records(const struct trace_dir *t, int vcpu)
{
	uint64_t total = 0, first, end;

	for (unsigned int i = 0; i < trace_dir__nr_vcpus(t); i++) {
		if (vcpu >= 0 && trace_dir__vcpu_id(t, i) != (uint32_t)vcpu)
			continue;
		trace_dir__window(t, i, &first, &end);
		total += end - first;
	}
	return total;
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

/*
 * For the --task keys @keys[i] not @found[i] in events.jsonl, all pids: whether the thread
 * records of the trace (every vCPU) name a thread of that pid or tgid, into @found[i]. A pass
 * over the records, until each is found; *@any: whether the trace has thread records at all
 * (when a key was not found). Returns 0 or -errno.
 */
static int find_threads(struct trace_dir *t, const char *const *keys, bool *found, size_t nr,
			bool *any)
{
	struct decoder *d;
	struct decoded_record r;
	uint32_t id;
	size_t left = 0;
	int ret = 0;

	for (size_t i = 0; i < nr; i++)
		left += !found[i] && thread_id(keys[i], &id);
	if (!left)
		return 0;
	d = trace_dir__decoder(t, -1);
	if (!d)
		return -errno;
	while (left && (ret = decoder__next(d, &r)) > 0) {
		if (r.type != DECODED_THREAD)
			continue;
		*any = true;
		for (size_t i = 0; i < nr; i++) {
			if (found[i] || !thread_id(keys[i], &id))
				continue;
			if (id == r.thread_pid || id == r.thread_tgid) {
				found[i] = true;
				left--;
			}
		}
	}
	decoder__free(d);
	return ret < 0 ? ret : 0;
}

/* --crash: the crash reports, symbolized with the trace's tables; the exit status. */
static int print_crashes(struct trace_dir *t, const struct decode_opts *o)
{
	struct annotator *a = annotator__new(trace_dir__procmap(t), trace_dir__symbolizer(t));
	char err[1024];
	int ret;

	if (!a) {
		fprintf(stderr, "vbts decode: out of memory\n");
		return 1;
	}
	ret = crash_print__dir(stdout, o->dir, a, trace_dir__procmap(t), err, sizeof(err));
	annotator__free(a);
	if (fflush(stdout) && ret >= 0) {
		fprintf(stderr, "vbts decode: write error: %s\n", strerror(errno));
		return 1;
	}
	if (ret < 0) {
		char q[256];

		fprintf(stderr, "vbts decode: %s: %s\n", escape__str(q, sizeof(q), o->dir), err);
		return ret == -EIO ? 1 : 2;
	}
	return trace_dir__damaged(t) ? 2 : 0;
}

/*
 * The processes --task and --crashed select, a flag per process into *@want (NULL when they
 * select nothing). Returns 0, or the exit status of decode (1 out of memory, 2 bad input) after
 * saying why on stderr.
 */
static int select_tasks(struct trace_dir *t, const struct decode_opts *o,
			const struct procmap *pm, bool **want)
{
	const struct procmap_task *crashed;
	bool *found = NULL, threads = false;
	size_t i, n = procmap__nr_processes(pm);
	int ret, status = 0;

	*want = NULL;
	if (!o->nr_tasks && !o->crashed)
		return 0;
	*want = calloc(n ? n : 1, sizeof(**want));
	found = calloc(o->nr_tasks ? o->nr_tasks : 1, sizeof(*found));
	if (!*want || !found) {
		fprintf(stderr, "vbts decode: out of memory\n");
		status = 1;
		goto out;
	}
	for (i = 0; i < o->nr_tasks; i++)
		found[i] = procmap__select(pm, o->tasks[i], *want);
	/* A pid no process of events.jsonl has may be a thread's the trace names. */
	ret = find_threads(t, o->tasks, found, o->nr_tasks, &threads);
	if (ret < 0) {
		fprintf(stderr, "vbts decode: %s: %s\n", o->dir, strerror(-ret));
		status = ret == -ENOMEM ? 1 : 2;
		goto out;
	}
	for (i = 0; i < o->nr_tasks; i++) {
		if (!found[i]) {
			char q[256];

			fprintf(stderr, "vbts decode: %s: no task '%s' in events.jsonl%s\n", o->dir,
				escape__str(q, sizeof(q), o->tasks[i]),
				threads ? " nor a thread of that pid in the trace" : "");
			status = 2;
			goto out;
		}
	}
	if (o->crashed) {
		crashed = procmap__crashed(pm);
		if (!crashed) {
			fprintf(stderr, "vbts decode: %s: no crashed task in events.jsonl\n", o->dir);
			status = 2;
			goto out;
		}
		(*want)[crashed->process] = true;
	}
out:
	free(found);
	return status;
}

/* A sealed trace that does not verify: one line on stderr, and it is decoded all the same. */
static void warn_unverified(const char *dir)
{
	struct seal_report *r;
	char err[256], q[512];

	if (seal_verify__dir(dir, NULL, &r, err, sizeof(err)) < 0)
		return; /* not a directory: nothing sealed */
	if (r->verdict == SEAL_FAILED)
		fprintf(stderr, "vbts decode: warning: %s is sealed but does not verify (%" PRIu64
			" problem%s: see vbts verify)\n", escape__str(q, sizeof(q), dir),
			r->nr_tampered, r->nr_tampered == 1 ? "" : "s");
	seal_report__free(r);
}

static int decode(int argc, char **argv)
{
	struct trace_dir_options topts = { .warn = print_warning };
	char err[TRACE_DIR_ERR_MAX];
	struct trace_summary sum = { 0 };
	bool *want = NULL;
	struct record_fifo fifo = { 0 };
	struct progress pg = { .next = UINT64_MAX };
	struct decoded_record rec;
	uint64_t decoded = 0;
	struct decode_opts o;
	struct exporter_options eo = { 0 };
	struct exporter *e = NULL;
	struct trace_dir *t;
	struct decoder *d = NULL;
	FILE *out = stdout;
	int ret, status = 0;
	size_t i;

	ret = parse_args(argc, argv, &o);
	if (ret) {
		free_opts(&o);
		return ret > 0 ? 0 : 2;
	}
	if (export_format__binary(o.format) && !o.output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "vbts decode: --format %s writes binary data: redirect stdout to "
				"a file\n", export_format__name(o.format));
		free_opts(&o);
		return 2;
	}
	topts.image = o.image;
	topts.no_symbols = !export_format__symbols(o.format);
	topts.symbol_paths = o.symbols;
	topts.nr_symbol_paths = o.nr_symbols;
	topts.system_map = o.system_map;
	topts.kaslr_slide = o.kaslr_slide;
	topts.kaslr_slide_set = o.kaslr_slide_set;
	t = trace_dir__open(o.dir, &topts, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "vbts decode: %s\n", err);
		free_opts(&o);
		return 2;
	}
	warn_unverified(o.dir);
	if (o.crash) {
		status = print_crashes(t, &o);
		goto out_close;
	}
	if (o.output) {
		out = fopen(o.output, "w");
		if (!out) {
			char q[256];

			fprintf(stderr, "vbts decode: %s: %s\n",
				escape__str(q, sizeof(q), o.output), strerror(errno));
			status = 2;
			goto out_close;
		}
	}
	eo.out = out;
	eo.format = o.format;
	eo.procmap = trace_dir__procmap(t);
	eo.symbolizer = trace_dir__symbolizer(t);
	eo.lines = o.lines;
	e = exporter__new(&eo);
	if (!e) {
		fprintf(stderr, "vbts decode: out of memory\n");
		status = 1;
		goto out_close;
	}
	status = select_tasks(t, &o, eo.procmap, &want);
	if (status)
		goto out_close;
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
	/* Records to a terminal: a progress line there too would break them. */
	progress__init(&pg, STDERR_FILENO, "vbts decode", "records", trace_records(t, o.vcpu),
		       o.quiet || isatty(fileno(out)), PROGRESS_DELAY_MS);
	for (;;) {
		/* With --last, each record is decoded where the FIFO keeps it: no copy. */
		struct decoded_record *r = o.last ? fifo_tail(&fifo) : &rec;

		if (!r)
			goto out_nomem;
		ret = decoder__next(d, r);
		if (ret <= 0)
			break;
		progress__update(&pg, ++decoded);
		if (o.summary && trace_summary__add(&sum, r))
			goto out_nomem;
		if (want && !trace_dir__task_selects(eo.procmap, r, want, o.ids, o.nr_ids,
						     exporter__task(e, r)))
			continue;
		if (!cpl_matches(r, o.cpl))
			continue;
		if (o.last_set) {
			if (o.last)
				fifo_push(&fifo, o.last);
			continue;
		}
		ret = exporter__record(e, r);
		if (ret)
			goto out_write;
	}
	progress__end(&pg);
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
	for (; i < fifo.len; i++) {
		ret = exporter__record(e, fifo_at(&fifo, i));
		if (ret)
			goto out_write;
	}
	ret = o.summary ? exporter__summary(e, &sum) : exporter__finish(e);
	if (ret)
		goto out_write;
	if (fflush(out)) {
		ret = -errno;
		goto out_write;
	}
	/* The rest was decoded; what could not be read was reported when the trace opened. */
	if (trace_dir__damaged(t))
		status = 2;
	goto out_free;

out_write:
	progress__end(&pg);
	if (ret == -ENOMEM)
		goto out_nomem;
	fprintf(stderr, "vbts decode: write error: %s\n", strerror(errno));
	status = 1;
	goto out_free;
out_nomem:
	progress__end(&pg);
	fprintf(stderr, "vbts decode: out of memory\n");
	status = 1;
out_free:
	free(fifo.buf);
	trace_summary__release(&sum);
	decoder__free(d);
out_close:
	exporter__free(e);
	if (out && out != stdout && fclose(out) && !status) {
		fprintf(stderr, "vbts decode: write error: %s\n", strerror(errno));
		status = 1;
	}
	free(want);
	free_opts(&o);
	trace_dir__close(t);
	return status;
}

const struct vbts_command cmd_decode = {
	.name = "decode",
	.summary = "print or export the branch records of a trace directory",
	.usage = decode_usage,
	.fn = decode,
};
