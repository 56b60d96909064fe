// SPDX-License-Identifier: GPL-2.0
/*
 * acpi.c - ACPI tables for Linux guests, written byte by byte at fixed offsets (ACPI 6.x):
 * RSDP → XSDT/RSDT → FADT (→ FACS, DSDT) and MADT. The DSDT is hand-made AML:
 *
 *   Scope (\_SB) {
 *       Device (PEVT) {
 *           Name (_HID, "QEMU0001")
 *           Name (_STA, 0x0F)
 *           Name (_CRS, ResourceTemplate () { IO (Decode16, port, port, 1, 1) })
 *       }
 *   }
 *   Name (_S5, Package (4) { slp_typ, slp_typ, 0, 0 })
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "boot/acpi.h"
#include "x86.h"

#define OEM_ID "VBTS  "   /* 6 bytes */
#define CREATOR_ID "VBTS" /* 4 bytes */

/* FADT offsets */
#define FADT_FIRMWARE_CTRL 36
#define FADT_DSDT 40
#define FADT_SCI_INT 46
#define FADT_SMI_CMD 48
#define FADT_PM1A_EVT_BLK 56
#define FADT_PM1A_CNT_BLK 64
#define FADT_PM1_EVT_LEN 88
#define FADT_PM1_CNT_LEN 89
#define FADT_P_LVL2_LAT 96
#define FADT_P_LVL3_LAT 98
#define FADT_IAPC_BOOT_ARCH 109
#define FADT_FLAGS 112
#define FADT_RESET_REG 116
#define FADT_RESET_VALUE 128
#define FADT_MINOR_VERSION 131
#define FADT_X_DSDT 140
#define FADT_HYPERVISOR_ID 268

#define FADT_F_WBINVD (1U << 0)
#define FADT_F_PROC_C1 (1U << 2)
#define FADT_F_PWR_BUTTON (1U << 4) /* no fixed power button */
#define FADT_F_SLP_BUTTON (1U << 5) /* no fixed sleep button */
#define FADT_F_RESET_REG_SUP (1U << 10)

#define IAPC_LEGACY_DEVICES (1U << 0)
#define IAPC_NO_VGA (1U << 2)
#define IAPC_NO_CMOS_RTC (1U << 5) /* the wall clock comes from kvmclock */

#define GAS_SYSTEM_IO 1
#define GAS_ACCESS_BYTE 1

/* MADT */
#define MADT_PCAT_COMPAT (1U << 0)
#define MADT_LAPIC 0
#define MADT_IOAPIC 1
#define MADT_ISO 2
#define MADT_LAPIC_NMI 4
#define MADT_LAPIC_ENABLED (1U << 0)
#define MADT_ISO_LEVEL_HIGH 0x000d /* active high, level triggered */

/* AML opcodes */
#define AML_ZERO 0x00
#define AML_ONE 0x01
#define AML_NAME 0x08
#define AML_BYTE 0x0a
#define AML_WORD 0x0b
#define AML_DWORD 0x0c
#define AML_STRING 0x0d
#define AML_SCOPE 0x10
#define AML_BUFFER 0x11
#define AML_PACKAGE 0x12
#define AML_EXT 0x5b
#define AML_DEVICE 0x82 /* after AML_EXT */
#define AML_ROOT '\\'

uint8_t acpi__checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return (uint8_t)-sum;
}

/* The common header; the checksum is set by finish_table() once the body is written. */
static void put_header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev, const char *id)
{
	char table_id[9];

	memcpy(t, sig, 4);
	put_le32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, OEM_ID, 6);
	/* OEM table id: "VBTS" and the signature, 8 bytes. */
	memcpy(table_id, "VBTS", 4);
	memcpy(table_id + 4, id, 4);
	memcpy(t + 16, table_id, 8);
	put_le32(t + 24, 1);
	memcpy(t + 28, CREATOR_ID, 4);
	put_le32(t + 32, 1);
}

static void finish_table(uint8_t *t)
{
	uint32_t len;

	memcpy(&len, t + 4, sizeof(len));
	t[9] = 0;
	t[9] = acpi__checksum(t, len);
}

/* ---- AML ------------------------------------------------------------------------------- */

struct aml {
	uint8_t *p;
	size_t len;
	size_t cap;
	bool overflow;
};

static void aml_bytes(struct aml *a, const void *b, size_t n)
{
	if (a->overflow || n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memcpy(a->p + a->len, b, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

static void aml_int(struct aml *a, uint32_t v)
{
	if (v == 0) {
		aml_byte(a, AML_ZERO);
	} else if (v == 1) {
		aml_byte(a, AML_ONE);
	} else if (v <= 0xff) {
		aml_byte(a, AML_BYTE);
		aml_byte(a, v);
	} else if (v <= 0xffff) {
		aml_byte(a, AML_WORD);
		aml_byte(a, v & 0xff);
		aml_byte(a, v >> 8);
	} else {
		aml_byte(a, AML_DWORD);
		for (int i = 0; i < 4; i++)
			aml_byte(a, (v >> (8 * i)) & 0xff);
	}
}

static void aml_string(struct aml *a, const char *s)
{
	aml_byte(a, AML_STRING);
	aml_bytes(a, s, strlen(s) + 1);
}

/* A length-prefixed object starts here; aml_pkg_end() inserts its PkgLength at @start. */
static size_t aml_pkg_begin(struct aml *a)
{
	return a->len;
}

/*
 * PkgLength counts its own bytes and what follows: one byte up to 63, else a lead byte
 * holding the byte count (bits 7-6) and the low nibble, then the rest 8 bits at a time.
 */
static void aml_pkg_end(struct aml *a, size_t start)
{
	size_t body = a->len - start, n, v;
	uint8_t enc[4];

	if (a->overflow)
		return;
	if (body + 1 < 0x40)
		n = 1;
	else if (body + 2 < 0x1000)
		n = 2;
	else if (body + 3 < 0x100000)
		n = 3;
	else
		n = 4;
	v = body + n;
	if (n == 1) {
		enc[0] = v;
	} else {
		enc[0] = ((n - 1) << 6) | (v & 0xf);
		for (size_t i = 1; i < n; i++)
			enc[i] = (v >> (4 + 8 * (i - 1))) & 0xff;
	}
	if (n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memmove(a->p + start + n, a->p + start, body);
	memcpy(a->p + start, enc, n);
	a->len += n;
}

static void aml_name_int(struct aml *a, const char *name, uint32_t v)
{
	aml_byte(a, AML_NAME);
	aml_bytes(a, name, 4);
	aml_int(a, v);
}

/* The DSDT's definition block. */
static void build_dsdt_body(struct aml *a, const struct acpi_config *cfg)
{
	size_t scope, dev, buf, pkg;

	if (cfg->pvpanic_port) {
		const uint8_t io[] = {
			0x47, 0x01, /* I/O port descriptor, 16-bit decode */
			cfg->pvpanic_port & 0xff, cfg->pvpanic_port >> 8, /* minimum */
			cfg->pvpanic_port & 0xff, cfg->pvpanic_port >> 8, /* maximum */
			0x01, 0x01, /* alignment, length */
			0x79, 0x00, /* end tag, checksum 0 ("valid") */
		};

		aml_byte(a, AML_SCOPE);
		scope = aml_pkg_begin(a);
		aml_byte(a, AML_ROOT);
		aml_bytes(a, "_SB_", 4);
		aml_byte(a, AML_EXT);
		aml_byte(a, AML_DEVICE);
		dev = aml_pkg_begin(a);
		aml_bytes(a, "PEVT", 4);
		aml_byte(a, AML_NAME);
		aml_bytes(a, "_HID", 4);
		aml_string(a, "QEMU0001");
		aml_name_int(a, "_STA", 0x0f);
		aml_byte(a, AML_NAME);
		aml_bytes(a, "_CRS", 4);
		aml_byte(a, AML_BUFFER);
		buf = aml_pkg_begin(a);
		aml_int(a, sizeof(io));
		aml_bytes(a, io, sizeof(io));
		aml_pkg_end(a, buf);
		aml_pkg_end(a, dev);
		aml_pkg_end(a, scope);
	}
	aml_byte(a, AML_NAME);
	aml_bytes(a, "_S5_", 4);
	aml_byte(a, AML_PACKAGE);
	pkg = aml_pkg_begin(a);
	aml_byte(a, 4); /* NumElements */
	aml_int(a, cfg->s5_slp_typ);
	aml_int(a, cfg->s5_slp_typ);
	aml_int(a, 0);
	aml_int(a, 0);
	aml_pkg_end(a, pkg);
}

/* ---- tables ---------------------------------------------------------------------------- */

static size_t align16(size_t off)
{
	return (off + 15) & ~(size_t)15;
}

static size_t madt_size(unsigned int nr_vcpus)
{
	/* LAPICs, the IOAPIC, the SCI's override, one LAPIC NMI for all. */
	return ACPI_HEADER_SIZE + 8 + nr_vcpus * 8 + 12 + 10 + 6;
}

static void build_madt(uint8_t *t, const struct acpi_config *cfg)
{
	uint8_t *e;

	put_header(t, "APIC", madt_size(cfg->nr_vcpus), 5, "APIC");
	put_le32(t + 36, X86_APIC_DEFAULT_BASE);
	put_le32(t + 40, MADT_PCAT_COMPAT);
	e = t + 44;
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++, e += 8) {
		e[0] = MADT_LAPIC;
		e[1] = 8;
		e[2] = i; /* ACPI processor UID */
		e[3] = i; /* APIC id = vCPU index (KVM's default) */
		put_le32(e + 4, MADT_LAPIC_ENABLED);
	}
	e[0] = MADT_IOAPIC;
	e[1] = 12;
	e[2] = 0; /* IOAPIC id, as KVM's in-kernel IOAPIC resets to */
	e[3] = 0;
	put_le32(e + 4, X86_IOAPIC_DEFAULT_BASE);
	put_le32(e + 8, 0); /* GSI base */
	e += 12;
	/* The SCI is level triggered; ISA IRQs 0-15 are otherwise GSIs 0-15 (KVM's routing). */
	e[0] = MADT_ISO;
	e[1] = 10;
	e[2] = 0; /* ISA */
	e[3] = cfg->sci_irq;
	put_le32(e + 4, cfg->sci_irq);
	put_le16(e + 8, MADT_ISO_LEVEL_HIGH);
	e += 10;
	e[0] = MADT_LAPIC_NMI;
	e[1] = 6;
	e[2] = 0xff; /* all processors */
	put_le16(e + 3, 0);
	e[5] = 1; /* LINT1 */
	finish_table(t);
}

static void build_fadt(uint8_t *t, const struct acpi_config *cfg, uint32_t facs, uint32_t dsdt)
{
	put_header(t, "FACP", ACPI_FADT_SIZE, 6, "FACP");
	put_le32(t + FADT_FIRMWARE_CTRL, facs);
	put_le32(t + FADT_DSDT, dsdt);
	put_le16(t + FADT_SCI_INT, cfg->sci_irq);
	put_le32(t + FADT_SMI_CMD, 0); /* no SMI: the platform is always in ACPI mode */
	put_le32(t + FADT_PM1A_EVT_BLK, cfg->pm1a_evt);
	put_le32(t + FADT_PM1A_CNT_BLK, cfg->pm1a_cnt);
	t[FADT_PM1_EVT_LEN] = 4;
	t[FADT_PM1_CNT_LEN] = 2;
	put_le16(t + FADT_P_LVL2_LAT, 101);  /* > 100: no C2 */
	put_le16(t + FADT_P_LVL3_LAT, 1001); /* > 1000: no C3 */
	put_le16(t + FADT_IAPC_BOOT_ARCH, IAPC_LEGACY_DEVICES | IAPC_NO_VGA | IAPC_NO_CMOS_RTC);
	put_le32(t + FADT_FLAGS, FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_PWR_BUTTON |
				      FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP);
	t[FADT_RESET_REG] = GAS_SYSTEM_IO;
	t[FADT_RESET_REG + 1] = 8; /* bit width */
	t[FADT_RESET_REG + 3] = GAS_ACCESS_BYTE;
	put_le64(t + FADT_RESET_REG + 4, cfg->reset_port);
	t[FADT_RESET_VALUE] = cfg->reset_value;
	t[FADT_MINOR_VERSION] = 0;
	put_le64(t + FADT_X_DSDT, dsdt);
	memcpy(t + FADT_HYPERVISOR_ID, "VBTS\0\0\0\0", 8);
	finish_table(t);
}

static void build_facs(uint8_t *t)
{
	memcpy(t, "FACS", 4);
	put_le32(t + 4, ACPI_FACS_SIZE);
	t[32] = 2; /* version */
}

static void build_sdt(uint8_t *t, const char *sig, unsigned int width, const uint64_t *ptrs,
		      unsigned int n)
{
	put_header(t, sig, ACPI_HEADER_SIZE + width * n, 1, sig);
	for (unsigned int i = 0; i < n; i++) {
		if (width == 8)
			put_le64(t + ACPI_HEADER_SIZE + 8 * i, ptrs[i]);
		else
			put_le32(t + ACPI_HEADER_SIZE + 4 * i, ptrs[i]);
	}
	finish_table(t);
}

static void build_rsdp(uint8_t *t, uint32_t rsdt, uint64_t xsdt)
{
	memcpy(t, "RSD PTR ", 8);
	memcpy(t + 9, OEM_ID, 6);
	t[15] = 2; /* revision: ACPI 2.0+, XSDT valid */
	put_le32(t + 16, rsdt);
	put_le32(t + 20, ACPI_RSDP_SIZE);
	put_le64(t + 24, xsdt);
	t[8] = acpi__checksum(t, 20);
	t[32] = acpi__checksum(t, ACPI_RSDP_SIZE);
}

long acpi__build(uint8_t *buf, size_t size, uint64_t gpa, const struct acpi_config *cfg)
{
	size_t rsdp = 0, facs, xsdt, rsdt, fadt, madt, dsdt, end;
	struct aml aml;
	uint64_t ptrs[2];

	if (!cfg->nr_vcpus || cfg->nr_vcpus > ACPI_MAX_VCPUS || (gpa & 63) ||
	    gpa + size > (1ULL << 32) || size < 64)
		return -EINVAL;
	memset(buf, 0, size);
	facs = 64; /* 64-byte aligned */
	xsdt = facs + ACPI_FACS_SIZE;
	rsdt = align16(xsdt + ACPI_HEADER_SIZE + 2 * 8);
	fadt = align16(rsdt + ACPI_HEADER_SIZE + 2 * 4);
	madt = align16(fadt + ACPI_FADT_SIZE);
	dsdt = align16(madt + madt_size(cfg->nr_vcpus));
	if (dsdt + ACPI_HEADER_SIZE > size)
		return -E2BIG;
	aml = (struct aml){
		.p = buf + dsdt + ACPI_HEADER_SIZE,
		.cap = size - dsdt - ACPI_HEADER_SIZE,
	};
	build_dsdt_body(&aml, cfg);
	if (aml.overflow)
		return -E2BIG;
	end = dsdt + ACPI_HEADER_SIZE + aml.len;
	put_header(buf + dsdt, "DSDT", ACPI_HEADER_SIZE + aml.len, 2, "DSDT");
	finish_table(buf + dsdt);
	build_facs(buf + facs);
	build_madt(buf + madt, cfg);
	build_fadt(buf + fadt, cfg, gpa + facs, gpa + dsdt);
	ptrs[0] = gpa + fadt;
	ptrs[1] = gpa + madt;
	build_sdt(buf + xsdt, "XSDT", 8, ptrs, 2);
	build_sdt(buf + rsdt, "RSDT", 4, ptrs, 2);
	build_rsdp(buf + rsdp, gpa + rsdt, gpa + xsdt);
	return end;
}
