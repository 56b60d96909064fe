// SPDX-License-Identifier: GPL-2.0
/*
 * vbts-agent.c - the in-guest agent: reports processes, their executable mappings and the
 * GNU build IDs of the mapped ELF files over the vbts agent channel, and uploads each such
 * file once (vbts/agent-proto.h, protocol version VBTS_AGENT_PROTO_VERSION).
 *
 * Runs as root in a Linux guest, static, single-threaded. It scans /proc at start, then
 * follows exec and exit through the proc connector (netlink NETLINK_CONNECTOR,
 * PROC_EVENT_EXEC/EXIT). The dynamic loader maps a program's libraries after the exec event,
 * so a process is read again while it is young (VBTS_AGENT_YOUNG_MS) and once more on SIGTERM,
 * when the agent reads all of /proc, finishes its uploads, says goodbye and exits.
 *
 * Transport: in a QEMU guest with the virtio-serial port org.vbts.agent.0
 * (/dev/virtio-ports/org.vbts.agent.0, read on the host by `vbts attach --agent`), whole lines
 * written to it; else, in the vbts VMM, `outb` to port 0x700 after ioperm() when that works
 * (a probe write of a newline, which the host ignores, under a SIGSEGV guard: in a nested
 * guest `out` faults even after a successful ioperm), else one-byte pwrite()s to /dev/port at
 * offset 0x700 (the kernel's /dev/port writes consecutive bytes to consecutive ports, so each
 * byte is its own write). The lines and their bounds are the same on every transport.
 *
 *   vbts-agent [-t auto|virtio|ioperm|devport|stdout] [-m FILE_MAX] [-b BUDGET] [-n] [-1]
 *              [-r BYTES] [-w FILE]
 *
 * -n: no uploads; -1: scan /proc once, upload, exit; -r BYTES: write BYTES bytes of empty
 * lines through the transport and print the rate (bytes/s) on stdout, then exit; -w FILE:
 * write "ready" to FILE (a FIFO, say) once the first /proc scan is reported and SIGTERM is
 * handled, so a script knows when it may stop the agent.
 */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vbts/agent-base64.h>
#include <vbts/agent-proto.h>

#define YOUNG_MS 3000          /* a process's maps are read again while it is this young */
#define POLL_MS 200            /* between those reads */
#define UPLOAD_SLICE 16        /* upload chunks sent between looks at the proc connector */
#define MAX_PROCS 4096         /* processes followed */
#define MAX_MAPS 256           /* executable mappings reported per process */
#define MAX_FILES 2048         /* ELF files whose build ID is known */
#define NOTES_MAX (64 << 10)   /* bytes of PT_NOTE read per file */
#define PHNUM_MAX 256          /* program headers looked at */

enum transport { T_AUTO, T_VIRTIO, T_IOPERM, T_DEVPORT, T_STDOUT };

struct file_id {
	dev_t dev;
	ino_t ino;
	char build_id[2 * VBTS_AGENT_BUILD_ID_MAX / 2 * 2 + 1];
	char path[VBTS_AGENT_PATH_MAX + 1];
	bool sent; /* uploaded, or refused by the limits */
	bool uploaded; /* its upload was started */
};

struct proc {
	int pid; /* 0: free */
	uint64_t born_ms;
	unsigned int nr_maps;
	uint64_t maps[MAX_MAPS]; /* start addresses reported */
};

struct agent {
	enum transport t;
	int port_fd;
	uint64_t file_max;
	uint64_t budget;
	bool uploads;
	uint64_t sent_bytes;
	int up_fd;         /* the upload in progress, or -1 */
	uint64_t up_off;   /* bytes of it sent */
	uint64_t up_size;  /* its size */
	uint64_t lines_dropped;
	struct proc procs[MAX_PROCS];
	struct file_id files[MAX_FILES];
	unsigned int nr_files;
};

static volatile sig_atomic_t stop;
static sigjmp_buf probe_jmp;

static void on_term(int sig)
{
	stop = 1;
}

static void on_probe_fault(int sig)
{
	siglongjmp(probe_jmp, 1);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- transport ------------------------------------------------------------------------- */

static bool ioperm_works(void)
{
	struct sigaction sa = { .sa_handler = on_probe_fault }, old_segv, old_bus;
	bool ok = false;

	if (ioperm(VBTS_AGENT_PORT, 1, 1) < 0)
		return false;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (!sigsetjmp(probe_jmp, 1)) {
		outb('\n', VBTS_AGENT_PORT); /* an empty line: the host ignores it */
		ok = true;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return ok;
}

static int transport_open(struct agent *a)
{
	if (a->t == T_STDOUT)
		return 0;
	if (a->t == T_AUTO || a->t == T_VIRTIO) {
		a->port_fd = open(VBTS_AGENT_VIRTIO_PATH, O_WRONLY | O_CLOEXEC);
		if (a->port_fd >= 0) {
			a->t = T_VIRTIO;
			return 0;
		}
		if (a->t == T_VIRTIO) {
			fprintf(stderr, "vbts-agent: %s: %s\n", VBTS_AGENT_VIRTIO_PATH,
				strerror(errno));
			return -1;
		}
	}
	if ((a->t == T_AUTO || a->t == T_IOPERM) && ioperm_works()) {
		a->t = T_IOPERM;
		return 0;
	}
	if (a->t == T_IOPERM) {
		fprintf(stderr, "vbts-agent: port I/O at 0x%x does not work here\n",
			VBTS_AGENT_PORT);
		return -1;
	}
	a->port_fd = open("/dev/port", O_WRONLY | O_CLOEXEC);
	if (a->port_fd < 0) {
		fprintf(stderr, "vbts-agent: /dev/port: %s\n", strerror(errno));
		return -1;
	}
	a->t = T_DEVPORT;
	return 0;
}

static void send_bytes(struct agent *a, const char *buf, size_t n)
{
	switch (a->t) {
	case T_IOPERM:
		for (size_t i = 0; i < n; i++)
			outb((unsigned char)buf[i], VBTS_AGENT_PORT);
		break;
	case T_DEVPORT:
		for (size_t i = 0; i < n; i++)
			while (pwrite(a->port_fd, buf + i, 1, VBTS_AGENT_PORT) < 0 &&
			       errno == EINTR)
				;
		break;
	case T_VIRTIO:
		/* Whole lines; an error (the port went away) loses the rest of this one. */
		for (size_t done = 0; done < n;) {
			ssize_t w = write(a->port_fd, buf + done, n - done);

			if (w > 0)
				done += (size_t)w;
			else if (w < 0 && errno != EINTR)
				break;
		}
		break;
	default:
		fwrite(buf, 1, n, stdout);
		fflush(stdout);
		break;
	}
	a->sent_bytes += n;
}

/* One message: printf into a line; a line the host would drop is not sent at all. */
__attribute__((format(printf, 2, 3)))
static void send_line(struct agent *a, const char *fmt, ...)
{
	char line[VBTS_AGENT_LINE_MAX + 2];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n > VBTS_AGENT_LINE_MAX) {
		a->lines_dropped++;
		return;
	}
	line[n++] = '\n';
	send_bytes(a, line, (size_t)n);
}

/* A JSON string's inside for @s: controls, quote, backslash and non-ASCII bytes escaped. */
static bool json_escape(char *out, size_t cap, const char *s)
{
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (o + 7 > cap)
			return false;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	out[o] = '\0';
	return true;
}

/* ---- ELF build IDs ---------------------------------------------------------------------- */

static bool read_exact(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = pread(fd, buf, n, off);

	return r == (ssize_t)n;
}

/* The GNU build ID note of an ELF64 file: bounded reads of its PT_NOTE segments. */
static bool elf_build_id(int fd, char *hex, size_t hexlen)
{
	static unsigned char notes[NOTES_MAX];
	Elf64_Ehdr eh;

	if (!read_exact(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return false;
	for (unsigned int i = 0; i < eh.e_phnum && i < PHNUM_MAX; i++) {
		Elf64_Phdr ph;
		size_t off = 0, len;

		if (!read_exact(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))))
			return false;
		if (ph.p_type != PT_NOTE || !ph.p_filesz || ph.p_filesz > NOTES_MAX)
			continue;
		len = ph.p_filesz;
		if (!read_exact(fd, notes, len, (off_t)ph.p_offset))
			continue;
		while (off + sizeof(Elf64_Nhdr) <= len) {
			Elf64_Nhdr nh;
			size_t align = ph.p_align == 8 ? 8 : 4, name, desc;

			memcpy(&nh, notes + off, sizeof(nh));
			name = off + sizeof(nh);
			desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
			if (nh.n_namesz > len || nh.n_descsz > len || desc > len ||
			    nh.n_descsz > len - desc)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(notes + name, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= VBTS_AGENT_BUILD_ID_MAX / 2 &&
			    nh.n_descsz * 2 + 1 <= hexlen) {
				for (size_t k = 0; k < nh.n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", notes[desc + k]);
				return true;
			}
			off = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
		}
	}
	return false;
}

/* The known file for @path (its build ID read once per device and inode); NULL: none. */
static struct file_id *file_lookup(struct agent *a, const char *path)
{
	struct file_id *f;
	struct stat st;
	int fd;

	if (strlen(path) > VBTS_AGENT_PATH_MAX)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	for (unsigned int i = 0; i < a->nr_files; i++) {
		if (a->files[i].dev == st.st_dev && a->files[i].ino == st.st_ino) {
			close(fd);
			return &a->files[i];
		}
	}
	if (a->nr_files == MAX_FILES) {
		close(fd);
		return NULL;
	}
	f = &a->files[a->nr_files];
	memset(f, 0, sizeof(*f));
	if (!elf_build_id(fd, f->build_id, sizeof(f->build_id))) {
		close(fd);
		return NULL;
	}
	close(fd);
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	snprintf(f->path, sizeof(f->path), "%s", path);
	a->nr_files++;
	return f;
}

/*
 * Start sending @f, once, when it fits the per-file limit and what is left of the budget and
 * still has the build ID reported (the host checks that too). Return: whether it started.
 */
static bool upload_start(struct agent *a, struct file_id *f)
{
	char id[sizeof(f->build_id)];
	struct stat st;
	uint64_t size;
	int fd;

	f->sent = true;
	/* Another file with the same build ID (a copy, a hard link elsewhere) went already. */
	for (unsigned int i = 0; i < a->nr_files; i++)
		if (a->files[i].uploaded && !strcmp(a->files[i].build_id, f->build_id))
			return false;
	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_dev != f->dev || st.st_ino != f->ino ||
	    !elf_build_id(fd, id, sizeof(id)) || strcmp(id, f->build_id))
		goto err_close;
	size = (uint64_t)st.st_size;
	if (!size || size > a->file_max || size > a->budget)
		goto err_close;
	a->budget -= size;
	send_line(a, "{\"event\":\"agent-elf-begin\",\"v\":%d,\"build_id\":\"%s\",\"size\":%llu}",
		  VBTS_AGENT_PROTO_VERSION, f->build_id, (unsigned long long)size);
	a->up_fd = fd;
	a->up_off = 0;
	a->up_size = size;
	f->uploaded = true;
	return true;

err_close:
	close(fd);
	return false;
}

/*
 * Send at most @chunks chunks of the upload in progress (starting the next file's when there
 * is none), so that reports of new processes are not held up behind a long upload: the host
 * keeps the upload across the report lines in between. Return: whether work is left.
 */
static bool upload_step(struct agent *a, unsigned int chunks)
{
	unsigned char chunk[VBTS_AGENT_ELF_CHUNK];
	char data[4 * VBTS_AGENT_ELF_CHUNK / 3 + 4];

	while (a->up_fd < 0) {
		unsigned int i;

		if (!a->uploads)
			return false;
		for (i = 0; i < a->nr_files && a->files[i].sent; i++)
			;
		if (i == a->nr_files)
			return false;
		upload_start(a, &a->files[i]);
	}
	for (; chunks && a->up_off < a->up_size; chunks--) {
		uint64_t left = a->up_size - a->up_off;
		size_t n = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);

		if (!read_exact(a->up_fd, chunk, n, (off_t)a->up_off)) {
			a->up_off = a->up_size; /* the host drops the short upload at the end */
			break;
		}
		agent_base64__encode(chunk, n, data);
		send_line(a, "{\"event\":\"agent-elf-data\",\"off\":%llu,\"data\":\"%s\"}",
			  (unsigned long long)a->up_off, data);
		a->up_off += n;
	}
	if (a->up_off >= a->up_size) {
		send_line(a, "{\"event\":\"agent-elf-end\"}");
		close(a->up_fd);
		a->up_fd = -1;
	}
	return true;
}

/* ---- processes -------------------------------------------------------------------------- */

static struct proc *proc_get(struct agent *a, int pid, bool create)
{
	struct proc *free_slot = NULL;

	for (unsigned int i = 0; i < MAX_PROCS; i++) {
		if (a->procs[i].pid == pid)
			return &a->procs[i];
		if (!a->procs[i].pid && !free_slot)
			free_slot = &a->procs[i];
	}
	if (!create || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->pid = pid;
	return free_slot;
}

static bool read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Report the executable mappings of @p not reported yet; queue their files' uploads. */
static void report_maps(struct agent *a, struct proc *p)
{
	char path[64], line[4096], esc[VBTS_AGENT_PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int name = 0;
		struct file_id *fi;
		bool seen = false;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &name) < 4 || !name || perms[2] != 'x' || line[name] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (unsigned int i = 0; i < p->nr_maps; i++)
			seen |= p->maps[i] == start;
		if (seen || p->nr_maps == MAX_MAPS)
			continue;
		p->maps[p->nr_maps++] = start;
		fi = file_lookup(a, line + name);
		if (!json_escape(esc, sizeof(esc) < 300 ? sizeof(esc) : 300, line + name))
			esc[0] = '\0';
		send_line(a, "{\"event\":\"agent-map\",\"v\":%d,\"pid\":%d,\"start\":\"0x%llx\","
			  "\"end\":\"0x%llx\",\"offset\":\"0x%llx\"%s%s%s%s%s%s}",
			  VBTS_AGENT_PROTO_VERSION, p->pid, start, end, off,
			  esc[0] ? ",\"path\":\"" : "", esc, esc[0] ? "\"" : "",
			  fi ? ",\"build_id\":\"" : "", fi ? fi->build_id : "", fi ? "\"" : "");
	}
	fclose(f);
}

static void report_proc(struct agent *a, int pid, bool exec)
{
	char path[64], comm[64], exe[VBTS_AGENT_PATH_MAX + 1], esc_comm[128],
		esc_exe[VBTS_AGENT_PATH_MAX + 64], status[1024], *pp;
	struct proc *p = proc_get(a, pid, true);
	ssize_t n;
	int ppid = 0;

	if (!p)
		return;
	if (exec) {
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	p->born_ms = now_ms();
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) /* a kernel thread (nothing mapped), or gone */
		return;
	exe[n] = '\0';
	if (n == (ssize_t)sizeof(exe) - 1)
		exe[0] = '\0'; /* possibly cut: not a fact */
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if (!read_small(path, comm, sizeof(comm)))
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, status, sizeof(status)) && (pp = strstr(status, "\nPPid:")))
		ppid = atoi(pp + 6);
	json_escape(esc_comm, sizeof(esc_comm), comm);
	if (!json_escape(esc_exe, 300, exe))
		esc_exe[0] = '\0';
	send_line(a, "{\"event\":\"agent-proc\",\"v\":%d,\"pid\":%d,\"ppid\":%d,\"comm\":\"%s\""
		  "%s%s%s}", VBTS_AGENT_PROTO_VERSION, pid, ppid, esc_comm,
		  esc_exe[0] ? ",\"exe\":\"" : "", esc_exe, esc_exe[0] ? "\"" : "");
	report_maps(a, p);
}

static void scan_proc(struct agent *a)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int pid = atoi(de->d_name);
		struct proc *p;

		if (pid <= 0 || pid == getpid())
			continue;
		p = proc_get(a, pid, false);
		if (p)
			report_maps(a, p);
		else
			report_proc(a, pid, false);
	}
	closedir(d);
}

static void rescan_young(struct agent *a)
{
	uint64_t now = now_ms();

	for (unsigned int i = 0; i < MAX_PROCS; i++)
		if (a->procs[i].pid && now - a->procs[i].born_ms < YOUNG_MS)
			report_maps(a, &a->procs[i]);
}

/* All uploads, to the end. */
static void upload_all(struct agent *a)
{
	while (upload_step(a, UINT32_MAX))
		;
}

/* ---- proc connector --------------------------------------------------------------------- */

static int connector_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC,
				  .nl_pid = (uint32_t)getpid() };
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto err_close;
	memset(&msg, 0, sizeof(msg));
	msg.nl.nlmsg_len = sizeof(msg);
	msg.nl.nlmsg_type = NLMSG_DONE;
	msg.nl.nlmsg_pid = (uint32_t)getpid();
	msg.cn.id.idx = CN_IDX_PROC;
	msg.cn.id.val = CN_VAL_PROC;
	msg.cn.len = sizeof(enum proc_cn_mcast_op);
	msg.op = PROC_CN_MCAST_LISTEN;
	if (send(fd, &msg, sizeof(msg), 0) < 0)
		goto err_close;
	return fd;

err_close:
	close(fd);
	return -1;
}

/* Read what the connector has; Return: false when events were lost (rescan /proc). */
static bool connector_read(struct agent *a, int fd)
{
	char buf[8192] __attribute__((aligned(8)));
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			struct cn_msg *cn = NLMSG_DATA(nh);
			struct proc_event *ev = (struct proc_event *)cn->data;
			struct proc *p;

			if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(*ev)) ||
			    cn->id.idx != CN_IDX_PROC)
				continue;
			if (ev->what == PROC_EVENT_EXEC &&
			    ev->event_data.exec.process_pid == ev->event_data.exec.process_tgid) {
				report_proc(a, ev->event_data.exec.process_tgid, true);
			} else if (ev->what == PROC_EVENT_EXIT &&
				   ev->event_data.exit.process_pid ==
				   ev->event_data.exit.process_tgid) {
				int pid = ev->event_data.exit.process_tgid;
				unsigned int code = ev->event_data.exit.exit_code;

				p = proc_get(a, pid, false);
				if (!p)
					continue;
				p->pid = 0;
				send_line(a, "{\"event\":\"agent-exit\",\"v\":%d,\"pid\":%d,"
					  "\"code\":%u,\"signal\":%u}", VBTS_AGENT_PROTO_VERSION,
					  pid, (code >> 8) & 0xff, code & 0x7f);
			}
		}
	}
	return !(n < 0 && errno == ENOBUFS);
}

/* ---- main ------------------------------------------------------------------------------- */

static int measure(struct agent *a, uint64_t bytes)
{
	char line[64];
	uint64_t t0, t1;

	memset(line, '\n', sizeof(line)); /* empty lines: the host ignores them */
	t0 = now_ms();
	for (uint64_t done = 0; done < bytes; done += sizeof(line))
		send_bytes(a, line, sizeof(line));
	t1 = now_ms();
	printf("vbts-agent: transport %s: %llu bytes in %llu ms: %llu bytes/s\n",
	       a->t == T_IOPERM ? "ioperm" : a->t == T_DEVPORT ? "/dev/port" :
	       a->t == T_VIRTIO ? "virtio" : "stdout",
	       (unsigned long long)a->sent_bytes, (unsigned long long)(t1 - t0),
	       (unsigned long long)(a->sent_bytes * 1000 / (t1 - t0 ? t1 - t0 : 1)));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: vbts-agent [-t auto|virtio|ioperm|devport|stdout] [-m FILE_MAX] "
			"[-b BUDGET] [-n] [-1] [-r BYTES] [-w FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct agent a = {
		.t = T_AUTO, .port_fd = -1, .up_fd = -1, .file_max = 1 << 20, .budget = 16 << 20,
		.uploads = true,
	};
	struct sigaction sa = { .sa_handler = on_term };
	uint64_t rate = 0;
	const char *ready = NULL;
	bool once = false;
	int opt, nl;

	/* First of all: a SIGTERM sent right after the start must not kill the agent unheard. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while ((opt = getopt(argc, argv, "t:m:b:n1r:w:")) != -1) {
		switch (opt) {
		case 't':
			if (!strcmp(optarg, "auto"))
				a.t = T_AUTO;
			else if (!strcmp(optarg, "virtio"))
				a.t = T_VIRTIO;
			else if (!strcmp(optarg, "ioperm"))
				a.t = T_IOPERM;
			else if (!strcmp(optarg, "devport"))
				a.t = T_DEVPORT;
			else if (!strcmp(optarg, "stdout"))
				a.t = T_STDOUT;
			else
				usage();
			break;
		case 'm':
			a.file_max = strtoull(optarg, NULL, 0);
			if (a.file_max > VBTS_AGENT_ELF_FILE_MAX)
				a.file_max = VBTS_AGENT_ELF_FILE_MAX;
			break;
		case 'b':
			a.budget = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			a.uploads = false;
			break;
		case '1':
			once = true;
			break;
		case 'r':
			rate = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			ready = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (transport_open(&a) < 0)
		return 1;
	if (rate)
		return measure(&a, rate);

	nl = once ? -1 : connector_open();
	send_line(&a, "{\"event\":\"agent-hello\",\"v\":%d,\"pid\":%d}", VBTS_AGENT_PROTO_VERSION,
		  (int)getpid());
	scan_proc(&a);
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "ready\n", 6) != 6)
			fprintf(stderr, "vbts-agent: %s: %s\n", ready, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (once)
		upload_all(&a);
	while (!once && !stop) {
		struct pollfd pfd = { .fd = nl, .events = POLLIN };

		if (nl >= 0 && poll(&pfd, 1, POLL_MS) > 0) {
			if (!connector_read(&a, nl))
				scan_proc(&a);
		} else if (nl < 0) {
			poll(NULL, 0, POLL_MS);
			scan_proc(&a);
		}
		rescan_young(&a);
		upload_step(&a, UPLOAD_SLICE);
	}
	if (!once) {
		/* The last look: libraries loaded since, then the files not sent yet. */
		if (nl >= 0)
			connector_read(&a, nl);
		scan_proc(&a);
		upload_all(&a);
	}
	send_line(&a, "{\"event\":\"agent-bye\",\"v\":%d,\"bytes\":%llu,\"dropped\":%llu}",
		  VBTS_AGENT_PROTO_VERSION, (unsigned long long)a.sent_bytes,
		  (unsigned long long)a.lines_dropped);
	return 0;
}
