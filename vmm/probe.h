/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe.h - what this host's KVM can do, each capability established by running a tiny
 * guest (vmm/probe/), not by KVM_CHECK_EXTENSION alone.
 */
#ifndef VBTS_VMM_PROBE_H
#define VBTS_VMM_PROBE_H

#include "tracer.h"

/**
 * probe__run() - run every probe guest in its own throw-away VM.
 * @caps: filled in; a probe that cannot run answers false
 *
 * Return: 0; -ENODEV when /dev/kvm is unusable (reported in one line).
 */
int probe__run(struct tracer_caps *caps);

#endif /* VBTS_VMM_PROBE_H */
