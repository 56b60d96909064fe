// SPDX-License-Identifier: GPL-2.0
/*
 * test-devices.c - byte handling of the 8250 UART (polling, interrupts, receive FIFO), the
 * debug-exit port, the agent channel (good, over-long and hostile lines), the ACPI PM block,
 * the i8042 reset and the I/O bus.
 */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include <vbts/agent-proto.h>

#include "agent.h"
#include "debug-exit.h"
#include "devices/acpi-pm.h"
#include "devices/i8042.h"
#include "iobus.h"
#include "pvpanic.h"
#include "test-files.h"
#include "tests.h"
#include "uart.h"

static uint8_t uart_rd(struct uart *u, unsigned int reg)
{
	uint8_t b = 0xee;
	struct io_access a = { .offset = reg, .data = &b, .size = 1, .write = false };

	uart__io(u, &a);
	return b;
}

static void uart_wr(struct uart *u, unsigned int reg, uint8_t v)
{
	struct io_access a = { .offset = reg, .data = &v, .size = 1, .write = true };

	uart__io(u, &a);
}

START_TEST(test_uart_polling_driver)
{
	FILE *out = tmpfile();
	struct uart *u = uart__create(out, 1000);
	uint64_t written, dropped;
	char buf[64];

	ck_assert_ptr_nonnull(u);
	/* What a polling driver does: program 115200 8N1, then wait for THRE per byte. */
	uart_wr(u, UART_IER, 0);
	uart_wr(u, UART_LCR, 0x80);
	uart_wr(u, UART_RBR_THR, 1);
	uart_wr(u, UART_IER, 0);
	ck_assert_uint_eq(uart_rd(u, UART_RBR_THR), 1); /* DLL while DLAB */
	uart_wr(u, UART_LCR, 0x03);
	uart_wr(u, UART_IIR_FCR, 0xc7);
	uart_wr(u, UART_MCR, 0x0b);
	for (const char *p = "hi\n"; *p; p++) {
		ck_assert_uint_eq(uart_rd(u, UART_LSR) & (UART_LSR_THRE | UART_LSR_TEMT),
				  UART_LSR_THRE | UART_LSR_TEMT);
		uart_wr(u, UART_RBR_THR, *p);
	}
	ck_assert_uint_eq(uart_rd(u, UART_LCR), 0x03);
	ck_assert_uint_eq(uart_rd(u, UART_MCR), 0x0b);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_NO_INT);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & 0x01, 0); /* never data ready */
	uart_wr(u, UART_SCR, 0x5a);
	ck_assert_uint_eq(uart_rd(u, UART_SCR), 0x5a);
	test__read_stream(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "hi\n");
	uart__stats(u, &written, &dropped);
	ck_assert_uint_eq(written, 3);
	ck_assert_uint_eq(dropped, 0);
	uart__destroy(u);
	fclose(out);
}
END_TEST

START_TEST(test_uart_limit_and_loopback)
{
	FILE *out = tmpfile();
	struct uart *u = uart__create(out, 4);
	uint64_t written, dropped;
	char buf[64];

	for (int i = 0; i < 10; i++)
		uart_wr(u, UART_RBR_THR, 'a' + i);
	uart_wr(u, UART_MCR, UART_MCR_LOOP);
	uart_wr(u, UART_RBR_THR, 'z'); /* loopback: not transmitted */
	test__read_stream(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "abcd");
	uart__stats(u, &written, &dropped);
	ck_assert_uint_eq(written, 4);
	ck_assert_uint_eq(dropped, 6);
	uart__destroy(u);
	fclose(out);
}
END_TEST

/*
 * The guest's console reaches the host's terminal or log: its lines, tabs and backslashes
 * stay, anything a terminal would obey (ESC sequences, a lone CR, C1 and bidi controls) and
 * invalid UTF-8 is escaped; a sequence cut by the end of the output is escaped too.
 */
START_TEST(test_uart_escapes)
{
	static const char in[] = "ok\x1b[2J\r\nA\rB\xff\xe2\x80\xae" "evil\\x\t\xc3\xa9\xc2\x9b"
				 "\n\xe2\x82";
	FILE *out = tmpfile();
	struct uart *u = uart__create(out, 1000);
	uint64_t written, dropped;
	char buf[256];

	ck_assert_ptr_nonnull(u);
	for (size_t i = 0; i < sizeof(in) - 1; i++)
		uart_wr(u, UART_RBR_THR, (uint8_t)in[i]);
	uart__stats(u, &written, &dropped);
	ck_assert_uint_eq(written, sizeof(in) - 1);
	uart__destroy(u);
	test__read_stream(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ok\\x1b[2J\r\nA\\rB\\xff\\xe2\\x80\\xae" "evil\\x\t\xc3\xa9"
			      "\\xc2\\x9b\n\\xe2\\x82");
	fclose(out);
}
END_TEST

/* The interrupt line as the UART drives it: level and number of changes. */
struct irq_line {
	int level;
	unsigned int changes;
};

static void irq_set(void *opaque, int level)
{
	struct irq_line *l = opaque;

	if (level != l->level)
		l->changes++;
	l->level = level;
}

/* What Linux's 8250 driver does: THR-empty interrupts, acknowledged by reading IIR. */
START_TEST(test_uart_thre_interrupt)
{
	FILE *out = tmpfile();
	struct uart *u = uart__create(out, 1000);
	struct irq_line line = { .level = -1 };
	char buf[16];

	uart__set_irq(u, irq_set, &line);
	ck_assert_int_eq(line.level, 0);
	uart_wr(u, UART_IIR_FCR, UART_FCR_FE);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR), UART_IIR_FIFO | UART_IIR_NO_INT);
	/* Enabling THRI with THR empty raises it at once (the driver's UART_BUG_TXEN probe). */
	uart_wr(u, UART_IER, UART_IER_THRI);
	ck_assert_int_eq(line.level, 1);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_TEMT, UART_LSR_TEMT);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR), UART_IIR_FIFO | UART_IIR_THRI);
	/* Reading IIR acknowledged it. */
	ck_assert_int_eq(line.level, 0);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_NO_INT);
	/* Each byte sent empties THR again: the next interrupt. */
	uart_wr(u, UART_RBR_THR, 'h');
	ck_assert_int_eq(line.level, 1);
	uart_wr(u, UART_RBR_THR, 'i');
	ck_assert_int_eq(line.level, 1);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_THRI);
	ck_assert_int_eq(line.level, 0);
	/* Disabling the interrupt lowers the line; re-enabling with THR empty raises it. */
	uart_wr(u, UART_RBR_THR, '!');
	ck_assert_int_eq(line.level, 1);
	uart_wr(u, UART_IER, 0);
	ck_assert_int_eq(line.level, 0);
	uart_wr(u, UART_IER, UART_IER_THRI);
	ck_assert_int_eq(line.level, 1);
	ck_assert_uint_eq(line.changes, 8); /* counting the initial level */
	test__read_stream(out, buf, sizeof(buf));
	ck_assert_str_eq(buf, "hi!");
	uart__set_irq(u, NULL, NULL);
	uart__destroy(u);
	fclose(out);
}
END_TEST

START_TEST(test_uart_receive)
{
	struct uart *u = uart__create(NULL, 0);
	struct irq_line line = { .level = -1 };
	uint8_t in[UART_RX_FIFO + 4];

	for (unsigned int i = 0; i < sizeof(in); i++)
		in[i] = 'A' + i;
	uart__set_irq(u, irq_set, &line);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_DR, 0);
	/* The FIFO takes 16 bytes; the caller keeps the rest. */
	ck_assert_uint_eq(uart__receive(u, in, sizeof(in)), UART_RX_FIFO);
	ck_assert_uint_eq(uart__receive(u, in, 1), 0);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_DR, UART_LSR_DR);
	ck_assert_int_eq(line.level, 0); /* receive interrupts still disabled */
	uart_wr(u, UART_IER, UART_IER_RDI | UART_IER_THRI);
	ck_assert_int_eq(line.level, 1);
	/* Received data comes before THR empty. */
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_RDI);
	for (unsigned int i = 0; i < UART_RX_FIFO; i++)
		ck_assert_uint_eq(uart_rd(u, UART_RBR_THR), in[i]);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_DR, 0);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_THRI);
	ck_assert_int_eq(line.level, 0);
	ck_assert_uint_eq(uart_rd(u, UART_IIR_FCR) & 0x0f, UART_IIR_NO_INT);
	/* FCR's receive-clear bit empties the FIFO. */
	ck_assert_uint_eq(uart__receive(u, in, 3), 3);
	uart_wr(u, UART_IIR_FCR, UART_FCR_FE | UART_FCR_CLEAR_RX);
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_DR, 0);
	ck_assert_int_eq(line.level, 0);
	/* Loopback: what is sent is received; the line's input is lost. */
	uart_wr(u, UART_MCR, UART_MCR_LOOP);
	ck_assert_uint_eq(uart__receive(u, in, 2), 2);
	uart_wr(u, UART_RBR_THR, 'x');
	ck_assert_uint_eq(uart_rd(u, UART_RBR_THR), 'x');
	ck_assert_uint_eq(uart_rd(u, UART_LSR) & UART_LSR_DR, 0);
	uart__destroy(u);
}
END_TEST

static void count_call(void *opaque)
{
	(*(unsigned int *)opaque)++;
}

static void pm_io(struct acpi_pm *pm, unsigned int off, unsigned int size, uint32_t v,
		  bool write, uint32_t *out)
{
	uint8_t b[4];
	struct io_access a = { .offset = off, .data = b, .size = size, .write = write };

	memcpy(b, &v, sizeof(b));
	acpi_pm__io(pm, &a);
	if (out) {
		*out = 0;
		memcpy(out, b, size);
	}
}

START_TEST(test_acpi_pm)
{
	unsigned int offs = 0;
	struct acpi_pm pm;
	uint32_t v;

	acpi_pm__init(&pm, count_call, &offs);
	/* SCI_EN reads as set: the platform is always in ACPI mode. */
	pm_io(&pm, 4, 2, 0, false, &v);
	ck_assert_uint_eq(v & ACPI_PM1_CNT_SCI_EN, ACPI_PM1_CNT_SCI_EN);
	/* PM1_EN is stored, PM1_STS is write-1-to-clear (nothing is ever set). */
	pm_io(&pm, 2, 2, 0x0121, true, NULL);
	pm_io(&pm, 2, 2, 0, false, &v);
	ck_assert_uint_eq(v, 0x0121);
	pm_io(&pm, 0, 2, 0xffff, true, NULL);
	pm_io(&pm, 0, 2, 0, false, &v);
	ck_assert_uint_eq(v, 0);
	/* SLP_TYP alone (ACPICA writes it before SLP_EN), then another sleep type: no power off. */
	pm_io(&pm, 4, 2, ACPI_PM_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT | 1, true, NULL);
	pm_io(&pm, 4, 2, 1 << ACPI_PM1_CNT_SLP_TYP_SHIFT | ACPI_PM1_CNT_SLP_EN | 1, true, NULL);
	ck_assert_uint_eq(offs, 0);
	ck_assert_uint_eq(pm.ignored_sleeps, 1);
	/* SLP_EN reads as 0. */
	pm_io(&pm, 4, 2, 0, false, &v);
	ck_assert_uint_eq(v & ACPI_PM1_CNT_SLP_EN, 0);
	/* S5 with SLP_EN, by a byte write of the high half: power off. */
	pm_io(&pm, 5, 1, (ACPI_PM_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT |
			  ACPI_PM1_CNT_SLP_EN) >> 8, true, NULL);
	ck_assert_uint_eq(offs, 1);
	/* A dword write over the event and control blocks at once. */
	pm_io(&pm, 2, 4, (uint32_t)(ACPI_PM_S5_SLP_TYP << ACPI_PM1_CNT_SLP_TYP_SHIFT |
				    ACPI_PM1_CNT_SLP_EN) << 16, true, NULL);
	ck_assert_uint_eq(offs, 2);
	acpi_pm__fini(&pm);
}
END_TEST

START_TEST(test_i8042_reset)
{
	unsigned int resets = 0;
	struct i8042 k = { .reset = count_call, .opaque = &resets };
	uint8_t b = 0xee;
	struct io_access a = { .data = &b, .size = 1 };

	/* Status: both buffers empty, so Linux's kb_wait() returns at once. */
	a.offset = I8042_CMD_PORT - I8042_DATA_PORT;
	i8042__io(&k, &a);
	ck_assert_uint_eq(b, 0);
	a.offset = 0;
	b = 0xee;
	i8042__io(&k, &a);
	ck_assert_uint_eq(b, 0);
	/* 0xfe on the data port, another command: nothing. */
	a.write = true;
	b = I8042_CMD_RESET;
	i8042__io(&k, &a);
	a.offset = I8042_CMD_PORT - I8042_DATA_PORT;
	b = 0xd1;
	i8042__io(&k, &a);
	ck_assert_uint_eq(resets, 0);
	b = I8042_CMD_RESET;
	i8042__io(&k, &a);
	ck_assert_uint_eq(resets, 1);
}
END_TEST

static void note_status(void *opaque, int status)
{
	int *p = opaque;

	*p = status;
}

START_TEST(test_debug_exit)
{
	int status = -1;
	struct debug_exit d = { .notify = note_status, .opaque = &status };
	uint8_t b = 0x21;
	uint32_t w = 0x1234;
	struct io_access a = { .data = &b, .size = 1, .write = true };

	ck_assert_int_eq(debug_exit__status(0), 1);
	ck_assert_int_eq(debug_exit__status(1), 3);
	ck_assert_int_eq(debug_exit__status(0x21), 67);
	debug_exit__io(&d, &a);
	ck_assert_int_eq(status, 67);
	a.data = (uint8_t *)&w;
	a.size = 4;
	debug_exit__io(&d, &a);
	ck_assert_int_eq(status, (0x1234 << 1) | 1);
	status = -1;
	a.write = false;
	debug_exit__io(&d, &a);
	ck_assert_int_eq(status, -1);
	ck_assert_uint_eq(w, 0);
}
END_TEST

static void note_panic(void *opaque, unsigned int vcpu, unsigned int events)
{
	unsigned int *p = opaque;

	p[0] = vcpu;
	p[1] = events;
	p[2]++;
}

START_TEST(test_pvpanic)
{
	unsigned int seen[3] = { 0 };
	struct pvpanic p = { .notify = note_panic, .opaque = seen };
	uint8_t b = 0;
	struct io_access a = { .vcpu = 3, .data = &b, .size = 1, .write = false };

	pvpanic__io(&p, &a);
	ck_assert_uint_eq(b, PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
	a.write = true;
	b = 0xfc; /* no supported bit: ignored */
	pvpanic__io(&p, &a);
	ck_assert_uint_eq(seen[2], 0);
	b = 0xff;
	pvpanic__io(&p, &a);
	ck_assert_uint_eq(seen[2], 1);
	ck_assert_uint_eq(seen[0], 3);
	ck_assert_uint_eq(seen[1], PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
}
END_TEST

static void feed(struct agent *a, unsigned int vcpu, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		agent__feed(a, vcpu, (uint8_t)s[i]);
}

static void feed_str(struct agent *a, unsigned int vcpu, const char *s)
{
	feed(a, vcpu, s, strlen(s));
}

/* Parse line @n (0-based) of events.jsonl. */
static json_t *event_line(FILE *f, int n)
{
	char buf[1 << 14], *line, *save = NULL;

	test__read_stream(f, buf, sizeof(buf));
	line = strtok_r(buf, "\n", &save);
	while (line && n--)
		line = strtok_r(NULL, "\n", &save);
	return line ? json_loads(line, 0, NULL) : NULL;
}

static int count_lines(FILE *f)
{
	char buf[1 << 14];

	test__read_stream(f, buf, sizeof(buf));
	return (int)test__count_lines(buf);
}

START_TEST(test_agent_good_line)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(2, ev, 0, VBTS_AGENT_EVENTS_MAX);
	struct agent_stats st;
	json_t *o;

	feed_str(a, 1, "{\"event\":\"task\",\"pid\":1,\"name\":\"ping\",\"cr3\":\"0x203000\","
		       "\"vcpu\":7,\"time\":5,\"junk\":{\"a\":1}}\r\n");
	o = event_line(ev, 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "task");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "ping");
	ck_assert_str_eq(json_string_value(json_object_get(o, "cr3")), "0x203000");
	/* The VMM's own vcpu and time, not the guest's. */
	ck_assert_int_eq(json_integer_value(json_object_get(o, "vcpu")), 1);
	ck_assert_int_gt(json_integer_value(json_object_get(o, "time")), 5);
	ck_assert_ptr_null(json_object_get(o, "junk"));
	json_decref(o);
	agent__stats(a, &st);
	ck_assert_uint_eq(st.stored, 1);
	ck_assert_uint_eq(st.members_dropped, 3);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

/* A Linux guest's processes are the VMM's to report: the guest cannot add its own. */
START_TEST(test_agent_introspected_forged)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(1, ev, 0, VBTS_AGENT_EVENTS_MAX);
	struct agent_stats st;
	json_t *o;

	agent__set_introspected(a, true);
	feed_str(a, 0, "{\"event\":\"task\",\"pid\":1,\"name\":\"fake\",\"cr3\":\"0x1000\"}\n");
	feed_str(a, 0, "{\"event\":\"exec\",\"pid\":1,\"name\":\"fake\"}\n");
	feed_str(a, 0, "{\"event\":\"exit\",\"pid\":1,\"code\":0}\n");
	feed_str(a, 0, "{\"event\":\"agent-proc\",\"pid\":1,\"comm\":\"real\"}\n");
	agent__stats(a, &st);
	ck_assert_uint_eq(st.forged, 3);
	ck_assert_uint_eq(st.stored, 1);
	ck_assert_int_eq(count_lines(ev), 1);
	o = event_line(ev, 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "agent-proc");
	json_decref(o);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

START_TEST(test_agent_over_long_line)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(1, ev, 0, VBTS_AGENT_EVENTS_MAX);
	struct agent_stats st;
	char big[VBTS_AGENT_LINE_MAX + 100];
	json_t *o;

	/* A valid-looking line that is one byte too long, then a good one. */
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"event\":\"x\"}", 13);
	feed(a, 0, big, VBTS_AGENT_LINE_MAX + 1);
	feed_str(a, 0, "\n{\"event\":\"after\"}\n");
	/* Exactly the limit is fine. */
	feed(a, 0, big, VBTS_AGENT_LINE_MAX);
	feed_str(a, 0, "\n");
	agent__stats(a, &st);
	ck_assert_uint_eq(st.too_long, 1);
	ck_assert_uint_eq(st.stored, 2);
	o = event_line(ev, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "after");
	json_decref(o);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

START_TEST(test_agent_hostile_lines)
{
	static const char *const hostile[] = {
		"not json\n",
		"[1,2,3]\n",
		"{\"event\":42}\n",
		"{\"pid\":1}\n",
		"{\"event\":\"a\",\"event\":\"b\"}\n",
		"{\"event\":\"\xff\xfe\"}\n",
		/* a string of 65 bytes */
		"{\"event\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaa\"}\n",
		"{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n",
		"{\"event\":\"x\"\n",
	};
	FILE *ev = tmpfile();
	struct agent *a = agent__create(1, ev, 0, VBTS_AGENT_EVENTS_MAX);
	struct agent_stats st;
	json_t *o;

	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		feed_str(a, 0, hostile[i]);
	/* A NUL inside a string, and members of the wrong type or too long. */
	feed_str(a, 0, "{\"event\":\"a\\u0000b\"}\n");
	feed_str(a, 0, "{\"event\":\"ok\",\"pid\":\"1\",\"code\":1.5,\"name\":\""
		       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\","
		       "\"comm\":\"sh\"}\n");
	agent__stats(a, &st);
	ck_assert_uint_eq(st.invalid, sizeof(hostile) / sizeof(hostile[0]) + 1);
	ck_assert_uint_eq(count_lines(ev), 1);
	o = event_line(ev, 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "ok");
	ck_assert_ptr_null(json_object_get(o, "pid"));
	ck_assert_ptr_null(json_object_get(o, "name"));
	ck_assert_str_eq(json_string_value(json_object_get(o, "comm")), "sh");
	json_decref(o);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

/*
 * events.jsonl holds only printable ASCII, whatever the guest sent in its strings (ESC, C1
 * and bidi controls, any non-ASCII): the file is safe to print, and parses to the same text.
 */
START_TEST(test_agent_stores_ascii)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(1, ev, 0, VBTS_AGENT_EVENTS_MAX);
	char buf[1 << 12];
	json_t *o;

	feed_str(a, 0, "{\"event\":\"task\",\"pid\":1,\"name\":\"\\u001b[2J\xe2\x80\xae"
		       "\\u009b\xc3\xa9\\u2028\\\\\",\"cr3\":\"0x1000\"}\n");
	test__read_stream(ev, buf, sizeof(buf));
	ck_assert_uint_gt(strlen(buf), 1);
	for (const char *p = buf; *p; p++)
		ck_assert_msg((*p >= 0x20 && *p < 0x7f) || *p == '\n', "byte %#x in events.jsonl",
			      (unsigned char)*p);
	o = event_line(ev, 0);
	ck_assert_ptr_nonnull(o);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
			 "\x1b[2J\xe2\x80\xae\xc2\x9b\xc3\xa9\xe2\x80\xa8\\");
	json_decref(o);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

START_TEST(test_agent_event_limit)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(1, ev, 0, 3);
	struct agent_stats st;

	for (int i = 0; i < 10; i++)
		feed_str(a, 0, "{\"event\":\"tick\"}\n");
	agent__stats(a, &st);
	ck_assert_uint_eq(st.stored, 3);
	ck_assert_uint_eq(st.over_limit, 7);
	ck_assert_int_eq(count_lines(ev), 3);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

START_TEST(test_agent_per_vcpu_streams)
{
	FILE *ev = tmpfile();
	struct agent *a = agent__create(2, ev, 0, VBTS_AGENT_EVENTS_MAX);
	const char *l0 = "{\"event\":\"zero\"}\n", *l1 = "{\"event\":\"one\"}\n";
	struct agent_stats st;
	uint8_t word[4] = { '{', '}', '\n', 'x' };
	struct io_access acc = { .vcpu = 1, .data = word, .size = 4, .write = true };

	/* Interleaved bytes of two vCPUs still make two good lines. */
	for (size_t i = 0; i < strlen(l1); i++) {
		agent__feed(a, 0, l0[i]);
		agent__feed(a, 1, l1[i]);
	}
	agent__feed(a, 0, '\n');
	agent__feed(a, 9, 'x'); /* no such vCPU */
	ck_assert_int_eq(count_lines(ev), 2);
	agent__io(a, &acc); /* "{}" is invalid (no event); 'x' starts a partial line */
	agent__stats(a, &st);
	ck_assert_uint_eq(st.stored, 2);
	ck_assert_uint_eq(st.invalid, 2);
	agent__destroy(a);
	fclose(ev);
}
END_TEST

static int fake_dev(void *dev, struct io_access *a)
{
	int *hits = dev;

	(*hits)++;
	if (!a->write)
		a->data[0] = (uint8_t)a->offset;
	return 0;
}

START_TEST(test_io_bus)
{
	struct io_bus bus;
	int hits = 0;
	uint8_t b = 0;
	struct io_access a = { .data = &b, .size = 1 };

	io_bus__init(&bus, "pio");
	ck_assert_int_eq(io_bus__register(&bus, 0x100, 8, fake_dev, &hits, "a"), 0);
	ck_assert_int_eq(io_bus__register(&bus, 0x107, 1, fake_dev, &hits, "b"), -EBUSY);
	ck_assert_int_eq(io_bus__register(&bus, 0x0f8, 9, fake_dev, &hits, "c"), -EBUSY);
	ck_assert_int_eq(io_bus__register(&bus, 0x108, 0, fake_dev, &hits, "d"), -EINVAL);
	ck_assert_int_eq(io_bus__register(&bus, ~0ULL, 2, fake_dev, &hits, "e"), -EINVAL);
	ck_assert_int_eq(io_bus__access(&bus, 0x103, &a), 0);
	ck_assert_uint_eq(b, 3);
	ck_assert_int_eq(hits, 1);
	ck_assert_int_eq(io_bus__access(&bus, 0x108, &a), -ENODEV);
	ck_assert_uint_eq(b, 0xff);
	a.write = true;
	ck_assert_int_eq(io_bus__access(&bus, 0x0ff, &a), -ENODEV);
	ck_assert_uint_eq(bus.unhandled_reads, 1);
	ck_assert_uint_eq(bus.unhandled_writes, 1);
	for (int i = 2; i < IO_BUS_MAX_HANDLERS + 1; i++)
		io_bus__register(&bus, 0x1000 * i, 1, fake_dev, &hits, "f");
	ck_assert_int_eq(io_bus__register(&bus, 0x100000, 1, fake_dev, &hits, "g"), -ENOSPC);
}
END_TEST

Suite *devices_suite(void)
{
	Suite *s = suite_create("devices");
	TCase *tc = tcase_create("bytes");

	tcase_add_test(tc, test_uart_polling_driver);
	tcase_add_test(tc, test_uart_limit_and_loopback);
	tcase_add_test(tc, test_uart_escapes);
	tcase_add_test(tc, test_uart_thre_interrupt);
	tcase_add_test(tc, test_uart_receive);
	tcase_add_test(tc, test_acpi_pm);
	tcase_add_test(tc, test_i8042_reset);
	tcase_add_test(tc, test_debug_exit);
	tcase_add_test(tc, test_pvpanic);
	tcase_add_test(tc, test_agent_good_line);
	tcase_add_test(tc, test_agent_introspected_forged);
	tcase_add_test(tc, test_agent_over_long_line);
	tcase_add_test(tc, test_agent_hostile_lines);
	tcase_add_test(tc, test_agent_stores_ascii);
	tcase_add_test(tc, test_agent_event_limit);
	tcase_add_test(tc, test_agent_per_vcpu_streams);
	tcase_add_test(tc, test_io_bus);
	suite_add_tcase(s, tc);
	return s;
}
