/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbol-files.h - the ELF files `vbts decode --symbols PATH` names, indexed by GNU build ID,
 * by path and by name. Each PATH is an ELF file or a directory searched recursively.
 *
 * Only executables and shared objects (ET_EXEC, ET_DYN) are kept, and only their headers are
 * read here (symbols__probe_fd()): their symbols are loaded when a task uses them
 * (symbolizer.h). Every file is opened through input_file__open() (a regular file of at most
 * SYMBOLS_FILE_MAX bytes, never a FIFO or a device).
 *
 * A directory may hold anything, symbolic links that loop included: symbolic links are
 * followed, a directory is searched once however many ways lead to it, a link back to a
 * directory being searched is reported and not followed, and the search is bounded in depth,
 * in directory entries and in files kept. What is left out is reported (at most a few lines
 * per PATH); files that are not ELF are skipped without a word.
 */
#ifndef VBTS_DECODER_SYMBOL_FILES_H
#define VBTS_DECODER_SYMBOL_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

/* Directory levels searched below a PATH. */
#define SYMBOL_FILES_DEPTH_MAX 16
/* Directory entries examined per PATH: /usr/lib/debug of a whole system has fewer. */
#define SYMBOL_FILES_ENTRIES_MAX 500000
/* ELF files kept in all. */
#define SYMBOL_FILES_MAX 50000

/**
 * struct symbol_file - one ELF file found.
 * @path:       its path on this host, as given or found (PATH/sub/dir/name)
 * @guest_path: for a file found in a directory, its path below that directory with a leading
 *              '/' (the path the file has in a guest whose root file system the directory
 *              is); NULL for a file named by PATH itself
 * @name:       its base name
 * @dev, @ino:  its identity: two entries with the same are one file reached by two paths
 * @info:       what its headers say: type, build ID, symbol table, DWARF
 */
struct symbol_file {
	const char *path;
	const char *guest_path;
	const char *name;
	uint64_t dev, ino;
	struct symbols_file_info info;
};

enum symbol_files_key {
	SYMBOL_FILES_BUILD_ID,  /* info.build_id, lowercase hex */
	SYMBOL_FILES_PATH,      /* path or guest_path */
	SYMBOL_FILES_NAME,      /* name */
	SYMBOL_FILES_KEYS
};

struct symbol_files;

/**
 * symbol_files__new() - an empty set.
 * @warn:     called with one line per problem that leaves part of a PATH unsearched (guest
 *            file names in it escaped), or NULL
 * @warn_ctx: its argument
 *
 * Return: the set, or NULL with errno = ENOMEM.
 */
struct symbol_files *symbol_files__new(void (*warn)(void *warn_ctx, const char *line),
				       void *warn_ctx);

/**
 * symbol_files__add() - add the ELF files of one PATH.
 * @sf:     set
 * @path:   an ELF file, or a directory searched recursively
 * @err:    receives one error line when PATH itself cannot be used
 * @errlen: size of @err
 *
 * Return: 0 (problems inside a directory are warnings), or -errno when PATH cannot be used:
 * the errors of stat(2) (-ENOENT, ...), of opendir(3) and of input_file__open(), -EINVAL for
 * something that is neither a directory nor a regular file, -ENOEXEC for a file that is not an
 * ELF executable or shared object, -ENOMEM.
 */
int symbol_files__add(struct symbol_files *sf, const char *path, char *err, size_t errlen);

/**
 * symbol_files__nr() - number of files kept.
 * @sf: set
 *
 * Return: the count.
 */
size_t symbol_files__nr(const struct symbol_files *sf);

/**
 * symbol_files__match() - the files whose @key is @value.
 * @sf:    set
 * @key:   SYMBOL_FILES_*
 * @value: the build ID (lowercase hex), the path or the name looked for
 * @len:   bytes of each compared at most: SIZE_MAX for whole strings, less to match names
 *         the way a truncated one does
 * @out:   receives up to @max of them, in the order of their paths
 * @max:   room in @out
 *
 * O(log n + matches).
 *
 * Return: the number of files that match (may be more than @max).
 */
size_t symbol_files__match(const struct symbol_files *sf, enum symbol_files_key key,
			   const char *value, size_t len, const struct symbol_file **out,
			   size_t max);

/**
 * symbol_files__free() - release the set.
 * @sf: set, may be NULL
 */
void symbol_files__free(struct symbol_files *sf);

#endif /* VBTS_DECODER_SYMBOL_FILES_H */
