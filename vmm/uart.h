/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uart.h - enough of an 8250 UART for a polling guest driver: the transmitter is always ready,
 * there is never input, the configuration registers are stored and read back.
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
#define UART_LSR_THRE 0x20
#define UART_LSR_TEMT 0x40
#define UART_IIR_NO_INT 0x01
#define UART_IIR_FIFO 0xc0
#define UART_MCR_LOOP 0x10

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
 * uart__stats() - bytes the guest sent: written to the output and dropped over the limit.
 * @u:       UART
 * @written: filled in
 * @dropped: filled in
 */
void uart__stats(struct uart *u, uint64_t *written, uint64_t *dropped);

#endif /* VBTS_VMM_UART_H */
