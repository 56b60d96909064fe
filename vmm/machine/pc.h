/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pc.h - the PC platform an operating system (Linux) needs around its vCPUs: KVM's in-kernel
 * LAPICs, IOAPIC and PICs and its PIT, the identity-map page VMX needs, the ACPI PM block
 * (power off), the i8042 reset line, the UART's IRQ 4 and console input from a terminal, and
 * each vCPU's firmware state (MSRs, LAPIC LINT0/LINT1). Bare guests (multiboot) get none of it.
 *
 * Order: pc__create() before the first vCPU exists (KVM refuses an irqchip afterwards, and
 * only then do APs start in KVM_MP_STATE_UNINITIALIZED, waiting for INIT/SIPI from the BSP),
 * pc__init_vcpu() for each vCPU (vcpu__create() calls it through vm->platform_init_vcpu),
 * pc__connect_uart() once the UART exists.
 */
#ifndef VBTS_VMM_PC_H
#define VBTS_VMM_PC_H

#include <stdint.h>

struct pc;
struct uart;
struct vm;

/* KVM's private pages below 4 GiB: the identity-map page (VMX real mode), then the 3 pages of
 * the TSS kvm.c sets with KVM_SET_TSS_ADDR. */
#define PC_IDENTITY_MAP_GPA 0xfffbc000ULL
#define PC_KVM_AREA_END 0xfffc0000ULL

#define PC_UART_IRQ 4

/**
 * pc__create() - KVM_SET_IDENTITY_MAP_ADDR, KVM_CREATE_IRQCHIP, KVM_CREATE_PIT2, and the ACPI
 * PM and i8042 devices on @vm's PIO bus (power off and reset end the run with status 0); sets
 * @vm->platform_init_vcpu to pc__init_vcpu().
 * @vm: the VM, its kvm open, no vCPU created yet
 *
 * Return: the platform, or NULL with errno set (the failing ioctl is reported).
 */
struct pc *pc__create(struct vm *vm);

/**
 * pc__destroy() - free the platform (after the vCPU threads ended and pc__disconnect_uart()).
 * @pc: may be NULL
 */
void pc__destroy(struct pc *pc);

/**
 * pc__init_vcpu() - what firmware leaves in a vCPU: MTRRs enabled with write-back as the
 * default type, fast strings in IA32_MISC_ENABLE, LAPIC LINT0 in ExtINT and LINT1 in NMI mode.
 * @vcpu_fd: a vCPU of a VM with the in-kernel irqchip
 *
 * Return: 0 or -errno from KVM_GET/SET_MSRS or KVM_GET/SET_LAPIC (reported).
 */
int pc__init_vcpu(int vcpu_fd);

/**
 * pc__connect_uart() - raise IRQ 4 for @uart's interrupts and, when standard input is a
 * terminal, feed it to the UART's receiver (the terminal goes to non-canonical mode without
 * echo until pc__disconnect_uart()).
 * @pc:   platform
 * @uart: the console UART
 *
 * Return: 0 or -errno (thread creation).
 */
int pc__connect_uart(struct pc *pc, struct uart *uart);

/**
 * pc__disconnect_uart() - stop the console input and restore the terminal; before the UART is
 * destroyed.
 * @pc: platform, may be NULL
 */
void pc__disconnect_uart(struct pc *pc);

#endif /* VBTS_VMM_PC_H */
