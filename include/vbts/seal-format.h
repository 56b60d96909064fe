/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * seal-format.h - sealed traces (v1): the sealing key file, the verification key, a trace's
 * seal log and an inclusion proof; the one definition shared by the writer (vmm/record/
 * sealer.c), the reader (format/seal-verify.c) and the tests. doc/sealing.md explains them.
 *
 * Hashes are BLAKE2b-256 (libsodium crypto_generichash), signatures Ed25519. Every hash input
 * starts with a domain byte, so that no leaf, node, key leaf or key node can pass for another:
 *   leaf hash     H(0x00 || trace_id || leaf fields || name || content hash)   (seal_hash__leaf)
 *   tree node     H(0x01 || left || right)        the trace's Merkle tree (RFC 6962 shape)
 *   key leaf      H(0x02 || le32 epoch || public key of the epoch)
 *   key node      H(0x03 || left || right)        the key tree: 2^log2_epochs leaves
 *   seed step     H(0x04 || seed)                 seed of epoch i + 1 from seed of epoch i
 *   signing seed  H(0x05 || seed)                 the Ed25519 seed of epoch i
 *   checkpoint    H(0x06 || signed part)          what the next checkpoint's prev holds
 * All integers are little endian.
 */
#ifndef VBTS_SEAL_FORMAT_H
#define VBTS_SEAL_FORMAT_H

#include <stdint.h>

#define VBTS_SEAL_HASH_SIZE 32
#define VBTS_SEAL_PK_SIZE 32
#define VBTS_SEAL_SIG_SIZE 64
#define VBTS_SEAL_SEED_SIZE 32
#define VBTS_SEAL_TRACE_ID_SIZE 16

/* The key tree has 2^log2 epochs, log2 from 1 to VBTS_SEAL_MAX_LOG2_EPOCHS. */
#define VBTS_SEAL_MAX_LOG2_EPOCHS 20
#define VBTS_SEAL_DEFAULT_LOG2_EPOCHS 16
#define VBTS_SEAL_DEFAULT_EPOCH_S 900

/* ---- the sealing key file (secret, 0600): a header, then the public keys of every epoch */

#define VBTS_SEAL_KEY_MAGIC 0x59454b4c41455356ULL /* "VSEALKEY" read as little endian */
#define VBTS_SEAL_KEY_VERSION 1

/**
 * struct vbts_seal_key_header - the first 128 bytes of a sealing key file; 2^log2_epochs
 * public keys of VBTS_SEAL_PK_SIZE bytes follow (epoch 0 first). Only @epoch and @seed change,
 * rewritten in place when the key evolves: the seed of an earlier epoch is then gone.
 */
struct vbts_seal_key_header {
	uint64_t magic;       /* 0x00 VBTS_SEAL_KEY_MAGIC */
	uint32_t version;     /* 0x08 VBTS_SEAL_KEY_VERSION */
	uint32_t header_size; /* 0x0c sizeof(struct vbts_seal_key_header) */
	uint64_t start_s;     /* 0x10 start of epoch 0, seconds since 1970 (UTC) */
	uint32_t epoch_s;     /* 0x18 length of an epoch in seconds */
	uint32_t log2_epochs; /* 0x1c the key has 2^log2_epochs epochs */
	uint32_t epoch;       /* 0x20 the epoch @seed belongs to */
	uint32_t reserved0;   /* 0x24 zero */
	uint8_t seed[VBTS_SEAL_SEED_SIZE];    /* 0x28 seed of @epoch */
	uint8_t root[VBTS_SEAL_HASH_SIZE];    /* 0x48 the key tree's root */
	uint8_t reserved[128 - 0x68];         /* 0x68 zero */
};

_Static_assert(sizeof(struct vbts_seal_key_header) == 128, "sealing key header size");
_Static_assert(__builtin_offsetof(struct vbts_seal_key_header, seed) == 0x28, "ABI");
_Static_assert(__builtin_offsetof(struct vbts_seal_key_header, root) == 0x48, "ABI");

/* ---- the verification key: what a verifier must trust, printable as one line */

/**
 * struct vbts_seal_vk - the verification key: written as VBTS_SEAL_VK_PREFIX and the hex of
 * these 56 bytes.
 */
struct vbts_seal_vk {
	uint64_t start_s;     /* 0x00 as in the key file */
	uint32_t epoch_s;     /* 0x08 */
	uint32_t log2_epochs; /* 0x0c */
	uint8_t root[VBTS_SEAL_HASH_SIZE]; /* 0x10 the key tree's root */
	uint8_t check[8];     /* 0x30 the first 8 bytes of H(0x07 || bytes 0x00-0x2f): typos */
};

_Static_assert(sizeof(struct vbts_seal_vk) == 56, "verification key size");
#define VBTS_SEAL_VK_PREFIX "vbts-vk1-"

/* ---- the seal log: DIR/seal.log, a header, then records, only ever appended */

#define VBTS_SEAL_LOG_NAME "seal.log"
#define VBTS_SEAL_LOG_MAGIC 0x474f4c4c41455356ULL /* "VSEALLOG" */
#define VBTS_SEAL_LOG_VERSION 1

/**
 * struct vbts_seal_log_header - the first 96 bytes of seal.log.
 */
struct vbts_seal_log_header {
	uint64_t magic;       /* 0x00 VBTS_SEAL_LOG_MAGIC */
	uint32_t version;     /* 0x08 VBTS_SEAL_LOG_VERSION */
	uint32_t header_size; /* 0x0c sizeof(struct vbts_seal_log_header) */
	uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE]; /* 0x10 random, in every leaf and checkpoint */
	struct vbts_seal_vk vk; /* 0x20 the verification key the trace claims (checked against
				 * the one the verifier is given) */
	uint8_t reserved[96 - 0x58]; /* 0x58 zero */
};

_Static_assert(sizeof(struct vbts_seal_log_header) == 96, "seal log header size");
_Static_assert(__builtin_offsetof(struct vbts_seal_log_header, vk) == 0x20, "ABI");

/* enum vbts_seal_rec_type: what a record of the seal log is. */
enum vbts_seal_rec_type {
	VBTS_SEAL_REC_LEAF = 1,       /* struct vbts_seal_leaf and its name */
	VBTS_SEAL_REC_CHECKPOINT = 2, /* struct vbts_seal_checkpoint and its key path */
};

/**
 * struct vbts_seal_rec - the head of every record; @size counts the head, a multiple of 8.
 */
struct vbts_seal_rec {
	uint32_t type; /* enum vbts_seal_rec_type */
	uint32_t size; /* bytes of the record, this head included, at most VBTS_SEAL_REC_MAX */
};

_Static_assert(sizeof(struct vbts_seal_rec) == 8, "seal record head size");

#define VBTS_SEAL_REC_MAX 4096

/* enum vbts_seal_leaf_kind: how a leaf covers its file. */
enum vbts_seal_leaf_kind {
	VBTS_SEAL_LEAF_APPEND = 1, /* bytes [offset, offset + length) appended to the file */
	VBTS_SEAL_LEAF_WHOLE = 2,  /* the whole file (offset 0): replaces what was sealed before */
};

/* The writer may still change the file in place (a ring, a segment not yet in its final form):
 * in a trace that did not end, a difference is an unsealed change, not tampering. */
#define VBTS_SEAL_LEAF_F_LIVE (1U << 0)

#define VBTS_SEAL_NAME_MAX 512

/**
 * struct vbts_seal_leaf - one leaf of the trace's tree: a file's bytes; @name_len bytes of
 * its path (relative to the trace directory, '/'-separated, no "." or ".." part) follow,
 * then zero padding to 8.
 */
struct vbts_seal_leaf {
	uint64_t index;    /* 0x00 leaf number, from 0 */
	uint64_t offset;   /* 0x08 first byte covered */
	uint64_t length;   /* 0x10 bytes covered */
	uint16_t kind;     /* 0x18 enum vbts_seal_leaf_kind */
	uint16_t flags;    /* 0x1a VBTS_SEAL_LEAF_F_* */
	uint16_t name_len; /* 0x1c 1 to VBTS_SEAL_NAME_MAX */
	uint16_t reserved; /* 0x1e zero */
	uint8_t hash[VBTS_SEAL_HASH_SIZE]; /* 0x20 H(the bytes covered) */
};

_Static_assert(sizeof(struct vbts_seal_leaf) == 64, "seal leaf size");
_Static_assert(__builtin_offsetof(struct vbts_seal_leaf, hash) == 0x20, "ABI");

/* enum vbts_seal_reason: why a checkpoint was written. */
enum vbts_seal_reason {
	VBTS_SEAL_REASON_START = 1,    /* the trace directory was created */
	VBTS_SEAL_REASON_SEGMENT = 2,  /* a segment was closed */
	VBTS_SEAL_REASON_CRASH = 3,    /* a crash report, or a ring frozen (wrap mode) */
	VBTS_SEAL_REASON_INTERVAL = 4, /* --seal-interval elapsed */
	VBTS_SEAL_REASON_END = 5,      /* the run ended: the last checkpoint */
};

#define VBTS_SEAL_SIGN_DOMAIN "vbts-seal-checkpoint-v1"

/**
 * struct vbts_seal_checkpoint - a signed tree head. The signature is over
 * VBTS_SEAL_SIGN_DOMAIN (with its NUL) and bytes 0x00-0x8f of this struct; @path_len key-tree
 * hashes (the authentication path of @pubkey, leaf level first) follow.
 */
struct vbts_seal_checkpoint {
	uint64_t seq;        /* 0x00 checkpoint number, from 0 */
	uint64_t tree_size;  /* 0x08 leaves covered: all the leaves before it in the log */
	uint64_t time_ns;    /* 0x10 CLOCK_REALTIME when signed */
	uint32_t epoch;      /* 0x18 the key epoch it was signed in */
	uint32_t reason;     /* 0x1c enum vbts_seal_reason */
	uint8_t trace_id[VBTS_SEAL_TRACE_ID_SIZE]; /* 0x20 as in the header */
	uint8_t root[VBTS_SEAL_HASH_SIZE];  /* 0x30 the tree's root over @tree_size leaves */
	uint8_t prev[VBTS_SEAL_HASH_SIZE];  /* 0x50 H(0x06 || the previous checkpoint's signed
					     * part), zero for the first */
	uint8_t pubkey[VBTS_SEAL_PK_SIZE];  /* 0x70 the public key of @epoch (0x90: end of the
					     * signed part) */
	uint8_t sig[VBTS_SEAL_SIG_SIZE];    /* 0x90 */
	uint32_t path_len;   /* 0xd0 the key tree's log2_epochs */
	uint32_t reserved;   /* 0xd4 zero */
};

#define VBTS_SEAL_SIGNED_SIZE 0x90
_Static_assert(sizeof(struct vbts_seal_checkpoint) == 0xd8, "seal checkpoint size");
_Static_assert(__builtin_offsetof(struct vbts_seal_checkpoint, sig) == VBTS_SEAL_SIGNED_SIZE,
	       "signed part");

/* ---- an inclusion proof: one file of a sealed trace, alone */

#define VBTS_SEAL_PROOF_MAGIC 0x464f4f5250535456ULL /* "VTSPROOF" */
#define VBTS_SEAL_PROOF_VERSION 1
/* A proof holds at most this many leaves (a file appended to more often is not provable). */
#define VBTS_SEAL_PROOF_MAX_LEAVES 4096

/**
 * struct vbts_seal_proof_header - a proof file: this header, the checkpoint record (struct
 * vbts_seal_rec, struct vbts_seal_checkpoint, its key path) as in the seal log, then
 * @nr_leaves times: the leaf record as in the seal log, a le32 count of audit path hashes
 * (at most 64), a le32 zero and the hashes (RFC 9162 inclusion proof, leaf level first).
 */
struct vbts_seal_proof_header {
	uint64_t magic;       /* 0x00 VBTS_SEAL_PROOF_MAGIC */
	uint32_t version;     /* 0x08 VBTS_SEAL_PROOF_VERSION */
	uint32_t header_size; /* 0x0c sizeof(struct vbts_seal_proof_header) */
	struct vbts_seal_vk vk; /* 0x10 the key the trace claims */
	uint32_t nr_leaves;   /* 0x48 1 to VBTS_SEAL_PROOF_MAX_LEAVES */
	uint32_t reserved;    /* 0x4c zero */
};

_Static_assert(sizeof(struct vbts_seal_proof_header) == 0x50, "proof header size");
_Static_assert(__builtin_offsetof(struct vbts_seal_proof_header, nr_leaves) == 0x48, "ABI");

#endif /* VBTS_SEAL_FORMAT_H */
