// SPDX-License-Identifier: GPL-2.0
/*
 * seal-verify.c - verify a sealed trace directory; inclusion proofs of one of its files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <vbts/segment-format.h>

#include "errmsg.h"
#include "seal-hash.h"
#include "seal-verify.h"

#define VERIFY_MAX_DEPTH 4
#define VERIFY_MAX_FILES 1000000

/* A leaf of seal.log, as read. */
struct vleaf {
	struct vbts_seal_leaf l;
	char name[VBTS_SEAL_NAME_MAX + 1];
	uint64_t log_off;
};

/* A checkpoint of seal.log, as read; @good: it and every one before it verify. */
struct vcp {
	struct vbts_seal_checkpoint cp;
	uint8_t path[VBTS_SEAL_MAX_LOG2_EPOCHS][VBTS_SEAL_HASH_SIZE];
	uint64_t log_off;
	bool good;
};

/* A sealed file: the leaves that make what it holds now, in order. */
struct vfile {
	const char *name;
	uint64_t *ext;
	size_t nr_ext;
	bool live; /* its last leaf has VBTS_SEAL_LEAF_F_LIVE */
	bool append; /* made of APPEND leaves */
	bool bad; /* verification failed */
	bool tail; /* bytes after the sealed ones */
};

struct verify {
	int dirfd;
	struct seal_report *r;
	struct vleaf *leaves;
	uint8_t (*lh)[VBTS_SEAL_HASH_SIZE];
	uint64_t nr_leaves, cap_leaves;
	struct vcp *cps;
	uint64_t nr_cps, cap_cps;
	struct vfile *files;
	size_t nr_files;
	uint8_t buf[1 << 20];
};

static void problem(struct seal_report *r, int kind, const char *file, int64_t cp, int64_t off,
		    int64_t end, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void problem(struct seal_report *r, int kind, const char *file, int64_t cp, int64_t off,
		    int64_t end, const char *fmt, ...)
{
	struct seal_problem *p;
	va_list ap;

	r->nr_problems++;
	if (kind == SEAL_P_TAMPERED)
		r->nr_tampered++;
	if (r->nr_problems > SEAL_VERIFY_MAX_PROBLEMS)
		return;
	p = &r->problems[r->nr_problems - 1];
	p->kind = kind;
	snprintf(p->file, sizeof(p->file), "%s", file);
	p->checkpoint = cp;
	p->offset = off;
	p->end = end;
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
}

const char *seal_report__reason_name(uint32_t reason)
{
	static const char *const names[] = {
		[VBTS_SEAL_REASON_START] = "start", [VBTS_SEAL_REASON_SEGMENT] = "segment",
		[VBTS_SEAL_REASON_CRASH] = "crash", [VBTS_SEAL_REASON_INTERVAL] = "interval",
		[VBTS_SEAL_REASON_END] = "end",
	};

	return reason < sizeof(names) / sizeof(names[0]) && names[reason] ? names[reason] : "?";
}

/* Read a whole file of at most @max bytes. Return: 0 or -errno (-EFBIG beyond @max). */
static int read_whole(int dirfd, const char *name, uint64_t max, uint8_t **data, size_t *len)
{
	struct stat st;
	uint8_t *p;
	size_t done = 0;
	int fd, ret = 0;

	/* O_NONBLOCK: a FIFO there is refused below, never waited on in open(2) */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	p = malloc(st.st_size ? st.st_size : 1);
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, p + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		done += n;
	}
	close(fd);
	if (ret < 0) {
		free(p);
		return ret;
	}
	*data = p;
	*len = done;
	return 0;
}

/* Whether @n bytes at @p are zero (the padding no hash covers must carry nothing). */
static bool zero_pad(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Whether a leaf's name is a plain relative path: no empty, "." or ".." part, no NUL. */
static bool name_valid(const char *n, size_t len)
{
	size_t i = 0;

	if (!len || memchr(n, 0, len))
		return false;
	while (i < len) {
		size_t j = i;

		while (j < len && n[j] != '/')
			j++;
		if (j == i || (j - i == 1 && n[i] == '.') ||
		    (j - i == 2 && n[i] == '.' && n[i + 1] == '.'))
			return false;
		i = j + 1;
		if (j < len && i == len)
			return false; /* a trailing '/' */
	}
	return true;
}

static int push_leaf(struct verify *v, const struct vleaf *l)
{
	if (v->nr_leaves == v->cap_leaves) {
		uint64_t cap = v->cap_leaves ? 2 * v->cap_leaves : 256;
		struct vleaf *nl = realloc(v->leaves, cap * sizeof(*nl));
		uint8_t(*nh)[VBTS_SEAL_HASH_SIZE];

		if (!nl)
			return -ENOMEM;
		v->leaves = nl;
		nh = realloc(v->lh, cap * VBTS_SEAL_HASH_SIZE);
		if (!nh)
			return -ENOMEM;
		v->lh = nh;
		v->cap_leaves = cap;
	}
	v->leaves[v->nr_leaves] = *l;
	seal_hash__leaf(v->lh[v->nr_leaves], v->r->trace_id, &l->l, l->name);
	v->nr_leaves++;
	return 0;
}

static int push_cp(struct verify *v, const struct vcp *c)
{
	if (v->nr_cps == v->cap_cps) {
		uint64_t cap = v->cap_cps ? 2 * v->cap_cps : 64;
		struct vcp *n = realloc(v->cps, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->cps = n;
		v->cap_cps = cap;
	}
	v->cps[v->nr_cps++] = *c;
	return 0;
}

/*
 * Check one checkpoint on its own: its key, its signature, its epoch against its time.
 * Return: NULL, or what is wrong.
 */
static const char *check_signature(const struct vbts_seal_checkpoint *cp,
				   const uint8_t (*path)[VBTS_SEAL_HASH_SIZE],
				   const struct vbts_seal_vk *vk)
{
	uint8_t msg[sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE];
	static const char *const what_epoch = "its epoch is not the epoch of its time";
	size_t len;

	if (cp->path_len != vk->log2_epochs)
		return "its key path is not the key's length";
	if ((uint64_t)cp->epoch >> vk->log2_epochs)
		return "its epoch is beyond the key's last";
	if (!seal_keytree__verify(cp->pubkey, cp->epoch, path, vk->log2_epochs, vk->root))
		return "its public key is not its epoch's key of the verification key";
	len = seal_hash__sign_message(cp, msg);
	if (crypto_sign_verify_detached(cp->sig, msg, len, cp->pubkey))
		return "its signature does not verify";
	if (seal_vk__epoch_of(vk, cp->time_ns) != cp->epoch)
		return what_epoch;
	return NULL;
}

/* Parse seal.log and check its chain of checkpoints. Return: 0, or -errno (bad input). */
static int read_log(struct verify *v, const uint8_t *data, size_t len)
{
	struct seal_report *r = v->r;
	const struct vbts_seal_log_header *h = (const void *)data;
	uint8_t prev[VBTS_SEAL_HASH_SIZE] = { 0 };
	struct seal_range range = { 0 };
	bool broken = false;
	size_t off;

	if (len < sizeof(*h) || h->magic != VBTS_SEAL_LOG_MAGIC) {
		problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, 0, -1,
			"not a seal log (its header is damaged)");
		return 0;
	}
	if (h->version != VBTS_SEAL_LOG_VERSION || h->header_size != sizeof(*h)) {
		problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, 0, sizeof(*h),
			"seal log version %u, header size %u: not version %u", h->version,
			h->header_size, VBTS_SEAL_LOG_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(h->reserved); i++)
		if (h->reserved[i]) {
			problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, 0, sizeof(*h),
				"its header's reserved bytes are not zero");
			return 0;
		}
	memcpy(r->trace_id, h->trace_id, sizeof(r->trace_id));
	{
		struct vbts_seal_vk vk = h->vk;

		seal_vk__seal(&vk);
		if (memcmp(vk.check, h->vk.check, sizeof(vk.check)) || !vk.epoch_s ||
		    !vk.log2_epochs || vk.log2_epochs > VBTS_SEAL_MAX_LOG2_EPOCHS) {
			problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, 0, sizeof(*h),
				"the verification key in its header is damaged");
			return 0;
		}
	}
	/* Another key than the one given fails; its checkpoints are still checked, against the
	 * key the log names, to say what else is wrong. */
	if (r->key_given && !seal_vk__equal(&h->vk, &r->vk))
		problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, 0, sizeof(*h),
			"sealed with another verification key than the one given");
	r->vk = h->vk;

	for (off = sizeof(*h); off < len;) {
		const struct vbts_seal_rec *rec = (const void *)(data + off);
		size_t left = len - off;

		/* A record cut short at the end is a writer that stopped; a size no writer makes
		 * is damage. */
		if (left >= sizeof(*rec) &&
		    (rec->size < sizeof(*rec) || rec->size > VBTS_SEAL_REC_MAX || rec->size % 8)) {
			problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, off, -1,
				"a record of %u bytes", rec->size);
			return 0;
		}
		if (left < sizeof(*rec) || rec->size > left) {
			problem(r, SEAL_P_UNSEALED, VBTS_SEAL_LOG_NAME, -1, off, len,
				"an incomplete record at its end (the writer stopped)");
			break;
		}
		if (rec->type == VBTS_SEAL_REC_LEAF) {
			const struct vbts_seal_leaf *l = (const void *)(rec + 1);
			struct vleaf vl;

			if (rec->size < sizeof(*rec) + sizeof(*l) ||
			    l->name_len > VBTS_SEAL_NAME_MAX ||
			    rec->size != ((sizeof(*rec) + sizeof(*l) + l->name_len + 7) & ~7UL) ||
			    !name_valid((const char *)(l + 1), l->name_len) ||
			    (l->kind != VBTS_SEAL_LEAF_APPEND && l->kind != VBTS_SEAL_LEAF_WHOLE) ||
			    (l->kind == VBTS_SEAL_LEAF_WHOLE && l->offset) ||
			    l->offset > INT64_MAX || l->length > INT64_MAX - l->offset ||
			    !zero_pad((const uint8_t *)(l + 1) + l->name_len,
				      rec->size - sizeof(*rec) - sizeof(*l) - l->name_len)) {
				problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, off,
					off + rec->size, "a damaged leaf");
				return 0;
			}
			if (l->index != v->nr_leaves) {
				problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, off,
					off + rec->size,
					"leaf %" PRIu64 " where leaf %" PRIu64 " belongs", l->index,
					v->nr_leaves);
				return 0;
			}
			vl.l = *l;
			memcpy(vl.name, l + 1, l->name_len);
			vl.name[l->name_len] = 0;
			vl.log_off = off;
			if (push_leaf(v, &vl) < 0)
				return -ENOMEM;
			seal_range__append(&range, v->lh[v->nr_leaves - 1]);
		} else if (rec->type == VBTS_SEAL_REC_CHECKPOINT) {
			const struct vbts_seal_checkpoint *cp = (const void *)(rec + 1);
			uint8_t root[VBTS_SEAL_HASH_SIZE];
			const char *why = NULL;
			struct vcp c;

			if (rec->size < sizeof(*rec) + sizeof(*cp) || cp->reserved ||
			    cp->path_len > VBTS_SEAL_MAX_LOG2_EPOCHS ||
			    rec->size != sizeof(*rec) + sizeof(*cp) +
						 cp->path_len * VBTS_SEAL_HASH_SIZE) {
				problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, v->nr_cps, off,
					off + rec->size, "checkpoint %" PRIu64 " is damaged",
					v->nr_cps);
				return 0;
			}
			memset(&c, 0, sizeof(c));
			c.cp = *cp;
			memcpy(c.path, cp + 1, cp->path_len * VBTS_SEAL_HASH_SIZE);
			c.log_off = off;
			seal_range__root(&range, root);
			if (cp->seq != v->nr_cps)
				why = "its number is not its place in the log (one was removed, "
				      "added or moved)";
			else if (memcmp(cp->trace_id, r->trace_id, sizeof(r->trace_id)))
				why = "it belongs to another trace";
			else if (cp->tree_size != v->nr_leaves)
				why = "it does not cover the leaves before it";
			else if (memcmp(cp->prev, prev, sizeof(prev)))
				why = "it does not follow the checkpoint before it";
			else if (!(why = check_signature(cp, (const void *)c.path, &r->vk))) {
				if (v->nr_cps && (cp->epoch < v->cps[v->nr_cps - 1].cp.epoch ||
						  cp->time_ns < v->cps[v->nr_cps - 1].cp.time_ns))
					why = "it is older than the checkpoint before it";
				else if (memcmp(root, cp->root, sizeof(root)))
					why = "its root is not the root of the leaves before it";
			}
			if (why) {
				problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, v->nr_cps, off,
					off + rec->size, "checkpoint %" PRIu64 " (epoch %u): %s",
					v->nr_cps, cp->epoch, why);
				broken = true;
			}
			c.good = !broken;
			if (c.good) {
				r->good++;
				r->head = *cp;
				r->sealed_leaves = cp->tree_size;
			}
			if (!v->nr_cps)
				r->first_epoch = cp->epoch;
			seal_hash__checkpoint(prev, cp);
			if (push_cp(v, &c) < 0)
				return -ENOMEM;
		} else {
			problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, off, off + rec->size,
				"a record of unknown type %u", rec->type);
			return 0;
		}
		off += rec->size;
	}
	r->checkpoints = v->nr_cps;
	r->leaves = v->nr_leaves;
	r->ended = r->good && r->good == v->nr_cps && r->head.reason == VBTS_SEAL_REASON_END &&
		   r->sealed_leaves == v->nr_leaves && off == len;
	if (!r->good && !r->nr_tampered)
		problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, -1, -1, "no checkpoint");
	if (r->good && r->sealed_leaves < v->nr_leaves && !broken)
		problem(r, SEAL_P_UNSEALED, VBTS_SEAL_LOG_NAME, r->good - 1,
			v->leaves[r->sealed_leaves].log_off, len,
			"%" PRIu64 " leaves after the last checkpoint",
			v->nr_leaves - r->sealed_leaves);
	return 0;
}

/* The checkpoint that sealed leaf @i: the first good one covering it. */
static int64_t sealed_by(const struct verify *v, uint64_t i)
{
	uint64_t lo = 0, hi = v->r->good;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (v->cps[mid].cp.tree_size > i)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < v->r->good ? (int64_t)lo : -1;
}

static int cmp_leaf_idx(const void *a, const void *b, void *ctx)
{
	const struct verify *v = ctx;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	int c = strcmp(v->leaves[x].name, v->leaves[y].name);

	return c ? c : (x > y) - (x < y);
}

/* Group the sealed leaves into files: what each file holds now. */
static int build_files(struct verify *v)
{
	uint64_t n = v->r->sealed_leaves, *idx;
	size_t i = 0;

	if (!n)
		return 0;
	idx = malloc(n * sizeof(*idx));
	v->files = calloc(n, sizeof(*v->files));
	if (!idx || !v->files) {
		free(idx);
		return -ENOMEM;
	}
	for (uint64_t k = 0; k < n; k++)
		idx[k] = k;
	qsort_r(idx, n, sizeof(*idx), cmp_leaf_idx, v);
	while (i < n) {
		struct vfile *f = &v->files[v->nr_files++];
		size_t j = i;

		f->name = v->leaves[idx[i]].name;
		while (j < n && !strcmp(v->leaves[idx[j]].name, f->name))
			j++;
		f->ext = malloc((j - i) * sizeof(*f->ext));
		if (!f->ext) {
			free(idx);
			return -ENOMEM;
		}
		for (; i < j; i++) {
			const struct vleaf *l = &v->leaves[idx[i]];
			uint64_t end = f->nr_ext ?
					       v->leaves[f->ext[f->nr_ext - 1]].l.offset +
						       v->leaves[f->ext[f->nr_ext - 1]].l.length :
					       0;

			if (l->l.kind == VBTS_SEAL_LEAF_WHOLE) {
				f->nr_ext = 0;
				f->append = false;
			} else if (l->l.offset != end) {
				problem(v->r, SEAL_P_TAMPERED, f->name, sealed_by(v, idx[i]),
					l->l.offset, -1,
					"leaf %" PRIu64 " does not continue what was sealed before",
					idx[i]);
				f->bad = true;
				continue;
			} else {
				f->append = true;
			}
			f->ext[f->nr_ext++] = idx[i];
			f->live = l->l.flags & VBTS_SEAL_LEAF_F_LIVE;
		}
	}
	free(idx);
	return 0;
}

/* A segment's name for messages: "segment 3 of vCPU 0". */
static void what_file(const char *name, char *buf, size_t len)
{
	unsigned int vcpu;
	unsigned long long index;
	int n = 0;

	if (sscanf(name, "vcpu%u.%8llu.vseg%n", &vcpu, &index, &n) == 2 && n && !name[n])
		snprintf(buf, len, "segment %llu of vCPU %u: ", index, vcpu);
	else
		buf[0] = 0;
}

/* Check one sealed file's bytes. */
static void check_file(struct verify *v, struct vfile *f)
{
	struct seal_report *r = v->r;
	bool unsealed_ok = !r->ended && f->live;
	uint64_t sealed_end = 0;
	char what[64];
	struct stat st;
	int fd;

	if (f->bad || !f->nr_ext)
		return;
	what_file(f->name, what, sizeof(what));
	r->files++;
	{
		const struct vleaf *last = &v->leaves[f->ext[f->nr_ext - 1]];

		sealed_end = last->l.offset + last->l.length;
	}
	fd = openat(v->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		problem(r, SEAL_P_TAMPERED, f->name, sealed_by(v, f->ext[f->nr_ext - 1]), -1, -1,
			"%s%s (sealed by checkpoint %" PRId64 ")", what,
			fd < 0 && errno == ENOENT ? "missing" : "not a regular file any more",
			sealed_by(v, f->ext[f->nr_ext - 1]));
		if (fd >= 0)
			close(fd);
		f->bad = true;
		return;
	}
	for (size_t i = 0; i < f->nr_ext; i++) {
		const struct vleaf *l = &v->leaves[f->ext[i]];
		int64_t cp = sealed_by(v, f->ext[i]);
		uint8_t h[VBTS_SEAL_HASH_SIZE];
		int64_t n;

		if ((uint64_t)st.st_size < l->l.offset + l->l.length) {
			problem(r, unsealed_ok ? SEAL_P_UNSEALED : SEAL_P_TAMPERED, f->name, cp,
				st.st_size, l->l.offset + l->l.length,
				"%struncated: %lld bytes, checkpoint %" PRId64 " sealed %" PRIu64
				"%s",
				what, (long long)st.st_size, cp, l->l.offset + l->l.length,
				unsealed_ok ? " (rewritten by the run after it: unsealed)" : "");
			f->bad = !unsealed_ok;
			close(fd);
			return;
		}
		n = seal_hash__file_range(fd, l->l.offset, l->l.length, v->buf, sizeof(v->buf), h);
		if (n >= 0)
			r->bytes += n;
		if (n != (int64_t)l->l.length || sodium_memcmp(h, l->l.hash, sizeof(h))) {
			if (unsealed_ok)
				problem(r, SEAL_P_UNSEALED, f->name, cp, l->l.offset,
					l->l.offset + l->l.length,
					"%schanged after checkpoint %" PRId64
					" (the run writes it in "
					"place and did not end: unsealed)",
					what, cp);
			else if (f->append)
				problem(r, SEAL_P_TAMPERED, f->name, cp, l->l.offset,
					l->l.offset + l->l.length,
					"bytes %" PRIu64 "-%" PRIu64
					" differ from what checkpoint %" PRId64 " sealed",
					l->l.offset, l->l.offset + l->l.length, cp);
			else
				problem(r, SEAL_P_TAMPERED, f->name, cp, 0, l->l.length,
					"%sdiffers from what checkpoint %" PRId64 " sealed", what,
					cp);
			f->bad = !unsealed_ok;
			close(fd);
			return;
		}
	}
	if ((uint64_t)st.st_size > sealed_end) {
		int64_t cp = r->good - 1;

		f->tail = true;
		if (f->append && !r->ended)
			problem(r, SEAL_P_UNSEALED, f->name, cp, sealed_end, st.st_size,
				"bytes %" PRIu64 "-%lld written after checkpoint %" PRId64
				": unsealed",
				sealed_end, (long long)st.st_size, cp);
		else if (unsealed_ok)
			problem(r, SEAL_P_UNSEALED, f->name, cp, sealed_end, st.st_size,
				"%sgrew after checkpoint %" PRId64 ": unsealed", what, cp);
		else {
			problem(r, SEAL_P_TAMPERED, f->name, cp, sealed_end, st.st_size,
				"%sbytes %" PRIu64 "-%lld were added after %s", what, sealed_end,
				(long long)st.st_size,
				r->ended ? "the end of the run" : "it was sealed");
			f->bad = true;
		}
	}
	close(fd);
}

static int cmp_vfile(const void *a, const void *b)
{
	return strcmp(((const struct vfile *)a)->name, ((const struct vfile *)b)->name);
}

static bool is_sealed(const struct verify *v, const char *name)
{
	struct vfile key = { .name = name };

	return v->nr_files && bsearch(&key, v->files, v->nr_files, sizeof(*v->files), cmp_vfile);
}

/* Report the files no checkpoint covers. */
static void walk_unsealed(struct verify *v, int dfd, const char *rel, int depth, size_t *count)
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) && *count < VERIFY_MAX_FILES) {
		char name[VBTS_SEAL_NAME_MAX * 2 + 2];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!depth && !strcmp(de->d_name, VBTS_SEAL_LOG_NAME))
			continue;
		(*count)++;
		snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0 && depth + 1 < VERIFY_MAX_DEPTH)
				walk_unsealed(v, sub, name, depth + 1, count);
			else if (sub >= 0)
				close(sub);
			continue;
		}
		if (is_sealed(v, name))
			continue;
		if (v->r->ended)
			problem(v->r, SEAL_P_TAMPERED, name, -1, -1, -1,
				"not sealed: added after the end of the run");
		else
			problem(v->r, SEAL_P_UNSEALED, name, -1, -1, -1,
				"written after the last checkpoint: unsealed");
	}
	closedir(d);
}

/* Segments of a vCPU follow each other: each header's first_seq continues the one before. */
static void check_segments(struct verify *v)
{
	int64_t last_vcpu = -1, last_index = -1;
	uint64_t next_seq = 0;
	bool seq_known = false;

	for (size_t i = 0; i < v->nr_files; i++) {
		struct vfile *f = &v->files[i];
		struct vbts_seg_header h;
		unsigned int vcpu;
		unsigned long long index;
		int n = 0, fd;

		if (sscanf(f->name, "vcpu%u.%8llu.vseg%n", &vcpu, &index, &n) != 2 || !n ||
		    f->name[n])
			continue;
		fd = f->bad ? -1 :
		     openat(v->dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
		    h.magic != VBTS_SEG_MAGIC) {
			/* Reported already (or no header to check): its place still counts. */
			if (fd >= 0)
				close(fd);
			last_vcpu = vcpu;
			last_index = index;
			seq_known = false;
			continue;
		}
		close(fd);
		if (h.vcpu_id != vcpu || h.index != index)
			problem(v->r, SEAL_P_TAMPERED, f->name, -1, 0, sizeof(h),
				"segment %llu of vCPU %u holds segment %" PRIu64 " of vCPU %u",
				index, vcpu, h.index, h.vcpu_id);
		else if (vcpu == last_vcpu && (int64_t)index == last_index + 1 && seq_known &&
			 h.first_seq != next_seq)
			problem(v->r, SEAL_P_TAMPERED, f->name, -1, 0, sizeof(h),
				"segment %llu of vCPU %u starts at record %" PRIu64
				", not %" PRIu64,
				index, vcpu, h.first_seq, next_seq);
		else if (vcpu == last_vcpu && (int64_t)index != last_index + 1)
			problem(v->r, SEAL_P_TAMPERED, f->name, -1, -1, -1,
				"segment %llu of vCPU %u follows segment %" PRId64 ": a gap", index,
				vcpu, last_index);
		else if (vcpu != last_vcpu && index)
			problem(v->r, SEAL_P_TAMPERED, f->name, -1, -1, -1,
				"vCPU %u's first sealed segment is %llu, not 0", vcpu, index);
		last_vcpu = vcpu;
		last_index = index;
		next_seq = h.first_seq + h.committed;
		seq_known = true;
	}
}

static void free_verify(struct verify *v)
{
	for (size_t i = 0; i < v->nr_files; i++)
		free(v->files[i].ext);
	free(v->files);
	free(v->leaves);
	free(v->lh);
	free(v->cps);
	if (v->dirfd >= 0)
		close(v->dirfd);
	free(v);
}

void seal_report__free(struct seal_report *r)
{
	if (!r)
		return;
	free(r->problems);
	free(r);
}

/* Read and check everything; @v is kept for a proof. */
static int verify_dir(const char *dir, const struct vbts_seal_vk *vk, struct verify **vout,
		      char *err, size_t errlen)
{
	struct seal_report *r;
	struct verify *v;
	uint8_t *log = NULL;
	size_t len = 0, count = 0;
	int ret, dfd;

	if (seal_hash__init() < 0) {
		errmsg__set(err, errlen, "libsodium cannot start");
		return -EIO;
	}
	v = calloc(1, sizeof(*v));
	r = calloc(1, sizeof(*r));
	if (!v || !r || !(r->problems = calloc(SEAL_VERIFY_MAX_PROBLEMS, sizeof(*r->problems)))) {
		free(v);
		seal_report__free(r);
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	v->r = r;
	v->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->dirfd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "trace directory %s: %s", dir, strerror(-ret));
		goto err;
	}
	if (vk) {
		r->key_given = true;
		r->vk = *vk;
	}
	ret = read_whole(v->dirfd, VBTS_SEAL_LOG_NAME, SEAL_VERIFY_MAX_LOG, &log, &len);
	if (ret == -ENOENT) {
		r->verdict = SEAL_UNSEALED;
		*vout = v;
		return 0;
	}
	if (ret < 0) {
		problem(r, SEAL_P_TAMPERED, VBTS_SEAL_LOG_NAME, -1, -1, -1, "cannot be read: %s",
			ret == -EINVAL ? "not a regular file" : strerror(-ret));
		r->verdict = SEAL_FAILED;
		*vout = v;
		return 0;
	}
	ret = read_log(v, log, len);
	free(log);
	if (ret < 0)
		goto err_mem;
	ret = build_files(v);
	if (ret < 0)
		goto err_mem;
	for (size_t i = 0; i < v->nr_files; i++)
		check_file(v, &v->files[i]);
	/* build_files() left them sorted by name. */
	check_segments(v);
	dfd = openat(v->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		walk_unsealed(v, dfd, "", 0, &count);
	if (r->nr_tampered)
		r->verdict = SEAL_FAILED;
	else if (!r->ended)
		r->verdict = SEAL_PARTIAL;
	else
		r->verdict = SEAL_VERIFIED;
	*vout = v;
	return 0;

err_mem:
	errmsg__set(err, errlen, "out of memory");
	ret = -ENOMEM;
err:
	seal_report__free(r);
	v->r = NULL;
	free_verify(v);
	return ret;
}

int seal_verify__dir(const char *dir, const struct vbts_seal_vk *vk, struct seal_report **out,
		     char *err, size_t errlen)
{
	struct verify *v;
	int ret;

	ret = verify_dir(dir, vk, &v, err, errlen);
	if (ret < 0)
		return ret;
	*out = v->r;
	free_verify(v);
	return 0;
}

/* ---- inclusion proofs ------------------------------------------------------------------- */

static int write_all(FILE *f, const void *p, size_t len)
{
	return fwrite(p, 1, len, f) == len ? 0 : -EIO;
}

int seal_verify__prove(const char *dir, const char *file, const struct vbts_seal_vk *vk,
		       const char *out, char *err, size_t errlen)
{
	struct vbts_seal_proof_header ph;
	const struct vcp *cp;
	struct vfile *f = NULL;
	struct verify *v;
	struct seal_report *r;
	size_t dlen = strlen(dir);
	const char *name = file;
	int ret, fd;
	FILE *o;

	ret = verify_dir(dir, vk, &v, err, errlen);
	if (ret < 0)
		return ret;
	r = v->r;
	/* A path into the trace directory names its file. */
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	if (!strncmp(file, dir, dlen) && file[dlen] == '/')
		name = file + dlen + 1;
	while (!strncmp(name, "./", 2))
		name += 2;
	if (r->verdict == SEAL_UNSEALED || !r->good) {
		errmsg__set(err, errlen, "%s is not sealed (or no checkpoint of it verifies)", dir);
		ret = -EBADMSG;
		goto out;
	}
	for (size_t i = 0; i < v->nr_files; i++)
		if (!strcmp(v->files[i].name, name))
			f = &v->files[i];
	if (!f || !f->nr_ext) {
		errmsg__set(err, errlen, "%s is not a sealed file of %s", file, dir);
		ret = -ENOENT;
		goto out;
	}
	if (f->bad || f->tail) {
		errmsg__set(err, errlen, "%s does not verify as sealed (see vbts verify %s)", file,
			    dir);
		ret = -EBADMSG;
		goto out;
	}
	for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++)
		if (!strcmp(r->problems[i].file, name)) {
			errmsg__set(err, errlen, "%s does not verify as sealed: %s", file,
				    r->problems[i].message);
			ret = -EBADMSG;
			goto out;
		}
	if (f->nr_ext > VBTS_SEAL_PROOF_MAX_LEAVES) {
		errmsg__set(err, errlen, "%s is made of %zu leaves, more than a proof holds (%d)",
			    file, f->nr_ext, VBTS_SEAL_PROOF_MAX_LEAVES);
		ret = -E2BIG;
		goto out;
	}
	cp = &v->cps[r->good - 1];
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s: %s", out, strerror(-ret));
		goto out;
	}
	o = fdopen(fd, "w");
	if (!o) {
		ret = -errno;
		close(fd);
		unlink(out);
		goto out;
	}
	memset(&ph, 0, sizeof(ph));
	ph.magic = VBTS_SEAL_PROOF_MAGIC;
	ph.version = VBTS_SEAL_PROOF_VERSION;
	ph.header_size = sizeof(ph);
	ph.vk = r->vk;
	ph.nr_leaves = f->nr_ext;
	ret = write_all(o, &ph, sizeof(ph));
	{
		struct vbts_seal_rec rec = {
			.type = VBTS_SEAL_REC_CHECKPOINT,
			.size = sizeof(rec) + sizeof(cp->cp) +
				cp->cp.path_len * VBTS_SEAL_HASH_SIZE,
		};

		if (!ret)
			ret = write_all(o, &rec, sizeof(rec));
		if (!ret)
			ret = write_all(o, &cp->cp, sizeof(cp->cp));
		if (!ret)
			ret = write_all(o, cp->path, cp->cp.path_len * VBTS_SEAL_HASH_SIZE);
	}
	for (size_t i = 0; i < f->nr_ext && !ret; i++) {
		const struct vleaf *l = &v->leaves[f->ext[i]];
		uint8_t path[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE], pad[8] = { 0 };
		struct vbts_seal_rec rec = { .type = VBTS_SEAL_REC_LEAF };
		uint32_t n[2] = { 0, 0 };
		int len;

		rec.size = (sizeof(rec) + sizeof(l->l) + l->l.name_len + 7) & ~7UL;
		len = seal_merkle__path((const void *)v->lh, cp->cp.tree_size, f->ext[i], path);
		if (len < 0) {
			ret = len;
			break;
		}
		n[0] = len;
		ret = write_all(o, &rec, sizeof(rec));
		if (!ret)
			ret = write_all(o, &l->l, sizeof(l->l));
		if (!ret)
			ret = write_all(o, l->name, l->l.name_len);
		if (!ret)
			ret = write_all(o, pad,
					rec.size - sizeof(rec) - sizeof(l->l) - l->l.name_len);
		if (!ret)
			ret = write_all(o, n, sizeof(n));
		if (!ret)
			ret = write_all(o, path, len * VBTS_SEAL_HASH_SIZE);
	}
	if (fclose(o) != 0 && !ret)
		ret = -errno;
	if (ret < 0) {
		errmsg__set(err, errlen, "writing %s: %s", out, strerror(-ret));
		unlink(out);
	}
out:
	seal_report__free(v->r);
	free_verify(v);
	return ret;
}

/* A bounded reader over the proof's bytes. */
struct cursor {
	const uint8_t *p;
	size_t left;
};

static const void *take(struct cursor *c, size_t n)
{
	const void *p = c->p;

	if (n > c->left)
		return NULL;
	c->p += n;
	c->left -= n;
	return p;
}

int seal_verify__proof(const char *proof, const struct vbts_seal_vk *vk, const char *file,
		       struct seal_proof_info *info, char *err, size_t errlen)
{
	const struct vbts_seal_proof_header *ph;
	const struct vbts_seal_checkpoint *cp;
	const struct vbts_seal_rec *rec;
	const uint8_t(*kpath)[VBTS_SEAL_HASH_SIZE];
	struct cursor c;
	uint8_t *data = NULL, *buf = NULL;
	uint64_t end = 0;
	const char *why;
	size_t len;
	struct stat st;
	int ret, fd = -1;

	memset(info, 0, sizeof(*info));
	if (seal_hash__init() < 0) {
		errmsg__set(err, errlen, "libsodium cannot start");
		return -EIO;
	}
	ret = read_whole(AT_FDCWD, proof, SEAL_VERIFY_MAX_PROOF, &data, &len);
	if (ret < 0) {
		errmsg__set(err, errlen, "proof %s: %s", proof,
			    ret == -EFBIG  ? "too big to be a proof" :
			    ret == -EINVAL ? "not a regular file" :
					     strerror(-ret));
		return ret == -EFBIG ? -EINVAL : ret;
	}
	c.p = data;
	c.left = len;
	ph = take(&c, sizeof(*ph));
	if (!ph || ph->magic != VBTS_SEAL_PROOF_MAGIC || ph->version != VBTS_SEAL_PROOF_VERSION ||
	    ph->header_size != sizeof(*ph) || !ph->nr_leaves || ph->reserved ||
	    ph->nr_leaves > VBTS_SEAL_PROOF_MAX_LEAVES || ph->vk.log2_epochs == 0 ||
	    ph->vk.log2_epochs > VBTS_SEAL_MAX_LOG2_EPOCHS || !ph->vk.epoch_s) {
		errmsg__set(err, errlen, "%s is not a vbts inclusion proof", proof);
		ret = -EINVAL;
		goto out;
	}
	rec = take(&c, sizeof(*rec));
	cp = take(&c, sizeof(*cp));
	if (!rec || !cp || rec->type != VBTS_SEAL_REC_CHECKPOINT || cp->reserved ||
	    cp->path_len > VBTS_SEAL_MAX_LOG2_EPOCHS ||
	    rec->size != sizeof(*rec) + sizeof(*cp) + cp->path_len * VBTS_SEAL_HASH_SIZE ||
	    !(kpath = take(&c, cp->path_len * VBTS_SEAL_HASH_SIZE))) {
		errmsg__set(err, errlen, "proof %s: its checkpoint is damaged", proof);
		ret = -EINVAL;
		goto out;
	}
	info->key_given = vk != NULL;
	if (vk && !seal_vk__equal(vk, &ph->vk)) {
		errmsg__set(err, errlen, "proof %s was made for another verification key", proof);
		ret = 1;
		goto out;
	}
	why = check_signature(cp, kpath, &ph->vk);
	if (why) {
		errmsg__set(err, errlen, "proof %s: checkpoint %" PRIu64 ": %s", proof, cp->seq,
			    why);
		ret = 1;
		goto out;
	}
	info->checkpoint = *cp;
	memcpy(info->trace_id, cp->trace_id, sizeof(info->trace_id));
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = fd < 0 ? -errno : -EINVAL;
		errmsg__set(err, errlen, "%s: %s", file,
			    fd < 0 ? strerror(-ret) : "not a regular file");
		goto out;
	}
	buf = malloc(1 << 20);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < ph->nr_leaves; i++) {
		const struct vbts_seal_leaf *l;
		const uint32_t *n;
		const uint8_t(*path)[VBTS_SEAL_HASH_SIZE];
		const char *name;
		uint8_t lh[VBTS_SEAL_HASH_SIZE], h[VBTS_SEAL_HASH_SIZE];
		crypto_generichash_state hs;
		uint64_t done = 0;

		rec = take(&c, sizeof(*rec));
		l = take(&c, sizeof(*l));
		if (!rec || !l || rec->type != VBTS_SEAL_REC_LEAF ||
		    l->name_len > VBTS_SEAL_NAME_MAX ||
		    rec->size != ((sizeof(*rec) + sizeof(*l) + l->name_len + 7) & ~7UL) ||
		    !(name = take(&c, rec->size - sizeof(*rec) - sizeof(*l))) ||
		    !name_valid(name, l->name_len) ||
		    !zero_pad((const uint8_t *)name + l->name_len,
			      rec->size - sizeof(*rec) - sizeof(*l) - l->name_len) ||
		    !(n = take(&c, 8)) || n[0] > SEAL_MAX_PATH || n[1] ||
		    !(path = take(&c, n[0] * VBTS_SEAL_HASH_SIZE))) {
			errmsg__set(err, errlen, "proof %s: leaf %u is damaged", proof, i);
			ret = -EINVAL;
			goto out;
		}
		if (!i)
			snprintf(info->name, sizeof(info->name), "%.*s", (int)l->name_len, name);
		else if (strlen(info->name) != l->name_len ||
			 memcmp(info->name, name, l->name_len)) {
			errmsg__set(err, errlen, "proof %s: its leaves are of different files",
				    proof);
			ret = 1;
			goto out;
		}
		if (l->offset != end || (i && l->kind != VBTS_SEAL_LEAF_APPEND) ||
		    l->length > INT64_MAX - l->offset) {
			errmsg__set(err, errlen,
				    "proof %s: leaf %u does not continue the one before", proof, i);
			ret = 1;
			goto out;
		}
		seal_hash__leaf(lh, cp->trace_id, l, name);
		if (!seal_merkle__verify(lh, l->index, cp->tree_size, path, n[0], cp->root)) {
			errmsg__set(err, errlen,
				    "proof %s: leaf %u is not in the tree checkpoint %" PRIu64
				    " signed",
				    proof, i, cp->seq);
			ret = 1;
			goto out;
		}
		crypto_generichash_init(&hs, NULL, 0, VBTS_SEAL_HASH_SIZE);
		while (done < l->length) {
			size_t want = l->length - done < (1 << 20) ? l->length - done : (1 << 20);
			ssize_t got = pread(fd, buf, want, l->offset + done);

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			crypto_generichash_update(&hs, buf, got);
			done += got;
		}
		crypto_generichash_final(&hs, h, sizeof(h));
		if (done != l->length || sodium_memcmp(h, l->hash, sizeof(h))) {
			errmsg__set(err, errlen,
				    "%s: bytes %" PRIu64 "-%" PRIu64 " are not what "
				    "the proof's checkpoint sealed as %.*s",
				    file, l->offset, l->offset + l->length, (int)l->name_len, name);
			ret = 1;
			goto out;
		}
		end += l->length;
	}
	if (c.left) {
		errmsg__set(err, errlen, "proof %s: %zu bytes after its last leaf", proof, c.left);
		ret = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size != end) {
		errmsg__set(err, errlen, "%s: %lld bytes, the proof seals %" PRIu64, file,
			    (long long)st.st_size, end);
		ret = 1;
		goto out;
	}
	info->size = end;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(data);
	return ret;
}
