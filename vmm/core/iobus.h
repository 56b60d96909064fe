/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iobus.h - the port-I/O and MMIO buses: address ranges routed to device handlers; accesses
 * nobody claims are counted, never fatal, never logged one by one.
 *
 * Locking: devices are registered by the main thread before any vCPU runs; afterwards the
 * handler table is read-only and only the atomic counters change. Each device locks itself.
 */
#ifndef VBTS_VMM_IOBUS_H
#define VBTS_VMM_IOBUS_H

#include <stdbool.h>
#include <stdint.h>

#define IO_BUS_MAX_HANDLERS 16

/**
 * struct io_access - one guest access, as a device sees it.
 * @vcpu:   index of the vCPU doing it
 * @offset: from the start of the device's range
 * @data:   @size bytes, little endian; filled by the device on reads
 * @size:   1, 2, 4 or 8
 * @write:  true for a guest write
 */
struct io_access {
	unsigned int vcpu;
	uint64_t offset;
	uint8_t *data;
	unsigned int size;
	bool write;
};

/* A device handler; returns 0 (the access is done). */
typedef int (*io_handler_fn)(void *dev, struct io_access *a);

struct io_handler {
	uint64_t base;
	uint64_t len;
	io_handler_fn fn;
	void *dev;
	const char *name;
};

/**
 * struct io_bus - one address space (PIO or MMIO).
 * @name:       "pio", "mmio"
 * @nr:         registered handlers
 * @handlers:   sorted by nothing; the table is tiny
 * @unhandled_reads, @unhandled_writes: accesses nobody claimed (reads return all ones)
 */
struct io_bus {
	const char *name;
	unsigned int nr;
	struct io_handler handlers[IO_BUS_MAX_HANDLERS];
	uint64_t unhandled_reads;
	uint64_t unhandled_writes;
};

/**
 * io_bus__init() - an empty bus.
 * @bus:  bus
 * @name: for messages
 */
void io_bus__init(struct io_bus *bus, const char *name);

/**
 * io_bus__register() - route [base, base + len) to @fn.
 * @bus:  bus
 * @base: first address
 * @len:  bytes, > 0
 * @fn:   handler
 * @dev:  its device
 * @name: device name
 *
 * Return: 0, -EINVAL for an empty or wrapping range, -EBUSY when it overlaps another device,
 * -ENOSPC when the bus is full.
 */
int io_bus__register(struct io_bus *bus, uint64_t base, uint64_t len, io_handler_fn fn,
		     void *dev, const char *name);

/**
 * io_bus__access() - route one access; an unclaimed one is counted (reads see all ones).
 * @bus:  bus
 * @addr: port or guest-physical address
 * @a:    the access (@a->offset is filled in here)
 *
 * Return: 0 when a device took it, -ENODEV when nobody did.
 */
int io_bus__access(struct io_bus *bus, uint64_t addr, struct io_access *a);

#endif /* VBTS_VMM_IOBUS_H */
