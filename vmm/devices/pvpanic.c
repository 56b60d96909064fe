// SPDX-License-Identifier: GPL-2.0
/*
 * pvpanic.c - the ISA pvpanic port: panic and crash-loaded events from the guest.
 */
#include <string.h>

#include "pvpanic.h"

int pvpanic__io(void *dev, struct io_access *a)
{
	struct pvpanic *p = dev;
	unsigned int events;

	if (!a->write) {
		memset(a->data, 0, a->size);
		a->data[0] = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
		return 0;
	}
	events = a->data[0] & (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
	if (events && p->notify)
		p->notify(p->opaque, a->vcpu, events);
	return 0;
}

int pvpanic__register(struct pvpanic *p, struct io_bus *pio)
{
	return io_bus__register(pio, PVPANIC_PORT, 1, pvpanic__io, p, "pvpanic");
}
