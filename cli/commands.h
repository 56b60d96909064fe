/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - the subcommands of the vbts binary; each lives with the component it drives.
 *
 * A command returns the process exit status: 0 success, 1 failure of the job itself (for
 * `run`, the guest's own exit status is returned instead), 2 bad input or environment.
 */
#ifndef VBTS_CLI_COMMANDS_H
#define VBTS_CLI_COMMANDS_H

/**
 * struct vbts_command - one subcommand.
 * @name:    what the user types
 * @summary: one line for `vbts help`
 * @usage:   full help for `vbts help NAME` / `vbts NAME --help`
 * @fn:      entry point, argv[0] is the command name
 */
struct vbts_command {
	const char *name;
	const char *summary;
	const char *usage;
	int (*fn)(int argc, char **argv);
};

extern const struct vbts_command cmd_run;    /* vmm/cmd-run.c */
extern const struct vbts_command cmd_probe;  /* vmm/cmd-probe.c */
extern const struct vbts_command cmd_decode; /* decoder/cmd-decode.c */

#endif /* VBTS_CLI_COMMANDS_H */
