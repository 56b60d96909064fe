// SPDX-License-Identifier: GPL-2.0
/*
 * diff-ident.c - the identities of a trace's processes and threads (diff-ident.h).
 *
 * The processes' identities are worked out once, in their creation order; a thread's, and a
 * vCPU's for records of no task, when first asked for, kept in a chained hash table keyed by
 * (process, pid), with a memo of the last answer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff-ident.h"
#include "escape.h"

#define BUCKETS 4096
/* process of the entries that name a vCPU's records of no task */
#define NO_PROCESS SIZE_MAX

struct ident_entry {
	size_t process;
	int64_t pid;
	char *key;
	struct ident_entry *next;
};

struct proc_info {
	const struct procmap_task *first;       /* its earliest announcement */
	const struct procmap_task *said_parent; /* its earliest one with a ppid, or NULL */
	char chain[DIFF_IDENT_MAX];             /* the names of its programs */
	bool exec;
	uint64_t exit_time;
	bool exited;
	size_t pos;                             /* its place in creation order */
	size_t parent;                          /* its parent process, SIZE_MAX when unknown */
	bool thread_only;                       /* announced as a thread of another process */
};

/* A thread (not its process's first) whose records the trace has. */
struct seen_thread {
	size_t process;
	int64_t pid;
};

struct diff_ident {
	const struct procmap *pm;
	struct seen_thread *seen;               /* sorted by (process, pid) once asked */
	size_t nr_seen, alloc_seen;
	bool seen_sorted;
	struct seen_thread last_seen;
	size_t nr;
	char **proc;                            /* per process */
	struct proc_info *info;
	struct ident_entry *buckets[BUCKETS];
	/* the last answer */
	bool memo_used;
	uint32_t memo_pid, memo_tgid;
	bool memo_thread;
	const struct procmap_task *memo_task;
	uint32_t memo_vcpu;
	const char *memo_key;
	int64_t memo_ret_pid;
};

static uint64_t hash2(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Appends the escaped @name, cut, to @buf (of DIFF_IDENT_MAX bytes). */
static void append_name(char *buf, const char *name)
{
	char q[DIFF_IDENT_NAME_MAX + ESCAPE_UNIT_MAX];
	size_t len = strlen(buf);

	escape__str(q, sizeof(q), name ? name : "?");
	q[DIFF_IDENT_NAME_MAX] = '\0';
	snprintf(buf + len, DIFF_IDENT_MAX - len, "%s", q);
}

static bool earlier(const struct procmap_task *a, const struct procmap_task *b)
{
	if (a->start != b->start)
		return a->start < b->start;
	return a->pid < b->pid;
}

/* Takes one announcement into its process's information. */
static void take(struct diff_ident *id, const struct procmap_task *t)
{
	struct proc_info *p;

	if (t->process >= id->nr)
		return;
	p = &id->info[t->process];
	if (!p->first || earlier(t, p->first))
		p->first = t;
	if (t->ppid_valid && !t->thread && (!p->said_parent || earlier(t, p->said_parent)))
		p->said_parent = t;
	if (t->exited && (!p->exited || t->exit_time > p->exit_time)) {
		p->exited = true;
		p->exit_time = t->exit_time;
	}
	if (t->exec && !t->thread) {
		if (p->exec)
			append_name(p->chain, ">");
		append_name(p->chain, t->name);
		p->exec = true;
	}
}

/* qsort_r() order of process indexes: their creation order. */
static int by_creation(const void *pa, const void *pb, void *ctx)
{
	const struct diff_ident *id = ctx;
	const struct procmap_task *a = id->info[*(const size_t *)pa].first;
	const struct procmap_task *b = id->info[*(const size_t *)pb].first;

	if (!a || !b)
		return !a - !b;
	if (earlier(a, b))
		return -1;
	return earlier(b, a);
}

struct base_count {
	char *base;
	unsigned int n;
	struct base_count *next;
};

/* How many processes of identity @base were met before, this one counted. */
static int count_base(struct base_count **tab, const char *base, unsigned int *n)
{
	struct base_count **b = &tab[str_hash(base) % BUCKETS], *c;

	for (c = *b; c; c = c->next) {
		if (!strcmp(c->base, base)) {
			*n = ++c->n;
			return 0;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->base = strdup(base))) {
		free(c);
		return -ENOMEM;
	}
	c->n = 1;
	c->next = *b;
	*b = c;
	*n = 1;
	return 0;
}

/* A process's pid and the time it was first announced, for finding parents by their tgid. */
struct pid_key {
	int64_t pid;
	uint64_t start;
	size_t process;
};

static int by_pid_start(const void *pa, const void *pb)
{
	const struct pid_key *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->process > b->process) - (a->process < b->process);
}

/*
 * The process of pid @ppid that lived when @child was first announced: announced at or
 * before it, not exited before it, the latest such; SIZE_MAX when the trace has none.
 */
static size_t find_parent(const struct diff_ident *id, const struct pid_key *keys, size_t n,
			  int64_t ppid, const struct procmap_task *child)
{
	size_t lo = 0, hi = n, p;

	/* the first key above (ppid, child->start) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid].pid < ppid || (keys[mid].pid == ppid && keys[mid].start <= child->start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || keys[lo - 1].pid != ppid)
		return SIZE_MAX;
	p = keys[lo - 1].process;
	if (id->info[p].exited && id->info[p].exit_time < child->start)
		return SIZE_MAX;
	return p;
}

/* The parent of process @i: its vfork owner, else the process its ppid names. */
static size_t parent_of(const struct diff_ident *id, const struct pid_key *keys, size_t n,
			size_t i)
{
	const struct proc_info *p = &id->info[i];
	const struct procmap_task *f = p->first, *o;
	size_t q = SIZE_MAX;

	if (!f)
		return SIZE_MAX;
	if (f->thread && (!f->tgid_valid || f->tgid == f->pid)) {
		/* a vfork child, announced in its parent's address space */
		o = procmap__lookup(id->pm, f->cr3, f->start, true);
		if (o && o->process < id->nr)
			q = o->process;
	} else if (p->said_parent && p->said_parent->ppid != f->pid) {
		q = find_parent(id, keys, n, p->said_parent->ppid, f);
	}
	/* created before it: a parent is always named before its children */
	return q != SIZE_MAX && q != i && id->info[q].pos < p->pos ? q : SIZE_MAX;
}

/*
 * qsort_r() order of process indexes in which they are named and numbered: by the creation
 * order of their parents (processes without a known parent first), then their own; each
 * process after its parent. The threads the map keeps as processes of their own (announced
 * with another tgid; their records are named by their thread group's process) come last, so
 * that whether and when a thread was announced changes no process's number.
 */
static int by_place(const void *pa, const void *pb, void *ctx)
{
	const struct diff_ident *id = ctx;
	const struct proc_info *a = &id->info[*(const size_t *)pa];
	const struct proc_info *b = &id->info[*(const size_t *)pb];
	size_t ka = a->thread_only ? SIZE_MAX : a->parent == SIZE_MAX ? 0 :
		    id->info[a->parent].pos + 1;
	size_t kb = b->thread_only ? SIZE_MAX : b->parent == SIZE_MAX ? 0 :
		    id->info[b->parent].pos + 1;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int name_processes(struct diff_ident *id)
{
	struct base_count **tab = calloc(BUCKETS, sizeof(*tab));
	size_t *order = calloc(id->nr + 1, sizeof(*order));
	struct pid_key *keys = calloc(id->nr + 1, sizeof(*keys));
	char base[DIFF_IDENT_MAX];
	size_t nr_keys = 0;
	int ret = -ENOMEM;

	if (!tab || !order || !keys)
		goto out;
	for (size_t i = 0; i < id->nr; i++)
		order[i] = i;
	qsort_r(order, id->nr, sizeof(*order), by_creation, id);
	for (size_t i = 0; i < id->nr; i++) {
		const struct procmap_task *f = id->info[order[i]].first;

		id->info[order[i]].pos = i;
		if (f && !f->thread)
			keys[nr_keys++] = (struct pid_key){ f->pid, f->start, order[i] };
	}
	if (nr_keys)
		qsort(keys, nr_keys, sizeof(*keys), by_pid_start);
	for (size_t i = 0; i < id->nr; i++) {
		const struct procmap_task *f = id->info[i].first;

		id->info[i].parent = parent_of(id, keys, nr_keys, i);
		id->info[i].thread_only = f && f->thread && f->tgid_valid && f->tgid != f->pid;
	}
	qsort_r(order, id->nr, sizeof(*order), by_place, id);
	for (size_t i = 0; i < id->nr; i++) {
		struct proc_info *p = &id->info[order[i]];
		const struct procmap_task *f = p->first;
		unsigned int n;
		size_t len;

		base[0] = '\0';
		/* a vfork child, announced in its parent's address space */
		if (f && f->thread && (!f->tgid_valid || f->tgid == f->pid) &&
		    p->parent != SIZE_MAX && id->proc[p->parent])
			snprintf(base, sizeof(base), "%s/", id->proc[p->parent]);
		if (!p->exec)
			append_name(p->chain, f ? f->name : "?");
		len = strlen(base);
		snprintf(base + len, sizeof(base) - len, "%s", p->chain);
		ret = count_base(tab, base, &n);
		if (ret)
			goto out;
		len = strlen(base);
		if (n > 1)
			snprintf(base + len, sizeof(base) - len, "#%u", n);
		id->proc[order[i]] = strdup(base);
		if (!id->proc[order[i]]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = 0;
out:
	for (size_t i = 0; tab && i < BUCKETS; i++) {
		while (tab[i]) {
			struct base_count *c = tab[i];

			tab[i] = c->next;
			free(c->base);
			free(c);
		}
	}
	free(tab);
	free(order);
	free(keys);
	return ret;
}

struct diff_ident *diff_ident__new(const struct procmap *pm)
{
	struct diff_ident *id = calloc(1, sizeof(*id));
	size_t n;

	if (!id)
		goto err;
	id->pm = pm;
	id->nr = procmap__nr_processes(pm);
	id->proc = calloc(id->nr + 1, sizeof(*id->proc));
	id->info = calloc(id->nr + 1, sizeof(*id->info));
	if (!id->proc || !id->info)
		goto err;
	n = procmap__nr_tasks(pm);
	for (size_t i = 0; i < n; i++)
		take(id, procmap__task(pm, i));
	n = procmap__nr_threads(pm);
	for (size_t i = 0; i < n; i++)
		take(id, procmap__thread(pm, i));
	if (name_processes(id))
		goto err;
	free(id->info);
	id->info = NULL;
	return id;
err:
	diff_ident__free(id);
	errno = ENOMEM;
	return NULL;
}

const char *diff_ident__process(const struct diff_ident *id, size_t p)
{
	return p < id->nr && id->proc[p] ? id->proc[p] : "?";
}

/*
 * The place of thread @pid of thread group @tgid among its process's threads: 2 for the first
 * announced thread whose pid is not the tgid, in pid order, announced while the process of
 * @owner lived. 0 when the trace did not announce it.
 */
static unsigned int thread_rank(const struct diff_ident *id, const struct procmap_task *owner,
				int64_t pid, int64_t tgid)
{
	size_t n = procmap__nr_threads(id->pm);
	unsigned int below = 0;
	bool found = false;
	int64_t *seen = NULL;
	size_t nr_seen = 0;

	for (size_t i = 0; i < n; i++) {
		const struct procmap_task *th = procmap__thread(id->pm, i);
		const struct procmap_task *o;
		bool dup = false;

		if (!th->tgid_valid || th->tgid != tgid || th->pid == tgid || th->pid > pid)
			continue;
		o = procmap__lookup(id->pm, th->cr3, th->start, true);
		if (!o || o->process != owner->process)
			continue;
		if (th->pid == pid) {
			found = true;
			continue;
		}
		for (size_t j = 0; j < nr_seen; j++)
			dup |= seen[j] == th->pid;
		if (dup)
			continue;
		if (!(nr_seen & (nr_seen + 1)) || !seen) {
			int64_t *s = realloc(seen, 2 * (nr_seen + 1) * sizeof(*s));

			if (!s)
				break;
			seen = s;
		}
		seen[nr_seen++] = th->pid;
		below++;
	}
	free(seen);
	return found ? below + 2 : 0;
}

int diff_ident__see(struct diff_ident *id, const struct decoded_record *r,
		    const struct procmap_task *t)
{
	struct seen_thread st;

	if (!r->thread_valid || !t || r->thread_pid == r->thread_tgid || r->thread_pid == t->pid)
		return 0;
	st.process = t->process;
	st.pid = r->thread_pid;
	if (id->nr_seen && id->last_seen.process == st.process && id->last_seen.pid == st.pid)
		return 0;
	id->last_seen = st;
	if (id->nr_seen == id->alloc_seen) {
		size_t alloc = id->alloc_seen ? 2 * id->alloc_seen : 64;
		struct seen_thread *p = realloc(id->seen, alloc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		id->seen = p;
		id->alloc_seen = alloc;
	}
	id->seen[id->nr_seen++] = st;
	id->seen_sorted = false;
	return 0;
}

static int by_thread(const void *pa, const void *pb)
{
	const struct seen_thread *a = pa, *b = pb;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The place of thread @pid among the seen threads of @process, from 2; 0 when not seen. */
static unsigned int seen_rank(struct diff_ident *id, size_t process, int64_t pid)
{
	size_t n = 0, w = 0;
	unsigned int below = 0;
	bool found = false;

	if (!id->seen_sorted) {
		if (id->nr_seen)
			qsort(id->seen, id->nr_seen, sizeof(*id->seen), by_thread);
		for (n = 0; n < id->nr_seen; n++)       /* unique */
			if (!w || by_thread(&id->seen[w - 1], &id->seen[n]))
				id->seen[w++] = id->seen[n];
		id->nr_seen = w;
		id->seen_sorted = true;
	}
	for (n = 0; n < id->nr_seen; n++) {
		if (id->seen[n].process != process)
			continue;
		if (id->seen[n].pid == pid)
			found = true;
		else if (id->seen[n].pid < pid)
			below++;
	}
	return found ? below + 2 : 0;
}

/* The entry of (@process, @pid), made with @make's text when new. */
static const char *entry(struct diff_ident *id, size_t process, int64_t pid, const char *make)
{
	struct ident_entry **b = &id->buckets[hash2(process, (uint64_t)pid) % BUCKETS], *e;

	for (e = *b; e; e = e->next)
		if (e->process == process && e->pid == pid)
			return e->key;
	if (!make)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(make))) {
		free(e);
		return NULL;
	}
	e->process = process;
	e->pid = pid;
	e->next = *b;
	*b = e;
	return e->key;
}

const char *diff_ident__of(struct diff_ident *id, const struct decoded_record *r,
			   const struct procmap_task *t, int64_t *pid)
{
	const struct procmap_task *th = NULL;
	char key[DIFF_IDENT_MAX + 32];
	const char *k;
	size_t process;
	unsigned int rank;

	if (id->memo_used && id->memo_thread == r->thread_valid && id->memo_task == t &&
	    id->memo_vcpu == r->vcpu && (!r->thread_valid || (id->memo_pid == r->thread_pid &&
							       id->memo_tgid == r->thread_tgid))) {
		*pid = id->memo_ret_pid;
		return id->memo_key;
	}
	if (r->thread_valid)
		th = procmap__lookup_thread(id->pm, r->thread_pid, r->thread_tgid, r->time,
					    r->time_valid);
	if (th && (th->pid == th->tgid || !th->tgid_valid)) {
		/* a vfork child before its exec: its own process */
		k = diff_ident__process(id, th->process);
		*pid = th->pid;
	} else if (!t) {
		snprintf(key, sizeof(key), "vcpu%" PRIu32 ":-", r->vcpu);
		k = entry(id, NO_PROCESS, r->vcpu, key);
		*pid = r->thread_valid ? (int64_t)r->thread_pid : -1;
	} else if (!r->thread_valid || r->thread_pid == r->thread_tgid ||
		   r->thread_pid == t->pid) {
		k = diff_ident__process(id, t->process);
		*pid = r->thread_valid ? r->thread_pid : t->pid;
	} else {
		process = t->process;
		*pid = r->thread_pid;
		k = entry(id, process, r->thread_pid, NULL);
		if (!k) {
			rank = seen_rank(id, process, r->thread_pid);
			if (!rank)
				rank = thread_rank(id, t, r->thread_pid, r->thread_tgid);
			if (rank)
				snprintf(key, sizeof(key), "%s.t%u", diff_ident__process(id, process),
					 rank);
			else
				snprintf(key, sizeof(key), "%s.pid%" PRIu32,
					 diff_ident__process(id, process), r->thread_pid);
			k = entry(id, process, r->thread_pid, key);
		}
	}
	if (!k)
		return NULL;
	id->memo_used = true;
	id->memo_thread = r->thread_valid;
	id->memo_pid = r->thread_pid;
	id->memo_tgid = r->thread_tgid;
	id->memo_task = t;
	id->memo_vcpu = r->vcpu;
	id->memo_key = k;
	id->memo_ret_pid = *pid;
	return k;
}

void diff_ident__free(struct diff_ident *id)
{
	if (!id)
		return;
	for (size_t i = 0; id->proc && i < id->nr; i++)
		free(id->proc[i]);
	free(id->proc);
	free(id->info);
	free(id->seen);
	for (size_t i = 0; i < BUCKETS; i++) {
		while (id->buckets[i]) {
			struct ident_entry *e = id->buckets[i];

			id->buckets[i] = e->next;
			free(e->key);
			free(e);
		}
	}
	free(id);
}
