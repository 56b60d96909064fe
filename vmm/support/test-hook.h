/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-hook.h - a test-only hook into the start-up of `vbts run`: stop the process at a named
 * point so that a test can deliver a signal exactly there.
 */
#ifndef VBTS_VMM_TEST_HOOK_H
#define VBTS_VMM_TEST_HOOK_H

/* The environment variable naming the point; unset in every use but tests. */
#define TEST_HOOK_ENV "VBTS_TEST_STOP_AT"

/**
 * test_hook__stop_at() - for tests only: when the environment variable VBTS_TEST_STOP_AT
 * names @point, stop this process with SIGSTOP (as a job-control stop would) until it is
 * continued; a test then sends it a signal while it is stopped there, and SIGCONT. Does
 * nothing otherwise.
 * @point: where the caller is: "core", "memory", "vcpus", "devices", "collector" (that stage
 *         of `vbts run` is set up), "trace-dir", "vm.json", "vcpuN.ring" (trace__create()
 *         made it), "running" (the vCPU threads are started)
 */
void test_hook__stop_at(const char *point);

#endif /* VBTS_VMM_TEST_HOOK_H */
