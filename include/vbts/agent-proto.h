/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * agent-proto.h - the guest → host agent channel: I/O ports and message limits shared by the
 * VMM, the in-guest agent and the test guests.
 *
 * The channel is a byte stream of JSON lines written with `outb` to VBTS_AGENT_PORT. Each
 * line is one flat JSON object with an "event" member, for example
 *   {"event":"task","pid":1,"name":"ping","cr3":"0x203000"}
 *   {"event":"exit","pid":3,"code":139}
 * The VMM accepts at most VBTS_AGENT_LINE_MAX bytes per line (longer lines are dropped and
 * counted), keeps only the members it knows, and appends them to events.jsonl of the trace
 * directory with the vCPU and the time added. Everything the guest sends is untrusted.
 */
#ifndef VBTS_AGENT_PROTO_H
#define VBTS_AGENT_PROTO_H

#define VBTS_AGENT_PORT 0x0700      /* outb: one byte of a JSON line */
#define VBTS_AGENT_LINE_MAX 512     /* bytes per line, newline excluded */
#define VBTS_AGENT_EVENTS_MAX 65536 /* lines stored per run; the rest are counted */

/* Test-guest ports (freestanding guests under tests/guests/). */
#define VBTS_DEBUG_EXIT_PORT 0x00f4 /* QEMU isa-debug-exit: write v, exit status (v << 1) | 1 */
#define VBTS_UART_PORT 0x03f8       /* 8250 COM1 */

#endif /* VBTS_AGENT_PROTO_H */
