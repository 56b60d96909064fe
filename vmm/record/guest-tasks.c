// SPDX-License-Identifier: GPL-2.0
/*
 * guest-tasks.c - a Linux guest's processes as the collector sees them: CR3 -> process through
 * introspection, the --task selection, and the task, exec, thread and exit events.
 *
 * Locking: @lock serializes everything; callers are vCPU threads at their exits.
 *
 * Per CR3 load the work is small: the process last seen with the new address space is checked
 * with one read of its task_struct and mm; only an address space not seen before costs a walk
 * of the task list (bounded by introspect's own limits).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "guest-tasks.h"
#include "introspect/introspect.h"
#include "introspect/kallsyms.h"
#include "introspect/kernel-info.h"
#include "introspect/vmlinux.h"
#include "log.h"
#include "trace-keys.h"
#include "memory.h"
#include "gva.h"
#include "x86.h"

/* Failed attempts to find the kernel before giving up (the guest has not booted, or it is
 * another kernel than the one given). */
#define ATTACH_TRIES_MAX 512
/* Linux's TASK_COMM_LEN - 1: what a comm keeps of a name. */
#define COMM_KEEP 15
#define EXE_NAME_MAX 256
/* Address spaces no process was found for (the kernel's temporary ones, a dead process's
 * still loaded lazily), not walked for again while the task list keeps its tail, for at most
 * UNRESOLVED_TTL_NS. */
#define UNRESOLVED_MAX 16
/* Threads announced (thread events) that may still exec: the oldest make room. */
#define THREADS_MAX 256
/*
 * Processes remembered after their exit, for the thread records of their address space that
 * another vCPU's ring (or this vCPU's, copied after the CR3 load that saw the exit) still
 * holds: the oldest make room.
 */
#define EXITED_MAX GUEST_TASKS_EXITED_MAX
/* The upper byte of a guest kernel address, which a THREAD record's 56 bits leave out. */
#define KERNEL_TOP_BYTE 0xff00000000000000ULL
#define UNRESOLVED_TTL_NS 1000000000ULL

/**
 * struct gt_select - one --task value.
 * @pid:  the pid (or tgid), when @name is empty
 * @name: a process name
 */
struct gt_select {
	int32_t pid;
	char name[EXE_NAME_MAX];
};

/**
 * struct gt_proc - a process seen so far.
 * @pid, @tgid: its ids
 * @ppid:       the tgid of the process that created it (task_struct.real_parent), -1 unknown
 * @task:       its (leader's) task_struct
 * @mm:         its mm_struct
 * @id:         address-space id of its current mm
 * @announced:  @id was announced, or its announcement is pending
 * @traced:     selected by --task (kept across execs)
 * @used:       the slot holds a process
 * @pending:    the announcement of @id waits for the final comm (execve loads the new address
 *              space before it sets the comm): written once the comm is the executable's
 *              name or another than at the load, at the next exec or exit, or at the end
 * @pend_exec:  it is an exec event (else a task event)
 * @pend_vcpu:  the vCPU that loaded @id
 * @pend_time:  when
 * @pend_id:    the address-space id announced (@id is changed by an exec before the
 *              announcement of the address space before it is written)
 * @pend_comm:  the comm at the load
 * @comm:       the comm it was last announced with
 */
struct gt_proc {
	int32_t pid;
	int32_t tgid;
	int32_t ppid;
	uint64_t task;
	uint64_t mm;
	uint64_t id;
	bool announced;
	bool traced;
	bool used;
	bool pending;
	bool pend_exec;
	unsigned int pend_vcpu;
	uint64_t pend_time;
	uint64_t pend_id;
	char pend_comm[KERNEL_COMM_MAX + 1];
	char comm[KERNEL_COMM_MAX + 1];
};

struct guest_tasks {
	pthread_mutex_t lock;
	struct kernel_info *ki;
	struct introspect *in;
	char *kernel;		/* the kernel file, for its kallsyms tables */
	const struct guest_memory *mem; /* the VMM's guest memory, NULL when attached */
	void *(*phys)(const void *ctx, uint64_t gpa, uint64_t len);
	const void *phys_ctx;
	int (*read)(const void *ctx, uint64_t gpa, void *buf, size_t len);
	uint64_t cr4;
	FILE *events;
	unsigned int attach_tries;
	struct gt_select *sel;
	unsigned int nr_sel;
	unsigned int select_gen; /* guest_tasks__select_gen() */
	uint64_t first_ctx;	/* the lowest mm context of a process seen, UINT64_MAX before */
	struct gt_proc *procs;
	unsigned int nr_procs;
	int *current;		/* per vCPU: index in @procs of the process loaded, or -1 */
	bool *renewed;		/* per vCPU: its last load was resolved anew */
	struct {
		uint64_t id;	/* ~0: free */
		uint64_t tail;	/* init_task.tasks's tail then */
		uint64_t time;
	} unresolved[UNRESOLVED_MAX];
	struct {
		int32_t pid;	/* 0: free */
		uint64_t task;	/* its task_struct */
		uint64_t id;	/* the address space it ran in */
		bool traced;	/* its owner was selected */
	} threads[THREADS_MAX];
	unsigned int threads_next;
	struct {
		uint64_t id;	/* the address space it had; ~0: free */
		int32_t pid;
		int32_t tgid;
		int32_t ppid;
		bool traced;
		char comm[KERNEL_COMM_MAX + 1];
	} exited[EXITED_MAX];
	unsigned int exited_next;
	unsigned int unresolved_next;
	uint64_t walks_saved;	/* loads not walked for thanks to @unresolved */
	uint64_t written;	/* events written */
	uint64_t dropped;	/* events over GUEST_TASKS_MAX_EVENTS */
	unsigned int nr_vcpus;
	struct guest_crash *crashes;	/* per vCPU: GUEST_TASKS_MAX_CRASHES, oldest first */
	unsigned int *nr_crashes;	/* per vCPU */
	uint64_t crashes_dropped;
};

/* ---- guest memory as introspection reads it ---------------------------------------------- */

static void *mem_ptr(const void *ctx, uint64_t gpa, uint64_t len)
{
	return guest_memory__ptr(ctx, gpa, len);
}

static struct gva_space space(const struct guest_tasks *gt, uint64_t root)
{
	return (struct gva_space){
		.ptr = gt->phys,
		.ctx = gt->phys_ctx,
		.cr0 = X86_CR0_PE | X86_CR0_PG,
		.cr3 = root,
		.cr4 = X86_CR4_PAE | (gt->cr4 & X86_CR4_LA57),
		.efer = X86_EFER_LME | X86_EFER_LMA,
	};
}

static int mem_read(void *ctx, uint64_t root, uint64_t va, void *buf, size_t len)
{
	struct gva_space s = space(ctx, root);

	return gva__read(&s, va, buf, len);
}

static int mem_translate(void *ctx, uint64_t root, uint64_t va, uint64_t *gpa)
{
	struct gva_space s = space(ctx, root);

	return gva__translate(&s, va, gpa);
}

/* ---- set-up -------------------------------------------------------------------------------- */

static int parse_select(struct gt_select *s, const char *v, char *err, size_t errlen)
{
	size_t len = strlen(v);
	char *end;
	long pid;

	memset(s, 0, sizeof(*s));
	if (!len || len >= sizeof(s->name) || strchr(v, '/')) {
		snprintf(err, errlen, "--task '%.64s': expected a process name (1 to %zu bytes, no "
			 "'/') or a pid", v, sizeof(s->name) - 1);
		return -EINVAL;
	}
	if (v[0] >= '0' && v[0] <= '9') {
		errno = 0;
		pid = strtol(v, &end, 10);
		if (errno || *end || pid < 0 || pid > INT32_MAX) {
			snprintf(err, errlen, "--task %.64s: not a pid (0 to %d)", v, INT32_MAX);
			return -EINVAL;
		}
		s->pid = (int32_t)pid;
		return 0;
	}
	memcpy(s->name, v, len + 1);
	return 0;
}

struct guest_tasks *guest_tasks__create(const struct guest_tasks_config *cfg, char *err,
					size_t errlen)
{
	struct guest_tasks *gt;
	int ret = -ENOMEM;

	snprintf(err, errlen, "out of memory");
	if (cfg->nr_select > GUEST_TASKS_MAX_SELECT) {
		snprintf(err, errlen, "--task given %u times, at most %u", cfg->nr_select,
			 GUEST_TASKS_MAX_SELECT);
		errno = EINVAL;
		return NULL;
	}
	gt = calloc(1, sizeof(*gt));
	if (!gt)
		goto err;
	pthread_mutex_init(&gt->lock, NULL);
	gt->mem = cfg->mem;
	gt->phys = cfg->mem ? mem_ptr : cfg->phys;
	gt->phys_ctx = cfg->mem ? (const void *)cfg->mem : cfg->phys_ctx;
	gt->read = cfg->mem ? NULL : cfg->read;
	if (!gt->phys) {
		snprintf(err, errlen, "no guest memory to read");
		ret = -EINVAL;
		goto err_free;
	}
	gt->nr_vcpus = cfg->nr_vcpus;
	gt->first_ctx = UINT64_MAX;
	gt->kernel = cfg->kernel ? strdup(cfg->kernel) : NULL;
	if (cfg->kernel && !gt->kernel)
		goto err_free;
	for (unsigned int i = 0; i < UNRESOLVED_MAX; i++)
		gt->unresolved[i].id = ~0ULL;
	for (unsigned int i = 0; i < EXITED_MAX; i++)
		gt->exited[i].id = ~0ULL;
	gt->sel = calloc(cfg->nr_select ? cfg->nr_select : 1, sizeof(*gt->sel));
	gt->procs = calloc(GUEST_TASKS_MAX_PROCS, sizeof(*gt->procs));
	gt->current = malloc((cfg->nr_vcpus ? cfg->nr_vcpus : 1) * sizeof(*gt->current));
	gt->renewed = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(*gt->renewed));
	gt->crashes = calloc((cfg->nr_vcpus ? cfg->nr_vcpus : 1) * GUEST_TASKS_MAX_CRASHES,
			     sizeof(*gt->crashes));
	gt->nr_crashes = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(*gt->nr_crashes));
	if (!gt->sel || !gt->procs || !gt->current || !gt->renewed || !gt->crashes ||
	    !gt->nr_crashes)
		goto err_free;
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++)
		gt->current[i] = -1;
	for (unsigned int i = 0; i < cfg->nr_select; i++) {
		ret = parse_select(&gt->sel[i], cfg->select[i], err, errlen);
		if (ret)
			goto err_free;
	}
	gt->nr_sel = cfg->nr_select;
	gt->ki = kernel_info__open(cfg->kernel, cfg->system_map, err, errlen);
	if (!gt->ki) {
		ret = -errno;
		goto err_free;
	}
	return gt;

err_free:
	guest_tasks__destroy(gt);
err:
	errno = -ret;
	return NULL;
}

void guest_tasks__destroy(struct guest_tasks *gt)
{
	if (!gt)
		return;
	introspect__close(gt->in);
	kernel_info__close(gt->ki);
	free(gt->kernel);
	free(gt->sel);
	free(gt->procs);
	free(gt->current);
	free(gt->renewed);
	free(gt->crashes);
	free(gt->nr_crashes);
	pthread_mutex_destroy(&gt->lock);
	free(gt);
}

void guest_tasks__set_events(struct guest_tasks *gt, FILE *events)
{
	pthread_mutex_lock(&gt->lock);
	gt->events = events;
	pthread_mutex_unlock(&gt->lock);
}

int guest_tasks__set_select(struct guest_tasks *gt, const char *const *select, unsigned int nr,
			    char *err, size_t errlen)
{
	struct gt_select *sel;
	int ret;

	if (nr > GUEST_TASKS_MAX_SELECT) {
		snprintf(err, errlen, "%u names, at most %u", nr, GUEST_TASKS_MAX_SELECT);
		return -EINVAL;
	}
	sel = calloc(nr ? nr : 1, sizeof(*sel));
	if (!sel) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < nr; i++) {
		ret = parse_select(&sel[i], select[i], err, errlen);
		if (ret) {
			free(sel);
			return ret;
		}
	}
	pthread_mutex_lock(&gt->lock);
	free(gt->sel);
	gt->sel = sel;
	__atomic_store_n(&gt->nr_sel, nr, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gt->select_gen, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < gt->nr_procs; i++)
		gt->procs[i].traced = false;
	pthread_mutex_unlock(&gt->lock);
	return 0;
}

bool guest_tasks__selective(const struct guest_tasks *gt)
{
	return __atomic_load_n(&gt->nr_sel, __ATOMIC_RELAXED) > 0;
}

bool guest_tasks__attached(struct guest_tasks *gt)
{
	bool ret;

	pthread_mutex_lock(&gt->lock);
	ret = gt->in != NULL;
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

int guest_tasks__attach(struct guest_tasks *gt, uint64_t cr3, uint64_t cr4, uint64_t lstar)
{
	struct introspect_attach at = { .cr3 = cr3, .cr4 = cr4, .lstar = lstar };
	struct introspect_mem mem = { mem_read, mem_translate, gt };
	char err[256];
	int ret = 0;

	pthread_mutex_lock(&gt->lock);
	if (gt->in)
		goto out;
	if (gt->attach_tries >= ATTACH_TRIES_MAX) {
		ret = -EAGAIN;
		goto out;
	}
	gt->cr4 = cr4;
	gt->in = introspect__open(gt->ki, &mem, &at, err, sizeof(err));
	if (!gt->in) {
		ret = errno ? -errno : -EINVAL;
		if (++gt->attach_tries == ATTACH_TRIES_MAX)
			pr_warn("the guest kernel was not found in guest memory after %u tries, "
				"processes are not resolved: %s", ATTACH_TRIES_MAX, err);
		goto out;
	}
	pr_debug("guest kernel found: KASLR slide %#" PRIx64,
		 introspect__slide(gt->in));
out:
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

bool guest_tasks__kaslr_slide(struct guest_tasks *gt, uint64_t *slide)
{
	bool ret;

	pthread_mutex_lock(&gt->lock);
	ret = gt->in != NULL;
	if (ret)
		*slide = introspect__slide(gt->in);
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

/* ---- the kernel's symbols ---------------------------------------------------------------- */

/*
 * The vmcoreinfo pages of guest RAM: pages that start with "OSRELEASE=" (the kernel's
 * vmcoreinfo_data is a page of its own), copied, whose text names the kallsyms tables; at most
 * @max. Any process can write such a page: each is only a candidate.
 */
static unsigned int vmcoreinfo_candidates(const struct guest_memory *mem,
					  struct kallsyms_where *out, unsigned int max)
{
	uint64_t low = guest_memory__low_size(mem), size = guest_memory__size(mem);
	uint64_t ranges[2][2] = { { 0, low }, { GUEST_MEMORY_HIGH_START,
					      GUEST_MEMORY_HIGH_START + (size - low) } };
	char page[KALLSYMS_VMCOREINFO_MAX];
	unsigned int n = 0;

	for (unsigned int r = 0; r < 2; r++) {
		for (uint64_t gpa = ranges[r][0]; gpa + sizeof(page) <= ranges[r][1] && n < max;
		     gpa += sizeof(page)) {
			const char *p = guest_memory__ptr(mem, gpa, sizeof(page));

			if (!p || memcmp(p, "OSRELEASE=", 10))
				continue;
			memcpy(page, p, sizeof(page));
			if (!kallsyms__parse_vmcoreinfo(page, sizeof(page), &out[n]))
				n++;
		}
	}
	return n;
}

/* Where guest RAM is searched through a reader: below 4 GiB, then from 4 GiB up to this. */
#define SCAN_LOW_END (4ULL << 30)
#define SCAN_HIGH_END (1ULL << 40)
/* Below this a hole does not end the search (ROM, VGA and such in a PC's first MiB). */
#define SCAN_LOW_HOLES (1ULL << 20)

/*
 * The same search through the reader of an attached VM (no mapping of its memory here): RAM
 * from 0 up to the first hole above the first MiB, then from 4 GiB up to the next hole, read
 * GUEST_TASKS_READ_MAX at a time. A chunk that straddles the end of RAM is not searched.
 */
static unsigned int vmcoreinfo_candidates_read(struct guest_tasks *gt, struct kallsyms_where *out,
					       unsigned int max, uint64_t *searched)
{
	uint64_t ranges[2][2] = { { 0, SCAN_LOW_END }, { SCAN_LOW_END, SCAN_HIGH_END } };
	unsigned int n = 0;
	char *buf;

	_Static_assert(GUEST_TASKS_READ_MAX % KALLSYMS_VMCOREINFO_MAX == 0,
		       "a read holds whole pages");
	buf = malloc(GUEST_TASKS_READ_MAX);
	if (!buf)
		return 0;
	for (unsigned int r = 0; r < 2 && n < max; r++) {
		for (uint64_t gpa = ranges[r][0]; gpa < ranges[r][1] && n < max;
		     gpa += GUEST_TASKS_READ_MAX) {
			if (gt->read(gt->phys_ctx, gpa, buf, GUEST_TASKS_READ_MAX)) {
				if (gpa < SCAN_LOW_HOLES)
					continue;
				break;
			}
			*searched += GUEST_TASKS_READ_MAX;
			/* A copy already: the guest cannot change it while it is parsed. */
			for (size_t off = 0; off < GUEST_TASKS_READ_MAX && n < max;
			     off += KALLSYMS_VMCOREINFO_MAX)
				if (!memcmp(buf + off, "OSRELEASE=", 10) &&
				    !kallsyms__parse_vmcoreinfo(buf + off, KALLSYMS_VMCOREINFO_MAX,
								&out[n]))
					n++;
		}
	}
	free(buf);
	return n;
}

/* vmcoreinfo pages tried at most. */
#define KALLSYMS_CANDIDATES 8

int guest_tasks__write_kallsyms(struct guest_tasks *gt, const char *path, size_t *nr, char *err,
				size_t errlen)
{
	struct kallsyms_where where[KALLSYMS_CANDIDATES];
	struct vmlinux v = { 0 };
	uint64_t searched = 0;
	unsigned int n, i;
	char tmp[4096 + 8];
	uint64_t slide;
	FILE *f;
	int ret;

	if (!guest_tasks__kaslr_slide(gt, &slide)) {
		snprintf(err, errlen, "the guest kernel was not found in its memory");
		return -ENOENT;
	}
	if (!gt->kernel || (!gt->mem && !gt->read)) {
		snprintf(err, errlen, gt->kernel ? "guest memory cannot be searched" :
						   "no kernel image");
		return -ENOENT;
	}
	n = gt->mem ? vmcoreinfo_candidates(gt->mem, where, KALLSYMS_CANDIDATES) :
		      vmcoreinfo_candidates_read(gt, where, KALLSYMS_CANDIDATES, &searched);
	if (!n) {
		snprintf(err, errlen, "no vmcoreinfo naming the kallsyms tables in guest memory");
		if (!gt->mem)
			snprintf(err + strlen(err), errlen - strlen(err), " (%" PRIu64 " MiB read)",
				 searched >> 20);
		return -ENOENT;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	ret = vmlinux__load(gt->kernel, &v, err, errlen);
	if (ret)
		return ret;
	if (v.kind != VMLINUX_ELF) {
		vmlinux__release(&v);
		snprintf(err, errlen, "the kernel file is no ELF image");
		return -ENOEXEC;
	}
	ret = -ENOENT;
	for (i = 0; i < n && ret; i++) {
		f = fopen(tmp, "we");
		if (!f) {
			ret = -errno;
			break;
		}
		ret = kallsyms__write_map(v.data, v.size, &where[i], slide, f, nr, err, errlen);
		if (fclose(f) && !ret)
			ret = -EIO;
	}
	vmlinux__release(&v);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* ---- events ------------------------------------------------------------------------------- */

/* Guest bytes as valid UTF-8: each byte that starts no valid sequence becomes U+FFFD. */
static json_t *guest_string(const char *s)
{
	char *buf = escape__utf8_dup(s, SIZE_MAX);
	json_t *j;

	if (!buf)
		return NULL;
	j = json_string(buf);
	free(buf);
	return j;
}

static void write_event(struct guest_tasks *gt, json_t *o)
{
	if (!o)
		return;
	if (gt->events && gt->written >= GUEST_TASKS_MAX_EVENTS) {
		if (!gt->dropped++)
			pr_warn("the guest's processes gave %u events: later ones are not written",
				GUEST_TASKS_MAX_EVENTS);
	} else if (gt->events) {
		sigset_t all, old;

		/*
		 * One line at a time: the agent writes to the same stream. No signal may
		 * interrupt the write (a vCPU kick would lose the line).
		 */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		flockfile(gt->events);
		json_dumpf(o, gt->events, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		fputc('\n', gt->events);
		fflush(gt->events);
		funlockfile(gt->events);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		gt->written++;
	}
	json_decref(o);
}

/* A task, exec or thread event; @ppid (the creator's tgid) is left out when negative. */
static void announce(struct guest_tasks *gt, const char *event, const struct guest_task *t,
		     int32_t ppid, uint64_t id, uint64_t time, unsigned int vcpu)
{
	char cr3[24];
	json_t *o;

	snprintf(cr3, sizeof(cr3), "%#" PRIx64, id);
	o = json_pack("{s:s, s:i, s:i}", EVENTS_KEY_EVENT, event, EVENTS_KEY_PID, (int)t->pid,
		      EVENTS_KEY_TGID, (int)t->tgid);
	if (o && ppid >= 0 && json_object_set_new(o, EVENTS_KEY_PPID, json_integer(ppid)))
		goto err;
	if (o && (json_object_set_new(o, EVENTS_KEY_NAME, guest_string(t->comm)) ||
		  json_object_set_new(o, EVENTS_KEY_CR3, json_string(cr3)) ||
		  json_object_set_new(o, EVENTS_KEY_TIME, json_integer((json_int_t)time)) ||
		  json_object_set_new(o, EVENTS_KEY_VCPU, json_integer(vcpu))))
		goto err;
	write_event(gt, o);
	return;
err:
	json_decref(o); /* out of memory: the event is not written */
}

/* The parent's tgid of @t, -1 when the guest's task_struct does not say. */
static int32_t parent_of(struct guest_tasks *gt, const struct guest_task *t)
{
	int32_t ppid;

	if (introspect__parent_tgid(gt->in, t, &ppid) || ppid < 0)
		return -1;
	return ppid;
}

/*
 * A wait status as a shell shows it: the exit status, or 128 + the signal that killed it
 * (139 for a fatal SIGSEGV).
 */
static int exit_status(int32_t wait_status)
{
	if (wait_status & 0x7f)
		return 128 + (wait_status & 0x7f);
	return (wait_status >> 8) & 0xff;
}

/* ---- processes --------------------------------------------------------------------------- */

static bool name_matches(const char *want, const char *comm, const char *exe)
{
	size_t wl = strlen(want);

	if (exe && exe[0] && !strcmp(want, exe))
		return true;
	if (wl > COMM_KEEP)
		wl = COMM_KEEP;
	return strlen(comm) == wl && !strncmp(want, comm, wl);
}

static bool selected(const struct guest_tasks *gt, const struct guest_task *t, const char *exe)
{
	for (unsigned int i = 0; i < gt->nr_sel; i++) {
		const struct gt_select *s = &gt->sel[i];

		if (s->name[0] ? name_matches(s->name, t->comm, exe) :
				 s->pid == t->pid || s->pid == t->tgid)
			return true;
	}
	return false;
}

static struct gt_proc *find_pid(struct guest_tasks *gt, int32_t pid)
{
	for (unsigned int i = 0; i < gt->nr_procs; i++)
		if (gt->procs[i].used && gt->procs[i].pid == pid)
			return &gt->procs[i];
	return NULL;
}

static struct gt_proc *find_id(struct guest_tasks *gt, uint64_t id)
{
	for (unsigned int i = 0; i < gt->nr_procs; i++)
		if (gt->procs[i].used && gt->procs[i].id == id)
			return &gt->procs[i];
	return NULL;
}

static struct gt_proc *new_proc(struct guest_tasks *gt)
{
	for (unsigned int i = 0; i < gt->nr_procs; i++)
		if (!gt->procs[i].used)
			return &gt->procs[i];
	if (gt->nr_procs < GUEST_TASKS_MAX_PROCS)
		return &gt->procs[gt->nr_procs++];
	return NULL;
}

/*
 * Whether @p still runs in its address space (one read of the task_struct and its mm). The
 * kernel's own page tables (init_mm: idle and kernel threads) stay init_task's.
 */
static bool still_there(struct guest_tasks *gt, const struct gt_proc *p, struct guest_task *t)
{
	if (introspect__read_task(gt->in, p->task, t) || t->pid != p->pid)
		return false;
	if (!p->mm)
		return p->id == guest_tasks__id(introspect__kernel_root(gt->in));
	return t->mm == p->mm && guest_tasks__id(t->pgd) == p->id;
}

/*
 * Writes @p's pending announcement: with @force whatever its comm, else only once the comm is
 * final (the executable's name, or another than at the load). Returns true when it was
 * written and its final comm selects it just now.
 */
static bool flush(struct guest_tasks *gt, struct gt_proc *p, bool force)
{
	char exe[EXE_NAME_MAX];
	struct guest_task t;

	if (!p->pending)
		return false;
	if (introspect__read_task(gt->in, p->task, &t) || t.pid != p->pid) {
		/* gone already: announce it by what was seen at the load */
		if (!force)
			return false;
		memset(&t, 0, sizeof(t));
		t.pid = p->pid;
		t.tgid = p->tgid;
		memcpy(t.comm, p->pend_comm, sizeof(t.comm));
	} else if (!force && !strcmp(t.comm, p->pend_comm) &&
		   (introspect__exe_name(gt->in, p->mm, exe, sizeof(exe)) ||
		    !name_matches(exe, t.comm, NULL))) {
		return false;
	}
	announce(gt, p->pend_exec ? EVENT_EXEC : EVENT_TASK, &t, p->ppid, p->pend_id, p->pend_time,
		 p->pend_vcpu);
	memcpy(p->comm, t.comm, sizeof(p->comm));
	p->pending = false;
	if (gt->nr_sel && !p->traced && t.pid && selected(gt, &t, NULL)) {
		p->traced = true;
		return true;
	}
	return false;
}

/* Linux x86's numbers of the signals whose death is a crash. */
static bool fatal_signal(int signo)
{
	return signo == 4 || signo == 6 || signo == 7 || signo == 8 || signo == 11;
}

/*
 * @p (read as @t) was killed by signal @signo: queue its crash for the vCPU it ran on last
 * (@vcpu, where its exit was seen, when none has it loaded).
 */
static void queue_crash(struct guest_tasks *gt, const struct gt_proc *p,
			const struct guest_task *t, int signo, uint64_t time, unsigned int vcpu)
{
	struct guest_crash *c;

	for (unsigned int i = 0; i < gt->nr_vcpus; i++) {
		if (gt->current[i] == (int)(p - gt->procs)) {
			vcpu = i;
			break;
		}
	}
	if (gt->nr_crashes[vcpu] >= GUEST_TASKS_MAX_CRASHES) {
		if (!gt->crashes_dropped++)
			pr_warn("vcpu %u: more than %u process crashes waiting: later ones are "
				"not reported", vcpu, GUEST_TASKS_MAX_CRASHES);
		return;
	}
	c = &gt->crashes[vcpu * GUEST_TASKS_MAX_CRASHES + gt->nr_crashes[vcpu]++];
	memset(c, 0, sizeof(*c));
	c->pid = p->pid;
	c->tgid = p->tgid;
	c->signo = signo;
	c->id = p->id;
	c->time_ns = time;
	snprintf(c->comm, sizeof(c->comm), "%s", t->comm);
}

bool guest_tasks__take_crash(struct guest_tasks *gt, unsigned int vcpu, struct guest_crash *c)
{
	bool ret = false;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	if (gt->nr_crashes[vcpu]) {
		struct guest_crash *q = &gt->crashes[vcpu * GUEST_TASKS_MAX_CRASHES];

		*c = q[0];
		memmove(q, q + 1, --gt->nr_crashes[vcpu] * sizeof(*q));
		ret = true;
	}
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

bool guest_tasks__current(struct guest_tasks *gt, unsigned int vcpu, struct guest_crash *c)
{
	struct guest_task t;
	struct gt_proc *p;
	bool ret = false;
	int cur;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	cur = gt->in ? gt->current[vcpu] : -1;
	if (cur >= 0 && gt->procs[cur].used) {
		p = &gt->procs[cur];
		memset(c, 0, sizeof(*c));
		c->pid = p->pid;
		c->tgid = p->tgid;
		c->id = p->id;
		if (!introspect__read_task(gt->in, p->task, &t) && t.pid == p->pid)
			snprintf(c->comm, sizeof(c->comm), "%s", t.comm);
		ret = true;
	}
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

/*
 * @p exited: its address space's thread records that a ring still holds name its threads
 * (guest_tasks__thread()) after it is forgotten.
 */
static void remember_exited(struct guest_tasks *gt, const struct gt_proc *p)
{
	unsigned int i = gt->exited_next++ % EXITED_MAX;

	gt->exited[i].id = p->id;
	gt->exited[i].pid = p->pid;
	gt->exited[i].tgid = p->tgid;
	gt->exited[i].ppid = p->ppid;
	gt->exited[i].traced = p->traced;
	memcpy(gt->exited[i].comm, p->comm[0] ? p->comm : p->pend_comm,
	       sizeof(gt->exited[i].comm));
}

/* @p left its address space for good: it exited unless it exec'd (mm changed, same pid). */
static void check_exit(struct guest_tasks *gt, struct gt_proc *p, uint64_t time,
		       unsigned int vcpu)
{
	struct guest_task t;
	int ret;

	if (!p->mm)
		return; /* init_task */
	ret = introspect__read_task(gt->in, p->task, &t);
	if (!ret && t.pid == p->pid && t.mm)
		return; /* still alive: another thread, or an exec in progress */
	flush(gt, p, true);
	if (!ret && t.pid == p->pid && (t.exit_code & 0x7f) && fatal_signal(t.exit_code & 0x7f))
		queue_crash(gt, p, &t, t.exit_code & 0x7f, time, vcpu);
	write_event(gt, json_pack("{s:s, s:i, s:i, s:I, s:i}", EVENTS_KEY_EVENT, EVENT_EXIT,
				  EVENTS_KEY_PID, (int)p->pid, EVENTS_KEY_CODE,
				  !ret && t.pid == p->pid ? exit_status(t.exit_code) : 0,
				  EVENTS_KEY_TIME, (json_int_t)time, EVENTS_KEY_VCPU, (int)vcpu));
	remember_exited(gt, p);
	p->used = false;
	for (unsigned int i = 0; i < gt->nr_vcpus; i++)
		if (gt->current[i] == (int)(p - gt->procs))
			gt->current[i] = -1;
}

/*
 * Whether the process @vcpu loaded last has exited (its exit event is then written); false
 * while it runs, also elsewhere (an exec in progress is followed at its CR3 load).
 */
static bool current_exited(struct guest_tasks *gt, unsigned int vcpu, uint64_t time_ns)
{
	struct gt_proc *p = &gt->procs[gt->current[vcpu]];
	struct guest_task t;

	if (still_there(gt, p, &t))
		return false;
	check_exit(gt, p, time_ns, vcpu);
	return !p->used;
}

bool guest_tasks__gone(struct guest_tasks *gt, unsigned int vcpu, uint64_t time_ns)
{
	bool gone = true;
	int cur;

	if (vcpu >= gt->nr_vcpus)
		return true;
	pthread_mutex_lock(&gt->lock);
	cur = gt->in ? gt->current[vcpu] : -1;
	if (cur >= 0 && gt->procs[cur].used)
		gone = current_exited(gt, vcpu, time_ns);
	pthread_mutex_unlock(&gt->lock);
	return gone;
}

unsigned int guest_tasks__reap(struct guest_tasks *gt, uint64_t time_ns, bool *gone)
{
	unsigned int n = 0;
	int cur;

	pthread_mutex_lock(&gt->lock);
	for (unsigned int i = 0; i < gt->nr_vcpus; i++) {
		cur = gt->in ? gt->current[i] : -1;
		gone[i] = cur >= 0 && gt->procs[cur].used && gt->procs[cur].traced &&
			  current_exited(gt, i, time_ns);
		n += gone[i];
	}
	pthread_mutex_unlock(&gt->lock);
	return n;
}

bool guest_tasks__panicking(struct guest_tasks *gt, int32_t *cpu)
{
	bool ret;

	pthread_mutex_lock(&gt->lock);
	ret = gt->in && !introspect__panic_cpu(gt->in, cpu) && *cpu >= 0;
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

bool guest_tasks__current_pid(struct guest_tasks *gt, unsigned int vcpu, int32_t *pid,
			      int32_t *tgid)
{
	bool ret = false;
	int cur;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	cur = gt->in ? gt->current[vcpu] : -1;
	if (cur >= 0 && gt->procs[cur].used) {
		*pid = gt->procs[cur].pid;
		*tgid = gt->procs[cur].tgid;
		ret = true;
	}
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

bool guest_tasks__renewed(struct guest_tasks *gt, unsigned int vcpu)
{
	bool ret;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	ret = gt->renewed[vcpu];
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

bool guest_tasks__settle(struct guest_tasks *gt, unsigned int vcpu, bool force)
{
	bool now = false;
	int cur;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	if (gt->in && force) {
		for (unsigned int i = 0; i < gt->nr_procs; i++)
			if (gt->procs[i].used)
				flush(gt, &gt->procs[i], true);
	} else if (gt->in) {
		cur = gt->current[vcpu];
		if (cur >= 0 && gt->procs[cur].used)
			now = flush(gt, &gt->procs[cur], false);
	}
	pthread_mutex_unlock(&gt->lock);
	return now;
}

/*
 * Whether address space @id was walked for in vain lately and no process was created since:
 * a process that has it now either came since (the task list's tail moved) or exec'd into it
 * (seen as its old address space left, which bypasses this).
 */
static bool unresolved(struct guest_tasks *gt, uint64_t id, uint64_t time_ns)
{
	uint64_t tail;

	for (unsigned int i = 0; i < UNRESOLVED_MAX; i++) {
		if (gt->unresolved[i].id != id)
			continue;
		if (time_ns - gt->unresolved[i].time > UNRESOLVED_TTL_NS ||
		    introspect__tasks_tail(gt->in, &tail) || tail != gt->unresolved[i].tail) {
			gt->unresolved[i].id = ~0ULL;
			return false;
		}
		gt->walks_saved++;
		return true;
	}
	return false;
}

static void remember_unresolved(struct guest_tasks *gt, uint64_t id, uint64_t time_ns)
{
	unsigned int i = gt->unresolved_next++ % UNRESOLVED_MAX;

	if (introspect__tasks_tail(gt->in, &gt->unresolved[i].tail))
		return;
	gt->unresolved[i].id = id;
	gt->unresolved[i].time = time_ns;
}

int guest_tasks__thread_layout(const struct guest_tasks *gt, uint64_t *current, uint32_t *pid,
			       uint32_t *tgid)
{
	const struct kernel_layout *l = kernel_info__layout(gt->ki);
	uint64_t var;

	/*
	 * A per-CPU offset, not an address: the per-CPU area is zero-based (SMP x86-64), and
	 * the variable is in its first 16 MiB, where the kernel accepts it.
	 */
	if (kernel_info__symbol(gt->ki, KERNEL_SYM_CURRENT, &var) ||
	    var + l->pcpu_current_task >= (16ULL << 20))
		return -ENOENT;
	*current = var + l->pcpu_current_task;
	*pid = l->task_pid;
	*tgid = l->task_tgid;
	return 0;
}

int guest_tasks__tlb_layout(const struct guest_tasks *gt, uint64_t *offset, uint32_t *stride,
			    uint32_t *count)
{
	const struct kernel_layout *l = kernel_info__layout(gt->ki);

	if (l->tlb_ctx == KERNEL_LAYOUT_ABSENT || !l->tlb_ctx_count || !l->tlb_ctx_stride)
		return -ENOENT;
	*offset = l->tlb_ctx;
	*stride = l->tlb_ctx_stride;
	*count = l->tlb_ctx_count;
	return 0;
}

bool guest_tasks__quiet(struct guest_tasks *gt, unsigned int vcpu, uint64_t cr3, uint64_t ctx)
{
	const struct gt_proc *p;
	bool ret = false;
	int cur;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	if (!gt->in || !gt->nr_sel)
		goto out;
	cur = gt->current[vcpu];
	if (cur >= 0) {
		p = &gt->procs[cur];
		ret = p->used && p->announced && !p->pending && !p->traced &&
		      p->id == guest_tasks__id(cr3);
		if (p->used && p->pid > 0 && ctx < gt->first_ctx)
			gt->first_ctx = ctx;
	} else {
		/*
		 * No process has it: an mm older than every process's is the kernel's own
		 * (text poking's, EFI's), made at boot, which never becomes a process's.
		 */
		ret = ctx < gt->first_ctx;
	}
out:
	pthread_mutex_unlock(&gt->lock);
	return ret;
}

unsigned int guest_tasks__select_gen(const struct guest_tasks *gt)
{
	return __atomic_load_n(&gt->select_gen, __ATOMIC_RELAXED);
}

void guest_tasks__resync(struct guest_tasks *gt, unsigned int vcpu, uint64_t cr3)
{
	struct gt_proc *p;

	if (vcpu >= gt->nr_vcpus)
		return;
	pthread_mutex_lock(&gt->lock);
	p = gt->in ? find_id(gt, guest_tasks__id(cr3)) : NULL;
	if (gt->in)
		gt->current[vcpu] = p ? (int)(p - gt->procs) : -1;
	pthread_mutex_unlock(&gt->lock);
}

uint64_t guest_tasks__walks_saved(struct guest_tasks *gt)
{
	uint64_t n;

	pthread_mutex_lock(&gt->lock);
	n = gt->walks_saved;
	pthread_mutex_unlock(&gt->lock);
	return n;
}

/*
 * Whether the process that forked @t is recorded: a child starts with its parent's registers,
 * TF of the tracer's frames included, so it is recorded too (and its single-step traps are
 * the tracer's, not the guest's).
 */
static bool parent_traced(struct guest_tasks *gt, const struct guest_task *t)
{
	struct gt_proc *pp;
	int32_t ppid;

	if (!gt->nr_sel || introspect__parent_tgid(gt->in, t, &ppid) || ppid == t->tgid)
		return false;
	pp = find_pid(gt, ppid);
	return pp && pp->traced;
}

/* The announced thread @pid of task_struct @task, or -1. */
static int find_thread(const struct guest_tasks *gt, int32_t pid, uint64_t task)
{
	for (int i = 0; i < THREADS_MAX; i++)
		if (gt->threads[i].pid == pid && gt->threads[i].task == task)
			return i;
	return -1;
}

/**
 * struct gt_owner - the process whose address space a thread record ran in.
 * @pid, @tgid, @ppid, @traced: as in struct gt_proc
 * @id:   its address-space id
 * @comm: the name it was announced with
 */
struct gt_owner {
	int32_t pid;
	int32_t tgid;
	int32_t ppid;
	bool traced;
	uint64_t id;
	const char *comm;
};

/*
 * The owner of address space @id for thread @pid of @tgid: the live process that has it,
 * else, when none has it or one of another thread group does (the page tables used again),
 * the last process that had it and exited (the record waited in a ring that was copied after
 * the exit was seen). False when it is @pid's own or none of them fits.
 */
static bool find_owner(struct guest_tasks *gt, uint64_t id, int32_t pid, int32_t tgid,
		       struct gt_owner *o)
{
	const struct gt_proc *p = find_id(gt, id);

	if (p) {
		if (p->pid == pid)
			return false;
		if (tgid == p->tgid || tgid == pid) {
			*o = (struct gt_owner){ p->pid, p->tgid, p->ppid, p->traced, p->id,
						p->comm[0] ? p->comm : p->pend_comm };
			return true;
		}
	}
	for (unsigned int n = 1; n <= EXITED_MAX; n++) {
		unsigned int i = (gt->exited_next - n) % EXITED_MAX;

		if (gt->exited[i].id != id)
			continue;
		if (gt->exited[i].pid == pid ||
		    (tgid != gt->exited[i].tgid && tgid != pid))
			return false;
		*o = (struct gt_owner){ gt->exited[i].pid, gt->exited[i].tgid, gt->exited[i].ppid,
					gt->exited[i].traced, id, gt->exited[i].comm };
		return true;
	}
	return false;
}

void guest_tasks__thread(struct guest_tasks *gt, unsigned int vcpu, int32_t pid, int32_t tgid,
			 uint64_t task, uint64_t cr3, uint64_t time_ns)
{
	const struct gt_proc *p;
	struct gt_owner owner;
	struct guest_task t;
	unsigned int slot;
	int32_t ppid = -1;
	bool read;

	if (vcpu >= gt->nr_vcpus || pid <= 0 || tgid <= 0)
		return;
	pthread_mutex_lock(&gt->lock);
	/* A thread told already. */
	task |= KERNEL_TOP_BYTE;
	if (!gt->in || find_thread(gt, pid, task) >= 0)
		goto out;
	read = !introspect__read_task(gt->in, task, &t) && t.pid == pid && t.tgid == tgid &&
	       t.mm;
	/* The record's address space, else the task's: a known process's, not its own. */
	if (cr3 == ~0ULL && !read)
		goto out;
	if (!find_owner(gt, cr3 != ~0ULL ? guest_tasks__id(cr3) : guest_tasks__id(t.pgd), pid,
			tgid, &owner))
		goto out;
	/*
	 * Known as a process of its own already in this address space (it is its owner's), or
	 * elsewhere: the copy of another vCPU's ring told its exec first, and this is before.
	 */
	p = find_pid(gt, pid);
	if (p && p->id == owner.id)
		goto out;
	if (read)
		ppid = parent_of(gt, &t);
	if (!read || guest_tasks__id(t.pgd) != owner.id) {
		/* Gone or exec'd since: it ran under its owner's name. */
		memset(&t, 0, sizeof(t));
		t.pid = pid;
		t.tgid = tgid;
		memcpy(t.comm, owner.comm, sizeof(t.comm));
		/* a thread's parent is its thread group's; a vfork child's is not known then */
		ppid = tgid == owner.tgid ? owner.ppid : -1;
	}
	slot = gt->threads_next++ % THREADS_MAX;
	gt->threads[slot].pid = pid;
	gt->threads[slot].task = task;
	gt->threads[slot].id = owner.id;
	gt->threads[slot].traced = owner.traced;
	announce(gt, EVENT_THREAD, &t, ppid, owner.id, time_ns, vcpu);
out:
	pthread_mutex_unlock(&gt->lock);
}

bool guest_tasks__switch(struct guest_tasks *gt, unsigned int vcpu, uint64_t old_cr3,
			 uint64_t new_cr3, uint64_t time_ns)
{
	uint64_t old_id = guest_tasks__id(old_cr3), id = guest_tasks__id(new_cr3);
	char exe[EXE_NAME_MAX];
	struct guest_task t;
	struct gt_proc *p;
	bool traced = false, exec = false, left = false;

	if (vcpu >= gt->nr_vcpus)
		return false;
	pthread_mutex_lock(&gt->lock);
	if (!gt->in)
		goto out;
	gt->current[vcpu] = -1;
	gt->renewed[vcpu] = false;
	p = old_id != id ? find_id(gt, old_id) : NULL;
	if (p && !still_there(gt, p, &t)) {
		check_exit(gt, p, time_ns, vcpu);
		left = true;
	}

	p = find_id(gt, id);
	if (!p || !still_there(gt, p, &t)) {
		/* an address space used again: its last owner exec'd or exited unseen */
		if (p && p->mm)
			check_exit(gt, p, time_ns, vcpu);
		if (p && p->used)
			p->id = ~0ULL; /* it exec'd: its new address space is resolved anew */
		if (!p && !left && unresolved(gt, id, time_ns))
			goto out;
		if (introspect__resolve_cr3(gt->in, new_cr3, &t)) {
			remember_unresolved(gt, id, time_ns);
			goto out; /* not a process's address space (yet) */
		}
		gt->renewed[vcpu] = true;
		p = find_pid(gt, t.pid);
		if (p && p->mm != t.mm) {
			flush(gt, p, true); /* what it was before the exec */
			exec = p->announced;
		} else if (!p) {
			int th = find_thread(gt, t.pid, t.task);

			p = new_proc(gt);
			if (!p)
				goto out;
			memset(p, 0, sizeof(*p));
			p->used = true;
			p->traced = parent_traced(gt, &t);
			if (th >= 0) {
				/* A thread announced in another address space exec'd. */
				exec = true;
				p->traced |= gt->threads[th].traced;
				gt->threads[th].pid = 0;
			}
		}
		p->pid = t.pid;
		p->tgid = t.tgid;
		p->ppid = parent_of(gt, &t);
		p->task = t.task;
		if (p->mm != t.mm || guest_tasks__id(t.pgd) != p->id)
			p->announced = false;
		p->mm = t.mm;
		p->id = guest_tasks__id(t.pgd);
	}
	if (gt->nr_sel && !p->traced && t.pid) {
		if (introspect__exe_name(gt->in, t.mm, exe, sizeof(exe)))
			exe[0] = '\0';
		p->traced = selected(gt, &t, exe);
	}
	traced = gt->nr_sel ? p->traced : p->pid > 0;
	if (!p->announced) {
		p->announced = true;
		p->pending = true;
		p->pend_exec = exec;
		p->pend_vcpu = vcpu;
		p->pend_time = time_ns;
		p->pend_id = p->id;
		memcpy(p->pend_comm, t.comm, sizeof(p->pend_comm));
	}
	gt->current[vcpu] = (int)(p - gt->procs);
	if (flush(gt, p, false))
		traced = true;
out:
	pthread_mutex_unlock(&gt->lock);
	return traced;
}
