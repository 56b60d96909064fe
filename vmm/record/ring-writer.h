/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring-writer.h - the writing side of a vCPU's record stream: a vbts ring file
 * (vbts/ring-format.h, wrap mode: create, append records with publish-after-write, count
 * losses, freeze, close) or, in stream mode, segment files (seg-writer.h) behind the same
 * calls.
 *
 * Locking: a ring writer belongs to one thread (its vCPU's); nothing here takes a lock.
 */
#ifndef VBTS_VMM_RING_WRITER_H
#define VBTS_VMM_RING_WRITER_H

#include <stdint.h>
#include <vbts/ring-format.h>

struct ring_writer;
struct seg_writer_config;

/**
 * struct ring_writer_config - parameters of a new ring file.
 * @capacity:      record slots, >= 1
 * @mode:          enum vbts_ring_mode (only VBTS_RING_WRAP in v1)
 * @vcpu_id:       vCPU index
 * @vm_id:         the run's id
 * @start_time_ns: CLOCK_REALTIME at trace start
 */
struct ring_writer_config {
	uint64_t capacity;
	unsigned int mode;
	uint32_t vcpu_id;
	uint64_t vm_id;
	uint64_t start_time_ns;
};

/**
 * ring_writer__create() - create (O_EXCL) and map a ring file.
 * @path: file to create; must not exist
 * @cfg:  parameters
 *
 * Return: the writer, or NULL with errno set (EINVAL for a bad config, EEXIST, ENOSPC, ...).
 * On failure no file is left behind.
 */
struct ring_writer *ring_writer__create(const char *path, const struct ring_writer_config *cfg);

/**
 * ring_writer__create_stream() - a writer in stream mode: segment files in a directory.
 * @cfg: the stream's parameters (seg-writer.h); its first segment is created now
 *
 * Return: the writer, or NULL with errno set (EINVAL, ENOSPC when the budget or the disk has
 * no room for the first segment, ...).
 */
struct ring_writer *ring_writer__create_stream(const struct seg_writer_config *cfg);

/**
 * ring_writer__append_n() - write @n records and publish them with one store.
 * @w:    writer
 * @recs: records
 * @n:    how many
 *
 * Wrap mode: no divide per record and one publication (committed, lost) per call.
 *
 * Return: 0, -EROFS when the stream is frozen (the records are counted as lost), or -ENOSPC
 * in stream mode when some were dropped (counted, and said in-stream).
 */
int ring_writer__append_n(struct ring_writer *w, const struct vbts_record *recs, uint64_t n);

/**
 * ring_writer__append() - write one record and publish it.
 * @w:   writer
 * @rec: record (branch or escape)
 *
 * Return: 0, -EROFS when the ring is frozen (the record is counted as lost), or -ENOSPC in
 * stream mode when it was dropped.
 */
int ring_writer__append(struct ring_writer *w, const struct vbts_record *rec);

/**
 * ring_writer__escape() - append an escape record.
 * @w:       writer
 * @kind:    enum vbts_escape_kind
 * @payload: the record's `to` field
 * @aux:     56-bit auxiliary payload
 *
 * Return: as ring_writer__append().
 */
int ring_writer__escape(struct ring_writer *w, unsigned int kind, uint64_t payload, uint64_t aux);

/**
 * ring_writer__freeze() - stop accepting records (crash): later appends are counted as lost.
 * @w: writer
 */
void ring_writer__freeze(struct ring_writer *w);

/**
 * ring_writer__stream() - the segment writer behind a stream-mode writer.
 * @w: writer
 *
 * Return: it, or NULL in wrap mode.
 */
struct seg_writer *ring_writer__stream(struct ring_writer *w);

/**
 * ring_writer__lost() - records overwritten (wrap) or dropped (frozen, stream) so far.
 * @w: writer
 *
 * Return: the count.
 */
uint64_t ring_writer__lost(const struct ring_writer *w);

/**
 * ring_writer__committed() - number of records committed since creation.
 * @w: writer
 *
 * Return: the header's committed sequence number.
 */
uint64_t ring_writer__committed(const struct ring_writer *w);

/**
 * ring_writer__read() - a record still in the ring, read back by its writer's thread.
 * @w:   writer
 * @seq: its sequence number
 * @rec: the record
 *
 * Return: 0, or -ENOENT when @seq is not committed yet or was overwritten.
 */
int ring_writer__read(const struct ring_writer *w, uint64_t seq, struct vbts_record *rec);

/**
 * ring_writer__capacity() - record slots of a wrap-mode ring.
 * @w: writer
 *
 * Return: the capacity, 0 in stream mode.
 */
uint64_t ring_writer__capacity(const struct ring_writer *w);

/**
 * ring_writer__resize() - give a wrap-mode ring another capacity while it records.
 * @w:        writer
 * @capacity: record slots, >= 1
 *
 * A new ring file of @capacity slots, made next to the old one, gets the newest records
 * that fit (every record the ring holds when it grows), the header's first_seq says the
 * oldest of them, and it is renamed over the old one. The numbering goes on; the records
 * that did not fit are counted in lost. The old file's mapping is released: a reader that
 * still holds it sees it no longer grows.
 *
 * Return: 0 (also for the same capacity), -EINVAL for 0, -EROFS when frozen, -EOPNOTSUPP in
 * stream mode, or the -errno of creating the new file (ENOSPC, ...): the ring is then as it
 * was.
 */
int ring_writer__resize(struct ring_writer *w, uint64_t capacity);

/**
 * ring_writer__close() - mark the file closed, sync it and unmap it; frees @w.
 * @w: writer, may be NULL
 *
 * Return: 0 or -errno from msync/close (the file is released in every case).
 */
int ring_writer__close(struct ring_writer *w);

#endif /* VBTS_VMM_RING_WRITER_H */
