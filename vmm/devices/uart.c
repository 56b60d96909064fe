// SPDX-License-Identifier: GPL-2.0
/*
 * uart.c - the 8250/16550A console: transmitter always ready, a 16-byte receive FIFO,
 * interrupt identification and the interrupt line.
 *
 * The guest's bytes go to the host's terminal or a log file: they pass through an escaping
 * stream (escape.h) that keeps lines, tabs and backslashes and writes anything a terminal
 * would obey as text, so the console reads as the guest wrote it and never drives the host's
 * terminal.
 *
 * Locking: @lock serializes register state, output and the interrupt callback between vCPU
 * threads and the console input thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <vbts/agent-proto.h>

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
	bool thr_ipending; /* THR-empty interrupt pending (cleared by reading IIR or writing THR) */
	uint8_t rx[UART_RX_FIFO];
	unsigned int rx_head, rx_len;
	void (*irq)(void *opaque, int level);
	void *irq_opaque;
	int irq_level;
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

static size_t rx_push(struct uart *u, const uint8_t *buf, size_t n)
{
	size_t took = 0;

	while (took < n && u->rx_len < UART_RX_FIFO) {
		u->rx[(u->rx_head + u->rx_len) % UART_RX_FIFO] = buf[took++];
		u->rx_len++;
	}
	return took;
}

/* The pending interrupt, by the 8250's priority (no line-status errors ever happen). */
static uint8_t interrupt_id(const struct uart *u)
{
	if ((u->ier & UART_IER_RDI) && u->rx_len)
		return UART_IIR_RDI;
	if ((u->ier & UART_IER_THRI) && u->thr_ipending)
		return UART_IIR_THRI;
	return UART_IIR_NO_INT; /* modem status never changes: no MSI */
}

static void update_irq(struct uart *u)
{
	int level = interrupt_id(u) != UART_IIR_NO_INT;

	if (u->irq && level != u->irq_level)
		u->irq(u->irq_opaque, level);
	u->irq_level = level;
}

static uint8_t read_reg(struct uart *u, unsigned int reg)
{
	bool dlab = u->lcr & UART_LCR_DLAB;
	uint8_t v;

	switch (reg) {
	case UART_RBR_THR:
		if (dlab)
			return u->dll;
		if (!u->rx_len)
			return 0;
		v = u->rx[u->rx_head];
		u->rx_head = (u->rx_head + 1) % UART_RX_FIFO;
		u->rx_len--;
		return v;
	case UART_IER:
		return dlab ? u->dlm : u->ier;
	case UART_IIR_FCR:
		v = interrupt_id(u);
		/* Reading IIR while it reports THR empty acknowledges that interrupt. */
		if (v == UART_IIR_THRI)
			u->thr_ipending = false;
		return v | ((u->fcr & UART_FCR_FE) ? UART_IIR_FIFO : 0);
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		return UART_LSR_THRE | UART_LSR_TEMT | (u->rx_len ? UART_LSR_DR : 0);
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
		if (dlab) {
			u->dll = v;
			break;
		}
		if (u->mcr & UART_MCR_LOOP)
			rx_push(u, &v, 1);
		else
			transmit(u, v);
		/* Sent at once: the holding register is empty again. */
		u->thr_ipending = true;
		break;
	case UART_IER:
		if (dlab) {
			u->dlm = v;
			break;
		}
		/* Enabling the THR-empty interrupt while THR is empty raises it. */
		if ((v & UART_IER_THRI) && !(u->ier & UART_IER_THRI))
			u->thr_ipending = true;
		u->ier = v & 0x0f;
		break;
	case UART_IIR_FCR:
		if ((v ^ u->fcr) & UART_FCR_FE || (v & UART_FCR_CLEAR_RX))
			u->rx_len = 0;
		u->fcr = v & ~0x06; /* the clear bits are self-clearing */
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
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void uart__set_irq(struct uart *u, void (*irq)(void *opaque, int level), void *opaque)
{
	pthread_mutex_lock(&u->lock);
	u->irq = irq;
	u->irq_opaque = opaque;
	u->irq_level = interrupt_id(u) != UART_IIR_NO_INT;
	if (irq)
		irq(opaque, u->irq_level);
	pthread_mutex_unlock(&u->lock);
}

size_t uart__receive(struct uart *u, const uint8_t *buf, size_t n)
{
	size_t took;

	pthread_mutex_lock(&u->lock);
	took = (u->mcr & UART_MCR_LOOP) ? n : rx_push(u, buf, n);
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return took;
}

void uart__stats(struct uart *u, uint64_t *written, uint64_t *dropped)
{
	pthread_mutex_lock(&u->lock);
	*written = u->written;
	*dropped = u->dropped;
	pthread_mutex_unlock(&u->lock);
}

int uart__register(struct uart *u, struct io_bus *pio)
{
	return io_bus__register(pio, VBTS_UART_PORT, UART_NR_PORTS, uart__io, u, "uart");
}
