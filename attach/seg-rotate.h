/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seg-rotate.h - stream mode's rotation for a recorder that runs for weeks (`vbts attach
 * --on-full rotate`): when the disk budget is full, the oldest closed segment files of the
 * trace are removed, whichever vCPU wrote them, and the segment writer (vmm/record/
 * seg-writer.h), which gives back the budget of segments a consumer removed, goes on.
 *
 * Never removed: the open segments, temporary files, and the newest SEG_ROTATE_KEEP closed
 * segments of each vCPU (the segment writer's collector may still be compressing them: its
 * rename would bring a removed one back). The reader (format/seg-reader.h) starts each vCPU at
 * its first segment left.
 */
#ifndef VBTS_ATTACH_SEG_ROTATE_H
#define VBTS_ATTACH_SEG_ROTATE_H

#include <stddef.h>
#include <stdint.h>

/* Closed segments of each vCPU never removed: SEG_WRITER_BUFS (the collector's hands). */
#define SEG_ROTATE_KEEP 4
/* Segment files of a trace looked at at most. */
#define SEG_ROTATE_MAX_FILES (1U << 20)

/**
 * struct seg_file - a closed segment file of a trace.
 * @vcpu:  its vCPU
 * @index: its index (the name's)
 * @mtime: when it was last written (closed, or compressed), ns
 * @bytes: its size on disk
 * @drop:  set by seg_rotate__plan(): to be removed
 */
struct seg_file {
	unsigned int vcpu;
	uint64_t index;
	uint64_t mtime;
	uint64_t bytes;
	int drop;
};

/**
 * seg_rotate__parse_name() - whether @name is a closed segment's file name,
 * vcpuN.SSSSSSSS.vseg.
 * @name:  a directory entry's name
 * @vcpu:  receives N
 * @index: receives SSSSSSSS
 *
 * Return: 0, or -EINVAL for any other name (the open segment, temporary files, ...).
 */
int seg_rotate__parse_name(const char *name, unsigned int *vcpu, uint64_t *index);

/**
 * seg_rotate__plan() - mark the oldest removable segments until @want bytes are freed:
 * oldest by @mtime, then index, then vCPU; never the newest SEG_ROTATE_KEEP of a vCPU.
 * @files: the closed segments (reordered)
 * @n:     how many
 * @want:  bytes to free
 *
 * Return: the bytes the marked files hold (less than @want when too few may go).
 */
uint64_t seg_rotate__plan(struct seg_file *files, size_t n, uint64_t want);

/**
 * seg_rotate__run() - remove the oldest closed segments of trace directory @dir until
 * @want bytes are freed, as seg_rotate__plan() says.
 * @dir:     the trace directory
 * @want:    bytes to free
 * @removed: receives the number of files removed
 *
 * Return: the bytes freed, or -errno (the directory unreadable, out of memory).
 */
int64_t seg_rotate__run(const char *dir, uint64_t want, size_t *removed);

#endif /* VBTS_ATTACH_SEG_ROTATE_H */
