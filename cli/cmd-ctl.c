// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-ctl.c - `vbts ctl SOCKET VERB [KEY=VALUE]...`: one request to the control socket of a
 * `vbts run --control SOCKET`, its response printed (subscribe: every event until
 * interrupted). What the socket sends is escaped before it reaches the terminal.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "control.h"
#include "escape.h"

#define RESPONSE_LINE_MAX (4U << 20) /* bytes of one response line read at most */
#define REPLY_TIMEOUT_S 30

static const char usage[] =
	"usage: vbts ctl SOCKET VERB [KEY=VALUE]...\n"
	"       vbts ctl SOCKET --raw LINE\n"
	"\n"
	"Send one request to the control socket of `vbts run --control SOCKET` and print its\n"
	"response, one JSON object on one line (doc/control-protocol.md) in printable ASCII\n"
	"(other characters as \\uXXXX; a line that is not JSON is escaped byte by byte). VERB\n"
	"is one of status, start, stop, config, get, count, drain, clear, freeze, subscribe;\n"
	"each KEY=VALUE becomes a member of the request: a VALUE of digits an integer,\n"
	"tasks=A,B an array of names, any other a string. Examples:\n"
	"  vbts ctl /tmp/vm.sock status\n"
	"  vbts ctl /tmp/vm.sock get vcpu=0 seq=12\n"
	"  vbts ctl /tmp/vm.sock drain vcpu=0 cursor=100 max=50\n"
	"  vbts ctl /tmp/vm.sock config cpl=user\n"
	"  vbts ctl /tmp/vm.sock subscribe      (events until interrupted)\n"
	"--raw LINE sends LINE as it is.\n"
	"\n"
	"Exit status: 0 when the response is no error object, 2 on an error object, a socket that\n"
	"cannot be reached or a response that is not JSON.\n";

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The request line of VERB KEY=VALUE...; NULL with a message on bad arguments. */
static char *build_request(int argc, char **argv)
{
	json_t *req = json_pack("{s:i, s:s}", "v", CONTROL_PROTO_VERSION, "verb", argv[0]);
	char *line = NULL;

	if (!req) {
		fprintf(stderr, "vbts: ctl: the verb must be UTF-8 text\n");
		return NULL;
	}
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		json_t *val;

		if (!eq || eq == argv[i]) {
			fprintf(stderr, "vbts: ctl: '%s': expected KEY=VALUE; see 'vbts help ctl'\n",
				argv[i]);
			goto out;
		}
		*eq = '\0';
		if (all_digits(eq + 1)) {
			errno = 0;
			val = json_integer((json_int_t)strtoll(eq + 1, NULL, 10));
			if (errno) {
				fprintf(stderr, "vbts: ctl: %s: number too large\n", argv[i]);
				goto out;
			}
		} else if (!strcmp(argv[i], "tasks")) {
			char *save = NULL, *t;

			val = json_array();
			for (t = strtok_r(eq + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
				json_array_append_new(val, json_string(t));
		} else {
			val = json_string(eq + 1);
		}
		if (!val || json_object_set_new(req, argv[i], val)) {
			fprintf(stderr, "vbts: ctl: %s: not UTF-8 text\n", argv[i]);
			goto out;
		}
	}
	line = json_dumps(req, JSON_COMPACT);
out:
	json_decref(req);
	return line;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "vbts: ctl: socket path too long\n");
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "vbts: ctl: cannot connect to ");
		escape__fputs(stderr, path);
		fprintf(stderr, ": %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int send_all(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n) {
		w = send(fd, s, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Read one line (without its newline) into *@buf; 1, 0 at the end of the stream, -1 on an
 * error, a timeout or a line longer than RESPONSE_LINE_MAX.
 */
static int read_line(int fd, char **buf, size_t *cap, size_t *have, size_t *len)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = *have ? memchr(*buf, '\n', *have) : NULL;
		if (nl) {
			*len = (size_t)(nl - *buf);
			return 1;
		}
		if (*have >= RESPONSE_LINE_MAX) {
			fprintf(stderr, "vbts: ctl: a response line longer than %u bytes\n",
				RESPONSE_LINE_MAX);
			return -1;
		}
		if (*cap - *have < 4096) {
			char *p = realloc(*buf, *cap * 2);

			if (!p)
				return -1;
			*buf = p;
			*cap *= 2;
		}
		n = recv(fd, *buf + *have, *cap - *have, 0);
		if (n < 0 && errno == EINTR && !interrupted)
			continue;
		if (n < 0) {
			if (!interrupted)
				fprintf(stderr, "vbts: ctl: reading the response: %s\n",
					errno == EAGAIN ? "no response" : strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		*have += (size_t)n;
	}
}

/* Whether @s is printable ASCII, nothing a terminal could act on. */
static bool printable_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/*
 * Print one line safely; whether it is a JSON object without "error". A JSON line is printed
 * as JSON again, every character outside printable ASCII as \uXXXX (still JSON, for jq and
 * friends); anything else is escaped byte by byte (common/escape.h).
 */
static bool print_line(const char *line, size_t len)
{
	json_t *o = json_loadb(line, len, JSON_DECODE_ANY, NULL);
	char *out = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER |
				   JSON_ENCODE_ANY) : NULL;
	bool ok = json_is_object(o) && !json_object_get(o, "error");

	if (out && printable_ascii(out)) {
		fputs(out, stdout);
	} else {
		char *s = malloc(len + 1);

		if (s) {
			memcpy(s, line, len);
			s[len] = '\0';
			/* escape__fputs stops at a NUL: what follows one is shown escaped too */
			for (size_t off = 0; off <= len; off += strlen(s + off) + 1) {
				if (off)
					fputs("\\x00", stdout);
				escape__fputs(stdout, s + off);
			}
			free(s);
		}
	}
	putchar('\n');
	fflush(stdout);
	free(out);
	json_decref(o);
	return ok;
}

static int ctl(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	size_t cap = 65536, have = 0, len;
	bool subscribe, ok;
	char *req, *buf, *line;
	int fd, ret, status;

	if (argc < 3) {
		fprintf(stderr, "vbts: ctl: expected SOCKET and VERB; see 'vbts help ctl'\n");
		return 2;
	}
	if (!strcmp(argv[2], "--raw")) {
		if (argc != 4) {
			fprintf(stderr, "vbts: ctl: --raw takes one LINE; see 'vbts help ctl'\n");
			return 2;
		}
		json_t *o = json_loads(argv[3], 0, NULL);

		req = strdup(argv[3]);
		/* followed when the server would take it as a subscription */
		subscribe = json_is_object(o) &&
			    json_is_string(json_object_get(o, "verb")) &&
			    !strcmp(json_string_value(json_object_get(o, "verb")), "subscribe");
		json_decref(o);
	} else {
		req = build_request(argc - 2, argv + 2);
		subscribe = !strcmp(argv[2], "subscribe");
	}
	if (!req)
		return 2;
	line = malloc(strlen(req) + 2);
	if (!line) {
		free(req);
		return 2;
	}
	/* one write: the request and its newline */
	sprintf(line, "%s\n", req);
	free(req);
	req = line;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = connect_to(argv[1]);
	buf = malloc(cap);
	if (fd < 0 || !buf) {
		free(req);
		free(buf);
		if (fd >= 0)
			close(fd);
		return 2;
	}
	if (!subscribe) {
		struct timeval tv = { .tv_sec = REPLY_TIMEOUT_S };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	status = 2;
	if (send_all(fd, req, strlen(req)) < 0) {
		fprintf(stderr, "vbts: ctl: sending the request: %s\n", strerror(errno));
		goto out;
	}
	ret = read_line(fd, &buf, &cap, &have, &len);
	if (ret <= 0) {
		if (ret == 0)
			fprintf(stderr, "vbts: ctl: the socket closed without a response\n");
		goto out;
	}
	ok = print_line(buf, len);
	status = ok ? 0 : 2;
	if (!ok || !subscribe)
		goto out;
	/* Events until interrupted or until the VMM goes away. */
	for (;;) {
		memmove(buf, buf + len + 1, have - len - 1);
		have -= len + 1;
		ret = read_line(fd, &buf, &cap, &have, &len);
		if (ret <= 0)
			break;
		print_line(buf, len);
	}
	if (ret < 0 && !interrupted)
		status = 2;
out:
	close(fd);
	free(buf);
	free(req);
	return status;
}

const struct vbts_command cmd_ctl = {
	.name = "ctl",
	.summary = "send a request to the control socket of a running vbts run",
	.usage = usage,
	.fn = ctl,
};
