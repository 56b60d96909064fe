/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export-flow.h - the formats that follow calls (calls, folded, callgrind, perfetto, lcov,
 * drcov): their state begins with a struct flow_export, made, fed and freed here.
 */
#ifndef VBTS_DECODER_EXPORT_FLOW_H
#define VBTS_DECODER_EXPORT_FLOW_H

#include <stdbool.h>
#include <stddef.h>

#include "export-format.h"
#include "flow.h"

/**
 * struct flow_export - the first member of such a format's state.
 * @env:  what the format writes with
 * @flow: the call stacks of its tasks, whose callbacks get the state
 */
struct flow_export {
	struct export_env env;
	struct flow *flow;
};

/**
 * flow_export__new() - a format's state: @size bytes, zeroed, that begin with a struct
 * flow_export, its flow made with @ops.
 * @size:  the state's size
 * @env:   what the format writes with
 * @ops:   the flow's callbacks (their context is the state)
 * @stack: whether the flow keeps call stacks (flow__new())
 *
 * Return: the state, or NULL with errno ENOMEM.
 */
void *flow_export__new(size_t size, const struct export_env *env, const struct flow_ops *ops,
		       bool stack);

/**
 * flow_export__record() - export_format_ops.record of such a format: the record to its flow.
 * @x: the state
 * @r: the record
 *
 * Return: 0 or -errno.
 */
int flow_export__record(void *x, const struct decoded_record *r);

#endif /* VBTS_DECODER_EXPORT_FLOW_H */
