/* SPDX-License-Identifier: GPL-2.0 */
/*
 * seal-key.h - the forward-secure sealing key (vbts/seal-format.h): made by vbts keygen,
 * evolved and used by the sealer. The seed of epoch i + 1 is a one-way hash of the seed of
 * epoch i; each epoch signs with an Ed25519 key made from its seed; the verification key is
 * the root of a Merkle tree over every epoch's public key. Evolving rewrites the key file's
 * seed in place and erases the old one from memory: a key taken today cannot sign an earlier
 * epoch.
 */
#ifndef VBTS_VMM_SEAL_KEY_H
#define VBTS_VMM_SEAL_KEY_H

#include <stddef.h>
#include <stdint.h>

#include <vbts/seal-format.h>

struct seal_key;

/* Where vbts keygen writes by default. */
#define SEAL_KEY_DEFAULT_DIR "/var/lib/vbts/keys"
#define SEAL_KEY_FILE "seal.key"
#define SEAL_KEY_VERIFY_FILE "verify.key"

/**
 * seal_key__generate() - write a new key pair: @dir/seal.key (mode 0600) and @dir/verify.key
 * (the verification key as one line); @dir is made (0700) when missing.
 * @dir:         the directory
 * @epoch_s:     seconds per epoch, at least 1
 * @log2_epochs: the key has 2^log2_epochs epochs, 1 to VBTS_SEAL_MAX_LOG2_EPOCHS
 * @start_s:     start of epoch 0, seconds since 1970
 * @vk:          receives the verification key
 * @err:         receives one line on failure
 * @errlen:      its size
 *
 * Return: 0, -EEXIST (a key is there already: never overwritten), -EINVAL (a parameter out of
 * range), -EIO (libsodium), or the failing call's -errno.
 */
int seal_key__generate(const char *dir, uint32_t epoch_s, unsigned int log2_epochs,
		       uint64_t start_s, struct vbts_seal_vk *vk, char *err, size_t errlen);

/**
 * seal_key__open() - open a sealing key file for sealing (read and write: it evolves).
 * @path:   the file
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: the key, or NULL with errno set: EACCES (also: readable by group or others),
 * EINVAL (not a sealing key, or its public keys do not make its root), ENOMEM, or the
 * failing call's errno.
 */
struct seal_key *seal_key__open(const char *path, char *err, size_t errlen);

/**
 * seal_key__vk() - the verification key of @k.
 * @k:  key
 * @vk: receives it
 */
void seal_key__vk(const struct seal_key *k, struct vbts_seal_vk *vk);

/**
 * seal_key__sign() - sign a checkpoint with the key of the epoch of @cp->time_ns: evolve the
 * key to it first (rewriting the file), then fill in @cp's epoch, pubkey, sig and path_len.
 * @k:      key
 * @cp:     the checkpoint, all its other signed fields set
 * @path:   receives the key path, VBTS_SEAL_MAX_LOG2_EPOCHS hashes of room
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, -ERANGE (the time is before the key's epoch 0 or after its last epoch, or before
 * the epoch the key has already evolved to: the earlier seeds are gone), -EIO (the key file
 * could not be rewritten: nothing is signed), -ENOMEM.
 */
int seal_key__sign(struct seal_key *k, struct vbts_seal_checkpoint *cp,
		   uint8_t (*path)[VBTS_SEAL_HASH_SIZE], char *err, size_t errlen);

/**
 * seal_key__close() - erase the seed from memory, close the file.
 * @k: may be NULL
 */
void seal_key__close(struct seal_key *k);

#endif /* VBTS_VMM_SEAL_KEY_H */
