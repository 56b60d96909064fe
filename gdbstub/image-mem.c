// SPDX-License-Identifier: GPL-2.0
/*
 * image-mem.c - read-only guest memory from ELF images' loadable segments.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image-mem.h"

struct segment {
	uint64_t vaddr, size;   /* [vaddr, vaddr + size) */
	uint8_t *data;          /* size bytes: the file's, then zeros */
};

struct image_mem {
	struct segment *segs;
	size_t nr, cap;
	struct image_mem_file *files;
	size_t nr_files, cap_files;
};

struct image_mem *image_mem__new(void)
{
	return calloc(1, sizeof(struct image_mem));
}

/* Page size the lowest segment's start is aligned down to, for a load base. */
#define LOAD_ALIGN 4096ULL

static int add_segment(struct image_mem *m, int fd, uint64_t file_size, const GElf_Phdr *ph,
		       uint64_t bias)
{
	struct segment *s;
	ssize_t n;

	if (!ph->p_memsz)
		return 0;
	if (ph->p_filesz > ph->p_memsz || ph->p_memsz > IMAGE_MEM_FILE_MAX ||
	    ph->p_offset > file_size || ph->p_filesz > file_size - ph->p_offset ||
	    ph->p_vaddr + bias + ph->p_memsz < ph->p_vaddr + bias)
		return -EINVAL;
	if (m->nr == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;

		s = realloc(m->segs, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		m->segs = s;
		m->cap = cap;
	}
	s = &m->segs[m->nr];
	s->vaddr = ph->p_vaddr + bias;
	s->size = ph->p_memsz;
	s->data = calloc(1, (size_t)ph->p_memsz);
	if (!s->data)
		return -ENOMEM;
	n = ph->p_filesz ? pread(fd, s->data, (size_t)ph->p_filesz, (off_t)ph->p_offset) : 0;
	if (n < 0 || (uint64_t)n != ph->p_filesz) {
		free(s->data);
		return -EIO;
	}
	m->nr++;
	return 0;
}

/* What a debugger asks of a file mapped with @bias: its entry, headers, dynamic section. */
static int add_file(struct image_mem *m, const char *path, Elf *elf, size_t nr_ph, uint64_t bias)
{
	struct image_mem_file *f;
	GElf_Ehdr eh;
	GElf_Phdr ph;

	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (m->nr_files == m->cap_files) {
		size_t cap = m->cap_files ? 2 * m->cap_files : 8;

		f = realloc(m->files, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		m->files = f;
		m->cap_files = cap;
	}
	f = &m->files[m->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->bias = bias;
	f->entry = eh.e_entry + bias;
	f->phnum = (unsigned int)nr_ph;
	f->program = eh.e_type == ET_EXEC;
	f->low = UINT64_MAX;
	for (size_t i = 0; i < nr_ph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_DYNAMIC)
			f->dynamic = ph.p_vaddr + bias;
		if (ph.p_type == PT_INTERP)
			f->program = true;
		if (ph.p_type == PT_LOAD && ph.p_vaddr + bias < f->low)
			f->low = ph.p_vaddr + bias;
		/* The headers are mapped where a loadable segment's file bytes hold them. */
		if (ph.p_type == PT_LOAD && !f->phdr && eh.e_phoff >= ph.p_offset &&
		    eh.e_phoff - ph.p_offset < ph.p_filesz)
			f->phdr = ph.p_vaddr + (eh.e_phoff - ph.p_offset) + bias;
	}
	m->nr_files++;
	return 0;
}

/*
 * Maps @path's PT_LOAD segments at their link addresses; with @loaded, all moved so that the
 * lowest one (page aligned) starts at @load_base.
 */
static int add_elf(struct image_mem *m, const char *path, bool loaded, uint64_t load_base,
		   uint64_t bias, bool mapped, uint64_t start, uint64_t offset)
{
	uint64_t low = UINT64_MAX;
	struct stat st;
	size_t nr_ph;
	GElf_Phdr ph;
	Elf *elf;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out_close;
	}
	if ((uint64_t)st.st_size > IMAGE_MEM_FILE_MAX) {
		ret = -EFBIG;
		goto out_close;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nr_ph)) {
		ret = -EINVAL;
		goto out_end;
	}
	for (size_t i = 0; loaded && i < nr_ph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < low)
			low = ph.p_vaddr;
	}
	if (loaded) {
		if (low == UINT64_MAX) {
			ret = -EINVAL;
			goto out_end;
		}
		bias = load_base - (low & ~(LOAD_ALIGN - 1));
	}
	/* Mapped at @start from file offset @offset: the bias of the segment holding it. */
	for (size_t i = 0; mapped && i < nr_ph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    offset >= ph.p_offset && offset - ph.p_offset < ph.p_filesz) {
			bias = start - (ph.p_vaddr + (offset - ph.p_offset));
			mapped = false;
		}
	}
	if (mapped) {
		ret = -EINVAL;
		goto out_end;
	}
	for (size_t i = 0; i < nr_ph && !ret; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph)) {
			ret = -EINVAL;
			break;
		}
		if (ph.p_type == PT_LOAD)
			ret = add_segment(m, fd, (uint64_t)st.st_size, &ph, bias);
	}
	if (!ret)
		ret = add_file(m, path, elf, nr_ph, bias);
out_end:
	elf_end(elf);
out_close:
	close(fd);
	return ret;
}

int image_mem__add_elf(struct image_mem *m, const char *path)
{
	return add_elf(m, path, false, 0, 0, false, 0, 0);
}

int image_mem__add_elf_biased(struct image_mem *m, const char *path, uint64_t bias)
{
	return add_elf(m, path, false, 0, bias, false, 0, 0);
}

int image_mem__add_elf_loaded(struct image_mem *m, const char *path, uint64_t load_base)
{
	return add_elf(m, path, true, load_base, 0, false, 0, 0);
}

int image_mem__add_elf_mapped(struct image_mem *m, const char *path, uint64_t start,
			     uint64_t offset)
{
	return add_elf(m, path, false, 0, 0, true, start, offset);
}

size_t image_mem__read(const struct image_mem *m, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		const struct segment *hit = NULL;
		uint64_t a = addr + done, off, n;

		for (size_t i = 0; i < m->nr; i++) {
			if (a >= m->segs[i].vaddr && a - m->segs[i].vaddr < m->segs[i].size) {
				hit = &m->segs[i];
				break;
			}
		}
		if (!hit)
			break;
		off = a - hit->vaddr;
		n = hit->size - off;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, hit->data + off, (size_t)n);
		done += (size_t)n;
	}
	return done;
}

size_t image_mem__nr_files(const struct image_mem *m)
{
	return m->nr_files;
}

const struct image_mem_file *image_mem__file(const struct image_mem *m, size_t i)
{
	return &m->files[i];
}

void image_mem__free(struct image_mem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		free(m->segs[i].data);
	for (size_t i = 0; i < m->nr_files; i++)
		free(m->files[i].path);
	free(m->files);
	free(m->segs);
	free(m);
}
