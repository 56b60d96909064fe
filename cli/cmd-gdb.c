// SPDX-License-Identifier: GPL-2.0
/*
 * cmd-gdb.c - `vbts gdb`: a gdb remote stub over a recorded trace directory, with its branches
 * as gdb's `record btrace` trace.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "escape.h"
#include "server.h"
#include "trace-target.h"

static const char gdb_usage[] =
	"usage: vbts gdb [OPTIONS] DIR (--stdio | --listen [ADDR:]PORT)\n"
	"\n"
	"Serve the trace directory DIR (written by `vbts run --trace DIR`) to gdb over its\n"
	"remote protocol, post mortem: a thread per guest thread the trace names (per vCPU\n"
	"otherwise), stopped where its last branch went, the guest's images as read-only\n"
	"memory, and the recorded branches as the thread's branch trace (gdb's record\n"
	"btrace: record instruction-history, record function-call-history, reverse-step,\n"
	"record goto). gdb starts recording by itself.\n"
	"\n"
	"options:\n"
	"  --stdio              talk to gdb on stdin and stdout: in gdb,\n"
	"                       target remote | vbts gdb DIR --stdio\n"
	"  --listen [ADDR:]PORT  accept one gdb on this TCP port (ADDR defaults to\n"
	"                       127.0.0.1): in gdb, target remote ADDR:PORT\n"
	"  --task NAME|PID      only the branches of this guest process (a name or pid of\n"
	"                       events.jsonl, or a pid or tgid of the trace's threads);\n"
	"                       threads that never ran it are left out\n"
	"  --vcpu N             only the branches of vCPU N\n"
	"  --symbols PATH       ELF files shown as memory at their link addresses, and for a\n"
	"                       Linux guest's tasks their programs where they were loaded\n"
	"                       (as for vbts decode); repeatable\n"
	"  -h, --help           this text\n"
	"\n"
	"Exit status: 0 when gdb detached or closed the connection, 1 when the connection\n"
	"broke (garbage, a packet too long, closed inside a packet), 2 bad arguments or a\n"
	"missing or invalid trace directory.\n";

struct gdb_opts {
	const char *dir;
	bool stdio;
	const char *listen;
	int vcpu;
	const char *task;
	const char **symbols;
	size_t nr_symbols;
};

static void print_warning(void *ctx, const char *line)
{
	fprintf(stderr, "vbts gdb: warning: %s\n", line);
}

static int parse_args(int argc, char **argv, struct gdb_opts *o)
{
	enum { OPT_STDIO = 256, OPT_LISTEN, OPT_VCPU, OPT_SYMBOLS, OPT_TASK };
	static const struct option longopts[] = {
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "vcpu", required_argument, NULL, OPT_VCPU },
		{ "symbols", required_argument, NULL, OPT_SYMBOLS },
		{ "task", required_argument, NULL, OPT_TASK },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->vcpu = -1;
	o->symbols = calloc((size_t)argc + 1, sizeof(*o->symbols));
	if (!o->symbols) {
		fprintf(stderr, "vbts gdb: out of memory\n");
		return -ENOMEM;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_STDIO:
			o->stdio = true;
			break;
		case OPT_LISTEN:
			o->listen = optarg;
			break;
		case OPT_VCPU:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || v < 0 || v > INT32_MAX) {
				fprintf(stderr, "vbts gdb: bad vCPU number '%s'\n", optarg);
				return -EINVAL;
			}
			o->vcpu = (int)v;
			break;
		case OPT_TASK:
			o->task = optarg;
			break;
		case OPT_SYMBOLS:
			o->symbols[o->nr_symbols++] = optarg;
			break;
		case 'h':
			fputs(gdb_usage, stdout);
			return 1;
		default:
			command__option_error("gdb", c, optopt, argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (o->stdio == !!o->listen) {
		fprintf(stderr, "vbts gdb: give one of --stdio and --listen\n");
		return -EINVAL;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vbts gdb: %s\nusage: vbts gdb [OPTIONS] DIR (--stdio | --listen "
				"[ADDR:]PORT)\n",
			optind >= argc ? "no trace directory given" : "more than one directory");
		return -EINVAL;
	}
	o->dir = argv[optind];
	return 0;
}

/* A listening socket for [ADDR:]PORT (IPv4; ADDR 127.0.0.1 when not given), or -1. */
static int listen_on(const char *spec)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const char *colon = strrchr(spec, ':'), *port = colon ? colon + 1 : spec;
	char addr[64] = "127.0.0.1", *end;
	int fd, one = 1;
	long p;

	if (colon && colon != spec) {
		if ((size_t)(colon - spec) >= sizeof(addr)) {
			fprintf(stderr, "vbts gdb: bad address in --listen '%s'\n", spec);
			return -1;
		}
		memcpy(addr, spec, (size_t)(colon - spec));
		addr[colon - spec] = '\0';
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || *end || !*port || p < 0 || p > 65535 ||
	    inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "vbts gdb: bad --listen '%s' ([ADDR:]PORT, ADDR an IPv4 "
				"address)\n", spec);
		return -1;
	}
	sa.sin_port = htons((uint16_t)p);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		fprintf(stderr, "vbts gdb: --listen %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int gdb_main(int argc, char **argv)
{
	struct trace_target_options topts = { .warn = print_warning };
	char err[1024];
	struct trace_target *tt;
	struct gdb_opts o;
	int ret, status = 0, lfd = -1, cfd = -1;

	ret = parse_args(argc, argv, &o);
	if (ret) {
		free(o.symbols);
		return ret > 0 ? 0 : 2;
	}
	topts.vcpu = o.vcpu;
	topts.task = o.task;
	topts.symbol_paths = o.symbols;
	topts.nr_symbol_paths = o.nr_symbols;
	tt = trace_target__open(o.dir, &topts, err, sizeof(err));
	if (!tt) {
		fprintf(stderr, "vbts gdb: %s\n", err);
		free(o.symbols);
		return 2;
	}
	/* A gdb that goes away is a closed connection, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (o.listen) {
		lfd = listen_on(o.listen);
		if (lfd < 0) {
			status = 2;
			goto out;
		}
		cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			fprintf(stderr, "vbts gdb: accept: %s\n", strerror(errno));
			status = 1;
			goto out;
		}
		ret = gdb_server__run(cfd, cfd, trace_target__ops(), tt, err, sizeof(err));
	} else {
		ret = gdb_server__run(STDIN_FILENO, STDOUT_FILENO, trace_target__ops(), tt, err,
				      sizeof(err));
	}
	if (ret) {
		fprintf(stderr, "vbts gdb: %s\n", err);
		status = 1;
	}
out:
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
	trace_target__close(tt);
	free(o.symbols);
	return status;
}

const struct vbts_command cmd_gdb = {
	.name = "gdb",
	.summary = "serve a trace directory to gdb, with its branches as record btrace",
	.usage = gdb_usage,
	.fn = gdb_main,
};
