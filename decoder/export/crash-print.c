// SPDX-License-Identifier: GPL-2.0
/*
 * crash-print.c - a crash report as a person reads a backtrace: what died, the process, where
 * it crashed, then its last branches newest first with their symbols.
 *
 * The report is read as hostile input (format/crash-file.c checks every member); every string
 * of it is escaped before it is printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "annotator.h"
#include "crash-file.h"
#include "crash-print.h"
#include "escape.h"
#include "procmap.h"
#include "trace-keys.h"

/* Where user space ends on x86-64 (canonical lower half). */
#define USER_TOP 0x0000800000000000ULL
/* Escaped bytes of a string from the report, at most. */
#define TEXT_MAX 256

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

static unsigned int branch_kind(const struct crash_file_branch *b)
{
	return (unsigned int)((b->flags & VBTS_REC_KIND_MASK) >> VBTS_REC_KIND_SHIFT);
}

static bool branch_vector(const struct crash_file_branch *b, unsigned int *vector)
{
	*vector = (unsigned int)((b->flags & VBTS_REC_VECTOR_MASK) >> VBTS_REC_VECTOR_SHIFT);
	return b->flags & VBTS_REC_VECTOR_VALID;
}

/* " (call)", " (exception 14)", as the text output names a branch; nothing when unknown. */
static void print_kind(FILE *out, const struct crash_file_branch *b)
{
	unsigned int kind = branch_kind(b), vector;

	if (!kind)
		return;
	fprintf(out, " (%s", branch_kind__name(kind));
	if (branch_vector(b, &vector))
		fprintf(out, " %u", vector);
	fputc(')', out);
}

/* What the report (@sym), else the annotator, says of @addr; names escaped. */
static void site_of(struct site *w, const struct crash_file_sym *sym, struct annotator *a,
		    const struct procmap_task *t, uint64_t addr)
{
	const struct annotator_addr *r;

	memset(w, 0, sizeof(*w));
	if (sym && sym->present) {
		if (sym->function)
			escape__str(w->function, sizeof(w->function), sym->function);
		w->offset = sym->offset;
		if (sym->file)
			escape__str(w->file, sizeof(w->file), sym->file);
		w->line = sym->line;
		if (sym->module)
			escape__str(w->module, sizeof(w->module), sym->module);
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

static void addr_sym(FILE *out, const struct crash_file_sym *sym, struct annotator *a, const struct procmap_task *t,
		     uint64_t addr)
{
	struct site w;

	site_of(&w, sym, a, t, addr);
	print_site(out, &w, addr, false);
}

/* The address and its name: what print_crashed_in() said of it is not repeated. */
static void addr_brief(FILE *out, const struct crash_file_sym *sym, struct annotator *a, const struct procmap_task *t,
		       uint64_t addr)
{
	struct site w;

	site_of(&w, sym, a, t, addr);
	print_site(out, &w, addr, true);
}

/* "crashed in FUNCTION at FILE:LINE in MODULE" of @addr. */
static void print_crashed_in(FILE *out, const struct crash_file_sym *sym, struct annotator *a,
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

/* Four registers a row, rip to cr4 (enum crash_file_reg's order); "?" for one not there. */
static void print_regs(FILE *out, const struct crash_file *cf)
{
	for (unsigned int i = 0; i <= CRASH_REG_CR4; i += 4) {
		fputs("  ", out);
		for (unsigned int k = i; k < i + 4; k++) {
			const char *name = crash_file__reg_name(k);

			if (cf->regs_valid & (1u << k))
				fprintf(out, " %6s 0x%016" PRIx64, name, cf->regs[k]);
			else
				fprintf(out, " %6s %18s", name, "?");
		}
		fputc('\n', out);
	}
}

/*
 * Where it crashed: a kernel's crash at the vCPU's rip; a process's at the last branch (newest)
 * of its task.
 */
static void print_where(FILE *out, const struct crash_file_branch *last,
			const struct crash_file *cf, struct annotator *a,
			const struct procmap_task *t, bool process)
{
	uint64_t rip = cf->regs[CRASH_REG_RIP];

	if (!process && (cf->regs_valid & (1u << CRASH_REG_RIP))) {
		print_crashed_in(out, NULL, a, t, rip);
		fputs(": rip ", out);
		addr_brief(out, NULL, a, t, rip);
		if (last) {
			fputs("; the last branch went to ", out);
			addr_sym(out, &last->sym[1], a, t, last->to);
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
		print_crashed_in(out, &last->sym[0], a, t, last->from);
		fputs(": its last branch left user code at ", out);
		addr_brief(out, &last->sym[0], a, t, last->from);
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
	print_crashed_in(out, &last->sym[1], a, t, last->to);
	fputs(": the last branch went to ", out);
	addr_brief(out, &last->sym[1], a, t, last->to);
	fputc('\n', out);
}

int crash_print__file(FILE *out, const char *path, const char *label, struct annotator *a,
		      const struct procmap *pm, char *err, size_t errlen)
{
	const struct procmap_task *t = NULL;
	const struct crash_file_branch *br;
	char q[TEXT_MAX], comm[TEXT_MAX] = "?", reason[TEXT_MAX];
	struct crash_file cf;
	bool process;
	size_t nbr;
	int ret;

	ret = crash_file__read(&cf, path, err, errlen);
	if (ret)
		return ret;
	br = cf.branches;
	nbr = cf.nr_branches;
	escape__str(reason, sizeof(reason), cf.reason);
	process = !strcmp(cf.reason, CRASH_REASON_PROCESS);
	if (cf.have_process)
		escape__str(comm, sizeof(comm), cf.comm);
	if (pm && cf.have_cr3)
		t = procmap__lookup(pm, cf.cr3, (uint64_t)cf.time, true);

	/* What died, and when. */
	fprintf(out, "%s: %s", escape__str(q, sizeof(q), label), reason);
	if (process) {
		fprintf(out, ": %s[%" PRId32 "] killed by %s", comm, cf.pid,
			cf.signal ? escape__str(q, sizeof(q), cf.signal) : "a signal");
		if (cf.signo)
			fprintf(out, " (signal %" PRId64 ")", cf.signo);
	}
	fprintf(out, " on vCPU %" PRIu32 " at %" PRId64 ".%09" PRId64 " s\n", cf.vcpu,
		cf.time / 1000000000, cf.time % 1000000000);
	if (cf.have_process)
		fprintf(out, "process: %s pid %" PRId32 " tgid %" PRId32 "\n", comm, cf.pid,
			cf.tgid);
	else
		fputs("process: unknown\n", out);
	if (cf.have_cr3)
		fprintf(out, "cr3: %#" PRIx64 "\n", cf.cr3);
	if (cf.have_regs) {
		fputs("registers:\n", out);
		print_regs(out, &cf);
	} else {
		fprintf(out, "registers: none%s%s%s\n", cf.regs_note ? " (" : "",
			cf.regs_note ? escape__str(q, sizeof(q), cf.regs_note) : "",
			cf.regs_note ? ")" : "");
	}
	print_where(out, nbr ? &br[nbr - 1] : NULL, &cf, a, t, process);
	if (!nbr) {
		fputs("no branches of the task were in its ring\n", out);
	} else {
		fprintf(out, "last %zu branches%s%s, newest first:\n", nbr,
			cf.have_process ? " of " : "", cf.have_process ? comm : "");
		for (size_t i = 0; i < nbr; i++) {
			const struct crash_file_branch *b = &br[nbr - 1 - i];

			fprintf(out, "  #%-3zu ", i);
			addr_sym(out, &b->sym[1], a, t, b->to);
			print_kind(out, b);
			fputs("\n       from ", out);
			addr_sym(out, &b->sym[0], a, t, b->from);
			fputc('\n', out);
		}
	}
	ret = ferror(out) ? -EIO : 0;
	if (ret)
		snprintf(err, errlen, "write error");
	crash_file__release(&cf);
	return ret;
}

int crash_print__dir(FILE *out, const char *dir, struct annotator *a, const struct procmap *pm,
		     char *err, size_t errlen)
{
	char path[4096], label[32], e[512];
	int n = 0, first = 0, ret;

	for (unsigned int i = 0; i < CRASH_PRINT_REPORTS_MAX; i++) {
		if (i)
			snprintf(label, sizeof(label), CRASH_JSON_FILE_N, i);
		else
			snprintf(label, sizeof(label), CRASH_JSON_FILE);
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
