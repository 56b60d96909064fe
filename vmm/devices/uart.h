/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uart.h - an 8250/16550A UART for a polling or interrupt-driven guest driver: the transmitter
 * is always ready (THR empty again right after each write), received bytes wait in a 16-byte
 * FIFO, IIR reports the pending interrupt by priority (receive data, THR empty, modem status)
 * and the interrupt line follows it when a callback is set; loopback mode receives what is sent.
 */
#ifndef VBTS_VMM_UART_H
#define VBTS_VMM_UART_H

#include <stdint.h>
#include <stdio.h>

#include "iobus.h"

#define UART_NR_PORTS 8

/* Registers (offsets from the base port). */
#define UART_RBR_THR 0 /* receive buffer / transmit holding; divisor latch low when DLAB */
#define UART_IER 1     /* interrupt enable; divisor latch high when DLAB */
#define UART_IIR_FCR 2 /* interrupt identification (read) / FIFO control (write) */
#define UART_LCR 3     /* line control; bit 7 DLAB */
#define UART_MCR 4     /* modem control */
#define UART_LSR 5     /* line status */
#define UART_MSR 6     /* modem status */
#define UART_SCR 7     /* scratch */

#define UART_LCR_DLAB 0x80
#define UART_LSR_DR 0x01
#define UART_LSR_THRE 0x20
#define UART_LSR_TEMT 0x40
#define UART_IER_RDI 0x01  /* receive data available */
#define UART_IER_THRI 0x02 /* transmit holding register empty */
#define UART_IER_RLSI 0x04 /* receiver line status */
#define UART_IER_MSI 0x08  /* modem status */
#define UART_IIR_NO_INT 0x01
#define UART_IIR_MSI 0x00
#define UART_IIR_THRI 0x02
#define UART_IIR_RDI 0x04
#define UART_IIR_ID_MASK 0x0e
#define UART_IIR_FIFO 0xc0
#define UART_FCR_FE 0x01       /* FIFOs enabled */
#define UART_FCR_CLEAR_RX 0x02
#define UART_MCR_LOOP 0x10
#define UART_RX_FIFO 16

struct uart;

/**
 * uart__create() - a UART whose transmitter writes to @out, escaped (see uart.c).
 * @out:   where guest output goes (not owned), NULL: nowhere until uart__set_output()
 * @limit: guest bytes written to @out at most; the rest are counted as dropped
 *
 * Return: the UART, or NULL with errno ENOMEM.
 */
struct uart *uart__create(FILE *out, uint64_t limit);

/**
 * uart__set_output() - flush the current output and write to @out from now on.
 * @u:   UART
 * @out: where guest output goes (not owned), NULL: nowhere (counted as dropped)
 */
void uart__set_output(struct uart *u, FILE *out);

/**
 * uart__destroy() - flush the output (with any bytes of an unfinished character, escaped)
 * and free the UART.
 * @u: may be NULL
 */
void uart__destroy(struct uart *u);

/**
 * uart__io() - io_handler_fn of the UART's 8 ports.
 * @dev: the struct uart
 * @a:   the access
 *
 * Return: 0.
 */
int uart__io(void *dev, struct io_access *a);

/**
 * uart__set_irq() - the interrupt line: @irq(opaque, level) is called (under the UART's lock)
 * whenever the line's level changes, and once with the current level.
 * @u:      UART
 * @irq:    callback, NULL for none (a polling guest)
 * @opaque: its first argument
 */
void uart__set_irq(struct uart *u, void (*irq)(void *opaque, int level), void *opaque);

/**
 * uart__receive() - bytes arriving on the serial line (console input).
 * @u:   UART
 * @buf: bytes
 * @n:   their number
 *
 * Return: how many the receive FIFO took (the rest waits for the guest to read); all of them
 * when the UART is in loopback mode (they are lost, as on a real one).
 */
size_t uart__receive(struct uart *u, const uint8_t *buf, size_t n);

/**
 * uart__stats() - bytes the guest sent: written to the output and dropped over the limit.
 * @u:       UART
 * @written: filled in
 * @dropped: filled in
 */
void uart__stats(struct uart *u, uint64_t *written, uint64_t *dropped);

/**
 * uart__register() - put the device on the VM's PIO bus: the 8 ports at VBTS_UART_PORT (COM1),
 * served by uart__io().
 * @u:   the device
 * @pio: the PIO bus
 *
 * Return: 0, or what io_bus__register() returns (-EBUSY, -ENOSPC).
 */
int uart__register(struct uart *u, struct io_bus *pio);

#endif /* VBTS_VMM_UART_H */
