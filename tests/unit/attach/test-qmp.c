// SPDX-License-Identifier: GPL-2.0
/*
 * test-qmp.c - the QMP client: message classification (table), and whole exchanges with a
 * peer that sends a scripted, often hostile, stream (a forked writer on a socketpair).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qmp.h"
#include "tests.h"

#define GREETING "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}, " \
		 "\"package\": \"\"}, \"capabilities\": [\"oob\"]}}\n"
#define CAPS_OK "{\"return\": {}, \"id\": 1}\n"

static const struct {
	const char *line;
	enum qmp_msg_kind kind;
	const char *name;
	int64_t id; /* -1: none */
} parse_cases[] = {
	{ "{\"QMP\": {\"version\": {}, \"capabilities\": []}}", QMP_MSG_GREETING, NULL, -1 },
	{ "{\"return\": {}, \"id\": 1}", QMP_MSG_RETURN, NULL, 1 },
	{ "{\"return\": {\"running\": false, \"status\": \"prelaunch\"}, \"id\": 7}",
	  QMP_MSG_RETURN, NULL, 7 },
	{ "{\"return\": {}}", QMP_MSG_RETURN, NULL, -1 },
	{ "{\"return\": {}, \"id\": \"x\"}", QMP_MSG_RETURN, NULL, -1 },
	{ "{\"error\": {\"class\": \"GenericError\", \"desc\": \"no\"}, \"id\": 2}", QMP_MSG_ERROR,
	  "GenericError", 2 },
	{ "{\"error\": {\"class\": \"GenericError\"}, \"id\": 2}", QMP_MSG_ERROR, "GenericError", 2 },
	{ "{\"event\": \"STOP\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}",
	  QMP_MSG_EVENT, "STOP", -1 },
	{ "{\"timestamp\": {}, \"event\": \"GUEST_PANICKED\", \"data\": {\"action\": \"pause\"}}",
	  QMP_MSG_EVENT, "GUEST_PANICKED", -1 },
	/* hostile or malformed */
	{ "", QMP_MSG_BAD, NULL, -1 },
	{ "null", QMP_MSG_BAD, NULL, -1 },
	{ "[]", QMP_MSG_BAD, NULL, -1 },
	{ "{}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"return\": {}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"return\": {}, \"return\": {}}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"return\": {}, \"event\": \"STOP\"}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"QMP\": 1}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"QMP\": {}}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"error\": \"x\"}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"error\": {\"class\": 5}}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"error\": {\"class\": \"A\", \"desc\": []}}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"event\": 5}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"event\": \"STOP\"} trailing", QMP_MSG_BAD, NULL, -1 },
	{ "{\"event\": \"ST\\u0000OP\"}", QMP_MSG_BAD, NULL, -1 },
	{ "{\"event\": \"\xff\xfe\"}", QMP_MSG_BAD, NULL, -1 },
};

START_TEST(test_parse)
{
	const char *l = parse_cases[_i].line;
	struct qmp_msg m;

	ck_assert_msg(qmp_msg__parse(l, strlen(l), &m) == parse_cases[_i].kind, "%s", l);
	if (parse_cases[_i].name)
		ck_assert_str_eq(m.name, parse_cases[_i].name);
	ck_assert_int_eq(m.has_id, parse_cases[_i].id >= 0);
	if (m.has_id)
		ck_assert_int_eq(m.id, parse_cases[_i].id);
	qmp_msg__release(&m);
}
END_TEST

/* Nesting beyond QMP_MAX_DEPTH is refused before jansson parses it (also inside strings
 * brackets do not count). */
START_TEST(test_parse_depth)
{
	char buf[4096];
	struct qmp_msg m;
	size_t n = 0;

	n += (size_t)sprintf(buf, "{\"return\": ");
	for (unsigned int i = 0; i < QMP_MAX_DEPTH; i++)
		buf[n++] = '[';
	for (unsigned int i = 0; i < QMP_MAX_DEPTH; i++)
		buf[n++] = ']';
	buf[n++] = '}';
	ck_assert_int_eq(qmp_msg__parse(buf, n, &m), QMP_MSG_BAD);
	qmp_msg__release(&m);
	n = (size_t)sprintf(buf, "{\"return\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\", \"id\": 3}");
	ck_assert_int_eq(qmp_msg__parse(buf, n, &m), QMP_MSG_RETURN);
	qmp_msg__release(&m);
	n = (size_t)sprintf(buf, "{\"return\": [[[]]], \"id\": 3}");
	ck_assert_int_eq(qmp_msg__parse(buf, n, &m), QMP_MSG_RETURN);
	qmp_msg__release(&m);
}
END_TEST

START_TEST(test_event_bits)
{
	ck_assert_uint_eq(qmp__event_bit("SHUTDOWN"), QMP_EV_SHUTDOWN);
	ck_assert_uint_eq(qmp__event_bit("GUEST_PANICKED"), QMP_EV_GUEST_PANICKED);
	ck_assert_uint_eq(qmp__event_bit("STOP"), QMP_EV_STOP);
	ck_assert_uint_eq(qmp__event_bit("shutdown"), 0);
	ck_assert_uint_eq(qmp__event_bit("NIC_RX_FILTER_CHANGED"), 0);
}
END_TEST

/*
 * A peer: writes @script (@len bytes; then @repeat copies of @rep), then closes its end when
 * @close_after, else reads until the client closes. Returns the client.
 */
static struct qmp *peer(const char *script, size_t len, const char *rep, unsigned int repeat,
			const char *tail, bool close_after, pid_t *child)
{
	int sv[2];
	struct qmp *q;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	*child = fork();
	ck_assert_int_ge(*child, 0);
	if (*child == 0) {
		char buf[4096];

		close(sv[0]);
		signal(SIGPIPE, SIG_IGN);
		if (write(sv[1], script, len) != (ssize_t)len)
			_exit(1);
		for (unsigned int i = 0; i < repeat; i++)
			if (write(sv[1], rep, strlen(rep)) < 0)
				_exit(0);
		if (tail && write(sv[1], tail, strlen(tail)) < 0)
			_exit(0);
		if (!close_after)
			while (read(sv[1], buf, sizeof(buf)) > 0)
				;
		_exit(0);
	}
	close(sv[1]);
	q = qmp__open_fd(sv[0], 2000);
	ck_assert_ptr_nonnull(q);
	return q;
}

static void peer_end(struct qmp *q, pid_t child)
{
	int status;

	qmp__close(q);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
}

static struct qmp *script(const char *s, bool close_after, pid_t *child)
{
	return peer(s, strlen(s), NULL, 0, NULL, close_after, child);
}

START_TEST(test_session)
{
	char err[256] = "", status[32];
	bool running = true;
	pid_t child;
	struct qmp *q = script(GREETING CAPS_OK
			       "{\"event\": \"RESET\", \"timestamp\": {}}\n"
			       "{\"return\": {\"running\": false, \"singlestep\": false, "
			       "\"status\": \"prelaunch\"}, \"id\": 2}\n"
			       "{\"return\": {}, \"id\": 3}\n"
			       "{\"timestamp\": {}, \"event\": \"RESUME\"}\n"
			       "{\"timestamp\": {}, \"event\": \"GUEST_PANICKED\", \"data\": {}}\n",
			       false, &child);

	ck_assert_int_eq(qmp__handshake(q, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp__query_status(q, &running, status, sizeof(status), err,
					   sizeof(err)), 0);
	ck_assert(!running);
	ck_assert_str_eq(status, "prelaunch");
	ck_assert_uint_eq(qmp__events(q), QMP_EV_RESET);
	ck_assert_int_eq(qmp__execute(q, "cont", NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp__wait_event(q, 1000), (int)QMP_EV_RESUME);
	ck_assert_int_eq(qmp__wait_event(q, 1000), (int)QMP_EV_GUEST_PANICKED);
	ck_assert_int_eq(qmp__wait_event(q, 0), -ETIMEDOUT);
	ck_assert_uint_eq(qmp__events(q), QMP_EV_RESET | QMP_EV_RESUME | QMP_EV_GUEST_PANICKED);
	peer_end(q, child);
}
END_TEST

/* Hostile streams: the return value of the handshake (then cont), and words of the error. */
static const struct {
	const char *stream;
	bool close_after;
	int handshake;
	int cont;
	const char *words;
} hostile[] = {
	{ "", true, -EPIPE, 0, "closed" },
	{ "{\"QMP\": {\"version\": {}, \"capa", true, -EPIPE, 0, "closed" },
	{ "not json\n", false, -EPROTO, 0, "greeting" },
	{ "{\"return\": {}, \"id\": 1}\n", false, -EPROTO, 0, "greeting" },
	{ GREETING "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"x\"}, \"id\": 1}\n",
	  false, -EPROTO, 0, "refused qmp_capabilities" },
	{ GREETING "{\"return\": {}, \"id\": 99}\n", false, -EPROTO, 0, "another command" },
	{ GREETING "{\"return\": {}}\n", false, -EPROTO, 0, "another command" },
	{ GREETING "[1, 2]\n", false, -EPROTO, 0, "not QMP" },
	{ GREETING, false, -ETIMEDOUT, 0, "in time" },
	{ GREETING CAPS_OK "{\"error\": {\"class\": \"Gen\\u001b[2J\", \"desc\": "
	  "\"bad\\u001b]0;title\\u0007\\n\"}, \"id\": 2}\n", false, 0, -EREMOTEIO, "refused cont" },
	{ GREETING CAPS_OK "{\"return\": {}, \"id\": 3}\n", false, 0, -EPROTO, "another command" },
};

START_TEST(test_hostile)
{
	char err[256] = "";
	pid_t child;
	struct qmp *q = script(hostile[_i].stream, hostile[_i].close_after, &child);
	int ret;

	ret = qmp__handshake(q, err, sizeof(err));
	ck_assert_msg(ret == hostile[_i].handshake, "%d: %s", ret, err);
	if (!ret) {
		ret = qmp__execute(q, "cont", NULL, err, sizeof(err));
		ck_assert_msg(ret == hostile[_i].cont, "%d: %s", ret, err);
	}
	ck_assert_msg(strstr(err, hostile[_i].words), "%s", err);
	for (const char *p = err; *p; p++)
		ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f, "control byte in %s", err);
	peer_end(q, child);
}
END_TEST

/* A line longer than QMP_LINE_MAX is refused, not buffered without end. */
START_TEST(test_long_line)
{
	size_t len = QMP_LINE_MAX + 100;
	char *s = malloc(len), err[256] = "";
	struct qmp *q;
	pid_t child;

	memset(s, ' ', len);
	memcpy(s, "{\"QMP\": ", 8);
	q = peer(s, len, NULL, 0, NULL, false, &child);
	ck_assert_int_eq(qmp__handshake(q, err, sizeof(err)), -EMSGSIZE);
	ck_assert_msg(strstr(err, "longer than"), "%s", err);
	peer_end(q, child);
	free(s);
}
END_TEST

/* Events without end while a reply is awaited: bounded by QMP_MAX_SKIP. */
START_TEST(test_event_flood)
{
	char err[256] = "";
	struct qmp *q;
	pid_t child;

	q = peer(GREETING CAPS_OK, strlen(GREETING CAPS_OK),
		 "{\"event\": \"STOP\", \"timestamp\": {}}\n", QMP_MAX_SKIP + 10,
		 "{\"return\": {}, \"id\": 2}\n", false, &child);
	ck_assert_int_eq(qmp__handshake(q, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp__execute(q, "cont", NULL, err, sizeof(err)), -E2BIG);
	ck_assert_msg(strstr(err, "events without answering cont"), "%s", err);
	peer_end(q, child);
	/* just below the bound, the reply is found */
	q = peer(GREETING CAPS_OK, strlen(GREETING CAPS_OK),
		 "{\"event\": \"STOP\", \"timestamp\": {}}\n", QMP_MAX_SKIP,
		 "{\"return\": {}, \"id\": 2}\n", false, &child);
	ck_assert_int_eq(qmp__handshake(q, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp__execute(q, "cont", NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(qmp__events(q), QMP_EV_STOP);
	peer_end(q, child);
}
END_TEST

START_TEST(test_status_malformed)
{
	char err[256] = "", status[8];
	bool running;
	pid_t child;
	struct qmp *q = script(GREETING CAPS_OK
			       "{\"return\": {\"running\": \"yes\", \"status\": \"x\"}, \"id\": 2}\n"
			       "{\"return\": [], \"id\": 3}\n"
			       "{\"return\": {\"running\": true, \"status\": \"a-very-long-"
			       "status\\u001b\"}, \"id\": 4}\n",
			       false, &child);

	ck_assert_int_eq(qmp__handshake(q, err, sizeof(err)), 0);
	ck_assert_int_eq(qmp__query_status(q, &running, status, sizeof(status), err,
					   sizeof(err)), -EPROTO);
	ck_assert_int_eq(qmp__query_status(q, &running, status, sizeof(status), err,
					   sizeof(err)), -EPROTO);
	ck_assert_int_eq(qmp__query_status(q, &running, status, sizeof(status), err,
					   sizeof(err)), 0);
	ck_assert(running);
	ck_assert_uint_lt(strlen(status), sizeof(status));
	ck_assert_ptr_null(strchr(status, '\033'));
	peer_end(q, child);
}
END_TEST

START_TEST(test_connect_errors)
{
	char err[256] = "", path[200];

	ck_assert_ptr_null(qmp__connect("/nonexistent/qmp.sock", 100, err, sizeof(err)));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_msg(strstr(err, "cannot connect"), "%s", err);
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	ck_assert_ptr_null(qmp__connect(path, 100, err, sizeof(err)));
	ck_assert_int_eq(errno, ENAMETOOLONG);
}
END_TEST

Suite *qmp_suite(void)
{
	Suite *s = suite_create("qmp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_parse, 0, sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, test_parse_depth);
	tcase_add_test(tc, test_event_bits);
	tcase_add_test(tc, test_session);
	tcase_add_loop_test(tc, test_hostile, 0, sizeof(hostile) / sizeof(hostile[0]));
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_event_flood);
	tcase_add_test(tc, test_status_malformed);
	tcase_add_test(tc, test_connect_errors);
	suite_add_tcase(s, tc);
	return s;
}
