// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-trace-dir.c - libFuzzer target: a trace directory (vm.json, events.jsonl, ring files)
 * through trace_dir__open(), the process map and `vbts decode`'s decoder and exporters.
 *
 * An input is vm.json, then optional sections, each introduced by a marker line:
 *   <vm.json bytes>
 *   "\n#events\n" <events.jsonl bytes>     (sections of this kind are concatenated)
 *   "\n#ring\n" <vcpuN.ring bytes>         (vcpu0.ring, vcpu1.ring, ... up to MAX_RINGS)
 * Without a ring section, vcpu0.ring is a small valid ring written by the ring writer, so that
 * inputs reach events.jsonl. The files are written to a directory of this process.
 *
 * Beyond the sanitizers it checks: a refused directory gets one error line; every task the
 * process map holds is found again by name and by CR3; the text output holds only printable
 * ASCII and newlines (guest strings are escaped before they reach a terminal) and every jsonl
 * line is a JSON object.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "fuzz.h"
#include "ring-writer.h"
#include "trace-dir.h"

#define MAX_RINGS 4

static const char events_mark[] = "\n#events\n";
static const char ring_mark[] = "\n#ring\n";

static char dir[PATH_MAX];
static uint8_t *default_ring;
static size_t default_ring_len;

static void dir_file(char *path, const char *name)
{
	snprintf(path, PATH_MAX, "%s/%s", dir, name);
}

static void ring_name(char *name, unsigned int i)
{
	snprintf(name, 32, "vcpu%u.ring", i);
}

static void clear_dir(void)
{
	char path[PATH_MAX], name[32];

	dir_file(path, "vm.json");
	unlink(path);
	dir_file(path, "events.jsonl");
	unlink(path);
	for (unsigned int i = 0; i < MAX_RINGS; i++) {
		ring_name(name, i);
		dir_file(path, name);
		unlink(path);
	}
}

static void remove_dir(void)
{
	clear_dir();
	rmdir(dir);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	FILE *f = fopen(path, "rbe");

	if (!f || fstat(fileno(f), &st))
		abort();
	buf = malloc((size_t)st.st_size);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		abort();
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

/* A closed ring of one task's run: what most traces look like. */
static void make_default_ring(void)
{
	static const struct vbts_record branches[] = {
		{ 0x401000, 0x401100, (3ULL << VBTS_REC_CPL_SHIFT) | VBTS_REC_CPL_VALID |
				      ((uint64_t)VBTS_BR_CALL << VBTS_REC_KIND_SHIFT) },
		{ 0x401120, 0x401004, (3ULL << VBTS_REC_CPL_SHIFT) | VBTS_REC_CPL_VALID |
				      ((uint64_t)VBTS_BR_RET << VBTS_REC_KIND_SHIFT) },
	};
	struct ring_writer_config cfg = { .capacity = 16, .vm_id = 0xab };
	struct ring_writer *w;
	char path[PATH_MAX];

	dir_file(path, "vcpu0.ring");
	w = ring_writer__create(path, &cfg);
	if (!w)
		abort();
	ring_writer__escape(w, VBTS_ESC_START, 0, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	ring_writer__escape(w, VBTS_ESC_TASK_ARRIVE, 0x203000, 100);
	for (size_t i = 0; i < sizeof(branches) / sizeof(branches[0]); i++)
		ring_writer__append(w, &branches[i]);
	ring_writer__escape(w, VBTS_ESC_TASK_DEPART, 0x203000, 200);
	ring_writer__escape(w, VBTS_ESC_STOP, 300, 0);
	if (ring_writer__close(w))
		abort();
	default_ring = read_file(path, &default_ring_len);
	unlink(path);
}

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/vbts-fuzz-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	devnull = fopen("/dev/null", "we");
	if (!mkdtemp(dir) || !devnull)
		abort();
	atexit(remove_dir);
	make_default_ring();
	return 0;
}

static void write_file(const char *name, const uint8_t *data, size_t size, bool append)
{
	char path[PATH_MAX];
	FILE *f;

	dir_file(path, name);
	f = fopen(path, append ? "abe" : "wbe");
	FUZZ_ASSERT(f);
	FUZZ_ASSERT(fwrite(data, 1, size, f) == size || !size);
	FUZZ_ASSERT(fclose(f) == 0);
}

/* The next marker at or after @p: its kind (0 events, 1 ring) and position, or -1. */
static int next_mark(const uint8_t *p, const uint8_t *end, const uint8_t **at)
{
	const uint8_t *e = memmem(p, (size_t)(end - p), events_mark, sizeof(events_mark) - 1);
	const uint8_t *r = memmem(p, (size_t)(end - p), ring_mark, sizeof(ring_mark) - 1);

	if (!e && !r)
		return -1;
	if (e && (!r || e < r)) {
		*at = e;
		return 0;
	}
	*at = r;
	return 1;
}

/* Splits the input into the files of the trace directory. */
static void write_trace(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size, *at;
	unsigned int rings = 0;
	int kind = -1, next;
	char name[32];

	clear_dir();
	for (;;) {
		next = next_mark(p, end, &at);
		if (next < 0)
			at = end;
		if (kind < 0) {
			write_file("vm.json", p, (size_t)(at - p), false);
		} else if (kind == 0) {
			write_file("events.jsonl", p, (size_t)(at - p), true);
		} else if (rings < MAX_RINGS) {
			ring_name(name, rings++);
			write_file(name, p, (size_t)(at - p), false);
		}
		if (next < 0)
			break;
		kind = next;
		p = at + (next ? sizeof(ring_mark) : sizeof(events_mark)) - 1;
	}
	if (!rings)
		write_file("vcpu0.ring", default_ring, default_ring_len, false);
}

static void count_warning(void *ctx, const char *line)
{
	(*(unsigned long *)ctx)++;
}

/* Output meant for a terminal: printable ASCII and newlines only. */
static void check_text(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		FUZZ_ASSERT(c == '\n' || (c >= 0x20 && c < 0x7f));
	}
}

/* jsonl: every line one JSON object. */
static void check_jsonl(char *buf, size_t len)
{
	char *line = buf, *nl;

	FUZZ_ASSERT(!len || buf[len - 1] == '\n');
	while (line < buf + len) {
		json_error_t jerr;
		json_t *j;

		nl = memchr(line, '\n', (size_t)(buf + len - line));
		/* A corrupt ring may hold times of 2^63 or more: valid JSON all the same. */
		j = json_loadb(line, (size_t)(nl - line), JSON_DECODE_INT_AS_REAL, &jerr);
		if (!json_is_object(j))
			fprintf(stderr, "jsonl output line: %.*s\n%s\n", (int)(nl - line), line,
				jerr.text);
		FUZZ_ASSERT(json_is_object(j));
		json_decref(j);
		line = nl + 1;
	}
}

/* `vbts decode DIR [--vcpu N] [--format F] --summary`, output checked. */
static void decode(struct trace_dir *t, int vcpu, enum export_format format)
{
	struct exporter_options eo = {
		.format = format,
		.procmap = trace_dir__procmap(t),
	};
	struct exporter *e;
	struct trace_summary sum = { 0 };
	struct decoded_record rec;
	struct decoder *d;
	size_t len = 0;
	char *buf = NULL;
	int ret;

	d = trace_dir__decoder(t, vcpu);
	FUZZ_ASSERT(d);
	eo.out = open_memstream(&buf, &len);
	FUZZ_ASSERT(eo.out);
	e = exporter__new(&eo);
	FUZZ_ASSERT(e);
	while ((ret = decoder__next(d, &rec)) > 0) {
		FUZZ_ASSERT(rec.type < DECODED_TYPE_MAX);
		FUZZ_ASSERT(vcpu < 0 || rec.vcpu == (uint32_t)vcpu);
		FUZZ_ASSERT(trace_summary__add(&sum, &rec) == 0);
		exporter__task(e, &rec);
		FUZZ_ASSERT(exporter__record(e, &rec) == 0);
	}
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(exporter__summary(e, &sum) == 0);
	exporter__free(e);
	FUZZ_ASSERT(fclose(eo.out) == 0);
	if (format == EXPORT_TEXT)
		check_text(buf, len);
	else
		check_jsonl(buf, len);
	free(buf);
	trace_summary__release(&sum);
	decoder__free(d);
}

/* Every task is found by its name or pid and by its CR3 at its start. */
static void check_procmap(const struct procmap *pm)
{
	size_t n = procmap__nr_tasks(pm);
	const struct procmap_task *t, *c;

	for (size_t i = 0; i < n && i < 64; i++) {
		t = procmap__task(pm, i);
		FUZZ_ASSERT(t && t->name);
		FUZZ_ASSERT(procmap__find(pm, t->name));
		c = procmap__lookup(pm, t->cr3, t->start, true);
		FUZZ_ASSERT(c && c->cr3 == t->cr3 && c->start <= t->start);
		FUZZ_ASSERT(procmap__lookup(pm, t->cr3, 0, false));
	}
	c = procmap__crashed(pm);
	FUZZ_ASSERT(!c || (c->exited && c->exit_code >= 128));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long warnings = 0;
	struct trace_dir_options opts = {
		.no_symbols = true,
		.warn = count_warning,
		.warn_ctx = &warnings,
	};
	char err[TRACE_DIR_ERR_MAX];
	struct trace_dir *t;

	write_trace(data, size);
	t = trace_dir__open(dir, &opts, err, sizeof(err));
	if (!t) {
		FUZZ_ASSERT(err[0] && !strchr(err, '\n'));
		return 0;
	}
	check_procmap(trace_dir__procmap(t));
	decode(t, -1, EXPORT_TEXT);
	decode(t, -1, EXPORT_JSONL);
	for (unsigned int i = 0; i < trace_dir__nr_vcpus(t); i++)
		decode(t, (int)trace_dir__vcpu_id(t, i), EXPORT_JSONL);
	trace_dir__close(t);
	return 0;
}
