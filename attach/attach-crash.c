// SPDX-License-Identifier: GPL-2.0
/*
 * attach-crash.c - crash.json of `vbts attach`: a panic that QEMU (GUEST_PANICKED) or libvirt
 * (its crash event) reported, written by vmm/record/crash-report.c from the frozen ring of the
 * vCPU that recorded last, as `vbts run` writes its own.
 *
 * Locking: none; the rings are read on their writer's thread (the collector's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vbts/ring-format.h>

#include "attach-crash.h"
#include "crash-report.h"
#include "guest-tasks.h"

unsigned int attach_crash__pick_vcpu(const struct attach_crash_vcpu *v, unsigned int nr)
{
	unsigned int best = 0;

	for (unsigned int i = 1; i < nr; i++) {
		if (v[i].last_copy_ns < v[best].last_copy_ns)
			continue;
		if (v[i].last_copy_ns == v[best].last_copy_ns &&
		    v[i].last_escape_ns <= v[best].last_escape_ns)
			continue;
		best = i;
	}
	return best;
}

int attach_crash__write(const char *dir, unsigned int index, const struct attach_crash_vcpu *v,
			unsigned int nr, struct guest_tasks *tasks, uint64_t time_ns,
			unsigned int branches, unsigned int *vcpu)
{
	struct crash_report r = { .kind = CRASH_PANIC, .time_ns = time_ns,
				  .regs_note = ATTACH_CRASH_REGS_NOTE, .requested = branches };
	struct vbts_record *br = NULL;
	struct guest_crash gc;
	int ret;

	if (!nr)
		return -EINVAL;
	r.vcpu = attach_crash__pick_vcpu(v, nr);
	*vcpu = r.vcpu;
	if (v[r.vcpu].cr3 != ~0ULL)
		r.cr3 = v[r.vcpu].cr3 & VBTS_CR3_MASK;
	if (tasks && guest_tasks__current(tasks, r.vcpu, &gc)) {
		r.have_process = true;
		r.pid = gc.pid;
		r.tgid = gc.tgid;
		snprintf(r.comm, sizeof(r.comm), "%s", gc.comm);
		r.cr3 = gc.id;
	}
	if (branches) {
		br = calloc(branches, sizeof(*br));
		if (!br)
			return -ENOMEM;
		/* A panic: whatever the vCPU ran last, every task's branches. */
		r.nr_branches = crash_report__collect(v[r.vcpu].ring, ~0ULL, branches, br,
						      &r.ring_seq);
	}
	r.branches = br;
	ret = crash_report__write(dir, index, &r);
	free(br);
	return ret;
}
