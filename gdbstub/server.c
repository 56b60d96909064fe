// SPDX-License-Identifier: GPL-2.0
/*
 * server.c - the gdb remote serial protocol stub: the connection loop and the command
 * dispatch over a target (struct gdb_target_ops), recorded or live.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "btrace-xml.h"
#include "packet.h"
#include "server.h"
#include "fd-io.h"

/* Files gdb may hold open at once (vFile:open), and libraries listed at most. */
#define FILES_OPEN_MAX 16
#define LIBRARIES_MAX 4096
/* Bytes of a guest path kept in a library list or an exec-file reply. */
#define FILE_NAME_MAX 512
/* gdb's File-I/O errno values (the remote protocol's, not the host's). */
#define FIO_ENOENT 2
#define FIO_EBADF 9
#define FIO_EACCES 13
#define FIO_EINVAL 22
#define FIO_EMFILE 24
/* auxv entry types (the System V ABI's). */
#define AUX_NULL 0
#define AUX_PHDR 3
#define AUX_PHENT 4
#define AUX_PHNUM 5
#define AUX_ENTRY 9
#define ELF64_PHENT 56

/* Bad checksums in a row before the connection is given up. */
#define BAD_SUM_MAX 8
/* Bytes read from the connection at a time. */
#define READ_CHUNK 4096

static const char target_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
	"<target version=\"1.0\">\n"
	"<architecture>i386:x86-64</architecture>\n"
	"<feature name=\"org.gnu.gdb.i386.core\">\n"
	"<reg name=\"rax\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rbx\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rcx\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rdx\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rsi\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rdi\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rbp\" bitsize=\"64\" type=\"data_ptr\"/>\n"
	"<reg name=\"rsp\" bitsize=\"64\" type=\"data_ptr\"/>\n"
	"<reg name=\"r8\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r9\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r10\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r11\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r12\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r13\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r14\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"r15\" bitsize=\"64\" type=\"int64\"/>\n"
	"<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\"/>\n"
	"<reg name=\"eflags\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"cs\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"ss\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"ds\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"es\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"fs\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"gs\" bitsize=\"32\" type=\"int32\"/>\n"
	"<reg name=\"st0\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st1\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st2\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st3\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st4\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st5\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st6\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"st7\" bitsize=\"80\" type=\"i387_ext\"/>\n"
	"<reg name=\"fctrl\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"fstat\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"ftag\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"fiseg\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"fioff\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"foseg\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"fooff\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"<reg name=\"fop\" bitsize=\"32\" type=\"int\" group=\"float\"/>\n"
	"</feature>\n"
	"</target>\n";

/* Registers of target.xml: the core ones of enum gdb_reg, then 8 x87 stack and 8 control. */
#define NR_X87_ST 8
#define NR_X87_CTL 8
#define NR_REGS (GDB_REG_NR + NR_X87_ST + NR_X87_CTL)

/* Size in bytes of register @n of target.xml. */
static unsigned int reg_size(unsigned int n)
{
	if (n <= GDB_REG_RIP)
		return 8;
	if (n < GDB_REG_NR)
		return 4;
	if (n < GDB_REG_NR + NR_X87_ST)
		return 10;
	return 4;
}

/* A thread's recording state as gdb set it. */
struct thread_state {
	bool off;       /* Qbtrace:off was asked */
	bool read;      /* its trace was read since it was (re)enabled: `new` gives no change */
};

struct server {
	int in_fd, out_fd;
	const struct gdb_target_ops *ops;
	void *ctx;
	unsigned int nr_threads;
	struct thread_state *threads;
	unsigned int g_thread;  /* Hg: the thread of registers, memory and btrace */
	long c_thread;          /* Hc: the thread `s` steps, -1 for g_thread */
	bool live;              /* the target runs: ops->resume and the others are set */
	bool running;           /* resumed, its stop not reported yet */
	struct gdb_stop stop;   /* the last stop */
	size_t pkt_len;         /* the length of the packet being dispatched (X has binary) */
	bool noack;
	bool multiprocess;
	bool done;
	struct gdb_packet_parser parser;
	/* The reply being built (payload) and the last one sent (framed, for a `-`). */
	char reply[GDB_PACKET_MAX + 1];
	size_t reply_len;
	char sent[2 * GDB_PACKET_MAX + 8];
	size_t sent_len;
	/* The document of the qXfer:btrace:read in progress, kept from its offset 0 on. */
	char *doc;
	size_t doc_len;
	unsigned int doc_thread;
	unsigned int next_info;         /* the thread qsThreadInfo lists first */
	int files[FILES_OPEN_MAX];      /* vFile:open's descriptors (-1: free) */
};

static void reply_str(struct server *s, const char *str)
{
	size_t n = strlen(str);

	if (n > GDB_PACKET_MAX)
		n = GDB_PACKET_MAX;
	memcpy(s->reply, str, n);
	s->reply_len = n;
}

static void __attribute__((format(printf, 2, 3))) reply_fmt(struct server *s, const char *fmt,
							       ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s->reply, sizeof(s->reply), fmt, ap);
	va_end(ap);
	s->reply_len = n < 0 ? 0 : (size_t)n >= sizeof(s->reply) ? GDB_PACKET_MAX : (size_t)n;
}

static void reply_hex(struct server *s, const void *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *d = data;

	for (size_t i = 0; i < len && s->reply_len + 2 <= GDB_PACKET_MAX; i++) {
		s->reply[s->reply_len++] = digits[d[i] >> 4];
		s->reply[s->reply_len++] = digits[d[i] & 0xf];
	}
}

static int send_reply(struct server *s)
{
	int n = gdb_packet__encode(s->reply, s->reply_len, s->sent, sizeof(s->sent));

	if (n < 0)
		return n;
	s->sent_len = (size_t)n;
	return fd__write_all(s->out_fd, s->sent, s->sent_len);
}

/* A hex number of at most 16 digits ending at a byte of @stops; *@p moves past it. */
static int parse_hex(const char **p, const char *stops, uint64_t *v)
{
	const char *q = *p;
	int d, n = 0;

	*v = 0;
	while ((d = gdb_packet__hex(*q)) >= 0) {
		if (++n > 16)
			return -EINVAL;
		*v = *v << 4 | (uint64_t)d;
		q++;
	}
	if (!n || !strchr(stops, *q))
		return -EINVAL;
	*p = q;
	return 0;
}

/*
 * A thread-id: `p<pid>.<tid>`, `<tid>`, with -1 for all and 0 for any. Into *@t the thread
 * index, or -1 for all or any. Returns 0, or -EINVAL for a malformed or unknown thread.
 */
static int parse_thread(const struct server *s, const char *p, long *t)
{
	uint64_t v;

	if (*p == 'p') {
		p++;
		if (!strcmp(p, "-1")) {
			*t = -1;
			return 0;
		}
		/* pid 0 is any process: ours. */
		if (parse_hex(&p, ".", &v) || v > 1)
			return -EINVAL;
		p++;
	}
	if (!strcmp(p, "-1") || !strcmp(p, "0")) {
		*t = -1;
		return 0;
	}
	if (parse_hex(&p, "", &v) || v < 1 || v > s->nr_threads)
		return -EINVAL;
	*t = (long)v - 1;
	return 0;
}

static const char *thread_name(const struct server *s, unsigned int t, char *buf, size_t cap)
{
	if (s->multiprocess)
		snprintf(buf, cap, "p1.%x", t + 1);
	else
		snprintf(buf, cap, "%x", t + 1);
	return buf;
}

static void reply_stop(struct server *s)
{
	char name[32];

	if (!s->live) {
		reply_fmt(s, "T05thread:%s;", thread_name(s, s->g_thread, name, sizeof(name)));
		return;
	}
	if (s->stop.kind == GDB_STOP_EXITED) {
		reply_fmt(s, "W%02x", (unsigned int)s->stop.status & 0xff);
		return;
	}
	reply_fmt(s, "T%02xthread:%s;%s", (unsigned int)s->stop.sig & 0xff,
		  thread_name(s, s->stop.thread, name, sizeof(name)),
		  s->stop.swbreak ? "swbreak:;" : s->stop.hwbreak ? "hwbreak:;" : "");
}

/* Part of a document from @off, at most @len bytes: `m` when more follows, `l` at the end. */
static void reply_xfer(struct server *s, const char *doc, size_t doc_len, uint64_t off,
		       uint64_t len)
{
	size_t n;

	if (off > doc_len) {
		reply_str(s, "E01");
		return;
	}
	n = doc_len - (size_t)off;
	if (len > GDB_PACKET_MAX - 1)
		len = GDB_PACKET_MAX - 1;
	s->reply[0] = n > len ? 'm' : 'l';
	if (n > len)
		n = (size_t)len;
	memcpy(s->reply + 1, doc + off, n);
	s->reply_len = n + 1;
}

/* `OFF,LEN` at the end of a qXfer packet. */
static int parse_off_len(const char *p, uint64_t *off, uint64_t *len)
{
	if (parse_hex(&p, ",", off))
		return -EINVAL;
	p++;
	return parse_hex(&p, "", len);
}

/* A btrace document of thread @t for @annex (all, new, delta) into s->doc. */
static int build_btrace(struct server *s, unsigned int t, const char *annex)
{
	struct thread_state *ts = &s->threads[t];
	const struct gdb_btrace_block *blocks;
	struct gdb_btrace_block stitch;
	size_t nr;
	int ret;

	free(s->doc);
	s->doc = NULL;
	if (s->ops->btrace_read) {
		enum gdb_btrace_read how;

		if (!strcmp(annex, "all"))
			how = GDB_BTRACE_ALL;
		else if (!strcmp(annex, "new"))
			how = GDB_BTRACE_NEW;
		else if (!strcmp(annex, "delta"))
			how = GDB_BTRACE_DELTA;
		else
			return -EINVAL;
		ret = s->ops->btrace_read(s->ctx, t, how, &blocks, &nr);
		if (ret)
			return ret;
		s->doc = btrace_xml__blocks(blocks, nr, &s->doc_len);
		return s->doc ? 0 : -ENOMEM;
	}
	ret = s->ops->btrace(s->ctx, t, &blocks, &nr);
	if (ret)
		return ret;
	if (!strcmp(annex, "all")) {
		s->doc = btrace_xml__blocks(blocks, nr, &s->doc_len);
	} else if (!strcmp(annex, "new")) {
		/* The trace does not grow: new once, then no change. */
		s->doc = btrace_xml__blocks(blocks, ts->read ? 0 : nr, &s->doc_len);
	} else if (!strcmp(annex, "delta")) {
		if (!ts->read) {
			s->doc = btrace_xml__blocks(blocks, nr, &s->doc_len);
		} else {
			/* Nothing new: only the block gdb stitches to the end of what it has. */
			stitch.begin = 0;
			stitch.end = nr ? blocks[0].end : 0;
			s->doc = btrace_xml__blocks(&stitch, nr ? 1 : 0, &s->doc_len);
		}
	} else {
		return -EINVAL;
	}
	if (!s->doc)
		return -ENOMEM;
	ts->read = true;
	return 0;
}

static bool handle_qxfer_files(struct server *s, const char *p);

static void handle_qxfer(struct server *s, const char *p)
{
	char conf[128], annex[16];
	uint64_t off, len;
	const char *colon;
	int n, ret;

	if (!strncmp(p, "features:read:target.xml:", 25)) {
		if (parse_off_len(p + 25, &off, &len))
			reply_str(s, "E01");
		else
			reply_xfer(s, target_xml, sizeof(target_xml) - 1, off, len);
		return;
	}
	if (!strncmp(p, "btrace-conf:read::", 18)) {
		if (parse_off_len(p + 18, &off, &len)) {
			reply_str(s, "E01");
			return;
		}
		n = btrace_xml__conf(s->threads[s->g_thread].off ? 0 : s->ops->bts_size, conf,
				     sizeof(conf));
		if (n < 0)
			reply_str(s, "E01");
		else
			reply_xfer(s, conf, (size_t)n, off, len);
		return;
	}
	if (handle_qxfer_files(s, p))
		return;
	if (!strncmp(p, "btrace:read:", 12)) {
		p += 12;
		colon = strchr(p, ':');
		if (!colon || (size_t)(colon - p) >= sizeof(annex) ||
		    parse_off_len(colon + 1, &off, &len)) {
			reply_str(s, "E01");
			return;
		}
		memcpy(annex, p, (size_t)(colon - p));
		annex[colon - p] = '\0';
		if (s->threads[s->g_thread].off) {
			reply_str(s, "E.Branch tracing is not enabled for this thread.");
			return;
		}
		if (!off) {
			ret = build_btrace(s, s->g_thread, annex);
			if (ret == -EOVERFLOW) {
				reply_str(s, "E.Overflow.");
				return;
			}
			if (ret) {
				reply_fmt(s, "E.%s", strerror(-ret));
				return;
			}
			s->doc_thread = s->g_thread;
		} else if (!s->doc || s->doc_thread != s->g_thread) {
			/* Later chunks come from the document read from offset 0. */
			reply_str(s, "E01");
			return;
		}
		reply_xfer(s, s->doc, s->doc_len, off, len);
		return;
	}
	/* Objects and annexes not announced. */
	reply_str(s, "");
}

static int parse_bytes(const char *p, size_t digits, uint8_t *out, size_t len);

/*
 * A guest path as gdb sees it: printable ASCII, every other byte '?' (a hostile name cannot
 * break the XML, the terminal or the reply), at most FILE_NAME_MAX - 1 bytes.
 */
static void file_name(const char *name, char *out, size_t cap)
{
	size_t n = 0;

	for (; name && *name && n + 1 < cap && n + 1 < FILE_NAME_MAX; name++)
		out[n++] = *name >= 0x20 && *name < 0x7f ? *name : '?';
	out[n] = '\0';
}

/* The process files of the Hg thread, or none. */
static size_t thread_files(struct server *s, const struct gdb_process_file **files)
{
	size_t nr = 0;

	*files = NULL;
	if (!s->ops->files || s->ops->files(s->ctx, s->g_thread, files, &nr) < 0)
		return 0;
	return nr;
}

/* Append @str to the growing document @doc (length *@len, capacity *@cap); -ENOMEM. */
static int doc_add(char **doc, size_t *len, size_t *cap, const char *str)
{
	size_t n = strlen(str);

	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 1024;
		char *d;

		while (c < *len + n + 1)
			c *= 2;
		d = realloc(*doc, c);
		if (!d)
			return -ENOMEM;
		*doc = d;
		*cap = c;
	}
	memcpy(*doc + *len, str, n + 1);
	*len += n;
	return 0;
}

/* @name made a guest path (file_name()) escaped for an XML attribute, into @esc. */
static void xml_name(const char *name, char *esc, size_t cap)
{
	char clean[FILE_NAME_MAX];
	size_t n = 0;

	file_name(name, clean, sizeof(clean));
	for (const char *c = clean; *c; c++) {
		const char *e = *c == '&' ? "&amp;" : *c == '<' ? "&lt;" : *c == '>' ? "&gt;" :
				*c == '"' ? "&quot;" : *c == '\'' ? "&apos;" : NULL;
		size_t k = e ? strlen(e) : 1;

		if (n + k >= cap)
			break;
		memcpy(esc + n, e ? e : c, k);
		n += k;
	}
	esc[n] = '\0';
}

/*
 * The library list of the Hg thread's process (not its program): gdb's qXfer:libraries-svr4
 * document (@svr4: each library's run-time bias, l_addr, and dynamic section, l_ld; lm is only
 * a name gdb keeps), or qXfer:libraries's (where its first loadable segment is), which gdb
 * reads when it does not take the target for Linux.
 */
static char *libraries_doc(struct server *s, bool svr4, size_t *len)
{
	const struct gdb_process_file *f;
	size_t nr = thread_files(s, &f), cap = 0, listed = 0;
	char *doc = NULL, line[FILE_NAME_MAX * 6 + 160], esc[FILE_NAME_MAX * 6];
	int ret;

	*len = 0;
	ret = doc_add(&doc, len, &cap, svr4 ? "<library-list-svr4 version=\"1.0\">" :
						"<library-list version=\"1.0\">");
	for (size_t i = 0; !ret && i < nr && listed < LIBRARIES_MAX; i++) {
		if (f[i].exec)
			continue;
		xml_name(f[i].name, esc, sizeof(esc));
		if (svr4)
			snprintf(line, sizeof(line), "<library name=\"%s\" lm=\"0x%zx\" "
				 "l_addr=\"0x%" PRIx64 "\" l_ld=\"0x%" PRIx64 "\"/>", esc,
				 0x1000 + 0x100 * listed, f[i].l_addr, f[i].l_ld);
		else
			snprintf(line, sizeof(line), "<library name=\"%s\"><segment address=\"0x%"
				 PRIx64 "\"/></library>", esc, f[i].segment);
		ret = doc_add(&doc, len, &cap, line);
		listed++;
	}
	if (!ret)
		ret = doc_add(&doc, len, &cap, svr4 ? "</library-list-svr4>" : "</library-list>");
	if (ret) {
		free(doc);
		return NULL;
	}
	return doc;
}

/* The auxiliary vector gdb relocates a PIE with: the program's entry and headers. */
static size_t auxv_of(struct server *s, uint64_t *aux)
{
	const struct gdb_process_file *f;
	size_t nr = thread_files(s, &f), n = 0;

	for (size_t i = 0; i < nr; i++) {
		if (!f[i].exec)
			continue;
		if (f[i].phdr) {
			aux[n++] = AUX_PHDR;
			aux[n++] = f[i].phdr;
			aux[n++] = AUX_PHENT;
			aux[n++] = ELF64_PHENT;
			aux[n++] = AUX_PHNUM;
			aux[n++] = f[i].phnum;
		}
		aux[n++] = AUX_ENTRY;
		aux[n++] = f[i].entry;
		break;
	}
	aux[n++] = AUX_NULL;
	aux[n++] = 0;
	return n * sizeof(*aux);
}

/* qXfer:exec-file:read, qXfer:auxv:read, qXfer:libraries-svr4:read (@p after "qXfer:"). */
static bool handle_qxfer_files(struct server *s, const char *p)
{
	const struct gdb_process_file *f;
	uint64_t off, len, aux[10];
	char name[FILE_NAME_MAX];
	const char *colon;
	size_t n, nr;
	char *doc;

	if (!s->ops->files)
		return false;
	if (!strncmp(p, "libraries-svr4:read::", 21) || !strncmp(p, "libraries:read::", 16)) {
		bool svr4 = p[9] == '-';

		if (parse_off_len(p + (svr4 ? 21 : 16), &off, &len)) {
			reply_str(s, "E01");
			return true;
		}
		doc = libraries_doc(s, svr4, &n);
		if (!doc)
			reply_str(s, "E.Out of memory.");
		else
			reply_xfer(s, doc, n, off, len);
		free(doc);
		return true;
	}
	if (!strncmp(p, "auxv:read::", 11)) {
		if (parse_off_len(p + 11, &off, &len)) {
			reply_str(s, "E01");
			return true;
		}
		n = auxv_of(s, aux);
		reply_xfer(s, (const char *)aux, n, off, len);
		return true;
	}
	if (!strncmp(p, "exec-file:read:", 15)) {
		/* The annex is a pid: there is one process, the Hg thread's. */
		colon = strchr(p + 15, ':');
		if (!colon || parse_off_len(colon + 1, &off, &len)) {
			reply_str(s, "E01");
			return true;
		}
		nr = thread_files(s, &f);
		for (size_t i = 0; i < nr; i++) {
			if (f[i].exec) {
				file_name(f[i].name, name, sizeof(name));
				reply_xfer(s, name, strlen(name), off, len);
				return true;
			}
		}
		reply_str(s, "E.No program is known for this thread.");
		return true;
	}
	return false;
}

/*
 * qOffsets: where the program's first loadable segment was loaded (a PIE), so that gdb moves
 * all of it (Text=/Data= would move .text, .data and .bss alone), or nothing known.
 */
static void handle_offsets(struct server *s)
{
	const struct gdb_process_file *f;
	size_t nr = thread_files(s, &f);

	for (size_t i = 0; i < nr; i++) {
		if (f[i].exec) {
			reply_fmt(s, "TextSeg=%" PRIx64, f[i].segment);
			return;
		}
	}
	reply_str(s, "");
}

/* vFile:open:NAME,FLAGS,MODE: only the files of thread_files(), read-only. */
static void handle_vfile_open(struct server *s, const char *p)
{
	const struct gdb_process_file *f;
	char want[FILE_NAME_MAX], name[FILE_NAME_MAX];
	const char *comma = strchr(p, ',');
	size_t n = comma ? (size_t)(comma - p) : 0, nr;
	uint64_t flags;
	int slot = -1;

	if (!comma || n % 2 || n / 2 >= sizeof(want) ||
	    parse_bytes(p, n, (uint8_t *)want, n / 2) || (p = comma + 1, parse_hex(&p, ",", &flags))) {
		reply_fmt(s, "F-1,%x", FIO_EINVAL);
		return;
	}
	want[n / 2] = '\0';
	if (flags & 3) {        /* FILEIO_O_WRONLY, FILEIO_O_RDWR */
		reply_fmt(s, "F-1,%x", FIO_EACCES);
		return;
	}
	for (int i = 0; i < FILES_OPEN_MAX; i++) {
		if (s->files[i] < 0) {
			slot = i;
			break;
		}
	}
	nr = thread_files(s, &f);
	for (size_t i = 0; i < nr; i++) {
		struct stat st;
		int fd;

		file_name(f[i].name, name, sizeof(name));
		if (strcmp(name, want) || !f[i].host_path)
			continue;
		if (slot < 0) {
			reply_fmt(s, "F-1,%x", FIO_EMFILE);
			return;
		}
		fd = open(f[i].host_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			break;
		}
		s->files[slot] = fd;
		reply_fmt(s, "F%x", slot);
		return;
	}
	reply_fmt(s, "F-1,%x", FIO_ENOENT);
}

/* The descriptor of vFile's FD at *@p, or -1. */
static int vfile_fd(struct server *s, const char **p, const char *stops)
{
	uint64_t v;

	if (parse_hex(p, stops, &v) || v >= FILES_OPEN_MAX || s->files[v] < 0)
		return -1;
	return (int)v;
}

/* gdb's File-I/O struct stat: big-endian fields, 64 bytes. */
static void put_be(uint8_t *p, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
}

static void handle_vfile(struct server *s, const char *p)
{
	uint64_t count, off;
	struct stat st;
	uint8_t fst[64];
	ssize_t n;
	int slot;

	if (!strncmp(p, "open:", 5)) {
		handle_vfile_open(s, p + 5);
	} else if (!strncmp(p, "pread:", 6)) {
		p += 6;
		slot = vfile_fd(s, &p, ",");
		if (slot < 0 || (p++, parse_hex(&p, ",", &count)) || (p++, parse_hex(&p, "", &off)) ||
		    off > INT64_MAX) {
			reply_fmt(s, "F-1,%x", slot < 0 ? FIO_EBADF : FIO_EINVAL);
			return;
		}
		/* "F<count>;" and the bytes, raw: the framing escapes them. */
		if (count > GDB_PACKET_MAX - 32)
			count = GDB_PACKET_MAX - 32;
		n = pread(s->files[slot], s->reply + 16, (size_t)count, (off_t)off);
		if (n < 0) {
			reply_fmt(s, "F-1,%x", FIO_EINVAL);
			return;
		}
		{
			char head[16];
			int h = snprintf(head, sizeof(head), "F%zx;", (size_t)n);

			memmove(s->reply + h, s->reply + 16, (size_t)n);
			memcpy(s->reply, head, (size_t)h);
			s->reply_len = (size_t)h + (size_t)n;
		}
	} else if (!strncmp(p, "close:", 6)) {
		p += 6;
		slot = vfile_fd(s, &p, "");
		if (slot < 0) {
			reply_fmt(s, "F-1,%x", FIO_EBADF);
			return;
		}
		close(s->files[slot]);
		s->files[slot] = -1;
		reply_str(s, "F0");
	} else if (!strncmp(p, "fstat:", 6)) {
		p += 6;
		slot = vfile_fd(s, &p, "");
		if (slot < 0 || fstat(s->files[slot], &st)) {
			reply_fmt(s, "F-1,%x", FIO_EBADF);
			return;
		}
		memset(fst, 0, sizeof(fst));
		put_be(fst + 8, 0100444, 4);            /* st_mode: a regular file, read-only */
		put_be(fst + 12, 1, 4);                 /* st_nlink */
		put_be(fst + 28, (uint64_t)st.st_size, 8);
		put_be(fst + 36, 4096, 8);              /* st_blksize */
		put_be(fst + 44, ((uint64_t)st.st_size + 511) / 512, 8);
		put_be(fst + 56, (uint64_t)st.st_mtime, 4);
		reply_fmt(s, "F%zx;", sizeof(fst));
		memcpy(s->reply + s->reply_len, fst, sizeof(fst));
		s->reply_len += sizeof(fst);
	} else {
		reply_str(s, "");       /* setfs, pwrite, unlink, readlink: not served */
	}
}

static void handle_qsupported(struct server *s, const char *p)
{
	s->multiprocess = strstr(p, "multiprocess+") != NULL;
	reply_fmt(s, "PacketSize=%x;QStartNoAckMode+;qXfer:features:read+;"
		  "qXfer:btrace:read+;qXfer:btrace-conf:read+;Qbtrace:bts+;Qbtrace:off+;"
		  "Qbtrace-conf:bts:size+%s%s%s", GDB_PACKET_MAX,
		  s->multiprocess ? ";multiprocess+" : "",
		  s->ops->files ? ";qXfer:libraries-svr4:read+;qXfer:libraries:read+;"
				  "qXfer:auxv:read+;qXfer:exec-file:read+" : "",
		  s->live ? ";swbreak+;hwbreak+" : "");
}

/* As many threads as a reply holds, from s->next_info on: `m` and a list, `l` at the end. */
static void handle_thread_info(struct server *s, bool first)
{
	char name[32];
	size_t n;

	if (first)
		s->next_info = 0;
	if (s->next_info >= s->nr_threads) {
		reply_str(s, "l");
		return;
	}
	reply_str(s, "m");
	for (; s->next_info < s->nr_threads; s->next_info++) {
		thread_name(s, s->next_info, name, sizeof(name));
		n = strlen(name) + 1;
		if (s->reply_len + n > GDB_PACKET_MAX)
			break;
		if (s->reply_len > 1)
			s->reply[s->reply_len++] = ',';
		memcpy(s->reply + s->reply_len, name, n - 1);
		s->reply_len += n - 1;
	}
}

/* qThreadExtraInfo: the target's words on a thread, hex-encoded. */
static void handle_extra_info(struct server *s, const char *p)
{
	char text[128] = "";
	long t;

	if (parse_thread(s, p, &t) || t < 0) {
		reply_str(s, "E01");
		return;
	}
	if (s->ops->describe)
		s->ops->describe(s->ctx, (unsigned int)t, text, sizeof(text));
	s->reply_len = 0;
	reply_hex(s, text, strlen(text));
}

static void handle_offsets(struct server *s);

static void handle_q(struct server *s, const char *p)
{
	char name[32];

	if (!strncmp(p, "qSupported", 10))
		handle_qsupported(s, p);
	else if (!strncmp(p, "qXfer:", 6))
		handle_qxfer(s, p + 6);
	else if (!strcmp(p, "qfThreadInfo"))
		handle_thread_info(s, true);
	else if (!strcmp(p, "qsThreadInfo"))
		handle_thread_info(s, false);
	else if (!strcmp(p, "qC"))
		reply_fmt(s, "QC%s", thread_name(s, s->g_thread, name, sizeof(name)));
	else if (!strncmp(p, "qThreadExtraInfo,", 17))
		handle_extra_info(s, p + 17);
	else if (!strncmp(p, "qAttached", 9))
		reply_str(s, "1");
	else if (!strncmp(p, "qSymbol:", 8))
		reply_str(s, "OK");
	else if (!strcmp(p, "qOffsets"))
		handle_offsets(s);
	else
		reply_str(s, "");
}

static void handle_Q(struct server *s, const char *p)
{
	if (!strcmp(p, "QStartNoAckMode")) {
		reply_str(s, "OK");
		s->noack = true;    /* after this reply is acknowledged: see run_loop() */
	} else if (!strcmp(p, "Qbtrace:bts") || !strcmp(p, "Qbtrace:off")) {
		bool on = !strcmp(p, "Qbtrace:bts");
		char err[160] = "";

		if (s->ops->btrace_enable &&
		    s->ops->btrace_enable(s->ctx, s->g_thread, on, err, sizeof(err)) < 0) {
			reply_fmt(s, "E.%s", err[0] ? err : "Branch tracing failed.");
			return;
		}
		s->threads[s->g_thread].off = !on;
		s->threads[s->g_thread].read = false;
		reply_str(s, "OK");
	} else if (!strncmp(p, "Qbtrace:", 8)) {
		reply_str(s, "E.Only BTS is served.");
	} else if (!strncmp(p, "Qbtrace-conf:bts:size=", 22)) {
		/* A setting for later enables: the recorded trace has the size it has. */
		reply_str(s, "OK");
	} else {
		reply_str(s, "");
	}
}

static void handle_regs(struct server *s)
{
	struct gdb_regs r = { 0 };

	s->ops->regs(s->ctx, s->g_thread, &r);
	s->reply_len = 0;
	for (unsigned int n = 0; n < NR_REGS; n++) {
		unsigned int size = reg_size(n);

		if (n < GDB_REG_NR && (r.valid & (1u << n))) {
			reply_hex(s, &r.val[n], size);  /* little-endian host, as the guest */
		} else {
			memset(s->reply + s->reply_len, 'x', 2 * size);
			s->reply_len += 2 * size;
		}
	}
}

static void handle_reg(struct server *s, const char *p)
{
	struct gdb_regs r = { 0 };
	uint64_t n;

	if (parse_hex(&p, "", &n) || n >= NR_REGS) {
		reply_str(s, "E01");
		return;
	}
	s->ops->regs(s->ctx, s->g_thread, &r);
	if (n < GDB_REG_NR && (r.valid & (1u << n))) {
		s->reply_len = 0;
		reply_hex(s, &r.val[n], reg_size((unsigned int)n));
	} else {
		memset(s->reply, 'x', 2 * reg_size((unsigned int)n));
		s->reply_len = 2 * reg_size((unsigned int)n);
	}
}

static void handle_mem(struct server *s, const char *p)
{
	uint8_t buf[GDB_PACKET_MAX / 2];
	uint64_t addr, len;
	size_t n;

	if (parse_hex(&p, ",", &addr)) {
		reply_str(s, "E01");
		return;
	}
	p++;
	if (parse_hex(&p, "", &len)) {
		reply_str(s, "E01");
		return;
	}
	if (len > sizeof(buf))
		len = sizeof(buf);
	n = s->ops->read_mem(s->ctx, s->g_thread, addr, buf, (size_t)len);
	if (!n && len) {
		reply_str(s, "E14");    /* EFAULT */
		return;
	}
	s->reply_len = 0;
	reply_hex(s, buf, n);
}

static void handle_h(struct server *s, const char *p)
{
	long t;

	if ((*p != 'g' && *p != 'c') || parse_thread(s, p + 1, &t)) {
		reply_str(s, "E01");
		return;
	}
	if (*p == 'g' && t >= 0)
		s->g_thread = (unsigned int)t;
	if (*p == 'c')
		s->c_thread = t;
	reply_str(s, "OK");
}

/* Exactly 2 * @len hex digits at @p into @out; -EINVAL otherwise. */
static int parse_bytes(const char *p, size_t digits, uint8_t *out, size_t len)
{
	if (digits != 2 * len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi = gdb_packet__hex(p[2 * i]), lo = gdb_packet__hex(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Register @n's value from @size little-endian bytes; the x87 ones are not kept. */
static void take_reg(struct gdb_regs *r, unsigned int n, const uint8_t *b, unsigned int size)
{
	uint64_t v = 0;

	if (n >= GDB_REG_NR)
		return;
	for (unsigned int i = size; i--;)
		v = v << 8 | b[i];
	r->val[n] = v;
	r->valid |= 1u << n;
}

/* G: every register of target.xml, in hex; an `x` run leaves one alone. */
static void handle_write_regs(struct server *s, const char *p, size_t digits)
{
	struct gdb_regs r = { 0 };
	size_t off = 0;
	uint8_t b[10];
	int ret;

	for (unsigned int n = 0; n < NR_REGS; n++) {
		unsigned int size = reg_size(n);

		if (off + 2 * size > digits)
			break;
		if (p[off] == 'x') {
			off += 2 * size;
			continue;
		}
		if (parse_bytes(p + off, 2 * size, b, size)) {
			reply_str(s, "E01");
			return;
		}
		take_reg(&r, n, b, size);
		off += 2 * size;
	}
	if (off != digits) {
		reply_str(s, "E01");
		return;
	}
	ret = s->ops->write_regs(s->ctx, s->g_thread, &r);
	reply_str(s, ret ? "E.The registers could not be written." : "OK");
}

/* P n=value */
static void handle_write_reg(struct server *s, const char *p, size_t len)
{
	const char *end = p + len;
	struct gdb_regs r = { 0 };
	uint64_t n;
	uint8_t b[10];

	if (parse_hex(&p, "=", &n) || n >= NR_REGS ||
	    parse_bytes(p + 1, (size_t)(end - p - 1), b, reg_size((unsigned int)n))) {
		reply_str(s, "E01");
		return;
	}
	take_reg(&r, (unsigned int)n, b, reg_size((unsigned int)n));
	if (!r.valid) {
		reply_str(s, "OK");     /* an x87 register: not kept */
		return;
	}
	reply_str(s, s->ops->write_regs(s->ctx, s->g_thread, &r) ?
		     "E.The register could not be written." : "OK");
}

/* M addr,len:hex and X addr,len:binary */
static void handle_write_mem(struct server *s, const char *p, size_t len, bool binary)
{
	uint8_t buf[GDB_PACKET_MAX];
	const char *end = p + len;
	uint64_t addr, n;

	if (parse_hex(&p, ",", &addr)) {
		reply_str(s, "E01");
		return;
	}
	p++;
	if (parse_hex(&p, ":", &n) || n > sizeof(buf)) {
		reply_str(s, "E01");
		return;
	}
	p++;
	if (binary) {
		if ((size_t)(end - p) != n) {
			reply_str(s, "E01");
			return;
		}
		memcpy(buf, p, (size_t)n);
	} else if (parse_bytes(p, (size_t)(end - p), buf, (size_t)n)) {
		reply_str(s, "E01");
		return;
	}
	if (!n) {
		reply_str(s, "OK");     /* X with no data: gdb's probe for the packet */
		return;
	}
	reply_str(s, s->ops->write_mem(s->ctx, s->g_thread, addr, buf, (size_t)n) ? "E14" :
		     "OK");
}

/* Z/z type,addr,kind: software (0) and hardware (1) breakpoints; watchpoints are not. */
static void handle_breakpoint(struct server *s, const char *p, bool insert)
{
	uint64_t addr, kind;
	char type = p[0];
	int ret;

	if ((type != '0' && type != '1') || p[1] != ',') {
		reply_str(s, "");
		return;
	}
	p += 2;
	if (parse_hex(&p, ",", &addr)) {
		reply_str(s, "E01");
		return;
	}
	p++;
	if (parse_hex(&p, ";", &kind) && parse_hex(&p, "", &kind)) {
		reply_str(s, "E01");
		return;
	}
	ret = s->ops->breakpoint(s->ctx, type, addr, insert);
	if (ret == -ENOENT && !insert)
		ret = 0;
	reply_str(s, ret ? "E.The breakpoint could not be set." : "OK");
}

/* Resume the target: @step the thread to single-step, -1 to continue every thread. */
static void resume(struct server *s, long step)
{
	int ret = s->ops->resume(s->ctx, (int)step);

	if (ret) {
		reply_fmt(s, "E.%s", strerror(-ret));
		return;
	}
	s->running = true;      /* the stop reply comes when it stops */
}

/* c [addr] and s [addr]: the address, when given, is where it resumes. */
static void handle_resume(struct server *s, const char *p, bool step)
{
	struct gdb_regs r = { 0 };
	uint64_t addr;

	if (*p == 'C' || *p == 'S') {
		/* A signal to deliver: a VM has no such thing; the signal number is ignored. */
		p++;
		if (parse_hex(&p, ";", &addr) && parse_hex(&p, "", &addr)) {
			reply_str(s, "E01");
			return;
		}
		if (*p == ';')
			p++;
	} else {
		p++;
	}
	if (*p) {
		if (parse_hex(&p, "", &addr)) {
			reply_str(s, "E01");
			return;
		}
		r.val[GDB_REG_RIP] = addr;
		r.valid = 1u << GDB_REG_RIP;
		if (s->ops->write_regs(s->ctx, step && s->c_thread >= 0 ? (unsigned int)s->c_thread :
				       s->g_thread, &r)) {
			reply_str(s, "E.The PC could not be written.");
			return;
		}
	}
	resume(s, step ? (s->c_thread >= 0 ? s->c_thread : (long)s->g_thread) : -1);
}

/* vCont;action[:thread];...: a step action steps its thread alone, else all continue. */
static void handle_vcont(struct server *s, const char *p)
{
	long step = -2, t;
	bool cont = false;

	while (*p == ';') {
		const char *a = ++p, *colon;
		char tid[40];
		size_t n;

		while (*p && *p != ';')
			p++;
		colon = memchr(a, ':', (size_t)(p - a));
		if (*a == 'c' || *a == 's') {
			if (a + 1 != (colon ? colon : p))
				goto bad;
		} else if (*a == 'C' || *a == 'S') {
			if (gdb_packet__hex(a[1]) < 0 || gdb_packet__hex(a[2]) < 0 ||
			    a + 3 != (colon ? colon : p))
				goto bad;
		} else {
			goto bad;
		}
		t = -1;
		if (colon) {
			n = (size_t)(p - colon - 1);
			if (!n || n >= sizeof(tid))
				goto bad;
			memcpy(tid, colon + 1, n);
			tid[n] = '\0';
			if (parse_thread(s, tid, &t))
				goto bad;
		}
		if (*a == 's' || *a == 'S') {
			if (step == -2)
				step = t >= 0 ? t : (long)s->g_thread;
		} else {
			cont = true;
		}
	}
	if (*p || (step == -2 && !cont))
		goto bad;
	resume(s, step >= 0 ? step : -1);
	return;
bad:
	reply_str(s, "E01");
}

/* One packet's reply into s->reply. */
static void dispatch(struct server *s, const char *p)
{
	long t;

	s->reply_len = 0;
	switch (p[0]) {
	case 'q':
		handle_q(s, p);
		break;
	case 'Q':
		handle_Q(s, p);
		break;
	case '?':
		reply_stop(s);
		break;
	case 'H':
		handle_h(s, p + 1);
		break;
	case 'T':
		reply_str(s, parse_thread(s, p + 1, &t) || t < 0 ? "E01" : "OK");
		break;
	case 'g':
		handle_regs(s);
		break;
	case 'p':
		handle_reg(s, p + 1);
		break;
	case 'm':
		handle_mem(s, p + 1);
		break;
	case 'G':
	case 'P':
	case 'M':
	case 'X':
		if (!s->live)
			reply_str(s, "E.The trace is read-only.");
		else if (p[0] == 'G')
			handle_write_regs(s, p + 1, s->pkt_len - 1);
		else if (p[0] == 'P')
			handle_write_reg(s, p + 1, s->pkt_len - 1);
		else
			handle_write_mem(s, p + 1, s->pkt_len - 1, p[0] == 'X');
		break;
	case 'Z':
	case 'z':
		if (s->live)
			handle_breakpoint(s, p + 1, p[0] == 'Z');
		else
			reply_str(s, "");
		break;
	case 'c':
	case 's':
	case 'C':
	case 'S':
		if (s->live)
			handle_resume(s, p, p[0] == 's' || p[0] == 'S');
		else
			reply_str(s, "E.A recorded trace does not run: use reverse execution or "
				     "record goto.");
		break;
	case 'D':
		reply_str(s, "OK");
		s->done = true;
		break;
	case 'k':
		s->done = true;
		break;
	case 'v':
		if (!strcmp(p, "vMustReplyEmpty"))
			reply_str(s, "");
		else if (!strcmp(p, "vCont?"))
			reply_str(s, s->live ? "vCont;c;C;s;S" : "");
		else if (!strncmp(p, "vCont;", 6) && s->live)
			handle_vcont(s, p + 5);
		else if (!strncmp(p, "vCont;", 6))
			reply_str(s, "E.A recorded trace does not run: use reverse execution "
				     "or record goto.");
		else if (!strncmp(p, "vFile:", 6) && s->ops->files)
			handle_vfile(s, p + 6);
		else if (!strncmp(p, "vKill", 5)) {
			reply_str(s, "OK");
			s->done = true;
		} else {
			reply_str(s, "");
		}
		break;
	default:
		reply_str(s, "");
		break;
	}
}

static int set_err(char *err, size_t errlen, int ret, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return ret;
}

/*
 * A live target's event: its stop while it runs (the stop reply), or its end. Returns 1 when
 * the session is over (the target ended), 0 to go on, -errno.
 */
static int target_event(struct server *s, char *err, size_t errlen)
{
	struct gdb_stop st;
	int ret;

	ret = s->ops->stopped(s->ctx, &st);
	if (ret < 0) {
		snprintf(err, errlen, "the target: %s", strerror(-ret));
		return ret;
	}
	if (!ret || (!s->running && st.kind != GDB_STOP_EXITED))
		return 0;
	s->stop = st;
	if (st.kind == GDB_STOP_SIGNAL && st.thread < s->nr_threads)
		s->g_thread = st.thread;
	if (s->running) {
		s->running = false;
		s->reply_len = 0;
		reply_stop(s);
		ret = send_reply(s);
		if (ret)
			return set_err(err, errlen, ret, "write failed");
	}
	return st.kind == GDB_STOP_EXITED;
}

/* Wait until the connection has bytes; a live target's events are handled meanwhile. */
static int wait_input(struct server *s, char *err, size_t errlen)
{
	struct pollfd pfd[2];
	int ret;

	if (!s->live)
		return 0;
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = s->in_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = s->ops->event_fd(s->ctx), .events = POLLIN };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			return ret;
		}
		if (pfd[1].revents) {
			ret = target_event(s, err, errlen);
			if (ret)
				return ret;
		}
		if (pfd[0].revents)
			return 0;
	}
}

static int run_loop(struct server *s, char *err, size_t errlen)
{
	unsigned int bad_sums = 0;
	uint8_t buf[READ_CHUNK];
	bool ack_pending = false;
	ssize_t n;
	int ret;

	for (;;) {
		ret = wait_input(s, err, errlen);
		if (ret)
			return ret < 0 ? ret : 0;
		n = read(s->in_fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(err, errlen, "read: %s", strerror(errno));
			return ret;
		}
		if (!n) {
			if (s->parser.state)
				return set_err(err, errlen, -EPIPE,
					       "connection closed inside a packet");
			return 0;
		}
		for (ssize_t i = 0; i < n; i++) {
			switch (gdb_packet_parser__feed(&s->parser, buf[i])) {
			case GDB_PKT_MORE:
			case GDB_PKT_ACK:
				break;
			case GDB_PKT_INTERRUPT:
				if (s->running)
					s->ops->interrupt(s->ctx);
				break;
			case GDB_PKT_NAK:
				if (s->sent_len && !s->noack) {
					ret = fd__write_all(s->out_fd, s->sent, s->sent_len);
					if (ret)
						return set_err(err, errlen, ret, "write failed");
				}
				break;
			case GDB_PKT_BAD_SUM:
				if (++bad_sums > BAD_SUM_MAX)
					return set_err(err, errlen, -EPROTO,
						       "too many packets with bad checksums");
				if (!s->noack) {
					ret = fd__write_all(s->out_fd, "-", 1);
					if (ret)
						return set_err(err, errlen, ret, "write failed");
				}
				break;
			case GDB_PKT_TOO_LONG:
				snprintf(err, errlen, "packet longer than %d bytes", GDB_PACKET_MAX);
				return -EMSGSIZE;
			case GDB_PKT_BAD:
				return set_err(err, errlen, -EPROTO, "garbage on the connection");
			case GDB_PKT_READY:
				bad_sums = 0;
				ack_pending = !s->noack;
				if (ack_pending) {
					ret = fd__write_all(s->out_fd, "+", 1);
					if (ret)
						return set_err(err, errlen, ret, "write failed");
				}
				s->pkt_len = s->parser.len;
				if (s->running) {
					/* All-stop: only a ^C may come before the stop reply. */
					reply_str(s, "E.The target is running.");
					ret = send_reply(s);
					if (ret)
						return set_err(err, errlen, ret, "write failed");
					break;
				}
				dispatch(s, s->parser.data);
				if (s->running)
					break;  /* the reply is the stop, when it comes */
				if (s->done && !s->reply_len && s->parser.data[0] == 'k')
					return 0;
				ret = send_reply(s);
				if (ret)
					return set_err(err, errlen, ret, "write failed");
				if (s->done)
					return 0;
				break;
			}
		}
	}
}

int gdb_server__run(int in_fd, int out_fd, const struct gdb_target_ops *ops, void *ctx,
		    char *err, size_t errlen)
{
	struct server *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return set_err(err, errlen, -ENOMEM, "out of memory");
	s->in_fd = in_fd;
	s->out_fd = out_fd;
	s->ops = ops;
	s->ctx = ctx;
	s->nr_threads = ops->nr_threads(ctx);
	s->threads = calloc(s->nr_threads ? s->nr_threads : 1, sizeof(*s->threads));
	if (!s->nr_threads || !s->threads) {
		ret = s->nr_threads ? -ENOMEM : -EINVAL;
		free(s->threads);
		free(s);
		return set_err(err, errlen, ret, ret == -ENOMEM ? "out of memory" : "no threads");
	}
	s->c_thread = -1;
	s->live = ops->write_regs && ops->write_mem && ops->breakpoint && ops->resume &&
		  ops->interrupt && ops->event_fd && ops->stopped;
	if (s->live) {
		/* The target is stopped when the session starts: its stop is `?`'s reply. */
		ret = ops->stopped(ctx, &s->stop);
		if (ret <= 0) {
			free(s->threads);
			free(s);
			return set_err(err, errlen, ret ? ret : -EAGAIN, "the target is not stopped");
		}
		if (s->stop.kind == GDB_STOP_SIGNAL && s->stop.thread < s->nr_threads)
			s->g_thread = s->stop.thread;
	}
	/* A target that records when asked starts with every thread off. */
	for (unsigned int t = 0; t < s->nr_threads; t++)
		s->threads[t].off = ops->btrace_enable != NULL;
	for (unsigned int i = 0; i < FILES_OPEN_MAX; i++)
		s->files[i] = -1;
	gdb_packet_parser__init(&s->parser);
	ret = run_loop(s, err, errlen);
	for (unsigned int i = 0; i < FILES_OPEN_MAX; i++)
		if (s->files[i] >= 0)
			close(s->files[i]);
	free(s->doc);
	free(s->threads);
	free(s);
	return ret;
}
