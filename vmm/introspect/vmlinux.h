/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlinux.h - a Linux kernel file in memory: a bzImage (its compressed vmlinux decompressed), an
 * uncompressed vmlinux ELF, or a raw BTF blob (/sys/kernel/btf/vmlinux copied out).
 *
 * The file is not trusted: every header field is bounds-checked, decompression is capped at
 * VMLINUX_MAX_SIZE, and the result of a bzImage must be an ELF file.
 */
#ifndef VBTS_VMM_INTROSPECT_VMLINUX_H
#define VBTS_VMM_INTROSPECT_VMLINUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest decompressed kernel accepted (Debian 6.12's vmlinux is 55 MiB). */
#define VMLINUX_MAX_SIZE (1ULL << 30)

/**
 * enum vmlinux_kind - what vmlinux__load() found.
 * @VMLINUX_ELF: an ELF kernel (given as such, or decompressed from a bzImage)
 * @VMLINUX_BTF: raw BTF data (magic 0xeb9f), no ELF around it
 */
enum vmlinux_kind {
	VMLINUX_ELF,
	VMLINUX_BTF,
};

/**
 * struct vmlinux - a kernel file's contents.
 * @data:     the ELF file or the raw BTF, read-only
 * @size:     bytes at @data
 * @kind:     ELF or raw BTF
 * @bzimage:  true when @data was decompressed from a bzImage
 * @compression: "zstd", "xz", "gzip" for a bzImage, else "none"
 * @mapped:   internal: how to release @data
 */
struct vmlinux {
	const uint8_t *data;
	size_t size;
	enum vmlinux_kind kind;
	bool bzimage;
	const char *compression;
	bool mapped;
};

/**
 * vmlinux__load() - read a kernel file: bzImage, vmlinux ELF, or raw BTF.
 * @path: the file
 * @out:  the contents; release with vmlinux__release()
 * @err:  one line saying why, on failure
 * @errlen: bytes at @err
 *
 * Return: 0; -errno of open/read; -ENOEXEC when the file is none of the three, or a bzImage
 * holds no ELF; -EOPNOTSUPP for a bzImage compressed with a method other than zstd, xz, gzip;
 * -EINVAL for a corrupt bzImage header or payload; -EFBIG when it decompresses beyond
 * VMLINUX_MAX_SIZE; -ENOMEM.
 */
int vmlinux__load(const char *path, struct vmlinux *out, char *err, size_t errlen);

/**
 * vmlinux__from_bzimage() - decompress the kernel inside a bzImage held in memory.
 * @img:    the bzImage
 * @len:    bytes at @img
 * @out:    the decompressed vmlinux (malloc'ed; the caller frees it)
 * @outlen: its size
 * @method: the compression found ("zstd", "xz", "gzip")
 *
 * The payload is where the boot protocol's header (version 2.08 and later) says it is:
 * payload_offset and payload_length, relative to the protected-mode code after the setup
 * sectors.
 *
 * Return: 0; -ENOEXEC when @img is no bzImage of boot protocol 2.08+ or the payload is not an
 * ELF file; -EINVAL when the header points outside @img or the payload is corrupt or
 * truncated; -EOPNOTSUPP for another compression; -EFBIG beyond VMLINUX_MAX_SIZE; -ENOMEM.
 */
int vmlinux__from_bzimage(const uint8_t *img, size_t len, uint8_t **out, size_t *outlen,
			  const char **method);

/**
 * vmlinux__release() - free what vmlinux__load() allocated or mapped.
 * @v: the kernel file; may be zeroed
 */
void vmlinux__release(struct vmlinux *v);

#endif /* VBTS_VMM_INTROSPECT_VMLINUX_H */
