// SPDX-License-Identifier: GPL-2.0
/*
 * test-hook.c - the test-only stop points of `vbts run`'s start-up (see test-hook.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "test-hook.h"

void test_hook__stop_at(const char *point)
{
	const char *want = getenv(TEST_HOOK_ENV);

	if (want && !strcmp(want, point))
		raise(SIGSTOP);
}
