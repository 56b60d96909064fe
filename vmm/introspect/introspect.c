// SPDX-License-Identifier: GPL-2.0
/*
 * introspect.c - KASLR slide, the kernel's page tables, and bounded walks of the guest's task
 * list.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "../core/bytes.h"
#include "../core/x86.h"
#include "introspect.h"

/* The kernel image's virtual range (__START_KERNEL_map, KERNEL_IMAGE_SIZE = 1 GiB). */
#define KERNEL_IMAGE_START 0xffffffff80000000ULL
#define KERNEL_IMAGE_END 0xffffffffc0000000ULL
/* KASLR moves the image by multiples of CONFIG_PHYSICAL_ALIGN, itself a multiple of 2 MiB. */
#define SLIDE_ALIGN (2ULL << 20)
#define SLIDE_MAX (KERNEL_IMAGE_END - KERNEL_IMAGE_START)
/* The direct map's base is randomized in PUD (1 GiB) steps. */
#define DIRECT_MAP_ALIGN (1ULL << 30)
#define PHYS_LIMIT (1ULL << 52)
/* The direct map spans MAX_PHYSMEM_BITS: 46 with 4-level paging, 52 with 5-level. */
#define DIRECT_MAP_SIZE_L4 (1ULL << 46)
#define NR_CPUS_MAX 8192U

struct introspect {
	struct kernel_layout l;
	struct introspect_mem mem;
	struct introspect_stats stats;
	uint64_t root;		/* guest-physical address of init_mm.pgd */
	uint64_t slide;
	uint64_t page_offset_base;
	uint64_t pob_var;	/* runtime address of page_offset_base, 0 when unknown */
	uint64_t init_task;	/* runtime address */
	uint64_t init_mm;	/* runtime address */
	uint64_t kptr_min;	/* lowest canonical kernel address: 4- or 5-level paging */
	uint64_t direct_map_size; /* bytes of the direct map at page_offset_base */
	uint64_t per_cpu_offset; /* runtime address, 0 when unknown */
	uint64_t current_var;	/* per-CPU offset or runtime address; valid when has_current */
	uint64_t panic_cpu;	/* runtime address, 0 when unknown */
	bool has_current;
	bool walk_pgd;
	uint32_t max_tasks;
	/* the part of task_struct one read covers: [span_lo, span_lo + span_len) */
	uint32_t span_lo;
	uint32_t span_len;
	uint8_t *span;
};

static int rd(struct introspect *in, uint64_t va, void *buf, size_t len)
{
	in->stats.reads++;
	return in->mem.read(in->mem.ctx, in->root, va, buf, len) ? -EFAULT : 0;
}

static int rd64(struct introspect *in, uint64_t va, uint64_t *v)
{
	return rd(in, va, v, sizeof(*v));
}

static bool kptr_ok(const struct introspect *in, uint64_t p)
{
	return p >= in->kptr_min && !(p & 7);
}

static int32_t get32s(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The guest-physical address of a page table given by its kernel virtual address. */
static int pgd_phys(struct introspect *in, uint64_t pgd, uint64_t *pa)
{
	uint64_t p;

	if (!kptr_ok(in, pgd) || (pgd & (X86_PAGE_SIZE - 1)))
		return -EINVAL;
	/* the kernel's own tables (init_top_pgt) are in the image, not the direct map */
	if (!in->walk_pgd && in->page_offset_base && pgd >= in->page_offset_base &&
	    pgd - in->page_offset_base < in->direct_map_size && pgd < KERNEL_IMAGE_START) {
		*pa = pgd - in->page_offset_base;
		return 0;
	}
	in->stats.reads++;
	if (in->mem.translate(in->mem.ctx, in->root, pgd, &p))
		return -EFAULT;
	if (p & (X86_PAGE_SIZE - 1) || p >= PHYS_LIMIT)
		return -EINVAL;
	*pa = p;
	return 0;
}

/*
 * Brent's cycle detection over the nodes of one list walk: O(1) state, finds a cycle that does
 * not pass through the list head within a small multiple of its length.
 */
struct cycle {
	uint64_t tortoise;
	uint64_t power;
	uint64_t lam;
};

static void cycle_init(struct cycle *c, uint64_t first)
{
	c->tortoise = first;
	c->power = 1;
	c->lam = 1;
}

static bool cycle_step(struct cycle *c, uint64_t node)
{
	if (node == c->tortoise)
		return true;
	if (c->power == c->lam) {
		c->tortoise = node;
		c->power *= 2;
		c->lam = 0;
	}
	c->lam++;
	return false;
}

/* The fields of one task_struct, from one read of its span. */
struct task_fields {
	uint64_t next; /* tasks.next */
	uint64_t mm;
	uint64_t signal;
	int32_t exit_state;
};

static int read_task(struct introspect *in, uint64_t task, struct guest_task *gt,
		     struct task_fields *f)
{
	const struct kernel_layout *l = &in->l;
	const uint8_t *s = in->span;
	const uint32_t lo = in->span_lo; /* s + offset - lo: that member's bytes */
	uint32_t n;

	if (rd(in, task + lo, in->span, in->span_len))
		return -EFAULT;
	memset(gt, 0, sizeof(*gt));
	gt->task = task;
	gt->pid = get32s(s + l->task_pid - lo);
	gt->tgid = get32s(s + l->task_tgid - lo);
	for (n = 0; n < l->task_comm_len && s[l->task_comm - lo + n]; n++)
		gt->comm[n] = (char)s[l->task_comm - lo + n];
	gt->comm[n] = '\0';
	f->next = get_le64(s + l->task_tasks + l->list_next - lo);
	f->mm = get_le64(s + l->task_mm - lo);
	f->signal = l->task_signal != KERNEL_LAYOUT_ABSENT ? get_le64(s + l->task_signal - lo) : 0;
	f->exit_state = l->task_exit_state != KERNEL_LAYOUT_ABSENT ?
				get32s(s + l->task_exit_state - lo) : 0;
	gt->exit_state = f->exit_state;
	gt->exit_code = l->task_exit_code != KERNEL_LAYOUT_ABSENT ?
				get32s(s + l->task_exit_code - lo) : 0;
	gt->parent = l->task_real_parent != KERNEL_LAYOUT_ABSENT ?
				get_le64(s + l->task_real_parent - lo) : 0;
	return 0;
}

/* Sets @gt's mm and pgd from @mm; 0, or -EINVAL/-EFAULT for a bad mm. */
static int set_mm(struct introspect *in, struct guest_task *gt, uint64_t mm)
{
	uint64_t pgd, pa;
	int ret;

	gt->mm = 0;
	gt->pgd = 0;
	if (!mm)
		return 0;
	if (!kptr_ok(in, mm))
		return -EINVAL;
	ret = rd64(in, mm + in->l.mm_pgd, &pgd);
	if (ret)
		return ret;
	ret = pgd_phys(in, pgd, &pa);
	if (ret)
		return ret;
	gt->mm = mm;
	gt->pgd = pa;
	return 0;
}

/*
 * A leader that has exited (a zombie) has no mm while its other threads run with theirs: the
 * first thread with an mm gives it. Walks signal->thread_head (6.7+) or the leader's
 * thread_group ring (before), bounded by @budget tasks.
 */
static int live_thread_mm(struct introspect *in, uint64_t leader, const struct task_fields *f,
			  uint32_t *budget, uint64_t *mm)
{
	const struct kernel_layout *l = &in->l;
	uint64_t head, node, link;
	struct cycle cyc;

	*mm = 0;
	if (l->task_thread_node != KERNEL_LAYOUT_ABSENT &&
	    l->signal_thread_head != KERNEL_LAYOUT_ABSENT) {
		if (!kptr_ok(in, f->signal))
			return -EINVAL;
		head = f->signal + l->signal_thread_head;
		link = l->task_thread_node;
	} else if (l->task_thread_group != KERNEL_LAYOUT_ABSENT) {
		head = leader + l->task_thread_group;
		link = l->task_thread_group;
	} else {
		return 0;
	}
	if (rd64(in, head + l->list_next, &node))
		return -EFAULT;
	cycle_init(&cyc, node);
	while (node != head) {
		uint64_t t_mm;

		if (!kptr_ok(in, node) || node < link)
			return -EFAULT;
		if (*budget == 0)
			return -ELOOP;
		(*budget)--;
		in->stats.tasks++;
		if (rd64(in, node - link + l->task_mm, &t_mm) ||
		    rd64(in, node + l->list_next, &node))
			return -EFAULT;
		if (t_mm) {
			*mm = t_mm;
			return 0;
		}
		if (cycle_step(&cyc, node))
			return -ELOOP;
	}
	return 0;
}

/*
 * Walks init_task.tasks; @fn gets each readable process. Stops at @fn's non-zero return,
 * which it returns.
 */
static int walk(struct introspect *in, int (*fn)(const struct guest_task *, void *), void *ctx)
{
	const struct kernel_layout *l = &in->l;
	uint64_t head = in->init_task + l->task_tasks;
	uint32_t budget = in->max_tasks;
	struct task_fields f;
	struct guest_task gt;
	struct cycle cyc;
	uint64_t node;
	int ret;

	/* init_task itself: the idle task of CPU 0, no mm of its own */
	if (read_task(in, in->init_task, &gt, &f))
		return -EFAULT;
	in->stats.tasks++;
	ret = fn(&gt, ctx);
	if (ret)
		return ret;
	node = f.next;
	cycle_init(&cyc, node);
	while (node != head) {
		uint64_t task = node - l->task_tasks, mm;

		if (!kptr_ok(in, node) || node < l->task_tasks)
			return -EFAULT;
		if (budget == 0)
			return -ELOOP;
		budget--;
		in->stats.tasks++;
		if (read_task(in, task, &gt, &f))
			return -EFAULT;
		mm = f.mm;
		if (!mm && f.exit_state) {
			ret = live_thread_mm(in, task, &f, &budget, &mm);
			if (ret == -ELOOP)
				return ret;
			if (ret)
				mm = 0;
		}
		if (set_mm(in, &gt, mm)) {
			in->stats.skipped++;
		} else {
			ret = fn(&gt, ctx);
			if (ret)
				return ret;
		}
		node = f.next;
		if (cycle_step(&cyc, node))
			return -ELOOP;
	}
	return 0;
}

int introspect__for_each_process(struct introspect *in,
				 int (*fn)(const struct guest_task *task, void *ctx), void *ctx)
{
	return walk(in, fn, ctx);
}

struct resolve_ctx {
	uint64_t cr3;
	struct guest_task *out;
	bool user_half;	/* @out holds a process whose KPTI user half is @cr3 */
};

static int resolve_one(const struct guest_task *t, void *ctx)
{
	struct resolve_ctx *r = ctx;

	if (!t->pgd)
		return 0;
	if (t->pgd == r->cr3) {
		*r->out = *t;
		return 1;
	}
	/* KPTI: an order-1 PGD, the user half in its second page */
	if (!r->user_half && !(t->pgd & (2 * X86_PAGE_SIZE - 1)) &&
	    t->pgd + X86_PAGE_SIZE == r->cr3) {
		*r->out = *t;
		r->user_half = true;
	}
	return 0;
}

/*
 * The kernel randomizes the base of its direct map (page_offset_base) in setup_arch(), after it
 * has loaded page tables of its own: introspection opened before that, from an early CR3 load
 * seen late (`vbts attach` reads the ring every 100 ms), has the boot value, and no mm->pgd
 * translates to a process's CR3. When a CR3 finds no process, the variable is read again;
 * true when it changed to another plausible base (then taken).
 */
static bool new_page_offset_base(struct introspect *in)
{
	uint64_t pob;

	if (!in->pob_var || rd64(in, in->pob_var, &pob) || pob == in->page_offset_base ||
	    !kptr_ok(in, pob) || pob % DIRECT_MAP_ALIGN)
		return false;
	in->page_offset_base = pob;
	return true;
}

int introspect__resolve_cr3(struct introspect *in, uint64_t cr3, struct guest_task *out)
{
	struct resolve_ctx r = { .cr3 = cr3 & INTROSPECT_CR3_ADDR, .out = out };
	struct task_fields f;
	int ret;

	if (r.cr3 == in->root ||
	    (!(in->root & (2 * X86_PAGE_SIZE - 1)) && r.cr3 == in->root + X86_PAGE_SIZE)) {
		if (read_task(in, in->init_task, out, &f))
			return -EFAULT;
		out->mm = 0;
		out->pgd = in->root;
		return 0;
	}
	ret = walk(in, resolve_one, &r);
	if (ret == 1)
		return 0;
	if (ret)
		return ret;
	if (r.user_half)
		return 0;
	if (!new_page_offset_base(in))
		return -ENOENT;
	r = (struct resolve_ctx){ .cr3 = cr3 & INTROSPECT_CR3_ADDR, .out = out };
	ret = walk(in, resolve_one, &r);
	if (ret == 1)
		return 0;
	if (ret)
		return ret;
	return r.user_half ? 0 : -ENOENT;
}

int introspect__current(struct introspect *in, unsigned int cpu, struct guest_task *out)
{
	uint64_t off, task;
	struct task_fields f;

	if (!in->per_cpu_offset || !in->has_current)
		return -ENOENT;
	if (cpu >= NR_CPUS_MAX)
		return -EINVAL;
	if (rd64(in, in->per_cpu_offset + 8ULL * cpu, &off) ||
	    rd64(in, off + in->current_var + in->l.pcpu_current_task, &task))
		return -EFAULT;
	if (!kptr_ok(in, task))
		return -EFAULT;
	if (read_task(in, task, out, &f))
		return -EFAULT;
	return set_mm(in, out, f.mm) ? -EFAULT : 0;
}

int introspect__read_task(struct introspect *in, uint64_t task, struct guest_task *out)
{
	struct task_fields f;

	if (!kptr_ok(in, task))
		return -EINVAL;
	if (read_task(in, task, out, &f))
		return -EFAULT;
	return set_mm(in, out, f.mm) ? -EFAULT : 0;
}

int introspect__parent_tgid(struct introspect *in, const struct guest_task *task, int32_t *tgid)
{
	uint8_t b[4];

	if (in->l.task_real_parent == KERNEL_LAYOUT_ABSENT)
		return -ENOENT;
	if (!kptr_ok(in, task->parent))
		return -EINVAL;
	if (rd(in, task->parent + in->l.task_tgid, b, sizeof(b)))
		return -EFAULT;
	*tgid = get32s(b);
	return 0;
}

int introspect__exe_name(struct introspect *in, uint64_t mm, char *buf, size_t len)
{
	const struct kernel_layout *l = &in->l;
	uint64_t file, dentry, name;
	size_t n;

	buf[0] = '\0';
	if (l->mm_exe_file == KERNEL_LAYOUT_ABSENT || l->file_dentry == KERNEL_LAYOUT_ABSENT ||
	    l->dentry_name == KERNEL_LAYOUT_ABSENT)
		return -ENOENT;
	if (!kptr_ok(in, mm))
		return -EINVAL;
	if (rd64(in, mm + l->mm_exe_file, &file))
		return -EFAULT;
	if (!file)
		return -ENOENT;
	if (!kptr_ok(in, file) || rd64(in, file + l->file_dentry, &dentry) ||
	    !kptr_ok(in, dentry) || rd64(in, dentry + l->dentry_name, &name) ||
	    name < in->kptr_min)
		return -EFAULT;
	/* Page by page up to the NUL: a name may end just before an unmapped page. */
	for (n = 0; n + 1 < len;) {
		size_t chunk = X86_PAGE_SIZE - ((name + n) & (X86_PAGE_SIZE - 1));
		char *nul;

		if (chunk > len - 1 - n)
			chunk = len - 1 - n;
		if (rd(in, name + n, buf + n, chunk))
			return -EFAULT;
		nul = memchr(buf + n, '\0', chunk);
		if (nul) {
			n = (size_t)(nul - buf);
			break;
		}
		n += chunk;
	}
	buf[n] = '\0';
	return 0;
}

/* The runtime address of an image symbol; per-CPU offsets (below the kernel half) stay put. */
static uint64_t runtime(const struct introspect *in, uint64_t link)
{
	return link >= KERNEL_IMAGE_START ? link + in->slide : link;
}

/* Whether the build's identity bytes are at their link address + @slide. */
static bool identity_at(struct introspect *in, uint64_t va, const uint8_t *bytes, size_t len,
			uint64_t slide, uint8_t *buf)
{
	if (va + slide < va || va + slide + len > KERNEL_IMAGE_END)
		return false;
	return !rd(in, va + slide, buf, len) && !memcmp(buf, bytes, len);
}

static int find_slide(struct introspect *in, const struct kernel_info *ki, uint64_t lstar,
		      char *err, size_t errlen)
{
	const uint8_t *id = NULL;
	uint64_t entry, id_va = 0;
	size_t id_len = 0;
	uint8_t *buf = NULL;
	int ret = -ENOENT;

	if (!kernel_info__identity(ki, &id_va, &id, &id_len)) {
		buf = malloc(id_len);
		if (!buf)
			return -ENOMEM;
	}
	if (lstar && !kernel_info__symbol(ki, KERNEL_SYM_ENTRY_SYSCALL_64, &entry)) {
		uint64_t slide = lstar - entry;

		if (lstar < entry || slide % SLIDE_ALIGN || slide >= SLIDE_MAX) {
			errmsg__set(err, errlen, "LSTAR %#" PRIx64 " is not entry_SYSCALL_64 (%#" PRIx64
				") moved by a KASLR slide", lstar, entry);
			ret = -EINVAL;
		} else if (id && !identity_at(in, id_va, id, id_len, slide, buf)) {
			errmsg__set(err, errlen, "the kernel image is not where LSTAR says (slide %#"
				PRIx64 "): another build, or not booted", slide);
			ret = -EINVAL;
		} else {
			in->slide = slide;
			ret = 0;
		}
	} else if (id) {
		for (uint64_t slide = 0; slide < SLIDE_MAX; slide += SLIDE_ALIGN) {
			if (identity_at(in, id_va, id, id_len, slide, buf)) {
				in->slide = slide;
				ret = 0;
				break;
			}
		}
		if (ret)
			errmsg__set(err, errlen, "this kernel build's identity bytes are nowhere in "
				"the guest's kernel image range: another build, or not booted");
	} else {
		errmsg__set(err, errlen, "no way to find the KASLR slide: give the kernel image, or "
			"LSTAR and a System.map with entry_SYSCALL_64");
	}
	free(buf);
	return ret;
}

/* Checks init_task through the current root and takes init_mm.pgd as the root from now on. */
static int find_kernel(struct introspect *in, const struct kernel_info *ki, char *err,
		       size_t errlen)
{
	const struct kernel_layout *l = &in->l;
	struct guest_task gt;
	struct task_fields f;
	uint64_t sym, pob, pgd, root;

	kernel_info__symbol(ki, KERNEL_SYM_INIT_TASK, &sym);
	in->init_task = runtime(in, sym);
	if (read_task(in, in->init_task, &gt, &f)) {
		errmsg__set(err, errlen, "init_task at %#" PRIx64 " is unreadable", in->init_task);
		return -EFAULT;
	}
	/* INIT_TASK_COMM is "swapper", renamed "swapper/0" when CPU 0's idle task is set up */
	if (gt.pid != 0 || f.mm != 0 || !kptr_ok(in, f.next) || strncmp(gt.comm, "swapper", 7)) {
		errmsg__set(err, errlen, "init_task at %#" PRIx64 " does not look like one (pid %d): "
			"another build, or not booted", in->init_task, gt.pid);
		return -EINVAL;
	}
	kernel_info__symbol(ki, KERNEL_SYM_INIT_MM, &sym);
	in->init_mm = runtime(in, sym);

	if (!kernel_info__symbol(ki, KERNEL_SYM_PAGE_OFFSET_BASE, &sym)) {
		if (rd64(in, runtime(in, sym), &pob)) {
			errmsg__set(err, errlen, "page_offset_base is unreadable");
			return -EFAULT;
		}
		if (!kptr_ok(in, pob) || pob % DIRECT_MAP_ALIGN) {
			errmsg__set(err, errlen, "page_offset_base %#" PRIx64 " is no direct-map base",
				pob);
			return -EINVAL;
		}
		in->page_offset_base = pob;
		in->pob_var = runtime(in, sym);
	}

	if (rd64(in, in->init_mm + l->mm_pgd, &pgd) || pgd_phys(in, pgd, &root)) {
		errmsg__set(err, errlen, "init_mm.pgd is unreadable or no page table");
		return -EFAULT;
	}
	in->root = root;
	/* the same init_task through init_mm's tables */
	if (read_task(in, in->init_task, &gt, &f) || gt.pid != 0) {
		errmsg__set(err, errlen, "init_mm.pgd (%#" PRIx64 ") does not map init_task", root);
		return -EINVAL;
	}
	return 0;
}

static void set_span(struct introspect *in)
{
	const struct kernel_layout *l = &in->l;
	const uint32_t off[] = { l->task_pid, l->task_tgid, l->task_comm, l->task_mm,
				 l->task_tasks + l->list_next, l->task_signal,
				 l->task_exit_state, l->task_exit_code, l->task_real_parent };
	const uint32_t len[] = { 4, 4, l->task_comm_len, 8, 8, 8, 4, 4, 8 };
	uint32_t lo = UINT32_MAX, hi = 0;

	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		if (off[i] == KERNEL_LAYOUT_ABSENT)
			continue;
		if (off[i] < lo)
			lo = off[i];
		if (off[i] + len[i] > hi)
			hi = off[i] + len[i];
	}
	in->span_lo = lo;
	in->span_len = hi - lo;
}

struct introspect *introspect__open(const struct kernel_info *ki, const struct introspect_mem *mem,
				    const struct introspect_attach *at, char *err, size_t errlen)
{
	uint64_t cr3 = at->cr3 & INTROSPECT_CR3_ADDR, sym;
	struct introspect *in;
	int ret;

	errmsg__set(err, errlen, "%s", "");
	in = calloc(1, sizeof(*in));
	if (!in)
		goto err_nomem;
	in->l = *kernel_info__layout(ki);
	in->mem = *mem;
	in->kptr_min = (at->cr4 & X86_CR4_LA57) ? 0xff00000000000000ULL : 0xffff800000000000ULL;
	in->direct_map_size = (at->cr4 & X86_CR4_LA57) ? PHYS_LIMIT : DIRECT_MAP_SIZE_L4;
	in->max_tasks = at->max_tasks ? at->max_tasks : INTROSPECT_MAX_TASKS;
	in->walk_pgd = at->flags & INTROSPECT_WALK_PGD;
	set_span(in);
	in->span = malloc(in->span_len);
	if (!in->span)
		goto err_nomem;

	/*
	 * The CR3 given may be a KPTI user half, which maps almost nothing of the kernel: then
	 * the kernel half (4 KiB below) is tried, and its failure is the one reported.
	 */
	in->root = cr3;
	ret = find_slide(in, ki, at->lstar, err, errlen);
	if (!ret)
		ret = find_kernel(in, ki, err, errlen);
	if (ret && ret != -ENOMEM && (cr3 & X86_PAGE_SIZE)) {
		in->root = cr3 - X86_PAGE_SIZE;
		in->page_offset_base = 0;
		ret = find_slide(in, ki, at->lstar, err, errlen);
		if (!ret)
			ret = find_kernel(in, ki, err, errlen);
	}
	if (ret)
		goto err_free;

	if (!kernel_info__symbol(ki, KERNEL_SYM_PER_CPU_OFFSET, &sym))
		in->per_cpu_offset = runtime(in, sym);
	if (!kernel_info__symbol(ki, KERNEL_SYM_PANIC_CPU, &sym))
		in->panic_cpu = runtime(in, sym);
	if (!kernel_info__symbol(ki, KERNEL_SYM_CURRENT, &sym)) {
		in->current_var = runtime(in, sym);
		in->has_current = true;
	}
	return in;

err_nomem:
	errmsg__set(err, errlen, "out of memory");
	ret = -ENOMEM;
err_free:
	introspect__close(in);
	errno = -ret;
	return NULL;
}

void introspect__close(struct introspect *in)
{
	if (!in)
		return;
	free(in->span);
	free(in);
}

uint64_t introspect__slide(const struct introspect *in)
{
	return in->slide;
}

uint64_t introspect__page_offset_base(const struct introspect *in)
{
	return in->page_offset_base;
}

int introspect__tasks_tail(struct introspect *in, uint64_t *tail)
{
	const struct kernel_layout *l = &in->l;

	/* struct list_head { next; prev; }: prev of init_task.tasks, where new tasks go */
	return rd64(in, in->init_task + l->task_tasks + l->list_next + 8, tail);
}

int introspect__panic_cpu(struct introspect *in, int32_t *cpu)
{
	if (!in->panic_cpu)
		return -ENOENT;
	return rd(in, in->panic_cpu, cpu, sizeof(*cpu));
}

uint64_t introspect__kernel_root(const struct introspect *in)
{
	return in->root;
}

const struct introspect_stats *introspect__stats(const struct introspect *in)
{
	return &in->stats;
}
