// SPDX-License-Identifier: GPL-2.0
/*
 * seg-reader.c - one vCPU's stream segments as a record stream: find them, check their
 * headers, decompress the closed ones, take the open one up to its committed whole records.
 *
 * Trust: a raw (open) segment gives min(committed, capacity, whole slots in the file)
 * records; committed is read with acquire ordering, as the writer publishes it after the
 * records' bytes. A compressed segment gives exactly `committed` records or none.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input-file.h"
#include "seg-codec.h"
#include "seg-reader.h"

#define HDR_OFF(field) ((unsigned int)__builtin_offsetof(struct vbts_seg_header, field))
/* The open segment's place in the index list: after every closed one. */
#define OPEN_INDEX SEG_READER_OPEN_INDEX
/* Listings of the directory again in one pass, at most, to follow a live writer. */
#define RELIST_MAX 64
/* zstd's own overhead on top of the transform, at most (frame header, blocks, checksum). */
#define FRAME_SLACK(n) ((n) / 64 + 1024)

struct seg_reader {
	char *dir;
	unsigned int vcpu;
	void (*warn)(void *ctx, const char *line);
	void *warn_ctx;
	uint64_t *index;        /* the segments' indices, ascending */
	size_t nr;
	size_t cur;             /* next segment to load */
	struct vbts_record *recs; /* the loaded segment's records */
	uint64_t nr_recs;
	uint64_t pos;           /* next of them to return */
	uint64_t recs_seq;      /* seq of recs[0] */
	uint64_t next_seq;      /* seq expected next */
	uint64_t first, end;    /* window */
	uint64_t vm_id;         /* the run's: every segment must say it */
	bool vm_id_set;
	uint64_t last_lost;     /* the last loaded segment's header lost */
	uint64_t lost_said;     /* LOST records read */
	bool frozen;
	unsigned int damaged;
	/* continuity, from one segment to the next (a pass from seg_reader__begin()) */
	bool have_prev;         /* a segment was there before this one */
	uint64_t prev_index;    /* its index */
	bool prev_good;         /* and it was read */
	bool ended;             /* a segment read says it is the vCPU's last (LAST or FROZEN) */
	uint64_t ended_index;
	uint32_t ended_flags;
	size_t said_upto;       /* segments whose problems were said (a later pass is quiet) */
	unsigned int relists;   /* of this pass: a live writer closed segments meanwhile */
	bool end_said;          /* the end's problem was said */
};

static void __attribute__((format(printf, 4, 5)))
set_err(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	n = snprintf(err, errlen, "%s: ", path);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void say(struct seg_reader *r, const char *line)
{
	r->damaged++;
	if (r->warn)
		r->warn(r->warn_ctx, line);
}

/* A problem of segment r->index[r->cur - 1]. */
static void damage(struct seg_reader *r, const char *line)
{
	/* a later pass over the same segments says nothing again */
	if (r->cur && r->cur <= r->said_upto)
		return;
	say(r, line);
}

/* A problem of the stream, said once (@once: its flag), or of the segment being read. */
static void __attribute__((format(printf, 3, 4))) damagef(struct seg_reader *r, bool *once,
							  const char *fmt, ...)
{
	char line[SEG_READER_ERR_MAX];
	va_list ap;

	if (once && *once)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (once) {
		*once = true;
		say(r, line);
	} else {
		damage(r, line);
	}
}

/* The index of a name "vcpuN.SSSSSSSS.vseg" of @vcpu, or -1. */
static int64_t name_index(const char *name, unsigned int vcpu)
{
	char prefix[32];
	size_t pl, i;
	int64_t v = 0;

	pl = (size_t)snprintf(prefix, sizeof(prefix), "vcpu%u.", vcpu);
	if (strncmp(name, prefix, pl))
		return -1;
	name += pl;
	if (!strcmp(name - 1, VBTS_SEG_OPEN_SUFFIX))
		return -2;
	for (i = 0; i < 8; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		v = v * 10 + (name[i] - '0');
	}
	return strcmp(name + 8, VBTS_SEG_SUFFIX) ? -1 : v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The segments of @vcpu in @dir: 0, -ENOENT (none), -E2BIG, -ENOMEM or -errno. */
static int list_segments(struct seg_reader *r)
{
	struct dirent *de;
	size_t cap = 0;
	DIR *d = opendir(r->dir);
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int64_t i = name_index(de->d_name, r->vcpu);

		if (i == -1)
			continue;
		if (r->nr == SEG_READER_MAX_SEGMENTS) {
			ret = -E2BIG;
			break;
		}
		if (r->nr == cap) {
			uint64_t *n;

			cap = cap ? cap * 2 : 16;
			n = realloc(r->index, cap * sizeof(*n));
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			r->index = n;
		}
		r->index[r->nr++] = i == -2 ? OPEN_INDEX : (uint64_t)i;
	}
	closedir(d);
	if (!ret && !r->nr)
		ret = -ENOENT;
	if (!ret)
		qsort(r->index, r->nr, sizeof(*r->index), cmp_u64);
	return ret;
}

bool seg_reader__exists(const char *dir, unsigned int vcpu)
{
	struct seg_reader r = { .dir = (char *)dir, .vcpu = vcpu };
	bool found = !list_segments(&r);

	free(r.index);
	return found;
}

int seg_reader__check_header(const struct vbts_seg_header *h, uint64_t size, uint64_t index,
			     unsigned int vcpu, const char *path, uint64_t *n, char *err,
			     size_t errlen)
{
	const uint32_t known = VBTS_SEG_F_CLOSED | VBTS_SEG_F_FROZEN | VBTS_SEG_F_LAST;
	uint64_t slots, end;

#define BAD(field, ...)                                                                      \
	do {                                                                                 \
		char what[256];                                                              \
		snprintf(what, sizeof(what), __VA_ARGS__);                                   \
		set_err(err, errlen, path, "offset 0x%x: %s", HDR_OFF(field), what);         \
		return -EINVAL;                                                              \
	} while (0)

	if (h->magic != VBTS_SEG_MAGIC)
		BAD(magic, "bad magic 0x%016" PRIx64 ", not a vbts segment file", h->magic);
	if (h->version != VBTS_SEG_VERSION)
		BAD(version, "unsupported segment version %u (this vbts reads version %u)",
		    h->version, VBTS_SEG_VERSION);
	if (h->header_size != VBTS_SEG_HEADER_SIZE)
		BAD(header_size, "header size %u, expected %u", h->header_size,
		    VBTS_SEG_HEADER_SIZE);
	if (h->record_size != sizeof(struct vbts_record))
		BAD(record_size, "record size %u, expected %zu", h->record_size,
		    sizeof(struct vbts_record));
	if (h->flags & ~known)
		BAD(flags, "unknown flags 0x%x", h->flags & ~known);
	if (h->vcpu_id != vcpu)
		BAD(vcpu_id, "vCPU %u in the file of vCPU %u", h->vcpu_id, vcpu);
	if (index != OPEN_INDEX && h->index != index)
		BAD(index, "segment %" PRIu64 " in the file of segment %" PRIu64, h->index, index);
	if (h->committed > VBTS_SEG_MAX_RECORDS || h->capacity > VBTS_SEG_MAX_RECORDS)
		BAD(committed, "%" PRIu64 " records of %" PRIu64 ", more than a segment holds (%llu)",
		    h->committed, h->capacity, VBTS_SEG_MAX_RECORDS);
	if (__builtin_add_overflow(h->first_seq, h->committed, &end))
		BAD(first_seq, "first seq %" PRIu64 " overflows", h->first_seq);
	switch (h->encoding) {
	case VBTS_SEG_ENC_RAW:
		if (h->payload_size)
			BAD(payload_size, "payload size %" PRIu64 " in a raw segment",
			    h->payload_size);
		slots = (size - VBTS_SEG_HEADER_SIZE) / sizeof(struct vbts_record);
		*n = h->committed;
		if (*n > h->capacity)
			BAD(committed, "committed %" PRIu64 " beyond the capacity %" PRIu64,
			    h->committed, h->capacity);
		if (*n > slots) {
			/* A truncated file: the whole records it holds, reported. */
			set_err(err, errlen, path, "offset 0x%" PRIx64 ": committed %" PRIu64
				" records, the file ends after %" PRIu64 " whole records",
				size, h->committed, slots);
			*n = slots;
			return -ERANGE;
		}
		return 0;
	case VBTS_SEG_ENC_ZSTD_DV1:
		if (h->committed != h->capacity)
			BAD(capacity, "capacity %" PRIu64 " differs from committed %" PRIu64
			    " in a closed segment", h->capacity, h->committed);
		if (h->payload_size != size - VBTS_SEG_HEADER_SIZE)
			BAD(payload_size, "payload size %" PRIu64 " in a file of %" PRIu64 " bytes",
			    h->payload_size, size);
		if (h->payload_size > h->committed * VBTS_SEG_DV1_MAX_BYTES +
				      FRAME_SLACK(h->committed * VBTS_SEG_DV1_MAX_BYTES))
			BAD(payload_size, "payload size %" PRIu64 " too large for %" PRIu64
			    " records", h->payload_size, h->committed);
		*n = h->committed;
		return 0;
	default:
		BAD(encoding, "unknown segment encoding %u", h->encoding);
	}
#undef BAD
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t k = pread(fd, p, len, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		p += k;
		len -= (size_t)k;
		off += k;
	}
	return 0;
}

/*
 * Loads segment r->index[i] once: 0 with r->recs set, or -errno after a damage line (the
 * segment is then skipped). @hdr_only: only check the header (for the window), setting *@h.
 * @retry: a raw closed segment that changed under the reader (the writer compressed it and
 * took its file's pages for a later segment) returns -EAGAIN without a word: its name gives
 * the compressed copy now.
 */
static int load_once(struct seg_reader *r, size_t i, bool hdr_only, struct vbts_seg_header *h,
		     bool retry)
{
	char name[64], path[4096], err[SEG_READER_ERR_MAX], why[SEG_READER_ERR_MAX + 32];
	struct vbts_record *recs = NULL;
	uint64_t n = 0;
	struct stat st;
	void *frame;
	int fd, ret;

	if (r->index[i] == OPEN_INDEX)
		snprintf(name, sizeof(name), "vcpu%u%s", r->vcpu, VBTS_SEG_OPEN_SUFFIX);
	else
		snprintf(name, sizeof(name), "vcpu%u.%08" PRIu64 "%s", r->vcpu, r->index[i],
			 VBTS_SEG_SUFFIX);
	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	fd = input_file__open(path, UINT64_MAX, &st, err, sizeof(err));
	if (fd < 0) {
		/* the open segment of a live writer that closed it since: its records are closed */
		if (!hdr_only && !(fd == -ENOENT && r->index[i] == OPEN_INDEX))
			damage(r, err);
		return fd;
	}
	if ((uint64_t)st.st_size < VBTS_SEG_HEADER_SIZE) {
		set_err(err, sizeof(err), path, "offset 0x%llx: file ends inside the %u-byte header",
			(unsigned long long)st.st_size, VBTS_SEG_HEADER_SIZE);
		ret = -EINVAL;
		goto out_damage;
	}
	ret = read_at(fd, h, sizeof(*h), 0);
	if (ret) {
		set_err(err, sizeof(err), path, "%s", strerror(-ret));
		goto out_damage;
	}
	ret = seg_reader__check_header(h, (uint64_t)st.st_size, r->index[i], r->vcpu, path, &n,
				       err, sizeof(err));
	if (ret && retry && r->index[i] != OPEN_INDEX && h->encoding == VBTS_SEG_ENC_RAW) {
		ret = -EAGAIN;
		goto out_retry;
	}
	if (ret == -ERANGE) {
		/* truncated raw segment: its whole records are read, the rest said */
		if (!hdr_only) {
			snprintf(why, sizeof(why), "%s; reading those", err);
			damage(r, why);
		}
		ret = 0;
		h->committed = n;
	}
	/* every segment of the stream is the run's: no other run's, and no run writes 0 */
	if (!ret && !h->vm_id) {
		set_err(err, sizeof(err), path, "offset 0x20: vm_id 0, which no run writes");
		ret = -EINVAL;
	} else if (!ret && r->vm_id_set && h->vm_id != r->vm_id) {
		set_err(err, sizeof(err), path, "offset 0x20: vm_id 0x%" PRIx64 " of another run "
			"(this trace's is 0x%" PRIx64 ")", h->vm_id, r->vm_id);
		ret = -EINVAL;
	}
	if (ret)
		goto out_damage;
	if (hdr_only)
		goto out;
	recs = malloc(n ? n * sizeof(*recs) : 1);
	if (!recs) {
		ret = -ENOMEM;
		set_err(err, sizeof(err), path, "out of memory");
		goto out_damage;
	}
	if (h->encoding == VBTS_SEG_ENC_RAW) {
		struct vbts_seg_header again;

		ret = read_at(fd, recs, n * sizeof(*recs), VBTS_SEG_HEADER_SIZE);
		if (ret)
			set_err(err, sizeof(err), path, "%s", strerror(-ret));
		/*
		 * A live open segment the writer started over while its records were copied:
		 * they are in a closed segment now (found by the next reading of the trace).
		 */
		if (!ret && r->index[i] == OPEN_INDEX &&
		    (read_at(fd, &again, sizeof(again), 0) || again.index != h->index ||
		     again.first_seq != h->first_seq || again.committed < h->committed))
			n = 0;
		/* A raw closed segment whose pages the writer took for a later segment. */
		if (!ret && retry && r->index[i] != OPEN_INDEX &&
		    (read_at(fd, &again, sizeof(again), 0) || again.index != h->index ||
		     again.first_seq != h->first_seq || again.committed < h->committed)) {
			ret = -EAGAIN;
			goto out_retry;
		}
	} else {
		free(recs);
		recs = NULL;
		frame = malloc(h->payload_size ? h->payload_size : 1);
		if (!frame) {
			ret = -ENOMEM;
			set_err(err, sizeof(err), path, "out of memory");
			goto out_damage;
		}
		ret = read_at(fd, frame, h->payload_size, VBTS_SEG_HEADER_SIZE);
		if (ret) {
			set_err(err, sizeof(err), path, "%s", strerror(-ret));
		} else {
			ret = seg_codec__decompress(frame, h->payload_size, n, &recs, why,
						    sizeof(why));
			if (ret)
				set_err(err, sizeof(err), path, "offset 0x%x: %s",
					VBTS_SEG_HEADER_SIZE, why);
		}
		free(frame);
	}
	if (ret)
		goto out_damage;
	free(r->recs);
	r->recs = recs;
	r->nr_recs = n;
	r->pos = 0;
	r->recs_seq = h->first_seq;
	r->last_lost = h->lost;
	r->frozen = h->flags & VBTS_SEG_F_FROZEN;
out:
	close(fd);
	return 0;

out_damage:
	close(fd);
	free(recs);
	if (!hdr_only) {
		snprintf(why, sizeof(why), "%s; segment skipped", err);
		damage(r, why);
	}
	return ret;

out_retry:
	close(fd);
	free(recs);
	return ret;
}

/* load_once(), again (at most 3 times) while a raw closed segment changes under it. */
static int load(struct seg_reader *r, size_t i, bool hdr_only, struct vbts_seg_header *h)
{
	int ret, tries = 0;

	do
		ret = load_once(r, i, hdr_only, h, ++tries < 3);
	while (ret == -EAGAIN && tries < 3);
	return ret;
}

/*
 * Whether segment @i is the open segment and its records were already written as a closed
 * segment (the writer was stopped between the two steps of starting it over).
 */
static bool superseded(const struct seg_reader *r, size_t i, const struct vbts_seg_header *h)
{
	return r->index[i] == OPEN_INDEX && i > 0 && r->index[i - 1] >= h->index;
}

/*
 * The window: the first and the last segment whose header is good (and the run's: without a
 * vm_id given, the first good segment's is the run's). Returns whether there is one.
 */
static bool find_window(struct seg_reader *r)
{
	struct vbts_seg_header h;
	bool any = false;

	r->first = r->end = 0;
	for (size_t i = 0; i < r->nr; i++) {
		if (load(r, i, true, &h) || superseded(r, i, &h))
			continue;
		if (!any)
			r->first = h.first_seq;
		if (!r->vm_id_set)
			r->vm_id = h.vm_id, r->vm_id_set = true;
		any = true;
		r->end = h.first_seq + h.committed;
	}
	return any;
}

struct seg_reader *seg_reader__open(const char *dir, unsigned int vcpu,
				    void (*warn)(void *ctx, const char *line), void *warn_ctx,
				    char *err, size_t errlen)
{
	struct vbts_seg_header h;
	struct seg_reader *r;
	bool any = false;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r || !(r->dir = strdup(dir))) {
		free(r);
		snprintf(err, errlen, "%s: out of memory", dir);
		errno = ENOMEM;
		return NULL;
	}
	r->vcpu = vcpu;
	r->warn = warn;
	r->warn_ctx = warn_ctx;
	ret = list_segments(r);
	if (ret) {
		if (ret == -E2BIG)
			snprintf(err, errlen, "%s: more than %u segments of vCPU %u", dir,
				 SEG_READER_MAX_SEGMENTS, vcpu);
		else
			snprintf(err, errlen, "%s: no segment of vCPU %u: %s", dir, vcpu,
				 strerror(-ret));
		seg_reader__close(r);
		errno = ret == -E2BIG ? EINVAL : -ret;
		return NULL;
	}
	any = find_window(r);
	if (!any) {
		/* Say why through the first segment. */
		char line[SEG_READER_ERR_MAX] = "";
		void (*w)(void *, const char *) = r->warn;

		r->warn = NULL;
		load(r, 0, false, &h);
		r->warn = w;
		snprintf(line, sizeof(line), "%s: no readable segment of vCPU %u", dir, vcpu);
		snprintf(err, errlen, "%s", line);
		seg_reader__close(r);
		errno = EINVAL;
		return NULL;
	}
	seg_reader__begin(r);
	return r;
}

uint64_t seg_reader__vm_id(const struct seg_reader *r)
{
	return r->vm_id;
}

int seg_reader__set_vm_id(struct seg_reader *r, uint64_t vm_id)
{
	bool any;

	r->vm_id = vm_id;
	r->vm_id_set = true;
	any = find_window(r);
	seg_reader__begin(r);
	return any ? 0 : -ENOENT;
}

int seg_reader__begin(struct seg_reader *r)
{
	free(r->recs);
	r->recs = NULL;
	r->nr_recs = 0;
	r->pos = 0;
	r->cur = 0;
	r->next_seq = r->first;
	r->lost_said = 0;
	r->last_lost = 0;
	r->frozen = false;
	r->have_prev = r->prev_good = r->ended = false;
	r->relists = 0;
	return 0;
}

void seg_reader__window(const struct seg_reader *r, uint64_t *first, uint64_t *end)
{
	*first = r->first;
	*end = r->end;
}

/* The name of segment @i, for a message. */
static void seg_name(const struct seg_reader *r, uint64_t index, char *buf, size_t len)
{
	if (index == OPEN_INDEX)
		snprintf(buf, len, "vcpu%u%s", r->vcpu, VBTS_SEG_OPEN_SUFFIX);
	else
		snprintf(buf, len, "vcpu%u.%08" PRIu64 "%s", r->vcpu, index, VBTS_SEG_SUFFIX);
}

/*
 * The segments after one that says it is the vCPU's last (LAST, or FROZEN: nothing follows
 * a freeze): said in one line, none of them read. An open segment of the last one's index
 * (the writer stopped between closing it and removing the open name) is no segment after it.
 */
static void refuse_after_end(struct seg_reader *r)
{
	struct vbts_seg_header h;
	unsigned int n = 0;
	uint64_t first = OPEN_INDEX;
	char name[64];

	for (size_t i = r->cur; i < r->nr; i++) {
		if (r->index[i] == OPEN_INDEX) {
			if (load(r, i, true, &h) == 0 && h.index <= r->ended_index)
				continue;
		}
		if (!n++)
			first = r->index[i];
	}
	r->cur = r->nr;
	r->nr_recs = r->pos = 0;
	if (!n)
		return;
	seg_name(r, first, name, sizeof(name));
	damagef(r, &r->end_said,
		"%s/vcpu%u: %u segment%s after segment %" PRIu64 ", which says it is the last "
		"(flags 0x%x), not read: %s and on", r->dir, r->vcpu, n, n == 1 ? "" : "s",
		r->ended_index, r->ended_flags, name);
}

/*
 * Segment r->index[r->cur - 1], loaded into @h, against the one before it: removed segments
 * between them (only the oldest may be removed), records skipped by its first seq. Returns
 * whether it is read (false: skipped, said).
 */
static bool follows(struct seg_reader *r, const struct vbts_seg_header *h)
{
	uint64_t index = h->index;
	char name[64];

	if (h->first_seq < r->next_seq) {
		damagef(r, NULL, "%s/vcpu%u segment %" PRIu64 ": offset 0x%x: first seq %" PRIu64
			" overlaps the segment before; segment skipped", r->dir, r->vcpu, index,
			HDR_OFF(first_seq), h->first_seq);
		return false;
	}
	if (r->have_prev && index > r->prev_index + 1) {
		if (index == r->prev_index + 2)
			damagef(r, NULL,
				"%s/vcpu%u: segment %" PRIu64 " missing: records %" PRIu64 " to %"
				PRIu64 " are not in the trace", r->dir, r->vcpu, index - 1,
				r->next_seq, h->first_seq - 1);
		else
			damagef(r, NULL,
				"%s/vcpu%u: segments %" PRIu64 " to %" PRIu64 " missing: records %"
				PRIu64 " to %" PRIu64 " are not in the trace", r->dir, r->vcpu,
				r->prev_index + 1, index - 1, r->next_seq, h->first_seq - 1);
	} else if (r->prev_good && index == r->prev_index + 1 && h->first_seq > r->next_seq) {
		seg_name(r, r->index[r->cur - 1], name, sizeof(name));
		damagef(r, NULL,
			"%s/%s: offset 0x%x: first seq %" PRIu64 ", the segment before ends at %"
			PRIu64 ": records %" PRIu64 " to %" PRIu64 " are not in the trace", r->dir,
			name, HDR_OFF(first_seq), h->first_seq, r->next_seq, r->next_seq,
			h->first_seq - 1);
	}
	return true;
}

/* Whether closed segment @index is there now. */
static bool closed_exists(const struct seg_reader *r, uint64_t index)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/vcpu%u.%08" PRIu64 "%s", r->dir, r->vcpu, index,
		 VBTS_SEG_SUFFIX);
	return !lstat(path, &st);
}

/*
 * Segments listed since: list them again and go on after segment @after. Returns whether there
 * are closed segments after it and before segment @before now (at most RELIST_MAX times a pass).
 */
static bool relist(struct seg_reader *r, uint64_t after, uint64_t before)
{
	struct seg_reader now = { .dir = r->dir, .vcpu = r->vcpu };
	size_t j = 0;

	if (r->relists >= RELIST_MAX || list_segments(&now))
		goto out_keep;
	while (j < now.nr && now.index[j] <= after)
		j++;
	if (j == now.nr || now.index[j] == OPEN_INDEX || now.index[j] >= before)
		goto out_keep;
	free(r->index);
	r->index = now.index;
	r->nr = now.nr;
	r->cur = j;
	r->relists++;
	return true;

out_keep:
	free(now.index);
	return false;
}

/* The end of the vCPU's segments: the newest one read must say it is the last, or be open. */
static void check_end(struct seg_reader *r)
{
	if (!r->prev_good || r->ended || r->index[r->nr - 1] == OPEN_INDEX)
		return;
	damagef(r, &r->end_said,
		"%s/vcpu%u: segment %" PRIu64 " is the newest and not the last: the segments "
		"after it are missing", r->dir, r->vcpu, r->prev_index);
	r->prev_good = false;
}

ssize_t seg_reader__read(struct seg_reader *r, struct vbts_record *buf, size_t max,
			 uint64_t *first_seq)
{
	struct vbts_seg_header h;
	uint64_t k;
	size_t i;

	if (!max)
		return 0;
	while (r->pos == r->nr_recs) {
		if (r->cur > r->said_upto)
			r->said_upto = r->cur;
		if (r->cur == r->nr) {
			check_end(r);
			return 0;
		}
		if (r->ended) {
			refuse_after_end(r);
			continue;
		}
		i = r->cur++;
		if (load(r, i, false, &h)) {
			/* damaged, said: not missing */
			if (r->index[i] != OPEN_INDEX)
				r->have_prev = true, r->prev_index = r->index[i];
			r->prev_good = false;
			continue;
		}
		if (superseded(r, i, &h)) {
			r->nr_recs = r->pos = 0;
			continue;
		}
		/*
		 * A segment after a hole that is there now: a live writer closed it after the
		 * listing, or renamed its compressed copy over it while the directory was read
		 * (readdir(3) may then miss the name). Not missing: listed again and read.
		 */
		if (r->have_prev && h.index > r->prev_index + 1 &&
		    closed_exists(r, r->prev_index + 1)) {
			if (relist(r, r->prev_index, h.index)) {
				r->nr_recs = r->pos = 0;
				continue;
			}
			r->have_prev = false; /* relisted too often: not said either */
		}
		if (!follows(r, &h)) {
			r->nr_recs = r->pos = 0;
			r->have_prev = true, r->prev_index = h.index, r->prev_good = false;
			continue;
		}
		r->have_prev = r->prev_good = true;
		r->prev_index = h.index;
		r->next_seq = h.first_seq + r->nr_recs;
		if (h.flags & (VBTS_SEG_F_LAST | VBTS_SEG_F_FROZEN)) {
			r->ended = true;
			r->ended_index = h.index;
			r->ended_flags = h.flags;
		}
	}
	if (r->cur > r->said_upto)
		r->said_upto = r->cur;
	k = r->nr_recs - r->pos;
	if (k > max)
		k = max;
	memcpy(buf, &r->recs[r->pos], k * sizeof(*buf));
	for (uint64_t j = 0; j < k; j++)
		if (buf[j].from == VBTS_ESCAPE &&
		    vbts_record__escape_kind(&buf[j]) == VBTS_ESC_LOST)
			r->lost_said += buf[j].to;
	*first_seq = r->recs_seq + r->pos;
	r->pos += k;
	r->next_seq = *first_seq + k;
	return (ssize_t)k;
}

uint64_t seg_reader__dropped_at_end(const struct seg_reader *r)
{
	if (!r->frozen || r->last_lost <= r->lost_said)
		return 0;
	return r->last_lost - r->lost_said;
}

unsigned int seg_reader__damaged(const struct seg_reader *r)
{
	return r->damaged;
}

void seg_reader__close(struct seg_reader *r)
{
	if (!r)
		return;
	free(r->recs);
	free(r->index);
	free(r->dir);
	free(r);
}
