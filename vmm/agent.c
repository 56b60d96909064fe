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
#include "vm.h"

struct agent_line {
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
	struct agent_line *lines; /* [nr_vcpus] */
};

/* Members kept, with their only accepted JSON type. */
static const struct {
	const char *name;
	json_type type;
} known_members[] = {
	{ "event", JSON_STRING },
	{ "pid", JSON_INTEGER },
	{ "tid", JSON_INTEGER },
	{ "ppid", JSON_INTEGER },
	{ "name", JSON_STRING },
	{ "comm", JSON_STRING },
	{ "cr3", JSON_STRING },
	{ "code", JSON_INTEGER },
	{ "signal", JSON_INTEGER },
	{ "addr", JSON_STRING },
	{ "build_id", JSON_STRING },
};

struct agent *agent__create(unsigned int nr_vcpus, FILE *events, uint64_t start_ns,
			    uint64_t max_events)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->nr_vcpus = nr_vcpus ? nr_vcpus : 1;
	a->lines = calloc(a->nr_vcpus, sizeof(*a->lines));
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
	for (unsigned int i = 0; i < a->nr_vcpus; i++)
		if (a->lines[i].len || a->lines[i].too_long)
			a->stats.invalid++;
	if (a->events)
		fflush(a->events);
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
		if (json_is_string(value) && json_string_length(value) > AGENT_STRING_MAX)
			return false;
		return true;
	}
	return false;
}

/* A complete line: parse, filter, stamp, store. Called with @lock held. */
static void take_line(struct agent *a, unsigned int vcpu, const char *buf, size_t len)
{
	json_t *in, *out, *value;
	const char *key;
	json_error_t jerr;

	in = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!in || !json_is_object(in) || !json_is_string(json_object_get(in, "event")) ||
	    !keep_member("event", json_object_get(in, "event"))) {
		a->stats.invalid++;
		json_decref(in);
		return;
	}
	if (a->stats.stored >= a->max_events) {
		a->stats.over_limit++;
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
	json_object_set_new(out, "time", json_integer((json_int_t)(vm__now_ns() - a->start_ns)));
	json_object_set_new(out, "vcpu", json_integer(vcpu));
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
	json_decref(in);
}

void agent__set_events(struct agent *a, FILE *events, uint64_t start_ns)
{
	pthread_mutex_lock(&a->lock);
	a->events = events;
	a->start_ns = start_ns;
	pthread_mutex_unlock(&a->lock);
}

static void feed_locked(struct agent *a, unsigned int vcpu, uint8_t byte)
{
	struct agent_line *l = &a->lines[vcpu];

	a->stats.bytes++;
	if (byte == '\n') {
		if (l->too_long)
			a->stats.too_long++;
		else if (l->len && !(l->len == 1 && l->buf[0] == '\r'))
			take_line(a, vcpu, l->buf, l->len);
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

void agent__feed(struct agent *a, unsigned int vcpu, uint8_t byte)
{
	pthread_mutex_lock(&a->lock);
	if (vcpu >= a->nr_vcpus) {
		a->stats.bytes++;
		a->stats.invalid++;
	} else {
		feed_locked(a, vcpu, byte);
	}
	pthread_mutex_unlock(&a->lock);
}

int agent__io(void *dev, struct io_access *acc)
{
	struct agent *a = dev;

	if (!acc->write) {
		memset(acc->data, 0, acc->size);
		return 0;
	}
	for (unsigned int i = 0; i < acc->size; i++)
		agent__feed(a, acc->vcpu, acc->data[i]);
	return 0;
}

void agent__stats(struct agent *a, struct agent_stats *stats)
{
	pthread_mutex_lock(&a->lock);
	*stats = a->stats;
	pthread_mutex_unlock(&a->lock);
}
