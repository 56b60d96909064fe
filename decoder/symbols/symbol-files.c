// SPDX-License-Identifier: GPL-2.0
/*
 * symbol-files.c - the ELF files of --symbols PATHs: a bounded search of directories, an
 * index of the files by build ID, path and name.
 *
 * The search sorts each directory's names (strcmp) before it goes on, so the files kept, and
 * the path a file reached through several links is kept under, do not depend on the order
 * the file system lists them in. Directories already searched are kept in a tree of (device,
 * inode): each is searched once.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "input-file.h"
#include "symbol-files.h"

/* Escaped text of one file name quoted in a warning, at most. */
#define QUOTE_MAX 256

struct index_entry {
	const char *key;
	size_t file;
};

struct symbol_files {
	struct symbol_file **files;     /* in the order found */
	size_t nr, alloc;
	/* Per key: the files sorted by (key, path); a file has two path keys at most. */
	struct index_entry *index[SYMBOL_FILES_KEYS];
	size_t nr_index[SYMBOL_FILES_KEYS];
	bool indexed;
	void *dirs;                     /* tsearch tree of the directories searched */
	bool files_cut;                 /* SYMBOL_FILES_MAX reached */
	void (*warn)(void *warn_ctx, const char *line);
	void *warn_ctx;
};

struct file_id {
	dev_t dev;
	ino_t ino;
};

/* One problem of a search: how many times, and the first (already escaped). */
struct problem {
	uint64_t count;
	char first[QUOTE_MAX + 64];
};

/* The state of the search of one PATH. */
struct scan {
	struct symbol_files *sf;
	const char *root;               /* PATH as given, for the warnings */
	char path[PATH_MAX];            /* the file or directory at hand */
	size_t root_len;                /* PATH's part of @path */
	struct file_id stack[SYMBOL_FILES_DEPTH_MAX + 1]; /* the directories being searched */
	unsigned int depth;
	uint64_t entries;
	bool entries_cut, depth_cut;
	struct problem loops, unreadable, dirs, too_large, too_long;
};

static void __attribute__((format(printf, 2, 3))) warn(struct symbol_files *sf,
						       const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!sf->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sf->warn(sf->warn_ctx, line);
}

static void __attribute__((format(printf, 2, 3))) note(struct problem *p, const char *fmt, ...)
{
	va_list ap;

	if (p->count++)
		return;
	va_start(ap, fmt);
	vsnprintf(p->first, sizeof(p->first), fmt, ap);
	va_end(ap);
}

struct symbol_files *symbol_files__new(void (*warn_fn)(void *warn_ctx, const char *line),
				       void *warn_ctx)
{
	struct symbol_files *sf = calloc(1, sizeof(*sf));

	if (!sf)
		return NULL;
	sf->warn = warn_fn;
	sf->warn_ctx = warn_ctx;
	return sf;
}

static int cmp_id(const void *a, const void *b)
{
	const struct file_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Records a directory as searched; 1 when it was already, 0 when new, -ENOMEM. */
static int dir_seen(struct symbol_files *sf, const struct stat *st)
{
	struct file_id *id = malloc(sizeof(*id)), **node;

	if (!id)
		return -ENOMEM;
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	node = tsearch(id, &sf->dirs, cmp_id);
	if (!node) {
		free(id);
		return -ENOMEM;
	}
	if (*node != id) {
		free(id);
		return 1;
	}
	return 0;
}

/* Keeps the ELF file @path in the set. Returns 0, or -ENOMEM. */
static int keep_file(struct symbol_files *sf, const char *path, const char *guest_path,
		     const struct stat *st, const struct symbols_file_info *info)
{
	struct symbol_file *f;
	size_t plen = strlen(path) + 1, glen = guest_path ? strlen(guest_path) + 1 : 0;
	const char *slash;

	if (sf->nr == SYMBOL_FILES_MAX) {
		sf->files_cut = true;
		return 0;
	}
	if (sf->nr == sf->alloc) {
		size_t alloc = sf->alloc ? 2 * sf->alloc : 64;
		struct symbol_file **p = realloc(sf->files, alloc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sf->files = p;
		sf->alloc = alloc;
	}
	f = calloc(1, sizeof(*f) + plen + glen);
	if (!f)
		return -ENOMEM;
	f->path = memcpy((char *)(f + 1), path, plen);
	if (guest_path)
		f->guest_path = memcpy((char *)(f + 1) + plen, guest_path, glen);
	slash = strrchr(f->path, '/');
	f->name = slash ? slash + 1 : f->path;
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
	f->info = *info;
	sf->files[sf->nr++] = f;
	sf->indexed = false;
	return 0;
}

/*
 * Probes the regular file @path: 1 when it is an ELF executable or shared object (kept),
 * 0 when it is something else, -ENOEXEC when its ELF headers cannot be read, -errno when it
 * cannot be opened (input_file__open()), -ENOMEM.
 */
static int probe_file(struct symbol_files *sf, const char *path, const char *guest_path,
		      char *err, size_t errlen)
{
	struct symbols_file_info info;
	unsigned char magic[SELFMAG];
	struct stat st;
	int fd, ret;

	fd = input_file__open(path, SYMBOLS_FILE_MAX, &st, err, errlen);
	if (fd < 0)
		return fd;
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, ELFMAG, SELFMAG)) {
		ret = 0;
		goto out;
	}
	ret = symbols__probe_fd(fd, &info);
	if (ret)
		goto out;
	ret = 0;
	if (info.type == ET_EXEC || info.type == ET_DYN)
		ret = keep_file(sf, path, guest_path, &st, &info) ?: 1;
out:
	close(fd);
	return ret;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of an open directory, sorted, at most @budget of them; NULL with errno set. */
static char **read_names(DIR *d, uint64_t budget, size_t *nr, bool *cut)
{
	char **names = NULL, **p;
	size_t n = 0, alloc = 0;
	struct dirent *de;

	*cut = false;
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == budget) {
			*cut = true;
			break;
		}
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 32;
			p = realloc(names, alloc * sizeof(*p));
			if (!p)
				goto err_free;
			names = p;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto err_free;
		n++;
		errno = 0;
	}
	if (errno)
		goto err_free;
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_name);
	*nr = n;
	return names ? names : calloc(1, sizeof(*names));

err_free:
	while (n)
		free(names[--n]);
	free(names);
	if (!errno)
		errno = ENOMEM;
	return NULL;
}

static int scan_dir(struct scan *sc);

/* The entry @sc->path (a name inside the directory being searched). */
static int scan_entry(struct scan *sc)
{
	char q[QUOTE_MAX], err[64];
	struct stat st;
	unsigned int i;
	int ret;

	if (stat(sc->path, &st))
		return 0;       /* a dangling link, or gone since: nothing to read */
	if (S_ISREG(st.st_mode)) {
		ret = probe_file(sc->sf, sc->path, sc->path + sc->root_len, NULL, 0);
		if (ret == -ENOEXEC)
			note(&sc->unreadable, "%s", escape__str(q, sizeof(q), sc->path));
		else if (ret == -EFBIG)
			note(&sc->too_large, "%s", escape__str(q, sizeof(q), sc->path));
		return ret == -ENOMEM ? ret : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;       /* FIFOs, devices, sockets: never opened */
	for (i = 0; i < sc->depth; i++) {
		if (sc->stack[i].dev == st.st_dev && sc->stack[i].ino == st.st_ino) {
			note(&sc->loops, "%s", escape__str(q, sizeof(q), sc->path));
			return 0;
		}
	}
	ret = dir_seen(sc->sf, &st);
	if (ret)
		return ret < 0 ? ret : 0;
	if (sc->depth > SYMBOL_FILES_DEPTH_MAX) {
		sc->depth_cut = true;
		return 0;
	}
	ret = scan_dir(sc);
	if (ret > 0) {
		snprintf(err, sizeof(err), "%s", strerror(ret));
		note(&sc->dirs, "%s: %s", escape__str(q, sizeof(q), sc->path), err);
		ret = 0;
	}
	return ret;
}

/*
 * Searches the directory @sc->path, whose (device, inode) was just recorded. Returns 0,
 * -ENOMEM, or a positive errno when the directory cannot be read.
 */
static int scan_dir(struct scan *sc)
{
	size_t len = strlen(sc->path), nr = 0, i;
	struct stat st;
	char **names;
	bool cut;
	DIR *d;
	int ret = 0;

	d = opendir(sc->path);
	if (!d)
		return errno == ENOMEM ? -ENOMEM : errno;
	if (fstat(dirfd(d), &st)) {
		ret = errno;
		closedir(d);
		return ret;
	}
	names = read_names(d, SYMBOL_FILES_ENTRIES_MAX - sc->entries, &nr, &cut);
	ret = errno;
	closedir(d);
	if (!names)
		return ret == ENOMEM ? -ENOMEM : ret;
	ret = 0;
	sc->entries += nr;
	sc->entries_cut |= cut;
	sc->stack[sc->depth].dev = st.st_dev;
	sc->stack[sc->depth].ino = st.st_ino;
	sc->depth++;
	for (i = 0; i < nr && !ret; i++) {
		if (len + 1 + strlen(names[i]) >= sizeof(sc->path)) {
			char q[QUOTE_MAX];

			note(&sc->too_long, "%s", escape__str(q, sizeof(q), names[i]));
			continue;
		}
		sc->path[len] = '/';
		strcpy(sc->path + len + 1, names[i]);
		ret = scan_entry(sc);
		sc->path[len] = '\0';
	}
	sc->depth--;
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	return ret;
}

/* One line per kind of problem of the search of @sc->root. */
static void report(struct scan *sc)
{
	struct symbol_files *sf = sc->sf;
	char root[QUOTE_MAX];

	escape__str(root, sizeof(root), sc->root);
	if (sc->loops.count)
		warn(sf, "%s: %" PRIu64 " symbolic link%s back to a directory being searched, "
		     "not followed (the first: %s)", root, sc->loops.count,
		     sc->loops.count == 1 ? "" : "s", sc->loops.first);
	if (sc->unreadable.count)
		warn(sf, "%s: %" PRIu64 " ELF file%s whose headers cannot be read, skipped "
		     "(the first: %s)", root, sc->unreadable.count,
		     sc->unreadable.count == 1 ? "" : "s", sc->unreadable.first);
	if (sc->too_large.count)
		warn(sf, "%s: %" PRIu64 " file%s larger than %llu bytes, not read (the first: %s)",
		     root, sc->too_large.count, sc->too_large.count == 1 ? "" : "s",
		     SYMBOLS_FILE_MAX, sc->too_large.first);
	if (sc->dirs.count)
		warn(sf, "%s: %" PRIu64 " director%s that cannot be read (the first: %s)", root,
		     sc->dirs.count, sc->dirs.count == 1 ? "y" : "ies", sc->dirs.first);
	if (sc->too_long.count)
		warn(sf, "%s: %" PRIu64 " path%s longer than %d bytes, not searched (the first "
		     "name: %s)", root, sc->too_long.count, sc->too_long.count == 1 ? "" : "s",
		     PATH_MAX - 1, sc->too_long.first);
	if (sc->depth_cut)
		warn(sf, "%s: directories more than %d levels down not searched", root,
		     SYMBOL_FILES_DEPTH_MAX);
	if (sc->entries_cut)
		warn(sf, "%s: more than %d directory entries, the rest not searched", root,
		     SYMBOL_FILES_ENTRIES_MAX);
}

int symbol_files__add(struct symbol_files *sf, const char *path, char *err, size_t errlen)
{
	bool cut_before = sf->files_cut;
	char q[QUOTE_MAX];
	struct scan *sc;
	struct stat st;
	size_t len;
	int ret;

	escape__str(q, sizeof(q), path);
	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", q, strerror(errno));
		return ret;
	}
	if (S_ISREG(st.st_mode)) {
		ret = probe_file(sf, path, NULL, err, errlen);
		if (ret == 0 || ret == -ENOEXEC) {
			snprintf(err, errlen, "%s: %s", q, ret ? "its ELF headers cannot be read" :
				 "not an ELF executable or shared object");
			return -ENOEXEC;
		}
		if (ret < 0 && ret != -ENOMEM) {
			/* input_file__open()'s line names the file unescaped. */
			snprintf(err, errlen, "%s: %s", q, strerror(-ret));
		}
		if (ret == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", q);
		return ret < 0 ? ret : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: neither a directory nor a regular file", q);
		return -EINVAL;
	}
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->sf = sf;
	sc->root = path;
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= sizeof(sc->path)) {
		snprintf(err, errlen, "%s: path too long", q);
		free(sc);
		return -ENAMETOOLONG;
	}
	memcpy(sc->path, path, len);
	sc->path[len] = '\0';
	/* Guest paths start at the '/' that follows PATH ("/" itself: at its own). */
	sc->root_len = len == 1 && path[0] == '/' ? 0 : len;
	ret = dir_seen(sf, &st);
	if (ret == 0) {
		ret = scan_dir(sc);
		if (ret > 0) {
			snprintf(err, errlen, "%s: %s", q, strerror(ret));
			ret = -ret;
		}
	} else if (ret > 0) {
		ret = 0; /* searched already, as a part of another PATH */
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", q);
	if (!ret) {
		report(sc);
		if (sf->files_cut && !cut_before)
			warn(sf, "%s: more than %d ELF files in all, the rest not kept", q,
			     SYMBOL_FILES_MAX);
	}
	free(sc);
	return ret;
}

size_t symbol_files__nr(const struct symbol_files *sf)
{
	return sf->nr;
}

/* ---- index -------------------------------------------------------------------------------- */

/* The index being sorted: qsort() gives its comparison no context. */
struct sort_ctx_entry {
	struct index_entry e;
	const char *path;
};

static int cmp_index(const void *a, const void *b)
{
	const struct sort_ctx_entry *x = a, *y = b;
	int c = strcmp(x->e.key, y->e.key);

	return c ? c : strcmp(x->path, y->path);
}

static int build_key_index(struct symbol_files *sf, enum symbol_files_key key)
{
	struct sort_ctx_entry *tmp;
	size_t n = 0, i;

	free(sf->index[key]);
	sf->index[key] = NULL;
	sf->nr_index[key] = 0;
	if (!sf->nr)
		return 0;
	tmp = malloc(2 * sf->nr * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (i = 0; i < sf->nr; i++) {
		const struct symbol_file *f = sf->files[i];

		switch (key) {
		case SYMBOL_FILES_BUILD_ID:
			if (f->info.build_id[0])
				tmp[n++] = (struct sort_ctx_entry){ { f->info.build_id, i },
								    f->path };
			break;
		case SYMBOL_FILES_PATH:
			tmp[n++] = (struct sort_ctx_entry){ { f->path, i }, f->path };
			if (f->guest_path && strcmp(f->guest_path, f->path))
				tmp[n++] = (struct sort_ctx_entry){ { f->guest_path, i }, f->path };
			break;
		default:
			tmp[n++] = (struct sort_ctx_entry){ { f->name, i }, f->path };
			break;
		}
	}
	if (n > 1)
		qsort(tmp, n, sizeof(*tmp), cmp_index);
	sf->index[key] = malloc((n ? n : 1) * sizeof(*sf->index[key]));
	if (!sf->index[key]) {
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		sf->index[key][i] = tmp[i].e;
	sf->nr_index[key] = n;
	free(tmp);
	return 0;
}

/* Deferred to the first match; without memory for an index, nothing matches by its key. */
static void ensure_indexed(const struct symbol_files *csf)
{
	struct symbol_files *sf = (struct symbol_files *)csf;

	if (sf->indexed)
		return;
	for (int k = 0; k < SYMBOL_FILES_KEYS; k++)
		if (build_key_index(sf, k))
			sf->nr_index[k] = 0;
	sf->indexed = true;
}

size_t symbol_files__match(const struct symbol_files *sf, enum symbol_files_key key,
			   const char *value, size_t len, const struct symbol_file **out,
			   size_t max)
{
	const struct index_entry *ix;
	size_t lo = 0, hi, n = 0;

	ensure_indexed(sf);
	ix = sf->index[key];
	hi = sf->nr_index[key];
	/* The first key not below @value in its first @len bytes. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strncmp(ix[mid].key, value, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < sf->nr_index[key] && !strncmp(ix[lo].key, value, len); lo++, n++)
		if (n < max)
			out[n] = sf->files[ix[lo].file];
	return n;
}

void symbol_files__free(struct symbol_files *sf)
{
	size_t i;

	if (!sf)
		return;
	for (i = 0; i < sf->nr; i++)
		free(sf->files[i]);
	free(sf->files);
	for (int k = 0; k < SYMBOL_FILES_KEYS; k++)
		free(sf->index[k]);
	tdestroy(sf->dirs, free);
	free(sf);
}
