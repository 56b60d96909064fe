/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qmp.h - a small client of QEMU's machine protocol (QMP) over a unix socket: the greeting,
 * qmp_capabilities, commands with their replies, and the events that come in between.
 *
 * Everything QEMU sends is untrusted: each message is one line of at most QMP_LINE_MAX bytes
 * of JSON, each wait is bounded in time, at most QMP_MAX_SKIP messages are read while waiting
 * for one reply, and text from QEMU is escaped before it reaches an error line.
 *
 * Locking: a struct qmp belongs to one thread.
 */
#ifndef VBTS_ATTACH_QMP_H
#define VBTS_ATTACH_QMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define QMP_LINE_MAX (64U * 1024U)
#define QMP_MAX_SKIP 4096U
/* JSON nesting accepted in a message (QMP's deepest replies are far shallower). */
#define QMP_MAX_DEPTH 32U

/* What one QMP message is. */
enum qmp_msg_kind {
	QMP_MSG_BAD = 0,  /* not a QMP message */
	QMP_MSG_GREETING, /* {"QMP": {"version": ..., "capabilities": [...]}} */
	QMP_MSG_RETURN,   /* {"return": ..., "id": ...} */
	QMP_MSG_ERROR,    /* {"error": {"class": ..., "desc": ...}, "id": ...} */
	QMP_MSG_EVENT,    /* {"event": NAME, "timestamp": ..., "data": ...} */
};

/* Events a collector cares about, as bits of qmp__events(). */
#define QMP_EV_SHUTDOWN (1U << 0)      /* SHUTDOWN: the guest powered off or QEMU quits */
#define QMP_EV_STOP (1U << 1)          /* STOP: the vCPUs were stopped */
#define QMP_EV_RESUME (1U << 2)        /* RESUME: they run again */
#define QMP_EV_GUEST_PANICKED (1U << 3) /* GUEST_PANICKED: pvpanic */
#define QMP_EV_RESET (1U << 4)         /* RESET */

/**
 * struct qmp_msg - one parsed message.
 * @kind:   enum qmp_msg_kind
 * @root:   the whole message (owned; qmp_msg__release() frees it)
 * @has_id: @id is set
 * @id:     the "id" of a reply, when it is an integer
 * @value:  the "return" value of a reply, borrowed from @root
 * @name:   an event's name, or an error's class, borrowed from @root
 * @desc:   an error's description, borrowed from @root ("" when absent)
 */
struct qmp_msg {
	enum qmp_msg_kind kind;
	json_t *root;
	bool has_id;
	int64_t id;
	json_t *value;
	const char *name;
	const char *desc;
};

/**
 * qmp_msg__parse() - parse and classify one line of QMP.
 * @buf: the line, without its newline (need not be NUL-terminated)
 * @len: its length
 * @m:   receives the message; release it with qmp_msg__release() whatever the result
 *
 * Return: @m->kind; QMP_MSG_BAD for invalid JSON, JSON deeper than QMP_MAX_DEPTH, a message
 * that is not an object, has none or more than one of "QMP", "return", "error" and "event",
 * or whose fields have the wrong types.
 */
enum qmp_msg_kind qmp_msg__parse(const char *buf, size_t len, struct qmp_msg *m);

/**
 * qmp_msg__release() - free what qmp_msg__parse() kept.
 * @m: the message
 */
void qmp_msg__release(struct qmp_msg *m);

/**
 * qmp__event_bit() - the QMP_EV_* bit of an event name.
 * @name: the event's name
 *
 * Return: the bit, 0 for an event the collector does not follow.
 */
unsigned int qmp__event_bit(const char *name);

struct qmp;

/**
 * qmp__open_fd() - a client on a connected stream socket.
 * @fd:         the socket; owned by the client from now on (closed by qmp__close(), also on
 *              failure)
 * @timeout_ms: the longest wait for one message, > 0
 *
 * Return: the client, or NULL with errno set.
 */
struct qmp *qmp__open_fd(int fd, int timeout_ms);

/**
 * qmp__connect() - connect to a QMP unix socket.
 * @path:       the socket's path
 * @timeout_ms: as for qmp__open_fd()
 * @err:        receives one line on failure
 * @errlen:     its size
 *
 * Return: the client, or NULL with errno set (ENAMETOOLONG, ECONNREFUSED, ENOENT, ...).
 */
struct qmp *qmp__connect(const char *path, int timeout_ms, char *err, size_t errlen);

/**
 * qmp__handshake() - read the greeting and leave capabilities negotiation mode.
 * @q:      client
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0; -EPROTO for a first message that is not a greeting or a refused
 * qmp_capabilities, -ETIMEDOUT, -EPIPE when QEMU closed the socket, -EMSGSIZE for a line
 * beyond QMP_LINE_MAX.
 */
int qmp__handshake(struct qmp *q, char *err, size_t errlen);

/**
 * qmp__execute() - run one command without arguments and wait for its reply.
 * @q:      client
 * @cmd:    the command ("cont", "query-status", ...)
 * @ret:    receives a new reference to the "return" value (NULL: not wanted)
 * @err:    receives one line on failure (QEMU's error class and description, escaped)
 * @errlen: its size
 *
 * Events read on the way are added to qmp__events(). A reply whose id is not the command's
 * is a protocol error.
 *
 * Return: 0; -EREMOTEIO when QEMU answered with an error; -EPROTO for a message that is not
 * QMP or a reply to another id, -E2BIG after QMP_MAX_SKIP events without the reply, and the
 * errors of qmp__handshake().
 */
int qmp__execute(struct qmp *q, const char *cmd, json_t **ret, char *err, size_t errlen);

/**
 * qmp__query_status() - whether the VM runs (query-status).
 * @q:       client
 * @running: receives "running"
 * @status:  receives the status name, escaped ("paused", "prelaunch", ...)
 * @len:     its size
 * @err:     receives one line on failure
 * @errlen:  its size
 *
 * Return: 0, -EPROTO for a reply without a boolean "running" and a string "status", or as
 * qmp__execute().
 */
int qmp__query_status(struct qmp *q, bool *running, char *status, size_t len, char *err,
		      size_t errlen);

/**
 * qmp__wait_event() - read messages until one event or the timeout.
 * @q:          client
 * @timeout_ms: how long to wait; 0 only reads what is there
 *
 * Return: the QMP_EV_* bit of the event read (0 for another event), -ETIMEDOUT when none
 * came, -EPIPE when QEMU closed the socket, -EPROTO for a message that is not an event.
 */
int qmp__wait_event(struct qmp *q, int timeout_ms);

/**
 * qmp__events() - QMP_EV_* bits of every event read so far.
 * @q: client
 *
 * Return: the bits.
 */
unsigned int qmp__events(const struct qmp *q);

/**
 * qmp__fd() - the socket, for poll().
 * @q: client
 *
 * Return: the fd.
 */
int qmp__fd(const struct qmp *q);

/**
 * qmp__close() - close the socket and free @q.
 * @q: may be NULL
 */
void qmp__close(struct qmp *q);

#endif /* VBTS_ATTACH_QMP_H */
