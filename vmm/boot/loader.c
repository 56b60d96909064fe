// SPDX-License-Identifier: GPL-2.0
/*
 * loader.c - the format table, reading image files, and GNU build IDs.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "memory.h"

static const struct loader_format *const formats[] = {
	&multiboot_format,
	&bzimage_format,
	&pvh_format,
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

#define FORMATS "multiboot v1 ELF32 images, Linux bzImages and PVH vmlinux files"

int loader__load_config(const uint8_t *img, size_t len, const struct loader_config *cfg,
			struct guest_memory *mem, struct loaded_image *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < NR_FORMATS; i++) {
		if (formats[i]->probe(img, len)) {
			out->format = formats[i]->name;
			return formats[i]->load(img, len, cfg, mem, out);
		}
	}
	if (len < SELFMAG || memcmp(img, ELFMAG, SELFMAG))
		snprintf(out->error, sizeof(out->error),
			 "not an ELF file nor a bzImage (vbts boots " FORMATS ")");
	else if (len > EI_CLASS && img[EI_CLASS] == ELFCLASS64)
		snprintf(out->error, sizeof(out->error),
			 "ELF64 image with neither a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) nor "
			 "a multiboot header (vbts boots " FORMATS ")");
	else
		snprintf(out->error, sizeof(out->error),
			 "no multiboot header in the first 8 KiB (not a multiboot v1 image)");
	return -ENOEXEC;
}

int loaded_image__fail(struct loaded_image *out, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->error, sizeof(out->error), fmt, ap);
	va_end(ap);
	return err;
}

int loader__load(const uint8_t *img, size_t len, const char *cmdline, struct guest_memory *mem,
		 struct loaded_image *out)
{
	const struct loader_config cfg = { .cmdline = cmdline, .nr_vcpus = 1 };

	return loader__load_config(img, len, &cfg, mem, out);
}

/*
 * Reads a whole regular file of at most @limit bytes, and never more than guest memory
 * (@mem_size); on failure @err says why.
 */
static int read_file(const char *path, uint64_t limit, uint64_t mem_size, uint8_t **buf,
		     size_t *len, char *err, size_t err_size)
{
	uint64_t max = limit < mem_size ? limit : mem_size;
	struct stat st;
	uint8_t *img;
	size_t done = 0;
	int fd, ret;

	/*
	 * O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below); reads of
	 * a regular file ignore the flag.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, err_size, "%s", strerror(errno));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, err_size, "not a regular file");
		goto err_close;
	}
	if ((uint64_t)st.st_size > max) {
		ret = -E2BIG;
		snprintf(err, err_size, "file of %lld bytes is larger than %s (%" PRIu64 " bytes)",
			 (long long)st.st_size, max == mem_size ? "guest memory" : "the limit", max);
		goto err_close;
	}
	img = malloc(st.st_size ? st.st_size : 1);
	if (!img) {
		ret = -ENOMEM;
		snprintf(err, err_size, "out of memory");
		goto err_close;
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, img + done, st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			snprintf(err, err_size, "read: %s",
				 n < 0 ? strerror(errno) : "file shrank while reading");
			goto err_free;
		}
		done += n;
	}
	close(fd);
	*buf = img;
	*len = done;
	return 0;

err_free:
	free(img);
err_close:
	close(fd);
	return ret;
}

int loader__load_file(const char *path, struct guest_memory *mem, struct loaded_image *out)
{
	return loader__load_files(path, NULL, NULL, 1, mem, out);
}

int loader__load_files(const char *kernel, const char *initrd, const char *append,
		       unsigned int nr_vcpus, struct guest_memory *mem, struct loaded_image *out)
{
	struct loader_config cfg = { .nr_vcpus = nr_vcpus };
	uint8_t *img = NULL, *rd = NULL;
	char err[sizeof(out->error) - 64], *cmdline = NULL;
	size_t len = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = read_file(kernel, LOADER_MAX_FILE, guest_memory__size(mem), &img, &len, err,
			sizeof(err));
	if (ret < 0) {
		snprintf(out->error, sizeof(out->error), "%s", err);
		return ret;
	}
	if (initrd) {
		ret = read_file(initrd, LOADER_MAX_INITRD, guest_memory__size(mem), &rd,
				&cfg.initrd_len, err, sizeof(err));
		if (ret < 0) {
			free(img);
			snprintf(out->error, sizeof(out->error), "initrd %s: %s", initrd, err);
			return ret;
		}
		cfg.initrd = rd;
	}
	/* Multiboot's command line starts with the image path, as QEMU's -kernel builds it;
	 * the Linux formats have their own default for none. */
	if (multiboot_format.probe(img, len)) {
		if (asprintf(&cmdline, "%s%s%s", kernel, append ? " " : "",
			     append ? append : "") < 0) {
			ret = -ENOMEM;
			snprintf(out->error, sizeof(out->error), "out of memory");
			cmdline = NULL;
			goto out;
		}
		cfg.cmdline = cmdline;
	} else {
		cfg.cmdline = append;
	}
	ret = loader__load_config(img, len, &cfg, mem, out);
out:
	free(cmdline);
	free(rd);
	free(img);
	return ret;
}

/* Scan a note area for NT_GNU_BUILD_ID; true when found (hex filled in). */
static bool scan_notes(const uint8_t *p, uint64_t size, char *hex)
{
	uint64_t off = 0;

	while (size - off >= 12) {
		uint32_t namesz, descsz, type;
		uint64_t name_off, desc_off, next;

		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		name_off = off + 12;
		desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
		next = desc_off + (((uint64_t)descsz + 3) & ~3ULL);
		if (desc_off > size || next > size || (uint64_t)descsz > size - desc_off)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name_off, "GNU", 4) &&
		    descsz > 0 && descsz <= LOADER_BUILD_ID_MAX) {
			for (uint32_t i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", p[desc_off + i]);
			return true;
		}
		off = next;
	}
	return false;
}

/* Is [off, off + size) inside an image of @len bytes? */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
	return off <= len && size <= len - off;
}

/*
 * Looks for a GNU build-ID note in the program headers (@sections false) or the section
 * headers of an ELF image, every offset checked against @len. Return: true when found.
 */
static bool scan_table(const uint8_t *img, size_t len, bool is64, bool sections, uint64_t off0,
		       unsigned int num, unsigned int entsize, char *hex)
{
	for (unsigned int i = 0; i < num; i++) {
		uint64_t at = off0 + (uint64_t)i * entsize, off, size;
		bool note;

		if (!in_file(at, entsize, len))
			break;
		if (sections && is64) {
			Elf64_Shdr sh;

			memcpy(&sh, img + at, sizeof(sh));
			note = sh.sh_type == SHT_NOTE, off = sh.sh_offset, size = sh.sh_size;
		} else if (sections) {
			Elf32_Shdr sh;

			memcpy(&sh, img + at, sizeof(sh));
			note = sh.sh_type == SHT_NOTE, off = sh.sh_offset, size = sh.sh_size;
		} else if (is64) {
			Elf64_Phdr ph;

			memcpy(&ph, img + at, sizeof(ph));
			note = ph.p_type == PT_NOTE, off = ph.p_offset, size = ph.p_filesz;
		} else {
			Elf32_Phdr ph;

			memcpy(&ph, img + at, sizeof(ph));
			note = ph.p_type == PT_NOTE, off = ph.p_offset, size = ph.p_filesz;
		}
		if (note && in_file(off, size, len) && scan_notes(img + off, size, hex))
			return true;
	}
	return false;
}

void loader__build_id(const uint8_t *img, size_t len, char *hex)
{
	bool is64;
	uint64_t phoff, shoff;
	unsigned int phnum, shnum, phentsize, shentsize;

	hex[0] = '\0';
	if (len < sizeof(Elf32_Ehdr) || memcmp(img, ELFMAG, SELFMAG))
		return;
	is64 = img[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;

		if (len < sizeof(eh))
			return;
		memcpy(&eh, img, sizeof(eh));
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
		if (phentsize != sizeof(Elf64_Phdr))
			phnum = 0;
		if (shentsize != sizeof(Elf64_Shdr))
			shnum = 0;
	} else {
		Elf32_Ehdr eh;

		memcpy(&eh, img, sizeof(eh));
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
		shoff = eh.e_shoff, shnum = eh.e_shnum, shentsize = eh.e_shentsize;
		if (phentsize != sizeof(Elf32_Phdr))
			phnum = 0;
		if (shentsize != sizeof(Elf32_Shdr))
			shnum = 0;
	}
	if (!scan_table(img, len, is64, false, phoff, phnum, phentsize, hex))
		scan_table(img, len, is64, true, shoff, shnum, shentsize, hex);
}
