/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linux.h - booting Linux: a bzImage through the 64-bit boot protocol
 * (Documentation/arch/x86/boot.rst), an uncompressed vmlinux through its PVH entry
 * (XEN_ELFNOTE_PHYS32_ENTRY, struct hvm_start_info). Both get the memory map, the command
 * line, the initrd placed high in low RAM, and the ACPI tables of boot/acpi.h.
 *
 * The formats themselves (bzimage_format, pvh_format) are in loader.h's table; this header
 * is the guest-physical layout they share, which the tests read back.
 */
#ifndef VBTS_VMM_BOOT_LINUX_H
#define VBTS_VMM_BOOT_LINUX_H

#include <stddef.h>
#include <stdint.h>

/* Low memory, below the EBDA; Linux reclaims all of it once it has copied what it needs. */
#define LINUX_GDT_GPA 0x1000ULL         /* null, null, __BOOT_CS 0x10, __BOOT_DS 0x18 */
#define LINUX_START_INFO_GPA 0x2000ULL  /* PVH: struct hvm_start_info, then the module list */
#define LINUX_MODLIST_GPA 0x2100ULL
#define LINUX_MEMMAP_GPA 0x3000ULL      /* PVH: struct hvm_memmap_table_entry[] */
#define LINUX_BOOT_PARAMS_GPA 0x7000ULL /* bzImage: struct boot_params, the zero page */
#define LINUX_STACK_TOP 0x8ff0ULL       /* RSP at entry (Linux sets its own first thing) */
#define LINUX_PML4_GPA 0x9000ULL        /* identity map of the first 4 GiB: PML4, */
#define LINUX_PDPT_GPA 0xa000ULL        /* one PDPT, */
#define LINUX_PD_GPA 0xb000ULL          /* four PDs of 2 MiB pages (up to 0xf000) */
#define LINUX_CMDLINE_GPA 0x20000ULL
#define LINUX_CMDLINE_MAX 2047          /* bytes; x86's COMMAND_LINE_SIZE is 2048 with NUL */
#define LINUX_EBDA_GPA 0x9fc00ULL       /* reserved from here to 640 KiB, as on a PC */
#define LINUX_HIGH_GPA 0x100000ULL      /* kernels load at 1 MiB or above */

#define LINUX_BOOT_CS 0x10
#define LINUX_BOOT_DS 0x18

/* The command line when none is given. */
#define LINUX_DEFAULT_CMDLINE "console=ttyS0"

/* boot_params (zero page) offsets, Documentation/arch/x86/zero-page.rst. */
#define BP_ACPI_RSDP_ADDR 0x070
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_EXT_CMD_LINE_PTR 0x0c8
#define BP_E820_ENTRIES 0x1e8
#define BP_SENTINEL 0x1ef
#define BP_E820_TABLE 0x2d0
#define BP_E820_MAX 128
#define BP_SIZE 0x1000

/* setup_header offsets (the same in the image and in boot_params), boot.rst. */
#define HDR_START 0x1f1
#define HDR_SETUP_SECTS 0x1f1
#define HDR_SYSSIZE 0x1f4
#define HDR_BOOT_FLAG 0x1fe
#define HDR_JUMP 0x200
#define HDR_MAGIC 0x202
#define HDR_VERSION 0x206
#define HDR_TYPE_OF_LOADER 0x210
#define HDR_LOADFLAGS 0x211
#define HDR_CODE32_START 0x214
#define HDR_RAMDISK_IMAGE 0x218
#define HDR_RAMDISK_SIZE 0x21c
#define HDR_CMD_LINE_PTR 0x228
#define HDR_INITRD_ADDR_MAX 0x22c
#define HDR_KERNEL_ALIGNMENT 0x230
#define HDR_RELOCATABLE_KERNEL 0x234
#define HDR_XLOADFLAGS 0x236
#define HDR_CMDLINE_SIZE 0x238
#define HDR_PREF_ADDRESS 0x258
#define HDR_INIT_SIZE 0x260
#define HDR_END_MAX 0x290 /* edd_mbr_sig_buffer follows the header in boot_params */

#define HDR_BOOT_FLAG_MAGIC 0xaa55
#define HDR_LOADFLAGS_LOADED_HIGH 0x01
#define HDR_XLF_KERNEL_64 0x01
#define HDR_LOADER_UNDEFINED 0xff
#define HDR_STARTUP_64_OFFSET 0x200 /* startup_64 from the start of the protected-mode kernel */

/* e820 / PVH memory map types */
#define E820_RAM 1
#define E820_RESERVED 2

/* PVH */
#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC 0x336ec578U
#define HVM_START_INFO_SIZE 56
#define HVM_MODLIST_ENTRY_SIZE 32
#define HVM_MEMMAP_ENTRY_SIZE 24

#endif /* VBTS_VMM_BOOT_LINUX_H */
