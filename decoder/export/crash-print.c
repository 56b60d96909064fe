// SPDX-License-Identifier: GPL-2.0
/*
 * crash-print.c - a crash report as a person reads a backtrace: what died, the process, where
 * it crashed, then its last branches newest first with their symbols.
 *
 * The report is read as hostile input: bounded in size, every member checked for its type,
 * every string escaped before it is printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "annotator.h"
#include "crash-print.h"
#include "escape.h"
#include "procmap.h"

/* Where user space ends on x86-64 (canonical lower half). */
#define USER_TOP 0x0000800000000000ULL
/* Escaped bytes of a string from the report, at most. */
#define TEXT_MAX 256

struct branch {
	uint64_t from, to, flags;
	json_t *sym[2];         /* from_symbol, to_symbol of the report (crash-symbols.h), or NULL */
};

/* What is known of one address: the report's symbols, else the annotator's. */
struct site {
	char function[TEXT_MAX], file[TEXT_MAX], module[TEXT_MAX];
	uint64_t offset;
	int64_t line;
};

/* Exceptions by vector, for the line that says where a process crashed. */
static const char *exception_name(unsigned int vector)
{
	static const char *const names[] = {
		[0] = "divide error",        [1] = "debug",           [3] = "breakpoint",
		[4] = "overflow",            [5] = "bound range",     [6] = "invalid opcode",
		[7] = "device not available", [8] = "double fault",   [10] = "invalid TSS",
		[11] = "segment not present", [12] = "stack fault",   [13] = "general protection",
		[14] = "page fault",         [16] = "x87 error",      [17] = "alignment check",
		[18] = "machine check",      [19] = "SIMD floating point",
	};

	return vector < sizeof(names) / sizeof(names[0]) ? names[vector] : NULL;
}

static unsigned int branch_kind(const struct branch *b)
{
	return (unsigned int)((b->flags & VBTS_REC_KIND_MASK) >> VBTS_REC_KIND_SHIFT);
}

static bool branch_vector(const struct branch *b, unsigned int *vector)
{
	*vector = (unsigned int)((b->flags & VBTS_REC_VECTOR_MASK) >> VBTS_REC_VECTOR_SHIFT);
	return b->flags & VBTS_REC_VECTOR_VALID;
}

/* " (call)", " (exception 14)", as the text output names a branch; nothing when unknown. */
static void print_kind(FILE *out, const struct branch *b)
{
	unsigned int kind = branch_kind(b), vector;

	if (!kind)
		return;
	fprintf(out, " (%s", branch_kind__name(kind));
	if (branch_vector(b, &vector))
		fprintf(out, " %u", vector);
	fputc(')', out);
}

/* "0x..." hex, as the VMM writes addresses; false for anything else. */
static bool get_hex(json_t *o, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(o, key);
	const char *s;
	char *end;

	if (!json_is_string(j))
		return false;
	s = json_string_value(j);
	if (strncmp(s, "0x", 2) && strcmp(s, "0"))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 16);
	return !errno && !*end && end != s;
}

static bool get_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *v)
{
	json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*v = json_integer_value(j);
	return *v >= min && *v <= max;
}

/* A member of a report's symbol object, checked: NULL when absent, false when invalid. */
static bool sym_member(json_t *sym, const char *key, bool text, json_t **v)
{
	*v = json_object_get(sym, key);
	if (!*v)
		return true;
	return text ? json_is_string(*v) : json_is_integer(*v) && json_integer_value(*v) > 0 &&
					     json_integer_value(*v) <= INT32_MAX;
}

/* Whether @sym is a symbol object as crash-symbols.h describes it (or absent). */
static bool sym_valid(json_t *sym)
{
	json_t *v;
	uint64_t off;

	if (!sym)
		return true;
	if (!json_is_object(sym) || !sym_member(sym, "function", true, &v) ||
	    !sym_member(sym, "file", true, &v) || !sym_member(sym, "line", false, &v) ||
	    !sym_member(sym, "module", true, &v))
		return false;
	return !json_object_get(sym, "offset") || get_hex(sym, "offset", &off);
}

/* What the report (@sym), else the annotator, says of @addr; names escaped. */
static void site_of(struct site *w, json_t *sym, struct annotator *a,
		    const struct procmap_task *t, uint64_t addr)
{
	const struct annotator_addr *r;
	json_t *v;

	memset(w, 0, sizeof(*w));
	if (json_is_object(sym)) {
		if ((v = json_object_get(sym, "function")))
			escape__str(w->function, sizeof(w->function), json_string_value(v));
		if (!get_hex(sym, "offset", &w->offset))
			w->offset = 0;
		if ((v = json_object_get(sym, "file")))
			escape__str(w->file, sizeof(w->file), json_string_value(v));
		if ((v = json_object_get(sym, "line")))
			w->line = json_integer_value(v);
		if ((v = json_object_get(sym, "module")))
			escape__str(w->module, sizeof(w->module), json_string_value(v));
		return;
	}
	r = a ? annotator__addr(a, t, addr, true) : NULL;
	if (!r)
		return;
	if (r->name_text)
		snprintf(w->function, sizeof(w->function), "%.*s", (int)r->name_text_len,
			 r->name_text);
	w->offset = r->offset;
	if (r->file_text) {
		snprintf(w->file, sizeof(w->file), "%.*s", (int)r->file_text_len, r->file_text);
		w->line = r->line;
	}
}

/*
 * "0x... name+0xoff at file:line in module", what is known of it ("?" for no name); with
 * @brief the address and name only.
 */
static void print_site(FILE *out, const struct site *w, uint64_t addr, bool brief)
{
	fprintf(out, "%#" PRIx64 " ", addr);
	if (w->function[0])
		fprintf(out, "%s+0x%" PRIx64, w->function, w->offset);
	else
		fputc('?', out);
	if (brief)
		return;
	if (w->file[0])
		fprintf(out, " at %s:%" PRId64, w->file, w->line);
	if (w->module[0])
		fprintf(out, " in %s", w->module);
}

static void addr_sym(FILE *out, json_t *sym, struct annotator *a, const struct procmap_task *t,
		     uint64_t addr)
{
	struct site w;

	site_of(&w, sym, a, t, addr);
	print_site(out, &w, addr, false);
}

/* The address and its name: what print_crashed_in() said of it is not repeated. */
static void addr_brief(FILE *out, json_t *sym, struct annotator *a, const struct procmap_task *t,
		       uint64_t addr)
{
	struct site w;

	site_of(&w, sym, a, t, addr);
	print_site(out, &w, addr, true);
}

/* "crashed in FUNCTION at FILE:LINE in MODULE" of @addr. */
static void print_crashed_in(FILE *out, json_t *sym, struct annotator *a,
			     const struct procmap_task *t, uint64_t addr)
{
	struct site w;

	site_of(&w, sym, a, t, addr);
	fprintf(out, "crashed in %s", w.function[0] ? w.function : "?");
	if (w.file[0])
		fprintf(out, " at %s:%" PRId64, w.file, w.line);
	if (w.module[0])
		fprintf(out, " in %s", w.module);
}

static void print_regs(FILE *out, json_t *regs, struct annotator *a,
		       const struct procmap_task *t)
{
	static const char *const rows[][4] = {
		{ "rip", "rsp", "rbp", "rflags" }, { "rax", "rbx", "rcx", "rdx" },
		{ "rsi", "rdi", "r8", "r9" },      { "r10", "r11", "r12", "r13" },
		{ "r14", "r15", "cs", "ss" },      { "cr0", "cr2", "cr3", "cr4" },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		fputs("  ", out);
		for (size_t k = 0; k < 4; k++) {
			if (get_hex(regs, rows[i][k], &v))
				fprintf(out, " %6s 0x%016" PRIx64, rows[i][k], v);
			else
				fprintf(out, " %6s %18s", rows[i][k], "?");
		}
		fputc('\n', out);
	}
}

/*
 * Where it crashed: a kernel's crash at the vCPU's rip; a process's at the last branch (newest)
 * of its task.
 */
static void print_where(FILE *out, const struct branch *last, json_t *regs,
			struct annotator *a, const struct procmap_task *t, bool process)
{
	uint64_t rip;

	if (!process && json_is_object(regs) && get_hex(regs, "rip", &rip)) {
		print_crashed_in(out, NULL, a, t, rip);
		fputs(": rip ", out);
		addr_brief(out, NULL, a, t, rip);
		if (last) {
			fputs("; the last branch went to ", out);
			addr_sym(out, last->sym[1], a, t, last->to);
		}
		fputc('\n', out);
		return;
	}
	if (!last)
		return;

	if (process && last->from < USER_TOP && last->to >= USER_TOP) {
		unsigned int vector;
		const char *what;

		/* An exception (or a system call) took it out of its code: the fault's site. */
		print_crashed_in(out, last->sym[0], a, t, last->from);
		fputs(": its last branch left user code at ", out);
		addr_brief(out, last->sym[0], a, t, last->from);
		if (branch_kind(last) == VBTS_BR_EXCEPTION && branch_vector(last, &vector)) {
			what = exception_name(vector);
			fprintf(out, " for the kernel: exception %u%s%s%s, the faulting instruction\n",
				vector, what ? " (" : "", what ? what : "", what ? ")" : "");
		} else {
			fputs(" for the kernel (the faulting instruction, when it was an exception)\n",
			      out);
		}
		return;
	}
	print_crashed_in(out, last->sym[1], a, t, last->to);
	fputs(": the last branch went to ", out);
	addr_brief(out, last->sym[1], a, t, last->to);
	fputc('\n', out);
}

static int parse_branches(json_t *arr, struct branch **out, size_t *n)
{
	size_t count = json_array_size(arr);
	struct branch *b;

	if (!json_is_array(arr) || count > CRASH_PRINT_BRANCHES_MAX)
		return -EINVAL;
	b = calloc(count ? count : 1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		json_t *e = json_array_get(arr, i);

		b[i].sym[0] = json_object_get(e, "from_symbol");
		b[i].sym[1] = json_object_get(e, "to_symbol");
		if (!json_is_object(e) || !get_hex(e, "from", &b[i].from) ||
		    !get_hex(e, "to", &b[i].to) ||
		    (json_object_get(e, "flags") && !get_hex(e, "flags", &b[i].flags)) ||
		    !sym_valid(b[i].sym[0]) || !sym_valid(b[i].sym[1])) {
			free(b);
			return -EINVAL;
		}
	}
	*out = b;
	*n = count;
	return 0;
}

static json_t *load(const char *path, char *err, size_t errlen, int *ret)
{
	char q[TEXT_MAX], t[TEXT_MAX];
	json_error_t je;
	struct stat st;
	json_t *o;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		*ret = -errno;
		snprintf(err, errlen, "%s: %s", escape__str(q, sizeof(q), path), strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > CRASH_PRINT_FILE_MAX) {
		close(fd);
		*ret = -EINVAL;
		snprintf(err, errlen, "%s: not a crash report (not a regular file of at most "
			 "%u bytes)", escape__str(q, sizeof(q), path), CRASH_PRINT_FILE_MAX);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		*ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	o = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
	fclose(f);
	if (!json_is_object(o)) {
		json_decref(o);
		*ret = -EINVAL;
		snprintf(err, errlen, "%s: not a crash report (line %d: %s)",
			 escape__str(q, sizeof(q), path), je.line,
			 o ? "not a JSON object" : escape__str(t, sizeof(t), je.text));
		return NULL;
	}
	return o;
}

int crash_print__file(FILE *out, const char *path, const char *label, struct annotator *a,
		      const struct procmap *pm, char *err, size_t errlen)
{
	const struct procmap_task *t = NULL;
	struct branch *br = NULL;
	int64_t ver, time, vcpu, pid = 0, tgid = 0, signo = 0;
	json_t *o, *proc, *regs, *s;
	char q[TEXT_MAX], comm[TEXT_MAX] = "?", reason[TEXT_MAX];
	const char *bad = NULL;
	uint64_t cr3 = 0;
	bool process, have_cr3;
	size_t nbr = 0;
	int ret = 0;

	o = load(path, err, errlen, &ret);
	if (!o)
		return ret;
	s = json_object_get(o, "reason");
	proc = json_object_get(o, "process");
	regs = json_object_get(o, "registers");
	have_cr3 = get_hex(o, "cr3", &cr3);
	if (!get_int(o, "version", 1, 1, &ver))
		bad = "version (1 expected)";
	else if (!json_is_string(s))
		bad = "reason";
	else if (!get_int(o, "time", 0, INT64_MAX, &time))
		bad = "time";
	else if (!get_int(o, "vcpu", 0, UINT32_MAX, &vcpu))
		bad = "vcpu";
	else if (!have_cr3 && !json_is_null(json_object_get(o, "cr3")))
		bad = "cr3";
	else if (!json_is_null(proc) &&
		 (!json_is_object(proc) || !get_int(proc, "pid", INT32_MIN, INT32_MAX, &pid) ||
		  !get_int(proc, "tgid", INT32_MIN, INT32_MAX, &tgid) ||
		  !json_is_string(json_object_get(proc, "comm"))))
		bad = "process";
	else if (!json_is_null(regs) && !json_is_object(regs))
		bad = "registers";
	else if ((ret = parse_branches(json_object_get(o, "branches"), &br, &nbr)) == -EINVAL)
		bad = "branches";
	if (bad || ret) {
		if (!ret)
			ret = -EINVAL;
		snprintf(err, errlen, "%s: not a crash report: member %s missing or invalid",
			 escape__str(q, sizeof(q), path), bad ? bad : "branches (out of memory)");
		goto out;
	}
	escape__str(reason, sizeof(reason), json_string_value(s));
	process = !strcmp(json_string_value(s), "process-crash");
	if (json_is_object(proc))
		escape__str(comm, sizeof(comm), json_string_value(json_object_get(proc, "comm")));
	if (pm && have_cr3)
		t = procmap__lookup(pm, cr3, (uint64_t)time, true);

	/* What died, and when. */
	fprintf(out, "%s: %s", escape__str(q, sizeof(q), label), reason);
	if (process) {
		s = json_object_get(o, "signal");
		get_int(o, "signo", 0, 127, &signo);
		fprintf(out, ": %s[%" PRId64 "] killed by %s", comm, pid,
			json_is_string(s) ? escape__str(q, sizeof(q), json_string_value(s)) :
					    "a signal");
		if (signo)
			fprintf(out, " (signal %" PRId64 ")", signo);
	}
	fprintf(out, " on vCPU %" PRId64 " at %" PRId64 ".%09" PRId64 " s\n", vcpu,
		time / 1000000000, time % 1000000000);
	if (json_is_object(proc))
		fprintf(out, "process: %s pid %" PRId64 " tgid %" PRId64 "\n", comm, pid, tgid);
	else
		fputs("process: unknown\n", out);
	if (have_cr3)
		fprintf(out, "cr3: %#" PRIx64 "\n", cr3);
	s = json_object_get(o, "registers_note");
	if (json_is_object(regs)) {
		fputs("registers:\n", out);
		print_regs(out, regs, a, t);
	} else {
		fprintf(out, "registers: none%s%s%s\n", json_is_string(s) ? " (" : "",
			json_is_string(s) ? escape__str(q, sizeof(q), json_string_value(s)) : "",
			json_is_string(s) ? ")" : "");
	}
	print_where(out, nbr ? &br[nbr - 1] : NULL, regs, a, t, process);
	if (!nbr) {
		fputs("no branches of the task were in its ring\n", out);
	} else {
		fprintf(out, "last %zu branches%s%s, newest first:\n", nbr,
			json_is_object(proc) ? " of " : "", json_is_object(proc) ? comm : "");
		for (size_t i = 0; i < nbr; i++) {
			const struct branch *b = &br[nbr - 1 - i];

			fprintf(out, "  #%-3zu ", i);
			addr_sym(out, b->sym[1], a, t, b->to);
			print_kind(out, b);
			fputs("\n       from ", out);
			addr_sym(out, b->sym[0], a, t, b->from);
			fputc('\n', out);
		}
	}
	ret = ferror(out) ? -EIO : 0;
	if (ret)
		snprintf(err, errlen, "write error");
out:
	free(br);
	json_decref(o);
	return ret;
}

int crash_print__dir(FILE *out, const char *dir, struct annotator *a, const struct procmap *pm,
		     char *err, size_t errlen)
{
	char path[4096], label[32], e[512];
	int n = 0, first = 0, ret;

	for (unsigned int i = 0; i < CRASH_PRINT_REPORTS_MAX; i++) {
		if (i)
			snprintf(label, sizeof(label), "crash-%u.json", i);
		else
			snprintf(label, sizeof(label), "crash.json");
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, label) >= sizeof(path)) {
			snprintf(err, errlen, "trace directory name too long");
			return -ENAMETOOLONG;
		}
		if (access(path, F_OK))
			continue;
		if (n)
			fputc('\n', out);
		ret = crash_print__file(out, path, label, a, pm, e, sizeof(e));
		if (ret == -ENOENT) {
			continue;
		} else if (ret) {
			if (!first) {
				first = ret;
				snprintf(err, errlen, "%s", e);
			}
			continue;
		}
		n++;
	}
	if (first)
		return first;
	if (!n) {
		snprintf(err, errlen, "no crash report (crash.json) in this trace directory");
		return -ENOENT;
	}
	return n;
}
