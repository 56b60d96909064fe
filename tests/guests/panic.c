// SPDX-License-Identifier: GPL-2.0
/*
 * panic.c - test guest for a crash freeze: three labelled branches, then the panic reported
 * on QEMU's ISA pvpanic port (0x505, value 1: PVPANIC_PANICKED), then halted for ever.
 *
 * Labels (global symbols of the image), the last branches taken before the port write:
 *   pp_call_from -> pp_leaf        call
 *   pp_ret_from  -> pp_ret_to      ret
 *   pp_ret_to    -> pp_jmp_to      jmp
 * pp_jmp_to writes the port; what follows halts with interrupts masked and never branches
 * again. Not an oracle guest: QEMU would run it for ever.
 *
 * Built with -DPANIC_WAIT_KEY (image panic-key), it first waits for a byte from the i8042
 * keyboard controller of a pc machine (a key the host sends, `virsh send-key`), so that a
 * collector can attach to it before it panics.
 */
#include "guest.h"

/* Global label NAME at the current position. */
#define L(name) ".globl " name "\n" name ":\n"

void pp_panic(void);

__asm__(".text\n"
	".globl pp_panic\n"
	"pp_panic:\n"
	L("pp_call_from")
	"	call pp_leaf\n"
	L("pp_ret_to")
	"	jmp pp_jmp_to\n"
	"	ud2\n"
	L("pp_leaf")
	L("pp_ret_from")
	"	ret\n"
	"	ud2\n"
	L("pp_jmp_to")
	"	mov $1, %al\n"
	"	mov $0x505, %dx\n"
	"	outb %al, %dx\n"
	L("pp_halted")
	"	hlt\n"
	"	jmp pp_halted\n");

/* Interrupts stay masked and nothing faults: an entry is a bug. */
void guest_trap(struct trap_frame *f)
{
	guest_exit(GUEST_EXIT_EXCEPTION + (uint8_t)f->vector);
}

void guest_main(uint32_t magic, uint32_t mbi)
{
	(void)magic;
	(void)mbi;
#ifdef PANIC_WAIT_KEY
	/* The i8042's status register: bit 0, a byte waits in its output buffer. */
	uart_puts("panic: waiting for a key\n");
	for (;;) {
		uint8_t status;

		__asm__ volatile("inb $0x64, %0" : "=a"(status));
		if (status & 1)
			break;
	}
#endif
	uart_puts("panic: writing the pvpanic port\n");
	pp_panic();
}
