// SPDX-License-Identifier: GPL-2.0
/*
 * i8042.c - keyboard-controller reset: command 0xfe on port 0x64.
 */
#include <string.h>

#include "devices/i8042.h"

int i8042__io(void *dev, struct io_access *a)
{
	struct i8042 *k = dev;
	uint64_t port = I8042_DATA_PORT + a->offset;

	if (!a->write) {
		memset(a->data, port == I8042_DATA_PORT || port == I8042_CMD_PORT ? 0 : 0xff,
		       a->size);
		return 0;
	}
	if (port == I8042_CMD_PORT && a->data[0] == I8042_CMD_RESET && k->reset)
		k->reset(k->opaque);
	return 0;
}

int i8042__register(struct i8042 *k, struct io_bus *pio)
{
	return io_bus__register(pio, I8042_DATA_PORT, I8042_NR_PORTS, i8042__io, k, "i8042");
}
