// SPDX-License-Identifier: GPL-2.0
/*
 * io.c - guest output (COM1, agent channel), debug exit and the few libc routines gcc calls.
 */
#include "guest.h"

void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;

	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;

	while (n--)
		*dp++ = *sp++;
	return d;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

void uart_putc(char c)
{
	outb(VBTS_UART_PORT, (uint8_t)c);
}

void uart_puts(const char *s)
{
	while (*s)
		uart_putc(*s++);
}

/* Formats v into buf (at least 19 bytes) as 0x-prefixed lower-case hex; returns the length. */
static size_t format_hex(char *buf, uint64_t v)
{
	char tmp[16];
	size_t n = 0, len = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	buf[len++] = '0';
	buf[len++] = 'x';
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

/* Formats v into buf (at least 21 bytes) in decimal; returns the length. */
static size_t format_dec(char *buf, uint64_t v)
{
	char tmp[20];
	size_t n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

void uart_hex(uint64_t v)
{
	char buf[20];

	format_hex(buf, v);
	uart_puts(buf);
}

void uart_dec(uint64_t v)
{
	char buf[24];

	format_dec(buf, v);
	uart_puts(buf);
}

static void line_put(struct agent_line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf))
		l->buf[l->len++] = *s++;
}

void agent_line_init(struct agent_line *l, const char *event)
{
	l->len = 0;
	line_put(l, "{\"event\":\"");
	line_put(l, event);
	line_put(l, "\"");
}

void agent_line_str(struct agent_line *l, const char *key, const char *val)
{
	line_put(l, ",\"");
	line_put(l, key);
	line_put(l, "\":\"");
	line_put(l, val);
	line_put(l, "\"");
}

void agent_line_int(struct agent_line *l, const char *key, uint64_t val)
{
	char buf[24];

	format_dec(buf, val);
	line_put(l, ",\"");
	line_put(l, key);
	line_put(l, "\":");
	line_put(l, buf);
}

void agent_line_hex(struct agent_line *l, const char *key, uint64_t val)
{
	char buf[20];

	format_hex(buf, val);
	line_put(l, ",\"");
	line_put(l, key);
	line_put(l, "\":\"");
	line_put(l, buf);
	line_put(l, "\"");
}

void agent_line_send(struct agent_line *l)
{
	size_t i;

	line_put(l, "}");
	for (i = 0; i < l->len; i++)
		outb(VBTS_AGENT_PORT, (uint8_t)l->buf[i]);
	outb(VBTS_AGENT_PORT, '\n');
}

void guest_exit(uint8_t value)
{
	outb(VBTS_DEBUG_EXIT_PORT, value);
	/* Not reached under QEMU or vbts; elsewhere, stop here for good. */
	for (;;)
		__asm__ volatile("cli; hlt");
}

void guest_done(void)
{
	guest_exit(GUEST_EXIT_DONE);
}

void guest_assert_fail(const char *what)
{
	uart_puts("guest: assertion failed: ");
	uart_puts(what);
	uart_putc('\n');
	guest_exit(GUEST_EXIT_ASSERT);
}
