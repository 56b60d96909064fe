/* SPDX-License-Identifier: GPL-2.0 */
/*
 * elf-store.h - the build-ID keyed store of ELF files uploaded by the guest agent:
 * DIR/debuginfod/<build-id>/executable, debuginfod's cache layout. Every upload is untrusted:
 * bounded in size and number, and kept only when its GNU build ID note is the announced one.
 */
#ifndef VBTS_VMM_ELF_STORE_H
#define VBTS_VMM_ELF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_store;

/**
 * struct elf_store_limits - what one run accepts.
 * @file_max:  bytes per file
 * @total_max: bytes of all stored files
 * @files_max: files stored
 */
struct elf_store_limits {
	uint64_t file_max;
	uint64_t total_max;
	unsigned int files_max;
};

/**
 * struct elf_store_stats - what became of the uploads.
 * @stored:       files verified and stored
 * @bytes:        their bytes
 * @bad_id:       begins whose build ID is not 2-64 lowercase hex digits
 * @too_big:      begins over the per-file limit, or of size 0
 * @over_budget:  begins past the total bytes or files limit
 * @duplicate:    begins of a build ID already stored
 * @abandoned:    uploads left unfinished by a new begin or the end of the run
 * @bad_data:     chunks with no upload, out of order, past the announced size, or an end
 *                before all bytes came (the upload is dropped)
 * @mismatch:     complete files that are not ELF or whose build ID note differs
 * @io_errors:    files that could not be written
 */
struct elf_store_stats {
	uint64_t stored;
	uint64_t bytes;
	uint64_t bad_id;
	uint64_t too_big;
	uint64_t over_budget;
	uint64_t duplicate;
	uint64_t abandoned;
	uint64_t bad_data;
	uint64_t mismatch;
	uint64_t io_errors;
};

/**
 * elf_store__valid_build_id() - whether @hex may name a build ID (and a directory): 2 to
 * VBTS_AGENT_BUILD_ID_MAX lowercase hex digits, an even count, nothing else.
 * @hex: NUL-terminated
 *
 * Return: true when valid.
 */
bool elf_store__valid_build_id(const char *hex);

/**
 * elf_store__build_id() - the GNU build ID of an ELF image in memory, as lowercase hex.
 * @buf: the image
 * @len: its bytes
 * @hex: receives the hex digits, NUL-terminated
 * @hexlen: size of @hex (2 * VBTS_AGENT_BUILD_ID_MAX + 1 is enough for any accepted ID)
 *
 * Return: 0; -ENOEXEC when @buf is not an ELF file, -ENOENT when it has no GNU build ID note
 * (or one too long for @hex).
 */
int elf_store__build_id(const void *buf, size_t len, char *hex, size_t hexlen);

/**
 * elf_store__create() - a store under @dir/debuginfod (created on the first stored file).
 * @dir: the trace directory
 * @lim: limits; NULL for the VBTS_AGENT_ELF_* defaults of vbts/agent-proto.h
 *
 * Return: the store, or NULL with errno ENOMEM.
 */
struct elf_store *elf_store__create(const char *dir, const struct elf_store_limits *lim);

/**
 * elf_store__destroy() - free; an unfinished upload is dropped (counted abandoned).
 * @s: may be NULL
 */
void elf_store__destroy(struct elf_store *s);

/**
 * elf_store__begin() - start receiving a file (abandons an unfinished one).
 * @s:        store
 * @build_id: as announced
 * @size:     bytes announced
 *
 * Return: 0; -EINVAL bad build ID, -EFBIG size 0 or over the file limit, -ENOSPC over the
 * budget, -EEXIST already stored, -ENOMEM.
 */
int elf_store__begin(struct elf_store *s, const char *build_id, uint64_t size);

/**
 * elf_store__data() - the next chunk of the file being received.
 * @s:   store
 * @off: its offset: must be the count of bytes received so far
 * @buf: bytes
 * @len: their count
 *
 * Return: 0; -EPROTO (no upload, wrong offset, past the announced size: the upload is dropped).
 */
int elf_store__data(struct elf_store *s, uint64_t off, const void *buf, size_t len);

/**
 * elf_store__end() - verify and store the file being received.
 * @s:  store
 * @id: receives the stored build ID (2 * VBTS_AGENT_BUILD_ID_MAX + 1 bytes) on success; may
 *      be NULL
 * @size: receives its size on success; may be NULL
 *
 * Return: 0 stored; -EPROTO no upload or bytes missing, -EBADMSG not ELF or another build ID,
 * -EIO (or another -errno) when it could not be written. The upload is over either way.
 */
int elf_store__end(struct elf_store *s, char *id, uint64_t *size);

/**
 * elf_store__stats() - copy the counters.
 * @s:     store
 * @stats: filled in
 */
void elf_store__stats(const struct elf_store *s, struct elf_store_stats *stats);

#endif /* VBTS_VMM_ELF_STORE_H */
