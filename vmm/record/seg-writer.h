/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seg-writer.h - the writing side of stream mode (vbts/segment-format.h): one vCPU's
 * records into segment files that are compressed when full, bounded by a disk budget shared
 * by the vCPUs of a trace, with stall-or-drop when the budget or the disk is full.
 *
 * Threads: a segment writer's calls belong to one thread (its vCPU's), which only copies
 * records into the mapped open segment; each writer has a `collector` thread of its own that
 * compresses full segments and prepares the next open segment. The budget shared with the
 * other writers of the trace is updated with atomics only.
 */
#ifndef VBTS_VMM_SEG_WRITER_H
#define VBTS_VMM_SEG_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <vbts/segment-format.h>

struct seg_writer;

/*
 * Memory of one writer, in segment files' worth: the mapped segment files (the open one, and
 * spares or full ones in the collector's hands: SEG_WRITER_BUFS) and the compressor's
 * buffers (the transform and the frame, about 2.5 segments).
 */
#define SEG_WRITER_BUFS 4
#define SEG_WRITER_MEM_SEGMENTS (SEG_WRITER_BUFS + 3)

/* enum seg_on_full: what an append does when the budget or the disk is full. */
enum seg_on_full {
	SEG_ON_FULL_STALL = 0, /* wait (the traced vCPU stalls) until space comes back */
	SEG_ON_FULL_DROP = 1,  /* drop, count, and say so in-stream with a LOST record */
};

/**
 * struct seg_budget - bytes of segment files a trace may hold, shared by its writers.
 * @limit: the budget in bytes (atomic: may be changed while the writers run)
 * @used:  bytes reserved by the writers (atomic)
 */
struct seg_budget {
	uint64_t limit;
	uint64_t used;
};

/**
 * struct seg_writer_config - parameters of one vCPU's stream.
 * @dir:             the trace directory
 * @vcpu_id:         vCPU index
 * @vm_id:           the run's id
 * @start_time_ns:   CLOCK_REALTIME at trace start
 * @segment_records: records per segment, 2 to VBTS_SEG_MAX_RECORDS
 * @budget:          the trace's disk budget (shared, outlives the writer)
 * @on_full:         enum seg_on_full
 * @zstd_level:      compression level of closed segments (0: the default, 1)
 * @stop:            stall mode: called while stalled; true ends the stall (records are then
 *                   dropped and counted); NULL: never
 * @stop_ctx:        its argument
 * @stall_ns:        stall mode: time between two attempts (0: 20 ms)
 */
struct seg_writer_config {
	const char *dir;
	uint32_t vcpu_id;
	uint64_t vm_id;
	uint64_t start_time_ns;
	uint64_t segment_records;
	struct seg_budget *budget;
	unsigned int on_full;
	int zstd_level;
	bool (*stop)(void *ctx);
	void *stop_ctx;
	uint64_t stall_ns;
};

/**
 * typedef seg_closed_fn - told of each segment the collector closed.
 * @ctx:  the argument given with it
 * @name: the segment's file name in the trace directory (no directory part)
 *
 * Called from the collector thread with the writer's lock held: it must return quickly and
 * must not call back into the writer.
 */
typedef void (*seg_closed_fn)(void *ctx, const char *name);

/**
 * seg_writer__create() - a stream writer and its collector thread; the first open segment
 * is created now.
 * @cfg: parameters
 *
 * Return: the writer, or NULL with errno set (EINVAL for a bad config, ENOMEM, ENOSPC when
 * the budget or the disk has no room for the first segment, or pthread_create's error).
 */
struct seg_writer *seg_writer__create(const struct seg_writer_config *cfg);

/**
 * seg_writer__set_on_closed() - call @fn(@ctx, name) for each segment closed from now on,
 * once its file is in its final form (compressed, or raw when it could not be).
 * @w:   the writer
 * @fn:  the callback, NULL for none
 * @ctx: its argument
 *
 * When it returns, no call of the previous callback is in progress.
 */
void seg_writer__set_on_closed(struct seg_writer *w, seg_closed_fn fn, void *ctx);

/**
 * seg_writer__append() - store and publish records; a full open segment is renamed closed and
 * the next one (made ahead by the collector) takes its place, the collector compresses it.
 * @w:    writer
 * @recs: records
 * @n:    how many
 *
 * Return: the number of records stored (the others were dropped and are counted), or
 * -EROFS when the stream is frozen.
 */
long seg_writer__append(struct seg_writer *w, const struct vbts_record *recs, uint64_t n);

/**
 * seg_writer__set_on_full() - change what a full budget or disk does, from any thread.
 * @w:    writer
 * @mode: enum seg_on_full
 */
void seg_writer__set_on_full(struct seg_writer *w, unsigned int mode);

/**
 * seg_writer__freeze() - stop accepting records: later appends are counted as lost.
 * @w: writer
 */
void seg_writer__freeze(struct seg_writer *w);

/**
 * seg_writer__committed() - records stored since the trace started.
 * @w: writer
 *
 * Return: the next seq.
 */
uint64_t seg_writer__committed(const struct seg_writer *w);

/**
 * seg_writer__lost() - records dropped since the trace started.
 * @w: writer
 *
 * Return: the count.
 */
uint64_t seg_writer__lost(const struct seg_writer *w);

/**
 * seg_writer__read() - a record of the stream, read back by the writer's thread: from the
 * open segment, or from the closed segment file that holds it (the last one read is kept, so
 * reading forward decompresses each segment once).
 * @w:   writer
 * @seq: its sequence number
 * @rec: the record
 *
 * Return: 0, or -ENOENT when @seq is not committed yet, or its segment is gone or unreadable.
 */
int seg_writer__read(struct seg_writer *w, uint64_t seq, struct vbts_record *rec);

/**
 * seg_writer__sync() - wait until the collector is idle: every full segment handed to it is
 * written compressed, and it has tried to make the next open segment since this call.
 * @w: writer
 */
void seg_writer__sync(struct seg_writer *w);

/**
 * seg_writer__close() - close (and compress) the open segment, marked last; frees @w.
 * @w: writer, may be NULL
 *
 * Return: 0 or -errno of the first failure (the segment then stays raw and readable).
 */
int seg_writer__close(struct seg_writer *w);

#endif /* VBTS_VMM_SEG_WRITER_H */
