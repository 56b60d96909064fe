// SPDX-License-Identifier: GPL-2.0
/*
 * decode-bench-gen.c - the inputs and the baseline of the decode speed benchmark
 * (tests/bench/decode-speed).
 *
 *   decode-bench-gen source FUNCTIONS       C source of FUNCTIONS functions on stdout, each a
 *                                           few lines of loops and branches (compiled with -g
 *                                           into the benchmark's image)
 *   decode-bench-gen trace ELF RECORDS DIR  the benchmark trace directory (below), DIR created
 *   decode-bench-gen sum DIR                the baseline: read(2) every ring file of DIR in
 *                                           chunks of about 1 MiB and sum the three words of each
 *                                           committed record; prints "RECORDS SUM"
 *   decode-bench-gen addrs DIR N            the addresses of the first N branch records of
 *                                           vcpu0.ring, two per record (from, to), one hex
 *                                           address a line: the input of addr2line and
 *                                           llvm-symbolizer
 *
 * The trace (its shape is what the benchmark's figures are measured on):
 *  - vm.json: two vCPUs, "image" the absolute path of ELF (a multiboot guest's image: every
 *    address is symbolized from it);
 *  - events.jsonl: 64 tasks "bench<i>" (pid 100 + i, CR3 0x1000000 + i * 4 KiB) announced at
 *    time 0;
 *  - vcpu0.ring and vcpu1.ring of RECORDS / 2 records each, closed, nothing lost: START, then
 *    slices of BENCH_SLICE records, each opened by a TASK_ARRIVE (vCPU v runs task
 *    (2 k + v) % 64 in its k-th slice, at time 1000 k + 500 v: the two vCPUs alternate in the
 *    merge) and filled with user-mode branches;
 *  - the branches walk the functions of ELF (its sized STT_FUNC symbols): within the current
 *    function a taken jcc between two of its BENCH_SITES sites (7 in 10), a call from one of
 *    them to one of the function's BENCH_CALLEES callees (fixed per function) (3 in 20), a ret
 *    from its last byte back to the caller's call site (3 in 20, a call when nothing is on
 *    the stack of at most 64 frames). Every address is inside a function; the distinct
 *    addresses are about (BENCH_SITES + 1) per function.
 *
 * Exit status 0, 2 on bad arguments, 1 when a file cannot be read or written.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-writer.h"

#define BENCH_VCPUS 2
#define BENCH_TASKS 64
#define BENCH_SLICE 4096
#define BENCH_SITES 8
#define BENCH_CALLEES 4
#define BENCH_STACK 64

struct func {
	uint64_t start, size;
};

struct walk {
	const struct func *funcs;
	size_t nr;
	size_t cur;
	uint64_t rng;
	size_t stack[BENCH_STACK];
	uint64_t ret_to[BENCH_STACK];
	unsigned int depth;
};

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64*: deterministic, the same trace for the same arguments. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t site(const struct func *f, unsigned int k)
{
	return f->start + k * f->size / BENCH_SITES;
}

static size_t callee(const struct walk *w, size_t f, unsigned int k)
{
	return (size_t)(((uint64_t)f * 2654435761u + 7919u * (k + 1)) % w->nr);
}

static struct vbts_record branch(uint64_t from, uint64_t to, unsigned int kind)
{
	return (struct vbts_record){
		.from = from, .to = to,
		.flags = VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
			 ((uint64_t)kind << VBTS_REC_KIND_SHIFT),
	};
}

static struct vbts_record walk_step(struct walk *w)
{
	const struct func *f = &w->funcs[w->cur];
	uint64_t r = next_rand(&w->rng), from;
	unsigned int p = (unsigned int)(r % 20), a = (unsigned int)(r >> 8) % BENCH_SITES;
	unsigned int b = (unsigned int)(r >> 16) % BENCH_SITES;
	size_t g;

	if (p < 14)
		return branch(site(f, a), site(f, b), VBTS_BR_JCC);
	if (p < 17 || !w->depth) {
		if (w->depth == BENCH_STACK)
			return branch(site(f, a), site(f, b), VBTS_BR_JCC);
		from = site(f, a);
		g = callee(w, w->cur, (unsigned int)(r >> 24) % BENCH_CALLEES);
		w->stack[w->depth] = w->cur;
		w->ret_to[w->depth++] = from;
		w->cur = g;
		return branch(from, w->funcs[g].start, VBTS_BR_CALL);
	}
	from = f->start + f->size - 1;
	w->cur = w->stack[--w->depth];
	return branch(from, w->ret_to[w->depth], VBTS_BR_RET);
}

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The sized functions of @path, sorted, without duplicates. */
static struct func *read_funcs(const char *path, size_t *nr)
{
	struct func *f = NULL;
	Elf_Scn *scn = NULL;
	size_t n = 0, kept = 0;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		f = calloc(n ? n : 1, sizeof(*f));
		for (size_t i = 0; f && i < n; i++) {
			GElf_Sym s;

			if (gelf_getsym(d, (int)i, &s) && GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    s.st_size >= BENCH_SITES && s.st_shndx != SHN_UNDEF)
				f[kept++] = (struct func){ s.st_value, s.st_size };
		}
		break;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!f || !kept) {
		free(f);
		errno = ENOEXEC;
		return NULL;
	}
	qsort(f, kept, sizeof(*f), cmp_func);
	n = kept;
	kept = 1;
	for (size_t i = 1; i < n; i++)
		if (f[i].start != f[kept - 1].start)
			f[kept++] = f[i];
	*nr = kept;
	return f;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wx");
	if (!f)
		return -errno;
	fputs(text, f);
	err = ferror(f);
	return fclose(f) || err ? -EIO : 0;
}

static int write_ring(const char *dir, unsigned int vcpu, uint64_t nr, const struct func *funcs,
		      size_t nr_funcs)
{
	struct ring_writer_config cfg = {
		.capacity = nr, .mode = VBTS_RING_WRAP, .vcpu_id = vcpu, .vm_id = 0xb7,
	};
	struct walk w = {
		.funcs = funcs, .nr = nr_funcs, .cur = vcpu * 17 % nr_funcs,
		.rng = 0x9e3779b97f4a7c15ULL + vcpu,
	};
	struct vbts_record rec;
	char path[PATH_MAX];
	struct ring_writer *rw;
	uint64_t i, slice = 0;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, vcpu);
	rw = ring_writer__create(path, &cfg);
	if (!rw)
		return -errno;
	rec = vbts_record__make_escape(VBTS_ESC_START, 0,
				       VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	ret = ring_writer__append(rw, &rec);
	for (i = 1; i < nr && !ret; i++) {
		if (i % BENCH_SLICE == 1) {
			uint64_t task = (2 * slice + vcpu) % BENCH_TASKS;

			rec = vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE,
						       0x1000000 + (task << 12),
						       1000 * slice + 500 * vcpu);
			slice++;
		} else {
			rec = walk_step(&w);
		}
		ret = ring_writer__append(rw, &rec);
	}
	if (ring_writer__close(rw) && !ret)
		ret = -EIO;
	return ret;
}

static int gen_trace(const char *elf, uint64_t records, const char *dir)
{
	char real[PATH_MAX], text[PATH_MAX + 128];
	struct func *funcs;
	size_t nr_funcs;
	FILE *ev;
	int ret;

	if (!realpath(elf, real))
		return -errno;
	funcs = read_funcs(real, &nr_funcs);
	if (!funcs)
		return -errno;
	if (mkdir(dir, 0755)) {
		ret = -errno;
		goto out;
	}
	snprintf(text, sizeof(text),
		 "{\"version\":1,\"vm_id\":\"00000000000000b7\",\"image\":\"%s\",\"vcpus\":%d}\n",
		 real, BENCH_VCPUS);
	ret = write_file(dir, "vm.json", text);
	if (ret)
		goto out;
	snprintf(text, sizeof(text), "%s/events.jsonl", dir);
	ev = fopen(text, "wx");
	if (!ev) {
		ret = -errno;
		goto out;
	}
	for (unsigned int t = 0; t < BENCH_TASKS; t++)
		fprintf(ev, "{\"time\":0,\"vcpu\":%u,\"event\":\"task\",\"pid\":%u,"
			"\"name\":\"bench%u\",\"cr3\":\"0x%x\"}\n", t % BENCH_VCPUS, 100 + t, t,
			0x1000000 + (t << 12));
	if (fclose(ev)) {
		ret = -EIO;
		goto out;
	}
	for (unsigned int v = 0; v < BENCH_VCPUS && !ret; v++)
		ret = write_ring(dir, v, records / BENCH_VCPUS, funcs, nr_funcs);
out:
	free(funcs);
	return ret;
}

static void gen_source(unsigned long n)
{
	printf("/* Generated by decode-bench-gen: %lu functions for the decode benchmark. */\n",
	       n);
	printf("volatile unsigned long bench_sink;\n");
	for (unsigned long i = 0; i < n; i++) {
		printf("unsigned long bench_fn_%lu(unsigned long x)\n{\n", i);
		printf("\tunsigned long s = %luUL;\n\n", i * 2654435761UL);
		printf("\tfor (unsigned long k = 0; k < (x & %lu); k++) {\n", 7 + i % 13);
		printf("\t\tif ((k ^ x) & %lu)\n\t\t\ts += k * %lu;\n", 1 + i % 5, 3 + i % 11);
		printf("\t\telse\n\t\t\ts ^= x >> %lu;\n\t}\n", 1 + i % 7);
		if (i)
			printf("\tif (s & 1)\n\t\ts += bench_fn_%lu(s >> 3);\n", (i * 7919) % i);
		printf("\tbench_sink = s;\n\treturn s;\n}\n\n");
	}
	printf("void _start(void)\n{\n\tbench_fn_%lu(bench_sink);\n\tfor (;;)\n\t\t;\n}\n",
	       n - 1);
}

/* The baseline: read every committed record of each ring and sum its words. */
static int sum_rings(const char *dir)
{
	/* About 1 MiB, a whole number of records. */
	static uint64_t buf[(1 << 20) / sizeof(struct vbts_record) * 3];
	struct vbts_ring_header h;
	uint64_t sum = 0, records = 0;
	char path[PATH_MAX];

	for (unsigned int v = 0;; v++) {
		uint64_t left;
		int fd;

		snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, v);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			break;
		if (read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) || h.committed > h.capacity) {
			fprintf(stderr,
				"decode-bench-gen: %s: not a closed ring that never wrapped\n", path);
			close(fd);
			return 1;
		}
		left = h.committed * sizeof(struct vbts_record);
		while (left) {
			size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf);
			ssize_t n = read(fd, buf, want);

			if (n <= 0 || n % sizeof(struct vbts_record)) {
				fprintf(stderr, "decode-bench-gen: %s: short read\n", path);
				close(fd);
				return 1;
			}
			for (size_t i = 0; i < (size_t)n / sizeof(uint64_t); i++)
				sum += buf[i];
			records += (uint64_t)n / sizeof(struct vbts_record);
			left -= (uint64_t)n;
		}
		close(fd);
	}
	printf("%" PRIu64 " %" PRIu64 "\n", records, sum);
	return records ? 0 : 1;
}

static int print_addrs(const char *dir, uint64_t n)
{
	struct vbts_ring_header h;
	struct vbts_record r;
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	f = fopen(path, "r");
	if (!f || fread(&h, sizeof(h), 1, f) != 1) {
		fprintf(stderr, "decode-bench-gen: %s: cannot be read\n", path);
		return 1;
	}
	for (uint64_t i = 0; i < h.committed && n && fread(&r, sizeof(r), 1, f) == 1; i++) {
		if (vbts_record__is_escape(&r))
			continue;
		printf("0x%" PRIx64 "\n0x%" PRIx64 "\n", r.from, r.to);
		n--;
	}
	fclose(f);
	return 0;
}

static int parse_count(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *s == '-' || !*s ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	uint64_t n;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "source") && !parse_count(argv[2], &n) && n) {
		gen_source((unsigned long)n);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc == 5 && !strcmp(argv[1], "trace") && !parse_count(argv[3], &n) &&
	    n >= 2 * BENCH_VCPUS) {
		ret = gen_trace(argv[2], n, argv[4]);
		if (ret)
			fprintf(stderr, "decode-bench-gen: %s: %s\n", argv[4], strerror(-ret));
		return ret ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "sum"))
		return sum_rings(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "addrs") && !parse_count(argv[3], &n))
		return print_addrs(argv[2], n);
	fprintf(stderr, "usage: decode-bench-gen source FUNCTIONS | trace ELF RECORDS DIR | "
		"sum DIR | addrs DIR N\n");
	return 2;
}
