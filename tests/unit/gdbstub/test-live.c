// SPDX-License-Identifier: GPL-2.0
/*
 * test-live.c - the stub over a target that runs (vbts run --gdb's kind): register and memory
 * writes, breakpoints, continue, step and ^C, stop replies, the end of the target, btrace
 * enables and overflows, and the packets a target that runs refuses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdbstub-test.h"
#include "packet.h"
#include "server.h"

/* Two threads, 16 bytes of memory at 0x1000. */
struct live {
	struct gdb_regs regs[2];
	uint8_t mem[16];
	uint64_t bp[4];
	char bp_type[4];
	unsigned int nr_bp;
	int efd;
	bool running;
	bool auto_stop;         /* a resume stops at once (at a breakpoint, or after its step) */
	bool exited;            /* the next stop is the target's end */
	int last_step;
	unsigned int resumes;
	struct gdb_stop stop;
	struct gdb_btrace_block blocks[2];
};

static unsigned int l_nr_threads(void *ctx)
{
	return 2;
}

static void l_regs(void *ctx, unsigned int t, struct gdb_regs *r)
{
	*r = ((struct live *)ctx)->regs[t];
}

static size_t l_read_mem(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len)
{
	struct live *l = ctx;

	if (addr < 0x1000 || addr >= 0x1010)
		return 0;
	if (len > 0x1010 - addr)
		len = (size_t)(0x1010 - addr);
	memcpy(buf, l->mem + (addr - 0x1000), len);
	return len;
}

static int l_write_regs(void *ctx, unsigned int t, const struct gdb_regs *r)
{
	struct live *l = ctx;

	for (unsigned int n = 0; n < GDB_REG_NR; n++)
		if (r->valid & (1u << n))
			l->regs[t].val[n] = r->val[n];
	return 0;
}

static int l_write_mem(void *ctx, unsigned int t, uint64_t addr, const void *buf, size_t len)
{
	struct live *l = ctx;

	if (addr < 0x1000 || addr + len > 0x1010)
		return -EFAULT;
	memcpy(l->mem + (addr - 0x1000), buf, len);
	return 0;
}

static int l_breakpoint(void *ctx, char type, uint64_t addr, bool insert)
{
	struct live *l = ctx;

	for (unsigned int i = 0; i < l->nr_bp; i++) {
		if (l->bp[i] == addr) {
			if (!insert) {
				l->bp[i] = l->bp[--l->nr_bp];
				l->bp_type[i] = l->bp_type[l->nr_bp];
			}
			return 0;
		}
	}
	if (!insert)
		return -ENOENT;
	if (l->nr_bp == 4)
		return -ENOSPC;
	l->bp_type[l->nr_bp] = type;
	l->bp[l->nr_bp++] = addr;
	return 0;
}

static void wake(struct live *l)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(l->efd, &one, sizeof(one)), sizeof(one));
}

static int l_resume(void *ctx, int step)
{
	struct live *l = ctx;

	ck_assert(!l->running);
	l->running = true;
	l->resumes++;
	l->last_step = step;
	if (step >= 0)
		l->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = (unsigned int)step,
					     .sig = 5 };
	else if (l->nr_bp)
		l->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = 1, .sig = 5,
					     .swbreak = l->bp_type[0] == '0',
					     .hwbreak = l->bp_type[0] == '1' };
	if (l->exited)
		l->stop = (struct gdb_stop){ .kind = GDB_STOP_EXITED, .status = 42 };
	if (l->auto_stop || l->exited)
		wake(l);
	return 0;
}

static void l_interrupt(void *ctx)
{
	struct live *l = ctx;

	l->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = 0, .sig = 2 };
	wake(l);
}

static int l_event_fd(void *ctx)
{
	return ((struct live *)ctx)->efd;
}

static int l_stopped(void *ctx, struct gdb_stop *stop)
{
	struct live *l = ctx;
	uint64_t v;

	if (read(l->efd, &v, sizeof(v)) < 0 && l->running)
		return 0;
	l->running = false;
	*stop = l->stop;
	return 1;
}

static int l_btrace_enable(void *ctx, unsigned int t, bool on, char *err, size_t errlen)
{
	if (on && t == 1) {
		snprintf(err, errlen, "No branch trace: run vbts run with --trace DIR.");
		return -ENOTSUP;
	}
	return 0;
}

static int l_btrace_read(void *ctx, unsigned int t, enum gdb_btrace_read how,
			 const struct gdb_btrace_block **blocks, size_t *nr)
{
	struct live *l = ctx;

	if (how == GDB_BTRACE_DELTA)
		return -EOVERFLOW;
	*blocks = l->blocks;
	*nr = 2;
	return 0;
}

static const struct gdb_target_ops live_ops = {
	.nr_threads = l_nr_threads,
	.regs = l_regs,
	.read_mem = l_read_mem,
	.bts_size = 0x10000,
	.write_regs = l_write_regs,
	.write_mem = l_write_mem,
	.breakpoint = l_breakpoint,
	.resume = l_resume,
	.interrupt = l_interrupt,
	.event_fd = l_event_fd,
	.stopped = l_stopped,
	.btrace_enable = l_btrace_enable,
	.btrace_read = l_btrace_read,
};

static void live_init(struct live *l)
{
	memset(l, 0, sizeof(*l));
	for (unsigned int t = 0; t < 2; t++) {
		for (unsigned int n = 0; n < GDB_REG_NR; n++)
			l->regs[t].val[n] = n;
		l->regs[t].valid = (1u << GDB_REG_NR) - 1;
	}
	l->blocks[0] = (struct gdb_btrace_block){ 0x1008, 0x100c };
	l->blocks[1] = (struct gdb_btrace_block){ 0x1000, 0x1004 };
	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(l->efd, 0);
	l->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .sig = 5 };
	l->auto_stop = true;
}

/*
 * A client: each chunk of raw bytes is sent once the replies of the one before came (as
 * gdb waits for them: for a stop while the target runs). @replies[i] is how many packets
 * chunk i gets back.
 */
struct client {
	int fd;
	const char *const *chunks;
	const size_t *lens;
	const unsigned int *replies;
	size_t nr;
	char *out;
	size_t cap, len;
};

static void *client_thread(void *arg)
{
	struct client *c = arg;

	for (size_t i = 0; i < c->nr; i++) {
		unsigned int want = c->replies[i], got = 0;

		ck_assert_int_eq(write(c->fd, c->chunks[i], c->lens[i]), (ssize_t)c->lens[i]);
		while (got < want) {
			ssize_t n = read(c->fd, c->out + c->len, c->cap - 1 - c->len);

			if (n <= 0)
				break;
			for (ssize_t k = 0; k < n; k++)
				got += c->out[c->len + (size_t)k] == '#';
			c->len += (size_t)n;
		}
	}
	shutdown(c->fd, SHUT_WR);
	for (;;) {
		ssize_t n = read(c->fd, c->out + c->len, c->cap - 1 - c->len);

		if (n <= 0)
			break;
		c->len += (size_t)n;
	}
	c->out[c->len] = '\0';
	return NULL;
}

/* A session over @l with a client sending @nr chunks; its output into @out. */
static int serve_live(struct live *l, const char *const *chunks, const size_t *lens,
		      const unsigned int *replies, size_t nr, char *out, size_t cap)
{
	struct client c = { .chunks = chunks, .lens = lens, .replies = replies, .nr = nr,
			    .out = out, .cap = cap };
	char err[256] = "";
	pthread_t th;
	int sv[2], ret;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	c.fd = sv[1];
	ck_assert_int_eq(pthread_create(&th, NULL, client_thread, &c), 0);
	ret = gdb_server__run(sv[0], sv[0], &live_ops, l, err, sizeof(err));
	close(sv[0]);
	pthread_join(th, NULL);
	close(sv[1]);
	return ret;
}

/* One chunk per packet of @payloads ('\n'-separated), framed into @buf; one reply each. */
static size_t chunks_of(const char *payloads, char *buf, size_t cap, const char **chunks,
			size_t *lens, unsigned int *replies, size_t max)
{
	const char *p = payloads;
	size_t o = 0, nr = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int k = gdb_packet__encode(p, n, buf + o, cap - o);

		ck_assert_int_gt(k, 0);
		ck_assert_uint_lt(nr, max);
		chunks[nr] = buf + o;
		lens[nr] = (size_t)k;
		replies[nr++] = 1;
		o += (size_t)k;
		p += n + (nl ? 1 : 0);
	}
	return nr;
}

/* @payloads ('\n'-separated) framed, after QStartNoAckMode, into @buf. */
static size_t frame(const char *payloads, char *buf, size_t cap)
{
	const char *p = payloads;
	size_t o = 0;

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

#define NEXT(s) do {                                                              \
		p = strstr(p, "$" s "#");                                         \
		ck_assert_msg(p, "no reply '%s' in order in %s", s, out);         \
		p++;                                                              \
	} while (0)

START_TEST(test_live_session)
{
	char in[4096], out[8192];
	const char *chunks[64];
	size_t lens[64], n;
	unsigned int replies[64];
	struct live l;
	const char *p = out;

	live_init(&l);
	n = chunks_of("QStartNoAckMode\nqSupported:multiprocess+;swbreak+\n?\nvCont?\n"
		  "P10=3412000000000000\nP18=00000000000000000000\nP30=11\nPzz=00\n"
		  "p10\nM1000,2:abcd\nm1000,3\nM100f,2:0000\nM1000,2:abc\n"
		  "X1002,0:\nZ2,1000,1\nZ0,1008,1\nz1,2000,1\nvCont;c:p1.-1\n"
		  "vCont;s:p1.2\nHgp1.1\ns\nHcp1.2\ns\nvCont;q\nvCont;s:p1.9\n"
		  "Hgp1.2\nQbtrace:bts\nHgp1.1\nQbtrace:bts\nqXfer:btrace-conf:read::0,1000\n"
		  "qXfer:btrace:read:all:0,1000\nqXfer:btrace:read:delta:0,1000\n"
		  "Qbtrace:off\nqXfer:btrace:read:all:0,1000\nD", in, sizeof(in), chunks, lens,
		  replies, 64);
	ck_assert_int_eq(serve_live(&l, chunks, lens, replies, n, out, sizeof(out)), 0);
	NEXT("OK");
	NEXT("PacketSize=1000;QStartNoAckMode+;qXfer:features:read+;qXfer:btrace:read+;"
	     "qXfer:btrace-conf:read+;Qbtrace:bts+;Qbtrace:off+;Qbtrace-conf:bts:size+;"
	     "multiprocess+;swbreak+;hwbreak+");
	NEXT("T05thread:p1.1;");
	NEXT("vCont;c;C;s;S");
	NEXT("OK");     /* P rip */
	NEXT("OK");     /* P st0: not kept */
	NEXT("E01");    /* a register that is none */
	NEXT("E01");
	NEXT("3412000000000000");
	NEXT("OK");
	NEXT("abcd00");
	NEXT("E14");    /* across the end: nothing written */
	NEXT("E01");    /* odd digits */
	NEXT("OK");     /* X with no data: gdb's probe */
	NEXT("");       /* Z2: watchpoints are not served */
	NEXT("OK");
	NEXT("OK");     /* z of nothing there */
	NEXT("T05thread:p1.2;swbreak:;");
	NEXT("T05thread:p1.2;");        /* vCont;s:p1.2 */
	NEXT("OK");
	NEXT("T05thread:p1.1;");        /* s: Hg's thread */
	NEXT("OK");
	NEXT("T05thread:p1.2;");        /* s: Hc's thread */
	NEXT("E01");
	NEXT("E01");
	NEXT("OK");
	NEXT("E.No branch trace: run vbts run with --trace DIR.");
	NEXT("OK");
	NEXT("OK");
	NEXT("l<btrace-conf version=\"1.0\">\n<bts size=\"0x10000\"/>\n</btrace-conf>\n");
	NEXT("l<btrace version=\"1.0\">\n<block begin=\"0x1008\" end=\"0x100c\"/>\n"
	     "<block begin=\"0x1000\" end=\"0x1004\"/>\n</btrace>\n");
	NEXT("E.Overflow.");
	NEXT("OK");
	NEXT("E.Branch tracing is not enabled for this thread.");
	NEXT("OK");
	ck_assert_int_eq(l.regs[0].val[GDB_REG_RIP], 0x1234);
	ck_assert_int_eq(l.mem[0], 0xab);
	ck_assert_int_eq(l.mem[1], 0xcd);
	ck_assert_int_eq(l.nr_bp, 1);
	ck_assert_int_eq(l.resumes, 4);
	close(l.efd);
}
END_TEST

/* G: every register of target.xml; x runs leave registers alone; X's binary escapes. */
START_TEST(test_live_writes)
{
	char in[8192], out[8192], g[1200], pkt[64];
	struct live l;
	const char *p = out;
	size_t n, o = 0;
	int k;

	live_init(&l);
	for (unsigned int r = 0; r < 16; r++)
		o += (size_t)sprintf(g + o, "%016x", 0);
	o += (size_t)sprintf(g + o, "efbeadde00000000");       /* rip */
	o += (size_t)sprintf(g + o, "xxxxxxxx");                /* eflags untouched */
	for (unsigned int r = 0; r < 6; r++)
		o += (size_t)sprintf(g + o, "%08x", 0);
	for (unsigned int r = 0; r < 8; r++)
		o += (size_t)sprintf(g + o, "%020x", 0);
	for (unsigned int r = 0; r < 8; r++)
		o += (size_t)sprintf(g + o, "%08x", 0);
	n = frame("QStartNoAckMode", in, sizeof(in));
	in[n++] = '$';
	in[n++] = 'G';
	memcpy(in + n, g, o);
	n += o;
	n += (size_t)sprintf(in + n, "#00");
	/* fix the checksum */
	{
		uint8_t sum = 0;
		char *start = memchr(in + 1, '$', n - 1) + 1;

		for (char *q = start; *q != '#'; q++)
			sum += (uint8_t)*q;
		sprintf(in + n - 2, "%02x", sum);
	}
	n += frame("Gzz", in + n, sizeof(in) - n);
	memcpy(pkt, "X1000,3:", 8);
	pkt[8] = '#';
	pkt[9] = '}';
	pkt[10] = '*';
	k = gdb_packet__encode(pkt, 11, in + n, sizeof(in) - n);
	ck_assert_int_gt(k, 0);
	n += (size_t)k;
	n += frame("X1000,4:abc\nD", in + n, sizeof(in) - n);
	{
		const char *chunk = in;
		unsigned int r = 6;

		ck_assert_int_eq(serve_live(&l, &chunk, &n, &r, 1, out, sizeof(out)), 0);
	}
	NEXT("OK");
	NEXT("OK");
	NEXT("E01");
	NEXT("OK");
	NEXT("E01");
	ck_assert_int_eq(l.regs[0].val[GDB_REG_RIP], 0xdeadbeef);
	ck_assert_int_eq(l.regs[0].val[GDB_REG_RAX], 0);
	ck_assert_int_eq(l.regs[0].val[GDB_REG_EFLAGS], GDB_REG_EFLAGS);
	ck_assert_int_eq(l.mem[0], '#');
	ck_assert_int_eq(l.mem[1], '}');
	ck_assert_int_eq(l.mem[2], '*');
	close(l.efd);
}
END_TEST

/* A ^C while it runs stops it; a packet before the stop is refused; the end is a W. */
START_TEST(test_live_interrupt_and_end)
{
	char in[1024], out[4096];
	const char *chunks[5];
	size_t lens[5], n;
	unsigned int replies[5] = { 1, 1, 1, 1, 0 };
	struct live l;
	const char *p = out;

	live_init(&l);
	l.auto_stop = false;
	n = frame("QStartNoAckMode\nvCont;c", in, sizeof(in));
	chunks[0] = in;
	lens[0] = n;
	chunks[1] = in + n;
	lens[1] = frame("g", in + n, sizeof(in) - n);
	n += lens[1];
	chunks[2] = "\x03";
	lens[2] = 1;
	chunks[3] = in + n;
	lens[3] = frame("p10", in + n, sizeof(in) - n);
	n += lens[3];
	chunks[4] = in + n;
	lens[4] = frame("c", in + n, sizeof(in) - n);
	/* The client leaves while it runs: the session ends, the target runs on. */
	ck_assert_int_eq(serve_live(&l, chunks, lens, replies, 5, out, sizeof(out)), 0);
	NEXT("OK");
	NEXT("E.The target is running.");
	NEXT("T02thread:1;");
	NEXT("1000000000000000");
	ck_assert_int_eq(l.resumes, 2);
	ck_assert(l.running);
	close(l.efd);

	/* The target ends while gdb waits: W and the session is over. */
	live_init(&l);
	l.exited = true;
	p = out;
	n = frame("QStartNoAckMode", in, sizeof(in));
	chunks[0] = in;
	lens[0] = n;
	chunks[1] = in + n;
	lens[1] = frame("c", in + n, sizeof(in) - n);
	ck_assert_int_eq(serve_live(&l, chunks, lens, replies, 2, out, sizeof(out)), 0);
	NEXT("OK");
	NEXT("W2a");
	ck_assert_ptr_null(strchr(p, '$'));
	close(l.efd);
}
END_TEST

#undef NEXT

Suite *live_target_suite(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("server");

	tcase_add_test(tc, test_live_session);
	tcase_add_test(tc, test_live_writes);
	tcase_add_test(tc, test_live_interrupt_and_end);
	suite_add_tcase(s, tc);
	return s;
}
