// SPDX-License-Identifier: GPL-2.0
/*
 * seal-key.c - the forward-secure sealing key: generation, evolution, signing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "errmsg.h"
#include "seal-hash.h"
#include "seal-key.h"
#include "fd-io.h"

/*
 * struct seal_key - an open sealing key.
 * @fd:   the key file, read-write
 * @path: its name, for messages
 * @hdr:  its header as last read or written; the seed in it is @hdr.epoch's (sodium_malloc'd
 *        memory, erased when it evolves and on close)
 * @pks:  every epoch's public key
 * @kpath_epoch: the epoch @kpath is for (UINT32_MAX: none yet)
 * @kpath: its key path
 */
struct seal_key {
	int fd;
	char path[PATH_MAX];
	struct vbts_seal_key_header *hdr;
	uint8_t (*pks)[VBTS_SEAL_PK_SIZE];
	uint32_t kpath_epoch;
	uint8_t kpath[VBTS_SEAL_MAX_LOG2_EPOCHS][VBTS_SEAL_HASH_SIZE];
};

static void seed_step(uint8_t seed[VBTS_SEAL_SEED_SIZE])
{
	uint8_t next[VBTS_SEAL_SEED_SIZE];

	seal_hash__two(next, SEAL_D_SEED_STEP, seed, VBTS_SEAL_SEED_SIZE, NULL, 0);
	memcpy(seed, next, sizeof(next));
	sodium_memzero(next, sizeof(next));
}

/* The Ed25519 key pair of the epoch whose seed is @seed. */
static void epoch_keypair(const uint8_t seed[VBTS_SEAL_SEED_SIZE], uint8_t pk[VBTS_SEAL_PK_SIZE],
			  uint8_t sk[crypto_sign_SECRETKEYBYTES])
{
	uint8_t s[crypto_sign_SEEDBYTES];

	seal_hash__two(s, SEAL_D_SIGN_SEED, seed, VBTS_SEAL_SEED_SIZE, NULL, 0);
	crypto_sign_seed_keypair(pk, sk, s);
	sodium_memzero(s, sizeof(s));
}

static int mkdir_p(const char *dir, char *err, size_t errlen)
{
	char buf[PATH_MAX];
	size_t n = strlen(dir);

	if (n >= sizeof(buf)) {
		errmsg__set(err, errlen, "key directory name too long");
		return -ENAMETOOLONG;
	}
	memcpy(buf, dir, n + 1);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = 0;
			if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
				int e = errno;

				errmsg__set(err, errlen, "cannot make %s: %s", buf, strerror(e));
				return -e;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int seal_key__generate(const char *dir, uint32_t epoch_s, unsigned int log2_epochs,
		       uint64_t start_s, struct vbts_seal_vk *vk, char *err, size_t errlen)
{
	char kpath[PATH_MAX], vpath[PATH_MAX], text[SEAL_VK_TEXT_SIZE + 1];
	uint8_t sk[crypto_sign_SECRETKEYBYTES];
	struct vbts_seal_key_header *hdr;
	uint8_t(*pks)[VBTS_SEAL_PK_SIZE];
	uint8_t *seed;
	uint64_t n;
	int ret, kfd = -1, vfd = -1;

	if (!epoch_s || !log2_epochs || log2_epochs > VBTS_SEAL_MAX_LOG2_EPOCHS) {
		errmsg__set(err, errlen, "key parameters out of range");
		return -EINVAL;
	}
	if (seal_hash__init() < 0) {
		errmsg__set(err, errlen, "libsodium cannot start");
		return -EIO;
	}
	if ((size_t)snprintf(kpath, sizeof(kpath), "%s/%s", dir, SEAL_KEY_FILE) >= sizeof(kpath) ||
	    (size_t)snprintf(vpath, sizeof(vpath), "%s/%s", dir, SEAL_KEY_VERIFY_FILE) >=
		    sizeof(vpath)) {
		errmsg__set(err, errlen, "key directory name too long");
		return -ENAMETOOLONG;
	}
	ret = mkdir_p(dir, err, errlen);
	if (ret < 0)
		return ret;
	n = 1ULL << log2_epochs;
	hdr = sodium_malloc(sizeof(*hdr));
	seed = sodium_malloc(VBTS_SEAL_SEED_SIZE);
	pks = malloc(n * VBTS_SEAL_PK_SIZE);
	if (!hdr || !seed || !pks) {
		errmsg__set(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = VBTS_SEAL_KEY_MAGIC;
	hdr->version = VBTS_SEAL_KEY_VERSION;
	hdr->header_size = sizeof(*hdr);
	hdr->start_s = start_s;
	hdr->epoch_s = epoch_s;
	hdr->log2_epochs = log2_epochs;
	randombytes_buf(hdr->seed, sizeof(hdr->seed));
	memcpy(seed, hdr->seed, VBTS_SEAL_SEED_SIZE);
	for (uint64_t i = 0; i < n; i++) {
		epoch_keypair(seed, pks[i], sk);
		seed_step(seed);
	}
	sodium_memzero(sk, sizeof(sk));
	ret = seal_keytree__root((const uint8_t(*)[VBTS_SEAL_PK_SIZE])pks, log2_epochs, hdr->root);
	if (ret < 0) {
		errmsg__set(err, errlen, "out of memory");
		goto out_free;
	}
	memset(vk, 0, sizeof(*vk));
	vk->start_s = start_s;
	vk->epoch_s = epoch_s;
	vk->log2_epochs = log2_epochs;
	memcpy(vk->root, hdr->root, sizeof(vk->root));
	seal_vk__seal(vk);

	kfd = open(kpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (kfd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s: %s%s", kpath, strerror(-ret),
			    ret == -EEXIST ? " (a key is never overwritten)" : "");
		goto out_free;
	}
	vfd = open(vpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (vfd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s: %s%s", vpath, strerror(-ret),
			    ret == -EEXIST ? " (a key is never overwritten)" : "");
		goto out_unlink_key;
	}
	seal_vk__format(vk, text, sizeof(text) - 1);
	strcat(text, "\n");
	ret = fd__write_all(kfd, hdr, sizeof(*hdr));
	if (!ret)
		ret = fd__write_all(kfd, pks, n * VBTS_SEAL_PK_SIZE);
	if (!ret)
		ret = fd__write_all(vfd, text, strlen(text));
	if (!ret && (fsync(kfd) < 0 || fsync(vfd) < 0))
		ret = -errno;
	if (ret < 0) {
		errmsg__set(err, errlen, "writing the keys into %s: %s", dir, strerror(-ret));
		unlink(vpath);
		goto out_unlink_key;
	}
	goto out_close;

out_unlink_key:
	unlink(kpath);
out_close:
	if (vfd >= 0)
		close(vfd);
	if (kfd >= 0)
		close(kfd);
out_free:
	sodium_free(seed);
	sodium_free(hdr);
	free(pks);
	return ret;
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EINVAL;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int header_valid(const struct vbts_seal_key_header *h)
{
	return h->magic == VBTS_SEAL_KEY_MAGIC && h->version == VBTS_SEAL_KEY_VERSION &&
	       h->header_size == sizeof(*h) && h->epoch_s && h->log2_epochs &&
	       h->log2_epochs <= VBTS_SEAL_MAX_LOG2_EPOCHS &&
	       ((uint64_t)h->epoch >> h->log2_epochs) == 0;
}

struct seal_key *seal_key__open(const char *path, char *err, size_t errlen)
{
	uint8_t root[VBTS_SEAL_HASH_SIZE];
	struct seal_key *k;
	struct stat st;
	uint64_t n;
	int e;

	if (seal_hash__init() < 0) {
		errmsg__set(err, errlen, "libsodium cannot start");
		errno = EIO;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errmsg__set(err, errlen, "out of memory");
		return NULL;
	}
	k->kpath_epoch = UINT32_MAX;
	snprintf(k->path, sizeof(k->path), "%s", path);
	k->hdr = sodium_malloc(sizeof(*k->hdr));
	if (!k->hdr) {
		e = ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto err_free;
	}
	k->fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (k->fd < 0) {
		e = errno;
		errmsg__set(err, errlen, "sealing key %s: %s", path, strerror(e));
		goto err_free;
	}
	if (fstat(k->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		e = EINVAL;
		errmsg__set(err, errlen, "sealing key %s is not a regular file", path);
		goto err_close;
	}
	if (st.st_mode & 077) {
		e = EACCES;
		errmsg__set(err, errlen,
			    "sealing key %s can be read by others (mode %04o): chmod 600 it", path,
			    (unsigned int)(st.st_mode & 07777));
		goto err_close;
	}
	if (read_at(k->fd, k->hdr, sizeof(*k->hdr), 0) < 0 || !header_valid(k->hdr)) {
		e = EINVAL;
		errmsg__set(err, errlen, "%s is not a vbts sealing key (see vbts keygen)", path);
		goto err_close;
	}
	n = 1ULL << k->hdr->log2_epochs;
	if ((uint64_t)st.st_size != sizeof(*k->hdr) + n * VBTS_SEAL_PK_SIZE) {
		e = EINVAL;
		errmsg__set(err, errlen, "sealing key %s: %lld bytes, not %llu", path,
			    (long long)st.st_size,
			    (unsigned long long)(sizeof(*k->hdr) + n * VBTS_SEAL_PK_SIZE));
		goto err_close;
	}
	k->pks = malloc(n * VBTS_SEAL_PK_SIZE);
	if (!k->pks) {
		e = ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto err_close;
	}
	if (read_at(k->fd, k->pks, n * VBTS_SEAL_PK_SIZE, sizeof(*k->hdr)) < 0 ||
	    seal_keytree__root((const uint8_t(*)[VBTS_SEAL_PK_SIZE])k->pks, k->hdr->log2_epochs,
			       root) < 0 ||
	    sodium_memcmp(root, k->hdr->root, sizeof(root))) {
		e = EINVAL;
		errmsg__set(err, errlen, "sealing key %s: its public keys do not make its root",
			    path);
		goto err_close;
	}
	return k;

err_close:
	close(k->fd);
err_free:
	sodium_free(k->hdr);
	free(k->pks);
	free(k);
	errno = e;
	return NULL;
}

void seal_key__vk(const struct seal_key *k, struct vbts_seal_vk *vk)
{
	memset(vk, 0, sizeof(*vk));
	vk->start_s = k->hdr->start_s;
	vk->epoch_s = k->hdr->epoch_s;
	vk->log2_epochs = k->hdr->log2_epochs;
	memcpy(vk->root, k->hdr->root, sizeof(vk->root));
	seal_vk__seal(vk);
}

/*
 * Move the key to epoch @e: under an exclusive lock of the file (another run may share the
 * key), take the file's state when it is further on, step the seed, rewrite the header in
 * place and sync it. The earlier seed is erased from memory and overwritten on disk.
 */
static int evolve(struct seal_key *k, uint32_t e, char *err, size_t errlen)
{
	struct vbts_seal_key_header *disk;
	int ret = 0;

	disk = sodium_malloc(sizeof(*disk));
	if (!disk)
		return -ENOMEM;
	while (flock(k->fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			ret = -errno;
			goto out;
		}
	}
	if (read_at(k->fd, disk, sizeof(*disk), 0) < 0 || !header_valid(disk) ||
	    memcmp(disk->root, k->hdr->root, sizeof(disk->root))) {
		errmsg__set(err, errlen, "sealing key %s changed under the run", k->path);
		ret = -EIO;
		goto out_unlock;
	}
	if (disk->epoch > k->hdr->epoch)
		memcpy(k->hdr, disk, sizeof(*disk));
	if (e < k->hdr->epoch) {
		errmsg__set(err, errlen,
			    "sealing key %s is at epoch %u, the clock's is %u: earlier epochs are "
			    "gone",
			    k->path, k->hdr->epoch, e);
		ret = -ERANGE;
		goto out_unlock;
	}
	if (e == k->hdr->epoch)
		goto out_unlock;
	while (k->hdr->epoch < e) {
		seed_step(k->hdr->seed);
		k->hdr->epoch++;
	}
	if (pwrite(k->fd, k->hdr, sizeof(*k->hdr), 0) != sizeof(*k->hdr) || fdatasync(k->fd) < 0) {
		errmsg__set(err, errlen, "sealing key %s could not be rewritten: %s", k->path,
			    strerror(errno));
		ret = -EIO;
	}
out_unlock:
	flock(k->fd, LOCK_UN);
out:
	sodium_free(disk);
	return ret;
}

int seal_key__sign(struct seal_key *k, struct vbts_seal_checkpoint *cp,
		   uint8_t (*path)[VBTS_SEAL_HASH_SIZE], char *err, size_t errlen)
{
	uint8_t msg[sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE];
	uint8_t pk[VBTS_SEAL_PK_SIZE];
	struct vbts_seal_vk vk;
	uint8_t *sk;
	int64_t e;
	size_t len;
	int ret;

	seal_key__vk(k, &vk);
	e = seal_vk__epoch_of(&vk, cp->time_ns);
	if (e < 0 || (uint64_t)e >> vk.log2_epochs) {
		errmsg__set(err, errlen,
			    "sealing key %s: the time is %s its epochs (vbts keygen "
			    "makes a new key)",
			    k->path, e < 0 ? "before" : "after");
		return -ERANGE;
	}
	ret = evolve(k, e, err, errlen);
	if (ret < 0)
		return ret;
	if (k->kpath_epoch != e) {
		ret = seal_keytree__path((const uint8_t(*)[VBTS_SEAL_PK_SIZE])k->pks,
					 vk.log2_epochs, e, k->kpath);
		if (ret < 0)
			return ret;
		k->kpath_epoch = e;
	}
	sk = sodium_malloc(crypto_sign_SECRETKEYBYTES);
	if (!sk)
		return -ENOMEM;
	epoch_keypair(k->hdr->seed, pk, sk);
	if (sodium_memcmp(pk, k->pks[e], sizeof(pk))) {
		sodium_free(sk);
		errmsg__set(err, errlen, "sealing key %s: its seed does not make epoch %u's key",
			    k->path, (unsigned int)e);
		return -EIO;
	}
	cp->epoch = e;
	memcpy(cp->pubkey, pk, sizeof(pk));
	cp->path_len = vk.log2_epochs;
	cp->reserved = 0;
	len = seal_hash__sign_message(cp, msg);
	crypto_sign_detached(cp->sig, NULL, msg, len, sk);
	sodium_free(sk);
	memcpy(path, k->kpath, vk.log2_epochs * VBTS_SEAL_HASH_SIZE);
	return 0;
}

void seal_key__close(struct seal_key *k)
{
	if (!k)
		return;
	close(k->fd);
	sodium_free(k->hdr); /* sodium_free() erases */
	free(k->pks);
	free(k);
}
