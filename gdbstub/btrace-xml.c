// SPDX-License-Identifier: GPL-2.0
/*
 * btrace-xml.c - gdb's btrace and btrace-conf XML documents in BTS format.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "btrace-xml.h"

#define BTRACE_HEAD "<btrace version=\"1.0\">\n"
#define BTRACE_TAIL "</btrace>\n"
/* One block line at most: two 64-bit addresses in hex and the markup around them. */
#define BLOCK_LINE_MAX 64

char *btrace_xml__blocks(const struct gdb_btrace_block *blocks, size_t nr, size_t *len)
{
	size_t cap = sizeof(BTRACE_HEAD) + sizeof(BTRACE_TAIL), o;
	char *doc;

	if (nr > (SIZE_MAX - cap) / BLOCK_LINE_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	cap += nr * BLOCK_LINE_MAX;
	doc = malloc(cap);
	if (!doc)
		return NULL;
	o = (size_t)snprintf(doc, cap, "%s", BTRACE_HEAD);
	for (size_t i = 0; i < nr; i++)
		o += (size_t)snprintf(doc + o, cap - o,
				      "<block begin=\"0x%" PRIx64 "\" end=\"0x%" PRIx64 "\"/>\n",
				      blocks[i].begin, blocks[i].end);
	o += (size_t)snprintf(doc + o, cap - o, "%s", BTRACE_TAIL);
	*len = o;
	return doc;
}

int btrace_xml__conf(uint64_t bts_size, char *buf, size_t cap)
{
	int n;

	if (bts_size)
		n = snprintf(buf, cap, "<btrace-conf version=\"1.0\">\n<bts size=\"0x%" PRIx64
			     "\"/>\n</btrace-conf>\n", bts_size);
	else
		n = snprintf(buf, cap, "<btrace-conf version=\"1.0\"/>\n");
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}
