// SPDX-License-Identifier: GPL-2.0
/*
 * uart.c - the 8250 console: transmit-only, always ready, registers stored.
 *
 * The guest's bytes go to the host's terminal or a log file: they pass through an escaping
 * stream (escape.h) that keeps lines, tabs and backslashes and writes anything a terminal
 * would obey as text, so the console reads as the guest wrote it and never drives the host's
 * terminal.
 *
 * Locking: @lock serializes register state and output between vCPU threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "escape.h"
#include "uart.h"

struct uart {
	pthread_mutex_t lock;
	FILE *out;
	struct escape_stream esc;
	uint64_t limit;   /* guest bytes to @out at most */
	uint64_t written; /* guest bytes written to @out (escaped) */
	uint64_t dropped; /* bytes over @limit */
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
};

struct uart *uart__create(FILE *out, uint64_t limit)
{
	struct uart *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	pthread_mutex_init(&u->lock, NULL);
	u->out = out;
	escape_stream__init(&u->esc, ESCAPE_KEEP_NEWLINE | ESCAPE_KEEP_BACKSLASH);
	u->limit = limit;
	u->dll = 12; /* 9600 baud, as after a BIOS */
	u->lcr = 0x03;
	return u;
}

void uart__set_output(struct uart *u, FILE *out)
{
	pthread_mutex_lock(&u->lock);
	if (u->out)
		fflush(u->out);
	u->out = out;
	pthread_mutex_unlock(&u->lock);
}

void uart__destroy(struct uart *u)
{
	if (!u)
		return;
	if (u->out) {
		escape_stream__flush(&u->esc, u->out);
		fflush(u->out);
	}
	pthread_mutex_destroy(&u->lock);
	free(u);
}

static void transmit(struct uart *u, uint8_t c)
{
	if (!u->out || u->written >= u->limit) {
		u->dropped++;
		return;
	}
	escape_stream__putc(&u->esc, u->out, c);
	u->written++;
	if (c == '\n')
		fflush(u->out);
}

static uint8_t read_reg(struct uart *u, unsigned int reg)
{
	bool dlab = u->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_RBR_THR:
		return dlab ? u->dll : 0;
	case UART_IER:
		return dlab ? u->dlm : u->ier;
	case UART_IIR_FCR:
		return UART_IIR_NO_INT | ((u->fcr & 1) ? UART_IIR_FIFO : 0);
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		return UART_LSR_THRE | UART_LSR_TEMT;
	case UART_MSR:
		/* Loopback mirrors MCR's outputs; otherwise DCD, DSR and CTS are up. */
		if (u->mcr & UART_MCR_LOOP)
			return ((u->mcr & 0x0c) << 4) | ((u->mcr & 0x01) << 5) |
			       ((u->mcr & 0x02) << 3);
		return 0xb0;
	default:
		return u->scr;
	}
}

static void write_reg(struct uart *u, unsigned int reg, uint8_t v)
{
	bool dlab = u->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_RBR_THR:
		if (dlab)
			u->dll = v;
		else if (!(u->mcr & UART_MCR_LOOP))
			transmit(u, v);
		break;
	case UART_IER:
		if (dlab)
			u->dlm = v;
		else
			u->ier = v & 0x0f;
		break;
	case UART_IIR_FCR:
		u->fcr = v;
		break;
	case UART_LCR:
		u->lcr = v;
		break;
	case UART_MCR:
		u->mcr = v & 0x1f;
		break;
	case UART_LSR:
	case UART_MSR:
		break; /* read-only */
	default:
		u->scr = v;
		break;
	}
}

int uart__io(void *dev, struct io_access *a)
{
	struct uart *u = dev;

	pthread_mutex_lock(&u->lock);
	/* A wide access touches consecutive registers, one byte each. */
	for (unsigned int i = 0; i < a->size; i++) {
		unsigned int reg = (a->offset + i) % UART_NR_PORTS;

		if (a->write)
			write_reg(u, reg, a->data[i]);
		else
			a->data[i] = read_reg(u, reg);
	}
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void uart__stats(struct uart *u, uint64_t *written, uint64_t *dropped)
{
	pthread_mutex_lock(&u->lock);
	*written = u->written;
	*dropped = u->dropped;
	pthread_mutex_unlock(&u->lock);
}
