// SPDX-License-Identifier: GPL-2.0
/*
 * test-main.c - the oracle's unit-test binary: QEMU log parser, comparator, label table, the
 * list cache, and the rules the built guest images must keep.
 */
#include "check-main.h"
#include "oracle-tests.h"

VBTS_CHECK_MAIN(qemu_log_suite, compare_suite, labels_suite, images_suite,
		gen_suite)
