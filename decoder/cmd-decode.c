// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-decode.c - `vbts decode` (placeholder until the VMM lands).
 */
#include <stdio.h>
#include "commands.h"

static int decode(int argc, char **argv)
{
	fprintf(stderr, "vbts decode: not built yet\n");
	return 2;
}

const struct vbts_command cmd_decode = {
	.name = "decode", .summary = "decode", .usage = "usage: vbts decode\n", .fn = decode,
};
