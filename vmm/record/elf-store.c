// SPDX-License-Identifier: GPL-2.0
/*
 * elf-store.c - ELF files uploaded by the guest agent, verified by build ID and stored in
 * debuginfod's cache layout.
 *
 * Locking: none; the caller (the agent channel) serializes the calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vbts/agent-proto.h>

#include "elf-store.h"

#define ID_HEX_MAX (2 * VBTS_AGENT_BUILD_ID_MAX + 1)
#define NT_GNU_BUILD_ID_TYPE 3

struct elf_store {
	char *dir;   /* DIR/debuginfod */
	int dirfd;   /* of @dir once created, else -1 */
	struct elf_store_limits lim;
	struct elf_store_stats stats;
	/* The upload in progress: @buf is non-NULL while one is. */
	unsigned char *buf;
	uint64_t size;
	uint64_t received;
	char id[ID_HEX_MAX];
};

bool elf_store__valid_build_id(const char *hex)
{
	size_t n = 0;

	for (; hex[n]; n++) {
		if (n >= VBTS_AGENT_BUILD_ID_MAX)
			return false;
		if (!((hex[n] >= '0' && hex[n] <= '9') || (hex[n] >= 'a' && hex[n] <= 'f')))
			return false;
	}
	return n >= 2 && !(n & 1);
}

static bool note_build_id(Elf_Data *data, char *hex, size_t hexlen)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID_TYPE || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz * 2 + 1 > hexlen)
			return false;
		for (size_t i = 0; i < nh.n_descsz; i++)
			snprintf(hex + 2 * i, 3, "%02x",
				 ((const unsigned char *)data->d_buf)[desc_off + i]);
		return true;
	}
	return false;
}

int elf_store__build_id(const void *buf, size_t len, char *hex, size_t hexlen)
{
	bool found = false;
	size_t phnum;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)buf, len);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	/* The loaded notes (PT_NOTE) first: what the guest mapped; then the sections. */
	if (!elf_getphdrnum(elf, &phnum)) {
		for (size_t i = 0; i < phnum && !found; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			if (ph.p_offset > len || ph.p_filesz > len - ph.p_offset)
				continue;
			d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (d)
				found = note_build_id(d, hex, hexlen);
		}
	}
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d)
			found = note_build_id(d, hex, hexlen);
	}
	elf_end(elf);
	return found ? 0 : -ENOENT;
}

struct elf_store *elf_store__create(const char *dir, const struct elf_store_limits *lim)
{
	static const struct elf_store_limits defaults = {
		.file_max = VBTS_AGENT_ELF_FILE_MAX,
		.total_max = VBTS_AGENT_ELF_TOTAL_MAX,
		.files_max = VBTS_AGENT_ELF_FILES_MAX,
	};
	struct elf_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (asprintf(&s->dir, "%s/debuginfod", dir) < 0) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->dirfd = -1;
	s->lim = lim ? *lim : defaults;
	return s;
}

static void drop_upload(struct elf_store *s)
{
	free(s->buf);
	s->buf = NULL;
	s->size = 0;
	s->received = 0;
	s->id[0] = '\0';
}

void elf_store__destroy(struct elf_store *s)
{
	if (!s)
		return;
	if (s->buf)
		s->stats.abandoned++;
	drop_upload(s);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s);
}

static bool have_id(struct elf_store *s, const char *id)
{
	char rel[ID_HEX_MAX + 16];

	snprintf(rel, sizeof(rel), "%s/executable", id);
	if (s->dirfd >= 0)
		return !faccessat(s->dirfd, rel, F_OK, AT_SYMLINK_NOFOLLOW);
	/* DIR/debuginfod not opened yet (files of an earlier store there count too). */
	{
		char *path;
		bool have;

		if (asprintf(&path, "%s/%s", s->dir, rel) < 0)
			return false;
		have = !faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW);
		free(path);
		return have;
	}
}

int elf_store__begin(struct elf_store *s, const char *build_id, uint64_t size)
{
	if (s->buf) {
		s->stats.abandoned++;
		drop_upload(s);
	}
	if (!elf_store__valid_build_id(build_id)) {
		s->stats.bad_id++;
		return -EINVAL;
	}
	if (!size || size > s->lim.file_max) {
		s->stats.too_big++;
		return -EFBIG;
	}
	if (s->stats.stored >= s->lim.files_max || size > s->lim.total_max - s->stats.bytes) {
		s->stats.over_budget++;
		return -ENOSPC;
	}
	if (have_id(s, build_id)) {
		s->stats.duplicate++;
		return -EEXIST;
	}
	s->buf = malloc(size);
	if (!s->buf)
		return -ENOMEM;
	s->size = size;
	s->received = 0;
	strcpy(s->id, build_id); /* valid: shorter than ID_HEX_MAX */
	return 0;
}

int elf_store__data(struct elf_store *s, uint64_t off, const void *buf, size_t len)
{
	if (!s->buf || off != s->received || len > s->size - s->received) {
		s->stats.bad_data++;
		if (s->buf)
			drop_upload(s);
		return -EPROTO;
	}
	memcpy(s->buf + off, buf, len);
	s->received += len;
	return 0;
}

/* Create DIR/debuginfod once; Return: 0 or -errno. */
static int open_dir(struct elf_store *s)
{
	if (s->dirfd >= 0)
		return 0;
	if (mkdir(s->dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return s->dirfd < 0 ? -errno : 0;
}

/* Write the upload to <id>/executable through a temporary file; Return: 0 or -errno. */
static int write_file(struct elf_store *s)
{
	char tmp[ID_HEX_MAX + 32], dst[ID_HEX_MAX + 16];
	uint64_t done = 0;
	int fd, ret;

	ret = open_dir(s);
	if (ret < 0)
		return ret;
	if (mkdirat(s->dirfd, s->id, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s/.executable.tmp", s->id);
	snprintf(dst, sizeof(dst), "%s/executable", s->id);
	unlinkat(s->dirfd, tmp, 0);
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < s->size) {
		ssize_t n = write(fd, s->buf + done, s->size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			goto err_unlink;
		}
		done += (uint64_t)n;
	}
	if (close(fd) < 0) {
		fd = -1;
		ret = -errno;
		goto err_unlink;
	}
	fd = -1;
	if (renameat(s->dirfd, tmp, s->dirfd, dst) < 0) {
		ret = -errno;
		goto err_unlink;
	}
	return 0;

err_unlink:
	if (fd >= 0)
		close(fd);
	unlinkat(s->dirfd, tmp, 0);
	return ret;
}

int elf_store__end(struct elf_store *s, char *id, uint64_t *size)
{
	char found[ID_HEX_MAX];
	int ret;

	if (!s->buf || s->received != s->size) {
		s->stats.bad_data++;
		drop_upload(s);
		return -EPROTO;
	}
	if (elf_store__build_id(s->buf, s->size, found, sizeof(found)) < 0 ||
	    strcmp(found, s->id)) {
		s->stats.mismatch++;
		drop_upload(s);
		return -EBADMSG;
	}
	ret = write_file(s);
	if (ret < 0) {
		s->stats.io_errors++;
		drop_upload(s);
		return ret;
	}
	s->stats.stored++;
	s->stats.bytes += s->size;
	if (id)
		strcpy(id, s->id);
	if (size)
		*size = s->size;
	drop_upload(s);
	return 0;
}

void elf_store__stats(const struct elf_store *s, struct elf_store_stats *stats)
{
	*stats = s->stats;
}
