// SPDX-License-Identifier: GPL-2.0
/*
 * control.c - the control socket: a unix stream socket of JSON lines, one request per line
 * and one response object per request, plus a stream of events for subscribers (the protocol
 * is doc/control-protocol.md).
 *
 * Threads and locks: one thread, `control`, owns the listening socket, every connection, the
 * ring views and the event scan; it never waits on a vCPU. What it asks of the VM goes
 * through control_target_ops: vCPU requests are flags the vCPU threads apply between two runs
 * (vcpu__control()), so a ring keeps its one writer. Rings are read through the format's one
 * ring reader (format/ring-reader.h: read-only mappings of the trace's vcpuN.ring files, the
 * live-reader protocol of vbts/ring-format.h), exactly as another process would read them; in
 * stream mode the segment files are read the same way (format/seg-view.h): nothing is ever
 * overwritten there, so a record
 * is readable from its commit on for as long as its segment file is there. No lock is held
 * anywhere.
 *
 * Everything a client sends is hostile: a request line is at most CONTROL_LINE_MAX bytes
 * (a longer one gets an error object and is discarded up to its newline), its JSON is parsed
 * by jansson (which bounds nesting), every member is type- and range-checked before anything
 * is done, and what is queued for a client is bounded (CONTROL_QUEUE_MAX): a client that does
 * not read its responses is not read from either, and a subscriber that does not read its
 * events is dropped when its queue is full (counted in status).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <vbts/ring-format.h>

#include "control-int.h"
#include "control.h"
#include "escape.h"
#include "record-json.h"
#include "record.h"
#include "ring-reader.h"
#include "seg-view.h"
#include "trace.h"
#include "vcpu.h"

#define SCAN_MAX 65536          /* records one vCPU's event scan looks at per round */
#define TICK_MS 50              /* event scan period while someone is subscribed */
#define RESPONSE_MAX (128U << 10) /* bytes of records in one drain response */
#define ID_MAX 64               /* bytes of a string request id that is echoed */
#define DRAIN_MISSES_MAX 4096   /* records one drain skips (gone, damaged) before it answers */
#define ACCEPT_BATCH 64         /* connections accepted per round */
#define BACKLOG 64              /* connections waiting to be accepted */

/* One vCPU's ring file (format/ring-reader.h); or in stream mode its segments. */
struct ring_view {
	struct ring_reader *ring;
	uint64_t base;       /* `clear`: records before it are not shown */
	uint64_t ev_cursor;  /* event scan: next seq to look at */
	uint64_t ev_lost;    /* event scan: the header's lost count seen last */
	/* stream mode: the segments, and what they held when last looked at */
	struct seg_view *seg;
	uint64_t s_first, s_end, s_lost;
	bool s_seen;
};

struct client {
	int fd;
	bool subscribed;
	bool discarding;     /* inside an over-long line: skip up to its newline */
	bool closing;        /* close once the queue is written */
	size_t in_len;
	char in[CONTROL_LINE_MAX];
	char *out;
	size_t out_len, out_off;
};

struct control {
	char *path;
	char *trace_dir;
	unsigned int nr_vcpus;
	uint64_t ring_records;
	bool stream;
	uint64_t segment_records;
	unsigned int seg_cached; /* stream: the vCPU whose closed segment is kept (one at most) */
	char *backend;
	char **tasks;
	unsigned int nr_tasks;
	const struct control_target_ops *ops;
	void *opaque;
	int listen_fd;
	int wake[2];         /* a byte on wake[1] ends the thread */
	pthread_t thread;
	bool started;
	struct ring_view *views;
	struct client clients[CONTROL_CLIENTS_MAX];
	bool scanning;       /* the event scan runs (someone subscribed once) */
	/* counters, for status; written by the control thread only */
	uint64_t requests, errors, refused, dropped, too_long;
};

bool control__peer_allowed(unsigned int peer, unsigned int self)
{
	return peer == self || peer == 0;
}

/* ---- responses ------------------------------------------------------------------------- */

static json_t *error_obj(const char *code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static json_t *error_obj(const char *code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* jansson refuses invalid UTF-8: every message is made of ASCII and numbers. */
	return json_pack("{s:i, s:s, s:s}", "v", CONTROL_PROTO_VERSION, "error", msg, "code",
			 code);
}

static json_t *ok_obj(const char *verb)
{
	return json_pack("{s:i, s:b, s:s}", "v", CONTROL_PROTO_VERSION, "ok", 1, "verb", verb);
}

static void hex(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "0x%" PRIx64, v);
}

static const char *cpl_name(unsigned int cpl)
{
	return trace__cpl_name((enum vbts_cpl_filter)cpl);
}

/*
 * One record as decode's jsonl output gives it when it is read alone (record__decode_one(),
 * record_json__format()): the same members, in the same order. A JSON number of this socket
 * is a signed 64-bit integer (jansson's): a count or a time beyond it (only a damaged record
 * says one) is shown without its top bit.
 */
static json_t *record_json(unsigned int vcpu, uint64_t seq, const struct vbts_record *rec)
{
	struct decoded_record d;
	char text[RECORD_JSON_MAX];
	size_t len;

	record__decode_one(vcpu, seq, rec, &d);
	d.time &= INT64_MAX;
	d.count &= INT64_MAX;
	if (d.type == DECODED_GUEST_BTS_DROP && d.aux == VBTS_GUEST_BTS_DROP_KERNEL)
		d.from &= INT64_MAX; /* the kernel's drops: a count, not an address */
	len = record_json__format(text, &d);
	return json_loadb(text, len, 0, NULL);
}

/* ---- ring views ------------------------------------------------------------------------ */

/* Stream mode: the window of vCPU @vcpu's segments now (the last one seen when they move on). */
static int seg_open(struct control *c, unsigned int vcpu)
{
	struct ring_view *v = &c->views[vcpu];
	uint64_t first, end, lost;
	int ret;

	if (!c->trace_dir)
		return -ENOENT;
	if (!v->seg) {
		v->seg = seg_view__new(c->trace_dir, vcpu, c->segment_records);
		if (!v->seg)
			return -ENOMEM;
	}
	ret = seg_view__window(v->seg, &first, &end, &lost);
	if (ret < 0)
		return ret == -EAGAIN && v->s_seen ? 0 : ret;
	v->s_first = first;
	v->s_end = end;
	v->s_lost = lost;
	v->s_seen = true;
	return 0;
}

static int view_open(struct control *c, unsigned int vcpu)
{
	struct ring_view *v = &c->views[vcpu];
	char path[4096], err[RING_READER_ERR_MAX];

	if (c->stream)
		return seg_open(c, vcpu);
	if (!c->trace_dir)
		return v->ring ? 0 : -ENOENT;
	if (v->ring) {
		/* The writer resized the ring: a new file took the name, the numbering goes on. */
		if (!ring_reader__replaced(v->ring))
			return 0;
		ring_reader__close(v->ring);
		v->ring = NULL;
	}
	snprintf(path, sizeof(path), "%s/vcpu%u.ring", c->trace_dir, vcpu);
	/* Our own VMM wrote it; its header is checked all the same. */
	v->ring = ring_reader__open(path, err, sizeof(err));
	return v->ring ? 0 : -errno;
}

/* Records committed (stream mode: when view_open() last looked). */
static uint64_t view_committed(const struct ring_view *v)
{
	if (v->seg)
		return v->s_end;
	return ring_reader__committed(v->ring);
}

static uint64_t view_lost(const struct ring_view *v)
{
	if (v->seg)
		return v->s_lost;
	return ring_reader__lost(v->ring);
}

/* A vCPU of this socket, for vcpu_stopped(). */
struct view_vcpu {
	struct control *c;
	unsigned int vcpu;
};

/*
 * Whether the vCPU was stopped by this socket: besides a frozen or closed ring, what makes
 * its ring quiet (ring_reader__get()). A stopped vCPU says it records again, or is frozen by
 * a crash, before it appends again (vcpu.c, with a full fence). A crash's freeze is not quiet
 * until the header says so: the tracer's last records follow it.
 */
static bool vcpu_stopped(void *arg)
{
	const struct view_vcpu *w = arg;
	struct control_vcpu_state st = { 0 };
	struct control *c = w->c;

	return c->ops && c->ops->state && c->ops->state(c->opaque, w->vcpu, &st) == 0 &&
	       st.rec == VCPU_REC_OFF;
}

/* The records shown now: [*first, *end). */
static void view_window(struct control *c, unsigned int vcpu, uint64_t *first, uint64_t *end)
{
	const struct ring_view *v = &c->views[vcpu];
	struct view_vcpu w = { c, vcpu };

	if (c->stream) {
		/* nothing is overwritten: every record from the oldest segment there on */
		seg_open(c, vcpu);
		*end = v->s_end;
		*first = v->s_first;
	} else {
		ring_reader__live_window(v->ring, vcpu_stopped, &w, first, end);
	}
	if (*first < v->base)
		*first = v->base;
	if (*first > *end)
		*first = *end;
}

/*
 * Copy record @seq: 0, -ENOENT when it is not committed yet or before `clear`, -ESTALE when
 * the writer overwrote it (also while it was being copied) or, in stream mode, removed it.
 */
static int view_get(struct control *c, unsigned int vcpu, uint64_t seq, struct vbts_record *rec)
{
	const struct ring_view *v = &c->views[vcpu];
	struct view_vcpu w = { c, vcpu };

	if (seq < v->base)
		return -ENOENT;
	if (c->stream) {
		if (!v->seg)
			return -ENOENT;
		/* one closed segment kept in memory, of one vCPU */
		if (c->seg_cached != vcpu && c->views[c->seg_cached].seg)
			seg_view__drop_cache(c->views[c->seg_cached].seg);
		c->seg_cached = vcpu;
		return seg_view__get(v->seg, seq, rec);
	}
	return ring_reader__get(v->ring, seq, vcpu_stopped, &w, rec);
}

/* ---- requests -------------------------------------------------------------------------- */

/* What a request names, checked before anything is done. */
struct request {
	const char *verb;
	json_t *obj;
	bool has_vcpu;
	unsigned int vcpu;
};

static const char *const verbs[] = {
	"status", "start", "stop", "config", "get", "count", "drain", "clear", "freeze",
	"subscribe", NULL,
};

/* Members each verb takes besides "v", "id" and "verb". */
static const char *const verb_members[][6] = {
	{ NULL },                                             /* status */
	{ "vcpu", NULL },                                     /* start */
	{ "vcpu", NULL },                                     /* stop */
	{ "vcpu", "size", "mode", "cpl", "tasks", NULL },     /* config */
	{ "vcpu", "seq", NULL },                              /* get */
	{ "vcpu", NULL },                                     /* count */
	{ "vcpu", "cursor", "max", NULL },                    /* drain */
	{ "vcpu", NULL },                                     /* clear */
	{ NULL },                                             /* freeze */
	{ NULL },                                             /* subscribe */
};

static int verb_index(const char *verb)
{
	for (int i = 0; verbs[i]; i++)
		if (!strcmp(verbs[i], verb))
			return i;
	return -1;
}

/* A non-negative integer member: 0, 1 when absent, or an error object in *@err. */
static int get_uint(json_t *obj, const char *key, uint64_t max, uint64_t *out, json_t **err)
{
	json_t *m = json_object_get(obj, key);
	json_int_t n;

	if (!m)
		return 1;
	if (!json_is_integer(m)) {
		*err = error_obj("bad-type", "\"%s\" must be an integer", key);
		return -EINVAL;
	}
	n = json_integer_value(m);
	if (n < 0 || (uint64_t)n > max) {
		*err = error_obj("bad-value", "\"%s\" %lld is outside [0, %" PRIu64 "]", key,
				 (long long)n, max);
		return -ERANGE;
	}
	*out = (uint64_t)n;
	return 0;
}

static json_t *with_vcpus(json_t *resp, json_t *arr)
{
	json_object_set_new(resp, "vcpus", arr);
	return resp;
}

/* enum vcpu_recording as status names it */
static const char *const rec_names[] = { "none", "on", "stopped", "frozen" };

static json_t *do_status(struct control *c, struct request *r)
{
	json_t *resp = ok_obj(r->verb), *arr = json_array(), *tasks, *one;
	unsigned int nclients = 0;

	for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX; i++)
		nclients += c->clients[i].fd >= 0;
	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		struct control_vcpu_state st = { .run = "unknown" };
		uint64_t first = 0, end = 0, lost = 0, size = c->ring_records;

		if (c->ops && c->ops->state)
			c->ops->state(c->opaque, i, &st);
		if (view_open(c, i) == 0) {
			view_window(c, i, &first, &end);
			lost = view_lost(&c->views[i]);
			size = c->stream ? c->segment_records :
					   ring_reader__header(c->views[i].ring)->capacity;
		}
		tasks = json_array();
		for (unsigned int t = 0; t < c->nr_tasks; t++)
			json_array_append_new(tasks, json_string(c->tasks[t]));
		one = json_pack("{s:i, s:I, s:I, s:I, s:s, s:I, s:{s:s, s:o}, s:s, s:s, s:b}",
				"vcpu", (int)i, "records", (json_int_t)end,
				"count", (json_int_t)(end - first), "lost", (json_int_t)lost,
				"mode", c->stream ? "stream" : "wrap", "size", (json_int_t)size,
				"filters", "cpl", cpl_name(st.cpl), "tasks", tasks,
				"state", st.run ? st.run : "unknown",
				"recording", st.rec < sizeof(rec_names) / sizeof(rec_names[0]) ?
						     rec_names[st.rec] : "unknown",
				"pending", st.pending != 0);
		json_array_append_new(arr, one);
	}
	json_object_set_new(resp, "backend", json_string(c->backend ? c->backend : "none"));
	json_object_set_new(resp, "clients", json_integer(nclients));
	json_object_set_new(resp, "requests", json_integer((json_int_t)c->requests));
	json_object_set_new(resp, "errors", json_integer((json_int_t)c->errors));
	json_object_set_new(resp, "refused", json_integer((json_int_t)c->refused));
	json_object_set_new(resp, "dropped_clients", json_integer((json_int_t)c->dropped));
	json_object_set_new(resp, "too_long", json_integer((json_int_t)c->too_long));
	return with_vcpus(resp, arr);
}

/* Send VCPU_CTL_* bits to the vCPU named (or to all); the list of vCPUs asked. */
static json_t *request_vcpus(struct control *c, struct request *r, unsigned int req,
			     unsigned int cpl)
{
	json_t *resp, *arr = json_array();
	int ret;

	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		if (r->has_vcpu && i != r->vcpu)
			continue;
		ret = c->ops && c->ops->request ? c->ops->request(c->opaque, i, req, cpl) :
						 -ENOTSUP;
		if (ret < 0) {
			json_decref(arr);
			return error_obj("failed", "vcpu %u: %s", i, strerror(-ret));
		}
		json_array_append_new(arr, json_integer(i));
	}
	resp = ok_obj(r->verb);
	json_object_set_new(resp, "applied", json_string("at the vcpus' next exit"));
	return with_vcpus(resp, arr);
}

/* The backends whose recording the vCPU threads stop, start and filter anew (vcpu.c). */
static bool can_control(struct control *c)
{
	return c->backend && (!strcmp(c->backend, "step") || !strcmp(c->backend, "kvm"));
}

static json_t *do_start_stop(struct control *c, struct request *r)
{
	bool start = !strcmp(r->verb, "start");

	if (!can_control(c))
		return error_obj("unsupported", "%s: the %s backend cannot be stopped and "
				 "restarted", r->verb, c->backend ? c->backend : "no");
	return request_vcpus(c, r, start ? VCPU_CTL_START : VCPU_CTL_STOP, 0);
}

static json_t *do_freeze(struct control *c, struct request *r)
{
	return request_vcpus(c, r, VCPU_CTL_FREEZE, 0);
}

static int parse_cpl(const char *s, unsigned int *cpl)
{
	if (!strcmp(s, "all"))
		*cpl = VBTS_CPL_ALL;
	else if (!strcmp(s, "user"))
		*cpl = VBTS_CPL_USER;
	else if (!strcmp(s, "kernel"))
		*cpl = VBTS_CPL_KERNEL;
	else
		return -EINVAL;
	return 0;
}

/* config tasks: the new filter, also what status says of it. */
static json_t *set_tasks(struct control *c, json_t *tasks)
{
	unsigned int nr = (unsigned int)json_array_size(tasks);
	const char *names[CONTROL_TASKS_MAX];
	char **copy, msg[256];
	size_t i;
	json_t *t;
	int ret;

	json_array_foreach(tasks, i, t)
		names[i] = json_string_value(t);
	if (!c->ops || !c->ops->set_tasks)
		return error_obj("unsupported", "tasks: this run has no task filter");
	copy = calloc(nr ? nr : 1, sizeof(*copy));
	if (!copy)
		return error_obj("failed", "tasks: out of memory");
	for (i = 0; i < nr; i++) {
		copy[i] = escape__utf8_dup(names[i], 256);
		if (!copy[i]) {
			while (i--)
				free(copy[i]);
			free(copy);
			return error_obj("failed", "tasks: out of memory");
		}
	}
	ret = c->ops->set_tasks(c->opaque, names, nr, msg, sizeof(msg));
	if (ret < 0) {
		for (i = 0; i < nr; i++)
			free(copy[i]);
		free(copy);
		return error_obj(ret == -ENOTSUP ? "unsupported" : ret == -EINVAL ? "bad-value" :
				 "failed", "tasks: %s", msg);
	}
	for (i = 0; i < c->nr_tasks; i++)
		free(c->tasks[i]);
	free(c->tasks);
	c->tasks = copy;
	c->nr_tasks = nr;
	return NULL;
}

static json_t *do_config(struct control *c, struct request *r)
{
	json_t *mode = json_object_get(r->obj, "mode"), *cpl = json_object_get(r->obj, "cpl");
	json_t *tasks = json_object_get(r->obj, "tasks"), *err = NULL, *resp;
	unsigned int want_cpl = 0, want_mode = VBTS_RING_WRAP;
	bool resize = false;
	char msg[256];
	uint64_t size;
	int ret;

	/* Everything is checked before anything changes. */
	ret = get_uint(r->obj, "size", INT64_MAX, &size, &err);
	if (ret < 0)
		return err;
	if (ret == 0 && c->stream)
		return error_obj("unsupported", "size: in stream mode records go to segment files "
				 "that are written once and never rewritten; their size is the "
				 "run's (vbts run --segment)");
	if (ret == 0) {
		/* as if every vCPU had that size: the budget holds whichever are resized */
		if (trace__check_budget(size, c->nr_vcpus, trace__host_available_memory(), msg,
					sizeof(msg)) < 0)
			return error_obj(size ? "over-budget" : "bad-value", "size: %s", msg);
		if (!c->ops || !c->ops->resize)
			return error_obj("unsupported", "size: this run's rings cannot be resized");
		resize = true;
	}
	if (mode) {
		if (!json_is_string(mode))
			return error_obj("bad-type", "\"mode\" must be a string");
		if (!strcmp(json_string_value(mode), "wrap"))
			want_mode = VBTS_RING_WRAP;
		else if (!strcmp(json_string_value(mode), "stream"))
			want_mode = VBTS_RING_STREAM;
		else
			return error_obj("bad-value", "\"mode\" must be \"wrap\" or \"stream\"");
		if (c->stream && want_mode != VBTS_RING_STREAM)
			return error_obj("unsupported", "mode: a running trace's mode is fixed: this "
					 "one streams into segment files, which are never rewritten "
					 "(vbts run --mode wrap for a ring)");
	}
	if (cpl) {
		if (!json_is_string(cpl))
			return error_obj("bad-type", "\"cpl\" must be a string");
		if (parse_cpl(json_string_value(cpl), &want_cpl))
			return error_obj("bad-value",
					 "\"cpl\" must be \"all\", \"user\" or \"kernel\"");
		if (!can_control(c))
			return error_obj("unsupported", "cpl: the %s backend's filter is set when "
					 "the run starts (vbts run --cpl)",
					 c->backend ? c->backend : "no");
	}
	if (tasks) {
		size_t i;
		json_t *t;

		if (!json_is_array(tasks))
			return error_obj("bad-type", "\"tasks\" must be an array of strings");
		if (json_array_size(tasks) > CONTROL_TASKS_MAX)
			return error_obj("bad-value", "\"tasks\": at most %u names",
					 CONTROL_TASKS_MAX);
		json_array_foreach(tasks, i, t)
			if (!json_is_string(t))
				return error_obj("bad-type",
						 "\"tasks\" must be an array of strings");
		if (r->has_vcpu)
			return error_obj("bad-request", "\"tasks\" is the VM's: no \"vcpu\"");
	}
	if (mode && !c->stream) {
		ret = c->ops && c->ops->set_mode ?
			c->ops->set_mode(c->opaque, r->has_vcpu ? r->vcpu : ~0U, want_mode, msg,
					 sizeof(msg)) : -ENOTSUP;
		if (ret < 0)
			return error_obj(ret == -ENOTSUP ? "unsupported" : "failed", "mode: %s",
					 c->ops && c->ops->set_mode ? msg : "not available");
	}
	if (tasks) {
		resp = set_tasks(c, tasks);
		if (resp)
			return resp;
	}
	if (resize) {
		for (unsigned int i = 0; i < c->nr_vcpus; i++) {
			if (r->has_vcpu && i != r->vcpu)
				continue;
			ret = c->ops->resize(c->opaque, i, size);
			if (ret < 0)
				return error_obj("failed", "size: vcpu %u: %s", i, strerror(-ret));
		}
	}
	if (cpl)
		return request_vcpus(c, r, VCPU_CTL_CPL, want_cpl);
	resp = ok_obj(r->verb);
	if (resize || tasks)
		json_object_set_new(resp, "applied", json_string("at the vcpus' next exit"));
	return resp;
}

/* Why reading vCPU @vcpu's records failed with @ret: the file named where one is to blame. */
static const char *view_error(struct control *c, unsigned int vcpu, int ret)
{
	const struct ring_view *v = &c->views[vcpu];

	if (c->stream && v->seg && (ret == -EIO || ret == -EINVAL) &&
	    *seg_view__error(v->seg))
		return seg_view__error(v->seg);
	return ret == -EIO ? "its segment is damaged" : strerror(-ret);
}

static json_t *need_view(struct control *c, struct request *r)
{
	int ret;

	if (!r->has_vcpu)
		return error_obj("bad-request", "%s needs \"vcpu\"", r->verb);
	ret = view_open(c, r->vcpu);
	if (ret < 0)
		return error_obj("failed", "vcpu %u's ring: %s", r->vcpu,
				 view_error(c, r->vcpu, ret));
	return NULL;
}

static json_t *do_get(struct control *c, struct request *r)
{
	json_t *err = need_view(c, r), *resp;
	struct vbts_record rec;
	uint64_t seq, first, end;
	int ret;

	if (err)
		return err;
	ret = get_uint(r->obj, "seq", INT64_MAX, &seq, &err);
	if (ret)
		return ret > 0 ? error_obj("bad-request", "get needs \"seq\"") : err;
	ret = view_get(c, r->vcpu, seq, &rec);
	if (ret < 0 && ret != -ENOENT && ret != -ESTALE)
		return error_obj("failed", "vcpu %u, record %" PRIu64 ": %s", r->vcpu, seq,
				 view_error(c, r->vcpu, ret));
	if (ret < 0) {
		view_window(c, r->vcpu, &first, &end);
		err = error_obj(ret == -ENOENT ? "not-found" : "overwritten",
				"vcpu %u has records %" PRIu64 " to %" PRIu64 " (exclusive), not %"
				PRIu64, r->vcpu, first, end, seq);
		json_object_set_new(err, "first", json_integer((json_int_t)first));
		json_object_set_new(err, "end", json_integer((json_int_t)end));
		return err;
	}
	resp = ok_obj(r->verb);
	json_object_set_new(resp, "record", record_json(r->vcpu, seq, &rec));
	return resp;
}

static json_t *do_count(struct control *c, struct request *r)
{
	json_t *resp, *arr = json_array();
	uint64_t first, end, total = 0;
	int ret;

	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		if (r->has_vcpu && i != r->vcpu)
			continue;
		ret = view_open(c, i);
		if (ret < 0) {
			json_decref(arr);
			return error_obj("failed", "vcpu %u's ring: %s", i, view_error(c, i, ret));
		}
		view_window(c, i, &first, &end);
		total += end - first;
		json_array_append_new(arr, json_pack("{s:i, s:I, s:I, s:I, s:I}", "vcpu", (int)i,
						     "first", (json_int_t)first,
						     "end", (json_int_t)end,
						     "count", (json_int_t)(end - first),
						     "lost", (json_int_t)view_lost(&c->views[i])));
	}
	resp = ok_obj(r->verb);
	json_object_set_new(resp, "count", json_integer((json_int_t)total));
	return with_vcpus(resp, arr);
}

static json_t *do_drain(struct control *c, struct request *r)
{
	json_t *err = need_view(c, r), *resp, *arr, *one;
	uint64_t cursor = 0, max = CONTROL_DRAIN_MAX, first, end, seq, skipped = 0, misses = 0;
	struct vbts_record rec;
	size_t bytes = 0;
	int ret;

	if (err)
		return err;
	if (get_uint(r->obj, "cursor", INT64_MAX, &cursor, &err) < 0 ||
	    get_uint(r->obj, "max", CONTROL_DRAIN_MAX, &max, &err) < 0)
		return err;
	view_window(c, r->vcpu, &first, &end);
	seq = cursor;
	if (seq < first) {
		skipped = first - seq;
		seq = first;
	}
	arr = json_array();
	for (; seq < end && json_array_size(arr) < max && bytes < RESPONSE_MAX &&
	       misses < DRAIN_MISSES_MAX; seq++) {
		ret = view_get(c, r->vcpu, seq, &rec);
		if (ret == -ESTALE || ret == -EIO) {
			/* bounded: the cursor says where the next drain goes on */
			skipped++;
			misses++;
			continue;
		}
		if (ret < 0)
			break;
		one = record_json(r->vcpu, seq, &rec);
		bytes += 200; /* a record's JSON is shorter than this */
		json_array_append_new(arr, one);
	}
	resp = ok_obj(r->verb);
	json_object_set_new(resp, "records", arr);
	json_object_set_new(resp, "cursor", json_integer((json_int_t)seq));
	json_object_set_new(resp, "skipped", json_integer((json_int_t)skipped));
	json_object_set_new(resp, "end", json_integer((json_int_t)end));
	return resp;
}

static json_t *do_clear(struct control *c, struct request *r)
{
	json_t *resp, *arr = json_array();
	int ret;

	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		if (r->has_vcpu && i != r->vcpu)
			continue;
		ret = view_open(c, i);
		if (ret < 0) {
			json_decref(arr);
			return error_obj("failed", "vcpu %u's ring: %s", i, view_error(c, i, ret));
		}
		c->views[i].base = view_committed(&c->views[i]);
		json_array_append_new(arr, json_pack("{s:i, s:I}", "vcpu", (int)i, "from",
						     (json_int_t)c->views[i].base));
	}
	resp = ok_obj(r->verb);
	return with_vcpus(resp, arr);
}

static void start_scan(struct control *c)
{
	if (c->scanning)
		return;
	c->scanning = true;
	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		if (view_open(c, i) < 0)
			continue;
		c->views[i].ev_cursor = view_committed(&c->views[i]);
		c->views[i].ev_lost = view_lost(&c->views[i]);
	}
}

static json_t *execute(struct control *c, struct request *r, bool *subscribed)
{
	switch (verb_index(r->verb)) {
	case 0:
		return do_status(c, r);
	case 1:
	case 2:
		return do_start_stop(c, r);
	case 3:
		return do_config(c, r);
	case 4:
		return do_get(c, r);
	case 5:
		return do_count(c, r);
	case 6:
		return do_drain(c, r);
	case 7:
		return do_clear(c, r);
	case 8:
		return do_freeze(c, r);
	case 9:
		start_scan(c);
		*subscribed = true;
		return ok_obj(r->verb);
	default:
		return error_obj("unknown-verb", "unknown verb");
	}
}

/* The request's "id": NULL when it is absent or valid, else the error object. */
static json_t *check_id(json_t *req)
{
	json_t *id = json_object_get(req, "id");

	if (!id || json_is_integer(id))
		return NULL;
	if (!json_is_string(id))
		return error_obj("bad-type", "\"id\" must be an integer or a string");
	if (json_string_length(id) > ID_MAX)
		return error_obj("bad-value", "\"id\" is a string of %zu bytes, more than %d",
				 json_string_length(id), ID_MAX);
	return NULL;
}

/* The request's "id", echoed when it is valid (check_id()). */
static void echo_id(json_t *resp, json_t *req)
{
	json_t *id = json_is_object(req) ? json_object_get(req, "id") : NULL;

	if (!resp || !id)
		return;
	if (json_is_integer(id) || (json_is_string(id) && json_string_length(id) <= ID_MAX))
		json_object_set(resp, "id", id);
}

static json_t *parse_and_execute(struct control *c, const char *line, size_t len,
				 bool *subscribed)
{
	json_t *obj, *verb, *v, *err = NULL, *resp;
	struct request r = { 0 };
	json_error_t jerr;
	const char *key;
	uint64_t vcpu;
	int idx;

	if (len >= CONTROL_LINE_MAX)
		return error_obj("too-long", "request longer than %u bytes", CONTROL_LINE_MAX - 1);
	/* No JSON_ALLOW_NUL: a NUL byte, raw or as \u0000, is refused. */
	obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!obj)
		return error_obj("bad-json", "not JSON: line %d, column %d", jerr.line,
				 jerr.column);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return error_obj("bad-request", "a request is a JSON object");
	}
	resp = check_id(obj);
	if (resp)
		goto out;
	v = json_object_get(obj, "v");
	if (v && (!json_is_integer(v) || json_integer_value(v) != CONTROL_PROTO_VERSION)) {
		resp = error_obj("bad-version", "this server speaks version %d",
				 CONTROL_PROTO_VERSION);
		goto out;
	}
	verb = json_object_get(obj, "verb");
	if (!verb) {
		resp = error_obj("bad-request", "no \"verb\"");
		goto out;
	}
	if (!json_is_string(verb)) {
		resp = error_obj("bad-type", "\"verb\" must be a string");
		goto out;
	}
	idx = verb_index(json_string_value(verb));
	if (idx < 0) {
		resp = error_obj("unknown-verb", "unknown verb (status, start, stop, config, get, "
				 "count, drain, clear, freeze, subscribe)");
		goto out;
	}
	r.verb = verbs[idx];
	r.obj = obj;
	json_object_foreach(obj, key, v) {
		bool known = !strcmp(key, "v") || !strcmp(key, "id") || !strcmp(key, "verb");

		for (unsigned int i = 0; !known && verb_members[idx][i]; i++)
			known = !strcmp(key, verb_members[idx][i]);
		if (!known) {
			/* jansson checked the key is UTF-8; it may still hold controls: not shown */
			resp = error_obj("bad-request", "%s takes no member of that name", r.verb);
			goto out;
		}
	}
	switch (get_uint(obj, "vcpu", c->nr_vcpus ? c->nr_vcpus - 1 : 0, &vcpu, &err)) {
	case 0:
		if (!c->nr_vcpus) {
			json_decref(err);
			resp = error_obj("bad-value", "no vCPU is traced");
			goto out;
		}
		r.has_vcpu = true;
		r.vcpu = (unsigned int)vcpu;
		break;
	case 1:
		break;
	default:
		resp = err;
		goto out;
	}
	resp = execute(c, &r, subscribed);
out:
	echo_id(resp, obj);
	json_decref(obj);
	return resp;
}

json_t *control__request(struct control *c, const char *line, size_t len, bool *subscribed)
{
	bool sub = false;
	json_t *resp;

	resp = parse_and_execute(c, line, len, &sub);
	c->requests++;
	if (!resp || json_object_get(resp, "error"))
		c->errors++;
	if (subscribed)
		*subscribed = sub;
	return resp;
}

/* ---- events ---------------------------------------------------------------------------- */

static json_t *event_obj(const char *name, unsigned int vcpu)
{
	return json_pack("{s:i, s:s, s:i}", "v", CONTROL_PROTO_VERSION, "event", name, "vcpu",
			 (int)vcpu);
}

/* The event an escape record stands for, or NULL. */
static json_t *record_event(unsigned int vcpu, uint64_t seq, const struct vbts_record *rec)
{
	struct decoded_record d;
	const char *name;
	char a[24];
	json_t *e;

	if (!vbts_record__is_escape(rec))
		return NULL;
	record__decode_one(vcpu, seq, rec, &d);
	switch (d.type) {
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		e = event_obj(decoded_type__name(d.type), vcpu);
		hex(a, sizeof(a), d.cr3);
		json_object_set_new(e, "cr3", json_string(a));
		json_object_set_new(e, "time", json_integer((json_int_t)d.time));
		break;
	case DECODED_TASK_PID:
		e = event_obj("task-pid", vcpu);
		json_object_set_new(e, "guest_pid", json_integer((uint32_t)d.payload));
		json_object_set_new(e, "guest_tgid", json_integer((uint32_t)(d.payload >> 32)));
		break;
	case DECODED_THREAD:
		e = event_obj("thread", vcpu);
		json_object_set_new(e, "pid", json_integer(d.thread_pid));
		json_object_set_new(e, "tgid", json_integer(d.thread_tgid));
		break;
	case DECODED_ENTRY:
		e = event_obj("entry", vcpu);
		hex(a, sizeof(a), d.to);
		json_object_set_new(e, "to", json_string(a));
		name = entry_reason__name(d.aux);
		json_object_set_new(e, "reason", name ? json_string(name) :
						json_integer((json_int_t)d.aux));
		break;
	case DECODED_FREEZE:
		name = d.aux == VBTS_FREEZE_OPERATOR ? "freeze" : "crash";
		e = event_obj(name, vcpu);
		json_object_set_new(e, "reason", json_string(freeze_reason__name(d.aux)));
		json_object_set_new(e, "time", json_integer((json_int_t)(d.time & INT64_MAX)));
		break;
	case DECODED_LOST:
		e = event_obj("drops", vcpu);
		json_object_set_new(e, "count", json_integer((json_int_t)(d.count & INT64_MAX)));
		break;
	case DECODED_START:
	case DECODED_STOP:
		e = event_obj(d.type == DECODED_START ? "start" : "stop", vcpu);
		json_object_set_new(e, "time", json_integer((json_int_t)(d.time & INT64_MAX)));
		break;
	default:
		return NULL;
	}
	if (e)
		json_object_set_new(e, "seq", json_integer((json_int_t)seq));
	return e;
}

/* New events of every ring since the last scan, into @arr. */
static void scan_events(struct control *c, json_t *arr)
{
	for (unsigned int i = 0; i < c->nr_vcpus; i++) {
		struct ring_view *v = &c->views[i];
		uint64_t first, end, lost, seq, missed = 0;
		struct vbts_record rec;
		json_t *e;

		if (view_open(c, i) < 0)
			continue;
		view_window(c, i, &first, &end);
		seq = v->ev_cursor;
		if (end > seq && end - seq > SCAN_MAX) {
			missed = end - SCAN_MAX - seq;
			seq = end - SCAN_MAX;
		}
		if (seq < first) {
			missed += first - seq;
			seq = first;
		}
		for (; seq < end; seq++) {
			if (view_get(c, i, seq, &rec) < 0) {
				missed++;
				continue;
			}
			e = record_event(i, seq, &rec);
			if (e)
				json_array_append_new(arr, e);
		}
		v->ev_cursor = seq;
		if (missed) {
			/* Records gone by before the scan saw them: their events are unknown. */
			e = event_obj("scan-missed", i);
			json_object_set_new(e, "count", json_integer((json_int_t)missed));
			json_array_append_new(arr, e);
		}
		lost = view_lost(v);
		if (lost != v->ev_lost) {
			e = event_obj("drops", i);
			json_object_set_new(e, "lost", json_integer((json_int_t)lost));
			json_object_set_new(e, "new", json_integer((json_int_t)(lost - v->ev_lost)));
			json_array_append_new(arr, e);
			v->ev_lost = lost;
		}
	}
}

json_t *control__poll_events(struct control *c)
{
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	start_scan(c);
	scan_events(c, arr);
	return arr;
}

/* ---- connections ----------------------------------------------------------------------- */

static void client_close(struct client *cl)
{
	if (cl->fd >= 0)
		close(cl->fd);
	free(cl->out);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
}

/* Queue one object; false when the queue would pass its bound (nothing is queued then). */
static bool client_queue(struct client *cl, json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	size_t n;
	char *p;

	if (!s)
		s = strdup("{\"v\":1,\"error\":\"out of memory\",\"code\":\"failed\"}");
	if (!s)
		return false;
	n = strlen(s);
	if (cl->out_len - cl->out_off + n + 1 > CONTROL_QUEUE_MAX) {
		free(s);
		return false;
	}
	if (cl->out_off) {
		memmove(cl->out, cl->out + cl->out_off, cl->out_len - cl->out_off);
		cl->out_len -= cl->out_off;
		cl->out_off = 0;
	}
	p = realloc(cl->out, cl->out_len + n + 1);
	if (!p) {
		free(s);
		return false;
	}
	cl->out = p;
	memcpy(cl->out + cl->out_len, s, n);
	cl->out[cl->out_len + n] = '\n';
	cl->out_len += n + 1;
	free(s);
	return true;
}

static void client_flush(struct client *cl)
{
	ssize_t n;

	while (cl->out_off < cl->out_len) {
		n = send(cl->fd, cl->out + cl->out_off, cl->out_len - cl->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
				cl->closing = true, cl->out_off = cl->out_len;
			return;
		}
		cl->out_off += (size_t)n;
	}
	cl->out_off = cl->out_len = 0;
}

/* One response or event for @cl; a client whose queue is full is dropped (counted). */
static void client_send(struct control *c, struct client *cl, json_t *obj)
{
	if (!client_queue(cl, obj)) {
		c->dropped++;
		client_close(cl);
	}
	json_decref(obj);
}

static void client_line(struct control *c, struct client *cl, const char *line, size_t len)
{
	bool sub = false;
	json_t *resp = control__request(c, line, len, &sub);

	if (sub)
		cl->subscribed = true;
	client_send(c, cl, resp);
}

/* Room for a response: a client's lines wait while half its queue is taken. */
static bool client_has_room(const struct client *cl)
{
	return cl->out_len - cl->out_off < CONTROL_QUEUE_MAX / 2;
}

/* Answer the complete lines read, as long as the client's queue has room. */
static void client_process(struct control *c, struct client *cl)
{
	size_t done = 0;
	char *nl;

	while (cl->fd >= 0 && client_has_room(cl) &&
	       (nl = memchr(cl->in + done, '\n', cl->in_len - done))) {
		size_t len = (size_t)(nl - (cl->in + done));

		if (cl->discarding)
			cl->discarding = false; /* the end of an over-long line */
		else
			client_line(c, cl, cl->in + done, len);
		done += len + 1;
	}
	if (cl->fd < 0)
		return;
	memmove(cl->in, cl->in + done, cl->in_len - done);
	cl->in_len -= done;
	if (cl->in_len == sizeof(cl->in) && !memchr(cl->in, '\n', cl->in_len)) {
		/* CONTROL_LINE_MAX bytes and no newline: refused, skipped up to its newline. */
		if (!cl->discarding) {
			c->too_long++;
			c->requests++;
			c->errors++;
			client_send(c, cl, error_obj("too-long", "request longer than %u bytes; "
						     "discarded up to its newline",
						     CONTROL_LINE_MAX - 1));
		}
		if (cl->fd >= 0) {
			cl->discarding = true;
			cl->in_len = 0;
		}
	}
}

static void client_read(struct control *c, struct client *cl)
{
	ssize_t n;

	if (cl->in_len == sizeof(cl->in))
		return; /* full of lines that wait for room in the queue */
	n = recv(cl->fd, cl->in + cl->in_len, sizeof(cl->in) - cl->in_len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(cl);
		return;
	}
	cl->in_len += (size_t)n;
	client_process(c, cl);
}

/*
 * A new connection: its peer's uid checked, refused when not allowed or no slot is free.
 * False when none was waiting.
 */
static bool accept_client(struct control *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *cl = NULL;
	json_t *err = NULL;
	char *s, junk[512];
	int fd;

	fd = accept4(c->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno != EAGAIN && errno != EWOULDBLOCK;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    !control__peer_allowed(cred.uid, geteuid())) {
		err = error_obj("forbidden", "peer uid not allowed: only uid %u and root",
				(unsigned int)geteuid());
	} else {
		for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX && !cl; i++)
			if (c->clients[i].fd < 0)
				cl = &c->clients[i];
		if (!cl)
			err = error_obj("busy", "%u clients already connected",
					CONTROL_CLIENTS_MAX);
	}
	if (err) {
		c->refused++;
		s = json_dumps(err, JSON_COMPACT);
		if (s) {
			/* one try, never waited for: the socket buffer of a new connection */
			if (send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT) > 0)
				send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			free(s);
		}
		json_decref(err);
		/* What it sent already is read (8 KiB at most): unread data would reset the
		 * connection and lose the error object with it. */
		for (unsigned int i = 0;
		     i < 16 && recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
			;
		close(fd);
		return true;
	}
	memset(cl, 0, sizeof(*cl));
	cl->fd = fd;
	return true;
}

static void broadcast_events(struct control *c)
{
	json_t *arr, *e;
	size_t i;

	arr = json_array();
	if (!arr)
		return;
	scan_events(c, arr);
	json_array_foreach(arr, i, e) {
		for (unsigned int k = 0; k < CONTROL_CLIENTS_MAX; k++) {
			struct client *cl = &c->clients[k];

			if (cl->fd >= 0 && cl->subscribed)
				client_send(c, cl, json_incref(e));
		}
	}
	json_decref(arr);
}

static void *control_thread(void *arg)
{
	struct pollfd pfd[CONTROL_CLIENTS_MAX + 2];
	struct control *c = arg;
	int map[CONTROL_CLIENTS_MAX + 2];
	unsigned int n;
	bool subscribers;

	pthread_setname_np(pthread_self(), "control");
	for (;;) {
		n = 0;
		subscribers = false;
		pfd[n++] = (struct pollfd){ .fd = c->wake[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = c->listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX; i++) {
			struct client *cl = &c->clients[i];
			short ev = 0;

			if (cl->fd < 0)
				continue;
			subscribers |= cl->subscribed;
			/* Not read while its responses pile up: it has to read them first. */
			if (!cl->closing && client_has_room(cl) && cl->in_len < sizeof(cl->in))
				ev |= POLLIN;
			if (cl->out_off < cl->out_len)
				ev |= POLLOUT;
			map[n] = (int)i;
			pfd[n++] = (struct pollfd){ .fd = cl->fd, .events = ev };
		}
		if (poll(pfd, n, subscribers ? TICK_MS : -1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		for (unsigned int k = 2; k < n; k++) {
			struct client *cl = &c->clients[map[k]];

			if (cl->fd != pfd[k].fd)
				continue;
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
				client_read(c, cl);
			if (cl->fd >= 0 && cl->out_off < cl->out_len)
				client_flush(cl);
			/* Lines that waited for room: answered as long as the socket takes them. */
			while (cl->fd >= 0 && client_has_room(cl) &&
			       memchr(cl->in, '\n', cl->in_len)) {
				client_process(c, cl);
				if (cl->fd >= 0)
					client_flush(cl);
			}
			if (cl->fd >= 0 && cl->closing && cl->out_off >= cl->out_len)
				client_close(cl);
		}
		/* Every waiting connection, a bounded number per round. */
		for (unsigned int i = 0; (pfd[1].revents & POLLIN) && i < ACCEPT_BATCH; i++)
			if (!accept_client(c))
				break;
		if (subscribers) {
			broadcast_events(c);
			for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX; i++)
				if (c->clients[i].fd >= 0)
					client_flush(&c->clients[i]);
		}
	}
	return NULL;
}

/* ---- set-up ---------------------------------------------------------------------------- */

int control__check_path(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct stat st;
	char *copy, *slash;
	int ret = 0;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--control %s: a socket path has at most %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISSOCK(st.st_mode))
			return 0;
		snprintf(err, errlen, "--control %s exists and is not a socket: not replaced", path);
		return -EEXIST;
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (slash) {
		slash[slash == copy] = '\0'; /* "/s": the root directory */
		if (stat(copy, &st) < 0)
			ret = -errno;
		else if (!S_ISDIR(st.st_mode))
			ret = -ENOTDIR;
		if (ret)
			snprintf(err, errlen, "--control %s: directory %s: %s", path, copy,
				 strerror(-ret));
	}
	free(copy);
	return ret;
}

/*
 * Make the socket at @path: refuse anything there but a socket nobody listens on, which is
 * removed. 0 or -errno with @err set.
 */
static int make_socket(struct control *c, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, probe, ret;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "--control %s: a socket path has at most %zu bytes", path,
			 sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "--control %s exists and is not a socket: not replaced",
				 path);
			return -EEXIST;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe < 0)
			return -errno;
		ret = connect(probe, (struct sockaddr *)&sa, sizeof(sa));
		close(probe);
		if (ret == 0) {
			snprintf(err, errlen, "--control %s: another process serves this socket",
				 path);
			return -EEXIST;
		}
		if (unlink(path) < 0) {
			ret = -errno;
			snprintf(err, errlen, "--control %s: cannot remove the stale socket: %s",
				 path, strerror(errno));
			return ret;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err;
	/* Created 0600: no window in which another user may connect. */
	old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret < 0 || chmod(path, 0600) < 0 || listen(fd, BACKLOG) < 0) {
		ret = -errno;
		close(fd);
		if (ret != -EADDRINUSE)
			unlink(path);
		errno = -ret;
		goto err;
	}
	c->listen_fd = fd;
	return 0;
err:
	ret = -errno;
	snprintf(err, errlen, "--control %s: %s", path, strerror(errno));
	return ret;
}

static char *dup_or_null(const char *s, bool *fail)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*fail = true;
	return d;
}

struct control *control__create(const struct control_config *cfg, char *err, size_t errlen)
{
	struct control *c = calloc(1, sizeof(*c));
	bool fail = false;
	int ret;

	if (!c)
		return NULL;
	c->listen_fd = -1;
	c->wake[0] = c->wake[1] = -1;
	for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX; i++)
		c->clients[i].fd = -1;
	c->nr_vcpus = cfg->nr_vcpus;
	c->ring_records = cfg->ring_records;
	c->stream = cfg->stream;
	c->segment_records = cfg->segment_records;
	c->ops = cfg->ops;
	c->opaque = cfg->opaque;
	c->trace_dir = dup_or_null(cfg->trace_dir, &fail);
	c->backend = dup_or_null(cfg->backend, &fail);
	c->views = calloc(cfg->nr_vcpus ? cfg->nr_vcpus : 1, sizeof(*c->views));
	c->tasks = calloc(cfg->nr_tasks ? cfg->nr_tasks : 1, sizeof(*c->tasks));
	if (!c->views || !c->tasks)
		fail = true;
	for (unsigned int i = 0; !fail && i < cfg->nr_tasks; i++) {
		/* --task names came from the command line: kept as valid UTF-8 for JSON */
		c->tasks[i] = escape__utf8_dup(cfg->tasks[i], 256);
		if (!c->tasks[i])
			fail = true;
		c->nr_tasks = i + 1;
	}
	if (fail) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		goto err_free;
	}
	if (pipe2(c->wake, O_CLOEXEC) < 0) {
		ret = errno;
		snprintf(err, errlen, "control: pipe: %s", strerror(errno));
		errno = ret;
		goto err_free;
	}
	if (cfg->path) {
		c->path = strdup(cfg->path);
		if (!c->path) {
			errno = ENOMEM;
			goto err_free;
		}
		ret = make_socket(c, cfg->path, err, errlen);
		if (ret < 0) {
			free(c->path);
			c->path = NULL;
			errno = -ret;
			goto err_free;
		}
	}
	return c;

err_free:
	ret = errno;
	control__destroy(c);
	errno = ret;
	return NULL;
}

int control__start(struct control *c)
{
	int ret;

	if (c->listen_fd < 0)
		return -EINVAL;
	ret = pthread_create(&c->thread, NULL, control_thread, c);
	if (ret)
		return -ret;
	c->started = true;
	return 0;
}

void control__destroy(struct control *c)
{
	if (!c)
		return;
	if (c->started) {
		while (write(c->wake[1], "x", 1) < 0 && errno == EINTR)
			;
		pthread_join(c->thread, NULL);
	}
	for (unsigned int i = 0; i < CONTROL_CLIENTS_MAX; i++)
		if (c->clients[i].fd >= 0)
			client_close(&c->clients[i]);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		if (c->path)
			unlink(c->path);
	}
	if (c->wake[0] >= 0)
		close(c->wake[0]);
	if (c->wake[1] >= 0)
		close(c->wake[1]);
	for (unsigned int i = 0; c->views && i < c->nr_vcpus; i++) {
		ring_reader__close(c->views[i].ring);
		seg_view__free(c->views[i].seg);
	}
	for (unsigned int i = 0; i < c->nr_tasks; i++)
		free(c->tasks[i]);
	free(c->tasks);
	free(c->views);
	free(c->path);
	free(c->trace_dir);
	free(c->backend);
	free(c);
}
