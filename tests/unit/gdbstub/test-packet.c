// SPDX-License-Identifier: GPL-2.0
/*
 * test-packet.c - the gdb stub: the packet parser on a table of streams (good packets, bad
 * checksums, escapes, run lengths, overlong, garbage), the encoder, the btrace documents,
 * and the server over a fake target: replies byte for byte, chunked qXfer reads, and the
 * ways a hostile connection ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "btrace-xml.h"
#include "check-main.h"
#include "gdbstub-test.h"
#include "packet.h"
#include "server.h"

/*
 * A stream fed byte by byte: the events it must give, in order (GDB_PKT_MORE left out). A
 * checksum written "@@" is replaced with the right one for the bytes since the last '$'.
 */
static const struct {
	const char *in;
	size_t len;                     /* 0: strlen(in) */
	enum gdb_packet_event ev[4];
	size_t nr_ev;
	const char *data;               /* the payload of the last GDB_PKT_READY */
	size_t data_len;                /* 0: strlen(data) */
} cases[] = {
	{ "$OK#9a", 0, { GDB_PKT_READY }, 1, "OK", 0 },
	{ "$#00", 0, { GDB_PKT_READY }, 1, "", 0 },
	{ "$OK#9A", 0, { GDB_PKT_READY }, 1, "OK", 0 },
	{ "$qSupported:multiprocess+#@@", 0, { GDB_PKT_READY }, 1, "qSupported:multiprocess+", 0 },
	{ "+$g#@@-", 0, { GDB_PKT_ACK, GDB_PKT_READY, GDB_PKT_NAK }, 3, "g", 0 },
	{ "\x03", 0, { GDB_PKT_INTERRUPT }, 1, NULL, 0 },
	/* Checksums: wrong, not hex, then a good packet after a bad one. */
	{ "$OK#9b", 0, { GDB_PKT_BAD_SUM }, 1, NULL, 0 },
	{ "$OK#zz", 0, { GDB_PKT_BAD_SUM }, 1, NULL, 0 },
	{ "$OK#00$OK#@@", 0, { GDB_PKT_BAD_SUM, GDB_PKT_READY }, 2, "OK", 0 },
	/* Escapes: }] is ']' ^ 0x20 = '}', }\x03 is '#', }\x04 is '$', }\x0a is '*'. */
	{ "$a}]b#@@", 0, { GDB_PKT_READY }, 1, "a}b", 0 },
	{ "$}\x03}\x04}\x0a#@@", 0, { GDB_PKT_READY }, 1, "#$*", 0 },
	{ "$X} #@@", 0, { GDB_PKT_READY }, 1, "X\0", 2 },
	/* Run lengths: '0* ' is '0' and 3 more; the count byte is in the checksum. */
	{ "$0* #@@", 0, { GDB_PKT_READY }, 1, "0000", 0 },
	{ "$ab*\"#@@", 0, { GDB_PKT_READY }, 1, "abbbbbb", 0 },
	{ "$x*~#@@", 0, { GDB_PKT_READY }, 1, NULL, 0 },
	/* A run with nothing before it, a count below 3, an escape or a run cut by '#'. */
	{ "$* #@@", 0, { GDB_PKT_BAD }, 1, NULL, 0 },
	{ "$a*\x1f#@@", 0, { GDB_PKT_BAD }, 1, NULL, 0 },
	{ "$a}#@@", 0, { GDB_PKT_BAD }, 1, NULL, 0 },
	{ "$a*#@@", 0, { GDB_PKT_BAD }, 1, NULL, 0 },
	/* Garbage between packets; a packet cut by the start of another. */
	{ "x", 0, { GDB_PKT_BAD }, 1, NULL, 0 },
	{ "$ab$OK#@@", 0, { GDB_PKT_BAD, GDB_PKT_READY }, 2, "OK", 0 },
};

/* @in with each "#@@" made the right checksum of the bytes since the last '$', into @out. */
static void fix_sums(const char *in, size_t len, char *out)
{
	uint8_t sum = 0;

	memcpy(out, in, len);
	for (size_t i = 0; i < len; i++) {
		if (out[i] == '$') {
			sum = 0;
		} else if (out[i] == '#' && i + 2 < len && out[i + 1] == '@' && out[i + 2] == '@') {
			char hex[3];

			snprintf(hex, sizeof(hex), "%02x", sum);
			memcpy(out + i + 1, hex, 2);
			i += 2;
		} else {
			sum += (uint8_t)out[i];
		}
	}
}

/* Feeds @in; the events other than GDB_PKT_MORE into @ev (at most @max). */
static size_t feed(struct gdb_packet_parser *p, const char *in, size_t len,
		   enum gdb_packet_event *ev, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		enum gdb_packet_event e = gdb_packet_parser__feed(p, (uint8_t)in[i]);

		if (e != GDB_PKT_MORE && n < max)
			ev[n++] = e;
	}
	return n;
}

START_TEST(test_parse_table)
{
	struct gdb_packet_parser p;
	enum gdb_packet_event ev[8];
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].in), n;
	char in[64];

	ck_assert_uint_lt(len, sizeof(in));
	fix_sums(cases[_i].in, len + 1, in);
	gdb_packet_parser__init(&p);
	n = feed(&p, in, len, ev, 8);
	ck_assert_msg(n == cases[_i].nr_ev, "case %d: %zu events, want %zu", _i, n,
		      cases[_i].nr_ev);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(ev[i] == cases[_i].ev[i], "case %d: event %zu is %d, want %d", _i,
			      i, ev[i], cases[_i].ev[i]);
	if (cases[_i].data) {
		size_t dl = cases[_i].data_len ? cases[_i].data_len : strlen(cases[_i].data);

		ck_assert_uint_eq(p.len, dl);
		ck_assert_mem_eq(p.data, cases[_i].data, dl);
	}
}
END_TEST

/* The longest run: '~' is 126 - 29 = 97 more bytes. */
START_TEST(test_parse_run_max)
{
	struct gdb_packet_parser p;
	enum gdb_packet_event ev[2];
	char in[8];

	fix_sums("$x*~#@@", 8, in);
	gdb_packet_parser__init(&p);
	ck_assert_uint_eq(feed(&p, in, 7, ev, 2), 1);
	ck_assert_int_eq(ev[0], GDB_PKT_READY);
	ck_assert_uint_eq(p.len, 98);
	for (size_t i = 0; i < p.len; i++)
		ck_assert_int_eq(p.data[i], 'x');
}
END_TEST

/* GDB_PACKET_MAX bytes pass; one more is too long, by plain bytes or by a run. */
START_TEST(test_parse_overlong)
{
	size_t n = GDB_PACKET_MAX + 1;
	char *in = malloc(n + 8);
	struct gdb_packet_parser p;
	enum gdb_packet_event ev[4];
	uint8_t sum = 0;

	ck_assert_ptr_nonnull(in);
	in[0] = '$';
	memset(in + 1, 'a', n);
	for (size_t i = 0; i < n - 1; i++)
		sum += 'a';
	snprintf(in + n, 8, "#%02x", sum);
	gdb_packet_parser__init(&p);
	ck_assert_uint_eq(feed(&p, in, n + 3, ev, 4), 1);
	ck_assert_int_eq(ev[0], GDB_PKT_READY);
	ck_assert_uint_eq(p.len, GDB_PACKET_MAX);

	memset(in + 1, 'a', n);
	gdb_packet_parser__init(&p);
	ck_assert_uint_eq(feed(&p, in, n + 1, ev, 4), 1);
	ck_assert_int_eq(ev[0], GDB_PKT_TOO_LONG);

	/* A run that crosses the bound. */
	memset(in + 1, 'a', GDB_PACKET_MAX - 10);
	memcpy(in + 1 + GDB_PACKET_MAX - 10, "*~", 2);
	gdb_packet_parser__init(&p);
	ck_assert_uint_eq(feed(&p, in, GDB_PACKET_MAX - 7, ev, 4), 1);
	ck_assert_int_eq(ev[0], GDB_PKT_TOO_LONG);
	free(in);
}
END_TEST

/* Every byte value round-trips through the encoder and the parser. */
START_TEST(test_encode_roundtrip)
{
	char data[256], out[2 * sizeof(data) + 4];
	struct gdb_packet_parser p;
	enum gdb_packet_event ev[2];
	int n;

	for (int i = 0; i < 256; i++)
		data[i] = (char)i;
	n = gdb_packet__encode(data, sizeof(data), out, sizeof(out));
	ck_assert_int_gt(n, 0);
	gdb_packet_parser__init(&p);
	ck_assert_uint_eq(feed(&p, out, (size_t)n, ev, 2), 1);
	ck_assert_int_eq(ev[0], GDB_PKT_READY);
	ck_assert_uint_eq(p.len, sizeof(data));
	ck_assert_mem_eq(p.data, data, sizeof(data));
	ck_assert_int_eq(gdb_packet__encode("OK", 2, out, sizeof(out)), 6);
	ck_assert_mem_eq(out, "$OK#9a", 6);
	ck_assert_int_eq(gdb_packet__encode("#", 1, out, 5), -ENOSPC);
}
END_TEST

START_TEST(test_btrace_xml)
{
	static const struct gdb_btrace_block b[] = { { 0x401000, 0x401000 },
						     { 0x40101d, 0x401022 } };
	char conf[128];
	size_t len;
	char *doc = btrace_xml__blocks(b, 2, &len);

	ck_assert_ptr_nonnull(doc);
	ck_assert_str_eq(doc, "<btrace version=\"1.0\">\n"
			 "<block begin=\"0x401000\" end=\"0x401000\"/>\n"
			 "<block begin=\"0x40101d\" end=\"0x401022\"/>\n"
			 "</btrace>\n");
	ck_assert_uint_eq(len, strlen(doc));
	free(doc);
	doc = btrace_xml__blocks(NULL, 0, &len);
	ck_assert_str_eq(doc, "<btrace version=\"1.0\">\n</btrace>\n");
	free(doc);
	ck_assert_int_gt(btrace_xml__conf(0x10000, conf, sizeof(conf)), 0);
	ck_assert_str_eq(conf, "<btrace-conf version=\"1.0\">\n<bts size=\"0x10000\"/>\n"
			 "</btrace-conf>\n");
	ck_assert_int_gt(btrace_xml__conf(0, conf, sizeof(conf)), 0);
	ck_assert_str_eq(conf, "<btrace-conf version=\"1.0\"/>\n");
	ck_assert_int_eq(btrace_xml__conf(0x10000, conf, 10), -ENOSPC);
}
END_TEST

/* ---- the server over a fake target: two threads, 16 bytes of memory at 0x1000 ---- */

static const struct gdb_btrace_block fake_blocks[] = {
	{ 0x1008, 0x1008 }, { 0x1000, 0x1004 },
};

/* ctx: NULL for two threads, else the count. */
static unsigned int fake_nr_threads(void *ctx)
{
	return ctx ? *(unsigned int *)ctx : 2;
}

static void fake_regs(void *ctx, unsigned int t, struct gdb_regs *r)
{
	r->val[GDB_REG_RIP] = 0x1008 + t;
	r->val[GDB_REG_RSP] = 0x8000;
	r->valid = 1u << GDB_REG_RIP | (t ? 0 : 1u << GDB_REG_RSP);
}

static size_t fake_read_mem(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len)
{
	size_t n;

	if (addr < 0x1000 || addr >= 0x1010)
		return 0;
	n = 0x1010 - addr < len ? 0x1010 - addr : len;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = (uint8_t)(addr - 0x1000 + i);
	return n;
}

static int fake_btrace(void *ctx, unsigned int t, const struct gdb_btrace_block **b, size_t *nr)
{
	*b = fake_blocks;
	*nr = 2;
	return 0;
}

static const struct gdb_target_ops fake_ops = {
	.nr_threads = fake_nr_threads,
	.regs = fake_regs,
	.read_mem = fake_read_mem,
	.btrace = fake_btrace,
	.bts_size = 0x10000,
};

/* Runs the server on @in (raw bytes); its output into @out. Returns its return value. */
static int serve_ctx(const char *in, size_t len, char *out, size_t cap, char *err, void *ctx)
{
	int ifd = memfd_create("in", 0), ofd = memfd_create("out", 0), ret;
	ssize_t n;

	ck_assert_int_ge(ifd, 0);
	ck_assert_int_ge(ofd, 0);
	ck_assert_int_eq(write(ifd, in, len), (ssize_t)len);
	lseek(ifd, 0, SEEK_SET);
	ret = gdb_server__run(ifd, ofd, &fake_ops, ctx, err, 256);
	lseek(ofd, 0, SEEK_SET);
	n = read(ofd, out, cap - 1);
	ck_assert_int_ge(n, 0);
	out[n] = '\0';
	close(ifd);
	close(ofd);
	return ret;
}

static int serve(const char *in, size_t len, char *out, size_t cap, char *err)
{
	return serve_ctx(in, len, out, cap, err, NULL);
}

/* The packets of @payloads ('\n'-separated) framed, into @buf. */
static size_t frame(const char *payloads, char *buf, size_t cap)
{
	size_t o = 0;
	const char *p = payloads;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int k = gdb_packet__encode(p, n, buf + o, cap - o);

		ck_assert_int_gt(k, 0);
		o += (size_t)k;
		p += n + (nl ? 1 : 0);
	}
	return o;
}

START_TEST(test_server_session)
{
	char in[4096], out[8192], err[256];
	size_t n = frame("QStartNoAckMode\nqSupported:multiprocess+;swbreak+\n?\n"
			 "qfThreadInfo\nqsThreadInfo\nHgp1.2\np10\nm1000,4\nm100e,8\nm2000,4\n"
			 "qXfer:btrace-conf:read::0,1000\n"
			 "qXfer:btrace:read:all:0,20\nqXfer:btrace:read:all:20,1000\n"
			 "qXfer:btrace:read:new:0,1000\nqXfer:btrace:read:delta:0,1000\n"
			 "Qbtrace:off\nqXfer:btrace-conf:read::0,1000\nqXfer:btrace:read:all:0,1000\n"
			 "Qbtrace:pt\nM1000,1:00\nvCont;c\nHgp1.3\nqXfer:btrace:read:all:zz\n"
			 "vMustReplyEmpty\nD", in, sizeof(in));
	const char *p;

	/* QStartNoAckMode is acknowledged with '+' (acks are on until its reply). */
	ck_assert_int_eq(serve(in, n, out, sizeof(out), err), 0);
	ck_assert_msg(!strncmp(out, "+$OK#9a$", 8), "got %s", out);
	p = out;
#define NEXT(s) do {                                                              \
		p = strstr(p, "$" s "#");                                         \
		ck_assert_msg(p, "no reply '%s' in order in %s", s, out);         \
		p++;                                                              \
	} while (0)
	NEXT("PacketSize=1000;QStartNoAckMode+;qXfer:features:read+;qXfer:btrace:read+;"
	     "qXfer:btrace-conf:read+;Qbtrace:bts+;Qbtrace:off+;Qbtrace-conf:bts:size+;"
	     "multiprocess+");
	NEXT("T05thread:p1.1;");
	NEXT("mp1.1,p1.2");
	NEXT("l");
	NEXT("OK");
	NEXT("0910000000000000");
	NEXT("00010203");
	NEXT("0e0f");
	NEXT("E14");
	NEXT("l<btrace-conf version=\"1.0\">\n<bts size=\"0x10000\"/>\n</btrace-conf>\n");
	NEXT("m<btrace version=\"1.0\">\n<block be");
	NEXT("lgin=\"0x1008\" end=\"0x1008\"/>\n<block begin=\"0x1000\" end=\"0x1004\"/>\n"
	     "</btrace>\n");
	/* new after a read: no change; delta: the stitch block only. */
	NEXT("l<btrace version=\"1.0\">\n</btrace>\n");
	NEXT("l<btrace version=\"1.0\">\n<block begin=\"0x0\" end=\"0x1008\"/>\n</btrace>\n");
	NEXT("OK");
	NEXT("l<btrace-conf version=\"1.0\"/>\n");
	NEXT("E.Branch tracing is not enabled for this thread.");
	NEXT("E.Only BTS is served.");
	NEXT("E.The trace is read-only.");
	NEXT("E.A recorded trace does not run: use reverse execution or record goto.");
	NEXT("E01");
	NEXT("E01");
	NEXT("");
	NEXT("OK");
#undef NEXT
}
END_TEST

/* Enough 'x' for any run of unavailable registers below. */
#define XS "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

/* The 'g' packet: rip of thread 1 and rsp known, the rest unavailable. */
START_TEST(test_server_regs)
{
	char in[256], out[4096], err[256], want[600];
	size_t n = frame("QStartNoAckMode\ng\nD", in, sizeof(in)), w = 0;
	char *p;

	ck_assert_int_eq(serve(in, n, out, sizeof(out), err), 0);
	p = strstr(out, "$OK#9a$");
	ck_assert_ptr_nonnull(p);
	p += 7;
	/* rax..rbp (7), rsp, r8..r15 (8), rip, eflags + 6 selectors, st0-7, 8 x87 controls. */
	w += (size_t)sprintf(want + w, "%.*s", 7 * 16, XS);
	w += (size_t)sprintf(want + w, "0080000000000000");
	w += (size_t)sprintf(want + w, "%.*s", 8 * 16, XS);
	w += (size_t)sprintf(want + w, "0810000000000000");
	w += (size_t)sprintf(want + w, "%.*s", 7 * 8 + 8 * 20 + 8 * 8, XS);
	sprintf(want + w, "#");
	ck_assert_msg(!strncmp(p, want, strlen(want)), "got %s\nwant %s", p, want);
}
END_TEST

/* More threads than one reply holds: qsThreadInfo goes on where qfThreadInfo stopped. */
START_TEST(test_server_many_threads)
{
	unsigned int nr = 2000, seen = 0, next = 1;
	char in[256], *out = malloc(1 << 16), err[256], *p, *end;
	size_t n = frame("QStartNoAckMode\nqSupported:multiprocess+\nqfThreadInfo\nqsThreadInfo\n"
			 "qsThreadInfo\nqsThreadInfo\nqsThreadInfo\nD", in, sizeof(in));
	int replies = 0;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(serve_ctx(in, n, out, 1 << 16, err, &nr), 0);
	for (p = strstr(out, "$mp"); p && p[1] == 'm'; p = strchr(end, '$')) {
		end = strchr(p, '#');
		ck_assert_ptr_nonnull(end);
		ck_assert_int_le(end - p - 1, GDB_PACKET_MAX);
		replies++;
		for (char *q = p + 2; q < end; q++) {
			unsigned int tid;

			ck_assert_int_eq(sscanf(q, "p1.%x", &tid), 1);
			ck_assert_uint_eq(tid, next);
			next++;
			seen++;
			q = strchr(q, ',');
			if (!q || q > end)
				break;
		}
	}
	ck_assert_uint_eq(seen, nr);
	ck_assert_int_gt(replies, 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p[1], 'l');
	free(out);
}
END_TEST

/* ---- a process's files: exec-file, auxv, libraries-svr4 and vFile reads of them ---- */

static char files_prog[64], files_lib[64];

static const struct gdb_process_file fake_file_list[] = {
	{ .name = "/bin/prog", .host_path = files_prog, .exec = true, .l_addr = 0x55550000,
	  .segment = 0x55550000, .entry = 0x55551040, .phdr = 0x55550040, .phnum = 11 },
	/* A hostile guest name: XML specials and a control byte. */
	{ .name = "/lib/a&b<\x01.so", .host_path = files_lib, .l_addr = 0x7f0000000000,
	  .l_ld = 0x7f0000003e00, .segment = 0x7f0000001000 },
};

static int fake_files(void *ctx, unsigned int t, const struct gdb_process_file **f, size_t *nr)
{
	*f = fake_file_list;
	*nr = 2;
	return 0;
}

static const struct gdb_target_ops fake_files_ops = {
	.nr_threads = fake_nr_threads,
	.regs = fake_regs,
	.read_mem = fake_read_mem,
	.btrace = fake_btrace,
	.bts_size = 0x10000,
	.files = fake_files,
};

/* The payload of the @n-th reply ($...#) of @out into @buf; its length. */
static size_t nth_reply(const char *out, size_t len, unsigned int n, char *buf, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (out[i] != '$')
			continue;
		if (n--) {
			while (i < len && out[i] != '#')
				i += out[i] == '}' ? 2 : 1;
			continue;
		}
		for (i++; i < len && out[i] != '#' && o < cap; i++)
			buf[o++] = out[i] == '}' ? (char)(out[++i] ^ 0x20) : out[i];
		return o;
	}
	ck_abort_msg("no reply %u", n);
	return 0;
}

START_TEST(test_server_files)
{
	static const char lib_bytes[] = "\x7f" "ELF#$}*lib";
	char in[2048], out[8192], err[256], r[4200], hexname[64];
	int ifd, ofd, fd;
	size_t n, len;
	uint64_t aux[8];
	ssize_t got;

	snprintf(files_prog, sizeof(files_prog), "/tmp/vbts-gdb-prog-XXXXXX");
	snprintf(files_lib, sizeof(files_lib), "/tmp/vbts-gdb-lib-XXXXXX");
	fd = mkstemp(files_prog);
	ck_assert_int_ge(fd, 0);
	close(fd);
	fd = mkstemp(files_lib);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, lib_bytes, sizeof(lib_bytes) - 1), sizeof(lib_bytes) - 1);
	close(fd);
	/* The name as the library list gives it, the control byte made '?'. */
	for (size_t i = 0; i < strlen("/lib/a&b<?.so"); i++)
		sprintf(hexname + 2 * i, "%02x", (unsigned char)"/lib/a&b<?.so"[i]);
	snprintf(in, sizeof(in), "QStartNoAckMode\nqSupported:multiprocess+\n"
		 "qXfer:exec-file:read:29:0,1000\nqXfer:auxv:read::0,1000\n"
		 "qXfer:libraries-svr4:read::0,1000\nvFile:open:%s,0,0\nvFile:pread:0,5,4\n"
		 "vFile:fstat:0\nvFile:close:0\nvFile:close:0\nvFile:open:%s,1,0\n"
		 "vFile:open:2f6574632f706173737764,0,0\nvFile:setfs:0\n"
		 "qXfer:libraries:read::0,1000\nqOffsets\nD", hexname, hexname);
	n = frame(in, out, sizeof(out));
	memcpy(in, out, n);
	ifd = memfd_create("in", 0);
	ofd = memfd_create("out", 0);
	ck_assert_int_eq(write(ifd, in, n), (ssize_t)n);
	lseek(ifd, 0, SEEK_SET);
	ck_assert_int_eq(gdb_server__run(ifd, ofd, &fake_files_ops, NULL, err, 256), 0);
	lseek(ofd, 0, SEEK_SET);
	got = read(ofd, out, sizeof(out));
	ck_assert_int_gt(got, 0);
	close(ifd);
	close(ofd);
	len = nth_reply(out, (size_t)got, 1, r, sizeof(r));
	r[len] = '\0';
	ck_assert_msg(strstr(r, ";qXfer:libraries-svr4:read+;qXfer:libraries:read+;"
			     "qXfer:auxv:read+;qXfer:exec-file:read+"), "%s", r);
	len = nth_reply(out, (size_t)got, 2, r, sizeof(r));
	ck_assert_int_eq(len, 10);
	ck_assert_mem_eq(r, "l/bin/prog", 10);
	/* AT_PHDR, AT_PHENT, AT_PHNUM, AT_ENTRY, AT_NULL. */
	len = nth_reply(out, (size_t)got, 3, r, sizeof(r));
	ck_assert_int_eq(len, 1 + 10 * 8);
	ck_assert_int_eq(r[0], 'l');
	memcpy(aux, r + 1, sizeof(aux));
	ck_assert_uint_eq(aux[0], 3);
	ck_assert_uint_eq(aux[1], 0x55550040);
	ck_assert_uint_eq(aux[3], 56);
	ck_assert_uint_eq(aux[5], 11);
	ck_assert_uint_eq(aux[6], 9);
	ck_assert_uint_eq(aux[7], 0x55551040);
	len = nth_reply(out, (size_t)got, 4, r, sizeof(r));
	r[len] = '\0';
	ck_assert_str_eq(r, "l<library-list-svr4 version=\"1.0\"><library "
			 "name=\"/lib/a&amp;b&lt;?.so\" lm=\"0x1000\" l_addr=\"0x7f0000000000\" "
			 "l_ld=\"0x7f0000003e00\"/></library-list-svr4>");
	len = nth_reply(out, (size_t)got, 5, r, sizeof(r));
	ck_assert_mem_eq(r, "F0", len);
	len = nth_reply(out, (size_t)got, 6, r, sizeof(r));
	ck_assert_int_eq(len, 3 + 5);
	ck_assert_mem_eq(r, "F5;#$}*l", 8);
	len = nth_reply(out, (size_t)got, 7, r, sizeof(r));
	ck_assert_int_eq(len, 4 + 64);
	ck_assert_mem_eq(r, "F40;", 4);
	ck_assert_int_eq(r[4 + 28 + 7], (char)(sizeof(lib_bytes) - 1));       /* st_size */
	len = nth_reply(out, (size_t)got, 8, r, sizeof(r));
	ck_assert_mem_eq(r, "F0", len);
	/* Closed twice, opened for writing, a file that is not the process's. */
	len = nth_reply(out, (size_t)got, 9, r, sizeof(r));
	ck_assert_mem_eq(r, "F-1,9", len);
	len = nth_reply(out, (size_t)got, 10, r, sizeof(r));
	ck_assert_mem_eq(r, "F-1,d", len);
	len = nth_reply(out, (size_t)got, 11, r, sizeof(r));
	ck_assert_mem_eq(r, "F-1,2", len);
	len = nth_reply(out, (size_t)got, 12, r, sizeof(r));
	ck_assert_int_eq(len, 0);
	/* The list gdb reads when it does not take the target for Linux, and the PIE's bias. */
	len = nth_reply(out, (size_t)got, 13, r, sizeof(r));
	r[len] = '\0';
	ck_assert_str_eq(r, "l<library-list version=\"1.0\"><library name=\"/lib/a&amp;b&lt;?.so\">"
			 "<segment address=\"0x7f0000001000\"/></library></library-list>");
	len = nth_reply(out, (size_t)got, 14, r, sizeof(r));
	r[len] = '\0';
	ck_assert_str_eq(r, "TextSeg=55550000");
	unlink(files_prog);
	unlink(files_lib);
}
END_TEST

/* Hostile connections end with an error, a clean close without one. */
START_TEST(test_server_hostile)
{
	char in[GDB_PACKET_MAX + 64], out[4096], err[256];
	size_t n;

	ck_assert_int_eq(serve("", 0, out, sizeof(out), err), 0);
	ck_assert_int_eq(serve("$qC#b", 5, out, sizeof(out), err), -EPIPE);
	ck_assert_int_eq(serve("garbage", 7, out, sizeof(out), err), -EPROTO);
	/* A bad checksum is answered with '-'; too many in a row end the session. */
	ck_assert_int_eq(serve("$qC#00$qC#b4", 12, out, sizeof(out), err), 0);
	ck_assert_str_eq(out, "-+$QC1#c5");
	n = 0;
	for (int i = 0; i < 9; i++)
		n += (size_t)sprintf(in + n, "$qC#00");
	ck_assert_int_eq(serve(in, n, out, sizeof(out), err), -EPROTO);
	in[0] = '$';
	memset(in + 1, 'm', GDB_PACKET_MAX + 1);
	ck_assert_int_eq(serve(in, GDB_PACKET_MAX + 2, out, sizeof(out), err), -EMSGSIZE);
}
END_TEST

Suite *gdbstub_suite(void)
{
	Suite *s = suite_create("gdbstub");
	TCase *tc = tcase_create("packet");

	tcase_add_loop_test(tc, test_parse_table, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_parse_run_max);
	tcase_add_test(tc, test_parse_overlong);
	tcase_add_test(tc, test_encode_roundtrip);
	tcase_add_test(tc, test_btrace_xml);
	suite_add_tcase(s, tc);
	tc = tcase_create("server");
	tcase_add_test(tc, test_server_session);
	tcase_add_test(tc, test_server_regs);
	tcase_add_test(tc, test_server_many_threads);
	tcase_add_test(tc, test_server_hostile);
	tcase_add_test(tc, test_server_files);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(gdbstub_suite, bts_blocks_suite, trace_target_suite, live_target_suite)
