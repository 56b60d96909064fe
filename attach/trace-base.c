// SPDX-License-Identifier: GPL-2.0
/*
 * trace-base.c - a trace directory per start under a base directory, and retention of the
 * oldest runs by count and bytes (trace-base.h).
 *
 * Only names trace_base__is_run() accepts are looked at; a run is removed without following
 * symbolic links (nftw FTW_PHYS), deepest first, so a link planted in a run never takes
 * retention outside it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "trace-base.h"

/* Open file descriptors nftw() may hold: a run is a few levels deep. */
#define WALK_FDS 16

struct run {
	char name[TRACE_BASE_NAME_MAX];
	uint64_t bytes;
};

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A decimal number of 1 to 10 digits, no leading zero; returns its end or NULL. */
static const char *number(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!n || n > 10 || (s[0] == '0' && n > 1))
		return NULL;
	return s + n;
}

bool trace_base__is_run(const char *name)
{
	const char *p;

	/* YYYYMMDDTHHMMSSZ- */
	if (strlen(name) < 18 || !digits(name, 8) || name[8] != 'T' || !digits(name + 9, 6) ||
	    name[15] != 'Z' || name[16] != '-')
		return false;
	p = number(name + 17);
	if (!p)
		return false;
	if (*p == '-') {
		p = number(p + 1);
		if (!p)
			return false;
	}
	return *p == '\0';
}

int trace_base__run_name(time_t when, int pid, unsigned int seq, char *buf, size_t len)
{
	struct tm tm;
	char stamp[32];
	int n;

	if (len < TRACE_BASE_NAME_MAX || pid < 0 || !gmtime_r(&when, &tm) ||
	    tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999 ||
	    !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	if (seq)
		n = snprintf(buf, len, "%s-%d-%u", stamp, pid, seq);
	else
		n = snprintf(buf, len, "%s-%d", stamp, pid);
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

size_t trace_base__plan(const uint64_t *bytes, size_t n, const struct trace_base_limits *lim)
{
	unsigned __int128 total = lim->reserve; /* no overflow: at most 2^16 runs of 2^64 */
	size_t drop = 0;

	for (size_t i = 0; i < n; i++)
		total += bytes[i];
	while (drop < n) {
		/* the runs kept, and the new one */
		bool over_count = lim->keep_runs && n - drop + 1 > lim->keep_runs;
		bool over_bytes = lim->keep_bytes && total > lim->keep_bytes;

		if (!over_count && !over_bytes)
			break;
		total -= bytes[drop++];
	}
	return drop;
}

/* nftw() has no context argument: the walk's sum, one walk at a time. */
static __thread uint64_t walk_bytes;

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	walk_bytes = sat_add(walk_bytes, (uint64_t)st->st_blocks * 512);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

static int cmp_run(const void *a, const void *b)
{
	return strcmp(((const struct run *)a)->name, ((const struct run *)b)->name);
}

/* mkdir -p with mode 0750 for what is made. */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0750) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0750) && errno != EEXIST)
		return -errno;
	return 0;
}

int trace_base__prune(const char *base, const struct trace_base_limits *lim, size_t *removed,
		      char *err, size_t errlen)
{
	struct run *runs = NULL, *grown;
	size_t n = 0, cap = 0, drop;
	uint64_t *bytes = NULL;
	struct dirent *de;
	struct stat st;
	char path[4096];
	DIR *d;
	int ret = 0;

	if (removed)
		*removed = 0;
	ret = make_dirs(base);
	if (ret < 0) {
		errmsg__set(err, errlen, "trace base %s: %s", base, strerror(-ret));
		return ret;
	}
	d = opendir(base);
	if (!d) {
		ret = -errno;
		errmsg__set(err, errlen, "trace base %s: %s", base, strerror(errno));
		return ret;
	}
	while ((de = readdir(d))) {
		if (!trace_base__is_run(de->d_name))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		if (n == TRACE_BASE_MAX_RUNS)
			break;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(runs, cap * sizeof(*runs));
			if (!grown) {
				ret = -ENOMEM;
				goto out;
			}
			runs = grown;
		}
		/* trace_base__is_run() bounds the name: 17 + 10 + 1 + 10 bytes */
		memcpy(runs[n].name, de->d_name, strlen(de->d_name) + 1);
		n++;
	}
	if (n == TRACE_BASE_MAX_RUNS)
		fprintf(stderr, "vbts: warning: trace base %s: more than %d runs, the rest are "
			"left alone\n", base, TRACE_BASE_MAX_RUNS);
	if (n)
		qsort(runs, n, sizeof(*runs), cmp_run);
	bytes = calloc(n ? n : 1, sizeof(*bytes));
	if (!bytes) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", base, runs[i].name);
		walk_bytes = 0;
		/* an unreadable part counts as what could be read */
		nftw(path, add_size, WALK_FDS, FTW_PHYS);
		bytes[i] = runs[i].bytes = walk_bytes;
	}
	drop = trace_base__plan(bytes, n, lim);
	for (size_t i = 0; i < drop; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", base, runs[i].name) >=
		    sizeof(path)) {
			ret = -ENAMETOOLONG;
			errmsg__set(err, errlen, "trace base %s: name too long", base);
			goto out;
		}
		if (nftw(path, remove_one, WALK_FDS, FTW_PHYS | FTW_DEPTH)) {
			ret = errno ? -errno : -EIO;
			errmsg__set(err, errlen, "removing the old run %s: %s", path,
				    strerror(-ret));
			goto out;
		}
		if (removed)
			(*removed)++;
	}
out:
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	closedir(d);
	free(runs);
	free(bytes);
	return ret;
}

int trace_base__new_run(const char *base, char *path, size_t len, char *err, size_t errlen)
{
	char name[TRACE_BASE_NAME_MAX];
	time_t now = time(NULL);
	int ret, n;

	for (unsigned int seq = 0; seq < 1000; seq++) {
		ret = trace_base__run_name(now, (int)getpid(), seq, name, sizeof(name));
		if (ret < 0) {
			errmsg__set(err, errlen, "the time cannot name a run");
			return ret;
		}
		n = snprintf(path, len, "%s/%s", base, name);
		if (n < 0 || (size_t)n >= len) {
			errmsg__set(err, errlen, "trace base %s: name too long", base);
			return -ENAMETOOLONG;
		}
		if (!mkdir(path, 0750))
			return 0;
		if (errno != EEXIST) {
			ret = -errno;
			errmsg__set(err, errlen, "creating %s: %s", path, strerror(errno));
			return ret;
		}
	}
	errmsg__set(err, errlen, "trace base %s: no free run name", base);
	return -EEXIST;
}
