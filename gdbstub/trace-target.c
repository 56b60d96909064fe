// SPDX-License-Identifier: GPL-2.0
/*
 * trace-target.c - a trace directory as the gdb stub's target: threads are vCPUs, memory is
 * the guest's images, the branch trace is each vCPU's branches as BTS blocks.
 *
 * A thread's address space is where its last branch went: the kernel (CPL 0, any CR3), or
 * user mode in that branch's CR3. Its blocks keep the branches inside that space; an
 * excursion out of it (a system call, an interrupt, a fault) that comes back to the
 * instruction it left or to the next one does not end a block, one that comes back elsewhere
 * ends the block at the instruction it left.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <Zydis/Zydis.h>

#include "bts-blocks.h"
#include "crash-file.h"
#include "decoder.h"
#include "guest-maps.h"
#include "image-mem.h"
#include "symbol-files.h"
#include "symbolizer.h"
#include "symbols.h"
#include "trace-dir.h"
#include "trace-keys.h"
#include "trace-target.h"

/* The BTS buffer size btrace-conf reports: what gdb asks for by default (64 KiB). */
#define BTS_SIZE 0x10000
/* Crash reports looked at: crash.json, crash-1.json, ... (vmm/record/crash-report.h). */
#define CRASH_FILES_MAX 64

/* One branch as the block builder sees it. */
struct branch {
	uint64_t from, to, cr3;
	unsigned int cpl, kind;
	bool cpl_valid, cr3_valid;
	bool after_break;       /* records were lost or tracing stopped before it */
};

/* A gdb thread: a vCPU, or a guest thread the trace's thread records name. */
struct thread {
	uint32_t vcpu;          /* a vCPU thread's vCPU */
	bool guest;             /* a guest thread: pid and tgid as its thread records give them */
	uint32_t pid, tgid;
	bool brk;               /* records were lost since its last branch */
	uint64_t last_time;     /* the time of its last branch, when last_time_valid */
	bool last_time_valid;
	struct image_mem *mem;  /* its program, where its process's exec named one */
	bool mem_done;          /* mem was looked for */
	struct gdb_process_file *files; /* what of mem gdb finds by name: program, libraries */
	size_t nr_files;
	struct branch *br;
	size_t nr_br, cap_br;
	struct gdb_btrace_block *blocks;        /* newest first */
	size_t nr_blocks;
	bool built;
	struct gdb_regs regs;
};

struct trace_target {
	struct trace_dir *td;
	struct thread *guests;  /* the guest threads while the trace is read */
	unsigned int nr_guests, cap_guests;
	bool *want;             /* --task: a flag per process of the process map, or NULL */
	uint32_t task_id;       /* --task as a pid, when task_id_valid */
	bool task_id_valid;
	struct image_mem *mem;
	struct guest_maps *gm;  /* the agent's mappings and the build-ID store, or NULL */
	struct symbol_files *sf;        /* --symbols, for mapped files the store lacks */
	struct thread *threads;
	unsigned int nr_threads;
	ZydisDecoder zd;
};

/* The address space of a thread: a CPL class (kernel or user) and, for user mode, a CR3. */
struct space {
	bool any;               /* no CPL known: every branch */
	bool user;
	bool cr3_valid;
	uint64_t cr3;
};

static bool in_space(const struct space *s, bool cpl_valid, unsigned int cpl, bool cr3_valid,
		     uint64_t cr3)
{
	if (s->any)
		return true;
	if (!cpl_valid || (cpl > 0) != s->user)
		return false;
	return !s->user || !s->cr3_valid || !cr3_valid || cr3 == s->cr3;
}

/* Does @b enter the kernel (its target runs at CPL 0)? */
static bool enters_kernel(const struct branch *b)
{
	switch (b->kind) {
	case VBTS_BR_SYSCALL:
	case VBTS_BR_INT:
	case VBTS_BR_EXCEPTION:
	case VBTS_BR_INTERRUPT:
		return true;
	default:
		return false;
	}
}

/* The CPL after the newest branch, which no later record tells. */
static unsigned int cpl_after_last(const struct branch *b)
{
	switch (b->kind) {
	case VBTS_BR_SYSCALL:
	case VBTS_BR_INT:
	case VBTS_BR_EXCEPTION:
	case VBTS_BR_INTERRUPT:
		return 0;
	case VBTS_BR_SYSRET:
		return 3;
	default:
		return b->cpl;
	}
}

/*
 * Did @th stop entering the kernel from its user-mode code: its newest branch is a fault of
 * user mode, or any entry into the kernel (a system call, an interrupt) of a thread the trace
 * holds no kernel branch of (a user-mode trace: an exit system call)? Then the thread is
 * stopped in user mode at the instruction it left (a crashed or exited process), not in the
 * kernel, whose branches are not there.
 */
static bool stopped_at_fault(const struct thread *th)
{
	const struct branch *last;

	if (!th->nr_br)
		return false;
	last = &th->br[th->nr_br - 1];
	if (!enters_kernel(last) || !last->cpl_valid || !last->cpl)
		return false;
	if (last->kind == VBTS_BR_EXCEPTION)
		return true;
	for (size_t i = 0; i < th->nr_br; i++)
		if (!th->br[i].cpl_valid || !th->br[i].cpl)
			return false;
	return true;
}

/*
 * The file image_mem__add_elf*() just mapped into th->mem (when it did: @before is the count
 * of files before) as one of the process's files, named @name in the guest. A file mapped
 * twice (the program as its exec and as the agent's mapping) is listed once: a bias names
 * one file.
 */
static void add_process_file(struct thread *th, size_t before, const char *name, bool exec)
{
	const struct image_mem_file *f;
	struct gdb_process_file *pf;

	if (image_mem__nr_files(th->mem) != before + 1)
		return;
	f = image_mem__file(th->mem, before);
	for (size_t i = 0; i < th->nr_files; i++)
		if (th->files[i].l_addr == f->bias)
			return;
	pf = realloc(th->files, (th->nr_files + 1) * sizeof(*pf));
	if (!pf)
		return;
	th->files = pf;
	pf = &th->files[th->nr_files];
	*pf = (struct gdb_process_file){
		.name = strdup(name ? name : f->path), .host_path = f->path, .exec = exec,
		.l_addr = f->bias, .l_ld = f->dynamic, .segment = f->low, .entry = f->entry, .phdr = f->phdr,
		.phnum = f->phnum,
	};
	if (pf->name)
		th->nr_files++;
}

/*
 * When the exec event named no program file, the program among the agent's mappings: the
 * lowest-mapped file that can be one (ET_EXEC or a PT_INTERP; a PIE is mapped below its
 * libraries, and libc, which has a PT_INTERP too, above it).
 */
static void program_of_maps(struct thread *th)
{
	struct gdb_process_file *best = NULL;

	for (size_t i = 0; i < th->nr_files; i++) {
		bool program = false;

		if (th->files[i].exec)
			return;
		/* host_path is the image_mem_file's own string. */
		for (size_t k = 0; k < image_mem__nr_files(th->mem); k++)
			if (image_mem__file(th->mem, k)->path == th->files[i].host_path)
				program = image_mem__file(th->mem, k)->program;
		if (program && (!best || th->files[i].entry < best->entry))
			best = &th->files[i];
	}
	if (best)
		best->exec = true;
}

/*
 * The program of @th's process mapped where it was loaded, into th->mem, when the trace's
 * exec events and the decoder's symbol files name it (a Linux guest's task: its build ID or
 * path, found in --symbols or the trace's build-ID store): looked for once.
 */
static void thread_program(struct trace_target *tt, struct thread *th)
{
	const struct symbolizer *sz = trace_dir__symbolizer(tt->td);
	const struct procmap_task *t;
	const struct symbol_file *sf;
	const struct branch *last;
	size_t first, n;
	int64_t pid;

	if (th->mem_done)
		return;
	th->mem_done = true;
	if (!th->nr_br)
		return;
	last = &th->br[th->nr_br - 1];
	if (!last->cr3_valid)
		return;
	t = procmap__lookup(trace_dir__procmap(tt->td), last->cr3, th->last_time,
			    th->last_time_valid);
	if (!t)
		return;
	th->mem = image_mem__new();
	if (!th->mem)
		return;
	sf = sz ? symbolizer__file(sz, t) : NULL;
	if (sf && sf->path) {
		size_t before = image_mem__nr_files(th->mem);

		if (t->load_base_valid)
			image_mem__add_elf_loaded(th->mem, sf->path, t->load_base);
		else
			image_mem__add_elf(th->mem, sf->path);
		add_process_file(th, before, t->exe, true);
	}
	/* Then the files the agent reported mapped in its process up to then (libraries). */
	pid = t->tgid_valid ? t->tgid : t->pid;
	n = tt->gm ? guest_maps__range(tt->gm, pid, 0, th->last_time_valid ?
				       th->last_time + 1 : UINT64_MAX, &first) : 0;
	for (size_t i = first; i < first + n && n; i++) {
		const struct guest_map *m = guest_maps__get(tt->gm, i);
		const struct symbols *tab;
		uint64_t bias;

		const struct symbol_file *f;
		size_t before = image_mem__nr_files(th->mem);

		tab = guest_maps__table(tt->gm, m, &bias);
		if (tab && symbols__path(tab))
			image_mem__add_elf_biased(th->mem, symbols__path(tab), bias);
		else if (tt->sf && symbol_files__match(tt->sf, SYMBOL_FILES_BUILD_ID, m->build_id,
						       SIZE_MAX, &f, 1) && f->path)
			image_mem__add_elf_mapped(th->mem, f->path, m->start, m->offset);
		add_process_file(th, before, m->path, false);
	}
	program_of_maps(th);
}

/* Thread @th's memory: its program where it has one, then the guest's images. */
static size_t thread_read(struct trace_target *tt, struct thread *th, uint64_t addr, void *buf,
			  size_t len)
{
	size_t n = 0;

	thread_program(tt, th);
	if (th->mem)
		n = image_mem__read(th->mem, addr, buf, len);
	return n ? n : image_mem__read(tt->mem, addr, buf, len);
}

/* The thread whose blocks are being built, for next_insn(). */
struct insn_ctx {
	struct trace_target *tt;
	struct thread *th;
};

/* The address of the instruction after the one at @addr, or 0 when it cannot be decoded. */
static uint64_t next_insn(void *ctx, uint64_t addr)
{
	struct insn_ctx *ic = ctx;
	struct trace_target *tt = ic->tt;
	ZydisDecodedInstruction zi;
	uint8_t bytes[ZYDIS_MAX_INSTRUCTION_LENGTH];
	size_t n = thread_read(tt, ic->th, addr, bytes, sizeof(bytes));

	if (!n || ZYAN_FAILED(ZydisDecoderDecodeInstruction(&tt->zd, NULL, bytes, n, &zi)))
		return 0;
	return addr + zi.length;
}

/* The blocks of @th: its branches marked inside or outside its address space. */
static int build_blocks(struct trace_target *tt, struct thread *th)
{
	struct insn_ctx ic = { .tt = tt, .th = th };
	const struct branch *last;
	struct bts_branch *bb;
	struct space sp = { 0 };
	bool fault;
	int ret;

	th->built = true;
	if (!th->nr_br)
		return 0;
	last = &th->br[th->nr_br - 1];
	fault = stopped_at_fault(th);
	sp.any = !last->cpl_valid;
	sp.user = fault || cpl_after_last(last) > 0;
	sp.cr3_valid = last->cr3_valid;
	sp.cr3 = last->cr3;
	bb = malloc(th->nr_br * sizeof(*bb));
	if (!bb)
		return -ENOMEM;
	for (size_t i = 0; i < th->nr_br; i++) {
		const struct branch *b = &th->br[i];

		bb[i].from = b->from;
		bb[i].to = b->to;
		bb[i].from_in = in_space(&sp, b->cpl_valid, b->cpl, b->cr3_valid, b->cr3);
		/* Where it went is where the next branch was taken (or the PC, for the last). */
		bb[i].to_in = i + 1 == th->nr_br ? !fault :
			      in_space(&sp, b[1].cpl_valid, b[1].cpl, b[1].cr3_valid, b[1].cr3) &&
			      !(sp.user && !sp.any && enters_kernel(b));
		bb[i].after_break = b->after_break;
	}
	ret = bts_blocks__build(bb, th->nr_br, next_insn, &ic, &th->blocks, &th->nr_blocks);
	free(bb);
	return ret;
}

static int push_branch(struct thread *th, const struct decoded_record *r, bool after_break)
{
	struct branch *b;

	if (th->nr_br == th->cap_br) {
		size_t c = th->cap_br ? 2 * th->cap_br : 1024;

		b = realloc(th->br, c * sizeof(*b));
		if (!b)
			return -ENOMEM;
		th->br = b;
		th->cap_br = c;
	}
	b = &th->br[th->nr_br++];
	b->from = r->from;
	b->to = r->to;
	b->cr3 = r->cr3;
	b->cpl = r->cpl;
	b->kind = r->kind;
	b->cpl_valid = r->cpl_valid;
	b->cr3_valid = r->cr3_valid;
	b->after_break = after_break;
	th->last_time = r->time;
	th->last_time_valid = r->time_valid;
	return 0;
}

/* Is @r of the --task process: its thread's, or its CR3's task's? */
static bool task_matches(const struct trace_target *tt, const struct decoded_record *r)
{
	const struct procmap *pm = trace_dir__procmap(tt->td);

	if (!tt->want)
		return true;
	return trace_dir__task_selects(pm, r, tt->want, &tt->task_id, tt->task_id_valid,
				       r->cr3_valid ? procmap__lookup(pm, r->cr3, r->time,
								      r->time_valid) : NULL);
}

/* The guest thread @pid's index in tt->guests, added when new; -ENOMEM. */
static int guest_thread(struct trace_target *tt, uint32_t pid, uint32_t tgid)
{
	struct thread *g;

	for (unsigned int i = 0; i < tt->nr_guests; i++)
		if (tt->guests[i].pid == pid)
			return (int)i;
	if (tt->nr_guests == tt->cap_guests) {
		unsigned int cap = tt->cap_guests ? 2 * tt->cap_guests : 16;

		if (cap > INT32_MAX)
			return -ENOMEM;
		g = realloc(tt->guests, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		tt->guests = g;
		tt->cap_guests = cap;
	}
	g = &tt->guests[tt->nr_guests];
	memset(g, 0, sizeof(*g));
	g->guest = true;
	g->pid = pid;
	g->tgid = tgid;
	return (int)tt->nr_guests++;
}

/*
 * Every branch of the vCPUs in tt->threads (@vcpu, or -1 for all), oldest first, into their
 * vCPU's thread and into the guest thread that took it (tt->guests, when the trace names its
 * threads). With --task only that process's branches: the others are left out without
 * breaking a block (the process was switched out, and comes back where it left). A loss, a
 * gap, a start or a stop breaks the blocks of the vCPU and of its guest thread, but for a stop
 * and start around the process's leaving and coming back (task-depart ... task-arrive): its
 * thread ran nothing unrecorded. A thread's entry record (it resumes elsewhere than where it
 * left) breaks that thread's.
 */
static int read_branches(struct trace_target *tt, int vcpu)
{
	struct decoder *d = trace_dir__decoder(tt->td, vcpu);
	int *cur = calloc(tt->nr_threads, sizeof(*cur));  /* guest thread on each vCPU, or -1 */
	bool *departed = calloc(tt->nr_threads, sizeof(*departed)); /* its task left, none came */
	struct decoded_record r;
	struct thread *vt;
	unsigned int v;
	int ret = 0, g;

	if (!d || !cur || !departed) {
		ret = d ? -ENOMEM : -errno;
		goto out;
	}
	for (v = 0; v < tt->nr_threads; v++)
		cur[v] = -1;
	while ((ret = decoder__next(d, &r)) > 0) {
		for (v = 0; v < tt->nr_threads && tt->threads[v].vcpu != r.vcpu; v++)
			;
		if (v == tt->nr_threads)
			continue;
		vt = &tt->threads[v];
		g = cur[v];
		if (r.thread_valid && (g < 0 || tt->guests[g].pid != r.thread_pid)) {
			g = guest_thread(tt, r.thread_pid, r.thread_tgid);
			if (g < 0) {
				ret = g;
				break;
			}
			cur[v] = g;
		}
		switch (r.type) {
		case DECODED_BRANCH:
			if (!r.from_valid || !r.to_valid) {
				vt->brk = true;
				if (g >= 0)
					tt->guests[g].brk = true;
				break;
			}
			if (!task_matches(tt, &r))
				break;
			ret = push_branch(vt, &r, vt->brk);
			vt->brk = false;
			if (!ret && g >= 0 && r.thread_valid) {
				ret = push_branch(&tt->guests[g], &r, tt->guests[g].brk);
				tt->guests[g].brk = false;
			}
			break;
		case DECODED_TASK_DEPART:
			departed[v] = true;
			break;
		case DECODED_TASK_ARRIVE:
			departed[v] = false;
			break;
		case DECODED_START:
		case DECODED_STOP:
			/*
			 * The ring stopped because the process left the vCPU (--task: it records
			 * while a selected process is loaded) and started when one came back: the
			 * guest thread ran no user code in between, and one that comes back
			 * elsewhere than it left has an entry record. Its blocks go on.
			 */
			vt->brk = true;
			if (g >= 0 && !departed[v])
				tt->guests[g].brk = true;
			break;
		case DECODED_LOST:
		case DECODED_GAP:
			vt->brk = true;
			if (g >= 0)
				tt->guests[g].brk = true;
			break;
		case DECODED_ENTRY:
			if (g >= 0)
				tt->guests[g].brk = true;
			break;
		default:
			break;
		}
		if (ret < 0)
			break;
	}
out:
	free(cur);
	free(departed);
	decoder__free(d);
	return ret < 0 ? ret : 0;
}

/* The registers of the newest crash report of each vCPU (crash.json, crash-N.json). */
static void read_crash_regs(struct trace_target *tt, const char *dir)
{
	static const struct {
		enum crash_file_reg from;
		enum gdb_reg reg;
	} regs[] = {
		{ CRASH_REG_RAX, GDB_REG_RAX }, { CRASH_REG_RBX, GDB_REG_RBX },
		{ CRASH_REG_RCX, GDB_REG_RCX }, { CRASH_REG_RDX, GDB_REG_RDX },
		{ CRASH_REG_RSI, GDB_REG_RSI }, { CRASH_REG_RDI, GDB_REG_RDI },
		{ CRASH_REG_RBP, GDB_REG_RBP }, { CRASH_REG_RSP, GDB_REG_RSP },
		{ CRASH_REG_R8, GDB_REG_R8 },   { CRASH_REG_R9, GDB_REG_R9 },
		{ CRASH_REG_R10, GDB_REG_R10 }, { CRASH_REG_R11, GDB_REG_R11 },
		{ CRASH_REG_R12, GDB_REG_R12 }, { CRASH_REG_R13, GDB_REG_R13 },
		{ CRASH_REG_R14, GDB_REG_R14 }, { CRASH_REG_R15, GDB_REG_R15 },
		{ CRASH_REG_RFLAGS, GDB_REG_EFLAGS }, { CRASH_REG_CS, GDB_REG_CS },
		{ CRASH_REG_SS, GDB_REG_SS },
	};
	char path[4096], err[256];

	for (unsigned int i = 0; i < CRASH_FILES_MAX; i++) {
		struct crash_file cf;
		int ret;

		if (i)
			snprintf(path, sizeof(path), "%s/" CRASH_JSON_FILE_N, dir, i);
		else
			snprintf(path, sizeof(path), "%s/" CRASH_JSON_FILE, dir);
		ret = crash_file__read(&cf, path, err, sizeof(err));
		if (ret == -ENOENT)
			break;
		if (ret)
			continue;
		for (unsigned int t = 0; cf.have_regs && t < tt->nr_threads; t++) {
			struct thread *th = &tt->threads[t];

			/* A guest thread's report is its process's (by pid), a vCPU's its own. */
			if (th->guest ? !cf.have_process || (int64_t)th->pid != cf.pid :
			    th->vcpu != cf.vcpu)
				continue;
			/* A later report replaces an earlier one; the PC stays the trace's. */
			th->regs.valid &= 1u << GDB_REG_RIP;
			for (size_t k = 0; k < sizeof(regs) / sizeof(regs[0]); k++) {
				if (cf.regs_valid & (1u << regs[k].from)) {
					th->regs.val[regs[k].reg] = cf.regs[regs[k].from];
					th->regs.valid |= 1u << regs[k].reg;
				}
			}
		}
		crash_file__release(&cf);
	}
}

/*
 * The processes --task @key selects into tt->want: by name or pid in events.jsonl, or a pid
 * the thread records may carry. Returns 0, -ENOENT when the map has none and @key is no pid,
 * or -ENOMEM.
 */
static int select_task(struct trace_target *tt, const char *key)
{
	const struct procmap *pm = trace_dir__procmap(tt->td);
	size_t n = procmap__nr_processes(pm);
	unsigned long long id;
	char *end;

	tt->want = calloc(n ? n : 1, sizeof(*tt->want));
	if (!tt->want)
		return -ENOMEM;
	errno = 0;
	id = strtoull(key, &end, 10);
	tt->task_id_valid = *key >= '0' && *key <= '9' && !*end && !errno && id <= UINT32_MAX;
	tt->task_id = (uint32_t)id;
	if (!procmap__select(pm, key, tt->want) && !tt->task_id_valid)
		return -ENOENT;
	return 0;
}

static void __attribute__((format(printf, 2, 3))) warn(const struct trace_target_options *o,
							 const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, line);
}

struct trace_target *trace_target__open(const char *dir, const struct trace_target_options *opts,
					char *err, size_t errlen)
{
	struct trace_dir_options topts = {
		.symbol_paths = opts->symbol_paths,
		.nr_symbol_paths = opts->nr_symbol_paths,
		.warn = opts->warn,
		.warn_ctx = opts->warn_ctx,
	};
	const struct symbols *img;
	struct trace_target *tt;
	char path[4096];
	unsigned int n;
	int ret;

	tt = calloc(1, sizeof(*tt));
	if (!tt)
		goto err_nomem;
	ZydisDecoderInit(&tt->zd, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	tt->td = trace_dir__open(dir, &topts, err, errlen);
	if (!tt->td)
		goto err_free;
	tt->mem = image_mem__new();
	if (!tt->mem)
		goto err_nomem_close;
	snprintf(path, sizeof(path), "%s/debuginfod", dir);
	tt->gm = guest_maps__new(path, opts->warn, opts->warn_ctx);
	if (!tt->gm)
		goto err_nomem_close;
	snprintf(path, sizeof(path), "%s/events.jsonl", dir);
	ret = guest_maps__load(tt->gm, path);
	if (ret == -ENOMEM)
		goto err_nomem_close;
	if (opts->nr_symbol_paths) {
		tt->sf = symbol_files__new(NULL, NULL);
		if (!tt->sf)
			goto err_nomem_close;
		for (size_t i = 0; i < opts->nr_symbol_paths; i++)
			symbol_files__add(tt->sf, opts->symbol_paths[i], path, sizeof(path));
	}
	img = trace_dir__symbols(tt->td);
	if (img && symbols__path(img)) {
		ret = image_mem__add_elf(tt->mem, symbols__path(img));
		if (ret)
			warn(opts, "%s: not mapped: %s", symbols__path(img), strerror(-ret));
	}
	for (size_t i = 0; i < opts->nr_symbol_paths; i++) {
		struct stat st;

		/* A directory's files are found by build ID, for the mappings that name them. */
		if (!stat(opts->symbol_paths[i], &st) && S_ISDIR(st.st_mode))
			continue;
		ret = image_mem__add_elf(tt->mem, opts->symbol_paths[i]);
		if (ret)
			warn(opts, "%s: not mapped: %s", opts->symbol_paths[i], strerror(-ret));
	}
	if (opts->task) {
		ret = select_task(tt, opts->task);
		if (ret) {
			snprintf(err, errlen, "%s: no task '%s' in events.jsonl", dir, opts->task);
			errno = -ret;
			goto err_close;
		}
	}
	n = trace_dir__nr_vcpus(tt->td);
	tt->threads = calloc(n, sizeof(*tt->threads));
	if (!tt->threads)
		goto err_nomem_close;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = trace_dir__vcpu_id(tt->td, i);

		if (opts->vcpu < 0 || id == (uint32_t)opts->vcpu)
			tt->threads[tt->nr_threads++].vcpu = id;
	}
	if (!tt->nr_threads) {
		snprintf(err, errlen, "%s: no vCPU %d in this trace", dir, opts->vcpu);
		errno = ENOENT;
		goto err_close;
	}
	ret = read_branches(tt, opts->vcpu);
	if (ret) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-ret));
		errno = -ret;
		goto err_close;
	}
	/* A trace that names its guest threads: they are gdb's threads, not the vCPUs. */
	if (tt->nr_guests) {
		for (unsigned int i = 0; i < tt->nr_threads; i++)
			free(tt->threads[i].br);
		free(tt->threads);
		tt->threads = tt->guests;
		tt->nr_threads = tt->nr_guests;
		tt->guests = NULL;
		tt->nr_guests = 0;
	}
	/* A thread with no branch has no PC; with --task, it is a vCPU the task never ran on. */
	n = tt->nr_threads;
	tt->nr_threads = 0;
	for (unsigned int i = 0; i < n; i++) {
		struct thread *th = &tt->threads[i];

		if (!th->nr_br && (th->guest || opts->task)) {
			free(th->br);
			continue;
		}
		if (th->nr_br) {
			const struct branch *last = &th->br[th->nr_br - 1];

			th->regs.val[GDB_REG_RIP] = stopped_at_fault(th) ? last->from : last->to;
			th->regs.valid = 1u << GDB_REG_RIP;
		}
		tt->threads[tt->nr_threads++] = *th;
	}
	if (!tt->nr_threads) {
		if (opts->task)
			snprintf(err, errlen, "%s: no branch of task '%s'%s", dir, opts->task,
				 opts->vcpu >= 0 ? " on this vCPU" : "");
		else
			snprintf(err, errlen, "%s: no branch of a named thread", dir);
		errno = ENOENT;
		goto err_close;
	}
	read_crash_regs(tt, dir);
	return tt;

err_nomem_close:
	snprintf(err, errlen, "out of memory");
	errno = ENOMEM;
err_close:
	ret = errno;
	trace_target__close(tt);
	errno = ret;
	return NULL;
err_free:
	ret = errno;
	free(tt);
	errno = ret;
	return NULL;
err_nomem:
	snprintf(err, errlen, "out of memory");
	errno = ENOMEM;
	return NULL;
}

static unsigned int op_nr_threads(void *ctx)
{
	return ((struct trace_target *)ctx)->nr_threads;
}

static void op_regs(void *ctx, unsigned int t, struct gdb_regs *regs)
{
	*regs = ((struct trace_target *)ctx)->threads[t].regs;
}

static size_t op_read_mem(void *ctx, unsigned int t, uint64_t addr, void *buf, size_t len)
{
	struct trace_target *tt = ctx;

	return thread_read(tt, &tt->threads[t], addr, buf, len);
}

static int op_btrace(void *ctx, unsigned int t, const struct gdb_btrace_block **blocks,
		     size_t *nr)
{
	struct trace_target *tt = ctx;
	struct thread *th = &tt->threads[t];
	int ret;

	if (!th->built) {
		ret = build_blocks(tt, th);
		if (ret)
			return ret;
	}
	*blocks = th->blocks;
	*nr = th->nr_blocks;
	return 0;
}

static int op_files(void *ctx, unsigned int t, const struct gdb_process_file **files,
		    size_t *nr)
{
	struct trace_target *tt = ctx;
	struct thread *th = &tt->threads[t];

	thread_program(tt, th);
	*files = th->files;
	*nr = th->nr_files;
	return 0;
}

static void op_describe(void *ctx, unsigned int t, char *buf, size_t cap)
{
	const struct thread *th = &((struct trace_target *)ctx)->threads[t];

	if (th->guest)
		snprintf(buf, cap, "pid %u tgid %u", th->pid, th->tgid);
	else
		snprintf(buf, cap, "vCPU %u", th->vcpu);
}

static const struct gdb_target_ops trace_ops = {
	.nr_threads = op_nr_threads,
	.regs = op_regs,
	.read_mem = op_read_mem,
	.btrace = op_btrace,
	.describe = op_describe,
	.bts_size = BTS_SIZE,
	.files = op_files,
};

const struct gdb_target_ops *trace_target__ops(void)
{
	return &trace_ops;
}

void trace_target__close(struct trace_target *tt)
{
	if (!tt)
		return;
	for (unsigned int i = 0; i < tt->nr_threads; i++) {
		free(tt->threads[i].br);
		free(tt->threads[i].blocks);
		for (size_t k = 0; k < tt->threads[i].nr_files; k++)
			free((char *)tt->threads[i].files[k].name);
		free(tt->threads[i].files);
		image_mem__free(tt->threads[i].mem);
	}
	for (unsigned int i = 0; i < tt->nr_guests; i++)
		free(tt->guests[i].br);
	free(tt->threads);
	free(tt->guests);
	free(tt->want);
	image_mem__free(tt->mem);
	guest_maps__free(tt->gm);
	symbol_files__free(tt->sf);
	trace_dir__close(tt->td);
	free(tt);
}
