// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-gdb-packet.c - libFuzzer target: the bytes a gdb client sends, through the packet
 * parser (gdbstub/packet.c) and a whole session of the stub (gdbstub/server.c) over an
 * in-memory target that runs, stops, reads and writes, as vbts run --gdb's does.
 *
 * Input: the first byte picks the target (bit 0: one that runs, else one that does not, as
 * vbts gdb's recorded trace) and how the btrace reads fail (bits 1-2); the rest is the
 * connection's bytes.
 *
 * Beyond the sanitizers it checks what packet.h and server.h promise: a payload is never longer
 * than GDB_PACKET_MAX and is NUL-terminated when ready; what the encoder frames the parser reads
 * back the same; the session ends with 0 or one of the errors server.h lists; everything the
 * stub writes is `+`, `-` or a packet with a good checksum no longer than the framing of
 * GDB_PACKET_MAX bytes; the target's memory is only written inside itself.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>

#include "fuzz.h"
#include "packet.h"
#include "server.h"

#define MEM_BASE 0x1000
#define MEM_SIZE 4096
#define NR_THREADS 2
#define BP_MAX 4

struct fake {
	uint8_t mem[MEM_SIZE];
	struct gdb_regs regs[NR_THREADS];
	struct gdb_btrace_block blocks[3];
	uint64_t bp[BP_MAX];
	unsigned int nr_bp;
	unsigned int bt_fail;   /* how btrace reads fail: 0 never, 1 overflow, 2 no data */
	int efd;
	bool running;
	struct gdb_stop stop;
};

static unsigned int f_nr_threads(void *ctx)
{
	return NR_THREADS;
}

static void f_regs(void *ctx, unsigned int t, struct gdb_regs *r)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	*r = f->regs[t];
}

static size_t f_read_mem(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	if (addr < MEM_BASE || addr - MEM_BASE >= MEM_SIZE)
		return 0;
	if (len > MEM_SIZE - (addr - MEM_BASE))
		len = MEM_SIZE - (size_t)(addr - MEM_BASE);
	memcpy(buf, f->mem + (addr - MEM_BASE), len);
	return len;
}

static int f_btrace(void *ctx, unsigned int t, const struct gdb_btrace_block **blocks,
		    size_t *nr)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	*blocks = f->blocks;
	*nr = 3;
	return 0;
}

static void f_describe(void *ctx, unsigned int t, char *buf, size_t cap)
{
	FUZZ_ASSERT(t < NR_THREADS);
	snprintf(buf, cap, "vcpu %u <&\"'>", t);
}

static int f_write_regs(void *ctx, unsigned int t, const struct gdb_regs *r)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	FUZZ_ASSERT(!(r->valid & ~((1u << GDB_REG_NR) - 1)));
	for (unsigned int n = 0; n < GDB_REG_NR; n++)
		if (r->valid & (1u << n))
			f->regs[t].val[n] = r->val[n];
	return 0;
}

static int f_write_mem(void *ctx, unsigned int t, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	FUZZ_ASSERT(len && len <= GDB_PACKET_MAX);
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE))
		return -EFAULT;
	memcpy(f->mem + (addr - MEM_BASE), buf, len);
	return 0;
}

static int f_breakpoint(void *ctx, char type, uint64_t addr, bool insert)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(type == '0' || type == '1');
	for (unsigned int i = 0; i < f->nr_bp; i++) {
		if (f->bp[i] == addr) {
			if (!insert)
				f->bp[i] = f->bp[--f->nr_bp];
			return 0;
		}
	}
	if (!insert)
		return -ENOENT;
	if (f->nr_bp == BP_MAX)
		return -ENOSPC;
	f->bp[f->nr_bp++] = addr;
	return 0;
}

static void wake(struct fake *f)
{
	uint64_t one = 1;

	FUZZ_ASSERT(write(f->efd, &one, sizeof(one)) == sizeof(one));
}

/* It runs one instruction: a step, or the next breakpoint at once. */
static int f_resume(void *ctx, int step)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(step < NR_THREADS);
	FUZZ_ASSERT(!f->running);
	f->running = true;
	f->stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .thread = step < 0 ? 0 : step,
				     .sig = 5, .swbreak = step < 0 && f->nr_bp };
	f->regs[f->stop.thread].val[GDB_REG_RIP]++;
	wake(f);
	return 0;
}

static void f_interrupt(void *ctx)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(f->running);
	f->stop.sig = 2;
	wake(f);
}

static int f_event_fd(void *ctx)
{
	struct fake *f = ctx;

	return f->efd;
}

static int f_stopped(void *ctx, struct gdb_stop *stop)
{
	struct fake *f = ctx;
	uint64_t v;

	if (read(f->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	f->running = false;
	*stop = f->stop;
	return 1;
}

static int f_btrace_enable(void *ctx, unsigned int t, bool on, char *err, size_t errlen)
{
	FUZZ_ASSERT(t < NR_THREADS);
	if (on && t == 1) {
		snprintf(err, errlen, "not on thread 2");
		return -ENOTSUP;
	}
	return 0;
}

static int f_btrace_read(void *ctx, unsigned int t, enum gdb_btrace_read how,
			 const struct gdb_btrace_block **blocks, size_t *nr)
{
	struct fake *f = ctx;

	FUZZ_ASSERT(t < NR_THREADS);
	FUZZ_ASSERT(how == GDB_BTRACE_ALL || how == GDB_BTRACE_NEW || how == GDB_BTRACE_DELTA);
	if (f->bt_fail == 1 && how == GDB_BTRACE_DELTA)
		return -EOVERFLOW;
	if (f->bt_fail == 2)
		return -ENODATA;
	*blocks = f->blocks;
	*nr = how == GDB_BTRACE_NEW ? 0 : 3;
	return 0;
}

static const struct gdb_target_ops still_ops = {
	.nr_threads = f_nr_threads,
	.regs = f_regs,
	.read_mem = f_read_mem,
	.btrace = f_btrace,
	.describe = f_describe,
	.bts_size = 0x10000,
};

static const struct gdb_target_ops live_ops = {
	.nr_threads = f_nr_threads,
	.regs = f_regs,
	.read_mem = f_read_mem,
	.describe = f_describe,
	.bts_size = 0x10000,
	.write_regs = f_write_regs,
	.write_mem = f_write_mem,
	.breakpoint = f_breakpoint,
	.resume = f_resume,
	.interrupt = f_interrupt,
	.event_fd = f_event_fd,
	.stopped = f_stopped,
	.btrace_enable = f_btrace_enable,
	.btrace_read = f_btrace_read,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

/* The parser over the input alone, and the encoder's packets read back. */
static void check_parser(const uint8_t *data, size_t size)
{
	static struct gdb_packet_parser p, q;
	static char framed[2 * GDB_PACKET_MAX + 8];
	int n;

	gdb_packet_parser__init(&p);
	for (size_t i = 0; i < size; i++) {
		enum gdb_packet_event ev = gdb_packet_parser__feed(&p, data[i]);

		FUZZ_ASSERT(p.len <= GDB_PACKET_MAX);
		if (ev != GDB_PKT_READY)
			continue;
		FUZZ_ASSERT(p.data[p.len] == '\0');
		n = gdb_packet__encode(p.data, p.len, framed, sizeof(framed));
		FUZZ_ASSERT(n > 0);
		gdb_packet_parser__init(&q);
		for (int j = 0; j < n; j++) {
			ev = gdb_packet_parser__feed(&q, (uint8_t)framed[j]);
			FUZZ_ASSERT(j + 1 == n ? ev == GDB_PKT_READY : ev == GDB_PKT_MORE);
		}
		FUZZ_ASSERT(q.len == p.len && !memcmp(q.data, p.data, p.len));
	}
}

/* What the stub wrote: acks and well-framed packets only. */
static void check_output(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *out;
	ssize_t n;
	size_t i = 0;

	FUZZ_ASSERT(size >= 0);
	out = malloc((size_t)size + 1);
	FUZZ_ASSERT(out);
	n = pread(fd, out, (size_t)size, 0);
	FUZZ_ASSERT(n == size);
	while (i < (size_t)n) {
		uint8_t sum = 0;
		size_t start;
		char cs[3];

		if (out[i] == '+' || out[i] == '-') {
			i++;
			continue;
		}
		FUZZ_ASSERT(out[i] == '$');
		start = ++i;
		while (i < (size_t)n && out[i] != '#') {
			FUZZ_ASSERT(out[i] != '$');
			sum += out[i++];
		}
		FUZZ_ASSERT(i + 2 < (size_t)n || i + 3 == (size_t)n);
		FUZZ_ASSERT(i - start <= 2 * GDB_PACKET_MAX);
		snprintf(cs, sizeof(cs), "%02x", sum);
		FUZZ_ASSERT(out[i + 1] == (uint8_t)cs[0] && out[i + 2] == (uint8_t)cs[1]);
		i += 3;
	}
	free(out);
}

/* The input as a file the stub reads from its start. */
static int input_fd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("gdb-in", MFD_CLOEXEC);

	if (fd < 0 || fuzz_write_all(fd, data, size) || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fake f;
	char err[256];
	int in, out, ret;

	if (!size)
		return 0;
	check_parser(data + 1, size - 1);
	memset(&f, 0, sizeof(f));
	for (unsigned int t = 0; t < NR_THREADS; t++) {
		for (unsigned int n = 0; n < GDB_REG_NR; n++)
			f.regs[t].val[n] = 0x1000 * (t + 1) + n;
		f.regs[t].valid = (1u << GDB_REG_NR) - 1 - (t ? 1u << GDB_REG_RBX : 0);
	}
	f.blocks[0] = (struct gdb_btrace_block){ 0x1010, 0x1020 };
	f.blocks[1] = (struct gdb_btrace_block){ 0x1000, 0x1008 };
	f.blocks[2] = (struct gdb_btrace_block){ 0x1800, 0x1800 };
	f.bt_fail = (data[0] >> 1) & 3;
	f.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	in = input_fd(data + 1, size - 1);
	out = memfd_create("gdb-out", MFD_CLOEXEC);
	FUZZ_ASSERT(f.efd >= 0 && in >= 0 && out >= 0);
	f.stop = (struct gdb_stop){ .kind = GDB_STOP_SIGNAL, .sig = 5 };
	ret = gdb_server__run(in, out, data[0] & 1 ? &live_ops : &still_ops, &f, err,
			      sizeof(err));
	FUZZ_ASSERT(ret == 0 || ret == -EPROTO || ret == -EMSGSIZE || ret == -EPIPE);
	FUZZ_ASSERT(!ret || (err[0] && memchr(err, '\0', sizeof(err))));
	check_output(out);
	close(in);
	close(out);
	close(f.efd);
	return 0;
}
