/* SPDX-License-Identifier: GPL-2.0 */
/*
 * errmsg.h - one-line error messages written into the caller's buffer, which may be absent
 * (length 0).
 */
#ifndef VBTS_COMMON_ERRMSG_H
#define VBTS_COMMON_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/**
 * errmsg__set() - format one line into @err.
 * @err:    the buffer
 * @errlen: its size (0: nothing is written)
 * @fmt:    printf format
 */
static inline void __attribute__((format(printf, 3, 4))) errmsg__set(char *err, size_t errlen,
								     const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

#endif /* VBTS_COMMON_ERRMSG_H */
