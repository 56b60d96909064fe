// SPDX-License-Identifier: GPL-2.0
/*
 * export-perfetto.c - Chrome trace JSON of the calls, for Perfetto (export-perfetto.h). A stream's user value is
 * 1 + the time (ns) of its last event: 0 until its metadata is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export-perfetto.h"
#include "export-flow.h"

struct perfetto {
	struct flow_export fx;     /* first: see export-flow.h */
	bool any;               /* an event was written: the next needs a comma */
};

/* A string constant at @p. */
#define PUT(p, lit) out_buf__fmt_str((p), (lit), sizeof(lit) - 1)

/* Room for an event without its name. */
#define EVENT_MAX 256

static int64_t process_of(const struct flow_stream *s)
{
	if (s->thread_valid)
		return s->thread_tgid;
	if (!s->task)
		return 0;
	return s->task->tgid_valid ? s->task->tgid : s->task->pid;
}

static char *event_start(struct perfetto *x, char *p)
{
	if (x->any)
		*p++ = ',';
	x->any = true;
	return p;
}

/* ,"pid":P,"tid":T */
static char *track(char *p, const struct flow_stream *s)
{
	p = PUT(p, ",\"pid\":");
	p = out_buf__fmt_i64(p, process_of(s));
	p = PUT(p, ",\"tid\":");
	return out_buf__fmt_u64(p, s->index);
}

/*
 * The label of @s's task, "name[pid]" ("cr3:0x..." for a CR3 of no task), as the contents of
 * a JSON string (without quotes); of a thread the trace named, "name[pid]" with its pid
 * ("[pid]" of no known task), or with @process its tgid: the name of its process.
 */
static void put_label(struct perfetto *x, const struct flow_stream *s, bool process)
{
	struct out_buf *ob = x->fx.env.ob;
	uint32_t id = process ? s->thread_tgid : s->thread_pid;
	char *p, *start;
	size_t len;

	if (s->task) {
		/* A label, not an identity: a long name is cut. */
		len = strlen(s->task->name);
		if (len > OUT_BUF_RESERVE_MAX / 8)
			len = OUT_BUF_RESERVE_MAX / 8;
		start = out_buf__reserve(ob, 6 * len + 2 + OUT_BUF_NUMBER_MAX + 2);
		p = out_buf__fmt_json(start, s->task->name, len);
		/* The string's contents, without its quotes. */
		memmove(start, start + 1, (size_t)(p - start) - 2);
		p -= 2;
		*p++ = '[';
		p = out_buf__fmt_i64(p, s->thread_valid ? id : s->task->pid);
		*p++ = ']';
		out_buf__commit(ob, p);
	} else if (s->thread_valid) {
		p = out_buf__reserve(ob, OUT_BUF_NUMBER_MAX + 2);
		*p++ = '[';
		p = out_buf__fmt_u64(p, id);
		*p++ = ']';
		out_buf__commit(ob, p);
	} else if (s->cr3_valid) {
		p = out_buf__reserve(ob, 32);
		p = PUT(p, "cr3:0x");
		p = out_buf__fmt_hex(p, s->cr3);
		out_buf__commit(ob, p);
	} else {
		out_buf__puts(ob, "[no task]");
	}
}

/* The metadata of @s's track, before its first event. */
static void metadata(struct perfetto *x, struct flow_stream *s)
{
	struct out_buf *ob = x->fx.env.ob;
	char *p;

	p = event_start(x, out_buf__reserve(ob, EVENT_MAX));
	p = PUT(p, "\n{\"ph\":\"M\",\"name\":\"process_name\"");
	p = track(p, s);
	p = PUT(p, ",\"args\":{\"name\":\"");
	out_buf__commit(ob, p);
	put_label(x, s, true);
	p = out_buf__reserve(ob, EVENT_MAX);
	p = PUT(p, "\"}}");
	p = event_start(x, p);
	p = PUT(p, "\n{\"ph\":\"M\",\"name\":\"thread_name\"");
	p = track(p, s);
	p = PUT(p, ",\"args\":{\"name\":\"vcpu");
	p = out_buf__fmt_u64(p, s->vcpu);
	*p++ = ' ';
	out_buf__commit(ob, p);
	put_label(x, s, false);
	out_buf__puts(ob, "\"}}");
}

/* ,"ts":T with T the time of @r in µs, at least the track's last. */
static char *timestamp(char *p, struct flow_stream *s, const struct decoded_record *r)
{
	uint64_t ns = s->user - 1;

	if (r && r->time_valid && r->time > ns)
		ns = r->time;
	s->user = ns + 1;
	p = PUT(p, ",\"ts\":");
	p = out_buf__fmt_u64(p, ns / 1000);
	if (ns % 1000) {
		*p++ = '.';
		*p++ = (char)('0' + ns / 100 % 10);
		*p++ = (char)('0' + ns / 10 % 10);
		*p++ = (char)('0' + ns % 10);
	}
	return p;
}

static int perfetto_enter(void *ctx, struct flow_stream *s, struct flow_frame *f, bool call,
			const struct decoded_record *r)
{
	struct perfetto *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	const char *name = f->name ? f->name : FLOW_UNKNOWN;
	size_t len = strlen(name);
	char *p;

	if (!s->user) {
		s->user = 1;
		metadata(x, s);
	}
	p = event_start(x, out_buf__reserve(ob, EVENT_MAX));
	p = PUT(p, "\n{\"ph\":\"B\"");
	p = track(p, s);
	p = timestamp(p, s, r);
	p = PUT(p, ",\"args\":{\"addr\":\"0x");
	p = out_buf__fmt_hex(p, f->start);
	p = PUT(p, "\"},\"name\":");
	out_buf__commit(ob, p);
	/* A name longer than a reservation is cut: a slice name, not an identity. */
	if (len > OUT_BUF_RESERVE_MAX / 8)
		len = OUT_BUF_RESERVE_MAX / 8;
	p = out_buf__reserve(ob, 6 * len + 4);
	p = out_buf__fmt_json(p, name, len);
	*p++ = '}';
	out_buf__commit(ob, p);
	return 0;
}

static int perfetto_leave(void *ctx, struct flow_stream *s, struct flow_frame *f,
			const struct decoded_record *r)
{
	struct perfetto *x = ctx;
	struct out_buf *ob = x->fx.env.ob;
	char *p = event_start(x, out_buf__reserve(ob, EVENT_MAX));

	p = PUT(p, "\n{\"ph\":\"E\"");
	p = track(p, s);
	p = timestamp(p, s, r);
	*p++ = '}';
	out_buf__commit(ob, p);
	return 0;
}

static void *perfetto_new(const struct export_env *env)
{
	static const struct flow_ops ops = { .enter = perfetto_enter, .leave = perfetto_leave };
	struct perfetto *x = flow_export__new(sizeof(*x), env, &ops, true);

	if (!x)
		return NULL;
	out_buf__puts(env->ob, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	return x;
}

static int perfetto_finish(void *ctx)
{
	struct perfetto *x = ctx;
	int ret = flow__finish(x->fx.flow);

	if (ret)
		return ret;
	out_buf__puts(x->fx.env.ob, "\n]}\n");
	return 0;
}

static void perfetto_free(void *ctx)
{
	struct perfetto *x = ctx;

	flow__free(x->fx.flow);
	free(x);
}

const struct export_format_ops perfetto_format = {
	.name = "perfetto",
	.new = perfetto_new,
	.record = flow_export__record,
	.finish = perfetto_finish,
	.free = perfetto_free,
};
