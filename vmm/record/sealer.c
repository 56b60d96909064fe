// SPDX-License-Identifier: GPL-2.0
/*
 * sealer.c - seal a trace directory as it is written: leaves into seal.log, signed
 * checkpoints of their Merkle tree.
 *
 * Locks: s->lock orders every scan and checkpoint (the sealer thread's and the callers' of
 * sealer__checkpoint() and sealer__finish()); everything in struct sealer but @stop is under it.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <vbts/ring-format.h>
#include <vbts/segment-format.h>

#include "errmsg.h"
#include "log.h"
#include "seal-hash.h"
#include "seal-key.h"
#include "sealer.h"
#include "fd-io.h"

/* How deep and how many files a trace directory may hold for the sealer (debuginfod/ID/x). */
#define SEALER_MAX_DEPTH 4
#define SEALER_MAX_FILES 1000000
#define SEALER_POLL_MS 200
/* Closed segments the collectors told of and the thread has not hashed yet. */
#define SEALER_QUEUE 64
#define SEALER_QUEUE_NAME 48

/*
 * struct sfile - what the sealer knows of one file of the trace.
 * @name:       its path in the trace directory
 * @ino, @size, @mtime_ns, @ctime_ns: its stat when last sealed (a WHOLE file is hashed again
 *              only when one of them changed)
 * @end:        bytes sealed (an appended file: the next leaf starts there)
 * @hash:       the content hash of the last WHOLE leaf
 * @sealed:     a leaf covers it
 * @live:       that leaf has VBTS_SEAL_LEAF_F_LIVE
 */
struct sfile {
	char *name;
	uint64_t ino, size;
	int64_t mtime_ns, ctime_ns;
	uint64_t end;
	uint8_t hash[VBTS_SEAL_HASH_SIZE];
	bool sealed;
	bool live;
};

struct sealer {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool thread_started;
	bool stop; /* under @lock */
	int dirfd;
	int logfd;
	char dir[4096];
	struct seal_key *key;
	uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE];
	struct seal_range range; /* the tree of the leaves written */
	uint64_t seq; /* next checkpoint's */
	uint8_t prev[VBTS_SEAL_HASH_SIZE];
	uint64_t last_cp_ns; /* CLOCK_MONOTONIC of the last checkpoint */
	uint64_t interval_ns;
	struct sfile *files;
	size_t nr_files, cap_files;
	uint32_t *index; /* open addressing over @files, 0 empty, else i + 1 */
	size_t index_cap;
	int error; /* the first -errno */
	bool reported; /* @error was written on stderr */
	char errmsg[512]; /* the last failure */
	bool leaves_since_cp; /* leaves added after the last checkpoint, outside a scan */
	uint64_t last_poll_ns;
	/* sealer__segment_closed()'s queue, under @qlock only */
	pthread_mutex_t qlock;
	char queue[SEALER_QUEUE][SEALER_QUEUE_NAME];
	unsigned int nr_queued;
	uint8_t buf[1 << 20]; /* file reads */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void fail(struct sealer *s, int err, const char *what)
{
	snprintf(s->errmsg, sizeof(s->errmsg), "%s", what);
	if (!s->error)
		s->error = err;
	if (!s->reported) {
		pr_err("sealing %s: %s", s->dir, what);
		s->reported = true;
	}
}

/* ---- the file table --------------------------------------------------------------------- */

static uint32_t name_hash(const char *n)
{
	uint32_t h = 2166136261u;

	while (*n)
		h = (h ^ (unsigned char)*n++) * 16777619u;
	return h;
}

static int index_grow(struct sealer *s)
{
	size_t cap = s->index_cap ? s->index_cap * 2 : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_files; i++) {
		size_t p = name_hash(s->files[i].name) & (cap - 1);

		while (idx[p])
			p = (p + 1) & (cap - 1);
		idx[p] = i + 1;
	}
	free(s->index);
	s->index = idx;
	s->index_cap = cap;
	return 0;
}

/* The entry of @name, made when missing (NULL: out of memory or too many files). */
static struct sfile *file_get(struct sealer *s, const char *name)
{
	size_t p;

	if (s->index_cap) {
		for (p = name_hash(name) & (s->index_cap - 1); s->index[p];
		     p = (p + 1) & (s->index_cap - 1))
			if (!strcmp(s->files[s->index[p] - 1].name, name))
				return &s->files[s->index[p] - 1];
	}
	if (s->nr_files >= SEALER_MAX_FILES)
		return NULL;
	if ((s->nr_files + 1) * 2 > s->index_cap && index_grow(s) < 0)
		return NULL;
	if (s->nr_files == s->cap_files) {
		size_t cap = s->cap_files ? s->cap_files * 2 : 64;
		struct sfile *f = realloc(s->files, cap * sizeof(*f));

		if (!f)
			return NULL;
		s->files = f;
		s->cap_files = cap;
	}
	memset(&s->files[s->nr_files], 0, sizeof(s->files[0]));
	s->files[s->nr_files].name = strdup(name);
	if (!s->files[s->nr_files].name)
		return NULL;
	for (p = name_hash(name) & (s->index_cap - 1); s->index[p];
	     p = (p + 1) & (s->index_cap - 1))
		;
	s->index[p] = ++s->nr_files;
	return &s->files[s->nr_files - 1];
}

/* ---- what a file is --------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A closed segment's name, vcpuN.SSSSSSSS.vseg (seal-format's writer, segment-format.h). */
static bool closed_segment_name(const char *n)
{
	const char *p;

	if (strncmp(n, "vcpu", 4) || !ends_with(n, VBTS_SEG_SUFFIX))
		return false;
	p = n + 4;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != '.')
		return false;
	for (int i = 0; i < 8; i++, p++)
		if (*p < '0' || *p > '9')
			return false;
	return !strcmp(p, VBTS_SEG_SUFFIX);
}

static bool crash_report_name(const char *n)
{
	return !strncmp(n, "crash", 5) && ends_with(n, ".json");
}

/* enum scan_mode: what a checkpoint seals. */
enum scan_mode {
	SCAN_RUNNING, /* closed segments in their final form, everything but the rings */
	SCAN_FREEZE, /* and the rings and other segments as they are now (may change) */
	SCAN_END, /* everything, as the run left it */
};

/*
 * Files the sealer leaves alone while the run goes on: its own log, files being written under
 * a temporary name (x.tmp, crash.json.tmp.sym, vcpu0.ring.resize), the open segment (written
 * in place; its records are sealed when it is closed). At the end everything left is sealed.
 */
static bool skipped_name(const char *n, int depth, enum scan_mode mode)
{
	if (!depth && !strcmp(n, VBTS_SEAL_LOG_NAME))
		return true;
	if (mode == SCAN_END)
		return false;
	return strstr(n, ".tmp") || ends_with(n, ".resize") || ends_with(n, VBTS_SEG_OPEN_SUFFIX);
}

/* Whether a closed segment is in its final form: compressed, or raw of exactly its records
 * (segment-format.h: the former open file, raw with spare slots, is replaced later). */
static bool segment_final(int fd)
{
	struct vbts_seg_header h;

	if (pread(fd, &h, sizeof(h), 0) != sizeof(h) || h.magic != VBTS_SEG_MAGIC)
		return false;
	return h.encoding == VBTS_SEG_ENC_ZSTD_DV1 ||
	       (h.encoding == VBTS_SEG_ENC_RAW && h.capacity == h.committed);
}

/*
 * Whether a ring file (wrap mode) is frozen: a crash or an operator's freeze set its header's
 * flag, after which its writer appends nothing more (ring-format.h). A frozen ring is sealed
 * as it is, as final: a later difference is tampering, not an unsealed change.
 */
static bool ring_frozen(int fd)
{
	uint64_t magic;
	uint32_t flags;

	if (pread(fd, &magic, sizeof(magic), 0) != sizeof(magic) || magic != VBTS_RING_MAGIC)
		return false;
	if (pread(fd, &flags, sizeof(flags), offsetof(struct vbts_ring_header, flags)) !=
	    sizeof(flags))
		return false;
	return flags & VBTS_RING_F_FROZEN;
}

/* ---- leaves and checkpoints ------------------------------------------------------------- */

static int add_leaf(struct sealer *s, const char *name, unsigned int kind, unsigned int flags,
		    uint64_t off, uint64_t len, const uint8_t hash[VBTS_SEAL_HASH_SIZE])
{
	uint8_t rec[VBTS_SEAL_REC_MAX], lh[VBTS_SEAL_HASH_SIZE];
	struct vbts_seal_rec *head = (void *)rec;
	struct vbts_seal_leaf *l = (void *)(rec + sizeof(*head));
	size_t nlen = strlen(name), size;
	int ret;

	if (!nlen || nlen > VBTS_SEAL_NAME_MAX)
		return -ENAMETOOLONG;
	size = (sizeof(*head) + sizeof(*l) + nlen + 7) & ~(size_t)7;
	memset(rec, 0, size);
	head->type = VBTS_SEAL_REC_LEAF;
	head->size = size;
	l->index = s->range.size;
	l->offset = off;
	l->length = len;
	l->kind = kind;
	l->flags = flags;
	l->name_len = nlen;
	memcpy(l->hash, hash, VBTS_SEAL_HASH_SIZE);
	memcpy(rec + sizeof(*head) + sizeof(*l), name, nlen);
	ret = fd__write_all(s->logfd, rec, size);
	if (ret < 0)
		return ret;
	seal_hash__leaf(lh, s->trace_id, l, name);
	seal_range__append(&s->range, lh);
	return 0;
}

static int64_t ts_ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

static bool stat_same(const struct sfile *f, const struct stat *st)
{
	return f->ino == st->st_ino && f->size == (uint64_t)st->st_size &&
	       f->mtime_ns == ts_ns(&st->st_mtim) && f->ctime_ns == ts_ns(&st->st_ctim);
}

static void stat_keep(struct sfile *f, const struct stat *st)
{
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime_ns = ts_ns(&st->st_mtim);
	f->ctime_ns = ts_ns(&st->st_ctim);
}

/* Seal one regular file @name (open as @fd) as @mode says. */
static int seal_file(struct sealer *s, const char *name, const char *base, int depth, int fd,
		     const struct stat *st, enum scan_mode mode)
{
	uint8_t h[VBTS_SEAL_HASH_SIZE];
	bool ring = !depth && ends_with(base, ".ring");
	bool seg = !depth && closed_segment_name(base);
	bool frozen = ring && ring_frozen(fd);
	bool live = false;
	struct sfile *f;
	int64_t n;
	int ret;

	if (ring && mode == SCAN_RUNNING && !frozen)
		return 0;
	if (seg && mode != SCAN_END && !segment_final(fd)) {
		if (mode == SCAN_RUNNING)
			return 0;
		live = true;
	}
	if (ring && mode != SCAN_END && !frozen)
		live = true;
	/* vm.json and crash reports are rewritten whole by the run (a member added, symbols). */
	if (mode != SCAN_END && !depth && (!strcmp(base, "vm.json") || crash_report_name(base)))
		live = true;
	f = file_get(s, name);
	if (!f)
		return -ENOMEM;
	if (f->sealed && stat_same(f, st) && !(f->live && !live))
		return 0;
	if (!depth && !strcmp(base, "events.jsonl") && (uint64_t)st->st_size >= f->end &&
	    (!f->sealed || f->ino == st->st_ino)) {
		/* Appended only: seal the new bytes. */
		if ((uint64_t)st->st_size == f->end && f->sealed) {
			stat_keep(f, st);
			return 0;
		}
		n = seal_hash__file_range(fd, f->end, st->st_size - f->end, s->buf, sizeof(s->buf), h);
		if (n < 0)
			return n;
		if (!n && f->sealed)
			return 0;
		ret = add_leaf(s, name, VBTS_SEAL_LEAF_APPEND, 0, f->end, n, h);
		if (ret < 0)
			return ret;
		f->end += n;
		f->sealed = true;
		f->live = false;
		stat_keep(f, st);
		return 0;
	}
	n = seal_hash__file_range(fd, 0, UINT64_MAX, s->buf, sizeof(s->buf), h);
	if (n < 0)
		return n;
	if (f->sealed && (uint64_t)n == f->end && !memcmp(h, f->hash, sizeof(h)) &&
	    !(f->live && !live)) {
		stat_keep(f, st);
		return 0;
	}
	ret = add_leaf(s, name, VBTS_SEAL_LEAF_WHOLE, live ? VBTS_SEAL_LEAF_F_LIVE : 0, 0, n, h);
	if (ret < 0)
		return ret;
	memcpy(f->hash, h, sizeof(h));
	f->end = n;
	f->sealed = true;
	f->live = live;
	stat_keep(f, st);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Seal the files of directory @rel (open as @dfd; "" the trace directory), in name order. */
static int scan_dir(struct sealer *s, int dfd, const char *rel, int depth, enum scan_mode mode)
{
	char **names = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    skipped_name(de->d_name, depth, mode))
			continue;
		if (nr == cap) {
			char **n = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*n));

			if (!n) {
				ret = -ENOMEM;
				goto out;
			}
			names = n;
		}
		names[nr] = strdup(de->d_name);
		if (!names[nr]) {
			ret = -ENOMEM;
			goto out;
		}
		nr++;
	}
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nr && !ret; i++) {
		char name[VBTS_SEAL_NAME_MAX + 1];
		struct stat st;
		int fd;

		if ((size_t)snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "",
				     names[i]) >= sizeof(name))
			continue; /* not sealable: verify reports it as not covered */
		if (!depth && closed_segment_name(names[i])) {
			/* A segment sealed in its final form, unchanged: no need to open it. */
			struct sfile *f = file_get(s, name);

			if (f && f->sealed && !f->live &&
			    fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISREG(st.st_mode) && stat_same(f, &st))
				continue;
		}
		fd = openat(dirfd(d), names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue; /* gone, or a symbolic link: verify reports what is left */
		if (fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth + 1 < SEALER_MAX_DEPTH)
				ret = scan_dir(s, fd, name, depth + 1, mode);
			else
				close(fd);
			continue;
		}
		if (S_ISREG(st.st_mode))
			ret = seal_file(s, name, names[i], depth, fd, &st, mode);
		close(fd);
	}
out:
	for (size_t i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

static int checkpoint(struct sealer *s, unsigned int reason)
{
	uint8_t rec[sizeof(struct vbts_seal_rec) + sizeof(struct vbts_seal_checkpoint) +
		    VBTS_SEAL_MAX_LOG2_EPOCHS * VBTS_SEAL_HASH_SIZE];
	struct vbts_seal_rec *head = (void *)rec;
	struct vbts_seal_checkpoint *cp = (void *)(rec + sizeof(*head));
	uint8_t(*path)[VBTS_SEAL_HASH_SIZE] = (void *)(cp + 1);
	enum scan_mode mode = reason == VBTS_SEAL_REASON_END   ? SCAN_END :
			      reason == VBTS_SEAL_REASON_CRASH ? SCAN_FREEZE :
								 SCAN_RUNNING;
	char err[512];
	int dfd, ret;

	dfd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		fail(s, ret, strerror(-ret));
		return ret;
	}
	ret = scan_dir(s, dfd, "", 0, mode);
	if (ret < 0) {
		fail(s, ret, strerror(-ret));
		return ret;
	}
	memset(rec, 0, sizeof(rec));
	head->type = VBTS_SEAL_REC_CHECKPOINT;
	cp->seq = s->seq;
	cp->tree_size = s->range.size;
	cp->time_ns = real_ns();
	cp->reason = reason;
	memcpy(cp->trace_id, s->trace_id, sizeof(cp->trace_id));
	seal_range__root(&s->range, cp->root);
	memcpy(cp->prev, s->prev, sizeof(cp->prev));
	ret = seal_key__sign(s->key, cp, path, err, sizeof(err));
	if (ret < 0) {
		fail(s, ret, err);
		return ret;
	}
	head->size = sizeof(*head) + sizeof(*cp) + cp->path_len * VBTS_SEAL_HASH_SIZE;
	ret = fd__write_all(s->logfd, rec, head->size);
	if (!ret && fdatasync(s->logfd) < 0)
		ret = -errno;
	if (ret < 0) {
		fail(s, ret, strerror(-ret));
		return ret;
	}
	seal_hash__checkpoint(s->prev, cp);
	s->leaves_since_cp = false;
	s->seq++;
	s->last_cp_ns = mono_ns();
	return 0;
}

/* What the poll found: a segment closed (in its final form), a crash report new or changed, a
 * ring frozen and not yet sealed as such. */
#define POLL_SEGMENT 1
#define POLL_CRASH 2
#define POLL_FREEZE 4

static int poll_dir(struct sealer *s)
{
	int found = 0, dfd;
	struct dirent *de;
	DIR *d;

	dfd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		bool seg = closed_segment_name(de->d_name);
		bool crash = crash_report_name(de->d_name);
		bool ring = ends_with(de->d_name, ".ring");
		struct sfile *f;
		struct stat st;
		int fd;

		if (!seg && !crash && !ring)
			continue;
		f = file_get(s, de->d_name);
		if (!f || ((seg || ring) && f->sealed && !f->live))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			if (seg && segment_final(fd))
				found |= POLL_SEGMENT;
			else if (crash && !(f->sealed && stat_same(f, &st)))
				found |= POLL_CRASH;
			else if (ring && ring_frozen(fd))
				found |= POLL_FREEZE;
		}
		close(fd);
	}
	closedir(d);
	return found;
}

void sealer__segment_closed(void *ctx, const char *name)
{
	struct sealer *s = ctx;
	size_t len = strlen(name);

	pthread_mutex_lock(&s->qlock);
	if (s->nr_queued < SEALER_QUEUE && len < SEALER_QUEUE_NAME)
		memcpy(s->queue[s->nr_queued++], name, len + 1);
	pthread_mutex_unlock(&s->qlock);
	/* A sealer at work looks at the queue before it waits again. */
	if (pthread_mutex_trylock(&s->lock) == 0) {
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
	}
}

static unsigned int queued(struct sealer *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->qlock);
	n = s->nr_queued;
	pthread_mutex_unlock(&s->qlock);
	return n;
}

/* Hash the closed segments the collectors told of: leaves now, the checkpoint later. */
static void seal_queued(struct sealer *s)
{
	char names[SEALER_QUEUE][SEALER_QUEUE_NAME];
	unsigned int n;

	pthread_mutex_lock(&s->qlock);
	n = s->nr_queued;
	memcpy(names, s->queue, n * sizeof(names[0]));
	s->nr_queued = 0;
	pthread_mutex_unlock(&s->qlock);
	for (unsigned int i = 0; i < n && !s->error; i++) {
		struct stat st;
		int fd, ret;

		if (!closed_segment_name(names[i]))
			continue;
		fd = openat(s->dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue; /* gone (rotated away): the next checkpoint's scan sees that */
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			uint64_t leaves = s->range.size;

			ret = seal_file(s, names[i], names[i], 0, fd, &st, SCAN_RUNNING);
			if (ret < 0)
				fail(s, ret, strerror(-ret));
			else if (s->range.size != leaves)
				s->leaves_since_cp = true;
		}
		close(fd);
	}
}

static void *sealer_thread(void *arg)
{
	struct sealer *s = arg;
	struct timespec until;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		uint64_t now;
		int found = 0;

		if (!queued(s)) {
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_nsec += SEALER_POLL_MS * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&s->wake, &s->lock, &until);
			if (s->stop)
				break;
		}
		seal_queued(s);
		now = mono_ns();
		if (now - s->last_poll_ns < SEALER_POLL_MS * 1000000ULL)
			continue;
		s->last_poll_ns = now;
		found = poll_dir(s);
		if (s->leaves_since_cp)
			found |= POLL_SEGMENT;
		if (found & (POLL_CRASH | POLL_FREEZE))
			checkpoint(s, VBTS_SEAL_REASON_CRASH);
		else if (found & POLL_SEGMENT)
			checkpoint(s, VBTS_SEAL_REASON_SEGMENT);
		else if (now - s->last_cp_ns >= s->interval_ns)
			checkpoint(s, VBTS_SEAL_REASON_INTERVAL);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int sealer__check_key(const char *key_path, char *err, size_t errlen)
{
	struct vbts_seal_vk vk;
	struct seal_key *k;
	int64_t e;

	k = seal_key__open(key_path, err, errlen);
	if (!k)
		return -errno;
	seal_key__vk(k, &vk);
	seal_key__close(k);
	e = seal_vk__epoch_of(&vk, real_ns());
	if (e < 0 || (uint64_t)e >> vk.log2_epochs) {
		errmsg__set(err, errlen,
			    "sealing key %s: the time is %s its epochs (vbts keygen "
			    "makes a new key)",
			    key_path, e < 0 ? "before" : "after");
		return -ERANGE;
	}
	return 0;
}

static void free_sealer(struct sealer *s)
{
	for (size_t i = 0; i < s->nr_files; i++)
		free(s->files[i].name);
	free(s->files);
	free(s->index);
	seal_key__close(s->key);
	if (s->logfd >= 0)
		close(s->logfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->qlock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct sealer *sealer__start(const char *dir, const char *key_path, unsigned int interval_s,
			     char *err, size_t errlen)
{
	struct vbts_seal_log_header h;
	pthread_condattr_t ca;
	struct sealer *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		errmsg__set(err, errlen, "out of memory");
		return NULL;
	}
	s->logfd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->qlock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	s->interval_ns = (interval_s ? interval_s : SEALER_DEFAULT_INTERVAL_S) * 1000000000ULL;
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s: %s", dir, strerror(-ret));
		goto err_free;
	}
	s->key = seal_key__open(key_path, err, errlen);
	if (!s->key) {
		ret = -errno;
		goto err_free;
	}
	randombytes_buf(s->trace_id, sizeof(s->trace_id));
	memset(&h, 0, sizeof(h));
	h.magic = VBTS_SEAL_LOG_MAGIC;
	h.version = VBTS_SEAL_LOG_VERSION;
	h.header_size = sizeof(h);
	memcpy(h.trace_id, s->trace_id, sizeof(h.trace_id));
	seal_key__vk(s->key, &h.vk);
	s->logfd = openat(s->dirfd, VBTS_SEAL_LOG_NAME,
			  O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (s->logfd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s/%s: %s", dir, VBTS_SEAL_LOG_NAME, strerror(-ret));
		goto err_free;
	}
	ret = fd__write_all(s->logfd, &h, sizeof(h));
	if (ret < 0) {
		errmsg__set(err, errlen, "%s/%s: %s", dir, VBTS_SEAL_LOG_NAME, strerror(-ret));
		goto err_unlink;
	}
	s->reported = true; /* the first checkpoint's error goes into @err */
	ret = checkpoint(s, VBTS_SEAL_REASON_START);
	s->reported = false;
	if (ret < 0) {
		errmsg__set(err, errlen, "%s", s->errmsg);
		goto err_unlink;
	}
	ret = pthread_create(&s->thread, NULL, sealer_thread, s);
	if (ret) {
		ret = -ret;
		errmsg__set(err, errlen, "sealer thread: %s", strerror(-ret));
		goto err_unlink;
	}
	s->thread_started = true;
	return s;

err_unlink:
	unlinkat(s->dirfd, VBTS_SEAL_LOG_NAME, 0);
err_free:
	free_sealer(s);
	errno = -ret;
	return NULL;
}

int sealer__checkpoint(struct sealer *s, unsigned int reason)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = checkpoint(s, reason);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

static void stop_thread(struct sealer *s)
{
	if (!s->thread_started)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
}

uint64_t sealer__cpu_ns(struct sealer *s)
{
	struct timespec t;
	clockid_t id;

	if (!s->thread_started || pthread_getcpuclockid(s->thread, &id) ||
	    clock_gettime(id, &t) < 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

int sealer__finish(struct sealer *s)
{
	int ret;

	if (!s)
		return 0;
	stop_thread(s);
	checkpoint(s, VBTS_SEAL_REASON_END);
	ret = s->error;
	if (!ret && fsync(s->logfd) < 0)
		ret = -errno;
	free_sealer(s);
	return ret;
}

void sealer__abort(struct sealer *s)
{
	if (!s)
		return;
	stop_thread(s);
	unlinkat(s->dirfd, VBTS_SEAL_LOG_NAME, 0);
	free_sealer(s);
}
