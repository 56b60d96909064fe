// SPDX-License-Identifier: GPL-2.0
/*
 * acpi-pm.c - PM1a status, enable and control registers; S5 powers off.
 *
 * Locking: see acpi-pm.h.
 */
#include <stdbool.h>
#include <string.h>

#include "devices/acpi-pm.h"

void acpi_pm__init(struct acpi_pm *pm, void (*power_off)(void *opaque), void *opaque)
{
	memset(pm, 0, sizeof(*pm));
	pthread_mutex_init(&pm->lock, NULL);
	pm->cnt = ACPI_PM1_CNT_SCI_EN;
	pm->power_off = power_off;
	pm->opaque = opaque;
}

void acpi_pm__fini(struct acpi_pm *pm)
{
	pthread_mutex_destroy(&pm->lock);
}

static uint8_t read_byte(struct acpi_pm *pm, unsigned int off)
{
	switch (off) {
	case 0:
		return pm->sts & 0xff;
	case 1:
		return pm->sts >> 8;
	case 2:
		return pm->en & 0xff;
	case 3:
		return pm->en >> 8;
	case 4:
		return (pm->cnt | ACPI_PM1_CNT_SCI_EN) & 0xff;
	case 5:
		/* SLP_EN is write-only. */
		return (pm->cnt & ~ACPI_PM1_CNT_SLP_EN) >> 8;
	default:
		return 0xff;
	}
}

/* Returns true when this write enters S5. */
static bool write_byte(struct acpi_pm *pm, unsigned int off, uint8_t v)
{
	switch (off) {
	case 0:
		pm->sts &= ~(uint16_t)v;
		break;
	case 1:
		pm->sts &= ~((uint16_t)v << 8);
		break;
	case 2:
		pm->en = (pm->en & 0xff00) | v;
		break;
	case 3:
		pm->en = (pm->en & 0x00ff) | ((uint16_t)v << 8);
		break;
	case 4:
		pm->cnt = (pm->cnt & 0xff00) | v;
		break;
	case 5:
		pm->cnt = (pm->cnt & 0x00ff) | ((uint16_t)v << 8);
		if (!(pm->cnt & ACPI_PM1_CNT_SLP_EN))
			break;
		pm->cnt &= ~ACPI_PM1_CNT_SLP_EN;
		if (((pm->cnt & ACPI_PM1_CNT_SLP_TYP_MASK) >> ACPI_PM1_CNT_SLP_TYP_SHIFT) ==
		    ACPI_PM_S5_SLP_TYP)
			return true;
		pm->ignored_sleeps++;
		break;
	default:
		break;
	}
	return false;
}

int acpi_pm__io(void *dev, struct io_access *a)
{
	struct acpi_pm *pm = dev;
	bool off = false;

	pthread_mutex_lock(&pm->lock);
	/* A wide access covers consecutive registers, low byte first. */
	for (unsigned int i = 0; i < a->size; i++) {
		if (a->write)
			off |= write_byte(pm, a->offset + i, a->data[i]);
		else
			a->data[i] = read_byte(pm, a->offset + i);
	}
	pthread_mutex_unlock(&pm->lock);
	if (off && pm->power_off)
		pm->power_off(pm->opaque);
	return 0;
}

int acpi_pm__register(struct acpi_pm *pm, struct io_bus *pio)
{
	return io_bus__register(pio, ACPI_PM_PORT, ACPI_PM_NR_PORTS, acpi_pm__io, pm, "acpi-pm");
}
