/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe.h - what this host's KVM can do, each capability established by running a tiny
 * guest (vmm/probe/), not by KVM_CHECK_EXTENSION alone.
 */
#ifndef VBTS_VMM_PROBE_H
#define VBTS_VMM_PROBE_H

#include "tracer.h"

/* The probed capabilities, in the order `vbts probe` prints them. */
enum probe_cap {
	PROBE_STEP_CPL0,
	PROBE_STEP_CPL3,
	PROBE_HWBP_CPL3,
	PROBE_USER_MSR,
	PROBE_SYNC_REGS,
	PROBE_KVM_BTS,
	PROBE_NR_CAPS,
};

/**
 * struct probe_report - answers and why.
 * @caps: the answers, as the tracer backends take them
 * @why:  per enum probe_cap, one short phrase on what the probe guest did
 */
struct probe_report {
	struct tracer_caps caps;
	char why[PROBE_NR_CAPS][128];
};

/**
 * probe__cap_name() - the label of a capability ("cpl3 single-step").
 * @cap: enum probe_cap
 *
 * Return: a static string.
 */
const char *probe__cap_name(enum probe_cap cap);

/**
 * probe__cap_key() - the JSON key of a capability ("cpl3_single_step").
 * @cap: enum probe_cap
 *
 * Return: a static string.
 */
const char *probe__cap_key(enum probe_cap cap);

/**
 * probe__answer() - the answer for one capability.
 * @caps: answers
 * @cap:  enum probe_cap
 *
 * Return: true for yes.
 */
bool probe__answer(const struct tracer_caps *caps, enum probe_cap cap);

/**
 * probe__format_modes() - KVM_CAP_X86_BTS mode bits as words ("ring step guest"), "none" for 0.
 * @modes: VBTS_KVM_X86_BTS_MODE_* bits; unknown bits print as "0x..."
 * @buf:   output
 * @len:   size of @buf (64 bytes hold every mode)
 *
 * Return: @buf.
 */
const char *probe__format_modes(unsigned int modes, char *buf, size_t len);

/**
 * probe__report() - run every probe guest, each in its own throw-away VM with a time and exit
 * budget; a probe that cannot run or does not finish answers no.
 * @rep: filled in
 *
 * Return: 0; -ENODEV when /dev/kvm is missing or unusable (reported in one line).
 */
int probe__report(struct probe_report *rep);

/**
 * probe__run() - probe__report() for callers that only need the answers.
 * @caps: filled in
 *
 * Return: as probe__report().
 */
int probe__run(struct tracer_caps *caps);

#endif /* VBTS_VMM_PROBE_H */
