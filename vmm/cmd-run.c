// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-run.c - `vbts run` (placeholder until the VMM lands).
 */
#include <stdio.h>
#include "commands.h"

static int run(int argc, char **argv)
{
	fprintf(stderr, "vbts run: not built yet\n");
	return 2;
}

const struct vbts_command cmd_run = {
	.name = "run", .summary = "run", .usage = "usage: vbts run\n", .fn = run,
};
