// SPDX-License-Identifier: GPL-2.0
/*
 * test-control-json.c - the control socket's get answers every kind of record with exactly
 * the members, values and order of decode's jsonl line for it: a fabricated trace holds one
 * record per vCPU (every record kind, and the variants of each shape), written with the ring
 * writer; each vCPU's ring is decoded and exported as jsonl, and compared with what get
 * serves for it, as compact JSON text.
 */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "control-int.h"
#include "control.h"
#include "decoder.h"
#include "export.h"
#include "ring-reader.h"
#include "ring-writer.h"
#include "test-files.h"
#include "tests.h"

/* One record of each kind, and of each shape a kind's members take. */
static const struct vbts_record *records(unsigned int *nr)
{
	static struct vbts_record r[32];
	unsigned int n = 0;

#define BRANCH(f, t, fl) (r[n++] = (struct vbts_record){ .from = (f), .to = (t), .flags = (fl) })
#define ESC(kind, payload, aux) (r[n++] = vbts_record__make_escape((kind), (payload), (aux)))
	BRANCH(0x401000, 0x402000, VBTS_REC_CPL_VALID | (3ULL << VBTS_REC_CPL_SHIFT) |
				   ((uint64_t)VBTS_BR_CALL << VBTS_REC_KIND_SHIFT));
	BRANCH(0xffffffff81000000ULL, 0x10, 0);
	BRANCH(0x1000, 0x2000, VBTS_REC_CPL_VALID | VBTS_REC_VECTOR_VALID |
			       (14ULL << VBTS_REC_VECTOR_SHIFT) |
			       ((uint64_t)VBTS_BR_EXCEPTION << VBTS_REC_KIND_SHIFT));
	BRANCH(0x3000, 0x4000, 0xfeULL << VBTS_REC_KIND_SHIFT); /* a kind with no name */
	ESC(VBTS_ESC_TASK_ARRIVE, 0x1234000, 5000);
	ESC(VBTS_ESC_TASK_DEPART, 0x1234000, 6000);
	ESC(VBTS_ESC_GAP_BEGIN, 0x401234, VBTS_GAP_SYSCALL);
	ESC(VBTS_ESC_GAP_BEGIN, 0x401234, 77); /* a reason with no name */
	ESC(VBTS_ESC_GAP_END, 0x401240, 7000);
	ESC(VBTS_ESC_LOST, 12, 0);
	ESC(VBTS_ESC_TIME, 8000, 0);
	ESC(VBTS_ESC_START, 9000, VBTS_START_CPL_USER | VBTS_START_CPL_KERNEL);
	ESC(VBTS_ESC_START, 9001, VBTS_START_CPL_USER);
	ESC(VBTS_ESC_START, 9002, 0);
	ESC(VBTS_ESC_STOP, 10000, 0);
	ESC(VBTS_ESC_FREEZE, 11000, VBTS_FREEZE_PANIC);
	ESC(VBTS_ESC_FREEZE, 11001, 99);
	ESC(VBTS_ESC_GUEST_BTS_DROP, 0x405000, VBTS_GUEST_BTS_DROP_FULL);
	ESC(VBTS_ESC_GUEST_BTS_DROP, 42, VBTS_GUEST_BTS_DROP_KERNEL);
	ESC(VBTS_ESC_TASK_PID, 41ULL << 32 | 42, 0);
	ESC(VBTS_ESC_THREAD, 41ULL << 32 | 43, 0x88800a002000ULL);
	ESC(VBTS_ESC_ENTRY, 0x401000, VBTS_ENTRY_EXEC);
	ESC(VBTS_ESC_ENTRY, 0x402000, 9); /* a reason no decoder knows */
	ESC(0x7f, 0xabc, 0xdef);          /* a kind from a newer writer */
	ESC(VBTS_ESC_NONE, 0, 0);         /* a slot never written */
#undef BRANCH
#undef ESC
	*nr = n;
	return r;
}

static ssize_t ring_read(void *ctx, struct vbts_record *buf, size_t max, uint64_t *first_seq)
{
	return ring_reader__read(ctx, buf, max, first_seq);
}

static const struct decoder_source_ops ring_ops = { .read = ring_read };

/* decode's jsonl of ring file @path (vCPU @vcpu), every line (the caller frees it). */
static char *decode_jsonl(const char *path, unsigned int vcpu)
{
	struct exporter_options o = { .format = EXPORT_JSONL };
	char err[RING_READER_ERR_MAX], *text = NULL, *lines;
	struct ring_reader *rr = ring_reader__open(path, err, sizeof(err));
	struct decoder_source src = { .vcpu = vcpu, .ops = &ring_ops };
	struct decoded_record d;
	struct exporter *e;
	struct decoder *dec;
	size_t len = 0;

	ck_assert_msg(rr, "%s", err);
	src.ctx = rr;
	o.out = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(o.out);
	e = exporter__new(&o);
	dec = decoder__new(&src, 1);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(dec);
	while (decoder__next(dec, &d) == 1)
		ck_assert_int_eq(exporter__record(e, &d), 0);
	ck_assert_int_eq(exporter__finish(e), 0);
	exporter__free(e);
	decoder__free(dec);
	ring_reader__close(rr);
	fclose(o.out);
	lines = strdup(text);
	free(text);
	ck_assert_ptr_nonnull(lines);
	return lines;
}

START_TEST(test_get_is_decode_jsonl)
{
	struct ring_writer_config rc = { .capacity = 16, .mode = VBTS_RING_WRAP };
	char dir[PATH_MAX], path[PATH_MAX + 32], line[96], err[512];
	struct control_config cfg = { .ring_records = 16, .backend = "step" };
	const struct vbts_record *recs;
	struct control *c;
	unsigned int nr;

	recs = records(&nr);
	test__make_temp_dir(dir, sizeof(dir), "check-control-json");
	for (unsigned int i = 0; i < nr; i++) {
		struct ring_writer *w;

		snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, i);
		rc.vcpu_id = i;
		w = ring_writer__create(path, &rc);
		ck_assert_ptr_nonnull(w);
		ck_assert_int_eq(ring_writer__append(w, &recs[i]), 0);
		ring_writer__close(w);
	}

	cfg.trace_dir = dir;
	cfg.nr_vcpus = nr;
	c = control__create(&cfg, err, sizeof(err));
	ck_assert_msg(c, "control__create: %s", err);
	for (unsigned int i = 0; i < nr; i++) {
		char *want, *got, *nl;
		json_t *resp;

		snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, i);
		want = decode_jsonl(path, i);
		nl = strchr(want, '\n');
		ck_assert_msg(nl && !nl[1], "vCPU %u: one jsonl line: %s", i, want);
		*nl = '\0';
		snprintf(line, sizeof(line), "{\"verb\":\"get\",\"vcpu\":%u,\"seq\":0}", i);
		resp = control__request(c, line, strlen(line), NULL);
		ck_assert_ptr_nonnull(resp);
		ck_assert_msg(json_object_get(resp, "record"), "vCPU %u: %s", i,
			      json_string_value(json_object_get(resp, "error")));
		got = json_dumps(json_object_get(resp, "record"),
				 JSON_COMPACT | JSON_PRESERVE_ORDER);
		ck_assert_ptr_nonnull(got);
		ck_assert_msg(!strcmp(got, want), "vCPU %u:\n get    %s\n decode %s", i, got,
			      want);
		free(got);
		free(want);
		json_decref(resp);
	}
	control__destroy(c);
	ck_assert_int_eq(test__remove_tree(dir), 0);
}
END_TEST

Suite *control_json_suite(void)
{
	Suite *s = suite_create("control-json");
	TCase *tc = tcase_create("get");

	tcase_add_test(tc, test_get_is_decode_jsonl);
	suite_add_tcase(s, tc);
	return s;
}
