// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - check-step: runs the suites of the step tracer's pure parts.
 */
#include "check-main.h"
#include "step-tests.h"

VBTS_CHECK_MAIN(insn_suite, gva_suite, core_suite, transition_suite)
