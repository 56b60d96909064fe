/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control-int.h - control socket internals the unit tests need: one request line in, one
 * response object out, without a socket.
 */
#ifndef VBTS_VMM_CONTROL_INT_H
#define VBTS_VMM_CONTROL_INT_H

#include <jansson.h>
#include <stddef.h>

#include "control.h"

/**
 * control__request() - parse and execute one request line, as the server does for a client.
 * @c:          server
 * @line:       the line without its newline (any bytes, NUL included)
 * @len:        its length
 * @subscribed: receives true when the request was a successful subscribe (may be NULL)
 *
 * Return: the response object (never NULL but when out of memory); the caller owns it.
 */
json_t *control__request(struct control *c, const char *line, size_t len, bool *subscribed);

/**
 * control__poll_events() - scan the rings for new events now, as the thread does while a
 * client is subscribed, and return them.
 * @c: server
 *
 * Return: a JSON array of event objects (possibly empty), owned by the caller; NULL when out
 * of memory.
 */
json_t *control__poll_events(struct control *c);

#endif /* VBTS_VMM_CONTROL_INT_H */
