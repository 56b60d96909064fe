// SPDX-License-Identifier: GPL-2.0
/*
 * agent.c - the guest → host agent channel: bounded JSON lines → events.jsonl.
 *
 * Locking: @lock serializes the line buffers, the counters and the events file between
 * vCPU threads.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <vbts/agent-proto.h>

#include "agent.h"
#include "clock.h"
#include "elf-store.h"
#include "trace-keys.h"

struct agent_line {
	uint64_t space; /* the writer's address space */
	uint64_t used;  /* agent.bytes when last written to; 0: free */
	size_t len;
	bool too_long; /* bytes are being skipped up to the next newline */
	char buf[VBTS_AGENT_LINE_MAX];
};

struct agent {
	pthread_mutex_t lock;
	FILE *events;
	uint64_t start_ns;
	uint64_t max_events;
	unsigned int nr_vcpus;
	struct agent_stats stats;
	struct agent_line *lines; /* [nr_vcpus][AGENT_WRITERS] */
	struct elf_store *store;  /* NULL: uploads are counted and dropped */
	bool introspected;        /* task/exec/exit are the VMM's own events */
	agent_space_fn space_fn;
	void *space_ctx;
	uint64_t nr_lines;        /* complete lines taken */
	bool elf_busy;            /* an upload of @elf_owner is unfinished */
	uint64_t elf_owner;       /* the address space that began it */
	uint64_t elf_last;        /* @nr_lines at its owner's last upload line */
};

/* Members kept, with their only accepted JSON type and, for strings, their longest length. */
static const struct {
	const char *name;
	json_type type;
	size_t max;
} known_members[] = {
	{ EVENTS_KEY_EVENT, JSON_STRING, AGENT_STRING_MAX },
	{ "v", JSON_INTEGER, 0 },
	{ EVENTS_KEY_PID, JSON_INTEGER, 0 },
	{ "tid", JSON_INTEGER, 0 },
	{ "ppid", JSON_INTEGER, 0 },
	{ EVENTS_KEY_NAME, JSON_STRING, AGENT_STRING_MAX },
	{ "comm", JSON_STRING, AGENT_STRING_MAX },
	{ EVENTS_KEY_CR3, JSON_STRING, AGENT_STRING_MAX },
	{ EVENTS_KEY_CODE, JSON_INTEGER, 0 },
	{ "signal", JSON_INTEGER, 0 },
	{ "addr", JSON_STRING, AGENT_STRING_MAX },
	{ EVENTS_KEY_BUILD_ID, JSON_STRING, VBTS_AGENT_BUILD_ID_MAX },
	{ EVENTS_KEY_EXE, JSON_STRING, VBTS_AGENT_PATH_MAX },
	{ EVENTS_KEY_PATH, JSON_STRING, VBTS_AGENT_PATH_MAX },
	{ EVENTS_KEY_START, JSON_STRING, AGENT_STRING_MAX },
	{ EVENTS_KEY_END, JSON_STRING, AGENT_STRING_MAX },
	{ EVENTS_KEY_OFFSET, JSON_STRING, AGENT_STRING_MAX },
	{ "bytes", JSON_INTEGER, 0 },
	{ "dropped", JSON_INTEGER, 0 },
};

struct agent *agent__create(unsigned int nr_vcpus, FILE *events, uint64_t start_ns,
			    uint64_t max_events)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->nr_vcpus = nr_vcpus ? nr_vcpus : 1;
	a->lines = calloc((size_t)a->nr_vcpus * AGENT_WRITERS, sizeof(*a->lines));
	if (!a->lines) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->events = events;
	a->start_ns = start_ns;
	a->max_events = max_events;
	return a;
}

void agent__destroy(struct agent *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; i < a->nr_vcpus * AGENT_WRITERS; i++)
		if (a->lines[i].len || a->lines[i].too_long)
			a->stats.invalid++;
	if (a->events)
		fflush(a->events);
	elf_store__destroy(a->store);
	pthread_mutex_destroy(&a->lock);
	free(a->lines);
	free(a);
}

static bool keep_member(const char *key, json_t *value)
{
	for (size_t i = 0; i < sizeof(known_members) / sizeof(known_members[0]); i++) {
		if (strcmp(key, known_members[i].name))
			continue;
		if (json_typeof(value) != known_members[i].type)
			return false;
		if (json_is_string(value) && json_string_length(value) > known_members[i].max)
			return false;
		return true;
	}
	return false;
}

/* Stamp @out (consumed) and append it to events.jsonl. Called with @lock held. */
static void store_event(struct agent *a, unsigned int vcpu, json_t *out)
{
	if (a->stats.stored >= a->max_events) {
		a->stats.over_limit++;
		json_decref(out);
		return;
	}
	json_object_set_new(out, EVENTS_KEY_TIME,
			    json_integer((json_int_t)(clock__now_ns() - a->start_ns)));
	json_object_set_new(out, EVENTS_KEY_VCPU, json_integer(vcpu));
	if (a->events) {
		/*
		 * Each event reaches the file when it is stored: it survives a kill of the VMM.
		 * ASCII only: the guest's strings have their controls and any non-ASCII written
		 * as \uXXXX, so the file is safe to print and parses to the same text.
		 */
		flockfile(a->events); /* one line at a time: guest-tasks writes here too */
		json_dumpf(out, a->events, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
		fputc('\n', a->events);
		fflush(a->events);
		funlockfile(a->events);
	}
	a->stats.stored++;
	json_decref(out);
}

/*
 * Strict base64 (RFC 4648, with padding) of at most VBTS_AGENT_ELF_CHUNK bytes into @out.
 * Return: the byte count, or -1 when @in is not that.
 */
static long decode_base64(const char *in, size_t len, unsigned char *out)
{
	size_t n = 0, pad = 0;
	uint32_t acc = 0;

	if (len % 4 || len / 4 * 3 > VBTS_AGENT_ELF_CHUNK)
		return -1;
	if (len && in[len - 1] == '=')
		pad = len >= 2 && in[len - 2] == '=' ? 2 : 1;
	for (size_t i = 0; i < len; i++) {
		char c = in[i];
		uint32_t v;

		if (i >= len - pad)
			v = 0;
		else if (c >= 'A' && c <= 'Z')
			v = (uint32_t)(c - 'A');
		else if (c >= 'a' && c <= 'z')
			v = (uint32_t)(c - 'a' + 26);
		else if (c >= '0' && c <= '9')
			v = (uint32_t)(c - '0' + 52);
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			return -1;
		acc = acc << 6 | v;
		if (i % 4 == 3) {
			out[n++] = (unsigned char)(acc >> 16);
			out[n++] = (unsigned char)(acc >> 8);
			out[n++] = (unsigned char)acc;
			acc = 0;
		}
	}
	return (long)(n - pad);
}

/*
 * Whether an upload line of address space @space may reach the store: one upload at a time,
 * owned by the address space that began it. A begin from another one waits (is refused) while
 * the owner's upload advances, so that another process cannot abandon it. @lock held.
 */
static bool elf_allowed(struct agent *a, uint64_t space, bool begin)
{
	if (a->elf_busy && a->elf_owner == space)
		return true;
	if (!begin)
		return !a->elf_busy;
	return !a->elf_busy || a->nr_lines - a->elf_last >= AGENT_ELF_IDLE_LINES;
}

/* agent-elf-begin / -data / -end: the upload path (vbts/agent-proto.h). @lock held. */
static void take_elf(struct agent *a, unsigned int vcpu, uint64_t space, const char *ev,
		     json_t *in)
{
	unsigned char chunk[VBTS_AGENT_ELF_CHUNK];
	json_t *id = json_object_get(in, "build_id");
	json_t *size = json_object_get(in, "size");
	json_t *off = json_object_get(in, "off");
	json_t *data = json_object_get(in, "data");
	char stored[2 * VBTS_AGENT_BUILD_ID_MAX + 1];
	uint64_t bytes;
	long n;

	if (!a->store) {
		a->stats.elf_dropped++;
		return;
	}
	if (strcmp(ev, "agent-elf-begin") && strcmp(ev, "agent-elf-data") &&
	    strcmp(ev, "agent-elf-end")) {
		a->stats.invalid++;
		return;
	}
	if (!elf_allowed(a, space, !strcmp(ev, "agent-elf-begin"))) {
		a->stats.elf_dropped++;
		return;
	}
	a->elf_last = a->nr_lines;
	if (!strcmp(ev, "agent-elf-begin")) {
		/* A begin the store takes abandons what it had, a refused one too. */
		a->elf_busy = false;
		if (!json_is_string(id) || !json_is_integer(size) || json_integer_value(size) < 0 ||
		    elf_store__begin(a->store, json_string_value(id),
				     (uint64_t)json_integer_value(size)) < 0) {
			a->stats.elf_dropped++;
		} else {
			a->elf_busy = true;
			a->elf_owner = space;
		}
	} else if (!strcmp(ev, "agent-elf-data")) {
		n = -1;
		if (json_is_integer(off) && json_integer_value(off) >= 0 && json_is_string(data))
			n = decode_base64(json_string_value(data), json_string_length(data), chunk);
		if (n < 0 || elf_store__data(a->store, (uint64_t)json_integer_value(off), chunk,
					     (size_t)n) < 0) {
			if (n < 0)
				elf_store__data(a->store, UINT64_MAX, NULL, 0); /* drop it */
			a->stats.elf_dropped++;
			a->elf_busy = false;
		}
	} else {
		json_t *out;

		a->elf_busy = false;
		if (elf_store__end(a->store, stored, &bytes) < 0) {
			a->stats.elf_dropped++;
			return;
		}
		out = json_pack("{s:s, s:s, s:I}", EVENTS_KEY_EVENT, EVENT_AGENT_ELF,
				EVENTS_KEY_BUILD_ID, stored, EVENTS_KEY_SIZE, (json_int_t)bytes);
		if (out)
			store_event(a, vcpu, out);
	}
}

/* A complete line: parse, filter, stamp, store. Called with @lock held. */
static void take_line(struct agent *a, unsigned int vcpu, uint64_t space, const char *buf,
		      size_t len)
{
	json_t *in, *out, *value;
	const char *key, *ev;
	json_error_t jerr;

	in = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!in || !json_is_object(in) ||
	    !json_is_string(json_object_get(in, EVENTS_KEY_EVENT)) ||
	    !keep_member(EVENTS_KEY_EVENT, json_object_get(in, EVENTS_KEY_EVENT))) {
		a->stats.invalid++;
		json_decref(in);
		return;
	}
	ev = json_string_value(json_object_get(in, EVENTS_KEY_EVENT));
	if (a->introspected &&
	    (!strcmp(ev, EVENT_TASK) || !strcmp(ev, EVENT_EXEC) || !strcmp(ev, EVENT_EXIT))) {
		a->stats.forged++;
		json_decref(in);
		return;
	}
	if (!strncmp(ev, "agent-elf", 9)) {
		/* Only the VMM writes agent-elf, after verifying the file. */
		if (ev[9] == '-')
			take_elf(a, vcpu, space, ev, in);
		else
			a->stats.invalid++;
		json_decref(in);
		return;
	}
	out = json_object();
	if (!out) {
		a->stats.invalid++;
		json_decref(in);
		return;
	}
	json_object_foreach(in, key, value) {
		if (keep_member(key, value))
			json_object_set(out, key, value);
		else
			a->stats.members_dropped++;
	}
	json_decref(in);
	store_event(a, vcpu, out);
}

void agent__set_introspected(struct agent *a, bool on)
{
	pthread_mutex_lock(&a->lock);
	a->introspected = on;
	pthread_mutex_unlock(&a->lock);
}

int agent__set_store(struct agent *a, const char *dir)
{
	struct elf_store *s = NULL;

	if (dir) {
		s = elf_store__create(dir, NULL);
		if (!s)
			return -ENOMEM;
	}
	pthread_mutex_lock(&a->lock);
	a->elf_busy = false;
	elf_store__destroy(a->store);
	a->store = s;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void agent__set_events(struct agent *a, FILE *events, uint64_t start_ns)
{
	pthread_mutex_lock(&a->lock);
	a->events = events;
	a->start_ns = start_ns;
	pthread_mutex_unlock(&a->lock);
}

/*
 * The line buffer of @space on @vcpu: its own, else a free one, else the least recently
 * written, whose partial line is dropped. @lock held.
 */
static struct agent_line *writer_line(struct agent *a, unsigned int vcpu, uint64_t space)
{
	struct agent_line *lines = &a->lines[(size_t)vcpu * AGENT_WRITERS], *l = &lines[0];

	for (unsigned int i = 0; i < AGENT_WRITERS; i++) {
		if (lines[i].used && lines[i].space == space)
			return &lines[i];
		if (lines[i].used < l->used)
			l = &lines[i];
	}
	if (l->len || l->too_long)
		a->stats.invalid++;
	l->space = space;
	l->len = 0;
	l->too_long = false;
	return l;
}

static void feed_locked(struct agent *a, unsigned int vcpu, uint64_t space, uint8_t byte)
{
	struct agent_line *l = writer_line(a, vcpu, space);

	a->stats.bytes++;
	l->used = a->stats.bytes;
	if (byte == '\n') {
		a->nr_lines++;
		if (l->too_long)
			a->stats.too_long++;
		else if (l->len && !(l->len == 1 && l->buf[0] == '\r'))
			take_line(a, vcpu, space, l->buf, l->len);
		l->len = 0;
		l->too_long = false;
		return;
	}
	if (l->too_long)
		return;
	if (l->len == sizeof(l->buf)) {
		l->too_long = true;
		l->len = 0;
		return;
	}
	l->buf[l->len++] = (char)byte;
}

void agent__feed_space(struct agent *a, unsigned int vcpu, uint64_t space, uint8_t byte)
{
	pthread_mutex_lock(&a->lock);
	if (vcpu >= a->nr_vcpus) {
		a->stats.bytes++;
		a->stats.invalid++;
	} else {
		feed_locked(a, vcpu, space, byte);
	}
	pthread_mutex_unlock(&a->lock);
}

void agent__feed(struct agent *a, unsigned int vcpu, uint8_t byte)
{
	agent__feed_space(a, vcpu, 0, byte);
}

void agent__set_space(struct agent *a, agent_space_fn fn, void *ctx)
{
	pthread_mutex_lock(&a->lock);
	a->space_fn = fn;
	a->space_ctx = ctx;
	pthread_mutex_unlock(&a->lock);
}

int agent__io(void *dev, struct io_access *acc)
{
	struct agent *a = dev;
	agent_space_fn fn;
	uint64_t space = 0;
	void *ctx;

	if (!acc->write) {
		memset(acc->data, 0, acc->size);
		return 0;
	}
	/* Set before the vCPUs run (agent__set_space()); read under the lock all the same. */
	pthread_mutex_lock(&a->lock);
	fn = a->space_fn;
	ctx = a->space_ctx;
	pthread_mutex_unlock(&a->lock);
	if (fn)
		space = fn(ctx, acc->vcpu);
	for (unsigned int i = 0; i < acc->size; i++)
		agent__feed_space(a, acc->vcpu, space, acc->data[i]);
	return 0;
}

void agent__stats(struct agent *a, struct agent_stats *stats)
{
	pthread_mutex_lock(&a->lock);
	*stats = a->stats;
	if (a->store)
		elf_store__stats(a->store, &stats->elf);
	else
		memset(&stats->elf, 0, sizeof(stats->elf));
	pthread_mutex_unlock(&a->lock);
}

int agent__register(struct agent *a, struct io_bus *pio)
{
	return io_bus__register(pio, VBTS_AGENT_PORT, 1, agent__io, a, "agent");
}
