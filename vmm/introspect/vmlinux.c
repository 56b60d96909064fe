// SPDX-License-Identifier: GPL-2.0
/*
 * vmlinux.c - reading a kernel file: bzImage payload decompression (zstd, xz, gzip), vmlinux ELF,
 * raw BTF.
 */
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "errmsg.h"
#include "vmlinux-int.h"
#include "vmlinux.h"

/* Boot protocol header fields (Documentation/arch/x86/boot.rst), offsets in the bzImage. */
#define BZ_SETUP_SECTS 0x1f1
#define BZ_HEADER 0x202 /* "HdrS" */
#define BZ_VERSION 0x206
#define BZ_PAYLOAD_OFFSET 0x248
#define BZ_PAYLOAD_LENGTH 0x24c
#define BZ_MIN_SIZE 0x250
#define BZ_MIN_VERSION 0x0208 /* the first with payload_offset/payload_length */

#define BTF_MAGIC 0xeb9f
/* Largest window a zstd frame may ask for: 2^27 (128 MiB), what `zstd -22 --ultra` uses. */
#define ZSTD_WINDOW_LOG_MAX 27
#define XZ_MEMLIMIT (256ULL << 20)

struct outbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	size_t max; /* never more than this */
};

static int outbuf_grow(struct outbuf *o)
{
	size_t cap = o->cap ? o->cap * 2 : (1U << 20);
	uint8_t *p;

	if (o->cap >= o->max)
		return -EFBIG;
	if (cap > o->max)
		cap = o->max;
	p = realloc(o->p, cap);
	if (!p)
		return -ENOMEM;
	o->p = p;
	o->cap = cap;
	return 0;
}

static int unzstd(const uint8_t *src, size_t len, struct outbuf *o)
{
	ZSTD_inBuffer in = { src, len, 0 };
	ZSTD_DCtx *d = ZSTD_createDCtx();
	int ret = 0;

	if (!d)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
		ret = -EINVAL;
		goto out;
	}
	for (;;) {
		ZSTD_outBuffer ob;
		size_t r;

		if (o->len == o->cap) {
			ret = outbuf_grow(o);
			if (ret)
				break;
		}
		ob = (ZSTD_outBuffer){ o->p, o->cap, o->len };
		r = ZSTD_decompressStream(d, &ob, &in);
		o->len = ob.pos;
		if (ZSTD_isError(r)) {
			ret = -EINVAL;
			break;
		}
		if (r == 0)
			break; /* the frame is complete; the size trailer follows it */
		if (in.pos == in.size && ob.pos < ob.size) {
			ret = -EINVAL; /* truncated */
			break;
		}
	}
out:
	ZSTD_freeDCtx(d);
	return ret;
}

static int unxz(const uint8_t *src, size_t len, struct outbuf *o)
{
	lzma_stream s = LZMA_STREAM_INIT;
	int ret = 0;

	if (lzma_stream_decoder(&s, XZ_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	s.next_in = src;
	s.avail_in = len;
	for (;;) {
		lzma_ret r;

		if (o->len == o->cap) {
			ret = outbuf_grow(o);
			if (ret)
				break;
		}
		s.next_out = o->p + o->len;
		s.avail_out = o->cap - o->len;
		r = lzma_code(&s, LZMA_FINISH);
		o->len = o->cap - s.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_OK)
			continue;
		if (r == LZMA_BUF_ERROR && s.avail_out == 0)
			continue; /* only room was missing */
		ret = r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
		break;
	}
	lzma_end(&s);
	return ret;
}

static int ungzip(const uint8_t *src, size_t len, struct outbuf *o)
{
	z_stream z;
	int ret = 0;

	memset(&z, 0, sizeof(z));
	if (len > UINT32_MAX)
		return -EINVAL;
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)len;
	for (;;) {
		size_t room;
		int r;

		if (o->len == o->cap) {
			ret = outbuf_grow(o);
			if (ret)
				break;
		}
		room = o->cap - o->len;
		if (room > UINT32_MAX)
			room = UINT32_MAX;
		z.next_out = o->p + o->len;
		z.avail_out = (uInt)room;
		r = inflate(&z, Z_NO_FLUSH);
		o->len += room - z.avail_out;
		if (r == Z_STREAM_END)
			break;
		if (r == Z_OK)
			continue;
		if (r == Z_BUF_ERROR && z.avail_in != 0)
			continue; /* only room was missing */
		ret = r == Z_MEM_ERROR ? -ENOMEM : -EINVAL; /* corrupt, or truncated input */
		break;
	}
	inflateEnd(&z);
	return ret;
}

struct method {
	const char *name;
	const uint8_t magic[6];
	size_t magic_len;
	int (*decompress)(const uint8_t *src, size_t len, struct outbuf *o);
};

/* The compressors of the kernel's Kconfig, by the magic its scripts/extract-vmlinux looks for. */
static const struct method methods[] = {
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4, unzstd },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6, unxz },
	{ "gzip", { 0x1f, 0x8b, 0x08 }, 3, ungzip },
	{ "bzip2", { 'B', 'Z', 'h' }, 3, NULL },
	{ "lzma", { 0x5d, 0x00, 0x00 }, 3, NULL },
	{ "lzo", { 0x89, 'L', 'Z', 'O' }, 4, NULL },
	{ "lz4", { 0x02, 0x21, 0x4c, 0x18 }, 4, NULL },
};

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool is_bzimage(const uint8_t *img, size_t len)
{
	return len >= BZ_MIN_SIZE && !memcmp(img + BZ_HEADER, "HdrS", 4);
}

static bool is_elf(const uint8_t *p, size_t len)
{
	return len >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F';
}

int vmlinux__from_bzimage_max(const uint8_t *img, size_t len, size_t max, uint8_t **out,
			      size_t *outlen, const char **method)
{
	struct outbuf o = { .max = max };
	const struct method *m = NULL;
	uint64_t start, off, plen;
	const uint8_t *payload;
	uint32_t size_hint;
	unsigned int sects;
	int ret;

	*out = NULL;
	*outlen = 0;
	*method = "none";
	if (!is_bzimage(img, len))
		return -ENOEXEC;
	if ((img[BZ_VERSION] | img[BZ_VERSION + 1] << 8) < BZ_MIN_VERSION)
		return -ENOEXEC;
	sects = img[BZ_SETUP_SECTS] ? img[BZ_SETUP_SECTS] : 4;
	start = (uint64_t)(sects + 1) * 512;
	off = get_le32(img + BZ_PAYLOAD_OFFSET);
	plen = get_le32(img + BZ_PAYLOAD_LENGTH);
	if (plen < 8 || start + off > len || plen > len - (start + off))
		return -EINVAL;
	payload = img + start + off;

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (!memcmp(payload, methods[i].magic, methods[i].magic_len)) {
			m = &methods[i];
			break;
		}
	}
	if (!m)
		return -EINVAL;
	*method = m->name;
	if (!m->decompress)
		return -EOPNOTSUPP;

	/* The kernel's build appends the decompressed size (le32): a first guess of the room. */
	size_hint = get_le32(payload + plen - 4);
	if (size_hint >= 4096 && size_hint <= max) {
		o.p = malloc(size_hint);
		if (!o.p)
			return -ENOMEM;
		o.cap = size_hint;
	}
	ret = m->decompress(payload, plen, &o);
	if (ret)
		goto err_free;
	if (!is_elf(o.p, o.len)) {
		ret = -ENOEXEC;
		goto err_free;
	}
	*out = o.p;
	*outlen = o.len;
	return 0;

err_free:
	free(o.p);
	return ret;
}

int vmlinux__from_bzimage(const uint8_t *img, size_t len, uint8_t **out, size_t *outlen,
			  const char **method)
{
	return vmlinux__from_bzimage_max(img, len, VMLINUX_MAX_SIZE, out, outlen, method);
}

int vmlinux__load(const char *path, struct vmlinux *out, char *err, size_t errlen)
{
	const char *method;
	struct stat st;
	uint8_t *dec;
	size_t declen;
	void *map;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	errmsg__set(err, errlen, "%s", "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		errmsg__set(err, errlen, "%s", strerror(errno));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 8) {
		ret = -ENOEXEC;
		errmsg__set(err, errlen, "not a kernel file (too small or not a regular file)");
		goto out_close;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		errmsg__set(err, errlen, "mmap: %s", strerror(errno));
		goto out_close;
	}
	out->data = map;
	out->size = st.st_size;
	out->mapped = true;
	out->compression = "none";

	if (is_elf(out->data, out->size)) {
		out->kind = VMLINUX_ELF;
		ret = 0;
	} else if ((out->data[0] | out->data[1] << 8) == BTF_MAGIC) {
		out->kind = VMLINUX_BTF;
		ret = 0;
	} else if (is_bzimage(out->data, out->size)) {
		ret = vmlinux__from_bzimage(out->data, out->size, &dec, &declen, &method);
		if (ret) {
			if (ret == -EOPNOTSUPP)
				errmsg__set(err, errlen, "bzImage payload is %s-compressed "
					"(zstd, xz and gzip are supported)", method);
			else if (ret == -EFBIG)
				errmsg__set(err, errlen, "bzImage payload decompresses beyond %llu MiB",
					VMLINUX_MAX_SIZE >> 20);
			else if (ret == -ENOEXEC)
				errmsg__set(err, errlen, "bzImage payload is not an ELF kernel");
			else
				errmsg__set(err, errlen, "corrupt bzImage (%s payload): %s", method,
					strerror(-ret));
			vmlinux__release(out);
			goto out_close;
		}
		munmap(map, st.st_size);
		out->data = dec;
		out->size = declen;
		out->mapped = false;
		out->kind = VMLINUX_ELF;
		out->bzimage = true;
		out->compression = method;
	} else {
		ret = -ENOEXEC;
		errmsg__set(err, errlen, "neither a bzImage, an ELF vmlinux nor raw BTF");
		vmlinux__release(out);
	}
out_close:
	close(fd);
	return ret;
}

void vmlinux__release(struct vmlinux *v)
{
	if (!v->data)
		return;
	if (v->mapped)
		munmap((void *)v->data, v->size);
	else
		free((void *)v->data);
	memset(v, 0, sizeof(*v));
}
