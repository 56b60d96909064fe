// SPDX-License-Identifier: GPL-2.0
/*
 * seg-writer.c - stream mode: per-vCPU segment files, compressed when full, under a disk
 * budget, with stall-or-drop and in-stream loss records (vbts/segment-format.h).
 *
 * Threads and locks: the vCPU thread (every public call) and the writer's `collector` thread.
 * The vCPU thread owns the open segment and only copies records into it: records are copied
 * into its mapping, then `committed` is published with release ordering, once per append call
 * (a batch), so a reader never trusts a torn record, also after kill -9. When it is full, the
 * vCPU links it under its closed name (a raw closed segment: its records stay where they are
 * and readable) and renames a spare over the open name: a segment file the collector made,
 * reserved (posix_fallocate: no SIGBUS on a full disk) and touched ahead of time, or the
 * pages of a segment already compressed. A link and a rename per segment, no copy, no
 * compression, no page fault on the vCPU's path. The collector then writes the full segment
 * compressed over its raw closed name and keeps its file, under a spare name, for a later
 * segment (a reader that still reads the raw file sees its header change and reads the
 * closed name again: format/seg-reader.c). `lock` protects the spare, the queue of full
 * segments and the collector's state; the collector never holds it while it does I/O, the
 * vCPU only to take the spare or queue a segment.
 *
 * When the spare cannot be made (budget or disk full) the open segment stays when it is full,
 * and later records are dropped (their count in its last slot) or wait (stall) until the
 * collector, trying again every stall_ns and after each segment it compressed, makes room.
 *
 * Budget: the open segment and the spare count their files, a raw closed segment its file
 * until it is compressed, then its compressed size. While the compressed copy is written the
 * raw file is still there (the disk holds both for a moment; the budget counts the raw one).
 * Closed segments that someone removed (a consumer that took them away) give their bytes back
 * when the collector looks for space again.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input-file.h"
#include "seg-codec.h"
#include "seg-reader.h"
#include "seg-writer.h"
#include "fd-io.h"

#define DEFAULT_STALL_NS 20000000ULL
/*
 * Mapped raw segment files per vCPU: the open one, and spares or full ones in the collector's
 * hands. Their pages are recycled from segment to segment.
 */
#define NR_BUFS SEG_WRITER_BUFS
/* The header index of a spare (the vCPU sets the real one when it renames it open). */
#define SPARE_INDEX UINT64_MAX

struct closed_seg {
	uint64_t index;
	uint64_t bytes;
};

/* A raw segment file, mapped: the open segment, the spare, or a full one being compressed. */
struct seg_buf {
	int fd;
	struct vbts_seg_header *hdr;
	struct vbts_record *slots;
	size_t map_size;
	uint64_t reserved;      /* budget bytes it holds */
	int name;               /* a spare: its name's number (spare_path()), else -1 */
};

/* A full segment, already renamed to its closed name, for the collector to compress. */
struct handoff {
	struct handoff *next;
	struct seg_buf buf;
	uint64_t index;
	uint64_t n;
	uint64_t lost;
};

/* Where the records of a closed segment are, for seg_writer__read() (the vCPU's list). */
struct seg_span {
	uint64_t index;
	uint64_t first_seq;
	uint64_t n;
};

struct seg_writer {
	struct seg_writer_config cfg;
	char *dir;
	/* vCPU thread: the open segment */
	struct seg_buf open;
	uint64_t n;             /* records in it, == open.hdr->committed */
	uint64_t index;         /* its index */
	uint64_t seq;           /* records stored since the start */
	uint64_t lost;          /* records dropped since the start */
	uint64_t pending;       /* dropped and not yet said in-stream */
	bool frozen;
	struct seg_span *spans; /* closed segments, oldest first */
	size_t nr_spans, spans_cap;
	struct {                /* seg_writer__read()'s last closed segment loaded */
		uint64_t first_seq, n;
		struct vbts_record *recs; /* NULL: not readable */
		bool valid;
	} cache;
	/* shared with the collector, under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;    /* the collector: work, or stop */
	pthread_cond_t done;    /* the vCPU: a spare is ready, the collector went idle */
	pthread_t thread;
	bool thread_started;
	struct seg_buf spares[NR_BUFS];
	unsigned int nr_spares; /* also read without the lock, as a hint */
	unsigned int nr_bufs;   /* mapped: the open one, spares, those queued or in hand */
	unsigned int names;     /* bit N: spare name N in use */
	struct handoff *queue, **queue_tail;
	bool stopping;
	bool busy;              /* the collector is working outside the lock */
	bool trying;            /* ... on a new spare */
	uint64_t attempts;      /* new spares tried */
	bool no_room;           /* no spare, none coming: the last try found no room (hint too) */
	/* collector thread (and close(), after it stopped) */
	struct closed_seg *closed;
	size_t nr_closed, closed_cap;
	struct seg_compressor *comp; /* its zstd context and buffers, kept between segments */
	seg_closed_fn on_closed; /* under lock */
	void *on_closed_ctx;
};

static bool budget_reserve(struct seg_budget *b, uint64_t bytes)
{
	uint64_t used = __atomic_load_n(&b->used, __ATOMIC_RELAXED), next;

	do {
		if (__builtin_add_overflow(used, bytes, &next) ||
		    next > __atomic_load_n(&b->limit, __ATOMIC_RELAXED))
			return false;
	} while (!__atomic_compare_exchange_n(&b->used, &used, next, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

static void budget_release(struct seg_budget *b, uint64_t bytes)
{
	__atomic_sub_fetch(&b->used, bytes, __ATOMIC_RELAXED);
}

static void seg_path(const struct seg_writer *w, uint64_t index, bool tmp, char *buf,
		     size_t len)
{
	snprintf(buf, len, "%s/vcpu%u.%08llu%s%s", w->dir, w->cfg.vcpu_id,
		 (unsigned long long)index, VBTS_SEG_SUFFIX, tmp ? ".tmp" : "");
}

static void open_path(const struct seg_writer *w, char *buf, size_t len)
{
	snprintf(buf, len, "%s/vcpu%u%s", w->dir, w->cfg.vcpu_id, VBTS_SEG_OPEN_SUFFIX);
}

static void spare_path(const struct seg_writer *w, int name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/vcpu%u.spare%d%s.tmp", w->dir, w->cfg.vcpu_id, name,
		 VBTS_SEG_SUFFIX);
}

static void buf_unmap(struct seg_buf *b)
{
	if (b->hdr)
		munmap(b->hdr, b->map_size);
	if (b->fd >= 0)
		close(b->fd);
	b->hdr = NULL;
	b->slots = NULL;
	b->fd = -1;
}

/*
 * Creates, reserves and maps a raw segment file of segment_records slots at @path, its
 * header filled for index @index from @first_seq, its pages touched (the vCPU that writes
 * into it takes no page fault). Returns 0, -EDQUOT beyond the budget, -ENOSPC or another
 * -errno (nothing is left behind then).
 */
static int buf_create(struct seg_writer *w, const char *path, uint64_t index, uint64_t first_seq,
		      struct seg_buf *b)
{
	uint64_t cap = w->cfg.segment_records;
	uint64_t bytes = VBTS_SEG_HEADER_SIZE + cap * sizeof(struct vbts_record);
	long page = sysconf(_SC_PAGESIZE);
	void *map;
	int err;

	if (!budget_reserve(w->cfg.budget, bytes))
		return -EDQUOT;
	b->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (b->fd < 0) {
		err = errno;
		goto err_release;
	}
	/* Reserve the blocks now: ENOSPC here, not SIGBUS on a store into a hole later. */
	err = posix_fallocate(b->fd, 0, (off_t)bytes);
	if (err)
		goto err_unlink;
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto err_unlink;
	}
	b->hdr = map;
	b->slots = (struct vbts_record *)((char *)map + VBTS_SEG_HEADER_SIZE);
	b->map_size = bytes;
	b->reserved = bytes;
	for (size_t off = 0; off < bytes; off += page > 0 ? (size_t)page : 4096)
		((volatile char *)map)[off] = 0;
	b->hdr->version = VBTS_SEG_VERSION;
	b->hdr->header_size = VBTS_SEG_HEADER_SIZE;
	b->hdr->record_size = sizeof(struct vbts_record);
	b->hdr->encoding = VBTS_SEG_ENC_RAW;
	b->hdr->vcpu_id = w->cfg.vcpu_id;
	b->hdr->index = index;
	b->hdr->vm_id = w->cfg.vm_id;
	b->hdr->first_seq = first_seq;
	b->hdr->start_time_ns = w->cfg.start_time_ns;
	b->hdr->capacity = cap;
	b->hdr->lost = w->lost;
	__atomic_store_n(&b->hdr->magic, VBTS_SEG_MAGIC, __ATOMIC_RELEASE);
	return 0;

err_unlink:
	unlink(path);
	close(b->fd);
err_release:
	b->fd = -1;
	budget_release(w->cfg.budget, bytes);
	return -err;
}

static void *collector_thread(void *arg);

static void writer_free(struct seg_writer *w)
{
	seg_compressor__free(w->comp);
	pthread_cond_destroy(&w->done);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w->cache.recs);
	free(w->spans);
	free(w->closed);
	free(w->dir);
	free(w);
}

struct seg_writer *seg_writer__create(const struct seg_writer_config *cfg)
{
	char path[PATH_MAX];
	sigset_t all, old;
	struct seg_writer *w;
	int err;

	if (!cfg || !cfg->dir || !cfg->budget || cfg->segment_records < 2 ||
	    cfg->segment_records > VBTS_SEG_MAX_RECORDS ||
	    (cfg->on_full != SEG_ON_FULL_STALL && cfg->on_full != SEG_ON_FULL_DROP)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->cfg = *cfg;
	if (!w->cfg.zstd_level)
		w->cfg.zstd_level = 1;
	if (!w->cfg.stall_ns)
		w->cfg.stall_ns = DEFAULT_STALL_NS;
	w->open.fd = -1;
	w->open.name = -1;
	w->nr_bufs = 1;
	w->queue_tail = &w->queue;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	pthread_cond_init(&w->done, NULL);
	w->dir = strdup(cfg->dir);
	w->comp = seg_compressor__new(w->cfg.zstd_level, cfg->segment_records);
	if (!w->dir || !w->comp) {
		writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->cfg.dir = w->dir;
	for (int i = 0; i < NR_BUFS; i++) {
		/* ones a writer killed in the middle of a rotation left */
		spare_path(w, i, path, sizeof(path));
		unlink(path);
	}
	/* The first segment now: a budget or a disk too small is a start-up error. */
	open_path(w, path, sizeof(path));
	err = buf_create(w, path, 0, 0, &w->open);
	if (err) {
		writer_free(w);
		errno = err == -EDQUOT ? ENOSPC : -err;
		return NULL;
	}
	/* The collector takes no signal: they are the VMM's other threads' to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, collector_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		budget_release(w->cfg.budget, w->open.reserved);
		buf_unmap(&w->open);
		unlink(path);
		writer_free(w);
		errno = err;
		return NULL;
	}
	w->thread_started = true;
	return w;
}

static void publish(struct seg_writer *w)
{
	__atomic_store_n(&w->open.hdr->committed, w->n, __ATOMIC_RELEASE);
}

/* ---- the collector thread -------------------------------------------------------------- */

/* Gives back the budget of closed segments that are gone. */
static void rescan(struct seg_writer *w)
{
	char path[PATH_MAX];
	struct stat st;
	size_t i = 0;

	while (i < w->nr_closed) {
		seg_path(w, w->closed[i].index, false, path, sizeof(path));
		if (stat(path, &st) < 0 && errno == ENOENT) {
			budget_release(w->cfg.budget, w->closed[i].bytes);
			w->closed[i] = w->closed[--w->nr_closed];
			continue;
		}
		i++;
	}
}

static void remember_closed(struct seg_writer *w, uint64_t index, uint64_t bytes)
{
	if (w->nr_closed == w->closed_cap) {
		size_t cap = w->closed_cap ? w->closed_cap * 2 : 64;
		struct closed_seg *c = realloc(w->closed, cap * sizeof(*c));

		if (!c)
			return; /* its bytes stay counted: the budget errs on the safe side */
		w->closed = c;
		w->closed_cap = cap;
	}
	w->closed[w->nr_closed].index = index;
	w->closed[w->nr_closed].bytes = bytes;
	w->nr_closed++;
}

/*
 * Writes @n records of @slots as closed segment @index, header from @src, into its temporary
 * file @tmp: compressed, or raw when compression does not make them smaller. Sets *@bytes to
 * its size. Returns 0, -ENOSPC or another -errno (nothing is left behind then).
 */
static int write_tmp(struct seg_writer *w, const struct vbts_seg_header *src,
		     const struct vbts_record *slots, uint64_t n, uint64_t index, uint64_t lost,
		     uint32_t flags, const char *tmp, uint64_t *bytes)
{
	struct vbts_seg_header h = *src;
	const void *payload, *frame;
	size_t len;
	int fd, ret;

	ret = seg_compressor__run(w->comp, slots, n, &frame, &len);
	if (ret)
		return ret;
	h.magic = VBTS_SEG_MAGIC;
	h.flags = flags;
	h.index = index;
	h.committed = n;
	h.capacity = n;
	h.lost = lost;
	if (len < n * sizeof(struct vbts_record)) {
		h.encoding = VBTS_SEG_ENC_ZSTD_DV1;
		h.payload_size = len;
		payload = frame;
	} else {
		h.encoding = VBTS_SEG_ENC_RAW;
		h.payload_size = 0;
		len = n * sizeof(struct vbts_record);
		payload = slots;
	}
	*bytes = sizeof(h) + len;
	/*
	 * A new file, whatever was under the name: a FIFO there would block this thread in
	 * open(2) (and the end of the run, which waits for it), a symbolic link would be
	 * written through.
	 */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = fd__write_all(fd, &h, sizeof(h));
	if (!ret)
		ret = fd__write_all(fd, payload, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* A spare's header: empty, not yet any segment's (the vCPU numbers it when it opens it). */
static void reset_spare(struct seg_buf *b)
{
	__atomic_store_n(&b->hdr->committed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&b->hdr->index, SPARE_INDEX, __ATOMIC_RELEASE);
	__atomic_store_n(&b->hdr->flags, 0, __ATOMIC_RELEASE);
	b->hdr->encoding = VBTS_SEG_ENC_RAW;
	b->hdr->payload_size = 0;
}

/*
 * A full segment handed off by the vCPU: compressed over its raw closed file. When there is
 * budget for the compressed copy besides the raw file, the raw file's pages are kept as a
 * spare under spare name @name (linked to it before the compressed copy takes the closed
 * name): no new file, block or page for the next segment. Otherwise the raw file's budget
 * goes to the compressed copy and the rest is given back. When the compressed copy cannot be
 * written (disk full) the raw closed segment stays, readable, with its budget.
 * Returns true when @h's buffer became a spare (then in *@spare), false when it is gone.
 */
static bool compress_handoff(struct seg_writer *w, struct handoff *h, int name,
			     struct seg_buf *spare)
{
	char path[PATH_MAX], tmp[PATH_MAX], sp[PATH_MAX];
	bool keep = false;
	uint64_t bytes;

	seg_path(w, h->index, true, tmp, sizeof(tmp));
	seg_path(w, h->index, false, path, sizeof(path));
	if (write_tmp(w, h->buf.hdr, h->buf.slots, h->n, h->index, h->lost, VBTS_SEG_F_CLOSED,
		      tmp, &bytes) || bytes > h->buf.reserved) {
		unlink(tmp);
		remember_closed(w, h->index, h->buf.reserved);
		buf_unmap(&h->buf);
		return false;
	}
	if (name >= 0 && budget_reserve(w->cfg.budget, bytes)) {
		spare_path(w, name, sp, sizeof(sp));
		keep = link(path, sp) == 0;
		if (!keep)
			budget_release(w->cfg.budget, bytes);
	}
	if (rename(tmp, path) < 0) {
		unlink(tmp);
		if (keep) {
			unlink(sp);
			budget_release(w->cfg.budget, bytes);
		}
		remember_closed(w, h->index, h->buf.reserved);
		buf_unmap(&h->buf);
		return false;
	}
	remember_closed(w, h->index, bytes);
	if (!keep) {
		budget_release(w->cfg.budget, h->buf.reserved - bytes);
		buf_unmap(&h->buf);
		return false;
	}
	*spare = h->buf;
	spare->name = name;
	reset_spare(spare);
	return true;
}

/* A new spare file under spare name @name: 0 or -errno. */
static int make_spare(struct seg_writer *w, int name, struct seg_buf *b)
{
	char path[PATH_MAX];
	int ret;

	spare_path(w, name, path, sizeof(path));
	ret = buf_create(w, path, SPARE_INDEX, 0, b);
	if (ret == -ENOSPC || ret == -EDQUOT) {
		/* segments a consumer took away give their space back */
		rescan(w);
		ret = buf_create(w, path, SPARE_INDEX, 0, b);
	}
	b->name = name;
	return ret;
}

/* A spare name no file uses; the caller holds the lock and marks it used. */
static int free_name(const struct seg_writer *w)
{
	for (int i = 0; i < NR_BUFS; i++)
		if (!(w->names & (1U << i)))
			return i;
	return -1;
}

static void timed_wait(struct seg_writer *w, pthread_cond_t *cond)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(w->cfg.stall_ns / 1000000000ULL);
	ts.tv_nsec += (long)(w->cfg.stall_ns % 1000000000ULL);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(cond, &w->lock, &ts);
}

static void add_spare(struct seg_writer *w, const struct seg_buf *b)
{
	w->spares[w->nr_spares] = *b;
	__atomic_store_n(&w->nr_spares, w->nr_spares + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&w->no_room, false, __ATOMIC_RELEASE);
}

/*
 * `collector`: compresses the full segments the vCPU hands off, keeping their pages as spares
 * for the next ones; makes a new spare when the vCPU has none and fewer than NR_BUFS are
 * mapped. A new spare that does not fit is tried again after each segment compressed and
 * every stall_ns while there is none to compress.
 */
static void *collector_thread(void *arg)
{
	struct seg_writer *w = arg;
	bool retry_now = true, failed = false;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		if (!w->nr_spares && w->nr_bufs < NR_BUFS && !w->stopping && retry_now) {
			struct seg_buf b;
			int name = free_name(w), ret;

			w->names |= 1U << name;
			w->nr_bufs++;
			w->busy = w->trying = true;
			pthread_mutex_unlock(&w->lock);
			ret = make_spare(w, name, &b);
			pthread_mutex_lock(&w->lock);
			w->busy = w->trying = false;
			w->attempts++;
			failed = ret != 0;
			if (ret) {
				w->names &= ~(1U << name);
				w->nr_bufs--;
			} else {
				add_spare(w, &b);
			}
			retry_now = false;
			pthread_cond_broadcast(&w->done);
			continue;
		}
		if (w->queue) {
			struct handoff *h = w->queue;
			int name = w->stopping ? -1 : free_name(w);
			struct seg_buf b;
			bool kept;

			w->queue = h->next;
			if (!w->queue)
				w->queue_tail = &w->queue;
			if (name >= 0)
				w->names |= 1U << name;
			w->busy = true;
			pthread_mutex_unlock(&w->lock);
			kept = compress_handoff(w, h, name, &b);
			pthread_mutex_lock(&w->lock);
			if (w->on_closed) {
				char path[PATH_MAX];

				seg_path(w, h->index, false, path, sizeof(path));
				w->on_closed(w->on_closed_ctx, path + strlen(w->dir) + 1);
			}
			free(h);
			w->busy = false;
			if (kept) {
				add_spare(w, &b);
			} else {
				if (name >= 0)
					w->names &= ~(1U << name);
				w->nr_bufs--;
			}
			retry_now = true;
			pthread_cond_broadcast(&w->done);
			continue;
		}
		if (w->stopping)
			break;
		if (!w->nr_spares && failed)
			__atomic_store_n(&w->no_room, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&w->done);
		if (!w->nr_spares && w->nr_bufs < NR_BUFS)
			timed_wait(w, &w->wake);
		else
			pthread_cond_wait(&w->wake, &w->lock);
		retry_now = true;
	}
	pthread_cond_broadcast(&w->done);
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* ---- the vCPU thread ------------------------------------------------------------------- */

static unsigned int on_full(const struct seg_writer *w)
{
	return __atomic_load_n(&w->cfg.on_full, __ATOMIC_RELAXED);
}

static bool should_stop(const struct seg_writer *w)
{
	return w->cfg.stop && w->cfg.stop(w->cfg.stop_ctx);
}

static void remember_span(struct seg_writer *w, uint64_t index, uint64_t first_seq, uint64_t n)
{
	if (w->nr_spans == w->spans_cap) {
		size_t cap = w->spans_cap ? w->spans_cap * 2 : 64;
		struct seg_span *s = realloc(w->spans, cap * sizeof(*s));

		if (!s)
			return; /* seg_writer__read() then does not find this one */
		w->spans = s;
		w->spans_cap = cap;
	}
	w->spans[w->nr_spans++] = (struct seg_span){ index, first_seq, n };
}

/*
 * The full open segment becomes closed segment w->index by a link (raw, its records where
 * they are: a reader finds them under either name, and skips the open one of a closed
 * index), and @spare becomes the open segment by a rename over it: a link and a rename on
 * the vCPU's path, no copy, no compression, no page fault. The collector then
 * compresses the closed one. Returns 0 or -errno (the open segment is then as it was).
 */
static int hand_off(struct seg_writer *w, struct seg_buf *spare)
{
	char open[PATH_MAX], closed[PATH_MAX], sp[PATH_MAX];
	struct handoff *h = malloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	open_path(w, open, sizeof(open));
	seg_path(w, w->index, false, closed, sizeof(closed));
	spare_path(w, spare->name, sp, sizeof(sp));
	spare->hdr->first_seq = w->seq;
	spare->hdr->lost = w->lost;
	__atomic_store_n(&spare->hdr->index, w->index + 1, __ATOMIC_RELEASE);
	/* the closed name first, then the spare takes the open name: always a name for both */
	if (link(open, closed) < 0) {
		free(h);
		return -errno;
	}
	if (rename(sp, open) < 0) {
		int err = -errno;

		unlink(closed);
		free(h);
		return err;
	}
	__atomic_or_fetch(&w->open.hdr->flags, VBTS_SEG_F_CLOSED, __ATOMIC_RELEASE);
	remember_span(w, w->index, w->open.hdr->first_seq, w->n);
	h->next = NULL;
	h->buf = w->open;
	h->index = w->index;
	h->n = w->n;
	h->lost = w->lost;
	pthread_mutex_lock(&w->lock);
	w->names &= ~(1U << spare->name);
	*w->queue_tail = h;
	w->queue_tail = &h->next;
	pthread_cond_signal(&w->wake); /* compress it */
	pthread_mutex_unlock(&w->lock);
	w->open = *spare;
	w->open.name = -1;
	w->n = 0;
	w->index++;
	w->pending = 0;
	return 0;
}

/*
 * Rotates the full open segment into a spare: true when the open segment is empty again.
 * A spare the collector is still making or recycling is waited for. When it found no room
 * for one (budget or disk full): drop mode returns false at once, stall mode waits, asking
 * stop() each time the collector tried again.
 */
static bool rotate(struct seg_writer *w)
{
	struct seg_buf spare;

	if (!__atomic_load_n(&w->nr_spares, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&w->no_room, __ATOMIC_ACQUIRE) && on_full(w) == SEG_ON_FULL_DROP)
		return false;
	pthread_mutex_lock(&w->lock);
	while (!w->nr_spares) {
		if (w->no_room) {
			if (on_full(w) == SEG_ON_FULL_DROP) {
				pthread_mutex_unlock(&w->lock);
				return false;
			}
			pthread_mutex_unlock(&w->lock);
			if (should_stop(w))
				return false;
			pthread_mutex_lock(&w->lock);
			if (w->nr_spares)
				break;
		}
		/* the collector is at it, or tries again every stall_ns: it says when */
		timed_wait(w, &w->done);
	}
	spare = w->spares[--w->nr_spares];
	pthread_mutex_unlock(&w->lock);
	if (hand_off(w, &spare)) {
		/* put it back for the next attempt */
		pthread_mutex_lock(&w->lock);
		add_spare(w, &spare);
		pthread_mutex_unlock(&w->lock);
		return false;
	}
	return true;
}

/*
 * Drops @k records: counted, and said in the open segment's last slot, which is kept for a
 * LOST record: stored and published once, its count then updated in place (one aligned
 * 8-byte store, never torn).
 */
static void drop(struct seg_writer *w, uint64_t k)
{
	struct vbts_record *last = &w->open.slots[w->open.hdr->capacity - 1];

	w->lost += k;
	w->pending += k;
	if (w->n < w->open.hdr->capacity) {
		*last = vbts_record__make_escape(VBTS_ESC_LOST, w->pending, 0);
		w->n = w->open.hdr->capacity;
		w->seq++;
		publish(w);
	} else {
		__atomic_store_n(&last->to, w->pending, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->open.hdr->lost, w->lost, __ATOMIC_RELAXED);
}

long seg_writer__append(struct seg_writer *w, const struct vbts_record *recs, uint64_t n)
{
	uint64_t cap = w->open.hdr->capacity, done = 0;

	if (w->frozen) {
		w->lost += n;
		return -EROFS;
	}
	while (done < n) {
		/* the last slot is kept for a LOST record */
		uint64_t room = w->n < cap - 1 ? cap - 1 - w->n : 0, k;

		if (!room) {
			if (!rotate(w)) {
				drop(w, n - done);
				return (long)done;
			}
			continue;
		}
		k = n - done < room ? n - done : room;
		memcpy(&w->open.slots[w->n], &recs[done], k * sizeof(*recs));
		w->n += k;
		w->seq += k;
		done += k;
		publish(w);
	}
	return (long)done;
}

void seg_writer__set_on_full(struct seg_writer *w, unsigned int mode)
{
	__atomic_store_n(&w->cfg.on_full, mode, __ATOMIC_RELAXED);
}

void seg_writer__set_on_closed(struct seg_writer *w, seg_closed_fn fn, void *ctx)
{
	pthread_mutex_lock(&w->lock);
	w->on_closed = fn;
	w->on_closed_ctx = ctx;
	pthread_mutex_unlock(&w->lock);
}

void seg_writer__freeze(struct seg_writer *w)
{
	w->frozen = true;
	if (w->open.hdr)
		__atomic_or_fetch(&w->open.hdr->flags, VBTS_SEG_F_FROZEN, __ATOMIC_RELEASE);
}

uint64_t seg_writer__committed(const struct seg_writer *w)
{
	return w->seq;
}

uint64_t seg_writer__lost(const struct seg_writer *w)
{
	return w->lost;
}

void seg_writer__sync(struct seg_writer *w)
{
	uint64_t since;

	pthread_mutex_lock(&w->lock);
	/* a try under way may have looked before the caller's last change */
	since = w->attempts + (w->trying ? 1 : 0);
	pthread_cond_signal(&w->wake);
	while (w->queue || w->busy ||
	       (!w->nr_spares && w->nr_bufs < NR_BUFS && w->attempts == since))
		pthread_cond_wait(&w->done, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

/* Loads closed segment @s for seg_writer__read(): its records, or none when it is gone. */
static void load_span(struct seg_writer *w, const struct seg_span *s)
{
	char path[PATH_MAX];
	struct vbts_seg_header h;
	struct vbts_record *recs = NULL;
	struct stat st;
	uint64_t n;
	int fd;

	free(w->cache.recs);
	w->cache.recs = NULL;
	w->cache.first_seq = s->first_seq;
	w->cache.n = s->n;
	w->cache.valid = true;
	seg_path(w, s->index, false, path, sizeof(path));
	/* the vCPU's thread: a FIFO or a device under the name is not opened, never waited on */
	fd = input_file__open_entry(path, &st, NULL, 0);
	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    seg_reader__check_header(&h, (uint64_t)st.st_size, s->index, w->cfg.vcpu_id, path,
				     &n, NULL, 0) ||
	    h.first_seq != s->first_seq || h.committed != s->n || n != s->n ||
	    h.vm_id != w->cfg.vm_id)
		goto out;
	if (seg_codec__read_records(fd, &h, s->n, &recs))
		recs = NULL;
	w->cache.recs = recs;
out:
	close(fd);
}

int seg_writer__read(struct seg_writer *w, uint64_t seq, struct vbts_record *rec)
{
	const struct vbts_seg_header *h = w->open.hdr;
	size_t lo = 0, hi = w->nr_spans;

	if (seq >= h->first_seq) {
		if (seq - h->first_seq >= w->n)
			return -ENOENT;
		*rec = w->open.slots[seq - h->first_seq];
		return 0;
	}
	if (!w->cache.valid || seq < w->cache.first_seq ||
	    seq - w->cache.first_seq >= w->cache.n) {
		/* the closed segment that holds it: the last one starting at or before it */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (w->spans[mid].first_seq <= seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || seq - w->spans[lo - 1].first_seq >= w->spans[lo - 1].n)
			return -ENOENT;
		load_span(w, &w->spans[lo - 1]);
	}
	if (!w->cache.recs)
		return -ENOENT;
	*rec = w->cache.recs[seq - w->cache.first_seq];
	return 0;
}

int seg_writer__close(struct seg_writer *w)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	uint32_t flags;
	uint64_t bytes;
	int ret;

	if (!w)
		return 0;
	/* The collector compresses what it was handed and ends; the spares go. */
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	if (w->thread_started)
		pthread_join(w->thread, NULL);
	while (w->nr_spares) {
		struct seg_buf *b = &w->spares[--w->nr_spares];

		budget_release(w->cfg.budget, b->reserved);
		spare_path(w, b->name, path, sizeof(path));
		unlink(path);
		buf_unmap(b);
	}
	flags = VBTS_SEG_F_CLOSED | VBTS_SEG_F_LAST | (w->frozen ? VBTS_SEG_F_FROZEN : 0);
	/* The last records to their file, which replaces the open segment (and its budget). */
	budget_release(w->cfg.budget, w->open.reserved);
	seg_path(w, w->index, true, tmp, sizeof(tmp));
	seg_path(w, w->index, false, path, sizeof(path));
	ret = write_tmp(w, w->open.hdr, w->open.slots, w->n, w->index, w->lost, flags, tmp,
			&bytes);
	if (!ret && !budget_reserve(w->cfg.budget, bytes)) {
		unlink(tmp);
		ret = -EDQUOT;
	}
	if (!ret && rename(tmp, path) < 0) {
		ret = -errno;
		unlink(tmp);
		budget_release(w->cfg.budget, bytes);
	}
	if (ret) {
		__atomic_add_fetch(&w->cfg.budget->used, w->open.reserved, __ATOMIC_RELAXED);
		/* No room: the open segment stays, its records readable where they are. */
		w->open.hdr->lost = w->lost;
		__atomic_or_fetch(&w->open.hdr->flags, flags, __ATOMIC_RELEASE);
		msync(w->open.hdr, w->open.map_size, MS_SYNC);
	}
	buf_unmap(&w->open);
	if (!ret) {
		open_path(w, path, sizeof(path));
		unlink(path);
	}
	writer_free(w);
	return ret;
}
