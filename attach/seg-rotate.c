// SPDX-License-Identifier: GPL-2.0
/*
 * seg-rotate.c - remove the oldest closed segment files of a stream-mode trace when its disk
 * budget is full (seg-rotate.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vbts/segment-format.h>

#include "seg-rotate.h"

int seg_rotate__parse_name(const char *name, unsigned int *vcpu, uint64_t *index)
{
	const char *p = name;
	uint64_t v = 0, i = 0;
	size_t k;

	if (strncmp(p, "vcpu", 4))
		return -EINVAL;
	p += 4;
	for (k = 0; p[k] >= '0' && p[k] <= '9'; k++) {
		if (k == 5 || (k && p[0] == '0'))
			return -EINVAL; /* vCPU numbers are small, and written without a 0 in front */
		v = v * 10 + (uint64_t)(p[k] - '0');
	}
	if (!k || p[k] != '.')
		return -EINVAL;
	p += k + 1;
	/* as the segment writer and reader name them: exactly 8 digits */
	for (k = 0; k < 8; k++) {
		if (p[k] < '0' || p[k] > '9')
			return -EINVAL;
		i = i * 10 + (uint64_t)(p[k] - '0');
	}
	if (strcmp(p + 8, VBTS_SEG_SUFFIX))
		return -EINVAL;
	*vcpu = (unsigned int)v;
	*index = i;
	return 0;
}

static int cmp_newest_of_vcpu(const void *a, const void *b)
{
	const struct seg_file *x = a, *y = b;

	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->index > y->index ? -1 : x->index < y->index;
}

static int cmp_oldest(const void *a, const void *b)
{
	const struct seg_file *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

uint64_t seg_rotate__plan(struct seg_file *files, size_t n, uint64_t want)
{
	uint64_t freed = 0;
	unsigned int run = 0;

	if (!n)
		return 0;
	/* newest first within each vCPU: the first SEG_ROTATE_KEEP of each stay */
	qsort(files, n, sizeof(*files), cmp_newest_of_vcpu);
	for (size_t i = 0; i < n; i++) {
		run = i && files[i].vcpu == files[i - 1].vcpu ? run + 1 : 0;
		files[i].drop = run < SEG_ROTATE_KEEP ? -1 : 0; /* -1: kept */
	}
	qsort(files, n, sizeof(*files), cmp_oldest);
	for (size_t i = 0; i < n && freed < want; i++) {
		if (files[i].drop < 0)
			continue;
		files[i].drop = 1;
		freed += files[i].bytes;
	}
	for (size_t i = 0; i < n; i++)
		if (files[i].drop < 0)
			files[i].drop = 0;
	return freed;
}

int64_t seg_rotate__run(const char *dir, uint64_t want, size_t *removed)
{
	struct seg_file *files = NULL, *grown;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	int64_t freed = 0;
	char name[64];
	DIR *d;

	*removed = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < SEG_ROTATE_MAX_FILES) {
		struct seg_file f = { 0 };

		if (seg_rotate__parse_name(de->d_name, &f.vcpu, &f.index))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		f.mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
			  (uint64_t)st.st_mtim.tv_nsec;
		f.bytes = (uint64_t)st.st_blocks * 512;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			grown = realloc(files, cap * sizeof(*files));
			if (!grown) {
				free(files);
				closedir(d);
				return -ENOMEM;
			}
			files = grown;
		}
		files[n++] = f;
	}
	seg_rotate__plan(files, n, want);
	for (size_t i = 0; i < n; i++) {
		if (!files[i].drop)
			continue;
		snprintf(name, sizeof(name), "vcpu%u.%08llu%s", files[i].vcpu,
			 (unsigned long long)files[i].index, VBTS_SEG_SUFFIX);
		if (unlinkat(dirfd(d), name, 0) == 0) {
			freed += (int64_t)files[i].bytes;
			(*removed)++;
		}
	}
	free(files);
	closedir(d);
	return freed;
}
