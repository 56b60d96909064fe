// SPDX-License-Identifier: GPL-2.0
/*
 * seg-view.c - random access to one vCPU's stream segments while the writer goes on
 * (vbts/segment-format.h), for the control socket's count, get, drain and events.
 *
 * The open segment `vcpuN.open.vseg` is mapped read-only and looked up again by name at each
 * call: a full one is linked under its closed name and a spare renamed over the open name
 * (seg-writer.c), so a new inode under the name is the next segment. A header is trusted only
 * when two reads of its index and first_seq around committed agree, and once the name still
 * names the mapped file with the same index: a rotated file's pages are recycled as a spare
 * (committed 0, index ~0, then a later index) and a record copied from it is checked against
 * its header again after the copy. Closed segments `vcpuN.SSSSSSSS.vseg` are found by a binary
 * search over their headers (at most log2 of the segments, one pread each), their records
 * read whole (raw) or decompressed (zstd) and kept until another segment is read. Every
 * header is checked before it is used, by the segment reader's check
 * (seg_reader__check_header()), and a closed segment holds at most the run's segment size;
 * the last one found damaged is not read again. Removed segments (a consumer took the
 * oldest away) are skipped; their records are gone (-ESTALE).
 *
 * The reader runs on the control thread, which must answer every client and end with the
 * run: every file is opened by its own name with O_NONBLOCK and O_NOFOLLOW after an lstat()
 * (input_file__open_entry()), so a FIFO, a device or a symbolic link put where a segment was
 * is refused at once, named in seg_view__error(), never waited on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input-file.h"
#include "seg-codec.h"
#include "seg-reader.h"
#include "seg-view.h"

#define TRIES 8                 /* reads of a moving header before -EAGAIN */
#define SPARE_INDEX UINT64_MAX  /* a spare's header index (seg-writer.c) */
#define GAP_PROBES 4096         /* unreadable segments in a row one lookup goes past */

struct seg_view {
	char *dir;
	unsigned int vcpu;
	uint64_t max_records;
	/* the open segment, mapped */
	const struct vbts_seg_header *hdr;
	const struct vbts_record *slots;
	size_t map_size;
	uint64_t capacity;
	dev_t dev;
	ino_t ino;
	uint64_t vm_id;
	uint64_t low;           /* closed segments below this index are gone */
	struct {                /* the last closed segment read */
		uint64_t first_seq, n;
		struct vbts_record *recs;
	} cache;
	struct {                /* the last closed segment found damaged: not read again */
		uint64_t first_seq, n;
	} bad;
	char err[SEG_READER_ERR_MAX]; /* what was wrong last */
};

/* What was wrong, in one line (seg_view__error()). */
static void __attribute__((format(printf, 2, 3))) set_err(struct seg_view *v, const char *fmt,
							  ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->err, sizeof(v->err), fmt, ap);
	va_end(ap);
}

/* A consistent look at the open segment's header. */
struct head {
	uint64_t index, first_seq, n, lost;
};

struct seg_view *seg_view__new(const char *dir, unsigned int vcpu, uint64_t max_records)
{
	struct seg_view *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->dir = strdup(dir);
	if (!v->dir) {
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	v->vcpu = vcpu;
	v->max_records = max_records && max_records < VBTS_SEG_MAX_RECORDS ? max_records :
									      VBTS_SEG_MAX_RECORDS;
	return v;
}

static void open_path(const struct seg_view *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s/vcpu%u%s", v->dir, v->vcpu, VBTS_SEG_OPEN_SUFFIX);
}

static void unmap_open(struct seg_view *v)
{
	if (v->hdr)
		munmap((void *)v->hdr, v->map_size);
	v->hdr = NULL;
	v->slots = NULL;
}

/*
 * Map the file under the open name when it is not the one mapped. Once the run closed its
 * stream the name is gone: the last mapping stays (its records are the last segment's).
 */
static int map_open(struct seg_view *v)
{
	const struct vbts_seg_header *h;
	char path[PATH_MAX];
	struct stat st;
	uint64_t n;
	void *map;
	int fd;

	open_path(v, path, sizeof(path));
	/* never blocks: a FIFO or a device under the name is refused before it is opened */
	fd = input_file__open_entry(path, &st, v->err, sizeof(v->err));
	if (fd < 0)
		return fd == -ENOENT && v->hdr ? 0 : fd == -ELOOP ? -EINVAL : fd;
	if ((uint64_t)st.st_size < VBTS_SEG_HEADER_SIZE + 2 * sizeof(struct vbts_record)) {
		set_err(v, "%s: %llu bytes, too short for an open segment",
			 path, (unsigned long long)st.st_size);
		close(fd);
		return -EINVAL;
	}
	if (v->hdr && st.st_dev == v->dev && st.st_ino == v->ino) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		int ret = -errno;

		set_err(v, "%s: mmap: %s", path, strerror(-ret));
		return ret;
	}
	h = map;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* The segment reader's check, and what a mapped open segment needs besides. */
	if (seg_reader__check_header(h, (uint64_t)st.st_size, SEG_READER_OPEN_INDEX, v->vcpu,
				     path, &n, v->err, sizeof(v->err)))
		goto err_unmap;
	if (h->encoding != VBTS_SEG_ENC_RAW || h->capacity < 2 ||
	    h->capacity > ((uint64_t)st.st_size - VBTS_SEG_HEADER_SIZE) /
				  sizeof(struct vbts_record)) {
		set_err(v, "%s: not an open segment (encoding %u, %llu slots "
			 "in %llu bytes)", path, h->encoding, (unsigned long long)h->capacity,
			 (unsigned long long)st.st_size);
		goto err_unmap;
	}
	unmap_open(v);
	v->hdr = h;
	v->slots = (const struct vbts_record *)((const char *)map + VBTS_SEG_HEADER_SIZE);
	v->map_size = (size_t)st.st_size;
	v->capacity = h->capacity;
	v->dev = st.st_dev;
	v->ino = st.st_ino;
	v->vm_id = h->vm_id;
	return 0;

err_unmap:
	munmap(map, (size_t)st.st_size);
	return -EINVAL;
}

/* The mapped header's index, first_seq and committed as they were at one moment. */
static int read_head(const struct seg_view *v, struct head *out)
{
	const struct vbts_seg_header *h = v->hdr;
	uint64_t i1, f1, n, i2, f2;

	i1 = __atomic_load_n(&h->index, __ATOMIC_ACQUIRE);
	f1 = __atomic_load_n(&h->first_seq, __ATOMIC_ACQUIRE);
	n = __atomic_load_n(&h->committed, __ATOMIC_ACQUIRE);
	out->lost = __atomic_load_n(&h->lost, __ATOMIC_RELAXED);
	i2 = __atomic_load_n(&h->index, __ATOMIC_ACQUIRE);
	f2 = __atomic_load_n(&h->first_seq, __ATOMIC_ACQUIRE);
	if (i1 != i2 || f1 != f2 || i1 == SPARE_INDEX || f1 > UINT64_MAX - v->capacity)
		return -EAGAIN;
	out->index = i1;
	out->first_seq = f1;
	out->n = n < v->capacity ? n : v->capacity;
	return 0;
}

/*
 * The open segment now: its header read, then its name checked to still name the mapped
 * file with the same index (a file rotated away and recycled meanwhile says committed 0).
 */
static int snapshot(struct seg_view *v, struct head *out)
{
	char path[PATH_MAX];
	struct stat st;
	int ret;

	open_path(v, path, sizeof(path));
	for (int i = 0; i < TRIES; i++) {
		ret = map_open(v);
		if (ret < 0)
			return ret;
		if (read_head(v, out) < 0)
			continue;
		if (stat(path, &st) < 0) {
			if (errno != ENOENT)
				return -errno;
			/* the run closed the stream: the mapped file is the last one */
		} else if (st.st_dev != v->dev || st.st_ino != v->ino) {
			continue;
		}
		if (__atomic_load_n(&v->hdr->index, __ATOMIC_ACQUIRE) == out->index)
			return 0;
	}
	return -EAGAIN;
}

static void closed_path(const struct seg_view *v, uint64_t index, char *buf, size_t len)
{
	snprintf(buf, len, "%s/vcpu%u.%08llu%s", v->dir, v->vcpu, (unsigned long long)index,
		 VBTS_SEG_SUFFIX);
}

/*
 * Open closed segment @index and check its header into @h: the fd, -ENOENT when it is not
 * there, -EAGAIN when a raw file under the name was recycled meanwhile, -EIO when damaged.
 */
static int open_closed(struct seg_view *v, uint64_t index, struct vbts_seg_header *h)
{
	char path[PATH_MAX];
	struct stat st;
	uint64_t n;
	int fd;

	closed_path(v, index, path, sizeof(path));
	/* never blocks: a FIFO, a device or a symbolic link there is damage, not opened */
	fd = input_file__open_entry(path, &st, v->err, sizeof(v->err));
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd == -EINVAL || fd == -ELOOP)
		return -EIO;
	if (fd < 0)
		return fd;
	if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h)) {
		set_err(v, "%s: file ends inside the %u-byte header", path,
			 VBTS_SEG_HEADER_SIZE);
		goto damaged;
	}
	/* The segment reader's check (any index: a recycled raw file is told apart below). */
	if (seg_reader__check_header(h, (uint64_t)st.st_size, SEG_READER_OPEN_INDEX, v->vcpu,
				     path, &n, v->err, sizeof(v->err)))
		goto damaged;
	if (v->hdr && h->vm_id != v->vm_id) {
		set_err(v, "%s: offset 0x20: vm_id 0x%llx of another run "
			 "(0x%llx)", path, (unsigned long long)h->vm_id,
			 (unsigned long long)v->vm_id);
		goto damaged;
	}
	if (h->index != index || (h->encoding == VBTS_SEG_ENC_RAW && !h->committed)) {
		/* a raw file's pages taken for a later segment: the name names another now */
		if (h->encoding == VBTS_SEG_ENC_RAW) {
			close(fd);
			return -EAGAIN;
		}
		goto damaged;
	}
	if (!h->committed || h->committed > v->max_records) {
		set_err(v, "%s: offset 0x28: %llu records, not 1 to the run's "
			 "segment size %llu", path, (unsigned long long)h->committed,
			 (unsigned long long)v->max_records);
		goto damaged;
	}
	return fd;

damaged:
	close(fd);
	return -EIO;
}

/* The records of closed segment @h (open as @fd) into the cache: 0, -EAGAIN, -EIO. */
static int load_closed(struct seg_view *v, int fd, const struct vbts_seg_header *h)
{
	struct vbts_seg_header again;
	struct vbts_record *recs = NULL;
	int ret;

	seg_view__drop_cache(v);
	ret = seg_codec__read_records(fd, h, h->committed, &recs);
	if (ret == -EINVAL || ret == -EIO) {
		set_err(v, "%s/vcpu%u.%08llu%s: its records cannot be read",
			 v->dir, v->vcpu, (unsigned long long)h->index, VBTS_SEG_SUFFIX);
		ret = -EIO;
	}
	/* a raw segment's pages may have become a spare's while they were read */
	if (!ret && h->encoding == VBTS_SEG_ENC_RAW &&
	    (pread(fd, &again, sizeof(again), 0) != (ssize_t)sizeof(again) ||
	     again.index != h->index || again.first_seq != h->first_seq ||
	     again.committed != h->committed || again.encoding != h->encoding))
		ret = -EAGAIN;
	if (ret) {
		free(recs);
		return ret;
	}
	v->cache.recs = recs;
	v->cache.first_seq = h->first_seq;
	v->cache.n = h->committed;
	return 0;
}

/*
 * Where segment @mid cannot be read (removed, or damaged): whether @seq comes before it, told by
 * the first readable segment above it (below @hi). 1: before (or in) it, 0: after it, with that
 * segment open as the return of *@fd and its header in @h; 2: after it, taken for one of the
 * oldest removed (@removed: it was, and more than GAP_PROBES after it were too); -errno.
 */
static int side_of_gap(struct seg_view *v, uint64_t mid, uint64_t hi, uint64_t seq,
		       bool removed, struct vbts_seg_header *h, int *fd)
{
	char err[SEG_READER_ERR_MAX];
	unsigned int probes = 0;

	memcpy(err, v->err, sizeof(err));
	for (uint64_t k = mid + 1; k < hi; k++) {
		if (++probes > GAP_PROBES) {
			/* a long run of removed ones: the oldest, which consumers take away */
			if (removed)
				return 2;
			set_err(v, "%s/vcpu%u: more than %u segments in a row cannot be read",
				v->dir, v->vcpu, GAP_PROBES);
			return -EIO;
		}
		*fd = open_closed(v, k, h);
		removed = removed && *fd == -ENOENT;
		if (*fd == -ENOENT || *fd == -EIO)
			continue;
		if (*fd < 0)
			return *fd;
		if (seq < h->first_seq) {
			close(*fd);
			break;
		}
		memcpy(v->err, err, sizeof(err));
		return 0;
	}
	memcpy(v->err, err, sizeof(err));
	return 1;
}

/*
 * Record @seq of a closed segment below @open_index: a binary search over their headers. A
 * segment that cannot be read (removed, damaged) is placed by the next readable one above it;
 * a record between two readable segments is -ESTALE when every segment between them that the
 * search met was removed, else -EIO (seg_view__error() names the lowest damaged one it met).
 */
static int closed_get(struct seg_view *v, uint64_t open_index, uint64_t seq,
		      struct vbts_record *rec)
{
	uint64_t lo = v->low, hi = open_index, mid;
	char gap_err[SEG_READER_ERR_MAX];
	struct vbts_seg_header h;
	int fd, ret, gap = -ESTALE;

	if (v->cache.recs && seq >= v->cache.first_seq && seq - v->cache.first_seq < v->cache.n) {
		*rec = v->cache.recs[seq - v->cache.first_seq];
		return 0;
	}
	if (seq >= v->bad.first_seq && seq - v->bad.first_seq < v->bad.n)
		return -EIO;
	gap_err[0] = '\0';
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		fd = open_closed(v, mid, &h);
		if (fd == -ENOENT || fd == -EIO) {
			int missing = fd;

			ret = side_of_gap(v, mid, hi, seq, missing == -ENOENT, &h, &fd);
			if (ret < 0)
				return ret;
			if (ret == 2) {
				lo = mid + 1;
				continue;
			}
			if (ret) {
				/* before the next readable one: in this gap, or below it */
				gap = missing == -ENOENT ? -ESTALE : -EIO;
				memcpy(gap_err, v->err, sizeof(gap_err));
				hi = mid;
				continue;
			}
			/* at or after the readable segment found above the gap */
		} else if (fd < 0) {
			return fd;
		}
		if (seq < h.first_seq) {
			hi = h.index;
		} else if (seq - h.first_seq >= h.committed) {
			lo = h.index + 1;
		} else {
			ret = load_closed(v, fd, &h);
			close(fd);
			if (ret == -EIO) {
				/* its records are not read again: a drain goes past at once */
				v->bad.first_seq = h.first_seq;
				v->bad.n = h.committed;
			}
			if (ret)
				return ret;
			*rec = v->cache.recs[seq - v->cache.first_seq];
			return 0;
		}
		close(fd);
	}
	if (gap == -EIO)
		memcpy(v->err, gap_err, sizeof(gap_err));
	return gap;
}

int seg_view__window(struct seg_view *v, uint64_t *first, uint64_t *end, uint64_t *lost)
{
	struct vbts_seg_header h;
	struct head s;
	int ret, fd;

	ret = snapshot(v, &s);
	if (ret < 0)
		return ret;
	*end = s.first_seq + s.n;
	*lost = s.lost;
	*first = s.first_seq;
	/* The oldest closed segment still there; those found gone stay gone. */
	for (uint64_t i = v->low, tries = 0; i < s.index && tries < TRIES;) {
		fd = open_closed(v, i, &h);
		if (fd == -ENOENT) {
			v->low = ++i;
			continue;
		}
		if (fd == -EAGAIN) {
			tries++;
			continue;
		}
		if (fd >= 0) {
			close(fd);
			*first = h.first_seq;
		}
		/* a damaged one: its records cannot be read; the next ones can */
		if (fd == -EIO) {
			i++;
			continue;
		}
		break;
	}
	return 0;
}

int seg_view__get(struct seg_view *v, uint64_t seq, struct vbts_record *rec)
{
	struct head s, s2;
	int ret;

	for (int i = 0; i < TRIES; i++) {
		ret = snapshot(v, &s);
		if (ret < 0)
			return ret;
		if (seq >= s.first_seq + s.n)
			return -ENOENT;
		if (seq < s.first_seq) {
			ret = closed_get(v, s.index, seq, rec);
			if (ret != -EAGAIN)
				return ret;
			continue;
		}
		*rec = v->slots[seq - s.first_seq];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/* still this segment's: its pages were not recycled while copied */
		if (read_head(v, &s2) == 0 && s2.index == s.index &&
		    s2.first_seq == s.first_seq && seq < s2.first_seq + s2.n)
			return 0;
	}
	return -EAGAIN;
}

const char *seg_view__error(const struct seg_view *v)
{
	return v->err;
}

void seg_view__drop_cache(struct seg_view *v)
{
	free(v->cache.recs);
	v->cache.recs = NULL;
	v->cache.n = 0;
}

void seg_view__free(struct seg_view *v)
{
	if (!v)
		return;
	unmap_open(v);
	seg_view__drop_cache(v);
	free(v->dir);
	free(v);
}
