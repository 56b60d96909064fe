/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seal-hash.h - the hashes of sealed traces (vbts/seal-format.h): leaves, the trace's Merkle
 * tree and its inclusion proofs (RFC 6962/9162 shape), the key tree, the verification key's
 * text form. Shared by the sealer and the verifier.
 */
#ifndef VBTS_COMMON_SEAL_HASH_H
#define VBTS_COMMON_SEAL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vbts/seal-format.h>

/* The domain bytes of vbts/seal-format.h. */
enum seal_domain {
	SEAL_D_LEAF = 0,
	SEAL_D_NODE = 1,
	SEAL_D_KEY_LEAF = 2,
	SEAL_D_KEY_NODE = 3,
	SEAL_D_SEED_STEP = 4,
	SEAL_D_SIGN_SEED = 5,
	SEAL_D_CHECKPOINT = 6,
	SEAL_D_VK_CHECK = 7,
};

/* Deepest Merkle path: trees of at most 2^63 leaves. */
#define SEAL_MAX_PATH 64

/**
 * seal_hash__init() - initialise libsodium once per process.
 *
 * Return: 0 or -EIO when libsodium cannot start.
 */
int seal_hash__init(void);

/**
 * seal_hash__file_range() - the content hash of @len bytes of @fd from @off, read with pread
 * (fewer at the file's end).
 * @fd:     the file
 * @off:    where to start
 * @len:    how many bytes at most (UINT64_MAX: to the end)
 * @buf:    a buffer for the reads
 * @buflen: its size
 * @out:    receives the hash
 *
 * Return: the bytes hashed, or -errno.
 */
int64_t seal_hash__file_range(int fd, uint64_t off, uint64_t len, uint8_t *buf, size_t buflen,
			      uint8_t out[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_hash__two() - H(@domain || @a || @b).
 * @out:    receives the hash
 * @domain: enum seal_domain
 * @a:      first part (may be NULL when @alen is 0)
 * @alen:   its length
 * @b:      second part (may be NULL when @blen is 0)
 * @blen:   its length
 */
void seal_hash__two(uint8_t out[VBTS_SEAL_HASH_SIZE], uint8_t domain, const void *a, size_t alen,
		    const void *b, size_t blen);

/**
 * seal_hash__leaf() - a leaf's hash in the trace's tree.
 * @out:      receives it
 * @trace_id: the trace's id
 * @l:        the leaf (its hash of the content included)
 * @name:     its @l->name_len bytes of name
 */
void seal_hash__leaf(uint8_t out[VBTS_SEAL_HASH_SIZE],
		     const uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE],
		     const struct vbts_seal_leaf *l, const char *name);

/**
 * seal_hash__checkpoint() - what the next checkpoint's prev holds: H(0x06 || signed part).
 * @out: receives it
 * @cp:  the checkpoint
 */
void seal_hash__checkpoint(uint8_t out[VBTS_SEAL_HASH_SIZE], const struct vbts_seal_checkpoint *cp);

/**
 * seal_hash__sign_message() - the bytes a checkpoint's signature covers.
 * @cp:  the checkpoint
 * @msg: receives them
 *
 * Return: their length.
 */
size_t seal_hash__sign_message(const struct vbts_seal_checkpoint *cp,
			       uint8_t msg[sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE]);

/**
 * struct seal_range - the root of a growing tree without its leaves: the roots of its perfect
 * subtrees, largest first (a Merkle "compact range").
 * @size:  leaves appended
 * @depth: subtrees held (the bits set in @size)
 * @h:     their roots
 */
struct seal_range {
	uint64_t size;
	unsigned int depth;
	uint8_t h[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE];
};

/**
 * seal_range__append() - add a leaf hash to @r.
 * @r:    the range (zeroed: empty)
 * @leaf: the leaf's hash
 */
void seal_range__append(struct seal_range *r, const uint8_t leaf[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_range__root() - the RFC 6962 root of the leaves appended (of none: H() of nothing).
 * @r:   the range
 * @out: receives the root
 */
void seal_range__root(const struct seal_range *r, uint8_t out[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_merkle__path() - the inclusion proof of leaf @m in the tree of the first @n of @leaves.
 * @leaves: leaf hashes
 * @n:      tree size, at least 1
 * @m:      leaf index, below @n
 * @path:   receives the audit path, leaf level first (at most SEAL_MAX_PATH hashes)
 *
 * Return: the number of hashes, or -EINVAL for @m >= @n.
 */
int seal_merkle__path(const uint8_t (*leaves)[VBTS_SEAL_HASH_SIZE], uint64_t n, uint64_t m,
		      uint8_t path[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE]);

/**
 * seal_merkle__verify() - RFC 9162's check of an inclusion proof.
 * @leaf:  the leaf's hash
 * @m:     its index
 * @n:     the tree's size
 * @path:  the audit path
 * @len:   its hashes
 * @root:  the root it must lead to
 *
 * Return: true when @path leads from @leaf at @m to @root in a tree of @n leaves.
 */
bool seal_merkle__verify(const uint8_t leaf[VBTS_SEAL_HASH_SIZE], uint64_t m, uint64_t n,
			 const uint8_t (*path)[VBTS_SEAL_HASH_SIZE], unsigned int len,
			 const uint8_t root[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_keytree__root() - the key tree's root over 2^@log2 public keys.
 * @pks:  the public keys, epoch 0 first
 * @log2: log2 of their number
 * @out:  receives the root
 *
 * Return: 0 or -ENOMEM.
 */
int seal_keytree__root(const uint8_t (*pks)[VBTS_SEAL_PK_SIZE], unsigned int log2,
		       uint8_t out[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_keytree__path() - the authentication path of epoch @e's public key.
 * @pks:  the public keys
 * @log2: log2 of their number
 * @e:    the epoch
 * @path: receives @log2 hashes, leaf level first
 *
 * Return: 0, -EINVAL (@e out of range) or -ENOMEM.
 */
int seal_keytree__path(const uint8_t (*pks)[VBTS_SEAL_PK_SIZE], unsigned int log2, uint32_t e,
		       uint8_t (*path)[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_keytree__verify() - whether @pk is epoch @e's key of the key tree of @root.
 * @pk:   the public key
 * @e:    the epoch
 * @path: @log2 hashes
 * @log2: the tree's height
 * @root: its root
 *
 * Return: true when it is.
 */
bool seal_keytree__verify(const uint8_t pk[VBTS_SEAL_PK_SIZE], uint32_t e,
			  const uint8_t (*path)[VBTS_SEAL_HASH_SIZE], unsigned int log2,
			  const uint8_t root[VBTS_SEAL_HASH_SIZE]);

/**
 * seal_vk__seal() - fill in @vk->check.
 * @vk: the verification key
 */
void seal_vk__seal(struct vbts_seal_vk *vk);

/**
 * seal_vk__format() - the verification key's text form, VBTS_SEAL_VK_PREFIX and hex.
 * @vk:  the key
 * @buf: receives it
 * @len: its size, at least SEAL_VK_TEXT_SIZE
 */
#define SEAL_VK_TEXT_SIZE (sizeof(VBTS_SEAL_VK_PREFIX) + 2 * sizeof(struct vbts_seal_vk))
void seal_vk__format(const struct vbts_seal_vk *vk, char *buf, size_t len);

/**
 * seal_vk__parse() - a verification key from its text form (surrounding white space allowed).
 * @text: the text
 * @vk:   receives the key
 *
 * Return: 0, -EINVAL (not a verification key), -EBADMSG (its check bytes do not match: a typo),
 * -ERANGE (its parameters are out of range).
 */
int seal_vk__parse(const char *text, struct vbts_seal_vk *vk);

/**
 * seal_vk__equal() - whether two verification keys are the same key.
 * @a: one
 * @b: the other
 *
 * Return: true when they are.
 */
bool seal_vk__equal(const struct vbts_seal_vk *a, const struct vbts_seal_vk *b);

/**
 * seal_vk__epoch_of() - the epoch a time falls in.
 * @vk:      the key's parameters
 * @time_ns: CLOCK_REALTIME in ns
 *
 * Return: the epoch, or -1 before epoch 0 (after the last epoch: a number >= 2^log2).
 */
int64_t seal_vk__epoch_of(const struct vbts_seal_vk *vk, uint64_t time_ns);

#endif /* VBTS_COMMON_SEAL_HASH_H */
