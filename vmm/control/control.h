/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control.h - the control socket of `vbts run --control SOCKET`: JSON lines over a unix stream
 * socket, served by the `control` thread (protocol: doc/control-protocol.md).
 */
#ifndef VBTS_VMM_CONTROL_H
#define VBTS_VMM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct control;

#define CONTROL_PROTO_VERSION 1
#define CONTROL_LINE_MAX 4096          /* bytes of one request, its newline included */
#define CONTROL_CLIENTS_MAX 16         /* connections served at once */
#define CONTROL_QUEUE_MAX (256U << 10) /* bytes queued for one client */
#define CONTROL_DRAIN_MAX 512          /* records in one drain response */
#define CONTROL_TASKS_MAX 64           /* names in a task filter */

/**
 * struct control_vcpu_state - what the VM says of one vCPU.
 * @run:     "running", "paused" or "stopped"
 * @rec:     enum vcpu_recording (vcpu.h)
 * @pending: VCPU_CTL_* bits not applied yet
 * @cpl:     the CPL filter in force (enum vbts_cpl_filter)
 */
struct control_vcpu_state {
	const char *run;
	unsigned int rec;
	unsigned int pending;
	unsigned int cpl;
};

/**
 * struct control_target_ops - how the control socket reaches the VM. Called from the control
 * thread; none may block on a vCPU.
 * @state:    fill in @st for vCPU @vcpu; 0 or -errno
 * @request:  VCPU_CTL_* bits (and a CPL filter) for vCPU @vcpu; 0 or -errno
 * @set_mode: switch vCPU @vcpu (or every vCPU when ~0U) to enum vbts_ring_mode @mode; 0, or
 *            -errno with one line in @err
 * @resize:   give vCPU @vcpu's ring @records slots (the memory budget was checked); 0 or
 *            -errno
 * @set_tasks: record only the guest processes @names (@nr of them, 0: every process); 0, or
 *            -errno with one line in @err (-ENOTSUP: this run has no task filter)
 */
struct control_target_ops {
	int (*state)(void *opaque, unsigned int vcpu, struct control_vcpu_state *st);
	int (*request)(void *opaque, unsigned int vcpu, unsigned int req, unsigned int cpl);
	int (*set_mode)(void *opaque, unsigned int vcpu, unsigned int mode, char *err,
			size_t errlen);
	int (*resize)(void *opaque, unsigned int vcpu, uint64_t records);
	int (*set_tasks)(void *opaque, const char *const *names, unsigned int nr, char *err,
			 size_t errlen);
};

/**
 * struct control_config - what the control socket serves.
 * @path:         the socket's path
 * @trace_dir:    the trace directory (its vcpuN.ring files, or in stream mode its segment
 *                files, are read, never written)
 * @nr_vcpus:     vCPUs
 * @ring_records: records per ring (wrap mode)
 * @stream:       the trace is in stream mode (vbts/segment-format.h): its verbs read the
 *                segments, whose records are never overwritten
 * @segment_records: stream mode: records per segment (bounds a closed segment read back)
 * @backend:      the tracer backend's name ("step" or "kvm" stop and restart recording)
 * @tasks:        the --task selection (@nr_tasks names)
 * @ops, @opaque: the VM
 */
struct control_config {
	const char *path;
	const char *trace_dir;
	unsigned int nr_vcpus;
	uint64_t ring_records;
	bool stream;
	uint64_t segment_records;
	const char *backend;
	const char *const *tasks;
	unsigned int nr_tasks;
	const struct control_target_ops *ops;
	void *opaque;
};

/**
 * control__create() - create the socket (mode 0600) and the server, without its thread.
 * @cfg:    the configuration (strings are copied)
 * @err:    one error line on failure
 * @errlen: room in @err
 *
 * A stale socket at @cfg->path (nobody accepts on it) is replaced; anything else there (a
 * live socket, a file, a directory) is refused. @cfg->path NULL: a server without a socket,
 * for control__request() alone.
 *
 * Return: the server, or NULL with errno set: EEXIST (something is at the path),
 * ENAMETOOLONG, ENOMEM, or socket(2)/bind(2)/listen(2) errors.
 */
struct control *control__create(const struct control_config *cfg, char *err, size_t errlen);

/**
 * control__check_path() - whether control__create() could make a socket at @path, checked
 * before a run touches anything.
 * @path:   the socket's path
 * @err:    one error line on failure
 * @errlen: room in @err
 *
 * Return: 0 (nothing there, or a socket: control__create() decides whether it is stale),
 * -EEXIST when something else is there, -ENAMETOOLONG, -ENOENT or -ENOTDIR when its directory
 * is missing, -ENOMEM.
 */
int control__check_path(const char *path, char *err, size_t errlen);

/**
 * control__start() - start the `control` thread that serves the socket.
 * @c: server
 *
 * Return: 0 or -errno from pthread_create.
 */
int control__start(struct control *c);

/**
 * control__destroy() - stop the thread, close every connection, remove the socket.
 * @c: server, may be NULL
 */
void control__destroy(struct control *c);

/**
 * control__peer_allowed() - whether a peer of uid @peer may use a server run by uid @self.
 * @peer: SO_PEERCRED's uid
 * @self: the server's effective uid
 *
 * Return: true for the same uid and for root.
 */
bool control__peer_allowed(unsigned int peer, unsigned int self);

#endif /* VBTS_VMM_CONTROL_H */
