/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debug-exit.h - QEMU's isa-debug-exit: the guest writes v, the VM ends with status
 * (v << 1) | 1.
 */
#ifndef VBTS_VMM_DEBUG_EXIT_H
#define VBTS_VMM_DEBUG_EXIT_H

#include <stdint.h>

#include "iobus.h"

/**
 * struct debug_exit - the device.
 * @notify: called with the exit status on every guest write (the VM stops on the first)
 * @opaque: @notify's first argument
 */
struct debug_exit {
	void (*notify)(void *opaque, int status);
	void *opaque;
};

/**
 * debug_exit__status() - the exit status for a written value, as QEMU computes it.
 * @value: what the guest wrote (zero-extended from the access size)
 *
 * Return: (value << 1) | 1, truncated to an int like QEMU's exit() argument.
 */
int debug_exit__status(uint32_t value);

/**
 * debug_exit__io() - io_handler_fn of the debug-exit port.
 * @dev: the struct debug_exit
 * @a:   the access; reads return 0
 *
 * Return: 0.
 */
int debug_exit__io(void *dev, struct io_access *a);

/**
 * debug_exit__register() - put the device on the VM's PIO bus: VBTS_DEBUG_EXIT_PORT, served by
 * debug_exit__io().
 * @d:   the device
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int debug_exit__register(struct debug_exit *d, struct io_bus *pio);

#endif /* VBTS_VMM_DEBUG_EXIT_H */
