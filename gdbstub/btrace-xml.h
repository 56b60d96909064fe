/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btrace-xml.h - the documents of gdb's btrace.dtd and btrace-conf.dtd in BTS format, as
 * qXfer:btrace:read and qXfer:btrace-conf:read serve them.
 */
#ifndef VBTS_GDBSTUB_BTRACE_XML_H
#define VBTS_GDBSTUB_BTRACE_XML_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct gdb_btrace_block - one sequential run of instructions.
 * @begin: address of its first instruction (0 in a delta read's stitch block: unknown)
 * @end:   address of its last instruction's first byte (inclusive)
 */
struct gdb_btrace_block {
	uint64_t begin, end;
};

/**
 * btrace_xml__blocks() - a `<btrace version="1.0">` document of @nr blocks, in the order
 * given (gdb wants newest first).
 * @blocks: the blocks
 * @nr:     how many (0: an empty document, "no change")
 * @len:    receives the document's length
 *
 * Return: the document (malloc'd, NUL-terminated), or NULL with errno ENOMEM.
 */
char *btrace_xml__blocks(const struct gdb_btrace_block *blocks, size_t nr, size_t *len);

/**
 * btrace_xml__conf() - a `<btrace-conf version="1.0">` document.
 * @bts_size: the BTS buffer size reported, or 0 for a thread that is not recording (an empty
 *            configuration)
 * @buf:      receives the document, NUL-terminated
 * @cap:      size of @buf; 96 bytes are enough
 *
 * Return: the document's length, or -ENOSPC.
 */
int btrace_xml__conf(uint64_t bts_size, char *buf, size_t cap);

#endif /* VBTS_GDBSTUB_BTRACE_XML_H */
