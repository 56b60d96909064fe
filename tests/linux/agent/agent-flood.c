// SPDX-License-Identifier: GPL-2.0
/*
 * agent-flood.c - a hostile writer on the agent channel: a guest process (root, static) that
 * writes random, oversized and forged lines to VBTS_AGENT_PORT through /dev/port, the path the
 * real agent takes in a nested guest, while the real agent runs. Deterministic for a seed.
 *
 *   agent-flood [-s SEED] [-n LINES]
 *
 * Prints what it sent, one count per kind, as the line
 *   agent-flood: lines N random R oversized O forged F invalid I elf E members M
 * where each kind is what the VMM must count: random and invalid lines as invalid, oversized
 * ones as too long, forged task/exec/exit lines as forged, forged upload lines as ELF messages
 * dropped, ill-typed members as members dropped (their lines are stored).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vbts/agent-proto.h>

enum kind { K_RANDOM, K_OVERSIZED, K_FORGED, K_INVALID, K_ELF, K_MEMBERS, NR_KINDS };

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int port = -1;

/* One byte per pwrite(): /dev/port writes consecutive bytes to consecutive ports. */
static void put(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (pwrite(port, s + i, 1, VBTS_AGENT_PORT) != 1) {
			perror("agent-flood: /dev/port");
			exit(1);
		}
}

static void line(const char *s)
{
	put(s, strlen(s));
	put("\n", 1);
}

/* Forged lines, each standing for what only the VMM or a verified upload may say. */
static const char *const forged[] = {
	"{\"event\":\"exec\",\"pid\":1,\"name\":\"agentdemo\",\"cr3\":\"0x1000\"}",
	"{\"event\":\"task\",\"pid\":2,\"name\":\"init\",\"cr3\":\"0x2000\"}",
	"{\"event\":\"exit\",\"pid\":3,\"code\":139}",
};
static const char *const invalid[] = {
	"{\"event\":\"agent-elf\",\"build_id\":\"00112233\",\"size\":1}",
	"{\"event\":42}",
	"[\"event\",\"agent-proc\"]",
	"{\"event\":\"agent-proc\",\"pid\":1,\"pid\":2}",
	"{\"event\":\"agent-proc\"",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	"\xff\xfe{\"event\":\"agent-hello\"}",
};
static const char *const elf[] = {
	"{\"event\":\"agent-elf-data\",\"off\":0,\"data\":\"!!!!\"}",
	"{\"event\":\"agent-elf-data\",\"off\":999999,\"data\":\"AAAA\"}",
	"{\"event\":\"agent-elf-end\"}",
	"{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"../../etc/passwd\",\"size\":10}",
	"{\"event\":\"agent-elf-begin\",\"v\":1,\"build_id\":\"0123456789abcdef\","
	"\"size\":4294967296000}",
};
static const char *const members[] = {
	"{\"event\":\"agent-noise\",\"v\":\"one\",\"pid\":\"1\",\"unknown\":true}",
	"{\"event\":\"agent-noise\",\"path\":[1,2,3],\"start\":{}}",
};

#define PICK(t) t[next() % (sizeof(t) / sizeof(t[0]))]

int main(int argc, char **argv)
{
	unsigned long count[NR_KINDS] = { 0 }, n = 200, dropped_members = 0;
	char buf[4 * VBTS_AGENT_LINE_MAX];
	int opt;

	while ((opt = getopt(argc, argv, "s:n:")) != -1) {
		if (opt == 's')
			rng = strtoull(optarg, NULL, 0) | 1;
		else if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	port = open("/dev/port", O_WRONLY);
	if (port < 0) {
		perror("agent-flood: /dev/port");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		enum kind k = next() % NR_KINDS;
		size_t len;

		switch (k) {
		case K_RANDOM:
			/* Bytes of any value but newline and CR; the first never starts an object. */
			len = 1 + next() % 200;
			for (size_t j = 0; j < len; j++) {
				do
					buf[j] = (char)next();
				while (buf[j] == '\n' || buf[j] == '\r' || (j == 0 && buf[j] == '{'));
			}
			put(buf, len);
			put("\n", 1);
			break;
		case K_OVERSIZED:
			len = VBTS_AGENT_LINE_MAX + 1 + next() % (3 * VBTS_AGENT_LINE_MAX - 1);
			memcpy(buf, "{\"event\":\"agent-proc\",\"exe\":\"", 29);
			for (size_t j = 29; j < len; j++)
				buf[j] = (char)('a' + next() % 26);
			put(buf, len);
			put("\n", 1);
			break;
		case K_FORGED:
			line(PICK(forged));
			break;
		case K_INVALID:
			line(PICK(invalid));
			break;
		case K_ELF:
			line(PICK(elf));
			break;
		case K_MEMBERS: {
			const char *m = PICK(members);

			dropped_members += m == members[0] ? 3 : 2;
			line(m);
			break;
		}
		default:
			break;
		}
		count[k]++;
	}
	close(port);
	printf("agent-flood: lines %lu random %lu oversized %lu forged %lu invalid %lu elf %lu "
	       "members %lu\n", n, count[K_RANDOM], count[K_OVERSIZED], count[K_FORGED],
	       count[K_INVALID], count[K_ELF], dropped_members);
	return 0;
}
