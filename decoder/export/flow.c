// SPDX-License-Identifier: GPL-2.0
/*
 * flow.c - runs and call stacks per thread and vCPU (flow.h).
 *
 * Streams are found through an open-addressing table keyed by (vCPU, task, CR3, thread) with
 * a memo of the last stream of each vCPU: a record of the same vCPU, task and thread as the
 * one before it costs one comparison. The keys come from the trace (the guest chooses its
 * CR3s and its pids), so the hash multiplier is fixed but the table stays at most half full:
 * a forged trace can make probes long only by making as many streams, each of which had
 * branches or entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"

/* vCPUs whose last stream is remembered (by vCPU id modulo this), a power of two. */
#define STREAM_MEMO 64

struct flow {
	struct annotator *a;
	struct flow_ops ops;
	void *ctx;
	bool stack;
	struct flow_stream **streams;   /* in the order met */
	size_t nr_streams, alloc_streams;
	uint32_t *table;                /* 1 + index into streams, 0: empty */
	unsigned int table_bits;
	struct flow_stream *memo[STREAM_MEMO];
};

struct flow *flow__new(struct annotator *a, const struct flow_ops *ops, void *ctx, bool stack)
{
	struct flow *f = calloc(1, sizeof(*f));

	if (!f) {
		errno = ENOMEM;
		return NULL;
	}
	f->a = a;
	f->ops = *ops;
	f->ctx = ctx;
	f->stack = stack;
	return f;
}

void flow__free(struct flow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_streams; i++) {
		free(f->streams[i]->frames);
		free(f->streams[i]);
	}
	free(f->streams);
	free(f->table);
	free(f);
}

size_t flow__nr_streams(const struct flow *f)
{
	return f->nr_streams;
}

struct flow_stream *flow__stream_at(const struct flow *f, size_t i)
{
	return f->streams[i];
}

/* What tells streams apart: their vCPU, task, CR3 (of no task) and thread. */
struct stream_key {
	uint32_t vcpu;
	const struct procmap_task *task;
	uint64_t cr3;
	bool cr3_valid;
	uint32_t thread_pid, thread_tgid;
	bool thread_valid;
};

static size_t stream_slot(const struct flow *f, const struct stream_key *k)
{
	uint64_t h = ((uint64_t)(uintptr_t)k->task * 0xff51afd7ed558ccdULL) ^ k->cr3 ^
		     ((uint64_t)k->vcpu << 48);

	if (k->thread_valid)
		h ^= ((uint64_t)k->thread_tgid << 32 | k->thread_pid) * 0xc4ceb9fe1a85ec53ULL;
	return (size_t)((h * 0x9e3779b97f4a7c15ULL) >> (64 - f->table_bits));
}

static bool stream_is(const struct flow_stream *s, const struct stream_key *k)
{
	return s->vcpu == k->vcpu && s->task == k->task && s->cr3 == k->cr3 &&
	       s->cr3_valid == k->cr3_valid && s->thread_valid == k->thread_valid &&
	       s->thread_pid == k->thread_pid && s->thread_tgid == k->thread_tgid;
}

static void key_of_stream(const struct flow_stream *s, struct stream_key *k)
{
	k->vcpu = s->vcpu;
	k->task = s->task;
	k->cr3 = s->cr3;
	k->cr3_valid = s->cr3_valid;
	k->thread_pid = s->thread_pid;
	k->thread_tgid = s->thread_tgid;
	k->thread_valid = s->thread_valid;
}

/* The table, twice as large. Returns 0 or -ENOMEM. */
static int grow_table(struct flow *f)
{
	unsigned int bits = f->table_bits ? f->table_bits + 1 : 6;
	uint32_t *table = calloc((size_t)1 << bits, sizeof(*table));
	size_t mask = ((size_t)1 << bits) - 1, j;

	if (!table)
		return -ENOMEM;
	free(f->table);
	f->table = table;
	f->table_bits = bits;
	for (size_t i = 0; i < f->nr_streams; i++) {
		struct stream_key k;

		key_of_stream(f->streams[i], &k);
		for (j = stream_slot(f, &k); table[j]; j = (j + 1) & mask)
			;
		table[j] = (uint32_t)i + 1;
	}
	return 0;
}

struct flow_stream *flow__stream(struct flow *f, const struct decoded_record *r)
{
	const struct procmap_task *t = annotator__task(f->a, r);
	struct flow_stream **m = &f->memo[r->vcpu & (STREAM_MEMO - 1)], *s;
	/* Records of no known task are told apart by their CR3; a task's by the task alone. */
	struct stream_key k = {
		.vcpu = r->vcpu, .task = t,
		.cr3 = !t && r->cr3_valid ? r->cr3 : 0, .cr3_valid = !t && r->cr3_valid,
		.thread_pid = r->thread_valid ? r->thread_pid : 0,
		.thread_tgid = r->thread_valid ? r->thread_tgid : 0,
		.thread_valid = r->thread_valid,
	};
	size_t mask, i;

	if (*m && stream_is(*m, &k))
		return *m;
	if (2 * (f->nr_streams + 1) > ((size_t)1 << f->table_bits) || !f->table_bits) {
		if (f->nr_streams >= UINT32_MAX / 4 || grow_table(f))
			return NULL;
	}
	mask = ((size_t)1 << f->table_bits) - 1;
	for (i = stream_slot(f, &k); f->table[i]; i = (i + 1) & mask) {
		s = f->streams[f->table[i] - 1];
		if (stream_is(s, &k))
			return *m = s;
	}
	if (f->nr_streams == f->alloc_streams) {
		size_t alloc = f->alloc_streams ? 2 * f->alloc_streams : 16;
		struct flow_stream **p = realloc(f->streams, alloc * sizeof(*p));

		if (!p)
			return NULL;
		f->streams = p;
		f->alloc_streams = alloc;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->vcpu = k.vcpu;
	s->task = k.task;
	s->cr3 = k.cr3;
	s->cr3_valid = k.cr3_valid;
	s->thread_pid = k.thread_pid;
	s->thread_tgid = k.thread_tgid;
	s->thread_valid = k.thread_valid;
	s->index = f->nr_streams;
	f->streams[f->nr_streams++] = s;
	f->table[i] = (uint32_t)f->nr_streams;
	return *m = s;
}

int flow__function(struct flow *f, const struct procmap_task *task, uint64_t addr,
		   struct flow_frame *out)
{
	const struct annotator_addr *x = annotator__addr(f->a, task, addr, false);

	memset(out, 0, sizeof(*out));
	if (!x)
		return -ENOMEM;
	if (x->name) {
		out->name = x->name;
		out->text = x->name_text;
		out->text_len = x->name_text_len;
		out->start = addr - x->offset;
	} else {
		out->text = FLOW_UNKNOWN;
		out->text_len = sizeof(FLOW_UNKNOWN) - 1;
		out->start = addr;
	}
	return 0;
}

static int push(struct flow *f, struct flow_stream *s, const struct flow_frame *fn, bool call,
		const struct decoded_record *r)
{
	struct flow_frame *top;

	if (s->depth == FLOW_DEPTH_MAX) {
		s->hidden++;
		return 0;
	}
	if (s->depth == s->alloc) {
		unsigned int alloc = s->alloc ? 2 * s->alloc : 16;
		struct flow_frame *p = realloc(s->frames, alloc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->frames = p;
		s->alloc = alloc;
	}
	top = &s->frames[s->depth++];
	*top = *fn;
	top->branches = s->branches;
	top->time = r ? r->time : 0;
	top->time_valid = r && r->time_valid;
	top->user = 0;
	top->event = false;
	return f->ops.enter ? f->ops.enter(f->ctx, s, top, call, r) : 0;
}

static int pop(struct flow *f, struct flow_stream *s, const struct decoded_record *r)
{
	int ret = 0;

	if (s->hidden) {
		s->hidden--;
		return 0;
	}
	if (!s->depth)
		return 0;
	if (f->ops.leave)
		ret = f->ops.leave(f->ctx, s, &s->frames[s->depth - 1], r);
	s->depth--;
	return ret;
}

/* Makes the function of @addr the innermost one, unless it is already (or is hidden). */
static int settle(struct flow *f, struct flow_stream *s, uint64_t addr,
		  const struct decoded_record *r)
{
	struct flow_frame fn;
	int ret;

	if (s->hidden)
		return 0;
	ret = flow__function(f, s->task, addr, &fn);
	if (ret)
		return ret;
	/* back from a system call or an interrupt whose return the trace does not have */
	if (s->depth >= 2 && s->frames[s->depth - 1].event &&
	    s->frames[s->depth - 2].name == fn.name && s->frames[s->depth - 1].name != fn.name)
		return pop(f, s, r);
	if (s->depth) {
		if (s->frames[s->depth - 1].name == fn.name)
			return 0;
		ret = pop(f, s, r);
		if (ret)
			return ret;
	}
	return push(f, s, &fn, false, r);
}

/*
 * After a return: when the function returned to is not the innermost one but is further down
 * the stack (a longjmp, a return from a frame entered by a jump), leave the frames above it.
 */
static int unwind(struct flow *f, struct flow_stream *s, const struct decoded_record *r)
{
	struct flow_frame fn;
	unsigned int i;
	int ret;

	if (s->hidden || !s->depth)
		return 0;
	ret = flow__function(f, s->task, r->to, &fn);
	if (ret)
		return ret;
	for (i = s->depth; i > 0 && s->frames[i - 1].name != fn.name; i--)
		;
	while (i && s->depth > i) {
		ret = pop(f, s, r);
		if (ret)
			return ret;
	}
	return 0;
}

static bool call_like(unsigned int kind)
{
	switch (kind) {
	case VBTS_BR_CALL:
	case VBTS_BR_CALL_IND:
	case VBTS_BR_FAR_CALL:
	case VBTS_BR_INT:
	case VBTS_BR_SYSCALL:
	case VBTS_BR_EXCEPTION:
	case VBTS_BR_INTERRUPT:
		return true;
	default:
		return false;
	}
}

/* Calls into the kernel: a user-mode trace has no return from them. */
static bool event_like(unsigned int kind)
{
	return kind == VBTS_BR_INT || kind == VBTS_BR_SYSCALL || kind == VBTS_BR_EXCEPTION ||
	       kind == VBTS_BR_INTERRUPT;
}

static bool return_like(unsigned int kind)
{
	switch (kind) {
	case VBTS_BR_RET:
	case VBTS_BR_FAR_RET:
	case VBTS_BR_IRET:
	case VBTS_BR_SYSRET:
		return true;
	default:
		return false;
	}
}

static int branch(struct flow *f, struct flow_stream *s, const struct decoded_record *r)
{
	struct flow_frame fn;
	int ret;

	/* A function the branch's source replaces ends before the branch. */
	if (f->stack) {
		ret = settle(f, s, r->from, r);
		if (ret)
			return ret;
	}
	s->branches++;
	if (f->ops.branch) {
		ret = f->ops.branch(f->ctx, s, r);
		if (ret)
			return ret;
	}
	s->run_start = r->to;
	s->run_valid = true;
	if (!f->stack)
		return 0;
	if (call_like(r->kind)) {
		if (s->depth == FLOW_DEPTH_MAX) {
			s->hidden++;
			return 0;
		}
		ret = flow__function(f, s->task, r->to, &fn);
		if (!ret)
			ret = push(f, s, &fn, true, r);
		if (!ret && s->depth && !s->hidden)
			s->frames[s->depth - 1].event = event_like(r->kind);
		return ret;
	}
	if (return_like(r->kind)) {
		ret = pop(f, s, r);
		if (ret)
			return ret;
		ret = unwind(f, s, r);
		if (ret)
			return ret;
	}
	return settle(f, s, r->to, r);
}

/*
 * An entry: the thread is somewhere else than where it left user mode. Its frames are left
 * and its stack starts again at the entry's function, where the next run begins.
 */
static int entry(struct flow *f, struct flow_stream *s, const struct decoded_record *r)
{
	struct flow_frame fn;
	int ret;

	s->run_start = r->to;
	s->run_valid = r->to_valid;
	if (!f->stack || !r->to_valid)
		return 0;
	s->hidden = 0;
	while (s->depth) {
		ret = pop(f, s, r);
		if (ret)
			return ret;
	}
	ret = flow__function(f, s->task, r->to, &fn);
	return ret ? ret : push(f, s, &fn, false, r);
}

int flow__record(struct flow *f, const struct decoded_record *r)
{
	struct flow_stream *s;

	if (r->type != DECODED_BRANCH && r->type != DECODED_GAP && r->type != DECODED_ENTRY)
		return 0;
	s = flow__stream(f, r);
	if (!s)
		return -ENOMEM;
	if (r->type == DECODED_BRANCH)
		return branch(f, s, r);
	if (r->type == DECODED_ENTRY)
		return entry(f, s, r);
	/* A gap: the run goes on where control came back, in whatever function that is. */
	s->run_start = r->to;
	s->run_valid = r->to_valid;
	if (f->stack && r->to_valid && s->depth)
		return settle(f, s, r->to, r);
	return 0;
}

int flow__finish(struct flow *f)
{
	int ret;

	for (size_t i = 0; i < f->nr_streams; i++) {
		struct flow_stream *s = f->streams[i];

		s->hidden = 0;
		while (s->depth) {
			ret = pop(f, s, NULL);
			if (ret)
				return ret;
		}
	}
	return 0;
}
