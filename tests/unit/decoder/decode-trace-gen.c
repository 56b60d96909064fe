// SPDX-License-Identifier: GPL-2.0
/*
 * decode-trace-gen.c - write a synthetic trace directory (trace-gen.h) for the decode benchmark.
 *
 *   decode-trace-gen KIND RECORDS DIR     (KIND: normal, distinct-cr3, exits, shared-cr3)
 *
 * DIR is created. Exit status 0, 2 on bad arguments, 1 when the files cannot be written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace-gen.h"

int main(int argc, char **argv)
{
	enum trace_gen_kind kind;
	unsigned long long nr;
	char *end;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: decode-trace-gen KIND RECORDS DIR\n");
		return 2;
	}
	kind = trace_gen__kind(argv[1]);
	errno = 0;
	nr = strtoull(argv[2], &end, 10);
	if (kind == TRACE_GEN_MAX || errno || *end || argv[2][0] == '-' || nr < 2) {
		fprintf(stderr, "decode-trace-gen: bad kind '%s' or record count '%s'\n", argv[1],
			argv[2]);
		return 2;
	}
	if (mkdir(argv[3], 0755)) {
		fprintf(stderr, "decode-trace-gen: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	ret = trace_gen__write(argv[3], kind, nr);
	if (ret) {
		fprintf(stderr, "decode-trace-gen: %s: %s\n", argv[3], strerror(-ret));
		return 1;
	}
	return 0;
}
