// SPDX-License-Identifier: GPL-2.0
/*
 * crash-report.c - crash.json and crash-N.json: a crash's reason, vCPU, registers, process and
 * the last branches of the task that crashed, copied out of its ring.
 *
 * Locking: none. crash_report__collect() runs on the ring writer's thread (the vCPU's).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash-file.h"
#include "crash-report.h"
#include "escape.h"
#include "fd-io.h"
#include "ring-writer.h"
#include "trace-keys.h"

/* The address-space id bits of a CR3 (as GUEST_TASKS_CR3_ID). */
#define TASK_ID_BITS 0x7fffffffffffe000ULL

unsigned int crash_report__collect(const struct ring_writer *w, uint64_t id, unsigned int n,
				   struct vbts_record *out, uint64_t *seq)
{
	uint64_t end = ring_writer__committed(w), first, s, cur = ~0ULL, total = 0;
	struct vbts_record r;
	unsigned int i, nr;

	*seq = end;
	if (!n)
		return 0;
	first = end > CRASH_REPORT_WINDOW ? end - CRASH_REPORT_WINDOW : 0;
	/* Records before the first one still there are gone: the first readable is the start. */
	for (s = first; s < end && ring_writer__read(w, s, &r); s++)
		;
	/* Forward, so that each branch has the task of the TASK_ARRIVE before it: a ring of n. */
	for (; s < end; s++) {
		if (ring_writer__read(w, s, &r))
			continue;
		if (vbts_record__is_escape(&r)) {
			switch (vbts_record__escape_kind(&r)) {
			case VBTS_ESC_TASK_ARRIVE:
				cur = r.to & TASK_ID_BITS;
				break;
			case VBTS_ESC_TASK_DEPART:
				cur = ~0ULL;
				break;
			default:
				break;
			}
			continue;
		}
		if (id != ~0ULL && cur != (id & TASK_ID_BITS))
			continue;
		out[total % n] = r;
		total++;
	}
	nr = total < n ? (unsigned int)total : n;
	if (total > n) {
		/* Oldest first: rotate the ring of n so that its oldest entry comes first. */
		struct vbts_record *tmp = malloc(n * sizeof(*tmp));

		if (!tmp)
			return 0;
		for (i = 0; i < n; i++)
			tmp[i] = out[(total + i) % n];
		memcpy(out, tmp, n * sizeof(*tmp));
		free(tmp);
	}
	return nr;
}

const char *crash_report__signal_name(int signo)
{
	/* Linux x86's numbers: the guest's, not the host's <signal.h>. */
	switch (signo) {
	case 4:
		return "SIGILL";
	case 6:
		return "SIGABRT";
	case 7:
		return "SIGBUS";
	case 8:
		return "SIGFPE";
	case 11:
		return "SIGSEGV";
	default:
		return NULL;
	}
}

const char *crash_report__kind_name(enum crash_kind kind)
{
	switch (kind) {
	case CRASH_PROCESS:
		return CRASH_REASON_PROCESS;
	case CRASH_PANIC:
		return "panic";
	case CRASH_TRIPLE_FAULT:
		return "triple-fault";
	}
	return "unknown";
}

static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%#" PRIx64, v);
	return json_string(buf);
}

/* Guest bytes as valid UTF-8: each byte that starts no valid sequence becomes U+FFFD. */
static json_t *guest_string(const char *s, size_t max)
{
	char *buf = escape__utf8_dup(s, max);
	json_t *j;

	if (!buf)
		return NULL;
	j = json_string(buf);
	free(buf);
	return j;
}

static int set(json_t *o, const char *key, json_t *v)
{
	return v && !json_object_set_new(o, key, v) ? 0 : -ENOMEM;
}

static json_t *regs_json(const struct crash_regs *g)
{
	const uint64_t v[CRASH_REG_NR] = {
		[CRASH_REG_RIP] = g->rip, [CRASH_REG_RSP] = g->rsp, [CRASH_REG_RBP] = g->rbp,
		[CRASH_REG_RFLAGS] = g->rflags, [CRASH_REG_RAX] = g->rax, [CRASH_REG_RBX] = g->rbx,
		[CRASH_REG_RCX] = g->rcx, [CRASH_REG_RDX] = g->rdx, [CRASH_REG_RSI] = g->rsi,
		[CRASH_REG_RDI] = g->rdi, [CRASH_REG_R8] = g->r8, [CRASH_REG_R9] = g->r9,
		[CRASH_REG_R10] = g->r10, [CRASH_REG_R11] = g->r11, [CRASH_REG_R12] = g->r12,
		[CRASH_REG_R13] = g->r13, [CRASH_REG_R14] = g->r14, [CRASH_REG_R15] = g->r15,
		[CRASH_REG_CS] = g->cs, [CRASH_REG_SS] = g->ss, [CRASH_REG_CR0] = g->cr0,
		[CRASH_REG_CR2] = g->cr2, [CRASH_REG_CR3] = g->cr3, [CRASH_REG_CR4] = g->cr4,
		[CRASH_REG_EFER] = g->efer,
	};
	json_t *o = json_object();

	/* In enum crash_file_reg's order, the reader's names. */
	for (unsigned int i = 0; o && i < CRASH_REG_NR; i++) {
		if (set(o, crash_file__reg_name(i), hex(v[i]))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *report_json(const struct crash_report *r)
{
	json_t *o = json_object(), *br, *p;
	const char *sig;
	int ret = 0;

	if (!o)
		return NULL;
	ret |= set(o, CRASH_KEY_VERSION, json_integer(CRASH_REPORT_VERSION));
	ret |= set(o, CRASH_KEY_REASON, json_string(crash_report__kind_name(r->kind)));
	if (r->kind == CRASH_PROCESS) {
		sig = crash_report__signal_name(r->signo);
		ret |= set(o, CRASH_KEY_SIGNAL, sig ? json_string(sig) : json_null());
		ret |= set(o, CRASH_KEY_SIGNO, json_integer(r->signo));
	}
	ret |= set(o, CRASH_KEY_TIME, json_integer((json_int_t)r->time_ns));
	ret |= set(o, CRASH_KEY_VCPU, json_integer(r->vcpu));
	ret |= set(o, CRASH_KEY_CR3, r->cr3 ? hex(r->cr3) : json_null());
	if (r->have_process) {
		p = json_pack("{s:i, s:i}", CRASH_KEY_PROCESS_PID, (int)r->pid,
			      CRASH_KEY_PROCESS_TGID, (int)r->tgid);
		ret |= set(o, CRASH_KEY_PROCESS, p);
		if (p)
			ret |= set(p, CRASH_KEY_PROCESS_COMM, guest_string(r->comm, sizeof(r->comm)));
	} else {
		ret |= set(o, CRASH_KEY_PROCESS, json_null());
	}
	ret |= set(o, CRASH_KEY_REGISTERS, r->have_regs ? regs_json(&r->regs) : json_null());
	if (r->regs_note)
		ret |= set(o, CRASH_KEY_REGISTERS_NOTE, json_string(r->regs_note));
	ret |= set(o, CRASH_KEY_RING_SEQ, json_integer((json_int_t)r->ring_seq));
	ret |= set(o, CRASH_KEY_BRANCHES_REQUESTED, json_integer(r->requested));
	br = json_array();
	ret |= set(o, CRASH_KEY_BRANCHES, br);
	for (unsigned int i = 0; br && i < r->nr_branches; i++) {
		json_t *b = json_object();

		if (!b || json_array_append_new(br, b)) {
			ret = -ENOMEM;
			break;
		}
		ret |= set(b, CRASH_KEY_FROM, hex(r->branches[i].from));
		ret |= set(b, CRASH_KEY_TO, hex(r->branches[i].to));
		ret |= set(b, CRASH_KEY_FLAGS, hex(r->branches[i].flags));
	}
	if (ret) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int (*annotate)(const char *dir, json_t *report);

void crash_report__set_annotate(int (*fn)(const char *dir, json_t *report))
{
	annotate = fn;
}

/* How a report is written: one member a line, ASCII only. */
#define DUMP_FLAGS (JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

/*
 * @o into @path, through @path.tmp@suffix renamed over it: -EFBIG, nothing written, when it
 * would be more than a report may be (CRASH_FILE_SIZE_MAX).
 */
static int write_json(const char *path, const char *suffix, json_t *o)
{
	char tmp[4096 + 16], *text;
	size_t len;
	int ret, fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%s", path, suffix) >= sizeof(tmp))
		return -ENAMETOOLONG;
	text = json_dumps(o, DUMP_FLAGS);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (len + 1 > CRASH_FILE_SIZE_MAX) {
		free(text);
		return -EFBIG;
	}
	text[len++] = '\n'; /* in place of the NUL: written by length */
	/* A new file, whatever was under the name: never a FIFO's open, never through a link. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	ret = fd__write_all(fd, text, len);
	free(text);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		goto err_unlink;
	if (rename(tmp, path)) {
		ret = -errno;
		goto err_unlink;
	}
	return 0;

err_unlink:
	unlink(tmp);
	return ret;
}

/* The bytes member @key of @b adds to a report, about (written alone, less indented). */
static size_t member_cost(json_t *b, const char *key)
{
	json_t *v = json_object_get(b, key);
	char *text;
	size_t n;

	if (!v)
		return 0;
	text = json_dumps(v, DUMP_FLAGS | JSON_ENCODE_ANY);
	n = text ? strlen(text) + strlen(key) + 8 : 0;
	free(text);
	return n;
}

/*
 * A report with symbols within CRASH_FILE_SIZE_MAX: the symbols of the oldest branches are left
 * out, as many as it takes, and the report says how many. Returns 0, or -EFBIG when even the
 * report without them would not fit.
 */
static int fit_symbols(json_t *o)
{
	json_t *br = json_object_get(o, CRASH_KEY_BRANCHES);
	size_t nr = json_array_size(br), next = 0, len, over, freed;
	char *text;

	for (;;) {
		text = json_dumps(o, DUMP_FLAGS);
		if (!text)
			return -ENOMEM;
		len = strlen(text) + 1;
		free(text);
		if (len <= CRASH_FILE_SIZE_MAX)
			return 0;
		if (next == nr)
			return -EFBIG;
		over = len - CRASH_FILE_SIZE_MAX;
		for (freed = 0; next < nr && freed < over; next++) {
			json_t *b = json_array_get(br, next);

			freed += member_cost(b, CRASH_KEY_FROM_SYMBOL) +
				 member_cost(b, CRASH_KEY_TO_SYMBOL);
			json_object_del(b, CRASH_KEY_FROM_SYMBOL);
			json_object_del(b, CRASH_KEY_TO_SYMBOL);
		}
		json_object_set_new(o, CRASH_KEY_SYMBOLS_NOTE,
				    json_sprintf("no symbols for the %zu oldest branches: a report is "
						 "at most %u MiB", next, CRASH_FILE_SIZE_MAX >> 20));
	}
}

/*
 * The report again, with its branches' symbols, written by a child process: the symbols come
 * from ELF files the guest uploaded, and whatever they do to their reader (a crash, a hang
 * cut by CRASH_REPORT_SYMBOLS_SECONDS) leaves the VMM running and the report written before.
 */
static void write_symbols(const char *dir, const char *path, json_t *o)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		sigset_t none;

		/* The vCPU thread's mask and handlers are not the child's: SIGALRM must end it. */
		sigemptyset(&none);
		signal(SIGALRM, SIG_DFL);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		alarm(CRASH_REPORT_SYMBOLS_SECONDS);
		if (annotate(dir, o) > 0 && (fit_symbols(o) || write_json(path, ".sym", o)))
			_exit(1);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

int crash_report__write(const char *dir, unsigned int index, const struct crash_report *r)
{
	char path[4096];
	json_t *o = report_json(r);
	int ret;

	if (!o)
		return -ENOMEM;
	if (index)
		ret = snprintf(path, sizeof(path), "%s/" CRASH_JSON_FILE_N, dir, index);
	else
		ret = snprintf(path, sizeof(path), "%s/" CRASH_JSON_FILE, dir);
	if (ret < 0 || (size_t)ret >= sizeof(path)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	ret = write_json(path, "", o);
	/* Symbols are a help: the report stands without them. */
	if (!ret && annotate)
		write_symbols(dir, path, o);
out:
	json_decref(o);
	return ret;
}
