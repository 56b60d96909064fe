// SPDX-License-Identifier: GPL-2.0
/*
 * test-scale.c - the decoder's task bookkeeping on hostile traces (trace-gen.h): tens of
 * thousands of distinct CR3 arrivals, of tasks and exit events, of tasks sharing one CR3.
 * The work is counted (procmap-int.h, struct trace_summary's probes) and bounded by
 * C n log n, far below what a quadratic search does; the results are checked against what
 * the trace was built to contain, against the process map's plain reference paths (with
 * thread announcements too), and against `vbts decode` itself. And the memory `vbts decode`
 * takes on a trace far larger than it may keep resident.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "commands.h"

#include "decoder-test.h"
#include "export.h"
#include "procmap-int.h"
#include "trace-dir.h"
#include "trace-gen.h"

/*
 * Loops over records test with if () and ck_abort_msg(): Check passes a message for every
 * ck_assert*() that holds, and unpacks them in time quadratic in their number.
 */

/*
 * Records of the hostile traces whose work is counted: a quadratic search does n^2 / 4 to
 * n^2 / 2 probes, 30 to 1000 times the bounds below, which are 10 times what the binary
 * searches (3 n log2 n) and the hash index (3 n) measure.
 */
#define SCALE_RECORDS (1u << 16)
#define SCALE_LOG2 16
#define PROCMAP_PROBES_MAX (32ULL * SCALE_RECORDS * SCALE_LOG2)
#define SUMMARY_PROBES_MAX (32ULL * SCALE_RECORDS)

/* Records of the traces decoded by the quadratic reference paths too. */
#define REFERENCE_RECORDS (1u << 12)

struct decoded_dir {
	char *out;              /* text records and summary, as `vbts decode --summary` */
	uint64_t probes;        /* procmap work */
	uint64_t summary_probes;
	uint64_t tasks, switches, records;
	int64_t crashed_pid;    /* -1: none */
};

/*
 * Decodes @dir through the library as `vbts decode --summary DIR` does (text, and without
 * symbols, as vm.json names no image), with the process map's work counted.
 */
static void decode_dir(const char *dir, bool reference, struct decoded_dir *res)
{
	struct trace_dir_options opts = { .no_symbols = true };
	struct trace_summary sum = { 0 };
	struct exporter_options eo = { .format = EXPORT_TEXT };
	struct exporter *e;
	const struct procmap_task *crashed;
	char err[TRACE_DIR_ERR_MAX], path[256];
	struct decoded_record r;
	struct procmap *pm;
	struct trace_dir *t;
	struct decoder *d;
	size_t len = 0;
	int ret, bad = 0;

	memset(res, 0, sizeof(*res));
	t = trace_dir__open(dir, &opts, err, sizeof(err));
	ck_assert_msg(t, "%s", err);
	pm = procmap__new();
	ck_assert_ptr_nonnull(pm);
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	ck_assert_int_eq(procmap__load(pm, path), 0);
	procmap__count_probes(pm, &res->probes);
	procmap__use_reference(pm, reference);
	eo.procmap = pm;
	eo.out = open_memstream(&res->out, &len);
	ck_assert_ptr_nonnull(eo.out);
	e = exporter__new(&eo);
	ck_assert_ptr_nonnull(e);
	d = trace_dir__decoder(t, -1);
	ck_assert_ptr_nonnull(d);
	while ((ret = decoder__next(d, &r)) > 0)
		bad |= trace_summary__add(&sum, &r) | exporter__record(e, &r);
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(bad, 0);
	ck_assert_int_eq(exporter__summary(e, &sum), 0);
	exporter__free(e);
	ck_assert_int_eq(fclose(eo.out), 0);
	crashed = procmap__crashed(pm);
	res->crashed_pid = crashed ? crashed->pid : -1;
	res->summary_probes = sum.probes;
	res->tasks = sum.tasks;
	res->switches = sum.switches;
	res->records = sum.records;
	trace_summary__release(&sum);
	decoder__free(d);
	procmap__free(pm);
	trace_dir__close(t);
}

/* The label a task-arrive line of a trace of @kind and @nr records must carry. */
static void expected_label(enum trace_gen_kind kind, uint64_t nr, uint64_t cr3, uint64_t time,
			   char *buf, size_t len)
{
	uint64_t tasks = nr / 2, i;

	switch (kind) {
	case TRACE_GEN_EXITS:
		i = (cr3 - trace_gen__exits_cr3(0)) >> 12;
		snprintf(buf, len, "t%" PRIu64 "[%" PRIu64 "]", i, i + 1);
		break;
	case TRACE_GEN_SHARED_CR3:
		/* Announced at 10 i: the last one at or before the time. */
		i = time / 10 < tasks ? time / 10 : tasks - 1;
		snprintf(buf, len, "s%" PRIu64 "[%" PRIu64 "]", i, i + 1);
		break;
	default:
		snprintf(buf, len, "cr3:0x%" PRIx64, cr3);
		break;
	}
}

/*
 * Every task-arrive line names the task the trace was built to have there, and every branch
 * line the task of the arrival before it.
 */
static void check_lines(enum trace_gen_kind kind, uint64_t nr, const char *out)
{
	char buf[256], label[64], want[64], current[64] = "-";
	uint64_t cr3, time, arrivals = 0, branches = 0;
	const char *line, *nl, *end = out + strlen(out);

	for (line = out; line < end && strncmp(line, "summary:", 8); line = nl + 1) {
		/*
		 * One line at a time: sscanf() and strchr() (under ASan) measure the whole
		 * string they are given.
		 */
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl || (size_t)(nl - line) >= sizeof(buf))
			ck_abort_msg("unterminated or long line at offset %td", line - out);
		memcpy(buf, line, (size_t)(nl - line));
		buf[nl - line] = '\0';
		if (sscanf(buf, "  vcpu0 ---- %63s task-arrive  cr3 0x%" SCNx64 " at %" SCNu64,
			   label, &cr3, &time) == 3) {
			expected_label(kind, nr, cr3, time, want, sizeof(want));
			if (strcmp(label, want))
				ck_abort_msg("%s: want %s", buf, want);
			strcpy(current, want);
			arrivals++;
		} else if (sscanf(buf, "  vcpu0 cpl3 %63s ", label) == 1) {
			if (strcmp(label, current))
				ck_abort_msg("%s: want %s", buf, current);
			branches++;
		}
	}
	ck_assert_uint_gt(arrivals, 0);
	ck_assert(kind == TRACE_GEN_DISTINCT_CR3 || branches > 0);
}

/* The "tasks:" line of the summary, as the trace was built. */
static char *expected_tasks_line(enum trace_gen_kind kind, uint64_t nr)
{
	uint64_t i, tasks = nr / 2;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fputs("tasks:", f);
	switch (kind) {
	case TRACE_GEN_DISTINCT_CR3:
		for (i = 0; i < nr - 1; i++)
			fprintf(f, " cr3:0x%" PRIx64, trace_gen__distinct_cr3(i));
		break;
	case TRACE_GEN_EXITS:
		for (i = 0; i < tasks; i++)
			fprintf(f, " t%" PRIu64 "[%" PRIu64 "] (exit %" PRIu64 ")", i, i + 1,
				i % 256);
		break;
	case TRACE_GEN_SHARED_CR3:
		fputs(" s0[1]", f); /* a CR3 without a time: its earliest task */
		break;
	default:
		break;
	}
	fputc('\n', f);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static const enum trace_gen_kind hostile_kinds[] = {
	TRACE_GEN_DISTINCT_CR3, TRACE_GEN_EXITS, TRACE_GEN_SHARED_CR3,
};

static void make_hostile(char *dir, size_t len, enum trace_gen_kind kind, uint64_t nr)
{
	snprintf(dir, len, "/tmp/vbts-scale-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(trace_gen__write(dir, kind, nr), 0);
}

/* The counts and the tasks of a decoded hostile trace, as it was built. */
static void check_decoded(enum trace_gen_kind kind, uint64_t nr, const struct decoded_dir *res)
{
	uint64_t tasks = nr / 2, last_crash = tasks;
	const char *p;
	char *want;

	ck_assert_uint_eq(res->records, nr);
	switch (kind) {
	case TRACE_GEN_DISTINCT_CR3:
		ck_assert_uint_eq(res->tasks, nr - 1);
		ck_assert_uint_eq(res->switches, nr - 1);
		break;
	case TRACE_GEN_EXITS:
		ck_assert_uint_eq(res->tasks, tasks);
		ck_assert_uint_eq(res->switches, tasks);
		/* Task i exits with code i % 256, later than task i - 1. */
		while (last_crash-- > 0 && last_crash % 256 < 128)
			;
		ck_assert_int_eq(res->crashed_pid, (int64_t)last_crash + 1);
		break;
	default:
		ck_assert_uint_eq(res->tasks, 1);
		ck_assert_uint_eq(res->switches, (nr + 2) / 4);
		break;
	}
	check_lines(kind, nr, res->out);
	p = strstr(res->out, "\ntasks:");
	ck_assert_ptr_nonnull(p);
	want = expected_tasks_line(kind, nr);
	ck_assert_msg(!strcmp(p + 1, want), "tasks line differs");
	free(want);
}

/* The work is bounded; `vbts decode --summary` prints the same. */
START_TEST(test_hostile_trace)
{
	enum trace_gen_kind kind = hostile_kinds[_i];
	char dir[64], *out, *err, *argv[] = { "decode", "--summary", dir, NULL };
	struct decoded_dir res;

	make_hostile(dir, sizeof(dir), kind, SCALE_RECORDS);
	decode_dir(dir, false, &res);
	ck_assert_msg(res.probes <= PROCMAP_PROBES_MAX, "process map: %" PRIu64 " probes",
		      res.probes);
	ck_assert_msg(res.summary_probes <= SUMMARY_PROBES_MAX, "summary: %" PRIu64 " probes",
		      res.summary_probes);
	check_decoded(kind, SCALE_RECORDS, &res);
	ck_assert_int_eq(run_decode(&out, &err, argv), 0);
	ck_assert_msg(!strcmp(out, res.out), "vbts decode output differs");
	free(out);
	free(err);
	free(res.out);
	remove_trace(dir);
}
END_TEST

/* The process map's reference paths decode a smaller trace to the same output. */
START_TEST(test_hostile_reference)
{
	enum trace_gen_kind kind = hostile_kinds[_i];
	struct decoded_dir fast, ref;
	char dir[64];

	make_hostile(dir, sizeof(dir), kind, REFERENCE_RECORDS);
	decode_dir(dir, false, &fast);
	decode_dir(dir, true, &ref);
	check_decoded(kind, REFERENCE_RECORDS, &ref);
	ck_assert_msg(!strcmp(fast.out, ref.out), "indexed and reference outputs differ");
	ck_assert_int_eq(fast.crashed_pid, ref.crashed_pid);
	free(fast.out);
	free(ref.out);
	remove_trace(dir);
}
END_TEST

/* ---- process map: indexed and reference paths on random maps ------------------------------ */

/* A small deterministic generator (xorshift64*), so a failure can be replayed. */
static uint64_t rnd(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

static void assert_same_task(const struct procmap_task *a, const struct procmap_task *b,
			     const char *what)
{
	if (!a || !b) {
		if (a != b)
			ck_abort_msg("%s: one side found no task", what);
		return;
	}
	/* Names are unique per announcement: the same name is the same entry. */
	if (strcmp(a->name, b->name) || a->pid != b->pid || a->cr3 != b->cr3 ||
	    a->start != b->start || a->exited != b->exited || a->index != b->index ||
	    a->process != b->process ||
	    (a->exited && (a->exit_code != b->exit_code || a->exit_time != b->exit_time)))
		ck_abort_msg("%s: %s vs %s", what, a->name, b->name);
}

/* Few distinct CR3s, pids and times: ties everywhere, the cases the orders must settle. */
/* The indexed and the reference map find the same tasks by pid and name, the same crash. */
static void assert_same_finds(const struct procmap *fast, const struct procmap *ref)
{
	char key[16];

	for (int pid = 0; pid <= 6; pid++) {
		snprintf(key, sizeof(key), "%d", pid);
		assert_same_task(procmap__find(fast, key), procmap__find(ref, key), "find");
		snprintf(key, sizeof(key), "n%d", pid);
		assert_same_task(procmap__find(fast, key), procmap__find(ref, key), "find");
	}
	assert_same_task(procmap__crashed(fast), procmap__crashed(ref), "crashed");
	ck_assert_uint_eq(procmap__nr_processes(fast), procmap__nr_processes(ref));
}

/* Now and then, while *@left allows, the same random exit in both maps. */
static void maybe_exit(struct procmap *fast, struct procmap *ref, uint64_t *state, size_t *left)
{
	int64_t epid, code;
	uint64_t time;

	if (!*left || !(rnd(state) % 2))
		return;
	epid = (int64_t)(rnd(state) % 6) + 1;
	code = (int64_t)(rnd(state) % 3) * 100;
	time = rnd(state) % 10;
	if (procmap__add_exit(fast, epid, code, time) || procmap__add_exit(ref, epid, code, time))
		ck_abort_msg("out of memory");
	(*left)--;
}

START_TEST(test_procmap_reference)
{
	uint64_t state = 0x9e3779b97f4a7c15ULL + (uint64_t)_i;

	for (int round = 0; round < 200; round++) {
		struct procmap *fast = procmap__new(), *ref = procmap__new();
		size_t nr = rnd(&state) % 40, nr_exits = rnd(&state) % 20;
		char name[32], key[32];

		ck_assert(fast && ref);
		procmap__use_reference(ref, true);
		for (size_t i = 0; i < nr; i++) {
			int64_t pid = (int64_t)(rnd(&state) % 5) + 1;
			uint64_t cr3 = (rnd(&state) % 4) << 12 | (rnd(&state) % 2) * 0x18;
			uint64_t start = rnd(&state) % 8;

			snprintf(name, sizeof(name), "n%zu", i);
			if (procmap__add(fast, pid, name, cr3, start) ||
			    procmap__add(ref, pid, name, cr3, start))
				ck_abort_msg("out of memory");
			/* Exits interleaved with announcements, as in events.jsonl. */
			maybe_exit(fast, ref, &state, &nr_exits);
		}
		for (int q = 0; q < 64; q++) {
			uint64_t cr3 = (rnd(&state) % 5) << 12, time = rnd(&state) % 10;
			bool valid = rnd(&state) % 4;

			assert_same_task(procmap__lookup(fast, cr3, time, valid),
					 procmap__lookup(ref, cr3, time, valid), "lookup");
		}
		for (size_t i = 0; i < nr; i++)
			assert_same_task(procmap__task(fast, i), procmap__task(ref, i), "task");
		assert_same_finds(fast, ref);
		for (int pid = 0; pid <= 6; pid++) {
			bool sf[40] = { 0 }, sr[40] = { 0 };

			snprintf(key, sizeof(key), "%d", pid);
			ck_assert_uint_eq(procmap__select(fast, key, sf),
					  procmap__select(ref, key, sr));
			ck_assert(!memcmp(sf, sr, sizeof(sf)));
		}
		procmap__free(fast);
		procmap__free(ref);
	}
}
END_TEST

/* Adds the same announcement to both maps. */
static void add_both(struct procmap *a, struct procmap *b, const struct procmap_task *t)
{
	if (procmap__add_task(a, t) || procmap__add_task(b, t))
		ck_abort_msg("out of memory");
}

/*
 * With thread announcements among the tasks (few pids, tgids and CR3s, so that they repeat
 * their owner's pid, continue processes and end them): the indexed and reference paths agree
 * on every query, thread lookups included, and CR3 lookups answer as without them.
 */
START_TEST(test_procmap_reference_threads)
{
	uint64_t state = 0x2545f4914f6cdd1dULL + (uint64_t)_i;

	for (int round = 0; round < 200; round++) {
		struct procmap *fast = procmap__new(), *ref = procmap__new();
		struct procmap *plain = procmap__new(), *plain_ref = procmap__new();
		size_t nr = rnd(&state) % 40, nr_exits = rnd(&state) % 20, nr_threads = 0;
		char name[32], key[32];

		ck_assert(fast && ref && plain && plain_ref);
		procmap__use_reference(ref, true);
		procmap__use_reference(plain_ref, true);
		for (size_t i = 0; i < nr; i++) {
			struct procmap_task t = {
				.pid = (int64_t)(rnd(&state) % 5) + 1,
				.cr3 = (rnd(&state) % 4) << 12,
				.start = rnd(&state) % 8,
				.tgid = (int64_t)(rnd(&state) % 3) + 1,
				.tgid_valid = rnd(&state) % 4,
				.thread = rnd(&state) % 2,
				.name = name,
			};

			snprintf(name, sizeof(name), "n%zu", i);
			add_both(fast, ref, &t);
			if (!t.thread)
				add_both(plain, plain_ref, &t);
			nr_threads += t.thread;
			maybe_exit(fast, ref, &state, &nr_exits);
		}
		ck_assert_uint_eq(procmap__nr_threads(fast), nr_threads);
		ck_assert_uint_eq(procmap__nr_tasks(fast), nr - nr_threads);
		for (int q = 0; q < 64; q++) {
			uint64_t cr3 = (rnd(&state) % 5) << 12, time = rnd(&state) % 10;
			int64_t pid = (int64_t)(rnd(&state) % 6) + 1;
			int64_t tgid = (int64_t)(rnd(&state) % 4);
			bool valid = rnd(&state) % 4;
			const struct procmap_task *t = procmap__lookup(fast, cr3, time, valid);
			const struct procmap_task *p = procmap__lookup(plain, cr3, time, valid);

			assert_same_task(t, procmap__lookup(ref, cr3, time, valid), "lookup");
			ck_assert(!t || !t->thread);
			ck_assert_msg(t ? p && !strcmp(t->name, p->name) : !p, "lookup: %s vs %s",
				      t ? t->name : "none", p ? p->name : "none");
			assert_same_task(procmap__lookup(plain_ref, cr3, time, valid), p, "plain");
			t = procmap__lookup_thread(fast, pid, tgid, time, valid);
			assert_same_task(t, procmap__lookup_thread(ref, pid, tgid, time, valid),
					 "lookup_thread");
			ck_assert(!t || (t->thread && t->pid == pid));
		}
		for (size_t i = 0; i < nr - nr_threads; i++)
			assert_same_task(procmap__task(fast, i), procmap__task(ref, i), "task");
		for (size_t i = 0; i < nr_threads; i++) {
			ck_assert(procmap__thread(fast, i)->thread);
			ck_assert_uint_eq(procmap__thread(fast, i)->index, i);
			assert_same_task(procmap__thread(fast, i), procmap__thread(ref, i),
					 "thread");
		}
		assert_same_finds(fast, ref);
		for (int k = 0; k <= 46; k++) {
			bool sf[40] = { 0 }, sr[40] = { 0 };

			if (k <= 6)
				snprintf(key, sizeof(key), "%d", k);
			else
				snprintf(key, sizeof(key), "n%d", k - 7);
			ck_assert_uint_eq(procmap__select(fast, key, sf),
					  procmap__select(ref, key, sr));
			ck_assert(!memcmp(sf, sr, sizeof(sf)));
		}
		procmap__free(fast);
		procmap__free(ref);
		procmap__free(plain);
		procmap__free(plain_ref);
	}
}
END_TEST

/* The announcement rules, spelled out: ties go to the later line of events.jsonl. */
START_TEST(test_procmap_ties)
{
	struct procmap *pm = procmap__new();

	ck_assert_ptr_nonnull(pm);
	ck_assert_int_eq(procmap__add(pm, 5, "first", 0x1000, 10), 0);
	ck_assert_int_eq(procmap__add(pm, 5, "second", 0x1000, 10), 0);
	ck_assert_int_eq(procmap__add(pm, 1, "early", 0x1000, 5), 0);
	ck_assert_int_eq(procmap__add(pm, 9, "late", 0x1000, 20), 0);
	ck_assert_int_eq(procmap__add_exit(pm, 5, 139, 15), 0);
	for (int reference = 0; reference < 2; reference++) {
		procmap__use_reference(pm, reference);
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 0, false)->name, "early");
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 4, true)->name, "early");
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 5, true)->name, "early");
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 10, true)->name, "second");
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 19, true)->name, "second");
		ck_assert_str_eq(procmap__lookup(pm, 0x1000, 20, true)->name, "late");
		ck_assert_ptr_null(procmap__lookup(pm, 0x2000, 20, true));
		/* The exit ends the task of its pid announced last before it. */
		ck_assert(procmap__lookup(pm, 0x1000, 10, true)->exited);
		ck_assert_str_eq(procmap__crashed(pm)->name, "second");
		ck_assert_str_eq(procmap__task(pm, 1)->name, "first"); /* time, then line order */
		ck_assert_str_eq(procmap__task(pm, 2)->name, "second");
		ck_assert_str_eq(procmap__find(pm, "5")->name, "first");
	}
	procmap__free(pm);
}
END_TEST

/* ---- summary ------------------------------------------------------------------------------ */

/* Distinct CR3s in the order first seen, repeats counted as switches only. */
START_TEST(test_summary_distinct)
{
	struct trace_summary sum = { 0 };
	struct decoded_record r = { .type = DECODED_TASK_ARRIVE, .cr3_valid = true };
	const uint64_t n = SCALE_RECORDS;

	for (int pass = 0; pass < 3; pass++) {
		for (uint64_t i = 0; i < n; i++) {
			/* The same low bits, the same high bits, and 0 among them. */
			r.cr3 = pass == 1 ? (n - 1 - i) << 40 : i << 40;
			if (trace_summary__add(&sum, &r))
				ck_abort_msg("out of memory");
		}
	}
	ck_assert_uint_eq(sum.switches, 3 * n);
	ck_assert_uint_eq(sum.tasks, n);
	ck_assert_uint_eq(sum.nr_cr3s, n);
	for (uint64_t i = 0; i < n; i++)
		if (sum.cr3s[i] != i << 40)
			ck_abort_msg("cr3s[%" PRIu64 "] = %#" PRIx64, i, sum.cr3s[i]);
	ck_assert_msg(sum.probes <= 3 * SUMMARY_PROBES_MAX, "%" PRIu64 " probes", sum.probes);
	trace_summary__release(&sum);
}
END_TEST

/* ---- memory ----------------------------------------------------------------------------- */

/*
 * The trace whose decode's memory is measured: 6 Mi records, 144 MiB of ring file. A reader
 * that keeps what it read resident grows by the whole file; one that keeps a window of it
 * grows by the window and the buffers, a few MiB. The bound is 10 times that and a fifth of
 * the file.
 */
#define MEMORY_RECORDS (6u << 20)
#define MEMORY_GROWTH_MAX_KIB (32u << 10)
/* Hang guard of one decode of that trace, in seconds. */
#define MEMORY_GUARD_S 60

/* A "Key:   N kB" line of /proc/self/status, in KiB; 0 when it is missing. */
static uint64_t status_kib(const char *key)
{
	char line[256];
	uint64_t v = 0;
	size_t n = strlen(key);
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Runs `vbts decode ARGS... DIR` in a child with stdout to /dev/null and returns by how much
 * its resident set grew at the peak, in KiB (the peak is reset first: a forked child starts
 * with its parent's).
 */
static uint64_t decode_growth_kib(const char *dir, const char *const *args)
{
	uint64_t growth = 0;
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[8];
		int argc = 0, fd = open("/dev/null", O_WRONLY), clear;
		uint64_t before;

		argv[argc++] = "decode";
		while (*args)
			argv[argc++] = (char *)*args++;
		argv[argc++] = (char *)dir;
		argv[argc] = NULL;
		signal(SIGALRM, SIG_DFL);
		alarm(MEMORY_GUARD_S);
		clear = open("/proc/self/clear_refs", O_WRONLY);
		/* "5": the peak resident set (VmHWM) starts again from the current one. */
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || clear < 0 ||
		    write(clear, "5", 1) != 1)
			_exit(99);
		close(clear);
		before = status_kib("VmRSS");
		status = cmd_decode.fn(argc, argv);
		fflush(stdout);
		growth = status_kib("VmHWM") - before;
		if (write(fds[1], &growth, sizeof(growth)) != sizeof(growth))
			_exit(99);
		_exit(status);
	}
	close(fds[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "decode status %#x", status);
	ck_assert_int_eq(read(fds[0], &growth, sizeof(growth)), sizeof(growth));
	close(fds[0]);
	return growth;
}

/* The resident set of a decode stays bounded whatever the size of the trace. */
START_TEST(test_decode_memory)
{
	static const char *const cases[][4] = {
		{ "--last", "10", NULL },
		{ "--format", "jsonl", NULL },
		{ "--summary", NULL },
	};
	char dir[] = "/tmp/vbts-memory-XXXXXX";
	uint64_t growth;

	/* valgrind keeps its own copy of what it tracks, and runs this far too slowly. */
	if (RUNNING_ON_VALGRIND)
		return;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(trace_gen__write(dir, TRACE_GEN_NORMAL, MEMORY_RECORDS), 0);
	growth = decode_growth_kib(dir, cases[_i]);
	remove_trace(dir);
	ck_assert_msg(growth < MEMORY_GROWTH_MAX_KIB,
		      "decode %s %s of %u records: resident set grew by %" PRIu64 " KiB",
		      cases[_i][0], cases[_i][1] ? cases[_i][1] : "", MEMORY_RECORDS, growth);
}
END_TEST

Suite *scale_suite(void)
{
	Suite *s = suite_create("scale");
	TCase *tc = tcase_create("core");

	/* A hang guard only: the bounds are on counted work. */
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_hostile_trace, 0,
			    (int)(sizeof(hostile_kinds) / sizeof(hostile_kinds[0])));
	tcase_add_loop_test(tc, test_hostile_reference, 0,
			    (int)(sizeof(hostile_kinds) / sizeof(hostile_kinds[0])));
	tcase_add_loop_test(tc, test_procmap_reference, 0, 4);
	tcase_add_loop_test(tc, test_procmap_reference_threads, 0, 4);
	tcase_add_test(tc, test_procmap_ties);
	tcase_add_test(tc, test_summary_distinct);
	suite_add_tcase(s, tc);
	tc = tcase_create("memory");
	/* A hang guard only: the bound is on memory. */
	tcase_set_timeout(tc, 2 * MEMORY_GUARD_S);
	tcase_add_loop_test(tc, test_decode_memory, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
