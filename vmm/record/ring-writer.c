// SPDX-License-Identifier: GPL-2.0
/*
 * ring-writer.c - writing side of vbts ring files: create, append with publish-after-write,
 * loss accounting, freeze, close.
 *
 * Locking: none. A writer belongs to one thread; readers are other processes that follow the
 * live-reader protocol of vbts/ring-format.h.
 *
 * Publication order of one append (wrap mode, ring full):
 *   1. the record bytes go into slot seq % capacity (this destroys record seq - capacity);
 *   2. lost is incremented (relaxed store) - the destroyed record is accounted for;
 *   3. committed = seq + 1 is stored with release ordering.
 * A reader that loads committed with acquire ordering and then reads lost therefore always
 * finds lost >= committed - capacity, and never counts a record both as present and lost in a
 * way that would make the totals disagree: committed - lost <= capacity holds for every
 * (committed, lost) pair a reader can observe in that order.
 *
 * The file is a shared mapping of a regular file, so every published record is in the page
 * cache as soon as committed is stored: it survives a kill -9 of the writer (not a host crash;
 * close() msyncs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-writer.h"
#include "seg-writer.h"

struct ring_writer {
	int fd;
	struct vbts_ring_header *hdr;   /* start of the mapping */
	struct vbts_record *slots;      /* hdr + header_size */
	size_t map_size;
	uint64_t capacity;
	uint64_t slot;                  /* == seq % capacity, kept without a divide */
	uint64_t seq;                   /* == hdr->committed, the writer's private copy */
	uint64_t lost;                  /* == hdr->lost */
	uint64_t first;                 /* == hdr->first_seq */
	char *path;                     /* the file's name (ring_writer__resize()) */
	bool frozen;
	struct seg_writer *seg;         /* stream mode: everything goes there */
};

static int ring_size(uint64_t capacity, size_t *size)
{
	uint64_t bytes;

	if (__builtin_mul_overflow(capacity, (uint64_t)sizeof(struct vbts_record), &bytes) ||
	    __builtin_add_overflow(bytes, (uint64_t)VBTS_RING_HEADER_SIZE, &bytes) ||
	    bytes > (uint64_t)INT64_MAX || bytes > SIZE_MAX)
		return -EFBIG;
	*size = (size_t)bytes;
	return 0;
}

static void store_lost(struct ring_writer *w)
{
	__atomic_store_n(&w->hdr->lost, w->lost, __ATOMIC_RELAXED);
}

struct ring_writer *ring_writer__create(const char *path, const struct ring_writer_config *cfg)
{
	struct ring_writer *w;
	size_t size;
	void *map;
	int err;

	if (!path || !cfg || cfg->capacity == 0 || cfg->mode != VBTS_RING_WRAP) {
		errno = EINVAL;
		return NULL;
	}
	err = ring_size(cfg->capacity, &size);
	if (err) {
		errno = -err;
		return NULL;
	}

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;

	w->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = errno;
		goto err_free;
	}
	/* Reserve the blocks now: ENOSPC here, not SIGBUS on a store into a sparse page later. */
	err = posix_fallocate(w->fd, 0, (off_t)size);
	if (err)
		goto err_unlink;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto err_unlink;
	}
	w->hdr = map;
	w->slots = (struct vbts_record *)((char *)map + VBTS_RING_HEADER_SIZE);
	w->map_size = size;
	w->capacity = cfg->capacity;

	/* The file is all zeros (fallocate); fill the header, the magic last. */
	w->hdr->version = VBTS_RING_VERSION;
	w->hdr->header_size = VBTS_RING_HEADER_SIZE;
	w->hdr->record_size = sizeof(struct vbts_record);
	w->hdr->mode = (uint16_t)cfg->mode;
	w->hdr->vcpu_id = cfg->vcpu_id;
	w->hdr->flags = 0;
	w->hdr->capacity = cfg->capacity;
	w->hdr->vm_id = cfg->vm_id;
	w->hdr->committed = 0;
	w->hdr->lost = 0;
	w->hdr->start_time_ns = cfg->start_time_ns;
	__atomic_store_n(&w->hdr->magic, VBTS_RING_MAGIC, __ATOMIC_RELEASE);
	w->path = strdup(path);
	if (!w->path) {
		err = ENOMEM;
		munmap(map, size);
		goto err_unlink;
	}
	return w;

err_unlink:
	unlink(path);
	close(w->fd);
err_free:
	free(w);
	errno = err;
	return NULL;
}

struct ring_writer *ring_writer__create_stream(const struct seg_writer_config *cfg)
{
	struct ring_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->fd = -1;
	w->seg = seg_writer__create(cfg);
	if (!w->seg) {
		int err = errno;

		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

int ring_writer__append_n(struct ring_writer *w, const struct vbts_record *recs, uint64_t n)
{
	uint64_t before, after, skip;

	if (w->seg) {
		long r = seg_writer__append(w->seg, recs, n);

		return r < 0 ? (int)r : (uint64_t)r == n ? 0 : -ENOSPC;
	}
	if (w->frozen) {
		w->lost += n;
		store_lost(w);
		return -EROFS;
	}
	/* Overwritten records: those beyond capacity, whether stored and overwritten or not. */
	before = w->seq > w->capacity ? w->seq - w->capacity : 0;
	if (n > w->capacity) {
		/* Those that would overwrite each other within this call are not even stored. */
		skip = n - w->capacity;
		w->seq += skip;
		w->slot = w->seq % w->capacity;
		recs += skip;
		n = w->capacity;
	}
	while (n) {
		uint64_t k = w->capacity - w->slot < n ? w->capacity - w->slot : n;

		memcpy(&w->slots[w->slot], recs, k * sizeof(*recs));
		recs += k;
		n -= k;
		w->seq += k;
		w->slot += k;
		if (w->slot == w->capacity)
			w->slot = 0;
	}
	after = w->seq > w->capacity ? w->seq - w->capacity : 0;
	if (after > before) {
		w->lost += after - before;
		store_lost(w);
	}
	__atomic_store_n(&w->hdr->committed, w->seq, __ATOMIC_RELEASE);
	return 0;
}

int ring_writer__append(struct ring_writer *w, const struct vbts_record *rec)
{
	struct vbts_record *slot;

	if (w->seg || w->frozen)
		return ring_writer__append_n(w, rec, 1);
	slot = &w->slots[w->slot];
	*slot = *rec;
	if (w->seq >= w->capacity) {
		/* Record seq - capacity was just overwritten: account for it before publishing. */
		w->lost++;
		store_lost(w);
	}
	w->seq++;
	if (++w->slot == w->capacity)
		w->slot = 0;
	__atomic_store_n(&w->hdr->committed, w->seq, __ATOMIC_RELEASE);
	return 0;
}

int ring_writer__escape(struct ring_writer *w, unsigned int kind, uint64_t payload, uint64_t aux)
{
	struct vbts_record r = vbts_record__make_escape(kind, payload, aux);

	return ring_writer__append(w, &r);
}

void ring_writer__freeze(struct ring_writer *w)
{
	if (w->seg) {
		seg_writer__freeze(w->seg);
		return;
	}
	w->frozen = true;
	__atomic_or_fetch(&w->hdr->flags, VBTS_RING_F_FROZEN, __ATOMIC_RELEASE);
}

struct seg_writer *ring_writer__stream(struct ring_writer *w)
{
	return w->seg;
}

uint64_t ring_writer__lost(const struct ring_writer *w)
{
	return w->seg ? seg_writer__lost(w->seg) : w->lost;
}

uint64_t ring_writer__committed(const struct ring_writer *w)
{
	if (w->seg)
		return seg_writer__committed(w->seg);
	return w->seq;
}

uint64_t ring_writer__capacity(const struct ring_writer *w)
{
	return w->seg ? 0 : w->capacity;
}

int ring_writer__resize(struct ring_writer *w, uint64_t capacity)
{
	struct ring_writer_config cfg;
	struct ring_writer *n;
	uint64_t held, keep;
	char *tmp;
	int ret;

	if (w->seg)
		return -EOPNOTSUPP;
	if (!capacity)
		return -EINVAL;
	if (w->frozen)
		return -EROFS;
	if (capacity == w->capacity)
		return 0;
	if (asprintf(&tmp, "%s.resize", w->path) < 0)
		return -ENOMEM;
	cfg = (struct ring_writer_config){
		.capacity = capacity,
		.mode = w->hdr->mode,
		.vcpu_id = w->hdr->vcpu_id,
		.vm_id = w->hdr->vm_id,
		.start_time_ns = w->hdr->start_time_ns,
	};
	unlink(tmp); /* one a writer killed in the middle of a resize left */
	n = ring_writer__create(tmp, &cfg);
	if (!n) {
		ret = -errno;
		free(tmp);
		return ret;
	}
	/* The newest records that fit, in their slots of the new capacity. */
	held = w->seq - (w->seq > w->capacity ? w->seq - w->capacity : 0);
	if (w->seq - held < w->first)
		held = w->seq - w->first;
	keep = held < capacity ? held : capacity;
	for (uint64_t s = w->seq - keep; s < w->seq; s++)
		n->slots[s % capacity] = w->slots[s % w->capacity];
	n->seq = w->seq;
	n->slot = w->seq % capacity;
	n->lost = w->lost + (held - keep);
	n->first = w->seq - keep;
	n->hdr->first_seq = n->first;
	n->hdr->lost = n->lost;
	__atomic_store_n(&n->hdr->committed, n->seq, __ATOMIC_RELEASE);
	if (rename(tmp, w->path) < 0) {
		ret = -errno;
		ring_writer__close(n);
		unlink(tmp);
		free(tmp);
		return ret;
	}
	free(tmp);
	/* The old file is no one's now: its mapping goes, @w takes over the new one. */
	munmap(w->hdr, w->map_size);
	close(w->fd);
	free(n->path);
	n->path = w->path;
	*w = *n;
	free(n);
	return 0;
}

int ring_writer__read(const struct ring_writer *w, uint64_t seq, struct vbts_record *rec)
{
	if (w->seg)
		return seg_writer__read(w->seg, seq, rec);
	if (seq >= w->seq || w->seq - seq > w->capacity || seq < w->first)
		return -ENOENT;
	*rec = w->slots[seq % w->capacity];
	return 0;
}

int ring_writer__close(struct ring_writer *w)
{
	int ret = 0;

	if (!w)
		return 0;
	if (w->seg) {
		ret = seg_writer__close(w->seg);
		free(w);
		return ret;
	}
	__atomic_or_fetch(&w->hdr->flags, VBTS_RING_F_CLOSED, __ATOMIC_RELEASE);
	if (msync(w->hdr, w->map_size, MS_SYNC))
		ret = -errno;
	munmap(w->hdr, w->map_size);
	if (close(w->fd) && !ret)
		ret = -errno;
	free(w->path);
	free(w);
	return ret;
}
