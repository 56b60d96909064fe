// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-probe.c - `vbts probe` (placeholder until the VMM lands).
 */
#include <stdio.h>
#include "commands.h"

static int probe(int argc, char **argv)
{
	fprintf(stderr, "vbts probe: not built yet\n");
	return 2;
}

const struct vbts_command cmd_probe = {
	.name = "probe", .summary = "probe", .usage = "usage: vbts probe\n", .fn = probe,
};
