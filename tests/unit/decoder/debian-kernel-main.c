// SPDX-License-Identifier: GPL-2.0
/*
 * debian-kernel-main.c - check-decoder-debian: the decoder on the System.map and vmlinux of
 * Debian's kernel package, which tests/harness/prepare caches under
 * $VBTS_BUILD_DIR/harness/<release>/. Exit status 77 (skip), with the reason, when the cache
 * has no System.map; otherwise the linux-debian suite of test-linux-decode.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder-test.h"

int main(void)
{
	char path[768];
	SRunner *sr;
	int failed;

	if (debian_kernel_file("System.map", path, sizeof(path))) {
		printf("skip: no System.map of Debian's kernel under %s/harness (tests/harness/prepare "
		       "caches it; the harness suite runs prepare)\n",
		       getenv("VBTS_BUILD_DIR") ? getenv("VBTS_BUILD_DIR") : "$VBTS_BUILD_DIR");
		return 77;
	}
	sr = srunner_create(linux_debian_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
