/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seg-reader.h - read one vCPU's stream segments (vbts/segment-format.h) of a trace
 * directory, the compressed ones and the open one, as one record stream.
 *
 * Segment files are untrusted input: every header is checked before its records are read,
 * a payload is decompressed only within the bounds its header and file size allow, and a bad
 * segment is reported in one line ("PATH: offset 0xN: what is wrong; segment skipped") and
 * skipped: its records show as a jump of the sequence numbers (lost records), the others are
 * read. At most one segment's records are in memory at a time.
 *
 * The segments of a vCPU follow each other without holes; only the oldest may be removed (a
 * consumer's, or the rotation's). Each of these is said in one line and counts as damage: a
 * segment missing between two others (naming the records lost), a first seq beyond the end of
 * the segment before, a segment of another run (vm_id), segments after one that says it is the
 * last (LAST, or FROZEN), and a newest segment that is neither the open one nor the last. A
 * second pass over the same segments (seg_reader__begin()) says nothing again.
 */
#ifndef VBTS_FORMAT_SEG_READER_H
#define VBTS_FORMAT_SEG_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <vbts/segment-format.h>

struct seg_reader;

/* Room for one error line of the reader. */
#define SEG_READER_ERR_MAX 512
/* Segments of one vCPU a reader accepts. */
#define SEG_READER_MAX_SEGMENTS (1U << 20)

/* The index that seg_reader__check_header() takes for an open segment: any. */
#define SEG_READER_OPEN_INDEX UINT64_MAX

/**
 * seg_reader__check_header() - check a segment header against its file: the one check of a
 * segment header, for this reader and for the live view of seg-view.h.
 * @h:      the header
 * @size:   the file's size in bytes (at least VBTS_SEG_HEADER_SIZE)
 * @index:  the index its name says, SEG_READER_OPEN_INDEX for the open segment
 * @vcpu:   the vCPU its name says
 * @path:   the file, for @err
 * @n:      receives the records it holds (for -ERANGE: the whole records the file holds)
 * @err:    receives one line ("PATH: offset 0xN: what is wrong") on failure, may be NULL
 * @errlen: its size
 *
 * Checks magic, version, sizes, flags, vCPU, index, the record counts against the segment
 * size and the file, the encoding and, for a compressed one, its payload size.
 *
 * Return: 0; -ERANGE for a raw segment whose file ends before its committed records; -EINVAL
 * for anything else wrong.
 */
int seg_reader__check_header(const struct vbts_seg_header *h, uint64_t size, uint64_t index,
			     unsigned int vcpu, const char *path, uint64_t *n, char *err,
			     size_t errlen);

/**
 * seg_reader__exists() - whether a directory holds any segment of a vCPU.
 * @dir:  the trace directory
 * @vcpu: vCPU index
 *
 * Return: true when vcpuN.open.vseg or any vcpuN.SSSSSSSS.vseg is there.
 */
bool seg_reader__exists(const char *dir, unsigned int vcpu);

/**
 * seg_reader__open() - find and check the segments of a vCPU.
 * @dir:      the trace directory
 * @vcpu:     vCPU index
 * @warn:     receives a line per skipped or damaged segment (may be NULL)
 * @warn_ctx: its argument
 * @err:      receives one error line on failure
 * @errlen:   its size
 *
 * Return: the reader, or NULL with errno set: ENOENT (no segment), EINVAL (no segment is
 * readable), ENOMEM.
 */
struct seg_reader *seg_reader__open(const char *dir, unsigned int vcpu,
				    void (*warn)(void *ctx, const char *line), void *warn_ctx,
				    char *err, size_t errlen);

/**
 * seg_reader__vm_id() - the run id of the first readable segment.
 * @r: reader
 *
 * Return: the id.
 */
uint64_t seg_reader__vm_id(const struct seg_reader *r);

/**
 * seg_reader__set_vm_id() - the run whose segments are read: a segment of another run (or of
 * vm_id 0, which no run writes) is damage, said and skipped. Without it, the run is the first
 * readable segment's. Reading starts again from the first segment.
 * @r:     reader
 * @vm_id: the run's id (vm.json's "vm_id")
 *
 * Return: 0, or -ENOENT when no segment of that run is readable.
 */
int seg_reader__set_vm_id(struct seg_reader *r, uint64_t vm_id);

/**
 * seg_reader__begin() - read from the first segment again; the open segment's committed
 * records are counted anew.
 * @r: reader
 *
 * Return: 0.
 */
int seg_reader__begin(struct seg_reader *r);

/**
 * seg_reader__window() - the records of the segments found: [first, end).
 * @r:     reader
 * @first: receives the first segment's first seq
 * @end:   receives one past the last segment's last committed record
 */
void seg_reader__window(const struct seg_reader *r, uint64_t *first, uint64_t *end);

/**
 * seg_reader__read() - copy the next records, oldest first.
 * @r:         reader
 * @buf:       destination
 * @max:       room in @buf, in records
 * @first_seq: receives the seq of buf[0] (a jump from the last call's end: lost records)
 *
 * Return: records copied, 0 at the end.
 */
ssize_t seg_reader__read(struct seg_reader *r, struct vbts_record *buf, size_t max,
			 uint64_t *first_seq);

/**
 * seg_reader__dropped_at_end() - records dropped after the last one read that no LOST record
 * said: those refused once the vCPU was frozen.
 * @r: reader, after the last read
 *
 * Return: the count.
 */
uint64_t seg_reader__dropped_at_end(const struct seg_reader *r);

/**
 * seg_reader__damaged() - segments skipped or read partly.
 * @r: reader
 *
 * Return: the count.
 */
unsigned int seg_reader__damaged(const struct seg_reader *r);

/**
 * seg_reader__close() - free.
 * @r: reader, may be NULL
 */
void seg_reader__close(struct seg_reader *r);

#endif /* VBTS_FORMAT_SEG_READER_H */
