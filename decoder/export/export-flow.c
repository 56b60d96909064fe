// SPDX-License-Identifier: GPL-2.0
/*
 * export-flow.c - the state of the formats that follow calls: made with its flow, fed, freed.
 */
#include <errno.h>
#include <stdlib.h>

#include "export-flow.h"

void *flow_export__new(size_t size, const struct export_env *env, const struct flow_ops *ops,
		       bool stack)
{
	struct flow_export *fx = calloc(1, size);

	if (!fx)
		goto err_nomem;
	fx->env = *env;
	fx->flow = flow__new(env->annotator, ops, fx, stack);
	if (!fx->flow)
		goto err_free;
	return fx;

err_free:
	free(fx);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

int flow_export__record(void *x, const struct decoded_record *r)
{
	struct flow_export *fx = x;

	return flow__record(fx->flow, r);
}
