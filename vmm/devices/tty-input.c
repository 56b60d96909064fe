// SPDX-License-Identifier: GPL-2.0
/*
 * tty-input.c - terminal → receiver, in a thread of its own.
 *
 * Locking: none shared; the thread owns @pending, the stop request is the pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#include "devices/tty-input.h"

#define RETRY_MS 10 /* when the receiver is full */

struct tty_input {
	int fd;
	int stop[2]; /* a byte on stop[1] ends the thread */
	struct termios saved;
	tty_input_fn fn;
	void *opaque;
	pthread_t thread;
	uint8_t pending[64];
	size_t npending;
};

static void *input_thread(void *arg)
{
	struct tty_input *t = arg;

	pthread_setname_np(pthread_self(), "console");
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = t->stop[0], .events = POLLIN },
			{ .fd = t->fd, .events = POLLIN },
		};
		int n = poll(p, t->npending ? 1 : 2, t->npending ? RETRY_MS : -1);
		ssize_t got;

		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (!t->npending && (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)))
			break;
		if (!t->npending && (p[1].revents & POLLIN)) {
			got = read(t->fd, t->pending, sizeof(t->pending));
			if (got <= 0)
				break;
			t->npending = got;
		}
		if (t->npending) {
			size_t took = t->fn(t->opaque, t->pending, t->npending);

			for (size_t i = took; i < t->npending; i++)
				t->pending[i - took] = t->pending[i];
			t->npending -= took;
		}
	}
	return NULL;
}

struct tty_input *tty_input__start(int fd, tty_input_fn fn, void *opaque)
{
	struct tty_input *t;
	struct termios raw;
	int ret;

	if (!isatty(fd)) {
		errno = ENOTTY;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->fd = fd;
	t->fn = fn;
	t->opaque = opaque;
	if (tcgetattr(fd, &t->saved) < 0 || pipe2(t->stop, O_CLOEXEC) < 0)
		goto err_free;
	raw = t->saved;
	/* Keystrokes go to the guest one by one, unechoed; CR stays CR as on a serial line. */
	raw.c_lflag &= ~(ICANON | ECHO | ECHONL | IEXTEN);
	raw.c_iflag &= ~(ICRNL | INLCR | IGNCR | IXON);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(fd, TCSANOW, &raw);
	ret = pthread_create(&t->thread, NULL, input_thread, t);
	if (ret) {
		tcsetattr(fd, TCSANOW, &t->saved);
		close(t->stop[0]);
		close(t->stop[1]);
		errno = ret;
		goto err_free;
	}
	return t;

err_free:
	free(t);
	return NULL;
}

void tty_input__stop(struct tty_input *t)
{
	if (!t)
		return;
	while (write(t->stop[1], "", 1) < 0 && errno == EINTR)
		;
	pthread_join(t->thread, NULL);
	tcsetattr(t->fd, TCSANOW, &t->saved);
	close(t->stop[0]);
	close(t->stop[1]);
	free(t);
}
