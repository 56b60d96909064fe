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
 *
 * The guest agent (guest-agent/, protocol version VBTS_AGENT_PROTO_VERSION) sends its own
 * message types, all named "agent-*" so that they never stand for what the VMM's own
 * introspection saw ("task", "exec", "exit"). Stored in events.jsonl:
 *   {"event":"agent-hello","v":1,"pid":57}                        agent started
 *   {"event":"agent-proc","v":1,"pid":60,"ppid":1,"comm":"demo","exe":"/bin/demo"}
 *   {"event":"agent-map","v":1,"pid":60,"start":"0x55d0c000","end":"0x55d0d000",
 *    "offset":"0x1000","path":"/bin/demo","build_id":"4f1c..."}  executable mapping
 *   {"event":"agent-exit","v":1,"pid":60,"code":0,"signal":0}
 *   {"event":"agent-bye","v":1,"bytes":55328,"dropped":0}          agent stopped (bytes sent,
 *                                                                   lines it could not send)
 *   {"event":"agent-elf","build_id":"4f1c...","size":16384}       (written by the VMM once
 *                                                                   the file is verified)
 * ELF upload (consumed by the VMM, not stored as lines): the agent sends each ELF file whose
 * build ID it reported, once, when it is no larger than its own limit:
 *   {"event":"agent-elf-begin","v":1,"build_id":"4f1c...","size":16384}
 *   {"event":"agent-elf-data","off":0,"data":"<base64 of at most VBTS_AGENT_ELF_CHUNK bytes>"}
 *   ... chunks in order, "off" the byte offset of the chunk ...
 *   {"event":"agent-elf-end"}
 * The VMM keeps one upload at a time (a begin abandons an unfinished one), refuses a build ID
 * that is not 2-64 lowercase hex digits, a file over VBTS_AGENT_ELF_FILE_MAX, uploads past
 * VBTS_AGENT_ELF_TOTAL_MAX bytes or VBTS_AGENT_ELF_FILES_MAX files, a build ID it already
 * has, chunks out of order, and a file whose GNU build ID note differs from the announced one.
 * A verified file is stored as DIR/debuginfod/<build-id>/executable (debuginfod's cache
 * layout). Refusals are counted (vbts run --stats), never logged per message.
 */
#ifndef VBTS_AGENT_PROTO_H
#define VBTS_AGENT_PROTO_H

#define VBTS_AGENT_PORT 0x0700      /* outb: one byte of a JSON line */
/* The same lines through QEMU's virtio-serial port of that name (`vbts attach --agent`). */
#define VBTS_AGENT_VIRTIO_NAME "org.vbts.agent.0"
#define VBTS_AGENT_VIRTIO_PATH "/dev/virtio-ports/" VBTS_AGENT_VIRTIO_NAME
#define VBTS_AGENT_LINE_MAX 512     /* bytes per line, newline excluded */
#define VBTS_AGENT_EVENTS_MAX 65536 /* lines stored per run; the rest are counted */

#define VBTS_AGENT_PROTO_VERSION 1       /* "v" of the guest agent's messages */
#define VBTS_AGENT_PATH_MAX 256          /* bytes of "exe" and "path" (longer: member dropped) */
#define VBTS_AGENT_BUILD_ID_MAX 64       /* hex digits of a build ID (2..64, lowercase) */
#define VBTS_AGENT_ELF_CHUNK 336         /* bytes per agent-elf-data line (448 base64 chars) */
#define VBTS_AGENT_ELF_FILE_MAX (32u << 20)   /* bytes per uploaded ELF file */
#define VBTS_AGENT_ELF_TOTAL_MAX (256u << 20) /* bytes of ELF files stored per run */
#define VBTS_AGENT_ELF_FILES_MAX 4096         /* ELF files stored per run */

/* Test-guest ports (freestanding guests under tests/guests/). */
#define VBTS_DEBUG_EXIT_PORT 0x00f4 /* QEMU isa-debug-exit: write v, exit status (v << 1) | 1 */
#define VBTS_UART_PORT 0x03f8       /* 8250 COM1 */

#endif /* VBTS_AGENT_PROTO_H */
