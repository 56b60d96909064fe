// SPDX-License-Identifier: GPL-2.0
/*
 * introspect-tool.c - drives vmm/introspect/ for the linux suite: prints what kernel_info found
 * in kernel files, and what introspection finds in a guest memory dump (an ELF core written by
 * QEMU's dump-guest-memory), as JSON lines for the test scripts to compare with references.
 *
 *   introspect-tool layout KERNEL [--system-map FILE]
 *   introspect-tool core KERNEL CORE --cr3 X --cr4 X [--lstar X] [--system-map FILE]
 *                   [--walk-pgd] [--resolve CR3]... [--cpus N]
 *
 * Exit status: 0; 1 when introspection fails; 2 on bad arguments or an unreadable core.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gva.h"
#include "introspect.h"
#include "kernel-info.h"

#define MAX_RESOLVE 64

/* Guest-physical memory of a QEMU dump-guest-memory core: its PT_LOAD segments by p_paddr. */
struct core {
	const uint8_t *data;
	size_t size;
	const Elf64_Phdr *ph;
	unsigned int phnum;
	uint64_t cr4;
};

static void *core_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	const struct core *c = ctx;

	for (unsigned int i = 0; i < c->phnum; i++) {
		const Elf64_Phdr *p = &c->ph[i];

		if (p->p_type != PT_LOAD || gpa < p->p_paddr || gpa - p->p_paddr >= p->p_filesz ||
		    len > p->p_filesz - (gpa - p->p_paddr))
			continue;
		return (void *)(c->data + p->p_offset + (gpa - p->p_paddr));
	}
	return NULL;
}

static struct gva_space space(const struct core *c, uint64_t root)
{
	return (struct gva_space){
		.ptr = core_ptr,
		.ctx = c,
		.cr0 = 0x80000001ULL,			  /* PE, PG */
		.cr3 = root,
		.cr4 = 0x20ULL | (c->cr4 & 0x1000ULL),	  /* PAE, LA57 as the guest has it */
		.efer = 0x500ULL,			  /* LME, LMA */
	};
}

static int core_read(void *ctx, uint64_t root, uint64_t va, void *buf, size_t len)
{
	struct gva_space s = space(ctx, root);

	return gva__read(&s, va, buf, len);
}

static int core_translate(void *ctx, uint64_t root, uint64_t va, uint64_t *gpa)
{
	struct gva_space s = space(ctx, root);

	return gva__translate(&s, va, gpa);
}

static int core_open(const char *path, struct core *c)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "introspect-tool: %s: %s\n", path, strerror(errno));
		return -1;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		fprintf(stderr, "introspect-tool: %s: mmap: %s\n", path, strerror(errno));
		return -1;
	}
	c->data = map;
	c->size = st.st_size;
	eh = map;
	if (c->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > c->size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > c->size - eh->e_phoff) {
		fprintf(stderr, "introspect-tool: %s: not an ELF64 core\n", path);
		return -1;
	}
	c->ph = (const Elf64_Phdr *)(c->data + eh->e_phoff);
	c->phnum = eh->e_phnum;
	for (unsigned int i = 0; i < c->phnum; i++) {
		if (c->ph[i].p_type == PT_LOAD && (c->ph[i].p_offset > c->size ||
						   c->ph[i].p_filesz > c->size - c->ph[i].p_offset)) {
			fprintf(stderr, "introspect-tool: %s: segment %u outside the file\n", path, i);
			return -1;
		}
	}
	return 0;
}

static json_t *hex(uint64_t v)
{
	return json_sprintf("0x%" PRIx64, v);
}

static void emit(json_t *o)
{
	char *s;

	if (!o) {
		fprintf(stderr, "introspect-tool: cannot build a JSON line\n");
		exit(1);
	}
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);

	puts(s);
	free(s);
	json_decref(o);
}

/* comm is guest bytes: printable ASCII stays, anything else becomes \xNN. */
static void escape_comm(const char *comm, char *out)
{
	for (const unsigned char *p = (const unsigned char *)comm; *p; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			*out++ = (char)*p;
		else
			out += sprintf(out, "\\x%02x", *p);
	}
	*out = '\0';
}

static json_t *task_json(const char *kind, const struct guest_task *t)
{
	char comm[sizeof(t->comm) * 4];

	escape_comm(t->comm, comm);
	return json_pack("{s:s, s:i, s:i, s:s, s:o, s:o, s:o}", "kind", kind, "pid", t->pid,
			 "tgid", t->tgid, "comm", comm, "task", hex(t->task), "mm", hex(t->mm),
			 "pgd", hex(t->pgd));
}

static int print_process(const struct guest_task *t, void *ctx)
{
	emit(task_json("process", t));
	return 0;
}

static const char *const sym_names[KERNEL_SYM_COUNT] = {
	[KERNEL_SYM_INIT_TASK] = "init_task",
	[KERNEL_SYM_INIT_MM] = "init_mm",
	[KERNEL_SYM_PER_CPU_OFFSET] = "__per_cpu_offset",
	[KERNEL_SYM_CURRENT] = "current",
	[KERNEL_SYM_PAGE_OFFSET_BASE] = "page_offset_base",
	[KERNEL_SYM_ENTRY_SYSCALL_64] = "entry_SYSCALL_64",
	[KERNEL_SYM_PANIC_CPU] = "panic_cpu",
};

static const char *const sources[] = { "none", "system-map", "ksymtab", "image", "code" };

static void print_layout(const struct kernel_info *ki)
{
	const struct kernel_layout *l = kernel_info__layout(ki);
	json_t *syms = json_object();
	uint64_t addr;

	for (int i = 0; i < KERNEL_SYM_COUNT; i++) {
		if (kernel_info__symbol(ki, i, &addr))
			continue;
		json_object_set_new(syms, sym_names[i],
				    json_pack("{s:o, s:s}", "addr", hex(addr), "source",
					      sources[kernel_info__symbol_source(ki, i)]));
	}
#define F(name) #name, (json_int_t)(l->name == KERNEL_LAYOUT_ABSENT ? -1 : (int64_t)l->name)
	emit(json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		       "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		       "kind", "layout", F(task_size), F(task_pid), F(task_tgid), F(task_comm),
		       F(task_comm_len), F(task_mm), F(task_active_mm), F(task_tasks),
		       F(task_group_leader), F(task_exit_state), F(task_signal),
		       F(task_thread_node), F(task_thread_group), F(signal_thread_head), F(mm_pgd),
		       F(list_next), F(pcpu_current_task), F(tlb_ctx), F(tlb_ctx_stride),
		       F(tlb_ctx_count), "symbols", syms));
#undef F
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || !*s || *end ? -1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: introspect-tool layout KERNEL [--system-map FILE]\n"
			"       introspect-tool core KERNEL CORE --cr3 X --cr4 X [--lstar X] "
			"[--system-map FILE] [--walk-pgd] [--resolve CR3]... [--cpus N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct introspect_attach at = { 0 };
	const char *map = NULL, *core_path = NULL;
	uint64_t resolve[MAX_RESOLVE], cpus = 0;
	unsigned int nresolve = 0;
	struct kernel_info *ki;
	struct introspect *in;
	struct core c = { 0 };
	char err[256];
	bool layout;
	int i, ret;

	if (argc < 3)
		return usage();
	layout = !strcmp(argv[1], "layout");
	if (!layout && strcmp(argv[1], "core"))
		return usage();
	i = 3;
	if (!layout) {
		if (argc < 4)
			return usage();
		core_path = argv[3];
		i = 4;
	}
	for (; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v = 0;

		if (!strcmp(a, "--walk-pgd")) {
			at.flags |= INTROSPECT_WALK_PGD;
			continue;
		}
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(a, "--system-map")) {
			map = argv[++i];
			continue;
		}
		if (parse_u64(argv[++i], &v))
			return usage();
		if (!strcmp(a, "--cr3"))
			at.cr3 = v;
		else if (!strcmp(a, "--cr4"))
			at.cr4 = v;
		else if (!strcmp(a, "--lstar"))
			at.lstar = v;
		else if (!strcmp(a, "--cpus"))
			cpus = v;
		else if (!strcmp(a, "--resolve") && nresolve < MAX_RESOLVE)
			resolve[nresolve++] = v;
		else
			return usage();
	}

	ki = kernel_info__open(argv[2], map, err, sizeof(err));
	if (!ki) {
		fprintf(stderr, "introspect-tool: %s\n", err);
		return 1;
	}
	if (layout) {
		print_layout(ki);
		kernel_info__close(ki);
		return 0;
	}
	if (core_open(core_path, &c)) {
		kernel_info__close(ki);
		return 2;
	}
	c.cr4 = at.cr4;
	in = introspect__open(ki, &(struct introspect_mem){ core_read, core_translate, &c }, &at,
			      err, sizeof(err));
	kernel_info__close(ki);
	if (!in) {
		fprintf(stderr, "introspect-tool: %s\n", err);
		return 1;
	}
	emit(json_pack("{s:s, s:o, s:o, s:o}", "kind", "kernel", "slide",
		       hex(introspect__slide(in)), "page_offset_base",
		       hex(introspect__page_offset_base(in)), "root",
		       hex(introspect__kernel_root(in))));
	ret = introspect__for_each_process(in, print_process, NULL);
	if (ret) {
		fprintf(stderr, "introspect-tool: process list: %s\n", strerror(-ret));
		introspect__close(in);
		return 1;
	}
	for (unsigned int r = 0; r < nresolve; r++) {
		struct guest_task t;
		json_t *o;

		ret = introspect__resolve_cr3(in, resolve[r], &t);
		if (ret) {
			o = json_pack("{s:s, s:s, s:o}", "kind", "resolve", "error",
				      ret == -ENOENT ? "no process has these page tables"
						     : strerror(-ret),
				      "cr3", hex(resolve[r]));
		} else {
			o = task_json("resolve", &t);
			json_object_set_new(o, "cr3", hex(resolve[r]));
		}
		emit(o);
	}
	for (uint64_t cpu = 0; cpu < cpus; cpu++) {
		struct guest_task t;

		ret = introspect__current(in, (unsigned int)cpu, &t);
		if (ret) {
			emit(json_pack("{s:s, s:I, s:s}", "kind", "current", "cpu", (json_int_t)cpu,
				       "error", strerror(-ret)));
			continue;
		}
		json_t *o = task_json("current", &t);

		json_object_set_new(o, "cpu", json_integer((json_int_t)cpu));
		emit(o);
	}
	emit(json_pack("{s:s, s:I, s:I, s:I}", "kind", "stats", "reads",
		       (json_int_t)introspect__stats(in)->reads, "tasks",
		       (json_int_t)introspect__stats(in)->tasks, "skipped",
		       (json_int_t)introspect__stats(in)->skipped));
	introspect__close(in);
	munmap((void *)c.data, c.size);
	return 0;
}
