// SPDX-License-Identifier: GPL-2.0
/*
 * seal-hash.c - the hashes of sealed traces: leaves, Merkle trees, proofs, the key tree.
 */
#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "seal-hash.h"

int seal_hash__init(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

void seal_hash__two(uint8_t out[VBTS_SEAL_HASH_SIZE], uint8_t domain, const void *a, size_t alen,
		    const void *b, size_t blen)
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, VBTS_SEAL_HASH_SIZE);
	crypto_generichash_update(&st, &domain, 1);
	if (alen)
		crypto_generichash_update(&st, a, alen);
	if (blen)
		crypto_generichash_update(&st, b, blen);
	crypto_generichash_final(&st, out, VBTS_SEAL_HASH_SIZE);
}

void seal_hash__leaf(uint8_t out[VBTS_SEAL_HASH_SIZE],
		     const uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE],
		     const struct vbts_seal_leaf *l, const char *name)
{
	crypto_generichash_state st;
	uint8_t d = SEAL_D_LEAF;

	crypto_generichash_init(&st, NULL, 0, VBTS_SEAL_HASH_SIZE);
	crypto_generichash_update(&st, &d, 1);
	crypto_generichash_update(&st, trace_id, VBTS_SEAL_TRACE_ID_SIZE);
	/* The fixed fields with the content hash: the leaf record as written. */
	crypto_generichash_update(&st, (const uint8_t *)l, sizeof(*l));
	crypto_generichash_update(&st, (const uint8_t *)name, l->name_len);
	crypto_generichash_final(&st, out, VBTS_SEAL_HASH_SIZE);
}

size_t seal_hash__sign_message(const struct vbts_seal_checkpoint *cp,
			       uint8_t msg[sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE])
{
	memcpy(msg, VBTS_SEAL_SIGN_DOMAIN, sizeof(VBTS_SEAL_SIGN_DOMAIN));
	memcpy(msg + sizeof(VBTS_SEAL_SIGN_DOMAIN), cp, VBTS_SEAL_SIGNED_SIZE);
	return sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE;
}

void seal_hash__checkpoint(uint8_t out[VBTS_SEAL_HASH_SIZE], const struct vbts_seal_checkpoint *cp)
{
	seal_hash__two(out, SEAL_D_CHECKPOINT, cp, VBTS_SEAL_SIGNED_SIZE, NULL, 0);
}

static void node(uint8_t out[VBTS_SEAL_HASH_SIZE], const uint8_t *l, const uint8_t *r)
{
	seal_hash__two(out, SEAL_D_NODE, l, VBTS_SEAL_HASH_SIZE, r, VBTS_SEAL_HASH_SIZE);
}

void seal_range__append(struct seal_range *r, const uint8_t leaf[VBTS_SEAL_HASH_SIZE])
{
	uint64_t s;

	memcpy(r->h[r->depth++], leaf, VBTS_SEAL_HASH_SIZE);
	/* One merge per trailing one bit of the old size: equal subtrees pair up. */
	for (s = r->size; s & 1; s >>= 1) {
		r->depth--;
		node(r->h[r->depth - 1], r->h[r->depth - 1], r->h[r->depth]);
	}
	r->size++;
}

void seal_range__root(const struct seal_range *r, uint8_t out[VBTS_SEAL_HASH_SIZE])
{
	uint8_t acc[VBTS_SEAL_HASH_SIZE];

	if (!r->depth) {
		seal_hash__two(out, SEAL_D_NODE, NULL, 0, NULL, 0);
		return;
	}
	memcpy(acc, r->h[r->depth - 1], sizeof(acc));
	for (unsigned int i = r->depth - 1; i-- > 0;)
		node(acc, r->h[i], acc);
	memcpy(out, acc, sizeof(acc));
}

/* The largest power of 2 below @n (n >= 2). */
static uint64_t split(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

static void mth(const uint8_t (*d)[VBTS_SEAL_HASH_SIZE], uint64_t n,
		uint8_t out[VBTS_SEAL_HASH_SIZE])
{
	uint8_t l[VBTS_SEAL_HASH_SIZE], r[VBTS_SEAL_HASH_SIZE];
	uint64_t k;

	if (n == 1) {
		memcpy(out, d[0], VBTS_SEAL_HASH_SIZE);
		return;
	}
	k = split(n);
	mth(d, k, l);
	mth(d + k, n - k, r);
	node(out, l, r);
}

int seal_merkle__path(const uint8_t (*leaves)[VBTS_SEAL_HASH_SIZE], uint64_t n, uint64_t m,
		      uint8_t path[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE])
{
	uint8_t tmp[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE];
	unsigned int len = 0;

	if (m >= n)
		return -EINVAL;
	/* RFC 6962 2.1.1, top down: the sibling subtrees from the root, reversed at the end. */
	while (n > 1) {
		uint64_t k = split(n);

		if (m < k) {
			mth(leaves + k, n - k, tmp[len++]);
			n = k;
		} else {
			mth(leaves, k, tmp[len++]);
			leaves += k;
			m -= k;
			n -= k;
		}
	}
	for (unsigned int i = 0; i < len; i++)
		memcpy(path[i], tmp[len - 1 - i], VBTS_SEAL_HASH_SIZE);
	return len;
}

bool seal_merkle__verify(const uint8_t leaf[VBTS_SEAL_HASH_SIZE], uint64_t m, uint64_t n,
			 const uint8_t (*path)[VBTS_SEAL_HASH_SIZE], unsigned int len,
			 const uint8_t root[VBTS_SEAL_HASH_SIZE])
{
	uint8_t r[VBTS_SEAL_HASH_SIZE];
	uint64_t fn = m, sn;

	if (m >= n)
		return false;
	sn = n - 1;
	memcpy(r, leaf, sizeof(r));
	for (unsigned int i = 0; i < len; i++) {
		if (!sn)
			return false;
		if ((fn & 1) || fn == sn) {
			node(r, path[i], r);
			while (!(fn & 1) && fn) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			node(r, r, path[i]);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return !sn && !sodium_memcmp(r, root, sizeof(r));
}

static void key_leaf(uint8_t out[VBTS_SEAL_HASH_SIZE], uint32_t e, const uint8_t *pk)
{
	uint8_t le[4] = { e, e >> 8, e >> 16, e >> 24 };

	seal_hash__two(out, SEAL_D_KEY_LEAF, le, 4, pk, VBTS_SEAL_PK_SIZE);
}

static void key_node(uint8_t out[VBTS_SEAL_HASH_SIZE], const uint8_t *l, const uint8_t *r)
{
	seal_hash__two(out, SEAL_D_KEY_NODE, l, VBTS_SEAL_HASH_SIZE, r, VBTS_SEAL_HASH_SIZE);
}

/* Walk the key tree bottom up; @path (may be NULL) receives epoch @e's siblings. */
static int keytree(const uint8_t (*pks)[VBTS_SEAL_PK_SIZE], unsigned int log2, uint32_t e,
		   uint8_t (*path)[VBTS_SEAL_HASH_SIZE], uint8_t root[VBTS_SEAL_HASH_SIZE])
{
	uint64_t n = 1ULL << log2;
	uint8_t(*lv)[VBTS_SEAL_HASH_SIZE];

	if (!log2 || log2 > VBTS_SEAL_MAX_LOG2_EPOCHS || e >= n)
		return -EINVAL;
	lv = malloc(n * VBTS_SEAL_HASH_SIZE);
	if (!lv)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		key_leaf(lv[i], i, pks[i]);
	for (unsigned int level = 0; level < log2; level++, n >>= 1, e >>= 1) {
		if (path)
			memcpy(path[level], lv[e ^ 1], VBTS_SEAL_HASH_SIZE);
		for (uint64_t i = 0; i < n / 2; i++)
			key_node(lv[i], lv[2 * i], lv[2 * i + 1]);
	}
	if (root)
		memcpy(root, lv[0], VBTS_SEAL_HASH_SIZE);
	free(lv);
	return 0;
}

int seal_keytree__root(const uint8_t (*pks)[VBTS_SEAL_PK_SIZE], unsigned int log2,
		       uint8_t out[VBTS_SEAL_HASH_SIZE])
{
	return keytree(pks, log2, 0, NULL, out);
}

int seal_keytree__path(const uint8_t (*pks)[VBTS_SEAL_PK_SIZE], unsigned int log2, uint32_t e,
		       uint8_t (*path)[VBTS_SEAL_HASH_SIZE])
{
	return keytree(pks, log2, e, path, NULL);
}

bool seal_keytree__verify(const uint8_t pk[VBTS_SEAL_PK_SIZE], uint32_t e,
			  const uint8_t (*path)[VBTS_SEAL_HASH_SIZE], unsigned int log2,
			  const uint8_t root[VBTS_SEAL_HASH_SIZE])
{
	uint8_t r[VBTS_SEAL_HASH_SIZE];

	if (!log2 || log2 > VBTS_SEAL_MAX_LOG2_EPOCHS || (uint64_t)e >> log2)
		return false;
	key_leaf(r, e, pk);
	for (unsigned int level = 0; level < log2; level++) {
		if ((e >> level) & 1)
			key_node(r, path[level], r);
		else
			key_node(r, r, path[level]);
	}
	return !sodium_memcmp(r, root, sizeof(r));
}

static void vk_check(const struct vbts_seal_vk *vk, uint8_t out[8])
{
	uint8_t h[VBTS_SEAL_HASH_SIZE];

	seal_hash__two(h, SEAL_D_VK_CHECK, vk, offsetof(struct vbts_seal_vk, check), NULL, 0);
	memcpy(out, h, 8);
}

void seal_vk__seal(struct vbts_seal_vk *vk)
{
	vk_check(vk, vk->check);
}

void seal_vk__format(const struct vbts_seal_vk *vk, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)vk;
	size_t o = strlen(VBTS_SEAL_VK_PREFIX);

	if (len < SEAL_VK_TEXT_SIZE) {
		if (len)
			buf[0] = 0;
		return;
	}
	memcpy(buf, VBTS_SEAL_VK_PREFIX, o);
	for (size_t i = 0; i < sizeof(*vk); i++) {
		buf[o++] = hex[p[i] >> 4];
		buf[o++] = hex[p[i] & 15];
	}
	buf[o] = 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int seal_vk__parse(const char *text, struct vbts_seal_vk *vk)
{
	size_t plen = strlen(VBTS_SEAL_VK_PREFIX);
	uint8_t *p = (uint8_t *)vk, check[8];

	while (isspace((unsigned char)*text))
		text++;
	if (strncmp(text, VBTS_SEAL_VK_PREFIX, plen))
		return -EINVAL;
	text += plen;
	for (size_t i = 0; i < sizeof(*vk); i++) {
		int hi = hexval((unsigned char)text[2 * i]), lo;

		if (hi < 0)
			return -EINVAL;
		lo = hexval((unsigned char)text[2 * i + 1]);
		if (lo < 0)
			return -EINVAL;
		p[i] = hi << 4 | lo;
	}
	text += 2 * sizeof(*vk);
	while (isspace((unsigned char)*text))
		text++;
	if (*text)
		return -EINVAL;
	vk_check(vk, check);
	if (sodium_memcmp(check, vk->check, sizeof(check)))
		return -EBADMSG;
	if (!vk->epoch_s || !vk->log2_epochs || vk->log2_epochs > VBTS_SEAL_MAX_LOG2_EPOCHS)
		return -ERANGE;
	return 0;
}

bool seal_vk__equal(const struct vbts_seal_vk *a, const struct vbts_seal_vk *b)
{
	return !memcmp(a, b, sizeof(*a));
}

int64_t seal_vk__epoch_of(const struct vbts_seal_vk *vk, uint64_t time_ns)
{
	uint64_t s = time_ns / 1000000000ULL;

	if (s < vk->start_s || !vk->epoch_s)
		return -1;
	return (int64_t)((s - vk->start_s) / vk->epoch_s);
}

int64_t seal_hash__file_range(int fd, uint64_t off, uint64_t len, uint8_t *buf, size_t buflen,
			      uint8_t out[VBTS_SEAL_HASH_SIZE])
{
	crypto_generichash_state st;
	uint64_t done = 0;

	crypto_generichash_init(&st, NULL, 0, VBTS_SEAL_HASH_SIZE);
	while (done < len) {
		size_t want = len - done < buflen ? len - done : buflen;
		ssize_t n = pread(fd, buf, want, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		crypto_generichash_update(&st, buf, n);
		done += n;
	}
	crypto_generichash_final(&st, out, VBTS_SEAL_HASH_SIZE);
	return done;
}
