// SPDX-License-Identifier: GPL-2.0
/*
 * trace-gen.c - synthetic trace directories (see trace-gen.h), written through the real ring
 * writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring-writer.h"
#include "trace-gen.h"

static const char *const kind_names[TRACE_GEN_MAX] = {
	[TRACE_GEN_NORMAL] = "normal",
	[TRACE_GEN_DISTINCT_CR3] = "distinct-cr3",
	[TRACE_GEN_EXITS] = "exits",
	[TRACE_GEN_SHARED_CR3] = "shared-cr3",
};

enum trace_gen_kind trace_gen__kind(const char *name)
{
	unsigned int k;

	for (k = 0; k < TRACE_GEN_MAX; k++)
		if (!strcmp(name, kind_names[k]))
			break;
	return (enum trace_gen_kind)k;
}

static FILE *create_file(const char *dir, const char *name)
{
	char path[4096];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	return fopen(path, "wx");
}

static int close_file(FILE *f)
{
	int err = ferror(f);

	if (fclose(f) || err)
		return -EIO;
	return 0;
}

static void task_line(FILE *f, uint64_t time, uint64_t pid, const char *prefix, uint64_t i,
		      uint64_t cr3)
{
	fprintf(f,
		"{\"time\":%" PRIu64 ",\"vcpu\":0,\"event\":\"task\",\"pid\":%" PRIu64
		",\"name\":\"%s%" PRIu64 "\",\"cr3\":\"0x%" PRIx64 "\"}\n",
		time, pid, prefix, i, cr3);
}

static void exit_line(FILE *f, uint64_t time, uint64_t pid, uint64_t code)
{
	fprintf(f,
		"{\"time\":%" PRIu64 ",\"vcpu\":0,\"event\":\"exit\",\"pid\":%" PRIu64
		",\"code\":%" PRIu64 "}\n",
		time, pid, code);
}

static int write_events(const char *dir, enum trace_gen_kind kind, uint64_t nr)
{
	uint64_t i, tasks = nr / 2;
	FILE *f = create_file(dir, "events.jsonl");

	if (!f)
		return -errno;
	switch (kind) {
	case TRACE_GEN_NORMAL:
		for (i = 0; i < TRACE_GEN_NORMAL_TASKS; i++)
			task_line(f, 0, i + 1, "task", i, 0x100000 + (i << 12));
		for (i = 0; i < TRACE_GEN_NORMAL_TASKS; i++)
			exit_line(f, nr + 1, i + 1, 0);
		break;
	case TRACE_GEN_EXITS:
		for (i = 0; i < tasks; i++)
			task_line(f, 10 * i, i + 1, "t", i, trace_gen__exits_cr3(i));
		for (i = 0; i < tasks; i++)
			exit_line(f, 10 * tasks + i, i + 1, i % 256);
		break;
	case TRACE_GEN_SHARED_CR3:
		for (i = 0; i < tasks; i++)
			task_line(f, 10 * i, i + 1, "s", i, TRACE_GEN_ONE_CR3);
		break;
	default:
		break;
	}
	return close_file(f);
}

/* Record i (>= 1) of the ring; record 0 is START. */
static struct vbts_record ring_record(enum trace_gen_kind kind, uint64_t nr, uint64_t i)
{
	struct vbts_record br = {
		.from = 0x400000 + (i % 4096) * 16,
		.to = 0x500000 + (i % 1024) * 8,
		.flags = VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
			 ((uint64_t)VBTS_BR_JMP << VBTS_REC_KIND_SHIFT),
	};
	uint64_t tasks = nr / 2, t;

	switch (kind) {
	case TRACE_GEN_NORMAL:
		if (i % TRACE_GEN_NORMAL_SWITCH != 1)
			return br;
		t = i / TRACE_GEN_NORMAL_SWITCH % TRACE_GEN_NORMAL_TASKS;
		return vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, 0x100000 + (t << 12), i);
	case TRACE_GEN_DISTINCT_CR3:
		return vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE,
						trace_gen__distinct_cr3(i - 1), i);
	case TRACE_GEN_EXITS:
		if (i % 2 != 1)
			return br;
		t = (i / 2) % tasks;
		return vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, trace_gen__exits_cr3(t),
						10 * t + 5);
	case TRACE_GEN_SHARED_CR3:
		if (i % 4 != 1)
			return br;
		t = trace_gen__shared_time(i / 4, (nr + 2) / 4, tasks);
		return vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, TRACE_GEN_ONE_CR3, t);
	default:
		return br;
	}
}

static int write_ring(const char *dir, enum trace_gen_kind kind, uint64_t nr)
{
	struct ring_writer_config cfg = {
		.capacity = nr, .mode = VBTS_RING_WRAP, .vm_id = 0xab,
	};
	struct ring_writer *w;
	struct vbts_record rec;
	char path[4096];
	uint64_t i;
	int ret = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/vcpu0.ring", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	w = ring_writer__create(path, &cfg);
	if (!w)
		return -errno;
	rec = vbts_record__make_escape(VBTS_ESC_START, 0,
				       VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	for (i = 0; i < nr && !ret; i++) {
		ret = ring_writer__append(w, &rec);
		rec = ring_record(kind, nr, i + 1);
	}
	if (ring_writer__close(w) && !ret)
		ret = -EIO;
	return ret;
}

int trace_gen__write(const char *dir, enum trace_gen_kind kind, uint64_t nr)
{
	FILE *f;
	int ret;

	if ((unsigned int)kind >= TRACE_GEN_MAX || nr < 2 || nr > VBTS_ESC_AUX_MAX / 16)
		return -EINVAL;
	f = create_file(dir, "vm.json");
	if (!f)
		return -errno;
	fputs("{\"version\":1,\"vm_id\":\"00000000000000ab\",\"vcpus\":1}\n", f);
	ret = close_file(f);
	if (!ret)
		ret = write_events(dir, kind, nr);
	if (!ret)
		ret = write_ring(dir, kind, nr);
	return ret;
}
