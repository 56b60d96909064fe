/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ports.h - the contract between probe.c and the probe guests: where they are loaded and the
 * ports they report on. Included by C and by the guests' assembly.
 */
#ifndef VBTS_VMM_PROBE_PORTS_H
#define VBTS_VMM_PROBE_PORTS_H

#define PROBE_LOAD_GPA 0x10000   /* flat binary loaded and entered here, CS 0x10 / DS 0x18 */
#define PROBE_GDT_OFFSET 0x10    /* the guest's boot GDT: offset in the binary */
#define PROBE_PORT_DONE 0x500    /* outb: ring-0 part done, value 1 */
#define PROBE_PORT_FAULT 0x501   /* outb: exception vector taken in the guest */
#define PROBE_PORT_INFO 0x502    /* outl: address of the ring-3 breakpoint site */
#define PROBE_PORT_USER 0x503    /* outb from ring 3: the ring-3 part ran to its end */
#define PROBE_MAGIC_ESI 0x5a5a1234 /* ESI at PROBE_PORT_DONE (sync-regs probe) */

/* EDI at entry of the user probe (long mode): how to enter ring 3. */
#define PROBE_ENTER_IRETQ 0
#define PROBE_ENTER_SYSRETQ 1

#endif /* VBTS_VMM_PROBE_PORTS_H */
