/* SPDX-License-Identifier: GPL-2.0 */
/*
 * run.h - a `vbts run`: boot an image in a VM, optionally trace its branches, and end with
 * the guest's debug-exit status. The options come parsed (cli/cmd-run.c); this is the run.
 */
#ifndef VBTS_VMM_RUN_H
#define VBTS_VMM_RUN_H

#include <stdbool.h>

#include <vbts/ring-format.h>

#include "crash-report.h"
#include "guest-tasks.h"
#include "trace.h"

/* --backend: which tracer records the branches. */
enum run_backend {
	RUN_BACKEND_AUTO,
	RUN_BACKEND_KVM,
	RUN_BACKEND_STEP,
};

/**
 * struct run_opts - what `vbts run` was asked to do (its options, see its usage).
 * @trace_dir:      --trace, NULL when not tracing
 * @seal_key:       --seal: the sealing key, or NULL
 * @seal_interval_s: --seal-interval, 0 for the default
 * @backend:        --backend
 * @cpl:            --cpl
 * @collector:      --ring, --mode, --segment, --disk-budget, --on-full
 * @vcpus:          --vcpus
 * @memory_mib:     --memory
 * @console:        --console, NULL for stdout
 * @stats:          --stats
 * @timeout_s:      --timeout, 0 for none
 * @image:          the image (--kernel or the last argument)
 * @initrd:         --initrd, or NULL
 * @append:         --append, or NULL
 * @system_map:     --system-map, or NULL
 * @tasks:          --task, [nr_tasks]
 * @nr_tasks:       --task given
 * @guest_bts:      --guest-bts
 * @on_crash:       --on-crash
 * @crash_branches: --crash-branches
 * @control:        --control, or NULL
 * @gdb:            --gdb, or NULL
 * @gdb_wait:       --gdb-wait
 */
struct run_opts {
	const char *trace_dir;
	const char *seal_key;
	unsigned int seal_interval_s;
	enum run_backend backend;
	enum vbts_cpl_filter cpl;
	struct trace_collector_config collector;
	unsigned int vcpus;
	unsigned int memory_mib;
	const char *console;
	bool stats;
	unsigned int timeout_s;
	const char *image;
	const char *initrd;
	const char *append;
	const char *system_map;
	const char *tasks[GUEST_TASKS_MAX_SELECT];
	unsigned int nr_tasks;
	bool guest_bts;
	enum crash_action on_crash;
	unsigned int crash_branches;
	const char *control;
	const char *gdb;
	bool gdb_wait;
};

/**
 * run__vm() - the run: refuse a bad ring size or trace directory before touching anything,
 * set the VM up stage by stage (core, memory, platform, vCPUs, devices, collector, control,
 * console), run it until it stops, tear it down in reverse. SIGINT, SIGTERM, SIGHUP and
 * --timeout's SIGALRM end it.
 * @o: the options, checked by their parser
 *
 * Return: the process exit status: the guest's debug-exit status, 0 when a Linux guest
 * powers off or resets, 1 when the guest or the VMM fails, 2 on bad input, 128 + N after
 * signal N.
 */
int run__vm(const struct run_opts *o);

#endif /* VBTS_VMM_RUN_H */
