// SPDX-License-Identifier: GPL-2.0
/*
 * record-json.c - the JSON shape of one decoded record, written with text-fmt.h: the members
 * of each type in a fixed order, addresses as "0x..." strings, counts and times as numbers.
 */
#include <string.h>

#include "record-json.h"
#include "text-fmt.h"

/* A string constant at @p. */
#define PUT(p, lit) text_fmt__str((p), (lit), sizeof(lit) - 1)

static char *put_str(char *p, const char *s)
{
	return text_fmt__str(p, s, strlen(s));
}

/* An address member; an unknown address (an orphan gap half) is left out. */
static char *json_addr(char *p, const char *key_quoted, size_t key_len, uint64_t v, bool valid)
{
	if (!valid)
		return p;
	p = text_fmt__str(p, key_quoted, key_len);
	p = text_fmt__hex(p, v);
	*p++ = '"';
	return p;
}

#define JSON_ADDR(p, key, v, valid) \
	json_addr((p), ",\"" key "\":\"0x", sizeof(key) + 6, (v), (valid))

char *record_json__begin(char *p, const struct decoded_record *r)
{
	const struct record_name *type = decoded_type__record_name(r->type), *kind;
	const char *reason;

	p = PUT(p, "{\"type\":\"");
	p = text_fmt__str(p, type->s, type->len);
	p = PUT(p, "\",\"vcpu\":");
	p = text_fmt__u64(p, r->vcpu);
	p = PUT(p, ",\"seq\":");
	p = text_fmt__u64(p, r->seq);
	switch (r->type) {
	case DECODED_BRANCH:
		p = JSON_ADDR(p, "from", r->from, true);
		p = JSON_ADDR(p, "to", r->to, true);
		if (r->cpl_valid) {
			p = PUT(p, ",\"cpl\":");
			p = text_fmt__u64(p, r->cpl);
		}
		kind = branch_kind__record_name(r->kind);
		if (kind) {
			p = PUT(p, ",\"kind\":\"");
			p = text_fmt__str(p, kind->s, kind->len);
			*p++ = '"';
		}
		if (r->vector_valid) {
			p = PUT(p, ",\"vector\":");
			p = text_fmt__u64(p, r->vector);
		}
		break;
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		p = JSON_ADDR(p, "cr3", r->cr3, true);
		p = PUT(p, ",\"time\":");
		p = text_fmt__u64(p, r->time);
		break;
	case DECODED_GAP:
		p = JSON_ADDR(p, "from", r->from, r->from_valid);
		p = JSON_ADDR(p, "to", r->to, r->to_valid);
		p = PUT(p, ",\"reason\":\"");
		p = put_str(p, gap_reason__name(r->aux));
		*p++ = '"';
		break;
	case DECODED_LOST:
		p = PUT(p, ",\"count\":");
		p = text_fmt__u64(p, r->count);
		break;
	case DECODED_START:
		p = PUT(p, ",\"time\":");
		p = text_fmt__u64(p, r->time);
		p = PUT(p, ",\"trace\":\"");
		p = put_str(p, start_trace__name(r->aux));
		*p++ = '"';
		break;
	case DECODED_FREEZE:
		p = PUT(p, ",\"time\":");
		p = text_fmt__u64(p, r->time);
		p = PUT(p, ",\"reason\":\"");
		p = put_str(p, freeze_reason__name(r->aux));
		*p++ = '"';
		break;
	case DECODED_GUEST_BTS_DROP:
		/* the kernel's count: how many, not which branch */
		if (r->aux == VBTS_GUEST_BTS_DROP_KERNEL) {
			p = PUT(p, ",\"records\":");
			p = text_fmt__u64(p, r->from);
		} else {
			p = JSON_ADDR(p, "from", r->from, r->from_valid);
		}
		p = PUT(p, ",\"reason\":\"");
		p = put_str(p, guest_bts_drop__name(r->aux));
		*p++ = '"';
		break;
	case DECODED_TIME:
	case DECODED_STOP:
		p = PUT(p, ",\"time\":");
		p = text_fmt__u64(p, r->time);
		break;
	case DECODED_TASK_PID:
		/* What the trace itself says, beside the labels from events.jsonl */
		p = PUT(p, ",\"guest_pid\":");
		p = text_fmt__u64(p, (uint32_t)r->payload);
		p = PUT(p, ",\"guest_tgid\":");
		p = text_fmt__u64(p, r->payload >> 32);
		break;
	case DECODED_THREAD:
		/* The thread it names: its "pid" and "tgid" are the task members. */
		break;
	case DECODED_ENTRY:
		p = JSON_ADDR(p, "to", r->to, r->to_valid);
		p = PUT(p, ",\"reason\":");
		reason = entry_reason__name(r->aux);
		if (reason) {
			*p++ = '"';
			p = put_str(p, reason);
			*p++ = '"';
		} else {
			/* A reason this decoder does not know: the number the record gave. */
			p = text_fmt__u64(p, r->aux);
		}
		break;
	default:
		p = PUT(p, ",\"kind\":");
		p = text_fmt__u64(p, r->esc_kind);
		p = PUT(p, ",\"payload\":\"0x");
		p = text_fmt__hex(p, r->payload);
		p = PUT(p, "\",\"aux\":\"0x");
		p = text_fmt__hex(p, r->aux);
		*p++ = '"';
		break;
	}
	return p;
}

bool record_json__has_task(const struct decoded_record *r)
{
	switch (r->type) {
	case DECODED_BRANCH:
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
	case DECODED_TASK_PID:
	case DECODED_THREAD:
	case DECODED_ENTRY:
		return true;
	default:
		return false;
	}
}

char *record_json__thread(char *p, const struct decoded_record *r)
{
	if (!r->thread_valid)
		return p;
	p = PUT(p, ",\"pid\":");
	p = text_fmt__u64(p, r->thread_pid);
	p = PUT(p, ",\"tgid\":");
	return text_fmt__u64(p, r->thread_tgid);
}

size_t record_json__format(char *buf, const struct decoded_record *r)
{
	char *p = record_json__begin(buf, r);

	if (record_json__has_task(r))
		p = record_json__thread(p, r);
	*p++ = '}';
	*p = '\0';
	return (size_t)(p - buf);
}
