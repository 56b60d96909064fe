// SPDX-License-Identifier: GPL-2.0
/*
 * help.c - looks up the help texts doc/man/mkpages.py generated from doc/commands.md.
 */
#include <string.h>

#include "help.h"

const struct help_page *help__find(const char *name)
{
	for (const struct help_page *p = help__pages; p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}
