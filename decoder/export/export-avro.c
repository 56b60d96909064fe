// SPDX-License-Identifier: GPL-2.0
/*
 * export-avro.c - branch records as an Avro object container file (export-avro.h).
 *
 * One generic value of the schema is filled per branch and appended; its fields are taken
 * once by index (the order of vbts-branch.avsc). Task names are escaped once per task, symbol
 * names come escaped from the annotator.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>

#include "escape.h"
#include "export-avro.h"
#include "export.h"
#include "vbts-branch-avsc.h"

/* The fields, in the schema's order. */
enum {
	F_VCPU, F_SEQ, F_TIME, F_FROM, F_TO, F_CPL, F_KIND, F_VECTOR, F_CR3, F_TASK, F_PID,
	F_TGID, F_FROM_SYMBOL, F_FROM_OFFSET, F_TO_SYMBOL, F_TO_OFFSET, F_MAX
};

struct avro_export {
	struct export_env env;
	avro_schema_t schema;
	avro_value_iface_t *iface;
	avro_value_t row;
	avro_value_t fields[F_MAX];
	avro_file_writer_t writer;
	bool open;
	const struct procmap_task *task;        /* the task of @task_name */
	char task_name[4 * 256 + 1];
};

static void ax_free(void *ctx)
{
	struct avro_export *x = ctx;

	if (x->open)
		avro_file_writer_close(x->writer);
	if (x->iface) {
		avro_value_decref(&x->row);
		avro_value_iface_decref(x->iface);
	}
	if (x->schema)
		avro_schema_decref(x->schema);
	free(x);
}

static void *ax_new(const struct export_env *env)
{
	struct avro_export *x = calloc(1, sizeof(*x));

	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	x->env = *env;
	if (avro_schema_from_json_length(vbts_branch_avsc, sizeof(vbts_branch_avsc) - 1,
					 &x->schema))
		goto err;
	x->iface = avro_generic_class_from_schema(x->schema);
	if (!x->iface)
		goto err;
	if (avro_generic_value_new(x->iface, &x->row)) {
		avro_value_iface_decref(x->iface);
		x->iface = NULL;
		goto err;
	}
	for (size_t i = 0; i < F_MAX; i++)
		if (avro_value_get_by_index(&x->row, i, &x->fields[i], NULL))
			goto err;
	/* The path is only a name for libavro's messages; the stream stays open. */
	if (avro_file_writer_create_with_codec_fp(env->o->out, "stdout", 0, x->schema,
						  &x->writer, "deflate", AVRO_BLOCK_SIZE))
		goto err;
	x->open = true;
	return x;

err:
	fprintf(stderr, "vbts decode: avro: %s\n", avro_strerror());
	ax_free(x);
	errno = EIO;
	return NULL;
}

/* A union field: its null branch, or its value branch (returned). */
static avro_value_t *branch(avro_value_t *field, bool valid, avro_value_t *v)
{
	avro_value_t null;

	if (!valid) {
		avro_value_set_branch(field, 0, &null);
		avro_value_set_null(&null);
		return NULL;
	}
	avro_value_set_branch(field, 1, v);
	return v;
}

static void set_long(avro_value_t *field, bool valid, int64_t n)
{
	avro_value_t v;

	if (branch(field, valid, &v))
		avro_value_set_long(&v, n);
}

static void set_int(avro_value_t *field, bool valid, int32_t n)
{
	avro_value_t v;

	if (branch(field, valid, &v))
		avro_value_set_int(&v, n);
}

/* A string of @len bytes (valid UTF-8 without NUL: escaped text). */
static void set_string(avro_value_t *field, const char *s, size_t len)
{
	char buf[OUT_BUF_RESERVE_MAX];
	avro_value_t v;

	if (!branch(field, s, &v))
		return;
	/* Names longer than this are cut where a character starts. */
	if (len >= sizeof(buf)) {
		len = sizeof(buf) - 1;
		while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	avro_value_set_string(&v, buf);
}

static int symbol(struct avro_export *x, const struct procmap_task *t, uint64_t addr,
		  int name, int offset)
{
	const struct annotator_addr *a = annotator__addr(x->env.annotator, t, addr, false);

	if (!a)
		return -ENOMEM;
	set_string(&x->fields[name], a->name ? a->name_text : NULL, a->name_text_len);
	set_long(&x->fields[offset], a->name, (int64_t)a->offset);
	return 0;
}

static int ax_record(void *ctx, const struct decoded_record *r)
{
	struct avro_export *x = ctx;
	const struct procmap_task *t;
	const char *kind;
	int ret;

	if (r->type != DECODED_BRANCH)
		return 0;
	t = annotator__task(x->env.annotator, r);
	avro_value_set_int(&x->fields[F_VCPU], (int32_t)r->vcpu);
	avro_value_set_long(&x->fields[F_SEQ], (int64_t)r->seq);
	set_long(&x->fields[F_TIME], r->time_valid, (int64_t)r->time);
	avro_value_set_long(&x->fields[F_FROM], (int64_t)r->from);
	avro_value_set_long(&x->fields[F_TO], (int64_t)r->to);
	set_int(&x->fields[F_CPL], r->cpl_valid, (int32_t)r->cpl);
	kind = branch_kind__name(r->kind);
	set_string(&x->fields[F_KIND], kind, kind ? strlen(kind) : 0);
	set_int(&x->fields[F_VECTOR], r->vector_valid, (int32_t)r->vector);
	set_long(&x->fields[F_CR3], r->cr3_valid, (int64_t)r->cr3);
	if (t && t != x->task) {
		x->task = t;
		escape__str(x->task_name, sizeof(x->task_name), t->name);
	}
	set_string(&x->fields[F_TASK], t ? x->task_name : NULL, t ? strlen(x->task_name) : 0);
	if (r->thread_valid) {
		/* The thread the trace named, whose task's name is the task column. */
		set_long(&x->fields[F_PID], true, r->thread_pid);
		set_long(&x->fields[F_TGID], true, r->thread_tgid);
	} else {
		set_long(&x->fields[F_PID], t, t ? t->pid : 0);
		set_long(&x->fields[F_TGID], t && t->tgid_valid, t ? t->tgid : 0);
	}
	ret = symbol(x, t, r->from, F_FROM_SYMBOL, F_FROM_OFFSET);
	if (!ret)
		ret = symbol(x, t, r->to, F_TO_SYMBOL, F_TO_OFFSET);
	if (ret)
		return ret;
	if (avro_file_writer_append_value(x->writer, &x->row)) {
		fprintf(stderr, "vbts decode: avro: %s\n", avro_strerror());
		return -EIO;
	}
	return 0;
}

static int ax_finish(void *ctx)
{
	struct avro_export *x = ctx;
	int ret;

	/* Closing writes the last block (the stream itself stays open). */
	x->open = false;
	ret = avro_file_writer_close(x->writer);
	if (ret) {
		fprintf(stderr, "vbts decode: avro: %s\n", avro_strerror());
		return -EIO;
	}
	return ferror(x->env.o->out) ? -EIO : 0;
}

const struct export_format_ops avro_format = {
	.name = "avro",
	.new = ax_new,
	.record = ax_record,
	.finish = ax_finish,
	.free = ax_free,
};
