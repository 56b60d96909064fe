/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring-reader.h - open, validate and read a vbts ring file (vbts/ring-format.h), also one that
 * is still being written.
 *
 * A ring file is untrusted input: every header field is checked before any record is read,
 * and every problem is reported as one line naming the file and the byte offset of the field
 * at fault. The reader maps the file read-only and closes its descriptor (a trace may have
 * more rings than the process may open files); it does not defend against the file being
 * truncated while it is mapped (the writer never does that). The pages of the records it has
 * read leave the mapping as it goes: its resident set stays about 1 MiB per ring whatever the
 * size of the file.
 */
#ifndef VBTS_FORMAT_RING_READER_H
#define VBTS_FORMAT_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <vbts/ring-format.h>

struct ring_reader;

/* Room for one error line of the reader. */
#define RING_READER_ERR_MAX 512

/**
 * ring_reader__open() - open a ring file and validate its header.
 * @path:   the file
 * @err:    receives one error line ("PATH: offset 0xN: what is wrong") on failure
 * @errlen: size of @err (RING_READER_ERR_MAX is enough)
 *
 * Only a regular file is opened (input_file__open(): a FIFO would block, a device never
 * end). Checks magic, version, header_size, record_size, mode, flags, capacity against the
 * file size (with overflow checks) and the plausibility of committed and lost.
 *
 * Return: the reader, or NULL with errno set: ENOENT and other open(2) errors, EINVAL for
 * anything but a regular file and for a file that is not a valid v1 ring file, ENOMEM.
 */
struct ring_reader *ring_reader__open(const char *path, char *err, size_t errlen);

/**
 * ring_reader__header() - the header as it was validated at open time.
 * @r: reader
 *
 * Return: a copy of the header taken at open; committed and lost may have moved since.
 */
const struct vbts_ring_header *ring_reader__header(const struct ring_reader *r);

/**
 * ring_reader__begin() - fix the window of records to read: the ones committed now.
 * @r: reader
 *
 * Reads committed (acquire) and sets the window to [max(0, committed - capacity), committed).
 * Called by ring_reader__open() already; call again to re-read a live file from scratch.
 *
 * Return: 0, or -EIO when committed went backwards (the file was rewritten).
 */
int ring_reader__begin(struct ring_reader *r);

/**
 * ring_reader__window() - the window fixed by the last ring_reader__begin().
 * @r:     reader
 * @first: receives the seq of the oldest record still in the ring
 * @end:   receives the committed value (one past the newest record)
 */
void ring_reader__window(const struct ring_reader *r, uint64_t *first, uint64_t *end);

/**
 * ring_reader__read() - copy the next committed records, oldest first.
 * @r:         reader
 * @buf:       destination
 * @max:       room in @buf, in records
 * @first_seq: receives the seq of buf[0]
 *
 * Follows the live-reader protocol of ring-format.h: records that the writer overwrote while
 * they were being copied are skipped, so *first_seq may jump ahead of the previous call's
 * end; the caller accounts for the difference as lost records. Unless the ring is closed or
 * frozen, the slot the writer would store next into is not trusted: a full ring then yields
 * capacity - 1 records.
 *
 * Return: the number of records copied (exactly the committed ones, never more), 0 at the end
 * of the window, or -EIO when committed went backwards.
 */
ssize_t ring_reader__read(struct ring_reader *r, struct vbts_record *buf, size_t max,
			  uint64_t *first_seq);

/**
 * ring_reader__lost() - the header's lost count, read now.
 * @r: reader
 *
 * Return: records overwritten or dropped by the writer since the trace started.
 */
uint64_t ring_reader__lost(const struct ring_reader *r);

/**
 * ring_reader__path() - the file name the reader was opened with.
 * @r: reader
 *
 * Return: the path (owned by @r).
 */
const char *ring_reader__path(const struct ring_reader *r);

/**
 * ring_reader__committed() - the header's committed count, read now (acquire).
 * @r: reader
 *
 * Return: one past the newest record the writer published.
 */
uint64_t ring_reader__committed(const struct ring_reader *r);

/**
 * ring_reader__replaced() - whether the reader's path names another file now: the writer
 * resized the ring (a new file took the name; the numbering goes on in it).
 * @r: reader
 *
 * Return: true when another file is there; false when it is the mapped one or none is.
 */
bool ring_reader__replaced(const struct ring_reader *r);

/**
 * ring_reader__live_window() - the records of a live ring that can be read now: [*first, *end).
 * @r:       reader
 * @stopped: optional; whether the writer appends nothing for now besides what the ring's
 *           flags say (its vCPU is stopped): then the oldest slot is trusted too
 * @ctx:     its argument
 * @first:   receives the oldest record still intact
 * @end:     receives committed
 */
void ring_reader__live_window(const struct ring_reader *r, bool (*stopped)(void *ctx),
			      void *ctx, uint64_t *first, uint64_t *end);

/**
 * ring_reader__get() - copy record @seq of a live ring (the live-reader protocol of
 * vbts/ring-format.h).
 * @r:       reader
 * @seq:     the record's number
 * @stopped: as for ring_reader__live_window()
 * @ctx:     its argument
 * @rec:     receives the record
 *
 * Return: 0, -ENOENT when it is not committed yet, -ESTALE when the writer overwrote it (also
 * while it was being copied).
 */
int ring_reader__get(const struct ring_reader *r, uint64_t seq, bool (*stopped)(void *ctx),
		     void *ctx, struct vbts_record *rec);

/**
 * ring_reader__close() - unmap and free.
 * @r: reader, may be NULL
 */
void ring_reader__close(struct ring_reader *r);

#endif /* VBTS_FORMAT_RING_READER_H */
