// SPDX-License-Identifier: GPL-2.0
/*
 * spin.c - test guest for the control socket: branches in ring 0 for ever, switching between
 * two copies of its page tables every SPIN_BATCH rounds (a task depart and arrive each time in
 * a step trace), never exiting: the run ends with a signal or --timeout.
 */
#include "guest.h"

#define SPIN_BATCH 50

static uint64_t pml4_copy[512] __attribute__((aligned(4096)));

static __attribute__((noinline)) uint64_t spin_leaf(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x & 1 ? x * 3 + 1 : x / 2;
}

/* Interrupts stay masked and nothing faults: an entry is a bug. */
void guest_trap(struct trap_frame *f)
{
	guest_exit(GUEST_EXIT_EXCEPTION + (uint8_t)f->vector);
}

void guest_main(uint32_t magic, uint32_t mbi)
{
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(read_cr3() & ~0xfffULL);
	uint64_t tables[2], x = 27;
	unsigned int which = 0;

	/* The same mappings at another address: a CR3 load that changes the address space id. */
	for (unsigned int i = 0; i < 512; i++)
		pml4_copy[i] = pml4[i];
	tables[0] = (uint64_t)(uintptr_t)pml4;
	tables[1] = (uint64_t)(uintptr_t)pml4_copy;
	uart_puts("spin: running\n");
	for (;;) {
		for (unsigned int i = 0; i < SPIN_BATCH; i++)
			x = spin_leaf(x) ? spin_leaf(x) : 27;
		which ^= 1;
		write_cr3(tables[which]);
	}
}
