// SPDX-License-Identifier: GPL-2.0
/*
 * agent-socket.c - `vbts attach --agent SOCKET`: the guest agent's virtio-serial port, read
 * from QEMU's chardev socket into the trace directory through the VMM's agent parser.
 *
 * Locking: none; one thread (the attach main loop).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <vbts/agent-proto.h>

#include "agent-socket.h"
#include "errmsg.h"
#include "escape.h"

struct agent_socket {
	int fd;
	struct agent *agent;
};

struct agent_socket *agent_socket__open(const char *path, FILE *events, uint64_t start_ns,
					const char *trace_dir, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct agent_socket *s;
	char q[160];
	int ret;

	escape__str(q, sizeof(q), path);
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errmsg__set(err, errlen, "--agent %s: longer than a socket path may be", q);
		errno = ENAMETOOLONG;
		return NULL;
	}
	strcpy(sun.sun_path, path);
	s = calloc(1, sizeof(*s));
	if (!s) {
		errmsg__set(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = errno;
		errmsg__set(err, errlen, "--agent %s: %s", q, strerror(ret));
		goto err_close;
	}
	if (fcntl(s->fd, F_SETFL, O_NONBLOCK) < 0) {
		ret = errno;
		errmsg__set(err, errlen, "--agent %s: %s", q, strerror(ret));
		goto err_close;
	}
	ret = ENOMEM;
	s->agent = agent__create(1, events, start_ns, VBTS_AGENT_EVENTS_MAX);
	if (!s->agent || agent__set_store(s->agent, trace_dir) < 0) {
		errmsg__set(err, errlen, "out of memory");
		goto err_close;
	}
	/* The agent never sends task, exec or exit: such lines are forged. */
	agent__set_introspected(s->agent, true);
	return s;

err_close:
	agent__destroy(s->agent);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	errno = ret;
	return NULL;
}

int agent_socket__fd(const struct agent_socket *s)
{
	return s->fd;
}

long agent_socket__read(struct agent_socket *s)
{
	unsigned char buf[4096];
	long total = 0;
	ssize_t n;

	if (s->fd < 0)
		return -EPIPE;
	while (total < (long)AGENT_SOCKET_READ_MAX) {
		size_t want = AGENT_SOCKET_READ_MAX - (size_t)total;

		n = read(s->fd, buf, want < sizeof(buf) ? want : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			n = -errno;
			close(s->fd);
			s->fd = -1;
			return n == -ECONNRESET ? -EPIPE : n;
		}
		if (n == 0) {
			close(s->fd);
			s->fd = -1;
			return -EPIPE;
		}
		for (ssize_t i = 0; i < n; i++)
			agent__feed(s->agent, 0, buf[i]);
		total += n;
	}
	return total;
}

void agent_socket__stats(struct agent_socket *s, struct agent_stats *stats)
{
	agent__stats(s->agent, stats);
}

void agent_socket__close(struct agent_socket *s)
{
	if (!s)
		return;
	agent__destroy(s->agent);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}
