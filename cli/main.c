// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - the vbts binary: git/perf-style dispatch to subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "help.h"

static const struct vbts_command *const commands[] = {
	&cmd_run,
	&cmd_attach,
	&cmd_probe,
	&cmd_decode,
	&cmd_diff,
	&cmd_baseline,
	&cmd_gdb,
	&cmd_ctl,
	&cmd_keygen,
	&cmd_verify,
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct vbts_command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

/* A command's help and summary come from doc/commands.md; its own are for one it lacks. */
static const char *usage_of(const struct vbts_command *cmd)
{
	const struct help_page *page = help__find(cmd->name);

	return page ? page->text : cmd->usage;
}

static void print_overview(FILE *f)
{
	const struct help_page *page;

	fprintf(f, "usage: vbts COMMAND [ARGS]\n\n"
		   "vbts records the taken branches of a KVM guest from the hypervisor.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		page = help__find(commands[i]->name);
		fprintf(f, "  %-8s %s\n", commands[i]->name,
			page ? page->summary : commands[i]->summary);
	}
	page = help__find("help");
	fprintf(f, "  %-8s %s\n", "help", page ? page->summary : "show help for a command");
	fprintf(f, "\nSee 'vbts help COMMAND' for the options of one command.\n");
}

static int help(int argc, char **argv)
{
	const struct vbts_command *cmd;

	if (argc < 2) {
		print_overview(stdout);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd && !strcmp(argv[1], "help") && help__find("help")) {
		fputs(help__find("help")->text, stdout);
		return 0;
	}
	if (!cmd) {
		fprintf(stderr, "vbts: no such command '%s'\n", argv[1]);
		return 2;
	}
	fputs(usage_of(cmd), stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct vbts_command *cmd;

	if (argc < 2) {
		print_overview(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("vbts %s\n", VBTS_VERSION);
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		fprintf(stderr, "vbts: '%s' is not a vbts command; see 'vbts help'\n", argv[1]);
		return 2;
	}
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		fputs(usage_of(cmd), stdout);
		return 0;
	}
	return cmd->fn(argc - 1, argv + 1);
}
