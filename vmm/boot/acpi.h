/* SPDX-License-Identifier: GPL-2.0 */
/*
 * acpi.h - the ACPI tables of the PC platform: RSDP, XSDT and RSDT, FADT with FACS and DSDT,
 * MADT. What they describe: one LAPIC per vCPU and the IOAPIC (SMP through the MADT), the
 * PM1a blocks of devices/acpi-pm.h (power off through \_S5), the i8042 reset command as the
 * reset register, and the pvpanic port as an ACPI device QEMU0001 (Linux's pvpanic-mmio).
 */
#ifndef VBTS_VMM_BOOT_ACPI_H
#define VBTS_VMM_BOOT_ACPI_H

#include <stddef.h>
#include <stdint.h>

/* Where the PC platform puts them: the BIOS area, reserved in the memory map. */
#define ACPI_TABLES_GPA 0xe0000ULL
#define ACPI_TABLES_END 0x100000ULL

#define ACPI_MAX_VCPUS 255 /* xAPIC ids fit the MADT's local APIC entries */

/* Signatures and sizes (ACPI 6.x). */
#define ACPI_RSDP_SIZE 36
#define ACPI_HEADER_SIZE 36
#define ACPI_FADT_SIZE 276
#define ACPI_FACS_SIZE 64

/**
 * struct acpi_config - what the tables describe.
 * @nr_vcpus:     vCPUs (APIC ids 0 .. nr_vcpus - 1), 1 .. ACPI_MAX_VCPUS
 * @pm1a_evt:     PM1a event block port (4 bytes: status, enable)
 * @pm1a_cnt:     PM1a control block port (2 bytes)
 * @sci_irq:      the SCI's ISA IRQ
 * @s5_slp_typ:   SLP_TYP of \_S5
 * @reset_port:   I/O port of the reset register
 * @reset_value:  byte written there to reset
 * @pvpanic_port: the pvpanic port (an ACPI device QEMU0001), 0 for none
 */
struct acpi_config {
	unsigned int nr_vcpus;
	uint16_t pm1a_evt;
	uint16_t pm1a_cnt;
	uint8_t sci_irq;
	uint8_t s5_slp_typ;
	uint16_t reset_port;
	uint8_t reset_value;
	uint16_t pvpanic_port;
};

/**
 * acpi__build() - write the tables at guest-physical @gpa, the RSDP first.
 * @buf:  host view of [@gpa, @gpa + @size), zeroed here first
 * @size: bytes available
 * @gpa:  guest-physical address of @buf, 64-byte aligned, below 4 GiB
 * @cfg:  what to describe
 *
 * Return: bytes used; -EINVAL for a bad @cfg or @gpa, -E2BIG when @size is too small.
 */
long acpi__build(uint8_t *buf, size_t size, uint64_t gpa, const struct acpi_config *cfg);

/**
 * acpi__checksum() - the byte that makes @len bytes sum to zero (ACPI checksum).
 * @p:   bytes
 * @len: their number
 *
 * Return: the sum of the bytes, negated.
 */
uint8_t acpi__checksum(const uint8_t *p, size_t len);

#endif /* VBTS_VMM_BOOT_ACPI_H */
