// SPDX-License-Identifier: GPL-2.0
/*
 * qmp.c - a bounded QMP client: one JSON object per line from QEMU, each validated before use.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "escape.h"
#include "qmp.h"

/**
 * struct qmp - a client.
 * @fd:         the socket
 * @timeout_ms: the longest wait for one message
 * @buf:        bytes read and not yet consumed (QMP_LINE_MAX + 1 of room)
 * @len:        how many
 * @next_id:    the id of the next command
 * @events:     QMP_EV_* bits seen
 */
struct qmp {
	int fd;
	int timeout_ms;
	char *buf;
	size_t len;
	int64_t next_id;
	unsigned int events;
};

/* The deepest nesting of arrays and objects in @buf (strings skipped). */
static unsigned int json_depth(const char *buf, size_t len)
{
	unsigned int depth = 0, max = 0;
	bool in_str = false, esc = false;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max)
				max = depth;
		} else if ((c == '}' || c == ']') && depth) {
			depth--;
		}
	}
	return max;
}

static void msg_reset(struct qmp_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->desc = "";
}

static enum qmp_msg_kind bad(struct qmp_msg *m)
{
	m->kind = QMP_MSG_BAD;
	return QMP_MSG_BAD;
}

enum qmp_msg_kind qmp_msg__parse(const char *buf, size_t len, struct qmp_msg *m)
{
	json_t *greet, *ret, *error, *event, *id, *v;
	json_error_t jerr;
	int n;

	msg_reset(m);
	if (len > QMP_LINE_MAX || json_depth(buf, len) > QMP_MAX_DEPTH)
		return bad(m);
	m->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!m->root || !json_is_object(m->root))
		return bad(m);
	greet = json_object_get(m->root, "QMP");
	ret = json_object_get(m->root, "return");
	error = json_object_get(m->root, "error");
	event = json_object_get(m->root, "event");
	n = !!greet + !!ret + !!error + !!event;
	if (n != 1)
		return bad(m);
	id = json_object_get(m->root, "id");
	if (id && json_is_integer(id)) {
		m->has_id = true;
		m->id = json_integer_value(id);
	}
	if (greet) {
		if (!json_is_object(greet) || !json_is_object(json_object_get(greet, "version")))
			return bad(m);
		m->kind = QMP_MSG_GREETING;
	} else if (ret) {
		m->value = ret;
		m->kind = QMP_MSG_RETURN;
	} else if (error) {
		if (!json_is_object(error))
			return bad(m);
		v = json_object_get(error, "class");
		if (!json_is_string(v))
			return bad(m);
		m->name = json_string_value(v);
		v = json_object_get(error, "desc");
		if (v && !json_is_string(v))
			return bad(m);
		if (v)
			m->desc = json_string_value(v);
		m->kind = QMP_MSG_ERROR;
	} else {
		if (!json_is_string(event))
			return bad(m);
		m->name = json_string_value(event);
		m->kind = QMP_MSG_EVENT;
	}
	return m->kind;
}

void qmp_msg__release(struct qmp_msg *m)
{
	json_decref(m->root);
	msg_reset(m);
}

unsigned int qmp__event_bit(const char *name)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} events[] = {
		{ "SHUTDOWN", QMP_EV_SHUTDOWN },
		{ "STOP", QMP_EV_STOP },
		{ "RESUME", QMP_EV_RESUME },
		{ "GUEST_PANICKED", QMP_EV_GUEST_PANICKED },
		{ "RESET", QMP_EV_RESET },
	};

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(name, events[i].name))
			return events[i].bit;
	return 0;
}

struct qmp *qmp__open_fd(int fd, int timeout_ms)
{
	struct qmp *q;

	if (fd < 0 || timeout_ms <= 0) {
		if (fd >= 0)
			close(fd);
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q)
		q->buf = malloc(QMP_LINE_MAX + 1);
	if (!q || !q->buf) {
		if (q)
			free(q);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	q->fd = fd;
	q->timeout_ms = timeout_ms;
	q->next_id = 1;
	return q;
}

struct qmp *qmp__connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errmsg__set(err, errlen, "QMP socket path is longer than %zu bytes",
			sizeof(sa.sun_path) - 1);
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		if (fd >= 0)
			close(fd);
		errmsg__set(err, errlen, "cannot connect to QMP socket %s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	return qmp__open_fd(fd, timeout_ms);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The next line into @m (its newline consumed), waiting at most @timeout_ms.
 * Return: 0, -ETIMEDOUT, -EPIPE (closed, also in the middle of a line), -EMSGSIZE, -errno.
 */
static int read_line(struct qmp *q, int timeout_ms, struct qmp_msg *m)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
	char *nl;
	ssize_t n;
	int left, r;

	for (;;) {
		nl = memchr(q->buf, '\n', q->len);
		if (nl) {
			size_t line = (size_t)(nl - q->buf);

			qmp_msg__parse(q->buf, line, m);
			memmove(q->buf, nl + 1, q->len - line - 1);
			q->len -= line + 1;
			return 0;
		}
		if (q->len >= QMP_LINE_MAX)
			return -EMSGSIZE;
		left = (int)(deadline - now_ms());
		if (left < 0)
			left = 0;
		r = poll(&pfd, 1, left);
		if (r < 0) {
			if (errno == EINTR)
				return -EINTR;
			return -errno;
		}
		if (r == 0)
			return -ETIMEDOUT;
		n = read(q->fd, q->buf + q->len, QMP_LINE_MAX - q->len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == ECONNRESET ? -EPIPE : -errno;
		}
		if (n == 0)
			return -EPIPE;
		q->len += (size_t)n;
	}
}

static void io_err(int ret, char *err, size_t errlen)
{
	if (ret == -ETIMEDOUT)
		errmsg__set(err, errlen, "QEMU did not answer on its QMP socket in time");
	else if (ret == -EPIPE)
		errmsg__set(err, errlen, "QEMU closed its QMP socket");
	else if (ret == -EMSGSIZE)
		errmsg__set(err, errlen, "QEMU sent a QMP line longer than %u bytes", QMP_LINE_MAX);
	else
		errmsg__set(err, errlen, "QMP socket: %s", strerror(-ret));
}

static int send_all(struct qmp *q, const char *s, size_t len)
{
	while (len) {
		ssize_t n = send(q->fd, s, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == ECONNRESET ? -EPIPE : -errno;
		}
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int qmp__handshake(struct qmp *q, char *err, size_t errlen)
{
	struct qmp_msg m;
	int ret;

	ret = read_line(q, q->timeout_ms, &m);
	if (ret < 0) {
		io_err(ret, err, errlen);
		return ret;
	}
	if (m.kind != QMP_MSG_GREETING) {
		qmp_msg__release(&m);
		errmsg__set(err, errlen, "the QMP socket's first message is not QEMU's greeting");
		return -EPROTO;
	}
	qmp_msg__release(&m);
	ret = qmp__execute(q, "qmp_capabilities", NULL, err, errlen);
	return ret == -EREMOTEIO ? -EPROTO : ret;
}

int qmp__execute(struct qmp *q, const char *cmd, json_t **ret_val, char *err, size_t errlen)
{
	char line[256], cls[64], desc[256];
	int64_t id = q->next_id++;
	struct qmp_msg m;
	int n, ret;

	if (ret_val)
		*ret_val = NULL;
	n = snprintf(line, sizeof(line), "{\"execute\": \"%s\", \"id\": %lld}\n", cmd,
		     (long long)id);
	if (n < 0 || (size_t)n >= sizeof(line) || strpbrk(cmd, "\"\\\n"))
		return -EINVAL;
	ret = send_all(q, line, (size_t)n);
	if (ret < 0) {
		io_err(ret, err, errlen);
		return ret;
	}
	for (unsigned int i = 0; i <= QMP_MAX_SKIP; i++) {
		ret = read_line(q, q->timeout_ms, &m);
		if (ret < 0) {
			io_err(ret, err, errlen);
			return ret;
		}
		switch (m.kind) {
		case QMP_MSG_EVENT:
			q->events |= qmp__event_bit(m.name);
			qmp_msg__release(&m);
			continue;
		case QMP_MSG_RETURN:
		case QMP_MSG_ERROR:
			if (!m.has_id || m.id != id) {
				qmp_msg__release(&m);
				errmsg__set(err, errlen, "QEMU answered %s with another command's reply",
					cmd);
				return -EPROTO;
			}
			if (m.kind == QMP_MSG_ERROR) {
				errmsg__set(err, errlen, "QEMU refused %s: %s: %s", cmd,
					escape__str(cls, sizeof(cls), m.name),
					escape__str(desc, sizeof(desc), m.desc));
				qmp_msg__release(&m);
				return -EREMOTEIO;
			}
			if (ret_val)
				*ret_val = json_incref(m.value);
			qmp_msg__release(&m);
			return 0;
		default:
			qmp_msg__release(&m);
			errmsg__set(err, errlen, "QEMU sent a message that is not QMP");
			return -EPROTO;
		}
	}
	errmsg__set(err, errlen, "QEMU sent more than %u events without answering %s", QMP_MAX_SKIP,
		cmd);
	return -E2BIG;
}

int qmp__query_status(struct qmp *q, bool *running, char *status, size_t len, char *err,
		      size_t errlen)
{
	json_t *r, *run, *st;
	int ret;

	ret = qmp__execute(q, "query-status", &r, err, errlen);
	if (ret < 0)
		return ret;
	run = json_object_get(r, "running");
	st = json_object_get(r, "status");
	if (!json_is_object(r) || !json_is_boolean(run) || !json_is_string(st)) {
		json_decref(r);
		errmsg__set(err, errlen, "QEMU's query-status reply has no running and status");
		return -EPROTO;
	}
	*running = json_is_true(run);
	if (len)
		escape__str(status, len, json_string_value(st));
	json_decref(r);
	return 0;
}

int qmp__wait_event(struct qmp *q, int timeout_ms)
{
	struct qmp_msg m;
	unsigned int bit;
	int ret;

	ret = read_line(q, timeout_ms, &m);
	if (ret < 0)
		return ret;
	if (m.kind != QMP_MSG_EVENT) {
		qmp_msg__release(&m);
		return -EPROTO;
	}
	bit = qmp__event_bit(m.name);
	q->events |= bit;
	qmp_msg__release(&m);
	return (int)bit;
}

unsigned int qmp__events(const struct qmp *q)
{
	return q->events;
}

int qmp__fd(const struct qmp *q)
{
	return q->fd;
}

void qmp__close(struct qmp *q)
{
	if (!q)
		return;
	close(q->fd);
	free(q->buf);
	free(q);
}
