/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h - `vbts run --harness` / `vbts probe --harness`: the same command inside the QEMU
 * harness (tests/harness/run: QEMU TCG, nested SVM, Debian's KVM), for hosts whose KVM cannot
 * do what is asked (e.g. single-step ring 3).
 */
#ifndef VBTS_VMM_HARNESS_H
#define VBTS_VMM_HARNESS_H

#include <stdbool.h>

/**
 * harness__strip() - remove every "--harness" from @argv (before a lone "--").
 * @argc: argument count
 * @argv: arguments, changed in place (stays NULL-terminated)
 *
 * Return: true when it was there; *@argc is updated.
 */
bool harness__strip(int *argc, char **argv);

/**
 * harness__path_inside() - whether @path (existing or not) lies inside the shared work tree.
 * @path: a path, relative to the current directory or absolute
 *
 * Return: true when files written there come back to the host.
 */
bool harness__path_inside(const char *path);

/* What the harness adds to an inner command's time limit: its boot, and the command's exit. */
#define HARNESS_TIMEOUT_MARGIN_S 120

/* Which KVM modules the harness loads. */
enum harness_kvm {
	HARNESS_KVM_STOCK,	/* Debian's own kvm/kvm-amd */
	HARNESS_KVM_SERIES,	/* kvm-patches/, built (or brought up to date) first */
	HARNESS_KVM_SERIES_CACHED, /* kvm-patches/ when built before (brought up to date), else stock */
};

/**
 * harness__run() - run this vbts binary with @argv inside the harness and wait for it.
 * @argv: the subcommand and its arguments (argv[0] is the subcommand), NULL-terminated
 * @kvm:  the KVM modules the harness loads; the series' modules are built by
 *        kvm-patches/build into BUILD/kvm-patches (cached, rebuilt when a patch changes)
 * @timeout_s: the inner command's own time limit in seconds, 0 for none: the harness then
 *        waits that long plus HARNESS_TIMEOUT_MARGIN_S instead of its default
 *
 * Return: the inner command's exit status; 2 when the harness cannot run here (no QEMU, no
 * kernel package: reported in one line), 1 when the harness failed or timed out, or the
 * series' modules could not be built.
 */
int harness__run(char **argv, enum harness_kvm kvm, unsigned int timeout_s);

#endif /* VBTS_VMM_HARNESS_H */
