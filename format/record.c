// SPDX-License-Identifier: GPL-2.0
/*
 * record.c - one ring record taken apart without state, one record read alone as a decoded
 * item, and the stable names of record kinds.
 */
#include <string.h>

#include "record.h"

void record__parse(const struct vbts_record *rec, struct parsed_record *out)
{
	memset(out, 0, sizeof(*out));
	if (!vbts_record__is_escape(rec)) {
		out->type = DECODED_BRANCH;
		out->from = rec->from;
		out->to = rec->to;
		out->cpl_valid = !!(rec->flags & VBTS_REC_CPL_VALID);
		out->cpl = (unsigned int)((rec->flags & VBTS_REC_CPL_MASK) >> VBTS_REC_CPL_SHIFT);
		out->kind = (unsigned int)(rec->flags >> VBTS_REC_KIND_SHIFT) & 0xff;
		out->vector_valid = !!(rec->flags & VBTS_REC_VECTOR_VALID);
		out->vector = (unsigned int)(rec->flags >> VBTS_REC_VECTOR_SHIFT) & 0xff;
		if (!out->cpl_valid)
			out->cpl = 0;
		if (!out->vector_valid)
			out->vector = 0;
		return;
	}

	out->esc_kind = vbts_record__escape_kind(rec);
	out->payload = rec->to;
	out->aux = vbts_record__escape_aux(rec);
	switch (out->esc_kind) {
	case VBTS_ESC_TASK_DEPART:
	case VBTS_ESC_TASK_ARRIVE:
		out->type = out->esc_kind == VBTS_ESC_TASK_ARRIVE ? DECODED_TASK_ARRIVE :
								     DECODED_TASK_DEPART;
		out->time = out->aux;
		out->time_valid = true;
		break;
	case VBTS_ESC_GAP_BEGIN:
		out->type = DECODED_GAP;
		break;
	case VBTS_ESC_TASK_PID:
		out->type = DECODED_TASK_PID;
		break;
	case VBTS_ESC_THREAD:
		out->type = DECODED_THREAD;
		break;
	case VBTS_ESC_ENTRY:
		out->type = DECODED_ENTRY;
		break;
	case VBTS_ESC_GAP_END:
		out->type = DECODED_GAP;
		out->gap_end = true;
		out->time = out->aux;
		out->time_valid = true;
		break;
	case VBTS_ESC_LOST:
		out->type = DECODED_LOST;
		break;
	case VBTS_ESC_GUEST_BTS_DROP:
		out->type = DECODED_GUEST_BTS_DROP;
		break;
	case VBTS_ESC_TIME:
	case VBTS_ESC_START:
	case VBTS_ESC_STOP:
	case VBTS_ESC_FREEZE:
		out->type = out->esc_kind == VBTS_ESC_TIME  ? DECODED_TIME :
			    out->esc_kind == VBTS_ESC_START ? DECODED_START :
			    out->esc_kind == VBTS_ESC_STOP  ? DECODED_STOP :
							      DECODED_FREEZE;
		out->time = out->payload;
		out->time_valid = true;
		break;
	default:
		/* VBTS_ESC_NONE (a slot never written) and kinds from a newer writer. */
		out->type = DECODED_UNKNOWN;
		break;
	}
}

/* A string constant and its length. */
#define NAME(lit) { (lit), sizeof(lit) - 1 }

static const struct record_name type_names[DECODED_TYPE_MAX] = {
	[DECODED_BRANCH] = NAME("branch"),           [DECODED_TASK_ARRIVE] = NAME("task-arrive"),
	[DECODED_TASK_DEPART] = NAME("task-depart"), [DECODED_GAP] = NAME("gap"),
	[DECODED_LOST] = NAME("lost"),               [DECODED_TIME] = NAME("time"),
	[DECODED_START] = NAME("start"),             [DECODED_STOP] = NAME("stop"),
	[DECODED_FREEZE] = NAME("freeze"),           [DECODED_TASK_PID] = NAME("task-pid"),
	[DECODED_GUEST_BTS_DROP] = NAME("guest-bts-drop"),
	[DECODED_THREAD] = NAME("thread"),           [DECODED_ENTRY] = NAME("entry"),
	[DECODED_UNKNOWN] = NAME("unknown"),
};

const struct record_name *decoded_type__record_name(enum decoded_type type)
{
	static const struct record_name unknown = NAME("?");

	return (unsigned int)type < DECODED_TYPE_MAX ? &type_names[type] : &unknown;
}

const char *decoded_type__name(enum decoded_type type)
{
	return decoded_type__record_name(type)->s;
}

static const struct record_name kind_names[VBTS_BR_MAX] = {
	[VBTS_BR_JCC] = NAME("jcc"),           [VBTS_BR_JMP] = NAME("jmp"),
	[VBTS_BR_JMP_IND] = NAME("jmp-ind"),   [VBTS_BR_CALL] = NAME("call"),
	[VBTS_BR_CALL_IND] = NAME("call-ind"), [VBTS_BR_RET] = NAME("ret"),
	[VBTS_BR_FAR_JMP] = NAME("far-jmp"),   [VBTS_BR_FAR_CALL] = NAME("far-call"),
	[VBTS_BR_FAR_RET] = NAME("far-ret"),   [VBTS_BR_LOOP] = NAME("loop"),
	[VBTS_BR_JRCXZ] = NAME("jrcxz"),       [VBTS_BR_INT] = NAME("int"),
	[VBTS_BR_SYSCALL] = NAME("syscall"),   [VBTS_BR_SYSRET] = NAME("sysret"),
	[VBTS_BR_IRET] = NAME("iret"),         [VBTS_BR_EXCEPTION] = NAME("exception"),
	[VBTS_BR_INTERRUPT] = NAME("interrupt"), [VBTS_BR_OTHER] = NAME("other"),
};

const struct record_name *branch_kind__record_name(unsigned int kind)
{
	return kind < VBTS_BR_MAX && kind_names[kind].s ? &kind_names[kind] : NULL;
}

const char *branch_kind__name(unsigned int kind)
{
	const struct record_name *n = branch_kind__record_name(kind);

	return n ? n->s : NULL;
}

const char *gap_reason__name(uint64_t reason)
{
	static const char *const names[VBTS_GAP_MAX] = {
		[VBTS_GAP_UNKNOWN] = "unknown", [VBTS_GAP_IDT] = "idt",
		[VBTS_GAP_SYSCALL] = "syscall", [VBTS_GAP_NOSTEP] = "nostep",
		[VBTS_GAP_MEMORY] = "memory",   [VBTS_GAP_PAUSED] = "paused",
	};

	return reason < VBTS_GAP_MAX ? names[reason] : "unknown";
}

const char *freeze_reason__name(uint64_t reason)
{
	static const char *const names[] = {
		[VBTS_FREEZE_OPERATOR] = "operator", [VBTS_FREEZE_TRIPLE_FAULT] = "triple-fault",
		[VBTS_FREEZE_PANIC] = "panic",       [VBTS_FREEZE_VMM_ERROR] = "vmm-error",
		[VBTS_FREEZE_PROCESS_CRASH] = "process-crash",
	};

	return reason < sizeof(names) / sizeof(names[0]) ? names[reason] : "unknown";
}

const char *guest_bts_drop__name(uint64_t reason)
{
	static const char *const names[VBTS_GUEST_BTS_DROP_MAX] = {
		[VBTS_GUEST_BTS_DROP_DS_AREA] = "ds-area", [VBTS_GUEST_BTS_DROP_FIELDS] = "ds-fields",
		[VBTS_GUEST_BTS_DROP_FULL] = "full",       [VBTS_GUEST_BTS_DROP_BUFFER] = "buffer",
		[VBTS_GUEST_BTS_DROP_INDEX] = "index",      [VBTS_GUEST_BTS_DROP_KERNEL] = "kernel",
	};

	return reason < VBTS_GUEST_BTS_DROP_MAX && names[reason] ? names[reason] : "unknown";
}

const char *entry_reason__name(uint64_t reason)
{
	static const char *const names[VBTS_ENTRY_MAX] = {
		[VBTS_ENTRY_FIRST] = "first",   [VBTS_ENTRY_EXEC] = "exec",
		[VBTS_ENTRY_SIGNAL] = "signal", [VBTS_ENTRY_SIGRETURN] = "sigreturn",
	};

	return reason < VBTS_ENTRY_MAX ? names[reason] : NULL;
}

const char *start_trace__name(uint64_t aux)
{
	bool user = aux & VBTS_START_CPL_USER, kernel = aux & VBTS_START_CPL_KERNEL;

	return user && kernel ? "all" : user ? "user" : kernel ? "kernel" : "none";
}

void record__item_members(const struct parsed_record *p, struct decoded_record *d)
{
	switch (p->type) {
	case DECODED_BRANCH:
		d->from = p->from;
		d->to = p->to;
		d->from_valid = d->to_valid = true;
		d->cpl = p->cpl;
		d->cpl_valid = p->cpl_valid;
		d->kind = p->kind;
		d->vector = p->vector;
		d->vector_valid = p->vector_valid;
		break;
	case DECODED_TASK_ARRIVE:
	case DECODED_TASK_DEPART:
		d->cr3 = p->payload;
		d->cr3_valid = true;
		break;
	case DECODED_GAP:
	case DECODED_TIME:
		break;
	case DECODED_LOST:
		d->count = p->payload;
		break;
	case DECODED_START:
	case DECODED_STOP:
	case DECODED_FREEZE:
		d->aux = p->aux;
		break;
	case DECODED_TASK_PID:
		d->payload = p->payload;
		break;
	case DECODED_THREAD:
		d->payload = p->payload;
		d->aux = p->aux;
		break;
	case DECODED_ENTRY:
		d->to = p->payload;
		d->to_valid = true;
		d->aux = p->aux;
		break;
	case DECODED_GUEST_BTS_DROP:
		d->from = p->payload;
		d->from_valid = true;
		d->aux = p->aux;
		break;
	default:
		d->esc_kind = p->esc_kind;
		d->payload = p->payload;
		d->aux = p->aux;
		break;
	}
}

/*
 * What the decoder queues for a record with nothing before it on its vCPU, and flushes at
 * the end of the stream.
 */
void record__decode_one(uint32_t vcpu, uint64_t seq, const struct vbts_record *rec,
			struct decoded_record *out)
{
	struct parsed_record p;

	record__parse(rec, &p);
	memset(out, 0, sizeof(*out));
	out->type = p.type;
	out->vcpu = vcpu;
	out->seq = seq;
	out->time = p.time;
	out->time_valid = p.time_valid;
	record__item_members(&p, out);
	if (p.type == DECODED_GAP) {
		if (p.gap_end) {
			/* its GAP_BEGIN is not read: an unknown start and reason */
			out->to = p.payload;
			out->to_valid = true;
			out->aux = VBTS_GAP_UNKNOWN;
		} else {
			/* its GAP_END is not read: an unknown end */
			out->from = p.payload;
			out->from_valid = true;
			out->aux = p.aux;
		}
	} else if (p.type == DECODED_THREAD) {
		/* the thread it names is the record's own */
		out->thread_pid = (uint32_t)p.payload;
		out->thread_tgid = (uint32_t)(p.payload >> 32);
		out->thread_valid = true;
	}
}
