/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent-socket.h - the guest agent's channel of a QEMU guest: the host end of a virtio-serial
 * port (org.vbts.agent.0) that QEMU exposes as a chardev socket, read by `vbts attach --agent`
 * into the trace directory as the VMM stores its agent channel (vmm/record/agent.h: events.jsonl,
 * the build-ID store DIR/debuginfod).
 *
 * The peer is the guest: everything it sends is untrusted. The bytes go through the VMM's own
 * parser with its bounds (lines of VBTS_AGENT_LINE_MAX bytes, VBTS_AGENT_EVENTS_MAX events, the
 * ELF store's limits); "task", "exec" and "exit" lines are forged here by definition (the
 * agent sends only agent-* messages), counted and dropped. Each agent_socket__read() reads at
 * most AGENT_SOCKET_READ_MAX bytes, so a flooding guest cannot keep the collector from its
 * rings.
 *
 * Locking: an agent socket belongs to one thread.
 */
#ifndef VBTS_ATTACH_AGENT_SOCKET_H
#define VBTS_ATTACH_AGENT_SOCKET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent.h"

/* Bytes read at most per agent_socket__read(). */
#define AGENT_SOCKET_READ_MAX (64u << 10)

struct agent_socket;

/**
 * agent_socket__open() - connect to QEMU's chardev socket of the agent's port.
 * @path:      the socket (QEMU: -chardev socket,id=ID,path=PATH,server=on,wait=off)
 * @events:    events.jsonl of the trace, not owned
 * @start_ns:  CLOCK_MONOTONIC of the trace's start ("time" of the events)
 * @trace_dir: the trace directory, for its build-ID store (DIR/debuginfod)
 * @err:       receives one line on failure
 * @errlen:    its size
 *
 * Return: the channel, or NULL with errno set: what socket() or connect() gave (ENOENT,
 * ECONNREFUSED, ENOTSOCK...), ENAMETOOLONG for a path a socket address cannot hold, ENOMEM.
 */
struct agent_socket *agent_socket__open(const char *path, FILE *events, uint64_t start_ns,
					const char *trace_dir, char *err, size_t errlen);

/**
 * agent_socket__fd() - the fd to poll() for POLLIN; -1 once the peer has hung up.
 * @s: channel
 *
 * Return: the fd, or -1.
 */
int agent_socket__fd(const struct agent_socket *s);

/**
 * agent_socket__read() - read what is there (at most AGENT_SOCKET_READ_MAX bytes) and store
 * it; never blocks.
 * @s: channel
 *
 * Return: the bytes read (0: nothing there), or -EPIPE once the peer has hung up (what it
 * sent before is stored; the fd is closed then), or another -errno of read() (the fd is
 * closed then too).
 */
long agent_socket__read(struct agent_socket *s);

/**
 * agent_socket__stats() - what the guest sent, as vmm/record/agent.h counts it.
 * @s:     channel
 * @stats: filled in
 */
void agent_socket__stats(struct agent_socket *s, struct agent_stats *stats);

/**
 * agent_socket__close() - flush and free (a partial last line is counted invalid).
 * @s: may be NULL
 */
void agent_socket__close(struct agent_socket *s);

#endif /* VBTS_ATTACH_AGENT_SOCKET_H */
