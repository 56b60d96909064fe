/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fd-io.h - whole writes to a file descriptor, across short writes and signals.
 */
#ifndef VBTS_COMMON_FD_IO_H
#define VBTS_COMMON_FD_IO_H

#include <stddef.h>

/**
 * fd__write_all() - write all @len bytes of @buf to @fd, again after EINTR and short writes.
 * @fd:  the file descriptor
 * @buf: the bytes
 * @len: their number
 *
 * Return: 0; -errno of the write that failed, -EIO when one wrote nothing.
 */
int fd__write_all(int fd, const void *buf, size_t len);

#endif /* VBTS_COMMON_FD_IO_H */
