// SPDX-License-Identifier: GPL-2.0
/*
 * debug-exit.c - QEMU isa-debug-exit semantics on one port.
 */
#include <string.h>

#include <vbts/agent-proto.h>

#include "debug-exit.h"

int debug_exit__status(uint32_t value)
{
	return (int)((value << 1) | 1);
}

int debug_exit__io(void *dev, struct io_access *a)
{
	struct debug_exit *d = dev;
	uint32_t v = 0;

	if (!a->write) {
		memset(a->data, 0, a->size);
		return 0;
	}
	memcpy(&v, a->data, a->size < sizeof(v) ? a->size : sizeof(v));
	if (d->notify)
		d->notify(d->opaque, debug_exit__status(v));
	return 0;
}

int debug_exit__register(struct debug_exit *d, struct io_bus *pio)
{
	return io_bus__register(pio, VBTS_DEBUG_EXIT_PORT, 1, debug_exit__io, d, "debug-exit");
}
