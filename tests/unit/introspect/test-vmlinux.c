// SPDX-License-Identifier: GPL-2.0
/*
 * test-vmlinux.c - bzImages built here around the fake vmlinux, compressed with zstd, xz and
 * gzip; truncated, lying and malformed ones.
 */
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "fake-kernel.h"
#include "introspect-tests.h"
#include "test-files.h"
#include "vmlinux-int.h"
#include "vmlinux.h"

#define PM_START 1024	 /* setup_sects = 1: the protected-mode code after 2 sectors */
#define PAYLOAD_OFF 0x100 /* payload_offset, from the protected-mode code */

static uint8_t *pack(const char *method, const uint8_t *in, size_t len, size_t *out_len)
{
	size_t cap = len + len / 2 + 4096;
	uint8_t *out = malloc(cap);

	ck_assert_ptr_nonnull(out);
	if (!strcmp(method, "zstd")) {
		*out_len = ZSTD_compress(out, cap, in, len, 3);
		ck_assert(!ZSTD_isError(*out_len));
	} else if (!strcmp(method, "xz")) {
		*out_len = 0;
		ck_assert_int_eq(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, in, len, out,
							 out_len, cap), LZMA_OK);
	} else {
		z_stream z = { 0 };

		ck_assert_int_eq(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8,
					      Z_DEFAULT_STRATEGY), Z_OK);
		z.next_in = (Bytef *)in;
		z.avail_in = len;
		z.next_out = out;
		z.avail_out = cap;
		ck_assert_int_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
		*out_len = z.total_out;
		deflateEnd(&z);
	}
	return out;
}

/* A bzImage of boot protocol @version around @payload and the le32 @trailer the kernel's build
 * appends (the decompressed size). */
static uint8_t *bzimage(const uint8_t *payload, size_t plen, uint32_t trailer, uint16_t version,
			size_t *len)
{
	uint32_t payload_length = plen + 4, off = PAYLOAD_OFF;
	uint8_t *img;

	*len = PM_START + PAYLOAD_OFF + plen + 4;
	img = calloc(1, *len);
	ck_assert_ptr_nonnull(img);
	img[0x1f1] = 1;
	memcpy(img + 0x202, "HdrS", 4);
	memcpy(img + 0x206, &version, 2);
	memcpy(img + 0x248, &off, 4);
	memcpy(img + 0x24c, &payload_length, 4);
	memcpy(img + PM_START + PAYLOAD_OFF, payload, plen);
	memcpy(img + PM_START + PAYLOAD_OFF + plen, &trailer, 4);
	return img;
}

static const char *const methods[] = { "zstd", "xz", "gzip" };

static struct fake_kernel fk;
static uint8_t *elf;
static size_t elf_len;

static void setup(void)
{
	fk_create(&fk, NULL);
	elf = test__slurp(fk.vmlinux, &elf_len);
}

static void teardown(void)
{
	free(elf);
	fk_destroy(&fk);
}

/* Each method, with the true size, a size far too large and one far too small in the trailer. */
START_TEST(test_roundtrip)
{
	const uint32_t trailers[] = { (uint32_t)elf_len, 0xffffffffU, 16 };
	size_t clen, len, outlen;
	const char *method;
	uint8_t *c, *img, *out;

	c = pack(methods[_i], elf, elf_len, &clen);
	for (size_t t = 0; t < 3; t++) {
		img = bzimage(c, clen, trailers[t], 0x020f, &len);
		ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), 0);
		ck_assert_str_eq(method, methods[_i]);
		ck_assert_uint_eq(outlen, elf_len);
		ck_assert_int_eq(memcmp(out, elf, elf_len), 0);
		free(out);
		free(img);
	}
	free(c);
}
END_TEST

START_TEST(test_truncated)
{
	size_t clen, len, outlen = 1;
	const char *method;
	uint8_t *c, *img, *out = (uint8_t *)1;

	c = pack(methods[_i], elf, elf_len, &clen);
	img = bzimage(c, clen / 2, (uint32_t)elf_len, 0x020f, &len);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(outlen, 0);
	free(img);
	free(c);
}
END_TEST

/* More output than the cap: refused, whatever the trailer says. */
START_TEST(test_too_large)
{
	size_t zlen = 4 << 20, clen, len, outlen;
	uint8_t *zeros = calloc(1, zlen), *c, *img, *out;
	const char *method;

	ck_assert_ptr_nonnull(zeros);
	memcpy(zeros, elf, 64); /* an ELF header: only the size is wrong */
	c = pack(methods[_i], zeros, zlen, &clen);
	img = bzimage(c, clen, 4096, 0x020f, &len);
	ck_assert_int_eq(vmlinux__from_bzimage_max(img, len, 1 << 20, &out, &outlen, &method),
			 -EFBIG);
	ck_assert_int_eq(vmlinux__from_bzimage_max(img, len, 8 << 20, &out, &outlen, &method), 0);
	ck_assert_uint_eq(outlen, zlen);
	free(out);
	free(img);
	free(c);
	free(zeros);
}
END_TEST

START_TEST(test_malformed)
{
	static const uint8_t bzip2[] = "BZh91AY&SY", junk[] = "\x42\x42\x42\x42\x42\x42\x42\x42";
	const char *text = "not an ELF file, but compressed all the same";
	size_t clen, len, outlen;
	const char *method;
	uint8_t *c, *img, *out;
	uint32_t v;

	/* a payload that is not an ELF file */
	c = pack("zstd", (const uint8_t *)text, strlen(text), &clen);
	img = bzimage(c, clen, strlen(text), 0x020f, &len);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -ENOEXEC);
	free(img);
	free(c);

	/* compressors the kernel knows and this code does not, and no compressor at all */
	img = bzimage(bzip2, sizeof(bzip2), 100, 0x020f, &len);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -EOPNOTSUPP);
	ck_assert_str_eq(method, "bzip2");
	free(img);
	img = bzimage(junk, sizeof(junk), 100, 0x020f, &len);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -EINVAL);

	/* boot protocol before payload_offset existed */
	img[0x206] = 0x07;
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -ENOEXEC);
	img[0x206] = 0x0f;

	/* payload_offset and payload_length beyond the file */
	v = 0xfffffff0;
	memcpy(img + 0x248, &v, 4);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -EINVAL);
	v = PAYLOAD_OFF;
	memcpy(img + 0x248, &v, 4);
	v = (uint32_t)len;
	memcpy(img + 0x24c, &v, 4);
	ck_assert_int_eq(vmlinux__from_bzimage(img, len, &out, &outlen, &method), -EINVAL);

	/* no header at all; a header cut short */
	ck_assert_int_eq(vmlinux__from_bzimage(elf, elf_len, &out, &outlen, &method), -ENOEXEC);
	ck_assert_int_eq(vmlinux__from_bzimage(img, 0x240, &out, &outlen, &method), -ENOEXEC);
	free(img);
}
END_TEST

START_TEST(test_load_files)
{
	char path[128], err[160];
	struct vmlinux v;
	size_t clen, len;
	uint8_t *c, *img;

	snprintf(path, sizeof(path), "%s/bzImage", fk.dir);
	c = pack("zstd", elf, elf_len, &clen);
	img = bzimage(c, clen, (uint32_t)elf_len, 0x020f, &len);
	test__write_file(NULL, path, img, len);
	ck_assert_int_eq(vmlinux__load(path, &v, err, sizeof(err)), 0);
	ck_assert(v.kind == VMLINUX_ELF && v.bzimage);
	ck_assert_str_eq(v.compression, "zstd");
	ck_assert_uint_eq(v.size, elf_len);
	ck_assert_int_eq(memcmp(v.data, elf, elf_len), 0);
	vmlinux__release(&v);

	/* cut in the middle of the payload: one line saying what */
	test__write_file(NULL, path, img, PM_START + PAYLOAD_OFF + clen / 2);
	ck_assert_int_eq(vmlinux__load(path, &v, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "corrupt bzImage"));
	ck_assert_ptr_null(v.data);

	ck_assert_int_eq(vmlinux__load(fk.vmlinux, &v, err, sizeof(err)), 0);
	ck_assert(v.kind == VMLINUX_ELF && !v.bzimage);
	vmlinux__release(&v);
	ck_assert_int_eq(vmlinux__load(fk.btf_raw, &v, err, sizeof(err)), 0);
	ck_assert(v.kind == VMLINUX_BTF);
	vmlinux__release(&v);

	ck_assert_int_eq(vmlinux__load(fk.sysmap, &v, err, sizeof(err)), -ENOEXEC);
	ck_assert_ptr_nonnull(strstr(err, "neither"));
	test__write_file(NULL, path, "", 0);
	ck_assert_int_eq(vmlinux__load(path, &v, err, sizeof(err)), -ENOEXEC);
	ck_assert_int_eq(vmlinux__load(fk.dir, &v, err, sizeof(err)), -ENOEXEC);
	ck_assert_int_eq(vmlinux__load("/nonexistent/vmlinuz", &v, err, sizeof(err)), -ENOENT);
	unlink(path);
	free(img);
	free(c);
}
END_TEST

Suite *vmlinux_suite(void)
{
	Suite *s = suite_create("vmlinux");
	TCase *tc = tcase_create("vmlinux");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_roundtrip, 0, 3);
	tcase_add_loop_test(tc, test_truncated, 0, 3);
	tcase_add_loop_test(tc, test_too_large, 0, 3);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_load_files);
	suite_add_tcase(s, tc);
	return s;
}
