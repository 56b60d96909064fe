/* SPDX-License-Identifier: GPL-2.0 */
/*
 * help.h - the texts of `vbts help CMD`, made from doc/commands.md at build time (as the man
 * pages are, by doc/man/mkpages.py), so that help and manual say the same.
 */
#ifndef VBTS_CLI_HELP_H
#define VBTS_CLI_HELP_H

#include <stddef.h>

/**
 * struct help_page - one command's help, from its section of doc/commands.md.
 * @name:    the command, as the user types it
 * @summary: its one-line summary
 * @text:    synopsis, description, options and exit status, wrapped for a terminal
 */
struct help_page {
	const char *name;
	const char *summary;
	const char *text;
};

/* Every section of doc/commands.md, ended by an entry whose name is NULL (generated). */
extern const struct help_page help__pages[];

/**
 * help__find() - the help of a command.
 * @name: the command's name
 *
 * Return: its page, or NULL when doc/commands.md has no section for it.
 */
const struct help_page *help__find(const char *name);

#endif /* VBTS_CLI_HELP_H */
