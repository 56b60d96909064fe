// SPDX-License-Identifier: GPL-2.0
/*
 * ring-reader.c - open, validate and read vbts ring files, live ones included: in order (the
 * decoder) or one record at a time (the control socket).
 *
 * Live-reader protocol (ring-format.h): c1 = acquire(committed) fixes the window; for each
 * chunk the slots are copied, then c2 = acquire(committed); records older than
 * c2 + 1 - capacity may have been overwritten during the copy and are dropped (reported to the
 * caller as a jump of first_seq). Only records with seq < c1 are ever returned, so a record is
 * returned only after its bytes were published.
 *
 * Consequence: on a full ring whose writer did not close or freeze it (still running, or
 * killed), the oldest slot is never trusted - the writer may have been storing the next
 * record into it - so such a ring yields capacity - 1 records and the oldest is reported as
 * lost. A closed or frozen ring yields all capacity records.
 *
 * Memory: the whole file is mapped, but the pages of the records already read are dropped from
 * the mapping (MADV_DONTNEED) every RELEASE_RECORDS records, so the resident set stays about
 * that window whatever the size of the file. The mapping is shared: a page dropped and read
 * again (a live ring that wrapped) comes back from the page cache with the file's current
 * bytes, as a page never dropped would show them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input-file.h"
#include "ring-reader.h"

/*
 * The file is mapped and its descriptor closed at once: a reader holds no descriptor, so a
 * trace may have more rings than the process may open files.
 */
/* Records read between two releases of their pages: about 1 MiB. */
#define RELEASE_RECORDS ((1u << 20) / sizeof(struct vbts_record))

struct ring_reader {
	char *path;
	const void *map;
	size_t map_size;
	const struct vbts_ring_header *live;    /* the mapped header */
	const struct vbts_record *slots;
	struct vbts_ring_header hdr;            /* copy validated at open */
	uint64_t capacity;
	uint64_t next;                          /* next seq to return */
	uint64_t end;                           /* committed at ring_reader__begin() */
	uint64_t released;                      /* records before it were released */
	size_t page_size;
	dev_t dev;                              /* the file mapped (ring_reader__replaced()) */
	ino_t ino;
};

#define HDR_OFF(field) ((unsigned int)__builtin_offsetof(struct vbts_ring_header, field))

static void __attribute__((format(printf, 5, 6)))
set_err(char *err, size_t errlen, const char *path, unsigned long long off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = snprintf(err, errlen, "%s: offset 0x%llx: ", path, off);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static uint64_t load_committed(const struct ring_reader *r)
{
	return __atomic_load_n(&r->live->committed, __ATOMIC_ACQUIRE);
}

static bool writer_done(const struct ring_reader *r)
{
	uint32_t flags = __atomic_load_n(&r->live->flags, __ATOMIC_ACQUIRE);

	return flags & (VBTS_RING_F_CLOSED | VBTS_RING_F_FROZEN);
}

/* Returns 0 or -EINVAL with @err filled. @size is the file size. */
static int check_header(const struct vbts_ring_header *h, uint64_t size, const char *path,
			char *err, size_t errlen)
{
	uint64_t bytes, overwritten;
	const uint32_t known_flags = VBTS_RING_F_FROZEN | VBTS_RING_F_CLOSED;

	if (h->magic != VBTS_RING_MAGIC) {
		set_err(err, errlen, path, HDR_OFF(magic),
			"bad magic 0x%016" PRIx64 ", not a vbts ring file", h->magic);
		return -EINVAL;
	}
	if (h->version != VBTS_RING_VERSION) {
		set_err(err, errlen, path, HDR_OFF(version),
			"unsupported ring version %u (this vbts reads version %u)", h->version,
			VBTS_RING_VERSION);
		return -EINVAL;
	}
	if (h->header_size != VBTS_RING_HEADER_SIZE) {
		set_err(err, errlen, path, HDR_OFF(header_size),
			"header size %u, expected %u", h->header_size, VBTS_RING_HEADER_SIZE);
		return -EINVAL;
	}
	if (h->record_size != sizeof(struct vbts_record)) {
		set_err(err, errlen, path, HDR_OFF(record_size), "record size %u, expected %zu",
			h->record_size, sizeof(struct vbts_record));
		return -EINVAL;
	}
	if (h->mode != VBTS_RING_WRAP && h->mode != VBTS_RING_STREAM) {
		set_err(err, errlen, path, HDR_OFF(mode), "unknown ring mode %u", h->mode);
		return -EINVAL;
	}
	if (h->flags & ~known_flags) {
		set_err(err, errlen, path, HDR_OFF(flags), "unknown flags 0x%x",
			h->flags & ~known_flags);
		return -EINVAL;
	}
	if (h->capacity == 0) {
		set_err(err, errlen, path, HDR_OFF(capacity), "capacity 0, must be at least 1");
		return -EINVAL;
	}
	if (__builtin_mul_overflow(h->capacity, (uint64_t)sizeof(struct vbts_record), &bytes) ||
	    __builtin_add_overflow(bytes, (uint64_t)h->header_size, &bytes) || bytes > size) {
		set_err(err, errlen, path, HDR_OFF(capacity),
			"capacity %" PRIu64 " does not fit a file of %" PRIu64 " bytes",
			h->capacity, size);
		return -EINVAL;
	}
	if (bytes != size) {
		set_err(err, errlen, path, bytes,
			"%" PRIu64 " bytes after the last of %" PRIu64 " record slots",
			size - bytes, h->capacity);
		return -EINVAL;
	}
	/* The writer stores lost before committed, so lost >= committed - capacity always. */
	overwritten = h->committed > h->capacity ? h->committed - h->capacity : 0;
	if (h->lost < overwritten) {
		set_err(err, errlen, path, HDR_OFF(lost),
			"lost %" PRIu64 " is less than the %" PRIu64
			" records that committed %" PRIu64 " implies were overwritten",
			h->lost, overwritten, h->committed);
		return -EINVAL;
	}
	return 0;
}

/* Maps the ring file open on @fd, of @size bytes. Returns 0 or an errno with @err filled. */
static int map_file(struct ring_reader *r, int fd, uint64_t size, char *err, size_t errlen)
{
	int ret;

	if (size < sizeof(struct vbts_ring_header)) {
		set_err(err, errlen, r->path, (unsigned long long)size,
			"file of %llu bytes ends inside the %zu-byte ring header",
			(unsigned long long)size, sizeof(struct vbts_ring_header));
		return EINVAL;
	}
	if (size > SIZE_MAX) {
		snprintf(err, errlen, "%s: too large to map", r->path);
		return EFBIG;
	}
	r->map_size = (size_t)size;
	r->map = mmap(NULL, r->map_size, PROT_READ, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		ret = errno;
		snprintf(err, errlen, "%s: mmap: %s", r->path, strerror(ret));
		return ret;
	}
	return 0;
}

struct ring_reader *ring_reader__open(const char *path, char *err, size_t errlen)
{
	struct ring_reader *r;
	struct stat st;
	int fd, ret;

	if (err && errlen)
		err[0] = '\0';
	r = calloc(1, sizeof(*r));
	if (!r)
		goto err_nomem;
	r->path = strdup(path);
	if (!r->path)
		goto err_free_reader;

	/* A regular file only: a FIFO or a device would block or never end. */
	fd = input_file__open(path, UINT64_MAX, &st, err, errlen);
	if (fd < 0) {
		ret = -fd;
		goto err_free_path;
	}
	ret = map_file(r, fd, (uint64_t)st.st_size, err, errlen);
	close(fd);
	if (ret)
		goto err_free_path;
	r->live = r->map;
	/* Validate a private copy; committed/lost are re-read atomically later. */
	memcpy(&r->hdr, r->map, sizeof(r->hdr));
	r->hdr.committed = load_committed(r);
	r->hdr.lost = __atomic_load_n(&r->live->lost, __ATOMIC_RELAXED);
	if (check_header(&r->hdr, (uint64_t)st.st_size, path, err, errlen)) {
		ret = EINVAL;
		goto err_unmap;
	}
	r->capacity = r->hdr.capacity;
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->page_size = (size_t)sysconf(_SC_PAGESIZE);
	r->slots = (const struct vbts_record *)((const char *)r->map + r->hdr.header_size);
	if (ring_reader__begin(r)) {
		ret = EINVAL;
		set_err(err, errlen, path, HDR_OFF(committed), "committed went backwards");
		goto err_unmap;
	}
	return r;

err_unmap:
	munmap((void *)r->map, r->map_size);
err_free_path:
	free(r->path);
	free(r);
	errno = ret;
	return NULL;
err_free_reader:
	free(r);
err_nomem:
	snprintf(err, errlen, "%s: out of memory", path);
	errno = ENOMEM;
	return NULL;
}

const struct vbts_ring_header *ring_reader__header(const struct ring_reader *r)
{
	return &r->hdr;
}

int ring_reader__begin(struct ring_reader *r)
{
	uint64_t c = load_committed(r);

	if (c < r->hdr.committed)
		return -EIO;
	r->end = c;
	r->next = c > r->capacity ? c - r->capacity : 0;
	/* a resized ring holds nothing before its first_seq */
	if (r->next < r->hdr.first_seq)
		r->next = r->hdr.first_seq < c ? r->hdr.first_seq : c;
	r->released = r->next;
	return 0;
}

void ring_reader__window(const struct ring_reader *r, uint64_t *first, uint64_t *end)
{
	uint64_t e = r->end;

	*first = e > r->capacity ? e - r->capacity : 0;
	if (*first < r->hdr.first_seq)
		*first = r->hdr.first_seq < e ? r->hdr.first_seq : e;
	*end = e;
}

/* Drops the pages of slots [from, from + n) (in slot order, wrapping) from the mapping. */
static void release_slots(struct ring_reader *r, uint64_t from, uint64_t n)
{
	uintptr_t mask = ~((uintptr_t)r->page_size - 1);

	while (n) {
		uint64_t k = n < r->capacity - from ? n : r->capacity - from;
		/*
		 * From the page of the first slot (its slots before @from were read before, or
		 * lie outside the window) to the last whole page: the page of the slot after the
		 * last one is read next. A page dropped too early only costs a fault.
		 */
		uintptr_t start = (uintptr_t)&r->slots[from] & mask;
		uintptr_t end = (uintptr_t)&r->slots[from + k] & mask;

		if (end > start)
			madvise((void *)start, end - start, MADV_DONTNEED);
		n -= k;
		from = 0;
	}
}

/* Releases the pages of the records read since the last release, once they are enough. */
static void release_read(struct ring_reader *r)
{
	uint64_t n = r->next - r->released;

	if (n < RELEASE_RECORDS)
		return;
	/* A window that wrapped (or records skipped) may span the whole ring: no more. */
	if (n > r->capacity)
		n = r->capacity;
	release_slots(r, r->released % r->capacity, n);
	r->released = r->next;
}

/* Copies slots of seqs [seq, seq + n), n <= capacity, with one division for all of them. */
static void copy_slots(const struct ring_reader *r, struct vbts_record *buf, uint64_t seq,
		       uint64_t n)
{
	uint64_t slot = seq % r->capacity;

	for (uint64_t i = 0; i < n; i++) {
		const struct vbts_record *s = &r->slots[slot];

		buf[i].from = __atomic_load_n(&s->from, __ATOMIC_RELAXED);
		buf[i].to = __atomic_load_n(&s->to, __ATOMIC_RELAXED);
		buf[i].flags = __atomic_load_n(&s->flags, __ATOMIC_RELAXED);
		if (++slot == r->capacity)
			slot = 0;
	}
}

ssize_t ring_reader__read(struct ring_reader *r, struct vbts_record *buf, size_t max,
			  uint64_t *first_seq)
{
	for (;;) {
		uint64_t want, c2, safe_from, drop;
		bool done;

		if (r->next >= r->end || max == 0)
			return 0;
		want = r->end - r->next;
		if (want > max)
			want = max;
		copy_slots(r, buf, r->next, want);
		/*
		 * A live writer may be storing record c2 into slot c2 % capacity right now, and a
		 * writer killed there left it torn: that slot's older record is not trusted. Once
		 * the writer closed or froze the ring (flags published after its last append), it
		 * stores no record any more and every slot of the window is intact. The flags are
		 * read before committed: seen done, the committed read after them is final, and
		 * any store made while the slots were copied is older than c2 - capacity.
		 */
		/* The copies above complete before the loads below (seqlock reader side). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		done = writer_done(r);
		c2 = load_committed(r);
		if (c2 < r->end)
			return -EIO;
		if (done)
			safe_from = c2 >= r->capacity ? c2 - r->capacity : 0;
		else
			safe_from = c2 >= r->capacity ? c2 - r->capacity + 1 : 0;
		drop = safe_from > r->next ? safe_from - r->next : 0;
		if (drop >= want) {
			/* The whole chunk may be torn: skip it and retry from the safe point. */
			r->next = safe_from < r->end ? safe_from : r->end;
			continue;
		}
		if (drop)
			memmove(buf, buf + drop, (want - drop) * sizeof(*buf));
		*first_seq = r->next + drop;
		r->next += want;
		release_read(r);
		return (ssize_t)(want - drop);
	}
}

uint64_t ring_reader__lost(const struct ring_reader *r)
{
	return __atomic_load_n(&r->live->lost, __ATOMIC_ACQUIRE);
}

/* ---- random access to a live ring --------------------------------------------------------- */

uint64_t ring_reader__committed(const struct ring_reader *r)
{
	return load_committed(r);
}

bool ring_reader__replaced(const struct ring_reader *r)
{
	struct stat st;

	if (stat(r->path, &st) < 0)
		return false;
	return st.st_dev != r->dev || st.st_ino != r->ino;
}

/*
 * Whether the writer appends nothing for now: it closed or froze the ring, or the caller knows
 * it stopped (@stopped). A writer that is stopped says it records again before it appends
 * again (with a full fence), so a reader that finds it quiet before and after copying a slot,
 * with committed unchanged, copied a slot nobody was writing: the oldest one too.
 */
static bool quiet(const struct ring_reader *r, bool (*stopped)(void *ctx), void *ctx)
{
	bool q;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	q = writer_done(r) || (stopped && stopped(ctx));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return q;
}

/* The oldest record still intact when @end is committed, the writer @is_quiet or not. */
static uint64_t live_first(const struct ring_reader *r, uint64_t end, bool is_quiet)
{
	/* Unless quiet, the slot the writer stores next into is not trusted. */
	uint64_t room = is_quiet ? r->capacity : r->capacity - 1, f = 0;

	if (end > room)
		f = end - room;
	if (f < r->hdr.first_seq)
		f = r->hdr.first_seq; /* a resized ring: nothing before it */
	return f > end ? end : f;
}

void ring_reader__live_window(const struct ring_reader *r, bool (*stopped)(void *ctx),
			      void *ctx, uint64_t *first, uint64_t *end)
{
	bool q1, q2;
	uint64_t e;

	q1 = quiet(r, stopped, ctx);
	e = load_committed(r);
	q2 = quiet(r, stopped, ctx);
	*end = e;
	*first = live_first(r, e, q1 && q2 && load_committed(r) == e);
}

int ring_reader__get(const struct ring_reader *r, uint64_t seq, bool (*stopped)(void *ctx),
		     void *ctx, struct vbts_record *rec)
{
	bool q1, q2;
	uint64_t c1, c2;

	q1 = quiet(r, stopped, ctx);
	c1 = load_committed(r);
	if (seq >= c1)
		return -ENOENT;
	if (seq < live_first(r, c1, q1))
		return -ESTALE;
	copy_slots(r, rec, seq, 1);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	c2 = load_committed(r);
	q2 = quiet(r, stopped, ctx);
	if (seq < live_first(r, c2, q1 && q2 && c1 == c2))
		return -ESTALE;
	return 0;
}

const char *ring_reader__path(const struct ring_reader *r)
{
	return r->path;
}

void ring_reader__close(struct ring_reader *r)
{
	if (!r)
		return;
	munmap((void *)r->map, r->map_size);
	free(r->path);
	free(r);
}
