// SPDX-License-Identifier: GPL-2.0
/*
 * iobus.c - PIO/MMIO routing to devices, with counters for what nobody claims.
 */
#include <errno.h>
#include <string.h>

#include "iobus.h"

void io_bus__init(struct io_bus *bus, const char *name)
{
	memset(bus, 0, sizeof(*bus));
	bus->name = name;
}

int io_bus__register(struct io_bus *bus, uint64_t base, uint64_t len, io_handler_fn fn,
		     void *dev, const char *name)
{
	struct io_handler *h;

	if (!len || base + len < base || !fn)
		return -EINVAL;
	for (unsigned int i = 0; i < bus->nr; i++) {
		h = &bus->handlers[i];
		if (base < h->base + h->len && h->base < base + len)
			return -EBUSY;
	}
	if (bus->nr == IO_BUS_MAX_HANDLERS)
		return -ENOSPC;
	h = &bus->handlers[bus->nr++];
	h->base = base;
	h->len = len;
	h->fn = fn;
	h->dev = dev;
	h->name = name;
	return 0;
}

int io_bus__access(struct io_bus *bus, uint64_t addr, struct io_access *a)
{
	for (unsigned int i = 0; i < bus->nr; i++) {
		struct io_handler *h = &bus->handlers[i];

		if (addr >= h->base && addr - h->base < h->len) {
			a->offset = addr - h->base;
			return h->fn(h->dev, a);
		}
	}
	if (a->write) {
		__atomic_add_fetch(&bus->unhandled_writes, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&bus->unhandled_reads, 1, __ATOMIC_RELAXED);
		memset(a->data, 0xff, a->size);
	}
	return -ENODEV;
}
