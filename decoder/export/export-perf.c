// SPDX-License-Identifier: GPL-2.0
/*
 * export-perf.c - the branches of a trace as a perf.data file of Intel BTS data
 * (export-perf.h).
 *
 * Tables (call-tree.h used as hash maps): perf threads keyed by (task or vCPU, guest pid),
 * the node's count is 1 + the thread's index; guest pids given as perf tids (count 1: taken);
 * maps keyed by (thread index, table, base). Branches and runs are kept until the end: the
 * file's header names the size of the data that follows it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call-tree.h"
#include "escape.h"
#include "export-perf.h"
#include "export.h"
#include "symbolizer.h"
#include "symbols.h"

/* perf.data's header (tools/perf/util/header.h, struct perf_file_header). */
#define PERFDATA_MAGIC 0x32454c4946524550ULL   /* "PERFILE2", little-endian */
#define PERFDATA_HEADER_SIZE 104        /* magic, size, attr_size, 3 sections, 256 feature bits */
#define PERFDATA_ATTR_SIZE 128          /* perf_event_attr, PERF_ATTR_SIZE_VER7 */
#define PERFDATA_FILE_ATTR_SIZE (PERFDATA_ATTR_SIZE + 16)      /* + its ids section */

/* Record types and bits of linux/perf_event.h and tools/lib/perf/include/perf/event.h. */
#define PERFDATA_RECORD_COMM 3
#define PERFDATA_RECORD_MMAP2 10
#define PERFDATA_RECORD_AUXTRACE_INFO 70
#define PERFDATA_RECORD_AUXTRACE 71
#define PERFDATA_MISC_USER 2
#define PERFDATA_AUXTRACE_INTEL_BTS 2
#define PERFDATA_SAMPLE_IP (1u << 0)
#define PERFDATA_SAMPLE_TID (1u << 1)
#define PERFDATA_SAMPLE_ADDR (1u << 3)
#define PERFDATA_SAMPLE_IDENTIFIER (1u << 16)
#define PERFDATA_ATTR_SAMPLE_ID_ALL (1u << 18)
#define PERFDATA_PROT_READ_EXEC 5       /* PROT_READ | PROT_EXEC */
#define PERFDATA_MAP_PRIVATE 2

/* The one sample ID of the BTS attr. */
#define PERFDATA_BTS_ID 1

/* priv[] of PERF_RECORD_AUXTRACE_INFO for intel_bts (intel-bts.h), how many. */
#define PERFDATA_BTS_PRIV 6

/* Addresses from here up are the kernel's to perf (machine__kernel_ip() on x86_64). */
#define PERFDATA_KERNEL_START (1ULL << 63)

/* A Linux comm: 15 bytes and the NUL. */
#define PERFDATA_COMM_LEN 16

/* Fixed parts of the records written, in bytes. */
#define PERFDATA_EVENT_HEADER 8
#define PERFDATA_AUXTRACE_INFO_SIZE (PERFDATA_EVENT_HEADER + 8 + 8 * PERFDATA_BTS_PRIV)
#define PERFDATA_AUXTRACE_SIZE (PERFDATA_EVENT_HEADER + 24 + 16)
#define PERFDATA_COMM_FIXED (PERFDATA_EVENT_HEADER + 8)
#define PERFDATA_MMAP2_FIXED (PERFDATA_EVENT_HEADER + 8 + 24 + 8 + 16 + 8)
/* After a COMM or MMAP2 record's name: its sample ID (sample_id_all), the fields of the attr's
 * sample type that an ID has, in perf's order: TID (pid, tid), IDENTIFIER. */
#define PERFDATA_SAMPLE_ID_SIZE 16

/*
 * perf takes a record's pid for a host process: it reads a mapped file in the mount namespace
 * of /proc/PID when that exists. A guest's pids would name unrelated host processes, so the
 * pid perf sees is the thread's tid with this bit, above any host pid (pid_max <= 2^22).
 */
#define PERFDATA_PID_BIT 0x20000000u

/* A mapped file's path: the longest perf reads back (PATH_MAX with its NUL). */
#define PERFDATA_PATH_MAX 4096

/* One BTS record as the hardware writes it (intel-bts.c, struct branch). */
struct perf_bts_branch {
	uint64_t from;          /* source address; 0: tracing starts */
	uint64_t to;            /* target address; 0: tracing ends */
	uint64_t misc;          /* bit 4: predicted; 0 here */
};

_Static_assert(sizeof(struct perf_bts_branch) == 24, "a BTS record is 24 bytes");
_Static_assert(PERFDATA_AUXTRACE_INFO_SIZE == 64, "auxtrace_info with 6 priv words");
_Static_assert(PERFDATA_AUXTRACE_SIZE == 48, "perf_record_auxtrace is 48 bytes");
_Static_assert(PERFDATA_MMAP2_FIXED == 72, "perf_record_mmap2 without its file name");
_Static_assert(PERFDATA_HEADER_SIZE == 3 * 8 + 3 * 16 + 256 / 8, "perf_file_header");

/* A guest thread as a host thread. */
struct perf_thread {
	uint32_t tid;                   /* perf's tid (its pid: perf_pid()) */
	char comm[PERFDATA_COMM_LEN];   /* escaped, NUL-terminated */
};

/* A loaded image mapped into a thread. */
struct perf_map {
	uint32_t thread;
	uint64_t start, len, pgoff;
	char *path;                     /* absolute, NUL-terminated, < PERFDATA_PATH_MAX */
};

/* Consecutive branches of one thread: one AUXTRACE record. */
struct perf_run {
	uint32_t thread;
	size_t first, nr;               /* in the branch array */
};

struct perf_export {
	struct export_env env;
	struct call_tree thread_keys;   /* (task or vCPU, pid): count = 1 + index */
	struct call_tree tids;          /* perf tids given: count 1 */
	struct perf_thread *threads;
	size_t nr_threads, alloc_threads;
	uint32_t next_tid;              /* next PERFDATA_TID_BASE + n to try */
	struct call_tree map_keys;      /* (thread, table, base): count 1 when mapped */
	struct perf_map *maps;
	size_t nr_maps, alloc_maps;
	struct perf_bts_branch *branches;
	size_t nr_branches, alloc_branches;
	struct perf_run *runs;
	size_t nr_runs, alloc_runs;
	/* the last image looked up, per its thread: branches mostly stay in one */
	uint32_t memo_thread;
	uint64_t memo_start, memo_end;  /* empty when equal */
	uint64_t unmapped;              /* images whose file has no usable path */
};

/* Room for one more element of *@p (@nr used of *@alloc, @size bytes each); 0 or -ENOMEM. */
static int grow(void **p, size_t nr, size_t *alloc, size_t size)
{
	size_t n;
	void *q;

	if (nr < *alloc)
		return 0;
	n = *alloc ? 2 * *alloc : 64;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*alloc = n;
	return 0;
}

/* A perf tid for guest pid @pid (-1: none): the pid when free, else a new one; or -ENOMEM. */
static int64_t take_tid(struct perf_export *x, int64_t pid)
{
	int64_t n;

	if (pid >= 0 && pid < PERFDATA_TID_BASE) {
		n = call_tree__child(&x->tids, CALL_TREE_ROOT, (uint64_t)pid, NULL, 0);
		if (n < 0)
			return n;
		if (!x->tids.nodes[n].count++)
			return pid;
	}
	for (;;) {
		uint64_t tid = PERFDATA_TID_BASE + x->next_tid++;

		if (tid > INT32_MAX)
			return -ENOMEM;  /* more threads than perf can number */
		n = call_tree__child(&x->tids, CALL_TREE_ROOT, tid, NULL, 0);
		if (n < 0)
			return n;
		if (!x->tids.nodes[n].count++)
			return (int64_t)tid;
	}
}

/* The index of the perf thread of @r (task @t), made when new; or -ENOMEM. */
static int64_t thread_of(struct perf_export *x, const struct decoded_record *r,
			 const struct procmap_task *t)
{
	uint64_t key = t ? (uintptr_t)t : PERFDATA_KERNEL_START | r->vcpu;
	int64_t pid = r->thread_valid ? (int64_t)r->thread_pid : t ? t->pid : -1;
	struct perf_thread *th;
	int64_t a, b, tid;

	a = call_tree__child(&x->thread_keys, CALL_TREE_ROOT, key, NULL, 0);
	b = a < 0 ? a : call_tree__child(&x->thread_keys, (uint32_t)a,
					 (uint64_t)r->thread_valid << 32 | (uint32_t)pid, NULL, 0);
	if (b < 0)
		return b;
	if (x->thread_keys.nodes[b].count)
		return (int64_t)x->thread_keys.nodes[b].count - 1;
	if (x->nr_threads >= UINT32_MAX ||
	    grow((void **)&x->threads, x->nr_threads, &x->alloc_threads, sizeof(*th)))
		return -ENOMEM;
	tid = take_tid(x, t || r->thread_valid ? pid : -1);
	if (tid < 0)
		return tid;
	th = &x->threads[x->nr_threads];
	th->tid = (uint32_t)tid;
	if (t) {
		escape__buf(th->comm, sizeof(th->comm), t->name, strlen(t->name), 0);
	} else {
		snprintf(th->comm, sizeof(th->comm), r->thread_valid ? "[%" PRIu32 "]" :
			 "vcpu%" PRIu32, r->thread_valid ? r->thread_pid : r->vcpu);
	}
	x->thread_keys.nodes[b].count = ++x->nr_threads;
	return (int64_t)x->nr_threads - 1;
}

/*
 * The file offset that the run-time base of @m maps: that of the image's lowest loadable
 * address (its link base), 0 when the file does not say.
 */
static uint64_t map_pgoff(const struct symbolizer_module *m)
{
	uint64_t link_base, vaddr0;

	if (symbols__link_base(m->table, &link_base) ||
	    symbols__offset_vaddr(m->table, 0, &vaddr0) || vaddr0 > link_base)
		return 0;
	return link_base - vaddr0;
}

/* Maps the image holding @addr into thread @ti unless it is there; 0 or -ENOMEM. */
static int map_addr(struct perf_export *x, uint32_t ti, const struct procmap_task *t,
		    uint64_t addr)
{
	const struct symbolizer *sz = x->env.o->symbolizer;
	struct symbolizer_module m;
	struct perf_map *pm;
	char *path;
	int64_t a, b, c;

	if (addr >= PERFDATA_KERNEL_START || !sz)
		return 0;
	if (ti == x->memo_thread && addr >= x->memo_start && addr < x->memo_end)
		return 0;
	if (symbolizer__module(sz, t, addr, &m))
		return 0;
	x->memo_thread = ti;
	x->memo_start = m.base;
	x->memo_end = m.end;
	a = call_tree__child(&x->map_keys, CALL_TREE_ROOT, ti, NULL, 0);
	b = a < 0 ? a : call_tree__child(&x->map_keys, (uint32_t)a, (uintptr_t)m.table, NULL, 0);
	c = b < 0 ? b : call_tree__child(&x->map_keys, (uint32_t)b, m.base, NULL, 0);
	if (c < 0)
		return (int)c;
	if (x->map_keys.nodes[c].count++)
		return 0;
	path = m.path[0] ? realpath(m.path, NULL) : NULL;
	if (!path || strlen(path) >= PERFDATA_PATH_MAX) {
		free(path);
		x->unmapped++;
		return 0;
	}
	if (grow((void **)&x->maps, x->nr_maps, &x->alloc_maps, sizeof(*pm))) {
		free(path);
		return -ENOMEM;
	}
	pm = &x->maps[x->nr_maps++];
	pm->thread = ti;
	pm->start = m.base;
	pm->len = m.end - m.base;
	pm->pgoff = map_pgoff(&m);
	pm->path = path;
	return 0;
}

static int perf_record(void *ctx, const struct decoded_record *r)
{
	struct perf_export *x = ctx;
	const struct procmap_task *t;
	struct perf_run *run;
	int64_t ti;
	int ret;

	if (r->type != DECODED_BRANCH)
		return 0;
	t = annotator__task(x->env.annotator, r);
	ti = thread_of(x, r, t);
	if (ti < 0)
		return (int)ti;
	ret = map_addr(x, (uint32_t)ti, t, r->from);
	if (!ret)
		ret = map_addr(x, (uint32_t)ti, t, r->to);
	if (ret)
		return ret;
	if (grow((void **)&x->branches, x->nr_branches, &x->alloc_branches,
		 sizeof(*x->branches)))
		return -ENOMEM;
	x->branches[x->nr_branches] = (struct perf_bts_branch){ .from = r->from, .to = r->to };
	run = x->nr_runs ? &x->runs[x->nr_runs - 1] : NULL;
	if (!run || run->thread != (uint32_t)ti) {
		if (grow((void **)&x->runs, x->nr_runs, &x->alloc_runs, sizeof(*x->runs)))
			return -ENOMEM;
		run = &x->runs[x->nr_runs++];
		*run = (struct perf_run){ .thread = (uint32_t)ti, .first = x->nr_branches };
	}
	run->nr++;
	x->nr_branches++;
	return 0;
}

static void *perf_new(const struct export_env *env)
{
	struct perf_export *x = calloc(1, sizeof(*x));

	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	x->env = *env;
	x->memo_thread = UINT32_MAX;
	return x;
}

/* Little-endian writes into a record being built. */
static unsigned char *put_u16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	return p + 2;
}

static unsigned char *put_u32(unsigned char *p, uint32_t v)
{
	for (unsigned int i = 0; i < 4; i++, v >>= 8)
		p[i] = (unsigned char)v;
	return p + 4;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
	for (unsigned int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
	return p + 8;
}

/* A perf_event_header: type, misc, size (bounded by the callers: < 64 KiB). */
static unsigned char *put_event_header(unsigned char *p, uint32_t type, uint16_t misc,
				       size_t size)
{
	p = put_u32(p, type);
	p = put_u16(p, misc);
	return put_u16(p, (uint16_t)size);
}

/* The size of a string with its NUL, padded to 8 bytes. */
static size_t padded(size_t len)
{
	return (len + 1 + 7) & ~(size_t)7;
}

static size_t comm_size(const struct perf_thread *th)
{
	return PERFDATA_COMM_FIXED + padded(strlen(th->comm)) + PERFDATA_SAMPLE_ID_SIZE;
}

static size_t mmap2_size(const struct perf_map *m)
{
	return PERFDATA_MMAP2_FIXED + padded(strlen(m->path)) + PERFDATA_SAMPLE_ID_SIZE;
}

/* The pid perf is given for thread @tid: never a host process's (PERFDATA_PID_BIT). */
static uint32_t perf_pid(uint32_t tid)
{
	return tid | PERFDATA_PID_BIT;
}

/* The sample ID of a record of thread @tid. */
static void put_sample_id(struct out_buf *ob, uint32_t tid)
{
	unsigned char e[PERFDATA_SAMPLE_ID_SIZE], *p = e;

	p = put_u32(p, perf_pid(tid));          /* pid */
	p = put_u32(p, tid);                    /* tid */
	put_u64(p, PERFDATA_BTS_ID);            /* identifier */
	out_buf__write(ob, e, sizeof(e));
}

/* The header, the attr and its sample ID; the data section follows at the returned offset. */
static uint64_t put_file_header(struct out_buf *ob, uint64_t data_size)
{
	const uint64_t attrs = PERFDATA_HEADER_SIZE, ids = attrs + PERFDATA_FILE_ATTR_SIZE;
	const uint64_t data = ids + 8;
	unsigned char h[PERFDATA_HEADER_SIZE] = { 0 }, a[PERFDATA_FILE_ATTR_SIZE] = { 0 };
	unsigned char *p = h;

	p = put_u64(p, PERFDATA_MAGIC);
	p = put_u64(p, PERFDATA_HEADER_SIZE);
	p = put_u64(p, PERFDATA_FILE_ATTR_SIZE);
	p = put_u64(p, attrs);                  /* attrs section */
	p = put_u64(p, PERFDATA_FILE_ATTR_SIZE);
	p = put_u64(p, data);                   /* data section */
	put_u64(p, data_size);
	/* event_types (unused) and the feature bitmap: zero, no feature section */
	out_buf__write(ob, h, sizeof(h));

	p = a;
	p = put_u32(p, PERFDATA_BTS_PMU_TYPE);  /* type */
	p = put_u32(p, PERFDATA_ATTR_SIZE);     /* size */
	p = put_u64(p, 0);                      /* config */
	p = put_u64(p, 1);                      /* sample_period */
	p = put_u64(p, PERFDATA_SAMPLE_IP | PERFDATA_SAMPLE_TID | PERFDATA_SAMPLE_ADDR |
		    PERFDATA_SAMPLE_IDENTIFIER);
	p = put_u64(p, 0);                      /* read_format */
	/* sample_id_all: perf script orders events only then; the rest of the attr: zero */
	put_u64(p, PERFDATA_ATTR_SAMPLE_ID_ALL);
	p = a + PERFDATA_ATTR_SIZE;
	p = put_u64(p, ids);                    /* ids section */
	put_u64(p, 8);
	out_buf__write(ob, a, sizeof(a));

	p = h;
	put_u64(p, PERFDATA_BTS_ID);
	out_buf__write(ob, h, 8);
	return data;
}

static void put_auxtrace_info(struct out_buf *ob)
{
	unsigned char e[PERFDATA_AUXTRACE_INFO_SIZE], *p = e;

	p = put_event_header(p, PERFDATA_RECORD_AUXTRACE_INFO, 0, sizeof(e));
	p = put_u32(p, PERFDATA_AUXTRACE_INTEL_BTS);
	p = put_u32(p, 0);                      /* reserved */
	p = put_u64(p, PERFDATA_BTS_PMU_TYPE);  /* PMU_TYPE */
	p = put_u64(p, 0);                      /* TIME_SHIFT */
	p = put_u64(p, 1);                      /* TIME_MULT: never 0, perf divides by it */
	p = put_u64(p, 0);                      /* TIME_ZERO */
	p = put_u64(p, 0);                      /* CAP_USER_TIME_ZERO */
	put_u64(p, 0);                          /* SNAPSHOT_MODE */
	out_buf__write(ob, e, sizeof(e));
}

static void put_comm(struct out_buf *ob, const struct perf_thread *th)
{
	unsigned char e[PERFDATA_COMM_FIXED + PERFDATA_COMM_LEN + 8] = { 0 }, *p = e;
	size_t size = comm_size(th);

	p = put_event_header(p, PERFDATA_RECORD_COMM, 0, size);
	p = put_u32(p, perf_pid(th->tid));      /* pid */
	p = put_u32(p, th->tid);                /* tid */
	memcpy(p, th->comm, strlen(th->comm));  /* NUL and padding: zero */
	out_buf__write(ob, e, size - PERFDATA_SAMPLE_ID_SIZE);
	put_sample_id(ob, th->tid);
}

static void put_mmap2(struct out_buf *ob, const struct perf_map *m, uint32_t tid)
{
	unsigned char e[PERFDATA_MMAP2_FIXED] = { 0 }, *p = e;
	static const unsigned char zero[8];
	size_t len = strlen(m->path), size = mmap2_size(m);

	p = put_event_header(p, PERFDATA_RECORD_MMAP2, PERFDATA_MISC_USER, size);
	p = put_u32(p, perf_pid(tid));          /* pid */
	p = put_u32(p, tid);                    /* tid */
	p = put_u64(p, m->start);
	p = put_u64(p, m->len);
	p = put_u64(p, m->pgoff);
	p += 4 + 4 + 8 + 8;                     /* maj, min, ino, ino_generation: unknown */
	p = put_u32(p, PERFDATA_PROT_READ_EXEC);
	put_u32(p, PERFDATA_MAP_PRIVATE);
	out_buf__write(ob, e, sizeof(e));
	out_buf__write(ob, m->path, len);
	out_buf__write(ob, zero, padded(len) - len);
	put_sample_id(ob, tid);
}

/* The AUXTRACE record of @run (queue @run->thread, @offset into it, number @ref) and its data. */
static void put_auxtrace(struct perf_export *x, const struct perf_run *run, uint64_t offset,
			 uint64_t ref)
{
	static const struct perf_bts_branch end;
	unsigned char e[PERFDATA_AUXTRACE_SIZE], *p = e;

	p = put_event_header(p, PERFDATA_RECORD_AUXTRACE, 0, sizeof(e));
	p = put_u64(p, (run->nr + 1) * sizeof(struct perf_bts_branch));    /* size */
	p = put_u64(p, offset);                 /* offset in the queue's AUX area */
	p = put_u64(p, ref);                    /* reference: the order of the runs */
	p = put_u32(p, run->thread);            /* idx: a queue per thread */
	p = put_u32(p, x->threads[run->thread].tid);
	p = put_u32(p, UINT32_MAX);             /* cpu: -1, per-thread */
	put_u32(p, 0);                          /* reserved */
	out_buf__write(x->env.ob, e, sizeof(e));
	for (size_t i = 0; i < run->nr; i++) {
		const struct perf_bts_branch *b = &x->branches[run->first + i];

		p = e;
		p = put_u64(p, b->from);
		p = put_u64(p, b->to);
		put_u64(p, b->misc);
		out_buf__write(x->env.ob, e, sizeof(*b));
	}
	/* perf's reader stops one record before the end (sz > bsz): this one, which it skips */
	out_buf__write(x->env.ob, &end, sizeof(end));
}

static int perf_finish(void *ctx)
{
	struct perf_export *x = ctx;
	struct out_buf *ob = x->env.ob;
	uint64_t size = PERFDATA_AUXTRACE_INFO_SIZE, *queue_off;

	queue_off = calloc(x->nr_threads ? x->nr_threads : 1, sizeof(*queue_off));
	if (!queue_off)
		return -ENOMEM;
	for (size_t i = 0; i < x->nr_threads; i++)
		size += comm_size(&x->threads[i]);
	for (size_t i = 0; i < x->nr_maps; i++)
		size += mmap2_size(&x->maps[i]);
	size += x->nr_runs * (PERFDATA_AUXTRACE_SIZE + sizeof(struct perf_bts_branch)) +
		x->nr_branches * sizeof(struct perf_bts_branch);

	put_file_header(ob, size);
	put_auxtrace_info(ob);
	for (size_t i = 0; i < x->nr_threads; i++)
		put_comm(ob, &x->threads[i]);
	for (size_t i = 0; i < x->nr_maps; i++)
		put_mmap2(ob, &x->maps[i], x->threads[x->maps[i].thread].tid);
	for (size_t i = 0; i < x->nr_runs; i++) {
		const struct perf_run *run = &x->runs[i];

		put_auxtrace(x, run, queue_off[run->thread], i + 1);
		queue_off[run->thread] += (run->nr + 1) * sizeof(struct perf_bts_branch);
	}
	free(queue_off);
	if (x->unmapped)
		fprintf(stderr, "vbts decode: perf: %" PRIu64 " image%s without a file perf can "
			"read, not mapped (no symbols for %s)\n", x->unmapped,
			x->unmapped == 1 ? "" : "s", x->unmapped == 1 ? "it" : "them");
	return 0;
}

static void perf_free(void *ctx)
{
	struct perf_export *x = ctx;

	call_tree__release(&x->thread_keys);
	call_tree__release(&x->tids);
	call_tree__release(&x->map_keys);
	for (size_t i = 0; i < x->nr_maps; i++)
		free(x->maps[i].path);
	free(x->maps);
	free(x->threads);
	free(x->branches);
	free(x->runs);
	free(x);
}

const struct export_format_ops perf_format = {
	.name = "perf",
	.new = perf_new,
	.record = perf_record,
	.finish = perf_finish,
	.free = perf_free,
};
