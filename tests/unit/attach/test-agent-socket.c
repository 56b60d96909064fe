// SPDX-License-Identifier: GPL-2.0
/*
 * test-agent-socket.c - `vbts attach --agent`'s reader of the guest agent's virtio-serial
 * port, against a peer on a real Unix socket (a forked writer, as QEMU's chardev would be):
 * an agent's messages and an ELF upload stored; a hostile peer's random, oversized and forged
 * lines counted and dropped, each read bounded, a hang-up seen.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vbts/agent-base64.h>
#include <vbts/agent-proto.h>

#include "agent-socket.h"
#include "readelf-id.h"
#include "test-files.h"
#include "tests.h"

struct peer {
	char dir[64];
	char path[128];
	int listen_fd;
	pid_t pid;
	FILE *ev;
};

/* A listening socket, as QEMU's chardev with server=on. */
static void peer_init(struct peer *p)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	strcpy(p->dir, "/tmp/vbts-agent-socket.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(p->dir));
	snprintf(p->path, sizeof(p->path), "%s/agent.sock", p->dir);
	strcpy(sun.sun_path, p->path);
	p->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(p->listen_fd, 0);
	ck_assert_int_eq(bind(p->listen_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(p->listen_fd, 1), 0);
	p->ev = tmpfile();
	ck_assert_ptr_nonnull(p->ev);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len) {
		ssize_t n = write(fd, b, len);

		if (n <= 0)
			_exit(3);
		b += n;
		len -= (size_t)n;
	}
}

static void write_str(int fd, const char *s)
{
	write_all(fd, s, strlen(s));
}

/* The peer's script: the agent's lines and an upload of @elf, mixed with hostile lines. */
static void hostile_agent(int fd, const char *elf, const char *id)
{
	char line[2 * VBTS_AGENT_LINE_MAX], data[4 * VBTS_AGENT_ELF_CHUNK / 3 + 8];
	unsigned char chunk[VBTS_AGENT_ELF_CHUNK], junk[4096];
	int in = open(elf, O_RDONLY);
	struct stat st;
	uint64_t rng = 88172645463325252ULL;
	size_t off = 0;
	ssize_t n;

	if (in < 0 || fstat(in, &st) < 0)
		_exit(3);
	write_str(fd, "{\"event\":\"agent-hello\",\"v\":1,\"pid\":57}\n");
	/* Random bytes, no newline in them, then one: an invalid line. */
	for (size_t i = 0; i < sizeof(junk); i++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		junk[i] = (unsigned char)rng == '\n' ? 'x' : (unsigned char)rng;
	}
	junk[0] = 'x';
	write_all(fd, junk, 300);
	write_str(fd, "\n");
	/* An oversized line: a megabyte before its newline. */
	for (int i = 0; i < 256; i++)
		write_all(fd, junk, sizeof(junk));
	write_str(fd, "\n");
	/* Forged: what only the host's introspection or a verified upload may say. */
	write_str(fd, "{\"event\":\"exec\",\"pid\":1,\"name\":\"init\",\"cr3\":\"0x1000\"}\n");
	write_str(fd, "{\"event\":\"task\",\"pid\":2,\"name\":\"x\",\"cr3\":\"0x2000\"}\n");
	write_str(fd, "{\"event\":\"agent-elf\",\"build_id\":\"0011\",\"size\":1}\n");
	n = snprintf(line, sizeof(line), "{\"event\":\"agent-proc\",\"v\":1,\"pid\":60,\"ppid\":1,"
		     "\"comm\":\"demo\",\"exe\":\"/bin/demo\"}\n");
	write_all(fd, line, (size_t)n);
	n = snprintf(line, sizeof(line), "{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":"
		     "\"%s\",\"size\":%lld}\n", id, (long long)st.st_size);
	write_all(fd, line, (size_t)n);
	while ((n = read(in, chunk, sizeof(chunk))) > 0) {
		agent_base64__encode(chunk, (size_t)n, data);
		n = snprintf(line, sizeof(line), "{\"event\":\"agent-elf-data\",\"off\":%zu,"
			     "\"data\":\"%s\"}\n", off, data);
		write_all(fd, line, (size_t)n);
		off += sizeof(chunk);
	}
	write_str(fd, "{\"event\":\"agent-elf-end\"}\n");
	/* A partial last line before the hang-up. */
	write_str(fd, "{\"event\":\"agent-bye\"");
	close(in);
}

static void peer_run(struct peer *p, const char *elf, const char *id)
{
	p->pid = fork();
	ck_assert_int_ge(p->pid, 0);
	if (!p->pid) {
		int fd = accept(p->listen_fd, NULL, NULL);

		if (fd < 0)
			_exit(3);
		hostile_agent(fd, elf, id);
		close(fd);
		_exit(0);
	}
}

static void peer_fini(struct peer *p)
{
	int status;

	ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p->listen_fd);
	fclose(p->ev);
	ck_assert_int_eq(test__remove_tree(p->dir), 0);
}

static int events(FILE *ev, const char *name)
{
	char line[1024];
	int n = 0;

	fflush(ev);
	rewind(ev);
	while (fgets(line, sizeof(line), ev)) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_ptr_nonnull(o);
		n += !strcmp(json_string_value(json_object_get(o, "event")), name);
		json_decref(o);
	}
	return n;
}

START_TEST(test_agent_socket_hostile_peer)
{
	char id[2 * VBTS_AGENT_BUILD_ID_MAX + 1], err[256], path[256];
	struct agent_socket *s;
	struct agent_stats st;
	struct peer p;
	long n, reads = 0;

	readelf_id__get(VBTS_EXE, id, sizeof(id));
	peer_init(&p);
	peer_run(&p, VBTS_EXE, id);
	s = agent_socket__open(p.path, p.ev, 0, p.dir, err, sizeof(err));
	ck_assert_msg(s, "%s", err);
	for (;;) {
		struct pollfd pfd = { .fd = agent_socket__fd(s), .events = POLLIN };

		ck_assert_msg(poll(&pfd, 1, 10000) == 1, "no data after %ld reads", reads);
		n = agent_socket__read(s);
		if (n == -EPIPE)
			break;
		ck_assert_int_ge(n, 0);
		ck_assert_int_le(n, AGENT_SOCKET_READ_MAX);
		reads++;
	}
	ck_assert_int_eq(agent_socket__fd(s), -1);
	ck_assert_int_eq(agent_socket__read(s), -EPIPE);
	/* The megabyte line alone needs many bounded reads. */
	ck_assert_int_ge(reads, (1 << 20) / AGENT_SOCKET_READ_MAX);
	agent_socket__stats(s, &st);
	ck_assert_uint_eq(st.too_long, 1);
	ck_assert_uint_eq(st.forged, 2);
	ck_assert_uint_eq(st.invalid, 2); /* the random line and the forged agent-elf */
	ck_assert_uint_eq(st.elf_dropped, 0);
	ck_assert_uint_eq(st.elf.stored, 1);
	agent_socket__close(s); /* the partial last line: invalid, not stored */
	ck_assert_int_eq(events(p.ev, "agent-hello"), 1);
	ck_assert_int_eq(events(p.ev, "agent-proc"), 1);
	ck_assert_int_eq(events(p.ev, "agent-elf"), 1);
	ck_assert_int_eq(events(p.ev, "exec") + events(p.ev, "task"), 0);
	ck_assert_int_eq(events(p.ev, "agent-bye"), 0);
	snprintf(path, sizeof(path), "cmp -s %s %s/debuginfod/%s/executable", VBTS_EXE, p.dir, id);
	ck_assert_int_eq(system(path), 0);
	peer_fini(&p);
}
END_TEST

START_TEST(test_agent_socket_open_errors)
{
	char err[256], path[200];
	struct agent_socket *s;
	FILE *ev = tmpfile();
	int fd;

	s = agent_socket__open("/nonexistent/vbts/agent.sock", ev, 0, "/tmp", err, sizeof(err));
	ck_assert_ptr_null(s);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "--agent /nonexistent/vbts/agent.sock: "));
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	s = agent_socket__open(path, ev, 0, "/tmp", err, sizeof(err));
	ck_assert_ptr_null(s);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	/* Not a socket. */
	strcpy(path, "/tmp/vbts-agent-socket-file.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	s = agent_socket__open(path, ev, 0, "/tmp", err, sizeof(err));
	ck_assert_ptr_null(s);
	ck_assert_int_eq(errno, ECONNREFUSED);
	close(fd);
	unlink(path);
	fclose(ev);
}
END_TEST

Suite *agent_socket_suite(void)
{
	Suite *s = suite_create("agent-socket");
	TCase *tc = tcase_create("socket");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_agent_socket_hostile_peer);
	tcase_add_test(tc, test_agent_socket_open_errors);
	suite_add_tcase(s, tc);
	return s;
}
