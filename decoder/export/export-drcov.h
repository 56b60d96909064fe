/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-drcov.h - `vbts decode --format drcov`: the basic blocks a trace executed, as
 * DynamoRIO's drcov tool writes them (file version 2, module table version 2), which
 * Lighthouse, bncov and other coverage viewers load:
 *
 *   DRCOV VERSION: 2
 *   DRCOV FLAVOR: drcov
 *   Module Table: version 2, count 1
 *   Columns: id, base, end, entry, checksum, timestamp, path
 *     0, 0x0000000000000000, 0x00000000000000c0, 0x0000000000000000, 0x00000000, 0x00000000, /img
 *   BB Table: 7 bbs
 *   (7 binary entries: uint32 start, offset from the module's base; uint16 size; uint16 module
 *   id; little-endian, 8 bytes each)
 *
 * Blocks come from the branch stream (flow.h): a block starts at a branch's (or a gap's)
 * target and ends at the source of the next branch of the same task and vCPU. BTS does not
 * give the length of that branch instruction: a block's size is from - start + 1, the least
 * that covers the branch's first byte (a viewer marks the instruction there as run). Each
 * distinct block (module, start, size) is written once, in the order first met; the first
 * branch of each task and vCPU starts no block (its run's start is not known).
 *
 * Modules are the loaded images of symbolizer__module(): the multiboot --image, the ELF file
 * of a Linux task (--symbols; one module per load base of it), the guest kernel's vmlinux or
 * System.map, each with its run-time base and end; entry, checksum and timestamp are 0. A
 * block belongs to the module holding its start and must end inside it. Left out, and counted
 * in one line on stderr: blocks in no module (no table given for that code), and runs that do
 * not fit together (a source before its target, a run longer than DRCOV_BLOCK_MAX bytes or
 * out of its module: a loss, a forged trace).
 *
 * Paths are the files as given, escaped as guest text is (no newline or control byte: the
 * module table is read by lines), with ',' written as \x2c (a viewer splits module lines at
 * ", ") and leading or trailing blanks as \x20.
 *
 * Memory: one entry per distinct block and per module.
 */
#ifndef VBTS_DECODER_EXPORT_DRCOV_H
#define VBTS_DECODER_EXPORT_DRCOV_H

#include "export-format.h"

/* The largest block size, in bytes: a drcov entry's 16-bit size. */
#define DRCOV_BLOCK_MAX 0xffff

extern const struct export_format_ops drcov_format;

#endif /* VBTS_DECODER_EXPORT_DRCOV_H */
