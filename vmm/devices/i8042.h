/* SPDX-License-Identifier: GPL-2.0 */
/*
 * i8042.h - the part of the PC keyboard controller an operating system uses to reset the
 * machine: command 0xfe (pulse the reset line) on port 0x64. No keyboard: the status register
 * reads 0 (both buffers empty), the data port reads 0.
 */
#ifndef VBTS_VMM_DEVICES_I8042_H
#define VBTS_VMM_DEVICES_I8042_H

#include "iobus.h"

#define I8042_DATA_PORT 0x60
#define I8042_CMD_PORT 0x64 /* write: command; read: status */
#define I8042_NR_PORTS (I8042_CMD_PORT - I8042_DATA_PORT + 1)
#define I8042_CMD_RESET 0xfe

/**
 * struct i8042 - the device.
 * @reset:  called in the writing vCPU's thread on the reset command
 * @opaque: @reset's argument
 */
struct i8042 {
	void (*reset)(void *opaque);
	void *opaque;
};

/**
 * i8042__io() - io_handler_fn of ports I8042_DATA_PORT to I8042_CMD_PORT; the ports in
 * between (0x61, the PIT's speaker port, served by KVM) read as all ones here.
 * @dev: the struct i8042
 * @a:   the access
 *
 * Return: 0.
 */
int i8042__io(void *dev, struct io_access *a);

/**
 * i8042__register() - put the device on the VM's PIO bus: ports I8042_DATA_PORT to I8042_CMD_PORT,
 * served by i8042__io().
 * @k:   the device
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int i8042__register(struct i8042 *k, struct io_bus *pio);

#endif /* VBTS_VMM_DEVICES_I8042_H */
