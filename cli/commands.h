/* SPDX-License-Identifier: GPL-2.0 */
/*
 * commands.h - the subcommands of the vbts binary, one cli/cmd-*.c each, calling the
 * component libraries beneath them.
 *
 * A command returns the process exit status: 0 success, 1 failure of the job itself (for
 * `run`, the guest's own exit status is returned instead), 2 bad input or environment.
 */
#ifndef VBTS_CLI_COMMANDS_H
#define VBTS_CLI_COMMANDS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/**
 * command__option_error() - one line on stderr for an option getopt_long() refused (called
 * with opterr 0, when it returned '?' or ':'), ending with a hint at `vbts help @cmd`.
 * @cmd:    the command's name
 * @ret:    what getopt_long() returned
 * @opt:    optopt after it
 * @arg:    argv[optind - 1] after it, the word that held the option
 */
static inline void command__option_error(const char *cmd, int ret, int opt, const char *arg)
{
	size_t n = strcspn(arg, "=");

	if (ret == ':')
		fprintf(stderr, "vbts: option '%s' needs an argument", arg);
	else if (!strncmp(arg, "--", 2) && opt && arg[n])
		fprintf(stderr, "vbts: option '%.*s' takes no argument", (int)n, arg);
	else if (!strncmp(arg, "--", 2))
		fprintf(stderr, "vbts: unknown option '%s'", arg);
	else
		fprintf(stderr, "vbts: unknown option '-%c'", opt);
	fprintf(stderr, "; see 'vbts help %s'\n", cmd);
}

/**
 * command__parse_count() - an option's decimal count: digits only, at most @max.
 * @s:   the option's argument
 * @max: the largest value taken
 * @v:   receives the value
 *
 * Return: 0, or -EINVAL for anything else (a sign, a blank, other characters, too large).
 */
static inline int command__parse_count(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -EINVAL : 0;
}

extern const struct vbts_command cmd_run;    /* cli/cmd-run.c */
extern const struct vbts_command cmd_probe;  /* cli/cmd-probe.c */
extern const struct vbts_command cmd_attach; /* cli/cmd-attach.c */
extern const struct vbts_command cmd_ctl;    /* cli/cmd-ctl.c */
extern const struct vbts_command cmd_decode; /* cli/cmd-decode.c */
extern const struct vbts_command cmd_diff;   /* cli/cmd-diff.c */
extern const struct vbts_command cmd_baseline; /* cli/cmd-baseline.c */
extern const struct vbts_command cmd_gdb;    /* cli/cmd-gdb.c */
extern const struct vbts_command cmd_keygen; /* cli/cmd-keygen.c */
extern const struct vbts_command cmd_verify; /* cli/cmd-verify.c */

#endif /* VBTS_CLI_COMMANDS_H */
