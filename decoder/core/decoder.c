// SPDX-License-Identifier: GPL-2.0
/*
 * decoder.c - the vbts record decoder: per-vCPU state, time-ordered merge.
 *
 * Layers: record__parse() (format/record.c) takes one raw record apart with no state, and
 * record__item_members() gives an item what its record says alone. A struct vcpu_stream
 * turns one vCPU's parsed records into decoded items, tracking the current task (TASK_ARRIVE/
 * DEPART), the current guest thread (THREAD), the last time seen, pending gap halves, and
 * sequence jumps (lost records). The merge emits per-vCPU runs - a run starts at a
 * timestamped escape record - in order of the run's start time, using a binary min-heap of
 * the streams keyed on (time, vcpu).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decoder-int.h"

#define STREAM_BUF_RECORDS 1024
#define STREAM_QUEUE 4 /* at most 2 items are queued by one raw record (+ a lost item) */

struct vcpu_stream {
	struct decoder_source src;
	struct vbts_record *buf;
	size_t nr, pos;                 /* records in buf, next one to use */
	uint64_t buf_seq;               /* seq of buf[0] */
	uint64_t expected;              /* seq the next record should have */
	bool eof;                       /* the source is exhausted and finished */
	bool run_start;                 /* the next record opens the run being emitted */
	uint64_t key;                   /* start time of the stream's next run */

	uint64_t cr3, time;
	bool cr3_valid, time_valid;
	uint32_t thread_pid, thread_tgid;
	bool thread_valid;              /* a THREAD named the thread running since */

	bool gap_pending;               /* a GAP_BEGIN waits for its GAP_END */
	uint64_t gap_seq, gap_from, gap_reason;

	struct decoded_record q[STREAM_QUEUE];
	unsigned int qhead, qlen;
};

struct decoder {
	struct vcpu_stream *streams;
	size_t nr_streams;
	struct vcpu_stream **heap;
	size_t heap_len;
	struct vcpu_stream *cur;        /* stream whose run is being emitted, or NULL */
	bool started, finished;
	bool reference;                 /* no fast path (decoder__use_reference()) */
	int error;
};

/* ---- per-vCPU state ----------------------------------------------------------------------- */

static struct decoded_record *queue_item(struct vcpu_stream *s, enum decoded_type type,
					 uint64_t seq)
{
	struct decoded_record *d = &s->q[(s->qhead + s->qlen++) % STREAM_QUEUE];

	memset(d, 0, sizeof(*d));
	d->type = type;
	d->vcpu = s->src.vcpu;
	d->seq = seq;
	d->time = s->time;
	d->time_valid = s->time_valid;
	d->cr3 = s->cr3;
	d->cr3_valid = s->cr3_valid;
	d->thread_pid = s->thread_pid;
	d->thread_tgid = s->thread_tgid;
	d->thread_valid = s->thread_valid;
	return d;
}

/* No thread is known on the vCPU from now on (a task arrives, tracing starts, ...). */
static void forget_thread(struct vcpu_stream *s)
{
	s->thread_valid = false;
	s->thread_pid = s->thread_tgid = 0;
}

static void queue_lost(struct vcpu_stream *s, uint64_t seq, uint64_t count)
{
	struct decoded_record *d = queue_item(s, DECODED_LOST, seq);

	d->count = count;
}

/* A GAP_BEGIN whose GAP_END never came: report it with an unknown end. */
static void flush_gap(struct vcpu_stream *s)
{
	struct decoded_record *d;

	if (!s->gap_pending)
		return;
	d = queue_item(s, DECODED_GAP, s->gap_seq);
	d->from = s->gap_from;
	d->from_valid = true;
	d->aux = s->gap_reason;
	s->gap_pending = false;
}

/* Turns one raw record (seq @seq) into 0-2 queued items and updates the vCPU's state. */
static void stream_consume(struct vcpu_stream *s, const struct vbts_record *rec, uint64_t seq)
{
	struct parsed_record p;
	struct decoded_record *d;

	record__parse(rec, &p);
	if (p.time_valid) {
		s->time = p.time;
		s->time_valid = true;
	}
	switch (p.type) {
	case DECODED_BRANCH:
		flush_gap(s);
		d = queue_item(s, DECODED_BRANCH, seq);
		break;
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		/* An arrival has no thread until one is named; a departure is the thread's last. */
		if (p.type == DECODED_TASK_ARRIVE)
			forget_thread(s);
		d = queue_item(s, p.type, seq);
		s->cr3 = p.payload;
		s->cr3_valid = p.type == DECODED_TASK_ARRIVE;
		forget_thread(s);
		break;
	case DECODED_GAP:
		if (!p.gap_end) {
			flush_gap(s);
			s->gap_pending = true;
			s->gap_seq = seq;
			s->gap_from = p.payload;
			s->gap_reason = p.aux;
			return;
		}
		if (s->gap_pending) {
			d = queue_item(s, DECODED_GAP, s->gap_seq);
			d->from = s->gap_from;
			d->from_valid = true;
			d->aux = s->gap_reason;
			s->gap_pending = false;
		} else {
			/* Its GAP_BEGIN was overwritten or never written. */
			d = queue_item(s, DECODED_GAP, seq);
			d->aux = VBTS_GAP_UNKNOWN;
		}
		d->to = p.payload;
		d->to_valid = true;
		return;
	case DECODED_LOST:
		/* Lost records may have held the gap's end: the pending half is an orphan. */
		flush_gap(s);
		d = queue_item(s, DECODED_LOST, seq);
		break;
	case DECODED_START:
	case DECODED_STOP:
	case DECODED_FREEZE:
		flush_gap(s);
		/* Tracing starts anew: the thread is named again at its next user entry. */
		if (p.type == DECODED_START)
			forget_thread(s);
		d = queue_item(s, p.type, seq);
		break;
	case DECODED_TIME:
	case DECODED_TASK_PID:
	case DECODED_GUEST_BTS_DROP:
		d = queue_item(s, p.type, seq);
		break;
	case DECODED_THREAD:
		/* Whatever the numbers are: they name the records until the next thread item. */
		s->thread_pid = (uint32_t)p.payload;
		s->thread_tgid = (uint32_t)(p.payload >> 32);
		s->thread_valid = true;
		d = queue_item(s, DECODED_THREAD, seq);
		break;
	case DECODED_ENTRY:
		/* Where the next run begins: a gap half still waiting is an orphan. */
		flush_gap(s);
		d = queue_item(s, DECODED_ENTRY, seq);
		break;
	default:
		d = queue_item(s, DECODED_UNKNOWN, seq);
		break;
	}
	/* The item's own members: what the record says (record__item_members()). */
	record__item_members(&p, d);
}

/*
 * The item of branch record @rec (seq @seq) of stream @s, every member set: what
 * stream_consume() queues for it when no gap half is pending.
 */
static inline void branch_item(const struct vcpu_stream *s, const struct vbts_record *rec,
			       uint64_t seq, struct decoded_record *d)
{
	uint64_t flags = rec->flags;

	d->seq = seq;
	d->from = rec->from;
	d->to = rec->to;
	d->cr3 = s->cr3;
	d->time = s->time;
	d->count = 0;
	d->aux = 0;
	d->payload = 0;
	d->type = DECODED_BRANCH;
	d->vcpu = s->src.vcpu;
	d->cpl_valid = !!(flags & VBTS_REC_CPL_VALID);
	d->cpl = d->cpl_valid ? (unsigned int)((flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT) :
				0;
	d->kind = (unsigned int)(flags >> VBTS_REC_KIND_SHIFT) & 0xff;
	d->vector_valid = !!(flags & VBTS_REC_VECTOR_VALID);
	d->vector = d->vector_valid ? (unsigned int)(flags >> VBTS_REC_VECTOR_SHIFT) & 0xff : 0;
	d->esc_kind = 0;
	d->thread_pid = s->thread_pid;
	d->thread_tgid = s->thread_tgid;
	d->from_valid = d->to_valid = true;
	d->cr3_valid = s->cr3_valid;
	d->time_valid = s->time_valid;
	d->thread_valid = s->thread_valid;
}

/* End of the stream: pending halves and trailing drops become items. */
static void stream_finish(struct vcpu_stream *s)
{
	uint64_t dropped;

	flush_gap(s);
	if (s->src.ops->dropped) {
		dropped = s->src.ops->dropped(s->src.ctx, s->expected);
		if (dropped)
			queue_lost(s, s->expected, dropped);
	}
	s->eof = true;
}

/*
 * Makes the stream's next raw record available (returns 1, *rec and *seq set), or reports the
 * end (0) or a source error (-errno). A jump in seq queues a lost item first.
 */
static int stream_peek(struct vcpu_stream *s, const struct vbts_record **rec, uint64_t *seq)
{
	ssize_t n;
	uint64_t first;

	if (s->eof)
		return 0;
	if (s->pos >= s->nr) {
		n = s->src.ops->read(s->src.ctx, s->buf, STREAM_BUF_RECORDS, &first);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			stream_finish(s);
			return 0;
		}
		if (first > s->expected) {
			flush_gap(s);
			queue_lost(s, s->expected, first - s->expected);
		}
		s->nr = (size_t)n;
		s->pos = 0;
		s->buf_seq = first;
		s->expected = first;
	}
	*rec = &s->buf[s->pos];
	*seq = s->buf_seq + s->pos;
	return 1;
}

static bool starts_run(const struct vbts_record *rec, uint64_t *time)
{
	struct parsed_record p;

	if (!vbts_record__is_escape(rec))
		return false;
	record__parse(rec, &p);
	*time = p.time;
	return p.time_valid;
}

/* ---- merge ------------------------------------------------------------------------------- */

static bool stream_before(const struct vcpu_stream *a, const struct vcpu_stream *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	return a->src.vcpu < b->src.vcpu;
}

static void heap_push(struct decoder *d, struct vcpu_stream *s)
{
	size_t i = d->heap_len++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!stream_before(s, d->heap[parent]))
			break;
		d->heap[i] = d->heap[parent];
		i = parent;
	}
	d->heap[i] = s;
}

static struct vcpu_stream *heap_pop(struct decoder *d)
{
	struct vcpu_stream *top, *last;
	size_t i = 0;

	if (!d->heap_len)
		return NULL;
	top = d->heap[0];
	last = d->heap[--d->heap_len];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= d->heap_len)
			break;
		if (c + 1 < d->heap_len && stream_before(d->heap[c + 1], d->heap[c]))
			c++;
		if (!stream_before(d->heap[c], last))
			break;
		d->heap[i] = d->heap[c];
		i = c;
	}
	if (d->heap_len)
		d->heap[i] = last;
	return top;
}

/* Puts a stream into the heap keyed on its next run's start time (0 if it has none). */
static int schedule(struct decoder *d, struct vcpu_stream *s)
{
	const struct vbts_record *rec;
	uint64_t seq, t;
	int ret;

	ret = stream_peek(s, &rec, &seq);
	if (ret < 0)
		return ret;
	s->key = 0;
	if (ret > 0 && starts_run(rec, &t))
		s->key = t;
	s->run_start = true;
	heap_push(d, s);
	return 0;
}

struct decoder *decoder__new(const struct decoder_source *src, size_t nr_src)
{
	struct decoder *d;
	size_t i;

	if (!src || !nr_src) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < nr_src; i++) {
		if (!src[i].ops || !src[i].ops->read) {
			errno = EINVAL;
			return NULL;
		}
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->streams = calloc(nr_src, sizeof(*d->streams));
	if (!d->streams)
		goto err_free_decoder;
	d->heap = calloc(nr_src, sizeof(*d->heap));
	if (!d->heap)
		goto err_free_streams;
	d->nr_streams = nr_src;
	for (i = 0; i < nr_src; i++) {
		struct vcpu_stream *s = &d->streams[i];

		s->src = src[i];
		s->expected = src[i].first_seq;
		s->buf = malloc(STREAM_BUF_RECORDS * sizeof(*s->buf));
		if (!s->buf)
			goto err_free_buffers;
	}
	return d;

err_free_buffers:
	for (i = 0; i < nr_src; i++)
		free(d->streams[i].buf);
	free(d->heap);
err_free_streams:
	free(d->streams);
err_free_decoder:
	free(d);
	errno = ENOMEM;
	return NULL;
}

static int fail(struct decoder *d, int err)
{
	d->finished = true;
	d->error = err;
	return err;
}

int decoder__next(struct decoder *d, struct decoded_record *out)
{
	const struct vbts_record *rec;
	uint64_t seq, t;
	int ret;
	size_t i;

	if (d->finished)
		return d->error;
	if (!d->started) {
		d->started = true;
		for (i = 0; i < d->nr_streams; i++) {
			ret = schedule(d, &d->streams[i]);
			if (ret < 0)
				return fail(d, ret);
		}
	}
	for (;;) {
		struct vcpu_stream *s = d->cur;

		if (!s) {
			s = d->cur = heap_pop(d);
			if (!s) {
				d->finished = true;
				return 0;
			}
		}
		if (s->qlen) {
			*out = s->q[s->qhead];
			s->qhead = (s->qhead + 1) % STREAM_QUEUE;
			s->qlen--;
			return 1;
		}
		/*
		 * Fast path: a buffered branch with no gap half pending becomes one item, written
		 * where it goes, as stream_consume() would queue it.
		 */
		if (s->pos < s->nr && !s->gap_pending && !d->reference &&
		    !vbts_record__is_escape(&s->buf[s->pos])) {
			seq = s->buf_seq + s->pos;
			branch_item(s, &s->buf[s->pos], seq, out);
			s->run_start = false;
			s->pos++;
			s->expected = seq + 1;
			return 1;
		}
		ret = stream_peek(s, &rec, &seq);
		if (ret < 0)
			return fail(d, ret);
		if (ret == 0) {
			if (!s->qlen)
				d->cur = NULL; /* done for good: not rescheduled */
			continue;
		}
		if (s->qlen)
			continue; /* a lost item queued by the peek goes first */
		if (!s->run_start && starts_run(rec, &t)) {
			/* This record opens the vCPU's next run: let earlier runs go first. */
			ret = schedule(d, s);
			if (ret < 0)
				return fail(d, ret);
			d->cur = NULL;
			continue;
		}
		s->run_start = false;
		stream_consume(s, rec, seq);
		s->pos++;
		s->expected = seq + 1;
	}
}

void decoder__use_reference(struct decoder *d, bool reference)
{
	d->reference = reference;
}

void decoder__free(struct decoder *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_streams; i++)
		free(d->streams[i].buf);
	free(d->streams);
	free(d->heap);
	free(d);
}
