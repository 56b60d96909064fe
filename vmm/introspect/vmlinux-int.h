/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmlinux-int.h - internals of vmlinux.c that its tests need.
 */
#ifndef VBTS_VMM_INTROSPECT_VMLINUX_INT_H
#define VBTS_VMM_INTROSPECT_VMLINUX_INT_H

#include <stddef.h>
#include <stdint.h>

/**
 * vmlinux__from_bzimage_max() - vmlinux__from_bzimage() with another size cap.
 * @img:    the bzImage
 * @len:    bytes at @img
 * @max:    largest decompressed size accepted
 * @out:    the decompressed vmlinux (malloc'ed)
 * @outlen: its size
 * @method: the compression found
 *
 * Return: as vmlinux__from_bzimage(), -EFBIG beyond @max.
 */
int vmlinux__from_bzimage_max(const uint8_t *img, size_t len, size_t max, uint8_t **out,
			      size_t *outlen, const char **method);

#endif /* VBTS_VMM_INTROSPECT_VMLINUX_INT_H */
