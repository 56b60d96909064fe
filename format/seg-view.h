/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seg-view.h - random access to one vCPU's stream segments (vbts/segment-format.h) while
 * another thread or process writes them: what the control socket reads in stream mode.
 */
#ifndef VBTS_FORMAT_SEG_VIEW_H
#define VBTS_FORMAT_SEG_VIEW_H

#include <stdint.h>
#include <vbts/segment-format.h>

struct seg_view;

/**
 * seg_view__new() - a reader of vCPU @vcpu's segments in @dir; nothing is opened yet.
 * @dir:         the trace directory
 * @vcpu:        vCPU index
 * @max_records: records a segment may hold at most (the run's segment size): a closed
 *               segment that says more is refused, so a read back is bounded
 *
 * Return: the view, or NULL (ENOMEM).
 */
struct seg_view *seg_view__new(const char *dir, unsigned int vcpu, uint64_t max_records);

/**
 * seg_view__window() - the records of the stream now.
 * @v:     view
 * @first: receives the first record of the oldest segment still there
 * @end:   receives one past the last committed record
 * @lost:  receives the records the writer dropped so far (the open segment's header)
 *
 * Return: 0, -ENOENT when there is no open segment yet, -EINVAL when it is not one, -EAGAIN
 * when the writer kept moving on while it was looked at, or another -errno.
 */
int seg_view__window(struct seg_view *v, uint64_t *first, uint64_t *end, uint64_t *lost);

/**
 * seg_view__get() - copy record @seq, from the open segment or the closed one that holds it
 * (the last closed segment read is kept, so reading forward reads each segment once).
 * @v:   view
 * @seq: its number
 * @rec: receives the record
 *
 * Return: 0, -ENOENT when it is not committed yet, -ESTALE when its segment was removed,
 * -EAGAIN when the writer moved the segment on while it was read (try again), -EIO when the
 * segment that holds it is damaged, or another -errno.
 */
int seg_view__get(struct seg_view *v, uint64_t seq, struct vbts_record *rec);

/**
 * seg_view__error() - what was wrong with the file that made the last call fail with -EIO or
 * -EINVAL: one line naming it ("DIR/vcpu0.00000002.vseg: not a regular file (a FIFO)").
 * @v: view
 *
 * Return: the line, "" when there was none.
 */
const char *seg_view__error(const struct seg_view *v);

/**
 * seg_view__drop_cache() - free the closed segment kept by seg_view__get().
 * @v: view
 */
void seg_view__drop_cache(struct seg_view *v);

/**
 * seg_view__free() - unmap and free.
 * @v: view, may be NULL
 */
void seg_view__free(struct seg_view *v);

#endif /* VBTS_FORMAT_SEG_VIEW_H */
