// SPDX-License-Identifier: GPL-2.0
/*
 * seg-writer.c - stream mode: per-vCPU segment files, compressed when full, under a disk
 * budget, with stall-or-drop and in-stream loss records (vbts/segment-format.h).
 *
 * Locking: none but the budget's atomics. A writer belongs to one thread.
 *
 * The open segment (vcpuN.open.vseg) is one raw file per vCPU, created and mapped once, its
 * blocks reserved by posix_fallocate before it was mapped: a store into the mapping never
 * meets a hole (no SIGBUS on a full disk). Records are copied in, then `committed` is
 * published with release ordering, once per append call (a batch), so a reader never trusts
 * a torn record, also after kill -9. When it is full its records are compressed into a
 * closed segment (a temporary file renamed into place) and it starts over in the same pages:
 * no file creation, page fault or block allocation per segment on the vCPU's path. When the
 * closed segment cannot be written (budget or disk full) the records stay where they are,
 * and later ones are dropped (their count in the open segment's last slot) or wait (stall).
 *
 * Budget: the open segment counts its file; closed segments their size.
 * Closed segments that someone removed (a consumer that took them away) give their bytes back
 * when the writer looks for space again (while it stalls or before it retries after drops).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "seg-codec.h"
#include "seg-writer.h"

/* Drop mode: records dropped between two attempts to find space again. */
#define DROP_RETRY_RECORDS 4096
#define DEFAULT_STALL_NS 20000000ULL

struct closed_seg {
	uint64_t index;
	uint64_t bytes;
};

struct seg_writer {
	struct seg_writer_config cfg;
	char *dir;
	/* the open segment, hdr == NULL when none */
	int fd;
	struct vbts_seg_header *hdr;
	struct vbts_record *slots;
	size_t map_size;
	uint64_t reserved;      /* budget bytes it holds */
	uint64_t n;             /* records in it, == hdr->committed */
	uint64_t index;         /* its index, or the next one's */
	uint64_t seq;           /* records stored since the start */
	uint64_t lost;          /* records dropped since the start */
	uint64_t pending;       /* dropped and not yet said in-stream */
	uint64_t retry_at;      /* drop mode: lost count at which to look for space again */
	bool frozen;
	struct closed_seg *closed;
	size_t nr_closed, closed_cap;
	struct seg_compressor *comp; /* its zstd context and buffers, kept between segments */
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

static int open_segment(struct seg_writer *w);

struct seg_writer *seg_writer__create(const struct seg_writer_config *cfg)
{
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
	w->dir = strdup(cfg->dir);
	if (!w->dir) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->cfg.dir = w->dir;
	w->fd = -1;
	w->comp = seg_compressor__new(w->cfg.zstd_level, cfg->segment_records);
	if (!w->comp) {
		free(w->dir);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	/* The first segment now: a budget or a disk too small is a start-up error. */
	err = open_segment(w);
	if (err) {
		seg_compressor__free(w->comp);
		free(w->dir);
		free(w);
		errno = err == -EDQUOT ? ENOSPC : -err;
		return NULL;
	}
	return w;
}

/* Creates and maps the open segment: -EDQUOT beyond the budget, -ENOSPC or another -errno. */
static int open_segment(struct seg_writer *w)
{
	uint64_t cap = w->cfg.segment_records;
	uint64_t bytes = VBTS_SEG_HEADER_SIZE + cap * sizeof(struct vbts_record);
	char path[PATH_MAX];
	void *map;
	int err;

	if (!budget_reserve(w->cfg.budget, bytes))
		return -EDQUOT;
	open_path(w, path, sizeof(path));
	w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = errno;
		goto err_release;
	}
	err = posix_fallocate(w->fd, 0, (off_t)bytes);
	if (err)
		goto err_unlink;
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto err_unlink;
	}
	w->hdr = map;
	w->slots = (struct vbts_record *)((char *)map + VBTS_SEG_HEADER_SIZE);
	w->map_size = bytes;
	w->reserved = bytes;
	w->n = 0;
	w->hdr->version = VBTS_SEG_VERSION;
	w->hdr->header_size = VBTS_SEG_HEADER_SIZE;
	w->hdr->record_size = sizeof(struct vbts_record);
	w->hdr->encoding = VBTS_SEG_ENC_RAW;
	w->hdr->vcpu_id = w->cfg.vcpu_id;
	w->hdr->index = w->index;
	w->hdr->vm_id = w->cfg.vm_id;
	w->hdr->first_seq = w->seq;
	w->hdr->start_time_ns = w->cfg.start_time_ns;
	w->hdr->capacity = cap;
	w->hdr->lost = w->lost;
	__atomic_store_n(&w->hdr->magic, VBTS_SEG_MAGIC, __ATOMIC_RELEASE);
	return 0;

err_unlink:
	unlink(path);
	close(w->fd);
	w->fd = -1;
err_release:
	budget_release(w->cfg.budget, bytes);
	return -err;
}

static void publish(struct seg_writer *w)
{
	__atomic_store_n(&w->hdr->committed, w->n, __ATOMIC_RELEASE);
}

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

static void remember_closed(struct seg_writer *w, uint64_t bytes)
{
	if (w->nr_closed == w->closed_cap) {
		size_t cap = w->closed_cap ? w->closed_cap * 2 : 64;
		struct closed_seg *c = realloc(w->closed, cap * sizeof(*c));

		if (!c)
			return; /* its bytes stay counted: the budget errs on the safe side */
		w->closed = c;
		w->closed_cap = cap;
	}
	w->closed[w->nr_closed].index = w->index;
	w->closed[w->nr_closed].bytes = bytes;
	w->nr_closed++;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/*
 * Writes the open segment's records as closed segment w->index: compressed, or raw when
 * compression does not make them smaller; to a temporary file renamed into place. Its bytes
 * are taken from the budget first. Returns 0, -EDQUOT, -ENOSPC or another -errno (nothing is
 * left behind then).
 */
static int write_closed(struct seg_writer *w, uint32_t flags)
{
	struct vbts_seg_header h = *w->hdr;
	char path[PATH_MAX], tmp[PATH_MAX];
	const void *payload, *frame;
	uint64_t bytes;
	size_t len;
	int fd, ret;

	ret = seg_compressor__run(w->comp, w->slots, w->n, &frame, &len);
	if (ret)
		return ret;
	h.flags = flags;
	h.committed = w->n;
	h.capacity = w->n;
	h.lost = w->lost;
	if (len < w->n * sizeof(struct vbts_record)) {
		h.encoding = VBTS_SEG_ENC_ZSTD_DV1;
		h.payload_size = len;
		payload = frame;
	} else {
		h.encoding = VBTS_SEG_ENC_RAW;
		h.payload_size = 0;
		len = w->n * sizeof(struct vbts_record);
		payload = w->slots;
	}
	bytes = sizeof(h) + len;
	if (!budget_reserve(w->cfg.budget, bytes))
		return -EDQUOT;
	seg_path(w, w->index, true, tmp, sizeof(tmp));
	seg_path(w, w->index, false, path, sizeof(path));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
	} else {
		ret = write_all(fd, &h, sizeof(h));
		if (!ret)
			ret = write_all(fd, payload, len);
		if (close(fd) && !ret)
			ret = -errno;
		if (!ret && rename(tmp, path) < 0)
			ret = -errno;
		if (ret)
			unlink(tmp);
	}
	if (ret)
		budget_release(w->cfg.budget, bytes);
	else
		remember_closed(w, bytes);
	return ret;
}

/*
 * Closes the open segment's records into their own file and starts the open segment over:
 * its committed goes to 0 before its first seq moves on, so that a reader sees it empty or
 * (in between, as after a kill -9 there) holding the segment just written, which it skips.
 */
static int flush(struct seg_writer *w, uint32_t flags)
{
	int ret = write_closed(w, flags);

	if (ret)
		return ret;
	__atomic_store_n(&w->hdr->committed, 0, __ATOMIC_RELEASE);
	w->n = 0;
	w->index++;
	w->pending = 0;
	__atomic_store_n(&w->hdr->index, w->index, __ATOMIC_RELAXED);
	__atomic_store_n(&w->hdr->first_seq, w->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&w->hdr->lost, w->lost, __ATOMIC_RELAXED);
	return 0;
}

static unsigned int on_full(const struct seg_writer *w)
{
	return __atomic_load_n(&w->cfg.on_full, __ATOMIC_RELAXED);
}

static bool should_stop(const struct seg_writer *w)
{
	return w->cfg.stop && w->cfg.stop(w->cfg.stop_ctx);
}

/*
 * The full open segment out to its closed file: true when it is empty again. Stall mode waits
 * for space here; drop mode tries again only every DROP_RETRY_RECORDS drops.
 */
static bool rotate(struct seg_writer *w)
{
	struct timespec ts = {
		.tv_sec = (time_t)(w->cfg.stall_ns / 1000000000ULL),
		.tv_nsec = (long)(w->cfg.stall_ns % 1000000000ULL),
	};
	int ret;

	if (on_full(w) == SEG_ON_FULL_DROP && w->pending && w->lost < w->retry_at)
		return false;
	for (;;) {
		ret = flush(w, VBTS_SEG_F_CLOSED);
		if (ret == -ENOSPC || ret == -EDQUOT) {
			/* segments a consumer took away give their space back */
			rescan(w);
			ret = flush(w, VBTS_SEG_F_CLOSED);
		}
		if (!ret)
			return true;
		if ((ret != -ENOSPC && ret != -EDQUOT) || on_full(w) == SEG_ON_FULL_DROP ||
		    should_stop(w)) {
			w->retry_at = w->lost + DROP_RETRY_RECORDS;
			return false;
		}
		nanosleep(&ts, NULL);
	}
}

/*
 * Drops @k records: counted, and said in the open segment's last slot, which is kept for a
 * LOST record: stored and published once, its count then updated in place (one aligned
 * 8-byte store, never torn).
 */
static void drop(struct seg_writer *w, uint64_t k)
{
	struct vbts_record *last = &w->slots[w->hdr->capacity - 1];

	w->lost += k;
	w->pending += k;
	if (w->n < w->hdr->capacity) {
		*last = vbts_record__make_escape(VBTS_ESC_LOST, w->pending, 0);
		w->n = w->hdr->capacity;
		w->seq++;
		publish(w);
	} else {
		__atomic_store_n(&last->to, w->pending, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->hdr->lost, w->lost, __ATOMIC_RELAXED);
}

long seg_writer__append(struct seg_writer *w, const struct vbts_record *recs, uint64_t n)
{
	uint64_t done = 0;

	if (w->frozen) {
		w->lost += n;
		return -EROFS;
	}
	while (done < n) {
		/* the last slot is kept for a LOST record */
		uint64_t room = w->n < w->hdr->capacity - 1 ? w->hdr->capacity - 1 - w->n : 0, k;

		if (!room) {
			if (!rotate(w)) {
				drop(w, n - done);
				return (long)done;
			}
			continue;
		}
		k = n - done < room ? n - done : room;
		memcpy(&w->slots[w->n], &recs[done], k * sizeof(*recs));
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

void seg_writer__freeze(struct seg_writer *w)
{
	w->frozen = true;
	if (w->hdr)
		__atomic_or_fetch(&w->hdr->flags, VBTS_SEG_F_FROZEN, __ATOMIC_RELEASE);
}

uint64_t seg_writer__committed(const struct seg_writer *w)
{
	return w->seq;
}

uint64_t seg_writer__lost(const struct seg_writer *w)
{
	return w->lost;
}

int seg_writer__read(const struct seg_writer *w, uint64_t seq, struct vbts_record *rec)
{
	if (seq < w->hdr->first_seq || seq - w->hdr->first_seq >= w->n)
		return -ENOENT;
	*rec = w->slots[seq - w->hdr->first_seq];
	return 0;
}

int seg_writer__close(struct seg_writer *w)
{
	uint32_t flags;
	char path[PATH_MAX];
	int ret;

	if (!w)
		return 0;
	flags = VBTS_SEG_F_CLOSED | VBTS_SEG_F_LAST | (w->frozen ? VBTS_SEG_F_FROZEN : 0);
	/* The last records to their file, which replaces the open segment (and its budget). */
	budget_release(w->cfg.budget, w->reserved);
	ret = write_closed(w, flags);
	if (ret) {
		__atomic_add_fetch(&w->cfg.budget->used, w->reserved, __ATOMIC_RELAXED);
		/* No room: the open segment stays, its records readable where they are. */
		w->hdr->lost = w->lost;
		__atomic_or_fetch(&w->hdr->flags, flags, __ATOMIC_RELEASE);
		msync(w->hdr, w->map_size, MS_SYNC);
	}
	munmap(w->hdr, w->map_size);
	close(w->fd);
	if (!ret) {
		open_path(w, path, sizeof(path));
		unlink(path);
	}
	seg_compressor__free(w->comp);
	free(w->closed);
	free(w->dir);
	free(w);
	return ret;
}
