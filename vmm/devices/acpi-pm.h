/* SPDX-License-Identifier: GPL-2.0 */
/*
 * acpi-pm.h - the ACPI fixed-hardware power-management block of the PC platform: PM1a event
 * (status, enable) and PM1a control registers at ACPI_PM_PORT. Writing SLP_EN with the \_S5
 * sleep type powers the VM off.
 *
 * Locking: @lock serializes the registers between vCPU threads.
 */
#ifndef VBTS_VMM_DEVICES_ACPI_PM_H
#define VBTS_VMM_DEVICES_ACPI_PM_H

#include <pthread.h>
#include <stdint.h>

#include "iobus.h"

#define ACPI_PM_PORT 0x600
#define ACPI_PM_NR_PORTS 6
#define ACPI_PM1A_EVT_PORT ACPI_PM_PORT       /* PM1_STS (2 bytes), PM1_EN (2 bytes) */
#define ACPI_PM1A_EVT_LEN 4
#define ACPI_PM1A_CNT_PORT (ACPI_PM_PORT + 4) /* PM1_CNT (2 bytes) */
#define ACPI_PM1A_CNT_LEN 2
#define ACPI_PM_SCI_IRQ 9                     /* never raised: no event is ever pending */
#define ACPI_PM_S5_SLP_TYP 5                  /* the SLP_TYP of \_S5 in the DSDT */

#define ACPI_PM1_CNT_SCI_EN (1U << 0)
#define ACPI_PM1_CNT_SLP_TYP_SHIFT 10
#define ACPI_PM1_CNT_SLP_TYP_MASK (7U << 10)
#define ACPI_PM1_CNT_SLP_EN (1U << 13)

/**
 * struct acpi_pm - the device.
 * @lock:      see the file comment
 * @sts, @en:  PM1_STS (write 1 to clear), PM1_EN
 * @cnt:       PM1_CNT as last written (SCI_EN reads as 1: the VM is always in ACPI mode)
 * @power_off: called once, in the writing vCPU's thread, when the guest enters S5
 * @opaque:    @power_off's argument
 * @ignored_sleeps: SLP_EN writes with another sleep type (the DSDT offers none)
 */
struct acpi_pm {
	pthread_mutex_t lock;
	uint16_t sts;
	uint16_t en;
	uint16_t cnt;
	void (*power_off)(void *opaque);
	void *opaque;
	uint64_t ignored_sleeps;
};

/**
 * acpi_pm__init() - registers as after reset (SCI_EN set).
 * @pm:        device
 * @power_off: called when the guest enters S5
 * @opaque:    its argument
 */
void acpi_pm__init(struct acpi_pm *pm, void (*power_off)(void *opaque), void *opaque);

/**
 * acpi_pm__fini() - release the lock.
 * @pm: device
 */
void acpi_pm__fini(struct acpi_pm *pm);

/**
 * acpi_pm__io() - io_handler_fn of the ACPI_PM_NR_PORTS ports at ACPI_PM_PORT.
 * @dev: the struct acpi_pm
 * @a:   the access (byte, word or dword at any offset)
 *
 * Return: 0.
 */
int acpi_pm__io(void *dev, struct io_access *a);

/**
 * acpi_pm__register() - put the device on the VM's PIO bus: the ACPI_PM_NR_PORTS ports at
 * ACPI_PM_PORT, served by acpi_pm__io().
 * @pm:   the device
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int acpi_pm__register(struct acpi_pm *pm, struct io_bus *pio);

#endif /* VBTS_VMM_DEVICES_ACPI_PM_H */
