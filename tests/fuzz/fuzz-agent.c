// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-agent.c - libFuzzer target: an input is the byte stream a guest writes to the agent
 * port (VBTS_AGENT_PORT), fed one outb at a time through the port handler agent__io().
 *
 * Beyond the sanitizers it checks what agent.h promises of events.jsonl: one stored line per
 * counted event, each a JSON object with a string "event", the "time" and "vcpu" stamps and
 * only known members of their one type, strings bounded; every line short enough for the
 * decoder's reader of events.jsonl; no more outcomes counted than lines ended.
 */
#include <jansson.h>
#include <string.h>

#include <vbts/agent-proto.h>

#include "agent.h"
#include "clock.h"
#include "fuzz.h"

/* Lines stored at most: small, so that inputs reach the limit. */
#define MAX_EVENTS 8

/* The longest line format/events.c reads from events.jsonl (EVENTS_LINE_MAX). */
#define READER_LINE_MAX 4096

static const struct {
	const char *name;
	json_type type;
} members[] = {
	{ "event", JSON_STRING }, { "pid", JSON_INTEGER }, { "tid", JSON_INTEGER },
	{ "ppid", JSON_INTEGER }, { "name", JSON_STRING }, { "comm", JSON_STRING },
	{ "cr3", JSON_STRING }, { "code", JSON_INTEGER }, { "signal", JSON_INTEGER },
	{ "addr", JSON_STRING }, { "build_id", JSON_STRING }, { "time", JSON_INTEGER },
	{ "vcpu", JSON_INTEGER },
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void check_member(const char *key, json_t *value)
{
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		if (strcmp(key, members[i].name))
			continue;
		FUZZ_ASSERT(json_typeof(value) == members[i].type);
		FUZZ_ASSERT(!json_is_string(value) ||
			    json_string_length(value) <= AGENT_STRING_MAX);
		return;
	}
	FUZZ_ASSERT(!"an unknown member was stored");
}

static void check_line(const char *line, size_t len)
{
	json_error_t jerr;
	const char *key;
	json_t *j, *v;

	FUZZ_ASSERT(len + 1 <= READER_LINE_MAX);
	j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	FUZZ_ASSERT(json_is_object(j));
	FUZZ_ASSERT(json_is_string(json_object_get(j, "event")));
	v = json_object_get(j, "time");
	FUZZ_ASSERT(json_is_integer(v) && json_integer_value(v) >= 0);
	v = json_object_get(j, "vcpu");
	FUZZ_ASSERT(json_is_integer(v) && json_integer_value(v) == 0);
	json_object_foreach(j, key, v)
		check_member(key, v);
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_stats st;
	struct agent *a;
	size_t len = 0, lines = 0, ended = 0;
	char *buf = NULL, *p, *nl;
	uint8_t byte;
	struct io_access acc = { .vcpu = 0, .data = &byte, .size = 1, .write = true };
	FILE *events = open_memstream(&buf, &len);

	FUZZ_ASSERT(events);
	a = agent__create(2, events, clock__now_ns(), MAX_EVENTS);
	FUZZ_ASSERT(a);
	for (size_t i = 0; i < size; i++) {
		byte = data[i];
		FUZZ_ASSERT(agent__io(a, &acc) == 0);
		ended += byte == '\n';
	}
	agent__stats(a, &st);
	agent__destroy(a);
	FUZZ_ASSERT(fclose(events) == 0);

	FUZZ_ASSERT(st.bytes == size);
	FUZZ_ASSERT(st.stored <= MAX_EVENTS);
	FUZZ_ASSERT(st.stored + st.invalid + st.too_long + st.over_limit <= ended);
	FUZZ_ASSERT(!len || buf[len - 1] == '\n');
	for (p = buf; p < buf + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(buf + len - p));
		check_line(p, (size_t)(nl - p));
		lines++;
	}
	FUZZ_ASSERT(lines == st.stored);
	free(buf);
	return 0;
}
