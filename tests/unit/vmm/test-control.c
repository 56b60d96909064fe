// SPDX-License-Identifier: GPL-2.0
/*
 * test-control.c - the control socket's request parser and dispatcher under hostile input
 * (bad JSON, NUL bytes, huge lines, deep nesting, wrong types, unknown verbs and members),
 * its verbs over real ring files and, in stream mode, over the segment files of real stream
 * writers (closed, compressed, removed, damaged and open segments), its events, and the
 * socket itself: creation rules, an over-long line, too many clients, a subscriber that
 * never reads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "control-int.h"
#include "control.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "test-files.h"
#include "tests.h"
#include "tracer.h"
#include "vcpu.h"

static char dir[PATH_MAX];
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* The VM as the dispatcher sees it: what was asked, and a recording state to report. */
static struct fake_vm {
	unsigned int rec;
	unsigned int nr_requests;
	unsigned int last_vcpu, last_req, last_cpl;
	unsigned int nr_set_mode;
	unsigned int nr_resize, resize_vcpu;
	uint64_t resize_records;
	unsigned int nr_set_tasks, nr_names;
	char first_name[64];
	bool no_tasks;          /* set_tasks answers -ENOTSUP */
} fake;

static int fake_state(void *opaque, unsigned int vcpu, struct control_vcpu_state *st)
{
	st->run = "running";
	st->rec = fake.rec;
	st->pending = 0;
	st->cpl = 0;
	return 0;
}

static int fake_request(void *opaque, unsigned int vcpu, unsigned int req, unsigned int cpl)
{
	fake.nr_requests++;
	fake.last_vcpu = vcpu;
	fake.last_req = req;
	fake.last_cpl = cpl;
	return 0;
}

static int fake_set_mode(void *opaque, unsigned int vcpu, unsigned int mode, char *err,
			 size_t errlen)
{
	fake.nr_set_mode++;
	if (mode == VBTS_RING_WRAP)
		return 0;
	snprintf(err, errlen, "stream mode is not available");
	return -ENOTSUP;
}

static int fake_resize(void *opaque, unsigned int vcpu, uint64_t records)
{
	fake.nr_resize++;
	fake.resize_vcpu = vcpu;
	fake.resize_records = records;
	return 0;
}

static int fake_set_tasks(void *opaque, const char *const *names, unsigned int nr, char *err,
			  size_t errlen)
{
	if (fake.no_tasks) {
		snprintf(err, errlen, "no task filter here");
		return -ENOTSUP;
	}
	fake.nr_set_tasks++;
	fake.nr_names = nr;
	snprintf(fake.first_name, sizeof(fake.first_name), "%s", nr ? names[0] : "");
	return 0;
}

static const struct control_target_ops fake_ops = {
	.state = fake_state,
	.request = fake_request,
	.set_mode = fake_set_mode,
	.resize = fake_resize,
	.set_tasks = fake_set_tasks,
};

static struct ring_writer *rings[2];

#define RING_CAP 64

static void setup(void)
{
	struct ring_writer_config rc = { .capacity = RING_CAP, .mode = VBTS_RING_WRAP };
	char path[PATH_MAX + 32];

	test__make_temp_dir(dir, sizeof(dir), "check-control");
	ck_assert_uint_lt(strlen(dir), 90); /* room for the socket's name in sun_path */
	memcpy(sock_path, dir, strlen(dir));
	memcpy(sock_path + strlen(dir), "/s", 3);
	for (unsigned int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/vcpu%u.ring", dir, i);
		rc.vcpu_id = i;
		rings[i] = ring_writer__create(path, &rc);
		ck_assert_ptr_nonnull(rings[i]);
	}
	memset(&fake, 0, sizeof(fake));
	fake.rec = VCPU_REC_ON;
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	for (unsigned int i = 0; i < 2; i++)
		ring_writer__close(rings[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static struct control *server(const char *backend, bool with_socket)
{
	struct control_config cfg = {
		.path = with_socket ? sock_path : NULL,
		.trace_dir = dir,
		.nr_vcpus = 2,
		.ring_records = RING_CAP,
		.backend = backend,
		.ops = &fake_ops,
	};
	char err[512];
	struct control *c = control__create(&cfg, err, sizeof(err));

	ck_assert_msg(c, "control__create: %s", err);
	return c;
}

/* Branch records from = seq, to = seq + 1000 (kind call, CPL 0) into vCPU @v's ring. */
static void append_branches(unsigned int v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = ring_writer__committed(rings[v]);
		struct vbts_record r = {
			.from = seq,
			.to = seq + 1000,
			.flags = VBTS_REC_CPL_VALID | ((uint64_t)VBTS_BR_CALL << VBTS_REC_KIND_SHIFT),
		};

		ck_assert_int_eq(ring_writer__append(rings[v], &r), 0);
	}
}

/* One request; the response's "code" (NULL when it is no error) into *@code. */
static json_t *req_n(struct control *c, const char *line, size_t len, const char **code)
{
	json_t *r = control__request(c, line, len, NULL);

	ck_assert_ptr_nonnull(r);
	ck_assert(json_is_object(r));
	ck_assert_int_eq(json_integer_value(json_object_get(r, "v")), CONTROL_PROTO_VERSION);
	*code = json_string_value(json_object_get(r, "code"));
	/* an error object has both members, a success neither */
	ck_assert_int_eq(!!json_object_get(r, "error"), !!*code);
	return r;
}

static json_t *req(struct control *c, const char *line, const char **code)
{
	return req_n(c, line, strlen(line), code);
}

static void expect_code(struct control *c, const char *line, size_t len, const char *want)
{
	const char *code;
	json_t *r = req_n(c, line, len, &code);

	ck_assert_msg(code && !strcmp(code, want), "%.80s: code %s, want %s", line,
		      code ? code : "(none)", want);
	json_decref(r);
}

#define EXPECT(c, line, want) expect_code(c, line, strlen(line), want)

static void expect_ok(struct control *c, const char *line)
{
	const char *code;
	json_t *r = req(c, line, &code);

	ck_assert_msg(!code, "%s: %s", line, json_string_value(json_object_get(r, "error")));
	json_decref(r);
}

START_TEST(test_bad_json)
{
	struct control *c = server("step", false);
	static const char *const bad[] = {
		"", " ", "{", "}", "{\"verb\":", "{\"verb\":\"status\"", "nul", "{'verb':1}",
		"{\"verb\":\"status\"}}", "\xff\xfe", "{\"verb\":\"st\xc3\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT(c, bad[i], "bad-json");
	/* only an object or an array parses at the top */
	EXPECT(c, "\"status\"", "bad-json");
	EXPECT(c, "17", "bad-json");
	EXPECT(c, "null", "bad-json");
	EXPECT(c, "[1,2]", "bad-request");
	EXPECT(c, "{}", "bad-request");
	/* the server still answers */
	expect_ok(c, "{\"verb\":\"status\"}");
	control__destroy(c);
}
END_TEST

START_TEST(test_nul_bytes)
{
	struct control *c = server("step", false);
	static const char raw[] = "{\"verb\":\"status\"}\0garbage";
	static const char in_str[] = "{\"verb\":\"sta\0tus\"}";

	expect_code(c, raw, sizeof(raw) - 1, "bad-json");
	expect_code(c, in_str, sizeof(in_str) - 1, "bad-json");
	EXPECT(c, "{\"verb\":\"status\\u0000\"}", "bad-json");
	EXPECT(c, "{\"verb\":\"status\",\"id\":\"a\\u0000b\"}", "bad-json");
	control__destroy(c);
}
END_TEST

START_TEST(test_huge_and_deep)
{
	struct control *c = server("step", false);
	size_t n = 1 << 20, depth = (CONTROL_LINE_MAX - 64) / 2;
	char *big = malloc(n + 1);
	const char *code;
	json_t *r;

	ck_assert_ptr_nonnull(big);
	/* longer than a request may be, valid JSON or not */
	memset(big, ' ', n);
	memcpy(big, "{\"verb\":\"status\"}", 17);
	expect_code(c, big, n, "too-long");
	expect_code(c, big, CONTROL_LINE_MAX, "too-long");
	/* one byte shorter it is a request like any other */
	r = req_n(c, big, CONTROL_LINE_MAX - 1, &code);
	ck_assert_ptr_null(code);
	json_decref(r);

	/* nesting as deep as a request line allows: refused, no crash */
	memset(big, '[', depth);
	memset(big + depth, ']', depth);
	expect_code(c, big, 2 * depth, "bad-request");
	n = (size_t)snprintf(big, 64, "{\"verb\":\"status\",\"x\":");
	memset(big + n, '[', depth - 16);
	memset(big + n + depth - 16, ']', depth - 16);
	big[n + 2 * (depth - 16)] = '}';
	expect_code(c, big, n + 2 * (depth - 16) + 1, "bad-request");
	/* an unclosed one */
	memset(big, '{', CONTROL_LINE_MAX - 1);
	expect_code(c, big, CONTROL_LINE_MAX - 1, "bad-json");
	memset(big, '[', CONTROL_LINE_MAX - 1);
	expect_code(c, big, CONTROL_LINE_MAX - 1, "bad-json");
	free(big);
	control__destroy(c);
}
END_TEST

START_TEST(test_wrong_types)
{
	struct control *c = server("step", false);

	EXPECT(c, "{\"verb\":1}", "bad-type");
	EXPECT(c, "{\"verb\":null}", "bad-type");
	EXPECT(c, "{\"verb\":[\"status\"]}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":\"0\",\"seq\":0}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0.0,\"seq\":0}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":true,\"seq\":0}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":-1,\"seq\":0}", "bad-value");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":2,\"seq\":0}", "bad-value");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":99999999999999999999,\"seq\":0}", "bad-json");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":\"x\"}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":1.5}", "bad-type");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":-3}", "bad-value");
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0}", "bad-request");
	EXPECT(c, "{\"verb\":\"get\",\"seq\":0}", "bad-request");
	EXPECT(c, "{\"verb\":\"drain\",\"vcpu\":0,\"max\":100000}", "bad-value");
	EXPECT(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":{}}", "bad-type");
	EXPECT(c, "{\"verb\":\"config\",\"cpl\":3}", "bad-type");
	EXPECT(c, "{\"verb\":\"config\",\"cpl\":\"ring3\"}", "bad-value");
	EXPECT(c, "{\"verb\":\"config\",\"mode\":1}", "bad-type");
	EXPECT(c, "{\"verb\":\"config\",\"mode\":\"fast\"}", "bad-value");
	EXPECT(c, "{\"verb\":\"config\",\"size\":\"big\"}", "bad-type");
	EXPECT(c, "{\"verb\":\"config\",\"size\":0}", "bad-value");
	EXPECT(c, "{\"verb\":\"config\",\"tasks\":\"sh\"}", "bad-type");
	EXPECT(c, "{\"verb\":\"config\",\"tasks\":[1]}", "bad-type");
	EXPECT(c, "{\"verb\":\"status\",\"v\":2}", "bad-version");
	EXPECT(c, "{\"verb\":\"status\",\"v\":\"1\"}", "bad-version");
	/* duplicate members: which one counts would be a guess */
	EXPECT(c, "{\"verb\":\"status\",\"verb\":\"freeze\"}", "bad-json");
	/* nothing was asked of the VM by any of them */
	ck_assert_uint_eq(fake.nr_requests, 0);
	ck_assert_uint_eq(fake.nr_set_mode, 0);
	control__destroy(c);
}
END_TEST

START_TEST(test_unknown)
{
	struct control *c = server("step", false);
	const char *code;
	json_t *r;

	EXPECT(c, "{\"verb\":\"reboot\"}", "unknown-verb");
	EXPECT(c, "{\"verb\":\"\"}", "unknown-verb");
	EXPECT(c, "{\"verb\":\"STATUS\"}", "unknown-verb");
	EXPECT(c, "{\"verb\":\"status\\n\\u001b[2J\"}", "unknown-verb");
	EXPECT(c, "{\"verb\":\"status\",\"vcpu\":0}", "bad-request");
	EXPECT(c, "{\"verb\":\"freeze\",\"force\":true}", "bad-request");
	EXPECT(c, "{\"verb\":\"stop\",\"\\u001b]0;x\\u0007\":1}", "bad-request");
	/* the id comes back, on an error too */
	r = req(c, "{\"verb\":\"reboot\",\"id\":42}", &code);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 42);
	json_decref(r);
	ck_assert_uint_eq(fake.nr_requests, 0);
	control__destroy(c);
}
END_TEST

/* A string id of @len bytes of 'a' with verb @verb: the response. */
static json_t *req_id_len(struct control *c, const char *verb, size_t len, const char **code)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "{\"verb\":\"%s\",\"id\":\"", verb);

	ck_assert_uint_lt(n + len + 3, sizeof(line));
	memset(line + n, 'a', len);
	memcpy(line + n + len, "\"}", 3);
	return req(c, line, code);
}

/* The id: an integer or a string of at most 64 bytes; anything else refused, not dropped. */
START_TEST(test_request_id)
{
	struct control *c = server("step", false);
	const char *code;
	json_t *r;

	r = req(c, "{\"verb\":\"status\",\"id\":-7}", &code);
	ck_assert_ptr_null(code);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), -7);
	json_decref(r);
	r = req_id_len(c, "status", 64, &code);
	ck_assert_ptr_null(code);
	ck_assert_uint_eq(json_string_length(json_object_get(r, "id")), 64);
	json_decref(r);
	r = req(c, "{\"verb\":\"status\",\"id\":\"\"}", &code);
	ck_assert_ptr_null(code);
	ck_assert_str_eq(json_string_value(json_object_get(r, "id")), "");
	json_decref(r);
	/* 64 bytes that are 32 two-byte characters: bytes count */
	r = req(c, "{\"verb\":\"status\",\"id\":\"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
		"x\"}", &code);
	ck_assert_str_eq(code, "bad-value");
	ck_assert_ptr_null(json_object_get(r, "id"));
	json_decref(r);

	/* refused with an error object that does not echo it; the verb is not executed */
	r = req_id_len(c, "freeze", 65, &code);
	ck_assert_str_eq(code, "bad-value");
	ck_assert_ptr_null(json_object_get(r, "id"));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "error")), "64"));
	json_decref(r);
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":{\"a\":1}}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":{}}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":1.5}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":1e3}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":[1]}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":true}", "bad-type");
	EXPECT(c, "{\"verb\":\"freeze\",\"id\":null}", "bad-type");
	/* whatever else is wrong too, the id's error does not depend on the verb */
	EXPECT(c, "{\"verb\":\"reboot\",\"id\":1.5}", "bad-type");
	ck_assert_uint_eq(fake.nr_requests, 0);
	control__destroy(c);
}
END_TEST

static json_t *get_ok(struct control *c, const char *line)
{
	const char *code;
	json_t *r = req(c, line, &code);

	ck_assert_msg(!code, "%s: %s", line, json_string_value(json_object_get(r, "error")));
	return r;
}

static uint64_t count_of(struct control *c, unsigned int vcpu)
{
	char line[64];
	json_t *r;
	uint64_t n;

	snprintf(line, sizeof(line), "{\"verb\":\"count\",\"vcpu\":%u}", vcpu);
	r = get_ok(c, line);
	n = (uint64_t)json_integer_value(json_object_get(r, "count"));
	json_decref(r);
	return n;
}

START_TEST(test_get_count_drain_clear)
{
	struct control *c = server("step", false);
	json_t *r, *rec, *arr;
	const char *code;

	ck_assert_uint_eq(count_of(c, 0), 0);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":0}", "not-found");
	append_branches(0, 10);
	ck_assert_uint_eq(count_of(c, 0), 10);
	ck_assert_uint_eq(count_of(c, 1), 0);
	r = get_ok(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":7}");
	rec = json_object_get(r, "record");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "type")), "branch");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "from")), "0x7");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "to")), "0x3ef");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "kind")), "call");
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "cpl")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "seq")), 7);
	json_decref(r);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":10}", "not-found");

	/* wrapped: while the writer may still write, its next slot is not trusted */
	append_branches(0, RING_CAP + 30);
	ck_assert_uint_eq(count_of(c, 0), RING_CAP - 1);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":40}", "overwritten");
	r = get_ok(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":41}");
	json_decref(r);
	/* a vCPU that records no more: the whole ring */
	fake.rec = VCPU_REC_OFF;
	ck_assert_uint_eq(count_of(c, 0), RING_CAP);
	r = get_ok(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":40}");
	json_decref(r);
	fake.rec = VCPU_REC_ON;

	/* drain: bounded by max, cursor continues, skipped counts what is gone */
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":0,\"max\":5}");
	arr = json_object_get(r, "records");
	ck_assert_uint_eq(json_array_size(arr), 5);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "skipped")), 41);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(arr, 0), "seq")), 41);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "cursor")), 46);
	json_decref(r);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":46}");
	ck_assert_uint_eq(json_array_size(json_object_get(r, "records")), 104 - 46);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "cursor")), 104);
	json_decref(r);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":104}");
	ck_assert_uint_eq(json_array_size(json_object_get(r, "records")), 0);
	json_decref(r);

	/* clear: the view starts now, the file keeps its records */
	r = get_ok(c, "{\"verb\":\"clear\",\"vcpu\":0}");
	json_decref(r);
	ck_assert_uint_eq(count_of(c, 0), 0);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":100}", "not-found");
	append_branches(0, 3);
	ck_assert_uint_eq(count_of(c, 0), 3);
	r = req(c, "{\"verb\":\"count\"}", &code);
	ck_assert_int_eq(json_integer_value(json_object_get(r, "count")), 3);
	ck_assert_uint_eq(json_array_size(json_object_get(r, "vcpus")), 2);
	json_decref(r);
	ck_assert_uint_eq(ring_writer__committed(rings[0]), 107);
	control__destroy(c);
}
END_TEST

START_TEST(test_drain_bound)
{
	struct control *c = server("step", false);
	json_t *r;

	ring_writer__close(rings[1]);
	{
		struct ring_writer_config rc = { .capacity = 4096, .mode = VBTS_RING_WRAP };
		char path[PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/vcpu1.ring", dir);
		unlink(path);
		rings[1] = ring_writer__create(path, &rc);
		ck_assert_ptr_nonnull(rings[1]);
	}
	append_branches(1, 3000);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":1}");
	ck_assert_uint_eq(json_array_size(json_object_get(r, "records")), CONTROL_DRAIN_MAX);
	json_decref(r);
	control__destroy(c);
}
END_TEST

START_TEST(test_verbs_to_vm)
{
	struct control *c = server("step", false), *k;
	json_t *r;
	const char *code;

	expect_ok(c, "{\"verb\":\"stop\",\"vcpu\":1}");
	ck_assert_uint_eq(fake.last_vcpu, 1);
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_STOP);
	fake.nr_requests = 0;
	expect_ok(c, "{\"verb\":\"start\"}");
	ck_assert_uint_eq(fake.nr_requests, 2);
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_START);
	expect_ok(c, "{\"verb\":\"freeze\"}");
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_FREEZE);
	expect_ok(c, "{\"verb\":\"config\",\"cpl\":\"user\",\"vcpu\":0}");
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_CPL);
	ck_assert_uint_eq(fake.last_cpl, VBTS_CPL_USER);

	/* sizes: over the budget refused naming it; the same size is fine; another is not */
	r = req(c, "{\"verb\":\"config\",\"size\":100000000000}", &code);
	ck_assert_str_eq(code, "over-budget");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "error")),
				     "memory budget of"));
	json_decref(r);
	ck_assert_uint_eq(fake.nr_resize, 0);
	/* another size within the budget: every vCPU's ring, or the one named */
	expect_ok(c, "{\"verb\":\"config\",\"size\":128}");
	ck_assert_uint_eq(fake.nr_resize, 2);
	ck_assert_uint_eq(fake.resize_records, 128);
	expect_ok(c, "{\"verb\":\"config\",\"size\":32,\"vcpu\":1}");
	ck_assert_uint_eq(fake.nr_resize, 3);
	ck_assert_uint_eq(fake.resize_vcpu, 1);
	ck_assert_uint_eq(fake.resize_records, 32);
	EXPECT(c, "{\"verb\":\"config\",\"size\":0}", "bad-value");
	ck_assert_uint_eq(fake.nr_resize, 3);
	expect_ok(c, "{\"verb\":\"config\",\"mode\":\"wrap\"}");
	EXPECT(c, "{\"verb\":\"config\",\"mode\":\"stream\"}", "unsupported");
	ck_assert_uint_eq(fake.nr_set_mode, 2);
	/* the task filter: set, shown by status, cleared; refused where the run has none */
	expect_ok(c, "{\"verb\":\"config\",\"tasks\":[\"sh\",\"42\"]}");
	ck_assert_uint_eq(fake.nr_set_tasks, 1);
	ck_assert_uint_eq(fake.nr_names, 2);
	ck_assert_str_eq(fake.first_name, "sh");
	r = req(c, "{\"verb\":\"status\"}", &code);
	ck_assert_ptr_null(code);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(json_object_get(
		json_array_get(json_object_get(r, "vcpus"), 0), "filters"), "tasks"), 1)), "42");
	json_decref(r);
	expect_ok(c, "{\"verb\":\"config\",\"tasks\":[]}");
	ck_assert_uint_eq(fake.nr_names, 0);
	EXPECT(c, "{\"verb\":\"config\",\"tasks\":[\"sh\"],\"vcpu\":0}", "bad-request");
	fake.no_tasks = true;
	EXPECT(c, "{\"verb\":\"config\",\"tasks\":[\"sh\"]}", "unsupported");
	fake.no_tasks = false;
	/* a bad member refuses the whole request: nothing applied */
	fake.nr_requests = 0;
	EXPECT(c, "{\"verb\":\"config\",\"cpl\":\"user\",\"mode\":\"x\"}", "bad-value");
	ck_assert_uint_eq(fake.nr_requests, 0);
	control__destroy(c);

	/* the kvm backend: stop, start and cpl go to its vCPUs as the step backend's do */
	k = server("kvm", false);
	expect_ok(k, "{\"verb\":\"stop\"}");
	ck_assert_uint_eq(fake.nr_requests, 2);
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_STOP);
	expect_ok(k, "{\"verb\":\"start\",\"vcpu\":0}");
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_START);
	expect_ok(k, "{\"verb\":\"config\",\"cpl\":\"user\"}");
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_CPL);
	ck_assert_uint_eq(fake.last_cpl, VBTS_CPL_USER);
	fake.nr_requests = 0;
	expect_ok(k, "{\"verb\":\"freeze\"}");
	ck_assert_uint_eq(fake.nr_requests, 2);
	control__destroy(k);
}
END_TEST

/*
 * A ring resized by its writer: the server reads the new file under the name (its size in
 * status), the numbering goes on, and what the new size could not keep is gone.
 */
START_TEST(test_resized_ring)
{
	struct control *c = server("step", false);
	struct vbts_record rec;
	const char *code;
	json_t *r, *v;

	append_branches(0, 40);
	r = req(c, "{\"verb\":\"count\",\"vcpu\":0}", &code);
	ck_assert_ptr_null(code);
	json_decref(r);
	ck_assert_int_eq(ring_writer__resize(rings[0], 16), 0);
	append_branches(0, 4);
	r = req(c, "{\"verb\":\"status\"}", &code);
	ck_assert_ptr_null(code);
	v = json_array_get(json_object_get(r, "vcpus"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "size")), 16);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "records")), 44);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "lost")), 28);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "count")), 15);
	json_decref(r);
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":43}", &code);
	ck_assert_ptr_null(code);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "record"), "from")),
			 "0x2b");
	json_decref(r);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":20}", "overwritten");
	/* grown: what the smaller ring held is all there is before the new records */
	ck_assert_int_eq(ring_writer__resize(rings[0], 64), 0);
	r = req(c, "{\"verb\":\"count\",\"vcpu\":0}", &code);
	ck_assert_ptr_null(code);
	v = json_array_get(json_object_get(r, "vcpus"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "first")), 28);
	ck_assert_int_eq(json_integer_value(json_object_get(v, "end")), 44);
	json_decref(r);
	(void)rec;
	control__destroy(c);
}
END_TEST

static unsigned int count_events(json_t *arr, const char *name)
{
	unsigned int n = 0;
	size_t i;
	json_t *e;

	json_array_foreach(arr, i, e)
		n += !strcmp(json_string_value(json_object_get(e, "event")), name);
	return n;
}

START_TEST(test_events)
{
	struct control *c = server("step", false);
	json_t *ev, *e;

	append_branches(0, 5);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 0); /* only what comes after the subscription */
	json_decref(ev);
	ring_writer__escape(rings[0], VBTS_ESC_TASK_DEPART, 0x1000, 77);
	ring_writer__escape(rings[0], VBTS_ESC_TASK_ARRIVE, 0x2000, 78);
	append_branches(0, 3);
	ring_writer__escape(rings[1], VBTS_ESC_FREEZE, 99, VBTS_FREEZE_PANIC);
	ring_writer__escape(rings[0], VBTS_ESC_FREEZE, 100, VBTS_FREEZE_OPERATOR);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 4);
	e = json_array_get(ev, 1);
	ck_assert_str_eq(json_string_value(json_object_get(e, "event")), "task-arrive");
	ck_assert_str_eq(json_string_value(json_object_get(e, "cr3")), "0x2000");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "time")), 78);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "seq")), 6);
	ck_assert_uint_eq(count_events(ev, "task-depart"), 1);
	ck_assert_uint_eq(count_events(ev, "freeze"), 1);
	ck_assert_uint_eq(count_events(ev, "crash"), 1);
	json_decref(ev);
	/* wrapping: the lost count grows, told as drops; records gone unseen are counted */
	append_branches(1, RING_CAP * 3);
	ev = control__poll_events(c);
	ck_assert_uint_eq(count_events(ev, "drops"), 1);
	ck_assert_uint_eq(count_events(ev, "scan-missed"), 1);
	json_decref(ev);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 0);
	json_decref(ev);
	control__destroy(c);
}
END_TEST

/* The record @seq of vCPU 0 as "get" serves it (the caller frees the response @resp). */
static json_t *get_record(struct control *c, uint64_t seq, json_t **resp)
{
	char line[96];

	snprintf(line, sizeof(line), "{\"verb\":\"get\",\"vcpu\":0,\"seq\":%llu}",
		 (unsigned long long)seq);
	*resp = get_ok(c, line);
	return json_object_get(*resp, "record");
}

/*
 * Thread and entry records, served with decode's jsonl members (pid and tgid; to and reason,
 * a reason no decoder knows as its number), and told as events.
 */
START_TEST(test_thread_records)
{
	struct control *c = server("step", false);
	json_t *r, *rec, *ev, *e;

	ev = control__poll_events(c);
	json_decref(ev);
	ring_writer__escape(rings[0], VBTS_ESC_THREAD, 41ULL << 32 | 42, 0x88800a002000ULL);
	ring_writer__escape(rings[0], VBTS_ESC_ENTRY, 0x401000, VBTS_ENTRY_SIGNAL);
	ring_writer__escape(rings[0], VBTS_ESC_ENTRY, 0x402000, 9);

	rec = get_record(c, 0, &r);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "type")), "thread");
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "pid")), 42);
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "tgid")), 41);
	ck_assert_uint_eq(json_object_size(rec), 5);
	json_decref(r);
	rec = get_record(c, 1, &r);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "type")), "entry");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "to")), "0x401000");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "reason")), "signal");
	ck_assert_uint_eq(json_object_size(rec), 5);
	json_decref(r);
	rec = get_record(c, 2, &r);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "type")), "entry");
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "reason")), 9);
	json_decref(r);

	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 3);
	e = json_array_get(ev, 0);
	ck_assert_str_eq(json_string_value(json_object_get(e, "event")), "thread");
	ck_assert_int_eq(json_integer_value(json_object_get(e, "pid")), 42);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "tgid")), 41);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "seq")), 0);
	e = json_array_get(ev, 1);
	ck_assert_str_eq(json_string_value(json_object_get(e, "event")), "entry");
	ck_assert_str_eq(json_string_value(json_object_get(e, "to")), "0x401000");
	ck_assert_str_eq(json_string_value(json_object_get(e, "reason")), "signal");
	e = json_array_get(ev, 2);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "reason")), 9);
	json_decref(ev);
	control__destroy(c);
}
END_TEST

/* ---- stream mode ---- */

#define SEG_RECORDS 16  /* slots per segment: 15 records, the last slot kept for a LOST one */

static struct seg_budget seg_budget = { .limit = 64ULL << 20 };

static struct seg_writer *stream_writer(unsigned int vcpu)
{
	struct seg_writer_config sc = {
		.dir = dir,
		.vcpu_id = vcpu,
		.vm_id = 0x1234,
		.segment_records = SEG_RECORDS,
		.budget = &seg_budget,
		.on_full = SEG_ON_FULL_DROP,
	};
	struct seg_writer *w = seg_writer__create(&sc);

	ck_assert_ptr_nonnull(w);
	return w;
}

static struct control *stream_server(void)
{
	struct control_config cfg = {
		.trace_dir = dir,
		.nr_vcpus = 2,
		.ring_records = RING_CAP,
		.stream = true,
		.segment_records = SEG_RECORDS,
		.backend = "step",
		.ops = &fake_ops,
	};
	char err[512];
	struct control *c = control__create(&cfg, err, sizeof(err));

	ck_assert_msg(c, "control__create: %s", err);
	return c;
}

/* Branch records from = seq, to = seq + 1000, as append_branches() makes them. */
static void stream_branches(struct seg_writer *w, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint64_t seq = seg_writer__committed(w);
		struct vbts_record r = {
			.from = seq,
			.to = seq + 1000,
			.flags = VBTS_REC_CPL_VALID | ((uint64_t)VBTS_BR_CALL << VBTS_REC_KIND_SHIFT),
		};

		ck_assert_int_eq(seg_writer__append(w, &r, 1), 1);
	}
}

/* get @seq of vCPU 0 answers the branch record stream_branches() made for it. */
static void expect_branch(struct control *c, uint64_t seq)
{
	char line[96], from[24];
	json_t *r, *rec;

	snprintf(line, sizeof(line), "{\"verb\":\"get\",\"vcpu\":0,\"seq\":%llu}",
		 (unsigned long long)seq);
	r = get_ok(c, line);
	rec = json_object_get(r, "record");
	snprintf(from, sizeof(from), "0x%llx", (unsigned long long)seq);
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "seq")), (json_int_t)seq);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "type")), "branch");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "from")), from);
	json_decref(r);
}

static uint64_t member(json_t *r, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(r, key));
}

/* count of vCPU @vcpu: first and end into *@first and *@end. */
static void window_of(struct control *c, unsigned int vcpu, uint64_t *first, uint64_t *end)
{
	char line[64];
	json_t *r, *v;

	snprintf(line, sizeof(line), "{\"verb\":\"count\",\"vcpu\":%u}", vcpu);
	r = get_ok(c, line);
	v = json_array_get(json_object_get(r, "vcpus"), 0);
	*first = member(v, "first");
	*end = member(v, "end");
	ck_assert_uint_eq(member(r, "count"), *end - *first);
	json_decref(r);
}

static void seg_file(unsigned int vcpu, uint64_t index, char *buf, size_t len)
{
	snprintf(buf, len, "%s/vcpu%u.%08llu%s", dir, vcpu, (unsigned long long)index,
		 VBTS_SEG_SUFFIX);
}

START_TEST(test_stream_verbs)
{
	struct seg_writer *w0 = stream_writer(0), *w1 = stream_writer(1);
	struct control *c = stream_server();
	uint64_t first, end;
	json_t *r, *arr, *v;
	const char *code;

	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(end, 0);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":0}", "not-found");
	stream_branches(w0, 100);
	stream_branches(w1, 3);
	/* while the collector may still compress them: closed segments raw or compressed */
	for (uint64_t s = 0; s < 100; s++)
		expect_branch(c, s);
	seg_writer__sync(w0);
	for (uint64_t s = 100; s-- > 0;)
		expect_branch(c, s);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":100}", "not-found");
	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(end, 100);
	window_of(c, 1, &first, &end);
	ck_assert_uint_eq(end, 3);

	r = get_ok(c, "{\"verb\":\"status\"}");
	v = json_array_get(json_object_get(r, "vcpus"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(v, "mode")), "stream");
	ck_assert_uint_eq(member(v, "size"), SEG_RECORDS);
	ck_assert_uint_eq(member(v, "records"), 100);
	ck_assert_uint_eq(member(v, "count"), 100);
	ck_assert_uint_eq(member(v, "lost"), 0);
	json_decref(r);

	/* drain: every record from the cursor on, across segments */
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":0}");
	arr = json_object_get(r, "records");
	ck_assert_uint_eq(json_array_size(arr), 100);
	for (size_t i = 0; i < 100; i++)
		ck_assert_uint_eq(member(json_array_get(arr, i), "seq"), i);
	ck_assert_uint_eq(member(r, "skipped"), 0);
	ck_assert_uint_eq(member(r, "cursor"), 100);
	json_decref(r);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":29,\"max\":3}");
	ck_assert_uint_eq(json_array_size(json_object_get(r, "records")), 3);
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "records"), 0), "seq"), 29);
	ck_assert_uint_eq(member(r, "cursor"), 32);
	json_decref(r);

	/* what segments cannot do: told, nothing asked of the VM */
	r = req(c, "{\"verb\":\"config\",\"size\":32}", &code);
	ck_assert_str_eq(code, "unsupported");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(r, "error")),
				     "never rewritten"));
	json_decref(r);
	EXPECT(c, "{\"verb\":\"config\",\"size\":0}", "unsupported");
	EXPECT(c, "{\"verb\":\"config\",\"mode\":\"wrap\"}", "unsupported");
	EXPECT(c, "{\"verb\":\"config\",\"mode\":\"wrap\",\"cpl\":\"user\"}",
	       "unsupported");
	ck_assert_uint_eq(fake.nr_requests, 0);
	r = get_ok(c, "{\"verb\":\"config\",\"mode\":\"stream\"}");
	json_decref(r);
	ck_assert_uint_eq(fake.nr_resize + fake.nr_set_mode, 0);
	/* the verbs that need no records, as in wrap mode */
	r = get_ok(c, "{\"verb\":\"stop\",\"vcpu\":1}");
	json_decref(r);
	ck_assert_uint_eq(fake.nr_requests, 1);
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_STOP);
	r = get_ok(c, "{\"verb\":\"freeze\"}");
	json_decref(r);
	ck_assert_uint_eq(fake.last_req, VCPU_CTL_FREEZE);

	/* clear: this server's view from now on; the segments keep everything */
	r = get_ok(c, "{\"verb\":\"clear\",\"vcpu\":0}");
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "vcpus"), 0), "from"), 100);
	json_decref(r);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":99}", "not-found");
	stream_branches(w0, 5);
	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(first, 100);
	ck_assert_uint_eq(end, 105);
	expect_branch(c, 104);

	/* the end of the run: the last segment closed, the open name gone; still readable */
	ck_assert_int_eq(seg_writer__close(w0), 0);
	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(end, 105);
	expect_branch(c, 104);
	control__destroy(c);
	ck_assert_int_eq(seg_writer__close(w1), 0);
}
END_TEST

START_TEST(test_stream_gone_and_damaged)
{
	struct seg_writer *w0 = stream_writer(0), *w1 = stream_writer(1);
	struct control *c = stream_server();
	struct vbts_seg_header h;
	char path[PATH_MAX + 32];
	uint64_t first, end, seg2, seg3;
	json_t *r;
	int fd;

	stream_branches(w0, 100); /* segments 0 to 5 closed (15 records each), 6 open */
	seg_writer__sync(w0);
	seg_file(0, 2, path, sizeof(path));
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	seg2 = h.first_seq;
	seg3 = seg2 + h.committed;
	ck_assert_uint_eq(h.encoding, VBTS_SEG_ENC_ZSTD_DV1);

	/* the oldest two taken away: gone, the others still read */
	seg_file(0, 0, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	seg_file(0, 1, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(first, seg2);
	ck_assert_uint_eq(end, 100);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":0}", "overwritten");
	expect_branch(c, seg2);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":0,\"max\":2}");
	ck_assert_uint_eq(member(r, "skipped"), seg2);
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "records"), 0), "seq"), seg2);
	json_decref(r);

	/* segment 3's payload garbled: refused as damaged; before and after it, read */
	seg_file(0, 3, path, sizeof(path));
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "garbage!", 8, VBTS_SEG_HEADER_SIZE + 4), 8);
	close(fd);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":50}", "failed");
	expect_branch(c, seg3 - 1);
	expect_branch(c, seg3 + 15);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":44,\"max\":5}");
	ck_assert_uint_eq(member(r, "skipped"), 15);
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "records"), 0), "seq"), 44);
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "records"), 1), "seq"), 60);
	json_decref(r);

	/* a header that says more records than a segment holds: refused before any allocation */
	seg_file(0, 5, path, sizeof(path));
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	h.committed = VBTS_SEG_MAX_RECORDS;
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":80}", "failed");
	expect_branch(c, 99);

	/* one removed from the middle: its records are gone, those around it are not */
	seg_file(0, 4, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	expect_branch(c, seg2 + 1);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":62}", "overwritten");
	expect_branch(c, seg3 - 1);
	expect_branch(c, 98);
	control__destroy(c);
	seg_writer__close(w0);
	seg_writer__close(w1);
}
END_TEST

/* The error message of response @r contains @what. */
static void expect_error_says(json_t *r, const char *what)
{
	const char *msg = json_string_value(json_object_get(r, "error"));

	ck_assert_msg(msg && strstr(msg, what), "error %s, want %s", msg ? msg : "(none)", what);
}

/*
 * A FIFO, a directory or a symbolic link where a segment file was: refused at once with an
 * error that says what it is; no open(2) waits for a writer of the FIFO (alarm: a blocked
 * request fails the test instead of hanging it).
 */
START_TEST(test_stream_not_regular)
{
	struct seg_writer *w0 = stream_writer(0), *w1 = stream_writer(1);
	struct control *c = stream_server();
	char path[PATH_MAX + 32], open_path[PATH_MAX + 64];
	uint64_t first, end;
	const char *code;
	json_t *r;

	stream_branches(w0, 100); /* segments 0 to 5 closed (15 records each), 6 open */
	seg_writer__sync(w0);
	alarm(10);
	/* the oldest a FIFO: count goes past it, its records are refused */
	seg_file(0, 0, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	window_of(c, 0, &first, &end);
	ck_assert_uint_eq(first, 15);
	ck_assert_uint_eq(end, 100);
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":3}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "not a regular file (a FIFO)");
	json_decref(r);
	/* one in the middle: get of its records fails, drain goes past it */
	seg_file(0, 2, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":31}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "vcpu0.00000002.vseg: not a regular file (a FIFO)");
	json_decref(r);
	r = get_ok(c, "{\"verb\":\"drain\",\"vcpu\":0,\"cursor\":28,\"max\":3}");
	ck_assert_uint_eq(member(json_array_get(json_object_get(r, "records"), 2), "seq"), 45);
	json_decref(r);
	/* a symbolic link (to a good segment) and a directory are refused too */
	seg_file(0, 5, path, sizeof(path));
	snprintf(open_path, sizeof(open_path), "%s.moved", path);
	ck_assert_int_eq(rename(path, open_path), 0);
	ck_assert_int_eq(symlink(open_path, path), 0);
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":76}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "vcpu0.00000005.vseg: a symbolic link");
	json_decref(r);
	seg_file(0, 4, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":61}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "vcpu0.00000004.vseg: not a regular file (a directory)");
	json_decref(r);
	/* whatever the binary search meets first, the records around them are read */
	for (uint64_t s = 0; s < 100; s++) {
		if (s >= 15 && (s < 30 || s >= 45) && (s < 60 || s >= 90))
			expect_branch(c, s);
	}
	/* one removed amid damaged ones: a record there cannot be read, those below it can */
	seg_file(0, 3, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	for (uint64_t s = 15; s < 30; s++)
		expect_branch(c, s);
	EXPECT(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":50}", "failed");
	expect_branch(c, 29);
	expect_branch(c, 99);

	/* the end of the run, then a FIFO under the open segment's name: refused at once */
	ck_assert_int_eq(seg_writer__close(w0), 0);
	snprintf(open_path, sizeof(open_path), "%s/vcpu0%s", dir, VBTS_SEG_OPEN_SUFFIX);
	ck_assert_int_eq(mkfifo(open_path, 0600), 0);
	r = req(c, "{\"verb\":\"count\",\"vcpu\":0}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "vcpu0.open.vseg: not a regular file (a FIFO)");
	json_decref(r);
	/* a new view (another server) too */
	control__destroy(c);
	c = stream_server();
	r = req(c, "{\"verb\":\"get\",\"vcpu\":0,\"seq\":99}", &code);
	ck_assert_str_eq(code, "failed");
	expect_error_says(r, "not a regular file (a FIFO)");
	json_decref(r);
	alarm(0);
	control__destroy(c);
	seg_writer__close(w1);
}
END_TEST

START_TEST(test_stream_events)
{
	struct seg_writer *w0 = stream_writer(0), *w1 = stream_writer(1);
	struct control *c = stream_server();
	struct vbts_record e;
	json_t *ev, *x;

	stream_branches(w0, 20);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 0); /* only what comes after the subscription */
	json_decref(ev);
	e = vbts_record__make_escape(VBTS_ESC_TASK_ARRIVE, 0x2000, 78);
	ck_assert_int_eq(seg_writer__append(w0, &e, 1), 1);
	stream_branches(w0, 40); /* into later segments */
	e = vbts_record__make_escape(VBTS_ESC_FREEZE, 100, VBTS_FREEZE_OPERATOR);
	ck_assert_int_eq(seg_writer__append(w1, &e, 1), 1);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 2);
	x = json_array_get(ev, 0);
	ck_assert_str_eq(json_string_value(json_object_get(x, "event")), "task-arrive");
	ck_assert_str_eq(json_string_value(json_object_get(x, "cr3")), "0x2000");
	ck_assert_uint_eq(member(x, "seq"), 20);
	ck_assert_uint_eq(count_events(ev, "freeze"), 1);
	json_decref(ev);
	ev = control__poll_events(c);
	ck_assert_uint_eq(json_array_size(ev), 0);
	json_decref(ev);
	control__destroy(c);
	seg_writer__close(w0);
	seg_writer__close(w1);
}
END_TEST

START_TEST(test_peer_allowed)
{
	ck_assert(control__peer_allowed(1000, 1000));
	ck_assert(control__peer_allowed(0, 1000));
	ck_assert(control__peer_allowed(0, 0));
	ck_assert(!control__peer_allowed(1001, 1000));
	ck_assert(!control__peer_allowed(65534, 0));
}
END_TEST

/* ---- the socket ------------------------------------------------------------------------ */

static int connect_sock(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	memcpy(sa.sun_path, sock_path, sizeof(sa.sun_path));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void send_str(int fd, const void *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		ck_assert_int_gt(w, 0);
		s = (const char *)s + w;
		n -= (size_t)w;
	}
}

/* What was read of a connection beyond the lines taken: one per descriptor. */
static struct {
	int fd;
	size_t have;
	char *buf;
} pending[64];

#define PENDING_MAX (1U << 20)

/* One response line, as an object. A hang guard of 30 s, no timing assertion. */
static json_t *recv_obj(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned int i;
	json_t *o;
	ssize_t n;
	char *nl;
	size_t len;

	for (i = 0; i < 64 && pending[i].buf && pending[i].fd != fd; i++)
		;
	ck_assert_uint_lt(i, 64);
	if (!pending[i].buf) {
		pending[i].buf = malloc(PENDING_MAX);
		ck_assert_ptr_nonnull(pending[i].buf);
		pending[i].fd = fd;
	}
	while (!(nl = memchr(pending[i].buf, '\n', pending[i].have))) {
		ck_assert_uint_lt(pending[i].have, PENDING_MAX);
		ck_assert_int_eq(poll(&p, 1, 30000), 1);
		n = recv(fd, pending[i].buf + pending[i].have, PENDING_MAX - pending[i].have, 0);
		ck_assert_int_gt(n, 0);
		pending[i].have += (size_t)n;
	}
	len = (size_t)(nl - pending[i].buf);
	o = json_loadb(pending[i].buf, len, 0, NULL);
	ck_assert_ptr_nonnull(o);
	memmove(pending[i].buf, nl + 1, pending[i].have - len - 1);
	pending[i].have -= len + 1;
	return o;
}

/* A descriptor is closed: what was read of it is forgotten (the number comes back). */
static void forget(int fd)
{
	for (unsigned int i = 0; i < 64 && pending[i].buf; i++)
		if (pending[i].fd == fd)
			pending[i].have = 0;
	close(fd);
}

static const char *code_of(json_t *o)
{
	return json_string_value(json_object_get(o, "code"));
}

START_TEST(test_socket_create)
{
	struct control_config cfg = { .path = sock_path, .trace_dir = dir, .nr_vcpus = 2,
				      .ring_records = RING_CAP, .backend = "step",
				      .ops = &fake_ops };
	struct control *c, *c2;
	struct stat st;
	char err[512];
	int fd;

	/* a regular file there: refused and left alone */
	fd = open(sock_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "data", 4), 4);
	close(fd);
	c = control__create(&cfg, err, sizeof(err));
	ck_assert_ptr_null(c);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "not a socket"));
	ck_assert_int_eq(stat(sock_path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_int_eq(st.st_size, 4);
	unlink(sock_path);

	/* a live server: the second is refused */
	c = control__create(&cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(lstat(sock_path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	c2 = control__create(&cfg, err, sizeof(err));
	ck_assert_ptr_null(c2);
	ck_assert_int_eq(errno, EEXIST);

	/* a stale socket (its server gone without removing it) is replaced */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);

		control__destroy(c);
		memcpy(sa.sun_path, sock_path, sizeof(sa.sun_path));
		ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
		close(s);
	}
	c = control__create(&cfg, err, sizeof(err));
	ck_assert_msg(c, "%s", err);
	control__destroy(c);
	ck_assert_int_eq(lstat(sock_path, &st), -1);
}
END_TEST

START_TEST(test_socket_hostile_lines)
{
	struct control *c = server("step", true);
	char *big = malloc(100000);
	json_t *o;
	int fd;

	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(control__start(c), 0);
	fd = connect_sock();
	/* over-long: one error, the rest of the line skipped, the next request answered */
	memset(big, 'a', 100000);
	send_str(fd, big, 100000);
	send_str(fd, "\n{\"verb\":\"status\",\"id\":1}\n", 26);
	o = recv_obj(fd);
	ck_assert_str_eq(code_of(o), "too-long");
	json_decref(o);
	o = recv_obj(fd);
	ck_assert_ptr_null(code_of(o));
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "too_long")), 1);
	json_decref(o);
	/* garbage, NUL bytes and an empty line, each one answered */
	send_str(fd, "\x01\x02\xff garbage\n", 12);
	send_str(fd, "{\"verb\":\0\"status\"}\n", 19);
	send_str(fd, "\n", 1);
	for (int i = 0; i < 3; i++) {
		o = recv_obj(fd);
		ck_assert_str_eq(code_of(o), "bad-json");
		json_decref(o);
	}
	/* two requests in one write, two responses in order */
	send_str(fd, "{\"verb\":\"count\",\"id\":2}\n{\"verb\":\"nope\",\"id\":3}\n", 48);
	o = recv_obj(fd);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 2);
	json_decref(o);
	o = recv_obj(fd);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "id")), 3);
	ck_assert_str_eq(code_of(o), "unknown-verb");
	json_decref(o);
	forget(fd);
	free(big);
	control__destroy(c);
}
END_TEST

START_TEST(test_socket_clients_bounded)
{
	struct control *c = server("step", true);
	int fds[CONTROL_CLIENTS_MAX], extra;
	json_t *o;

	ck_assert_int_eq(control__start(c), 0);
	for (int i = 0; i < CONTROL_CLIENTS_MAX; i++) {
		fds[i] = connect_sock();
		/* answered: it has its slot */
		send_str(fds[i], "{\"verb\":\"count\"}\n", 17);
		o = recv_obj(fds[i]);
		ck_assert_ptr_null(code_of(o));
		json_decref(o);
	}
	extra = connect_sock();
	o = recv_obj(extra);
	ck_assert_str_eq(code_of(o), "busy");
	json_decref(o);
	forget(extra);
	/* one leaves, another may come */
	forget(fds[0]);
	for (int tries = 0;; tries++) {
		char ch;

		ck_assert_int_lt(tries, 3000);
		fds[0] = connect_sock();
		send_str(fds[0], "{\"verb\":\"status\"}\n", 18);
		o = recv_obj(fds[0]);
		if (!code_of(o)) {
			ck_assert_int_eq(json_integer_value(json_object_get(o, "refused")), tries + 1);
			json_decref(o);
			break;
		}
		/* the server had not seen the close yet */
		ck_assert_str_eq(code_of(o), "busy");
		json_decref(o);
		ck_assert_int_eq(recv(fds[0], &ch, 1, 0), 0);
		forget(fds[0]);
		usleep(10000);
	}
	for (int i = 0; i < CONTROL_CLIENTS_MAX; i++)
		forget(fds[i]);
	control__destroy(c);
}
END_TEST

START_TEST(test_socket_stuck_subscriber)
{
	struct control *c = server("step", true);
	struct ring_writer_config rc = { .capacity = 1 << 20, .mode = VBTS_RING_WRAP };
	char path[PATH_MAX + 32];
	int stuck, other;
	json_t *o;

	/* a large ring, so that every event is scanned */
	ring_writer__close(rings[0]);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	unlink(path);
	rings[0] = ring_writer__create(path, &rc);
	ck_assert_ptr_nonnull(rings[0]);
	ck_assert_int_eq(control__start(c), 0);
	stuck = connect_sock();
	send_str(stuck, "{\"verb\":\"subscribe\"}\n", 21);
	o = recv_obj(stuck);
	ck_assert_ptr_null(code_of(o));
	json_decref(o);
	/* events by the hundred thousand, never read */
	for (unsigned int i = 0; i < 200000; i++)
		ring_writer__escape(rings[0], VBTS_ESC_TASK_ARRIVE, 0x1000 + (i << 12), i);
	other = connect_sock();
	for (int tries = 0;; tries++) {
		ck_assert_int_lt(tries, 3000); /* a hang guard */
		send_str(other, "{\"verb\":\"status\"}\n", 18);
		o = recv_obj(other);
		if (json_integer_value(json_object_get(o, "dropped_clients")) == 1) {
			ck_assert_int_eq(json_integer_value(json_object_get(o, "clients")), 1);
			json_decref(o);
			break;
		}
		json_decref(o);
		usleep(10000);
	}
	forget(stuck);
	forget(other);
	control__destroy(c);
}
END_TEST

START_TEST(test_socket_pipelined)
{
	struct control *c = server("step", true);
	struct ring_writer_config rc = { .capacity = 4096, .mode = VBTS_RING_WRAP };
	char path[PATH_MAX + 32];
	json_t *o;
	int fd;

	ring_writer__close(rings[0]);
	snprintf(path, sizeof(path), "%s/vcpu0.ring", dir);
	unlink(path);
	rings[0] = ring_writer__create(path, &rc);
	ck_assert_ptr_nonnull(rings[0]);
	append_branches(0, 4000);
	ck_assert_int_eq(control__start(c), 0);
	fd = connect_sock();
	/* 60 large responses asked for at once, megabytes in all, read only afterwards */
	for (int i = 0; i < 60; i++)
		send_str(fd, "{\"verb\":\"drain\",\"vcpu\":0}\n", 26);
	for (int i = 0; i < 60; i++) {
		o = recv_obj(fd);
		ck_assert_msg(!code_of(o), "%d: %s", i, json_string_value(json_object_get(o, "error")));
		ck_assert_uint_eq(json_array_size(json_object_get(o, "records")),
				  CONTROL_DRAIN_MAX);
		json_decref(o);
	}
	send_str(fd, "{\"verb\":\"status\"}\n", 18);
	o = recv_obj(fd);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "dropped_clients")), 0);
	json_decref(o);
	forget(fd);
	control__destroy(c);
}
END_TEST

Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("requests");
	TCase *ts = tcase_create("socket");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bad_json);
	tcase_add_test(tc, test_nul_bytes);
	tcase_add_test(tc, test_huge_and_deep);
	tcase_add_test(tc, test_wrong_types);
	tcase_add_test(tc, test_unknown);
	tcase_add_test(tc, test_request_id);
	tcase_add_test(tc, test_get_count_drain_clear);
	tcase_add_test(tc, test_drain_bound);
	tcase_add_test(tc, test_verbs_to_vm);
	tcase_add_test(tc, test_resized_ring);
	tcase_add_test(tc, test_events);
	tcase_add_test(tc, test_thread_records);
	tcase_add_test(tc, test_peer_allowed);
	tcase_add_test(tc, test_stream_verbs);
	tcase_add_test(tc, test_stream_gone_and_damaged);
	tcase_add_test(tc, test_stream_events);
	tcase_add_test(tc, test_stream_not_regular);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(ts, setup, teardown);
	tcase_set_timeout(ts, 120);
	tcase_add_test(ts, test_socket_create);
	tcase_add_test(ts, test_socket_hostile_lines);
	tcase_add_test(ts, test_socket_clients_bounded);
	tcase_add_test(ts, test_socket_stuck_subscriber);
	tcase_add_test(ts, test_socket_pipelined);
	suite_add_tcase(s, ts);
	return s;
}
