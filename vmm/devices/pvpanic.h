/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvpanic.h - QEMU's ISA pvpanic device: the guest tells the host it panicked (the VMM then
 * freezes that vCPU's ring on the crash and ends the run) or that a crash kernel is loaded.
 */
#ifndef VBTS_VMM_PVPANIC_H
#define VBTS_VMM_PVPANIC_H

#include "iobus.h"

#define PVPANIC_PORT 0x505
#define PVPANIC_PANICKED (1U << 0)
#define PVPANIC_CRASH_LOADED (1U << 1)

/**
 * struct pvpanic - the device.
 * @notify: called in the writing vCPU's thread with the event bits it wrote (only the
 *          supported ones, never 0)
 * @opaque: @notify's first argument
 */
struct pvpanic {
	void (*notify)(void *opaque, unsigned int vcpu, unsigned int events);
	void *opaque;
};

/**
 * pvpanic__io() - io_handler_fn of PVPANIC_PORT: reads return the supported events, writes
 * notify.
 * @dev: the struct pvpanic
 * @a:   the access
 *
 * Return: 0.
 */
int pvpanic__io(void *dev, struct io_access *a);

/**
 * pvpanic__register() - put the device on the VM's PIO bus: PVPANIC_PORT, served by pvpanic__io().
 * @p:   the device
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int pvpanic__register(struct pvpanic *p, struct io_bus *pio);

#endif /* VBTS_VMM_PVPANIC_H */
